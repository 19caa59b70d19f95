"""Idempotency-Key on creating POSTs (API.md section 1)."""

import hashlib
import json
import os
import sqlite3
import uuid
from collections import Counter

from harness import (Server, check, check_counts, check_equal, create_event, expect, hold_body,
                     release, run_threads, seat_state, skip_on_postgres, uid, user)

WEIGHT = 2.0

SECTIONS = [{"id": "S", "price": 10, "rows": [{"id": "R", "seats": 20}]}]


def _key():
    return "key-" + uuid.uuid4().hex


def test_event_key(server):
    c = server.client()
    event_id = uid("idem")
    key = _key()
    body = json.dumps({"id": event_id, "name": "first", "sections": SECTIONS})
    first = c.post("/v1/events", raw=body, headers={"Idempotency-Key": key})
    expect(first, 201)
    check_equal(first.header("idempotent-replayed"), None, "the first answer is no replay")
    again = c.post("/v1/events", raw=body, headers={"Idempotency-Key": key})
    check_equal((again.status, again.body), (first.status, first.body), "the repeat")
    check_equal(again.header("idempotent-replayed"), "true", "the repeat is marked")
    # Without the key the same body is a second creation attempt.
    expect(c.post("/v1/events", raw=body), 409, "event_exists")
    other = json.dumps({"id": event_id, "name": "second", "sections": SECTIONS})
    expect(c.post("/v1/events", raw=other, headers={"Idempotency-Key": key}), 422,
           "idempotency_key_reused")
    # As JSON values: the same JSON with other spacing is the same body.
    spaced = body.replace(": ", ":")
    check(spaced != body, "spacing differs")
    again = c.post("/v1/events", raw=spaced, headers={"Idempotency-Key": key})
    check_equal((again.status, again.body), (first.status, first.body), "same JSON, other bytes")
    listing = expect(c.get("/v1/events?limit=1000"), 200)
    check_equal([e["id"] for e in listing["events"]].count(event_id), 1, "one event")
    check_equal(expect(c.get("/v1/events/%s" % event_id), 200)["name"], "first", "name")


def test_hold_key(server):
    c = server.client()
    event_id = uid("idem")
    create_event(c, event_id, sections=SECTIONS)
    key = _key()
    u1 = user()
    body = json.dumps(hold_body(u1, ["S-R-1", "S-R-2"]))
    path = "/v1/events/%s/holds" % event_id
    first = c.post(path, raw=body, headers={"Idempotency-Key": key})
    h = expect(first, 201)
    for _ in range(3):
        again = c.post(path, raw=body, headers={"Idempotency-Key": key})
        check_equal((again.status, again.body), (first.status, first.body), "the repeat")
    check_counts(c, event_id, 18, 2, 0, "one hold")
    check_equal(seat_state(c, event_id, "S-R-1"), ("held", 2), "held once")
    other = json.dumps(hold_body(u1, ["S-R-3"]))
    expect(c.post(path, raw=other, headers={"Idempotency-Key": key}), 422,
           "idempotency_key_reused")
    check_equal(seat_state(c, event_id, "S-R-3"), ("available", 1), "nothing held by a 422")
    # Another key with the same body is a new request: the seats are taken.
    expect(c.post(path, raw=body, headers={"Idempotency-Key": _key()}), 409,
           "seats_unavailable")
    # A repeat after the hold was released still answers the first answer and holds nothing.
    release(c, h["reservation_id"], u1)
    again = c.post(path, raw=body, headers={"Idempotency-Key": key})
    check_equal((again.status, again.body), (first.status, first.body), "repeat after release")
    check_counts(c, event_id, 20, 0, 0, "the repeat changed nothing")


def test_key_scope_and_failures(server):
    c = server.client()
    event_a, event_b = uid("ida"), uid("idb")
    create_event(c, event_a, sections=SECTIONS)
    create_event(c, event_b, sections=SECTIONS)
    key = _key()
    body = json.dumps(hold_body(user(), ["S-R-5"]))
    a = expect(c.post("/v1/events/%s/holds" % event_a, raw=body,
                      headers={"Idempotency-Key": key}), 201)
    b = expect(c.post("/v1/events/%s/holds" % event_b, raw=body,
                      headers={"Idempotency-Key": key}), 201,
               what="the same key on another path")
    check(a["reservation_id"] != b["reservation_id"], "two holds")
    check_counts(c, event_b, 19, 1, 0, "held on the second event")
    # A key used on POST /v1/events is a different scope as well.
    expect(c.post("/v1/events", {"id": uid("idc"), "sections": SECTIONS},
                  headers={"Idempotency-Key": key}), 201, what="same key, events path")
    # Failures are not stored: once the seat is free the same request runs again.
    blocker = user()
    blocking = expect(c.post("/v1/events/%s/holds" % event_a,
                             hold_body(blocker, ["S-R-9"])), 201)
    key2 = _key()
    body2 = json.dumps(hold_body(user(), ["S-R-9"]))
    expect(c.post("/v1/events/%s/holds" % event_a, raw=body2, headers={"Idempotency-Key": key2}),
           409, "seats_unavailable")
    release(c, blocking["reservation_id"], blocker)
    expect(c.post("/v1/events/%s/holds" % event_a, raw=body2, headers={"Idempotency-Key": key2}),
           201, what="a failed request with a key may run again")
    check_equal(seat_state(c, event_a, "S-R-9")[0], "held", "held now")


def test_key_length(server):
    c = server.client()
    event_id = uid("idl")
    create_event(c, event_id, sections=SECTIONS)
    path = "/v1/events/%s/holds" % event_id
    expect(c.post(path, hold_body(user(), ["S-R-1"]), headers={"Idempotency-Key": "k" * 256}),
           400, "invalid_request", field="Idempotency-Key", what="a key of 256 bytes")
    check_equal(seat_state(c, event_id, "S-R-1"), ("available", 1), "nothing held")
    expect(c.post(path, hold_body(user(), ["S-R-1"]), headers={"Idempotency-Key": ""}),
           400, "invalid_request", field="Idempotency-Key", what="an empty key")
    key = "k" * 254 + uuid.uuid4().hex[:1]
    body = json.dumps(hold_body(user(), ["S-R-1"]))
    first = expect(c.post(path, raw=body, headers={"Idempotency-Key": key}), 201,
                   what="a key of 255 bytes")
    again = c.post(path, raw=body, headers={"Idempotency-Key": key})
    check_equal(again.json, first, "repeat with a 255-byte key")


def test_concurrent_same_key(server):
    setup = server.client()
    event_id = uid("idcc")
    create_event(setup, event_id, sections=SECTIONS)
    key = _key()
    body = json.dumps(hold_body(user(), ["S-R-1", "S-R-2", "S-R-3"]))
    count = 10
    clients = [server.client() for _ in range(count)]
    for c in clients:
        expect(c.get("/healthz"), 200)

    def attempt(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events/%s/holds" % event_id, raw=body,
                                   headers={"Idempotency-Key": key})

    responses = run_threads(count, attempt)
    check_equal(dict(Counter(r.status for r in responses)), {201: count}, "statuses")
    check_equal(len({r.body for r in responses}), 1, "identical answers")
    check_counts(setup, event_id, 17, 3, 0, "one hold")
    check_equal(seat_state(setup, event_id, "S-R-2"), ("held", 2), "held once")

    # Concurrent event creation with one key.
    key = _key()
    new_event = uid("idce")
    event_body = json.dumps({"id": new_event, "sections": SECTIONS})

    def create(index, barrier):
        barrier.wait()
        return clients[index].post("/v1/events", raw=event_body,
                                   headers={"Idempotency-Key": key})

    responses = run_threads(count, create)
    check_equal(dict(Counter(r.status for r in responses)), {201: count}, "statuses")
    check_equal(len({r.body for r in responses}), 1, "identical answers")


def _replayed(response, first, what):
    check_equal((response.status, response.body), (first.status, first.body), what)
    check_equal(response.header("idempotent-replayed"), "true", what + ": Idempotent-Replayed")


def test_bodies_compared_as_json_values(server):
    """curl's compact body and Python's json.dumps of the same hold, with the members in
    another order and the numbers spelt 300, 300.0 and 3e2, are one request."""
    c = server.client()
    event_id = uid("idv")
    create_event(c, event_id, sections=SECTIONS)
    path = "/v1/events/%s/holds" % event_id
    u1 = user()
    key = _key()
    curl = '{"user_id":"%s","seats":["S-R-1","S-R-2"],"ttl_s":300}' % u1
    first = c.post(path, raw=curl, headers={"Idempotency-Key": key})
    expect(first, 201)
    check_equal(first.header("idempotent-replayed"), None, "the first answer is no replay")
    spellings = [
        json.dumps({"ttl_s": 300, "seats": ["S-R-1", "S-R-2"], "user_id": u1}),
        json.dumps({"user_id": u1, "seats": ["S-R-1", "S-R-2"], "ttl_s": 300.0}, indent=2),
        '{ "seats" : [ "S-R-1" , "S-R-2" ] , "ttl_s" : 3e2 , "user_id" : "%s" }' % u1,
        '{"user_id":"%s","seats":["S-R-1","S-R-2"],"ttl_s":3000E-1}' % u1,
        # Escapes are decoded before comparing: \u0053 is S.
        '{"user_id":"%s","seats":["\\u0053-R-1","S-R-2"],"ttl_s":300}' % u1,
    ]
    for spelling in spellings:
        _replayed(c.post(path, raw=spelling, headers={"Idempotency-Key": key}), first, spelling)
    check_counts(c, event_id, 18, 2, 0, "one hold for all the spellings")
    # Another value is another body, whatever its spelling.
    for other in (json.dumps({"user_id": u1, "seats": ["S-R-1", "S-R-2"], "ttl_s": 301}),
                  json.dumps({"user_id": u1, "seats": ["S-R-2", "S-R-1"], "ttl_s": 300}),
                  json.dumps({"user_id": u1, "seats": ["S-R-1", "S-R-2"], "ttl_s": "300"}),
                  json.dumps({"user_id": u1, "seats": ["S-R-1", "S-R-2"], "ttl_s": 300,
                              "replace_existing": False})):
        response = c.post(path, raw=other, headers={"Idempotency-Key": key})
        expect(response, 422, "idempotency_key_reused", what=other)
        check_equal(response.header("idempotent-replayed"), None, other + ": no replay header")
    check_counts(c, event_id, 18, 2, 0, "nothing held by the 422s")
    # Nested members too: an event's sections and rows in another member order.
    event_key = _key()
    sections = [{"id": "S", "price": 10, "rows": [{"id": "R", "seats": 2}]}]
    created = c.post("/v1/events", raw=json.dumps({"id": uid("idv"), "sections": sections}),
                     headers={"Idempotency-Key": event_key})
    expect(created, 201)
    reordered = json.dumps({"sections": [{"rows": [{"seats": 2.0, "id": "R"}], "price": 1e1,
                                          "id": "S"}], "id": created.json["id"]})
    _replayed(c.post("/v1/events", raw=reordered, headers={"Idempotency-Key": event_key}),
              created, "the event's body reordered")


def test_replay_after_restart_is_marked():
    server = Server().start()
    c = server.client()
    event_id = uid("idr")
    create_event(c, event_id, sections=SECTIONS)
    path = "/v1/events/%s/holds" % event_id
    u1 = user()
    key = _key()
    first = c.post(path, raw='{"user_id":"%s","seats":["S-R-3"]}' % u1,
                   headers={"Idempotency-Key": key})
    expect(first, 201)
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    _replayed(c.post(path, raw=json.dumps({"seats": ["S-R-3"], "user_id": u1}),
                     headers={"Idempotency-Key": key}), first, "after restart")
    expect(c.post(path, raw=json.dumps({"seats": ["S-R-4"], "user_id": u1}),
                  headers={"Idempotency-Key": key}), 422, "idempotency_key_reused",
           what="another body after restart")
    check_counts(c, event_id, 19, 1, 0, "still one hold")
    again.stop()


def test_key_kept_by_an_older_server():
    """A key an older server kept holds the SHA-256 of the body's bytes (docs/API.md): the same
    bytes still replay it after an upgrade; the same value in other bytes is refused."""
    skip_on_postgres("the row is rewritten in the SQLite file")
    server = Server().start()
    c = server.client()
    event_id = uid("ido")
    create_event(c, event_id, sections=SECTIONS)
    path = "/v1/events/%s/holds" % event_id
    key = _key()
    raw = '{"user_id": "old", "seats": ["S-R-1"]}'
    first = c.post(path, raw=raw, headers={"Idempotency-Key": key})
    expect(first, 201)
    c.close()
    server.stop()
    # The row as a server before bodies were compared as values wrote it.
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    with database:
        changed = database.execute("UPDATE idempotency SET hash = ? WHERE key = ?",
                                   (hashlib.sha256(raw.encode()).digest(),
                                    "POST %s\n%s" % (path, key))).rowcount
    database.close()
    check_equal(changed, 1, "the key's row")
    again = server.restart()
    c = again.client()
    _replayed(c.post(path, raw=raw, headers={"Idempotency-Key": key}), first, "the same bytes")
    expect(c.post(path, raw=raw.replace(" ", ""), headers={"Idempotency-Key": key}), 422,
           "idempotency_key_reused", what="the same value in other bytes")
    check_counts(c, event_id, 19, 1, 0, "the one hold")
    again.stop()
