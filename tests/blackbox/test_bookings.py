"""Optimistic bookings without a hold (API.md section 4): POST /v1/events/{e}/bookings with the
seat versions the client saw; 409 version_conflict when any moved; the hold errors of section 3;
Idempotency-Key; races; restart; cancel."""

from collections import Counter

from harness import (ORD_ID_RE, Server, check, check_counts, check_equal, check_pool, commit,
                     create_event, expect, get_event, hold, now_ms, parse_time, release,
                     run_threads, seat_state, uid, user)

WEIGHT = 2.0

# The standard event: FLOOR (45000) rows A and B of 20, BALC (12000) row A of 10, pool GA of 5
# at 9900. 50 seats.


def _event(c, **fields):
    event_id = uid("book")
    create_event(c, event_id, **fields)
    return event_id


def booking_body(user_id, seats=None, pools=None, payment_ref=None, **extra):
    body = {"user_id": user_id}
    if seats is not None:
        body["seats"] = [{"id": s, "version": v} for s, v in seats]
    if pools is not None:
        body["pools"] = pools
    if payment_ref is not None:
        body["payment_ref"] = payment_ref
    body.update(extra)
    return body


def post_booking(c, event_id, body, headers=None):
    return c.post("/v1/events/%s/bookings" % event_id, body, headers=headers)


def book(c, event_id, user_id, seats=None, pools=None, payment_ref=None):
    return expect(post_booking(c, event_id, booking_body(user_id, seats, pools, payment_ref)),
                  201, what="booking %s %s" % (seats, pools))


def test_booking_order(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 1), "before")
    before = now_ms()
    response = post_booking(c, event_id, booking_body(
        u1, [("FLOOR-A-1", 1), ("BALC-A-2", 1)], {"GA": 2}, "pi_book_1"))
    after = now_ms()
    order = expect(response, 201, what="booking")
    check(ORD_ID_RE.match(order.get("order_id") or ""), "order_id %r" % order.get("order_id"))
    check("reservation_id" in order, "reservation_id member present: %r" % order)
    check_equal(order.get("reservation_id"), None, "reservation_id of a booking")
    check_equal(order.get("event"), event_id, "event")
    check_equal(order.get("user_id"), u1, "user_id")
    check_equal(order.get("status"), "confirmed", "status")
    check_equal(sorted(order.get("seats") or []), ["BALC-A-2", "FLOOR-A-1"], "seats")
    check_equal(order.get("pools"), {"GA": 2}, "pools")
    check_equal(order.get("total"), 45000 + 12000 + 2 * 9900, "total")
    check_equal(order.get("currency"), "USD", "currency")
    check_equal(order.get("payment_ref"), "pi_book_1", "payment_ref")
    created = parse_time(order.get("created_at"), "created_at")
    check(before - 1000 <= created <= after + 1000, "created_at near now")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 2), "FLOOR-A-1 sold, version +1")
    check_equal(seat_state(c, event_id, "BALC-A-2"), ("sold", 2), "BALC-A-2 sold, version +1")
    check_counts(c, event_id, 48, 0, 2)
    check_pool(c, event_id, "GA", 3, 0, 2)
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order, "GET order")
    orders = expect(c.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)["orders"]
    check_equal(orders, [order], "the user's orders")
    # A booking of pool units only, and one without payment_ref.
    pooled = book(c, event_id, u1, pools={"GA": 1})
    check_equal((pooled["seats"] or [], pooled["pools"], pooled["total"]), ([], {"GA": 1}, 9900),
                "pool-only booking")
    plain = book(c, event_id, user(), [("FLOOR-B-20", 1)])
    check_equal(plain.get("payment_ref"), None, "no payment_ref")
    check_pool(c, event_id, "GA", 2, 0, 3)
    # A seat that was held and released is booked at its current version.
    u2 = user()
    h = hold(c, event_id, u2, ["FLOOR-A-5"])
    release(c, h["reservation_id"], u2)
    check_equal(seat_state(c, event_id, "FLOOR-A-5"), ("available", 3), "after hold+release")
    order = book(c, event_id, u2, [("FLOOR-A-5", 3)])
    check_equal(seat_state(c, event_id, "FLOOR-A-5"), ("sold", 4), "booked at version 3")


def test_version_conflict_lists_moved_seats(server):
    c = server.client()
    event_id = _event(c)
    u1, u2, u3 = user(), user(), user()
    hold(c, event_id, u2, ["FLOOR-A-2"])                        # held, version 2
    h = hold(c, event_id, u2, ["FLOOR-A-3"])
    release(c, h["reservation_id"], u2)                          # available, version 3
    book(c, event_id, u3, [("FLOOR-A-4", 1)])                    # sold, version 2
    before = get_event(c, event_id)
    body = booking_body(u1, [("FLOOR-A-1", 1), ("FLOOR-A-2", 1), ("FLOOR-A-3", 1),
                             ("FLOOR-A-4", 1), ("FLOOR-A-6", 1)], {"GA": 1}, "pi_x")
    error = expect(post_booking(c, event_id, body), 409, "version_conflict")["error"]
    listed = sorted(error.get("seats") or [], key=lambda s: s.get("id", ""))
    check_equal(listed, [
        {"id": "FLOOR-A-2", "version": 2, "status": "held"},
        {"id": "FLOOR-A-3", "version": 3, "status": "available"},
        {"id": "FLOOR-A-4", "version": 2, "status": "sold"},
    ], "exactly the moved seats with their current version and status")
    check_equal(len(error["seats"]), 3, "no seat listed twice")
    # All-or-nothing.
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 1), "FLOOR-A-1 untouched")
    check_equal(seat_state(c, event_id, "FLOOR-A-6"), ("available", 1), "FLOOR-A-6 untouched")
    check_equal(get_event(c, event_id), before, "event unchanged")
    check_equal(expect(c.get("/v1/users/%s/orders" % u1), 200)["orders"], [], "no order")
    # A version from the future is a conflict too, reported with the real version.
    error = expect(post_booking(c, event_id, booking_body(u1, [("FLOOR-A-7", 5)])), 409,
                   "version_conflict", what="version ahead")["error"]
    check_equal(error.get("seats"), [{"id": "FLOOR-A-7", "version": 1, "status": "available"}],
                "version ahead")
    # With the current version of a free seat, the booking goes through.
    order = book(c, event_id, u1, [("FLOOR-A-3", 3), ("FLOOR-A-1", 1)])
    check_equal(sorted(order["seats"]), ["FLOOR-A-1", "FLOOR-A-3"], "booked")
    check_equal(seat_state(c, event_id, "FLOOR-A-3"), ("sold", 4), "FLOOR-A-3")


def test_current_version_but_taken(server):
    """The client saw the seat held (version 2) and books at version 2: nothing moved, but the
    seat is not free, so the booking fails with a 409 naming it and changes nothing."""
    c = server.client()
    event_id = _event(c)
    hold(c, event_id, user(), ["FLOOR-B-1"])
    response = post_booking(c, event_id, booking_body(user(), [("FLOOR-B-1", 2), ("FLOOR-B-2", 1)]))
    expect(response, 409)
    check(response.code in ("version_conflict", "seats_unavailable"), "code %r" % response.code)
    listed = response.error.get("seats") or []
    ids = [s if isinstance(s, str) else s.get("id") for s in listed]
    check_equal(ids, ["FLOOR-B-1"], "the taken seat")
    check_equal(seat_state(c, event_id, "FLOOR-B-1"), ("held", 2), "FLOOR-B-1")
    check_equal(seat_state(c, event_id, "FLOOR-B-2"), ("available", 1), "FLOOR-B-2 untouched")


def test_hold_errors_apply(server):
    c = server.client()
    event_id = _event(c, max_seats_per_user=3)
    u1 = user()
    # Unknown seats: 404 listing them.
    response = post_booking(c, event_id, booking_body(
        u1, [("FLOOR-A-1", 1), ("FLOOR-A-99", 1), ("NOPE-A-1", 1)]))
    error = expect(response, 404, "seat_not_found")["error"]
    check_equal(sorted(error.get("seats") or []), ["FLOOR-A-99", "NOPE-A-1"], "unknown seats")
    # Unknown pool.
    response = post_booking(c, event_id, booking_body(u1, [("FLOOR-A-1", 1)], {"VIP": 1}))
    error = expect(response, 404, "pool_not_found")["error"]
    check_equal(error.get("pool"), "VIP", "pool")
    # Pool shortfall.
    response = post_booking(c, event_id, booking_body(user(), pools={"GA": 6}))
    error = expect(response, 409, "insufficient_quantity")["error"]
    check_equal((error.get("pool"), error.get("available")), ("GA", 5), "shortfall detail")
    # The user's limit: held + bought, pool units counting one each.
    hold(c, event_id, u1, ["FLOOR-B-1"])
    book(c, event_id, u1, pools={"GA": 1})
    expect(post_booking(c, event_id, booking_body(u1, [("FLOOR-A-1", 1)], {"GA": 1})), 429,
           "user_limit_exceeded", what="1 held + 1 bought + 2 > 3")
    book(c, event_id, u1, [("FLOOR-A-1", 1)])
    expect(post_booking(c, event_id, booking_body(u1, [("FLOOR-A-2", 1)])), 429,
           "user_limit_exceeded", what="limit reached")
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("available", 1), "FLOOR-A-2 untouched")
    check_counts(c, event_id, 48, 1, 1)
    check_pool(c, event_id, "GA", 4, 0, 1)
    expect(post_booking(c, uid("none"), booking_body(u1, [("FLOOR-A-1", 1)])), 404,
           "event_not_found", what="unknown event")


def test_invalid_requests(server):
    c = server.client()
    event_id = _event(c, max_seats_per_hold=3)
    u1 = user()
    bad_seats = [
        ["FLOOR-A-1"], [{"id": "FLOOR-A-1"}], [{"version": 1}], [{"id": "FLOOR-A-1", "version": 0}],
        [{"id": "FLOOR-A-1", "version": -1}], [{"id": "FLOOR-A-1", "version": "1"}],
        [{"id": "FLOOR-A-1", "version": 1.5}], [{"id": "FLOOR-A-1", "version": None}],
        [{"id": 7, "version": 1}], [{"id": None, "version": 1}], [None], [[1]],
        "FLOOR-A-1", {"id": "FLOOR-A-1", "version": 1},
        [{"id": "FLOOR-A-1", "version": 1}, {"id": "FLOOR-A-1", "version": 1}],   # duplicate
        [{"id": "FLOOR-A-%d" % n, "version": 1} for n in range(1, 5)],            # above max
    ]
    for seats in bad_seats:
        expect(post_booking(c, event_id, {"user_id": u1, "seats": seats}), 400,
               "invalid_request", what="seats %r" % (seats,))
    paths = ["seats[0]", "seats[0].version", "seats[0].id", "seats[0].version",
             "seats[0].version", "seats[0].version", "seats[0].version", "seats[0].version",
             "seats[0].id", "seats[0].id", "seats[0]", "seats[0]", "seats", "seats", "seats[1]",
             "seats"]
    for seats, path in zip(bad_seats, paths):
        expect(post_booking(c, event_id, {"user_id": u1, "seats": seats}), 400,
               "invalid_request", field=path, what="field of seats %r" % (seats,))
    expect(post_booking(c, event_id, {"user_id": u1}), 400, "invalid_request",
           what="neither seats nor pools")
    expect(post_booking(c, event_id, {"user_id": u1, "seats": [], "pools": {}}), 400,
           "invalid_request", what="empty seats and pools")
    expect(post_booking(c, event_id, {"seats": [{"id": "FLOOR-A-1", "version": 1}]}), 400,
           "invalid_request", field="user_id", what="no user_id")
    expect(post_booking(c, event_id, {"user_id": u1, "pools": {"GA": 0}}), 400,
           "invalid_request", field="pools.GA", what="pool quantity 0")
    expect(post_booking(c, event_id, {"user_id": u1, "seats": [{"id": "FLOOR-A-1", "version": 1}],
                                      "payment_ref": 5}), 400, "invalid_request",
           field="payment_ref", what="payment_ref not a string")
    expect(c.post("/v1/events/%s/bookings" % event_id, raw="{nope"), 400, "invalid_json")
    check_counts(c, event_id, 50, 0, 0, "nothing changed")
    check_pool(c, event_id, "GA", 5, 0, 0)


def test_idempotency_key(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    body = booking_body(u1, [("FLOOR-A-1", 1)], {"GA": 1}, "pi_idem")
    headers = {"Idempotency-Key": "book-" + uid("k")}
    first = post_booking(c, event_id, body, headers)
    order = expect(first, 201, what="first booking")
    again = post_booking(c, event_id, body, headers)
    expect(again, 201, what="repeat")
    check_equal(again.body, first.body, "the repeat answers exactly the first answer")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 2), "booked once")
    check_pool(c, event_id, "GA", 4, 0, 1)
    orders = expect(c.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)["orders"]
    check_equal([o["order_id"] for o in orders], [order["order_id"]], "one order")
    other = dict(body, payment_ref="pi_other")
    expect(post_booking(c, event_id, other, headers), 422, "idempotency_key_reused",
           what="same key, another body")
    # Without the key, the same body is a new request: the seat moved, so it conflicts.
    error = expect(post_booking(c, event_id, body), 409, "version_conflict")["error"]
    check_equal(error.get("seats"), [{"id": "FLOOR-A-1", "version": 2, "status": "sold"}],
                "conflict without the key")
    # A failed booking is not stored under its key: the key may run again with another body.
    key = {"Idempotency-Key": "fail-" + uid("k")}
    expect(post_booking(c, event_id, booking_body(u1, [("FLOOR-A-2", 9)]), key), 409,
           "version_conflict", what="stale version with a key")
    fixed = expect(post_booking(c, event_id, booking_body(u1, [("FLOOR-A-2", 1)]), key), 201,
                   what="the same key after a failure, corrected body")
    check_equal(fixed["seats"], ["FLOOR-A-2"], "booked with the reused key")


def test_race_for_one_seat(server):
    setup = server.client()
    event_id = _event(setup)
    count = 30
    clients = [server.client() for _ in range(count)]
    for client in clients:
        expect(client.get("/healthz"), 200)
    users = [user("racer") for _ in range(count)]

    def attempt(index, barrier):
        barrier.wait()
        return post_booking(clients[index], event_id,
                            booking_body(users[index], [("FLOOR-A-9", 1)], payment_ref="pi_r"))

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {201: 1, 409: 29}, "statuses")
    winner = [(i, r) for i, r in enumerate(responses) if r.status == 201][0]
    check_equal(winner[1].json["user_id"], users[winner[0]], "the winner's order")
    for r in responses:
        if r.status == 409:
            error = expect(r, 409, "version_conflict")["error"]
            check_equal(error.get("seats"), [{"id": "FLOOR-A-9", "version": 2, "status": "sold"}],
                        "a loser's conflict")
    check_equal(seat_state(setup, event_id, "FLOOR-A-9"), ("sold", 2), "one status change")
    check_counts(setup, event_id, 49, 0, 1)


def test_cancel_frees_the_seat(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    order = book(c, event_id, u1, [("FLOOR-A-1", 1), ("FLOOR-A-2", 1)], {"GA": 2}, "pi_c")
    cancelled = expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    check_equal(cancelled["status"], "cancelled", "status")
    check_equal(cancelled["reservation_id"], None, "reservation_id stays null")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "FLOOR-A-1 freed")
    check_counts(c, event_id, 50, 0, 0)
    check_pool(c, event_id, "GA", 5, 0, 0)
    again = expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    check_equal(again, cancelled, "repeat cancel answers the same")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": user()}), 403,
           "not_owner")
    # The freed seat can be held, and booked again at its new version.
    u2 = user()
    h = hold(c, event_id, u2, ["FLOOR-A-1"])
    check_equal(h["seats"], ["FLOOR-A-1"], "held after the cancel")
    release(c, h["reservation_id"], u2)
    book(c, event_id, u2, [("FLOOR-A-1", 5), ("FLOOR-A-2", 3)])
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("sold", 4), "FLOOR-A-2 rebooked")


def test_booking_beside_holds_and_commits(server):
    """Bookings and the two-phase path share the seats: a booked seat cannot be held, a held
    seat cannot be booked, a committed seat's version moved."""
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    book(c, event_id, u1, [("BALC-A-1", 1)])
    error = expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": u2,
                                                             "seats": ["BALC-A-1"]}),
                   409, "seats_unavailable")["error"]
    check_equal(error.get("seats"), ["BALC-A-1"], "a booked seat is taken")
    h = hold(c, event_id, u2, ["BALC-A-2"])
    commit(c, h["reservation_id"], u2)
    error = expect(post_booking(c, event_id, booking_body(u1, [("BALC-A-2", 2)])), 409,
                   "version_conflict")["error"]
    check_equal(error.get("seats"), [{"id": "BALC-A-2", "version": 3, "status": "sold"}],
                "committed seat")
    check_counts(c, event_id, 48, 0, 2)


def test_booking_survives_restart():
    server = Server().start()
    c = server.client()
    event_id = _event(c)
    u1 = user()
    order = book(c, event_id, u1, [("FLOOR-A-1", 1), ("BALC-A-10", 1)], {"GA": 3}, "pi_durable")
    cancelled = book(c, event_id, u1, [("FLOOR-A-2", 1)])
    expect(c.post("/v1/orders/%s/cancel" % cancelled["order_id"], {"user_id": u1}), 200)
    summary = get_event(c, event_id)
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    after = expect(c.get("/v1/orders/%s" % order["order_id"]), 200)
    check_equal(after, order, "the order after a restart")
    check_equal(after["reservation_id"], None, "reservation_id null after a restart")
    check_equal(expect(c.get("/v1/orders/%s" % cancelled["order_id"]), 200)["status"],
                "cancelled", "the cancelled order")
    check_equal(get_event(c, event_id), summary, "the event summary after a restart")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 2), "FLOOR-A-1")
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("available", 3), "FLOOR-A-2")
    orders = expect(c.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)["orders"]
    check_equal([o["order_id"] for o in orders], [order["order_id"], cancelled["order_id"]],
                "the user's orders, oldest first")
    # Versions continue: the booking path keeps working on the restored seats.
    error = expect(post_booking(c, event_id, booking_body(user(), [("FLOOR-A-1", 1)])), 409,
                   "version_conflict")["error"]
    check_equal(error.get("seats"), [{"id": "FLOOR-A-1", "version": 2, "status": "sold"}],
                "restored version")
    book(c, event_id, user(), [("FLOOR-A-2", 3)])
    again.stop()
