/* Dispatch's rows in PostgreSQL (API.md section 8), as SQLite's store keeps them
 * (store/sqlite/dispatch.c): drivers and rides upserted in each batch's pipeline, read back at
 * load (drivers first, then rides in creation order), or one fleet's at a takeover. REAL is
 * DOUBLE PRECISION, written with 17 significant digits so a coordinate reads back the same. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "store/backend.h"
#include "store/postgres/internal.h"

static const char DRIVER_PUT[] =
    "INSERT INTO drivers(fleet_id, driver_id, lat, lng, rating, available, updated_at)"
    " VALUES($1, $2, $3::float8, $4::float8, $5::float8, $6::integer, $7::bigint)"
    " ON CONFLICT(fleet_id, driver_id) DO UPDATE SET lat = excluded.lat, lng = excluded.lng,"
    " rating = excluded.rating, available = excluded.available, updated_at = excluded.updated_at";
static const char RIDE_PUT[] =
    "INSERT INTO rides(id, fleet_id, rider_id, lat, lng, radius_m, offer_ttl_ms, status,"
    " created_at, offer_driver_id, offer_distance_m, offer_expires_at, driver_id, declined,"
    " lapsed, updated_at) VALUES($1, $2, $3, $4::float8, $5::float8, $6::bigint, $7::bigint, $8,"
    " $9::bigint, $10, $11::bigint, $12::bigint, $13, $14, $15, $16::bigint)"
    " ON CONFLICT(id) DO UPDATE SET status = excluded.status,"
    " offer_driver_id = excluded.offer_driver_id, offer_distance_m = excluded.offer_distance_m,"
    " offer_expires_at = excluded.offer_expires_at, driver_id = excluded.driver_id,"
    " declined = excluded.declined, lapsed = excluded.lapsed, updated_at = excluded.updated_at";

int hf_pg_dispatch_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const names[] = {"hf_driver_put", "hf_ride_put"};
    const char *const sql[] = {DRIVER_PUT, RIDE_PUT};
    for (int i = 0; i < 2; i++) {
        PGresult *result = PQprepare(connection, names[i], sql[i], 0, NULL);
        bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", names[i],
                                 PQresultErrorMessage(result));
        PQclear(result);
        if (!ok) return -1;
    }
    return 0;
}

typedef char text_t[32];

static const char *real(text_t out, double value) {
    snprintf(out, sizeof(text_t), "%.17g", value);
    return out;
}

static const char *integer(text_t out, int64_t value) {
    snprintf(out, sizeof(text_t), "%" PRId64, value);
    return out;
}

bool hf_pg_dispatch_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    text_t a, b, c, d, e, f, g, h;
    if (mutation->type == HF_MUTATION_DRIVER) {
        const hf_mutation_driver_t *driver = &mutation->as.driver;
        const char *values[] = {driver->fleet_id, driver->driver_id, real(a, driver->lat),
                                real(b, driver->lng), real(c, driver->rating),
                                driver->available ? "1" : "0", integer(d, mutation->at_ms)};
        return hf_pg_queue_named(store, "hf_driver_put", 7, values, tag);
    }
    const hf_mutation_ride_t *ride = &mutation->as.ride;
    /* An unknown status goes as NULL, and NOT NULL fails the batch. */
    uint8_t known;
    const char *word = hf_ride_status_name((uint8_t)ride->status);
    bool offered = ride->offer_driver_id != NULL;
    const char *values[] = {
        ride->ride_id, ride->fleet_id, ride->rider_id, real(a, ride->lat), real(b, ride->lng),
        integer(c, ride->radius_m), integer(d, ride->offer_ttl_ms),
        hf_ride_status_parse(word, &known) ? word : NULL, integer(e, ride->created_at_ms),
        ride->offer_driver_id, offered ? integer(f, ride->offer_distance_m) : NULL,
        offered ? integer(g, ride->offer_expires_at_ms) : NULL, ride->driver_id,
        ride->declined ? ride->declined : "", ride->lapsed ? ride->lapsed : "",
        integer(h, mutation->at_ms)};
    return hf_pg_queue_named(store, "hf_ride_put", 16, values, tag);
}

/* ---- Loading ---- */

static const char *text_at(PGresult *result, int row, int column) {
    return PQgetisnull(result, row, column) ? NULL : PQgetvalue(result, row, column);
}

static int64_t integer_at(PGresult *result, int row, int column) {
    return PQgetisnull(result, row, column) ? 0 : strtoll(PQgetvalue(result, row, column), NULL, 10);
}

static double real_at(PGresult *result, int row, int column) {
    return strtod(PQgetvalue(result, row, column), NULL);
}

static int driver_deliver(PGresult *result, int row, const hf_store_loader_t *loader) {
    hf_stored_driver_t driver = {
        .fleet_id = text_at(result, row, 0), .driver_id = text_at(result, row, 1),
        .lat = real_at(result, row, 2), .lng = real_at(result, row, 3),
        .rating = real_at(result, row, 4), .available = integer_at(result, row, 5) != 0};
    return loader->driver(loader->context, &driver);
}

static int ride_deliver(PGresult *result, int row, const hf_store_loader_t *loader) {
    uint8_t status = 0;
    if (!hf_ride_status_parse(text_at(result, row, 7), &status)) return -1;
    hf_stored_ride_t ride = {
        .ride_id = text_at(result, row, 0), .fleet_id = text_at(result, row, 1),
        .rider_id = text_at(result, row, 2), .lat = real_at(result, row, 3),
        .lng = real_at(result, row, 4), .radius_m = integer_at(result, row, 5),
        .offer_ttl_ms = integer_at(result, row, 6), .status = status,
        .created_at_ms = integer_at(result, row, 8), .offer_driver_id = text_at(result, row, 9),
        .offer_distance_m = integer_at(result, row, 10),
        .offer_expires_at_ms = integer_at(result, row, 11), .driver_id = text_at(result, row, 12),
        .declined = text_at(result, row, 13), .lapsed = text_at(result, row, 14)};
    return loader->ride(loader->context, &ride);
}

typedef int (*deliver_fn)(PGresult *result, int row, const hf_store_loader_t *loader);

static int table_load(hf_pg_source_t *source, const char *table, const char *sql, const char *unit,
                      deliver_fn deliver, const hf_store_loader_t *loader, char *error,
                      size_t error_size) {
    const char *values[] = {unit};
    char why[256];
    PGresult *result =
        hf_pg_source_exec(source, sql, unit != NULL ? 1 : 0, values, why, sizeof why);
    if (result == NULL) {
        hf_store_error_write(error, error_size, "store: reading %s failed: %s", table, why);
        return -1;
    }
    if (hf_pg_source_keeps(source, result)) return 0;
    int rc = 0;
    for (int row = 0; rc == 0 && row < PQntuples(result); row++) {
        rc = deliver(result, row, loader);
        if (rc != 0) {
            const char *subject = text_at(result, row, table[0] == 'r' ? 0 : 1);
            hf_store_error_write(error, error_size, "store: loading %s stopped at %s (%d)", table,
                                 subject != NULL ? subject : "a row", rc);
        }
    }
    PQclear(result);
    return rc;
}

#define SELECT_DRIVERS "SELECT fleet_id, driver_id, lat, lng, rating, available FROM drivers"
#define SELECT_RIDES \
    "SELECT id, fleet_id, rider_id, lat, lng, radius_m, offer_ttl_ms, status, created_at," \
    " offer_driver_id, offer_distance_m, offer_expires_at, driver_id, declined, lapsed FROM rides"

int hf_pg_dispatch_load(hf_pg_source_t *source, const char *unit,
                        const hf_store_loader_t *loader, char *error, size_t error_size) {
    int rc = 0;
    if (loader->driver)
        rc = table_load(source, "drivers",
                        unit != NULL ? SELECT_DRIVERS " WHERE fleet_id = $1 ORDER BY driver_id"
                                     : SELECT_DRIVERS " ORDER BY fleet_id, driver_id",
                        unit, driver_deliver, loader, error, error_size);
    if (rc == 0 && loader->ride)
        rc = table_load(source, "rides",
                        unit != NULL ? SELECT_RIDES " WHERE fleet_id = $1 ORDER BY seq"
                                     : SELECT_RIDES " ORDER BY seq",
                        unit, ride_deliver, loader, error, error_size);
    return rc;
}
