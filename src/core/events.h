/* The state of the events' domain (event.c, event_update.c): the events by slot, their id
 * index and creation order, and the private lookup tables each event keeps besides the public
 * hf_event_t. Private to src/core, held by value in struct hf_core (internal.h) as
 * core->events; see orders.h for the shape every domain's state has. */
#ifndef HF_CORE_EVENTS_H
#define HF_CORE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/orders.h"
#include "lib/buffer.h"
#include "lib/map.h"

struct hf_event;

/* Private lookup tables of one event (hf_event_t's internal). */
typedef struct event_tables {
    hf_map_t sections, pools;
    hf_map_t rows; /* "SECTION-ROW" -> row index */
    /* Row r's seat ids begin with "SECTION-ROW-": bytes row_prefix_offsets[r] up to
     * row_prefix_offsets[r + 1] of row_prefixes. Every seat change reports its seat's id, so
     * the id is one copy and a number, not two strlen and three copies. */
    hf_buffer_t row_prefixes;
    uint32_t *row_prefix_offsets; /* row_count + 1 entries */
    /* Per seat: the number (hf_core_change_count) of the last change its availability rests
     * on, 0 for what was loaded from the store. A change reported with a seat runs after its
     * operation's first record, so the number is one of that operation's records and is
     * durable with them. */
    uint64_t *seat_changes;
    /* The number of the event's creation record (0 for an event loaded from the store): a
     * read of a seat no change has touched rests on it. */
    uint64_t created_change;
    /* The event's orders, oldest first (order indexes, which only grow): the staff's listing
     * pages through them without reading other events' orders. */
    index_list_t orders;
    /* Set by its first hold, restored or forgotten ones included: an event that had one is
     * never deleted (hf_core_event_delete), so no hold, order or user record names a slot
     * another event took. */
    bool used;
    /* Allocations (allocation/, API.md section 14): per seat, the index + 1 of the allocation
     * it is set aside for or was held or sold from (ALLOCATION_RELEASED set once released
     * while held or sold), 0 for the public's; NULL until the event's first allocation, so an
     * event without any pays nothing. And the event's allocations in creation order. */
    uint32_t *seat_allocation;
    index_list_t allocations;
} event_tables_t;

typedef struct events {
    struct hf_event **slots; /* by slot; NULL for a slot a deleted event left */
    uint32_t count, capacity;
    hf_map_t ids;
    /* The live events' slots in creation order (GET /v1/events); its count is the number of
     * events, which HF_EVENTS_MAX bounds. */
    uint32_t *listed;
    uint32_t listed_count, listed_capacity;
    /* Events with a waiting room (hf_core_rooms_enabled), kept here since the rooms' own
     * state is made only at the first join. */
    uint32_t rooms_enabled;
} events_t;

#endif
