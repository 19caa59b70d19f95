"""A cancel job in a cluster (API.md sections 11 and 13, "Cancelling an event"): node A owns the
cancelled event and its job, node B owns rebook_to. A has B place each order's offer as an
exchange hold on B's event (its id res_ + the order id's tail, exchange_for the old order,
difference 0); its commit (through either node) is the exchange across two owners, its release
or lapse refunds the old order on A (reason event_cancelled); nothing equivalent on B refunds at
once. The cancel checks rebook_to's currency and status with its owner. Kill -9 of either node
mid-job or of A racing an offer's commit: each order ends exactly one of offered, accepted,
refunded, never with two holds, never both exchanged and refunded. A rebook_to of the job's own
node is offered as on one node. Offers made by a node owning both events settle once the two
events have two other owners (three nodes). Two or three nodes on one PostgreSQL (run.py
--store-url)."""

import http.client
import string
import time

from harness import check, check_equal, expect, run_threads, uid, user
from test_cluster_exchange import TAKEOVER_LIMIT_S, nodes, order_on, served_by, two_owners

# The cluster's listing of leases is renewed once a second: an event made on another node is
# named there by then (with room for a loaded machine); until then a cancel rebooking onto it
# is refused as unknown (400), which changes nothing and may be asked again.
LISTED_LIMIT_S = 5.0
# Liveness bounds (never speeds): an offer placed or settled across the two owners.
SETTLED_LIMIT_S = 20.0
# A lapse is seen by B's expiry timer and told to A, or else found by A asking B about each open
# offer 2 s after its expiry, once a second: expiry + 2 s + a period + round trips, with room.
LAPSE_LIMIT_S = 25.0
# A job of BIG orders placed in batches (at most 256 orders) with B.
JOB_LIMIT_S = 40.0
BIG = 300
FLOOR = 45000
# The paid order of pair_order: two seats of one row (90000).
PAIR = ["FLOOR-A-1", "FLOOR-A-2"]


# ---- helpers ----

def floor_event(client, rows, seats=20, price=FLOOR, **fields):
    """An event of one FLOOR section of `rows` rows (A, B, ...) of `seats` seats: its id."""
    event_id = uid("ev")
    body = {"id": event_id, "sections": [{"id": "FLOOR", "price": price, "rows": [
        {"id": string.ascii_uppercase[n], "seats": seats} for n in range(rows)]}]}
    body.update(fields)
    expect(client.post("/v1/events", body), 201, what="event %s" % event_id)
    return event_id


def pair_order(a, b, sections=None):
    """A's event with a paid order of PAIR (90000), and B's event (by default the same layout,
    so the same seat ids are free there; else `sections`): (old event, new event, user, order)."""
    client_a, client_b = a.client(), b.client()
    old_event = floor_event(client_a, rows=1, seats=10)
    if sections is None:
        new_event = floor_event(client_b, rows=1, seats=10)
    else:
        new_event = uid("ev")
        expect(client_b.post("/v1/events", {"id": new_event, "sections": sections}), 201,
               what="B's event")
    user_id = user()
    return old_event, new_event, user_id, order_on(client_a, old_event, user_id, PAIR)


def cancel_across(client, event_id, body, through):
    """POSTs the cancel, again while it is refused for the listing not naming rebook_to's owner
    yet (at most LISTED_LIMIT_S); expects 202 and returns the job."""
    start = time.monotonic()
    while True:
        response = client.post("/v1/events/%s/cancel" % event_id, body)
        if response.status != 400 or time.monotonic() - start > LISTED_LIMIT_S:
            break
        time.sleep(0.2)
    job = expect(response, 202, what="the cancel across owners through %s" % through)
    check_equal(response.header("holdfast-node"), "A", "the cancel applied by the event's owner")
    check_equal((job["event"], job.get("rebook_to")), (event_id, body.get("rebook_to")),
                "the job's events")
    return job


def offer_id_of(order_id):
    """An offer's hold id: res_ and the order id's tail (docs/API.md, the cancel job)."""
    return "res_" + order_id[len("ord_"):]


def answer(server, path):
    """GET path through server with a client of its own: the response, None when the node
    does not answer (killed, restarting)."""
    client = server.client(client_timeout=10)
    try:
        return client.get(path)
    except (OSError, http.client.HTTPException):
        return None
    finally:
        client.close()


def poll(read, limit_s, what):
    """Calls read() until it returns something other than None (at most limit_s): that."""
    start = time.monotonic()
    while True:
        value = read()
        if value is not None:
            return value
        check(time.monotonic() - start < limit_s, "%s within %.0f s" % (what, limit_s))
        time.sleep(0.2)


def read_any(servers, path):
    """The JSON of the first 200 to GET path through any of the servers, else None."""
    for server in servers:
        response = answer(server, path)
        if response is not None and response.status == 200:
            return response.json
    return None


def job_when(servers, job_id, condition, limit_s, what):
    """Polls the job (through any of the servers) until condition(job): the job."""
    def read():
        job = read_any(servers, "/v1/jobs/%s" % job_id)
        return job if job is not None and condition(job) else None
    return poll(read, limit_s, what)


def order_when(servers, order_id, condition, limit_s, what):
    def read():
        order = read_any(servers, "/v1/orders/%s" % order_id)
        return order if order is not None and condition(order) else None
    return poll(read, limit_s, what)


def all_offers(servers, job_id, limit=100):
    """Every offer of the job, following `next`, and the number of pages read."""
    offers, after, pages = [], None, 0
    while True:
        path = "/v1/jobs/%s/offers?limit=%d" % (job_id, limit)
        if after is not None:
            path += "&after=" + after
        page = poll(lambda: read_any(servers, path), SETTLED_LIMIT_S, "the offers page %s" % path)
        offers.extend(page["offers"])
        pages += 1
        after = page.get("next")
        check(pages <= BIG + 1, "the offers' pages end")
        if after is None:
            return offers, pages


def refunds_of_orders(servers, order_ids):
    """The refunds (GET /v1/refunds, every page) of the given orders."""
    found, after = [], None
    while True:
        path = "/v1/refunds?limit=1000" + ("&after=" + after if after else "")
        page = poll(lambda: read_any(servers, path), SETTLED_LIMIT_S, "the refunds")
        found += [r for r in page["refunds"] if r.get("order_id") in order_ids]
        after = page.get("next")
        if after is None:
            return found


def held_seats(servers, event_id):
    path = "/v1/events/%s/seats?status=held&limit=10000" % event_id
    page = poll(lambda: read_any(servers, path), SETTLED_LIMIT_S, "the held seats")
    return [seat["id"] for seat in page["seats"]]


def offered(a, b, through, ttl_s=3600):
    """pair_order, then its event cancelled through `through` ("A" or "B") rebooking onto B's
    event; waits for the order's offer: (old event, new event, user, order, job, rebooking)."""
    old_event, new_event, user_id, order_id = pair_order(a, b)
    client = {"A": a, "B": b}[through].client()
    job = cancel_across(client, old_event, {"rebook_to": new_event, "offer_ttl_s": ttl_s},
                        through)
    order = order_when([a, b], order_id, lambda o: o.get("rebooking") is not None,
                       SETTLED_LIMIT_S, "the order's offer")
    return old_event, new_event, user_id, order_id, job, order["rebooking"]


def offer_made(a, job_id, order_id):
    """Waits for the job's offer of order_id to be made (offered, or already settled: a short
    offer_ttl_s may lapse before a read sees it open): its reservation id."""
    def read():
        listed = read_any([a], "/v1/jobs/%s/offers" % job_id)
        made = [o for o in (listed or {}).get("offers", []) if o["order_id"] == order_id]
        return made[0]["reservation_id"] if made and made[0]["reservation_id"] else None
    return poll(read, SETTLED_LIMIT_S, "the job's offer made")


def refunded_check(a, b, job_id, order_id, new_event, reservation_id, total=90000):
    """The order refunded by its job (released or lapsed offer): cancelled, one refund of its
    total with reason event_cancelled, the job's counts, the offer refunded, B's seats free."""
    old = order_when([a, b], order_id, lambda o: o["status"] != "confirmed", LAPSE_LIMIT_S,
                     "the old order refunded")
    check_equal((old["status"], old.get("rebooking")), ("cancelled", None), "the old order")
    refunds = refunds_of_orders([a, b], {order_id})
    check_equal([(r["reason"], r["amount"]) for r in refunds], [("event_cancelled", total)],
                "one refund of the old order's total")
    job = job_when([a], job_id, lambda j: j["open"] == 0, SETTLED_LIMIT_S, "the job settled")
    check_equal((job["offered"], job["open"], job["accepted"], job["refunded"]), (1, 0, 0, 1),
                "the job's counts")
    listed, _ = all_offers([a], job_id)
    check_equal([(o["order_id"], o["reservation_id"], o["status"]) for o in listed],
                [(order_id, reservation_id, "refunded")], "the offer refunded")
    for seat in PAIR:
        read = expect(b.client().get("/v1/events/%s/seats/%s" % (new_event, seat)), 200,
                      what="B's seat %s" % seat)
        check_equal(read["status"], "available", "B's seat %s free again" % seat)


# ---- one order offered across owners ----

def offer_across(through):
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    _, new_event, user_id, order_id, job, rebooking = offered(a, b, through)
    check_equal(job["orders"], 1, "the job's orders")
    reservation_id = rebooking["reservation_id"]
    check_equal(reservation_id, offer_id_of(order_id), "the offer's id")
    for client, name in ((client_a, "A"), (client_b, "B")):
        order = expect(client.get("/v1/orders/%s" % order_id), 200, what="the order via " + name)
        check_equal((order["status"], order.get("rebooking")), ("confirmed", rebooking),
                    "the old order while offered, through %s" % name)
    read = client_a.get("/v1/holds/%s" % reservation_id)
    hold = expect(read, 200, what="the offer's hold through A")
    check_equal(read.header("holdfast-node"), "B", "the hold answered by B, rebook_to's owner")
    check_equal((hold["event"], hold["status"], hold["seats"], hold["exchange_for"],
                 hold["difference"], hold["user_id"], hold["expires_at"]),
                (new_event, "held", PAIR, order_id, 0, user_id, rebooking["expires_at"]),
                "the offer: the same seat ids held on B for the buyer, exchanging the order")
    listed, _ = all_offers([a], job["job_id"])
    check_equal(listed, [{"order_id": order_id, "user_id": user_id,
                          "reservation_id": reservation_id, "status": "offered",
                          "expires_at": hold["expires_at"]}], "the job's offers")
    counts = expect(client_a.get("/v1/jobs/%s" % job["job_id"]), 200, what="the job")
    check_equal((counts["status"], counts["offered"], counts["open"], counts["accepted"],
                 counts["refunded"]), ("done", 1, 1, 0, 0), "the job's counts")
    check_equal(held_seats([b], new_event), PAIR, "B's seats held by the offer")
    mine = expect(client_b.get("/v1/users/%s/orders" % user_id), 200)["orders"]
    check_equal([(o["order_id"], o.get("rebooking")) for o in mine], [(order_id, rebooking)],
                "the buyer finds the offer among their orders")


def test_an_offer_across_owners_cancelled_through_b():
    offer_across("B")


def test_an_offer_across_owners_cancelled_through_a():
    offer_across("A")


# ---- the offer accepted, released, lapsed ----

def accept_through(name):
    a, b = nodes(2)
    _, new_event, user_id, order_id, job, rebooking = offered(a, b, "A")
    client = {"A": a, "B": b}[name].client()
    committed = client.post("/v1/holds/%s/commit" % rebooking["reservation_id"],
                            {"user_id": user_id})
    new = expect(committed, 200, what="the offer's commit through %s, no payment" % name)
    check_equal(committed.header("holdfast-node"), "B", "committed by the hold's owner")
    check_equal((new["event"], new["status"], new.get("replaces"), new["seats"], new["total"]),
                (new_event, "confirmed", order_id, PAIR, 90000),
                "the new order keeps the seats and the price paid")
    old = order_when([a, b], order_id, lambda o: o["status"] != "confirmed", SETTLED_LIMIT_S,
                     "the old order exchanged")
    check_equal((old["status"], old.get("replaced_by"), old.get("rebooking")),
                ("exchanged", new["order_id"], None), "the old order")
    counts = job_when([a], job["job_id"], lambda j: j["open"] == 0, SETTLED_LIMIT_S,
                      "the job's counts settled")
    check_equal((counts["offered"], counts["open"], counts["accepted"], counts["refunded"]),
                (1, 0, 1, 0), "the job's counts")
    listed, _ = all_offers([a], job["job_id"])
    check_equal([(o["order_id"], o["status"]) for o in listed], [(order_id, "accepted")],
                "the offer accepted")
    check_equal(refunds_of_orders([a, b], {order_id, new["order_id"]}), [],
                "no refund of an accepted offer's order")
    read = expect(a.client().get("/v1/holds/%s" % rebooking["reservation_id"]), 200)
    check_equal((read["status"], read.get("order_id")), ("confirmed", new["order_id"]),
                "the offer's hold confirmed")
    again = client.post("/v1/holds/%s/commit" % rebooking["reservation_id"], {"user_id": user_id})
    check_equal(expect(again, 200, what="the commit repeated")["order_id"], new["order_id"],
                "a repeated commit answers the same order")


def test_an_offer_across_owners_accepted_through_a():
    accept_through("A")


def test_an_offer_across_owners_accepted_through_b():
    accept_through("B")


def test_a_released_offer_across_owners_refunds_the_old_order():
    a, b = nodes(2)
    _, new_event, user_id, order_id, job, rebooking = offered(a, b, "B")
    released = expect(a.client().post("/v1/holds/%s/release" % rebooking["reservation_id"],
                                      {"user_id": user_id}), 200, what="the offer's release")
    check_equal(released["status"], "released", "the offer released")
    refunded_check(a, b, job["job_id"], order_id, new_event, rebooking["reservation_id"])


def test_a_lapsed_offer_across_owners_refunds_the_old_order():
    a, b = nodes(2)
    old_event, new_event, user_id, order_id = pair_order(a, b)
    job = cancel_across(a.client(), old_event, {"rebook_to": new_event, "offer_ttl_s": 1}, "A")
    reservation_id = offer_made(a, job["job_id"], order_id)
    check_equal(reservation_id, offer_id_of(order_id), "the offer's id")
    refunded_check(a, b, job["job_id"], order_id, new_event, reservation_id)
    read = expect(b.client().get("/v1/holds/%s" % reservation_id), 200)
    check_equal(read["status"], "expired", "the offer's hold lapsed")


def nothing_equivalent(sections):
    a, b = nodes(2)
    old_event, new_event, user_id, order_id = pair_order(a, b, sections)
    job = cancel_across(b.client(), old_event, {"rebook_to": new_event, "offer_ttl_s": 3600}, "B")
    done = job_when([a], job["job_id"], lambda j: j["status"] == "done", SETTLED_LIMIT_S,
                    "the job done")
    check_equal((done["orders"], done["offered"], done["open"], done["refunded"]), (1, 0, 0, 1),
                "refunded at once")
    listed, _ = all_offers([a], job["job_id"])
    check_equal([(o["order_id"], o["reservation_id"], o["status"]) for o in listed],
                [(order_id, None, "refunded")], "no offer")
    old = expect(a.client().get("/v1/orders/%s" % order_id), 200, what="the old order")
    check_equal((old["status"], old.get("rebooking")), ("cancelled", None), "the order refunded")
    check_equal([(r["reason"], r["amount"]) for r in refunds_of_orders([a, b], {order_id})],
                [("event_cancelled", 90000)], "its refund")
    check_equal(held_seats([b], new_event), [], "nothing held on B")


def test_nothing_equivalent_on_a_too_small_event_refunds_at_once():
    # The order's two FLOOR seats move as one group: one seat of the same section is not
    # equivalent.
    nothing_equivalent([{"id": "FLOOR", "price": FLOOR, "rows": [{"id": "A", "seats": 1}]}])


def test_nothing_equivalent_on_dearer_sections_refunds_at_once():
    nothing_equivalent([{"id": "VIP", "price": 90000, "rows": [{"id": "A", "seats": 10}]}])


# ---- the cancel's checks across owners ----

def test_the_cancel_checks_rebook_to_with_its_owner():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    old_event, good, user_id, order_id = pair_order(a, b)
    euro = floor_event(client_b, rows=1, currency="EUR")
    gone = floor_event(client_b, rows=1)
    expect(client_b.post("/v1/events/%s/cancel" % gone, {}), 202, what="B's event cancelled")
    # A control: another event of A rebooking onto B's good one is accepted, and by then A's
    # listing names B's events (all made before), so the refusals below are for their reason.
    spare = floor_event(client_a, rows=1)
    control = cancel_across(client_a, spare, {"rebook_to": good}, "A")
    check_equal(control["orders"], 0, "the control's job")
    for client, through in ((client_a, "A"), (client_b, "B")):
        for target, what in ((euro, "another currency"), (gone, "a cancelled event"),
                             (uid("ev"), "an unknown event")):
            refused = client.post("/v1/events/%s/cancel" % old_event, {"rebook_to": target})
            expect(refused, 400, "invalid_request", field="rebook_to",
                   what="a rebook_to of %s through %s" % (what, through))
            check_equal(refused.header("holdfast-node"), "A", "refused by the event's owner")
    summary = expect(client_b.get("/v1/events/%s" % old_event), 200, what="the old event")
    check(summary.get("status") != "cancelled" and summary.get("job_id") is None,
          "the event still on sale: %r" % summary)
    order = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the order")
    check_equal((order["status"], order.get("rebooking")), ("confirmed", None),
                "the order untouched")
    for event_id in (good, euro):
        check_equal(held_seats([a], event_id), [], "no offer's hold on B's %s" % event_id)


# ---- a bigger job ----

def big_job(a, b):
    """BIG orders of one FLOOR seat each by users of their own on A's event (15 rows of 20),
    B's event of 20 rows of 20: (old event, new event, the orders oldest first)."""
    old_event = floor_event(a.client(), rows=15)
    new_event = floor_event(b.client(), rows=20)
    seats = ["FLOOR-%s-%d" % (string.ascii_uppercase[n // 20], n % 20 + 1) for n in range(BIG)]
    workers = 4

    def buy(index, barrier):
        client, made = a.client(), []
        for seat in seats[index::workers]:
            buyer = user()
            held = expect(client.post("/v1/events/%s/holds" % old_event,
                                      {"user_id": buyer, "seats": [seat]}), 201, what="hold")
            made.append(expect(client.post("/v1/holds/%s/commit" % held["reservation_id"],
                                           {"user_id": buyer, "payment_ref": uid("pi")}), 200,
                               what="commit"))
        return made

    orders = [order for made in run_threads(workers, buy, limit_s=120) for order in made]
    return old_event, new_event, orders


def check_offers_in_order(listed, orders):
    """Each order once, in creation order (created_at, to the millisecond, never decreasing)."""
    created = {order["order_id"]: order["created_at"] for order in orders}
    check_equal(sorted(o["order_id"] for o in listed), sorted(created), "each order once")
    moments = [created[o["order_id"]] for o in listed]
    check(moments == sorted(moments), "the offers in the orders' creation order")


def test_a_job_of_300_orders_offers_each_across_owners():
    a, b = nodes(2)
    old_event, new_event, orders = big_job(a, b)
    job = cancel_across(a.client(), old_event, {"rebook_to": new_event, "offer_ttl_s": 3600}, "A")
    check_equal(job["orders"], BIG, "the job's orders")
    done = job_when([a], job["job_id"], lambda j: j["status"] == "done", JOB_LIMIT_S,
                    "the job done")
    check_equal((done["offered"], done["open"], done["accepted"], done["refunded"]),
                (BIG, BIG, 0, 0), "every order offered")
    listed, pages = all_offers([a], job["job_id"], limit=100)
    check_equal(pages, 3, "three pages of 100")
    check_offers_in_order(listed, orders)
    check(all(o["status"] == "offered" for o in listed), "all offered")
    check_equal([o["reservation_id"] for o in listed],
                [offer_id_of(o["order_id"]) for o in listed], "each offer its own hold")
    held = held_seats([a, b], new_event)
    check_equal(sorted(held), sorted(o["seats"][0] for o in orders),
                "B holds each order's own seat id, once")
    for offer in listed[::50]:
        hold = expect(a.client().get("/v1/holds/%s" % offer["reservation_id"]), 200)
        check_equal((hold["status"], hold["exchange_for"], hold["user_id"], hold["event"]),
                    ("held", offer["order_id"], offer["user_id"], new_event), "a sample offer")


# ---- kill -9 rounds ----

def consistent(servers, old_event, job_id, orders, new_event):
    """Every order exactly one of offered (an open offer whose hold on rebook_to is held and
    names it), refunded (cancelled, one refund), accepted; no order with two holds; the job's
    counts adding up."""
    # A request naming the job's event: a node takes the unit if no live node owns it.
    poll(lambda: read_any(servers, "/v1/events/%s" % old_event), TAKEOVER_LIMIT_S + 5,
         "the job's event served again")
    job = job_when(servers, job_id, lambda j: j["status"] == "done", JOB_LIMIT_S, "the job done")
    listed, _ = all_offers(servers, job_id, limit=1000)
    check_offers_in_order(listed, orders)
    by_status = {}
    for offer in listed:
        by_status.setdefault(offer["status"], []).append(offer)
    check(set(by_status) <= {"offered", "accepted", "refunded"}, "statuses: %r" % set(by_status))
    open_offers = by_status.get("offered", [])
    refunded = by_status.get("refunded", [])
    check_equal((job["open"], job["accepted"], job["refunded"]),
                (len(open_offers), len(by_status.get("accepted", [])), len(refunded)),
                "the job's counts match its offers")
    check_equal(job["open"] + job["accepted"] + job["refunded"], job["orders"],
                "the counts add up to the orders")
    check_equal(job["offered"], len([o for o in listed if o["reservation_id"]]),
                "offered counts the offers made")
    holds = set()
    for offer in open_offers:
        hold = poll(lambda: read_any(servers, "/v1/holds/%s" % offer["reservation_id"]),
                    SETTLED_LIMIT_S, "the hold of %s" % offer["order_id"])
        check_equal((hold["status"], hold["exchange_for"], hold["event"]),
                    ("held", offer["order_id"], new_event), "an open offer's hold")
        holds.update(hold["seats"])
    held = held_seats(servers, new_event)
    check_equal((len(held), set(held)), (len(open_offers), holds),
                "B's held seats are the open offers', one each: no order with two holds")
    refunds = refunds_of_orders(servers, {o["order_id"] for o in orders})
    check_equal(sorted(r["order_id"] for r in refunds), sorted(o["order_id"] for o in refunded),
                "one refund for each refunded order, none for an offered one")
    return job


def started(servers, job_id):
    """Waits (fast, no sleep) for the job's first offers: the job."""
    start = time.monotonic()
    while time.monotonic() - start < JOB_LIMIT_S:
        job = read_any(servers, "/v1/jobs/%s" % job_id)
        if job is not None and job["offered"] + job["refunded"] > 0:
            return job
        time.sleep(0.01)
    return None


def test_the_jobs_node_killed_mid_job_and_restarted():
    a, b = nodes(2)
    old_event, new_event, orders = big_job(a, b)
    job = cancel_across(a.client(), old_event, {"rebook_to": new_event, "offer_ttl_s": 3600}, "A")
    check(started([a], job["job_id"]) is not None, "the job's first offers")
    a.kill()
    restarted = a.restart()
    job = consistent([restarted, b], old_event, job["job_id"], orders, new_event)
    check_equal(job["refunded"], 0, "room on B for every order: nothing refunded")


def test_rebook_tos_node_killed_mid_job():
    a, b = nodes(2)
    old_event, new_event, orders = big_job(a, b)
    job = cancel_across(a.client(), old_event, {"rebook_to": new_event, "offer_ttl_s": 3600}, "A")
    check(started([a], job["job_id"]) is not None, "the job's first offers")
    b.kill()
    # A takes B's event over (within TAKEOVER_LIMIT_S), the job going on against it.
    job = consistent([a], old_event, job["job_id"], orders, new_event)
    check_equal(job["refunded"], 0, "room on B's event for every order: nothing refunded")


test_a_job_of_300_orders_offers_each_across_owners.weight = 2.0
test_the_jobs_node_killed_mid_job_and_restarted.weight = 3.0
test_rebook_tos_node_killed_mid_job.weight = 3.0


def test_an_offers_commit_racing_a_kill_of_the_jobs_node():
    a, b = nodes(2)
    _, _, user_id, order_id, job, rebooking = offered(a, b, "A")
    reservation_id = rebooking["reservation_id"]
    a.kill()
    client_b = b.client(client_timeout=30)
    try:
        status = client_b.post("/v1/holds/%s/commit" % reservation_id, {"user_id": user_id}).status
    except (OSError, http.client.HTTPException):
        status = None
    check(status in (200, 409, 503), "the commit's answer: %r" % status)

    # Once B serves A's unit (taken over), the old order is unlocked: exchanged or as it was.
    def unlocked():
        read = read_any([b], "/v1/cluster/orders/%s" % order_id)
        return read if read is not None and read["locked_by"] is None else None
    poll(unlocked, TAKEOVER_LIMIT_S + SETTLED_LIMIT_S, "the old order unlocked")
    old = poll(lambda: read_any([b], "/v1/orders/%s" % order_id), SETTLED_LIMIT_S, "the order")
    hold = poll(lambda: read_any([b], "/v1/holds/%s" % reservation_id), SETTLED_LIMIT_S,
                "the offer's hold")
    refunds = refunds_of_orders([b], {order_id})
    if status == 200 or hold["status"] == "confirmed":
        check_equal((hold["status"], old["status"], old.get("replaced_by")),
                    ("confirmed", "exchanged", hold.get("order_id")),
                    "a commit: the old order exchanged by the offer's order")
        new = poll(lambda: read_any([b], "/v1/orders/%s" % hold["order_id"]), SETTLED_LIMIT_S,
                   "the new order")
        check_equal((new["status"], new.get("replaces")), ("confirmed", order_id),
                    "the new order")
        check_equal(refunds, [], "an exchanged order never refunded")
        wanted = {"open": 0, "accepted": 1, "refunded": 0}
    else:
        check_equal((hold["status"], old["status"], refunds), ("held", "confirmed", []),
                    "no commit: the offer still open, the old order confirmed, not refunded")
        wanted = {"open": 1, "accepted": 0, "refunded": 0}
    # The job, on the node now serving A's unit, counts the order once, as it ended.
    counts = job_when([b], job["job_id"], lambda j: True, SETTLED_LIMIT_S, "the job on B")
    check_equal({name: counts[name] for name in wanted}, wanted, "the job's counts")


# ---- a rebook_to of the job's own node ----

def test_a_cancel_rebooking_onto_its_own_nodes_event_offers():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    old_event, _, user_id, order_id = two_owners(a, b)
    own = uid("ev")
    expect(client_a.post("/v1/events", {"id": own, "sections": [
        {"id": "FLOOR", "price": 45000, "rows": [{"id": "A", "seats": 10}]}]}), 201,
        what="a second event on A")
    job = expect(client_b.post("/v1/events/%s/cancel" % old_event, {"rebook_to": own}), 202,
                 what="the cancel through B")
    check_equal(job["rebook_to"], own, "the job's rebook_to")
    start, order = time.monotonic(), None
    while time.monotonic() - start < 10:
        order = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the order")
        if order.get("rebooking"):
            break
        time.sleep(0.2)
    check(order.get("rebooking") is not None, "the order offered: %r" % order)
    hold = expect(client_b.get("/v1/holds/%s" % order["rebooking"]["reservation_id"]), 200,
                  what="the offer's hold")
    check_equal((hold["status"], hold["seats"], hold["exchange_for"], hold["user_id"]),
                ("held", ["FLOOR-A-1"], order_id, user_id), "the offer on A's own event")


# ---- offers made on one node, its two events then taken by two others ----

def test_local_offers_settle_once_their_two_events_have_two_owners():
    a, b, c = nodes(3)
    client_a = a.client()
    old_event = floor_event(client_a, rows=1, seats=10)
    new_event = floor_event(client_a, rows=1, seats=10)
    buyers = [(user(), PAIR), (user(), ["FLOOR-A-5", "FLOOR-A-6"])]
    orders = [order_on(client_a, old_event, user_id, seats) for user_id, seats in buyers]
    job = expect(client_a.post("/v1/events/%s/cancel" % old_event,
                               {"rebook_to": new_event, "offer_ttl_s": 3600}), 202,
                 what="the cancel on the node owning both events")
    made = [offer_made(a, job["job_id"], order_id) for order_id in orders]
    check_equal(made, [offer_id_of(order_id) for order_id in orders], "A's own offers")
    a.kill()
    # B takes the cancelled event (and its job), C the event the offers hold seats on.
    for server, event_id, name in ((b, old_event, "B"), (c, new_event, "C")):
        check_equal(served_by(server, "/v1/events/%s" % event_id, (name,),
                              TAKEOVER_LIMIT_S + SETTLED_LIMIT_S), name,
                    "%s taken over by %s" % (event_id, name))
    for order_id, reservation_id in zip(orders, made):
        order = expect(b.client().get("/v1/orders/%s" % order_id), 200, what="the old order")
        check_equal((order["status"], (order.get("rebooking") or {}).get("reservation_id")),
                    ("confirmed", reservation_id), "the old order still offered on B")
        read = c.client().get("/v1/holds/%s" % reservation_id)
        hold = expect(read, 200, what="the offer's hold")
        check_equal(read.header("holdfast-node"), "C", "the hold served by its event's owner")
        check_equal((hold["status"], hold["exchange_for"], hold["event"]),
                    ("held", order_id, new_event), "the offer's hold, another owner's exchange")
    # The first buyer accepts through B, which forwards to C: the exchange across two owners.
    (first_user, first_seats), (second_user, _) = buyers
    committed = b.client().post("/v1/holds/%s/commit" % made[0], {"user_id": first_user})
    new = expect(committed, 200, what="the first offer's commit")
    check_equal((new["status"], new.get("replaces"), new["seats"], new["total"]),
                ("confirmed", orders[0], first_seats, 90000), "the new order")
    old = order_when([b], orders[0], lambda o: o["status"] != "confirmed", SETTLED_LIMIT_S,
                     "the first old order exchanged")
    check_equal((old["status"], old.get("replaced_by")), ("exchanged", new["order_id"]),
                "the first old order")
    # The second releases through C: C tells B, which refunds the old order.
    expect(c.client().post("/v1/holds/%s/release" % made[1], {"user_id": second_user}), 200,
           what="the second offer's release")
    old = order_when([b], orders[1], lambda o: o["status"] != "confirmed", LAPSE_LIMIT_S,
                     "the second old order refunded")
    check_equal(old["status"], "cancelled", "the second old order")
    check_equal([(r["order_id"], r["reason"], r["amount"])
                 for r in refunds_of_orders([b, c], set(orders + [new["order_id"]]))],
                [(orders[1], "event_cancelled", 90000)], "one refund: the released offer's")
    counts = job_when([b], job["job_id"], lambda j: j["open"] == 0, SETTLED_LIMIT_S,
                      "the job settled")
    check_equal((counts["offered"], counts["accepted"], counts["refunded"]), (2, 1, 1),
                "the job's counts")
    listed, _ = all_offers([b], job["job_id"])
    check_equal([(o["order_id"], o["status"]) for o in listed],
                [(orders[0], "accepted"), (orders[1], "refunded")], "the job's offers")


test_local_offers_settle_once_their_two_events_have_two_owners.weight = 2.0
