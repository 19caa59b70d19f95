/* The JSON shapes of API.md: event, seat, hold, order and their items, written into a JSON
 * writer (lib/json.h) as one value each. Reads the core, changes nothing.
 *
 * Ownership: nothing is returned; the arguments are borrowed for the call. */
#ifndef HF_API_RENDER_H
#define HF_API_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "lib/json.h"

void hf_render_event(hf_json_t *json, const hf_core_t *core, const hf_event_t *event);
/* A free allocated seat names its allocation (core reads it). */
void hf_render_seat(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                    uint32_t seat_index);
/* With capped not NULL, the hold has a "capped" member too (the extend answer). */
void hf_render_hold(hf_json_t *json, const hf_core_t *core, const hf_hold_t *hold, int64_t now_ms,
                    const bool *capped);
/* A hold the core has forgotten, as the store handed it back (a released or expired one):
 * the same shape as hf_render_hold, with status as given. */
void hf_render_stored_hold(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                           const hf_stored_hold_t *hold, uint8_t status);
void hf_render_order(hf_json_t *json, const hf_core_t *core, const hf_order_t *order);
/* The "seats" and "pools" members of a hold or order, inside an object already open. */
void hf_render_items(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                     uint32_t item_offset, uint32_t seat_count, uint32_t pool_count);

#endif
