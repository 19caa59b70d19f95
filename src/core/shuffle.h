/* The pre-queue's shuffle (API.md section 6): a uniformly random order of join numbers 1..n,
 * drawn by Fisher-Yates from a keystream of ChaCha20 keyed by the room's seed, so that the same
 * seed and the same n always give the same order (a restart recomputes the places the opening
 * gave, with no row per ticket). Each draw from [0, i] is exact (Lemire's multiply with
 * rejection): no place is favoured by a modulo's bias. The steps are taken in slices, so the
 * loop never stalls on a long line.
 *
 * Pure: the seed is the caller's (made from OpenSSL's RAND_bytes when the room is set up); no
 * clock, no global state. The order's memory is the shuffle's own until hf_shuffle_free. */
#ifndef HF_CORE_SHUFFLE_H
#define HF_CORE_SHUFFLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"

/* Bytes of keystream drawn from the cipher at a time. */
#define HF_SHUFFLE_STREAM_BLOCK 4096

typedef struct hf_shuffle {
    uint32_t *order; /* read through hf_shuffle_at: 0 stands for p + 1, never moved */
    uint32_t count;
    uint32_t step;        /* the Fisher-Yates index still to place: count - 1 down to 0 */
    void *cipher;         /* OpenSSL's EVP_CIPHER_CTX, NULL once done */
    size_t stream_offset; /* bytes of stream used */
    unsigned char stream[HF_SHUFFLE_STREAM_BLOCK];
} hf_shuffle_t;

/* Starts the shuffle of join numbers 1..count under seed. Aborts when out of memory. The
 * order's count entries are left unset: the caller zeroes them before the first advance (zero
 * stands for an entry no step has moved), at once or a slice at a time (core/line.c). */
void hf_shuffle_begin(hf_shuffle_t *shuffle, const uint8_t seed[HF_QUEUE_SEED_SIZE],
                      uint32_t count);
/* Takes at most steps steps; true once the order is complete (the cipher is freed then). */
bool hf_shuffle_advance(hf_shuffle_t *shuffle, uint32_t steps);
/* The whole order at once (tests, benchmarks): begin, then advance to the end. */
void hf_shuffle_run(hf_shuffle_t *shuffle, const uint8_t seed[HF_QUEUE_SEED_SIZE], uint32_t count);
void hf_shuffle_free(hf_shuffle_t *shuffle);

/* The join number at place p + 1 (p < count; final once the shuffle is done). */
static inline uint32_t hf_shuffle_at(const hf_shuffle_t *shuffle, uint32_t p) {
    return shuffle->order[p] ? shuffle->order[p] : p + 1;
}

#endif
