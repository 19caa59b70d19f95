/* The JSON of calendars the store keeps (rows.h): a calendar's settings (calendars.definition),
 * each resource (calendar_resources.definition, one row per resource so that appending one
 * writes one row) and the uses of a calendar hold or order (holds.items, orders.items, whose
 * {"uses": …} tells them from an event's {"seats": …}). Steps are kept as the core counts
 * them (days or minutes since the epoch): the API renders them. */
#include "store/rows.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "lib/json_read.h"

/* ---- writing ---- */

void hf_rows_calendar_write(hf_buffer_t *out, const hf_calendar_definition_t *definition) {
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "id");
    hf_json_string(&json, definition->id);
    HF_JSON_KEY(&json, "name");
    hf_json_string(&json, definition->name);
    HF_JSON_KEY(&json, "currency");
    hf_json_string(&json, definition->currency);
    HF_JSON_KEY(&json, "unit");
    hf_json_string(&json, hf_calendar_unit_name(definition->unit));
    HF_JSON_KEY(&json, "granularity_min");
    hf_json_int(&json, definition->granularity_min);
    HF_JSON_KEY(&json, "hold_ttl_ms");
    hf_json_int(&json, definition->hold_ttl_ms);
    HF_JSON_KEY(&json, "max_hold_ms");
    hf_json_int(&json, definition->max_hold_ms);
    HF_JSON_KEY(&json, "horizon_days");
    hf_json_int(&json, definition->horizon_days);
    HF_JSON_KEY(&json, "max_items_per_hold");
    hf_json_int(&json, definition->max_items_per_hold);
    HF_JSON_KEY(&json, "max_uses_per_user");
    hf_json_int(&json, definition->max_uses_per_user);
    hf_json_object_end(&json);
}

void hf_rows_resource_write(hf_buffer_t *out, const hf_resource_definition_t *resource) {
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "id");
    hf_json_string(&json, resource->id);
    HF_JSON_KEY(&json, "name");
    hf_json_string(&json, resource->name);
    HF_JSON_KEY(&json, "capacity");
    hf_json_int(&json, resource->capacity);
    HF_JSON_KEY(&json, "price");
    hf_json_int(&json, resource->price);
    HF_JSON_KEY(&json, "min_length");
    hf_json_int(&json, resource->min_length);
    HF_JSON_KEY(&json, "max_length");
    hf_json_int(&json, resource->max_length);
    HF_JSON_KEY(&json, "buffer_before_min");
    hf_json_int(&json, resource->buffer_before_min);
    HF_JSON_KEY(&json, "buffer_after_min");
    hf_json_int(&json, resource->buffer_after_min);
    hf_json_object_end(&json);
}

void hf_rows_uses_write(hf_buffer_t *out, const hf_mutation_uses_t *uses) {
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "uses");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < uses->count; i++) {
        const hf_mutation_use_t *use = &uses->lines[i];
        hf_json_object_begin(&json);
        HF_JSON_KEY(&json, "resource");
        hf_json_string(&json, use->resource_id);
        HF_JSON_KEY(&json, "from");
        hf_json_int(&json, use->from);
        HF_JSON_KEY(&json, "to");
        hf_json_int(&json, use->to);
        HF_JSON_KEY(&json, "quantity");
        hf_json_int(&json, use->quantity);
        HF_JSON_KEY(&json, "total");
        hf_json_int(&json, use->total);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

void hf_rows_lines_write(hf_buffer_t *out, uint8_t target, const hf_mutation_items_t *items,
                         const hf_mutation_uses_t *uses) {
    if (target == HF_TARGET_CALENDAR) hf_rows_uses_write(out, uses);
    else hf_rows_items_write(out, items);
}

bool hf_rows_lines_are_uses(const char *text) {
    return text != NULL && strncmp(text, "{\"uses\":", 8) == 0;
}

/* ---- reading ---- */

static bool integer_of(json_t *object, const char *key, int64_t minimum, int64_t maximum,
                       int64_t *value) {
    return hf_json_read_integer(json_object_get(object, key), minimum, maximum, value);
}

/* A string member copied into out (size bytes with its NUL); "" allowed when empty_ok. */
static bool string_of(json_t *object, const char *key, char *out, size_t size, bool empty_ok) {
    json_t *member = json_object_get(object, key);
    const char *text = json_string_value(member);
    size_t length = json_string_length(member);
    if (!text || length >= size || strlen(text) != length || (!empty_ok && length == 0))
        return false;
    memcpy(out, text, length + 1);
    return true;
}

static json_t *object_parse(const char *text, const char *what, char *error, size_t error_size) {
    json_error_t parse_error;
    json_t *object = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &parse_error);
    if (json_is_object(object)) return object;
    snprintf(error, error_size, "its %s is not a JSON object (%s)", what,
             object ? "another value" : parse_error.text);
    json_decref(object);
    return NULL;
}

static bool calendar_members_read(json_t *object, hf_calendar_definition_t *definition) {
    char unit[16];
    int64_t grid, ttl, max_hold, horizon, items, uses;
    bool read = string_of(object, "id", definition->id, sizeof definition->id, false) &&
                string_of(object, "name", definition->name, sizeof definition->name, true) &&
                string_of(object, "currency", definition->currency, sizeof definition->currency,
                          false) &&
                string_of(object, "unit", unit, sizeof unit, false) &&
                hf_calendar_unit_parse(unit, &definition->unit) &&
                integer_of(object, "granularity_min", 1, 1440, &grid) &&
                integer_of(object, "hold_ttl_ms", 1, HF_HOLD_TTL_MS_MAX, &ttl) &&
                integer_of(object, "max_hold_ms", 1, HF_HOLD_TTL_MS_MAX, &max_hold) &&
                integer_of(object, "horizon_days", 1, HF_CALENDAR_HORIZON_DAYS_MAX, &horizon) &&
                integer_of(object, "max_items_per_hold", 1, HF_CALENDAR_HOLD_ITEMS_MAX, &items) &&
                integer_of(object, "max_uses_per_user", 0, UINT32_MAX, &uses);
    if (!read) return false;
    definition->granularity_min = (uint32_t)grid;
    definition->hold_ttl_ms = ttl;
    definition->max_hold_ms = max_hold;
    definition->horizon_days = (uint32_t)horizon;
    definition->max_items_per_hold = (uint32_t)items;
    definition->max_uses_per_user = (uint32_t)uses;
    return true;
}

int hf_rows_calendar_read(const char *text, hf_calendar_definition_t *definition, char *error,
                          size_t error_size) {
    memset(definition, 0, sizeof *definition);
    json_t *object = object_parse(text, "definition", error, error_size);
    if (!object) return -1;
    bool read = calendar_members_read(object, definition);
    json_decref(object);
    if (read) return 0;
    snprintf(error, error_size, "its definition has a member missing or wrong");
    return -1;
}

int hf_rows_resource_read(const char *text, hf_resource_definition_t *resource, char *error,
                          size_t error_size) {
    memset(resource, 0, sizeof *resource);
    json_t *object = object_parse(text, "resource", error, error_size);
    if (!object) return -1;
    int64_t buffer_max = HF_RESOURCE_BUFFER_MIN_MAX;
    bool read = string_of(object, "id", resource->id, sizeof resource->id, false) &&
                string_of(object, "name", resource->name, sizeof resource->name, true) &&
                integer_of(object, "capacity", 1, HF_RESOURCE_CAPACITY_MAX, &resource->capacity) &&
                integer_of(object, "price", 0, HF_PRICE_MAX, &resource->price) &&
                integer_of(object, "min_length", 1, INT32_MAX, &resource->min_length) &&
                integer_of(object, "max_length", 1, INT32_MAX, &resource->max_length) &&
                integer_of(object, "buffer_before_min", 0, buffer_max,
                           &resource->buffer_before_min) &&
                integer_of(object, "buffer_after_min", 0, buffer_max, &resource->buffer_after_min);
    json_decref(object);
    if (read) return 0;
    snprintf(error, error_size, "its resource has a member missing or wrong");
    return -1;
}

static bool use_read(json_t *use, hf_calendar_item_request_t *item) {
    int64_t from, to, quantity;
    item->resource_id = json_string_value(json_object_get(use, "resource"));
    if (!item->resource_id || !integer_of(use, "from", INT32_MIN, INT32_MAX, &from) ||
        !integer_of(use, "to", INT32_MIN, INT32_MAX, &to) ||
        !integer_of(use, "quantity", 1, HF_RESOURCE_CAPACITY_MAX, &quantity) || from >= to)
        return false;
    item->from = (int32_t)from;
    item->to = (int32_t)to;
    item->quantity = (uint32_t)quantity;
    return true;
}

int hf_rows_uses_read(const char *text, hf_rows_uses_t *uses, hf_calendar_hold_request_t *request,
                      char *error, size_t error_size) {
    hf_rows_uses_free(uses);
    request->items = uses->items;
    request->item_count = 0;
    json_t *object = object_parse(text, "uses", error, error_size);
    uses->document = object;
    if (!object) return -1;
    json_t *array = json_object_get(object, "uses");
    size_t count = json_array_size(array);
    if (!json_is_array(array) || count == 0 || count > HF_CALENDAR_HOLD_ITEMS_MAX) {
        snprintf(error, error_size, "its uses are missing or too many");
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (!use_read(json_array_get(array, i), &uses->items[i])) {
            snprintf(error, error_size, "its use %zu is wrong", i);
            return -1;
        }
    request->item_count = (uint32_t)count;
    return 0;
}

void hf_rows_uses_free(hf_rows_uses_t *uses) {
    json_decref(uses->document);
    uses->document = NULL;
}
