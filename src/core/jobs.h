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
#include "lib/limits.h"

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
    const char *rebook_currency;
    bool rebook_cancelled;
    bool rebook_remote;
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
    const hf_hold_t *hold; /* the offer's exchange hold when in this core, else NULL */
    /* The offer's hold id and expiry, wherever the hold is (NULL and 0: refunded at once). */
    const char *reservation_id;
    hf_time_ms_t expires_at_ms;
    uint8_t status; /* hf_job_offer_status_t */
} hf_job_outcome_t;
/* The orders the job handled so far, in the order it went (the event's order of creation). */
uint32_t hf_core_job_outcome_count(const hf_job_t *job);
bool hf_core_job_outcome_at(const hf_core_t *core, const hf_job_t *job, uint32_t position,
                            hf_job_outcome_t *outcome);
/* The position just after the outcome of order_id (*found false when the job has none). */
uint32_t hf_core_job_outcome_after(const hf_core_t *core, const hf_job_t *job, const char *order_id,
                                   bool *found);

/* Whether an order of a cancelled event has an open offer (its exchange hold on rebook_to,
 * here or on another unit): its hold id and expiry (GET /v1/users/{user}/orders shows it as
 * "rebooking"). */
bool hf_core_order_rebooking(const hf_core_t *core, const hf_order_t *order,
                             const char **reservation_id, hf_time_ms_t *expires_at_ms);

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
    hf_time_ms_t expires_at_ms; /* the offer's, as it was recorded */
} hf_stored_job_offer_t;
hf_error_t hf_core_restore_job_offer(hf_core_t *core, const hf_stored_job_offer_t *stored);

/* ---- offers on a rebook_to another unit holds (docs/DESIGN.md "Rebooking onto another
 * owner") ---- */

/* One section's seats of an old order: they move as one group. */
typedef struct hf_offer_group {
    const char *section_id;
    int64_t price;         /* the old section's price now */
    bool together;         /* one row, consecutive numbers */
    uint32_t first, count; /* into hf_offer_order_t.seat_ids */
} hf_offer_group_t;

typedef struct hf_offer_pool {
    const char *pool_id;
    uint32_t quantity;
} hf_offer_pool_t;

/* An old order as its offer needs it, whichever core holds the target. The arrays are the
 * caller's, HF_HOLD_ITEMS_MAX each. */
typedef struct hf_offer_order {
    const char *order_id, *user_id;
    int64_t total;
    const char **seat_ids; /* seat_count, each group's seats one run */
    hf_offer_group_t *groups;
    hf_offer_pool_t *pools;
    uint32_t seat_count, group_count, pool_count;
} hf_offer_order_t;

/* Room for the texts and arrays of one order (large: on the heap). */
typedef struct hf_offer_scratch {
    const char *seat_ids[HF_HOLD_ITEMS_MAX];
    hf_offer_group_t groups[HF_HOLD_ITEMS_MAX];
    hf_offer_pool_t pools[HF_HOLD_ITEMS_MAX];
    char seat_texts[HF_HOLD_ITEMS_MAX][HF_SEAT_ID_SIZE_MAX + 1];
} hf_offer_scratch_t;

/* The job's side. Whether the job runs with a rebook_to this core does not have: its steps
 * (hf_core_job_step*) then leave it, and the cluster feeds it. */
bool hf_core_job_remote(const hf_core_t *core, uint32_t job_index);
/* The next order the job must have an offer for: from *cursor (an index into the event's
 * orders, oldest first; start at the job's cursor) the next confirmed one, written into out
 * (pointing into scratch and the core); *cursor moves past it. false at the end, or at an
 * order locked by an exchange (core/locks.h: the job waits there, as its steps do). */
bool hf_core_job_remote_order(const hf_core_t *core, uint32_t job_index, uint32_t *cursor,
                              hf_offer_order_t *out, hf_offer_scratch_t *scratch);

typedef struct hf_offer_answer {
    const char *order_id;
    const char *reservation_id; /* NULL: nothing equivalent there (refunded) */
    hf_time_ms_t expires_at_ms;
    bool ended; /* the hold ended already (released, lapsed): refunded */
} hf_offer_answer_t;
/* The target's owner answered: from the job's cursor each answer must be the next confirmed
 * order's (the orders between are passed over, as a step does): offered (the reservation
 * kept with its expiry; refunded at once when ended) or refunded, the cursor past it. Stops
 * at the first answer that is not the next confirmed order's, or at a locked order; with no
 * answers it passes over what is not confirmed up to the next confirmed or locked order. One
 * step's records, as a step's: the outcomes, then HF_MUTATION_JOB (finished at the end);
 * nothing when nothing moved. Returns the answers applied. */
uint32_t hf_core_job_remote_apply(hf_core_t *core, uint32_t job_index,
                                  const hf_offer_answer_t *answers, uint32_t count,
                                  hf_time_ms_t now);
/* The target's owner says the offer hold_id of order_id ended uncommitted (or is unknown
 * there): refunded as a lapsed offer is, when its outcome is still that open offer and the
 * order is not locked. HF_OK also when there is nothing to do; HF_ERROR_ORDER_NOT_FOUND. */
hf_error_t hf_core_job_offer_ended(hf_core_t *core, const char *order_id, const char *hold_id,
                                   hf_time_ms_t now);
/* The target's owner says the offer is still held until expires_at_ms (extended, say): kept
 * as the outcome's expiry (HF_MUTATION_JOB_OFFER when it changed). */
hf_error_t hf_core_job_offer_held(hf_core_t *core, const char *order_id, const char *hold_id,
                                  hf_time_ms_t expires_at_ms, hf_time_ms_t now);

/* Open offers whose hold is not in this core and whose expiry is before `before`, up to max,
 * for the cluster to ask their holds' owner about. */
typedef struct hf_remote_offer_view {
    const char *order_id, *hold_id, *rebook_to;
    hf_time_ms_t expires_at_ms;
} hf_remote_offer_view_t;
uint32_t hf_core_job_remote_lapsed(const hf_core_t *core, hf_time_ms_t before,
                                   hf_remote_offer_view_t *out, uint32_t max);

/* The target's side. Places the offer of another unit's order on event_id: the inventory
 * equivalent to the order's (a local offer's rules), held for order->user_id as a remote
 * exchange hold of order->order_id (core/locks.h) whose total is the order's (difference 0),
 * until expires_at_ms, its id made from the order's id as a local offer's is. *placed false
 * when nothing equivalent is free or the event is cancelled; a hold of that id here already
 * (a batch asked again after a crash) is answered as it is. HF_ERROR_EVENT_NOT_FOUND. */
hf_error_t hf_core_job_offer_place(hf_core_t *core, const char *event_id,
                                   const hf_offer_order_t *order, hf_time_ms_t expires_at_ms,
                                   hf_time_ms_t now, uint32_t *hold_index, bool *placed);

/* Offers of other units' orders (remote exchange holds whose id is their order's offer id,
 * placed here or restored) that ended released or expired since the last take, oldest first,
 * up to max. In memory only, at most HF_OFFERS_ENDED_MAX (the oldest dropped when full: the
 * job's node asks about each open offer once its expiry passed). */
#define HF_OFFERS_ENDED_MAX 4096
typedef struct hf_offer_ended {
    char order_id[HF_ID_SIZE_MAX + 1];
    char hold_id[HF_SERVER_ID_SIZE + 1];
} hf_offer_ended_t;
uint32_t hf_core_offers_ended_take(hf_core_t *core, hf_offer_ended_t *out, uint32_t max);

#endif
