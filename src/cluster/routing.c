/* A request's unit and where it is served (cluster.h): here, forwarded to the owner,
 * redirected (a stream), or parked on a job (jobs.h) with its continuation, which goes on
 * where the request stopped once the job is done. */
#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cluster/internal.h"
#include "core/dispatch/dispatch.h"
#include "engine/notification.h"
#include "lib/log.h"
#include "store/backend.h"

/* The unit of a hold or an order: its event's id, or its calendar's (a calendar is a unit of
 * its own, API.md section 12). */
static const char *target_unit(const hf_core_t *core, uint8_t target, uint32_t index) {
    if (target == HF_TARGET_CALENDAR) return hf_core_calendar_at(core, index)->definition.id;
    return hf_core_event_at(core, index)->id;
}

/* The unit of an id the local core knows: its event's or fleet's id, or NULL. A refund's is
 * always looked up. */
static const char *local_unit(const hf_core_t *core, hf_route_id_kind_t kind, const char *id) {
    if (kind == HF_ROUTE_ID_HOLD) {
        const hf_hold_t *hold = hf_core_hold_find(core, id, NULL);
        return hold ? target_unit(core, hold->target, hold->event) : NULL;
    }
    if (kind == HF_ROUTE_ID_ORDER) {
        const hf_order_t *order = hf_core_order_find(core, id, NULL);
        return order ? target_unit(core, order->target, order->event) : NULL;
    }
    if (kind == HF_ROUTE_ID_RIDE) {
        const hf_ride_t *ride = hf_dispatch_ride_find(core, id, NULL);
        return ride ? hf_dispatch_fleet_id(core, ride->fleet) : NULL;
    }
    return NULL;
}

/* The store's word for a kind of id (hf_store_unit_find). */
static const char *const ID_KIND_WORDS[] = {[HF_ROUTE_ID_HOLD] = "hold",
                                            [HF_ROUTE_ID_ORDER] = "order",
                                            [HF_ROUTE_ID_RIDE] = "ride",
                                            [HF_ROUTE_ID_REFUND] = "refund"};

/* The unit of an id of kind: the local core's, the cache's, or the store's. false when there
 * is no such id anywhere (the request is then served here: a 404). */
static bool id_unit(hf_cluster_t *cluster, hf_route_id_kind_t kind, const char *id, char *unit,
                    size_t unit_size, const hf_cluster_job_t *resumed) {
    if (kind == HF_ROUTE_ID_NOTIFICATION) {
        /* Its id names its unit (engine/notification.h); one that does not is served here. */
        char named[HF_ID_SIZE_MAX + 1];
        int64_t seq;
        if (!hf_notify_id_parse(id, named, &seq)) return false;
        snprintf(unit, unit_size, "%s", named);
        return true;
    }
    const char *local = local_unit(cluster->context->core, kind, id);
    if (local) {
        snprintf(unit, unit_size, "%s", local);
        return true;
    }
    uint32_t index;
    if (hf_map_get(&cluster->id_units, id, strlen(id), &index)) {
        snprintf(unit, unit_size, "%s", cluster->units[index].id);
        return true;
    }
    if (!cluster->leased || strlen(id) > HF_CLUSTER_UNIT_SIZE_MAX) return false;
    if (resumed && resumed->kind == HF_CLUSTER_JOB_LOOKUP && strcmp(resumed->key, id) == 0) {
        /* Looked up already, not found (a found one is in the cache): no second wait. */
        cluster->lookup_failed = !resumed->ok;
        return false;
    }
    /* The database is asked on the thread pool, the request parked (route_unknown). */
    cluster->lookup_kind = ID_KIND_WORDS[kind];
    snprintf(cluster->lookup_id, sizeof cluster->lookup_id, "%s", id);
    return false;
}

/* A text member of the body (a new event's "id", a webhook's "reservation_id"). Read by the
 * flat reader when it can: every webhook comes through here, and jansson's DOM costs several
 * times as much. */
static bool body_text(hf_cluster_t *cluster, const hf_request_t *request, const char *name,
                      char *unit, size_t unit_size) {
    hf_flat_json_t *flat = &cluster->flat;
    if (hf_flat_json_read(flat, request->http->body, request->http->body_length)) {
        const hf_flat_json_member_t *member = hf_flat_json_member(flat, name);
        bool ok = member && member->kind == HF_FLAT_JSON_STRING && member->length > 0 &&
                  member->length < unit_size;
        if (ok) memcpy(unit, member->string, member->length + 1);
        return ok;
    }
    json_t *body = json_loadb(request->http->body, request->http->body_length, 0, NULL);
    json_t *id = body ? json_object_get(body, name) : NULL;
    bool ok = json_is_string(id) && strlen(json_string_value(id)) < unit_size &&
              json_string_value(id)[0] != '\0';
    if (ok) snprintf(unit, unit_size, "%s", json_string_value(id));
    json_decref(body);
    return ok;
}

/* The unit of an id of the route's kind (id_unit); for a route whose ids no unit has belong
 * to the records of no unit (route.h: else_no_unit, a payment's), with leases, the records of
 * no unit (HF_STORE_UNIT_NONE) once the store said no event has it. Never on a failed or
 * pending lookup (the owner of no unit would refund a hold that exists): the request then
 * waits for the lookup or is answered 503 (route_unknown). */
static bool id_or_no_unit(hf_cluster_t *cluster, const hf_route_unit_t *from, const char *id,
                          char *unit, size_t unit_size, const hf_cluster_job_t *resumed) {
    if (id_unit(cluster, from->id, id, unit, unit_size, resumed)) return true;
    if (!from->else_no_unit || !cluster->leased || cluster->lookup_kind || cluster->lookup_failed)
        return false;
    snprintf(unit, unit_size, "%s", HF_STORE_UNIT_NONE);
    return true;
}

/* The unit a request is about, as its route names it (route.h: hf_route_unit_t): false when
 * none (lists, health, metrics), or when the route's text names none here. A body without
 * the member is served here (its 400). */
static bool request_unit(hf_cluster_t *cluster, const hf_request_t *request,
                         const hf_route_t *route, char *unit, size_t unit_size) {
    const hf_route_unit_t *from = &route->unit;
    if (from->from == HF_ROUTE_UNIT_NONE) return false;
    if (from->from == HF_ROUTE_UNIT_MEMBER) {
        if (from->id == HF_ROUTE_ID_UNIT)
            return body_text(cluster, request, from->member, unit, unit_size);
        char id[HF_SERVER_ID_SIZE + 1];
        return body_text(cluster, request, from->member, id, sizeof id) &&
               id_or_no_unit(cluster, from, id, unit, unit_size, NULL);
    }
    assert(from->param < HF_ROUTE_PARAMS_MAX);
    const char *param = request->params[from->param];
    if (from->id != HF_ROUTE_ID_UNIT)
        return id_or_no_unit(cluster, from, param, unit, unit_size, NULL);
    size_t length = strlen(param);
    if (length == 0 || length >= unit_size) return false;
    memcpy(unit, param, length + 1);
    return true;
}

static bool refuse(hf_cluster_t *cluster, hf_request_t *request, const char *message) {
    cluster->refused++;
    hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, message, NULL);
    return true;
}

/* Hands the request to the node at address; its answer comes later. */
static bool forward_to(hf_cluster_t *cluster, hf_request_t *request, const char *address) {
    hf_http_response_t *response = request->response;
    hf_http_deferred_t deferred = hf_http_response_defer(response);
    if (!hf_http_deferred_valid(deferred))
        return refuse(cluster, request, "too many requests wait for other nodes");
    hf_buffer_reset(&response->body);
    if (!hf_forward_send(cluster->forward, cluster->http, deferred, address, request->http)) {
        hf_http_response_undefer(response);
        return refuse(cluster, request, "the node owning this unit cannot be reached");
    }
    return true;
}

/* A stream (an event's live changes) lasts: it is not relayed but redirected to the owner
 * (307; a browser's EventSource follows it, across origins when the owner lists the page's
 * origin in --cors-origin). */
static bool redirect_to(hf_request_t *request, const char *address) {
    const hf_http_request_t *http = request->http;
    char location[HF_CLUSTER_ADDRESS_SIZE_MAX + HF_HTTP_HEAD_SIZE_MAX];
    int length = snprintf(location, sizeof location, "%s%s%s%s", address, http->path,
                          http->query[0] ? "?" : "", http->query);
    if (length <= 0 || (size_t)length >= sizeof location) return false;
    hf_http_response_t *response = request->response;
    const char *kept = hf_http_response_keep(response, location, (size_t)length);
    if (!kept) return false;
    response->status = 307;
    hf_buffer_reset(&response->body);
    hf_http_response_header_add(response, "Location", kept, false);
    return true;
}

const char *hf_cluster_owner_address(hf_cluster_t *cluster, const char *unit) {
    const hf_cluster_view_lease_t *lease = hf_cluster_view_lease(&cluster->view, unit);
    if (!lease || !lease->live || strcmp(lease->node_id, cluster->node_id) == 0) return NULL;
    const hf_cluster_view_node_t *node = hf_cluster_view_node(&cluster->view, lease->node_id);
    if (!node || !node->address[0] ||
        hf_context_now_ms(cluster->context) - node->heartbeat_at_ms > HEARTBEAT_STALE_MS)
        return NULL;
    return node->address;
}

bool hf_cluster_unit_elsewhere(const hf_cluster_t *cluster, const char *unit) {
    if (!cluster || !cluster->leased) return false;
    const hf_cluster_view_lease_t *lease = hf_cluster_view_lease(&cluster->view, unit);
    return lease && strcmp(lease->node_id, cluster->node_id) != 0;
}

/* What a continuation's step did: the cluster answered (refused, forwarded, redirected,
 * parked again), the request is to be served here, or it was (a list). */
typedef enum step { ANSWERED, SERVE_HERE, SERVED } step_t;

/* Parks the request on the job of kind and key (asked for when none is in flight); it goes on
 * with resume (one of the *_resumed below) once the job is done. */
static bool wait_for(hf_cluster_t *cluster, hf_request_t *request, hf_cluster_job_kind_t kind,
                     const char *key, const char *id_kind, hf_cluster_resume_fn resume);
static void list_resumed(void *state, const hf_cluster_job_t *job,
                         const hf_cluster_parked_t *parked, hf_http_response_t *response);
static void takeover_resumed(void *state, const hf_cluster_job_t *job,
                             const hf_cluster_parked_t *parked, hf_http_response_t *response);
static void lookup_resumed(void *state, const hf_cluster_job_t *job,
                           const hf_cluster_parked_t *parked, hf_http_response_t *response);

/* The request rebuilt from its parked copy for a continuation: what the cluster's own
 * answers need (hf_reply_error) and the unit it is routed as. */
static void parked_request(hf_cluster_t *cluster, hf_request_t *request,
                           const hf_http_request_t *http, hf_http_response_t *response,
                           const char *unit) {
    hf_request_init(request, cluster->context, http, response);
    snprintf(request->unit, sizeof request->unit, "%s", unit);
}

/* Served here after all: the dispatcher goes on with the route past the routing (hf_routes_
 * resume, given in the config), as the unit, from core when not NULL (a list's). */
static void serve_here(hf_cluster_t *cluster, hf_request_t *request, hf_core_t *core) {
    hf_route_resumed_t resumed = {request->route, request->unit, core};
    cluster->config.resume(cluster->context, request->http, request->response, &resumed);
}

/* Every leased unit loaded by a list job into a core of its own (jobs.h): the route's handler
 * answers from it (hf_request_t.core), on the loop. */
static step_t list_resume(hf_cluster_t *cluster, hf_request_t *request,
                          const hf_cluster_job_t *job) {
    if (!job->ok || !job->core) {
        hf_log(HF_LOG_WARNING, "a list across units could not be read: %s", job->error);
        refuse(cluster, request, "the store cannot be read now");
        return ANSWERED;
    }
    serve_here(cluster, request, job->core);
    return SERVED;
}

/* A unit no live node owns (or whose owner does not answer): taken over on the thread pool,
 * the request parked; once it was (resumed, the takeover of unit), forwarded to the owner the
 * database names, or 503. */
static bool take_over(hf_cluster_t *cluster, hf_request_t *request, const char *unit,
                      bool forwarded, const hf_cluster_job_t *resumed);

/* Where a request about unit (request->unit) is served: true when answered here (forwarded,
 * redirected, parked or refused), false to serve it here. resumed: the job the request
 * waited for, NULL on its first pass. */
static bool route_to_unit(hf_cluster_t *cluster, hf_request_t *request,
                          const hf_cluster_job_t *resumed) {
    const char *unit = request->unit;
    const hf_route_t *route = request->route;
    unit_entry_t *entry = cluster->leased ? hf_cluster_unit_get(cluster, unit, true) : NULL;
    if (cluster->leased && !entry) return refuse(cluster, request, "too many units");
    bool stream = (route->flags & HF_ROUTE_STREAM) != 0;
    if (!cluster->leased || (entry->owned && entry->loaded)) {
        /* A stream that waited for its takeover starts on a request of its own (it lasts). */
        if (stream && resumed &&
            (hf_core_event(cluster->context->core, unit, NULL) ||
             hf_core_calendar(cluster->context->core, unit, NULL)))
            return redirect_to(request, cluster->address) || refuse(cluster, request, NULL);
        hf_http_response_header_add(request->response, "Holdfast-Node", cluster->node_id, false);
        /* An exchange whose old order is another unit's asks that unit first (exchange.h), as
         * a cancel does its rebook_to's (offers.h). */
        return (route->flags & (HF_ROUTE_EXCHANGE | HF_ROUTE_REBOOK)) &&
               hf_cluster_exchange_route(cluster, request);
    }
    bool forwarded = hf_http_request_header(request->http, HF_FORWARD_HEADER, NULL) != NULL;
    const char *address = hf_cluster_owner_address(cluster, unit);
    if (address && !forwarded && stream && redirect_to(request, address)) return true;
    if (address && !forwarded) return forward_to(cluster, request, address);
    if (entry->loaded || cluster->rebuild_pending)
        return refuse(cluster, request, "this unit is moving between nodes; retry shortly");
    /* The last renewal could not reach PostgreSQL: a takeover would wait for nothing (up to
     * the connect timeout when the network drops packets). */
    if (!cluster->renew_ok)
        return refuse(cluster, request, "the store is unreachable; retry shortly");
    return take_over(cluster, request, unit, forwarded, resumed);
}

/* The takeover of the request's unit is done: routed again, as the unit's owner is known now. */
static step_t takeover_resume(hf_cluster_t *cluster, hf_request_t *request,
                              const hf_cluster_job_t *job) {
    snprintf(request->unit, sizeof request->unit, "%s", job->key);
    return route_to_unit(cluster, request, job) ? ANSWERED : SERVE_HERE;
}

static bool take_over(hf_cluster_t *cluster, hf_request_t *request, const char *unit,
                      bool forwarded, const hf_cluster_job_t *resumed) {
    if (!resumed || resumed->kind != HF_CLUSTER_JOB_TAKEOVER || strcmp(resumed->key, unit) != 0)
        return wait_for(cluster, request, HF_CLUSTER_JOB_TAKEOVER, unit, NULL, takeover_resumed);
    if (!resumed->ok) return refuse(cluster, request, "the store is unreachable; retry shortly");
    const char *address = forwarded ? NULL : hf_cluster_owner_address(cluster, unit);
    if (address) return forward_to(cluster, request, address);
    return refuse(cluster, request, "no node can serve this unit now; retry shortly");
}

/* No unit found for the request here: a lookup to wait for, a failed one, or none at all
 * (served here). */
static bool route_unknown(hf_cluster_t *cluster, hf_request_t *request);

/* The lookup of the id the request names is done: the id's unit is known (found: in the
 * cache now), or there is none (served here, or the records of no unit's), or the store
 * could not say (503). */
static step_t lookup_resume(hf_cluster_t *cluster, hf_request_t *request,
                            const hf_cluster_job_t *job) {
    cluster->lookup_kind = NULL;
    cluster->lookup_failed = false;
    if (!id_or_no_unit(cluster, &request->route->unit, job->key, request->unit,
                       sizeof request->unit, job)) {
        request->unit[0] = '\0';
        return route_unknown(cluster, request) ? ANSWERED : SERVE_HERE;
    }
    return route_to_unit(cluster, request, job) ? ANSWERED : SERVE_HERE;
}

static bool route_unknown(hf_cluster_t *cluster, hf_request_t *request) {
    if (cluster->lookup_failed) return refuse(cluster, request, "the store cannot be read now");
    if (!cluster->lookup_kind) return false;
    return wait_for(cluster, request, HF_CLUSTER_JOB_LOOKUP, cluster->lookup_id,
                    cluster->lookup_kind, lookup_resumed);
}

/* A parked request goes on (jobs.h: its continuation): the job it waited for is done. The
 * request is rebuilt from its copy and takes the step that follows its wait; an answer the
 * cluster gives itself leaves once everything applied so far is durable, as on a first pass. */
static void go_on(hf_cluster_t *cluster, const hf_cluster_job_t *job,
                  const hf_cluster_parked_t *parked, hf_http_response_t *response,
                  step_t (*step)(hf_cluster_t *, hf_request_t *, const hf_cluster_job_t *)) {
    hf_request_t request;
    parked_request(cluster, &request, &parked->http, response, "");
    request.route = parked->route;
    step_t done = step(cluster, &request, job);
    if (done == SERVE_HERE) serve_here(cluster, &request, NULL);
    else if (done == ANSWERED)
        response->durable_sequence = cluster->context->store_failed
                                         ? 0
                                         : hf_context_reply_sequence(cluster->context);
}

static void list_resumed(void *state, const hf_cluster_job_t *job,
                         const hf_cluster_parked_t *parked, hf_http_response_t *response) {
    go_on(state, job, parked, response, list_resume);
}

static void takeover_resumed(void *state, const hf_cluster_job_t *job,
                             const hf_cluster_parked_t *parked, hf_http_response_t *response) {
    go_on(state, job, parked, response, takeover_resume);
}

static void lookup_resumed(void *state, const hf_cluster_job_t *job,
                           const hf_cluster_parked_t *parked, hf_http_response_t *response) {
    go_on(state, job, parked, response, lookup_resume);
}

static bool wait_for(hf_cluster_t *cluster, hf_request_t *request, hf_cluster_job_kind_t kind,
                     const char *key, const char *id_kind, hf_cluster_resume_fn resume) {
    hf_cluster_job_t *job = hf_cluster_jobs_find(cluster->jobs, kind, key);
    if (!job) job = hf_cluster_jobs_add(cluster->jobs, kind, key, id_kind);
    hf_cluster_continuation_t then = {resume, cluster};
    if (job && hf_cluster_jobs_park(cluster->jobs, job, request, then)) return true;
    hf_cluster_jobs_kick(cluster->jobs); /* a job asked for with nothing parked still runs */
    return refuse(cluster, request, "too many requests wait for the store; retry shortly");
}

bool hf_cluster_route(hf_cluster_t *cluster, hf_request_t *request, const hf_route_t *route) {
    char *unit = request->unit; /* kept: the request's idempotency key belongs to its unit */
    if (!cluster) return false;
    assert(request->route == route);
    /* Answers that span units (API.md section 11) are read from the store: every unit with a
     * lease is loaded into a core of the request's own, and the route's handler answers from
     * it. Choice: correct rather than fast (it reads every unit's rows); such lists are rare
     * next to the requests about one unit. */
    if (cluster->leased && (route->flags & HF_ROUTE_SPANS))
        return wait_for(cluster, request, HF_CLUSTER_JOB_LIST, "", NULL, list_resumed);
    cluster->lookup_kind = NULL;
    cluster->lookup_failed = false;
    if (!request_unit(cluster, request, route, unit, sizeof request->unit)) {
        unit[0] = '\0';
        return route_unknown(cluster, request);
    }
    return route_to_unit(cluster, request, NULL);
}
