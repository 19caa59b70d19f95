/* GET /metrics (API.md section 9), Prometheus's text format 0.0.4: the counters the loop
 * thread keeps for it, and the writer every family is written with.
 *
 * Counting: every answer is counted as it leaves (the HTTP layer's answered callback,
 * hf_metrics_answered) by its route and status, and timed into its route's histogram. The
 * counters are plain integers of the loop thread, indexed by the route's slot and a status's
 * slot: no lock, no atomic, no allocation. Gauges (holds, seats, connections) are not counted
 * at all: they are read from where they already live when a scrape asks (the core's running
 * counts, the HTTP server, the store's statistics under its lock).
 *
 * How a domain adds its families: its api/DOMAIN.c exports one function of type
 * hf_metrics_render_fn (declared in its api/DOMAIN.h) that writes them with
 * hf_metrics_family, hf_metrics_sample and hf_metrics_histogram, reading its own state
 * (usually running counts of the core, kept as they change, so a scrape never walks a table
 * of seats or holds); the function is then added to the list at the end of
 * api/metrics.c. Nothing else changes: not this file, not the generic families. Label
 * values must be bounded: statuses, outcomes, routes; never a user's, hold's or ride's id
 * (an event's id only where API.md section 9 names the label).
 *
 * Ownership: the engine owns the hf_metrics_t (context->metrics) for its whole life; the
 * route table it points to is the dispatcher's, static. Loop thread only. */
#ifndef HF_ENGINE_METRICS_H
#define HF_ENGINE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/context.h"
#include "engine/route.h"
#include "lib/buffer.h"
#include "lib/histogram.h"

/* Slot 0 of the routes is every answer no route gave (404, 405, OPTIONS, malformed requests):
 * the label route="other". Route i of the dispatcher's list is slot i + 1. */
#define HF_METRICS_ROUTE_SLOTS (HF_ROUTES_MAX + 1)
/* The statuses counted one by one (metrics.c lists them); any other counts as "other", the
 * last slot. */
#define HF_METRICS_STATUS_SLOTS 36
/* The reasons a credential is refused, counted apart (api/credentials.c lists them). */
#define HF_METRICS_AUTH_REFUSAL_SLOTS 12
/* A readable route, "/v1/events/{event}/seats/{seat}": a pattern is at most a head line. */
#define HF_METRICS_ROUTE_NAME_SIZE 96

struct hf_http_server;

typedef struct hf_metrics {
    uint64_t requests[HF_METRICS_ROUTE_SLOTS][HF_METRICS_STATUS_SLOTS];
    hf_histogram_t durations[HF_METRICS_ROUTE_SLOTS];
    uint8_t status_slots[600]; /* a status (200 to 599) -> its slot */
    /* The dispatcher's routes, by slot - 1, with their readable names. */
    const hf_route_t *const *routes;
    size_t route_count;
    char route_names[HF_METRICS_ROUTE_SLOTS][HF_METRICS_ROUTE_NAME_SIZE];
    const char *version;               /* static; holdfast_build_info */
    int64_t started_at_ms;             /* holdfast_start_time_seconds */
    const struct hf_http_server *http; /* connections and queued answers; NULL before start */
    /* Requests refused for their credential, by reason slot (api/credentials.c names them):
     * holdfast_auth_refusals_total{reason}. */
    uint64_t auth_refusals[HF_METRICS_AUTH_REFUSAL_SLOTS];
} hf_metrics_t;

/* routes: the dispatcher's routes, route_count at most HF_ROUTES_MAX (hf_routes_known). */
void hf_metrics_init(hf_metrics_t *metrics, const hf_route_t *const *routes, size_t route_count,
                     const char *version, int64_t now_ms);
/* An hf_http_answered_fn (net/http.h); context is the engine's hf_context_t. */
void hf_metrics_answered(void *context, uint32_t label, int status, uint64_t duration_ns);
/* The answers counted for route (a handler of the dispatcher's list) with status; 0 when the
 * route is not listed. What a domain's family derived from its route's answers reads. */
uint64_t hf_metrics_route_answers(const hf_metrics_t *metrics, hf_route_handler_fn route,
                                  int status);

/* ---- writing families: text format 0.0.4 ---- */

/* A label of a sample: name="value". Values are escaped as the format asks. */
typedef struct hf_metrics_label {
    const char *name;
    const char *value;
} hf_metrics_label_t;

/* What a domain's handlers file exports: writes its families into out. */
typedef void (*hf_metrics_render_fn)(const hf_context_t *context, hf_buffer_t *out);

/* The # HELP and # TYPE lines that start a family; type is "counter", "gauge" or
 * "histogram". Every family is written once, its samples right after. */
void hf_metrics_family(hf_buffer_t *out, const char *name, const char *type, const char *help);
/* One sample with label_count labels (labels may be NULL when 0). */
void hf_metrics_sample(hf_buffer_t *out, const char *name, const hf_metrics_label_t *labels,
                       size_t label_count, double value);
/* A histogram's samples: NAME_bucket for each bound (cumulative, then le="+Inf"), NAME_sum
 * (scaled by bounds->unit_scale) and NAME_count, each with labels and le. */
void hf_metrics_histogram(hf_buffer_t *out, const char *name, const hf_metrics_label_t *labels,
                          size_t label_count, const hf_histogram_t *histogram,
                          const hf_histogram_bounds_t *bounds);

#endif
