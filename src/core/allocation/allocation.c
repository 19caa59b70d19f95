/* Allocations (API.md section 14): setting inventory aside, releasing it, and what the API
 * reads of them. What happens to an allocation's inventory as holds and orders take it and
 * give it back is inventory.c's. */
#include "core/allocation/internal.h"

#include <stdio.h>

#include "core/best.h"

/* ---- state ---- */

struct allocations *allocations_state(hf_core_t *core) {
    if (core->allocations) return core->allocations;
    core->allocations = calloc(1, sizeof *core->allocations);
    if (!core->allocations) abort();
    hf_map_init(&core->allocations->ids);
    hf_buffer_init(&core->allocations->record_ids);
    return core->allocations;
}

void allocations_free(hf_core_t *core) {
    struct allocations *state = core->allocations;
    if (!state) return;
    for (uint32_t i = 0; i < state->count; i++) {
        free(state->slots[i].seats);
        free(state->slots[i].left);
        free(state->slots[i].lines);
    }
    free(state->slots);
    hf_map_free(&state->ids);
    free(state->seats);
    free(state->sorted);
    free(state->record_seats);
    free(state->record_left);
    hf_buffer_free(&state->record_ids);
    free(state);
    core->allocations = NULL;
}

void allocation_scratch_reserve(struct allocations *state, uint32_t count) {
    if (count <= state->seat_capacity) return;
    uint32_t capacity = state->seat_capacity;
    state->seats = grow(state->seats, &capacity, count, sizeof *state->seats);
    capacity = state->seat_capacity;
    state->sorted = grow(state->sorted, &capacity, count, sizeof *state->sorted);
    state->seat_capacity = capacity;
}

/* The key of an allocation in the ids map: its event's index and its id. */
static size_t key_write(char *out, size_t size, uint32_t event_index, const char *id) {
    int length = snprintf(out, size, "%u/%s", event_index, id);
    return length < 0 ? 0 : (size_t)length;
}

bool hf_core_allocation_find(const hf_core_t *core, uint32_t event_index, const char *id,
                             uint32_t *index) {
    if (!core->allocations || !id) return false;
    char key[HF_ID_SIZE_MAX + 16];
    size_t length = key_write(key, sizeof key, event_index, id);
    return length < sizeof key && hf_map_get(&core->allocations->ids, key, length, index);
}

const char *allocation_id_of(const hf_core_t *core, uint32_t allocation) {
    return allocation ? allocation_at(core, allocation - 1)->id : NULL;
}

allocation_line_t *allocation_line_of(const allocation_t *allocation, uint32_t pool) {
    for (uint32_t i = 0; i < allocation->line_count; i++)
        if (allocation->lines[i].pool == pool) return &allocation->lines[i];
    return NULL;
}

/* ---- the record ---- */

void allocation_record(hf_core_t *core, uint32_t index, int change, hf_time_ms_t now) {
    struct allocations *state = core->allocations;
    const allocation_t *allocation = &state->slots[index];
    const hf_event_t *event = core->events.slots[allocation->event];
    const uint32_t *membership = tables_of(event)->seat_allocation;
    state->record_seats = grow(state->record_seats, &state->record_seat_capacity,
                               allocation->seat_count + 1, sizeof *state->record_seats);
    state->record_left = grow(state->record_left, &state->record_left_capacity,
                              allocation->left_count + 1, sizeof *state->record_left);
    hf_buffer_t *ids = &state->record_ids;
    hf_buffer_reset(ids);
    /* Sized first, so no id moves while the next one is written. */
    hf_buffer_reserve(ids, (size_t)(allocation->seat_count + allocation->left_count) *
                               (HF_SEAT_ID_SIZE_MAX + 1));
    for (uint32_t i = 0; i < allocation->seat_count; i++) {
        uint32_t seat = allocation->seats[i];
        char *id = ids->data + ids->length;
        ids->length += seat_id_write(event, seat_row(event, seat), seat, id) + 1;
        state->record_seats[i] = (hf_mutation_allocation_seat_t){
            id, (membership[seat] & ALLOCATION_RELEASED) != 0};
    }
    for (uint32_t i = 0; i < allocation->left_count; i++) {
        uint32_t seat = allocation->left[i].seat;
        char *id = ids->data + ids->length;
        ids->length += seat_id_write(event, seat_row(event, seat), seat, id) + 1;
        state->record_left[i] = (hf_mutation_allocation_left_t){id, allocation->left[i].changes};
    }
    for (uint32_t i = 0; i < allocation->line_count; i++) {
        const allocation_line_t *line = &allocation->lines[i];
        state->record_pools[i] = (hf_mutation_allocation_pool_t){
            event->pools[line->pool].id, line->free + line->held + line->sold,
            line->release_pending};
    }
    hf_mutation_t mutation = {.type = HF_MUTATION_ALLOCATION,
                              .at_ms = now,
                              .as.allocation = {.event_id = event->id,
                                                .allocation_id = allocation->id,
                                                .seats = state->record_seats,
                                                .seat_count = allocation->seat_count,
                                                .left = state->record_left,
                                                .left_count = allocation->left_count,
                                                .pools = state->record_pools,
                                                .pool_count = allocation->line_count,
                                                .created_at_ms = allocation->created_at_ms,
                                                .change = change}};
    record_emit(core, &mutation);
}

void allocation_left_add(allocation_t *allocation, uint32_t seat, uint32_t changes) {
    allocation->left = grow(allocation->left, &allocation->left_capacity,
                            allocation->left_count + 1, sizeof *allocation->left);
    allocation->left[allocation->left_count++] = (allocation_left_t){seat, changes};
}

void allocation_rows_update(hf_core_t *core, uint32_t index) {
    allocation_t *allocation = allocation_at(core, index);
    const hf_event_t *event = core->events.slots[allocation->event];
    allocation->row_first = UINT32_MAX;
    allocation->row_last = 0;
    for (uint32_t i = 0; i < allocation->seat_count; i++) {
        uint32_t row = seat_row(event, allocation->seats[i]);
        if (row < allocation->row_first) allocation->row_first = row;
        if (row > allocation->row_last) allocation->row_last = row;
    }
}

void allocation_rows(const hf_core_t *core, uint32_t allocation, uint32_t *first, uint32_t *last) {
    const allocation_t *kept = allocation_at(core, allocation - 1);
    *first = kept->row_first;
    *last = kept->row_last;
}

uint32_t allocation_seats_compact(hf_core_t *core, uint32_t index) {
    allocation_t *allocation = allocation_at(core, index);
    const uint32_t *membership = tables_of(core->events.slots[allocation->event])->seat_allocation;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < allocation->seat_count; i++) {
        uint32_t seat = allocation->seats[i];
        if ((membership[seat] & ~ALLOCATION_RELEASED) == index + 1)
            allocation->seats[kept++] = seat;
    }
    uint32_t dropped = allocation->seat_count - kept;
    allocation->seat_count = kept;
    allocation_rows_update(core, index);
    return dropped;
}

/* ---- the request's checks ---- */

static int compare_indexes(const void *a, const void *b) {
    uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;
    return (left > right) - (left < right);
}

/* Its shape: the id, something asked for, counts, pool quantities and duplicates. */
static hf_error_t shape_check(const hf_allocation_request_t *request, bool creating,
                              hf_error_detail_t *detail) {
    if (creating && (!request->allocation_id || !hf_core_id_valid(request->allocation_id)))
        return invalid(detail, "id");
    if (creating && request->seat_count == 0 && request->pool_count == 0 &&
        request->best_count == 0)
        return invalid_because(detail, "seats", HF_FAULT_NO_ITEMS);
    uint64_t seats = (uint64_t)request->seat_count + request->best_count;
    if (seats > HF_ALLOCATION_SEATS_MAX)
        return invalid_count(detail, request->best_count ? "best_available" : "seats",
                             HF_FAULT_HOLD_ITEMS, (int64_t)seats, HF_ALLOCATION_SEATS_MAX);
    if (request->pool_count > HF_HOLD_ITEMS_MAX) return invalid(detail, "pools");
    for (uint32_t i = 0; i < request->pool_count; i++) {
        if (request->pools[i].quantity == 0)
            return invalid_at(detail, "pools", i, NULL, HF_FAULT_VALUE);
        for (uint32_t other = 0; other < i; other++)
            if (strcmp(request->pools[i].pool_id, request->pools[other].pool_id) == 0) {
                invalid_at(detail, "pools", i, NULL, HF_FAULT_DUPLICATE);
                if (detail) detail->other = other;
                return HF_ERROR_INVALID_REQUEST;
            }
    }
    return HF_OK;
}

/* The named seats into the scratch (and sorted), unknown ones and duplicates refused. */
static hf_error_t seats_resolve(struct allocations *state, const hf_event_t *event,
                                const hf_allocation_request_t *request, hf_error_detail_t *detail) {
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
    memcpy(state->sorted, state->seats, request->seat_count * sizeof *state->sorted);
    qsort(state->sorted, request->seat_count, sizeof *state->sorted, compare_indexes);
    for (uint32_t i = 1; i < request->seat_count; i++) {
        if (state->sorted[i] != state->sorted[i - 1]) continue;
        uint32_t later = 0;
        for (uint32_t j = 0, seen = 0; j < request->seat_count; j++)
            if (state->seats[j] == state->sorted[i] && seen++ == 1) later = j;
        return invalid_at(detail, "seats", later, NULL, HF_FAULT_DUPLICATE);
    }
    return HF_OK;
}

/* Every named seat free for the public (an allocation is made from free inventory only). */
static hf_error_t seats_free_check(const hf_core_t *core, const struct allocations *state,
                                   const hf_event_t *event, uint32_t count,
                                   hf_error_detail_t *detail) {
    uint32_t taken = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (event->seats[state->seats[i]].status == HF_SEAT_AVAILABLE) continue;
        if (detail && taken < HF_HOLD_ITEMS_MAX) detail->items[taken] = i;
        taken++;
    }
    if (!taken) return HF_OK;
    if (detail) {
        detail->item_count = taken < HF_HOLD_ITEMS_MAX ? taken : HF_HOLD_ITEMS_MAX;
        detail->observed_change = 0;
        const uint64_t *changes = seat_changes_of(event);
        for (uint32_t i = 0; i < count; i++)
            if (changes[state->seats[i]] > detail->observed_change)
                detail->observed_change = changes[state->seats[i]];
    }
    (void)core;
    return HF_ERROR_SEATS_UNAVAILABLE;
}

/* The pools named, into pools (indexes); with free, each must have its units free for the
 * public. */
static hf_error_t pools_resolve(const hf_event_t *event, const hf_allocation_request_t *request,
                                uint32_t *pools, hf_error_detail_t *detail) {
    for (uint32_t i = 0; i < request->pool_count; i++) {
        int32_t pool = hf_core_pool_find(event, request->pools[i].pool_id);
        if (pool < 0) {
            if (detail) detail->pool = i;
            return HF_ERROR_POOL_NOT_FOUND;
        }
        pools[i] = (uint32_t)pool;
    }
    return HF_OK;
}

typedef struct pick_context {
    const hf_event_t *event;
    const uint32_t *named; /* sorted */
    uint32_t named_count;
} pick_context_t;

static bool pick_free(void *context, uint32_t seat_index) {
    const pick_context_t *pick = context;
    if (pick->event->seats[seat_index].status != HF_SEAT_AVAILABLE) return false;
    return !bsearch(&seat_index, pick->named, pick->named_count, sizeof seat_index,
                    compare_indexes);
}

/* best_available's seats after the named ones, picked among the public's free seats. */
static hf_error_t seats_pick(struct allocations *state, hf_event_t *event,
                             const hf_allocation_request_t *request, hf_error_detail_t *detail) {
    if (request->best_count == 0) return HF_OK;
    int32_t section = -1;
    if (request->best_section) {
        uint32_t found;
        if (!hf_map_get(&tables_of(event)->sections, request->best_section,
                        strlen(request->best_section), &found))
            return HF_ERROR_SECTION_NOT_FOUND;
        section = (int32_t)found;
    }
    pick_context_t context = {event, state->sorted, request->seat_count};
    hf_best_query_t query = {request->best_count,
                             section,
                             request->best_adjacent,
                             request->seat_count == 0,
                             pick_free,
                             &context,
                             0,
                             UINT32_MAX};
    if (!hf_best_pick(event, &query, state->seats + request->seat_count)) {
        if (detail) detail->item_count = 0;
        return HF_ERROR_SEATS_UNAVAILABLE;
    }
    return HF_OK;
}

static hf_error_t create_check(hf_core_t *core, const hf_allocation_request_t *request,
                               uint32_t event_index, uint32_t *pools, hf_error_detail_t *detail) {
    hf_event_t *event = core->events.slots[event_index];
    hf_error_t error = shape_check(request, true, detail);
    if (error) return error;
    uint32_t existing;
    if (hf_core_allocation_find(core, event_index, request->allocation_id, &existing))
        return HF_ERROR_ALLOCATION_EXISTS;
    if (tables_of(event)->allocations.count >= HF_ALLOCATIONS_PER_EVENT_MAX)
        return HF_ERROR_CAPACITY;
    struct allocations *state = allocations_state(core);
    allocation_scratch_reserve(state, request->seat_count + request->best_count);
    error = seats_resolve(state, event, request, detail);
    if (!error) error = pools_resolve(event, request, pools, detail);
    if (!error) error = seats_free_check(core, state, event, request->seat_count, detail);
    if (error) return error;
    for (uint32_t i = 0; i < request->pool_count; i++) {
        int64_t available = hf_core_pool_available(&event->pools[pools[i]]);
        if (available >= request->pools[i].quantity) continue;
        if (detail) {
            detail->pool = i;
            detail->available = available;
        }
        return HF_ERROR_INSUFFICIENT_QUANTITY;
    }
    return seats_pick(state, event, request, detail);
}

/* ---- creation ---- */

static uint32_t allocation_add(hf_core_t *core, const hf_allocation_request_t *request,
                               uint32_t event_index, hf_time_ms_t now) {
    struct allocations *state = core->allocations;
    state->slots = grow(state->slots, &state->capacity, state->count + 1, sizeof *state->slots);
    uint32_t index = state->count++;
    allocation_t *allocation = &state->slots[index];
    memset(allocation, 0, sizeof *allocation);
    snprintf(allocation->id, sizeof allocation->id, "%s", request->allocation_id);
    allocation->event = event_index;
    allocation->created_at_ms = now;
    char key[HF_ID_SIZE_MAX + 16];
    hf_map_put(&state->ids, key, key_write(key, sizeof key, event_index, allocation->id), index);
    event_tables_t *tables = tables_of(core->events.slots[event_index]);
    index_list_push(&tables->allocations, index);
    tables->used = true; /* an event that lent inventory is not deleted */
    return index;
}

/* The seats' entries and the pools' lines of a new allocation (its status changes follow its
 * record): the event's seat entries (NULL while no allocation has seats). */
static uint32_t *allocation_fill(hf_core_t *core, uint32_t index, uint32_t seat_count,
                                 const uint32_t *seats, const hf_item_t *lines,
                                 uint32_t line_count) {
    allocation_t *allocation = allocation_at(core, index);
    hf_event_t *event = core->events.slots[allocation->event];
    event_tables_t *tables = tables_of(event);
    if (!tables->seat_allocation && seat_count) {
        tables->seat_allocation = calloc(event->seat_count, sizeof *tables->seat_allocation);
        if (!tables->seat_allocation) abort();
    }
    allocation->seats = malloc((seat_count ? seat_count : 1) * sizeof *allocation->seats);
    allocation->lines = calloc(line_count ? line_count : 1, sizeof *allocation->lines);
    if (!allocation->seats || !allocation->lines) abort();
    memcpy(allocation->seats, seats, seat_count * sizeof *seats);
    allocation->seat_count = seat_count;
    for (uint32_t i = 0; i < seat_count; i++) tables->seat_allocation[seats[i]] = index + 1;
    allocation_rows_update(core, index);
    for (uint32_t i = 0; i < line_count; i++) {
        allocation->lines[i] = (allocation_line_t){.pool = lines[i].index,
                                                   .free = lines[i].quantity};
        event->pools[lines[i].index].allocated += lines[i].quantity;
    }
    allocation->line_count = line_count;
    return tables->seat_allocation;
}

/* The seats take their status (each a change of its own for streams and versions) and the
 * pools' counts are reported. */
static void allocation_apply(hf_core_t *core, uint32_t index, hf_time_ms_t now, bool report) {
    allocation_t *allocation = allocation_at(core, index);
    hf_event_t *event = core->events.slots[allocation->event];
    for (uint32_t i = 0; i < allocation->seat_count; i++)
        seat_set(core, event, allocation->seats[i], HF_SEAT_ALLOCATED, 0, now, report);
    if (!report || !core->stream_records) return;
    for (uint32_t i = 0; i < allocation->line_count; i++)
        record_pool(core, event, allocation->lines[i].pool, now);
}

hf_error_t hf_core_allocation_create(hf_core_t *core, const hf_allocation_request_t *request,
                                     hf_time_ms_t now, uint32_t *index, hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    uint32_t pools[HF_HOLD_ITEMS_MAX];
    hf_error_t error = create_check(core, request, event_index, pools, detail);
    if (error) return error;
    hf_item_t lines[HF_HOLD_ITEMS_MAX];
    for (uint32_t i = 0; i < request->pool_count; i++)
        lines[i] = (hf_item_t){pools[i], request->pools[i].quantity};
    *index = allocation_add(core, request, event_index, now);
    allocation_fill(core, *index, request->seat_count + request->best_count,
                    core->allocations->seats, lines, request->pool_count);
    allocation_record(core, *index, HF_ALLOCATION_CREATED, now);
    allocation_apply(core, *index, now, true);
    return HF_OK;
}

/* ---- restore ---- */

/* The seats that left: their versions get back the allocation's changes, and the allocation
 * keeps them for its next records. */
static hf_error_t restore_left(hf_core_t *core, uint32_t index,
                               const hf_stored_allocation_t *stored) {
    allocation_t *allocation = allocation_at(core, index);
    hf_event_t *event = core->events.slots[allocation->event];
    for (uint32_t i = 0; i < stored->left_count; i++) {
        uint32_t seat, changes = stored->left[i].changes;
        if (changes < 1 || changes > 2) return HF_ERROR_INVALID_REQUEST;
        if (!hf_core_seat_find(event, stored->left[i].seat_id, &seat))
            return HF_ERROR_SEAT_NOT_FOUND;
        event->seats[seat].version += changes;
        allocation_left_add(allocation, seat, changes);
    }
    return HF_OK;
}

hf_error_t hf_core_restore_allocation(hf_core_t *core, const hf_stored_allocation_t *stored) {
    uint32_t event_index, existing;
    const hf_event_t *event = hf_core_event(core, stored->event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (!stored->allocation_id || !hf_core_id_valid(stored->allocation_id) ||
        hf_core_allocation_find(core, event_index, stored->allocation_id, &existing) ||
        stored->pool_count > HF_HOLD_ITEMS_MAX)
        return HF_ERROR_INVALID_REQUEST;
    struct allocations *state = allocations_state(core);
    allocation_scratch_reserve(state, stored->seat_count);
    const uint32_t *membership = tables_of(event)->seat_allocation;
    for (uint32_t i = 0; i < stored->seat_count; i++) {
        if (!hf_core_seat_find(event, stored->seats[i].seat_id, &state->seats[i]))
            return HF_ERROR_SEAT_NOT_FOUND;
        if (event->seats[state->seats[i]].status != HF_SEAT_AVAILABLE ||
            (membership && membership[state->seats[i]]))
            return HF_ERROR_SEATS_UNAVAILABLE;
    }
    hf_item_t lines[HF_HOLD_ITEMS_MAX];
    for (uint32_t i = 0; i < stored->pool_count; i++) {
        int32_t pool = hf_core_pool_find(event, stored->pools[i].pool_id);
        if (pool < 0) return HF_ERROR_POOL_NOT_FOUND;
        int64_t units = stored->pools[i].units, pending = stored->pools[i].release_pending;
        if (units < 0 || pending < 0 || pending > units || units > UINT32_MAX)
            return HF_ERROR_INVALID_REQUEST;
        lines[i] = (hf_item_t){(uint32_t)pool, (uint32_t)units};
    }
    hf_allocation_request_t request = {.allocation_id = stored->allocation_id};
    uint32_t index = allocation_add(core, &request, event_index, stored->created_at_ms);
    uint32_t *entries = allocation_fill(core, index, stored->seat_count, state->seats, lines,
                                        stored->pool_count);
    allocation_t *allocation = allocation_at(core, index);
    for (uint32_t i = 0; i < stored->pool_count; i++)
        allocation->lines[i].release_pending = stored->pools[i].release_pending;
    /* Set aside whole, released seats included: the holds and orders restored next take them
     * back from it, and those that come free then leave it. */
    allocation_apply(core, index, stored->created_at_ms, false);
    for (uint32_t i = 0; i < stored->seat_count; i++) {
        if (stored->seats[i].released) entries[state->seats[i]] |= ALLOCATION_RELEASED;
        /* Its setting aside, which restore's allocation_apply does not count. */
        event->seats[state->seats[i]].version++;
    }
    return restore_left(core, index, stored);
}

void allocations_move(hf_core_t *core, hf_event_t *old, hf_event_t *event, const uint32_t *moved) {
    event_tables_t *from = tables_of(old), *to = tables_of(event);
    to->allocations = from->allocations;
    from->allocations = (index_list_t){NULL, 0, 0};
    if (!from->seat_allocation) return;
    to->seat_allocation = calloc(event->seat_count, sizeof *to->seat_allocation);
    if (!to->seat_allocation) abort();
    for (uint32_t i = 0; i < old->seat_count; i++)
        to->seat_allocation[moved[i]] = from->seat_allocation[i];
    for (uint32_t a = 0; a < to->allocations.count; a++) {
        allocation_t *allocation = allocation_at(core, to->allocations.items[a]);
        allocation->row_first = UINT32_MAX;
        allocation->row_last = 0;
        for (uint32_t i = 0; i < allocation->seat_count; i++) {
            allocation->seats[i] = moved[allocation->seats[i]];
            /* The new layout's rows (the event's slot still holds the old one). */
            uint32_t row = seat_row(event, allocation->seats[i]);
            if (row < allocation->row_first) allocation->row_first = row;
            if (row > allocation->row_last) allocation->row_last = row;
        }
        for (uint32_t i = 0; i < allocation->left_count; i++)
            allocation->left[i].seat = moved[allocation->left[i].seat];
    }
}

/* ---- reads ---- */

const uint32_t *hf_core_event_allocations(const hf_core_t *core, uint32_t event_index,
                                          uint32_t *count) {
    const index_list_t *list = &tables_of(core->events.slots[event_index])->allocations;
    *count = list->count;
    return list->count ? list->items : NULL;
}

void hf_core_allocation_view(const hf_core_t *core, uint32_t index, hf_allocation_view_t *view) {
    const allocation_t *allocation = allocation_at(core, index);
    *view = (hf_allocation_view_t){.id = allocation->id,
                                   .event = allocation->event,
                                   .created_at_ms = allocation->created_at_ms,
                                   .seat_count = allocation->seat_count,
                                   .seats = allocation->counts,
                                   .pool_count = allocation->line_count};
}

const uint32_t *hf_core_allocation_seats(const hf_core_t *core, uint32_t index, uint32_t *count) {
    const allocation_t *allocation = allocation_at(core, index);
    *count = allocation->seat_count;
    return allocation->seats;
}

void hf_core_allocation_pool(const hf_core_t *core, uint32_t index, uint32_t line,
                             hf_allocation_pool_view_t *view) {
    const allocation_t *allocation = allocation_at(core, index);
    assert(line < allocation->line_count);
    const allocation_line_t *kept = &allocation->lines[line];
    *view = (hf_allocation_pool_view_t){kept->pool, kept->free, kept->held, kept->sold,
                                        kept->release_pending};
}

uint32_t hf_core_seat_allocation(const hf_core_t *core, const hf_event_t *event,
                                 uint32_t seat_index) {
    (void)core;
    const uint32_t *membership = tables_of(event)->seat_allocation;
    return membership ? membership[seat_index] & ~ALLOCATION_RELEASED : 0;
}

bool hf_core_seat_allocation_released(const hf_core_t *core, const hf_event_t *event,
                                      uint32_t seat_index) {
    (void)core;
    const uint32_t *membership = tables_of(event)->seat_allocation;
    return membership && (membership[seat_index] & ALLOCATION_RELEASED) != 0;
}

const char *hf_core_allocation_id(const hf_core_t *core, uint32_t allocation) {
    return allocation_id_of(core, allocation);
}

bool hf_core_event_has_allocations(const hf_event_t *event) {
    return tables_of(event)->allocations.count > 0;
}
