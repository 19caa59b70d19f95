"""best_available holds (API.md section 3): sections in listed order, rows front first, the first
row with a fitting block serves the request; within it no stranded single seat, then closeness
to the row's middle, then lower numbers. adjacent false: the best free seats one by one."""

import random
import time
from collections import Counter

from harness import (check, check_counts, check_equal, check_pool, create_event, expect,
                     get_hold, hold, post_hold, release, run_threads, seat_state, uid,
                     user)

WEIGHT = 3.0


# ---------------------------------------------------------------------------------------------
# A reference model of the selection rules, written from the contract alone.


def _row_seats(section_id, row_id, length):
    return ["%s-%s-%d" % (section_id, row_id, n) for n in range(1, length + 1)]


def model_pick(layout, free, count, adjacent=True, section=None):
    """layout: [(section_id, [(row_id, length), ...]), ...] best first; free: set of seat ids.
    Returns the chosen seat ids (a list) or None when nothing fits."""
    sections = [s for s in layout if section is None or s[0] == section]
    if not adjacent:
        chosen = []
        for section_id, rows in sections:
            for row_id, length in rows:
                # Closeness to the middle (L+1)/2, doubled to stay in integers; lower first.
                order = sorted(range(1, length + 1), key=lambda n: (abs(2 * n - (length + 1)), n))
                for n in order:
                    seat = "%s-%s-%d" % (section_id, row_id, n)
                    if seat in free:
                        chosen.append(seat)
                        if len(chosen) == count:
                            return chosen
        return None
    for section_id, rows in sections:
        for row_id, length in rows:
            is_free = [False] + ["%s-%s-%d" % (section_id, row_id, n) in free
                                 for n in range(1, length + 1)] + [False]
            best = None
            for first in range(1, length - count + 2):
                last = first + count - 1
                if not all(is_free[first:last + 1]):
                    continue
                # A single free seat between the block and a taken seat or the row's end.
                strands = (is_free[first - 1] and not is_free[first - 2]) or \
                    (is_free[last + 1] and not is_free[last + 2])
                distance = abs(2 * first + (count - 1) - (length + 1))
                key = (1 if strands else 0, distance, first)
                if best is None or key < best[0]:
                    best = (key, first)
            if best is not None:
                first = best[1]
                return ["%s-%s-%d" % (section_id, row_id, n) for n in range(first, first + count)]
    return None


def _layout_body(layout, price=1000):
    return [{"id": sid, "price": price, "rows": [{"id": rid, "seats": n} for rid, n in rows]}
            for sid, rows in layout]


def _event(c, layout, **fields):
    event_id = uid("best")
    create_event(c, event_id, sections=_layout_body(layout), **fields)
    return event_id


def _best(c, event_id, user_id, count, section=None, adjacent=None, **extra):
    best = {"count": count}
    if section is not None:
        best["section"] = section
    if adjacent is not None:
        best["adjacent"] = adjacent
    return post_hold(c, event_id, user_id, best_available=best, **extra)


def _best_seats(c, event_id, count, section=None, adjacent=None, user_id=None, **extra):
    """A best_available hold that must succeed: its seats, sorted by number within row."""
    response = _best(c, event_id, user_id or user(), count, section, adjacent, **extra)
    h = expect(response, 201, what="best_available count %d section %s adjacent %s" % (
        count, section, adjacent))
    check_equal(len(h.get("seats") or []), count, "number of seats picked")
    return h


def _nums(seats):
    return sorted(int(s.rsplit("-", 1)[1]) for s in seats)


def _expect_none_fits(response, what):
    error = expect(response, 409, "seats_unavailable", what=what)["error"]
    check_equal(error.get("seats"), [], what + ": seats of a best_available miss")


# ---------------------------------------------------------------------------------------------


def test_contract_example_ten_seat_row(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 10)])])
    h1 = _best_seats(c, event_id, 4)
    check_equal(sorted(h1["seats"]), sorted(_row_seats("S", "R", 10)[3:7]),
                "count 4 on an empty 10-seat row: seats 4-7")
    check_equal(h1["total"], 4000, "total of 4 seats at 1000")
    h2 = _best_seats(c, event_id, 2)
    check_equal(_nums(h2["seats"]), [2, 3],
                "count 2 next: every block strands a seat; closest to the middle, lower: 2-3")
    h3 = _best_seats(c, event_id, 3, adjacent=False)
    check_equal(_nums(h3["seats"]), [1, 8, 9], "count 3 not adjacent: 8, 9, 1")
    for n in (1, 2, 3, 4, 7, 8, 9):
        check_equal(seat_state(c, event_id, "S-R-%d" % n), ("held", 2), "S-R-%d" % n)
    check_equal(seat_state(c, event_id, "S-R-10"), ("available", 1), "S-R-10 left free")
    check_counts(c, event_id, 1, 9, 0)
    # Only seat 10 is free: an adjacent pair does not fit, nor do 2 seats apart.
    _expect_none_fits(_best(c, event_id, user(), 2), "count 2 with one free seat")
    _expect_none_fits(_best(c, event_id, user(), 2, adjacent=False),
                      "count 2 not adjacent with one free seat")
    h4 = _best_seats(c, event_id, 1)
    check_equal(h4["seats"], ["S-R-10"], "the last seat")
    _expect_none_fits(_best(c, event_id, user(), 1), "count 1 on a full row")
    check_counts(c, event_id, 0, 10, 0, "the failed requests changed nothing")


def test_no_stranding_beats_middle(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 10)])])
    hold(c, event_id, user(), ["S-R-3"])
    # 5-6 is closest to the middle but strands seat 4; 4-5 and 6-7 strand nothing and are
    # equally close: the lower numbers win.
    check_equal(_nums(_best_seats(c, event_id, 2)["seats"]), [4, 5], "count 2 after seat 3 taken")


def test_middle_tie_lower_numbers(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 10)])])
    hold(c, event_id, user(), ["S-R-3", "S-R-8"])
    # Free 4-7: 4-6 and 5-7 both strand one seat, middles 5 and 6 are equally close to 5.5.
    check_equal(_nums(_best_seats(c, event_id, 3)["seats"]), [4, 5, 6], "count 3 in 4-7")
    odd = _event(c, [("S", [("R", 9)])])
    check_equal(_nums(_best_seats(c, odd, 3)["seats"]), [4, 5, 6], "count 3 on a row of 9")
    odd2 = _event(c, [("S", [("R", 9)])])
    check_equal(_nums(_best_seats(c, odd2, 2)["seats"]), [4, 5],
                "count 2 on a row of 9: 4-5 and 5-6 tie, lower first")
    one = _event(c, [("S", [("R", 10)])])
    check_equal(_nums(_best_seats(c, one, 1)["seats"]), [5],
                "count 1 on a row of 10: 5 and 6 tie, lower first")
    whole = _event(c, [("S", [("R", 7)])])
    check_equal(_nums(_best_seats(c, whole, 7)["seats"]), list(range(1, 8)), "a whole row")


def test_first_fitting_row_serves(server):
    c = server.client()
    event_id = _event(c, [("S", [("A", 10), ("B", 10)])])
    hold(c, event_id, user(), ["S-A-1", "S-A-2", "S-A-6", "S-A-7", "S-A-8", "S-A-9", "S-A-10"])
    # Row A has 3-5 free: both pairs strand a seat, but row A fits, so row B is not considered.
    h = _best_seats(c, event_id, 2)
    check_equal(sorted(h["seats"]), ["S-A-4", "S-A-5"], "count 2 served by row A")
    # Now row A has only seat 3: a pair goes to row B, at its middle.
    h = _best_seats(c, event_id, 2)
    check_equal(sorted(h["seats"]), ["S-B-5", "S-B-6"], "count 2 served by row B")
    # count 1 goes back to row A (front first).
    check_equal(_best_seats(c, event_id, 1)["seats"], ["S-A-3"], "count 1 served by row A")
    # count 5 does not fit around B's middle: 1-4 and 7-10 are the free runs.
    _expect_none_fits(_best(c, event_id, user(), 5), "count 5")
    check_equal(sorted(_best_seats(c, event_id, 4)["seats"]), ["S-B-1", "S-B-2", "S-B-3", "S-B-4"],
                "count 4: two exact fits, equally far from the middle, lower first")


def test_sections_in_listed_order(server):
    c = server.client()
    # Listed best first: the section listed first is served first whatever its id or price.
    layout = [("ZED", [("R", 4)]), ("ALPHA", [("R", 10)])]
    event_id = _event(c, layout)
    h = _best_seats(c, event_id, 4)
    check_equal(sorted(h["seats"]), ["ZED-R-1", "ZED-R-2", "ZED-R-3", "ZED-R-4"],
                "the first listed section")
    h = _best_seats(c, event_id, 2)
    check_equal(sorted(h["seats"]), ["ALPHA-R-5", "ALPHA-R-6"], "then the next section")
    h = _best_seats(c, event_id, 2, section="ALPHA")
    check_equal(_nums(h["seats"]), [3, 4], "section ALPHA only")
    check(all(s.startswith("ALPHA-") for s in h["seats"]), "seats of ALPHA: %r" % h["seats"])
    _expect_none_fits(_best(c, event_id, user(), 1, section="ZED"), "full section ZED")
    # Not found: an unknown section, also when others have seats; nothing changes.
    before = expect(c.get("/v1/events/%s" % event_id), 200)
    expect(_best(c, event_id, user(), 1, section="NOPE"), 404, "section_not_found",
           what="unknown section")
    expect(_best(c, event_id, user(), 1, section="alpha"), 404, "section_not_found",
           what="section ids are case-sensitive")
    check_equal(expect(c.get("/v1/events/%s" % event_id), 200), before, "nothing changed")
    expect(_best(c, uid("none"), user(), 1), 404, "event_not_found", what="unknown event")


def test_section_choice_with_prices(server):
    c = server.client()
    event_id = uid("best")
    create_event(c, event_id, sections=[
        {"id": "FLOOR", "price": 45000, "rows": [{"id": "A", "seats": 6}]},
        {"id": "BALC", "price": 12000, "rows": [{"id": "A", "seats": 6}]}],
        pools=[{"id": "GA", "capacity": 3, "price": 9900}])
    h = _best_seats(c, event_id, 2, section="BALC", pools={"GA": 2})
    check_equal(sorted(h["seats"]), ["BALC-A-3", "BALC-A-4"], "BALC middle pair")
    check_equal(h["total"], 2 * 12000 + 2 * 9900, "total of BALC seats and pool units")
    check_equal(h["pools"], {"GA": 2}, "pools")
    check_pool(c, event_id, "GA", 1, 2, 0)
    # A pool shortfall undoes the picked seats too.
    expect(_best(c, event_id, user(), 2, pools={"GA": 2}), 409, "insufficient_quantity")
    check_counts(c, event_id, 10, 2, 0, "after the pool shortfall")


def test_non_adjacent_order(server):
    c = server.client()
    event_id = _event(c, [("A", [("R", 3)]), ("B", [("R", 5), ("S", 4)])])
    hold(c, event_id, user(), ["A-R-2"])
    h = _best_seats(c, event_id, 4, adjacent=False)
    # A-R: 1 and 3 (equally close to 2, lower first); then B-R from its middle: 3, then 2.
    check_equal(sorted(h["seats"]), ["A-R-1", "A-R-3", "B-R-2", "B-R-3"], "4 seats apart")
    h = _best_seats(c, event_id, 4, adjacent=False)
    check_equal(sorted(h["seats"]), ["B-R-1", "B-R-4", "B-R-5", "B-S-2"],
                "then 4, 1, 5 of B-R and the best of B-S")
    h = _best_seats(c, event_id, 2, adjacent=False, section="B")
    check_equal(sorted(h["seats"]), ["B-S-1", "B-S-3"], "B-S: 3 (as close as 2), then 1")
    _expect_none_fits(_best(c, event_id, user(), 2, adjacent=False), "one seat left, count 2")
    check_equal(_best_seats(c, event_id, 1, adjacent=False)["seats"], ["B-S-4"], "the last seat")


def test_invalid_best_available(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 20)])], max_seats_per_hold=6)
    u1 = user()
    count, section, adjacent = ("best_available.count", "best_available.section",
                                "best_available.adjacent")
    bad = [
        ({"count": 0}, count), ({"count": -1}, count), ({"count": "2"}, count),
        ({"count": 2.5}, count), ({"count": None}, count), ({}, count), ({"count": True}, count),
        ({"count": 2, "adjacent": "yes"}, adjacent), ({"count": 2, "adjacent": 1}, adjacent),
        ({"count": 2, "section": 5}, section), ({"count": 2, "section": ["S"]}, section),
        ([2], "best_available"), ("2", "best_available"), (2, "best_available"),
        (True, "best_available"),
        ({"count": 7}, count),  # above max_seats_per_hold
    ]
    for value, path in bad:
        response = post_hold(c, event_id, u1, best_available=value)
        expect(response, 400, "invalid_request", field=path, what="best_available %r" % (value,))
        check(response.error["message"].startswith(path + " "),
              "best_available %r: the message %r starts with %s" % (
                  value, response.error["message"], path))
    check_counts(c, event_id, 20, 0, 0, "nothing held by the invalid requests")
    # The maximum itself is allowed.
    h = _best_seats(c, event_id, 6, user_id=u1)
    check_equal(_nums(h["seats"]), list(range(8, 14)), "count 6 on a row of 20: 8-13")
    # Explicit seats plus picked seats above the maximum: 400.
    response = post_hold(c, event_id, u1, ["S-R-1"], best_available={"count": 6})
    expect(response, 400, "invalid_request", field="best_available.count",
           what="1 seat + count 6 > max_seats_per_hold 6")
    check_counts(c, event_id, 14, 6, 0, "nothing more held")


def test_combined_with_explicit_seats(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 10)])])
    u1 = user()
    response = post_hold(c, event_id, u1, ["S-R-5"], best_available={"count": 2})
    h = expect(response, 201, what="explicit seat plus best_available")
    check_equal(len(h["seats"]), 3, "3 seats")
    check("S-R-5" in h["seats"], "the explicit seat is held: %r" % h["seats"])
    # With seat 5 taken: 6-7 strands nothing and is the closest such block.
    check_equal(_nums(h["seats"]), [5, 6, 7], "picked 6-7 beside the explicit seat")
    check_equal(h["total"], 3000, "total")
    check_counts(c, event_id, 7, 3, 0)
    # An explicit seat that is taken fails the whole request, listing it.
    response = post_hold(c, event_id, user(), ["S-R-6"], best_available={"count": 2})
    error = expect(response, 409, "seats_unavailable", what="taken explicit seat")["error"]
    check_equal(error.get("seats"), ["S-R-6"], "the taken explicit seat")
    # Picked seats that do not fit fail the request: the explicit seat stays free.
    response = post_hold(c, event_id, user(), ["S-R-1"], best_available={"count": 4})
    _expect_none_fits(response, "explicit free seat, no block of 4")
    check_equal(seat_state(c, event_id, "S-R-1"), ("available", 1), "explicit seat untouched")
    check_counts(c, event_id, 7, 3, 0, "nothing changed")


def test_replace_existing(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 4)])])
    u1 = user()
    first = _best_seats(c, event_id, 4, user_id=u1)
    _expect_none_fits(_best(c, event_id, u1, 4), "the row is full")
    second = expect(_best(c, event_id, u1, 4, replace_existing=True), 201,
                    what="replace_existing: the user's own seats count as free")
    check_equal(sorted(second["seats"]), sorted(first["seats"]), "the same 4 seats")
    check_equal(get_hold(c, first["reservation_id"])["status"], "released", "first hold")
    check_equal(seat_state(c, event_id, "S-R-1"), ("held", 4),
                "held, released and held again in one step")
    check_counts(c, event_id, 0, 4, 0)
    # Another user's seats do not count as free.
    other = _event(c, [("S", [("R", 6)])])
    hold(c, other, user(), ["S-R-3", "S-R-4"])
    mine = hold(c, other, u1, ["S-R-1"])
    h = expect(_best(c, other, u1, 2, replace_existing=True), 201, what="replace on other")
    check_equal(sorted(h["seats"]), ["S-R-1", "S-R-2"],
                "1-2 (freed by the replace) and 5-6 tie on the middle: lower first")
    check_equal(get_hold(c, mine["reservation_id"])["status"], "released", "replaced hold")


def test_user_limit(server):
    c = server.client()
    event_id = _event(c, [("S", [("R", 10)])], max_seats_per_user=3)
    u1 = user()
    expect(_best(c, event_id, u1, 4), 429, "user_limit_exceeded", what="count 4 > limit 3")
    h = _best_seats(c, event_id, 3, user_id=u1)
    check_equal(_nums(h["seats"]), [4, 5, 6], "count 3 on 10: 4-6 and 5-7 tie, lower first")
    expect(_best(c, event_id, u1, 1), 429, "user_limit_exceeded", what="limit reached")
    check_counts(c, event_id, 7, 3, 0)


def test_matches_reference_model(server):
    """A long deterministic mix of explicit holds, releases and best_available requests on an
    event with rows of many lengths; every answer is compared with the reference model."""
    c = server.client()
    layout = [("A", [("R1", 1), ("R2", 2), ("R3", 7)]),
              ("B", [("R1", 8), ("R2", 11), ("R3", 12)]),
              ("C", [("R1", 5), ("R2", 13)])]
    event_id = _event(c, layout, max_seats_per_hold=20)
    all_ids = [s for sid, rows in layout for rid, n in rows for s in _row_seats(sid, rid, n)]
    free = set(all_ids)
    holds = []
    rng = random.Random(20261122)
    for step in range(220):
        action = rng.random()
        if action < 0.15 and holds:
            index = rng.randrange(len(holds))
            hold_id, owner, seats = holds.pop(index)
            release(c, hold_id, owner)
            free.update(seats)
            continue
        if action < 0.3:
            seats = rng.sample(sorted(free), min(len(free), rng.randint(1, 3)))
            if not seats:
                continue
            owner = user()
            h = hold(c, event_id, owner, seats)
            free.difference_update(seats)
            holds.append((h["reservation_id"], owner, seats))
            continue
        count = rng.choice([1, 2, 2, 3, 3, 4, 5, 6])
        adjacent = rng.random() < 0.75
        section = rng.choice([None, None, None, "A", "B", "C"])
        expected = model_pick(layout, free, count, adjacent, section)
        owner = user()
        response = _best(c, event_id, owner, count, section, adjacent)
        what = "step %d: count %d adjacent %s section %s (free %d)" % (
            step, count, adjacent, section, len(free))
        if expected is None:
            _expect_none_fits(response, what)
            continue
        h = expect(response, 201, what=what)
        check_equal(sorted(h["seats"]), sorted(expected), what)
        free.difference_update(expected)
        holds.append((h["reservation_id"], owner, expected))
    listed = {s["id"] for s in expect(c.get("/v1/events/%s/seats?status=available&limit=10000"
                                            % event_id), 200)["seats"]}
    check_equal(sorted(listed), sorted(free), "free seats at the end")


test_matches_reference_model.weight = 2.0


def test_race_for_pairs(server):
    setup = server.client()
    event_id = _event(setup, [("S", [("A", 10), ("B", 10), ("C", 10), ("D", 10)])])
    count = 40
    clients = [server.client() for _ in range(count)]
    for client in clients:
        expect(client.get("/healthz"), 200)

    def attempt(index, barrier):
        barrier.wait()
        return _best(clients[index], event_id, "racer-%d" % index, 2)

    responses = run_threads(count, attempt)
    statuses = Counter(r.status for r in responses)
    check_equal(dict(statuses), {201: 20, 409: 20}, "statuses")
    taken = Counter()
    for r in responses:
        if r.status == 409:
            _expect_none_fits(r, "a late racer")
            continue
        seats = r.json["seats"]
        check_equal(len(seats), 2, "two seats")
        rows = {s.rsplit("-", 1)[0] for s in seats}
        check_equal(len(rows), 1, "one row: %r" % seats)
        nums = _nums(seats)
        check_equal(nums[1] - nums[0], 1, "adjacent: %r" % seats)
        taken.update(seats)
    doubled = [s for s, n in taken.items() if n > 1]
    check_equal(doubled, [], "seats in two holds")
    check_equal(len(taken), 40, "every seat held once")
    check_counts(setup, event_id, 0, 40, 0)


test_race_for_pairs.weight = 2.0


def test_nearly_sold_out_large_event(server):
    c = server.client(client_timeout=120.0)
    rows = 100
    length = 1000
    event_id = uid("big")
    create_event(c, event_id, sections=[{"id": "S", "price": 100, "rows": [
        {"id": "R%d" % r, "seats": length} for r in range(1, rows + 1)]}],
        max_seats_per_hold=1000, hold_ttl_s=3600)
    left_free = {"S-R10-500", "S-R30-10", "S-R30-12", "S-R50-1", "S-R77-600", "S-R77-601",
                 "S-R99-300", "S-R100-1000"}
    started = time.monotonic()
    for r in range(1, rows + 1):
        seats = ["S-R%d-%d" % (r, n) for n in range(1, length + 1)
                 if "S-R%d-%d" % (r, n) not in left_free]
        expect(post_hold(c, event_id, "filler-%d" % r, seats), 201, what="fill row R%d" % r)
    print("    # filled %d seats in %.2f s" % (rows * length - len(left_free),
                                               time.monotonic() - started))
    check_counts(c, event_id, len(left_free), rows * length - len(left_free), 0)
    started = time.monotonic()
    h = _best_seats(c, event_id, 2)
    elapsed = time.monotonic() - started
    print("    # best_available count 2 on a nearly sold-out 100,000-seat event: %.1f ms"
          % (elapsed * 1000))
    check_equal(sorted(h["seats"]), ["S-R77-600", "S-R77-601"], "the last adjacent pair")
    _expect_none_fits(_best(c, event_id, user(), 2), "no adjacent pair left")
    h = _best_seats(c, event_id, 3, adjacent=False)
    check_equal(sorted(h["seats"]), ["S-R10-500", "S-R30-10", "S-R30-12"],
                "3 seats apart, front rows first")
    h = _best_seats(c, event_id, 3, adjacent=False)
    check_equal(sorted(h["seats"]), ["S-R100-1000", "S-R50-1", "S-R99-300"], "the last three")
    _expect_none_fits(_best(c, event_id, user(), 1), "sold out")


test_nearly_sold_out_large_event.weight = 3.0
