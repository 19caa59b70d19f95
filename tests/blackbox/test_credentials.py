"""Credentials (API.md section 16): the API key and buyers' user tokens. Every route of the
server, read from the route tables in src/, is tried with no credential, the API key, a user
token as the owner, a user token as another user and a forged token, against the table of who
may do what in docs/API.md (read from there, so the test and the reference cannot disagree; a
route missing from the table, or whose HF_ROUTE_BUYER flag disagrees with it, fails). Tokens
are made by PyJWT (Debian's python3-jwt): its tokens are accepted, its forgeries (another key,
alg none, HS512) and every other refusal reason are refused with 401, the reason and
WWW-Authenticate: Bearer error="invalid_token". Also: user_id filled from the token's sub, the
stream's ?access_token=, Idempotency-Key scoped per user, refusals counted by reason in
/metrics, no token in the log, --user-token-secret's checks and `holdfast token mint`."""

import glob
import os
import re
import socket
import subprocess
import sys
import time

try:
    import jwt
except ImportError:  # Debian's python3-jwt, when python3 is not Debian's own
    sys.path.append("/usr/lib/python3/dist-packages")
    import jwt

import harness

from harness import Server, check, check_equal, create_event, expect, uid, user

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "credentials-api-key-0123456789"
SECRET = "user-token-secret-0123456789abcdef"
SERVER_OPTIONS = {"api_key": KEY,
                  "extra_args": ["--user-token-secret", SECRET, "--access-log"]}
REFUSALS = ("unauthorized", "forbidden", "not_owner")
INVALID_TOKEN = 'Bearer error="invalid_token"'


def token_for(user_id, ttl_s=3600, key=SECRET, algorithm="HS256", **claims):
    now = int(time.time())
    payload = {"sub": user_id, "iat": now, "exp": now + ttl_s}
    payload.update(claims)
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=algorithm)


def bearer(token):
    return {"Authorization": "Bearer " + token}


# ---- the table of who may do what, and the routes of the server ----

def documented_table():
    """{(method, pattern with "{}"): (no credential, API key, owner, other)} from docs/API.md."""
    with open(os.path.join(ROOT, "docs", "API.md"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"<!-- credentials-table[^>]*-->\n(.*?)<!-- /credentials-table -->", text,
                      re.S)
    check(block is not None, "docs/API.md has the credentials table")
    table = {}
    for line in block.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.match(r"^`(GET|POST|PUT|PATCH|DELETE) (\S+)`$", cells[0])
        if not match:
            continue
        pattern = re.sub(r"\{[a-z_]+\}", "{}", match.group(2))
        check((match.group(1), pattern) not in table, "%s listed twice" % cells[0])
        table[(match.group(1), pattern)] = (tuple(cells[1:5]), match.group(2))
    return table


def source_routes():
    """{(method, pattern): flags text} of every route table under src/."""
    routes = {}
    for path in glob.glob(os.path.join(ROOT, "src", "*", "*.c")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for match in re.finditer(r'\{"(GET|POST|PUT|PATCH|DELETE)",\s*"([^"]+)",\s*\w+,([^}]*)',
                                 text):
            routes[(match.group(1), match.group(2))] = match.group(3)
    return routes


def test_table_covers_every_route(server):
    table, routes = documented_table(), source_routes()
    check(len(routes) >= 40, "the route tables were read (%d routes)" % len(routes))
    check_equal(sorted(set(routes) - set(table)), [], "routes missing from docs/API.md's table")
    check_equal(sorted(set(table) - set(routes)), [], "rows of the table no route has")
    for route, flags in routes.items():
        cells = table[route][0]
        public, buyer = "HF_ROUTE_PUBLIC" in flags, "HF_ROUTE_BUYER" in flags
        check_equal(cells[0] == "open", public, "%s %s: public in the table and the source" % route)
        check_equal(not public and cells[2] != "403 forbidden", buyer,
                    "%s %s: a buyer's route in the table and the source" % route)


# ---- the fixtures each row is tried on ----

class Fixtures:
    """An event with seats to hold, an event with a waiting room, one with a waitlist, and for
    each try a fresh hold, order, ticket or waitlist entry of the owner (made with the API
    key)."""

    def __init__(self, server):
        self.server = server
        self.admin = server.client()
        self.owner, self.other = user("owner"), user("other")
        self.event = uid("cred")
        create_event(self.admin, self.event, sections=[
            {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 1000}]}])
        # The staff's changes to an event (close, open, PATCH, DELETE) go to one of its own,
        # so that the holds of later tries still find sales open.
        self.scratch = uid("credscratch")
        create_event(self.admin, self.scratch, sections=[
            {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 10}]}])
        # A cancel (API.md section 13) closes its event for good: it cancels one of its own.
        self.doomed = uid("creddoomed")
        create_event(self.admin, self.doomed, sections=[
            {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 10}]}])
        self.job = expect(self.admin.post("/v1/events/%s/cancel" % self.doomed, {}), 202,
                          what="fixture job")["job_id"]
        self.room = uid("credroom")
        create_event(self.admin, self.room, sections=[
            {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 10}]}],
            waiting_room={"enabled": True})
        self.waitlist_event = uid("credwait")
        create_event(self.admin, self.waitlist_event, sections=[
            {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 10}]}],
            waitlist={"enabled": True})
        # A calendar for its routes, and one of its own for the staff's close and open.
        self.calendar, self.calendar_scratch = uid("credcal"), uid("credcalscratch")
        for calendar in (self.calendar, self.calendar_scratch):
            expect(self.admin.post("/v1/calendars", {
                "id": calendar, "unit": "night", "resources": [{"id": "DBL", "capacity": 5}]}),
                201, what="fixture calendar")
        self.seat = 0

    def next_seat(self):
        self.seat += 1
        return "A-R-%d" % self.seat

    def hold(self):
        body = {"user_id": self.owner, "seats": [self.next_seat()]}
        return expect(self.admin.post("/v1/events/%s/holds" % self.event, body), 201,
                      what="fixture hold")["reservation_id"]

    def order(self):
        hold_id = self.hold()
        return expect(self.admin.post("/v1/holds/%s/commit" % hold_id,
                                      {"user_id": self.owner, "payment_ref": "pi_1"}), 200,
                      what="fixture order")["order_id"]

    def ticket(self):
        response = self.admin.post("/v1/events/%s/queue" % self.room, {"user_id": self.owner})
        check(response.status in (200, 201), "fixture ticket: %r" % response)
        return response.json["ticket"]

    def waitlist_entry(self):
        response = self.admin.post("/v1/events/%s/waitlist" % self.waitlist_event,
                                   {"user_id": self.owner, "quantity": 1})
        check(response.status in (200, 201), "fixture waitlist entry: %r" % response)
        return response.json["waitlist_id"]

    def values(self, method, pattern):
        """The path's parameters for one try."""
        event = self.event
        if "/queue" in pattern:
            event = self.room
        elif pattern.startswith("/v1/events/") and pattern.endswith("/cancel"):
            event = self.doomed
        elif "/waitlist" in pattern:
            event = self.waitlist_event
        elif pattern.endswith(("/close", "/open")) or method in ("PATCH", "DELETE"):
            event = self.scratch
        values = {"event": event, "seat": "A-R-1", "user": self.owner, "user_id": self.owner,
                  "file": "common.js", "fleet": "f_cred", "driver": "d_cred",
                  "ride": "ride_" + "0" * 36, "refund": "ref_" + "0" * 36,
                  "notification": "nt_1_none", "allocation": "no_such_allocation",
                  "job": self.job,
                  "calendar": self.calendar_scratch if pattern.endswith(("/close", "/open"))
                  else self.calendar}
        if "{hold}" in pattern:
            values["hold"] = self.hold()
        if "{order}" in pattern:
            values["order"] = self.order()
        if "{ticket}" in pattern:
            values["ticket"] = self.ticket()
        if "{waitlist}" in pattern:
            values["waitlist"] = self.waitlist_entry()
        return values

    def request(self, method, documented, headers):
        values = self.values(method, documented)
        path = re.sub(r"\{([a-z_]+)\}", lambda m: values[m.group(1)], documented)
        body = None
        if method in ("POST", "PUT", "PATCH"):
            body = {"user_id": self.owner, "payment_ref": "pi_1"}
            if documented.endswith("/holds"):
                body["seats"] = [self.next_seat()]
        client = self.server.client(api_key=None)
        try:
            # The stream lasts: its HEAD is answered as its GET, without the body.
            if documented.endswith("/stream"):
                return client.request("HEAD", path, headers=headers)
            return client.request(method, path, body=body, headers=headers)
        finally:
            client.close()


def judge(response):
    """What a try's answer says about its credential: "401", "403 CODE", or "yes". A HEAD's
    answer (the stream's) has no body: its status alone tells."""
    if not response.body and response.status in (401, 403):
        return "401" if response.status == 401 else "403 (a HEAD)"
    code = response.error.get("code") if response.status >= 400 else None
    if response.status == 401 and code == "unauthorized":
        return "401"
    if response.status == 403 and code in REFUSALS:
        return "403 " + code
    return "yes"


def test_every_route_with_every_credential(server):
    fixtures = Fixtures(server)
    credentials = {
        "no credential": {},
        "API key": {"Authorization": "Bearer " + KEY},
        "owner": bearer(token_for(fixtures.owner)),
        "other": bearer(token_for(fixtures.other)),
    }
    forged = bearer(token_for(fixtures.owner, key="another secret of 16 bytes or more"))
    table = documented_table()
    tried = 0
    for (method, _), (cells, documented) in sorted(table.items()):
        for (name, headers), expected in zip(credentials.items(), cells):
            response = fixtures.request(method, documented, headers)
            seen = judge(response)
            want = "yes" if expected == "open" else expected
            what = "%s %s with %s" % (method, documented, name)
            check(seen == want, "%s: expected %s, got %r" % (what, want, response))
            if seen == "401":
                check_equal(response.header("www-authenticate"), "Bearer", what)
            tried += 1
        response = fixtures.request(method, documented, forged)
        what = "%s %s with a forged token" % (method, documented)
        if cells[0] == "open":
            check(judge(response) == "yes", "%s: %r" % (what, response))
            continue
        check_equal(judge(response), "401", what)
        if response.body:
            check_equal(response.error.get("reason"), "bad_signature", what)
        check_equal(response.header("www-authenticate"), INVALID_TOKEN, what)
    check(tried >= 4 * 40, "every row was tried (%d tries)" % tried)


# ---- the token's own rules ----

def test_pyjwt_forgeries_and_every_reason(server):
    owner = user("reasons")
    now = int(time.time())
    cases = [
        ("another key", token_for(owner, key="not the secret, but long enough"), "bad_signature"),
        ("alg none", jwt.encode({"sub": owner, "iat": now, "exp": now + 60}, None,
                                algorithm="none"), "alg_not_allowed"),
        ("HS512", token_for(owner, algorithm="HS512"), "alg_not_allowed"),
        ("no exp", token_for(owner, exp=None), "missing_claim"),
        ("no sub", token_for(None), "missing_claim"),
        ("past exp", token_for(owner, iat=now - 120, exp=now - 60), "expired"),
        ("iat 61 s ahead", token_for(owner, iat=now + 120, exp=now + 600), "not_yet_valid"),
        ("24 h + 1 s", token_for(owner, iat=now, exp=now + 86401), "lifetime_too_long"),
        ("not a JWT", "not-a-token", "malformed"),
        ("10 KB", token_for(owner, pad="x" * 10000), "malformed"),
    ]
    c = server.client(api_key=None)
    for what, token, reason in cases:
        response = c.get("/v1/events", headers=bearer(token))
        expect(response, 401, "unauthorized", what=what)
        check_equal(response.error.get("reason"), reason, what)
        check_equal(response.header("www-authenticate"), INVALID_TOKEN, what)
    # 24 h exactly, and an iat 30 s ahead, are accepted; so are claims the server ignores.
    for token in (token_for(owner, ttl_s=86400), token_for(owner, iat=now + 30, exp=now + 600),
                  token_for(owner, role="buyer", nbf=now)):
        expect(c.get("/v1/events", headers=bearer(token)), 200, what="a good PyJWT token")


def test_user_id_comes_from_the_token(server):
    admin = server.client()
    event_id = uid("sub")
    create_event(admin, event_id, sections=[{"id": "A", "price": 5,
                                             "rows": [{"id": "R", "seats": 5}]}])
    owner = user("sub")
    c = server.client(api_key=None)
    headers = bearer(token_for(owner))
    held = expect(c.post("/v1/events/%s/holds" % event_id, {"seats": ["A-R-1"]}, headers=headers),
                  201, what="hold without user_id")
    check_equal(held["user_id"], owner, "the hold's user is the token's sub")
    order = expect(c.post("/v1/holds/%s/commit" % held["reservation_id"],
                          {"payment_ref": "pi_sub"}, headers=headers), 200, what="commit")
    check_equal(order["user_id"], owner, "the order's user")
    listed = expect(c.get("/v1/users/%s/orders" % owner, headers=headers), 200, what="orders")
    check_equal([o["order_id"] for o in listed["orders"]], [order["order_id"]], "own orders")
    expect(c.get("/v1/users/%s/orders" % user("x"), headers=headers), 403, "not_owner",
           what="another user's orders")
    # The API key may still act for anyone.
    expect(admin.get("/v1/orders/%s" % order["order_id"]), 200, what="API key reads it")


def test_waiting_room_with_a_user_token(server):
    admin = server.client()
    event_id = uid("tokroom")
    create_event(admin, event_id, sections=[{"id": "A", "price": 5,
                                             "rows": [{"id": "R", "seats": 5}]}],
                 waiting_room={"enabled": True, "admit_per_s": 1000})
    buyer = user("room")
    c = server.client(api_key=None)
    headers = bearer(token_for(buyer))
    ticket = expect(c.post("/v1/events/%s/queue" % event_id, {}, headers=headers), 201,
                    what="join without user_id")["ticket"]
    polled = {}
    for _ in range(100):
        polled = expect(c.get("/v1/events/%s/queue/%s" % (event_id, ticket), headers=headers),
                        200, what="poll")
        if polled["status"] == "admitted":
            break
        time.sleep(0.05)
    check_equal(polled["status"], "admitted", "the buyer is admitted")
    # The hold needs the admission token, for the token's user: user_id left out.
    expect(c.post("/v1/events/%s/holds" % event_id, {"seats": ["A-R-1"]}, headers=headers),
           403, "admission_required", what="a hold without the admission token")
    held = expect(c.post("/v1/events/%s/holds" % event_id,
                         {"seats": ["A-R-1"], "admission_token": polled["admission_token"]},
                         headers=headers), 201, what="a hold with it")
    check_equal(held["user_id"], buyer, "the hold is the buyer's")
    other = bearer(token_for(user("nosy")))
    expect(c.get("/v1/events/%s/queue/%s" % (event_id, ticket), headers=other), 403,
           "not_owner", what="another user's ticket")
    expect(c.post("/v1/events/%s/queue/%s/complete" % (event_id, ticket), headers=other), 403,
           "not_owner", what="completing another user's ticket")


def test_idempotency_key_is_per_user(server):
    admin = server.client()
    event_id = uid("idem")
    create_event(admin, event_id, sections=[{"id": "A", "price": 5,
                                             "rows": [{"id": "R", "seats": 5}]}])
    c = server.client(api_key=None)
    body = {"pools": {}, "seats": ["A-R-1"]}
    first = user("idem")
    h1 = dict(bearer(token_for(first)), **{"Idempotency-Key": "same-key"})
    held = expect(c.post("/v1/events/%s/holds" % event_id, body, headers=h1), 201, what="first")
    again = c.post("/v1/events/%s/holds" % event_id, body, headers=h1)
    expect(again, 201, what="the same buyer's retry")
    check_equal(again.header("idempotent-replayed"), "true", "a replay for the same buyer")
    h2 = dict(bearer(token_for(user("idem2"))), **{"Idempotency-Key": "same-key"})
    other = c.post("/v1/events/%s/holds" % event_id, body, headers=h2)
    expect(other, 409, "seats_unavailable", what="another buyer's same key and body")
    check(other.header("idempotent-replayed") is None, "never another buyer's answer replayed")
    check_equal(held["user_id"], first, "the first hold's user")


def test_stream_takes_access_token(server):
    admin = server.client()
    event_id = uid("stream")
    create_event(admin, event_id, sections=[{"id": "A", "price": 5,
                                             "rows": [{"id": "R", "seats": 2}]}])
    token = token_for(user("stream"))

    def status_of(path):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            return sock.recv(64).split(b" ")[1].decode()

    check_equal(status_of("/v1/events/%s/stream?access_token=%s" % (event_id, token)), "200",
                "a user token in the stream's query")
    check_equal(status_of("/v1/events/%s/stream?access_token=%sx" % (event_id, token)), "401",
                "a bad token in the stream's query")
    check_equal(status_of("/v1/events/%s?access_token=%s" % (event_id, token)), "401",
                "the query is only the stream's")


def test_refusals_counted_and_tokens_never_logged(server):
    c = server.client(api_key=None)
    token = token_for(user("logged"))
    c.get("/v1/events/nope/stream?access_token=" + token + "x")
    c.get("/v1/refunds", headers=bearer(token))
    c.get("/v1/events", headers=bearer(token + "x"))
    metrics = c.get("/metrics").body.decode()
    counts = dict(re.findall(r'^holdfast_auth_refusals_total\{reason="([a-z_]+)"\} (\d+)$',
                             metrics, re.M))
    for reason in ("bad_signature", "forbidden", "missing", "malformed", "expired"):
        check(reason in counts, "reason %s in /metrics" % reason)
    check(int(counts["bad_signature"]) >= 2 and int(counts["forbidden"]) >= 1,
          "refusals counted: %r" % counts)
    check(token.split(".")[2] not in metrics, "no token in /metrics")
    time.sleep(0.2)
    log = server.stderr_text()
    check("/v1/refunds" in log, "the access log is on")
    for part in token.split("."):
        check(part not in log, "no part of a token in the log")


# ---- the command line ----

def _run(arguments, environment=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    env.update(environment or {})
    return subprocess.run([harness.BINARY] + arguments, capture_output=True, text=True,
                          env=env, timeout=harness.timeout(30))


def test_user_token_secret_is_checked():
    data = harness.make_temp_dir()
    base = ["serve", "--listen", "127.0.0.1:%d" % harness.free_port(), "--data", data]
    for arguments, words in [
            (["--user-token-secret", SECRET], "--api-key"),
            (["--api-key", KEY, "--user-token-secret", "short"], "shorter"),
            (["--api-key", KEY, "--user-token-secret", "x" * 1025], "longer")]:
        result = _run(base + arguments)
        check_equal(result.returncode, 2, "exit code of %s" % arguments[-2:])
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and "--user-token-secret" in lines[0] and words in lines[0],
              "one line naming the option: %r" % result.stderr)
    result = _run(base, {"HOLDFAST_USER_TOKEN_SECRET": SECRET})
    check(result.returncode == 2 and "HOLDFAST_USER_TOKEN_SECRET" in result.stderr,
          "the environment's value is checked too: %r" % result.stderr)


def test_token_mint():
    result = _run(["token", "mint", "--user", "u1", "--ttl", "3600", "--user-token-secret",
                   SECRET])
    check_equal(result.returncode, 0, "mint: %r" % result.stderr)
    claims = jwt.decode(result.stdout.strip(), SECRET, algorithms=["HS256"])
    check_equal(claims["sub"], "u1", "sub")
    check_equal(claims["exp"] - claims["iat"], 3600, "the lifetime is --ttl")
    check(abs(claims["iat"] - time.time()) < 5, "iat is now")
    result = _run(["token", "mint", "--user", "u2", "--ttl", "86400"],
                  {"HOLDFAST_USER_TOKEN_SECRET": SECRET})
    check_equal(result.returncode, 0, "the secret from the environment: %r" % result.stderr)
    check_equal(jwt.decode(result.stdout.strip(), SECRET, algorithms=["HS256"])["sub"], "u2",
                "sub")
    for arguments in (["--user", "u", "--ttl", "0"], ["--user", "u", "--ttl", "86401"],
                      ["--user", "u", "--ttl", "1.5"], ["--ttl", "60"], ["--user", "u"],
                      ["--user", "u", "--ttl", "60", "--user-token-secret", "short"]):
        result = _run(["token", "mint"] + arguments
                      + ([] if "--user-token-secret" in arguments
                         else ["--user-token-secret", SECRET]))
        check_equal(result.returncode, 2, "mint %s" % arguments)
        check_equal(len(result.stderr.strip().splitlines()), 1, "one line: %r" % result.stderr)
    check_equal(_run(["token", "mint", "--user", "u", "--ttl", "5"]).returncode, 2,
                "no secret at all")
    check_equal(_run(["token", "nope"]).returncode, 2, "an unknown action")


def test_minted_token_is_accepted():
    server = Server(api_key=KEY, extra_args=["--user-token-secret", SECRET])
    server.start()
    result = _run(["token", "mint", "--user", "u-minted", "--ttl", "60",
                   "--user-token-secret", SECRET])
    c = server.client(api_key=None)
    expect(c.get("/v1/events", headers=bearer(result.stdout.strip())), 200,
           what="a minted token")
    expect(c.get("/v1/refunds", headers=bearer(result.stdout.strip())), 403, "forbidden",
           what="a minted token on a staff route")
    server.stop()
