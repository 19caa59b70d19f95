#!/usr/bin/env python3
"""Crash harness: kill -9 under load, restart, and check that every acknowledged change is there.

    python3 tests/crash/crash_test.py --binary build/holdfast [--rounds 25] [--seed N]
                                      [--workers 4] [--max-load-s 1.5] [--store-url URL]

Each round: several client threads (one connection and one user each) apply a random mix of
holds and pool bookings (with Idempotency-Key), on the event and on a night calendar (API.md
section 12), exchange holds of their confirmed orders (section 13: their commits swap the
orders in one step), commits, releases and cancels, logging every answer. At a random
moment the server gets SIGKILL. After the restart the harness checks, in this order:
  1. every acknowledged change is there: each hold and order has the status its last 2xx answer
     said (or, when a request on it was in flight at the kill, the status before or after it);
  2. requests that were in flight are retried (holds and bookings with the same
     Idempotency-Key and body, commits, releases, cancels: all idempotent), which resolves
     every uncertain outcome;
  3. the whole state then matches the log exactly: every sold seat belongs to exactly one
     confirmed order, the sold seats are exactly the seats of the confirmed orders, the held
     seats and pool units are exactly those of the held holds, the users' order lists are the
     orders of the log, and the counts add up (summary = listing, available + held + sold =
     total, per pool and per section); on the calendar, each night's free quantity of each
     resource is its capacity less the quantities of the held holds and confirmed orders over
     it, never below 0; every exchanged order is replaced by an order that replaces it (an old
     order ends exactly confirmed or exchanged, as its replacement's commit was or was not
     durable), and a held exchange hold's kept seats stay sold to its old order; the seats of
     an allocation made at the start are still allocated, counted apart.
After the rounds and a clean stop, `holdfast check` runs on the data directory (SQLite).
With --store-url (a PostgreSQL URL, scripts/postgres.sh prints one) the server stores in a new
database of that PostgreSQL, created here, instead of SQLite.
The seed is printed first; the same seed gives the same choices (not the same kill instants,
which depend on timing). One line per round, then `N passed, N failed`."""

import argparse
import datetime
import os
import random
import subprocess
import sys
import threading
import time
import http.client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import hflib  # noqa: E402
from hflib import Failure, check  # noqa: E402

EVENT = "crash"
SECTIONS = [("A", 100, 4, 25), ("B", 50, 4, 25)]   # id, price, rows, seats per row
POOL = ("GA", 100, 10)                             # id, capacity, price
SEATS = ["%s-R%d-%d" % (s, r, n) for s, _, rows, per in SECTIONS
         for r in range(1, rows + 1) for n in range(1, per + 1)]
PRICES = {"%s-R%d-%d" % (s, r, n): price for s, price, rows, per in SECTIONS
          for r in range(1, rows + 1) for n in range(1, per + 1)}


# Seats set aside at the start (API.md section 14): every round they must still be allocated
# (the workers' holds of them are refused), and the counts count them apart.
ALLOCATION = "crash_guests"
ALLOCATED = ["B-R4-%d" % n for n in range(21, 26)]

CALENDAR = "crashcal"
RESOURCES = [("ROOM", 1, 10000), ("DORM", 3, 2000)]  # id, capacity, price per night
# The nights held: from tomorrow (UTC), so that none is in the past during the run.
FIRST_NIGHT = datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=1)
NIGHTS = 12

PATHS = {"hold": "/v1/events/%s/holds", "book": "/v1/events/%s/bookings",
         "cal_hold": "/v1/calendars/%s/holds", "cal_book": "/v1/calendars/%s/bookings",
         "commit": "/v1/holds/%s/commit", "release": "/v1/holds/%s/release",
         "cancel": "/v1/orders/%s/cancel", "exchange": "/v1/events/%s/holds"}


def event_definition():
    return {
        "id": EVENT, "hold_ttl_s": 3600, "max_hold_s": 7200, "max_seats_per_hold": 10,
        "sections": [{"id": s, "price": price,
                      "rows": [{"id": "R%d" % r, "seats": per} for r in range(1, rows + 1)]}
                     for s, price, rows, per in SECTIONS],
        "pools": [{"id": POOL[0], "capacity": POOL[1], "price": POOL[2]}],
    }


def calendar_definition():
    return {"id": CALENDAR, "unit": "night", "hold_ttl_s": 3600, "max_hold_s": 7200,
            "resources": [{"id": r, "capacity": capacity, "price": price}
                          for r, capacity, price in RESOURCES]}


def night(offset):
    return (FIRST_NIGHT + datetime.timedelta(days=offset)).isoformat()


class Model:
    """What the log says: holds and orders with their acknowledged status. `allowed` is the
    set of statuses a request in flight at the kill may have left behind."""

    def __init__(self):
        self.holds = {}    # id -> {"user", "seats", "pools", "status", "allowed"}
        self.orders = {}   # id -> {"user", "seats", "pools", "status", "allowed", "hold"}
        self.pending = []  # (kind, user, target, body, key) of requests without an answer
        self.users = set()
        self.acknowledged = 0
        self.exchanged = 0   # exchange commits acknowledged (or found done after a kill)
        self.lock = threading.Lock()   # the client threads share the model


class Worker(threading.Thread):
    def __init__(self, port, user, model, seed, stop):
        super().__init__(daemon=True)
        self.port = port
        self.user = user
        self.model = model
        self.random = random.Random(seed)
        self.stop = stop
        self.log = []      # (kind, target, body, key, status or None, answer)
        self.error = None

    def mine(self, table, status):
        with self.model.lock:
            return [i for i, o in table.items() if o["user"] == self.user
                    and o["status"] == status and o["allowed"] is None]

    def choose(self):
        r = self.random.random()
        held = self.mine(self.model.holds, "held")
        confirmed = self.mine(self.model.orders, "confirmed")
        if r < 0.06:
            # A booking (an order without a hold) of pool units, idempotent by its key.
            body = {"user_id": self.user, "pools": {POOL[0]: self.random.randint(1, 2)},
                    "payment_ref": "pi_b%d" % self.random.randrange(10**9)}
            return ("book", EVENT, body, "b-%s-%d" % (self.user, self.random.randrange(10**12)))
        if r < 0.12:
            return self.calendar_request("cal_book")
        if r < 0.30:
            return self.calendar_request("cal_hold")
        if r < 0.38 or not (held or confirmed):
            return self.hold_request()
        if r < 0.45:
            exchange = self.exchange_request()
            if exchange:
                return exchange
        if r < 0.70 and held:
            hold_id = self.random.choice(held)
            return ("commit", hold_id, {"user_id": self.user,
                                        "payment_ref": "pi_%d" % self.random.randrange(10**9)}, None)
        if r < 0.88 and held:
            return ("release", self.random.choice(held), {"user_id": self.user}, None)
        if confirmed:
            return ("cancel", self.random.choice(confirmed), {"user_id": self.user}, None)
        return self.hold_request()

    def hold_request(self):
        body = {"user_id": self.user}
        kind = self.random.random()
        if kind < 0.5:
            body["seats"] = self.random.sample(SEATS, self.random.randint(1, 3))
        elif kind < 0.7:
            body["best_available"] = {"count": self.random.randint(1, 3),
                                      "adjacent": self.random.random() < 0.5}
        else:
            body["pools"] = {POOL[0]: self.random.randint(1, 3)}
            if self.random.random() < 0.3:
                body["seats"] = self.random.sample(SEATS, 1)
        key = "k-%s-%d" % (self.user, self.random.randrange(10**12))
        return ("hold", EVENT, body, key)

    def exchange_request(self):
        """An exchange hold (API.md section 13) of one of the user's confirmed orders on the
        event: some of its seats kept, one other seat asked for."""
        with self.model.lock:
            orders = [(i, o["seats"]) for i, o in self.model.orders.items()
                      if o["user"] == self.user and o["status"] == "confirmed"
                      and o["allowed"] is None and not o["items"] and o["seats"]]
        if not orders:
            return None
        order_id, seats = self.random.choice(orders)
        kept = [s for s in seats if self.random.random() < 0.6]
        wanted = kept + [s for s in self.random.sample(SEATS, 1) if s not in kept]
        body = {"user_id": self.user, "seats": wanted, "exchange_for": order_id}
        key = "x-%s-%d" % (self.user, self.random.randrange(10**12))
        return ("exchange", EVENT, body, key)

    def calendar_request(self, kind):
        """A hold or booking of one or two resources for 1 to 3 nights (the second item on
        the other resource, so the items of one hold never overlap)."""
        items = []
        for resource, capacity, _ in self.random.sample(RESOURCES, self.random.randint(1, 2)):
            start = self.random.randrange(NIGHTS - 3)
            items.append({"resource": resource, "from": night(start),
                          "to": night(start + self.random.randint(1, 3)),
                          "quantity": self.random.randint(1, capacity)})
        body = {"user_id": self.user, "items": items}
        if kind == "cal_book":
            body["payment_ref"] = "pi_c%d" % self.random.randrange(10**9)
        return (kind, CALENDAR, body, "c-%s-%d" % (self.user, self.random.randrange(10**12)))

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            while not self.stop.is_set():
                kind, target, body, key = self.choose()
                path = PATHS[kind] % target
                headers = {"Idempotency-Key": key} if key else {}
                try:
                    status, answer = hflib.send(connection, "POST", path, body, headers)
                except (OSError, http.client.HTTPException):
                    # No answer: the server died with this request in flight.
                    self.record(kind, target, body, key, None, None)
                    return
                self.record(kind, target, body, key, status, answer)
        except Exception as error:  # noqa: BLE001 (reported by the main thread)
            self.error = error if isinstance(error, Failure) else Failure(
                "client thread: %r" % error)
        finally:
            connection.close()

    def record(self, kind, target, body, key, status, answer):
        self.log.append((kind, target, body, key, status, answer))
        with self.model.lock:
            apply_answer(self.model, self.user, kind, target, body, key, status, answer)


def items_of(answer):
    """Seats, pools and a calendar's items (resource, from, to, quantity) of a hold or order."""
    items = sorted((i["resource"], i["from"], i["to"], i["quantity"])
                   for i in answer.get("items") or [])
    return sorted(answer.get("seats") or []), dict(answer.get("pools") or {}), items


def apply_answer(model, user, kind, target, body, key, status, answer):
    """Folds one logged answer into the model (each object is touched by one thread only)."""
    if status is None:
        model.pending.append((kind, user, target, body, key))
        if kind in ("commit", "release"):
            model.holds[target]["allowed"] = {"held", "confirmed" if kind == "commit" else "released"}
        old = model.holds[target].get("exchange_for") if kind == "commit" else None
        if old and model.orders[old]["status"] == "confirmed":
            model.orders[old]["allowed"] = {"confirmed", "exchanged"}
        elif kind == "cancel":
            model.orders[target]["allowed"] = {"confirmed", "cancelled"}
        return
    if status >= 500:
        raise Failure("%s %s answered %d: %s" % (kind, target, status, answer))
    if status >= 300:
        check(isinstance(answer, dict) and "error" in answer,
              "%s %s: %d without an error body" % (kind, target, status))
        return
    model.acknowledged += 1
    if kind in ("hold", "cal_hold", "exchange"):
        check(status == 201, "hold answered %d" % status)
        seats, pools, items = items_of(answer)
        model.holds[answer["reservation_id"]] = {"user": user, "seats": seats, "pools": pools,
                                                 "items": items, "status": "held",
                                                 "allowed": None,
                                                 "exchange_for": answer.get("exchange_for")}
        check(answer.get("exchange_for") == body.get("exchange_for"),
              "the hold's exchange_for is %s" % answer.get("exchange_for"))
    elif kind in ("book", "cal_book"):
        check(status == 201 and answer["status"] == "confirmed", "booking answered %d" % status)
        check(answer.get("reservation_id") is None, "a booking has a reservation_id")
        seats, pools, items = items_of(answer)
        model.orders[answer["order_id"]] = {"user": user, "seats": seats, "pools": pools,
                                            "items": items, "status": "confirmed",
                                            "allowed": None, "hold": None}
    elif kind == "commit":
        hold = model.holds[target]
        hold["status"] = "confirmed"
        seats, pools, items = items_of(answer)
        check((seats, pools, items) == (hold["seats"], hold["pools"], hold["items"]),
              "order %s has other items than its hold" % answer["order_id"])
        model.orders[answer["order_id"]] = {"user": user, "seats": seats, "pools": pools,
                                            "items": items, "status": "confirmed",
                                            "allowed": None, "hold": target}
        old = hold.get("exchange_for")
        if old:
            # The exchange's swap: the old order is exchanged for this one, one durable step.
            check(answer.get("replaces") == old, "order %s replaces %s, not %s" % (
                answer["order_id"], answer.get("replaces"), old))
            model.orders[old]["status"] = "exchanged"
            model.orders[old]["allowed"] = None
            model.exchanged += 1
    elif kind == "release":
        check(answer["status"] == "released", "release answered %s" % answer["status"])
        model.holds[target]["status"] = "released"
    elif kind == "cancel":
        check(answer["status"] == "cancelled", "cancel answered %s" % answer["status"])
        model.orders[target]["status"] = "cancelled"


def check_acknowledged(port, model):
    """Step 1: every acknowledged status survived; uncertain ones are before or after."""
    checked = 0
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for table, path in ((model.holds, "/v1/holds/%s"), (model.orders, "/v1/orders/%s")):
        for object_id, entry in table.items():
            status, answer = hflib.send(connection, "GET", path % object_id)
            check(status == 200, "acknowledged %s is gone after the restart (%d)" % (
                object_id, status))
            allowed = entry["allowed"] or {entry["status"]}
            check(answer["status"] in allowed, "%s is %s after the restart, the log says %s" % (
                object_id, answer["status"], "/".join(sorted(allowed))))
            check(items_of(answer) == (entry["seats"], entry["pools"], entry["items"]),
                  "%s has other items after the restart" % object_id)
            if entry["allowed"]:
                entry["status"] = answer["status"]   # resolved by reading; retried below
            checked += 1
    connection.close()
    return checked


def resolve_pending(port, model):
    """Step 2: retries every request that had no answer; all of them are idempotent."""
    pending, model.pending = model.pending, []
    for kind, user, target, body, key in pending:
        path = PATHS[kind] % target
        headers = {"Idempotency-Key": key} if key else {}
        status, answer = hflib.request(port, "POST", path, body, headers)
        if kind in ("commit", "release"):
            model.holds[target]["allowed"] = None
            old = model.holds[target].get("exchange_for")
            if old:
                model.orders[old]["allowed"] = None
        elif kind == "cancel":
            model.orders[target]["allowed"] = None
        if kind == "commit" and status == 200 and answer["order_id"] in model.orders:
            model.orders[answer["order_id"]]["status"] = answer["status"]
            continue
        apply_answer(model, user, kind, target, body, key, status, answer)
        check(status is not None and status < 500, "retry of %s answered %s" % (kind, status))
    return len(pending)


def all_seats(port):
    seats, after = {}, None
    while True:
        path = "/v1/events/%s/seats?limit=10000" % EVENT + ("&after=%s" % after if after else "")
        status, answer = hflib.request(port, "GET", path)
        check(status == 200, "seat listing answered %d" % status)
        for seat in answer["seats"]:
            seats[seat["id"]] = seat["status"]
        after = answer["next"]
        if not after:
            return seats


def user_orders(port, user, unit="event=" + EVENT):
    """Every order of the user on the event (or unit, a calendar=C filter), page after page (a
    page holds at most 1,000)."""
    orders, after = [], ""
    while True:
        status, answer = hflib.request(port, "GET", "/v1/users/%s/orders?%s&limit=1000%s"
                                       % (user, unit, after))
        check(status == 200, "orders of %s answered %d" % (user, status))
        orders += answer["orders"]
        if not answer["next"]:
            return orders
        after = "&after=" + answer["next"]


def check_invariants(port, model):
    """Step 3: the state is exactly what the log says, and every count adds up."""
    seats = all_seats(port)
    check(sorted(seats) == sorted(SEATS), "the listing has other seats than the layout")
    # The users' order lists are the orders of the log: nothing unknown was sold.
    listed = {}
    for user in sorted(model.users):
        for order in user_orders(port, user) + user_orders(port, user, "calendar=" + CALENDAR):
            listed[order["order_id"]] = order
    check(set(listed) == set(model.orders), "orders listed %d, logged %d; unknown: %s" % (
        len(listed), len(model.orders), sorted(set(listed) ^ set(model.orders))[:5]))
    for order_id, order in listed.items():
        if order["status"] == "exchanged":
            new = listed.get(order.get("replaced_by"))
            check(new is not None and new.get("replaces") == order_id,
                  "exchanged order %s is replaced by %s, which does not replace it" % (
                      order_id, order.get("replaced_by")))
    owner = {}
    pool_sold = 0
    for order_id, order in listed.items():
        check(order["status"] == model.orders[order_id]["status"],
              "order %s listed %s, logged %s" % (order_id, order["status"],
                                                  model.orders[order_id]["status"]))
        if order["status"] != "confirmed":
            continue
        for seat in order.get("seats", []):
            check(seat not in owner, "seat %s is in two confirmed orders: %s and %s" % (
                seat, owner.get(seat), order_id))
            owner[seat] = order_id
        pool_sold += order.get("pools", {}).get(POOL[0], 0)
    sold = {s for s, status in seats.items() if status == "sold"}
    check(sold == set(owner), "sold seats != seats of confirmed orders (sold only: %s; "
          "ordered only: %s)" % (sorted(sold - set(owner))[:5], sorted(set(owner) - sold)[:5]))
    held_expected, pool_held = set(), 0
    for hold_id, hold in model.holds.items():
        if hold["status"] == "held":
            # An exchange hold's kept seats stay sold to its old order (API.md section 13).
            old = hold.get("exchange_for")
            kept = set(model.orders[old]["seats"]) if old else set()
            for seat in hold["seats"]:
                if seat in kept:
                    continue
                check(seat not in held_expected, "seat %s in two held holds" % seat)
                held_expected.add(seat)
            pool_held += hold["pools"].get(POOL[0], 0)
    held = {s for s, status in seats.items() if status == "held"}
    check(held == held_expected, "held seats != seats of held holds (%s / %s)" % (
        sorted(held - held_expected)[:5], sorted(held_expected - held)[:5]))
    allocated = {s for s, status in seats.items() if status == "allocated"}
    check(allocated == set(ALLOCATED), "allocated seats %s, set aside %s" % (
        sorted(allocated), ALLOCATED))
    status, summary = hflib.request(port, "GET", "/v1/events/%s" % EVENT)
    check(status == 200, "event summary answered %d" % status)
    counts = summary["counts"]
    expected = {"available": len(SEATS) - len(held) - len(sold) - len(allocated),
                "held": len(held), "sold": len(sold), "allocated": len(allocated)}
    check(counts == expected, "summary counts %s, listing %s" % (counts, expected))
    for section in summary["sections"]:
        c = section["counts"]
        in_section = [s for s in SEATS if s.startswith(section["id"] + "-")]
        check(c["available"] + c["held"] + c["sold"] + c["allocated"] == len(in_section),
              "section %s counts %s do not add up" % (section["id"], c))
        check(c["sold"] == sum(1 for s in in_section if s in sold),
              "section %s sold count %d is wrong" % (section["id"], c["sold"]))
    pool = summary["pools"][0]
    check(pool["available"] + pool["held"] + pool["sold"] + pool["allocated"] == pool["capacity"],
          "pool counts do not add up: %s" % pool)
    check(pool["sold"] == pool_sold, "pool sold %d, confirmed orders %d" % (pool["sold"], pool_sold))
    check(pool["held"] == pool_held, "pool held %d, held holds %d" % (pool["held"], pool_held))
    check_calendar(port, model)
    return len(sold), len(held)


def nights_of(start, end):
    day, last = datetime.date.fromisoformat(start), datetime.date.fromisoformat(end)
    while day < last:
        yield day.isoformat()
        day += datetime.timedelta(days=1)


def check_calendar(port, model):
    """Each night of each resource: free = capacity - what the held holds and the confirmed
    orders of the log take over it (never below 0), as /availability answers from memory."""
    taken = {}
    live = [h for h in model.holds.values() if h["status"] == "held"]
    live += [o for o in model.orders.values() if o["status"] == "confirmed"]
    for entry in live:
        for resource, start, end, quantity in entry["items"]:
            for day in nights_of(start, end):
                taken[(resource, day)] = taken.get((resource, day), 0) + quantity
    for resource, capacity, _ in RESOURCES:
        status, answer = hflib.request(port, "GET", "/v1/calendars/%s/availability?resource=%s"
                                       "&from=%s&to=%s" % (CALENDAR, resource, night(0),
                                                           night(NIGHTS)))
        check(status == 200, "availability answered %d" % status)
        for segment in answer["segments"]:
            for day in nights_of(segment["from"], segment["to"]):
                expected = capacity - taken.get((resource, day), 0)
                check(expected >= 0, "%s on %s is taken past its capacity" % (resource, day))
                check(segment["available"] == expected, "%s on %s: %d free, the log says %d" % (
                    resource, day, segment["available"], expected))
    status, summary = hflib.request(port, "GET", "/v1/calendars/%s" % CALENDAR)
    check(status == 200, "calendar summary answered %d" % status)
    held = sum(1 for h in model.holds.values() if h["status"] == "held" and h["items"])
    check(summary["holds_active"] == held, "calendar holds_active %d, the log's %d" % (
        summary["holds_active"], held))


def run_round(server, model, rng, args, number):
    stop = threading.Event()
    workers = []
    for w in range(args.workers):
        user = "w%d" % w
        model.users.add(user)
        workers.append(Worker(server.port, user, model, rng.randrange(2**32), stop))
    for worker in workers:
        worker.start()
    load_s = rng.uniform(0.02, args.max_load_s)
    time.sleep(load_s)
    server.kill(expect_alive=True)
    for worker in workers:
        worker.join(15)
        check(not worker.is_alive(), "a client thread did not stop after the kill")
        if worker.error:
            raise worker.error
    answered = sum(1 for w in workers for entry in w.log if entry[4] is not None)
    in_flight = len(model.pending)
    server.start()
    checked = check_acknowledged(server.port, model)
    retried = resolve_pending(server.port, model)
    sold, held = check_invariants(server.port, model)
    print("ok round %d: killed after %.2fs, %d answers, %d in flight; %d objects checked, "
          "%d retried; %d sold, %d held" % (number, load_s, answered, in_flight, checked,
                                            retried, sold, held), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="build/holdfast")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--max-load-s", type=float, default=1.5)
    parser.add_argument("--finished-holds", type=int, default=None,
                        help="the server's --finished-holds (0: every finished hold is forgotten "
                             "once durable and read back from the store when checked)")
    parser.add_argument("--store-url", default=None,
                        help="a PostgreSQL URL: the server stores in a new database there")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print("crash test seed %d (rerun: --seed %d), %d rounds, binary %s" % (
        seed, seed, args.rounds, args.binary), flush=True)
    rng = random.Random(seed)
    model = Model()
    extra = [] if args.finished_holds is None else ["--finished-holds", str(args.finished_holds)]
    if args.store_url:
        extra += ["--store", hflib.postgres_database(args.store_url,
                                                     "crash_%d_%d" % (seed, os.getpid()))]
    server = hflib.Server(args.binary, extra_args=extra)
    passed = failed = 0
    try:
        server.start()
        status, answer = hflib.request(server.port, "POST", "/v1/events", event_definition())
        check(status == 201, "event create answered %d: %s" % (status, answer))
        status, answer = hflib.request(server.port, "POST", "/v1/events/%s/allocations" % EVENT,
                                       {"id": ALLOCATION, "seats": ALLOCATED})
        check(status == 201, "allocation answered %d: %s" % (status, answer))
        status, answer = hflib.request(server.port, "POST", "/v1/calendars", calendar_definition())
        check(status == 201, "calendar create answered %d: %s" % (status, answer))
        for number in range(1, args.rounds + 1):
            try:
                run_round(server, model, rng, args, number)
                passed += 1
            except (Failure, OSError, http.client.HTTPException, KeyError) as error:
                failed += 1
                print("FAIL round %d (seed %d): %s" % (number, seed, error), flush=True)
                print(server.log_tail(), flush=True)
                break
        if not failed:
            code = server.stop()
            if code != 0:
                failed += 1
                print("FAIL clean shutdown after the rounds: exit code %s" % code)
            else:
                passed += 1
                print("ok clean shutdown; %d acknowledged changes in all, %d exchanges" % (
                    model.acknowledged, model.exchanged))
                if not args.store_url:
                    checked = subprocess.run([args.binary, "check", "--data", server.data_dir],
                                             capture_output=True, text=True, timeout=120)
                    if checked.returncode != 0:
                        failed += 1
                        print("FAIL holdfast check on the data directory: %s" %
                              checked.stderr.strip()[-500:])
                    else:
                        passed += 1
                        print("ok holdfast check on the data directory")
    finally:
        server.cleanup() if not failed else server.kill()
        if failed:
            print("data directory kept: %s" % server.data_dir)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
