"""The waitlist (API.md section 14): the event setting, joins (one entry per user and event,
positions, Idempotency-Key, the checks), freed seats held for the first entry they can fill in
the step that freed them (a public hold racing the freed seat loses; counts show it held), an
offer's commit, lapse and release, cancel, the staff's list, and an offered entry's hold."""

import json
import subprocess
import time

import harness

from harness import (Server, check, check_equal, create_event, expect, hold, release, commit, uid,
                     get_event, get_hold, post_hold)


def waitlist_event(c, seats=4, offer_ttl_s=600, enabled=True, **fields):
    event_id = uid("wl")
    create_event(c, event_id, sections=[{"id": "F", "price": 100,
                                         "rows": [{"id": "A", "seats": seats}]}],
                 pools=[{"id": "GA", "capacity": 3, "price": 50}],
                 waitlist={"enabled": enabled, "offer_ttl_s": offer_ttl_s}, **fields)
    return event_id


def join(c, event_id, user_id, status=201, **body):
    body["user_id"] = user_id
    body.setdefault("quantity", 1)
    return expect(c.post("/v1/events/%s/waitlist" % event_id, body), status,
                  what="join %s" % user_id)


def entry(c, event_id, waitlist_id):
    return expect(c.get("/v1/events/%s/waitlist/%s" % (event_id, waitlist_id)), 200,
                  what="entry %s" % waitlist_id)


def sold_out(c, event_id, seats=4):
    """Every seat held by "owner", one hold per seat (ids in seat order)."""
    return [hold(c, event_id, "owner%d" % i, seats=["F-A-%d" % (i + 1)])["reservation_id"]
            for i in range(seats)]


def test_setting_and_join_checks(server):
    c = server.client()
    off = uid("wl")
    create_event(c, off, sections=[{"id": "F", "price": 1, "rows": [{"id": "A", "seats": 2}]}])
    check_equal(get_event(c, off)["waitlist"], {"enabled": False, "offer_ttl_s": 600},
                "the default setting")
    expect(c.post("/v1/events/%s/waitlist" % off, {"user_id": "u1", "quantity": 1}), 409,
           "waitlist_disabled")
    for setting, field in (({"enabled": "yes"}, "waitlist.enabled"), ({"offer_ttl_s": 0},
                           "waitlist.offer_ttl_s"), ("on", "waitlist")):
        response = c.post("/v1/events", {"id": uid("wl"), "waitlist": setting, "sections": [
            {"id": "F", "price": 1, "rows": [{"id": "A", "seats": 2}]}]})
        expect(response, 400, "invalid_request", what="setting %r" % (setting,))
        check_equal(response.error.get("field"), field, "the field named")
    event_id = waitlist_event(c, offer_ttl_s=30)
    check_equal(get_event(c, event_id)["waitlist"], {"enabled": True, "offer_ttl_s": 30},
                "the setting")
    expect(c.post("/v1/events/%s/waitlist" % event_id,
                  {"user_id": "u1", "section": "NOPE", "quantity": 1}), 404, "section_not_found")
    expect(c.post("/v1/events/%s/waitlist" % event_id,
                  {"user_id": "u1", "pool": "NOPE", "quantity": 1}), 404, "pool_not_found")
    expect(c.post("/v1/events/%s/waitlist" % event_id, {"user_id": "u1", "quantity": 0}), 400,
           "invalid_request", "quantity")
    expect(c.post("/v1/events/nope/waitlist", {"user_id": "u1", "quantity": 1}), 404,
           "event_not_found")
    first = join(c, event_id, "u1", section="F", quantity=2)
    check(first["waitlist_id"].startswith("w_"), "an id: %r" % first)
    check_equal((first["status"], first["position"], first["quantity"]), ("waiting", 1, 2),
                "the entry")
    again = join(c, event_id, "u1", 200, pool="GA", quantity=1)
    check_equal(again["waitlist_id"], first["waitlist_id"], "one entry per user and event")
    second = join(c, event_id, "u2")
    check_equal(second["position"], 2, "in join order")
    key = {"Idempotency-Key": uid("k")}
    body = {"user_id": "u3", "quantity": 1}
    one = expect(c.post("/v1/events/%s/waitlist" % event_id, body, headers=key), 201)
    two = expect(c.post("/v1/events/%s/waitlist" % event_id, body, headers=key), 201)
    check_equal(two, one, "the same answer again under the same key")
    expect(c.get("/v1/events/%s/waitlist/w_nope" % event_id), 404, "waitlist_not_found")


def test_freed_seat_goes_to_the_first_fillable_entry(server):
    c = server.client()
    event_id = waitlist_event(c)
    holds = sold_out(c, event_id)
    big = join(c, event_id, "big", section="F", quantity=2)
    one = join(c, event_id, "one")
    release(c, holds[0], "owner0")
    # The freed seat is one: too few for "big", who keeps its place; "one" has it held.
    check_equal(entry(c, event_id, big["waitlist_id"])["position"], 1, "big keeps its place")
    offered = entry(c, event_id, one["waitlist_id"])
    check_equal(offered["status"], "offered", "one is offered")
    check("expires_at" in offered and "position" not in offered, "an offer: %r" % offered)
    offer = get_hold(c, offered["reservation_id"])
    check_equal((offer["user_id"], offer["status"], offer["waitlist_id"]),
                ("one", "held", one["waitlist_id"]), "the offer is an ordinary hold")
    summary = get_event(c, event_id)
    check_equal(summary["counts"]["available"], 0, "the offered seat counts as held")
    # A public hold racing for the freed seat loses: the seat was never on sale.
    expect(post_hold(c, event_id, "racer", seats=["F-A-1"]), 409, "seats_unavailable")
    # Two adjacent seats come free: big has them.
    release(c, holds[2], "owner2")
    release(c, holds[1], "owner1")
    big_now = entry(c, event_id, big["waitlist_id"])
    check_equal(big_now["status"], "offered", "big is offered once two seats are free")
    seats = sorted(get_hold(c, big_now["reservation_id"])["seats"])
    check_equal(seats, ["F-A-2", "F-A-3"], "adjacent seats")
    commit(c, big_now["reservation_id"], "big")
    check_equal(entry(c, event_id, big["waitlist_id"])["status"], "fulfilled", "committed")



def test_public_holds_racing_lapses_never_win(server):
    """Racers on their own connections ask for the seats over and over while the holds on them
    lapse: every freed seat goes to a waiting entry in the step that freed it, so no racer ever
    gets one, whatever the interleaving."""
    import threading
    c = server.client()
    event_id = waitlist_event(c)
    holds = [hold(c, event_id, "owner%d" % i, seats=["F-A-%d" % (i + 1)], ttl_s=1)
             for i in range(4)]
    entries = [join(c, event_id, "wait%d" % i) for i in range(4)]
    lapse_at = time.time() + 1.0
    answers, stop = [], threading.Event()

    def racer(n):
        client, mine = server.client(), []
        while not stop.is_set():
            for seat in range(1, 5):
                response = post_hold(client, event_id, "racer%d" % n, seats=["F-A-%d" % seat])
                mine.append((response.status, response.code))
        answers.extend(mine)

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, lapse_at - time.time()) + 1.5)
    stop.set()
    for thread in threads:
        thread.join(30)
    check(len(answers) > 40, "the racers asked often: %d answers" % len(answers))
    check_equal(sorted(set(answers)), [(409, "seats_unavailable")], "no racer won a seat")
    offered = sorted(get_hold(c, entry(c, event_id, e["waitlist_id"])["reservation_id"])["seats"][0]
                     for e in entries)
    check_equal(offered, ["F-A-1", "F-A-2", "F-A-3", "F-A-4"], "every seat went to an entry")
    for old in holds:
        check_equal(get_hold(c, old["reservation_id"])["status"], "expired", "the first lapsed")

def test_lapse_cancel_and_list(server):
    c = server.client()
    event_id = waitlist_event(c, offer_ttl_s=1)
    holds = sold_out(c, event_id)
    first = join(c, event_id, "w1")
    second = join(c, event_id, "w2")
    third = join(c, event_id, "w3")
    release(c, holds[0], "owner0")
    check_equal(entry(c, event_id, first["waitlist_id"])["status"], "offered", "first offered")
    deadline = time.time() + 10
    while entry(c, event_id, first["waitlist_id"])["status"] == "offered":
        check(time.time() < deadline, "the offer lapses")
        time.sleep(0.2)
    check_equal(entry(c, event_id, first["waitlist_id"])["status"], "lapsed", "lapsed")
    now = entry(c, event_id, second["waitlist_id"])
    check_equal(now["status"], "offered", "the lapsed offer's seat goes to the next")
    expect(c.request("DELETE", "/v1/events/%s/waitlist/%s?user_id=w3" % (
        event_id, second["waitlist_id"])), 403, "not_owner")
    cancelled = expect(c.request("DELETE", "/v1/events/%s/waitlist/%s?user_id=w2" % (
        event_id, second["waitlist_id"])), 200)
    check_equal(cancelled["status"], "cancelled", "cancelled")
    check_equal(get_hold(c, now["reservation_id"])["status"], "released", "its offer released")
    check_equal(entry(c, event_id, third["waitlist_id"])["status"], "offered", "and passed on")
    again = expect(c.request("DELETE", "/v1/events/%s/waitlist/%s?user_id=w2" % (
        event_id, second["waitlist_id"])), 200)
    check_equal(again["status"], "cancelled", "a done entry answers as it is")
    listing = expect(c.get("/v1/events/%s/waitlist?limit=2" % event_id), 200)
    check_equal([e["waitlist_id"] for e in listing["entries"]],
                [first["waitlist_id"], second["waitlist_id"]], "oldest first")
    rest = expect(c.get("/v1/events/%s/waitlist?after=%s" % (event_id, listing["next"])), 200)
    check_equal([e["waitlist_id"] for e in rest["entries"]], [third["waitlist_id"]], "next page")
    check_equal(rest["next"], None, "the last page")
    response = c.get("/metrics")
    check_equal(response.status, 200, "GET /metrics")
    metrics = response.body.decode()
    # Every event of the server counts (other tests' entries too): at least this one's.
    counts = {}
    for line in metrics.splitlines():
        if line.startswith('holdfast_waitlist{status="'):
            counts[line.split('"')[1]] = float(line.rsplit(" ", 1)[1])
    check_equal(sorted(counts), ["cancelled", "fulfilled", "lapsed", "offered", "waiting"],
                "holdfast_waitlist's statuses")
    check(counts["lapsed"] >= 1 and counts["cancelled"] >= 1 and counts["offered"] >= 1,
          "holdfast_waitlist counts this event's entries: %r" % counts)
    offered = expect(c.get("/v1/events/%s/waitlist?status=offered" % event_id), 200)
    check_equal([e["waitlist_id"] for e in offered["entries"]], [third["waitlist_id"]],
                "by status")
    history = expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)["history"]
    told = [(e["type"], e.get("waitlist_id")) for e in history if e["type"].startswith("waitlist")]
    check_equal(told, [("waitlist_offer", first["waitlist_id"]),
                       ("waitlist_lapsed", first["waitlist_id"]),
                       ("waitlist_offer", second["waitlist_id"]),
                       ("waitlist_offer", third["waitlist_id"])], "the history's entries")


def waitlist_survives(kill):
    server = Server().start()
    c = server.client()
    event_id = waitlist_event(c)
    holds = sold_out(c, event_id)
    first = join(c, event_id, "w1", section="F")
    second = join(c, event_id, "w2", quantity=2)
    third = join(c, event_id, "w3", pool="GA", quantity=1)
    release(c, holds[3], "owner3")
    offered = entry(c, event_id, first["waitlist_id"])
    check_equal(offered["status"], "offered", "an offer before the restart")
    before = [entry(c, event_id, e["waitlist_id"]) for e in (first, second, third)]
    c.close()
    if kill:
        server.kill()
    else:
        server.stop()
        if harness.STORE_URL is None:
            done = subprocess.run([harness.BINARY, "check", "--data", server.data_dir],
                                  capture_output=True, timeout=harness.timeout(30))
            check_equal(done.returncode, 0, "holdfast check: %r" % done.stderr[-400:])
    server = server.restart()
    c = server.client()
    after = [entry(c, event_id, e["waitlist_id"]) for e in (first, second, third)]
    check_equal(after, before, "entries, positions and the offer after the restart")
    check_equal(get_hold(c, offered["reservation_id"])["waitlist_id"], first["waitlist_id"],
                "the offer's hold names its entry")
    # The order of the line is kept: two freed seats go to w2, not to a newcomer asking as much.
    newcomer = join(c, event_id, "w4", quantity=2)
    release(c, holds[0], "owner0")
    release(c, holds[1], "owner1")
    check_equal(entry(c, event_id, second["waitlist_id"])["status"], "offered",
                "w2 is offered after the restart")
    check_equal(entry(c, event_id, newcomer["waitlist_id"])["position"], 2,
                "w4 waits behind w3 (a pool entry)")
    c.close()
    server.stop()


def test_entries_survive_a_restart():
    waitlist_survives(kill=False)


def test_entries_survive_kill_9():
    waitlist_survives(kill=True)


def test_stream_never_shows_an_offered_seat_available(server):
    from test_streams import Stream
    c = server.client()
    event_id = waitlist_event(c)
    holds = sold_out(c, event_id)
    join(c, event_id, "one")
    stream = Stream(server.port, "/v1/events/%s/stream" % event_id)
    stream.open()
    release(c, holds[0], "owner0")
    release(c, holds[1], "owner1")   # fills no entry: on sale
    seen = []
    while True:
        item = stream.next(1.0)
        if item is None:
            break
        if item[0] == "seat":
            data = json.loads(item[1])
            seen.append((data["id"], data["status"]))
    check_equal(seen, [("F-A-1", "held"), ("F-A-2", "available")],
                "the offered seat told held once, never available; the other available")
    stream.close()


def test_a_done_entry_keeps_its_offer_id_when_the_hold_is_forgotten():
    """With --finished-holds 0 the released offer leaves memory at once: the entry still names
    it, before and after a restart."""
    server = Server(extra_args=["--finished-holds", "0"]).start()
    c = server.client()
    event_id = waitlist_event(c)
    holds = sold_out(c, event_id)
    first = join(c, event_id, "w1")
    release(c, holds[0], "owner0")
    offer = entry(c, event_id, first["waitlist_id"])["reservation_id"]
    expect(c.request("DELETE", "/v1/events/%s/waitlist/%s?user_id=w1" % (
        event_id, first["waitlist_id"])), 200)
    done = entry(c, event_id, first["waitlist_id"])
    check_equal((done["status"], done.get("reservation_id")), ("cancelled", offer),
                "a cancelled entry names its released offer")
    c.close()
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(entry(c, event_id, first["waitlist_id"]), done, "the same after a restart")
    c.close()
    server.stop()


def test_allocations_and_the_waitlist(server):
    """Seats released from an allocation count as coming free: the waitlist takes them first
    (API.md section 14), and units going back to their allocation are offered to no entry."""
    c = server.client()
    event_id = waitlist_event(c, seats=4)
    expect(c.post("/v1/events/%s/allocations" % event_id,
                  {"id": "guests", "seats": ["F-A-3", "F-A-4"], "pools": {"GA": 3}}), 201)
    public = [hold(c, event_id, "owner%d" % i, seats=["F-A-%d" % (i + 1)])["reservation_id"]
              for i in range(2)]
    waiting = join(c, event_id, "w1", section="F")
    by_pool = join(c, event_id, "w2", pool="GA")
    # A hold of the allocation's seat lapsing goes back to the allocation, not to the line.
    guest = hold(c, event_id, "guest", seats=["F-A-3"], allocation="guests")
    release(c, guest["reservation_id"], "guest")
    check_equal(entry(c, event_id, waiting["waitlist_id"])["status"], "waiting",
                "an allocation's seat back to it is offered to no entry")
    expect(c.post("/v1/events/%s/allocations/guests/release" % event_id,
                  {"seats": ["F-A-3"], "pools": {"GA": 1}}), 200)
    offered = entry(c, event_id, waiting["waitlist_id"])
    check_equal(offered["status"], "offered", "the released seat went to the first entry")
    check_equal(get_hold(c, offered["reservation_id"])["seats"], ["F-A-3"], "the offered seat")
    check_equal(entry(c, event_id, by_pool["waitlist_id"])["status"], "offered",
                "the released unit went to the pool's entry")
    seats = {s["id"]: s["status"] for s in
             expect(c.get("/v1/events/%s/seats" % event_id), 200)["seats"]}
    check_equal((seats["F-A-3"], seats["F-A-4"]), ("held", "allocated"),
                "the released seat held for the entry, the other still set aside")
    for hold_id, owner in zip(public, ("owner0", "owner1")):
        release(c, hold_id, owner)


def test_an_event_cancel_cancels_its_entries():
    """A cancelled event's entries are cancelled with it, the offered one too (its hold
    released, nothing offered to the next); joins answer event_cancelled; all of it is durable."""
    server = Server().start()
    c = server.client()
    event_id = waitlist_event(c)
    holds = sold_out(c, event_id)
    first = join(c, event_id, "w1")
    second = join(c, event_id, "w2", pool="GA", quantity=2)
    release(c, holds[0], "owner0")
    offered = entry(c, event_id, first["waitlist_id"])
    check_equal(offered["status"], "offered", "an offer before the cancel")
    expect(c.post("/v1/events/%s/cancel" % event_id, {}), 202, what="cancel the event")
    for kept in (first, second):
        check_equal(entry(c, event_id, kept["waitlist_id"])["status"], "cancelled",
                    "%s cancelled with its event" % kept["waitlist_id"])
    check_equal(get_hold(c, offered["reservation_id"])["status"], "released",
                "the offer's hold released")
    join(c, event_id, "w3", status=409)
    check_equal(c.post("/v1/events/%s/waitlist" % event_id,
                       {"user_id": "w1", "quantity": 1}).error.get("code"),
                "event_cancelled", "a join of a cancelled event")
    c.close()
    server.kill()
    server = server.restart()
    c = server.client()
    for kept in (first, second):
        check_equal(entry(c, event_id, kept["waitlist_id"])["status"], "cancelled",
                    "%s still cancelled after kill -9" % kept["waitlist_id"])
    c.close()
    server.stop()


def patch_event(c, event_id, body, status=200):
    return expect(c.request("PATCH", "/v1/events/%s" % event_id, body), status,
                  what="PATCH %r" % (body,))


def test_patch_changes_the_setting_durably():
    """PATCH's waitlist: on, its TTL, off (joins refused, waiting entries kept and still
    offered), each kept through a restart; a PATCH of another member keeps the setting."""
    server = Server().start()
    c = server.client()
    event_id = waitlist_event(c, enabled=False)
    join(c, event_id, "w0", status=409)
    patch_event(c, event_id, {"waitlist": {"enabled": True}})
    check_equal(get_event(c, event_id)["waitlist"], {"enabled": True, "offer_ttl_s": 600},
                "turned on, the TTL as it was")
    patch_event(c, event_id, {"waitlist": {"offer_ttl_s": 45}})
    check_equal(get_event(c, event_id)["waitlist"], {"enabled": True, "offer_ttl_s": 45},
                "the TTL alone")
    response = c.request("PATCH", "/v1/events/%s" % event_id, {"waitlist": {"offer_ttl_s": 0}})
    expect(response, 400, "invalid_request", what="a TTL of 0")
    check_equal(response.error.get("field"), "waitlist.offer_ttl_s", "the field named")
    holds = sold_out(c, event_id)
    first = join(c, event_id, "w1")
    second = join(c, event_id, "w2")
    patch_event(c, event_id, {"name": "renamed"})
    c.close()
    server.kill()
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, event_id)["waitlist"], {"enabled": True, "offer_ttl_s": 45},
                "the setting after a PATCH of the name and kill -9")
    patch_event(c, event_id, {"waitlist": {"enabled": False}})
    join(c, event_id, "w3", status=409)
    release(c, holds[0], "owner0")
    offered = entry(c, event_id, first["waitlist_id"])
    check_equal(offered["status"], "offered", "a waiting entry is still offered when turned off")
    left = (get_hold(c, offered["reservation_id"])["expires_at"])
    check(left is not None, "the offer has its expiry")
    c.close()
    server.stop()
    server = server.restart()
    c = server.client()
    check_equal(get_event(c, event_id)["waitlist"]["enabled"], False, "off after a restart")
    check_equal(entry(c, event_id, second["waitlist_id"])["status"], "waiting",
                "the second entry still waits")
    c.close()
    server.stop()
