#!/usr/bin/env python3
"""Black-box tests of the HTTP server (src/net/http.c and the files it is split into) over raw
sockets, through tests/net/echo_server.c.

Build the echo server (sanitized) from the repository root; the test runs this itself when
the binary is missing or older than its sources, or always with --build:

  mkdir -p build/net && gcc -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
      -fsanitize=address,undefined -fno-sanitize-recover=all -Isrc -I/usr/share/include/llhttp \
      tests/net/echo_server.c src/net/connection.c src/net/http.c src/net/http_parse.c \
      src/net/response.c src/lib/buffer.c src/lib/json.c \
      /usr/share/llhttp/llhttp.c /usr/share/llhttp/api.c /usr/share/llhttp/http.c \
      $(pkg-config --cflags --libs libuv) -o build/net/echo_server

Run: python3 tests/net/test_http.py [--binary PATH] [--build] [--valgrind]
With --valgrind the server runs under valgrind (build it without -fsanitize for that).
Exits non-zero on any failure; the last line is "N passed, N failed".
"""
import argparse
import email.utils
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The HTTP server is every file of src/net but the pure ones and the assets (as the Makefile's
# NET_HTTP_SOURCES), so a new file of the server joins by itself.
NET_HTTP = sorted("src/net/" + name for name in os.listdir(os.path.join(ROOT, "src/net"))
                  if name.endswith(".c") and name not in ("flat_json.c", "assets.c"))
SOURCES = ["tests/net/echo_server.c"] + NET_HTTP + ["src/lib/buffer.c", "src/lib/json.c"]
LLHTTP = ["/usr/share/llhttp/llhttp.c", "/usr/share/llhttp/api.c", "/usr/share/llhttp/http.c"]
HOST = "127.0.0.1"
HEAD_SIZE_MAX = 16 * 1024
BODY_SIZE_MAX = 1024 * 1024
PIPELINE_MAX = 128
STREAM_BUFFER_MAX = 1024 * 1024
HELLO = b"event: hello\ndata: {}\n\n"
WAIT = 5.0      # seconds to wait for something that must arrive
QUIET = 0.3     # seconds of silence that show something is held back
# IMF-fixdate (RFC 9110 section 5.6.7): Sun, 06 Nov 1994 08:49:37 GMT
DATE_FORM = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-3][0-9] "
                       r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
                       r"[0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT$")


def build(binary, sanitize=True):
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if sanitize else []
    libuv = subprocess.run(["pkg-config", "--cflags", "--libs", "libuv"], check=True,
                           capture_output=True, text=True).stdout.split()
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    command = (["gcc", "-std=c11", "-D_GNU_SOURCE", "-g", "-O1", "-fno-omit-frame-pointer"]
               + flags + ["-Isrc", "-I/usr/share/include/llhttp"] + SOURCES + LLHTTP
               + libuv + ["-o", binary])
    subprocess.run(command, check=True, cwd=ROOT)


def stale(binary):
    if not os.path.exists(binary):
        return True
    built = os.path.getmtime(binary)
    headers = ["src/net/http.h", "src/net/internal.h"]
    return any(os.path.getmtime(os.path.join(ROOT, s)) > built for s in SOURCES + headers)


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, valgrind):
        self.port = free_port()
        self.binary = binary
        self.valgrind = valgrind
        command = [binary, HOST, str(self.port)]
        if valgrind:
            command = ["valgrind", "--error-exitcode=99", "--leak-check=full",
                       "--errors-for-leak-kinds=definite,indirect", "-q"] + command
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        line = self.process.stdout.readline()
        if line.strip() != "listening":
            raise RuntimeError("echo server did not start: " + self.process.stderr.read())

    def stop(self):
        """SIGTERM; returns (exit code, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, error = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, error = self.process.communicate()
        return self.process.returncode, error


class Client:
    """One connection; reads whole responses, honouring Content-Length and HEAD."""

    def __init__(self, port, receive_buffer=None):
        if receive_buffer is None:
            self.socket = socket.create_connection((HOST, port), timeout=WAIT)
        else:  # set before connecting, so the window the server sees is small from the start
            self.socket = socket.socket()
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            self.socket.settimeout(WAIT)
            self.socket.connect((HOST, port))
        self.buffer = b""
        self.eof = False

    def send(self, data):
        self.socket.sendall(data)

    def close(self):
        self.socket.close()

    def _fill(self, timeout):
        self.socket.settimeout(timeout)
        try:
            data = self.socket.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def response(self, head_only=False, timeout=WAIT):
        """(status, headers with lower-case names, body bytes), or None if none arrives."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof or not self._fill(remaining):
                return None
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        assert lines[0].startswith("HTTP/1.1 "), lines[0]
        headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        length = 0 if head_only or status == 100 else int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._fill(remaining):
                raise AssertionError("body cut short: %d of %d bytes" % (len(self.buffer), length))
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def json(self, **options):
        answer = self.response(**options)
        assert answer is not None, "no response"
        status, headers, body = answer
        return status, headers, json.loads(body) if body else None

    def closed(self, timeout=WAIT):
        """True when the server closed the connection (and sent nothing more)."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._fill(remaining)
        return self.buffer == b""

    def data(self, expected, timeout=WAIT):
        """Reads exactly the bytes expected next (stream data after a response head)."""
        deadline = time.monotonic() + timeout
        while len(self.buffer) < len(expected):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof or not self._fill(remaining):
                break
        got, self.buffer = self.buffer[:len(expected)], self.buffer[len(expected):]
        assert got == expected, (got[:200], expected[:200])

    def silent(self, timeout=QUIET):
        """True when nothing arrives for a while."""
        if self.buffer:
            return False
        return not self._fill(timeout) and not self.eof


def get(path, extra=""):
    return ("GET %s HTTP/1.1\r\nHost: test\r\n%s\r\n" % (path, extra)).encode()


def expect_error(client, status, code):
    got_status, headers, body = client.json()
    assert got_status == status, (got_status, body)
    assert body["error"]["code"] == code, body
    assert headers.get("connection") == "close", headers
    assert client.closed(), "connection left open"
    return body


class Tests:
    def __init__(self, server):
        self.server = server
        self.sequence = 0

    def client(self):
        return Client(self.server.port)

    def next_sequence(self):
        self.sequence += 100
        return self.sequence

    def stats(self):
        client = self.client()
        client.send(get("/stats"))
        status, _, body = client.json()
        client.close()
        assert status == 200
        return body

    def settled_stats(self, key, expected):
        """Polls /stats until stats[key] == expected (the server works asynchronously)."""
        deadline = time.monotonic() + WAIT
        value = self.stats()[key]
        while value != expected and time.monotonic() < deadline:
            time.sleep(0.02)
            value = self.stats()[key]
        return value

    def streams(self):
        client = self.client()
        client.send(get("/streams"))
        status, _, body = client.json()
        client.close()
        assert status == 200
        return body["streams"]

    def settled_streams(self, expected):
        """Polls /streams until it is expected (closed callbacks run asynchronously)."""
        deadline = time.monotonic() + WAIT
        value = self.streams()
        while value != expected and time.monotonic() < deadline:
            time.sleep(0.02)
            value = self.streams()
        return value

    def publish(self, data, query=""):
        client = self.client()
        client.send(b"POST /publish%s HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n%s"
                    % (query.encode(), len(data), data))
        status, _, body = client.json()
        client.close()
        assert status == 200, body
        return body

    def stream(self, client=None):
        """Opens a stream and checks its head and first event."""
        client = client or self.client()
        client.send(get("/stream"))
        status, headers, _ = client.response()
        assert status == 200
        client.data(HELLO)
        return client

    def release(self, sequence):
        client = self.client()
        client.send(b"POST /release?sequence=%d HTTP/1.1\r\n"
                    b"Host: test\r\nContent-Length: 0\r\n\r\n" % sequence)
        status, _, body = client.json()
        client.close()
        assert status == 200 and body == {"released": sequence}, body

    # ---- keep-alive and pipelining ----

    def test_keep_alive_two_requests(self):
        client = self.client()
        for path in ("/one?a=1&b=2", "/two"):
            client.send(get(path, "X-Custom:   spaced value  \r\n"))
            status, headers, body = client.json()
            assert status == 200
            assert headers["content-type"] == "application/json"
            assert "connection" not in headers
            assert body["method"] == "GET"
            assert body["path"] == path.split("?")[0]
            assert body["query"] == (path.split("?") + [""])[1]
            assert body["headers"]["X-Custom"] == "spaced value"
            assert body["host"] == "test"  # looked up as "HOST": case-insensitive
        assert client.silent(), "connection closed after keep-alive request"
        client.close()

    def test_pipelining_in_order(self):
        client = self.client()
        client.send(get("/p1") + get("/p2") + b"POST /p3 HTTP/1.1\r\n"
                                              b"Host: test\r\nContent-Length: 5\r\n\r\nhello")
        paths = []
        for _ in range(3):
            status, _, body = client.json()
            assert status == 200
            paths.append(body["path"])
        assert paths == ["/p1", "/p2", "/p3"], paths
        client.close()

    def test_request_split_in_single_bytes(self):
        client = self.client()
        request = (b"POST /split?q=1 HTTP/1.1\r\nHost: test\r\nX-Long-Name: some value\r\n"
                   b"Content-Length: 4\r\n\r\nbody")
        for i in range(len(request)):
            client.send(request[i:i + 1])
            time.sleep(0.001)
        status, _, body = client.json()
        assert status == 200
        assert (body["path"], body["query"], body["body"]) == ("/split", "q=1", "body")
        assert body["headers"]["X-Long-Name"] == "some value"
        client.close()

    def test_head_has_no_body(self):
        client = self.client()
        client.send(b"HEAD /h HTTP/1.1\r\nHost: test\r\n\r\n" + get("/after"))
        status, headers, body = client.response(head_only=True)
        assert status == 200 and body == b""
        assert int(headers["content-length"]) > 0
        status, _, answer = client.json()
        assert answer["path"] == "/after"
        client.close()

    def test_extra_headers_and_head(self):
        client = self.client()
        client.send(get("/x?headers=1") + b"HEAD /y?headers=1 HTTP/1.1\r\n"
                                          b"Host: test\r\n\r\n" + get("/after"))
        status, headers, body = client.json()
        assert status == 200 and body["path"] == "/x", (status, body)
        assert (headers.get("x-every"), headers.get("x-answer")) == ("kept", "this"), headers
        status, headers, body = client.response(head_only=True)
        assert status == 200 and body == b"", (status, body)
        assert (headers.get("x-every"), headers.get("x-answer")) == ("kept", "this"), headers
        assert int(headers["content-length"]) > 0, headers
        status, _, answer = client.json()
        assert answer["path"] == "/after"
        client.close()

    def test_204_has_no_content_headers(self):
        client = self.client()
        client.send(get("/x?status=204") + get("/after"))
        status, headers, body = client.response()
        assert status == 204 and body == b"", (status, body)
        assert "content-type" not in headers and "content-length" not in headers, headers
        status, _, answer = client.json()
        assert answer["path"] == "/after"
        client.close()

    def test_expect_continue(self):
        client = self.client()
        client.send(b"POST /upload HTTP/1.1\r\n"
                    b"Host: test\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        status, _, body = client.response()
        assert status == 100 and body == b""
        client.send(b"abc")
        status, _, answer = client.json()
        assert status == 200 and answer["body"] == "abc"
        client.close()

    def test_error_helper_and_status(self):
        client = self.client()
        client.send(get("/error") + get("/s?status=404"))
        status, _, body = client.json()
        assert status == 422
        assert body == {"error": {"code": "invalid_request", "message": "a field is wrong",
                                  "field": "user_id"}}, body
        status, _, body = client.json()
        assert status == 404 and body["path"] == "/s"
        client.close()

    # ---- HTTP/1.1 conventions (RFC 9110, RFC 9112) ----

    def test_date_on_every_answer(self):
        """Every answer carries Date (RFC 9110 section 6.6.1) in IMF-fixdate, the server's
        clock: a 200, a HEAD, a 204, a handler's error, a stream's head and the server's own
        400, each within a couple of seconds of ours."""
        client = self.client()
        client.send(get("/x") + b"HEAD /y HTTP/1.1\r\nHost: test\r\n\r\n"
                    + get("/z?status=204") + get("/error"))
        answers = [client.response(), client.response(head_only=True), client.response(),
                   client.response()]
        stream = self.client()
        stream.send(get("/stream"))
        answers.append(stream.response(head_only=True))
        broken = self.client()
        broken.send(b"GET / HTTP/1.1\r\nHost: test\r\nContent-Length: x\r\n\r\n")
        answers.append(broken.response())
        for answer in answers:
            assert answer is not None, answers
            status, headers, _ = answer
            date = headers.get("date")
            assert date is not None, (status, headers)
            assert DATE_FORM.match(date), date
            skew = email.utils.parsedate_to_datetime(date).timestamp() - time.time()
            assert -3 < skew < 2, (date, skew)
        assert [answer[0] for answer in answers] == [200, 200, 204, 422, 200, 400], answers
        for connection in (client, stream, broken):
            connection.close()

    def test_date_follows_the_clock(self):
        """The Date text is made again as seconds pass, not kept from the first answer."""
        client = self.client()
        client.send(get("/first"))
        first = client.response()[1]["date"]
        time.sleep(1.1)
        client.send(get("/second"))
        second = client.response()[1]["date"]
        seconds = [email.utils.parsedate_to_datetime(date) for date in (first, second)]
        assert seconds[1] > seconds[0], (first, second)
        client.close()

    def test_host_required_once(self):
        """RFC 9112 section 3.2: an HTTP/1.1 request without Host, or any request with two,
        is answered 400 and the connection closed; HTTP/1.0 needs none (test_http10_closes)."""
        for request in (b"GET /none HTTP/1.1\r\n\r\n",
                        b"GET /two HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
                        b"GET /two HTTP/1.0\r\nhost: a\r\nHOST: b\r\n\r\n",
                        b"POST /none HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"):
            client = self.client()
            client.send(request)
            body = expect_error(client, 400, "bad_request")
            assert "Host" in body["error"]["message"], body
        # Good requests before it on the same connection are answered first.
        client = self.client()
        client.send(get("/good") + b"GET /bad HTTP/1.1\r\nX: y\r\n\r\n" + get("/never"))
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/good", body
        expect_error(client, 400, "bad_request")
        # An empty Host is allowed (RFC 9112: a target without an authority).
        client = self.client()
        client.send(b"GET /empty HTTP/1.1\r\nHost:\r\n\r\n")
        status, _, body = client.json()
        assert status == 200 and body["host"] == "", body
        client.close()

    def test_absolute_form(self):
        """RFC 9112 section 3.2.2: a target in absolute form is accepted; the handler sees its
        path and query, as in origin form."""
        cases = [
            ("http://test/v1/events", "/v1/events", ""),
            ("http://127.0.0.1:8080/a/b?x=1&y=2", "/a/b", "x=1&y=2"),
            ("HTTPS://example.com/secure/path", "/secure/path", ""),
            ("http://host", "/", ""),
            ("http://host?only=query", "/", "only=query"),
            ("http://[::1]:80/v6", "/v6", ""),
            ("/plain?q=1", "/plain", "q=1"),
        ]
        client = self.client()
        for target, _, _ in cases:
            client.send(("GET %s HTTP/1.1\r\nHost: test\r\n\r\n" % target).encode())
        for target, path, query in cases:
            status, _, body = client.json()
            assert status == 200, (target, status, body)
            assert (body["path"], body["query"]) == (path, query), (target, body)
        client.close()

    # ---- the durability gate ----

    def test_gate_holds_until_release(self):
        sequence = self.next_sequence()
        first = self.client()
        first.send(get("/gated?delay_sequence=%d" % sequence) + get("/behind"))
        assert first.silent(), "gated response sent before its sequence was durable"
        assert self.settled_stats("pending", 2) == 2
        self.release(sequence - 1)
        assert first.silent(), "released by a lower sequence"
        self.release(sequence)
        status, _, body = first.json()
        assert status == 200 and body["path"] == "/gated"
        status, _, body = first.json()
        assert status == 200 and body["path"] == "/behind"
        assert self.stats()["pending"] == 0
        first.close()

    def test_gate_on_several_connections(self):
        sequence = self.next_sequence()
        clients = [self.client() for _ in range(5)]
        for index, client in enumerate(clients):
            client.send(get("/c%d?delay_sequence=%d" % (index, sequence + index)))
        for client in clients:
            assert client.silent(0.05)
        self.release(sequence + 2)
        for index, client in enumerate(clients):
            if index <= 2:
                assert client.json()[2]["path"] == "/c%d" % index
            else:
                assert client.silent(0.1)
        self.release(sequence + 4)
        for client in clients[3:]:
            assert client.json()[0] == 200
        for client in clients:
            client.close()

    def test_release_from_the_gated_connection(self):
        """The handler releases while its own connection is being parsed and waits."""
        sequence = self.next_sequence()
        client = self.client()
        client.send(get("/first?delay_sequence=%d" % sequence)
                    + b"POST /release?sequence=%d HTTP/1.1\r\n"
                      b"Host: test\r\nContent-Length: 0\r\n\r\n" % sequence
                    + get("/third"))
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/first"
        status, _, body = client.json()
        assert status == 200 and body == {"released": sequence}
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/third"
        client.close()

    def test_fail_pending_answers_503(self):
        sequence = self.next_sequence()
        client = self.client()
        client.send(get("/ok?delay_sequence=%d" % (sequence - 50))
                    + get("/lost?delay_sequence=%d" % sequence) + get("/free"))
        assert client.silent()
        other = self.client()
        other.send(b"POST /fail?durable=%d HTTP/1.1\r\n"
                   b"Host: test\r\nContent-Length: 0\r\n\r\n" % (sequence - 50))
        assert other.json()[0] == 200
        other.close()
        # The first answer still waits for its own sequence, which the failure did not cover.
        assert client.silent()
        self.release(sequence - 50)
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/ok"
        status, _, body = client.json()
        assert status == 503, status
        assert body == {"error": {"code": "unavailable",
                                  "message": "the store failed; nothing was acknowledged"}}
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/free"
        assert client.silent(), "connection closed after a 503"
        client.close()

    def test_fail_pending_keeps_headers_of_every_answer(self):
        sequence = self.next_sequence()
        client = self.client()
        client.send(get("/lost?headers=1&delay_sequence=%d" % sequence))
        assert client.silent()
        other = self.client()
        other.send(b"POST /fail?durable=%d HTTP/1.1\r\n"
                   b"Host: test\r\nContent-Length: 0\r\n\r\n" % (sequence - 1))
        assert other.json()[0] == 200
        other.close()
        status, headers, body = client.json()
        assert status == 503 and body["error"]["code"] == "unavailable", (status, body)
        assert headers.get("x-every") == "kept", headers
        assert "x-answer" not in headers, headers
        client.close()

    def test_pipeline_limit_stops_reading(self):
        sequence = self.next_sequence()
        client = self.client()
        count = PIPELINE_MAX + 72
        client.send(b"".join(get("/r%d?delay_sequence=%d" % (i, sequence)) for i in range(count)))
        assert self.settled_stats("pending", PIPELINE_MAX) == PIPELINE_MAX
        time.sleep(QUIET)
        assert self.stats()["pending"] == PIPELINE_MAX, "pipeline limit not enforced"
        self.release(sequence)
        for i in range(count):
            status, _, body = client.json()
            assert status == 200 and body["path"] == "/r%d" % i, (i, body)
        assert self.stats()["pending"] == 0
        client.close()

    def test_output_limit_stops_reading(self):
        sequence = self.next_sequence()
        client = self.client()
        size = 1000 * 1000
        client.send(b"".join(get("/big%d?size=%d&delay_sequence=%d" % (i, size, sequence))
                             for i in range(8)))
        # 4 answers of 1 MB stay within 4 MiB; the fifth passes it and reading stops.
        assert self.settled_stats("pending", 5) == 5
        time.sleep(QUIET)
        assert self.stats()["pending"] == 5, "output limit not enforced"
        self.release(sequence)
        for i in range(8):
            status, _, body = client.json()
            assert status == 200 and body["path"] == "/big%d" % i
            assert len(json.dumps(body)) > 0
        client.close()

    # ---- limits ----

    def test_head_too_large(self):
        client = self.client()
        client.send(b"GET / HTTP/1.1\r\n"
                    b"Host: test\r\nX-Big: " + b"a" * (HEAD_SIZE_MAX + 100) + b"\r\n\r\n")
        expect_error(client, 431, "head_too_large")

    def test_head_just_under_limit(self):
        client = self.client()
        request = (b"GET / HTTP/1.1\r\nHost: test\r\nX-Big: " + b"a" * (HEAD_SIZE_MAX - 200)
                   + b"\r\n\r\n")
        assert len(request) < HEAD_SIZE_MAX
        client.send(request)
        status, _, body = client.json()
        assert status == 200 and len(body["headers"]["X-Big"]) == HEAD_SIZE_MAX - 200
        client.close()

    def test_too_many_headers(self):
        client = self.client()
        client.send(b"GET / HTTP/1.1\r\n"
                    b"Host: test\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(101))
                    + b"\r\n")
        expect_error(client, 431, "head_too_large")

    def test_content_length_too_large(self):
        client = self.client()
        client.send(b"POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 2000000\r\n\r\n")
        body = expect_error(client, 413, "body_too_large")
        assert body["error"]["message"]

    def test_body_at_limit(self):
        client = self.client()
        client.send(b"POST /max HTTP/1.1\r\n"
                    b"Host: test\r\nContent-Length: %d\r\n\r\n" % BODY_SIZE_MAX
                    + b"x" * BODY_SIZE_MAX)
        status, _, body = client.json()
        assert status == 200 and body["body_length"] == BODY_SIZE_MAX
        client.close()

    def test_chunked_too_large(self):
        client = self.client()
        client.send(b"POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b"z" * 65536)
        try:
            for _ in range(BODY_SIZE_MAX // 65536 + 2):
                client.send(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        expect_error(client, 413, "body_too_large")

    def test_chunked_small(self):
        client = self.client()
        client.send(b"POST /chunks HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n\r\n")
        status, _, body = client.json()
        assert status == 200 and body["body"] == "hello world", body
        client.close()

    # ---- malformed requests ----

    def test_content_length_with_chunked(self):
        client = self.client()
        client.send(b"POST / HTTP/1.1\r\n"
                    b"Host: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"0\r\n\r\n")
        body = expect_error(client, 400, "bad_request")
        assert "Content-Length" in body["error"]["message"], body

    def test_bare_cr_in_header(self):
        client = self.client()
        client.send(b"GET / HTTP/1.1\r\nHost: test\r\nX-Bad: a\rb\r\n\r\n")
        expect_error(client, 400, "bad_request")

    def test_http2_request_line(self):
        client = self.client()
        client.send(b"GET / HTTP/2.0\r\n\r\n")
        expect_error(client, 505, "http_version_not_supported")

    def test_http3_request_line(self):
        client = self.client()
        client.send(b"GET / HTTP/3.1\r\n\r\n")
        expect_error(client, 505, "http_version_not_supported")

    def test_garbage_request_line(self):
        client = self.client()
        client.send(b"\x16\x03\x01 garbage here\r\n\r\n")
        body = expect_error(client, 400, "bad_request")
        assert "HPE_" in body["error"]["message"], body

    def test_error_after_good_requests_keeps_order(self):
        sequence = self.next_sequence()
        client = self.client()
        client.send(get("/good?delay_sequence=%d" % sequence) + b"BAD REQUEST\r\n\r\n")
        assert client.silent()
        self.release(sequence)
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/good"
        expect_error(client, 400, "bad_request")

    # ---- closing ----

    def test_connection_close(self):
        client = self.client()
        client.send(get("/bye", "Connection: close\r\n") + get("/never"))
        status, headers, body = client.json()
        assert status == 200 and body["path"] == "/bye"
        assert headers["connection"] == "close"
        assert client.closed(), "second request answered after Connection: close"

    def test_handler_close(self):
        client = self.client()
        client.send(get("/bye?close=1"))
        status, headers, _ = client.json()
        assert status == 200 and headers["connection"] == "close"
        assert client.closed()

    def test_http10_closes(self):
        client = self.client()
        client.send(b"GET /old HTTP/1.0\r\n\r\n")
        status, headers, body = client.json()
        assert status == 200 and body["path"] == "/old"
        assert headers["connection"] == "close"
        assert client.closed()

    def test_http10_keep_alive(self):
        client = self.client()
        for _ in range(2):
            client.send(b"GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            status, headers, _ = client.json()
            assert status == 200 and headers["connection"] == "keep-alive"
        assert client.silent()
        client.close()

    def test_half_close_still_answered(self):
        sequence = self.next_sequence()
        client = self.client()
        client.send(get("/half?delay_sequence=%d" % sequence))
        client.socket.shutdown(socket.SHUT_WR)
        assert client.silent()
        self.release(sequence)
        status, _, body = client.json()
        assert status == 200 and body["path"] == "/half"
        assert client.closed()

    def test_peer_gone_during_write(self):
        for index in range(6):
            client = self.client()
            client.send(get("/huge?size=3000000") * 2)
            if index % 2:  # reset at once, or close and let the server's writes hit a dead peer
                client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            client.socket.recv(1000)
            client.close()
        assert self.server.process.poll() is None, "server died when a peer vanished"
        assert self.settled_stats("pending", 0) == 0

    def test_random_splits(self):
        """Mixed requests pipelined and cut at random points: every answer, in order."""
        seed = int(os.environ.get("HTTP_TEST_SEED", time.time_ns() % 1000000))
        print("       seed %d (HTTP_TEST_SEED=%d repeats it)" % (seed, seed))
        rng = random.Random(seed)
        for _ in range(20):
            requests, expected = [], []
            for index in range(rng.randint(1, 30)):
                body = bytes(rng.choice(b"abcxyz") for _ in range(rng.randint(0, 3000)))
                kind = rng.choice(["get", "length", "chunked"])
                if kind == "get":
                    requests.append(get("/g%d?i=%d" % (index, index)))
                    body = b""
                elif kind == "length":
                    requests.append(b"PUT /l%d HTTP/1.1\r\n"
                                    b"Host: test\r\nContent-Length: %d\r\n\r\n%s"
                                    % (index, len(body), body))
                else:
                    cut = rng.randint(0, len(body))
                    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part)
                                      for part in (body[:cut], body[cut:]) if part)
                    requests.append(b"POST /c%d HTTP/1.1\r\n"
                                    b"Host: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    b"%s0\r\n\r\n" % (index, chunks))
                expected.append((requests[-1].split(b" ")[1].split(b"?")[0].decode(), body))
            stream = b"".join(requests)
            client = self.client()
            position = 0
            while position < len(stream):
                step = rng.choice([1, 7, 100, 1000, 65536])
                client.send(stream[position:position + step])
                position += step
            for path, body in expected:
                status, _, answer = client.json()
                assert status == 200, (seed, status)
                assert (answer["path"], answer["body"].encode()) == (path, body), seed
            client.close()

    def test_random_garbage(self):
        """Random bytes never crash the server; each connection is answered 4xx/5xx or closed."""
        seed = int(os.environ.get("HTTP_TEST_SEED", time.time_ns() % 1000000))
        print("       seed %d (HTTP_TEST_SEED=%d repeats it)" % (seed, seed))
        rng = random.Random(seed)
        prefixes = [b"", b"GET / HTTP/1.1\r\nHost: test\r\n",
                    b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\n",
                    b"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"]
        for _ in range(100):
            client = self.client()
            noise = bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))
            try:
                client.send(rng.choice(prefixes) + noise + b"\r\n\r\n")
                answer = client.response(timeout=0.5)
            except (ConnectionResetError, BrokenPipeError):
                answer = None
            if answer is not None:
                assert answer[0] >= 200, (seed, answer[0])
            client.close()
        assert self.server.process.poll() is None, "server died (seed %d)" % seed
        assert self.settled_stats("pending", 0) == 0

    # ---- streams ----

    def test_stream_headers_and_first_event(self):
        assert self.settled_streams(0) == 0
        client = self.client()
        client.send(get("/stream"))
        status, headers, _ = client.response()
        assert status == 200
        assert headers["content-type"] == "text/event-stream", headers
        assert headers["cache-control"] == "no-cache", headers
        assert headers["x-accel-buffering"] == "no", headers
        assert "content-length" not in headers and "transfer-encoding" not in headers, headers
        client.data(HELLO)
        assert client.silent(), "stream closed or sent more than its first event"
        assert self.streams() == 1
        assert self.stats()["pending"] == 0, "an open stream counts as pending"
        client.close()
        assert self.settled_streams(0) == 0

    def test_stream_head_opens_no_stream(self):
        assert self.settled_streams(0) == 0
        client = self.client()
        client.send(b"HEAD /stream HTTP/1.1\r\nHost: test\r\n\r\n" + get("/after"))
        status, headers, body = client.response(head_only=True)
        assert status == 200 and body == b"", (status, body)
        assert headers["content-type"] == "text/event-stream", headers
        assert headers["cache-control"] == "no-cache", headers
        assert headers["x-accel-buffering"] == "no", headers
        assert "content-length" not in headers and "connection" not in headers, headers
        status, _, answer = client.json()
        assert status == 200 and answer["path"] == "/after", (status, answer)
        assert self.streams() == 0
        client.close()

    def test_stream_publish_reaches_two_streams_in_order(self):
        assert self.settled_streams(0) == 0
        first, second = self.stream(), self.stream()
        events = [b"event: n\ndata: %d\n\n" % i for i in range(20)]
        for event in events:
            assert self.publish(event) == {"sent": 2, "refused": 0}
        for client in (first, second):
            client.data(b"".join(events))
            assert client.silent()
            client.close()
        assert self.settled_streams(0) == 0

    def test_stream_data_waits_behind_gated_first_response(self):
        sequence = self.next_sequence()
        assert self.settled_streams(0) == 0
        client = self.client()
        client.send(get("/stream?delay_sequence=%d" % sequence))
        assert self.settled_streams(1) == 1
        assert self.publish(b"data: early\n\n") == {"sent": 1, "refused": 0}
        assert client.silent(), "stream data sent before its gated first response"
        assert self.stats()["pending"] == 1
        self.release(sequence)
        status, headers, _ = client.response()
        assert status == 200 and headers["content-type"] == "text/event-stream"
        client.data(HELLO + b"data: early\n\n")
        assert self.stats()["pending"] == 0
        client.close()
        assert self.settled_streams(0) == 0

    def test_stream_slow_reader_disconnected(self):
        assert self.settled_streams(0) == 0
        slow = self.stream(Client(self.server.port, receive_buffer=4096))
        fast = self.stream()
        chunk = b"data: " + b"x" * (64 * 1024 - 8) + b"\n\n"
        # 4 MiB is usually enough; more is published only if the kernels buffer unusually much.
        published = 0
        while published < 16 * 1024 * 1024:
            answer = self.publish(chunk)
            fast.data(chunk)  # a reader that keeps up gets everything, unslowed
            if answer["refused"]:
                break
            published += len(chunk)
        assert answer == {"sent": 1, "refused": 1}, "a reader that never reads was not cut off"
        assert published > STREAM_BUFFER_MAX, published
        assert self.settled_streams(1) == 1, "the slow stream's closed callback did not run"
        assert self.stats()["pending"] == 0
        assert self.publish(b"data: still\n\n") == {"sent": 1, "refused": 0}
        fast.data(b"data: still\n\n")
        # The slow reader gets what the kernels held, then the end: what was unsent is dropped.
        while not slow.eof:
            slow._fill(WAIT)
        assert published - len(slow.buffer) > STREAM_BUFFER_MAX - len(chunk), len(slow.buffer)
        fast.close()
        slow.close()
        assert self.settled_streams(0) == 0

    def test_stream_client_close_drops_count(self):
        assert self.settled_streams(0) == 0
        quiet, reset = self.stream(), self.stream()
        quiet.close()
        assert self.settled_streams(1) == 1, "closed callback did not run after the peer closed"
        reset.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        reset.close()
        assert self.settled_streams(0) == 0, "closed callback did not run after a reset"

    def test_stream_pipelined_request_not_answered(self):
        assert self.settled_streams(0) == 0
        client = self.client()
        client.send(get("/stream") + get("/after"))
        status, _, _ = client.response()
        assert status == 200
        client.data(HELLO)
        assert client.silent(), "a request pipelined after a stream was answered"
        client.send(get("/later"))  # read and dropped
        assert self.publish(b"data: 1\n\n") == {"sent": 1, "refused": 0}
        client.data(b"data: 1\n\n")
        assert client.silent()
        client.close()
        assert self.settled_streams(0) == 0

    def test_stream_close_flushes_then_closes(self):
        assert self.settled_streams(0) == 0
        client = self.stream()
        assert self.publish(b"data: last\n\n", "?end=1") == {"sent": 1, "refused": 0}
        client.data(b"data: last\n\n")
        assert client.closed(), "stream left open after hf_http_stream_close"
        client.close()
        assert self.settled_streams(0) == 0

    def test_stream_fail_pending_answers_503(self):
        sequence = self.next_sequence()
        assert self.settled_streams(0) == 0
        client = self.client()
        client.send(get("/stream?delay_sequence=%d" % sequence))
        assert self.settled_streams(1) == 1
        assert self.publish(b"data: lost\n\n") == {"sent": 1, "refused": 0}
        other = self.client()
        other.send(b"POST /fail?durable=%d HTTP/1.1\r\n"
                   b"Host: test\r\nContent-Length: 0\r\n\r\n" % (sequence - 1))
        assert other.json()[0] == 200
        other.close()
        expect_error(client, 503, "unavailable")
        client.close()  # else the server drains the closed connection for a while
        assert self.settled_streams(0) == 0

    def test_stream_sigterm_exits_promptly(self):
        server = Server(self.server.binary, self.server.valgrind)
        try:
            tests = Tests(server)
            clients = [tests.stream(), tests.stream()]
            gated = tests.client()
            gated.send(get("/stream?delay_sequence=5"))
            assert tests.settled_streams(3) == 3
            assert tests.publish(b"data: 1\n\n") == {"sent": 3, "refused": 0}
            clients[0].data(b"data: 1\n\n")
            started = time.monotonic()
            code, error = server.stop()
            elapsed = time.monotonic() - started
        finally:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait()
        assert code == 0 and "Sanitizer" not in error and "runtime error" not in error, error
        assert elapsed < (10 if server.valgrind else 2), elapsed
        assert clients[0].closed() and gated.closed()
        for client in clients + [gated]:
            client.close()

    def test_connections_counted(self):
        before = self.stats()["connections"]
        clients = [self.client() for _ in range(10)]
        for client in clients:
            client.send(get("/x"))
            client.json()
        assert self.stats()["connections"] == before + 10
        for client in clients:
            client.close()
        assert self.settled_stats("connections", before) == before

    def test_port_in_use(self):
        process = subprocess.run([self.server.binary, HOST, str(self.server.port)],
                                 capture_output=True, text=True, timeout=30)
        assert process.returncode == 1, process.returncode
        assert "cannot listen on 127.0.0.1 port %d" % self.server.port in process.stderr
        assert "Sanitizer" not in process.stderr, process.stderr

    def test_ipv6_literal(self):
        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", 0))
                port = probe.getsockname()[1]
        except OSError:
            print("       (no IPv6 loopback: skipped)")
            return
        process = subprocess.Popen([self.server.binary, "::1", str(port)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline().strip() == "listening"
            client = Client.__new__(Client)
            client.socket = socket.create_connection(("::1", port), timeout=WAIT)
            client.buffer, client.eof = b"", False
            client.send(get("/six"))
            status, _, body = client.json()
            assert status == 200 and body["path"] == "/six"
            client.close()
        finally:
            process.send_signal(signal.SIGTERM)
            _, error = process.communicate(timeout=30)
        assert process.returncode == 0 and "Sanitizer" not in error, error

    def test_stop_accepting(self):
        """Runs last: the server stops listening."""
        sequence = self.next_sequence()
        idle = self.client()
        idle.send(get("/idle"))
        assert idle.json()[0] == 200
        busy = self.client()
        busy.send(get("/busy?delay_sequence=%d" % sequence))
        assert busy.silent()
        stream = self.stream()
        assert self.publish(b"data: bye\n\n") == {"sent": 1, "refused": 0}
        stopper = self.client()
        stopper.send(b"POST /stop HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n")
        status, _, body = stopper.json()
        assert status == 200 and body == {"stopped": 1}
        assert stopper.closed(), "the stopping connection stayed open"
        assert idle.closed(), "idle connection not closed by stop_accepting"
        assert busy.silent(), "busy connection closed before its answer"
        stream.data(b"data: bye\n\n")
        assert stream.closed(), "stream not ended by stop_accepting"
        stream.close()
        try:
            late = Client(self.server.port)
            late.send(get("/late"))
            assert late.response(timeout=1) is None
        except (ConnectionRefusedError, ConnectionResetError):
            pass
        busy.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/net/echo_server"))
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--valgrind", action="store_true")
    parser.add_argument("only", nargs="*", help="names of tests to run")
    arguments = parser.parse_args()
    if arguments.build or stale(arguments.binary):
        build(arguments.binary, sanitize=not arguments.valgrind)

    server = Server(arguments.binary, arguments.valgrind)
    tests = Tests(server)
    names = [name for name in dir(Tests) if name.startswith("test_") and name != "test_stop_accepting"]
    names.sort(key=lambda name: getattr(Tests, name).__code__.co_firstlineno)
    names.append("test_stop_accepting")
    if arguments.only:
        names = [name for name in names if any(o in name for o in arguments.only)]
    passed = failed = 0
    for name in names:
        try:
            getattr(tests, name)()
            passed += 1
            print("ok     " + name)
        except Exception:
            failed += 1
            print("FAILED " + name)
            traceback.print_exc()
    code, error = server.stop()
    if code != 0 or "Sanitizer" in error or "runtime error" in error:
        failed += 1
        print("FAILED server exit (code %s)\n%s" % (code, error))
    else:
        passed += 1
        print("ok     server exited cleanly")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
