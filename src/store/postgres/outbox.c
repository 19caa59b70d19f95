/* The PostgreSQL backend's outbox of notifications (store.h's hf_store_read_outbox), as
 * SQLite's (sqlite/outbox.c): the history's entries with their delivery state, through the
 * loop thread's read connection. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/backend.h"
#include "store/decoder.h"
#include "store/postgres/internal.h"

/* "notify_status = 0" is written out so that the planner takes the partial index
 * history_pending (schema.c). */
static const char READ_UNIT[] = HF_PG_HISTORY_SELECT(
    "WHERE event_id = $1 AND seq > $2::bigint AND notify_status = 0"
    " ORDER BY seq LIMIT $3::bigint",
    "s.seq");
static const char READ_ALL[] = HF_PG_HISTORY_SELECT(
    "WHERE (event_id, seq) > ($1, $2::bigint) ORDER BY event_id, seq LIMIT $3::bigint",
    "s.event_id, s.seq");
static const char READ_PENDING[] = HF_PG_HISTORY_SELECT(
    "WHERE (event_id, seq) > ($1, $2::bigint) AND notify_status = 0"
    " ORDER BY event_id, seq LIMIT $3::bigint",
    "s.event_id, s.seq");
static const char PENDING_COUNT[] =
    "SELECT (SELECT count(*) FROM history WHERE event_id = $1 AND notify_status = 0),"
    " (SELECT COALESCE(MAX(seq), 0) FROM history WHERE event_id = $1)";

int hf_pg_outbox_read(void *instance, const hf_store_outbox_query_t *query,
                      hf_store_history_fn entry, void *context, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    char after[24], limit[16];
    snprintf(after, sizeof after, "%" PRId64, query->after_seq);
    snprintf(limit, sizeof limit, "%" PRIu32, query->limit);
    const char *unit = query->unit ? query->unit : query->after_unit ? query->after_unit : "";
    const char *values[] = {unit, after, limit};
    const char *sql = query->unit ? READ_UNIT : query->status == 0 ? READ_PENDING : READ_ALL;
    PGresult *result = hf_pg_exec(&store->reader, sql, 3, values, error, error_size);
    if (result == NULL) return -1;
    hf_pg_row_t row;
    hf_row_reader_t reader = hf_pg_row_reader(&row, result);
    int rc = 0;
    for (row.row = 0; rc == 0 && row.row < PQntuples(result); row.row++)
        rc = hf_decoder_history(&reader, unit, entry, context, error, error_size);
    PQclear(result);
    return rc == HF_STORE_LIST_STOP ? 0 : rc;
}

int hf_pg_outbox_pending(void *instance, const char *unit, int64_t *pending, int64_t *last_seq,
                         char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    const char *values[] = {unit};
    PGresult *result = hf_pg_exec(&store->reader, PENDING_COUNT, 1, values, error, error_size);
    if (result == NULL) return -1;
    if (PQntuples(result) == 1) {
        *pending = strtoll(PQgetvalue(result, 0, 0), NULL, 10);
        *last_seq = strtoll(PQgetvalue(result, 0, 1), NULL, 10);
    }
    PQclear(result);
    return 0;
}
