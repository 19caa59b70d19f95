/* Cancel jobs in PostgreSQL (API.md section 13), as SQLite's store writes them
 * (store/sqlite/jobs.c): a job's row at its event's cancel, updated at each step, and one row
 * per order it went through. Rows of postgres.c's table of writes. */
#include <inttypes.h>
#include <stdio.h>

#include "core/jobs.h"
#include "store/backend.h"
#include "store/postgres/internal.h"

static const char JOB_INSERT[] =
    "INSERT INTO jobs(id, event_id, rebook_to, offer_ttl_ms, orders, cursor, offered, accepted,"
    " refunded, status, created_at) VALUES($1, $2, $3, $4::bigint, $5::bigint, $6::bigint,"
    " $7::bigint, $8::bigint, $9::bigint, $10, $11::bigint)";
/* An update that finds no row fails the batch (postgres.c's holdfast_changed). */
static const char JOB_UPDATE[] =
    "WITH changed AS (UPDATE jobs SET cursor = $2::bigint, offered = $3::bigint,"
    " accepted = $4::bigint, refunded = $5::bigint, status = $6 WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char JOB_OFFER_PUT[] =
    "INSERT INTO job_offers(job_id, order_id, user_id, reservation_id, status, expires_at)"
    " VALUES($1, $2, $3, $4, $5, $6::bigint) ON CONFLICT(job_id, order_id) DO UPDATE SET"
    " status = excluded.status, expires_at = excluded.expires_at";

static const char *const NAMES[] = {"hf_job_insert", "hf_job_update", "hf_job_offer_put"};

int hf_pg_jobs_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const sql[] = {JOB_INSERT, JOB_UPDATE, JOB_OFFER_PUT};
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

/* The job's numbers as text: ttl, orders, cursor, offered, accepted, refunded, created_at. */
typedef struct job_numbers {
    char text[7][24];
} job_numbers_t;

static void numbers_write(job_numbers_t *numbers, const hf_mutation_job_t *job) {
    const int64_t values[] = {job->offer_ttl_ms, job->orders,   job->cursor,       job->offered,
                              job->accepted,     job->refunded, job->created_at_ms};
    for (int i = 0; i < 7; i++)
        snprintf(numbers->text[i], sizeof numbers->text[i], "%" PRId64, values[i]);
}

bool hf_pg_event_cancel_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_job_t *job = &m->as.job;
    job_numbers_t n;
    numbers_write(&n, job);
    const char *values[] = {job->job_id,    job->event_id,
                            job->rebook_to, n.text[0],
                            n.text[1],      n.text[2],
                            n.text[3],      n.text[4],
                            n.text[5],      hf_job_status_name((uint8_t)job->status),
                            n.text[6]};
    return hf_pg_queue_named(store, NAMES[0], 11, values, tag);
}

bool hf_pg_job_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_job_t *job = &m->as.job;
    job_numbers_t n;
    numbers_write(&n, job);
    const char *values[] = {job->job_id, n.text[2], n.text[3],
                            n.text[4],   n.text[5], hf_job_status_name((uint8_t)job->status)};
    return hf_pg_queue_named(store, NAMES[1], 6, values, tag);
}

bool hf_pg_job_offer_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_job_offer_t *offer = &m->as.job_offer;
    char expires[24];
    snprintf(expires, sizeof expires, "%" PRId64, offer->expires_at_ms);
    const char *values[] = {offer->job_id,
                            offer->order_id,
                            offer->user_id,
                            offer->reservation_id,
                            hf_job_offer_status_name((uint8_t)offer->status),
                            offer->expires_at_ms ? expires : NULL};
    return hf_pg_queue_named(store, NAMES[2], 6, values, tag);
}
