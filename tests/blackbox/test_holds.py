"""Holds: creation, every error, limits, replace_existing (API.md section 3)."""

import json
import time

from harness import (Soft, RES_ID_RE, check, check_counts, check_equal, check_pool, commit,
                     create_event, expect, get_event, get_hold, hold, now_ms, parse_time,
                     post_hold, release, seat_state, uid, user)

WEIGHT = 2.0

# The standard event: FLOOR (45000) rows A and B of 20, BALC (12000) row A of 10, pool GA of 5
# at 9900. 50 seats.


def _event(c, **fields):
    event_id = uid("hold")
    create_event(c, event_id, **fields)
    return event_id


def test_hold_object(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    before = now_ms()
    response = post_hold(c, event_id, u1, ["FLOOR-A-10", "FLOOR-A-11"], {"GA": 2}, ttl_s=300)
    after = now_ms()
    h = expect(response, 201)
    check(RES_ID_RE.match(h.get("reservation_id", "")), "reservation_id %r" % h.get(
        "reservation_id"))
    check_equal(h.get("event"), event_id, "event")
    check_equal(h.get("user_id"), u1, "user_id")
    check_equal(h.get("status"), "held", "status")
    check_equal(h.get("seats"), ["FLOOR-A-10", "FLOOR-A-11"], "seats")
    check_equal(h.get("pools"), {"GA": 2}, "pools")
    check_equal(h.get("total"), 109800, "total = 2 x 45000 + 2 x 9900")
    check_equal(h.get("currency"), "USD", "currency")
    created = parse_time(h.get("created_at"), "created_at")
    expires = parse_time(h.get("expires_at"), "expires_at")
    check_equal(expires - created, 300000, "expires_at - created_at")
    check(before - 1000 <= created <= after + 1000, "created_at %d not near now (%d..%d)" % (
        created, before, after))
    check(295000 <= h.get("expires_in_ms", -1) <= 300000, "expires_in_ms %r" % h.get(
        "expires_in_ms"))
    check(h.get("order_id") is None, "no order_id on a held hold: %r" % h)
    again = get_hold(c, h["reservation_id"])
    for key in ("reservation_id", "event", "user_id", "status", "seats", "pools", "total",
                "currency", "created_at", "expires_at"):
        check_equal(again.get(key), h[key], "GET hold %s" % key)
    check(0 < again["expires_in_ms"] <= h["expires_in_ms"], "expires_in_ms counts down")
    summary = check_counts(c, event_id, 48, 2, 0)
    check_equal(summary["sections"][0]["counts"], {"available": 38, "held": 2, "sold": 0},
                "FLOOR counts")
    check_pool(c, event_id, "GA", 3, 2, 0)
    check_equal(seat_state(c, event_id, "FLOOR-A-10"), ("held", 2), "seat")
    # Ids are unguessable: a second hold has another random id.
    h2 = hold(c, event_id, u1, ["FLOOR-A-12"])
    check(h2["reservation_id"] != h["reservation_id"], "distinct ids")
    expect(c.get("/v1/holds/res_%s" % ("0" * 32)), 404, "hold_not_found")
    expect(c.get("/v1/holds/nonsense"), 404, "hold_not_found")


def test_totals_and_shapes(server):
    c = server.client()
    event_id = _event(c)
    h = hold(c, event_id, user(), ["FLOOR-B-1", "BALC-A-3"], {"GA": 1})
    check_equal(h["total"], 45000 + 12000 + 9900, "total across sections and a pool")
    seats_only = hold(c, event_id, user(), ["BALC-A-1"])
    check_equal(seats_only["total"], 12000, "total of a seat")
    check(seats_only.get("pools") in ({}, None), "no pools: %r" % seats_only.get("pools"))
    pools_only = hold(c, event_id, user(), pools={"GA": 3})
    check_equal(pools_only["total"], 3 * 9900, "total of pool units")
    check(pools_only.get("seats") in ([], None), "no seats: %r" % pools_only.get("seats"))
    check_equal(pools_only["pools"], {"GA": 3}, "pools")


def test_default_ttl(server):
    c = server.client()
    event_id = _event(c, hold_ttl_s=120)
    h = hold(c, event_id, user(), ["FLOOR-A-1"])
    check_equal(parse_time(h["expires_at"]) - parse_time(h["created_at"]), 120000,
                "default ttl is the event's hold_ttl_s")
    h = hold(c, event_id, user(), ["FLOOR-A-2"], ttl_s=360)
    check_equal(parse_time(h["expires_at"]) - parse_time(h["created_at"]), 360000,
                "ttl_s equal to max_hold_s is allowed")
    expect(post_hold(c, event_id, user(), ["FLOOR-A-3"], ttl_s=360.5), 400, "invalid_request",
           field="ttl_s", what="ttl_s above max_hold_s")


def test_all_or_nothing(server):
    c = server.client()
    event_id = _event(c)
    u1, u2, u3 = user(), user(), user()
    hold(c, event_id, u1, ["FLOOR-A-1"])
    h2 = hold(c, event_id, u2, ["FLOOR-A-3"])
    commit(c, h2["reservation_id"], u2)
    response = post_hold(c, event_id, u3, ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4"],
                         {"GA": 1})
    error = expect(response, 409, "seats_unavailable")["error"]
    check_equal(sorted(error.get("seats") or []), ["FLOOR-A-1", "FLOOR-A-3"],
                "exactly the taken seats")
    check_equal(len(error["seats"]), 2, "no seat listed twice")
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("available", 1), "FLOOR-A-2 untouched")
    check_equal(seat_state(c, event_id, "FLOOR-A-4"), ("available", 1), "FLOOR-A-4 untouched")
    check_counts(c, event_id, 48, 1, 1)
    check_pool(c, event_id, "GA", 5, 0, 0)
    # The failed request did not count towards anything: u3 can hold the free ones.
    h3 = hold(c, event_id, u3, ["FLOOR-A-2", "FLOOR-A-4"], {"GA": 1})
    check_equal(h3["seats"], ["FLOOR-A-2", "FLOOR-A-4"], "seats")
    # A pool shortfall also rolls the seats back.
    response = post_hold(c, event_id, u3, ["FLOOR-B-1"], {"GA": 5})
    expect(response, 409, "insufficient_quantity")
    check_equal(seat_state(c, event_id, "FLOOR-B-1"), ("available", 1), "FLOOR-B-1 untouched")


def test_seat_not_found(server):
    c = server.client()
    event_id = _event(c)
    asked = ["FLOOR-A-1", "FLOOR-A-21", "NOPE-A-1", "FLOOR-C-1", "FLOOR-A-0"]
    response = post_hold(c, event_id, user(), asked)
    error = expect(response, 404, "seat_not_found")["error"]
    check_equal(sorted(error.get("seats") or []), sorted(asked[1:]), "the unknown seats")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 1), "nothing held")
    check_counts(c, event_id, 50, 0, 0)


def test_pool_errors(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    expect(post_hold(c, event_id, u1, pools={"NOPE": 1}), 404, "pool_not_found")
    expect(post_hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1, "NOPE": 1}), 404,
           "pool_not_found")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 1), "nothing held")
    hold(c, event_id, u1, pools={"GA": 3})
    error = expect(post_hold(c, event_id, u2, pools={"GA": 3}), 409,
                   "insufficient_quantity")["error"]
    check_equal((error.get("pool"), error.get("available")), ("GA", 2), "pool and available")
    hold(c, event_id, u2, pools={"GA": 2})
    error = expect(post_hold(c, event_id, u2, pools={"GA": 1}), 409,
                   "insufficient_quantity")["error"]
    check_equal((error.get("pool"), error.get("available")), ("GA", 0), "pool and available")
    check_pool(c, event_id, "GA", 0, 5, 0)


def test_user_limit(server):
    c = server.client()
    event_id = _event(c, max_seats_per_user=4)
    u1, u2 = user(), user()
    held = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"])
    bought = hold(c, event_id, u1, ["FLOOR-A-3"], {"GA": 1})
    order = commit(c, bought["reservation_id"], u1)
    # u1: 2 held + 2 bought (one of them a pool unit) = 4.
    expect(post_hold(c, event_id, u1, ["FLOOR-A-4"]), 429, "user_limit_exceeded",
           what="seat above the limit")
    expect(post_hold(c, event_id, u1, pools={"GA": 1}), 429, "user_limit_exceeded",
           what="pool unit above the limit")
    check_equal(seat_state(c, event_id, "FLOOR-A-4"), ("available", 1), "nothing held")
    # Another user has a limit of their own; one hold above it fails at once.
    hold(c, event_id, u2, ["FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3", "FLOOR-B-4"])
    expect(post_hold(c, event_id, user(), ["BALC-A-1", "BALC-A-2", "BALC-A-3", "BALC-A-4"],
                     {"GA": 1}), 429, "user_limit_exceeded", what="one hold above the limit")
    # Releasing frees the allowance.
    release(c, held["reservation_id"], u1)
    hold(c, event_id, u1, ["FLOOR-A-5", "FLOOR-A-6"])
    expect(post_hold(c, event_id, u1, ["FLOOR-A-7"]), 429, "user_limit_exceeded",
           what="at the limit again")
    # A cancelled order no longer counts as bought.
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    hold(c, event_id, u1, ["FLOOR-A-7"], {"GA": 1})
    expect(post_hold(c, event_id, u1, ["FLOOR-A-8"]), 429, "user_limit_exceeded",
           what="at the limit after cancel")
    # The limit is per event.
    other_event = _event(c, max_seats_per_user=4)
    hold(c, other_event, u1, ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4"])


def test_no_user_limit_by_default(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    for row, start in (("A", 1), ("A", 11), ("B", 1), ("B", 11)):
        hold(c, event_id, u1, ["FLOOR-%s-%d" % (row, n) for n in range(start, start + 10)])
    check_counts(c, event_id, 10, 40, 0)


def _invalid(c, event_id, body, field, what):
    response = c.post("/v1/events/%s/holds" % event_id, body)
    expect(response, 400, "invalid_request", field=field, what=what)


def test_invalid_requests(server):
    c = server.client()
    soft = Soft()
    event_id = _event(c)
    u1 = user()
    seat = ["FLOOR-A-1"]
    nothing = ("seats", "pools", "best_available")
    cases = [
        ({"user_id": u1}, nothing, "nothing asked"),
        ({"user_id": u1, "seats": []}, nothing, "empty seats"),
        ({"user_id": u1, "seats": [], "pools": {}}, nothing, "empty seats and pools"),
        ({"user_id": u1, "seats": seat * 2}, "seats[1]", "duplicate seat"),
        ({"user_id": u1, "seats": ["FLOOR-A-%d" % n for n in range(1, 12)]}, "seats",
         "11 seats, more than max_seats_per_hold"),
        ({"user_id": u1, "seats": ["FLOOR-A-%d" % n for n in range(1, 9)], "pools": {"GA": 3}},
         "seats", "8 seats and 3 units, more than max_seats_per_hold"),
        ({"user_id": u1, "pools": {"GA": 11}}, "pools",
         "11 units, more than max_seats_per_hold"),
        ({"user_id": u1, "pools": {"GA": 0}}, "pools.GA", "0 units"),
        ({"user_id": u1, "pools": {"GA": -1}}, "pools.GA", "-1 units"),
        ({"user_id": u1, "pools": {"GA": 1.5}}, "pools.GA", "1.5 units"),
        ({"user_id": u1, "pools": ["GA"]}, "pools", "pools as an array"),
        ({"user_id": u1, "seats": "FLOOR-A-1"}, "seats", "seats as a string"),
        ({"user_id": u1, "seats": [7]}, "seats[0]", "a seat as a number"),
        ({"seats": seat}, "user_id", "no user_id"),
        ({"user_id": "", "seats": seat}, "user_id", "empty user_id"),
        ({"user_id": 5, "seats": seat}, "user_id", "numeric user_id"),
        ({"user_id": "u" * 129, "seats": seat}, "user_id", "user_id of 129 bytes"),
        ({"user_id": "é" * 65, "seats": seat}, "user_id",
         "user_id of 65 two-byte characters (130 bytes)"),
        ({"user_id": u1, "seats": seat, "replace_existing": "yes"}, "replace_existing",
         "replace_existing not a boolean"),
    ]
    for ttl in (0, -1, -0.5, 1801, "10"):
        cases.append(({"user_id": u1, "seats": seat, "ttl_s": ttl}, "ttl_s", "ttl_s %r" % (ttl,)))
    for body, field, what in cases:
        soft(_invalid, c, event_id, body, field, what)
    path = "/v1/events/%s/holds" % event_id
    # The message says what is wrong, not only which member.
    for body, words in (({"user_id": u1}, "seats, pools or best_available"),
                        ({"user_id": u1, "seats": seat * 2}, "listed twice"),
                        ({"user_id": u1, "seats": seat, "ttl_s": 1801}, "max_hold_s")):
        message = c.post(path, body).json["error"]["message"]
        soft(check_equal, words in message, True, "message %r names %r" % (message, words))
    soft(expect, c.post(path, raw=b""), 400, "invalid_request", field="user_id",
         what="empty body")
    soft(expect, c.post(path, seat), 400, "invalid_request", field="body", what="array body")
    soft(expect, c.post(path, raw=b"null"), 400, "invalid_request", field="body",
         what="null body")
    check_counts(c, event_id, 50, 0, 0, "nothing held by invalid requests")
    check_pool(c, event_id, "GA", 5, 0, 0)
    # The edges that are valid.
    h = hold(c, event_id, "u" * 128, ["FLOOR-A-1"])
    check_equal(h["user_id"], "u" * 128, "user_id of 128 bytes")
    h = hold(c, event_id, "é" * 64, ["FLOOR-A-2"])
    check_equal(h["user_id"], "é" * 64, "user_id of 64 two-byte characters")
    h = hold(c, event_id, "any string, even / ? # %", ["FLOOR-A-3"])
    check_equal(h["user_id"], "any string, even / ? # %", "user_id with any characters")
    h = hold(c, event_id, u1, ["FLOOR-B-%d" % n for n in range(1, 11)])
    check_equal(len(h["seats"]), 10, "max_seats_per_hold seats")
    h = hold(c, event_id, u1, ["BALC-A-1", "BALC-A-2", "BALC-A-3"], {"GA": 5}, ttl_s=1800)
    check_equal(h["pools"], {"GA": 5}, "3 seats + 5 units")
    soft.done()


def test_replace_existing(server):
    c = server.client()
    event_id = _event(c)
    other_event = _event(c)
    u1, u2 = user(), user()
    h1 = hold(c, event_id, u1, ["FLOOR-A-1"])
    h2 = hold(c, event_id, u1, ["FLOOR-A-2"], {"GA": 1})
    elsewhere = hold(c, other_event, u1, ["FLOOR-A-1"])
    theirs = hold(c, event_id, u2, ["FLOOR-A-5"])
    h3 = hold(c, event_id, u1, ["FLOOR-A-3"], replace_existing=True)
    check_equal(h3["status"], "held", "the new hold")
    check_equal(get_hold(c, h1["reservation_id"])["status"], "released", "first hold")
    check_equal(get_hold(c, h2["reservation_id"])["status"], "released", "second hold")
    check_equal(get_hold(c, elsewhere["reservation_id"])["status"], "held",
                "a hold on another event stays")
    check_equal(get_hold(c, theirs["reservation_id"])["status"], "held",
                "another user's hold stays")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "FLOOR-A-1 free")
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("available", 3), "FLOOR-A-2 free")
    check_counts(c, event_id, 48, 2, 0)
    check_pool(c, event_id, "GA", 5, 0, 0)
    # replace_existing false (the default) keeps the others.
    h4 = hold(c, event_id, u1, ["FLOOR-A-4"], replace_existing=False)
    check_equal(get_hold(c, h3["reservation_id"])["status"], "held", "kept with false")
    # A failing request with replace_existing changes nothing: the old holds stay.
    response = post_hold(c, event_id, u1, ["FLOOR-A-6", "FLOOR-A-5"], replace_existing=True)
    expect(response, 409, "seats_unavailable")
    check_equal(get_hold(c, h3["reservation_id"])["status"], "held", "kept after a failure")
    check_equal(get_hold(c, h4["reservation_id"])["status"], "held", "kept after a failure")
    check_equal(seat_state(c, event_id, "FLOOR-A-6"), ("available", 1), "nothing new held")


def test_replace_existing_same_step(server):
    """The user's old holds are released in the same step: their seats, units and allowance
    are available to the new hold."""
    c = server.client()
    event_id = _event(c, max_seats_per_user=4)
    u1 = user()
    old = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3"], {"GA": 1})
    new = hold(c, event_id, u1, ["FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4"], {"GA": 1},
               replace_existing=True)
    check_equal(get_hold(c, old["reservation_id"])["status"], "released", "old hold")
    check_equal(new["seats"], ["FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4"], "new seats")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "FLOOR-A-1")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "held", "FLOOR-A-2")
    check_counts(c, event_id, 47, 3, 0)
    check_pool(c, event_id, "GA", 4, 1, 0)


def test_fractional_ttl(server):
    c = server.client()
    event_id = _event(c)
    h = hold(c, event_id, user(), ["FLOOR-A-1"], {"GA": 1}, ttl_s=0.5)
    check_equal(parse_time(h["expires_at"]) - parse_time(h["created_at"]), 500,
                "ttl_s 0.5 is 500 ms")
    check(0 < h["expires_in_ms"] <= 500, "expires_in_ms %r" % h["expires_in_ms"])
    time.sleep(0.8)
    again = get_hold(c, h["reservation_id"])
    check_equal((again["status"], again["expires_in_ms"]), ("expired", 0), "after 0.8 s")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "available", "seat free")
    summary = get_event(c, event_id)
    check_equal(summary["counts"]["held"], 0, "held count")


def test_admission_token_ignored_without_room(server):
    c = server.client()
    event_id = _event(c)
    h = hold(c, event_id, user(), ["FLOOR-A-1"], admission_token="not.a.token")
    check_equal(h["status"], "held", "body token ignored")
    response = c.post("/v1/events/%s/holds" % event_id,
                      {"user_id": user(), "seats": ["FLOOR-A-2"]},
                      headers={"Admission-Token": "garbage"})
    expect(response, 201, what="header token ignored")
    h = hold(c, event_id, user(), ["FLOOR-A-3"], unknown_member={"x": [1]}, another=None)
    check_equal(h["seats"], ["FLOOR-A-3"], "unknown members ignored")


def test_non_canonical_seat_ids(server):
    """A seat id is SECTION-ROW-NUMBER exactly: other spellings of a number are no seat."""
    c = server.client()
    event_id = _event(c)
    for spelling in ("FLOOR-A-01", "FLOOR-A-+1", "FLOOR-A-1x", "FLOOR-A-1.0", "FLOOR-A- 1",
                     "FLOOR-A-1 ", "floor-A-1", "FLOOR-A-1-1", "FLOOR--1", "-A-1"):
        response = post_hold(c, event_id, user(), [spelling])
        error = expect(response, 404, "seat_not_found", what="seat %r" % spelling)["error"]
        check_equal(error.get("seats"), [spelling], "the unknown seat %r" % spelling)
    check_counts(c, event_id, 50, 0, 0, "nothing held")
    expect(post_hold(c, event_id, user(), ["FLOOR-A-1", "FLOOR-A-01"]), 404, "seat_not_found",
           what="a seat and a second spelling of it")


def test_user_id_with_nul(server):
    """A user id is compared as the whole string: an embedded NUL never makes it another
    user's id (it may be refused as invalid)."""
    c = server.client()
    event_id = _event(c)
    victim = user("victim")
    h = hold(c, event_id, victim, ["FLOOR-A-1"])
    forged = json.dumps({"user_id": victim + "\u0000evil"})
    for action in ("release", "commit", "extend"):
        response = c.post("/v1/holds/%s/%s" % (h["reservation_id"], action), raw=forged)
        check(response.status in (400, 403), "%s with a NUL-suffixed user id: %r" % (
            action, response))
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "untouched")
    response = c.post("/v1/events/%s/holds" % event_id,
                      raw=json.dumps({"user_id": "a\u0000b", "seats": ["FLOOR-A-2"]}))
    if response.status == 201:
        check_equal(response.json["user_id"], "a\u0000b", "the whole user id is kept")
    else:
        check_equal(response.status, 400, "a NUL in user_id: 201 or 400")
