/* Allocations in PostgreSQL (API.md section 14), as SQLite's store writes them
 * (store/sqlite/schema.c says why one JSON row each): the allocation whole, upserted. A row of
 * postgres.c's table of writes. */
#include <inttypes.h>
#include <stdio.h>

#include "core/core.h"
#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/rows.h"

static const char ALLOCATION_PUT_NAME[] = "hf_allocation_put";
static const char ALLOCATION_PUT[] =
    "INSERT INTO allocations(event_id, id, items, created_at, updated_at)"
    " VALUES($1, $2, $3, $4::bigint, $5::bigint) ON CONFLICT(event_id, id)"
    " DO UPDATE SET items = excluded.items, updated_at = excluded.updated_at";

int hf_pg_allocations_prepare(PGconn *connection, char *error, size_t error_size) {
    PGresult *result = PQprepare(connection, ALLOCATION_PUT_NAME, ALLOCATION_PUT, 0, NULL);
    bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", ALLOCATION_PUT_NAME,
                             PQresultErrorMessage(result));
    PQclear(result);
    return ok ? 0 : -1;
}

/* The queue copies its values, so the writer's text is reused. */
bool hf_pg_allocation_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_allocation_t *allocation = &m->as.allocation;
    char created[24], at[24];
    snprintf(created, sizeof created, "%" PRId64, allocation->created_at_ms);
    snprintf(at, sizeof at, "%" PRId64, m->at_ms);
    hf_buffer_reset(&store->text);
    hf_rows_allocation_write(&store->text, allocation);
    hf_buffer_append_char(&store->text, '\0');
    const char *values[] = {allocation->event_id, allocation->allocation_id, store->text.data,
                            created, at};
    return hf_pg_queue_named(store, ALLOCATION_PUT_NAME, 5, values, tag);
}
