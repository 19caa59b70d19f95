"""Changing and deleting events, and the pages of the events list and of a user's orders
(API.md sections 1, 2 and 4; issue 27 points 13 and 14)."""

import os

from harness import (Server, check, check_equal, commit, create_event, expect, get_event,
                     get_hold, hold, make_temp_dir, post_hold, release, section_of, pool_of,
                     uid, user)
from test_streams import Stream

WEIGHT = 3.0

SMALL = [{"id": "FLOOR", "price": 1000, "rows": [{"id": "A", "seats": 4}, {"id": "B", "seats": 4}]},
         {"id": "BALC", "price": 500, "rows": [{"id": "A", "seats": 2}]}]
GA = [{"id": "GA", "capacity": 5, "price": 100}]


def _patch(c, event_id, body, status=200, code=None, field=None):
    return expect(c.request("PATCH", "/v1/events/%s" % event_id, body), status, code, field,
                  what="PATCH %s %s" % (event_id, body))


def _delete(c, event_id):
    return c.request("DELETE", "/v1/events/%s" % event_id)


def _history(c, event_id):
    return expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)["history"]


def _seat_ids(c, event_id, query=""):
    seats = expect(c.get("/v1/events/%s/seats?limit=10000%s" % (event_id, query)), 200)["seats"]
    return [s["id"] for s in seats]


def _small(c, event_id=None, **fields):
    event_id = event_id or uid("up")
    create_event(c, event_id, sections=SMALL, pools=GA, **fields)
    return event_id


def test_each_member_changes_and_reads_back(server):
    c = server.client()
    event_id = _small(c)
    body = {"name": "Night two", "hold_ttl_s": 120, "max_hold_s": 240, "max_seats_per_user": 4,
            "max_seats_per_hold": 3}
    summary = _patch(c, event_id, body)
    for key, value in body.items():
        check_equal(summary.get(key), value, key)
    check_equal(get_event(c, event_id), summary, "GET answers what PATCH answered")
    # The new limits apply at once: a hold of 4 items passes max_seats_per_hold 3.
    expect(post_hold(c, event_id, user(), ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4"]),
           400, "invalid_request")
    fresh = hold(c, event_id, user(), ["FLOOR-B-1"])
    check_equal(fresh["expires_in_ms"] <= 120000 and fresh["expires_in_ms"] > 100000, True,
                "a new hold lasts the new hold_ttl_s")
    entries = [e for e in _history(c, event_id) if e["type"] == "event_update"]
    check_equal(len(entries), 1, "one event_update entry")
    check_equal(sorted(entries[0]["changed"]), sorted(body), "the entry names what changed")
    for key, value in body.items():
        check_equal(entries[0].get(key), value, "history's %s" % key)


def test_empty_or_same_patch_changes_nothing(server):
    c = server.client()
    event_id = _small(c, max_seats_per_user=2)
    before = get_event(c, event_id)
    check_equal(_patch(c, event_id, {}), before, "{} answers the summary unchanged")
    check_equal(_patch(c, event_id, {"max_seats_per_user": 2}), before, "the same value")
    check_equal(_history(c, event_id), [], "no history entry for a change of nothing")


def test_prices_apply_to_new_holds_only(server):
    c = server.client()
    event_id = _small(c)
    u1 = user()
    old = hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1})
    check_equal(old["total"], 1100, "old prices")
    summary = _patch(c, event_id, {"sections": [{"id": "FLOOR", "price": 2000}],
                                   "pools": [{"id": "GA", "price": 300}]})
    check_equal(section_of(summary, "FLOOR")["price"], 2000, "section price")
    check_equal(pool_of(summary, "GA")["price"], 300, "pool price")
    check_equal(section_of(summary, "BALC")["price"], 500, "an unlisted section stays")
    new = hold(c, event_id, user(), ["FLOOR-A-2"], {"GA": 1})
    check_equal(new["total"], 2300, "a new hold takes the new prices")
    check_equal(get_hold(c, old["reservation_id"])["total"], 1100, "the live hold keeps its total")
    order = commit(c, old["reservation_id"], u1)
    check_equal(order["total"], 1100, "its order keeps the price it was held at")
    seat = expect(c.get("/v1/events/%s/seats/FLOOR-A-3" % event_id), 200)
    check_equal(seat["price"], 2000, "the seat list shows the new price")


def test_pool_capacity_up_and_below_taken(server):
    c = server.client()
    event_id = _small(c)
    u1 = user()
    h = hold(c, event_id, u1, None, {"GA": 3})
    commit(c, hold(c, event_id, u1, None, {"GA": 1})["reservation_id"], u1)
    summary = _patch(c, event_id, {"pools": [{"id": "GA", "capacity": 8}]})
    check_equal(pool_of(summary, "GA"), {"id": "GA", "capacity": 8, "price": 100,
                                         "available": 4, "held": 3, "sold": 1}, "capacity up")
    error = _patch(c, event_id, {"pools": [{"id": "GA", "capacity": 3}]}, 409,
                   "capacity_below_taken")["error"]
    check_equal((error.get("pool"), error.get("capacity"), error.get("taken")), ("GA", 3, 4),
                "the error names the pool, the capacity asked and what is taken")
    check_equal(pool_of(get_event(c, event_id), "GA")["capacity"], 8, "nothing changed")
    release(c, h["reservation_id"], u1)
    summary = _patch(c, event_id, {"pools": [{"id": "GA", "capacity": 1}]})
    check_equal(pool_of(summary, "GA")["available"], 0, "down to what is sold")
    expect(post_hold(c, event_id, user(), None, {"GA": 1}), 409, "insufficient_quantity")


def test_new_rows_sections_and_pools_sell(server):
    c = server.client()
    event_id = _small(c)
    u1 = user()
    held = hold(c, event_id, u1, ["FLOOR-B-2", "BALC-A-1"])
    sold = hold(c, event_id, u1, ["BALC-A-2"])
    order = commit(c, sold["reservation_id"], u1)
    summary = _patch(c, event_id, {
        "sections": [{"id": "FLOOR", "rows": [{"id": "C", "seats": 3}]},
                     {"id": "BOX", "price": 9000, "rows": [{"id": "A", "seats": 2}]}],
        "pools": [{"id": "VIP", "capacity": 2, "price": 700}]})
    check_equal(summary["counts"], {"available": 12, "held": 2, "sold": 1}, "counts")
    check_equal([s["id"] for s in summary["sections"]], ["FLOOR", "BALC", "BOX"], "sections")
    check_equal(section_of(summary, "FLOOR")["counts"], {"available": 10, "held": 1, "sold": 0},
                "FLOOR grew by its row C")
    check_equal(pool_of(summary, "VIP")["available"], 2, "new pool")
    expected = (["FLOOR-A-%d" % n for n in range(1, 5)] + ["FLOOR-B-%d" % n for n in range(1, 5)]
                + ["FLOOR-C-1", "FLOOR-C-2", "FLOOR-C-3", "BALC-A-1", "BALC-A-2", "BOX-A-1",
                   "BOX-A-2"])
    check_equal(_seat_ids(c, event_id), expected, "seats in layout order, new row after B")
    check_equal(_seat_ids(c, event_id, "&status=held"), ["FLOOR-B-2", "BALC-A-1"],
                "held seats stay held after the layout grew")
    check_equal(_seat_ids(c, event_id, "&status=sold"), ["BALC-A-2"], "the sold seat stays sold")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200)["seats"], ["BALC-A-2"],
                "the order names its seat")
    picked = hold(c, event_id, user(), best_available={"count": 2, "section": "BOX"})
    check_equal(sorted(picked["seats"]), ["BOX-A-1", "BOX-A-2"], "best_available in BOX")
    check_equal(picked["total"], 18000, "at the new section's price")
    new = hold(c, event_id, user(), ["FLOOR-C-3"], {"VIP": 2})
    check_equal(new["total"], 1000 + 1400, "the new row and pool hold")
    # The hold made before the change still commits its own seats.
    order = commit(c, held["reservation_id"], u1)
    check_equal(sorted(order["seats"]), ["BALC-A-1", "FLOOR-B-2"], "old hold's seats")
    check_equal(_seat_ids(c, event_id, "&status=sold"), ["FLOOR-B-2", "BALC-A-1", "BALC-A-2"],
                "sold after the commit")


def test_validation_as_at_creation(server):
    c = server.client()
    event_id = _small(c)
    before = get_event(c, event_id)
    cases = [
        ({"sections": [{"id": "FLOOR", "rows": [{"id": "A", "seats": 3}]}]},
         "sections[0].rows[0].id"),
        ({"sections": [{"id": "FLOOR", "rows": [{"id": "D", "seats": 1},
                                                 {"id": "D", "seats": 1}]}]},
         "sections[0].rows[1].id"),
        ({"sections": [{"id": "BOX", "rows": [{"id": "A", "seats": 1}]}]}, "sections[0].price"),
        ({"sections": [{"id": "BOX", "price": 5}]}, "sections[0].rows"),
        ({"sections": [{"id": "BOX", "price": 5, "rows": [{"id": "A", "seats": 0}]}]},
         "sections[0].rows[0].seats"),
        ({"sections": [{"id": "B-X", "price": 5, "rows": [{"id": "A", "seats": 1}]}]},
         "sections[0].id"),
        ({"sections": [{"id": "BOX", "price": 5, "rows": [{"id": "A", "seats": 4000000}]}]},
         "sections"),
        ({"pools": [{"id": "NEW", "price": 5}]}, "pools[0].capacity"),
        ({"pools": [{"id": "GA", "capacity": -1}]}, "pools[0].capacity"),
        ({"max_hold_s": 60}, "max_hold_s"),
        ({"hold_ttl_s": 4000}, "max_hold_s"),
        ({"hold_ttl_s": 0}, "hold_ttl_s"),
        ({"max_seats_per_hold": 0}, "max_seats_per_hold"),
        ({"max_seats_per_user": -1}, "max_seats_per_user"),
        ({"name": ""}, "name"),
        ({"waiting_room": {"admit_per_s": 0}}, "waiting_room.admit_per_s"),
    ]
    for body, field in cases:
        _patch(c, event_id, body, 400, "invalid_request", field)
    check_equal(get_event(c, event_id), before, "a refused change changes nothing")
    check_equal(_history(c, event_id), [], "and makes no entry")
    _patch(c, uid("none"), {"name": "x"}, 404, "event_not_found")


def test_waiting_room_turned_on_and_off(server):
    c = server.client()
    event_id = _small(c)
    u1 = user()
    live = hold(c, event_id, u1, ["FLOOR-A-1"])
    summary = _patch(c, event_id, {"waiting_room": {"enabled": True, "admit_per_s": 50}})
    check_equal(summary["waiting_room"].get("enabled"), True, "room on")
    expect(post_hold(c, event_id, user(), ["FLOOR-A-2"]), 403, "admission_required")
    ticket = expect(c.post("/v1/events/%s/queue" % event_id, {"user_id": user()}), 201)
    check("ticket" in ticket, "the room takes joins")
    order = commit(c, live["reservation_id"], u1)
    check_equal(order["seats"], ["FLOOR-A-1"], "a live hold still commits")
    summary = _patch(c, event_id, {"waiting_room": {"enabled": False}})
    check_equal(summary["waiting_room"].get("enabled"), False, "room off")
    hold(c, event_id, user(), ["FLOOR-A-2"])
    expect(c.post("/v1/events/%s/queue" % event_id, {"user_id": user()}), 409,
           "waiting_room_disabled")


def test_streams_end_and_reconnect_to_the_new_layout(server):
    c = server.client()
    event_id = _small(c)
    stream = Stream(server.port, "/v1/events/%s/stream" % event_id)
    stream.open()
    _patch(c, event_id, {"sections": [{"id": "BOX", "price": 9, "rows": [{"id": "A", "seats": 1}]}]})
    check_equal(stream.next(5.0), None, "the stream ends at a change of layout")
    check(stream.eof, "closed by the server")
    again = Stream(server.port, "/v1/events/%s/stream" % event_id)
    snapshot = again.open()
    check_equal([s["id"] for s in snapshot["sections"]], ["FLOOR", "BALC", "BOX"],
                "a reconnect's snapshot has the new section")
    hold(c, event_id, user(), ["BOX-A-1"])
    name, data = again.next_json()
    check_equal((name, data), ("seat", {"id": "BOX-A-1", "status": "held", "version": 2}),
                "changes of the new seats follow")


def test_delete_unused_used_and_unknown(server):
    c = server.client()
    event_id = _small(c)
    response = _delete(c, event_id)
    check_equal(response.status, 204, "an unused event is deleted: %r" % response)
    check_equal(response.body, b"", "204 has no body")
    expect(c.get("/v1/events/%s" % event_id), 404, "event_not_found")
    listed = [e["id"] for e in expect(c.get("/v1/events?limit=1000"), 200)["events"]]
    check(event_id not in listed, "not listed any more")
    expect(_delete(c, event_id), 404, "event_not_found")
    again = create_event(c, event_id, sections=[{"id": "S", "price": 1,
                                                 "rows": [{"id": "R", "seats": 2}]}])
    check_equal(again["counts"]["available"], 2, "the id is free again")
    check_equal(_history(c, event_id), [], "its history starts afresh")
    hold(c, event_id, user(), ["S-R-1"])
    expect(_delete(c, event_id), 409, "event_in_use")
    check_equal(get_event(c, event_id)["counts"]["held"], 1, "a used event stays")
    # A released hold still counts: the event had one.
    other = _small(c)
    u1 = user()
    release(c, hold(c, other, u1, ["FLOOR-A-1"])["reservation_id"], u1)
    expect(_delete(c, other), 409, "event_in_use")


def _check_after_restart(c, kept, gone, held_id):
    summary = get_event(c, kept)
    check_equal(summary["max_seats_per_user"], 6, "max_seats_per_user kept")
    check_equal(section_of(summary, "FLOOR")["price"], 1500, "price kept")
    check_equal([s["id"] for s in summary["sections"]], ["FLOOR", "BALC", "BOX"], "sections kept")
    check_equal(pool_of(summary, "GA")["capacity"], 9, "capacity kept")
    check_equal(summary["waiting_room"].get("enabled"), False, "room kept off")
    check_equal(_seat_ids(c, kept, "&status=held"), ["FLOOR-B-1", "BOX-A-1"], "held seats")
    check_equal(get_hold(c, held_id)["total"], 1000, "the old hold keeps its price")
    expect(c.get("/v1/events/%s" % gone), 404, "event_not_found", what="deleted stays deleted")
    types = [e["type"] for e in _history(c, kept)]
    check_equal(types.count("event_update"), 3, "every change in the history")


def test_changes_and_deletes_survive_restart_and_kill9():
    data_dir = os.path.join(make_temp_dir(), "data")
    server = Server(data_dir=data_dir).start()
    c = server.client()
    kept, gone = _small(c), _small(c)
    held = hold(c, kept, user(), ["FLOOR-B-1"])
    _patch(c, kept, {"max_seats_per_user": 6, "sections": [
        {"id": "FLOOR", "price": 1500},
        {"id": "BOX", "price": 50, "rows": [{"id": "A", "seats": 2}]}]})
    hold(c, kept, user(), ["BOX-A-1"])
    check_equal(_delete(c, gone).status, 204, "delete")
    server.stop()
    server = server.restart()
    c = server.client()
    _patch(c, kept, {"pools": [{"id": "GA", "capacity": 9}],
                     "waiting_room": {"enabled": True}})
    _patch(c, kept, {"waiting_room": {"enabled": False}})
    server.kill()
    server = server.restart()
    _check_after_restart(server.client(), kept, gone, held["reservation_id"])
    server.stop()


def test_events_list_pages(fresh):
    c = fresh.client()
    ids = [_small(c, "p%d" % n) for n in range(5)]
    check_equal(_delete(c, "p2").status, 204, "delete p2")
    remaining = [i for i in ids if i != "p2"]
    _small(c, "p2")
    remaining.append("p2")   # created again: last in creation order
    seen, after = [], None
    while True:
        query = "?limit=1" + ("&after=%s" % after if after else "")
        page = expect(c.get("/v1/events" + query), 200)
        check(len(page["events"]) <= 1, "at most limit events")
        seen += [e["id"] for e in page["events"]]
        after = page["next"]
        if after is None:
            break
        check_equal(after, seen[-1], "next is the last id returned")
    check_equal(seen, remaining, "every event once, in creation order")
    whole = expect(c.get("/v1/events"), 200)
    check_equal([e["id"] for e in whole["events"]], remaining, "one page by default")
    check_equal(whole["next"], None, "next null on the last page")
    two = expect(c.get("/v1/events?limit=2&after=p1"), 200)
    check_equal(([e["id"] for e in two["events"]], two["next"]), (["p3", "p4"], "p4"), "a middle page")
    for query, field in (("limit=0", "limit"), ("limit=1001", "limit"), ("limit=x", "limit"),
                         ("after=nope", "after")):
        expect(c.get("/v1/events?" + query), 400, "invalid_request", field)
    check_equal(len(expect(c.get("/v1/events?limit=1000"), 200)["events"]), 5, "limit 1000")


def test_user_orders_pages(server):
    c = server.client()
    e1, e2 = _small(c), _small(c)
    u1 = user()
    orders = []
    for event_id, seat in ((e1, "FLOOR-A-1"), (e2, "FLOOR-A-1"), (e1, "FLOOR-A-2"),
                           (e1, "FLOOR-A-3")):
        orders.append((event_id, commit(c, hold(c, event_id, u1, [seat])["reservation_id"],
                                        u1)["order_id"]))
    path = "/v1/users/%s/orders" % u1
    whole = expect(c.get(path), 200)
    check_equal([o["order_id"] for o in whole["orders"]], [o for _, o in orders], "oldest first")
    check_equal(whole["next"], None, "one page")
    seen, after = [], None
    while True:
        page = expect(c.get(path + "?event=%s&limit=1%s" % (e1, "&after=" + after if after else "")),
                      200)
        seen += [o["order_id"] for o in page["orders"]]
        after = page["next"]
        if after is None:
            break
    check_equal(seen, [o for e, o in orders if e == e1], "the event's orders, a page at a time")
    expect(c.get(path + "?limit=0"), 400, "invalid_request", "limit")
    expect(c.get(path + "?limit=1001"), 400, "invalid_request", "limit")
    expect(c.get(path + "?after=ord_nope"), 400, "invalid_request", "after")
    check_equal(expect(c.get("/v1/users/%s/orders" % user()), 200),
                {"orders": [], "next": None}, "an unknown user: an empty page")
