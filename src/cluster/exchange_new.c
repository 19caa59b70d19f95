/* The new unit's side of the exchange across two owners (exchange.h). A request that needs
 * the old unit's owner is parked here on one internal call at a time (call.h) and goes on
 * through the dispatcher once it answered, its handler reading that answer
 * (hf_cluster_exchange_read, hf_cluster_exchange_locked):
 *   a hold whose exchange_for this core does not know: GET the order, then the handler places a
 *     remote exchange hold (core/locks.h);
 *   the commit of a remote exchange hold: lock the order, then the handler makes the decision
 *     (the commit), whose answer is held back until its batch is durable and the old unit's
 *     owner finished the exchange (503 unavailable when that cannot be confirmed).
 * A commit is in flight from its lock to its decision's durability: the decision route answers
 * in_progress about it meanwhile. */
#include "cluster/exchange.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/call.h"
#include "cluster/internal.h"
#include "core/locks.h"
#include "lib/log.h"

static exchange_pending_t *pending_take(hf_cluster_t *cluster) {
    for (size_t i = 0; i < HF_EXCHANGE_PENDING_MAX; i++)
        if (!cluster->pending[i].used) {
            exchange_pending_t *pending = &cluster->pending[i];
            memset(pending, 0, sizeof *pending);
            pending->used = true;
            pending->cluster = cluster;
            return pending;
        }
    return NULL;
}

static void pending_free(exchange_pending_t *pending) {
    free(pending->parked);
    pending->parked = NULL;
    pending->used = false;
}

bool hf_cluster_exchange_in_flight(const hf_cluster_t *cluster, const char *hold_id) {
    for (size_t i = 0; cluster && i < HF_EXCHANGE_PENDING_MAX; i++) {
        const exchange_pending_t *pending = &cluster->pending[i];
        if (pending->used && pending->kind == PENDING_COMMIT && !pending->finishing &&
            strcmp(pending->hold_id, hold_id) == 0)
            return true;
    }
    return false;
}

/* The fault point the environment names, read once: NULL in every run but the crash tests'. */
static const char *fault_named(void) {
    static const char *named;
    static bool read;
    if (!read) {
        named = getenv("HOLDFAST_FAULT_EXCHANGE");
        read = true;
    }
    return named;
}

bool hf_cluster_exchange_fault_is(const char *point) {
    const char *named = fault_named();
    return named && strcmp(named, point) == 0;
}

void hf_cluster_exchange_fault(const char *point) {
    const char *named = fault_named();
    if (!named) return;
    size_t length = strlen(point);
    if (strcmp(named, point) == 0) {
        hf_log(HF_LOG_WARNING, "HOLDFAST_FAULT_EXCHANGE: killed at %s", point);
        raise(SIGKILL);
    } else if (strncmp(named, point, length) == 0 && strcmp(named + length, "_stop") == 0) {
        hf_log(HF_LOG_WARNING, "HOLDFAST_FAULT_EXCHANGE: stopped at %s", point);
        raise(SIGSTOP); /* the test's SIGCONT goes on from here, its leases lapsed meanwhile */
    }
}

/* ---- answering a parked request ---- */

/* The parked request's answer, reopened: NULL when its client left. */
static hf_http_response_t *reopen(exchange_pending_t *pending) {
    hf_http_response_t *response = hf_http_deferred_reopen(pending->cluster->http,
                                                           pending->deferred);
    if (!response) return NULL;
    response->status = 200;
    response->content_type = NULL;
    hf_buffer_reset(&response->body);
    return response;
}

/* Answers the parked request with error id itself (the call failed or refused). */
static void refuse(exchange_pending_t *pending, hf_api_error_t id, const char *message) {
    hf_http_response_t *response = reopen(pending);
    if (!response) return;
    hf_request_t request;
    hf_request_init(&request, pending->cluster->context, &pending->parked->http, response);
    hf_reply_error(&request, id, message, NULL);
    response->durable_sequence = hf_context_reply_sequence(pending->cluster->context);
    hf_http_response_settle(response);
}

/* The request served here after all, its handler reading pending (the cluster's current). */
static hf_http_response_t *serve(exchange_pending_t *pending) {
    hf_cluster_t *cluster = pending->cluster;
    hf_http_response_t *response = reopen(pending);
    if (!response) return NULL;
    hf_route_resumed_t resumed = {pending->parked->route, pending->unit, NULL};
    cluster->exchange_current = pending;
    cluster->config.resume(cluster->context, &pending->parked->http, response, &resumed);
    cluster->exchange_current = NULL;
    return response;
}

/* Whether the request may still be served here: no rebuild since it was parked (its unit is
 * then still this node's, loaded, in the same core). */
static bool still_here(const exchange_pending_t *pending) {
    return !pending->cluster->context->store_failed &&
           pending->cluster->rebuilds == pending->rebuilds;
}

/* ---- the old order as its owner answers ---- */

static void copy_text(char *to, size_t size, json_t *from) {
    snprintf(to, size, "%s", json_is_string(from) ? json_string_value(from) : "");
}

/* The order's members of a 200 (exchange_old.c's reply_order). */
static void answer_read(exchange_pending_t *pending, const char *body, size_t length) {
    json_t *answer = json_loadb(body, length, 0, NULL);
    copy_text(pending->user_id, sizeof pending->user_id, json_object_get(answer, "user_id"));
    json_t *payment_ref = json_object_get(answer, "payment_ref");
    pending->paid = json_is_string(payment_ref);
    copy_text(pending->payment_ref, sizeof pending->payment_ref, payment_ref);
    const char *status = json_string_value(json_object_get(answer, "status"));
    pending->confirmed = status && strcmp(status, "confirmed") == 0;
    pending->total = json_integer_value(json_object_get(answer, "total"));
    const char *locked_by = json_string_value(json_object_get(answer, "locked_by"));
    pending->granted = locked_by && strcmp(locked_by, pending->hold_id) == 0;
    json_decref(answer);
}

static bool remote_of(const exchange_pending_t *pending, hf_remote_order_t *remote) {
    *remote = (hf_remote_order_t){pending->order_id, pending->user_id,
                                  pending->paid ? pending->payment_ref : NULL, pending->total,
                                  pending->confirmed};
    return true;
}

bool hf_cluster_exchange_read(const hf_cluster_t *cluster, const char *order_id,
                              hf_remote_order_t *remote) {
    const exchange_pending_t *pending = cluster ? cluster->exchange_current : NULL;
    if (!pending || pending->kind != PENDING_READ || !pending->user_id[0] ||
        strcmp(pending->order_id, order_id) != 0)
        return false;
    return remote_of(pending, remote);
}

bool hf_cluster_exchange_refused(const hf_cluster_t *cluster, const char *hold_id) {
    const exchange_pending_t *pending = cluster ? cluster->exchange_current : NULL;
    return pending && pending->kind == PENDING_COMMIT && pending->refused &&
           strcmp(pending->hold_id, hold_id) == 0;
}

bool hf_cluster_exchange_locked(const hf_cluster_t *cluster, const char *hold_id,
                                hf_remote_order_t *remote) {
    const exchange_pending_t *pending = cluster ? cluster->exchange_current : NULL;
    if (!pending || pending->kind != PENDING_COMMIT || !pending->granted ||
        strcmp(pending->hold_id, hold_id) != 0)
        return false;
    return remote_of(pending, remote);
}

/* A call's answer as the parked request's callbacks read it: -1 when the cluster stopped
 * meanwhile (the pending is freed), else the status, its order read, 0 when the request can no
 * longer be served here (a rebuild since it was parked). */
static int answered(exchange_pending_t *pending, int status, const char *body, size_t length) {
    if (pending->cluster->stopped) {
        pending_free(pending);
        return -1;
    }
    if (status == 200) answer_read(pending, body, length);
    return still_here(pending) ? status : 0;
}

/* ---- a hold: the order read ---- */

static void on_read(void *state, int status, const char *body, size_t length) {
    exchange_pending_t *pending = state;
    if ((status = answered(pending, status, body, length)) < 0) return;
    if (status == 200 || status == 404) {
        hf_http_response_t *response = serve(pending);
        if (response) hf_http_response_settle(response);
    } else {
        refuse(pending, HF_API_ERROR_UNAVAILABLE,
               "the node owning the order to exchange did not answer; retry shortly");
    }
    pending_free(pending);
}

/* ---- a commit: lock, decide, finish ---- */

/* The finish's answer: the decision's answer leaves as the handler wrote it, or 503 when the
 * old order's owner did not confirm (its resolution finishes the exchange later). */
static void on_finish(void *state, int status, const char *body, size_t length) {
    exchange_pending_t *pending = state;
    hf_cluster_t *cluster = pending->cluster;
    hf_http_response_t *response = hf_http_deferred_response(cluster->http, pending->deferred);
    if (response && status != 200) {
        hf_request_t request;
        hf_request_init(&request, cluster->context, &pending->parked->http, response);
        hf_buffer_reset(&response->body);
        hf_reply_error(&request, HF_API_ERROR_UNAVAILABLE,
                       pending->lost
                           ? "this node lost the event before its decision was durable; the "
                             "outcome is unknown: retry with the same Idempotency-Key"
                           : "the exchange is decided but the old order's node did not confirm "
                             "it; the outcome is unknown: retry with the same Idempotency-Key",
                       NULL);
    }
    if (response) hf_http_deferred_finish(cluster->http, pending->deferred);
    pending_free(pending);
}

static void finish_send(exchange_pending_t *pending) {
    hf_cluster_t *cluster = pending->cluster;
    pending->finishing = true;
    char path[64 + HF_ID_SIZE_MAX], body[128 + 2 * HF_SERVER_ID_SIZE];
    snprintf(path, sizeof path, "/v1/cluster/orders/%s/exchange", pending->order_id);
    snprintf(body, sizeof body, "{\"hold\": \"%s\", \"order\": \"%s\"}", pending->hold_id,
             pending->new_order);
    if (!hf_cluster_call(cluster, NULL, "POST", path, body, on_finish, pending))
        on_finish(pending, 0, "", 0);
}

/* The decision's batch durable, or lost with a rebuild (503: the resolution settles it). */
static void on_watch(uv_check_t *check) {
    hf_cluster_t *cluster = check->data;
    hf_context_t *context = cluster->context;
    if (cluster->fault_sequence && context->durable_sequence >= cluster->fault_sequence)
        hf_cluster_exchange_fault("o_lock_durable");
    for (size_t i = 0; i < HF_EXCHANGE_PENDING_MAX; i++) {
        exchange_pending_t *pending = &cluster->pending[i];
        if (!pending->used || !pending->deciding || pending->finishing) continue;
        if (cluster->rebuilds != pending->rebuilds || context->store_failed) {
            pending->finishing = pending->lost = true;
            on_finish(pending, 0, "", 0);
        } else if (context->durable_sequence >= pending->sequence) {
            hf_cluster_exchange_fault("n_decided");
            finish_send(pending);
        }
    }
}

/* The handler made the decision when the hold is confirmed now: its answer waits here. */
static void decided(exchange_pending_t *pending, hf_http_response_t *response) {
    hf_cluster_t *cluster = pending->cluster;
    const hf_hold_t *hold = hf_core_hold_find(cluster->context->core, pending->hold_id, NULL);
    bool decision = response->status == 200 && hold && hold->status == HF_HOLD_CONFIRMED;
    if (decision) pending->deferred = hf_http_response_defer(response);
    if (!decision || !hf_http_deferred_valid(pending->deferred)) {
        hf_http_response_settle(response);
        pending_free(pending);
        return;
    }
    snprintf(pending->new_order, sizeof pending->new_order, "%s",
             hf_core_order_at(cluster->context->core, hold->order - 1)->id);
    pending->deciding = true;
    pending->sequence = response->durable_sequence;
}

static void on_lock(void *state, int status, const char *body, size_t length) {
    exchange_pending_t *pending = state;
    /* Moved meanwhile (0): the lock is resolved (no commit in flight here any more). */
    if ((status = answered(pending, status, body, length)) < 0) return;
    if (status == 200 && pending->granted) {
        hf_cluster_exchange_fault("n_lock_answered");
        hf_http_response_t *response = serve(pending);
        if (response) decided(pending, response);
        else pending_free(pending);
        return;
    }
    bool refusal = status == 409 || status == 200 || status == 404;
    if (refusal && pending->serve_refusal) {
        /* A webhook's: the payment is decided (a refund), not left to the provider's retry. */
        pending->refused = true;
        hf_http_response_t *response = serve(pending);
        if (response) hf_http_response_settle(response);
        pending_free(pending);
        return;
    }
    if (status == 409 || status == 200)
        refuse(pending, HF_API_ERROR_ORDER_NOT_ACTIVE, "the order to exchange is not confirmed");
    else if (status == 404) refuse(pending, HF_API_ERROR_ORDER_NOT_FOUND, NULL);
    else
        refuse(pending, HF_API_ERROR_UNAVAILABLE,
               "the node owning the order to exchange did not answer; the outcome is unknown, "
               "retry with the same Idempotency-Key");
    pending_free(pending);
}

/* ---- the routing's hook ---- */

/* The body's exchange_for, or NULL (flat bodies: the hold route's). Every hold comes here: a
 * body that does not even name the member is not read. */
static const char *exchange_for(hf_cluster_t *cluster, const hf_request_t *request) {
    static const char MEMBER[] = "\"exchange_for\"";
    const hf_http_request_t *http = request->http;
    if (!http->body || !memmem(http->body, http->body_length, MEMBER, sizeof MEMBER - 1))
        return NULL;
    hf_flat_json_t *flat = &cluster->flat;
    if (!hf_flat_json_read(flat, http->body, http->body_length)) return NULL;
    const hf_flat_json_member_t *member = hf_flat_json_member(flat, "exchange_for");
    if (!member || member->kind != HF_FLAT_JSON_STRING || member->length == 0 ||
        member->length > HF_ID_SIZE_MAX)
        return NULL;
    return member->string;
}

/* Parks the request and sends its call; false when it cannot (served as it is). */
static bool park(hf_cluster_t *cluster, hf_request_t *request, exchange_pending_t *pending,
                 const char *method, const char *path, const char *body, hf_cluster_call_fn done) {
    pending->deferred = hf_http_response_defer(request->response);
    if (!hf_http_deferred_valid(pending->deferred)) return false;
    pending->parked = hf_cluster_parked_new(request->http, request->route);
    snprintf(pending->unit, sizeof pending->unit, "%s", request->unit);
    pending->rebuilds = cluster->rebuilds;
    if (hf_cluster_call(cluster, NULL, method, path, body, done, pending)) return true;
    hf_http_response_undefer(request->response);
    return false;
}

static bool hold_route(hf_cluster_t *cluster, hf_request_t *request) {
    const char *order_id = exchange_for(cluster, request);
    if (!order_id || hf_core_order_find(cluster->context->core, order_id, NULL)) return false;
    exchange_pending_t *pending = pending_take(cluster);
    if (!pending) return false;
    pending->kind = PENDING_READ;
    snprintf(pending->order_id, sizeof pending->order_id, "%s", order_id);
    char path[64 + HF_ID_SIZE_MAX];
    snprintf(path, sizeof path, "/v1/cluster/orders/%s", pending->order_id);
    if (park(cluster, request, pending, "GET", path, NULL, on_read)) return true;
    pending_free(pending);
    return false;
}

/* The hold id of /v1/holds/{hold}/commit (read from the path: a request resumed after a
 * lookup or a takeover has no parameters). */
static bool path_hold(const char *path, char *hold_id, size_t size) {
    static const char PREFIX[] = "/v1/holds/";
    if (strncmp(path, PREFIX, sizeof PREFIX - 1) != 0) return false;
    const char *start = path + sizeof PREFIX - 1, *end = strchr(start, '/');
    if (!end || (size_t)(end - start) >= size) return false;
    memcpy(hold_id, start, (size_t)(end - start));
    hold_id[end - start] = '\0';
    return true;
}

/* Parks request on the lock of the old order of hold_id, a held remote exchange hold. */
static bool lock_park(hf_cluster_t *cluster, hf_request_t *request, const char *hold_id,
                      bool serve_refusal) {
    const hf_hold_t *hold = hf_core_hold_find(cluster->context->core, hold_id, NULL);
    if (!hold || hold->status != HF_HOLD_HELD || !hold->exchange_elsewhere) return false;
    exchange_pending_t *pending = pending_take(cluster);
    if (!pending) return false;
    pending->kind = PENDING_COMMIT;
    pending->serve_refusal = serve_refusal;
    snprintf(pending->hold_id, sizeof pending->hold_id, "%s", hold->id);
    snprintf(pending->order_id, sizeof pending->order_id, "%s",
             hf_core_string(cluster->context->core, hold->exchange_elsewhere - 1));
    char path[64 + HF_ID_SIZE_MAX], body[128 + HF_SERVER_ID_SIZE + HF_CLUSTER_UNIT_SIZE_MAX];
    snprintf(path, sizeof path, "/v1/cluster/orders/%s/lock", pending->order_id);
    snprintf(body, sizeof body, "{\"hold\": \"%s\", \"unit\": \"%s\"}", pending->hold_id,
             request->unit);
    if (park(cluster, request, pending, "POST", path, body, on_lock)) return true;
    pending_free(pending);
    return false;
}

static bool commit_route(hf_cluster_t *cluster, hf_request_t *request) {
    char hold_id[HF_SERVER_ID_SIZE + 1];
    return path_hold(request->http->path, hold_id, sizeof hold_id) &&
           lock_park(cluster, request, hold_id, false);
}

bool hf_cluster_exchange_lock_park(hf_cluster_t *cluster, hf_request_t *request,
                                   const char *hold_id) {
    return cluster && !cluster->stopped && lock_park(cluster, request, hold_id, true);
}

/* ---- a cancel: its rebook_to described by its owner (offers.h) ---- */

static void on_event(void *state, int status, const char *body, size_t length) {
    exchange_pending_t *pending = state;
    if (pending->cluster->stopped) {
        pending_free(pending);
        return;
    }
    json_t *answer = status == 200 ? json_loadb(body, length, 0, NULL) : NULL;
    const char *currency = json_string_value(json_object_get(answer, "currency"));
    pending->described = currency != NULL;
    snprintf(pending->currency, sizeof pending->currency, "%s", currency ? currency : "");
    pending->event_cancelled = json_is_true(json_object_get(answer, "cancelled"));
    json_decref(answer);
    /* 404: no unit has it, and the handler refuses it as unknown. */
    if (still_here(pending) && (pending->described || status == 404)) {
        hf_http_response_t *response = serve(pending);
        if (response) hf_http_response_settle(response);
    } else {
        refuse(pending, HF_API_ERROR_UNAVAILABLE,
               "the node owning rebook_to did not answer; retry shortly");
    }
    pending_free(pending);
}

bool hf_cluster_exchange_event(const hf_cluster_t *cluster, const char *event_id,
                               const char **currency, bool *cancelled) {
    const exchange_pending_t *pending = cluster ? cluster->exchange_current : NULL;
    if (!pending || pending->kind != PENDING_EVENT || !pending->described ||
        strcmp(pending->event_id, event_id) != 0)
        return false;
    *currency = pending->currency;
    *cancelled = pending->event_cancelled;
    return true;
}

/* The cancel of an event not cancelled yet whose body's rebook_to this core does not have. */
static bool cancel_route(hf_cluster_t *cluster, hf_request_t *request) {
    hf_core_t *core = cluster->context->core;
    const hf_event_t *event = hf_core_event(core, request->unit, NULL);
    const hf_http_request_t *http = request->http;
    if (!event || event->cancelled || !http->body ||
        !hf_flat_json_read(&cluster->flat, http->body, http->body_length))
        return false;
    const hf_flat_json_member_t *member = hf_flat_json_member(&cluster->flat, "rebook_to");
    if (!member || member->kind != HF_FLAT_JSON_STRING || member->length == 0 ||
        member->length > HF_ID_SIZE_MAX || hf_core_event(core, member->string, NULL))
        return false;
    exchange_pending_t *pending = pending_take(cluster);
    if (!pending) return false;
    pending->kind = PENDING_EVENT;
    snprintf(pending->event_id, sizeof pending->event_id, "%s", member->string);
    char path[64 + HF_ID_SIZE_MAX];
    snprintf(path, sizeof path, "/v1/cluster/events/%s", pending->event_id);
    pending->deferred = hf_http_response_defer(request->response);
    if (hf_http_deferred_valid(pending->deferred)) {
        pending->parked = hf_cluster_parked_new(request->http, request->route);
        snprintf(pending->unit, sizeof pending->unit, "%s", request->unit);
        pending->rebuilds = cluster->rebuilds;
        if (hf_cluster_call(cluster, pending->event_id, "GET", path, NULL, on_event, pending))
            return true;
        hf_http_response_undefer(request->response);
    }
    pending_free(pending);
    return false;
}

bool hf_cluster_exchange_route(hf_cluster_t *cluster, hf_request_t *request) {
    if (cluster->stopped || strcmp(request->http->method, "POST") != 0) return false;
    if (request->route->unit.id == HF_ROUTE_ID_HOLD) return commit_route(cluster, request);
    if (request->route->flags & HF_ROUTE_REBOOK) return cancel_route(cluster, request);
    return hold_route(cluster, request);
}

void hf_cluster_exchange_watch(hf_cluster_t *cluster) {
    uv_check_init(cluster->loop, &cluster->exchange_watch);
    cluster->exchange_watch.data = cluster;
    uv_check_start(&cluster->exchange_watch, on_watch);
}

void hf_cluster_exchange_unwatch(hf_cluster_t *cluster) {
    uv_close((uv_handle_t *)&cluster->exchange_watch, NULL);
}
