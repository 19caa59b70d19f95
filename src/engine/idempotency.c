/* Idempotency keys (idempotency.h): the first 2xx answer to a creating POST, kept by
 * method, path and key, with the hash of the body that produced it as a JSON value
 * (body_hash.h). */
#include "engine/idempotency.h"

#include <assert.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/limits.h"
#include "engine/body_hash.h"
#include "engine/errors.h"
#include "store/store.h"

/* A limit's value as a string literal, for messages that quote it: the macro's own expansion
 * (255, not HF_IDEMPOTENCY_KEY_SIZE_MAX) is what STRINGIZE_VALUE turns into text. */
#define STRINGIZE_VALUE(x) #x
#define STRINGIZE(x) STRINGIZE_VALUE(x)

void hf_idempotency_init(hf_idempotency_t *table) {
    memset(table, 0, sizeof *table);
    hf_map_init(&table->keys);
}

void hf_idempotency_free(hf_idempotency_t *table) {
    hf_map_free(&table->keys);
    free(table->entries);
    hf_buffer_free(&table->bodies);
    hf_buffer_free(&table->scopes);
}

const hf_idempotency_entry_t *hf_idempotency_find(const hf_idempotency_t *table, const char *scope,
                                                  size_t scope_length) {
    uint32_t index;
    if (!hf_map_get(&table->keys, scope, scope_length, &index)) return NULL;
    return &table->entries[index];
}

/* Entries arrive in time order, so the expired ones are a prefix. Once that prefix is half
 * the table, the live rest is copied into fresh tables: amortized O(1) per key, and the
 * memory stays proportional to the keys of the last 24 hours. */
static void forget_expired(hf_idempotency_t *table, int64_t now_ms) {
    assert(table->count > 0 && table->entries); /* only called on a table with entries */
    uint32_t expired = 0;
    while (expired < table->count &&
           table->entries[expired].created_at_ms < now_ms - HF_IDEMPOTENCY_KEEP_MS)
        expired++;
    if (expired == 0 || expired * 2 < table->count) return;
    hf_idempotency_t fresh;
    hf_idempotency_init(&fresh);
    /* In creation order, so the expired ones stay a prefix in the new table too. */
    for (uint32_t i = expired; i < table->count; i++) {
        const hf_idempotency_entry_t *entry = &table->entries[i];
        hf_idempotency_put(&fresh, table->scopes.data + entry->scope_offset, entry->scope_length,
                           entry->hash, entry->status, hf_idempotency_body(table, entry),
                           entry->body_length, entry->created_at_ms);
    }
    hf_idempotency_free(table);
    *table = fresh;
}

void hf_idempotency_put(hf_idempotency_t *table, const char *scope, size_t scope_length,
                        const uint8_t hash[32], int status, const char *body, size_t body_length,
                        int64_t created_at_ms) {
    if (table->count > 0) forget_expired(table, created_at_ms);
    if (table->count == table->capacity) {
        uint32_t capacity = table->capacity ? table->capacity * 2 : 64;
        hf_idempotency_entry_t *entries = realloc(table->entries, capacity * sizeof *entries);
        if (!entries) abort();
        table->entries = entries;
        table->capacity = capacity;
    }
    assert(table->entries); /* capacity > count: allocated */
    hf_idempotency_entry_t *entry = &table->entries[table->count];
    memcpy(entry->hash, hash, 32);
    entry->status = status;
    entry->body_offset = (uint32_t)table->bodies.length;
    entry->body_length = (uint32_t)body_length;
    entry->created_at_ms = created_at_ms;
    entry->scope_offset = (uint32_t)table->scopes.length;
    entry->scope_length = (uint32_t)scope_length;
    hf_buffer_append(&table->scopes, scope, scope_length);
    hf_buffer_append(&table->bodies, body, body_length);
    hf_buffer_append_char(&table->bodies, '\0');
    hf_map_put(&table->keys, scope, scope_length, table->count);
    table->count++;
}

const char *hf_idempotency_body(const hf_idempotency_t *table,
                                const hf_idempotency_entry_t *entry) {
    return table->bodies.data + entry->body_offset;
}

/* ---- a request with a key ---- */

/* Scope of an Idempotency-Key: method, path and key, and with a user token its user (its
 * length first, so no user and key can spell another's): the body may leave user_id out
 * (API.md section 16), and one buyer's key must never replay another buyer's answer. */
static size_t idempotency_scope(const hf_request_t *request, const char *key, size_t key_length,
                                char *scope, size_t scope_size) {
    const char *user = request->acting_user;
    int length = *user ? snprintf(scope, scope_size, "%s %s\n#%zu:%s\n%.*s", request->http->method,
                                  request->http->path, strlen(user), user, (int)key_length, key)
                       : snprintf(scope, scope_size, "%s %s\n%.*s", request->http->method,
                                  request->http->path, (int)key_length, key);
    return length < 0 || (size_t)length >= scope_size ? 0 : (size_t)length;
}

/* The stored answer again, as it was first given, marked as a replay (Stripe's header): the
 * client learns that nothing ran this time. */
static void replay(hf_request_t *request, const hf_idempotency_t *table,
                   const hf_idempotency_entry_t *entry) {
    request->response->status = entry->status;
    hf_buffer_reset(&request->response->body);
    hf_buffer_append(&request->response->body, hf_idempotency_body(table, entry),
                     entry->body_length);
    hf_http_response_header_add(request->response, "Idempotent-Replayed", "true", false);
}

/* Whether the key's entry was made by this body. A key kept by a server before bodies were
 * compared as JSON values holds the SHA-256 of the body's raw bytes: the same bytes still
 * match it (body_hash.h's tag keeps the two kinds of hash apart), so a retry across an
 * upgrade is answered as before; only a retry with other bytes of the same value is refused
 * then, until such keys age out (24 hours). */
static bool same_body(const hf_idempotency_entry_t *entry, const uint8_t hash[32],
                      const hf_http_request_t *http) {
    if (CRYPTO_memcmp(entry->hash, hash, 32) == 0) return true;
    uint8_t raw[32];
    SHA256((const unsigned char *)http->body, http->body_length, raw);
    return CRYPTO_memcmp(entry->hash, raw, sizeof raw) == 0;
}

void hf_idempotency_run(hf_request_t *request, hf_route_handler_fn handler, const char *key,
                        size_t key_length) {
    if (key_length == 0 || key_length > HF_IDEMPOTENCY_KEY_SIZE_MAX) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "Idempotency-Key must be 1 to " STRINGIZE(HF_IDEMPOTENCY_KEY_SIZE_MAX) " bytes", "Idempotency-Key");
        return;
    }
    hf_context_t *context = request->context;
    hf_idempotency_t *table = context->idempotency;
    char scope[HF_HTTP_HEAD_SIZE_MAX];
    size_t scope_length = idempotency_scope(request, key, key_length, scope, sizeof scope);
    /* The dispatcher has read the body (a route with a key takes one): hashed as read. */
    uint8_t hash[HF_BODY_HASH_SIZE];
    hf_body_hash(request->flat, request->body, hash);
    const hf_idempotency_entry_t *entry = hf_idempotency_find(table, scope, scope_length);
    if (entry) {
        if (same_body(entry, hash, request->http)) replay(request, table, entry);
        else hf_reply_error(request, HF_API_ERROR_IDEMPOTENCY_KEY_REUSED, NULL, NULL);
        return;
    }
    handler(request);
    int status = request->response->status;
    if (status < 200 || status > 299 || context->store_failed) return;
    hf_buffer_t *body = &request->response->body;
    hf_idempotency_put(table, scope, scope_length, hash, status, body->data, body->length,
                       request->now_ms);
    hf_mutation_t mutation = {.type = HF_MUTATION_IDEMPOTENCY,
                              .at_ms = request->now_ms,
                              .as.idempotency = {scope, body->data, hash, status,
                                                 request->unit[0] ? request->unit : NULL}};
    hf_batch_append(context->open_batch, &mutation);
}
