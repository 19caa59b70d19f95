/* Allocations (API.md section 14): inventory of an event set aside for a partner, a presale or
 * the artist's guests. This is the core's public interface of the domain (core.h includes it,
 * last); its state and commands live in src/core/allocation/.
 *
 * A free allocated seat has status HF_SEAT_ALLOCATED, so every public check (a seat's status,
 * a row's count of available seats, best_available's skipping of full rows) leaves it out
 * without knowing allocations exist; a pool's free allocated units are its `allocated` count
 * (hf_core_pool_available). A hold or booking naming the allocation (hf_hold_request_t's
 * allocation_id) takes only its inventory, and keeps the allocation (hf_hold_t's and
 * hf_order_t's allocation) so its inventory goes back to it when it comes free, unless it was
 * released from the allocation meanwhile: then it comes free for the public. That decision is
 * taken in one place, allocation/inventory.c (a waitlist hooks in there). */
#ifndef HF_CORE_ALLOCATIONS_H
#define HF_CORE_ALLOCATIONS_H

#include <stdbool.h>
#include <stdint.h>

/* POST /v1/events/{event}/allocations and its release: the seats named, best_count more
 * picked (creation only), the pools' units. A release naming nothing releases all of it. */
typedef struct hf_allocation_request {
    const char *event_id, *allocation_id;
    const char *const *seat_ids;
    uint32_t seat_count;
    const hf_pool_request_t *pools;
    uint32_t pool_count;
    uint32_t best_count;
    const char *best_section; /* NULL: any section */
    bool best_adjacent;
} hf_allocation_request_t;

/* One allocation's counts: seats, and every pool's units together (counts: available are
 * the free ones, still set aside; held and sold stay the allocation's until they come free). */
typedef struct hf_allocation_view {
    const char *id;
    uint32_t event;
    hf_time_ms_t created_at_ms;
    uint32_t seat_count; /* member seats (hf_core_allocation_seats) */
    hf_counts_t seats;   /* available (free, set aside), held, sold */
    uint32_t pool_count; /* lines, hf_core_allocation_pool */
} hf_allocation_view_t;

/* One pool line of an allocation: its units free (set aside), held and sold, and how many of
 * the held and sold ones were released and come free for the public when they come free. */
typedef struct hf_allocation_pool_view {
    uint32_t pool; /* index in the event's pools */
    int64_t available, held, sold, release_pending;
} hf_allocation_pool_view_t;

/* Sets inventory aside: every seat named and picked, and every pool's units, must be free for
 * the public (HF_ERROR_SEATS_UNAVAILABLE with detail.items, HF_ERROR_INSUFFICIENT_QUANTITY
 * with detail.pool and available), HF_ERROR_SEAT_NOT_FOUND, HF_ERROR_POOL_NOT_FOUND,
 * HF_ERROR_SECTION_NOT_FOUND, HF_ERROR_ALLOCATION_EXISTS, HF_ERROR_INVALID_REQUEST (the id,
 * empty, duplicates, too many: detail), HF_ERROR_CAPACITY (HF_ALLOCATIONS_PER_EVENT_MAX).
 * On success *index is the allocation's. */
hf_error_t hf_core_allocation_create(hf_core_t *core, const hf_allocation_request_t *request,
                                     hf_time_ms_t now, uint32_t *index, hf_error_detail_t *detail);
/* Gives inventory back to the public: the free part at once, held and sold items when they
 * come free. Seats named must be the allocation's and not released yet, a pool's units at
 * most what it has not released (HF_ERROR_INVALID_REQUEST on "seats", or
 * HF_ERROR_INSUFFICIENT_QUANTITY with detail.pool and available). */
hf_error_t hf_core_allocation_release(hf_core_t *core, const hf_allocation_request_t *request,
                                      hf_time_ms_t now, uint32_t *index, hf_error_detail_t *detail);

/* The allocation of the event with this id; false when there is none. */
bool hf_core_allocation_find(const hf_core_t *core, uint32_t event_index, const char *id,
                             uint32_t *index);
/* The event's allocations (indexes) in creation order; count 0 and NULL when none. Valid until
 * the next change of the core. */
const uint32_t *hf_core_event_allocations(const hf_core_t *core, uint32_t event_index,
                                          uint32_t *count);
void hf_core_allocation_view(const hf_core_t *core, uint32_t index, hf_allocation_view_t *view);
/* The allocation's seats (indexes in its event), in the order they were set aside. */
const uint32_t *hf_core_allocation_seats(const hf_core_t *core, uint32_t index, uint32_t *count);
void hf_core_allocation_pool(const hf_core_t *core, uint32_t index, uint32_t line,
                             hf_allocation_pool_view_t *view);
/* The allocation a seat of the event is set aside for, held or sold from (index + 1), or 0. */
uint32_t hf_core_seat_allocation(const hf_core_t *core, const hf_event_t *event,
                                 uint32_t seat_index);
/* Whether the seat, held or sold from its allocation, was released from it meanwhile. */
bool hf_core_seat_allocation_released(const hf_core_t *core, const hf_event_t *event,
                                      uint32_t seat_index);
/* Whether the event ever had an allocation: its summary then shows allocated counts. */
bool hf_core_event_has_allocations(const hf_event_t *event);
/* The id of the allocation at index + 1 (a hold's or order's allocation), NULL for 0. */
const char *hf_core_allocation_id(const hf_core_t *core, uint32_t allocation);

/* ---- Restore ---- */

/* An allocation as stored: its seats with their released flag, its pools' units (free, held
 * and sold together) and how many of them are released once they come free. Restored after
 * events and before holds and orders, whose inventory it then lends. */
typedef hf_mutation_allocation_seat_t hf_stored_allocation_seat_t;
typedef hf_mutation_allocation_pool_t hf_stored_allocation_pool_t;
typedef struct hf_stored_allocation {
    const char *event_id, *allocation_id;
    const hf_stored_allocation_seat_t *seats;
    uint32_t seat_count;
    const hf_mutation_allocation_left_t *left;
    uint32_t left_count;
    const hf_stored_allocation_pool_t *pools;
    uint32_t pool_count;
    hf_time_ms_t created_at_ms;
} hf_stored_allocation_t;
hf_error_t hf_core_restore_allocation(hf_core_t *core, const hf_stored_allocation_t *stored);

/* hf_core_check's part: each allocation's counts against its seats and its event's pools. */
const char *hf_core_allocations_check(const hf_core_t *core);

#endif
