"""Calendars, time as inventory (API.md section 12): creation with its defaults and every bad
field; night and minute spans; half-open spans, buffers, capacity with quantities; the last unit
raced by 100 holds; the life of a calendar hold (extend, release, expiry, commit, cancel) and
bookings; payment webhooks; Idempotency-Key; close and open; staff lists; a user's orders by
calendar; the per-user limit; availability, free and slots; 404s; restarts (clean and kill -9,
SQLite and PostgreSQL)."""

import datetime
import hashlib
import hmac
import json
import time
import urllib.parse
from collections import Counter

import harness
from harness import (ORD_ID_RE, RES_ID_RE, TIME_RE, Server, check, check_equal, expect,
                     parse_time, run_threads, uid, user)

WEIGHT = 3.0
SECRET = "whsec_calendar_secret"
SERVER_OPTIONS = {"extra_args": ["--webhook-secret", SECRET]}


# ---- helpers ----


def day(offset):
    """The UTC date offset days from today, as a night calendar writes it."""
    today = datetime.datetime.now(datetime.timezone.utc).date()
    return (today + datetime.timedelta(days=offset)).isoformat()


def instant(days, hour, minute=0, offset=None):
    """An instant days from today at hour:minute UTC; offset (minutes east) rewrites it in that
    zone, the same instant."""
    today = datetime.datetime.now(datetime.timezone.utc).date()
    moment = datetime.datetime(today.year, today.month, today.day, tzinfo=datetime.timezone.utc)
    moment += datetime.timedelta(days=days, hours=hour, minutes=minute)
    if offset is None:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    zone = datetime.timezone(datetime.timedelta(minutes=offset))
    return moment.astimezone(zone).isoformat()


def utc_ms(days, hour, minute=0):
    """The answer's form of instant(days, hour, minute)."""
    return instant(days, hour, minute).replace("Z", ".000Z")


def hotel(c, **fields):
    body = {"id": uid("hotel"), "name": "Hotel Lisboa", "currency": "EUR", "unit": "night",
            "resources": [
                {"id": "DBL", "name": "Double room", "capacity": 12, "price": 15000,
                 "min_length": 1, "max_length": 30},
                {"id": "SUITE", "capacity": 1, "price": 60000, "min_length": 2},
                {"id": "PARKING", "capacity": 40, "price": 1500}]}
    body.update(fields)
    return expect(c.post("/v1/calendars", body), 201, what="hotel")


def clinic(c, **fields):
    body = {"id": uid("clinic"), "unit": "minute", "granularity_min": 15, "currency": "EUR",
            "resources": [
                {"id": "dr_smith", "capacity": 1, "price": 2000, "min_length": 15,
                 "max_length": 60, "buffer_before_min": 0, "buffer_after_min": 10},
                {"id": "yoga", "capacity": 20, "price": 1500, "min_length": 60,
                 "max_length": 60}]}
    body.update(fields)
    return expect(c.post("/v1/calendars", body), 201, what="clinic")


def item(resource, start, end, quantity=None):
    body = {"resource": resource, "from": start, "to": end}
    if quantity is not None:
        body["quantity"] = quantity
    return body


def post_hold(c, calendar, user_id, items, headers=None, **extra):
    body = {"user_id": user_id, "items": items}
    body.update(extra)
    return c.post("/v1/calendars/%s/holds" % calendar, body, headers=headers)


def hold(c, calendar, user_id, items, **extra):
    return expect(post_hold(c, calendar, user_id, items, **extra), 201, what="hold %r" % items)


def commit(c, hold_id, user_id, payment_ref=None):
    body = {"user_id": user_id}
    if payment_ref:
        body["payment_ref"] = payment_ref
    return expect(c.post("/v1/holds/%s/commit" % hold_id, body), 200, what="commit")


def release(c, hold_id, user_id):
    return expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": user_id}), 200,
                  what="release")


def availability(c, calendar, resource, start, end):
    return expect(c.get("/v1/calendars/%s/availability?resource=%s&from=%s&to=%s"
                        % (calendar, resource, start, end)), 200, what="availability")


def free_of(c, calendar, resource, start, end):
    """The least free quantity of resource over [start, end), from its segments."""
    segments = availability(c, calendar, resource, start, end)["segments"]
    return min(s["available"] for s in segments)


def can_hold(c, calendar, resource, start, end):
    """Whether one more unit of resource fits over [start, end) now (GET /free)."""
    document = expect(c.get("/v1/calendars/%s/free?resource=%s&from=%s&to=%s"
                            % (calendar, resource, quote(start), quote(end))), 200)
    return [r["resource"] for r in document["resources"]] == [resource]


def quote(text):
    return text.replace("+", "%2B")


def summary(c, calendar):
    return expect(c.get("/v1/calendars/%s" % calendar), 200, what="summary")


# ---- creation ----


def test_creation_and_defaults(server):
    c = server.client()
    body = {"id": uid("cal"), "unit": "night", "resources": [{"id": "R1"}]}
    created = expect(c.post("/v1/calendars", body), 201)
    check_equal(created["id"], body["id"], "id")
    check_equal(created["currency"], "USD", "currency default")
    check_equal(created["unit"], "night", "unit")
    check_equal(created["hold_ttl_s"], 600, "hold_ttl_s default")
    check_equal(created["max_hold_s"], 1800, "max_hold_s default: 3 x ttl")
    check_equal(created["horizon_days"], 365, "horizon_days default")
    check_equal(created["max_items_per_hold"], 10, "max_items_per_hold default")
    check_equal(created["max_uses_per_user"], 0, "max_uses_per_user default")
    check_equal(created["sales_open"], True, "sales_open")
    check_equal((created["holds_active"], created["orders"]), (0, 0), "counts")
    resource = created["resources"][0]
    check_equal((resource["capacity"], resource["price"], resource["min_length"],
                 resource["max_length"], resource["buffer_before_min"],
                 resource["buffer_after_min"]), (1, 0, 1, 365, 0, 0), "resource defaults")
    check(TIME_RE.match(created["created_at"]), "created_at %r" % created["created_at"])
    minute = expect(c.post("/v1/calendars", {"id": uid("cal"), "unit": "minute",
                                             "hold_ttl_s": 100,
                                             "resources": [{"id": "R"}]}), 201)
    check_equal(minute["granularity_min"], 15, "granularity default")
    check_equal(minute["max_hold_s"], 300, "max_hold_s follows hold_ttl_s")
    check_equal(minute["resources"][0]["max_length"], 365 * 1440, "max_length: the horizon")
    check_equal(summary(c, body["id"]), created, "GET answers the summary")
    listed = expect(c.get("/v1/calendars"), 200)["calendars"]
    check(body["id"] in [cal["id"] for cal in listed], "listed")
    expect(c.post("/v1/calendars", body), 409, "calendar_exists")


def test_an_event_and_a_calendar_never_share_an_id(server):
    c = server.client()
    event = uid("shared")
    expect(c.post("/v1/events", {"id": event, "sections": [
        {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 2}]}]}), 201)
    expect(c.post("/v1/calendars", {"id": event, "unit": "night", "resources": [{"id": "R"}]}),
           409, "calendar_exists")
    calendar = uid("shared")
    expect(c.post("/v1/calendars", {"id": calendar, "unit": "night",
                                    "resources": [{"id": "R"}]}), 201)
    expect(c.post("/v1/events", {"id": calendar, "sections": [
        {"id": "A", "price": 100, "rows": [{"id": "R", "seats": 2}]}]}), 409, "event_exists")


def test_bad_fields(server):
    c = server.client()

    def body(**fields):
        base = {"id": uid("bad"), "unit": "night",
                "resources": [{"id": "A"}, {"id": "B"}, {"id": "C"}]}
        base.update(fields)
        return base

    def resources(index, **fields):
        listed = [{"id": "A"}, {"id": "B"}, {"id": "C"}]
        listed[index].update(fields)
        return body(resources=listed)

    cases = [
        (body(id="has space"), "id"),
        (body(unit="hour"), "unit"),
        ({"id": uid("bad"), "resources": []}, "unit"),
        (body(currency="eur"), "currency"),
        (body(currency="EURO"), "currency"),
        (body(horizon_days=1101), "horizon_days"),
        (body(horizon_days=0), "horizon_days"),
        (body(hold_ttl_s=0), "hold_ttl_s"),
        (body(hold_ttl_s=60, max_hold_s=30), "max_hold_s"),
        (body(max_items_per_hold=0), "max_items_per_hold"),
        (body(max_uses_per_user=-1), "max_uses_per_user"),
        (body(unit="minute", granularity_min=7), "granularity_min"),
        (body(granularity_min=15), "granularity_min"),
        (body(resources="DBL"), "resources"),
        (resources(2, capacity=0), "resources[2].capacity"),
        (resources(1, price=-1), "resources[1].price"),
        (resources(0, id=""), "resources[0].id"),
        (resources(2, min_length=0), "resources[2].min_length"),
        (resources(2, min_length=3, max_length=2), "resources[2].max_length"),
        (resources(1, max_length=366), "resources[1].max_length"),
        (resources(1, buffer_after_min=10), "resources[1].buffer_after_min"),
        (resources(1, id="A"), "resources[1].id"),
    ]
    for document, field in cases:
        response = c.post("/v1/calendars", document)
        expect(response, 400, "invalid_request", field=field, what="%r" % document)
        check(field in response.error.get("message", ""), "message names %s: %r"
              % (field, response.error))
        expect(c.get("/v1/calendars/%s" % urllib.parse.quote(str(document.get("id")))), 404,
               "calendar_not_found", what="nothing made by %r" % document)


def test_resources_appended(server):
    c = server.client()
    cal = hotel(c)["id"]
    response = c.post("/v1/calendars/%s/resources" % cal,
                      {"resources": [{"id": "TWIN", "capacity": 3, "price": 9000}]})
    document = expect(response, 200)
    check_equal([r["id"] for r in document["resources"]], ["DBL", "SUITE", "PARKING", "TWIN"],
                "appended in order")
    taken = c.post("/v1/calendars/%s/resources" % cal,
                   {"resources": [{"id": "NEW"}, {"id": "DBL"}]})
    expect(taken, 409, "resource_exists")
    check_equal(taken.error.get("resource"), "DBL", "the taken id")
    check_equal(len(summary(c, cal)["resources"]), 4, "all or nothing")
    expect(c.post("/v1/calendars/%s/resources" % cal, {"resources": [{"id": "X", "capacity": 0}]}),
           400, "invalid_request", field="resources[0].capacity")
    expect(c.post("/v1/calendars/nope_%s/resources" % uid(), {"resources": [{"id": "X"}]}), 404,
           "calendar_not_found")
    hold(c, cal, user(), [item("TWIN", day(3), day(4))])


# ---- spans ----


def test_night_spans_half_open(server):
    c = server.client()
    cal = hotel(c)["id"]
    first = hold(c, cal, user(), [item("SUITE", day(10), day(13))])
    check(RES_ID_RE.match(first["reservation_id"]), "reservation_id")
    check_equal(first["calendar"], cal, "calendar")
    check("event" not in first and "seats" not in first and "pools" not in first,
          "no event members: %r" % first)
    check_equal(first["items"], [{"resource": "SUITE", "from": day(10), "to": day(13),
                                  "quantity": 1, "total": 180000}], "items")
    check_equal((first["total"], first["currency"], first["status"]), (180000, "EUR", "held"),
                "total")
    # Check-out and check-in on the same date do not conflict.
    hold(c, cal, user(), [item("SUITE", day(13), day(15))])
    hold(c, cal, user(), [item("SUITE", day(8), day(10))])
    overlap = post_hold(c, cal, user(), [item("SUITE", day(12), day(14))])
    expect(overlap, 409, "range_unavailable")
    check_equal(overlap.error["unavailable"],
                [{"resource": "SUITE", "from": day(12), "to": day(14), "available": 0}],
                "the taken sub-span")


def test_bad_spans(server):
    c = server.client()
    cal = hotel(c)["id"]
    clinic_id = clinic(c)["id"]
    u = user()
    cases = [
        (cal, [item("DBL", day(5), day(5))], "items[0].to"),
        (cal, [item("DBL", day(6), day(5))], "items[0].to"),
        (cal, [item("DBL", "2026-02-30", day(5))], "items[0].from"),
        (cal, [item("DBL", day(1), day(2)), item("DBL", "tomorrow", day(5))], "items[1].from"),
        (cal, [item("DBL", day(-5), day(2))], "items[0].from"),
        (cal, [item("DBL", day(300), day(400))], "items[0].to"),
        (cal, [item("SUITE", day(3), day(4))], "items[0].to"),
        (cal, [item("DBL", day(1), day(40))], "items[0].to"),
        (cal, [item("DBL", day(1), day(2), 13)], "items[0].quantity"),
        (cal, [item("DBL", day(1), day(2), 0)], "items[0].quantity"),
        (cal, [], "items"),
        (clinic_id, [item("dr_smith", instant(1, 9, 0), instant(1, 9, 20))], "items[0].to"),
        (clinic_id, [item("dr_smith", instant(1, 9, 0).replace(":00Z", ":30Z"),
                          instant(1, 9, 30))], "items[0].from"),
        (clinic_id, [item("dr_smith", instant(1, 9), instant(1, 11))], "items[0].to"),
        (clinic_id, [item("dr_smith", day(1), day(2))], "items[0].from"),
    ]
    for calendar, items, field in cases:
        expect(post_hold(c, calendar, u, items), 400, "invalid_request", field=field,
               what="%r" % items)
    check_equal(summary(c, cal)["holds_active"], 0, "nothing held")
    # The message says which rule the span broke.
    said = [
        (cal, [item("DBL", day(5), day(5))], "must be after from"),
        (cal, [item("DBL", day(-5), day(2))], "in the past"),
        (cal, [item("PARKING", day(300), day(370))], "horizon"),
        (cal, [item("SUITE", day(3), day(4))], "min_length (2 nights)"),
        (cal, [item("DBL", day(1), day(40))], "max_length (30 nights)"),
        (clinic_id, [item("dr_smith", instant(1, 9, 0), instant(1, 9, 20))], "grid of 15"),
    ]
    for calendar, items, words in said:
        message = post_hold(c, calendar, u, items).error.get("message", "")
        check(words in message, "%r: %r says %r" % (items, message, words))
    missing = post_hold(c, cal, u, [item("DBL", day(1), day(2)), item("NOPE", day(1), day(2))])
    expect(missing, 404, "resource_not_found")
    check_equal(missing.error.get("resource"), "NOPE", "the unknown resource")
    expect(post_hold(c, "nope_" + uid(), u, [item("DBL", day(1), day(2))]), 404,
           "calendar_not_found")
    # Two items of one hold may not overlap on one resource.
    expect(post_hold(c, cal, u, [item("DBL", day(1), day(3)), item("DBL", day(2), day(4))]),
           400, "invalid_request", field="items[1]")


def test_minute_spans_and_offsets(server):
    c = server.client()
    cal = clinic(c, resources=[{"id": "room", "price": 100}])["id"]
    h = hold(c, cal, user(), [item("room", instant(1, 9, 0, offset=60),
                                   instant(1, 9, 30, offset=-300))])
    check_equal(h["items"][0]["from"], utc_ms(1, 9, 0), "from in UTC with milliseconds")
    check_equal(h["items"][0]["to"], utc_ms(1, 9, 30), "to in UTC")
    check_equal(h["total"], 200, "two steps of 15 minutes at 100")
    # 09:30-10:00 follows 09:00-09:30 without conflict.
    hold(c, cal, user(), [item("room", instant(1, 9, 30), instant(1, 10, 0))])
    expect(post_hold(c, cal, user(), [item("room", instant(1, 9, 15), instant(1, 9, 45))]),
           409, "range_unavailable")


def test_buffers(server):
    c = server.client()
    cal = clinic(c)["id"]
    hold(c, cal, user(), [item("dr_smith", instant(2, 9, 0), instant(2, 9, 30))])
    # A 10-minute buffer after blocks the doctor until 09:40: 09:30 does not fit, 09:45 does.
    blocked = post_hold(c, cal, user(), [item("dr_smith", instant(2, 9, 30), instant(2, 10, 0))])
    expect(blocked, 409, "range_unavailable")
    hold(c, cal, user(), [item("dr_smith", instant(2, 9, 45), instant(2, 10, 15))])
    # 5 before and 10 after: two appointments need 15 minutes between them.
    both = expect(c.post("/v1/calendars", {
        "id": uid("both"), "unit": "minute", "granularity_min": 5,
        "resources": [{"id": "chair", "buffer_before_min": 5, "buffer_after_min": 10}]}), 201)
    hold(c, both["id"], user(), [item("chair", instant(3, 9, 0), instant(3, 9, 30))])
    expect(post_hold(c, both["id"], user(), [item("chair", instant(3, 9, 40), instant(3, 10))]),
           409, "range_unavailable")
    hold(c, both["id"], user(), [item("chair", instant(3, 9, 45), instant(3, 10, 0))])
    expect(post_hold(c, both["id"], user(), [item("chair", instant(3, 8, 30), instant(3, 8, 50))]),
           409, "range_unavailable")
    hold(c, both["id"], user(), [item("chair", instant(3, 8, 30), instant(3, 8, 45))])


def test_capacity_and_quantities(server):
    c = server.client()
    cal = hotel(c)["id"]
    hold(c, cal, user(), [item("DBL", day(20), day(23), 5)])
    hold(c, cal, user(), [item("DBL", day(21), day(22), 6)])
    check_equal(free_of(c, cal, "DBL", day(21), day(22)), 1, "one left on the middle night")
    refused = post_hold(c, cal, user(), [item("DBL", day(20), day(24), 2)])
    expect(refused, 409, "range_unavailable")
    check_equal(refused.error["unavailable"],
                [{"resource": "DBL", "from": day(21), "to": day(22), "available": 1}],
                "the maximal sub-span short of 2")
    h = hold(c, cal, user(), [item("DBL", day(20), day(24), 1),
                              item("PARKING", day(20), day(24), 2)])
    check_equal(h["total"], 15000 * 4 + 1500 * 4 * 2, "total of both items")
    check_equal(free_of(c, cal, "DBL", day(21), day(22)), 0, "full")


def test_last_unit_raced(server):
    setup = server.client()
    cal = hotel(setup)["id"]
    count = 100
    clients = [server.client() for _ in range(count)]
    for client in clients:
        expect(client.get("/healthz"), 200)
    users = [user("racer") for _ in range(count)]

    def attempt(index, barrier):
        barrier.wait()
        return post_hold(clients[index], cal, users[index], [item("SUITE", day(30), day(33))])

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {201: 1, 409: 99}, "statuses")
    for r in responses:
        if r.status == 409:
            expect(r, 409, "range_unavailable")
    check_equal(free_of(setup, cal, "SUITE", day(30), day(33)), 0, "taken once")
    check_equal(summary(setup, cal)["holds_active"], 1, "one hold")


# ---- the life of a hold ----


def test_extend_release_commit_cancel(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    span = (day(40), day(42))
    h = hold(c, cal, u, [item("SUITE", *span)], ttl_s=60)
    hold_id = h["reservation_id"]
    extended = expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u, "ttl_s": 300}), 200)
    check(parse_time(extended["expires_at"]) > parse_time(h["expires_at"]), "extended")
    check_equal(extended["calendar"], cal, "calendar after extend")
    released = release(c, hold_id, u)
    check_equal(released["status"], "released", "released")
    check(can_hold(c, cal, "SUITE", *span), "free at once after release")
    again = hold(c, cal, u, [item("SUITE", *span)])
    order = commit(c, again["reservation_id"], u, "pi_cal_1")
    check(ORD_ID_RE.match(order["order_id"]), "order_id")
    check_equal(order["calendar"], cal, "order's calendar")
    check("event" not in order and "seats" not in order, "no event members: %r" % order)
    check_equal(order["items"], again["items"], "order's items")
    check_equal((order["total"], order["currency"], order["status"]), (120000, "EUR",
                                                                       "confirmed"), "order")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order, "GET order")
    check_equal(expect(c.get("/v1/holds/%s" % again["reservation_id"]), 200)["status"],
                "confirmed", "hold confirmed")
    check(not can_hold(c, cal, "SUITE", *span), "sold")
    check_equal(summary(c, cal)["orders"], 1, "orders count")
    cancelled = expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u}), 200)
    check_equal(cancelled["status"], "cancelled", "cancelled")
    check(can_hold(c, cal, "SUITE", *span), "free at once after cancel")


def test_expiry(server):
    c = server.client()
    cal = hotel(c, hold_ttl_s=0.5)["id"]
    u = user()
    h = hold(c, cal, u, [item("SUITE", day(50), day(52))])
    check(not can_hold(c, cal, "SUITE", day(50), day(52)), "held")
    time.sleep(0.6)
    check(can_hold(c, cal, "SUITE", day(50), day(52)), "free at expires_at")
    check_equal(expect(c.get("/v1/holds/%s" % h["reservation_id"]), 200)["status"], "expired",
                "expired")
    expect(c.post("/v1/holds/%s/commit" % h["reservation_id"], {"user_id": u}), 410,
           "hold_expired")


def test_bookings(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    response = c.post("/v1/calendars/%s/bookings" % cal,
                      {"user_id": u, "items": [item("SUITE", day(60), day(63))],
                       "payment_ref": "maintenance"})
    order = expect(response, 201)
    check_equal((order["reservation_id"], order["status"], order["calendar"]),
                (None, "confirmed", cal), "booking")
    check_equal(order["payment_ref"], "maintenance", "payment_ref")
    expect(c.post("/v1/calendars/%s/bookings" % cal,
                  {"user_id": u, "items": [item("SUITE", day(61), day(64))]}), 409,
           "range_unavailable")
    expect(c.post("/v1/calendars/%s/bookings" % cal,
                  {"user_id": u, "items": [item("SUITE", day(61), day(61))]}), 400,
           "invalid_request", field="items[0].to")


def _deliver(c, reservation_id, amount):
    body = json.dumps({"id": uid("evt"), "type": "payment.succeeded",
                       "payment_intent_id": uid("pi"), "reservation_id": reservation_id,
                       "amount": amount}).encode()
    t = int(time.time())
    digest = hmac.new(SECRET.encode(), ("%d." % t).encode() + body, hashlib.sha256).hexdigest()
    return c.post("/v1/webhooks/payments", raw=body,
                  headers={"Holdfast-Signature": "t=%d,v1=%s" % (t, digest)})


def test_payment_webhooks(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    h = hold(c, cal, u, [item("SUITE", day(70), day(72))])
    document = expect(_deliver(c, h["reservation_id"], h["total"]), 200)
    check_equal(document["result"], "committed", "paid")
    order = expect(c.get("/v1/orders/%s" % document["order_id"]), 200)
    check_equal((order["calendar"], order["status"]), (cal, "confirmed"), "order of payment")
    # A late payment takes its spans again when they are still free.
    late = hold(c, cal, u, [item("SUITE", day(80), day(82))], ttl_s=0.3)
    time.sleep(0.5)
    document = expect(_deliver(c, late["reservation_id"], late["total"]), 200)
    check_equal((document["result"], document.get("late")), ("committed", True), "late commit")
    check(not can_hold(c, cal, "SUITE", day(80), day(82)), "re-taken")
    # Else it is refunded.
    lost = hold(c, cal, u, [item("SUITE", day(90), day(92))], ttl_s=0.3)
    time.sleep(0.5)
    hold(c, cal, user(), [item("SUITE", day(91), day(93))])
    document = expect(_deliver(c, lost["reservation_id"], lost["total"]), 200)
    check_equal(document["result"], "refund_required", "taken meanwhile")
    refund = expect(c.get("/v1/refunds/%s" % document["refund_id"]), 200)
    check_equal((refund["reservation_id"], refund["amount"]), (lost["reservation_id"],
                                                               lost["total"]), "the refund")
    # A paid calendar order's cancel owes a refund too.
    paid = commit(c, hold(c, cal, u, [item("SUITE", day(95), day(97))])["reservation_id"], u,
                  "pi_paid")
    cancelled = expect(c.post("/v1/orders/%s/cancel" % paid["order_id"], {"user_id": u}), 200)
    check(cancelled["refund_id"], "refund_id of a paid order's cancel")
    expect(c.get("/v1/refunds/%s" % cancelled["refund_id"]), 200)


def test_idempotency_key(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    headers = {"Idempotency-Key": uid("key")}
    items = [item("SUITE", day(100), day(102))]
    first = expect(post_hold(c, cal, u, items, headers=headers), 201)
    second = expect(post_hold(c, cal, u, items, headers=headers), 201)
    check_equal(second["reservation_id"], first["reservation_id"], "same hold")
    check_equal(summary(c, cal)["holds_active"], 1, "one hold")
    expect(post_hold(c, cal, u, [item("SUITE", day(110), day(112))], headers=headers), 422)


def test_close_and_open(server):
    c = server.client()
    cal = hotel(c)["id"]
    closed = expect(c.post("/v1/calendars/%s/close" % cal), 200)
    check_equal(closed["sales_open"], False, "closed")
    expect(post_hold(c, cal, user(), [item("DBL", day(5), day(6))]), 409, "sales_closed")
    expect(c.post("/v1/calendars/%s/bookings" % cal,
                  {"user_id": user(), "items": [item("DBL", day(5), day(6))]}), 409,
           "sales_closed")
    check_equal(expect(c.post("/v1/calendars/%s/open" % cal), 200)["sales_open"], True, "open")
    hold(c, cal, user(), [item("DBL", day(5), day(6))])
    expect(c.post("/v1/calendars/nope_%s/close" % uid()), 404, "calendar_not_found")


def test_staff_lists_and_user_orders(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    held = [hold(c, cal, u, [item("DBL", day(5 + i), day(6 + i))]) for i in range(3)]
    order = commit(c, held[0]["reservation_id"], u)
    # As an event's lists (section 2): oldest first, every status without `status`.
    holds = expect(c.get("/v1/calendars/%s/holds?limit=1000" % cal), 200)
    check_equal([(h["reservation_id"], h["status"]) for h in holds["holds"]],
                [(held[0]["reservation_id"], "confirmed")] +
                [(h["reservation_id"], "held") for h in held[1:]], "every hold, oldest first")
    check_equal(holds["holds"][1]["items"], held[1]["items"], "with its items")
    only_held = expect(c.get("/v1/calendars/%s/holds?status=held" % cal), 200)
    check_equal([h["reservation_id"] for h in only_held["holds"]],
                [h["reservation_id"] for h in held[1:]], "held holds")
    page = expect(c.get("/v1/calendars/%s/holds?status=held&limit=1" % cal), 200)
    check_equal(len(page["holds"]), 1, "a page of one")
    check(page["next"] is not None, "next")
    rest = expect(c.get("/v1/calendars/%s/holds?status=held&limit=1&after=%s"
                        % (cal, page["next"])), 200)
    check_equal(len(rest["holds"]), 1, "the second page")
    check_equal(rest["next"], None, "the last page")
    expect(c.get("/v1/calendars/%s/holds?status=lost" % cal), 400, "invalid_request",
           field="status")
    expect(c.get("/v1/calendars/%s/holds?after=res_nope" % cal), 400, "invalid_request",
           field="after")
    expect(c.get("/v1/calendars/nope_%s/holds" % uid()), 404, "calendar_not_found")
    orders = expect(c.get("/v1/calendars/%s/orders" % cal), 200)
    check_equal([o["order_id"] for o in orders["orders"]], [order["order_id"]], "orders")
    cancelled = expect(c.get("/v1/calendars/%s/orders?status=cancelled" % cal), 200)
    check_equal(cancelled["orders"], [], "no cancelled order")
    expect(c.get("/v1/calendars/%s/orders?limit=0" % cal), 400, "invalid_request", field="limit")
    mine = expect(c.get("/v1/users/%s/orders?calendar=%s" % (u, cal)), 200)
    check_equal([o["order_id"] for o in mine["orders"]], [order["order_id"]], "user's orders")
    other = expect(c.get("/v1/users/%s/orders?calendar=%s" % (u, uid("none"))), 200)
    check_equal(other["orders"], [], "filtered out")
    everything = expect(c.get("/v1/users/%s/orders" % u), 200)
    check_equal(len(everything["orders"]), 1, "unfiltered")


def test_user_limit(server):
    c = server.client()
    cal = hotel(c, max_uses_per_user=3)["id"]
    u = user()
    hold(c, cal, u, [item("DBL", day(5), day(6), 2)])
    refused = post_hold(c, cal, u, [item("DBL", day(8), day(9), 2)])
    expect(refused, 429, "user_limit_exceeded")
    hold(c, cal, u, [item("DBL", day(8), day(9), 1)])
    hold(c, cal, user(), [item("DBL", day(8), day(9), 3)])


# ---- availability, free, slots ----


def test_availability_segments(server):
    c = server.client()
    cal = hotel(c)["id"]
    hold(c, cal, user(), [item("DBL", day(24), day(27))])
    hold(c, cal, user(), [item("DBL", day(27), day(28))])
    document = availability(c, cal, "DBL", day(1), day(32))
    check_equal((document["resource"], document["capacity"]), ("DBL", 12), "resource")
    check_equal(document["segments"], [
        {"from": day(1), "to": day(24), "available": 12},
        {"from": day(24), "to": day(28), "available": 11},
        {"from": day(28), "to": day(32), "available": 12}], "merged, covering the window")
    expect(c.get("/v1/calendars/%s/availability?resource=DBL&from=%s&to=%s"
                 % (cal, day(1), day(402))), 400, "invalid_request", field="to")
    expect(c.get("/v1/calendars/%s/availability?resource=NOPE&from=%s&to=%s"
                 % (cal, day(1), day(2))), 404, "resource_not_found")
    minute = clinic(c)["id"]
    hold(c, minute, user(), [item("yoga", instant(1, 18), instant(1, 19), 5)])
    segments = expect(c.get("/v1/calendars/%s/availability?resource=yoga&from=%s&to=%s"
                            % (minute, instant(1, 0), instant(2, 0))), 200)["segments"]
    check_equal(segments, [
        {"from": utc_ms(1, 0), "to": utc_ms(1, 18), "available": 20},
        {"from": utc_ms(1, 18), "to": utc_ms(1, 19), "available": 15},
        {"from": utc_ms(1, 19), "to": utc_ms(2, 0), "available": 20}], "minute segments")
    expect(c.get("/v1/calendars/%s/availability?resource=yoga&from=%s&to=%s"
                 % (minute, instant(1, 0), instant(33, 0))), 400, "invalid_request", field="to")


def test_free(server):
    c = server.client()
    cal = hotel(c)["id"]
    hold(c, cal, user(), [item("SUITE", day(25), day(27))])
    hold(c, cal, user(), [item("DBL", day(24), day(27), 7)])
    document = expect(c.get("/v1/calendars/%s/free?from=%s&to=%s&quantity=2"
                            % (cal, day(24), day(27))), 200)
    check_equal((document["from"], document["to"]), (day(24), day(27)), "window")
    check_equal(document["resources"], [
        {"resource": "DBL", "available": 5, "total": 90000},
        {"resource": "PARKING", "available": 40, "total": 9000}], "in definition order")
    named = expect(c.get("/v1/calendars/%s/free?from=%s&to=%s&resource=PARKING&resource=SUITE"
                         % (cal, day(27), day(29))), 200)
    check_equal([r["resource"] for r in named["resources"]], ["PARKING", "SUITE"],
                "the named ones, in the order named")
    short = expect(c.get("/v1/calendars/%s/free?from=%s&to=%s&resource=SUITE"
                         % (cal, day(27), day(28))), 200)
    check_equal(short["resources"], [], "SUITE's min_length applies")
    expect(c.get("/v1/calendars/%s/free?from=%s" % (cal, day(1))), 400, "invalid_request",
           field="to")
    expect(c.get("/v1/calendars/%s/free?from=%s&to=%s&quantity=0" % (cal, day(1), day(2))), 400,
           "invalid_request", field="quantity")


def test_slots(server):
    c = server.client()
    cal = clinic(c)["id"]
    hold(c, cal, user(), [item("dr_smith", instant(1, 9, 0), instant(1, 9, 30))])
    path = "/v1/calendars/%s/slots?resource=dr_smith&length=30&from=%s&to=%s" % (
        cal, instant(1, 8, 0), instant(1, 10, 0))
    slots = expect(c.get(path), 200)
    starts = [s["from"] for s in slots["slots"]]
    # 08:00 and 08:15 end by 08:45 (+10 after) before 09:00; 09:45 on, past the 09:40 buffer.
    check_equal(starts, [utc_ms(1, 8, 0), utc_ms(1, 8, 15), utc_ms(1, 9, 45)], "slots")
    check_equal(slots["slots"][0], {"resource": "dr_smith", "from": utc_ms(1, 8, 0),
                                    "to": utc_ms(1, 8, 30)}, "a slot")
    check_equal(slots["next"], None, "one page")
    first = expect(c.get(path + "&limit=2"), 200)
    check_equal([s["from"] for s in first["slots"]], starts[:2], "first page")
    check(first["next"], "next")
    second = expect(c.get(path + "&limit=2&after=" + first["next"]), 200)
    check_equal([s["from"] for s in second["slots"]], starts[2:], "second page")
    check_equal(second["next"], None, "last page")
    expect(c.get(path + "&limit=1001"), 400, "invalid_request", field="limit")
    expect(c.get(path.replace("length=30", "length=x")), 400, "invalid_request", field="length")
    hotel_id = hotel(c)["id"]
    nights = expect(c.get("/v1/calendars/%s/slots?resource=SUITE&length=2&from=%s&to=%s"
                          % (hotel_id, day(10), day(13))), 200)
    check_equal([s["from"] for s in nights["slots"]], [day(10), day(11), day(12)],
                "each date, the slot may end after to")


def test_metrics(server):
    c = server.client()
    cal = hotel(c)["id"]
    hold(c, cal, user(), [item("DBL", day(3), day(4))])
    text = c.get("/metrics").body.decode()
    for name in ("holdfast_calendars", "holdfast_calendar_uses_live",
                 "holdfast_calendar_holds_active"):
        check(("\n%s " % name) in text, "metric %s" % name)


# ---- durability ----


def _state(c, cal, hold_ids, order_ids):
    return {"summary": summary(c, cal),
            "holds": [expect(c.get("/v1/holds/%s" % h), 200) for h in hold_ids],
            "orders": [expect(c.get("/v1/orders/%s" % o), 200) for o in order_ids],
            "availability": availability(c, cal, "DBL", day(1), day(40))}


def _durability_round(kill):
    server = Server(data_dir=harness.make_temp_dir()).start()
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    held = hold(c, cal, u, [item("DBL", day(5), day(8), 2)], ttl_s=600)
    sold = hold(c, cal, u, [item("DBL", day(6), day(9), 3), item("SUITE", day(6), day(9))])
    order = commit(c, sold["reservation_id"], u, "pi_durable")
    booked = expect(c.post("/v1/calendars/%s/bookings" % cal,
                           {"user_id": u, "items": [item("PARKING", day(5), day(6))]}), 201)
    expect(c.post("/v1/calendars/%s/resources" % cal, {"resources": [{"id": "TWIN"}]}), 200)
    before = _state(c, cal, [held["reservation_id"], sold["reservation_id"]],
                    [order["order_id"], booked["order_id"]])
    c.close()
    if kill:
        server.kill()
    else:
        server.stop()
        if harness.STORE_URL is None:
            import subprocess
            done = subprocess.run([harness.BINARY, "check", "--data", server.data_dir],
                                  capture_output=True, timeout=harness.timeout(30))
            check_equal(done.returncode, 0, "holdfast check: %r" % done.stderr[-400:])
    again = server.restart()
    c = again.client()
    after = _state(c, cal, [held["reservation_id"], sold["reservation_id"]],
                   [order["order_id"], booked["order_id"]])
    for hold_before, hold_after in zip(before["holds"], after["holds"]):
        hold_before.pop("expires_in_ms")
        hold_after.pop("expires_in_ms")
    check_equal(after, before, "everything back")
    expect(post_hold(c, cal, user(), [item("SUITE", day(7), day(9))]), 409, "range_unavailable")


def test_restart_restores_calendars():
    _durability_round(kill=False)


def test_kill9_restores_calendars():
    _durability_round(kill=True)


def test_calendars_on_postgres():
    if harness.STORE_URL is None:
        harness.skip("PostgreSQL only: run with --store-url")
    _durability_round(kill=True)


# ---- the stream ----


def test_stream_snapshot_and_changes(server):
    from test_streams import Stream
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    hold(c, cal, u, [item("DBL", day(5), day(7))])
    stream = Stream(server.port, "/v1/calendars/%s/stream" % cal)
    snapshot = stream.open()
    check_equal(snapshot, summary(c, cal), "snapshot = the summary")
    h = hold(c, cal, u, [item("SUITE", day(10), day(12))])
    event, data = stream.next_json()
    check_equal((event, data), ("change", {"resource": "SUITE", "from": day(10), "to": day(12),
                                           "delta": -1}), "a use taken")
    seen = stream.event_id
    release(c, h["reservation_id"], u)
    event, data = stream.next_json()
    check_equal((event, data), ("change", {"resource": "SUITE", "from": day(10), "to": day(12),
                                           "delta": 1}), "given back")
    stream.close()
    # Last-Event-ID resumes after the change seen: the release follows, no snapshot.
    again = Stream(server.port, "/v1/calendars/%s/stream" % cal,
                   headers={"Last-Event-ID": seen})
    check_equal(again.read_head(), 200, "resumed")
    event, data = again.next_json()
    check_equal((event, data["delta"]), ("change", 1), "the change after Last-Event-ID")
    again.close()
    expect(c.get("/v1/calendars/nope_%s/stream" % uid()), 404, "calendar_not_found")


def test_history_entries_with_items(server):
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    h = hold(c, cal, u, [item("SUITE", day(10), day(12))])
    commit(c, h["reservation_id"], u)
    document = expect(c.get("/v1/calendars/%s/history" % cal), 200)
    types = [entry["type"] for entry in document["history"]]
    check_equal(types[-2:], ["hold", "commit"], "entries")
    for entry in document["history"][-2:]:
        check_equal(entry["reservation_id"], h["reservation_id"], "reservation_id")
        check_equal(entry.get("items"), [{"resource": "SUITE", "from": day(10), "to": day(12),
                                          "quantity": 1, "total": 120000}], "items")
        check("seats" not in entry and "pools" not in entry, "no seats: %r" % entry)
    expect(c.get("/v1/calendars/nope_%s/history" % uid()), 404, "calendar_not_found")


# ---- the command line ----


def test_cli_calendar_create_and_show():
    import os
    import subprocess
    server = Server().start()
    directory = harness.make_temp_dir()
    path = os.path.join(directory, "clinic.json")
    calendar_id = uid("cli")
    with open(path, "w") as file:
        json.dump({"id": calendar_id, "unit": "minute", "resources": [{"id": "dr"}]}, file)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    environment["HOLDFAST_SERVER"] = "127.0.0.1:%d" % server.port

    def run(*arguments):
        done = subprocess.run([harness.BINARY] + list(arguments), capture_output=True,
                              env=environment, timeout=harness.timeout(10))
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    code, out, err = run("calendar", "create", path)
    check_equal((code, err), (0, ""), "calendar create")
    check_equal(json.loads(out)["id"], calendar_id, "created")
    code, out, err = run("calendar", "show", calendar_id)
    check_equal((code, err), (0, ""), "calendar show")
    check_equal(json.loads(out), summary(server.client(), calendar_id), "shown")
    code, out, err = run("calendar", "create", path)
    check_equal(code, 1, "a second create is refused")
    check("calendar_exists" in err, "the error code on stderr: %r" % err)
    code, out, err = run("calendar", "show", "nope")
    check(code == 1 and "calendar_not_found" in err, "unknown: %r" % err)
    code, out, err = run("calendar", "frobnicate")
    check_equal(code, 2, "usage")


def test_forgotten_hold_read_back():
    """A released calendar hold the core forgot (past --finished-holds) is read back from the
    store, as a seat hold is."""
    server = Server(extra_args=["--finished-holds", "1"]).start()
    c = server.client()
    cal = hotel(c)["id"]
    u = user()
    held = [hold(c, cal, u, [item("DBL", day(3), day(5))]) for _ in range(3)]
    for h in held:
        release(c, h["reservation_id"], u)
    # The staff's list reads the forgotten ones from the store, items and all.
    listed = expect(c.get("/v1/calendars/%s/holds?status=released" % cal), 200)["holds"]
    check_equal([(h["reservation_id"], h["status"], h["items"], h["total"]) for h in listed],
                [(h["reservation_id"], "released", h["items"], h["total"]) for h in held],
                "the released holds, forgotten ones included")
    first = expect(c.get("/v1/holds/%s" % held[0]["reservation_id"]), 200, what="read back")
    check_equal((first["status"], first["calendar"], first["items"]),
                ("released", cal, held[0]["items"]), "as it was")


def test_calendar_routes_go_to_the_owner():
    """Several nodes on PostgreSQL (section 11): a calendar is a unit, its routes and its holds'
    are forwarded to the node that owns it."""
    if harness.STORE_URL is None:
        harness.skip("several nodes need PostgreSQL (--store-url)")
    from test_cluster import node_of, nodes
    a, b = nodes(2)
    client_a, client_b = a.client(api_key=None), b.client(api_key=None)
    created = client_a.post("/v1/calendars", {"id": uid("cal"), "unit": "night",
                                              "resources": [{"id": "R", "price": 5}]})
    cal = expect(created, 201, what="create on A")["id"]
    check_equal(node_of(created), "A", "Holdfast-Node of the creation")
    relayed = client_b.get("/v1/calendars/%s" % cal)
    check_equal((relayed.status, node_of(relayed)), (200, "A"), "the summary through B")
    u = user()
    held = post_hold(client_b, cal, u, [item("R", day(3), day(5))])
    document = expect(held, 201, what="hold through B")
    check_equal(node_of(held), "A", "the hold made on A")
    read = client_b.get("/v1/holds/%s" % document["reservation_id"])
    check_equal((read.status, node_of(read)), (200, "A"), "the hold read through B")
    order = expect(client_b.post("/v1/holds/%s/commit" % document["reservation_id"],
                                 {"user_id": u}), 200, what="commit through B")
    check_equal(order["calendar"], cal, "the order")
    free = client_b.get("/v1/calendars/%s/free?from=%s&to=%s" % (cal, day(3), day(5)))
    check_equal((free.status, free.json["resources"]), (200, []), "sold, seen through B")


def test_ttl_above_max_hold(server):
    c = server.client()
    cal = hotel(c, hold_ttl_s=60, max_hold_s=120)["id"]
    expect(post_hold(c, cal, user(), [item("DBL", day(3), day(4))], ttl_s=121), 400,
           "invalid_request", field="ttl_s")
    expect(post_hold(c, cal, user(), [item("DBL", day(3), day(4))] * 11), 400,
           "invalid_request", field="items")
