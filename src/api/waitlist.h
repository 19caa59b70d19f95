/* The waitlist (API.md section 14): POST /v1/events/{event}/waitlist (join),
 * GET and DELETE /v1/events/{event}/waitlist/{id}, and the staff's
 * GET /v1/events/{event}/waitlist. The dispatcher reaches them only through this header.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call. */
#ifndef HF_API_WAITLIST_H
#define HF_API_WAITLIST_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_waitlist_routes;

/* Its family of GET /metrics (metrics.h): holdfast_waitlist{status}, once an event has had a
 * waitlist. */
void hf_handlers_waitlist_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
