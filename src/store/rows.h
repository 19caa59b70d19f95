/* The JSON the store keeps in its text columns, written from the core's records and read back
 * into the core's own structs at start: an event's definition (events.config) and the lines of
 * a hold or an order (holds.items, orders.items). The shapes are the API's (docs/API.md), so
 * an operator who reads the tables sees what a client sent, and the view seat_state reads
 * holds.items with json_each. Every backend uses these; the core writes no JSON.
 *
 * Writers append to a buffer the caller owns. Readers parse with jansson, strictly (duplicate
 * members refused), and check every value they hand on: a damaged row fails the load with a
 * sentence instead of reaching the core. */
#ifndef HF_STORE_ROWS_H
#define HF_STORE_ROWS_H

#include <stddef.h>

#include "core/core.h"
#include "lib/buffer.h"
#include "lib/json.h"

/* {"id":…,"name":…,"currency":…,"hold_ttl_s":…,"max_hold_s":…,"max_seats_per_user":…,
 * "max_seats_per_hold":…,"sections":[{"id":…,"price":…,"rows":[{"id":…,"seats":…}]}],
 * "pools":[{"id":…,"capacity":…,"price":…}]} */
void hf_rows_definition_write(hf_buffer_t *out, const hf_event_definition_t *definition);
/* A waiting room as the API shows it: {"enabled"}, with its settings (the rate to 15 digits)
 * when settings is true. The event summary shows them for a room on; the history's
 * event_update for a room that has any, on or off. */
void hf_rows_room_render(hf_json_t *json, const hf_room_definition_t *room, bool settings);
/* {"seats":["FLOOR-A-1",…],"pools":{"GA":2}} */
void hf_rows_items_write(hf_buffer_t *out, const hf_mutation_items_t *items);

/* Parses a stored definition into *definition, whose arrays are allocated: free them with
 * hf_rows_definition_free (also after a failure). Returns 0, or -1 with a sentence in error. */
int hf_rows_definition_read(const char *text, hf_event_definition_t *definition, char *error,
                            size_t error_size);
void hf_rows_definition_free(hf_event_definition_t *definition);

/* The parsed lines of one hold or order, pointed to by a hold request: seat ids and pool ids
 * borrow from the parsed document, valid until the next read into the same struct or
 * hf_rows_items_free. Free it before the caller's jansson allocations may be taken back (a
 * request's arena). About 24 KiB: the loader keeps one. */
typedef struct hf_rows_items {
    void *document; /* jansson's, owned */
    const char *seat_ids[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
} hf_rows_items_t;

/* Parses stored lines into items and points request's seat_ids, seat_count, pools and
 * pool_count at them. Returns 0, or -1 with a sentence in error. */
int hf_rows_items_read(const char *text, hf_rows_items_t *items, hf_hold_request_t *request,
                       char *error, size_t error_size);
void hf_rows_items_free(hf_rows_items_t *items);

/* ---- Allocations (allocation_rows.c, API.md section 14) ---- */

/* allocations.items: {"seats":["FLOOR-A-1",…],"released_seats":[…],
 * "pools":{"GA":{"units":500,"release_pending":0}}}: every seat in its order, and among them
 * the released ones, held or sold, given to the public once they come free. */
void hf_rows_allocation_write(hf_buffer_t *out, const hf_mutation_allocation_t *allocation);
/* The parsed items of one allocation, pointed to by stored: ids borrow from the document,
 * valid until hf_rows_allocation_free (call it after a failure too). Returns 0, or -1 with a
 * sentence in error. */
typedef struct hf_rows_allocation {
    void *document; /* jansson's, owned */
    hf_stored_allocation_seat_t *seats;
    hf_mutation_allocation_left_t *left;
    hf_stored_allocation_pool_t pools[HF_HOLD_ITEMS_MAX];
} hf_rows_allocation_t;
int hf_rows_allocation_read(const char *text, hf_rows_allocation_t *parsed,
                            hf_stored_allocation_t *stored, char *error, size_t error_size);
void hf_rows_allocation_free(hf_rows_allocation_t *parsed);

/* ---- Calendars (calendar_rows.c) ---- */

/* A calendar's settings, without its resources (kept a row each):
 * {"id","name","currency","unit","granularity_min","hold_ttl_ms","max_hold_ms","horizon_days",
 * "max_items_per_hold","max_uses_per_user"}. */
void hf_rows_calendar_write(hf_buffer_t *out, const hf_calendar_definition_t *definition);
/* {"id","name","capacity","price","min_length","max_length","buffer_before_min",
 * "buffer_after_min"} */
void hf_rows_resource_write(hf_buffer_t *out, const hf_resource_definition_t *resource);
/* {"uses":[{"resource":"DBL","from":20811,"to":20814,"quantity":1,"total":45000}]}: steps. */
void hf_rows_uses_write(hf_buffer_t *out, const hf_mutation_uses_t *uses);
/* The items column of a hold or order: uses for a calendar's, else seats and pools. */
void hf_rows_lines_write(hf_buffer_t *out, uint8_t target, const hf_mutation_items_t *items,
                         const hf_mutation_uses_t *uses);
/* Whether an items column holds a calendar's uses (hf_rows_uses_write's, which starts so). */
bool hf_rows_lines_are_uses(const char *text);

/* Each returns 0, or -1 with a sentence in error. The definition's resources are none. */
int hf_rows_calendar_read(const char *text, hf_calendar_definition_t *definition, char *error,
                          size_t error_size);
int hf_rows_resource_read(const char *text, hf_resource_definition_t *resource, char *error,
                          size_t error_size);
/* The parsed uses of one calendar hold or order: resource ids borrow from the document. */
typedef struct hf_rows_uses {
    void *document; /* jansson's, owned */
    hf_calendar_item_request_t items[HF_CALENDAR_HOLD_ITEMS_MAX];
} hf_rows_uses_t;
/* Parses stored uses and points request's items and item_count at them. */
int hf_rows_uses_read(const char *text, hf_rows_uses_t *uses, hf_calendar_hold_request_t *request,
                      char *error, size_t error_size);
void hf_rows_uses_free(hf_rows_uses_t *uses);

#endif
