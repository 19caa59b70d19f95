/* The state machine: events, seats, pools, holds, orders. Pure C: no I/O, no clock, no
 * threads. Time is a parameter; ids of new objects are chosen by the caller. Every operation
 * either applies fully and reports its changes to the mutation sink, or changes nothing and
 * returns an error. The same calls at the same times always give the same state.
 *
 * Lifetimes: pointers returned by lookups (hf_core_event, hf_core_hold, ...) are borrowed and
 * valid until the next call that changes the core.
 *
 * The files of src/core/, one per domain (DESIGN.md, "Where things go"):
 *   core.h       this interface: all that the rest of the server, the tests and the
 *                benchmarks include
 *   internal.h   private to src/core/: the core's container (struct hf_core, holding each
 *                domain's state) and what its files share
 *   events.h, users.h, holds.h, orders.h, payments.h
 *                private to src/core/: each domain's state, one struct per header (the
 *                waiting rooms' is private to queue.c, dispatch's to dispatch/)
 *   core.c       creation and destruction, the sink, the numbering of changes, every
 *                mutation record the core emits, and time: hf_core_advance over the table of
 *                timer kinds (a row per kind: its staleness and its passing, told by its
 *                domain)
 *   event.c      event definitions checked and laid out; seats, pools, their lookups and ids
 *   user.c       users and their records per event; users' orders
 *   hold.c       hold, extend, release, expiry, the finished holds and eviction, revive
 *   request.c    the checks of a hold request, which bookings share
 *   order.c      commit, cancel, bookings
 *   payment.c    payment webhooks' deliveries (deduplicated, pruned by age) and refunds
 *   queue.h, .c  the waiting rooms: tickets, positions, admissions (queue.h, which the engine
 *                includes beside this header); estimate.h, .c their estimated_wait_s
 *   restore.c    hf_core_restore_*: the state loaded back from the store
 *   check.c      hf_core_check: the invariants
 *   timer.h, .c  deadlines (holds' expiry, rooms' admissions and tickets, rides' offers): a
 *                heap that knows no domain, and the kinds of its entries
 *   best.h, .c   best_available's choice of seats
 *   names.c      status names (errors are named by the engine's table, engine/errors.h)
 *   limits.h     every limit of the server
 *   definition.h an event's definition; mutation.h: the records the core emits (one struct
 *                per kind; the core writes no JSON: the store decides how rows are kept)
 *   dispatch/    fleets, drivers, rides and their timed offers (dispatch/dispatch.h, which
 *                the engine includes beside this header)
 *   calendars.h, calendar/
 *                calendars: resources sold by spans of time, their span indexes, holds and
 *                orders (calendars.h is part of this interface: this header includes it)
 * A new domain adds its files here (or a folder, as dispatch/): its state struct in a header
 * of its own and one member of struct hf_core for it, its commands, its deadlines as kinds of
 * timer.h with a row each in core.c's table; it shares with the others only through
 * internal.h. */
#ifndef HF_CORE_H
#define HF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/definition.h"
#include "lib/limits.h"
#include "core/mutation.h"

typedef int64_t hf_time_ms_t; /* milliseconds since the Unix epoch */

typedef enum hf_seat_status {
    HF_SEAT_AVAILABLE = 0,
    HF_SEAT_HELD = 1,
    HF_SEAT_SOLD = 2,
    /* Free, but set aside for an allocation (API.md section 14): only holds and bookings
     * naming that allocation may take it; held and sold seats of an allocation are HELD and
     * SOLD as any other. */
    HF_SEAT_ALLOCATED = 3,
} hf_seat_status_t;

typedef enum hf_hold_status {
    HF_HOLD_HELD = 0,
    HF_HOLD_CONFIRMED = 1,
    HF_HOLD_RELEASED = 2,
    HF_HOLD_EXPIRED = 3,
    /* The slot of a hold the core has forgotten (hf_core_evict), waiting for reuse: never
     * returned by a lookup. */
    HF_HOLD_EVICTED = 4,
} hf_hold_status_t;

typedef enum hf_order_status {
    HF_ORDER_CONFIRMED = 0,
    HF_ORDER_CANCELLED = 1,
    /* Replaced by the order of an exchange hold's commit (API.md section 13): its seats,
     * units and spans passed to that order or came free; final. */
    HF_ORDER_EXCHANGED = 2,
} hf_order_status_t;

typedef enum hf_error {
    HF_OK = 0,
    HF_ERROR_INVALID_REQUEST, /* detail: the field's path and the fault */
    HF_ERROR_EVENT_EXISTS,
    HF_ERROR_EVENT_NOT_FOUND,
    HF_ERROR_SEAT_NOT_FOUND,        /* detail.items: indexes into the request's seat_ids */
    HF_ERROR_SEATS_UNAVAILABLE,     /* detail.items: indexes into the request's seat_ids */
    HF_ERROR_POOL_NOT_FOUND,        /* detail.pool: index into the request's pools */
    HF_ERROR_INSUFFICIENT_QUANTITY, /* detail.pool, detail.available */
    HF_ERROR_USER_LIMIT_EXCEEDED,   /* detail.limit, current, requested */
    HF_ERROR_HOLD_NOT_FOUND,
    HF_ERROR_NOT_OWNER,
    HF_ERROR_HOLD_EXPIRED,
    HF_ERROR_HOLD_NOT_ACTIVE,
    HF_ERROR_ALREADY_CONFIRMED,
    HF_ERROR_HOLD_RELEASED,
    HF_ERROR_ORDER_NOT_FOUND,
    HF_ERROR_CAPACITY,          /* a server-wide limit of limits.h is reached */
    HF_ERROR_SECTION_NOT_FOUND, /* best_available names an unknown section */
    HF_ERROR_VERSION_CONFLICT,  /* detail.items: indexes of seats whose version or state moved */
    HF_ERROR_SALES_CLOSED,      /* the event's sales are closed: no new hold or booking */
    HF_ERROR_REFUND_NOT_FOUND,
    /* The waiting room (core/queue.h). */
    HF_ERROR_WAITING_ROOM_DISABLED,
    HF_ERROR_WAITING_ROOM_FULL,
    HF_ERROR_TICKET_NOT_FOUND,
    /* Dispatch (core/dispatch/dispatch.h). */
    HF_ERROR_FLEET_NOT_FOUND,
    HF_ERROR_RIDE_NOT_FOUND,
    HF_ERROR_RIDE_EXISTS,
    HF_ERROR_OFFER_EXPIRED, /* this driver's offer for the ride lapsed */
    HF_ERROR_NOT_OFFERED,   /* this driver holds no offer for the ride */
    /* Changing and deleting events (hf_core_event_update, hf_core_event_delete). */
    HF_ERROR_CAPACITY_BELOW_TAKEN, /* detail.pool (index into the patch's pools), requested
                                      (the capacity asked for), current (held + sold) */
    HF_ERROR_EVENT_IN_USE,         /* the event had a hold, an order or a queue ticket */
    HF_ERROR_NOT_ASSIGNED,         /* the ride is not assigned to this driver */
    HF_ERROR_DRIVER_NOT_FOUND,
    HF_ERROR_DRIVER_BUSY,   /* a ride is assigned to the driver */
    HF_ERROR_RIDE_FINISHED, /* the ride is completed: no cancel */
    /* Calendars (core/calendars.h). */
    HF_ERROR_CALENDAR_EXISTS,
    HF_ERROR_CALENDAR_NOT_FOUND,
    HF_ERROR_RESOURCE_NOT_FOUND, /* detail.index: the request's item */
    HF_ERROR_RESOURCE_EXISTS,    /* detail.index: the new resource whose id is taken */
    HF_ERROR_RANGE_UNAVAILABLE,  /* the request's conflicts (hf_calendar_hold_request_t) */
    /* Exchanges (core/exchange/): the order named is not confirmed (cancelled, exchanged). */
    HF_ERROR_ORDER_NOT_ACTIVE,
    /* Allocations (core/allocations.h). */
    HF_ERROR_ALLOCATION_NOT_FOUND,
    HF_ERROR_ALLOCATION_EXISTS,
    /* Cancel jobs (core/jobs.h): the event is cancelled (no new hold, booking or join), or
     * no job has the id. */
    HF_ERROR_EVENT_CANCELLED,
    HF_ERROR_JOB_NOT_FOUND,
    /* Waitlists (hf_core_waitlist_join and its neighbours). */
    HF_ERROR_WAITLIST_DISABLED,
    HF_ERROR_WAITLIST_NOT_FOUND,
} hf_error_t;

/* The words of API.md for statuses ("available", "held", ...); static strings. */
const char *hf_seat_status_name(uint8_t status);
const char *hf_hold_status_name(uint8_t status);
const char *hf_order_status_name(uint8_t status);
/* The seat status named by text; false when there is none. */
bool hf_seat_status_parse(const char *text, uint8_t *status);
/* The hold status (held to expired, never evicted) or the order status named by text; false
 * when there is none (text NULL included). */
bool hf_hold_status_parse(const char *text, uint8_t *status);
bool hf_order_status_parse(const char *text, uint8_t *status);

/* What is wrong with the field of an HF_ERROR_INVALID_REQUEST. The core writes no text for
 * clients: the engine says each fault in words, with the field's path and rule. */
typedef enum hf_fault {
    HF_FAULT_VALUE = 0,    /* not what the field must be (the engine knows each rule) */
    HF_FAULT_REQUIRED,     /* absent */
    HF_FAULT_DUPLICATE,    /* the same id as the element other of the same list */
    HF_FAULT_NO_INVENTORY, /* an event without any seat or pool */
    HF_FAULT_NO_ITEMS,     /* a hold or booking asking for nothing */
    HF_FAULT_EVENT_SEATS,  /* more seats than an event may have: requested, limit */
    HF_FAULT_EVENT_ROWS,   /* more rows than an event may have: requested, limit */
    HF_FAULT_HOLD_ITEMS,   /* more items than max_seats_per_hold: requested, limit */
    HF_FAULT_HOLD_TTL,     /* ttl above max_hold: requested, limit (milliseconds) */
    HF_FAULT_ID_TAKEN,     /* a server-made id already in use (the caller's fault) */
    HF_FAULT_EXISTS,       /* a patch adds a row whose id its section has already */
} hf_fault_t;

typedef struct hf_error_detail {
    /* HF_ERROR_INVALID_REQUEST: the path of the field at fault, from the top-level member
     * field down: field, field[index] (has_index; for a hold's "pools", the pool id of
     * request->pools[index]), field[index].rows[row] (has_row), each followed by .member when
     * member is set. field and member are static strings. */
    const char *field;
    const char *member;
    uint32_t index, row;
    bool has_index, has_row;
    uint8_t fault; /* hf_fault_t */
    /* HF_FAULT_DUPLICATE: the index (the row's, with has_row) of the earlier element with
     * the same id. */
    uint32_t other;
    /* HF_ERROR_USER_LIMIT_EXCEEDED: max_seats_per_user, the units the user holds and has
     * bought on the event (less those replace_existing releases), and the units asked for;
     * pool units count one each. The faults with numbers use limit and requested. */
    int64_t limit, current, requested;
    /* HF_ERROR_SEATS_UNAVAILABLE and HF_ERROR_VERSION_CONFLICT: the newest change (numbered
     * as hf_core_change_count counts) that the states of the seats asked for rest on. Once
     * the store has every change up to it, the answer tells nothing the store lacks. */
    uint64_t observed_change;
    uint32_t pool;
    int64_t available;
    /* Last: callers clear what comes before it (items is large). */
    uint32_t item_count;
    uint32_t items[HF_HOLD_ITEMS_MAX];
} hf_error_detail_t;

#include "core/calendars.h"

/* ---- Read-only views of the state ---- */

typedef struct hf_counts {
    uint32_t available, held, sold;
    uint32_t allocated; /* free seats set aside for an allocation (HF_SEAT_ALLOCATED) */
} hf_counts_t;

typedef struct hf_seat {
    uint32_t version;
    uint32_t owner; /* hold index + 1 when held, order index + 1 when sold */
    /* The seat's row, index into the event's rows: every seat change, item and id needs it,
     * and a binary search over the rows for each was a tenth of a hold's instructions. */
    uint32_t row;
    uint8_t status; /* hf_seat_status_t */
} hf_seat_t;

typedef struct hf_row {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t section;
    uint32_t first_seat; /* index into the event's seats */
    uint32_t seat_count;
    uint32_t available; /* seats of the row that are available */
    /* No run of consecutive available seats in the row is longer than this (an upper bound,
     * made exact by best_available's scans): a row that cannot hold a block is skipped
     * without reading its seats. */
    uint32_t free_run_bound;
} hf_row_t;

typedef struct hf_section {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t price;
    uint32_t first_row, row_count;
    uint32_t first_seat, seat_count;
    hf_counts_t counts;
} hf_section_t;

typedef struct hf_pool {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t capacity, price;
    int64_t held, sold;
    /* Free units set aside for allocations (core/allocations.h): available to the public =
     * capacity - held - sold - allocated (hf_core_pool_available). */
    int64_t allocated;
} hf_pool_t;

/* The units of a pool the public may take. */
static inline int64_t hf_core_pool_available(const hf_pool_t *pool) {
    return pool->capacity - pool->held - pool->sold - pool->allocated;
}

typedef struct hf_event {
    char id[HF_ID_SIZE_MAX + 1];
    char name[HF_NAME_SIZE_MAX + 1];
    char currency[HF_CURRENCY_SIZE_MAX + 1];
    int64_t hold_ttl_ms, max_hold_ms;
    uint32_t max_seats_per_user, max_seats_per_hold;
    hf_time_ms_t created_at_ms;
    /* False once staff closed sales (hf_core_sales_set): new holds and bookings are refused,
     * while live holds and orders still commit, extend, release and cancel. */
    bool sales_open;
    /* Cancelled for good (core/jobs.h): sales closed whatever sales_open says; job is the
     * index + 1 of its cancel job. */
    bool cancelled;
    uint32_t job;
    uint32_t section_count, row_count, seat_count, pool_count;
    hf_section_t *sections;
    hf_row_t *rows;
    hf_seat_t *seats;
    hf_pool_t *pools;
    hf_counts_t counts;
    void *internal;                    /* lookup tables, private to the core */
    hf_room_definition_t waiting_room; /* the room's settings (core/queue.h) */
} hf_event_t;

/* One item of a hold or order: a seat (quantity 0 marks a seat, index into the event's seats)
 * or a pool line (index into the event's pools, quantity >= 1). Seats come first. */
typedef struct hf_item {
    uint32_t index;
    uint32_t quantity;
} hf_item_t;

typedef struct hf_hold {
    char id[HF_SERVER_ID_SIZE + 1];
    uint32_t event; /* index, see hf_core_event_at */
    uint32_t user;  /* index, see hf_core_user_id */
    uint8_t status; /* hf_hold_status_t */
    uint32_t order; /* order index + 1 once confirmed, else 0 */
    hf_time_ms_t created_at_ms, expires_at_ms;
    int64_t total;
    uint32_t item_offset; /* see hf_core_items */
    uint32_t seat_count, pool_count;
    uint32_t owner; /* private to the core: the user's record on the event */
    uint8_t target; /* hf_target_t: a calendar's hold has event = the calendar's index */
    /* Order index + 1 of the confirmed order an exchange hold would replace (API.md section
     * 13), else 0. Its difference is total less that order's total. */
    uint32_t exchange_for;
    /* A remote exchange's old order (core/locks.h): its id's string offset + 1 (0: none), and
     * its total (HF_REMOTE_TOTAL_UNKNOWN after a restore, until the commit's lock says). */
    uint32_t exchange_elsewhere;
    int64_t exchange_elsewhere_total;
    /* Allocation index + 1 of the allocation the hold took its inventory from (API.md section
     * 14), else 0: its units go back to it when they come free. */
    uint32_t allocation;
} hf_hold_t;

typedef struct hf_order {
    char id[HF_SERVER_ID_SIZE + 1];
    uint32_t event, user;
    uint32_t hold;  /* hold index + 1, or 0 for a booking without hold */
    uint8_t status; /* hf_order_status_t */
    hf_time_ms_t created_at_ms;
    int64_t total;
    uint32_t payment_ref; /* offset in the string table, see hf_core_string */
    uint32_t item_offset;
    uint32_t seat_count, pool_count;
    uint32_t owner;       /* private to the core: the user's record on the event */
    uint64_t last_change; /* private to the core: see hf_core_order_change */
    /* Refund index + 1 once the order was cancelled with a payment_ref (its refund of reason
     * order_cancelled), else 0. */
    uint32_t refund;
    uint8_t target; /* hf_target_t: a calendar's order has event = the calendar's index */
    /* Exchanges: order index + 1 of the order this one replaced, and of the order that
     * replaced this one (status exchanged); 0 for none. */
    uint32_t replaces, replaced_by;
    /* The same orders' ids (offsets, see hf_core_string) when they are not in this core: a
     * core loaded with some units only (a list across units, a takeover) may hold one side of
     * an exchange between units. UINT32_MAX for none. */
    uint32_t replaces_elsewhere, replaced_by_elsewhere;
    /* Allocation index + 1 of the allocation its inventory came from, else 0 (as a hold's). */
    uint32_t allocation;
} hf_order_t;

/* ---- Commands ---- */

typedef struct hf_pool_request {
    const char *pool_id;
    uint32_t quantity; /* >= 1 */
} hf_pool_request_t;

typedef struct hf_hold_request {
    const char *event_id;
    const char *user_id;
    const char *hold_id; /* the new hold's id, made by the caller ("res_...") */
    const char *const *seat_ids;
    uint32_t seat_count;
    const hf_pool_request_t *pools;
    uint32_t pool_count;
    int64_t ttl_ms; /* < 0: the event's hold_ttl */
    bool replace_existing;
    /* best_available: best_count seats picked by the server besides seat_ids (0: none). */
    uint32_t best_count;
    const char *best_section; /* NULL: any section, in listed order */
    bool best_adjacent;
    /* Bookings only: the version the client saw of each seat of seat_ids. */
    const uint32_t *seat_versions;
    /* An exchange hold (API.md section 13): the id of the confirmed order of user_id it would
     * replace, whose own seats and units count as free for it; NULL for an ordinary hold. */
    const char *exchange_for;
    /* The allocation of the event whose inventory alone the hold or booking takes (API.md
     * section 14); NULL: public inventory only. */
    const char *allocation_id;
    /* A waitlist's offer (core/waitlist/offer.c): its TTL is the waitlist's offer_ttl, which
     * max_hold_ms does not bound (API.md section 14). */
    bool waitlist_offer;
} hf_hold_request_t;

typedef struct hf_core hf_core_t;

/* ---- waitlists (API.md section 14, core/waitlist/) ---- */

typedef enum hf_waitlist_status {
    HF_WAITLIST_WAITING = 0,
    HF_WAITLIST_OFFERED,   /* a hold of the user's (the offer) holds its inventory */
    HF_WAITLIST_FULFILLED, /* the offer was committed */
    HF_WAITLIST_LAPSED,    /* the offer was released or lapsed */
    HF_WAITLIST_CANCELLED,
} hf_waitlist_status_t;

/* A join: section, pool or neither (any section); waitlist_id is made by the caller ("w_..."
 * and 36 hex digits, as hold ids). */
typedef struct hf_waitlist_request {
    const char *event_id, *user_id, *waitlist_id;
    const char *section, *pool; /* at most one; both NULL: any section */
    uint32_t quantity;
} hf_waitlist_request_t;

/* An entry as the API shows it; pointers borrowed until the next command. */
typedef struct hf_waitlist_view {
    const char *waitlist_id, *user_id;
    const char *section, *pool; /* NULL when not named */
    uint8_t status;             /* hf_waitlist_status_t */
    uint32_t quantity;
    uint32_t position; /* among the event's waiting entries, from 1 (waiting only) */
    uint32_t sequence; /* join number within the event, for paging */
    /* The offer's hold (offered, fulfilled, lapsed, or cancelled once offered), else NULL;
     * it points to offer_hold_id, so it is known after its hold is forgotten too. */
    const char *reservation_id;
    char offer_hold_id[HF_SERVER_ID_SIZE + 1];
    hf_time_ms_t expires_at_ms; /* the offer's (offered only) */
    hf_time_ms_t joined_at_ms, changed_at_ms;
} hf_waitlist_view_t;

/* Owned by the caller; hf_core_destroy frees everything. */
hf_core_t *hf_core_create(hf_mutation_sink_t sink);
void hf_core_destroy(hf_core_t *core);
/* Replace the sink (the store loader installs a discarding one while restoring). */
void hf_core_set_sink(hf_core_t *core, hf_mutation_sink_t sink);
/* Seat and pool records (HF_MUTATION_SEAT, HF_MUTATION_POOL) serve live streams only: the
 * store derives both from holds and orders. With wanted false the core neither formats nor
 * emits them, which saves a seat id written out for every seat change; versions and counts
 * move exactly as before. On by default; the engine turns them on while a stream is open. */
void hf_core_set_stream_records(hf_core_t *core, bool wanted);

/* Runs every deadline due at now, emitting their changes: holds with expires_at <= now expire,
 * rides' offers lapse, waiting rooms admit, abandon and expire tickets (core.c's table of
 * timer kinds). The caller runs it once per request, before the request's commands, at the
 * request's time (the engine's dispatcher does, and its timer between requests), so no command
 * sees a lapsed hold as held; commands do not advance, and assert that their now is not before
 * the last advance's. now never goes back. Returns holds expired. */
uint32_t hf_core_advance(hf_core_t *core, hf_time_ms_t now);
/* The earliest expires_at among held holds and rides' live offers (core/dispatch/, which
 * hf_core_advance moves on too), or INT64_MAX when there is none. */
hf_time_ms_t hf_core_next_expiry(const hf_core_t *core);

hf_error_t hf_core_event_create(hf_core_t *core, const hf_event_definition_t *definition,
                                hf_time_ms_t now, hf_error_detail_t *detail);
hf_error_t hf_core_hold(hf_core_t *core, const hf_hold_request_t *request, hf_time_ms_t now,
                        uint32_t *hold_index, hf_error_detail_t *detail);
/* ttl_ms < 0: the event's hold_ttl. *capped tells whether max_hold cut the extension. */
hf_error_t hf_core_extend(hf_core_t *core, const char *hold_id, const char *user_id, int64_t ttl_ms,
                          hf_time_ms_t now, bool *capped);
/* Released, or already expired: both answer HF_OK (look at the hold's status). */
hf_error_t hf_core_release(hf_core_t *core, const char *hold_id, const char *user_id,
                           hf_time_ms_t now);
/* order_id: the id for the new order. An already confirmed hold answers its order
 * (*order_index) and changes nothing: HF_OK when payment_ref is NULL, empty or the order's own,
 * else HF_ERROR_ALREADY_CONFIRMED with *order_index set too (a second payment is never
 * absorbed: API.md section 3). */
hf_error_t hf_core_commit(hf_core_t *core, const char *hold_id, const char *user_id,
                          const char *order_id, const char *payment_ref, hf_time_ms_t now,
                          uint32_t *order_index);
/* hf_core_commit with the id of the refund an exchange hold's commit may owe (API.md section
 * 13: its new order costs less than a paid old order); hf_core_commit passes NULL, which
 * refuses such a commit (HF_ERROR_INVALID_REQUEST). An exchange hold's commit answers
 * HF_ERROR_ORDER_NOT_ACTIVE when its old order is no longer confirmed, and
 * HF_ERROR_INVALID_REQUEST without payment_ref when its difference is positive; nothing
 * changes then. Otherwise the old order is exchanged and the new one replaces it, one step. */
hf_error_t hf_core_commit_refunding(hf_core_t *core, const char *hold_id, const char *user_id,
                                    const char *order_id, const char *payment_ref,
                                    const char *refund_id, hf_time_ms_t now, uint32_t *order_index);
/* Exchanges committed since the core was made (the metric holdfast_exchanges_total). */
uint64_t hf_core_exchanges(const hf_core_t *core);
/* Cancels the order (a repeat answers HF_OK and changes nothing). An order that was paid (it
 * has a payment_ref) gets a pending refund of its total in the same step, of reason
 * HF_REFUND_ORDER_CANCELLED, with refund_id (made by the caller, "ref_...") as its id: money in
 * hand is never forgotten (API.md section 4). A refund_id NULL or taken is
 * HF_ERROR_INVALID_REQUEST for such an order. */
hf_error_t hf_core_cancel(hf_core_t *core, const char *order_id, const char *user_id,
                          const char *refund_id, hf_time_ms_t now);
/* Closes (open false) or reopens the event's sales. A change emits one
 * HF_MUTATION_EVENT_SALES record; setting the state the event already has emits nothing and
 * answers HF_OK, so a repeat changes nothing. HF_ERROR_EVENT_NOT_FOUND for an unknown event. */
hf_error_t hf_core_sales_set(hf_core_t *core, const char *event_id, bool open, hf_time_ms_t now);
/* Changes a live event by patch (definition.h: the members named in members, the listed
 * sections and pools). Checked as a creation is, with the same limits and faults (paths into
 * the patch), and HF_FAULT_EXISTS for a row id its section has; a new section or pool needs
 * every member a creation needs (HF_FAULT_REQUIRED). HF_ERROR_CAPACITY_BELOW_TAKEN when a
 * pool's capacity would be below its held + sold. Held and sold items keep the prices they
 * were taken at. New seats, rows and sections grow the event's tables here, off the hot path:
 * seat indexes may move (a section's new rows come after its last row), so every index kept
 * of the event's seats (holds', orders', streams' windows) is stale after a change that
 * *layout reports (the caller ends the event's streams). A patch that changes nothing emits
 * nothing; a change emits one HF_MUTATION_EVENT_UPDATE. */
hf_error_t hf_core_event_update(hf_core_t *core, const hf_event_definition_t *patch,
                                uint32_t members, hf_time_ms_t now, bool *layout,
                                hf_error_detail_t *detail);
/* Deletes an event that never had a hold, an order or a queue ticket (else
 * HF_ERROR_EVENT_IN_USE): one HF_MUTATION_EVENT_DELETE, and its id is free again. Its slot
 * (*index, for the caller's own state of the event) may serve a later event. */
hf_error_t hf_core_event_delete(hf_core_t *core, const char *event_id, hf_time_ms_t now,
                                uint32_t *index);
/* An order without a hold (API.md section 4, bookings): request->seat_versions must match
 * every seat's version and the seats must be available, else HF_ERROR_VERSION_CONFLICT with
 * detail.items; the other checks are those of a hold. ttl_ms must be -1, best_count 0 and
 * replace_existing is ignored. */
hf_error_t hf_core_book(hf_core_t *core, const hf_hold_request_t *request, const char *order_id,
                        const char *payment_ref, hf_time_ms_t now, uint32_t *order_index,
                        hf_error_detail_t *detail);

/* ---- Payments (API.md section 7) ----
 *
 * A payment provider's delivery decides one outcome: the hold committed (maybe late, when it
 * had lapsed but everything it held is still free: money in hand is never refunded while the
 * inventory it paid for is there), a refund required with its reason, or a failed payment
 * recorded. Deliveries are deduplicated on (payment_intent_id, type): a repeat answers the
 * first outcome and changes nothing. Each delivery, refund and the order they make are records
 * of the same command, so the store writes them in one batch. A hold the core has forgotten
 * must be revived (hf_core_revive_hold) before its delivery is applied. */

typedef enum hf_payment_type {
    HF_PAYMENT_SUCCEEDED = 0,
    HF_PAYMENT_FAILED = 1,
} hf_payment_type_t;

typedef enum hf_payment_result {
    HF_PAYMENT_COMMITTED = 0,
    HF_PAYMENT_REFUND_REQUIRED = 1,
    HF_PAYMENT_RECORDED = 2,
} hf_payment_result_t;

typedef enum hf_refund_reason {
    HF_REFUND_HOLD_EXPIRED = 0,
    HF_REFUND_HOLD_RELEASED = 1,
    HF_REFUND_AMOUNT_MISMATCH = 2,
    HF_REFUND_HOLD_NOT_FOUND = 3,
    HF_REFUND_ALREADY_CONFIRMED = 4,
    HF_REFUND_ORDER_CANCELLED = 5, /* a paid order cancelled (hf_core_cancel) */
    HF_REFUND_EXCHANGE = 6,        /* an exchange's new order costs less than the old */
    HF_REFUND_ORDER_NOT_ACTIVE =
        7,                         /* paid for an exchange whose old order is no longer confirmed */
    HF_REFUND_EVENT_CANCELLED = 8, /* an order of a cancelled event, by its job (core/jobs.h) */
    HF_REFUND_REASON_LAST = HF_REFUND_EVENT_CANCELLED,
} hf_refund_reason_t;

typedef enum hf_refund_status {
    HF_REFUND_PENDING = 0,
    HF_REFUND_COMPLETED = 1,
} hf_refund_status_t;

/* The words of API.md: "payment.succeeded", "committed", "hold_expired", "pending"... */
const char *hf_payment_type_name(uint8_t type);
const char *hf_payment_result_name(uint8_t result);
const char *hf_refund_reason_name(uint8_t reason);
/* Whether a refund of this reason is a cancelled order's, which it names (order_cancelled,
 * event_cancelled). */
static inline bool hf_refund_reason_of_cancel(uint8_t reason) {
    return reason == HF_REFUND_ORDER_CANCELLED || reason == HF_REFUND_EVENT_CANCELLED;
}
const char *hf_refund_status_name(uint8_t status);
/* The number of a word above; false when there is none. */
bool hf_payment_type_parse(const char *text, uint8_t *type);
bool hf_refund_status_parse(const char *text, uint8_t *status);
bool hf_payment_result_parse(const char *text, uint8_t *result);
bool hf_refund_reason_parse(const char *text, uint8_t *reason);

typedef struct hf_refund {
    char id[HF_SERVER_ID_SIZE + 1];
    char *payment_intent_id; /* owned by the core */
    /* Owned by the core; as the delivery named it, the cancelled order's hold, or NULL for a
     * cancelled booking (an order without hold). */
    char *reservation_id;
    int64_t amount; /* the amount paid */
    uint8_t reason; /* hf_refund_reason_t */
    uint8_t status; /* hf_refund_status_t */
    hf_time_ms_t created_at_ms;
    uint64_t last_change; /* private to the core: see hf_core_refund_change */
    /* The event of the hold it refunds (its unit with several nodes), when of_event; a
     * refund of a hold no event has belongs to no unit. */
    bool of_event;
    uint32_t event; /* index, see hf_core_event_at (hf_core_calendar_at with target) */
    uint32_t order; /* order index + 1 for an order_cancelled refund, else 0 */
    uint8_t target; /* hf_target_t: of_event and event name a calendar */
} hf_refund_t;

typedef struct hf_payment_delivery {
    const char *event_id; /* the provider's id of the delivery ("evt_1") */
    uint8_t type;         /* hf_payment_type_t */
    const char *payment_intent_id;
    const char *reservation_id;
    int64_t amount;
    /* The currency the provider names (NULL: none): one other than the hold's (ASCII case
     * aside: providers write "usd") is refunded as amount_mismatch. */
    const char *currency;
    /* Ids made by the caller for what the delivery may create: "ord_...", "ref_...". */
    const char *order_id, *refund_id;
} hf_payment_delivery_t;

/* What a delivery decided, the first time or (repeat) earlier. */
typedef struct hf_payment_outcome {
    uint8_t result;  /* hf_payment_result_t */
    uint8_t reason;  /* hf_refund_reason_t, with HF_PAYMENT_REFUND_REQUIRED */
    bool late;       /* committed after the hold had lapsed */
    bool repeat;     /* the answer of an earlier delivery; nothing changed */
    uint32_t order;  /* order index, with HF_PAYMENT_COMMITTED */
    uint32_t refund; /* refund index, with HF_PAYMENT_REFUND_REQUIRED */
} hf_payment_outcome_t;

/* Applies a delivery (after expiring what is due at now). HF_ERROR_INVALID_REQUEST for a
 * missing intent id or a new id already taken; HF_ERROR_CAPACITY when
 * HF_WEBHOOK_DELIVERIES_MAX deliveries younger than HF_WEBHOOK_DEDUP_KEEP_MS are kept. */
hf_error_t hf_core_payment(hf_core_t *core, const hf_payment_delivery_t *delivery, hf_time_ms_t now,
                           hf_payment_outcome_t *outcome);
/* Marks a refund completed; completing a completed one changes nothing. */
hf_error_t hf_core_refund_complete(hf_core_t *core, const char *refund_id, hf_time_ms_t now,
                                   uint32_t *index);
const hf_refund_t *hf_core_refund_find(const hf_core_t *core, const char *refund_id,
                                       uint32_t *index);
/* Refunds by index, oldest first (indexes only grow: refunds are never forgotten). */
uint32_t hf_core_refund_count(const hf_core_t *core);
const hf_refund_t *hf_core_refund_at(const hf_core_t *core, uint32_t index);
/* Refunds marked completed (the others are pending), kept as they change. */
uint32_t hf_core_refunds_completed(const hf_core_t *core);
/* Deliveries hf_core_payment applied since the core was made, by what they decided: indexes
 * are hf_payment_result_t values, then HF_PAYMENT_COUNT_REPEAT for repeats answered with an
 * earlier outcome. Restored deliveries are not counted. */
#define HF_PAYMENT_COUNT_REPEAT 3
#define HF_PAYMENT_COUNTS 4
const uint64_t *hf_core_payment_counts(const hf_core_t *core);
/* Deliveries kept for deduplication. */
uint32_t hf_core_deliveries_kept(const hf_core_t *core);
/* The number (hf_core_change_count) of the newest record of the refund at index. */
uint64_t hf_core_refund_change(const hf_core_t *core, uint32_t index);

/* ---- Restore (at start, from the store; no mutation is emitted) ---- */

/* A hold as it was stored: re-applied with its original times and status. A held hold whose
 * expires_at has passed stays held until the first hf_core_advance expires it durably. */
typedef struct hf_stored_hold {
    hf_hold_request_t request; /* event, user, id, seats, pools */
    uint8_t status;
    hf_time_ms_t created_at_ms, expires_at_ms;
    int64_t total;
} hf_stored_hold_t;

typedef struct hf_stored_order {
    const char *order_id;
    const char *hold_id;     /* NULL for a booking */
    hf_hold_request_t items; /* event, user, seats and pools of the order */
    uint8_t status;
    hf_time_ms_t created_at_ms;
    int64_t total;
    const char *payment_ref;
    /* Exchanges: the order it replaced, and the one that replaced it (status exchanged);
     * NULL for none. */
    const char *replaces, *replaced_by;
} hf_stored_order_t;

hf_error_t hf_core_restore_event(hf_core_t *core, const hf_event_definition_t *definition,
                                 hf_time_ms_t created_at_ms);
/* The sales state the store kept for a restored event (events are restored open). */
hf_error_t hf_core_restore_sales(hf_core_t *core, const char *event_id, bool open);
hf_error_t hf_core_restore_hold(hf_core_t *core, const hf_stored_hold_t *hold);
/* A released or expired hold that is not kept in memory (it would be forgotten at once, see
 * hf_core_evict): only its seats' versions are counted. Anything else is
 * HF_ERROR_INVALID_REQUEST. */
hf_error_t hf_core_restore_forgotten_hold(hf_core_t *core, const hf_stored_hold_t *hold);
hf_error_t hf_core_restore_order(hf_core_t *core, const hf_stored_order_t *order);
typedef struct hf_stored_refund {
    const char *refund_id, *payment_intent_id, *reservation_id;
    int64_t amount;
    uint8_t reason, status;
    hf_time_ms_t created_at_ms;
    const char *event_id; /* its hold's event, or NULL when no event has the hold */
    const char *order_id; /* the cancelled order of an order_cancelled refund, or NULL */
} hf_stored_refund_t;

/* A delivery as stored: its outcome names its order or refund by id. */
typedef struct hf_stored_delivery {
    const char *payment_intent_id;
    uint8_t type, result, reason;
    bool late;
    const char *order_id, *refund_id; /* NULL unless the result has one */
    hf_time_ms_t at_ms;
} hf_stored_delivery_t;

/* After orders: refunds oldest first, then deliveries oldest first (those younger than
 * HF_WEBHOOK_DEDUP_KEEP_MS; now_ms prunes any older ones). */
hf_error_t hf_core_restore_refund(hf_core_t *core, const hf_stored_refund_t *refund);
hf_error_t hf_core_restore_delivery(hf_core_t *core, const hf_stored_delivery_t *delivery);
/* After the rows of a load (every unit, or one): what waited for rows that did not come
 * settles (an exchange hold whose old order is another unit's takes its seats). */
void hf_core_restore_finish(hf_core_t *core);
/* Restoring holds and orders also restores the seats' versions (each status change they made
 * counts one). This sets a seat's version outright, for data kept elsewhere; the status is
 * always derived from holds and orders. */
hf_error_t hf_core_restore_seat(hf_core_t *core, const char *event_id, const char *seat_id,
                                uint32_t version);

/* ---- Forgetting finished holds ----
 *
 * Released and expired holds stay answerable (GET, a repeated release) but change nothing any
 * more. The core keeps the most recent ones, at most finished_max (HF_FINISHED_HOLDS_MAX by
 * default), and forgets older ones, reusing their slots: memory stays bounded however many
 * holds a server makes. A forgotten hold is still in the store, which hands it back through
 * hf_core_revive_hold when a request names it. Held and confirmed holds are never forgotten.
 *
 * Only a hold whose finishing the store already has may be forgotten, or the store would hand
 * back an older state. Every mutation record the core emits is numbered; the caller passes the
 * number of the last record the store has made durable. */

/* How many mutation records the core has emitted so far. */
uint64_t hf_core_change_count(const hf_core_t *core);
/* The number (as hf_core_change_count counts) of the newest record of the hold or order at
 * index: its creation, an extension, its end, its commit or its cancellation. Once the store
 * has every record up to it, an answer that shows the hold or order as the core has it now
 * tells nothing the store lacks. 0 for one restored or revived from the store. */
uint64_t hf_core_hold_change(const hf_core_t *core, uint32_t index);
/* The same for one seat as a read shows it (status, version): its last change, or the
 * event's creation when that is newer. */
uint64_t hf_core_seat_change(const hf_event_t *event, uint32_t seat_index);
uint64_t hf_core_order_change(const hf_core_t *core, uint32_t index);
void hf_core_set_finished_max(hf_core_t *core, uint32_t finished_max);
/* Forgets the oldest finished holds (in the order they finished) while more than finished_max
 * are kept, among those whose finishing record is numbered at most durable_changes. Returns
 * the number forgotten. Indexes of forgotten holds are invalid afterwards: call it between
 * commands, never while holding an index. */
uint32_t hf_core_evict(hf_core_t *core, uint64_t durable_changes);
/* Released and expired holds kept in memory. */
uint32_t hf_core_holds_finished(const hf_core_t *core);
/* Takes back a forgotten hold as the store has it: status released or expired only (anything
 * else is HF_ERROR_INVALID_REQUEST), and its id must not be known. Seats, versions and counts
 * do not change; the hold counts as the most recently finished one. *index is its new index. */
hf_error_t hf_core_revive_hold(hf_core_t *core, const hf_stored_hold_t *hold, uint32_t *index);

/* ---- Lookups ---- */

/* The event's waitlist setting (API.md section 2's "waitlist"): off by default. */
hf_error_t hf_core_waitlist_configure(hf_core_t *core, const char *event_id, bool enabled,
                                      int64_t offer_ttl_ms);
/* Joins, or finds the user's entry while it waits or is offered (*existing true). Errors:
 * EVENT_NOT_FOUND, WAITLIST_DISABLED, SECTION_NOT_FOUND, POOL_NOT_FOUND, INVALID_REQUEST
 * (quantity outside 1 to max_seats_per_hold, or both section and pool), CAPACITY (the event
 * has HF_WAITLIST_ENTRIES_MAX entries). */
hf_error_t hf_core_waitlist_join(hf_core_t *core, const hf_waitlist_request_t *request,
                                 hf_time_ms_t now, hf_waitlist_view_t *view, bool *existing);
hf_error_t hf_core_waitlist_get(hf_core_t *core, const char *event_id, const char *waitlist_id,
                                hf_waitlist_view_t *view);
/* Cancels a waiting or offered entry (an offer's hold is released, its inventory goes down
 * the line); a done entry answers as it is. NOT_OWNER when user_id is not the entry's. */
hf_error_t hf_core_waitlist_cancel(hf_core_t *core, const char *event_id, const char *waitlist_id,
                                   const char *user_id, hf_time_ms_t now, hf_waitlist_view_t *view);
/* The event's entries after join number after (-1: from the first), oldest first, of status
 * (or any with status_filter false), at most limit of them into views; *more tells whether
 * another follows. Returns how many were written. */
uint32_t hf_core_waitlist_list(hf_core_t *core, const char *event_id, bool status_filter,
                               uint8_t status, int64_t after, uint32_t limit,
                               hf_waitlist_view_t *views, bool *more);
/* A waitlist entry as the store kept it (its last WAITLIST record), loaded after the holds: an
 * offered entry's hold is held in the core. sequence is its join number, so positions come
 * back the same. */
typedef struct hf_stored_waitlist {
    const char *waitlist_id, *event_id, *user_id, *section, *pool, *hold_id;
    uint32_t quantity, sequence;
    uint8_t status;
    hf_time_ms_t joined_at_ms, changed_at_ms;
} hf_stored_waitlist_t;
hf_error_t hf_core_restore_waitlist(hf_core_t *core, const hf_stored_waitlist_t *stored);
/* The waitlist id of a hold that is (or was) an entry's offer, else NULL. */
const char *hf_core_hold_waitlist_id(const hf_core_t *core, uint32_t hold_index);
const char *hf_waitlist_status_name(uint8_t status);
/* Entries by status (hf_waitlist_status_t) over every event, for holdfast_waitlist{status};
 * false in a core that never had a waitlist (the family is then left out). */
bool hf_core_waitlist_counts(const hf_core_t *core, uint64_t counts[HF_WAITLIST_CANCELLED + 1]);
/* The event's waitlist setting as it stands (off, 600 s, for an event that never had one). */
hf_waitlist_setting_t hf_core_waitlist_setting(const hf_core_t *core, const char *event_id);

/* Event slots: hf_core_event_at gives the event of a slot, NULL for a slot a deleted event
 * left (a later event may take it). Holds, orders and tickets name events by slot. */
uint32_t hf_core_event_count(const hf_core_t *core);
const hf_event_t *hf_core_event_at(const hf_core_t *core, uint32_t index);
/* The live events' slots in creation order; *count set (at most HF_EVENTS_MAX). */
const uint32_t *hf_core_events_listed(const hf_core_t *core, uint32_t *count);
const hf_event_t *hf_core_event(const hf_core_t *core, const char *event_id, uint32_t *index);
/* Whether id is a client-chosen id of API.md: [A-Za-z0-9_.]{1,64}. */
bool hf_core_id_valid(const char *id);
/* Seat index of "SECTION-ROW-NUMBER", in O(1); false when there is no such seat. */
bool hf_core_seat_find(const hf_event_t *event, const char *seat_id, uint32_t *seat_index);
/* Writes the seat's id into out (HF_SEAT_ID_SIZE_MAX + 1 bytes). */
void hf_core_seat_id(const hf_event_t *event, uint32_t seat_index, char *out);
/* Row and number of a seat. */
uint32_t hf_core_seat_row(const hf_event_t *event, uint32_t seat_index);
int32_t hf_core_pool_find(const hf_event_t *event, const char *pool_id); /* -1: none */

/* NULL for an unknown or forgotten hold. */
const hf_hold_t *hf_core_hold_find(const hf_core_t *core, const char *hold_id, uint32_t *index);
const hf_hold_t *hf_core_hold_at(const hf_core_t *core, uint32_t index);
const hf_order_t *hf_core_order_find(const hf_core_t *core, const char *order_id, uint32_t *index);
const hf_order_t *hf_core_order_at(const hf_core_t *core, uint32_t index);
const hf_item_t *hf_core_items(const hf_core_t *core, uint32_t item_offset);
const char *hf_core_user_id(const hf_core_t *core, uint32_t user_index);
const char *hf_core_string(const hf_core_t *core, uint32_t offset);
/* Orders of an event (indexes for hf_core_order_at), oldest first; *count set. Orders are
 * never forgotten, so this is every order the event ever had. NULL when it has none. */
const uint32_t *hf_core_event_orders(const hf_core_t *core, uint32_t event_index, uint32_t *count);
/* Orders of a user, oldest first, all events; *count set. NULL when the user is unknown. */
const uint32_t *hf_core_user_orders(const hf_core_t *core, const char *user_id, uint32_t *count);
uint32_t hf_core_holds_active(const hf_core_t *core);

/* Consistency check for tests: counts match statuses, owners point back, pool sums hold,
 * no held hold has lapsed at now. Returns NULL or a static description of the first fault. */
const char *hf_core_check(const hf_core_t *core, hf_time_ms_t now);

/* Allocations (API.md section 14): part of this interface, after the types it uses. */
#include "core/allocations.h"

#endif
