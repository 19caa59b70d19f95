"""Races between many clients, each on its own connection (API.md section 1: the first valid
request for a free seat wins; all-or-nothing)."""

import json
import time
from collections import Counter

from harness import (check, check_counts, check_equal, check_pool, commit, create_event, expect,
                     get_hold, hold, hold_body, parse_time, run_threads, seat_state, uid, user)

WEIGHT = 4.0


def _connected_clients(server, count):
    clients = [server.client() for _ in range(count)]
    for c in clients:
        expect(c.get("/healthz"), 200)   # open the connection before the race
    return clients


def test_race_for_one_seat(server):
    setup = server.client()
    event_id = uid("race")
    create_event(setup, event_id)
    count = 100
    clients = _connected_clients(server, count)
    users = [user("racer") for _ in range(count)]

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id,
                                   hold_body(users[index], ["FLOOR-A-7"]))

    responses = run_threads(count, attempt)
    statuses = Counter(r.status for r in responses)
    check_equal(dict(statuses), {201: 1, 409: 99}, "statuses")
    winners = [(i, r) for i, r in enumerate(responses) if r.status == 201]
    index, winner = winners[0]
    check_equal(winner.json["user_id"], users[index], "the winner's hold")
    for r in responses:
        if r.status == 409:
            expect(r, 409, "seats_unavailable")
            check_equal(r.error.get("seats"), ["FLOOR-A-7"], "the taken seat")
    check_equal(seat_state(setup, event_id, "FLOOR-A-7"), ("held", 2), "one status change")
    check_counts(setup, event_id, 49, 1, 0)
    check_equal(get_hold(setup, winner.json["reservation_id"])["status"], "held", "hold")


def test_race_for_pool_units(server):
    setup = server.client()
    event_id = uid("pool")
    create_event(setup, event_id, sections=None,
                 pools=[{"id": "GA", "capacity": 10, "price": 500}])
    count = 80
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id,
                                   hold_body(user("unit"), pools={"GA": 1}))

    responses = run_threads(count, attempt)
    statuses = Counter(r.status for r in responses)
    check_equal(dict(statuses), {201: 10, 409: 70}, "statuses")
    for r in responses:
        if r.status == 409:
            expect(r, 409, "insufficient_quantity")
            check_equal((r.error.get("pool"), r.error.get("available")), ("GA", 0), "detail")
    check_pool(setup, event_id, "GA", 0, 10, 0)
    ids = {r.json["reservation_id"] for r in responses if r.status == 201}
    check_equal(len(ids), 10, "ten distinct holds")


def test_concurrent_commits_of_one_hold(server):
    setup = server.client()
    event_id = uid("commit")
    create_event(setup, event_id)
    u1 = user()
    h = hold(setup, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 1})
    count = 30
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/holds/%s/commit" % h["reservation_id"],
                                   {"user_id": u1, "payment_ref": "pi_race"})

    responses = run_threads(count, attempt)
    statuses = Counter(r.status for r in responses)
    check_equal(dict(statuses), {200: count}, "statuses")
    bodies = {r.body for r in responses}
    orders = {r.json["order_id"] for r in responses}
    check_equal(len(orders), 1, "one order id")
    check_equal(len(bodies), 1, "identical answers")
    listing = expect(setup.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)
    check_equal([o["order_id"] for o in listing["orders"]], list(orders), "one order")
    check_equal(seat_state(setup, event_id, "FLOOR-A-1"), ("sold", 3), "sold once")
    check_counts(setup, event_id, 48, 0, 2)
    check_pool(setup, event_id, "GA", 4, 0, 1)


def test_overlapping_holds_stay_consistent(server):
    """40 users each want two adjacent seats of one row of 20, overlapping pairwise: every seat
    ends up in at most one hold and the counts add up."""
    setup = server.client()
    event_id = uid("overlap")
    create_event(setup, event_id)
    count = 40
    clients = _connected_clients(server, count)
    users = [user("o") for _ in range(count)]

    def attempt(index, barrier):
        first = index % 19 + 1
        seats = ["FLOOR-A-%d" % first, "FLOOR-A-%d" % (first + 1)]
        barrier.wait()
        return seats, clients[index].post("/v1/events/%s/holds" % event_id,
                                          hold_body(users[index], seats))

    results = run_threads(count, attempt)
    taken = {}
    for seats, response in results:
        if response.status == 201:
            for seat in seats:
                check(seat not in taken, "%s held twice" % seat)
                taken[seat] = response.json["reservation_id"]
        else:
            expect(response, 409, "seats_unavailable")
            check(set(response.error.get("seats") or []) <= set(seats) and
                  response.error.get("seats"), "detail %r for %r" % (response.error, seats))
    # Every pair was asked for and nothing is released: no pair can be left entirely free.
    for first in range(1, 20):
        pair = ("FLOOR-A-%d" % first, "FLOOR-A-%d" % (first + 1))
        check(pair[0] in taken or pair[1] in taken, "%s and %s both free" % pair)
    check_counts(setup, event_id, 50 - len(taken), len(taken), 0)
    page = expect(setup.get("/v1/events/%s/seats?status=held" % event_id), 200)
    check_equal(sorted(s["id"] for s in page["seats"]), sorted(taken), "held seats")


def test_commit_release_race(server):
    """The owner commits and releases the same hold at once: exactly one of them wins, and
    the state agrees with the winner."""
    setup = server.client()
    event_id = uid("cr")
    create_event(setup, event_id)
    pairs = 20
    u1 = user()
    holds = [hold(setup, event_id, u1, ["FLOOR-%s-%d" % ("AB"[n // 20], n % 20 + 1)])
             for n in range(pairs)]
    clients = _connected_clients(server, 2 * pairs)

    def attempt(index, barrier):
        h = holds[index // 2]
        action = "commit" if index % 2 == 0 else "release"
        barrier.wait()
        return clients[index].post("/v1/holds/%s/%s" % (h["reservation_id"], action),
                                   {"user_id": u1, "payment_ref": "pi_r"})

    responses = run_threads(2 * pairs, attempt)
    sold = 0
    for n, h in enumerate(holds):
        committed, released = responses[2 * n], responses[2 * n + 1]
        final = get_hold(setup, h["reservation_id"])
        seat = h["seats"][0]
        if committed.status == 200:
            expect(released, 409, "already_confirmed", what="release after a winning commit")
            check_equal((final["status"], final.get("order_id")),
                        ("confirmed", committed.json["order_id"]), "hold")
            check_equal(seat_state(setup, event_id, seat), ("sold", 3), seat)
            sold += 1
        else:
            expect(committed, 409, "hold_released", what="commit after a winning release")
            check_equal(expect(released, 200)["status"], "released", "release")
            check_equal(final["status"], "released", "hold")
            check_equal(seat_state(setup, event_id, seat), ("available", 3), seat)
    check_counts(setup, event_id, 50 - sold, 0, sold)
    listing = expect(setup.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200)
    check_equal(len(listing["orders"]), sold, "orders")


def test_commit_at_expiry_race(server):
    """Commits sent around the instant a hold lapses: each hold ends either confirmed (every
    commit 200 with one order) or expired (every commit 410), never both, never half."""
    setup = server.client()
    event_id = uid("ce")
    create_event(setup, event_id)
    count = 12
    u1 = user()
    clients = _connected_clients(server, count * 3)
    holds = [hold(setup, event_id, u1, ["FLOOR-A-%d" % (n + 1)], {"GA": 1} if n < 5 else None,
                  ttl_s=0.4) for n in range(count)]
    ends = [parse_time(h["expires_at"]) for h in holds]
    latest = max(ends)

    offsets_ms = (-40, -15, 5, 25)

    def attempt(index, barrier):
        h = holds[index // 3]
        barrier.wait()
        # Each hold's three commits go out together, from 40 ms before to 25 ms after its
        # expiry depending on the hold, so some holds are committed and some lapse.
        target = (parse_time(h["expires_at"]) + offsets_ms[(index // 3) % 4]) / 1000.0
        delay = target - time.time()
        if delay > 0:
            time.sleep(delay)
        return clients[index].post("/v1/holds/%s/commit" % h["reservation_id"],
                                   {"user_id": u1, "payment_ref": "pi_e"})

    responses = run_threads(count * 3, attempt)
    time.sleep(max(0.0, latest / 1000.0 - time.time()) + 0.05)
    sold = 0
    for n, h in enumerate(holds):
        answers = responses[3 * n:3 * n + 3]
        final = get_hold(setup, h["reservation_id"])
        seat = h["seats"][0]
        if final["status"] == "confirmed":
            sold += 1
            # Committed before it lapsed: every commit of it answers the one order.
            for r in answers:
                expect(r, 200, what="commit of hold %d that ended confirmed" % n)
                check_equal(r.json["order_id"], final["order_id"], "one order")
            check_equal(seat_state(setup, event_id, seat), ("sold", 3), seat)
        else:
            check_equal(final["status"], "expired", "hold %d" % n)
            for r in answers:
                expect(r, 410, "hold_expired", what="commit of hold %d that ended expired" % n)
            check_equal(seat_state(setup, event_id, seat), ("available", 3), seat)
    summary = check_counts(setup, event_id, 50 - sold, 0, sold)
    check_equal(summary["pools"][0]["held"], 0, "no unit held")


def test_concurrent_cancel(server):
    setup = server.client()
    event_id = uid("cc")
    create_event(setup, event_id)
    u1 = user()
    h = hold(setup, event_id, u1, ["FLOOR-B-1"], {"GA": 2})
    order = commit(setup, h["reservation_id"], u1)
    count = 20
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1})

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {200: count}, "statuses")
    check_equal(len({r.body for r in responses}), 1, "identical answers")
    check_equal(responses[0].json["status"], "cancelled", "status")
    check_equal(seat_state(setup, event_id, "FLOOR-B-1"), ("available", 4), "one change")
    check_pool(setup, event_id, "GA", 5, 0, 0)


def test_many_connections(server):
    setup = server.client()
    event_id = uid("conn")
    create_event(setup, event_id, sections=[{"id": "S", "price": 1,
                                             "rows": [{"id": "R", "seats": 300}]}])
    count = 300
    clients = [server.client() for _ in range(count)]

    def attempt(index, barrier):
        barrier.wait()
        first = clients[index].post("/v1/events/%s/holds" % event_id,
                                    hold_body(user(), ["S-R-%d" % (index + 1)]))
        second = clients[index].get("/v1/events/%s/seats/S-R-%d" % (event_id, index + 1))
        return first, second

    results = run_threads(count, attempt)
    for index, (first, second) in enumerate(results):
        expect(first, 201, what="hold on connection %d" % index)
        check_equal(expect(second, 200)["status"], "held", "seat %d" % (index + 1))
    check_counts(setup, event_id, 0, 300, 0)


def test_user_limit_race(server):
    """One user, 20 concurrent holds of one seat each, a limit of 5: exactly 5 win."""
    setup = server.client()
    event_id = uid("lim")
    create_event(setup, event_id, max_seats_per_user=5)
    u1 = user()
    count = 20
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id,
                                   hold_body(u1, ["FLOOR-A-%d" % (index + 1)]))

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {201: 5, 429: 15}, "statuses")
    for r in responses:
        if r.status == 429:
            expect(r, 429, "user_limit_exceeded")
    check_counts(setup, event_id, 45, 5, 0)


def test_replace_existing_race(server):
    """One user sends 10 holds with replace_existing at once: all succeed, and exactly the
    one applied last stays held."""
    setup = server.client()
    event_id = uid("rep")
    create_event(setup, event_id)
    u1 = user()
    count = 10
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id,
                                   hold_body(u1, ["FLOOR-B-%d" % (index + 1)], {"GA": 1},
                                             replace_existing=True))

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {201: count}, "statuses")
    statuses = Counter(get_hold(setup, r.json["reservation_id"])["status"] for r in responses)
    check_equal(dict(statuses), {"held": 1, "released": count - 1}, "hold statuses")
    check_counts(setup, event_id, 49, 1, 0)
    check_pool(setup, event_id, "GA", 4, 1, 0)


def test_same_key_different_bodies_race(server):
    """Ten requests with one Idempotency-Key and two different bodies at once: one body wins;
    its senders all get the same 201, the others 422; one hold exists."""
    setup = server.client()
    event_id = uid("keyrace")
    create_event(setup, event_id)
    key = "race-" + uid("k")
    bodies = [json.dumps(hold_body(user(), ["FLOOR-A-1"])),
              json.dumps(hold_body(user(), ["FLOOR-A-2"]))]
    count = 10
    clients = _connected_clients(server, count)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id, raw=bodies[index % 2],
                                   headers={"Idempotency-Key": key})

    responses = run_threads(count, attempt)
    winners = {index % 2 for index, r in enumerate(responses) if r.status == 201}
    check_equal(len(winners), 1, "one body wins: statuses %s" % [r.status for r in responses])
    winner = winners.pop()
    for index, r in enumerate(responses):
        if index % 2 == winner:
            expect(r, 201)
        else:
            expect(r, 422, "idempotency_key_reused")
    check_equal(len({r.body for i, r in enumerate(responses) if i % 2 == winner}), 1,
                "identical answers")
    check_counts(setup, event_id, 49, 1, 0)
