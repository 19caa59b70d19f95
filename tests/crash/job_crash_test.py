#!/usr/bin/env python3
"""Crash harness of a cancel job (API.md section 13): kill -9 in the middle of its steps.

    python3 tests/crash/job_crash_test.py --binary build/holdfast [--orders 10000] [--kills 4]
                                          [--seed N]

An event gets --orders confirmed, paid pool bookings (and one unpaid); then its cancel starts the
job, and while the job runs the server gets SIGKILL --kills times, each at a random instant
after the restart, and is started again. Once the job is done, on the SQLite file: every order
of the event is cancelled, every paid order has exactly one refund of reason event_cancelled
(its total), the job handled each order exactly once (job_offers), the job's counts match; and
`holdfast check` passes on the data directory. (Offers on rebook_to are not built: no order
ends offered or accepted.) Prints `N passed, N failed`."""

import argparse
import http.client
import json
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import hflib  # noqa: E402
from hflib import Failure, check  # noqa: E402

EVENT = "jobcrash"
PRICE = 700


def book_range(port, first, count, errors):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for n in range(first, first + count):
            body = {"user_id": "u%d" % (n % 97), "pools": {"GA": 1}}
            if n != 0:
                body["payment_ref"] = "pi_%d" % n
            status, answer = hflib.send(connection, "POST", "/v1/events/%s/bookings" % EVENT, body)
            if status != 201:
                errors.append("booking %d: %s %r" % (n, status, answer))
                return
    except Exception as error:  # noqa: BLE001 (reported by the caller)
        errors.append("booking %d: %r" % (first, error))
    finally:
        connection.close()


def make_orders(server, orders):
    status, answer = hflib.request(server.port, "POST", "/v1/events", {
        "id": EVENT, "pools": [{"id": "GA", "capacity": orders, "price": PRICE}],
        "max_seats_per_user": 0})
    check(status == 201, "event: %s %r" % (status, answer))
    errors, threads, workers = [], [], 4
    share = (orders + workers - 1) // workers
    for w in range(workers):
        first = w * share
        count = max(0, min(share, orders - first))
        thread = threading.Thread(target=book_range, args=(server.port, first, count, errors))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    check(not errors, "bookings: %s" % errors[:3])


def job_state(server, job_id):
    status, job = hflib.request(server.port, "GET", "/v1/jobs/%s" % job_id)
    check(status == 200, "GET job: %s %r" % (status, job))
    return job


def run(binary, orders, kills, seed):
    rng = random.Random(seed)
    server = hflib.Server(binary)
    try:
        server.start()
        make_orders(server, orders)
        status, job = hflib.request(server.port, "POST", "/v1/events/%s/cancel" % EVENT, {})
        check(status == 202, "cancel: %s %r" % (status, job))
        job_id = job["job_id"]
        killed_running = 0
        for kill in range(kills):
            # The first at once (the job has just begun), the others a little after the
            # restart, while its load is done and the steps go on.
            time.sleep(0 if kill == 0 else rng.uniform(0.0, 0.05))
            server.kill(expect_alive=True)
            server.start()
            state = job_state(server, job_id)
            killed_running += state["status"] == "running"
            # The second cancel after a restart answers the same job.
            status, again = hflib.request(server.port, "POST", "/v1/events/%s/cancel" % EVENT, {})
            check(status == 202 and again["job_id"] == job_id, "the same job: %r" % again)
        deadline = time.monotonic() + 120
        while job_state(server, job_id)["status"] != "done":
            check(time.monotonic() < deadline, "the job was not done in 120 s")
            time.sleep(0.05)
        check(killed_running >= 1, "no kill came while the job ran")
        final = job_state(server, job_id)
        check(server.stop() == 0, "clean stop")
        check_data(server.data_dir, job_id, final, orders)
        checked = subprocess.run([binary, "check", "--data", server.data_dir],
                                 capture_output=True, text=True, timeout=300)
        check(checked.returncode == 0, "holdfast check: %s" % checked.stderr[-600:])
        print("# %d orders, %d kills (%d while running), seed %d" % (orders, kills, killed_running,
                                                                    seed), flush=True)
    finally:
        server.cleanup()


def check_data(data_dir, job_id, final, orders):
    database = sqlite3.connect(os.path.join(data_dir, "holdfast.db"))
    try:
        rows = lambda sql, *args: database.execute(sql, args).fetchall()  # noqa: E731
        check(rows("SELECT status, count(*) FROM orders WHERE event_id = ? GROUP BY status",
                   EVENT) == [("cancelled", orders)], "every order cancelled")
        doubled = rows("SELECT order_id FROM refunds GROUP BY order_id HAVING count(*) > 1")
        check(doubled == [], "no order refunded twice: %r" % doubled[:5])
        refunds = rows("SELECT count(*), sum(amount) FROM refunds WHERE reason = 'event_cancelled'")
        check(refunds == [(orders - 1, (orders - 1) * PRICE)],
              "one refund of its total per paid order: %r" % refunds)
        unpaid = rows("SELECT count(*) FROM refunds JOIN orders ON orders.id = refunds.order_id"
                      " WHERE orders.payment_ref IS NULL")
        check(unpaid == [(0,)], "no refund of the unpaid order")
        handled = rows("SELECT count(*), count(DISTINCT order_id) FROM job_offers WHERE job_id = ?",
                       job_id)
        check(handled == [(orders, orders)], "each order handled once: %r" % handled)
        statuses = rows("SELECT status, count(*) FROM job_offers GROUP BY status")
        check(statuses == [("refunded", orders)], "every order refunded: %r" % statuses)
        check((final["orders"], final["refunded"], final["offered"], final["open"]) ==
              (orders, orders, 0, 0), "the job's counts: %r" % final)
        stored = rows("SELECT cursor, refunded, status FROM jobs WHERE id = ?", job_id)
        check(stored == [(orders, orders, "done")], "the stored job: %r" % stored)
    finally:
        database.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--orders", type=int, default=10000)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--seed", type=int, default=None)
    arguments, rest = parser.parse_known_args()
    seed = arguments.seed if arguments.seed is not None else random.randrange(1 << 30)
    print("# seed %d" % seed, flush=True)
    tests = [("job_crash.kill_9_in_the_middle",
              lambda: run(arguments.binary, arguments.orders, arguments.kills, seed))]
    return hflib.run_tests(tests, rest)


if __name__ == "__main__":
    sys.exit(main())
