/* The hash of a request body as a JSON value (API.md section 1, retries): two clients retrying
 * one request need not serialise it alike, so an Idempotency-Key compares what the body says,
 * not its bytes. The hash is SHA-256 over a canonical encoding of the parsed body: members
 * sorted by name at every level, strings by their decoded bytes, and a number by its value,
 * an integral one the same whatever its spelling (1, 1.0, 1e0 and 10E-1 are one value).
 * Whitespace and member order do not reach the encoding at all. The same body hashes the same
 * whichever reader read it (the flat reader or jansson's DOM), so a retry that one reader
 * declines and the other reads still matches.
 *
 * The encoding starts with a version tag, so its hashes never equal the SHA-256 of a body's
 * raw bytes that a server before it kept (idempotency.c compares an old key by those).
 *
 * Ownership: the body is borrowed for the call; nothing is kept. Any thread. */
#ifndef HF_ENGINE_BODY_HASH_H
#define HF_ENGINE_BODY_HASH_H

#include <jansson.h>
#include <stdint.h>

#include "net/flat_json.h"

#define HF_BODY_HASH_SIZE 32

/* The hash of the body that flat read (when not NULL), else of json (when not NULL), else of
 * an empty body, which reads as {} (decode.h). */
void hf_body_hash(const hf_flat_json_t *flat, json_t *json, uint8_t hash[HF_BODY_HASH_SIZE]);

#endif
