/* The SQLite store: plain tables an operator can query with sqlite3, written in group commits.
 * Each batch the engine submits becomes one transaction. Loading runs with synchronous=FULL;
 * once the writer starts, COMMIT only writes the log (synchronous=NORMAL), and the syncer's
 * threads make the log durable with fdatasync (sync.h) while the writer goes on with the next
 * batch. A batch counts as durable only when a sync that started after its COMMIT has
 * finished. The UNIQUE index on order_items stands behind the engine: a seat is in
 * at most one active order of an event, whatever a bug upstream may try.
 *
 * One transaction per batch, whatever its size: splitting a batch would let an early part
 * commit while a later part fails, and the engine could not tell its clients which of their
 * changes are durable. The size of a batch is bounded by the engine
 * (HF_STORE_BATCH_MUTATIONS_MAX), not here.
 *
 * Threads: the connection is used by the caller of hf_store_open and hf_store_load until
 * hf_store_start, then by the writer thread (hf-store) alone: the engine submits a batch only
 * after taking the last one back, so batches are written one at a time, in order. Everything
 * the engine thread and the writer share sits under mutex. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/core.h"
#include "core/limits.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "store/sqlite/checkpoint.h"
#include "store/fault.h"
#include "store/store.h"
#include "store/sqlite/sync.h"
#include "store/sqlite/vfs.h"

#define SCHEMA_VERSION "2"
#define ERROR_SIZE 512
#define HASH_SIZE 32
/* How long a writer waits for a lock held by another connection (an operator's sqlite3 shell
 * reading, say) before the batch fails. */
#define BUSY_TIMEOUT_MS 5000
/* Old idempotency keys are deleted once every this many batches: often enough that the table
 * stays near one day of keys, rarely enough that the indexed delete costs nothing per batch. */
#define PURGE_EVERY_BATCHES 1000u

static const char SCHEMA[] =
    "BEGIN;"
    "CREATE TABLE IF NOT EXISTS meta("
    "  key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS events("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
    "  config TEXT NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS holds("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,"
    "  user_id TEXT NOT NULL, status TEXT NOT NULL, items TEXT NOT NULL,"
    "  total INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,"
    "  order_id TEXT);"
    "CREATE TABLE IF NOT EXISTS orders("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,"
    "  user_id TEXT NOT NULL, reservation_id TEXT UNIQUE, status TEXT NOT NULL,"
    "  items TEXT NOT NULL, total INTEGER NOT NULL, currency TEXT, payment_ref TEXT,"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS order_items("
    "  order_id TEXT NOT NULL, event_id TEXT NOT NULL, seat_id TEXT, pool_id TEXT,"
    "  quantity INTEGER NOT NULL, active INTEGER NOT NULL DEFAULT 1);"
    "CREATE INDEX IF NOT EXISTS order_items_order ON order_items(order_id);"
    "CREATE UNIQUE INDEX IF NOT EXISTS order_items_one_sale ON order_items(event_id, seat_id)"
    "  WHERE active = 1 AND seat_id IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS idempotency("
    "  key TEXT PRIMARY KEY, hash BLOB NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS idempotency_created_at ON idempotency(created_at);"
    /* Seat state is derived, not stored: writing a row per seat change cost a random page per
     * change. Seats that are neither sold nor held are available. */
    "CREATE VIEW IF NOT EXISTS seat_state AS"
    "  SELECT event_id, seat_id, 'sold' AS status, order_id AS owner FROM order_items"
    "    WHERE active = 1 AND seat_id IS NOT NULL"
    "  UNION ALL"
    "  SELECT holds.event_id, seat.value, 'held', holds.id"
    "    FROM holds, json_each(holds.items, '$.seats') AS seat WHERE holds.status = 'held';"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '" SCHEMA_VERSION "');"
    "COMMIT;";

/* ---- Status words: the only place where the core's numbers meet the tables' words ---- */

typedef struct status_words {
    const char *const *words;
    int count;
} status_words_t;

static const char *const HOLD_WORDS[] = {
    [HF_HOLD_HELD] = "held", [HF_HOLD_CONFIRMED] = "confirmed",
    [HF_HOLD_RELEASED] = "released", [HF_HOLD_EXPIRED] = "expired"};
static const char *const ORDER_WORDS[] = {
    [HF_ORDER_CONFIRMED] = "confirmed", [HF_ORDER_CANCELLED] = "cancelled"};

static const status_words_t HOLD_STATUS = {HOLD_WORDS, 4};
static const status_words_t ORDER_STATUS = {ORDER_WORDS, 2};

/* NULL for a number out of range: bound as SQL NULL, the NOT NULL constraint then fails the
 * batch with a message naming the column. */
static const char *status_word(const status_words_t *kind, int status) {
    return status >= 0 && status < kind->count ? kind->words[status] : NULL;
}

/* -1 for a word this server does not know. */
static int status_number(const status_words_t *kind, const char *word) {
    for (int i = 0; word != NULL && i < kind->count; i++)
        if (strcmp(kind->words[i], word) == 0) return i;
    return -1;
}

/* ---- Prepared statements ---- */

typedef enum statement_id {
    STATEMENT_BEGIN,
    STATEMENT_COMMIT,
    STATEMENT_ROLLBACK,
    STATEMENT_PURGE,
    STATEMENT_EVENT_INSERT,
    STATEMENT_HOLD_INSERT,
    STATEMENT_HOLD_UPDATE,
    STATEMENT_ORDER_INSERT,
    STATEMENT_ORDER_ITEM_INSERT,
    STATEMENT_ORDER_UPDATE,
    STATEMENT_ORDER_ITEMS_DEACTIVATE,
    STATEMENT_IDEMPOTENCY_PUT,
    STATEMENT_COUNT
} statement_id_t;

static const char *const STATEMENT_SQL[STATEMENT_COUNT] = {
    [STATEMENT_BEGIN] = "BEGIN IMMEDIATE",
    [STATEMENT_COMMIT] = "COMMIT",
    [STATEMENT_ROLLBACK] = "ROLLBACK",
    [STATEMENT_PURGE] = "DELETE FROM idempotency WHERE created_at < ?1",
    [STATEMENT_EVENT_INSERT] = "INSERT INTO events(id, config, created_at) VALUES(?1, ?2, ?3)",
    [STATEMENT_HOLD_INSERT] =
        "INSERT INTO holds(id, event_id, user_id, status, items, total, created_at,"
        " expires_at, order_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [STATEMENT_HOLD_UPDATE] =
        "UPDATE holds SET status = ?2, expires_at = ?3, order_id = COALESCE(?4, order_id)"
        " WHERE id = ?1",
    [STATEMENT_ORDER_INSERT] =
        "INSERT INTO orders(id, event_id, user_id, reservation_id, status, items, total,"
        " currency, payment_ref, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [STATEMENT_ORDER_ITEM_INSERT] =
        "INSERT INTO order_items(order_id, event_id, seat_id, pool_id, quantity)"
        " VALUES(?1, ?2, ?3, ?4, ?5)",
    [STATEMENT_ORDER_UPDATE] = "UPDATE orders SET status = ?2 WHERE id = ?1",
    [STATEMENT_ORDER_ITEMS_DEACTIVATE] = "UPDATE order_items SET active = 0 WHERE order_id = ?1",
    [STATEMENT_IDEMPOTENCY_PUT] =
        "INSERT OR REPLACE INTO idempotency(key, hash, status, body, created_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5)",
};

struct hf_store {
    sqlite3 *database;
    sqlite3_stmt *statements[STATEMENT_COUNT];
    /* A read-only connection of the engine thread's own, opened at its first lookup of a
     * hold the core has forgotten (hf_store_read_hold): the writer owns the main one. */
    sqlite3 *reader;
    sqlite3_stmt *read_hold;
    uint64_t batches_since_purge;    /* the writer only */
    uint64_t batches_begun;          /* the writer only */
    bool failed_in_sync;             /* the writer only: the last failure was an fsync */
    uint64_t fail_batch;             /* fault seam for tests: this batch fails (0: none) */

    pthread_t writer;
    bool writer_running;
    bool started;
    hf_checkpointer_t *checkpointer; /* started with the writer */
    hf_syncer_t *syncer;             /* started with the writer */
    hf_store_done_fn done;
    void *done_context;

    /* Shared between the engine thread and the writer: read and written under mutex. */
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    hf_batch_t *submitted;           /* waiting for the writer */
    hf_batch_t *writing;             /* taken by the writer, not yet finished */
    uint64_t submitted_sequence;
    hf_batch_t *finished;            /* written (or failed), waiting for take_result */
    uint64_t finished_sequence;
    bool finished_ok;
    char finished_error[ERROR_SIZE];
    bool stopping;
    hf_store_stats_t stats;

    bool holds_batch;                /* engine thread only: submitted and not yet taken back */
};

static void error_write(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void error_write(char *error, size_t error_size, const char *format, ...) {
    if (error == NULL || error_size == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, error_size, format, arguments);
    va_end(arguments);
}

/* ---- Opening ---- */

static int statements_prepare(hf_store_t *store, char *error, size_t error_size) {
    for (int i = 0; i < STATEMENT_COUNT; i++) {
        int rc = sqlite3_prepare_v3(store->database, STATEMENT_SQL[i], -1,
                                    SQLITE_PREPARE_PERSISTENT, &store->statements[i], NULL);
        if (rc != SQLITE_OK) {
            error_write(error, error_size, "store: cannot prepare \"%s\": %s", STATEMENT_SQL[i],
                        sqlite3_errmsg(store->database));
            return -1;
        }
    }
    return 0;
}

/* Runs one SQL text whose single row's first column is a word, and copies that word. */
static int query_word(sqlite3 *database, const char *sql, char *word, size_t word_size) {
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(database, sql, -1, &statement, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(statement, 0);
        snprintf(word, word_size, "%s", text != NULL ? (const char *)text : "");
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        snprintf(word, word_size, "%s", "");
        rc = SQLITE_OK;
    }
    sqlite3_finalize(statement);
    return rc;
}

/* WAL lets readers (an operator's shell, a backup) run during commits; synchronous=FULL
 * makes every COMMIT durable on its own, which "acknowledged means durable" requires. */
static int database_configure(sqlite3 *database, const char *path, char *error,
                              size_t error_size) {
    char word[32];
    sqlite3_busy_timeout(database, BUSY_TIMEOUT_MS);
    if (query_word(database, "PRAGMA journal_mode=WAL", word, sizeof word) != SQLITE_OK)
        goto fail;
    if (strcmp(word, "wal") != 0) {
        error_write(error, error_size,
                    "store: %s cannot use write-ahead logging (journal mode stays \"%s\")",
                    path, word);
        return -1;
    }
    if (sqlite3_exec(database, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    /* 4 MiB of page cache: SQLite 3.40 scans its whole page-cache hash at some commits
     * (pcache1TruncateUnsafe), which with 64 MiB cost more than reading pages back from the
     * OS cache. */
    if (sqlite3_exec(database, "PRAGMA cache_size=-4096", NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    if (sqlite3_exec(database, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) goto fail;
    if (query_word(database, "SELECT value FROM meta WHERE key = 'schema_version'", word,
                   sizeof word) != SQLITE_OK)
        goto fail;
    if (strcmp(word, SCHEMA_VERSION) != 0) {
        error_write(error, error_size,
                    "store: %s has schema version \"%s\", this server knows version "
                    SCHEMA_VERSION, path, word);
        return -1;
    }
    return 0;
fail:
    error_write(error, error_size, "store: cannot set up %s: %s", path,
                sqlite3_errmsg(database));
    return -1;
}

static const char *sqlite_path(const char *url, char *error, size_t error_size) {
    if (url != NULL && strncmp(url, "sqlite:", 7) == 0 && url[7] != '\0') return url + 7;
    if (url != NULL && (strncmp(url, "postgres://", 11) == 0 ||
                        strncmp(url, "postgresql://", 13) == 0)) {
        error_write(error, error_size,
                    "store: the PostgreSQL store is not available yet in this build; "
                    "use sqlite:PATH");
        return NULL;
    }
    error_write(error, error_size,
                "store: unknown store URL \"%s\": expected sqlite:PATH or postgres://...",
                url != NULL ? url : "");
    return NULL;
}

/* Process-wide settings, before SQLite initializes itself. Memory statistics off: with them
 * on, every allocation of every connection takes one global mutex, and the writer and the
 * checkpointer allocate for every statement they run. */
static void sqlite_configure_once(void) {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int hf_store_open(hf_store_t **out, const char *url, char *error, size_t error_size) {
    assert(out != NULL);
    *out = NULL;
    static pthread_once_t configured = PTHREAD_ONCE_INIT;
    pthread_once(&configured, sqlite_configure_once);
    const char *path = sqlite_path(url, error, error_size);
    if (path == NULL) return -1;
    hf_store_t *store = calloc(1, sizeof *store);
    if (store == NULL) abort();
    pthread_mutex_init(&store->mutex, NULL);
    pthread_cond_init(&store->wake, NULL);
    /* NOMUTEX: one thread at a time uses the connection (see the top of this file). */
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    /* The store's VFS gathers the log's writes; tests may ask for failing writes or syncs
     * (fault.h), which its faulty flavour injects. */
    const char *vfs = hf_store_vfs(hf_store_fault_configure(), error, error_size);
    if (vfs == NULL) goto fail;
    if (sqlite3_open_v2(path, &store->database, flags, vfs) != SQLITE_OK) {
        error_write(error, error_size, "store: cannot open %s: %s", path,
                    store->database != NULL ? sqlite3_errmsg(store->database)
                                            : "out of memory");
        goto fail;
    }
    if (database_configure(store->database, path, error, error_size) != 0) goto fail;
    if (statements_prepare(store, error, error_size) != 0) goto fail;
    store->fail_batch = hf_store_fault_batch_to_fail();
    /* A full disk for tests: the database may not grow past this many pages (SQLITE_FULL). */
    uint64_t pages_max = hf_store_fault_pages_max();
    if (pages_max > 0) {
        char pragma[64], word[32];
        snprintf(pragma, sizeof pragma, "PRAGMA max_page_count=%" PRIu64, pages_max);
        if (query_word(store->database, pragma, word, sizeof word) != SQLITE_OK) {
            error_write(error, error_size, "store: cannot limit the database size: %s",
                        sqlite3_errmsg(store->database));
            goto fail;
        }
    }
    *out = store;
    return 0;
fail:
    hf_store_close(store);
    return -1;
}

/* ---- Writing a batch (the writer thread) ---- */

/* Failures of our own, beside SQLite's result codes (which are all positive). */
enum { WRITE_ROW_MISSING = -1, WRITE_TYPE_UNKNOWN = -2 };

static const char *mutation_name(hf_mutation_type_t type) {
    switch (type) {
    case HF_MUTATION_EVENT_CREATE: return "EVENT_CREATE";
    case HF_MUTATION_SEAT: return "SEAT";
    case HF_MUTATION_HOLD_CREATE: return "HOLD_CREATE";
    case HF_MUTATION_HOLD_UPDATE: return "HOLD_UPDATE";
    case HF_MUTATION_ORDER_CREATE: return "ORDER_CREATE";
    case HF_MUTATION_ORDER_ITEM: return "ORDER_ITEM";
    case HF_MUTATION_ORDER_UPDATE: return "ORDER_UPDATE";
    case HF_MUTATION_IDEMPOTENCY: return "IDEMPOTENCY";
    case HF_MUTATION_POOL: return "POOL";
    }
    return "unknown";
}

/* The id that names a record in an error message: what an operator would look up. */
static const char *mutation_subject(const hf_mutation_t *mutation) {
    switch (mutation->type) {
    case HF_MUTATION_EVENT_CREATE: return mutation->event_id;
    case HF_MUTATION_SEAT: return mutation->seat_id;
    case HF_MUTATION_HOLD_CREATE:
    case HF_MUTATION_HOLD_UPDATE: return mutation->hold_id;
    case HF_MUTATION_ORDER_ITEM:
        return mutation->seat_id != NULL ? mutation->seat_id : mutation->pool_id;
    case HF_MUTATION_ORDER_CREATE:
    case HF_MUTATION_ORDER_UPDATE: return mutation->order_id;
    case HF_MUTATION_IDEMPOTENCY: return mutation->key;
    case HF_MUTATION_POOL: return mutation->pool_id;
    }
    return NULL;
}

/* Steps a bound statement to its end and makes it ready for the next use. Returns SQLITE_DONE
 * or the error code; the connection's message describes the error until the next call. */
static int statement_run(hf_store_t *store, statement_id_t id) {
    sqlite3_stmt *statement = store->statements[id];
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

/* The batch outlives the statement's use, so its strings are bound without a copy. */
static void bind_text(hf_store_t *store, statement_id_t id, int index, const char *text) {
    sqlite3_bind_text(store->statements[id], index, text, -1, SQLITE_STATIC);
}

static void bind_integer(hf_store_t *store, statement_id_t id, int index, int64_t value) {
    sqlite3_bind_int64(store->statements[id], index, value);
}

static int event_insert(hf_store_t *store, const hf_mutation_t *m) {
    bind_text(store, STATEMENT_EVENT_INSERT, 1, m->event_id);
    bind_text(store, STATEMENT_EVENT_INSERT, 2, m->text);
    bind_integer(store, STATEMENT_EVENT_INSERT, 3, m->at_ms);
    return statement_run(store, STATEMENT_EVENT_INSERT);
}

static int hold_insert(hf_store_t *store, const hf_mutation_t *m) {
    statement_id_t id = STATEMENT_HOLD_INSERT;
    bind_text(store, id, 1, m->hold_id);
    bind_text(store, id, 2, m->event_id);
    bind_text(store, id, 3, m->user_id);
    bind_text(store, id, 4, status_word(&HOLD_STATUS, m->status));
    bind_text(store, id, 5, m->text);
    bind_integer(store, id, 6, m->total);
    bind_integer(store, id, 7, m->at_ms);
    bind_integer(store, id, 8, m->expires_at_ms);
    bind_text(store, id, 9, m->order_id);
    return statement_run(store, id);
}

/* An update that finds no row means the engine and the tables disagree: the batch fails
 * rather than let the store drift silently from what was acknowledged. */
static int changed_one_row(hf_store_t *store, int rc) {
    if (rc == SQLITE_DONE && sqlite3_changes(store->database) == 0) return WRITE_ROW_MISSING;
    return rc;
}

static int hold_update(hf_store_t *store, const hf_mutation_t *m) {
    statement_id_t id = STATEMENT_HOLD_UPDATE;
    bind_text(store, id, 1, m->hold_id);
    bind_text(store, id, 2, status_word(&HOLD_STATUS, m->status));
    bind_integer(store, id, 3, m->expires_at_ms);
    bind_text(store, id, 4, m->order_id);
    return changed_one_row(store, statement_run(store, id));
}

static int order_insert(hf_store_t *store, const hf_mutation_t *m) {
    statement_id_t id = STATEMENT_ORDER_INSERT;
    bind_text(store, id, 1, m->order_id);
    bind_text(store, id, 2, m->event_id);
    bind_text(store, id, 3, m->user_id);
    bind_text(store, id, 4, m->hold_id);
    bind_text(store, id, 5, status_word(&ORDER_STATUS, m->status));
    bind_text(store, id, 6, m->text);
    bind_integer(store, id, 7, m->total);
    bind_text(store, id, 8, m->currency);
    bind_text(store, id, 9, m->payment_ref);
    bind_integer(store, id, 10, m->at_ms);
    return statement_run(store, id);
}

static int order_item_insert(hf_store_t *store, const hf_mutation_t *m) {
    statement_id_t id = STATEMENT_ORDER_ITEM_INSERT;
    bind_text(store, id, 1, m->order_id);
    bind_text(store, id, 2, m->event_id);
    bind_text(store, id, 3, m->seat_id);
    bind_text(store, id, 4, m->pool_id);
    /* A seat line is one seat even when the record leaves the quantity at zero. */
    uint32_t quantity = m->seat_id != NULL && m->quantity == 0 ? 1 : m->quantity;
    bind_integer(store, id, 5, quantity);
    return statement_run(store, id);
}

static int order_update(hf_store_t *store, const hf_mutation_t *m) {
    bind_text(store, STATEMENT_ORDER_UPDATE, 1, m->order_id);
    bind_text(store, STATEMENT_ORDER_UPDATE, 2, status_word(&ORDER_STATUS, m->status));
    int rc = changed_one_row(store, statement_run(store, STATEMENT_ORDER_UPDATE));
    if (rc != SQLITE_DONE || m->status != HF_ORDER_CANCELLED) return rc;
    /* A cancelled order's seats leave the unique index, so they can be sold again. */
    bind_text(store, STATEMENT_ORDER_ITEMS_DEACTIVATE, 1, m->order_id);
    return statement_run(store, STATEMENT_ORDER_ITEMS_DEACTIVATE);
}

static int idempotency_put(hf_store_t *store, const hf_mutation_t *m) {
    statement_id_t id = STATEMENT_IDEMPOTENCY_PUT;
    bind_text(store, id, 1, m->key);
    /* A missing hash binds NULL, which the NOT NULL constraint turns into a named failure. */
    if (m->hash != NULL)
        sqlite3_bind_blob(store->statements[id], 2, m->hash, HASH_SIZE, SQLITE_STATIC);
    bind_integer(store, id, 3, m->status);
    bind_text(store, id, 4, m->text);
    bind_integer(store, id, 5, m->at_ms);
    return statement_run(store, id);
}

static int mutation_write(hf_store_t *store, const hf_mutation_t *m) {
    switch (m->type) {
    case HF_MUTATION_EVENT_CREATE: return event_insert(store, m);
    /* Seat states and versions follow from holds and orders (the seat_state view, and
     * hf_core_restore_* at start): nothing to write. */
    case HF_MUTATION_SEAT: return SQLITE_DONE;
    case HF_MUTATION_HOLD_CREATE: return hold_insert(store, m);
    case HF_MUTATION_HOLD_UPDATE: return hold_update(store, m);
    case HF_MUTATION_ORDER_CREATE: return order_insert(store, m);
    case HF_MUTATION_ORDER_ITEM: return order_item_insert(store, m);
    case HF_MUTATION_ORDER_UPDATE: return order_update(store, m);
    case HF_MUTATION_IDEMPOTENCY: return idempotency_put(store, m);
    /* Pool counts are derived from holds and orders at load: nothing to write. */
    case HF_MUTATION_POOL: return SQLITE_DONE;
    }
    return WRITE_TYPE_UNKNOWN;
}

static const char *failure_reason(hf_store_t *store, int rc) {
    if (rc == WRITE_ROW_MISSING) return "no such row to update";
    if (rc == WRITE_TYPE_UNKNOWN) return "unknown mutation type";
    return sqlite3_errmsg(store->database);
}

/* Keys are kept 24 hours after the newest change of the batch: the engine's clock, the same
 * one the loader's keep_since_ms comes from. Runs first so a batch's own keys always land. */
static int idempotency_purge(hf_store_t *store, const hf_batch_t *batch) {
    if (store->batches_since_purge++ % PURGE_EVERY_BATCHES != 0) return SQLITE_DONE;
    int64_t newest_ms = 0;
    for (size_t i = 0; i < hf_batch_count(batch); i++)
        if (hf_batch_at(batch, i)->at_ms > newest_ms) newest_ms = hf_batch_at(batch, i)->at_ms;
    if (newest_ms <= HF_IDEMPOTENCY_KEEP_MS) return SQLITE_DONE;
    bind_integer(store, STATEMENT_PURGE, 1, newest_ms - HF_IDEMPOTENCY_KEEP_MS);
    return statement_run(store, STATEMENT_PURGE);
}

/* One transaction for the whole batch; on failure nothing of it remains. */
/* SQLite syncs the log itself at times (its header when the log restarts, before its own
 * checkpoints): such a failure is a failed fsync like the syncer's, with the same meaning. */
static bool sync_failed(sqlite3 *database) {
    int code = sqlite3_extended_errcode(database);
    return code == SQLITE_IOERR_FSYNC || code == SQLITE_IOERR_DIR_FSYNC;
}

static bool batch_write(hf_store_t *store, const hf_batch_t *batch, char *error,
                        size_t error_size) {
    int rc = statement_run(store, STATEMENT_BEGIN);
    if (rc != SQLITE_DONE) {
        error_write(error, error_size, "store: cannot begin a transaction: %s",
                    failure_reason(store, rc));
        return false;
    }
    rc = idempotency_purge(store, batch);
    if (rc != SQLITE_DONE) {
        error_write(error, error_size, "store: purging old idempotency keys failed: %s",
                    failure_reason(store, rc));
        goto fail;
    }
    for (size_t i = 0; i < hf_batch_count(batch); i++) {
        const hf_mutation_t *m = hf_batch_at(batch, i);
        rc = mutation_write(store, m);
        if (rc != SQLITE_DONE) {
            const char *subject = mutation_subject(m);
            error_write(error, error_size, "store: %s of %s failed: %s", mutation_name(m->type),
                        subject != NULL ? subject : "(none)", failure_reason(store, rc));
            goto fail;
        }
    }
    /* The fault seam: tests make one chosen batch fail as a full disk would, after its
     * writes and before its commit, to check that nothing of it is acknowledged. */
    if (++store->batches_begun == store->fail_batch) {
        error_write(error, error_size, "store: injected fault in batch %" PRIu64
                    " (HOLDFAST_FAULT_FAIL_BATCH)", store->batches_begun);
        goto fail;
    }
    rc = statement_run(store, STATEMENT_COMMIT);
    if (rc != SQLITE_DONE) {
        error_write(error, error_size, "store: commit failed: %s", failure_reason(store, rc));
        goto fail;
    }
    return true;
fail:
    store->failed_in_sync = sync_failed(store->database);
    /* SQLite may already have rolled back by itself (a full disk, an I/O error). */
    if (!sqlite3_get_autocommit(store->database)) statement_run(store, STATEMENT_ROLLBACK);
    return false;
}

/* Writes a batch the writer took, then publishes it as finished. Called and returns with the
 * mutex unlocked. */
static void batch_process(hf_store_t *store, hf_batch_t *batch, uint64_t sequence) {
    char error[ERROR_SIZE] = "";
    double start = hf_clock_monotonic_seconds();
    bool ok = hf_store_ceiling_skips_sql() || batch_write(store, batch, error, sizeof error);
    double seconds = hf_clock_monotonic_seconds() - start;
    size_t count = hf_batch_count(batch);
    if (ok) {
        hf_syncer_written(store->syncer, sequence);
    } else {
        hf_log(HF_LOG_ERROR, "%s (batch %" PRIu64 " of %zu mutations rolled back)", error,
               sequence, count);
        /* The batches before this one are committed: let their syncs (by the syncer's threads)
         * settle first, so the engine, told of the failure, finds the durable state final and
         * can reload it. */
        if (store->failed_in_sync) hf_syncer_fail(store->syncer, error);
        hf_syncer_wait(store->syncer);
    }
    /* Cleared here, off the engine thread, so taking the result back costs nothing. */
    hf_batch_clear(batch);

    pthread_mutex_lock(&store->mutex);
    store->writing = NULL;
    store->finished = batch;
    store->finished_sequence = sequence;
    store->finished_ok = ok;
    memcpy(store->finished_error, error, sizeof error);
    if (ok) {
        store->stats.batches++;
        store->stats.mutations += count;
        store->stats.last_batch_size = count;
        store->stats.last_commit_seconds = seconds;
    } else {
        store->stats.failures++;
    }
    pthread_mutex_unlock(&store->mutex);
}

/* The writer takes a batch, writes it, reports it written to the syncer and hands it back to
 * the engine, which may then submit the next one: the sync of one batch overlaps the write of
 * the next. */
static void *store_writer(void *argument) {
    hf_store_t *store = argument;
    pthread_setname_np(pthread_self(), "hf-store"); /* for top -H, perf and gdb */
    pthread_mutex_lock(&store->mutex);
    for (;;) {
        while (store->submitted == NULL && !store->stopping)
            pthread_cond_wait(&store->wake, &store->mutex);
        /* A batch handed over before the stop request is still written: it may carry
         * changes whose replies are waiting. */
        if (store->submitted == NULL) break;
        hf_batch_t *batch = store->submitted;
        uint64_t sequence = store->submitted_sequence;
        store->submitted = NULL;
        store->writing = batch;
        pthread_mutex_unlock(&store->mutex);
        batch_process(store, batch, sequence);
        store->done(store->done_context);
        pthread_mutex_lock(&store->mutex);
    }
    pthread_mutex_unlock(&store->mutex);
    return NULL;
}

/* ---- The engine's side ---- */

static int writer_start(hf_store_t *store) {
    int rc = pthread_create(&store->writer, NULL, store_writer, store);
    if (rc != 0) {
        hf_log(HF_LOG_ERROR, "store: cannot start the writer: %s", strerror(rc));
        return -1;
    }
    store->writer_running = true;
    return 0;
}

int hf_store_start(hf_store_t *store, hf_store_done_fn done, void *context) {
    assert(store != NULL && done != NULL && !store->started);
    store->done = done;
    store->done_context = context;
    store->started = true;
    hf_store_fault_arm(); /* injected write and sync faults count batches only */
    store->checkpointer = hf_checkpointer_start(store->database);
    char error[ERROR_SIZE] = "";
    const char *path = sqlite3_db_filename(store->database, "main");
    char log_path[4096];
    if (path == NULL || snprintf(log_path, sizeof log_path, "%s-wal", path) >= (int)sizeof log_path) {
        hf_log(HF_LOG_ERROR, "store: the database has no usable file name");
        return -1;
    }
    if (sqlite3_exec(store->database, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
        hf_log(HF_LOG_ERROR, "store: %s", sqlite3_errmsg(store->database));
        return -1;
    }
    store->syncer = hf_syncer_open(log_path, done, context, error, sizeof error);
    if (store->syncer == NULL ||
        hf_syncer_start(store->syncer, HF_STORE_SYNCERS, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "%s", error);
        return -1;
    }
    return writer_start(store);
}

/* Idle means the store holds no batch: none being written and none finished but not yet
 * taken back, so there is a single result slot and it is always free at submit. Only the
 * engine thread moves the store in and out of idle (submit, take_result), so it reads its own
 * flag without the mutex: the engine asks at every loop turn, and taking the lock there made
 * the writer wait for it. */
bool hf_store_idle(const hf_store_t *store) {
    return !store->holds_batch;
}

void hf_store_submit(hf_store_t *store, hf_batch_t *batch, uint64_t sequence) {
    assert(store != NULL && batch != NULL && store->writer_running);
    pthread_mutex_lock(&store->mutex);
    assert(store->submitted == NULL && store->writing == NULL && store->finished == NULL &&
           !store->stopping);
    store->holds_batch = true;
    store->submitted = batch;
    store->submitted_sequence = sequence;
    pthread_cond_signal(&store->wake);
    pthread_mutex_unlock(&store->mutex);
}

hf_batch_t *hf_store_take_result(hf_store_t *store, uint64_t *sequence, bool *ok, char *error,
                                 size_t error_size) {
    assert(store != NULL);
    pthread_mutex_lock(&store->mutex);
    hf_batch_t *batch = store->finished;
    if (batch != NULL) {
        if (sequence != NULL) *sequence = store->finished_sequence;
        if (ok != NULL) *ok = store->finished_ok;
        error_write(error, error_size, "%s", store->finished_error);
        store->finished = NULL;
        store->holds_batch = false;
    }
    pthread_mutex_unlock(&store->mutex);
    return batch;
}

bool hf_store_durable(const hf_store_t *store, uint64_t *sequence, char *error,
                      size_t error_size) {
    *sequence = 0;
    if (store->syncer == NULL) return true;
    return hf_syncer_durable(store->syncer, sequence, error, error_size);
}

void hf_store_stats(const hf_store_t *store, hf_store_stats_t *stats) {
    hf_store_t *shared = (hf_store_t *)store; /* see hf_store_idle */
    pthread_mutex_lock(&shared->mutex);
    *stats = shared->stats;
    pthread_mutex_unlock(&shared->mutex);
}

/* A batch never taken back is still the store's (hf_store_submit), so it is freed here. */
void hf_store_close(hf_store_t *store) {
    if (store == NULL) return;
    pthread_mutex_lock(&store->mutex);
    store->stopping = true;
    pthread_cond_broadcast(&store->wake);
    pthread_mutex_unlock(&store->mutex);
    if (store->writer_running) pthread_join(store->writer, NULL);
    /* After the writer: the syncer covers every batch it committed. */
    hf_syncer_close(store->syncer);
    hf_checkpointer_stop(store->checkpointer);
    hf_batch_destroy(store->submitted);
    hf_batch_destroy(store->writing);
    hf_batch_destroy(store->finished);
    for (int i = 0; i < STATEMENT_COUNT; i++) sqlite3_finalize(store->statements[i]);
    sqlite3_finalize(store->read_hold);
    sqlite3_close(store->reader);
    sqlite3_close(store->database);
    pthread_cond_destroy(&store->wake);
    pthread_mutex_destroy(&store->mutex);
    free(store);
}

/* ---- Loading (before start) ---- */

/* Every load query returns the same columns in this order, NULL where a table has none, so
 * one function fills a row from any of them. */
enum {
    COLUMN_EVENT_ID, COLUMN_SEAT_ID, COLUMN_HOLD_ID, COLUMN_ORDER_ID, COLUMN_USER_ID,
    COLUMN_KEY, COLUMN_TEXT, COLUMN_CURRENCY, COLUMN_PAYMENT_REF, COLUMN_HASH, COLUMN_AT_MS,
    COLUMN_EXPIRES_AT_MS, COLUMN_TOTAL, COLUMN_VERSION, COLUMN_STATUS
};

typedef int (*row_callback_t)(void *context, const hf_stored_row_t *row);

typedef struct load_step {
    const char *table;
    const char *sql;
    const status_words_t *status; /* NULL: the status column is a number (HTTP status) */
    int subject_column;           /* the id that names a row in an error message */
} load_step_t;

static const load_step_t LOAD_EVENTS = {
    "events",
    "SELECT id, NULL, NULL, NULL, NULL, NULL, config, NULL, NULL, NULL, created_at, 0, 0, 0,"
    " NULL FROM events ORDER BY seq",
    NULL, COLUMN_EVENT_ID};
#define SELECT_HOLDS                                                                          \
    "SELECT event_id, NULL, id, order_id, user_id, NULL, items, NULL, NULL, NULL, created_at," \
    " expires_at, total, 0, status FROM holds"
static const load_step_t LOAD_HOLDS = {
    "holds", SELECT_HOLDS " ORDER BY seq", &HOLD_STATUS, COLUMN_HOLD_ID};
/* One hold the core has forgotten (hf_store_read_hold). */
static const load_step_t READ_HOLD = {
    "holds", SELECT_HOLDS " WHERE id = ?1", &HOLD_STATUS, COLUMN_HOLD_ID};
static const load_step_t LOAD_ORDERS = {
    "orders",
    "SELECT event_id, NULL, reservation_id, id, user_id, NULL, items, currency, payment_ref,"
    " NULL, created_at, 0, total, 0, status FROM orders ORDER BY seq",
    &ORDER_STATUS, COLUMN_ORDER_ID};
static const load_step_t LOAD_IDEMPOTENCY = {
    "idempotency",
    "SELECT NULL, NULL, NULL, NULL, NULL, key, body, NULL, NULL, hash, created_at, 0, 0, 0,"
    " status FROM idempotency WHERE created_at >= ?1 ORDER BY created_at, key",
    NULL, COLUMN_KEY};

static const char *column_text(sqlite3_stmt *statement, int column) {
    return (const char *)sqlite3_column_text(statement, column);
}

/* The row's pointers borrow the statement's current row: valid during the callback only. */
static int row_fill(sqlite3_stmt *statement, const load_step_t *step, hf_stored_row_t *row,
                    char *error, size_t error_size) {
    memset(row, 0, sizeof *row);
    row->event_id = column_text(statement, COLUMN_EVENT_ID);
    row->seat_id = column_text(statement, COLUMN_SEAT_ID);
    row->hold_id = column_text(statement, COLUMN_HOLD_ID);
    row->order_id = column_text(statement, COLUMN_ORDER_ID);
    row->user_id = column_text(statement, COLUMN_USER_ID);
    row->key = column_text(statement, COLUMN_KEY);
    row->text = column_text(statement, COLUMN_TEXT);
    row->currency = column_text(statement, COLUMN_CURRENCY);
    row->payment_ref = column_text(statement, COLUMN_PAYMENT_REF);
    row->at_ms = sqlite3_column_int64(statement, COLUMN_AT_MS);
    row->expires_at_ms = sqlite3_column_int64(statement, COLUMN_EXPIRES_AT_MS);
    row->total = sqlite3_column_int64(statement, COLUMN_TOTAL);
    row->version = (uint32_t)sqlite3_column_int64(statement, COLUMN_VERSION);
    if (sqlite3_column_type(statement, COLUMN_HASH) != SQLITE_NULL) {
        row->hash = sqlite3_column_blob(statement, COLUMN_HASH);
        if (sqlite3_column_bytes(statement, COLUMN_HASH) != HASH_SIZE) {
            error_write(error, error_size, "store: %s row %s has a hash of %d bytes, not %d",
                        step->table, row->key, sqlite3_column_bytes(statement, COLUMN_HASH),
                        HASH_SIZE);
            return -1;
        }
    }
    if (step->status == NULL) {
        row->status = sqlite3_column_int(statement, COLUMN_STATUS);
        return 0;
    }
    const char *word = column_text(statement, COLUMN_STATUS);
    row->status = status_number(step->status, word);
    if (row->status < 0) {
        error_write(error, error_size, "store: a row of %s has the unknown status \"%s\"",
                    step->table, word != NULL ? word : "NULL");
        return -1;
    }
    return 0;
}

static int load_table(hf_store_t *store, const load_step_t *step, row_callback_t callback,
                      const hf_store_loader_t *loader, char *error, size_t error_size) {
    if (callback == NULL) return 0;
    sqlite3_stmt *statement = NULL;
    int result = -1;
    if (sqlite3_prepare_v2(store->database, step->sql, -1, &statement, NULL) != SQLITE_OK) {
        error_write(error, error_size, "store: reading %s failed: %s", step->table,
                    sqlite3_errmsg(store->database));
        goto fail;
    }
    if (sqlite3_bind_parameter_count(statement) > 0)
        sqlite3_bind_int64(statement, 1, loader->keep_since_ms);
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        hf_stored_row_t row;
        if (row_fill(statement, step, &row, error, error_size) != 0) goto fail;
        result = callback(loader->context, &row);
        if (result != 0) {
            const char *subject = column_text(statement, step->subject_column);
            error_write(error, error_size, "store: loading %s stopped at %s (%d)", step->table,
                        subject != NULL ? subject : "a row", result);
            goto fail;
        }
        result = -1;
    }
    if (rc != SQLITE_DONE) {
        error_write(error, error_size, "store: reading %s failed: %s", step->table,
                    sqlite3_errmsg(store->database));
        goto fail;
    }
    result = 0;
fail:
    sqlite3_finalize(statement);
    return result;
}

static int finished_holds_count(hf_store_t *store, const hf_store_loader_t *loader, char *error,
                                size_t error_size) {
    char word[32];
    if (query_word(store->database,
                   "SELECT count(*) FROM holds WHERE status IN ('released', 'expired')", word,
                   sizeof word) != SQLITE_OK) {
        error_write(error, error_size, "store: counting finished holds failed: %s",
                    sqlite3_errmsg(store->database));
        return -1;
    }
    return loader->finished_holds(loader->context, strtoull(word, NULL, 10));
}

int hf_store_load(hf_store_t *store, const hf_store_loader_t *loader, char *error,
                  size_t error_size) {
    assert(store != NULL && loader != NULL && !store->started);
    /* One read transaction: the four tables are seen at the same instant. */
    if (sqlite3_exec(store->database, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        error_write(error, error_size, "store: cannot begin reading: %s",
                    sqlite3_errmsg(store->database));
        return -1;
    }
    int result = load_table(store, &LOAD_EVENTS, loader->event, loader, error, error_size);
    if (result == 0 && loader->finished_holds != NULL)
        result = finished_holds_count(store, loader, error, error_size);
    if (result == 0)
        result = load_table(store, &LOAD_HOLDS, loader->hold, loader, error, error_size);
    if (result == 0)
        result = load_table(store, &LOAD_ORDERS, loader->order, loader, error, error_size);
    if (result == 0)
        result = load_table(store, &LOAD_IDEMPOTENCY, loader->idempotency, loader, error,
                            error_size);
    sqlite3_exec(store->database, "COMMIT", NULL, NULL, NULL);
    return result;
}

/* ---- Reading one forgotten hold (engine thread) ---- */

static int reader_open(hf_store_t *store, char *error, size_t error_size) {
    if (store->read_hold != NULL) return 0;
    const char *path = sqlite3_db_filename(store->database, "main");
    int rc = sqlite3_open_v2(path != NULL ? path : "", &store->reader,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(store->reader, BUSY_TIMEOUT_MS);
        rc = sqlite3_prepare_v3(store->reader, READ_HOLD.sql, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->read_hold, NULL);
    }
    if (rc == SQLITE_OK) return 0;
    error_write(error, error_size, "store: cannot open a reader of %s: %s", path != NULL ? path : "?",
                store->reader != NULL ? sqlite3_errmsg(store->reader) : sqlite3_errstr(rc));
    sqlite3_close(store->reader);
    store->reader = NULL;
    return -1;
}

int hf_store_read_hold(hf_store_t *store, const char *hold_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size) {
    assert(store != NULL && hold_id != NULL && loader != NULL && loader->hold != NULL);
    *found = false;
    if (reader_open(store, error, error_size) != 0) return -1;
    sqlite3_stmt *statement = store->read_hold;
    sqlite3_bind_text(statement, 1, hold_id, -1, SQLITE_STATIC);
    int result = 0;
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
        hf_stored_row_t row;
        result = row_fill(statement, &READ_HOLD, &row, error, error_size);
        if (result == 0) {
            *found = true;
            result = loader->hold(loader->context, &row);
            if (result != 0) error_write(error, error_size, "store: hold %s could not be taken back (%d)",
                                         hold_id, result);
        }
    } else if (rc != SQLITE_DONE) {
        error_write(error, error_size, "store: reading hold %s failed: %s", hold_id,
                    sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once: a statement left mid-read would keep its read transaction open and
     * stop checkpoints from recycling the log. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}
