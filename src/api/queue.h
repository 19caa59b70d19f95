/* The waiting room (API.md section 6): POST /v1/events/{event}/queue (join),
 * GET /v1/events/{event}/queue/{ticket} (poll) and POST .../{ticket}/complete, and the
 * admission check the dispatcher makes once for the routes flagged HF_ROUTE_ADMISSION (a hold,
 * a booking). The dispatcher reaches them only through this header.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_QUEUE_H
#define HF_API_QUEUE_H

#include <stdbool.h>

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_queue_routes;

/* Its families of GET /metrics (metrics.h): holdfast_queue_waiting{event} and
 * holdfast_queue_admissions_total{event}, for the events that have a room (none: no family). */
void hf_handlers_queue_metrics_render(const hf_context_t *context, hf_buffer_t *out);

/* The admission check of a request on the event named by its first path parameter: true
 * when the event has no room (a token is then ignored), or when the admission token (the
 * body's admission_token, else the Admission-Token header) is valid for the body's user_id
 * and the event; false after answering 403 admission_required, admission_invalid or
 * admission_expired. An unknown event or a body without a string user_id passes: the
 * handler answers its own 404 or 400. */
bool hf_handlers_queue_admitted(hf_request_t *request);

#endif
