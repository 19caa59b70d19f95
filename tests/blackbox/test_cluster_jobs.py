"""A cancel job in a cluster (API.md sections 11 and 13, "Cancelling an event"): a rebook_to
owned by another node is refused (400), never offered on inventory the job's node does not
own; a rebook_to of the job's own node is offered as on one node. Two nodes on one PostgreSQL
(run.py --store-url)."""

import time

from harness import check, check_equal, expect, uid, user
from test_cluster_exchange import nodes, order_on, two_owners

# The cluster's listing of leases is renewed once a second: an event made on another node is
# named there by then (with room for a loaded machine).
LISTED_LIMIT_S = 5.0
ELSEWHERE = "rebook_to is owned by another node"


def refused_elsewhere(client, event_id, body):
    """POSTs the cancel until the listing names rebook_to's owner; the last answer."""
    start = time.monotonic()
    while True:
        response = client.post("/v1/events/%s/cancel" % event_id, body)
        message = (response.json or {}).get("error", {}).get("message", "")
        if response.status != 400 or ELSEWHERE in message or \
                time.monotonic() - start > LISTED_LIMIT_S:
            return response
        time.sleep(0.2)


def test_a_cancel_rebooking_onto_another_nodes_event_is_refused():
    a, b = nodes(2)
    client_a, client_b = a.client(), b.client()
    old_event, new_event, user_id, order_id = two_owners(a, b)
    for client, through in ((client_a, "A"), (client_b, "B")):
        refused = refused_elsewhere(client, old_event, {"rebook_to": new_event})
        expect(refused, 400, "invalid_request", field="rebook_to",
               what="a rebook_to of another node through %s" % through)
        check(ELSEWHERE in refused.json["error"]["message"],
              "the message says why: %r" % refused.json)
        check_equal(refused.header("holdfast-node"), "A", "answered by the event's owner")
    # Nothing changed: the event on sale, its order confirmed, no hold on B's event.
    summary = expect(client_b.get("/v1/events/%s" % old_event), 200, what="the old event")
    check(summary.get("status") != "cancelled" and summary.get("job_id") is None,
          "the event not cancelled: %r" % summary)
    order = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the order")
    check_equal((order["status"], order.get("rebooking")), ("confirmed", None),
                "the order untouched")
    held = expect(client_a.get("/v1/events/%s/seats?status=held" % new_event), 200,
                  what="B's event's held seats")
    check_equal(held["seats"], [], "no offer's hold on B's event")
    # A name no node has stays the plain refusal.
    unknown = client_a.post("/v1/events/%s/cancel" % old_event, {"rebook_to": uid("ev")})
    expect(unknown, 400, "invalid_request", field="rebook_to", what="an unknown rebook_to")
    check(ELSEWHERE not in unknown.json["error"]["message"], "the plain message: %r" % unknown.json)
    # Without rebook_to the job refunds, as on one node.
    job = expect(client_b.post("/v1/events/%s/cancel" % old_event, {}), 202, what="the cancel")
    check_equal((job["rebook_to"], job["orders"]), (None, 1), "the job")
    start = time.monotonic()
    while time.monotonic() - start < 10:
        order = expect(client_b.get("/v1/orders/%s" % order_id), 200, what="the order")
        if order["status"] != "confirmed":
            break
        time.sleep(0.2)
    check_equal(order["status"], "cancelled", "the order refunded by the job")


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
