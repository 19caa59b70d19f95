/* The SQLite backend's audit history (store/history.h): entries appended by the writer in each
 * batch's transaction, numbered per event, and pages of them read by the engine thread through
 * its read-only connection. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/decoder.h"
#include "store/history.h"
#include "store/sqlite/internal.h"

/* ---- Numbering (the writer) ---- */

/* The last seq the event's history has, read once with MAX over the primary key (a seek, not
 * a scan) and then kept: the writer is the history's only writer. Returns SQLITE_DONE or the
 * error code, with *slot the event's place in history_seqs. */
static int last_seq_find(hf_sqlite_store_t *store, const char *event_id, size_t *slot) {
    size_t length = strlen(event_id);
    uint32_t hash = hf_map_hash(event_id, length);
    const hf_map_slot_t *found = hf_map_find(&store->history_events, event_id, length, hash);
    if (found != NULL) {
        *slot = found->value;
        return SQLITE_DONE;
    }
    sqlite3_stmt *statement = store->statements[STATEMENT_HISTORY_LAST];
    sqlite3_bind_text(statement, 1, event_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    int64_t last = rc == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0;
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    /* An aggregate always gives a row: no row would be SQLite's own failure. */
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_ERROR : rc;
    if (store->history_count == store->history_capacity) {
        store->history_capacity = store->history_capacity ? 2 * store->history_capacity : 16;
        store->history_seqs = realloc(store->history_seqs,
                                      store->history_capacity * sizeof *store->history_seqs);
        if (store->history_seqs == NULL) abort();
    }
    *slot = store->history_count++;
    store->history_seqs[*slot] = last;
    hf_map_insert(&store->history_events, event_id, length, hash, (uint32_t)*slot);
    return SQLITE_DONE;
}

/* The INSERT of count entries at once, prepared at its first use: one statement for several
 * rows keeps its cursors on the history's b-trees open from one row to the next, where a
 * statement per row opens them again each time (docs/PERFORMANCE.md, "Rows per change"). */
static sqlite3_stmt *insert_statement(hf_sqlite_store_t *store, size_t count) {
    sqlite3_stmt **statement = &store->history_inserts[count - 1];
    if (*statement != NULL) return *statement;
    hf_buffer_t sql;
    hf_buffer_init(&sql);
    hf_buffer_printf(&sql, "INSERT INTO history(event_id, seq, type, at, data) VALUES");
    for (size_t i = 0; i < count; i++) {
        size_t first = 5 * i + 1;
        hf_buffer_printf(&sql, "%s(?%zu, ?%zu, ?%zu, ?%zu, ?%zu)", i ? ", " : "", first, first + 1,
                         first + 2, first + 3, first + 4);
    }
    if (sqlite3_prepare_v3(store->database, sql.data, -1, SQLITE_PREPARE_PERSISTENT, statement,
                           NULL) != SQLITE_OK)
        *statement = NULL;
    hf_buffer_free(&sql);
    return *statement;
}

int hf_sqlite_history_flush(hf_sqlite_store_t *store) {
    size_t count = store->history_pending_count;
    if (count == 0) return SQLITE_DONE;
    sqlite3_stmt *statement = insert_statement(store, count);
    if (statement == NULL) return sqlite3_errcode(store->database);
    for (size_t i = 0; i < count; i++) {
        const hf_sqlite_history_row_t *row = &store->history_pending[i];
        int first = (int)(5 * i + 1);
        sqlite3_bind_text(statement, first, row->event_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(statement, first + 1, row->seq);
        sqlite3_bind_text(statement, first + 2, row->type, -1, SQLITE_STATIC);
        sqlite3_bind_int64(statement, first + 3, row->at_ms);
        sqlite3_bind_text(statement, first + 4, store->history_data.data + row->data_offset,
                          (int)row->data_length, SQLITE_STATIC);
    }
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    store->history_pending_count = 0;
    hf_buffer_reset(&store->history_data);
    return rc;
}

/* The entry is numbered now and written with the entries after it (flush): a failed batch
 * forgets the numbers and the entries not yet written alike (hf_sqlite_history_forget). */
int hf_sqlite_history_append(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const char *type, *event_id;
    if (!hf_history_entry_of(mutation, &type, &event_id)) return SQLITE_DONE;
    size_t slot = 0;
    int rc = last_seq_find(store, event_id, &slot);
    if (rc != SQLITE_DONE) return rc;
    hf_sqlite_history_row_t *row = &store->history_pending[store->history_pending_count++];
    row->event_id = event_id;
    row->type = type;
    row->seq = ++store->history_seqs[slot];
    row->at_ms = mutation->at_ms;
    row->data_offset = store->history_data.length;
    hf_history_data_write(&store->history_data, mutation);
    row->data_length = store->history_data.length - row->data_offset;
    if (store->history_pending_count < HF_SQLITE_HISTORY_ROWS_PER_INSERT) return SQLITE_DONE;
    return hf_sqlite_history_flush(store);
}

void hf_sqlite_history_restart(hf_sqlite_store_t *store, const char *event_id) {
    size_t length = strlen(event_id);
    const hf_map_slot_t *found = hf_map_find(&store->history_events, event_id, length,
                                             hf_map_hash(event_id, length));
    if (found != NULL) store->history_seqs[found->value] = 0;
}

void hf_sqlite_history_forget(hf_sqlite_store_t *store) {
    store->history_pending_count = 0;
    hf_buffer_reset(&store->history_data);
    hf_map_free(&store->history_events);
    hf_map_init(&store->history_events);
    store->history_count = 0;
}

void hf_sqlite_history_close(hf_sqlite_store_t *store) {
    sqlite3_finalize(store->read_history);
    store->read_history = NULL;
    for (size_t i = 0; i < HF_SQLITE_OUTBOX_READS; i++) {
        sqlite3_finalize(store->read_outbox[i]);
        store->read_outbox[i] = NULL;
    }
    for (size_t i = 0; i < HF_SQLITE_HISTORY_ROWS_PER_INSERT; i++) {
        sqlite3_finalize(store->history_inserts[i]);
        store->history_inserts[i] = NULL;
    }
    hf_map_free(&store->history_events);
    free(store->history_seqs);
    store->history_seqs = NULL;
    store->history_count = store->history_capacity = 0;
    hf_buffer_free(&store->history_data);
}

/* ---- Reading a page (the engine thread) ---- */

/* A page of the history joined at read time with what each entry is about (store.h), its
 * columns in the decoder's order (store/decoder.h's HF_COLUMN_HISTORY_...): the
 * hold its data names (holds.id is unique), or else the order (orders.id is unique), so an
 * entry reads alone though its row stores only its own fields. The left joins keep the
 * history's key order (history is the outer loop of the primary key's range scan, no sort),
 * so rows stream in seq order and a reader that stops early reads no further. PostgreSQL's
 * read (postgres/load.c) is the same query. */
static const char READ_HISTORY[] = HF_SQLITE_HISTORY_SELECT
    " WHERE e.event_id = ?1 AND e.seq > ?2 ORDER BY e.seq LIMIT ?3";

/* Each row through the decoder (store/decoder.h) to entry, until it stops
 * (HF_STORE_LIST_STOP: 0), fails, or rows run out. */
int hf_sqlite_history_rows(hf_sqlite_store_t *store, sqlite3_stmt *statement, const char *unit,
                           hf_store_history_fn entry, void *context, char *error,
                           size_t error_size) {
    hf_sqlite_row_t row;
    hf_row_reader_t reader = hf_sqlite_row_reader(&row, statement);
    int result = 0, rc;
    while (result == 0 && (rc = sqlite3_step(statement)) == SQLITE_ROW)
        result = hf_decoder_history(&reader, unit, entry, context, error, error_size);
    if (result == HF_STORE_LIST_STOP) return 0;
    if (result != 0) return result;
    if (rc == SQLITE_DONE) return 0;
    hf_store_error_write(error, error_size, "store: reading the history of %s failed: %s", unit,
                         sqlite3_errmsg(store->reader));
    return -1;
}

int hf_sqlite_history_read(void *instance, const hf_store_history_query_t *query,
                           hf_store_history_fn entry, void *context, char *error,
                           size_t error_size) {
    hf_sqlite_store_t *store = instance;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    if (store->read_history == NULL &&
        sqlite3_prepare_v3(store->reader, READ_HISTORY, -1, SQLITE_PREPARE_PERSISTENT,
                           &store->read_history, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot read the history: %s",
                             sqlite3_errmsg(store->reader));
        return -1;
    }
    sqlite3_stmt *statement = store->read_history;
    sqlite3_bind_text(statement, 1, query->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, query->after_seq);
    sqlite3_bind_int64(statement, 3, query->limit);
    int result = hf_sqlite_history_rows(store, statement, query->event_id, entry, context, error,
                                        error_size);
    /* Reset at once, as the listing of holds does: an open read would hold back checkpoints. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}
