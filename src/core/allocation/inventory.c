/* An allocation's inventory as holds and orders take it and give it back, its release, and
 * its invariants. The one place where "inventory came free" is decided for allocated seats
 * and units is here: allocation_seat_moved and allocation_pool_moved. Inventory that comes
 * free goes back to the allocation it came from, unless it was released meanwhile: then it
 * comes free for the public (the place a waitlist hooks in, API.md section 14). */
#include "core/allocation/internal.h"

#include <stdlib.h>

/* The slot of counts a status counts in, for an allocation's seats. */
static uint32_t *count_of(hf_counts_t *counts, uint8_t status) {
    switch (status) {
    case HF_SEAT_HELD: return &counts->held;
    case HF_SEAT_SOLD: return &counts->sold;
    case HF_SEAT_ALLOCATED: return &counts->available;
    default: return NULL;
    }
}

/* A released seat came free: it leaves its allocation, whose record says so. */
static void seat_leaves(hf_core_t *core, uint32_t *membership, uint32_t seat_index, uint32_t index,
                        hf_time_ms_t now) {
    membership[seat_index] = 0;
    allocation_left_add(allocation_at(core, index), seat_index, 1);
    allocation_seats_compact(core, index);
    allocation_record(core, index, HF_ALLOCATION_SETTLED, now);
}

uint8_t allocation_seat_moved(hf_core_t *core, hf_event_t *event, uint32_t seat_index, uint8_t from,
                              uint8_t to, hf_time_ms_t now, bool report) {
    uint32_t *membership = tables_of(event)->seat_allocation;
    uint32_t entry = membership[seat_index];
    uint32_t index = (entry & ~ALLOCATION_RELEASED) - 1;
    allocation_t *allocation = allocation_at(core, index);
    uint32_t *was = count_of(&allocation->counts, from);
    if (was) (*was)--;
    if (to == HF_SEAT_AVAILABLE) {
        /* Coming free. A commit's step from held to sold (report false) frees nothing: the
         * seat stays the allocation's, released or not, for its order. */
        if ((entry & ALLOCATION_RELEASED) && report) {
            seat_leaves(core, membership, seat_index, index, now);
            return HF_SEAT_AVAILABLE;
        }
        to = HF_SEAT_ALLOCATED;
    }
    uint32_t *now_in = count_of(&allocation->counts, to);
    if (now_in) (*now_in)++;
    return to;
}

void allocation_pool_moved(hf_core_t *core, hf_event_t *event, uint32_t allocation_plus_one,
                           const hf_item_t *item, int64_t held, int64_t sold, hf_time_ms_t now,
                           bool report) {
    allocation_t *allocation = allocation_at(core, allocation_plus_one - 1);
    allocation_line_t *line = allocation_line_of(allocation, item->index);
    assert(line); /* the request's checks took units of the allocation's pools only */
    hf_pool_t *pool = &event->pools[item->index];
    int64_t quantity = item->quantity;
    line->held += held * quantity;
    line->sold += sold * quantity;
    int64_t freed = -(held + sold) * quantity;
    int64_t to_public = 0;
    /* Coming free (as for seats, a commit's step frees nothing): released units go to the
     * public, the others back to the allocation. */
    if (freed > 0 && report)
        to_public = line->release_pending < freed ? line->release_pending : freed;
    line->release_pending -= to_public;
    line->free += freed - to_public;
    pool->allocated += freed - to_public;
    if (to_public) allocation_record(core, allocation_plus_one - 1, HF_ALLOCATION_SETTLED, now);
}

hf_error_t allocation_resolve(hf_core_t *core, uint32_t event_index,
                              const hf_hold_request_t *request) {
    core->scratch.allocation = 0;
    if (!request->allocation_id) return HF_OK;
    uint32_t index;
    if (!hf_core_allocation_find(core, event_index, request->allocation_id, &index))
        return HF_ERROR_ALLOCATION_NOT_FOUND;
    core->scratch.allocation = index + 1;
    return HF_OK;
}

int64_t allocation_pool_free(const hf_core_t *core, const hf_event_t *event, uint32_t pool_index,
                             uint32_t allocation) {
    if (allocation == 0) return hf_core_pool_available(&event->pools[pool_index]);
    const allocation_line_t *line = allocation_line_of(allocation_at(core, allocation - 1),
                                                       pool_index);
    return line ? line->free : 0;
}

/* ---- release ---- */

/* The seats named: each the allocation's and not released yet, no duplicates. */
static hf_error_t release_seats_check(hf_core_t *core, const hf_event_t *event, uint32_t index,
                                      const hf_allocation_request_t *request,
                                      hf_error_detail_t *detail) {
    struct allocations *state = core->allocations;
    allocation_scratch_reserve(state, request->seat_count);
    const uint32_t *membership = tables_of(event)->seat_allocation;
    uint32_t unknown = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        if (hf_core_seat_find(event, request->seat_ids[i], &state->seats[i])) continue;
        if (detail && unknown < HF_HOLD_ITEMS_MAX) detail->items[unknown] = i;
        unknown++;
    }
    if (unknown) {
        if (detail) detail->item_count = unknown < HF_HOLD_ITEMS_MAX ? unknown : HF_HOLD_ITEMS_MAX;
        return HF_ERROR_SEAT_NOT_FOUND;
    }
    for (uint32_t i = 0; i < request->seat_count; i++) {
        uint32_t seat = state->seats[i];
        if (!membership || membership[seat] != index + 1)
            return invalid_at(detail, "seats", i, NULL, HF_FAULT_VALUE);
        for (uint32_t other = 0; other < i; other++)
            if (state->seats[other] == seat) {
                invalid_at(detail, "seats", i, NULL, HF_FAULT_DUPLICATE);
                if (detail) detail->other = other;
                return HF_ERROR_INVALID_REQUEST;
            }
    }
    return HF_OK;
}

/* The pools named: each the allocation's, its units at most those not released yet. */
static hf_error_t release_pools_check(const hf_core_t *core, const hf_event_t *event,
                                      uint32_t index, const hf_allocation_request_t *request,
                                      allocation_line_t **lines, hf_error_detail_t *detail) {
    const allocation_t *allocation = allocation_at(core, index);
    for (uint32_t i = 0; i < request->pool_count; i++) {
        if (request->pools[i].quantity == 0)
            return invalid_at(detail, "pools", i, NULL, HF_FAULT_VALUE);
        int32_t pool = hf_core_pool_find(event, request->pools[i].pool_id);
        if (pool < 0) {
            if (detail) detail->pool = i;
            return HF_ERROR_POOL_NOT_FOUND;
        }
        lines[i] = allocation_line_of(allocation, (uint32_t)pool);
        int64_t kept = lines[i] ? lines[i]->free + lines[i]->held + lines[i]->sold -
                                      lines[i]->release_pending
                                : 0;
        for (uint32_t other = 0; other < i; other++)
            if (lines[other] == lines[i] && lines[i]) kept = -1; /* named twice */
        if (kept >= (int64_t)request->pools[i].quantity) continue;
        if (kept < 0) return invalid_at(detail, "pools", i, NULL, HF_FAULT_DUPLICATE);
        if (detail) {
            detail->pool = i;
            detail->available = kept;
        }
        return HF_ERROR_INSUFFICIENT_QUANTITY;
    }
    return HF_OK;
}

/* Releases units of a line: the free ones at once (*freed, for the public now), the rest once
 * they come free. */
static void line_release(hf_event_t *event, allocation_line_t *line, int64_t units) {
    int64_t now_free = units < line->free ? units : line->free;
    line->free -= now_free;
    event->pools[line->pool].allocated -= now_free;
    line->release_pending += units - now_free;
}

/* Marks a seat released: a free one leaves at once (the caller frees it), a held or sold one
 * once it comes free. Returns whether it is free now. */
static bool seat_release(const hf_event_t *event, uint32_t *membership, uint32_t seat) {
    if (event->seats[seat].status == HF_SEAT_ALLOCATED) {
        membership[seat] = 0;
        return true;
    }
    membership[seat] |= ALLOCATION_RELEASED;
    return false;
}

/* Seats and units released free count as coming free (API.md section 14): the waitlist's one
 * entry point is told of the freed seats (the scratch's sorted) and of every pool of the
 * allocation (its matching reads each pool's public count). */
static void released_come_free(hf_core_t *core, const allocation_t *allocation, uint32_t freed) {
    if (!core->waitlists) return;
    uint32_t count = freed + allocation->line_count;
    hf_item_t *items = malloc((count ? count : 1) * sizeof *items);
    if (!items) abort();
    for (uint32_t i = 0; i < freed; i++) items[i] = (hf_item_t){core->allocations->sorted[i], 0};
    for (uint32_t i = 0; i < allocation->line_count; i++)
        items[freed + i] = (hf_item_t){allocation->lines[i].pool, 0};
    waitlist_came_free(core, allocation->event, items, freed, allocation->line_count);
    free(items);
}

static void release_apply(hf_core_t *core, uint32_t index, const hf_allocation_request_t *request,
                          allocation_line_t **lines, hf_time_ms_t now) {
    allocation_t *allocation = allocation_at(core, index);
    hf_event_t *event = core->events.slots[allocation->event];
    uint32_t *membership = tables_of(event)->seat_allocation;
    struct allocations *state = core->allocations;
    bool all = request->seat_count == 0 && request->pool_count == 0;
    uint32_t named = all ? allocation->seat_count : request->seat_count;
    allocation_scratch_reserve(state, named);
    if (all) memcpy(state->seats, allocation->seats, named * sizeof *state->seats);
    uint32_t freed = 0, marked = 0;
    for (uint32_t i = 0; i < named; i++) {
        uint32_t seat = state->seats[i];
        if (membership[seat] & ALLOCATION_RELEASED) continue;
        if (seat_release(event, membership, seat)) state->sorted[freed++] = seat;
        else marked++;
    }
    allocation->counts.available -= freed;
    for (uint32_t i = 0; i < freed; i++) allocation_left_add(allocation, state->sorted[i], 2);
    uint32_t dropped = allocation_seats_compact(core, index);
    bool changed = freed > 0 || dropped > 0 || marked > 0;
    for (uint32_t i = 0; i < (all ? allocation->line_count : request->pool_count); i++) {
        allocation_line_t *line = all ? &allocation->lines[i] : lines[i];
        int64_t units = all ? line->free + line->held + line->sold - line->release_pending
                            : request->pools[i].quantity;
        changed |= units > 0;
        line_release(event, line, units);
    }
    /* Releasing what is released already changes nothing: no record, no history entry. */
    if (!changed) return;
    allocation_record(core, index, HF_ALLOCATION_RELEASED, now);
    released_come_free(core, allocation, freed);
    /* Membership is gone: seat_set counts these in no allocation. */
    for (uint32_t i = 0; i < freed; i++)
        seat_set(core, event, state->sorted[i], HF_SEAT_AVAILABLE, 0, now, true);
    /* The waitlist first (API.md section 14): what it takes is told held, never available. */
    waitlist_settle(core, now);
    if (!core->stream_records) return;
    for (uint32_t i = 0; i < allocation->line_count; i++)
        record_pool(core, event, allocation->lines[i].pool, now);
}

hf_error_t hf_core_allocation_release(hf_core_t *core, const hf_allocation_request_t *request,
                                      hf_time_ms_t now, uint32_t *index,
                                      hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    if (!hf_core_allocation_find(core, event_index, request->allocation_id, index))
        return HF_ERROR_ALLOCATION_NOT_FOUND;
    const hf_event_t *event = core->events.slots[event_index];
    if (request->pool_count > HF_HOLD_ITEMS_MAX) return invalid(detail, "pools");
    if (request->seat_count > HF_ALLOCATION_SEATS_MAX) return invalid(detail, "seats");
    allocation_line_t *lines[HF_HOLD_ITEMS_MAX];
    hf_error_t error = release_seats_check(core, event, *index, request, detail);
    if (!error) error = release_pools_check(core, event, *index, request, lines, detail);
    if (error) return error;
    release_apply(core, *index, request, lines, now);
    return HF_OK;
}

/* ---- invariants ---- */

/* One allocation's counts against its seats' statuses and entries. */
static const char *allocation_check(const hf_core_t *core, uint32_t index) {
    const allocation_t *allocation = allocation_at(core, index);
    const hf_event_t *event = core->events.slots[allocation->event];
    const uint32_t *membership = tables_of(event)->seat_allocation;
    hf_counts_t counts = {0};
    for (uint32_t i = 0; i < allocation->seat_count; i++) {
        uint32_t seat = allocation->seats[i];
        if (!membership || (membership[seat] & ~ALLOCATION_RELEASED) != index + 1)
            return "an allocation lists a seat whose entry names another";
        uint8_t status = event->seats[seat].status;
        if (status == HF_SEAT_AVAILABLE) return "a seat is both allocated and public";
        if (status == HF_SEAT_ALLOCATED && (membership[seat] & ALLOCATION_RELEASED))
            return "a released seat is still set aside";
        (*count_of(&counts, status))++;
    }
    if (counts.available != allocation->counts.available ||
        counts.held != allocation->counts.held || counts.sold != allocation->counts.sold)
        return "an allocation's seat counts do not add up";
    for (uint32_t i = 0; i < allocation->line_count; i++) {
        const allocation_line_t *line = &allocation->lines[i];
        if (line->free < 0 || line->held < 0 || line->sold < 0 || line->release_pending < 0 ||
            line->release_pending > line->held + line->sold)
            return "an allocation's pool counts are out of range";
    }
    return NULL;
}

/* Every event's allocated seats and units against its allocations. */
static const char *event_check(const hf_core_t *core, uint32_t event_index) {
    const hf_event_t *event = core->events.slots[event_index];
    const index_list_t *list = &tables_of(event)->allocations;
    uint32_t seats = 0;
    for (uint32_t i = 0; i < list->count; i++)
        seats += allocation_at(core, list->items[i])->counts.available;
    if (seats != event->counts.allocated) return "allocated seats do not add up";
    for (uint32_t p = 0; p < event->pool_count; p++) {
        int64_t units = 0, held = 0, sold = 0;
        for (uint32_t i = 0; i < list->count; i++) {
            const allocation_line_t *line = allocation_line_of(allocation_at(core, list->items[i]),
                                                               p);
            if (!line) continue;
            units += line->free;
            held += line->held;
            sold += line->sold;
        }
        const hf_pool_t *pool = &event->pools[p];
        if (units != pool->allocated || held > pool->held || sold > pool->sold ||
            hf_core_pool_available(pool) < 0)
            return "allocated pool units do not add up";
    }
    return NULL;
}

const char *hf_core_allocations_check(const hf_core_t *core) {
    for (uint32_t e = 0; e < core->events.count; e++) {
        if (!core->events.slots[e]) continue;
        const char *problem = event_check(core, e);
        if (problem) return problem;
    }
    for (uint32_t i = 0; core->allocations && i < core->allocations->count; i++) {
        const char *problem = allocation_check(core, i);
        if (problem) return problem;
    }
    return NULL;
}
