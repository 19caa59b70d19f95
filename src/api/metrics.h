/* GET /metrics (API.md section 9): Prometheus's text format, served without the API key. Its
 * handler writes the generic families (HTTP answers, connections, the store, the build) and
 * then each domain's, through the list of hf_metrics_render_fn at the end of
 * metrics.c (metrics.h says how a domain adds its own).
 *
 * Ownership: the table is static and constant. */
#ifndef HF_API_METRICS_H
#define HF_API_METRICS_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_metrics_routes;

#endif
