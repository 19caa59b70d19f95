/* Dispatch's rows in SQLite (internal.h): drivers and rides upserted by the writer, and read
 * back at load, drivers first, then rides in the order they were created. */
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

/* ---- load ---- */

static const char *text_at(sqlite3_stmt *statement, int column) {
    return (const char *)sqlite3_column_text(statement, column);
}

static int driver_deliver(sqlite3_stmt *statement, const hf_store_loader_t *loader) {
    hf_stored_driver_t driver = {
        .fleet_id = text_at(statement, 0), .driver_id = text_at(statement, 1),
        .lat = sqlite3_column_double(statement, 2), .lng = sqlite3_column_double(statement, 3),
        .rating = sqlite3_column_double(statement, 4),
        .available = sqlite3_column_int(statement, 5) != 0};
    return loader->driver(loader->context, &driver);
}

static int ride_deliver(sqlite3_stmt *statement, const hf_store_loader_t *loader) {
    uint8_t status = 0;
    if (!hf_ride_status_parse(text_at(statement, 7), &status)) return -1;
    hf_stored_ride_t ride = {
        .ride_id = text_at(statement, 0), .fleet_id = text_at(statement, 1),
        .rider_id = text_at(statement, 2), .lat = sqlite3_column_double(statement, 3),
        .lng = sqlite3_column_double(statement, 4),
        .radius_m = sqlite3_column_int64(statement, 5),
        .offer_ttl_ms = sqlite3_column_int64(statement, 6), .status = status,
        .created_at_ms = sqlite3_column_int64(statement, 8),
        .offer_driver_id = text_at(statement, 9),
        .offer_distance_m = sqlite3_column_int64(statement, 10),
        .offer_expires_at_ms = sqlite3_column_int64(statement, 11),
        .driver_id = text_at(statement, 12), .declined = text_at(statement, 13),
        .lapsed = text_at(statement, 14)};
    return loader->ride(loader->context, &ride);
}

typedef int (*deliver_fn)(sqlite3_stmt *statement, const hf_store_loader_t *loader);

static int table_load(hf_sqlite_store_t *store, const char *table, const char *sql,
                      deliver_fn deliver, const hf_store_loader_t *loader, char *error,
                      size_t error_size) {
    sqlite3_stmt *statement = NULL;
    int result = 0, rc = sqlite3_prepare_v2(store->database, sql, -1, &statement, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(statement)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        result = deliver(statement, loader);
        if (result == 0) continue;
        const char *subject = text_at(statement, table[0] == 'r' ? 0 : 1);
        hf_store_error_write(error, error_size, "store: loading %s stopped at %s (%d)", table,
                             subject ? subject : "a row", result);
        break;
    }
    if (result == 0 && rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading %s failed: %s", table,
                             sqlite3_errmsg(store->database));
        result = -1;
    }
    sqlite3_finalize(statement);
    return result;
}

int hf_sqlite_dispatch_load(hf_sqlite_store_t *store, const hf_store_loader_t *loader,
                            char *error, size_t error_size) {
    int result = 0;
    if (loader->driver)
        result = table_load(store, "drivers",
                            "SELECT fleet_id, driver_id, lat, lng, rating, available"
                            " FROM drivers ORDER BY fleet_id, driver_id",
                            driver_deliver, loader, error, error_size);
    if (result == 0 && loader->ride)
        result = table_load(store, "rides",
                            "SELECT id, fleet_id, rider_id, lat, lng, radius_m, offer_ttl_ms,"
                            " status, created_at, offer_driver_id, offer_distance_m,"
                            " offer_expires_at, driver_id, declined, lapsed FROM rides"
                            " ORDER BY seq",
                            ride_deliver, loader, error, error_size);
    return result;
}
