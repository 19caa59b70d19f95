/* The handlers of health, events, seats and an event's live stream (API.md sections 2, 5
 * and 9), and their routes. The handlers are private to their file: the dispatcher
 * (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_EVENTS_H
#define HF_API_EVENTS_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_events_routes;

/* Its families of GET /metrics (metrics.h): events, seats and pool units by status, summed
 * from each event's running counts (no seat is read). */
void hf_handlers_events_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
