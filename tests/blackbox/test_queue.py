"""The waiting room (API.md section 6): joining (idempotent, 409/404/429), polling, FIFO under
1,000 concurrent joins, the admission rate and its smoothness measured on the server's own
admission times, max_active and complete, estimated_wait_s (a quiet room, a sale's start, full
max_active slots), abandonment, every refusal of an admission token on
a hold and on a booking, rejoining after a token expired, and positions and admissions kept
across SIGTERM and kill -9."""

import base64
import hashlib
import hmac
import json
import os
import sqlite3
import time

import harness

from harness import (Client, Server, check, check_equal, create_event, expect, run_threads,
                     uid, user)

SECRET = "queue-test-secret-0123456789abcdef"
SERVER_OPTIONS = {"extra_args": ["--token-secret", SECRET]}
WEIGHT = 3.0


def room_event(c, **room):
    event_id = uid("room")
    settings = {"enabled": True}
    settings.update(room)
    create_event(c, event_id, sections=[{"id": "F", "price": 100,
                                         "rows": [{"id": "A", "seats": 50}]}],
                 waiting_room=settings)
    return event_id


def join(c, event_id, user_id, status=None):
    response = c.post("/v1/events/%s/queue" % event_id, {"user_id": user_id})
    if status is not None:
        return expect(response, status, what="join %s" % user_id)
    check(response.status in (200, 201), "join %s: %r" % (user_id, response))
    return response.json


def poll(c, event_id, ticket):
    return expect(c.get("/v1/events/%s/queue/%s" % (event_id, ticket)), 200, what="poll")


def complete(c, event_id, ticket):
    return expect(c.post("/v1/events/%s/queue/%s/complete" % (event_id, ticket)), 200,
                  what="complete")


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims, secret=SECRET, alg="HS256", digest=hashlib.sha256, header=None):
    """A token spelled as the server spells its own (compact JSON, claims in its order)."""
    head = header if header is not None else {"alg": alg, "typ": "JWT"}
    body = {k: claims[k] for k in ("sub", "evt", "iat", "exp", "jti")}
    signing = (b64(json.dumps(head, separators=(",", ":")).encode()) + "." +
               b64(json.dumps(body, separators=(",", ":")).encode()))
    if digest is None:
        return signing + "."
    signature = hmac.new(secret.encode(), signing.encode(), digest).digest()
    return signing + "." + b64(signature)


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def admitted(c, event_id, user_id, limit_s=10.0, rejoin_expired=False):
    """Joins and polls until admitted; returns the answer with the token. With rejoin_expired
    (a room of 1 s tokens), a token that lapsed before the poll saw it is legitimate: exp is
    iat + token_ttl_s with iat rounded down, so a 1 s token may live a few milliseconds; the
    user then joins again, as a client would."""
    answer = join(c, event_id, user_id)
    deadline = time.monotonic() + limit_s
    while answer["status"] != "admitted":
        check(time.monotonic() < deadline, "%s not admitted: %r" % (user_id, answer))
        if rejoin_expired and answer["status"] == "expired":
            answer = join(c, event_id, user_id, 201)
            continue
        time.sleep(0.05)
        answer = poll(c, event_id, answer["ticket"])
    return answer


def hold_with(c, event_id, user_id, seat, token=None, header=None):
    body = {"user_id": user_id, "seats": [seat]}
    if token is not None:
        body["admission_token"] = token
    headers = {"Admission-Token": header} if header is not None else None
    return c.post("/v1/events/%s/holds" % event_id, body, headers=headers)


def book_with(c, event_id, user_id, seat, token=None, header=None):
    body = {"user_id": user_id, "seats": [{"id": seat, "version": 1}], "payment_ref": "pi_q"}
    if token is not None:
        body["admission_token"] = token
    headers = {"Admission-Token": header} if header is not None else None
    return c.post("/v1/events/%s/bookings" % event_id, body, headers=headers)


# ---- joining and polling ----


def test_join_poll_and_errors(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=0.001, max_waiting=3)
    summary = expect(c.get("/v1/events/%s" % event_id), 200)
    check_equal(summary["waiting_room"], {"enabled": True, "admit_per_s": 0.001,
                                          "token_ttl_s": 900, "max_active": 0,
                                          "abandon_after_s": 300, "max_waiting": 3},
                "the room's settings")
    first = join(c, event_id, "a", 201)
    check_equal((first["status"], first["position"]), ("waiting", 1),
                "a join answers its place, even in an idle room")
    check(first["estimated_wait_s"] >= 1, "an estimate: %r" % first)
    check(first["ticket"].startswith("q_") and len(first["ticket"]) >= 26, "ticket id")
    ticket = first["ticket"]
    first = admitted(c, event_id, "a")   # the idle room's bucket admits the first at once
    check_equal(first["ticket"], ticket, "the same ticket, admitted")
    claims = claims_of(first["admission_token"])
    check_equal((claims["sub"], claims["evt"], claims["jti"]), ("a", event_id, first["ticket"]),
                "the token's claims")
    check_equal(claims["exp"] - claims["iat"], 900, "exp - iat")
    check(claims["iat"] <= time.time(), "iat never in the future")
    second = join(c, event_id, "b", 201)
    check_equal((second["status"], second["position"]), ("waiting", 1), "second joiner")
    check(second["estimated_wait_s"] >= 1, "an estimate: %r" % second)
    check_equal(join(c, event_id, "b", 200), second, "joining again answers the same ticket")
    check_equal(join(c, event_id, "a", 200)["ticket"], first["ticket"], "admitted joins again")
    check_equal(poll(c, event_id, first["ticket"]), first, "the same token at every poll")
    join(c, event_id, "c", 201)
    join(c, event_id, "d", 201)
    expect(c.post("/v1/events/%s/queue" % event_id, {"user_id": "e"}), 429, "waiting_room_full")
    plain = uid("plain")
    create_event(c, plain)
    expect(c.post("/v1/events/%s/queue" % plain, {"user_id": "a"}), 409, "waiting_room_disabled")
    expect(c.post("/v1/events/nope/queue", {"user_id": "a"}), 404, "event_not_found")
    expect(c.post("/v1/events/%s/queue" % event_id, {}), 400, "invalid_request", field="user_id")
    expect(c.get("/v1/events/%s/queue/q_nope" % event_id), 404, "ticket_not_found")
    other = room_event(c)
    expect(c.get("/v1/events/%s/queue/%s" % (other, second["ticket"])), 404, "ticket_not_found",
           what="another event's ticket")
    expect(c.post("/v1/events/%s/queue/q_nope/complete" % event_id), 404, "ticket_not_found")
    rounded = room_event(c, token_ttl_s=0.5)
    check_equal(expect(c.get("/v1/events/%s" % rounded), 200)["waiting_room"]["token_ttl_s"], 1,
                "a fractional token_ttl_s is rounded up to whole seconds")
    token = admitted(c, rounded, "r", rejoin_expired=True)["admission_token"]
    check_equal(claims_of(token)["exp"] - claims_of(token)["iat"], 1, "exp - iat, rounded up")
    for field, value in (("admit_per_s", 0), ("admit_per_s", "x"), ("token_ttl_s", 0),
                         ("max_active", -1), ("abandon_after_s", 0), ("max_waiting", 0),
                         ("enabled", "yes")):
        response = c.post("/v1/events", {"id": uid("bad"), "sections": [
            {"id": "F", "price": 1, "rows": [{"id": "A", "seats": 1}]}],
            "waiting_room": {"enabled": True, field: value}})
        expect(response, 400, "invalid_request", field="waiting_room." + field,
               what="%s %r" % (field, value))


def test_idempotency_key_on_join(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=0.001)
    join(c, event_id, "first")
    headers = {"Idempotency-Key": uid("k")}
    one = c.post("/v1/events/%s/queue" % event_id, {"user_id": "u"}, headers=headers)
    two = c.post("/v1/events/%s/queue" % event_id, {"user_id": "u"}, headers=headers)
    check_equal((one.status, two.status), (201, 201), "a repeated key answers the first")
    check_equal(one.json, two.json, "the same answer")


def test_fifo_under_1000_concurrent_joins(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=0.001)
    admitted(c, event_id, "head")   # the bucket's one unit: everyone below waits
    threads, each = 50, 20

    def joiner(index, barrier):
        client = Client(server.port)
        barrier.wait()
        return [join(client, event_id, "t%d-%d" % (index, i), 201) for i in range(each)]

    results = run_threads(threads, joiner)
    tickets = [answer for answers in results for answer in answers]
    check_equal(len({t["ticket"] for t in tickets}), threads * each, "distinct tickets")
    positions = sorted(t["position"] for t in tickets)
    check_equal(positions, list(range(1, threads * each + 1)),
                "positions at join are 1..1000, each once")
    for answers in results:
        joined = [a["position"] for a in answers]
        check_equal(joined, sorted(joined), "one client's joins are in its order")
    # Polled now, everyone keeps the place the join gave (nobody ahead has left).
    for answer in tickets[::37]:
        check_equal(poll(c, event_id, answer["ticket"])["position"], answer["position"],
                    "position at poll")


# ---- admission ----


def test_admission_rate_and_smoothness():
    """200 admissions in 10 s at 20/s (within 5%), read from the server's own admission times
    in its tables; at most max(1, 20/10) = 2 at one instant, also after the idle start."""
    server = Server(extra_args=["--token-secret", SECRET]).start()
    c = server.client()
    rate = 20
    event_id = room_event(c, admit_per_s=rate)
    time.sleep(1.0)   # idle: the bucket is full
    for i in range(300):
        join(c, event_id, "r%d" % i, 201)
    time.sleep(11.5)
    if harness.STORE_URL:
        times = harness.postgres_column(
            server.data_dir, "SELECT admitted_at FROM tickets WHERE event_id = '%s'"
            " AND admitted_at IS NOT NULL ORDER BY admitted_at" % event_id.replace("'", "''"))
    else:
        database = sqlite3.connect("file:%s?mode=ro" % os.path.join(server.data_dir,
                                                                    "holdfast.db"), uri=True)
        times = [row[0] for row in database.execute(
            "SELECT admitted_at FROM tickets WHERE event_id = ? AND admitted_at IS NOT NULL"
            " ORDER BY admitted_at", (event_id,))]
        database.close()
    check(len(times) >= 200, "admissions recorded: %d" % len(times))
    start = times[0]
    in_ten = [t for t in times if start + 500 <= t < start + 10500]
    check(190 <= len(in_ten) <= 210, "admissions in 10 s at %d/s: %d" % (rate, len(in_ten)))
    same_instant = max(times.count(t) for t in set(times))
    check(same_instant <= 2, "at most 2 admitted at one instant, saw %d" % same_instant)
    check(times.count(start) <= 2, "the idle start admits at most 2 at once")
    window = max(sum(1 for u in times if t <= u < t + 100) for t in times)
    check(window <= 4, "at most 4 admissions within 100 ms, saw %d" % window)
    server.stop()


def test_max_active_and_complete(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=1000, max_active=2)
    answers = [join(c, event_id, "m%d" % i, 201) for i in range(4)]
    time.sleep(0.2)
    statuses = [poll(c, event_id, a["ticket"])["status"] for a in answers]
    check_equal(statuses, ["admitted", "admitted", "waiting", "waiting"], "two admitted")
    check_equal(poll(c, event_id, answers[2]["ticket"])["position"], 1, "the next in line")
    token = poll(c, event_id, answers[0]["ticket"])["admission_token"]
    expect(hold_with(c, event_id, "m0", "F-A-1", token), 201, what="hold before complete")
    done = complete(c, event_id, answers[0]["ticket"])
    check_equal(done, {"ticket": answers[0]["ticket"], "status": "completed"}, "completed")
    check_equal(complete(c, event_id, answers[0]["ticket"]), done, "complete repeated")
    check_equal(poll(c, event_id, answers[2]["ticket"])["status"], "admitted",
                "the freed slot goes to the next at once")
    check_equal(poll(c, event_id, answers[3]["ticket"])["position"], 1, "the rest move up")
    expect(hold_with(c, event_id, "m0", "F-A-2", token), 403, "admission_invalid",
           what="a completed ticket's token")


def test_abandonment(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=1000, max_active=1, abandon_after_s=1.5)
    admitted(c, event_id, "holder")
    gone = join(c, event_id, "gone", 201)
    kept = join(c, event_id, "kept", 201)
    check_equal(kept["position"], 2, "behind the one who will leave")
    started = time.monotonic()
    while time.monotonic() - started < 2.2:   # polled every 0.2 s, well within 1.5 s
        time.sleep(0.2)
        answer = poll(c, event_id, kept["ticket"])
    check_equal(poll(c, event_id, gone["ticket"]), {"ticket": gone["ticket"],
                                                     "status": "abandoned"}, "not polled")
    check_equal((answer["status"], answer["position"]), ("waiting", 1), "polled, moved up")
    rejoined = join(c, event_id, "gone", 201)
    check(rejoined["ticket"] != gone["ticket"], "an abandoned user gets a new ticket")
    check_equal(rejoined["position"], 2, "at the back")


# ---- the admission token ----


def test_every_token_refusal(server):
    c = server.client()
    event_id = room_event(c, admit_per_s=1000)
    other_event = room_event(c, admit_per_s=1000)
    good = admitted(c, event_id, "alice")
    token = good["admission_token"]
    claims = claims_of(token)
    bob = admitted(c, event_id, "bob")
    elsewhere = admitted(c, other_event, "alice")["admission_token"]
    parts = token.split(".")
    tampered_claims = dict(claims, sub="mallory")
    tampered = parts[0] + "." + jwt(tampered_claims).split(".")[1] + "." + parts[2]
    refusals = [
        ("no token", None, "admission_required"),
        ("empty token", "", "admission_required"),
        ("tampered payload", tampered, "admission_invalid"),
        ("another secret", jwt(claims, secret="another-secret-0123456789"), "admission_invalid"),
        ("alg none", jwt(claims, header={"alg": "none", "typ": "JWT"}, digest=None),
         "admission_invalid"),
        ("alg HS512", jwt(claims, alg="HS512", digest=hashlib.sha512), "admission_invalid"),
        ("expired", jwt(dict(claims, iat=claims["iat"] - 1000, exp=int(time.time()) - 1)),
         "admission_expired"),
        ("another user's", bob["admission_token"], "admission_invalid"),
        ("another event's", elsewhere, "admission_invalid"),
        ("10 KB", "a" * 10240, "admission_invalid"),
        ("not a JWT", "garbage", "admission_invalid"),
    ]
    seat = 10
    for what, value, code in refusals:
        seat += 1
        for kind, send in (("hold", hold_with), ("booking", book_with)):
            expect(send(c, event_id, "alice", "F-A-%d" % seat, value), 403, code,
                   what="%s on a %s" % (what, kind))
            if value:
                expect(send(c, event_id, "alice", "F-A-%d" % seat, header=value), 403, code,
                       what="%s in the header on a %s" % (what, kind))
    # The same token serves several holds and a booking, in the body or the header.
    expect(hold_with(c, event_id, "alice", "F-A-1", token), 201, what="hold with the token")
    expect(hold_with(c, event_id, "alice", "F-A-2", header=token), 201, what="token in header")
    expect(book_with(c, event_id, "alice", "F-A-3", token), 201, what="booking with the token")
    # The body wins over the header.
    expect(hold_with(c, event_id, "alice", "F-A-4", token, header="garbage"), 201,
           what="good body, bad header")
    expect(hold_with(c, event_id, "alice", "F-A-5", "garbage", header=token), 403,
           "admission_invalid", what="bad body, good header")
    # A completed ticket's token stops working.
    complete(c, event_id, bob["ticket"])
    expect(hold_with(c, event_id, "bob", "F-A-6", bob["admission_token"]), 403,
           "admission_invalid", what="completed")
    # An event without a room ignores tokens.
    plain = uid("plain")
    create_event(c, plain)
    expect(c.post("/v1/events/%s/holds" % plain, {"user_id": "x", "seats": ["FLOOR-A-1"],
                                                  "admission_token": "garbage"}), 201,
           what="no room: the token is ignored")


def test_expiry_and_rejoin(server):
    c = server.client()
    # iat is the admission's second rounded down, so a 1 s token may lapse within
    # milliseconds of the admission, before a poll on a busy machine sees it: 3 s leaves 2 s.
    event_id = room_event(c, admit_per_s=1000, token_ttl_s=3)
    first = admitted(c, event_id, "eve")
    check_equal(parse_seconds(first["expires_at"]), claims_of(first["admission_token"])["exp"],
                "expires_at is the token's exp")
    time.sleep(max(0.0, parse_seconds(first["expires_at"]) - time.time()) + 0.3)
    expect(hold_with(c, event_id, "eve", "F-A-1", first["admission_token"]), 403,
           "admission_expired", what="a token past its exp")
    check_equal(poll(c, event_id, first["ticket"]), {"ticket": first["ticket"],
                                                      "status": "expired"}, "expired ticket")
    again = join(c, event_id, "eve", 201)
    check(again["ticket"] != first["ticket"], "a new ticket after the token expired")


def parse_seconds(text):
    import datetime
    return int(datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp())


# ---- restarts ----


def test_restart_and_kill_keep_positions_and_admissions():
    server = Server(extra_args=["--token-secret", SECRET]).start()
    c = server.client()
    event_id = room_event(c, admit_per_s=0.001)
    head = admitted(c, event_id, "head")
    waiting = [join(c, event_id, "w%d" % i, 201) for i in range(10)]
    complete(c, event_id, waiting[3]["ticket"])
    before = {t["ticket"]: poll(c, event_id, t["ticket"]) for t in [head] + waiting}
    capped = room_event(c, admit_per_s=5, max_active=1)
    first = admitted(c, capped, "first")
    second = join(c, capped, "second", 201)
    check_equal(second["status"], "waiting", "behind max_active")
    server.stop()
    server = server.restart()
    c = server.client()
    # Admissions resume after a restart: the freed slot goes to the next within the bucket's
    # refill (0.2 s at 5/s).
    complete(c, capped, first["ticket"])
    deadline = time.monotonic() + 5.0
    while poll(c, capped, second["ticket"])["status"] != "admitted":
        check(time.monotonic() < deadline, "admitted after a restart")
        time.sleep(0.05)
    for ticket, answer in before.items():
        after = poll(c, event_id, ticket)
        if answer["status"] == "waiting":
            check_equal(after["position"], answer["position"], "position after SIGTERM")
            check_equal(after["status"], "waiting", "status after SIGTERM")
        else:
            check_equal(after, answer, "ticket after SIGTERM")
    later = [join(c, event_id, "k%d" % i, 201) for i in range(5)]
    check_equal(later[0]["position"], 10, "joins go on at the back")
    server.kill()
    server = server.restart()
    c = server.client()
    for answer in later:
        check_equal(poll(c, event_id, answer["ticket"])["position"], answer["position"],
                    "position after kill -9")
    check_equal(poll(c, event_id, head["ticket"]), head, "the admission after kill -9")
    server.stop()


def test_a_version_5_store_is_migrated():
    """A data directory written before waiting rooms (schema version 5) starts, gains the
    table tickets and keeps what it had; its new rooms' lines survive a restart."""
    harness.skip_on_postgres("the test writes an old SQLite file (holdfast.db) and checks its migration")
    server = Server(extra_args=["--token-secret", SECRET]).start()
    c = server.client()
    plain = uid("plain")
    create_event(c, plain)
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    database.execute("DROP TABLE tickets")
    database.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    database.commit()
    database.close()
    server = server.restart()
    c = server.client()
    expect(c.get("/v1/events/%s" % plain), 200, what="the old event is kept")
    event_id = room_event(c, admit_per_s=0.001)
    admitted(c, event_id, "a")
    waiting = join(c, event_id, "b", 201)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(poll(c, event_id, waiting["ticket"])["position"], 1, "the line after a restart")
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    version = database.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    database.close()
    check_equal(version, ("13",), "the schema version after the migration")


# ---- estimated_wait_s (API.md section 6: ceil(position / r), r = min(admit_per_s, A / T)) ----


def ceil_div(numerator, denominator):
    return -(-numerator // denominator)


def test_estimate_in_a_quiet_room(server):
    """At admit_per_s 0.1, positions 1 to 3 behind the first admission are told 10, 20 and
    30 s, at the join and at later polls (issue 27: one admission in the room's first second
    was taken for a rate of 1/s, and they were told 1, 2 and 3 s)."""
    c = server.client()
    event_id = room_event(c, admit_per_s=0.1)
    first = join(c, event_id, "a", 201)
    check_equal(first["estimated_wait_s"], 10, "before any admission r is admit_per_s")
    admitted(c, event_id, "a")
    answers = [join(c, event_id, u, 201) for u in ("b", "c", "d")]
    check_equal([(a["position"], a["estimated_wait_s"]) for a in answers],
                [(1, 10), (2, 20), (3, 30)], "the joins' estimates at 0.1/s")
    time.sleep(1.2)
    polled = [poll(c, event_id, a["ticket"]) for a in answers]
    check_equal([(p["position"], p["estimated_wait_s"]) for p in polled],
                [(1, 10), (2, 20), (3, 30)], "the polls' estimates a second later")


def test_estimate_early_in_a_sale():
    """At 20/s, 1.5 s into the sale, a waiting ticket at position p is told ceil(p / 20) s
    (allowing a rate of 19/s for a late timer), never less: the admissions since the first
    over the time since it (issue 27: whole seconds counted from the first admission's, so
    position 57 was told 19 s and was admitted after 3)."""
    server = Server(extra_args=["--token-secret", SECRET]).start()
    c = server.client()
    event_id = room_event(c, admit_per_s=20)
    started = time.monotonic()
    head = join(c, event_id, "head", 201)   # the idle room admits 2 at once, then 20/s

    def joiner(index, barrier):
        client = Client(server.port)
        barrier.wait()
        return [join(client, event_id, "s%d-%d" % (index, i), 201) for i in range(25)]

    tickets = [a for answers in run_threads(10, joiner) for a in answers] + [head]
    time.sleep(max(0.0, 1.5 - (time.monotonic() - started)))
    check(time.monotonic() - started < 3.0, "the joins took %.1f s: too slow to see the start"
          % (time.monotonic() - started))
    waiting = [a for a in (poll(c, event_id, t["ticket"]) for t in tickets)
               if a["status"] == "waiting"]
    check(len(waiting) >= 150, "most still wait: %d" % len(waiting))
    for answer in waiting:
        position, estimate = answer["position"], answer["estimated_wait_s"]
        check(ceil_div(position, 20) <= estimate <= ceil_div(position, 19),
              "position %d told %d s at 20/s" % (position, estimate))
    server.stop()


def test_estimate_while_max_active_is_full(server):
    """While every max_active slot is taken r is at most max_active / token_ttl_s: with 2
    slots of 60 s tokens, positions 1 and 2 are told 30 and 60 s, and still after a slot is
    freed and taken again (issue 27: position 1 was told 2 s for 36 s)."""
    c = server.client()
    event_id = room_event(c, admit_per_s=1000, max_active=2, token_ttl_s=60)
    answers = [join(c, event_id, "f%d" % i, 201) for i in range(5)]
    time.sleep(0.2)
    polled = [poll(c, event_id, a["ticket"]) for a in answers]
    check_equal([p["status"] for p in polled], ["admitted"] * 2 + ["waiting"] * 3, "two slots")
    check_equal([(p["position"], p["estimated_wait_s"]) for p in polled[2:]],
                [(1, 30), (2, 60), (3, 90)], "the estimates while the slots are full")
    complete(c, event_id, answers[0]["ticket"])
    polled = [poll(c, event_id, a["ticket"]) for a in answers[2:]]
    check_equal(polled[0]["status"], "admitted", "the freed slot is taken at once")
    check_equal([(p["position"], p["estimated_wait_s"]) for p in polled[1:]],
                [(1, 30), (2, 60)], "full again: the same cap")
