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

static void pending_push(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                         const hf_stored_job_offer_t *stored) {
    struct jobs *jobs = core->jobs;
    jobs->pending = grow(jobs->pending, &jobs->pending_capacity, jobs->pending_count + 1,
                         sizeof *jobs->pending);
    job_pending_offer_t *pending = &jobs->pending[jobs->pending_count++];
    pending->job = job_index;
    pending->order = order_index;
    snprintf(pending->hold_id, sizeof pending->hold_id, "%s", stored->reservation_id);
}

void jobs_restore_finish(hf_core_t *core) {
    struct jobs *jobs = core->jobs;
    for (uint32_t i = 0; jobs && i < jobs->pending_count;) {
        job_pending_offer_t *pending = &jobs->pending[i];
        uint32_t hold_index;
        if (!hf_core_hold_find(core, pending->hold_id, &hold_index)) {
            i++; /* its unit is not loaded here: it stays without its hold */
            continue;
        }
        job_entry_t *entry = &jobs->slots[pending->job];
        uint32_t position = job_outcome_position(entry, pending->order);
        if (position != NO_INDEX) {
            entry->outcomes[position].hold = hold_index + 1;
            if (entry->outcomes[position].status == HF_JOB_OFFER_OFFERED)
                hf_map_put(&jobs->offer_holds, pending->hold_id, strlen(pending->hold_id),
                           pending->job);
        }
        *pending = jobs->pending[--jobs->pending_count];
    }
}

hf_error_t hf_core_restore_job_offer(hf_core_t *core, const hf_stored_job_offer_t *stored) {
    uint32_t job_index, order_index, hold_index = 0;
    if (!hf_core_job_find(core, stored->job_id, &job_index) ||
        !hf_core_order_find(core, stored->order_id, &order_index) ||
        stored->status > HF_JOB_OFFER_REFUNDED)
        return HF_ERROR_INVALID_REQUEST;
    /* An offer's hold is on rebook_to, another unit: a load of this unit alone (a read
     * across units, a takeover with several nodes) may not have it, and the outcome is then
     * kept without it (docs/API.md: offers across owners). */
    uint32_t remote = 0;
    if (stored->reservation_id && strlen(stored->reservation_id) > HF_SERVER_ID_SIZE)
        return HF_ERROR_INVALID_REQUEST;
    if (stored->reservation_id && hf_core_hold_find(core, stored->reservation_id, &hold_index)) {
        hold_index++;
    } else if (stored->reservation_id) {
        /* Known by its id and expiry until its hold comes (or for good: another unit's). */
        pending_push(core, job_index, order_index, stored);
        remote = job_remote_add(core, stored->reservation_id, stored->expires_at_ms);
        hold_index = 0;
    } else {
        hold_index = 0;
    }
    job_entry_t *entry = &core->jobs->slots[job_index];
    /* Outcomes come in the order they were made: order indexes grow along the list. */
    if (entry->outcome_count > 0 && entry->outcomes[entry->outcome_count - 1].order >= order_index)
        return HF_ERROR_INVALID_REQUEST;
    if (stored->status == HF_JOB_OFFER_OFFERED) entry->job.open++;
    if (stored->status == HF_JOB_OFFER_OFFERED && hold_index) {
        const char *hold_id = core->holds.slots[hold_index - 1].id;
        hf_map_put(&core->jobs->offer_holds, hold_id, strlen(hold_id), job_index);
    }
    job_outcome_push(core, job_index, order_index, hold_index, stored->status);
    entry = &core->jobs->slots[job_index];
    entry->outcomes[entry->outcome_count - 1].remote = remote;
    return HF_OK;
}
