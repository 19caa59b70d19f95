/* The SQLite backend's outbox of notifications (store.h's hf_store_read_outbox): the history's
 * entries with their delivery state, read by the engine thread through the read-only
 * connection, as pages of the history are (history.c). */
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/sqlite/internal.h"

enum { READ_UNIT, READ_ALL, READ_PENDING, READ_PENDING_COUNT };

/* The unit's pending entries: "notify_status = 0" is written out so that the planner takes the
 * partial index history_pending (schema.c), which only pending entries are in. */
static const char READ_UNIT_SQL[] = HF_SQLITE_HISTORY_SELECT
    " WHERE e.event_id = ?1 AND e.seq > ?2 AND e.notify_status = 0 ORDER BY e.seq LIMIT ?3";
static const char READ_ALL_SQL[] = HF_SQLITE_HISTORY_SELECT
    " WHERE (e.event_id, e.seq) > (?1, ?2) ORDER BY e.event_id, e.seq LIMIT ?3";
static const char READ_PENDING_SQL[] = HF_SQLITE_HISTORY_SELECT
    " WHERE (e.event_id, e.seq) > (?1, ?2) AND e.notify_status = 0"
    " ORDER BY e.event_id, e.seq LIMIT ?3";
static const char READ_PENDING_COUNT_SQL[] =
    "SELECT (SELECT count(*) FROM history WHERE event_id = ?1 AND notify_status = 0),"
    " (SELECT COALESCE(MAX(seq), 0) FROM history WHERE event_id = ?1)";
static const char *const READS[HF_SQLITE_OUTBOX_READS] = {
    [READ_UNIT] = READ_UNIT_SQL,
    [READ_ALL] = READ_ALL_SQL,
    [READ_PENDING] = READ_PENDING_SQL,
    [READ_PENDING_COUNT] = READ_PENDING_COUNT_SQL,
};

static sqlite3_stmt *read_prepare(hf_sqlite_store_t *store, int which, char *error,
                                  size_t error_size) {
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return NULL;
    if (store->read_outbox[which] == NULL &&
        sqlite3_prepare_v3(store->reader, READS[which], -1, SQLITE_PREPARE_PERSISTENT,
                           &store->read_outbox[which], NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot read the notifications: %s",
                             sqlite3_errmsg(store->reader));
        return NULL;
    }
    return store->read_outbox[which];
}

int hf_sqlite_outbox_read(void *instance, const hf_store_outbox_query_t *query,
                          hf_store_history_fn entry, void *context, char *error,
                          size_t error_size) {
    hf_sqlite_store_t *store = instance;
    int which = query->unit ? READ_UNIT : query->status == 0 ? READ_PENDING : READ_ALL;
    sqlite3_stmt *statement = read_prepare(store, which, error, error_size);
    if (statement == NULL) return -1;
    const char *unit = query->unit ? query->unit : query->after_unit ? query->after_unit : "";
    sqlite3_bind_text(statement, 1, unit, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, query->after_seq);
    sqlite3_bind_int64(statement, 3, query->limit);
    int result = hf_sqlite_history_rows(store, statement, query->unit ? query->unit : "the outbox",
                                        entry, context, error, error_size);
    /* Reset at once, as the history's page: an open read would hold back checkpoints. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}

int hf_sqlite_outbox_pending(void *instance, const char *unit, int64_t *pending, int64_t *last_seq,
                             char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    sqlite3_stmt *statement = read_prepare(store, READ_PENDING_COUNT, error, error_size);
    if (statement == NULL) return -1;
    sqlite3_bind_text(statement, 1, unit, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
        *pending = sqlite3_column_int64(statement, 0);
        *last_seq = sqlite3_column_int64(statement, 1);
    }
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    if (rc == SQLITE_ROW) return 0;
    hf_store_error_write(error, error_size, "store: cannot count the notifications of %s: %s", unit,
                         sqlite3_errmsg(store->reader));
    return -1;
}
