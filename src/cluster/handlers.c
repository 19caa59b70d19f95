/* Handlers of the cluster's view and metrics (cluster/handlers.h). */
#include "cluster/handlers.h"

#include "cluster/cluster.h"
#include "cluster/exchange.h"
#include "cluster/offers.h"

/* GET /v1/cluster: the nodes as the last renewal listed them (at most a second old), with
 * this node's own count of units as it is now. Shows no unit's state: waits for no batch. */
static void handle_cluster(hf_request_t *request) {
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_cluster_render(request->context->cluster, &json);
    request->rests_on_known = true;
    request->rests_on_change = 0;
}

static const hf_route_t routes[] = {
    {"GET", "/v1/cluster", handle_cluster, 0, HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
    /* The exchange across two owners (exchange.h): internal, with the API key. */
    {"GET", "/v1/cluster/orders/{}", hf_cluster_exchange_order_get, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
    {"POST", "/v1/cluster/orders/{}/lock", hf_cluster_exchange_order_lock, HF_ROUTE_BODY,
     HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
    {"POST", "/v1/cluster/orders/{}/exchange", hf_cluster_exchange_order_finish, HF_ROUTE_BODY,
     HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
    {"GET", "/v1/cluster/holds/{}/decision", hf_cluster_exchange_decision, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_HOLD, 0)},
    /* A cancel job's offers on another unit (offers.h). */
    {"GET", "/v1/cluster/events/{}", hf_cluster_event_describe, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/cluster/events/{}/offers", hf_cluster_offers_place, HF_ROUTE_BODY,
     HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/cluster/orders/{}/offer_ended", hf_cluster_offer_ended, HF_ROUTE_BODY,
     HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
};

const hf_route_table_t hf_handlers_cluster_routes = {routes, sizeof routes / sizeof routes[0], 0};

void hf_handlers_cluster_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    /* "With several nodes" (API.md section 9): a store with leases. */
    if (!hf_cluster_leased(context->cluster)) return;
    hf_metrics_family(out, "holdfast_units_owned", "gauge",
                      "Units (events and fleets) this node owns now (API.md section 11).");
    hf_metrics_sample(out, "holdfast_units_owned", NULL, 0,
                      (double)hf_cluster_units_owned(context->cluster));
    hf_forward_counts_t counts = hf_cluster_forwarded(context->cluster);
    hf_metrics_family(out, "holdfast_forwarded_total", "counter",
                      "Requests about a unit another node owns, by outcome: relayed from the "
                      "owner (ok) or answered 503 (unavailable).");
    hf_metrics_label_t ok = {"result", "ok"}, unavailable = {"result", "unavailable"};
    hf_metrics_sample(out, "holdfast_forwarded_total", &ok, 1, (double)counts.ok);
    hf_metrics_sample(out, "holdfast_forwarded_total", &unavailable, 1, (double)counts.unavailable);
}
