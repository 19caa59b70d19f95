/* Unit tests of store/: the batch's deep copies of every kind of record and its memory reuse,
 * and the SQLite store end to end: every mutation written by the store's workers, read back
 * after a reopen, in the loader's order and field by field in the core's shapes; the unique
 * index as the last arbiter; failures rolled back whole. Each test works in its own temporary
 * directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/core.h"
#include "core/limits.h"
#include "lib/buffer.h"
#include "store/store.h"
#include "store/fault.h"
#include "store/sqlite/sync.h"
#include "store_fixtures.h"

/* 2026-11-21T20:00:00Z: a plausible "now" far from the epoch, so purge cut-offs are real. */
#define NOW_MS 1795291200000LL
#define ERROR_SIZE 512

static uint8_t test_hash[32];

/* ---- Fixture: a temporary directory and the store URL inside it ---- */

typedef temporary_database_t fixture_t;

static int fixture_setup(void **state)
{
    fixture_t *fixture = calloc(1, sizeof *fixture);
    if (fixture == NULL || !temporary_database_make(fixture, "store")) return -1;
    for (int i = 0; i < 32; i++) test_hash[i] = (uint8_t)(i * 7 + 1);
    *state = fixture;
    return 0;
}

static int fixture_teardown(void **state)
{
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

static waiter_t waiter = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void on_done(void *context)
{
    waiter_t *w = context;
    pthread_mutex_lock(&w->mutex);
    w->done_count++;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->mutex);
}

static hf_store_t *store_open_started(const fixture_t *fixture)
{
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
static bool submit_and_wait(hf_store_t *store, hf_batch_t *batch, uint64_t sequence,
                            char *error)
{
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
static hf_row_definition_t floor_rows[] = {{"A", 2}, {"B", 3}};
static hf_row_definition_t balcony_rows[] = {{"C", 4}};
static hf_section_definition_t arena_sections[] = {{"F", 100, 2, floor_rows},
                                                   {"BAL", 60, 1, balcony_rows}};
static hf_pool_definition_t arena_pools[] = {{"GA", 5, 50}};
static hf_section_definition_t club_sections[] = {{"S", 10, 1, balcony_rows}};

static const hf_event_definition_t arena = {
    .name = "Arena", .currency = "USD", .hold_ttl_ms = 600000, .max_hold_ms = 1800000,
    .max_seats_per_user = 4, .max_seats_per_hold = 10, .section_count = 2,
    .sections = arena_sections, .pool_count = 1, .pools = arena_pools};
static const hf_event_definition_t club = {
    .name = "Club", .currency = "EUR", .hold_ttl_ms = 1500, .max_hold_ms = 3000,
    .max_seats_per_user = 0, .max_seats_per_hold = 2, .section_count = 1,
    .sections = club_sections};

/* The definition an event's record points to: a shape named after the event, since the loader
 * refuses a row whose definition names another event. One buffer serves every call: the batch
 * copies the record when it is appended, before the next call. */
static hf_event_definition_t named_definition;

static hf_mutation_t event_create_as(const char *event_id, const hf_event_definition_t *shape,
                                     int64_t at_ms)
{
    named_definition = *shape;
    snprintf(named_definition.id, sizeof named_definition.id, "%s", event_id);
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_CREATE, .at_ms = at_ms,
                           .as.event_create = {event_id, &named_definition}};
}

static hf_mutation_t event_create(const char *event_id, int64_t at_ms)
{
    return event_create_as(event_id, &arena, at_ms);
}

/* Lines of holds and orders: seats first, then pools. */
static const hf_mutation_item_t two_seats[] = {{"F-A-1", 0}, {"F-A-2", 0}};
static const hf_mutation_item_t seat_and_pool[] = {{"F-B-1", 0}, {"GA", 2}};
static const hf_mutation_item_t three_of_ga[] = {{"GA", 3}};
#define ITEMS(lines, seat_count, pool_count) \
    ((hf_mutation_items_t){(lines), (seat_count), (pool_count)})
static const hf_mutation_items_t NO_ITEMS = {NULL, 0, 0};

static hf_mutation_t seat_change(const char *event_id, const char *seat_id, int status,
                                 uint32_t version)
{
    return (hf_mutation_t){.type = HF_MUTATION_SEAT, .at_ms = NOW_MS,
                           .as.seat = {.event_id = event_id, .seat_id = seat_id,
                                       .status = status, .version = version}};
}

static hf_mutation_t hold_create(const char *hold_id, const char *event_id, const char *user_id,
                                 hf_mutation_items_t items, int64_t total, int64_t at_ms,
                                 int64_t expires_at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_CREATE, .at_ms = at_ms,
                           .as.hold_create = {.hold_id = hold_id, .event_id = event_id,
                                              .user_id = user_id, .items = items,
                                              .total = total, .expires_at_ms = expires_at_ms,
                                              .status = HF_HOLD_HELD}};
}

static hf_mutation_t hold_update(const char *hold_id, int status, int64_t expires_at_ms,
                                 const char *order_id)
{
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_UPDATE, .at_ms = NOW_MS,
                           .as.hold_update = {.hold_id = hold_id, .status = status,
                                              .expires_at_ms = expires_at_ms,
                                              .order_id = order_id}};
}

static hf_mutation_t order_create(const char *order_id, const char *event_id,
                                  const char *user_id, const char *hold_id,
                                  hf_mutation_items_t items, int64_t total,
                                  const char *payment_ref, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_CREATE, .at_ms = at_ms,
                           .as.order_create = {.order_id = order_id, .event_id = event_id,
                                               .user_id = user_id, .hold_id = hold_id,
                                               .currency = "USD", .payment_ref = payment_ref,
                                               .items = items, .total = total,
                                               .status = HF_ORDER_CONFIRMED}};
}

static hf_mutation_t order_seat(const char *order_id, const char *event_id, const char *seat_id)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM, .at_ms = NOW_MS,
                           .as.order_item = {.order_id = order_id, .event_id = event_id,
                                             .seat_id = seat_id, .quantity = 1}};
}

static hf_mutation_t order_pool(const char *order_id, const char *event_id, const char *pool_id,
                                uint32_t quantity)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM, .at_ms = NOW_MS,
                           .as.order_item = {.order_id = order_id, .event_id = event_id,
                                             .pool_id = pool_id, .quantity = quantity}};
}

static hf_mutation_t order_update(const char *order_id, int status)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_UPDATE, .at_ms = NOW_MS,
                           .as.order_update = {.order_id = order_id, .status = status}};
}

static hf_mutation_t idempotency(const char *key, const char *body, int status, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_IDEMPOTENCY, .at_ms = at_ms,
                           .as.idempotency = {.key = key, .body = body, .hash = test_hash,
                                              .status = status}};
}

static void append(hf_batch_t *batch, hf_mutation_t mutation)
{
    hf_batch_append(batch, &mutation);
}

/* ---- Loading into a transcript: one line per callback, every field of its struct written
 * out ---- */

#define TRANSCRIPT_LINES_MAX 64

typedef struct transcript {
    char *lines[TRANSCRIPT_LINES_MAX];
    int count;
    int stop_at;       /* the callback number (from 1) that answers stop_value; 0 never */
    int stop_value;
    uint64_t finished; /* what the finished_holds callback was told */
} transcript_t;

static const char *or_dash(const char *text) { return text != NULL ? text : "-"; }

static int record(transcript_t *transcript, hf_buffer_t *line)
{
    assert_true(transcript->count < TRANSCRIPT_LINES_MAX);
    transcript->lines[transcript->count++] = strdup(line->data);
    hf_buffer_free(line);
    return transcript->count == transcript->stop_at ? transcript->stop_value : 0;
}

/* A hold request's fields but its hold id, which each kind names itself. */
static void request_write(hf_buffer_t *line, const hf_hold_request_t *request)
{
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

static int on_event(void *context, const hf_stored_event_t *event)
{
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
        hf_buffer_printf(&line, "%s%s:%" PRId64 "@%" PRId64, p ? "," : "",
                         definition->pools[p].id, definition->pools[p].capacity,
                         definition->pools[p].price);
    hf_buffer_printf(&line, " at=%" PRId64, event->created_at_ms);
    return record(context, &line);
}

static int on_hold(void *context, const hf_stored_hold_t *hold)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "hold id=%s ", or_dash(hold->request.hold_id));
    request_write(&line, &hold->request);
    hf_buffer_printf(&line, " status=%d at=%" PRId64 " expires=%" PRId64 " total=%" PRId64,
                     hold->status, (int64_t)hold->created_at_ms, (int64_t)hold->expires_at_ms,
                     hold->total);
    return record(context, &line);
}

static int on_order(void *context, const hf_stored_order_t *order)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "order id=%s hold=%s ", or_dash(order->order_id),
                     or_dash(order->hold_id));
    request_write(&line, &order->items);
    hf_buffer_printf(&line,
                     " items_hold=%s status=%d at=%" PRId64 " total=%" PRId64 " ref=%s",
                     or_dash(order->items.hold_id), order->status,
                     (int64_t)order->created_at_ms, order->total, or_dash(order->payment_ref));
    return record(context, &line);
}

static int on_key(void *context, const hf_stored_idempotency_t *answer)
{
    const char *hash = answer->hash == NULL                      ? "none"
                       : memcmp(answer->hash, test_hash, 32) == 0 ? "ok"
                                                                  : "bad";
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "key key=%s body=%s status=%d hash=%s at=%" PRId64,
                     or_dash(answer->key), or_dash(answer->body), answer->status, hash,
                     answer->created_at_ms);
    return record(context, &line);
}

static void transcript_free(transcript_t *transcript)
{
    for (int i = 0; i < transcript->count; i++) free(transcript->lines[i]);
    transcript->count = 0;
}

/* Reopens the store (a restart) and loads it into the transcript with the loader's callbacks
 * (its context is the transcript). */
static void load_into(const fixture_t *fixture, hf_store_loader_t loader, transcript_t *transcript)
{
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    loader.context = transcript;
    int rc = hf_store_load(store, &loader, error, sizeof error);
    if (rc != 0) fail_msg("load failed: %s", error);
    hf_store_close(store);
}

/* Reopens the store and loads the events, holds, orders and keys into the transcript. */
static void reload(const fixture_t *fixture, int64_t keep_since_ms, transcript_t *transcript)
{
    hf_store_loader_t loader = {.event = on_event, .hold = on_hold, .order = on_order,
                                .idempotency = on_key, .keep_since_ms = keep_since_ms};
    load_into(fixture, loader, transcript);
}

static void assert_transcript(const transcript_t *transcript, const char *const *expected,
                              int count)
{
    for (int i = 0; i < transcript->count && i < count; i++)
        assert_string_equal(transcript->lines[i], expected[i]);
    assert_int_equal(transcript->count, count);
}

/* Reopens the store, loads it with the loader's callbacks, and checks every line. */
static void assert_loaded(const fixture_t *fixture, hf_store_loader_t loader,
                          const char *const *expected, int count)
{
    transcript_t transcript = {0};
    load_into(fixture, loader, &transcript);
    assert_transcript(&transcript, expected, count);
    transcript_free(&transcript);
}

/* One integer answered by a query run on a connection of the test's own. */
static int64_t query_integer(const fixture_t *fixture, const char *sql)
{
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

static void execute(const fixture_t *fixture, const char *sql)
{
    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open(fixture->path, &database), SQLITE_OK);
    assert_int_equal(sqlite3_exec(database, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(database);
}

/* ---- Batch ---- */

/* Overwrites a source string in place: a batch that kept the pointer would see the Zs. */
static void scribble(char *text)
{
    memset(text, 'Z', strlen(text));
}

static void assert_items_copied(const hf_mutation_items_t *copy, const hf_mutation_item_t *source,
                                const char *const *ids, const uint32_t *quantities,
                                uint32_t seat_count, uint32_t pool_count)
{
    assert_int_equal(copy->seat_count, seat_count);
    assert_int_equal(copy->pool_count, pool_count);
    assert_ptr_not_equal(copy->lines, source);
    for (uint32_t i = 0; i < seat_count + pool_count; i++) {
        assert_ptr_not_equal(copy->lines[i].id, source[i].id);
        assert_string_equal(copy->lines[i].id, ids[i]);
        assert_int_equal(copy->lines[i].quantity, quantities[i]);
    }
}

/* Every kind carries pointers: each is appended, every source buffer it points to (strings, the
 * items array and its ids, the definition with its sections, rows and pools) is scribbled over,
 * and the copies must not see it. */
static void test_batch_deep_copy(void **state)
{
    (void)state;
    hf_batch_t *batch = hf_batch_create();

    /* An event's creation: its id and its whole definition. */
    char event_id[] = "eras_n1";
    hf_row_definition_t rows_f[] = {{"A", 2}, {"B", 3}};
    hf_row_definition_t rows_bal[] = {{"C", 4}};
    hf_section_definition_t sections[] = {{"F", 100, 2, rows_f}, {"BAL", 60, 1, rows_bal}};
    hf_pool_definition_t pools[] = {{"GA", 5, 50}, {"VIP", 2, 500}};
    hf_event_definition_t definition = {
        .id = "eras_n1", .name = "Eras", .currency = "USD", .hold_ttl_ms = 1500,
        .max_hold_ms = 3000, .max_seats_per_user = 0, .max_seats_per_hold = 10,
        .section_count = 2, .sections = sections, .pool_count = 2, .pools = pools};
    hf_mutation_t event = {.type = HF_MUTATION_EVENT_CREATE, .at_ms = 41,
                           .as.event_create = {event_id, &definition}};
    hf_batch_append(batch, &event);

    /* The live streams' seats and pools. */
    char seat_event[] = "e_seat", seat_id[] = "F-A-1", pool_event[] = "e_pool", pool_id[] = "GA";
    hf_mutation_t seat = {.type = HF_MUTATION_SEAT, .at_ms = 42,
                          .as.seat = {seat_event, seat_id, HF_SEAT_HELD, 3, 0}};
    hf_batch_append(batch, &seat);
    hf_mutation_t pool = {.type = HF_MUTATION_POOL, .at_ms = 43,
                          .as.pool = {pool_event, pool_id, 4, 5, 6, 0}};
    hf_batch_append(batch, &pool);

    /* A hold: its ids and its lines. */
    char hold_id[] = "res_1", hold_event[] = "e_hold", hold_user[] = "u_hold";
    char hold_seat[] = "F-A-2", hold_pool[] = "VIP";
    hf_mutation_item_t hold_lines[] = {{hold_seat, 0}, {hold_pool, 2}};
    hf_mutation_t hold = {.type = HF_MUTATION_HOLD_CREATE, .at_ms = 44,
                          .as.hold_create = {hold_id, hold_event, hold_user,
                                             {hold_lines, 1, 1}, 900, 77, HF_HOLD_HELD}};
    hf_batch_append(batch, &hold);
    char update_hold[] = "res_2", update_event[] = "e_update", update_user[] = "u_update";
    char update_order[] = "ord_2";
    hf_mutation_t update = {.type = HF_MUTATION_HOLD_UPDATE, .at_ms = 45,
                            .as.hold_update = {update_hold, update_event, update_user,
                                               update_order, 78, HF_HOLD_CONFIRMED}};
    hf_batch_append(batch, &update);

    /* An order, its lines as a row each, its update. */
    char order_id[] = "ord_1", order_event[] = "e_order", order_user[] = "u_order";
    char order_hold[] = "res_3", currency[] = "EUR", payment_ref[] = "pi_1";
    char order_seat_id[] = "F-B-1", order_seat_id2[] = "F-B-2", order_pool_id[] = "GA";
    hf_mutation_item_t order_lines[] = {{order_seat_id, 0}, {order_seat_id2, 0},
                                        {order_pool_id, 3}};
    hf_mutation_t order = {.type = HF_MUTATION_ORDER_CREATE, .at_ms = 46,
                           .as.order_create = {order_id, order_event, order_user, order_hold,
                                               currency, payment_ref, {order_lines, 2, 1}, 950,
                                               HF_ORDER_CONFIRMED}};
    hf_batch_append(batch, &order);
    char item_order[] = "ord_3", item_event[] = "e_item", item_seat[] = "F-C-1";
    char item_pool[] = "GA2";
    hf_mutation_t item = {.type = HF_MUTATION_ORDER_ITEM, .at_ms = 47,
                          .as.order_item = {item_order, item_event, item_seat, item_pool, 2}};
    hf_batch_append(batch, &item);
    char cancel_order[] = "ord_4", cancel_event[] = "e_cancel", cancel_user[] = "u_cancel";
    hf_mutation_t cancel = {.type = HF_MUTATION_ORDER_UPDATE, .at_ms = 48,
                            .as.order_update = {cancel_order, cancel_event, cancel_user,
                                                HF_ORDER_CANCELLED, NULL}};
    hf_batch_append(batch, &cancel);

    /* An answer: key, body and hash. */
    char key[] = "POST /v1/events k1", body[] = "{\"a\":1}";
    uint8_t hash[32];
    memcpy(hash, test_hash, sizeof hash);
    hf_mutation_t answer = {.type = HF_MUTATION_IDEMPOTENCY, .at_ms = 49,
                            .as.idempotency = {key, body, hash, 201}};
    hf_batch_append(batch, &answer);

    /* Scribble over every source buffer: the batch must not see it. */
    char *strings[] = {event_id,      seat_event,     seat_id,     pool_event,   pool_id,
                       hold_id,       hold_event,     hold_user,   hold_seat,    hold_pool,
                       update_hold,   update_event,   update_user, update_order, order_id,
                       order_event,   order_user,     order_hold,  currency,     payment_ref,
                       order_seat_id, order_seat_id2, order_pool_id, item_order, item_event,
                       item_seat,     item_pool,      cancel_order, cancel_event, cancel_user,
                       key,           body};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) scribble(strings[i]);
    memset(hash, 0, sizeof hash);
    memset(rows_f, 0x5a, sizeof rows_f);
    memset(rows_bal, 0x5a, sizeof rows_bal);
    memset(sections, 0x5a, sizeof sections);
    memset(pools, 0x5a, sizeof pools);
    memset(&definition, 0x5a, sizeof definition);
    memset(hold_lines, 0x5a, sizeof hold_lines);
    memset(order_lines, 0x5a, sizeof order_lines);

    assert_int_equal(hf_batch_count(batch), 9);
    const hf_mutation_t *copy = hf_batch_at(batch, 0);
    assert_int_equal(copy->type, HF_MUTATION_EVENT_CREATE);
    assert_int_equal(copy->at_ms, 41);
    assert_string_equal(copy->as.event_create.event_id, "eras_n1");
    const hf_event_definition_t *copied = copy->as.event_create.definition;
    assert_ptr_not_equal(copied, &definition);
    assert_string_equal(copied->id, "eras_n1");
    assert_string_equal(copied->name, "Eras");
    assert_string_equal(copied->currency, "USD");
    assert_int_equal(copied->hold_ttl_ms, 1500);
    assert_int_equal(copied->max_hold_ms, 3000);
    assert_int_equal(copied->max_seats_per_user, 0);
    assert_int_equal(copied->max_seats_per_hold, 10);
    assert_int_equal(copied->section_count, 2);
    assert_ptr_not_equal(copied->sections, sections);
    assert_string_equal(copied->sections[0].id, "F");
    assert_int_equal(copied->sections[0].price, 100);
    assert_int_equal(copied->sections[0].row_count, 2);
    assert_ptr_not_equal(copied->sections[0].rows, rows_f);
    assert_string_equal(copied->sections[0].rows[0].id, "A");
    assert_int_equal(copied->sections[0].rows[0].seats, 2);
    assert_string_equal(copied->sections[0].rows[1].id, "B");
    assert_int_equal(copied->sections[0].rows[1].seats, 3);
    assert_string_equal(copied->sections[1].id, "BAL");
    assert_int_equal(copied->sections[1].price, 60);
    assert_int_equal(copied->sections[1].row_count, 1);
    assert_ptr_not_equal(copied->sections[1].rows, rows_bal);
    assert_string_equal(copied->sections[1].rows[0].id, "C");
    assert_int_equal(copied->sections[1].rows[0].seats, 4);
    assert_int_equal(copied->pool_count, 2);
    assert_ptr_not_equal(copied->pools, pools);
    assert_string_equal(copied->pools[0].id, "GA");
    assert_int_equal(copied->pools[0].capacity, 5);
    assert_int_equal(copied->pools[0].price, 50);
    assert_string_equal(copied->pools[1].id, "VIP");
    assert_int_equal(copied->pools[1].capacity, 2);
    assert_int_equal(copied->pools[1].price, 500);

    copy = hf_batch_at(batch, 1);
    assert_int_equal(copy->type, HF_MUTATION_SEAT);
    assert_int_equal(copy->at_ms, 42);
    assert_string_equal(copy->as.seat.event_id, "e_seat");
    assert_string_equal(copy->as.seat.seat_id, "F-A-1");
    assert_int_equal(copy->as.seat.status, HF_SEAT_HELD);
    assert_int_equal(copy->as.seat.version, 3);

    copy = hf_batch_at(batch, 2);
    assert_int_equal(copy->type, HF_MUTATION_POOL);
    assert_int_equal(copy->at_ms, 43);
    assert_string_equal(copy->as.pool.event_id, "e_pool");
    assert_string_equal(copy->as.pool.pool_id, "GA");
    assert_int_equal(copy->as.pool.available, 4);
    assert_int_equal(copy->as.pool.held, 5);
    assert_int_equal(copy->as.pool.sold, 6);

    copy = hf_batch_at(batch, 3);
    assert_int_equal(copy->type, HF_MUTATION_HOLD_CREATE);
    assert_int_equal(copy->at_ms, 44);
    assert_string_equal(copy->as.hold_create.hold_id, "res_1");
    assert_string_equal(copy->as.hold_create.event_id, "e_hold");
    assert_string_equal(copy->as.hold_create.user_id, "u_hold");
    const char *const hold_ids[] = {"F-A-2", "VIP"};
    const uint32_t hold_quantities[] = {0, 2};
    assert_items_copied(&copy->as.hold_create.items, hold_lines, hold_ids, hold_quantities, 1, 1);
    assert_int_equal(copy->as.hold_create.total, 900);
    assert_int_equal(copy->as.hold_create.expires_at_ms, 77);
    assert_int_equal(copy->as.hold_create.status, HF_HOLD_HELD);

    copy = hf_batch_at(batch, 4);
    assert_int_equal(copy->type, HF_MUTATION_HOLD_UPDATE);
    assert_int_equal(copy->at_ms, 45);
    assert_string_equal(copy->as.hold_update.hold_id, "res_2");
    assert_string_equal(copy->as.hold_update.event_id, "e_update");
    assert_string_equal(copy->as.hold_update.user_id, "u_update");
    assert_string_equal(copy->as.hold_update.order_id, "ord_2");
    assert_int_equal(copy->as.hold_update.expires_at_ms, 78);
    assert_int_equal(copy->as.hold_update.status, HF_HOLD_CONFIRMED);

    copy = hf_batch_at(batch, 5);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_CREATE);
    assert_int_equal(copy->at_ms, 46);
    assert_string_equal(copy->as.order_create.order_id, "ord_1");
    assert_string_equal(copy->as.order_create.event_id, "e_order");
    assert_string_equal(copy->as.order_create.user_id, "u_order");
    assert_string_equal(copy->as.order_create.hold_id, "res_3");
    assert_string_equal(copy->as.order_create.currency, "EUR");
    assert_string_equal(copy->as.order_create.payment_ref, "pi_1");
    const char *const order_ids[] = {"F-B-1", "F-B-2", "GA"};
    const uint32_t order_quantities[] = {0, 0, 3};
    assert_items_copied(&copy->as.order_create.items, order_lines, order_ids, order_quantities,
                        2, 1);
    assert_int_equal(copy->as.order_create.total, 950);
    assert_int_equal(copy->as.order_create.status, HF_ORDER_CONFIRMED);

    copy = hf_batch_at(batch, 6);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_ITEM);
    assert_int_equal(copy->at_ms, 47);
    assert_string_equal(copy->as.order_item.order_id, "ord_3");
    assert_string_equal(copy->as.order_item.event_id, "e_item");
    assert_string_equal(copy->as.order_item.seat_id, "F-C-1");
    assert_string_equal(copy->as.order_item.pool_id, "GA2");
    assert_int_equal(copy->as.order_item.quantity, 2);

    copy = hf_batch_at(batch, 7);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_UPDATE);
    assert_int_equal(copy->at_ms, 48);
    assert_string_equal(copy->as.order_update.order_id, "ord_4");
    assert_string_equal(copy->as.order_update.event_id, "e_cancel");
    assert_string_equal(copy->as.order_update.user_id, "u_cancel");
    assert_int_equal(copy->as.order_update.status, HF_ORDER_CANCELLED);

    copy = hf_batch_at(batch, 8);
    assert_int_equal(copy->type, HF_MUTATION_IDEMPOTENCY);
    assert_int_equal(copy->at_ms, 49);
    assert_string_equal(copy->as.idempotency.key, "POST /v1/events k1");
    assert_string_equal(copy->as.idempotency.body, "{\"a\":1}");
    assert_memory_equal(copy->as.idempotency.hash, test_hash, 32);
    assert_ptr_not_equal(copy->as.idempotency.hash, hash);
    assert_int_equal(copy->as.idempotency.status, 201);

    /* Absent pointers stay absent, in every kind that may leave one out. */
    hf_mutation_t sparse[] = {
        {.type = HF_MUTATION_HOLD_UPDATE, .as.hold_update = {.hold_id = "res_9"}},
        {.type = HF_MUTATION_ORDER_CREATE, .as.order_create = {.order_id = "ord_9"}},
        {.type = HF_MUTATION_ORDER_ITEM, .as.order_item = {.order_id = "ord_9", .seat_id = "S"}},
        {.type = HF_MUTATION_ORDER_ITEM, .as.order_item = {.order_id = "ord_9", .pool_id = "P"}},
        {.type = HF_MUTATION_ORDER_UPDATE, .as.order_update = {.order_id = "ord_9"}},
        {.type = HF_MUTATION_IDEMPOTENCY, .as.idempotency = {.key = "k9"}},
        {.type = HF_MUTATION_SEAT, .as.seat = {.seat_id = "F-A-9"}},
        {.type = HF_MUTATION_POOL, .as.pool = {.pool_id = "GA9"}},
        {.type = HF_MUTATION_HOLD_CREATE, .as.hold_create = {.hold_id = "res_8"}},
        /* An event of seats only: no pools at all. */
        {.type = HF_MUTATION_EVENT_CREATE, .as.event_create = {"e9", &club}},
    };
    for (size_t i = 0; i < sizeof sparse / sizeof sparse[0]; i++)
        hf_batch_append(batch, &sparse[i]);
    const hf_mutation_hold_update_t *hold_sparse = &hf_batch_at(batch, 9)->as.hold_update;
    assert_string_equal(hold_sparse->hold_id, "res_9");
    assert_null(hold_sparse->event_id);
    assert_null(hold_sparse->user_id);
    assert_null(hold_sparse->order_id);
    const hf_mutation_order_create_t *order_sparse = &hf_batch_at(batch, 10)->as.order_create;
    assert_string_equal(order_sparse->order_id, "ord_9");
    assert_null(order_sparse->event_id);
    assert_null(order_sparse->user_id);
    assert_null(order_sparse->hold_id);
    assert_null(order_sparse->currency);
    assert_null(order_sparse->payment_ref);
    assert_int_equal(order_sparse->items.seat_count + order_sparse->items.pool_count, 0);
    assert_null(order_sparse->items.lines);
    const hf_mutation_order_item_t *seat_item = &hf_batch_at(batch, 11)->as.order_item;
    assert_string_equal(seat_item->seat_id, "S");
    assert_null(seat_item->pool_id);
    assert_null(seat_item->event_id);
    const hf_mutation_order_item_t *pool_item = &hf_batch_at(batch, 12)->as.order_item;
    assert_string_equal(pool_item->pool_id, "P");
    assert_null(pool_item->seat_id);
    const hf_mutation_order_update_t *update_sparse = &hf_batch_at(batch, 13)->as.order_update;
    assert_string_equal(update_sparse->order_id, "ord_9");
    assert_null(update_sparse->event_id);
    assert_null(update_sparse->user_id);
    const hf_mutation_idempotency_t *answer_sparse = &hf_batch_at(batch, 14)->as.idempotency;
    assert_string_equal(answer_sparse->key, "k9");
    assert_null(answer_sparse->body);
    assert_null(answer_sparse->hash);
    assert_null(hf_batch_at(batch, 15)->as.seat.event_id);
    assert_null(hf_batch_at(batch, 16)->as.pool.event_id);
    const hf_mutation_hold_create_t *create_sparse = &hf_batch_at(batch, 17)->as.hold_create;
    assert_string_equal(create_sparse->hold_id, "res_8");
    assert_null(create_sparse->event_id);
    assert_null(create_sparse->user_id);
    assert_int_equal(create_sparse->items.seat_count + create_sparse->items.pool_count, 0);
    assert_null(create_sparse->items.lines);
    const hf_event_definition_t *seats_only = hf_batch_at(batch, 18)->as.event_create.definition;
    assert_ptr_not_equal(seats_only, &club);
    assert_int_equal(seats_only->section_count, 1);
    assert_ptr_not_equal(seats_only->sections, club.sections);
    assert_string_equal(seats_only->sections[0].id, "S");
    assert_string_equal(seats_only->sections[0].rows[0].id, "C");
    assert_int_equal(seats_only->pool_count, 0);
    assert_null(seats_only->pools);
    hf_batch_destroy(batch);
}

static void test_batch_clear_reuses_memory(void **state)
{
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    /* Enough records and one large answer body to need several chunks and array growth. */
    size_t big_size = 300 * 1024;
    char *big = malloc(big_size + 1);
    memset(big, 'b', big_size);
    big[big_size] = '\0';
    char id[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            hf_mutation_t m = i == 2500 ? idempotency(id, big, 201, NOW_MS)
                                        : seat_change("e1", id, HF_SEAT_HELD, (uint32_t)i);
            hf_batch_append(batch, &m);
        }
        assert_int_equal(hf_batch_count(batch), 5000);
        for (int i = 0; i < 5000; i += 499) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            assert_int_equal(hf_batch_at(batch, (size_t)i)->type, HF_MUTATION_SEAT);
            assert_string_equal(hf_batch_at(batch, (size_t)i)->as.seat.seat_id, id);
            assert_int_equal(hf_batch_at(batch, (size_t)i)->as.seat.version, i);
        }
        /* The large body is whole, and the records around it are untouched by it. */
        const hf_mutation_idempotency_t *answer = &hf_batch_at(batch, 2500)->as.idempotency;
        assert_int_equal(hf_batch_at(batch, 2500)->type, HF_MUTATION_IDEMPOTENCY);
        assert_int_equal(strlen(answer->body), big_size);
        assert_memory_equal(answer->hash, test_hash, 32);
        snprintf(id, sizeof id, "seat-%d-2500", round);
        assert_string_equal(answer->key, id);
        snprintf(id, sizeof id, "seat-%d-2499", round);
        assert_string_equal(hf_batch_at(batch, 2499)->as.seat.seat_id, id);
        snprintf(id, sizeof id, "seat-%d-2501", round);
        assert_string_equal(hf_batch_at(batch, 2501)->as.seat.seat_id, id);
        hf_batch_clear(batch);
        assert_int_equal(hf_batch_count(batch), 0);
    }
    /* After a clear the first string lands where the first string of the last round did:
     * the memory is rewound, not given back and asked for again. */
    hf_mutation_t first = seat_change("e1", "A", HF_SEAT_HELD, 1);
    hf_batch_append(batch, &first);
    const char *place = hf_batch_at(batch, 0)->as.seat.event_id;
    hf_batch_clear(batch);
    hf_batch_append(batch, &first);
    assert_ptr_equal(hf_batch_at(batch, 0)->as.seat.event_id, place);
    assert_string_equal(hf_batch_at(batch, 0)->as.seat.seat_id, "A");
    free(big);
    hf_batch_destroy(batch);
}

static void test_batch_sink(void **state)
{
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_sink_t sink = {hf_batch_sink_emit, batch};
    hf_mutation_t m = order_update("ord_9", HF_ORDER_CANCELLED);
    sink.emit(sink.context, &m);
    assert_int_equal(hf_batch_count(batch), 1);
    assert_int_equal(hf_batch_at(batch, 0)->type, HF_MUTATION_ORDER_UPDATE);
    assert_string_equal(hf_batch_at(batch, 0)->as.order_update.order_id, "ord_9");
    assert_ptr_not_equal(hf_batch_at(batch, 0)->as.order_update.order_id,
                         m.as.order_update.order_id);
    assert_int_equal(hf_batch_at(batch, 0)->as.order_update.status, HF_ORDER_CANCELLED);
    hf_batch_destroy(batch);
}

/* ---- Opening ---- */

static void test_open_creates_schema_in_wal_mode(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);

    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open(fixture->path, &database), SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database, "PRAGMA journal_mode", -1, &statement, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(statement, 0), "wal");
    sqlite3_finalize(statement);
    sqlite3_close(database);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('events', 'holds',"
                                            " 'orders', 'order_items', 'idempotency', 'meta',"
                                            " 'history')"),
                     7);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'view' AND name = 'seat_state'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'index' AND name = 'order_items_one_sale'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     8);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name = 'tickets'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('deliveries', 'refunds')"),
                     2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('drivers', 'rides')"),
                     2);

    /* A second open finds the schema in place and leaves it be. */
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM meta"), 1);
}

static void test_open_rejects_what_it_cannot_serve(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = (hf_store_t *)fixture; /* must be reset to NULL on failure */
    char error[ERROR_SIZE] = "";

    /* Port 1 of the loopback refuses at once: the backend is built, and says why it failed. */
    assert_int_not_equal(hf_store_open(&store, "postgres://127.0.0.1:1/holdfast", error,
                                       sizeof error), 0);
    assert_null(store);
    assert_non_null(strstr(error, "cannot connect to PostgreSQL"));

    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, "mysql://db", error, sizeof error), 0);
    assert_non_null(strstr(error, "unknown store URL \"mysql://db\""));

    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, "sqlite:", error, sizeof error), 0);
    assert_non_null(strstr(error, "expected sqlite:PATH"));

    error[0] = '\0';
    assert_int_not_equal(
        hf_store_open(&store, "sqlite:/nonexistent-holdfast-dir/x.db", error, sizeof error), 0);
    assert_non_null(strstr(error, "cannot open /nonexistent-holdfast-dir/x.db"));

    /* A database written by a newer server is refused, not misread. */
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
    execute(fixture, "UPDATE meta SET value = '9' WHERE key = 'schema_version'");
    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    assert_non_null(strstr(error, "schema version \"9\""));
}

/* ---- Round trip of every mutation type ---- */

static void test_every_mutation_round_trips(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    const int64_t t = NOW_MS;

    append(batch, event_create("e1", t));
    append(batch, event_create_as("e0", &club, t + 1));
    append(batch, hold_create("res_b", "e1", "u1", ITEMS(two_seats, 2, 0), 100, t + 2,
                              t + 600000));
    append(batch, hold_create("res_a", "e1", "u2", ITEMS(seat_and_pool, 1, 1), 50, t + 3,
                              t + 600000));
    append(batch, seat_change("e1", "F-A-2", HF_SEAT_HELD, 2));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_HELD, 2));
    append(batch, idempotency("POST /v1/events k1", "{\"id\":\"e1\"}", 201, t));
    assert_true(submit_and_wait(store, batch, 1, error));
    assert_string_equal(error, "");

    /* The second batch changes rows the first one wrote. */
    append(batch, hold_update("res_b", HF_HOLD_CONFIRMED, t + 600000, "ord_1"));
    append(batch, order_create("ord_1", "e1", "u1", "res_b", ITEMS(two_seats, 1, 0), 100,
                               "pi_1", t + 10));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_SOLD, 3));
    append(batch, hold_update("res_a", HF_HOLD_HELD, t + 900000, NULL));
    append(batch, hold_update("res_a", HF_HOLD_RELEASED, t + 20, NULL));
    append(batch, order_create("ord_0", "e1", "u2", NULL, ITEMS(three_of_ga, 0, 1), 30, NULL,
                               t + 30));
    append(batch, order_pool("ord_0", "e1", "GA", 3));
    append(batch, order_update("ord_0", HF_ORDER_CANCELLED));
    assert_true(submit_and_wait(store, batch, 2, error));
    assert_string_equal(error, "");

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.batches, 2);
    assert_int_equal(stats.mutations, 16);
    assert_int_equal(stats.last_batch_size, 9);
    assert_int_equal(stats.failures, 0);
    assert_true(stats.last_commit_seconds > 0.0 && stats.last_commit_seconds < 10.0);
    /* Sizes 7 and 9, each in the bucket up to 10 (1, 2, 5, 10, ...); both commits timed. */
    assert_int_equal(stats.batch_sizes.count, 2);
    assert_int_equal(stats.batch_sizes.sum, 16);
    assert_int_equal(stats.batch_sizes.counts[3], 2);
    assert_int_equal(stats.commit_durations.count, 2);
    assert_true(stats.commit_durations.sum > 0 &&
                stats.commit_durations.sum < (uint64_t)(20.0 * 1e9));
    hf_store_close(store);
    hf_batch_destroy(batch);

    transcript_t transcript = {0};
    reload(fixture, t - HF_IDEMPOTENCY_KEEP_MS, &transcript);
    const char *const expected[] = {
        "event id=e1 name=Arena currency=USD ttl=600000 max_hold=1800000 per_user=4"
        " per_hold=10 sections=F:100[A:2,B:3],BAL:60[C:4] pools=GA:5@50 at=1795291200000",
        "event id=e0 name=Club currency=EUR ttl=1500 max_hold=3000 per_user=0 per_hold=2"
        " sections=S:10[C:4] pools= at=1795291200001",
        "hold id=res_b event=e1 user=u1 seats=F-A-1,F-A-2 pools= ttl=-1 replace=0 best=0/-/0"
        " versions=- status=1 at=1795291200002 expires=1795291800000 total=100",
        "hold id=res_a event=e1 user=u2 seats=F-B-1 pools=GA:2 ttl=-1 replace=0 best=0/-/0"
        " versions=- status=2 at=1795291200003 expires=1795291200020 total=50",
        "order id=ord_1 hold=res_b event=e1 user=u1 seats=F-A-1 pools= ttl=-1 replace=0"
        " best=0/-/0 versions=- items_hold=- status=0 at=1795291200010 total=100 ref=pi_1",
        "order id=ord_0 hold=- event=e1 user=u2 seats= pools=GA:3 ttl=-1 replace=0 best=0/-/0"
        " versions=- items_hold=- status=1 at=1795291200030 total=30 ref=-",
        "key key=POST /v1/events k1 body={\"id\":\"e1\"} status=201 hash=ok at=1795291200000",
    };
    assert_transcript(&transcript, expected, 7);
    transcript_free(&transcript);

    /* What the loader does not hand back is in the tables all the same: the hold's order and
     * the orders' currency. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_b'"
                                            " AND order_id = 'ord_1'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE order_id IS NULL"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders WHERE currency = 'USD'"),
                     2);
    /* The JSON columns as an operator reads them: the items in the API's shape, byte for byte,
     * and the definition in seconds. */
    assert_int_equal(query_integer(fixture, "SELECT items = '{\"seats\":[\"F-A-1\",\"F-A-2\"],"
                                            "\"pools\":{}}' FROM holds WHERE id = 'res_b'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT items = '{\"seats\":[],\"pools\":"
                                            "{\"GA\":3}}' FROM orders WHERE id = 'ord_0'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT json_extract(config, '$.hold_ttl_s') = 1.5"
                                            " FROM events WHERE id = 'e0'"),
                     1);

    /* Operators read words, and a cancelled order's lines leave the one-sale index. Seat
     * records are not written: the seat_state view derives them from orders and holds. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state WHERE"
                                            " status = 'sold' AND seat_id = 'F-A-1'"
                                            " AND owner = 'ord_1'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state"), 1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders WHERE"
                                            " status = 'cancelled' AND id = 'ord_0'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT active FROM order_items WHERE"
                                            " order_id = 'ord_0'"),
                     0);
    assert_int_equal(query_integer(fixture, "SELECT quantity FROM order_items WHERE"
                                            " order_id = 'ord_0' AND pool_id = 'GA'"),
                     3);
    assert_int_equal(query_integer(fixture, "SELECT active FROM order_items WHERE"
                                            " order_id = 'ord_1' AND seat_id = 'F-A-1'"),
                     1);
}

/* The view seat_state reads a held hold's seats out of the items the store wrote, with
 * json_each: the pools of the same hold are not seats. */
static void test_seat_state_reads_the_written_items(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    static const hf_mutation_item_t lines[] = {{"F-A-1", 0}, {"F-A-2", 0}, {"GA", 2}};
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", ITEMS(lines, 2, 1), 300, NOW_MS,
                              NOW_MS + 1000));
    append(batch, hold_create("res_2", "e1", "u2", ITEMS(lines + 2, 0, 1), 100, NOW_MS,
                              NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state"), 2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state WHERE"
                                            " status = 'held' AND owner = 'res_1'"
                                            " AND event_id = 'e1'"
                                            " AND seat_id IN ('F-A-1', 'F-A-2')"),
                     2);
}

static void test_hold_update_keeps_order_id_when_absent(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    append(batch, hold_update("res_1", HF_HOLD_CONFIRMED, NOW_MS + 1000, "ord_7"));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, hold_update("res_1", HF_HOLD_CONFIRMED, NOW_MS + 2000, NULL));
    assert_true(submit_and_wait(store, batch, 6, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_1'"
                                            " AND order_id = 'ord_7' AND status = 'confirmed'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT expires_at FROM holds"), NOW_MS + 2000);
}

/* ---- The store as the last arbiter ---- */

static void test_second_sale_of_a_seat_fails_the_whole_batch(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    /* Everything in the failing batch, before and after the offending line, must vanish. */
    append(batch, hold_create("res_x", "e1", "u2", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    append(batch, order_create("ord_2", "e1", "u2", NULL, NO_ITEMS, 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    append(batch, idempotency("POST /v1/events/e1/bookings k2", "{}", 201, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_ITEM of F-A-1 failed"));
    assert_non_null(strstr(error, "UNIQUE constraint failed"));

    /* The same seat in another event is another seat. */
    append(batch, event_create("e2", NOW_MS));
    append(batch, order_create("ord_3", "e2", "u2", NULL, NO_ITEMS, 10, "pi_3", NOW_MS + 2));
    append(batch, order_seat("ord_3", "e2", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 3, error));
    assert_string_equal(error, "");

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.batches, 2);
    assert_int_equal(stats.failures, 1);
    assert_int_equal(stats.mutations, 6);
    hf_store_close(store);
    hf_batch_destroy(batch);

    transcript_t transcript = {0};
    reload(fixture, 0, &transcript);
    assert_int_equal(transcript.count, 4);
    assert_non_null(strstr(transcript.lines[0], "event id=e1 "));
    assert_non_null(strstr(transcript.lines[1], "event id=e2 "));
    assert_non_null(strstr(transcript.lines[2], "order id=ord_1 hold=- event=e1 "));
    assert_non_null(strstr(transcript.lines[3], "order id=ord_3 hold=- event=e2 "));
    transcript_free(&transcript);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items"), 2);
}

static void test_cancelled_seat_can_be_sold_again(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, order_update("ord_1", HF_ORDER_CANCELLED));
    assert_true(submit_and_wait(store, batch, 2, error));
    append(batch, order_create("ord_2", "e1", "u2", NULL, NO_ITEMS, 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 3, error));
    assert_string_equal(error, "");

    /* Cancel and resale in one batch work as well: statements run in record order. */
    append(batch, order_update("ord_2", HF_ORDER_CANCELLED));
    append(batch, order_create("ord_3", "e1", "u3", NULL, NO_ITEMS, 10, "pi_3", NOW_MS + 2));
    append(batch, order_seat("ord_3", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 4, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " seat_id = 'F-A-1'"),
                     3);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " seat_id = 'F-A-1' AND active = 1"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " order_id = 'ord_3' AND active = 1"),
                     1);
}

static void test_failures_roll_back_and_the_store_goes_on(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];

    /* An update of a hold the store never saw: the tables and the engine disagree. */
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_update("res_missing", HF_HOLD_RELEASED, NOW_MS, NULL));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_missing failed: no such row to update"));

    append(batch, order_update("ord_missing", HF_ORDER_CANCELLED));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_UPDATE of ord_missing failed"));

    /* A status the tables have no word for. */
    append(batch, hold_create("res_odd", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    hf_mutation_t odd = hold_update("res_odd", 9, NOW_MS, NULL);
    hf_batch_append(batch, &odd);
    assert_false(submit_and_wait(store, batch, 3, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_odd failed: NOT NULL constraint failed:"
                                  " holds.status"));

    /* An idempotency record without its request hash. */
    hf_mutation_t key = idempotency("k", "{}", 201, NOW_MS);
    key.as.idempotency.hash = NULL;
    hf_batch_append(batch, &key);
    assert_false(submit_and_wait(store, batch, 4, error));
    assert_non_null(strstr(error, "IDEMPOTENCY of k failed"));

    /* A duplicate event id. */
    append(batch, event_create("e1", NOW_MS));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, event_create("e1", NOW_MS));
    assert_false(submit_and_wait(store, batch, 6, error));
    assert_non_null(strstr(error, "EVENT_CREATE of e1 failed: UNIQUE constraint failed"));

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.failures, 5);
    assert_int_equal(stats.batches, 1);
    assert_int_equal(stats.mutations, 1);
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 0);
}

/* A table dropped behind the store's back (an operator's mistake): the prepared statement
 * cannot run any more, the batch fails with SQLite's reason, and the rest still works. */
static void test_missing_table_fails_the_batch(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    execute(fixture, "DROP TABLE holds");
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_CREATE of res_1 failed: no such table: holds"));

    append(batch, event_create("e1", NOW_MS));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);
}

/* ---- Idempotency keys: kept 24 hours ---- */

static void test_old_idempotency_keys_are_not_loaded_then_purged(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    const int64_t day = HF_IDEMPOTENCY_KEEP_MS;
    append(batch, idempotency("old", "{\"n\":1}", 201, NOW_MS - day - 1));
    append(batch, idempotency("edge", "{\"n\":2}", 200, NOW_MS - day));
    append(batch, idempotency("new", "{\"n\":3}", 201, NOW_MS));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);

    transcript_t transcript = {0};
    reload(fixture, NOW_MS - day, &transcript);
    assert_int_equal(transcript.count, 2);
    assert_non_null(strstr(transcript.lines[0], "key key=edge body={\"n\":2}"));
    assert_non_null(strstr(transcript.lines[0], "status=200 hash=ok"));
    assert_non_null(strstr(transcript.lines[1], "key key=new body={\"n\":3}"));
    transcript_free(&transcript);
    /* The load left the old row alone: it is filtered, not deleted, on reading. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 3);

    /* A fresh store purges on its first batch, with the batch's own time as now. */
    store = store_open_started(fixture);
    append(batch, idempotency("newer", "{}", 201, NOW_MS + 1));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"
                                            " WHERE key IN ('old', 'edge')"),
                     0);
}

/* ---- Loader and lifecycle ---- */

static void test_loader_callback_stops_the_load(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    append(batch, hold_create("res_2", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 0, NULL, NOW_MS));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript_t transcript = {.stop_at = 2, .stop_value = -7};
    hf_store_loader_t loader = {on_event, on_hold, on_order, on_key, 0, &transcript, NULL,
                                NULL, NULL, 0, NULL, NULL, NULL};
    error[0] = '\0';
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), -7);
    assert_non_null(strstr(error, "loading holds stopped at res_1"));
    /* Nothing after the refusing row: not the second hold, not the order. */
    assert_int_equal(transcript.count, 2);
    transcript_free(&transcript);

    /* Callbacks left NULL skip their table. */
    hf_store_loader_t orders_only = {NULL, NULL, on_order, NULL, 0, &transcript, NULL,
                                      NULL, NULL, 0, NULL, NULL, NULL};
    assert_int_equal(hf_store_load(store, &orders_only, error, sizeof error), 0);
    assert_int_equal(transcript.count, 1);
    assert_non_null(strstr(transcript.lines[0], "order id=ord_1 "));
    transcript_free(&transcript);
    hf_store_close(store);
}

static int on_finished_count(void *context, uint64_t count)
{
    ((transcript_t *)context)->finished = count;
    return 0;
}

/* Before the holds, the loader learns how many are released or expired; and a forgotten hold
 * is read back alone, by id, through the store's own reader, while the workers run. */
static void test_finished_count_and_reading_one_hold(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "res_%d", i);
        append(batch, hold_create(id, "e1", "u1", NO_ITEMS, 7, NOW_MS,
                                  NOW_MS + 1000));
    }
    append(batch, hold_update("res_1", HF_HOLD_RELEASED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_2", HF_HOLD_EXPIRED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_3", HF_HOLD_CONFIRMED, NOW_MS + 1000, "ord_1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    transcript_t transcript = {0};
    hf_store_loader_t one = {.hold = on_hold, .context = &transcript};
    bool found = false;
    assert_int_equal(hf_store_read_hold(store, "res_2", &one, &found, error, sizeof error), 0);
    assert_true(found);
    assert_int_equal(transcript.count, 1);
    assert_non_null(strstr(transcript.lines[0], "hold id=res_2 "));
    assert_non_null(strstr(transcript.lines[0], "status=3"));
    assert_int_equal(hf_store_read_hold(store, "res_9", &one, &found, error, sizeof error), 0);
    assert_false(found);
    assert_int_equal(transcript.count, 1);
    transcript_free(&transcript);
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript.finished = 99;
    hf_store_loader_t loader = {on_event, on_hold, on_order, on_key, 0, &transcript,
                                on_finished_count, NULL, NULL, 0, NULL, NULL, NULL};
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), 0);
    assert_int_equal(transcript.finished, 2);
    transcript_free(&transcript);
    hf_store_close(store);
}


/* ---- Dispatch: drivers and rides ---- */

static hf_mutation_t driver_record(const char *driver_id, double lat, bool available)
{
    return (hf_mutation_t){.type = HF_MUTATION_DRIVER, .at_ms = NOW_MS,
                           .as.driver = {"f1", driver_id, lat, -73.99, 4.5, available}};
}

static hf_mutation_t ride_record(const char *ride_id, int status, const char *offer_driver,
                                 const char *driver, const char *declined, const char *lapsed)
{
    return (hf_mutation_t){
        .type = HF_MUTATION_RIDE, .at_ms = NOW_MS + 1,
        .as.ride = {.ride_id = ride_id, .fleet_id = "f1", .rider_id = "rider 1", .lat = 40.75,
                    .lng = -73.99, .radius_m = 3000, .offer_ttl_ms = 1500,
                    .created_at_ms = NOW_MS, .status = status, .offer_driver_id = offer_driver,
                    .offer_distance_m = offer_driver ? 420 : 0,
                    .offer_expires_at_ms = offer_driver ? NOW_MS + 1500 : 0, .driver_id = driver,
                    .declined = declined, .lapsed = lapsed}};
}

static int on_driver(void *context, const hf_stored_driver_t *driver)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "driver %s/%s %.4f %.2f %.1f %d", driver->fleet_id, driver->driver_id,
                     driver->lat, driver->lng, driver->rating, driver->available);
    return record(context, &line);
}

static int on_ride(void *context, const hf_stored_ride_t *ride)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "ride %s/%s rider=%s %.2f %.2f r=%" PRId64 " ttl=%" PRId64 " %s"
                     " at=%" PRId64 " offer=%s %" PRId64 " %" PRId64 " driver=%s declined=[%s]"
                     " lapsed=[%s]", ride->fleet_id, ride->ride_id, ride->rider_id, ride->lat,
                     ride->lng, ride->radius_m, ride->offer_ttl_ms,
                     hf_ride_status_name(ride->status), ride->created_at_ms,
                     or_dash(ride->offer_driver_id), ride->offer_distance_m,
                     ride->offer_expires_at_ms, or_dash(ride->driver_id), ride->declined,
                     ride->lapsed);
    return record(context, &line);
}

/* A driver's row is upserted whole (its last record wins); a ride's too, its offer and lists
 * included; rides come back in the order they were created. */
static void test_dispatch_round_trip(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, driver_record("d2", 40.7511, true));
    append(batch, driver_record("d1", 40.75, true));
    append(batch, ride_record("r2", HF_RIDE_SEARCHING, NULL, NULL, "", ""));
    append(batch, ride_record("r1", HF_RIDE_OFFERED, "d1", NULL, "", ""));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, driver_record("d1", 40.7522, false));
    append(batch, ride_record("r1", HF_RIDE_ASSIGNED, NULL, "d1", "d3 d4", "d2"));
    append(batch, ride_record("r2", HF_RIDE_OFFERED, "d2", NULL, "", "d1"));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "driver f1/d1 40.7522 -73.99 4.5 0",
        "driver f1/d2 40.7511 -73.99 4.5 1",
        "ride f1/r2 rider=rider 1 40.75 -73.99 r=3000 ttl=1500 offered at=1795291200000"
        " offer=d2 420 1795291201500 driver=- declined=[] lapsed=[d1]",
        "ride f1/r1 rider=rider 1 40.75 -73.99 r=3000 ttl=1500 assigned at=1795291200000"
        " offer=- 0 0 driver=d1 declined=[d3 d4] lapsed=[d2]",
    };
    assert_loaded(fixture, (hf_store_loader_t){.driver = on_driver, .ride = on_ride}, expected, 4);
}

/* ---- Closing sales, and the schema's migration ---- */

/* ---- Payments: deliveries and refunds ---- */

static hf_mutation_t refund_record(const char *refund_id, const char *intent_id, int reason,
                                   int status)
{
    return (hf_mutation_t){.type = HF_MUTATION_REFUND, .at_ms = NOW_MS,
                           .as.refund = {refund_id, intent_id, "res_1", 109800, reason, status,
                                         NOW_MS - 5}};
}

static hf_mutation_t delivery_record(const char *intent_id, int type, int result, int reason,
                                     const char *order_id, const char *refund_id, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_DELIVERY, .at_ms = at_ms,
                           .as.delivery = {.payment_intent_id = intent_id, .event_id = "evt_1",
                                           .reservation_id = "res_1", .amount = 109800,
                                           .type = type, .result = result, .reason = reason,
                                           .late = order_id != NULL, .order_id = order_id,
                                           .refund_id = refund_id}};
}

static int on_refund(void *context, const hf_stored_refund_t *refund)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "refund %s intent=%s hold=%s amount=%" PRId64 " %s %s at=%" PRId64,
                     refund->refund_id, refund->payment_intent_id,
                     or_dash(refund->reservation_id), refund->amount,
                     hf_refund_reason_name(refund->reason),
                     hf_refund_status_name(refund->status), refund->created_at_ms);
    if (refund->order_id) hf_buffer_printf(&line, " order=%s", refund->order_id);
    return record(context, &line);
}

static int on_delivery(void *context, const hf_stored_delivery_t *delivery)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "delivery %s %s %s reason=%s late=%d order=%s refund=%s at=%" PRId64,
                     delivery->payment_intent_id, hf_payment_type_name(delivery->type),
                     hf_payment_result_name(delivery->result),
                     delivery->result == HF_PAYMENT_REFUND_REQUIRED
                         ? hf_refund_reason_name(delivery->reason) : "-",
                     delivery->late, or_dash(delivery->order_id), or_dash(delivery->refund_id),
                     delivery->at_ms);
    return record(context, &line);
}

static void assert_payments_loaded(const fixture_t *fixture, int64_t since_ms,
                                   const char *const *expected, int count)
{
    hf_store_loader_t loader = {.refund = on_refund, .delivery = on_delivery,
                                .deliveries_since_ms = since_ms};
    assert_loaded(fixture, loader, expected, count);
}

/* Refunds and deliveries come back as written (a refund's later record changes only its
 * status); deliveries older than the loader's bound are skipped; a second delivery of the
 * same (intent, type) fails its batch, the table's UNIQUE behind the core's deduplication. */
static void test_payments_round_trip(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, delivery_record("pi_old", HF_PAYMENT_FAILED, HF_PAYMENT_RECORDED, 0, NULL,
                                  NULL, NOW_MS - 100));
    append(batch, delivery_record("pi_1", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_REFUND_REQUIRED,
                                  HF_REFUND_AMOUNT_MISMATCH, NULL, "ref_1", NOW_MS));
    append(batch, refund_record("ref_1", "pi_1", HF_REFUND_AMOUNT_MISMATCH, HF_REFUND_PENDING));
    append(batch, delivery_record("pi_2", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_COMMITTED, 0,
                                  "ord_2", NULL, NOW_MS + 1));
    append(batch, delivery_record("pi_2", HF_PAYMENT_FAILED, HF_PAYMENT_RECORDED, 0, NULL, NULL,
                                  NOW_MS + 2));
    append(batch, refund_record("ref_1", "pi_1", HF_REFUND_AMOUNT_MISMATCH,
                                HF_REFUND_COMPLETED));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, delivery_record("pi_2", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_RECORDED, 0, NULL,
                                  NULL, NOW_MS + 3));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "DELIVERY of pi_2 failed"));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_1 intent=pi_1 hold=res_1 amount=109800 amount_mismatch completed"
        " at=1795291199995",
        "delivery pi_1 payment.succeeded refund_required reason=amount_mismatch late=0"
        " order=- refund=ref_1 at=1795291200000",
        "delivery pi_2 payment.succeeded committed reason=- late=1 order=ord_2 refund=-"
        " at=1795291200001",
        "delivery pi_2 payment.failed recorded reason=- late=0 order=- refund=-"
        " at=1795291200002",
    };
    assert_payments_loaded(fixture, NOW_MS - 50, expected, 4);
}

/* A version 3 database (no payments, no history yet) gains their tables and version 5. */
static void test_version_3_is_migrated(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    execute(fixture, "DROP TABLE deliveries; DROP TABLE refunds; DROP TABLE history;"
                     "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    store = store_open_started(fixture);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"), 8);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, refund_record("ref_9", "pi_9", HF_REFUND_HOLD_NOT_FOUND, HF_REFUND_PENDING));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_9 intent=pi_9 hold=res_1 amount=109800 hold_not_found pending"
        " at=1795291199995"};
    assert_payments_loaded(fixture, 0, expected, 1);
}

/* Version 7 knew refunds of webhooks only: its refunds gain order_id and a reservation_id
 * that may be NULL, keeping every row and its order; a cancelled booking's refund (no hold)
 * is then written and read back with its order. */
static void test_version_7_is_migrated(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    execute(fixture, "DROP TABLE refunds;"
                     "CREATE TABLE refunds(seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
                     " payment_intent_id TEXT NOT NULL, reservation_id TEXT NOT NULL,"
                     " amount INTEGER NOT NULL, reason TEXT NOT NULL, status TEXT NOT NULL,"
                     " created_at INTEGER NOT NULL);"
                     "INSERT INTO refunds VALUES(5, 'ref_old', 'pi_old', 'res_old', 42,"
                     " 'hold_not_found', 'completed', 1000);"
                     "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
    store = store_open_started(fixture);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"), 8);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('refunds')"
                                            " WHERE name = 'order_id'"), 1);
    assert_int_equal(query_integer(fixture, "SELECT \"notnull\" FROM pragma_table_info("
                                            "'refunds') WHERE name = 'reservation_id'"), 0);
    assert_int_equal(query_integer(fixture, "SELECT seq FROM refunds WHERE id = 'ref_old'"), 5);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    hf_mutation_t cancelled = refund_record("ref_new", "pi_new", HF_REFUND_ORDER_CANCELLED,
                                            HF_REFUND_PENDING);
    cancelled.as.refund.reservation_id = NULL;
    cancelled.as.refund.order_id = "ord_7";
    append(batch, cancelled);
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_old intent=pi_old hold=res_old amount=42 hold_not_found completed at=1000",
        "refund ref_new intent=pi_new hold=- amount=109800 order_cancelled pending"
        " at=1795291199995 order=ord_7"};
    assert_payments_loaded(fixture, 0, expected, 2);
}

static hf_mutation_t event_sales(const char *event_id, bool open)
{
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_SALES, .at_ms = NOW_MS,
                           .as.event_sales = {event_id, open}};
}

/* What a load hands back of each event's sales: "id=0" or "id=1", in order. */
static int on_event_sales(void *context, const hf_stored_event_t *event)
{
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "%s=%d", event->definition->id, event->sales_open);
    return record(context, &line);
}

static void assert_sales_loaded(const fixture_t *fixture, const char *const *expected, int count)
{
    assert_loaded(fixture, (hf_store_loader_t){.event = on_event_sales}, expected, count);
}

/* The record closes or reopens the event's row (its id copied by the batch); a load hands the
 * state back; one for an event the table lacks fails the batch. */
static void test_sales_record_round_trips(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    char closed[] = "e1";
    append(batch, event_create("e1", NOW_MS));
    append(batch, event_create("e2", NOW_MS));
    append(batch, event_create("e3", NOW_MS));
    append(batch, event_sales(closed, false));
    scribble(closed);
    append(batch, event_sales("e2", false));
    append(batch, event_sales("e2", true));
    assert_true(submit_and_wait(store, batch, 1, error));
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e1'"), 0);
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e2'"), 1);
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e3'"), 1);
    append(batch, event_sales("nope", false));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "EVENT_SALES of nope failed"));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {"e1=0", "e2=1", "e3=1"};
    assert_sales_loaded(fixture, expected, 3);
}

/* A version 2 database (events without sales_open, no history) opens as the current version
 * (4: test_history.c checks the history's part), its events open, and closing one is written
 * and read back. */
static void test_version_2_is_migrated(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("old", NOW_MS));
    append(batch, hold_create("res_1", "old", "u1", ITEMS(two_seats, 2, 0), 7, NOW_MS,
                              NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    execute(fixture, "ALTER TABLE events DROP COLUMN sales_open; DROP TABLE history;"
                     "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('events')"
                                            " WHERE name = 'sales_open'"), 0);

    static const char *const open[] = {"old=1"};
    assert_sales_loaded(fixture, open, 1);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"), 8);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 1);
    store = store_open_started(fixture);
    append(batch, event_sales("old", false));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const closed[] = {"old=0"};
    assert_sales_loaded(fixture, closed, 1);
}

static void list(hf_store_t *store, const hf_store_hold_query_t *query, transcript_t *transcript,
                 bool expect_found)
{
    char error[ERROR_SIZE] = "";
    hf_store_loader_t loader = {.hold = on_hold, .context = transcript};
    bool found = !expect_found;
    int rc = hf_store_list_holds(store, query, &loader, &found, error, sizeof error);
    if (rc != 0) fprintf(stderr, "list failed: %s\n", error);
    assert_int_equal(rc, 0);
    assert_int_equal(found, expect_found);
}

/* Only the ids of a transcript of holds, joined by spaces. */
static void assert_listed(const transcript_t *transcript, const char *expected)
{
    char ids[256] = "";
    for (int i = 0; i < transcript->count; i++) {
        char id[32];
        sscanf(transcript->lines[i], "hold id=%31s", id);
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", i ? " " : "", id);
    }
    assert_string_equal(ids, expected);
}

/* An event's holds, in creation order, after a hold, with a status filter, and stopped by the
 * callback; a range scan of the index holds_event. */
static void test_listing_holds(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, event_create("e2", NOW_MS));
    const char *events[] = {"e1", "e2", "e1", "e1", "e2", "e1"};
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "res_%d", i + 1);
        append(batch, hold_create(id, events[i], "u1", NO_ITEMS, 7, NOW_MS, NOW_MS + 1000));
    }
    append(batch, hold_update("res_3", HF_HOLD_RELEASED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_4", HF_HOLD_EXPIRED, NOW_MS + 1000, NULL));
    assert_true(submit_and_wait(store, batch, 1, error));

    transcript_t transcript = {0};
    hf_store_hold_query_t query = {"e1", NULL, 0};
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_1 res_3 res_4 res_6");
    assert_non_null(strstr(transcript.lines[1], "status=2"));
    transcript_free(&transcript);
    query.after_id = "res_3";
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_4 res_6");
    transcript_free(&transcript);
    query.statuses = (1u << HF_HOLD_HELD) | (1u << HF_HOLD_EXPIRED);
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_4 res_6");
    transcript_free(&transcript);
    query.after_id = NULL;
    query.statuses = 1u << HF_HOLD_RELEASED;
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_3");
    transcript_free(&transcript);
    /* Stopped by the callback after the second: not an error. */
    query.statuses = 0;
    transcript.stop_at = 2;
    transcript.stop_value = HF_STORE_LIST_STOP;
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_1 res_3");
    transcript_free(&transcript);
    transcript.stop_at = 0;
    /* A hold of another event, or none, is no place to resume from. */
    query.after_id = "res_2";
    list(store, &query, &transcript, false);
    query.after_id = "res_9";
    list(store, &query, &transcript, false);
    assert_int_equal(transcript.count, 0);
    hf_store_close(store);
    hf_batch_destroy(batch);

    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open_v2(fixture->path, &database, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database,
                                        "EXPLAIN QUERY PLAN SELECT id FROM holds WHERE"
                                        " event_id = 'e1' AND seq > 3 ORDER BY seq", -1,
                                        &statement, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
    const char *plan = (const char *)sqlite3_column_text(statement, 3);
    if (strstr(plan, "USING INDEX holds_event (event_id=? AND seq>?)") == NULL)
        fail_msg("the listing is no range scan: %s", plan);
    sqlite3_finalize(statement);
    sqlite3_close(database);
}

static void test_close_frees_a_result_never_taken(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    append(batch, event_create("e1", NOW_MS));
    hf_store_submit(store, batch, 1);
    /* Closed at once: the batch in flight is still written, and the store frees it
     * (AddressSanitizer reports a leak otherwise). */
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);

    /* A store never started closes too. */
    char error[ERROR_SIZE];
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
}

/* Waits for the done callback until the store reports sequence durable or a failed sync. */
static bool wait_durable(hf_store_t *store, uint64_t sequence, uint64_t *durable, char *error)
{
    for (;;) {
        pthread_mutex_lock(&waiter.mutex);
        int before = waiter.done_count;
        pthread_mutex_unlock(&waiter.mutex);
        bool ok = hf_store_durable(store, durable, error, ERROR_SIZE);
        if (!ok || *durable >= sequence) return ok;
        pthread_mutex_lock(&waiter.mutex);
        while (waiter.done_count == before) pthread_cond_wait(&waiter.changed, &waiter.mutex);
        pthread_mutex_unlock(&waiter.mutex);
    }
}

static void test_written_batches_become_durable_in_order(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE] = "";
    uint64_t durable = 0, last = 0;
    for (uint64_t sequence = 1; sequence <= 20; sequence++) {
        char id[32];
        snprintf(id, sizeof id, "e%llu", (unsigned long long)sequence);
        append(batch, event_create(id, NOW_MS));
        assert_true(submit_and_wait(store, batch, sequence, error));
        /* Written is not yet durable, but durable never moves back nor passes written. */
        assert_true(hf_store_durable(store, &durable, error, sizeof error));
        assert_true(durable >= last && durable <= sequence);
        last = durable;
    }
    assert_true(wait_durable(store, 20, &durable, error));
    assert_int_equal(durable, 20);
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 20);
    hf_batch_destroy(batch);
}

static void test_failed_sync_is_final(void **state)
{
    fixture_t *fixture = *state;
    setenv("HOLDFAST_FAULT_FAIL_SYNC", "1", 1);
    hf_store_t *store = store_open_started(fixture);
    unsetenv("HOLDFAST_FAULT_FAIL_SYNC");
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE] = "";
    append(batch, event_create("e1", NOW_MS));
    /* The commit itself succeeds: only the sync after it fails. */
    assert_true(submit_and_wait(store, batch, 1, error));
    uint64_t durable = 99;
    assert_false(wait_durable(store, 1, &durable, error));
    assert_int_equal(durable, 0);
    assert_non_null(strstr(error, "fdatasync"));
    /* Later batches are still written, and never reported durable. */
    append(batch, event_create("e2", NOW_MS));
    assert_true(submit_and_wait(store, batch, 2, error));
    assert_false(hf_store_durable(store, &durable, error, sizeof error));
    assert_int_equal(durable, 0);
    hf_store_close(store);
    hf_batch_destroy(batch);
}

/* ---- The syncer alone ---- */

static void count_notify(void *context)
{
    (*(int *)context)++;
}

static hf_syncer_t *syncer_open(const fixture_t *fixture, int *notified)
{
    char error[ERROR_SIZE] = "";
    /* Clears the injected faults an earlier test armed: without the variables, none. */
    assert_false(hf_store_fault_configure());
    hf_syncer_t *syncer = hf_syncer_open(fixture->path, count_notify, notified, error,
                                         sizeof error);
    assert_non_null(syncer);
    return syncer;
}

static uint64_t syncer_durable(hf_syncer_t *syncer)
{
    uint64_t durable = 99;
    char error[ERROR_SIZE] = "";
    assert_true(hf_syncer_durable(syncer, &durable, error, sizeof error));
    return durable;
}

/* A sync covers what was written before it started, and nothing is durable before a sync. A
 * second sync with nothing newly written is skipped (no fdatasync, no notify). */
static void test_syncer_covers_what_was_written_before_it(void **state)
{
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 3);
    assert_int_equal(syncer_durable(syncer), 0);
    hf_syncer_sync(syncer);
    assert_int_equal(syncer_durable(syncer), 3);
    assert_int_equal(notified, 1);
    hf_syncer_sync(syncer);
    assert_int_equal(notified, 1);
    hf_syncer_written(syncer, 5);
    assert_int_equal(syncer_durable(syncer), 3);
    hf_syncer_sync(syncer);
    assert_int_equal(syncer_durable(syncer), 5);
    assert_int_equal(notified, 2);
    hf_syncer_close(syncer);
}

typedef struct sync_later {
    hf_syncer_t *syncer;
} sync_later_t;

static void *sync_after_a_while(void *argument)
{
    sync_later_t *later = argument;
    usleep(20000);
    hf_syncer_sync(later->syncer);
    return NULL;
}

/* hf_syncer_wait returns once another thread's sync covers what is written: this is how a
 * worker whose write failed waits for the syncs of the batches before it. */
static void test_syncer_wait_is_served_by_another_thread(void **state)
{
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 7);
    sync_later_t later = {syncer};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, sync_after_a_while, &later), 0);
    hf_syncer_wait(syncer);
    assert_int_equal(syncer_durable(syncer), 7);
    pthread_join(thread, NULL);
    hf_syncer_close(syncer);
}

static void count_notify_atomic(void *context)
{
    atomic_fetch_add((atomic_int *)context, 1);
}

/* With its threads started the syncer needs no one to call hf_syncer_sync: each written batch
 * becomes durable by itself and is notified, and close joins the threads with nothing lost. */
static void test_syncer_threads_sync_what_is_written(void **state)
{
    const fixture_t *fixture = *state;
    char error[ERROR_SIZE] = "";
    assert_false(hf_store_fault_configure());
    atomic_int notified = 0;
    hf_syncer_t *syncer = hf_syncer_open(fixture->path, count_notify_atomic, &notified, error,
                                         sizeof error);
    assert_non_null(syncer);
    assert_int_equal(hf_syncer_start(syncer, 2, error, sizeof error), 0);
    for (uint64_t sequence = 1; sequence <= 50; sequence++) {
        hf_syncer_written(syncer, sequence);
        if (sequence % 10 == 0) {
            hf_syncer_wait(syncer);
            assert_int_equal(syncer_durable(syncer), sequence);
        }
    }
    hf_syncer_written(syncer, 51);
    hf_syncer_close(syncer); /* joins the threads, then syncs 51 itself if none took it */
    /* A sync may cover several batches, but each wait needed at least one. */
    int count = atomic_load(&notified);
    assert_true(count >= 5 && count <= 51);
}

/* After a failure recorded from elsewhere (SQLite's own sync), syncs do nothing and the
 * durable sequence stays where it was; waiting returns at once. */
static void test_syncer_failure_stops_everything(void **state)
{
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 1);
    hf_syncer_sync(syncer);
    hf_syncer_written(syncer, 2);
    hf_syncer_fail(syncer, "store: injected");
    hf_syncer_sync(syncer);
    hf_syncer_wait(syncer);
    uint64_t durable = 99;
    char error[ERROR_SIZE] = "";
    assert_false(hf_syncer_durable(syncer, &durable, error, sizeof error));
    assert_int_equal(durable, 1);
    assert_string_equal(error, "store: injected");
    assert_int_equal(notified, 1);
    hf_syncer_close(syncer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_deep_copy),
        cmocka_unit_test(test_batch_clear_reuses_memory),
        cmocka_unit_test(test_batch_sink),
#define STORE_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
        STORE_TEST(test_open_creates_schema_in_wal_mode),
        STORE_TEST(test_open_rejects_what_it_cannot_serve),
        STORE_TEST(test_every_mutation_round_trips),
        STORE_TEST(test_seat_state_reads_the_written_items),
        STORE_TEST(test_hold_update_keeps_order_id_when_absent),
        STORE_TEST(test_second_sale_of_a_seat_fails_the_whole_batch),
        STORE_TEST(test_cancelled_seat_can_be_sold_again),
        STORE_TEST(test_failures_roll_back_and_the_store_goes_on),
        STORE_TEST(test_missing_table_fails_the_batch),
        STORE_TEST(test_old_idempotency_keys_are_not_loaded_then_purged),
        STORE_TEST(test_loader_callback_stops_the_load),
        STORE_TEST(test_finished_count_and_reading_one_hold),
        STORE_TEST(test_sales_record_round_trips),
        STORE_TEST(test_version_2_is_migrated),
        STORE_TEST(test_payments_round_trip),
        STORE_TEST(test_version_3_is_migrated),
        STORE_TEST(test_version_7_is_migrated),
        STORE_TEST(test_listing_holds),
        STORE_TEST(test_close_frees_a_result_never_taken),
        STORE_TEST(test_written_batches_become_durable_in_order),
        STORE_TEST(test_failed_sync_is_final),
        STORE_TEST(test_syncer_covers_what_was_written_before_it),
        STORE_TEST(test_syncer_wait_is_served_by_another_thread),
        STORE_TEST(test_syncer_failure_stops_everything),
        STORE_TEST(test_syncer_threads_sync_what_is_written),
        STORE_TEST(test_dispatch_round_trip),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
