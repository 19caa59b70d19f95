/* Handlers of holds and orders (API.md sections 3 and 4). */
#include "engine/internal.h"

#include <string.h>

static void reply_hold(hf_request_t *request, int status, uint32_t hold_index, const bool *capped) {
    hf_core_t *core = request->engine->core;
    const hf_hold_t *hold = hf_core_hold_at(core, hold_index);
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    if (!capped) {
        hf_render_hold(&json, core, hold, request->now_ms);
        return;
    }
    /* The extend answer is the hold plus "capped": rendered, then the closing brace reopened. */
    hf_render_hold(&json, core, hold, request->now_ms);
    hf_buffer_t *body = &request->response->body;
    body->length--;
    hf_buffer_printf(body, ",\"capped\":%s}", *capped ? "true" : "false");
}

static void reply_order(hf_request_t *request, uint32_t order_index) {
    hf_core_t *core = request->engine->core;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_order(&json, core, hf_core_order_at(core, order_index));
}

/* Decodes the hold request body; false after answering 400. */
static bool hold_request_decode(hf_request_t *request, hf_hold_request_t *hold_request,
                                const char **seat_ids, hf_pool_request_t *pools) {
    json_t *body = request->body;
    const char *field;
    if (!hf_decode_user(request, &hold_request->user_id)) return false;
    if (json_object_get(body, "best_available")) {
        hf_reply_error(request, 400, "invalid_request",
                       "best_available is not supported by this server yet", "best_available");
        return false;
    }
    if (!hf_items_decode(body, hold_request, seat_ids, pools, &field)) {
        hf_reply_error(request, 400, "invalid_request",
                       strcmp(field, "seats") == 0 ? "seats must be a list of seat ids"
                                                   : "pools must map pool ids to quantities >= 1",
                       field);
        return false;
    }
    hold_request->ttl_ms = -1;
    if (!hf_decode_seconds(request, body, "ttl_s", &hold_request->ttl_ms)) return false;
    return hf_decode_bool(request, body, "replace_existing", &hold_request->replace_existing);
}

void hf_handle_hold_create(hf_request_t *request) {
    const char *seat_ids[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
    char hold_id[HF_SERVER_ID_SIZE + 1];
    hf_hold_request_t hold_request = {.event_id = request->params[0], .hold_id = hold_id};
    hf_core_t *core = request->engine->core;
    if (!hf_core_event(core, request->params[0], NULL)) {
        hf_reply_error(request, 404, "event_not_found", "no such event", NULL);
        return;
    }
    if (!hold_request_decode(request, &hold_request, seat_ids, pools)) return;
    hf_engine_make_id("res_", hold_id);
    static hf_error_detail_t detail; /* large: kept off the stack; one thread uses it */
    memset(&detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t hold_index;
    hf_error_t error = hf_core_hold(core, &hold_request, request->now_ms, &hold_index, &detail);
    if (error) {
        hf_reply_core_error(request, error, &detail, &hold_request);
        return;
    }
    reply_hold(request, 201, hold_index, NULL);
}

/* The hold named by the first path parameter, or false after answering 404. */
static bool hold_or_404(hf_request_t *request, uint32_t *index) {
    if (hf_core_hold_find(request->engine->core, request->params[0], index)) return true;
    hf_reply_error(request, 404, "hold_not_found", "no such hold", NULL);
    return false;
}

void hf_handle_hold_get(hf_request_t *request) {
    uint32_t index;
    if (hold_or_404(request, &index)) reply_hold(request, 200, index, NULL);
}

void hf_handle_hold_extend(hf_request_t *request) {
    const char *user_id;
    int64_t ttl_ms = -1;
    if (!hf_decode_user(request, &user_id)) return;
    if (!hf_decode_seconds(request, request->body, "ttl_s", &ttl_ms)) return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    bool capped = false;
    hf_error_t error = hf_core_extend(request->engine->core, request->params[0], user_id, ttl_ms,
                                      request->now_ms, &capped);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_hold(request, 200, index, &capped);
}

void hf_handle_hold_release(hf_request_t *request) {
    const char *user_id;
    if (!hf_decode_user(request, &user_id)) return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    hf_error_t error = hf_core_release(request->engine->core, request->params[0], user_id,
                                       request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_hold(request, 200, index, NULL);
}

void hf_handle_hold_commit(hf_request_t *request) {
    const char *user_id, *payment_ref = NULL;
    if (!hf_decode_user(request, &user_id)) return;
    if (!hf_decode_string(request, request->body, "payment_ref", HF_PAYMENT_REF_SIZE_MAX, false,
                          &payment_ref))
        return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    char order_id[HF_SERVER_ID_SIZE + 1];
    hf_engine_make_id("ord_", order_id);
    uint32_t order_index;
    hf_error_t error = hf_core_commit(request->engine->core, request->params[0], user_id, order_id,
                                      payment_ref, request->now_ms, &order_index);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, order_index);
}

void hf_handle_order_get(hf_request_t *request) {
    uint32_t index;
    if (!hf_core_order_find(request->engine->core, request->params[0], &index)) {
        hf_reply_error(request, 404, "order_not_found", "no such order", NULL);
        return;
    }
    reply_order(request, index);
}

void hf_handle_order_cancel(hf_request_t *request) {
    const char *user_id;
    if (!hf_decode_user(request, &user_id)) return;
    uint32_t index;
    hf_core_t *core = request->engine->core;
    if (!hf_core_order_find(core, request->params[0], &index)) {
        hf_reply_error(request, 404, "order_not_found", "no such order", NULL);
        return;
    }
    hf_error_t error = hf_core_cancel(core, request->params[0], user_id, request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, index);
}

void hf_handle_user_orders(hf_request_t *request) {
    hf_core_t *core = request->engine->core;
    char event_id[HF_ID_SIZE_MAX + 2];
    bool filtered = hf_query_get(request->http->query, "event", event_id, sizeof event_id);
    uint32_t count;
    const uint32_t *orders = hf_core_user_orders(core, request->params[0], &count);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    hf_json_key(&json, "orders");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < count; i++) {
        const hf_order_t *order = hf_core_order_at(core, orders[i]);
        if (filtered && strcmp(hf_core_event_at(core, order->event)->id, event_id) != 0) continue;
        hf_render_order(&json, core, order);
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}
