/* Records: what the core tells the store, and the live streams, after each change. One struct
 * per kind, in a tagged union: a record carries the fields of its kind and nothing else. The
 * kinds are declared once, in HF_RECORD_KINDS below; the store's table of record kinds
 * (store/records.h) and each backend's table of writes are made from that list.
 *
 * A record's pointers are borrowed and valid only during the sink call: a sink that keeps a
 * record copies it (hf_batch_append in store/store.h does, deeply). The core writes no JSON:
 * how a record is kept (tables, columns, the JSON of a definition or of items) is the
 * store's business (store/rows.h). */
#ifndef HF_MUTATION_H
#define HF_MUTATION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/definition.h"

/* The kinds of record, declared once: X(KIND, value, name, member) for each, where
 * HF_MUTATION_KIND is the kind's constant and value its number (a domain's kinds numbered together,
 * with room after them), name the kind in lower case (what the store's
 * functions of one kind are named after, store/records.h) and member the union member of
 * hf_mutation_t that carries its fields (two kinds may share one). A kind added here needs
 * its row in the store's table of records (store/records.c) and in each backend's table of
 * writes, or the build fails. */
#define HF_RECORD_KINDS(X) \
    X(EVENT_CREATE, 1, event_create, event_create) \
    /* live streams only: the store derives seats from holds and orders */ \
    X(SEAT, 2, seat, seat) \
    X(HOLD_CREATE, 3, hold_create, hold_create) \
    X(HOLD_UPDATE, 4, hold_update, hold_update) \
    X(ORDER_CREATE, 5, order_create, order_create) \
    X(ORDER_ITEM, 6, order_item, order_item) \
    X(ORDER_UPDATE, 7, order_update, order_update) \
    X(IDEMPOTENCY, 8, idempotency, idempotency) \
    X(POOL, 9, pool, pool)                       /* live streams only, like seats */ \
    X(EVENT_SALES, 10, event_sales, event_sales) /* an event's sales closed or reopened */ \
    X(DELIVERY, 11, delivery, delivery)         /* a payment webhook's delivery and its outcome */ \
    X(REFUND, 12, refund, refund)               /* a refund as it stands (new, or completed) */ \
    X(TICKET_CREATE, 13, ticket_create, ticket) /* a waiting room's new ticket (queue.h) */ \
    /* a ticket's new status: admitted, completed, expired... */ \
    X(TICKET_UPDATE, 14, ticket_update, ticket) \
    X(EVENT_UPDATE, 15, event_update, event_update) /* an event changed while it sells */ \
    X(EVENT_DELETE, 16, event_delete, event_delete) /* an event that never sold, deleted */ \
    X(DRIVER, 20, driver, driver) /* a driver as it stands (dispatch: soft, flushed) */ \
    X(RIDE, 21, ride, ride)       /* a ride as it stands, with its offer (dispatch) */ \
    X(CALENDAR_CREATE, 30, calendar_create, calendar_create) /* a calendar's definition */ \
    /* resources appended to a calendar */ \
    X(CALENDAR_RESOURCES, 31, calendar_resources, calendar_resources) \
    X(CALENDAR_SALES, 32, calendar_sales, calendar_sales) /* a calendar's sales switched */ \
    /* live streams only, like seats: the store derives the spans from holds and orders */ \
    X(CALENDAR_CHANGE, 33, calendar_change, calendar_change) \
    /* a notification's delivery state (engine/outbox.h): the columns of its history entry */ \
    X(NOTIFY, 40, notify, notify) \
    /* an event cancelled for good and its cancel job made, in one step (core/jobs.h) */ \
    X(EVENT_CANCEL, 50, event_cancel, job) \
    X(JOB, 51, job, job)                   /* a cancel job as it stands after a step */ \
    X(JOB_OFFER, 52, job_offer, job_offer) /* what a job did with one order */ \
    /* an allocation as it stands (API.md section 14): set aside, released, or settled */ \
    X(ALLOCATION, 60, allocation, allocation) \
    /* a waitlist entry as it stands (API.md section 14, core/waitlist/) */ \
    X(WAITLIST, 70, waitlist, waitlist) \
    /* an order locked by an exchange hold of another unit, or its lock ended (core/locks.h) */ \
    X(ORDER_LOCK, 80, order_lock, order_lock)

#define HF_RECORD_KIND_CONSTANT_(KIND, value, name, member) HF_MUTATION_##KIND = (value),
typedef enum hf_mutation_type { HF_RECORD_KINDS(HF_RECORD_KIND_CONSTANT_) } hf_mutation_type_t;

/* One more than the largest kind's number: the length of a table indexed by kind. (The size
 * of a union of one char array per kind, each one longer than its kind's number.) */
#define HF_RECORD_KIND_SLOT_(KIND, value, name, member) char slot_##name[(value) + 1];
#define HF_RECORD_KIND_LIMIT (sizeof(union {HF_RECORD_KINDS(HF_RECORD_KIND_SLOT_)}))
/* How many kinds the list has: a term "+1" per kind (in parentheses the terms would not add
 * up, hence the NOLINT). */
#define HF_RECORD_KIND_ONE_(KIND, value, name, member) +1 /* NOLINT(bugprone-macro-parentheses) */
#define HF_RECORD_KIND_COUNT (0 HF_RECORD_KINDS(HF_RECORD_KIND_ONE_))

/* One line of a hold or an order: a seat (quantity 0) or a pool's units (quantity >= 1). */
typedef struct hf_mutation_item {
    const char *id;
    uint32_t quantity;
} hf_mutation_item_t;

/* A hold's or order's lines: its seats first, then its pool lines. */
typedef struct hf_mutation_items {
    const hf_mutation_item_t *lines;
    uint32_t seat_count, pool_count;
    /* The allocation whose inventory the hold or order took (API.md section 14), else NULL. */
    const char *allocation;
} hf_mutation_items_t;

/* One item of a calendar hold or order (core/calendars.h): a quantity of a resource over the
 * steps [from, to), and its total. */
typedef struct hf_mutation_use {
    const char *resource_id;
    int32_t from, to;
    uint32_t quantity;
    int64_t total;
} hf_mutation_use_t;

/* A calendar hold's or order's items, and the calendar's unit (hf_calendar_unit_t), which
 * tells how its steps read as dates or instants. */
typedef struct hf_mutation_uses {
    const hf_mutation_use_t *lines;
    uint32_t count;
    uint8_t unit;
} hf_mutation_uses_t;

typedef struct hf_mutation_event_create {
    const char *event_id;
    const hf_event_definition_t *definition;
} hf_mutation_event_create_t;

typedef struct hf_mutation_event_sales {
    const char *event_id;
    bool sales_open; /* the state after the change */
} hf_mutation_event_sales_t;

/* An event changed (hf_core_event_update): the store rewrites its definition whole and
 * tells what changed in the event's history. changes is a patch (definition.h) holding only
 * what changed: the members named in the mask, the sections and pools changed or added (a
 * price or capacity HF_UNCHANGED when it stayed, rows the appended ones only). */
typedef struct hf_mutation_event_update {
    const char *event_id;
    const hf_event_definition_t *definition; /* the event whole, after the change */
    const hf_event_definition_t *changes;
    uint32_t members; /* hf_event_member_t bits of what changed */
} hf_mutation_event_update_t;

/* An event deleted (hf_core_event_delete): it never had a hold or an order, so its row and
 * its history go, and its id is free again. */
typedef struct hf_mutation_event_delete {
    const char *event_id;
} hf_mutation_event_delete_t;

typedef struct hf_mutation_seat {
    const char *event_id, *seat_id;
    int status; /* hf_seat_status_t */
    uint32_t version;
    /* The seat's index in its event (hf_core_seat_id): a stream keeps the change this small
     * in its replay window (engine/replay.h) rather than the id written out. */
    uint32_t seat_index;
} hf_mutation_seat_t;

typedef struct hf_mutation_pool {
    const char *event_id, *pool_id;
    int64_t available, held, sold; /* the pool's counts after the change */
    uint32_t pool_index;           /* in its event's pools, as seat_index */
} hf_mutation_pool_t;

typedef struct hf_mutation_hold_create {
    const char *hold_id, *event_id, *user_id;
    hf_mutation_items_t items;
    int64_t total, expires_at_ms; /* created at the record's at_ms */
    int status;                   /* hf_hold_status_t */
    /* hf_target_t. A calendar's hold names the calendar as event_id (its unit), has no
     * items and carries its uses. */
    uint8_t target;
    hf_mutation_uses_t uses;
    const char *exchange_for; /* an exchange hold's old order (API.md section 13), else NULL */
} hf_mutation_hold_create_t;

typedef struct hf_mutation_hold_update {
    const char *hold_id, *event_id;
    const char *user_id;  /* who asked for the change; NULL for an expiry or a payment */
    const char *order_id; /* once confirmed, else NULL */
    int64_t expires_at_ms;
    int status;
    uint8_t target; /* hf_target_t: event_id is then the calendar's id */
} hf_mutation_hold_update_t;

typedef struct hf_mutation_order_create {
    const char *order_id, *event_id, *user_id;
    const char *hold_id; /* NULL for a booking */
    const char *currency, *payment_ref;
    hf_mutation_items_t items;
    int64_t total; /* created at the record's at_ms */
    int status;    /* hf_order_status_t */
    /* hf_target_t, as a hold's: a calendar's order carries its uses and makes no
     * HF_MUTATION_ORDER_ITEM records. */
    uint8_t target;
    hf_mutation_uses_t uses;
    /* The order an exchange's new order replaces (its history entry is then an exchange),
     * else NULL. */
    const char *replaces;
} hf_mutation_order_create_t;

/* One row of order_items: a seat (seat_id) or a pool line (pool_id, quantity). */
typedef struct hf_mutation_order_item {
    const char *order_id, *event_id;
    const char *seat_id, *pool_id; /* exactly one is set */
    uint32_t quantity;
} hf_mutation_order_item_t;

typedef struct hf_mutation_order_update {
    const char *order_id, *event_id, *user_id;
    int status;
    /* The refund a paid order's cancel owes (its own record comes first), else NULL. */
    const char *refund_id;
    uint8_t target; /* hf_target_t: event_id is then the calendar's id */
    /* Status exchanged: the order that replaced it, and whether that order is in another unit
     * (the old unit's history then tells the exchange too); else NULL and false. */
    const char *replaced_by;
    bool replaced_elsewhere;
} hf_mutation_order_update_t;

/* A stored answer to a request with an Idempotency-Key (API.md section 1). */
typedef struct hf_mutation_idempotency {
    const char *key;     /* the scope: method, path and key */
    const char *body;    /* the answer's body */
    const uint8_t *hash; /* SHA-256 of the request body, 32 bytes */
    int status;          /* the answer's HTTP status */
    /* The unit (event, fleet) of the request that used the key, whose batch writes it and
     * whose load reads it back with several nodes; NULL for a request about none. */
    const char *unit;
} hf_mutation_idempotency_t;

/* A payment delivery (API.md section 7), kept for deduplication on (payment_intent_id,
 * type): its outcome, naming the order or refund it made or found. Received at at_ms. */
typedef struct hf_mutation_delivery {
    const char *payment_intent_id;
    const char *event_id; /* the provider's id of the delivery */
    const char *reservation_id;
    int64_t amount;
    int type;   /* hf_payment_type_t */
    int result; /* hf_payment_result_t */
    int reason; /* hf_refund_reason_t, with a refund */
    bool late;
    const char *order_id;  /* with a commit, else NULL */
    const char *refund_id; /* with a refund, else NULL */
    /* The event of the hold it names, whose audit history tells the payment; NULL when the
     * hold is unknown. */
    const char *hold_event_id;
} hf_mutation_delivery_t;

/* A refund whole, as it stands after the change: the store inserts it, or updates its
 * status. */
typedef struct hf_mutation_refund {
    const char *refund_id, *payment_intent_id;
    const char *reservation_id; /* NULL for the refund of a cancelled booking */
    int64_t amount;
    int reason; /* hf_refund_reason_t */
    int status; /* hf_refund_status_t */
    int64_t created_at_ms;
    /* The event of the hold or order it refunds (its unit with several nodes); NULL when no
     * event has the hold. */
    const char *event_id;
    const char *order_id; /* the cancelled order it refunds (order_cancelled), or NULL */
} hf_mutation_refund_t;

/* A waiting room's ticket as it stands after the change (both ticket kinds): a new one at
 * its join (at_ms), or its new status. seq is set for both; user_id for a join only (NULL in
 * a change of status: no writer stores it again, so the batch keeps no copy of it). */
typedef struct hf_mutation_ticket {
    const char *ticket_id, *event_id, *user_id;
    uint32_t seq;           /* join number in the room */
    int status;             /* hf_ticket_status_t */
    int64_t admitted_at_ms; /* 0 until admitted */
} hf_mutation_ticket_t;
/* A driver whole (API.md section 8): the store upserts it. Location updates are soft: the
 * core emits these at most once a second per driver (hf_dispatch_flush), and with a change
 * that concerns a ride (an offer, an assignment, a driver freed by a cancel). */
typedef struct hf_mutation_driver {
    const char *fleet_id, *driver_id;
    double lat, lng, rating;
    bool available;
    bool deleted; /* DELETE of the driver: the store deletes its row */
} hf_mutation_driver_t;

/* A ride whole, as it stands after the change: the store upserts it. declined and lapsed are
 * the drivers never offered it again, their ids separated by single spaces ("" for none). */
typedef struct hf_mutation_ride {
    const char *ride_id, *fleet_id, *rider_id;
    double lat, lng;
    int64_t radius_m, offer_ttl_ms, created_at_ms;
    int status;                  /* hf_ride_status_t */
    const char *offer_driver_id; /* with an offer, else NULL */
    int64_t offer_distance_m, offer_expires_at_ms;
    const char *driver_id; /* once assigned, else NULL */
    const char *declined, *lapsed;
} hf_mutation_ride_t;

/* The delivery of one notification (API.md section 15), the history entry (unit, seq) told to
 * the platform: its state after an attempt, a drop or a retry by hand. Not the core's: the
 * engine's outbox (engine/outbox.h) appends it to the open batch, so it is fenced on the unit
 * like the entry's own change. */
typedef struct hf_mutation_notify {
    const char *unit; /* the event (or calendar) whose history holds the entry */
    int64_t seq;
    int status;              /* hf_notify_status_t of engine/outbox.h: 0 pending, 1, 2 */
    uint32_t attempts;       /* every try, the successful one included */
    int last_status;         /* the receiver's HTTP status, 0 when none came */
    const char *last_error;  /* why, when none came or it was no 2xx; NULL else */
    int64_t next_attempt_ms; /* when a pending one is due again */
} hf_mutation_notify_t;

/* A cancel job whole (core/jobs.h): made with its event's cancel (EVENT_CANCEL, whose event
 * is then cancelled), or as it stands after a step (JOB): cursor is how many of the event's
 * orders, oldest first, it went through. */
typedef struct hf_mutation_job {
    const char *job_id, *event_id;
    const char *rebook_to; /* NULL for none */
    int64_t offer_ttl_ms, created_at_ms;
    uint32_t orders, cursor, offered, accepted, refunded;
    int status;    /* hf_job_status_t */
    bool finished; /* the step that went through the job's last order (its job_done) */
} hf_mutation_job_t;

/* What a job did with one order of its event (unique per job and order). */
typedef struct hf_mutation_job_offer {
    const char *job_id, *event_id, *order_id, *user_id;
    const char *reservation_id; /* the offer's exchange hold, NULL when refunded at once */
    int status;                 /* hf_job_offer_status_t */
    int64_t expires_at_ms;      /* the offer's, 0 without one */
} hf_mutation_job_offer_t;

/* A waitlist entry as it stands (core/waitlist/): made waiting, then offered (hold_id its
 * offer), fulfilled, lapsed or cancelled. sequence is its join number in the event, which
 * restore keeps, so positions come back the same. */
typedef struct hf_mutation_waitlist {
    const char *waitlist_id, *event_id, *user_id;
    const char *section, *pool; /* NULL when not named (both: any section) */
    const char *hold_id;        /* the offer's hold, NULL before an offer */
    uint32_t quantity, sequence;
    uint8_t status; /* hf_waitlist_status_t */
    int64_t joined_at_ms;
} hf_mutation_waitlist_t;

struct hf_calendar_definition;
struct hf_resource_definition;

/* A new calendar (core/calendars.h), its definition whole (resources included). */
typedef struct hf_mutation_calendar_create {
    const char *calendar_id;
    const struct hf_calendar_definition *definition;
} hf_mutation_calendar_create_t;

/* Resources appended to a calendar: count of them, the first at index first. */
typedef struct hf_mutation_calendar_resources {
    const char *calendar_id;
    const struct hf_resource_definition *resources;
    uint32_t first, count;
} hf_mutation_calendar_resources_t;

typedef struct hf_mutation_calendar_sales {
    const char *calendar_id;
    bool sales_open; /* the state after the change */
} hf_mutation_calendar_sales_t;

/* A use taken (delta negative: the free quantity fell) or given back (positive) over the
 * steps [from, to) of a resource (live streams only). */
typedef struct hf_mutation_calendar_change {
    const char *calendar_id, *resource_id;
    uint32_t resource; /* index in the calendar's resources */
    int32_t from, to;
    int64_t delta;
} hf_mutation_calendar_change_t;

/* An allocation whole, as it stands after the change (API.md section 14): the store upserts
 * it. Its seats with their released flag (held or sold, given to the public once they come
 * free), its pools' units (free, held and sold together) and how many of those are released
 * once they come free. change says what happened, for the event's history. */
typedef enum hf_allocation_change {
    HF_ALLOCATION_CREATED = 0,
    HF_ALLOCATION_RELEASED = 1,
    /* A released held or sold item came free and left the allocation: no history entry of
     * its own (the hold's release or the order's cancel tells it). */
    HF_ALLOCATION_SETTLED = 2,
} hf_allocation_change_t;

typedef struct hf_mutation_allocation_seat {
    const char *seat_id;
    bool released;
} hf_mutation_allocation_seat_t;

/* A seat that left the allocation, and the changes of its version the allocation made: 2 when
 * it was released free (set aside, then released), 1 when it came free after its release
 * (set aside; its hold or order counts the rest). Restore adds them: versions are counted,
 * not stored, and never go back. */
typedef struct hf_mutation_allocation_left {
    const char *seat_id;
    uint32_t changes;
} hf_mutation_allocation_left_t;

typedef struct hf_mutation_allocation_pool {
    const char *pool_id;
    int64_t units, release_pending;
} hf_mutation_allocation_pool_t;

typedef struct hf_mutation_allocation {
    const char *event_id, *allocation_id;
    const hf_mutation_allocation_seat_t *seats;
    uint32_t seat_count;
    const hf_mutation_allocation_left_t *left;
    uint32_t left_count;
    const hf_mutation_allocation_pool_t *pools;
    uint32_t pool_count;
    int64_t created_at_ms;
    int change; /* hf_allocation_change_t */
} hf_mutation_allocation_t;

/* An order's lock by an exchange hold of another unit (core/locks.h, docs/DESIGN.md "Exchanges
 * across two owners"): locked, the store keeps one row per locked order; not locked, the row
 * goes. */
typedef struct hf_mutation_order_lock {
    const char *order_id, *event_id; /* event_id: the order's unit (a calendar's id too) */
    const char *hold_id, *hold_unit; /* the exchange hold and its unit */
    bool locked;
} hf_mutation_order_lock_t;

typedef struct hf_mutation {
    hf_mutation_type_t type;
    int64_t at_ms; /* when the change happened */
    union {
        hf_mutation_event_create_t event_create;
        hf_mutation_event_sales_t event_sales;
        hf_mutation_event_update_t event_update;
        hf_mutation_event_delete_t event_delete;
        hf_mutation_seat_t seat;
        hf_mutation_pool_t pool;
        hf_mutation_hold_create_t hold_create;
        hf_mutation_hold_update_t hold_update;
        hf_mutation_order_create_t order_create;
        hf_mutation_order_item_t order_item;
        hf_mutation_order_update_t order_update;
        hf_mutation_idempotency_t idempotency;
        hf_mutation_delivery_t delivery;
        hf_mutation_refund_t refund;
        hf_mutation_ticket_t ticket;
        hf_mutation_driver_t driver;
        hf_mutation_ride_t ride;
        hf_mutation_notify_t notify;
        hf_mutation_waitlist_t waitlist;
        hf_mutation_calendar_create_t calendar_create;
        hf_mutation_calendar_resources_t calendar_resources;
        hf_mutation_calendar_sales_t calendar_sales;
        hf_mutation_calendar_change_t calendar_change;
        hf_mutation_allocation_t allocation;
        hf_mutation_job_t job;
        hf_mutation_job_offer_t job_offer;
        hf_mutation_order_lock_t order_lock;
    } as;
} hf_mutation_t;

typedef struct hf_mutation_sink {
    void (*emit)(void *context, const hf_mutation_t *mutation);
    void *context;
} hf_mutation_sink_t;

#endif
