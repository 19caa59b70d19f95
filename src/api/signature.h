/* The Holdfast-Signature header of payment webhooks (API.md section 7):
 * "t=UNIX_SECONDS,v1=HEX[,v1=HEX...]", HEX being HMAC-SHA256(webhook secret, t + "." + raw
 * body). The parser is pure (no clock, no I/O) so a fuzzer can drive it; the check computes
 * the HMAC with OpenSSL and compares in constant time.
 *
 * Ownership: nothing is allocated; a parsed signature is a value the caller owns. Any thread. */
#ifndef HF_API_SIGNATURE_H
#define HF_API_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/hmac.h"
#include "lib/limits.h"

#define HF_SIGNATURE_DIGEST_SIZE HF_HMAC_DIGEST_SIZE
/* t's digits as the header spelled them (the signed text is the header's, not a reprint). */
#define HF_SIGNATURE_TIMESTAMP_DIGITS_MAX 18

typedef struct hf_signature {
    int64_t timestamp_s;
    char timestamp_text[HF_SIGNATURE_TIMESTAMP_DIGITS_MAX + 1];
    uint32_t v1_count;
    uint8_t v1[HF_SIGNATURE_V1_MAX][HF_SIGNATURE_DIGEST_SIZE];
} hf_signature_t;

/* Parses the header's length bytes (no NUL needed): elements separated by ',' in any order,
 * each NAME=VALUE with blanks around it ignored; exactly one t (1 to 18 decimal digits), at
 * least one and at most HF_SIGNATURE_V1_MAX v1 of 64 hex digits; other names (v0, ...) are
 * ignored. False for anything else, and for a header over HF_SIGNATURE_HEADER_SIZE_MAX bytes. */
bool hf_signature_parse(const char *header, size_t length, hf_signature_t *signature);

/* True when one v1 of signature is HMAC-SHA256(secret, t + "." + body), each compared in
 * constant time (CRYPTO_memcmp). The clock's check is the caller's. */
bool hf_signature_verify(const hf_signature_t *signature, const char *secret, const char *body,
                         size_t body_length);

#endif
