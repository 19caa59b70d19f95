#!/usr/bin/env python3
"""Replication (API.md section 11): a primary and a synchronous standby, the primary killed
under load and the standby promoted; the node, given both in a multi-host URL with
target_session_attrs=read-write, finds the new primary by itself and nothing acknowledged is
lost.

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


TESTS = [("failover_to_synchronous_standby", test_failover_to_synchronous_standby)]

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=BINARY)
    parser.add_argument("-k", dest="pattern", default=None)
    args = parser.parse_args()
    BINARY = args.binary
    sys.exit(hflib.run_tests(TESTS, ["-k", args.pattern] if args.pattern else []))
