"""Extend, release, commit, orders and cancel (API.md sections 3 and 4)."""

from harness import (ORD_ID_RE, Soft, check, check_counts, check_equal, check_pool, commit,
                     create_event, expect, get_hold, hold, now_ms, parse_time, release,
                     seat_state, uid, user)

WEIGHT = 2.0


def _event(c, **fields):
    event_id = uid("life")
    create_event(c, event_id, **fields)
    return event_id


def _extend(c, hold_id, body):
    before = now_ms()
    response = c.post("/v1/holds/%s/extend" % hold_id, body)
    after = now_ms()
    return response, before, after


# ---- extend ----

def test_extend(server):
    c = server.client()
    event_id = _event(c, hold_ttl_s=60, max_hold_s=100)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"], ttl_s=10)
    hold_id = h["reservation_id"]
    created = parse_time(h["created_at"])
    response, before, after = _extend(c, hold_id, {"user_id": u1, "ttl_s": 30})
    extended = expect(response, 200)
    expires = parse_time(extended["expires_at"])
    check(before + 30000 - 5 <= expires <= after + 30000 + 5,
          "expires_at %d not now + 30 s (%d..%d)" % (expires, before + 30000, after + 30000))
    check_equal(extended.get("capped"), False, "capped")
    check_equal((extended["status"], extended["reservation_id"], extended["created_at"],
                 extended["seats"]), ("held", hold_id, h["created_at"], ["FLOOR-A-1"]),
                "the hold")
    check(29000 <= extended["expires_in_ms"] <= 30000, "expires_in_ms %r" % extended[
        "expires_in_ms"])
    check_equal(get_hold(c, hold_id)["expires_at"], extended["expires_at"], "GET after extend")
    # Past max_hold_s: capped at created_at + 100 s.
    capped = expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": 1000}),
                    200)
    check_equal(parse_time(capped["expires_at"]), created + 100000, "capped expires_at")
    check_equal(capped.get("capped"), True, "capped")
    # Never earlier.
    shorter = expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": 5}), 200)
    check_equal(shorter["expires_at"], capped["expires_at"], "expires_at never moves earlier")
    # Any positive value is accepted, the cap applies.
    huge = expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": 1e9}), 200)
    check_equal((huge["expires_at"], huge.get("capped")), (capped["expires_at"], True),
                "a huge ttl_s is capped")
    check_equal(get_hold(c, hold_id)["expires_at"], capped["expires_at"], "GET")


def test_extend_any_positive_ttl(server):
    """API.md: for extend "any positive value is accepted (the cap applies)", even absurdly
    large or tiny ones; expires_at never moves earlier."""
    c = server.client()
    event_id = _event(c, hold_ttl_s=60, max_hold_s=100)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"], ttl_s=50)
    cap = parse_time(h["created_at"]) + 100000
    soft = Soft()
    for ttl in (1e300, 1.7e308, 1e-9, 0.0001):
        response = c.post("/v1/holds/%s/extend" % h["reservation_id"],
                          {"user_id": u1, "ttl_s": ttl})
        extended = soft(expect, response, 200, what="extend ttl_s %r" % ttl)
        if extended:
            expected = cap if ttl > 1 else parse_time(h["expires_at"])
            soft(check_equal, parse_time(extended["expires_at"]), expected,
                 "expires_at after extend ttl_s %r" % ttl)
            if ttl > 1:
                h = extended
    soft.done()


def test_extend_defaults_and_errors(server):
    c = server.client()
    event_id = _event(c, hold_ttl_s=60)
    u1, u2 = user(), user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"], ttl_s=5)
    hold_id = h["reservation_id"]
    response, before, after = _extend(c, hold_id, {"user_id": u1})
    extended = expect(response, 200)
    expires = parse_time(extended["expires_at"])
    check(before + 60000 - 5 <= expires <= after + 60000 + 5,
          "default ttl_s is hold_ttl_s: %d not in %d..%d" % (expires, before + 60000,
                                                             after + 60000))
    check_equal(extended.get("capped"), False, "capped")
    fractional = expect(c.post("/v1/holds/%s/extend" % hold_id,
                               {"user_id": u1, "ttl_s": 120.5}), 200)
    check_equal(fractional.get("capped"), False, "120.5 s is below the cap of 180 s")
    check(parse_time(fractional["expires_at"]) > expires, "moved later")
    for ttl in (0, -1, "30"):
        expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": ttl}), 400,
               "invalid_request", field="ttl_s", what="extend ttl_s %r" % (ttl,))
    expect(c.post("/v1/holds/%s/extend" % hold_id, {"ttl_s": 30}), 400, "invalid_request",
           field="user_id", what="extend without user_id")
    before_other = get_hold(c, hold_id)["expires_at"]
    expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u2, "ttl_s": 170}), 403,
           "not_owner")
    check_equal(get_hold(c, hold_id)["expires_at"], before_other,
                "another user's extend changed nothing")
    expect(c.post("/v1/holds/res_%s/extend" % ("0" * 32), {"user_id": u1}), 404,
           "hold_not_found")
    release(c, hold_id, u1)
    expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": 30}), 409,
           "hold_not_active", what="extend after release")
    h = hold(c, event_id, u1, ["FLOOR-A-2"])
    commit(c, h["reservation_id"], u1)
    expect(c.post("/v1/holds/%s/extend" % h["reservation_id"], {"user_id": u1, "ttl_s": 30}),
           409, "hold_not_active", what="extend after commit")


# ---- release ----

def test_release(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    h = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2})
    hold_id = h["reservation_id"]
    expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": u2}), 403, "not_owner")
    expect(c.post("/v1/holds/%s/release" % hold_id, {}), 400, "invalid_request",
           field="user_id")
    check_equal(get_hold(c, hold_id)["status"], "held", "still held")
    released = release(c, hold_id, u1)
    check_equal((released["status"], released["expires_in_ms"], released["reservation_id"],
                 released["seats"], released["pools"]),
                ("released", 0, hold_id, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2}),
                "released hold")
    check_equal(release(c, hold_id, u1), released, "repeated release answers the same")
    again = get_hold(c, hold_id)
    check_equal((again["status"], again["expires_in_ms"]), ("released", 0), "GET")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "seat")
    check_counts(c, event_id, 50, 0, 0)
    check_pool(c, event_id, "GA", 5, 0, 0)
    expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": u2}), 403, "not_owner",
           what="another user after release")
    expect(c.post("/v1/holds/res_%s/release" % ("f" * 32), {"user_id": u1}), 404,
           "hold_not_found")
    h = hold(c, event_id, u1, ["FLOOR-A-3"])
    commit(c, h["reservation_id"], u1)
    expect(c.post("/v1/holds/%s/release" % h["reservation_id"], {"user_id": u1}), 409,
           "already_confirmed")
    check_equal(seat_state(c, event_id, "FLOOR-A-3")[0], "sold", "still sold")


# ---- commit and orders ----

def test_commit(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    h = hold(c, event_id, u1, ["FLOOR-A-10", "BALC-A-1"], {"GA": 2})
    hold_id = h["reservation_id"]
    expect(c.post("/v1/holds/%s/commit" % hold_id, {"user_id": u2, "payment_ref": "pi_1"}), 403,
           "not_owner")
    check_equal(get_hold(c, hold_id)["status"], "held", "another user's commit did nothing")
    before = now_ms()
    order = commit(c, hold_id, u1, "pi_123")
    after = now_ms()
    check(ORD_ID_RE.match(order.get("order_id", "")), "order_id %r" % order.get("order_id"))
    expected = {"event": event_id, "user_id": u1, "reservation_id": hold_id,
                "status": "confirmed", "seats": ["FLOOR-A-10", "BALC-A-1"], "pools": {"GA": 2},
                "total": 45000 + 12000 + 2 * 9900, "currency": "USD", "payment_ref": "pi_123"}
    for key, value in expected.items():
        check_equal(order.get(key), value, "order %s" % key)
    created = parse_time(order.get("created_at"), "order created_at")
    check(before - 1000 <= created <= after + 1000, "created_at near now")
    check_equal(commit(c, hold_id, u1, "pi_123"), order, "repeated commit")
    check_equal(expect(c.post("/v1/holds/%s/commit" % hold_id, {"user_id": u1}), 200), order,
                "a repeat without payment_ref answers the order")
    refused = expect(c.post("/v1/holds/%s/commit" % hold_id,
                            {"user_id": u1, "payment_ref": "pi_other"}), 409, "already_confirmed",
                     what="a repeat with another payment_ref")
    check_equal((refused["error"].get("order_id"), refused["error"].get("payment_ref")),
                (order["order_id"], "pi_123"), "the 409 names the order and its own payment")
    expect(c.post("/v1/holds/%s/commit" % hold_id, {"user_id": u2, "payment_ref": "pi_1"}), 403,
           "not_owner", what="another user after commit")
    confirmed = get_hold(c, hold_id)
    check_equal((confirmed["status"], confirmed.get("order_id"), confirmed["expires_in_ms"]),
                ("confirmed", order["order_id"], 0), "the hold after commit")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order, "GET order")
    check_equal(seat_state(c, event_id, "FLOOR-A-10"), ("sold", 3), "seat")
    check_equal(seat_state(c, event_id, "BALC-A-1"), ("sold", 3), "seat")
    check_counts(c, event_id, 48, 0, 2)
    check_pool(c, event_id, "GA", 3, 0, 2)
    expect(c.get("/v1/orders/ord_%s" % ("0" * 32)), 404, "order_not_found")
    expect(c.get("/v1/orders/nonsense"), 404, "order_not_found")
    expect(c.post("/v1/holds/res_%s/commit" % ("0" * 32), {"user_id": u1}), 404,
           "hold_not_found")
    expect(c.post("/v1/holds/%s/commit" % hold_id, {"payment_ref": "x"}), 400,
           "invalid_request", field="user_id")


def test_commit_without_payment_ref(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"])
    order = expect(c.post("/v1/holds/%s/commit" % h["reservation_id"], {"user_id": u1}), 200)
    check_equal((order["status"], order.get("payment_ref", "missing")), ("confirmed", None),
                "payment_ref is optional and null when absent")
    # docs/API.md: when given, 1 to 255 bytes.
    h = hold(c, event_id, u1, ["FLOOR-A-2"])
    for bad in ("", "x" * 256, 5):
        expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                      {"user_id": u1, "payment_ref": bad}), 400, "invalid_request",
               field="payment_ref", what=("payment_ref %r" % (bad,))[:40])
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "still held")
    order = commit(c, h["reservation_id"], u1, "p" * 255)
    check_equal(order["payment_ref"], "p" * 255, "payment_ref of 255 bytes")


def test_check_order_404_403_state(server):
    """docs/API.md: hold_not_found, then not_owner, then the hold's state."""
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"])
    release(c, h["reservation_id"], u1)
    for action in ("commit", "extend", "release"):
        expect(c.post("/v1/holds/%s/%s" % (h["reservation_id"], action), {"user_id": u2}), 403,
               "not_owner", what="%s of a released hold by another user" % action)


def test_commit_released(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"])
    release(c, h["reservation_id"], u1)
    expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                  {"user_id": u1, "payment_ref": "pi_1"}), 409, "hold_released")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "not sold")
    check_equal(get_hold(c, h["reservation_id"])["status"], "released", "still released")


def test_user_orders(server):
    c = server.client()
    event_id = _event(c)
    other_event = _event(c)
    u1, u2 = user(), user()
    orders = []
    for n in range(1, 4):
        h = hold(c, event_id, u1, ["FLOOR-A-%d" % n])
        orders.append(commit(c, h["reservation_id"], u1, "pi_%d" % n))
    h = hold(c, other_event, u1, ["FLOOR-A-1"])
    commit(c, h["reservation_id"], u1)
    h = hold(c, event_id, u2, ["FLOOR-B-1"])
    commit(c, h["reservation_id"], u2)
    hold(c, event_id, u1, ["FLOOR-B-2"])   # held, not an order
    cancelled = expect(c.post("/v1/orders/%s/cancel" % orders[1]["order_id"],
                              {"user_id": u1}), 200)
    listing = expect(c.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)
    check_equal([o["order_id"] for o in listing.get("orders", [])],
                [o["order_id"] for o in orders], "u1's orders of the event, oldest first")
    check_equal([o["status"] for o in listing["orders"]], ["confirmed", "cancelled", "confirmed"],
                "statuses")
    check_equal(listing["orders"][0], orders[0], "a listed order is the whole order")
    check_equal(listing["orders"][1], cancelled, "the cancelled one")
    listing = expect(c.get("/v1/users/%s/orders?event=%s" % (u2, event_id)), 200)
    check_equal(len(listing["orders"]), 1, "u2's orders")
    check_equal(expect(c.get("/v1/users/%s/orders?event=%s" % (user(), event_id)), 200),
                {"orders": [], "next": None}, "an unknown user")
    check_equal(expect(c.get("/v1/users/%s/orders?event=%s" % (u1, uid("nope"))), 200),
                {"orders": [], "next": None}, "an unknown event")


def test_cancel(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    h = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 3})
    order = commit(c, h["reservation_id"], u1)
    check_counts(c, event_id, 48, 0, 2)
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u2}), 403,
           "not_owner")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 3), "not cancelled by another")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {}), 400, "invalid_request",
           field="user_id")
    cancelled = expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    # The order was paid (commit's payment_ref): its cancel owes a refund (API.md section 4).
    check(isinstance(cancelled["refund_id"], str), "a paid order's cancel names its refund")
    expected = dict(order, status="cancelled", refund_id=cancelled["refund_id"])
    check_equal(cancelled, expected, "the cancelled order")
    check_equal(expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200),
                cancelled, "repeated cancel")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), cancelled, "GET order")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 4), "seat free again")
    check_equal(seat_state(c, event_id, "FLOOR-A-2"), ("available", 4), "seat free again")
    check_counts(c, event_id, 50, 0, 0)
    check_pool(c, event_id, "GA", 5, 0, 0)
    expect(c.post("/v1/orders/ord_%s/cancel" % ("0" * 32), {"user_id": u1}), 404,
           "order_not_found")
    # Someone else can buy them now.
    h2 = hold(c, event_id, u2, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 5})
    commit(c, h2["reservation_id"], u2)
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 6), "sold again")
    # Cancelling the old order again changes nothing of the new one.
    check_equal(expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200),
                cancelled, "cancel once more")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("sold", 6), "the new sale stands")
    check_pool(c, event_id, "GA", 0, 0, 5)
