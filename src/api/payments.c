/* Handlers of the payment webhook and of refunds (payments.h). */
#include "api/payments.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/query.h"
#include "cluster/exchange.h"
#include "core/locks.h"
#include "engine/restore.h"
#include "api/signature.h"
#include "lib/log.h"

/* ---- the webhook ---- */

/* A refused webhook is logged (a misconfigured secret at the provider shows up here first),
 * at most once a second: anyone can post to the route, and the log must not become their
 * megaphone. The header and the body are never logged, only why and how many were refused. */
static void signature_refusal_log(int64_t now_ms, const char *why) {
    static bool logged;
    static int64_t logged_ms;
    static uint64_t refused_since;
    refused_since++;
    if (logged && now_ms - logged_ms < 1000) return;
    logged = true;
    logged_ms = now_ms;
    HF_LOG_FIELDS(HF_LOG_WARNING, "webhook refused: invalid signature", HF_LOG_TEXT("reason", why),
                  HF_LOG_NUMBER("refused", refused_since));
    refused_since = 0;
}

/* The Holdfast-Signature header parsed and checked on the raw body, with t within
 * HF_SIGNATURE_TOLERANCE_S of the server's clock; false after answering 401. Nothing of the
 * body is parsed before this answers true. */
static bool signature_valid(hf_request_t *request) {
    const hf_http_request_t *http = request->http;
    size_t length = 0;
    const char *header = hf_http_request_header(http, "Holdfast-Signature", &length);
    hf_signature_t signature;
    const char *why = NULL;
    if (!header) why = "the Holdfast-Signature header is missing";
    else if (!hf_signature_parse(header, length, &signature))
        why = "the Holdfast-Signature header is malformed";
    else if (llabs(request->now_ms / 1000 - signature.timestamp_s) > HF_SIGNATURE_TOLERANCE_S)
        why = "the signature's t is more than 300 seconds from the server's clock";
    else if (!hf_signature_verify(&signature, request->context->webhook_secret, http->body,
                                  http->body_length))
        why = "no v1 signature matches the body";
    if (!why) return true;
    signature_refusal_log(request->now_ms, why);
    hf_reply_error(request, HF_API_ERROR_INVALID_SIGNATURE, why, NULL);
    return false;
}

/* amount: an integer from 1 to HF_PAYMENT_AMOUNT_MAX (minor units); false after answering
 * 400. */
static bool amount_decode(hf_request_t *request, int64_t *amount) {
    hf_member_t member = hf_decode_member(request, "amount");
    if (member.kind == HF_MEMBER_INTEGER && member.integer >= 1 &&
        member.integer <= HF_PAYMENT_AMOUNT_MAX) {
        *amount = member.integer;
        return true;
    }
    const char *message = member.kind == HF_MEMBER_ABSENT || member.kind == HF_MEMBER_NULL
                              ? "amount is required"
                              : "amount must be an integer from 1 to 10^12 (minor units)";
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "amount");
    return false;
}

/* The delivery's members; false after answering 400 naming the first one at fault. */
static bool delivery_decode(hf_request_t *request, hf_payment_delivery_t *delivery) {
    const char *type = NULL;
    if (!hf_decode_string(request, "id", HF_WEBHOOK_EVENT_ID_SIZE_MAX, true, &delivery->event_id) ||
        !hf_decode_string(request, "type", HF_WEBHOOK_TYPE_SIZE_MAX, true, &type))
        return false;
    if (!hf_payment_type_parse(type, &delivery->type)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "type must be \"payment.succeeded\" or \"payment.failed\"", "type");
        return false;
    }
    return hf_decode_string(request, "payment_intent_id", HF_PAYMENT_REF_SIZE_MAX, true,
                            &delivery->payment_intent_id) &&
           hf_decode_string(request, "reservation_id", HF_PAYMENT_REF_SIZE_MAX, true,
                            &delivery->reservation_id) &&
           amount_decode(request, &delivery->amount) &&
           hf_decode_string(request, "currency", HF_WEBHOOK_CURRENCY_SIZE_MAX, false,
                            &delivery->currency);
}

static void reply_outcome(hf_request_t *request, const hf_payment_outcome_t *outcome) {
    const hf_core_t *core = request->core;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "result");
    hf_json_string(&json, hf_payment_result_name(outcome->result));
    if (outcome->result == HF_PAYMENT_COMMITTED) {
        HF_JSON_KEY(&json, "order_id");
        hf_json_string(&json, hf_core_order_at(core, outcome->order)->id);
        if (outcome->late) {
            HF_JSON_KEY(&json, "late");
            hf_json_bool(&json, true);
        }
    } else if (outcome->result == HF_PAYMENT_REFUND_REQUIRED) {
        HF_JSON_KEY(&json, "refund_id");
        hf_json_string(&json, hf_core_refund_at(core, outcome->refund)->id);
        HF_JSON_KEY(&json, "reason");
        hf_json_string(&json, hf_refund_reason_name(outcome->reason));
    }
    hf_json_object_end(&json);
}

/* Whether the delivery pays a held remote exchange hold (core/locks.h): its old order must be
 * locked by its owner first, as for the hold's commit. */
static bool pays_remote_exchange(const hf_core_t *core, const hf_payment_delivery_t *delivery) {
    const hf_hold_t *hold = hf_core_hold_find(core, delivery->reservation_id, NULL);
    return delivery->type == HF_PAYMENT_SUCCEEDED && hold && hold->status == HF_HOLD_HELD &&
           hold->exchange_elsewhere;
}

/* The delivery applied: with the old order's lock (or its refusal) once its owner answered,
 * else parked on that lock; false when it was parked, or answered 503. */
static bool payment_apply(hf_request_t *request, const hf_payment_delivery_t *delivery,
                          hf_payment_outcome_t *outcome, hf_error_t *error) {
    struct hf_cluster *cluster = request->context->cluster;
    hf_remote_order_t locked;
    bool answered = hf_cluster_exchange_locked(cluster, delivery->reservation_id, &locked);
    if (answered || hf_cluster_exchange_refused(cluster, delivery->reservation_id)) {
        *error = hf_core_payment_remote(request->core, delivery, answered ? &locked : NULL,
                                        request->now_ms, outcome);
        return true;
    }
    if (!pays_remote_exchange(request->core, delivery)) {
        *error = hf_core_payment(request->core, delivery, request->now_ms, outcome);
        return true;
    }
    /* Not decided without the lock: the provider retries a 503. */
    if (!hf_cluster_exchange_lock_park(cluster, request, delivery->reservation_id))
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE,
                       "the exchange's old order cannot be locked now; retry shortly", NULL);
    return false;
}

static void handle_webhook(hf_request_t *request) {
    hf_context_t *context = request->context;
    if (!context->webhook_secret || !*context->webhook_secret) {
        hf_reply_error(request, HF_API_ERROR_WEBHOOKS_NOT_CONFIGURED, NULL, NULL);
        return;
    }
    if (!signature_valid(request) || !hf_decode_body(request, false)) return;
    hf_payment_delivery_t delivery = {0};
    if (!delivery_decode(request, &delivery)) return;
    /* A released or expired hold the core has forgotten is taken back first, so the delivery
     * finds it as the hold routes would. */
    uint32_t hold_index;
    if (!hf_core_hold_find(request->core, delivery.reservation_id, &hold_index))
        hf_restore_hold_revive(context, delivery.reservation_id, &hold_index);
    char order_id[HF_SERVER_ID_SIZE + 1], refund_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(context, "ord_", order_id);
    hf_context_id_make(context, "ref_", refund_id);
    delivery.order_id = order_id;
    delivery.refund_id = refund_id;
    hf_payment_outcome_t outcome;
    hf_error_t error;
    if (!payment_apply(request, &delivery, &outcome, &error)) return;
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_outcome(request, &outcome);
}

/* ---- refunds ---- */

/* reservation_id is null for the refund of a cancelled booking (it had no hold); order_id is
 * the cancelled order's (reason order_cancelled), null for a webhook's refund. */
static void render_refund(hf_json_t *json, const hf_core_t *core, const hf_refund_t *refund) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "refund_id");
    hf_json_string(json, refund->id);
    HF_JSON_KEY(json, "payment_intent_id");
    hf_json_string(json, refund->payment_intent_id);
    HF_JSON_KEY(json, "reservation_id");
    if (refund->reservation_id) hf_json_string(json, refund->reservation_id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "order_id");
    if (refund->order) hf_json_string(json, hf_core_order_at(core, refund->order - 1)->id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "amount");
    hf_json_int(json, refund->amount);
    HF_JSON_KEY(json, "reason");
    hf_json_string(json, hf_refund_reason_name(refund->reason));
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_refund_status_name(refund->status));
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, refund->created_at_ms);
    hf_json_object_end(json);
}

/* A page of the refunds list: status filter (-1: any), limit, and the index to start at. */
typedef struct refund_page {
    int status;
    uint32_t limit;
    uint32_t start;
} refund_page_t;

static bool limit_parse(const char *text, uint32_t *limit) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > (long)HF_REFUNDS_PAGE_MAX)
        return false;
    *limit = (uint32_t)value;
    return true;
}

/* status, limit and after of the query; false after answering 400 naming the parameter. */
static bool refund_page_read(hf_request_t *request, refund_page_t *page) {
    const char *query = request->http->query;
    const hf_core_t *core = request->core;
    char value[HF_HTTP_HEAD_SIZE_MAX];
    uint8_t status;
    *page = (refund_page_t){.status = -1, .limit = HF_REFUNDS_PAGE_DEFAULT, .start = 0};
    if (hf_query_get(query, "status", value, sizeof value)) {
        if (!hf_refund_status_parse(value, &status)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "status must be \"pending\" or \"completed\"", "status");
            return false;
        }
        page->status = status;
    }
    if (hf_query_get(query, "limit", value, sizeof value) && !limit_parse(value, &page->limit)) {
        char message[64];
        snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                 (unsigned)HF_REFUNDS_PAGE_MAX);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
        return false;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        uint32_t after;
        if (!hf_core_refund_find(core, value, &after)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be the id of a refund", "after");
            return false;
        }
        page->start = after + 1;
    }
    return true;
}

/* Oldest first; "next" is the last refund listed when more may follow, else null. */
static void handle_refunds_list(hf_request_t *request) {
    const hf_core_t *core = request->core;
    refund_page_t page;
    if (!refund_page_read(request, &page)) return;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "refunds");
    hf_json_array_begin(&json);
    uint32_t listed = 0, index = page.start, count = hf_core_refund_count(core);
    const hf_refund_t *last = NULL;
    for (; index < count && listed < page.limit; index++) {
        const hf_refund_t *refund = hf_core_refund_at(core, index);
        if (page.status >= 0 && refund->status != page.status) continue;
        render_refund(&json, core, refund);
        last = refund;
        listed++;
    }
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    bool more = false;
    for (; listed == page.limit && index < count && !more; index++)
        more = page.status < 0 || hf_core_refund_at(core, index)->status == page.status;
    if (more) hf_json_string(&json, last->id);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

static void handle_refund_complete(hf_request_t *request) {
    hf_core_t *core = request->core;
    uint32_t index;
    hf_error_t error = hf_core_refund_complete(core, request->params[0], request->now_ms, &index);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_refund(&json, core, hf_core_refund_at(core, index));
}

/* A read: it waits for the refund's own records only (routes.c, reply_sequence). */
static void handle_refund_get(hf_request_t *request) {
    const hf_core_t *core = request->core;
    uint32_t index;
    if (!hf_core_refund_find(core, request->params[0], &index)) {
        hf_reply_error(request, HF_API_ERROR_REFUND_NOT_FOUND, NULL, NULL);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_core_refund_change(core, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_refund(&json, core, hf_core_refund_at(core, index));
}

static const hf_route_t routes[] = {
    /* Signed instead of keyed (API.md section 7): providers cannot send the API key. */
    {"POST", "/v1/webhooks/payments", handle_webhook, HF_ROUTE_PUBLIC | HF_ROUTE_RAW_BODY,
     HF_WEBHOOK_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_BODY(HF_ROUTE_ID_HOLD, "reservation_id")},
    {"GET", "/v1/refunds", handle_refunds_list, HF_ROUTE_SPANS, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_NO_UNIT},
    {"GET", "/v1/refunds/{}", handle_refund_get, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_REFUND, 0)},
    {"POST", "/v1/refunds/{}/complete", handle_refund_complete, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_REFUND, 0)},
};

const hf_route_table_t hf_handlers_payments_routes = {routes, sizeof routes / sizeof routes[0], 0};

/* ---- GET /metrics (metrics.h) ---- */

/* Deliveries by what the core decided, then the route's refusals, which never reach it. */
static void render_webhooks(const hf_context_t *context, hf_buffer_t *out) {
    const uint64_t *counts = hf_core_payment_counts(context->core);
    hf_metrics_family(out, "holdfast_webhooks_total", "counter",
                      "Payment webhook deliveries by result: what a delivery decided, "
                      "\"repeat\" for one answered again, \"invalid_signature\" and "
                      "\"invalid\" for those refused with 401 and 400.");
    for (int result = HF_PAYMENT_COMMITTED; result <= HF_PAYMENT_RECORDED; result++) {
        hf_metrics_label_t label = {"result", hf_payment_result_name(result)};
        hf_metrics_sample(out, "holdfast_webhooks_total", &label, 1, (double)counts[result]);
    }
    const hf_metrics_label_t repeat = {"result", "repeat"};
    hf_metrics_sample(out, "holdfast_webhooks_total", &repeat, 1,
                      (double)counts[HF_PAYMENT_COUNT_REPEAT]);
    const hf_metrics_t *metrics = context->metrics;
    const hf_metrics_label_t signature = {"result", "invalid_signature"};
    hf_metrics_sample(out, "holdfast_webhooks_total", &signature, 1,
                      (double)hf_metrics_route_answers(metrics, handle_webhook, 401));
    const hf_metrics_label_t invalid = {"result", "invalid"};
    hf_metrics_sample(out, "holdfast_webhooks_total", &invalid, 1,
                      (double)hf_metrics_route_answers(metrics, handle_webhook, 400));
}

void hf_handlers_payments_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    render_webhooks(context, out);
    const hf_core_t *core = context->core;
    uint32_t completed = hf_core_refunds_completed(core);
    hf_metrics_family(out, "holdfast_refunds", "gauge", "Refunds by status.");
    const hf_metrics_label_t pending = {"status", hf_refund_status_name(HF_REFUND_PENDING)};
    hf_metrics_sample(out, "holdfast_refunds", &pending, 1,
                      (double)(hf_core_refund_count(core) - completed));
    const hf_metrics_label_t done = {"status", hf_refund_status_name(HF_REFUND_COMPLETED)};
    hf_metrics_sample(out, "holdfast_refunds", &done, 1, completed);
}
