/* The HS256 tokens: the waiting room's admission token (API.md section 6) and the buyers'
 * user tokens (section 16), checked by one verifier. An admission token is a JWT signed
 * with HMAC-SHA256
 * ("HS256") over the token secret, written and checked here with OpenSSL's HMAC and
 * CRYPTO_memcmp rather than a JWT library (libjwt 1.x accepted `alg: none` with a NULL key).
 *
 * A token is BASE64URL(header) "." BASE64URL(payload) "." BASE64URL(HMAC), base64url without
 * padding. The header is always {"alg":"HS256","typ":"JWT"}; the payload is
 * {"sub":USER,"evt":EVENT,"iat":SECONDS,"exp":SECONDS,"jti":TICKET} in that order. Verifying
 * accepts exactly what signing writes: the algorithm first, then the signature, and only then
 * the claims, which must re-encode to the very bytes that were signed (one spelling per
 * token, so a VALID token always re-signs to itself).
 *
 * A user token is signed by the platform's backend (a JWT library: PyJWT, jose, ...) with
 * the user token secret, so its header and payload are any JSON objects the library writes:
 * the header's alg must be exactly "HS256", and, once the signature matches, the payload
 * must hold sub (the user id), iat and exp (NumericDate); other members are ignored. The
 * same order as admission tokens: the algorithm, the signature, only then the claims.
 *
 * Ownership: nothing is allocated that outlives a call; the caller owns the secret, the
 * claims and the output. Pure apart from OpenSSL's HMAC: no clock (now is passed in), no
 * I/O, any thread. */
#ifndef HF_ENGINE_TOKEN_H
#define HF_ENGINE_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"

/* Longer tokens are refused as malformed before anything is decoded, so a client cannot make
 * the server decode and parse more than this. The longest token signing can write (a user id
 * of 128 control characters, each escaped as \u00XX, and 20-digit times) is 1,353 bytes: the
 * bound leaves room above it, so every token the server hands out is one it accepts. */
#define HF_TOKEN_SIZE_MAX 1536
/* Bytes of a generated secret: the size of HMAC-SHA256's digest, as RFC 2104 advises. */
#define HF_TOKEN_SECRET_SIZE 32
/* A given secret (--token-secret) shorter than this is refused: a short HMAC key can be
 * guessed offline from a single token. */
#define HF_TOKEN_SECRET_SIZE_MIN 16
/* A given secret is used as its bytes, whatever its length: HMAC takes a key of any length (a
 * key longer than SHA-256's 64-byte block is hashed down, RFC 2104), and operators make them
 * with `openssl rand -base64 64` (88 bytes), which must be taken as it is (API.md section 0).
 * The bound keeps a mistake (a file pasted whole) from being a key. */
#define HF_TOKEN_SECRET_SIZE_MAX 1024

typedef struct hf_token_secret {
    unsigned char bytes[HF_TOKEN_SECRET_SIZE_MAX];
    size_t size; /* 0: no secret, every token is refused and none is signed */
} hf_token_secret_t;

typedef struct hf_token_claims {
    char subject[HF_USER_ID_SIZE_MAX + 1]; /* sub: the user id, 1 to 128 bytes of UTF-8 */
    char event_id[HF_ID_SIZE_MAX + 1];     /* evt: an id of API.md ([A-Za-z0-9_.]{1,64}) */
    int64_t issued_at_s, expires_at_s;     /* iat, exp: whole seconds since the Unix epoch */
    char ticket_id[HF_SERVER_ID_SIZE + 1]; /* jti: the ticket, 1 to 40 bytes */
} hf_token_claims_t;

typedef enum hf_token_result {
    HF_TOKEN_VALID = 0,
    HF_TOKEN_MALFORMED,     /* too long, not three base64url parts, not the JSON signed, a
                               claim missing or of the wrong type */
    HF_TOKEN_BAD_ALGORITHM, /* the header's alg is not exactly the string "HS256" */
    HF_TOKEN_BAD_SIGNATURE, /* the HMAC does not match (another secret, a changed part) */
    HF_TOKEN_EXPIRED,       /* signed and well formed, but now >= exp */
    /* User tokens only: */
    HF_TOKEN_MISSING_CLAIM,     /* signed, but no sub, iat or exp */
    HF_TOKEN_NOT_YET_VALID,     /* iat more than HF_USER_TOKEN_CLOCK_SKEW_S ahead of now */
    HF_TOKEN_LIFETIME_TOO_LONG, /* exp more than HF_USER_TOKEN_LIFETIME_S_MAX after iat */
    HF_TOKEN_RESULT_COUNT,
} hf_token_result_t;

/* A user token's claims (API.md section 16). */
typedef struct hf_user_token_claims {
    char subject[HF_USER_ID_SIZE_MAX + 1]; /* sub: the user id, 1 to 128 bytes of UTF-8 */
    int64_t issued_at_s, expires_at_s;     /* iat, exp: whole seconds, rounded down */
} hf_user_token_claims_t;

/* Writes the token of claims, signed with secret, into out followed by a NUL; returns its
 * length, or 0 when out is too small (HF_TOKEN_SIZE_MAX + 1 always suffices), the secret is
 * empty, or a claim breaks the rules above (so nothing is signed that verify would refuse). */
size_t hf_token_sign(const hf_token_secret_t *secret, const hf_token_claims_t *claims, char *out,
                     size_t out_size);

/* Checks the length bytes of token (no NUL needed) at now_ms. Claims are filled when the
 * result is VALID or EXPIRED (the signature was good, so they can be trusted, e.g. to tell
 * an expired token of another user); zeroed otherwise. */
hf_token_result_t hf_token_verify(const hf_token_secret_t *secret, const char *token, size_t length,
                                  int64_t now_ms, hf_token_claims_t *claims);

/* The reason a refused user token's answer gives (API.md section 16: "malformed",
 * "bad_signature", ...); NULL for HF_TOKEN_VALID. Static. */
const char *hf_token_result_reason(hf_token_result_t result);

/* Writes a user token for subject, valid from issued_at_s until expires_at_s, into out with
 * a NUL; its length, or 0 when out is too small (HF_USER_TOKEN_SIZE_MAX + 1 suffices), the
 * secret is empty, or the claims break the rules verify checks (the subject's length or
 * UTF-8, a lifetime not within 1 s to HF_USER_TOKEN_LIFETIME_S_MAX). */
size_t hf_user_token_sign(const hf_token_secret_t *secret, const char *subject, int64_t issued_at_s,
                          int64_t expires_at_s, char *out, size_t out_size);

/* Checks the length bytes of a user token at now_ms: at most HF_USER_TOKEN_SIZE_MAX bytes,
 * alg exactly HS256, the signature, then the claims, then the times (lifetime, iat not ahead,
 * exp not past, in that order). claims is filled when the result is VALID; zeroed otherwise. */
hf_token_result_t hf_user_token_verify(const hf_token_secret_t *secret, const char *token,
                                       size_t length, int64_t now_ms,
                                       hf_user_token_claims_t *claims);

#endif
