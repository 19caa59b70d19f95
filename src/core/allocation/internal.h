/* Private to src/core/allocation/: the allocations' state (API.md section 14). The rest of
 * the core reaches it through core/internal.h's allocation functions and the per-seat index
 * every event keeps (event_tables_t's seat_allocation). */
#ifndef HF_CORE_ALLOCATION_INTERNAL_H
#define HF_CORE_ALLOCATION_INTERNAL_H

#include "core/internal.h"

/* One pool of an allocation: its units free (set aside: they are in the pool's allocated
 * count), held and sold, and how many of the held and sold ones were released, to come free
 * for the public rather than back to the allocation. */
typedef struct allocation_line {
    uint32_t pool;
    int64_t free, held, sold, release_pending;
} allocation_line_t;

/* A seat that left the allocation (hf_mutation_allocation_left_t): kept so that every record
 * of the allocation carries what restore must add to its version. */
typedef struct allocation_left {
    uint32_t seat;
    uint32_t changes;
} allocation_left_t;

typedef struct allocation {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t event;
    hf_time_ms_t created_at_ms;
    /* The member seats in the order they were set aside, released ones still held or sold
     * included (their entry in seat_allocation has ALLOCATION_RELEASED). */
    uint32_t *seats;
    uint32_t seat_count;
    allocation_left_t *left; /* at most its seats at creation: seats only ever leave */
    uint32_t left_count, left_capacity;
    /* available: member seats free (HF_SEAT_ALLOCATED); held, sold: member seats so. */
    hf_counts_t counts;
    allocation_line_t *lines;
    uint32_t line_count;
    /* The rows its seats are in, first to last (row_first UINT32_MAX: none): best_available
     * within it reads these rows only. Kept with its seats. */
    uint32_t row_first, row_last;
} allocation_t;

struct allocations {
    allocation_t *slots; /* by index, which only grows: allocations are never deleted */
    uint32_t count, capacity;
    hf_map_t ids; /* "EVENT_INDEX/ID" -> index */
    /* Scratch of one command: the seats of a request (named, then picked), a sorted copy to
     * find duplicates and named seats, and the record's seats and pools. */
    uint32_t *seats, *sorted;
    uint32_t seat_capacity;
    hf_mutation_allocation_seat_t *record_seats;
    uint32_t record_seat_capacity;
    hf_mutation_allocation_left_t *record_left;
    uint32_t record_left_capacity;
    hf_mutation_allocation_pool_t record_pools[HF_HOLD_ITEMS_MAX];
    hf_buffer_t record_ids;
};

static inline allocation_t *allocation_at(const hf_core_t *core, uint32_t index) {
    assert(core->allocations && index < core->allocations->count);
    return &core->allocations->slots[index];
}

static inline event_tables_t *tables_of(const hf_event_t *event) {
    return (event_tables_t *)event->internal;
}

/* allocation.c: the record of an allocation as it stands, and the state made at first use. */
void allocation_record(hf_core_t *core, uint32_t index, int change, hf_time_ms_t now);
struct allocations *allocations_state(hf_core_t *core);
/* Makes room in the command's scratch for count seats. */
void allocation_scratch_reserve(struct allocations *state, uint32_t count);
/* Drops from the allocation's list the seats no longer its own (seat_allocation entry other
 * than its index + 1, released or not): how many it dropped. */
uint32_t allocation_seats_compact(hf_core_t *core, uint32_t index);
/* Seat left the allocation after changes of its version (hf_mutation_allocation_left_t). */
void allocation_left_add(allocation_t *allocation, uint32_t seat, uint32_t changes);
/* Works out the rows of the allocation's seats again (its seats changed, or their indexes). */
void allocation_rows_update(hf_core_t *core, uint32_t index);
/* The allocation's line of a pool, NULL when it has none. */
allocation_line_t *allocation_line_of(const allocation_t *allocation, uint32_t pool);

#endif
