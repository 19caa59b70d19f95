/* Decoding of calendars' bodies (calendar_decode.h). Each reader checks one member and, when
 * it is wrong, writes the fault's path and rule; the defaults are API.md section 12's. */
#include "api/calendar_decode.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_read.h"

#define MINUTES_PER_DAY 1440
#define DEFAULT_GRANULARITY_MIN 15
#define DEFAULT_HORIZON_DAYS 365
#define DEFAULT_HOLD_TTL_MS 600000
#define DEFAULT_ITEMS_PER_HOLD 10

/* Records the fault at field (a printf format for its path) with its rule; returns false for
 * the caller to return. */
static bool fault_at(hf_calendar_fault_t *fault, const char *rule, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(fault->field, sizeof fault->field, format, arguments);
    va_end(arguments);
    snprintf(fault->message, sizeof fault->message, "%s %s", fault->field, rule);
    return false;
}

/* An optional integer member from minimum to maximum, *value untouched when absent. */
static bool integer_member(json_t *object, const char *name, int64_t minimum, int64_t maximum,
                           int64_t *value) {
    json_t *member = json_object_get(object, name);
    return !member || hf_json_read_integer(member, minimum, maximum, value);
}

static bool text_copy(json_t *member, char *out, size_t size_max) {
    if (!json_is_string(member)) return false;
    size_t length = json_string_length(member);
    /* A NUL inside the string would hide the rest of it from every check. */
    if (length == 0 || length > size_max || strlen(json_string_value(member)) != length)
        return false;
    memcpy(out, json_string_value(member), length + 1);
    return true;
}

static bool id_copy(json_t *member, char *out) {
    return text_copy(member, out, HF_ID_SIZE_MAX) && hf_core_id_valid(out);
}

/* ---- resources ---- */

/* The horizon in the calendar's unit: the longest span, the default max_length. */
static int64_t horizon_length(const hf_calendar_definition_t *calendar) {
    int64_t days = calendar->horizon_days;
    return calendar->unit == HF_CALENDAR_MINUTE ? days * MINUTES_PER_DAY : days;
}

static bool resource_lengths(json_t *object, const hf_calendar_definition_t *calendar,
                             uint32_t index, hf_resource_definition_t *resource,
                             hf_calendar_fault_t *fault) {
    int64_t horizon = horizon_length(calendar);
    char rule[128];
    resource->min_length = 1;
    resource->max_length = horizon;
    snprintf(rule, sizeof rule, "must be an integer from 1 to %lld (the horizon)",
             (long long)horizon);
    if (!integer_member(object, "min_length", 1, horizon, &resource->min_length))
        return fault_at(fault, rule, "resources[%u].min_length", index);
    snprintf(rule, sizeof rule, "must be an integer from min_length to %lld (the horizon)",
             (long long)horizon);
    if (!integer_member(object, "max_length", resource->min_length, horizon, &resource->max_length))
        return fault_at(fault, rule, "resources[%u].max_length", index);
    return true;
}

static bool resource_buffers(json_t *object, const hf_calendar_definition_t *calendar,
                             uint32_t index, hf_resource_definition_t *resource,
                             hf_calendar_fault_t *fault) {
    /* Night calendars have no buffers: a stay's check-out is another's check-in. */
    int64_t maximum = calendar->unit == HF_CALENDAR_MINUTE ? HF_RESOURCE_BUFFER_MIN_MAX : 0;
    char rule[128];
    snprintf(rule, sizeof rule, "must be an integer from 0 to %lld%s", (long long)maximum,
             maximum ? " (minutes)" : " (night calendars have no buffers)");
    if (!integer_member(object, "buffer_before_min", 0, maximum, &resource->buffer_before_min))
        return fault_at(fault, rule, "resources[%u].buffer_before_min", index);
    if (!integer_member(object, "buffer_after_min", 0, maximum, &resource->buffer_after_min))
        return fault_at(fault, rule, "resources[%u].buffer_after_min", index);
    return true;
}

static bool resource_decode(json_t *object, const hf_calendar_definition_t *calendar,
                            uint32_t index, hf_resource_definition_t *resource,
                            hf_calendar_fault_t *fault) {
    memset(resource, 0, sizeof *resource);
    if (!json_is_object(object))
        return fault_at(fault, "must be an object", "resources[%u]", index);
    if (!id_copy(json_object_get(object, "id"), resource->id))
        return fault_at(fault, "must be an id (1 to 64 letters, digits, '_' or '.')",
                        "resources[%u].id", index);
    json_t *name = json_object_get(object, "name");
    if (name && !json_is_null(name) && !text_copy(name, resource->name, HF_NAME_SIZE_MAX))
        return fault_at(fault, "must be a string of 1 to 256 bytes", "resources[%u].name", index);
    resource->capacity = 1;
    if (!integer_member(object, "capacity", 1, HF_RESOURCE_CAPACITY_MAX, &resource->capacity))
        return fault_at(fault, "must be an integer from 1 to 1000000000", "resources[%u].capacity",
                        index);
    if (!integer_member(object, "price", 0, HF_PRICE_MAX, &resource->price))
        return fault_at(fault, "must be an integer from 0 to 1000000000000 (minor units)",
                        "resources[%u].price", index);
    return resource_lengths(object, calendar, index, resource, fault) &&
           resource_buffers(object, calendar, index, resource, fault);
}

/* The "resources" array of object (absent: none). */
static bool resources_decode(json_t *object, const hf_calendar_definition_t *calendar,
                             bool required, hf_resource_definition_t **resources, uint32_t *count,
                             hf_calendar_fault_t *fault) {
    json_t *list = json_object_get(object, "resources");
    *resources = NULL;
    *count = 0;
    if ((!list || json_is_null(list)) && !required) return true;
    if (!json_is_array(list) || json_array_size(list) > HF_CALENDAR_RESOURCES_MAX ||
        (required && json_array_size(list) == 0))
        return fault_at(fault, "must be an array of 1 to 100000 resources", "resources");
    size_t size = json_array_size(list);
    *resources = calloc(size ? size : 1, sizeof **resources);
    if (!*resources) abort();
    for (uint32_t i = 0; i < size; i++)
        if (!resource_decode(json_array_get(list, i), calendar, i, &(*resources)[i], fault))
            return false;
    *count = (uint32_t)size;
    return true;
}

bool hf_calendar_decode_resources(json_t *object, const hf_calendar_definition_t *calendar,
                                  hf_resource_definition_t **resources, uint32_t *count,
                                  hf_calendar_fault_t *fault) {
    if (!json_is_object(object)) {
        *resources = NULL;
        return fault_at(fault, "must be an object with resources", "body");
    }
    return resources_decode(object, calendar, true, resources, count, fault);
}

/* ---- definitions ---- */

/* Seconds (a positive number) to whole milliseconds, at most HF_HOLD_TTL_MS_MAX. */
static bool seconds_member(json_t *object, const char *name, int64_t *ms) {
    json_t *member = json_object_get(object, name);
    if (!member) return true;
    if (!json_is_number(member)) return false;
    double seconds = json_number_value(member);
    if (!isfinite(seconds) || seconds <= 0 || seconds * 1000.0 > (double)HF_HOLD_TTL_MS_MAX)
        return false;
    int64_t value = llround(seconds * 1000.0);
    *ms = value < 1 ? 1 : value;
    return true;
}

/* The currency, "USD" when absent: three capital letters. */
static bool currency_copy(json_t *member, char *out) {
    strcpy(out, "USD");
    if (!member) return true;
    if (!json_is_string(member) || json_string_length(member) != 3) return false;
    const char *text = json_string_value(member);
    for (int i = 0; i < 3; i++)
        if (text[i] < 'A' || text[i] > 'Z') return false;
    memcpy(out, text, 4);
    return true;
}

static bool definition_names(json_t *object, hf_calendar_definition_t *definition,
                             hf_calendar_fault_t *fault) {
    if (!id_copy(json_object_get(object, "id"), definition->id))
        return fault_at(fault, "must be an id (1 to 64 letters, digits, '_' or '.')", "id");
    json_t *name = json_object_get(object, "name");
    if (name && !json_is_null(name) && !text_copy(name, definition->name, HF_NAME_SIZE_MAX))
        return fault_at(fault, "must be a string of 1 to 256 bytes", "name");
    if (!currency_copy(json_object_get(object, "currency"), definition->currency))
        return fault_at(fault, "must be three capital letters (ISO 4217)", "currency");
    json_t *unit = json_object_get(object, "unit");
    if (!json_is_string(unit) ||
        !hf_calendar_unit_parse(json_string_value(unit), &definition->unit))
        return fault_at(fault, "must be \"night\" or \"minute\"", "unit");
    return true;
}

static bool definition_grid(json_t *object, hf_calendar_definition_t *definition,
                            hf_calendar_fault_t *fault) {
    bool minute = definition->unit == HF_CALENDAR_MINUTE;
    int64_t granularity = minute ? DEFAULT_GRANULARITY_MIN : MINUTES_PER_DAY;
    bool read = integer_member(object, "granularity_min", minute ? 1 : MINUTES_PER_DAY,
                               MINUTES_PER_DAY, &granularity);
    if (!read || MINUTES_PER_DAY % granularity != 0)
        return fault_at(fault,
                        minute ? "must be a divisor of 1440 (minutes)"
                               : "must be 1440 for a night calendar (or absent)",
                        "granularity_min");
    definition->granularity_min = (uint32_t)granularity;
    int64_t horizon = DEFAULT_HORIZON_DAYS;
    if (!integer_member(object, "horizon_days", 1, HF_CALENDAR_HORIZON_DAYS_MAX, &horizon))
        return fault_at(fault, "must be an integer from 1 to 1100", "horizon_days");
    definition->horizon_days = (uint32_t)horizon;
    return true;
}

static bool definition_limits(json_t *object, hf_calendar_definition_t *definition,
                              hf_calendar_fault_t *fault) {
    definition->hold_ttl_ms = DEFAULT_HOLD_TTL_MS;
    if (!seconds_member(object, "hold_ttl_s", &definition->hold_ttl_ms))
        return fault_at(fault, "must be a number of seconds above 0, at most 30 days",
                        "hold_ttl_s");
    definition->max_hold_ms = 3 * definition->hold_ttl_ms;
    if (definition->max_hold_ms > HF_HOLD_TTL_MS_MAX) definition->max_hold_ms = HF_HOLD_TTL_MS_MAX;
    if (!seconds_member(object, "max_hold_s", &definition->max_hold_ms) ||
        definition->max_hold_ms < definition->hold_ttl_ms)
        return fault_at(fault, "must be a number of seconds from hold_ttl_s to 30 days",
                        "max_hold_s");
    int64_t items = DEFAULT_ITEMS_PER_HOLD, uses = 0;
    if (!integer_member(object, "max_items_per_hold", 1, HF_CALENDAR_HOLD_ITEMS_MAX, &items))
        return fault_at(fault, "must be an integer from 1 to 100", "max_items_per_hold");
    if (!integer_member(object, "max_uses_per_user", 0, UINT32_MAX, &uses))
        return fault_at(fault, "must be an integer from 0 (no limit) to 4294967295",
                        "max_uses_per_user");
    definition->max_items_per_hold = (uint32_t)items;
    definition->max_uses_per_user = (uint32_t)uses;
    return true;
}

bool hf_calendar_decode_definition(json_t *object, hf_calendar_definition_t *definition,
                                   hf_resource_definition_t **resources,
                                   hf_calendar_fault_t *fault) {
    memset(definition, 0, sizeof *definition);
    *resources = NULL;
    if (!json_is_object(object)) return fault_at(fault, "must be a calendar object", "body");
    if (!definition_names(object, definition, fault) ||
        !definition_grid(object, definition, fault) ||
        !definition_limits(object, definition, fault) ||
        !resources_decode(object, definition, false, resources, &definition->resource_count, fault))
        return false;
    definition->resources = *resources;
    return true;
}

/* ---- spans and items ---- */

static hf_span_parse_t step_parse(const char *text, size_t length, uint8_t unit, int32_t *step) {
    return unit == HF_CALENDAR_NIGHT ? hf_span_date_parse(text, length, step)
                                     : hf_span_instant_parse(text, length, step);
}

bool hf_calendar_decode_step(const char *text, size_t length, uint8_t unit, const char *field,
                             int32_t *step, hf_calendar_fault_t *fault) {
    bool night = unit == HF_CALENDAR_NIGHT;
    switch (step_parse(text, length, unit, step)) {
    case HF_SPAN_PARSED: return true;
    case HF_SPAN_MISALIGNED:
        return fault_at(fault, "is misaligned: seconds must be 0 on the calendar's grid", "%s",
                        field);
    case HF_SPAN_OUT_OF_RANGE: return fault_at(fault, "is in the past", "%s", field);
    default:
        return fault_at(fault,
                        night ? "must be a date YYYY-MM-DD"
                              : "must be an RFC 3339 instant (2026-12-24T09:00:00Z)",
                        "%s", field);
    }
}

/* A member of an item, as either reading gave it: present or not, its string when it is one,
 * its integer when it is one. */
typedef struct item_member {
    bool present;
    bool is_string;
    bool is_integer;
    const char *string;
    size_t length;
    int64_t integer;
} item_member_t;

static item_member_t json_item_member(json_t *item, const char *name) {
    json_t *member = json_object_get(item, name);
    item_member_t read = {.present = member != NULL,
                          .is_string = json_is_string(member),
                          .is_integer = json_is_integer(member)};
    if (read.is_string) {
        read.string = json_string_value(member);
        read.length = json_string_length(member);
    }
    if (read.is_integer) read.integer = json_integer_value(member);
    return read;
}

static item_member_t flat_item_member(const hf_flat_json_t *flat, uint32_t object,
                                      const char *name) {
    const hf_flat_json_member_t *member = hf_flat_json_object_member(flat, object, name);
    if (!member) return (item_member_t){.present = false};
    return (item_member_t){.present = true,
                           .is_string = member->kind == HF_FLAT_JSON_STRING,
                           .is_integer = member->kind == HF_FLAT_JSON_INTEGER,
                           .string = member->string,
                           .length = member->length,
                           .integer = member->integer};
}

static bool item_step(const item_member_t *member, const char *name, uint8_t unit, uint32_t index,
                      int32_t *step, hf_calendar_fault_t *fault) {
    /* The field's path is written only for a fault: a hold's every item passes here twice. */
    if (member->is_string &&
        step_parse(member->string, member->length, unit, step) == HF_SPAN_PARSED)
        return true;
    char field[48];
    snprintf(field, sizeof field, "items[%u].%s", index, name);
    if (!member->is_string)
        return fault_at(fault,
                        unit == HF_CALENDAR_NIGHT ? "must be a date YYYY-MM-DD"
                                                  : "must be an RFC 3339 instant",
                        "%s", field);
    return hf_calendar_decode_step(member->string, member->length, unit, field, step, fault);
}

/* An item's members, whichever reading they come from: resource, from, to, quantity. */
static bool item_members_decode(const item_member_t members[4], uint8_t unit, uint32_t index,
                                hf_calendar_item_request_t *out, hf_calendar_fault_t *fault) {
    const item_member_t *resource = &members[0], *quantity = &members[3];
    if (!resource->is_string || resource->length == 0 ||
        strlen(resource->string) != resource->length)
        return fault_at(fault, "must be a resource id", "items[%u].resource", index);
    out->resource_id = resource->string;
    if (!item_step(&members[1], "from", unit, index, &out->from, fault) ||
        !item_step(&members[2], "to", unit, index, &out->to, fault))
        return false;
    out->quantity = 1;
    if (quantity->present && (!quantity->is_integer || quantity->integer < 1 ||
                              quantity->integer > HF_RESOURCE_CAPACITY_MAX))
        return fault_at(fault, "must be an integer from 1 to the resource's capacity",
                        "items[%u].quantity", index);
    if (quantity->present) out->quantity = (uint32_t)quantity->integer;
    return true;
}

static const char *const ITEM_MEMBERS[4] = {"resource", "from", "to", "quantity"};

static bool item_decode(json_t *item, uint8_t unit, uint32_t index, hf_calendar_item_request_t *out,
                        hf_calendar_fault_t *fault) {
    if (!json_is_object(item)) return fault_at(fault, "must be an object", "items[%u]", index);
    item_member_t members[4];
    for (int m = 0; m < 4; m++) members[m] = json_item_member(item, ITEM_MEMBERS[m]);
    return item_members_decode(members, unit, index, out, fault);
}

static bool items_fault(hf_calendar_fault_t *fault) {
    return fault_at(fault, "must be an array of 1 to 100 items", "items");
}

bool hf_calendar_decode_items(json_t *object, uint8_t unit, hf_calendar_item_request_t *items,
                              uint32_t *count, hf_calendar_fault_t *fault) {
    json_t *list = json_is_object(object) ? json_object_get(object, "items") : NULL;
    if (!json_is_array(list) || json_array_size(list) == 0 ||
        json_array_size(list) > HF_CALENDAR_HOLD_ITEMS_MAX)
        return items_fault(fault);
    *count = (uint32_t)json_array_size(list);
    for (uint32_t i = 0; i < *count; i++)
        if (!item_decode(json_array_get(list, i), unit, i, &items[i], fault)) return false;
    return true;
}

bool hf_calendar_decode_flat_items(const hf_flat_json_t *flat, uint8_t unit,
                                   hf_calendar_item_request_t *items, uint32_t *count,
                                   hf_calendar_fault_t *fault) {
    const hf_flat_json_member_t *list = hf_flat_json_member(flat, "items");
    /* An array of strings is an array whose first item is not an object; an empty one reads
     * as strings. The flat reader's arrays are shorter than HF_CALENDAR_HOLD_ITEMS_MAX. */
    if (!list || (list->kind != HF_FLAT_JSON_OBJECTS && list->kind != HF_FLAT_JSON_STRINGS) ||
        list->length == 0)
        return items_fault(fault);
    if (list->kind == HF_FLAT_JSON_STRINGS)
        return fault_at(fault, "must be an object", "items[%u]", 0u);
    *count = (uint32_t)list->length;
    for (uint32_t i = 0; i < *count; i++) {
        item_member_t members[4];
        for (int m = 0; m < 4; m++)
            members[m] = flat_item_member(flat, list->first_item + i, ITEM_MEMBERS[m]);
        if (!item_members_decode(members, unit, i, &items[i], fault)) return false;
    }
    return true;
}

void hf_calendar_step_json(hf_json_t *json, uint8_t unit, int32_t step) {
    char text[HF_SPAN_INSTANT_SIZE];
    if (unit == HF_CALENDAR_NIGHT) hf_span_date_format(step, text);
    else hf_span_instant_format(step, text);
    hf_json_string(json, text);
}
