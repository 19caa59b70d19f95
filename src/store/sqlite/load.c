/* The SQLite backend's reading side (backend.h's load and read_hold): every table back at
 * start, in one read transaction, and one hold the core has forgotten, through a read-only
 * connection of the engine thread's own. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/sqlite/internal.h"

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
    const hf_sqlite_status_words_t *status; /* NULL: the status column is a number (HTTP status) */
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
    "holds", SELECT_HOLDS " ORDER BY seq", &hf_sqlite_hold_status, COLUMN_HOLD_ID};
/* One hold the core has forgotten (hf_store_read_hold). */
static const load_step_t READ_HOLD = {
    "holds", SELECT_HOLDS " WHERE id = ?1", &hf_sqlite_hold_status, COLUMN_HOLD_ID};
static const load_step_t LOAD_ORDERS = {
    "orders",
    "SELECT event_id, NULL, reservation_id, id, user_id, NULL, items, currency, payment_ref,"
    " NULL, created_at, 0, total, 0, status FROM orders ORDER BY seq",
    &hf_sqlite_order_status, COLUMN_ORDER_ID};
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
        if (sqlite3_column_bytes(statement, COLUMN_HASH) != HF_SQLITE_HASH_SIZE) {
            hf_store_error_write(error, error_size,
                                 "store: %s row %s has a hash of %d bytes, not %d", step->table,
                                 row->key, sqlite3_column_bytes(statement, COLUMN_HASH),
                                 HF_SQLITE_HASH_SIZE);
            return -1;
        }
    }
    if (step->status == NULL) {
        row->status = sqlite3_column_int(statement, COLUMN_STATUS);
        return 0;
    }
    const char *word = column_text(statement, COLUMN_STATUS);
    row->status = hf_sqlite_status_number(step->status, word);
    if (row->status < 0) {
        hf_store_error_write(error, error_size, "store: a row of %s has the unknown status \"%s\"",
                             step->table, word != NULL ? word : "NULL");
        return -1;
    }
    return 0;
}

static int load_table(hf_sqlite_store_t *store, const load_step_t *step, row_callback_t callback,
                      const hf_store_loader_t *loader, char *error, size_t error_size) {
    if (callback == NULL) return 0;
    sqlite3_stmt *statement = NULL;
    int result = -1;
    if (sqlite3_prepare_v2(store->database, step->sql, -1, &statement, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: reading %s failed: %s", step->table,
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
            hf_store_error_write(error, error_size, "store: loading %s stopped at %s (%d)",
                                 step->table, subject != NULL ? subject : "a row", result);
            goto fail;
        }
        result = -1;
    }
    if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading %s failed: %s", step->table,
                             sqlite3_errmsg(store->database));
        goto fail;
    }
    result = 0;
fail:
    sqlite3_finalize(statement);
    return result;
}

static int finished_holds_count(hf_sqlite_store_t *store, const hf_store_loader_t *loader,
                                char *error, size_t error_size) {
    char word[32];
    if (hf_sqlite_word_query(store->database,
                   "SELECT count(*) FROM holds WHERE status IN ('released', 'expired')", word,
                   sizeof word) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: counting finished holds failed: %s",
                             sqlite3_errmsg(store->database));
        return -1;
    }
    return loader->finished_holds(loader->context, strtoull(word, NULL, 10));
}

int hf_sqlite_tables_load(void *instance, const hf_store_loader_t *loader, char *error,
                          size_t error_size) {
    hf_sqlite_store_t *store = instance;
    /* One read transaction: the four tables are seen at the same instant. */
    if (sqlite3_exec(store->database, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot begin reading: %s",
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

static int reader_open(hf_sqlite_store_t *store, char *error, size_t error_size) {
    if (store->read_hold != NULL) return 0;
    const char *path = sqlite3_db_filename(store->database, "main");
    int rc = sqlite3_open_v2(path != NULL ? path : "", &store->reader,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(store->reader, HF_SQLITE_BUSY_TIMEOUT_MS);
        rc = sqlite3_prepare_v3(store->reader, READ_HOLD.sql, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->read_hold, NULL);
    }
    if (rc == SQLITE_OK) return 0;
    hf_store_error_write(error, error_size, "store: cannot open a reader of %s: %s",
                         path != NULL ? path : "?",
                         store->reader != NULL ? sqlite3_errmsg(store->reader)
                                               : sqlite3_errstr(rc));
    sqlite3_close(store->reader);
    store->reader = NULL;
    return -1;
}

int hf_sqlite_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
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
            if (result != 0)
                hf_store_error_write(error, error_size,
                                     "store: hold %s could not be taken back (%d)", hold_id,
                                     result);
        }
    } else if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading hold %s failed: %s", hold_id,
                             sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once: a statement left mid-read would keep its read transaction open and
     * stop checkpoints from recycling the log. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}
