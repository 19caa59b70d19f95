/* Handlers of calendars (calendars.h): creation, the summary and resources, sales, holds and
 * bookings, the staff's lists; the route table of the domain. */
#include "api/calendars.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/calendar_decode.h"
#include "api/calendar_render.h"
#include "api/decode.h"
#include "api/query.h"
#include "api/render.h"
#include "cluster/exchange.h"
#include "core/locks.h"

typedef hf_calendar_scratch_t scratch_t;

static scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

static void reply_fault(hf_request_t *request, const hf_calendar_fault_t *fault) {
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, fault->message, fault->field);
}

const hf_calendar_t *hf_calendar_or_404(hf_request_t *request, uint32_t *index) {
    const hf_calendar_t *calendar = hf_core_calendar(request->core, request->params[0], index);
    if (!calendar) hf_reply_error(request, HF_API_ERROR_CALENDAR_NOT_FOUND, NULL, NULL);
    return calendar;
}

static void reply_summary(hf_request_t *request, int status, const hf_calendar_t *calendar) {
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    hf_render_calendar(&json, calendar);
}

/* The path of a fault the core found: name (detail's field when it has one), then [index]
 * and .member when set ("resources[2].id", "items[0].to"). */
static void fault_path(const hf_error_detail_t *detail, const char *name, char *field,
                       size_t size) {
    if (detail->field) name = detail->field;
    if (detail->has_index && detail->member)
        snprintf(field, size, "%s[%u].%s", name, detail->index, detail->member);
    else if (detail->has_index) snprintf(field, size, "%s[%u]", name, detail->index);
    else snprintf(field, size, "%s", name);
}

/* A fault the core found in a definition or a list of resources. */
static void reply_core_fault(hf_request_t *request, const hf_error_detail_t *detail) {
    char field[HF_CALENDAR_FAULT_FIELD_SIZE], message[HF_CALENDAR_FAULT_MESSAGE_SIZE];
    fault_path(detail, "body", field, sizeof field);
    const char *rule = "is not valid";
    if (detail->fault == HF_FAULT_DUPLICATE) rule = "repeats the id of an earlier resource";
    else if (detail->fault == HF_FAULT_REQUIRED) rule = "is required";
    snprintf(message, sizeof message, "%s %s", field, rule);
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, field);
}

static void reply_resource_exists(hf_request_t *request, const hf_resource_definition_t *resources,
                                  const hf_error_detail_t *detail) {
    hf_reply_error_naming(request, HF_API_ERROR_RESOURCE_EXISTS, "resource",
                          resources[detail->index].id);
}

static void handle_calendar_create(hf_request_t *request) {
    hf_calendar_definition_t definition;
    hf_resource_definition_t *resources;
    scratch_t *scratch = scratch_of(request);
    if (!hf_calendar_decode_definition(request->body, &definition, &resources, &scratch->fault)) {
        free(resources);
        reply_fault(request, &scratch->fault);
        return;
    }
    hf_error_detail_t *detail = &scratch->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    hf_error_t error = hf_core_calendar_create(request->core, &definition, request->now_ms, detail);
    free(resources);
    if (error == HF_ERROR_INVALID_REQUEST) reply_core_fault(request, detail);
    else if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_summary(request, 201, hf_core_calendar(request->core, definition.id, NULL));
}

static void handle_calendar_list(hf_request_t *request) {
    hf_core_t *core = request->core;
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "calendars");
    hf_json_array_begin(&json);
    uint32_t count = hf_core_calendar_count(core);
    for (uint32_t i = 0; i < count; i++) hf_render_calendar(&json, hf_core_calendar_at(core, i));
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

static void handle_calendar_get(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (calendar) reply_summary(request, 200, calendar);
}

static void handle_resources_add(hf_request_t *request) {
    uint32_t index;
    const hf_calendar_t *calendar = hf_calendar_or_404(request, &index);
    if (!calendar) return;
    scratch_t *scratch = scratch_of(request);
    hf_resource_definition_t *resources;
    uint32_t count;
    if (!hf_calendar_decode_resources(request->body, &calendar->definition, &resources, &count,
                                      &scratch->fault)) {
        free(resources);
        reply_fault(request, &scratch->fault);
        return;
    }
    hf_error_detail_t *detail = &scratch->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    hf_error_t error = hf_core_calendar_add_resources(request->core, request->params[0], resources,
                                                      count, request->now_ms, detail);
    if (error == HF_ERROR_RESOURCE_EXISTS) reply_resource_exists(request, resources, detail);
    else if (error == HF_ERROR_INVALID_REQUEST) reply_core_fault(request, detail);
    else if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_summary(request, 200, hf_core_calendar_at(request->core, index));
    free(resources);
}

static void sales_set(hf_request_t *request, bool open) {
    uint32_t index;
    if (!hf_calendar_or_404(request, &index)) return;
    hf_error_t error = hf_core_calendar_sales_set(request->core, request->params[0], open,
                                                  request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_summary(request, 200, hf_core_calendar_at(request->core, index));
}

static void handle_sales_close(hf_request_t *request) { sales_set(request, false); }

static void handle_sales_open(hf_request_t *request) { sales_set(request, true); }

/* ---- holds and bookings ---- */

/* The body of a hold or booking into request (the scratch's items); false after a 400. */
static bool use_request_decode(hf_request_t *request, const hf_calendar_t *calendar,
                               hf_calendar_hold_request_t *use, bool hold) {
    scratch_t *scratch = scratch_of(request);
    if (!hf_decode_user(request, &use->user_id)) return false;
    uint8_t unit = calendar->definition.unit;
    bool decoded = request->flat
                       ? hf_calendar_decode_flat_items(request->flat, unit, scratch->items,
                                                       &use->item_count, &scratch->fault)
                       : hf_calendar_decode_items(request->body, unit, scratch->items,
                                                  &use->item_count, &scratch->fault);
    if (!decoded) {
        reply_fault(request, &scratch->fault);
        return false;
    }
    use->items = scratch->items;
    use->conflicts = scratch->conflicts;
    use->conflict_max = HF_CALENDAR_CONFLICTS_MAX;
    use->ttl_ms = -1;
    if (!hold) return true;
    if (!hf_decode_seconds(request, "ttl_s", &use->ttl_ms)) return false;
    if (!hf_decode_string(request, "exchange_for", HF_ID_SIZE_MAX, false, &use->exchange_for))
        return false;
    return hf_decode_bool(request, "replace_existing", &use->replace_existing);
}

/* 409 range_unavailable: the maximal sub-spans where less than the asked quantity is free. */
static void reply_unavailable(hf_request_t *request, const hf_calendar_t *calendar,
                              const hf_calendar_hold_request_t *use) {
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_RANGE_UNAVAILABLE, NULL, &json);
    HF_JSON_KEY(&json, "unavailable");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < use->conflict_count; i++) {
        const hf_calendar_conflict_t *conflict = &use->conflicts[i];
        hf_json_object_begin(&json);
        HF_JSON_KEY(&json, "resource");
        hf_json_string(&json, use->items[conflict->item].resource_id);
        HF_JSON_KEY(&json, "from");
        hf_calendar_step_json(&json, calendar->definition.unit, conflict->from);
        HF_JSON_KEY(&json, "to");
        hf_calendar_step_json(&json, calendar->definition.unit, conflict->to);
        HF_JSON_KEY(&json, "available");
        hf_json_int(&json, conflict->available);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_reply_error_end(&json);
}

/* Why the core refused an item's span, told from the span itself (the member at fault says
 * which end): what is left when its order, grid and length are right is the clock's, the past
 * for from and the horizon for to. */
static void span_rule(const hf_calendar_t *calendar, const hf_calendar_item_request_t *item,
                      bool to, char *rule, size_t size) {
    const hf_calendar_definition_t *definition = &calendar->definition;
    int32_t resource = hf_core_resource_find(calendar, item->resource_id);
    int64_t grid = definition->unit == HF_CALENDAR_MINUTE ? definition->granularity_min : 1;
    int64_t length = (int64_t)item->to - item->from;
    const char *unit = definition->unit == HF_CALENDAR_MINUTE ? "minutes" : "nights";
    if (to && length <= 0) snprintf(rule, size, "must be after from");
    else if ((to ? item->to : item->from) % grid != 0)
        snprintf(rule, size, "is not on the calendar's grid of %lld minutes", (long long)grid);
    else if (to && resource >= 0 && length < definition->resources[resource].min_length)
        snprintf(rule, size, "makes a span shorter than the resource's min_length (%lld %s)",
                 (long long)definition->resources[resource].min_length, unit);
    else if (to && resource >= 0 && length > definition->resources[resource].max_length)
        snprintf(rule, size, "makes a span longer than the resource's max_length (%lld %s)",
                 (long long)definition->resources[resource].max_length, unit);
    else if (to)
        snprintf(rule, size, "is past the calendar's horizon (%u days from today)",
                 definition->horizon_days);
    else snprintf(rule, size, "is in the past");
}

/* What a fault of the core in a hold's items says, by its member. */
static void item_rule(const hf_calendar_t *calendar, const hf_calendar_hold_request_t *use,
                      const hf_error_detail_t *detail, char *rule, size_t size) {
    const char *text = NULL;
    if (detail->fault == HF_FAULT_NO_ITEMS) text = "must name at least one item";
    else if (detail->fault == HF_FAULT_HOLD_ITEMS) text = "has more items than max_items_per_hold";
    else if (detail->fault == HF_FAULT_HOLD_TTL) text = "is above the calendar's max_hold_s";
    else if (!detail->member) text = "overlaps another item of the hold on the same resource";
    else if (strcmp(detail->member, "quantity") == 0)
        text = "must be from 1 to the resource's capacity";
    else if (!detail->has_index || detail->index >= use->item_count) text = "is not valid";
    if (text) snprintf(rule, size, "%s", text);
    else
        span_rule(calendar, &use->items[detail->index], strcmp(detail->member, "to") == 0, rule,
                  size);
}

static void reply_item_fault(hf_request_t *request, const hf_calendar_t *calendar,
                             const hf_calendar_hold_request_t *use,
                             const hf_error_detail_t *detail) {
    char field[HF_CALENDAR_FAULT_FIELD_SIZE], message[HF_CALENDAR_FAULT_MESSAGE_SIZE];
    char rule[HF_CALENDAR_FAULT_MESSAGE_SIZE - HF_CALENDAR_FAULT_FIELD_SIZE - 2];
    fault_path(detail, "items", field, sizeof field);
    item_rule(calendar, use, detail, rule, sizeof rule);
    snprintf(message, sizeof message, "%s %s", field, rule);
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, field);
}

static void reply_use_error(hf_request_t *request, const hf_calendar_t *calendar,
                            const hf_calendar_hold_request_t *use, hf_error_t error,
                            const hf_error_detail_t *detail) {
    if (error == HF_ERROR_RANGE_UNAVAILABLE) reply_unavailable(request, calendar, use);
    else if (error == HF_ERROR_RESOURCE_NOT_FOUND && detail->index < use->item_count)
        hf_reply_error_naming(request, HF_API_ERROR_RESOURCE_NOT_FOUND, "resource",
                              use->items[detail->index].resource_id);
    else if (error == HF_ERROR_INVALID_REQUEST) reply_item_fault(request, calendar, use, detail);
    else if (error == HF_ERROR_USER_LIMIT_EXCEEDED)
        hf_reply_core_error(request, error, detail, NULL);
    else hf_reply_core_error(request, error, NULL, NULL);
}

static void handle_hold_create(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (!calendar) return;
    char hold_id[HF_SERVER_ID_SIZE + 1];
    hf_calendar_hold_request_t use = {.calendar_id = request->params[0], .hold_id = hold_id};
    if (!use_request_decode(request, calendar, &use, true)) return;
    hf_context_id_make(request->context, "res_", hold_id);
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t hold_index;
    hf_error_t error = hf_core_calendar_hold(request->core, &use, request->now_ms, &hold_index,
                                             detail);
    /* The old order is another unit's, as its owner read it (cluster/exchange.h). */
    hf_remote_order_t remote;
    if (error == HF_ERROR_ORDER_NOT_FOUND && use.exchange_for &&
        hf_cluster_exchange_read(request->context->cluster, use.exchange_for, &remote))
        error = hf_core_calendar_hold_remote_exchange(request->core, &use, &remote, request->now_ms,
                                                      &hold_index, detail);
    if (error) {
        reply_use_error(request, calendar, &use, error, detail);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 201, &json);
    hf_render_hold(&json, request->core, hf_core_hold_at(request->core, hold_index),
                   request->now_ms, NULL);
}

static void handle_booking_create(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_calendar_or_404(request, NULL);
    if (!calendar) return;
    hf_calendar_hold_request_t use = {.calendar_id = request->params[0]};
    const char *payment_ref = NULL;
    if (!use_request_decode(request, calendar, &use, false)) return;
    if (!hf_decode_string(request, "payment_ref", HF_PAYMENT_REF_SIZE_MAX, false, &payment_ref))
        return;
    char order_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "ord_", order_id);
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t order_index;
    hf_error_t error = hf_core_calendar_book(request->core, &use, order_id, payment_ref,
                                             request->now_ms, &order_index, detail);
    if (error) {
        reply_use_error(request, calendar, &use, error, detail);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 201, &json);
    hf_render_order(&json, request->core, hf_core_order_at(request->core, order_index));
}

/* The staff's lists of a calendar's holds and orders are the events' (api/staff.c). */

/* Today every route takes what the HTTP layer reads (1 MiB); a route may take less. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX
/* Creates something, so an Idempotency-Key applies. */
#define CREATES (HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT)
#define IN_PATH HF_ROUTE_UNIT_IN_PATH(0)

static const hf_route_t routes[] = {
    {"POST", "/v1/calendars", handle_calendar_create, CREATES, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_BODY("id")},
    {"GET", "/v1/calendars", handle_calendar_list, HF_ROUTE_SPANS | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_NO_UNIT},
    {"GET", "/v1/calendars/{}", handle_calendar_get, HF_ROUTE_BUYER, BODY_SIZE_MAX, IN_PATH},
    {"POST", "/v1/calendars/{}/close", handle_sales_close, 0, BODY_SIZE_MAX, IN_PATH},
    {"POST", "/v1/calendars/{}/open", handle_sales_open, 0, BODY_SIZE_MAX, IN_PATH},
    {"POST", "/v1/calendars/{}/resources", handle_resources_add, HF_ROUTE_BODY, BODY_SIZE_MAX,
     IN_PATH},
    {"POST", "/v1/calendars/{}/holds", handle_hold_create,
     CREATES | HF_ROUTE_FLAT | HF_ROUTE_BUYER | HF_ROUTE_EXCHANGE, BODY_SIZE_MAX, IN_PATH},
    {"POST", "/v1/calendars/{}/bookings", handle_booking_create, CREATES, BODY_SIZE_MAX, IN_PATH},
    {"GET", "/v1/calendars/{}/availability", hf_calendar_handle_availability, HF_ROUTE_BUYER,
     BODY_SIZE_MAX, IN_PATH},
    {"GET", "/v1/calendars/{}/free", hf_calendar_handle_free, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     IN_PATH},
    {"GET", "/v1/calendars/{}/slots", hf_calendar_handle_slots, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     IN_PATH},
    {"GET", "/v1/calendars/{}/stream", hf_calendar_handle_stream,
     HF_ROUTE_KEY_IN_QUERY | HF_ROUTE_STREAM | HF_ROUTE_BUYER, BODY_SIZE_MAX, IN_PATH},
};

const hf_route_table_t hf_handlers_calendars_routes = {routes, sizeof routes / sizeof routes[0],
                                                       sizeof(scratch_t)};

/* ---- GET /metrics (metrics.h) ---- */

void hf_handlers_calendars_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    const hf_core_t *core = context->core;
    uint32_t count = hf_core_calendar_count(core);
    double holds = 0, orders = 0;
    for (uint32_t i = 0; i < count; i++) {
        holds += hf_core_calendar_at(core, i)->holds_active;
        orders += hf_core_calendar_at(core, i)->orders;
    }
    hf_metrics_family(out, "holdfast_calendars", "gauge", "Calendars.");
    hf_metrics_sample(out, "holdfast_calendars", NULL, 0, count);
    hf_metrics_family(out, "holdfast_calendar_uses_live", "gauge",
                      "Uses of calendars' resources in memory: held or sold, span not ended.");
    hf_metrics_sample(out, "holdfast_calendar_uses_live", NULL, 0,
                      (double)hf_core_calendar_uses_live(core));
    hf_metrics_family(out, "holdfast_calendar_holds_active", "gauge",
                      "Holds on calendars in status held.");
    hf_metrics_sample(out, "holdfast_calendar_holds_active", NULL, 0, holds);
    hf_metrics_family(out, "holdfast_calendar_orders", "gauge", "Confirmed orders on calendars.");
    hf_metrics_sample(out, "holdfast_calendar_orders", NULL, 0, orders);
}
