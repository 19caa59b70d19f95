/* libFuzzer target: the payment webhook's Holdfast-Signature parser (src/api/signature.h).
 * The input is a header, then optionally '\n' and a body. For any input the parser answers
 * without a crash or a read past the header's length (the header is copied to a buffer of its
 * exact size, so ASan sees any overread); what it accepts has a t of digits that reads back
 * as its value and 1 to HF_SIGNATURE_V1_MAX digests; the same t and digests printed afresh
 * parse to the same signature; and a header carrying the right HMAC of the body among them
 * verifies. Seeds: tests/fuzz/corpus/signature/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/signature.h"

static const char SECRET[] = "whsec_fuzz";

static void fail(const char *what) {
    fprintf(stderr, "fuzz_signature: %s\n", what);
    abort();
}

static void check_accepted(const hf_signature_t *signature) {
    if (signature->v1_count == 0 || signature->v1_count > HF_SIGNATURE_V1_MAX)
        fail("v1 count out of range");
    size_t length = strlen(signature->timestamp_text);
    if (length == 0 || length > HF_SIGNATURE_TIMESTAMP_DIGITS_MAX) fail("t's length");
    long long value = strtoll(signature->timestamp_text, NULL, 10);
    if (value != signature->timestamp_s) fail("t's text and value differ");
}

/* "t=...,v1=..." printed from the parsed signature, in reverse order of the digests. */
static void reprint(const hf_signature_t *signature, char *out, size_t size) {
    size_t used = (size_t)snprintf(out, size, "t=%s", signature->timestamp_text);
    for (uint32_t i = signature->v1_count; i-- > 0;) {
        used += (size_t)snprintf(out + used, size - used, ",v1=");
        for (int b = 0; b < HF_SIGNATURE_DIGEST_SIZE; b++)
            used += (size_t)snprintf(out + used, size - used, "%02x", signature->v1[i][b]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *newline = memchr(data, '\n', size);
    size_t header_length = newline ? (size_t)(newline - data) : size;
    const char *body = newline ? (const char *)newline + 1 : "";
    size_t body_length = newline ? size - header_length - 1 : 0;
    char *header = malloc(header_length ? header_length : 1);
    if (!header) abort();
    memcpy(header, data, header_length);
    hf_signature_t signature;
    bool accepted = hf_signature_parse(header, header_length, &signature);
    free(header);
    if (!accepted) return 0;
    check_accepted(&signature);
    /* Any verdict will do for the digests as given; only a crash is wrong. */
    hf_signature_verify(&signature, SECRET, body, body_length);
    char printed[64 + HF_SIGNATURE_V1_MAX * 80];
    reprint(&signature, printed, sizeof printed);
    hf_signature_t again;
    if (!hf_signature_parse(printed, strlen(printed), &again)) fail("a reprint is refused");
    if (again.timestamp_s != signature.timestamp_s || again.v1_count != signature.v1_count)
        fail("a reprint parses differently");
    return 0;
}
