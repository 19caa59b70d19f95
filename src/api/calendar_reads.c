/* The reads of a calendar (calendars.h): GET /availability, /free and /slots, each answered
 * from the core's span indexes (calendars.h in core/), never by a scan of the uses. Every
 * query value is checked before the core is asked, with a 400 naming the parameter. */
#include "api/calendars.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/calendar_decode.h"
#include "api/calendar_render.h"
#include "api/query.h"
#include "engine/streams.h"

#define MINUTES_PER_DAY 1440

/* A value of the query as long as any span's text or id may be. */
#define VALUE_SIZE (HF_ID_SIZE_MAX + 2)

/* A window [from, to) of the query, in the calendar's steps. */
typedef struct window {
    int32_t from, to;
} window_t;

static hf_calendar_scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

static bool reply_bad(hf_request_t *request, const char *field, const char *message) {
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, field);
    return false;
}

/* The query's step named name (required); false after answering 400. */
static bool query_step(hf_request_t *request, const hf_calendar_t *calendar, const char *name,
                       int32_t *step) {
    char value[VALUE_SIZE];
    hf_calendar_fault_t fault = {{0}, {0}};
    if (!hf_query_get(request->http->query, name, value, sizeof value)) {
        snprintf(fault.message, sizeof fault.message, "%s is required", name);
        return reply_bad(request, name, fault.message);
    }
    if (!hf_calendar_decode_step(value, strlen(value), calendar->definition.unit, name, step,
                                 &fault))
        return reply_bad(request, name, fault.message);
    return true;
}

/* from and to of the query, to after from and at most days_max days later (night_max nights
 * for a night calendar); false after answering 400. */
static bool query_window(hf_request_t *request, const hf_calendar_t *calendar, uint32_t night_max,
                         uint32_t minute_days_max, window_t *window) {
    if (!query_step(request, calendar, "from", &window->from) ||
        !query_step(request, calendar, "to", &window->to))
        return false;
    bool night = calendar->definition.unit == HF_CALENDAR_NIGHT;
    int64_t longest = night ? night_max : (int64_t)minute_days_max * MINUTES_PER_DAY;
    char message[128];
    snprintf(message, sizeof message, "to must be after from, by at most %u %s",
             night ? night_max : minute_days_max, night ? "nights" : "days");
    if (window->to <= window->from || (int64_t)window->to - window->from > longest)
        return reply_bad(request, "to", message);
    return true;
}

/* An integer of the query from minimum to maximum; *value untouched when absent. */
static bool query_integer(hf_request_t *request, const char *name, int64_t minimum, int64_t maximum,
                          int64_t *value) {
    const char *query = request->http->query;
    if (!hf_query_has(query, name)) return true;
    char text[32], *end = NULL;
    long long parsed = 0;
    if (hf_query_get(query, name, text, sizeof text) && text[0] >= '0' && text[0] <= '9')
        parsed = strtoll(text, &end, 10);
    if (end && *end == '\0' && parsed >= minimum && parsed <= maximum) {
        *value = parsed;
        return true;
    }
    char message[128];
    snprintf(message, sizeof message, "%s must be an integer from %lld to %lld", name,
             (long long)minimum, (long long)maximum);
    return reply_bad(request, name, message);
}

/* The resource named by the query's resource (required); -1 after answering 400 or 404. */
static int32_t query_resource(hf_request_t *request, const hf_calendar_t *calendar) {
    char value[VALUE_SIZE];
    if (!hf_query_get(request->http->query, "resource", value, sizeof value)) {
        reply_bad(request, "resource", "resource is required");
        return -1;
    }
    int32_t resource = hf_core_resource_find(calendar, value);
    if (resource < 0)
        hf_reply_error_naming(request, HF_API_ERROR_RESOURCE_NOT_FOUND, "resource", value);
    return resource;
}

/* Every resource=ID of the query, in order, into resources; *count 0 when none is named.
 * false after answering 404 for an unknown one or 400 for too many. */
static bool query_resources(hf_request_t *request, const hf_calendar_t *calendar,
                            uint32_t *resources, uint32_t *count) {
    *count = 0;
    const char *at = request->http->query;
    while (at && *at) {
        const char *end = strchr(at, '&');
        size_t length = end ? (size_t)(end - at) : strlen(at);
        if (length > 9 && memcmp(at, "resource=", 9) == 0) {
            char value[VALUE_SIZE];
            if (!hf_query_percent_decode(at + 9, length - 9, value, sizeof value, true))
                value[0] = '\0';
            int32_t resource = hf_core_resource_find(calendar, value);
            if (resource < 0) {
                hf_reply_error_naming(request, HF_API_ERROR_RESOURCE_NOT_FOUND, "resource", value);
                return false;
            }
            if (*count == HF_CALENDAR_QUERY_RESOURCES_MAX)
                return reply_bad(request, "resource", "at most 1000 resources may be named");
            resources[(*count)++] = (uint32_t)resource;
        }
        at = end ? end + 1 : NULL;
    }
    return true;
}

/* ---- GET /availability ---- */

static void segment_write(hf_json_t *json, uint8_t unit, const hf_calendar_segment_t *segment) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "from");
    hf_calendar_step_json(json, unit, segment->from);
    HF_JSON_KEY(json, "to");
    hf_calendar_step_json(json, unit, segment->to);
    HF_JSON_KEY(json, "available");
    hf_json_int(json, segment->available);
    hf_json_object_end(json);
}

/* The segments over the window, asked of the core a chunk at a time; a segment is written
 * once the next differs, so neighbours with equal counts stay merged across chunks. */
static void segments_write(hf_json_t *json, const hf_calendar_t *calendar, uint32_t resource,
                           window_t window, hf_calendar_segment_t *chunk) {
    hf_calendar_segment_t pending = {0, 0, -1};
    bool more = true;
    while (more && window.from < window.to) {
        more = false;
        uint32_t count = hf_core_resource_segments(calendar, resource, window.from, window.to,
                                                   chunk, HF_CALENDAR_SEGMENTS_CHUNK, &more);
        if (count == 0) break;
        for (uint32_t i = 0; i < count; i++) {
            if (pending.available == chunk[i].available && pending.to == chunk[i].from) {
                pending.to = chunk[i].to;
                continue;
            }
            if (pending.available >= 0) segment_write(json, calendar->definition.unit, &pending);
            pending = chunk[i];
        }
        window.from = chunk[count - 1].to;
    }
    if (pending.available >= 0) segment_write(json, calendar->definition.unit, &pending);
}

void hf_calendar_handle_availability(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (!calendar) return;
    int32_t resource = query_resource(request, calendar);
    window_t window;
    if (resource < 0 || !query_window(request, calendar, HF_CALENDAR_AVAILABILITY_NIGHTS_MAX,
                                      HF_CALENDAR_AVAILABILITY_MINUTE_DAYS_MAX, &window))
        return;
    const hf_resource_definition_t *definition = &calendar->definition.resources[resource];
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "resource");
    hf_json_string(&json, definition->id);
    HF_JSON_KEY(&json, "capacity");
    hf_json_int(&json, definition->capacity);
    HF_JSON_KEY(&json, "segments");
    hf_json_array_begin(&json);
    segments_write(&json, calendar, (uint32_t)resource, window, scratch_of(request)->segments);
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

/* ---- GET /free ---- */

/* What a use of the span costs (API.md: price per night, or per granularity step). */
static int64_t span_total(const hf_calendar_t *calendar, const hf_resource_definition_t *resource,
                          window_t window, int64_t quantity) {
    int64_t steps = (int64_t)window.to - window.from;
    if (calendar->definition.unit == HF_CALENDAR_MINUTE)
        steps /= calendar->definition.granularity_min;
    return resource->price * steps * quantity;
}

static void free_write(hf_json_t *json, const hf_core_t *core, const hf_calendar_t *calendar,
                       uint32_t resource, window_t window, int64_t quantity, int64_t now) {
    int64_t available = 0;
    if (!hf_core_resource_fits(core, calendar, resource, window.from, window.to, (uint32_t)quantity,
                               now, &available))
        return;
    const hf_resource_definition_t *definition = &calendar->definition.resources[resource];
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "resource");
    hf_json_string(json, definition->id);
    HF_JSON_KEY(json, "available");
    hf_json_int(json, available);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, span_total(calendar, definition, window, quantity));
    hf_json_object_end(json);
}

void hf_calendar_handle_free(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (!calendar) return;
    uint32_t *named = scratch_of(request)->slots_query.named, named_count;
    int64_t quantity = 1;
    window_t window;
    if (!query_window(request, calendar, HF_CALENDAR_HORIZON_DAYS_MAX, HF_CALENDAR_HORIZON_DAYS_MAX,
                      &window) ||
        !query_integer(request, "quantity", 1, HF_RESOURCE_CAPACITY_MAX, &quantity) ||
        !query_resources(request, calendar, named, &named_count))
        return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "from");
    hf_calendar_step_json(&json, calendar->definition.unit, window.from);
    HF_JSON_KEY(&json, "to");
    hf_calendar_step_json(&json, calendar->definition.unit, window.to);
    HF_JSON_KEY(&json, "resources");
    hf_json_array_begin(&json);
    uint32_t count = named_count ? named_count : calendar->definition.resource_count;
    for (uint32_t i = 0; i < count; i++)
        free_write(&json, request->core, calendar, named_count ? named[i] : i, window, quantity,
                   request->now_ms);
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

/* ---- GET /slots ---- */

/* The cursor of a page of slots: "RESOURCE_INDEX.START" as this server writes it. */
static bool cursor_parse(const char *text, const hf_calendar_t *calendar, int64_t *resource,
                         int32_t *start) {
    char *end;
    long long index = strtoll(text, &end, 10);
    if (end == text || *end != '.' || index < 0 || index >= calendar->definition.resource_count)
        return false;
    const char *second = end + 1;
    long long step = strtoll(second, &end, 10);
    if (end == second || *end != '\0' || step < 0 || step > INT32_MAX) return false;
    *resource = index;
    *start = (int32_t)step;
    return true;
}

typedef hf_calendar_slots_query_t slots_query_t;

static bool slots_query_read(hf_request_t *request, const hf_calendar_t *calendar,
                             slots_query_t *query) {
    window_t window;
    query->quantity = 1;
    query->limit = HF_CALENDAR_SLOTS_PAGE_DEFAULT;
    query->length = 0;
    query->after_resource = -1;
    query->after_start = 0;
    if (!hf_query_has(request->http->query, "length"))
        return reply_bad(request, "length", "length is required (nights, or minutes)");
    if (!query_resources(request, calendar, query->named, &query->named_count) ||
        !query_integer(request, "length", 1, INT32_MAX, &query->length) ||
        !query_integer(request, "quantity", 1, HF_RESOURCE_CAPACITY_MAX, &query->quantity) ||
        !query_integer(request, "limit", 1, HF_CALENDAR_SLOTS_PAGE_MAX, &query->limit) ||
        !query_window(request, calendar, HF_CALENDAR_SLOTS_WINDOW_NIGHTS_MAX,
                      HF_CALENDAR_SLOTS_WINDOW_MINUTE_DAYS_MAX, &window))
        return false;
    query->from = window.from;
    query->to = window.to;
    char value[VALUE_SIZE];
    if (hf_query_has(request->http->query, "after") &&
        (!hf_query_get(request->http->query, "after", value, sizeof value) ||
         !cursor_parse(value, calendar, &query->after_resource, &query->after_start)))
        return reply_bad(request, "after", "after must be the next of an earlier page");
    return true;
}

static void slots_write(hf_json_t *json, const hf_calendar_t *calendar,
                        const hf_calendar_slot_t *slots, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "resource");
        hf_json_string(json, calendar->definition.resources[slots[i].resource].id);
        HF_JSON_KEY(json, "from");
        hf_calendar_step_json(json, calendar->definition.unit, slots[i].from);
        HF_JSON_KEY(json, "to");
        hf_calendar_step_json(json, calendar->definition.unit, slots[i].to);
        hf_json_object_end(json);
    }
}

void hf_calendar_handle_slots(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (!calendar) return;
    slots_query_t *query = &scratch_of(request)->slots_query;
    hf_calendar_slot_t *slots = scratch_of(request)->slots;
    if (!slots_query_read(request, calendar, query)) return;
    bool more = false;
    uint32_t count = hf_core_resource_slots(
        request->core, calendar, query->named_count ? query->named : NULL, query->named_count,
        (int32_t)query->length, (uint32_t)query->quantity, query->from, query->to,
        query->after_resource, query->after_start, request->now_ms, slots, (uint32_t)query->limit,
        &more);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "slots");
    hf_json_array_begin(&json);
    slots_write(&json, calendar, slots, count);
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (more && count > 0) {
        char cursor[48];
        snprintf(cursor, sizeof cursor, "%" PRIu32 ".%" PRId32, slots[count - 1].resource,
                 slots[count - 1].from);
        hf_json_string(&json, cursor);
    } else {
        hf_json_null(&json);
    }
    hf_json_object_end(&json);
}

/* ---- GET /stream ---- */

static void calendar_snapshot(hf_json_t *json, const void *calendar, const hf_core_t *core) {
    (void)core;
    hf_render_calendar(json, calendar);
}

/* As an event's stream (engine/streams.h's hf_streams_open): a snapshot (the summary) or the
 * replay after Last-Event-ID, then a change per use taken or given back. */
void hf_calendar_handle_stream(hf_request_t *request) {
    uint32_t index;
    const hf_calendar_t *calendar = hf_calendar_or_404(request, &index);
    if (!calendar) return;
    hf_streams_open(request, HF_STREAM_CALENDAR_BASE + index, calendar_snapshot, calendar);
}
