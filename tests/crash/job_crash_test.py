#!/usr/bin/env python3
"""Crash harness of a cancel job (API.md section 13): kill -9 in the middle of its steps.

    python3 tests/crash/job_crash_test.py --binary build/holdfast [--orders 10000] [--kills 4]
                                          [--seed N]

An event gets --orders confirmed, paid pool bookings (and one unpaid); then its cancel, onto an
event whose pool has room for half of them, starts the job, and while the job runs the server
gets SIGKILL --kills times, each at a random instant after the restart, and is started again.
Once the job is done, ten offers are accepted by their commit and ten released, with a kill -9
after each batch. Then, on the SQLite file: each order was handled exactly once (job_offers),
the first half offered and the rest refunded; every order ends exactly one of accepted
(exchanged for a new order of the old total), refunded once (reason event_cancelled, its
total; the unpaid one owes nothing), or still offered (confirmed, its offer held); the job's
counts match; and `holdfast check` passes on the data directory. Prints `N passed, N failed`."""

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
REBOOK = "jobcrash_to"  # rebook_to: room in its pool for half the orders
PRICE = 700


def book_range(port, first, count, errors):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for n in range(first, first + count):
            body = {"user_id": "u%d" % n, "pools": {"GA": 1}}
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
    for event_id, capacity in ((EVENT, orders), (REBOOK, orders // 2)):
        status, answer = hflib.request(server.port, "POST", "/v1/events", {
            "id": event_id, "pools": [{"id": "GA", "capacity": capacity, "price": PRICE}],
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


def settle_some(server, job_id):
    """Accepts the first 10 offers by their commit and releases the next 10, with a kill -9
    between: (accepted, released) order ids."""
    status, page = hflib.request(server.port, "GET", "/v1/jobs/%s/offers?status=offered&limit=20"
                                 % job_id)
    check(status == 200 and len(page["offers"]) == 20, "offers: %s %r" % (status, page))
    accepted, released = page["offers"][:10], page["offers"][10:]
    for offer in accepted:
        status, answer = hflib.request(server.port, "POST", "/v1/holds/%s/commit" %
                                       offer["reservation_id"], {"user_id": offer["user_id"]})
        check(status == 200, "commit of an offer: %s %r" % (status, answer))
    server.kill(expect_alive=True)
    server.start()
    for offer in released:
        status, answer = hflib.request(server.port, "POST", "/v1/holds/%s/release" %
                                       offer["reservation_id"], {"user_id": offer["user_id"]})
        check(status == 200, "release of an offer: %s %r" % (status, answer))
    server.kill(expect_alive=True)
    server.start()
    return ({o["order_id"] for o in accepted}, {o["order_id"] for o in released})


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
        status, job = hflib.request(server.port, "POST", "/v1/events/%s/cancel" % EVENT,
                                    {"rebook_to": REBOOK, "offer_ttl_s": 3600})
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
        settled = settle_some(server, job_id)
        final = job_state(server, job_id)
        check(server.stop() == 0, "clean stop")
        check_data(server.data_dir, job_id, final, orders, settled)
        checked = subprocess.run([binary, "check", "--data", server.data_dir],
                                 capture_output=True, text=True, timeout=300)
        check(checked.returncode == 0, "holdfast check: %s" % checked.stderr[-600:])
        print("# %d orders, %d kills (%d while running), seed %d" % (orders, kills, killed_running,
                                                                    seed), flush=True)
    finally:
        server.cleanup()


def check_data(data_dir, job_id, final, orders, settled):
    """Every order ends exactly one of: accepted (exchanged for an order on rebook_to), refunded
    once, or still offered (confirmed, its offer held)."""
    accepted, released = settled
    offered = orders // 2  # the rebook_to pool's room: the first half, oldest first
    database = sqlite3.connect(os.path.join(data_dir, "holdfast.db"))
    try:
        rows = lambda sql, *args: database.execute(sql, args).fetchall()  # noqa: E731
        statuses = dict(rows("SELECT status, count(*) FROM job_offers WHERE job_id = ?"
                             " GROUP BY status", job_id))
        expected = {"accepted": len(accepted), "refunded": orders - offered + len(released),
                    "offered": offered - len(accepted) - len(released)}
        check(statuses == expected, "the offers' outcomes: %r, not %r" % (statuses, expected))
        handled = rows("SELECT count(*), count(DISTINCT order_id) FROM job_offers WHERE job_id = ?",
                       job_id)
        check(handled == [(orders, orders)], "each order handled once: %r" % handled)
        by_status = dict(rows("SELECT status, count(*) FROM orders WHERE event_id = ?"
                              " GROUP BY status", EVENT))
        check(by_status == {k: v for k, v in (("exchanged", expected["accepted"]),
                                               ("cancelled", expected["refunded"]),
                                               ("confirmed", expected["offered"])) if v},
              "the old orders: %r" % by_status)
        mismatched = rows("SELECT jo.order_id FROM job_offers jo JOIN orders o ON o.id ="
                          " jo.order_id WHERE (jo.status = 'accepted') != (o.status = 'exchanged')"
                          " OR (jo.status = 'refunded') != (o.status = 'cancelled') LIMIT 3")
        check(mismatched == [], "an offer's outcome is its order's: %r" % mismatched)
        new = rows("SELECT count(*), sum(total) FROM orders WHERE event_id = ?", REBOOK)
        check(new == [(len(accepted), len(accepted) * PRICE)], "the accepted offers' orders")
        doubled = rows("SELECT order_id FROM refunds GROUP BY order_id HAVING count(*) > 1")
        check(doubled == [], "no order refunded twice: %r" % doubled[:5])
        refunds = rows("SELECT count(*), sum(amount) FROM refunds WHERE reason = 'event_cancelled'")
        # Order 0, the unpaid one, is the oldest: offered, then accepted (settle_some).
        paid = expected["refunded"]
        check(refunds == [(paid, paid * PRICE)], "one refund per refunded paid order: %r" % refunds)
        unpaid = rows("SELECT count(*) FROM refunds JOIN orders ON orders.id = refunds.order_id"
                      " WHERE orders.payment_ref IS NULL")
        check(unpaid == [(0,)], "no refund of the unpaid order")
        check((final["orders"], final["offered"], final["accepted"], final["refunded"],
               final["open"]) == (orders, offered, expected["accepted"], expected["refunded"],
                                  expected["offered"]), "the job's counts: %r" % final)
        stored = rows("SELECT cursor, status FROM jobs WHERE id = ?", job_id)
        check(stored == [(orders, "done")], "the stored job: %r" % stored)
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
