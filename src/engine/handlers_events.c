/* Handlers of health, events and seats (API.md sections 2 and 9). */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

void hf_handle_health(hf_request_t *request) {
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "status"); hf_json_string(&json, "ok");
    hf_json_object_end(&json);
}

void hf_handle_event_create(hf_request_t *request) {
    hf_event_definition_t definition;
    const char *field, *message;
    if (!hf_definition_decode(request->body, &definition, &field, &message)) {
        char text[256];
        snprintf(text, sizeof text, "%s: %s", field, message);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, text, field);
        hf_definition_free(&definition);
        return;
    }
    hf_error_detail_t detail = {0};
    hf_core_t *core = request->engine->core;
    hf_error_t error = hf_core_event_create(core, &definition, request->now_ms, &detail);
    hf_definition_free(&definition);
    if (error) {
        hf_reply_core_error(request, error, &detail, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 201, &json);
    hf_render_event(&json, core, hf_core_event(core, definition.id, NULL));
}

void hf_handle_event_list(hf_request_t *request) {
    hf_core_t *core = request->engine->core;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "events");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < hf_core_event_count(core); i++)
        hf_render_event(&json, core, hf_core_event_at(core, i));
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

/* The event named by the first path parameter, or NULL after answering 404. */
static const hf_event_t *event_or_404(hf_request_t *request) {
    const hf_event_t *event = hf_core_event(request->engine->core, request->params[0], NULL);
    if (!event) hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
    return event;
}

void hf_handle_event_get(hf_request_t *request) {
    const hf_event_t *event = event_or_404(request);
    if (!event) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_event(&json, request->engine->core, event);
}

void hf_handle_seat_get(hf_request_t *request) {
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
    hf_render_seat(&json, event, seat);
}

typedef struct seat_filter {
    uint32_t start, end;         /* seat range: one section or the whole event */
    int status;                  /* -1: any */
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
static bool seat_filter_read(hf_request_t *request, const hf_event_t *event, seat_filter_t *filter) {
    char value[HF_SEAT_ID_SIZE_MAX + 1];
    const char *query = request->http->query;
    *filter = (seat_filter_t){0, event->seat_count, -1, HF_SEATS_PAGE_DEFAULT};
    if (hf_query_get(query, "section", value, sizeof value)) {
        uint32_t s = 0;
        while (s < event->section_count && strcmp(event->sections[s].id, value) != 0) s++;
        if (s == event->section_count) {
            hf_reply_error(request, HF_API_ERROR_SECTION_NOT_FOUND, NULL, NULL);
            return false;
        }
        filter->start = event->sections[s].first_seat;
        filter->end = filter->start + event->sections[s].seat_count;
    }
    uint8_t status;
    if (hf_query_get(query, "status", value, sizeof value)) {
        if (!hf_seat_status_parse(value, &status)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "status must be available, held or sold",
                           "status");
            return false;
        }
        filter->status = status;
    }
    if (hf_query_get(query, "limit", value, sizeof value) && !parse_limit(value, &filter->limit)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "limit must be an integer from 1 to 10000", "limit");
        return false;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        uint32_t seat;
        if (!hf_core_seat_find(event, value, &seat)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "after must be a seat id of this event", "after");
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

void hf_handle_seat_list(hf_request_t *request) {
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
        hf_render_seat(&json, event, seat);
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
