"""Black-box harness for Holdfast: start and stop real servers, talk HTTP to them (http.client
with keep-alive, and raw sockets for pipelining and malformed input), and small assertion and
API helpers shared by the test modules. Python 3 standard library only.

Every process started here is registered and killed at the end of its test (and at exit, even
when a test or the runner fails); every temporary directory is removed."""

import atexit
import datetime
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import traceback
import uuid

# Set by the runner.
BINARY = None
# Timeouts (never the sleeps that a test's meaning depends on) are multiplied by this; the
# sanitizer build is about three times slower.
TIMEOUT_SCALE = 1.0

# Set by the runner's --store-url (a PostgreSQL URL): every server then stores in a database
# of its own on that PostgreSQL, named after its data directory, so tests running in parallel
# never see each other's rows and a restarted server finds its own again.
STORE_URL = None

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 15.0

RES_ID_RE = re.compile(r"^res_[0-9a-f]{36}$")
ORD_ID_RE = re.compile(r"^ord_[0-9a-f]{36}$")
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class TestFailure(AssertionError):
    pass


class TestSkipped(Exception):
    """Raised by skip(): the test does not apply to this run (reported, not failed)."""


def skip(reason):
    raise TestSkipped(reason)


def skip_on_postgres(reason):
    """For a test of SQLite itself (its file, its log, its VFS): skipped on PostgreSQL."""
    if STORE_URL is not None:
        skip("SQLite only: " + reason)


_databases = set()


def psql_path():
    found = shutil.which("psql")
    if found:
        return found
    versions = sorted(os.listdir("/usr/lib/postgresql")) if os.path.isdir("/usr/lib/postgresql") else []
    return os.path.join("/usr/lib/postgresql", versions[-1], "bin", "psql") if versions else "psql"


def postgres_rows(data_dir, sql):
    """sql's rows in data_dir's own PostgreSQL database: lists of texts (None for NULL)."""
    result = subprocess.run([psql_path(), store_url_for(data_dir), "-At", "-F", "\t",
                             "-P", "null=\\N", "-c", sql], capture_output=True, text=True)
    if result.returncode != 0:
        fail("psql: %s" % result.stderr.strip())
    return [[None if cell == "\\N" else cell for cell in line.split("\t")]
            for line in result.stdout.splitlines()]


def postgres_column(data_dir, sql):
    """The first column of sql's rows in data_dir's own PostgreSQL database, as integers."""
    return [int(row[0]) for row in postgres_rows(data_dir, sql)]


def store_url_for(data_dir):
    """The PostgreSQL URL of data_dir's own database, created on first use."""
    import urllib.parse
    name = "hf_" + re.sub(r"[^a-z0-9]", "_", os.path.basename(os.path.normpath(data_dir)).lower())
    parts = urllib.parse.urlsplit(STORE_URL)
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query,
                                   parts.fragment))
    with _lock:
        known = name in _databases
    if not known:
        result = subprocess.run([psql_path(), STORE_URL, "-q", "-c", 'CREATE DATABASE "%s"' % name],
                                capture_output=True, text=True)
        if result.returncode != 0 and "already exists" not in result.stderr:
            fail("cannot create the database %s: %s" % (name, result.stderr.strip()))
        with _lock:
            _databases.add(name)
    return url


def fail(message):
    raise TestFailure(message)


def check(condition, message):
    if not condition:
        fail(message)


def check_equal(actual, expected, what):
    if actual != expected:
        fail("%s: expected %s, got %s" % (what, short(expected), short(actual)))


def short(value, limit=600):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "...(%d chars)" % len(text)


def timeout(seconds):
    return seconds * TIMEOUT_SCALE


# ---------------------------------------------------------------------------------------------
# Registry of what a test started, so the runner can clean up and show server logs on failure.

_lock = threading.Lock()
_all_processes = set()
_all_dirs = set()
_log_dir = None
_local = threading.local()
_stopping = [False]
_spawning = [0]   # processes being started, not yet registered


def _context():
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = {"servers": [], "dirs": [], "clients": [], "name": None}
        _local.ctx = ctx
    return ctx


def begin_test(name=None):
    _local.ctx = {"servers": [], "dirs": [], "clients": [], "name": name}


def end_test():
    """Closes clients, kills servers still running and removes temp dirs made by the test.
    Returns the servers the test started (for their logs)."""
    ctx = _context()
    for client in ctx["clients"]:
        try:
            client.close()
        except Exception:
            pass
    for server in ctx["servers"]:
        server.kill()
    for path in ctx["dirs"]:
        remove_dir(path)
    _local.ctx = None
    return ctx["servers"]


def log_dir():
    global _log_dir
    with _lock:
        if _log_dir is None:
            _log_dir = tempfile.mkdtemp(prefix="holdfast-bb-logs-")
            _all_dirs.add(_log_dir)
    return _log_dir


def _new_dir(prefix):
    path = tempfile.mkdtemp(prefix=prefix)
    with _lock:
        stopping = _stopping[0]
        if not stopping:
            _all_dirs.add(path)
    if stopping:
        shutil.rmtree(path, ignore_errors=True)
        fail("the run is being stopped")
    return path


def make_temp_dir(prefix="holdfast-bb-"):
    path = _new_dir(prefix)
    _context()["dirs"].append(path)
    return path


def make_untracked_dir(prefix="holdfast-bb-"):
    """A temporary directory outliving one test (a shared server's), removed at exit."""
    return _new_dir(prefix)


def remove_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    with _lock:
        _all_dirs.discard(path)


def _cleanup_everything():
    with _lock:
        _stopping[0] = True
        processes = list(_all_processes)
        dirs = list(_all_dirs)
    for process in processes:
        try:
            if process.poll() is None:
                process.kill()
                process.wait(5)
        except Exception:
            pass
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)


atexit.register(_cleanup_everything)


def kill_everything():
    """Kills every process (also those being started right now) and removes every dir."""
    _cleanup_everything()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with _lock:
            if _spawning[0] == 0:
                break
        time.sleep(0.01)
    _cleanup_everything()


def free_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
    finally:
        sock.close()


_server_counter = [0]


class Server:
    """One holdfast process. data_dir=None makes a fresh temporary one."""

    def __init__(self, data_dir=None, api_key=None, extra_args=(), binary=None, register=True):
        self.binary = binary or BINARY
        self.data_dir = data_dir or make_temp_dir()
        self.api_key = api_key
        self.extra_args = list(extra_args)
        self.port = None
        self.process = None
        with _lock:
            _server_counter[0] += 1
            number = _server_counter[0]
        self.name = "server-%d" % number
        self.stdout_path = os.path.join(log_dir(), self.name + ".stdout")
        self.stderr_path = os.path.join(log_dir(), self.name + ".stderr")
        if register:
            _context()["servers"].append(self)

    # -- life cycle --

    def command(self):
        command = [self.binary, "serve", "--listen", "127.0.0.1:%d" % self.port,
                   "--data", self.data_dir]
        if self.api_key is not None:
            command += ["--api-key", self.api_key]
        if STORE_URL is not None and not any(a == "--store" or a.startswith("--store=")
                                             for a in self.extra_args):
            command += ["--store", store_url_for(self.data_dir)]
        return command + self.extra_args

    def start(self, wait=True):
        """Starts the process (and waits for /healthz unless told). A port taken between
        choosing and binding it (parallel jobs) is retried with another one."""
        for attempt in range(3):
            offset = len(self.stderr_text())
            try:
                return self._start_once(wait)
            except TestFailure:
                exited = self.process is not None and self.process.poll() is not None
                if not (exited and "in use" in self.stderr_text()[offset:]) or attempt == 2:
                    raise

    def _start_once(self, wait):
        check(self.process is None or self.process.poll() is not None,
              "%s started twice" % self.name)
        self.port = free_port()
        environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
        with _lock:
            if _stopping[0]:
                fail("the run is being stopped")
            _spawning[0] += 1
        try:
            self._spawn(environment)
        finally:
            with _lock:
                stopping = _stopping[0]
                if self.process is not None:
                    if stopping:
                        self.process.kill()   # before kill_everything may let the run exit
                    else:
                        _all_processes.add(self.process)
                _spawning[0] -= 1
        if stopping:
            fail("the run is being stopped")
        if wait:
            self.wait_ready()
        return self

    def _spawn(self, environment):
        self.process = None
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            err.write(("---- %s: %s\n" % (self.name, " ".join(self.command()))).encode())
            err.flush()
            self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=err, env=environment,
                                            start_new_session=True)

    def wait_ready(self, limit_s=READY_TIMEOUT_S):
        deadline = time.monotonic() + timeout(limit_s)
        last = None
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                fail("%s exited with code %s while starting" % (self.name, code))
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                response.read()
                connection.close()
                if response.status == 200:
                    return self
                last = "status %d" % response.status
            except (OSError, http.client.HTTPException) as error:
                last = repr(error)
            time.sleep(0.05)
        fail("%s not ready after %.0f s (last: %s)" % (self.name, timeout(limit_s), last))

    def running(self):
        return self.process is not None and self.process.poll() is None

    def send_signal(self, number):
        self.process.send_signal(number)

    def stop(self, expect_code=0, sig=signal.SIGTERM, limit_s=STOP_TIMEOUT_S):
        """SIGTERM, wait, and check the exit code. Returns the code."""
        check(self.process is not None, "%s was never started" % self.name)
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(limit_s * max(1.0, TIMEOUT_SCALE / 2))
            except subprocess.TimeoutExpired:
                self.kill()
                fail("%s did not exit within %.0f s of %s" % (self.name, limit_s,
                                                              signal.Signals(sig).name))
        code = self.process.returncode
        with _lock:
            _all_processes.discard(self.process)
        if expect_code is not None and code != expect_code:
            fail("%s exited with code %s after %s (expected %s)" % (
                self.name, code, signal.Signals(sig).name, expect_code))
        return code

    def kill(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                self.process.kill()
                self.process.wait(10)
            except Exception:
                pass
        with _lock:
            _all_processes.discard(self.process)

    def wait_exit(self, limit_s):
        try:
            return self.process.wait(timeout(limit_s))
        except subprocess.TimeoutExpired:
            return None

    def cycle(self, kill):
        """Stops this server (kill -9 when kill, else a clean stop) and returns a new process
        on the same data directory."""
        if kill:
            self.kill()
        else:
            self.stop()
        return self.restart()

    def restart(self):
        """A new process on the same data directory (the old one must have exited)."""
        check(not self.running(), "%s still running" % self.name)
        server = Server(data_dir=self.data_dir, api_key=self.api_key,
                        extra_args=self.extra_args, binary=self.binary)
        return server.start()

    # -- logs and clients --

    def stderr_text(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stdout_text(self):
        try:
            with open(self.stdout_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines=40):
        text = self.stderr_text()
        out = self.stdout_text()
        if out.strip():
            text += "---- stdout\n" + out
        return "\n".join(text.splitlines()[-lines:])

    def client(self, api_key="default", client_timeout=30.0):
        key = self.api_key if api_key == "default" else api_key
        return Client(self.port, api_key=key, client_timeout=client_timeout)

    def raw(self, client_timeout=10.0):
        return RawConnection(self.port, client_timeout=client_timeout)


# ---------------------------------------------------------------------------------------------
# Recording for the contract test (tests/contract): with HOLDFAST_CONTRACT_RECORD naming a file,
# every exchange of a Client and every stream's head are appended to it as one JSON line each,
# for tests/contract/check.mjs to check against docs/openapi.yaml. Off unless set.

RECORD_PATH = os.environ.get("HOLDFAST_CONTRACT_RECORD") or None
# A larger body is recorded by its length only (a page of 10,000 seats is about 1 MB, and some
# tests read a million seats): its status and Content-Type are still checked.
RECORD_BODY_MAX = 1 << 20
_record_lock = threading.Lock()


def record_exchange(method, path, status, headers, body, streamed=False, request_body=None):
    """Appends one exchange (headers lower-cased; body bytes, or None when not read; the
    request's body bytes when it had one)."""
    if RECORD_PATH is None:
        return
    entry = {"test": _context().get("name"), "method": method, "path": path, "status": status,
             "headers": headers, "streamed": streamed, "body": None}
    if request_body and len(request_body) <= RECORD_BODY_MAX:
        try:
            entry["request_body"] = request_body.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if body is not None:
        entry["body_length"] = len(body)
        if len(body) <= RECORD_BODY_MAX:
            try:
                entry["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                entry["body_utf8"] = False
    _record_line(entry)


def record_stream_event(path, event, data):
    """Appends one Server-Sent Event of a stream (its name and data text)."""
    if RECORD_PATH is None:
        return
    _record_line({"test": _context().get("name"), "kind": "sse", "method": "GET", "path": path,
                  "event": event, "data": data})


def _record_line(entry):
    line = json.dumps(entry) + "\n"
    with _record_lock:
        with open(RECORD_PATH, "a", encoding="utf-8") as out:
            out.write(line)


# ---------------------------------------------------------------------------------------------
# Clients


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # lower-cased names
        self.body = body                # bytes
        self._json = None
        self._parsed = False

    @property
    def json(self):
        if not self._parsed:
            self._parsed = True
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                self._json = None
        return self._json

    @property
    def error(self):
        document = self.json
        if isinstance(document, dict) and isinstance(document.get("error"), dict):
            return document["error"]
        return {}

    @property
    def code(self):
        return self.error.get("code")

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    def __repr__(self):
        return "HTTP %s %s" % (self.status, short(self.body.decode("utf-8", "replace"), 500))


class Client:
    """http.client with one keep-alive connection."""

    def __init__(self, port, api_key=None, client_timeout=30.0):
        self.port = port
        self.api_key = api_key
        self.connection = http.client.HTTPConnection("127.0.0.1", port,
                                                     timeout=timeout(client_timeout))
        _context()["clients"].append(self)

    def request(self, method, path, body=None, headers=None, raw=None):
        all_headers = {}
        if self.api_key is not None:
            all_headers["Authorization"] = "Bearer " + self.api_key
        data = None
        if raw is not None:
            data = raw.encode("utf-8") if isinstance(raw, str) else raw
        elif body is not None:
            data = json.dumps(body).encode("utf-8")
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        all_headers = {k: v for k, v in all_headers.items() if v is not None}
        self.connection.request(method, path, body=data, headers=all_headers)
        response = self.connection.getresponse()
        payload = response.read()
        headers_out = {k.lower(): v for k, v in response.getheaders()}
        record_exchange(method, path, response.status, headers_out, payload, request_body=data)
        return Response(response.status, headers_out, payload)

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path, body=None, **kwargs):
        return self.request("POST", path, body=body, **kwargs)

    def close(self):
        self.connection.close()

    def local_port(self):
        sock = self.connection.sock
        return sock.getsockname()[1] if sock is not None else None


def request_bytes(method, path, body=None, headers=None, host="127.0.0.1"):
    """One HTTP/1.1 request as bytes. body: dict/list (JSON), str or bytes."""
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % host]
    names = {k.lower() for k in (headers or {})}
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        lines.append("Content-Length: %d" % len(body))
        if "content-type" not in names:
            lines.append("Content-Type: application/json")
    elif body is None and method in ("POST", "PUT") and "content-length" not in names \
            and "transfer-encoding" not in names:
        lines.append("Content-Length: 0")
    for name, value in (headers or {}).items():
        lines.append("%s: %s" % (name, value))
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


_PLAIN_REQUEST_LINE = re.compile(rb"^([A-Z]{1,16}) (/[!-~]*) HTTP/1\.1\r\n")
_PLAIN_HEADER = re.compile(rb"^[A-Za-z0-9-]{1,64}: [ -~]*$")


def _plain_request(data):
    """(method, path, length in bytes, body) of the request data starts with; None when it is
    not whole yet; False when it is not a plain well-formed request (Content-Length bodies
    only)."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False if len(data) > 8192 else None
    line = _PLAIN_REQUEST_LINE.match(data)
    if line is None:
        return False
    length = None
    for header in data[line.end():end].split(b"\r\n"):
        if header == b"":
            continue
        if not _PLAIN_HEADER.match(header):
            return False
        name, _, value = header.partition(b":")
        name = name.lower()
        if name in (b"transfer-encoding", b"expect") or (name == b"content-length"
                                                          and length is not None):
            return False
        if name == b"content-length":
            if not value.strip().isdigit() or int(value) > (1 << 20):
                return False
            length = int(value)
    total = end + 4 + (length or 0)
    if len(data) < total:
        return None
    return line.group(1).decode(), line.group(2).decode(), total, data[end + 4:total]


class RawConnection:
    """A plain socket: write any bytes, parse responses one after another."""

    def __init__(self, port, client_timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout(client_timeout))
        self.buffer = b""
        self.eof = False
        # For the contract recording: the requests sent, not yet answered (method, path,
        # body), and the bytes of one not yet whole. Recording stops for good on a connection
        # as soon as what was sent is not plainly well-formed (malformed input is what raw
        # connections are for, and its answers cannot be paired with a request).
        self.unanswered = []
        self.unsent_request = b""
        self.recording = RECORD_PATH is not None
        _context()["clients"].append(self)

    def send(self, data):
        if self.recording:
            self._note_requests(data)
        self.sock.sendall(data)

    def _note_requests(self, data):
        self.unsent_request += data
        while self.recording and self.unsent_request:
            request = _plain_request(self.unsent_request)
            if request is None:                 # not whole yet
                return
            if request is False:
                self.recording = False
                return
            method, path, length, body = request
            self.unanswered.append((method, path, body))
            self.unsent_request = self.unsent_request[length:]

    def _record_response(self, response, head_only=False):
        if not self.recording or response.status < 200:
            return
        if not self.unanswered:
            self.recording = False
            return
        method, path, body = self.unanswered.pop(0)
        # A head read alone is a HEAD's whole answer, or a stream's first part.
        streamed = head_only and method != "HEAD"
        record_exchange(method, path, response.status, dict(response.headers),
                        None if streamed else response.body, streamed=streamed,
                        request_body=body)

    def read_head(self):
        """(status, lower-cased headers) of the next answer, reading no body: a HEAD's answer,
        or the head of a stream. Raises EOFError when the connection closes first."""
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        lines = head.split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self._record_response(Response(status, headers, b""), head_only=True)
        return status, headers

    def _fill(self):
        if self.eof:
            raise EOFError("connection closed by the server")
        chunk = self.sock.recv(65536)
        if not chunk:
            self.eof = True
            raise EOFError("connection closed by the server")
        self.buffer += chunk

    def _read_until(self, marker):
        while marker not in self.buffer:
            self._fill()
        index = self.buffer.index(marker)
        data = self.buffer[:index]
        self.buffer = self.buffer[index + len(marker):]
        return data

    def _read_exact(self, count):
        while len(self.buffer) < count:
            self._fill()
        data = self.buffer[:count]
        self.buffer = self.buffer[count:]
        return data

    def read_response(self):
        try:
            head = self._read_until(b"\r\n\r\n").decode("latin-1")
        except EOFError:
            fail("connection closed before a response (%d bytes pending: %r)" % (
                len(self.buffer), self.buffer[:200]))
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        check(len(parts) >= 2 and parts[0].startswith("HTTP/1."), "bad status line %r" % lines[0])
        status = int(parts[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size = int(self._read_until(b"\r\n").split(b";")[0], 16)
                if size == 0:
                    self._read_until(b"\r\n")
                    break
                body += self._read_exact(size)
                self._read_exact(2)
        elif "content-length" in headers:
            body = self._read_exact(int(headers["content-length"]))
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
        else:
            try:
                while True:
                    self._fill()
            except EOFError:
                pass
            body, self.buffer = self.buffer, b""
        response = Response(status, headers, body)
        self._record_response(response)
        return response

    def read_responses(self, count):
        return [self.read_response() for _ in range(count)]

    def closed_by_peer(self, wait_s=3.0):
        """True when the server closes the connection within wait_s (after any bytes left)."""
        if self.eof:
            return True
        deadline = time.monotonic() + timeout(wait_s)
        self.sock.settimeout(0.2)
        try:
            while time.monotonic() < deadline:
                try:
                    chunk = self.sock.recv(65536)
                except socket.timeout:
                    continue
                except (ConnectionResetError, BrokenPipeError):
                    return True
                if not chunk:
                    self.eof = True
                    return True
                self.buffer += chunk
            return False
        finally:
            self.sock.settimeout(timeout(10.0))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# Assertions on answers


def expect(response, status, code=None, field=None, what=""):
    """Checks the status and, for errors, the error code and field. Returns the JSON."""
    prefix = (what + ": ") if what else ""
    if response.status != status:
        fail("%sexpected %d%s, got %r" % (prefix, status, (" " + code) if code else "", response))
    content_type = response.header("content-type", "")
    check(content_type.split(";")[0].strip().lower() == "application/json",
          "%sContent-Type %r, expected application/json" % (prefix, content_type))
    document = response.json
    check(document is not None, "%sbody is not JSON: %r" % (prefix, response.body[:300]))
    if code is not None:
        error = response.error
        check(error.get("code") == code, "%sexpected error code %s, got %r" % (
            prefix, code, response))
        check(isinstance(error.get("message"), str) and error.get("message"),
              "%serror without a message: %r" % (prefix, response))
    if field is not None:
        actual = response.error.get("field")
        allowed = field if isinstance(field, (set, tuple, list)) else {field}
        check(actual in allowed, "%sexpected error field %s, got %r in %r" % (
            prefix, " or ".join(sorted(allowed)), actual, response))
    return document


def parse_time(text, what="time"):
    """RFC 3339 UTC with milliseconds -> integer milliseconds since the epoch."""
    check(isinstance(text, str) and TIME_RE.match(text),
          "%s %r is not RFC 3339 UTC with milliseconds" % (what, text))
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(round(moment.timestamp() * 1000))


def now_ms():
    return int(time.time() * 1000)


def uid(prefix="e"):
    return "%s_%s" % (prefix, uuid.uuid4().hex[:10])


def user(prefix="u"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


# ---------------------------------------------------------------------------------------------
# API helpers


def standard_sections():
    return [
        {"id": "FLOOR", "price": 45000,
         "rows": [{"id": "A", "seats": 20}, {"id": "B", "seats": 20}]},
        {"id": "BALC", "price": 12000, "rows": [{"id": "A", "seats": 10}]},
    ]


def create_event(client, event_id=None, sections="standard", pools=None, expect_status=201,
                 **fields):
    """Creates an event (standard layout unless told) and returns the summary."""
    body = {"id": event_id or uid("ev")}
    if sections == "standard":
        sections = standard_sections()
        if pools is None:
            pools = [{"id": "GA", "capacity": 5, "price": 9900}]
    if sections is not None:
        body["sections"] = sections
    if pools is not None:
        body["pools"] = pools
    body.update(fields)
    response = client.post("/v1/events", body)
    return expect(response, expect_status, what="create event %s" % body["id"])


def hold_body(user_id, seats=None, pools=None, ttl_s=None, **extra):
    body = {"user_id": user_id}
    if seats is not None:
        body["seats"] = seats
    if pools is not None:
        body["pools"] = pools
    if ttl_s is not None:
        body["ttl_s"] = ttl_s
    body.update(extra)
    return body


def post_hold(client, event_id, user_id, seats=None, pools=None, ttl_s=None, headers=None,
              **extra):
    return client.post("/v1/events/%s/holds" % event_id,
                       hold_body(user_id, seats, pools, ttl_s, **extra), headers=headers)


def hold(client, event_id, user_id, seats=None, pools=None, ttl_s=None, **extra):
    """A hold that must succeed: returns the hold object."""
    return expect(post_hold(client, event_id, user_id, seats, pools, ttl_s, **extra), 201,
                  what="hold %s %s" % (seats, pools))


def commit(client, hold_id, user_id, payment_ref="pi_test"):
    return expect(client.post("/v1/holds/%s/commit" % hold_id,
                              {"user_id": user_id, "payment_ref": payment_ref}), 200,
                  what="commit %s" % hold_id)


def release(client, hold_id, user_id):
    return expect(client.post("/v1/holds/%s/release" % hold_id, {"user_id": user_id}), 200,
                  what="release %s" % hold_id)


def get_event(client, event_id):
    return expect(client.get("/v1/events/%s" % event_id), 200, what="GET event %s" % event_id)


def get_hold(client, hold_id):
    return expect(client.get("/v1/holds/%s" % hold_id), 200, what="GET hold %s" % hold_id)


def get_seat(client, event_id, seat_id):
    return expect(client.get("/v1/events/%s/seats/%s" % (event_id, seat_id)), 200,
                  what="GET seat %s" % seat_id)


def all_seats(client, event_id, query=""):
    """Every seat of the listing, following `next`."""
    seats = []
    after = None
    for _ in range(100000):
        path = "/v1/events/%s/seats?limit=10000%s" % (event_id, query)
        if after is not None:
            path += "&after=" + after
        page = expect(client.get(path), 200, what="GET %s" % path)
        seats.extend(page["seats"])
        after = page.get("next")
        if after is None:
            return seats
    fail("seat listing never ends")


def pool_of(summary, pool_id):
    for pool in summary.get("pools") or []:
        if pool.get("id") == pool_id:
            return pool
    fail("pool %s not in %r" % (pool_id, summary.get("pools")))


def section_of(summary, section_id):
    for section in summary.get("sections") or []:
        if section.get("id") == section_id:
            return section
    fail("section %s not in %r" % (section_id, summary.get("sections")))


def check_counts(client, event_id, available, held, sold, what=""):
    summary = get_event(client, event_id)
    check_equal(summary.get("counts"), {"available": available, "held": held, "sold": sold},
                "%scounts of %s" % ((what + ": ") if what else "", event_id))
    return summary


def check_pool(client, event_id, pool_id, available, held, sold, what=""):
    summary = get_event(client, event_id)
    pool = pool_of(summary, pool_id)
    check_equal({k: pool.get(k) for k in ("available", "held", "sold")},
                {"available": available, "held": held, "sold": sold},
                "%spool %s of %s" % ((what + ": ") if what else "", pool_id, event_id))
    return pool


def seat_state(client, event_id, seat_id):
    seat = get_seat(client, event_id, seat_id)
    return seat.get("status"), seat.get("version")


def run_threads(count, target, limit_s=60.0):
    """Runs target(i) in count threads started together; returns results in index order.
    An exception in a thread becomes its result."""
    results = [None] * count
    barrier = threading.Barrier(count)
    parent = _context()

    def body(index):
        _local.ctx = parent
        try:
            results[index] = target(index, barrier)
        except BaseException as error:  # noqa: B902 (reported to the test)
            results[index] = error
            try:
                barrier.abort()
            except Exception:
                pass

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout(limit_s)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
        check(not thread.is_alive(), "thread still running after %.0f s" % timeout(limit_s))
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result,
                                                                 threading.BrokenBarrierError):
            raise result
    return results


def format_exception(error):
    """The reason line and the test's own frames."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if "/tests/blackbox/" in frame.filename.replace(os.sep, "/")]
    where = " <- ".join("%s:%d" % (os.path.basename(f.filename), f.lineno)
                        for f in reversed(frames[-4:]))
    if isinstance(error, TestFailure):
        reason = str(error)
    else:
        reason = "%s: %s" % (type(error).__name__, error)
    return reason.replace("\n", " | "), where


class Soft:
    """Collects several independent checks of one test, so one report lists every miss:
    soft(function, *args) runs a check; soft.done() fails with all the misses."""

    def __init__(self):
        self.misses = []

    def __call__(self, function, *args, **kwargs):
        try:
            return function(*args, **kwargs)
        except TestFailure as error:
            self.misses.append(str(error))
            return None

    def done(self):
        if self.misses:
            fail("%d of the checks failed: %s" % (len(self.misses), " || ".join(self.misses)))
