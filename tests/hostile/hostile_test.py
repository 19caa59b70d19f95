#!/usr/bin/env python3
"""Hostile input, black-box: the real binary against malformed and abusive HTTP clients.

    python3 tests/hostile/hostile_test.py --binary build/holdfast [--quick] [-k NAME]

Every test checks that the server stays up and keeps answering others. Malformed requests must
get a 4xx (505 for a bad version) and a close, or a plain close when nothing can be answered;
never a 5xx of another kind, never a hang. Slow clients (slowloris), the connection cap,
unread pipelines and large bodies must leave the server's memory bounded: RSS is measured.
--quick uses fewer slow clients and skips the 10,000-connection cap (for make test).
One line per test, then `N passed, N failed`."""

import argparse
import json
import os
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hflib  # noqa: E402
from hflib import Failure, check  # noqa: E402

ARGS = None
SERVER = None


def rss_checked():
    """RSS bounds are checked on the release build only: a sanitizer keeps freed memory in
    quarantine, so its RSS says nothing about leaks or bounds (it is still printed)."""
    name = os.path.basename(ARGS.binary)
    return "asan" not in ARGS.binary and "tsan" not in ARGS.binary and "fuzz" not in name


def healthy(limit_s=2.0):
    """The server still answers a normal client promptly."""
    if not rss_checked():
        limit_s *= 3   # sanitized builds run slower
    start = time.monotonic()
    status, answer = hflib.request(SERVER.port, "GET", "/v1/events/h", timeout=limit_s + 5)
    took = time.monotonic() - start
    check(status == 200, "a normal request answered %d during the test" % status)
    check(took < limit_s, "a normal request took %.2fs during the test" % took)
    check(SERVER.running(), "the server died")


def expect(data, allowed, what, answered=True):
    """Sends raw bytes, half-closes, and checks the statuses of what comes back."""
    received, closed = hflib.raw_exchange(SERVER.port, data, timeout=5)
    found = hflib.statuses(received)
    check(closed, "%s: the server did not close the connection" % what)
    if answered:
        check(found, "%s: no answer (got %r)" % (what, received[:200]))
    for status in found:
        check(status in allowed or (200 <= status < 300 and 200 in allowed),
              "%s: answered %d, expected one of %s (%r)" % (what, status, sorted(allowed),
                                                          received[:300]))
        check(status < 500 or status == 505, "%s: a 5xx (%d)" % (what, status))
    return found


def json_request(method, path, body_bytes, extra_headers=b""):
    return (b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%s\r\n" % (method, path, len(body_bytes), extra_headers)
            + body_bytes)


BAD = {400, 404, 405, 411, 413, 414, 431, 501, 505}


def test_malformed_request_lines():
    cases = [
        b"GET\r\n\r\n", b"GET /\r\n\r\n", b"GET / HTTP/1.1 extra\r\n\r\n",
        b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00\x01\x02\x03\r\n\r\n", b"GET / HTTP/3.0\r\n\r\n",
        b"GET / HTTP/1.1\rHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost x\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n: empty name\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX\x00: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", b"GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n\x80\x81: y\r\n\r\n", b" GET / HTTP/1.1\r\nHost: x\r\n\r\n",
b"GET / HTTP/01.1\r\n\r\n", b"GET / HTTP/1.10\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"GET / HTTP/0.9\r\n\r\n", b"\r\n\r\n\r\n",
        b"GET " + b"/" * 17000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 200 + b"\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"v" * 17000 + b"\r\n\r\n",
    ]
    for data in cases:
        expect(data, BAD, repr(data[:40]), answered=False)
    # Regression (found by fuzz_http): llhttp let a header line without a name (": x") through
    # to the handlers; it is malformed (RFC 9110 section 5.1) and answered 400.
    found = expect(b"GET /healthz HTTP/1.1\r\nHost: x\r\n: no name\r\n\r\n", {400}, "header without a name")
    check(found == [400], "a header without a name answered %s" % found)
    # Two spaces in the request line: llhttp tolerates them; the target is still unambiguous.
    expect(b"GET  /healthz HTTP/1.1\r\nHost: x\r\n\r\n", {200, 400}, "two spaces")
    # Obsolete line folding: llhttp replaces it with a space, which RFC 9112 section 5.2 allows.
    expect(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n", {200}, "obs-fold")
    # RFC 9112 section 3.2: an HTTP/1.1 request without Host, or any with two, is 400.
    for data in (b"GET /healthz HTTP/1.1\r\n\r\n",
                 b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                 b"GET /healthz HTTP/1.0\r\nHost: a\r\nHOST: a\r\n\r\n"):
        found = expect(data, {400}, "Host missing or twice")
        check(found == [400], "%r answered %s" % (data, found))
    # The absolute form (RFC 9112 section 3.2.2) is served like its path.
    found = expect(b"GET http://x:1/healthz?a=b HTTP/1.1\r\nHost: x\r\n\r\n", {200}, "absolute form")
    check(found == [200], "the absolute form answered %s" % found)
    healthy()
    # A request line of exactly 16 KiB + 1 must be refused with 431.
    found = expect(b"GET /" + b"a" * 16500 + b" HTTP/1.1\r\nHost: x\r\n\r\n", {431}, "long url")
    check(found == [431], "a 16.5 KiB URL answered %s" % found)


def test_content_length_and_chunked():
    cases = [
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nabcde", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5 5\r\n\r\nabcde", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 0x10\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", {400, 413}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n", {413}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551615\r\n\r\n", {400, 413}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", {400, 501}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", {400, 411, 501}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"
         b"\r\n\r\n0\r\n\r\n", {400, 200, 201}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"ffffffffffffffffff\r\n", {400, 413}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n", {400}),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\n0\n\n", {400, 201}),
        (b"POST /v1/events HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {400, 201}),
    ]
    for data, allowed in cases:
        expect(data, allowed | {400}, repr(data[:70]), answered=True)
    # A chunked body over 1 MiB in total is refused as it arrives.
    chunk = b"%x\r\n%s\r\n" % (65536, b"a" * 65536)
    data = b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk * 17 + b"0\r\n\r\n"
    expect(data, {413}, "chunked over 1 MiB")
    healthy()


def test_large_content_length_answered_at_once():
    """413 before the body is sent: the server must not wait for 2 GiB."""
    sock = socket.create_connection(("127.0.0.1", SERVER.port), timeout=5)
    try:
        sock.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 2147483648\r\n\r\n")
        start = time.monotonic()
        data = sock.recv(4096)
        check(data.startswith(b"HTTP/1.1 413"), "answered %r" % data[:60])
        check(time.monotonic() - start < 2, "413 took too long")
    finally:
        sock.close()
    healthy()


def test_truncated_bodies():
    for declared, sent in ((100, 10), (1048576, 1000), (5, 0)):
        data = b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % declared + b"{" * sent
        received, closed = hflib.raw_exchange(SERVER.port, data, timeout=5)
        check(closed, "a truncated body (%d of %d) left the connection open" % (sent, declared))
        check(not received or hflib.statuses(received)[0] < 500,
              "a truncated body answered %r" % received[:60])
    # Truncated chunked bodies.
    for data in (b"5\r\nab", b"5\r\nabcde\r\n", b"5\r\nabcde\r\n0\r\n"):
        raw = b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + data
        received, closed = hflib.raw_exchange(SERVER.port, raw, timeout=5)
        check(closed and not received, "truncated chunked body answered %r" % received[:60])
    # A client that stops in the middle of a body and never closes: others are still served.
    sock = socket.create_connection(("127.0.0.1", SERVER.port), timeout=5)
    sock.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
    healthy()
    sock.close()


def test_invalid_json_bodies():
    bodies = [
        b'{"id": "\xff\xfe"}', b'{"id": "\xc0\xaf"}', b'{"id": "\xed\xa0\x80"}',
        b'{"id": "\\ud800"}', b'{"id": "a\\u0000b"}', b'\xef\xbb\xbf{"id":"bom"}',
        b'{"id": 1e999999}', b'{"id": -}', b'{"id": "x",}', b'{"id" "x"}', b"{'id': 'x'}",
        b'{"id": "x"}{"id": "y"}', b'{"id": "x", "id": "y"}', b"nul\x00l", b"[" * 65 + b"]" * 65,
        b"[" * 100000, b'{"a":' * 70 + b"1" + b"}" * 70, b'"' + b"\\" * 1000, b"",
        b'{"id": "' + b"a" * 65 + b'", "sections": [{"id":"S","price":1,"rows":[{"id":"R","seats":1}]}]}',
        b'{"id": "ok_id", "sections": [{"id":"S","price":1e300,"rows":[{"id":"R","seats":1}]}]}',
        b'{"id": "ok_id2", "sections": [{"id":"S","price":1,"rows":[{"id":"R","seats":99999999999}]}]}',
        b'{"id": "ok_id3", "sections": [{"id":"S","price":1,"rows":[{"id":"R","seats":-1}]}]}',
        b'{"id": "ok id", "sections": []}', b'{"id": "a-b", "sections": []}',
    ]
    for body in bodies:
        for path in (b"/v1/events", b"/v1/events/h/holds", b"/v1/events/h/bookings"):
            found = expect(json_request(b"POST", path, body) + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                           {400, 404, 409, 422, 200}, "%s %r" % (path, body[:40]))
            check(found and found[0] in (400, 404, 409, 422),
                  "%s %r answered %s" % (path, body[:40], found))
    # Deeply nested but inside a string: not nesting; an invalid request, not a crash.
    body = b'{"user_id": "' + b"[" * 5000 + b'", "seats": ["FLOOR-A-1"]}'
    expect(json_request(b"POST", b"/v1/events/h/holds", body), {400, 201}, "brackets in a string")
    healthy()


def test_oversized_ids_and_path_tricks():
    long = b"a" * 5000
    paths = [
        b"/v1/events/" + long, b"/v1/events/h/seats/" + long, b"/v1/holds/" + long,
        b"/v1/orders/" + long, b"/v1/users/" + long + b"/orders", b"/v1/events/h/seats?limit=" + long,
        b"/v1/events/h/seats?after=" + long, b"/v1/events/../events", b"/v1//events",
        b"/v1/events/%2e%2e", b"/v1/events/h%00x", b"/v1/events/h%2Fseats", b"/v1/events/h%",
        b"/v1/events/h%zz", b"/V1/EVENTS", b"/v1/events/", b"http://x/v1/events", b"*",
        b"/ui/../../../../etc/passwd", b"/ui/..%2f..%2f..%2fetc%2fpasswd", b"/ui/%2e%2e/%2e%2e/etc/passwd",
        b"/ui/events/" + long, b"/v1/events?" + b"&" * 3000, b"/v1/events/h/seats?section=%ff%fe",
        b"/v1/events/h/seats?limit=-5", b"/v1/events/h/seats?limit=99999999999999999999",
        b"/v1/events/h/seats?status=held&status=sold", b"/v1/users/%ff/orders?event=%00",
        b"/v1/events/h/seats/FLOOR-A-99999999999", b"/v1/events/h/seats/FLOOR-A--1",
        b"/v1/events/h/seats/FLOOR-A-0", b"/v1/events/h/seats/-A-1", b"/v1/events/h/seats/FLOOR--1",
    ]
    for path in paths:
        for method in (b"GET", b"POST", b"DELETE", b"OPTIONS"):
            data = (b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}" % (method, path))
            received, closed = hflib.raw_exchange(SERVER.port, data, timeout=5)
            found = hflib.statuses(received)
            check(found or closed, "%s %r: no answer and no close" % (method, path[:50]))
            for status in found:
                check(status < 500, "%s %r answered %d" % (method, path[:50], status))
            check(b"root:" not in received, "%r served a system file" % path)
    # Oversized ids inside bodies.
    cases = [
        (b"/v1/events/h/holds", {"user_id": "u" * 129, "seats": ["FLOOR-A-1"]}),
        (b"/v1/events/h/holds", {"user_id": "u", "seats": ["F" * 70000]}),
        (b"/v1/events/h/holds", {"user_id": "u", "seats": ["FLOOR-A-1"] * 5000}),
        (b"/v1/events/h/holds", {"user_id": "u", "pools": {"P" * 300: 1}}),
        (b"/v1/events/h/holds", {"user_id": "u", "best_available": {"count": 10**12}}),
        (b"/v1/events/h/holds", {"user_id": "u", "seats": ["FLOOR-A-1"], "ttl_s": 1e308}),
        (b"/v1/events", {"id": "x" * 65, "sections": [{"id": "S", "price": 1, "rows": [{"id": "R", "seats": 1}]}]}),
        (b"/v1/events", {"id": "big", "sections": [{"id": "S", "price": 1, "rows": [{"id": "R", "seats": 4000001}]}]}),
        (b"/v1/events", {"id": "manyrows", "sections": [{"id": "S", "price": 1, "rows": [{"id": "R%d" % i, "seats": 1} for i in range(10001)]}]}),
        (b"/v1/events", {"id": "nm", "name": "n" * 300, "sections": [{"id": "S", "price": 1, "rows": [{"id": "R", "seats": 1}]}]}),
    ]
    for path, body in cases:
        raw = json.dumps(body).encode()
        if len(raw) > 1048576:
            continue
        found = expect(json_request(b"POST", path, raw), {400, 404, 409, 413, 422, 429}, "%r" % raw[:60])
        check(found and 400 <= found[0] < 500, "oversized %r answered %s" % (raw[:60], found))
    key = b"Idempotency-Key: " + b"k" * 256 + b"\r\n"
    found = expect(json_request(b"POST", b"/v1/events/h/holds",
                                b'{"user_id":"u","seats":["FLOOR-A-1"]}', key), {400}, "long key")
    healthy()


def open_slow_clients(count):
    """count connections that each send the start of a request and then stall."""
    sockets = []
    for i in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", SERVER.port), timeout=5)
        except OSError as error:
            raise Failure("connection %d failed: %s" % (i, error))
        sock.setblocking(False)
        try:
            sock.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        except OSError:
            pass
        sockets.append(sock)
    return sockets


def test_slowloris():
    count = 1000 if ARGS.quick else 5000
    before = SERVER.rss_kib()
    sockets = open_slow_clients(count)
    try:
        # Trickle: one more byte on every connection, a few times, while others are served.
        for _ in range(3):
            for sock in sockets:
                try:
                    sock.send(b"a")
                except OSError:
                    pass
            healthy(limit_s=2.0)
            time.sleep(0.2)
        during = SERVER.rss_kib()
        per_connection = (during - before) * 1024.0 / count
        print("    slowloris: %d stalled connections, RSS %d -> %d KiB (%.0f bytes each)" % (
            count, before, during, per_connection), flush=True)
        check(not rss_checked() or per_connection < 16 * 1024, "each stalled connection costs %.0f bytes" % per_connection)
    finally:
        for sock in sockets:
            sock.close()
    healthy()


def test_connection_cap():
    if ARGS.quick:
        print("    skipped in --quick", flush=True)
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 10200:
        print("    skipped: file descriptor limit %d" % hard, flush=True)
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    before = SERVER.rss_kib()
    sockets = open_slow_clients(10000)
    try:
        time.sleep(0.5)
        # Past the cap: accepted and closed at once.
        received, closed = hflib.raw_exchange(SERVER.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
        check(closed and not received, "connection 10,001 was served: %r" % received[:60])
        during = SERVER.rss_kib()
        print("    cap: 10000 connections, RSS %d -> %d KiB" % (before, during), flush=True)
        check(not rss_checked() or during - before < 200 * 1024, "10,000 connections grew RSS by %d KiB" % (during - before))
        for sock in sockets[:10]:
            sock.close()
        time.sleep(0.5)
        healthy(limit_s=3.0)
    finally:
        for sock in sockets:
            sock.close()
    time.sleep(1.0)
    healthy()


def test_unread_pipeline_and_big_bodies():
    """A client that pipelines without reading, and clients sending 1 MiB bodies: memory stays
    bounded by the per-connection limits."""
    before = SERVER.rss_kib()
    request = b"GET /v1/events/h/seats?limit=10000 HTTP/1.1\r\nHost: x\r\n\r\n"
    socks = []
    for _ in range(4):
        sock = socket.create_connection(("127.0.0.1", SERVER.port), timeout=5)
        sock.setblocking(False)
        sent = 0
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and sent < 20000:
            try:
                sock.send(request)
                sent += 1
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break
        socks.append(sock)
    healthy(limit_s=3.0)
    body = b'{"id":"' + b"x" * (1048576 - 20) + b'"}'
    for _ in range(8):
        expect(json_request(b"POST", b"/v1/events", body[:1048576]), {400, 413}, "1 MiB body")
    during = SERVER.rss_kib()
    print("    unread pipelines and 1 MiB bodies: RSS %d -> %d KiB" % (before, during), flush=True)
    check(not rss_checked() or during - before < 64 * 1024, "RSS grew by %d KiB" % (during - before))
    for sock in socks:
        sock.close()
    healthy()


def test_abrupt_disconnects():
    """Clients that vanish at every stage: mid-head, mid-body, after sending, with RST."""
    import struct
    stages = [b"POST /v1/events/h/holds HTTP/1.1\r\nHost: x\r\nContent-Le",
              json_request(b"POST", b"/v1/events/h/holds", b'{"user_id":"x","seats":["FLOOR-A-2"]}')[:-5],
              json_request(b"POST", b"/v1/events/h/holds", b'{"user_id":"x","seats":["FLOOR-A-2"]}'),
              b"GET /v1/events/h/seats?limit=10 HTTP/1.1\r\nHost: x\r\n\r\n" * 50]
    for _ in range(50):
        for data in stages:
            sock = socket.create_connection(("127.0.0.1", SERVER.port), timeout=5)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(data)
            sock.close()   # RST
    healthy()


def test_error_answers_are_utf8_json():
    """Regression (found by fuzz_routes): an invalid_json answer quoted the raw bytes of the
    request near the error, so a body with invalid UTF-8 got an answer that is not UTF-8 JSON.
    Every answer must be valid UTF-8 JSON whatever the request carried."""
    bodies = [b'{"user\\ud80\xd0\x8a"}', b'{"a": "\xff\xfe', b'{"\xc3\x28": 1}',
              b'\xff{}', b'{"user_id": "u", "seats": ["\xed\xa0\x80"]}', b'{"x":\x80}']
    paths = [b"/v1/events", b"/v1/events/h/holds", b"/v1/holds/x/commit",
             b"/v1/events/%ff%fe", b"/v1/holds/%c3%28", b"/v1/users/%ff/orders"]
    bad = []
    for path in paths:
        for body in bodies:
            received, _ = hflib.raw_exchange(SERVER.port, json_request(b"POST", path, body))
            head, _, answer = received.partition(b"\r\n\r\n")
            try:
                json.loads(answer.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                bad.append((path, body, answer[:120]))
        received, _ = hflib.raw_exchange(SERVER.port, b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path)
        answer = received.partition(b"\r\n\r\n")[2]
        try:
            json.loads(answer.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            bad.append((b"GET " + path, b"", answer[:120]))
    check(not bad, "%d answers are not UTF-8 JSON, e.g. %r" % (len(bad), bad[:2]))
    healthy()


TESTS = [
    ("malformed_request_lines", test_malformed_request_lines),
    ("error_answers_are_utf8_json", test_error_answers_are_utf8_json),
    ("content_length_and_chunked", test_content_length_and_chunked),
    ("large_content_length_answered_at_once", test_large_content_length_answered_at_once),
    ("truncated_bodies", test_truncated_bodies),
    ("invalid_json_bodies", test_invalid_json_bodies),
    ("oversized_ids_and_path_tricks", test_oversized_ids_and_path_tricks),
    ("abrupt_disconnects", test_abrupt_disconnects),
    ("unread_pipeline_and_big_bodies", test_unread_pipeline_and_big_bodies),
    ("slowloris", test_slowloris),
    ("connection_cap", test_connection_cap),
]


def main():
    global ARGS, SERVER
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="build/holdfast")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("-k", dest="pattern", default=None)
    ARGS = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    SERVER = hflib.Server(ARGS.binary)
    try:
        SERVER.start()
        status, answer = hflib.request(SERVER.port, "POST", "/v1/events", {
            "id": "h", "sections": [{"id": "FLOOR", "price": 10,
                                     "rows": [{"id": "A", "seats": 2000}]}]})
        check(status == 201, "event create answered %d" % status)
        tests = list(TESTS)
        tests.append(("server_alive_and_clean_shutdown", lambda: (
            healthy(), check(SERVER.stop() == 0, "SIGTERM after the hostile tests: bad exit"))))
        code = hflib.run_tests(tests, ["-k", ARGS.pattern] if ARGS.pattern else [])
        if code:
            print(SERVER.log_tail(), flush=True)
        return code
    finally:
        SERVER.cleanup()


if __name__ == "__main__":
    sys.exit(main())
