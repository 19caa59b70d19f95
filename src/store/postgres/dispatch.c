/* Dispatch's rows in PostgreSQL (API.md section 8), as SQLite's store keeps them
 * (store/sqlite/dispatch.c): drivers and rides upserted in each batch's pipeline; one
 * forgotten ride, or a page of a fleet's, read on the reader connection and decoded by the
 * store's decoder (store/decoder.h). load.c reads them back at load (drivers first, then rides
 * in creation order), or one fleet's at a takeover. REAL is DOUBLE PRECISION, written with 17
 * significant digits so a coordinate reads back the same. */
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

static const char DRIVER_DELETE[] = "DELETE FROM drivers WHERE fleet_id = $1 AND driver_id = $2";

int hf_pg_dispatch_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const names[] = {"hf_driver_put", "hf_ride_put", "hf_driver_delete"};
    const char *const sql[] = {DRIVER_PUT, RIDE_PUT, DRIVER_DELETE};
    for (int i = 0; i < 3; i++) {
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

/* A driver upserted, or its row deleted with it. */
bool hf_pg_driver_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    text_t a, b, c, d;
    const hf_mutation_driver_t *driver = &mutation->as.driver;
    if (driver->deleted) {
        const char *values[] = {driver->fleet_id, driver->driver_id};
        return hf_pg_queue_named(store, "hf_driver_delete", 2, values, tag);
    }
    const char *values[] = {driver->fleet_id,           driver->driver_id,
                            real(a, driver->lat),       real(b, driver->lng),
                            real(c, driver->rating),    driver->available ? "1" : "0",
                            integer(d, mutation->at_ms)};
    return hf_pg_queue_named(store, "hf_driver_put", 7, values, tag);
}

bool hf_pg_ride_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    text_t a, b, c, d, e, f, g, h;
    const hf_mutation_ride_t *ride = &mutation->as.ride;
    /* An unknown status goes as NULL, and NOT NULL fails the batch. */
    uint8_t known;
    const char *word = hf_ride_status_name((uint8_t)ride->status);
    bool offered = ride->offer_driver_id != NULL;
    const char *values[] = {ride->ride_id,
                            ride->fleet_id,
                            ride->rider_id,
                            real(a, ride->lat),
                            real(b, ride->lng),
                            integer(c, ride->radius_m),
                            integer(d, ride->offer_ttl_ms),
                            hf_ride_status_parse(word, &known) ? word : NULL,
                            integer(e, ride->created_at_ms),
                            ride->offer_driver_id,
                            offered ? integer(f, ride->offer_distance_m) : NULL,
                            offered ? integer(g, ride->offer_expires_at_ms) : NULL,
                            ride->driver_id,
                            ride->declined ? ride->declined : "",
                            ride->lapsed ? ride->lapsed : "",
                            integer(h, mutation->at_ms)};
    return hf_pg_queue_named(store, "hf_ride_put", 16, values, tag);
}

/* ---- The engine thread's reads (the reader connection); load.c reads drivers and rides
 * back with the other tables ---- */

#define SELECT_RIDES "SELECT " HF_RIDE_COLUMNS " FROM rides"

int hf_pg_ride_read(void *instance, const char *ride_id, const hf_store_loader_t *loader,
                    bool *found, char *error, size_t error_size) {
    return hf_pg_row_read(instance, HF_ROW_RIDE, SELECT_RIDES " WHERE id = $1", ride_id, loader,
                          found, error, error_size);
}

/* ",completed,cancelled," for the statuses of mask; "" for any. */
static void status_words(unsigned mask, char *out, size_t out_size) {
    size_t length = 0;
    out[0] = '\0';
    for (uint8_t i = 0; mask != 0 && i < HF_RIDE_STATUS_COUNT; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   hf_ride_status_name(i));
    }
}

/* The seq a listing resumes after (0 from the first); false when after_id is no ride of the
 * fleet, or on an error (*rc -1). */
static bool resume_seq(hf_pg_store_t *store, const hf_store_ride_query_t *query, int64_t *seq,
                       int *rc, char *error, size_t error_size) {
    *seq = 0;
    *rc = 0;
    if (query->after_id == NULL) return true;
    const char *values[] = {query->after_id, query->fleet_id};
    PGresult *result = hf_pg_exec(&store->reader,
                                  "SELECT seq FROM rides WHERE id = $1 AND fleet_id = $2", 2,
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

int hf_pg_rides_list(void *instance, const hf_store_ride_query_t *query,
                     const hf_store_loader_t *loader, bool *after_found, char *error,
                     size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    int64_t seq;
    int rc;
    *after_found = resume_seq(store, query, &seq, &rc, error, error_size);
    if (!*after_found) return rc;
    char words[96];
    status_words(query->statuses, words, sizeof words);
    const hf_pg_listing_t listing = {
        SELECT_RIDES " WHERE fleet_id = $1 AND seq > $2::bigint"
                     " AND ($3 = '' OR strpos($3, ',' || status || ',') > 0) ORDER BY seq"
                     " LIMIT $4::integer",
        HF_ROW_RIDE, HF_COLUMN_RIDE_SEQ};
    return hf_pg_listing_read(store, &listing, query->fleet_id, seq, words, loader, error,
                              error_size);
}
