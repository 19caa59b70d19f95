"""Payment webhooks and refunds (API.md section 7): the signature and its every refusal, each
outcome of a delivery, deduplication (concurrent, and across a restart and a kill -9),
forgotten holds, and the refunds list and completion."""

import concurrent.futures
import hashlib
import hmac
import json
import os
import re
import sqlite3
import time

import harness
from harness import (TIME_RE, Server, skip_on_postgres, check, check_equal, commit, create_event, expect,
                     get_hold, get_seat, hold, release, uid, user)

SECRET = "whsec_test_secret"
SERVER_OPTIONS = {"extra_args": ["--webhook-secret", SECRET]}
PATH = "/v1/webhooks/payments"
SEAT_PRICE = 100


def signature(body, t=None, secret=SECRET):
    t = int(time.time()) if t is None else t
    data = ("%d." % t).encode() + body
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def header(body, t=None, secret=SECRET):
    t = int(time.time()) if t is None else t
    return "t=%d,v1=%s" % (t, signature(body, t, secret))


def delivery(intent, reservation_id, amount, kind="payment.succeeded", event_id=None,
             **extra):
    body = {"id": event_id or uid("evt"), "type": kind, "payment_intent_id": intent,
            "reservation_id": reservation_id, "amount": amount}
    body.update(extra)
    return json.dumps(body).encode()


def deliver(c, body, signed=None):
    return c.post(PATH, raw=body,
                  headers={"Holdfast-Signature": signed if signed is not None else header(body)})


def small_event(c, seats=5, **fields):
    event_id = uid("pay")
    create_event(c, event_id, sections=[{"id": "F", "price": SEAT_PRICE,
                                         "rows": [{"id": "A", "seats": seats}]}],
                 pools=[{"id": "GA", "capacity": 2, "price": 10}], **fields)
    return event_id


def refunds(c, query=""):
    return expect(c.get("/v1/refunds" + query), 200)["refunds"]


def refund_of(c, refund_id):
    found = [r for r in refunds(c) if r["refund_id"] == refund_id]
    check_equal(len(found), 1, "refunds listed with id %s" % refund_id)
    return found[0]


# ---- the signature ----


def test_signature_refusals(server):
    c = server.client()
    event_id = small_event(c)
    u = user()
    h = hold(c, event_id, u, ["F-A-1"])
    body = delivery(uid("pi"), h["reservation_id"], SEAT_PRICE)
    now = int(time.time())
    good = signature(body, now)
    refusals = {
        "no header": None,
        "wrong secret": header(body, now, "another secret"),
        "t too old": header(body, now - 301),
        "t in the future": header(body, now + 301),
        "no v1": "t=%d" % now,
        "no t": "v1=%s" % good,
        "two t": "t=%d,t=%d,v1=%s" % (now, now, good),
        "v1 not hex": "t=%d,v1=%s" % (now, "z" * 64),
        "v1 short": "t=%d,v1=%s" % (now, good[:62]),
        "t not a number": "t=now,v1=%s" % good,
        "only v0": "t=%d,v0=%s" % (now, good),
        "empty": "",
        "garbage": "t=,v1=,,==",
        "10 KB": "t=%d,v1=%s," % (now, good) + "v0=" + "a" * 10240,
        "signed t differs": "t=%d,v1=%s" % (now - 1, good),
    }
    for what, value in refusals.items():
        headers = {} if value is None else {"Holdfast-Signature": value}
        expect(c.post(PATH, raw=body, headers=headers), 401, "invalid_signature", what=what)
    # The body changed after signing: the raw bytes are signed, not their JSON meaning.
    changed = body.replace(b'"amount": 100', b'"amount":  100')
    check(changed != body, "the body was changed")
    expect(c.post(PATH, raw=changed, headers={"Holdfast-Signature": header(body, now)}), 401,
           "invalid_signature", what="body changed after signing")
    # Not even JSON: refused on the signature before any parsing.
    expect(c.post(PATH, raw=b"{not json", headers={"Holdfast-Signature": "t=1,v1=00"}), 401,
           "invalid_signature", what="bad JSON, bad signature")
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "hold after refusals")
    check_equal(get_seat(c, event_id, "F-A-1")["status"], "held", "seat after refusals")
    check(all(r["reservation_id"] != h["reservation_id"] for r in refunds(c)),
          "no refund after refusals")


def test_signature_accepted_forms(server):
    c = server.client()
    event_id = small_event(c)
    now = int(time.time())
    for what, make in [
        ("reordered", lambda b: "v1=%s,t=%d" % (signature(b, now), now)),
        ("several v1, one right", lambda b: "t=%d,v1=%s,v1=%s" % (
            now, "0" * 64, signature(b, now))),
        ("v0 ignored", lambda b: "v0=abc,t=%d,v1=%s" % (now, signature(b, now))),
        ("blanks", lambda b: " t=%d , v1=%s " % (now, signature(b, now))),
        ("upper-case hex", lambda b: "t=%d,v1=%s" % (now, signature(b, now).upper())),
        ("t 299 s old", lambda b: "t=%d,v1=%s" % (now - 299, signature(b, now - 299))),
    ]:
        body = delivery(uid("pi"), "res_none", 5, kind="payment.failed")
        document = expect(deliver(c, body, make(body)), 200, what=what)
        check_equal(document, {"result": "recorded"}, what)


def test_body_refusals(server):
    c = server.client()
    good = {"id": "evt_1", "type": "payment.succeeded", "payment_intent_id": uid("pi"),
            "reservation_id": "res_x", "amount": 5}
    cases = [("id", None), ("type", None), ("type", "payment.refunded"), ("payment_intent_id", ""),
             ("payment_intent_id", None), ("reservation_id", 7), ("amount", None),
             ("amount", -1), ("amount", 0), ("amount", 1.5), ("amount", "5"), ("amount", "12"),
             ("amount", 10 ** 12 + 1), ("amount", 10 ** 15), ("amount", True),
             ("currency", 7), ("currency", ""), ("currency", ["USD"]), ("currency", "U" * 17)]
    for field, value in cases:
        body = dict(good)
        if value is None:
            del body[field]
        else:
            body[field] = value
        raw = json.dumps(body).encode()
        expect(deliver(c, raw), 400, "invalid_request", field=field,
               what="%s = %r" % (field, value))
    raw = b'{"id": "evt_1", "id": "evt_2"}'
    expect(deliver(c, raw), 400, "invalid_json", what="duplicate members")
    expect(deliver(c, b"[1, 2"), 400, "invalid_json", what="truncated JSON")


def test_no_api_key_needed():
    server = Server(api_key="k3y", extra_args=["--webhook-secret", SECRET]).start()
    c = server.client(api_key=None)
    body = delivery(uid("pi"), "res_none", 1, kind="payment.failed")
    check_equal(expect(deliver(c, body), 200), {"result": "recorded"}, "webhook without a key")
    expect(c.get("/v1/refunds"), 401, "unauthorized")
    expect(c.post("/v1/refunds/ref_x/complete"), 401, "unauthorized")
    server.stop()


def test_no_secret_answers_503():
    server = Server().start()
    c = server.client()
    body = delivery(uid("pi"), "res_none", 1)
    expect(deliver(c, body), 503, "webhooks_not_configured")
    expect(c.post(PATH, raw=body), 503, "webhooks_not_configured")
    check_equal(refunds(c), [], "refunds without a secret")
    server.stop()
    check("no webhook secret" in server.stderr_text(), "a warning at start: %s" %
          server.stderr_text()[-500:])


# ---- outcomes ----


def test_committed(server):
    c = server.client()
    event_id = small_event(c)
    u = user()
    h = hold(c, event_id, u, ["F-A-1", "F-A-2"], {"GA": 1})
    intent = uid("pi")
    document = expect(deliver(c, delivery(intent, h["reservation_id"], 2 * SEAT_PRICE + 10)), 200)
    check_equal(sorted(document), ["order_id", "result"], "committed's members")
    check_equal(document["result"], "committed", "result")
    order = expect(c.get("/v1/orders/%s" % document["order_id"]), 200)
    check_equal(order["payment_ref"], intent, "payment_ref")
    check_equal(order["reservation_id"], h["reservation_id"], "order's hold")
    check_equal(get_hold(c, h["reservation_id"])["status"], "confirmed", "hold")
    check_equal(get_seat(c, event_id, "F-A-2")["status"], "sold", "seat")
    # The same intent through the commit route is the same payment: the same order.
    again = expect(c.post("/v1/holds/%s/commit" % h["reservation_id"],
                          {"user_id": u, "payment_ref": intent}), 200)
    check_equal(again["order_id"], document["order_id"], "commit after the webhook")


def test_failed_is_recorded(server):
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    intent = uid("pi")
    body = delivery(intent, h["reservation_id"], SEAT_PRICE, kind="payment.failed")
    check_equal(expect(deliver(c, body), 200), {"result": "recorded"}, "failed")
    after = get_hold(c, h["reservation_id"])
    check_equal(after["status"], "held", "hold after payment.failed")
    check_equal(after["expires_at"], h["expires_at"], "expires_at after payment.failed")
    # The same intent's success is another delivery.
    document = expect(deliver(c, delivery(intent, h["reservation_id"], SEAT_PRICE)), 200)
    check_equal(document["result"], "committed", "success after failure")


def expect_refund(c, body, reason, reservation_id, amount):
    document = expect(deliver(c, body), 200, what=reason)
    check_equal(sorted(document), ["reason", "refund_id", "result"], "refund's members")
    check_equal(document["result"], "refund_required", "result")
    check_equal(document["reason"], reason, "reason")
    check(document["refund_id"].startswith("ref_") and len(document["refund_id"]) == 40,
          "refund id %r" % document["refund_id"])
    refund = refund_of(c, document["refund_id"])
    check_equal(refund["reservation_id"], reservation_id, "refund's reservation_id")
    check_equal(refund["amount"], amount, "refund's amount")
    check_equal(refund["reason"], reason, "refund's reason")
    check_equal(refund["status"], "pending", "refund's status")
    check_equal(refund["payment_intent_id"], json.loads(body)["payment_intent_id"], "intent")
    return document


def test_refund_reasons(server):
    c = server.client()
    event_id = small_event(c)
    u = user()
    # amount_mismatch: the hold stays as it was.
    h = hold(c, event_id, u, ["F-A-1"])
    expect_refund(c, delivery(uid("pi"), h["reservation_id"], 99), "amount_mismatch",
                  h["reservation_id"], 99)
    after = get_hold(c, h["reservation_id"])
    check_equal((after["status"], after["expires_at"]), ("held", h["expires_at"]),
                "hold after amount_mismatch")
    # hold_released
    r = hold(c, event_id, u, ["F-A-2"])
    release(c, r["reservation_id"], u)
    expect_refund(c, delivery(uid("pi"), r["reservation_id"], SEAT_PRICE), "hold_released",
                  r["reservation_id"], SEAT_PRICE)
    check_equal(get_seat(c, event_id, "F-A-2")["status"], "available", "released seat")
    # hold_not_found
    expect_refund(c, delivery(uid("pi"), "res_nothing_here", 42), "hold_not_found",
                  "res_nothing_here", 42)
    # already_confirmed: committed by another payment.
    k = hold(c, event_id, u, ["F-A-3"])
    order = commit(c, k["reservation_id"], u, "pi_first")
    expect_refund(c, delivery(uid("pi"), k["reservation_id"], SEAT_PRICE), "already_confirmed",
                  k["reservation_id"], SEAT_PRICE)
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200)["payment_ref"],
                "pi_first", "the first payment's order")


def test_expired_hold(server):
    c = server.client()
    event_id = small_event(c)
    u, other = user(), user()
    late = hold(c, event_id, u, ["F-A-1"], {"GA": 1}, ttl_s=0.3)
    taken = hold(c, event_id, u, ["F-A-2"], ttl_s=0.3)
    time.sleep(0.5)
    hold(c, event_id, other, ["F-A-2"])
    # Lapsed, everything still free: committed late.
    document = expect(deliver(c, delivery(uid("pi"), late["reservation_id"], SEAT_PRICE + 10)),
                      200)
    check_equal(sorted(document), ["late", "order_id", "result"], "late commit's members")
    check_equal((document["result"], document["late"]), ("committed", True), "late commit")
    check_equal(get_hold(c, late["reservation_id"])["status"], "confirmed", "late hold")
    check_equal(get_seat(c, event_id, "F-A-1")["status"], "sold", "late seat")
    # Lapsed and its seat taken since: refund.
    expect_refund(c, delivery(uid("pi"), taken["reservation_id"], SEAT_PRICE), "hold_expired",
                  taken["reservation_id"], SEAT_PRICE)
    check_equal(get_seat(c, event_id, "F-A-2")["status"], "held", "the other's seat")


# ---- deduplication ----


def test_repeat_answers_the_first(server):
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    intent = uid("pi")
    first = expect(deliver(c, delivery(intent, h["reservation_id"], 1)), 200)
    check_equal(first["reason"], "amount_mismatch", "first")
    count = len(refunds(c))
    # Another delivery id, another amount, the same (intent, type): the first answer.
    repeat = expect(deliver(c, delivery(intent, h["reservation_id"], SEAT_PRICE)), 200)
    check_equal(repeat, first, "repeat")
    check_equal(len(refunds(c)), count, "refunds after the repeat")
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "hold after the repeat")


def test_concurrent_repeats(server):
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    wrong = hold(c, event_id, user(), ["F-A-2"])
    for target, amount in ((h, SEAT_PRICE), (wrong, 1)):
        body = delivery(uid("pi"), target["reservation_id"], amount)
        signed = header(body)
        clients = [server.client() for _ in range(20)]

        def send(client):
            try:
                response = client.post(PATH, raw=body, headers={"Holdfast-Signature": signed})
                return response.status, response.body
            finally:
                client.close()

        before = len(refunds(c))
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(send, clients))
        check_equal(len(set(answers)), 1, "20 concurrent answers: %s" % set(answers))
        check_equal(answers[0][0], 200, "status")
        document = json.loads(answers[0][1])
        if amount == SEAT_PRICE:
            check_equal(document["result"], "committed", "result")
            orders = expect(c.get("/v1/users/%s/orders" % get_hold(c, h["reservation_id"])[
                "user_id"]), 200)["orders"]
            check_equal(len(orders), 1, "orders after 20 deliveries")
        else:
            check_equal(document["reason"], "amount_mismatch", "reason")
            check_equal(len(refunds(c)), before + 1, "refunds after 20 deliveries")


def test_repeat_after_restart_and_kill():
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    paid = delivery(uid("pi"), h["reservation_id"], SEAT_PRICE)
    first = expect(deliver(c, paid), 200)
    refunded = delivery(uid("pi"), "res_gone", 7)
    refund = expect(deliver(c, refunded), 200)
    completed = expect(c.post("/v1/refunds/%s/complete" % refund["refund_id"]), 200)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(expect(deliver(c, paid), 200), first, "commit repeated after a restart")
    check_equal(expect(deliver(c, refunded), 200), refund, "refund repeated after a restart")
    check_equal(refund_of(c, refund["refund_id"]), completed, "refund after a restart")
    check_equal(len(refunds(c)), 1, "refunds after a restart")
    # kill -9 straight after an answer: it was durable, so the retry answers it.
    k = hold(c, event_id, user(), ["F-A-2"])
    paid2 = delivery(uid("pi"), k["reservation_id"], SEAT_PRICE)
    answer = expect(deliver(c, paid2), 200)
    server.kill()
    server = server.restart()
    c = server.client()
    check_equal(expect(deliver(c, paid2), 200), answer, "repeat after kill -9")
    user_orders = expect(c.get("/v1/users/%s/orders" % k["user_id"]), 200)["orders"]
    check_equal([o["order_id"] for o in user_orders], [answer["order_id"]], "one order")
    server.stop()


def test_kill_between_delivery_and_answer():
    """A delivery in flight when the server dies: whatever became of it, the provider's retry
    gets exactly one effect."""
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c, seats=40)
    holds = [hold(c, event_id, user(), ["F-A-%d" % n]) for n in range(1, 41)]
    bodies = [delivery(uid("pi"), h["reservation_id"], SEAT_PRICE) for h in holds]

    clients = [server.client(client_timeout=5) for _ in bodies]

    def send(client, body):
        try:
            return client.post(PATH, raw=body, headers={"Holdfast-Signature": header(body)}).status
        except Exception:
            return None
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(send, client, body) for client, body in zip(clients, bodies)]
        time.sleep(0.02)
        server.kill()
        [f.result() for f in futures]
    server = server.restart()
    c = server.client()
    for h, body in zip(holds, bodies):
        document = expect(deliver(c, body), 200, what="retry after kill -9")
        check_equal(document["result"], "committed", "retry's result")
        check_equal(expect(deliver(c, body), 200), document, "second retry")
        orders = expect(c.get("/v1/users/%s/orders" % h["user_id"]), 200)["orders"]
        check_equal([o["order_id"] for o in orders], [document["order_id"]],
                    "exactly one order for %s" % h["reservation_id"])
    check_equal(refunds(c), [], "no refund")
    server.stop()


class SlowSyncServer(Server):
    """Every sync of the store's log waits: a delivery is applied and written, and its answer
    withheld until the sync, long enough to kill the server in between."""

    SYNC_DELAY_MS = 1500

    def _spawn(self, environment):
        environment = dict(environment)
        environment["HOLDFAST_FAULT_SYNC_DELAY_MS"] = str(self.SYNC_DELAY_MS)
        return Server._spawn(self, environment)


def test_kill_after_applying_before_answering():
    """kill -9 while a delivery is applied (written, not yet synced) and its answer withheld:
    the provider saw no answer and retries; the retry gets exactly one effect, whether the
    change survived in the log or not."""
    server = SlowSyncServer(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    paid = delivery(uid("pi"), h["reservation_id"], SEAT_PRICE)
    refunded = delivery(uid("pi"), "res_unknown", 9)
    clients = [server.client(client_timeout=10), server.client(client_timeout=10)]
    answers = []

    def send(client, body):
        try:
            answers.append(deliver(client, body).status)
        except Exception:
            pass

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(send, client, body)
                   for client, body in zip(clients, (paid, refunded))]
        time.sleep(0.5)
        server.kill()
        [f.result() for f in futures]
    check_equal(answers, [], "answers before the kill")
    server = server.restart()
    c = server.client()
    document = expect(deliver(c, paid), 200, what="retry of the payment")
    check_equal(document["result"], "committed", "retry's result")
    check_equal(expect(deliver(c, paid), 200), document, "second retry")
    orders = expect(c.get("/v1/users/%s/orders" % h["user_id"]), 200)["orders"]
    check_equal([o["order_id"] for o in orders], [document["order_id"]], "one order")
    refund = expect(deliver(c, refunded), 200, what="retry of the refund")
    check_equal(expect(deliver(c, refunded), 200), refund, "second retry of the refund")
    check_equal([r["refund_id"] for r in refunds(c)], [refund["refund_id"]], "one refund")
    server.stop()


def test_forgotten_hold():
    """With --finished-holds 1 a released or expired hold is forgotten from memory; its
    delivery still finds it (taken back from the store), and a late one still commits."""
    server = Server(extra_args=["--webhook-secret", SECRET, "--finished-holds", "1"]).start()
    c = server.client()
    event_id = small_event(c)
    u = user()
    released = hold(c, event_id, u, ["F-A-1"])
    release(c, released["reservation_id"], u)
    lapsed = hold(c, event_id, u, ["F-A-2"], ttl_s=0.2)
    time.sleep(0.4)
    for n in range(3, 6):  # more finished holds, so the first ones are forgotten
        release(c, hold(c, event_id, u, ["F-A-%d" % n])["reservation_id"], u)
    expect_refund(c, delivery(uid("pi"), released["reservation_id"], SEAT_PRICE),
                  "hold_released", released["reservation_id"], SEAT_PRICE)
    document = expect(deliver(c, delivery(uid("pi"), lapsed["reservation_id"], SEAT_PRICE)), 200)
    check_equal((document["result"], document.get("late")), ("committed", True), "late commit")
    check_equal(get_hold(c, lapsed["reservation_id"])["status"], "confirmed", "revived hold")
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(get_hold(c, lapsed["reservation_id"])["status"], "confirmed", "after restart")
    check_equal(get_seat(c, event_id, "F-A-2")["status"], "sold", "seat after restart")
    server.stop()


# ---- refunds ----


def test_refunds_list_and_complete():
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    check_equal(expect(c.get("/v1/refunds"), 200), {"refunds": [], "next": None}, "empty list")
    made = [expect(deliver(c, delivery(uid("pi"), "res_none_%d" % n, n)), 200)["refund_id"]
            for n in range(1, 5)]
    listed = refunds(c)
    check_equal([r["refund_id"] for r in listed], made, "oldest first")
    check_equal(sorted(listed[0]), sorted(["refund_id", "payment_intent_id", "reservation_id",
                                           "order_id", "amount", "reason", "status",
                                           "created_at"]),
                "refund's members")
    check_equal(listed[0]["order_id"], None, "a webhook's refund names no order")
    done = expect(c.post("/v1/refunds/%s/complete" % made[1]), 200)
    check_equal(done["status"], "completed", "completed")
    check_equal(done, dict(listed[1], status="completed"), "completed refund")
    check_equal(expect(c.post("/v1/refunds/%s/complete" % made[1]), 200), done, "repeat")
    check_equal([r["refund_id"] for r in refunds(c, "?status=completed")], [made[1]],
                "completed ones")
    check_equal([r["refund_id"] for r in refunds(c, "?status=pending")],
                [made[0], made[2], made[3]], "pending ones")
    page = expect(c.get("/v1/refunds?limit=2"), 200)
    check_equal([r["refund_id"] for r in page["refunds"]], made[:2], "first page")
    check_equal(page["next"], made[1], "next")
    page = expect(c.get("/v1/refunds?limit=2&after=%s" % made[1]), 200)
    check_equal(([r["refund_id"] for r in page["refunds"]], page["next"]), (made[2:], None),
                "last page")
    expect(c.get("/v1/refunds?status=refunded"), 400, "invalid_request", field="status")
    expect(c.get("/v1/refunds?limit=0"), 400, "invalid_request", field="limit")
    expect(c.get("/v1/refunds?after=ref_nope"), 400, "invalid_request", field="after")
    expect(c.post("/v1/refunds/ref_nope/complete"), 404, "refund_not_found")
    expect(c.get("/v1/refunds/%s/complete" % made[0]), 405, "method_not_allowed")
    server.stop()


def test_a_version_3_store_is_migrated():
    """A data directory written before payments (schema version 3) starts, gains the tables
    of payments and keeps what it had."""
    skip_on_postgres("the test writes an old SQLite file (holdfast.db) and checks its migration")
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    database.execute("DROP TABLE deliveries")
    database.execute("DROP TABLE refunds")
    database.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    database.commit()
    database.close()
    server = server.restart()
    c = server.client()
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "its hold is kept")
    document = expect(deliver(c, delivery(uid("pi"), h["reservation_id"], SEAT_PRICE)), 200)
    check_equal(document["result"], "committed", "a delivery after the migration")
    refund = expect(deliver(c, delivery(uid("pi"), "res_x", 3)), 200)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal([r["refund_id"] for r in refunds(c)], [refund["refund_id"]], "refunds kept")
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    version = database.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    database.close()
    check_equal(version, ("13",), "the schema version after the migration")


def test_payments_enter_the_history(server):
    """A delivery on a known hold is a "payment" entry of its event's audit history, with what it
    decided; its commit is the order's own "commit" entry; a delivery for an unknown hold names
    no event and enters no history."""
    c = server.client()
    event_id = small_event(c)
    u = user()
    h = hold(c, event_id, u, ["F-A-1"])
    paid = uid("pi")
    committed = expect(deliver(c, delivery(paid, h["reservation_id"], SEAT_PRICE)), 200)
    other = hold(c, event_id, user(), ["F-A-2"])
    wrong = uid("pi")
    refunded = expect(deliver(c, delivery(wrong, other["reservation_id"], SEAT_PRICE + 1)), 200)
    failed = uid("pi")
    expect(deliver(c, delivery(failed, other["reservation_id"], 5, kind="payment.failed")), 200)
    expect(deliver(c, delivery(uid("pi"), "res_unknown", 7)), 200)
    entries = expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)["history"]
    without_at = [{k: v for k, v in e.items() if k not in ("at", "seq")} for e in entries]
    check_equal([e["type"] for e in without_at],
                ["hold", "commit", "payment", "hold", "payment", "payment"], "entry types")
    check_equal(without_at[1]["order_id"], committed["order_id"], "the commit's order")
    check_equal(without_at[1]["payment_ref"], paid, "the commit's payment_ref")
    # Each entry reads alone: the hold's user and items too (API.md section 7).
    check_equal(without_at[2], {"type": "payment", "reservation_id": h["reservation_id"],
                                "user_id": u, "seats": ["F-A-1"], "pools": {},
                                "payment_intent_id": paid, "payment_type": "payment.succeeded",
                                "amount": SEAT_PRICE, "result": "committed",
                                "order_id": committed["order_id"]}, "the committed payment")
    check_equal(without_at[4], {"type": "payment", "reservation_id": other["reservation_id"],
                                "user_id": other["user_id"], "seats": ["F-A-2"], "pools": {},
                                "payment_intent_id": wrong, "payment_type": "payment.succeeded",
                                "amount": SEAT_PRICE + 1, "result": "refund_required",
                                "refund_id": refunded["refund_id"],
                                "reason": "amount_mismatch"}, "the refunded payment")
    check_equal(without_at[5], {"type": "payment", "reservation_id": other["reservation_id"],
                                "user_id": other["user_id"], "seats": ["F-A-2"], "pools": {},
                                "payment_intent_id": failed, "payment_type": "payment.failed",
                                "amount": 5, "result": "recorded"}, "the failed payment")


# ---- issue 27: amounts and currencies ----


def test_amount_bounds(server):
    """amount is an integer from 1 to 10^12: a delivery of 10^15 once made a pending refund of
    that size. Each refusal changes nothing; 1 and 10^12 are taken."""
    c = server.client()
    event_id = small_event(c)
    h = hold(c, event_id, user(), ["F-A-1"])
    before = len(refunds(c))
    for amount in (0, -1, 1.5, 10 ** 12 + 1, 10 ** 15, "12", None):
        body = delivery(uid("pi"), h["reservation_id"], amount)
        expect(deliver(c, body), 400, "invalid_request", field="amount",
               what="amount %r" % (amount,))
    check_equal(len(refunds(c)), before, "refunds after the refused amounts")
    check_equal(get_hold(c, h["reservation_id"])["status"], "held", "hold after the refusals")
    for amount in (1, 10 ** 12):
        expect_refund(c, delivery(uid("pi"), h["reservation_id"], amount), "amount_mismatch",
                      h["reservation_id"], amount)
    expect_refund(c, delivery(uid("pi"), "res_unknown", 10 ** 12), "hold_not_found",
                  "res_unknown", 10 ** 12)


def test_currency(server):
    """currency is optional; given and not the hold's, the payment is refunded as
    amount_mismatch and the hold stays as it was; the hold's own commits (its case aside:
    providers write "usd"); not a string is 400 with field currency."""
    c = server.client()
    event_id = small_event(c)
    u = user()
    h = hold(c, event_id, u, ["F-A-1"])
    for currency in ("EUR", "US", "USDX"):
        expect_refund(c, delivery(uid("pi"), h["reservation_id"], SEAT_PRICE, currency=currency),
                      "amount_mismatch", h["reservation_id"], SEAT_PRICE)
    after = get_hold(c, h["reservation_id"])
    check_equal((after["status"], after["expires_at"]), ("held", h["expires_at"]),
                "hold after a currency mismatch")
    check_equal(get_seat(c, event_id, "F-A-1")["status"], "held", "seat after the mismatch")
    for currency in (5, True, {"code": "USD"}):
        body = delivery(uid("pi"), h["reservation_id"], SEAT_PRICE, currency=currency)
        expect(deliver(c, body), 400, "invalid_request", field="currency",
               what="currency %r" % (currency,))
    paid = expect(deliver(c, delivery(uid("pi"), h["reservation_id"], SEAT_PRICE,
                                      currency="USD")), 200)
    check_equal(paid["result"], "committed", "the hold's own currency")
    lower = hold(c, event_id, u, ["F-A-2"])
    paid = expect(deliver(c, delivery(uid("pi"), lower["reservation_id"], SEAT_PRICE,
                                      currency="usd")), 200)
    check_equal(paid["result"], "committed", "the hold's currency in lower case")
    bare = hold(c, event_id, u, ["F-A-3"])
    paid = expect(deliver(c, delivery(uid("pi"), bare["reservation_id"], SEAT_PRICE,
                                      currency=None)), 200)
    check_equal(paid["result"], "committed", "currency null")
    euro = small_event(c, currency="EUR")
    e = hold(c, euro, u, ["F-A-1"])
    expect_refund(c, delivery(uid("pi"), e["reservation_id"], SEAT_PRICE, currency="USD"),
                  "amount_mismatch", e["reservation_id"], SEAT_PRICE)
    paid = expect(deliver(c, delivery(uid("pi"), e["reservation_id"], SEAT_PRICE,
                                      currency="EUR")), 200)
    check_equal(paid["result"], "committed", "an EUR event's payment in EUR")


# ---- issue 27: a paid order's cancel owes a refund ----


def cancel(c, order_id, user_id):
    return expect(c.post("/v1/orders/%s/cancel" % order_id, {"user_id": user_id}), 200,
                  what="cancel %s" % order_id)


def book(c, event_id, user_id, seat, payment_ref):
    version = get_seat(c, event_id, seat)["version"]
    return expect(c.post("/v1/events/%s/bookings" % event_id,
                         {"user_id": user_id, "seats": [{"id": seat, "version": version}],
                          "payment_ref": payment_ref}), 201, what="booking of %s" % seat)


def check_cancel_refund(c, cancelled, order, intent, reservation_id):
    """The refund a cancel owed, as GET /v1/refunds/{id} and the list show it."""
    check_equal(cancelled["status"], "cancelled", "the order's status")
    refund_id = cancelled["refund_id"]
    check(isinstance(refund_id, str) and refund_id.startswith("ref_") and len(refund_id) == 40,
          "the cancelled order's refund_id %r" % refund_id)
    refund = expect(c.get("/v1/refunds/%s" % refund_id), 200)
    check(TIME_RE.match(refund["created_at"]) is not None, "created_at %r" % refund["created_at"])
    check_equal(refund, {"refund_id": refund_id, "payment_intent_id": intent,
                         "reservation_id": reservation_id, "order_id": order["order_id"],
                         "amount": order["total"], "reason": "order_cancelled",
                         "status": "pending", "created_at": refund["created_at"]},
                "the refund of %s" % order["order_id"])
    check_equal(refund_of(c, refund_id), refund, "the refund as listed")
    return refund


def pending_refunds_metric(c):
    text = c.get("/metrics").body.decode("utf-8")
    found = re.search(r'^holdfast_refunds\{status="pending"\} (\S+)$', text, re.M)
    check(found is not None, "holdfast_refunds{status=\"pending\"} in /metrics")
    return float(found.group(1))


def test_cancel_owes_a_refund():
    """Cancelling a paid order (a hold's, and a booking without hold) makes a pending refund of
    its total in the same step, reason order_cancelled, named by the order (refund_id) and
    readable at GET /v1/refunds/{id}; a repeated cancel answers the same and makes no second
    one; an unpaid order's cancel owes nothing. All of it survives SIGTERM and kill -9."""
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    u = user()
    h = hold(c, event_id, u, ["F-A-1"], {"GA": 1})
    order = commit(c, h["reservation_id"], u, "pi_cancel_1")
    check_equal(order["refund_id"], None, "a confirmed order's refund_id")
    cancelled = cancel(c, order["order_id"], u)
    first = check_cancel_refund(c, cancelled, order, "pi_cancel_1", h["reservation_id"])
    check_equal(first["amount"], SEAT_PRICE + 10, "the refund is the order's total")
    check_equal(cancel(c, order["order_id"], u), cancelled, "a repeated cancel")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), cancelled, "GET order")
    booked = book(c, event_id, u, "F-A-2", "pi_cancel_2")
    cancelled_booking = cancel(c, booked["order_id"], u)
    second = check_cancel_refund(c, cancelled_booking, booked, "pi_cancel_2", None)
    check_equal(len(refunds(c)), 2, "one refund per cancelled paid order")
    check_equal(pending_refunds_metric(c), 2, "holdfast_refunds{status=pending}")
    unpaid_hold = hold(c, event_id, u, ["F-A-3"])
    unpaid = expect(c.post("/v1/holds/%s/commit" % unpaid_hold["reservation_id"],
                           {"user_id": u}), 200)
    check_equal(unpaid["payment_ref"], None, "an order without payment")
    check_equal(cancel(c, unpaid["order_id"], u)["refund_id"], None, "an unpaid cancel's refund")
    check_equal(len(refunds(c)), 2, "no refund for an unpaid order")
    expect(c.get("/v1/refunds/ref_nope"), 404, "refund_not_found")
    entries = expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)["history"]
    cancels = [e for e in entries if e["type"] == "cancel"]
    check_equal([(e["order_id"], e["refund_id"]) for e in cancels],
                [(order["order_id"], first["refund_id"]),
                 (booked["order_id"], second["refund_id"]), (unpaid["order_id"], None)],
                "the cancels' history entries name their refunds")
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), cancelled,
                "the order after a restart")
    check_equal(expect(c.get("/v1/orders/%s" % booked["order_id"]), 200), cancelled_booking,
                "the booking after a restart")
    check_equal(expect(c.get("/v1/refunds/%s" % first["refund_id"]), 200), first,
                "the refund after a restart")
    check_equal(expect(c.get("/v1/refunds/%s" % second["refund_id"]), 200), second,
                "the booking's refund after a restart")
    check_equal(cancel(c, order["order_id"], u), cancelled, "a cancel repeated after a restart")
    check_equal(len(refunds(c)), 2, "refunds after a restart")
    # kill -9 straight after the cancel's answer: it was durable, refund and all.
    k = hold(c, event_id, u, ["F-A-4"])
    third = commit(c, k["reservation_id"], u, "pi_cancel_3")
    cancelled_third = cancel(c, third["order_id"], u)
    server.kill()
    server = server.restart()
    c = server.client()
    check_equal(expect(c.get("/v1/orders/%s" % third["order_id"]), 200), cancelled_third,
                "the order after kill -9")
    check_cancel_refund(c, cancelled_third, third, "pi_cancel_3", k["reservation_id"])
    check_equal(pending_refunds_metric(c), 3, "holdfast_refunds{status=pending} after kill -9")
    done = expect(c.post("/v1/refunds/%s/complete" % cancelled_third["refund_id"]), 200)
    check_equal(done["status"], "completed", "an order's refund completes as any other")
    server.stop()


def test_refunds_page_by_100():
    """GET /v1/refunds pages as every unbounded list (API.md section 1): limit 100 by default,
    at most 1,000; next is the last refund returned, null on the last page."""
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    made = [expect(deliver(c, delivery(uid("pi"), "res_page_%d" % n, n)), 200)["refund_id"]
            for n in range(1, 151)]
    page = expect(c.get("/v1/refunds"), 200)
    check_equal([r["refund_id"] for r in page["refunds"]], made[:100], "the default page")
    check_equal(page["next"], made[99], "next after the default page")
    page = expect(c.get("/v1/refunds?after=%s" % page["next"]), 200)
    check_equal(([r["refund_id"] for r in page["refunds"]], page["next"]), (made[100:], None),
                "the last page")
    page = expect(c.get("/v1/refunds?limit=1000"), 200)
    check_equal(([r["refund_id"] for r in page["refunds"]], page["next"]), (made, None),
                "a page of 1,000")
    page = expect(c.get("/v1/refunds?limit=150"), 200)
    check_equal((len(page["refunds"]), page["next"]), (150, None), "exactly all: no next")
    page = expect(c.get("/v1/refunds?limit=3&after=%s" % made[10]), 200)
    check_equal(([r["refund_id"] for r in page["refunds"]], page["next"]),
                (made[11:14], made[13]), "three after the eleventh")
    for limit in ("0", "1001", "-1", "x", "1.5", ""):
        expect(c.get("/v1/refunds?limit=%s" % limit), 400, "invalid_request", field="limit",
               what="limit=%s" % limit)
    expect(c.get("/v1/refunds?after=ref_nope"), 400, "invalid_request", field="after")
    server.stop()


def test_a_version_7_store_is_migrated():
    """A data directory of schema version 7 (refunds of webhooks only, reservation_id NOT NULL)
    starts at version 8 with its refunds kept, and a cancelled booking's refund (no hold) is
    then stored and kept across a restart."""
    skip_on_postgres("the test writes an old SQLite file (holdfast.db) and checks its migration")
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    old = expect(deliver(c, delivery(uid("pi"), "res_old", 42)), 200)["refund_id"]
    u = user()
    booked = book(c, event_id, u, "F-A-1", "pi_v7")
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    database.executescript(
        "CREATE TABLE refunds_7(seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
        " payment_intent_id TEXT NOT NULL, reservation_id TEXT NOT NULL,"
        " amount INTEGER NOT NULL, reason TEXT NOT NULL, status TEXT NOT NULL,"
        " created_at INTEGER NOT NULL);"
        "INSERT INTO refunds_7 SELECT seq, id, payment_intent_id, reservation_id, amount,"
        " reason, status, created_at FROM refunds;"
        "DROP TABLE refunds; ALTER TABLE refunds_7 RENAME TO refunds;"
        "UPDATE meta SET value = '7' WHERE key = 'schema_version';")
    database.commit()
    database.close()
    server = server.restart()
    c = server.client()
    check_equal([r["refund_id"] for r in refunds(c)], [old], "the refunds are kept")
    cancelled = cancel(c, booked["order_id"], u)
    refund = check_cancel_refund(c, cancelled, booked, "pi_v7", None)
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal([r["refund_id"] for r in refunds(c)], [old, refund["refund_id"]],
                "both refunds after a restart")
    check_equal(expect(c.get("/v1/orders/%s" % booked["order_id"]), 200), cancelled,
                "the booking after a restart")
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    version = database.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    database.close()
    check_equal(version, ("13",), "the schema version after the migration")


def test_a_version_7_database_is_migrated_on_postgres():
    """The same migration on PostgreSQL: a version 7 database (refunds without order_id,
    reservation_id NOT NULL) starts at version 8 with its refunds kept, and a cancelled
    booking's refund is then stored with its order and no hold."""
    if harness.STORE_URL is None:
        harness.skip("PostgreSQL only: run with --store-url")
    server = Server(extra_args=["--webhook-secret", SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    old = expect(deliver(c, delivery(uid("pi"), "res_old", 42)), 200)["refund_id"]
    u = user()
    booked = book(c, event_id, u, "F-A-1", "pi_pg7")
    server.stop()
    harness.postgres_rows(server.data_dir,
                          "ALTER TABLE refunds DROP COLUMN order_id;"
                          " ALTER TABLE refunds ALTER COLUMN reservation_id SET NOT NULL;"
                          " UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    server = server.restart()
    c = server.client()
    check_equal(harness.postgres_rows(server.data_dir,
                                      "SELECT value FROM meta WHERE key = 'schema_version'"),
                [["13"]], "the schema version after the migration")
    check_equal([r["refund_id"] for r in refunds(c)], [old], "the refunds are kept")
    cancelled = cancel(c, booked["order_id"], u)
    refund = check_cancel_refund(c, cancelled, booked, "pi_pg7", None)
    check_equal(harness.postgres_rows(server.data_dir,
                                      "SELECT reservation_id, order_id FROM refunds WHERE id = '%s'"
                                      % refund["refund_id"]),
                [[None, booked["order_id"]]], "the refund's row")
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(expect(c.get("/v1/refunds/%s" % refund["refund_id"]), 200), refund,
                "the refund after a restart")
    check_equal(expect(c.get("/v1/orders/%s" % booked["order_id"]), 200), cancelled,
                "the booking after a restart")
    server.stop()
