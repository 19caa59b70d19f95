/* Idempotency keys (API.md section 1): the table of first 2xx answers to creating POSTs,
 * kept by method, path and key with the hash of the body that produced them (as a JSON value:
 * body_hash.h) for 24 hours, and the handling of a request that carries a key (replay,
 * refusal, or run and remember).
 *
 * Ownership: the engine owns its table (engine.c) and reaches it through the request
 * context. An entry or body returned by hf_idempotency_find or hf_idempotency_body is
 * borrowed from the table and valid until the next hf_idempotency_put (which may rebuild it)
 * or hf_idempotency_free. Loop thread only. */
#ifndef HF_ENGINE_IDEMPOTENCY_H
#define HF_ENGINE_IDEMPOTENCY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/route.h"
#include "lib/buffer.h"
#include "lib/map.h"

typedef struct hf_idempotency_entry {
    uint8_t hash[32]; /* the body's hf_body_hash (or, kept by an older server, the
                                  * SHA-256 of its bytes) */
    int status;
    uint32_t body_offset, body_length;
    uint32_t scope_offset, scope_length;
    int64_t created_at_ms;
} hf_idempotency_entry_t;

typedef struct hf_idempotency {
    hf_map_t keys;                   /* scope -> entry index */
    hf_idempotency_entry_t *entries; /* in creation order */
    uint32_t count, capacity;
    hf_buffer_t bodies; /* stored answers, back to back */
    hf_buffer_t scopes; /* the entries' scopes, back to back */
} hf_idempotency_t;

void hf_idempotency_init(hf_idempotency_t *table);
void hf_idempotency_free(hf_idempotency_t *table);
const hf_idempotency_entry_t *hf_idempotency_find(const hf_idempotency_t *table, const char *scope,
                                                  size_t scope_length);
/* Copies scope and body into the table; forgets keys older than 24 hours first. */
void hf_idempotency_put(hf_idempotency_t *table, const char *scope, size_t scope_length,
                        const uint8_t hash[32], int status, const char *body, size_t body_length,
                        int64_t created_at_ms);
const char *hf_idempotency_body(const hf_idempotency_t *table, const hf_idempotency_entry_t *entry);

/* Answers a request carrying an Idempotency-Key of key_length bytes (borrowed for the call):
 * 400 when the key is empty or too long, the stored answer (with Idempotent-Replayed: true)
 * when the key was used with the same body as a JSON value, 422 when with another; else runs
 * handler and, when it answered 2xx, keeps the answer in the context's table and records it in
 * the open batch. */
void hf_idempotency_run(hf_request_t *request, hf_route_handler_fn handler, const char *key,
                        size_t key_length);

#endif
