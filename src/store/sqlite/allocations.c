/* Allocations' rows in SQLite (internal.h, schema.c): one row per allocation as it stands,
 * upserted at each change, its seats and pools as JSON (store/rows.h). */
#include <sqlite3.h>

#include "store/rows.h"
#include "store/sqlite/internal.h"

int hf_sqlite_allocation_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_allocation_t *allocation = &mutation->as.allocation;
    sqlite3_stmt *statement = store->statements[STATEMENT_ALLOCATION_PUT];
    hf_buffer_reset(&store->text);
    hf_rows_allocation_write(&store->text, allocation);
    hf_buffer_append_char(&store->text, '\0');
    /* The batch and the writer's buffer outlive the statement's run: bound without a copy. */
    sqlite3_bind_text(statement, 1, allocation->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, allocation->allocation_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 3, store->text.data, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 4, allocation->created_at_ms);
    sqlite3_bind_int64(statement, 5, mutation->at_ms);
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}
