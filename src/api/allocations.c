/* Handlers of allocations (allocations.h, API.md section 14): POST an allocation, release
 * part or all of it, list an event's and read one. The core decides everything; this file
 * decodes the bodies and writes the answers.
 *
 * An allocation's answer: {"id", "event", "seats": [its seats, released ones still held or
 * sold included], "pools": {"GA": units still its own}, "counts": {"available", "held",
 * "sold"} (seats and pool units together), "pool_counts": {"GA": {"available", "held",
 * "sold"}}, "released": {"seats": [...], "pools": {...}} (held or sold, given to the public
 * once they come free), "created_at"}. */
#include "api/allocations.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/query.h"

/* The domain's scratch (route.h): a request's seat ids and pools, and a refusal's detail. */
typedef struct scratch {
    hf_error_detail_t detail;
    const char *seat_ids[HF_ALLOCATION_SEATS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
} scratch_t;

static scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

/* ---- answers ---- */

static void seat_ids_write(hf_json_t *json, const hf_event_t *event, const uint32_t *seats,
                           uint32_t count, const hf_core_t *core, bool released) {
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < count; i++) {
        /* A released seat is still listed by its allocation until it comes free. */
        bool is_released = event->seats[seats[i]].status != HF_SEAT_ALLOCATED &&
                           hf_core_seat_allocation_released(core, event, seats[i]);
        if (released && !is_released) continue;
        hf_core_seat_id(event, seats[i], seat_id);
        hf_json_string(json, seat_id);
    }
    hf_json_array_end(json);
}

static void counts_write(hf_json_t *json, int64_t available, int64_t held, int64_t sold) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "available");
    hf_json_int(json, available);
    HF_JSON_KEY(json, "held");
    hf_json_int(json, held);
    HF_JSON_KEY(json, "sold");
    hf_json_int(json, sold);
    hf_json_object_end(json);
}

static void pools_write(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                        uint32_t index, const hf_allocation_view_t *view) {
    hf_allocation_pool_view_t line;
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    for (uint32_t i = 0; i < view->pool_count; i++) {
        hf_core_allocation_pool(core, index, i, &line);
        hf_json_key(json, event->pools[line.pool].id);
        hf_json_int(json, line.available + line.held + line.sold - line.release_pending);
    }
    hf_json_object_end(json);
    HF_JSON_KEY(json, "pool_counts");
    hf_json_object_begin(json);
    for (uint32_t i = 0; i < view->pool_count; i++) {
        hf_core_allocation_pool(core, index, i, &line);
        hf_json_key(json, event->pools[line.pool].id);
        counts_write(json, line.available, line.held, line.sold);
    }
    hf_json_object_end(json);
}

/* The counts of seats and pool units together. */
static void total_counts_write(hf_json_t *json, const hf_core_t *core, uint32_t index,
                               const hf_allocation_view_t *view) {
    int64_t available = view->seats.available, held = view->seats.held, sold = view->seats.sold;
    hf_allocation_pool_view_t line;
    for (uint32_t i = 0; i < view->pool_count; i++) {
        hf_core_allocation_pool(core, index, i, &line);
        available += line.available;
        held += line.held;
        sold += line.sold;
    }
    HF_JSON_KEY(json, "counts");
    counts_write(json, available, held, sold);
}

static void released_write(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                           uint32_t index, const hf_allocation_view_t *view) {
    uint32_t seat_count;
    const uint32_t *seats = hf_core_allocation_seats(core, index, &seat_count);
    HF_JSON_KEY(json, "released");
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "seats");
    seat_ids_write(json, event, seats, seat_count, core, true);
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    hf_allocation_pool_view_t line;
    for (uint32_t i = 0; i < view->pool_count; i++) {
        hf_core_allocation_pool(core, index, i, &line);
        if (line.release_pending == 0) continue;
        hf_json_key(json, event->pools[line.pool].id);
        hf_json_int(json, line.release_pending);
    }
    hf_json_object_end(json);
    hf_json_object_end(json);
}

static void allocation_render(hf_json_t *json, const hf_core_t *core, uint32_t index) {
    hf_allocation_view_t view;
    hf_core_allocation_view(core, index, &view);
    const hf_event_t *event = hf_core_event_at(core, view.event);
    uint32_t seat_count;
    const uint32_t *seats = hf_core_allocation_seats(core, index, &seat_count);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, view.id);
    HF_JSON_KEY(json, "event");
    hf_json_string(json, event->id);
    HF_JSON_KEY(json, "seats");
    seat_ids_write(json, event, seats, seat_count, core, false);
    pools_write(json, core, event, index, &view);
    total_counts_write(json, core, index, &view);
    released_write(json, core, event, index, &view);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, view.created_at_ms);
    hf_json_object_end(json);
}

static void reply_allocation(hf_request_t *request, int status, uint32_t index) {
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    allocation_render(&json, request->core, index);
}

/* ---- bodies ---- */

/* seats: an array of seat ids (at most HF_ALLOCATION_SEATS_MAX); false after a 400. */
static bool seats_decode(hf_request_t *request, hf_allocation_request_t *allocation) {
    json_t *seats = json_object_get(request->body, "seats");
    if (!seats || json_is_null(seats)) return true;
    if (!json_is_array(seats) || json_array_size(seats) > HF_ALLOCATION_SEATS_MAX) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "seats must be an array of at most 100000 seat ids", "seats");
        return false;
    }
    scratch_t *scratch = scratch_of(request);
    for (size_t i = 0; i < json_array_size(seats); i++) {
        json_t *seat = json_array_get(seats, i);
        if (!json_is_string(seat) || json_string_length(seat) > HF_SEAT_ID_SIZE_MAX) {
            char field[32];
            snprintf(field, sizeof field, "seats[%zu]", i);
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "a seat id must be a string",
                           field);
            return false;
        }
        scratch->seat_ids[i] = json_string_value(seat);
    }
    allocation->seat_ids = scratch->seat_ids;
    allocation->seat_count = (uint32_t)json_array_size(seats);
    return true;
}

/* pools: {"GA": 500}, each a positive integer; false after a 400. */
static bool pools_decode(hf_request_t *request, hf_allocation_request_t *allocation) {
    json_t *pools = json_object_get(request->body, "pools");
    if (!pools || json_is_null(pools)) return true;
    if (!json_is_object(pools) || json_object_size(pools) > HF_HOLD_ITEMS_MAX) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "pools must be an object of pool ids and quantities", "pools");
        return false;
    }
    scratch_t *scratch = scratch_of(request);
    const char *pool_id;
    json_t *quantity;
    json_object_foreach(pools, pool_id, quantity) {
        if (!json_is_integer(quantity) || json_integer_value(quantity) < 1 ||
            json_integer_value(quantity) > HF_POOL_CAPACITY_MAX) {
            char field[HF_ID_SIZE_MAX + 16];
            snprintf(field, sizeof field, "pools.%.64s", pool_id);
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "a pool's quantity must be a positive integer", field);
            return false;
        }
        scratch->pools[allocation->pool_count++] = (hf_pool_request_t){
            pool_id, (uint32_t)json_integer_value(quantity)};
    }
    allocation->pools = scratch->pools;
    return true;
}

/* best_available: {"count", "section", "adjacent" (default true)}; false after a 400. */
static bool best_decode(hf_request_t *request, hf_allocation_request_t *allocation) {
    json_t *best = json_object_get(request->body, "best_available");
    allocation->best_adjacent = true;
    if (!best || json_is_null(best)) return true;
    json_t *count = json_is_object(best) ? json_object_get(best, "count") : NULL;
    json_t *section = json_is_object(best) ? json_object_get(best, "section") : NULL;
    json_t *adjacent = json_is_object(best) ? json_object_get(best, "adjacent") : NULL;
    const char *field = NULL;
    if (!json_is_integer(count) || json_integer_value(count) < 1 ||
        json_integer_value(count) > HF_ALLOCATION_SEATS_MAX)
        field = "best_available.count";
    else if (section && !json_is_null(section) &&
             (!json_is_string(section) || json_string_length(section) > HF_ID_SIZE_MAX))
        field = "best_available.section";
    else if (adjacent && !json_is_boolean(adjacent)) field = "best_available.adjacent";
    if (field) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "best_available is {\"count\": 1 to 100000, \"section\", \"adjacent\"}",
                       field);
        return false;
    }
    allocation->best_count = (uint32_t)json_integer_value(count);
    allocation->best_section = json_is_string(section) ? json_string_value(section) : NULL;
    allocation->best_adjacent = !adjacent || json_is_true(adjacent);
    return true;
}

/* A core refusal, its seats and pool named as for holds (a hold request of the same items). */
static void reply_refusal(hf_request_t *request, hf_error_t error,
                          const hf_allocation_request_t *allocation) {
    hf_hold_request_t items = {.event_id = allocation->event_id,
                               .seat_ids = allocation->seat_ids,
                               .seat_count = allocation->seat_count,
                               .pools = allocation->pools,
                               .pool_count = allocation->pool_count};
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    if (error == HF_ERROR_SEATS_UNAVAILABLE && detail->item_count == 0 && allocation->best_count) {
        hf_json_t json;
        hf_reply_error_begin(request, HF_API_ERROR_SEATS_UNAVAILABLE,
                             "best_available found no such block of free seats", &json);
        HF_JSON_KEY(&json, "seats");
        hf_json_array_begin(&json);
        hf_json_array_end(&json);
        hf_reply_error_end(&json);
        return;
    }
    if (error == HF_ERROR_INVALID_REQUEST && detail->field) {
        hf_fields_source_t source = {HF_FIELDS_HOLD, NULL, &items};
        hf_reply_invalid(request, detail, &source);
        return;
    }
    hf_fields_source_t source = {HF_FIELDS_HOLD, NULL, &items};
    hf_reply_core_error(request, error, detail, &source);
}

/* ---- handlers ---- */

static bool event_or_404(hf_request_t *request, uint32_t *index) {
    if (hf_core_event(request->core, request->params[0], index)) return true;
    hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
    return false;
}

static void handle_allocation_create(hf_request_t *request) {
    uint32_t event_index;
    if (!event_or_404(request, &event_index)) return;
    hf_allocation_request_t allocation = {.event_id = request->params[0]};
    json_t *id = json_object_get(request->body, "id");
    if (!json_is_string(id) || !hf_core_id_valid(json_string_value(id))) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "id must be 1 to 64 of A-Z, a-z, 0-9, _ and .", "id");
        return;
    }
    allocation.allocation_id = json_string_value(id);
    if (!seats_decode(request, &allocation) || !pools_decode(request, &allocation) ||
        !best_decode(request, &allocation))
        return;
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t index;
    hf_error_t error = hf_core_allocation_create(request->core, &allocation, request->now_ms,
                                                 &index, detail);
    if (error) {
        reply_refusal(request, error, &allocation);
        return;
    }
    reply_allocation(request, 201, index);
}

/* The allocation of the path (event, id), or false after its 404. */
static bool allocation_or_404(hf_request_t *request, uint32_t *index) {
    uint32_t event_index;
    if (!event_or_404(request, &event_index)) return false;
    if (hf_core_allocation_find(request->core, event_index, request->params[1], index)) return true;
    hf_reply_error(request, HF_API_ERROR_ALLOCATION_NOT_FOUND, NULL, NULL);
    return false;
}

static void handle_allocation_release(hf_request_t *request) {
    uint32_t index;
    if (!allocation_or_404(request, &index)) return;
    hf_allocation_request_t allocation = {.event_id = request->params[0],
                                          .allocation_id = request->params[1]};
    if (!seats_decode(request, &allocation) || !pools_decode(request, &allocation)) return;
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    hf_error_t error = hf_core_allocation_release(request->core, &allocation, request->now_ms,
                                                  &index, detail);
    if (error) {
        reply_refusal(request, error, &allocation);
        return;
    }
    reply_allocation(request, 200, index);
}

static void handle_allocation_get(hf_request_t *request) {
    uint32_t index;
    if (allocation_or_404(request, &index)) reply_allocation(request, 200, index);
}

/* limit (1 to HF_STAFF_PAGE_MAX, default HF_STAFF_PAGE_DEFAULT) and after (an allocation's
 * id of the event); false after a 400. */
static bool page_read(hf_request_t *request, const uint32_t *list, uint32_t count, uint32_t *first,
                      uint32_t *limit) {
    const char *query = request->http->query;
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *first = 0;
    *limit = HF_STAFF_PAGE_DEFAULT;
    if (hf_query_get(query, "limit", value, sizeof value)) {
        char *end;
        long parsed = strtol(value, &end, 10);
        if (value[0] == '\0' || *end != '\0' || parsed < 1 || parsed > (long)HF_STAFF_PAGE_MAX) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "limit must be an integer from 1 to 1000", "limit");
            return false;
        }
        *limit = (uint32_t)parsed;
    }
    if (!hf_query_get(query, "after", value, sizeof value)) return true;
    for (uint32_t i = 0; i < count; i++) {
        hf_allocation_view_t view;
        hf_core_allocation_view(request->core, list[i], &view);
        if (strcmp(view.id, value) != 0) continue;
        *first = i + 1;
        return true;
    }
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                   "after must be the id of an allocation of this event", "after");
    return false;
}

static void handle_allocation_list(hf_request_t *request) {
    uint32_t event_index, count, first, limit;
    if (!event_or_404(request, &event_index)) return;
    const uint32_t *list = hf_core_event_allocations(request->core, event_index, &count);
    if (!page_read(request, list, count, &first, &limit)) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "allocations");
    hf_json_array_begin(&json);
    uint32_t end = first + limit < count ? first + limit : count;
    for (uint32_t i = first; i < end; i++) allocation_render(&json, request->core, list[i]);
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (end < count) {
        hf_allocation_view_t view;
        hf_core_allocation_view(request->core, list[end - 1], &view);
        hf_json_string(&json, view.id);
    } else hf_json_null(&json);
    hf_json_object_end(&json);
}

#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

/* None is a buyer's route: allocations need the API key (API.md section 16). */
static const hf_route_t routes[] = {
    {"POST", "/v1/events/{}/allocations", handle_allocation_create,
     HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/allocations", handle_allocation_list, 0, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/allocations/{}", handle_allocation_get, 0, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/events/{}/allocations/{}/release", handle_allocation_release, HF_ROUTE_BODY,
     BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_allocations_routes = {routes, sizeof routes / sizeof routes[0],
                                                         sizeof(scratch_t)};
