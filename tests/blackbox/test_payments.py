"""Payment webhooks and refunds (API.md section 7): the signature and its every refusal, each
outcome of a delivery, deduplication (concurrent, and across a restart and a kill -9),
forgotten holds, and the refunds list and completion."""

import concurrent.futures
import hashlib
import hmac
import json
import os
import sqlite3
import time

from harness import (Server, skip_on_postgres, check, check_equal, commit, create_event, expect, get_hold, get_seat,
                     hold, release, uid, user)

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


def delivery(intent, reservation_id, amount, kind="payment.succeeded", event_id=None):
    return json.dumps({"id": event_id or uid("evt"), "type": kind, "payment_intent_id": intent,
                       "reservation_id": reservation_id, "amount": amount}).encode()


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
             ("amount", -1), ("amount", 1.5), ("amount", "5")]
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
                                           "amount", "reason", "status", "created_at"]),
                "refund's members")
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
    check_equal(version, ("7",), "the schema version after the migration")


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
