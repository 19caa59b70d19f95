"""Small helpers shared by the reliability tests (tests/crash, tests/hostile): start and kill a
holdfast process, talk HTTP to it, read its RSS, and the runner convention (one line per test,
then `N passed, N failed`, non-zero exit on failure). Python 3 standard library only."""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback


# A PostgreSQL URL (the reliability tests' --store-url): every server then stores in a new
# database of that PostgreSQL named after its data directory, created at its first start.
STORE_URL = None
_databases = set()


def postgres_database(url, name):
    """Creates the database name on url's PostgreSQL (once) and returns its URL."""
    import urllib.parse
    if name not in _databases:
        psql = shutil.which("psql") or "psql"
        result = subprocess.run([psql, url, "-q", "-c", 'CREATE DATABASE "%s"' % name],
                                capture_output=True, text=True)
        if result.returncode != 0 and "already exists" not in result.stderr:
            raise Failure("cannot create the database %s: %s" % (name, result.stderr.strip()))
        _databases.add(name)
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query,
                                    parts.fragment))


def free_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
    finally:
        sock.close()


class Failure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Server:
    """One holdfast process on a data directory that outlives it (restarts reuse it)."""

    def __init__(self, binary, data_dir=None, env=None, extra_args=()):
        self.binary = os.path.abspath(binary)
        self.own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="holdfast-rel-")
        self.env = dict(env or {})
        self.extra_args = list(extra_args)
        self.process = None
        self.port = None
        descriptor, self.log_path = tempfile.mkstemp(prefix="holdfast-rel-", suffix=".log")
        os.close(descriptor)

    def start(self, wait=True, env=None, ready_s=20.0):
        for attempt in range(3):
            self.port = free_port()
            environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
            environment.update(self.env)
            environment.update(env or {})
            log = open(self.log_path, "ab")
            store = []
            if STORE_URL and "--store" not in self.extra_args:
                name = "rel_" + re.sub(r"[^a-z0-9]", "_", os.path.basename(self.data_dir).lower())
                store = ["--store", postgres_database(STORE_URL, name)]
            self.process = subprocess.Popen(
                [self.binary, "serve", "--listen", "127.0.0.1:%d" % self.port,
                 "--data", self.data_dir] + store + self.extra_args,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=environment,
                start_new_session=True)
            log.close()
            if not wait:
                return self
            try:
                self.wait_ready(ready_s)
                return self
            except Failure:
                if self.process.poll() is not None and "in use" in self.log_tail(5) and attempt < 2:
                    continue
                raise
        return self

    def wait_ready(self, limit_s=20.0):
        deadline = time.monotonic() + limit_s
        last = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Failure("server exited with %s while starting:\n%s" % (
                    self.process.returncode, self.log_tail()))
            try:
                status, _ = request(self.port, "GET", "/healthz", timeout=2)
                if status == 200:
                    return
                last = status
            except (OSError, http.client.HTTPException) as error:
                last = repr(error)
            time.sleep(0.03)
        raise Failure("server not ready after %.0fs (last %s)" % (limit_s, last))

    def running(self):
        return self.process is not None and self.process.poll() is None

    def kill(self, expect_alive=False):
        """SIGKILL. With expect_alive, a server that had already died on its own (a crash, a
        sanitizer's halt) fails the test instead of passing for a kill."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        elif expect_alive:
            raise Failure("the server died on its own (exit %s):\n%s" % (
                self.process.returncode, self.log_tail()))
        self.check_sanitizers()

    SANITIZER_MARKS = (b"ERROR: AddressSanitizer", b"ERROR: LeakSanitizer",
                       b"WARNING: ThreadSanitizer", b"runtime error:", b"ERROR: libFuzzer")

    def check_sanitizers(self):
        """Fails when the server's log holds a sanitizer report."""
        try:
            with open(self.log_path, "rb") as log:
                text = log.read()
        except OSError:
            return
        for mark in self.SANITIZER_MARKS:
            at = text.find(mark)
            if at >= 0:
                raise Failure("sanitizer report in the server log:\n%s" % text[
                    max(0, at - 200):at + 3000].decode("utf-8", "replace"))

    def stop(self, limit_s=20.0):
        """SIGTERM; returns the exit code (kills after limit_s and fails)."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(limit_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("server did not stop within %.0fs of SIGTERM" % limit_s)
        self.check_sanitizers()
        return code

    def rss_kib(self):
        with open("/proc/%d/status" % self.process.pid) as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def log_tail(self, lines=30):
        try:
            with open(self.log_path, "rb") as log:
                return b"\n".join(log.read().splitlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def cleanup(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        try:
            os.unlink(self.log_path)
        except OSError:
            pass


def request(port, method, path, body=None, headers=None, timeout=10.0):
    """One request on a new connection: (status, parsed JSON or raw bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        return send(connection, method, path, body, headers)
    finally:
        connection.close()


def send(connection, method, path, body=None, headers=None):
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json"} if data is not None else {}
    all_headers.update(headers or {})
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    raw = response.read()
    try:
        return response.status, json.loads(raw) if raw else None
    except ValueError:
        return response.status, raw


def raw_exchange(port, data, timeout=5.0, shutdown=True):
    """Sends bytes, optionally half-closes, reads until the server closes or timeout.
    Returns (bytes received, closed by server)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received = b""
    closed = False
    try:
        try:
            if data:
                sock.sendall(data)
            if shutdown:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass   # the server closed first (a refused or rejected connection): read what came
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
    finally:
        sock.close()
    return received, closed


def statuses(received):
    """Status codes of the HTTP responses found in a byte stream. A status line may follow a
    body directly (bodies end without a line break), so it is not looked for at line starts
    only; bodies are JSON and never hold "HTTP/1.1 " followed by three digits."""
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", received)]


def run_tests(tests, argv=None):
    """Runs (name, function) pairs, honours -k SUBSTRING, prints the runner's last line."""
    argv = sys.argv[1:] if argv is None else argv
    pattern = None
    if "-k" in argv:
        pattern = argv[argv.index("-k") + 1]
    passed = failed = 0
    for name, function in tests:
        if pattern and pattern not in name:
            continue
        start = time.monotonic()
        try:
            function()
            passed += 1
            print("ok %s %.1fs" % (name, time.monotonic() - start), flush=True)
        except Exception as error:  # noqa: BLE001 (every failure is reported, then the next)
            failed += 1
            print("FAIL %s: %s" % (name, error), flush=True)
            traceback.print_exc()
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1
