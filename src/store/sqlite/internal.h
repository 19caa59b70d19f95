/* What the SQLite backend's files share (sqlite.c opens, writes and closes; load.c reads back
 * through the store's decoder, store/decoder.h): the instance behind backend.h's opaque
 * pointer, the statements, the status words the writer binds and the reader of a statement's
 * row. Not for anything outside store/sqlite/. */
#ifndef HF_STORE_SQLITE_INTERNAL_H
#define HF_STORE_SQLITE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store/sqlite/checkpoint.h"
#include "store/sqlite/sync.h"
#include "lib/buffer.h"
#include "lib/map.h"
#include "store/decoder.h"
#include "store/rows.h"
#include "store/store.h"

#define HF_SQLITE_HASH_SIZE 32
/* How long a connection waits for a lock held by another connection (an operator's sqlite3
 * shell reading, say) before its statement fails. */
#define HF_SQLITE_BUSY_TIMEOUT_MS 5000

typedef enum hf_sqlite_statement {
    STATEMENT_BEGIN,
    STATEMENT_COMMIT,
    STATEMENT_ROLLBACK,
    STATEMENT_PURGE,
    STATEMENT_EVENT_INSERT,
    STATEMENT_EVENT_SALES,
    STATEMENT_EVENT_UPDATE,
    STATEMENT_EVENT_DELETE,
    STATEMENT_EVENT_HISTORY_DELETE,
    STATEMENT_HOLD_INSERT,
    STATEMENT_HOLD_UPDATE,
    STATEMENT_HOLD_UPDATE_ROW, /* the same, for a hold whose row the writer remembers */
    STATEMENT_ORDER_INSERT,
    STATEMENT_ORDER_ITEM_INSERT,
    STATEMENT_ORDER_UPDATE,
    STATEMENT_ORDER_ITEMS_DEACTIVATE,
    STATEMENT_IDEMPOTENCY_PUT,
    STATEMENT_DELIVERY_PURGE,
    STATEMENT_DELIVERY_INSERT,
    STATEMENT_REFUND_PUT,
    STATEMENT_HISTORY_LAST,
    STATEMENT_NOTIFY_UPDATE,
    STATEMENT_TICKET_INSERT,
    STATEMENT_TICKET_UPDATE,
    STATEMENT_WAITLIST_PUT,
    STATEMENT_DRIVER_PUT, /* dispatch (dispatch.c) */
    STATEMENT_RIDE_PUT,
    STATEMENT_DRIVER_DELETE,
    STATEMENT_CALENDAR_INSERT, /* calendars (calendars.c) */
    STATEMENT_CALENDAR_RESOURCE_INSERT,
    STATEMENT_CALENDAR_SALES,
    STATEMENT_CALENDAR_USE_INSERT,
    STATEMENT_ALLOCATION_PUT, /* allocations (calendars.c's neighbour, sqlite.c) */
    STATEMENT_JOB_INSERT,     /* cancel jobs (jobs.c) */
    STATEMENT_JOB_UPDATE,
    STATEMENT_JOB_OFFER_PUT,
    STATEMENT_ORDER_LOCK_PUT, /* order locks (locks.c) */
    STATEMENT_ORDER_LOCK_DELETE,
    STATEMENT_COUNT
} hf_sqlite_statement_t;

/* Threads: the connection is used by the caller of open and load until start, then by the
 * store's writer thread alone (backend.h); reader and read_hold by the engine thread. */
/* History entries joined at read time with what each is about (store.h), their columns in the
 * decoder's order (store/decoder.h's HF_COLUMN_HISTORY_...): the hold its data names
 * (holds.id is unique), or else the order (orders.id is unique), so an entry reads alone though
 * its row stores only its own fields; then the entry's notification state. The left joins keep
 * the history's key order (history is the outer loop of the range scan, no sort), so rows
 * stream in seq order and a reader that stops early reads no further. PostgreSQL's read
 * (postgres/load.c) is the same query. A statement adds its WHERE, ORDER BY and LIMIT. */
#define HF_SQLITE_ENTRY_RESERVATION "json_extract(e.data, '$.reservation_id')"
#define HF_SQLITE_ENTRY_ORDER "json_extract(e.data, '$.order_id')"
#define HF_SQLITE_HISTORY_SELECT \
    "SELECT e.seq, e.type, e.at, e.data," \
    " " HF_SQLITE_ENTRY_RESERVATION " IS NOT NULL OR " HF_SQLITE_ENTRY_ORDER " IS NOT NULL," \
    " COALESCE(" HF_SQLITE_ENTRY_RESERVATION \
    ", o.reservation_id), COALESCE(h.user_id, o.user_id)," \
    " COALESCE(h.items, o.items), e.event_id, e.notify_status, e.notify_attempts," \
    " e.notify_last_status, e.notify_last_error, e.notify_next_at" \
    " FROM history e" \
    " LEFT JOIN holds h ON h.id = " HF_SQLITE_ENTRY_RESERVATION \
    " LEFT JOIN orders o ON " HF_SQLITE_ENTRY_RESERVATION \
    " IS NULL AND o.id = " HF_SQLITE_ENTRY_ORDER
#define HF_SQLITE_OUTBOX_READS 4

/* Entries of the audit history written by one INSERT at most (history.c): a batch's entries
 * go in groups of this many, the rest at the batch's end. */
#define HF_SQLITE_HISTORY_ROWS_PER_INSERT 8

/* An order's items written by one INSERT at most (sqlite.c). */
#define HF_SQLITE_ITEMS_PER_INSERT 8

/* An entry numbered and waiting for its INSERT: event_id and type borrowed from the batch (and
 * static words), its data in the store's history_data. */
typedef struct hf_sqlite_history_row {
    const char *event_id, *type;
    int64_t seq, at_ms;
    size_t data_offset, data_length;
} hf_sqlite_history_row_t;

typedef struct hf_sqlite_store {
    sqlite3 *database;
    sqlite3_stmt *statements[STATEMENT_COUNT];
    /* A read-only connection of the engine thread's own, opened at its first lookup of a
     * hold the core has forgotten (hf_store_read_hold): the writer owns the main one. */
    sqlite3 *reader;
    sqlite3_stmt *read_hold;
    sqlite3_stmt *list_holds;    /* the staff's listing (hf_store_list_holds) */
    sqlite3_stmt *find_hold_seq; /* where a listing resumes: the seq of its after hold */
    hf_rows_items_t *read_items; /* the parsed lines of the hold read_hold reads */
    sqlite3_stmt *read_history;  /* a page of an event's history (hf_store_read_history) */
    /* The outbox's reads (outbox.c): a unit's pending entries, a page across units, a count. */
    sqlite3_stmt *read_outbox[HF_SQLITE_OUTBOX_READS];
    /* The writer only: the last seq of each event's history it has written or read (by
     * event id, values indexing history_seqs); forgotten when a batch fails, since its
     * numbers were rolled back with it. */
    hf_map_t history_events;
    int64_t *history_seqs;
    size_t history_count, history_capacity;
    /* The writer only: the entries numbered but not yet written (history.c), their data in
     * history_data, and the INSERTs of 1 to HF_SQLITE_HISTORY_ROWS_PER_INSERT of them. */
    hf_sqlite_history_row_t history_pending[HF_SQLITE_HISTORY_ROWS_PER_INSERT];
    size_t history_pending_count;
    sqlite3_stmt *history_inserts[HF_SQLITE_HISTORY_ROWS_PER_INSERT];
    hf_buffer_t history_data;
    /* The writer only: the INSERTs of 2 to HF_SQLITE_ITEMS_PER_INSERT items of an order
     * (sqlite.c), prepared at their first use ([count - 1]). */
    sqlite3_stmt *item_inserts[HF_SQLITE_ITEMS_PER_INSERT];
    /* The writer only: the seqs of the holds it inserted last (hold_rows.c), in two
     * generations, hold_rows_newer the one being filled. */
    hf_map_t hold_rows[2];
    int hold_rows_newer;
    uint64_t batches_since_purge;    /* the writer only */
    bool begun;                      /* the writer only: the batch's transaction began */
    bool failed_in_sync;             /* the writer only: the last failure was an fsync */
    hf_buffer_t text;                /* the writer only: a row's JSON (store/rows.h) */
    hf_checkpointer_t *checkpointer; /* started with the writer */
    hf_syncer_t *syncer;             /* started with the writer */
} hf_sqlite_store_t;

/* The holds the writer remembers (hold_rows.c): at most this many in each of two
 * generations, about 80 bytes each with their ids (a few MiB in all). */
#define HF_SQLITE_HOLD_ROWS_MAX 65536u

/* A hold's id to its row's seq, for the writer's updates (hold_rows.c): remember after its
 * insert; find answers the seq, or 0 when it is not remembered; forget after a failed batch
 * (its seqs were rolled back); init at open and close at close. */
void hf_sqlite_hold_rows_init(hf_sqlite_store_t *store);
void hf_sqlite_hold_rows_remember(hf_sqlite_store_t *store, const char *hold_id, int64_t seq);
int64_t hf_sqlite_hold_rows_find(const hf_sqlite_store_t *store, const char *hold_id);
void hf_sqlite_hold_rows_forget(hf_sqlite_store_t *store);
void hf_sqlite_hold_rows_close(hf_sqlite_store_t *store);

/* Runs one SQL text whose single row's first column is a word, and copies that word ("" when
 * there is no row). Returns SQLITE_OK or the error code. */
int hf_sqlite_word_query(sqlite3 *database, const char *sql, char *word, size_t word_size);
/* Creates the tables when missing (schema.c), migrates an older version's database, and
 * refuses a version this build does not know; 0, or -1 with a sentence in error. */
int hf_sqlite_schema_open(sqlite3 *database, const char *path, char *error, size_t error_size);

/* Opens the engine thread's read-only connection and its statements, once. Returns 0, or -1
 * with a sentence in error (load.c). */
int hf_sqlite_reader_open(hf_sqlite_store_t *store, char *error, size_t error_size);

/* The audit history (history.c). append numbers the entry of one record of the batch, when
 * it makes one (store/history.h), after the event's last, and writes it with the entries after
 * it (HF_SQLITE_HISTORY_ROWS_PER_INSERT at a time); returns SQLITE_DONE or SQLite's error
 * code. forget drops the numbers after a failed batch; close frees what the
 * history holds (before the reader connection closes). */
int hf_sqlite_history_append(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* Writes the entries append numbered and has not written yet: at the batch's end, and before
 * a record that changes the history's rows itself. SQLITE_DONE or the error code. */
int hf_sqlite_history_flush(hf_sqlite_store_t *store);
void hf_sqlite_history_forget(hf_sqlite_store_t *store);
/* The event's history was deleted with it: a new event of that id numbers from 1 again. */
void hf_sqlite_history_restart(hf_sqlite_store_t *store, const char *event_id);
void hf_sqlite_history_close(hf_sqlite_store_t *store);
/* Each row of statement (bound, columns HF_SQLITE_HISTORY_SELECT's) through the decoder to
 * entry, until it stops, fails or rows run out; unit names the rows in a message. */
int hf_sqlite_history_rows(hf_sqlite_store_t *store, sqlite3_stmt *statement, const char *unit,
                           hf_store_history_fn entry, void *context, char *error,
                           size_t error_size);
/* The outbox (outbox.c): the backend's read_outbox and outbox_pending. */
int hf_sqlite_outbox_read(void *instance, const hf_store_outbox_query_t *query,
                          hf_store_history_fn entry, void *context, char *error, size_t error_size);
int hf_sqlite_outbox_pending(void *instance, const char *unit, int64_t *pending, int64_t *last_seq,
                             char *error, size_t error_size);
int hf_sqlite_history_read(void *instance, const hf_store_history_query_t *query,
                           hf_store_history_fn entry, void *context, char *error,
                           size_t error_size);

/* Dispatch's rows (dispatch.c): a driver's or a ride's record upserted (SQLITE_DONE or the
 * error code); load.c reads the tables back at load. */
int hf_sqlite_driver_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
int hf_sqlite_ride_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* The backend's read_ride and list_rides, on the engine thread's reader (dispatch.c). */
int hf_sqlite_ride_read(void *instance, const char *ride_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size);
int hf_sqlite_rides_list(void *instance, const hf_store_ride_query_t *query,
                         const hf_store_loader_t *loader, bool *after_found, char *error,
                         size_t error_size);

/* Calendars' rows (calendars.c): SQLITE_DONE or the error code. */
int hf_sqlite_calendar_create(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
int hf_sqlite_calendar_resources(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
int hf_sqlite_calendar_sales(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* Cancel jobs (jobs.c): the job's row at its cancel, at each step, and its outcomes. */
int hf_sqlite_event_cancel(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
int hf_sqlite_job_update(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
int hf_sqlite_job_offer_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* An allocation whole (API.md section 14), upserted (allocations.c). */
int hf_sqlite_allocation_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* An order's lock (core/locks.h): its row while locked, deleted when it ends (locks.c), with
 * its statements in sqlite.c's table and its write under the name that table takes. */
int hf_sqlite_order_lock_write(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
#define write_order_lock hf_sqlite_order_lock_write
#define HF_SQLITE_ORDER_LOCK_STATEMENTS \
    [STATEMENT_ORDER_LOCK_PUT] = "INSERT OR REPLACE INTO order_locks(order_id, event_id," \
                                 " hold_id, hold_unit, locked_at) VALUES(?1, ?2, ?3, ?4, ?5)", \
    [STATEMENT_ORDER_LOCK_DELETE] = "DELETE FROM order_locks WHERE order_id = ?1"
/* A waitlist entry as it stands (API.md section 14), upserted (waitlist.c). */
int hf_sqlite_waitlist_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation);
/* The typed rows of a calendar hold's or order's uses (owner: its id). */
int hf_sqlite_calendar_uses(hf_sqlite_store_t *store, const char *owner_id, const char *calendar_id,
                            const hf_mutation_uses_t *uses);

/* A statement's current row as the decoder reads it (load.c): real holds a double's text. */
typedef struct hf_sqlite_row {
    sqlite3_stmt *statement;
    char real[32];
} hf_sqlite_row_t;

/* The reader of statement's current row, over row (which must outlive it). */
hf_row_reader_t hf_sqlite_row_reader(hf_sqlite_row_t *row, sqlite3_stmt *statement);
/* Steps statement (of the reader connection, its parameters bound) for the one row of kind it
 * reads, *found when there is one, decoded to loader (hf_decoder_read_row; id names it in a
 * sentence); then resets it. Returns 0, -1 or the callback's value, with a sentence in error. */
int hf_sqlite_row_read(hf_sqlite_store_t *store, sqlite3_stmt *statement, hf_row_kind_t kind,
                       const char *id, const hf_store_loader_t *loader, bool *found, char *error,
                       size_t error_size);
/* Steps statement (a listing of kind on the reader connection, its parameters bound), each row
 * decoded to loader until the callback returns HF_STORE_LIST_STOP (0 then) or another non-zero
 * value, or rows run out; then resets it. Returns 0, -1 or the callback's value, with a
 * sentence in error. */
int hf_sqlite_rows_list(hf_sqlite_store_t *store, sqlite3_stmt *statement, hf_row_kind_t kind,
                        const hf_store_loader_t *loader, char *error, size_t error_size);

/* The backend's load, read_hold, read_ticket and list_holds (load.c). */
int hf_sqlite_tables_load(void *instance, const hf_store_loader_t *loader, char *error,
                          size_t error_size);
int hf_sqlite_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size);
int hf_sqlite_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                          bool *found, char *error, size_t error_size);
int hf_sqlite_holds_list(void *instance, const hf_store_hold_query_t *query,
                         const hf_store_loader_t *loader, bool *after_found, char *error,
                         size_t error_size);

#endif
