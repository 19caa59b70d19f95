/* Decoding of calendars' bodies and queries (API.md section 12): definitions with their
 * defaults, resources, the items of holds and bookings, and the texts of spans (dates for
 * night calendars, RFC 3339 instants for minute ones; lib/spans.h). Strict: every wrong value
 * is a fault naming its field ("resources[2].capacity", "items[0].to") and saying what it must
 * be, which the handler answers as 400 invalid_request.
 *
 * Ownership: a definition's resources are allocated (free with free(definition->resources)
 * and the decoder's out pointers, also after a failure); item resource ids borrow from the
 * json_t given, which must outlive them. */
#ifndef HF_API_CALENDAR_DECODE_H
#define HF_API_CALENDAR_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "lib/json.h"
#include "lib/spans.h"
#include "net/flat_json.h"

/* Bytes of a fault's field path and of its message. */
#define HF_CALENDAR_FAULT_FIELD_SIZE 96
#define HF_CALENDAR_FAULT_MESSAGE_SIZE 256

typedef struct hf_calendar_fault {
    char field[HF_CALENDAR_FAULT_FIELD_SIZE];
    char message[HF_CALENDAR_FAULT_MESSAGE_SIZE];
} hf_calendar_fault_t;

/* POST /v1/calendars: the definition with every default filled in; *resources is the array
 * the definition points at (NULL when none), the caller's to free. false with fault set. */
bool hf_calendar_decode_definition(json_t *object, hf_calendar_definition_t *definition,
                                   hf_resource_definition_t **resources,
                                   hf_calendar_fault_t *fault);

/* POST /v1/calendars/{cal}/resources: {"resources": [...]} for a calendar defined as
 * calendar (its unit and horizon give the defaults); as above. */
bool hf_calendar_decode_resources(json_t *object, const hf_calendar_definition_t *calendar,
                                  hf_resource_definition_t **resources, uint32_t *count,
                                  hf_calendar_fault_t *fault);

/* A span's text in the calendar's unit into a step; the field names it in the fault. */
bool hf_calendar_decode_step(const char *text, size_t length, uint8_t unit, const char *field,
                             int32_t *step, hf_calendar_fault_t *fault);

/* The "items" member of a hold or booking: 1 to HF_CALENDAR_HOLD_ITEMS_MAX objects
 * {"resource", "from", "to", "quantity"} into items (room for HF_CALENDAR_HOLD_ITEMS_MAX). */
bool hf_calendar_decode_items(json_t *object, uint8_t unit, hf_calendar_item_request_t *items,
                              uint32_t *count, hf_calendar_fault_t *fault);

/* The same from the flat reader's reading of the body (net/flat_json.h), with the same
 * faults; item resource ids borrow from flat. */
bool hf_calendar_decode_flat_items(const hf_flat_json_t *flat, uint8_t unit,
                                   hf_calendar_item_request_t *items, uint32_t *count,
                                   hf_calendar_fault_t *fault);

/* A step written as its unit's text: "2026-12-24", or "2026-12-24T09:00:00.000Z". */
void hf_calendar_step_json(hf_json_t *json, uint8_t unit, int32_t step);

#endif
