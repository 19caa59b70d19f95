/* The handlers of holds, their commit into orders, orders and optimistic bookings (API.md
 * sections 3 and 4), and their routes. The handlers are private to their file: the
 * dispatcher (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_HOLDS_H
#define HF_API_HOLDS_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_holds_routes;

/* Its families of GET /metrics (metrics.h): active holds, from the core's running count. */
void hf_handlers_holds_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
