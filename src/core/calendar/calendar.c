/* Calendars: made, resources appended, sales switched, looked up and restored (API.md
 * section 12). A calendar's resources live in its own growable array, indexed by id; its span
 * indexes share one pool of nodes (span.h). */
#include "core/calendar/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

calendars_t *calendars_of(hf_core_t *core) {
    if (!core->calendars) {
        core->calendars = calloc(1, sizeof *core->calendars);
        if (!core->calendars) abort();
        hf_map_init(&core->calendars->ids);
    }
    return core->calendars;
}

const char *hf_calendar_unit_name(uint8_t unit) {
    return unit == HF_CALENDAR_MINUTE ? "minute" : unit == HF_CALENDAR_NIGHT ? "night" : "unknown";
}

bool hf_calendar_unit_parse(const char *text, uint8_t *unit) {
    if (!text) return false;
    if (strcmp(text, "night") == 0) *unit = HF_CALENDAR_NIGHT;
    else if (strcmp(text, "minute") == 0) *unit = HF_CALENDAR_MINUTE;
    else return false;
    return true;
}

/* ---- checks of a definition ---- */

/* The longest span a resource may have, in its unit: the horizon. */
static int64_t horizon_length(const hf_calendar_definition_t *definition) {
    int64_t days = definition->horizon_days;
    return definition->unit == HF_CALENDAR_NIGHT ? days : days * MINUTES_PER_DAY;
}

static hf_error_t check_resource(const hf_calendar_definition_t *calendar,
                                 const hf_resource_definition_t *resource, uint32_t index,
                                 hf_error_detail_t *detail) {
    const char *at = "resources";
    if (!hf_core_id_valid(resource->id)) return invalid_at(detail, at, index, "id", HF_FAULT_VALUE);
    if (strlen(resource->name) > HF_NAME_SIZE_MAX)
        return invalid_at(detail, at, index, "name", HF_FAULT_VALUE);
    if (resource->capacity < 1 || resource->capacity > HF_RESOURCE_CAPACITY_MAX)
        return invalid_at(detail, at, index, "capacity", HF_FAULT_VALUE);
    if (resource->price < 0 || resource->price > HF_PRICE_MAX)
        return invalid_at(detail, at, index, "price", HF_FAULT_VALUE);
    if (resource->min_length < 1 || resource->min_length > horizon_length(calendar))
        return invalid_at(detail, at, index, "min_length", HF_FAULT_VALUE);
    if (resource->max_length < resource->min_length ||
        resource->max_length > horizon_length(calendar))
        return invalid_at(detail, at, index, "max_length", HF_FAULT_VALUE);
    bool night = calendar->unit == HF_CALENDAR_NIGHT;
    if (resource->buffer_before_min < 0 ||
        resource->buffer_before_min > HF_RESOURCE_BUFFER_MIN_MAX ||
        (night && resource->buffer_before_min != 0))
        return invalid_at(detail, at, index, "buffer_before_min", HF_FAULT_VALUE);
    if (resource->buffer_after_min < 0 || resource->buffer_after_min > HF_RESOURCE_BUFFER_MIN_MAX ||
        (night && resource->buffer_after_min != 0))
        return invalid_at(detail, at, index, "buffer_after_min", HF_FAULT_VALUE);
    return HF_OK;
}

static hf_error_t check_settings(const hf_calendar_definition_t *definition,
                                 hf_error_detail_t *detail) {
    if (!hf_core_id_valid(definition->id)) return invalid(detail, "id");
    if (strlen(definition->name) > HF_NAME_SIZE_MAX) return invalid(detail, "name");
    if (definition->unit > HF_CALENDAR_MINUTE) return invalid(detail, "unit");
    uint32_t grid = definition->granularity_min;
    bool night = definition->unit == HF_CALENDAR_NIGHT;
    if (grid == 0 || MINUTES_PER_DAY % grid != 0 || (night && grid != MINUTES_PER_DAY))
        return invalid(detail, "granularity_min");
    if (definition->hold_ttl_ms <= 0 || definition->hold_ttl_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "hold_ttl_s");
    if (definition->max_hold_ms < definition->hold_ttl_ms ||
        definition->max_hold_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "max_hold_s");
    if (definition->horizon_days < 1 || definition->horizon_days > HF_CALENDAR_HORIZON_DAYS_MAX)
        return invalid(detail, "horizon_days");
    if (definition->max_items_per_hold < 1 ||
        definition->max_items_per_hold > HF_CALENDAR_HOLD_ITEMS_MAX)
        return invalid(detail, "max_items_per_hold");
    return HF_OK;
}

/* Resources to append to the calendar (which may be new: tables NULL), each checked, their
 * ids new to the calendar and to each other. taken: the fault of an id the calendar has. */
static hf_error_t check_resources(const hf_calendar_definition_t *definition,
                                  const calendar_tables_t *tables,
                                  const hf_resource_definition_t *resources, uint32_t count,
                                  hf_error_detail_t *detail) {
    uint32_t existing = tables ? definition->resource_count : 0;
    if ((uint64_t)existing + count > HF_CALENDAR_RESOURCES_MAX) return HF_ERROR_CAPACITY;
    hf_map_t seen;
    hf_map_init(&seen);
    hf_error_t error = HF_OK;
    for (uint32_t r = 0; r < count && !error; r++) {
        error = check_resource(definition, &resources[r], r, detail);
        if (error) break;
        size_t length = strlen(resources[r].id);
        uint32_t other;
        if (tables && hf_map_get(&tables->resource_ids, resources[r].id, length, &other)) {
            if (detail) {
                path_set(detail, "resources", NULL, HF_FAULT_EXISTS);
                detail->index = r;
                detail->has_index = true;
            }
            error = HF_ERROR_RESOURCE_EXISTS;
        } else if (hf_map_get(&seen, resources[r].id, length, &other)) {
            error = invalid_duplicate(detail, "resources", r, other);
        } else {
            hf_map_put(&seen, resources[r].id, length, r);
        }
    }
    hf_map_free(&seen);
    return error;
}

/* ---- making and growing ---- */

static void resources_append(hf_calendar_t *calendar, const hf_resource_definition_t *resources,
                             uint32_t count) {
    calendar_tables_t *tables = tables_of(calendar);
    uint32_t first = calendar->definition.resource_count;
    uint32_t capacity = tables->resource_capacity;
    tables->resources = grow(tables->resources, &capacity, first + count,
                             sizeof *tables->resources);
    tables->spans = grow(tables->spans, &tables->resource_capacity, first + count,
                         sizeof *tables->spans);
    for (uint32_t r = 0; r < count; r++) {
        tables->resources[first + r] = resources[r];
        tables->spans[first + r] = (resource_spans_t){0, 0};
        hf_map_put(&tables->resource_ids, resources[r].id, strlen(resources[r].id), first + r);
    }
    calendar->definition.resources = tables->resources;
    calendar->definition.resource_count = first + count;
}

static uint32_t calendar_add(hf_core_t *core, const hf_calendar_definition_t *definition,
                             int64_t created_at_ms) {
    calendars_t *calendars = calendars_of(core);
    hf_calendar_t *calendar = calloc(1, sizeof *calendar);
    calendar_tables_t *tables = calloc(1, sizeof *tables);
    if (!calendar || !tables) abort();
    calendar->definition = *definition;
    calendar->definition.resources = NULL;
    calendar->definition.resource_count = 0;
    calendar->created_at_ms = created_at_ms;
    calendar->sales_open = true;
    calendar->internal = tables;
    hf_map_init(&tables->resource_ids);
    span_pool_init(&tables->pool);
    resources_append(calendar, definition->resources, definition->resource_count);
    calendars->slots = grow(calendars->slots, &calendars->capacity, calendars->count + 1,
                            sizeof *calendars->slots);
    uint32_t index = calendars->count++;
    calendars->slots[index] = calendar;
    hf_map_put(&calendars->ids, calendar->definition.id, strlen(calendar->definition.id), index);
    return index;
}

static hf_error_t calendar_check_new(hf_core_t *core, const hf_calendar_definition_t *definition,
                                     hf_error_detail_t *detail) {
    assert(definition != NULL);
    hf_error_t error = check_settings(definition, detail);
    if (error) return error;
    if (hf_core_calendar(core, definition->id, NULL)) return HF_ERROR_CALENDAR_EXISTS;
    if (hf_core_calendar_count(core) >= HF_CALENDARS_MAX) return HF_ERROR_CAPACITY;
    return check_resources(definition, NULL, definition->resources, definition->resource_count,
                           detail);
}

hf_error_t hf_core_calendar_create(hf_core_t *core, const hf_calendar_definition_t *definition,
                                   int64_t now, hf_error_detail_t *detail) {
    command_at(core, now);
    hf_error_t error = calendar_check_new(core, definition, detail);
    if (error) return error;
    uint32_t index = calendar_add(core, definition, now);
    const hf_calendar_t *calendar = calendar_slot(core, index);
    hf_mutation_t mutation = {
        .type = HF_MUTATION_CALENDAR_CREATE,
        .at_ms = now,
        .as.calendar_create = {calendar->definition.id, &calendar->definition}};
    record_emit(core, &mutation);
    return HF_OK;
}

hf_error_t hf_core_calendar_add_resources(hf_core_t *core, const char *calendar_id,
                                          const hf_resource_definition_t *resources, uint32_t count,
                                          int64_t now, hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t index;
    hf_calendar_t *calendar = (hf_calendar_t *)hf_core_calendar(core, calendar_id, &index);
    if (!calendar) return HF_ERROR_CALENDAR_NOT_FOUND;
    if (count == 0) return invalid(detail, "resources");
    hf_error_t error = check_resources(&calendar->definition, tables_of(calendar), resources, count,
                                       detail);
    if (error) return error;
    uint32_t first = calendar->definition.resource_count;
    resources_append(calendar, resources, count);
    hf_mutation_t mutation = {.type = HF_MUTATION_CALENDAR_RESOURCES,
                              .at_ms = now,
                              .as.calendar_resources = {calendar->definition.id,
                                                        calendar->definition.resources + first,
                                                        first, count}};
    record_emit(core, &mutation);
    return HF_OK;
}

hf_error_t hf_core_calendar_sales_set(hf_core_t *core, const char *calendar_id, bool open,
                                      int64_t now) {
    command_at(core, now);
    hf_calendar_t *calendar = (hf_calendar_t *)hf_core_calendar(core, calendar_id, NULL);
    if (!calendar) return HF_ERROR_CALENDAR_NOT_FOUND;
    if (calendar->sales_open == open) return HF_OK;
    calendar->sales_open = open;
    hf_mutation_t mutation = {.type = HF_MUTATION_CALENDAR_SALES,
                              .at_ms = now,
                              .as.calendar_sales = {calendar->definition.id, open}};
    record_emit(core, &mutation);
    return HF_OK;
}

void calendar_record_change(hf_core_t *core, uint32_t calendar_index,
                            const hf_calendar_item_t *item, int64_t delta, int64_t now) {
    if (!core->stream_records) return;
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    hf_mutation_t mutation = {
        .type = HF_MUTATION_CALENDAR_CHANGE,
        .at_ms = now,
        .as.calendar_change = {calendar->definition.id,
                               calendar->definition.resources[item->resource].id, item->resource,
                               item->from, item->to, delta}};
    record_emit(core, &mutation);
}

/* ---- lookups ---- */

uint32_t hf_core_calendar_count(const hf_core_t *core) {
    return core->calendars ? core->calendars->count : 0;
}

const hf_calendar_t *hf_core_calendar_at(const hf_core_t *core, uint32_t index) {
    return index < hf_core_calendar_count(core) ? core->calendars->slots[index] : NULL;
}

const hf_calendar_t *hf_core_calendar(const hf_core_t *core, const char *calendar_id,
                                      uint32_t *index) {
    uint32_t found;
    if (!core->calendars || !calendar_id ||
        !hf_map_get(&core->calendars->ids, calendar_id, strlen(calendar_id), &found))
        return NULL;
    if (index) *index = found;
    return core->calendars->slots[found];
}

int32_t hf_core_resource_find(const hf_calendar_t *calendar, const char *resource_id) {
    uint32_t found;
    if (!resource_id ||
        !hf_map_get(&tables_of(calendar)->resource_ids, resource_id, strlen(resource_id), &found))
        return -1;
    return (int32_t)found;
}

const hf_calendar_item_t *hf_core_calendar_items(const hf_core_t *core, uint32_t item_offset) {
    return core->calendars->items + item_offset;
}

const uint32_t *hf_core_calendar_orders(const hf_core_t *core, uint32_t calendar_index,
                                        uint32_t *count) {
    const index_list_t *orders = &tables_of(calendar_slot(core, calendar_index))->orders;
    *count = orders->count;
    return orders->count ? orders->items : NULL;
}

const uint32_t *hf_core_calendar_holds(const hf_core_t *core, uint32_t calendar_index,
                                       uint32_t *count) {
    const index_list_t *held = &tables_of(calendar_slot(core, calendar_index))->held;
    *count = held->count;
    return held->count ? held->items : NULL;
}

uint64_t hf_core_calendar_uses_live(const hf_core_t *core) {
    return core->calendars ? core->calendars->uses_live : 0;
}

/* ---- restore ---- */

hf_error_t hf_core_restore_calendar(hf_core_t *core, const hf_calendar_definition_t *definition,
                                    int64_t created_at_ms) {
    assert(definition != NULL); /* the analyzer reads the lookup's NULL id check as a maybe */
    const hf_calendar_t *calendar = hf_core_calendar(core, definition->id, NULL);
    if (!calendar) {
        hf_error_t error = calendar_check_new(core, definition, NULL);
        if (error) return error;
        calendar_add(core, definition, created_at_ms);
        return HF_OK;
    }
    /* Resources appended later come back as a definition each. */
    hf_calendar_t *known = (hf_calendar_t *)calendar;
    hf_error_t error = check_resources(&known->definition, tables_of(known), definition->resources,
                                       definition->resource_count, NULL);
    if (!error) resources_append(known, definition->resources, definition->resource_count);
    return error;
}

hf_error_t hf_core_restore_calendar_sales(hf_core_t *core, const char *calendar_id, bool open) {
    hf_calendar_t *calendar = (hf_calendar_t *)hf_core_calendar(core, calendar_id, NULL);
    if (!calendar) return HF_ERROR_CALENDAR_NOT_FOUND;
    calendar->sales_open = open;
    return HF_OK;
}

void calendars_free(hf_core_t *core) {
    calendars_t *calendars = core->calendars;
    if (!calendars) return;
    for (uint32_t c = 0; c < calendars->count; c++) {
        hf_calendar_t *calendar = calendars->slots[c];
        calendar_tables_t *tables = tables_of(calendar);
        free(tables->resources);
        free(tables->spans);
        hf_map_free(&tables->resource_ids);
        span_pool_free(&tables->pool);
        free(tables->orders.items);
        free(tables->held.items);
        free(tables);
        free(calendar);
    }
    free(calendars->slots);
    hf_map_free(&calendars->ids);
    free(calendars->items);
    free(calendars->live);
    free(calendars->held_place);
    free(calendars);
    core->calendars = NULL;
}

const char *calendar_id_at(const hf_core_t *core, uint32_t calendar_index) {
    return core->calendars->slots[calendar_index]->definition.id;
}

const char *calendar_currency_at(const hf_core_t *core, uint32_t calendar_index) {
    return core->calendars->slots[calendar_index]->definition.currency;
}
