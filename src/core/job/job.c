/* Cancel jobs (core/jobs.h): the cancel's one step and each job's steps. */
#include "core/job/internal.h"

#include <stdio.h>

#include "core/locks.h"
#include "lib/limits.h"

static const char *const JOB_STATUS_NAMES[] = {"running", "done"};
static const char *const OFFER_STATUS_NAMES[] = {"offered", "accepted", "refunded"};

const char *hf_job_status_name(uint8_t status) {
    return status <= HF_JOB_DONE ? JOB_STATUS_NAMES[status] : "unknown";
}

const char *hf_job_offer_status_name(uint8_t status) {
    return status <= HF_JOB_OFFER_REFUNDED ? OFFER_STATUS_NAMES[status] : "unknown";
}

bool hf_job_status_parse(const char *text, uint8_t *status) {
    for (unsigned i = 0; i <= HF_JOB_DONE; i++)
        if (strcmp(text, JOB_STATUS_NAMES[i]) == 0) {
            *status = (uint8_t)i;
            return true;
        }
    return false;
}

bool hf_job_offer_status_parse(const char *text, uint8_t *status) {
    for (unsigned i = 0; i <= HF_JOB_OFFER_REFUNDED; i++)
        if (strcmp(text, OFFER_STATUS_NAMES[i]) == 0) {
            *status = (uint8_t)i;
            return true;
        }
    return false;
}

/* ---- the state ---- */

struct jobs *jobs_state(hf_core_t *core) {
    if (!core->jobs) {
        core->jobs = calloc(1, sizeof *core->jobs);
        if (!core->jobs) abort(); /* out of memory: nothing sensible to answer */
        hf_map_init(&core->jobs->ids);
        hf_map_init(&core->jobs->offer_holds);
        core->jobs->scratch = malloc(sizeof *core->jobs->scratch);
        core->jobs->sorted = malloc(HF_HOLD_ITEMS_MAX * sizeof *core->jobs->sorted);
        core->jobs->items = job_offer_items_new();
        if (!core->jobs->scratch || !core->jobs->sorted || !core->jobs->items) abort();
    }
    return core->jobs;
}

void jobs_free(hf_core_t *core) {
    struct jobs *jobs = core->jobs;
    if (!jobs) return;
    for (uint32_t i = 0; i < jobs->count; i++) free(jobs->slots[i].outcomes);
    free(jobs->slots);
    hf_map_free(&jobs->ids);
    hf_map_free(&jobs->offer_holds);
    free(jobs->pending);
    free(jobs->remotes);
    free(jobs->ended);
    free(jobs->scratch);
    free(jobs->sorted);
    free(jobs->items);
    free(jobs);
    core->jobs = NULL;
}

uint32_t job_add(hf_core_t *core, const char *job_id, uint32_t event_index) {
    struct jobs *jobs = jobs_state(core);
    jobs->slots = grow(jobs->slots, &jobs->capacity, jobs->count + 1, sizeof *jobs->slots);
    uint32_t index = jobs->count++;
    job_entry_t *entry = &jobs->slots[index];
    memset(entry, 0, sizeof *entry);
    snprintf(entry->job.id, sizeof entry->job.id, "%s", job_id);
    entry->job.event = event_index;
    hf_map_put(&jobs->ids, entry->job.id, strlen(entry->job.id), index);
    core->events.slots[event_index]->cancelled = true;
    core->events.slots[event_index]->job = index + 1;
    return index;
}

void job_outcome_push(hf_core_t *core, uint32_t job_index, uint32_t order, uint32_t hold,
                      uint8_t status) {
    job_entry_t *entry = &core->jobs->slots[job_index];
    entry->outcomes = grow(entry->outcomes, &entry->outcome_capacity, entry->outcome_count + 1,
                           sizeof *entry->outcomes);
    entry->outcomes[entry->outcome_count++] = (job_outcome_t){order, hold, 0, status};
}

const hf_job_t *hf_core_job_find(const hf_core_t *core, const char *job_id, uint32_t *index) {
    uint32_t found;
    if (!core->jobs || !job_id || !hf_map_get(&core->jobs->ids, job_id, strlen(job_id), &found))
        return NULL;
    if (index) *index = found;
    return &core->jobs->slots[found].job;
}

const hf_job_t *hf_core_job_at(const hf_core_t *core, uint32_t index) {
    return &core->jobs->slots[index].job;
}

uint32_t hf_core_job_count(const hf_core_t *core) { return core->jobs ? core->jobs->count : 0; }

uint32_t hf_core_jobs_of_status(const hf_core_t *core, uint8_t status) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < hf_core_job_count(core); i++)
        count += core->jobs->slots[i].job.status == status;
    return count;
}

bool hf_core_jobs_running(const hf_core_t *core) {
    return hf_core_jobs_of_status(core, HF_JOB_RUNNING) > 0;
}

uint32_t hf_core_job_outcome_count(const hf_job_t *job) {
    return ((const job_entry_t *)job)->outcome_count; /* job is the entry's first member */
}

bool hf_core_job_outcome_at(const hf_core_t *core, const hf_job_t *job, uint32_t position,
                            hf_job_outcome_t *outcome) {
    const job_entry_t *entry = (const job_entry_t *)job;
    if (position >= entry->outcome_count) return false;
    const job_outcome_t *kept = &entry->outcomes[position];
    outcome->order = &core->orders.slots[kept->order];
    outcome->hold = kept->hold ? &core->holds.slots[kept->hold - 1] : NULL;
    const job_remote_t *remote = job_remote_of(core, kept);
    outcome->reservation_id = outcome->hold ? outcome->hold->id : remote ? remote->hold_id : NULL;
    outcome->expires_at_ms = outcome->hold ? outcome->hold->expires_at_ms
                             : remote      ? remote->expires_at_ms
                                           : 0;
    outcome->status = kept->status;
    return true;
}

uint32_t job_outcome_position(const job_entry_t *entry, uint32_t order_index) {
    /* Order indexes grow along the list: a binary search. */
    uint32_t low = 0, high = entry->outcome_count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (entry->outcomes[middle].order < order_index) low = middle + 1;
        else high = middle;
    }
    bool found = low < entry->outcome_count && entry->outcomes[low].order == order_index;
    return found ? low : NO_INDEX;
}

uint32_t hf_core_job_outcome_after(const hf_core_t *core, const hf_job_t *job, const char *order_id,
                                   bool *found) {
    uint32_t order_index;
    *found = false;
    if (!hf_core_order_find(core, order_id, &order_index)) return 0;
    uint32_t position = job_outcome_position((const job_entry_t *)job, order_index);
    *found = position != NO_INDEX;
    return *found ? position + 1 : 0;
}

/* ---- records ---- */

static void job_record_of(hf_core_t *core, uint32_t job_index, hf_mutation_type_t type,
                          bool finished, hf_time_ms_t now) {
    const hf_job_t *job = &core->jobs->slots[job_index].job;
    hf_mutation_t mutation = {.type = type,
                              .at_ms = now,
                              .as.job = {.job_id = job->id,
                                         .event_id = core->events.slots[job->event]->id,
                                         .rebook_to = job->rebook_to[0] ? job->rebook_to : NULL,
                                         .offer_ttl_ms = job->offer_ttl_ms,
                                         .created_at_ms = job->created_at_ms,
                                         .orders = job->orders,
                                         .cursor = job->cursor,
                                         .offered = job->offered,
                                         .accepted = job->accepted,
                                         .refunded = job->refunded,
                                         .status = job->status,
                                         .finished = finished}};
    record_emit(core, &mutation);
}

void job_record(hf_core_t *core, uint32_t job_index, hf_mutation_type_t type, hf_time_ms_t now) {
    job_record_of(core, job_index, type, false, now);
}

void job_record_step(hf_core_t *core, uint32_t job_index, bool finished, hf_time_ms_t now) {
    job_record_of(core, job_index, HF_MUTATION_JOB, finished, now);
}

void job_offer_record(hf_core_t *core, uint32_t job_index, const job_outcome_t *outcome,
                      hf_time_ms_t now) {
    const hf_job_t *job = &core->jobs->slots[job_index].job;
    const hf_order_t *order = &core->orders.slots[outcome->order];
    const hf_hold_t *hold = outcome->hold ? &core->holds.slots[outcome->hold - 1] : NULL;
    const job_remote_t *remote = hold ? NULL : job_remote_of(core, outcome);
    hf_mutation_t mutation = {.type = HF_MUTATION_JOB_OFFER,
                              .at_ms = now,
                              .as.job_offer = {.job_id = job->id,
                                               .event_id = core->events.slots[job->event]->id,
                                               .order_id = order->id,
                                               .user_id = hf_core_user_id(core, order->user),
                                               .reservation_id = hold     ? hold->id
                                                                 : remote ? remote->hold_id
                                                                          : NULL,
                                               .status = outcome->status,
                                               .expires_at_ms = hold     ? hold->expires_at_ms
                                                                : remote ? remote->expires_at_ms
                                                                         : 0}};
    record_emit(core, &mutation);
}

/* ---- the cancel ---- */

static hf_error_t cancel_check(hf_core_t *core, const hf_event_t *event,
                               const hf_cancel_request_t *request, hf_error_detail_t *detail) {
    if (request->offer_ttl_ms < 1000 || request->offer_ttl_ms > HF_JOB_OFFER_TTL_MS_MAX)
        return invalid(detail, "offer_ttl_s");
    if (request->rebook_to && *request->rebook_to) {
        const hf_event_t *target = hf_core_event(core, request->rebook_to, NULL);
        /* Another unit's, as its owner described it (the cluster asked: core/jobs.h). */
        bool remote = !target && request->rebook_remote && request->rebook_currency;
        bool cancelled = target ? target->cancelled : request->rebook_cancelled;
        const char *currency = target ? target->currency : request->rebook_currency;
        if ((!target && !remote) || target == event || cancelled ||
            strcmp(currency, event->currency) != 0)
            return invalid(detail, "rebook_to");
    }
    if (!request->job_id || strlen(request->job_id) > HF_SERVER_ID_SIZE ||
        hf_core_job_find(core, request->job_id, NULL))
        return invalid(detail, "job_id");
    return HF_OK;
}

/* The event's held holds released (its offers' exchange holds on other events stay). */
static void release_held(hf_core_t *core, uint32_t event_index, hf_time_ms_t now) {
    for (uint32_t i = 0; i < core->holds.count; i++) {
        const hf_hold_t *hold = &core->holds.slots[i];
        if (hold->status == HF_HOLD_HELD && hold->target == HF_TARGET_EVENT &&
            hold->event == event_index)
            hold_finish(core, i, HF_HOLD_RELEASED, now, true);
    }
}

static uint32_t confirmed_orders(const hf_core_t *core, uint32_t event_index) {
    uint32_t count, confirmed = 0;
    const uint32_t *orders = hf_core_event_orders(core, event_index, &count);
    for (uint32_t i = 0; i < count; i++)
        confirmed += core->orders.slots[orders[i]].status == HF_ORDER_CONFIRMED;
    return confirmed;
}

hf_error_t hf_core_event_cancel(hf_core_t *core, const char *event_id,
                                const hf_cancel_request_t *request, hf_time_ms_t now,
                                hf_error_detail_t *detail, uint32_t *job_index) {
    command_at(core, now);
    uint32_t event_index;
    const hf_event_t *event = hf_core_event(core, event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (event->cancelled) {
        *job_index = event->job - 1;
        return HF_OK;
    }
    hf_error_t error = cancel_check(core, event, request, detail);
    if (error) return error;
    uint32_t index = job_add(core, request->job_id, event_index);
    hf_job_t *job = &core->jobs->slots[index].job;
    if (request->rebook_to)
        snprintf(job->rebook_to, sizeof job->rebook_to, "%s", request->rebook_to);
    job->offer_ttl_ms = request->offer_ttl_ms;
    job->orders = confirmed_orders(core, event_index);
    job->created_at_ms = now;
    job->status = HF_JOB_RUNNING;
    job_record(core, index, HF_MUTATION_EVENT_CANCEL, now);
    waitlist_event_cancelled(core, event_index, now);
    release_held(core, event_index, now);
    *job_index = index;
    return HF_OK;
}

/* ---- a step ---- */

/* A job's refund id, made from the order's: the job's refunds need no id from a request, and
 * a step run again after a crash makes the same ids. */
static text_key_t refund_key_of(const hf_order_t *order, char out[HF_SERVER_ID_SIZE + 1]) {
    /* The order id's end, which holds its random part, after a prefix of the job's own. */
    size_t length = strlen(order->id), room = HF_SERVER_ID_SIZE - 4;
    size_t kept = length < room ? length : room;
    memcpy(out, "ref_", 4);
    memcpy(out + 4, order->id + length - kept, kept);
    out[4 + kept] = '\0';
    return text_key_of(out, 4 + kept);
}

void job_order_refund(hf_core_t *core, uint32_t job_index, uint32_t order_index, hf_time_ms_t now) {
    (void)job_index;
    char refund_id[HF_SERVER_ID_SIZE + 1];
    text_key_t key = refund_key_of(&core->orders.slots[order_index], refund_id);
    order_cancel_apply(core, order_index, &key, HF_REFUND_EVENT_CANCELLED, NULL, now);
}

/* The order offered on rebook_to when something equivalent is free there, else refunded. */
static void order_handle(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                         hf_time_ms_t now) {
    uint32_t hold = core->jobs->slots[job_index].job.rebook_to[0]
                        ? job_offer_make(core, job_index, order_index, now)
                        : 0;
    hf_job_t *job = &core->jobs->slots[job_index].job;
    if (hold) {
        job->offered++;
        job->open++;
    } else {
        job_order_refund(core, job_index, order_index, now);
        core->jobs->slots[job_index].job.refunded++;
    }
    job_outcome_push(core, job_index, order_index, hold,
                     hold ? HF_JOB_OFFER_OFFERED : HF_JOB_OFFER_REFUNDED);
    job_entry_t *entry = &core->jobs->slots[job_index];
    job_offer_record(core, job_index, &entry->outcomes[entry->outcome_count - 1], now);
}

/* A step of the job: orders from its cursor until limit of them were gone through, or until
 * the step's records reached records_max (after the order that reached it: each step goes
 * through one order at least, so a job always ends), or until an order locked by an exchange
 * across two owners (core/locks.h). Such an order's fate is the other unit's decision: handled
 * now, its refund could come beside the new order the decision confirms. The job waits at it
 * (a step that goes through nothing records nothing) until the lock ends, which the
 * resolution of core/locks.h bounds: exchanged, it is passed over; confirmed, it is handled. */
static uint32_t job_step(hf_core_t *core, uint32_t job_index, uint32_t limit, uint64_t records_max,
                         hf_time_ms_t now) {
    /* Its offers are the target's owner's to place (the cluster feeds it: remote.c). */
    if (hf_core_job_remote(core, job_index)) return 0;
    hf_job_t *job = &core->jobs->slots[job_index].job;
    uint32_t count;
    const uint32_t *orders = hf_core_event_orders(core, job->event, &count);
    uint32_t handled = 0;
    uint64_t first_change = core->change_count;
    while (job->cursor < count && handled < limit &&
           (handled == 0 || core->change_count - first_change < records_max)) {
        uint32_t order_index = orders[job->cursor];
        if (hf_core_order_locked_by(core, order_index)) break;
        if (core->orders.slots[order_index].status == HF_ORDER_CONFIRMED) {
            order_handle(core, job_index, order_index, now);
            job = &core->jobs->slots[job_index].job;
        }
        job->cursor++;
        handled++;
    }
    if (handled == 0 && job->cursor < count) return 0; /* waiting at a locked order */
    bool finished = job->cursor == count;
    if (finished) job->status = HF_JOB_DONE;
    job_record_step(core, job_index, finished, now);
    return handled;
}

uint32_t hf_core_job_step_bounded(hf_core_t *core, uint32_t limit, uint64_t records_max,
                                  hf_time_ms_t now) {
    command_at(core, now);
    uint32_t running = hf_core_jobs_of_status(core, HF_JOB_RUNNING), handled = 0;
    if (running == 0) return 0;
    /* The records shared out: one job's step does not leave the others none. */
    uint64_t share = records_max / running;
    for (uint32_t i = 0; i < hf_core_job_count(core); i++)
        if (core->jobs->slots[i].job.status == HF_JOB_RUNNING)
            handled += job_step(core, i, limit, share, now);
    return handled;
}

uint32_t hf_core_job_step(hf_core_t *core, uint32_t limit, hf_time_ms_t now) {
    return hf_core_job_step_bounded(core, limit, UINT64_MAX, now);
}
