/* What the store's unit tests share (test_store.c: the pipeline, the batch and the writer;
 * test_store_load.c: loading, the decoder and the reads): a temporary database per test, the
 * store's thread waited for, builders of every kind of record, and a load written into a
 * transcript, one line per callback with every field of its struct. Header-only (static inline
 * functions; the data marked as perhaps unused, each file using some of it) so each test binary
 * stays a single translation unit; include it after cmocka.h. */
#ifndef HF_TESTS_STORE_CASES_H
#define HF_TESTS_STORE_CASES_H

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/limits.h"
#include "lib/buffer.h"
#include "store/store.h"
#include "store_fixtures.h"

/* Data of this header a test file may leave unused. */
#define STORE_CASES_DATA __attribute__((unused))

#define NOW_MS 1795291200000LL
#define ERROR_SIZE 512

static STORE_CASES_DATA uint8_t test_hash[32];

/* ---- Fixture: a temporary directory and the store URL inside it ---- */

typedef temporary_database_t fixture_t;

static inline int fixture_setup(void **state) {
    fixture_t *fixture = calloc(1, sizeof *fixture);
    if (fixture == NULL || !temporary_database_make(fixture, "store")) return -1;
    for (int i = 0; i < 32; i++) test_hash[i] = (uint8_t)(i * 7 + 1);
    *state = fixture;
    return 0;
}

static inline int fixture_teardown(void **state) {
    fixture_t *fixture = *state;
    temporary_database_remove(fixture);
    free(fixture);
    return 0;
}

/* ---- Waiting for the store thread ---- */

typedef struct waiter {
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    int done_count;
} waiter_t;

static STORE_CASES_DATA waiter_t waiter = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static inline void on_done(void *context) {
    waiter_t *w = context;
    pthread_mutex_lock(&w->mutex);
    w->done_count++;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->mutex);
}

static inline hf_store_t *store_open_started(const fixture_t *fixture) {
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    int rc = hf_store_open(&store, fixture->url, error, sizeof error);
    if (rc != 0) fprintf(stderr, "open failed: %s\n", error);
    assert_int_equal(rc, 0);
    assert_non_null(store);
    assert_int_equal(hf_store_start(store, on_done, &waiter), 0);
    return store;
}

/* Submits, waits for done, takes the result back and checks the engine-visible contract:
 * same batch returned, cleared, with its sequence, and the store idle again. */
static inline bool submit_and_wait(hf_store_t *store, hf_batch_t *batch, uint64_t sequence,
                                   char *error) {
    assert_true(hf_store_idle(store));
    pthread_mutex_lock(&waiter.mutex);
    int before = waiter.done_count;
    pthread_mutex_unlock(&waiter.mutex);

    hf_store_submit(store, batch, sequence);
    assert_false(hf_store_idle(store));

    /* done also runs after each sync of the log, so one call may be about an earlier batch:
     * wait until the result is there. */
    uint64_t taken_sequence = 0;
    bool ok = false;
    error[0] = 'x';
    error[1] = '\0';
    hf_batch_t *taken = NULL;
    for (;;) {
        pthread_mutex_lock(&waiter.mutex);
        while (waiter.done_count == before) pthread_cond_wait(&waiter.changed, &waiter.mutex);
        before = waiter.done_count;
        pthread_mutex_unlock(&waiter.mutex);
        taken = hf_store_take_result(store, &taken_sequence, &ok, error, ERROR_SIZE);
        if (taken != NULL) break;
    }
    assert_ptr_equal(taken, batch);
    assert_int_equal(taken_sequence, sequence);
    assert_int_equal(hf_batch_count(taken), 0);
    assert_true(hf_store_idle(store));
    assert_null(hf_store_take_result(store, &taken_sequence, &ok, NULL, 0));
    return ok;
}

/* ---- Record builders ---- */

/* Two shapes of event, so a round trip has something in every field of a definition: one with
 * two sections of several rows and a pool, and one with a ttl that is not a whole number of
 * seconds, no per-user limit and no pool. */
static STORE_CASES_DATA hf_row_definition_t floor_rows[] = {{"A", 2}, {"B", 3}};
static STORE_CASES_DATA hf_row_definition_t balcony_rows[] = {{"C", 4}};
static STORE_CASES_DATA hf_section_definition_t arena_sections[] = {{"F", 100, 2, floor_rows},
                                                                    {"BAL", 60, 1, balcony_rows}};
static STORE_CASES_DATA hf_pool_definition_t arena_pools[] = {{"GA", 5, 50}};
static STORE_CASES_DATA hf_section_definition_t club_sections[] = {{"S", 10, 1, balcony_rows}};

static STORE_CASES_DATA const hf_event_definition_t arena = {.name = "Arena",
                                                             .currency = "USD",
                                                             .hold_ttl_ms = 600000,
                                                             .max_hold_ms = 1800000,
                                                             .max_seats_per_user = 4,
                                                             .max_seats_per_hold = 10,
                                                             .section_count = 2,
                                                             .sections = arena_sections,
                                                             .pool_count = 1,
                                                             .pools = arena_pools};
static STORE_CASES_DATA const hf_event_definition_t club = {.name = "Club",
                                                            .currency = "EUR",
                                                            .hold_ttl_ms = 1500,
                                                            .max_hold_ms = 3000,
                                                            .max_seats_per_user = 0,
                                                            .max_seats_per_hold = 2,
                                                            .section_count = 1,
                                                            .sections = club_sections};

/* The definition an event's record points to: a shape named after the event, since the loader
 * refuses a row whose definition names another event. One buffer serves every call: the batch
 * copies the record when it is appended, before the next call. */
static STORE_CASES_DATA hf_event_definition_t named_definition;

static inline hf_mutation_t event_create_as(const char *event_id,
                                            const hf_event_definition_t *shape, int64_t at_ms) {
    named_definition = *shape;
    snprintf(named_definition.id, sizeof named_definition.id, "%s", event_id);
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_CREATE,
                           .at_ms = at_ms,
                           .as.event_create = {event_id, &named_definition}};
}

static inline hf_mutation_t event_create(const char *event_id, int64_t at_ms) {
    return event_create_as(event_id, &arena, at_ms);
}

/* Lines of holds and orders: seats first, then pools. */
static STORE_CASES_DATA const hf_mutation_item_t two_seats[] = {{"F-A-1", 0}, {"F-A-2", 0}};
static STORE_CASES_DATA const hf_mutation_item_t seat_and_pool[] = {{"F-B-1", 0}, {"GA", 2}};
static STORE_CASES_DATA const hf_mutation_item_t three_of_ga[] = {{"GA", 3}};
#define ITEMS(lines, seat_count, pool_count) \
    ((hf_mutation_items_t){(lines), (seat_count), (pool_count), NULL})
static STORE_CASES_DATA const hf_mutation_items_t NO_ITEMS = {NULL, 0, 0, NULL};

static inline hf_mutation_t seat_change(const char *event_id, const char *seat_id, int status,
                                        uint32_t version) {
    return (hf_mutation_t){.type = HF_MUTATION_SEAT,
                           .at_ms = NOW_MS,
                           .as.seat = {.event_id = event_id,
                                       .seat_id = seat_id,
                                       .status = status,
                                       .version = version}};
}

static inline hf_mutation_t hold_create(const char *hold_id, const char *event_id,
                                        const char *user_id, hf_mutation_items_t items,
                                        int64_t total, int64_t at_ms, int64_t expires_at_ms) {
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_CREATE,
                           .at_ms = at_ms,
                           .as.hold_create = {.hold_id = hold_id,
                                              .event_id = event_id,
                                              .user_id = user_id,
                                              .items = items,
                                              .total = total,
                                              .expires_at_ms = expires_at_ms,
                                              .status = HF_HOLD_HELD}};
}

static inline hf_mutation_t hold_update(const char *hold_id, int status, int64_t expires_at_ms,
                                        const char *order_id) {
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_UPDATE,
                           .at_ms = NOW_MS,
                           .as.hold_update = {.hold_id = hold_id,
                                              .status = status,
                                              .expires_at_ms = expires_at_ms,
                                              .order_id = order_id}};
}

static inline hf_mutation_t order_create(const char *order_id, const char *event_id,
                                         const char *user_id, const char *hold_id,
                                         hf_mutation_items_t items, int64_t total,
                                         const char *payment_ref, int64_t at_ms) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_CREATE,
                           .at_ms = at_ms,
                           .as.order_create = {.order_id = order_id,
                                               .event_id = event_id,
                                               .user_id = user_id,
                                               .hold_id = hold_id,
                                               .currency = "USD",
                                               .payment_ref = payment_ref,
                                               .items = items,
                                               .total = total,
                                               .status = HF_ORDER_CONFIRMED}};
}

static inline hf_mutation_t order_seat(const char *order_id, const char *event_id,
                                       const char *seat_id) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM,
                           .at_ms = NOW_MS,
                           .as.order_item = {.order_id = order_id,
                                             .event_id = event_id,
                                             .seat_id = seat_id,
                                             .quantity = 1}};
}

static inline hf_mutation_t order_pool(const char *order_id, const char *event_id,
                                       const char *pool_id, uint32_t quantity) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM,
                           .at_ms = NOW_MS,
                           .as.order_item = {.order_id = order_id,
                                             .event_id = event_id,
                                             .pool_id = pool_id,
                                             .quantity = quantity}};
}

static inline hf_mutation_t order_update(const char *order_id, int status) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_UPDATE,
                           .at_ms = NOW_MS,
                           .as.order_update = {.order_id = order_id, .status = status}};
}

static inline hf_mutation_t idempotency(const char *key, const char *body, int status,
                                        int64_t at_ms) {
    return (hf_mutation_t){
        .type = HF_MUTATION_IDEMPOTENCY,
        .at_ms = at_ms,
        .as.idempotency = {.key = key, .body = body, .hash = test_hash, .status = status}};
}

/* Overwrites a source string in place: a batch that kept the pointer would see the Zs. */
static inline void scribble(char *text) { memset(text, 'Z', strlen(text)); }

static inline void append(hf_batch_t *batch, hf_mutation_t mutation) {
    hf_batch_append(batch, &mutation);
}

/* ---- Loading into a transcript: one line per callback, every field of its struct written
 * out ---- */

#define TRANSCRIPT_LINES_MAX 64

typedef struct transcript {
    char *lines[TRANSCRIPT_LINES_MAX];
    int count;
    int stop_at; /* the callback number (from 1) that answers stop_value; 0 never */
    int stop_value;
    uint64_t finished; /* what the finished_holds callback was told */
} transcript_t;

static inline const char *or_dash(const char *text) { return text != NULL ? text : "-"; }

static inline int record(transcript_t *transcript, hf_buffer_t *line) {
    assert_true(transcript->count < TRANSCRIPT_LINES_MAX);
    transcript->lines[transcript->count++] = strdup(line->data);
    hf_buffer_free(line);
    return transcript->count == transcript->stop_at ? transcript->stop_value : 0;
}

/* A hold request's fields but its hold id, which each kind names itself. */
static inline void request_write(hf_buffer_t *line, const hf_hold_request_t *request) {
    hf_buffer_printf(line, "event=%s user=%s seats=", or_dash(request->event_id),
                     or_dash(request->user_id));
    for (uint32_t i = 0; i < request->seat_count; i++)
        hf_buffer_printf(line, "%s%s", i ? "," : "", request->seat_ids[i]);
    hf_buffer_printf(line, " pools=");
    for (uint32_t i = 0; i < request->pool_count; i++)
        hf_buffer_printf(line, "%s%s:%" PRIu32, i ? "," : "", request->pools[i].pool_id,
                         request->pools[i].quantity);
    hf_buffer_printf(line, " ttl=%" PRId64 " replace=%d best=%" PRIu32 "/%s/%d versions=",
                     request->ttl_ms, request->replace_existing, request->best_count,
                     or_dash(request->best_section), request->best_adjacent);
    if (request->seat_versions == NULL) hf_buffer_printf(line, "-");
    for (uint32_t i = 0; request->seat_versions != NULL && i < request->seat_count; i++)
        hf_buffer_printf(line, "%s%" PRIu32, i ? "," : "", request->seat_versions[i]);
}

static inline int on_event(void *context, const hf_stored_event_t *event) {
    const hf_event_definition_t *definition = event->definition;
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line,
                     "event id=%s name=%s currency=%s ttl=%" PRId64 " max_hold=%" PRId64
                     " per_user=%" PRIu32 " per_hold=%" PRIu32 " sections=",
                     definition->id, definition->name, definition->currency,
                     definition->hold_ttl_ms, definition->max_hold_ms,
                     definition->max_seats_per_user, definition->max_seats_per_hold);
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        hf_buffer_printf(&line, "%s%s:%" PRId64 "[", s ? "," : "", section->id, section->price);
        for (uint32_t r = 0; r < section->row_count; r++)
            hf_buffer_printf(&line, "%s%s:%" PRIu32, r ? "," : "", section->rows[r].id,
                             section->rows[r].seats);
        hf_buffer_printf(&line, "]");
    }
    hf_buffer_printf(&line, " pools=");
    for (uint32_t p = 0; p < definition->pool_count; p++)
        hf_buffer_printf(&line, "%s%s:%" PRId64 "@%" PRId64, p ? "," : "", definition->pools[p].id,
                         definition->pools[p].capacity, definition->pools[p].price);
    hf_buffer_printf(&line, " at=%" PRId64, event->created_at_ms);
    return record(context, &line);
}

static inline int on_hold(void *context, const hf_stored_hold_t *hold) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "hold id=%s ", or_dash(hold->request.hold_id));
    request_write(&line, &hold->request);
    hf_buffer_printf(&line, " status=%d at=%" PRId64 " expires=%" PRId64 " total=%" PRId64,
                     hold->status, (int64_t)hold->created_at_ms, (int64_t)hold->expires_at_ms,
                     hold->total);
    return record(context, &line);
}

static inline int on_order(void *context, const hf_stored_order_t *order) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "order id=%s hold=%s ", or_dash(order->order_id),
                     or_dash(order->hold_id));
    request_write(&line, &order->items);
    hf_buffer_printf(&line, " items_hold=%s status=%d at=%" PRId64 " total=%" PRId64 " ref=%s",
                     or_dash(order->items.hold_id), order->status, (int64_t)order->created_at_ms,
                     order->total, or_dash(order->payment_ref));
    return record(context, &line);
}

static inline int on_key(void *context, const hf_stored_idempotency_t *answer) {
    const char *hash = answer->hash == NULL                       ? "none"
                       : memcmp(answer->hash, test_hash, 32) == 0 ? "ok"
                                                                  : "bad";
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "key key=%s body=%s status=%d hash=%s at=%" PRId64,
                     or_dash(answer->key), or_dash(answer->body), answer->status, hash,
                     answer->created_at_ms);
    return record(context, &line);
}

static inline void transcript_free(transcript_t *transcript) {
    for (int i = 0; i < transcript->count; i++) free(transcript->lines[i]);
    transcript->count = 0;
}

/* Reopens the store (a restart) and loads it into the transcript with the loader's callbacks
 * (its context is the transcript). */
static inline void load_into(const fixture_t *fixture, hf_store_loader_t loader,
                             transcript_t *transcript) {
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    loader.context = transcript;
    int rc = hf_store_load(store, &loader, error, sizeof error);
    if (rc != 0) fail_msg("load failed: %s", error);
    hf_store_close(store);
}

/* Reopens the store and loads the events, holds, orders and keys into the transcript. */
static inline void reload(const fixture_t *fixture, int64_t keep_since_ms,
                          transcript_t *transcript) {
    hf_store_loader_t loader = {.event = on_event,
                                .hold = on_hold,
                                .order = on_order,
                                .idempotency = on_key,
                                .keep_since_ms = keep_since_ms};
    load_into(fixture, loader, transcript);
}

static inline void assert_transcript(const transcript_t *transcript, const char *const *expected,
                                     int count) {
    for (int i = 0; i < transcript->count && i < count; i++)
        assert_string_equal(transcript->lines[i], expected[i]);
    assert_int_equal(transcript->count, count);
}

/* Reopens the store, loads it with the loader's callbacks, and checks every line. */
static inline void assert_loaded(const fixture_t *fixture, hf_store_loader_t loader,
                                 const char *const *expected, int count) {
    transcript_t transcript = {0};
    load_into(fixture, loader, &transcript);
    assert_transcript(&transcript, expected, count);
    transcript_free(&transcript);
}

/* One integer answered by a query run on a connection of the test's own. */
static inline int64_t query_integer(const fixture_t *fixture, const char *sql) {
    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open_v2(fixture->path, &database, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database, sql, -1, &statement, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
    int64_t value = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    sqlite3_close(database);
    return value;
}

static inline void execute(const fixture_t *fixture, const char *sql) {
    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open(fixture->path, &database), SQLITE_OK);
    assert_int_equal(sqlite3_exec(database, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(database);
}

#endif
