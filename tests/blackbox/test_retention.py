"""Retention of finished holds: `--finished-holds N` [HOLDFAST_FINISHED_HOLDS] keeps at most N
released and expired holds in memory; older ones are forgotten once their finishing is durable
and read back from the store when a request names them, answering exactly as before (API.md
sections 3 and 4). Held and confirmed holds are never forgotten. Bad values: exit 2."""

import json
import os
import socket
import subprocess
import time
import uuid

import harness
from harness import (Server, all_seats, check, check_equal, commit, create_event, expect,
                     free_port, get_event, get_hold, hold, hold_body, make_temp_dir, release,
                     seat_state, timeout, uid, user)

FORGET_ALL = ["--finished-holds", "0"]
UNKNOWN_HOLD = "res_" + "0" * 36
SHORT_TTL_S = 0.3

# The standard event: FLOOR (45000) rows A and B of 20, BALC (12000) row A of 10, pool GA of 5
# at 9900. 50 seats.


def _finished(created, status):
    """The body of a hold once released or expired: the creation's, with the new status and no
    countdown left (created_at, expires_at, seats, pools, total... unchanged)."""
    body = dict(created)
    body.pop("capped", None)
    body["status"] = status
    body["expires_in_ms"] = 0
    return body


def _churn(c, rounds=3):
    """Unrelated acknowledged writes, so that every earlier batch has become durable and the
    server has had the chance to forget what it may forget."""
    scratch = uid("churn")
    create_event(c, scratch, sections=[{"id": "S", "price": 1, "rows": [{"id": "R",
                                                                         "seats": 4}]}])
    for n in range(rounds):
        u1 = user("churn")
        h = hold(c, scratch, u1, ["S-R-%d" % (n % 4 + 1)])
        release(c, h["reservation_id"], u1)
    expect(c.get("/healthz"), 200)


def _wait_counts(c, event_id, counts, what):
    """Polls the summary until the background timer has released the lapsed holds."""
    deadline = time.monotonic() + timeout(5)
    while True:
        summary = get_event(c, event_id)
        if summary["counts"] == counts or time.monotonic() > deadline:
            check_equal(summary["counts"], counts, what)
            return summary
        time.sleep(0.05)


def _scenario(c):
    """Released holds (plain, pools only, extended first, via replace_existing), expired holds
    (by the timer, released after lapsing, a late commit), an active hold, seats of finished
    holds taken again (held, sold), a confirmed hold, an idempotent creation, and a user with
    a seat limit. Returns what the checks need."""
    s = {"finished": [], "active": [], "confirmed": [], "replays": []}
    event_id = uid("ret")
    create_event(c, event_id)
    s["event"] = event_id

    def released(owner, seats=None, pools=None, ttl_s=None, extend_to=None, headers=None):
        if headers:
            raw = json.dumps(hold_body(owner, seats, pools, ttl_s))
            path = "/v1/events/%s/holds" % event_id
            first = c.post(path, raw=raw, headers=headers)
            created = expect(first, 201, what="idempotent hold")
            s["replays"].append((path, raw, dict(headers), first))
        else:
            created = hold(c, event_id, owner, seats, pools, ttl_s)
        if extend_to is not None:
            extended = expect(c.post("/v1/holds/%s/extend" % created["reservation_id"],
                                     {"user_id": owner, "ttl_s": extend_to}), 200, what="extend")
            check(extended["expires_at"] > created["expires_at"], "the extension moved "
                  "expires_at: %r then %r" % (created["expires_at"], extended["expires_at"]))
            created = extended
        answer = release(c, created["reservation_id"], owner)
        expected = _finished(created, "released")
        check_equal(answer, expected, "release answer of %s" % created["reservation_id"])
        check_equal(get_hold(c, created["reservation_id"]), expected,
                    "GET right after the release of %s" % created["reservation_id"])
        s["finished"].append((created["reservation_id"], owner, expected))
        return created

    u_rel1, u_rel2, u_rel3, u_rep = user("rel"), user("rel"), user("rel"), user("rep")
    released(u_rel1, ["FLOOR-A-1", "FLOOR-A-2"], {"GA": 1})
    released(u_rel2, pools={"GA": 2}, headers={"Idempotency-Key": "key-" + uuid.uuid4().hex})
    released(u_rel3, ["BALC-A-1"], ttl_s=60, extend_to=120)

    # replace_existing releases the user's earlier hold in the same step.
    replaced = hold(c, event_id, u_rep, ["FLOOR-A-10"])
    kept = hold(c, event_id, u_rep, ["FLOOR-A-11"], replace_existing=True)
    expected = _finished(replaced, "released")
    check_equal(get_hold(c, replaced["reservation_id"]), expected, "the replaced hold")
    s["finished"].append((replaced["reservation_id"], u_rep, expected))
    s["active"].append(kept)

    # Holds that lapse: the timer expires them; one is released after lapsing, one gets a
    # late commit.
    u_exp1, u_exp2, u_exp3 = user("exp"), user("exp"), user("exp")
    lapsing = [(hold(c, event_id, u_exp1, ["FLOOR-A-3"], {"GA": 1}, ttl_s=SHORT_TTL_S), u_exp1),
               (hold(c, event_id, u_exp2, ["FLOOR-B-1", "FLOOR-B-2"], ttl_s=SHORT_TTL_S),
                u_exp2),
               (hold(c, event_id, u_exp3, ["BALC-A-2"], ttl_s=SHORT_TTL_S), u_exp3)]

    # A user with a seat limit whose released and expired holds must not count any more.
    limited = uid("retlim")
    create_event(c, limited, sections=[{"id": "S", "price": 5, "rows": [{"id": "R",
                                                                         "seats": 10}]}],
                 max_seats_per_user=2)
    u_lim = user("lim")
    first = hold(c, limited, u_lim, ["S-R-1", "S-R-2"])
    release(c, first["reservation_id"], u_lim)
    s["finished"].append((first["reservation_id"], u_lim, _finished(first, "released")))
    lapsed = hold(c, limited, u_lim, ["S-R-3", "S-R-4"], ttl_s=SHORT_TTL_S)
    s["limited"] = (limited, u_lim)

    time.sleep(1.0)
    _wait_counts(c, event_id, {"available": 49, "held": 1, "sold": 0}, "after the lapses")
    _wait_counts(c, limited, {"available": 10, "held": 0, "sold": 0}, "limited, after lapse")
    for created, owner in lapsing + [(lapsed, u_lim)]:
        expected = _finished(created, "expired")
        check_equal(get_hold(c, created["reservation_id"]), expected,
                    "GET right after the expiry of %s" % created["reservation_id"])
        s["finished"].append((created["reservation_id"], owner, expected))
    check_equal(release(c, lapsing[1][0]["reservation_id"], u_exp2),
                _finished(lapsing[1][0], "expired"), "release after the lapse")
    expect(c.post("/v1/holds/%s/commit" % lapsing[2][0]["reservation_id"],
                  {"user_id": u_exp3, "payment_ref": "pi_late"}), 410, "hold_expired",
           what="late commit")

    # Seats of finished holds taken again: one held, one sold.
    u_new, u_buy = user("new"), user("buy")
    s["active"].append(hold(c, event_id, u_new, ["FLOOR-A-1"], ttl_s=600))
    bought = hold(c, event_id, u_buy, ["FLOOR-A-3"], {"GA": 1})
    order = commit(c, bought["reservation_id"], u_buy, "pi_again")
    s["confirmed"].append((bought["reservation_id"], u_buy,
                           dict(_finished(bought, "confirmed"), order_id=order["order_id"]),
                           order))

    # A confirmed hold.
    u_conf = user("conf")
    confirmed = hold(c, event_id, u_conf, ["FLOOR-B-10", "BALC-A-5"], {"GA": 1})
    order = commit(c, confirmed["reservation_id"], u_conf, "pi_conf")
    check_equal((order["status"], order["reservation_id"], order["seats"], order["pools"],
                 order["total"]),
                ("confirmed", confirmed["reservation_id"], ["FLOOR-B-10", "BALC-A-5"],
                 {"GA": 1}, 45000 + 12000 + 9900), "order")
    expected = dict(_finished(confirmed, "confirmed"), order_id=order["order_id"])
    check_equal(get_hold(c, confirmed["reservation_id"]), expected, "GET after the commit")
    s["confirmed"].append((confirmed["reservation_id"], u_conf, expected, order))

    # A hold still held from the start (never forgotten).
    s["active"].append(hold(c, event_id, user("act"), ["FLOOR-A-20"], ttl_s=600))

    summary = get_event(c, event_id)
    check_equal(summary["counts"], {"available": 44, "held": 3, "sold": 3}, "counts")
    check_equal({k: summary["pools"][0][k] for k in ("available", "held", "sold")},
                {"available": 3, "held": 0, "sold": 2}, "pool GA")
    _churn(c)
    return s


def _state(c, s):
    """What the checks must leave untouched: every seat (with its version) and the summaries."""
    event_id, limited = s["event"], s["limited"][0]
    return {"event": get_event(c, event_id), "seats": all_seats(c, event_id),
            "limited": get_event(c, limited), "limited seats": all_seats(c, limited)}


def _verify(c, s, what):
    before = _state(c, s)
    other = user("other")
    for hold_id, owner, expected in s["finished"]:
        label = "%s: %s hold %s" % (what, expected["status"], hold_id)
        check_equal(get_hold(c, hold_id), expected, label + ", GET")
        # Another user first: ownership is checked before the state.
        for action in ("release", "commit", "extend"):
            expect(c.post("/v1/holds/%s/%s" % (hold_id, action),
                          {"user_id": other, "payment_ref": "pi_x", "ttl_s": 60}), 403,
                   "not_owner", what="%s, %s by another user" % (label, action))
        check_equal(release(c, hold_id, owner), expected, label + ", repeated release")
        if expected["status"] == "released":
            expect(c.post("/v1/holds/%s/commit" % hold_id,
                          {"user_id": owner, "payment_ref": "pi_x"}), 409, "hold_released",
                   what=label + ", commit")
            expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": owner, "ttl_s": 60}),
                   409, "hold_not_active", what=label + ", extend")
        else:
            expect(c.post("/v1/holds/%s/commit" % hold_id,
                          {"user_id": owner, "payment_ref": "pi_x"}), 410, "hold_expired",
                   what=label + ", commit")
            expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": owner, "ttl_s": 60}),
                   410, "hold_expired", what=label + ", extend")
        check_equal(get_hold(c, hold_id), expected, label + ", GET after the attempts")
    for created in s["active"]:
        now = dict(get_hold(c, created["reservation_id"]))
        left = now.pop("expires_in_ms")
        check(0 < left <= 600000, "%s: active hold's expires_in_ms %r" % (what, left))
        check_equal(now, dict({k: v for k, v in created.items() if k != "expires_in_ms"}),
                    "%s: active hold %s" % (what, created["reservation_id"]))
    for hold_id, owner, expected, order in s["confirmed"]:
        label = "%s: confirmed hold %s" % (what, hold_id)
        check_equal(get_hold(c, hold_id), expected, label + ", GET")
        check_equal(commit(c, hold_id, owner, order["payment_ref"]), order,
                    label + ", repeated commit")
        refused = expect(c.post("/v1/holds/%s/commit" % hold_id,
                                {"user_id": owner, "payment_ref": "pi_repeat"}), 409,
                         "already_confirmed", what=label + ", commit with another payment")
        check_equal((refused["error"].get("order_id"), refused["error"].get("payment_ref")),
                    (order["order_id"], order["payment_ref"]), label + ", the 409's order")
        expect(c.post("/v1/holds/%s/release" % hold_id, {"user_id": owner}), 409,
               "already_confirmed", what=label + ", release")
        expect(c.post("/v1/holds/%s/extend" % hold_id, {"user_id": owner, "ttl_s": 60}), 409,
               "hold_not_active", what=label + ", extend")
        check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order,
                    label + ", GET order")
    for path, raw, headers, first in s["replays"]:
        again = c.post(path, raw=raw, headers=headers)
        check_equal((again.status, again.body), (first.status, first.body),
                    "%s: idempotent repeat of a creation whose hold is released" % what)
    expect(c.get("/v1/holds/%s" % UNKNOWN_HOLD), 404, "hold_not_found", what=what + ", unknown")
    for action in ("release", "commit", "extend"):
        expect(c.post("/v1/holds/%s/%s" % (UNKNOWN_HOLD, action), {"user_id": other}), 404,
               "hold_not_found", what="%s, %s of an unknown hold" % (what, action))
    expect(c.get("/v1/holds/nonsense"), 404, "hold_not_found", what=what + ", not an id")
    after = _state(c, s)
    for key in before:
        check_equal(after[key], before[key], "%s: %s after reading the forgotten holds back" % (
            what, key))
    # The limited user's released and expired holds do not count against the limit.
    limited, u_lim = s["limited"]
    h = hold(c, limited, u_lim, ["S-R-5", "S-R-6"])
    expect(c.post("/v1/events/%s/holds" % limited, hold_body(u_lim, ["S-R-7"])), 429,
           "user_limit_exceeded", what=what + ", a third seat")
    release(c, h["reservation_id"], u_lim)
    _churn(c)


def test_forgotten_holds_answer_as_before():
    server = Server(extra_args=FORGET_ALL).start()
    c = server.client()
    s = _scenario(c)
    _verify(c, s, "first round")
    # Read back, then forgotten again: the same answers.
    _verify(c, s, "second round")
    server.stop()


test_forgotten_holds_answer_as_before.weight = 2.0


def test_forgotten_holds_survive_restart():
    server = Server(extra_args=FORGET_ALL).start()
    c = server.client()
    s = _scenario(c)
    _verify(c, s, "before the restart")
    state = _state(c, s)
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    # The restart keeps none of the finished holds in memory, only counts their seats' changes:
    # every version and count must come back the same.
    check_equal(_state(c, s), state, "seats and summaries after the restart")
    _verify(c, s, "after the restart")
    _verify(c, s, "after the restart, again")
    c.close()
    again.stop()
    # With the default retention every finished hold is loaded: the same answers.
    third = Server(data_dir=server.data_dir).start()
    c = third.client()
    _verify(c, s, "after a restart with the default retention")
    c.close()
    third.stop()
    # And back to forgetting everything on the same data.
    fourth = Server(data_dir=server.data_dir, extra_args=FORGET_ALL).start()
    _verify(fourth.client(), s, "after a second restart with --finished-holds 0")
    fourth.stop()


test_forgotten_holds_survive_restart.weight = 3.0


def test_confirmed_holds_kept():
    server = Server(extra_args=FORGET_ALL).start()
    c = server.client()
    event_id = uid("retc")
    create_event(c, event_id)
    u1 = user()
    created = hold(c, event_id, u1, ["FLOOR-A-5", "FLOOR-A-6"], {"GA": 2})
    order = commit(c, created["reservation_id"], u1, "pi_keep")
    expected = dict(_finished(created, "confirmed"), order_id=order["order_id"])
    # Many finished holds around it, forgotten at once.
    for n in range(1, 11):
        owner = user()
        h = hold(c, event_id, owner, ["BALC-A-%d" % n])
        release(c, h["reservation_id"], owner)
    _churn(c)
    for round_ in range(2):
        check_equal(get_hold(c, created["reservation_id"]), expected, "GET confirmed hold")
        check_equal(commit(c, created["reservation_id"], u1, order["payment_ref"]), order,
                    "repeated commit")
        expect(c.post("/v1/holds/%s/commit" % created["reservation_id"],
                      {"user_id": u1, "payment_ref": "pi_other"}), 409, "already_confirmed",
               what="commit with another payment")
        check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order, "GET order")
        check_equal(expect(c.get("/v1/users/%s/orders?event=%s" % (u1, event_id)), 200),
                    {"orders": [order], "next": None}, "the user's orders")
        check_equal(seat_state(c, event_id, "FLOOR-A-5"), ("sold", 3), "seat")
        summary = get_event(c, event_id)
        check_equal(summary["counts"], {"available": 48, "held": 0, "sold": 2}, "counts")
        check_equal({k: summary["pools"][0][k] for k in ("available", "held", "sold")},
                    {"available": 3, "held": 0, "sold": 2}, "pool GA")
        _churn(c)
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    check_equal(get_hold(c, created["reservation_id"]), expected, "GET after the restart")
    check_equal(commit(c, created["reservation_id"], u1, "pi_keep"), order,
                "commit after the restart")
    expect(c.post("/v1/holds/%s/commit" % created["reservation_id"],
                  {"user_id": u1, "payment_ref": "pi_test"}), 409, "already_confirmed",
           what="another payment after the restart")
    check_equal(expect(c.get("/v1/orders/%s" % order["order_id"]), 200), order,
                "GET order after the restart")
    again.stop()


def test_many_holds_small_cap():
    server = Server(extra_args=["--finished-holds", "5"]).start()
    c = server.client()
    event_id = uid("retm")
    create_event(c, event_id)
    seats = ["FLOOR-%s-%d" % (row, n) for row in "AB" for n in range(1, 21)]
    seats += ["BALC-A-%d" % n for n in range(1, 11)]
    check_equal(len(seats), 50, "seats")
    finished = []
    for seat in seats:
        owner = user()
        created = hold(c, event_id, owner, [seat])
        answer = release(c, created["reservation_id"], owner)
        expected = _finished(created, "released")
        check_equal(answer, expected, "release of %s" % seat)
        finished.append((created["reservation_id"], owner, expected))
    _churn(c)
    listing = all_seats(c, event_id)
    check_equal([(s["status"], s["version"]) for s in listing], [("available", 3)] * 50,
                "every seat free after a hold and a release")
    for round_, order in enumerate((finished, list(reversed(finished)), finished)):
        for hold_id, owner, expected in order:
            check_equal(get_hold(c, hold_id), expected, "round %d: GET %s" % (round_, hold_id))
        for hold_id, owner, expected in order[::7]:
            check_equal(release(c, hold_id, owner), expected, "round %d: release" % round_)
            expect(c.post("/v1/holds/%s/commit" % hold_id,
                          {"user_id": owner, "payment_ref": "pi"}), 409, "hold_released",
                   what="round %d: commit" % round_)
    check_equal(all_seats(c, event_id), listing, "the seats after reading every hold back")
    check_equal(get_event(c, event_id)["counts"], {"available": 50, "held": 0, "sold": 0},
                "counts")
    c.close()
    server.stop()
    again = server.restart()
    c = again.client()
    # 45 of the 50 released holds are not loaded at start, only counted into their seats'
    # versions: the listing must be the same.
    check_equal(all_seats(c, event_id), listing, "the seats after the restart")
    for hold_id, owner, expected in finished:
        check_equal(get_hold(c, hold_id), expected, "after the restart: GET %s" % hold_id)
    # Every seat can still be held.
    h = hold(c, event_id, user(), ["FLOOR-A-1", "FLOOR-B-20", "BALC-A-10"])
    check_equal(h["status"], "held", "a new hold")
    again.stop()


test_many_holds_small_cap.weight = 2.0


def _run_expecting_exit_2(value, via_environment=False):
    data_dir = make_temp_dir()
    port = free_port()
    command = [harness.BINARY, "serve", "--listen", "127.0.0.1:%d" % port, "--data", data_dir]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    if via_environment:
        environment["HOLDFAST_FINISHED_HOLDS"] = value
    else:
        command += ["--finished-holds", value]
    label = "%s %r" % ("HOLDFAST_FINISHED_HOLDS" if via_environment else "--finished-holds",
                       value)
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=environment,
                              timeout=timeout(10))
    except subprocess.TimeoutExpired:
        check(False, "%s: the server did not exit within %.0f s" % (label, timeout(10)))
    check_equal(done.returncode, 2, "%s: exit code" % label)
    check(done.stderr.decode("utf-8", "replace").strip(), "%s: nothing on stderr" % label)
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.settimeout(2)
    try:
        listening = probe.connect_ex(("127.0.0.1", port)) == 0
    finally:
        probe.close()
    check(not listening, "%s: something listens on the port" % label)


def test_bad_values_exit_2():
    for value in ("-1", "abc", "10000001", "", "5x", "99999999999999999999999"):
        _run_expecting_exit_2(value)
    for value in ("-1", "abc", "10000001"):
        _run_expecting_exit_2(value, via_environment=True)


def test_boundary_values_start():
    for value in ("0", "10000000"):
        server = Server(extra_args=["--finished-holds", value]).start()
        c = server.client()
        event_id = uid("retb")
        create_event(c, event_id)
        u1 = user()
        h = hold(c, event_id, u1, ["FLOOR-A-1"])
        check_equal(release(c, h["reservation_id"], u1), _finished(h, "released"),
                    "--finished-holds %s: release" % value)
        _churn(c)
        check_equal(get_hold(c, h["reservation_id"]), _finished(h, "released"),
                    "--finished-holds %s: GET" % value)
        c.close()
        server.stop()
