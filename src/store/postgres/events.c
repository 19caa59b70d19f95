/* Changed and deleted events in PostgreSQL (API.md section 2), as SQLite's store writes them
 * (store/sqlite/sqlite.c): a change rewrites the events row's definition whole; a deletion
 * (of an event that never had a hold, an order or a ticket) removes its row and its history,
 * so its id may be taken again. */
#include "core/core.h"
#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/rows.h"

/* An update or delete that finds no row fails the batch in its own transaction (postgres.c's
 * holdfast_changed), as every update of the writer does. */
static const char EVENT_UPDATE[] =
    "WITH changed AS (UPDATE events SET config = $2 WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char EVENT_DELETE[] =
    "WITH changed AS (DELETE FROM events WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char EVENT_HISTORY_DELETE[] = "DELETE FROM history WHERE event_id = $1";

static const char *const NAMES[] = {"hf_event_update", "hf_event_delete",
                                    "hf_event_history_delete"};

int hf_pg_events_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const sql[] = {EVENT_UPDATE, EVENT_DELETE, EVENT_HISTORY_DELETE};
    for (int i = 0; i < 3; i++) {
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

bool hf_pg_events_queue(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    if (mutation->type == HF_MUTATION_EVENT_UPDATE) {
        hf_buffer_reset(&store->text);
        hf_rows_definition_write(&store->text, mutation->as.event_update.definition);
        hf_buffer_append_char(&store->text, '\0');
        const char *values[] = {mutation->as.event_update.event_id, store->text.data};
        return hf_pg_queue_named(store, NAMES[0], 2, values, tag);
    }
    /* The batch's history goes in last, in one statement (runs.c): entries of the event from
     * earlier in this batch are flushed first, so the delete takes them too. */
    if (!hf_pg_run_flush(store, &store->history_run)) return false;
    const char *values[] = {mutation->as.event_delete.event_id};
    return hf_pg_queue_named(store, NAMES[1], 1, values, tag) &&
           hf_pg_queue_named(store, NAMES[2], 1, values, tag);
}
