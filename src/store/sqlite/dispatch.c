/* Dispatch's rows in SQLite (internal.h): drivers and rides upserted by the writer (a deleted
 * driver's row deleted); and on the engine thread's reader, one forgotten ride or a page of a
 * fleet's, decoded by the store's decoder (store/decoder.h). load.c reads them back at load,
 * drivers first, then rides in the order they were created. */
#include <stdio.h>
#include <string.h>

#include "store/backend.h"
#include "store/sqlite/internal.h"

/* The batch outlives the statement's use, so its strings are bound without a copy. */
static void bind_text(sqlite3_stmt *statement, int index, const char *text) {
    sqlite3_bind_text(statement, index, text, -1, SQLITE_STATIC);
}

static int statement_run(sqlite3_stmt *statement) {
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

int hf_sqlite_driver_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_driver_t *driver = &mutation->as.driver;
    if (driver->deleted) {
        sqlite3_stmt *statement = store->statements[STATEMENT_DRIVER_DELETE];
        bind_text(statement, 1, driver->fleet_id);
        bind_text(statement, 2, driver->driver_id);
        return statement_run(statement);
    }
    sqlite3_stmt *statement = store->statements[STATEMENT_DRIVER_PUT];
    bind_text(statement, 1, driver->fleet_id);
    bind_text(statement, 2, driver->driver_id);
    sqlite3_bind_double(statement, 3, driver->lat);
    sqlite3_bind_double(statement, 4, driver->lng);
    sqlite3_bind_double(statement, 5, driver->rating);
    sqlite3_bind_int(statement, 6, driver->available ? 1 : 0);
    sqlite3_bind_int64(statement, 7, mutation->at_ms);
    return statement_run(statement);
}

int hf_sqlite_ride_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_ride_t *ride = &mutation->as.ride;
    sqlite3_stmt *statement = store->statements[STATEMENT_RIDE_PUT];
    bind_text(statement, 1, ride->ride_id);
    bind_text(statement, 2, ride->fleet_id);
    bind_text(statement, 3, ride->rider_id);
    sqlite3_bind_double(statement, 4, ride->lat);
    sqlite3_bind_double(statement, 5, ride->lng);
    sqlite3_bind_int64(statement, 6, ride->radius_m);
    sqlite3_bind_int64(statement, 7, ride->offer_ttl_ms);
    /* An unknown status binds NULL, and the NOT NULL constraint fails the batch. */
    uint8_t known;
    const char *word = hf_ride_status_name((uint8_t)ride->status);
    bind_text(statement, 8, hf_ride_status_parse(word, &known) ? word : NULL);
    sqlite3_bind_int64(statement, 9, ride->created_at_ms);
    bind_text(statement, 10, ride->offer_driver_id);
    if (ride->offer_driver_id) {
        sqlite3_bind_int64(statement, 11, ride->offer_distance_m);
        sqlite3_bind_int64(statement, 12, ride->offer_expires_at_ms);
    }
    bind_text(statement, 13, ride->driver_id);
    bind_text(statement, 14, ride->declined ? ride->declined : "");
    bind_text(statement, 15, ride->lapsed ? ride->lapsed : "");
    sqlite3_bind_int64(statement, 16, mutation->at_ms);
    return statement_run(statement);
}

/* ---- the engine thread's reads: prepared at each call (rare next to the holds' reads, whose
 * statements the reader keeps); load.c reads the tables back at load ---- */

#define SELECT_RIDES "SELECT " HF_RIDE_COLUMNS " FROM rides"

static int reader_prepare(hf_sqlite_store_t *store, const char *sql, sqlite3_stmt **statement,
                          char *error, size_t error_size) {
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    if (sqlite3_prepare_v2(store->reader, sql, -1, statement, NULL) == SQLITE_OK) return 0;
    hf_store_error_write(error, error_size, "store: cannot read rides: %s",
                         sqlite3_errmsg(store->reader));
    return -1;
}

int hf_sqlite_ride_read(void *instance, const char *ride_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size) {
    sqlite3_stmt *statement = NULL;
    *found = false;
    if (reader_prepare(instance, SELECT_RIDES " WHERE id = ?1", &statement, error, error_size) != 0)
        return -1;
    sqlite3_bind_text(statement, 1, ride_id, -1, SQLITE_STATIC);
    int result = hf_sqlite_row_read(instance, statement, HF_ROW_RIDE, ride_id, loader, found, error,
                                    error_size);
    sqlite3_finalize(statement);
    return result;
}

/* The words of the statuses in mask, as the listing matches them: ",completed,cancelled,". */
static void status_words(unsigned mask, char *out, size_t out_size) {
    size_t length = 0;
    out[0] = '\0';
    for (uint8_t i = 0; mask != 0 && i < HF_RIDE_STATUS_COUNT; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   hf_ride_status_name(i));
    }
}

/* The seq a listing resumes after: 0 from the first; false when after_id is no ride of the
 * fleet, or on an error (*result -1). */
static bool resume_seq(hf_sqlite_store_t *store, const hf_store_ride_query_t *query, int64_t *seq,
                       int *result, char *error, size_t error_size) {
    sqlite3_stmt *statement = NULL;
    *seq = 0;
    *result = 0;
    if (query->after_id == NULL) return true;
    *result = reader_prepare(store, "SELECT seq FROM rides WHERE id = ?1 AND fleet_id = ?2",
                             &statement, error, error_size);
    if (*result != 0) return false;
    sqlite3_bind_text(statement, 1, query->after_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, query->fleet_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) *seq = sqlite3_column_int64(statement, 0);
    else if (rc != SQLITE_DONE) *result = -1;
    if (*result != 0)
        hf_store_error_write(error, error_size, "store: reading rides failed: %s",
                             sqlite3_errmsg(store->reader));
    sqlite3_finalize(statement);
    return rc == SQLITE_ROW;
}

int hf_sqlite_rides_list(void *instance, const hf_store_ride_query_t *query,
                         const hf_store_loader_t *loader, bool *after_found, char *error,
                         size_t error_size) {
    hf_sqlite_store_t *store = instance;
    int64_t seq;
    int result;
    *after_found = resume_seq(store, query, &seq, &result, error, error_size);
    if (!*after_found) return result;
    sqlite3_stmt *statement = NULL;
    if (reader_prepare(store,
                       SELECT_RIDES
                       " WHERE fleet_id = ?1 AND seq > ?2"
                       " AND (?3 = '' OR instr(?3, ',' || status || ',') > 0) ORDER BY seq",
                       &statement, error, error_size) != 0)
        return -1;
    char words[96];
    status_words(query->statuses, words, sizeof words);
    sqlite3_bind_text(statement, 1, query->fleet_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, seq);
    sqlite3_bind_text(statement, 3, words, -1, SQLITE_STATIC);
    result = hf_sqlite_rows_list(store, statement, HF_ROW_RIDE, loader, error, error_size);
    /* Finalized at once: a statement left mid-read would hold its read transaction open and
     * keep checkpoints from recycling the log. */
    sqlite3_finalize(statement);
    return result;
}
