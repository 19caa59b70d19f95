/* libFuzzer target: the admission token's verifier (src/engine/token.h). Each input is tried
 * twice:
 *   1. as a token, verbatim (copied to a buffer of its exact size, so ASan sees any read past
 *      its length);
 *   2. as "HEADER\nPAYLOAD", two JSON texts this target encodes and signs correctly with the
 *      secret, so the fuzzer reaches the claims' parser behind the signature, which it could
 *      never forge.
 * For any input: no crash; a result among the five; claims zeroed unless VALID or EXPIRED,
 * and then within their bounds; and whatever verifies (VALID or EXPIRED) re-signs, from the
 * claims read, to the very same bytes (one spelling per token). Seeds: tests/fuzz/corpus/token/. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/token.h"

#define NOW_MS 1700000100000LL
/* The signed form of the largest input run.sh passes (-max_len=65536), with room. */
#define FORGED_SIZE_MAX (2 * 65536 + 256)

static const hf_token_secret_t SECRET = {.bytes = "fuzz-secret-of-32-bytes-........", .size = 32};

static void fail(const char *what) {
    fprintf(stderr, "fuzz_token: %s\n", what);
    abort();
}

static bool text_zeroed(const char *text, size_t size) {
    for (size_t i = 0; i < size; i++)
        if (text[i] != '\0') return false;
    return true;
}

static bool zeroed(const hf_token_claims_t *claims) {
    return text_zeroed(claims->subject, sizeof claims->subject) &&
           text_zeroed(claims->event_id, sizeof claims->event_id) &&
           text_zeroed(claims->ticket_id, sizeof claims->ticket_id) &&
           claims->issued_at_s == 0 && claims->expires_at_s == 0;
}

/* Claims read from a verified token are within bounds, and re-sign to the token. */
static void check_verified(const char *token, size_t length, const hf_token_claims_t *claims) {
    size_t subject = strnlen(claims->subject, sizeof claims->subject);
    size_t event = strnlen(claims->event_id, sizeof claims->event_id);
    size_t ticket = strnlen(claims->ticket_id, sizeof claims->ticket_id);
    if (subject == 0 || subject > HF_USER_ID_SIZE_MAX || event == 0 || event > HF_ID_SIZE_MAX ||
        ticket == 0 || ticket > HF_SERVER_ID_SIZE)
        fail("a verified claim is out of bounds");
    char again[HF_TOKEN_SIZE_MAX + 1];
    size_t written = hf_token_sign(&SECRET, claims, again, sizeof again);
    if (written != length || memcmp(again, token, length) != 0)
        fail("a verified token does not re-sign to the same bytes");
}

static void verify(const char *token, size_t length) {
    hf_token_claims_t claims;
    hf_token_result_t result = hf_token_verify(&SECRET, token, length, NOW_MS, &claims);
    switch (result) {
    case HF_TOKEN_VALID:
    case HF_TOKEN_EXPIRED:
        check_verified(token, length, &claims);
        if ((result == HF_TOKEN_EXPIRED) != (NOW_MS / 1000 >= claims.expires_at_s))
            fail("expiry disagrees with exp");
        break;
    case HF_TOKEN_MALFORMED:
    case HF_TOKEN_BAD_ALGORITHM:
    case HF_TOKEN_BAD_SIGNATURE:
        if (!zeroed(&claims)) fail("claims left filled after a refusal");
        break;
    default:
        fail("a result out of the enumeration");
    }
}

/* base64url without padding, from OpenSSL's standard base64; the length written. */
static size_t encode(const uint8_t *bytes, size_t size, char *out) {
    int length = EVP_EncodeBlock((unsigned char *)out, bytes, (int)size);
    while (length > 0 && out[length - 1] == '=') length--;
    for (int i = 0; i < length; i++) out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return (size_t)length;
}

/* HEADER\nPAYLOAD encoded and signed correctly into out; its length. */
static size_t forge(const uint8_t *data, size_t size, char *out) {
    const uint8_t *newline = memchr(data, '\n', size);
    size_t header = newline ? (size_t)(newline - data) : size;
    size_t used = encode(data, header, out);
    out[used++] = '.';
    if (newline) used += encode(newline + 1, size - header - 1, out + used);
    unsigned char digest[32];
    unsigned int digest_size = 0;
    HMAC(EVP_sha256(), SECRET.bytes, (int)SECRET.size, (const unsigned char *)out, used, digest,
         &digest_size);
    out[used++] = '.';
    return used + encode(digest, digest_size, out + used);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *token = malloc(size ? size : 1);
    if (!token) abort();
    memcpy(token, data, size);
    verify(token, size);
    free(token);
    if (size > 65536) return 0;
    char *forged = malloc(FORGED_SIZE_MAX);
    if (!forged) abort();
    size_t length = forge(data, size, forged);
    char *exact = malloc(length);
    if (!exact) abort();
    memcpy(exact, forged, length);
    free(forged);
    verify(exact, length);
    free(exact);
    return 0;
}
