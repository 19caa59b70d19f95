/* The request context (context.h): the clock, the sequences a reply waits for, and ids. */
#include "engine/context.h"
#include "lib/clock.h"

#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

int64_t hf_context_now_ms(hf_context_t *context) {
    int64_t ms = hf_clock_wall_ms();
    /* The core needs time that never runs backwards; a clock step back waits it out. */
    if (ms < context->last_now_ms) ms = context->last_now_ms;
    context->last_now_ms = ms;
    return ms;
}

uint64_t hf_context_reply_sequence(const hf_context_t *context) {
    /* A reply observed everything applied so far: the open batch when it holds anything,
     * else the batch before it (in flight or already durable). */
    if (hf_batch_count(context->open_batch) > 0) return context->open_sequence;
    return context->open_sequence - 1;
}

uint64_t hf_context_change_sequence(const hf_context_t *context, uint64_t change) {
    if (change <= context->durable_changes) return context->durable_sequence;
    /* Batches in flight in order: the first whose records reach that far holds it. */
    for (uint64_t s = context->durable_sequence + 1; s < context->open_sequence; s++)
        if (context->batch_changes[s % HF_STORE_BATCHES_IN_FLIGHT_MAX] >= change) return s;
    return hf_context_reply_sequence(context);
}

/* OpenSSL's generator, drawn 4 KiB at a time: one call per id cost more than the rest of a
 * hold. The bytes are as unpredictable either way; only the loop thread uses them. */
static void random_take(hf_context_t *context, unsigned char *out, size_t length) {
    unsigned char *pool = context->random_pool;
    size_t size = sizeof context->random_pool;
    if (context->random_remaining < length) {
        if (RAND_bytes(pool, (int)size) != 1) abort(); /* no entropy: ids would be guessable */
        context->random_remaining = size;
    }
    unsigned char *next = pool + size - context->random_remaining;
    memcpy(out, next, length);
    memset(next, 0, length); /* never hand the same bytes out twice */
    context->random_remaining -= length;
}

/* "00" to "ff": an id's 18 bytes are written as hex one byte (two digits) per copy. */
static const char hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627"
    "28292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f"
    "505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727374757677"
    "78797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7"
    "c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
    "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

void hf_context_id_make(hf_context_t *context, const char *prefix,
                        char out[HF_SERVER_ID_SIZE + 1]) {
    /* 48 bits of the time in milliseconds, then 96 random bits: unguessable as the contract
     * asks, and a new id sorts after nearly every id made before it, so the store's indexes
     * grow at their right edge: a batch of new holds dirties one or two index pages instead
     * of one random page each (with a prefix in seconds, a second's worth of ids spread over
     * hundreds of pages). */
    unsigned char bytes[18];
    uint64_t ms = (uint64_t)hf_clock_wall_ms();
    for (int i = 0; i < 6; i++) bytes[i] = (unsigned char)(ms >> (40 - 8 * i));
    random_take(context, bytes + 6, 12);
    size_t length = strlen(prefix);
    memcpy(out, prefix, length);
    for (size_t i = 0; i < sizeof bytes; i++)
        memcpy(out + length + 2 * i, hex_pairs + 2 * bytes[i], 2);
    out[length + 2 * sizeof bytes] = '\0';
}
