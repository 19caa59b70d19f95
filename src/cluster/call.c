/* Internal calls (call.h): addressed to a unit's owner, or to this node, which routes them. */
#include "cluster/call.h"

#include <string.h>

#include "cluster/internal.h"

bool hf_cluster_call(hf_cluster_t *cluster, const char *unit, const char *method, const char *path,
                     const char *body, hf_cluster_call_fn done, void *state) {
    if (!cluster || cluster->stopped) return false;
    const char *address = unit && unit[0] ? hf_cluster_owner_address(cluster, unit) : NULL;
    /* No live owner known (or this node): this node's routing finds it, or takes it over. */
    if (!address) address = cluster->address;
    hf_forward_call_t call = {method, path, body, body ? strlen(body) : 0,
                              cluster->context->api_key};
    return hf_forward_call(cluster->forward, address, &call, done, state);
}
