/* The request and its reply: what the dispatcher (api/routes.c) hands each route handler, and
 * the functions every reply is written with. Error replies take an id of the error table
 * (errors.h), never a literal status and code.
 *
 * Ownership: the dispatcher owns the request, on its stack, for the time of one handler
 * call; http and response are the HTTP layer's and are valid for that time too. Strings of
 * params, body and flat live until the dispatcher returns; keep none beyond. The reply
 * functions write into response->body, which the HTTP layer owns. */
#ifndef HF_ENGINE_REQUEST_H
#define HF_ENGINE_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "engine/context.h"
#include "engine/errors.h"
#include "engine/fields.h"
#include "lib/json.h"
#include "net/flat_json.h"
#include "net/http.h"

#define HF_ROUTE_PARAMS_MAX 3

struct hf_route; /* route.h */

typedef struct hf_request {
    hf_context_t *context;
    /* The route being run (route.h), NULL before one matched. */
    const struct hf_route *route;
    /* The core the handler reads and changes: the context's, or for a list across units the
     * core of the job that read every unit from the store (cluster/jobs.h). Handlers read
     * this one, never context->core. */
    hf_core_t *core;
    const hf_http_request_t *http;
    hf_http_response_t *response;
    /* The path's "{}" segments, percent-decoded, in order (api/routes.c). */
    char params[HF_ROUTE_PARAMS_MAX][HF_SEAT_ID_SIZE_MAX + HF_USER_ID_SIZE_MAX + 1];
    /* A POST's body: read by the flat reader on routes that allow it (HF_ROUTE_FLAT in
     * route.h) when it can, else by jansson. At most one of the two is set; hf_decode_member
     * reads it. */
    json_t *body;
    const hf_flat_json_t *flat;
    /* The flat reading of the body (flat points here when it was read so), the request's
     * own: hf_request_init leaves it unwritten. */
    hf_flat_json_t flat_body;
    /* The route's domain's own context (route.h: hf_route_table_t.scratch_size), NULL when
     * its domain has none or before a route matched. */
    void *scratch;
    int64_t now_ms;
    /* A HEAD request, run as the GET of its path: the HTTP layer sends the head of the answer
     * the handler writes, without its body. Only a handler whose GET does more than answer (a
     * stream's, which subscribes) needs to look. */
    bool head;
    /* Set by a handler whose answer rests only on the state up to change rests_on_change
     * (hf_core_change_count): when the request changed nothing, its answer then waits for that
     * change to be durable rather than for the open batch. */
    bool rests_on_known;
    uint64_t rests_on_change;
    /* The unit (event, fleet, or the records of no unit) the cluster serves the request as
     * (cluster.h), "" when none: an Idempotency-Key's record is kept with it. */
    char unit[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    /* The user a user token acts as (API.md section 16: its sub), "" when the request carries
     * the API key or none is configured: then any user_id is taken as given. Set by the
     * dispatcher (api/credentials.h) before the handler runs; handlers read it only through
     * hf_request_owner_check and hf_decode_user. */
    char acting_user[HF_USER_ID_SIZE_MAX + 1];
    /* The token's refusal reason (token.h: hf_token_result_reason) when the request was
     * answered 401 for its user token, else NULL: the answer's WWW-Authenticate says so. */
    const char *token_refusal;
} hf_request_t;

/* Sets every field but the params' bytes (only a route's match writes them, and handlers
 * read only the ones it captured): a zeroing initializer would clear the large arrays. */
void hf_request_init(hf_request_t *request, hf_context_t *context, const hf_http_request_t *http,
                     hf_http_response_t *response);

/* Whether the request may act on what belongs to owner (a user id): always with the API key
 * or no credential configured, else only when owner is the acting user. false after
 * answering 403 not_owner. The one place the ownership rule of API.md section 16 lives. */
bool hf_request_owner_check(hf_request_t *request, const char *owner);

/* Starts a JSON body for status; the caller writes one value and the response is complete. */
void hf_reply_begin(hf_request_t *request, int status, hf_json_t *json);
/* Answers error id with message, or the table's message when NULL, and field when not NULL
 * (both borrowed for the call). */
void hf_reply_error(hf_request_t *request, hf_api_error_t id, const char *message,
                    const char *field);
/* An error answer with members of its own: begin writes {"error": {"code", "message" and
 * leaves the inner object open for them; end closes both. */
void hf_reply_error_begin(hf_request_t *request, hf_api_error_t id, const char *message,
                          hf_json_t *json);
void hf_reply_error_end(hf_json_t *json);
/* Answers error id with the table's message and the detail member: value, which names what
 * was not found as pool_not_found names its pool ({"section": "S"}). Both borrowed. */
void hf_reply_error_naming(hf_request_t *request, hf_api_error_t id, const char *member,
                           const char *value);
/* Answers 400 invalid_request about detail's field: "field" is its path, the message says
 * what it must be (fields.h), quoting from source. */
void hf_reply_invalid(hf_request_t *request, const hf_error_detail_t *detail,
                      const hf_fields_source_t *source);
/* Answers a core error, with its details: the field at fault, the seats or the pool, the
 * user's limit (quoting source's definition and request, either of which may be NULL;
 * source itself may be NULL when detail is). */
void hf_reply_core_error(hf_request_t *request, hf_error_t error, const hf_error_detail_t *detail,
                         const hf_fields_source_t *source);

#endif
