/* The handlers of calendars (API.md section 12) and their routes: creation, the summary,
 * resources, closing and reopening sales, holds and bookings, the staff's lists
 * (calendars.c), and the reads of availability, free resources, slots and the live stream
 * (calendar_reads.c). The life of a calendar hold after its creation goes through the
 * ordinary hold routes (holds.c), which render it by its target.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call. */
#ifndef HF_API_CALENDARS_H
#define HF_API_CALENDARS_H

#include "engine/metrics.h"
#include "engine/route.h"

#include "api/calendar_decode.h"

extern const hf_route_table_t hf_handlers_calendars_routes;

/* A page of slots asked for (calendar_reads.c). */
typedef struct hf_calendar_slots_query {
    uint32_t named[HF_CALENDAR_QUERY_RESOURCES_MAX]; /* the resources named, in order */
    uint32_t named_count;                            /* 0: all of them */
    int64_t length, quantity, limit, after_resource;
    int32_t after_start, from, to;
} hf_calendar_slots_query_t;

/* The domain's own context (route.h: hf_route_table_t.scratch_size): what its handlers share,
 * one request at a time, too large for the stack. */
typedef struct hf_calendar_scratch {
    hf_error_detail_t detail; /* a refusal's detail (items is large) */
    hf_calendar_item_request_t items[HF_CALENDAR_HOLD_ITEMS_MAX];
    hf_calendar_conflict_t conflicts[HF_CALENDAR_CONFLICTS_MAX];
    hf_calendar_fault_t fault;
    hf_calendar_slots_query_t slots_query;
    hf_calendar_slot_t slots[HF_CALENDAR_SLOTS_PAGE_MAX];
    hf_calendar_segment_t segments[HF_CALENDAR_SEGMENTS_CHUNK];
} hf_calendar_scratch_t;

/* The reads (calendar_reads.c), which the table of calendars.c routes to. */
void hf_calendar_handle_availability(hf_request_t *request);
void hf_calendar_handle_free(hf_request_t *request);
void hf_calendar_handle_slots(hf_request_t *request);
void hf_calendar_handle_stream(hf_request_t *request);

/* The calendar named by the first path parameter (its index in *index when not NULL), or
 * NULL after answering 404 calendar_not_found. */
const hf_calendar_t *hf_calendar_or_404(hf_request_t *request, uint32_t *index);

/* Its families of GET /metrics (metrics.h): calendars, live uses, calendar holds held. */
void hf_handlers_calendars_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
