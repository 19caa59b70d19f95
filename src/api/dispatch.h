/* Dispatch (API.md section 8): PUT and GET /v1/fleets/{fleet}/drivers/{driver}, POST
 * /v1/fleets/{fleet}/rides, GET /v1/rides/{ride} and POST /v1/rides/{ride}/accept, /decline
 * and /cancel. The dispatcher reaches them only through this table.
 *
 * A driver's PUT is soft (core/dispatch/dispatch.h): answered without waiting for the store,
 * unless it made an offer, which it then waits for like any change. Every other change waits
 * for its batch.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_DISPATCH_H
#define HF_API_DISPATCH_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_dispatch_routes;

/* Its families of GET /metrics (metrics.h): holdfast_rides{status},
 * holdfast_offers_total{outcome} and holdfast_drivers{status}, read from the core's running
 * counts; none until dispatch is in use (a fleet exists). */
void hf_handlers_dispatch_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
