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

struct jobs {
    job_entry_t *slots;
    uint32_t count, capacity;
    hf_map_t ids; /* job id -> index */
};

/* The jobs' state, made at the first cancel or restored job. */
struct jobs *jobs_state(hf_core_t *core);
/* A new job of event (its fields but id and event cleared); returns its index. */
uint32_t job_add(hf_core_t *core, const char *job_id, uint32_t event_index);
void job_outcome_push(hf_core_t *core, uint32_t job_index, uint32_t order, uint32_t hold,
                      uint8_t status);
/* The job's record as it stands (HF_MUTATION_EVENT_CANCEL or HF_MUTATION_JOB). */
void job_record(hf_core_t *core, uint32_t job_index, hf_mutation_type_t type, hf_time_ms_t now);

#endif
