"""Durability: clean restart, kill -9, expiry while stopped, the data directory lock, idempotency
keys across restarts (API.md sections 0 and 1)."""

import json
import os
import signal
import threading
import time

from harness import (Server, all_seats, check, check_equal, commit, create_event, expect,
                     get_event, get_hold, hold, hold_body, make_temp_dir, parse_time, release,
                     seat_state, timeout, uid, user)


def _snapshot(c, event_ids, hold_ids, order_ids, users):
    """Everything the API shows about these objects, minus the clock-driven expires_in_ms."""
    state = {"events": expect(c.get("/v1/events?limit=1000"), 200)}
    for event_id in event_ids:
        state["event " + event_id] = get_event(c, event_id)
        state["seats " + event_id] = all_seats(c, event_id)
    countdowns = {}
    for hold_id in hold_ids:
        h = dict(get_hold(c, hold_id))
        countdowns[hold_id] = h.pop("expires_in_ms", None)
        state["hold " + hold_id] = h
    for order_id in order_ids:
        state["order " + order_id] = expect(c.get("/v1/orders/%s" % order_id), 200)
    for user_id in users:
        for event_id in event_ids:
            state["orders %s %s" % (user_id, event_id)] = expect(
                c.get("/v1/users/%s/orders?event=%s" % (user_id, event_id)), 200)
    return state, countdowns


def test_restart_restores_everything():
    parent = make_temp_dir()
    data_dir = os.path.join(parent, "data")   # created by the server when missing
    server = Server(data_dir=data_dir).start()
    c = server.client()
    e1, e2 = uid("dur"), uid("dur")
    create_event(c, e1, name="One", hold_ttl_s=300, max_seats_per_user=20)
    create_event(c, e2, sections=[{"id": "S", "price": 7, "rows": [{"id": "R", "seats": 5}]}],
                 pools=[{"id": "P", "capacity": 3, "price": 1}], currency="EUR")
    u1, u2 = user(), user()
    active = hold(c, e1, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 1}, ttl_s=600)
    extended = hold(c, e1, u2, ["FLOOR-B-1"], ttl_s=60)
    expect(c.post("/v1/holds/%s/extend" % extended["reservation_id"],
                  {"user_id": u2, "ttl_s": 500}), 200)
    released = hold(c, e1, u1, ["FLOOR-A-3"])
    release(c, released["reservation_id"], u1)
    bought = hold(c, e1, u1, ["FLOOR-A-4", "BALC-A-1"], {"GA": 2})
    order = commit(c, bought["reservation_id"], u1, "pi_keep")
    cancelled_hold = hold(c, e1, u2, ["FLOOR-A-5"])
    cancelled = commit(c, cancelled_hold["reservation_id"], u2)
    expect(c.post("/v1/orders/%s/cancel" % cancelled["order_id"], {"user_id": u2}), 200)
    pooled = hold(c, e2, u2, ["S-R-5"], {"P": 3})
    order2 = commit(c, pooled["reservation_id"], u2)
    hold_ids = [h["reservation_id"] for h in (active, extended, released, bought,
                                                cancelled_hold, pooled)]
    order_ids = [order["order_id"], cancelled["order_id"], order2["order_id"]]
    before, countdowns = _snapshot(c, [e1, e2], hold_ids, order_ids, [u1, u2])
    check_equal(before["event " + e1]["counts"], {"available": 45, "held": 3, "sold": 2},
                "counts before")
    c.close()
    server.stop()

    again = server.restart()
    c = again.client()
    after, countdowns_after = _snapshot(c, [e1, e2], hold_ids, order_ids, [u1, u2])
    for key in before:
        check_equal(after.get(key), before[key], "after restart: " + key)
    for hold_id, value in countdowns.items():
        later = countdowns_after[hold_id]
        if value:
            check(0 < later <= value, "expires_in_ms of %s: %r then %r" % (hold_id, value, later))
    # Life goes on: the restored hold commits, new holds get new ids, the seats stay taken.
    order3 = commit(c, active["reservation_id"], u1, "pi_after")
    check_equal(order3["seats"], ["FLOOR-A-1", "FLOOR-A-2"], "commit of a restored hold")
    check(order3["order_id"] not in order_ids, "a new order id")
    expect(c.post("/v1/events/%s/holds" % e1, hold_body(user(), ["FLOOR-A-4"])), 409,
           "seats_unavailable")
    fresh = hold(c, e1, user(), ["FLOOR-A-5"])
    check(fresh["reservation_id"] not in hold_ids, "a new hold id")
    check_equal(seat_state(c, e1, "FLOOR-A-5"), ("held", 5), "version continues")
    expect(c.post("/v1/events", {"id": e1, "sections": [{"id": "X", "price": 1, "rows": [
        {"id": "R", "seats": 1}]}]}), 409, "event_exists")
    c.close()
    again.stop()
    # A second restart shows the changes made after the first.
    third = again.restart()
    c = third.client()
    check_equal(get_hold(c, active["reservation_id"])["status"], "confirmed", "committed")
    check_equal(expect(c.get("/v1/orders/%s" % order3["order_id"]), 200), order3, "order3")
    third.stop()


test_restart_restores_everything.weight = 3.0


def test_kill9_keeps_acknowledged_commits():
    server = Server().start()
    setup = server.client()
    event_id = uid("crash")
    rows = [{"id": "R%d" % r, "seats": 50} for r in range(1, 9)]
    create_event(setup, event_id, sections=[{"id": "S", "price": 10, "rows": rows}],
                 pools=[{"id": "GA", "capacity": 1000, "price": 5}])
    threads = 4
    acked_holds = {}     # reservation id -> (user, seats)
    acked_orders = {}    # order id -> (reservation id, seats)
    lock = threading.Lock()
    stop = threading.Event()
    enough = threading.Event()

    def worker(index):
        c = server.client(client_timeout=10)
        row = index * 2 + 1
        seats = ["S-R%d-%d" % (r, n) for r in (row, row + 1) for n in range(1, 51)]
        pairs = [seats[i:i + 2] for i in range(0, len(seats), 2)]
        for pair in pairs:
            if stop.is_set():
                return
            u1 = user("k")
            try:
                response = c.post("/v1/events/%s/holds" % event_id,
                                  hold_body(u1, pair, {"GA": 1}))
                if response.status != 201:
                    return
                hold_id = response.json["reservation_id"]
                with lock:
                    acked_holds[hold_id] = (u1, pair)
                response = c.post("/v1/holds/%s/commit" % hold_id,
                                  {"user_id": u1, "payment_ref": "pi_%s" % hold_id})
                if response.status != 200:
                    return
                with lock:
                    acked_orders[response.json["order_id"]] = (hold_id, pair)
                    if len(acked_orders) >= 60:
                        enough.set()
            except Exception:  # noqa: B902 (the server was killed under us)
                return

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    for thread in workers:
        thread.start()
    check(enough.wait(timeout(30)), "60 commits not acknowledged in time (%d)" % len(
        acked_orders))
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(10)
    stop.set()
    for thread in workers:
        thread.join(timeout(15))
    with lock:
        holds_seen = dict(acked_holds)
        orders_seen = dict(acked_orders)
    check(len(orders_seen) >= 60, "acknowledged orders: %d" % len(orders_seen))

    again = server.restart()
    c = again.client()
    confirmed_holds = set()
    for order_id, (hold_id, pair) in orders_seen.items():
        order = expect(c.get("/v1/orders/%s" % order_id), 200,
                       what="acknowledged order %s after kill -9" % order_id)
        check_equal((order["status"], order["reservation_id"], order["seats"],
                     order["pools"]), ("confirmed", hold_id, pair, {"GA": 1}), "order")
        confirmed_holds.add(hold_id)
    for hold_id, (u1, pair) in holds_seen.items():
        h = get_hold(c, hold_id)
        if hold_id in confirmed_holds:
            check_equal(h["status"], "confirmed", "hold of an acknowledged order")
        check(h["status"] in ("held", "confirmed"), "acknowledged hold %s is %s" % (
            hold_id, h["status"]))
        expected = "sold" if h["status"] == "confirmed" else "held"
        for seat in pair:
            check_equal(seat_state(c, event_id, seat)[0], expected,
                        "seat %s of a %s hold" % (seat, h["status"]))
    summary = get_event(c, event_id)
    counts = summary["counts"]
    check_equal(sum(counts.values()), 400, "counts add up: %r" % counts)
    check(counts["sold"] >= 2 * len(orders_seen), "sold %d < acknowledged %d" % (
        counts["sold"], 2 * len(orders_seen)))
    pool = summary["pools"][0]
    check_equal(pool["sold"] * 2, counts["sold"], "one unit sold per pair of seats")
    check_equal(pool["held"] * 2, counts["held"], "one unit held per pair of seats")
    seats = all_seats(c, event_id)
    sold = sum(1 for s in seats if s["status"] == "sold")
    check_equal(sold, counts["sold"], "the listing agrees with the counts")
    again.stop()


test_kill9_keeps_acknowledged_commits.weight = 4.0


def test_hold_expires_while_stopped():
    server = Server().start()
    c = server.client()
    event_id = uid("down")
    create_event(c, event_id)
    u1 = user()
    short = hold(c, event_id, u1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 3}, ttl_s=2)
    long = hold(c, event_id, u1, ["FLOOR-A-3"], ttl_s=600)
    c.close()
    server.stop()
    time.sleep(3)
    again = server.restart()
    c = again.client()
    h = get_hold(c, short["reservation_id"])
    check_equal((h["status"], h["expires_in_ms"], h["expires_at"]),
                ("expired", 0, short["expires_at"]), "the lapsed hold")
    check_equal(seat_state(c, event_id, "FLOOR-A-1"), ("available", 3), "seat")
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 49, "held": 1, "sold": 0}, "counts")
    check_equal(summary["pools"][0]["available"], 5, "pool")
    expect(c.post("/v1/holds/%s/commit" % short["reservation_id"],
                  {"user_id": u1, "payment_ref": "pi"}), 410, "hold_expired")
    check_equal(get_hold(c, long["reservation_id"])["expires_at"], long["expires_at"],
                "the other hold keeps its expires_at")
    hold(c, event_id, user(), ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 5})
    again.stop()


test_hold_expires_while_stopped.weight = 3.0


def test_second_server_refused():
    first = Server().start()
    c = first.client()
    event_id = uid("lock")
    create_event(c, event_id)
    second = Server(data_dir=first.data_dir)
    second.start(wait=False)
    code = second.wait_exit(10)
    if code is None:
        second.kill()
        check(False, "a second server on the same data directory did not exit")
    check_equal(code, 1, "exit code of the second server")
    message = second.stderr_text().split("\n", 1)[1] if "\n" in second.stderr_text() else ""
    check(message.strip(), "the second server said nothing on stderr")
    # The first goes on untouched.
    expect(c.get("/healthz"), 200)
    hold(c, event_id, user(), ["FLOOR-A-1"])
    check_equal(get_event(c, event_id)["counts"]["held"], 1, "first server works")
    first.stop()
    # Once the first has stopped, a server starts on the directory.
    third = first.restart()
    check_equal(get_event(third.client(), event_id)["counts"]["held"], 1, "restarted")
    third.stop()


def test_idempotency_survives_restart():
    server = Server().start()
    c = server.client()
    event_key, hold_key = "ev-" + uid("k"), "ho-" + uid("k")
    event_id = uid("idem")
    event_body = json.dumps({"id": event_id, "sections": [
        {"id": "S", "price": 3, "rows": [{"id": "R", "seats": 10}]}]})
    created = c.post("/v1/events", raw=event_body, headers={"Idempotency-Key": event_key})
    expect(created, 201)
    hold_raw = json.dumps(hold_body(user(), ["S-R-1", "S-R-2"]))
    path = "/v1/events/%s/holds" % event_id
    first = c.post(path, raw=hold_raw, headers={"Idempotency-Key": hold_key})
    expect(first, 201)
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    repeat = c.post("/v1/events", raw=event_body, headers={"Idempotency-Key": event_key})
    check_equal((repeat.status, repeat.body), (created.status, created.body),
                "event creation repeated after restart")
    repeat = c.post(path, raw=hold_raw, headers={"Idempotency-Key": hold_key})
    check_equal((repeat.status, repeat.body), (first.status, first.body),
                "hold repeated after restart")
    expect(c.post(path, raw=json.dumps(hold_body(user(), ["S-R-3"])),
                  headers={"Idempotency-Key": hold_key}), 422, "idempotency_key_reused")
    check_equal(get_event(c, event_id)["counts"], {"available": 8, "held": 2, "sold": 0},
                "one hold")
    again.stop()


def test_sigint_stops_cleanly():
    server = Server().start()
    c = server.client()
    event_id = uid("int")
    create_event(c, event_id)
    h = hold(c, event_id, user(), ["FLOOR-A-1"])
    c.close()
    server.stop(sig=signal.SIGINT)
    again = server.restart()
    check_equal(get_hold(again.client(), h["reservation_id"])["status"], "held", "kept")
    again.stop()


def test_sigterm_with_open_connections():
    """SIGTERM while clients keep idle keep-alive connections open: exit 0 in time."""
    server = Server().start()
    clients = [server.client() for _ in range(5)]
    for c in clients:
        expect(c.get("/healthz"), 200)
    started = time.monotonic()
    server.stop()
    check(time.monotonic() - started < timeout(10), "slow stop")


def test_hold_times_survive_restart_exactly():
    server = Server().start()
    c = server.client()
    event_id = uid("times")
    create_event(c, event_id)
    h = hold(c, event_id, user(), ["FLOOR-A-1"], ttl_s=123.456)
    check_equal(parse_time(h["expires_at"]) - parse_time(h["created_at"]), 123456, "ttl in ms")
    c.close()
    server.stop()
    again = server.restart()
    h2 = get_hold(again.client(), h["reservation_id"])
    check_equal((h2["created_at"], h2["expires_at"]), (h["created_at"], h["expires_at"]),
                "times after restart")
    again.stop()


def test_kill9_after_each_kind_of_change():
    """Every acknowledged change is on stable storage: kill -9 straight after the answers."""
    server = Server().start()
    c = server.client()
    event_id = uid("k9")
    create_event(c, event_id, max_seats_per_user=0)
    u1, u2 = user(), user()
    kept = hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1}, ttl_s=100)
    extended = expect(c.post("/v1/holds/%s/extend" % kept["reservation_id"],
                             {"user_id": u1, "ttl_s": 900}), 200)
    released = hold(c, event_id, u1, ["FLOOR-A-2"])
    release(c, released["reservation_id"], u1)
    bought = hold(c, event_id, u2, ["FLOOR-A-3"], {"GA": 2})
    order = commit(c, bought["reservation_id"], u2)
    refunded = hold(c, event_id, u2, ["FLOOR-A-4"])
    cancelled = commit(c, refunded["reservation_id"], u2)
    expect(c.post("/v1/orders/%s/cancel" % cancelled["order_id"], {"user_id": u2}), 200)
    u3 = user()
    replaced = hold(c, event_id, u3, ["FLOOR-B-1"])
    replacing = hold(c, event_id, u3, ["FLOOR-B-2"], replace_existing=True)
    key = "k9-" + uid("key")
    raw = json.dumps(hold_body(user(), ["BALC-A-1"]))
    keyed = c.post("/v1/events/%s/holds" % event_id, raw=raw, headers={"Idempotency-Key": key})
    expect(keyed, 201)
    last = hold(c, event_id, u2, ["BALC-A-9"])   # the very last answer before the kill
    server.kill()
    c.close()

    again = server.restart()
    c = again.client()
    h = get_hold(c, kept["reservation_id"])
    check_equal((h["status"], h["expires_at"]), ("held", extended["expires_at"]), "extended hold")
    check_equal(get_hold(c, released["reservation_id"])["status"], "released", "released hold")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order, "order")
    check_equal(expect(c.get("/v1/orders/%s" % cancelled["order_id"]), 200)["status"],
                "cancelled", "cancelled order")
    check_equal(get_hold(c, replaced["reservation_id"])["status"], "released", "replaced hold")
    check_equal(get_hold(c, replacing["reservation_id"])["status"], "held", "replacing hold")
    check_equal(get_hold(c, last["reservation_id"])["status"], "held", "the last hold")
    repeat = c.post("/v1/events/%s/holds" % event_id, raw=raw, headers={"Idempotency-Key": key})
    check_equal((repeat.status, repeat.body), (keyed.status, keyed.body), "idempotent repeat")
    expected = {"FLOOR-A-1": ("held", 2), "FLOOR-A-2": ("available", 3),
                "FLOOR-A-3": ("sold", 3), "FLOOR-A-4": ("available", 4),
                "FLOOR-B-1": ("available", 3), "FLOOR-B-2": ("held", 2),
                "BALC-A-1": ("held", 2), "BALC-A-9": ("held", 2)}
    for seat, state in expected.items():
        check_equal(seat_state(c, event_id, seat), state, seat)
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 45, "held": 4, "sold": 1}, "counts")
    pool = summary["pools"][0]
    check_equal((pool["available"], pool["held"], pool["sold"]), (2, 1, 2), "pool")
    again.stop()


def test_restart_while_expiry_due():
    """Holds that lapse during a restart and right after it: the server expires them by
    itself after the restart, with no request touching them."""
    server = Server().start()
    c = server.client()
    event_id = uid("due")
    create_event(c, event_id)
    soon = hold(c, event_id, user(), ["FLOOR-A-1"], {"GA": 2}, ttl_s=1.5)
    c.close()
    server.stop()
    again = server.restart()
    time.sleep(max(0.0, parse_time(soon["expires_at"]) / 1000.0 - time.time()) + 0.5)
    c = again.client()
    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 50, "held": 0, "sold": 0}, "counts")
    check_equal(summary["pools"][0]["held"], 0, "pool")
    check_equal(get_hold(c, soon["reservation_id"])["status"], "expired", "hold")
    again.stop()


def test_sigterm_under_load():
    """SIGTERM while several clients keep writing: exit 0, and every acknowledged hold and
    order is there after the restart."""
    server = Server().start()
    setup = server.client()
    event_id = uid("term")
    create_event(setup, event_id, sections=[{"id": "S", "price": 1, "rows": [
        {"id": "R%d" % r, "seats": 100} for r in range(1, 5)]}])
    acked_holds, acked_orders = {}, {}
    lock = threading.Lock()
    enough = threading.Event()

    def worker(index):
        c = server.client(client_timeout=15)
        for n in range(1, 101):
            u1 = user("t")
            try:
                response = c.post("/v1/events/%s/holds" % event_id,
                                  hold_body(u1, ["S-R%d-%d" % (index + 1, n)]))
                if response.status != 201:
                    return
                hold_id = response.json["reservation_id"]
                with lock:
                    acked_holds[hold_id] = "S-R%d-%d" % (index + 1, n)
                if n % 2:
                    response = c.post("/v1/holds/%s/commit" % hold_id,
                                      {"user_id": u1, "payment_ref": "pi"})
                    if response.status != 200:
                        return
                    with lock:
                        acked_orders[response.json["order_id"]] = hold_id
                with lock:
                    if len(acked_holds) >= 40:
                        enough.set()
            except Exception:  # noqa: B902 (the server went away)
                return

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(4)]
    for thread in workers:
        thread.start()
    check(enough.wait(timeout(30)), "40 holds not acknowledged in time")
    server.stop()
    for thread in workers:
        thread.join(timeout(15))
    again = server.restart()
    c = again.client()
    with lock:
        holds_seen, orders_seen = dict(acked_holds), dict(acked_orders)
    for order_id, hold_id in orders_seen.items():
        check_equal(expect(c.get("/v1/orders/%s" % order_id), 200)["reservation_id"], hold_id,
                    "acknowledged order")
    for hold_id, seat in holds_seen.items():
        status = get_hold(c, hold_id)["status"]
        check(status in ("held", "confirmed"), "acknowledged hold %s: %s" % (hold_id, status))
        check_equal(seat_state(c, event_id, seat)[0], "sold" if status == "confirmed" else "held",
                    seat)
    again.stop()


test_sigterm_under_load.weight = 2.0


def test_restart_keeps_rules():
    """After a restart the rules still see the restored state: the user limit counts restored
    holds and orders, extend caps at the original created_at + max_hold_s, orders keep their
    order, a second replace_existing releases restored holds."""
    server = Server().start()
    c = server.client()
    event_id = uid("rules")
    create_event(c, event_id, hold_ttl_s=10, max_hold_s=20, max_seats_per_user=4)
    u1, u2 = user(), user()
    held = hold(c, event_id, u1, ["FLOOR-A-1"], {"GA": 1})
    bought = hold(c, event_id, u1, ["FLOOR-A-2", "FLOOR-A-3"])
    order = commit(c, bought["reservation_id"], u1)
    first_of_u2 = commit(c, hold(c, event_id, u2, ["FLOOR-B-1"])["reservation_id"], u2)
    second_of_u2 = commit(c, hold(c, event_id, u2, ["FLOOR-B-2"])["reservation_id"], u2)
    kept_of_u2 = hold(c, event_id, u2, ["FLOOR-B-3"])
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    expect(c.post("/v1/events/%s/holds" % event_id, hold_body(u1, ["FLOOR-A-4"])), 429,
           "user_limit_exceeded", what="u1 has 2 held + 2 bought from before the restart")
    capped = expect(c.post("/v1/holds/%s/extend" % held["reservation_id"],
                           {"user_id": u1, "ttl_s": 1000}), 200)
    check_equal((parse_time(capped["expires_at"]) - parse_time(held["created_at"]),
                 capped.get("capped")), (20000, True), "cap from the original created_at")
    listing = expect(c.get("/v1/users/%s/orders?event=%s" % (u2, event_id)), 200)
    check_equal([o["order_id"] for o in listing["orders"]],
                [first_of_u2["order_id"], second_of_u2["order_id"]], "orders oldest first")
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    hold(c, event_id, u1, ["FLOOR-A-4", "FLOOR-A-5"])
    replacing = hold(c, event_id, u2, ["FLOOR-B-4"], replace_existing=True)
    check_equal(get_hold(c, kept_of_u2["reservation_id"])["status"], "released",
                "a restored hold is released by replace_existing")
    check_equal(seat_state(c, event_id, "FLOOR-B-3"), ("available", 3), "its seat")
    check_equal(get_hold(c, replacing["reservation_id"])["status"], "held", "the new one")
    again.stop()
