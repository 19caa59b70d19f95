/* A cancel job's offers on a rebook_to another unit holds (docs/DESIGN.md "Rebooking onto
 * another owner"): the job's unit J feeds its orders to the target's unit T, which places each
 * offer as a remote exchange hold (core/jobs.h), and J records the outcomes. A commit of an
 * offer is the exchange across two owners (exchange.h), J locking the old order for it; an
 * offer that ends uncommitted on T is told to J, which refunds its order.
 *
 * J's side: a timer, every HF_REBOOK_EVERY_MS, sends each job that waits on its target's
 * owner (hf_core_job_remote) its next batch, one batch in flight per job:
 *   POST /v1/cluster/events/{event}/offers  {"job_id", "offer_ttl_ms", "orders": [...]}
 *     T places them in one step, idempotent by the offer's id (a batch sent again after J's
 *     crash answers the same holds), and answers {"offers": [{"order_id", "reservation_id",
 *     "expires_at_ms", "ended"}]}; J applies them in one step (hf_core_job_remote_apply).
 * and, once a second, asks T about each open offer whose expiry passed HF_REBOOK_ASK_AFTER_MS
 * ago (GET /v1/cluster/holds/{hold}/decision): still held (extended) moves its expiry, ended
 * or unknown refunds it. That covers a lost message from T.
 * T's side: the offers route, and the offers that ended uncommitted (hf_core_offers_ended_take)
 * told to J at once, best effort:
 *   POST /v1/cluster/orders/{order}/offer_ended  {"hold"}  (J's route: hf_core_job_offer_ended)
 * The cancel itself asks T for rebook_to's currency and status first (exchange_new.c):
 *   GET /v1/cluster/events/{event}  {"event_id", "currency", "cancelled"}
 *
 * Threads: the loop's. Ownership: the cluster's (its slots, the scratch). */
#ifndef HF_CLUSTER_OFFERS_H
#define HF_CLUSTER_OFFERS_H

#include <stdbool.h>

#include "engine/request.h"

struct hf_cluster;

/* The driver's period: a batch's answer waits at most this long for the next to leave. */
#define HF_REBOOK_EVERY_MS 100
/* Orders one batch carries at most, and the body's size past which it stops growing (a
 * request's body is at most HF_HTTP_BODY_SIZE_MAX). */
#define HF_REBOOK_BATCH_MAX 256
#define HF_REBOOK_BODY_SOFT_MAX (512u * 1024)
/* Jobs with a batch in flight at once; a batch unanswered or refused is sent again after
 * HF_REBOOK_RETRY_MS. */
#define HF_REBOOK_JOBS_MAX 16
#define HF_REBOOK_RETRY_MS 1000
/* An open offer is asked about once its expiry passed this long ago (T's sweep runs first),
 * at most HF_REBOOK_ASKING_MAX at once, every HF_REBOOK_ASK_EVERY_MS. */
#define HF_REBOOK_ASK_AFTER_MS 2000
#define HF_REBOOK_ASK_EVERY_MS 1000
#define HF_REBOOK_ASKING_MAX 64
/* Ended offers told to their job's unit at once (the rest wait in the core's queue). */
#define HF_REBOOK_TELLING_MAX 32

/* The internal routes (handlers.c's table). */
void hf_cluster_offers_place(hf_request_t *request);
void hf_cluster_offer_ended(hf_request_t *request);
void hf_cluster_event_describe(hf_request_t *request);

/* The routes' scratch, and the driver's timer when driven (with several nodes: on one, every
 * rebook_to is in the core), started and stopped with the exchange's resolution (cluster.c). */
void hf_cluster_offers_start(struct hf_cluster *cluster, bool driven);
void hf_cluster_offers_stop(struct hf_cluster *cluster);

#endif
