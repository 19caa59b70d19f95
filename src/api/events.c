/* Handlers of health, events, seats and an event's live stream (events.h). */
#include "api/events.h"

#include <openssl/rand.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/query.h"
#include "api/render.h"
#include "engine/streams.h"

/* The domain's own context (route.h: hf_route_table_t.scratch_size): scratch its handlers
 * share, one request at a time, too large for the stack. */
typedef struct scratch {
    hf_error_detail_t detail; /* a refusal's detail (items is large) */
} scratch_t;

static scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

/* A room's pre-queue shuffle is keyed by a seed drawn once, from a cryptographic source, when
 * the room is set up (shuffle.h): kept with the event, so a restart draws the same places. */
static void room_seed(hf_room_definition_t *room) {
    static const uint8_t none[HF_QUEUE_SEED_SIZE];
    if (!room->enabled || memcmp(room->shuffle_seed, none, sizeof none) != 0) return;
    if (RAND_bytes(room->shuffle_seed, sizeof room->shuffle_seed) != 1)
        abort(); /* no entropy: the places would be guessable */
}

static void handle_health(hf_request_t *request) {
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "status");
    hf_json_string(&json, "ok");
    hf_json_object_end(&json);
}

static void handle_event_create(hf_request_t *request) {
    hf_event_definition_t definition;
    /* Large: kept off the stack, in the domain's scratch; one request at a time uses it. */
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    hf_fields_source_t source = {HF_FIELDS_EVENT, &definition, NULL};
    hf_core_t *core = request->core;
    hf_error_t error = HF_ERROR_INVALID_REQUEST;
    if (hf_decode_definition(request->body, &definition, detail)) {
        room_seed(&definition.waiting_room);
        error = hf_core_event_create(core, &definition, request->now_ms, detail);
    }
    /* The answer may quote the definition's ids (duplicates): freed once it is written. */
    if (error) hf_reply_core_error(request, error, detail, &source);
    hf_decode_definition_free(&definition);
    if (error) return;
    hf_json_t json;
    hf_reply_begin(request, 201, &json);
    hf_render_event(&json, core, hf_core_event(core, definition.id, NULL));
}

/* A page's limit (API.md section 1: default 100, at most 1,000); false when not one. */
static bool page_limit(const char *text, uint32_t *limit) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > HF_EVENTS_PAGE_MAX) return false;
    *limit = (uint32_t)value;
    return true;
}

/* GET /v1/events?after=ID&limit=N: events in creation order, paged as seats are. An after
 * naming no event is a 400 (docs/API.md): a deleted one cannot say where its place was. */
static void handle_event_list(hf_request_t *request) {
    hf_core_t *core = request->core;
    const char *query = request->http->query;
    char value[HF_ID_SIZE_MAX + 2];
    uint32_t limit = HF_EVENTS_PAGE_DEFAULT, count, start = 0;
    if (hf_query_get(query, "limit", value, sizeof value) && !page_limit(value, &limit)) {
        char message[128];
        snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                 HF_EVENTS_PAGE_MAX);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
        return;
    }
    const uint32_t *listed = hf_core_events_listed(core, &count);
    if (hf_query_get(query, "after", value, sizeof value)) {
        uint32_t after;
        if (!hf_core_event(core, value, &after)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be the id of an event", "after");
            return;
        }
        while (start < count && listed[start] != after) start++;
        start++;
    }
    uint32_t end = start + limit < count ? start + limit : count;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "events");
    hf_json_array_begin(&json);
    for (uint32_t i = start; i < end; i++)
        hf_render_event(&json, core, hf_core_event_at(core, listed[i]));
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (end < count && end > start)
        hf_json_string(&json, hf_core_event_at(core, listed[end - 1])->id);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

/* The 409 of a pool's capacity below its held + sold, naming the pool and both numbers. */
static void reply_below_taken(hf_request_t *request, const hf_event_definition_t *patch,
                              const hf_error_detail_t *detail) {
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_CAPACITY_BELOW_TAKEN, NULL, &json);
    HF_JSON_KEY(&json, "pool");
    hf_json_string(&json, patch->pools[detail->pool].id);
    HF_JSON_KEY(&json, "capacity");
    hf_json_int(&json, detail->requested);
    HF_JSON_KEY(&json, "taken");
    hf_json_int(&json, detail->current);
    hf_reply_error_end(&json);
}

/* PATCH /v1/events/{event}: the members the body names change (API.md section 2). */
static void handle_event_update(hf_request_t *request) {
    hf_context_t *context = request->context;
    uint32_t index;
    const hf_event_t *event = hf_core_event(request->core, request->params[0], &index);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_event_definition_t patch;
    uint32_t members;
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    hf_fields_source_t source = {HF_FIELDS_EVENT, &patch, NULL};
    hf_error_t error = HF_ERROR_INVALID_REQUEST;
    bool layout = false;
    hf_waitlist_setting_t waitlist = hf_core_waitlist_setting(request->core, event->id);
    if (hf_decode_patch(request->body, event->id, &event->waiting_room, &waitlist, &patch, &members,
                        detail)) {
        room_seed(&patch.waiting_room);
        error = hf_core_event_update(request->core, &patch, members, request->now_ms, &layout,
                                     detail);
    }
    if (error == HF_ERROR_CAPACITY_BELOW_TAKEN) reply_below_taken(request, &patch, detail);
    else if (error) hf_reply_core_error(request, error, detail, &source);
    hf_decode_definition_free(&patch);
    if (error) return;
    /* Seat indexes may have moved: the event's streams end, and their reconnects get a
     * snapshot of the new layout. */
    if (layout) hf_streams_forget(context->streams, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_event(&json, request->core, hf_core_event_at(request->core, index));
}

/* DELETE /v1/events/{event}: 204 for an event never used; its streams end. */
static void handle_event_delete(hf_request_t *request) {
    hf_context_t *context = request->context;
    uint32_t index;
    hf_error_t error = hf_core_event_delete(request->core, request->params[0], request->now_ms,
                                            &index);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    hf_streams_forget(context->streams, index);
    request->response->status = 204;
    hf_buffer_reset(&request->response->body);
}

/* The event named by the first path parameter, or NULL after answering 404. */
static const hf_event_t *event_or_404(hf_request_t *request) {
    const hf_event_t *event = hf_core_event(request->core, request->params[0], NULL);
    if (!event) hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
    return event;
}

static void handle_event_get(hf_request_t *request) {
    const hf_event_t *event = event_or_404(request);
    if (!event) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_event(&json, request->core, event);
}

static void handle_seat_get(hf_request_t *request) {
    const hf_event_t *event = event_or_404(request);
    if (!event) return;
    uint32_t seat;
    if (!hf_core_seat_find(event, request->params[1], &seat)) {
        hf_reply_error(request, HF_API_ERROR_SEAT_NOT_FOUND, NULL, NULL);
        return;
    }
    /* The answer shows this seat only: it waits for the seat's last change, not for the open
     * batch (routes.c, reply_sequence). */
    request->rests_on_known = true;
    request->rests_on_change = hf_core_seat_change(event, seat);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_seat(&json, request->core, event, seat);
}

typedef struct seat_filter {
    uint32_t start, end; /* seat range: one section or the whole event */
    int status;          /* -1: any */
    uint32_t limit;
} seat_filter_t;

static bool parse_limit(const char *text, uint32_t *limit) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > HF_SEATS_PAGE_MAX) return false;
    *limit = (uint32_t)value;
    return true;
}

/* Reads section, status, limit and after from the query; false after answering an error. */
static bool seat_filter_read(hf_request_t *request, const hf_event_t *event,
                             seat_filter_t *filter) {
    char value[HF_SEAT_ID_SIZE_MAX + 1];
    const char *query = request->http->query;
    *filter = (seat_filter_t){0, event->seat_count, -1, HF_SEATS_PAGE_DEFAULT};
    if (hf_query_get(query, "section", value, sizeof value)) {
        uint32_t s = 0;
        while (s < event->section_count && strcmp(event->sections[s].id, value) != 0) s++;
        if (s == event->section_count) {
            hf_reply_error_naming(request, HF_API_ERROR_SECTION_NOT_FOUND, "section", value);
            return false;
        }
        filter->start = event->sections[s].first_seat;
        filter->end = filter->start + event->sections[s].seat_count;
    }
    uint8_t status;
    if (hf_query_get(query, "status", value, sizeof value)) {
        if (!hf_seat_status_parse(value, &status)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "status must be available, held or sold", "status");
            return false;
        }
        filter->status = status;
    }
    if (hf_query_get(query, "limit", value, sizeof value) && !parse_limit(value, &filter->limit)) {
        char message[128];
        snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                 HF_SEATS_PAGE_MAX);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
        return false;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        uint32_t seat;
        if (!hf_core_seat_find(event, value, &seat)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be a seat id of this event", "after");
            return false;
        }
        if (seat + 1 > filter->start) filter->start = seat + 1;
    }
    return true;
}

static bool seat_matches(const hf_event_t *event, uint32_t seat, int status) {
    return status < 0 || event->seats[seat].status == status;
}

static uint64_t newer(uint64_t a, uint64_t b) { return a > b ? a : b; }

static void handle_seat_list(hf_request_t *request) {
    const hf_event_t *event = event_or_404(request);
    if (!event) return;
    seat_filter_t filter;
    if (!seat_filter_read(request, event, &filter)) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "seats");
    hf_json_array_begin(&json);
    uint32_t returned = 0, seat = filter.start, last = 0;
    /* The page rests on every seat it looked at, those a status filter left out included
     * (leaving one out shows its status): it waits for their newest change, not for the open
     * batch (routes.c, reply_sequence). */
    uint64_t rests_on = 0;
    for (; seat < filter.end && returned < filter.limit; seat++) {
        rests_on = newer(rests_on, hf_core_seat_change(event, seat));
        if (!seat_matches(event, seat, filter.status)) continue;
        hf_render_seat(&json, request->core, event, seat);
        last = seat;
        returned++;
    }
    hf_json_array_end(&json);
    /* There is a next page only if a matching seat remains after the last one returned. */
    while (seat < filter.end && !seat_matches(event, seat, filter.status)) {
        rests_on = newer(rests_on, hf_core_seat_change(event, seat));
        seat++;
    }
    if (seat < filter.end) rests_on = newer(rests_on, hf_core_seat_change(event, seat));
    /* An empty range looked at no seat, not even at the event's creation: it waits as usual. */
    request->rests_on_known = filter.start < filter.end;
    request->rests_on_change = rests_on;
    HF_JSON_KEY(&json, "next");
    if (returned > 0 && seat < filter.end) {
        char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
        hf_core_seat_id(event, last, seat_id);
        hf_json_string(&json, seat_id);
    } else {
        hf_json_null(&json);
    }
    hf_json_object_end(&json);
}

static void event_snapshot(hf_json_t *json, const void *event, const hf_core_t *core) {
    hf_render_event(json, core, event);
}

static void handle_event_stream(hf_request_t *request) {
    uint32_t event_index;
    const hf_event_t *event = hf_core_event(request->core, request->params[0], &event_index);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_streams_open(request, event_index, event_snapshot, event);
}

/* Today every route takes what the HTTP layer reads (1 MiB); a route may take less. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"GET", "/healthz", handle_health, HF_ROUTE_PUBLIC, BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
    {"POST", "/v1/events", handle_event_create, HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_BODY("id")},
    {"GET", "/v1/events", handle_event_list, HF_ROUTE_SPANS | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_NO_UNIT},
    {"GET", "/v1/events/{}", handle_event_get, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"PATCH", "/v1/events/{}", handle_event_update, HF_ROUTE_BODY, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"DELETE", "/v1/events/{}", handle_event_delete, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/seats", handle_seat_list, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/stream", handle_event_stream,
     HF_ROUTE_KEY_IN_QUERY | HF_ROUTE_STREAM | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/seats/{}", handle_seat_get, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_events_routes = {routes, sizeof routes / sizeof routes[0],
                                                    sizeof(scratch_t)};

/* ---- GET /metrics (metrics.h) ---- */

/* holdfast_allocated{status}: the seats and pool units of every allocation (API.md section
 * 14), free (available), held and sold; only once an event has an allocation. Reads each
 * allocation's counts, never a seat. */
static void allocated_metrics_render(const hf_core_t *core, const uint32_t *listed,
                                     uint32_t event_count, hf_buffer_t *out) {
    double totals[3] = {0};
    bool any = false;
    for (uint32_t e = 0; e < event_count; e++) {
        uint32_t count;
        const uint32_t *allocations = hf_core_event_allocations(core, listed[e], &count);
        for (uint32_t a = 0; a < count; a++) {
            hf_allocation_view_t view;
            hf_core_allocation_view(core, allocations[a], &view);
            totals[0] += view.seats.available;
            totals[1] += view.seats.held;
            totals[2] += view.seats.sold;
            for (uint32_t p = 0; p < view.pool_count; p++) {
                hf_allocation_pool_view_t line;
                hf_core_allocation_pool(core, allocations[a], p, &line);
                totals[0] += (double)line.available;
                totals[1] += (double)line.held;
                totals[2] += (double)line.sold;
            }
            any = true;
        }
    }
    if (!any) return;
    hf_metrics_family(out, "holdfast_allocated", "gauge",
                      "Seats and pool units of every allocation, by status.");
    static const char *const STATUSES[] = {"available", "held", "sold"};
    for (int status = 0; status < 3; status++) {
        hf_metrics_label_t label = {"status", STATUSES[status]};
        hf_metrics_sample(out, "holdfast_allocated", &label, 1, totals[status]);
    }
}

/* Sums each event's running counts: a scrape reads each event and pool once, never a seat
 * (at most HF_EVENTS_MAX events). */
void hf_handlers_events_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    const hf_core_t *core = context->core;
    uint32_t event_count;
    const uint32_t *listed = hf_core_events_listed(core, &event_count);
    double seats[3] = {0}, units[3] = {0};
    for (uint32_t e = 0; e < event_count; e++) {
        const hf_event_t *event = hf_core_event_at(core, listed[e]);
        seats[HF_SEAT_AVAILABLE] += event->counts.available;
        seats[HF_SEAT_HELD] += event->counts.held;
        seats[HF_SEAT_SOLD] += event->counts.sold;
        for (uint32_t p = 0; p < event->pool_count; p++) {
            const hf_pool_t *pool = &event->pools[p];
            units[HF_SEAT_AVAILABLE] += (double)hf_core_pool_available(pool);
            units[HF_SEAT_HELD] += (double)pool->held;
            units[HF_SEAT_SOLD] += (double)pool->sold;
        }
    }
    hf_metrics_family(out, "holdfast_events", "gauge", "Events.");
    hf_metrics_sample(out, "holdfast_events", NULL, 0, event_count);
    hf_metrics_family(out, "holdfast_seats", "gauge", "Seats of every event, by status.");
    for (int status = HF_SEAT_AVAILABLE; status <= HF_SEAT_SOLD; status++) {
        hf_metrics_label_t label = {"status", hf_seat_status_name(status)};
        hf_metrics_sample(out, "holdfast_seats", &label, 1, seats[status]);
    }
    hf_metrics_family(out, "holdfast_pool_units", "gauge",
                      "Units of every event's general-admission pools, by status.");
    for (int status = HF_SEAT_AVAILABLE; status <= HF_SEAT_SOLD; status++) {
        hf_metrics_label_t label = {"status", hf_seat_status_name(status)};
        hf_metrics_sample(out, "holdfast_pool_units", &label, 1, units[status]);
    }
    allocated_metrics_render(core, listed, event_count, out);
}
