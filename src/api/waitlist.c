/* Handlers of the waitlist (waitlist.h). The core decides everything (core/waitlist/); here
 * are the body's and the query's readings and the entry's JSON. */
#include "api/waitlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/query.h"
#include "engine/request.h"
#include "lib/limits.h"

/* Entries per page of the staff's list (API.md section 1's paging: default 100, at most
 * 1,000). */
#define WAITLIST_PAGE_DEFAULT 100u
#define WAITLIST_PAGE_MAX 1000u

static void entry_write(hf_json_t *json, const hf_waitlist_view_t *view) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "waitlist_id");
    hf_json_string(json, view->waitlist_id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, view->user_id);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_waitlist_status_name(view->status));
    HF_JSON_KEY(json, "quantity");
    hf_json_int(json, view->quantity);
    if (view->section) {
        HF_JSON_KEY(json, "section");
        hf_json_string(json, view->section);
    }
    if (view->pool) {
        HF_JSON_KEY(json, "pool");
        hf_json_string(json, view->pool);
    }
    if (view->status == HF_WAITLIST_WAITING) {
        HF_JSON_KEY(json, "position");
        hf_json_int(json, view->position);
    }
    if (view->reservation_id) {
        HF_JSON_KEY(json, "reservation_id");
        hf_json_string(json, view->reservation_id);
    }
    if (view->status == HF_WAITLIST_OFFERED) {
        HF_JSON_KEY(json, "expires_at");
        hf_json_time(json, view->expires_at_ms);
    }
    HF_JSON_KEY(json, "joined_at");
    hf_json_time(json, view->joined_at_ms);
    hf_json_object_end(json);
}

static void reply_entry(hf_request_t *request, int status, const hf_waitlist_view_t *view) {
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    entry_write(&json, view);
}

/* quantity: an integer (the core checks 1 to max_seats_per_hold); false after answering. */
static bool quantity_read(hf_request_t *request, uint32_t *quantity) {
    hf_member_t member = hf_decode_member(request, "quantity");
    if (member.kind == HF_MEMBER_INTEGER && member.integer >= 1 &&
        member.integer <= HF_HOLD_ITEMS_MAX) {
        *quantity = (uint32_t)member.integer;
        return true;
    }
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                   "quantity must be an integer from 1 to the event's max_seats_per_hold",
                   "quantity");
    return false;
}

static void handle_join(hf_request_t *request) {
    if (!hf_core_event(request->core, request->params[0], NULL)) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_waitlist_request_t join = {.event_id = request->params[0]};
    if (!hf_decode_user(request, &join.user_id)) return;
    if (!hf_decode_string(request, "section", HF_ID_SIZE_MAX, false, &join.section) ||
        !hf_decode_string(request, "pool", HF_ID_SIZE_MAX, false, &join.pool) ||
        !quantity_read(request, &join.quantity))
        return;
    if (join.section && join.pool) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "give section or pool, not both",
                       "pool");
        return;
    }
    char id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "w_", id);
    join.waitlist_id = id;
    hf_waitlist_view_t view;
    bool existing;
    hf_error_t error = hf_core_waitlist_join(request->core, &join, request->now_ms, &view,
                                             &existing);
    if (error == HF_ERROR_INVALID_REQUEST) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "quantity must be an integer from 1 to the event's max_seats_per_hold",
                       "quantity");
        return;
    }
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_entry(request, existing ? 200 : 201, &view);
}

/* The entry of the path, shown only to its user when a user token acts. */
static void handle_get(hf_request_t *request) {
    hf_waitlist_view_t view;
    hf_error_t error = hf_core_waitlist_get(request->core, request->params[0], request->params[1],
                                            &view);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    if (!hf_request_owner_check(request, view.user_id)) return;
    reply_entry(request, 200, &view);
}

/* user_id in the body, or ?user_id= (a DELETE often has no body). */
static void handle_cancel(hf_request_t *request) {
    char query_user[HF_USER_ID_SIZE_MAX + 1];
    const char *user_id = NULL;
    if (request->body || request->flat) {
        if (!hf_decode_user(request, &user_id)) return;
    } else if (hf_query_get(request->http->query, "user_id", query_user, sizeof query_user)) {
        user_id = query_user;
    } else if (request->acting_user[0]) {
        user_id = request->acting_user;
    }
    if (!user_id || !user_id[0]) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "user_id is required", "user_id");
        return;
    }
    hf_waitlist_view_t view;
    hf_error_t error = hf_core_waitlist_cancel(request->core, request->params[0],
                                               request->params[1], user_id, request->now_ms, &view);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_entry(request, 200, &view);
}

/* ?status=, ?after= (a waitlist id of the event), ?limit=; false after answering 400. */
static bool list_query(hf_request_t *request, bool *filter, uint8_t *status, int64_t *after,
                       uint32_t *limit) {
    const char *query = request->http->query;
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *filter = false, *after = -1, *limit = WAITLIST_PAGE_DEFAULT;
    if (hf_query_get(query, "status", value, sizeof value)) {
        *filter = true;
        for (*status = 0; *status <= HF_WAITLIST_CANCELLED; (*status)++)
            if (strcmp(value, hf_waitlist_status_name(*status)) == 0) break;
        if (*status > HF_WAITLIST_CANCELLED) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "status must be waiting, offered, fulfilled, lapsed or cancelled",
                           "status");
            return false;
        }
    }
    if (hf_query_get(query, "limit", value, sizeof value)) {
        char *end;
        long parsed = strtol(value, &end, 10);
        if (*end || parsed < 1 || parsed > (long)WAITLIST_PAGE_MAX) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "limit must be an integer from 1 to 1000", "limit");
            return false;
        }
        *limit = (uint32_t)parsed;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        hf_waitlist_view_t view;
        if (hf_core_waitlist_get(request->core, request->params[0], value, &view) != HF_OK) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be the id of a waitlist entry of this event", "after");
            return false;
        }
        *after = view.sequence;
    }
    return true;
}

static void handle_list(hf_request_t *request) {
    if (!hf_core_event(request->core, request->params[0], NULL)) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    bool filter, more;
    uint8_t status = 0;
    int64_t after;
    uint32_t limit;
    if (!list_query(request, &filter, &status, &after, &limit)) return;
    hf_waitlist_view_t *views = malloc((size_t)limit * sizeof *views);
    if (!views) abort();
    uint32_t count = hf_core_waitlist_list(request->core, request->params[0], filter, status, after,
                                           limit, views, &more);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "entries");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < count; i++) entry_write(&json, &views[i]);
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (more && count > 0) hf_json_string(&json, views[count - 1].waitlist_id);
    else hf_json_null(&json);
    hf_json_object_end(&json);
    free(views);
}

void hf_handlers_waitlist_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    uint64_t counts[HF_WAITLIST_CANCELLED + 1];
    if (!hf_core_waitlist_counts(context->core, counts)) return;
    hf_metrics_family(out, "holdfast_waitlist", "gauge", "Waitlist entries by status.");
    for (unsigned s = 0; s <= HF_WAITLIST_CANCELLED; s++) {
        const hf_metrics_label_t label = {"status", hf_waitlist_status_name(s)};
        hf_metrics_sample(out, "holdfast_waitlist", &label, 1, (double)counts[s]);
    }
}

#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"POST", "/v1/events/{}/waitlist", handle_join,
     HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT | HF_ROUTE_FLAT | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/waitlist", handle_list, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/waitlist/{}", handle_get, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"DELETE", "/v1/events/{}/waitlist/{}", handle_cancel, HF_ROUTE_FLAT | HF_ROUTE_BUYER,
     BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_waitlist_routes = {routes, sizeof routes / sizeof routes[0], 0};
