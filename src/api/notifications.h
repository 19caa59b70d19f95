/* The handlers of outbound notifications (API.md section 15): the staff's listing, a retry by
 * hand, and their families of GET /metrics. The outbox itself is the engine's
 * (engine/outbox.h). */
#ifndef HF_API_NOTIFICATIONS_H
#define HF_API_NOTIFICATIONS_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_notifications_routes;

/* holdfast_notifications{status}, holdfast_notify_attempts_total{result},
 * holdfast_notify_dropped_total. */
void hf_handlers_notifications_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
