/* The webhook signature header (signature.h). */
#include "api/signature.h"

#include <openssl/crypto.h>
#include <string.h>

#include "lib/hmac.h"

static bool blank(char c) { return c == ' ' || c == '\t'; }

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool timestamp_read(const char *value, size_t length, hf_signature_t *signature) {
    if (length == 0 || length > HF_SIGNATURE_TIMESTAMP_DIGITS_MAX) return false;
    int64_t seconds = 0;
    for (size_t i = 0; i < length; i++) {
        if (value[i] < '0' || value[i] > '9') return false;
        seconds = seconds * 10 + (value[i] - '0'); /* 18 digits stay below 2^63 */
    }
    signature->timestamp_s = seconds;
    memcpy(signature->timestamp_text, value, length);
    signature->timestamp_text[length] = '\0';
    return true;
}

static bool v1_read(const char *value, size_t length, hf_signature_t *signature) {
    if (length != 2 * HF_SIGNATURE_DIGEST_SIZE || signature->v1_count == HF_SIGNATURE_V1_MAX)
        return false;
    uint8_t *digest = signature->v1[signature->v1_count];
    for (size_t i = 0; i < HF_SIGNATURE_DIGEST_SIZE; i++) {
        int high = hex_value(value[2 * i]), low = hex_value(value[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        digest[i] = (uint8_t)(high << 4 | low);
    }
    signature->v1_count++;
    return true;
}

/* One element, blanks trimmed: t and v1 read, other names ignored. */
static bool element_read(const char *start, const char *end, hf_signature_t *signature,
                         bool *has_timestamp) {
    while (start < end && blank(*start)) start++;
    while (end > start && blank(end[-1])) end--;
    const char *equals = memchr(start, '=', (size_t)(end - start));
    if (!equals || equals == start) return false;
    size_t name_length = (size_t)(equals - start);
    const char *value = equals + 1;
    size_t value_length = (size_t)(end - value);
    if (name_length == 1 && start[0] == 't') {
        if (*has_timestamp) return false;
        *has_timestamp = true;
        return timestamp_read(value, value_length, signature);
    }
    if (name_length == 2 && start[0] == 'v' && start[1] == '1')
        return v1_read(value, value_length, signature);
    return true;
}

bool hf_signature_parse(const char *header, size_t length, hf_signature_t *signature) {
    memset(signature, 0, sizeof *signature);
    if (!header || length == 0 || length > HF_SIGNATURE_HEADER_SIZE_MAX) return false;
    bool has_timestamp = false;
    const char *end = header + length;
    for (const char *start = header; start <= end;) {
        const char *comma = memchr(start, ',', (size_t)(end - start));
        const char *stop = comma ? comma : end;
        if (!element_read(start, stop, signature, &has_timestamp)) return false;
        if (!comma) break;
        start = comma + 1;
    }
    return has_timestamp && signature->v1_count > 0;
}

bool hf_signature_verify(const hf_signature_t *signature, const char *secret, const char *body,
                         size_t body_length) {
    uint8_t expected[HF_SIGNATURE_DIGEST_SIZE];
    if (!secret || !*secret ||
        !hf_hmac_signature_digest(secret, signature->timestamp_text, body, body_length, expected))
        return false;
    bool match = false;
    /* Every v1 is compared, so the time taken does not tell which one matched. */
    for (uint32_t i = 0; i < signature->v1_count; i++)
        match |= CRYPTO_memcmp(signature->v1[i], expected, HF_SIGNATURE_DIGEST_SIZE) == 0;
    return match;
}
