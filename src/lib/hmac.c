/* The signature scheme's HMAC (hmac.h). */
#include "lib/hmac.h"

#include <inttypes.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Fetched once: a fetch looks the algorithm up among the providers, which cost more than the
 * HMAC of a notification's body itself. The fetched object is shared by every thread. */
static EVP_MAC *hmac_algorithm;
static pthread_once_t hmac_fetched = PTHREAD_ONCE_INIT;

static void hmac_fetch(void) { hmac_algorithm = EVP_MAC_fetch(NULL, "HMAC", NULL); }

bool hf_hmac_signature_digest(const char *secret, const char *timestamp, const char *body,
                              size_t body_length, uint8_t digest[HF_HMAC_DIGEST_SIZE]) {
    pthread_once(&hmac_fetched, hmac_fetch);
    EVP_MAC_CTX *context = hmac_algorithm ? EVP_MAC_CTX_new(hmac_algorithm) : NULL;
    char digest_name[] = "SHA256";
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
        OSSL_PARAM_construct_end()};
    size_t written = 0;
    bool ok = context &&
              EVP_MAC_init(context, (const unsigned char *)secret, strlen(secret), parameters) &&
              EVP_MAC_update(context, (const unsigned char *)timestamp, strlen(timestamp)) &&
              EVP_MAC_update(context, (const unsigned char *)".", 1) &&
              EVP_MAC_update(context, (const unsigned char *)body, body_length) &&
              EVP_MAC_final(context, digest, &written, HF_HMAC_DIGEST_SIZE) &&
              written == HF_HMAC_DIGEST_SIZE;
    EVP_MAC_CTX_free(context);
    return ok;
}

bool hf_hmac_signature_header(const char *secret, int64_t time_s, const char *body,
                              size_t body_length, char header[HF_HMAC_HEADER_SIZE]) {
    char timestamp[24];
    snprintf(timestamp, sizeof timestamp, "%" PRId64, time_s);
    uint8_t digest[HF_HMAC_DIGEST_SIZE];
    if (!hf_hmac_signature_digest(secret, timestamp, body, body_length, digest)) return false;
    int length = snprintf(header, HF_HMAC_HEADER_SIZE, "t=%s,v1=", timestamp);
    static const char HEX[] = "0123456789abcdef";
    for (size_t i = 0; i < HF_HMAC_DIGEST_SIZE; i++) {
        header[length++] = HEX[digest[i] >> 4];
        header[length++] = HEX[digest[i] & 15];
    }
    header[length] = '\0';
    return true;
}
