"""Exchange holds (API.md section 13, first part): a hold with "exchange_for" that may include
the old order's own seats, units and spans as if they were free; its commit swaps the orders in
one step (the old one exchanged, the new one confirmed, a refund of a negative difference); the
checks of the old order (404, 403, 409); the first of two commits wins; release and expiry
leave the old order as it was; the per-user limit; calendars (a stay moved by a night in a full
hotel); the payment webhook's commit and its refund order_not_active; history, the user's
orders, metrics; a restart and a kill -9 with an exchange hold open."""

import datetime
import hashlib
import hmac
import json
import os
import sqlite3
import subprocess
import time

import harness

from harness import (ORD_ID_RE, Server, check, check_equal, commit, create_event, expect,
                     get_hold, hold, release, seat_state, uid, user, check_pool)

WEIGHT = 2.0
SECRET = "whsec_exchange_secret"
SERVER_OPTIONS = {"extra_args": ["--webhook-secret", SECRET]}

FLOOR, BALC, GA = 45000, 12000, 9900

# ---- helpers ----


def event(c, **fields):
    """The standard layout: FLOOR rows A and B of 20 at 45000, BALC row A of 10 at 12000, pool
    GA of 5 at 9900."""
    event_id = uid("xch")
    create_event(c, event_id, **fields)
    return event_id


def order_of(c, event_id, user_id, seats=None, pools=None, payment_ref="pi_old"):
    held = hold(c, event_id, user_id, seats, pools)
    return commit(c, held["reservation_id"], user_id, payment_ref)


def exchange(c, event_id, user_id, order_id, seats=None, pools=None, **extra):
    return hold(c, event_id, user_id, seats, pools, exchange_for=order_id, **extra)


def post_exchange(c, event_id, user_id, order_id, seats=None, pools=None, **extra):
    body = {"user_id": user_id, "exchange_for": order_id}
    if seats is not None:
        body["seats"] = seats
    if pools is not None:
        body["pools"] = pools
    body.update(extra)
    return c.post("/v1/events/%s/holds" % event_id, body)


def post_commit(c, hold_id, user_id, payment_ref=None):
    body = {"user_id": user_id}
    if payment_ref is not None:
        body["payment_ref"] = payment_ref
    return c.post("/v1/holds/%s/commit" % hold_id, body)


def get_order(c, order_id):
    return expect(c.get("/v1/orders/%s" % order_id), 200, what="GET order %s" % order_id)


def history(c, path):
    return expect(c.get(path + "/history?limit=1000"), 200)["history"]


def metric(c, name):
    text = c.get("/metrics").body.decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def check_swapped(c, old_id, new_order, what=""):
    """The old order exchanged for new_order, which replaces it, both ways round."""
    old = get_order(c, old_id)
    check_equal(old["status"], "exchanged", "the old order's status " + what)
    check_equal(old.get("replaced_by"), new_order["order_id"], "the old order's replaced_by " + what)
    check_equal(new_order["status"], "confirmed", "the new order's status " + what)
    check_equal(new_order.get("replaces"), old_id, "the new order's replaces " + what)
    return old


def check_view_rows(server, event_id, seat_id, expected, what):
    """The rows of the SQLite store's view seat_state for one seat (read-only, beside the running
    server); nothing to check on PostgreSQL, which has no such view."""
    if harness.STORE_URL is not None:
        return
    database = sqlite3.connect("file:%s?mode=ro" % os.path.join(server.data_dir, "holdfast.db"),
                               uri=True)
    try:
        rows = database.execute("SELECT status, owner FROM seat_state WHERE event_id = ? AND"
                                " seat_id = ?", (event_id, seat_id)).fetchall()
    finally:
        database.close()
    check_equal(rows, expected, what)


# ---- events ----


def test_keep_a_seat_and_swap_another(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1", "FLOOR-A-2"])
    before = metric(c, "holdfast_exchanges_total")
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-B-7"])
    check_equal(held["exchange_for"], old["order_id"], "the hold's exchange_for")
    check_equal(held["difference"], 0, "same price, no difference")
    check_equal(held["total"], 2 * FLOOR, "the new total")
    # While the hold is open the kept seat stays sold to the old order.
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat while held")
    check_equal(seat_state(c, event_id, "FLOOR-B-7")[0], "held", "the new seat")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "sold", "the seat given up, still sold")
    check_view_rows(server, event_id, "FLOOR-A-1", [("sold", old["order_id"])],
                    "the kept seat in the view seat_state while held")
    check_view_rows(server, event_id, "FLOOR-B-7", [("held", held["reservation_id"])],
                    "the new seat in the view seat_state")
    check_equal(get_order(c, old["order_id"])["status"], "confirmed", "the old order while held")
    got = get_hold(c, held["reservation_id"])
    check_equal({k: v for k, v in got.items() if k != "expires_in_ms"},
                {k: v for k, v in held.items() if k != "expires_in_ms"}, "GET the hold")
    new = commit(c, held["reservation_id"], u, "pi_new")
    check(ORD_ID_RE.match(new["order_id"]), "the new order's id")
    check_equal(sorted(new["seats"]), ["FLOOR-A-1", "FLOOR-B-7"], "the new order's seats")
    check_equal(new["total"], 2 * FLOOR, "the new order's total")
    check_swapped(c, old["order_id"], new)
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat")
    check_equal(seat_state(c, event_id, "FLOOR-B-7")[0], "sold", "the new seat")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "available", "the seat given up")
    # The seat given up is free for anyone; the kept one is not.
    hold(c, event_id, user(), ["FLOOR-A-2"])
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": user(), "seats": ["FLOOR-A-1"]}),
           409, "seats_unavailable")
    summary = expect(c.get("/v1/events/%s" % event_id), 200)
    check_equal(summary["counts"] if "counts" in summary else None,
                summary.get("counts"), "summary readable")
    orders = expect(c.get("/v1/users/%s/orders?event=%s" % (u, event_id)), 200)["orders"]
    check_equal([(o["order_id"], o["status"]) for o in orders],
                [(old["order_id"], "exchanged"), (new["order_id"], "confirmed")],
                "the user's orders, oldest first")
    check_equal(expect(c.get("/v1/holds/%s" % held["reservation_id"]), 200)["order_id"],
                new["order_id"], "the hold names its order")
    after = metric(c, "holdfast_exchanges_total")
    check_equal(after - (before or 0), 1, "holdfast_exchanges_total counts the commit")
    entries = [e for e in history(c, "/v1/events/%s" % event_id) if e["type"] == "exchange"]
    check_equal(len(entries), 1, "one exchange entry in the event's history")
    entry = entries[0]
    check_equal((entry["order_id"], entry["replaces"], entry["reservation_id"], entry["user_id"]),
                (new["order_id"], old["order_id"], held["reservation_id"], u),
                "the exchange entry's fields")
    check_equal(sorted(entry["seats"]), ["FLOOR-A-1", "FLOOR-B-7"], "the entry's seats")
    # A repeated commit answers the same order.
    check_equal(commit(c, held["reservation_id"], u, "pi_new"), new, "a repeated commit")


def test_the_old_order_is_checked(server):
    c = server.client()
    event_id = event(c)
    u, other = user(), user()
    old = order_of(c, event_id, u, ["FLOOR-A-1"])
    expect(post_exchange(c, event_id, u, "ord_nosuchorder000000000000", ["FLOOR-A-3"]), 404,
           "order_not_found")
    expect(post_exchange(c, event_id, other, old["order_id"], ["FLOOR-A-3"]), 403, "not_owner")
    cancelled = order_of(c, event_id, u, ["FLOOR-A-5"])
    expect(c.post("/v1/orders/%s/cancel" % cancelled["order_id"], {"user_id": u}), 200)
    expect(post_exchange(c, event_id, u, cancelled["order_id"], ["FLOOR-A-6"]), 409,
           "order_not_active")
    expect(post_exchange(c, event_id, u, 17, ["FLOOR-A-6"]), 400, "invalid_request",
           field="exchange_for")
    # An exchanged order can be neither cancelled nor exchanged again.
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-2"])
    commit(c, held["reservation_id"], u)
    expect(c.post("/v1/orders/%s/cancel" % old["order_id"], {"user_id": u}), 409,
           "order_not_active")
    expect(post_exchange(c, event_id, u, old["order_id"], ["FLOOR-A-9"]), 409, "order_not_active")
    check_equal(get_order(c, old["order_id"])["status"], "exchanged", "still exchanged")
    # Nothing of the refused holds was taken.
    check_equal(seat_state(c, event_id, "FLOOR-A-9")[0], "available", "a refused hold's seat")


def test_across_events(server):
    c = server.client()
    first, second = event(c), event(c)
    u = user()
    old = order_of(c, first, u, ["FLOOR-A-1"], {"GA": 2})
    held = exchange(c, second, u, old["order_id"], ["BALC-A-3"])
    check_equal(held["difference"], BALC - FLOOR - 2 * GA, "a cheaper exchange's difference")
    check_equal(seat_state(c, first, "FLOOR-A-1")[0], "sold", "the old seat while held")
    new = commit(c, held["reservation_id"], u, "pi_other")
    check_swapped(c, old["order_id"], new)
    check_equal(new["event"], second, "the new order's event")
    check_equal(seat_state(c, first, "FLOOR-A-1")[0], "available", "the old event's seat freed")
    check_pool(c, first, "GA", 5, 0, 0, "the old event's pool units freed")
    old_entries = [e for e in history(c, "/v1/events/%s" % first) if e["type"] == "exchange"]
    check_equal(len(old_entries), 1, "the old event's history tells the exchange too")
    check_equal((old_entries[0]["order_id"], old_entries[0]["replaced_by"]),
                (old["order_id"], new["order_id"]), "the old event's entry")
    new_entries = [e for e in history(c, "/v1/events/%s" % second) if e["type"] == "exchange"]
    check_equal([e["replaces"] for e in new_entries], [old["order_id"]],
                "the new event's exchange entry")
    # A negative difference is refunded against the old order's payment.
    refunds = [r for r in expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]
               if r["reservation_id"] == held["reservation_id"]]
    check_equal([(r["reason"], r["amount"], r["payment_intent_id"], r["status"]) for r in refunds],
                [("exchange", FLOOR + 2 * GA - BALC, "pi_old", "pending")], "the exchange's refund")


def test_differences(server):
    c = server.client()
    event_id = event(c)
    u = user()
    # Positive: a payment_ref is required.
    cheap = order_of(c, event_id, u, ["BALC-A-1"], payment_ref="pi_cheap")
    up = exchange(c, event_id, u, cheap["order_id"], ["FLOOR-A-10"])
    check_equal(up["difference"], FLOOR - BALC, "a positive difference")
    expect(post_commit(c, up["reservation_id"], u), 400, "invalid_request", field="payment_ref")
    check_equal(get_hold(c, up["reservation_id"])["status"], "held", "a refused commit changes nothing")
    check_equal(get_order(c, cheap["order_id"])["status"], "confirmed", "the old order unchanged")
    refunds_before = len(expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"])
    upgraded = expect(post_commit(c, up["reservation_id"], u, "pi_upgrade"), 200)
    check_equal(upgraded["payment_ref"], "pi_upgrade", "the new order's payment_ref")
    check_swapped(c, cheap["order_id"], upgraded, "(positive)")
    check_equal(len(expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]), refunds_before,
                "a positive difference owes no refund")
    # Zero: no payment needed, no refund.
    same = exchange(c, event_id, u, upgraded["order_id"], ["FLOOR-A-11"])
    check_equal(same["difference"], 0, "a zero difference")
    moved = expect(post_commit(c, same["reservation_id"], u), 200)
    check_swapped(c, upgraded["order_id"], moved, "(zero)")
    check_equal(len(expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]), refunds_before,
                "a zero difference owes no refund")
    # Negative: a refund of its absolute value, reason exchange.
    down = exchange(c, event_id, u, moved["order_id"], ["BALC-A-5"])
    check_equal(down["difference"], BALC - FLOOR, "a negative difference")
    final = expect(post_commit(c, down["reservation_id"], u), 200)
    check_swapped(c, moved["order_id"], final, "(negative)")
    refunds = [r for r in expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]
               if r["reason"] == "exchange" and r["reservation_id"] == down["reservation_id"]]
    check_equal([(r["amount"], r["payment_intent_id"]) for r in refunds],
                [(FLOOR - BALC, "pi_upgrade")], "the refund of the negative difference")
    refund = expect(c.get("/v1/refunds/%s" % refunds[0]["refund_id"]), 200)
    check_equal(refund["reason"], "exchange", "GET the refund")


def test_pools_keep_the_old_units(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, pools={"GA": 2})
    hold(c, event_id, user(), pools={"GA": 3})  # the pool is now full
    held = exchange(c, event_id, u, old["order_id"], ["BALC-A-1"], {"GA": 2})
    check_pool(c, event_id, "GA", 0, 3, 2, "kept units stay sold, not held")
    error = expect(post_exchange(c, event_id, u, old["order_id"], pools={"GA": 3}), 409,
                   "insufficient_quantity")
    check_equal(error["error"].get("available"), 2, "the old order's units count as free")
    new = commit(c, held["reservation_id"], u)
    check_swapped(c, old["order_id"], new)
    check_equal(new["pools"], {"GA": 2}, "the new order's units")
    check_pool(c, event_id, "GA", 0, 3, 2, "the pool after the swap")
    # Fewer units: the rest come free.
    smaller = exchange(c, event_id, u, new["order_id"], pools={"GA": 1})
    check_pool(c, event_id, "GA", 0, 3, 2, "one unit kept, none held")
    final = commit(c, smaller["reservation_id"], u)
    check_equal(final["pools"], {"GA": 1}, "one unit")
    check_pool(c, event_id, "GA", 1, 3, 1, "a unit given back")


def test_first_commit_wins(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1", "FLOOR-A-2"])
    first = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-A-3"])
    second = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-A-4"])
    new = commit(c, first["reservation_id"], u)
    check_swapped(c, old["order_id"], new)
    expect(post_commit(c, second["reservation_id"], u, "pi_second"), 409, "order_not_active")
    check_equal(get_hold(c, second["reservation_id"])["status"], "held",
                "the loser stays held until it lapses")
    check_equal(seat_state(c, event_id, "FLOOR-A-4")[0], "held", "its own seat")
    # Its release gives back only what it held: the shared seat stays the new order's.
    release(c, second["reservation_id"], u)
    check_equal(seat_state(c, event_id, "FLOOR-A-4")[0], "available", "the loser's seat")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat stays sold")
    check_equal(get_order(c, new["order_id"])["status"], "confirmed", "the winner")


def test_release_and_expiry_leave_the_old_order(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 1})
    released = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-B-1"], {"GA": 2})
    check_pool(c, event_id, "GA", 3, 1, 1, "one unit kept, one held")
    release(c, released["reservation_id"], u)
    check_equal(get_order(c, old["order_id"]), old, "the old order after a release")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat after a release")
    check_equal(seat_state(c, event_id, "FLOOR-B-1")[0], "available", "the held seat released")
    check_pool(c, event_id, "GA", 4, 0, 1, "the pool after the release")
    lapsing = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-2", "FLOOR-B-2"], ttl_s=0.3)
    time.sleep(0.6)
    check_equal(get_hold(c, lapsing["reservation_id"])["status"], "expired", "the lapsed hold")
    expect(post_commit(c, lapsing["reservation_id"], u), 410, "hold_expired")
    check_equal(get_order(c, old["order_id"]), old, "the old order after an expiry")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "sold", "the kept seat after an expiry")
    check_equal(seat_state(c, event_id, "FLOOR-B-2")[0], "available", "the expired hold's seat")


def test_cancelled_meanwhile(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1"])
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-A-2"])
    cancelled = expect(c.post("/v1/orders/%s/cancel" % old["order_id"], {"user_id": u}), 200)
    check_equal(cancelled["status"], "cancelled", "the old order cancelled while the hold is open")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "available",
                "the cancel frees the kept seat (the hold never held it)")
    expect(post_commit(c, held["reservation_id"], u, "pi_x"), 409, "order_not_active")
    check_equal(get_hold(c, held["reservation_id"])["status"], "held", "the hold stays")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "held", "its own seat stays held")
    hold(c, event_id, user(), ["FLOOR-A-1"])  # someone else takes the freed seat
    release(c, held["reservation_id"], u)
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "held", "another's hold is untouched")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "available", "the released seat")


def test_user_limit_counts_the_old_order_as_given_back(server):
    c = server.client()
    event_id = event(c, max_seats_per_user=2)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1", "FLOOR-A-2"])
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": u, "seats": ["FLOOR-A-3"]}), 429,
           "user_limit_exceeded")
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-B-1", "FLOOR-B-2"])
    expect(post_exchange(c, event_id, u, old["order_id"], ["FLOOR-B-3", "FLOOR-B-4", "FLOOR-B-5"]),
           429, "user_limit_exceeded")
    new = commit(c, held["reservation_id"], u)
    check_swapped(c, old["order_id"], new)


def test_best_available_takes_the_old_seats_as_free(server):
    c = server.client()
    event_id = event(c, sections=[{"id": "F", "price": 100, "rows": [{"id": "A", "seats": 4}]}],
                     pools=None)
    u = user()
    old = order_of(c, event_id, u, ["F-A-2", "F-A-3"])
    hold(c, event_id, user(), ["F-A-1"])
    held = exchange(c, event_id, u, old["order_id"], best_available={"count": 3})
    check_equal(sorted(held["seats"]), ["F-A-2", "F-A-3", "F-A-4"], "best_available's pick")
    new = commit(c, held["reservation_id"], u)
    check_swapped(c, old["order_id"], new)
    check_equal(seat_state(c, event_id, "F-A-4")[0], "sold", "the new seat")


# ---- calendars ----


def day(offset):
    today = datetime.datetime.now(datetime.timezone.utc).date()
    return (today + datetime.timedelta(days=offset)).isoformat()


def full_hotel(c):
    calendar_id = uid("xhotel")
    expect(c.post("/v1/calendars", {"id": calendar_id, "unit": "night", "currency": "EUR",
                                    "resources": [{"id": "DBL", "capacity": 1, "price": 100}]}),
           201)
    return calendar_id


def stay(c, calendar_id, user_id, start, end, **extra):
    body = {"user_id": user_id, "items": [{"resource": "DBL", "from": day(start), "to": day(end)}]}
    body.update(extra)
    return c.post("/v1/calendars/%s/holds" % calendar_id, body)


def test_calendar_stay_moved_by_a_night(server):
    c = server.client()
    calendar_id = full_hotel(c)
    u = user()
    held = expect(stay(c, calendar_id, u, 10, 13), 201)
    old = commit(c, held["reservation_id"], u, "pi_stay")
    expect(stay(c, calendar_id, u, 11, 14), 409, "range_unavailable")
    moved = expect(stay(c, calendar_id, u, 11, 14, exchange_for=old["order_id"]), 201)
    check_equal(moved["exchange_for"], old["order_id"], "the calendar hold's exchange_for")
    check_equal(moved["difference"], 0, "three nights for three")
    # Someone else still finds the hotel full over both stays (the shared nights count for
    # both orders while the hold is open, never as less than nothing).
    during = expect(c.get("/v1/calendars/%s/availability?resource=DBL&from=%s&to=%s"
                          % (calendar_id, day(10), day(14))), 200)["segments"]
    check_equal([(s["from"], s["to"], s["available"]) for s in during],
                [(day(10), day(14), 0)], "availability while the exchange hold is open")
    refused = expect(stay(c, calendar_id, user(), 12, 13), 409, "range_unavailable")
    check_equal([u["available"] for u in refused["error"]["unavailable"]], [0],
                "the conflict's least free quantity")
    expect(stay(c, calendar_id, user(), 10, 11), 409, "range_unavailable")
    expect(stay(c, calendar_id, user(), 13, 14), 409, "range_unavailable")
    new = commit(c, moved["reservation_id"], u)
    check_swapped(c, old["order_id"], new)
    check_equal(new["calendar"], calendar_id, "the new order's calendar")
    check_equal([(i["from"], i["to"]) for i in new["items"]], [(day(11), day(14))], "new items")
    # The night given up is free again; the kept ones are the new order's.
    expect(stay(c, calendar_id, user(), 10, 11), 201)
    expect(stay(c, calendar_id, user(), 12, 13), 409, "range_unavailable")
    availability = expect(c.get("/v1/calendars/%s/availability?resource=DBL&from=%s&to=%s"
                                % (calendar_id, day(10), day(15))), 200)["segments"]
    check_equal([s["available"] for s in availability], [0, 1], "availability after the move")
    entries = [e for e in history(c, "/v1/calendars/%s" % calendar_id) if e["type"] == "exchange"]
    check_equal([(e["order_id"], e["replaces"]) for e in entries],
                [(new["order_id"], old["order_id"])], "the calendar's exchange entry")
    # A shorter stay gives money back.
    shorter = expect(stay(c, calendar_id, u, 11, 13, exchange_for=new["order_id"]), 201)
    check_equal(shorter["difference"], -100, "one night less")
    last = commit(c, shorter["reservation_id"], u)
    check_swapped(c, new["order_id"], last, "(shorter)")
    expect(stay(c, calendar_id, user(), 13, 14), 201)


def test_calendar_release_leaves_the_stay(server):
    c = server.client()
    calendar_id = full_hotel(c)
    u = user()
    old = commit(c, expect(stay(c, calendar_id, u, 20, 22), 201)["reservation_id"], u)
    moved = expect(stay(c, calendar_id, u, 21, 23, exchange_for=old["order_id"]), 201)
    release(c, moved["reservation_id"], u)
    check_equal(get_order(c, old["order_id"]), old, "the stay after the release")
    expect(stay(c, calendar_id, user(), 22, 23), 201)
    expect(stay(c, calendar_id, user(), 21, 22), 409, "range_unavailable")


# ---- payment webhooks ----


def deliver(c, intent, reservation_id, amount):
    body = json.dumps({"id": uid("evt"), "type": "payment.succeeded", "payment_intent_id": intent,
                       "reservation_id": reservation_id, "amount": amount}).encode()
    t = int(time.time())
    signed = hmac.new(SECRET.encode(), ("%d." % t).encode() + body, hashlib.sha256).hexdigest()
    return expect(c.post("/v1/webhooks/payments", raw=body,
                         headers={"Holdfast-Signature": "t=%d,v1=%s" % (t, signed)}), 200)


def test_webhook_commits_a_positive_difference(server):
    c = server.client()
    event_id = event(c)
    u = user()
    old = order_of(c, event_id, u, ["BALC-A-1"])
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1"])
    wrong = deliver(c, uid("pi"), held["reservation_id"], FLOOR)
    check_equal((wrong["result"], wrong["reason"]), ("refund_required", "amount_mismatch"),
                "the new total is not what is owed")
    paid = deliver(c, "pi_diff", held["reservation_id"], FLOOR - BALC)
    check_equal(paid["result"], "committed", "the difference paid")
    new = get_order(c, paid["order_id"])
    check_equal(new["payment_ref"], "pi_diff", "the new order's payment_ref")
    check_swapped(c, old["order_id"], new)
    # A second exchange of the same (now exchanged) order cannot be paid for.
    other = order_of(c, event_id, u, ["BALC-A-2"])
    late = exchange(c, event_id, u, other["order_id"], ["FLOOR-A-2"])
    expect(c.post("/v1/orders/%s/cancel" % other["order_id"], {"user_id": u}), 200)
    refused = deliver(c, "pi_late", late["reservation_id"], FLOOR - BALC)
    check_equal((refused["result"], refused["reason"]), ("refund_required", "order_not_active"),
                "the old order was cancelled meanwhile")
    check_equal(get_hold(c, late["reservation_id"])["status"], "held", "the hold stays")
    refund = expect(c.get("/v1/refunds/%s" % refused["refund_id"]), 200)
    check_equal((refund["reason"], refund["amount"]), ("order_not_active", FLOOR - BALC),
                "the refund of the payment")


# ---- restarts ----


def seat_list(c, event_id):
    return [(seat["id"], seat["status"], seat["version"])
            for seat in expect(c.get("/v1/events/%s/seats?limit=10000" % event_id), 200)["seats"]]


def exchange_survives(kill):
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = event(c)
    calendar_id = full_hotel(c)
    u = user()
    old = order_of(c, event_id, u, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2})
    held = exchange(c, event_id, u, old["order_id"], ["FLOOR-A-1", "FLOOR-B-9"], {"GA": 3})
    done_old = order_of(c, event_id, u, ["BALC-A-1"])
    done = commit(c, exchange(c, event_id, u, done_old["order_id"], ["BALC-A-2"])["reservation_id"],
                  u)
    # Across events: on PostgreSQL each event is a unit of its own, loaded one by one.
    other_id = event(c)
    far_old = order_of(c, other_id, u, ["FLOOR-A-5"])
    far_held = exchange(c, event_id, u, far_old["order_id"], ["BALC-A-7"])
    far_done_old = order_of(c, other_id, u, ["FLOOR-A-6"])
    far_done = commit(c, exchange(c, event_id, u, far_done_old["order_id"],
                                  ["BALC-A-8"])["reservation_id"], u)
    stay_old = commit(c, expect(stay(c, calendar_id, u, 5, 7), 201)["reservation_id"], u)
    stay_held = expect(stay(c, calendar_id, u, 6, 8, exchange_for=stay_old["order_id"]), 201)
    # A released exchange hold that kept a seat: that seat never changed.
    let_go_old = order_of(c, event_id, u, ["BALC-A-3", "BALC-A-4"])
    release(c, exchange(c, event_id, u, let_go_old["order_id"],
                        ["BALC-A-3", "BALC-A-5"])["reservation_id"], u)
    summary = expect(c.get("/v1/events/%s" % event_id), 200)
    seats = {e: seat_list(c, e) for e in (event_id, other_id)}
    c.close()
    server = server.cycle(kill)
    c = server.client()
    check_equal(expect(c.get("/v1/events/%s" % event_id), 200), summary, "the event after restart")
    for e, before in seats.items():
        # Versions are counted again at the load: the same as before, kept seats included.
        check_equal(seat_list(c, e), before, "every seat's status and version after restart")
    again = get_hold(c, held["reservation_id"])
    check_equal((again["status"], again["exchange_for"], again["difference"]),
                ("held", old["order_id"], held["difference"]), "the held exchange after restart")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat after restart")
    check_equal(seat_state(c, event_id, "FLOOR-B-9")[0], "held", "the held seat after restart")
    check_pool(c, event_id, "GA", 2, 1, 2, "the pool after restart")
    check_swapped(c, done_old["order_id"], get_order(c, done["order_id"]), "(after restart)")
    check_swapped(c, far_done_old["order_id"], get_order(c, far_done["order_id"]),
                  "(across events, after restart)")
    check_equal(seat_state(c, other_id, "FLOOR-A-6")[0], "available", "the far seat given up")
    check_equal(seat_state(c, event_id, "BALC-A-7")[0], "held", "the far exchange's seat")
    far_new = commit(c, far_held["reservation_id"], u)
    check_swapped(c, far_old["order_id"], far_new, "(across events, committed after restart)")
    check_equal(seat_state(c, other_id, "FLOOR-A-5")[0], "available", "the far old seat")
    check_equal(len(expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]), 2,
                "the refunds of the two cheaper exchanges, listed across units")
    new = commit(c, held["reservation_id"], u)
    check_swapped(c, old["order_id"], new, "(committed after restart)")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "available", "the seat given up")
    check_pool(c, event_id, "GA", 2, 0, 3, "the pool after the swap")
    check_equal(get_hold(c, stay_held["reservation_id"])["exchange_for"], stay_old["order_id"],
                "the calendar's exchange hold after restart")
    moved = commit(c, stay_held["reservation_id"], u)
    check_swapped(c, stay_old["order_id"], moved, "(calendar, after restart)")
    expect(stay(c, calendar_id, user(), 5, 6), 201)
    c.close()
    server.stop()
    server = server.restart()
    c = server.client()
    check_swapped(c, old["order_id"], get_order(c, new["order_id"]), "(after a second restart)")
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "sold", "the kept seat, second restart")
    server.stop()
    if harness.STORE_URL is None:
        # holdfast check's invariants (exchanges name each other, a seat sold once) hold.
        checked = subprocess.run([harness.BINARY, "check", "--data", server.data_dir],
                                 capture_output=True, text=True, timeout=60)
        check_equal(checked.returncode, 0, "holdfast check: %s" % checked.stderr[-400:])


def test_exchange_survives_a_restart():
    exchange_survives(kill=False)


def test_exchange_survives_kill_9():
    exchange_survives(kill=True)


def test_forgotten_exchange_holds_are_listed_whole():
    """A released exchange hold the core has forgotten (--finished-holds 0) is listed from the
    store with its exchange_for and difference, as GET showed it before: an event's and a
    calendar's."""
    server = Server(extra_args=["--finished-holds", "0"]).start()
    try:
        c = server.client()
        event_id = event(c)
        owner = user("fg")
        old = order_of(c, event_id, owner, ["FLOOR-A-1"])
        shown = exchange(c, event_id, owner, old["order_id"], ["BALC-A-1"])
        check_equal(shown["difference"], BALC - FLOOR, "the difference as made")
        release(c, shown["reservation_id"], owner)
        # Unrelated acknowledged writes: every earlier batch is durable, so the core forgets.
        for n in range(3):
            churn = user("churn")
            h = hold(c, event_id, churn, ["BALC-A-%d" % (n + 5)])
            release(c, h["reservation_id"], churn)
        listing = expect(c.get("/v1/events/%s/holds?status=released&limit=100" % event_id), 200)
        listed = [h for h in listing["holds"] if h["reservation_id"] == shown["reservation_id"]]
        check_equal(len(listed), 1, "the exchange hold is listed")
        check_equal(listed[0]["exchange_for"], old["order_id"], "exchange_for from the store")
        check_equal(listed[0]["difference"], BALC - FLOOR, "difference from the store")
        check_equal(listed[0]["status"], "released", "status")
    finally:
        server.stop()


def test_forgotten_exchange_holds_keep_seat_versions_over_a_restart():
    """Exchange holds the core has forgotten (--finished-holds 0), committed and released, that
    kept seats of their old orders: every seat's version is the same after a restart (a
    forgotten hold is counted from its row, and the seats it kept it never changed)."""
    server = Server(extra_args=["--finished-holds", "0"]).start()
    try:
        c = server.client()
        event_id = event(c)
        owner = user("fv")
        old = order_of(c, event_id, owner, ["FLOOR-A-1", "FLOOR-A-2"])
        swapped = exchange(c, event_id, owner, old["order_id"], ["FLOOR-A-1", "FLOOR-B-2"])
        new = commit(c, swapped["reservation_id"], owner)
        let_go = exchange(c, event_id, owner, new["order_id"], ["FLOOR-A-1", "FLOOR-B-3"])
        release(c, let_go["reservation_id"], owner)
        for n in range(3):
            churn = user("churn")
            release(c, hold(c, event_id, churn, ["BALC-A-%d" % (n + 5)])["reservation_id"], churn)
        before = seat_list(c, event_id)
        c.close()
        server.stop()
        server = server.restart()
        c = server.client()
        check_equal(seat_list(c, event_id), before, "every seat's status and version after restart")
    finally:
        server.stop()
