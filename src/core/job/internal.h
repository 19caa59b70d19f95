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
    uint8_t status;
} job_outcome_t;

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
/* The position of the order's outcome in the entry's list, NO_INDEX when it has none. */
uint32_t job_outcome_position(const job_entry_t *entry, uint32_t order_index);
/* The order cancelled by its job, with a refund of its total (reason event_cancelled) when it
 * was paid; the caller counts it. */
void job_order_refund(hf_core_t *core, uint32_t job_index, uint32_t order_index, hf_time_ms_t now);

/* offer.c: the offer on rebook_to of the order (an exchange hold, difference 0); its hold's
 * index + 1, or 0 when nothing equivalent is free there. */
uint32_t job_offer_make(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                        hf_time_ms_t now);

#endif
