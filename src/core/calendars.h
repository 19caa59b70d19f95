/* Calendars (API.md section 12): time as inventory. A calendar holds resources, each with a
 * capacity; a use takes a quantity of one resource over a half-open span [from, to) of steps.
 * This is the core's public interface of the domain (core.h includes it); its state and
 * commands live in src/core/calendar/.
 *
 * Steps. A night calendar counts days since 1970-01-01 (2026-12-24 is one step, a stay's `to`
 * its check-out date); a minute calendar counts minutes since the Unix epoch, and its spans
 * sit on whole multiples of granularity_min. The API layer turns dates and RFC 3339 instants
 * into steps and back (api/), the core checks everything else (alignment, lengths, the past,
 * the horizon, buffers, capacity).
 *
 * Holds and orders on a calendar are the core's ordinary holds and orders (hf_hold_t,
 * hf_order_t with target HF_TARGET_CALENDAR): extend, release, commit, cancel, expiry,
 * payments, the per-user limit, forgetting and reviving all go through the same commands
 * (hf_core_extend, hf_core_release, hf_core_commit, hf_core_cancel, hf_core_payment, ...).
 * Their `event` member is then the calendar's index (hf_core_calendar_at), their items are
 * read with hf_core_calendar_items, and pool_count is the number of those items (seat_count
 * is 0). */
#ifndef HF_CORE_CALENDARS_H
#define HF_CORE_CALENDARS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/limits.h"

/* What a hold or an order is on: an event's seats and pools, or a calendar's resources. */
typedef enum hf_target {
    HF_TARGET_EVENT = 0,
    HF_TARGET_CALENDAR = 1,
} hf_target_t;

typedef enum hf_calendar_unit {
    HF_CALENDAR_NIGHT = 0,
    HF_CALENDAR_MINUTE = 1,
} hf_calendar_unit_t;

/* "night", "minute"; the parse is false for any other text. */
const char *hf_calendar_unit_name(uint8_t unit);
bool hf_calendar_unit_parse(const char *text, uint8_t *unit);

/* A resource as defined (POST /v1/calendars, /resources): complete, defaults filled in by
 * the decoder (capacity 1, price 0, min_length 1, max_length the horizon in the unit, buffers
 * 0). Lengths are in nights or minutes, buffers in minutes (minute calendars only: 0 for
 * night calendars). */
typedef struct hf_resource_definition {
    char id[HF_ID_SIZE_MAX + 1];
    char name[HF_NAME_SIZE_MAX + 1]; /* "" for none */
    int64_t capacity;                /* 1..HF_RESOURCE_CAPACITY_MAX */
    int64_t price;                   /* per night, or per granularity step */
    int64_t min_length, max_length;
    int64_t buffer_before_min, buffer_after_min;
} hf_resource_definition_t;

/* A calendar as defined: complete, defaults filled in by the decoder (currency "USD",
 * hold_ttl_ms 600 s, max_hold_ms 3 x hold_ttl, horizon_days 365, granularity_min 15 for minute
 * calendars and 1440 for night ones, max_items_per_hold 10, max_uses_per_user 0 = none). The
 * arrays belong to whoever made the definition. */
typedef struct hf_calendar_definition {
    char id[HF_ID_SIZE_MAX + 1];
    char name[HF_NAME_SIZE_MAX + 1];
    char currency[HF_CURRENCY_SIZE_MAX + 1];
    uint8_t unit; /* hf_calendar_unit_t */
    uint32_t granularity_min;
    int64_t hold_ttl_ms, max_hold_ms;
    uint32_t horizon_days;
    uint32_t max_items_per_hold;
    uint32_t max_uses_per_user;
    uint32_t resource_count;
    const hf_resource_definition_t *resources;
} hf_calendar_definition_t;

/* A calendar as the core keeps it (read-only views). */
typedef struct hf_calendar {
    hf_calendar_definition_t definition; /* resources: the calendar's own array, all of them */
    hf_time_ms_t created_at_ms;
    bool sales_open;
    uint32_t holds_active; /* held holds on it */
    uint32_t orders;       /* confirmed orders on it */
    void *internal;        /* the span indexes and lookup tables, private to the core */
} hf_calendar_t;

/* One item of a calendar hold or order, as asked and as kept. */
typedef struct hf_calendar_item {
    uint32_t resource; /* index into the calendar's resources */
    uint32_t quantity; /* 1..capacity */
    int32_t from, to;  /* steps, from < to */
    int64_t total;     /* price x length in nights or steps x quantity (set by the core) */
} hf_calendar_item_t;

/* One item of a request, by the resource's id. */
typedef struct hf_calendar_item_request {
    const char *resource_id;
    uint32_t quantity; /* 0: 1 */
    int32_t from, to;
} hf_calendar_item_request_t;

/* A maximal sub-span where less than the asked quantity is free (409 range_unavailable), within
 * an asked span widened by its buffers: item names the request's item, available the least
 * free quantity in it. */
typedef struct hf_calendar_conflict {
    uint32_t item;
    int32_t from, to;
    int64_t available;
} hf_calendar_conflict_t;

typedef struct hf_calendar_hold_request {
    const char *calendar_id, *user_id;
    const char *hold_id; /* "res_...", made by the caller */
    const hf_calendar_item_request_t *items;
    uint32_t item_count;
    int64_t ttl_ms; /* < 0: the calendar's hold_ttl */
    bool replace_existing;
    /* An exchange hold (API.md section 13): the id of the confirmed order of user_id it would
     * replace, whose own spans count as free for it; NULL for an ordinary hold. */
    const char *exchange_for;
    /* Out, with HF_ERROR_RANGE_UNAVAILABLE: up to conflict_max conflicts in item order. */
    hf_calendar_conflict_t *conflicts;
    uint32_t conflict_max, conflict_count;
} hf_calendar_hold_request_t;

typedef struct hf_core hf_core_t;

/* HF_ERROR_CALENDAR_EXISTS, HF_ERROR_INVALID_REQUEST (detail: "resources" index member), or
 * HF_ERROR_CAPACITY past HF_CALENDARS_MAX. Emits HF_MUTATION_CALENDAR_CREATE. */
hf_error_t hf_core_calendar_create(hf_core_t *core, const hf_calendar_definition_t *definition,
                                   int64_t now, hf_error_detail_t *detail);
/* Appends resources (POST /v1/calendars/{cal}/resources): HF_ERROR_RESOURCE_EXISTS (detail
 * index: the new resource at fault), HF_ERROR_CALENDAR_NOT_FOUND, HF_ERROR_INVALID_REQUEST,
 * HF_ERROR_CAPACITY past HF_CALENDAR_RESOURCES_MAX. All or nothing. Emits
 * HF_MUTATION_CALENDAR_RESOURCES. */
hf_error_t hf_core_calendar_add_resources(hf_core_t *core, const char *calendar_id,
                                          const hf_resource_definition_t *resources, uint32_t count,
                                          int64_t now, hf_error_detail_t *detail);
/* As hf_core_sales_set for events: HF_MUTATION_CALENDAR_SALES when it changes. */
hf_error_t hf_core_calendar_sales_set(hf_core_t *core, const char *calendar_id, bool open,
                                      int64_t now);
/* A hold on a calendar: all or nothing over its items. Errors: HF_ERROR_CALENDAR_NOT_FOUND,
 * HF_ERROR_SALES_CLOSED, HF_ERROR_RESOURCE_NOT_FOUND (detail.index: the item),
 * HF_ERROR_INVALID_REQUEST (detail "items"[i] member "from", "to", "quantity" or none for an
 * item overlapping another of the hold; HF_FAULT_HOLD_ITEMS past max_items_per_hold,
 * HF_FAULT_NO_ITEMS for none, HF_FAULT_HOLD_TTL), HF_ERROR_RANGE_UNAVAILABLE (the request's
 * conflicts), HF_ERROR_USER_LIMIT_EXCEEDED (limit, current, requested in quantities),
 * HF_ERROR_CAPACITY. Emits the hold's records (HF_MUTATION_HOLD_CREATE with calendar items)
 * and a HF_MUTATION_CALENDAR_CHANGE per item. */
hf_error_t hf_core_calendar_hold(hf_core_t *core, hf_calendar_hold_request_t *request, int64_t now,
                                 uint32_t *hold_index, hf_error_detail_t *detail);
/* An order without a hold (POST /v1/calendars/{cal}/bookings): the checks of a hold; ttl_ms
 * and replace_existing are ignored. */
hf_error_t hf_core_calendar_book(hf_core_t *core, hf_calendar_hold_request_t *request,
                                 const char *order_id, const char *payment_ref, int64_t now,
                                 uint32_t *order_index, hf_error_detail_t *detail);

/* Lookups. Calendars are never deleted: indexes only grow. */
uint32_t hf_core_calendar_count(const hf_core_t *core);
const hf_calendar_t *hf_core_calendar_at(const hf_core_t *core, uint32_t index);
const hf_calendar_t *hf_core_calendar(const hf_core_t *core, const char *calendar_id,
                                      uint32_t *index);
/* -1: none. O(1). */
int32_t hf_core_resource_find(const hf_calendar_t *calendar, const char *resource_id);
/* The items of a calendar hold or order (hold->item_offset, order->item_offset). */
const hf_calendar_item_t *hf_core_calendar_items(const hf_core_t *core, uint32_t item_offset);
/* Orders of a calendar, oldest first (as hf_core_event_orders). */
const uint32_t *hf_core_calendar_orders(const hf_core_t *core, uint32_t calendar_index,
                                        uint32_t *count);
/* Held holds of a calendar are found through hf_core_holds_active's list: the API's staff
 * list walks hf_core_calendar_holds. */
const uint32_t *hf_core_calendar_holds(const hf_core_t *core, uint32_t calendar_index,
                                       uint32_t *count);

/* Availability, from the span index (never a scan of uses), held and sold both counting as
 * taken. Each is O(log n) in the resource's live breakpoints, plus the answer's length. */

/* The most quantity taken at any step of [from, to) (no buffers). */
int64_t hf_core_resource_taken(const hf_calendar_t *calendar, uint32_t resource, int32_t from,
                               int32_t to);
/* One segment of the free quantity over a window, neighbours with equal counts merged. */
typedef struct hf_calendar_segment {
    int32_t from, to;
    int64_t available;
} hf_calendar_segment_t;
/* Writes the segments covering [from, to) in order into out (at most max; *more set when the
 * window needed more): GET /availability. Returns how many were written. */
uint32_t hf_core_resource_segments(const hf_calendar_t *calendar, uint32_t resource, int32_t from,
                                   int32_t to, hf_calendar_segment_t *out, uint32_t max,
                                   bool *more);
/* Whether a hold of quantity over [from, to) on resource would pass every check but the
 * per-user limit right now: the length limits, alignment, past and horizon, buffers applied
 * (GET /free and /slots). *available is the least free quantity over the span widened by
 * its buffers (meaningful when the span is valid). */
bool hf_core_resource_fits(const hf_core_t *core, const hf_calendar_t *calendar, uint32_t resource,
                           int32_t from, int32_t to, uint32_t quantity, int64_t now,
                           int64_t *available);
/* The start points s in [from, to), on the grid (each date for night calendars), after the
 * cursor (resource, start) when after_resource >= 0, where a hold of length steps and quantity
 * would succeed now, earliest first, then in the resources' definition order; resources NULL
 * means all of them, else the count listed. At most max are written; *more tells whether
 * another follows. The work is bounded by the window (HF_CALENDAR_SLOTS_WINDOW_*), not by
 * the number of uses. */
typedef struct hf_calendar_slot {
    uint32_t resource;
    int32_t from, to;
} hf_calendar_slot_t;
uint32_t hf_core_resource_slots(const hf_core_t *core, const hf_calendar_t *calendar,
                                const uint32_t *resources, uint32_t resource_count, int32_t length,
                                uint32_t quantity, int32_t from, int32_t to, int64_t after_resource,
                                int32_t after_start, int64_t now, hf_calendar_slot_t *out,
                                uint32_t max, bool *more);

/* Live uses kept in memory, over all calendars (uses whose span ended leave memory). */
uint64_t hf_core_calendar_uses_live(const hf_core_t *core);

/* Restore, at start (no mutation is emitted): the definition with its created_at, resources
 * appended later as one definition each (hf_core_calendar_add_resources' shape), and the
 * sales state. Holds and orders of calendars restore with hf_core_restore_calendar_hold and
 * hf_core_restore_calendar_order. */
hf_error_t hf_core_restore_calendar(hf_core_t *core, const hf_calendar_definition_t *definition,
                                    int64_t created_at_ms);
hf_error_t hf_core_restore_calendar_sales(hf_core_t *core, const char *calendar_id, bool open);
typedef struct hf_stored_calendar_hold {
    hf_calendar_hold_request_t request; /* calendar, user, id, items */
    uint8_t status;                     /* hf_hold_status_t */
    int64_t created_at_ms, expires_at_ms, total;
} hf_stored_calendar_hold_t;
typedef struct hf_stored_calendar_order {
    const char *order_id;
    const char *hold_id;              /* NULL for a booking */
    hf_calendar_hold_request_t items; /* calendar, user and items of the order */
    uint8_t status;                   /* hf_order_status_t */
    int64_t created_at_ms, total;
    const char *payment_ref;
    const char *replaces, *replaced_by; /* exchanges, as hf_stored_order_t's */
} hf_stored_calendar_order_t;
hf_error_t hf_core_restore_calendar_hold(hf_core_t *core, const hf_stored_calendar_hold_t *hold);
hf_error_t hf_core_restore_calendar_order(hf_core_t *core, const hf_stored_calendar_order_t *order);
/* As hf_core_revive_hold, for a forgotten calendar hold. */
hf_error_t hf_core_revive_calendar_hold(hf_core_t *core, const hf_stored_calendar_hold_t *hold,
                                        uint32_t *index);

/* To be added by the core's implementation, named here so every layer agrees:
 * - hf_error_t gains HF_ERROR_CALENDAR_EXISTS, HF_ERROR_CALENDAR_NOT_FOUND,
 *   HF_ERROR_RESOURCE_NOT_FOUND, HF_ERROR_RESOURCE_EXISTS, HF_ERROR_RANGE_UNAVAILABLE
 *   (engine/errors.c: 409 calendar_exists, 404 calendar_not_found, 404 resource_not_found,
 *   409 resource_exists, 409 range_unavailable).
 * - hf_hold_t and hf_order_t gain `uint8_t target` (hf_target_t).
 * - core/mutation.h gains the kinds CALENDAR_CREATE (the definition), CALENDAR_RESOURCES
 *   (resources appended), CALENDAR_SALES, and CALENDAR_CHANGE (live streams only, as SEAT:
 *   hf_mutation_calendar_change_t {calendar_id, resource_id, resource index, from, to,
 *   delta}, delta negative for a use taken, positive for one given back); holds' and
 *   orders' records (HOLD_CREATE, HOLD_UPDATE, ORDER_CREATE, ORDER_UPDATE) name the calendar
 *   as their unit and carry the calendar items.
 * - limits.h: HF_CALENDARS_MAX, HF_CALENDAR_RESOURCES_MAX (>= 100,000),
 *   HF_CALENDAR_USES_MAX (>= 10,000,000 live uses per node), HF_CALENDAR_HOLD_ITEMS_MAX,
 *   HF_CALENDAR_HORIZON_DAYS_MAX (1,100), HF_CALENDAR_AVAILABILITY_NIGHTS_MAX (400),
 *   HF_CALENDAR_AVAILABILITY_MINUTE_DAYS_MAX (31), HF_CALENDAR_SLOTS_PAGE_DEFAULT (100),
 *   HF_CALENDAR_SLOTS_PAGE_MAX (1,000), HF_CALENDAR_SLOTS_WINDOW_* (the /slots window's
 *   bound), HF_RESOURCE_CAPACITY_MAX. */

#endif
