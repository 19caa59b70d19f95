/* Shared between the engine's files: the engine's state, the request context handed to each
 * route handler, and the decode and render helpers. Not for use outside src/engine. */
#ifndef HF_ENGINE_INTERNAL_H
#define HF_ENGINE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "lib/json.h"
#include "core/core.h"
#include "lib/map.h"
#include "engine/errors.h"
#include "engine/engine.h"
#include "net/flat_json.h"
#include "net/http.h"
#include "store/store.h"

/* ---- idempotency keys (API.md section 1) ---- */

typedef struct hf_idempotency_entry {
    uint8_t hash[32];            /* SHA-256 of the request body */
    int status;
    uint32_t body_offset, body_length;
    uint32_t scope_offset, scope_length;
    int64_t created_at_ms;
} hf_idempotency_entry_t;

typedef struct hf_idempotency {
    hf_map_t keys;               /* scope -> entry index */
    hf_idempotency_entry_t *entries; /* in creation order */
    uint32_t count, capacity;
    hf_buffer_t bodies;          /* stored answers, back to back */
    hf_buffer_t scopes;          /* the entries' scopes, back to back */
} hf_idempotency_t;

void hf_idempotency_init(hf_idempotency_t *table);
void hf_idempotency_free(hf_idempotency_t *table);
const hf_idempotency_entry_t *hf_idempotency_find(const hf_idempotency_t *table,
                                                  const char *scope, size_t scope_length);
void hf_idempotency_put(hf_idempotency_t *table, const char *scope, size_t scope_length,
                        const uint8_t hash[32], int status, const char *body,
                        size_t body_length, int64_t created_at_ms);
const char *hf_idempotency_body(const hf_idempotency_t *table,
                                const hf_idempotency_entry_t *entry);

/* ---- the engine ---- */

typedef struct hf_subscriber hf_subscriber_t;

struct hf_engine {
    uv_loop_t *loop;
    hf_engine_options_t options;
    hf_core_t *core;
    hf_store_t *store;
    hf_http_server_t *http;
    hf_idempotency_t idempotency;

    hf_batch_t *open_batch;      /* mutations of the commands applied since the last submit */
    hf_batch_t *spare_batch;     /* returned by the store, reused */
    uint64_t open_sequence;      /* sequence the open batch will carry */
    uint64_t durable_sequence;   /* every batch up to this one is durable */
    /* hf_core_change_count when each batch in flight was handed over, by sequence modulo the
     * ring's size: once a batch is durable, every mutation record up to its count is, so the
     * core may forget holds that finished by then (hf_core_evict). */
    uint64_t batch_changes[HF_STORE_BATCHES_IN_FLIGHT_MAX];
    uint64_t durable_changes;    /* every mutation record up to this number is durable */
    bool store_failed;           /* a commit failed: nothing more is acknowledged */
    bool reads_from_disk;        /* after a failure: the core was reloaded from the store, so
                                    GETs answer what is durable */

    /* Live streams (streams.c). */
    hf_subscriber_t **subscriber_lists; /* by event index */
    uint32_t subscriber_lists_count;
    uint32_t stream_count;
    hf_buffer_t publish_open;    /* seat and pool changes of the open batch, as SSE text */
    /* Those of each batch handed to the store and not yet durable, by sequence modulo the
     * ring's size. */
    hf_buffer_t publish_flight[HF_STORE_BATCHES_IN_FLIGHT_MAX];
    uv_timer_t keepalive_timer;

    uv_async_t store_done;
    uv_check_t check;
    uv_timer_t expiry_timer;
    int64_t expiry_armed_ms;     /* deadline the timer is set for, INT64_MAX when none */
    uv_signal_t signal_term, signal_interrupt;
    uv_timer_t shutdown_timer;
    bool stopping;
    int exit_code;
    int64_t last_now_ms;

    /* Scratch of one request at a time, too large for the stack (loop thread only). */
    hf_flat_json_t flat_body;    /* the flat reading of a body (routes.c) */
    hf_error_detail_t detail;    /* a hold's or booking's refusal (handlers_holds.c) */
    const char *booking_seat_ids[HF_HOLD_ITEMS_MAX];
    uint32_t booking_versions[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t booking_pools[HF_HOLD_ITEMS_MAX];
    /* OpenSSL's random bytes, drawn 4 KiB at a time (hf_engine_make_id). */
    unsigned char random_pool[4096];
    size_t random_remaining;     /* unused bytes at the end of random_pool */
};

/* Wall-clock milliseconds, never moving backwards within one run. */
int64_t hf_engine_now(hf_engine_t *engine);
/* The store sequence a reply produced now depends on. */
uint64_t hf_engine_reply_sequence(const hf_engine_t *engine);
/* The store sequence that makes mutation record number change durable (hf_core_change_count
 * counts them): the durable sequence when it already is. */
uint64_t hf_engine_change_sequence(const hf_engine_t *engine, uint64_t change);
/* Fills out with prefix and 32 hex digits: the time in seconds (32 bits), then 96 random
 * bits ("res_" + 32 digits). */
void hf_engine_make_id(hf_engine_t *engine, const char *prefix, char out[HF_SERVER_ID_SIZE + 1]);

/* ---- the request arena (arena.c) ----
 *
 * jansson allocates a request body's DOM with a dozen mallocs and frees. Between
 * hf_arena_request_begin and hf_arena_request_end its allocations come instead from one block
 * of HF_REQUEST_ARENA_SIZE bytes, taken back whole at the end (beyond the block they fall back
 * to malloc). Nothing jansson made during a request may be used after its end: the body is
 * freed before it. Loop thread only. */

/* Makes jansson allocate through the arena; once, before any request. */
void hf_arena_allocator_install(void);
void hf_arena_request_begin(void);
void hf_arena_request_end(void);
/* Frees the block (at shutdown, after the last request). */
void hf_arena_release(void);

/* ---- routes ---- */

#define HF_ROUTE_PARAMS_MAX 3

typedef struct hf_request {
    hf_engine_t *engine;
    const hf_http_request_t *http;
    hf_http_response_t *response;
    char params[HF_ROUTE_PARAMS_MAX][HF_SEAT_ID_SIZE_MAX + HF_USER_ID_SIZE_MAX + 1];
    /* A POST's body: read by the flat reader on routes that allow it (ROUTE_FLAT in routes.c)
     * when it can, else by jansson. At most one of the two is set; hf_body_member reads it. */
    json_t *body;
    const hf_flat_json_t *flat;
    int64_t now_ms;
    /* Set by a handler whose answer rests only on the state up to change rests_on_change
     * (hf_core_change_count): when the request changed nothing, its answer then waits for that
     * change to be durable rather than for the open batch. */
    bool rests_on_known;
    uint64_t rests_on_change;
} hf_request_t;

typedef void (*hf_route_handler_fn)(hf_request_t *request);

/* The entry point given to the HTTP server. */
void hf_routes_dispatch(void *engine, const hf_http_request_t *http, hf_http_response_t *response);

/* Handlers (handlers_events.c, handlers_holds.c). */
void hf_handle_health(hf_request_t *request);
void hf_handle_event_create(hf_request_t *request);
void hf_handle_event_list(hf_request_t *request);
void hf_handle_event_get(hf_request_t *request);
void hf_handle_seat_list(hf_request_t *request);
void hf_handle_seat_get(hf_request_t *request);
void hf_handle_hold_create(hf_request_t *request);
void hf_handle_hold_get(hf_request_t *request);
void hf_handle_hold_extend(hf_request_t *request);
void hf_handle_hold_release(hf_request_t *request);
void hf_handle_hold_commit(hf_request_t *request);
void hf_handle_order_get(hf_request_t *request);
void hf_handle_order_cancel(hf_request_t *request);
void hf_handle_user_orders(hf_request_t *request);
void hf_handle_booking_create(hf_request_t *request);
void hf_handle_ui_index(hf_request_t *request);
void hf_handle_ui_event(hf_request_t *request);
void hf_handle_ui_file(hf_request_t *request);

/* ---- decoding (decode.c) ---- */

/* One top-level member of the request body, whichever reader read it: jansson (body) or the
 * flat reader (flat). Strings are borrowed from the request and live until its end. */
typedef enum hf_member_kind {
    HF_MEMBER_ABSENT,
    HF_MEMBER_NULL,
    HF_MEMBER_BOOL,
    HF_MEMBER_INTEGER,
    HF_MEMBER_REAL,
    HF_MEMBER_STRING,
    HF_MEMBER_OTHER, /* an object or an array: read from json (jansson) or flat */
} hf_member_kind_t;

typedef struct hf_member {
    hf_member_kind_t kind;
    bool truth;                        /* BOOL */
    int64_t integer;                   /* INTEGER */
    double number;                     /* INTEGER and REAL, as json_number_value */
    const char *string;                /* STRING, NUL-terminated (it may hold a NUL) */
    size_t length;                     /* STRING */
    json_t *json;                      /* the member in jansson's DOM, else NULL */
    const hf_flat_json_member_t *flat; /* the member in the flat reading, else NULL */
} hf_member_t;

hf_member_t hf_body_member(const hf_request_t *request, const char *name);

/* Each returns true when the body's member is absent or null (value untouched) or valid;
 * false after answering 400 invalid_request naming the member. */
bool hf_decode_string(hf_request_t *request, const char *name, size_t size_max, bool required,
                      const char **value);
bool hf_decode_seconds(hf_request_t *request, const char *name, int64_t *ms);
/* Like hf_decode_seconds but any positive number is accepted, large ones clamped to the
 * longest hold and tiny ones raised to 1 ms (extend: the cap applies anyway). */
bool hf_decode_extension(hf_request_t *request, const char *name, int64_t *ms);
bool hf_decode_bool(hf_request_t *request, const char *name, bool *value);
/* The user_id member: required, 1..128 bytes. */
bool hf_decode_user(hf_request_t *request, const char **user_id);

/* An event definition from JSON (request body or stored config). Arrays inside definition
 * are allocated; free with hf_definition_free. On error returns false with *field set. */
bool hf_definition_decode(json_t *object, hf_event_definition_t *definition, const char **field,
                          const char **message);
void hf_definition_free(hf_event_definition_t *definition);

/* Room for the items of one hold request. */
typedef struct hf_hold_items {
    const char *seat_ids[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
} hf_hold_items_t;

/* Items {"seats": [...], "pools": {...}} into a hold request (pointers borrow from object).
 * seat_ids and pools must have room for HF_HOLD_ITEMS_MAX entries. */
bool hf_items_decode(json_t *object, hf_hold_request_t *request, const char **seat_ids,
                     hf_pool_request_t *pools, const char **field);

/* hf_items_decode of the request's body, whichever reader read it. */
bool hf_request_items_decode(const hf_request_t *from, hf_hold_request_t *request,
                             const char **seat_ids, hf_pool_request_t *pools, const char **field);

/* The "pools" member ({"GA": 2}) alone; false when malformed. */
bool hf_pools_decode(json_t *object, hf_hold_request_t *request, hf_pool_request_t *pools);

/* Query string value by name, percent-decoded into out; false when absent. */
bool hf_query_get(const char *query, const char *name, char *out, size_t out_size);

/* ---- rendering (render.c) ---- */

void hf_render_event(hf_json_t *json, const hf_core_t *core, const hf_event_t *event);
void hf_render_seat(hf_json_t *json, const hf_event_t *event, uint32_t seat_index);
/* With capped not NULL, the hold has a "capped" member too (the extend answer). */
void hf_render_hold(hf_json_t *json, const hf_core_t *core, const hf_hold_t *hold, int64_t now_ms,
                    const bool *capped);
void hf_render_order(hf_json_t *json, const hf_core_t *core, const hf_order_t *order);
void hf_render_items(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                     uint32_t item_offset, uint32_t seat_count, uint32_t pool_count);

/* Starts a JSON body for status; the caller writes one value and the response is complete. */
void hf_reply_begin(hf_request_t *request, int status, hf_json_t *json);
/* Answers a core error, with its details. */
void hf_reply_core_error(hf_request_t *request, hf_error_t error, const hf_error_detail_t *detail,
                         const hf_hold_request_t *hold_request);
/* Answers error id of the table (errors.h) with message, or its default message when NULL,
 * and field when not NULL. */
void hf_reply_error(hf_request_t *request, hf_api_error_t id, const char *message,
                    const char *field);
/* An error answer with members of its own: begin writes {"error": {"code", "message" and
 * leaves the inner object open for them; end closes both. */
void hf_reply_error_begin(hf_request_t *request, hf_api_error_t id, const char *message,
                          hf_json_t *json);
void hf_reply_error_end(hf_json_t *json);

/* ---- live streams (streams.c) ---- */
void hf_handle_event_stream(hf_request_t *request);
/* Formats a SEAT or POOL record into the open batch's publish buffer (if anyone listens). */
void hf_streams_record(hf_engine_t *engine, const hf_mutation_t *mutation);
/* The open batch went to the store as batch sequence: its changes now wait for it to be
 * durable. */
void hf_streams_batch_submitted(hf_engine_t *engine, uint64_t sequence);
/* Batch sequence is durable (ok) or lost: send or drop its changes. Called for each batch in
 * sequence order. */
void hf_streams_batch_durable(hf_engine_t *engine, uint64_t sequence, bool ok);
void hf_streams_keepalive(hf_engine_t *engine);
void hf_streams_close_all(hf_engine_t *engine);

/* ---- restore (restore.c) ---- */
int hf_engine_restore(hf_engine_t *engine, char *error, size_t error_size);
/* The same from another store object (after a failure: a fresh read of what is durable). */
int hf_engine_restore_from(hf_engine_t *engine, hf_store_t *store, char *error,
                           size_t error_size);
/* Takes a hold the core has forgotten back from the store (hf_core_revive_hold): true and
 * *index when the store has a released or expired hold of this id. */
bool hf_engine_revive_hold(hf_engine_t *engine, const char *hold_id, uint32_t *index);

#endif
