/* The members an exchange hold adds to a hold's JSON (API.md section 13), for the holds of
 * events (render.c) and of calendars (calendar_render.c) alike. */
#ifndef HF_API_EXCHANGE_RENDER_H
#define HF_API_EXCHANGE_RENDER_H

#include <stdint.h>

#include "core/core.h"
#include "lib/json.h"

/* "exchange_for" and "difference" of an exchange hold of this total whose old order is
 * order_id, inside an object already open (difference only when the old order is this
 * node's). */
void hf_render_exchange(hf_json_t *json, const hf_core_t *core, const char *order_id,
                        int64_t total);
/* The same of a remote exchange hold (core/locks.h): its old order another unit's. */
void hf_render_exchange_elsewhere(hf_json_t *json, const hf_core_t *core, const hf_hold_t *hold);

#endif
