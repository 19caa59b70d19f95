/* Cancel jobs' rows in SQLite (internal.h, schema.c): a job inserted with its event's cancel,
 * updated at each step, and one row per order it went through. */
#include <sqlite3.h>

#include "core/jobs.h"
#include "store/records.h"
#include "store/sqlite/internal.h"

static int statement_run(sqlite3_stmt *statement) {
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

/* The batch outlives the statement's use: its strings are bound without a copy. */
static void bind_text(sqlite3_stmt *statement, int index, const char *text) {
    sqlite3_bind_text(statement, index, text, -1, SQLITE_STATIC);
}

static int job_write(hf_sqlite_store_t *store, hf_sqlite_statement_t id,
                     const hf_mutation_t *mutation) {
    const hf_mutation_job_t *job = &mutation->as.job;
    sqlite3_stmt *statement = store->statements[id];
    bind_text(statement, 1, job->job_id);
    bind_text(statement, 2, job->event_id);
    bind_text(statement, 3, job->rebook_to);
    sqlite3_bind_int64(statement, 4, job->offer_ttl_ms);
    sqlite3_bind_int64(statement, 5, job->orders);
    sqlite3_bind_int64(statement, 6, job->cursor);
    sqlite3_bind_int64(statement, 7, job->offered);
    sqlite3_bind_int64(statement, 8, job->accepted);
    sqlite3_bind_int64(statement, 9, job->refunded);
    bind_text(statement, 10, hf_job_status_name((uint8_t)job->status));
    sqlite3_bind_int64(statement, 11, job->created_at_ms);
    int rc = statement_run(statement);
    if (rc == SQLITE_DONE && sqlite3_changes(store->database) != 1) return SQLITE_NOTFOUND;
    return rc;
}

int hf_sqlite_event_cancel(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    return job_write(store, STATEMENT_JOB_INSERT, mutation);
}

int hf_sqlite_job_update(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    return job_write(store, STATEMENT_JOB_UPDATE, mutation);
}

int hf_sqlite_job_offer_put(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_job_offer_t *offer = &mutation->as.job_offer;
    sqlite3_stmt *statement = store->statements[STATEMENT_JOB_OFFER_PUT];
    bind_text(statement, 1, offer->job_id);
    bind_text(statement, 2, offer->order_id);
    bind_text(statement, 3, offer->user_id);
    bind_text(statement, 4, offer->reservation_id);
    bind_text(statement, 5, hf_job_offer_status_name((uint8_t)offer->status));
    if (offer->expires_at_ms) sqlite3_bind_int64(statement, 6, offer->expires_at_ms);
    return statement_run(statement);
}
