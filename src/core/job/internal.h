/* Private to src/core/job/: the jobs' state (core->jobs) and what its files share. */
#ifndef HF_CORE_JOB_INTERNAL_H
#define HF_CORE_JOB_INTERNAL_H

#include "core/internal.h"
#include "core/jobs.h"

/* What a job did with one order: the order's index, the offer's status (hf_job_offer_status_t)
 * and its hold (index + 1, 0 when refunded at once). Kept in the order the job went, which is
 * the event's order of creation, so order indexes grow along the list. */
typedef struct job_outcome {
    uint32_t order;
    uint32_t hold;
    /* An offer whose hold is not in this core (placed on another unit's rebook_to, or
     * restored before its hold's unit): index + 1 into jobs.remotes, else 0. */
    uint32_t remote;
    uint8_t status;
} job_outcome_t;

/* Such an offer's hold as its owner answered it. */
typedef struct job_remote {
    char hold_id[HF_SERVER_ID_SIZE + 1];
    hf_time_ms_t expires_at_ms;
} job_remote_t;

typedef struct job_entry {
    hf_job_t job;
    job_outcome_t *outcomes;
    uint32_t outcome_count, outcome_capacity;
} job_entry_t;

/* An outcome restored before its offer's hold (on rebook_to, another unit, loaded later). */
typedef struct job_pending_offer {
    uint32_t job, order;
    char hold_id[HF_SERVER_ID_SIZE + 1];
} job_pending_offer_t;

struct jobs {
    job_entry_t *slots;
    uint32_t count, capacity;
    hf_map_t ids; /* job id -> index */
    /* An offer's hold id -> its job's index: an exchange hold that ends asks here whether it
     * was an offer (job_offer_settle). */
    hf_map_t offer_holds;
    job_pending_offer_t *pending; /* restored outcomes whose hold is still to come */
    uint32_t pending_count, pending_capacity;
    job_remote_t *remotes; /* see job_outcome_t.remote */
    uint32_t remote_count, remote_capacity;
    /* Offers of other units' orders that ended here, for their jobs' nodes (a ring of
     * HF_OFFERS_ENDED_MAX: the oldest is dropped when full). */
    hf_offer_ended_t *ended;
    uint32_t ended_first, ended_count;
    /* One offer's search at a time: the old order described, its seats sorted, the items. */
    hf_offer_scratch_t *scratch;
    uint32_t *sorted;
    struct offer_items *items;
};

/* The jobs' state, made at the first cancel or restored job. */
struct jobs *jobs_state(hf_core_t *core);
/* A new job of event (its fields but id and event cleared); returns its index. */
uint32_t job_add(hf_core_t *core, const char *job_id, uint32_t event_index);
void job_outcome_push(hf_core_t *core, uint32_t job_index, uint32_t order, uint32_t hold,
                      uint8_t status);
/* The job's record as it stands (HF_MUTATION_EVENT_CANCEL or HF_MUTATION_JOB). */
void job_record(hf_core_t *core, uint32_t job_index, hf_mutation_type_t type, hf_time_ms_t now);
void job_offer_record(hf_core_t *core, uint32_t job_index, const job_outcome_t *outcome,
                      hf_time_ms_t now);
/* A step's record: finished when the step went through the last order (its job_done). */
void job_record_step(hf_core_t *core, uint32_t job_index, bool finished, hf_time_ms_t now);
/* The position of the order's outcome in the entry's list, NO_INDEX when it has none. */
uint32_t job_outcome_position(const job_entry_t *entry, uint32_t order_index);
/* The order cancelled by its job, with a refund of its total (reason event_cancelled) when it
 * was paid; the caller counts it. */
void job_order_refund(hf_core_t *core, uint32_t job_index, uint32_t order_index, hf_time_ms_t now);

/* The job's outcome of the order, or NULL (a job of the order's event, cancelled). */
job_outcome_t *job_outcome_of(const hf_core_t *core, uint32_t order_index, uint32_t *job_index);
/* A remote outcome's hold (remote.c): kept with the outcome, or NULL. */
job_remote_t *job_remote_of(const hf_core_t *core, const job_outcome_t *outcome);
uint32_t job_remote_add(hf_core_t *core, const char *hold_id, hf_time_ms_t expires_at_ms);
/* The open offer of the order settled: accepted, or refunded (the order cancelled), with its
 * records (offer.c's and remote.c's). */
void job_outcome_settle(hf_core_t *core, uint32_t job_index, uint32_t position, bool accepted,
                        hf_time_ms_t at);

/* offer.c: the old order described as an offer needs it (out's arrays the scratch's). */
void job_order_describe(const hf_core_t *core, const hf_order_t *order, hf_offer_order_t *out,
                        hf_offer_scratch_t *scratch);
/* An offer's hold id, made from its order's id ("res_" and the id's tail). */
text_key_t offer_key_of(const char *order_id, char out[HF_SERVER_ID_SIZE + 1]);
struct offer_items *job_offer_items_new(void);

/* offer.c: the offer on rebook_to of the order (an exchange hold, difference 0); its hold's
 * index + 1, or 0 when nothing equivalent is free there. */
uint32_t job_offer_make(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                        hf_time_ms_t now);

#endif
