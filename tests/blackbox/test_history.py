"""An event's audit history (API.md section 7, last paragraph): every state change of an event
(hold, extend, release, expiry, commit, cancel, booking) is an entry, written in the same durable
step as the change and numbered per event from 1 without gaps, also across a restart and a
kill -9; GET /v1/events/{event}/history pages them with after, limit and next."""

import time

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, get_seat, hold,
                     parse_time, release, uid, user)

HISTORY_KEYS = {"history", "next"}


def _history(c, event_id, query=""):
    page = expect(c.get("/v1/events/%s/history%s" % (event_id, query)), 200,
                  what="history%s" % query)
    check_equal(set(page), HISTORY_KEYS, "the members of a page of history")
    return page


def _all(c, event_id):
    """Every entry, following next with pages of 1,000; checks that seq is 1, 2, 3, ..."""
    entries, after = [], 0
    for _ in range(100):
        page = _history(c, event_id, "?limit=1000&after=%d" % after)
        entries.extend(page["history"])
        if page["next"] is None:
            break
        after = page["next"]
    check_equal([e["seq"] for e in entries], list(range(1, len(entries) + 1)),
                "the seqs of the history of %s" % event_id)
    return entries


def _without_at(entry):
    return {k: v for k, v in entry.items() if k != "at"}


def _check_entry(entry, expected, at_ms, what):
    """Field by field: exactly the expected members, and at (RFC 3339 with ms) equal to at_ms,
    or within [at_ms[0], at_ms[1]] when a range is given."""
    check_equal(_without_at(entry), expected, what)
    at = parse_time(entry.get("at"), what + " at")
    if isinstance(at_ms, tuple):
        check(at_ms[0] <= at <= at_ms[1], "%s: at %d not within %r" % (what, at, at_ms))
    else:
        check_equal(at, at_ms, what + " at")


def _now_ms():
    return int(time.time() * 1000)


def test_a_life_of_holds_and_orders_field_by_field():
    """hold, extend, commit, cancel, release, booking and an expiry swept by the timer with no
    request at all in the meantime (a server of its own), each entry exactly as the answers
    said; refused requests make no entry."""
    server = Server().start()
    c = server.client()
    event_id = uid("hist")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2, u3, u4 = user(), user(), user(), user()

    h1 = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 1}, ttl_s=30)
    # Refused: the seat is held. No entry.
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": u2, "seats": ["FLOOR-A-1"]}),
           409, "seats_unavailable")
    before = _now_ms()
    extended = expect(c.post("/v1/holds/%s/extend" % h1["reservation_id"],
                             {"user_id": u1, "ttl_s": 60}), 200)
    after = _now_ms()
    order = commit(c, h1["reservation_id"], u1, payment_ref="pi_hist_1")
    before_cancel = _now_ms()
    cancelled = expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    after_cancel = _now_ms()
    h2 = hold(c, event_id, u2, ["FLOOR-B-1"])
    before_release = _now_ms()
    release(c, h2["reservation_id"], u2)
    after_release = _now_ms()
    version = get_seat(c, event_id, "FLOOR-B-5")["version"]
    booking = expect(c.post("/v1/events/%s/bookings" % event_id,
                            {"user_id": u3, "seats": [{"id": "FLOOR-B-5", "version": version}],
                             "pools": {"GA": 2}, "payment_ref": "pi_hist_2"}), 201)
    h3 = hold(c, event_id, u4, ["BALC-A-1"], ttl_s=0.3)
    c.close()
    # No request at all until the timer has swept h3.
    time.sleep(1.5)
    c = server.client()
    entries = _all(c, event_id)
    check_equal([e["type"] for e in entries],
                ["hold", "extend", "commit", "cancel", "hold", "release", "booking", "hold",
                 "expiry"], "the types of the entries")
    _check_entry(entries[0], {
        "seq": 1, "type": "hold", "reservation_id": h1["reservation_id"], "user_id": u1,
        "seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {"GA": 1}, "total": h1["total"],
        "expires_at": h1["expires_at"]}, parse_time(h1["created_at"]), "the hold")
    # Every entry about a hold or an order reads alone: its reservation_id, user_id, seats and
    # pools, whatever its type (API.md section 7).
    _check_entry(entries[1], {
        "seq": 2, "type": "extend", "reservation_id": h1["reservation_id"], "user_id": u1,
        "seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {"GA": 1},
        "expires_at": extended["expires_at"]}, (before, after), "the extension")
    _check_entry(entries[2], {
        "seq": 3, "type": "commit", "reservation_id": h1["reservation_id"],
        "order_id": order["order_id"], "user_id": u1, "seats": ["FLOOR-A-1", "FLOOR-A-2"],
        "pools": {"GA": 1}, "total": order["total"], "payment_ref": "pi_hist_1"},
        parse_time(order["created_at"]), "the commit")
    check_equal(cancelled["status"], "cancelled", "the cancelled order")
    _check_entry(entries[3], {
        "seq": 4, "type": "cancel", "order_id": order["order_id"],
        "reservation_id": h1["reservation_id"], "user_id": u1,
        "seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {"GA": 1}},
        (before_cancel, after_cancel), "the cancel")
    _check_entry(entries[4], {
        "seq": 5, "type": "hold", "reservation_id": h2["reservation_id"], "user_id": u2,
        "seats": ["FLOOR-B-1"], "pools": {}, "total": h2["total"],
        "expires_at": h2["expires_at"]}, parse_time(h2["created_at"]), "the second hold")
    _check_entry(entries[5], {
        "seq": 6, "type": "release", "reservation_id": h2["reservation_id"], "user_id": u2,
        "seats": ["FLOOR-B-1"], "pools": {}},
        (before_release, after_release), "the release")
    _check_entry(entries[6], {
        "seq": 7, "type": "booking", "order_id": booking["order_id"], "reservation_id": None,
        "user_id": u3,
        "seats": ["FLOOR-B-5"], "pools": {"GA": 2}, "total": booking["total"],
        "payment_ref": "pi_hist_2"}, parse_time(booking["created_at"]), "the booking")
    _check_entry(entries[7], {
        "seq": 8, "type": "hold", "reservation_id": h3["reservation_id"], "user_id": u4,
        "seats": ["BALC-A-1"], "pools": {}, "total": h3["total"],
        "expires_at": h3["expires_at"]}, parse_time(h3["created_at"]), "the short hold")
    # An expiry happens at the hold's expires_at, whenever the timer swept it.
    _check_entry(entries[8], {
        "seq": 9, "type": "expiry", "reservation_id": h3["reservation_id"], "user_id": u4,
        "seats": ["BALC-A-1"], "pools": {}, "expires_at": h3["expires_at"]}, parse_time(h3["expires_at"]), "the expiry")
    server.stop()


test_a_life_of_holds_and_orders_field_by_field.weight = 2.0


def test_paging_with_after_limit_and_next(server):
    c = server.client()
    event_id = uid("histp")
    create_event(c, event_id, max_seats_per_user=0)
    u = user()
    holds = [hold(c, event_id, u, ["FLOOR-A-%d" % n]) for n in range(1, 6)]
    page = _history(c, event_id, "?limit=2")
    check_equal([e["seq"] for e in page["history"]], [1, 2], "the first page")
    check_equal(page["next"], 2, "next of the first page")
    check_equal([e["reservation_id"] for e in page["history"]],
                [h["reservation_id"] for h in holds[:2]], "the first page's holds, oldest first")
    page = _history(c, event_id, "?limit=2&after=2")
    check_equal([e["seq"] for e in page["history"]], [3, 4], "the second page")
    check_equal(page["next"], 4, "next of the second page")
    page = _history(c, event_id, "?after=4&limit=2")
    check_equal([e["seq"] for e in page["history"]], [5], "the last page")
    check_equal(page["next"], None, "next of the last page")
    page = _history(c, event_id, "?limit=5")
    check_equal(len(page["history"]), 5, "a page exactly as long as the history")
    check_equal(page["next"], None, "next when nothing follows")
    check_equal(_history(c, event_id, "?after=5"), {"history": [], "next": None},
                "after the last entry")
    check_equal(_history(c, event_id, "?after=999999999999"), {"history": [], "next": None},
                "after beyond the last entry")
    check_equal(_history(c, event_id, "?after=0&limit=1000")["history"],
                _history(c, event_id)["history"], "after=0 and limit=1000 are the defaults' page")


def test_default_limit_is_100(server):
    c = server.client()
    event_id = uid("histd")
    create_event(c, event_id, max_seats_per_user=0)
    u = user()
    for n in range(1, 52):   # 51 holds and 51 releases: 102 entries
        h = hold(c, event_id, u, ["FLOOR-A-1"])
        release(c, h["reservation_id"], u)
    page = _history(c, event_id)
    check_equal(len(page["history"]), 100, "the default page")
    check_equal(page["next"], 100, "next of the default page")
    check_equal([e["type"] for e in page["history"][:3]], ["hold", "release", "hold"],
                "the entries alternate")
    rest = _history(c, event_id, "?after=100")
    check_equal([e["seq"] for e in rest["history"]], [101, 102], "the rest")
    check_equal(rest["next"], None, "next of the rest")


def test_refusals(server):
    c = server.client()
    event_id = uid("histr")
    create_event(c, event_id)
    expect(c.get("/v1/events/%s/history" % uid("nope")), 404, "event_not_found")
    limit_message = "limit must be an integer from 1 to 1000"
    for value in ["0", "1001", "-1", "abc", "", "1.5", "%2B5", "%205", "99999999999999999999"]:
        response = c.get("/v1/events/%s/history?limit=%s" % (event_id, value))
        error = expect(response, 400, "invalid_request", "limit", what="limit=%r" % value)
        check_equal(error["error"]["message"], limit_message, "the message of limit=%r" % value)
    for value in ["-1", "x", "", "1.5", "+1", "99999999999999999999"]:
        response = c.get("/v1/events/%s/history?after=%s" % (event_id, value))
        expect(response, 400, "invalid_request", "after", what="after=%r" % value)
    expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)
    expect(c.post("/v1/events/%s/history" % event_id, {}), 405, "method_not_allowed")


def test_two_events_are_numbered_independently(server):
    c = server.client()
    first, second = uid("hista"), uid("histb")
    create_event(c, first)
    create_event(c, second)
    u = user()
    a1 = hold(c, first, u, ["FLOOR-A-1"])
    b1 = hold(c, second, u, ["FLOOR-A-1"])
    release(c, a1["reservation_id"], u)
    b2 = hold(c, second, u, ["FLOOR-A-2"])
    check_equal([(e["seq"], e["type"], e["reservation_id"]) for e in _all(c, first)],
                [(1, "hold", a1["reservation_id"]), (2, "release", a1["reservation_id"])],
                "the first event's history")
    check_equal([(e["seq"], e["type"], e["reservation_id"]) for e in _all(c, second)],
                [(1, "hold", b1["reservation_id"]), (2, "hold", b2["reservation_id"])],
                "the second event's history")


def test_the_history_needs_the_key():
    server = Server(api_key="sekrit").start()
    c = server.client(api_key="sekrit")
    event_id = uid("histk")
    create_event(c, event_id)
    anonymous = server.client(api_key=None)
    response = anonymous.get("/v1/events/%s/history" % event_id)
    expect(response, 401, "unauthorized")
    check_equal(response.header("www-authenticate"), "Bearer", "WWW-Authenticate")
    expect(c.get("/v1/events/%s/history" % event_id), 200)
    server.stop()


def test_restart_and_kill9_keep_the_numbering():
    """Numbering goes on after a restart (a commit of a hold made before it is the next seq),
    a hold that lapsed while the server was down is expired at start and recorded, and after a
    kill -9 every acknowledged change is there, the next numbered after it without a gap."""
    server = Server().start()
    c = server.client()
    event_id = uid("hists")
    create_event(c, event_id, max_seats_per_user=0)
    u = user()
    kept = hold(c, event_id, u, ["FLOOR-A-1"], ttl_s=300)
    lapsing = hold(c, event_id, u, ["FLOOR-A-2"], ttl_s=0.5)
    server.stop()
    time.sleep(0.7)
    server = server.restart()
    c = server.client()
    order = commit(c, kept["reservation_id"], u, payment_ref="pi_after_restart")
    entries = _all(c, event_id)
    check_equal([(e["seq"], e["type"], e["reservation_id"]) for e in entries],
                [(1, "hold", kept["reservation_id"]), (2, "hold", lapsing["reservation_id"]),
                 (3, "expiry", lapsing["reservation_id"]), (4, "commit", kept["reservation_id"])],
                "the history after a restart")
    check_equal(entries[3]["order_id"], order["order_id"], "the commit's order")
    last = hold(c, event_id, u, ["FLOOR-A-3"])   # the very last answer before the kill
    server.kill()
    server = server.restart()
    c = server.client()
    entries = _all(c, event_id)
    check_equal([(e["seq"], e["type"]) for e in entries[4:]], [(5, "hold")],
                "the last acknowledged change after kill -9")
    check_equal(entries[4]["reservation_id"], last["reservation_id"], "the last hold")
    release(c, last["reservation_id"], u)
    check_equal([(e["seq"], e["type"]) for e in _all(c, event_id)[5:]], [(6, "release")],
                "the next change after kill -9")
    server.stop()


test_restart_and_kill9_keep_the_numbering.weight = 2.0


class FaultServer(Server):
    """Makes the store's FAIL_BATCH-th batch of this run fail (HOLDFAST_FAULT_FAIL_BATCH); a
    restart (a plain Server) runs without it."""

    FAIL_BATCH = 3

    def _spawn(self, environment):
        environment = dict(environment)
        environment["HOLDFAST_FAULT_FAIL_BATCH"] = str(self.FAIL_BATCH)
        return Server._spawn(self, environment)


def test_a_failed_batch_leaves_no_entry():
    server = Server().start()
    c = server.client()
    event_id = uid("histf")
    create_event(c, event_id, max_seats_per_user=0)
    server.stop()
    server = FaultServer(data_dir=server.data_dir).start()
    c = server.client()
    u = user()
    acknowledged = []
    failed_seat = None
    for n in range(1, 20):   # one request at a time: one batch each
        response = c.post("/v1/events/%s/holds" % event_id,
                          {"user_id": u, "seats": ["FLOOR-A-%d" % n]})
        if response.status != 201:
            expect(response, 503, "unavailable")
            failed_seat = "FLOOR-A-%d" % n
            break
        acknowledged.append(response.json["reservation_id"])
    check(failed_seat is not None and acknowledged, "a batch failed after some holds")
    # The store failed: reads are answered from what is durable. On PostgreSQL the node drops
    # its units and its next lease renewal (within a second) loads them again: 503 until then.
    if harness.STORE_URL:
        deadline = time.time() + 5
        while c.get("/v1/events/%s" % event_id).status == 503 and time.time() < deadline:
            time.sleep(0.2)
    entries = _all(c, event_id)
    check_equal([(e["type"], e["reservation_id"]) for e in entries],
                [("hold", h) for h in acknowledged], "the history after a failed batch")
    check(all(e["seats"] != [failed_seat] for e in entries), "the failed hold has no entry")
    server.stop(expect_code=None)
    server = server.restart()
    c = server.client()
    again = hold(c, event_id, u, [failed_seat])
    entries = _all(c, event_id)
    check_equal([(e["seq"], e["type"], e["reservation_id"]) for e in entries[len(acknowledged):]],
                [(len(acknowledged) + 1, "hold", again["reservation_id"])],
                "the next change after the failed batch, numbered without a gap")
    server.stop()
