/* Handlers of outbound notifications (notifications.h).
 *
 * A notification is its history entry (the history is the outbox), so the listing is a read
 * of the store's history across units, in (unit, seq) order, with each entry's delivery
 * state; the state the window holds in memory (attempts not yet written) overlays it. Any node
 * answers the listing from the store; a retry writes its unit's state, so it is served by the
 * unit's owner (its route names the unit the id carries). */
#include "api/notifications.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/history.h"
#include "api/query.h"
#include "engine/notification.h"
#include "engine/outbox.h"

/* {"id","type","unit","seq","at","status","attempts","last_status","last_error",
 * "next_attempt_at","data"}: next_attempt_at is null once it is delivered or failed, and the
 * change's time while it waits for its first attempt. */
static bool notification_write(hf_json_t *json, const hf_core_t *core,
                               const hf_stored_history_t *entry) {
    char id[HF_NOTIFY_ID_SIZE], type[64], unit[HF_ID_SIZE_MAX + 16];
    hf_notify_id_write(entry->unit, entry->seq, id);
    hf_notify_type_of(entry->type, type, sizeof type);
    const hf_calendar_t *calendar = hf_core_calendar(core, entry->unit, NULL);
    snprintf(unit, sizeof unit, "%s:%s", calendar ? "calendar" : "event", entry->unit);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, id);
    HF_JSON_KEY(json, "type");
    hf_json_string(json, type);
    HF_JSON_KEY(json, "unit");
    hf_json_string(json, unit);
    HF_JSON_KEY(json, "seq");
    hf_json_int(json, entry->seq);
    HF_JSON_KEY(json, "at");
    hf_json_time(json, entry->at_ms);
    HF_JSON_KEY(json, "status");
    const char *status = hf_notify_status_name(entry->notify_status);
    hf_json_string(json, status ? status : "pending");
    HF_JSON_KEY(json, "attempts");
    hf_json_int(json, entry->notify_attempts);
    HF_JSON_KEY(json, "last_status");
    if (entry->notify_last_status > 0) hf_json_int(json, entry->notify_last_status);
    else hf_json_null(json);
    HF_JSON_KEY(json, "last_error");
    if (entry->notify_last_error) hf_json_string(json, entry->notify_last_error);
    else hf_json_null(json);
    HF_JSON_KEY(json, "next_attempt_at");
    if (entry->notify_status != HF_NOTIFY_PENDING) hf_json_null(json);
    else
        hf_json_time(json, entry->notify_next_attempt_ms > entry->at_ms
                               ? entry->notify_next_attempt_ms
                               : entry->at_ms);
    HF_JSON_KEY(json, "data");
    hf_json_separator_write(json);
    bool whole = hf_history_entry_write(json->out, entry,
                                        calendar ? calendar->definition.unit : -1);
    hf_json_object_end(json);
    return whole;
}

/* A page: the status filter (-1: any), the entry after which it starts, its length. */
typedef struct page {
    int status;
    char after_unit[HF_ID_SIZE_MAX + 1];
    int64_t after_seq;
    uint32_t limit;
} page_t;

static bool limit_parse(const char *text, uint32_t *limit) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || value < 1 || value > HF_NOTIFY_PAGE_MAX)
        return false;
    *limit = (uint32_t)value;
    return true;
}

/* status, after and limit; false after answering 400 naming the parameter. */
static bool page_read(hf_request_t *request, page_t *page) {
    const char *query = request->http->query;
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *page = (page_t){.status = -1, .limit = HF_NOTIFY_PAGE_DEFAULT};
    if (hf_query_get(query, "status", value, sizeof value) &&
        (page->status = hf_notify_status_parse(value)) < 0) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "status must be \"pending\", \"delivered\" or \"failed\"", "status");
        return false;
    }
    if (hf_query_get(query, "after", value, sizeof value) &&
        !hf_notify_id_parse(value, page->after_unit, &page->after_seq)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "after must be the id of a notification (nt_...)", "after");
        return false;
    }
    if (hf_query_get(query, "limit", value, sizeof value) && !limit_parse(value, &page->limit)) {
        char message[64];
        snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                 (unsigned)HF_NOTIFY_PAGE_MAX);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
        return false;
    }
    return true;
}

/* A page in progress: what it examined (a status no index has is filtered here, at most
 * HF_NOTIFY_SCAN_MAX rows), what it listed. */
typedef struct listing {
    hf_json_t *json;
    const hf_core_t *core;
    const hf_outbox_t *outbox;
    int status;
    uint32_t limit, listed, examined;
    bool more, damaged;
    char last[HF_NOTIFY_ID_SIZE], last_examined[HF_NOTIFY_ID_SIZE];
} listing_t;

static int entry_listed(void *context, const hf_stored_history_t *stored) {
    listing_t *listing = context;
    hf_stored_history_t entry = *stored;
    if (listing->outbox) hf_outbox_overlay(listing->outbox, entry.unit, entry.seq, &entry);
    if (listing->status >= 0 && entry.notify_status != listing->status) {
        listing->examined++;
        hf_notify_id_write(entry.unit, entry.seq, listing->last_examined);
        return 0;
    }
    if (listing->listed == listing->limit) {
        listing->more = true;
        return HF_STORE_LIST_STOP;
    }
    listing->examined++;
    hf_notify_id_write(entry.unit, entry.seq, listing->last_examined);
    if (!notification_write(listing->json, listing->core, &entry)) {
        listing->damaged = true;
        return -1;
    }
    hf_notify_id_write(entry.unit, entry.seq, listing->last);
    listing->listed++;
    return 0;
}

/* Oldest first within each unit, units in the order of their ids: the order receivers sort by
 * (unit, seq). "next" is the last one listed when more follow; else, when a filtered page
 * stopped at its bound of rows examined, the last one it examined (more may match beyond);
 * else null. Pending ones have an index of their own, so their page reads only them. */
static void handle_list(hf_request_t *request) {
    page_t page;
    if (!page_read(request, &page)) return;
    hf_store_t *store = request->context->store;
    if (!store) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "no store to read from", NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "notifications");
    hf_json_array_begin(&json);
    bool scanned = page.status > HF_NOTIFY_PENDING;
    listing_t listing = {.json = &json,
                         .core = request->core,
                         .outbox = request->context->outbox,
                         .status = page.status,
                         .limit = page.limit};
    hf_store_outbox_query_t query = {.after_unit = page.after_unit,
                                     .after_seq = page.after_seq,
                                     .status = scanned ? -1 : page.status,
                                     .limit = scanned ? HF_NOTIFY_SCAN_MAX : page.limit + 1};
    char error[512];
    if (hf_store_read_outbox(store, &query, entry_listed, &listing, error, sizeof error) != 0) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE,
                       listing.damaged ? "a history entry is damaged"
                                       : "reading the notifications failed; retry",
                       NULL);
        return;
    }
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (listing.more) hf_json_string(&json, listing.last);
    else if (scanned && listing.examined == query.limit)
        hf_json_string(&json, listing.last_examined);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

static void retry_shown(void *context, const hf_stored_history_t *entry) {
    hf_request_t *request = context;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    notification_write(&json, request->core, entry);
}

static void handle_retry(hf_request_t *request) {
    char unit[HF_ID_SIZE_MAX + 1];
    int64_t seq;
    if (!hf_notify_id_parse(request->params[0], unit, &seq)) {
        hf_reply_error(request, HF_API_ERROR_NOTIFICATION_NOT_FOUND, NULL, NULL);
        return;
    }
    char error[512];
    switch (hf_outbox_retry(request->context->outbox, unit, seq, request->now_ms, retry_shown,
                            request, error, sizeof error)) {
    case HF_OUTBOX_RETRY_DUE: return;
    case HF_OUTBOX_RETRY_DELIVERED:
        hf_reply_error(request, HF_API_ERROR_ALREADY_DELIVERED, NULL, NULL);
        return;
    case HF_OUTBOX_RETRY_NOT_FOUND:
        hf_reply_error(request, HF_API_ERROR_NOTIFICATION_NOT_FOUND, NULL, NULL);
        return;
    case HF_OUTBOX_RETRY_FAILED:
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "reading the notification failed; retry",
                       NULL);
        return;
    }
}

static const hf_route_t routes[] = {
    {"GET", "/v1/notifications", handle_list, 0, HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
    {"POST", "/v1/notifications/{}/retry", handle_retry, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_NOTIFICATION, 0)},
};

const hf_route_table_t hf_handlers_notifications_routes = {routes, sizeof routes / sizeof routes[0],
                                                           0};

/* ---- GET /metrics ---- */

void hf_handlers_notifications_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    if (context->outbox == NULL) return;
    hf_outbox_stats_t stats;
    hf_outbox_stats(context->outbox, &stats);
    hf_metrics_family(out, "holdfast_notifications", "gauge",
                      "Notifications by status: pending ones of this node's units, delivered "
                      "and failed ones since the start.");
    const double counts[] = {(double)stats.pending, (double)stats.delivered, (double)stats.failed};
    for (int status = HF_NOTIFY_PENDING; status <= HF_NOTIFY_FAILED; status++) {
        hf_metrics_label_t label = {"status", hf_notify_status_name(status)};
        hf_metrics_sample(out, "holdfast_notifications", &label, 1, counts[status]);
    }
    hf_metrics_family(out, "holdfast_notify_attempts_total", "counter",
                      "Delivery attempts by result: a 2xx answer, or anything else.");
    const hf_metrics_label_t succeeded = {"result", "success"};
    hf_metrics_sample(out, "holdfast_notify_attempts_total", &succeeded, 1,
                      (double)stats.attempts_succeeded);
    const hf_metrics_label_t failed = {"result", "failure"};
    hf_metrics_sample(out, "holdfast_notify_attempts_total", &failed, 1,
                      (double)stats.attempts_failed);
    hf_metrics_family(out, "holdfast_notify_dropped_total", "counter",
                      "Pending notifications failed because the backlog passed its bound.");
    hf_metrics_sample(out, "holdfast_notify_dropped_total", NULL, 0, (double)stats.dropped);
}
