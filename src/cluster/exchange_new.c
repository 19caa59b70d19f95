/* The new unit's side of the exchange across two owners (exchange.h): the commits in flight,
 * which the decision answers in_progress about. */
#include "cluster/exchange.h"

#include <string.h>

#include "cluster/internal.h"

bool hf_cluster_exchange_in_flight(const hf_cluster_t *cluster, const char *hold_id) {
    (void)cluster;
    (void)hold_id;
    return false;
}
