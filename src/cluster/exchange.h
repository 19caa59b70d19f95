/* The exchange across two owners (docs/DESIGN.md "Exchanges across two owners"): a presumed-
 * abort two-phase commit in which the new unit's owner N decides and the old unit's owner O
 * follows, every message addressed to a unit (call.h).
 *
 * O's side (exchange_old.c): the internal routes that read, lock and finish an old order
 *   GET  /v1/cluster/orders/{order}            the order as N needs it for the hold
 *   POST /v1/cluster/orders/{order}/lock       {"hold", "unit"}: locked in one durable step
 *   POST /v1/cluster/orders/{order}/exchange   {"hold", "order"}: exchanged, the lock ended
 * and the resolution: once a second, each lock older than HF_EXCHANGE_RESOLVE_AFTER_MS asks
 * the hold's unit for its decision and follows it (finish, unlock, or ask again).
 * N's side: GET /v1/cluster/holds/{hold}/decision, committed / in_progress / not_committed,
 * in_progress while a commit of that hold is in flight (hf_cluster_exchange_in_flight).
 *
 * The routes take the API key (no HF_ROUTE_PUBLIC, no HF_ROUTE_BUYER): every node of a
 * cluster is given it, and a call carries it.
 *
 * Threads: the loop's. Ownership: the cluster owns the resolution's state. */
#ifndef HF_CLUSTER_EXCHANGE_H
#define HF_CLUSTER_EXCHANGE_H

#include <stdbool.h>

#include "engine/request.h"

struct hf_cluster;

/* A lock younger than this is its exchange's round trip, not yet a case to resolve. */
#define HF_EXCHANGE_RESOLVE_AFTER_MS 2000
/* The resolution's period: each stale lock is asked about once per period at most. */
#define HF_EXCHANGE_RESOLVE_EVERY_MS 1000
/* Decisions asked at once: the rest wait for the next period. */
#define HF_EXCHANGE_RESOLVING_MAX 64

void hf_cluster_exchange_order_get(hf_request_t *request);
void hf_cluster_exchange_order_lock(hf_request_t *request);
void hf_cluster_exchange_order_finish(hf_request_t *request);
void hf_cluster_exchange_decision(hf_request_t *request);

/* The resolution's timer: started with the cluster's (hf_cluster_start), closed at its stop. */
void hf_cluster_exchange_start(struct hf_cluster *cluster);
void hf_cluster_exchange_stop(struct hf_cluster *cluster);

/* Whether a commit of hold_id is between its lock and its decision's durable batch here. */
bool hf_cluster_exchange_in_flight(const struct hf_cluster *cluster, const char *hold_id);

#endif
