/* The PostgreSQL backend's reading side: every table back at start (or one unit's rows at a
 * takeover), in one repeatable-read transaction so the tables are seen at the same instant;
 * one hold or ticket the core has forgotten, an event's holds and a page of its history
 * through the engine thread's own connection. Only the SQL and the connections are
 * PostgreSQL's: each row is decoded by the store's one decoder (store/decoder.h), as SQLite's
 * rows are, through the reader of a result's row below. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store/backend.h"
#include "store/decoder.h"
#include "store/postgres/internal.h"

/* A listing (an event's holds, a fleet's rides) reads this many rows per round trip: a page
 * is smaller, and a long filter reads on, so the rows are never all in memory at once. */
#define LIST_PAGE_ROWS 500

/* ---- A result's row, as the decoder reads it ---- */

static const char *row_text(void *instance, int column, size_t *length) {
    const hf_pg_row_t *row = instance;
    bool null = PQgetisnull(row->result, row->row, column);
    if (length != NULL) *length = null ? 0 : (size_t)PQgetlength(row->result, row->row, column);
    return null ? NULL : PQgetvalue(row->result, row->row, column);
}

static int64_t row_integer(void *instance, int column) {
    const hf_pg_row_t *row = instance;
    if (PQgetisnull(row->result, row->row, column)) return 0;
    return strtoll(PQgetvalue(row->result, row->row, column), NULL, 10);
}

hf_row_reader_t hf_pg_row_reader(hf_pg_row_t *row, PGresult *result) {
    *row = (hf_pg_row_t){result, 0};
    return (hf_row_reader_t){row_text, row_integer, row};
}

/* ---- Loading ---- */

#define SELECT_HOLDS "SELECT " HF_HOLD_COLUMNS " FROM holds"
#define SELECT_KEYS \
    "SELECT " HF_IDEMPOTENCY_COLUMNS("encode(hash, 'hex')") " FROM idempotency" \
                                                            " WHERE created_at >= $1::bigint"
#define SELECT_REFUNDS "SELECT " HF_REFUND_COLUMNS " FROM refunds"
#define SELECT_DELIVERIES \
    "SELECT " HF_DELIVERY_COLUMNS " FROM deliveries WHERE received_at >= $1::bigint"
#define SELECT_DRIVERS "SELECT " HF_DRIVER_COLUMNS " FROM drivers"
/* A calendar's resources, in the calendars' order then their own. */
#define SELECT_RESOURCES \
    "SELECT " HF_CALENDAR_RESOURCE_COLUMNS " FROM calendar_resources" \
    " JOIN calendars ON calendars.id = calendar_resources.calendar_id"
#define SELECT_FINISHED \
    "SELECT " HF_FINISHED_HOLDS_COLUMNS " FROM holds WHERE status IN ('released', 'expired')"

/* Each kind's SELECT for every row, its columns in the decoder's order; $1 is the time a kind
 * read from a time on starts at (hf_decoder_since). */
static const char *const LOAD_ALL[HF_ROW_KIND_COUNT] = {
    [HF_ROW_EVENT] = "SELECT " HF_EVENT_COLUMNS " FROM events ORDER BY seq",
    [HF_ROW_ALLOCATION] = "SELECT " HF_ALLOCATION_COLUMNS " FROM allocations ORDER BY seq",
    [HF_ROW_CALENDAR] = "SELECT " HF_CALENDAR_COLUMNS " FROM calendars ORDER BY seq",
    [HF_ROW_CALENDAR_RESOURCE] = SELECT_RESOURCES " ORDER BY calendars.seq, calendar_resources.idx",
    [HF_ROW_FINISHED_HOLDS] = SELECT_FINISHED,
    [HF_ROW_HOLD] = SELECT_HOLDS " ORDER BY seq",
    [HF_ROW_ORDER] = "SELECT " HF_ORDER_COLUMNS " FROM orders ORDER BY seq",
    [HF_ROW_IDEMPOTENCY] = SELECT_KEYS " ORDER BY created_at, key",
    [HF_ROW_REFUND] = SELECT_REFUNDS " ORDER BY seq",
    [HF_ROW_JOB] = "SELECT " HF_JOB_COLUMNS " FROM jobs ORDER BY seq",
    [HF_ROW_JOB_OFFER] = "SELECT " HF_JOB_OFFER_COLUMNS " FROM job_offers ORDER BY seq",
    [HF_ROW_DELIVERY] = SELECT_DELIVERIES " ORDER BY seq",
    [HF_ROW_TICKET] = "SELECT " HF_TICKET_COLUMNS " FROM tickets ORDER BY seq",
    [HF_ROW_WAITLIST] = "SELECT " HF_WAITLIST_COLUMNS " FROM waitlist ORDER BY event_id, sequence",
    [HF_ROW_ORDER_LOCK] = "SELECT " HF_ORDER_LOCK_COLUMNS " FROM order_locks ORDER BY locked_at",
    [HF_ROW_DRIVER] = SELECT_DRIVERS " ORDER BY fleet_id, driver_id",
    [HF_ROW_RIDE] = "SELECT " HF_RIDE_COLUMNS " FROM rides ORDER BY seq",
};

#define OF_UNIT_HOLDS "reservation_id IN (SELECT id FROM holds WHERE event_id = $2)"

/* The same for one unit's rows: the unit is the last parameter ($1, or $2 after the time).
 * A unit is an event, or a fleet for drivers and rides; the holds of a unit name its refunds
 * and deliveries (their reservation_id); a key belongs to the unit of the request that used
 * it (store.h's HF_STORE_UNIT_NONE for none). */
static const char *const LOAD_UNIT[HF_ROW_KIND_COUNT] = {
    [HF_ROW_EVENT] = "SELECT " HF_EVENT_COLUMNS " FROM events WHERE id = $1",
    [HF_ROW_ALLOCATION] = "SELECT " HF_ALLOCATION_COLUMNS
                          " FROM allocations WHERE event_id = $1 ORDER BY seq",
    [HF_ROW_CALENDAR] = "SELECT " HF_CALENDAR_COLUMNS " FROM calendars WHERE id = $1",
    [HF_ROW_CALENDAR_RESOURCE] = SELECT_RESOURCES
    " WHERE calendar_resources.calendar_id = $1 ORDER BY calendar_resources.idx",
    [HF_ROW_FINISHED_HOLDS] = SELECT_FINISHED " AND event_id = $1",
    [HF_ROW_HOLD] = SELECT_HOLDS " WHERE event_id = $1 ORDER BY seq",
    [HF_ROW_ORDER] = "SELECT " HF_ORDER_COLUMNS " FROM orders WHERE event_id = $1 ORDER BY seq",
    [HF_ROW_IDEMPOTENCY] = SELECT_KEYS " AND unit = $2 ORDER BY created_at, key",
    /* A cancelled order's refund (order_id) is its event's, with or without a hold. */
    [HF_ROW_REFUND] = SELECT_REFUNDS
    " WHERE reservation_id IN (SELECT id FROM holds WHERE event_id = $1)"
    " OR order_id IN (SELECT id FROM orders WHERE event_id = $1)"
    /* The records of no unit: webhooks' refunds of holds no event has. */
    " OR ($1 = '" HF_STORE_UNIT_NONE "' AND order_id IS NULL"
    " AND reservation_id NOT IN (SELECT id FROM holds))"
    " ORDER BY seq",
    [HF_ROW_JOB] = "SELECT " HF_JOB_COLUMNS " FROM jobs WHERE event_id = $1 ORDER BY seq",
    [HF_ROW_JOB_OFFER] = "SELECT " HF_JOB_OFFER_COLUMNS " FROM job_offers"
                         " WHERE job_id IN (SELECT id FROM jobs WHERE event_id = $1) ORDER BY seq",
    [HF_ROW_DELIVERY] = SELECT_DELIVERIES
    " AND (" OF_UNIT_HOLDS
    /* The records of no unit: deliveries for holds no event has (repeats answered
         * alike). */
    " OR ($2 = '" HF_STORE_UNIT_NONE "' AND (reservation_id IS NULL"
    " OR reservation_id NOT IN (SELECT id FROM holds))))"
    " ORDER BY seq",
    [HF_ROW_TICKET] = "SELECT " HF_TICKET_COLUMNS " FROM tickets WHERE event_id = $1 ORDER BY seq",
    [HF_ROW_WAITLIST] = "SELECT " HF_WAITLIST_COLUMNS
                        " FROM waitlist WHERE event_id = $1 ORDER BY sequence",
    [HF_ROW_ORDER_LOCK] = "SELECT " HF_ORDER_LOCK_COLUMNS
                          " FROM order_locks WHERE event_id = $1 ORDER BY locked_at",
    [HF_ROW_DRIVER] = SELECT_DRIVERS " WHERE fleet_id = $1 ORDER BY driver_id",
    [HF_ROW_RIDE] = "SELECT " HF_RIDE_COLUMNS " FROM rides WHERE fleet_id = $1 ORDER BY seq",
};

/* Where a load reads: its source, and its unit (NULL: every row). */
typedef struct load {
    hf_pg_source_t *source;
    const char *unit;
} load_t;

/* Every row of the kind's table (or the unit's rows) to the decoder, in order; when the
 * source is fetching, the result is kept for a later delivery instead (hf_decoder_table_fn). */
static int table_load(void *instance, hf_row_kind_t kind, hf_decoder_t *decoder) {
    const load_t *load = instance;
    char since[24];
    const char *values[2];
    int count = 0;
    int64_t since_ms;
    if (hf_decoder_since(decoder->loader, kind, &since_ms)) {
        snprintf(since, sizeof since, "%" PRId64, since_ms);
        values[count++] = since;
    }
    if (load->unit != NULL) values[count++] = load->unit;
    const char *sql = load->unit != NULL ? LOAD_UNIT[kind] : LOAD_ALL[kind];
    char why[256];
    PGresult *result = hf_pg_source_exec(load->source, sql, count, values, why, sizeof why);
    if (result == NULL) {
        hf_store_error_write(decoder->error, decoder->error_size, "store: reading %s failed: %s",
                             hf_decoder_table(kind), why);
        return -1;
    }
    if (hf_pg_source_keeps(load->source, result)) return 0;
    hf_pg_row_t row;
    hf_row_reader_t reader = hf_pg_row_reader(&row, result);
    int rc = 0;
    for (row.row = 0; rc == 0 && row.row < PQntuples(result); row.row++)
        rc = hf_decoder_load_row(decoder, kind, &reader);
    PQclear(result);
    return rc;
}

int hf_pg_tables_load(hf_pg_source_t *source, const char *unit, const hf_store_loader_t *loader,
                      char *error, size_t error_size) {
    /* A delivery runs no statement: its transaction was the fetch's. */
    PGconn **connection = source->connection;
    static const char BEGIN[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    PGresult *begun = connection == NULL
                          ? NULL
                          : hf_pg_exec(connection, BEGIN, 0, NULL, error, error_size);
    if (connection != NULL && begun == NULL) return -1;
    PQclear(begun);
    load_t load = {source, unit};
    int result = hf_decoder_load(table_load, &load, loader, error, error_size);
    if (connection != NULL) {
        char ignored[128];
        PQclear(hf_pg_exec(connection, "COMMIT", 0, NULL, ignored, sizeof ignored));
    }
    return result;
}

/* ---- A unit's rows fetched on one thread, delivered on another ---- */

PGresult *hf_pg_source_exec(hf_pg_source_t *source, const char *sql, int count,
                            const char *const *values, char *error, size_t error_size) {
    if (source->connection != NULL)
        return hf_pg_exec(source->connection, sql, count, values, error, error_size);
    hf_pg_kept_t *kept = source->kept;
    if (kept->next >= kept->count) {
        hf_store_error_write(error, error_size, "store: fewer results kept than read back");
        return NULL;
    }
    PGresult *result = kept->results[kept->next];
    kept->results[kept->next++] = NULL; /* the caller's to clear now */
    return result;
}

bool hf_pg_source_keeps(hf_pg_source_t *source, PGresult *result) {
    hf_pg_kept_t *kept = source->kept;
    if (source->connection == NULL || kept == NULL) return false;
    if (kept->count == kept->capacity) {
        kept->capacity = kept->capacity ? 2 * kept->capacity : 16;
        kept->results = realloc(kept->results, kept->capacity * sizeof *kept->results);
        if (kept->results == NULL) abort();
    }
    kept->results[kept->count++] = result;
    return true;
}

void hf_pg_kept_free(hf_pg_kept_t *kept) {
    if (kept == NULL) return;
    for (size_t i = 0; i < kept->count; i++) PQclear(kept->results[i]);
    free(kept->results);
    free(kept);
}

/* ---- The engine thread's reads ---- */

int hf_pg_reader_open(hf_pg_store_t *store, char *error, size_t error_size) {
    if (store->read_items == NULL) {
        store->read_items = calloc(1, sizeof *store->read_items);
        if (store->read_items == NULL) abort();
    }
    if (store->reader != NULL && PQstatus(store->reader) == CONNECTION_OK) return 0;
    PQfinish(store->reader);
    store->reader = hf_pg_connect(store->url, error, error_size);
    return store->reader != NULL ? 0 : -1;
}

int hf_pg_row_read(hf_pg_store_t *store, hf_row_kind_t kind, const char *select, const char *id,
                   const hf_store_loader_t *loader, bool *found, char *error, size_t error_size) {
    *found = false;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    const char *values[] = {id};
    PGresult *result = hf_pg_exec(&store->reader, select, 1, values, error, error_size);
    if (result == NULL) return -1;
    hf_decoder_t decoder = {loader, store->read_items, error, error_size};
    hf_pg_row_t row;
    hf_row_reader_t reader = hf_pg_row_reader(&row, result);
    int rc = 0;
    if (PQntuples(result) == 1) {
        *found = true;
        rc = hf_decoder_read_row(&decoder, kind, &reader);
    }
    PQclear(result);
    return rc;
}

int hf_pg_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                    bool *found, char *error, size_t error_size) {
    return hf_pg_row_read(instance, HF_ROW_HOLD, SELECT_HOLDS " WHERE id = $1", hold_id, loader,
                          found, error, error_size);
}

int hf_pg_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                      bool *found, char *error, size_t error_size) {
    return hf_pg_row_read(instance, HF_ROW_TICKET,
                          "SELECT " HF_TICKET_COLUMNS " FROM tickets WHERE id = $1", ticket_id,
                          loader, found, error, error_size);
}

int hf_pg_rows_list(hf_pg_store_t *store, PGresult *result, hf_row_kind_t kind, int seq_column,
                    const hf_store_loader_t *loader, int64_t *last_seq, char *error,
                    size_t error_size) {
    hf_decoder_t decoder = {loader, store->read_items, error, error_size};
    hf_pg_row_t row;
    hf_row_reader_t reader = hf_pg_row_reader(&row, result);
    int rc = 0;
    for (row.row = 0; rc == 0 && row.row < PQntuples(result); row.row++) {
        *last_seq = row_integer(&row, seq_column);
        rc = hf_decoder_list_row(&decoder, kind, &reader);
    }
    return rc;
}

/* The words of the statuses in mask as the listing matches them: ",held,expired,", or "". */
static void status_words(unsigned mask, char *out, size_t out_size) {
    size_t length = 0;
    out[0] = '\0';
    for (uint8_t i = 0; mask != 0 && i <= HF_HOLD_EXPIRED; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   hf_hold_status_name(i));
    }
}

/* The seq a listing resumes after (0 from the first); false when after_id is no hold of the
 * event, or on an error (*rc -1). */
static bool resume_seq(hf_pg_store_t *store, const hf_store_hold_query_t *query, int64_t *seq,
                       int *rc, char *error, size_t error_size) {
    *seq = 0;
    *rc = 0;
    if (query->after_id == NULL) return true;
    const char *values[] = {query->after_id, query->event_id};
    PGresult *result = hf_pg_exec(&store->reader,
                                  "SELECT seq FROM holds WHERE id = $1 AND event_id = $2", 2,
                                  values, error, error_size);
    if (result == NULL) {
        *rc = -1;
        return false;
    }
    bool found = PQntuples(result) == 1;
    if (found) *seq = strtoll(PQgetvalue(result, 0, 0), NULL, 10);
    PQclear(result);
    return found;
}

int hf_pg_holds_list(void *instance, const hf_store_hold_query_t *query,
                     const hf_store_loader_t *loader, bool *after_found, char *error,
                     size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    int64_t seq;
    int rc;
    *after_found = resume_seq(store, query, &seq, &rc, error, error_size);
    if (!*after_found) return rc;
    char words[64];
    status_words(query->statuses, words, sizeof words);
    const hf_pg_listing_t listing = {
        SELECT_HOLDS " WHERE event_id = $1 AND seq > $2::bigint"
                     " AND ($3 = '' OR strpos($3, ',' || status || ',') > 0) ORDER BY seq"
                     " LIMIT $4::integer",
        HF_ROW_HOLD, HF_COLUMN_HOLD_SEQ};
    return hf_pg_listing_read(store, &listing, query->event_id, seq, words, loader, error,
                              error_size);
}

int hf_pg_listing_read(hf_pg_store_t *store, const hf_pg_listing_t *listing, const char *parent,
                       int64_t seq, const char *words, const hf_store_loader_t *loader, char *error,
                       size_t error_size) {
    char after[24], limit[16];
    snprintf(limit, sizeof limit, "%d", LIST_PAGE_ROWS);
    for (;;) {
        snprintf(after, sizeof after, "%" PRId64, seq);
        const char *values[] = {parent, after, words, limit};
        PGresult *result = hf_pg_exec(&store->reader, listing->sql, 4, values, error, error_size);
        if (result == NULL) return -1;
        int rows = PQntuples(result);
        int rc = hf_pg_rows_list(store, result, listing->kind, listing->seq_column, loader, &seq,
                                 error, error_size);
        PQclear(result);
        if (rc == HF_STORE_LIST_STOP) return 0;
        if (rc != 0 || rows < LIST_PAGE_ROWS) return rc;
    }
}

/* A page of the history joined with what each entry is about, as SQLite's (sqlite/history.c),
 * its columns in the decoder's order (store/decoder.h's HF_COLUMN_HISTORY_...):
 * the first $3 rows after $2, each joined with the hold its data names or else the order, by
 * their unique ids (the data's two ids are read once each, in the subquery). */
static const char READ_HISTORY[] = HF_PG_HISTORY_SELECT(
    "WHERE event_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3::bigint", "seq");

int hf_pg_history_read(void *instance, const hf_store_history_query_t *query,
                       hf_store_history_fn entry, void *context, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    char after[24], limit[16];
    snprintf(after, sizeof after, "%" PRId64, query->after_seq);
    snprintf(limit, sizeof limit, "%" PRIu32, query->limit);
    const char *values[] = {query->event_id, after, limit};
    PGresult *result = hf_pg_exec(&store->reader, READ_HISTORY, 3, values, error, error_size);
    if (result == NULL) return -1;
    hf_pg_row_t row;
    hf_row_reader_t reader = hf_pg_row_reader(&row, result);
    int rc = 0;
    for (row.row = 0; rc == 0 && row.row < PQntuples(result); row.row++)
        rc = hf_decoder_history(&reader, query->event_id, entry, context, error, error_size);
    PQclear(result);
    return rc == HF_STORE_LIST_STOP ? 0 : rc;
}
