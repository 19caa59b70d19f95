"""Cancelling an event (API.md section 13, second half): POST /v1/events/{event}/cancel answers
202 with its job and cancels the event at once (its held holds released, new holds, bookings
and joins refused with 409 event_cancelled), a second cancel answers the same job whatever
its body; rebook_to and offer_ttl_s are checked (400 invalid_request naming the field); the job
goes through the event's confirmed orders oldest first, each cancelled with a refund of its
total (reason event_cancelled), once; GET /v1/jobs/{id} and its /offers (paged, filtered),
404 job_not_found; holdfast_jobs{status}; the history's event_cancel and job_done entries; the
job kept over a restart and a kill -9; the API key. Offers on rebook_to: the same seat ids, else
the same section, else the best section at a price no higher (each section's seats of an order
as one group, together when they were); an order with nothing equivalent is refunded."""

import subprocess
import time

import harness

from harness import (Server, check, check_equal, commit, create_event, expect, hold, uid, user)

WEIGHT = 2.0

FLOOR = 45000


def event(c, currency=None):
    event_id = uid("job")
    fields = {"currency": currency} if currency else {}
    create_event(c, event_id, **fields)
    return event_id


def orders_on(c, event_id, count, payment_ref="pi_job"):
    """count confirmed orders of one FLOOR seat each, by users of their own, oldest first."""
    made = []
    for n in range(count):
        u = user()
        seat = "FLOOR-%s-%d" % ("AB"[n // 20], n % 20 + 1)
        held = hold(c, event_id, u, [seat])
        made.append(commit(c, held["reservation_id"], u, payment_ref))
    return made


def cancel(c, event_id, body=None, status=202):
    return expect(c.post("/v1/events/%s/cancel" % event_id, body if body is not None else {}),
                  status, what="cancel %s" % event_id)


def wait_done(c, job_id, limit_s=60.0):
    deadline = time.time() + limit_s
    while True:
        job = expect(c.get("/v1/jobs/%s" % job_id), 200)
        if job["status"] == "done":
            return job
        check(time.time() < deadline, "job %s not done in %ss: %r" % (job_id, limit_s, job))
        time.sleep(0.05)


def offers(c, job_id, query=""):
    return expect(c.get("/v1/jobs/%s/offers%s" % (job_id, query)), 200)


def metric(c, name, labels):
    text = c.get("/metrics").body.decode()
    wanted = '%s{%s} ' % (name, labels)
    for line in text.splitlines():
        if line.startswith(wanted):
            return float(line.split()[1])
    return None


def history_types(c, event_id):
    entries = expect(c.get("/v1/events/%s/history?limit=1000" % event_id), 200)["history"]
    return [e["type"] for e in entries], entries


def refunds_of(c, reason):
    listed = expect(c.get("/v1/refunds?limit=1000"), 200)["refunds"]
    return [r for r in listed if r["reason"] == reason]


# ---- the cancel ----


def test_cancel_answers_202_and_closes_the_event(server):
    c = server.client()
    event_id = event(c)
    other = event(c)
    sold = orders_on(c, event_id, 2)
    u = user()
    open_hold = hold(c, event_id, u, ["BALC-A-1"])
    job = cancel(c, event_id, {"rebook_to": other, "offer_ttl_s": 3600, "reason": "weather"})
    check(job["job_id"].startswith("job_"), "a job id: %r" % job)
    check_equal((job["event"], job["orders"], job["offered"], job["accepted"]),
                (event_id, 2, 0, 0), "the job at once")
    check(job["status"] in ("running", "done"), "the job's status: %r" % job)
    harness.parse_time(job["created_at"], "created_at")
    summary = expect(c.get("/v1/events/%s" % event_id), 200)
    check_equal((summary["status"], summary["job_id"], summary["sales_open"]),
                ("cancelled", job["job_id"], False), "the cancelled event's summary")
    check("status" not in expect(c.get("/v1/events/%s" % other), 200), "no status otherwise")
    # At once: the held hold released, sales closed for good.
    check_equal(expect(c.get("/v1/holds/%s" % open_hold["reservation_id"]), 200)["status"],
                "released", "the event's held hold")
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": u, "seats": ["BALC-A-2"]}),
           409, "event_cancelled")
    expect(c.post("/v1/events/%s/bookings" % event_id,
                  {"user_id": u, "seats": [{"id": "BALC-A-3", "version": 1}]}),
           409, "event_cancelled")
    # The second cancel answers the same job, whatever its body.
    again = cancel(c, event_id, {"rebook_to": "nowhere", "offer_ttl_s": -5})
    check_equal(again["job_id"], job["job_id"], "the second cancel's job")
    # rebook_to has the same layout: each order is offered its own seat ids there.
    done = wait_done(c, job["job_id"])
    check_equal((done["offered"], done["open"], done["refunded"]), (2, 2, 0), "both offered")
    listed = offers(c, job["job_id"])["offers"]
    check_equal([o["order_id"] for o in listed], [o["order_id"] for o in sold], "offers in order")
    check(all(o["status"] == "offered" and o["reservation_id"] for o in listed), "offered")
    first, second = listed
    offer = expect(c.get("/v1/holds/%s" % first["reservation_id"]), 200)
    check_equal((offer["event"], offer["exchange_for"],
                 offer["difference"], offer["seats"]),
                (other, sold[0]["order_id"], 0, ["FLOOR-A-1"]), "the offer's exchange hold")
    check_equal(offer["expires_at"], first["expires_at"], "the offer's expiry")
    # The buyer finds it among their orders.
    mine = expect(c.get("/v1/users/%s/orders" % sold[0]["user_id"]), 200)["orders"]
    check_equal([o.get("rebooking") for o in mine],
                [{"reservation_id": first["reservation_id"], "expires_at": first["expires_at"]}],
                "the old order's rebooking while the offer is open")
    # Accepted by its commit (no payment: the price paid carries over); the other released:
    # its old order is refunded.
    new = expect(c.post("/v1/holds/%s/commit" % first["reservation_id"],
                        {"user_id": sold[0]["user_id"]}), 200)
    check_equal(new["total"], FLOOR, "the new order keeps the old total")
    expect(c.post("/v1/holds/%s/release" % second["reservation_id"],
                  {"user_id": sold[1]["user_id"]}), 200)
    settled = expect(c.get("/v1/jobs/%s" % job["job_id"]), 200)
    check_equal((settled["accepted"], settled["refunded"], settled["open"]), (1, 1, 0),
                "the counts move as offers settle")
    old = expect(c.get("/v1/orders/%s" % sold[0]["order_id"]), 200)
    check_equal((old["status"], old.get("rebooking")), ("exchanged", None),
                "the accepted offer's old order")
    check_equal(expect(c.get("/v1/orders/%s" % sold[1]["order_id"]), 200)["status"], "cancelled",
                "the released offer's old order")
    check_equal([r["order_id"] for r in refunds_of(c, "event_cancelled")
                 if r["order_id"] in (sold[0]["order_id"], sold[1]["order_id"])],
                [sold[1]["order_id"]], "one refund, of the released offer's order")
    statuses = [o["status"] for o in offers(c, job["job_id"])["offers"]]
    check_equal(statuses, ["accepted", "refunded"], "the offers settled")
    types, _ = history_types(c, event_id)
    check_equal(types.count("job_done"), 1, "one job_done, however offers settle")


def test_offers_at_no_higher_price(server):
    c = server.client()
    event_id = event(c)
    other = uid("job")
    create_event(c, other, sections=[
        {"id": "BOX", "price": FLOOR + 5000, "rows": [{"id": "A", "seats": 4}]},
        {"id": "STALLS", "price": 30000, "rows": [{"id": "A", "seats": 4}]},
        {"id": "BALC", "price": 12000, "rows": [{"id": "A", "seats": 2}]}])
    bought = [["FLOOR-A-1", "FLOOR-A-2"], ["FLOOR-B-1", "BALC-A-1"], ["BALC-A-5"], ["BALC-A-6"],
              ["FLOOR-B-5"], ["FLOOR-B-7"]]
    sold = []
    for seats in bought:
        u = user()
        sold.append(commit(c, hold(c, event_id, u, seats)["reservation_id"], u, "pi_job"))
    job = wait_done(c, cancel(c, event_id, {"rebook_to": other})["job_id"])
    check_equal((job["offered"], job["refunded"]), (4, 2), "the job's counts")
    listed = offers(c, job["job_id"])["offers"]
    got = []
    for listed_offer in listed:
        if listed_offer["reservation_id"] is None:
            got.append(None)
            continue
        offer = expect(c.get("/v1/holds/%s" % listed_offer["reservation_id"]), 200)
        check_equal((offer["event"], offer["difference"]), (other, 0), "an offer's hold")
        got.append(sorted(offer["seats"]))
    check_equal(got, [
        # No FLOOR there: STALLS (listed before BALC, cheaper than FLOOR), two together.
        ["STALLS-A-1", "STALLS-A-2"],
        # Each section's seats on their own: BALC-A-1 by its id, the FLOOR seat to STALLS.
        ["BALC-A-1", "STALLS-A-3"],
        # BALC-A-5 is not there: the same section's best.
        ["BALC-A-2"],
        # BALC is full and every other section dearer: refunded.
        None,
        ["STALLS-A-4"],
        # Only BOX is left, dearer than FLOOR.
        None], "each order's offer")
    check_equal(expect(c.get("/v1/events/%s/seats/BOX-A-1" % other), 200)["status"],
                "available", "no dearer seat offered")
    # The cheaper seats keep the price paid.
    first = listed[0]
    new = expect(c.post("/v1/holds/%s/commit" % first["reservation_id"],
                        {"user_id": first["user_id"]}), 200)
    check_equal((new["total"], sorted(new["seats"])), (2 * FLOOR, ["STALLS-A-1", "STALLS-A-2"]),
                "the accepted offer's order")
    refunded = {r["order_id"] for r in refunds_of(c, "event_cancelled")}
    check_equal([o["order_id"] in refunded for o in sold],
                [False, False, False, True, False, True], "the refunds")


def test_cancel_checks(server):
    c = server.client()
    event_id = event(c)
    expect(c.post("/v1/events/%s/cancel" % uid("none"), {}), 404, "event_not_found")
    expect(c.post("/v1/events/%s/cancel" % event_id, {"rebook_to": uid("none")}), 400,
           "invalid_request", field="rebook_to")
    expect(c.post("/v1/events/%s/cancel" % event_id, {"rebook_to": event_id}), 400,
           "invalid_request", field="rebook_to")
    euros = event(c, currency="EUR")
    expect(c.post("/v1/events/%s/cancel" % event_id, {"rebook_to": euros}), 400,
           "invalid_request", field="rebook_to")
    expect(c.post("/v1/events/%s/cancel" % event_id, {"offer_ttl_s": 31 * 86400}), 400,
           "invalid_request", field="offer_ttl_s")
    expect(c.post("/v1/events/%s/cancel" % event_id, {"offer_ttl_s": "soon"}), 400,
           "invalid_request", field="offer_ttl_s")
    # Nothing was cancelled by the refusals.
    hold(c, event_id, user(), ["FLOOR-A-1"])
    gone = event(c)
    cancel(c, gone)
    expect(c.post("/v1/events/%s/cancel" % event_id, {"rebook_to": gone}), 400,
           "invalid_request", field="rebook_to")
    expect(c.get("/v1/jobs/job_nope"), 404, "job_not_found")
    expect(c.get("/v1/jobs/job_nope/offers"), 404, "job_not_found")


def test_refunds_and_the_offers_list(server):
    c = server.client()
    event_id = event(c)
    sold = orders_on(c, event_id, 7)
    # An unpaid order owes nothing; one cancelled by its user before is passed by.
    u = user()
    unpaid = expect(c.post("/v1/holds/%s/commit" % hold(c, event_id, u, ["BALC-A-9"])
                           ["reservation_id"], {"user_id": u}), 200)
    gone = sold.pop(3)
    expect(c.post("/v1/orders/%s/cancel" % gone["order_id"], {"user_id": gone["user_id"]}), 200)
    job = wait_done(c, cancel(c, event_id)["job_id"])
    check_equal((job["orders"], job["refunded"], job["offered"]), (7, 7, 0), "the job's counts")
    refunds = refunds_of(c, "event_cancelled")
    mine = sorted(r["order_id"] for r in refunds if r["order_id"] in
                  {o["order_id"] for o in sold})
    check_equal(mine, sorted(o["order_id"] for o in sold), "one refund per paid order")
    check(all(r["amount"] == FLOOR for r in refunds if r["order_id"] in mine),
          "each refund is the order's total")
    check(unpaid["order_id"] not in {r["order_id"] for r in refunds}, "no refund of no payment")
    check_equal(expect(c.get("/v1/orders/%s" % unpaid["order_id"]), 200)["status"], "cancelled",
                "the unpaid order")
    listed = offers(c, job["job_id"])
    check_equal([o["order_id"] for o in listed["offers"]],
                [o["order_id"] for o in sold] + [unpaid["order_id"]],
                "the offers in the order of the orders")
    check_equal(listed["next"], None, "one page")
    check(all(o["status"] == "refunded" and o["reservation_id"] is None and
              o["expires_at"] is None for o in listed["offers"]), "refunded without an offer")
    check_equal(listed["offers"][0]["user_id"], sold[0]["user_id"], "the offer's user")
    first = offers(c, job["job_id"], "?limit=3")
    check_equal(len(first["offers"]), 3, "a page of 3")
    check_equal(first["next"], first["offers"][-1]["order_id"], "next")
    second = offers(c, job["job_id"], "?limit=3&after=%s" % first["next"])
    check_equal(second["offers"][0]["order_id"], listed["offers"][3]["order_id"], "page two")
    check_equal(offers(c, job["job_id"], "?status=offered")["offers"], [], "no open offer")
    check_equal(len(offers(c, job["job_id"], "?status=refunded")["offers"]), 7, "refunded")
    expect(c.get("/v1/jobs/%s/offers?status=nope" % job["job_id"]), 400, "invalid_request",
           field="status")
    expect(c.get("/v1/jobs/%s/offers?after=%s" % (job["job_id"], gone["order_id"])), 400,
           "invalid_request", field="after")
    expect(c.get("/v1/jobs/%s/offers?limit=0" % job["job_id"]), 400, "invalid_request",
           field="limit")
    # The seats are free again (the event is cancelled: nobody can take them).
    check_equal(expect(c.get("/v1/events/%s/seats/FLOOR-A-1" % event_id), 200)["status"],
                "available", "a refunded order's seat")


def test_history_metrics_and_the_api_key(server):
    c = server.client()
    event_id = event(c)
    orders_on(c, event_id, 3)
    running = metric(c, "holdfast_jobs", 'status="running"') or 0
    done_before = metric(c, "holdfast_jobs", 'status="done"') or 0
    job = wait_done(c, cancel(c, event_id)["job_id"])
    check_equal(metric(c, "holdfast_jobs", 'status="done"'), done_before + 1, "jobs done")
    check_equal(metric(c, "holdfast_jobs", 'status="running"'), running, "jobs running")
    types, entries = history_types(c, event_id)
    check_equal(types.count("event_cancel"), 1, "one event_cancel entry")
    check_equal(types.count("job_done"), 1, "one job_done entry")
    check_equal(types.count("cancel"), 3, "each order's cancel")
    check(types.index("event_cancel") < types.index("job_done"), "cancel before done")
    done = [e for e in entries if e["type"] == "job_done"][0]
    check_equal(done["job_id"], job["job_id"], "the job_done entry's job")
    check_equal(done["refunded"], 3, "the job_done entry's count")


def test_jobs_need_the_api_key():
    server = Server(api_key="k3y").start()
    c = server.client()
    event_id = event(c)
    job = cancel(c, event_id)
    anonymous = server.client(api_key=None)
    expect(anonymous.post("/v1/events/%s/cancel" % event_id, {}), 401, "unauthorized")
    expect(anonymous.get("/v1/jobs/%s" % job["job_id"]), 401, "unauthorized")
    expect(anonymous.get("/v1/jobs/%s/offers" % job["job_id"]), 401, "unauthorized")
    server.stop()


# ---- durability ----


def job_survives(kill):
    server = Server().start()
    c = server.client()
    event_id = event(c)
    other = event(c)
    sold = orders_on(c, event_id, 30)
    # The first 10 seats taken on rebook_to: their orders get other FLOOR seats.
    for n in range(10):
        hold(c, other, user(), ["FLOOR-A-%d" % (n + 1)])
    job = wait_done(c, cancel(c, event_id, {"rebook_to": other, "offer_ttl_s": 3600})["job_id"])
    check_equal((job["offered"], job["open"]), (30, 30), "every order offered")
    listed = offers(c, job["job_id"], "?limit=1000")
    c.close()
    server = server.cycle(kill)
    c = server.client()
    check_equal(expect(c.get("/v1/jobs/%s" % job["job_id"]), 200), job, "the job after restart")
    check_equal(offers(c, job["job_id"], "?limit=1000"), listed, "the offers after restart")
    expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": user(), "seats": ["FLOOR-A-1"]}),
           409, "event_cancelled")
    check_equal(cancel(c, event_id)["job_id"], job["job_id"], "the same job after restart")
    # An offer released after the restart still refunds its old order, once.
    first = listed["offers"][0]
    expect(c.post("/v1/holds/%s/release" % first["reservation_id"],
                  {"user_id": first["user_id"]}), 200)
    settled = expect(c.get("/v1/jobs/%s" % job["job_id"]), 200)
    check_equal((settled["open"], settled["refunded"]), (29, 1), "the release after restart")
    check_equal([r["order_id"] for r in refunds_of(c, "event_cancelled")
                 if r["order_id"] in {o["order_id"] for o in sold}], [first["order_id"]],
                "one refund after restart")
    c.close()
    server.stop()
    if harness.STORE_URL is None:
        checked = subprocess.run([harness.BINARY, "check", "--data", server.data_dir],
                                 capture_output=True, text=True, timeout=60)
        check_equal(checked.returncode, 0, "holdfast check: %s" % checked.stderr[-400:])


def test_job_survives_a_restart():
    job_survives(kill=False)


def test_job_survives_kill_9():
    job_survives(kill=True)
