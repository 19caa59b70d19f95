/* The SQLite backend's reading side (backend.h's load, read_hold, read_ticket, list_holds):
 * every table back at start, in one read transaction, and one hold or ticket the core has
 * forgotten, or a page of an event's holds, through a read-only connection of the engine
 * thread's own. Only the SQL and the statements are SQLite's: each row is decoded by the
 * store's one decoder (store/decoder.h), through the reader of a statement's row below. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/decoder.h"
#include "store/rows.h"
#include "store/sqlite/internal.h"

/* ---- A statement's row, as the decoder reads it ---- */

static const char *row_text(void *instance, int column, size_t *length) {
    hf_sqlite_row_t *row = instance;
    const char *text;
    int bytes;
    /* SQLite's own text of a double keeps 15 digits: 17 read back the same double. */
    if (sqlite3_column_type(row->statement, column) == SQLITE_FLOAT) {
        bytes = snprintf(row->real, sizeof row->real, "%.17g",
                         sqlite3_column_double(row->statement, column));
        text = row->real;
    } else {
        text = (const char *)sqlite3_column_text(row->statement, column);
        bytes = sqlite3_column_bytes(row->statement, column);
    }
    if (length != NULL) *length = text != NULL ? (size_t)bytes : 0;
    return text;
}

static int64_t row_integer(void *instance, int column) {
    hf_sqlite_row_t *row = instance;
    return sqlite3_column_int64(row->statement, column);
}

hf_row_reader_t hf_sqlite_row_reader(hf_sqlite_row_t *row, sqlite3_stmt *statement) {
    row->statement = statement;
    return (hf_row_reader_t){row_text, row_integer, row};
}

/* ---- Loading (before start) ---- */

#define SELECT_HOLDS "SELECT " HF_HOLD_COLUMNS " FROM holds"

/* Each kind's SELECT for a load, its columns in the decoder's order; ?1 is the time a kind
 * read from a time on starts at (hf_decoder_since). */
static const char *const LOAD_SQL[HF_ROW_KIND_COUNT] = {
    [HF_ROW_EVENT] = "SELECT " HF_EVENT_COLUMNS " FROM events ORDER BY seq",
    [HF_ROW_ALLOCATION] = "SELECT " HF_ALLOCATION_COLUMNS " FROM allocations ORDER BY seq",
    [HF_ROW_CALENDAR] = "SELECT " HF_CALENDAR_COLUMNS " FROM calendars ORDER BY seq",
    [HF_ROW_CALENDAR_RESOURCE] = "SELECT " HF_CALENDAR_RESOURCE_COLUMNS " FROM calendar_resources"
                                 " JOIN calendars ON calendars.id = calendar_resources.calendar_id"
                                 " ORDER BY calendars.seq, calendar_resources.idx",
    [HF_ROW_FINISHED_HOLDS] = "SELECT " HF_FINISHED_HOLDS_COLUMNS
                              " FROM holds WHERE status IN ('released', 'expired')",
    [HF_ROW_HOLD] = SELECT_HOLDS " ORDER BY seq",
    [HF_ROW_ORDER] = "SELECT " HF_ORDER_COLUMNS " FROM orders ORDER BY seq",
    [HF_ROW_IDEMPOTENCY] = "SELECT " HF_IDEMPOTENCY_COLUMNS(
        "hex(hash)") " FROM idempotency WHERE created_at >= ?1 ORDER BY created_at, key",
    [HF_ROW_REFUND] = "SELECT " HF_REFUND_COLUMNS " FROM refunds ORDER BY seq",
    [HF_ROW_JOB] = "SELECT " HF_JOB_COLUMNS " FROM jobs ORDER BY seq",
    [HF_ROW_JOB_OFFER] = "SELECT " HF_JOB_OFFER_COLUMNS " FROM job_offers ORDER BY seq",
    [HF_ROW_DELIVERY] = "SELECT " HF_DELIVERY_COLUMNS
                        " FROM deliveries WHERE received_at >= ?1 ORDER BY seq",
    [HF_ROW_TICKET] = "SELECT " HF_TICKET_COLUMNS " FROM tickets ORDER BY seq",
    [HF_ROW_WAITLIST] = "SELECT " HF_WAITLIST_COLUMNS " FROM waitlist ORDER BY event_id, sequence",
    [HF_ROW_ORDER_LOCK] = "SELECT " HF_ORDER_LOCK_COLUMNS " FROM order_locks ORDER BY locked_at",
    [HF_ROW_DRIVER] = "SELECT " HF_DRIVER_COLUMNS " FROM drivers ORDER BY fleet_id, driver_id",
    [HF_ROW_RIDE] = "SELECT " HF_RIDE_COLUMNS " FROM rides ORDER BY seq",
};

/* One hold the core has forgotten (hf_store_read_hold). */
static const char READ_HOLD[] = SELECT_HOLDS " WHERE id = ?1";
/* An event's holds after a seq, oldest first, whose status is one of ?3's words (",held,"), or
 * any when ?3 is empty: a range scan of the index holds_event (event_id, seq). */
static const char LIST_HOLDS[] = SELECT_HOLDS
    " WHERE event_id = ?1 AND seq > ?2"
    " AND (?3 = '' OR instr(?3, ',' || status || ',') > 0) ORDER BY seq";
static const char FIND_HOLD_SEQ[] = "SELECT seq FROM holds WHERE id = ?1 AND event_id = ?2";
/* One ticket the core has forgotten (hf_store_read_ticket). */
static const char READ_TICKET[] = "SELECT " HF_TICKET_COLUMNS " FROM tickets WHERE id = ?1";

/* Every row of the kind's table to the decoder, in order (hf_decoder_table_fn). */
static int table_load(void *instance, hf_row_kind_t kind, hf_decoder_t *decoder) {
    hf_sqlite_store_t *store = instance;
    sqlite3_stmt *statement = NULL;
    int result = -1;
    assert(LOAD_SQL[kind] != NULL);
    if (sqlite3_prepare_v2(store->database, LOAD_SQL[kind], -1, &statement, NULL) != SQLITE_OK)
        goto fail;
    int64_t since_ms;
    if (hf_decoder_since(decoder->loader, kind, &since_ms))
        sqlite3_bind_int64(statement, 1, since_ms);
    hf_sqlite_row_t row;
    hf_row_reader_t reader = hf_sqlite_row_reader(&row, statement);
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        result = hf_decoder_load_row(decoder, kind, &reader);
        if (result != 0) {
            sqlite3_finalize(statement);
            return result;
        }
    }
    if (rc == SQLITE_DONE) result = 0;
fail:
    if (result != 0)
        hf_store_error_write(decoder->error, decoder->error_size, "store: reading %s failed: %s",
                             hf_decoder_table(kind), sqlite3_errmsg(store->database));
    sqlite3_finalize(statement);
    return result;
}

int hf_sqlite_tables_load(void *instance, const hf_store_loader_t *loader, char *error,
                          size_t error_size) {
    hf_sqlite_store_t *store = instance;
    /* One read transaction: the tables are seen at the same instant. */
    if (sqlite3_exec(store->database, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot begin reading: %s",
                             sqlite3_errmsg(store->database));
        return -1;
    }
    int result = hf_decoder_load(table_load, store, loader, error, error_size);
    sqlite3_exec(store->database, "COMMIT", NULL, NULL, NULL);
    return result;
}

/* ---- Reading one forgotten hold or ticket (engine thread) ---- */

int hf_sqlite_reader_open(hf_sqlite_store_t *store, char *error, size_t error_size) {
    if (store->read_hold != NULL) return 0;
    if (store->read_items == NULL) store->read_items = calloc(1, sizeof *store->read_items);
    if (store->read_items == NULL) abort();
    const char *path = sqlite3_db_filename(store->database, "main");
    int rc = sqlite3_open_v2(path != NULL ? path : "", &store->reader,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(store->reader, HF_SQLITE_BUSY_TIMEOUT_MS);
        rc = sqlite3_prepare_v3(store->reader, READ_HOLD, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->read_hold, NULL);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(store->reader, LIST_HOLDS, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->list_holds, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(store->reader, FIND_HOLD_SEQ, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->find_hold_seq, NULL);
    if (rc == SQLITE_OK) return 0;
    hf_store_error_write(
        error, error_size, "store: cannot open a reader of %s: %s", path != NULL ? path : "?",
        store->reader != NULL ? sqlite3_errmsg(store->reader) : sqlite3_errstr(rc));
    sqlite3_finalize(store->read_hold);
    sqlite3_finalize(store->list_holds);
    sqlite3_finalize(store->find_hold_seq);
    store->read_hold = store->list_holds = store->find_hold_seq = NULL;
    sqlite3_close(store->reader);
    store->reader = NULL;
    return -1;
}

int hf_sqlite_row_read(hf_sqlite_store_t *store, sqlite3_stmt *statement, hf_row_kind_t kind,
                       const char *id, const hf_store_loader_t *loader, bool *found, char *error,
                       size_t error_size) {
    hf_decoder_t decoder = {loader, store->read_items, error, error_size};
    hf_sqlite_row_t row;
    hf_row_reader_t reader = hf_sqlite_row_reader(&row, statement);
    int result = 0;
    int rc = sqlite3_step(statement);
    *found = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW) {
        result = hf_decoder_read_row(&decoder, kind, &reader);
    } else if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading %s %s failed: %s",
                             hf_decoder_table(kind), id, sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once: a statement left mid-read would keep its read transaction open and
     * stop checkpoints from recycling the log. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}

int hf_sqlite_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    *found = false;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    sqlite3_bind_text(store->read_hold, 1, hold_id, -1, SQLITE_STATIC);
    return hf_sqlite_row_read(store, store->read_hold, HF_ROW_HOLD, hold_id, loader, found, error,
                              error_size);
}

/* Prepared at each call: a forgotten ticket is read back rarely (a poll of a ticket that
 * finished long ago), and the reader's persistent statements stay those of holds. */
int hf_sqlite_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                          bool *found, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    *found = false;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    sqlite3_stmt *statement = NULL;
    if (sqlite3_prepare_v2(store->reader, READ_TICKET, -1, &statement, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: reading ticket %s failed: %s", ticket_id,
                             sqlite3_errmsg(store->reader));
        return -1;
    }
    sqlite3_bind_text(statement, 1, ticket_id, -1, SQLITE_STATIC);
    int result = hf_sqlite_row_read(store, statement, HF_ROW_TICKET, ticket_id, loader, found,
                                    error, error_size);
    sqlite3_finalize(statement);
    return result;
}

/* ---- Listing an event's holds (engine thread) ---- */

/* The words of the statuses in mask as LIST_HOLDS matches them: ",held,expired,", or "". */
static void status_words(unsigned mask, char *out, size_t out_size) {
    size_t length = 0;
    out[0] = '\0';
    for (uint8_t i = 0; mask != 0 && i <= HF_HOLD_EXPIRED; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   hf_hold_status_name(i));
    }
}

/* The seq a listing resumes after: 0 from the first; false when after_id is no hold of the
 * event (or on an error, then written). */
static bool resume_seq(hf_sqlite_store_t *store, const hf_store_hold_query_t *query, int64_t *seq,
                       int *result, char *error, size_t error_size) {
    *seq = 0;
    *result = 0;
    if (query->after_id == NULL) return true;
    sqlite3_stmt *statement = store->find_hold_seq;
    sqlite3_bind_text(statement, 1, query->after_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, query->event_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) *seq = sqlite3_column_int64(statement, 0);
    else if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading hold %s failed: %s",
                             query->after_id, sqlite3_errmsg(store->reader));
        *result = -1;
    }
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc == SQLITE_ROW;
}

int hf_sqlite_rows_list(hf_sqlite_store_t *store, sqlite3_stmt *statement, hf_row_kind_t kind,
                        const hf_store_loader_t *loader, char *error, size_t error_size) {
    hf_decoder_t decoder = {loader, store->read_items, error, error_size};
    hf_sqlite_row_t row;
    hf_row_reader_t reader = hf_sqlite_row_reader(&row, statement);
    int result = 0, rc = SQLITE_DONE;
    while (result == 0 && (rc = sqlite3_step(statement)) == SQLITE_ROW)
        result = hf_decoder_list_row(&decoder, kind, &reader);
    if (result == HF_STORE_LIST_STOP) {
        result = 0;
    } else if (result == 0 && rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: listing %s failed: %s",
                             hf_decoder_table(kind), sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once, as a read of one row does: an open read would hold back checkpoints. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}

int hf_sqlite_holds_list(void *instance, const hf_store_hold_query_t *query,
                         const hf_store_loader_t *loader, bool *after_found, char *error,
                         size_t error_size) {
    hf_sqlite_store_t *store = instance;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    int64_t seq;
    int result;
    *after_found = resume_seq(store, query, &seq, &result, error, error_size);
    if (!*after_found) return result;
    char words[64];
    status_words(query->statuses, words, sizeof words);
    sqlite3_stmt *statement = store->list_holds;
    sqlite3_bind_text(statement, 1, query->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, seq);
    sqlite3_bind_text(statement, 3, words, -1, SQLITE_STATIC);
    return hf_sqlite_rows_list(store, statement, HF_ROW_HOLD, loader, error, error_size);
}
