/* The JSON shapes of calendars (API.md section 12): the summary, the items of a hold or an
 * order on a calendar, written into a JSON writer (lib/json.h). Reads the core, changes
 * nothing.
 *
 * Ownership: nothing is returned; the arguments are borrowed for the call. */
#ifndef HF_API_CALENDAR_RENDER_H
#define HF_API_CALENDAR_RENDER_H

#include <stdint.h>

#include "core/core.h"
#include "lib/json.h"

/* The summary: the definition with its defaults, then holds_active, orders, sales_open. */
void hf_render_calendar(hf_json_t *json, const hf_calendar_t *calendar);
/* The "items" member of a calendar hold or order, inside an object already open:
 * [{"resource", "from", "to", "quantity", "total"}]. */
void hf_render_calendar_items(hf_json_t *json, const hf_core_t *core, const hf_calendar_t *calendar,
                              uint32_t item_offset, uint32_t count);
/* A calendar hold the core has forgotten, as the store keeps it (a staff list's page): the
 * shape of hf_render_hold, with status as given; each item's total from its resource's price. */
void hf_render_stored_calendar_hold(hf_json_t *json, const hf_core_t *core,
                                    const hf_calendar_t *calendar,
                                    const hf_stored_calendar_hold_t *hold, uint8_t status);

#endif
