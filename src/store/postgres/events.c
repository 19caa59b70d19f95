/* Events in PostgreSQL (API.md section 2), as SQLite's store writes them
 * (store/sqlite/sqlite.c): a new one's row, its sales closed or reopened; a change rewrites the
 * events row's definition whole; a deletion (of an event that never had a hold, an order or a
 * ticket) removes its row and its history, so its id may be taken again. Rows of postgres.c's
 * table of writes. */
#include <inttypes.h>
#include <stdio.h>

#include "core/core.h"
#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/rows.h"

static const char EVENT_INSERT[] =
    "INSERT INTO events(id, config, created_at) VALUES($1, $2, $3::bigint)";
/* An update or delete that finds no row fails the batch in its own transaction (postgres.c's
 * holdfast_changed), as every update of the writer does. */
static const char EVENT_SALES[] =
    "WITH changed AS (UPDATE events SET sales_open = $2::integer WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char EVENT_UPDATE[] =
    "WITH changed AS (UPDATE events SET config = $2 WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char EVENT_DELETE[] = "WITH changed AS (DELETE FROM events WHERE id = $1 RETURNING 1)"
                                   " SELECT holdfast_changed(count(*)) FROM changed";
static const char EVENT_HISTORY_DELETE[] = "DELETE FROM history WHERE event_id = $1";

static const char *const NAMES[] = {"hf_event_update", "hf_event_delete", "hf_event_history_delete",
                                    "hf_event_insert", "hf_event_sales"};

int hf_pg_events_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const sql[] = {EVENT_UPDATE, EVENT_DELETE, EVENT_HISTORY_DELETE, EVENT_INSERT,
                               EVENT_SALES};
    for (int i = 0; i < 5; i++) {
        PGresult *result = PQprepare(connection, NAMES[i], sql[i], 0, NULL);
        bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", NAMES[i],
                                 PQresultErrorMessage(result));
        PQclear(result);
        if (!ok) return -1;
    }
    return 0;
}

bool hf_pg_event_create_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    char at[24];
    snprintf(at, sizeof at, "%" PRId64, m->at_ms);
    hf_buffer_reset(&store->text);
    hf_rows_definition_write(&store->text, m->as.event_create.definition);
    hf_buffer_append_char(&store->text, '\0');
    const char *values[] = {m->as.event_create.event_id, store->text.data, at};
    return hf_pg_queue_named(store, NAMES[3], 3, values, tag);
}

bool hf_pg_event_sales_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const char *values[] = {m->as.event_sales.event_id, m->as.event_sales.sales_open ? "1" : "0"};
    return hf_pg_queue_named(store, NAMES[4], 2, values, tag);
}

bool hf_pg_event_update_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    hf_buffer_reset(&store->text);
    hf_rows_definition_write(&store->text, mutation->as.event_update.definition);
    hf_buffer_append_char(&store->text, '\0');
    const char *values[] = {mutation->as.event_update.event_id, store->text.data};
    return hf_pg_queue_named(store, NAMES[0], 2, values, tag);
}

bool hf_pg_event_delete_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    /* The batch's history goes in last, in one statement (runs.c): entries of the event from
     * earlier in this batch are flushed first, so the delete takes them too. */
    if (!hf_pg_run_flush(store, &store->history_run)) return false;
    const char *values[] = {mutation->as.event_delete.event_id};
    return hf_pg_queue_named(store, NAMES[1], 1, values, tag) &&
           hf_pg_queue_named(store, NAMES[2], 1, values, tag);
}
