/* The state of the payments' domain (payment.c): the deliveries of payment webhooks kept for
 * deduplication, the refunds, and the counts GET /metrics reads. Private to src/core, held by
 * value in struct hf_core (internal.h) as core->payments; see orders.h for the shape every
 * domain's state has. */
#ifndef HF_CORE_PAYMENTS_H
#define HF_CORE_PAYMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/map.h"

struct hf_refund;

/* A payment delivery kept for deduplication on (payment_intent_id, type) (payment.c), with
 * the outcome a repeat answers. */
typedef struct delivery {
    char *payment_intent_id; /* owned; NULL once pruned */
    uint32_t hash;           /* of the intent id and the type */
    uint8_t type, result, reason;
    bool late;
    uint32_t order, refund; /* indexes, as the result has them */
    int64_t at_ms;          /* hf_time_ms_t */
} delivery_t;

/* HF_PAYMENT_COUNTS of core.h (payment.c asserts they agree). */
#define PAYMENT_COUNTS 4

typedef struct payments {
    /* Deliveries in the order they arrived: those before delivery_first are pruned (older
     * than HF_WEBHOOK_DEDUP_KEEP_MS), and the array is compacted when it is full. */
    delivery_t *deliveries;
    uint32_t delivery_first, delivery_count, delivery_capacity;
    hf_index_map_t delivery_ids; /* hash of (intent id, type) -> delivery index */
    struct hf_refund *refunds;   /* oldest first, never forgotten */
    uint32_t refund_count, refund_capacity;
    hf_index_map_t refund_ids; /* a refund's id -> its index */
    /* Kept as they change, so GET /metrics reads two numbers instead of every refund. */
    uint32_t refunds_completed;
    /* Deliveries applied by this core, by hf_payment_result_t, and repeats last
     * (hf_core_payment_counts). */
    uint64_t counts[PAYMENT_COUNTS];
} payments_t;

#endif
