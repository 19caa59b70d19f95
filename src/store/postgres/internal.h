/* What the PostgreSQL backend's files share (postgres.c opens, writes and closes; load.c reads
 * back through the store's decoder, store/decoder.h; lease.c keeps the units' leases): the
 * instance behind backend.h's opaque pointer and the reader of a result's row. Not for
 * anything outside store/postgres/. */
#ifndef HF_STORE_POSTGRES_INTERNAL_H
#define HF_STORE_POSTGRES_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "lib/buffer.h"
#include "lib/limits.h"
#include "store/backend.h"
#include "store/decoder.h"
#include "lib/map.h"
#include "store/rows.h"
#include "store/store.h"

/* How long a batch, a read or a lease statement may wait for PostgreSQL before it fails: the
 * contract's bound is 5 s for a 503 while the database is unreachable (API.md section 11), and
 * the answer leaves a little after the wait ends. Connecting has the same bound. */
#define HF_PG_WAIT_MS 4000
#define HF_PG_WAIT_TEXT "4"
/* The schema's version in meta: SQLite's number for the same tables (backend.h). */
#define HF_PG_SCHEMA_VERSION HF_STORE_SQLITE_SCHEMA_VERSION
/* Version 7 to 8 (postgres.c's SCHEMA, before the version moves): refunds gain order_id (a
 * paid order's cancel owes one) and reservation_id may be NULL (a booking has no hold). Only
 * a version 5 to 7 database is altered, so a start of a current one takes no table lock. */
#define HF_PG_REFUNDS_MIGRATION \
    "DO $m$ BEGIN" \
    "  IF (SELECT value FROM meta WHERE key = 'schema_version') IN ('5', '6', '7') THEN" \
    "    ALTER TABLE refunds ADD COLUMN IF NOT EXISTS order_id TEXT;" \
    "    ALTER TABLE refunds ALTER COLUMN reservation_id DROP NOT NULL;" \
    "  END IF; END $m$;"

/* The multi-row statements of a batch (runs.c). */
typedef enum hf_pg_run_kind {
    HF_PG_RUN_NONE,
    HF_PG_RUN_HOLD_INSERT,
    HF_PG_RUN_HOLD_UPDATE,
    HF_PG_RUN_HISTORY,
    HF_PG_RUN_KINDS
} hf_pg_run_kind_t;
#define HF_PG_RUN_COLUMNS_MAX 9

/* Tags of the pipeline's queries that are not one record's (postgres.c names a failure by
 * its tag): at or above 0 a tag is the index of the record that began the query. */
enum {
    TAG_BEGIN = -1,
    TAG_FENCE = -2,
    TAG_PURGE = -3,
    TAG_COMMIT = -4,
    TAG_HISTORY = -5,
    TAG_SYNC = -6 /* a sync point between bursts of batches: no batch's */
};

/* Batches the writer sends before the first one's COMMIT has answered (lib/limits.h). */
#define HF_PG_SENT_MAX HF_STORE_BATCHES_OVERLAP_MAX

/* Rows of one kind gathered as one text array literal per column, sent as one statement. */
typedef struct hf_pg_run {
    hf_pg_run_kind_t kind;
    size_t rows;
    int32_t tag; /* the first record's */
    hf_buffer_t arrays[HF_PG_RUN_COLUMNS_MAX];
    hf_map_t ids; /* hold updates: the holds already in the run */
} hf_pg_run_t;

/* Threads: writer is used by the caller of open and load until start, then by the writer
 * thread (hf-store) alone; reader by the engine thread (read_hold, list_holds, read_history);
 * leases (and everything under lease_mutex) by the lease methods' caller. The fencing map
 * (units to epochs) is shared by the lease caller and the writer, under lease_mutex. */
typedef struct hf_pg_store {
    char *url;
    PGconn *writer;
    bool writer_ready;       /* statements prepared, pipeline mode entered */
    atomic_int writer_pid;   /* the writer's session, recorded in its leases */
    const hf_batch_t *batch; /* the batch being written */
    /* The batches sent and not yet finished, oldest first, to name a failed record. */
    const hf_batch_t *sent[HF_PG_SENT_MAX];
    size_t sent_count;
    double read_deadline; /* when the wait for the next result gives up */
    size_t queued;        /* queries queued in the pipeline (read back or not) */
    size_t tags_read;     /* of them, those whose result was read */
    int32_t *tags;        /* per queued query: the record's index, or below 0 */
    size_t tags_capacity;
    uint64_t batches_since_purge;
    hf_buffer_t text;        /* a row's JSON while its query is queued */
    hf_buffer_t history;     /* an entry's data while its query is queued */
    hf_buffer_t fence;       /* the fence's array literals */
    hf_pg_run_t run;         /* the writer's open run of hold rows */
    hf_pg_run_t history_run; /* the writer's history entries of the batch */

    PGconn *reader;

    pthread_mutex_t lease_mutex;
    PGconn *leases;
    char *node_id;          /* set by the first lease_acquire: fencing is on */
    hf_map_t epochs;        /* unit -> index into epoch_values */
    uint64_t *epoch_values; /* 0: the lease was lost */
    char **epoch_units;     /* the units, in the order of epoch_values */
    hf_buffer_t held;       /* the renewal's array literal of the units held */
    size_t epoch_count, epoch_capacity;
    hf_rows_items_t *read_items; /* the reader's parsed lines */
} hf_pg_store_t;

/* Connects to url with the backend's bounded waits (connect, keepalives, TCP timeout); NULL
 * with a sentence in error. */
PGconn *hf_pg_connect(const char *url, char *error, size_t error_size);
/* Runs one statement (params in text) and waits at most HF_PG_WAIT_MS for its result; NULL
 * with a sentence in error when it failed, did not answer, or the connection broke (which
 * then is closed and set to NULL for the next call to reconnect). */
PGresult *hf_pg_exec(PGconn **connection, const char *sql, int count, const char *const *values,
                     char *error, size_t error_size);

/* The schema's SQL (schema.c): every table, created when missing, and the migrations, as one
 * transaction; static. */
extern const char hf_pg_schema[];

/* The word of a hold or order status, as the store writes it; NULL out of range. */
const char *hf_pg_hold_word(int status);
const char *hf_pg_order_word(int status);

/* The results of a unit's statements, read on the lease connection by unit_fetch (on a
 * worker thread) and delivered later by unit_deliver (on the engine's): a PGresult belongs to
 * no connection, so another thread may read and clear it. */
typedef struct hf_pg_kept {
    PGresult **results;
    size_t count, capacity, next;
} hf_pg_kept_t;

/* Where a load's statements go: run on connection and delivered (kept NULL); run on
 * connection and kept, not delivered (both set: a fetch); or handed back from kept in the
 * order they were run, and delivered (connection NULL: a delivery, no I/O). */
typedef struct hf_pg_source {
    PGconn **connection;
    hf_pg_kept_t *kept;
} hf_pg_source_t;

/* hf_pg_exec through a source (above); NULL with a sentence in error. */
PGresult *hf_pg_source_exec(hf_pg_source_t *source, const char *sql, int count,
                            const char *const *values, char *error, size_t error_size);
/* True when source is fetching: result is then kept for the delivery (the caller neither
 * delivers nor clears it). */
bool hf_pg_source_keeps(hf_pg_source_t *source, PGresult *result);
void hf_pg_kept_free(hf_pg_kept_t *kept);

/* A result's row as the decoder reads it (load.c): row is its number, which a loop moves. */
typedef struct hf_pg_row {
    PGresult *result;
    int row;
} hf_pg_row_t;

/* The reader of result's rows, over row (set at the first; it must outlive the reader). */
hf_row_reader_t hf_pg_row_reader(hf_pg_row_t *row, PGresult *result);
/* One forgotten row of kind read back by its id on the reader connection (select: its SELECT,
 * $1 the id): *found when there is one, decoded to loader (hf_decoder_read_row). Returns 0, -1
 * or the callback's value, with a sentence in error. */
int hf_pg_row_read(hf_pg_store_t *store, hf_row_kind_t kind, const char *select, const char *id,
                   const hf_store_loader_t *loader, bool *found, char *error, size_t error_size);
/* Each row of result (a listing of kind on the reader connection) decoded to loader until the
 * callback returns non-zero (HF_STORE_LIST_STOP: the listing's end) or rows run out;
 * *last_seq is the last row's seq_column. Returns 0, -1 or the callback's value, with a
 * sentence in error but for HF_STORE_LIST_STOP. */
int hf_pg_rows_list(hf_pg_store_t *store, PGresult *result, hf_row_kind_t kind, int seq_column,
                    const hf_store_loader_t *loader, int64_t *last_seq, char *error,
                    size_t error_size);

/* A paged listing's query: its SQL takes the parent's id ($1), the seq to resume after ($2),
 * the status words (",a,b," or "": $3) and a row count ($4), ordered by seq. */
typedef struct hf_pg_listing {
    const char *sql;
    hf_row_kind_t kind;
    int seq_column;
} hf_pg_listing_t;

/* Every row of the listing after seq, read a page of rows per round trip on the reader
 * connection and decoded to loader until its callback stops it (HF_STORE_LIST_STOP) or rows
 * run out. Returns 0, -1 or the callback's value, with a sentence in error. */
int hf_pg_listing_read(hf_pg_store_t *store, const hf_pg_listing_t *listing, const char *parent,
                       int64_t seq, const char *words, const hf_store_loader_t *loader, char *error,
                       size_t error_size);

/* Reading (load.c), each row through the store's decoder (store/decoder.h). unit NULL: every
 * row (load); else the rows of one unit. */
int hf_pg_tables_load(hf_pg_source_t *source, const char *unit, const hf_store_loader_t *loader,
                      char *error, size_t error_size);
int hf_pg_load(void *instance, const hf_store_loader_t *loader, char *error, size_t error_size);
int hf_pg_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                    bool *found, char *error, size_t error_size);
int hf_pg_holds_list(void *instance, const hf_store_hold_query_t *query,
                     const hf_store_loader_t *loader, bool *after_found, char *error,
                     size_t error_size);
int hf_pg_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                      bool *found, char *error, size_t error_size);
/* History entries joined with what each is about, as SQLite's (sqlite/internal.h), columns in
 * the decoder's order: the rows the subquery's WHERE (with its ORDER BY and LIMIT) picks, each
 * joined with the hold its data names or else the order, by their unique ids (the data's two
 * ids are read once each), then ordered by order. */
#define HF_PG_HISTORY_SELECT(where, order) \
    "SELECT s.seq, s.type, s.at, s.data, (s.rid IS NOT NULL OR s.oid IS NOT NULL)::int," \
    " COALESCE(s.rid, o.reservation_id), COALESCE(h.user_id, o.user_id)," \
    " COALESCE(h.items, o.items), s.event_id, s.notify_status, s.notify_attempts," \
    " s.notify_last_status, s.notify_last_error, s.notify_next_at" \
    " FROM (SELECT event_id, seq, type, at, data, data::json ->> 'reservation_id' AS rid," \
    "   data::json ->> 'order_id' AS oid, notify_status, notify_attempts, notify_last_status," \
    "   notify_last_error, notify_next_at FROM history " where ") s" \
    " LEFT JOIN holds h ON h.id = s.rid" \
    " LEFT JOIN orders o ON s.rid IS NULL AND o.id = s.oid" \
    " ORDER BY " order
/* The outbox (outbox.c): the backend's read_outbox and outbox_pending. */
int hf_pg_outbox_read(void *instance, const hf_store_outbox_query_t *query,
                      hf_store_history_fn entry, void *context, char *error, size_t error_size);
int hf_pg_outbox_pending(void *instance, const char *unit, int64_t *pending, int64_t *last_seq,
                         char *error, size_t error_size);
int hf_pg_history_read(void *instance, const hf_store_history_query_t *query,
                       hf_store_history_fn entry, void *context, char *error, size_t error_size);

/* Leases (lease.c). fence_write appends the fence's query for the batch's units to the
 * pipeline (nothing when fencing is off); returns 0 or -1 with a sentence in error. */
int hf_pg_fence_write(hf_pg_store_t *store, const hf_batch_t *batch, char *error,
                      size_t error_size);
void hf_pg_leases_close(hf_pg_store_t *store);
int hf_pg_lease_acquire(void *instance, const char *node_id, const char *unit, uint64_t *epoch,
                        bool *acquired, char *error, size_t error_size);
int hf_pg_lease_renew(void *instance, const char *node_id, const char *address, size_t *renewed,
                      char *error, size_t error_size);
int hf_pg_lease_release(void *instance, const char *node_id, char *error, size_t error_size);
int hf_pg_lease_list(void *instance, hf_store_node_fn node, hf_store_lease_fn lease, void *context,
                     char *error, size_t error_size);
int hf_pg_unit_load(void *instance, const char *unit, const hf_store_loader_t *loader, char *error,
                    size_t error_size);
int hf_pg_unit_fetch(void *instance, const char *unit, const hf_store_loader_t *loader, void **rows,
                     char *error, size_t error_size);
int hf_pg_unit_deliver(void *instance, void *rows, const hf_store_loader_t *loader, char *error,
                       size_t error_size);
void hf_pg_unit_rows_free(void *rows);
int hf_pg_setting_claim(void *instance, const char *key, const char *proposed, char *value,
                        size_t value_size, char *error, size_t error_size);
int hf_pg_unit_find(void *instance, const char *kind, const char *id, char *unit, size_t unit_size,
                    bool *found, char *error, size_t error_size);

/* The writer's pipeline (postgres.c): a query's tag pushed without a flush request; a text
 * query queued (libpq copies the values at once); a failed send reported (the connection
 * dropped), returning -1; a wait for a result until deadline or, with wake_fd at 0 or above,
 * until wake_fd is readable first (*woken, true returned); a message's trailing newlines cut. */
void hf_pg_tag_push(hf_pg_store_t *store, int32_t tag);
bool hf_pg_queue_text(hf_pg_store_t *store, const char *sql, int count, const char *const *values,
                      int32_t tag);
int hf_pg_send_failed(hf_pg_store_t *store, char *error, size_t error_size);
bool hf_pg_input_wait(PGconn *connection, double deadline, int wake_fd, bool *woken, char *error,
                      size_t error_size);
void hf_pg_message_trim(char *text);
/* The batches in flight (inflight.c): backend.h's batch_send, batch_finish, batch_commit and
 * batch_abort. */
int hf_pg_batch_send(void *instance, uint64_t sequence, char *error, size_t error_size);
int hf_pg_batch_finish(void *instance, uint64_t sequence, int wake_fd, bool *woken, char *error,
                       size_t error_size);
int hf_pg_batch_commit(void *instance, uint64_t sequence, char *error, size_t error_size);
void hf_pg_batch_abort(void *instance, const char *error);

/* Queues the fence with its three values (units, node, epochs) on the writer (postgres.c). */
bool hf_pg_queue_fence(hf_pg_store_t *store, const char *const *values);

/* Queues the prepared statement name with text values, tagged (postgres.c). */
bool hf_pg_queue_named(hf_pg_store_t *store, const char *name, int count, const char *const *values,
                       int32_t tag);

/* Runs (runs.c): prepare on a new writer connection; add a record's row to the open run
 * (flushing the run of another kind first); flush queues the open run. The history run is
 * queued by flushing store->history_run after the batch's records. */
int hf_pg_runs_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_run_hold_insert(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag);
bool hf_pg_run_hold_update(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag);
void hf_pg_history_add(hf_pg_store_t *store, const hf_mutation_t *m);
bool hf_pg_run_flush(hf_pg_store_t *store, hf_pg_run_t *run);
void hf_pg_runs_free(hf_pg_store_t *store);

/* Dispatch (dispatch.c): its statements on a new writer connection and a driver's or a ride's
 * upsert queued (load.c reads drivers and rides back with the other tables). */
int hf_pg_dispatch_prepare(PGconn *connection, char *error, size_t error_size);
/* Events (events.c): their statements on a new writer connection, and a
 * record of each kind queued in the batch's pipeline (rows of postgres.c's table of writes). */
int hf_pg_events_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_event_create_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_event_sales_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_event_update_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_event_delete_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_driver_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_ride_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
/* The backend's read_ride and list_rides, on the reader connection (dispatch.c). */
int hf_pg_ride_read(void *instance, const char *ride_id, const hf_store_loader_t *loader,
                    bool *found, char *error, size_t error_size);
int hf_pg_rides_list(void *instance, const hf_store_ride_query_t *query,
                     const hf_store_loader_t *loader, bool *after_found, char *error,
                     size_t error_size);
/* Connects the engine thread's reader when it is not (load.c); 0, or -1 with a sentence. */
int hf_pg_reader_open(hf_pg_store_t *store, char *error, size_t error_size);

/* Dispatch's tables (API.md section 8), SQLite's with REAL as DOUBLE PRECISION: part of the
 * schema's transaction (postgres.c). */
#define HF_PG_DISPATCH_TABLES \
    "CREATE TABLE IF NOT EXISTS drivers(" \
    "  fleet_id TEXT NOT NULL, driver_id TEXT NOT NULL, lat DOUBLE PRECISION NOT NULL," \
    "  lng DOUBLE PRECISION NOT NULL, rating DOUBLE PRECISION NOT NULL," \
    "  available INTEGER NOT NULL, updated_at BIGINT NOT NULL," \
    "  PRIMARY KEY(fleet_id, driver_id));" \
    "CREATE TABLE IF NOT EXISTS rides(" \
    "  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, id TEXT UNIQUE NOT NULL," \
    "  fleet_id TEXT NOT NULL, rider_id TEXT NOT NULL, lat DOUBLE PRECISION NOT NULL," \
    "  lng DOUBLE PRECISION NOT NULL, radius_m BIGINT NOT NULL, offer_ttl_ms BIGINT NOT NULL," \
    "  status TEXT NOT NULL, created_at BIGINT NOT NULL, offer_driver_id TEXT," \
    "  offer_distance_m BIGINT, offer_expires_at BIGINT, driver_id TEXT," \
    "  declined TEXT NOT NULL, lapsed TEXT NOT NULL, updated_at BIGINT NOT NULL);" \
    "CREATE INDEX IF NOT EXISTS rides_fleet ON rides(fleet_id, seq);"

/* Calendars' tables (API.md section 12), SQLite's (store/sqlite/schema.c says why). */
#define HF_PG_CALENDAR_TABLES \
    "CREATE TABLE IF NOT EXISTS calendars(" \
    "  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, id TEXT UNIQUE NOT NULL," \
    "  definition TEXT NOT NULL, created_at BIGINT NOT NULL," \
    "  sales_open INTEGER NOT NULL DEFAULT 1);" \
    "CREATE TABLE IF NOT EXISTS calendar_resources(" \
    "  calendar_id TEXT NOT NULL, idx BIGINT NOT NULL, id TEXT NOT NULL," \
    "  definition TEXT NOT NULL, PRIMARY KEY(calendar_id, idx));" \
    "CREATE TABLE IF NOT EXISTS calendar_uses(" \
    "  owner_id TEXT NOT NULL, calendar_id TEXT NOT NULL, resource TEXT NOT NULL," \
    "  from_step BIGINT NOT NULL, to_step BIGINT NOT NULL, quantity BIGINT NOT NULL);" \
    "CREATE INDEX IF NOT EXISTS calendar_uses_owner ON calendar_uses(owner_id);" \
    "CREATE INDEX IF NOT EXISTS calendar_uses_span ON calendar_uses(calendar_id, resource," \
    "  from_step);"

/* Cancel jobs' tables (API.md section 13, SQLite's version 11: store/sqlite/schema.c). */
#define HF_PG_JOB_TABLES \
    "CREATE TABLE IF NOT EXISTS jobs(" \
    "  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, id TEXT UNIQUE NOT NULL," \
    "  event_id TEXT UNIQUE NOT NULL, rebook_to TEXT, offer_ttl_ms BIGINT NOT NULL," \
    "  orders BIGINT NOT NULL, cursor BIGINT NOT NULL, offered BIGINT NOT NULL," \
    "  accepted BIGINT NOT NULL, refunded BIGINT NOT NULL, status TEXT NOT NULL," \
    "  created_at BIGINT NOT NULL);" \
    "CREATE TABLE IF NOT EXISTS job_offers(" \
    "  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, job_id TEXT NOT NULL," \
    "  order_id TEXT NOT NULL, user_id TEXT NOT NULL, reservation_id TEXT," \
    "  status TEXT NOT NULL, expires_at BIGINT, UNIQUE(job_id, order_id));"

/* Cancel jobs' writes (jobs.c), prepared once on the writer. */
int hf_pg_jobs_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_event_cancel_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_job_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_job_offer_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);

/* Calendars' writes (calendars.c): prepared once on the writer, then rows of postgres.c's
 * table of writes; uses_queue writes the typed rows of a calendar hold's or order's uses. */
int hf_pg_calendars_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_calendar_create_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_calendar_resources_queue(hf_pg_store_t *store, const hf_mutation_t *mutation,
                                    int32_t tag);
bool hf_pg_calendar_sales_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
bool hf_pg_calendar_uses_queue(hf_pg_store_t *store, const char *owner_id, const char *calendar_id,
                               const hf_mutation_uses_t *uses, int32_t tag);

/* Allocations' table (API.md section 14), SQLite's (store/sqlite/schema.c says why), and its
 * write (allocations.c), prepared once on the writer. */
#define HF_PG_ALLOCATION_TABLES \
    "CREATE TABLE IF NOT EXISTS allocations(" \
    "  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, event_id TEXT NOT NULL," \
    "  id TEXT NOT NULL, items TEXT NOT NULL, created_at BIGINT NOT NULL," \
    "  updated_at BIGINT NOT NULL, UNIQUE(event_id, id));"
int hf_pg_allocations_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_allocation_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);

/* Order locks (core/locks.h), as SQLite's (store/sqlite/schema.c), and their writes
 * (locks.c), prepared once on the writer. */
#define HF_PG_ORDER_LOCK_TABLES \
    "CREATE TABLE IF NOT EXISTS order_locks(" \
    "  order_id TEXT PRIMARY KEY, event_id TEXT NOT NULL, hold_id TEXT NOT NULL," \
    "  hold_unit TEXT NOT NULL, locked_at BIGINT NOT NULL);" \
    "CREATE INDEX IF NOT EXISTS order_locks_event ON order_locks(event_id);"
int hf_pg_order_locks_prepare(PGconn *connection, char *error, size_t error_size);
bool hf_pg_order_lock_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);

/* Writes a PostgreSQL text array literal of the strings into out: {"a","b"}. Pure. */
void hf_pg_array_write(hf_buffer_t *out, const char *const *items, size_t count);

/* The idempotency keys, each kept per unit (API.md section 11): the unit of the request that
 * used it (store.h's HF_STORE_UNIT_NONE for none). A table made before keys had units gets the
 * column, its keys becoming records of no unit, and the key (unit, key). */
#define HF_PG_IDEMPOTENCY_TABLE \
    "CREATE TABLE IF NOT EXISTS idempotency(" \
    "  unit TEXT NOT NULL DEFAULT '" HF_STORE_UNIT_NONE "', key TEXT NOT NULL," \
    "  hash BYTEA NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL," \
    "  created_at BIGINT NOT NULL, PRIMARY KEY(unit, key));" \
    "ALTER TABLE idempotency ADD COLUMN IF NOT EXISTS unit TEXT NOT NULL" \
    "  DEFAULT '" HF_STORE_UNIT_NONE "';" \
    "DO $m$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a" \
    "    ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)" \
    "    WHERE i.indrelid = 'idempotency'::regclass AND i.indisprimary AND a.attname = 'unit')" \
    "  THEN ALTER TABLE idempotency DROP CONSTRAINT idempotency_pkey;" \
    "    ALTER TABLE idempotency ADD PRIMARY KEY(unit, key); END IF; END $m$;" \
    "CREATE INDEX IF NOT EXISTS idempotency_created_at ON idempotency(created_at);"

#endif
