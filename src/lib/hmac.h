/* HMAC-SHA256 of the signature scheme of API.md section 7, "t.body": written once, so that the
 * payment webhook's verifier (api/signature.c) and the outbound notifications' signer
 * (engine/outbox_http.c) cannot drift apart. OpenSSL computes it.
 *
 * Ownership: nothing is allocated; the caller owns every buffer. Any thread. */
#ifndef HF_HMAC_H
#define HF_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HF_HMAC_DIGEST_SIZE 32

/* HMAC-SHA256(secret, timestamp + "." + body) into digest; false when OpenSSL fails. timestamp
 * is the decimal text of t as the header spells it. */
bool hf_hmac_signature_digest(const char *secret, const char *timestamp, const char *body,
                              size_t body_length, uint8_t digest[HF_HMAC_DIGEST_SIZE]);

/* Writes the header value "t=UNIX_SECONDS,v1=HEX" for body at time_s into header (at least
 * HF_HMAC_HEADER_SIZE bytes); false when OpenSSL fails. */
#define HF_HMAC_HEADER_SIZE (2 + 20 + 4 + 2 * HF_HMAC_DIGEST_SIZE + 1)
bool hf_hmac_signature_header(const char *secret, int64_t time_s, const char *body,
                              size_t body_length, char header[HF_HMAC_HEADER_SIZE]);

#endif
