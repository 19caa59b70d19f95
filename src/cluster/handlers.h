/* GET /v1/cluster (API.md section 11) and the cluster's metrics (API.md section 9:
 * holdfast_units_owned, holdfast_forwarded_total); the state is cluster.h's. */
#ifndef HF_CLUSTER_HANDLERS_H
#define HF_CLUSTER_HANDLERS_H

#include "engine/metrics.h"
#include "engine/route.h"

extern const hf_route_table_t hf_handlers_cluster_routes;

void hf_handlers_cluster_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
