"""The staff's view (API.md section 2, last paragraphs): an event's holds and orders listed with
who holds and who bought (paged, filtered by status, forgotten holds included), and closing and
reopening sales (409 sales_closed for new holds and bookings, after the request's own checks;
durable across a restart and a kill -9)."""

import signal
import sqlite3
import os
import time

from harness import (Server, skip_on_postgres, check, check_equal, commit, create_event, expect, get_event,
                     get_hold, hold, post_hold, release, timeout, uid, user)

SHORT_TTL_S = 0.3
UNKNOWN_HOLD = "res_" + "0" * 36


def _holds(c, event_id, query=""):
    return expect(c.get("/v1/events/%s/holds%s" % (event_id, query)), 200,
                  what="holds%s" % query)


def _orders(c, event_id, query=""):
    return expect(c.get("/v1/events/%s/orders%s" % (event_id, query)), 200,
                  what="orders%s" % query)


def _all(c, kind, event_id, query, limit):
    """Every item of a listing, following next with pages of limit; checks each page's size
    and that next is the last id shown."""
    items, after, key = [], None, "reservation_id" if kind == "holds" else "order_id"
    for _ in range(1000):
        path = "/v1/events/%s/%s?limit=%d%s" % (event_id, kind, limit, query)
        if after is not None:
            path += "&after=" + after
        page = expect(c.get(path), 200, what=path)
        check(len(page[kind]) <= limit, "a page of %d is longer than %d" % (
            len(page[kind]), limit))
        items.extend(page[kind])
        after = page["next"]
        if after is None:
            return items
        check_equal(len(page[kind]), limit, "a page with a next is full")
        check_equal(after, page[kind][-1][key], "next is the last id of the page")
    raise AssertionError("the listing never ends")


def _without_countdown(hold_body):
    body = dict(hold_body)
    body.pop("expires_in_ms", None)
    return body


def _ids(items, key="reservation_id"):
    return [item[key] for item in items]


def test_orders_listed_and_paged(server):
    c = server.client()
    event_id = uid("staff")
    create_event(c, event_id)
    other = uid("staff")
    create_event(c, other)
    orders = []
    for n in range(1, 6):
        owner = user("buyer")
        h = hold(c, event_id, owner, ["FLOOR-A-%d" % n], {"GA": 1} if n == 1 else None)
        orders.append(commit(c, h["reservation_id"], owner, "pi_%d" % n))
    booked = expect(c.post("/v1/events/%s/bookings" % event_id,
                           {"user_id": "booker", "seats": [{"id": "BALC-A-1", "version": 1}]}),
                    201, what="booking")
    orders.append(booked)
    cancelled = expect(c.post("/v1/orders/%s/cancel" % orders[1]["order_id"],
                              {"user_id": orders[1]["user_id"]}), 200, what="cancel")
    orders[1] = cancelled
    elsewhere = hold(c, other, "someone", ["FLOOR-A-1"])
    other_order = commit(c, elsewhere["reservation_id"], "someone")

    listing = _orders(c, event_id)
    check_equal(listing, {"orders": orders, "next": None}, "every order, oldest first")
    for order in orders:
        check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order,
                    "an order is listed as GET shows it")
    check_equal(_all(c, "orders", event_id, "", 2), orders, "pages of 2")
    check_equal(_all(c, "orders", event_id, "", 1), orders, "pages of 1")
    first = _orders(c, event_id, "?limit=4")
    check_equal((_ids(first["orders"], "order_id"), first["next"]),
                (_ids(orders[:4], "order_id"), orders[3]["order_id"]), "a first page of 4")
    last = _orders(c, event_id, "?limit=4&after=" + first["next"])
    check_equal(last, {"orders": orders[4:], "next": None}, "the last page")
    exact = _orders(c, event_id, "?limit=6")
    check_equal(exact["next"], None, "a page that takes exactly what is left")
    check_equal(_orders(c, event_id, "?after=" + orders[-1]["order_id"]),
                {"orders": [], "next": None}, "after the last order")
    confirmed = [o for o in orders if o["status"] == "confirmed"]
    check_equal(_orders(c, event_id, "?status=confirmed"), {"orders": confirmed, "next": None},
                "confirmed only")
    check_equal(_orders(c, event_id, "?status=cancelled"), {"orders": [cancelled], "next": None},
                "cancelled only")
    check_equal(_all(c, "orders", event_id, "&status=confirmed", 2), confirmed,
                "confirmed in pages of 2")
    check_equal(_orders(c, other), {"orders": [other_order], "next": None}, "the other event")

    for query, field in (("?limit=0", "limit"), ("?limit=1001", "limit"), ("?limit=x", "limit"),
                         ("?limit=", "limit"), ("?status=held", "status"),
                         ("?status=", "status"), ("?after=ord_nope", "after"),
                         ("?after=" + other_order["order_id"], "after"),
                         ("?after=" + orders[0]["reservation_id"], "after")):
        expect(c.get("/v1/events/%s/orders%s" % (event_id, query)), 400, "invalid_request",
               field, what="orders" + query)
    check_equal(len(_orders(c, event_id, "?limit=1000")["orders"]), 6, "limit 1000 is allowed")
    expect(c.get("/v1/events/nope_%s/orders" % uid()), 404, "event_not_found")


def test_holds_listed_with_every_status(server):
    c = server.client()
    event_id = uid("staff")
    create_event(c, event_id)
    other = uid("staff")
    create_event(c, other)
    u_live, u_sold, u_gone, u_late = user("live"), user("sold"), user("gone"), user("late")
    live = hold(c, event_id, u_live, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2})
    sold = hold(c, event_id, u_sold, ["FLOOR-A-3"])
    order = commit(c, sold["reservation_id"], u_sold)
    gone = hold(c, event_id, u_gone, pools={"GA": 1})
    release(c, gone["reservation_id"], u_gone)
    late = hold(c, event_id, u_late, ["BALC-A-1"], ttl_s=SHORT_TTL_S)
    time.sleep(SHORT_TTL_S + 0.2)
    hold(c, other, "elsewhere", ["FLOOR-A-1"])
    ids = [live["reservation_id"], sold["reservation_id"], gone["reservation_id"],
           late["reservation_id"]]

    listing = _holds(c, event_id)
    check_equal(listing["next"], None, "one page")
    check_equal(_ids(listing["holds"]), ids, "every hold, oldest first")
    for listed in listing["holds"]:
        check_equal(_without_countdown(listed),
                    _without_countdown(get_hold(c, listed["reservation_id"])),
                    "a hold is listed as GET shows it")
    by_id = {h["reservation_id"]: h for h in listing["holds"]}
    check_equal([by_id[i]["status"] for i in ids], ["held", "confirmed", "released", "expired"],
                "statuses")
    check_equal([by_id[i]["user_id"] for i in ids], [u_live, u_sold, u_gone, u_late],
                "who holds")
    check_equal((by_id[ids[0]]["seats"], by_id[ids[0]]["pools"]),
                (["FLOOR-A-1", "FLOOR-A-2"], {"GA": 2}), "seats and pools")
    check(0 < by_id[ids[0]]["expires_in_ms"] <= 600000, "a live hold's countdown")
    check_equal(by_id[ids[1]]["order_id"], order["order_id"], "a confirmed hold's order")
    check_equal(by_id[ids[3]]["expires_in_ms"], 0, "a lapsed hold has no countdown")

    for status, expected in (("held", ids[0]), ("confirmed", ids[1]), ("released", ids[2]),
                             ("expired", ids[3])):
        page = _holds(c, event_id, "?status=" + status)
        check_equal((_ids(page["holds"]), page["next"]), ([expected], None), status)
    check_equal(_ids(_all(c, "holds", event_id, "", 1)), ids, "pages of 1")
    check_equal(_ids(_all(c, "holds", event_id, "", 3)), ids, "pages of 3")
    first = _holds(c, event_id, "?limit=2")
    check_equal((_ids(first["holds"]), first["next"]), (ids[:2], ids[1]), "a first page of 2")
    check_equal(_ids(_holds(c, event_id, "?after=" + ids[1])["holds"]), ids[2:], "after")
    check_equal(_holds(c, event_id, "?after=" + ids[3]), {"holds": [], "next": None},
                "after the last hold")
    check_equal(_holds(c, event_id, "?limit=4")["next"], None, "exactly what is left")

    other_hold = _holds(c, other)["holds"][0]["reservation_id"]
    for query, field in (("?limit=0", "limit"), ("?limit=1001", "limit"), ("?limit=-1", "limit"),
                         ("?status=sold", "status"), ("?status=HELD", "status"),
                         ("?after=" + UNKNOWN_HOLD, "after"), ("?after=" + other_hold, "after"),
                         ("?after=" + order["order_id"], "after"), ("?after=res_" + "a" * 60, "after")):
        expect(c.get("/v1/events/%s/holds%s" % (event_id, query)), 400, "invalid_request",
               field, what="holds" + query)
    expect(c.get("/v1/events/nope_%s/holds" % uid()), 404, "event_not_found")


def test_a_lapsed_hold_is_never_listed_as_held(server):
    """From the instant now >= expires_at the hold is expired, whether or not the timer has
    swept it yet: every listing answered after that instant says so."""
    c = server.client()
    event_id = uid("staff")
    create_event(c, event_id)
    owner = user("lapse")
    h = hold(c, event_id, owner, ["FLOOR-B-1"], ttl_s=0.5)
    expires_at = h["expires_at"]
    deadline = time.time() + 1.5
    seen_expired = False
    while time.time() < deadline:
        sent_at = time.time()
        held = _ids(_holds(c, event_id, "?status=held")["holds"])
        every = _holds(c, event_id)["holds"]
        past = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sent_at)) + (
            ".%03dZ" % int((sent_at % 1) * 1000))
        if past >= expires_at:
            check(h["reservation_id"] not in held, "listed as held after expires_at")
            check_equal(every[0]["status"], "expired", "listed status after expires_at")
            check_equal(every[0]["expires_in_ms"], 0, "no countdown after expires_at")
            expired = _ids(_holds(c, event_id, "?status=expired")["holds"])
            check_equal(expired, [h["reservation_id"]], "listed among the expired")
            seen_expired = True
    check(seen_expired, "the hold was never seen after its expiry")


def test_forgotten_holds_are_listed():
    """With --finished-holds 2 the core forgets all but the newest two finished holds: the
    listing still shows every one of them, from the store, exactly as GET does."""
    server = Server(extra_args=["--finished-holds", "2"]).start()
    c = server.client()
    event_id = uid("forgot")
    create_event(c, event_id)
    made = []
    for n in range(1, 5):
        owner = user("rel")
        h = hold(c, event_id, owner, ["FLOOR-A-%d" % n], {"GA": 1} if n == 2 else None)
        made.append((release(c, h["reservation_id"], owner), "released"))
    for n in range(1, 4):
        h = hold(c, event_id, user("exp"), ["FLOOR-B-%d" % n], ttl_s=SHORT_TTL_S)
        made.append((h, "expired"))
    live = hold(c, event_id, user("live"), ["BALC-A-5"])
    time.sleep(SHORT_TTL_S + 0.5)
    # Unrelated acknowledged writes: every earlier batch is durable, so the server forgets.
    for n in range(4):
        owner = user("churn")
        h = hold(c, event_id, owner, ["BALC-A-%d" % (n + 6)])
        release(c, h["reservation_id"], owner)
    ids = [h["reservation_id"] for h, _ in made]
    listing = _holds(c, event_id, "?limit=1000")
    check_equal(_ids(listing["holds"])[:8], ids + [live["reservation_id"]], "oldest first")
    check_equal(len(listing["holds"]), 12, "every hold")
    for listed, (created, status) in zip(listing["holds"], made):
        expected = dict(created)
        expected["status"] = status
        expected["expires_in_ms"] = 0
        check_equal(listed, expected, "forgotten hold %s" % created["reservation_id"])
    check_equal(_ids(_holds(c, event_id, "?status=expired")["holds"]), ids[4:], "expired ones")
    released = _ids(_all(c, "holds", event_id, "&status=released", 2))
    check_equal(released[:4], ids[:4], "released ones, in pages of 2")
    check_equal(len(released), 8, "the churn's releases too")
    check_equal(_ids(_all(c, "holds", event_id, "", 5)), _ids(listing["holds"]), "pages of 5")
    check_equal(_ids(_holds(c, event_id, "?status=held")["holds"]), [live["reservation_id"]],
                "held")
    # After a restart every finished hold but the newest two is only in the store.
    server.stop()
    again = server.restart()
    c = again.client()
    check_equal([_without_countdown(h) for h in _holds(c, event_id, "?limit=1000")["holds"]],
                [_without_countdown(h) for h in listing["holds"]],
                "the same listing after a restart")
    again.stop()


def test_staff_routes_need_the_key():
    server = Server(api_key="sekrit").start()
    c = server.client(api_key="sekrit")
    anonymous = server.client(api_key=None)
    event_id = uid("key")
    create_event(c, event_id)
    for method, path in (("GET", "/holds"), ("GET", "/orders"), ("POST", "/close"),
                         ("POST", "/open")):
        response = anonymous.request(method, "/v1/events/%s%s" % (event_id, path))
        expect(response, 401, "unauthorized", what=path)
    expect(c.get("/v1/events/%s/holds" % event_id), 200)
    check_equal(get_event(c, event_id)["sales_open"], True, "nothing was closed")
    server.stop()


def test_close_and_reopen(server):
    c = server.client()
    event_id = uid("close")
    summary = create_event(c, event_id)
    check_equal(summary["sales_open"], True, "a new event is open")
    check_equal(get_event(c, event_id)["sales_open"], True, "GET")
    listed = [e for e in expect(c.get("/v1/events"), 200)["events"] if e["id"] == event_id]
    check_equal(listed[0]["sales_open"], True, "the event list")
    u_live, u_other, u_sold = user("live"), user("other"), user("sold")
    live = hold(c, event_id, u_live, ["FLOOR-A-1"], {"GA": 1})
    other = hold(c, event_id, u_other, ["FLOOR-A-2"])
    sold = hold(c, event_id, u_sold, ["FLOOR-A-3"])
    order = commit(c, sold["reservation_id"], u_sold)

    closed = expect(c.post("/v1/events/%s/close" % event_id), 200, what="close")
    check_equal(closed["sales_open"], False, "the close answer")
    expected = get_event(c, event_id)
    check_equal(closed, expected, "the close answer is the summary")
    check_equal(expect(c.post("/v1/events/%s/close" % event_id, {}), 200, what="again"),
                expected, "closing again answers the same")

    def refused(response, what):
        expect(response, 409, "sales_closed", what=what)

    refused(post_hold(c, event_id, user("new"), ["FLOOR-B-1"]), "a hold")
    refused(post_hold(c, event_id, user("new"), pools={"GA": 1}), "a pool hold")
    refused(post_hold(c, event_id, user("new"), best_available={"count": 2}), "best available")
    refused(post_hold(c, event_id, u_live, ["FLOOR-A-1"]), "a taken seat: closed comes first")
    refused(c.post("/v1/events/%s/bookings" % event_id,
                   {"user_id": "b", "seats": [{"id": "FLOOR-B-2", "version": 1}]}), "a booking")
    refused(c.post("/v1/events/%s/bookings" % event_id,
                   {"user_id": "b", "seats": [{"id": "FLOOR-A-1", "version": 1}]}),
            "a booking of a moved seat")
    # The request's own checks come first.
    expect(post_hold(c, event_id, user("new"), []), 400, "invalid_request")
    expect(post_hold(c, event_id, "", ["FLOOR-B-1"]), 400, "invalid_request", "user_id")
    expect(post_hold(c, event_id, user("new"), ["FLOOR-Z-1"]), 404, "seat_not_found")
    expect(post_hold(c, event_id, user("new"), pools={"NOPE": 1}), 404, "pool_not_found")
    expect(post_hold(c, event_id, user("new"), best_available={"count": 1, "section": "NOPE"}),
           404, "section_not_found")
    expect(post_hold(c, "nope_" + uid(), user("new"), ["FLOOR-B-1"]), 404, "event_not_found")
    expect(c.post("/v1/events/%s/bookings" % event_id,
                  {"user_id": "b", "seats": [{"id": "FLOOR-Z-9", "version": 1}]}), 404,
           "seat_not_found")
    expect(c.post("/v1/events/nope_%s/close" % uid()), 404, "event_not_found")
    expect(c.post("/v1/events/nope_%s/open" % uid()), 404, "event_not_found")
    check_equal(get_event(c, event_id)["counts"], expected["counts"], "nothing was taken")

    # What exists still moves: extend, commit, release, cancel.
    expect(c.post("/v1/holds/%s/extend" % live["reservation_id"],
                  {"user_id": u_live, "ttl_s": 60}), 200, what="extend while closed")
    committed = commit(c, live["reservation_id"], u_live, "pi_closed")
    check_equal(committed["status"], "confirmed", "a live hold commits while closed")
    release(c, other["reservation_id"], u_other)
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u_sold}), 200,
           what="cancel while closed")

    opened = expect(c.post("/v1/events/%s/open" % event_id), 200, what="open")
    check_equal(opened["sales_open"], True, "the open answer")
    check_equal(opened, get_event(c, event_id), "the open answer is the summary")
    check_equal(expect(c.post("/v1/events/%s/open" % event_id), 200)["sales_open"], True,
                "opening again")
    again = hold(c, event_id, user("new"), ["FLOOR-B-1"])
    check_equal(again["status"], "held", "holds work again")
    expect(c.post("/v1/events/%s/bookings" % event_id,
                  {"user_id": "b", "seats": [{"id": "FLOOR-B-2", "version": 1}]}), 201,
           what="a booking after reopening")


def test_closed_sales_survive_restart_and_kill9():
    server = Server().start()
    c = server.client()
    closed, reopened = uid("shut"), uid("back")
    create_event(c, closed)
    create_event(c, reopened)
    expect(c.post("/v1/events/%s/close" % closed), 200)
    expect(c.post("/v1/events/%s/close" % reopened), 200)
    expect(c.post("/v1/events/%s/open" % reopened), 200)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, closed)["sales_open"], False, "closed after a restart")
    check_equal(get_event(c, reopened)["sales_open"], True, "reopened after a restart")
    expect(post_hold(c, closed, user("x"), ["FLOOR-A-1"]), 409, "sales_closed")

    expect(c.post("/v1/events/%s/open" % closed), 200)
    expect(c.post("/v1/events/%s/close" % reopened), 200)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(10)
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, closed)["sales_open"], True, "reopened, then kill -9")
    check_equal(get_event(c, reopened)["sales_open"], False, "closed, then kill -9")
    expect(post_hold(c, reopened, user("x"), ["FLOOR-A-1"]), 409, "sales_closed")
    hold(c, closed, user("x"), ["FLOOR-A-1"])
    server.stop()


def test_a_version_2_store_is_migrated():
    """A data directory written before sales could close (schema version 2, events without
    sales_open) starts: its events are open, and closing them is durable."""
    skip_on_postgres("the test writes an old SQLite file (holdfast.db) and checks its migration")
    server = Server().start()
    c = server.client()
    event_id = uid("old")
    create_event(c, event_id)
    owner = user("old")
    h = hold(c, event_id, owner, ["FLOOR-A-1"])
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    database.execute("ALTER TABLE events DROP COLUMN sales_open")
    database.execute("DROP TABLE history")  # version 2 had no history either
    database.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    database.commit()
    database.close()
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, event_id)["sales_open"], True, "an old event is open")
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "its hold is kept")
    expect(c.post("/v1/events/%s/close" % event_id), 200)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, event_id)["sales_open"], False, "closed after the migration")
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    version = database.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    database.close()
    # 2 to 3 to 4 (payments) to 5 (the history) to 6 (tickets) to 7 (dispatch) in one step.
    check_equal(version, ("13",), "the schema version after the migration")
