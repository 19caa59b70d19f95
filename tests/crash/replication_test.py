#!/usr/bin/env python3
"""Replication (API.md section 11): a primary and a synchronous standby, the primary killed
under load and the standby promoted; the node, given both in a multi-host URL with
target_session_attrs=read-write, finds the new primary by itself and nothing acknowledged is
lost. Then the same with two nodes (A and B, each owning an event, each loaded directly and
through the other): both find the new primary, their units are owned again, every
acknowledged hold and order on either node is there, and no seat is sold twice.

    python3 tests/crash/replication_test.py --binary build/holdfast [-k NAME]

The test sets up both servers itself (scripts/postgres.sh start-pair: initdb, pg_basebackup -R,
synchronous_standby_names, synchronous_commit on, free loopback ports, as the postgres user
when run as root) and removes them at the end. One line per test, then `N passed, N failed`."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hostile"))
sys.path.insert(0, HERE)
import fault_test  # noqa: E402
import hflib  # noqa: E402
from hflib import Failure, check  # noqa: E402

BINARY = "build/holdfast"
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "postgres.sh")
# The whole test's bound: the pair's set-up, the load, the failover and the checks.
BOUND_S = 90.0


def pair(action, directory):
    result = subprocess.run([SCRIPT, action, directory], capture_output=True, text=True,
                            timeout=60)
    check(result.returncode == 0, "postgres.sh %s failed: %s" % (action, result.stderr.strip()))
    return result.stdout.strip()


def server_processes(data_directory):
    """The postmaster of a data directory (postmaster.pid's first line) and its children."""
    with open(os.path.join(data_directory, "postmaster.pid")) as pid_file:
        postmaster = int(pid_file.readline())
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(postmaster)],
                              capture_output=True, text=True).stdout.split()
    return [postmaster] + [int(child) for child in children]


def kill_primary(directory):
    """kill -9 of the primary's every process, as if its machine died."""
    for pid in server_processes(os.path.join(directory, "primary", "data")):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def standby_is_synchronous(url):
    """The primary reports the standby as synchronous, and a commit there is on the standby."""
    psql = shutil.which("psql") or "psql"
    state = subprocess.run([psql, url, "-tA", "-c",
                            "SELECT sync_state FROM pg_stat_replication"],
                           capture_output=True, text=True).stdout.strip()
    return state == "sync"


def test_failover_to_synchronous_standby():
    started = time.monotonic()
    directory = tempfile.mkdtemp(prefix="holdfast-pair-")
    server = None
    try:
        url = pair("start-pair", directory)
        check("target_session_attrs=read-write" in url and "," in url, "not a multi-host URL: " + url)
        check(standby_is_synchronous(url), "the standby is not synchronous")
        server = hflib.Server(BINARY, extra_args=["--store", url])
        server.start()
        fault_test.create_event(server.port)
        load = fault_test.HoldLoad(server.port).start()
        time.sleep(1.5)
        check(load.acknowledged, "no hold acknowledged before the failover")
        killed_at = time.monotonic()
        kill_primary(directory)
        time.sleep(1.0)
        pair("promote", directory)
        promoted_at = time.monotonic()
        back_s = fault_test.wait_serving(server.port, fault_test.SEATS[-2], 30.0)
        load.stop()
        fault_test.check_outage_answers(load, killed_at + 0.5, promoted_at)
        print("  serving %.1f s after the promotion; %d holds and %d orders acknowledged, %d"
              " and %d unknown" % (back_s, len(load.acknowledged), len(load.orders),
                                   len(load.unknown), len(load.commits_unknown)), flush=True)
        fault_test.check_after_outage(server.port, load, fault_test.SEATS[-2])
        check(server.stop() == 0, "clean stop after the failover")
        # From the new primary's tables alone: a restart reads them back.
        server.start()
        fault_test.check_after_outage(server.port, load, fault_test.SEATS[-2])
        check(server.stop() == 0, "clean stop after the restart")
        took = time.monotonic() - started
        check(took < BOUND_S, "the test took %.0f s (bound %.0f s)" % (took, BOUND_S))
    except Failure:
        if server is not None:
            print(server.log_tail(), flush=True)
        raise
    finally:
        if server is not None:
            server.cleanup()
        subprocess.run([SCRIPT, "stop-pair", directory], capture_output=True, timeout=60)
        shutil.rmtree(directory, ignore_errors=True)


class Merged:
    """The loads on one event seen as one (check_after_outage reads these fields)."""

    def __init__(self, loads):
        self.acknowledged, self.orders, self.unknown, self.commits_unknown = {}, {}, set(), set()
        for load in loads:
            self.acknowledged.update(load.acknowledged)
            self.orders.update(load.orders)
            self.unknown |= load.unknown
            self.commits_unknown |= load.commits_unknown


def psql_rows(url, sql):
    psql = shutil.which("psql") or "psql"
    result = subprocess.run([psql, url, "-tA", "-F", "|", "-c", sql], capture_output=True,
                            text=True, timeout=20)
    check(result.returncode == 0, "psql failed: %s" % result.stderr.strip())
    return [line.split("|") for line in result.stdout.splitlines() if line]


def two_node_loads(a, b):
    """Event f owned by A, g by B; each loaded on its owner and, forwarded, on the other."""
    fault_test.create_event(a.port, "f")
    fault_test.create_event(b.port, "g")
    loads = {"f": [fault_test.HoldLoad(a.port, clients=2, event_id="f"),
                   fault_test.HoldLoad(b.port, clients=1, first_seat=400, event_id="f")],
             "g": [fault_test.HoldLoad(b.port, clients=2, event_id="g"),
                   fault_test.HoldLoad(a.port, clients=1, first_seat=400, event_id="g")]}
    for each in loads.values():
        for load in each:
            load.start()
    return loads


def check_two_nodes_after(url, a, b, loads):
    back = fault_test.SEATS[-2]
    for event_id, port in (("f", a.port), ("g", b.port)):
        fault_test.check_after_outage(port, Merged(loads[event_id]), back, event_id)
    # Either node answers about either event (its own, or forwarded to the owner).
    for server in (a, b):
        for event_id in ("f", "g"):
            status, _ = hflib.request(server.port, "GET", "/v1/events/%s/seats/%s" %
                                      (event_id, back))
            check(status == 200, "event %s through port %d: %d" % (event_id, server.port, status))
    owners = dict(psql_rows(url, "SELECT unit, node_id FROM leases WHERE expires_at > now()"))
    check(owners.get("f") in ("A", "B") and owners.get("g") in ("A", "B"),
          "live leases after the failover: %s" % owners)
    twice = psql_rows(url, "SELECT event_id, seat_id FROM seat_state GROUP BY event_id, seat_id"
                           " HAVING count(*) > 1")
    check(twice == [], "seats held or sold twice: %s" % twice)
    return owners


def test_two_nodes_fail_over_together():
    started = time.monotonic()
    directory = tempfile.mkdtemp(prefix="holdfast-pair-")
    servers = []
    try:
        url = pair("start-pair", directory)
        check(standby_is_synchronous(url), "the standby is not synchronous")
        for name in ("A", "B"):
            servers.append(hflib.Server(BINARY, extra_args=["--store", url, "--node-id", name]))
            servers[-1].start()
        a, b = servers
        loads = two_node_loads(a, b)
        time.sleep(1.5)
        check(all(load.acknowledged for each in loads.values() for load in each),
              "a load had no hold acknowledged before the failover")
        killed_at = time.monotonic()
        kill_primary(directory)
        time.sleep(1.0)
        pair("promote", directory)
        promoted_at = time.monotonic()
        back_s = max(fault_test.wait_serving(a.port, fault_test.SEATS[-2], 30.0, "f"),
                     fault_test.wait_serving(b.port, fault_test.SEATS[-2], 30.0, "g"))
        for each in loads.values():
            for load in each:
                load.stop()
        # The owners' own loads: every change answered in time, some 503 during the outage.
        for load in (loads["f"][0], loads["g"][0]):
            fault_test.check_outage_answers(load, killed_at + 0.5, promoted_at)
        owners = check_two_nodes_after(url, a, b, loads)
        print("  both serving %.1f s after the promotion; units %s; %d holds and %d orders"
              " acknowledged" % (back_s, owners,
                                 sum(len(l.acknowledged) for e in loads.values() for l in e),
                                 sum(len(l.orders) for e in loads.values() for l in e)),
              flush=True)
        for server in servers:
            check(server.stop() == 0, "clean stop after the failover")
        took = time.monotonic() - started
        check(took < BOUND_S, "the test took %.0f s (bound %.0f s)" % (took, BOUND_S))
    except Failure:
        for server in servers:
            print(server.log_tail(), flush=True)
        raise
    finally:
        for server in servers:
            server.cleanup()
        subprocess.run([SCRIPT, "stop-pair", directory], capture_output=True, timeout=60)
        shutil.rmtree(directory, ignore_errors=True)


TESTS = [("failover_to_synchronous_standby", test_failover_to_synchronous_standby),
         ("two_nodes_fail_over_together", test_two_nodes_fail_over_together)]

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=BINARY)
    parser.add_argument("-k", dest="pattern", default=None)
    args = parser.parse_args()
    BINARY = args.binary
    sys.exit(hflib.run_tests(TESTS, ["-k", args.pattern] if args.pattern else []))
