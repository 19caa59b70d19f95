"""Dispatch (API.md section 8): drivers, rides and exclusive timed offers end to end; bad input
with the field named; 100 rides created at once over 100 drivers (no driver two offers, no
ride two drivers); offers that time out with no traffic; duplicate and late accepts; decline,
cancel and searching rides; Idempotency-Key; restart and kill -9 in the middle of offers."""

import os
import sqlite3
import time

import harness

from harness import Server, check, check_equal, expect, parse_time, run_threads, uid

# Midtown Manhattan; 0.0001 degrees of latitude is 11 m.
LAT, LNG = 40.75, -73.99
STEP = 0.0001


def put_driver(c, fleet, driver, lat=LAT, lng=LNG, **fields):
    body = dict({"lat": lat, "lng": lng}, **fields)
    return expect(c.request("PUT", "/v1/fleets/%s/drivers/%s" % (fleet, driver), body=body), 200)


def create_ride(c, fleet, ride=None, lat=LAT, lng=LNG, status=201, **fields):
    body = dict({"ride_id": ride or uid("r"), "rider_id": "rider-1", "lat": lat, "lng": lng},
                **fields)
    return expect(c.post("/v1/fleets/%s/rides" % fleet, body), status)


def get_ride(c, ride_id):
    return expect(c.get("/v1/rides/%s" % ride_id), 200)


def accept(c, ride_id, driver, status=200, code=None):
    return expect(c.post("/v1/rides/%s/accept" % ride_id, {"driver_id": driver}), status, code)


def decline(c, ride_id, driver, status=200, code=None):
    return expect(c.post("/v1/rides/%s/decline" % ride_id, {"driver_id": driver}), status, code)


def offered_to(ride):
    return ride["offer"]["driver_id"] if ride["offer"] else None


def fleet_of_drivers(c, count, spacing=STEP, prefix="d"):
    """A new fleet with count drivers north of the centre, d0 nearest."""
    fleet = uid("f")
    for i in range(count):
        put_driver(c, fleet, "%s%03d" % (prefix, i), lat=LAT + (i + 1) * spacing)
    return fleet


def test_end_to_end(server):
    c = server.client()
    fleet = uid("f")
    driver = put_driver(c, fleet, "d7", rating=4.9)
    check_equal(driver, {"fleet": fleet, "driver_id": "d7", "lat": LAT, "lng": LNG,
                         "available": True, "rating": 4.9, "offer": None,
                         "assigned_ride_id": None}, "the driver's answer")
    put_driver(c, fleet, "d8", lat=LAT + 0.01)
    ride_id = uid("r")
    ride = create_ride(c, fleet, ride_id, lat=LAT + 0.0036, radius_m=3000, offer_ttl_s=15)
    check_equal(ride["status"], "offered", "status")
    check_equal(ride["ride_id"], ride_id, "ride_id")
    check_equal(ride["fleet"], fleet, "fleet")
    check_equal(ride["driver_id"], None, "driver_id before acceptance")
    check_equal(offered_to(ride), "d7", "the nearest driver")
    check_equal(ride["offer"]["distance_m"], 400, "distance in whole metres")
    expires = parse_time(ride["offer"]["expires_at"])
    created = parse_time(ride["created_at"])
    check_equal(expires - created, 15000, "ms from creation to the offer's end")
    check_equal(get_ride(c, ride_id), ride, "GET answers what POST did")
    offer = expect(c.get("/v1/fleets/%s/drivers/d7" % fleet), 200)["offer"]
    check_equal(offer["ride_id"], ride_id, "the driver sees its offer")
    assigned = accept(c, ride_id, "d7")
    check_equal(assigned["status"], "assigned", "accepted")
    check_equal(assigned["driver_id"], "d7", "driver_id once assigned")
    check_equal(assigned["offer"], None, "no offer once assigned")
    check_equal(accept(c, ride_id, "d7"), assigned, "a repeated accept answers the same")
    accept(c, ride_id, "d8", 409, "not_offered")
    decline(c, ride_id, "d7", 409, "not_offered")
    # Defaults; an assigned driver is not offered again until it is available.
    other = create_ride(c, fleet)
    check_equal(other["radius_m"], 3000, "radius_m default")
    check_equal(other["offer_ttl_s"], 15, "offer_ttl_s default")
    check_equal(offered_to(other), "d8", "the assigned driver is skipped")
    driver = put_driver(c, fleet, "d7", available=True)
    check_equal(driver["assigned_ride_id"], None, "available again")


def test_bad_input(server):
    c = server.client()
    fleet = uid("f")
    path = "/v1/fleets/%s/drivers/d1" % fleet
    for body, field in [({"lat": 90.5, "lng": 0}, "lat"), ({"lat": -91, "lng": 0}, "lat"),
                        ({"lat": 0, "lng": 180.01}, "lng"), ({"lat": 0, "lng": -181}, "lng"),
                        ({"lat": "40", "lng": 0}, "lat"), ({"lng": 0}, "lat"),
                        ({"lat": 0}, "lng"), ({"lat": 0, "lng": 0, "rating": 5.5}, "rating"),
                        ({"lat": 0, "lng": 0, "rating": -1}, "rating"),
                        ({"lat": 0, "lng": 0, "available": "yes"}, "available")]:
        expect(c.request("PUT", path, body=body), 400, "invalid_request", field,
               what="PUT %r" % body)
    expect(c.request("PUT", "/v1/fleets/f-1/drivers/d1", body={"lat": 0, "lng": 0}), 400,
           "invalid_request", "fleet")
    expect(c.request("PUT", "/v1/fleets/f1/drivers/d-1", body={"lat": 0, "lng": 0}), 400,
           "invalid_request", "driver")
    expect(c.get("/v1/fleets/%s/drivers/d1" % fleet), 404, "fleet_not_found")
    # Edges are inside.
    put_driver(c, fleet, "d1", lat=90, lng=-180, rating=0)
    put_driver(c, fleet, "d1", lat=-90, lng=180, rating=5)
    create_ride(c, uid("nofleet"), status=404)
    expect(c.post("/v1/fleets/%s/rides" % uid("nofleet"),
                  {"ride_id": "r", "rider_id": "u", "lat": 0, "lng": 0}), 404, "fleet_not_found")
    base = {"ride_id": uid("r"), "rider_id": "u1", "lat": 0, "lng": 0}
    for change, field in [({"lat": 95}, "lat"), ({"lng": -200}, "lng"), ({"lat": None}, "lat"),
                          ({"radius_m": -5}, "radius_m"), ({"radius_m": 0}, "radius_m"),
                          ({"radius_m": 12.5}, "radius_m"), ({"radius_m": 50001}, "radius_m"),
                          ({"offer_ttl_s": -1}, "offer_ttl_s"), ({"offer_ttl_s": 0}, "offer_ttl_s"),
                          ({"offer_ttl_s": 601}, "offer_ttl_s"), ({"ride_id": "r-1"}, "ride_id"),
                          ({"ride_id": None}, "ride_id"), ({"rider_id": ""}, "rider_id")]:
        expect(c.post("/v1/fleets/%s/rides" % fleet, dict(base, **change)), 400,
               "invalid_request", field, what="ride %r" % change)
    missing = uid("r")
    expect(c.get("/v1/rides/%s" % missing), 404, "ride_not_found")
    expect(c.post("/v1/rides/%s/accept" % missing, {"driver_id": "d1"}), 404, "ride_not_found")
    expect(c.post("/v1/rides/%s/decline" % missing, {"driver_id": "d1"}), 404, "ride_not_found")
    expect(c.post("/v1/rides/%s/cancel" % missing), 404, "ride_not_found")
    ride = create_ride(c, fleet, lat=-90, lng=0)
    expect(c.post("/v1/rides/%s/accept" % ride["ride_id"], {}), 400, "invalid_request",
           "driver_id")
    expect(c.post("/v1/rides/%s/accept" % ride["ride_id"], {"driver_id": "a b"}), 400,
           "invalid_request", "driver_id")
    # Ride ids are unique across fleets.
    second = uid("f")
    put_driver(c, second, "d1")
    expect(c.post("/v1/fleets/%s/rides" % second, dict(base, ride_id=ride["ride_id"])), 409,
           "ride_exists")
    expect(c.post("/v1/fleets/%s/rides" % fleet, dict(base, ride_id=ride["ride_id"])), 409,
           "ride_exists")


def test_exclusive_with_100_rides_at_once(server):
    """100 rides created at once over 100 drivers, all in range: every ride offered, no driver
    two offers; then 100 accepts at once: no ride two drivers."""
    fleet = fleet_of_drivers(server.client(), 100)
    clients = [server.client() for _ in range(100)]
    ride_ids = [uid("r") for _ in range(100)]

    def create(i, barrier):
        barrier.wait()
        return create_ride(clients[i], fleet, ride_ids[i], radius_m=5000)

    rides = run_threads(100, create)
    drivers = [offered_to(r) for r in rides]
    check(all(d is not None for d in drivers), "every ride is offered")
    check_equal(len(set(drivers)), 100, "distinct drivers offered")
    c = server.client()
    for ride in rides:
        check_equal(get_ride(c, ride["ride_id"]), ride, "GET after the burst")

    def take(i, barrier):
        barrier.wait()
        # Every driver tries its own ride and its neighbour's: one wins each ride.
        own = accept(clients[i], ride_ids[i], drivers[i])
        other = clients[i].post("/v1/rides/%s/accept" % ride_ids[(i + 1) % 100],
                                {"driver_id": drivers[i]})
        return own, other.status

    results = run_threads(100, take)
    check(all(status == 409 for _, status in results), "no driver takes another's ride")
    assigned = [get_ride(c, ride_id) for ride_id in ride_ids]
    check(all(r["status"] == "assigned" for r in assigned), "every ride assigned")
    check_equal(len({r["driver_id"] for r in assigned}), 100, "distinct assigned drivers")
    # Nobody is free now: a new ride searches.
    check_equal(create_ride(c, fleet)["status"], "searching", "no free driver left")


def test_timeout_moves_on_with_no_traffic(server):
    """Offers of 2 s lapse by themselves: after 5 s without a request the ride has moved
    twice (a request would only have moved it once, from the first lapse on)."""
    c = server.client()
    fleet = fleet_of_drivers(c, 3)
    ride = create_ride(c, fleet, offer_ttl_s=2)
    check_equal(offered_to(ride), "d000", "first offer")
    c.close()
    time.sleep(5.0)
    c = server.client()
    moved = get_ride(c, ride["ride_id"])
    check_equal(offered_to(moved), "d002", "moved twice with no traffic")
    waited = (parse_time(moved["offer"]["expires_at"]) - parse_time(ride["created_at"])) / 1000
    check(6.0 <= waited <= 8.0, "each lapse moved within 1 s (third offer ends %.3f s in)" % waited)
    accept(c, ride["ride_id"], "d000", 410, "offer_expired")
    # A decline has no 410 in the contract (section 8): a lapsed offer is "no offer", 409.
    decline(c, ride["ride_id"], "d001", 409, "not_offered")
    accept(c, ride["ride_id"], "nobody", 409, "not_offered")
    time.sleep(2.0)
    lapsed = get_ride(c, ride["ride_id"])
    check_equal(lapsed["status"], "searching", "every driver lapsed: searching")
    check_equal(lapsed["offer"], None, "no offer while searching")
    # Late accepts, whatever happened since: 410.
    for driver in ("d000", "d001", "d002"):
        accept(c, ride["ride_id"], driver, 410, "offer_expired")
    # Timed-out drivers are not offered it again, even when they move.
    put_driver(c, fleet, "d000", lat=LAT + STEP / 2)
    check_equal(get_ride(c, ride["ride_id"])["status"], "searching", "not offered again")
    # A new driver is, at once.
    put_driver(c, fleet, "fresh", lat=LAT + 5 * STEP)
    check_equal(offered_to(get_ride(c, ride["ride_id"])), "fresh", "offered to a new driver")


def test_duplicate_and_late_accepts(server):
    c = server.client()
    fleet = fleet_of_drivers(c, 2)
    ride = create_ride(c, fleet)
    clients = [server.client() for _ in range(8)]

    def take(i, barrier):
        barrier.wait()
        return accept(clients[i], ride["ride_id"], "d000")

    answers = run_threads(8, take)
    check(all(a == answers[0] for a in answers), "concurrent repeats answer the same")
    check_equal(answers[0]["driver_id"], "d000", "assigned")
    accept(c, ride["ride_id"], "d001", 409, "not_offered")
    decline(c, ride["ride_id"], "d000", 409, "not_offered")


def test_decline_then_searching_then_available(server):
    c = server.client()
    fleet = fleet_of_drivers(c, 2)
    ride = create_ride(c, fleet)
    next_ride = decline(c, ride["ride_id"], "d000")
    check_equal(offered_to(next_ride), "d001", "declined: the next candidate")
    accept(c, ride["ride_id"], "d000", 409, "not_offered")
    searching = decline(c, ride["ride_id"], "d001")
    check_equal(searching["status"], "searching", "no candidate left")
    # Out of range: nothing; available in range: offered at once.
    put_driver(c, fleet, "late", lat=LAT + 0.1)
    check_equal(get_ride(c, ride["ride_id"])["status"], "searching", "out of range")
    put_driver(c, fleet, "late", available=False)
    put_driver(c, fleet, "late", available=True)
    driver = put_driver(c, fleet, "late", lat=LAT + STEP)
    check_equal(driver["offer"]["ride_id"], ride["ride_id"], "the PUT answers the offer it made")
    check_equal(offered_to(get_ride(c, ride["ride_id"])), "late", "offered to the new driver")


def test_cancel_frees_the_driver(server):
    c = server.client()
    fleet = fleet_of_drivers(c, 1)
    first = create_ride(c, fleet)
    waiting = create_ride(c, fleet)
    check_equal(waiting["status"], "searching", "one driver, two rides")
    cancelled = expect(c.post("/v1/rides/%s/cancel" % first["ride_id"]), 200)
    check_equal(cancelled["status"], "cancelled", "cancelled")
    check_equal(cancelled["offer"], None, "no offer once cancelled")
    check_equal(expect(c.post("/v1/rides/%s/cancel" % first["ride_id"]), 200), cancelled,
                "a repeated cancel")
    check_equal(offered_to(get_ride(c, waiting["ride_id"])), "d000", "the freed driver's offer")
    accept(c, first["ride_id"], "d000", 409, "not_offered")
    accept(c, waiting["ride_id"], "d000")
    third = create_ride(c, fleet)
    check_equal(third["status"], "searching", "the assigned driver is busy")
    expect(c.post("/v1/rides/%s/cancel" % waiting["ride_id"]), 200)
    check_equal(offered_to(get_ride(c, third["ride_id"])), "d000",
                "cancelling an assigned ride frees its driver")


def test_idempotency_key(server):
    c = server.client()
    fleet = fleet_of_drivers(c, 1)
    body = {"ride_id": uid("r"), "rider_id": "u1", "lat": LAT, "lng": LNG}
    key = {"Idempotency-Key": uid("key")}
    first = expect(c.post("/v1/fleets/%s/rides" % fleet, body, headers=key), 201)
    again = expect(c.post("/v1/fleets/%s/rides" % fleet, body, headers=key), 201)
    check_equal(again, first, "a repeat with the same key")
    expect(c.post("/v1/fleets/%s/rides" % fleet, dict(body, rider_id="u2"), headers=key), 422,
           "idempotency_key_reused")


def test_restart_and_kill_in_the_middle_of_offers():
    server = Server().start()
    c = server.client()
    fleet = fleet_of_drivers(c, 4)
    offered = create_ride(c, fleet, offer_ttl_s=120)           # d000
    assigned = create_ride(c, fleet)                           # d001
    accept(c, assigned["ride_id"], "d001")
    declined = create_ride(c, fleet, offer_ttl_s=120)          # d002
    declined = decline(c, declined["ride_id"], "d002")         # -> d003
    check_equal(offered_to(declined), "d003", "declined moves on")
    before = [get_ride(c, r["ride_id"]) for r in (offered, assigned, declined)]
    server.stop()
    server = server.restart()
    c = server.client()
    after = [get_ride(c, r["ride_id"]) for r in before]
    check_equal(after, before, "rides and offers after a restart")
    accept(c, declined["ride_id"], "d002", 409, "not_offered")
    # kill -9 right after an answer: it was durable. A 1 s offer lapses while the server is
    # down and moves on at start.
    put_driver(c, fleet, "d002", lat=LAT + 10 * STEP)
    expect(c.post("/v1/rides/%s/cancel" % offered["ride_id"]), 200)  # frees d000
    short = create_ride(c, fleet, offer_ttl_s=1)
    first = offered_to(short)
    check(first in ("d000", "d002"), "offered to a free driver: %r" % first)
    server.kill()
    time.sleep(1.5)
    server = server.restart()
    c = server.client()
    check_equal(get_ride(c, offered["ride_id"])["status"], "cancelled", "cancel survived kill -9")
    moved = get_ride(c, short["ride_id"])
    check(offered_to(moved) not in (None, first), "the lapsed offer moved on at start: %r" % moved)
    accept(c, short["ride_id"], first, 410, "offer_expired")
    check_equal(accept(c, short["ride_id"], offered_to(moved))["status"], "assigned",
                "the next driver accepts after the restart")
    server.stop()


def test_kill_during_a_burst_of_rides():
    """Rides acknowledged before a kill -9 survive it with their offers; no driver holds two."""
    server = Server().start()
    fleet = fleet_of_drivers(server.client(), 30)
    clients = [server.client(client_timeout=5) for _ in range(30)]
    ride_ids = [uid("r") for _ in range(30)]

    def create(i, barrier):
        barrier.wait()
        if i == 29:
            time.sleep(0.01)
            server.kill()
            return None
        try:
            response = clients[i].post("/v1/fleets/%s/rides" % fleet,
                                       {"ride_id": ride_ids[i], "rider_id": "u", "lat": LAT,
                                        "lng": LNG})
            return response.json if response.status == 201 else None
        except Exception:
            return None

    answers = run_threads(30, create)
    server = server.restart()
    c = server.client()
    holders = {}
    for ride_id, answer in zip(ride_ids, answers):
        response = c.get("/v1/rides/%s" % ride_id)
        if answer is not None:
            check_equal(expect(response, 200), answer, "an acknowledged ride after kill -9")
        if response.status == 200 and response.json["offer"]:
            driver = response.json["offer"]["driver_id"]
            check(driver not in holders, "driver %s holds two offers" % driver)
            holders[driver] = ride_id
    server.stop()


def test_a_version_5_store_is_migrated():
    """A store of schema version 5 (before dispatch) gains the tables of dispatch at open."""
    harness.skip_on_postgres("the test writes an old SQLite file (holdfast.db) and checks its migration")
    server = Server().start()
    c = server.client()
    fleet = fleet_of_drivers(c, 1)
    server.stop()
    path = os.path.join(server.data_dir, "holdfast.db")
    database = sqlite3.connect(path)
    database.execute("DROP TABLE drivers")
    database.execute("DROP TABLE rides")
    database.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    database.commit()
    database.close()
    server = server.restart()
    c = server.client()
    expect(c.post("/v1/fleets/%s/rides" % fleet, {"ride_id": uid("r"), "rider_id": "u", "lat": 0,
                                                   "lng": 0}), 404, "fleet_not_found")
    fleet = fleet_of_drivers(c, 1)
    ride = create_ride(c, fleet)
    check_equal(offered_to(ride), "d000", "dispatch works after the migration")
    server.stop()
    database = sqlite3.connect(path)
    version = database.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    rides = database.execute("SELECT id, status, offer_driver_id FROM rides").fetchall()
    database.close()
    check_equal(version, ("13",), "the schema version after the migration")
    check_equal(rides, [(ride["ride_id"], "offered", "d000")], "the rides table")


def test_searching_ride_offered_at_start():
    """A searching ride and a driver it fits, both as stored (a driver's soft row newer than
    the rides'): the ride is offered when the server starts."""
    server = Server().start()
    c = server.client()
    fleet = uid("f")
    put_driver(c, fleet, "d1", available=False)
    ride = create_ride(c, fleet)
    check_equal(ride["status"], "searching", "no free driver")
    server.stop()
    if harness.STORE_URL:
        harness.postgres_rows(server.data_dir,
                              "UPDATE drivers SET available = 1 WHERE driver_id = 'd1'")
    else:
        database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
        database.execute("UPDATE drivers SET available = 1 WHERE driver_id = 'd1'")
        database.commit()
        database.close()
    server = server.restart()
    c = server.client()
    check_equal(offered_to(get_ride(c, ride["ride_id"])), "d1", "offered at start")
    server.stop()


# ---- issue 27: complete, lists, one driver, delete, finished rides forgotten ----

def complete(c, ride_id, driver, status=200, code=None):
    return expect(c.post("/v1/rides/%s/complete" % ride_id, {"driver_id": driver}), status, code)


def rides_counted(server):
    """holdfast_rides{status} from GET /metrics, as a dict."""
    counts = {}
    for line in server.client().get("/metrics").body.decode().splitlines():
        if line.startswith('holdfast_rides{status="'):
            labels, value = line.split(" ")
            counts[labels[len('holdfast_rides{status="'):-2]] = float(value)
    return counts


def test_complete(fresh):
    """Only the assigned driver completes a ride (409 not_assigned for another driver, an
    unknown one, and for an offered, searching or cancelled ride); a repeat answers the same;
    the driver is available again and gets the next ride's offer; a completed ride cannot be
    cancelled (409 ride_finished); holdfast_rides counts it."""
    c = fresh.client()
    fleet = fleet_of_drivers(c, 2)
    ride = create_ride(c, fleet)
    check_equal(offered_to(ride), "d000", "offered to the nearest")
    complete(c, ride["ride_id"], "d000", 409, "not_assigned")          # offered, not assigned
    accept(c, ride["ride_id"], "d000")
    complete(c, ride["ride_id"], "d001", 409, "not_assigned")          # another driver
    complete(c, ride["ride_id"], "nobody", 409, "not_assigned")        # no such driver
    done = complete(c, ride["ride_id"], "d000")
    check_equal((done["status"], done["driver_id"], done["offer"]), ("completed", "d000", None),
                "completed by its driver")
    check_equal(complete(c, ride["ride_id"], "d000"), done, "a repeat answers the same")
    check_equal(get_ride(c, ride["ride_id"]), done, "GET answers the completed ride")
    driver = expect(c.get("/v1/fleets/%s/drivers/d000" % fleet), 200)
    check_equal((driver["available"], driver["assigned_ride_id"], driver["offer"]),
                (True, None, None), "the driver is available again")
    check_equal(offered_to(create_ride(c, fleet)), "d000", "and is offered the next ride")
    expect(c.post("/v1/rides/%s/cancel" % ride["ride_id"]), 409, "ride_finished")
    check_equal(get_ride(c, ride["ride_id"])["status"], "completed", "still completed")
    cancelled = create_ride(c, fleet)                                  # to d001
    expect(c.post("/v1/rides/%s/cancel" % cancelled["ride_id"]), 200)
    complete(c, cancelled["ride_id"], "d001", 409, "not_assigned")     # cancelled
    put_driver(c, fleet, "d001", available=False)
    searching = create_ride(c, fleet)
    check_equal(searching["status"], "searching", "no free driver")
    complete(c, searching["ride_id"], "d000", 409, "not_assigned")     # searching
    complete(c, uid("r"), "d000", 404, "ride_not_found")
    expect(c.post("/v1/rides/%s/complete" % ride["ride_id"], {}), 400, "invalid_request",
           "driver_id")
    counts = rides_counted(fresh)
    check_equal((counts.get("completed"), counts.get("cancelled")), (1.0, 1.0),
                "holdfast_rides counts the completed ride")


def ride_ids(page):
    return [ride["ride_id"] for ride in page["rides"]]


def test_list_rides_by_status_with_paging(server):
    """GET /v1/fleets/{fleet}/rides: in creation order, filtered by each status, paged by
    after/limit/next; bad values answer 400 with the field; an unknown fleet 404."""
    c = server.client()
    fleet = fleet_of_drivers(c, 3)
    made = [uid("r%d_" % i) for i in range(6)]
    create_ride(c, fleet, made[0])                     # d000
    accept(c, made[0], "d000")
    complete(c, made[0], "d000")                       # completed, d000 free
    create_ride(c, fleet, made[1])                     # offered to d000
    create_ride(c, fleet, made[2])                     # offered to d001
    expect(c.post("/v1/rides/%s/cancel" % made[2]), 200)  # cancelled, d001 free
    create_ride(c, fleet, made[3])                     # d001
    accept(c, made[3], "d001")                         # assigned
    create_ride(c, fleet, made[4])                     # offered to d002
    create_ride(c, fleet, made[5])                     # searching
    path = "/v1/fleets/%s/rides" % fleet
    everything = expect(c.get(path), 200)
    check_equal(ride_ids(everything), made, "every ride, in creation order")
    check_equal(everything["next"], None, "one page")
    check_equal([r["status"] for r in everything["rides"]],
                ["completed", "offered", "cancelled", "assigned", "offered", "searching"],
                "their statuses")
    check_equal(everything["rides"][3], get_ride(c, made[3]), "a listed ride is the ride")
    pages, after = [], None
    while True:
        page = expect(c.get(path + "?limit=2" + ("&after=" + after if after else "")), 200)
        pages.append(ride_ids(page))
        after = page["next"]
        if after is None:
            break
        check_equal(after, pages[-1][-1], "next is the last id of the page")
    check_equal(pages, [made[0:2], made[2:4], made[4:6]], "pages of 2")
    for status, expected in (("completed", [made[0]]), ("offered", [made[1], made[4]]),
                             ("cancelled", [made[2]]), ("assigned", [made[3]]),
                             ("searching", [made[5]])):
        check_equal(ride_ids(expect(c.get(path + "?status=" + status), 200)), expected, status)
    first = expect(c.get(path + "?status=offered&limit=1"), 200)
    check_equal((ride_ids(first), first["next"]), ([made[1]], made[1]), "offered, first page")
    second = expect(c.get(path + "?status=offered&limit=1&after=" + made[1]), 200)
    check_equal((ride_ids(second), second["next"]), ([made[4]], None), "offered, last page")
    expect(c.get(path + "?status=done"), 400, "invalid_request", "status")
    for limit in ("0", "1001", "x", ""):
        expect(c.get(path + "?limit=" + limit), 400, "invalid_request", "limit")
    expect(c.get(path + "?after=" + uid("r")), 400, "invalid_request", "after")
    expect(c.get("/v1/fleets/%s/rides" % uid("f")), 404, "fleet_not_found")


def driver_ids(page):
    return [driver["driver_id"] for driver in page["drivers"]]


def test_list_drivers_by_status_with_paging(server):
    """GET /v1/fleets/{fleet}/drivers: in id order whatever order they reported in, filtered
    by each status, paged by after/limit/next; bad values answer 400 with the field."""
    c = server.client()
    fleet = uid("f")
    # da nearest, then db, dc; dd unavailable. Reported in another order than their ids'.
    put_driver(c, fleet, "dc", lat=LAT + 3 * STEP)
    put_driver(c, fleet, "dd", lat=LAT + 4 * STEP, available=False)
    put_driver(c, fleet, "da", lat=LAT + STEP)
    put_driver(c, fleet, "db", lat=LAT + 2 * STEP)
    first = create_ride(c, fleet)
    accept(c, first["ride_id"], "da")                  # da assigned
    check_equal(offered_to(create_ride(c, fleet, offer_ttl_s=120)), "db", "db offered")
    path = "/v1/fleets/%s/drivers" % fleet
    everything = expect(c.get(path), 200)
    check_equal((driver_ids(everything), everything["next"]), (["da", "db", "dc", "dd"], None),
                "every driver, in id order")
    check_equal(everything["drivers"][2], expect(c.get(path + "/dc"), 200),
                "a listed driver is the driver")
    page = expect(c.get(path + "?limit=2"), 200)
    check_equal((driver_ids(page), page["next"]), (["da", "db"], "db"), "first page")
    page = expect(c.get(path + "?limit=2&after=db"), 200)
    check_equal((driver_ids(page), page["next"]), (["dc", "dd"], None), "last page")
    page = expect(c.get(path + "?after=dbz"), 200)
    check_equal(driver_ids(page), ["dc", "dd"], "after need not name a driver")
    for status, expected in (("available", ["dc"]), ("offered", ["db"]), ("assigned", ["da"]),
                             ("unavailable", ["dd"])):
        check_equal(driver_ids(expect(c.get(path + "?status=" + status), 200)), expected, status)
    expect(c.get(path + "?status=busy"), 400, "invalid_request", "status")
    expect(c.get(path + "?limit=1001"), 400, "invalid_request", "limit")
    expect(c.get(path + "?after=d-1"), 400, "invalid_request", "after")
    expect(c.get("/v1/fleets/%s/drivers" % uid("f")), 404, "fleet_not_found")


def test_get_driver_and_unknown_driver(server):
    """GET one driver; an unknown driver of a known fleet answers 404 driver_not_found on every
    route that names it in its path (an unknown fleet: fleet_not_found)."""
    c = server.client()
    fleet = uid("f")
    made = put_driver(c, fleet, "d1", rating=4.5)
    check_equal(expect(c.get("/v1/fleets/%s/drivers/d1" % fleet), 200), made, "GET the driver")
    expect(c.get("/v1/fleets/%s/drivers/d2" % fleet), 404, "driver_not_found")
    expect(c.request("DELETE", "/v1/fleets/%s/drivers/d2" % fleet), 404, "driver_not_found")
    expect(c.get("/v1/fleets/%s/drivers/d1" % uid("f")), 404, "fleet_not_found")
    expect(c.request("DELETE", "/v1/fleets/%s/drivers/d1" % uid("f")), 404, "fleet_not_found")


def test_delete_driver():
    """DELETE a driver: its open offer moves on to the next candidate, an assigned driver is
    409 driver_busy; the deleted driver is gone (404, not listed, never offered), also after a
    restart; PUT again, it is a new driver."""
    server = Server().start()
    c = server.client()
    fleet = fleet_of_drivers(c, 3)
    assigned = create_ride(c, fleet)                   # d000
    accept(c, assigned["ride_id"], "d000")
    expect(c.request("DELETE", "/v1/fleets/%s/drivers/d000" % fleet), 409, "driver_busy")
    ride = create_ride(c, fleet, offer_ttl_s=120)
    check_equal(offered_to(ride), "d001", "offered to d001")
    gone = expect(c.request("DELETE", "/v1/fleets/%s/drivers/d001" % fleet), 200)
    check_equal(gone, {"fleet": fleet, "driver_id": "d001", "deleted": True}, "the answer")
    moved = get_ride(c, ride["ride_id"])
    check_equal((moved["status"], offered_to(moved)), ("offered", "d002"),
                "the offer moved on to the next candidate")
    accept(c, ride["ride_id"], "d001", 409, "not_offered")
    expect(c.get("/v1/fleets/%s/drivers/d001" % fleet), 404, "driver_not_found")
    expect(c.request("DELETE", "/v1/fleets/%s/drivers/d001" % fleet), 404, "driver_not_found")
    listed = expect(c.get("/v1/fleets/%s/drivers" % fleet), 200)
    check_equal(driver_ids(listed), ["d000", "d002"], "not listed")
    server.stop()
    server = server.restart()
    c = server.client()
    expect(c.get("/v1/fleets/%s/drivers/d001" % fleet), 404, "driver_not_found")
    check_equal(driver_ids(expect(c.get("/v1/fleets/%s/drivers" % fleet), 200)),
                ["d000", "d002"], "still gone after a restart")
    check_equal(offered_to(get_ride(c, ride["ride_id"])), "d002", "the offer as it moved")
    again = put_driver(c, fleet, "d001", lat=LAT + 2 * STEP)
    check_equal((again["available"], again["offer"], again["assigned_ride_id"]),
                (True, None, None), "PUT again: a new driver")
    expect(c.post("/v1/rides/%s/cancel" % assigned["ride_id"]), 200)
    expect(c.request("DELETE", "/v1/fleets/%s/drivers/d000" % fleet), 200)
    server.stop()


def test_finished_rides_forgotten_and_read_back():
    """With --finished-rides 2, five finished rides (three completed, two cancelled): each is
    still answered, from the store once forgotten, before and after a restart; its id stays
    taken; a forgotten completed ride still refuses a cancel and answers a repeated complete;
    lists by status still show them all; holdfast_rides still counts them."""
    server = Server(extra_args=["--finished-rides", "2"]).start()
    c = server.client()
    fleet = fleet_of_drivers(c, 1)
    finished = []
    for number in range(5):
        ride = create_ride(c, fleet)
        if number % 2 == 0:
            accept(c, ride["ride_id"], "d000")
            finished.append(complete(c, ride["ride_id"], "d000"))
        else:
            finished.append(expect(c.post("/v1/rides/%s/cancel" % ride["ride_id"]), 200))
    live = create_ride(c, fleet)                       # offered to d000 (in progress)
    counts = rides_counted(server)
    for round_ in ("before a restart", "after a restart"):
        for ride in finished:
            check_equal(get_ride(c, ride["ride_id"]), ride, "GET %s %s" % (ride["ride_id"], round_))
        first = finished[0]["ride_id"]
        create_ride(c, fleet, first, status=409)
        expect(c.post("/v1/rides/%s/cancel" % first), 409, "ride_finished")
        check_equal(complete(c, first, "d000"), finished[0], "a repeated complete " + round_)
        check_equal(expect(c.post("/v1/rides/%s/cancel" % finished[1]["ride_id"]), 200),
                    finished[1], "a repeated cancel " + round_)
        path = "/v1/fleets/%s/rides" % fleet
        check_equal(ride_ids(expect(c.get(path + "?status=completed"), 200)),
                    [finished[i]["ride_id"] for i in (0, 2, 4)], "completed rides " + round_)
        check_equal(ride_ids(expect(c.get(path + "?status=cancelled&limit=1"), 200)),
                    [finished[1]["ride_id"]], "cancelled rides " + round_)
        check_equal(ride_ids(expect(c.get(path), 200)),
                    [r["ride_id"] for r in finished] + [live["ride_id"]], "every ride " + round_)
        check_equal(rides_counted(server), counts, "holdfast_rides " + round_)
        check_equal(counts.get("completed"), 3.0, "completed rides counted")
        server.stop()
        server = server.restart()
        c = server.client()
    server.stop()
