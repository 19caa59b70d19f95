#!/usr/bin/env python3
"""Tests of the benchmark's own measuring: a wrong window or a misread answer would skew every
figure in docs/BENCHMARKS.md without failing anything else.

- bench/report.py reads pgbench's per-transaction log and counts only the warm window (the
  measured seconds starting 0.5 s after the last client's first transaction began);
- loadgen's redis-set workload speaks RESP to a small fake Redis here: every request must be a
  well-formed SET key value NX EX ttl, +OK counts as 201, a nil as 409, an error fails the run;
- the ceiling build (build/bench/holdfast-ceiling) skips its SQL or its fdatasync when
  HOLDFAST_CEILING says so, and the shipped build ignores the variable: a ceiling that still
  synced would understate what durability costs, and a shipped build that read it could be
  told to acknowledge what is not on disk;
- bench/report.py's ceiling table divides runs of the same repetition;
- loadgen's webhook workload against the real server: each hold is paid by a signed
  payment.succeeded webhook that commits it (a wrong signature fails the run), and the report
  divides its committed webhooks/s by hold-random's holds/s of the same repetition;
- loadgen's waiting-room and dispatch workloads against a fake server of API.md sections 6
  and 8 (FakeRooms): queue-poll fills its line once and then only GETs tickets the server gave
  (an unknown one fails the run), queue-join joins a new user each time, queue-admit counts
  the admissions of a known rate per 100 ms window, driver-update fills the fleet and moves
  drivers inside the 20 km square, and ride-request's latency is the ride's alone (rides
  answered late, updates at once), each offer accepted for its driver and each searching ride
  cancelled; bench/report.py's waiting-room and dispatch ratios divide the same repetition;
- the same workloads against the real server (the line's last user polls at position 3,000;
  the admissions the polls saw agree with the server's rows; offered rides are accepted);
- bench/admissions.py counts the server's own admissions (tickets' admitted_at) per 100 ms
  window of loadgen's measured window, and the most at one instant;
- loadgen's calendar workloads against a fake server of API.md section 12 (FakeCalendars):
  the calendar made with its first 1,000 resources and the others appended in batches, half
  of capacity 1 and half of 10; calendar-hold's spans 1 to 5 nights starting 1 to --span-days
  days ahead with its ttl_s; calendar-free's fill, back-to-back 3-night bookings of up to 10
  items, then 3-night /free reads; calendar-availability's 365-day windows; options that
  would leave the horizon refused; the same workloads against the real server; and
  bench/report.py's calendar section (ratios of the same repetition, the server's share of
  answers within 100 us from /metrics, RSS growth and the restart);
- bench/report.py's cluster section (bench/cluster.sh's wrk outputs and takeover times):
  forwarded / direct divides the same repetition, the nodes' holds/s add up per repetition (a
  repetition where one node's wrk failed is left out), a takeover over 10 s or none at all
  misses the goal; and a run of some parts only rewrites only their sections of the file;
- loadgen's hold-random --seat-step K aims only at every K-th seat (allocations.sh's public ones);
- bench/report.py's sections of parts job, prequeue, allocations and waitlist read the lines
  bench/job.py, prequeue.sh, allocations.sh and waitlist.py print (each goal met or missed,
  the targets table's rows, a parts-only merge showing each command once), and those scripts
  at small sizes against the real server print lines the report reads.

    python3 tests/bench/test_bench_tools.py --loadgen build/bench/loadgen \
        --server build/holdfast --ceiling build/bench/holdfast-ceiling

Exits non-zero on any failure; the last line is "N passed, N failed".
"""
import argparse
import datetime
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import report  # noqa: E402  (bench/report.py)


# ---- pgbench's log, through bench/report.py ----

def write_pgbench_run(directory, transactions):
    """A pgbench output and its per-transaction log: transactions are (client, end_s,
    latency_ms); the log names each by its end time and latency, as pgbench does."""
    summary = os.path.join(directory, "pg__update__c2__p1__r1.txt")
    with open(summary, "w") as f:
        f.write("number of failed transactions: 0 (0.000%)\ntps = 1.0 (without initial connection time)\n")
    os.mkdir(summary[:-4] + ".log")
    with open(os.path.join(summary[:-4] + ".log", "tx.1"), "w") as f:
        for number, (client, end_s, latency_ms) in enumerate(transactions):
            seconds = int(end_s)
            micros = int(round((end_s - seconds) * 1e6))
            f.write("%d %d %d 0 %d %d\n" % (client, number, int(latency_ms * 1000), seconds, micros))
    return summary


def steady(client, first_end_s, last_end_s, every_s, latency_ms):
    count = int(round((last_end_s - first_end_s) / every_s))
    return [(client, first_end_s + i * every_s, latency_ms) for i in range(count)]


def test_pgbench_counts_only_the_warm_window():
    # Client 0 starts at 100 s and is slow while client 1 connects; client 1's first
    # transaction begins at 102 s. The window is then [102.5, 105.5).
    cold = [(0, 100.0 + 0.2 * i, 200.0) for i in range(1, 10)]
    warm = steady(0, 102.0, 107.0, 0.01, 10.0) + steady(1, 102.01, 107.0, 0.01, 10.0)
    with tempfile.TemporaryDirectory() as directory:
        run = report.parse_pgbench(write_pgbench_run(directory, cold + warm), 3.0)
    assert run is not None
    assert abs(run["window_s"] - 3.0) < 1e-6, run
    # 100 transactions a second for each of the two clients.
    assert 198 <= run["throughput"] <= 202, run
    assert run["p99_ms"] == 10.0 and run["max_ms"] == 10.0, run  # the cold ones are out


def test_pgbench_too_short_a_run_is_not_quoted():
    # Only 1 s after the warm-up: less than half of the 3 measured seconds.
    transactions = steady(0, 100.0, 101.5, 0.01, 5.0) + steady(1, 100.0, 101.5, 0.01, 5.0)
    with tempfile.TemporaryDirectory() as directory:
        assert report.parse_pgbench(write_pgbench_run(directory, transactions), 3.0) is None


# ---- loadgen's redis-set against a fake Redis ----

class FakeRedis:
    """Answers SET seat:N uM NX EX T: +OK for an even N, a nil for an odd one, or the answer
    forced by `reply`; anything else in a request gets -ERR and is remembered."""

    def __init__(self, reply=None):
        self.reply = reply
        self.requests = 0
        self.malformed = []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection):
        reader = connection.makefile("rb")
        try:
            while True:
                words = self.read_command(reader)
                if words is None:
                    return
                connection.sendall(self.answer(words))
        except OSError:
            return
        finally:
            connection.close()

    @staticmethod
    def read_command(reader):
        line = reader.readline()
        if not line:
            return None
        if not line.startswith(b"*") or not line.endswith(b"\r\n"):
            return [line]
        words = []
        for _ in range(int(line[1:-2])):
            length = reader.readline()
            if not length.startswith(b"$"):
                return words + [length]
            word = reader.read(int(length[1:-2]) + 2)
            words.append(word[:-2] if word.endswith(b"\r\n") else word)
        return words

    def answer(self, words):
        well_formed = (len(words) == 6 and words[0] == b"SET" and words[1].startswith(b"seat:")
                       and words[1][5:].isdigit() and words[2].startswith(b"u")
                       and words[3] == b"NX" and words[4] == b"EX" and words[5] == b"1")
        with self.lock:
            self.requests += 1
            if not well_formed:
                self.malformed.append(words)
        if not well_formed:
            return b"-ERR malformed\r\n"
        if self.reply is not None:
            return self.reply
        return b"+OK\r\n" if int(words[1][5:]) % 2 == 0 else b"$-1\r\n"

    def close(self):
        self.listener.close()


def run_loadgen(loadgen, reply=None, *extra):
    """loadgen's redis-set for half a second against a fresh FakeRedis: (the finished process,
    its JSON summary or None, the requests the fake found malformed)."""
    redis = FakeRedis(reply)
    try:
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "out.json")
            result = subprocess.run(
                [loadgen, "--port", str(redis.port), "--workload", "redis-set", "-c", "4",
                 "-d", "0.5", "--warmup", "0.1", "--seats", "1000", "--json", out] + list(extra),
                capture_output=True, text=True, timeout=30)
            summary = json.load(open(out)) if os.path.exists(out) else None
    finally:
        redis.close()
    return result, summary, redis.malformed


def test_loadgen_redis_set_counts_ok_and_nil(loadgen):
    result, summary, malformed = run_loadgen(loadgen, None, "-p", "4")
    assert result.returncode == 0, result.stdout + result.stderr
    assert malformed == [], malformed[:3]
    statuses = summary["statuses"]
    assert set(statuses) == {"201", "409"}, statuses
    assert statuses["201"] + statuses["409"] == summary["requests"] > 100, summary
    assert summary["holds_won"] == statuses["201"] and summary["holds_lost"] == statuses["409"]
    # Even and odd seats are drawn alike, so neither answer is rare.
    assert 0.35 < statuses["201"] / summary["requests"] < 0.65, statuses


def test_loadgen_redis_set_fails_on_an_error_answer(loadgen):
    result, summary, _ = run_loadgen(loadgen, b"-NOAUTH Authentication required.\r\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert summary["ok"] is False and "-NOAUTH" in summary["first_error"], summary


def test_loadgen_redis_set_closes_on_an_unexpected_answer(loadgen):
    result, summary, _ = run_loadgen(loadgen, b":1\r\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert summary["transport_errors"] >= 1 and "unexpected RESP" in summary["first_error"], summary


def test_loadgen_redis_set_wants_whole_seconds(loadgen):
    result = subprocess.run([loadgen, "--workload", "redis-set", "--ttl", "0.5"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2 and "whole number" in result.stderr, result.stderr


# ---- the ceiling build against the shipped one ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server on a fresh port over DATA, with extra environment and options; stopped by
    SIGTERM."""

    def __init__(self, binary, data, environment, options=()):
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:%d" % self.port, "--data", data] + list(options),
            env=dict(os.environ, **environment), stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 15
        while self.request("GET", "/healthz")[0] != 200:
            assert self.process.poll() is None and time.monotonic() < deadline, self.output()
            time.sleep(0.05)

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data,
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()
        except OSError:
            return None, b""

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=15)
        return self.output()

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")


EVENT = {"id": "ceiling", "sections": [{"id": "A", "price": 100, "rows": [{"id": "R", "seats": 4}]}]}


def create_then_restart(binary, server, mode, extra=None):
    """Creates an event on BINARY with HOLDFAST_CEILING=MODE (and EXTRA), stops it, and asks
    the shipped SERVER on the same data for the event: (status of the create, status of the
    read after the restart, what BINARY printed)."""
    with tempfile.TemporaryDirectory() as data:
        first = Server(binary, data, dict({"HOLDFAST_CEILING": mode}, **(extra or {})))
        try:
            created = first.request("POST", "/v1/events", EVENT)[0]
        finally:
            printed = first.stop()
        second = Server(server, data, {})
        try:
            read = second.request("GET", "/v1/events/ceiling")[0]
        finally:
            second.stop()
    return created, read, printed


def test_ceiling_no_sql_writes_nothing_and_the_shipped_build_ignores_it(server, ceiling):
    created, read, printed = create_then_restart(ceiling, server, "no-sql")
    assert created == 201 and read == 404, (created, read, printed)
    assert "NOT durable" in printed, printed
    created, read, printed = create_then_restart(server, server, "no-sql")
    assert created == 201 and read == 200, (created, read, printed)
    assert "NOT durable" not in printed, printed


def test_ceiling_no_sync_never_syncs_and_the_shipped_build_ignores_it(server, ceiling):
    # The first fdatasync of the log fails on purpose: the shipped build must then refuse to
    # acknowledge (503); the ceiling build with no-sync never calls it, so it acknowledges.
    fail = {"HOLDFAST_FAULT_FAIL_SYNC": "1"}
    created, _, printed = create_then_restart(server, server, "no-sync", fail)
    assert created == 503, (created, printed)
    created, read, printed = create_then_restart(ceiling, server, "no-sync", fail)
    assert created == 201 and read == 200, (created, read, printed)
    assert "NOT durable" in printed, printed


def test_ceiling_unknown_mode_runs_as_shipped(server, ceiling):
    created, read, printed = create_then_restart(ceiling, server, "fast")
    assert created == 201 and read == 200, (created, read, printed)
    assert "runs as shipped" in printed and "NOT durable" not in printed, printed


# ---- bench/report.py's ceiling table ----

def test_report_ceiling_ratio_divides_the_same_repetition():
    # The machine slows down over the run: per repetition the ceiling build is 1.5x, 1.75x
    # and 1.5x the shipped one (median 1.5x), while the medians of the rates (700 and 400)
    # would give 1.75x.
    rates = {"ceiling-shipped": [1000, 400, 200], "ceiling-neither": [1500, 700, 300]}
    with tempfile.TemporaryDirectory() as directory:
        for variant, values in rates.items():
            for rep, rate in enumerate(values, 1):
                with open(os.path.join(directory, "holdfast__%s__c50__p1__r%d.json" % (variant, rep)), "w") as f:
                    json.dump({"throughput": rate, "answered": rate}, f)
        runs = report.load_runs(directory, 3.0)
    ratio = report.ceiling_ratio(runs, "ceiling-neither", "ceiling-shipped", 50)
    assert abs(ratio - 1.5) < 1e-9, ratio
    assert report.ceiling_ratio(runs, "ceiling-neither", "ceiling-noop", 50) is None


# ---- loadgen's webhook workload against the real server ----

WEBHOOK_SECRET = "bench-test-secret"


def run_webhook(loadgen, server, secret):
    """loadgen's webhook for half a second against a fresh server whose secret is
    WEBHOOK_SECRET, signing with SECRET: (the finished process, its JSON summary or None,
    the event's seats after the run, the refunds listing)."""
    with tempfile.TemporaryDirectory() as data:
        hf = Server(server, data, {}, ["--webhook-secret", WEBHOOK_SECRET])
        try:
            with tempfile.TemporaryDirectory() as directory:
                out = os.path.join(directory, "out.json")
                result = subprocess.run(
                    [loadgen, "--port", str(hf.port), "--workload", "webhook", "-c", "4",
                     "-d", "0.5", "--warmup", "0.1", "--seats", "2000", "--webhook-secret", secret,
                     "--json", out], capture_output=True, text=True, timeout=30)
                summary = json.load(open(out)) if os.path.exists(out) else None
            status, body = hf.request("GET", "/v1/events/webhook/seats?limit=10000")
            assert status == 200, (status, body)
            seats = json.loads(body)["seats"]
            status, body = hf.request("GET", "/v1/refunds")
            assert status == 200, (status, body)
            refunds = json.loads(body)["refunds"]
        finally:
            hf.stop()
    return result, summary, seats, refunds


def test_loadgen_webhook_commits_each_hold_it_pays(loadgen, server):
    result, summary, seats, refunds = run_webhook(loadgen, server, WEBHOOK_SECRET)
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["ok"] is True and summary["errors"] == 0, summary
    committed = summary["webhooks_committed"]
    assert committed > 50 and summary["webhooks_other"] == 0, summary
    assert abs(summary["webhooks_per_s"] - committed / 0.5) < 1, summary
    # In the window: one 200 per webhook, one 201 or 409 per hold, nothing else.
    assert summary["statuses"]["200"] == committed, summary
    assert set(summary["statuses"]) <= {"200", "201", "409"}, summary
    # Holds won just before the window are paid in it: at most one per connection.
    assert summary["holds_won"] >= committed - 4, summary
    assert summary["webhook_p99_ms"] > 0 and summary["hold_p99_ms"] > 0, summary
    # Every webhook paid its hold's exact total: each commit sold a seat, none was refunded.
    sold = sum(1 for seat in seats if seat["status"] == "sold")
    assert sold >= committed, (sold, committed)
    assert refunds == [], refunds[:3]


def test_loadgen_webhook_fails_on_a_wrong_signature(loadgen, server):
    result, summary, seats, _ = run_webhook(loadgen, server, "not-" + WEBHOOK_SECRET)
    assert result.returncode == 1, result.stdout + result.stderr
    assert summary["ok"] is False and summary["webhooks_committed"] == 0, summary
    assert "401" in summary["first_error"] and "invalid_signature" in summary["first_error"], summary
    assert not any(seat["status"] == "sold" for seat in seats)


def test_loadgen_webhook_wants_a_secret(loadgen):
    result = subprocess.run([loadgen, "--workload", "webhook"], capture_output=True, text=True,
                            timeout=10)
    assert result.returncode == 2 and "--webhook-secret" in result.stderr, result.stderr


# ---- loadgen's exchange workload against the real server ----


def test_loadgen_exchange_replaces_each_connection_order(loadgen, server):
    with tempfile.TemporaryDirectory() as data:
        hf = Server(server, data, {}, [])
        try:
            with tempfile.TemporaryDirectory() as directory:
                out = os.path.join(directory, "out.json")
                result = subprocess.run(
                    [loadgen, "--port", str(hf.port), "--workload", "exchange", "-c", "4",
                     "-d", "0.5", "--warmup", "0.1", "--seats", "2000", "--ttl", "10",
                     "--json", out], capture_output=True, text=True, timeout=30)
                summary = json.load(open(out)) if os.path.exists(out) else None
            orders = []
            for user in range(4):
                status, body = hf.request("GET", "/v1/users/u%d/orders?limit=1000" % user)
                assert status == 200, (status, body)
                orders.append(json.loads(body)["orders"])
        finally:
            hf.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["ok"] is True and summary["errors"] == 0, summary
    committed = summary["exchanges_committed"]
    assert committed > 20, summary
    assert abs(summary["exchanges_per_s"] - committed / 0.5) < 1, summary
    assert set(summary["statuses"]) <= {"200", "201", "409"}, summary
    assert summary["commit_p99_ms"] > 0 and summary["hold_p99_ms"] > 0, summary
    # Each connection's user ends with exactly one confirmed order; every other one of its
    # orders was exchanged, and replaced by the next.
    exchanged = 0
    for user_orders in orders:
        statuses = [order["status"] for order in user_orders]
        assert statuses.count("confirmed") == 1, statuses
        assert set(statuses) <= {"confirmed", "exchanged"}, statuses
        exchanged += statuses.count("exchanged")
        for order in user_orders:
            if order["status"] == "exchanged":
                assert order["replaced_by"], order
    assert exchanged >= committed, (exchanged, committed)


def test_loadgen_exchange_wants_one_request_in_flight(loadgen):
    result = subprocess.run([loadgen, "--workload", "exchange", "-p", "2"], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 2 and "-p 1" in result.stderr, result.stderr


def test_report_exchange_ratio_divides_the_same_repetition():
    holds = [1000, 500, 2000]
    exchanges = [400, 250, 600]  # 0.4, 0.5, 0.3: median 0.4
    with tempfile.TemporaryDirectory() as directory:
        for rep, (h, x) in enumerate(zip(holds, exchanges), 1):
            with open(os.path.join(directory, "holdfast__exchange-hold-random__c50__p1__r%d.json" % rep), "w") as f:
                json.dump({"throughput": h, "answered": h}, f)
            with open(os.path.join(directory, "holdfast__exchange__c50__p1__r%d.json" % rep), "w") as f:
                json.dump({"throughput": 2 * x, "exchanges_per_s": x, "answered": 2 * x}, f)
        runs = report.load_runs(directory, 3.0)
    ratio = report.exchange_ratio(runs, 50)
    assert abs(ratio - 0.4) < 1e-9, ratio
    assert report.exchange_ratio(runs, 200) is None
    lines = []
    report.exchange_section(lines.append, runs, {}, 50)
    row = [line for line in lines if line.startswith("| 400 |")]
    assert row and "| 40% |" in row[0] and "30%, 40%, 50%" in row[0], lines


def test_report_webhook_ratio_divides_the_same_repetition():
    # Per repetition 0.9, 0.8 and 0.7 (median 0.8); the medians of the rates (900 / 1000)
    # would give 0.9. hold-random's throughput is holds/s, the webhook's webhooks_per_s.
    holds = [1000, 500, 2000]
    webhooks = [900, 400, 1400]
    with tempfile.TemporaryDirectory() as directory:
        for rep, (h, wh) in enumerate(zip(holds, webhooks), 1):
            with open(os.path.join(directory, "holdfast__webhook-hold-random__c50__p1__r%d.json" % rep), "w") as f:
                json.dump({"throughput": h, "answered": h}, f)
            with open(os.path.join(directory, "holdfast__webhook__c50__p1__r%d.json" % rep), "w") as f:
                json.dump({"throughput": 2 * wh, "webhooks_per_s": wh, "answered": 2 * wh}, f)
        runs = report.load_runs(directory, 3.0)
    ratio = report.webhook_ratio(runs, 50)
    assert abs(ratio - 0.8) < 1e-9, ratio
    assert report.webhook_ratio(runs, 200) is None
    lines = []
    report.webhook_section(lines.append, runs, {}, 50)
    row = [line for line in lines if line.startswith("| 900 |")]
    assert row and "| 80% |" in row[0] and "70%, 80%, 90%" in row[0], lines


# ---- loadgen's waiting-room and dispatch workloads against a fake server ----

class FakeRooms:
    """A small HTTP/1.1 server with the contract's waiting room and dispatch routes (API.md
    sections 6 and 8), which remembers what it was asked: every ticket it gave, every poll's
    ticket, every ride and when it answered it. A ride answers after `ride_delay_s` and every
    other request at once, so a workload that measured the wrong request would show it."""

    def __init__(self, ride_delay_s=0.0, searching_every=0, admit_per_s=None):
        import http.server
        self.ride_delay_s = ride_delay_s
        self.searching_every = searching_every  # every Nth ride is left searching (0: none)
        self.admit_per_s = admit_per_s           # None: the room's own setting
        self.lock = threading.Lock()
        self.rooms = {}          # event -> waiting_room settings
        self.tickets = {}        # ticket -> (event, user, join number)
        self.users = {}          # (event, user) -> ticket
        self.joined_at = []      # join instants, by join number
        self.polls = []          # tickets polled
        self.unknown_polls = 0
        self.drivers = {}        # (fleet, driver) -> (lat, lng)
        self.updates = 0
        self.rides = {}          # ride -> driver or None
        self.accepts, self.cancels = [], []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def answer(self, status, body):
                # Compact, as the server writes it; head and body in one write (two would
                # meet the client's delayed acknowledgement: 40 ms each).
                data = json.dumps(body, separators=(",", ":")).encode()
                self.wfile.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (status, len(data), data))

            def body(self):
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def do_GET(self):
                self.answer(*fake.get(self.path))

            def do_POST(self):
                self.answer(*fake.post(self.path, self.body()))

            def do_PUT(self):
                self.answer(*fake.put(self.path, self.body()))

        import socketserver

        class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = ThreadingServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def admitted(self, number):
        rate = self.admit_per_s
        return number < (time.monotonic() - self.joined_at[0]) * rate if self.joined_at else False

    def get(self, path):
        parts = path.split("/")
        if path == "/healthz":
            return 200, {"status": "ok"}
        if len(parts) == 6 and parts[1:3] == ["v1", "events"] and parts[4] == "queue":
            with self.lock:
                self.polls.append(parts[5])
                if parts[5] not in self.tickets:
                    self.unknown_polls += 1
                    return 404, {"error": {"code": "ticket_not_found", "message": "no such ticket"}}
                number = self.tickets[parts[5]][2]
                ahead = sum(1 for n in range(number) if not self.admitted(n))
                if self.admitted(number):
                    return 200, {"ticket": parts[5], "status": "admitted", "admission_token": "t",
                                 "expires_at": "2026-11-26T00:00:00.000Z"}
                return 200, {"ticket": parts[5], "status": "waiting", "position": ahead + 1,
                             "estimated_wait_s": 1}
        return 404, {"error": {"code": "not_found", "message": path}}

    def post(self, path, body):
        parts = path.split("/")
        if path == "/v1/events":
            with self.lock:
                if body["id"] in self.rooms:
                    return 409, {"error": {"code": "event_exists", "message": "taken"}}
                self.rooms[body["id"]] = body.get("waiting_room") or {}
                if self.admit_per_s is None:
                    self.admit_per_s = self.rooms[body["id"]].get("admit_per_s", 10)
            return 201, {"id": body["id"]}
        if len(parts) == 5 and parts[1:3] == ["v1", "events"] and parts[4] == "queue":
            with self.lock:
                if not self.rooms.get(parts[3], {}).get("enabled"):
                    return 409, {"error": {"code": "waiting_room_disabled", "message": "no room"}}
                key = (parts[3], body["user_id"])
                if key in self.users:
                    return 200, {"ticket": self.users[key], "status": "waiting", "position": 1,
                                 "estimated_wait_s": 1}
                ticket = "q_%024x" % random.getrandbits(96)
                self.users[key] = ticket
                self.tickets[ticket] = (parts[3], body["user_id"], len(self.joined_at))
                self.joined_at.append(time.monotonic())
                return 201, {"ticket": ticket, "status": "waiting", "position": len(self.joined_at),
                             "estimated_wait_s": 1}
        if len(parts) == 5 and parts[1:3] == ["v1", "fleets"] and parts[4] == "rides":
            time.sleep(self.ride_delay_s)
            with self.lock:
                number = len(self.rides)
                if self.searching_every and number % self.searching_every == 0:
                    self.rides[body["ride_id"]] = None
                    return 201, {"ride_id": body["ride_id"], "fleet": parts[3], "status": "searching",
                                 "offer": None, "driver_id": None}
                driver = "d%d" % (number % 1000)
                self.rides[body["ride_id"]] = driver
                return 201, {"ride_id": body["ride_id"], "fleet": parts[3], "status": "offered",
                             "offer": {"driver_id": driver, "distance_m": 420,
                                       "expires_at": "2026-11-26T00:00:00.000Z"}, "driver_id": None}
        if len(parts) == 5 and parts[1:3] == ["v1", "rides"] and parts[4] in ("accept", "cancel"):
            with self.lock:
                if parts[3] not in self.rides:
                    return 404, {"error": {"code": "ride_not_found", "message": parts[3]}}
                if parts[4] == "cancel":
                    self.cancels.append(parts[3])
                    return 200, {"ride_id": parts[3], "status": "cancelled"}
                self.accepts.append((parts[3], body.get("driver_id")))
                if self.rides[parts[3]] != body.get("driver_id"):
                    return 409, {"error": {"code": "not_offered", "message": "no offer"}}
                return 200, {"ride_id": parts[3], "status": "assigned", "driver_id": body["driver_id"]}
        return 404, {"error": {"code": "not_found", "message": path}}

    def put(self, path, body):
        parts = path.split("/")
        if len(parts) == 6 and parts[1:3] == ["v1", "fleets"] and parts[4] == "drivers":
            with self.lock:
                self.drivers[(parts[3], parts[5])] = (body["lat"], body["lng"])
                self.updates += 1
            return 200, {"driver_id": parts[5], "lat": body["lat"], "lng": body["lng"],
                         "available": body["available"], "rating": body["rating"]}
        return 404, {"error": {"code": "not_found", "message": path}}


def run_rooms(loadgen, fake, workload, *extra):
    """loadgen's WORKLOAD against FAKE (half a second, 4 connections): (the finished process,
    its JSON summary or None)."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "out.json")
        result = subprocess.run(
            [loadgen, "--port", str(fake.port), "--workload", workload, "-c", "4", "-d", "0.5",
             "--warmup", "0.1", "--seats", "10", "--json", out] + list(extra),
            capture_output=True, text=True, timeout=60)
        summary = json.load(open(out)) if os.path.exists(out) else None
    return result, summary


def test_loadgen_queue_poll_gets_tickets_of_its_line(loadgen):
    fake = FakeRooms()
    try:
        with tempfile.TemporaryDirectory() as directory:
            tickets = os.path.join(directory, "tickets")
            result, summary = run_rooms(loadgen, fake, "queue-poll", "--line", "300",
                                        "--tickets", tickets, "--rss-pid", str(os.getpid()))
            assert result.returncode == 0, result.stdout + result.stderr
            # The fill joined 300 users, each once, into a room that admits almost no one.
            assert summary["filled"] == 300 and len(fake.tickets) == 300, summary
            room = fake.rooms["queue"]
            assert room["enabled"] is True and room["admit_per_s"] <= 0.01, room
            assert room["abandon_after_s"] >= 3600, room
            assert summary["rss_before_kb"] > 0 and summary["rss_after_kb"] > 0, summary
            # Every poll is a GET of a ticket the server gave, and they are spread over the line.
            polls = list(fake.polls)
            assert fake.unknown_polls == 0 and len(polls) >= summary["requests"] > 50, summary
            assert len(set(polls)) > 100, len(set(polls))
            # The fake admits the first user at once (0.001 a second from the first join).
            assert summary["polls_waiting"] + summary["polls_admitted"] == summary["requests"], summary
            assert summary["statuses"] == {"200": summary["requests"]}, summary
            assert open(tickets).read().split() and len(open(tickets).read().split()) == 300
            # A second run reads the line back: no join at all, the same tickets polled.
            joins = len(fake.joined_at)
            result, summary = run_rooms(loadgen, fake, "queue-poll", "--line", "300",
                                        "--tickets", tickets)
            assert result.returncode == 0, result.stdout + result.stderr
            assert len(fake.joined_at) == joins and "filled" not in summary, summary
            assert fake.unknown_polls == 0 and summary["requests"] > 50, summary
    finally:
        fake.close()


def test_loadgen_queue_poll_fails_on_an_unknown_ticket(loadgen):
    fake = FakeRooms()
    try:
        with tempfile.TemporaryDirectory() as directory:
            tickets = os.path.join(directory, "tickets")
            with open(tickets, "w") as f:
                f.write("".join("q_%024x\n" % n for n in range(50)))
            result, summary = run_rooms(loadgen, fake, "queue-poll", "--line", "50", "--tickets", tickets)
    finally:
        fake.close()
    assert result.returncode == 1, result.stdout + result.stderr
    assert summary["ok"] is False and "404" in summary["first_error"], summary


def test_loadgen_queue_join_joins_a_new_user_each_time(loadgen):
    fake = FakeRooms()
    try:
        result, summary = run_rooms(loadgen, fake, "queue-join")
        users = [user for _, user in fake.users]
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["joins_new"] == summary["statuses"]["201"] == summary["requests"] > 50, summary
    assert len(set(users)) == len(users) >= summary["requests"], (len(users), summary)


def test_loadgen_queue_admit_counts_admissions_per_window(loadgen):
    # The fake admits by join number at 40 a second from the first join: in 0.5 s about 20,
    # so about 4 in each of the five 100 ms windows.
    fake = FakeRooms(admit_per_s=40)
    try:
        result, summary = run_rooms(loadgen, fake, "queue-admit", "--admit-per-s", "40")
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["windows"] == 5 and summary["window_ms"] == 100, summary
    assert 15 <= summary["admissions"] <= 25, summary
    assert 30 <= summary["admissions_per_s"] <= 50, summary
    assert 2 <= summary["window_median"] <= 6 and summary["window_max"] <= 8, summary
    # Each of the front's 64 tickets is polled every 64 polls: at this fake's few thousand
    # polls a second, within some tens of milliseconds (the real server: a few).
    assert 0 < summary["seen_p50_ms"] <= summary["seen_p99_ms"] < 250, summary
    assert summary["joins_new"] > 0 and summary["polls_waiting"] > 0, summary


def test_loadgen_driver_update_fills_then_moves_drivers(loadgen):
    fake = FakeRooms()
    try:
        result, summary = run_rooms(loadgen, fake, "driver-update", "--drivers", "500")
        places = list(fake.drivers.values())
        updates = fake.updates
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert summary["filled"] == 500 and len(places) == 500, summary
    assert summary["updates"] == summary["requests"] > 50 and updates >= 500 + summary["requests"]
    # A 20 km square around 40.75, -73.99: 0.09 degrees of latitude either way.
    assert all(40.66 <= lat <= 40.84 and -74.11 <= lng <= -73.87 for lat, lng in places), places[:3]
    assert max(lat for lat, _ in places) - min(lat for lat, _ in places) > 0.15


def test_loadgen_ride_request_measures_the_ride_not_the_updates(loadgen):
    # Rides answer after 30 ms, driver updates at once: the ride's p50 must be the 30 ms, and
    # the updates' latency must not be.
    fake = FakeRooms(ride_delay_s=0.03, searching_every=4)
    try:
        result, summary = run_rooms(loadgen, fake, "ride-request", "--drivers", "200",
                                    "--ride-connections", "2")
        accepts, cancels, rides = list(fake.accepts), list(fake.cancels), dict(fake.rides)
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert 30 <= summary["ride_p50_ms"] < 45, summary
    assert summary["update_p50_ms"] < 10 and summary["updates"] > 50, summary
    # Two connections, one ride in flight each, 30 ms a ride: about 66 rides a second.
    assert 35 <= summary["rides_per_s"] + summary["rides_searching"] / 0.5 <= 70, summary
    # Each offered ride was accepted for the driver it was offered to; searching ones cancelled.
    assert accepts and all(rides[ride] == driver for ride, driver in accepts), accepts[:3]
    assert cancels and all(rides[ride] is None for ride in cancels), cancels[:3]
    assert summary["accepts_refused"] == 0 and summary["rides_searching"] > 0, summary


def write_runs(directory, variant, values, **extra):
    for rep, value in enumerate(values, 1):
        run = dict({"throughput": value, "answered": value}, **extra)
        with open(os.path.join(directory, "holdfast__%s__c50__p1__r%d.json" % (variant, rep)), "w") as f:
            json.dump(run, f)


def test_report_queue_and_dispatch_divide_the_same_repetition():
    # Per repetition joins/holds are 0.9, 0.6, 0.75 (median 0.75), where the medians of the
    # rates (900 / 1000) would give 0.9; polls/noop 0.5, 0.8, 0.6 (median 0.6).
    with tempfile.TemporaryDirectory() as directory:
        write_runs(directory, "queue-hold-random", [1000, 1500, 800])
        write_runs(directory, "queue-join", [900, 900, 600])
        write_runs(directory, "queue-poll-noop", [2000, 1000, 1500])
        write_runs(directory, "queue-poll", [1000, 800, 900])
        write_runs(directory, "dispatch-noop", [1000, 1000, 1000])
        write_runs(directory, "driver-update", [850, 700, 900])
        with open(os.path.join(directory, "holdfast__queue-fill__c50__p1__r1.json"), "w") as f:
            json.dump({"throughput": 0, "answered": 0, "filled": 1000000, "fill_s": 20.0,
                       "fill_per_s": 50000.0, "rss_before_kb": 100 * 1024,
                       "rss_after_kb": 300 * 1024}, f)
        runs = report.load_runs(directory, 3.0)
    ratio, values = report.same_rep_ratio(runs, "queue-join", "queue-hold-random", 50)
    assert abs(ratio - 0.75) < 1e-9 and len(values) == 3, (ratio, values)
    ratio, _ = report.same_rep_ratio(runs, "queue-poll", "queue-poll-noop", 50)
    assert abs(ratio - 0.6) < 1e-9, ratio
    assert report.rss_growth_mb(report.queue_fill(runs, 50)) == 200
    rows = []

    def target(label, value, goal, shown, spread="-", ceiling="-"):
        rows.append((label, shown, value is not None and value >= goal))
    report.rooms_targets(target, runs, 50, {"dispatch_search_us": 12.5})
    met = {label.split(":")[0]: (shown, ok) for label, shown, ok in rows}
    assert met["queue-join"] == ("75%", False) and met["queue-poll"] == ("60%", False), met
    assert met["queue"] == ("+200 MB", True) and met["driver-update"] == ("85%", True), met
    assert met["core"] == ("12.50 us", False), met
    lines = []
    report.queue_section(lines.append, runs, {}, 50)
    report.dispatch_section(lines.append, runs, {}, 50)
    text = "\n".join(lines)
    assert "| queue-join / hold-random | 900 | 75% | 60%, 75%, 90% | >= 80% |" in text, text
    assert "| 1,000,000 | 20.0 | 50,000 | 100 | 300 | 200 | 210 | < 256 MB more | yes |" in text, text
    assert "| driver-update, - drivers / noop | 850 | 85% |" in text, text


def test_admissions_counts_the_servers_rows_in_the_window():
    # 10 admissions a second for 3 s, one every 100 ms, except a burst of 5 at one instant at
    # 1,550 ms; rows of another event and outside the window do not count.
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import admissions  # bench/admissions.py
    start = 1_700_000_000_000
    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "holdfast.db")
        connection = sqlite3.connect(database)
        connection.execute("CREATE TABLE tickets(id TEXT, event_id TEXT, admitted_at INTEGER)")
        instants = [start + 100 * i + 50 for i in range(30)] + [start + 1550] * 4
        rows = [("q_%d" % i, "queue", at) for i, at in enumerate(instants)]
        rows += [("q_x", "other", start + 10), ("q_y", "queue", start - 1), ("q_z", "queue", start + 3000),
                 ("q_w", "queue", None)]
        connection.executemany("INSERT INTO tickets VALUES(?, ?, ?)", rows)
        connection.commit()
        connection.close()
        loadgen_json = os.path.join(directory, "admit.json")
        with open(loadgen_json, "w") as f:
            json.dump({"measure_start_unix_ms": start, "measure_end_unix_ms": start + 3000,
                       "admit_per_s": 10}, f)
        out = os.path.join(directory, "rows.json")
        result = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "admissions.py"), database,
                                 "queue", loadgen_json, out], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        summary = json.load(open(out))
    assert summary["admissions"] == 34 and summary["windows"] == 30, summary
    assert summary["window_median"] == 1 and summary["window_min"] == 1 and summary["window_max"] == 5, summary
    assert summary["instant_max"] == 5 and abs(summary["admissions_per_s"] - 34 / 3.0) < 1e-9, summary
    assert admissions.summarize([], start, start + 1000)["window_max"] == 0


# ---- bench/report.py's cluster section, and a run of some parts merged into the file ----

def write_wrk(path, rate, p50="1.00ms", p99="2.00ms", non_2xx=0, timeouts=0):
    """A wrk --latency output as wrk 4 prints it (rate None: a wrk that failed)."""
    lines = ["Running 3s test @ http://127.0.0.1:18600", "  1 threads and 16 connections",
             "  Latency Distribution", "     50%%  %8s" % p50, "     75%    9.99ms",
             "     99%%  %8s" % p99]
    if timeouts:
        lines.append("  Socket errors: connect 0, read 0, write 0, timeout %d" % timeouts)
    if non_2xx:
        lines.append("  Non-2xx or 3xx responses: %d" % non_2xx)
    if rate is not None:
        lines.append("Requests/sec: %12.2f" % rate)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_cluster_results(directory):
    def point(variant, c, rates, **extra):
        for rep, rate in enumerate(rates, 1):
            options = {k: v[rep - 1] for k, v in extra.items()}
            write_wrk(os.path.join(directory, "cluster__%s__c%d__p1__r%d.txt" % (variant, c, rep)),
                      rate, **options)
    # Forwarded / direct per repetition 0.5, 0.3, 0.6 (median 0.5), where the medians' ratio
    # (600 / 1,500) would give 0.4; one run answered 3 non-2xx, another timed out twice.
    point("get-direct", 16, [1000, 2000, 1500], p50=["54.00us"] * 3, p99=["1.20s"] * 3,
          non_2xx=[0, 3, 0])
    point("get-forwarded", 16, [500, 600, 900], p50=["1.50ms"] * 3, p99=["2.50ms"] * 3,
          timeouts=[0, 0, 2])
    point("hold-direct", 16, [400, 400, 400])
    point("hold-forwarded", 16, [300, 200, 400])
    point("disjoint-n1-node0", 32, [100, 200, 150])
    point("disjoint-n2-node0", 32, [60, 100, 80])
    point("disjoint-n2-node1", 32, [60, 120, 100])
    # Three nodes: node 2's wrk failed in repetition 1, which then does not count.
    point("disjoint-n3-node0", 32, [100, 100, 50])
    point("disjoint-n3-node1", 32, [100, 100, 50])
    point("disjoint-n3-node2", 32, [None, 100, 50])
    with open(os.path.join(directory, "cluster-takeover.txt"), "w") as f:
        for signal, times in (("KILL", ["5.200", "4.800", "6.100"]), ("STOP", ["5.500", "none", "5.100"]),
                              ("TERM", ["0.400", "12.000", "0.600"])):
            for rep, seconds in enumerate(times, 1):
                f.write("signal=%s rep=%d seconds=%s node=B\n" % (signal, rep, seconds))


def test_report_cluster_section_from_synthetic_results():
    with tempfile.TemporaryDirectory() as directory:
        write_cluster_results(directory)
        wrk, takeovers = report.load_cluster(directory)
    assert report.disjoint_totals(wrk, 3) == {2: 300, 3: 150}, report.disjoint_totals(wrk, 3)
    lines = []
    report.cluster_section(lines.append, wrk, takeovers, {"cores": "2", "reps": "3", "seconds": "3"})
    text = "\n".join(lines)
    assert "| GET event | 16 | 1,500 | 600 | 0.50x | 0.30, 0.50, 0.60 | 0.05 / 1200 | 1.50 / 2.50 | 5 |" in text, text
    assert "| hold | 16 | 400 | 300 | 0.75x | 0.50, 0.75, 1.00 |" in text, text
    assert "| 1 | 150 | 100, 200, 150 | 150 | 1.00x |" in text, text
    assert "| 2 | 180 | 120, 220, 180 | 90 | 1.20x |" in text, text
    assert "| 3 | 225 | 300, 150 | 75 | 1.25x |" in text, text
    assert "sharing, not scaling: on this 2-core machine" in text, text
    assert "| 5.2 | 4.8-6.1 | 5.2, 4.8, 6.1 | < 10 s | yes |" in text, text
    assert "| 5.3 | 5.1-5.5 | 5.5, none in 30 s, 5.1 | < 10 s | **no** |" in text, text
    assert "| 0.6 | 0.4-12.0 | 0.4, 12.0, 0.6 | < 10 s | **no** |" in text, text
    rows = []

    def target(label, value, goal, shown, spread="-", ceiling="-"):
        rows.append((shown, value is not None and value >= goal))
    report.cluster_targets(target, takeovers)
    assert rows == [("at most 6.1 s", True), ("none in 30 s", False), ("at most 12.0 s", False)], rows
    lines = []
    report.cluster_section(lines.append, {}, {}, {})
    assert "Not run" in "\n".join(lines), lines


def test_report_merges_only_the_parts_that_ran():
    assert report.merge_parts({"parts": "cluster pgstore"}) == ["cluster", "pgstore"]
    assert report.merge_parts({"parts": "holdfast cluster"}) is None
    assert report.merge_parts({"parts": " ".join(report.ALL_PARTS)}) is None
    assert report.merge_parts({}) is None
    # A line inside a code block that looks like a heading is no section of its own.
    existing = ["# Benchmarks", "", "## Payment webhooks", "old webhooks", "```",
                "## Several nodes on PostgreSQL", "```", "", "## One node on PostgreSQL beside one node on SQLite", "old pgstore",
                "pasted by hand", "", "## The core alone", "old core", "",
                "## Machine and versions", "machine", ""]
    rendered = ["# Benchmarks", "", "## Payment webhooks", "new webhooks", "",
                "## One node on PostgreSQL beside one node on SQLite", "new pgstore", "",
                "## Several nodes on PostgreSQL", "new cluster", "", "## The core alone", "new core", ""]
    meta = {"parts": "pgstore cluster", "date": "D", "holdfast": "abc1234", "reps": "3",
            "seconds": "3", "cores": "2", "load_start": "3.50 1 1", "load_end": "0.20 1 1"}
    merged = report.merge(existing, rendered, ["pgstore", "cluster"], meta,
                          {"cluster": ["bench/cluster.sh"],
                           "pgstore": ["scripts/postgres.sh start DIR", "loadgen -c 50 --seed 1 --ttl 1",
                                       "loadgen -c 50 --seed 2 --ttl 1",
                                       "serve --data /var/tmp/holdfast-bench.yKdM57/d --store "
                                       "postgres://holdfast@127.0.0.1:60995/bench_rN"]})
    text = "\n".join(merged)
    assert "old webhooks" in text and "old core" in text, text
    assert text.count("## Several nodes on PostgreSQL") == 2, text
    assert "new webhooks" not in text and "new core" not in text, text
    assert "old pgstore" not in text and "pasted by hand" not in text, text
    # The new section goes where a full rendering puts it: after pgstore, before the core.
    order = [line for line in merged if line.startswith("new ") or line.startswith("old ")]
    assert order == ["old webhooks", "new pgstore", "new cluster", "old core"], order
    assert text.count('BENCH_ONLY="pgstore cluster"') == 2 and "scripts/postgres.sh start DIR" in text, text
    # Each command once, with what changes from run to run named.
    assert text.count("loadgen -c 50 --seed REP --ttl 1") == 1 and "--seed 1" not in text, text
    assert ("serve --data /var/tmp/holdfast-bench.XXXXXX/d --store "
            "postgres://holdfast@127.0.0.1:PORT/bench_rN") in text, text
    # A load above half the cores at the start says the machine was shared.
    assert "shared with other work" in text, text
    meta.update(load_start="0.30 1 1")
    quiet = "\n".join(report.merge(existing, rendered, ["cluster"], meta, {}))
    assert "shared with other work" not in quiet and "old pgstore" in quiet, quiet


# ---- calendars (API.md section 12) ----

def utc_today():
    return datetime.datetime.now(datetime.timezone.utc).date()


class FakeCalendars:
    """A small HTTP/1.1 server with the contract's calendar routes that loadgen uses, which
    remembers every request: calendars and their resources in the order they came, holds,
    bookings and reads. Holds are won and lost in turn."""

    def __init__(self):
        import http.server
        import socketserver
        self.lock = threading.Lock()
        self.calendars = {}        # id -> definition (resources appended)
        self.batches = []          # the number of resources of each setup request
        self.holds, self.bookings, self.reads = [], [], []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def answer(self, status, body):
                data = json.dumps(body, separators=(",", ":")).encode()
                self.wfile.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (status, len(data), data))

            def do_GET(self):
                self.answer(*fake.get(self.path))

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.answer(*fake.post(self.path, json.loads(self.rfile.read(length) or b"{}")))

        class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = ThreadingServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def get(self, path):
        with self.lock:
            self.reads.append(path)
        if "/free?" in path:
            return 200, {"resources": []}
        if "/availability?" in path:
            return 200, {"segments": []}
        return 404, {"error": {"code": "not_found", "message": path}}

    def post(self, path, body):
        parts = path.split("/")
        with self.lock:
            if path == "/v1/calendars":
                if body["id"] in self.calendars:
                    return 409, {"error": {"code": "calendar_exists", "message": "taken"}}
                self.calendars[body["id"]] = body
                self.batches.append(len(body["resources"]))
                return 201, {"id": body["id"]}
            if len(parts) == 5 and parts[1:3] == ["v1", "calendars"] and parts[3] in self.calendars:
                if parts[4] == "resources":
                    self.calendars[parts[3]]["resources"].extend(body["resources"])
                    self.batches.append(len(body["resources"]))
                    return 200, {"id": parts[3]}
                if parts[4] == "holds":
                    self.holds.append(body)
                    if len(self.holds) % 2:
                        return 201, {"reservation_id": "res_%d" % len(self.holds), "status": "held"}
                    return 409, {"error": {"code": "range_unavailable", "message": "taken",
                                           "unavailable": []}}
                if parts[4] == "bookings":
                    self.bookings.append(body)
                    return 201, {"order_id": "ord_%d" % len(self.bookings), "status": "confirmed"}
        return 404, {"error": {"code": "not_found", "message": path}}


def days_ahead(text):
    return (datetime.date.fromisoformat(text) - utc_today()).days


def test_loadgen_calendar_hold_makes_the_calendar_in_batches_and_holds_spans(loadgen):
    fake = FakeCalendars()
    try:
        result, summary = run_rooms(loadgen, fake, "calendar-hold", "--resources", "2500",
                                    "--span-days", "20", "--ttl", "1")
        calendar, batches, holds = fake.calendars.get("cal"), list(fake.batches), list(fake.holds)
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    # One body would be over the server's limit: the first 1,000, then 1,000 and 500 appended.
    assert batches == [1000, 1000, 500], batches
    assert calendar["unit"] == "night" and calendar["horizon_days"] == 365, calendar
    ids = [r["id"] for r in calendar["resources"]]
    assert ids == ["r%05d" % i for i in range(2500)], ids[:3]
    assert [r["capacity"] for r in calendar["resources"][:4]] == [1, 10, 1, 10]
    # Every hold: one item of a known resource, 1 to 5 nights from 1 to 20 days ahead, 1 s.
    assert len(holds) >= summary["requests"] > 50, summary
    for hold in holds:
        assert hold["ttl_s"] == 1 and len(hold["items"]) == 1, hold
        item = hold["items"][0]
        start, end = days_ahead(item["from"]), days_ahead(item["to"])
        assert item["resource"] in ids and 1 <= start <= 20 and 1 <= end - start <= 5, item
    assert {days_ahead(h["items"][0]["to"]) - days_ahead(h["items"][0]["from"]) for h in holds} == {1, 2, 3, 4, 5}
    assert len({h["items"][0]["resource"] for h in holds}) > 40
    assert summary["holds_won"] + summary["holds_lost"] == summary["requests"], summary
    assert abs(summary["holds_won"] - summary["holds_lost"]) <= 4, summary


def test_loadgen_calendar_free_fills_then_reads(loadgen):
    fake = FakeCalendars()
    try:
        result, summary = run_rooms(loadgen, fake, "calendar-free", "--resources", "30",
                                    "--fill-uses", "25", "--span-days", "100")
        bookings, reads = list(fake.bookings), list(fake.reads)
        result_a, summary_a = run_rooms(loadgen, fake, "calendar-availability", "--resources", "30",
                                        "--no-create")
        reads_a = list(fake.reads)[len(reads):]
    finally:
        fake.close()
    assert result.returncode == 0, result.stdout + result.stderr
    # 25 uses per resource in bookings of at most 10 items: 3 bookings a resource.
    assert summary["filled"] == 90 == len(bookings), summary
    by_resource = {}
    for booking in bookings:
        assert 1 <= len(booking["items"]) <= 10 and booking["user_id"].startswith("fill"), booking
        for item in booking["items"]:
            by_resource.setdefault(item["resource"], []).append((days_ahead(item["from"]), days_ahead(item["to"])))
    assert len(by_resource) == 30, sorted(by_resource)[:3]
    for spans in by_resource.values():
        # Back to back from tomorrow, 3 nights each: no overlap, no gap.
        assert sorted(spans) == [(1 + 3 * i, 4 + 3 * i) for i in range(25)], sorted(spans)[:3]
    # Then only reads: 3 nights, quantity 1, starting 1 to 100 days ahead.
    assert len(reads) >= summary["requests"] > 50, summary
    for path in reads:
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        assert path.startswith("/v1/calendars/cal/free?") and query["quantity"] == ["1"], path
        start, end = days_ahead(query["from"][0]), days_ahead(query["to"][0])
        assert 1 <= start <= 100 and end - start == 3, path
    assert result_a.returncode == 0 and summary_a["requests"] > 50, result_a.stdout + result_a.stderr
    for path in reads_a:
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        assert path.startswith("/v1/calendars/cal/availability?"), path
        assert query["resource"][0] in by_resource, path
        assert days_ahead(query["from"][0]) == 0 and days_ahead(query["to"][0]) == 365, path


def test_loadgen_calendar_options_stay_within_the_horizon(loadgen):
    for options, message in ((["--fill-uses", "122"], "--fill-uses"),
                             (["--span-days", "361"], "--span-days"),
                             (["--resources", "0"], "--resources")):
        result = subprocess.run([loadgen, "--port", "1", "--workload", "calendar-free"] + options,
                                capture_output=True, text=True, timeout=30)
        assert result.returncode != 0 and message in result.stderr, (options, result.stderr)
    result = subprocess.run([loadgen, "--workload", "calendar-nope"], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "unknown workload" in result.stderr, result.stderr


def write_calendar_results(directory):
    write_runs(directory, "calendar-hold-random", [1000, 1200, 800])
    write_runs(directory, "calendar-hold", [900, 900, 720], resources=10000, span_days=300,
               statuses={"201": 3, "409": 1})
    with open(os.path.join(directory, "holdfast__calendar-fill__c50__p1__r1.json"), "w") as f:
        json.dump({"throughput": 0, "answered": 0, "filled": 120000, "fill_s": 40.0, "fill_per_s": 3000.0,
                   "rss_before_kb": 60 * 1024, "rss_after_kb": 400 * 1024, "resources": 10000,
                   "fill_uses": 120}, f)
    for rep in (1, 2, 3):
        for variant, p99 in (("calendar-free", 4.0), ("calendar-availability", 0.2)):
            with open(os.path.join(directory, "holdfast__%s__c1__p1__r%d.json" % (variant, rep)), "w") as f:
                json.dump({"throughput": 1000.0, "p50_ms": p99 / 2, "p99_ms": p99 + rep / 10.0}, f)
    with open(os.path.join(directory, "calendar-facts.env"), "w") as f:
        f.write("rss_empty_kb=20480\nrss_filled_kb=409600\nrestart_s=3.25\nrss_restarted_kb=300000\n")
    bucket = 'holdfast_http_request_duration_seconds_bucket{route="/v1/calendars/{calendar}/%s",method="GET",le="%s"} %d\n'
    with open(os.path.join(directory, "calendar-metrics.txt"), "w") as f:
        for route, counts in (("availability", (995, 1000)), ("free", (10, 999))):
            f.write(bucket % (route, "0.0001", counts[0]) + bucket % (route, "0.00025", counts[1]) +
                    bucket % (route, "+Inf", 1000))
            f.write('holdfast_http_request_duration_seconds_count{route="/v1/calendars/{calendar}/%s",method="GET"} 1000\n' % route)


def test_report_calendar_section_divides_the_same_repetition():
    with tempfile.TemporaryDirectory() as directory:
        write_calendar_results(directory)
        runs = report.load_runs(directory, 3.0)
        # pgbench's runs as parse_pgbench gives them (its log is tested above).
        for variant, rates in (("calendar-exclude", [300, 200, 240]), ("calendar-counter", [100, 450, 300])):
            runs[("pg", variant, 50, 1)] = [{"throughput": r, "rep": i, "p50_ms": 1.0, "p99_ms": 9.0}
                                            for i, r in enumerate(rates, 1)]
        lines = []
        report.calendar_section(lines.append, runs, {}, 50, directory)
    text = "\n".join(lines)
    # calendar-hold / hold-random per repetition: 0.9, 0.75, 0.9 (median 0.9, not 900/1000).
    assert "| Holdfast calendar-hold | 900 | 675 | 90% | 75%, 90%, 90% | >= 80% |" in text, text
    # Against each peer, per repetition: 3.0, 4.5, 3.0 (median 3.0) and 9.0, 2.0, 2.4 (2.4).
    assert "| against EXCLUDE USING gist (capacity 1) | 3.0x | 3.0x, 3.0x, 4.5x | >= 3x | yes |" in text, text
    assert "| against per-night counters (capacity 10) | 2.4x | 2.0x, 2.4x, 9.0x | >= 3x | no |" in text, text
    # The server's share within 100 us comes from its histogram: 99.5% for /availability.
    assert "| /availability, one resource, 365 days | 1,000 | 0.10 | 0.40 | 100% | 100 us | server p99 < 100 us | yes |" in text, text
    assert "| /free, 3 nights, 10,000 resources | 1,000 | 2.00 | 4.20 | 1% | 250 us | client p99 < 5 ms | yes |" in text, text
    assert "| growth over the empty server | +380 MB | < 512 MB | yes |" in text, text
    assert "| restart on that data directory, to /healthz 200 | 3.25 s | < 10 s | yes |" in text, text
    assert "1,200,000 live uses" in text, text
    lines = []
    report.calendar_section(lines.append, {}, {}, 50, "/nonexistent")
    assert "Not run" in "\n".join(lines), lines
    assert report.PART_SECTIONS["calendar"] == "## Calendars" and "calendar" in report.ALL_PARTS


# ---- the waiting-room and dispatch workloads against the real server ----

def loadgen_json(loadgen, port, workload, *extra):
    """loadgen's WORKLOAD against the server on PORT for half a second (4 connections): (the
    finished process, its JSON summary or None)."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "out.json")
        result = subprocess.run(
            [loadgen, "--port", str(port), "--workload", workload, "-c", "4", "-d", "0.5",
             "--warmup", "0.1", "--seats", "10", "--json", out] + list(extra),
            capture_output=True, text=True, timeout=120)
        summary = json.load(open(out)) if os.path.exists(out) else None
    return result, summary


def test_loadgen_queue_workloads_against_the_server(loadgen, server):
    with tempfile.TemporaryDirectory() as data:
        hf = Server(server, data, {})
        try:
            tickets = os.path.join(data, "line.tickets")
            result, fill = loadgen_json(loadgen, hf.port, "queue-poll", "-d", "0", "--warmup", "0",
                                        "--line", "3000", "--tickets", tickets,
                                        "--rss-pid", str(hf.process.pid))
            assert result.returncode == 0 and fill["filled"] == 3000, result.stdout + result.stderr
            assert fill["rss_after_kb"] > fill["rss_before_kb"] > 0, fill
            status, body = hf.request("GET", "/v1/events/queue")
            assert status == 200 and json.loads(body)["waiting_room"]["enabled"] is True, body
            result, polls = loadgen_json(loadgen, hf.port, "queue-poll", "--no-create", "--line",
                                         "3000", "--tickets", tickets)
            assert result.returncode == 0, result.stdout + result.stderr
            # A room admitting 0.001 a second lets in its first user or two at once, no more.
            assert polls["polls_waiting"] + polls["polls_admitted"] == polls["requests"] > 100, polls
            assert polls["polls_waiting"] > 0.99 * polls["requests"], polls
            assert polls["tickets_mismatched"] == 0, polls
            # The last user of the line polls at its place: (almost) everyone ahead still waits.
            last = open(tickets).read().split()[-1]
            status, body = hf.request("GET", "/v1/events/queue/queue/" + last)
            assert status == 200 and 2998 <= json.loads(body)["position"] <= 3000, body
            result, joins = loadgen_json(loadgen, hf.port, "queue-join", "--event", "joins")
            assert result.returncode == 0 and joins["joins_new"] == joins["requests"] > 50, joins
            result, admit = loadgen_json(loadgen, hf.port, "queue-admit", "--event", "admit",
                                         "--admit-per-s", "40", "-d", "1")
            assert result.returncode == 0, result.stdout + result.stderr
            with open(os.path.join(data, "admit.json"), "w") as f:
                json.dump(admit, f)
            out = os.path.join(data, "rows.json")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "admissions.py"),
                            os.path.join(data, "holdfast.db"), "admit", os.path.join(data, "admit.json"),
                            out], check=True, capture_output=True, timeout=30)
            rows = json.load(open(out))
        finally:
            hf.stop()
    # 40 a second: what the polls saw and what the server wrote agree, about 4 per window.
    assert 30 <= admit["admissions_per_s"] <= 50 and 30 <= rows["admissions_per_s"] <= 50, (admit, rows)
    assert abs(admit["admissions"] - rows["admissions"]) <= 3, (admit, rows)
    assert rows["window_max"] <= 6 and rows["instant_max"] <= 4, rows


def test_loadgen_dispatch_workloads_against_the_server(loadgen, server):
    with tempfile.TemporaryDirectory() as data:
        hf = Server(server, data, {})
        try:
            result, updates = loadgen_json(loadgen, hf.port, "driver-update", "--drivers", "2000")
            assert result.returncode == 0, result.stdout + result.stderr
            assert updates["filled"] == 2000 and updates["updates"] == updates["requests"] > 100, updates
            # 1.5 s, not the default half second: one slow fsync of the rides' batch must not
            # leave the whole measured window without an answer (a CI run saw none).
            result, rides = loadgen_json(loadgen, hf.port, "ride-request", "--drivers", "2000",
                                         "--no-create", "--ride-connections", "2", "-d", "1.5")
            assert result.returncode == 0, result.stdout + result.stderr
        finally:
            hf.stop()
    # Each offered ride was accepted by its driver; 2,000 drivers in 400 km2 leave none searching.
    assert rides["rides_offered"] > 10 and rides["accepts_refused"] == 0, rides
    assert rides["accepts"] >= rides["rides_offered"] - 2 and rides["updates"] > 100, rides
    assert 0 < rides["ride_p50_ms"] <= rides["ride_p99_ms"], rides


def test_loadgen_calendar_workloads_against_the_server(loadgen, server):
    with tempfile.TemporaryDirectory() as data:
        hf = Server(server, data, {})
        try:
            result, holds = loadgen_json(loadgen, hf.port, "calendar-hold", "--resources", "1500",
                                         "--span-days", "10", "-d", "1")
            assert result.returncode == 0, result.stdout + result.stderr
            status, body = hf.request("GET", "/v1/calendars/cal")
            resources = json.loads(body)["resources"]
            assert status == 200 and len(resources) == 1500, body[:300]
            assert [r["capacity"] for r in resources[:2]] == [1, 10], resources[:2]
            result, fill = loadgen_json(loadgen, hf.port, "calendar-free", "--event", "year",
                                        "--resources", "40", "--fill-uses", "30", "-d", "0.5",
                                        "--rss-pid", str(hf.process.pid))
            assert result.returncode == 0, result.stdout + result.stderr
            status, body = hf.request("GET", "/v1/calendars/year/availability?resource=r00003&from=%s&to=%s"
                                      % (utc_today() + datetime.timedelta(days=1),
                                         utc_today() + datetime.timedelta(days=91)))
            segments = json.loads(body)["segments"]
            result, reads = loadgen_json(loadgen, hf.port, "calendar-availability", "--event", "year",
                                         "--resources", "40", "--no-create")
            assert result.returncode == 0, result.stdout + result.stderr
        finally:
            hf.stop()
    # Holds on 1,500 resources over 10 days: most won, some lost, every answer 201 or 409.
    assert set(holds["statuses"]) <= {"201", "409"} and holds["holds_won"] > holds["holds_lost"] > 0, holds
    # 30 back-to-back 3-night uses of r00003 (capacity 10): 9 free over the 90 nights.
    assert fill["filled"] == 120 and fill["statuses"] == {"200": fill["requests"]}, fill
    assert fill["rss_after_kb"] >= fill["rss_before_kb"] > 0, fill
    assert segments == [{"from": str(utc_today() + datetime.timedelta(days=1)),
                         "to": str(utc_today() + datetime.timedelta(days=91)), "available": 9}], segments
    assert reads["requests"] > 50 and reads["statuses"] == {"200": reads["requests"]}, reads


# ---- the cancel job, the pre-queue's opening over HTTP, allocations and the waitlist ----

JOB_TEXT = """# 100000 orders booked in 14.2 s
job: 100000 orders, 99990 offered, done in 2.29 s
hold+release on a third event: without a job p50 0.63 ms p99 3.97 ms (2400); during the job p50 39.20 ms p99 64.40 ms (57)
"""
PREQUEUE_TEXT = """  filled 1000000 waiting users in 14.10 s (70921/s)
opening poll:   24822 requests/s (37233 answers)
      latency ms: p50 0.515  p99 7.008  p99.9 16.767  max 22.067
  errors: 2198; first: poll of q_01a23ab
opening hold:   3919 requests/s (5878 answers)
      latency ms: p50 4.639  p99 33.023  p99.9 50.431  max 50.573
opening: 1000000 tickets placed in 1840 ms after opens_at (900 polls, the one before at 1838 ms; waiting)
plain poll:   33000 requests/s (49500 answers)
      latency ms: p50 0.531  p99 4.191  p99.9 9.919  max 11.267
plain hold:   6617 requests/s (9926 answers)
      latency ms: p50 3.023  p99 12.736  p99.9 44.288  max 45.912
"""
ALLOCATIONS_TEXT = """pair 1: plain 20488/s (35.00 us CPU each; 201:15481,409:5007), 50% allocated 19000/s (36.00 us; 201:10523,409:20091), ratio 0.927 (CPU 0.972)
pair 2: plain 20000/s (35.00 us CPU each; 201:15000,409:5000), 50% allocated 19600/s (35.50 us; 201:10000,409:20000), ratio 0.980 (CPU 0.986)
pair 3: plain 21000/s (34.00 us CPU each; 201:16000,409:5000), 50% allocated 20370/s (34.50 us; 201:11000,409:20000), ratio 0.970 (CPU 0.986)
median ratio (50% allocated / plain) over 3 pairs: answers/s 0.970, CPU per answer (plain / allocated) 0.986
"""
WAITLIST_TEXT = """# 20000 seats (10000 sold, 10000 held), 100000 entries joined in 17.0 s
waitlist: 100000 entries, 10000 holds lapsed at once (expires_at spread 12 ms), all 10000 offered in 1180 ms (durable by 1290 ms; 3 polls after the lapse, the one before at 40 ms)
hold-random on another event: before the lapse 9279 answers/s, during the offers 3256 answers/s (35%)
# loadgen beside it: 12372 requests/s (68044 answers)
"""


def section(function, directory, name, text, commands=None):
    with open(os.path.join(directory, name), "w") as f:
        f.write(text)
    lines = []
    function(lines.append, directory, commands)
    return "\n".join(lines)


def test_report_job_section_reads_job_py_lines():
    job = report.parse_job(JOB_TEXT)
    assert job == {"orders": 100000, "offered": 99990, "done_s": 2.29, "quiet_p50_ms": 0.63,
                   "quiet_p99_ms": 3.97, "quiet_n": 2400, "busy_p50_ms": 39.2, "busy_p99_ms": 64.4,
                   "busy_n": 57}, job
    with tempfile.TemporaryDirectory() as directory:
        text = section(report.job_section, directory, "job.txt", JOB_TEXT,
                       ["python3 bench/job.py --binary build/holdfast --orders 100000"])
        assert "| the job: 100,000 orders, 99,990 offered, time to `done` | 2.29 s | < 30 s | yes |" in text, text
        # 64.4 / 3.97: 16.2x, over the goal of 2x.
        assert "| p99 during the job / without | 16.2x | <= 2x | **no** |" in text, text
        assert "a few samples" in text and "--orders 100000" in text, text
        slow = section(report.job_section, directory, "job.txt", JOB_TEXT.replace("2.29 s", "31.50 s"))
        assert "| 31.50 s | < 30 s | **no** |" in slow, slow
        # The figure with no hold made during the job (nan) still parses.
        empty = JOB_TEXT.replace("p50 39.20 ms p99 64.40 ms (57)", "p50 nan ms p99 nan ms (0)")
        assert report.parse_job(empty)["busy_n"] == 0
        assert "Not run" in section(report.job_section, directory, "job.txt", "job: FAILED\n")


def test_report_prequeue_section_reads_prequeue_sh_lines():
    prequeue = report.parse_prequeue_http(PREQUEUE_TEXT)
    assert prequeue["tickets"] == 1000000 and prequeue["opening_ms"] == 1840, prequeue
    assert prequeue["runs"]["opening poll"] == {"rate": 24822, "answers": 37233, "p50_ms": 0.515,
                                                "p99_ms": 7.008, "errors": 2198}, prequeue
    assert prequeue["runs"]["plain hold"]["p99_ms"] == 12.736 and prequeue["runs"]["plain hold"]["errors"] == 0
    with tempfile.TemporaryDirectory() as directory:
        text = section(report.prequeue_http_section, directory, "prequeue-http.txt", PREQUEUE_TEXT)
    assert "| every ticket placed, after `opens_at` (the poll before: 1838 ms) | 1840 ms | < 2 s | yes |" in text, text
    # 7.008 / 4.191 = 1.67 and 33.023 / 12.736 = 2.59.
    assert "| polls of the line: p99 during the opening / without (7.01 / 4.19 ms) | 1.7x | <= 2x | yes |" in text, text
    assert "| hold-random on another event: p99 during the opening / without (33.0 / 12.7 ms) | 2.6x | <= 2x | **no** |" in text, text
    assert "| opening poll | 24,822 | 0.52 | 7.01 | 2,198 |" in text, text
    assert "bench/prequeue.sh OUT" in text, text


def test_report_allocations_section_reads_allocations_sh_lines():
    allocations = report.parse_allocations(ALLOCATIONS_TEXT)
    assert allocations["count"] == 3 and allocations["ratio"] == 0.97 and len(allocations["pairs"]) == 3
    assert allocations["pairs"][0]["allocated_statuses"] == "201:10523,409:20091", allocations
    with tempfile.TemporaryDirectory() as directory:
        text = section(report.allocations_section, directory, "allocations.txt", ALLOCATIONS_TEXT)
        assert "| answers/s, 50% allocated / plain (median of 3 pairs) | 97% | >= 95% | yes |" in text, text
        assert "| 1 | 20,488 | 35.0 | 201:15481,409:5007 | 19,000 | 36.0 | 201:10523,409:20091 | 0.93 | 0.97 |" in text, text
        low = section(report.allocations_section, directory, "allocations.txt",
                      ALLOCATIONS_TEXT.replace("answers/s 0.970", "answers/s 0.930"))
        assert "| 93% | >= 95% | **no** |" in low, low


def test_report_waitlist_section_reads_waitlist_py_lines():
    figures = report.parse_waitlist(WAITLIST_TEXT)
    assert (figures["entries"], figures["lapses"], figures["spread_ms"], figures["offered_ms"],
            figures["durable_ms"], figures["polls"], figures["before_ms"]) == (
                100000, 10000, 12, 1180, 1290, 3, 40), figures
    assert figures["rate_before"] == 9279 and figures["rate_during"] == 3256 and not figures["ended_early"]
    with tempfile.TemporaryDirectory() as directory:
        text = section(report.waitlist_section, directory, "waitlist.txt", WAITLIST_TEXT)
        assert "| all 10,000 offered, after the lapse | 1180 ms | < 1 s | **no** |" in text, text
        assert "| ... and durable | 1290 ms | < 1 s | **no** |" in text, text
        assert "| 9,279 / 3,256 (35%) | - | - |" in text, text
        fast = section(report.waitlist_section, directory, "waitlist.txt", WAITLIST_TEXT.replace(
            "offered in 1180 ms (durable by 1290 ms", "offered in 95 ms (durable by 140 ms").replace(
            "3256 answers/s (35%)", "- answers/s (-); hold-random ended before the last offer"))
        assert "| 95 ms | < 1 s | yes |" in fast and "| 9,279 / - | - | - |" in fast, fast
        assert "partly idle" in fast, fast


def test_report_new_parts_merge_and_targets():
    for part in ("job", "prequeue", "allocations", "waitlist"):
        assert part in report.ALL_PARTS and part in report.PART_SECTIONS, part
    with tempfile.TemporaryDirectory() as directory:
        raw = os.path.join(directory, "raw")
        os.makedirs(raw)
        for name, text in (("job.txt", JOB_TEXT), ("prequeue-http.txt", PREQUEUE_TEXT),
                           ("allocations.txt", ALLOCATIONS_TEXT), ("waitlist.txt", WAITLIST_TEXT)):
            with open(os.path.join(raw, name), "w") as f:
                f.write(text)
        rows = []
        report.fair_demand_targets(lambda label, value, goal, shown: rows.append(
            (label, shown, value >= goal)), raw)
        assert rows == [("job: a cancel of 100,000 orders onto another event done in < 30 s", "2.29 s", True),
                        ("prequeue (HTTP): 1,000,000 pre-queue tickets placed < 2 s after opens_at", "1840 ms", True),
                        ("allocations: public hold-random with 50% allocated >= 95% of without", "97%", True),
                        ("waitlist: 10,000 lapses onto 100,000 entries all offered (durably) < 1 s", "1290 ms", False)], rows
        with open(os.path.join(directory, "meta.env"), "w") as f:
            f.write("parts=waitlist job\nreps=3\nseconds=3\nheadline=50\ncores=2\n")
        with open(os.path.join(directory, "commands-by-part.txt"), "w") as f:
            f.write("waitlist\tpython3 bench/waitlist.py --port 18400 --entries 100000\n")
        markdown = os.path.join(directory, "BENCHMARKS.md")
        with open(markdown, "w") as f:
            f.write("# Benchmarks\n\n## Calendars\nold calendars\n\n## The core alone\nold core\n\n"
                    "## Machine and versions\nmachine\n")
        result = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "report.py"), directory,
                                 markdown, os.path.join(directory, "chart.svg")],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        text = open(markdown, encoding="utf-8").read()
    # Only the two parts that ran are merged, after the calendars and before the core, each
    # with its command once (the section shows it; the note says so).
    assert "old calendars" in text and "old core" in text, text
    assert "## A cancel job onto another event" in text and "## A waitlist when holds lapse together" in text, text
    assert "## Public holds beside allocations" not in text, text
    assert text.index("old calendars") < text.index("## A cancel job") < text.index("## A waitlist") < \
        text.index("old core"), text
    assert text.count("bench/waitlist.py --port 18400 --entries 100000") == 1, text
    assert text.count("Its commands are above.") == 2, text


def test_loadgen_hold_random_seat_step_aims_at_every_kth_seat(loadgen, server):
    """allocations.sh's public seats: --seat-step 2 holds only the even seat indexes (seat
    numbers 1, 3, 5, ... of a row), each of them in half a second at a ttl of a minute."""
    with tempfile.TemporaryDirectory() as data:
        running = Server(server, data, {})
        try:
            result, summary = loadgen_json(loadgen, running.port, "hold-random", "--seat-step", "2",
                                           "--ttl", "60")
            status, body = running.request("GET", "/v1/events/bench/seats?status=held&limit=100")
        finally:
            running.stop()
    # The five are held in the warm-up; the measured half second meets only them, held.
    assert result.returncode == 0 and summary["statuses"] == {"409": summary["requests"]}, (result.stdout, summary)
    held = sorted(seat["id"] for seat in json.loads(body)["seats"])
    assert status == 200 and held == ["S-R0-1", "S-R0-3", "S-R0-5", "S-R0-7", "S-R0-9"], held
    refused = subprocess.run([loadgen, "--workload", "hold-random", "--seat-step", "0"],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "seat-step" in refused.stderr, refused.stderr


def test_new_parts_scripts_print_what_the_report_reads(server, loadgen):
    """bench/waitlist.py, job.py, prequeue.sh and allocations.sh at small sizes against the
    real server: the report's parsers read every figure they print."""
    environment = dict(os.environ, PREQUEUE_PORT=str(free_port()), PREQUEUE_TICKETS="2000",
                       PREQUEUE_LEAD_S="4", PREQUEUE_BINARY=server, ALLOCATIONS_PORT=str(free_port()),
                       ALLOCATIONS_SECONDS="0.5", ALLOCATIONS_BINARY=server)
    with tempfile.TemporaryDirectory() as directory:
        runs = [([sys.executable, "bench/waitlist.py", "--binary", server, "--loadgen", loadgen,
                  "--entries", "600", "--lapses", "100", "--sold", "100", "--data-parent", directory],
                 report.parse_waitlist, lambda f: f["entries"] == 600 and f["lapses"] == 100
                 and 0 <= f["offered_ms"] <= f["durable_ms"] and f["rate_before"]),
                ([sys.executable, "bench/job.py", "--binary", server, "--orders", "300"], report.parse_job,
                 lambda f: f["orders"] == 300 and f["offered"] == 300 and f["quiet_n"] > 0),
                (["bench/prequeue.sh", os.path.join(directory, "prequeue")], report.parse_prequeue_http,
                 lambda f: f["tickets"] == 2000 and f["opening_ms"] >= 0 and len(f["runs"]) == 4),
                (["bench/allocations.sh", "1"], report.parse_allocations,
                 lambda f: f["count"] == 1 and len(f["pairs"]) == 1 and f["ratio"] > 0)]
        for command, parse, good in runs:
            result = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True,
                                    timeout=180)
            assert result.returncode == 0, (command, result.stdout, result.stderr)
            figures = parse(result.stdout)
            assert figures and good(figures), (command, result.stdout, figures)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loadgen", default=os.path.join(ROOT, "build/bench/loadgen"))
    parser.add_argument("--server", default=os.path.join(ROOT, "build/holdfast"))
    parser.add_argument("--ceiling", default=os.path.join(ROOT, "build/bench/holdfast-ceiling"))
    arguments = parser.parse_args()
    tests = [(name, function) for name, function in sorted(globals().items())
             if name.startswith("test_") and callable(function)]
    passed = failed = 0
    for name, function in tests:
        try:
            # Each test names the tools it needs as its parameters.
            code = function.__code__
            function(*(getattr(arguments, parameter) for parameter in code.co_varnames[:code.co_argcount]))
            passed += 1
            print("ok     " + name)
        except Exception:
            failed += 1
            print("FAILED " + name)
            traceback.print_exc()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
