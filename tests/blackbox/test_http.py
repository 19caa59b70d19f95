"""HTTP conventions: keep-alive, pipelining, limits, chunked bodies, JSON rules, routing and
authentication (API.md sections 1 and 9)."""

import email.utils
import json
import re
import socket
import time

from harness import (Soft, Server, check, check_equal, create_event, expect, fail, get_event,
                     request_bytes, seat_state, uid, user)

WEIGHT = 2.0

SMALL_SECTIONS = [{"id": "S", "price": 10, "rows": [{"id": "R", "seats": 30}]}]


def _event_body(event_id, **extra):
    body = {"id": event_id, "sections": SMALL_SECTIONS}
    body.update(extra)
    return body


def test_healthz_and_content_type(server):
    c = server.client()
    response = c.get("/healthz")
    check_equal(expect(response, 200), {"status": "ok"}, "healthz")
    for response in (c.get("/v1/events"), c.get("/v1/nothing_here"),
                     c.post("/v1/events", raw=b"{")):
        content_type = response.header("content-type", "")
        check(content_type.split(";")[0].strip() == "application/json",
              "Content-Type %r on %r" % (content_type, response))


def test_keep_alive(server):
    c = server.client()
    expect(c.get("/healthz"), 200)
    sock = c.connection.sock
    port = c.local_port()
    check(sock is not None, "connection open")
    event_id = uid("ka")
    for _ in range(3):
        expect(c.get("/v1/events"), 200)
    expect(c.post("/v1/events", _event_body(event_id)), 201)
    expect(c.post("/v1/events", _event_body(event_id)), 409, "event_exists")
    expect(c.get("/v1/nothing_here"), 404, "not_found")
    response = c.get("/v1/events/%s" % event_id)
    expect(response, 200)
    check(response.header("connection", "").lower() != "close", "Connection: close answered")
    check(c.connection.sock is sock and c.local_port() == port,
          "the same connection served every request")
    # HTTP/1.0 without keep-alive is closed after the answer.
    raw = server.raw()
    raw.send(b"GET /healthz HTTP/1.0\r\n\r\n")
    expect(raw.read_response(), 200)
    check(raw.closed_by_peer(3), "HTTP/1.0 connection not closed")
    # Connection: close is honoured.
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz", headers={"Connection": "close"}))
    expect(raw.read_response(), 200)
    check(raw.closed_by_peer(3), "Connection: close not honoured")


def test_pipelining(server):
    c = server.client()
    event_id = uid("pipe")
    expect(c.post("/v1/events", _event_body(event_id)), 201)
    users = [user() for _ in range(6)]
    requests = []
    expectations = []
    for n in range(6):
        seat = "S-R-%d" % (n + 1)
        requests.append(request_bytes("POST", "/v1/events/%s/holds" % event_id,
                                      {"user_id": users[n], "seats": [seat]}))
        expectations.append(("hold", seat, users[n]))
        requests.append(request_bytes("GET", "/v1/events/%s/seats/%s" % (event_id, seat)))
        expectations.append(("seat", seat, "held"))
        if n % 2 == 0:
            requests.append(request_bytes("GET", "/v1/events/%s" % event_id))
            expectations.append(("counts", n + 1))
    requests.append(request_bytes("POST", "/v1/events/%s/holds" % event_id,
                                  {"user_id": "late", "seats": ["S-R-1"]}))
    expectations.append(("taken", "S-R-1"))
    requests.append(request_bytes("GET", "/healthz"))
    expectations.append(("health",))
    requests.append(request_bytes("GET", "/v1/nope"))
    expectations.append(("status", 404))
    requests.append(request_bytes("DELETE", "/v1/events"))
    expectations.append(("status", 405))
    requests.append(request_bytes("GET", "/v1/events/%s/seats/S-R-30" % event_id))
    expectations.append(("seat", "S-R-30", "available"))
    check_equal(len(requests), 20, "request count")
    raw = server.raw()
    raw.send(b"".join(requests))
    responses = raw.read_responses(20)
    for index, (response, expectation) in enumerate(zip(responses, expectations)):
        what = "pipelined #%d %s" % (index, expectation)
        kind = expectation[0]
        if kind == "hold":
            h = expect(response, 201, what=what)
            check_equal((h["seats"], h["user_id"]), ([expectation[1]], expectation[2]), what)
        elif kind == "seat":
            seat = expect(response, 200, what=what)
            check_equal((seat["id"], seat["status"]), expectation[1:], what)
        elif kind == "counts":
            summary = expect(response, 200, what=what)
            check_equal(summary["counts"]["held"], expectation[1], what)
        elif kind == "taken":
            expect(response, 409, "seats_unavailable", what=what)
        elif kind == "health":
            check_equal(expect(response, 200, what=what), {"status": "ok"}, what)
        else:
            check_equal(response.status, expectation[1], what)
    # The connection is still usable afterwards.
    raw.send(request_bytes("GET", "/healthz"))
    expect(raw.read_response(), 200)


def test_pipelining_many_small(server):
    """128+ requests in one write (beyond the server's pipeline depth): all answered in order."""
    raw = server.raw()
    event_id = uid("pipe")
    c = server.client()
    expect(c.post("/v1/events", _event_body(event_id)), 201)
    count = 300
    data = b"".join(request_bytes("GET", "/v1/events/%s/seats/S-R-%d" % (event_id, n % 30 + 1))
                    for n in range(count))
    raw.send(data)
    for n in range(count):
        seat = expect(raw.read_response(), 200, what="pipelined GET #%d" % n)
        check_equal(seat["id"], "S-R-%d" % (n % 30 + 1), "answer order")


def test_head_too_large(server):
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz", headers={"X-Big": "a" * (17 * 1024)}))
    response = raw.read_response()
    check_equal(response.status, 431, "status for a 17 KiB head")
    check_equal(response.code, "head_too_large", "error code")
    check(raw.closed_by_peer(3), "connection not closed after 431")
    # Just under the limit is fine.
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz", headers={"X-Big": "a" * (15 * 1024)}))
    expect(raw.read_response(), 200, what="a 15 KiB head")
    # Many headers adding up beyond 16 KiB.
    raw = server.raw()
    headers = {"X-H%d" % n: "b" * 200 for n in range(90)}
    raw.send(request_bytes("GET", "/healthz", headers=headers))
    check_equal(raw.read_response().status, 431, "status for 90 headers of 200 bytes")


def test_body_too_large(server):
    raw = server.raw()
    started = time.monotonic()
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 2000000\r\n\r\n")
    response = raw.read_response()
    check_equal(response.status, 413, "status for Content-Length 2,000,000")
    check_equal(response.code, "body_too_large", "error code")
    check(time.monotonic() - started < 5, "413 not answered at once")
    check(raw.closed_by_peer(3), "connection not closed after 413")
    raw = server.raw()
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n")
    check_equal(raw.read_response().status, 413, "status for 1 MiB + 1")
    # Exactly 1 MiB is accepted (unknown members are ignored).
    c = server.client()
    event_id = uid("big")
    prefix = json.dumps(_event_body(event_id))[:-1] + ', "pad": "'
    body = (prefix + "x" * (1048576 - len(prefix) - 2) + '"}').encode()
    check_equal(len(body), 1048576, "body size")
    expect(c.post("/v1/events", raw=body), 201, what="a body of exactly 1 MiB")
    check_equal(get_event(c, event_id)["id"], event_id, "created")


def test_chunked_body(server):
    raw = server.raw()
    event_id = uid("chunk")
    body = json.dumps(_event_body(event_id)).encode()
    parts = [body[:10], body[10:25], body[25:]]
    data = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n" + data)
    created = expect(raw.read_response(), 201, what="chunked body")
    check_equal(created["id"], event_id, "created from a chunked body")
    # The connection goes on.
    raw.send(request_bytes("GET", "/v1/events/%s" % event_id))
    check_equal(expect(raw.read_response(), 200)["counts"]["available"], 30, "GET after")
    # Chunked bodies are held to the same 1 MiB limit. Send 1 MiB + 1 byte and nothing more,
    # so the server has read everything when it answers (no reset loses the answer).
    raw = server.raw()
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    try:
        for _ in range(16):
            raw.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        raw.send(b"1\r\nx")
    except OSError:
        pass   # the server may close once it answered 413
    try:
        status = raw.read_response().status
    except Exception as error:  # noqa: B902 (reported below)
        status = repr(error)
    check_equal(status, 413, "status for a chunked body of 1 MiB + 1 byte")


def _invalid_json(c, body, what):
    expect(c.post("/v1/events", raw=body), 400, "invalid_json", what=what)


def test_invalid_json(server):
    c = server.client()
    soft = Soft()
    event_id = uid("json")
    valid = json.dumps(_event_body(event_id))
    soft(_invalid_json, c, b'{"id": ', "truncated")
    soft(_invalid_json, c, b"{'id': 'x'}", "single quotes")
    soft(_invalid_json, c, valid.encode() + b" x", "trailing garbage")
    soft(_invalid_json, c, b'{"id": "%s", "id": "%s", "sections": %s}' % (
        event_id.encode(), event_id.encode(), json.dumps(SMALL_SECTIONS).encode()),
        "duplicate member")
    soft(_invalid_json, c, b'{"id": "%s", "sections": [{"id": "S", "id": "T", "price": 1, '
                     b'"rows": [{"id": "R", "seats": 1}]}]}' % event_id.encode(),
                  "duplicate member in a nested object")
    soft(_invalid_json, c, b'{"id": "%s", "name": "\xff\xfe", "sections": %s}' % (
        event_id.encode(), json.dumps(SMALL_SECTIONS).encode()), "invalid UTF-8 in a string")
    soft(_invalid_json, c, b'{"id": "%s", "sections": %s, "x\xc0\xaf": 1}' % (
        event_id.encode(), json.dumps(SMALL_SECTIONS).encode()),
        "overlong UTF-8 in an unknown member name")
    soft(_invalid_json, c, b'{"id": "%s", "name": "\xed\xa0\x80", "sections": %s}' % (
        event_id.encode(), json.dumps(SMALL_SECTIONS).encode()), "UTF-8 encoded surrogate")
    # Nesting: the body object is level 1; 63 arrays inside make 64 levels, 64 make 65.
    deep_65 = valid[:-1] + ', "pad": ' + "[" * 64 + "]" * 64 + "}"
    soft(_invalid_json, c, deep_65.encode(), "nesting 65 levels")
    soft(expect, c.get("/v1/events/%s" % event_id), 404, "event_not_found",
           what="no invalid body created the event")
    deep_64 = valid[:-1] + ', "pad": ' + "[" * 63 + "]" * 63 + "}"
    soft(expect, c.post("/v1/events", raw=deep_64.encode()), 201, what="nesting 64 levels")
    # The same rules hold on every route that reads a body.
    soft(expect, c.post("/v1/events/%s/holds" % event_id,
                  raw=b'{"user_id": "a", "user_id": "b", "seats": ["S-R-1"]}'), 400,
           "invalid_json", what="duplicate member in a hold")
    soft(expect, c.post("/v1/events/%s/holds" % event_id,
                  raw=b'{"user_id": "a", "seats": ["S-R-1"]'), 400, "invalid_json",
           what="truncated hold")
    soft(expect, c.post("/v1/holds/res_x/commit", raw=b'{"user_id": '), 400, "invalid_json",
           what="truncated commit")
    check_equal(seat_state(c, event_id, "S-R-1"), ("available", 1), "nothing held")
    # A valid body with non-ASCII text is fine.
    h = expect(c.post("/v1/events/%s/holds" % event_id,
                      raw='{"user_id": "zoë 🎫", "seats": ["S-R-1"]}'.encode()), 201)
    check_equal(h["user_id"], "zoë 🎫", "UTF-8 user_id")
    soft.done()


def test_routes_404_405(server):
    c = server.client()
    soft = Soft()
    for path in ("/v1/nothing", "/nothing", "/v1/events/x/y/z/w", "/v1/holds"):
        soft(expect, c.get(path), 404, "not_found", what="GET %s" % path)
    for method, path in (("DELETE", "/v1/events"), ("PUT", "/v1/events"),
                         ("POST", "/healthz"), ("GET", "/v1/holds/res_x/commit"),
                         ("PUT", "/v1/events/x/holds"), ("DELETE", "/v1/orders/ord_x"),
                         ("POST", "/v1/events/x/seats")):
        soft(expect, c.request(method, path), 405, "method_not_allowed",
             what="%s %s" % (method, path))
    soft.done()


def test_empty_and_non_object_bodies(server):
    c = server.client()
    soft = Soft()
    event_id = uid("body")
    create_event(c, event_id, sections=SMALL_SECTIONS)
    soft(expect, c.post("/v1/events/%s/holds" % event_id, raw=b""), 400, "invalid_request",
           field="user_id", what="empty hold body")
    raw = server.raw()
    raw.send(b"POST /v1/events/%s/holds HTTP/1.1\r\nHost: x\r\n\r\n" % event_id.encode())
    expect(raw.read_response(), 400, "invalid_request", field="user_id",
           what="POST without Content-Length")
    for body in (b"[]", b"1", b'"text"', b"true", b"null"):
        soft(expect, c.post("/v1/events/%s/holds" % event_id, raw=body), 400, "invalid_request",
               field="body", what="hold body %r" % body)
    hold_id = "res_" + "0" * 32
    soft(expect, c.post("/v1/holds/%s/release" % hold_id, raw=b""), 400, "invalid_request",
           field="user_id", what="empty release body")
    soft.done()


def test_malformed_http(server):
    cases = [
        (b"GARBAGE\r\n\r\n", 400, "nonsense request line"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 400, "header without colon"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400,
         "bad Content-Length"),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "Content-Length and chunked"),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"zz\r\n", 400, "bad chunk size"),
        (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/2.0"),
    ]
    for data, status, what in cases:
        raw = server.raw()
        raw.send(data)
        response = raw.read_response()
        check_equal(response.status, status, what)
        check(raw.closed_by_peer(3), "connection not closed after %s" % what)
    # The server is fine afterwards.
    c = server.client()
    expect(c.get("/healthz"), 200)


def test_bad_request_after_good_ones(server):
    """A malformed request in a pipeline: the ones before it are answered, then 400, then
    the connection closes."""
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz") + request_bytes("GET", "/healthz")
             + b"BROKEN REQUEST\r\n\r\n")
    expect(raw.read_response(), 200)
    expect(raw.read_response(), 200)
    check_equal(raw.read_response().status, 400, "the malformed one")
    check(raw.closed_by_peer(3), "connection not closed")


def test_api_key():
    key = "s3cr3t-" + uid("k")
    server = Server(api_key=key).start()
    anonymous = server.client(api_key=None)
    check_equal(expect(anonymous.get("/healthz"), 200), {"status": "ok"}, "healthz without key")
    event_id = uid("auth")
    body = _event_body(event_id)
    expect(anonymous.get("/v1/events"), 401, "unauthorized", what="no key")
    expect(anonymous.post("/v1/events", body), 401, "unauthorized", what="POST without key")
    wrong = server.client(api_key="wrong")
    expect(wrong.get("/v1/events"), 401, "unauthorized", what="wrong key")
    expect(wrong.get("/v1/events/%s" % event_id), 401, "unauthorized", what="wrong key")
    for header in ("Basic " + key, key, "Bearer " + key + "x", "Bearer"):
        expect(anonymous.get("/v1/events", headers={"Authorization": header}), 401,
               "unauthorized", what="Authorization %r" % header)
    authorized = server.client()
    listing = expect(authorized.get("/v1/events"), 200)
    check_equal(listing, {"events": [], "next": None}, "nothing was created without the key")
    expect(authorized.post("/v1/events", body), 201, what="POST with the key")
    expect(authorized.get("/v1/events/%s" % event_id), 200)
    server.stop()


def test_no_api_key_warns():
    server = Server().start()
    c = server.client()
    expect(c.get("/v1/events"), 200, what="no key configured: open")
    server.stop()
    text = (server.stderr_text() + server.stdout_text()).lower()
    check("warn" in text or "api key" in text or "api-key" in text,
          "no warning logged when serving without an API key")


def test_header_names_any_case(server):
    c = server.client()
    event_id = uid("case")
    raw = server.raw()
    body = json.dumps(_event_body(event_id)).encode()
    raw.send(b"POST /v1/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
             b"CONTENT-LENGTH: %d\r\nidempotency-key: lower-%s\r\n\r\n%s" % (
                 len(body), event_id.encode(), body))
    first = raw.read_response()
    expect(first, 201, what="lower-case header names")
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
             b"IDEMPOTENCY-KEY: lower-%s\r\n\r\n%s" % (len(body), event_id.encode(), body))
    second = raw.read_response()
    check_equal((second.status, second.body), (first.status, first.body),
                "the key matched whatever the case of its header name")
    check_equal(get_event(c, event_id)["id"], event_id, "created once")


def test_pipelined_large_responses(server):
    """Pipelined requests whose answers are far larger than the requests: all arrive, in
    order, even though the server must stop reading while its output drains."""
    c = server.client()
    event_id = uid("large")
    create_event(c, event_id, sections=[{"id": "S", "price": 1,
                                         "rows": [{"id": "R", "seats": 4000}]}])
    count = 60
    raw = server.raw(client_timeout=30)
    raw.send(b"".join(request_bytes("GET", "/v1/events/%s/seats?limit=%d&after=S-R-%d" % (
        event_id, 1000 + n, n + 1)) for n in range(count)))
    for n in range(count):
        page = expect(raw.read_response(), 200, what="large answer #%d" % n)
        check_equal((len(page["seats"]), page["seats"][0]["id"]), (1000 + n, "S-R-%d" % (n + 2)),
                    "answer #%d" % n)


def test_percent_encoded_path(server):
    """A user id may be any string: in a path it is percent-encoded and read back decoded."""
    c = server.client()
    event_id = uid("pct")
    create_event(c, event_id, sections=SMALL_SECTIONS)
    odd_user = "ann smith/ü?#%"
    h = expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": odd_user,
                                                         "seats": ["S-R-1"]}), 201)
    expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                  {"user_id": odd_user, "payment_ref": "pi"}), 200)
    from urllib.parse import quote
    listing = expect(c.get("/v1/users/%s/orders?event=%s" % (quote(odd_user, safe=""),
                                                             event_id)), 200)
    check_equal([o["user_id"] for o in listing["orders"]], [odd_user],
                "orders of a percent-encoded user id")


def test_request_in_tiny_pieces(server):
    """A request arriving a few bytes at a time (head and body split anywhere)."""
    c = server.client()
    event_id = uid("slow")
    create_event(c, event_id, sections=SMALL_SECTIONS)
    raw = server.raw()
    raw.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = request_bytes("POST", "/v1/events/%s/holds" % event_id,
                         {"user_id": "slow", "seats": ["S-R-2"]})
    data += request_bytes("GET", "/v1/events/%s/seats/S-R-2" % event_id)
    for start in range(0, len(data), 7):
        raw.send(data[start:start + 7])
        time.sleep(0.002)
    h = expect(raw.read_response(), 201, what="hold sent in pieces")
    check_equal(h["seats"], ["S-R-2"], "hold")
    check_equal(expect(raw.read_response(), 200)["status"], "held", "seat")


def test_connection_close_mid_pipeline(server):
    """`Connection: close` on a pipelined request: it is answered, then the connection closes
    and what followed it is not processed."""
    c = server.client()
    event_id = uid("close")
    create_event(c, event_id, sections=SMALL_SECTIONS)
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz")
             + request_bytes("POST", "/v1/events/%s/holds" % event_id,
                             {"user_id": "a", "seats": ["S-R-1"]}, headers={"Connection": "close"})
             + request_bytes("POST", "/v1/events/%s/holds" % event_id,
                             {"user_id": "b", "seats": ["S-R-2"]}))
    expect(raw.read_response(), 200)
    expect(raw.read_response(), 201)
    check(raw.closed_by_peer(3), "connection not closed after Connection: close")
    check_equal(raw.buffer, b"", "nothing answered after the closing request")
    check_equal(seat_state(c, event_id, "S-R-2"), ("available", 1),
                "the request after Connection: close was not applied")


def test_pipelined_writes_in_arrival_order(server):
    """200 pipelined holds, two for each seat: in every pair the first wins, the second gets
    409, whatever the batching of the writes."""
    c = server.client()
    event_id = uid("order")
    create_event(c, event_id, sections=[{"id": "S", "price": 1,
                                         "rows": [{"id": "R", "seats": 100}]}])
    raw = server.raw(client_timeout=30)
    raw.send(b"".join(request_bytes("POST", "/v1/events/%s/holds" % event_id,
                                    {"user_id": "p%d" % n, "seats": ["S-R-%d" % (n // 2 + 1)]})
                      for n in range(200)))
    for n in range(200):
        response = raw.read_response()
        if n % 2 == 0:
            check_equal(expect(response, 201, what="request #%d" % n)["user_id"], "p%d" % n,
                        "winner")
        else:
            expect(response, 409, "seats_unavailable", what="request #%d" % n)
    check_equal(get_event(c, event_id)["counts"], {"available": 0, "held": 100, "sold": 0},
                "counts")


def test_chunk_extensions_and_trailers(server):
    raw = server.raw()
    event_id = uid("ext")
    body = json.dumps(_event_body(event_id)).encode()
    data = (b"%x;name=value\r\n%s\r\n" % (len(body), body)) + b"0\r\nX-Trailer: yes\r\n\r\n"
    raw.send(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + data)
    expect(raw.read_response(), 201, what="chunk extension and trailer")
    raw.send(request_bytes("GET", "/v1/events/%s" % event_id))
    expect(raw.read_response(), 200, what="the next request on the connection")


# ---- HTTP/1.1 conventions: Date, Host, the absolute form, slow clients (API.md section 1) ----

# IMF-fixdate (RFC 9110 section 5.6.7): Sun, 06 Nov 1994 08:49:37 GMT
DATE_FORM = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-3][0-9] "
                       r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
                       r"[0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT$")


def _check_date(soft, headers, what):
    """The answer's Date is an IMF-fixdate within a few seconds of our clock."""
    date = headers.get("date")
    if date is None or not DATE_FORM.match(date):
        soft(fail, "%s: Date %r, expected an IMF-fixdate" % (what, date))
        return
    skew = email.utils.parsedate_to_datetime(date).timestamp() - time.time()
    soft(check, -5 < skew < 2, "%s: Date %r is %.1f s off our clock" % (what, date, skew))


def test_date_on_every_answer(server):
    """Every answer carries Date: the routes' answers of each kind, HEAD, OPTIONS's 204, the
    page, a stream's head, and the HTTP layer's own 400, 413, 431 and 505."""
    c = server.client()
    event = create_event(c, sections=SMALL_SECTIONS)["id"]
    soft = Soft()
    answers = [
        ("GET /healthz", c.get("/healthz")),
        ("GET an event", c.get("/v1/events/%s" % event)),
        ("POST a hold", c.post("/v1/events/%s/holds" % event,
                               {"user_id": user(), "seats": ["S-R-1"]})),
        ("404", c.get("/v1/no_such_route")),
        ("405", c.request("DELETE", "/v1/events")),
        ("HEAD", c.request("HEAD", "/v1/events/%s" % event)),
        ("OPTIONS", c.request("OPTIONS", "/v1/events")),
        ("the page", c.get("/")),
        ("an unknown event", c.get("/v1/events/no_such_event")),
    ]
    for what, response in answers:
        _check_date(soft, response.headers, what)
    check_equal([response.status for _, response in answers],
                [200, 200, 201, 404, 405, 200, 204, 200, 404], "the answers' statuses")
    raw = server.raw()
    raw.send(request_bytes("GET", "/v1/events/%s/stream" % event,
                           headers={"Accept": "text/event-stream"}))
    status, headers = raw.read_head()
    soft(check_equal, status, 200, "the stream's status")
    _check_date(soft, headers, "a stream's head")
    raw.close()
    refused = [
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
        (b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n", 413),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 17000 + b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ]
    for data, status in refused:
        raw = server.raw()
        raw.send(data)
        response = raw.read_response()
        soft(check_equal, response.status, status, "the HTTP layer's %d" % status)
        _check_date(soft, response.headers, "the HTTP layer's %d" % status)
        raw.close()
    soft.done()


def test_host_required_once(server):
    """RFC 9112 section 3.2: an HTTP/1.1 request without Host, or any request with two, is
    400 bad_request and the connection closes; HTTP/1.0 without Host is served."""
    soft = Soft()
    cases = [
        (b"GET /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 without Host"),
        (b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "two Hosts"),
        (b"GET /healthz HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", "the same Host twice"),
        (b"GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", "HTTP/1.0 with two Hosts"),
        (b"POST /v1/events HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2"
         b"\r\n\r\n{}", "a POST without Host"),
    ]
    for data, what in cases:
        raw = server.raw()
        raw.send(data)
        response = raw.read_response()
        if soft(expect, response, 400, "bad_request", what=what) is not None:
            soft(check, raw.closed_by_peer(3), "%s: connection not closed" % what)
        raw.close()
    raw = server.raw()
    raw.send(b"GET /healthz HTTP/1.0\r\n\r\n")
    soft(expect, raw.read_response(), 200, what="HTTP/1.0 without Host")
    raw.close()
    # The answers before such a request on a connection are given, then the 400.
    raw = server.raw()
    raw.send(request_bytes("GET", "/healthz") + b"GET /healthz HTTP/1.1\r\nX: y\r\n\r\n"
             + request_bytes("GET", "/healthz"))
    soft(expect, raw.read_response(), 200, what="the request before the one without Host")
    soft(expect, raw.read_response(), 400, "bad_request", what="the request without Host")
    soft(check, raw.closed_by_peer(3), "no request after the one without Host is answered")
    raw.close()
    soft.done()


def test_absolute_form(server):
    """RFC 9112 section 3.2.2: `GET http://host/v1/events HTTP/1.1` is served as its path
    and query would be, for http and https, with or without a port, and for changes too."""
    c = server.client()
    event = create_event(c, sections=SMALL_SECTIONS)["id"]
    authority = "127.0.0.1:%d" % server.port
    soft = Soft()
    raw = server.raw()
    holder = user()
    hold = json.dumps({"user_id": holder, "seats": ["S-R-2"]}).encode()
    raw.send(b"GET http://%s/v1/events/%s HTTP/1.1\r\nHost: %s\r\n\r\n"
             % (authority.encode(), event.encode(), authority.encode())
             + b"GET https://tickets.example/v1/events/%s/seats?limit=2 HTTP/1.1\r\n"
               b"Host: tickets.example\r\n\r\n" % event.encode()
             + b"GET HTTP://other/healthz HTTP/1.1\r\nHost: other\r\n\r\n"
             + b"POST http://%s/v1/events/%s/holds HTTP/1.1\r\nHost: x\r\n"
               b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
             % (authority.encode(), event.encode(), len(hold), hold)
             + b"GET http://%s HTTP/1.1\r\nHost: x\r\n\r\n" % authority.encode())
    summary = soft(expect, raw.read_response(), 200, what="an event in absolute form")
    if summary is not None:
        soft(check_equal, summary.get("id"), event, "the event read in absolute form")
    page = soft(expect, raw.read_response(), 200, what="https absolute form with a query")
    if page is not None:
        soft(check_equal, [seat.get("id") for seat in page.get("seats", [])],
             ["S-R-1", "S-R-2"], "the query of an absolute form (limit=2)")
    soft(expect, raw.read_response(), 200, what="an upper-case scheme")
    held = soft(expect, raw.read_response(), 201, what="a hold in absolute form")
    if held is not None:
        soft(check_equal, seat_state(c, event, "S-R-2")[0], "held",
             "the seat held in absolute form")
    root = raw.read_response()
    soft(check_equal, (root.status, root.header("content-type", "").split(";")[0]),
         (200, "text/html"), "an absolute form without a path is /")
    raw.close()
    soft.done()


def _slow_client(port, name, first, step, every_s, total_s):
    """A socket that sends first, then step every every_s seconds until total_s."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    sock.sendall(first)
    return {"name": name, "sock": sock, "step": step, "every_s": every_s, "steps": 0,
            "total_s": total_s, "received": b"", "closed_at": None, "answered_at": None}


def _slow_turn(client, elapsed):
    """Reads what came; sends the next step when it is due. False once the server closed."""
    try:
        chunk = client["sock"].recv(65536)
        if not chunk:
            client["closed_at"] = elapsed
            return False
        client["received"] += chunk
        if client["answered_at"] is None and b"\r\n\r\n" in client["received"]:
            client["answered_at"] = elapsed
    except BlockingIOError:
        pass
    except OSError:
        client["closed_at"] = elapsed
        return False
    due = client["step"] and elapsed >= (client["steps"] + 1) * client["every_s"] \
        and (client["steps"] + 1) * client["every_s"] < client["total_s"]
    if due:
        client["steps"] += 1
        try:
            client["sock"].send(client["step"])
        except OSError:
            client["closed_at"] = elapsed
            return False
    return True


def _status_of(client):
    text = client["received"].split(b"\r\n", 1)[0].decode("latin-1")
    return int(text.split(" ")[1]) if text.startswith("HTTP/1.1 ") else None


def _error_code_of(client):
    body = client["received"].split(b"\r\n\r\n", 1)[-1]
    try:
        return json.loads(body.decode()).get("error", {}).get("code")
    except ValueError:
        return None


def test_slow_head_and_body(fresh):
    """Slowloris (API.md section 1), in about 36 s: a head trickled one line every 5 s gets 408
    request_timeout 30 s after its first byte and the connection closes (the bytes do not
    move the deadline); a body trickled at 100 bytes every 2 s (0.5 KiB per 10 s) gets 408
    as well; a body at 1000 bytes every 5 s (2 KiB per 10 s) is served; a keep-alive
    connection idle for 35 s after an answer stays open (the idle timeout is 60 s)."""
    event_body = json.dumps({"id": uid("slow"), "sections": SMALL_SECTIONS}).encode()
    steady_body = event_body + b" " * (5000 - len(event_body))
    clients = [
        _slow_client(fresh.port, "head", b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
                     b"X-Trickle: more\r\n", 5, 60),
        _slow_client(fresh.port, "body", b"POST /v1/events HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 4000\r\n\r\n",
                     b" " * 100, 2, 60),
        _slow_client(fresh.port, "steady", b"POST /v1/events HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                     + steady_body[:1000], None, 5, 60),
        _slow_client(fresh.port, "idle", request_bytes("GET", "/healthz"), None, 5, 60),
    ]
    steady_sent = 1000
    started = time.monotonic()
    limit_s = 36
    try:
        while time.monotonic() - started < limit_s:
            elapsed = time.monotonic() - started
            for client in clients:
                if client["closed_at"] is None:
                    _slow_turn(client, elapsed)
            steady = clients[2]
            if steady_sent < len(steady_body) and elapsed >= steady_sent / 1000 * 5:
                steady["sock"].send(steady_body[steady_sent:steady_sent + 1000])
                steady_sent += 1000
            time.sleep(0.05)
        head, body, steady, idle = clients
        soft = Soft()
        soft(check_equal, (_status_of(head), _error_code_of(head)), (408, "request_timeout"),
             "a head trickled a line every 5 s")
        soft(check, head["answered_at"] is not None and 29 <= head["answered_at"] <= 33,
             "the trickled head answered at %r s, expected 30 s after its first byte"
             % head["answered_at"])
        soft(check, head["closed_at"] is not None, "the trickled head's connection left open")
        soft(check_equal, (_status_of(body), _error_code_of(body)), (408, "request_timeout"),
             "a body at 0.5 KiB per 10 s")
        soft(check, body["closed_at"] is not None, "the slow body's connection left open")
        soft(check_equal, _status_of(steady), 201, "a body at 2 KiB per 10 s: %r"
             % steady["received"][:300])
        soft(check, idle["closed_at"] is None and _status_of(idle) == 200,
             "a keep-alive connection idle for %d s after its answer was closed" % limit_s)
        if idle["closed_at"] is None:
            idle["sock"].setblocking(True)
            idle["sock"].settimeout(5)
            idle["sock"].sendall(request_bytes("GET", "/healthz"))
            again = idle["sock"].recv(65536)
            soft(check, again.startswith(b"HTTP/1.1 200"), "the idle connection, used again: %r"
                 % again[:100])
        soft.done()
    finally:
        for client in clients:
            client["sock"].close()
