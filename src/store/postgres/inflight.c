/* The PostgreSQL backend's batches in flight (backend.h's batch_send, batch_finish,
 * batch_commit and batch_abort): the results of the writer's pipeline read back in order,
 * batch by batch, while the next batch is already sent behind them. postgres.c queues each
 * batch's statements; this file ends a batch with its COMMIT and learns its outcome.
 *
 * Batches that overlap, on one connection: batch N+1's BEGIN follows batch N's COMMIT in the
 * same segment of the pipeline (no Sync between them), so when any statement of N fails,
 * PostgreSQL skips everything after it up to the next Sync, N+1 whole included, and N+1
 * cannot commit without N (libpq's "pipeline mode": "If a pipeline contains multiple explicit
 * transactions, all transactions that committed prior to the error remain committed, the
 * currently in-progress transaction is aborted, and all subsequent operations are skipped
 * completely, including subsequent transactions"). A batch is known committed when its
 * COMMIT's own result arrives (each query carries a flush request): the Sync is sent only
 * once nothing is in flight, between bursts. Each batch still opens with its fence (lease.c).
 *
 * Threads: the writer thread alone (backend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lib/clock.h"
#include "store/fault.h"
#include "store/postgres/internal.h"
#include "store/records.h"

static void writer_drop(hf_pg_store_t *store) {
    PQfinish(store->writer);
    store->writer = NULL;
    store->writer_ready = false;
}

/* The first failure of the pipeline's results, named by what the tag points at. */
static void failure_describe(hf_pg_store_t *store, const hf_batch_t *batch, int32_t tag,
                             PGresult *result, char *error, size_t error_size) {
    char why[512];
    snprintf(why, sizeof why, "%s", PQresultErrorMessage(result));
    hf_pg_message_trim(why);
    const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    if (tag == TAG_FENCE || (state != NULL && strcmp(state, "HF001") == 0)) {
        hf_store_error_write(
            error, error_size,
            HF_STORE_LOST_LEASE ": this node no longer holds a unit of the batch (%s)", why);
        return;
    }
    const char *what = tag == TAG_BEGIN     ? "BEGIN"
                       : tag == TAG_PURGE   ? "purging old keys"
                       : tag == TAG_COMMIT  ? "COMMIT"
                       : tag == TAG_HISTORY ? "the history"
                                            : "a record";
    char subject[160] = "";
    if (tag >= 0 && batch != NULL && (size_t)tag < hf_batch_count(batch)) {
        const hf_mutation_t *m = hf_batch_at(batch, (size_t)tag);
        const char *unit = hf_store_record_unit(m);
        snprintf(subject, sizeof subject, " (record %d of type %d, unit %s)", tag, (int)m->type,
                 unit != NULL ? unit : "none");
    }
    hf_store_error_write(error, error_size, "store: %s failed%s: %s", what, subject, why);
}

/* The writer's queue of results is read from tags_read on; what was read is dropped from its
 * front once a batch is finished, so the queue holds only what is still in flight. */
static void tags_compact(hf_pg_store_t *store) {
    memmove(store->tags, store->tags + store->tags_read,
            (store->queued - store->tags_read) * sizeof *store->tags);
    store->queued -= store->tags_read;
    store->tags_read = 0;
}

/* One query's result (the first of its results; the others are dropped), or NULL with
 * *failed set when the wait failed (error written), or with *woken when wake_fd woke first. */
static PGresult *result_next(hf_pg_store_t *store, int wake_fd, bool *woken, bool *failed,
                             char *error, size_t error_size) {
    PGresult *result = NULL;
    for (;;) {
        int wake = result == NULL ? wake_fd : -1; /* never between a query's results */
        if (!hf_pg_input_wait(store->writer, store->read_deadline, wake, woken, error,
                              error_size)) {
            PQclear(result);
            *failed = true;
            return NULL;
        }
        if (*woken) return NULL;
        PGresult *next = PQgetResult(store->writer);
        if (next == NULL) break;
        /* A sync point's result stands alone: no NULL follows it. */
        bool sync = PQresultStatus(next) == PGRES_PIPELINE_SYNC;
        if (result == NULL) result = next;
        else PQclear(next);
        if (sync) break;
    }
    /* A result arrived: PostgreSQL is there and working, the wait starts again. */
    store->read_deadline = hf_clock_monotonic_seconds() + HF_PG_WAIT_MS / 1000.0;
    return result;
}

/* Reads the oldest sent batch's results up to its COMMIT's: 0 when it committed, -1 when it
 * failed, -2 when the wait failed (whether COMMIT landed is unknown); 0 with *woken when
 * wake_fd woke the wait first (what was read stays read). */
static int results_read(hf_pg_store_t *store, int wake_fd, bool *woken, char *error,
                        size_t error_size) {
    while (store->tags_read < store->queued) {
        int32_t tag = store->tags[store->tags_read];
        bool failed = false;
        PGresult *result = result_next(store, wake_fd, woken, &failed, error, error_size);
        if (failed) return -2;
        if (*woken) return 0;
        store->tags_read++;
        ExecStatusType status = result != NULL ? PQresultStatus(result) : PGRES_FATAL_ERROR;
        bool ok = tag == TAG_SYNC ? status == PGRES_PIPELINE_SYNC
                                  : status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
        /* A COMMIT of a transaction that failed answers ROLLBACK without an error. */
        bool committed = tag == TAG_COMMIT && ok && strcmp(PQcmdStatus(result), "COMMIT") == 0;
        if (!ok && status == PGRES_FATAL_ERROR)
            failure_describe(store, store->sent[0], tag, result, error, error_size);
        else if (!ok || (tag == TAG_COMMIT && !committed))
            hf_store_error_write(error, error_size,
                                 "store: the batch's transaction did not commit (%s)",
                                 PQresStatus(status));
        PQclear(result);
        if (!ok || (tag == TAG_COMMIT && !committed)) return -1;
        if (tag == TAG_COMMIT) return 0;
    }
    hf_store_error_write(error, error_size, "store: the batch's COMMIT went missing");
    return -2;
}

/* COMMIT goes out now with everything the batch queued, without waiting for anything: no
 * Sync between this batch and the next one sent, so that an error in this one makes
 * PostgreSQL skip the next one whole (a pipeline skips everything up to its next Sync), and
 * the next one cannot commit without this one (DESIGN.md, "Batches that overlap"). */
int hf_pg_batch_send(void *instance, uint64_t sequence, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    if (store->sent_count == HF_PG_SENT_MAX) {
        hf_store_error_write(error, error_size, "store: more batches sent than the backend takes");
        return -1;
    }
    if (!hf_pg_queue_text(store, "COMMIT", 0, NULL, TAG_COMMIT) || PQflush(store->writer) != 0)
        return hf_pg_send_failed(store, error, error_size);
    /* The bound on silence starts with the first batch in flight, and not again for the next. */
    if (store->sent_count == 0)
        store->read_deadline = hf_clock_monotonic_seconds() + HF_PG_WAIT_MS / 1000.0;
    store->sent[store->sent_count++] = store->batch;
    return 0;
}

/* The oldest sent batch's outcome. Once nothing is in flight a Sync ends the pipeline's
 * segment (its result is read before the next batch's), so the session rests outside any
 * transaction between bursts. */
int hf_pg_batch_finish(void *instance, uint64_t sequence, int wake_fd, bool *woken, char *error,
                       size_t error_size) {
    hf_pg_store_t *store = instance;
    *woken = false;
    if (store->writer == NULL || store->sent_count == 0) {
        hf_store_error_write(error, error_size,
                             "store: the connection to PostgreSQL was dropped with the batch");
        return -1;
    }
    int rc = results_read(store, wake_fd, woken, error, error_size);
    if (rc == 0 && *woken) return 0;
    if (rc == -2) {
        /* Unknown whether COMMIT landed: the batch is not acknowledged, the connection goes. */
        writer_drop(store);
        return -1;
    }
    if (rc != 0) return -1;
    tags_compact(store);
    memmove(store->sent, store->sent + 1, --store->sent_count * sizeof *store->sent);
    if (store->sent_count == 0) {
        if (!PQpipelineSync(store->writer)) {
            /* The batch committed: the connection's trouble is the next batch's. */
            writer_drop(store);
        } else {
            hf_pg_tag_push(store, TAG_SYNC);
        }
    }
    /* The tests' seam for "durable, not yet answered" (HOLDFAST_FAULT_SYNC_DELAY_MS): here
     * the commit is the sync. */
    hf_store_fault_sync_delay();
    return 0;
}

/* Send and finish at once: one batch at a time (the unit tests write batches this way). */
int hf_pg_batch_commit(void *instance, uint64_t sequence, char *error, size_t error_size) {
    bool woken = false;
    if (hf_pg_batch_send(instance, sequence, error, error_size) != 0) return -1;
    return hf_pg_batch_finish(instance, sequence, -1, &woken, error, error_size);
}

/* Whatever is open, queued or sent is dropped with the connection: the server rolls back the
 * open transaction and never reads past it, so no batch sent after the failed one commits
 * (the pipeline fails them too). A batch that failed on a row keeps nothing either. The next
 * batch connects again. */
void hf_pg_batch_abort(void *instance, const char *error) {
    hf_pg_store_t *store = instance;
    writer_drop(store);
    store->queued = store->tags_read = 0;
    store->sent_count = 0;
}
