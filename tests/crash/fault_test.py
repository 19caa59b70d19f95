#!/usr/bin/env python3
"""Storage faults: the store fails on purpose and the server must answer 503 `unavailable`, never
acknowledge the failed batch, stop cleanly, and come back whole after a restart.

    python3 tests/crash/fault_test.py --binary build/holdfast [-k NAME]
                                      [--store-url URL --postgres-dir DIR]

Seams (docs/RELIABILITY.md): HOLDFAST_FAULT_FAIL_BATCH=N (the N-th batch fails before COMMIT),
HOLDFAST_FAULT_FAIL_WRITE=N / HOLDFAST_FAULT_FAIL_SYNC=N (the N-th write or fsync of the
SQLite files fails, and every one after it: a VFS shim, src/store/fault.c),
HOLDFAST_FAULT_MAX_PAGES=N (PRAGMA max_page_count: the database is full),
HOLDFAST_FAULT_SYNC_DELAY_MS=N (a slow disk: every sync of the log waits N ms), and, when run
as root, a real full disk (a 1 MiB tmpfs). One line per test, then `N passed, N failed`.

With --store-url (and --postgres-dir, the directory scripts/postgres.sh started that PostgreSQL
in) the servers store in PostgreSQL: the tests of the seams that apply to any store run (a
failed batch, a slow commit), those of SQLite's files (write, fsync, full database or disk) are
skipped with the reason, and postgres_down stops PostgreSQL under a running server (and
postgres_paused pauses it); the *_two_in_flight tests pause, stop or kill it while the writer
has two batches sent (batches that overlap, docs/DESIGN.md): neither is acknowledged when the
first fails."""

import argparse
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import hflib  # noqa: E402
from hflib import Failure, check  # noqa: E402

BINARY = "build/holdfast"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
POSTGRES_DIR = None
ROWS, PER_ROW = 20, 50
SEATS = ["S-R%d-%d" % (r, n) for r in range(1, ROWS + 1) for n in range(1, PER_ROW + 1)]


def create_event(port, event_id="f"):
    body = {"id": event_id, "hold_ttl_s": 3600,
            "sections": [{"id": "S", "price": 100,
                          "rows": [{"id": "R%d" % r, "seats": PER_ROW}
                                   for r in range(1, ROWS + 1)]}],
            "pools": [{"id": "GA", "capacity": 1000, "price": 5}]}
    status, answer = hflib.request(port, "POST", "/v1/events", body)
    check(status == 201, "event create answered %d: %s" % (status, answer))


def start_with_event(server, environment):
    """Starts the server, makes the event, and starts it again with these fault variables:
    the seams count from the start of the store, so the event's own batch never trips one."""
    server.start()
    create_event(server.port)
    server.stop()
    server.start(env=environment)


def hold_until_failure(server, limit=400, start=0, event_id="f"):
    """Holds one seat per request on one connection until an answer is not 201. Returns the
    acknowledged holds {id: seat}, the seat of the failed request and its status."""
    acknowledged = {}
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
    try:
        for i in range(start, start + limit):
            seat = SEATS[i]
            status, answer = hflib.send(connection, "POST", "/v1/events/%s/holds" % event_id,
                                        {"user_id": "u%d" % (i % 7), "seats": [seat]})
            if status != 201:
                return acknowledged, seat, status, answer
            acknowledged[answer["reservation_id"]] = seat
    finally:
        connection.close()
    raise Failure("no failure after %d holds" % limit)


def failed_exit_code():
    """A server whose batch failed exits 1 (SQLite: failed until a restart); on PostgreSQL the
    node rebuilt its memory from the store and served on, so it stops cleanly (0)."""
    return 0 if hflib.STORE_URL else 1


def check_unavailable(server, status, answer, reads_served=True):
    check(status == 503, "the failed batch answered %d, not 503: %s" % (status, answer))
    check(isinstance(answer, dict) and answer["error"]["code"] == "unavailable",
          "503 without the unavailable code: %s" % answer)
    # Nothing more is acknowledged: a write gets 503 at once (no hang).
    status, answer = hflib.request(server.port, "POST", "/v1/events/f/holds",
                                   {"user_id": "late", "seats": [SEATS[-1]]}, timeout=10)
    check(status == 503, "a write after the failure answered %d" % status)
    status, _ = hflib.request(server.port, "GET", "/healthz", timeout=10)
    check(status in (200, 503), "healthz after the failure answered %d" % status)
    status, summary = hflib.request(server.port, "GET", "/v1/events/f", timeout=10)
    if not reads_served:
        # After a failed fsync what the process reads back may not be what is on the disk:
        # reads are refused as well, until a restart reads the disk itself.
        check(status == 503, "a read after a failed fsync answered %d: %s" % (status, summary))
        return
    # Reads go on, answered from what is durable (the server reloads it after the failure). On
    # PostgreSQL a failed batch drops the node's units and the next lease renewal (within a
    # second) loads them again (docs/API.md, "Outages and recovery"): 503 until then.
    deadline = time.time() + (5 if hflib.STORE_URL else 0)
    while status == 503 and time.time() < deadline:
        time.sleep(0.2)
        status, summary = hflib.request(server.port, "GET", "/v1/events/f", timeout=10)
    check(status == 200, "a read after the failure answered %d: %s" % (status, summary))
    check(summary["counts"]["available"] + summary["counts"]["held"] + summary["counts"]["sold"]
          == len(SEATS), "counts after the failure do not add up: %s" % summary["counts"])


def check_whole(port, acknowledged, failed_seat=None, failed_may_exist=False, event_id="f"):
    """After a restart: every acknowledged hold is there and held; the failed request's change
    is absent (or, for a failed fsync, present or absent as a whole); counts add up."""
    for hold_id, seat in acknowledged.items():
        status, answer = hflib.request(port, "GET", "/v1/holds/%s" % hold_id)
        check(status == 200 and answer["status"] == "held" and answer["seats"] == [seat],
              "acknowledged hold %s lost after the restart: %d %s" % (hold_id, status, answer))
    status, summary = hflib.request(port, "GET", "/v1/events/%s" % event_id)
    check(status == 200, "event answered %d after the restart" % status)
    counts = summary["counts"]
    check(counts["available"] + counts["held"] + counts["sold"] == len(SEATS),
          "counts do not add up: %s" % counts)
    extra = counts["held"] - len(acknowledged)
    if failed_seat is not None:
        status, seat = hflib.request(port, "GET", "/v1/events/%s/seats/%s" % (event_id, failed_seat))
        if failed_may_exist:
            check(extra in (0, 1), "held %d, acknowledged %d" % (counts["held"], len(acknowledged)))
            check((seat["status"] == "held") == (extra == 1),
                  "the failed hold is half there: seat %s, held count %d" % (seat["status"], extra))
        else:
            check(seat["status"] == "available", "the failed hold's seat is %s" % seat["status"])
            check(extra == 0, "held %d seats, acknowledged %d" % (counts["held"], len(acknowledged)))
    # The store must accept writes again.
    status, answer = hflib.request(port, "POST", "/v1/events/%s/holds" % event_id,
                                   {"user_id": "after", "seats": [SEATS[-2]]})
    check(status == 201, "a hold after the restart answered %d: %s" % (status, answer))


def fault_round(environment, failed_may_exist, reads_served=True):
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, environment)
        acknowledged, seat, status, answer = hold_until_failure(server)
        check_unavailable(server, status, answer, reads_served)
        code = server.stop()
        check(code == failed_exit_code(),
              "after a store failure SIGTERM should exit %d, got %s" % (failed_exit_code(), code))
        server.start()
        check_whole(server.port, acknowledged, seat, failed_may_exist)
        check(server.stop() == 0, "clean stop after the restart")
        return len(acknowledged)
    except Failure:
        print(server.log_tail(), flush=True)
        raise
    finally:
        server.cleanup()


def test_fail_batch():
    for n in (2, 7, 40):
        fault_round({"HOLDFAST_FAULT_FAIL_BATCH": str(n)}, False)
    # Batch 1 after a restart is the first hold: nothing acknowledged at all, still whole.
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_FAIL_BATCH": "1"})
        status, answer = hflib.request(server.port, "POST", "/v1/events/f/holds",
                                       {"user_id": "u", "seats": [SEATS[0]]})
        check_unavailable(server, status, answer)
        check(server.stop() == failed_exit_code(), "exit code after a failed store")
        server.start()
        check_whole(server.port, {}, SEATS[0], False)
        server.stop()
    finally:
        server.cleanup()


def test_fail_write():
    # A WAL commit writes a few frames per hold: these land on different frames of a batch.
    for n in (1, 3, 10, 33):
        fault_round({"HOLDFAST_FAULT_FAIL_WRITE": str(n)}, True)


def test_fail_fsync():
    # A failed fsync may leave the commit frame in the log: after a restart the batch that was
    # answered 503 may be there or not, but whole (never half of it).
    for n in (1, 2, 5, 17):
        fault_round({"HOLDFAST_FAULT_FAIL_SYNC": str(n)}, True, reads_served=False)


def database_pages(data_dir):
    import sqlite3
    db = sqlite3.connect(os.path.join(data_dir, "holdfast.db"))
    try:
        return db.execute("PRAGMA page_count").fetchone()[0]
    finally:
        db.close()


def test_database_full():
    """PRAGMA max_page_count: SQLITE_FULL as from a full disk."""
    server = hflib.Server(BINARY)
    try:
        server.start()
        create_event(server.port)
        server.stop()
        pages = database_pages(server.data_dir)
        server.start(env={"HOLDFAST_FAULT_MAX_PAGES": str(pages + 3)})
        acknowledged, seat, status, answer = hold_until_failure(server, limit=900)
        check_unavailable(server, status, answer)
        check(server.stop() == 1, "exit code after a full database")
        # Still full: the server starts and serves (reads; writes fail again, with 503).
        server.start(env={"HOLDFAST_FAULT_MAX_PAGES": str(pages + 3)})
        status, _ = hflib.request(server.port, "GET", "/v1/events/f")
        check(status == 200, "a full database should still load (%d)" % status)
        server.stop()
        server.start()
        check_whole(server.port, acknowledged, seat, False)
        server.stop()
    except Failure:
        print(server.log_tail(), flush=True)
        raise
    finally:
        server.cleanup()


def test_disk_full_tmpfs():
    """A real full disk: the data directory on a 1 MiB tmpfs (needs root; skipped otherwise)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        print("skip disk_full_tmpfs: needs root to mount a tmpfs", flush=True)
        return
    mount_point = tempfile.mkdtemp(prefix="holdfast-tmpfs-")
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount_point],
                            capture_output=True)
    if result.returncode != 0:
        print("skip disk_full_tmpfs: cannot mount a tmpfs (%s)" % result.stderr.decode().strip(),
              flush=True)
        os.rmdir(mount_point)
        return
    data_dir = os.path.join(mount_point, "data")
    server = hflib.Server(BINARY, data_dir=data_dir)
    try:
        server.start()
        create_event(server.port)
        # A long payment reference fills the disk faster: orders carry it.
        acknowledged = {}
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
        failed = None
        for i in range(len(SEATS)):
            status, answer = hflib.send(connection, "POST", "/v1/events/f/holds",
                                        {"user_id": "u" * 100 + str(i), "seats": [SEATS[i]]})
            if status != 201:
                failed = (SEATS[i], status, answer)
                break
            acknowledged[answer["reservation_id"]] = SEATS[i]
        connection.close()
        check(failed is not None, "1 MiB never filled up")
        check_unavailable(server, failed[1], failed[2])
        server.stop()
        subprocess.run(["mount", "-o", "remount,size=16m", mount_point], check=True)
        server.start()
        check_whole(server.port, acknowledged, failed[0], True)
        check(server.stop() == 0, "clean stop after the disk was enlarged")
        print("    disk full after %d holds" % len(acknowledged), flush=True)
    finally:
        server.kill()
        subprocess.run(["umount", mount_point], capture_output=True)
        shutil.rmtree(mount_point, ignore_errors=True)


def test_fault_under_concurrent_load():
    """Several connections writing when the fsync fails: no answer after the failure is 2xx,
    and every 2xx before it survives the restart."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_FAIL_SYNC": "12"})
        results = {}
        lock = threading.Lock()

        def client(number):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
            for i in range(number, len(SEATS), 4):
                try:
                    status, answer = hflib.send(connection, "POST", "/v1/events/f/holds",
                                                {"user_id": "c%d" % number, "seats": [SEATS[i]]})
                except (OSError, http.client.HTTPException) as error:
                    status, answer = None, repr(error)
                with lock:
                    results[SEATS[i]] = (status, answer)
                if status != 201:
                    break
            connection.close()

        threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        acknowledged = {a["reservation_id"]: s for s, (st, a) in results.items() if st == 201}
        others = [st for st, _ in results.values() if st != 201]
        check(others and all(st == 503 for st in others),
              "answers after the failure: %s %s" % (sorted(set(map(str, others))),
                                                     [a for st, a in results.values() if st is None]))
        check(server.stop() == failed_exit_code(), "exit code after the failure")
        server.start()
        check_whole(server.port, acknowledged)
        server.stop()
    finally:
        server.cleanup()


def hold_bytes(seat, user):
    body = json.dumps({"user_id": user, "seats": [seat]}).encode()
    return (b"POST /v1/events/f/holds HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def answered(sock, within_s=0.0):
    """True when the server has sent something on this connection (within a grace time)."""
    readable, _, _ = select.select([sock], [], [], within_s)
    return bool(readable)


def test_loser_waits_only_for_what_it_saw():
    """A hold refused because its seat is taken rests on the change that took the seat: when
    that change is durable the refusal leaves at once, even while another batch waits for a
    slow sync; when it is not, the refusal waits for it."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_SYNC_DELAY_MS": "1500"})
        status, _ = hflib.request(server.port, "POST", "/v1/events/f/holds",
                                  {"user_id": "first", "seats": [SEATS[0]]})
        check(status == 201, "the first hold answered %d" % status)
        slow = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        loser = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        try:
            # A new hold whose batch now waits 1.5 s for its sync...
            slow.sendall(hold_bytes(SEATS[1], "slow"))
            # ...and two losers: one for the durable seat, one for the seat not yet durable.
            loser.sendall(hold_bytes(SEATS[0], "loser"))
            received = loser.recv(65536)
            check(hflib.statuses(received) == [409],
                  "the loser of a durable seat got %r" % received[:120])
            check(not answered(slow), "the loser waited for a batch it did not depend on")
            loser.sendall(hold_bytes(SEATS[1], "loser"))
            received = b""
            while not hflib.statuses(received):
                received += loser.recv(65536)
            check(answered(slow), "the loser of a seat not yet durable was answered before the "
                  "hold that took it")
            check(hflib.statuses(received) == [409], "the second loser got %r" % received[:120])
        finally:
            slow.close()
            loser.close()
        check(server.stop() == 0, "clean stop")
    finally:
        server.cleanup()


def request_bytes(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else b""
    return (b"%s %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (method.encode(), path.encode(), len(data), data))


def answer_on(sock):
    """Reads one whole answer (head and a JSON body) from a connection: (status, body)."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    return hflib.statuses(head)[0], json.loads(body)


def test_reads_wait_only_for_what_they_show():
    """A read of a hold, an order, a seat or a page of seats, or a refusal about a hold, shows
    only what it names: when that is durable the answer leaves at once, even while another
    batch waits for a slow sync; a read of a change not yet durable waits for it."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_SYNC_DELAY_MS": "1500"})
        port = server.port
        _, kept = hflib.request(port, "POST", "/v1/events/f/holds",
                                {"user_id": "a", "seats": [SEATS[0]]})
        _, sold = hflib.request(port, "POST", "/v1/events/f/holds",
                                {"user_id": "b", "seats": [SEATS[1]]})
        status, order = hflib.request(port, "POST", "/v1/holds/%s/commit" % sold["reservation_id"],
                                      {"user_id": "b"})
        check(status == 200, "the commit answered %d" % status)
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        reader = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            slow.sendall(hold_bytes(SEATS[-1], "slow"))  # its batch now waits 1.5 s
            reads = [("GET", "/v1/holds/%s" % kept["reservation_id"], None, 200),
                     ("GET", "/v1/orders/%s" % order["order_id"], None, 200),
                     ("POST", "/v1/holds/%s/release" % kept["reservation_id"], {"user_id": "x"},
                      403),
                     ("GET", "/v1/events/f/seats/%s" % SEATS[0], None, 200),
                     ("GET", "/v1/events/f/seats?limit=2", None, 200),
                     ("GET", "/v1/events/f/seats?status=available&limit=1", None, 200)]
            for method, path, body, expected in reads:
                reader.sendall(request_bytes(method, path, body))
                status, _ = answer_on(reader)
                check(status == expected, "%s %s answered %d" % (method, path, status))
                check(not answered(slow), "%s %s waited for a batch it did not show" %
                      (method, path))
            # Reads of the seat the slow batch holds: they must not show it before it is durable.
            # The second leaves the held seat out of a page of available seats, which shows it
            # is not available just the same.
            waiting = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in "ab"]
            try:
                waiting[0].sendall(request_bytes("GET", "/v1/events/f/seats/%s" % SEATS[-1]))
                waiting[1].sendall(request_bytes("GET", "/v1/events/f/seats?status=available&"
                                                 "after=%s" % SEATS[-3]))
                for sock, what in zip(waiting, ("a read of the seat", "a filtered page")):
                    check(not answered(sock, 0.3), "%s showed a hold not yet durable" % what)
                page = request_bytes("GET", "/v1/events/f/seats?after=%s" % SEATS[-3])
                reader.sendall(page)
                status, shown = answer_on(reader)
                check(status == 200 and shown["seats"][-1]["status"] == "held",
                      "the page with the slow hold answered %d %s" % (status, shown))
                check(answered(slow, 0.3), "a page showed a hold before it was durable")
                for sock in waiting:
                    status, _ = answer_on(sock)
                    check(status == 200, "a waiting read answered %d" % status)
            finally:
                for sock in waiting:
                    sock.close()
            # A release (waits for the next batch) and, on another connection, a read of the
            # released hold: the read must not show what is not yet durable.
            releaser = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                releaser.sendall(request_bytes("POST", "/v1/holds/%s/release" %
                                               kept["reservation_id"], {"user_id": "a"}))
                time.sleep(0.2)
                reader.sendall(request_bytes("GET", "/v1/holds/%s" % kept["reservation_id"]))
                status, shown = answer_on(reader)
                check(status == 200 and shown["status"] == "released",
                      "the read after the release answered %d %s" % (status, shown))
                # Answers freed by one sync leave in one loop turn, in any order: a short
                # grace, far below the 1.5 s a sync takes here.
                check(answered(releaser, 0.3), "a read showed a release before it was durable")
                check(answered(slow, 0.3), "a read showed a release before the batch before it")
            finally:
                releaser.close()
        finally:
            slow.close()
            reader.close()
        check(server.stop() == 0, "clean stop")
    finally:
        server.cleanup()


def test_loser_of_a_failed_batch_is_not_told_409():
    """Two holds of one seat pipelined on one connection while the first batch fails: the
    winner's hold never became durable, so the loser must not hear that the seat is taken."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_FAIL_BATCH": "1"})
        received, _ = hflib.raw_exchange(server.port, hold_bytes(SEATS[0], "winner") +
                                         hold_bytes(SEATS[0], "loser"), timeout=10)
        check(hflib.statuses(received) == [503, 503],
              "answers when the winner's batch failed: %s" % hflib.statuses(received))
        check(server.stop() == failed_exit_code(), "exit code after the failure")
    finally:
        server.cleanup()


def test_failed_store_with_due_expiries_still_answers():
    """A hold acknowledged with a 1 s TTL, then a failed batch: the durable state the server
    reloads has that hold, due to expire while the store is failed. Nothing expires then, and
    the server must keep answering (it once re-armed the due timer forever and went silent)."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {"HOLDFAST_FAULT_FAIL_BATCH": "2"})
        status, answer = hflib.request(server.port, "POST", "/v1/events/f/holds",
                                       {"user_id": "u", "seats": [SEATS[0]], "ttl_s": 1})
        check(status == 201, "the short hold answered %d: %s" % (status, answer))
        status, answer = hflib.request(server.port, "POST", "/v1/events/f/holds",
                                       {"user_id": "v", "seats": [SEATS[1]]})
        check_unavailable(server, status, answer)
        time.sleep(2.0)
        status, _ = hflib.request(server.port, "GET", "/v1/events/f", timeout=5)
        check(status == 200, "a read after the due expiry answered %d" % status)
        check(server.stop() == failed_exit_code(), "exit code after the failure")
    finally:
        server.cleanup()


def postgres_control(action):
    subprocess.run([os.path.join(ROOT, "scripts", "postgres.sh"), action, POSTGRES_DIR],
                   check=True, stdout=subprocess.DEVNULL)


class HoldLoad:
    """Clients making holds of their own seats, one after another, on threads: every 201 is
    an acknowledged hold (id -> seat), and every third one is committed (a 200 is an
    acknowledged order: hold id -> order id; another answer leaves the commit unknown); every
    answer is noted with when it started and how long it took."""

    def __init__(self, port, clients=4, first_seat=0, seats_per_client=200, event_id="f"):
        self.port, self.event_id = port, event_id
        self.acknowledged, self.unknown, self.answers = {}, set(), []
        self.orders, self.commits_unknown = {}, set()
        self.lock, self.stopping = threading.Lock(), threading.Event()
        self.threads = [threading.Thread(target=self.client, daemon=True,
                                         args=(c, first_seat + c * seats_per_client,
                                               seats_per_client)) for c in range(clients)]

    def client(self, number, first, count):
        for index in range(first, first + count):
            if self.stopping.is_set():
                return
            started = time.monotonic()
            try:
                status, answer = hflib.request(self.port, "POST", "/v1/events/%s/holds" %
                                               self.event_id, {"user_id": "c%d-%d" % (number, index),
                                                               "seats": [SEATS[index]]}, timeout=20)
            except OSError:
                status, answer = 0, None
            took = time.monotonic() - started
            with self.lock:
                self.answers.append((started, took, status, answer))
                if status == 201:
                    self.acknowledged[answer["reservation_id"]] = SEATS[index]
                else:
                    # Outcome unknown (a COMMIT cut off may have landed): present or absent.
                    self.unknown.add(SEATS[index])
            if status == 201 and index % 3 == 0:
                self.commit(number, index, answer["reservation_id"])
            # Paced, so the seats last through the outage: some 200 holds a second in all.
            time.sleep(0.02 if status == 201 else 0.1)

    def commit(self, number, index, hold_id):
        started = time.monotonic()
        try:
            status, answer = hflib.request(self.port, "POST", "/v1/holds/%s/commit" % hold_id,
                                           {"user_id": "c%d-%d" % (number, index)}, timeout=20)
        except OSError:
            status, answer = 0, None
        with self.lock:
            self.answers.append((started, time.monotonic() - started, status, answer))
            if status == 200:
                self.orders[hold_id] = answer["order_id"]
            else:
                self.commits_unknown.add(hold_id)

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)

    def since(self, moment):
        """The answers to the requests started at moment or later."""
        with self.lock:
            return [answer for answer in self.answers if answer[0] >= moment]


def check_outage_answers(load, since, until, bound_s=7.0):
    """The changes made during an outage all got an answer within the bound, and some got
    503 unavailable (none a 5xx of another kind, none a hang)."""
    answers = [answer for answer in load.since(since) if answer[0] <= until]
    check(answers, "no request was made during the outage")
    slowest = max(took for _, took, _, _ in answers)
    check(slowest < bound_s, "a change during the outage took %.1f s (bound: 5 s)" % slowest)
    statuses = set(status for _, _, status, _ in answers)
    check(statuses <= {200, 201, 503}, "answers during the outage: %s" % sorted(statuses))
    unavailable = [a for _, _, status, a in answers if status == 503]
    check(unavailable, "no 503 during the outage: %s" % sorted(statuses))
    check(all(a.get("error", {}).get("code") == "unavailable" for a in unavailable),
          "a 503 without the unavailable code: %s" % unavailable[:3])


def wait_serving(port, seat, bound_s, event_id="f"):
    """Polls with a change until it is acknowledged; returns the seconds it took."""
    started = time.monotonic()
    while True:
        status, answer = hflib.request(port, "POST", "/v1/events/%s/holds" % event_id,
                                       {"user_id": "back", "seats": [seat]}, timeout=10)
        waited = time.monotonic() - started
        if status == 201:
            return waited
        check(status == 503, "a change while waiting for the store answered %d: %s" %
              (status, answer))
        check(waited < bound_s, "not serving again %.0f s after the database came back" % waited)
        time.sleep(0.2)


def check_after_outage(port, load, back_seat, event_id="f"):
    """Every acknowledged hold is there, held or (its commit acknowledged) confirmed with its
    order; a hold or commit of unknown outcome is whole or absent; the counts add up."""
    for hold_id, seat in load.acknowledged.items():
        status, answer = hflib.request(port, "GET", "/v1/holds/%s" % hold_id)
        allowed = {"confirmed"} if hold_id in load.orders else \
            {"held", "confirmed"} if hold_id in load.commits_unknown else {"held"}
        check(status == 200 and answer["status"] in allowed and answer["seats"] == [seat],
              "acknowledged hold %s lost after the outage (%s expected): %d %s" %
              (hold_id, sorted(allowed), status, answer))
    for hold_id, order_id in load.orders.items():
        status, answer = hflib.request(port, "GET", "/v1/orders/%s" % order_id)
        check(status == 200 and answer["status"] == "confirmed" and
              answer["seats"] == [load.acknowledged[hold_id]],
              "acknowledged order %s lost after the outage: %d %s" % (order_id, status, answer))
    status, summary = hflib.request(port, "GET", "/v1/events/%s" % event_id)
    check(status == 200, "event answered %d after the outage" % status)
    counts = summary["counts"]
    check(counts["available"] + counts["held"] + counts["sold"] == len(SEATS),
          "counts do not add up: %s" % counts)
    check(counts["sold"] >= len(load.orders), "sold %d, orders acknowledged %d" %
          (counts["sold"], len(load.orders)))
    # The hold that found the store back is the one more.
    extra = counts["held"] + counts["sold"] - len(load.acknowledged) - 1
    check(0 <= extra <= len(load.unknown),
          "held %d and sold %d, acknowledged %d (+1), unknown %d" % (
              counts["held"], counts["sold"], len(load.acknowledged), len(load.unknown)))
    status, seat = hflib.request(port, "GET", "/v1/events/%s/seats/%s" % (event_id, back_seat))
    check(status == 200 and seat["status"] == "held", "the hold made after the outage: %s" % seat)


def postgres_signal(signal_number):
    """SIGSTOP or SIGCONT to every process of the test's PostgreSQL: the postmaster (the
    first line of postmaster.pid) and its children, by pid."""
    with open(os.path.join(POSTGRES_DIR, "data", "postmaster.pid")) as pid_file:
        postmaster = int(pid_file.readline())
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(postmaster)],
                              capture_output=True, text=True).stdout.split()
    for pid in [postmaster] + [int(child) for child in children]:
        try:
            os.kill(pid, signal_number)
        except ProcessLookupError:
            pass


def log_count(server, text):
    """How many times the server's log says text."""
    with open(server.log_path, "rb") as log:
        return log.read().count(text.encode())


# What the log says of a batch that failed because the one sent before it failed (pipeline.c).
FAILED_BEHIND = "behind it with it"


def outage_test(interrupt, resume, outage_s, clients=4, behind_expected=False):
    """Holds under load; the database goes away for outage_s; changes answer 503 within the
    bound meanwhile; once it is back the server serves again by itself (no restart) within
    a few seconds, with every acknowledged hold; after a restart the store has them too. With
    behind_expected, the outage must have caught two batches in flight (the load keeps the
    writer busy enough), the second one failed with the first: neither acknowledged."""
    server = hflib.Server(BINARY)
    try:
        start_with_event(server, {})
        load = HoldLoad(server.port, clients=clients,
                        seats_per_client=(len(SEATS) - 40) // clients).start()
        time.sleep(1.0)
        check(load.acknowledged, "no hold acknowledged before the outage")
        down_at = time.monotonic()
        interrupt()
        try:
            time.sleep(outage_s)
        finally:
            resume()
        up_at = time.monotonic()
        back_s = wait_serving(server.port, SEATS[-2], 15.0)
        load.stop()
        check_outage_answers(load, down_at + 0.5, up_at)
        print("  back %.1f s after the database; %d holds and %d orders acknowledged, %d and %d"
              " unknown" % (back_s, len(load.acknowledged), len(load.orders), len(load.unknown),
                            len(load.commits_unknown)), flush=True)
        behind = log_count(server, FAILED_BEHIND)
        print("  %d batches failed behind the one sent before them" % behind, flush=True)
        if behind_expected:
            check(behind > 0, "no batch was in flight behind the one the outage failed")
        check_after_outage(server.port, load, SEATS[-2])
        check(server.stop() == 0, "clean stop after the store came back")
        server.start()
        check_after_outage(server.port, load, SEATS[-2])
        check(server.stop() == 0, "clean stop after the restart")
    except Failure:
        print(server.log_tail(), flush=True)
        raise
    finally:
        server.cleanup()


def test_postgres_down():
    """PostgreSQL stopped under load (a fast shutdown: connections end, new ones are refused)
    for 4 s, then started again."""
    outage_test(lambda: postgres_control("stop"), lambda: postgres_control("start"), 4.0)


def test_postgres_paused():
    """PostgreSQL paused (SIGSTOP) under load for 8 s, then SIGCONT: connections neither
    answer nor break, so only the bounded waits end them."""
    outage_test(lambda: postgres_signal(signal.SIGSTOP), lambda: postgres_signal(signal.SIGCONT),
                8.0)


def postgres_processes():
    """The postmaster's pid and its children's, as postgres_signal finds them."""
    with open(os.path.join(POSTGRES_DIR, "data", "postmaster.pid")) as pid_file:
        postmaster = int(pid_file.readline())
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(postmaster)],
                              capture_output=True, text=True).stdout.split()
    return postmaster, [int(child) for child in children]


def postgres_paused_then(stop):
    """PostgreSQL paused (SIGSTOP) for a second under a load of many clients, so that the
    writer has sent a batch and the one behind it (batches that overlap) and both wait; then
    stopped while they do: stop(postmaster, children) ends it."""
    postgres_signal(signal.SIGSTOP)
    time.sleep(1.0)
    postmaster, children = postgres_processes()
    stop(postmaster, children)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(postmaster, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise Failure("PostgreSQL did not stop")


def fast_shutdown(postmaster, children):
    """pg_ctl stop -m fast's signal, then the processes go on: the sessions end."""
    os.kill(postmaster, signal.SIGINT)
    for pid in [postmaster] + children:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def crash(postmaster, children):
    """kill -9 of every process: what the two batches sent was never read."""
    for pid in [postmaster] + children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_postgres_paused_two_in_flight():
    """PostgreSQL paused under a load of 12 clients, so that two batches are in flight, the
    second sent behind the first before its COMMIT answered: both fail when the wait ends,
    neither is acknowledged, and the server serves again once PostgreSQL is back."""
    outage_test(lambda: postgres_signal(signal.SIGSTOP), lambda: postgres_signal(signal.SIGCONT),
                6.0, clients=12, behind_expected=True)


def test_postgres_stopped_two_in_flight():
    """PostgreSQL stopped (a fast shutdown) while two batches wait in it: the first may
    commit before its session ends (then it is acknowledged) or not, the second fails with
    or after it; nothing acknowledged is lost."""
    outage_test(lambda: postgres_paused_then(fast_shutdown), lambda: postgres_control("start"),
                3.0, clients=12)


def test_postgres_crashed_two_in_flight():
    """PostgreSQL killed (kill -9) while two batches wait unread in it: both fail, neither is
    acknowledged, and after its recovery every acknowledged change is there."""
    outage_test(lambda: postgres_paused_then(crash), lambda: postgres_control("start"), 3.0,
                clients=12, behind_expected=True)


# The tests of SQLite's own files and log, skipped on PostgreSQL.
SQLITE_ONLY = {"fail_write": "a failed write of the SQLite files (VFS seam)",
               "fail_fsync": "a failed fsync of SQLite's log",
               "database_full": "SQLite's max_page_count",
               "disk_full_tmpfs": "the SQLite files on a full tmpfs",
               "fault_under_concurrent_load": "a failed fsync of SQLite's log under load"}

TESTS = [("fail_batch", test_fail_batch), ("fail_write", test_fail_write),
         ("fail_fsync", test_fail_fsync), ("database_full", test_database_full),
         ("disk_full_tmpfs", test_disk_full_tmpfs),
         ("fault_under_concurrent_load", test_fault_under_concurrent_load),
         ("loser_waits_only_for_what_it_saw", test_loser_waits_only_for_what_it_saw),
         ("reads_wait_only_for_what_they_show", test_reads_wait_only_for_what_they_show),
         ("loser_of_a_failed_batch_is_not_told_409", test_loser_of_a_failed_batch_is_not_told_409),
         ("failed_store_with_due_expiries_still_answers",
          test_failed_store_with_due_expiries_still_answers)]
POSTGRES_TESTS = [("postgres_down", test_postgres_down), ("postgres_paused", test_postgres_paused),
                  ("postgres_paused_two_in_flight", test_postgres_paused_two_in_flight),
                  ("postgres_stopped_two_in_flight", test_postgres_stopped_two_in_flight),
                  ("postgres_crashed_two_in_flight", test_postgres_crashed_two_in_flight)]

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=BINARY)
    parser.add_argument("-k", dest="pattern", default=None)
    parser.add_argument("--store-url", default=None)
    parser.add_argument("--postgres-dir", default=None)
    args = parser.parse_args()
    BINARY = args.binary
    POSTGRES_DIR = args.postgres_dir
    tests = TESTS
    if args.store_url:
        hflib.STORE_URL = args.store_url
        for name, reason in SQLITE_ONLY.items():
            print("skip %s: SQLite only: %s" % (name, reason), flush=True)
        tests = [(name, test) for name, test in TESTS if name not in SQLITE_ONLY]
        if POSTGRES_DIR:
            tests += POSTGRES_TESTS
    sys.exit(hflib.run_tests(tests, ["-k", args.pattern] if args.pattern else []))
