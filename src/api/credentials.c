/* Credentials (credentials.h): the API key or a user token, checked once per request. */
#include "api/credentials.h"

#include <openssl/crypto.h>
#include <string.h>
#include <strings.h>

#include "api/query.h"
#include "engine/token.h"

/* The reasons counted in /metrics, by slot: a user token's refusals by their token.h result
 * (slots 1 to 7, HF_TOKEN_VALID's slot unused), then the credential's own. Bounded words,
 * never a token or a user id. */
enum {
    REFUSAL_MISSING = HF_TOKEN_RESULT_COUNT, /* no credential at all */
    REFUSAL_WRONG_KEY,                       /* not the API key, and no user tokens configured */
    REFUSAL_FORBIDDEN,                       /* a valid user token on a route for the API key */
    REFUSAL_COUNT
};
_Static_assert(REFUSAL_COUNT <= HF_METRICS_AUTH_REFUSAL_SLOTS, "each reason has its slot");

static const char *refusal_name(unsigned slot) {
    switch (slot) {
    case REFUSAL_MISSING: return "missing";
    case REFUSAL_WRONG_KEY: return "wrong_key";
    case REFUSAL_FORBIDDEN: return "forbidden";
    default: return hf_token_result_reason((hf_token_result_t)slot);
    }
}

static void refusal_count(const hf_request_t *request, unsigned slot) {
    if (request->context->metrics) request->context->metrics->auth_refusals[slot]++;
}

/* The credential the request carries: ?access_token= on a stream's route (EventSource sets no
 * header), else the Authorization header's Bearer value. NULL when there is none. The query's
 * value is decoded into query_value (query_size bytes). */
static const char *credential_of(const hf_request_t *request, const hf_route_t *route,
                                 char *query_value, size_t query_size, size_t *length) {
    if ((route->flags & HF_ROUTE_KEY_IN_QUERY) &&
        hf_query_get(request->http->query, "access_token", query_value, query_size)) {
        *length = strlen(query_value);
        return query_value;
    }
    size_t header_length;
    const char *header = hf_http_request_header(request->http, "Authorization", &header_length);
    if (!header || header_length < 7 || strncasecmp(header, "Bearer ", 7) != 0) return NULL;
    *length = header_length - 7;
    return header + 7;
}

static bool is_api_key(const char *key, const char *credential, size_t length) {
    size_t key_length = strlen(key);
    return length == key_length && CRYPTO_memcmp(credential, key, key_length) == 0;
}

/* 401 for a refused user token: the reason in the error, RFC 6750's error in the header. */
static void token_refuse(hf_request_t *request, hf_token_result_t result) {
    const char *reason = hf_token_result_reason(result);
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_UNAUTHORIZED, "the user token is refused", &json);
    HF_JSON_KEY(&json, "reason");
    hf_json_string(&json, reason);
    hf_reply_error_end(&json);
    request->token_refusal = reason;
    refusal_count(request, (unsigned)result);
}

static bool refuse(hf_request_t *request, hf_api_error_t error, unsigned slot) {
    hf_reply_error(request, error, NULL, NULL);
    refusal_count(request, slot);
    return false;
}

bool hf_credentials_check(hf_request_t *request, const hf_route_t *route) {
    const hf_context_t *context = request->context;
    request->acting_user[0] = '\0';
    if (!context->api_key || !*context->api_key) return true;
    char query_value[HF_HTTP_HEAD_SIZE_MAX];
    size_t length = 0;
    const char *credential = credential_of(request, route, query_value, sizeof query_value,
                                           &length);
    if (!credential) return refuse(request, HF_API_ERROR_UNAUTHORIZED, REFUSAL_MISSING);
    if (is_api_key(context->api_key, credential, length)) return true;
    const hf_token_secret_t *secret = context->user_token_secret;
    if (!secret || secret->size == 0)
        return refuse(request, HF_API_ERROR_UNAUTHORIZED, REFUSAL_WRONG_KEY);
    hf_user_token_claims_t claims;
    hf_token_result_t result = hf_user_token_verify(secret, credential, length, request->now_ms,
                                                    &claims);
    if (result != HF_TOKEN_VALID) {
        token_refuse(request, result);
        return false;
    }
    if (!(route->flags & HF_ROUTE_BUYER))
        return refuse(request, HF_API_ERROR_FORBIDDEN, REFUSAL_FORBIDDEN);
    memcpy(request->acting_user, claims.subject, sizeof request->acting_user);
    return true;
}

void hf_handlers_credentials_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    if (!context->metrics) return;
    hf_metrics_family(out, "holdfast_auth_refusals_total", "counter",
                      "Requests refused for their credential, by reason (missing, wrong_key, "
                      "forbidden, or a user token's refusal reason of API.md section 16).");
    for (unsigned slot = 1; slot < REFUSAL_COUNT; slot++) {
        hf_metrics_label_t label = {"reason", refusal_name(slot)};
        hf_metrics_sample(out, "holdfast_auth_refusals_total", &label, 1,
                          (double)context->metrics->auth_refusals[slot]);
    }
}
