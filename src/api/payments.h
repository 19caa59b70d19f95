/* The payment webhook and refunds (API.md section 7): POST /v1/webhooks/payments, signed
 * instead of keyed, GET /v1/refunds and POST /v1/refunds/{id}/complete. The dispatcher
 * reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_PAYMENTS_H
#define HF_API_PAYMENTS_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_payments_routes;

/* Its families of GET /metrics (metrics.h): webhook deliveries by result (the core's counts
 * of what deliveries decided, and the route's refusals) and refunds by status. */
void hf_handlers_payments_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
