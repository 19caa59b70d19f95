#!/usr/bin/env python3
"""A cancel job's bench (API.md section 13): an event of --orders confirmed pool orders cancelled
onto another event with room for them all; prints the time from the cancel's answer to the
job's `done`, and the p50/p99 of holds (and their release) on a third event made one at a time
during the job against the same without a job. Crude: one client, Python's http.client (the
bookings beforehand go pipelined, bench/pipelined.py).

    python3 bench/job.py --binary build/holdfast [--orders 100000]"""

import argparse
import os
import sys
import threading
import time

from pipelined import pipelined  # bench/pipelined.py, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "hostile"))
import hflib  # noqa: E402


def book(port, count):
    """COUNT orders of one unit each on 'old', by distinct users, pipelined."""
    answers = pipelined(port, lambda n: ("POST", "/v1/events/old/bookings", {
        "user_id": "u%d" % n, "pools": {"GA": 1}, "payment_ref": "pi"}), count)
    bad = [status for status, _ in answers if status != 201]
    assert not bad, "%d bookings answered %s" % (len(bad), bad[0])


def holds(port, seconds, stop=None):
    """Latencies (ms) of hold + release of one seat on 'third', until seconds pass or stop."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, deadline, n = [], time.monotonic() + seconds, 0
    while time.monotonic() < deadline and not (stop and stop()):
        start = time.monotonic()
        status, hold = hflib.send(connection, "POST", "/v1/events/third/holds",
                                  {"user_id": "b%d" % n, "seats": ["S-A-%d" % (n % 50 + 1)]})
        latencies.append((time.monotonic() - start) * 1000)
        if status == 201:
            hflib.send(connection, "POST", "/v1/holds/%s/release" % hold["reservation_id"],
                       {"user_id": "b%d" % n})
        n += 1
    connection.close()
    return sorted(latencies)


def quantile(values, q):
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--orders", type=int, default=100000)
    arguments = parser.parse_args()
    server = hflib.Server(arguments.binary)
    try:
        server.start()
        port = server.port
        for event_id, capacity in (("old", arguments.orders), ("new", arguments.orders)):
            hflib.request(port, "POST", "/v1/events", {
                "id": event_id, "pools": [{"id": "GA", "capacity": capacity, "price": 100}],
                "max_seats_per_user": 0})
        hflib.request(port, "POST", "/v1/events", {"id": "third", "sections": [
            {"id": "S", "price": 100, "rows": [{"id": "A", "seats": 50}]}]})
        start = time.monotonic()
        book(port, arguments.orders)
        print("# %d orders booked in %.1f s" % (arguments.orders, time.monotonic() - start), flush=True)
        quiet = holds(port, 3.0)
        status, job = hflib.request(port, "POST", "/v1/events/old/cancel", {"rebook_to": "new"})
        assert status == 202, (status, job)
        began = time.monotonic()
        done_at = []

        def watch():
            while True:
                _, state = hflib.request(port, "GET", "/v1/jobs/%s" % job["job_id"])
                if state["status"] == "done":
                    done_at.append(time.monotonic())
                    return
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        busy = holds(port, 600.0, stop=lambda: bool(done_at))
        watcher.join()
        _, state = hflib.request(port, "GET", "/v1/jobs/%s" % job["job_id"])
        print("job: %d orders, %d offered, done in %.2f s" % (
            state["orders"], state["offered"], done_at[0] - began))
        print("hold+release on a third event: without a job p50 %.2f ms p99 %.2f ms (%d);"
              " during the job p50 %.2f ms p99 %.2f ms (%d)" % (
                  quantile(quiet, 0.5), quantile(quiet, 0.99), len(quiet),
                  quantile(busy, 0.5), quantile(busy, 0.99), len(busy)))
        server.stop()
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
