"""An event's audit history (API.md section 7, last paragraph): every state change of an event
(hold, extend, release, expiry, commit, cancel, booking, payment) is an entry, written in the same
durable step as the change and numbered per event from 1 without gaps, also across a restart and
a kill -9; GET /v1/events/{event}/history pages them with after, limit and next. Every entry
about a hold or an order reads alone (its reservation_id, user_id, seats and pools), and the
filters seat=, user= and reservation= pick entries by them, paging as without them."""

import hashlib
import hmac
import json
import time
import urllib.parse

import harness
from harness import (RawConnection, Server, check, check_equal, commit, create_event, expect,
                     get_seat, hold, parse_time, release, request_bytes, uid, user)

HISTORY_KEYS = {"history", "next"}
WEBHOOK_SECRET = "whsec_history_secret"
SERVER_OPTIONS = {"extra_args": ["--webhook-secret", WEBHOOK_SECRET]}
# What a filtered page examines at most (HF_HISTORY_SCAN_MAX, docs/API.md "Audit history").
SCAN_MAX = 1000


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
        "seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {"GA": 1},
        "refund_id": cancelled["refund_id"]},
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


# ---- Entries that read alone, and the filters ----


def _deliver(c, intent, reservation_id, amount, kind="payment.succeeded"):
    """A signed payment webhook's delivery; returns its answer's body."""
    body = json.dumps({"id": uid("evt"), "type": kind, "payment_intent_id": intent,
                       "reservation_id": reservation_id, "amount": amount}).encode()
    t = int(time.time())
    mac = hmac.new(WEBHOOK_SECRET.encode(), ("%d." % t).encode() + body, hashlib.sha256)
    return expect(c.post("/v1/webhooks/payments", raw=body,
                         headers={"Holdfast-Signature": "t=%d,v1=%s" % (t, mac.hexdigest())}),
                  200, what="delivery %s" % intent)


def _filtered(c, event_id, what, **filters):
    """Every entry the filters pick, following next from after=0 with pages of 1,000."""
    entries, after = [], 0
    for _ in range(100):
        query = dict(filters, after=after, limit=1000)
        page = _history(c, event_id, "?" + urllib.parse.urlencode(query))
        entries.extend(page["history"])
        if page["next"] is None:
            return entries
        after = page["next"]
    raise AssertionError("%s: no end after 100 pages" % what)


def _picked(c, event_id, **filters):
    """(type, reservation_id, user_id) of each entry the filters pick."""
    return [(e["type"], e["reservation_id"], e["user_id"])
            for e in _filtered(c, event_id, "filters %r" % filters, **filters)]


def _subject(entry):
    return {k: entry.get(k, "(missing)") for k in ("reservation_id", "user_id", "seats", "pools")}


def _wait_for_expiry(c, event_id, reservation_id):
    deadline = time.time() + 10
    while time.time() < deadline:
        if any(e["type"] == "expiry" and e["reservation_id"] == reservation_id
               for e in _all(c, event_id)):
            return
        time.sleep(0.1)
    raise AssertionError("the expiry of %s never entered the history" % reservation_id)


def test_payment_entries_read_alone(server):
    """A payment entry carries its hold's reservation_id, user_id, seats and pools, whatever
    the delivery decided (committed, refund_required, recorded), and so does the commit it
    made; a delivery for no known hold enters no event's history."""
    c = server.client()
    event_id = uid("histw")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2 = user(), user()
    h1 = hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1})
    paid = uid("pi")
    committed = _deliver(c, paid, h1["reservation_id"], h1["total"])
    check_equal(committed["result"], "committed", "the first delivery")
    h2 = hold(c, event_id, u2, ["BALC-A-2", "BALC-A-3"])
    _deliver(c, uid("pi"), h2["reservation_id"], 5, kind="payment.failed")
    refunded = _deliver(c, uid("pi"), h2["reservation_id"], h2["total"] + 1)
    check_equal(refunded["reason"], "amount_mismatch", "the refunded delivery")
    _deliver(c, uid("pi"), "res_nosuchhold", 7)
    entries = _all(c, event_id)
    check_equal([(e["type"], e.get("result")) for e in entries],
                [("hold", None), ("commit", None), ("payment", "committed"), ("hold", None),
                 ("payment", "recorded"), ("payment", "refund_required")], "the entries")
    first = {"reservation_id": h1["reservation_id"], "user_id": u1, "seats": ["FLOOR-A-1"],
             "pools": {"GA": 1}}
    second = {"reservation_id": h2["reservation_id"], "user_id": u2,
              "seats": ["BALC-A-2", "BALC-A-3"], "pools": {}}
    for index, expected in [(1, first), (2, first), (4, second), (5, second)]:
        check_equal(_subject(entries[index]), expected, "entry %d's subject" % (index + 1))
    check_equal(entries[2]["order_id"], committed["order_id"], "the committed payment's order")
    check_equal(entries[5]["refund_id"], refunded["refund_id"], "the refund's id")


def test_the_seat_filter_says_who_had_a_seat_and_when_it_came_free(server):
    """seat=FLOOR-A-1 across hold, expiry, hold, commit and cancel, among other seats'
    entries: who had it (user_id) and when it came free (the expiry's and the cancel's at)."""
    c = server.client()
    event_id = uid("hists")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2, u3 = user(), user(), user()
    h1 = hold(c, event_id, u1, ["FLOOR-A-1"], ttl_s=0.3)
    other = hold(c, event_id, u3, ["FLOOR-B-1"])
    release(c, other["reservation_id"], u3)
    _wait_for_expiry(c, event_id, h1["reservation_id"])
    h2 = hold(c, event_id, u2, ["FLOOR-A-2", "FLOOR-A-1"], {"GA": 1})
    version = get_seat(c, event_id, "FLOOR-B-2")["version"]
    expect(c.post("/v1/events/%s/bookings" % event_id,
                  {"user_id": u3, "seats": [{"id": "FLOOR-B-2", "version": version}]}), 201)
    order = commit(c, h2["reservation_id"], u2, payment_ref="pi_seat")
    before = _now_ms()
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u2}), 200)
    after = _now_ms()
    hold(c, event_id, u3, ["FLOOR-A-3"])
    entries = _filtered(c, event_id, "seat=FLOOR-A-1", seat="FLOOR-A-1")
    r1, r2 = h1["reservation_id"], h2["reservation_id"]
    check_equal([(e["type"], e["reservation_id"], e["user_id"]) for e in entries],
                [("hold", r1, u1), ("expiry", r1, u1), ("hold", r2, u2), ("commit", r2, u2),
                 ("cancel", r2, u2)], "who had FLOOR-A-1")
    check(all("FLOOR-A-1" in e["seats"] for e in entries), "every entry names FLOOR-A-1")
    check_equal(entries[1]["seats"], ["FLOOR-A-1"], "the seats the expiry gave back")
    check_equal(parse_time(entries[1]["at"]), parse_time(h1["expires_at"]),
                "when FLOOR-A-1 came free the first time")
    check_equal(entries[4]["seats"], ["FLOOR-A-2", "FLOOR-A-1"], "the seats the cancel gave back")
    check_equal(entries[4]["pools"], {"GA": 1}, "the units the cancel gave back")
    at = parse_time(entries[4]["at"])
    check(before <= at <= after, "the cancel's at %d within [%d, %d]" % (at, before, after))
    everything = _all(c, event_id)
    check_equal([e["seq"] for e in entries],
                [e["seq"] for e in everything if "FLOOR-A-1" in e.get("seats", [])],
                "the seqs the filter picks are those of the whole history")
    check_equal(len(everything), 9, "the whole history, other seats' entries included")
    # A seat the event does not have is in no entry.
    check_equal(_history(c, event_id, "?seat=FLOOR-Z-1"), {"history": [], "next": None},
                "an unknown seat")
    check_equal(_history(c, event_id, "?seat=FLOOR-A-20")["history"], [], "a free seat")


def test_the_user_and_reservation_filters_and_their_combinations(server):
    c = server.client()
    event_id = uid("histu")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2 = user(), "u 2&x=%+/é"   # a user id that needs percent-encoding
    h1 = hold(c, event_id, u1, ["FLOOR-A-1"])
    # A longer ttl than the hold's: an extend in the hold's own millisecond would move nothing.
    expect(c.post("/v1/holds/%s/extend" % h1["reservation_id"],
                  {"user_id": u1, "ttl_s": 900}), 200)
    release(c, h1["reservation_id"], u1)
    h2 = hold(c, event_id, u1, ["FLOOR-A-2"])
    order = commit(c, h2["reservation_id"], u1)
    h3 = hold(c, event_id, u2, ["FLOOR-A-3"])
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    version = get_seat(c, event_id, "FLOOR-B-1")["version"]
    expect(c.post("/v1/events/%s/bookings" % event_id,
                  {"user_id": u2, "seats": [{"id": "FLOOR-B-1", "version": version}]}), 201)
    r1, r2, r3 = h1["reservation_id"], h2["reservation_id"], h3["reservation_id"]
    check_equal(_picked(c, event_id, user=u1),
                [("hold", r1, u1), ("extend", r1, u1), ("release", r1, u1), ("hold", r2, u1),
                 ("commit", r2, u1), ("cancel", r2, u1)], "user=u1")
    check_equal(_picked(c, event_id, user=u2), [("hold", r3, u2), ("booking", None, u2)],
                "user=u2 (percent-encoded)")
    check_equal(_picked(c, event_id, reservation=r2),
                [("hold", r2, u1), ("commit", r2, u1), ("cancel", r2, u1)],
                "reservation=r2: its order's cancel too")
    check_equal(_picked(c, event_id, reservation=r1, user=u1),
                [("hold", r1, u1), ("extend", r1, u1), ("release", r1, u1)], "r1 and u1")
    check_equal(_picked(c, event_id, reservation=r1, user=u2), [], "r1 and u2")
    check_equal(_picked(c, event_id, seat="FLOOR-A-2", user=u1),
                [("hold", r2, u1), ("commit", r2, u1), ("cancel", r2, u1)], "a seat and u1")
    check_equal(_picked(c, event_id, seat="FLOOR-A-2", user=u1, reservation=r1), [],
                "all three, disagreeing")
    check_equal(_picked(c, event_id, seat="FLOOR-B-1", user=u2),
                [("booking", None, u2)], "a booking's seat and user")
    check_equal(_history(c, event_id, "?user=nobody"), {"history": [], "next": None},
                "an unknown user")
    check_equal(_history(c, event_id, "?reservation=res_nosuchhold"),
                {"history": [], "next": None}, "an unknown reservation")


def test_paging_with_a_filter(server):
    c = server.client()
    event_id = uid("histq")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2 = user(), user()
    for n in range(1, 6):
        hold(c, event_id, u1, ["FLOOR-A-%d" % n])
        hold(c, event_id, u2, ["FLOOR-B-%d" % n])
    mine = [e["seq"] for e in _all(c, event_id) if e["user_id"] == u1]
    check_equal(mine, [1, 3, 5, 7, 9], "u1's entries")
    seqs, nexts, after = [], [], 0
    for _ in range(10):
        page = _history(c, event_id, "?user=%s&limit=1&after=%d" % (u1, after))
        check_equal(len(page["history"]), 1, "a page of one after %d" % after)
        seqs.append(page["history"][0]["seq"])
        nexts.append(page["next"])
        if page["next"] is None:
            break
        after = page["next"]
    check_equal(seqs, mine, "u1's entries a page at a time")
    check_equal(nexts, [1, 3, 5, 7, None], "next: the last entry of each page, null at the end")
    page = _history(c, event_id, "?limit=2&user=%s&after=3" % u1)
    check_equal([e["seq"] for e in page["history"]], [5, 7], "two after seq 3")
    check_equal(page["next"], 7, "next of two after seq 3")
    check_equal(_history(c, event_id, "?user=%s&after=9" % u1), {"history": [], "next": None},
                "after u1's last entry")


def test_filter_refusals(server):
    c = server.client()
    event_id = uid("histr")
    create_event(c, event_id)
    bad = {
        "seat": ["", "FLOOR", "FLOOR-A", "FLOOR-A-", "FLOOR-A-0", "FLOOR-A-01", "FLOOR-A-x",
                 "FLOOR-A-1-2", "FLOOR-A-12345678", "-A-1", "FLOOR--1", "FLO%20OR-A-1",
                 "%ZZ", "F" * 65 + "-A-1"],
        "user": ["", "%ZZ", "%00", "u" * 129],
        "reservation": ["", "res-1", "%ZZ", "r" * 65, "res%201"],
    }
    for field, values in bad.items():
        for value in values:
            expect(c.get("/v1/events/%s/history?%s=%s" % (event_id, field, value)), 400,
                   "invalid_request", field, what="%s=%r" % (field, value))
        # Named without a value: empty.
        expect(c.get("/v1/events/%s/history?%s" % (event_id, field)), 400, "invalid_request",
               field, what="%s without a value" % field)
    # The longest values that are well formed are accepted.
    for query in ["seat=%s-%s-9999999" % ("S" * 64, "R" * 64), "user=" + "u" * 128,
                  "reservation=" + "r" * 64]:
        check_equal(_history(c, event_id, "?" + query), {"history": [], "next": None}, query)
    # after and limit are checked first, then the filters.
    expect(c.get("/v1/events/%s/history?seat=&limit=0" % event_id), 400, "invalid_request",
           "limit")
    expect(c.get("/v1/events/%s/history?seat=&user=" % event_id), 400, "invalid_request",
           "seat")
    expect(c.get("/v1/events/%s/history?user=" % uid("nope")), 404, "event_not_found")


def _pipelined_holds(server, event_id, user_id, count):
    """count holds of FLOOR-A-1 by user_id, each replacing the one before (a release and a hold
    each, but for the first), sent pipelined in rounds; all must succeed."""
    raw = RawConnection(server.port)
    done = 0
    while done < count:
        round_count = min(200, count - done)
        body = {"user_id": user_id, "seats": ["FLOOR-A-1"], "replace_existing": True}
        raw.send(b"".join(request_bytes("POST", "/v1/events/%s/holds" % event_id, body)
                          for _ in range(round_count)))
        for response in raw.read_responses(round_count):
            check_equal(response.status, 201, "a pipelined hold")
        done += round_count
    raw.close()


def test_a_filtered_page_examines_a_bounded_number_of_entries(server):
    """A filtered page examines at most 1,000 entries after `after`: when none of them
    matches, it answers an empty page whose next is where it stopped, and the next page goes
    on from there."""
    c = server.client()
    event_id = uid("histb")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2 = user(), user()
    _pipelined_holds(server, event_id, u1, SCAN_MAX // 2 + 1)   # entries 1 to 1,001
    last = hold(c, event_id, u2, ["FLOOR-B-1"])                  # entry 1,002
    page = _history(c, event_id, "?user=%s" % u2)
    check_equal(page, {"history": [], "next": SCAN_MAX}, "the first 1,000 entries examined")
    page = _history(c, event_id, "?user=%s&after=%d" % (u2, SCAN_MAX))
    check_equal([(e["seq"], e["reservation_id"]) for e in page["history"]],
                [(SCAN_MAX + 2, last["reservation_id"])], "the page after the bound")
    check_equal(page["next"], None, "next at the end")
    page = _history(c, event_id, "?user=%s&after=1&limit=3" % u1)
    check_equal([e["seq"] for e in page["history"]], [2, 3, 4], "u1's entries are found at once")
    check_equal(page["next"], 4, "next of a full page")
    check_equal(len(_filtered(c, event_id, "seat=FLOOR-A-1", seat="FLOOR-A-1")), SCAN_MAX + 1,
                "every entry of FLOOR-A-1 by following next")


test_a_filtered_page_examines_a_bounded_number_of_entries.weight = 3.0
