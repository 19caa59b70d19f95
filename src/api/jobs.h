/* The handlers of cancel jobs (API.md section 13, "Cancelling an event"): the cancel of an
 * event, its job and the job's offers, and their routes; and the jobs' metrics. Every route
 * needs the API key (API.md section 16). The handlers are private to their file: the
 * dispatcher (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call. */
#ifndef HF_API_JOBS_H
#define HF_API_JOBS_H

#include "engine/context.h"
#include "engine/route.h"
#include "lib/buffer.h"

extern const hf_route_table_t hf_handlers_jobs_routes;

/* holdfast_jobs{status="running"|"done"}. */
void hf_handlers_jobs_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
