/* Unit tests of store/: the batch's deep copies and memory reuse, and the SQLite store end to
 * end: every mutation written by the store's workers, read back after a reopen, in the loader's
 * order; the unique index as the last arbiter; failures rolled back whole. Each test works in
 * its own temporary directory. */
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
#include "store/store.h"
#include "store/fault.h"
#include "store/sqlite/sync.h"

/* 2026-11-21T20:00:00Z: a plausible "now" far from the epoch, so purge cut-offs are real. */
#define NOW_MS 1795291200000LL
#define ERROR_SIZE 512

static uint8_t test_hash[32];

/* ---- Fixture: a temporary directory and the store URL inside it ---- */

typedef struct fixture {
    char directory[64];
    char path[128];
    char url[160];
} fixture_t;

static int fixture_setup(void **state)
{
    fixture_t *fixture = calloc(1, sizeof *fixture);
    snprintf(fixture->directory, sizeof fixture->directory, "/tmp/holdfast-store-XXXXXX");
    if (mkdtemp(fixture->directory) == NULL) return -1;
    snprintf(fixture->path, sizeof fixture->path, "%s/holdfast.db", fixture->directory);
    snprintf(fixture->url, sizeof fixture->url, "sqlite:%s", fixture->path);
    for (int i = 0; i < 32; i++) test_hash[i] = (uint8_t)(i * 7 + 1);
    *state = fixture;
    return 0;
}

static int fixture_teardown(void **state)
{
    fixture_t *fixture = *state;
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    char file[200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(file, sizeof file, "%s%s", fixture->path, suffixes[i]);
        unlink(file);
    }
    rmdir(fixture->directory);
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

/* ---- Mutation builders ---- */

static hf_mutation_t event_create(const char *event_id, const char *config, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_CREATE, .event_id = event_id,
                           .text = config, .at_ms = at_ms};
}

static hf_mutation_t seat_change(const char *event_id, const char *seat_id, int status,
                                 uint32_t version)
{
    return (hf_mutation_t){.type = HF_MUTATION_SEAT, .event_id = event_id, .seat_id = seat_id,
                           .status = status, .version = version, .at_ms = NOW_MS};
}

static hf_mutation_t hold_create(const char *hold_id, const char *event_id, const char *user_id,
                                 const char *items, int64_t total, int64_t at_ms,
                                 int64_t expires_at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_CREATE, .hold_id = hold_id,
                           .event_id = event_id, .user_id = user_id, .text = items,
                           .total = total, .at_ms = at_ms, .expires_at_ms = expires_at_ms,
                           .status = HF_HOLD_HELD};
}

static hf_mutation_t hold_update(const char *hold_id, int status, int64_t expires_at_ms,
                                 const char *order_id)
{
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_UPDATE, .hold_id = hold_id,
                           .status = status, .expires_at_ms = expires_at_ms,
                           .order_id = order_id, .at_ms = NOW_MS};
}

static hf_mutation_t order_create(const char *order_id, const char *event_id,
                                  const char *user_id, const char *hold_id, const char *items,
                                  int64_t total, const char *payment_ref, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_CREATE, .order_id = order_id,
                           .event_id = event_id, .user_id = user_id, .hold_id = hold_id,
                           .text = items, .total = total, .currency = "USD",
                           .payment_ref = payment_ref, .at_ms = at_ms,
                           .status = HF_ORDER_CONFIRMED};
}

static hf_mutation_t order_seat(const char *order_id, const char *event_id, const char *seat_id)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM, .order_id = order_id,
                           .event_id = event_id, .seat_id = seat_id, .quantity = 1,
                           .at_ms = NOW_MS};
}

static hf_mutation_t order_pool(const char *order_id, const char *event_id, const char *pool_id,
                                uint32_t quantity)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_ITEM, .order_id = order_id,
                           .event_id = event_id, .pool_id = pool_id, .quantity = quantity,
                           .at_ms = NOW_MS};
}

static hf_mutation_t order_update(const char *order_id, int status)
{
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_UPDATE, .order_id = order_id,
                           .status = status, .at_ms = NOW_MS};
}

static hf_mutation_t idempotency(const char *key, const char *body, int status, int64_t at_ms)
{
    return (hf_mutation_t){.type = HF_MUTATION_IDEMPOTENCY, .key = key, .text = body,
                           .status = status, .hash = test_hash, .at_ms = at_ms};
}

static void append(hf_batch_t *batch, hf_mutation_t mutation)
{
    hf_batch_append(batch, &mutation);
}

/* ---- Loading into a transcript: one line per callback, every field written out ---- */

#define TRANSCRIPT_LINES_MAX 64

typedef struct transcript {
    char *lines[TRANSCRIPT_LINES_MAX];
    int count;
    int stop_at;       /* the callback number (from 1) that answers stop_value; 0 never */
    int stop_value;
    uint64_t finished; /* what the finished_holds callback was told */
} transcript_t;

static const char *or_dash(const char *text) { return text != NULL ? text : "-"; }

static int record(transcript_t *transcript, const char *kind, const hf_stored_row_t *row)
{
    char line[1024];
    const char *hash = row->hash == NULL ? "none"
                       : memcmp(row->hash, test_hash, 32) == 0 ? "ok" : "bad";
    snprintf(line, sizeof line,
             "%s event=%s seat=%s hold=%s order=%s user=%s key=%s text=%s currency=%s ref=%s"
             " at=%" PRId64 " expires=%" PRId64 " total=%" PRId64 " version=%" PRIu32
             " status=%d hash=%s",
             kind, or_dash(row->event_id), or_dash(row->seat_id), or_dash(row->hold_id),
             or_dash(row->order_id), or_dash(row->user_id), or_dash(row->key),
             or_dash(row->text), or_dash(row->currency), or_dash(row->payment_ref), row->at_ms,
             row->expires_at_ms, row->total, row->version, row->status, hash);
    assert_true(transcript->count < TRANSCRIPT_LINES_MAX);
    transcript->lines[transcript->count++] = strdup(line);
    return transcript->count == transcript->stop_at ? transcript->stop_value : 0;
}

static int on_event(void *c, const hf_stored_row_t *row) { return record(c, "event", row); }
static int on_hold(void *c, const hf_stored_row_t *row) { return record(c, "hold", row); }
static int on_order(void *c, const hf_stored_row_t *row) { return record(c, "order", row); }
static int on_key(void *c, const hf_stored_row_t *row) { return record(c, "key", row); }

static void transcript_free(transcript_t *transcript)
{
    for (int i = 0; i < transcript->count; i++) free(transcript->lines[i]);
    transcript->count = 0;
}

/* Reopens the store (a restart) and loads everything into the transcript. */
static void reload(const fixture_t *fixture, int64_t keep_since_ms, transcript_t *transcript)
{
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_loader_t loader = {on_event, on_hold, on_order, on_key, keep_since_ms, transcript, NULL};
    int rc = hf_store_load(store, &loader, error, sizeof error);
    if (rc != 0) fprintf(stderr, "load failed: %s\n", error);
    assert_int_equal(rc, 0);
    hf_store_close(store);
}

static void assert_transcript(const transcript_t *transcript, const char *const *expected,
                              int count)
{
    for (int i = 0; i < transcript->count && i < count; i++)
        assert_string_equal(transcript->lines[i], expected[i]);
    assert_int_equal(transcript->count, count);
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

static void test_batch_deep_copy(void **state)
{
    (void)state;
    char event_id[] = "eras_n1", seat_id[] = "FLOOR-A-1", pool_id[] = "GA";
    char hold_id[] = "res_1", order_id[] = "ord_1", user_id[] = "u1", currency[] = "USD";
    char payment_ref[] = "pi_1", key[] = "POST /v1/events k1", text[] = "{\"a\":1}";
    uint8_t hash[32];
    memcpy(hash, test_hash, sizeof hash);
    hf_mutation_t source = {
        .type = HF_MUTATION_ORDER_CREATE, .at_ms = 42, .event_id = event_id,
        .seat_id = seat_id, .pool_id = pool_id, .hold_id = hold_id, .order_id = order_id,
        .user_id = user_id, .currency = currency, .payment_ref = payment_ref, .key = key,
        .text = text, .hash = hash, .total = 900, .expires_at_ms = 77, .version = 3,
        .quantity = 2, .status = 1};
    hf_batch_t *batch = hf_batch_create();
    hf_batch_append(batch, &source);

    /* Scribble over every source buffer: the batch must not see it. */
    char *sources[] = {event_id, seat_id, pool_id, hold_id, order_id, user_id, currency,
                       payment_ref, key, text};
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        memset(sources[i], 'Z', strlen(sources[i]));
    memset(hash, 0, sizeof hash);

    assert_int_equal(hf_batch_count(batch), 1);
    const hf_mutation_t *copy = hf_batch_at(batch, 0);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_CREATE);
    assert_string_equal(copy->event_id, "eras_n1");
    assert_string_equal(copy->seat_id, "FLOOR-A-1");
    assert_string_equal(copy->pool_id, "GA");
    assert_string_equal(copy->hold_id, "res_1");
    assert_string_equal(copy->order_id, "ord_1");
    assert_string_equal(copy->user_id, "u1");
    assert_string_equal(copy->currency, "USD");
    assert_string_equal(copy->payment_ref, "pi_1");
    assert_string_equal(copy->key, "POST /v1/events k1");
    assert_string_equal(copy->text, "{\"a\":1}");
    assert_memory_equal(copy->hash, test_hash, 32);
    assert_ptr_not_equal(copy->hash, hash);
    assert_int_equal(copy->at_ms, 42);
    assert_int_equal(copy->total, 900);
    assert_int_equal(copy->expires_at_ms, 77);
    assert_int_equal(copy->version, 3);
    assert_int_equal(copy->quantity, 2);
    assert_int_equal(copy->status, 1);

    /* Absent strings stay absent. */
    hf_mutation_t sparse = {.type = HF_MUTATION_ORDER_UPDATE, .order_id = "ord_2"};
    hf_batch_append(batch, &sparse);
    const hf_mutation_t *second = hf_batch_at(batch, 1);
    assert_string_equal(second->order_id, "ord_2");
    assert_null(second->event_id);
    assert_null(second->seat_id);
    assert_null(second->text);
    assert_null(second->hash);
    hf_batch_destroy(batch);
}

static void test_batch_clear_reuses_memory(void **state)
{
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    /* Enough records and one large text to need several chunks and array growth. */
    size_t big_size = 300 * 1024;
    char *big = malloc(big_size + 1);
    memset(big, 'b', big_size);
    big[big_size] = '\0';
    char id[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            hf_mutation_t m = seat_change("e1", id, HF_SEAT_HELD, (uint32_t)i);
            if (i == 2500) m.text = big;
            hf_batch_append(batch, &m);
        }
        assert_int_equal(hf_batch_count(batch), 5000);
        for (int i = 0; i < 5000; i += 499) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            assert_string_equal(hf_batch_at(batch, (size_t)i)->seat_id, id);
            assert_int_equal(hf_batch_at(batch, (size_t)i)->version, i);
        }
        assert_int_equal(strlen(hf_batch_at(batch, 2500)->text), big_size);
        assert_null(hf_batch_at(batch, 2499)->text);
        hf_batch_clear(batch);
        assert_int_equal(hf_batch_count(batch), 0);
    }
    /* After a clear the first string lands where the first string of the last round did:
     * the memory is rewound, not given back and asked for again. */
    hf_mutation_t first = seat_change("e1", "A", HF_SEAT_HELD, 1);
    hf_batch_append(batch, &first);
    const char *place = hf_batch_at(batch, 0)->event_id;
    hf_batch_clear(batch);
    hf_batch_append(batch, &first);
    assert_ptr_equal(hf_batch_at(batch, 0)->event_id, place);
    assert_string_equal(hf_batch_at(batch, 0)->seat_id, "A");
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
    assert_string_equal(hf_batch_at(batch, 0)->order_id, "ord_9");
    assert_int_equal(hf_batch_at(batch, 0)->status, HF_ORDER_CANCELLED);
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
                                            " 'orders', 'order_items', 'idempotency', 'meta')"),
                     6);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'view' AND name = 'seat_state'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'index' AND name = 'order_items_one_sale'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
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

    assert_int_not_equal(hf_store_open(&store, "postgres://db/holdfast", error, sizeof error), 0);
    assert_null(store);
    assert_non_null(strstr(error, "PostgreSQL store is not available yet"));

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
    execute(fixture, "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    assert_non_null(strstr(error, "schema version \"3\""));
}

/* ---- Round trip of every mutation type ---- */

static void test_every_mutation_round_trips(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    const int64_t t = NOW_MS;

    append(batch, event_create("e1", "{\"id\":\"e1\"}", t));
    append(batch, event_create("e0", "{\"id\":\"e0\"}", t + 1));
    append(batch, hold_create("res_b", "e1", "u1", "{\"seats\":[\"F-A-1\"]}", 100, t + 2,
                              t + 600000));
    append(batch, hold_create("res_a", "e1", "u2", "{\"pools\":{\"GA\":2}}", 50, t + 3,
                              t + 600000));
    append(batch, seat_change("e1", "F-A-2", HF_SEAT_HELD, 2));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_HELD, 2));
    append(batch, idempotency("POST /v1/events k1", "{\"id\":\"e1\"}", 201, t));
    assert_true(submit_and_wait(store, batch, 1, error));
    assert_string_equal(error, "");

    /* The second batch changes rows the first one wrote. */
    append(batch, hold_update("res_b", HF_HOLD_CONFIRMED, t + 600000, "ord_1"));
    append(batch, order_create("ord_1", "e1", "u1", "res_b", "{\"seats\":[\"F-A-1\"]}", 100,
                               "pi_1", t + 10));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_SOLD, 3));
    append(batch, hold_update("res_a", HF_HOLD_HELD, t + 900000, NULL));
    append(batch, hold_update("res_a", HF_HOLD_RELEASED, t + 20, NULL));
    append(batch, order_create("ord_0", "e1", "u2", NULL, "{\"pools\":{\"GA\":3}}", 30, NULL,
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
    hf_store_close(store);
    hf_batch_destroy(batch);

    transcript_t transcript = {0};
    reload(fixture, t - HF_IDEMPOTENCY_KEEP_MS, &transcript);
    const char *const expected[] = {
        "event event=e1 seat=- hold=- order=- user=- key=- text={\"id\":\"e1\"} currency=-"
        " ref=- at=1795291200000 expires=0 total=0 version=0 status=0 hash=none",
        "event event=e0 seat=- hold=- order=- user=- key=- text={\"id\":\"e0\"} currency=-"
        " ref=- at=1795291200001 expires=0 total=0 version=0 status=0 hash=none",
        "hold event=e1 seat=- hold=res_b order=ord_1 user=u1 key=- text={\"seats\":[\"F-A-1\"]}"
        " currency=- ref=- at=1795291200002 expires=1795291800000 total=100 version=0 status=1"
        " hash=none",
        "hold event=e1 seat=- hold=res_a order=- user=u2 key=- text={\"pools\":{\"GA\":2}}"
        " currency=- ref=- at=1795291200003 expires=1795291200020 total=50 version=0 status=2"
        " hash=none",
        "order event=e1 seat=- hold=res_b order=ord_1 user=u1 key=- text={\"seats\":[\"F-A-1\"]}"
        " currency=USD ref=pi_1 at=1795291200010 expires=0 total=100 version=0 status=0"
        " hash=none",
        "order event=e1 seat=- hold=- order=ord_0 user=u2 key=- text={\"pools\":{\"GA\":3}}"
        " currency=USD ref=- at=1795291200030 expires=0 total=30 version=0 status=1 hash=none",
        "key event=- seat=- hold=- order=- user=- key=POST /v1/events k1 text={\"id\":\"e1\"}"
        " currency=- ref=- at=1795291200000 expires=0 total=0 version=0 status=201 hash=ok",
    };
    assert_transcript(&transcript, expected, 7);
    transcript_free(&transcript);

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

static void test_hold_update_keeps_order_id_when_absent(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", "{}", 0, NOW_MS, NOW_MS + 1000));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, "{}", 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    /* Everything in the failing batch, before and after the offending line, must vanish. */
    append(batch, hold_create("res_x", "e1", "u2", "{}", 0, NOW_MS, NOW_MS + 1000));
    append(batch, order_create("ord_2", "e1", "u2", NULL, "{}", 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    append(batch, idempotency("POST /v1/events/e1/bookings k2", "{}", 201, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_ITEM of F-A-1 failed"));
    assert_non_null(strstr(error, "UNIQUE constraint failed"));

    /* The same seat in another event is another seat. */
    append(batch, event_create("e2", "{}", NOW_MS));
    append(batch, order_create("ord_3", "e2", "u2", NULL, "{}", 10, "pi_3", NOW_MS + 2));
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
    assert_non_null(strstr(transcript.lines[0], "event event=e1 "));
    assert_non_null(strstr(transcript.lines[1], "event event=e2 "));
    assert_non_null(strstr(transcript.lines[2], "order event=e1 seat=- hold=- order=ord_1 "));
    assert_non_null(strstr(transcript.lines[3], "order event=e2 seat=- hold=- order=ord_3 "));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, "{}", 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, order_update("ord_1", HF_ORDER_CANCELLED));
    assert_true(submit_and_wait(store, batch, 2, error));
    append(batch, order_create("ord_2", "e1", "u2", NULL, "{}", 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 3, error));
    assert_string_equal(error, "");

    /* Cancel and resale in one batch work as well: statements run in record order. */
    append(batch, order_update("ord_2", HF_ORDER_CANCELLED));
    append(batch, order_create("ord_3", "e1", "u3", NULL, "{}", 10, "pi_3", NOW_MS + 2));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, hold_update("res_missing", HF_HOLD_RELEASED, NOW_MS, NULL));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_missing failed: no such row to update"));

    append(batch, order_update("ord_missing", HF_ORDER_CANCELLED));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_UPDATE of ord_missing failed"));

    /* A status the tables have no word for. */
    append(batch, hold_create("res_odd", "e1", "u1", "{}", 0, NOW_MS, NOW_MS + 1));
    hf_mutation_t odd = hold_update("res_odd", 9, NOW_MS, NULL);
    hf_batch_append(batch, &odd);
    assert_false(submit_and_wait(store, batch, 3, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_odd failed: NOT NULL constraint failed:"
                                  " holds.status"));

    /* An idempotency record without its request hash. */
    hf_mutation_t key = idempotency("k", "{}", 201, NOW_MS);
    key.hash = NULL;
    hf_batch_append(batch, &key);
    assert_false(submit_and_wait(store, batch, 4, error));
    assert_non_null(strstr(error, "IDEMPOTENCY of k failed"));

    /* A duplicate event id. */
    append(batch, event_create("e1", "{}", NOW_MS));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, event_create("e1", "{}", NOW_MS));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", "{}", 0, NOW_MS, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_CREATE of res_1 failed: no such table: holds"));

    append(batch, event_create("e1", "{}", NOW_MS));
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
    assert_non_null(strstr(transcript.lines[0], "key=edge text={\"n\":2}"));
    assert_non_null(strstr(transcript.lines[0], "status=200 hash=ok"));
    assert_non_null(strstr(transcript.lines[1], "key=new text={\"n\":3}"));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", "{}", 0, NOW_MS, NOW_MS + 1));
    append(batch, hold_create("res_2", "e1", "u1", "{}", 0, NOW_MS, NOW_MS + 1));
    append(batch, order_create("ord_1", "e1", "u1", NULL, "{}", 0, NULL, NOW_MS));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript_t transcript = {.stop_at = 2, .stop_value = -7};
    hf_store_loader_t loader = {on_event, on_hold, on_order, on_key, 0, &transcript, NULL};
    error[0] = '\0';
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), -7);
    assert_non_null(strstr(error, "loading holds stopped at res_1"));
    /* Nothing after the refusing row: not the second hold, not the order. */
    assert_int_equal(transcript.count, 2);
    transcript_free(&transcript);

    /* Callbacks left NULL skip their table. */
    hf_store_loader_t orders_only = {NULL, NULL, on_order, NULL, 0, &transcript, NULL};
    assert_int_equal(hf_store_load(store, &orders_only, error, sizeof error), 0);
    assert_int_equal(transcript.count, 1);
    assert_non_null(strstr(transcript.lines[0], "order=ord_1"));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "res_%d", i);
        append(batch, hold_create(id, "e1", "u1", "{\"seats\":[],\"pools\":{}}", 7, NOW_MS,
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
    assert_non_null(strstr(transcript.lines[0], "hold=res_2"));
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
                                on_finished_count};
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), 0);
    assert_int_equal(transcript.finished, 2);
    transcript_free(&transcript);
    hf_store_close(store);
}

static void test_close_frees_a_result_never_taken(void **state)
{
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    append(batch, event_create("e1", "{}", NOW_MS));
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
        append(batch, event_create(id, "{}", NOW_MS));
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
    append(batch, event_create("e1", "{}", NOW_MS));
    /* The commit itself succeeds: only the sync after it fails. */
    assert_true(submit_and_wait(store, batch, 1, error));
    uint64_t durable = 99;
    assert_false(wait_durable(store, 1, &durable, error));
    assert_int_equal(durable, 0);
    assert_non_null(strstr(error, "fdatasync"));
    /* Later batches are still written, and never reported durable. */
    append(batch, event_create("e2", "{}", NOW_MS));
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
        STORE_TEST(test_hold_update_keeps_order_id_when_absent),
        STORE_TEST(test_second_sale_of_a_seat_fails_the_whole_batch),
        STORE_TEST(test_cancelled_seat_can_be_sold_again),
        STORE_TEST(test_failures_roll_back_and_the_store_goes_on),
        STORE_TEST(test_missing_table_fails_the_batch),
        STORE_TEST(test_old_idempotency_keys_are_not_loaded_then_purged),
        STORE_TEST(test_loader_callback_stops_the_load),
        STORE_TEST(test_finished_count_and_reading_one_hold),
        STORE_TEST(test_close_frees_a_result_never_taken),
        STORE_TEST(test_written_batches_become_durable_in_order),
        STORE_TEST(test_failed_sync_is_final),
        STORE_TEST(test_syncer_covers_what_was_written_before_it),
        STORE_TEST(test_syncer_wait_is_served_by_another_thread),
        STORE_TEST(test_syncer_failure_stops_everything),
        STORE_TEST(test_syncer_threads_sync_what_is_written),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
