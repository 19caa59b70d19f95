/* The checks of a hold request, which a booking shares: its shape, its seats and pools
 * resolved, their availability, best_available's picks, the user's limit, and the items a
 * request that passes them comes to. Each check changes nothing but the scratch space. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/best.h"

/* The field a request with too many items is refused on: best_available.count when it asks
 * for best seats, else seats when it names any, else pools. */
static hf_error_t too_many_items(const hf_hold_request_t *request, uint64_t units, uint32_t limit,
                                 hf_error_detail_t *detail) {
    const char *field = request->best_count   ? "best_available"
                        : request->seat_count ? "seats"
                                              : "pools";
    invalid_count(detail, field, HF_FAULT_HOLD_ITEMS, (int64_t)units, limit);
    if (detail && request->best_count) detail->member = "count";
    return HF_ERROR_INVALID_REQUEST;
}

/* Checks the shape of a request: ids, counts, duplicates, quantities. */
hf_error_t check_request_shape(const hf_event_t *event, const hf_hold_request_t *request,
                               size_t user_length, hf_error_detail_t *detail) {
    if (user_length == 0 || user_length > HF_USER_ID_SIZE_MAX) return invalid(detail, "user_id");
    if (request->seat_count == 0 && request->pool_count == 0 && request->best_count == 0)
        return invalid_because(detail, "seats", HF_FAULT_NO_ITEMS);
    uint64_t units = (uint64_t)request->seat_count + request->best_count;
    for (uint32_t i = 0; i < request->pool_count; i++) {
        if (request->pools[i].quantity == 0)
            return invalid_at(detail, "pools", i, NULL, HF_FAULT_VALUE);
        for (uint32_t other = 0; other < i; other++)
            if (strcmp(request->pools[i].pool_id, request->pools[other].pool_id) == 0) {
                invalid_at(detail, "pools", i, NULL, HF_FAULT_DUPLICATE);
                if (detail) detail->other = other;
                return HF_ERROR_INVALID_REQUEST;
            }
        units += request->pools[i].quantity;
    }
    if (units > event->max_seats_per_hold)
        return too_many_items(request, units, event->max_seats_per_hold, detail);
    if (request->ttl_ms == 0) return invalid(detail, "ttl_s");
    if (request->ttl_ms > event->max_hold_ms && !request->waitlist_offer)
        return invalid_count(detail, "ttl_s", HF_FAULT_HOLD_TTL, request->ttl_ms,
                             event->max_hold_ms);
    return HF_OK;
}

/* Lists up to this long are sorted by insertion: quadratic, but cheaper than qsort's calls
 * while short. */
#define SMALL_SORT_MAX 16u

static int compare_indexes(const void *a, const void *b) {
    uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;
    return (left > right) - (left < right);
}

/* Sorts ascending. Most holds name one to a few seats, for which qsort's call overhead was
 * most of the cost of the sort; longer lists still go to qsort. */
static void sort_indexes(uint32_t *indexes, uint32_t count) {
    if (count > SMALL_SORT_MAX) {
        qsort(indexes, count, sizeof *indexes, compare_indexes);
        return;
    }
    for (uint32_t i = 1; i < count; i++) {
        uint32_t value = indexes[i], j = i;
        for (; j > 0 && indexes[j - 1] > value; j--) indexes[j] = indexes[j - 1];
        indexes[j] = value;
    }
}

/* seats[later] names the same seat as seats[first]: the first two places of seat_index in
 * the request's order. */
static hf_error_t duplicate_seat(const hf_core_t *core, const hf_hold_request_t *request,
                                 uint32_t seat_index, hf_error_detail_t *detail) {
    uint32_t first = UINT32_MAX, later = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        if (core->scratch.seats[i] != seat_index) continue;
        if (first != UINT32_MAX) {
            later = i;
            break;
        }
        first = i;
    }
    invalid_at(detail, "seats", later, NULL, HF_FAULT_DUPLICATE);
    if (detail) detail->other = first;
    return HF_ERROR_INVALID_REQUEST;
}

/* Resolves seat ids into core->scratch.seats; unknown ones and duplicates are errors. */
hf_error_t resolve_seats(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                         hf_error_detail_t *detail) {
    uint32_t unknown = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        if (hf_core_seat_find(event, request->seat_ids[i], &core->scratch.seats[i])) continue;
        if (detail) detail->items[unknown] = i;
        unknown++;
    }
    if (unknown) {
        if (detail) detail->item_count = unknown;
        return HF_ERROR_SEAT_NOT_FOUND;
    }
    core->scratch.seat_count = request->seat_count;
    uint32_t *sorted = core->scratch.sorted;
    memcpy(sorted, core->scratch.seats, request->seat_count * sizeof *sorted);
    sort_indexes(sorted, request->seat_count);
    for (uint32_t i = 1; i < request->seat_count; i++)
        if (sorted[i] == sorted[i - 1]) return duplicate_seat(core, request, sorted[i], detail);
    return HF_OK;
}

hf_error_t check_sales_open(const hf_event_t *event, const hf_hold_request_t *request) {
    if (event->cancelled) return HF_ERROR_EVENT_CANCELLED;
    if (event->sales_open) return HF_OK;
    const event_tables_t *tables = event->internal;
    uint32_t found;
    if (request->best_count > 0 && request->best_section &&
        !hf_map_get(&tables->sections, request->best_section, strlen(request->best_section),
                    &found))
        return HF_ERROR_SECTION_NOT_FOUND;
    return HF_ERROR_SALES_CLOSED;
}

hf_error_t resolve_pools(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                         hf_error_detail_t *detail) {
    for (uint32_t i = 0; i < request->pool_count; i++) {
        int32_t pool = hf_core_pool_find(event, request->pools[i].pool_id);
        if (pool < 0) {
            if (detail) detail->pool = i;
            return HF_ERROR_POOL_NOT_FOUND;
        }
        core->scratch.pools[i] = (uint32_t)pool;
    }
    return HF_OK;
}

/* True when the seat is held by one of the holds replace_existing is about to release, and
 * comes free for this request: a seat of an allocation goes back to it, free only for a
 * request of that allocation (the public's request, 0, takes only the public's). */
static bool held_by_replaced(const hf_core_t *core, const hf_event_t *event, uint32_t seat_index,
                             const event_user_t *owner, bool replace) {
    const hf_seat_t *seat = &event->seats[seat_index];
    if (!replace || !owner || seat->status != HF_SEAT_HELD) return false;
    const uint32_t *membership = ((const event_tables_t *)event->internal)->seat_allocation;
    /* A released one comes free for the public, but only once the step is over: neither. */
    uint32_t entry = membership ? membership[seat_index] : 0;
    if (entry != core->scratch.allocation) return false;
    for (uint32_t h = owner->first_active; h != 0; h = core->holds.states[h - 1].next_active)
        if (h == seat->owner) return true;
    return false;
}

/* Units of a pool held by the holds replace_existing is about to release. */
static int64_t pool_units_replaced(const hf_core_t *core, uint32_t pool, const event_user_t *owner,
                                   bool replace) {
    if (!replace || !owner) return 0;
    int64_t units = 0;
    for (uint32_t h = owner->first_active; h != 0; h = core->holds.states[h - 1].next_active) {
        const hf_hold_t *hold = &core->holds.slots[h - 1];
        /* Units of an allocation's hold go back to it, or to the public when released: only
         * the public's own units count as freed by the replace. */
        if (hold->allocation != 0 || core->scratch.allocation != 0) continue;
        const hf_item_t *items = core->items + hold->item_offset + hold->seat_count;
        for (uint32_t i = 0; i < hold->pool_count; i++)
            if (items[i].index == pool) units += items[i].quantity;
    }
    return units;
}

/* True when the seat is sold to the order an exchange hold being checked would replace: its
 * own seats count as free for it. */
static bool sold_to_exchanged(const hf_core_t *core, const hf_seat_t *seat) {
    return core->scratch.exchange_order != 0 && seat->status == HF_SEAT_SOLD &&
           seat->owner == core->scratch.exchange_order;
}

/* Units of a pool the order an exchange hold being checked would replace has: free for it. */
static int64_t pool_units_exchanged(const hf_core_t *core, uint32_t pool) {
    if (core->scratch.exchange_order == 0) return 0;
    return exchange_pool_kept(core, &core->orders.slots[core->scratch.exchange_order - 1], pool,
                              UINT32_MAX);
}

/* The newest change the states of the request's seats (resolved into core->scratch.seats) rest on. */
uint64_t seats_observed_change(const hf_core_t *core, const hf_event_t *event,
                               uint32_t seat_count) {
    const uint64_t *seat_changes = seat_changes_of(event);
    uint64_t observed = 0;
    for (uint32_t i = 0; i < seat_count; i++) {
        uint64_t change = seat_changes[core->scratch.seats[i]];
        if (change > observed) observed = change;
    }
    return observed;
}

hf_error_t check_available(hf_core_t *core, const hf_event_t *event,
                           const hf_hold_request_t *request, const event_user_t *owner,
                           hf_error_detail_t *detail) {
    uint32_t taken = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        const hf_seat_t *seat = &event->seats[core->scratch.seats[i]];
        if (seat_free_for(event, core->scratch.seats[i], core->scratch.allocation)) continue;
        if (held_by_replaced(core, event, core->scratch.seats[i], owner, request->replace_existing))
            continue;
        if (sold_to_exchanged(core, seat)) continue;
        if (detail) detail->items[taken] = i;
        taken++;
    }
    if (taken) {
        if (detail) {
            detail->item_count = taken;
            detail->observed_change = seats_observed_change(core, event, request->seat_count);
        }
        return HF_ERROR_SEATS_UNAVAILABLE;
    }
    for (uint32_t i = 0; i < request->pool_count; i++) {
        int64_t available =
            allocation_pool_free(core, event, core->scratch.pools[i], core->scratch.allocation) +
            pool_units_replaced(core, core->scratch.pools[i], owner, request->replace_existing) +
            pool_units_exchanged(core, core->scratch.pools[i]);
        if (available >= request->pools[i].quantity) continue;
        if (detail) {
            detail->pool = i;
            detail->available = available;
        }
        return HF_ERROR_INSUFFICIENT_QUANTITY;
    }
    return HF_OK;
}

/* ---- best_available ---- */

typedef struct best_context {
    const hf_core_t *core;
    const hf_event_t *event;
    const event_user_t *owner;
    bool replace;
    uint32_t requested; /* seats named in the request, in core->scratch.sorted */
} best_context_t;

/* Free for best_available: available (or held by a hold being replaced) and not already
 * named in the request. */
static bool best_free(void *context, uint32_t seat_index) {
    const best_context_t *best = context;
    const hf_seat_t *seat = &best->event->seats[seat_index];
    if (!seat_free_for(best->event, seat_index, best->core->scratch.allocation) &&
        !held_by_replaced(best->core, best->event, seat_index, best->owner, best->replace) &&
        !sold_to_exchanged(best->core, seat))
        return false;
    return !bsearch(&seat_index, best->core->scratch.sorted, best->requested, sizeof seat_index,
                    compare_indexes);
}

/* Not const: best_available tightens the rows' free-run bounds as it reads them. */
hf_error_t pick_best(hf_core_t *core, hf_event_t *event, const hf_hold_request_t *request,
                     const event_user_t *owner, hf_error_detail_t *detail) {
    int32_t section = -1;
    if (request->best_section) {
        const event_tables_t *tables = event->internal;
        uint32_t found;
        if (!hf_map_get(&tables->sections, request->best_section, strlen(request->best_section),
                        &found))
            return HF_ERROR_SECTION_NOT_FOUND;
        section = (int32_t)found;
    }
    /* The old order's seats of an exchange are free for it, which rows' counts do not say. */
    bool replacing = (request->replace_existing && owner && owner->first_active != 0) ||
                     core->scratch.exchange_order != 0;
    /* Rows count the public's available seats only: an allocation's request reads them. */
    if (core->scratch.allocation) replacing = true;
    best_context_t context = {core, event, owner, request->replace_existing, request->seat_count};
    hf_best_query_t query = {request->best_count,
                             section,
                             request->best_adjacent,
                             !replacing && request->seat_count == 0,
                             best_free,
                             &context,
                             0,
                             UINT32_MAX};
    if (core->scratch.allocation)
        allocation_rows(core, core->scratch.allocation, &query.row_first, &query.row_last);
    if (!hf_best_pick(event, &query, core->scratch.seats + request->seat_count)) {
        if (detail) detail->item_count = 0;
        return HF_ERROR_SEATS_UNAVAILABLE;
    }
    core->scratch.seat_count = request->seat_count + request->best_count;
    return HF_OK;
}

hf_error_t check_user_limit(const hf_event_t *event, const hf_hold_request_t *request,
                            const event_user_t *owner, uint32_t replaced_units,
                            hf_error_detail_t *detail) {
    if (event->max_seats_per_user == 0) return HF_OK;
    uint64_t requested = (uint64_t)request->seat_count + request->best_count;
    for (uint32_t i = 0; i < request->pool_count; i++) requested += request->pools[i].quantity;
    uint64_t current = owner ? owner->held_units + owner->sold_units - replaced_units : 0;
    if (current + requested <= event->max_seats_per_user) return HF_OK;
    if (detail) {
        detail->limit = event->max_seats_per_user;
        detail->current = (int64_t)current;
        detail->requested = (int64_t)requested;
    }
    return HF_ERROR_USER_LIMIT_EXCEEDED;
}

/* Copies the resolved seats and pools into the items at offset; returns the total. */
int64_t items_fill(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                   uint32_t offset) {
    uint32_t seat_count = core->scratch.seat_count;
    hf_item_t *items = core->items + offset;
    int64_t total = 0;
    for (uint32_t i = 0; i < seat_count; i++) {
        items[i] = (hf_item_t){core->scratch.seats[i], 0};
        uint32_t row = seat_row(event, core->scratch.seats[i]);
        total += event->sections[event->rows[row].section].price;
    }
    for (uint32_t i = 0; i < request->pool_count; i++) {
        items[seat_count + i] = (hf_item_t){core->scratch.pools[i], request->pools[i].quantity};
        total += event->pools[core->scratch.pools[i]].price * request->pools[i].quantity;
    }
    return total;
}
