/* Cancelling an event and its job (API.md section 13, second half): the event cancelled for
 * good in one step with the release of its active holds and the job's creation, then, a step
 * per turn of the server's loop (hf_core_job_step), each confirmed order of the event, oldest
 * first, cancelled with a refund of its total (reason event_cancelled). A step's records (the
 * orders', the refunds' and the job's new cursor) are one batch: a restart resumes at the
 * durable cursor, so no order is handled twice nor skipped. */
#ifndef HF_CORE_JOBS_H
#define HF_CORE_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

typedef enum hf_job_status {
    HF_JOB_RUNNING = 0,
    HF_JOB_DONE = 1,
} hf_job_status_t;

/* "running", "done"; the number of a word, false when there is none. */
const char *hf_job_status_name(uint8_t status);
bool hf_job_status_parse(const char *text, uint8_t *status);

typedef struct hf_job {
    char id[HF_SERVER_ID_SIZE + 1];
    uint32_t event;                     /* the cancelled event's index */
    char rebook_to[HF_ID_SIZE_MAX + 1]; /* the event offers go to, "" for none */
    int64_t offer_ttl_ms;
    /* The event's confirmed orders at the cancel; cursor: how many of the event's orders
     * (hf_core_event_orders, oldest first) the job has gone through. */
    uint32_t orders, cursor;
    uint32_t offered, open, accepted, refunded;
    hf_time_ms_t created_at_ms;
    uint8_t status; /* hf_job_status_t */
} hf_job_t;

/* What a cancel asks: the job's id (made by the caller, used when the event is not cancelled
 * yet), the event offers go to (NULL or "" for none) and the offers' TTL. */
typedef struct hf_cancel_request {
    const char *job_id;
    const char *rebook_to;
    int64_t offer_ttl_ms;
} hf_cancel_request_t;

/* Cancels the event: HF_MUTATION_EVENT_CANCEL, then its held holds released. A cancelled
 * event answers HF_OK with its job, whatever the request. HF_ERROR_EVENT_NOT_FOUND;
 * HF_ERROR_INVALID_REQUEST with detail->field "rebook_to" (not an existing, other,
 * not cancelled event of the same currency) or "offer_ttl_s" (not within 1 s to 30 days),
 * or "job_id" when the id is taken. *job_index is set on HF_OK. */
hf_error_t hf_core_event_cancel(hf_core_t *core, const char *event_id,
                                const hf_cancel_request_t *request, hf_time_ms_t now,
                                hf_error_detail_t *detail, uint32_t *job_index);

/* One step of every running job: at most limit orders each, then HF_MUTATION_JOB with the
 * job's new cursor and counts. Returns the orders gone through (0 when no job runs). */
uint32_t hf_core_job_step(hf_core_t *core, uint32_t limit, hf_time_ms_t now);
/* The same, each step bounded by its records too: the running jobs share records_max out,
 * and a step ends after the order that took its records to its share (one order at least).
 * The engine's bound on the batch a step makes, so that a step's commit is short. */
uint32_t hf_core_job_step_bounded(hf_core_t *core, uint32_t limit, uint64_t records_max,
                                  hf_time_ms_t now);
/* Whether some job still runs (the engine steps again at the next turn). */
bool hf_core_jobs_running(const hf_core_t *core);

const hf_job_t *hf_core_job_find(const hf_core_t *core, const char *job_id, uint32_t *index);
const hf_job_t *hf_core_job_at(const hf_core_t *core, uint32_t index);
uint32_t hf_core_job_count(const hf_core_t *core);
/* The jobs of each status (holdfast_jobs{status}). */
uint32_t hf_core_jobs_of_status(const hf_core_t *core, uint8_t status);

/* What a job did with one order (GET /v1/jobs/{id}/offers): offered (an exchange hold on
 * rebook_to), accepted (its hold committed) or refunded. */
typedef enum hf_job_offer_status {
    HF_JOB_OFFER_OFFERED = 0,
    HF_JOB_OFFER_ACCEPTED = 1,
    HF_JOB_OFFER_REFUNDED = 2,
} hf_job_offer_status_t;
const char *hf_job_offer_status_name(uint8_t status);
bool hf_job_offer_status_parse(const char *text, uint8_t *status);

typedef struct hf_job_outcome {
    const hf_order_t *order;
    const hf_hold_t *hold; /* the offer's exchange hold, NULL when refunded at once */
    uint8_t status;        /* hf_job_offer_status_t */
} hf_job_outcome_t;
/* The orders the job handled so far, in the order it went (the event's order of creation). */
uint32_t hf_core_job_outcome_count(const hf_job_t *job);
bool hf_core_job_outcome_at(const hf_core_t *core, const hf_job_t *job, uint32_t position,
                            hf_job_outcome_t *outcome);
/* The position just after the outcome of order_id (*found false when the job has none). */
uint32_t hf_core_job_outcome_after(const hf_core_t *core, const hf_job_t *job, const char *order_id,
                                   bool *found);

/* The open offer of an order of a cancelled event (its exchange hold on rebook_to), or NULL
 * when it has none open (GET /v1/users/{user}/orders shows it as "rebooking"). */
const hf_hold_t *hf_core_order_rebooking(const hf_core_t *core, const hf_order_t *order);

/* A job as stored (restore): the event must be restored first; it is then cancelled. Its
 * outcomes follow, in the order they were made, after every order. */
typedef struct hf_stored_job {
    const char *job_id, *event_id, *rebook_to;
    int64_t offer_ttl_ms, created_at_ms;
    uint32_t orders, cursor, offered, accepted, refunded;
    uint8_t status;
} hf_stored_job_t;
hf_error_t hf_core_restore_job(hf_core_t *core, const hf_stored_job_t *stored);
typedef struct hf_stored_job_offer {
    const char *job_id, *order_id;
    const char *reservation_id; /* NULL when refunded at once */
    uint8_t status;
} hf_stored_job_offer_t;
hf_error_t hf_core_restore_job_offer(hf_core_t *core, const hf_stored_job_offer_t *stored);

#endif
