/* Mutation records: what the core tells the store after each change. A record's pointers are
 * borrowed and valid only during the sink call: a sink that keeps a record copies it
 * (hf_batch_append in store/batch.h does). */
#ifndef HF_MUTATION_H
#define HF_MUTATION_H

#include <stdint.h>

typedef enum hf_mutation_type {
    HF_MUTATION_EVENT_CREATE = 1, /* event_id, text = the definition as JSON, at_ms */
    HF_MUTATION_SEAT,             /* event_id, seat_id, status, version */
    HF_MUTATION_HOLD_CREATE,      /* hold_id, event_id, user_id, text = items JSON, total,
                                     created_at_ms = at_ms, expires_at_ms, status */
    HF_MUTATION_HOLD_UPDATE,      /* hold_id, status, expires_at_ms, order_id (may be NULL) */
    HF_MUTATION_ORDER_CREATE,     /* order_id, event_id, user_id, hold_id (may be NULL),
                                     text = items JSON, total, currency, payment_ref, at_ms */
    HF_MUTATION_ORDER_ITEM,       /* order_id, event_id, seat_id or pool_id, quantity */
    HF_MUTATION_ORDER_UPDATE,     /* order_id, status */
    HF_MUTATION_IDEMPOTENCY,      /* key (scope and key), text = response body, status,
                                     hash (SHA-256 of the request body, 32 bytes), at_ms */
    HF_MUTATION_POOL,             /* event_id, pool_id, available, held, sold: the pool's
                                     counts after a change. For live streams only: the counts
                                     are derived from holds and orders, so the store skips it */
} hf_mutation_type_t;

typedef struct hf_mutation {
    hf_mutation_type_t type;
    int64_t at_ms;               /* when the change happened */
    const char *event_id;
    const char *seat_id;
    const char *pool_id;
    const char *hold_id;
    const char *order_id;
    const char *user_id;
    const char *currency;
    const char *payment_ref;
    const char *key;
    const char *text;            /* JSON text, see each type */
    const uint8_t *hash;         /* 32 bytes */
    int64_t total;
    int64_t expires_at_ms;
    uint32_t version;
    uint32_t quantity;
    int status;                  /* seat, hold or order status, or the HTTP status */
    int64_t available, held, sold; /* HF_MUTATION_POOL */
} hf_mutation_t;

/* Items JSON is {"seats": ["FLOOR-A-1", ...], "pools": {"GA": 2}}. */

typedef struct hf_mutation_sink {
    void (*emit)(void *context, const hf_mutation_t *mutation);
    void *context;
} hf_mutation_sink_t;

#endif
