/* Waitlist entries' rows in SQLite (internal.h, schema.c): one row per entry as it stands,
 * upserted at each change of its status or offer. */
#include <sqlite3.h>

#include "core/core.h"
#include "store/records.h"
#include "store/sqlite/internal.h"

/* The batch outlives the statement's run: its strings are bound without a copy. */
static void bind_text(sqlite3_stmt *statement, int index, const char *text) {
    sqlite3_bind_text(statement, index, text, -1, SQLITE_STATIC);
}

int hf_sqlite_waitlist_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_waitlist_t *m = &mutation->as.waitlist;
    sqlite3_stmt *statement = store->statements[STATEMENT_WAITLIST_PUT];
    bind_text(statement, 1, m->waitlist_id);
    bind_text(statement, 2, m->event_id);
    bind_text(statement, 3, m->user_id);
    bind_text(statement, 4, m->section);
    bind_text(statement, 5, m->pool);
    sqlite3_bind_int64(statement, 6, m->quantity);
    sqlite3_bind_int64(statement, 7, m->sequence);
    bind_text(statement, 8,
              hf_record_word(hf_waitlist_status_name, m->status, HF_WAITLIST_CANCELLED));
    bind_text(statement, 9, m->hold_id);
    sqlite3_bind_int64(statement, 10, m->joined_at_ms);
    sqlite3_bind_int64(statement, 11, mutation->at_ms);
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}
