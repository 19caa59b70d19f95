"""HTTP conventions (API.md section 1): a 405 carries Allow; HEAD is answered wherever GET is,
with the GET's head and no body; a 401 carries WWW-Authenticate: Bearer; OPTIONS answers a
path's methods; with --cors-origin, answers to a listed origin carry its CORS headers and a
preflight needs no API key."""

from harness import (Server, Soft, check, check_equal, create_event, expect, fail,
                     request_bytes, uid)

WEIGHT = 1.0

SMALL = [{"id": "S", "price": 100, "rows": [{"id": "R", "seats": 6}]}]

ORIGIN_A = "https://tickets.example.com"
ORIGIN_B = "http://127.0.0.1:5173"
PREFLIGHT_HEADERS = "Authorization, Content-Type, Idempotency-Key, Admission-Token, Last-Event-ID"


def _methods(text):
    """An Allow-like list as a set of method names."""
    return {part.strip() for part in (text or "").split(",") if part.strip()}


def _read_head(raw, what):
    """The status and headers of the next answer on a raw connection, no body read (HEAD)."""
    try:
        return raw.read_head()
    except EOFError:
        fail("%s: connection closed before an answer" % what)


def _cors_headers(headers):
    return {name: value for name, value in headers.items()
            if name.startswith("access-control-") or name == "vary"}


def _check_no_cors(response, what, vary=False):
    """No CORS header; with vary (a server with --cors-origin) only Vary: Origin, since every
    answer of such a server depends on the request's Origin."""
    expected = {"vary": "Origin"} if vary else {}
    check(_cors_headers(response.headers) == expected, "%s: CORS headers %r where %r were "
          "expected" % (what, _cors_headers(response.headers), expected))


# ---- 405 and OPTIONS on a server without --cors-origin ----

# Paths whose methods no other route is expected to join.
ALLOWED = [
    ("DELETE", "/v1/events", {"GET", "HEAD", "POST", "OPTIONS"}),
    ("POST", "/healthz", {"GET", "HEAD", "OPTIONS"}),
    ("GET", "/v1/holds/res_x/commit", {"POST", "OPTIONS"}),
    ("PUT", "/v1/orders/ord_x/cancel", {"POST", "OPTIONS"}),
    ("POST", "/v1/events/x/seats", {"GET", "HEAD", "OPTIONS"}),
    ("PATCH", "/v1/events/x/stream", {"GET", "HEAD", "OPTIONS"}),
    ("POST", "/", {"GET", "HEAD", "OPTIONS"}),
]


def test_405_carries_allow(server):
    c = server.client()
    soft = Soft()
    for method, path, methods in ALLOWED:
        what = "%s %s" % (method, path)
        response = c.request(method, path)
        if soft(expect, response, 405, "method_not_allowed", what=what) is None:
            continue
        soft(check_equal, _methods(response.header("allow")), methods, "%s: Allow" % what)
    # HEAD on a path without GET is a 405 as well, with the same Allow and no body.
    raw = server.raw()
    raw.send(request_bytes("HEAD", "/v1/holds/res_x/commit") + request_bytes("GET", "/healthz"))
    status, headers = _read_head(raw, "HEAD on a POST route")
    soft(check_equal, status, 405, "HEAD on a POST route: status")
    soft(check_equal, _methods(headers.get("allow")), {"POST", "OPTIONS"},
         "HEAD on a POST route: Allow")
    soft(expect, raw.read_response(), 200, what="GET /healthz after a HEAD's 405")
    # A 404 names no methods.
    response = c.request("DELETE", "/v1/nothing_here")
    soft(expect, response, 404, "not_found", what="DELETE on an unknown path")
    soft(check, response.header("allow") is None, "Allow on a 404: %r" % response.headers)
    soft.done()


def test_options_without_cors(server):
    c = server.client()
    soft = Soft()
    for _, path, methods in ALLOWED:
        response = c.request("OPTIONS", path)
        soft(check_equal, (response.status, response.body), (204, b""), "OPTIONS %s" % path)
        soft(check_equal, _methods(response.header("allow")), methods, "OPTIONS %s: Allow" % path)
        soft(check, response.header("content-length") is None,
             "OPTIONS %s: a 204 with Content-Length" % path)
        soft(_check_no_cors, response, "OPTIONS %s" % path)
    # A preflight to a server without --cors-origin gets no CORS header either.
    response = c.request("OPTIONS", "/v1/events", headers={
        "Origin": ORIGIN_A, "Access-Control-Request-Method": "POST"})
    soft(check_equal, response.status, 204, "preflight without CORS: status")
    soft(_check_no_cors, response, "preflight without CORS")
    response = c.get("/v1/events", headers={"Origin": ORIGIN_A})
    soft(expect, response, 200, what="GET with Origin, CORS off")
    soft(_check_no_cors, response, "GET with Origin, CORS off")
    response = c.request("OPTIONS", "/v1/nothing_here")
    soft(expect, response, 404, "not_found", what="OPTIONS on an unknown path")
    soft.done()


# ---- HEAD ----


def _head_and_get(server, path, what, soft, headers=None):
    """HEAD, then GET, then GET /healthz, pipelined on one connection: the HEAD's head must be
    the GET's, its body empty, and the connection must go on."""
    raw = server.raw()
    raw.send(request_bytes("HEAD", path, headers=headers) + request_bytes("GET", path, headers=headers)
             + request_bytes("GET", "/healthz"))
    head_status, head_headers = _read_head(raw, "HEAD %s" % what)
    response = raw.read_response()
    soft(check_equal, head_status, response.status, "HEAD %s: status" % what)
    soft(check_equal, head_headers.get("content-type"), response.header("content-type"),
         "HEAD %s: Content-Type" % what)
    soft(check_equal, head_headers.get("content-length"), str(len(response.body)),
         "HEAD %s: Content-Length against the GET's body" % what)
    soft(check, len(response.body) > 0, "GET %s: an empty body" % what)
    soft(expect, raw.read_response(), 200, what="GET /healthz after HEAD %s" % what)
    return head_status, head_headers, response


def test_head_like_get(server):
    c = server.client()
    event_id = uid("head")
    create_event(c, event_id, sections=SMALL)
    soft = Soft()
    cases = [
        ("/healthz", 200),
        ("/v1/events", 200),
        ("/v1/events/%s" % event_id, 200),
        ("/v1/events/%s/seats?limit=2" % event_id, 200),
        ("/v1/events/%s/seats/S-R-9" % event_id, 404),
        ("/v1/events/nope_%s" % event_id, 404),
        ("/v1/nothing_here", 404),
        ("/", 200),
        ("/ui/events/%s" % event_id, 200),
        ("/ui/calendars/%s" % event_id, 200),  # the page answers; it says an unknown one
        ("/ui/app.css", 200),
        ("/ui/event.js", 200),
    ]
    for path, status in cases:
        head_status, _, response = _head_and_get(server, path, path, soft)
        soft(check_equal, head_status, status, "HEAD %s: status" % path)
    # The page and its files keep their own types.
    _, headers, _ = _head_and_get(server, "/", "/", Soft())
    soft(check, headers.get("content-type", "").startswith("text/html"),
         "HEAD /: Content-Type %r" % headers.get("content-type"))
    soft.done()


def test_head_of_stream(server):
    c = server.client()
    event_id = uid("hstream")
    create_event(c, event_id, sections=SMALL)
    path = "/v1/events/%s/stream" % event_id
    soft = Soft()
    # The GET's head, from a stream of its own.
    stream = server.raw()
    stream.send(request_bytes("GET", path))
    get_status, get_headers = _read_head(stream, "GET stream")
    stream.close()
    check_equal(get_status, 200, "GET stream: status")
    # Twice on one connection, then another request: no stream opens, the connection goes on.
    raw = server.raw()
    raw.send(request_bytes("HEAD", path) + request_bytes("HEAD", path)
             + request_bytes("GET", "/healthz"))
    for n in range(2):
        status, headers = _read_head(raw, "HEAD stream #%d" % n)
        soft(check_equal, status, 200, "HEAD stream #%d: status" % n)
        for name in ("content-type", "cache-control"):
            soft(check_equal, headers.get(name), get_headers.get(name),
                 "HEAD stream #%d: %s" % (n, name))
        soft(check, "content-length" not in headers and "content-length" not in get_headers,
             "a stream's head with a Content-Length: %r %r" % (headers, get_headers))
    soft(expect, raw.read_response(), 200, what="GET /healthz after HEAD of a stream")
    # HEAD of an unknown event's stream: the GET's 404, without the body.
    _head_and_get(server, "/v1/events/nope_%s/stream" % event_id, "stream of no event", soft)
    soft.done()


# ---- authentication ----


def test_unauthorized_carries_www_authenticate():
    server = Server(api_key="conv-key").start()
    soft = Soft()
    event_id = uid("auth")
    create_event(server.client(), event_id, sections=SMALL)
    anonymous = server.client(api_key=None)
    wrong = server.client(api_key="not-the-key")
    for client, what in ((anonymous, "no key"), (wrong, "wrong key")):
        for method, path in (("GET", "/v1/events"), ("POST", "/v1/events"),
                             ("GET", "/v1/events/%s/stream" % event_id),
                             ("GET", "/v1/nothing_here")):
            label = "%s %s with %s" % (method, path, what)
            response = client.request(method, path)
            if path == "/v1/nothing_here":
                # An unknown route is a 404 whether or not a key is given.
                soft(expect, response, 404, "not_found", what=label)
                soft(check, response.header("www-authenticate") is None,
                     "%s: WWW-Authenticate on a 404" % label)
                continue
            soft(expect, response, 401, "unauthorized", what=label)
            soft(check_equal, response.header("www-authenticate"), "Bearer",
                 "%s: WWW-Authenticate" % label)
    # HEAD is authenticated as GET is.
    raw = server.raw()
    raw.send(request_bytes("HEAD", "/v1/events") + request_bytes("GET", "/healthz"))
    status, headers = _read_head(raw, "HEAD without a key")
    soft(check_equal, (status, headers.get("www-authenticate")), (401, "Bearer"),
         "HEAD without a key")
    soft(expect, raw.read_response(), 200, what="GET /healthz after a HEAD's 401")
    # With the key, or on a public route, no challenge.
    for client, path in ((server.client(), "/v1/events"), (anonymous, "/healthz")):
        response = client.get(path)
        soft(expect, response, 200, what="GET %s" % path)
        soft(check, response.header("www-authenticate") is None,
             "GET %s: WWW-Authenticate on a 200" % path)
    # OPTIONS needs no key.
    response = anonymous.request("OPTIONS", "/v1/events")
    soft(check_equal, response.status, 204, "OPTIONS without a key")
    soft.done()


# ---- CORS ----


def _cors_server():
    return Server(api_key="cors-key", extra_args=["--cors-origin", ORIGIN_A,
                                                  "--cors-origin", ORIGIN_B]).start()


def _check_cors(response, origin, what, soft):
    soft(check_equal, response.header("access-control-allow-origin"), origin,
         "%s: Access-Control-Allow-Origin" % what)
    soft(check_equal, response.header("vary"), "Origin", "%s: Vary" % what)


def test_cors_listed_origins():
    server = _cors_server()
    c = server.client()
    anonymous = server.client(api_key=None)
    event_id = uid("cors")
    create_event(c, event_id, sections=SMALL)
    soft = Soft()
    for origin in (ORIGIN_A, ORIGIN_B):
        headers = {"Origin": origin}
        response = c.get("/v1/events/%s" % event_id, headers=headers)
        soft(expect, response, 200, what="GET event from %s" % origin)
        _check_cors(response, origin, "200 to %s" % origin, soft)
        response = c.get("/v1/events/nope_%s" % event_id, headers=headers)
        soft(expect, response, 404, "event_not_found", what="404 to %s" % origin)
        _check_cors(response, origin, "404 to %s" % origin, soft)
        response = c.get("/v1/nothing_here", headers=headers)
        soft(expect, response, 404, "not_found", what="unknown route to %s" % origin)
        _check_cors(response, origin, "unknown route to %s" % origin, soft)
        response = anonymous.get("/v1/events", headers=headers)
        soft(expect, response, 401, "unauthorized", what="401 to %s" % origin)
        _check_cors(response, origin, "401 to %s" % origin, soft)
        soft(check_equal, response.header("www-authenticate"), "Bearer", "401 to %s" % origin)
        response = c.request("DELETE", "/v1/events", headers=headers)
        soft(expect, response, 405, "method_not_allowed", what="405 to %s" % origin)
        _check_cors(response, origin, "405 to %s" % origin, soft)
        response = c.post("/v1/events", {"id": uid("corsnew"), "sections": SMALL},
                          headers=headers)
        soft(expect, response, 201, what="POST to %s" % origin)
        _check_cors(response, origin, "201 to %s" % origin, soft)
    # A stream to a listed origin, its key in the query as an EventSource passes it.
    raw = server.raw()
    raw.send(request_bytes("GET", "/v1/events/%s/stream?access_token=cors-key" % event_id,
                           headers={"Origin": ORIGIN_A}))
    status, headers = _read_head(raw, "stream to a listed origin")
    soft(check_equal, (status, headers.get("content-type")), (200, "text/event-stream"),
         "stream to a listed origin")
    soft(check_equal, (headers.get("access-control-allow-origin"), headers.get("vary")),
         (ORIGIN_A, "Origin"), "stream to a listed origin: CORS headers")
    raw.close()
    soft.done()


def test_cors_other_origins_get_nothing():
    server = _cors_server()
    c = server.client()
    anonymous = server.client(api_key=None)
    soft = Soft()
    # Byte for byte: a trailing slash, another case, an explicit default port are other origins.
    others = ["https://evil.example", ORIGIN_A + "/", ORIGIN_A.upper(), ORIGIN_A + ":443",
              "null", ""]
    for origin in others:
        for client, status in ((c, 200), (anonymous, 401)):
            response = client.get("/v1/events", headers={"Origin": origin})
            soft(check_equal, response.status, status, "GET from %r" % origin)
            soft(_check_no_cors, response, "GET from %r" % origin, True)
        response = anonymous.request("OPTIONS", "/v1/events", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST"})
        soft(check_equal, response.status, 204, "preflight from %r" % origin)
        soft(_check_no_cors, response, "preflight from %r" % origin, True)
        soft(check_equal, _methods(response.header("allow")), {"GET", "HEAD", "POST", "OPTIONS"},
             "preflight from %r: Allow" % origin)
    response = c.get("/v1/events")
    soft(expect, response, 200, what="GET without Origin")
    soft(_check_no_cors, response, "GET without Origin", True)
    soft.done()


def test_cors_preflight():
    server = _cors_server()
    anonymous = server.client(api_key=None)
    soft = Soft()
    cases = [
        ("/v1/holds/res_x/commit", "POST", {"POST", "OPTIONS"}),
        ("/v1/events", "POST", {"GET", "HEAD", "POST", "OPTIONS"}),
        ("/v1/events/x/stream", "GET", {"GET", "HEAD", "OPTIONS"}),
        ("/v1/holds/res_x", "GET", {"GET", "HEAD", "OPTIONS"}),
    ]
    for path, method, methods in cases:
        what = "preflight %s %s" % (method, path)
        response = anonymous.request("OPTIONS", path, headers={
            "Origin": ORIGIN_B, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"})
        soft(check_equal, (response.status, response.body), (204, b""), what)
        _check_cors(response, ORIGIN_B, what, soft)
        soft(check_equal, _methods(response.header("access-control-allow-methods")), methods,
             "%s: Access-Control-Allow-Methods" % what)
        soft(check_equal, response.header("access-control-allow-headers"), PREFLIGHT_HEADERS,
             "%s: Access-Control-Allow-Headers" % what)
        soft(check_equal, response.header("access-control-max-age"), "600",
             "%s: Access-Control-Max-Age" % what)
        soft(check_equal, _methods(response.header("allow")), methods, "%s: Allow" % what)
    # A plain OPTIONS from a listed origin (no Access-Control-Request-Method) is no preflight.
    response = anonymous.request("OPTIONS", "/v1/events", headers={"Origin": ORIGIN_A})
    soft(check_equal, response.status, 204, "OPTIONS from a listed origin")
    _check_cors(response, ORIGIN_A, "OPTIONS from a listed origin", soft)
    soft(check, response.header("access-control-allow-methods") is None,
         "OPTIONS that is no preflight answered as one: %r" % response.headers)
    # A path no route has is a 404, still with the origin's headers.
    response = anonymous.request("OPTIONS", "/v1/nothing_here", headers={
        "Origin": ORIGIN_A, "Access-Control-Request-Method": "GET"})
    soft(expect, response, 404, "not_found", what="preflight to an unknown path")
    _check_cors(response, ORIGIN_A, "preflight to an unknown path", soft)
    soft.done()
