"""Events: creation, defaults, validation, listing (API.md section 2)."""

import json
from urllib.parse import quote

from harness import (Server, Soft, check, check_equal, create_event, expect, get_event, get_hold,
                     get_seat, hold, uid, user)

WEIGHT = 2.0

ERAS_SECTIONS = [
    {"id": "FLOOR", "price": 45000, "rows": [{"id": "A", "seats": 30}, {"id": "B", "seats": 30}]},
    {"id": "BALC", "price": 12000, "rows": [{"id": "A", "seats": 40}]},
]


def _sections(summary):
    """The members of a section summary the contract names (extra ones are allowed)."""
    return [{k: s.get(k) for k in ("id", "price", "counts")} for s in summary.get("sections")]


def _pools(summary):
    keys = ("id", "capacity", "price", "available", "held", "sold")
    return [{k: p.get(k) for k in keys} for p in summary.get("pools")]


def test_create_defaults(server):
    c = server.client()
    event_id = uid("def")
    body = {"id": event_id, "sections": [{"id": "S", "price": 100,
                                          "rows": [{"id": "R", "seats": 3}]}]}
    created = expect(c.post("/v1/events", body), 201)
    check_equal(created.get("id"), event_id, "id")
    check_equal(created.get("name"), event_id, "default name")
    check_equal(created.get("currency"), "USD", "default currency")
    check_equal(created.get("hold_ttl_s"), 600, "default hold_ttl_s")
    check_equal(created.get("max_hold_s"), 1800, "default max_hold_s (3 x hold_ttl_s)")
    check_equal(created.get("max_seats_per_user"), 0, "default max_seats_per_user")
    check_equal(created.get("max_seats_per_hold"), 10, "default max_seats_per_hold")
    check_equal(created.get("counts"), {"available": 3, "held": 0, "sold": 0}, "counts")
    check_equal(_sections(created),
                [{"id": "S", "price": 100, "counts": {"available": 3, "held": 0, "sold": 0}}],
                "sections")
    check_equal(created.get("pools"), [], "no pools by default")
    check_equal(created.get("waiting_room"), {"enabled": False}, "waiting room off")
    check_equal(get_event(c, event_id), created, "GET answers the summary of the creation")


def test_create_full_example(server):
    c = server.client()
    event_id = uid("eras")
    body = {"id": event_id, "name": "The Eras Tour, night 1", "currency": "USD",
            "hold_ttl_s": 600, "max_hold_s": 1800, "max_seats_per_user": 8,
            "max_seats_per_hold": 10, "sections": ERAS_SECTIONS,
            "pools": [{"id": "GA", "capacity": 5000, "price": 9900}],
            "waiting_room": {"enabled": False, "admit_per_s": 1000, "token_ttl_s": 900}}
    created = expect(c.post("/v1/events", body), 201)
    expected = {
        "id": event_id, "name": "The Eras Tour, night 1", "currency": "USD", "hold_ttl_s": 600,
        "max_hold_s": 1800, "max_seats_per_user": 8, "max_seats_per_hold": 10,
        "counts": {"available": 100, "held": 0, "sold": 0},
        "sections": [
            {"id": "FLOOR", "price": 45000, "counts": {"available": 60, "held": 0, "sold": 0}},
            {"id": "BALC", "price": 12000, "counts": {"available": 40, "held": 0, "sold": 0}}],
        "pools": [{"id": "GA", "capacity": 5000, "price": 9900, "available": 5000, "held": 0,
                   "sold": 0}],
    }
    for key, value in expected.items():
        actual = {"sections": _sections, "pools": _pools}.get(key, lambda d: d.get(key))(created)
        check_equal(actual, value, key)
    check_equal(created.get("waiting_room", {}).get("enabled"), False, "waiting_room.enabled")
    check_equal(get_event(c, event_id), created, "GET equals the creation answer")


def test_create_custom_settings(server):
    c = server.client()
    event_id = uid("cus")
    created = create_event(c, event_id, name="Custom", currency="EUR", hold_ttl_s=120,
                           max_seats_per_user=3, max_seats_per_hold=4)
    check_equal(created.get("name"), "Custom", "name")
    check_equal(created.get("currency"), "EUR", "currency")
    check_equal(created.get("hold_ttl_s"), 120, "hold_ttl_s")
    check_equal(created.get("max_hold_s"), 360, "max_hold_s defaults to 3 x hold_ttl_s")
    check_equal(created.get("max_seats_per_user"), 3, "max_seats_per_user")
    check_equal(created.get("max_seats_per_hold"), 4, "max_seats_per_hold")
    # Pools only: an event needs seats or pools, not both.
    pools_only = create_event(c, uid("pool"), sections=None,
                              pools=[{"id": "GA", "capacity": 7, "price": 0}])
    check_equal(pools_only.get("counts"), {"available": 0, "held": 0, "sold": 0},
                "counts of a pools-only event")
    check_equal(_pools(pools_only),
                [{"id": "GA", "capacity": 7, "price": 0, "available": 7, "held": 0, "sold": 0}],
                "pools")
    # Zero prices and a zero capacity pool next to seats are valid (>= 0).
    free = create_event(c, uid("free"),
                        sections=[{"id": "S", "price": 0, "rows": [{"id": "R", "seats": 1}]}],
                        pools=[{"id": "P", "capacity": 0, "price": 0}])
    check_equal(free.get("counts"), {"available": 1, "held": 0, "sold": 0}, "counts")
    # The currency is the one of the hold's total.
    h = hold(c, event_id, user(), ["FLOOR-A-1"])
    check_equal(h.get("currency"), "EUR", "hold currency")


def test_same_child_ids_under_other_parents(server):
    c = server.client()
    event_id = uid("same")
    created = create_event(c, event_id, sections=[
        {"id": "A", "price": 1, "rows": [{"id": "1", "seats": 2}, {"id": "2", "seats": 1}]},
        {"id": "B", "price": 2, "rows": [{"id": "1", "seats": 2}]}],
        pools=[{"id": "A", "capacity": 3, "price": 3}])
    check_equal(created["counts"]["available"], 5, "seats")
    h = hold(c, event_id, user(), ["A-1-2", "B-1-2"], {"A": 1})
    check_equal(h["total"], 1 + 2 + 3, "one seat of each section and a pool unit")
    check_equal(get_seat(c, event_id, "B-1-2")["price"], 2, "B-1-2 is in section B")
    check_equal(get_seat(c, event_id, "A-1-1")["status"], "available", "A-1-1")


def test_create_event_exists(server):
    c = server.client()
    event_id = uid("dup")
    create_event(c, event_id, name="first")
    response = c.post("/v1/events", {"id": event_id, "name": "second",
                                     "sections": [{"id": "X", "price": 1,
                                                   "rows": [{"id": "R", "seats": 1}]}]})
    expect(response, 409, "event_exists")
    summary = get_event(c, event_id)
    check_equal(summary.get("name"), "first", "the first event is untouched")
    check_equal(summary["counts"]["available"], 50, "first event's seats")


def _bad(c, body, field, what):
    response = c.post("/v1/events", body)
    expect(response, 400, "invalid_request", field=field, what=what)
    if isinstance(body, dict) and isinstance(body.get("id"), str) and body["id"]:
        missing = c.get("/v1/events/%s" % quote(body["id"], safe=""))
        if missing.status != 400:   # an id with bad characters may not even route
            check(missing.status == 404, "%s: the event was created anyway: %r" % (
                what, missing))


def _row_event(event_id, **section):
    base = {"id": "S", "price": 100, "rows": [{"id": "R", "seats": 2}]}
    base.update(section)
    return {"id": event_id, "sections": [base]}


def test_create_validation(server):
    c = server.client()
    soft = Soft()
    ok = [{"id": "S", "price": 100, "rows": [{"id": "R", "seats": 2}]}]

    def with_rows(event_id, rows):
        return _row_event(event_id, rows=rows)

    # (body, the error's field: the path down to the member, what).
    cases = [
        ({"id": "a-b", "sections": ok}, "id", "id with a dash"),
        ({"id": "a b", "sections": ok}, "id", "id with a space"),
        ({"id": "é", "sections": ok}, "id", "id with a non-ASCII letter"),
        ({"id": "", "sections": ok}, "id", "empty id"),
        ({"id": "x" * 65, "sections": ok}, "id", "id of 65 characters"),
        ({"sections": ok}, "id", "no id"),
        ({"id": 12, "sections": ok}, "id", "numeric id"),
        ({"id": uid("none")}, "sections", "no seats nor pools"),
        ({"id": uid("none"), "sections": [], "pools": []}, "sections",
         "empty sections and pools"),
        ({"id": uid("rows"), "sections": [{"id": "S", "price": 1, "rows": []}]},
         "sections[0].rows", "a section without rows and no other seat"),
        (with_rows(uid("zero"), [{"id": "R", "seats": 0}]), "sections[0].rows[0].seats",
         "row of 0 seats"),
        (with_rows(uid("neg"), [{"id": "R", "seats": -3}]), "sections[0].rows[0].seats",
         "row of -3 seats"),
        (with_rows(uid("frac"), [{"id": "R", "seats": 1.5}]), "sections[0].rows[0].seats",
         "row of 1.5 seats"),
        (with_rows(uid("str"), [{"id": "R", "seats": "4"}]), "sections[0].rows[0].seats",
         "seats as a string"),
        (_row_event(uid("price"), price=-1), "sections[0].price", "negative section price"),
        (_row_event(uid("price"), price=1.5), "sections[0].price", "fractional price"),
        ({"id": uid("dsec"), "sections": ok + ok}, "sections[1].id", "duplicate section id"),
        (with_rows(uid("drow"), [{"id": "R", "seats": 1}, {"id": "R", "seats": 2}]),
         "sections[0].rows[1].id", "duplicate row id in a section"),
        (_row_event(uid("bsec"), id="S-1"), "sections[0].id", "section id with a dash"),
        (with_rows(uid("brow"), [{"id": "R-1", "seats": 1}]), "sections[0].rows[0].id",
         "row id with a dash"),
        ({"id": uid("pneg"), "pools": [{"id": "GA", "capacity": 10, "price": -5}]},
         "pools[0].price", "negative pool price"),
        ({"id": uid("cneg"), "pools": [{"id": "GA", "capacity": -1, "price": 5}]},
         "pools[0].capacity", "negative pool capacity"),
        ({"id": uid("dpool"), "pools": [{"id": "GA", "capacity": 1, "price": 5},
                                        {"id": "GA", "capacity": 2, "price": 5}]},
         "pools[1].id", "duplicate pool id"),
        ({"id": uid("bpool"), "pools": [{"id": "G-A", "capacity": 1, "price": 5}]},
         "pools[0].id", "pool id with a dash"),
        ({"id": uid("sobj"), "sections": {"id": "S"}}, "sections", "sections not an array"),
        ({"id": uid("ttl"), "sections": ok, "hold_ttl_s": 0}, "hold_ttl_s", "hold_ttl_s 0"),
        ({"id": uid("ttl"), "sections": ok, "hold_ttl_s": -5}, "hold_ttl_s",
         "negative hold_ttl_s"),
        ({"id": uid("msu"), "sections": ok, "max_seats_per_user": -1}, "max_seats_per_user",
         "negative max_seats_per_user"),
        ({"id": uid("nm"), "sections": ok, "name": 7}, "name", "numeric name"),
        # Project choices (docs/API.md).
        ({"id": uid("nm"), "sections": ok, "name": ""}, "name", "empty name"),
        ({"id": uid("cur"), "sections": ok, "currency": "usd"}, "currency",
         "lower-case currency"),
        ({"id": uid("cur"), "sections": ok, "currency": "EURO"}, "currency",
         "four-letter currency"),
        ({"id": uid("mh"), "sections": ok, "hold_ttl_s": 60, "max_hold_s": 59}, "max_hold_s",
         "max_hold_s below hold_ttl_s"),
        ({"id": uid("mph"), "sections": ok, "max_seats_per_hold": 0}, "max_seats_per_hold",
         "max_seats_per_hold 0"),
        ({"id": uid("mph"), "sections": ok, "max_seats_per_hold": 1001}, "max_seats_per_hold",
         "max_seats_per_hold 1001"),
        (with_rows(uid("big"), [{"id": "R%d" % n, "seats": 1000} for n in range(4001)]),
         "sections", "4,001,000 seats (above the 4,000,000 limit)"),
    ]
    for body, field, what in cases:
        soft(_bad, c, body, field, what)
    # The message says what is wrong, not only which member.
    for body, words in (({"id": uid("dsec"), "sections": ok + ok},
                         'sections[1].id "S" is used by sections[0]'),
                        ({"id": uid("dpool"), "pools": [{"id": "GA", "capacity": 1, "price": 5},
                                                        {"id": "GA", "capacity": 2, "price": 5}]},
                         'pools[1].id "GA" is used by pools[0]'),
                        ({"id": uid("none")}, "at least one seat or pool")):
        message = c.post("/v1/events", body).json["error"]["message"]
        soft(check_equal, words in message, True, "message %r names %r" % (message, words))
    # Not an object at all, and an empty body (read as {}).
    for body, what in (([1, 2], "array body"), ("text", "string body"), (7, "number body"),
                       (None, "null body")):
        soft(expect, c.post("/v1/events", raw=json.dumps(body)), 400, "invalid_request",
             field="body", what=what)
    soft(expect, c.post("/v1/events", raw=b""), 400, "invalid_request", field="id",
         what="empty body")
    # The longest id is fine; unknown members are ignored.
    longest = (uid("L") + "_" * 64)[:64]
    created = create_event(c, longest, extra_member={"anything": [1, 2]})
    check_equal(created["id"], longest, "64-character id")
    created = create_event(c, uid("A.b_9"), sections=ok)
    check(created["id"].startswith("A.b_9"), "dots and underscores are allowed in ids")
    soft.done()


def test_list_in_creation_order(server):
    c = server.client()
    tag = uid("ord")
    ids = ["%s_z" % tag, "%s_a" % tag, "%s_m" % tag]
    for event_id in ids:
        create_event(c, event_id)
    listing = expect(c.get("/v1/events?limit=1000"), 200)
    check(isinstance(listing.get("events"), list), "events is a list: %r" % listing)
    listed = [e.get("id") for e in listing["events"]]
    ours = [event_id for event_id in listed if event_id.startswith(tag)]
    check_equal(ours, ids, "our events in creation order")
    check_equal(len(listed), len(set(listed)), "no event listed twice")
    # The summaries in the list are the full ones.
    summary = [e for e in listing["events"] if e.get("id") == ids[1]][0]
    check_equal(summary, get_event(c, ids[1]), "listed summary equals GET")
    # Created earlier in this module, so earlier in the list.
    check(listed.index(ids[0]) < listed.index(ids[1]) < listed.index(ids[2]), "order")


def test_event_not_found(server):
    c = server.client()
    missing = uid("missing")
    expect(c.get("/v1/events/%s" % missing), 404, "event_not_found")
    expect(c.get("/v1/events/%s/seats" % missing), 404, "event_not_found")
    expect(c.get("/v1/events/%s/seats/A-B-1" % missing), 404, "event_not_found")
    expect(c.post("/v1/events/%s/holds" % missing, {"user_id": "u", "seats": ["A-B-1"]}), 404,
           "event_not_found")


def test_counts_follow_holds(server):
    c = server.client()
    event_id = uid("cnt")
    create_event(c, event_id)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-B-2", "BALC-A-3"], {"GA": 2})
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 47, "held": 3, "sold": 0}, "event counts")
    check_equal([s["counts"] for s in _sections(summary)],
                [{"available": 38, "held": 2, "sold": 0}, {"available": 9, "held": 1, "sold": 0}],
                "section counts")
    check_equal(_pools(summary), [{"id": "GA", "capacity": 5, "price": 9900, "available": 3,
                                    "held": 2, "sold": 0}], "pools")
    expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                  {"user_id": u1, "payment_ref": "pi_1"}), 200)
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 47, "held": 0, "sold": 3}, "counts after commit")
    check_equal(summary["pools"][0]["sold"], 2, "pool sold")
    check_equal(summary["pools"][0]["held"], 0, "pool held")


def test_million_seats():
    server = Server().start()
    c = server.client(client_timeout=60)
    event_id = uid("big")
    rows = [{"id": "R%d" % i, "seats": 1000} for i in range(1, 1001)]
    created = create_event(c, event_id, sections=[{"id": "S", "price": 250, "rows": rows}])
    check_equal(created["counts"], {"available": 1000000, "held": 0, "sold": 0}, "counts")
    u1 = user()
    h = hold(c, event_id, u1, ["S-R1000-1000"])
    check_equal(h.get("total"), 250, "total")
    seat = get_seat(c, event_id, "S-R1000-1000")
    check_equal((seat.get("status"), seat.get("version")), ("held", 2), "last seat")
    page = expect(c.get("/v1/events/%s/seats?after=S-R1000-998" % event_id), 200)
    check_equal([s["id"] for s in page["seats"]], ["S-R1000-999", "S-R1000-1000"], "last page")
    check_equal(page.get("next"), None, "next on the last page")
    page = expect(c.get("/v1/events/%s/seats?limit=10000&after=S-R500-1000" % event_id), 200)
    check_equal((len(page["seats"]), page["seats"][0]["id"], page["next"]),
                (10000, "S-R501-1", "S-R510-1000"), "a page of 10,000 in the middle")
    expect(c.get("/v1/events/%s/seats/S-R1000-1001" % event_id), 404, "seat_not_found")
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 999999, "held": 1, "sold": 0}, "counts")
    c.close()
    server.stop()
    again = server.restart()
    c = again.client(client_timeout=60)
    check_equal(get_event(c, event_id)["counts"], {"available": 999999, "held": 1, "sold": 0},
                "counts after restart")
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "hold after restart")
    again.stop()


test_million_seats.weight = 5.0


def test_long_ids(server):
    c = server.client()
    event_id = (uid("long") + "_" * 64)[:64]
    section, row = "S" * 64, "r" * 64
    create_event(c, event_id, sections=[{"id": section, "price": 5,
                                         "rows": [{"id": row, "seats": 1000}]}])
    seat_id = "%s-%s-1000" % (section, row)
    h = hold(c, event_id, user(), [seat_id, "%s-%s-7" % (section, row)])
    check_equal(h["seats"], [seat_id, "%s-%s-7" % (section, row)], "long seat ids")
    seat = get_seat(c, event_id, seat_id)
    check_equal((seat["section"], seat["row"], seat["number"], seat["status"]),
                (section, row, 1000, "held"), "seat with long ids")
    page = expect(c.get("/v1/events/%s/seats?status=held" % event_id), 200)
    check_equal([s["id"] for s in page["seats"]], ["%s-%s-7" % (section, row), seat_id], "listing")
