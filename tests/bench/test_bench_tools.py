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
  divides its committed webhooks/s by hold-random's holds/s of the same repetition.

    python3 tests/bench/test_bench_tools.py --loadgen build/bench/loadgen \
        --server build/holdfast --ceiling build/bench/holdfast-ceiling

Exits non-zero on any failure; the last line is "N passed, N failed".
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
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
