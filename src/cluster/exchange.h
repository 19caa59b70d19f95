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
/* Requests parked on an internal call of the exchange at once (a hold reading its old order,
 * a commit locking it, then waiting for its decision and finish): more are served as they are
 * (a hold: 404 order_not_found; a commit: 409 order_not_active, nothing changed). */
#define HF_EXCHANGE_PENDING_MAX 256

void hf_cluster_exchange_order_get(hf_request_t *request);
void hf_cluster_exchange_order_lock(hf_request_t *request);
void hf_cluster_exchange_order_finish(hf_request_t *request);
void hf_cluster_exchange_decision(hf_request_t *request);

/* The resolution's timer: started with the cluster's (hf_cluster_start), closed at its stop. */
void hf_cluster_exchange_start(struct hf_cluster *cluster);
void hf_cluster_exchange_stop(struct hf_cluster *cluster);

/* The crash tests' fault points (tests/blackbox/test_cluster_exchange.py): the process kills
 * itself (SIGKILL, as kill -9) at the point HOLDFAST_FAULT_EXCHANGE names, read once:
 *   o_lock_applied   O, its lock applied, before its batch is durable
 *   o_lock_durable   O, its lock durable, before its answer leaves (held back till then)
 *   n_lock_answered  N, the lock answered, before its decision
 *   n_decided        N, its decision durable, before it asks for the finish
 *   o_finish         O, the finish asked for, before it applies it
 * or stops itself (SIGSTOP, as a long pause: its leases lapse, the test sends SIGCONT) at
 * POINT_stop, e.g. n_lock_answered_stop: N loses its unit between the lock and the decision.
 * Without the variable (every run but those tests) nothing happens. */
void hf_cluster_exchange_fault(const char *point);
/* Whether the fault point is point (the one that must wait: o_lock_durable). */
bool hf_cluster_exchange_fault_is(const char *point);

/* Whether a commit of hold_id is between its lock and its decision's durable batch here. */
bool hf_cluster_exchange_in_flight(const struct hf_cluster *cluster, const char *hold_id);

/* The routing's hook (routing.c), for a route flagged HF_ROUTE_EXCHANGE served here: true when
 * the request was parked on a call (a hold of another unit's order, a remote exchange hold's
 * commit); false to serve it now. */
bool hf_cluster_exchange_route(struct hf_cluster *cluster, hf_request_t *request);

/* For a handler that must have the old order of the held remote exchange hold hold_id locked
 * before it decides (the payment webhook): parks request on that lock as a commit is parked;
 * the handler runs again once the old order's owner answered, reading the lock
 * (hf_cluster_exchange_locked) or its refusal (hf_cluster_exchange_refused); a commit it makes
 * then is the decision, finished as a commit's. False when it cannot park (not such a hold,
 * no room): the caller answers. */
bool hf_cluster_exchange_lock_park(struct hf_cluster *cluster, hf_request_t *request,
                                   const char *hold_id);
/* During that pass: whether the old order's owner refused the lock (the order not confirmed,
 * locked by another hold, or unknown). */
bool hf_cluster_exchange_refused(const struct hf_cluster *cluster, const char *hold_id);

/* For the handlers, during the pass that follows the call (false at any other time): the old
 * order as its owner read it for a hold (exchange_for order_id), or as it locked it for the
 * commit of hold_id. Pointers borrowed for the pass. */
struct hf_remote_order;
bool hf_cluster_exchange_read(const struct hf_cluster *cluster, const char *order_id,
                              struct hf_remote_order *remote);
bool hf_cluster_exchange_locked(const struct hf_cluster *cluster, const char *hold_id,
                                struct hf_remote_order *remote);
/* A cancel's rebook_to another unit holds, as its owner described it (offers.h), during the
 * pass that follows that call: its currency (borrowed for the pass) and whether it is
 * cancelled. false at any other time, or when no unit has it. */
bool hf_cluster_exchange_event(const struct hf_cluster *cluster, const char *event_id,
                               const char **currency, bool *cancelled);

#endif
