/* The core's creation and destruction, its sink, the numbering of its changes and every
 * mutation record it emits (core.h). The commands live in one file per domain beside this one
 * (see core.h); they change the state and call the record_ functions here (internal.h), which
 * alone build an hf_mutation_t, so how records are shaped is decided in this file only. */
#include "core/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

/* ---- lifecycle ---- */

hf_core_t *hf_core_create(hf_mutation_sink_t sink) {
    hf_core_t *core = calloc(1, sizeof *core);
    if (!core) abort();
    core->sink = sink;
    core->stream_records = true;
    core->finished_max = HF_FINISHED_HOLDS_MAX;
    return core;
}

void hf_core_destroy(hf_core_t *core) {
    if (!core) return;
    for (uint32_t i = 0; i < core->event_count; i++) event_free(core->events[i]);
    for (uint32_t i = 0; i < core->user_count; i++) free(core->users[i].orders.items);
    free(core->events);
    free(core->holds);
    free(core->hold_states);
    free(core->orders);
    free(core->users);
    free(core->event_users);
    free(core->items);
    free(core->strings);
    hf_timer_free(&core->timer);
    hf_map_free(&core->event_ids);
    hf_index_map_free(&core->hold_ids);
    hf_index_map_free(&core->order_ids);
    hf_index_map_free(&core->user_ids);
    hf_pair_map_free(&core->event_user_ids);
    hf_buffer_free(&core->text);
    free(core);
}

void hf_core_set_sink(hf_core_t *core, hf_mutation_sink_t sink) { core->sink = sink; }

void hf_core_set_stream_records(hf_core_t *core, bool wanted) { core->stream_records = wanted; }

/* ---- change numbering: every record emitted is counted; holds, orders and seats keep the
 * number of their newest ---- */

static void emit(hf_core_t *core, const hf_mutation_t *mutation) {
    core->change_count++;
    if (core->sink.emit) core->sink.emit(core->sink.context, mutation);
}

uint64_t hf_core_change_count(const hf_core_t *core) { return core->change_count; }

uint64_t hf_core_seat_change(const hf_event_t *event, uint32_t seat_index) {
    assert(seat_index < event->seat_count);
    uint64_t change = seat_changes_of(event)[seat_index];
    uint64_t created = ((const event_tables_t *)event->internal)->created_change;
    return change > created ? change : created;
}

uint64_t hf_core_hold_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->hold_count);
    return core->hold_states[index].last_change;
}

uint64_t hf_core_order_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->order_count);
    return core->orders[index].last_change;
}

/* ---- records ---- */

/* The definition as JSON, as stored and as read back at start (same shape as the request). */
static void definition_json(hf_buffer_t *out, const hf_event_definition_t *definition) {
    hf_json_t json;
    hf_buffer_reset(out);
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    hf_json_key(&json, "id"); hf_json_string(&json, definition->id);
    hf_json_key(&json, "name"); hf_json_string(&json, definition->name);
    hf_json_key(&json, "currency"); hf_json_string(&json, definition->currency);
    hf_json_key(&json, "hold_ttl_s"); hf_json_seconds(&json, definition->hold_ttl_ms);
    hf_json_key(&json, "max_hold_s"); hf_json_seconds(&json, definition->max_hold_ms);
    hf_json_key(&json, "max_seats_per_user"); hf_json_int(&json, definition->max_seats_per_user);
    hf_json_key(&json, "max_seats_per_hold"); hf_json_int(&json, definition->max_seats_per_hold);
    hf_json_key(&json, "sections");
    hf_json_array_begin(&json);
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        hf_json_object_begin(&json);
        hf_json_key(&json, "id"); hf_json_string(&json, section->id);
        hf_json_key(&json, "price"); hf_json_int(&json, section->price);
        hf_json_key(&json, "rows");
        hf_json_array_begin(&json);
        for (uint32_t r = 0; r < section->row_count; r++) {
            hf_json_object_begin(&json);
            hf_json_key(&json, "id"); hf_json_string(&json, section->rows[r].id);
            hf_json_key(&json, "seats"); hf_json_int(&json, section->rows[r].seats);
            hf_json_object_end(&json);
        }
        hf_json_array_end(&json);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_json_key(&json, "pools");
    hf_json_array_begin(&json);
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        hf_json_object_begin(&json);
        hf_json_key(&json, "id"); hf_json_string(&json, definition->pools[p].id);
        hf_json_key(&json, "capacity"); hf_json_int(&json, definition->pools[p].capacity);
        hf_json_key(&json, "price"); hf_json_int(&json, definition->pools[p].price);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

/* Items as {"seats":[...],"pools":{...}} into core->text, written directly rather than
 * through hf_json: this runs for every hold and order. Seat and pool ids are made of
 * [A-Za-z0-9_.-] (hf_core_id_valid at event creation), so nothing in them needs escaping. */
static const char *items_json(hf_core_t *core, const hf_event_t *event, uint32_t item_offset,
                              uint32_t seat_count, uint32_t pool_count) {
    const hf_item_t *items = core->items + item_offset;
    hf_buffer_t *out = &core->text;
    hf_buffer_reset(out);
    hf_buffer_append(out, "{\"seats\":[", 10);
    for (uint32_t i = 0; i < seat_count; i++) {
        hf_buffer_reserve(out, HF_SEAT_ID_SIZE_MAX + 3); /* a comma and two quotes */
        char *to = out->data + out->length;
        if (i > 0) *to++ = ',';
        *to++ = '"';
        to += seat_id_write(event, seat_row(event, items[i].index), items[i].index, to);
        *to++ = '"';
        out->length = (size_t)(to - out->data);
    }
    hf_buffer_append(out, "],\"pools\":{", 11);
    for (uint32_t i = 0; i < pool_count; i++) {
        const hf_item_t *item = &items[seat_count + i];
        const char *id = event->pools[item->index].id;
        size_t id_length = strlen(id);
        hf_buffer_reserve(out, id_length + 14); /* comma, quotes, colon, 10 digits */
        char *to = out->data + out->length;
        if (i > 0) *to++ = ',';
        *to++ = '"';
        memcpy(to, id, id_length);
        to += id_length;
        *to++ = '"';
        *to++ = ':';
        to += write_decimal(to, item->quantity);
        out->length = (size_t)(to - out->data);
    }
    hf_buffer_append(out, "}}", 2);
    return out->data;
}

void record_event_created(hf_core_t *core, hf_event_t *event,
                          const hf_event_definition_t *definition, hf_time_ms_t now) {
    definition_json(&core->text, definition);
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_CREATE, .at_ms = now,
                              .event_id = definition->id, .text = core->text.data};
    emit(core, &mutation);
    ((event_tables_t *)event->internal)->created_change = core->change_count;
}

/* A seat's new status and version, for live streams: the caller counted the change already
 * (seat_changes) and checked core->stream_records. */
void record_seat(hf_core_t *core, const hf_event_t *event, uint32_t seat_index,
                 uint32_t row_index, hf_time_ms_t now) {
    const hf_seat_t *seat = &event->seats[seat_index];
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    seat_id_write(event, row_index, seat_index, seat_id);
    hf_mutation_t mutation = {.type = HF_MUTATION_SEAT, .at_ms = now, .event_id = event->id,
                              .seat_id = seat_id, .status = seat->status, .version = seat->version};
    emit(core, &mutation);
}

/* A pool's counts after a change, for live streams (the store skips these records). */
void record_pool(hf_core_t *core, const hf_event_t *event, uint32_t pool_index,
                 hf_time_ms_t now) {
    const hf_pool_t *pool = &event->pools[pool_index];
    hf_mutation_t mutation = {.type = HF_MUTATION_POOL, .at_ms = now, .event_id = event->id,
                              .pool_id = pool->id,
                              .available = pool->capacity - pool->held - pool->sold,
                              .held = pool->held, .sold = pool->sold};
    emit(core, &mutation);
}

void record_hold_created(hf_core_t *core, uint32_t hold_index, const char *user_id) {
    const hf_hold_t *hold = &core->holds[hold_index];
    const hf_event_t *event = core->events[hold->event];
    assert(hold->status == HF_HOLD_HELD);
    hf_mutation_t mutation = {.type = HF_MUTATION_HOLD_CREATE, .at_ms = hold->created_at_ms,
                              .event_id = event->id, .hold_id = hold->id, .user_id = user_id,
                              .text = items_json(core, event, hold->item_offset, hold->seat_count,
                                                 hold->pool_count),
                              .total = hold->total, .expires_at_ms = hold->expires_at_ms,
                              .status = HF_HOLD_HELD};
    emit(core, &mutation);
    core->hold_states[hold_index].last_change = core->change_count;
}

void record_hold_updated(hf_core_t *core, uint32_t hold_index, hf_time_ms_t at_ms,
                         const char *user_id) {
    const hf_hold_t *hold = &core->holds[hold_index];
    const char *order_id = hold->order ? core->orders[hold->order - 1].id : NULL;
    hf_mutation_t mutation = {.type = HF_MUTATION_HOLD_UPDATE, .at_ms = at_ms,
                              .event_id = core->events[hold->event]->id, .hold_id = hold->id,
                              .order_id = order_id, .user_id = user_id, .status = hold->status,
                              .expires_at_ms = hold->expires_at_ms};
    emit(core, &mutation);
    core->hold_states[hold_index].last_change = core->change_count;
}

/* One item of a new order: a seat, or a pool line with its quantity. */
static void record_order_item(hf_core_t *core, const hf_event_t *event, const hf_order_t *order,
                              const hf_item_t *item, bool seat) {
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_mutation_t mutation = {.type = HF_MUTATION_ORDER_ITEM, .at_ms = order->created_at_ms,
                              .event_id = event->id, .order_id = order->id, .quantity = 1};
    if (seat) {
        seat_id_write(event, seat_row(event, item->index), item->index, seat_id);
        mutation.seat_id = seat_id;
    } else {
        mutation.pool_id = event->pools[item->index].id;
        mutation.quantity = item->quantity;
    }
    emit(core, &mutation);
}

void record_order_created(hf_core_t *core, uint32_t order_index) {
    hf_order_t *order = &core->orders[order_index];
    const hf_hold_t *hold = order->hold ? &core->holds[order->hold - 1] : NULL;
    const hf_event_t *event = core->events[order->event];
    const char *user_id = hf_core_user_id(core, order->user);
    hf_mutation_t created = {.type = HF_MUTATION_ORDER_CREATE, .at_ms = order->created_at_ms,
                             .event_id = event->id, .order_id = order->id, .user_id = user_id,
                             .hold_id = hold ? hold->id : NULL,
                             .text = items_json(core, event, order->item_offset, order->seat_count,
                                                order->pool_count),
                             .total = order->total, .currency = event->currency,
                             .payment_ref = hf_core_string(core, order->payment_ref),
                             .status = HF_ORDER_CONFIRMED};
    emit(core, &created);
    const hf_item_t *items = core->items + order->item_offset;
    for (uint32_t i = 0; i < order->seat_count + order->pool_count; i++)
        record_order_item(core, event, order, &items[i], i < order->seat_count);
    order->last_change = core->change_count;
}

void record_order_updated(hf_core_t *core, uint32_t order_index, const char *user_id,
                          hf_time_ms_t now) {
    hf_order_t *order = &core->orders[order_index];
    hf_mutation_t mutation = {.type = HF_MUTATION_ORDER_UPDATE, .at_ms = now,
                              .event_id = core->events[order->event]->id,
                              .order_id = order->id, .user_id = user_id, .status = order->status};
    emit(core, &mutation);
    order->last_change = core->change_count;
}
