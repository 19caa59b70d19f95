"""A randomized history of holds, releases, extends, commits and cancels by a few users, each
answer checked against a small reference model of the contract; then the whole state (seats
with versions, counts, pools, holds, orders) is compared with the model, before and after a
restart. The seed is printed in any failure; set HOLDFAST_TEST_SEED to replay one."""

import os
import random

from harness import (Server, all_seats, check, check_equal, create_event, expect, get_event,
                     hold_body, uid)

STEPS = 300
USERS = ["mu%d" % n for n in range(5)]
SECTIONS = [
    {"id": "A", "price": 100, "rows": [{"id": "R1", "seats": 8}, {"id": "R2", "seats": 8}]},
    {"id": "B", "price": 30, "rows": [{"id": "R1", "seats": 6}]},
]
PRICES = {"A": 100, "B": 30}
POOL_PRICE = 7
POOL_CAPACITY = 8
MAX_PER_USER = 7
MAX_PER_HOLD = 5


class Model:
    def __init__(self):
        self.seats = {}
        for section in SECTIONS:
            for row in section["rows"]:
                for n in range(1, row["seats"] + 1):
                    self.seats["%s-%s-%d" % (section["id"], row["id"], n)] = {
                        "status": "available", "version": 1, "hold": None}
        self.layout = list(self.seats)
        self.pool_held = 0
        self.pool_sold = 0
        self.holds = {}     # id -> dict(user, seats, qty, status, order)
        self.orders = {}    # id -> dict(hold, user, seats, qty, status)
        self.order_list = []

    def set_status(self, seat, status, hold_id=None):
        state = self.seats[seat]
        if state["status"] != status:
            state["version"] += 1
        state["status"] = status
        state["hold"] = hold_id

    def active_holds(self, user_id):
        return [h for h, v in self.holds.items() if v["user"] == user_id and v["status"] == "held"]

    def units_held(self, user_id):
        return sum(len(self.holds[h]["seats"]) + self.holds[h]["qty"]
                   for h in self.active_holds(user_id))

    def units_bought(self, user_id):
        return sum(len(o["seats"]) + o["qty"] for o in self.orders.values()
                   if o["user"] == user_id and o["status"] == "confirmed")

    def release_hold(self, hold_id):
        h = self.holds[hold_id]
        h["status"] = "released"
        for seat in h["seats"]:
            self.set_status(seat, "available")
        self.pool_held -= h["qty"]


def _total(seats, qty):
    return sum(PRICES[s.split("-")[0]] for s in seats) + qty * POOL_PRICE


def _hold_step(rng, c, event_id, model, where):
    user_id = rng.choice(USERS)
    replace = rng.random() < 0.15
    own = set()
    if replace:
        for h in model.active_holds(user_id):
            own.update(model.holds[h]["seats"])
    candidates = [s for s in model.layout if s not in own]
    seats = rng.sample(candidates, rng.randint(0, 3))
    if rng.random() < 0.05:
        seats.append("A-R9-%d" % rng.randint(1, 9))   # no such row
    qty = rng.choice([0, 0, 0, 0, 1, 1, 2, 3])
    if not seats and not qty:
        qty = 1
    body = hold_body(user_id, seats, {"GA": qty} if qty else None, ttl_s=600,
                     replace_existing=replace)
    response = c.post("/v1/events/%s/holds" % event_id, body)

    unknown = [s for s in seats if s not in model.seats]
    freed = set(own)
    freed_units = sum(model.holds[h]["qty"] for h in model.active_holds(user_id)) if replace else 0
    taken = [s for s in seats if s in model.seats and model.seats[s]["status"] != "available"
             and s not in freed]
    pool_available = POOL_CAPACITY - model.pool_held - model.pool_sold + freed_units
    held_units = 0 if replace else model.units_held(user_id)
    over_limit = held_units + model.units_bought(user_id) + len(seats) + qty > MAX_PER_USER
    too_many = len(seats) + qty > MAX_PER_HOLD
    possible = {}
    if too_many:
        possible[400] = "invalid_request"
    if unknown:
        possible[404] = "seat_not_found"
    if taken:
        possible[409] = "seats_unavailable"
    if qty > pool_available:
        possible.setdefault(409, "insufficient_quantity")
        if taken:
            possible[409] = ("seats_unavailable", "insufficient_quantity")
    if over_limit:
        possible[429] = "user_limit_exceeded"
    if possible:
        check(response.status in possible, "%s: hold %s expected one of %s, got %r" % (
            where, body, possible, response))
        codes = possible[response.status]
        codes = codes if isinstance(codes, tuple) else (codes,)
        check(response.code in codes, "%s: hold %s: code %r not in %s" % (
            where, body, response.code, codes))
        if response.code == "seats_unavailable":
            check_equal(sorted(response.error.get("seats") or []), sorted(taken),
                        "%s: taken seats" % where)
        if response.code == "seat_not_found":
            check_equal(sorted(response.error.get("seats") or []), sorted(unknown),
                        "%s: unknown seats" % where)
        if response.code == "insufficient_quantity":
            check_equal(response.error.get("available"), pool_available,
                        "%s: units available" % where)
        return
    h = expect(response, 201, what="%s: hold %s" % (where, body))
    if replace:
        for old in model.active_holds(user_id):
            model.release_hold(old)
    hold_id = h["reservation_id"]
    model.holds[hold_id] = {"user": user_id, "seats": seats, "qty": qty, "status": "held",
                            "order": None}
    for seat in seats:
        model.set_status(seat, "held", hold_id)
    model.pool_held += qty
    check_equal((sorted(h["seats"]), h["total"]), (sorted(seats), _total(seats, qty)),
                "%s: hold" % where)


def _pick_user(rng, owner):
    return owner if rng.random() < 0.85 else rng.choice([u for u in USERS if u != owner])


def _hold_action_step(rng, c, model, where):
    if not model.holds:
        return
    active = [h for h, v in model.holds.items() if v["status"] == "held"]
    if active and rng.random() < 0.7:
        hold_id = rng.choice(active)
    else:
        hold_id = rng.choice(list(model.holds))
    h = model.holds[hold_id]
    user_id = _pick_user(rng, h["user"])
    action = rng.choice(["release", "commit", "commit", "extend"])
    response = c.post("/v1/holds/%s/%s" % (hold_id, action),
                      {"user_id": user_id, "payment_ref": "pi_m", "ttl_s": 300})
    what = "%s: %s of a %s hold" % (where, action, h["status"])
    if user_id != h["user"]:
        expect(response, 403, "not_owner", what=what)
        return
    if action == "release":
        if h["status"] == "confirmed":
            expect(response, 409, "already_confirmed", what=what)
            return
        if h["status"] == "held":
            model.release_hold(hold_id)
        check_equal(expect(response, 200, what=what)["status"], "released", what)
    elif action == "extend":
        if h["status"] == "held":
            check_equal(expect(response, 200, what=what)["status"], "held", what)
        else:
            expect(response, 409, "hold_not_active", what=what)
    else:
        if h["status"] == "released":
            expect(response, 409, "hold_released", what=what)
            return
        order = expect(response, 200, what=what)
        if h["status"] == "confirmed":
            check_equal(order["order_id"], h["order"], "%s: the same order" % what)
            return
        h["status"] = "confirmed"
        h["order"] = order["order_id"]
        model.orders[order["order_id"]] = {"hold": hold_id, "user": h["user"],
                                           "seats": h["seats"], "qty": h["qty"],
                                           "status": "confirmed"}
        model.order_list.append(order["order_id"])
        for seat in h["seats"]:
            model.set_status(seat, "sold", hold_id)
        model.pool_held -= h["qty"]
        model.pool_sold += h["qty"]
        check_equal((order["status"], order["total"]), ("confirmed", _total(h["seats"], h["qty"])),
                    what)


def _cancel_step(rng, c, model, where):
    if not model.orders:
        return
    live = [o for o, v in model.orders.items() if v["status"] == "confirmed"]
    order_id = rng.choice(live if live and rng.random() < 0.8 else list(model.orders))
    o = model.orders[order_id]
    user_id = _pick_user(rng, o["user"])
    response = c.post("/v1/orders/%s/cancel" % order_id, {"user_id": user_id})
    what = "%s: cancel of a %s order" % (where, o["status"])
    if user_id != o["user"]:
        expect(response, 403, "not_owner", what=what)
        return
    check_equal(expect(response, 200, what=what)["status"], "cancelled", what)
    if o["status"] == "confirmed":
        o["status"] = "cancelled"
        for seat in o["seats"]:
            model.set_status(seat, "available")
        model.pool_sold -= o["qty"]


def _compare(c, event_id, model, where):
    seats = all_seats(c, event_id)
    check_equal([s["id"] for s in seats], model.layout, "%s: layout" % where)
    for seat in seats:
        expected = model.seats[seat["id"]]
        check_equal((seat["status"], seat["version"]), (expected["status"], expected["version"]),
                    "%s: seat %s" % (where, seat["id"]))
    summary = get_event(c, event_id)
    statuses = [v["status"] for v in model.seats.values()]
    check_equal(summary["counts"], {k: statuses.count(k) for k in ("available", "held", "sold")},
                "%s: counts" % where)
    pool = summary["pools"][0]
    check_equal((pool["available"], pool["held"], pool["sold"]),
                (POOL_CAPACITY - model.pool_held - model.pool_sold, model.pool_held,
                 model.pool_sold), "%s: pool" % where)
    for hold_id, h in model.holds.items():
        answer = expect(c.get("/v1/holds/%s" % hold_id), 200)
        check_equal((answer["status"], answer.get("order_id")), (h["status"], h["order"]),
                    "%s: hold %s" % (where, hold_id))
    for user_id in USERS:
        listing = expect(c.get("/v1/users/%s/orders?event=%s" % (user_id, event_id)), 200)
        expected = [o for o in model.order_list if model.orders[o]["user"] == user_id]
        check_equal([(o["order_id"], o["status"]) for o in listing["orders"]],
                    [(o, model.orders[o]["status"]) for o in expected],
                    "%s: orders of %s" % (where, user_id))


def _run(seed):
    rng = random.Random(seed)
    where = "seed %d" % seed
    server = Server().start()
    c = server.client()
    event_id = uid("model")
    create_event(c, event_id, sections=SECTIONS,
                 pools=[{"id": "GA", "capacity": POOL_CAPACITY, "price": POOL_PRICE}],
                 max_seats_per_user=MAX_PER_USER, max_seats_per_hold=MAX_PER_HOLD)
    model = Model()
    for step in range(STEPS):
        label = "%s step %d" % (where, step)
        roll = rng.random()
        if roll < 0.45:
            _hold_step(rng, c, event_id, model, label)
        elif roll < 0.85:
            _hold_action_step(rng, c, model, label)
        else:
            _cancel_step(rng, c, model, label)
        if step % 100 == 99:
            _compare(c, event_id, model, label)
    _compare(c, event_id, model, where + " at the end")
    c.close()
    server.stop()
    again = server.restart()
    _compare(again.client(), event_id, model, where + " after restart")
    again.stop()


def test_random_history():
    seed = int(os.environ.get("HOLDFAST_TEST_SEED") or random.randrange(1 << 30))
    _run(seed)


def test_random_history_fixed_seed():
    _run(20261122)
