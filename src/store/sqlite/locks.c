/* Order locks' rows in SQLite (internal.h, schema.c): one row per locked order, deleted when
 * its lock ends. */
#include <sqlite3.h>

#include "store/sqlite/internal.h"

int hf_sqlite_order_lock_write(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_order_lock_t *lock = &mutation->as.order_lock;
    sqlite3_stmt *statement =
        store->statements[lock->locked ? STATEMENT_ORDER_LOCK_PUT : STATEMENT_ORDER_LOCK_DELETE];
    /* The batch outlives the statement's use: its strings are bound without a copy. */
    sqlite3_bind_text(statement, 1, lock->order_id, -1, SQLITE_STATIC);
    if (lock->locked) {
        sqlite3_bind_text(statement, 2, lock->event_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(statement, 3, lock->hold_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(statement, 4, lock->hold_unit, -1, SQLITE_STATIC);
        sqlite3_bind_int64(statement, 5, mutation->at_ms);
    }
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}
