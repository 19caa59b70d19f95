/* The route table and the dispatcher: the generic checks (route, method, key, JSON body,
 * Idempotency-Key, durability gate) live here once, not in every handler. */
#include "engine/internal.h"

#include <assert.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <openssl/sha.h>
#include <string.h>
#include <strings.h>

enum {
    ROUTE_PUBLIC = 1,            /* served without the API key */
    ROUTE_BODY = 2,              /* takes a JSON object body */
    ROUTE_IDEMPOTENT = 4,        /* creates something: Idempotency-Key applies */
    ROUTE_KEY_IN_QUERY = 8,      /* ?access_token=KEY also works: EventSource sets no header */
    /* The handler reads its body only through hf_body_member and hf_request_items_decode, so
     * the flat reader may read it (net/flat_json.h): the hot routes, whose bodies are flat. */
    ROUTE_FLAT = 16,
};

typedef struct route {
    const char *method;
    const char *pattern;         /* "{}" stands for one path segment, captured */
    hf_route_handler_fn handler;
    unsigned flags;
} route_t;

static const route_t routes[] = {
    {"GET", "/healthz", hf_handle_health, ROUTE_PUBLIC},
    {"GET", "/", hf_handle_ui_index, ROUTE_PUBLIC},
    {"GET", "/ui/events/{}", hf_handle_ui_event, ROUTE_PUBLIC},
    {"GET", "/ui/{}", hf_handle_ui_file, ROUTE_PUBLIC},
    {"POST", "/v1/events", hf_handle_event_create, ROUTE_BODY | ROUTE_IDEMPOTENT},
    {"GET", "/v1/events", hf_handle_event_list, 0},
    {"GET", "/v1/events/{}", hf_handle_event_get, 0},
    {"GET", "/v1/events/{}/seats", hf_handle_seat_list, 0},
    {"GET", "/v1/events/{}/stream", hf_handle_event_stream, ROUTE_KEY_IN_QUERY},
    {"GET", "/v1/events/{}/seats/{}", hf_handle_seat_get, 0},
    {"POST", "/v1/events/{}/holds", hf_handle_hold_create, ROUTE_BODY | ROUTE_IDEMPOTENT | ROUTE_FLAT},
    {"POST", "/v1/events/{}/bookings", hf_handle_booking_create, ROUTE_BODY | ROUTE_IDEMPOTENT},
    {"GET", "/v1/holds/{}", hf_handle_hold_get, 0},
    {"POST", "/v1/holds/{}/extend", hf_handle_hold_extend, ROUTE_BODY | ROUTE_FLAT},
    {"POST", "/v1/holds/{}/release", hf_handle_hold_release, ROUTE_BODY | ROUTE_FLAT},
    {"POST", "/v1/holds/{}/commit", hf_handle_hold_commit, ROUTE_BODY | ROUTE_FLAT},
    {"GET", "/v1/orders/{}", hf_handle_order_get, 0},
    {"POST", "/v1/orders/{}/cancel", hf_handle_order_cancel, ROUTE_BODY | ROUTE_FLAT},
    {"GET", "/v1/users/{}/orders", hf_handle_user_orders, 0},
};

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes length bytes into out; '+' stays '+' (paths) unless plus_is_space. A NUL
 * byte or a bad escape fails: no id or user may contain one. */
static bool percent_decode(const char *text, size_t length, char *out, size_t out_size,
                           bool plus_is_space) {
    size_t written = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '%') {
            if (i + 2 >= length) return false;
            int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
            if (high < 0 || low < 0 || (high == 0 && low == 0)) return false;
            c = (char)(high * 16 + low);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (written + 1 >= out_size) return false;
        out[written++] = c;
    }
    out[written] = '\0';
    return true;
}

bool hf_query_get(const char *query, const char *name, char *out, size_t out_size) {
    size_t name_length = strlen(name);
    const char *cursor = query;
    while (cursor && *cursor) {
        const char *end = strchr(cursor, '&');
        size_t length = end ? (size_t)(end - cursor) : strlen(cursor);
        if (length > name_length && strncmp(cursor, name, name_length) == 0 &&
            cursor[name_length] == '=') {
            return percent_decode(cursor + name_length + 1, length - name_length - 1, out,
                                  out_size, true);
        }
        if (length == name_length && strncmp(cursor, name, name_length) == 0) {
            out[0] = '\0';
            return true;
        }
        cursor = end ? end + 1 : NULL;
    }
    return false;
}

/* ---- matching ----
 *
 * A path is split into its segments once per request, and each pattern once per process, so
 * matching a route compares segment counts and lengths first and touches bytes only when they
 * agree: the old matcher rescanned the path with strchr and strlen for every route tried. */

/* The longest pattern, "/v1/events/{}/seats/{}", has five segments. */
#define ROUTE_SEGMENTS_MAX 5
#define ROUTE_COUNT (sizeof routes / sizeof routes[0])

typedef struct segment {
    const char *text;            /* NULL in a pattern: "{}", one segment captured */
    size_t length;
} segment_t;

typedef struct shape {
    segment_t segments[ROUTE_SEGMENTS_MAX];
    size_t count;
    int method;                  /* method_code of the route's method */
} shape_t;

/* The methods routes use, so a request's method is compared once, as a number. */
static const char *const route_methods[] = {"GET", "POST"};
#define METHOD_UNKNOWN (-1)

static int method_code(const char *method) {
    for (size_t i = 0; i < sizeof route_methods / sizeof route_methods[0]; i++)
        if (strcmp(route_methods[i], method) == 0) return (int)i;
    return METHOD_UNKNOWN;
}

/* The patterns of the route table as shapes, made once (pthread_once: engines may start on
 * any thread). */
static shape_t route_shapes[ROUTE_COUNT];
static pthread_once_t route_shapes_once = PTHREAD_ONCE_INIT;

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

static void route_shapes_make(void) {
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        shape_t *shape = &route_shapes[i];
        shape->method = method_code(routes[i].method);
        assert(shape->method != METHOD_UNKNOWN);
        shape->count = path_split(routes[i].pattern, shape->segments);
        assert(shape->count >= 1 && shape->count <= ROUTE_SEGMENTS_MAX);
        for (size_t s = 0; s < shape->count; s++) {
            segment_t *segment = &shape->segments[s];
            if (segment->length == 2 && memcmp(segment->text, "{}", 2) == 0) segment->text = NULL;
        }
    }
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
            !percent_decode(path[s].text, path[s].length, request->params[captured],
                            sizeof request->params[0], false))
            return false;
        captured++;
    }
    return true;
}

/* The first route of the table with the request's method and path, its captures in
 * request->params; NULL when there is none. Routes of other methods are not even matched. */
static const route_t *route_find(hf_request_t *request, const segment_t *path,
                                 size_t path_count) {
    int method = method_code(request->http->method);
    for (size_t i = 0; i < ROUTE_COUNT; i++)
        if (route_shapes[i].method == method &&
            route_match(&route_shapes[i], path, path_count, request))
            return &routes[i];
    return NULL;
}

/* Whether any route has this path, whatever its method: 405 rather than 404. Only for an
 * answer that is an error anyway, so the captures it writes do not matter. */
static bool path_known(const segment_t *path, size_t path_count) {
    hf_request_t scratch;
    for (size_t i = 0; i < ROUTE_COUNT; i++)
        if (route_match(&route_shapes[i], path, path_count, &scratch)) return true;
    return false;
}

/* ---- replies ---- */

void hf_reply_begin(hf_request_t *request, int status, hf_json_t *json) {
    request->response->status = status;
    hf_buffer_reset(&request->response->body);
    hf_json_init(json, &request->response->body);
}

void hf_reply_error_begin(hf_request_t *request, hf_api_error_t id, const char *message,
                          hf_json_t *json) {
    const hf_api_error_entry_t *entry = hf_errors_entry(id);
    hf_reply_begin(request, entry->status, json);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "error");
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "code"); hf_json_string(json, entry->code);
    HF_JSON_KEY(json, "message"); hf_json_string(json, message ? message : entry->message);
}

void hf_reply_error_end(hf_json_t *json) {
    hf_json_object_end(json);
    hf_json_object_end(json);
}

void hf_reply_error(hf_request_t *request, hf_api_error_t id, const char *message,
                    const char *field) {
    hf_json_t json;
    hf_reply_error_begin(request, id, message, &json);
    if (field) {
        HF_JSON_KEY(&json, "field"); hf_json_string(&json, field);
    }
    hf_reply_error_end(&json);
}

/* ---- generic checks ---- */

static bool authorized(const hf_request_t *request, const route_t *route) {
    const char *key = request->engine->options.api_key;
    if (!key || !*key) return true;
    char token[HF_HTTP_HEAD_SIZE_MAX];
    if ((route->flags & ROUTE_KEY_IN_QUERY) &&
        hf_query_get(request->http->query, "access_token", token, sizeof token) &&
        strlen(token) == strlen(key) && CRYPTO_memcmp(token, key, strlen(key)) == 0)
        return true;
    size_t length;
    const char *header = hf_http_request_header(request->http, "Authorization", &length);
    size_t key_length = strlen(key);
    if (!header || length != key_length + 7 || strncasecmp(header, "Bearer ", 7) != 0) return false;
    return CRYPTO_memcmp(header + 7, key, key_length) == 0;
}

/* JSON nesting depth, counted before parsing so a deep document is refused cheaply. */
static bool depth_within_limit(const char *body, size_t length) {
    /* Each level opens with a byte of its own, so a body this short cannot nest too deep; most
     * requests are that short and skip the count. */
    if (length <= HF_JSON_DEPTH_MAX) return true;
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < length; i++) {
        char c = body[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > HF_JSON_DEPTH_MAX) return false;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return true;
}

/* A limit's value as a string literal, for messages that quote it: the macro's own expansion
 * (64, not HF_JSON_DEPTH_MAX) is what STRINGIZE_VALUE turns into text. */
#define STRINGIZE_VALUE(x) #x
#define STRINGIZE(x) STRINGIZE_VALUE(x)

static bool parse_body(hf_request_t *request, bool flat_allowed) {
    const hf_http_request_t *http = request->http;
    /* Most bodies of the hot routes are flat: read without jansson's DOM. Whatever the flat
     * reader declines, jansson reads (or refuses, with its message). */
    /* The engine's scratch: read by the loop thread only, one request at a time. */
    hf_flat_json_t *flat = &request->engine->flat_body;
    if (flat_allowed && hf_flat_json_read(flat, http->body, http->body_length)) {
        request->flat = flat;
        return true;
    }
    if (http->body_length == 0) {
        request->body = json_object(); /* an empty body reads as {} */
        return true;
    }
    if (!depth_within_limit(http->body, http->body_length)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_JSON,
                       "JSON nested deeper than " STRINGIZE(HF_JSON_DEPTH_MAX) " levels", NULL);
        return false;
    }
    json_error_t error;
    request->body = json_loadb(http->body, http->body_length,
                               JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
    if (!request->body) {
        char message[256];
        snprintf(message, sizeof message, "invalid JSON at byte %d: %s", error.position, error.text);
        hf_reply_error(request, HF_API_ERROR_INVALID_JSON, message, NULL);
        return false;
    }
    if (!json_is_object(request->body)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "the body must be a JSON object", "body");
        return false;
    }
    return true;
}

/* Scope of an Idempotency-Key: method, path and key. */
static size_t idempotency_scope(const hf_request_t *request, const char *key, size_t key_length,
                                char *scope, size_t scope_size) {
    int length = snprintf(scope, scope_size, "%s %s\n%.*s", request->http->method,
                          request->http->path, (int)key_length, key);
    return length < 0 || (size_t)length >= scope_size ? 0 : (size_t)length;
}

static void run_idempotent(hf_request_t *request, const route_t *route, const char *key,
                           size_t key_length) {
    hf_engine_t *engine = request->engine;
    char scope[HF_HTTP_HEAD_SIZE_MAX];
    size_t scope_length = idempotency_scope(request, key, key_length, scope, sizeof scope);
    uint8_t hash[32];
    SHA256((const unsigned char *)request->http->body, request->http->body_length, hash);
    const hf_idempotency_entry_t *entry =
        hf_idempotency_find(&engine->idempotency, scope, scope_length);
    if (entry) {
        if (CRYPTO_memcmp(entry->hash, hash, sizeof hash) != 0) {
            hf_reply_error(request, HF_API_ERROR_IDEMPOTENCY_KEY_REUSED, NULL, NULL);
            return;
        }
        request->response->status = entry->status;
        hf_buffer_reset(&request->response->body);
        hf_buffer_append(&request->response->body, hf_idempotency_body(&engine->idempotency, entry),
                         entry->body_length);
        return;
    }
    route->handler(request);
    int status = request->response->status;
    if (status < 200 || status > 299 || engine->store_failed) return;
    hf_buffer_t *body = &request->response->body;
    hf_idempotency_put(&engine->idempotency, scope, scope_length, hash, status, body->data,
                       body->length, request->now_ms);
    hf_mutation_t mutation = {.type = HF_MUTATION_IDEMPOTENCY, .at_ms = request->now_ms,
                              .key = scope, .text = body->data, .hash = hash, .status = status};
    hf_batch_append(engine->open_batch, &mutation);
}

static void run_route(hf_request_t *request, const route_t *route) {
    if (!(route->flags & ROUTE_PUBLIC) && !authorized(request, route)) {
        hf_reply_error(request, HF_API_ERROR_UNAUTHORIZED, NULL, NULL);
        return;
    }
    if ((route->flags & ROUTE_BODY) && !parse_body(request, route->flags & ROUTE_FLAT)) return;
    size_t key_length = 0;
    const char *key = (route->flags & ROUTE_IDEMPOTENT)
                          ? hf_http_request_header(request->http, "Idempotency-Key", &key_length)
                          : NULL;
    if (!key) {
        route->handler(request);
        return;
    }
    if (key_length == 0 || key_length > HF_IDEMPOTENCY_KEY_SIZE_MAX) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "Idempotency-Key must be 1 to " STRINGIZE(HF_IDEMPOTENCY_KEY_SIZE_MAX) " bytes",
                       "Idempotency-Key");
        return;
    }
    run_idempotent(request, route, key, key_length);
}

/* The batch an answer waits for. A request that changed nothing and whose handler knows what
 * its answer rests on (a hold refused for seats held long enough to be durable, say) waits only
 * for that; any other waits for everything applied so far. */
static uint64_t reply_sequence(const hf_engine_t *engine, const hf_request_t *request,
                               size_t batch_before, uint64_t changes_before) {
    /* After a failure the core holds exactly what is durable: nothing to wait for. */
    if (engine->store_failed) return 0;
    bool changed = hf_batch_count(engine->open_batch) != batch_before ||
                   hf_core_change_count(engine->core) != changes_before;
    if (request->rests_on_known && !changed)
        return hf_engine_change_sequence(engine, request->rests_on_change);
    return hf_engine_reply_sequence(engine);
}

void hf_routes_dispatch(void *context, const hf_http_request_t *http, hf_http_response_t *response) {
    hf_engine_t *engine = context;
    /* Set field by field: a zeroing initializer would clear the large params arrays, which
     * only the route match writes (and handlers read only the ones it captured). */
    hf_request_t request;
    request.engine = engine;
    request.http = http;
    request.response = response;
    for (size_t i = 0; i < HF_ROUTE_PARAMS_MAX; i++) request.params[i][0] = '\0';
    request.body = NULL;
    request.flat = NULL;
    request.now_ms = 0;
    request.rests_on_known = false;
    request.rests_on_change = 0;
    response->status = 200;
    if (engine->store_failed && !(engine->reads_from_disk && strcmp(http->method, "GET") == 0 &&
                                  strcmp(http->path, "/healthz") != 0)) {
        hf_reply_error(&request, HF_API_ERROR_UNAVAILABLE, NULL, NULL);
        response->durable_sequence = 0;
        return;
    }
    /* The open batch has a bound: past it the store is far behind, and a change is refused
     * at once rather than queued without limit. */
    if (strcmp(http->method, "GET") != 0 &&
        hf_batch_count(engine->open_batch) >= HF_STORE_BATCH_MUTATIONS_MAX) {
        hf_reply_error(&request, HF_API_ERROR_UNAVAILABLE, "the store is behind; retry shortly", NULL);
        response->durable_sequence = 0;
        return;
    }
    request.now_ms = hf_engine_now(engine);
    /* Expire what is due before anything reads or writes: no stale window. */
    hf_core_advance(engine->core, request.now_ms);
    pthread_once(&route_shapes_once, route_shapes_make);
    segment_t path[ROUTE_SEGMENTS_MAX];
    size_t path_count = path_split(http->path, path);
    const route_t *found = route_find(&request, path, path_count);
    /* What the request itself changes, if anything, goes into the open batch (expiries made
     * due above are not its doing). */
    size_t batch_before = hf_batch_count(engine->open_batch);
    uint64_t changes_before = hf_core_change_count(engine->core);
    hf_arena_request_begin();
    if (found) run_route(&request, found);
    else if (path_known(path, path_count))
        hf_reply_error(&request, HF_API_ERROR_METHOD_NOT_ALLOWED, NULL, NULL);
    else hf_reply_error(&request, HF_API_ERROR_NOT_FOUND, NULL, NULL);
    if (request.body) json_decref(request.body);
    hf_arena_request_end();
    response->durable_sequence = reply_sequence(engine, &request, batch_before, changes_before);
}
