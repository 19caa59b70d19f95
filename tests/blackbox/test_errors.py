"""Errors that name the cause (issue 18): every invalid_request names its field by its path and
says in one sentence what the value must be; 429 user_limit_exceeded gives the numbers; a
second payment on a confirmed hold is refused with the order it would have been absorbed by
(API.md sections 1-4)."""

from harness import (Soft, check, check_equal, commit, create_event, expect, get_event, hold,
                     parse_time, post_hold, uid, user)

WEIGHT = 1.0

# The standard event of harness.create_event: FLOOR (rows A, B of 20), BALC (row A of 10), pool
# GA of 5; max_seats_per_hold 10, max_hold_s 1800.


def _error(response, status, code, field, message, what):
    """The error's exact status, code, field path and message."""
    expect(response, status, code, field=field, what=what)
    check_equal(response.error.get("message"), message, what + ": message")


def _section(section_id, price=100, rows=None):
    return {"id": section_id, "price": price,
            "rows": [{"id": "A", "seats": 2}] if rows is None else rows}


def test_event_errors_name_the_path(server):
    c = server.client()
    soft = Soft()
    ok = _section("FLOOR")
    id_rule = 'must be 1 to 64 characters of A-Z a-z 0-9 _ . (no "-")'
    cases = [
        ({"sections": [ok, _section("BALC", price=-1)]}, "sections[1].price",
         "sections[1].price must be an integer from 0 to 1000000000000", "a negative price"),
        ({"sections": [_section("FLOOR", rows=[])]}, "sections[0].rows",
         "sections[0].rows must be a list of at least 1 row, at most 10000", '"rows": []'),
        ({"sections": [_section("FLOOR", rows=[{"id": "A", "seats": 1}, {"id": "B", "seats": 1},
                                               {"id": "C", "seats": 0}])]},
         "sections[0].rows[2].seats",
         "sections[0].rows[2].seats must be an integer from 1 to 4000000", '"seats": 0'),
        ({"sections": [ok, _section("BALC"), _section("UPPER-1")]}, "sections[2].id",
         "sections[2].id " + id_rule, "a section id with a dash"),
        ({"sections": [_section("FLOOR", rows=[{"id": "A-1", "seats": 1}])]},
         "sections[0].rows[0].id", "sections[0].rows[0].id " + id_rule, "a row id with a dash"),
        ({"sections": [_section("FLOOR", rows=[{"seats": 1}])]}, "sections[0].rows[0].id",
         "sections[0].rows[0].id is required", "a row without id"),
        ({"sections": [ok, ok]}, "sections[1].id", 'sections[1].id "FLOOR" is used by sections[0]',
         "two sections with one id"),
        ({"sections": [_section("FLOOR", rows=[{"id": "A", "seats": 1}, {"id": "B", "seats": 1},
                                               {"id": "A", "seats": 1}])]},
         "sections[0].rows[2].id", 'sections[0].rows[2].id "A" is used by sections[0].rows[0]',
         "two rows of a section with one id"),
        ({"pools": [{"id": "GA", "capacity": 1, "price": 1}, {"id": "VIP", "capacity": 1,
                                                                "price": 1},
                    {"id": "GA", "capacity": 2, "price": 1}]},
         "pools[2].id", 'pools[2].id "GA" is used by pools[0]', "two pools with one id"),
        ({"pools": [{"id": "GA", "capacity": -1, "price": 1}]}, "pools[0].capacity",
         "pools[0].capacity must be an integer from 0 to 1000000000", "a negative capacity"),
        ({"pools": [{"id": "GA", "capacity": 1}]}, "pools[0].price",
         "pools[0].price is required", "a pool without price"),
        ({"sections": [ok, "FLOOR"]}, "sections[1]",
         'sections[1] must be an object {"id", "price", "rows"}', "a section as a string"),
        ({}, "sections", "an event needs at least one seat or pool", "no seat nor pool"),
        ({"sections": [ok], "hold_ttl_s": 0}, "hold_ttl_s",
         "hold_ttl_s must be a number of seconds above 0 and at most 2592000", "hold_ttl_s 0"),
        ({"sections": [ok], "max_seats_per_hold": 1001}, "max_seats_per_hold",
         "max_seats_per_hold must be an integer from 1 to 1000", "max_seats_per_hold 1001"),
        ({"sections": [ok], "currency": "usd"}, "currency",
         'currency must be a code of 3 letters A-Z such as "USD"', "a lower-case currency"),
        ({"sections": [_section("S", rows=[{"id": "R%d" % n, "seats": 1000}
                                           for n in range(4001)])]},
         "sections", "sections must have at most 4000000 seats in all, not 4001000",
         "4,001,000 seats"),
    ]
    for body, field, message, what in cases:
        event_id = uid("err")
        body = dict(body, id=event_id)
        soft(_error, c.post("/v1/events", body), 400, "invalid_request", field, message, what)
        soft(expect, c.get("/v1/events/%s" % event_id), 404, "event_not_found",
             what=what + ": not created")
    soft(_error, c.post("/v1/events", {"id": "a-b", "sections": [ok]}), 400, "invalid_request",
         "id", "id " + id_rule, "an event id with a dash")
    soft.done()


def test_hold_errors_name_the_path(server):
    c = server.client()
    soft = Soft()
    event_id = create_event(c, uid("err"))["id"]
    u1 = user()
    path = "/v1/events/%s/holds" % event_id
    cases = [
        ({"user_id": u1, "seats": ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", 7]}, "seats[3]",
         "seats[3] must be a seat id SECTION-ROW-NUMBER of at most 137 bytes", "a number seat"),
        ({"user_id": u1, "seats": ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-1"]}, "seats[2]",
         'seats[2] "FLOOR-A-1" is listed twice: also as seats[0]', "a seat listed twice"),
        ({"user_id": u1, "seats": "FLOOR-A-1"}, "seats",
         "seats must be a list of at most 1000 seat ids", "seats as a string"),
        ({"user_id": u1, "pools": {"GA": 0}}, "pools.GA",
         "pools.GA must be an integer from 1 to 1000", "0 units of GA"),
        ({"user_id": u1, "pools": ["GA"]}, "pools",
         "pools must be an object of at most 1000 pool ids, each with a quantity",
         "pools as a list"),
        ({"user_id": u1, "best_available": {"count": 0}}, "best_available.count",
         "best_available.count must be an integer from 1 to 1000", "count 0"),
        ({"user_id": u1, "best_available": {"count": 11}}, "best_available.count",
         "best_available.count must ask for at most 10 items in all (the event's "
         "max_seats_per_hold; a seat or a pool unit counts one), not 11", "count 11"),
        ({"user_id": u1, "seats": ["FLOOR-A-%d" % n for n in range(1, 9)], "pools": {"GA": 3}},
         "seats", "seats must ask for at most 10 items in all (the event's max_seats_per_hold; "
         "a seat or a pool unit counts one), not 11", "8 seats and 3 units"),
        ({"user_id": u1, "seats": ["FLOOR-A-1"], "ttl_s": 1801}, "ttl_s",
         "ttl_s must be at most 1800 seconds (the event's max_hold_s), not 1801",
         "ttl_s above max_hold_s"),
        ({"user_id": u1, "seats": ["FLOOR-A-1"], "ttl_s": -1}, "ttl_s",
         "ttl_s must be a number of seconds above 0", "ttl_s -1"),
        ({"seats": ["FLOOR-A-1"]}, "user_id", "user_id is required", "no user_id"),
        ({"user_id": u1, "seats": ["FLOOR-A-1"], "replace_existing": 1}, "replace_existing",
         "replace_existing must be true or false", "replace_existing 1"),
        ({"user_id": u1}, "seats", "a hold needs seats, pools or best_available", "nothing"),
    ]
    for body, field, message, what in cases:
        soft(_error, c.post(path, body), 400, "invalid_request", field, message, what)
    h = hold(c, event_id, u1, ["FLOOR-B-1"])
    hold_path = "/v1/holds/%s/" % h["reservation_id"]
    soft(_error, c.post(hold_path + "extend", {"user_id": u1, "ttl_s": 0}), 400,
         "invalid_request", "ttl_s", "ttl_s must be a number of seconds above 0", "extend ttl_s 0")
    soft(_error, c.post(hold_path + "release", {}), 400, "invalid_request", "user_id",
         "user_id is required", "release without user_id")
    soft(_error, c.post(hold_path + "commit", {"user_id": u1, "payment_ref": ""}), 400,
         "invalid_request", "payment_ref", "payment_ref must be a string of 1 to 255 bytes",
         "an empty payment_ref")
    bookings = "/v1/events/%s/bookings" % event_id
    soft(_error, c.post(bookings, {"user_id": u1, "seats": [{"id": "FLOOR-A-1", "version": 1},
                                                            {"id": "FLOOR-A-2"}]}),
         400, "invalid_request", "seats[1].version", "seats[1].version is required",
         "a booking's seat without version")
    soft(_error, c.post(bookings, {"user_id": u1, "pools": {"GA": -2}}), 400, "invalid_request",
         "pools.GA", "pools.GA must be an integer from 1 to 1000", "a booking of -2 units")
    seats = "/v1/events/%s/seats?" % event_id
    soft(_error, c.get(seats + "limit=0"), 400, "invalid_request", "limit",
         "limit must be an integer from 1 to 10000", "limit=0")
    soft(_error, c.get(seats + "status=gone"), 400, "invalid_request", "status",
         "status must be available, held or sold", "status=gone")
    soft(_error, c.get(seats + "after=NOPE-A-1"), 400, "invalid_request", "after",
         "after must be a seat id of this event", "after=NOPE-A-1")
    soft(_error, c.post(path, {"user_id": u1, "seats": ["FLOOR-A-5"]},
                        headers={"Idempotency-Key": "k" * 256}),
         400, "invalid_request", "Idempotency-Key", "Idempotency-Key must be 1 to 255 bytes",
         "a key of 256 bytes")
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 49, "held": 1, "sold": 0},
                "nothing but the one hold was made")
    soft.done()


def test_user_limit_says_the_numbers(server):
    c = server.client()
    event_id = create_event(c, uid("lim"), max_seats_per_user=8)["id"]
    u1 = user()
    bought = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2})
    commit(c, bought["reservation_id"], u1, "pi_1")
    held = hold(c, event_id, u1, ["FLOOR-A-3", "FLOOR-A-4"])
    response = post_hold(c, event_id, u1, ["FLOOR-B-1", "FLOOR-B-2"], {"GA": 1},
                         best_available={"count": 1, "section": "BALC"})
    expect(response, 429, "user_limit_exceeded")
    error = response.error
    check_equal((error.get("limit"), error.get("current"), error.get("requested")), (8, 6, 4),
                "limit, current (4 bought, 2 held; pool units count one each), requested")
    check_equal(error["message"], "%s may hold or buy at most 8 seats of this event and has 6; "
                "this request asks for 4" % u1, "the message")
    # replace_existing releases the user's holds in the same step: they do not count.
    response = post_hold(c, event_id, u1, ["FLOOR-B-%d" % n for n in range(1, 6)],
                         replace_existing=True)
    expect(response, 429, "user_limit_exceeded", what="replace_existing")
    check_equal((response.error.get("limit"), response.error.get("current"),
                 response.error.get("requested")), (8, 4, 5), "numbers with replace_existing")
    check_equal(expect(c.get("/v1/holds/%s" % held["reservation_id"]), 200)["status"], "held",
                "the refused request released nothing")
    # A booking counts the same way.
    response = c.post("/v1/events/%s/bookings" % event_id,
                      {"user_id": u1, "pools": {"GA": 3}})
    expect(response, 429, "user_limit_exceeded", what="booking")
    check_equal((response.error.get("limit"), response.error.get("current"),
                 response.error.get("requested")), (8, 6, 3), "a booking's numbers")


def test_second_payment_never_absorbed(server):
    c = server.client()
    event_id = create_event(c, uid("pay"))["id"]
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1})
    commit_path = "/v1/holds/%s/commit" % h["reservation_id"]
    order = commit(c, h["reservation_id"], u1, "pi_first")
    check_equal(order["payment_ref"], "pi_first", "the first payment")
    check_equal(commit(c, h["reservation_id"], u1, "pi_first"), order,
                "the same payment_ref: 200 and the same order")
    check_equal(expect(c.post(commit_path, {"user_id": u1}), 200), order,
                "no payment_ref: 200 and the order")
    response = c.post(commit_path, {"user_id": u1, "payment_ref": "pi_second"})
    expect(response, 409, "already_confirmed", what="another payment_ref")
    check_equal((response.error.get("order_id"), response.error.get("payment_ref")),
                (order["order_id"], "pi_first"), "the 409 names the order and its payment")
    check("pi_second" in response.error["message"] and order["order_id"] in
          response.error["message"], "the message names both payments' order: %r" %
          response.error["message"])
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order,
                "the order is unchanged")
    orders = expect(c.get("/v1/users/%s/orders" % u1), 200)["orders"]
    check_equal(orders, [order], "no second order was made")
    summary = get_event(c, event_id)
    check_equal(summary["counts"]["sold"], 1, "one seat sold")
    # A hold committed without a payment: any payment that comes later is another one.
    h = hold(c, event_id, u1, ["FLOOR-A-2"])
    commit_path = "/v1/holds/%s/commit" % h["reservation_id"]
    unpaid = expect(c.post(commit_path, {"user_id": u1}), 200)
    check_equal((unpaid["status"], unpaid["payment_ref"]), ("confirmed", None),
                "a first commit without payment_ref confirms, payment_ref null")
    check_equal(expect(c.post(commit_path, {"user_id": u1}), 200), unpaid, "repeated, no ref")
    response = c.post(commit_path, {"user_id": u1, "payment_ref": "pi_late"})
    expect(response, 409, "already_confirmed", what="a payment after a commit without one")
    check_equal((response.error.get("order_id"), response.error.get("payment_ref", "missing")),
                (unpaid["order_id"], None), "the 409 with payment_ref null")


def test_section_not_found_names_the_section(server):
    """As pool_not_found names its pool (API.md sections 1 and 3)."""
    c = server.client()
    soft = Soft()
    event_id = create_event(c, uid("sec"))["id"]
    path = "/v1/events/%s/holds" % event_id
    response = c.post(path, {"user_id": user(), "best_available": {"count": 1, "section": "NOPE"}})
    soft(expect, response, 404, "section_not_found", what="best_available in an unknown section")
    soft(check_equal, response.error.get("section"), "NOPE", "the hold's error names the section")
    response = c.get("/v1/events/%s/seats?section=NOPE" % event_id)
    soft(expect, response, 404, "section_not_found", what="seats of an unknown section")
    soft(check_equal, response.error.get("section"), "NOPE", "the seat list's error names it")
    # Closed sales still name the section first (the request's own checks come first).
    expect(c.post("/v1/events/%s/close" % event_id), 200)
    response = c.post(path, {"user_id": user(), "best_available": {"count": 1, "section": "X.1"}})
    soft(expect, response, 404, "section_not_found", what="closed sales, unknown section")
    soft(check_equal, response.error.get("section"), "X.1", "named while sales are closed")
    soft.done()


def test_ttl_messages_quote_the_event(server):
    """ttl_s's bound is the event's max_hold_s (1800 here), not the server's 30 days; "above 0"
    is said of values that are not; a positive ttl below a millisecond is rounded up to 1 ms."""
    c = server.client()
    soft = Soft()
    event_id = create_event(c, uid("ttl"))["id"]
    path = "/v1/events/%s/holds" % event_id
    u1 = user()
    cases = [
        (5000, "ttl_s must be at most 1800 seconds (the event's max_hold_s), not 5000"),
        (2592000, "ttl_s must be at most 1800 seconds (the event's max_hold_s), not 2592000"),
        # Past the server's 30 days no exact value is kept to quote.
        (3000000, "ttl_s must be at most 1800 seconds (the event's max_hold_s)"),
        (1e300, "ttl_s must be at most 1800 seconds (the event's max_hold_s)"),
        (0, "ttl_s must be a number of seconds above 0"),
        (-0.5, "ttl_s must be a number of seconds above 0"),
        ("60", "ttl_s must be a number of seconds above 0"),
    ]
    for ttl, message in cases:
        soft(_error, c.post(path, {"user_id": u1, "seats": ["FLOOR-A-1"], "ttl_s": ttl}), 400,
             "invalid_request", "ttl_s", message, "ttl_s %r" % (ttl,))
    tiny = expect(c.post(path, {"user_id": u1, "seats": ["FLOOR-A-2"], "ttl_s": 0.0001}), 201,
                  what="ttl_s 0.0001 is above 0")
    soft(check_equal, parse_time(tiny["expires_at"]) - parse_time(tiny["created_at"]), 1,
         "rounded up to the server's resolution, 1 ms")
    # An event's own hold_ttl_s below a millisecond is rounded up the same way.
    small = create_event(c, uid("ttl"), hold_ttl_s=0.0001)
    soft(check_equal, (small["hold_ttl_s"], small["max_hold_s"]), (0.001, 0.003),
         "hold_ttl_s 0.0001 is 1 ms")
    soft.done()


def test_best_available_without_seats_says_so(server):
    """A pools-only event has no seats for best_available: still 409 seats_unavailable with
    seats [] (API.md section 3), but the message says why, not "seats are held or sold"."""
    c = server.client()
    soft = Soft()
    event_id = create_event(c, uid("nos"), sections=None,
                            pools=[{"id": "GA", "capacity": 5, "price": 100}])["id"]
    path = "/v1/events/%s/holds" % event_id
    response = c.post(path, {"user_id": user(), "best_available": {"count": 1}})
    soft(expect, response, 409, "seats_unavailable", what="best_available, no seats")
    soft(check_equal, response.error.get("seats"), [], "seats []")
    message = response.error.get("message", "")
    soft(check, "no seats" in message and "held or sold" not in message,
         "the message says the event has no seats: %r" % message)
    # On an event with seats, too few free ones are said as such.
    seated = create_event(c, uid("nos"))["id"]
    response = c.post("/v1/events/%s/holds" % seated,
                      {"user_id": user(), "best_available": {"count": 3, "section": "BALC",
                                                             "adjacent": False}})
    expect(response, 201, what="three of BALC's ten")
    response = c.post("/v1/events/%s/holds" % seated,
                      {"user_id": user(), "best_available": {"count": 8, "section": "BALC"}})
    soft(expect, response, 409, "seats_unavailable", what="8 adjacent of the 7 left")
    soft(check_equal, (response.error.get("seats"), response.error.get("message")),
         ([], "best_available found no 8 adjacent free seats in one row in section BALC"),
         "too few adjacent seats")
    soft.done()


def test_admit_per_s_quotes_its_least_value(server):
    c = server.client()
    response = c.post("/v1/events", {"id": uid("adm"), "sections": [_section("S")],
                                     "waiting_room": {"enabled": True, "admit_per_s": 1e-7}})
    _error(response, 400, "invalid_request", "waiting_room.admit_per_s",
           "waiting_room.admit_per_s must be a number of admissions per second from 0.000001 "
           "to 1000000", "admit_per_s 1e-7 (above 0, below the least rate)")


def test_bodies_of_routes_without_one_must_be_json(server):
    """API.md section 1: a body must be JSON on every route, also one that reads none; an empty
    body stays fine where a route needs none."""
    c = server.client()
    soft = Soft()
    event_id = create_event(c, uid("nob"))["id"]
    paths = ["/v1/events/%s/close" % event_id, "/v1/events/%s/open" % event_id,
             "/v1/events/%s/queue/q_none/complete" % event_id, "/v1/rides/none/cancel",
             "/v1/refunds/ref_none/complete", "/v1/orders/ord_none/cancel"]
    for path in paths:
        for garbage in ("garbage", "{", '{"a": 1, "a": 2}'):
            soft(expect, c.post(path, raw=garbage), 400, "invalid_json",
                 what="%s with body %r" % (path, garbage))
    soft(expect, c.request("GET", "/v1/events/%s" % event_id, raw="garbage"), 400,
         "invalid_json", what="a GET with a body that is not JSON")
    # Nothing ran: sales are still open.
    soft(check_equal, get_event(c, event_id)["sales_open"], True, "the 400s changed nothing")
    closed = expect(c.post("/v1/events/%s/close" % event_id), 200, what="close, empty body")
    soft(check_equal, closed["sales_open"], False, "closed")
    opened = expect(c.post("/v1/events/%s/open" % event_id, raw='{"note": [1, {"x": null}]}'),
                    200, what="open with a JSON body it ignores")
    soft(check_equal, opened["sales_open"], True, "open")
    soft.done()
