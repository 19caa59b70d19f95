/* The old unit's side of the exchange across two owners (exchange.h): the internal routes
 * that read, lock and finish an old order, the decision N gives of a hold, and the resolution
 * of stale locks. The state changes are core/locks.h's; every answer of a change leaves once
 * it is durable, as any answer. */
#include "cluster/exchange.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cluster/call.h"
#include "cluster/internal.h"
#include "core/locks.h"
#include "engine/restore.h"
#include "lib/log.h"

/* ---- the routes ---- */

/* The unit (event or calendar) of an order, and its currency. */
static const char *order_unit(const hf_core_t *core, const hf_order_t *order,
                              const char **currency) {
    if (order->target == HF_TARGET_CALENDAR) {
        const hf_calendar_t *calendar = hf_core_calendar_at(core, order->event);
        *currency = calendar->definition.currency;
        return calendar->definition.id;
    }
    const hf_event_t *event = hf_core_event_at(core, order->event);
    *currency = event->currency;
    return event->id;
}

/* The id of the order that replaced this one, here or in another unit, or NULL. */
static const char *order_replaced_by(const hf_core_t *core, const hf_order_t *order) {
    if (order->replaced_by) return hf_core_order_at(core, order->replaced_by - 1)->id;
    return hf_core_string(core, order->replaced_by_elsewhere);
}

/* The order as N needs it: for the hold (user, total, currency, payment), and after a lock or
 * a finish (status, the lock, what replaced it). */
static void reply_order(hf_request_t *request, uint32_t index) {
    const hf_core_t *core = request->core;
    const hf_order_t *order = hf_core_order_at(core, index);
    const char *currency = NULL, *unit = order_unit(core, order, &currency);
    const char *payment_ref = hf_core_string(core, order->payment_ref);
    const char *locked_by = hf_core_order_locked_by(core, index);
    const char *replaced_by = order_replaced_by(core, order);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "order_id");
    hf_json_string(&json, order->id);
    HF_JSON_KEY(&json, "unit");
    hf_json_string(&json, unit);
    HF_JSON_KEY(&json, "status");
    hf_json_string(&json, hf_order_status_name(order->status));
    HF_JSON_KEY(&json, "user_id");
    hf_json_string(&json, hf_core_user_id(core, order->user));
    HF_JSON_KEY(&json, "total");
    hf_json_int(&json, order->total);
    HF_JSON_KEY(&json, "currency");
    hf_json_string(&json, currency);
    HF_JSON_KEY(&json, "payment_ref");
    if (payment_ref) hf_json_string(&json, payment_ref);
    else hf_json_null(&json);
    HF_JSON_KEY(&json, "locked_by");
    if (locked_by) hf_json_string(&json, locked_by);
    else hf_json_null(&json);
    HF_JSON_KEY(&json, "replaced_by");
    if (replaced_by) hf_json_string(&json, replaced_by);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

/* The order of the first path parameter, or false after answering 404. An answer that
 * changes nothing waits for the order's last change to be durable, not for the open batch. */
static bool order_or_404(hf_request_t *request, uint32_t *index) {
    if (!hf_core_order_find(request->core, request->params[0], index)) {
        hf_reply_error(request, HF_API_ERROR_ORDER_NOT_FOUND, NULL, NULL);
        return false;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_core_order_change(request->core, *index);
    return true;
}

/* A text member of the body, or false after answering 400 about it. */
bool hf_cluster_body_text(hf_request_t *request, const char *name, const char **text) {
    json_t *member = request->body ? json_object_get(request->body, name) : NULL;
    if (!json_is_string(member) || json_string_length(member) == 0) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "a non-empty string is required",
                       name);
        return false;
    }
    *text = json_string_value(member);
    return true;
}

void hf_cluster_exchange_order_get(hf_request_t *request) {
    uint32_t index;
    if (order_or_404(request, &index)) reply_order(request, index);
}

void hf_cluster_exchange_order_lock(hf_request_t *request) {
    const char *hold_id, *hold_unit;
    uint32_t index;
    if (!hf_cluster_body_text(request, "hold", &hold_id) ||
        !hf_cluster_body_text(request, "unit", &hold_unit))
        return;
    if (!order_or_404(request, &index)) return;
    hf_error_t error = hf_core_order_lock(request->core, request->params[0], hold_id, hold_unit,
                                          request->now_ms);
    if (!error) hf_cluster_exchange_fault("o_lock_applied");
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, index);
    /* The crash test's lock durable and never answered: the answer is held back for good. */
    if (!error && hf_cluster_exchange_fault_is("o_lock_durable") &&
        hf_http_deferred_valid(hf_http_response_defer(request->response)))
        request->context->cluster->fault_sequence = hf_context_reply_sequence(request->context);
}

void hf_cluster_exchange_order_finish(hf_request_t *request) {
    const char *hold_id, *new_order_id;
    uint32_t index;
    if (!hf_cluster_body_text(request, "hold", &hold_id) ||
        !hf_cluster_body_text(request, "order", &new_order_id))
        return;
    if (!order_or_404(request, &index)) return;
    hf_cluster_exchange_fault("o_finish");
    hf_error_t error = hf_core_order_exchange_finish(request->core, request->params[0], hold_id,
                                                     new_order_id, request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, index);
}

/* N's side: what became of a commit of the hold. committed only once the hold's commit is
 * durable (the answer rests on it); not_committed only when no commit of it is in flight. */
void hf_cluster_exchange_decision(hf_request_t *request) {
    uint32_t index;
    if (!hf_core_hold_find(request->core, request->params[0], &index) &&
        !hf_restore_hold_revive(request->context, request->params[0], &index)) {
        hf_reply_error(request, HF_API_ERROR_HOLD_NOT_FOUND, NULL, NULL);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_core_hold_change(request->core, index);
    const hf_hold_t *hold = hf_core_hold_at(request->core, index);
    bool committed = hold->status == HF_HOLD_CONFIRMED && hold->order != 0;
    const char *decision = committed ? "committed"
                           : hf_cluster_exchange_in_flight(request->context->cluster, hold->id)
                               ? "in_progress"
                               : "not_committed";
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "hold");
    hf_json_string(&json, hold->id);
    HF_JSON_KEY(&json, "decision");
    hf_json_string(&json, decision);
    HF_JSON_KEY(&json, "order_id");
    if (committed) hf_json_string(&json, hf_core_order_at(request->core, hold->order - 1)->id);
    else hf_json_null(&json);
    /* The hold as it is (a cancel job's unit asks about its offers past their expiry). */
    HF_JSON_KEY(&json, "status");
    hf_json_string(&json, hf_hold_status_name(hold->status));
    HF_JSON_KEY(&json, "expires_at_ms");
    hf_json_int(&json, hold->expires_at_ms);
    hf_json_object_end(&json);
}

/* ---- the resolution of stale locks ---- */

static bool asking_already(const hf_cluster_t *cluster, const char *order_id) {
    for (size_t i = 0; i < HF_EXCHANGE_RESOLVING_MAX; i++)
        if (cluster->asking[i].used && strcmp(cluster->asking[i].order_id, order_id) == 0)
            return true;
    return false;
}

static exchange_asking_t *asking_take(hf_cluster_t *cluster) {
    for (size_t i = 0; i < HF_EXCHANGE_RESOLVING_MAX; i++)
        if (!cluster->asking[i].used) return &cluster->asking[i];
    return NULL;
}

/* What the decision says, applied as a command of its own (its records go in the open batch,
 * durable with it): committed finishes the exchange, not_committed (or a hold no unit has:
 * nothing was ever committed) ends the lock; anything else is asked again next period. */
static void decision_apply(hf_cluster_t *cluster, const exchange_asking_t *asking, int status,
                           const char *body, size_t length) {
    json_t *answer = status == 200 ? json_loadb(body, length, 0, NULL) : NULL;
    const char *decision = json_string_value(json_object_get(answer, "decision"));
    const char *new_order = json_string_value(json_object_get(answer, "order_id"));
    hf_context_t *context = cluster->context;
    hf_time_ms_t now = hf_context_now_ms(context);
    bool commit = decision && strcmp(decision, "committed") == 0 && new_order;
    bool abort = status == 404 || (decision && strcmp(decision, "not_committed") == 0);
    if ((commit || abort) && !context->store_failed) {
        hf_core_advance(context->core, now);
        hf_error_t error = commit ? hf_core_order_exchange_finish(context->core, asking->order_id,
                                                                  asking->hold_id, new_order, now)
                                  : hf_core_order_unlock(context->core, asking->order_id,
                                                         asking->hold_id, now);
        /* An order that cannot be finished any more (not confirmed) is asked about no more. */
        if (commit && error == HF_ERROR_ORDER_NOT_ACTIVE)
            hf_core_order_unlock(context->core, asking->order_id, asking->hold_id, now);
        HF_LOG_FIELDS(HF_LOG_INFO, "exchange lock resolved",
                      HF_LOG_TEXT("order_id", asking->order_id),
                      HF_LOG_TEXT("hold", asking->hold_id),
                      HF_LOG_TEXT("decision", commit ? "committed" : "not_committed"),
                      HF_LOG_NUMBER("error", (double)error));
    }
    json_decref(answer);
}

static void on_decision(void *state, int status, const char *body, size_t length) {
    exchange_asking_t *asking = state;
    hf_cluster_t *cluster = asking->cluster;
    if (!cluster->stopped) decision_apply(cluster, asking, status, body, length);
    asking->used = false;
}

static void ask_decision(hf_cluster_t *cluster, const hf_order_lock_view_t *lock) {
    exchange_asking_t *asking = asking_take(cluster);
    if (!asking) return;
    char path[64 + HF_SERVER_ID_SIZE];
    snprintf(path, sizeof path, "/v1/cluster/holds/%s/decision", lock->hold_id);
    asking->used = true;
    asking->cluster = cluster;
    snprintf(asking->order_id, sizeof asking->order_id, "%s", lock->order_id);
    snprintf(asking->hold_id, sizeof asking->hold_id, "%s", lock->hold_id);
    if (!hf_cluster_call(cluster, lock->hold_unit, "GET", path, NULL, on_decision, asking))
        asking->used = false;
}

static void on_resolve_timer(uv_timer_t *timer) {
    hf_cluster_t *cluster = timer->data;
    hf_core_t *core = cluster->context->core;
    if (cluster->stopped || cluster->context->store_failed) return;
    hf_time_ms_t now = hf_context_now_ms(cluster->context);
    for (uint32_t i = 0; i < hf_core_order_lock_count(core); i++) {
        hf_order_lock_view_t lock = hf_core_order_lock_at(core, i);
        if (now - lock.locked_at_ms < HF_EXCHANGE_RESOLVE_AFTER_MS ||
            asking_already(cluster, lock.order_id))
            continue;
        ask_decision(cluster, &lock);
    }
}

void hf_cluster_exchange_start(hf_cluster_t *cluster) {
    uv_timer_init(cluster->loop, &cluster->resolve_timer);
    cluster->resolve_timer.data = cluster;
    uv_timer_start(&cluster->resolve_timer, on_resolve_timer, HF_EXCHANGE_RESOLVE_EVERY_MS,
                   HF_EXCHANGE_RESOLVE_EVERY_MS);
    cluster->resolving = true;
    hf_cluster_exchange_watch(cluster);
}

void hf_cluster_exchange_stop(hf_cluster_t *cluster) {
    if (!cluster->resolving) return;
    cluster->resolving = false;
    uv_close((uv_handle_t *)&cluster->resolve_timer, NULL);
    hf_cluster_exchange_unwatch(cluster);
}
