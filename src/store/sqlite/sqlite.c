/* The SQLite backend (backend.h): plain tables an operator can query with sqlite3, written in
 * group commits. Each batch the pipeline (pipeline.c) hands over becomes one transaction. Loading
 * runs with synchronous=FULL; once the writer starts, COMMIT only writes the log
 * (synchronous=NORMAL), and the syncer's threads make the log durable with fdatasync (sync.h)
 * while the writer goes on with the next batch. A batch counts as durable only when a sync
 * that started after its COMMIT has finished. The UNIQUE index on order_items stands behind
 * the engine: a seat is in at most one active order of an event, whatever a bug upstream may
 * try. Each kind of record is written by its row of WRITES, the backend's table of writes made
 * from the list of kinds (core/mutation.h): a kind without its write_NAME fails to compile.
 *
 * Threads: the connection is used by the caller of open and load until start, then by the
 * store's writer thread (hf-store) alone; see backend.h for which method runs where. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/limits.h"
#include "core/queue.h"
#include "store/backend.h"
#include "store/fault.h"
#include "store/records.h"
#include "store/rows.h"
#include "store/sqlite/checkpoint.h"
#include "store/sqlite/internal.h"
#include "store/sqlite/sync.h"
#include "store/sqlite/vfs.h"

/* Old idempotency keys are deleted once every this many batches: often enough that the table
 * stays near one day of keys, rarely enough that the indexed delete costs nothing per batch. */
#define PURGE_EVERY_BATCHES 1000u

/* NULL for a number out of range: bound as SQL NULL, the NOT NULL constraint then fails the
 * batch with a message naming the column. */
static const char *hold_word(int status) {
    return hf_record_word(hf_hold_status_name, status, HF_HOLD_EXPIRED);
}

static const char *order_word(int status) {
    return hf_record_word(hf_order_status_name, status, HF_ORDER_EXCHANGED);
}

/* ---- Prepared statements ---- */

static const char *const STATEMENT_SQL[STATEMENT_COUNT] = {
    [STATEMENT_BEGIN] = "BEGIN IMMEDIATE",
    [STATEMENT_COMMIT] = "COMMIT",
    [STATEMENT_ROLLBACK] = "ROLLBACK",
    [STATEMENT_PURGE] = "DELETE FROM idempotency WHERE created_at < ?1",
    [STATEMENT_EVENT_INSERT] = "INSERT INTO events(id, config, created_at) VALUES(?1, ?2, ?3)",
    [STATEMENT_EVENT_SALES] = "UPDATE events SET sales_open = ?2 WHERE id = ?1",
    [STATEMENT_EVENT_UPDATE] = "UPDATE events SET config = ?2 WHERE id = ?1",
    [STATEMENT_EVENT_DELETE] = "DELETE FROM events WHERE id = ?1",
    [STATEMENT_EVENT_HISTORY_DELETE] = "DELETE FROM history WHERE event_id = ?1",
    [STATEMENT_HOLD_INSERT] =
        "INSERT INTO holds(id, event_id, user_id, status, items, total, created_at,"
        " expires_at, order_id, exchange_for) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [STATEMENT_HOLD_UPDATE] =
        "UPDATE holds SET status = ?2, expires_at = ?3, order_id = COALESCE(?4, order_id)"
        " WHERE id = ?1",
    /* By the table's key, and still by the id: a row that is not that hold changes nothing,
     * and the update by id follows. */
    [STATEMENT_HOLD_UPDATE_ROW] =
        "UPDATE holds SET status = ?2, expires_at = ?3, order_id = COALESCE(?4, order_id)"
        " WHERE seq = ?5 AND id = ?1",
    [STATEMENT_ORDER_INSERT] =
        "INSERT INTO orders(id, event_id, user_id, reservation_id, status, items, total,"
        " currency, payment_ref, created_at, replaces)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [STATEMENT_ORDER_ITEM_INSERT] =
        "INSERT INTO order_items(order_id, event_id, seat_id, pool_id, quantity)"
        " VALUES(?1, ?2, ?3, ?4, ?5)",
    [STATEMENT_ORDER_UPDATE] =
        "UPDATE orders SET status = ?2, replaced_by = COALESCE(?3, replaced_by) WHERE id = ?1",
    [STATEMENT_ORDER_ITEMS_DEACTIVATE] = "UPDATE order_items SET active = 0 WHERE order_id = ?1",
    [STATEMENT_IDEMPOTENCY_PUT] =
        "INSERT OR REPLACE INTO idempotency(key, hash, status, body, created_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5)",
    [STATEMENT_DELIVERY_PURGE] = "DELETE FROM deliveries WHERE received_at < ?1",
    [STATEMENT_DELIVERY_INSERT] =
        "INSERT INTO deliveries(payment_intent_id, type, event_id, reservation_id, amount,"
        " result, reason, late, order_id, refund_id, received_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    /* A refund record is the refund whole: new, or its status changed. */
    [STATEMENT_REFUND_PUT] =
        "INSERT INTO refunds(id, payment_intent_id, reservation_id, amount, reason, status,"
        " created_at, order_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        " ON CONFLICT(id) DO UPDATE SET status = excluded.status",
    [STATEMENT_HISTORY_LAST] = "SELECT COALESCE(MAX(seq), 0) FROM history WHERE event_id = ?1",
    /* A notification's delivery state is its history entry's (engine/outbox.h). */
    [STATEMENT_NOTIFY_UPDATE] =
        "UPDATE history SET notify_status = ?3, notify_attempts = ?4, notify_last_status = ?5,"
        " notify_last_error = ?6, notify_next_at = ?7 WHERE event_id = ?1 AND seq = ?2",
    [STATEMENT_TICKET_INSERT] =
        "INSERT INTO tickets(id, event_id, user_id, line_seq, status, created_at, admitted_at,"
        " updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?6)",
    [STATEMENT_TICKET_UPDATE] =
        "UPDATE tickets SET status = ?2, admitted_at = ?3, updated_at = ?4 WHERE id = ?1",
    /* A waitlist entry as it stands: new, or its status (and offer) changed. */
    [STATEMENT_WAITLIST_PUT] =
        "INSERT INTO waitlist(id, event_id, user_id, section, pool, quantity, sequence, status,"
        " hold_id, joined_at, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
        " ON CONFLICT(id) DO UPDATE SET status = excluded.status, hold_id = excluded.hold_id,"
        " updated_at = excluded.updated_at",
    [STATEMENT_DRIVER_PUT] =
        "INSERT INTO drivers(fleet_id, driver_id, lat, lng, rating, available, updated_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(fleet_id, driver_id) DO UPDATE SET"
        " lat = excluded.lat, lng = excluded.lng, rating = excluded.rating,"
        " available = excluded.available, updated_at = excluded.updated_at",
    [STATEMENT_RIDE_PUT] =
        "INSERT INTO rides(id, fleet_id, rider_id, lat, lng, radius_m, offer_ttl_ms, status,"
        " created_at, offer_driver_id, offer_distance_m, offer_expires_at, driver_id, declined,"
        " lapsed, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
        " ?14, ?15, ?16) ON CONFLICT(id) DO UPDATE SET status = excluded.status,"
        " offer_driver_id = excluded.offer_driver_id,"
        " offer_distance_m = excluded.offer_distance_m,"
        " offer_expires_at = excluded.offer_expires_at, driver_id = excluded.driver_id,"
        " declined = excluded.declined, lapsed = excluded.lapsed,"
        " updated_at = excluded.updated_at",
    [STATEMENT_DRIVER_DELETE] = "DELETE FROM drivers WHERE fleet_id = ?1 AND driver_id = ?2",
    [STATEMENT_CALENDAR_INSERT] =
        "INSERT INTO calendars(id, definition, created_at) VALUES(?1, ?2, ?3)",
    [STATEMENT_CALENDAR_RESOURCE_INSERT] =
        "INSERT INTO calendar_resources(calendar_id, idx, id, definition) VALUES(?1, ?2, ?3, ?4)",
    [STATEMENT_CALENDAR_SALES] = "UPDATE calendars SET sales_open = ?2 WHERE id = ?1",
    [STATEMENT_ALLOCATION_PUT] =
        "INSERT INTO allocations(event_id, id, items, created_at, updated_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(event_id, id)"
        " DO UPDATE SET items = excluded.items, updated_at = excluded.updated_at",
    [STATEMENT_CALENDAR_USE_INSERT] =
        "INSERT INTO calendar_uses(owner_id, calendar_id, resource, from_step, to_step, quantity)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [STATEMENT_JOB_INSERT] =
        "INSERT INTO jobs(id, event_id, rebook_to, offer_ttl_ms, orders, cursor, offered,"
        " accepted, refunded, status, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
        " ?10, ?11)",
    [STATEMENT_JOB_UPDATE] =
        "UPDATE jobs SET cursor = ?6, offered = ?7, accepted = ?8, refunded = ?9, status = ?10"
        " WHERE id = ?1",
    /* A new outcome, or its status changed (an offer accepted or refunded). */
    [STATEMENT_JOB_OFFER_PUT] =
        "INSERT INTO job_offers(job_id, order_id, user_id, reservation_id, status, expires_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(job_id, order_id) DO UPDATE SET"
        " status = excluded.status, expires_at = excluded.expires_at",
    HF_SQLITE_ORDER_LOCK_STATEMENTS,
};

/* ---- Opening ---- */

static int statements_prepare(hf_sqlite_store_t *store, char *error, size_t error_size) {
    for (int i = 0; i < STATEMENT_COUNT; i++) {
        int rc = sqlite3_prepare_v3(store->database, STATEMENT_SQL[i], -1,
                                    SQLITE_PREPARE_PERSISTENT, &store->statements[i], NULL);
        if (rc != SQLITE_OK) {
            hf_store_error_write(error, error_size, "store: cannot prepare \"%s\": %s",
                                 STATEMENT_SQL[i], sqlite3_errmsg(store->database));
            return -1;
        }
    }
    return 0;
}

int hf_sqlite_word_query(sqlite3 *database, const char *sql, char *word, size_t word_size) {
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
static int database_configure(sqlite3 *database, const char *path, char *error, size_t error_size) {
    char word[32];
    sqlite3_busy_timeout(database, HF_SQLITE_BUSY_TIMEOUT_MS);
    if (hf_sqlite_word_query(database, "PRAGMA journal_mode=WAL", word, sizeof word) != SQLITE_OK)
        goto fail;
    if (strcmp(word, "wal") != 0) {
        hf_store_error_write(error, error_size,
                             "store: %s cannot use write-ahead logging (journal mode stays \"%s\")",
                             path, word);
        return -1;
    }
    if (sqlite3_exec(database, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK) goto fail;
    /* 4 MiB of page cache: SQLite 3.40 scans its whole page-cache hash at some commits
     * (pcache1TruncateUnsafe), which with 64 MiB cost more than reading pages back from the
     * OS cache. */
    if (sqlite3_exec(database, "PRAGMA cache_size=-4096", NULL, NULL, NULL) != SQLITE_OK) goto fail;
    return hf_sqlite_schema_open(database, path, error, error_size);
fail:
    hf_store_error_write(error, error_size, "store: cannot set up %s: %s", path,
                         sqlite3_errmsg(database));
    return -1;
}

/* Process-wide settings, before SQLite initializes itself. Memory statistics off: with them
 * on, every allocation of every connection takes one global mutex, and the writer and the
 * checkpointer allocate for every statement they run. */
static void sqlite_configure_once(void) { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

/* A full disk for tests: the database may not grow past this many pages (SQLITE_FULL). */
static int pages_limit(hf_sqlite_store_t *store, char *error, size_t error_size) {
    uint64_t pages_max = hf_store_fault_pages_max();
    if (pages_max == 0) return 0;
    char pragma[64], word[32];
    snprintf(pragma, sizeof pragma, "PRAGMA max_page_count=%" PRIu64, pages_max);
    if (hf_sqlite_word_query(store->database, pragma, word, sizeof word) == SQLITE_OK) return 0;
    hf_store_error_write(error, error_size, "store: cannot limit the database size: %s",
                         sqlite3_errmsg(store->database));
    return -1;
}

static void sqlite_close(void *instance);

/* The pipeline picked this backend for url (backends.c), so it begins with "sqlite:" and a
 * path follows. */
static int sqlite_open(void **instance, const char *url, char *error, size_t error_size) {
    *instance = NULL;
    static pthread_once_t configured = PTHREAD_ONCE_INIT;
    pthread_once(&configured, sqlite_configure_once);
    assert(strncmp(url, "sqlite:", 7) == 0 && url[7] != '\0');
    const char *path = url + 7;
    hf_sqlite_store_t *store = calloc(1, sizeof *store);
    if (store == NULL) abort();
    hf_sqlite_hold_rows_init(store);
    /* NOMUTEX: one thread at a time uses the connection (see the top of this file). */
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    /* The store's VFS gathers the log's writes; tests may ask for failing writes or syncs
     * (fault.h), which its faulty flavour injects. */
    const char *vfs = hf_store_vfs(hf_store_fault_injects_io(), error, error_size);
    if (vfs == NULL) goto fail;
    if (sqlite3_open_v2(path, &store->database, flags, vfs) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot open %s: %s", path,
                             store->database != NULL ? sqlite3_errmsg(store->database)
                                                     : "out of memory");
        goto fail;
    }
    if (database_configure(store->database, path, error, error_size) != 0) goto fail;
    if (statements_prepare(store, error, error_size) != 0) goto fail;
    if (pages_limit(store, error, error_size) != 0) goto fail;
    *instance = store;
    return 0;
fail:
    sqlite_close(store);
    return -1;
}

/* ---- Writing a batch (the writer thread) ---- */

/* Failures of our own, beside SQLite's result codes (which are all positive). */
enum { WRITE_ROW_MISSING = -1, WRITE_TYPE_UNKNOWN = -2 };

/* Steps a bound statement to its end and makes it ready for the next use. Returns SQLITE_DONE
 * or the error code; the connection's message describes the error until the next call. */
static int statement_run(hf_sqlite_store_t *store, hf_sqlite_statement_t id) {
    sqlite3_stmt *statement = store->statements[id];
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

/* The batch outlives the statement's use, so its strings are bound without a copy. */
static void bind_text(hf_sqlite_store_t *store, hf_sqlite_statement_t id, int index,
                      const char *text) {
    sqlite3_bind_text(store->statements[id], index, text, -1, SQLITE_STATIC);
}

static void bind_integer(hf_sqlite_store_t *store, hf_sqlite_statement_t id, int index,
                         int64_t value) {
    sqlite3_bind_int64(store->statements[id], index, value);
}

/* A row's JSON column, written into the writer's own buffer: bound without a copy, it stays
 * put until the statement has run. */
static const char *definition_text(hf_sqlite_store_t *store,
                                   const hf_event_definition_t *definition) {
    hf_buffer_reset(&store->text);
    hf_rows_definition_write(&store->text, definition);
    return store->text.data;
}

/* The items column: seats and pools, or a calendar's uses. */
static const char *items_text(hf_sqlite_store_t *store, uint8_t target,
                              const hf_mutation_items_t *items, const hf_mutation_uses_t *uses) {
    hf_buffer_reset(&store->text);
    hf_rows_lines_write(&store->text, target, items, uses);
    return store->text.data;
}

static int write_event_create(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_event_create_t *event = &m->as.event_create;
    bind_text(store, STATEMENT_EVENT_INSERT, 1, event->event_id);
    bind_text(store, STATEMENT_EVENT_INSERT, 2, definition_text(store, event->definition));
    bind_integer(store, STATEMENT_EVENT_INSERT, 3, m->at_ms);
    return statement_run(store, STATEMENT_EVENT_INSERT);
}

static int write_hold_create(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_hold_create_t *hold = &m->as.hold_create;
    hf_sqlite_statement_t id = STATEMENT_HOLD_INSERT;
    bind_text(store, id, 1, hold->hold_id);
    bind_text(store, id, 2, hold->event_id);
    bind_text(store, id, 3, hold->user_id);
    bind_text(store, id, 4, hold_word(hold->status));
    bind_text(store, id, 5, items_text(store, hold->target, &hold->items, &hold->uses));
    bind_integer(store, id, 6, hold->total);
    bind_integer(store, id, 7, m->at_ms);
    bind_integer(store, id, 8, hold->expires_at_ms);
    bind_text(store, id, 10, hold->exchange_for);
    int rc = statement_run(store, id);
    if (rc == SQLITE_DONE)
        hf_sqlite_hold_rows_remember(store, hold->hold_id,
                                     sqlite3_last_insert_rowid(store->database));
    if (rc != SQLITE_DONE || hold->target != HF_TARGET_CALENDAR) return rc;
    return hf_sqlite_calendar_uses(store, hold->hold_id, hold->event_id, &hold->uses);
}

/* An update that finds no row means the engine and the tables disagree: the batch fails
 * rather than let the store drift silently from what was acknowledged. */
static int changed_one_row(hf_sqlite_store_t *store, int rc) {
    if (rc == SQLITE_DONE && sqlite3_changes(store->database) == 0) return WRITE_ROW_MISSING;
    return rc;
}

static int write_event_sales(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_event_sales_t *sales = &m->as.event_sales;
    bind_text(store, STATEMENT_EVENT_SALES, 1, sales->event_id);
    bind_integer(store, STATEMENT_EVENT_SALES, 2, sales->sales_open ? 1 : 0);
    return changed_one_row(store, statement_run(store, STATEMENT_EVENT_SALES));
}

/* The event's definition whole, as it stands after the change. */
static int write_event_update(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_event_update_t *event = &m->as.event_update;
    bind_text(store, STATEMENT_EVENT_UPDATE, 1, event->event_id);
    bind_text(store, STATEMENT_EVENT_UPDATE, 2, definition_text(store, event->definition));
    return changed_one_row(store, statement_run(store, STATEMENT_EVENT_UPDATE));
}

/* An unused event goes with its history (it has no holds, orders or tickets: the core
 * refuses to delete one that had any), and its id may be taken again. */
static int write_event_delete(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const char *event_id = m->as.event_delete.event_id;
    bind_text(store, STATEMENT_EVENT_DELETE, 1, event_id);
    int rc = changed_one_row(store, statement_run(store, STATEMENT_EVENT_DELETE));
    if (rc != SQLITE_DONE) return rc;
    bind_text(store, STATEMENT_EVENT_HISTORY_DELETE, 1, event_id);
    rc = statement_run(store, STATEMENT_EVENT_HISTORY_DELETE);
    if (rc == SQLITE_DONE) hf_sqlite_history_restart(store, event_id);
    return rc;
}

static int hold_update_run(hf_sqlite_store_t *store, hf_sqlite_statement_t id,
                           const hf_mutation_hold_update_t *hold, int64_t seq) {
    bind_text(store, id, 1, hold->hold_id);
    bind_text(store, id, 2, hold_word(hold->status));
    bind_integer(store, id, 3, hold->expires_at_ms);
    bind_text(store, id, 4, hold->order_id);
    if (seq != 0) bind_integer(store, id, 5, seq);
    return statement_run(store, id);
}

/* A hold the writer inserted lately is found by its row's seq (hold_rows.c), any other by its
 * id. */
static int write_hold_update(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_hold_update_t *hold = &m->as.hold_update;
    int64_t seq = hf_sqlite_hold_rows_find(store, hold->hold_id);
    if (seq != 0) {
        int rc = hold_update_run(store, STATEMENT_HOLD_UPDATE_ROW, hold, seq);
        if (rc != SQLITE_DONE || sqlite3_changes(store->database) == 1) return rc;
    }
    return changed_one_row(store, hold_update_run(store, STATEMENT_HOLD_UPDATE, hold, 0));
}

static int write_order_create(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    const hf_mutation_order_create_t *order = &m->as.order_create;
    hf_sqlite_statement_t id = STATEMENT_ORDER_INSERT;
    bind_text(store, id, 1, order->order_id);
    bind_text(store, id, 2, order->event_id);
    bind_text(store, id, 3, order->user_id);
    bind_text(store, id, 4, order->hold_id);
    bind_text(store, id, 5, order_word(order->status));
    bind_text(store, id, 6, items_text(store, order->target, &order->items, &order->uses));
    bind_integer(store, id, 7, order->total);
    bind_text(store, id, 8, order->currency);
    bind_text(store, id, 9, order->payment_ref);
    bind_integer(store, id, 10, m->at_ms);
    bind_text(store, id, 11, order->replaces);
    int rc = statement_run(store, id);
    if (rc != SQLITE_DONE || order->target != HF_TARGET_CALENDAR) return rc;
    return hf_sqlite_calendar_uses(store, order->order_id, order->event_id, &order->uses);
}

/* An item's five values from the statement's parameter first on. */
static void order_item_bind(sqlite3_stmt *statement, int first, const hf_mutation_t *mutation) {
    const hf_mutation_order_item_t *m = &mutation->as.order_item;
    sqlite3_bind_text(statement, first, m->order_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, first + 1, m->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, first + 2, m->seat_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, first + 3, m->pool_id, -1, SQLITE_STATIC);
    /* A seat line is one seat even when the record leaves the quantity at zero. */
    uint32_t quantity = m->seat_id != NULL && m->quantity == 0 ? 1 : m->quantity;
    sqlite3_bind_int64(statement, first + 4, quantity);
}

static int write_order_item(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    order_item_bind(store->statements[STATEMENT_ORDER_ITEM_INSERT], 1, mutation);
    return statement_run(store, STATEMENT_ORDER_ITEM_INSERT);
}

/* The INSERT of count items at once (2 to HF_SQLITE_ITEMS_PER_INSERT), prepared at its first
 * use: one statement keeps its cursors on the items' table and indexes open from one row to
 * the next (docs/PERFORMANCE.md, "Rows per change"). */
static sqlite3_stmt *order_items_statement(hf_sqlite_store_t *store, size_t count) {
    sqlite3_stmt **statement = &store->item_inserts[count - 1];
    if (*statement != NULL) return *statement;
    hf_buffer_t sql;
    hf_buffer_init(&sql);
    hf_buffer_printf(
        &sql, "INSERT INTO order_items(order_id, event_id, seat_id, pool_id, quantity) VALUES");
    for (size_t i = 0; i < count; i++)
        hf_buffer_printf(&sql, "%s(?%zu, ?%zu, ?%zu, ?%zu, ?%zu)", i ? ", " : "", 5 * i + 1,
                         5 * i + 2, 5 * i + 3, 5 * i + 4, 5 * i + 5);
    if (sqlite3_prepare_v3(store->database, sql.data, -1, SQLITE_PREPARE_PERSISTENT, statement,
                           NULL) != SQLITE_OK)
        *statement = NULL;
    hf_buffer_free(&sql);
    return *statement;
}

/* An order's items come one after the other, after its own record (core.c): count of them at
 * records, written by one INSERT. They make no history entries. */
static int write_order_items(hf_sqlite_store_t *store, const hf_batch_t *batch, size_t first,
                             size_t count) {
    sqlite3_stmt *statement = order_items_statement(store, count);
    if (statement == NULL) return sqlite3_errcode(store->database);
    for (size_t i = 0; i < count; i++)
        order_item_bind(statement, (int)(5 * i + 1), hf_batch_at(batch, first + i));
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

/* How many records from first on are items of one order, at most HF_SQLITE_ITEMS_PER_INSERT. */
static size_t order_items_run(const hf_batch_t *batch, size_t first) {
    const hf_mutation_t *head = hf_batch_at(batch, first);
    if (head->type != HF_MUTATION_ORDER_ITEM || head->as.order_item.order_id == NULL) return 1;
    size_t count = 1;
    while (count < HF_SQLITE_ITEMS_PER_INSERT && first + count < hf_batch_count(batch)) {
        const hf_mutation_t *next = hf_batch_at(batch, first + count);
        if (next->type != HF_MUTATION_ORDER_ITEM || next->as.order_item.order_id == NULL ||
            strcmp(next->as.order_item.order_id, head->as.order_item.order_id) != 0)
            break;
        count++;
    }
    return count;
}

static int write_order_update(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_order_update_t *m = &mutation->as.order_update;
    bind_text(store, STATEMENT_ORDER_UPDATE, 1, m->order_id);
    bind_text(store, STATEMENT_ORDER_UPDATE, 2, order_word(m->status));
    bind_text(store, STATEMENT_ORDER_UPDATE, 3, m->replaced_by);
    int rc = changed_one_row(store, statement_run(store, STATEMENT_ORDER_UPDATE));
    if (rc != SQLITE_DONE || m->status == HF_ORDER_CONFIRMED) return rc;
    /* A cancelled or exchanged order's seats leave the unique index, so they can be sold
     * again (an exchange's new order, whose rows come after this record, among others). */
    bind_text(store, STATEMENT_ORDER_ITEMS_DEACTIVATE, 1, m->order_id);
    return statement_run(store, STATEMENT_ORDER_ITEMS_DEACTIVATE);
}

static int write_idempotency(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_idempotency_t *m = &mutation->as.idempotency;
    hf_sqlite_statement_t id = STATEMENT_IDEMPOTENCY_PUT;
    bind_text(store, id, 1, m->key);
    /* A missing hash binds NULL, which the NOT NULL constraint turns into a named failure. */
    if (m->hash != NULL)
        sqlite3_bind_blob(store->statements[id], 2, m->hash, HF_SQLITE_HASH_SIZE, SQLITE_STATIC);
    bind_integer(store, id, 3, m->status);
    bind_text(store, id, 4, m->body);
    bind_integer(store, id, 5, mutation->at_ms);
    return statement_run(store, id);
}

static int write_delivery(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_delivery_t *m = &mutation->as.delivery;
    hf_sqlite_statement_t id = STATEMENT_DELIVERY_INSERT;
    bool refunded = m->result == HF_PAYMENT_REFUND_REQUIRED;
    bind_text(store, id, 1, m->payment_intent_id);
    bind_text(store, id, 2, hf_record_word(hf_payment_type_name, m->type, HF_PAYMENT_FAILED));
    bind_text(store, id, 3, m->event_id);
    bind_text(store, id, 4, m->reservation_id);
    bind_integer(store, id, 5, m->amount);
    bind_text(store, id, 6, hf_record_word(hf_payment_result_name, m->result, HF_PAYMENT_RECORDED));
    if (refunded)
        bind_text(store, id, 7,
                  hf_record_word(hf_refund_reason_name, m->reason, HF_REFUND_REASON_LAST));
    bind_integer(store, id, 8, m->late ? 1 : 0);
    bind_text(store, id, 9, m->order_id);
    bind_text(store, id, 10, m->refund_id);
    bind_integer(store, id, 11, mutation->at_ms);
    return statement_run(store, id);
}

static int write_refund(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_refund_t *m = &mutation->as.refund;
    hf_sqlite_statement_t id = STATEMENT_REFUND_PUT;
    bind_text(store, id, 1, m->refund_id);
    bind_text(store, id, 2, m->payment_intent_id);
    bind_text(store, id, 3, m->reservation_id);
    bind_integer(store, id, 4, m->amount);
    bind_text(store, id, 5,
              hf_record_word(hf_refund_reason_name, m->reason, HF_REFUND_REASON_LAST));
    bind_text(store, id, 6, hf_record_word(hf_refund_status_name, m->status, HF_REFUND_COMPLETED));
    bind_integer(store, id, 7, m->created_at_ms);
    bind_text(store, id, 8, m->order_id);
    return statement_run(store, id);
}

/* A ticket's join: a new row. */
static int write_ticket_create(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_ticket_t *m = &mutation->as.ticket;
    hf_sqlite_statement_t id = STATEMENT_TICKET_INSERT;
    bind_text(store, id, 1, m->ticket_id);
    bind_text(store, id, 2, m->event_id);
    bind_text(store, id, 3, m->user_id);
    bind_integer(store, id, 4, m->seq);
    bind_text(store, id, 5, hf_record_word(hf_ticket_status_name, m->status, HF_TICKET_ABANDONED));
    bind_integer(store, id, 6, mutation->at_ms);
    if (m->admitted_at_ms) bind_integer(store, id, 7, m->admitted_at_ms);
    return statement_run(store, id);
}

/* A ticket's new status. */
static int write_ticket_update(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_ticket_t *m = &mutation->as.ticket;
    hf_sqlite_statement_t id = STATEMENT_TICKET_UPDATE;
    bind_text(store, id, 1, m->ticket_id);
    bind_text(store, id, 2, hf_record_word(hf_ticket_status_name, m->status, HF_TICKET_ABANDONED));
    if (m->admitted_at_ms) bind_integer(store, id, 3, m->admitted_at_ms);
    bind_integer(store, id, 4, mutation->at_ms);
    return statement_run(store, id);
}

static int write_notify(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_notify_t *m = &mutation->as.notify;
    hf_sqlite_statement_t id = STATEMENT_NOTIFY_UPDATE;
    bind_text(store, id, 1, m->unit);
    bind_integer(store, id, 2, m->seq);
    bind_integer(store, id, 3, m->status);
    bind_integer(store, id, 4, m->attempts);
    if (m->last_status != 0) bind_integer(store, id, 5, m->last_status);
    bind_text(store, id, 6, m->last_error);
    bind_integer(store, id, 7, m->next_attempt_ms);
    return statement_run(store, id);
}

/* Seat states and versions follow from holds and orders (the seat_state view, and
 * hf_core_restore_* at start), pool counts too, and spans as seats do: nothing to write. */
static int write_nothing(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    return SQLITE_DONE;
}
#define write_seat write_nothing
#define write_pool write_nothing
#define write_calendar_change write_nothing

/* The rows of other files: allocations.c, waitlist.c, calendars.c, jobs.c (cancel jobs) and
 * dispatch.c. */
#define write_allocation hf_sqlite_allocation_put
#define write_waitlist hf_sqlite_waitlist_put
#define write_calendar_create hf_sqlite_calendar_create
#define write_calendar_resources hf_sqlite_calendar_resources
#define write_calendar_sales hf_sqlite_calendar_sales
#define write_event_cancel hf_sqlite_event_cancel
#define write_job hf_sqlite_job_update
#define write_job_offer hf_sqlite_job_offer_put
#define write_driver hf_sqlite_driver_put
#define write_ride hf_sqlite_ride_put

/* The backend's table of writes: write_NAME for each kind of the list (core/mutation.h), so a
 * kind without its write here fails to compile. */
typedef int (*write_fn)(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
#define WRITE(KIND, value, lower, member) [HF_MUTATION_##KIND] = write_##lower,
static const write_fn WRITES[HF_RECORD_KIND_LIMIT] = {HF_RECORD_KINDS(WRITE)};

static int record_write(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    write_fn write = (size_t)m->type < HF_RECORD_KIND_LIMIT ? WRITES[m->type] : NULL;
    return write != NULL ? write(store, m) : WRITE_TYPE_UNKNOWN;
}

/* The record's rows, then its entry in its event's history, in the same transaction. The
 * entries wait for their INSERT (history.c) unless the record changes the history's own rows
 * (an event's deletion takes its entries with it, a notification's state is its entry's):
 * those written before it are written first, in the order the records came. */
static int mutation_write(hf_sqlite_store_t *store, const hf_mutation_t *m) {
    bool history_changed = m->type == HF_MUTATION_EVENT_DELETE || m->type == HF_MUTATION_NOTIFY;
    int rc = history_changed ? hf_sqlite_history_flush(store) : SQLITE_DONE;
    if (rc == SQLITE_DONE) rc = record_write(store, m);
    return rc == SQLITE_DONE ? hf_sqlite_history_append(store, m) : rc;
}

static const char *failure_reason(hf_sqlite_store_t *store, int rc) {
    if (rc == WRITE_ROW_MISSING) return "no such row to update";
    if (rc == WRITE_TYPE_UNKNOWN) return "unknown mutation type";
    return sqlite3_errmsg(store->database);
}

/* Keys are kept 24 hours (deliveries 7 days) after the newest change of the batch: the engine's clock, the same
 * one the loader's keep_since_ms comes from. Runs first so a batch's own keys always land. */
static int idempotency_purge(hf_sqlite_store_t *store, const hf_batch_t *batch) {
    if (store->batches_since_purge++ % PURGE_EVERY_BATCHES != 0) return SQLITE_DONE;
    int64_t newest_ms = 0;
    for (size_t i = 0; i < hf_batch_count(batch); i++)
        if (hf_batch_at(batch, i)->at_ms > newest_ms) newest_ms = hf_batch_at(batch, i)->at_ms;
    if (newest_ms <= HF_IDEMPOTENCY_KEEP_MS) return SQLITE_DONE;
    bind_integer(store, STATEMENT_PURGE, 1, newest_ms - HF_IDEMPOTENCY_KEEP_MS);
    int rc = statement_run(store, STATEMENT_PURGE);
    if (rc != SQLITE_DONE || newest_ms <= HF_WEBHOOK_DEDUP_KEEP_MS) return rc;
    /* Deliveries older than their 7 days, as the core prunes them (and the loader skips). */
    bind_integer(store, STATEMENT_DELIVERY_PURGE, 1, newest_ms - HF_WEBHOOK_DEDUP_KEEP_MS);
    return statement_run(store, STATEMENT_DELIVERY_PURGE);
}

/* SQLite syncs the log itself at times (its header when the log restarts, before its own
 * checkpoints): such a failure is a failed fsync like the syncer's, with the same meaning. */
static bool sync_failed(sqlite3 *database) {
    int code = sqlite3_extended_errcode(database);
    return code == SQLITE_IOERR_FSYNC || code == SQLITE_IOERR_DIR_FSYNC;
}

/* Begins the batch's transaction and writes every record into it; the pipeline then commits
 * or aborts (backend.h). The ceiling build's no-sql mode skips the transaction altogether. */
static int sqlite_batch_write(void *instance, const hf_batch_t *batch, char *error,
                              size_t error_size) {
    hf_sqlite_store_t *store = instance;
    store->begun = false;
    if (hf_store_ceiling_skips_sql()) return 0;
    int rc = statement_run(store, STATEMENT_BEGIN);
    if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: cannot begin a transaction: %s",
                             failure_reason(store, rc));
        return -1;
    }
    store->begun = true;
    rc = idempotency_purge(store, batch);
    if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: purging old keys and deliveries failed: %s",
                             failure_reason(store, rc));
        return -1;
    }
    for (size_t i = 0, count; i < hf_batch_count(batch); i += count) {
        const hf_mutation_t *m = hf_batch_at(batch, i);
        count = order_items_run(batch, i);
        rc = count > 1 ? write_order_items(store, batch, i, count) : mutation_write(store, m);
        if (rc != SQLITE_DONE) {
            const char *subject = rc != WRITE_TYPE_UNKNOWN ? hf_record_subject(m) : NULL;
            hf_store_error_write(error, error_size, "store: %s of %s%s failed: %s",
                                 hf_record_name(m->type), subject != NULL ? subject : "(none)",
                                 count > 1 ? " or the items after it" : "",
                                 failure_reason(store, rc));
            return -1;
        }
    }
    rc = hf_sqlite_history_flush(store);
    if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: the batch's history entries failed: %s",
                             failure_reason(store, rc));
        return -1;
    }
    return 0;
}

/* COMMIT only writes the log: the syncer's threads make it durable (sync.h). */
static int sqlite_batch_commit(void *instance, uint64_t sequence, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    if (store->begun) {
        int rc = statement_run(store, STATEMENT_COMMIT);
        if (rc != SQLITE_DONE) {
            hf_store_error_write(error, error_size, "store: commit failed: %s",
                                 failure_reason(store, rc));
            return -1;
        }
        store->begun = false;
    }
    hf_syncer_written(store->syncer, sequence);
    return 0;
}

static void sqlite_batch_abort(void *instance, const char *error) {
    hf_sqlite_store_t *store = instance;
    if (store->begun) {
        store->failed_in_sync = sync_failed(store->database);
        /* SQLite may already have rolled back by itself (a full disk, an I/O error). */
        if (!sqlite3_get_autocommit(store->database)) statement_run(store, STATEMENT_ROLLBACK);
        store->begun = false;
    }
    /* The batches before this one are committed: let their syncs (by the syncer's threads)
     * settle first, so the engine, told of the failure, finds the durable state final and
     * can reload it. */
    if (store->failed_in_sync) hf_syncer_fail(store->syncer, error);
    hf_sqlite_history_forget(store);
    hf_sqlite_hold_rows_forget(store);
    hf_syncer_wait(store->syncer);
}

/* ---- Starting, durability, closing ---- */

static int sqlite_start(void *instance, hf_store_done_fn done, void *context, char *error,
                        size_t error_size) {
    hf_sqlite_store_t *store = instance;
    store->checkpointer = hf_checkpointer_start(store->database);
    const char *path = sqlite3_db_filename(store->database, "main");
    char log_path[4096];
    if (path == NULL ||
        snprintf(log_path, sizeof log_path, "%s-wal", path) >= (int)sizeof log_path) {
        hf_store_error_write(error, error_size, "store: the database has no usable file name");
        return -1;
    }
    if (sqlite3_exec(store->database, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: %s", sqlite3_errmsg(store->database));
        return -1;
    }
    store->syncer = hf_syncer_open(log_path, done, context, error, error_size);
    if (store->syncer == NULL) return -1;
    return hf_syncer_start(store->syncer, HF_STORE_SYNCERS, error, error_size);
}

static bool sqlite_durable(void *instance, uint64_t *sequence, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    *sequence = 0;
    if (store->syncer == NULL) return true;
    return hf_syncer_durable(store->syncer, sequence, error, error_size);
}

/* The log's writes as the store's VFS counts them (process-wide atomics, no lock). */
static void sqlite_stats(void *instance, hf_store_stats_t *stats) {
    hf_store_vfs_counts_t counts;
    hf_store_vfs_counts(&counts);
    stats->log_writes_asked = counts.log_writes_asked;
    stats->log_writes_made = counts.log_writes_made;
}

/* Called after the writer has stopped: the syncer covers every batch it committed. */
static void sqlite_close(void *instance) {
    hf_sqlite_store_t *store = instance;
    if (store == NULL) return;
    hf_syncer_close(store->syncer);
    hf_checkpointer_stop(store->checkpointer);
    for (int i = 0; i < STATEMENT_COUNT; i++) sqlite3_finalize(store->statements[i]);
    sqlite3_finalize(store->read_hold);
    sqlite3_finalize(store->list_holds);
    sqlite3_finalize(store->find_hold_seq);
    hf_sqlite_history_close(store);
    hf_sqlite_hold_rows_close(store);
    for (size_t i = 0; i < HF_SQLITE_ITEMS_PER_INSERT; i++)
        sqlite3_finalize(store->item_inserts[i]);
    sqlite3_close(store->reader);
    if (store->read_items != NULL) hf_rows_items_free(store->read_items);
    free(store->read_items);
    sqlite3_close(store->database);
    hf_buffer_free(&store->text);
    free(store);
}

const hf_store_backend_t hf_store_sqlite_backend = {
    .version = HF_STORE_BACKEND_VERSION,
    .scheme = "sqlite:",
    .open = sqlite_open,
    .load = hf_sqlite_tables_load,
    .read_hold = hf_sqlite_hold_read,
    .list_holds = hf_sqlite_holds_list,
    .read_history = hf_sqlite_history_read,
    .read_outbox = hf_sqlite_outbox_read,
    .outbox_pending = hf_sqlite_outbox_pending,
    .read_ticket = hf_sqlite_ticket_read,
    .read_ride = hf_sqlite_ride_read,
    .list_rides = hf_sqlite_rides_list,
    .start = sqlite_start,
    .batch_write = sqlite_batch_write,
    .batch_commit = sqlite_batch_commit,
    .batch_abort = sqlite_batch_abort,
    .durable = sqlite_durable,
    .stats = sqlite_stats,
    .close = sqlite_close,
};
