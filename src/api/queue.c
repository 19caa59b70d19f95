/* Handlers of the waiting room and its admission check (queue.h). */
#include "api/queue.h"

#include <stdio.h>
#include <string.h>

#include "core/queue.h"
#include "api/decode.h"
#include "engine/restore.h"
#include "engine/token.h"

/* ---- the ticket ---- */

/* An admitted ticket's token, derived from the ticket alone so every poll hands out the same
 * one: iat the admission's whole second (rounded down), exp iat + token_ttl_s, jti the
 * ticket. Returns its length, 0 when there is no secret to sign with. */
static size_t ticket_token(const hf_request_t *request, uint32_t index, char *out, size_t size) {
    const hf_core_t *core = request->core;
    const hf_ticket_t *ticket = hf_core_ticket_at(core, index);
    const hf_token_secret_t *secret = request->context->token_secret;
    if (!secret) return 0;
    hf_token_claims_t claims;
    memset(&claims, 0, sizeof claims);
    /* Each fits: user ids, event ids and ticket ids are bounded as the claims are. */
    snprintf(claims.subject, sizeof claims.subject, "%s", hf_core_ticket_user(core, index));
    snprintf(claims.event_id, sizeof claims.event_id, "%s",
             hf_core_event_at(core, ticket->event)->id);
    snprintf(claims.ticket_id, sizeof claims.ticket_id, "%s", ticket->id);
    claims.issued_at_s = hf_core_ticket_issued_s(core, index);
    claims.expires_at_s = hf_core_ticket_expires_s(core, index);
    return hf_token_sign(secret, &claims, out, size);
}

/* {"ticket", "status"} and, while waiting, "position" and "estimated_wait_s" (in the
 * pre-queue, "status": "pre_queue" and "opens_at" instead); once admitted, "admission_token"
 * and "expires_at" (the token's exp). */
static void reply_ticket(hf_request_t *request, int status, uint32_t index) {
    const hf_core_t *core = request->core;
    const hf_ticket_t *ticket = hf_core_ticket_at(core, index);
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "ticket");
    hf_json_string(&json, ticket->id);
    bool pre_queue = hf_core_ticket_pre_queue(core, index);
    HF_JSON_KEY(&json, "status");
    hf_json_string(&json, pre_queue ? "pre_queue" : hf_ticket_status_name(ticket->status));
    if (pre_queue) {
        HF_JSON_KEY(&json, "opens_at");
        hf_json_time(&json, hf_core_event_at(core, ticket->event)->waiting_room.opens_at_ms);
    } else if (ticket->status == HF_TICKET_WAITING) {
        uint32_t position = hf_core_ticket_position(core, index);
        HF_JSON_KEY(&json, "position");
        hf_json_int(&json, position);
        HF_JSON_KEY(&json, "estimated_wait_s");
        hf_json_int(&json, hf_core_ticket_wait_s(core, index, position, request->now_ms));
    } else if (ticket->status == HF_TICKET_ADMITTED) {
        char token[HF_TOKEN_SIZE_MAX + 1];
        size_t length = ticket_token(request, index, token, sizeof token);
        HF_JSON_KEY(&json, "admission_token");
        if (length) hf_json_string_length(&json, token, length);
        else hf_json_null(&json);
        HF_JSON_KEY(&json, "expires_at");
        hf_json_time(&json, hf_core_ticket_expires_s(core, index) * 1000);
    }
    hf_json_object_end(&json);
}

/* An answer that changed nothing shows the ticket as its records left it: it waits for
 * those (an admission made by the deadline that ran before this request among them), never
 * for the open batch (routes.c, reply_sequence). */
static void rest_on_ticket(hf_request_t *request, uint32_t index) {
    request->rests_on_known = true;
    request->rests_on_change = hf_core_ticket_change(request->core, index);
}

/* ---- routes ---- */

static void handle_join(hf_request_t *request) {
    hf_context_t *context = request->context;
    if (!hf_core_event(request->core, request->params[0], NULL)) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    const char *user_id = NULL;
    if (!hf_decode_user(request, &user_id)) return;
    char ticket_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(context, "q_", ticket_id);
    uint32_t index;
    bool created;
    hf_error_t error = hf_core_queue_join(request->core, request->params[0], user_id, ticket_id,
                                          request->now_ms, &index, &created);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    if (!created) rest_on_ticket(request, index);
    reply_ticket(request, created ? 201 : 200, index);
}

/* A finished ticket the core has forgotten is taken back from the store, then found as any
 * other (restore.h); true when there was one to take back. A ticket still in memory under
 * another event is simply not this event's: the store is not asked. */
static bool ticket_revived(hf_request_t *request, hf_error_t error) {
    uint32_t index;
    return error == HF_ERROR_TICKET_NOT_FOUND &&
           !hf_core_ticket_find(request->core, request->params[1], NULL) &&
           hf_restore_ticket_revive(request->context, request->params[1], &index);
}

/* Whether the ticket of the path, when it is known (in memory or taken back from the store),
 * is the acting user's (request.h: hf_request_owner_check); an unknown one is left to the
 * core's 404. false after answering 403 not_owner. */
static bool ticket_owned(hf_request_t *request) {
    if (!request->acting_user[0]) return true;
    uint32_t index;
    if (!hf_core_ticket_find(request->core, request->params[1], &index) &&
        !(ticket_revived(request, HF_ERROR_TICKET_NOT_FOUND) &&
          hf_core_ticket_find(request->core, request->params[1], &index)))
        return true;
    return hf_request_owner_check(request, hf_core_ticket_user(request->core, index));
}

static void handle_poll(hf_request_t *request) {
    if (!ticket_owned(request)) return;
    uint32_t index;
    hf_error_t error = hf_core_queue_poll(request->core, request->params[0], request->params[1],
                                          request->now_ms, &index);
    if (ticket_revived(request, error))
        error = hf_core_queue_poll(request->core, request->params[0], request->params[1],
                                   request->now_ms, &index);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    rest_on_ticket(request, index);
    reply_ticket(request, 200, index);
}

static void handle_complete(hf_request_t *request) {
    if (!ticket_owned(request)) return;
    hf_core_t *core = request->core;
    uint32_t index;
    uint64_t before = hf_core_change_count(core);
    hf_error_t error = hf_core_queue_complete(core, request->params[0], request->params[1],
                                              request->now_ms, &index);
    if (ticket_revived(request, error))
        error = hf_core_queue_complete(core, request->params[0], request->params[1],
                                       request->now_ms, &index);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    if (hf_core_change_count(core) == before) rest_on_ticket(request, index);
    reply_ticket(request, 200, index);
}

/* ---- the admission check ---- */

/* The token the request carries: the body's admission_token when it is a non-empty string
 * (the body wins), else the Admission-Token header. NULL when there is none; *wrong when the
 * body's member is neither a string nor null. */
static const char *token_of(const hf_request_t *request, size_t *length, bool *wrong) {
    hf_member_t member = hf_decode_member(request, "admission_token");
    *wrong = member.kind != HF_MEMBER_ABSENT && member.kind != HF_MEMBER_NULL &&
             member.kind != HF_MEMBER_STRING;
    if (member.kind == HF_MEMBER_STRING && member.length > 0) {
        *length = member.length;
        return member.string;
    }
    const char *header = hf_http_request_header(request->http, "Admission-Token", length);
    return header && *length > 0 ? header : NULL;
}

/* What the token and its ticket say for this user and event. */
static hf_api_error_t admission_verdict(hf_request_t *request, uint32_t event_index,
                                        const char *token, size_t length, const char *user_id,
                                        size_t user_length) {
    const hf_context_t *context = request->context;
    static const hf_token_secret_t none = {.size = 0};
    const hf_token_secret_t *secret = context->token_secret ? context->token_secret : &none;
    hf_token_claims_t claims;
    hf_token_result_t result = hf_token_verify(secret, token, length, request->now_ms, &claims);
    if (result != HF_TOKEN_VALID && result != HF_TOKEN_EXPIRED)
        return HF_API_ERROR_ADMISSION_INVALID;
    const char *event_id = hf_core_event_at(request->core, event_index)->id;
    if (strcmp(claims.event_id, event_id) != 0 || strlen(claims.subject) != user_length ||
        memcmp(claims.subject, user_id, user_length) != 0)
        return HF_API_ERROR_ADMISSION_INVALID;
    if (result == HF_TOKEN_EXPIRED) return HF_API_ERROR_ADMISSION_EXPIRED;
    switch (hf_core_queue_admission(request->core, event_index, claims.ticket_id, user_id)) {
    case HF_ADMISSION_VALID: return HF_API_ERROR_COUNT;
    case HF_ADMISSION_EXPIRED: return HF_API_ERROR_ADMISSION_EXPIRED;
    case HF_ADMISSION_INVALID: break;
    }
    return HF_API_ERROR_ADMISSION_INVALID;
}

bool hf_handlers_queue_admitted(hf_request_t *request) {
    const hf_core_t *core = request->core;
    /* Events without a room cost one counter's read: no lookup at all when no event has one. */
    if (!hf_core_rooms_enabled(core)) return true;
    uint32_t event_index;
    const hf_event_t *event = hf_core_event(core, request->params[0], &event_index);
    if (!event || !event->waiting_room.enabled) return true;
    hf_member_t user = hf_decode_member(request, "user_id");
    /* A user token's sub stands for an absent user_id (decode.h: hf_decode_user). */
    if (user.kind == HF_MEMBER_ABSENT && request->acting_user[0]) {
        user.kind = HF_MEMBER_STRING;
        user.string = request->acting_user;
        user.length = strlen(request->acting_user);
    }
    if (user.kind != HF_MEMBER_STRING || user.length == 0 || user.length > HF_USER_ID_SIZE_MAX)
        return true;
    size_t length = 0;
    bool wrong;
    const char *token = token_of(request, &length, &wrong);
    hf_api_error_t verdict;
    if (wrong) verdict = HF_API_ERROR_ADMISSION_INVALID;
    else if (!token) verdict = HF_API_ERROR_ADMISSION_REQUIRED;
    else verdict = admission_verdict(request, event_index, token, length, user.string, user.length);
    if (verdict == HF_API_ERROR_COUNT) return true;
    hf_reply_error(request, verdict, NULL, NULL);
    return false;
}

#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    /* A join's body is flat ({"user_id": "u1"}): the flat reader reads it. */
    {"POST", "/v1/events/{}/queue", handle_join,
     HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT | HF_ROUTE_FLAT | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/queue/{}", handle_poll, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/events/{}/queue/{}/complete", handle_complete, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_queue_routes = {routes, sizeof routes / sizeof routes[0], 0};

/* ---- GET /metrics (metrics.h) ---- */

/* One sample per event with a room: events are bounded (HF_EVENTS_MAX), and only those with a
 * room appear, so the label's values stay few. */
static void render_rooms(const hf_core_t *core, hf_buffer_t *out, const char *name,
                         bool admissions) {
    for (uint32_t e = 0; e < hf_core_event_count(core); e++) {
        const hf_event_t *event = hf_core_event_at(core, e);
        if (!event || !event->waiting_room.enabled)
            continue; /* a deleted event's slot, or no room */
        hf_metrics_label_t label = {"event", event->id};
        double value = admissions ? (double)hf_core_room_admissions(core, e)
                                  : (double)hf_core_room_waiting(core, e);
        hf_metrics_sample(out, name, &label, 1, value);
    }
}

void hf_handlers_queue_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    if (hf_core_rooms_enabled(context->core) == 0) return;
    hf_metrics_family(out, "holdfast_queue_waiting", "gauge",
                      "Users waiting in the line of each event's waiting room.");
    render_rooms(context->core, out, "holdfast_queue_waiting", false);
    hf_metrics_family(out, "holdfast_queue_admissions_total", "counter",
                      "Users admitted from each event's waiting room since this server started.");
    render_rooms(context->core, out, "holdfast_queue_admissions_total", true);
}
