/* The pre-queue's shuffle (shuffle.h): Fisher-Yates over a ChaCha20 keystream. */
#include "core/shuffle.h"

#include <assert.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* The next 8 bytes of keystream, refilled a block at a time: ChaCha20 over zeros is the
 * keystream itself. */
static uint64_t stream_next(hf_shuffle_t *shuffle) {
    if (shuffle->stream_offset + sizeof(uint64_t) > sizeof shuffle->stream) {
        static const unsigned char zeros[HF_SHUFFLE_STREAM_BLOCK];
        int written = 0;
        if (EVP_EncryptUpdate(shuffle->cipher, shuffle->stream, &written, zeros,
                              (int)sizeof zeros) != 1 ||
            written != (int)sizeof zeros)
            abort(); /* a cipher that fails on memory it owns: nothing sensible remains */
        shuffle->stream_offset = 0;
    }
    uint64_t value;
    memcpy(&value, shuffle->stream + shuffle->stream_offset, sizeof value);
    shuffle->stream_offset += sizeof value;
    return value;
}

/* Uniform in [0, bound) (bound >= 1): the high half of a 64 by 64 bit product, redrawn when it
 * falls in the low part that would favour some results (Lemire, "Fast random integer
 * generation in an interval"). */
static uint32_t stream_below(hf_shuffle_t *shuffle, uint32_t bound) {
    uint64_t threshold = (0 - (uint64_t)bound) % bound;
    for (;;) {
        unsigned __int128 product = (unsigned __int128)stream_next(shuffle) * bound;
        if ((uint64_t)product >= threshold) return (uint32_t)(product >> 64);
    }
}

void hf_shuffle_begin(hf_shuffle_t *shuffle, const uint8_t seed[HF_QUEUE_SEED_SIZE],
                      uint32_t count) {
    memset(shuffle, 0, offsetof(hf_shuffle_t, stream));
    shuffle->count = count;
    /* Not zeroed here (shuffle.h): a calloc of a million entries from the heap would clear
     * 4 MB in one turn of the loop. */
    shuffle->order = malloc(((size_t)count + 1) * sizeof *shuffle->order);
    if (!shuffle->order) abort();
    shuffle->step = count ? count - 1 : 0;
    /* The nonce and counter are zero: each seed keys one stream, used once. */
    static const unsigned char iv[16];
    EVP_CIPHER_CTX *cipher = EVP_CIPHER_CTX_new();
    if (!cipher || EVP_EncryptInit_ex(cipher, EVP_chacha20(), NULL, seed, iv) != 1) abort();
    shuffle->cipher = cipher;
    shuffle->stream_offset = sizeof shuffle->stream; /* empty: the first draw fills it */
}

bool hf_shuffle_advance(hf_shuffle_t *shuffle, uint32_t steps) {
    if (!shuffle->cipher) return true;
    uint32_t *order = shuffle->order;
    while (steps-- > 0 && shuffle->step > 0) {
        uint32_t i = shuffle->step--;
        uint32_t j = stream_below(shuffle, i + 1);
        uint32_t taken = hf_shuffle_at(shuffle, i);
        order[i] = hf_shuffle_at(shuffle, j);
        order[j] = taken;
    }
    if (shuffle->step > 0) return false;
    EVP_CIPHER_CTX_free(shuffle->cipher);
    shuffle->cipher = NULL;
    return true;
}

void hf_shuffle_run(hf_shuffle_t *shuffle, const uint8_t seed[HF_QUEUE_SEED_SIZE], uint32_t count) {
    hf_shuffle_begin(shuffle, seed, count);
    memset(shuffle->order, 0, (size_t)count * sizeof *shuffle->order);
    while (!hf_shuffle_advance(shuffle, UINT32_MAX)) {
    }
}

void hf_shuffle_free(hf_shuffle_t *shuffle) {
    if (shuffle->cipher) EVP_CIPHER_CTX_free(shuffle->cipher);
    free(shuffle->order);
    memset(shuffle, 0, offsetof(hf_shuffle_t, stream));
}
