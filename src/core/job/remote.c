/* A cancel job's offers on a rebook_to another unit holds (core/jobs.h, docs/DESIGN.md
 * "Rebooking onto another owner"): the job's side (its orders read out, the target's answers
 * applied, ended offers refunded, the lock of an offer's commit) and the target's (the queue
 * of ended offers). The offers' search itself is offer.c's. */
#include "core/job/internal.h"

#include <stdio.h>

#include "core/locks.h"
#include "lib/limits.h"

/* ---- remote outcomes ---- */

job_remote_t *job_remote_of(const hf_core_t *core, const job_outcome_t *outcome) {
    return outcome->remote ? &core->jobs->remotes[outcome->remote - 1] : NULL;
}

uint32_t job_remote_add(hf_core_t *core, const char *hold_id, hf_time_ms_t expires_at_ms) {
    struct jobs *jobs = jobs_state(core);
    jobs->remotes = grow(jobs->remotes, &jobs->remote_capacity, jobs->remote_count + 1,
                         sizeof *jobs->remotes);
    job_remote_t *remote = &jobs->remotes[jobs->remote_count++];
    snprintf(remote->hold_id, sizeof remote->hold_id, "%s", hold_id);
    remote->expires_at_ms = expires_at_ms;
    return jobs->remote_count;
}

job_outcome_t *job_outcome_of(const hf_core_t *core, uint32_t order_index, uint32_t *job_index) {
    const hf_order_t *order = &core->orders.slots[order_index];
    if (!core->jobs || order->target != HF_TARGET_EVENT) return NULL;
    const hf_event_t *event = core->events.slots[order->event];
    if (!event || !event->cancelled || !event->job) return NULL;
    job_entry_t *entry = &core->jobs->slots[event->job - 1];
    uint32_t position = job_outcome_position(entry, order_index);
    if (position == NO_INDEX) return NULL;
    if (job_index) *job_index = event->job - 1;
    return &entry->outcomes[position];
}

/* The order's outcome when it is the open remote offer hold_id, else NULL. */
static job_outcome_t *remote_open(const hf_core_t *core, uint32_t order_index, const char *hold_id,
                                  uint32_t *job_index) {
    job_outcome_t *outcome = job_outcome_of(core, order_index, job_index);
    const job_remote_t *remote = outcome ? job_remote_of(core, outcome) : NULL;
    if (!remote || outcome->hold || outcome->status != HF_JOB_OFFER_OFFERED ||
        strcmp(remote->hold_id, hold_id) != 0)
        return NULL;
    return outcome;
}

static uint32_t position_of(const hf_core_t *core, uint32_t job_index,
                            const job_outcome_t *outcome) {
    return (uint32_t)(outcome - core->jobs->slots[job_index].outcomes);
}

/* ---- the job's side: the orders read out ---- */

bool hf_core_job_remote(const hf_core_t *core, uint32_t job_index) {
    const hf_job_t *job = &core->jobs->slots[job_index].job;
    return job->status == HF_JOB_RUNNING && job->rebook_to[0] &&
           !hf_core_event(core, job->rebook_to, NULL);
}

bool hf_core_job_remote_order(const hf_core_t *core, uint32_t job_index, uint32_t *cursor,
                              hf_offer_order_t *out, hf_offer_scratch_t *scratch) {
    const hf_job_t *job = &core->jobs->slots[job_index].job;
    uint32_t count;
    const uint32_t *orders = hf_core_event_orders(core, job->event, &count);
    for (; *cursor < count; (*cursor)++) {
        uint32_t order_index = orders[*cursor];
        if (hf_core_order_locked_by(core, order_index)) return false;
        const hf_order_t *order = &core->orders.slots[order_index];
        if (order->status != HF_ORDER_CONFIRMED) continue;
        job_order_describe(core, order, out, scratch);
        (*cursor)++;
        return true;
    }
    return false;
}

/* ---- the job's side: the answers applied ---- */

/* The answer applied to the order at order_index: offered, or refunded. */
static void answer_apply(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                         const hf_offer_answer_t *answer, hf_time_ms_t now) {
    bool offered = answer->reservation_id && *answer->reservation_id &&
                   strlen(answer->reservation_id) <= HF_SERVER_ID_SIZE;
    if (!offered) job_order_refund(core, job_index, order_index, now);
    uint32_t remote = offered ? job_remote_add(core, answer->reservation_id, answer->expires_at_ms)
                              : 0;
    job_outcome_push(core, job_index, order_index, 0,
                     offered ? HF_JOB_OFFER_OFFERED : HF_JOB_OFFER_REFUNDED);
    job_entry_t *entry = &core->jobs->slots[job_index];
    uint32_t position = entry->outcome_count - 1;
    entry->outcomes[position].remote = remote;
    if (offered) {
        entry->job.offered++;
        entry->job.open++;
    } else {
        entry->job.refunded++;
    }
    job_offer_record(core, job_index, &entry->outcomes[position], now);
    /* Ended there already (released or lapsed while this node was down): as an ended offer. */
    if (offered && answer->ended) job_outcome_settle(core, job_index, position, false, now);
}

/* The cursor past the orders that are not confirmed, up to a confirmed or locked one. */
static void pass_over(hf_core_t *core, hf_job_t *job, const uint32_t *orders, uint32_t count) {
    while (job->cursor < count && !hf_core_order_locked_by(core, orders[job->cursor]) &&
           core->orders.slots[orders[job->cursor]].status != HF_ORDER_CONFIRMED)
        job->cursor++;
}

uint32_t hf_core_job_remote_apply(hf_core_t *core, uint32_t job_index,
                                  const hf_offer_answer_t *answers, uint32_t count,
                                  hf_time_ms_t now) {
    command_at(core, now);
    /* rebook_to came into this core meanwhile (a takeover): the job's own steps go on, and
     * adopt the offers that answer placed here (job_offer_make). */
    if (!hf_core_job_remote(core, job_index)) return 0;
    hf_job_t *job = &core->jobs->slots[job_index].job;
    uint32_t order_count, applied = 0, first = job->cursor;
    const uint32_t *orders = hf_core_event_orders(core, job->event, &order_count);
    pass_over(core, job, orders, order_count);
    while (applied < count && job->cursor < order_count) {
        uint32_t order_index = orders[job->cursor];
        if (hf_core_order_locked_by(core, order_index) ||
            strcmp(core->orders.slots[order_index].id, answers[applied].order_id) != 0)
            break;
        answer_apply(core, job_index, order_index, &answers[applied], now);
        job = &core->jobs->slots[job_index].job;
        job->cursor++;
        applied++;
        pass_over(core, job, orders, order_count);
    }
    if (job->cursor == first) return applied; /* nothing moved: nothing to record */
    bool finished = job->cursor == order_count;
    if (finished) job->status = HF_JOB_DONE;
    job_record_step(core, job_index, finished, now);
    return applied;
}

/* ---- the job's side: what the target's owner says of an open offer ---- */

hf_error_t hf_core_job_offer_ended(hf_core_t *core, const char *order_id, const char *hold_id,
                                   hf_time_ms_t now) {
    command_at(core, now);
    uint32_t order_index, job_index;
    if (!hf_core_order_find(core, order_id, &order_index)) return HF_ERROR_ORDER_NOT_FOUND;
    /* A locked order's offer is being committed: the lock's outcome decides. */
    if (hf_core_order_locked_by(core, order_index)) return HF_OK;
    job_outcome_t *outcome = remote_open(core, order_index, hold_id, &job_index);
    if (outcome)
        job_outcome_settle(core, job_index, position_of(core, job_index, outcome), false, now);
    return HF_OK;
}

hf_error_t hf_core_job_offer_held(hf_core_t *core, const char *order_id, const char *hold_id,
                                  hf_time_ms_t expires_at_ms, hf_time_ms_t now) {
    command_at(core, now);
    uint32_t order_index, job_index;
    if (!hf_core_order_find(core, order_id, &order_index)) return HF_ERROR_ORDER_NOT_FOUND;
    job_outcome_t *outcome = remote_open(core, order_index, hold_id, &job_index);
    job_remote_t *remote = outcome ? job_remote_of(core, outcome) : NULL;
    if (!remote || remote->expires_at_ms == expires_at_ms) return HF_OK;
    remote->expires_at_ms = expires_at_ms;
    job_offer_record(core, job_index, outcome, now);
    return HF_OK;
}

uint32_t hf_core_job_remote_lapsed(const hf_core_t *core, hf_time_ms_t before,
                                   hf_remote_offer_view_t *out, uint32_t max) {
    uint32_t found = 0;
    for (uint32_t j = 0; j < hf_core_job_count(core) && found < max; j++) {
        const job_entry_t *entry = &core->jobs->slots[j];
        if (entry->job.open == 0) continue;
        for (uint32_t i = 0; i < entry->outcome_count && found < max; i++) {
            const job_outcome_t *outcome = &entry->outcomes[i];
            const job_remote_t *remote = job_remote_of(core, outcome);
            if (!remote || outcome->hold || outcome->status != HF_JOB_OFFER_OFFERED ||
                remote->expires_at_ms >= before)
                continue;
            out[found++] = (hf_remote_offer_view_t){core->orders.slots[outcome->order].id,
                                                    remote->hold_id, entry->job.rebook_to,
                                                    remote->expires_at_ms};
        }
    }
    return found;
}

/* ---- the job's side: the lock of an offer's commit ---- */

bool job_offer_remote_open(const hf_core_t *core, uint32_t order_index, const char *hold_id) {
    return remote_open(core, order_index, hold_id, NULL) != NULL;
}

void job_offer_remote_accepted(hf_core_t *core, uint32_t order_index, hf_time_ms_t now) {
    uint32_t job_index;
    job_outcome_t *outcome = job_outcome_of(core, order_index, &job_index);
    if (!outcome || outcome->status != HF_JOB_OFFER_OFFERED || !job_remote_of(core, outcome))
        return;
    job_outcome_settle(core, job_index, position_of(core, job_index, outcome), true, now);
}

/* ---- the target's side: ended offers queued ---- */

void job_offer_elsewhere_ended(hf_core_t *core, uint32_t hold_index, uint8_t status) {
    if (status != HF_HOLD_RELEASED && status != HF_HOLD_EXPIRED) return;
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    const char *order_id = exchange_elsewhere_id(core, hold);
    char offer_id[HF_SERVER_ID_SIZE + 1];
    if (!order_id || strlen(order_id) > HF_ID_SIZE_MAX) return;
    offer_key_of(order_id, offer_id);
    if (strcmp(offer_id, hold->id) != 0) return; /* an exchange hold of a buyer's own */
    struct jobs *jobs = jobs_state(core);
    if (!jobs->ended) {
        jobs->ended = malloc(HF_OFFERS_ENDED_MAX * sizeof *jobs->ended);
        if (!jobs->ended) abort();
    }
    if (jobs->ended_count == HF_OFFERS_ENDED_MAX) { /* the oldest dropped: asked at expiry */
        jobs->ended_first = (jobs->ended_first + 1) % HF_OFFERS_ENDED_MAX;
        jobs->ended_count--;
    }
    hf_offer_ended_t *ended =
        &jobs->ended[(jobs->ended_first + jobs->ended_count++) % HF_OFFERS_ENDED_MAX];
    snprintf(ended->order_id, sizeof ended->order_id, "%s", order_id);
    snprintf(ended->hold_id, sizeof ended->hold_id, "%s", hold->id);
}

uint32_t hf_core_offers_ended_take(hf_core_t *core, hf_offer_ended_t *out, uint32_t max) {
    struct jobs *jobs = core->jobs;
    uint32_t taken = 0;
    while (jobs && jobs->ended_count > 0 && taken < max) {
        out[taken++] = jobs->ended[jobs->ended_first];
        jobs->ended_first = (jobs->ended_first + 1) % HF_OFFERS_ENDED_MAX;
        jobs->ended_count--;
    }
    return taken;
}
