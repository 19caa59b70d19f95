/* Cancel jobs loaded back from the store (core/jobs.h): the job after its event (which it
 * cancels), its outcomes after every order and hold, in the order they were made. */
#include "core/job/internal.h"

#include <stdio.h>

hf_error_t hf_core_restore_job(hf_core_t *core, const hf_stored_job_t *stored) {
    uint32_t event_index;
    const hf_event_t *event = hf_core_event(core, stored->event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (event->cancelled || !stored->job_id || strlen(stored->job_id) > HF_SERVER_ID_SIZE ||
        hf_core_job_find(core, stored->job_id, NULL) || stored->status > HF_JOB_DONE)
        return HF_ERROR_INVALID_REQUEST;
    uint32_t index = job_add(core, stored->job_id, event_index);
    hf_job_t *job = &core->jobs->slots[index].job;
    snprintf(job->rebook_to, sizeof job->rebook_to, "%s",
             stored->rebook_to ? stored->rebook_to : "");
    job->offer_ttl_ms = stored->offer_ttl_ms;
    job->created_at_ms = stored->created_at_ms;
    job->orders = stored->orders;
    job->cursor = stored->cursor;
    job->offered = stored->offered;
    job->accepted = stored->accepted;
    job->refunded = stored->refunded;
    job->status = stored->status;
    return HF_OK;
}

hf_error_t hf_core_restore_job_offer(hf_core_t *core, const hf_stored_job_offer_t *stored) {
    uint32_t job_index, order_index, hold_index = 0;
    if (!hf_core_job_find(core, stored->job_id, &job_index) ||
        !hf_core_order_find(core, stored->order_id, &order_index) ||
        stored->status > HF_JOB_OFFER_REFUNDED)
        return HF_ERROR_INVALID_REQUEST;
    if (stored->reservation_id) {
        if (!hf_core_hold_find(core, stored->reservation_id, &hold_index))
            return HF_ERROR_INVALID_REQUEST;
        hold_index++;
    }
    job_entry_t *entry = &core->jobs->slots[job_index];
    /* Outcomes come in the order they were made: order indexes grow along the list. */
    if (entry->outcome_count > 0 && entry->outcomes[entry->outcome_count - 1].order >= order_index)
        return HF_ERROR_INVALID_REQUEST;
    if (stored->status == HF_JOB_OFFER_OFFERED) entry->job.open++;
    job_outcome_push(core, job_index, order_index, hold_index, stored->status);
    return HF_OK;
}
