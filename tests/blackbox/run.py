#!/usr/bin/env python3
"""Runs Holdfast's black-box tests against a server binary.

    python3 tests/blackbox/run.py --binary build/holdfast [-k substring] [--jobs N]

Tests are the functions named test_* in tests/blackbox/test_*.py, named MODULE.FUNCTION
(module without its test_ prefix). What a test function takes decides how it runs:
  test_x(server)  shares one server with the other such tests of its module (one group, run in
                  order); after the group the server gets SIGTERM and must exit 0, reported as
                  MODULE.clean_shutdown.
  test_x(fresh)   gets its own new server, stopped with SIGTERM (exit 0 expected) afterwards.
  test_x()        starts and stops the servers it needs itself (restart, crash, config tests).
Groups run in parallel, --jobs at a time. One line per test, then `N passed, N failed` alone
on the last line; the exit code is 0 only when nothing failed."""

import argparse
import concurrent.futures
import importlib
import inspect
import os
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402


class Reporter:
    def __init__(self, verbose_logs=40):
        self.lock = threading.Lock()
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []
        self.log_lines = verbose_logs

    def report(self, name, seconds, error=None, servers=()):
        with self.lock:
            if isinstance(error, harness.TestSkipped):
                self.skipped += 1
                print("skip %s: %s" % (name, error), flush=True)
                return
            if error is None:
                self.passed += 1
                print("ok %s %.1fs" % (name, seconds), flush=True)
                return
            self.failed += 1
            self.failures.append(name)
            reason, where = harness.format_exception(error)
            print("FAIL %s: %s" % (name, reason), flush=True)
            if where:
                print("    at %s" % where, flush=True)
            seen = set()
            for server in servers:
                if server is None or id(server) in seen:
                    continue
                seen.add(id(server))
                tail = server.log_tail(self.log_lines)
                print("    ---- %s log (last %d lines):" % (server.name, self.log_lines),
                      flush=True)
                for line in tail.splitlines():
                    print("    | " + line, flush=True)


class Group:
    def __init__(self, name, kind, tests, weight=1.0, options=None):
        self.name = name
        self.kind = kind          # "shared", "fresh" or "alone"
        self.tests = tests        # [(full name, function)]
        self.weight = weight
        self.options = options or {}


def discover(patterns):
    groups = []
    names = sorted(f[:-3] for f in os.listdir(HERE)
                   if f.startswith("test_") and f.endswith(".py"))
    for module_name in names:
        module = importlib.import_module(module_name)
        short = module_name[len("test_"):]
        shared = []
        for name, function in list(vars(module).items()):
            if not (name.startswith("test_") and inspect.isfunction(function)
                    and function.__module__ == module_name):
                continue
            full = "%s.%s" % (short, name)
            if patterns and not any(pattern in full for pattern in patterns):
                continue
            parameters = list(inspect.signature(function).parameters)
            weight = getattr(function, "weight", 1.0)
            if parameters == ["server"]:
                shared.append((full, function))
            elif parameters == ["fresh"]:
                groups.append(Group(full, "fresh", [(full, function)], weight))
            elif parameters == []:
                groups.append(Group(full, "alone", [(full, function)], weight))
            else:
                raise SystemExit("%s: unknown parameters %s" % (full, parameters))
        if shared:
            groups.append(Group(short, "shared", shared, getattr(module, "WEIGHT", 1.0),
                                getattr(module, "SERVER_OPTIONS", {})))
    # The longest first, so that parallel jobs end together.
    groups.sort(key=lambda group: -group.weight)
    return groups


def run_one(reporter, name, function, argument, extra_servers=()):
    harness.begin_test(name)
    started = time.monotonic()
    error = None
    servers = []
    try:
        if argument is None:
            function()
        else:
            function(argument)
    except BaseException as caught:  # noqa: B902 (a test's failure of any kind is reported)
        if isinstance(caught, KeyboardInterrupt):
            raise
        error = caught
    finally:
        servers = harness.end_test()
    reporter.report(name, time.monotonic() - started, error, list(extra_servers) + servers)
    return error is None


def new_shared_server(options, data_dir):
    return harness.Server(data_dir=data_dir, register=False, **options).start()


def run_shared(reporter, group):
    data_dir = harness.make_untracked_dir(prefix="holdfast-bb-%s-" % group.name)
    server = None
    try:
        try:
            harness.begin_test()
            server = new_shared_server(group.options, data_dir)
        except BaseException as error:  # noqa: B902
            harness.end_test()
            for name, _ in group.tests:
                reporter.report(name, 0.0, error, [server] if server else [])
            return
        harness.end_test()
        for name, function in group.tests:
            if not server.running():
                # A previous test crashed it: report, then go on with a new one.
                dead = server
                code = dead.process.returncode
                reporter.report("%s.server_alive" % group.name, 0.0,
                                harness.TestFailure("shared server exited with code %s before %s"
                                                    % (code, name)), [dead])
                try:
                    harness.begin_test()
                    server = new_shared_server(group.options, data_dir)
                    harness.end_test()
                except BaseException as error:  # noqa: B902
                    harness.end_test()
                    reporter.report(name, 0.0, error, [])
                    continue
            run_one(reporter, name, function, server, [server])

        def clean_shutdown():
            server.stop()

        run_one(reporter, "%s.clean_shutdown" % group.name, clean_shutdown, None, [server])
    finally:
        if server is not None:
            server.kill()
        harness.remove_dir(data_dir)


def run_group(reporter, group):
    if group.kind == "shared":
        run_shared(reporter, group)
        return
    name, function = group.tests[0]
    if group.kind == "alone":
        run_one(reporter, name, function, None)
        return

    # "fresh": the server is part of the test, and so is its clean stop.
    def with_server():
        server = harness.Server().start()
        function(server)
        server.stop()

    run_one(reporter, name, with_server, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="build/holdfast")
    parser.add_argument("-k", dest="patterns", action="append", default=None,
                        help="run tests whose name has this (repeat -k for any of several)")
    # Four groups at once on two cores: the tests mostly wait (holds lapsing, slow readers,
    # retries' backoff, fsync), and the longest groups set the suite's time. Measured on this
    # machine under a load of 3 to 7: release 109 s with 2, 62 s with 4; ASan 69 s with 4.
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout-scale", type=float, default=None,
                        help="multiply timeouts (default 3 for a binary path with 'asan')")
    parser.add_argument("--list", action="store_true", help="list the tests and exit")
    parser.add_argument("--store-url", default=None,
                        help="a PostgreSQL URL: every server stores in a database of its own there")
    arguments = parser.parse_args()

    binary = os.path.abspath(arguments.binary)
    harness.BINARY = binary
    harness.STORE_URL = arguments.store_url
    if arguments.timeout_scale is not None:
        harness.TIMEOUT_SCALE = arguments.timeout_scale
    elif "asan" in binary or "san" in os.path.basename(os.path.dirname(binary)):
        harness.TIMEOUT_SCALE = 3.0

    groups = discover(arguments.patterns)
    if arguments.list:
        for group in groups:
            for name, _ in group.tests:
                print(name)
        return 0

    reporter = Reporter()
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print("FAIL setup: no executable server binary at %s" % binary, flush=True)
        print("0 passed, 1 failed", flush=True)
        return 1

    def on_signal(number, frame):
        harness.kill_everything()
        with reporter.lock:
            print("interrupted by signal %d" % number, flush=True)
            print("%d passed, %d failed" % (reporter.passed, reporter.failed + 1), flush=True)
        os._exit(128 + number)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
            futures = [pool.submit(run_group, reporter, group) for group in groups]
            for future in futures:
                error = future.exception()
                if error is not None:
                    reporter.report("runner", 0.0, error)
    except KeyboardInterrupt:
        harness.kill_everything()
        print("interrupted", flush=True)
        print("%d passed, %d failed" % (reporter.passed, reporter.failed + 1), flush=True)
        return 130
    finally:
        harness.kill_everything()
    sys.stderr.write("# %.1f s, binary %s\n" % (time.monotonic() - started, binary))
    sys.stderr.flush()
    if reporter.skipped:
        sys.stderr.write("# %d skipped (see the skip lines)\n" % reporter.skipped)
    print("%d passed, %d failed" % (reporter.passed, reporter.failed), flush=True)
    return 0 if reporter.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
