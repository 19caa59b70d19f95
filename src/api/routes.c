/* The dispatcher (routes.h): gathers every domain's routes, matches a request to one, makes
 * the generic checks once (store failure and back-pressure 503s, API key, body size, JSON
 * body, Idempotency-Key, 404 and 405), runs its handler and gates the reply on durability.
 * The HTTP conventions live here too (API.md section 1): HEAD runs as the GET of its path,
 * OPTIONS and CORS preflights are answered for every path, a 405 carries Allow, a 401
 * WWW-Authenticate, and an answer to a listed origin its CORS headers. */
#include "api/routes.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine/arena.h"
#include "cluster/cluster.h"
#include "cluster/handlers.h"
#include "api/allocations.h"
#include "api/credentials.h"
#include "api/calendars.h"
#include "api/decode.h"
#include "api/dispatch.h"
#include "api/events.h"
#include "api/history.h"
#include "api/holds.h"
#include "api/metrics.h"
#include "api/notifications.h"
#include "api/payments.h"
#include "api/jobs.h"
#include "api/queue.h"
#include "api/waitlist.h"
#include "api/staff.h"
#include "api/ui.h"
#include "engine/idempotency.h"
#include "api/query.h"
#include "engine/route.h"

/* Every domain's routes. A new domain's handlers file exports its table (DOMAIN.h), and
 * the table is added here. No method and pattern appear twice, so the order is free (the
 * staff's GET of an event's holds shares its pattern with the POST that makes one). */
static const hf_route_table_t *const TABLES[] = {
    &hf_handlers_events_routes,        &hf_handlers_history_routes,
    &hf_handlers_holds_routes,         &hf_handlers_metrics_routes,
    &hf_handlers_payments_routes,      &hf_handlers_queue_routes,
    &hf_handlers_staff_routes,         &hf_handlers_ui_routes,
    &hf_handlers_dispatch_routes,      &hf_handlers_cluster_routes,
    &hf_handlers_notifications_routes, &hf_handlers_calendars_routes,
    &hf_handlers_allocations_routes,   &hf_handlers_jobs_routes,
    &hf_handlers_waitlist_routes,
};

/* ---- matching ----
 *
 * A path is split into its segments once per request, and each pattern once per process, so
 * matching a route compares segment counts and lengths first and touches bytes only when they
 * agree: the old matcher rescanned the path with strchr and strlen for every route tried. */

/* The longest pattern, "/v1/events/{}/queue/{}/complete", has six segments. */
#define ROUTE_SEGMENTS_MAX 6

typedef struct segment {
    const char *text; /* NULL in a pattern: "{}", one segment captured */
    size_t length;
} segment_t;

typedef struct shape {
    segment_t segments[ROUTE_SEGMENTS_MAX];
    size_t count;
    int method; /* method_code of the route's method */
} shape_t;

/* The methods routes may use, so a request's method is compared once, as a number; Allow
 * lists them in this order. HEAD and OPTIONS are no route's: HEAD runs as GET, and the
 * dispatcher answers OPTIONS for every path. */
static const char *const route_methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
#define METHOD_COUNT (sizeof route_methods / sizeof route_methods[0])
#define METHOD_GET 0
#define METHOD_UNKNOWN (-1)
#define METHOD_OPTIONS (-2)

static int method_code(const char *method) {
    for (size_t i = 0; i < METHOD_COUNT; i++)
        if (strcmp(route_methods[i], method) == 0) return (int)i;
    return strcmp(method, "OPTIONS") == 0 ? METHOD_OPTIONS : METHOD_UNKNOWN;
}

/* The Allow text of each set of methods (a bit per route_methods entry), made once with the
 * routes: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" is the longest. */
#define ALLOW_SIZE 64
static char allow_texts[1u << METHOD_COUNT][ALLOW_SIZE];

static void allow_texts_make(void) {
    for (unsigned methods = 0; methods < (1u << METHOD_COUNT); methods++) {
        char *text = allow_texts[methods];
        for (size_t i = 0; i < METHOD_COUNT; i++) {
            if (!(methods & (1u << i))) continue;
            strcat(text, route_methods[i]);
            strcat(text, i == METHOD_GET ? ", HEAD, " : ", ");
        }
        strcat(text, "OPTIONS");
        assert(strlen(text) < ALLOW_SIZE);
    }
}

/* Every domain's routes with their patterns as shapes, gathered once (pthread_once: engines
 * may start on any thread). */
typedef struct known_route {
    const hf_route_t *route;
    shape_t shape;
    /* Where its domain's own context lies in the context's block (hf_context_t.
     * domain_scratch), SCRATCH_NONE when its domain has none. */
    size_t scratch_offset;
} known_route_t;

#define SCRATCH_NONE SIZE_MAX
/* Each domain's context starts at a multiple of this in the block. */
#define SCRATCH_ALIGN 64

static known_route_t known_routes[HF_ROUTES_MAX];
static const hf_route_t *known_list[HF_ROUTES_MAX]; /* hf_routes_known */
static size_t known_count;
static size_t scratch_total; /* the block's size: every domain's context */
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

/* Splits path ("/a/b") into segments. Returns their count, 0 when path does not start with
 * '/', and ROUTE_SEGMENTS_MAX + 1 when it has more segments than any pattern: no route
 * matches those. A trailing '/' makes an empty last segment, which no route accepts. */
static size_t path_split(const char *path, segment_t *segments) {
    if (path[0] != '/') return 0;
    size_t count = 0;
    const char *start = path + 1;
    for (const char *at = start;; at++) {
        if (*at != '/' && *at != '\0') continue;
        if (count == ROUTE_SEGMENTS_MAX) return ROUTE_SEGMENTS_MAX + 1;
        segments[count].text = start;
        segments[count].length = (size_t)(at - start);
        count++;
        if (*at == '\0') return count;
        start = at + 1;
    }
}

static void shape_make(const hf_route_t *route, shape_t *shape) {
    shape->method = method_code(route->method);
    assert(shape->method != METHOD_UNKNOWN);
    shape->count = path_split(route->pattern, shape->segments);
    assert(shape->count >= 1 && shape->count <= ROUTE_SEGMENTS_MAX);
    for (size_t s = 0; s < shape->count; s++) {
        segment_t *segment = &shape->segments[s];
        if (segment->length == 2 && memcmp(segment->text, "{}", 2) == 0) segment->text = NULL;
    }
}

static void known_routes_make(void) {
    for (size_t t = 0; t < sizeof TABLES / sizeof TABLES[0]; t++) {
        size_t offset = TABLES[t]->scratch_size ? scratch_total : SCRATCH_NONE;
        scratch_total += (TABLES[t]->scratch_size + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN *
                         SCRATCH_ALIGN;
        for (size_t i = 0; i < TABLES[t]->count; i++) {
            assert(known_count < HF_ROUTES_MAX);
            known_list[known_count] = &TABLES[t]->routes[i];
            known_route_t *known = &known_routes[known_count++];
            known->route = &TABLES[t]->routes[i];
            known->scratch_offset = offset;
            shape_make(known->route, &known->shape);
        }
    }
    allow_texts_make();
}

/* The route's domain's own context (route.h), in the context's block, made zeroed at the
 * engine's first request. */
static void *domain_scratch(hf_context_t *context, const known_route_t *known) {
    if (known->scratch_offset == SCRATCH_NONE) return NULL;
    if (!context->domain_scratch) {
        context->domain_scratch = aligned_alloc(SCRATCH_ALIGN, scratch_total);
        if (!context->domain_scratch) abort();
        memset(context->domain_scratch, 0, scratch_total);
    }
    return (char *)context->domain_scratch + known->scratch_offset;
}

const hf_route_t *const *hf_routes_known(size_t *count) {
    pthread_once(&known_once, known_routes_make);
    *count = known_count;
    return known_list;
}

/* Matches the split path against a route's shape, capturing its "{}" segments (percent-
 * decoded) into request->params; false on no match. */
static bool route_match(const shape_t *shape, const segment_t *path, size_t path_count,
                        hf_request_t *request) {
    if (shape->count != path_count) return false;
    for (size_t s = 0; s < path_count; s++) {
        const segment_t *want = &shape->segments[s];
        if (want->text == NULL) {
            if (path[s].length == 0) return false;
        } else if (want->length != path[s].length ||
                   memcmp(want->text, path[s].text, path[s].length) != 0) {
            return false;
        }
    }
    size_t captured = 0;
    for (size_t s = 0; s < path_count; s++) {
        if (shape->segments[s].text != NULL) continue;
        if (captured >= HF_ROUTE_PARAMS_MAX ||
            !hf_query_percent_decode(path[s].text, path[s].length, request->params[captured],
                                     sizeof request->params[0], false))
            return false;
        captured++;
    }
    return true;
}

/* The first route with the method (a method_code) and the request's path, its captures in
 * request->params; NULL when there is none. Routes of other methods are not even matched. */
static const hf_route_t *route_find(hf_request_t *request, int method, const segment_t *path,
                                    size_t path_count) {
    for (size_t i = 0; i < known_count; i++)
        if (known_routes[i].shape.method == method &&
            route_match(&known_routes[i].shape, path, path_count, request)) {
            request->response->label = (uint32_t)i + 1; /* its metrics' slot (routes.h) */
            request->route = known_routes[i].route;
            request->scratch = domain_scratch(request->context, &known_routes[i]);
            return known_routes[i].route;
        }
    return NULL;
}

/* The methods the path answers, a bit per route_methods entry; 0 when no route has it (404
 * rather than 405). Only for an answer that is not a route's, so the captures it writes do
 * not matter. */
static unsigned path_methods(const segment_t *path, size_t path_count) {
    hf_request_t scratch;
    unsigned methods = 0;
    for (size_t i = 0; i < known_count; i++)
        if (route_match(&known_routes[i].shape, path, path_count, &scratch))
            methods |= 1u << known_routes[i].shape.method;
    return methods;
}

/* ---- HTTP conventions: CORS, OPTIONS, 405 ---- */

/* The headers a CORS preflight may ask for: the API's request headers (a browser's
 * Content-Type: application/json needs a preflight too), and Last-Event-ID, which an
 * EventSource sends when it reconnects. */
#define CORS_ALLOW_HEADERS \
    "Authorization, Content-Type, Idempotency-Key, Admission-Token, Last-Event-ID"
/* How long a browser may reuse a preflight's answer, in seconds. */
#define CORS_MAX_AGE_S "600"

/* The listed origin the request's Origin equals byte for byte, or NULL. */
static const char *cors_origin(const hf_context_t *context, const hf_http_request_t *http) {
    size_t length;
    const char *origin = hf_http_request_header(http, "Origin", &length);
    if (!origin) return NULL;
    for (uint32_t i = 0; i < context->cors_origin_count; i++) {
        const char *listed = context->cors_origins[i];
        if (strlen(listed) == length && memcmp(listed, origin, length) == 0) return listed;
    }
    return NULL;
}

/* OPTIONS, with or without CORS: 204 with the path's methods, and for a preflight from a
 * listed origin what it may send. No API key: a browser never sends one with a preflight.
 * The answer shows no state, so it waits for no batch. */
static void answer_options(hf_request_t *request, const segment_t *path, size_t path_count,
                           const char *origin) {
    unsigned methods = path_methods(path, path_count);
    if (!methods) {
        hf_reply_error(request, HF_API_ERROR_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_http_response_t *response = request->response;
    response->status = 204;
    hf_buffer_reset(&response->body);
    hf_http_response_header_add(response, "Allow", allow_texts[methods], false);
    if (!origin || !hf_http_request_header(request->http, "Access-Control-Request-Method", NULL))
        return;
    hf_http_response_header_add(response, "Access-Control-Allow-Methods", allow_texts[methods],
                                false);
    hf_http_response_header_add(response, "Access-Control-Allow-Headers", CORS_ALLOW_HEADERS,
                                false);
    hf_http_response_header_add(response, "Access-Control-Max-Age", CORS_MAX_AGE_S, false);
}

/* No route for the method: 405 with the path's methods in Allow, or 404. */
static void answer_no_route(hf_request_t *request, const segment_t *path, size_t path_count) {
    unsigned methods = path_methods(path, path_count);
    if (!methods) {
        hf_reply_error(request, HF_API_ERROR_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_reply_error(request, HF_API_ERROR_METHOD_NOT_ALLOWED, NULL, NULL);
    hf_http_response_header_add(request->response, "Allow", allow_texts[methods], false);
}

/* ---- generic checks ---- */

/* Whether the request's credential lets it run the route (credentials.h): a public route needs
 * none. false after answering. */
static bool credentials_pass(hf_request_t *request, const hf_route_t *route) {
    return (route->flags & HF_ROUTE_PUBLIC) || hf_credentials_check(request, route);
}

/* RFC 9110 section 11.6.1: a 401 names its scheme, whichever check refused; a refused user
 * token says so as RFC 6750 section 3.1 asks. */
static void challenge_add(const hf_request_t *request) {
    if (request->response->status != 401) return;
    hf_http_response_header_add(
        request->response, "WWW-Authenticate",
        request->token_refusal ? "Bearer error=\"invalid_token\"" : "Bearer", false);
}

/* A hold or booking behind the admission check (HF_ROUTE_ADMISSION): the idempotency table
 * calls a plain handler, so the check is a handler in front of the route's own, which it
 * finds in the request. */
static void admission_then_handler(hf_request_t *request) {
    if (hf_handlers_queue_admitted(request)) request->route->handler(request);
}

/* What the route needs past the cluster's routing: its body read, then its handler (through
 * the idempotency table when the route creates something and the request carries a key). */
static void serve_route(hf_request_t *request, const hf_route_t *route) {
    /* A raw body is the handler's to authenticate, then decode (route.h). */
    assert(!((route->flags & HF_ROUTE_BODY) && (route->flags & HF_ROUTE_RAW_BODY)));
    if ((route->flags & HF_ROUTE_BODY) && !hf_decode_body(request, route->flags & HF_ROUTE_FLAT))
        return;
    /* Any other body must be JSON too (API.md section 1), though the route reads none: a
     * client that sends one by mistake hears so rather than having it silently dropped. */
    if (!(route->flags & (HF_ROUTE_BODY | HF_ROUTE_RAW_BODY)) && request->http->body_length &&
        !hf_decode_body_unread(request))
        return;
    size_t key_length = 0;
    const char *key = (route->flags & HF_ROUTE_IDEMPOTENT)
                          ? hf_http_request_header(request->http, "Idempotency-Key", &key_length)
                          : NULL;
    hf_route_handler_fn handler = (route->flags & HF_ROUTE_ADMISSION) ? admission_then_handler
                                                                      : route->handler;
    if (key) hf_idempotency_run(request, handler, key, key_length);
    else handler(request);
}

/* The route's own checks, then the cluster's routing, then the route. */
static void run_route(hf_request_t *request, const hf_route_t *route) {
    if (!credentials_pass(request, route)) return;
    if (request->http->body_length > route->body_size_max) {
        hf_reply_error(request, HF_API_ERROR_BODY_TOO_LARGE, NULL, NULL);
        return;
    }
    /* A request about a unit another node owns goes there (cluster.h); one parked for the
     * store goes on through hf_routes_resume. */
    if (hf_cluster_route(request->context->cluster, request, route)) return;
    serve_route(request, route);
}

/* The store failed, or is far behind: true after answering 503. method is a method_code
 * (HEAD's is GET's). */
static bool store_refuses(hf_request_t *request, int method) {
    const hf_context_t *context = request->context;
    const hf_http_request_t *http = request->http;
    /* The figures of a failing store are what an operator looks at then. */
    if (method == METHOD_GET && strcmp(http->path, "/metrics") == 0) return false;
    if (context->store_failed && !(context->reads_from_disk && method == METHOD_GET &&
                                   strcmp(http->path, "/healthz") != 0)) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, NULL, NULL);
        return true;
    }
    /* The open batch has a bound: past it the store is far behind, and a change is refused
     * at once rather than queued without limit. */
    if (method != METHOD_GET &&
        hf_batch_count(context->open_batch) >= HF_STORE_BATCH_MUTATIONS_MAX) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "the store is behind; retry shortly",
                       NULL);
        return true;
    }
    return false;
}

/* The batch an answer waits for. A request that changed nothing and whose handler knows what
 * its answer rests on (a hold refused for seats held long enough to be durable, say) waits only
 * for that; any other waits for everything applied so far. */
static uint64_t reply_sequence(const hf_context_t *context, const hf_request_t *request,
                               size_t batch_before, uint64_t changes_before) {
    /* After a failure the core holds exactly what is durable: nothing to wait for. */
    if (context->store_failed) return 0;
    bool changed = hf_batch_count(context->open_batch) != batch_before ||
                   hf_core_change_count(context->core) != changes_before;
    if (request->rests_on_known && !changed)
        return hf_context_change_sequence(context, request->rests_on_change);
    return hf_context_reply_sequence(context);
}

void hf_routes_dispatch(void *context_pointer, const hf_http_request_t *http,
                        hf_http_response_t *response) {
    hf_context_t *context = context_pointer;
    hf_request_t request;
    hf_request_init(&request, context, http, response);
    response->status = 200;
    pthread_once(&known_once, known_routes_make);
    /* Whatever the answer, a listed origin gets its CORS headers; without --cors-origin the
     * request's headers are not even searched. With it, every answer depends on Origin, so
     * every answer says so (Vary), lest a shared cache hand one origin's copy to another. */
    const char *origin = NULL;
    if (context->cors_origin_count) {
        origin = cors_origin(context, http);
        if (origin)
            hf_http_response_header_add(response, "Access-Control-Allow-Origin", origin, true);
        hf_http_response_header_add(response, "Vary", "Origin", true);
    }
    int method = method_code(http->method);
    if (method == METHOD_UNKNOWN && strcmp(http->method, "HEAD") == 0) {
        method = METHOD_GET;
        request.head = true;
    }
    segment_t path[ROUTE_SEGMENTS_MAX];
    size_t path_count = path_split(http->path, path);
    if (method == METHOD_OPTIONS) {
        answer_options(&request, path, path_count, origin);
        response->durable_sequence = 0;
        return;
    }
    if (store_refuses(&request, method)) {
        response->durable_sequence = 0;
        return;
    }
    request.now_ms = hf_context_now_ms(context);
    /* Expire what is due before anything reads or writes: no stale window. */
    hf_core_advance(context->core, request.now_ms);
    const hf_route_t *found = route_find(&request, method, path, path_count);
    /* What the request itself changes, if anything, goes into the open batch (expiries made
     * due above are not its doing). */
    size_t batch_before = hf_batch_count(context->open_batch);
    uint64_t changes_before = hf_core_change_count(context->core);
    hf_arena_request_begin();
    if (found) run_route(&request, found);
    else answer_no_route(&request, path, path_count);
    if (request.body) json_decref(request.body);
    hf_arena_request_end();
    challenge_add(&request);
    response->durable_sequence = reply_sequence(context, &request, batch_before, changes_before);
}

/* The route's captures of the request's path, and its slot: the route matched this path on
 * its first pass. false when it does not now (never: the copy is the same request). */
static bool route_again(hf_request_t *request, const hf_route_t *route) {
    segment_t path[ROUTE_SEGMENTS_MAX];
    size_t path_count = path_split(request->http->path, path);
    for (size_t i = 0; i < known_count; i++)
        if (known_routes[i].route == route) {
            request->response->label = (uint32_t)i + 1;
            request->route = route;
            request->scratch = domain_scratch(request->context, &known_routes[i]);
            return route_match(&known_routes[i].shape, path, path_count, request);
        }
    return false;
}

void hf_routes_resume(hf_context_t *context, const hf_http_request_t *http,
                      hf_http_response_t *response, const hf_route_resumed_t *resumed) {
    hf_request_t request;
    hf_request_init(&request, context, http, response);
    response->status = 200;
    int method = method_code(http->method);
    if (method == METHOD_UNKNOWN && strcmp(http->method, "HEAD") == 0) {
        method = METHOD_GET;
        request.head = true;
    }
    /* The store may have failed while the request waited. */
    if (store_refuses(&request, method)) {
        response->durable_sequence = 0;
        return;
    }
    request.now_ms = hf_context_now_ms(context);
    hf_core_advance(context->core, request.now_ms);
    snprintf(request.unit, sizeof request.unit, "%s", resumed->unit);
    if (resumed->core) request.core = resumed->core;
    size_t batch_before = hf_batch_count(context->open_batch);
    uint64_t changes_before = hf_core_change_count(context->core);
    hf_arena_request_begin();
    /* The acting user again, from the same credential (a token may have expired since). */
    if (!route_again(&request, resumed->route)) answer_no_route(&request, NULL, 0);
    else if (credentials_pass(&request, resumed->route)) {
        if (resumed->core) resumed->route->handler(&request);
        else serve_route(&request, resumed->route);
    }
    if (request.body) json_decref(request.body);
    hf_arena_request_end();
    challenge_add(&request);
    response->durable_sequence = reply_sequence(context, &request, batch_before, changes_before);
}
