/* Changing a live event and deleting an unused one (core.h, hf_core_event_update and
 * hf_core_event_delete; API.md section 2, PATCH and DELETE /v1/events/{event}).
 *
 * A patch is checked whole before anything changes, with the limits and faults of a creation
 * (event.c). What it asks is merged with the event into its new definition, which the store
 * keeps whole. Prices and capacities change in place; new seats, rows, sections or pools
 * grow the event's tables, which were sized at creation: a new event is laid out from the
 * new definition, the old one's seats, pools and counts are carried over, and every seat index
 * kept of the event (its holds' and orders' items) is moved to the new layout. That runs here,
 * once per change, never on the hot path; no pointer into the old tables survives it (the
 * core hands out none across commands, core.h). */
#include "core/internal.h"
#include "core/queue.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A room's settings (queue.h): checked here with the rest of an event's definition. */
bool hf_core_room_valid(const hf_room_definition_t *room) {
    if (!room->enabled) return true;
    return room->admit_per_s >= HF_QUEUE_ADMIT_PER_S_MIN &&
           room->admit_per_s <= HF_QUEUE_ADMIT_PER_S_MAX && room->token_ttl_s >= 1 &&
           room->token_ttl_s <= HF_QUEUE_TOKEN_TTL_S_MAX && room->abandon_after_ms >= 1 &&
           room->abandon_after_ms <= HF_QUEUE_TOKEN_TTL_S_MAX * 1000 && room->max_waiting >= 1 &&
           room->max_waiting <= HF_QUEUE_WAITING_LIMIT;
}

/* What a patch adds: counted by the checks, used to size the new layout. */
typedef struct growth {
    uint64_t seats, rows;
    uint32_t sections, pools;
} growth_t;

static int32_t section_find(const hf_event_t *event, const char *id) {
    const event_tables_t *tables = event->internal;
    uint32_t index;
    if (!hf_map_get(&tables->sections, id, strlen(id), &index)) return -1;
    return (int32_t)index;
}

static bool row_exists(const hf_event_t *event, const char *section_id, const char *row_id) {
    const event_tables_t *tables = event->internal;
    char key[2 * HF_ID_SIZE_MAX + 2];
    int length = snprintf(key, sizeof key, "%s-%s", section_id, row_id);
    uint32_t index;
    return hf_map_get(&tables->rows, key, (size_t)length, &index);
}

/* The rows a listed section appends: new ids only, within the section's row limit. */
static hf_error_t check_rows(const hf_event_t *event, const hf_section_definition_t *section,
                             uint32_t s, int32_t existing, growth_t *growth, hf_map_t *seen,
                             hf_error_detail_t *detail) {
    uint32_t rows_before = existing >= 0 ? event->sections[existing].row_count : 0;
    if (rows_before + section->row_count > HF_SECTION_ROWS_MAX)
        return invalid_at(detail, "sections", s, "rows", HF_FAULT_VALUE);
    for (uint32_t r = 0; r < section->row_count; r++) {
        const hf_row_definition_t *row = &section->rows[r];
        if (!hf_core_id_valid(row->id)) return invalid_row(detail, s, r, "id", HF_FAULT_VALUE, 0);
        uint32_t other = row_duplicate_of(section, r, seen);
        if (other != NO_INDEX) return invalid_row(detail, s, r, "id", HF_FAULT_DUPLICATE, other);
        if (existing >= 0 && row_exists(event, section->id, row->id))
            return invalid_row(detail, s, r, "id", HF_FAULT_EXISTS, 0);
        if (row->seats == 0 || row->seats > HF_EVENT_SEATS_MAX)
            return invalid_row(detail, s, r, "seats", HF_FAULT_VALUE, 0);
        growth->seats += row->seats;
    }
    growth->rows += section->row_count;
    return HF_OK;
}

static hf_error_t check_section(const hf_event_t *event, const hf_event_definition_t *patch,
                                uint32_t s, growth_t *growth, hf_error_detail_t *detail) {
    const hf_section_definition_t *section = &patch->sections[s];
    if (!hf_core_id_valid(section->id))
        return invalid_at(detail, "sections", s, "id", HF_FAULT_VALUE);
    for (uint32_t other = 0; other < s; other++)
        if (strcmp(patch->sections[other].id, section->id) == 0)
            return invalid_duplicate(detail, "sections", s, other);
    int32_t existing = section_find(event, section->id);
    if (section->price > HF_PRICE_MAX)
        return invalid_at(detail, "sections", s, "price", HF_FAULT_VALUE);
    if (existing < 0) {
        /* A new section needs what a creation's does. */
        if (section->price < 0)
            return invalid_at(detail, "sections", s, "price", HF_FAULT_REQUIRED);
        if (section->row_count == 0)
            return invalid_at(detail, "sections", s, "rows", HF_FAULT_REQUIRED);
        growth->sections++;
    }
    hf_map_t seen;
    hf_map_init(&seen);
    hf_error_t error = check_rows(event, section, s, existing, growth, &seen, detail);
    hf_map_free(&seen);
    return error;
}

static hf_error_t check_sections(const hf_event_t *event, const hf_event_definition_t *patch,
                                 growth_t *growth, hf_error_detail_t *detail) {
    if (patch->section_count > HF_EVENT_SECTIONS_MAX) return invalid(detail, "sections");
    for (uint32_t s = 0; s < patch->section_count; s++) {
        hf_error_t error = check_section(event, patch, s, growth, detail);
        if (error) return error;
    }
    if (event->section_count + growth->sections > HF_EVENT_SECTIONS_MAX)
        return invalid(detail, "sections");
    uint64_t seats = event->seat_count + growth->seats, rows = event->row_count + growth->rows;
    if (seats > HF_EVENT_SEATS_MAX)
        return invalid_count(detail, "sections", HF_FAULT_EVENT_SEATS, (int64_t)seats,
                             HF_EVENT_SEATS_MAX);
    if (rows > HF_EVENT_ROWS_MAX)
        return invalid_count(detail, "sections", HF_FAULT_EVENT_ROWS, (int64_t)rows,
                             HF_EVENT_ROWS_MAX);
    return HF_OK;
}

static hf_error_t check_pools(const hf_event_t *event, const hf_event_definition_t *patch,
                              growth_t *growth, hf_error_detail_t *detail) {
    if (patch->pool_count > HF_EVENT_POOLS_MAX) return invalid(detail, "pools");
    for (uint32_t p = 0; p < patch->pool_count; p++) {
        const hf_pool_definition_t *pool = &patch->pools[p];
        if (!hf_core_id_valid(pool->id))
            return invalid_at(detail, "pools", p, "id", HF_FAULT_VALUE);
        for (uint32_t other = 0; other < p; other++)
            if (strcmp(patch->pools[other].id, pool->id) == 0)
                return invalid_duplicate(detail, "pools", p, other);
        if (pool->capacity > HF_POOL_CAPACITY_MAX)
            return invalid_at(detail, "pools", p, "capacity", HF_FAULT_VALUE);
        if (pool->price > HF_PRICE_MAX)
            return invalid_at(detail, "pools", p, "price", HF_FAULT_VALUE);
        if (hf_core_pool_find(event, pool->id) >= 0) continue;
        if (pool->capacity < 0)
            return invalid_at(detail, "pools", p, "capacity", HF_FAULT_REQUIRED);
        if (pool->price < 0) return invalid_at(detail, "pools", p, "price", HF_FAULT_REQUIRED);
        growth->pools++;
    }
    if (event->pool_count + growth->pools > HF_EVENT_POOLS_MAX) return invalid(detail, "pools");
    return HF_OK;
}

/* A pool's capacity never goes below what is held and sold of it (a 409, after the 400s). */
static hf_error_t check_capacities(const hf_event_t *event, const hf_event_definition_t *patch,
                                   hf_error_detail_t *detail) {
    for (uint32_t p = 0; p < patch->pool_count; p++) {
        int32_t index = hf_core_pool_find(event, patch->pools[p].id);
        if (index < 0 || patch->pools[p].capacity < 0) continue;
        const hf_pool_t *pool = &event->pools[index];
        /* Units set aside for an allocation count as taken: they are promised. */
        if (patch->pools[p].capacity >= pool->held + pool->sold + pool->allocated) continue;
        if (detail) {
            detail->pool = p;
            detail->requested = patch->pools[p].capacity;
            detail->current = pool->held + pool->sold + pool->allocated;
        }
        return HF_ERROR_CAPACITY_BELOW_TAKEN;
    }
    return HF_OK;
}

/* The top-level members as they would stand, checked as a creation checks them. */
static hf_error_t check_limits(const hf_event_t *event, const hf_event_definition_t *patch,
                               uint32_t members, hf_error_detail_t *detail) {
    int64_t ttl = members & HF_EVENT_MEMBER_HOLD_TTL ? patch->hold_ttl_ms : event->hold_ttl_ms;
    int64_t max = members & HF_EVENT_MEMBER_MAX_HOLD ? patch->max_hold_ms : event->max_hold_ms;
    if ((members & HF_EVENT_MEMBER_NAME) &&
        (patch->name[0] == '\0' || strlen(patch->name) > HF_NAME_SIZE_MAX))
        return invalid(detail, "name");
    if (ttl <= 0 || ttl > HF_HOLD_TTL_MS_MAX) return invalid(detail, "hold_ttl_s");
    if (max < ttl || max > HF_HOLD_TTL_MS_MAX) return invalid(detail, "max_hold_s");
    if ((members & HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD) &&
        (patch->max_seats_per_hold == 0 || patch->max_seats_per_hold > HF_HOLD_ITEMS_MAX))
        return invalid(detail, "max_seats_per_hold");
    if ((members & HF_EVENT_MEMBER_WAITING_ROOM) && !hf_core_room_valid(&patch->waiting_room))
        return invalid(detail, "waiting_room");
    return HF_OK;
}

static hf_error_t check_patch(const hf_event_t *event, const hf_event_definition_t *patch,
                              uint32_t members, growth_t *growth, hf_error_detail_t *detail) {
    hf_error_t error = check_limits(event, patch, members, detail);
    if (!error && (members & HF_EVENT_MEMBER_SECTIONS))
        error = check_sections(event, patch, growth, detail);
    if (!error && (members & HF_EVENT_MEMBER_POOLS))
        error = check_pools(event, patch, growth, detail);
    if (!error && (members & HF_EVENT_MEMBER_POOLS)) error = check_capacities(event, patch, detail);
    return error;
}

/* ---- the new definition and what changed ---- */

static void *allocate(size_t count, size_t size) {
    void *memory = calloc(count + 1, size);
    if (!memory) abort();
    return memory;
}

static const hf_section_definition_t *patch_section(const hf_event_definition_t *patch,
                                                    uint32_t members, const char *id) {
    if (!(members & HF_EVENT_MEMBER_SECTIONS)) return NULL;
    for (uint32_t s = 0; s < patch->section_count; s++)
        if (strcmp(patch->sections[s].id, id) == 0) return &patch->sections[s];
    return NULL;
}

/* An existing section, its price patched and its listed rows appended; the change (price
 * HF_UNCHANGED when it stayed) into *changed when there is one. */
static bool section_merge(const hf_event_t *event, uint32_t s,
                          const hf_section_definition_t *listed, hf_section_definition_t *out,
                          hf_section_definition_t *changed) {
    const hf_section_t *section = &event->sections[s];
    uint32_t appended = listed ? listed->row_count : 0;
    memcpy(out->id, section->id, sizeof out->id);
    out->price = listed && listed->price >= 0 ? listed->price : section->price;
    out->row_count = section->row_count + appended;
    out->rows = allocate(out->row_count, sizeof *out->rows);
    for (uint32_t r = 0; r < section->row_count; r++) {
        const hf_row_t *row = &event->rows[section->first_row + r];
        memcpy(out->rows[r].id, row->id, sizeof row->id);
        out->rows[r].seats = row->seat_count;
    }
    if (appended)
        memcpy(out->rows + section->row_count, listed->rows, appended * sizeof *out->rows);
    bool repriced = out->price != section->price;
    if (!repriced && appended == 0) return false;
    memcpy(changed->id, section->id, sizeof changed->id);
    changed->price = repriced ? out->price : HF_UNCHANGED;
    changed->row_count = appended;
    changed->rows = allocate(appended, sizeof *changed->rows);
    if (appended) memcpy(changed->rows, listed->rows, appended * sizeof *changed->rows);
    return true;
}

/* A new section, as listed: both in the definition and in what changed. */
static void section_copy(const hf_section_definition_t *listed, hf_section_definition_t *out) {
    *out = *listed;
    out->rows = allocate(listed->row_count, sizeof *out->rows);
    memcpy(out->rows, listed->rows, listed->row_count * sizeof *out->rows);
}

static void sections_merge(const hf_event_t *event, const hf_event_definition_t *patch,
                           uint32_t members, hf_event_definition_t *merged,
                           hf_event_definition_t *changes) {
    uint32_t added = 0;
    for (uint32_t s = 0; (members & HF_EVENT_MEMBER_SECTIONS) && s < patch->section_count; s++)
        added += section_find(event, patch->sections[s].id) < 0;
    merged->section_count = event->section_count + added;
    merged->sections = allocate(merged->section_count, sizeof *merged->sections);
    changes->sections = allocate(merged->section_count, sizeof *changes->sections);
    for (uint32_t s = 0; s < event->section_count; s++) {
        const hf_section_definition_t *listed = patch_section(patch, members,
                                                              event->sections[s].id);
        if (section_merge(event, s, listed, &merged->sections[s],
                          &changes->sections[changes->section_count]))
            changes->section_count++;
    }
    uint32_t next = event->section_count;
    for (uint32_t s = 0; (members & HF_EVENT_MEMBER_SECTIONS) && s < patch->section_count; s++) {
        if (section_find(event, patch->sections[s].id) >= 0) continue;
        section_copy(&patch->sections[s], &merged->sections[next++]);
        section_copy(&patch->sections[s], &changes->sections[changes->section_count++]);
    }
}

static void pools_merge(const hf_event_t *event, const hf_event_definition_t *patch,
                        uint32_t members, hf_event_definition_t *merged,
                        hf_event_definition_t *changes) {
    uint32_t listed = members & HF_EVENT_MEMBER_POOLS ? patch->pool_count : 0;
    merged->pools = allocate(event->pool_count + listed, sizeof *merged->pools);
    changes->pools = allocate(listed, sizeof *changes->pools);
    for (uint32_t p = 0; p < event->pool_count; p++) {
        const hf_pool_t *pool = &event->pools[p];
        merged->pools[p] = (hf_pool_definition_t){.capacity = pool->capacity, .price = pool->price};
        memcpy(merged->pools[p].id, pool->id, sizeof pool->id);
    }
    merged->pool_count = event->pool_count;
    for (uint32_t i = 0; i < listed; i++) {
        const hf_pool_definition_t *asked = &patch->pools[i];
        int32_t found = hf_core_pool_find(event, asked->id);
        hf_pool_definition_t *target = found >= 0 ? &merged->pools[found]
                                                  : &merged->pools[merged->pool_count++];
        hf_pool_definition_t change = {.capacity = HF_UNCHANGED, .price = HF_UNCHANGED};
        memcpy(change.id, asked->id, sizeof change.id);
        if (found < 0) {
            *target = *asked;
            change = *asked;
        }
        if (found >= 0 && asked->capacity >= 0 && asked->capacity != target->capacity)
            change.capacity = target->capacity = asked->capacity;
        if (found >= 0 && asked->price >= 0 && asked->price != target->price)
            change.price = target->price = asked->price;
        if (change.capacity >= 0 || change.price >= 0)
            changes->pools[changes->pool_count++] = change;
    }
}

static bool rooms_equal(const hf_room_definition_t *a, const hf_room_definition_t *b) {
    return a->enabled == b->enabled && a->admit_per_s == b->admit_per_s &&
           a->token_ttl_s == b->token_ttl_s && a->max_active == b->max_active &&
           a->abandon_after_ms == b->abandon_after_ms && a->max_waiting == b->max_waiting &&
           a->opens_at_ms == b->opens_at_ms;
}

/* The top-level members the patch changes: copied into both, their bits returned. */
static uint32_t limits_merge(const hf_core_t *core, const hf_event_t *event,
                             const hf_event_definition_t *patch, uint32_t members,
                             hf_event_definition_t *merged, hf_event_definition_t *changes) {
    uint32_t changed = 0;
    memcpy(merged->name, event->name, sizeof merged->name);
    memcpy(merged->currency, event->currency, sizeof merged->currency);
    merged->hold_ttl_ms = event->hold_ttl_ms;
    merged->max_hold_ms = event->max_hold_ms;
    merged->max_seats_per_user = event->max_seats_per_user;
    merged->max_seats_per_hold = event->max_seats_per_hold;
    merged->waiting_room = event->waiting_room;
    /* The setting is the waitlist's own (core/waitlist/): the stored definition carries it. */
    merged->waitlist = hf_core_waitlist_setting(core, event->id);
#define MERGE(bit, test, assign) \
    if ((members & (bit)) && (test)) { \
        assign; \
        changed |= (bit); \
    }
    MERGE(HF_EVENT_MEMBER_NAME, strcmp(patch->name, event->name) != 0,
          memcpy(merged->name, patch->name, sizeof merged->name))
    MERGE(HF_EVENT_MEMBER_HOLD_TTL, patch->hold_ttl_ms != event->hold_ttl_ms,
          merged->hold_ttl_ms = patch->hold_ttl_ms)
    MERGE(HF_EVENT_MEMBER_MAX_HOLD, patch->max_hold_ms != event->max_hold_ms,
          merged->max_hold_ms = patch->max_hold_ms)
    MERGE(HF_EVENT_MEMBER_MAX_SEATS_PER_USER,
          patch->max_seats_per_user != event->max_seats_per_user,
          merged->max_seats_per_user = patch->max_seats_per_user)
    MERGE(HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD,
          patch->max_seats_per_hold != event->max_seats_per_hold,
          merged->max_seats_per_hold = patch->max_seats_per_hold)
    MERGE(HF_EVENT_MEMBER_WAITING_ROOM, !rooms_equal(&patch->waiting_room, &event->waiting_room),
          merged->waiting_room = patch->waiting_room)
    MERGE(HF_EVENT_MEMBER_WAITLIST,
          patch->waitlist.enabled != merged->waitlist.enabled ||
              patch->waitlist.offer_ttl_ms != merged->waitlist.offer_ttl_ms,
          merged->waitlist = patch->waitlist)
#undef MERGE
    memcpy(changes->id, event->id, sizeof changes->id);
    memcpy(changes->name, merged->name, sizeof changes->name);
    memcpy(changes->currency, merged->currency, sizeof changes->currency);
    changes->hold_ttl_ms = merged->hold_ttl_ms;
    changes->max_hold_ms = merged->max_hold_ms;
    changes->max_seats_per_user = merged->max_seats_per_user;
    changes->max_seats_per_hold = merged->max_seats_per_hold;
    changes->waiting_room = merged->waiting_room;
    changes->waitlist = merged->waitlist;
    return changed;
}

static void definition_release(hf_event_definition_t *definition) {
    for (uint32_t s = 0; definition->sections && s < definition->section_count; s++)
        free(definition->sections[s].rows);
    free(definition->sections);
    free(definition->pools);
}

/* ---- a larger layout ---- */

/* Carries the old layout's seats into the new one, row by row (rows keep their ids), and
 * writes where each old seat index went into moved. */
static void seats_carry(const hf_event_t *old, hf_event_t *event, uint32_t *moved) {
    const event_tables_t *from = old->internal, *to = event->internal;
    for (uint32_t r = 0; r < old->row_count; r++) {
        uint32_t start = from->row_prefix_offsets[r];
        /* The row's prefix is "SECTION-ROW-": its key is all but the last dash. */
        size_t length = from->row_prefix_offsets[r + 1] - start - 1;
        uint32_t target;
        bool found = hf_map_get(&to->rows, from->row_prefixes.data + start, length, &target);
        assert(found && event->rows[target].seat_count == old->rows[r].seat_count);
        (void)found;
        uint32_t first = old->rows[r].first_seat, new_first = event->rows[target].first_seat;
        for (uint32_t n = 0; n < old->rows[r].seat_count; n++) {
            moved[first + n] = new_first + n;
            event->seats[new_first + n] = old->seats[first + n];
            event->seats[new_first + n].row = target;
            to->seat_changes[new_first + n] = from->seat_changes[first + n];
        }
    }
}

/* Counts of rows, sections and the event from the seats' statuses. A row's free-run bound is
 * its length: an upper bound, which best_available narrows again as it scans. */
static void counts_rebuild(hf_event_t *event) {
    event->counts = (hf_counts_t){0, 0, 0, 0};
    for (uint32_t s = 0; s < event->section_count; s++) {
        hf_section_t *section = &event->sections[s];
        section->counts = (hf_counts_t){0, 0, 0, 0};
        for (uint32_t r = section->first_row; r < section->first_row + section->row_count; r++) {
            hf_row_t *row = &event->rows[r];
            row->available = 0;
            row->free_run_bound = row->seat_count;
            for (uint32_t i = row->first_seat; i < row->first_seat + row->seat_count; i++) {
                uint32_t *slots[4] = {&section->counts.available, &section->counts.held,
                                      &section->counts.sold, &section->counts.allocated};
                (*slots[event->seats[i].status])++;
                row->available += event->seats[i].status == HF_SEAT_AVAILABLE;
            }
        }
        event->counts.available += section->counts.available;
        event->counts.held += section->counts.held;
        event->counts.sold += section->counts.sold;
        event->counts.allocated += section->counts.allocated;
    }
}

static void items_move(hf_core_t *core, uint32_t item_offset, uint32_t seat_count,
                       const uint32_t *moved) {
    hf_item_t *items = core->items + item_offset;
    for (uint32_t i = 0; i < seat_count; i++) items[i].index = moved[items[i].index];
}

/* Every seat index kept of the event's holds and orders, moved (an order made by a commit
 * shares its hold's items: moved once). */
static void indexes_move(hf_core_t *core, uint32_t index, const uint32_t *moved) {
    for (uint32_t h = 0; h < core->holds.count; h++) {
        const hf_hold_t *hold = &core->holds.slots[h];
        if (hold->status == HF_HOLD_EVICTED || hold->event != index) continue;
        items_move(core, hold->item_offset, hold->seat_count, moved);
    }
    for (uint32_t o = 0; o < core->orders.count; o++) {
        const hf_order_t *order = &core->orders.slots[o];
        if (order->event != index) continue;
        if (order->hold && core->holds.slots[order->hold - 1].item_offset == order->item_offset)
            continue;
        items_move(core, order->item_offset, order->seat_count, moved);
    }
}

/* The event of slot index laid out again from merged, which keeps every row it had. */
static void event_grow(hf_core_t *core, uint32_t index, const hf_event_definition_t *merged,
                       const growth_t *growth) {
    hf_event_t *old = core->events.slots[index];
    hf_event_t *event = event_allocate(merged, old->seat_count + growth->seats,
                                       old->row_count + growth->rows, old->created_at_ms);
    memcpy(event->id, old->id, sizeof event->id);
    event->sales_open = old->sales_open;
    /* event_set moves the room to its new settings and counts the change. */
    event->waiting_room = old->waiting_room;
    uint32_t *moved = allocate(old->seat_count, sizeof *moved);
    seats_carry(old, event, moved);
    counts_rebuild(event);
    for (uint32_t p = 0; p < old->pool_count; p++) {
        event->pools[p].held = old->pools[p].held;
        event->pools[p].sold = old->pools[p].sold;
        event->pools[p].allocated = old->pools[p].allocated;
    }
    event_tables_t *from = old->internal, *to = event->internal;
    allocations_move(core, old, event, moved);
    to->orders = from->orders;
    from->orders = (index_list_t){NULL, 0, 0};
    to->created_change = from->created_change;
    to->used = from->used;
    indexes_move(core, index, moved);
    free(moved);
    core->events.slots[index] = event;
    event_free(old);
}

/* ---- the commands ---- */

/* What stays the same size changes in place: prices, capacities, the top-level members. */
static void event_set(hf_core_t *core, uint32_t index, const hf_event_definition_t *merged,
                      hf_time_ms_t now) {
    hf_event_t *event = core->events.slots[index];
    for (uint32_t s = 0; s < event->section_count; s++)
        event->sections[s].price = merged->sections[s].price;
    for (uint32_t p = 0; p < event->pool_count; p++) {
        event->pools[p].capacity = merged->pools[p].capacity;
        event->pools[p].price = merged->pools[p].price;
    }
    memcpy(event->name, merged->name, sizeof event->name);
    event->hold_ttl_ms = merged->hold_ttl_ms;
    event->max_hold_ms = merged->max_hold_ms;
    event->max_seats_per_user = merged->max_seats_per_user;
    event->max_seats_per_hold = merged->max_seats_per_hold;
    /* A room turned off keeps its settings (the decoder's merge): its tickets still run on
     * them, and are loaded back with them after a restart. */
    bool was_on = event->waiting_room.enabled;
    event->waiting_room = merged->waiting_room;
    if (was_on != event->waiting_room.enabled) {
        if (was_on) core->events.rooms_enabled--;
        else core->events.rooms_enabled++;
    }
    queue_room_changed(core, index, now);
}

/* opens_at changes only before the room opens (no line yet, or its opening still ahead), and
 * to a time still ahead: who joined before it is the pre-queue, drawn once. */
static hf_error_t check_opening(const hf_core_t *core, uint32_t index, const hf_event_t *event,
                                const hf_event_definition_t *patch, uint32_t members,
                                hf_time_ms_t now, hf_error_detail_t *detail) {
    hf_time_ms_t asked = patch->waiting_room.opens_at_ms, was = event->waiting_room.opens_at_ms;
    if (!(members & HF_EVENT_MEMBER_WAITING_ROOM) || asked == was) return HF_OK;
    bool opened = queue_room_exists(core, index) && was <= now;
    if (!opened && asked > now) return HF_OK;
    hf_error_detail_t path = {.member = "opens_at"};
    return invalid_path(detail, "waiting_room", &path, HF_FAULT_VALUE);
}

hf_error_t hf_core_event_update(hf_core_t *core, const hf_event_definition_t *patch,
                                uint32_t members, hf_time_ms_t now, bool *layout,
                                hf_error_detail_t *detail) {
    command_at(core, now);
    *layout = false;
    uint32_t index;
    const hf_event_t *event = hf_core_event(core, patch->id, &index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    growth_t growth = {0, 0, 0, 0};
    hf_error_t error = check_patch(event, patch, members, &growth, detail);
    if (!error) error = check_opening(core, index, event, patch, members, now, detail);
    if (error) return error;
    hf_event_definition_t merged = {0}, changes = {0};
    memcpy(merged.id, event->id, sizeof merged.id);
    uint32_t changed = limits_merge(core, event, patch, members, &merged, &changes);
    sections_merge(event, patch, members, &merged, &changes);
    pools_merge(event, patch, members, &merged, &changes);
    if (changes.section_count) changed |= HF_EVENT_MEMBER_SECTIONS;
    if (changes.pool_count) changed |= HF_EVENT_MEMBER_POOLS;
    if (changed) {
        *layout = growth.seats || growth.sections || growth.pools;
        if (*layout) event_grow(core, index, &merged, &growth);
        event_set(core, index, &merged, now);
        if (changed & HF_EVENT_MEMBER_WAITLIST)
            hf_core_waitlist_configure(core, merged.id, merged.waitlist.enabled,
                                       merged.waitlist.offer_ttl_ms);
        record_event_updated(core, core->events.slots[index], &merged, &changes, changed, now);
    }
    definition_release(&merged);
    definition_release(&changes);
    return HF_OK;
}

hf_error_t hf_core_event_delete(hf_core_t *core, const char *event_id, hf_time_ms_t now,
                                uint32_t *index) {
    command_at(core, now);
    const hf_event_t *event = hf_core_event(core, event_id, index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    const event_tables_t *tables = event->internal;
    /* A cancelled event has its job, which names it for good. */
    if (tables->used || tables->orders.count > 0 || queue_room_exists(core, *index) ||
        event->cancelled)
        return HF_ERROR_EVENT_IN_USE;
    record_event_deleted(core, event, now);
    event_remove(core, *index);
    return HF_OK;
}
