/* The HS256 tokens: admission and user tokens (token.h). */
#include "engine/token.h"

#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "net/flat_json.h"

#define DIGEST_SIZE 32
/* The one header signing writes, and its base64url form. */
#define HEADER_JSON "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define HEADER_ENCODED "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
/* The payload's JSON: a user id escaped at 6 bytes a byte at worst, plus the other members. */
#define PAYLOAD_SIZE_MAX (6 * HF_USER_ID_SIZE_MAX + HF_ID_SIZE_MAX + HF_SERVER_ID_SIZE + 128)
/* Decoded parts are never longer than the token itself, and user tokens are the longer. */
#define DECODED_SIZE_MAX HF_USER_TOKEN_SIZE_MAX
/* A user token's payload as signing writes it: the escaped user id and two times. */
#define USER_PAYLOAD_SIZE_MAX (6 * HF_USER_ID_SIZE_MAX + 96)
_Static_assert(HF_TOKEN_SIZE_MAX <= HF_USER_TOKEN_SIZE_MAX, "parts hold either kind");

/* The longest token signing can write must be one verify accepts. */
_Static_assert(sizeof HEADER_ENCODED - 1 + 2 + (PAYLOAD_SIZE_MAX * 4 + 2) / 3 +
                       (DIGEST_SIZE * 4 + 2) / 3 <=
                   HF_TOKEN_SIZE_MAX,
               "HF_TOKEN_SIZE_MAX holds every token signing writes");

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---- base64url without padding ---- */

#define ENCODED_SIZE(size) (((size)*4 + 2) / 3)
static size_t encoded_size(size_t size) { return ENCODED_SIZE(size); }

/* Encodes size bytes into out (encoded_size(size) bytes, no NUL). */
static void base64url_encode(const unsigned char *in, size_t size, char *out) {
    size_t o = 0, i = 0;
    for (; i + 3 <= size; i += 3) {
        uint32_t group = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = alphabet[group >> 18 & 63];
        out[o++] = alphabet[group >> 12 & 63];
        out[o++] = alphabet[group >> 6 & 63];
        out[o++] = alphabet[group & 63];
    }
    if (size - i == 1) {
        out[o++] = alphabet[in[i] >> 2];
        out[o++] = alphabet[(in[i] & 3) << 4];
    } else if (size - i == 2) {
        uint32_t group = (uint32_t)in[i] << 8 | in[i + 1];
        out[o++] = alphabet[group >> 10 & 63];
        out[o++] = alphabet[group >> 4 & 63];
        out[o++] = alphabet[(group & 15) << 2];
    }
}

/* Each byte's value in the alphabet, -1 for the rest ('=', '+', '/', blanks: not base64url
 * without padding), made once from the alphabet: a lookup per character rather than five
 * comparisons, as every request with a user token decodes its few hundred. */
static signed char sextets[256];
static pthread_once_t sextets_once = PTHREAD_ONCE_INIT;

static void sextets_make(void) {
    memset(sextets, -1, sizeof sextets);
    for (int i = 0; i < 64; i++) sextets[(unsigned char)alphabet[i]] = (signed char)i;
}

static int sextet(char c) { return sextets[(unsigned char)c]; }

/* Strict decoding: only the alphabet, no padding, no length of 1 modulo 4, and the unused
 * low bits of the last character zero (one spelling per byte string). Returns the decoded
 * size, or -1. out holds at least length * 3 / 4 bytes. */
static long base64url_decode(const char *in, size_t length, unsigned char *out) {
    if (length % 4 == 1) return -1;
    pthread_once(&sextets_once, sextets_make);
    size_t o = 0;
    uint32_t group = 0;
    for (size_t i = 0; i < length; i++) {
        int value = sextet(in[i]);
        if (value < 0) return -1;
        group = group << 6 | (uint32_t)value;
        if (i % 4 == 3) {
            out[o++] = (unsigned char)(group >> 16);
            out[o++] = (unsigned char)(group >> 8);
            out[o++] = (unsigned char)group;
            group = 0;
        }
    }
    if (length % 4 == 2) {
        if (group & 15) return -1;
        out[o++] = (unsigned char)(group >> 4);
    } else if (length % 4 == 3) {
        if (group & 3) return -1;
        out[o++] = (unsigned char)(group >> 10);
        out[o++] = (unsigned char)(group >> 2);
    }
    return (long)o;
}

/* ---- the payload's JSON ---- */

/* Whether text is UTF-8 as jansson reads it: no overlong forms, no surrogates, nothing above
 * U+10FFFF (a user id jansson would refuse could be signed but never verified). */
static bool utf8_valid(const unsigned char *text, size_t length) {
    for (size_t i = 0; i < length;) {
        unsigned char c = text[i];
        size_t extra = c < 0x80                 ? 0
                       : c >= 0xc2 && c <= 0xdf ? 1
                       : (c & 0xf0) == 0xe0     ? 2
                       : c >= 0xf0 && c <= 0xf4 ? 3
                                                : 4;
        if (extra == 4 || length - i <= extra) return false;
        uint32_t point = extra == 0 ? c : c & (0x3f >> extra);
        for (size_t k = 1; k <= extra; k++) {
            if ((text[i + k] & 0xc0) != 0x80) return false;
            point = point << 6 | (text[i + k] & 0x3f);
        }
        if ((extra == 2 && (point < 0x800 || (point >= 0xd800 && point <= 0xdfff))) ||
            (extra == 3 && (point < 0x10000 || point > 0x10ffff)))
            return false;
        i += extra + 1;
    }
    return true;
}

/* Appends text as a JSON string: quote and backslash escaped, control characters as their
 * short escape or \u00XX, everything else (UTF-8 included) as it is. */
static size_t string_write(char *out, size_t o, const char *text) {
    out[o++] = '"';
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        const char *shorthand = *c == '"'    ? "\\\""
                                : *c == '\\' ? "\\\\"
                                : *c == '\b' ? "\\b"
                                : *c == '\f' ? "\\f"
                                : *c == '\n' ? "\\n"
                                : *c == '\r' ? "\\r"
                                : *c == '\t' ? "\\t"
                                             : NULL;
        if (shorthand) {
            memcpy(out + o, shorthand, 2);
            o += 2;
        } else if (*c < 0x20) {
            o += (size_t)snprintf(out + o, 7, "\\u%04x", *c);
        } else {
            out[o++] = (char)*c;
        }
    }
    out[o++] = '"';
    return o;
}

static size_t integer_write(char *out, size_t o, int64_t value) {
    return o + (size_t)snprintf(out + o, 24, "%lld", (long long)value);
}

static size_t literal_write(char *out, size_t o, const char *literal) {
    size_t length = strlen(literal);
    memcpy(out + o, literal, length);
    return o + length;
}

/* Whether claims keep the rules verify checks, so signing never writes a refused token. */
static bool claims_valid(const hf_token_claims_t *claims) {
    size_t subject_length = strnlen(claims->subject, sizeof claims->subject);
    size_t ticket_length = strnlen(claims->ticket_id, sizeof claims->ticket_id);
    return subject_length > 0 && subject_length <= HF_USER_ID_SIZE_MAX &&
           utf8_valid((const unsigned char *)claims->subject, subject_length) &&
           strnlen(claims->event_id, sizeof claims->event_id) <= HF_ID_SIZE_MAX &&
           hf_core_id_valid(claims->event_id) && ticket_length > 0 &&
           ticket_length <= HF_SERVER_ID_SIZE;
}

/* Writes the payload's JSON of valid claims into out (PAYLOAD_SIZE_MAX bytes); its length. */
static size_t payload_write(const hf_token_claims_t *claims, char *out) {
    size_t o = literal_write(out, 0, "{\"sub\":");
    o = string_write(out, o, claims->subject);
    o = literal_write(out, o, ",\"evt\":");
    o = string_write(out, o, claims->event_id);
    o = literal_write(out, o, ",\"iat\":");
    o = integer_write(out, o, claims->issued_at_s);
    o = literal_write(out, o, ",\"exp\":");
    o = integer_write(out, o, claims->expires_at_s);
    o = literal_write(out, o, ",\"jti\":");
    o = string_write(out, o, claims->ticket_id);
    out[o++] = '}';
    return o;
}

/* ---- signing ---- */

/* OpenSSL's HMAC-SHA256 keyed with the last secrets used on this thread. Fetching the
 * algorithms and keying cost more than the MAC of a token itself (1.3 us against 0.3 us for
 * HMAC() at each call), so each keyed context is kept and only reset per token. Two, since a
 * server has two secrets (admission and user tokens) and a buyer's hold in a waiting room
 * checks one token of each: with one context every such request would key it twice. Per
 * thread, so the functions stay usable from any thread; they live as long as the thread. */
#define KEYED_CONTEXTS 2
typedef struct keyed {
    EVP_MAC_CTX *mac;
    unsigned char key[HF_TOKEN_SECRET_SIZE_MAX];
    size_t key_size; /* 0: mac has no key yet */
} keyed_t;
static _Thread_local keyed_t keyed[KEYED_CONTEXTS];
static _Thread_local unsigned keyed_oldest; /* the one to key again when neither matches */

/* Keys slot's context with secret; NULL when OpenSSL fails. */
static EVP_MAC_CTX *context_key(keyed_t *slot, const hf_token_secret_t *secret) {
    if (!slot->mac) {
        EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
        slot->mac = mac ? EVP_MAC_CTX_new(mac) : NULL;
        EVP_MAC_free(mac); /* the context holds its own reference */
        if (!slot->mac) return NULL;
    }
    char digest_name[] = "SHA256";
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
        OSSL_PARAM_construct_end()};
    slot->key_size = 0;
    if (!EVP_MAC_init(slot->mac, secret->bytes, secret->size, parameters)) return NULL;
    memcpy(slot->key, secret->bytes, secret->size);
    slot->key_size = secret->size;
    return slot->mac;
}

static EVP_MAC_CTX *keyed_context(const hf_token_secret_t *secret) {
    for (unsigned i = 0; i < KEYED_CONTEXTS; i++)
        if (keyed[i].mac && keyed[i].key_size == secret->size &&
            CRYPTO_memcmp(keyed[i].key, secret->bytes, secret->size) == 0) {
            keyed_oldest = (i + 1) % KEYED_CONTEXTS;
            return keyed[i].mac;
        }
    keyed_t *slot = &keyed[keyed_oldest];
    keyed_oldest = (keyed_oldest + 1) % KEYED_CONTEXTS;
    return context_key(slot, secret);
}

/* HMAC-SHA256(secret, text) into digest; false when there is no secret or OpenSSL fails. */
static bool digest_make(const hf_token_secret_t *secret, const char *text, size_t length,
                        unsigned char digest[DIGEST_SIZE]) {
    if (!secret || secret->size == 0 || secret->size > sizeof secret->bytes) return false;
    EVP_MAC_CTX *context = keyed_context(secret);
    size_t written = 0;
    /* A NULL key restarts the MAC with the key already set. */
    return context && EVP_MAC_init(context, NULL, 0, NULL) &&
           EVP_MAC_update(context, (const unsigned char *)text, length) &&
           EVP_MAC_final(context, digest, &written, DIGEST_SIZE) && written == DIGEST_SIZE;
}

/* Writes HEADER_ENCODED "." BASE64URL(payload) "." BASE64URL(HMAC) with a NUL into out;
 * its length, or 0 when it would pass size_max or out_size, or there is no secret. */
static size_t token_write(const hf_token_secret_t *secret, const char *payload,
                          size_t payload_length, size_t size_max, char *out, size_t out_size) {
    size_t header_length = sizeof HEADER_ENCODED - 1;
    size_t signed_length = header_length + 1 + encoded_size(payload_length);
    size_t length = signed_length + 1 + encoded_size(DIGEST_SIZE);
    if (length > size_max || length + 1 > out_size) return 0;
    memcpy(out, HEADER_ENCODED, header_length);
    out[header_length] = '.';
    base64url_encode((const unsigned char *)payload, payload_length, out + header_length + 1);
    unsigned char digest[DIGEST_SIZE];
    if (!digest_make(secret, out, signed_length, digest)) return 0;
    out[signed_length] = '.';
    base64url_encode(digest, DIGEST_SIZE, out + signed_length + 1);
    out[length] = '\0';
    return length;
}

size_t hf_token_sign(const hf_token_secret_t *secret, const hf_token_claims_t *claims, char *out,
                     size_t out_size) {
    if (!claims || !out || !claims_valid(claims)) return 0;
    char payload[PAYLOAD_SIZE_MAX];
    size_t payload_length = payload_write(claims, payload);
    return token_write(secret, payload, payload_length, HF_TOKEN_SIZE_MAX, out, out_size);
}

/* Whether subject is a user id a user token may name: 1 to 128 bytes of UTF-8. */
static bool subject_valid(const char *subject, size_t length) {
    return length > 0 && length <= HF_USER_ID_SIZE_MAX &&
           utf8_valid((const unsigned char *)subject, length);
}

size_t hf_user_token_sign(const hf_token_secret_t *secret, const char *subject, int64_t issued_at_s,
                          int64_t expires_at_s, char *out, size_t out_size) {
    if (!subject || !out || !subject_valid(subject, strnlen(subject, HF_USER_ID_SIZE_MAX + 1)) ||
        expires_at_s <= issued_at_s || expires_at_s - issued_at_s > HF_USER_TOKEN_LIFETIME_S_MAX)
        return 0;
    char payload[USER_PAYLOAD_SIZE_MAX];
    size_t o = literal_write(payload, 0, "{\"sub\":");
    o = string_write(payload, o, subject);
    o = literal_write(payload, o, ",\"iat\":");
    o = integer_write(payload, o, issued_at_s);
    o = literal_write(payload, o, ",\"exp\":");
    o = integer_write(payload, o, expires_at_s);
    payload[o++] = '}';
    return token_write(secret, payload, o, HF_USER_TOKEN_SIZE_MAX, out, out_size);
}

/* ---- verifying ---- */

/* The three parts of a token, as written ([start, start + length) each) and decoded. */
typedef struct token_parts {
    const char *start[3];
    size_t length[3];
    unsigned char decoded[3][DECODED_SIZE_MAX];
    size_t decoded_size[3];
} token_parts_t;

/* Splits at the two dots and decodes each part; false when there are fewer or more dots or
 * a part is not strict base64url. Decoding reads no claim: it only rules out what no signer
 * writes, so a bad character is MALFORMED wherever it is. */
static bool parts_split(const char *token, size_t length, token_parts_t *parts) {
    size_t part = 0;
    parts->start[0] = token;
    for (size_t i = 0; i < length; i++) {
        if (token[i] != '.') continue;
        if (part == 2) return false;
        parts->length[part] = (size_t)(token + i - parts->start[part]);
        parts->start[++part] = token + i + 1;
    }
    if (part != 2) return false;
    parts->length[2] = (size_t)(token + length - parts->start[2]);
    for (part = 0; part < 3; part++) {
        long size = base64url_decode(parts->start[part], parts->length[part], parts->decoded[part]);
        if (size < 0) return false;
        parts->decoded_size[part] = (size_t)size;
    }
    return true;
}

/* Parses a decoded part as a JSON object; NULL when it is not one. */
static json_t *part_parse(const token_parts_t *parts, size_t part) {
    json_t *value = json_loadb((const char *)parts->decoded[part], parts->decoded_size[part],
                               JSON_REJECT_DUPLICATES, NULL);
    if (value && !json_is_object(value)) {
        json_decref(value);
        return NULL;
    }
    return value;
}

static hf_token_result_t algorithm_check(const token_parts_t *parts) {
    /* The header signing writes names HS256: no need to parse it (a third of a check). */
    if (parts->decoded_size[0] == sizeof HEADER_JSON - 1 &&
        memcmp(parts->decoded[0], HEADER_JSON, sizeof HEADER_JSON - 1) == 0)
        return HF_TOKEN_VALID;
    json_t *header = part_parse(parts, 0);
    if (!header) return HF_TOKEN_MALFORMED;
    json_t *algorithm = json_object_get(header, "alg");
    /* Exactly "HS256", by jansson's length: nothing after it, no other case. */
    bool hs256 = json_is_string(algorithm) && json_string_length(algorithm) == 5 &&
                 memcmp(json_string_value(algorithm), "HS256", 5) == 0;
    json_decref(header);
    return hs256 ? HF_TOKEN_VALID : HF_TOKEN_BAD_ALGORITHM;
}

static hf_token_result_t signature_check(const hf_token_secret_t *secret,
                                         const token_parts_t *parts) {
    unsigned char expected[DIGEST_SIZE];
    size_t signed_length = parts->length[0] + 1 + parts->length[1];
    if (parts->decoded_size[2] != DIGEST_SIZE ||
        !digest_make(secret, parts->start[0], signed_length, expected))
        return HF_TOKEN_BAD_SIGNATURE;
    return CRYPTO_memcmp(parts->decoded[2], expected, DIGEST_SIZE) == 0 ? HF_TOKEN_VALID
                                                                        : HF_TOKEN_BAD_SIGNATURE;
}

/* Copies a string member of 1 to size_max bytes into out; false otherwise. */
static bool string_claim(json_t *payload, const char *name, char *out, size_t size_max) {
    json_t *member = json_object_get(payload, name);
    if (!json_is_string(member)) return false;
    size_t length = json_string_length(member);
    const char *text = json_string_value(member);
    if (length == 0 || length > size_max || memchr(text, '\0', length)) return false;
    memcpy(out, text, length);
    out[length] = '\0';
    return true;
}

static bool integer_claim(json_t *payload, const char *name, int64_t *out) {
    json_t *member = json_object_get(payload, name);
    if (!json_is_integer(member)) return false;
    *out = (int64_t)json_integer_value(member);
    return true;
}

/* Reads the signed payload's claims, then requires that the header and the payload are the
 * very bytes signing writes for them. */
static hf_token_result_t claims_read(const token_parts_t *parts, hf_token_claims_t *claims) {
    json_t *payload = part_parse(parts, 1);
    if (!payload) return HF_TOKEN_MALFORMED;
    bool read = json_object_size(payload) == 5 &&
                string_claim(payload, "sub", claims->subject, HF_USER_ID_SIZE_MAX) &&
                string_claim(payload, "evt", claims->event_id, HF_ID_SIZE_MAX) &&
                integer_claim(payload, "iat", &claims->issued_at_s) &&
                integer_claim(payload, "exp", &claims->expires_at_s) &&
                string_claim(payload, "jti", claims->ticket_id, HF_SERVER_ID_SIZE);
    json_decref(payload);
    if (!read || !claims_valid(claims)) return HF_TOKEN_MALFORMED;
    char canonical[PAYLOAD_SIZE_MAX];
    size_t length = payload_write(claims, canonical);
    bool same = parts->decoded_size[0] == sizeof HEADER_JSON - 1 &&
                memcmp(parts->decoded[0], HEADER_JSON, sizeof HEADER_JSON - 1) == 0 &&
                parts->decoded_size[1] == length &&
                memcmp(parts->decoded[1], canonical, length) == 0;
    return same ? HF_TOKEN_VALID : HF_TOKEN_MALFORMED;
}

/* The checks every HS256 token gets, in this order: its length (at most size_max), three
 * strict base64url parts, the header's alg, the signature. Reads no claim. */
static hf_token_result_t token_open(const hf_token_secret_t *secret, const char *token,
                                    size_t length, size_t size_max, token_parts_t *parts) {
    if (!token || length == 0 || length > size_max || !parts_split(token, length, parts))
        return HF_TOKEN_MALFORMED;
    hf_token_result_t result = algorithm_check(parts);
    return result == HF_TOKEN_VALID ? signature_check(secret, parts) : result;
}

/* now_ms in whole seconds, rounded down (also before 1970). */
static int64_t seconds_of(int64_t now_ms) { return now_ms / 1000 - (now_ms % 1000 < 0); }

hf_token_result_t hf_token_verify(const hf_token_secret_t *secret, const char *token, size_t length,
                                  int64_t now_ms, hf_token_claims_t *claims) {
    hf_token_claims_t scratch;
    if (!claims) claims = &scratch;
    memset(claims, 0, sizeof *claims);
    token_parts_t parts;
    /* The algorithm before the signature, the signature before any claim is read. */
    hf_token_result_t result = token_open(secret, token, length, HF_TOKEN_SIZE_MAX, &parts);
    if (result == HF_TOKEN_VALID) result = claims_read(&parts, claims);
    if (result != HF_TOKEN_VALID) {
        memset(claims, 0, sizeof *claims);
        return result;
    }
    return seconds_of(now_ms) >= claims->expires_at_s ? HF_TOKEN_EXPIRED : HF_TOKEN_VALID;
}

/* ---- user tokens ---- */

/* What a payload says of the three claims, before they are judged: read by the flat reader
 * or by jansson, judged alike (raw_claims_judge). */
typedef struct raw_claims {
    bool subject_absent, subject_string; /* no sub; sub is a string */
    const char *subject;                 /* subject_string: its bytes, borrowed */
    size_t subject_length;
    bool times_absent; /* no iat or no exp */
    bool times_read;   /* both are numbers within int64's range */
    int64_t issued_at_s, expires_at_s;
} raw_claims_t;

/* A NumericDate (RFC 7519: seconds, fractions allowed) of real value rounded down into *out;
 * false out of int64's range (2^62 s is far past any exp a platform writes, and keeps the
 * sums of the checks from wrapping). */
static bool real_time(double value, int64_t *out) {
    if (!(value > -4.6e18 && value < 4.6e18)) return false;
    int64_t whole = (int64_t)value;
    *out = whole - ((double)whole > value);
    return true;
}

/* A time claim of jansson's payload; false when absent (*absent set) or not a number. */
static bool json_time(json_t *payload, const char *name, int64_t *out, bool *absent) {
    json_t *member = json_object_get(payload, name);
    *absent = member == NULL;
    if (json_is_integer(member)) {
        *out = (int64_t)json_integer_value(member);
        return true;
    }
    return json_is_real(member) && real_time(json_real_value(member), out);
}

static bool flat_time(const hf_flat_json_t *flat, const char *name, int64_t *out, bool *absent) {
    const hf_flat_json_member_t *member = hf_flat_json_member(flat, name);
    *absent = member == NULL;
    if (member && member->kind == HF_FLAT_JSON_INTEGER) {
        *out = member->integer;
        return true;
    }
    return member && member->kind == HF_FLAT_JSON_REAL && real_time(member->real, out);
}

static hf_token_result_t raw_claims_judge(const raw_claims_t *raw, hf_user_token_claims_t *claims) {
    if (raw->subject_absent || raw->times_absent) return HF_TOKEN_MISSING_CLAIM;
    if (!raw->subject_string || !raw->times_read ||
        !subject_valid(raw->subject, raw->subject_length) ||
        memchr(raw->subject, '\0', raw->subject_length))
        return HF_TOKEN_MALFORMED;
    memcpy(claims->subject, raw->subject, raw->subject_length);
    claims->subject[raw->subject_length] = '\0';
    claims->issued_at_s = raw->issued_at_s;
    claims->expires_at_s = raw->expires_at_s;
    return HF_TOKEN_VALID;
}

/* The flat reader's reading of a flat payload (a platform's usually is: a few hundred
 * instructions, no allocation); false when it declines, and jansson reads it. */
static bool flat_claims(const token_parts_t *parts, hf_flat_json_t *flat, raw_claims_t *raw) {
    if (!hf_flat_json_read(flat, (const char *)parts->decoded[1], parts->decoded_size[1]))
        return false;
    const hf_flat_json_member_t *subject = hf_flat_json_member(flat, "sub");
    bool iat_absent, exp_absent;
    bool iat_read = flat_time(flat, "iat", &raw->issued_at_s, &iat_absent);
    bool exp_read = flat_time(flat, "exp", &raw->expires_at_s, &exp_absent);
    raw->subject_absent = subject == NULL;
    raw->subject_string = subject && subject->kind == HF_FLAT_JSON_STRING;
    raw->subject = raw->subject_string ? subject->string : NULL;
    raw->subject_length = raw->subject_string ? subject->length : 0;
    raw->times_absent = iat_absent || exp_absent;
    raw->times_read = iat_read && exp_read;
    return true;
}

/* Reads sub, iat and exp of a signed user token's payload. */
static hf_token_result_t user_claims_read(const token_parts_t *parts,
                                          hf_user_token_claims_t *claims) {
    raw_claims_t raw;
    hf_flat_json_t flat;
    if (flat_claims(parts, &flat, &raw)) return raw_claims_judge(&raw, claims);
    json_t *payload = part_parse(parts, 1);
    if (!payload) return HF_TOKEN_MALFORMED;
    json_t *subject = json_object_get(payload, "sub");
    bool iat_absent, exp_absent;
    bool iat_read = json_time(payload, "iat", &raw.issued_at_s, &iat_absent);
    bool exp_read = json_time(payload, "exp", &raw.expires_at_s, &exp_absent);
    raw.subject_absent = subject == NULL;
    raw.subject_string = json_is_string(subject);
    raw.subject = raw.subject_string ? json_string_value(subject) : NULL;
    raw.subject_length = raw.subject_string ? json_string_length(subject) : 0;
    raw.times_absent = iat_absent || exp_absent;
    raw.times_read = iat_read && exp_read;
    hf_token_result_t result = raw_claims_judge(&raw, claims);
    json_decref(payload);
    return result;
}

/* The times of valid claims at now_s: the lifetime first (a token that could never be
 * accepted says so whenever it comes), then iat, then exp. */
static hf_token_result_t user_times_check(const hf_user_token_claims_t *claims, int64_t now_s) {
    if (claims->expires_at_s - claims->issued_at_s > HF_USER_TOKEN_LIFETIME_S_MAX)
        return HF_TOKEN_LIFETIME_TOO_LONG;
    if (claims->issued_at_s > now_s + HF_USER_TOKEN_CLOCK_SKEW_S) return HF_TOKEN_NOT_YET_VALID;
    return now_s >= claims->expires_at_s ? HF_TOKEN_EXPIRED : HF_TOKEN_VALID;
}

hf_token_result_t hf_user_token_verify(const hf_token_secret_t *secret, const char *token,
                                       size_t length, int64_t now_ms,
                                       hf_user_token_claims_t *claims) {
    hf_user_token_claims_t scratch;
    if (!claims) claims = &scratch;
    memset(claims, 0, sizeof *claims);
    token_parts_t parts;
    hf_token_result_t result = token_open(secret, token, length, HF_USER_TOKEN_SIZE_MAX, &parts);
    if (result == HF_TOKEN_VALID) result = user_claims_read(&parts, claims);
    if (result == HF_TOKEN_VALID) result = user_times_check(claims, seconds_of(now_ms));
    if (result != HF_TOKEN_VALID) memset(claims, 0, sizeof *claims);
    return result;
}

const char *hf_token_result_reason(hf_token_result_t result) {
    static const char *const reasons[HF_TOKEN_RESULT_COUNT] = {
        [HF_TOKEN_VALID] = NULL,
        [HF_TOKEN_MALFORMED] = "malformed",
        [HF_TOKEN_BAD_ALGORITHM] = "alg_not_allowed",
        [HF_TOKEN_BAD_SIGNATURE] = "bad_signature",
        [HF_TOKEN_EXPIRED] = "expired",
        [HF_TOKEN_MISSING_CLAIM] = "missing_claim",
        [HF_TOKEN_NOT_YET_VALID] = "not_yet_valid",
        [HF_TOKEN_LIFETIME_TOO_LONG] = "lifetime_too_long",
    };
    return (unsigned)result < HF_TOKEN_RESULT_COUNT ? reasons[result] : NULL;
}
