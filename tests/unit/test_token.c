/* The admission token (engine/token.c): a round trip, two known answers computed outside
 * Holdfast, and every refusal: the algorithm (none, HS512, hs256, missing, not a string), the
 * signature (another secret, a changed header or payload), the claims (missing, mistyped,
 * out of range, not in the signed spelling), expiry at the very second, and the encoding
 * (padding, other alphabets, non-canonical bits, extra dots, a 10 KB token).
 *
 * User tokens (section 16), verified by the same code: a round trip, a known answer made
 * outside Holdfast (Python's hmac, another header order and an extra claim), and every
 * refusal reason: malformed (a 10 KB token among them), alg_not_allowed (none, HS512),
 * bad_signature, missing_claim (no exp), expired, not_yet_valid (iat 61 s ahead),
 * lifetime_too_long (24 h + 1 s).
 *
 * Forged tokens are built here with OpenSSL's EVP_EncodeBlock and HMAC, not with the code
 * under test, so a refusal is the verifier's own decision about a correctly signed token. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "engine/token.h"

#define NOW_MS 1700000100000LL
#define HEADER "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"
#define PAYLOAD_OF(sub, rest) "{\"sub\":\"" sub "\"," rest "}"
#define GOOD_REST "\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900,\"jti\":\"q_1\""

static hf_token_secret_t secret_of(const char *text) {
    hf_token_secret_t secret = {.size = strlen(text)};
    memcpy(secret.bytes, text, secret.size);
    return secret;
}

/* base64url without padding, from OpenSSL's standard base64. */
static void encode(const void *bytes, size_t size, char *out) {
    unsigned char standard[65536];
    int length = EVP_EncodeBlock(standard, bytes, (int)size);
    while (length > 0 && standard[length - 1] == '=') length--;
    for (int i = 0; i < length; i++)
        out[i] = standard[i] == '+' ? '-' : standard[i] == '/' ? '_' : (char)standard[i];
    out[length] = '\0';
}

/* A token of these JSON texts, signed with key (NULL: signature as given in raw_signature). */
static void forge(const char *header, const char *payload, const char *key,
                  const char *raw_signature, char *out) {
    char part[65536];
    encode(header, strlen(header), out);
    strcat(out, ".");
    encode(payload, strlen(payload), part);
    strcat(out, part);
    if (key) {
        unsigned char digest[32];
        unsigned int size = 0;
        HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)out, strlen(out), digest,
             &size);
        encode(digest, size, part);
    } else {
        strcpy(part, raw_signature ? raw_signature : "");
    }
    strcat(out, ".");
    strcat(out, part);
}

static const char *KEY = "0123456789abcdef0123456789abcdef";

static hf_token_result_t check(const char *token) {
    hf_token_secret_t secret = secret_of(KEY);
    hf_token_claims_t claims;
    return hf_token_verify(&secret, token, strlen(token), NOW_MS, &claims);
}

static hf_token_result_t check_payload(const char *payload) {
    char token[16384];
    forge(HEADER, payload, KEY, NULL, token);
    return check(token);
}

static hf_token_claims_t good_claims(void) {
    hf_token_claims_t claims = {.issued_at_s = 1700000000, .expires_at_s = 1700000900};
    /* Quote, newline, backslash, 2-, 3- and 4-byte UTF-8 (é € 😀), a control character. */
    strcpy(claims.subject, "user \"42\"\n\\ caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x01");
    strcpy(claims.event_id, "e1");
    strcpy(claims.ticket_id, "q_0123456789abcdef0123456789abcdef0123");
    return claims;
}

static void test_round_trip(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY);
    hf_token_claims_t claims = good_claims(), read;
    char token[HF_TOKEN_SIZE_MAX + 1];
    size_t length = hf_token_sign(&secret, &claims, token, sizeof token);
    assert_true(length > 0);
    assert_int_equal(length, strlen(token));
    assert_int_equal(hf_token_verify(&secret, token, length, NOW_MS, &read), HF_TOKEN_VALID);
    assert_string_equal(read.subject, claims.subject);
    assert_string_equal(read.event_id, "e1");
    assert_string_equal(read.ticket_id, claims.ticket_id);
    assert_int_equal(read.issued_at_s, 1700000000);
    assert_int_equal(read.expires_at_s, 1700000900);
    /* Too small an output: nothing, and the exact size with its NUL works. */
    assert_int_equal(hf_token_sign(&secret, &claims, token, length), 0);
    assert_int_equal(hf_token_sign(&secret, &claims, token, length + 1), length);
    /* The longest user id of control characters still fits and verifies. */
    memset(claims.subject, 0x1f, HF_USER_ID_SIZE_MAX);
    claims.subject[HF_USER_ID_SIZE_MAX] = '\0';
    strcpy(claims.event_id, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    claims.issued_at_s = INT64_MIN;
    claims.expires_at_s = INT64_MAX;
    length = hf_token_sign(&secret, &claims, token, sizeof token);
    assert_true(length > 1024 && length <= HF_TOKEN_SIZE_MAX);
    assert_int_equal(hf_token_verify(&secret, token, length, NOW_MS, &read), HF_TOKEN_VALID);
    assert_memory_equal(read.subject, claims.subject, HF_USER_ID_SIZE_MAX + 1);
}

/* Computed with python3:
 *   b = lambda x: base64.urlsafe_b64encode(x).rstrip(b'=').decode()
 *   p = json.dumps({"sub": ..., "evt": ..., "iat": ..., "exp": ..., "jti": ...},
 *                  separators=(',', ':'), ensure_ascii=False).encode()
 *   s = b(b'{"alg":"HS256","typ":"JWT"}') + '.' + b(p)
 *   s + '.' + b(hmac.new(KEY, s.encode(), hashlib.sha256).digest()) */
static void test_known_answers(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY);
    char token[HF_TOKEN_SIZE_MAX + 1];
    hf_token_claims_t claims = {.issued_at_s = 1700000000, .expires_at_s = 1700000900};
    strcpy(claims.subject, "u\"1\n");
    strcpy(claims.event_id, "concert.1");
    strcpy(claims.ticket_id, "q_0123456789abcdef0123456789abcdef0123");
    const char *expected =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1XCIxXG4iLCJldnQiOiJjb25jZXJ0LjEiLCJp"
        "YXQiOjE3MDAwMDAwMDAsImV4cCI6MTcwMDAwMDkwMCwianRpIjoicV8wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1"
        "Njc4OWFiY2RlZjAxMjMifQ.MRdESaqAo4Q0tGa8iXwkW-OlXECxMP-5E4DTlq9mvl4";
    assert_int_equal(hf_token_sign(&secret, &claims, token, sizeof token), strlen(expected));
    assert_string_equal(token, expected);

    hf_token_claims_t other = {.issued_at_s = -5, .expires_at_s = 0};
    strcpy(other.subject, "caf\xc3\xa9\x01/");
    strcpy(other.event_id, "e_2");
    strcpy(other.ticket_id, "q_1");
    expected = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYWbDqVx1MDAwMS8iLCJldnQiOiJlXzI"
               "iLCJpYXQiOi01LCJleHAiOjAsImp0aSI6InFfMSJ9.auKGuOZmAF453N8Ax2j9T4BPO5uEz1nfMCDLC3"
               "vvLII";
    assert_int_equal(hf_token_sign(&secret, &other, token, sizeof token), strlen(expected));
    assert_string_equal(token, expected);
    hf_token_claims_t read;
    /* exp 0 is long past: expired, with its claims trusted and filled. */
    assert_int_equal(hf_token_verify(&secret, expected, strlen(expected), NOW_MS, &read),
                     HF_TOKEN_EXPIRED);
    assert_string_equal(read.subject, other.subject);
    assert_int_equal(hf_token_verify(&secret, expected, strlen(expected), -1, &read),
                     HF_TOKEN_VALID);
}

static void test_algorithm(void **state) {
    (void)state;
    char token[16384];
    const char *payload = PAYLOAD_OF("u1", GOOD_REST);
    /* alg none with an empty signature: refused for its algorithm, whatever the key. */
    forge("{\"alg\":\"none\",\"typ\":\"JWT\"}", payload, NULL, "", token);
    assert_int_equal(check(token), HF_TOKEN_BAD_ALGORITHM);
    const char *headers[] = {
        "{\"alg\":\"none\"}",    "{\"alg\":\"HS512\",\"typ\":\"JWT\"}",
        "{\"alg\":\"hs256\"}",   "{\"typ\":\"JWT\"}",
        "{\"alg\":null}",        "{\"alg\":256}",
        "{\"alg\":[\"HS256\"]}", "{\"alg\":\"HS256 \"}",
        "{\"alg\":\"HS25\"}",
    };
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        forge(headers[i], payload, KEY, NULL, token); /* even correctly signed */
        assert_int_equal(check(token), HF_TOKEN_BAD_ALGORITHM);
    }
    /* A header that is not a JSON object, or has a duplicated member: malformed. */
    forge("[\"HS256\"]", payload, KEY, NULL, token);
    assert_int_equal(check(token), HF_TOKEN_MALFORMED);
    forge("{\"alg\":\"HS256\",\"alg\":\"HS256\"}", payload, KEY, NULL, token);
    assert_int_equal(check(token), HF_TOKEN_MALFORMED);
    /* The algorithm is checked before the signature: HS512 with garbage is BAD_ALGORITHM. */
    forge("{\"alg\":\"HS512\"}", payload, NULL, "AAAA", token);
    assert_int_equal(check(token), HF_TOKEN_BAD_ALGORITHM);
    /* HS256 signed correctly but spelled other than the server writes: malformed. */
    forge("{\"typ\":\"JWT\",\"alg\":\"HS256\"}", payload, KEY, NULL, token);
    assert_int_equal(check(token), HF_TOKEN_MALFORMED);
    forge(HEADER, payload, KEY, NULL, token);
    assert_int_equal(check(token), HF_TOKEN_VALID);
}

static void test_signature(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY),
                      other = secret_of("another secret of 32 bytes!!!!!!");
    hf_token_claims_t claims = good_claims();
    char token[HF_TOKEN_SIZE_MAX + 1], changed[HF_TOKEN_SIZE_MAX + 1];
    size_t length = hf_token_sign(&secret, &claims, token, sizeof token);
    assert_int_equal(hf_token_verify(&other, token, length, NOW_MS, NULL), HF_TOKEN_BAD_SIGNATURE);
    hf_token_secret_t empty = {.size = 0};
    assert_int_equal(hf_token_verify(&empty, token, length, NOW_MS, NULL), HF_TOKEN_BAD_SIGNATURE);
    assert_int_equal(hf_token_sign(&empty, &claims, changed, sizeof changed), 0);
    /* Every single-character change of the payload or the signature is caught. */
    const char *first_dot = strchr(token, '.');
    for (size_t i = (size_t)(first_dot - token) + 1; i < length; i++) {
        if (token[i] == '.') continue;
        memcpy(changed, token, length + 1);
        changed[i] = token[i] == 'A' ? 'B' : 'A';
        hf_token_result_t result = hf_token_verify(&secret, changed, length, NOW_MS, NULL);
        /* A change in the last character's unused bits is a non-canonical spelling. */
        assert_true(result == HF_TOKEN_BAD_SIGNATURE || result == HF_TOKEN_MALFORMED);
        assert_int_not_equal(result, HF_TOKEN_VALID);
    }
    /* A payload of another user, signed with another key: the signature, not the claims. */
    char forged[16384];
    forge(HEADER, PAYLOAD_OF("admin", GOOD_REST), "another secret of 32 bytes!!!!!!", NULL, forged);
    assert_int_equal(check(forged), HF_TOKEN_BAD_SIGNATURE);
    /* A changed header: its new bytes are not what was signed. */
    char header_changed[16384];
    forge("{\"alg\":\"HS256\",\"typ\":\"JWS\"}", PAYLOAD_OF("u1", GOOD_REST), NULL, "x",
          header_changed);
    strcpy(strrchr(header_changed, '.') + 1, strrchr(token, '.') + 1);
    assert_int_equal(check(header_changed), HF_TOKEN_BAD_SIGNATURE);
    /* A signature of the wrong length. */
    forge(HEADER, PAYLOAD_OF("u1", GOOD_REST), NULL, "AAAA", forged);
    assert_int_equal(check(forged), HF_TOKEN_BAD_SIGNATURE);
}

static void test_expiry(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY);
    hf_token_claims_t claims = good_claims(), read;
    char token[HF_TOKEN_SIZE_MAX + 1];
    size_t length = hf_token_sign(&secret, &claims, token, sizeof token);
    int64_t exp_ms = claims.expires_at_s * 1000;
    assert_int_equal(hf_token_verify(&secret, token, length, exp_ms - 1, &read), HF_TOKEN_VALID);
    assert_int_equal(hf_token_verify(&secret, token, length, exp_ms, &read), HF_TOKEN_EXPIRED);
    assert_string_equal(read.ticket_id, claims.ticket_id);
    assert_int_equal(hf_token_verify(&secret, token, length, exp_ms + 999, &read),
                     HF_TOKEN_EXPIRED);
}

static void test_claims(void **state) {
    (void)state;
    const char *refused[] = {
        "{\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900,\"jti\":\"q_1\"}", /* no sub */
        PAYLOAD_OF("u1", "\"iat\":1700000000,\"exp\":1700000900,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"exp\":1700000900,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1700000000,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900"),
        "{\"sub\":42,\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900,\"jti\":\"q_1\"}",
        PAYLOAD_OF("u1", "\"evt\":7,\"iat\":1700000000,\"exp\":1700000900,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1",
                   "\"evt\":\"e1\",\"iat\":\"1700000000\",\"exp\":1700000900,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900.0,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1700000000,\"exp\":null,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1700000000,\"exp\":1700000900,\"jti\":1"),
        PAYLOAD_OF("", GOOD_REST), /* empty sub */
        PAYLOAD_OF("u1", "\"evt\":\"e-1\",\"iat\":1,\"exp\":1700000900,\"jti\":\"q_1\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1,\"exp\":1700000900,\"jti\":\"\""),
        PAYLOAD_OF("u1", "\"evt\":\"e1\",\"iat\":1,\"exp\":1700000900,"
                         "\"jti\":\"q_0123456789abcdef0123456789abcdef012345678\""), /* 41 bytes */
        PAYLOAD_OF("u\\u0000", GOOD_REST),                                           /* a NUL */
        PAYLOAD_OF("u1", GOOD_REST ",\"admin\":true"), /* a sixth claim */
        PAYLOAD_OF("u1", GOOD_REST ",\"sub\":\"u2\""), /* a duplicate */
        PAYLOAD_OF("u1", "\"iat\":1700000000,\"evt\":\"e1\",\"exp\":1700000900,\"jti\":\"q_1\""),
        "{\"sub\": \"u1\"," GOOD_REST "}",       /* a blank */
        PAYLOAD_OF("\\u0075\\u0031", GOOD_REST), /* other escapes */
        "[\"u1\"]",
        "\"u1\"",
        "not json",
        "",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        hf_token_result_t result = check_payload(refused[i]);
        if (result != HF_TOKEN_MALFORMED) fail_msg("payload %zu: %d", i, result);
    }
    assert_int_equal(check_payload(PAYLOAD_OF("u1", GOOD_REST)), HF_TOKEN_VALID);
    /* A sub of 129 bytes is refused; 128 accepted. */
    char payload[1024], sub[HF_USER_ID_SIZE_MAX + 2];
    memset(sub, 'x', sizeof sub - 1);
    sub[sizeof sub - 1] = '\0';
    snprintf(payload, sizeof payload, "{\"sub\":\"%s\"," GOOD_REST "}", sub);
    assert_int_equal(check_payload(payload), HF_TOKEN_MALFORMED);
    sub[HF_USER_ID_SIZE_MAX] = '\0';
    snprintf(payload, sizeof payload, "{\"sub\":\"%s\"," GOOD_REST "}", sub);
    assert_int_equal(check_payload(payload), HF_TOKEN_VALID);
    /* Signing refuses claims that verify would refuse. */
    hf_token_secret_t secret = secret_of(KEY);
    char token[HF_TOKEN_SIZE_MAX + 1];
    hf_token_claims_t claims = good_claims();
    claims.subject[0] = '\0';
    assert_int_equal(hf_token_sign(&secret, &claims, token, sizeof token), 0);
    /* Not UTF-8 as jansson reads it: overlong, a surrogate, above U+10FFFF, cut short. */
    const char *not_utf8[] = {"bad \xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                              "cut \xe2\x82", "\x80",         "\xf8\x88\x80\x80\x80"};
    for (size_t i = 0; i < sizeof not_utf8 / sizeof *not_utf8; i++) {
        claims = good_claims();
        strcpy(claims.subject, not_utf8[i]);
        assert_int_equal(hf_token_sign(&secret, &claims, token, sizeof token), 0);
    }
    claims = good_claims();
    strcpy(claims.event_id, "no-dash");
    assert_int_equal(hf_token_sign(&secret, &claims, token, sizeof token), 0);
    claims = good_claims();
    claims.ticket_id[0] = '\0';
    assert_int_equal(hf_token_sign(&secret, &claims, token, sizeof token), 0);
}

static void test_encoding(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY);
    hf_token_claims_t claims = good_claims();
    char token[HF_TOKEN_SIZE_MAX + 1], changed[HF_TOKEN_SIZE_MAX + 16];
    size_t length = hf_token_sign(&secret, &claims, token, sizeof token);
    /* Padding after the signature (43 characters + "="), or after a part. */
    snprintf(changed, sizeof changed, "%s=", token);
    assert_int_equal(check(changed), HF_TOKEN_MALFORMED);
    /* Standard base64's characters, a blank, a NUL inside. */
    const char replacements[] = {'+', '/', '=', ' ', '\0', '\n'};
    for (size_t i = 0; i < sizeof replacements; i++) {
        memcpy(changed, token, length + 1);
        changed[40] = replacements[i];
        assert_int_equal(hf_token_verify(&secret, changed, length, NOW_MS, NULL),
                         HF_TOKEN_MALFORMED);
    }
    /* Extra dots, missing parts. */
    snprintf(changed, sizeof changed, "%s.", token);
    assert_int_equal(check(changed), HF_TOKEN_MALFORMED);
    snprintf(changed, sizeof changed, "%s.AAAA", token);
    assert_int_equal(check(changed), HF_TOKEN_MALFORMED);
    assert_int_equal(check(strrchr(token, '.') + 1), HF_TOKEN_MALFORMED);
    assert_int_equal(check(".."), HF_TOKEN_MALFORMED);
    assert_int_equal(check(""), HF_TOKEN_MALFORMED);
    assert_int_equal(hf_token_verify(&secret, NULL, 0, NOW_MS, NULL), HF_TOKEN_MALFORMED);
    /* The signature's last character carries 2 unused bits: set one and it is refused. */
    memcpy(changed, token, length + 1);
    char *last = changed + length - 1;
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    *last = alphabet[(strchr(alphabet, *last) - alphabet) | 1];
    assert_int_equal(check(changed), HF_TOKEN_MALFORMED);
    /* A part of 1 character modulo 4 cannot be base64. */
    forge(HEADER, PAYLOAD_OF("u1", GOOD_REST), NULL, "AAAAA", changed);
    assert_int_equal(check(changed), HF_TOKEN_MALFORMED);
}

static void test_size(void **state) {
    (void)state;
    /* 10 KB: refused by length, though correctly signed. */
    char payload[12000], token[65536];
    int n = snprintf(payload, sizeof payload, "{\"sub\":\"u1\"," GOOD_REST ",\"pad\":\"");
    memset(payload + n, 'x', 10000);
    strcpy(payload + n + 10000, "\"}");
    forge(HEADER, payload, KEY, NULL, token);
    assert_true(strlen(token) > 10000);
    assert_int_equal(check(token), HF_TOKEN_MALFORMED);
    /* One byte over the bound: refused before anything is read, even a good prefix. */
    hf_token_secret_t secret = secret_of(KEY);
    hf_token_claims_t claims = good_claims();
    size_t length = hf_token_sign(&secret, &claims, token, sizeof token);
    assert_int_equal(hf_token_verify(&secret, token, HF_TOKEN_SIZE_MAX + 1, NOW_MS, NULL),
                     HF_TOKEN_MALFORMED);
    assert_int_equal(hf_token_verify(&secret, token, length, NOW_MS, NULL), HF_TOKEN_VALID);
}

/* ---- user tokens ---- */

#define USER_NOW_S 1700000100LL
#define USER_HEADER "{\"typ\":\"JWT\",\"alg\":\"HS256\"}"

static hf_token_result_t user_check(const char *token, hf_user_token_claims_t *claims) {
    hf_token_secret_t secret = secret_of(KEY);
    return hf_user_token_verify(&secret, token, strlen(token), USER_NOW_S * 1000 + 500, claims);
}

/* A user token of header and payload signed with KEY; its result. */
static hf_token_result_t user_forged(const char *header, const char *payload) {
    char token[16384];
    forge(header, payload, KEY, NULL, token);
    return user_check(token, NULL);
}

static void test_user_round_trip(void **state) {
    (void)state;
    hf_token_secret_t secret = secret_of(KEY);
    char token[HF_USER_TOKEN_SIZE_MAX + 1];
    const char *subject = "user \"42\" caf\xc3\xa9";
    size_t length = hf_user_token_sign(&secret, subject, USER_NOW_S, USER_NOW_S + 3600, token,
                                       sizeof token);
    assert_true(length > 0);
    hf_user_token_claims_t claims;
    assert_int_equal(user_check(token, &claims), HF_TOKEN_VALID);
    assert_string_equal(claims.subject, subject);
    assert_int_equal(claims.issued_at_s, USER_NOW_S);
    assert_int_equal(claims.expires_at_s, USER_NOW_S + 3600);
    /* Signing refuses what verifying would: no lifetime, too long a one, an empty user. */
    assert_int_equal(hf_user_token_sign(&secret, "u", 10, 10, token, sizeof token), 0);
    assert_int_equal(hf_user_token_sign(&secret, "u", 10, 10 + 86401, token, sizeof token), 0);
    assert_int_equal(hf_user_token_sign(&secret, "", 10, 20, token, sizeof token), 0);
    /* An admission token's verifier refuses a user token: it is not its payload. */
    assert_int_equal(hf_token_verify(&secret, token, length, USER_NOW_S * 1000, NULL),
                     HF_TOKEN_MALFORMED);
}

static void test_user_known_answer(void **state) {
    (void)state;
    /* Made with Python's hmac and base64 from KEY: header members in another order, and a
     * claim the server does not know (ignored). */
    const char *token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9."
                        "eyJzdWIiOiJ1MSIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAzNjAwLCJyb2xlIjoiYn"
                        "V5ZXIifQ.eBq67ib3cYoKFw0N7pQP87qj-KkzKTVMyDtmGOkb8w4";
    hf_user_token_claims_t claims;
    assert_int_equal(user_check(token, &claims), HF_TOKEN_VALID);
    assert_string_equal(claims.subject, "u1");
    assert_int_equal(claims.expires_at_s, 1700003600);
    /* One character of the signature changed. */
    char changed[512];
    strcpy(changed, token);
    changed[strlen(changed) - 2] = changed[strlen(changed) - 2] == 'A' ? 'B' : 'A';
    assert_int_equal(user_check(changed, NULL), HF_TOKEN_BAD_SIGNATURE);
}

static void test_user_refusals(void **state) {
    (void)state;
    const char *good = "{\"sub\":\"u1\",\"iat\":1700000000,\"exp\":1700003600}";
    assert_int_equal(user_forged(USER_HEADER, good), HF_TOKEN_VALID);
    /* alg: none (no signature at all), HS512, the case changed. */
    char token[16384];
    forge("{\"alg\":\"none\",\"typ\":\"JWT\"}", good, NULL, "", token);
    assert_int_equal(user_check(token, NULL), HF_TOKEN_BAD_ALGORITHM);
    assert_int_equal(user_forged("{\"alg\":\"HS512\"}", good), HF_TOKEN_BAD_ALGORITHM);
    assert_int_equal(user_forged("{\"alg\":\"hs256\"}", good), HF_TOKEN_BAD_ALGORITHM);
    /* Another key. */
    forge(USER_HEADER, good, "another key, 16 bytes or more", NULL, token);
    assert_int_equal(user_check(token, NULL), HF_TOKEN_BAD_SIGNATURE);
    /* Claims: absent, or of the wrong kind. */
    assert_int_equal(user_forged(USER_HEADER, "{\"sub\":\"u1\",\"iat\":1700000000}"),
                     HF_TOKEN_MISSING_CLAIM);
    assert_int_equal(user_forged(USER_HEADER, "{\"iat\":1700000000,\"exp\":1700003600}"),
                     HF_TOKEN_MISSING_CLAIM);
    assert_int_equal(user_forged(USER_HEADER, "{\"sub\":\"u1\",\"exp\":1700003600}"),
                     HF_TOKEN_MISSING_CLAIM);
    assert_int_equal(user_forged(USER_HEADER, "{\"sub\":7,\"iat\":1700000000,\"exp\":1700003600}"),
                     HF_TOKEN_MALFORMED);
    assert_int_equal(
        user_forged(USER_HEADER, "{\"sub\":\"u1\",\"iat\":\"now\",\"exp\":1700003600}"),
        HF_TOKEN_MALFORMED);
    assert_int_equal(user_forged(USER_HEADER, "[1,2]"), HF_TOKEN_MALFORMED);
    /* Times: fractions are rounded down (RFC 7519's NumericDate). */
    assert_int_equal(
        user_forged(USER_HEADER, "{\"sub\":\"u1\",\"iat\":1700000000.5,\"exp\":1700003600.9}"),
        HF_TOKEN_VALID);
}

static void test_user_times(void **state) {
    (void)state;
    char payload[256];
    /* exp at the very second: expired; one second later than now: valid. */
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S - 10,
             USER_NOW_S);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_EXPIRED);
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S - 10,
             USER_NOW_S + 1);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_VALID);
    /* iat 60 s ahead is the clocks' leeway; 61 s is not yet valid. */
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S + 60,
             USER_NOW_S + 600);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_VALID);
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S + 61,
             USER_NOW_S + 600);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_NOT_YET_VALID);
    /* A lifetime of 24 h is allowed, 24 h + 1 s is not (even while it would be current). */
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S,
             USER_NOW_S + 86400);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_VALID);
    snprintf(payload, sizeof payload, "{\"sub\":\"u\",\"iat\":%lld,\"exp\":%lld}", USER_NOW_S,
             USER_NOW_S + 86401);
    assert_int_equal(user_forged(USER_HEADER, payload), HF_TOKEN_LIFETIME_TOO_LONG);
}

static void test_user_size(void **state) {
    (void)state;
    /* 10 KB, correctly signed: malformed by its length alone. */
    char payload[12000], token[65536];
    int n = snprintf(payload, sizeof payload,
                     "{\"sub\":\"u1\",\"iat\":1700000000,\"exp\":1700003600,\"pad\":\"");
    memset(payload + n, 'x', 10000);
    strcpy(payload + n + 10000, "\"}");
    forge(USER_HEADER, payload, KEY, NULL, token);
    assert_int_equal(user_check(token, NULL), HF_TOKEN_MALFORMED);
    /* 4 KiB is accepted, one byte more is not. */
    for (size_t pad = 2900; pad < 3200; pad++) {
        n = snprintf(payload, sizeof payload,
                     "{\"sub\":\"u1\",\"iat\":1700000000,\"exp\":1700003600,\"pad\":\"");
        memset(payload + n, 'x', pad);
        strcpy(payload + n + pad, "\"}");
        forge(USER_HEADER, payload, KEY, NULL, token);
        size_t length = strlen(token);
        hf_token_result_t expected = length <= HF_USER_TOKEN_SIZE_MAX ? HF_TOKEN_VALID
                                                                      : HF_TOKEN_MALFORMED;
        assert_int_equal(user_check(token, NULL), expected);
    }
    /* Not three parts, not base64url. */
    assert_int_equal(user_check("a.b", NULL), HF_TOKEN_MALFORMED);
    assert_int_equal(user_check("a.b.c.d", NULL), HF_TOKEN_MALFORMED);
    assert_int_equal(user_check("a+b.c.d", NULL), HF_TOKEN_MALFORMED);
    assert_int_equal(user_check("", NULL), HF_TOKEN_MALFORMED);
    /* The reasons the API answers. */
    assert_string_equal(hf_token_result_reason(HF_TOKEN_BAD_ALGORITHM), "alg_not_allowed");
    assert_string_equal(hf_token_result_reason(HF_TOKEN_LIFETIME_TOO_LONG), "lifetime_too_long");
    assert_null(hf_token_result_reason(HF_TOKEN_VALID));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),      cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_algorithm),       cmocka_unit_test(test_signature),
        cmocka_unit_test(test_expiry),          cmocka_unit_test(test_claims),
        cmocka_unit_test(test_encoding),        cmocka_unit_test(test_size),
        cmocka_unit_test(test_user_round_trip), cmocka_unit_test(test_user_known_answer),
        cmocka_unit_test(test_user_refusals),   cmocka_unit_test(test_user_times),
        cmocka_unit_test(test_user_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
