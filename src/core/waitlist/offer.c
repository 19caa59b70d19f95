/* What happens when inventory comes free on an event with waiting entries (API.md section
 * 14): the first entries (by join number) whose whole quantity the target's free public
 * inventory can fill get it as an ordinary hold (the offer), in the command that freed it;
 * entries that cannot be filled keep their place; an offer's end fulfils or lapses its entry. */
#include <stdio.h>

#include "core/internal.h"
#include "core/waitlist/waitlist.h"

void record_waitlist(hf_core_t *core, uint32_t index) {
    hf_waitlist_view_t view;
    entry_view(core, index, &view);
    const waitlist_entry_t *entry = &core->waitlists->entries[index];
    hf_mutation_t mutation = {.type = HF_MUTATION_WAITLIST,
                              .at_ms = entry->changed_at_ms,
                              .as.waitlist = {.waitlist_id = entry->id,
                                              .event_id = core->events.slots[entry->event]->id,
                                              .user_id = view.user_id,
                                              .section = view.section,
                                              .pool = view.pool,
                                              .hold_id = view.reservation_id,
                                              .quantity = entry->quantity,
                                              .sequence = entry->sequence,
                                              .status = entry->status,
                                              .joined_at_ms = entry->joined_at_ms}};
    record_emit(core, &mutation);
}

void waitlist_link_hold(hf_core_t *core, uint32_t hold_index, uint32_t entry) {
    struct waitlists *waitlists = core->waitlists;
    if (hold_index >= waitlists->hold_capacity) {
        uint32_t old = waitlists->hold_capacity;
        waitlists->hold_entries = grow(waitlists->hold_entries, &waitlists->hold_capacity,
                                       hold_index + 1, sizeof *waitlists->hold_entries);
        memset(waitlists->hold_entries + old, 0,
               (size_t)(waitlists->hold_capacity - old) * sizeof *waitlists->hold_entries);
    }
    waitlists->hold_entries[hold_index] = entry + 1;
    waitlists->entries[entry].hold = hold_index + 1;
    waitlists->entries[entry].offered = true;
}

/* The entry whose offer is the hold, else NO_INDEX: a forgotten hold's slot may hold another
 * hold since, whose id is not the offer's ("res_" and the entry's id after "w_"). */
static uint32_t entry_of_hold(const hf_core_t *core, uint32_t hold_index) {
    const struct waitlists *waitlists = core->waitlists;
    if (!waitlists || hold_index >= waitlists->hold_capacity) return NO_INDEX;
    uint32_t entry = waitlists->hold_entries[hold_index];
    if (!entry) return NO_INDEX;
    const char *hold_id = core->holds.slots[hold_index].id;
    const char *entry_id = waitlists->entries[entry - 1].id;
    if (strncmp(hold_id, "res_", 4) != 0 || strcmp(hold_id + 4, entry_id + 2) != 0) return NO_INDEX;
    return entry - 1;
}

const char *hf_core_hold_waitlist_id(const hf_core_t *core, uint32_t hold_index) {
    uint32_t entry = entry_of_hold(core, hold_index);
    return entry == NO_INDEX ? NULL : core->waitlists->entries[entry].id;
}

void entry_status_set(hf_core_t *core, uint32_t index, uint8_t status, hf_time_ms_t now) {
    waitlist_entry_t *entry = &core->waitlists->entries[index];
    event_waitlist_t *list = &core->waitlists->events[entry->event];
    status_add(list, entry->status, entry->sequence, -1);
    status_add(list, status, entry->sequence, 1);
    core->waitlists->by_status[entry->status]--;
    core->waitlists->by_status[status]++;
    entry->status = status;
    entry->changed_at_ms = now;
    record_waitlist(core, index);
}

void waitlist_hold_freed(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at) {
    uint32_t entry = entry_of_hold(core, hold_index);
    if (entry != NO_INDEX && core->waitlists->entries[entry].status == HF_WAITLIST_OFFERED) {
        uint8_t next = status == HF_HOLD_CONFIRMED ? HF_WAITLIST_FULFILLED : HF_WAITLIST_LAPSED;
        entry_status_set(core, entry, next, at);
    }
    if (status == HF_HOLD_CONFIRMED) return;
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    waitlist_came_free(core, hold->event, core->items + hold->item_offset, hold->seat_count,
                       hold->pool_count);
}

static void target_mark(hf_core_t *core, event_waitlist_t *list, uint32_t event, uint32_t target) {
    list->targets[target].dirty = true;
    if (list->dirty) return;
    struct waitlists *waitlists = core->waitlists;
    list->dirty = true;
    waitlists->dirty_events = grow(waitlists->dirty_events, &waitlists->dirty_capacity,
                                   waitlists->dirty_count + 1, sizeof *waitlists->dirty_events);
    waitlists->dirty_events[waitlists->dirty_count++] = event;
}

void waitlist_came_free(hf_core_t *core, uint32_t event, const hf_item_t *items,
                        uint32_t seat_count, uint32_t pool_count) {
    struct waitlists *waitlists = core->waitlists;
    if (!waitlists || event >= waitlists->event_capacity) return;
    event_waitlist_t *list = &waitlists->events[event];
    if (!list->targets || list->waiting == 0) return;
    const hf_event_t *slot = core->events.slots[event];
    if (seat_count > 0) target_mark(core, list, event, 0);
    for (uint32_t i = 0; i < seat_count; i++)
        target_mark(core, list, event, 1 + slot->rows[seat_row(slot, items[i].index)].section);
    for (uint32_t i = seat_count; i < seat_count + pool_count; i++)
        target_mark(core, list, event, 1 + slot->section_count + items[i].index);
}

/* The free public inventory of a target. */
static int64_t target_free(const hf_event_t *event, uint32_t target) {
    if (target == 0) return event->counts.available;
    if (target <= event->section_count) return event->sections[target - 1].counts.available;
    /* The public's units only: an allocation's are never offered (API.md section 14). */
    return hf_core_pool_available(&event->pools[target - 1 - event->section_count]);
}

/* Holds the entry's quantity for its user (adjacent seats when a block is free, else the best
 * ones); false when the hold is refused (sales closed, the user's limit): the entry keeps its
 * place. */
static bool offer(hf_core_t *core, uint32_t index, hf_time_ms_t now) {
    const waitlist_entry_t *entry = &core->waitlists->entries[index];
    const hf_event_t *event = core->events.slots[entry->event];
    char hold_id[HF_SERVER_ID_SIZE + 1], user_id[HF_USER_ID_SIZE_MAX + 1];
    snprintf(hold_id, sizeof hold_id, "res_%s", entry->id + 2);
    snprintf(user_id, sizeof user_id, "%s", core->strings + entry->user_string);
    hf_pool_request_t pool = {.quantity = entry->quantity};
    hf_hold_request_t request = {.event_id = event->id,
                                 .user_id = user_id,
                                 .hold_id = hold_id,
                                 .ttl_ms = core->waitlists->events[entry->event].offer_ttl_ms,
                                 .best_adjacent = true,
                                 .waitlist_offer = true};
    if (entry->target > event->section_count) {
        pool.pool_id = event->pools[entry->target - 1 - event->section_count].id;
        request.pools = &pool;
        request.pool_count = 1;
    } else {
        request.best_count = entry->quantity;
        if (entry->target > 0) request.best_section = event->sections[entry->target - 1].id;
    }
    hf_error_detail_t detail;
    uint32_t hold_index;
    hf_error_t error = hf_core_hold(core, &request, now, &hold_index, &detail);
    if (error && request.best_count > 1) {
        request.best_adjacent = false;
        error = hf_core_hold(core, &request, now, &hold_index, &detail);
    }
    if (error) return false;
    waitlist_link_hold(core, hold_index, index);
    entry_status_set(core, index, HF_WAITLIST_OFFERED, now);
    return true;
}

/* An entry whose offer was refused, taken off its queue's head until the settle ends. */
typedef struct set_aside {
    uint32_t entry, target, quantity_queue;
} set_aside_t;

/* The waiting entry of a dirty target with the smallest join number that its target's free
 * inventory can fill, else NO_INDEX. */
static uint32_t first_fillable(struct waitlists *waitlists, event_waitlist_t *list,
                               const hf_event_t *event, set_aside_t *found) {
    uint32_t best = NO_INDEX;
    for (uint32_t t = 0; t < list->target_count; t++) {
        if (!list->targets[t].dirty) continue;
        uint32_t q;
        uint32_t head = target_first_fillable(waitlists, list, t, target_free(event, t), &q);
        if (head == NO_INDEX) continue;
        if (best != NO_INDEX &&
            waitlists->entries[head].sequence >= waitlists->entries[best].sequence)
            continue;
        best = head;
        *found = (set_aside_t){head, t, q};
    }
    return best;
}

static void settle_event(hf_core_t *core, uint32_t event, hf_time_ms_t now) {
    struct waitlists *waitlists = core->waitlists;
    event_waitlist_t *list = &waitlists->events[event];
    set_aside_t *aside = NULL;
    uint32_t aside_count = 0, aside_capacity = 0;
    for (;;) {
        set_aside_t found;
        if (first_fillable(waitlists, list, core->events.slots[event], &found) == NO_INDEX) break;
        if (offer(core, found.entry, now)) continue;
        queue_pop(&list->targets[found.target].by_quantity[found.quantity_queue]);
        aside = grow(aside, &aside_capacity, aside_count + 1, sizeof *aside);
        aside[aside_count++] = found;
    }
    while (aside_count > 0) {
        const set_aside_t *back = &aside[--aside_count];
        queue_push_front(&list->targets[back->target].by_quantity[back->quantity_queue],
                         back->entry);
    }
    free(aside);
    for (uint32_t t = 0; t < list->target_count; t++) list->targets[t].dirty = false;
    list->dirty = false;
}

/* One entry's link to its hold (waitlist_check). */
static const char *entry_check(const hf_core_t *core, uint32_t index) {
    const waitlist_entry_t *entry = &core->waitlists->entries[index];
    if (entry->status == HF_WAITLIST_OFFERED) {
        if (!entry->hold || entry_of_hold(core, entry->hold - 1) != index)
            return "an offered waitlist entry's hold is not its offer";
        const hf_hold_t *hold = &core->holds.slots[entry->hold - 1];
        if (hold->status != HF_HOLD_HELD) return "an offered waitlist entry's hold is not held";
        if (hold->user != entry->user) return "a waitlist offer is held by another user";
        if (hold->event != entry->event) return "a waitlist offer is on another event";
    } else if (entry->hold && entry_of_hold(core, entry->hold - 1) == index &&
               core->holds.slots[entry->hold - 1].status == HF_HOLD_HELD) {
        return "a waitlist entry that is not offered has its offer held";
    }
    return NULL;
}

const char *waitlist_check(const hf_core_t *core) {
    const struct waitlists *waitlists = core->waitlists;
    if (!waitlists) return NULL;
    for (uint32_t i = 0; i < waitlists->count; i++) {
        const char *fault = entry_check(core, i);
        if (fault) return fault;
    }
    for (uint32_t e = 0; e < waitlists->event_capacity; e++) {
        const event_waitlist_t *list = &waitlists->events[e];
        uint32_t waiting = 0;
        for (uint32_t s = 0; s < list->joined; s++)
            if (list->entries[s] != NO_INDEX &&
                waitlists->entries[list->entries[s]].status == HF_WAITLIST_WAITING)
                waiting++;
        if (waiting != list->waiting ||
            (list->joined && waiting_rank(list, list->joined - 1) != waiting))
            return "a waitlist's count of waiting entries is wrong";
    }
    return NULL;
}

struct deferred_record {
    const hf_event_t *event;
    uint32_t index;
    bool pool;
};

bool waitlist_defer(hf_core_t *core, const hf_event_t *event, uint32_t target, uint32_t index) {
    struct waitlists *waitlists = core->waitlists;
    if (!core->stream_records) return false;
    uint32_t slot;
    if (!hf_core_event(core, event->id, &slot) || slot >= waitlists->event_capacity) return false;
    event_waitlist_t *list = &waitlists->events[slot];
    if (!list->dirty || !list->targets[target].dirty) return false;
    bool pool = target > event->section_count;
    waitlists->deferred = grow(waitlists->deferred, &waitlists->deferred_capacity,
                               waitlists->deferred_count + 1, sizeof *waitlists->deferred);
    waitlists->deferred[waitlists->deferred_count++] = (struct deferred_record){event, index, pool};
    return true;
}

/* The held-back records, as the settle left each seat and pool: a seat offered was told held
 * by its offer's hold, so only those still available are told now. */
static void deferred_emit(hf_core_t *core, hf_time_ms_t now) {
    struct waitlists *waitlists = core->waitlists;
    for (uint32_t i = 0; i < waitlists->deferred_count; i++) {
        const struct deferred_record *record = &waitlists->deferred[i];
        if (record->pool) {
            record_pool(core, record->event, record->index, now);
            continue;
        }
        if (record->event->seats[record->index].status != HF_SEAT_AVAILABLE) continue;
        record_seat(core, record->event, record->index, seat_row(record->event, record->index),
                    now);
    }
    waitlists->deferred_count = 0;
}

void waitlist_settle(hf_core_t *core, hf_time_ms_t now) {
    struct waitlists *waitlists = core->waitlists;
    if (!waitlists || waitlists->settling || waitlists->dirty_count == 0) return;
    waitlists->settling = true;
    /* Offers replace no hold, so settling frees nothing and marks no event meanwhile. */
    for (uint32_t i = 0; i < waitlists->dirty_count; i++)
        settle_event(core, waitlists->dirty_events[i], now);
    waitlists->dirty_count = 0;
    deferred_emit(core, now);
    waitlists->settling = false;
}
