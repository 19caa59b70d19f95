/* The request context: what a handler needs from the engine, and nothing of the engine's
 * plumbing (loop handles, store thread, HTTP server, shutdown). The engine owns one and hands
 * it to the dispatcher; handlers reach it through hf_request_t.context. Everything here is
 * used on the loop's thread only.
 *
 * Ownership: the engine owns the context and everything it points to (core, store,
 * idempotency table, streams, open batch) for its whole life. Pointers read from it stay
 * valid until the end of the request being handled, except core: the engine replaces it
 * after a store failure, so keep none across requests. */
#ifndef HF_ENGINE_CONTEXT_H
#define HF_ENGINE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "engine/token.h"
#include "store/store.h"

/* Declared by their own headers (idempotency.h, streams.h), which build on this one. */
struct hf_idempotency;
struct hf_streams;
struct hf_metrics; /* metrics.h */
struct hf_cluster; /* cluster.h */
struct hf_outbox;  /* outbox.h */

typedef struct hf_context {
    hf_core_t *core;
    hf_store_t *store; /* NULL: nothing to take forgotten holds back from */
    struct hf_idempotency *idempotency;
    struct hf_streams *streams;
    struct hf_metrics *metrics; /* GET /metrics' counters (metrics.h) */
    struct hf_cluster *cluster; /* units, leases, forwarding (cluster.h) */
    struct hf_outbox *outbox;   /* outbound notifications (outbox.h) */
    const char *api_key;        /* NULL or "": no authentication */
    /* The payment webhook's HMAC secret (--webhook-secret); NULL or "": the webhook answers
     * 503 webhooks_not_configured. Owned by the engine's caller. */
    const char *webhook_secret;
    /* The admission tokens' secret (token.h: hf_token_sign, hf_token_verify); NULL: none, so
     * nothing is signed and every token is refused. Owned by the engine's caller. */
    const hf_token_secret_t *token_secret;
    /* The user tokens' secret (--user-token-secret, API.md section 16; token.h:
     * hf_user_token_verify); NULL or size 0: no user token is accepted. Needs api_key. Owned
     * by the engine's caller. */
    const hf_token_secret_t *user_token_secret;
    /* Origins answered with CORS headers (--cors-origin), owned by the engine's caller and
     * outliving the engine; count 0: CORS is off and no request's Origin is even read. */
    const char *const *cors_origins;
    uint32_t cors_origin_count;

    hf_batch_t *open_batch;    /* mutations of the commands applied since the last submit */
    uint64_t open_sequence;    /* sequence the open batch will carry */
    uint64_t durable_sequence; /* every batch up to this one is durable */
    /* hf_core_change_count when each batch in flight was handed over, by sequence modulo the
     * ring's size: once a batch is durable, every mutation record up to its count is, so the
     * core may forget holds that finished by then (hf_core_evict). */
    uint64_t batch_changes[HF_STORE_BATCHES_IN_FLIGHT_MAX];
    uint64_t durable_changes; /* every mutation record up to this number is durable */
    bool store_failed;        /* a commit failed: nothing more is acknowledged */
    bool reads_from_disk;     /* after a failure: the core was reloaded from the store, so
                                    GETs answer what is durable */
    int64_t last_now_ms;      /* the clock never runs backwards within one run */

    /* The domains' own contexts (their handlers' scratch, route.h: hf_route_table_t), one
     * block made by the dispatcher at the first request (api/routes.c); NULL until then. The
     * context's owner frees it (free()). */
    void *domain_scratch;
    /* OpenSSL's random bytes, drawn 4 KiB at a time (hf_context_id_make). */
    unsigned char random_pool[4096];
    size_t random_remaining; /* unused bytes at the end of random_pool; 0 at first */
} hf_context_t;

/* Wall-clock milliseconds, never moving backwards within one run. */
int64_t hf_context_now_ms(hf_context_t *context);
/* The store sequence a reply produced now depends on. */
uint64_t hf_context_reply_sequence(const hf_context_t *context);
/* The store sequence that makes mutation record number change durable (hf_core_change_count
 * counts them): the durable sequence when it already is. */
uint64_t hf_context_change_sequence(const hf_context_t *context, uint64_t change);
/* Fills out with prefix and 36 hex digits: the time in milliseconds (48 bits), then 96
 * random bits ("res_" + 36 digits). */
void hf_context_id_make(hf_context_t *context, const char *prefix, char out[HF_SERVER_ID_SIZE + 1]);

#endif
