"""The exchange across two owners (API.md sections 11 and 13, docs/DESIGN.md "Exchanges across
two owners"): the old unit's side, its internal routes (/v1/cluster/..., with the API key) that
read, lock and finish an old order, the lock's refusals (a cancel, another lock), the lock kept
across a kill -9 of its owner, and the resolution of a stale lock by the decision of the hold's
unit, kill -9 at the fault points, and N losing its unit between the lock and the decision.
Two or three nodes on one PostgreSQL (run.py --store-url)."""

import hashlib
import hmac
import json
import os
import signal
import shutil
import sqlite3
import subprocess
import threading
import time

from harness import (Server, check, check_equal, create_event, expect, postgres_rows, skip,
                     store_url_for, uid, user)
import harness

API_KEY = "cluster-exchange-key"
# A lock is resolved once older than 2 s, asked about once a second: 2 s + a period + a round
# trip, with room for a loaded machine.
RESOLVED_LIMIT_S = 8.0
# The contract's bound on a takeover after a kill.
TAKEOVER_LIMIT_S = 10.0


class FaultyServer(Server):
    """A node that kills itself at a fault point of the exchange (HOLDFAST_FAULT_EXCHANGE,
    cluster/exchange.h); point None: none."""

    def __init__(self, point=None, **kwargs):
        super().__init__(**kwargs)
        self.point = point

    def _spawn(self, environment):
        environment = dict(environment)
        if self.point:
            environment["HOLDFAST_FAULT_EXCHANGE"] = self.point
        return Server._spawn(self, environment)


def nodes(count=2, faults=None, extra=()):
    """count nodes named A, B... with the API key, on one fresh database; faults: a node's
    name to the fault point it dies at; extra: more arguments of every node."""
    if harness.STORE_URL is None:
        skip("several nodes need PostgreSQL (--store-url)")
    faults = faults or {}
    first = FaultyServer(faults.get("A"), api_key=API_KEY,
                         extra_args=["--node-id", "A"] + list(extra))
    url = store_url_for(first.data_dir)
    first.extra_args += ["--store", url]
    first.start()
    started = [first]
    for index in range(1, count):
        name = chr(ord("A") + index)
        started.append(FaultyServer(faults.get(name), api_key=API_KEY, extra_args=[
            "--node-id", name, "--store", url] + list(extra)).start())
    return started


def order_on(client, event_id, user_id, seats):
    """A confirmed order of user_id for the seats, paid: its id."""
    held = expect(client.post("/v1/events/%s/holds" % event_id,
                              {"user_id": user_id, "seats": seats}), 201, what="hold")
    order = expect(client.post("/v1/holds/%s/commit" % held["reservation_id"],
                               {"user_id": user_id, "payment_ref": uid("pi")}), 200,
                   what="commit")
    return order["order_id"]


def lock(client, order_id, hold_id, unit):
    return client.post("/v1/cluster/orders/%s/lock" % order_id, {"hold": hold_id, "unit": unit})


def cancel(client, order_id, user_id):
    return client.post("/v1/orders/%s/cancel" % order_id, {"user_id": user_id})


def wait_unlocked(client, order_id, limit_s):
    """Polls the order until it is no longer locked; returns it."""
    start = time.monotonic()
    while True:
        read = expect(client.get("/v1/cluster/orders/%s" % order_id), 200, what="the order")
        if read["locked_by"] is None or time.monotonic() - start > limit_s:
            return read
        time.sleep(0.2)


def test_the_internal_routes_need_the_api_key():
    a, _ = nodes(2)
    event_id = uid("ev")
    client = a.client()
    create_event(client, event_id)
    order_id = order_on(client, event_id, user(), ["FLOOR-A-1"])
    anonymous = a.client(api_key=None)
    expect(anonymous.get("/v1/cluster/orders/%s" % order_id), 401, what="no key")
    expect(lock(anonymous, order_id, "res_x", "elsewhere"), 401, what="a lock without the key")


def test_a_lock_through_the_other_node_refuses_a_cancel_and_other_locks():
    a, b = nodes(2)
    event_id = uid("ev")
    client_a, client_b = a.client(), b.client()
    create_event(client_a, event_id)
    user_id = user()
    order_id = order_on(client_a, event_id, user_id, ["FLOOR-A-1", "FLOOR-A-2"])
    read = expect(client_b.get("/v1/cluster/orders/%s" % order_id), 200, what="read through B")
    check_equal((read["status"], read["user_id"], read["unit"], read["locked_by"]),
                ("confirmed", user_id, event_id, None), "the order as N reads it")
    check_equal(read["total"], 90000, "its total")
    expect(client_b.get("/v1/cluster/orders/ord_nothing"), 404, "order_not_found",
           what="an unknown order")
    expect(lock(client_b, order_id, "", "u"), 400, "invalid_request", field="hold",
           what="a lock without its hold")
    # The hold's unit answers for it: a hold no unit has was never committed.
    hold_id = "res_" + "0" * 36
    locked = lock(client_b, order_id, hold_id, "an_event_elsewhere")
    document = expect(locked, 200, what="the lock through B")
    check_equal((document["status"], document["locked_by"]), ("confirmed", hold_id),
                "a locked order reads confirmed")
    check_equal(locked.header("holdfast-node"), "A", "locked by the order's owner")
    expect(lock(client_b, order_id, hold_id, "an_event_elsewhere"), 200, what="the same lock again")
    expect(lock(client_a, order_id, "res_" + "1" * 36, "x"), 409, "order_not_active",
           what="another hold's lock")
    expect(cancel(client_b, order_id, user_id), 409, "order_not_active", what="a cancel")
    finished = client_b.post("/v1/cluster/orders/%s/exchange" % order_id,
                             {"hold": "res_" + "1" * 36, "order": "ord_" + "2" * 36})
    expect(finished, 409, "order_not_active", what="a finish by another hold")
    # No unit has that hold: the resolution ends the lock (presumed abort).
    read = wait_unlocked(client_b, order_id, RESOLVED_LIMIT_S)
    check_equal((read["status"], read["locked_by"]), ("confirmed", None),
                "the lock resolved not committed")
    expect(cancel(client_b, order_id, user_id), 200, what="a cancel once unlocked")
    expect(lock(client_b, order_id, hold_id, "x"), 409, "order_not_active",
           what="a lock of a cancelled order")


def test_a_finish_makes_the_old_order_exchanged_and_frees_its_seats():
    a, b = nodes(2)
    event_id = uid("ev")
    client_a, client_b = a.client(), b.client()
    create_event(client_a, event_id)
    user_id = user()
    order_id = order_on(client_a, event_id, user_id, ["FLOOR-A-3"])
    hold_id, new_order = "res_" + "3" * 36, "ord_" + "4" * 36
    expect(lock(client_b, order_id, hold_id, "an_event_elsewhere"), 200, what="the lock")
    body = {"hold": hold_id, "order": new_order}
    done = expect(client_b.post("/v1/cluster/orders/%s/exchange" % order_id, body), 200,
                  what="the finish")
    check_equal((done["status"], done["replaced_by"], done["locked_by"]),
                ("exchanged", new_order, None), "the old order after the finish")
    again = expect(client_b.post("/v1/cluster/orders/%s/exchange" % order_id, body), 200,
                   what="the finish repeated")
    check_equal(again["status"], "exchanged", "a repeat changes nothing")
    public = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the order")
    check_equal((public["status"], public.get("replaced_by")), ("exchanged", new_order),
                "the public order")
    expect(client_b.post("/v1/events/%s/holds" % event_id,
                         {"user_id": user(), "seats": ["FLOOR-A-3"]}), 201,
           what="the old order's seat is free")


def test_a_lock_outlives_a_kill_of_its_owner():
    a, b = nodes(2)
    event_id = uid("ev")
    client_a, client_b = a.client(), b.client()
    create_event(client_a, event_id)
    user_id = user()
    order_id = order_on(client_a, event_id, user_id, ["FLOOR-B-1"])
    # The hold is a real one of B's event, held: not committed, and no commit in flight.
    other = uid("ev")
    create_event(client_b, other)
    held = expect(client_b.post("/v1/events/%s/holds" % other,
                                {"user_id": user_id, "seats": ["FLOOR-A-1"]}), 201, what="hold")
    hold_id = held["reservation_id"]
    expect(lock(client_b, order_id, hold_id, other), 200, what="the lock")
    check_equal(postgres_rows(a.data_dir, "SELECT event_id, hold_id, hold_unit FROM order_locks"
                              " WHERE order_id = '%s'" % order_id), [[event_id, hold_id, other]],
                "the lock's row")
    a.kill()
    start = time.monotonic()
    refused = None
    while time.monotonic() - start < TAKEOVER_LIMIT_S + RESOLVED_LIMIT_S:
        refused = cancel(client_b, order_id, user_id)
        if refused.status != 503:
            break
        time.sleep(0.2)
    # Taken over within the lease, the lock loaded with the order: either still locked (409)
    # or already resolved not committed by B's decision (the cancel went through).
    check(refused.status in (409, 200), "the cancel after the takeover: %r" % refused)
    if refused.status == 409:
        check_equal(refused.code, "order_not_active", "the locked order's cancel")
        read = wait_unlocked(client_b, order_id, RESOLVED_LIMIT_S)
        check_equal(read["locked_by"], None, "resolved after the takeover")
        expect(cancel(client_b, order_id, user_id), 200, what="the cancel once resolved")
    decision = expect(client_b.get("/v1/cluster/holds/%s/decision" % hold_id), 200,
                      what="the decision")
    check_equal(decision["decision"], "not_committed", "a held hold's decision")


def test_a_lock_on_one_node_outlives_a_restart_and_is_resolved():
    """Either store: the lock is a row, loaded at start, and the node resolves it itself."""
    server = Server(api_key=API_KEY).start()
    client = server.client()
    event_id = uid("ev")
    create_event(client, event_id)
    user_id = user()
    order_id = order_on(client, event_id, user_id, ["BALC-A-1"])
    hold_id = "res_" + "5" * 36
    expect(lock(client, order_id, hold_id, "an_event_elsewhere"), 200, what="the lock")
    restarted = server.cycle(kill=True)
    client = restarted.client()
    # A restart on PostgreSQL waits out the killed process's lease (5 s): the lock is stale by
    # then and may be resolved at once; on SQLite it is still young, and refuses the cancel.
    refused = cancel(client, order_id, user_id)
    check(refused.status in (409, 200), "the cancel after the restart: %r" % refused)
    if harness.STORE_URL is None:
        check_equal((refused.status, refused.code), (409, "order_not_active"),
                    "the cancel of an order locked before the restart")
    if refused.status == 409:
        read = wait_unlocked(client, order_id, RESOLVED_LIMIT_S)
        check_equal((read["status"], read["locked_by"]), ("confirmed", None), "resolved")
        expect(cancel(client, order_id, user_id), 200, what="the cancel once resolved")
    logs = restarted.stderr_text() + restarted.stdout_text()
    check("exchange lock resolved" in logs and order_id in logs,
          "the restarted node loaded the lock and resolved it")


def two_owners(a, b):
    """An event owned by A with a paid order of a user on a FLOOR seat (45000), and an event
    owned by B: (old event, new event, user, old order id)."""
    client_a, client_b = a.client(), b.client()
    old_event, new_event = uid("ev"), uid("ev")
    created = expect(client_a.post("/v1/events", {"id": old_event, "sections": [
        {"id": "FLOOR", "price": 45000, "rows": [{"id": "A", "seats": 10}]}]}), 201,
        what="the old event on A")
    check_equal(created.get("id", old_event), old_event, "the old event")
    expect(client_b.post("/v1/events", {"id": new_event, "sections": [
        {"id": "BALC", "price": 12000, "rows": [{"id": "A", "seats": 10}]},
        {"id": "VIP", "price": 90000, "rows": [{"id": "A", "seats": 10}]}]}), 201,
        what="the new event on B")
    user_id = user()
    order_id = order_on(client_a, old_event, user_id, ["FLOOR-A-1"])
    return old_event, new_event, user_id, order_id


def test_an_exchange_across_two_owners():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    old_event, new_event, user_id, order_id = two_owners(a, b)
    # Through A, which forwards the hold to B, the new event's owner, which reads the order.
    held = client_a.post("/v1/events/%s/holds" % new_event,
                         {"user_id": user_id, "seats": ["BALC-A-1"], "exchange_for": order_id})
    document = expect(held, 201, what="the exchange hold of another owner's order")
    check_equal(held.header("holdfast-node"), "B", "placed by the new event's owner")
    check_equal((document["exchange_for"], document["difference"]), (order_id, 12000 - 45000),
                "the hold names the old order and the difference")
    expect(client_b.post("/v1/events/%s/holds" % new_event,
                         {"user_id": user(), "seats": ["BALC-A-2"], "exchange_for": order_id}),
           403, "not_owner", what="another user's exchange")
    expect(client_b.post("/v1/events/%s/holds" % new_event,
                         {"user_id": user_id, "seats": ["BALC-A-2"],
                          "exchange_for": "ord_" + "9" * 36}),
           404, "order_not_found", what="an order no unit has")
    hold_id = document["reservation_id"]
    committed = client_a.post("/v1/holds/%s/commit" % hold_id, {"user_id": user_id})
    new = expect(committed, 200, what="the commit through A")
    check_equal((new["status"], new.get("replaces")), ("confirmed", order_id),
                "the new order replaces the old")
    old = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("replaced_by")), ("exchanged", new["order_id"]),
                "the old order exchanged")
    check_equal(expect(client_a.get("/v1/cluster/orders/%s" % order_id), 200,
                       what="the old order's lock")["locked_by"], None, "the lock ended")
    decision = expect(client_a.get("/v1/cluster/holds/%s/decision" % hold_id), 200,
                      what="the decision")
    check_equal((decision["decision"], decision["order_id"]), ("committed", new["order_id"]),
                "the decision")
    refunds = [r for r in expect(client_a.get("/v1/refunds?limit=1000"), 200)["refunds"]
               if r["reservation_id"] == hold_id]
    check_equal([(r["reason"], r["amount"], r["status"]) for r in refunds],
                [("exchange", 45000 - 12000, "pending")], "the refund of the difference")
    expect(client_b.post("/v1/events/%s/holds" % old_event,
                         {"user_id": user(), "seats": ["FLOOR-A-1"]}), 201,
           what="the old order's seat is free")
    again = client_b.post("/v1/holds/%s/commit" % hold_id, {"user_id": user_id})
    check_equal((again.status, again.json.get("order_id")), (200, new["order_id"]),
                "a second commit answers the new order")


def test_a_positive_difference_needs_a_payment_and_a_cancelled_order_refuses():
    a, b = nodes(2)
    client_b = b.client()
    _, new_event, user_id, order_id = two_owners(a, b)
    held = expect(client_b.post("/v1/events/%s/holds" % new_event,
                                {"user_id": user_id, "seats": ["VIP-A-1"],
                                 "exchange_for": order_id}), 201, what="a dearer exchange")
    check_equal(held["difference"], 90000 - 45000, "the difference")
    hold_id = held["reservation_id"]
    expect(client_b.post("/v1/holds/%s/commit" % hold_id, {"user_id": user_id}), 400,
           "invalid_request", field="payment_ref", what="no payment for the difference")
    # The refused commit is in flight no more: its lock is resolved not committed.
    read = wait_unlocked(client_b, order_id, RESOLVED_LIMIT_S)
    check_equal(read["status"], "confirmed", "the old order as it was")
    expect(cancel(client_b, order_id, user_id), 200, what="the old order cancelled meanwhile")
    expect(client_b.post("/v1/holds/%s/commit" % hold_id,
                         {"user_id": user_id, "payment_ref": uid("pi")}), 409,
           "order_not_active", what="the commit of a cancelled order's exchange")
    check_equal(expect(client_b.get("/v1/holds/%s" % hold_id), 200, what="the hold")["status"],
                "held", "the hold stays")


def check_run(path):
    """holdfast check of the SQLite file at path: (exit code, stderr)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    done = subprocess.run([harness.BINARY, "check", "--store", "sqlite:" + path],
                          capture_output=True, text=True, env=environment, timeout=60)
    return done.returncode, done.stderr


def test_holdfast_check_allows_a_decided_exchange_only_while_its_lock_holds():
    """The store between a decision and its finish, made from a finished exchange by turning
    its old order back: confirmed, its items active, locked by the new order's committed hold."""
    harness.skip_on_postgres("holdfast check reads the SQLite file (holdfast.db)")
    server = Server(api_key=API_KEY).start()
    client = server.client()
    old_event, new_event = uid("ev"), uid("ev")
    create_event(client, old_event)
    create_event(client, new_event)
    user_id = user()
    old_order = order_on(client, old_event, user_id, ["FLOOR-A-1"])
    held = expect(client.post("/v1/events/%s/holds" % new_event,
                              {"user_id": user_id, "seats": ["FLOOR-A-1"],
                               "exchange_for": old_order}), 201, what="the exchange hold")
    expect(client.post("/v1/holds/%s/commit" % held["reservation_id"], {"user_id": user_id}),
           200, what="the exchange")
    server.stop()
    original = os.path.join(server.data_dir, "holdfast.db")
    decided = ("UPDATE orders SET status = 'confirmed', replaced_by = NULL WHERE id = '%s';"
               "UPDATE order_items SET active = 1 WHERE order_id = '%s';" % (old_order, old_order))
    lock_row = ("INSERT INTO order_locks VALUES('%s', '%s', '%s', '%s', 1);"
                % (old_order, old_event, held["reservation_id"], new_event))
    cases = [("", 0), (decided + lock_row, 0), (decided, 1),
             (decided + lock_row.replace(held["reservation_id"], "res_" + "7" * 36), 1),
             (decided + lock_row + "UPDATE holds SET status = 'released', order_id = NULL"
              " WHERE id = '%s';" % held["reservation_id"], 1)]
    for statements, expected in cases:
        path = os.path.join(harness.make_temp_dir(), "copy.db")
        shutil.copy(original, path)
        database = sqlite3.connect(path)
        database.executescript(statements)
        database.commit()
        database.close()
        code, err = check_run(path)
        check_equal(code, expected, "check of %r (stderr %r)" % (statements, err))
        if expected:
            check("broken invariant" in err, "the broken invariant named: %r" % err)


# ---- a payment webhook for an exchange across two owners ----

WEBHOOK_SECRET = "whsec_cluster_exchange"


def webhook(client, reservation_id, amount, intent=None):
    """A payment.succeeded delivery for reservation_id, signed now: the response."""
    body = json.dumps({"id": uid("evt"), "type": "payment.succeeded",
                       "payment_intent_id": intent or uid("pi"),
                       "reservation_id": reservation_id, "amount": amount}).encode()
    t = int(time.time())
    mac = hmac.new(WEBHOOK_SECRET.encode(), ("%d." % t).encode() + body, hashlib.sha256)
    return client.post("/v1/webhooks/payments", raw=body,
                       headers={"Holdfast-Signature": "t=%d,v1=%s" % (t, mac.hexdigest())})


def test_a_payment_webhook_commits_an_exchange_across_two_owners():
    a, b = nodes(2, extra=["--webhook-secret", WEBHOOK_SECRET])
    client_a, client_b = a.client(), b.client()
    _, new_event, user_id, order_id = two_owners(a, b)
    held = expect(client_b.post("/v1/events/%s/holds" % new_event,
                                {"user_id": user_id, "seats": ["VIP-A-1"],
                                 "exchange_for": order_id}), 201, what="a dearer exchange")
    hold_id, intent = held["reservation_id"], uid("pi")
    # Through A, the old order's owner: forwarded to B, the hold's, which locks the order on A.
    paid = webhook(a.client(api_key=None), hold_id, 90000 - 45000, intent)
    outcome = expect(paid, 200, what="the webhook paying the difference")
    check_equal(paid.header("holdfast-node"), "B", "decided by the hold's owner")
    check_equal(outcome["result"], "committed", "the delivery's result")
    new = expect(client_a.get("/v1/orders/%s" % outcome["order_id"]), 200, what="the new order")
    check_equal((new["status"], new.get("replaces"), new["payment_ref"], new["seats"]),
                ("confirmed", order_id, intent, ["VIP-A-1"]), "the new order, paid by the intent")
    old = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("replaced_by")), ("exchanged", outcome["order_id"]),
                "the old order exchanged")
    check_equal(expect(client_b.get("/v1/cluster/orders/%s" % order_id), 200)["locked_by"], None,
                "the lock ended")
    again = expect(webhook(client_b, hold_id, 90000 - 45000, intent), 200, what="a repeat")
    check_equal((again["result"], again.get("order_id")), ("committed", outcome["order_id"]),
                "the repeat answers the same order")


def test_a_payment_webhook_across_two_owners_refunds_what_it_cannot_commit():
    a, b = nodes(2, extra=["--webhook-secret", WEBHOOK_SECRET])
    client_a, client_b = a.client(), b.client()
    _, new_event, user_id, order_id = two_owners(a, b)
    holds = [expect(client_b.post("/v1/events/%s/holds" % new_event,
                                  {"user_id": user_id, "seats": [seat],
                                   "exchange_for": order_id}), 201,
                    what="an exchange hold")["reservation_id"] for seat in ("VIP-A-1", "VIP-A-2")]
    wrong = expect(webhook(client_b, holds[0], 90000), 200, what="the whole price paid")
    check_equal((wrong["result"], wrong["reason"]), ("refund_required", "amount_mismatch"),
                "a wrong amount refunded")
    # The lock taken for it is resolved not committed: the order as it was, then cancelled.
    read = wait_unlocked(client_b, order_id, RESOLVED_LIMIT_S)
    check_equal((read["status"], read["locked_by"]), ("confirmed", None), "the old order kept")
    expect(cancel(client_a, order_id, user_id), 200, what="the old order cancelled")
    late = expect(webhook(client_a, holds[1], 90000 - 45000), 200, what="a payment too late")
    check_equal((late["result"], late["reason"]), ("refund_required", "order_not_active"),
                "the cancelled order's exchange refunded")
    for hold_id in holds:
        check_equal(expect(client_b.get("/v1/holds/%s" % hold_id), 200)["status"], "held",
                    "the hold unchanged")


# ---- a calendar's hold of another node's order ----

def night(offset):
    """The UTC date offset days from today, as a night calendar writes it."""
    import datetime
    today = datetime.datetime.now(datetime.timezone.utc).date()
    return (today + datetime.timedelta(days=offset)).isoformat()


def test_a_calendar_hold_exchanges_another_nodes_order():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    old_event, _, user_id, order_id = two_owners(a, b)
    calendar_id = uid("hotel")
    expect(client_b.post("/v1/calendars", {"id": calendar_id, "unit": "night", "resources": [
        {"id": "DBL", "capacity": 2, "price": 15000}]}), 201, what="a calendar on B")
    stay = {"user_id": user_id, "exchange_for": order_id,
            "items": [{"resource": "DBL", "from": night(10), "to": night(12)}]}
    expect(client_b.post("/v1/calendars/%s/holds" % calendar_id,
                         dict(stay, user_id=user())), 403, "not_owner", what="another's order")
    expect(client_b.post("/v1/calendars/%s/holds" % calendar_id,
                         dict(stay, exchange_for="ord_" + "8" * 36)), 404, "order_not_found",
           what="an order no unit has")
    # Through A, the old order's owner: forwarded to B, which reads the order from A.
    placed = client_a.post("/v1/calendars/%s/holds" % calendar_id, stay)
    held = expect(placed, 201, what="the calendar's exchange hold")
    check_equal(placed.header("holdfast-node"), "B", "placed by the calendar's owner")
    check_equal((held["exchange_for"], held["difference"]), (order_id, 30000 - 45000),
                "the hold names the old order and the difference")
    read = expect(client_b.get("/v1/holds/%s" % held["reservation_id"]), 200, what="the hold")
    check_equal((read["exchange_for"], read["difference"]), (order_id, 30000 - 45000),
                "read back")
    check_equal(postgres_rows(a.data_dir, "SELECT exchange_for FROM holds WHERE id = '%s'"
                              % held["reservation_id"]), [[order_id]], "the hold's row names it")
    new = expect(client_a.post("/v1/holds/%s/commit" % held["reservation_id"],
                               {"user_id": user_id}), 200, what="the commit through A")
    check_equal((new["status"], new.get("replaces")), ("confirmed", order_id),
                "the stay replaces the seat order")
    old = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("replaced_by")), ("exchanged", new["order_id"]),
                "the old order exchanged")
    refunds = [r for r in expect(client_a.get("/v1/refunds?limit=1000"), 200)["refunds"]
               if r["reservation_id"] == held["reservation_id"]]
    check_equal([(r["reason"], r["amount"]) for r in refunds], [("exchange", 15000)],
                "the refund of the difference")
    expect(client_b.post("/v1/events/%s/holds" % old_event,
                         {"user_id": user(), "seats": ["FLOOR-A-1"]}), 201,
           what="the old order's seat is free")


def test_a_calendar_exchange_hold_outlives_a_kill_of_its_owner():
    """B killed once the hold is durable: A takes the calendar over, the hold restored with its
    old order (now in the same core), and its commit exchanges the order."""
    a, b = nodes(2)
    client_a = a.client(client_timeout=20)
    _, _, user_id, order_id = two_owners(a, b)
    calendar_id = uid("hotel")
    expect(b.client().post("/v1/calendars", {"id": calendar_id, "unit": "night", "resources": [
        {"id": "DBL", "capacity": 2, "price": 50000}]}), 201, what="a calendar on B")
    held = expect(b.client().post("/v1/calendars/%s/holds" % calendar_id, {
        "user_id": user_id, "exchange_for": order_id, "ttl_s": 600,
        "items": [{"resource": "DBL", "from": night(10), "to": night(11)}]}), 201,
        what="the calendar's exchange hold")
    b.kill()
    start, read = time.monotonic(), None
    while time.monotonic() - start < TAKEOVER_LIMIT_S + 5:
        read = client_a.get("/v1/holds/%s" % held["reservation_id"])
        if read.status == 200:
            break
        time.sleep(0.25)
    document = expect(read, 200, what="the hold after the takeover")
    check_equal((document["status"], document["exchange_for"], document["difference"]),
                ("held", order_id, 50000 - 45000), "restored as the exchange it was")
    new = expect(client_a.post("/v1/holds/%s/commit" % held["reservation_id"],
                               {"user_id": user_id, "payment_ref": uid("pi")}), 200,
                 what="the commit on A")
    check_equal(new.get("replaces"), order_id, "the stay replaces the order")
    check_equal(expect(client_a.get("/v1/orders/%s" % order_id), 200)["status"], "exchanged",
                "the old order exchanged")


# ---- kill -9 of either owner at each step ----

def settled(client, order_id, hold_id, limit_s):
    """Waits (through the surviving node) until the old order is unlocked; returns "exchanged"
    or "kept" after checking that exactly one of the two orders is confirmed."""
    start, read = time.monotonic(), None
    while time.monotonic() - start < limit_s:
        try:
            response = client.get("/v1/cluster/orders/%s" % order_id)
            if response.status == 200 and response.json["locked_by"] is None:
                read = response.json
                break
        except OSError:
            pass
        time.sleep(0.25)
    check(read is not None, "the old order unlocked within %.0f s" % limit_s)
    hold = expect(client.get("/v1/holds/%s" % hold_id), 200, what="the exchange hold")
    if read["status"] == "exchanged":
        new = expect(client.get("/v1/orders/%s" % read["replaced_by"]), 200, what="the new order")
        check_equal((new["status"], new.get("replaces"), hold["status"], hold.get("order_id")),
                    ("confirmed", order_id, "confirmed", new["order_id"]),
                    "the new order confirmed, replacing the old, by the hold")
        return "exchanged"
    check_equal(read["status"], "confirmed", "the old order, not exchanged")
    check(hold["status"] != "confirmed", "the hold not committed: %r" % hold)
    return "kept"


def crash_round(point, dying):
    """An exchange (old order on A, the new event on B) with node dying killed at point;
    returns the outcome (settled) and the commit's status (None: no answer)."""
    a, b = nodes(2, faults={dying: point})
    _, new_event, user_id, order_id = two_owners(a, b)
    client_b = b.client(client_timeout=20)
    held = expect(client_b.post("/v1/events/%s/holds" % new_event,
                                {"user_id": user_id, "seats": ["BALC-A-1"], "ttl_s": 600,
                                 "exchange_for": order_id}), 201, what="the exchange hold")
    try:
        status = client_b.post("/v1/holds/%s/commit" % held["reservation_id"],
                               {"user_id": user_id}).status
    except OSError:
        status = None
    dead, survivor = (a, b) if dying == "A" else (b, a)
    check(dead.wait_exit(10) is not None, "%s killed itself at %s" % (dying, point))
    check(status in (None, 503), "the commit's answer when %s died at %s: %r" % (dying, point,
                                                                             status))
    outcome = settled(survivor.client(client_timeout=20), order_id, held["reservation_id"],
                      TAKEOVER_LIMIT_S + RESOLVED_LIMIT_S + 5)
    # The survivor resolved a lock it loaded (or made) of this order, or there was none.
    resolved = "exchange lock resolved" in survivor.stderr_text() + survivor.stdout_text()
    return outcome, resolved


def test_o_killed_before_its_lock_is_durable():
    check_equal(crash_round("o_lock_applied", "A"), ("kept", False),
                "nothing changed, no lock to resolve")


def test_o_killed_after_its_lock_is_durable_before_its_answer():
    check_equal(crash_round("o_lock_durable", "A"), ("kept", True),
                "the lock loaded by O's successor, resolved not committed")


def test_n_killed_after_the_lock_before_its_decision():
    check_equal(crash_round("n_lock_answered", "B"), ("kept", True), "resolved not committed")


def test_n_killed_after_its_decision_before_the_finish():
    check_equal(crash_round("n_decided", "B"), ("exchanged", True), "resolved committed")


def test_o_killed_with_the_finish_in_flight():
    check_equal(crash_round("o_finish", "A"), ("exchanged", True), "resolved committed")


def test_two_exchange_holds_of_one_order_the_first_commit_wins():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    _, new_event, user_id, order_id = two_owners(a, b)
    holds = [expect(client.post("/v1/events/%s/holds" % new_event,
                                {"user_id": user_id, "seats": [seat], "exchange_for": order_id}),
                    201, what="an exchange hold")["reservation_id"]
             for client, seat in ((client_a, "BALC-A-1"), (client_b, "BALC-A-2"))]
    first = expect(client_b.post("/v1/holds/%s/commit" % holds[0], {"user_id": user_id}), 200,
                   what="the first commit")
    expect(client_a.post("/v1/holds/%s/commit" % holds[1], {"user_id": user_id}), 409,
           "order_not_active", what="the second commit")
    old = expect(client_a.get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("replaced_by")), ("exchanged", first["order_id"]),
                "exchanged once, for the first")


def test_both_killed_after_the_decision():
    """N killed with its decision durable, then O killed too: two fresh nodes on the database
    take both units over, and the resolution finishes the exchange."""
    a, b = nodes(2, faults={"B": "n_decided"})
    _, new_event, user_id, order_id = two_owners(a, b)
    client_b = b.client(client_timeout=20)
    held = expect(client_b.post("/v1/events/%s/holds" % new_event,
                                {"user_id": user_id, "seats": ["BALC-A-1"],
                                 "exchange_for": order_id}), 201, what="the exchange hold")
    try:
        client_b.post("/v1/holds/%s/commit" % held["reservation_id"], {"user_id": user_id})
    except OSError:
        pass
    check(b.wait_exit(10) is not None, "B killed itself once decided")
    a.kill()
    url = store_url_for(a.data_dir)
    fresh = [Server(api_key=API_KEY, extra_args=["--node-id", name, "--store", url]).start()
             for name in ("C", "D")]
    outcome = settled(fresh[0].client(client_timeout=20), order_id, held["reservation_id"],
                      TAKEOVER_LIMIT_S + RESOLVED_LIMIT_S + 5)
    check_equal(outcome, "exchanged", "resolved committed after both were killed")


def served_by(server, path, names, limit_s):
    """Polls GET path through server until one of the nodes `names` serves it (a takeover of a
    dead or stopped owner's unit): that node's name, None after limit_s."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        try:
            read = server.client(client_timeout=20).get(path)
        except OSError:
            read = None
        if read is not None and read.status == 200 and read.header("holdfast-node") in names:
            return read.header("holdfast-node")
        time.sleep(0.2)
    return None


def stopped(server, limit_s):
    """Whether the node's process is stopped (SIGSTOP) within limit_s."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        with open("/proc/%d/stat" % server.process.pid) as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        time.sleep(0.05)
    return False


def test_n_losing_its_unit_between_the_lock_and_the_decision():
    """N stops (a long pause) with the old order locked and its decision not made: its lease
    lapses, another node takes the new event (C asked for it, or O, whose resolution asks the
    hold's unit), O's resolution is not committed and unlocks. N, resumed, decides in its
    memory, but its batch is never written (its session ended by the taker, or the lease's
    epoch): 503. The exchange committed again through C then goes through, once."""
    a, b, c = nodes(3, faults={"B": "n_lock_answered_stop"})
    old_event, new_event, user_id, order_id = two_owners(a, b)
    held = expect(b.client().post("/v1/events/%s/holds" % new_event,
                                  {"user_id": user_id, "seats": ["BALC-A-1"], "ttl_s": 600,
                                   "exchange_for": order_id}), 201, what="the exchange hold")
    hold_id = held["reservation_id"]
    result = {}

    def commit():
        try:
            result["status"] = b.client(client_timeout=60).post(
                "/v1/holds/%s/commit" % hold_id, {"user_id": user_id}).status
        except OSError:
            result["status"] = None

    committing = threading.Thread(target=commit, daemon=True)
    committing.start()
    check(stopped(b, 10), "B stopped between the lock and its decision")
    try:
        # The taker: C (asked for the event) or A (its resolution asking the hold's unit).
        taker = served_by(c, "/v1/events/%s" % new_event, ("A", "C"), TAKEOVER_LIMIT_S + 10)
        check(taker is not None, "the new event taken over by A or C")
        old = wait_unlocked(a.client(), order_id, TAKEOVER_LIMIT_S + RESOLVED_LIMIT_S)
        check_equal((old["status"], old["locked_by"]), ("confirmed", None),
                    "the lock resolved not committed while N is stopped")
    finally:
        b.process.send_signal(signal.SIGCONT)
    committing.join(30)
    check_equal(result.get("status"), 503, "N's late commit: the outcome unknown to it")
    time.sleep(2)
    check_equal(postgres_rows(a.data_dir, "SELECT id FROM orders WHERE event_id = '%s'"
                              % new_event), [], "no new order written by N after its unit left")
    hold = expect(c.client().get("/v1/holds/%s" % hold_id), 200, what="the hold")
    check_equal(hold["status"], "held", "the exchange hold still held")
    new = expect(c.client().post("/v1/holds/%s/commit" % hold_id, {"user_id": user_id}), 200,
                 what="the commit through C")
    check(new.get("status") == "confirmed", "the new order: %r" % new)
    old = expect(a.client().get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("replaced_by"), new.get("replaces")),
                ("exchanged", new["order_id"], order_id), "exchanged once, by the taker's commit")
    check_equal(len(postgres_rows(a.data_dir, "SELECT id FROM orders WHERE event_id = '%s'"
                                  % new_event)), 1, "one new order")


test_n_losing_its_unit_between_the_lock_and_the_decision.weight = 2.0
