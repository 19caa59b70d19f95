/* The JSON shapes of calendars (calendar_render.h). */
#include "api/calendar_render.h"

#include "api/calendar_decode.h"
#include "api/exchange_render.h"

static void resource_write(hf_json_t *json, const hf_resource_definition_t *resource) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, resource->id);
    HF_JSON_KEY(json, "name");
    if (resource->name[0]) hf_json_string(json, resource->name);
    else hf_json_null(json);
    HF_JSON_KEY(json, "capacity");
    hf_json_int(json, resource->capacity);
    HF_JSON_KEY(json, "price");
    hf_json_int(json, resource->price);
    HF_JSON_KEY(json, "min_length");
    hf_json_int(json, resource->min_length);
    HF_JSON_KEY(json, "max_length");
    hf_json_int(json, resource->max_length);
    HF_JSON_KEY(json, "buffer_before_min");
    hf_json_int(json, resource->buffer_before_min);
    HF_JSON_KEY(json, "buffer_after_min");
    hf_json_int(json, resource->buffer_after_min);
    hf_json_object_end(json);
}

static void settings_write(hf_json_t *json, const hf_calendar_definition_t *definition) {
    HF_JSON_KEY(json, "unit");
    hf_json_string(json, hf_calendar_unit_name(definition->unit));
    HF_JSON_KEY(json, "granularity_min");
    hf_json_int(json, definition->granularity_min);
    HF_JSON_KEY(json, "hold_ttl_s");
    hf_json_seconds(json, definition->hold_ttl_ms);
    HF_JSON_KEY(json, "max_hold_s");
    hf_json_seconds(json, definition->max_hold_ms);
    HF_JSON_KEY(json, "horizon_days");
    hf_json_int(json, definition->horizon_days);
    HF_JSON_KEY(json, "max_items_per_hold");
    hf_json_int(json, definition->max_items_per_hold);
    HF_JSON_KEY(json, "max_uses_per_user");
    hf_json_int(json, definition->max_uses_per_user);
}

void hf_render_calendar(hf_json_t *json, const hf_calendar_t *calendar) {
    const hf_calendar_definition_t *definition = &calendar->definition;
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, definition->id);
    HF_JSON_KEY(json, "name");
    if (definition->name[0]) hf_json_string(json, definition->name);
    else hf_json_null(json);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, definition->currency);
    settings_write(json, definition);
    HF_JSON_KEY(json, "resources");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < definition->resource_count; i++)
        resource_write(json, &definition->resources[i]);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "holds_active");
    hf_json_int(json, calendar->holds_active);
    HF_JSON_KEY(json, "orders");
    hf_json_int(json, calendar->orders);
    HF_JSON_KEY(json, "sales_open");
    hf_json_bool(json, calendar->sales_open);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, calendar->created_at_ms);
    hf_json_object_end(json);
}

void hf_render_calendar_items(hf_json_t *json, const hf_core_t *core, const hf_calendar_t *calendar,
                              uint32_t item_offset, uint32_t count) {
    const hf_calendar_item_t *items = hf_core_calendar_items(core, item_offset);
    uint8_t unit = calendar->definition.unit;
    HF_JSON_KEY(json, "items");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < count; i++) {
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "resource");
        hf_json_string(json, calendar->definition.resources[items[i].resource].id);
        HF_JSON_KEY(json, "from");
        hf_calendar_step_json(json, unit, items[i].from);
        HF_JSON_KEY(json, "to");
        hf_calendar_step_json(json, unit, items[i].to);
        HF_JSON_KEY(json, "quantity");
        hf_json_int(json, items[i].quantity);
        HF_JSON_KEY(json, "total");
        hf_json_int(json, items[i].total);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
}

/* A stored item: its resource found by id (resources are never removed), its total as the
 * core reckons it, price x length in nights or steps x quantity. */
static void stored_item_write(hf_json_t *json, const hf_calendar_t *calendar,
                              const hf_calendar_item_request_t *item) {
    const hf_calendar_definition_t *definition = &calendar->definition;
    int32_t found = hf_core_resource_find(calendar, item->resource_id);
    int64_t price = found >= 0 ? definition->resources[found].price : 0;
    int64_t steps = item->to - item->from;
    if (definition->unit == HF_CALENDAR_MINUTE) steps /= definition->granularity_min;
    uint32_t quantity = item->quantity ? item->quantity : 1;
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "resource");
    hf_json_string(json, item->resource_id);
    HF_JSON_KEY(json, "from");
    hf_calendar_step_json(json, definition->unit, item->from);
    HF_JSON_KEY(json, "to");
    hf_calendar_step_json(json, definition->unit, item->to);
    HF_JSON_KEY(json, "quantity");
    hf_json_int(json, quantity);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, price * steps * quantity);
    hf_json_object_end(json);
}

void hf_render_stored_calendar_hold(hf_json_t *json, const hf_core_t *core,
                                    const hf_calendar_t *calendar,
                                    const hf_stored_calendar_hold_t *hold, uint8_t status) {
    const hf_calendar_hold_request_t *request = &hold->request;
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, request->hold_id);
    HF_JSON_KEY(json, "calendar");
    hf_json_string(json, calendar->definition.id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, request->user_id);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_hold_status_name(status));
    HF_JSON_KEY(json, "items");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < request->item_count; i++)
        stored_item_write(json, calendar, &request->items[i]);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, hold->total);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, calendar->definition.currency);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, hold->created_at_ms);
    HF_JSON_KEY(json, "expires_at");
    hf_json_time(json, hold->expires_at_ms);
    /* Only a released or expired hold is ever forgotten: nothing remains of its time. */
    HF_JSON_KEY(json, "expires_in_ms");
    hf_json_int(json, 0);
    if (request->exchange_for) hf_render_exchange(json, core, request->exchange_for, hold->total);
    hf_json_object_end(json);
}
