/* The payment webhook and refunds (API.md section 7): POST /v1/webhooks/payments, signed
 * instead of keyed, GET /v1/refunds and POST /v1/refunds/{id}/complete. The dispatcher
 * reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_ENGINE_HANDLERS_PAYMENTS_H
#define HF_ENGINE_HANDLERS_PAYMENTS_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_payments_routes;

#endif
