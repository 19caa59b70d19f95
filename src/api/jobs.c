/* Handlers of cancel jobs (jobs.h): POST /v1/events/{event}/cancel, GET /v1/jobs/{id} and GET
 * /v1/jobs/{id}/offers, paged as the staff's lists. */
#include "api/jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/query.h"
#include "cluster/cluster.h"
#include "cluster/exchange.h"
#include "core/jobs.h"
#include "engine/metrics.h"
#include "lib/limits.h"

/* An offer's TTL when the cancel names none: a day (docs/API.md, a reading chosen). */
#define OFFER_TTL_MS_DEFAULT INT64_C(86400000)

static void job_render(hf_json_t *json, const hf_core_t *core, const hf_job_t *job) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "job_id");
    hf_json_string(json, job->id);
    HF_JSON_KEY(json, "event");
    hf_json_string(json, hf_core_event_at(core, job->event)->id);
    HF_JSON_KEY(json, "rebook_to");
    if (job->rebook_to[0]) hf_json_string(json, job->rebook_to);
    else hf_json_null(json);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_job_status_name(job->status));
    HF_JSON_KEY(json, "orders");
    hf_json_int(json, job->orders);
    HF_JSON_KEY(json, "offered");
    hf_json_int(json, job->offered);
    HF_JSON_KEY(json, "open");
    hf_json_int(json, job->open);
    HF_JSON_KEY(json, "accepted");
    hf_json_int(json, job->accepted);
    HF_JSON_KEY(json, "refunded");
    hf_json_int(json, job->refunded);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, job->created_at_ms);
    hf_json_object_end(json);
}

/* ---- the cancel ---- */

static void reply_cancel_error(hf_request_t *request, hf_error_t error,
                               const hf_error_detail_t *detail, const char *rebook_to,
                               bool described) {
    if (error != HF_ERROR_INVALID_REQUEST || !detail->field) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    bool rebook = strcmp(detail->field, "rebook_to") == 0;
    /* Another node's event that its owner could not describe (the call could not be made):
     * its outcome is not a refusal of the request. */
    if (rebook && !described && hf_cluster_unit_elsewhere(request->context->cluster, rebook_to)) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE,
                       "the node owning rebook_to did not answer; retry shortly", NULL);
        return;
    }
    const char *message =
        rebook ? "rebook_to must be another existing event of the same currency, not cancelled"
               : "offer_ttl_s must be a number of seconds from 1 to 30 days";
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, detail->field);
}

static void reply_job(hf_request_t *request, uint32_t job_index) {
    hf_json_t json;
    hf_reply_begin(request, 202, &json);
    job_render(&json, request->core, hf_core_job_at(request->core, job_index));
}

static void handle_cancel(hf_request_t *request) {
    hf_core_t *core = request->core;
    /* A cancelled event answers its job whatever the body says, before the body is read. */
    const hf_event_t *cancelled = hf_core_event(core, request->params[0], NULL);
    if (cancelled && cancelled->cancelled) {
        reply_job(request, cancelled->job - 1);
        return;
    }
    const char *rebook_to = NULL;
    int64_t ttl_ms = OFFER_TTL_MS_DEFAULT;
    if (!hf_decode_string(request, "rebook_to", HF_ID_SIZE_MAX, false, &rebook_to) ||
        !hf_decode_seconds(request, "offer_ttl_s", &ttl_ms) ||
        !hf_decode_string(request, "reason", HF_NAME_SIZE_MAX, false, &(const char *){NULL}))
        return;
    char job_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "job_", job_id);
    hf_cancel_request_t cancel = {.job_id = job_id, .rebook_to = rebook_to, .offer_ttl_ms = ttl_ms};
    /* With several nodes a rebook_to of another unit comes described by its owner (the
     * cluster asked it before this pass: cluster/offers.h). */
    cancel.rebook_remote = rebook_to && hf_cluster_exchange_event(
                                            request->context->cluster, rebook_to,
                                            &cancel.rebook_currency, &cancel.rebook_cancelled);
    hf_error_detail_t detail = {0};
    uint32_t job_index;
    hf_error_t error = hf_core_event_cancel(core, request->params[0], &cancel, request->now_ms,
                                            &detail, &job_index);
    if (error) reply_cancel_error(request, error, &detail, rebook_to, cancel.rebook_remote);
    else reply_job(request, job_index);
}

/* ---- reads ---- */

static const hf_job_t *job_or_404(hf_request_t *request) {
    const hf_job_t *job = hf_core_job_find(request->core, request->params[0], NULL);
    if (!job) hf_reply_error(request, HF_API_ERROR_JOB_NOT_FOUND, NULL, NULL);
    return job;
}

static void handle_job_get(hf_request_t *request) {
    const hf_job_t *job = job_or_404(request);
    if (!job) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    job_render(&json, request->core, job);
}

static void offer_render(hf_json_t *json, const hf_core_t *core, const hf_job_outcome_t *outcome) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, outcome->order->id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, hf_core_user_id(core, outcome->order->user));
    HF_JSON_KEY(json, "reservation_id");
    if (outcome->reservation_id) hf_json_string(json, outcome->reservation_id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_job_offer_status_name(outcome->status));
    HF_JSON_KEY(json, "expires_at");
    if (outcome->reservation_id) hf_json_time(json, outcome->expires_at_ms);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* A page's query (status, after, limit) as the staff's lists read it; false after a 400. */
typedef struct offer_page {
    int status; /* -1: any */
    uint32_t limit;
    uint32_t start; /* the position the page starts at */
} offer_page_t;

static bool offer_page_read(hf_request_t *request, const hf_job_t *job, offer_page_t *page) {
    const char *query = request->http->query;
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *page = (offer_page_t){.status = -1, .limit = HF_STAFF_PAGE_DEFAULT};
    uint8_t status;
    if (hf_query_get(query, "status", value, sizeof value)) {
        if (!hf_job_offer_status_parse(value, &status)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "status must be offered, accepted or refunded", "status");
            return false;
        }
        page->status = status;
    }
    if (hf_query_get(query, "limit", value, sizeof value)) {
        char *end;
        long limit = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || limit < 1 || limit > (long)HF_STAFF_PAGE_MAX) {
            char message[64];
            snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                     (unsigned)HF_STAFF_PAGE_MAX);
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
            return false;
        }
        page->limit = (uint32_t)limit;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        bool found;
        page->start = hf_core_job_outcome_after(request->core, job, value, &found);
        if (!found) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be the id of an order of this job", "after");
            return false;
        }
    }
    return true;
}

static void handle_offer_list(hf_request_t *request) {
    const hf_job_t *job = job_or_404(request);
    offer_page_t page;
    if (!job || !offer_page_read(request, job, &page)) return;
    const hf_core_t *core = request->core;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "offers");
    hf_json_array_begin(&json);
    uint32_t returned = 0, count = hf_core_job_outcome_count(job);
    const char *last = NULL;
    bool more = false;
    hf_job_outcome_t outcome;
    for (uint32_t position = page.start; position < count; position++) {
        hf_core_job_outcome_at(core, job, position, &outcome);
        if (page.status >= 0 && outcome.status != page.status) continue;
        if (returned == page.limit) {
            more = true;
            break;
        }
        offer_render(&json, core, &outcome);
        last = outcome.order->id;
        returned++;
    }
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (more) hf_json_string(&json, last);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

/* ---- metrics ---- */

void hf_handlers_jobs_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    hf_metrics_family(out, "holdfast_jobs", "gauge",
                      "Cancel jobs by status: running (orders still to go through) or done "
                      "(API.md section 13).");
    for (unsigned status = HF_JOB_RUNNING; status <= HF_JOB_DONE; status++) {
        hf_metrics_label_t label = {"status", hf_job_status_name(status)};
        hf_metrics_sample(out, "holdfast_jobs", &label, 1,
                          hf_core_jobs_of_status(context->core, status));
    }
}

/* Today every route takes what the HTTP layer reads (1 MiB); a route may take less. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"POST", "/v1/events/{}/cancel", handle_cancel, HF_ROUTE_BODY | HF_ROUTE_REBOOK, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/jobs/{}", handle_job_get, 0, BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
    {"GET", "/v1/jobs/{}/offers", handle_offer_list, 0, BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
};

const hf_route_table_t hf_handlers_jobs_routes = {routes, sizeof routes / sizeof routes[0], 0};
