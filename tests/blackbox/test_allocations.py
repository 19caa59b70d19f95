"""Allocations (API.md section 14): inventory set aside for a partner. Only free inventory is
allocated (seats_unavailable, insufficient_quantity, allocation_exists, 400s with field); the
public skips it (a named seat 409, best_available goes around it, pools hold back its units);
a hold or booking naming the allocation takes only its inventory (best_available within it);
a released or lapsed hold and a cancelled order give back to the allocation, unless released
from it meanwhile; release frees what is free at once; the seat list, the summary, the stream
and the history show it; the list and one; a restart and a kill -9 keep it all."""

import time

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, get_event, hold,
                     pool_of, release, section_of, seat_state, uid, user)

WEIGHT = 2.0

FLOOR, BALC, GA = 45000, 12000, 9900


def event(c):
    """FLOOR rows A and B of 20, BALC row A of 10, pool GA of 5."""
    event_id = uid("alloc")
    create_event(c, event_id)
    return event_id


def allocate(c, event_id, body, status=201, code=None, field=None):
    return expect(c.post("/v1/events/%s/allocations" % event_id, body), status, code, field,
                  what="POST allocation %s" % body.get("id"))


def release_allocation(c, event_id, allocation_id, body=None, status=200, code=None):
    return expect(c.post("/v1/events/%s/allocations/%s/release" % (event_id, allocation_id),
                         body or {}), status, code, what="release %s" % allocation_id)


def get_allocation(c, event_id, allocation_id):
    return expect(c.get("/v1/events/%s/allocations/%s" % (event_id, allocation_id)), 200)


def counts(allocation):
    return allocation["counts"]["available"], allocation["counts"]["held"], \
        allocation["counts"]["sold"]


def test_only_free_inventory_is_set_aside(server):
    c = server.client()
    event_id = event(c)
    hold(c, event_id, user(), ["FLOOR-A-2"])
    got = allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1", "FLOOR-A-2"]}, 409,
                   "seats_unavailable")
    check_equal(got["error"]["seats"], ["FLOOR-A-2"], "the seat taken")
    got = allocate(c, event_id, {"id": "amex", "pools": {"GA": 6}}, 409, "insufficient_quantity")
    check_equal(got["error"]["pool"], "GA", "the pool short")
    allocate(c, event_id, {"id": "amex", "seats": ["NOPE-A-1"]}, 404, "seat_not_found")
    allocate(c, event_id, {"id": "amex", "pools": {"VIP": 1}}, 404, "pool_not_found")
    allocate(c, event_id, {"id": "amex", "best_available": {"count": 2, "section": "X"}}, 404,
             "section_not_found")
    allocate(c, event_id, {"id": "a-b", "seats": ["FLOOR-A-1"]}, 400, "invalid_request", "id")
    allocate(c, event_id, {"seats": ["FLOOR-A-1"]}, 400, "invalid_request", "id")
    allocate(c, event_id, {"id": "amex"}, 400, "invalid_request", "seats")
    allocate(c, event_id, {"id": "amex", "seats": "FLOOR-A-1"}, 400, "invalid_request", "seats")
    allocate(c, event_id, {"id": "amex", "pools": {"GA": 0}}, 400, "invalid_request", "pools.GA")
    allocate(c, event_id, {"id": "amex", "best_available": {"count": 0}}, 400, "invalid_request",
             "best_available.count")
    expect(c.post("/v1/events/%s/allocations" % uid("none"), {"id": "amex"}), 404,
           "event_not_found")
    made = allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1"], "pools": {"GA": 2},
                                  "best_available": {"count": 3, "section": "FLOOR"}})
    check_equal(made["id"], "amex", "the id")
    check_equal(len(made["seats"]), 4, "the seats named and picked")
    check_equal(made["seats"][0], "FLOOR-A-1", "the named seat first")
    check_equal(made["pools"], {"GA": 2}, "the pools")
    check_equal(made["counts"], {"available": 6, "held": 0, "sold": 0}, "the counts")
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-B-1"]}, 409, "allocation_exists")
    # Seats and summary show it.
    for seat_id in made["seats"]:
        check_equal(seat_state(c, event_id, seat_id)[0], "allocated", seat_id)
    check_equal(harness.get_seat(c, event_id, "FLOOR-A-1").get("allocation"), "amex",
                "a free allocated seat names its allocation")
    check_equal(harness.get_seat(c, event_id, "FLOOR-B-1").get("allocation"), None,
                "a public seat names none")
    # Idempotency-Key: a repeat answers the first answer, changing nothing.
    body = {"id": "keyed", "seats": ["BALC-A-9"]}
    headers = {"Idempotency-Key": "alloc-key-1"}
    first = c.post("/v1/events/%s/allocations" % event_id, body, headers=headers)
    again = c.post("/v1/events/%s/allocations" % event_id, body, headers=headers)
    check_equal((first.status, again.status, again.header("idempotent-replayed")),
                (201, 201, "true"), "a repeated creation with its key")
    check_equal(again.json, first.json, "the same answer")
    listed = expect(c.get("/v1/events/%s/seats?status=allocated" % event_id), 200)
    check_equal(sorted(s["id"] for s in listed["seats"]), sorted(made["seats"] + ["BALC-A-9"]),
                "the list")
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 44, "held": 1, "sold": 0, "allocated": 5},
                "the summary's counts")
    check_equal(section_of(summary, "FLOOR")["counts"]["allocated"], 4, "FLOOR's allocated")
    check_equal(section_of(summary, "BALC")["counts"]["allocated"], 1, "BALC's allocated")
    ga = pool_of(summary, "GA")
    check_equal((ga["available"], ga["allocated"]), (3, 2), "the pool")
    check_equal(get_allocation(c, event_id, "amex"), made, "GET the allocation")


def test_the_public_skips_allocated_inventory(server):
    c = server.client()
    event_id = event(c)
    made = allocate(c, event_id, {"id": "guests", "best_available": {"count": 20,
                                                                      "section": "FLOOR"},
                                  "pools": {"GA": 4}})
    check_equal(sorted(made["seats"]), sorted("FLOOR-A-%d" % n for n in range(1, 21)), "row A")
    got = expect(c.post("/v1/events/%s/holds" % event_id,
                        {"user_id": user(), "seats": ["FLOOR-A-3"]}), 409, "seats_unavailable")
    check_equal(got["error"]["seats"], ["FLOOR-A-3"], "the allocated seat")
    best = hold(c, event_id, user(), best_available={"count": 2, "section": "FLOOR"})
    check(all(s.startswith("FLOOR-B-") for s in best["seats"]), "best_available skips row A")
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": user(), "pools": {"GA": 2}}), 409,
           "insufficient_quantity")
    hold(c, event_id, user(), pools={"GA": 1})
    # The metrics count every allocation's seats and units.
    samples = {}
    for line in c.get("/metrics").body.decode().splitlines():
        if line.startswith("holdfast_allocated{"):
            samples[line.split('"')[1]] = float(line.split()[-1])
    check(samples.get("available", 0) >= 24, "holdfast_allocated: %s" % samples)


def test_holds_of_the_allocation(server):
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["BALC-A-1", "BALC-A-2", "BALC-A-3", "BALC-A-4"],
                           "pools": {"GA": 3}})
    u = user()
    expect(c.post("/v1/events/%s/holds" % event_id,
                  {"user_id": u, "seats": ["BALC-A-1"], "allocation": "nope"}), 404,
           "allocation_not_found")
    expect(c.post("/v1/events/%s/holds" % event_id,
                  {"user_id": u, "seats": ["BALC-A-5"], "allocation": "amex"}), 409,
           "seats_unavailable")
    expect(c.post("/v1/events/%s/holds" % event_id,
                  {"user_id": u, "pools": {"GA": 4}, "allocation": "amex"}), 409,
           "insufficient_quantity")
    held = hold(c, event_id, u, pools={"GA": 2}, allocation="amex",
                best_available={"count": 2})
    check_equal(held["allocation"], "amex", "the hold's allocation")
    check(all(s in ("BALC-A-1", "BALC-A-2", "BALC-A-3", "BALC-A-4") for s in held["seats"]),
          "best_available within the allocation: %s" % held["seats"])
    check_equal(counts(get_allocation(c, event_id, "amex")), (3, 4, 0), "while held")
    order = commit(c, held["reservation_id"], u)
    check_equal(order["allocation"], "amex", "the order's allocation")
    check_equal(counts(get_allocation(c, event_id, "amex")), (3, 0, 4), "sold")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u}), 200)
    check_equal(counts(get_allocation(c, event_id, "amex")), (7, 0, 0), "back to it")
    for seat_id in held["seats"]:
        check_equal(seat_state(c, event_id, seat_id)[0], "allocated", "cancelled " + seat_id)
    check_equal(pool_of(get_event(c, event_id), "GA")["available"], 2, "the public's units")
    # A released hold gives back as well.
    again = hold(c, event_id, u, ["BALC-A-1"], allocation="amex")
    release(c, again["reservation_id"], u)
    check_equal(seat_state(c, event_id, "BALC-A-1")[0], "allocated", "released")


def test_a_lapsed_hold_gives_back(server):
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-B-5"]})
    held = hold(c, event_id, user(), ["FLOOR-B-5"], ttl_s=0.3, allocation="amex")
    check_equal(seat_state(c, event_id, "FLOOR-B-5")[0], "held", "held")
    deadline = time.monotonic() + harness.timeout(5)
    while seat_state(c, event_id, "FLOOR-B-5")[0] != "allocated" and time.monotonic() < deadline:
        time.sleep(0.05)
    check_equal(seat_state(c, event_id, "FLOOR-B-5")[0], "allocated", "after expiry")
    check_equal(expect(c.get("/v1/holds/%s" % held["reservation_id"]), 200)["status"], "expired",
                "the hold")


def test_release(server):
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3"],
                           "pools": {"GA": 4}})
    u = user()
    held = hold(c, event_id, u, ["FLOOR-A-1"], {"GA": 3}, allocation="amex")
    release_allocation(c, uid("none"), "amex", status=404, code="event_not_found")
    release_allocation(c, event_id, "nope", status=404, code="allocation_not_found")
    expect(c.post("/v1/events/%s/allocations/amex/release" % event_id, {"seats": ["FLOOR-A-9"]}),
           400, "invalid_request")
    expect(c.post("/v1/events/%s/allocations/amex/release" % event_id, {"pools": {"GA": 5}}), 409,
           "insufficient_quantity")
    # Part of it: a free seat and a free unit go back on sale at once.
    part = release_allocation(c, event_id, "amex", {"seats": ["FLOOR-A-2"], "pools": {"GA": 1}})
    check_equal(sorted(part["seats"]), ["FLOOR-A-1", "FLOOR-A-3"], "the seats kept")
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "available", "released seat")
    check_equal(pool_of(get_event(c, event_id), "GA")["available"], 2, "a unit back on sale")
    hold(c, event_id, user(), ["FLOOR-A-2"])
    # All of it: the held seat and units stay the allocation's until they come free.
    whole = release_allocation(c, event_id, "amex")
    check_equal(whole["seats"], ["FLOOR-A-1"], "the held seat still listed")
    check_equal(whole["released"], {"seats": ["FLOOR-A-1"], "pools": {"GA": 3}}, "released")
    check_equal(counts(whole), (0, 4, 0), "only the held ones")
    check_equal(seat_state(c, event_id, "FLOOR-A-3")[0], "available", "the free seat")
    order = commit(c, held["reservation_id"], u)
    check_equal(counts(get_allocation(c, event_id, "amex")), (0, 0, 4), "sold, still its own")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u}), 200)
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "available", "came free for the public")
    check_equal(pool_of(get_event(c, event_id), "GA")["available"], 5, "every unit on sale")
    after = get_allocation(c, event_id, "amex")
    check_equal((after["seats"], counts(after)), ([], (0, 0, 0)), "nothing left")


def test_bookings_of_the_allocation(server):
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-7"], "pools": {"GA": 1}})
    version = seat_state(c, event_id, "FLOOR-A-7")[1]
    body = {"user_id": user(), "seats": [{"id": "FLOOR-A-7", "version": version}]}
    expect(c.post("/v1/events/%s/bookings" % event_id, body), 409, "version_conflict")
    body["allocation"] = "amex"
    body["pools"] = {"GA": 1}
    order = expect(c.post("/v1/events/%s/bookings" % event_id, body), 201)
    check_equal(order["allocation"], "amex", "the booking's allocation")
    check_equal(counts(get_allocation(c, event_id, "amex")), (0, 0, 2), "sold")


def test_list_and_pages(server):
    c = server.client()
    event_id = event(c)
    for n in range(3):
        allocate(c, event_id, {"id": "a%d" % n, "seats": ["BALC-A-%d" % (n + 1)]})
    listed = expect(c.get("/v1/events/%s/allocations" % event_id), 200)
    check_equal([a["id"] for a in listed["allocations"]], ["a0", "a1", "a2"], "creation order")
    check_equal(listed["next"], None, "one page")
    page = expect(c.get("/v1/events/%s/allocations?limit=2" % event_id), 200)
    check_equal(([a["id"] for a in page["allocations"]], page["next"]), (["a0", "a1"], "a1"),
                "page 1")
    page = expect(c.get("/v1/events/%s/allocations?limit=2&after=a1" % event_id), 200)
    check_equal(([a["id"] for a in page["allocations"]], page["next"]), (["a2"], None), "page 2")
    expect(c.get("/v1/events/%s/allocations?after=zz" % event_id), 400, "invalid_request")
    expect(c.get("/v1/events/%s/allocations/zz" % event_id), 404, "allocation_not_found")
    expect(c.get("/v1/events/%s/allocations" % uid("none")), 404, "event_not_found")


def test_stream_and_history(server):
    import test_streams
    c = server.client()
    event_id = event(c)
    stream = test_streams._stream(server, event_id)
    stream.open()
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1"], "pools": {"GA": 2}})
    got = [stream.next_json() for _ in range(2)]
    check_equal(sorted(got, key=lambda e: e[0]),
                [("pool", {"id": "GA", "available": 3, "held": 0, "sold": 0, "allocated": 2}),
                 ("seat", {"id": "FLOOR-A-1", "status": "allocated", "version": 2})],
                "the stream's changes")
    stream.close()
    u = user()
    held = hold(c, event_id, u, ["FLOOR-A-1"], allocation="amex")
    release_allocation(c, event_id, "amex")
    entries = expect(c.get("/v1/events/%s/history?limit=100" % event_id), 200)["history"]
    types = [e["type"] for e in entries]
    check_equal(types, ["allocation", "hold", "allocation_release"], "the entries")
    check_equal((entries[0]["allocation"], entries[0]["seats"], entries[0]["pools"]),
                ("amex", ["FLOOR-A-1"], {"GA": 2}), "the allocation's entry")
    check_equal((entries[1]["allocation"], entries[1]["reservation_id"]),
                ("amex", held["reservation_id"]), "the hold's entry")
    check_equal((entries[2]["released_seats"], entries[2]["pools"]), (["FLOOR-A-1"], {"GA": 0}),
                "the release's entry")


def allocations_survive(kill):
    server = Server().start()
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3"],
                           "pools": {"GA": 3}})
    u = user()
    held = hold(c, event_id, u, ["FLOOR-A-1"], {"GA": 1}, allocation="amex")
    sold = commit(c, hold(c, event_id, u, ["FLOOR-A-2"], {"GA": 1},
                          allocation="amex")["reservation_id"], u)
    release_allocation(c, event_id, "amex", {"seats": ["FLOOR-A-2"], "pools": {"GA": 1}})
    before = (get_event(c, event_id), get_allocation(c, event_id, "amex"))
    c.close()
    server = server.cycle(kill)
    c = server.client()
    after = (get_event(c, event_id), get_allocation(c, event_id, "amex"))
    check_equal(after[0]["counts"], before[0]["counts"], "the counts after restart")
    check_equal(after[0]["pools"], before[0]["pools"], "the pools after restart")
    check_equal(after[1], before[1], "the allocation after restart")
    check_equal(after[0], before[0], "the event after restart")
    check_equal(seat_state(c, event_id, "FLOOR-A-3")[0], "allocated", "the free seat")
    # What was released while sold comes free for the public; the held seat goes back.
    expect(c.post("/v1/orders/%s/cancel" % sold["order_id"], {"user_id": u}), 200)
    check_equal(seat_state(c, event_id, "FLOOR-A-2")[0], "available", "released, cancelled")
    release(c, held["reservation_id"], u)
    check_equal(seat_state(c, event_id, "FLOOR-A-1")[0], "allocated", "released hold")
    check_equal(counts(get_allocation(c, event_id, "amex")), (4, 0, 0), "after the restart")
    server.stop()


def test_allocations_survive_a_restart():
    allocations_survive(False)


def test_allocations_survive_kill_9():
    allocations_survive(True)


def test_allocations_need_the_api_key():
    key = "allocations-api-key-0123456789"
    server = Server(api_key=key).start()
    c = server.client()
    event_id = event(c)
    anonymous = server.client(api_key=None)
    expect(anonymous.post("/v1/events/%s/allocations" % event_id,
                          {"id": "amex", "seats": ["FLOOR-A-1"]}), 401, "unauthorized")
    expect(anonymous.get("/v1/events/%s/allocations" % event_id), 401, "unauthorized")
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1"]})
    server.stop()


def test_holdfast_check_knows_allocations():
    import os
    import shutil
    import sqlite3
    import subprocess
    harness.skip_on_postgres("holdfast check reads the SQLite file (holdfast.db)")
    server = Server().start()
    c = server.client()
    event_id = event(c)
    allocate(c, event_id, {"id": "amex", "seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {"GA": 2}})
    u = user()
    commit(c, hold(c, event_id, u, ["FLOOR-A-1"], {"GA": 1}, allocation="amex")["reservation_id"],
           u)
    release_allocation(c, event_id, "amex", {"seats": ["FLOOR-A-2"]})
    c.close()
    server.stop()

    def check_of(data_dir):
        done = subprocess.run([harness.BINARY, "check", "--data", data_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=harness.timeout(60))
        return done.returncode, done.stderr.decode()

    check_equal(check_of(server.data_dir), (0, ""), "check of a store with an allocation")
    broken = {
        "seats_in_one_allocation":
            "INSERT INTO allocations(event_id, id, items, created_at, updated_at) VALUES"
            " ('%s', 'other', '{\"seats\":[\"FLOOR-A-1\"],\"released_seats\":[],\"pools\":{}}',"
            " 1, 1);" % event_id,
        "allocated_seats_not_public":
            "UPDATE orders SET items = json_remove(items, '$.allocation');",
        "allocations_named_exist":
            "UPDATE holds SET items = json_set(items, '$.allocation', 'gone');",
    }
    for name, statements in broken.items():
        copy = harness.make_temp_dir()
        shutil.copy(os.path.join(server.data_dir, "holdfast.db"), copy)
        database = sqlite3.connect(os.path.join(copy, "holdfast.db"))
        database.executescript(statements)
        database.commit()
        database.close()
        code, err = check_of(copy)
        check(code == 1 and name in err, "%s: exit %d, %r" % (name, code, err))


def seat_versions(c, event_id):
    page = expect(c.get("/v1/events/%s/seats?limit=10000" % event_id), 200, what="the seats")
    return {seat["id"]: (seat["status"], seat["version"]) for seat in page["seats"]}


def versions_survive(kill):
    """Seat versions after a restart are those before it: an allocated seat (set aside once),
    one released free (set aside, released), one released while held that came free later,
    one held from the allocation and lapsed back (versions are counted at the load, not
    stored, so each of these changes must be counted again)."""
    server = Server().start()
    c = server.client()
    event_id = event(c)
    seats = ["FLOOR-A-%d" % n for n in range(1, 6)]
    allocate(c, event_id, {"id": "partner", "seats": seats})
    u = user()
    held = hold(c, event_id, u, ["FLOOR-A-3"], allocation="partner")
    lapsing = hold(c, event_id, u, ["FLOOR-A-4"], allocation="partner")
    release(c, lapsing["reservation_id"], u)
    release_allocation(c, event_id, "partner", {"seats": ["FLOOR-A-2", "FLOOR-A-3"]})
    release(c, held["reservation_id"], u)
    release_allocation(c, event_id, "partner", {"seats": ["FLOOR-A-5"]})
    allocate(c, event_id, {"id": "again", "seats": ["FLOOR-A-5"]})
    before = seat_versions(c, event_id)
    check_equal(before["FLOOR-A-2"], ("available", 3), "released free: set aside, released")
    check_equal(before["FLOOR-A-3"], ("available", 4), "released held, then freed")
    check_equal(before["FLOOR-A-5"][0], "allocated", "set aside again")
    c.close()
    server = server.cycle(kill)
    c = server.client()
    check_equal(seat_versions(c, event_id), before, "every seat's status and version")
    c.close()
    server.stop()


def test_seat_versions_survive_a_restart():
    versions_survive(False)


def test_seat_versions_survive_kill_9():
    versions_survive(True)
