"""Expiry: lazy at the boundary and by the background timer (API.md section 3)."""

import time

from harness import (check, check_equal, create_event, expect, get_event, get_hold, hold,
                     post_hold, seat_state, uid, user)

WEIGHT = 3.0


def _event(c, **fields):
    event_id = uid("exp")
    create_event(c, event_id, **fields)
    return event_id


def test_background_expiry(server):
    c = server.client()
    event_id = _event(c)
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-1", "BALC-A-2"], {"GA": 2}, ttl_s=1)
    hold_id = h["reservation_id"]
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 48, "held": 2, "sold": 0}, "while held")
    c.close()
    # No traffic at all while it lapses: only the server's timer can release it.
    time.sleep(1.6)
    c = server.client()
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 50, "held": 0, "sold": 0}, "after expiry")
    check_equal([s["counts"] for s in summary["sections"]],
                [{"available": 40, "held": 0, "sold": 0}, {"available": 10, "held": 0, "sold": 0}],
                "section counts after expiry")
    pool = summary["pools"][0]
    check_equal((pool["available"], pool["held"], pool["sold"]), (5, 0, 0), "pool")
    again = get_hold(c, hold_id)
    check_equal((again["status"], again["expires_in_ms"]), ("expired", 0), "hold")
    check_equal(again["expires_at"], h["expires_at"], "expires_at unchanged")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "seat after expiry")
    page = expect(c.get("/v1/events/%s/seats?status=held" % event_id), 200)
    check_equal(page["seats"], [], "no held seat")
    expect(c.post("/v1/holds/%s/commit" % hold_id, {"user_id": u1, "payment_ref": "pi_x"}),
           410, "hold_expired")
    expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": u1, "ttl_s": 60}), 410,
           "hold_expired")
    released = expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": u1}), 200)
    check_equal((released["status"], released["expires_in_ms"]), ("expired", 0),
                "release of an expired hold")
    again = expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": u1}), 200)
    check_equal(again, released, "repeated release")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3),
                "the failed commit and the releases changed nothing")
    # The seats are free for the next buyer.
    hold(c, event_id, user(), ["FLOOR-A-1", "BALC-A-2"], {"GA": 5})


def test_boundary_commit(server):
    c = server.client()
    event_id = _event(c)
    for n in range(1, 4):
        u1 = user()
        h = hold(c, event_id, u1, ["FLOOR-A-%d" % n], {"GA": 1}, ttl_s=0.3)
        time.sleep(0.35)
        expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                      {"user_id": u1, "payment_ref": "pi_late"}), 410, "hold_expired",
               what="commit 50 ms after expiry (#%d)" % n)
        check_equal(get_hold(c, h["reservation_id"])["status"], "expired", "status")
    # Extend and release at the boundary see the lapse too.
    u1 = user()
    h = hold(c, event_id, u1, ["FLOOR-A-9"], ttl_s=0.3)
    time.sleep(0.35)
    expect(c.post("/v1/holds/%s/extend" % h["reservation_id"], {"user_id": u1, "ttl_s": 60}),
           410, "hold_expired", what="extend 50 ms after expiry")
    h = hold(c, event_id, u1, ["FLOOR-A-10"], ttl_s=0.3)
    time.sleep(0.35)
    released = expect(c.post("/v1/holds/%s/release" % h["reservation_id"], {"user_id": u1}),
                      200)
    check_equal(released["status"], "expired", "release 50 ms after expiry")
    summary = get_event(c, event_id)
    check_equal(summary["counts"]["sold"], 0, "nothing sold")
    check_equal(summary["counts"]["held"], 0, "nothing held")
    check_equal(summary["pools"][0]["sold"], 0, "no unit sold")


def test_boundary_reads_and_takeover(server):
    c = server.client()
    event_id = _event(c)
    # Read the hold first.
    h = hold(c, event_id, user(), ["FLOOR-B-1"], ttl_s=0.3)
    time.sleep(0.35)
    again = get_hold(c, h["reservation_id"])
    check_equal((again["status"], again["expires_in_ms"]), ("expired", 0), "hold read")
    # Read the seat first.
    h = hold(c, event_id, user(), ["FLOOR-B-2"], ttl_s=0.3)
    time.sleep(0.35)
    check_equal(seat_state(c, event_id, "FLOOR-B-2")[0], "available", "seat read")
    # Read the event first.
    h = hold(c, event_id, user(), ["FLOOR-B-3"], {"GA": 5}, ttl_s=0.3)
    time.sleep(0.35)
    summary = get_event(c, event_id)
    check_equal(summary["counts"]["held"], 0, "event read")
    check_equal(summary["pools"][0]["available"], 5, "pool read")
    # Another user takes the seat and every unit straight away.
    h = hold(c, event_id, user(), ["FLOOR-B-4"], {"GA": 5}, ttl_s=0.3)
    time.sleep(0.35)
    taker = hold(c, event_id, user(), ["FLOOR-B-4"], {"GA": 5})
    check_equal(taker["status"], "held", "takeover")
    check_equal(get_hold(c, h["reservation_id"])["status"], "expired", "the lapsed hold")


def test_expired_holds_do_not_count_for_the_limit(server):
    c = server.client()
    event_id = _event(c, max_seats_per_user=2)
    u1 = user()
    hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1}, ttl_s=0.3)
    expect(post_hold(c, event_id, u1, ["FLOOR-A-2"]), 429, "user_limit_exceeded")
    time.sleep(0.35)
    h = hold(c, event_id, u1, ["FLOOR-A-2", "FLOOR-A-3"])
    check_equal(len(h["seats"]), 2, "allowance back after expiry")


def test_many_expire_together(server):
    c = server.client()
    event_id = _event(c)
    ids = [hold(c, event_id, user(), ["FLOOR-A-%d" % n], ttl_s=0.6)["reservation_id"]
           for n in range(1, 21)]
    ids.append(hold(c, event_id, user(), ["FLOOR-B-1"], ttl_s=600)["reservation_id"])
    c.close()
    time.sleep(1.5)
    c = server.client()
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 49, "held": 1, "sold": 0}, "after expiry")
    statuses = [get_hold(c, i)["status"] for i in ids]
    check_equal(statuses, ["expired"] * 20 + ["held"], "statuses")
    check(all(seat_state(c, event_id, "FLOOR-A-%d" % n) == ("available", 3)
              for n in range(1, 21)), "every lapsed seat available at version 3")
