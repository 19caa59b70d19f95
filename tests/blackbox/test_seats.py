"""The seat listing and single seats (API.md section 2)."""

from harness import (all_seats, check, check_equal, commit, create_event, expect, get_seat,
                     hold, release, seat_state, uid, user)

WEIGHT = 1.5

# Sections and rows deliberately not in alphabetical order, and a row of 12 seats so that
# numeric order (9, 10, 11, 12) differs from text order.
SECTIONS = [
    {"id": "ZED", "price": 300, "rows": [{"id": "B", "seats": 12}, {"id": "A", "seats": 2}]},
    {"id": "ALPHA", "price": 100, "rows": [{"id": "Q", "seats": 3}]},
]
LAYOUT = (["ZED-B-%d" % n for n in range(1, 13)] + ["ZED-A-1", "ZED-A-2"]
          + ["ALPHA-Q-%d" % n for n in range(1, 4)])
SEAT_KEYS = {"id", "section", "row", "number", "price", "status", "version"}


def _event(c):
    event_id = uid("seat")
    create_event(c, event_id, sections=SECTIONS)
    return event_id


def _page(c, event_id, query):
    return expect(c.get("/v1/events/%s/seats?%s" % (event_id, query)), 200,
                  what="seats?%s" % query)


def test_layout_order_and_fields(server):
    c = server.client()
    event_id = _event(c)
    page = expect(c.get("/v1/events/%s/seats" % event_id), 200)
    seats = page.get("seats")
    check_equal([s.get("id") for s in seats], LAYOUT, "layout order")
    check_equal(page.get("next"), None, "next on the only page")
    check_equal(seats[9], {"id": "ZED-B-10", "section": "ZED", "row": "B", "number": 10,
                           "price": 300, "status": "available", "version": 1}, "seat ZED-B-10")
    check_equal(seats[16], {"id": "ALPHA-Q-3", "section": "ALPHA", "row": "Q", "number": 3,
                            "price": 100, "status": "available", "version": 1}, "ALPHA-Q-3")
    for seat in seats:
        check_equal(set(seat), SEAT_KEYS, "members of seat %s" % seat.get("id"))
        check_equal((seat["status"], seat["version"]), ("available", 1), seat["id"])


def test_paging(server):
    c = server.client()
    event_id = _event(c)
    collected = []
    after = None
    pages = 0
    while True:
        query = "limit=5" + ("&after=" + after if after else "")
        page = _page(c, event_id, query)
        pages += 1
        ids = [s["id"] for s in page["seats"]]
        collected += ids
        if page.get("next") is None:
            break
        check(len(ids) == 5, "a page before the last is full: %r" % ids)
        check_equal(page["next"], ids[-1], "next is the id of the last seat returned")
        after = page["next"]
        check(pages < 10, "paging never ends")
    check_equal(collected, LAYOUT, "pages put together")
    check_equal(pages, 4, "17 seats in pages of 5")
    page = _page(c, event_id, "limit=3&after=ZED-B-9")
    check_equal([s["id"] for s in page["seats"]], ["ZED-B-10", "ZED-B-11", "ZED-B-12"],
                "after is exclusive, numeric order")
    check_equal(page["next"], "ZED-B-12", "next")
    page = _page(c, event_id, "after=ZED-A-2")
    check_equal([s["id"] for s in page["seats"]], LAYOUT[14:], "after crosses into a section")
    check_equal(page["next"], None, "last page")
    page = _page(c, event_id, "after=ALPHA-Q-3")
    check_equal((page["seats"], page["next"]), ([], None), "after the last seat")
    page = _page(c, event_id, "limit=1")
    check_equal(([s["id"] for s in page["seats"]], page["next"]), (["ZED-B-1"], "ZED-B-1"),
                "limit=1")


def test_next_null_when_page_exactly_fills(server):
    c = server.client()
    event_id = _event(c)
    page = _page(c, event_id, "limit=17")
    check_equal(len(page["seats"]), 17, "all seats")
    check_equal(page["next"], None, "next on the last page (no seat after it)")
    page = _page(c, event_id, "limit=3&after=ZED-A-2")
    check_equal([s["id"] for s in page["seats"]], LAYOUT[14:], "the last three")
    check_equal(page["next"], None, "next on the last page (exactly full)")


def test_limit_bounds(server):
    c = server.client()
    event_id = _event(c)
    page = _page(c, event_id, "limit=10000")
    check_equal(len(page["seats"]), 17, "limit=10000 accepted")
    for bad in ("10001", "-1", "abc", "100000000000"):
        expect(c.get("/v1/events/%s/seats?limit=%s" % (event_id, bad)), 400, "invalid_request",
               field="limit", what="limit=%s" % bad)
    expect(c.get("/v1/events/%s/seats?status=bogus" % event_id), 400, "invalid_request",
           field="status", what="status=bogus")
    # Project choices (docs/API.md): an unknown section is 404, an unknown `after` 400.
    expect(c.get("/v1/events/%s/seats?section=NOPE" % event_id), 404, "section_not_found",
           what="section=NOPE")
    for after in ("ZED-B-13", "NOPE-A-1", "ZED-B-01"):
        expect(c.get("/v1/events/%s/seats?after=%s" % (event_id, after)), 400,
               "invalid_request", field="after", what="after=%s" % after)


def test_default_limit_1000(server):
    c = server.client()
    event_id = uid("lim")
    create_event(c, event_id, sections=[{"id": "S", "price": 1,
                                         "rows": [{"id": "R", "seats": 1500}]}])
    page = expect(c.get("/v1/events/%s/seats" % event_id), 200)
    check_equal(len(page["seats"]), 1000, "default limit")
    check_equal(page["next"], "S-R-1000", "next")
    page = _page(c, event_id, "after=S-R-1000")
    check_equal(len(page["seats"]), 500, "second page")
    check_equal((page["seats"][0]["id"], page["next"]), ("S-R-1001", None), "second page")


def test_filters(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    h1 = hold(c, event_id, u1, ["ZED-B-10", "ALPHA-Q-2"])
    h2 = hold(c, event_id, u2, ["ZED-B-2", "ZED-A-1"])
    commit(c, h2["reservation_id"], u2)
    page = _page(c, event_id, "section=ALPHA")
    check_equal([s["id"] for s in page["seats"]], LAYOUT[14:], "section=ALPHA")
    check_equal(page["next"], None, "next")
    page = _page(c, event_id, "status=held")
    check_equal([s["id"] for s in page["seats"]], ["ZED-B-10", "ALPHA-Q-2"], "status=held")
    check(all(s["status"] == "held" for s in page["seats"]), "statuses")
    page = _page(c, event_id, "status=sold")
    check_equal([s["id"] for s in page["seats"]], ["ZED-B-2", "ZED-A-1"], "status=sold")
    page = _page(c, event_id, "status=available")
    expected = [s for s in LAYOUT if s not in ("ZED-B-10", "ALPHA-Q-2", "ZED-B-2", "ZED-A-1")]
    check_equal([s["id"] for s in page["seats"]], expected, "status=available")
    page = _page(c, event_id, "section=ZED&status=held")
    check_equal([s["id"] for s in page["seats"]], ["ZED-B-10"], "section and status")
    page = _page(c, event_id, "section=ZED&status=available&limit=4&after=ZED-B-8")
    check_equal([s["id"] for s in page["seats"]], ["ZED-B-9", "ZED-B-11", "ZED-B-12", "ZED-A-2"],
                "filtered page")
    check_equal(page["next"], None, "no available ZED seat after ZED-A-2: the last page")
    page = _page(c, event_id, "section=ZED&status=available&limit=3&after=ZED-B-8")
    check_equal(([s["id"] for s in page["seats"]], page["next"]),
                (["ZED-B-9", "ZED-B-11", "ZED-B-12"], "ZED-B-12"), "filtered page")
    page = _page(c, event_id, "section=ZED&status=available&after=ZED-A-2")
    check_equal((page["seats"], page["next"]), ([], None), "filtered last page")
    # Filtered paging walks through everything exactly once.
    collected, after = [], None
    for _ in range(20):
        query = "status=available&limit=2" + ("&after=" + after if after else "")
        page = _page(c, event_id, query)
        collected += [s["id"] for s in page["seats"]]
        after = page["next"]
        if after is None:
            break
    check_equal(collected, expected, "filtered pages put together")
    release(c, h1["reservation_id"], u1)
    page = _page(c, event_id, "status=held")
    check_equal(page["seats"], [], "nothing held after release")


def test_versions(server):
    c = server.client()
    event_id = _event(c)
    u1, u2 = user(), user()
    seat = "ZED-A-1"
    check_equal(seat_state(c, event_id, seat), ("available", 1), "new seat")
    h = hold(c, event_id, u1, [seat])
    check_equal(seat_state(c, event_id, seat), ("held", 2), "after hold")
    release(c, h["reservation_id"], u1)
    check_equal(seat_state(c, event_id, seat), ("available", 3), "after release")
    h = hold(c, event_id, u2, [seat])
    check_equal(seat_state(c, event_id, seat), ("held", 4), "after second hold")
    order = commit(c, h["reservation_id"], u2)
    check_equal(seat_state(c, event_id, seat), ("sold", 5), "after commit")
    # A failed hold on it changes nothing.
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": u1, "seats": [seat]}), 409,
           "seats_unavailable")
    check_equal(seat_state(c, event_id, seat), ("sold", 5), "after a failed hold")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u2}), 200)
    check_equal(seat_state(c, event_id, seat), ("available", 6), "after cancel")
    # Neighbours never moved; the listing shows the same versions.
    check_equal(seat_state(c, event_id, "ZED-A-2"), ("available", 1), "neighbour")
    listed = {s["id"]: s for s in all_seats(c, event_id)}
    check_equal((listed[seat]["status"], listed[seat]["version"]), ("available", 6), "listing")
    # Hold then commit straight away: two status changes.
    h = hold(c, event_id, u1, ["ALPHA-Q-1"])
    commit(c, h["reservation_id"], u1)
    check_equal(seat_state(c, event_id, "ALPHA-Q-1"), ("sold", 3), "hold+commit")


def test_one_seat_and_not_found(server):
    c = server.client()
    event_id = _event(c)
    seat = get_seat(c, event_id, "ZED-B-12")
    check_equal(seat, {"id": "ZED-B-12", "section": "ZED", "row": "B", "number": 12,
                       "price": 300, "status": "available", "version": 1}, "one seat")
    for missing in ("ZED-B-13", "ZED-B-0", "ZED-C-1", "NOPE-B-1", "ZED-B", "garbage",
                    "ZED-B-01", "ZED-B-+1", "ZED-B-1x", "ZED-B-1-1", "zed-B-1"):
        response = c.get("/v1/events/%s/seats/%s" % (event_id, missing))
        expect(response, 404, "seat_not_found", what=missing)


def test_holder_never_shown(server):
    c = server.client()
    event_id = _event(c)
    secret_user = "holder_" + uid("secret")
    h = hold(c, event_id, secret_user, ["ZED-B-3"])
    other = "buyer_" + uid("secret")
    h2 = hold(c, event_id, other, ["ZED-B-4"])
    order = commit(c, h2["reservation_id"], other)
    responses = [c.get("/v1/events/%s/seats" % event_id),
                 c.get("/v1/events/%s/seats?status=held" % event_id),
                 c.get("/v1/events/%s/seats/ZED-B-3" % event_id),
                 c.get("/v1/events/%s/seats/ZED-B-4" % event_id),
                 c.get("/v1/events/%s" % event_id)]
    for response in responses:
        expect(response, 200)
        text = response.body.decode("utf-8")
        for secret in (secret_user, other, h["reservation_id"], h2["reservation_id"],
                       order["order_id"]):
            check(secret not in text, "a seat listing shows %s: %s" % (secret, text[:300]))
    check_equal(set(get_seat(c, event_id, "ZED-B-3")), SEAT_KEYS, "members of a held seat")


def test_pools_only_event(server):
    c = server.client()
    event_id = uid("pools")
    create_event(c, event_id, sections=None, pools=[{"id": "GA", "capacity": 3, "price": 9}])
    page = expect(c.get("/v1/events/%s/seats" % event_id), 200)
    check_equal((page["seats"], page["next"]), ([], None), "no seats")
    expect(c.get("/v1/events/%s/seats/GA-A-1" % event_id), 404, "seat_not_found")
    error = expect(c.post("/v1/events/%s/holds" % event_id,
                          {"user_id": user(), "seats": ["GA-A-1"], "pools": {"GA": 1}}), 404,
                   "seat_not_found")["error"]
    check_equal(error.get("seats"), ["GA-A-1"], "the unknown seat")
    h = hold(c, event_id, user(), pools={"GA": 3})
    check_equal(h["total"], 27, "total")
