/* The state of the holds' domain (hold.c, request.c): the holds, what the core keeps of each
 * besides hf_hold_t, their id index, the finished ones kept answerable and the slots of
 * forgotten ones; and the scratch space of one hold request's checks. Private to src/core,
 * held by value in struct hf_core (internal.h) as core->holds and core->scratch; see orders.h
 * for the shape every domain's state has. Holds' deadlines are HF_TIMER_HOLD entries of the
 * core's shared timer (timer.h). */
#ifndef HF_CORE_HOLDS_H
#define HF_CORE_HOLDS_H

#include <stdint.h>

#include "lib/limits.h"
#include "lib/map.h"

struct hf_hold;

/* What the core keeps of a hold besides hf_hold_t. */
typedef struct hold_state {
    /* The hold's neighbours in its owner's list of held holds: hold index + 1, 0 marks none. */
    uint32_t previous_active, next_active;
    /* The next hold in the list of finished holds (oldest first) or, for a forgotten hold, in
     * the list of free slots: hold index + 1, 0 marks none. */
    uint32_t next_finished;
    /* Items reserved at the hold's item_offset: a reused slot keeps its items when the new
     * hold needs no more. */
    uint32_t item_capacity;
    /* Where those items are (the slot's hold may be a calendar's, whose item_offset is in
     * the calendars' table), and the calendar items reserved for the slot, as many. */
    uint32_t item_reserved;
    uint32_t calendar_items, calendar_item_capacity;
    /* core->change_count once the hold's newest record was emitted: its creation, an
     * extension, its end or its commit (0 for a restored or revived hold, which the store
     * already has). The store has the hold as the core shows it once it has that record; for
     * a released or expired hold it is the end's record, which forgetting waits for. */
    uint64_t last_change;
} hold_state_t;

typedef struct holds {
    struct hf_hold *slots;
    uint32_t count, capacity, active;
    hold_state_t *states; /* one per hold */
    uint32_t state_capacity;
    hf_index_map_t ids; /* a hold's id -> its index; the id lives in the hold */
    /* Entries of ids left by forgotten holds. They are not removed one by one: finding each
     * one is a cache miss per forgotten hold. They never match (the slot's id is gone or
     * another), and the index is rebuilt once they are half of it. */
    uint32_t ids_stale;
    /* Released and expired holds in the order they finished (hold index + 1, 0 marks none),
     * and the slots of forgotten holds, ready for reuse. */
    uint32_t finished_first, finished_last, finished_count, finished_max;
    uint32_t free_first;
    uint64_t expired; /* holds expired since the core was made (hf_core_advance) */
} holds_t;

/* Scratch space of one hold request's checks (request.c), which bookings and restore share. */
typedef struct hold_scratch {
    uint32_t seats[HF_HOLD_ITEMS_MAX];
    uint32_t seat_count;                /* requested seats, then the best_available picks */
    uint32_t sorted[HF_HOLD_ITEMS_MAX]; /* the requested seats, sorted */
    uint32_t pools[HF_HOLD_ITEMS_MAX];
    /* An exchange hold's old order on the same event (order index + 1, else 0): its seats
     * and units count as free for the checks. */
    uint32_t exchange_order;
    /* A remote exchange hold's old order (exchange/remote.c: its id's offset + 1, else 0),
     * set around the hf_core_hold that places it. */
    uint32_t exchange_elsewhere;
    /* The allocation the request names (index + 1), else 0: only its inventory is free for
     * the checks, and only the public's when 0. */
    uint32_t allocation;
} hold_scratch_t;

#endif
