/* Order locks in PostgreSQL (core/locks.h), as SQLite's store writes them: a row while the
 * order is locked, deleted when the lock ends. Rows of postgres.c's table of writes. */
#include <inttypes.h>
#include <stdio.h>

#include "store/backend.h"
#include "store/postgres/internal.h"

static const char LOCK_PUT_NAME[] = "hf_order_lock_put";
static const char LOCK_PUT[] =
    "INSERT INTO order_locks(order_id, event_id, hold_id, hold_unit, locked_at)"
    " VALUES($1, $2, $3, $4, $5::bigint) ON CONFLICT(order_id) DO UPDATE SET"
    " hold_id = excluded.hold_id, hold_unit = excluded.hold_unit,"
    " locked_at = excluded.locked_at";
static const char LOCK_DELETE_NAME[] = "hf_order_lock_delete";
static const char LOCK_DELETE[] = "DELETE FROM order_locks WHERE order_id = $1";

static int prepare(PGconn *connection, const char *name, const char *sql, char *error,
                   size_t error_size) {
    PGresult *result = PQprepare(connection, name, sql, 0, NULL);
    bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", name,
                             PQresultErrorMessage(result));
    PQclear(result);
    return ok ? 0 : -1;
}

int hf_pg_order_locks_prepare(PGconn *connection, char *error, size_t error_size) {
    if (prepare(connection, LOCK_PUT_NAME, LOCK_PUT, error, error_size) != 0) return -1;
    return prepare(connection, LOCK_DELETE_NAME, LOCK_DELETE, error, error_size);
}

/* The queue copies its values. */
bool hf_pg_order_lock_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_order_lock_t *lock = &m->as.order_lock;
    if (!lock->locked) {
        const char *values[] = {lock->order_id};
        return hf_pg_queue_named(store, LOCK_DELETE_NAME, 1, values, tag);
    }
    char at[24];
    snprintf(at, sizeof at, "%" PRId64, m->at_ms);
    const char *values[] = {lock->order_id, lock->event_id, lock->hold_id, lock->hold_unit, at};
    return hf_pg_queue_named(store, LOCK_PUT_NAME, 5, values, tag);
}
