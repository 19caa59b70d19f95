/* libFuzzer target: the HS256 tokens' verifier (src/engine/token.h), both kinds: each form
 * below is verified as an admission token and as a user token. Each input is tried twice:
 *   1. as a token, verbatim (copied to a buffer of its exact size, so ASan sees any read past
 *      its length);
 *   2. as "HEADER\nPAYLOAD", two JSON texts this target encodes and signs correctly with the
 *      secret, so the fuzzer reaches the claims' parser behind the signature, which it could
 *      never forge.
 * For any input: no crash; a result among the five; claims zeroed unless VALID or EXPIRED,
 * and then within their bounds; and whatever verifies (VALID or EXPIRED) re-signs, from the
 * claims read, to the very same bytes (one spelling per token). As a user token: a result
 * among the eight, claims zeroed unless VALID, and then a subject of 1 to 128 bytes, times
 * within the rules (lifetime, iat not ahead, exp not past), and the claims signed again
 * verify to themselves. Seeds: tests/fuzz/corpus/token/. */
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
           text_zeroed(claims->ticket_id, sizeof claims->ticket_id) && claims->issued_at_s == 0 &&
           claims->expires_at_s == 0;
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
    default: fail("a result out of the enumeration");
    }
}

static bool user_zeroed(const hf_user_token_claims_t *claims) {
    return text_zeroed(claims->subject, sizeof claims->subject) && claims->issued_at_s == 0 &&
           claims->expires_at_s == 0;
}

/* A verified user token's claims keep the rules, and sign to a token that verifies to them. */
static void check_user_verified(const hf_user_token_claims_t *claims) {
    size_t subject = strnlen(claims->subject, sizeof claims->subject);
    int64_t now_s = NOW_MS / 1000;
    if (subject == 0 || subject > HF_USER_ID_SIZE_MAX ||
        claims->expires_at_s - claims->issued_at_s > HF_USER_TOKEN_LIFETIME_S_MAX ||
        claims->issued_at_s > now_s + HF_USER_TOKEN_CLOCK_SKEW_S || now_s >= claims->expires_at_s)
        fail("a verified user token breaks a rule");
    char again[HF_USER_TOKEN_SIZE_MAX + 1];
    size_t written = hf_user_token_sign(&SECRET, claims->subject, claims->issued_at_s,
                                        claims->expires_at_s, again, sizeof again);
    /* A lifetime of 0 or less verifies while now < exp, but is never signed. */
    if (!written) {
        if (claims->expires_at_s > claims->issued_at_s) fail("valid user claims do not sign");
        return;
    }
    hf_user_token_claims_t read;
    if (hf_user_token_verify(&SECRET, again, written, NOW_MS, &read) != HF_TOKEN_VALID ||
        strcmp(read.subject, claims->subject) != 0 || read.issued_at_s != claims->issued_at_s ||
        read.expires_at_s != claims->expires_at_s)
        fail("a user token signed again does not verify to its claims");
}

static void verify_user(const char *token, size_t length) {
    hf_user_token_claims_t claims;
    hf_token_result_t result = hf_user_token_verify(&SECRET, token, length, NOW_MS, &claims);
    if (result == HF_TOKEN_VALID) {
        check_user_verified(&claims);
        return;
    }
    if ((unsigned)result >= HF_TOKEN_RESULT_COUNT || !hf_token_result_reason(result))
        fail("a user token's result out of the enumeration");
    if (!user_zeroed(&claims)) fail("user claims left filled after a refusal");
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
    verify_user(token, size);
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
    verify_user(exact, length);
    free(exact);
    return 0;
}
