/* Events: a definition checked and laid out into sections, rows, seats and pools with their
 * lookup tables; seat and pool lookups and seat ids; and the changes of a seat's status and of
 * a pool's counts, which every hold and order goes through. */
#include "core/internal.h"
#include "core/queue.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookups ---- */

uint32_t hf_core_event_count(const hf_core_t *core) { return core->events.count; }

const hf_event_t *hf_core_event_at(const hf_core_t *core, uint32_t index) {
    return index < core->events.count ? core->events.slots[index] : NULL;
}

const uint32_t *hf_core_events_listed(const hf_core_t *core, uint32_t *count) {
    *count = core->events.listed_count;
    return core->events.listed;
}

const hf_event_t *hf_core_event(const hf_core_t *core, const char *event_id, uint32_t *index) {
    uint32_t found;
    if (!event_id || !hf_map_get(&core->events.ids, event_id, strlen(event_id), &found))
        return NULL;
    if (index) *index = found;
    return core->events.slots[found];
}

/* Parses a canonical seat number: digits, no leading zero, from 1. */
static bool parse_number(const char *text, uint32_t *number) {
    if (*text < '1' || *text > '9') return false;
    uint64_t value = 0;
    for (; *text; text++) {
        if (*text < '0' || *text > '9') return false;
        value = value * 10 + (uint64_t)(*text - '0');
        if (value > HF_EVENT_SEATS_MAX) return false;
    }
    *number = (uint32_t)value;
    return true;
}

bool hf_core_seat_find(const hf_event_t *event, const char *seat_id, uint32_t *seat_index) {
    const event_tables_t *tables = event->internal;
    /* Ids cannot contain '-', so the first dash ends the section and the second the row. */
    const char *first = strchr(seat_id, '-');
    if (!first) return false;
    const char *second = strchr(first + 1, '-');
    if (!second) return false;
    uint32_t row_index, number;
    if (!hf_map_get(&tables->rows, seat_id, (size_t)(second - seat_id), &row_index)) return false;
    if (!parse_number(second + 1, &number)) return false;
    const hf_row_t *row = &event->rows[row_index];
    if (number > row->seat_count) return false;
    *seat_index = row->first_seat + number - 1;
    return true;
}

uint32_t hf_core_seat_row(const hf_event_t *event, uint32_t seat_index) {
    return event->seats[seat_index].row;
}

/* Writes the id of a seat of row row_index at out (HF_SEAT_ID_SIZE_MAX + 1 bytes), NUL
 * included; returns its length. */
size_t seat_id_write(const hf_event_t *event, uint32_t row_index, uint32_t seat_index, char *out) {
    const event_tables_t *tables = event->internal;
    uint32_t start = tables->row_prefix_offsets[row_index];
    size_t length = tables->row_prefix_offsets[row_index + 1] - start;
    memcpy(out, tables->row_prefixes.data + start, length);
    length += hf_decimal_write(out + length, seat_index - event->rows[row_index].first_seat + 1);
    out[length] = '\0';
    return length;
}

void hf_core_seat_id(const hf_event_t *event, uint32_t seat_index, char *out) {
    seat_id_write(event, seat_row(event, seat_index), seat_index, out);
}

int32_t hf_core_pool_find(const hf_event_t *event, const char *pool_id) {
    const event_tables_t *tables = event->internal;
    uint32_t index;
    if (!hf_map_get(&tables->pools, pool_id, strlen(pool_id), &index)) return -1;
    return (int32_t)index;
}

/* ---- events ---- */

bool hf_core_id_valid(const char *id) {
    size_t length = strlen(id);
    if (length == 0 || length > HF_ID_SIZE_MAX) return false;
    for (size_t i = 0; i < length; i++) {
        char c = id[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

uint32_t row_duplicate_of(const hf_section_definition_t *section, uint32_t r, hf_map_t *seen) {
    if (r == 0) {
        hf_map_free(seen);
        hf_map_init(seen);
    }
    const char *id = section->rows[r].id;
    size_t length = strlen(id);
    uint32_t hash = hf_map_hash(id, length);
    const hf_map_slot_t *found = hf_map_find(seen, id, length, hash);
    if (found) return found->value;
    hf_map_insert(seen, id, length, hash, r);
    return NO_INDEX;
}

static hf_error_t check_rows(const hf_section_definition_t *section, uint32_t s, uint64_t *seats,
                             hf_map_t *seen, hf_error_detail_t *detail) {
    for (uint32_t r = 0; r < section->row_count; r++) {
        const hf_row_definition_t *row = &section->rows[r];
        if (!hf_core_id_valid(row->id)) return invalid_row(detail, s, r, "id", HF_FAULT_VALUE, 0);
        uint32_t other = row_duplicate_of(section, r, seen);
        if (other != NO_INDEX) return invalid_row(detail, s, r, "id", HF_FAULT_DUPLICATE, other);
        if (row->seats == 0 || row->seats > HF_EVENT_SEATS_MAX)
            return invalid_row(detail, s, r, "seats", HF_FAULT_VALUE, 0);
        *seats += row->seats;
    }
    return HF_OK;
}

static hf_error_t check_sections(const hf_event_definition_t *definition, uint64_t *seats,
                                 uint64_t *rows, hf_error_detail_t *detail) {
    *seats = 0;
    *rows = 0;
    if (definition->section_count > HF_EVENT_SECTIONS_MAX) return invalid(detail, "sections");
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        if (!hf_core_id_valid(section->id))
            return invalid_at(detail, "sections", s, "id", HF_FAULT_VALUE);
        for (uint32_t other = 0; other < s; other++)
            if (strcmp(definition->sections[other].id, section->id) == 0)
                return invalid_duplicate(detail, "sections", s, other);
        if (section->price < 0 || section->price > HF_PRICE_MAX)
            return invalid_at(detail, "sections", s, "price", HF_FAULT_VALUE);
        if (section->row_count == 0 || section->row_count > HF_SECTION_ROWS_MAX)
            return invalid_at(detail, "sections", s, "rows", HF_FAULT_VALUE);
        hf_map_t seen;
        hf_map_init(&seen);
        hf_error_t error = check_rows(section, s, seats, &seen, detail);
        hf_map_free(&seen);
        if (error) return error;
        *rows += section->row_count;
    }
    if (*seats > HF_EVENT_SEATS_MAX)
        return invalid_count(detail, "sections", HF_FAULT_EVENT_SEATS, (int64_t)*seats,
                             HF_EVENT_SEATS_MAX);
    if (*rows > HF_EVENT_ROWS_MAX)
        return invalid_count(detail, "sections", HF_FAULT_EVENT_ROWS, (int64_t)*rows,
                             HF_EVENT_ROWS_MAX);
    return HF_OK;
}

static hf_error_t check_pools(const hf_event_definition_t *definition, hf_error_detail_t *detail) {
    if (definition->pool_count > HF_EVENT_POOLS_MAX) return invalid(detail, "pools");
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        const hf_pool_definition_t *pool = &definition->pools[p];
        if (!hf_core_id_valid(pool->id))
            return invalid_at(detail, "pools", p, "id", HF_FAULT_VALUE);
        for (uint32_t other = 0; other < p; other++)
            if (strcmp(definition->pools[other].id, pool->id) == 0)
                return invalid_duplicate(detail, "pools", p, other);
        if (pool->capacity < 0 || pool->capacity > HF_POOL_CAPACITY_MAX)
            return invalid_at(detail, "pools", p, "capacity", HF_FAULT_VALUE);
        if (pool->price < 0 || pool->price > HF_PRICE_MAX)
            return invalid_at(detail, "pools", p, "price", HF_FAULT_VALUE);
    }
    return HF_OK;
}

static hf_error_t check_definition(const hf_core_t *core, const hf_event_definition_t *definition,
                                   uint64_t *seats, uint64_t *rows, hf_error_detail_t *detail) {
    if (!hf_core_id_valid(definition->id)) return invalid(detail, "id");
    if (definition->hold_ttl_ms <= 0 || definition->hold_ttl_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "hold_ttl_s");
    if (definition->max_hold_ms < definition->hold_ttl_ms ||
        definition->max_hold_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "max_hold_s");
    if (definition->max_seats_per_hold == 0 || definition->max_seats_per_hold > HF_HOLD_ITEMS_MAX)
        return invalid(detail, "max_seats_per_hold");
    hf_error_t error = check_sections(definition, seats, rows, detail);
    if (error) return error;
    error = check_pools(definition, detail);
    if (error) return error;
    if (*seats == 0 && definition->pool_count == 0)
        return invalid_because(detail, "sections", HF_FAULT_NO_INVENTORY);
    /* A calendar's id is taken too: see calendar_check_new. */
    if (hf_core_event(core, definition->id, NULL) || hf_core_calendar(core, definition->id, NULL))
        return HF_ERROR_EVENT_EXISTS;
    if (core->events.listed_count >= HF_EVENTS_MAX) return HF_ERROR_CAPACITY;
    return HF_OK;
}

static void build_layout(hf_event_t *event, const hf_event_definition_t *definition) {
    event_tables_t *tables = event->internal;
    uint32_t row_index = 0, seat_index = 0;
    char key[2 * HF_ID_SIZE_MAX + 2];
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *source = &definition->sections[s];
        hf_section_t *section = &event->sections[s];
        memcpy(section->id, source->id, sizeof section->id);
        section->price = source->price;
        section->first_row = row_index;
        section->row_count = source->row_count;
        section->first_seat = seat_index;
        hf_map_put(&tables->sections, section->id, strlen(section->id), s);
        for (uint32_t r = 0; r < source->row_count; r++, row_index++) {
            hf_row_t *row = &event->rows[row_index];
            memcpy(row->id, source->rows[r].id, sizeof row->id);
            row->section = s;
            row->first_seat = seat_index;
            row->seat_count = source->rows[r].seats;
            row->available = row->seat_count;
            row->free_run_bound = row->seat_count;
            for (uint32_t n = 0; n < row->seat_count; n++)
                event->seats[seat_index + n].row = row_index;
            seat_index += row->seat_count;
            int length = snprintf(key, sizeof key, "%s-%s", section->id, row->id);
            hf_map_put(&tables->rows, key, (size_t)length, row_index);
            tables->row_prefix_offsets[row_index] = (uint32_t)tables->row_prefixes.length;
            hf_buffer_append(&tables->row_prefixes, key, (size_t)length);
            hf_buffer_append_char(&tables->row_prefixes, '-');
        }
        section->seat_count = seat_index - section->first_seat;
        section->counts.available = section->seat_count;
    }
    tables->row_prefix_offsets[row_index] = (uint32_t)tables->row_prefixes.length;
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        hf_pool_t *pool = &event->pools[p];
        memcpy(pool->id, definition->pools[p].id, sizeof pool->id);
        pool->capacity = definition->pools[p].capacity;
        pool->price = definition->pools[p].price;
        hf_map_put(&tables->pools, pool->id, strlen(pool->id), p);
    }
}

hf_event_t *event_allocate(const hf_event_definition_t *definition, uint64_t seats, uint64_t rows,
                           hf_time_ms_t now) {
    hf_event_t *event = calloc(1, sizeof *event);
    event_tables_t *tables = calloc(1, sizeof *tables);
    if (!event || !tables) abort();
    memcpy(event->id, definition->id, sizeof event->id);
    memcpy(event->name, definition->name, sizeof event->name);
    memcpy(event->currency, definition->currency, sizeof event->currency);
    event->hold_ttl_ms = definition->hold_ttl_ms;
    event->max_hold_ms = definition->max_hold_ms;
    event->max_seats_per_user = definition->max_seats_per_user;
    event->max_seats_per_hold = definition->max_seats_per_hold;
    event->created_at_ms = now;
    event->sales_open = true;
    event->waiting_room = definition->waiting_room;
    event->section_count = definition->section_count;
    event->row_count = (uint32_t)rows;
    event->seat_count = (uint32_t)seats;
    event->pool_count = definition->pool_count;
    event->sections = calloc(definition->section_count + 1, sizeof *event->sections);
    event->rows = calloc(rows + 1, sizeof *event->rows);
    event->seats = calloc(seats + 1, sizeof *event->seats);
    event->pools = calloc(definition->pool_count + 1, sizeof *event->pools);
    tables->row_prefix_offsets = calloc(rows + 1, sizeof *tables->row_prefix_offsets);
    tables->seat_changes = calloc(seats + 1, sizeof *tables->seat_changes);
    if (!event->sections || !event->rows || !event->seats || !event->pools ||
        !tables->row_prefix_offsets || !tables->seat_changes)
        abort();
    for (uint64_t i = 0; i < seats; i++) event->seats[i].version = 1;
    event->counts.available = (uint32_t)seats;
    event->internal = tables;
    build_layout(event, definition);
    return event;
}

void event_free(hf_event_t *event) {
    event_tables_t *tables = event->internal;
    hf_map_free(&tables->sections);
    hf_map_free(&tables->pools);
    hf_map_free(&tables->rows);
    hf_buffer_free(&tables->row_prefixes);
    free(tables->row_prefix_offsets);
    free(tables->seat_changes);
    free(tables->orders.items);
    free(tables->seat_allocation);
    free(tables->allocations.items);
    free(tables);
    free(event->sections);
    free(event->rows);
    free(event->seats);
    free(event->pools);
    free(event);
}

/* A slot for a new event: one a deleted event left, else a new one. Slots stay at most
 * HF_EVENTS_MAX: a slot is added only while every one is taken. */
static uint32_t slot_take(hf_core_t *core) {
    if (core->events.listed_count < core->events.count) {
        for (uint32_t i = 0; i < core->events.count; i++)
            if (core->events.slots[i] == NULL) return i;
    }
    core->events.slots = grow(core->events.slots, &core->events.capacity, core->events.count + 1,
                              sizeof *core->events.slots);
    return core->events.count++;
}

hf_error_t event_add(hf_core_t *core, const hf_event_definition_t *definition, hf_time_ms_t now,
                     hf_error_detail_t *detail) {
    uint64_t seats, rows;
    hf_error_t error = check_definition(core, definition, &seats, &rows, detail);
    if (error) return error;
    if (!hf_core_room_valid(&definition->waiting_room)) return invalid(detail, "waiting_room");
    hf_event_t *event = event_allocate(definition, seats, rows, now);
    uint32_t index = slot_take(core);
    core->events.slots[index] = event;
    hf_map_put(&core->events.ids, event->id, strlen(event->id), index);
    core->events.listed = grow(core->events.listed, &core->events.listed_capacity,
                               core->events.listed_count + 1, sizeof *core->events.listed);
    core->events.listed[core->events.listed_count++] = index;
    if (definition->waitlist.enabled)
        hf_core_waitlist_configure(core, definition->id, true, definition->waitlist.offer_ttl_ms);
    if (event->waiting_room.enabled) core->events.rooms_enabled++;
    return HF_OK;
}

void event_remove(hf_core_t *core, uint32_t index) {
    assert(index < core->events.count && core->events.slots[index] != NULL);
    uint32_t at = 0;
    while (at < core->events.listed_count && core->events.listed[at] != index) at++;
    assert(at < core->events.listed_count);
    memmove(core->events.listed + at, core->events.listed + at + 1,
            (core->events.listed_count - at - 1) * sizeof *core->events.listed);
    core->events.listed_count--;
    if (core->events.slots[index]->waiting_room.enabled) core->events.rooms_enabled--;
    event_free(core->events.slots[index]);
    core->events.slots[index] = NULL;
    /* The id index removes no single key: it is rebuilt (a deletion is rare, and at most
     * HF_EVENTS_MAX events are indexed). */
    hf_map_free(&core->events.ids);
    hf_map_init(&core->events.ids);
    for (uint32_t i = 0; i < core->events.listed_count; i++) {
        const hf_event_t *event = core->events.slots[core->events.listed[i]];
        hf_map_put(&core->events.ids, event->id, strlen(event->id), core->events.listed[i]);
    }
}

hf_error_t hf_core_event_create(hf_core_t *core, const hf_event_definition_t *definition,
                                hf_time_ms_t now, hf_error_detail_t *detail) {
    command_at(core, now);
    hf_error_t error = event_add(core, definition, now, detail);
    if (error) return error;
    record_event_created(core, core->events.slots[core->events.count - 1], definition, now);
    return HF_OK;
}

/* ---- seat and pool changes ---- */

static void counts_move(hf_counts_t *counts, uint8_t from, uint8_t to) {
    uint32_t *slots[4] = {&counts->available, &counts->held, &counts->sold, &counts->allocated};
    (*slots[from])--;
    (*slots[to])++;
}

/* A freed seat may join the runs beside it into one longer than the row's bound: measure the
 * joined run. A row whose bound is its length is never measured, so rows best_available has
 * not narrowed cost nothing. */
static void widen_free_run_bound(const hf_event_t *event, hf_row_t *row, uint32_t seat_index) {
    if (row->free_run_bound >= row->seat_count) return;
    uint32_t length = 1, first = row->first_seat, end = row->first_seat + row->seat_count;
    for (uint32_t i = seat_index; i > first && event->seats[i - 1].status == HF_SEAT_AVAILABLE; i--)
        length++;
    for (uint32_t i = seat_index + 1; i < end && event->seats[i].status == HF_SEAT_AVAILABLE; i++)
        length++;
    if (length > row->free_run_bound) row->free_run_bound = length;
}

/* Moves a seat to a new status, bumps its version and reports the change. */
void seat_set(hf_core_t *core, hf_event_t *event, uint32_t seat_index, uint8_t status,
              uint32_t owner, hf_time_ms_t now, bool report) {
    hf_seat_t *seat = &event->seats[seat_index];
    uint32_t row_index = seat_row(event, seat_index);
    hf_row_t *row = &event->rows[row_index];
    hf_section_t *section = &event->sections[row->section];
    /* An event without allocations reads one pointer more here, and nothing else. */
    const uint32_t *membership = ((const event_tables_t *)event->internal)->seat_allocation;
    if (membership && membership[seat_index])
        status = allocation_seat_moved(core, event, seat_index, seat->status, status, now, report);
    if (seat->status == HF_SEAT_AVAILABLE) row->available--;
    if (status == HF_SEAT_AVAILABLE) row->available++;
    bool freed = status == HF_SEAT_AVAILABLE && seat->status != HF_SEAT_AVAILABLE;
    counts_move(&event->counts, seat->status, status);
    counts_move(&section->counts, seat->status, status);
    seat->status = status;
    seat->owner = owner;
    if (freed) widen_free_run_bound(event, row, seat_index);
    if (!report) return;
    seat->version++;
    seat_changes_of(event)[seat_index] = core->change_count;
    /* A seat the waitlist may take in this step is told once the step has settled: never
     * available in between when it is offered. */
    if (freed && core->waitlists && waitlist_defer(core, event, row->section + 1, seat_index))
        return;
    if (core->stream_records) record_seat(core, event, seat_index, row_index, now);
}

/* Adds delta units to a pool's held or sold count, reporting the new counts. */
void pool_move(hf_core_t *core, hf_event_t *event, const hf_item_t *item, int64_t held,
               int64_t sold, uint32_t allocation, hf_time_ms_t now, bool report) {
    hf_pool_t *pool = &event->pools[item->index];
    pool->held += held * item->quantity;
    pool->sold += sold * item->quantity;
    if (allocation) allocation_pool_moved(core, event, allocation, item, held, sold, now, report);
    bool freed = held + sold < 0;
    if (report && freed && core->waitlists &&
        waitlist_defer(core, event, 1 + event->section_count + item->index, item->index))
        return;
    if (report && core->stream_records) record_pool(core, event, item->index, now);
}

/* ---- sales: closed by staff, reopened by staff ---- */

hf_error_t hf_core_sales_set(hf_core_t *core, const char *event_id, bool open, hf_time_ms_t now) {
    command_at(core, now);
    uint32_t index;
    if (!hf_core_event(core, event_id, &index)) return HF_ERROR_EVENT_NOT_FOUND;
    hf_event_t *event = core->events.slots[index];
    if (event->sales_open == open) return HF_OK; /* a repeat: nothing to record */
    event->sales_open = open;
    record_event_sales(core, event, now);
    return HF_OK;
}
