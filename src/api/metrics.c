/* GET /metrics (metrics.h): the generic families, then each domain's. */
#include "cluster/handlers.h"
#include "api/metrics.h"

#include <stdio.h>

#include "api/credentials.h"
#include "api/calendars.h"
#include "api/dispatch.h"
#include "api/events.h"
#include "api/holds.h"
#include "api/jobs.h"
#include "api/notifications.h"
#include "api/payments.h"
#include "api/queue.h"
#include "api/waitlist.h"
#include "engine/metrics.h"
#include "net/http.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ---- HTTP ---- */

/* A route slot's method label: the route's own ("other" for slot 0). HEAD counts as the GET
 * it runs as. */
static const char *slot_method(const hf_metrics_t *metrics, size_t slot) {
    return slot == 0 ? "other" : metrics->routes[slot - 1]->method;
}

/* The status of a status slot as a label value. */
static void slot_status(const hf_metrics_t *metrics, size_t status_slot, char *out, size_t size) {
    snprintf(out, size, "other");
    for (int status = 200; status < 600; status++)
        if (metrics->status_slots[status] == status_slot &&
            status_slot != HF_METRICS_STATUS_SLOTS - 1) {
            snprintf(out, size, "%d", status);
            return;
        }
}

static void render_requests(const hf_metrics_t *metrics, hf_buffer_t *out) {
    hf_metrics_family(out, "holdfast_http_requests_total", "counter",
                      "Answers sent, by route pattern, status and method (route \"other\": no "
                      "route matched, OPTIONS, malformed requests).");
    char status[16];
    for (size_t slot = 0; slot <= metrics->route_count; slot++) {
        for (size_t s = 0; s < HF_METRICS_STATUS_SLOTS; s++) {
            uint64_t count = metrics->requests[slot][s];
            if (count == 0) continue;
            slot_status(metrics, s, status, sizeof status);
            hf_metrics_label_t labels[] = {{"route", metrics->route_names[slot]},
                                           {"status", status},
                                           {"method", slot_method(metrics, slot)}};
            hf_metrics_sample(out, "holdfast_http_requests_total", labels, 3, (double)count);
        }
    }
}

static void render_durations(const hf_metrics_t *metrics, hf_buffer_t *out) {
    hf_metrics_family(out, "holdfast_http_request_duration_seconds", "histogram",
                      "Time from a request read whole to its answer handed to the socket, "
                      "waiting for durability included, by route.");
    for (size_t slot = 0; slot <= metrics->route_count; slot++) {
        if (metrics->durations[slot].count == 0) continue;
        hf_metrics_label_t labels[] = {{"route", metrics->route_names[slot]},
                                       {"method", slot_method(metrics, slot)}};
        hf_metrics_histogram(out, "holdfast_http_request_duration_seconds", labels, 2,
                             &metrics->durations[slot], &hf_histogram_seconds_bounds);
    }
}

static void render_server(const hf_context_t *context, hf_buffer_t *out) {
    const hf_metrics_t *metrics = context->metrics;
    hf_metrics_family(out, "holdfast_build_info", "gauge", "Always 1: the server's version.");
    hf_metrics_label_t version = {"version", metrics->version};
    hf_metrics_sample(out, "holdfast_build_info", &version, 1, 1);
    hf_metrics_family(out, "holdfast_start_time_seconds", "gauge",
                      "When the server started, in seconds since the Unix epoch.");
    hf_metrics_sample(out, "holdfast_start_time_seconds", NULL, 0,
                      (double)metrics->started_at_ms / 1000.0);
    hf_metrics_family(out, "holdfast_connections", "gauge", "Open client connections.");
    hf_metrics_sample(out, "holdfast_connections", NULL, 0,
                      metrics->http ? (double)hf_http_server_connections(metrics->http) : 0);
    hf_metrics_family(out, "holdfast_replies_waiting", "gauge",
                      "Answers queued: waiting for their batch to be durable, or being written.");
    hf_metrics_sample(out, "holdfast_replies_waiting", NULL, 0,
                      metrics->http ? (double)hf_http_server_pending(metrics->http) : 0);
}

/* ---- the store ---- */

static void render_store_counts(const hf_context_t *context, const hf_store_stats_t *stats,
                                hf_buffer_t *out) {
    hf_metrics_family(out, "holdfast_store_batches_total", "counter",
                      "Batches written (one transaction each).");
    hf_metrics_sample(out, "holdfast_store_batches_total", NULL, 0, (double)stats->batches);
    hf_metrics_family(out, "holdfast_store_mutations_total", "counter",
                      "Mutation records written in those batches.");
    hf_metrics_sample(out, "holdfast_store_mutations_total", NULL, 0, (double)stats->mutations);
    hf_metrics_family(out, "holdfast_store_failures_total", "counter",
                      "Batches whose transaction failed (nothing of them acknowledged).");
    hf_metrics_sample(out, "holdfast_store_failures_total", NULL, 0, (double)stats->failures);
    hf_metrics_family(out, "holdfast_store_failed", "gauge",
                      "1 once a write or sync failed: changes answer 503 until a restart.");
    hf_metrics_sample(out, "holdfast_store_failed", NULL, 0, context->store_failed ? 1 : 0);
    hf_metrics_family(out, "holdfast_store_open_batch_mutations", "gauge",
                      "Mutation records applied and waiting for the next batch.");
    hf_metrics_sample(out, "holdfast_store_open_batch_mutations", NULL, 0,
                      (double)hf_batch_count(context->open_batch));
}

static void render_store(const hf_context_t *context, hf_buffer_t *out) {
    hf_store_stats_t stats = {0};
    if (context->store) hf_store_stats(context->store, &stats);
    render_store_counts(context, &stats, out);
    hf_metrics_family(out, "holdfast_store_batch_size", "histogram",
                      "Mutation records per written batch (group commit).");
    hf_metrics_histogram(out, "holdfast_store_batch_size", NULL, 0, &stats.batch_sizes,
                         &hf_store_batch_size_bounds);
    hf_metrics_family(out, "holdfast_store_commit_duration_seconds", "histogram",
                      "Time to write a batch up to its COMMIT; the log's sync comes after.");
    hf_metrics_histogram(out, "holdfast_store_commit_duration_seconds", NULL, 0,
                         &stats.commit_durations, &hf_histogram_seconds_bounds);
}

/* ---- the route ---- */

/* Each domain's families, after the generic ones (metrics.h: how a domain adds its own). */
static const hf_metrics_render_fn DOMAINS[] = {
    hf_handlers_events_metrics_render,      hf_handlers_holds_metrics_render,
    hf_handlers_payments_metrics_render,    hf_handlers_queue_metrics_render,
    hf_handlers_dispatch_metrics_render,    hf_handlers_cluster_metrics_render,
    hf_handlers_credentials_metrics_render, hf_handlers_notifications_metrics_render,
    hf_handlers_calendars_metrics_render,   hf_handlers_jobs_metrics_render,
    hf_handlers_waitlist_metrics_render,
};

/* Answered at once, not held for the open batch: gauges include what is still being
 * written, and a stuck disk must still show in its figures (docs/API.md, Choice). */
static void handle_metrics(hf_request_t *request) {
    const hf_context_t *context = request->context;
    hf_http_response_t *response = request->response;
    hf_buffer_t *out = &response->body;
    hf_buffer_reset(out);
    response->status = 200;
    response->content_type = CONTENT_TYPE;
    render_server(context, out);
    render_requests(context->metrics, out);
    render_durations(context->metrics, out);
    render_store(context, out);
    for (size_t i = 0; i < sizeof DOMAINS / sizeof DOMAINS[0]; i++) DOMAINS[i](context, out);
    request->rests_on_known = true;
    request->rests_on_change = 0;
}

static const hf_route_t routes[] = {
    {"GET", "/metrics", handle_metrics, HF_ROUTE_PUBLIC, HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
};

const hf_route_table_t hf_handlers_metrics_routes = {routes, sizeof routes / sizeof routes[0], 0};
