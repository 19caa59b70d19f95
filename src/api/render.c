/* The JSON shapes of API.md: event summary, seat, hold and order (render.h). */
#include "api/render.h"

#include "api/calendar_render.h"
#include "core/jobs.h"
#include "api/exchange_render.h"

#include <stdio.h>
#include <string.h>

#include "store/rows.h"

/* allocated: the event has allocations (API.md section 14); an event that never had one
 * shows the three counts it always did. */
static void render_counts(hf_json_t *json, const hf_counts_t *counts, bool allocated) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "available");
    hf_json_int(json, counts->available);
    HF_JSON_KEY(json, "held");
    hf_json_int(json, counts->held);
    HF_JSON_KEY(json, "sold");
    hf_json_int(json, counts->sold);
    if (allocated) {
        HF_JSON_KEY(json, "allocated");
        hf_json_int(json, counts->allocated);
    }
    hf_json_object_end(json);
}

static void render_pool(hf_json_t *json, const hf_pool_t *pool, bool allocated) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, pool->id);
    HF_JSON_KEY(json, "capacity");
    hf_json_int(json, pool->capacity);
    HF_JSON_KEY(json, "price");
    hf_json_int(json, pool->price);
    HF_JSON_KEY(json, "available");
    hf_json_int(json, hf_core_pool_available(pool));
    HF_JSON_KEY(json, "held");
    hf_json_int(json, pool->held);
    HF_JSON_KEY(json, "sold");
    hf_json_int(json, pool->sold);
    if (allocated) {
        HF_JSON_KEY(json, "allocated");
        hf_json_int(json, pool->allocated);
    }
    hf_json_object_end(json);
}

/* Whether the event sells: a cancelled event's sales are closed for good (API.md section 13),
 * and it says so and names its job. */
static void render_sales(hf_json_t *json, const hf_core_t *core, const hf_event_t *event) {
    HF_JSON_KEY(json, "sales_open");
    hf_json_bool(json, event->sales_open && !event->cancelled);
    if (!event->cancelled) return;
    HF_JSON_KEY(json, "status");
    hf_json_string(json, "cancelled");
    HF_JSON_KEY(json, "job_id");
    hf_json_string(json, hf_core_job_at(core, event->job - 1)->id);
}

/* "waitlist": {"enabled", "offer_ttl_s"} (API.md section 14), off for an event without one. */
static void render_waitlist_setting(hf_json_t *json, const hf_core_t *core,
                                    const hf_event_t *event) {
    hf_waitlist_setting_t waitlist = hf_core_waitlist_setting(core, event->id);
    HF_JSON_KEY(json, "waitlist");
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "enabled");
    hf_json_bool(json, waitlist.enabled);
    HF_JSON_KEY(json, "offer_ttl_s");
    hf_json_int(json, waitlist.offer_ttl_ms / 1000);
    hf_json_object_end(json);
}

void hf_render_event(hf_json_t *json, const hf_core_t *core, const hf_event_t *event) {
    (void)core;
    bool allocated = hf_core_event_has_allocations(event);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, event->id);
    HF_JSON_KEY(json, "name");
    hf_json_string(json, event->name);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, event->currency);
    HF_JSON_KEY(json, "hold_ttl_s");
    hf_json_seconds(json, event->hold_ttl_ms);
    HF_JSON_KEY(json, "max_hold_s");
    hf_json_seconds(json, event->max_hold_ms);
    HF_JSON_KEY(json, "max_seats_per_user");
    hf_json_int(json, event->max_seats_per_user);
    HF_JSON_KEY(json, "max_seats_per_hold");
    hf_json_int(json, event->max_seats_per_hold);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, event->created_at_ms);
    HF_JSON_KEY(json, "counts");
    render_counts(json, &event->counts, allocated);
    HF_JSON_KEY(json, "sections");
    hf_json_array_begin(json);
    for (uint32_t s = 0; s < event->section_count; s++) {
        const hf_section_t *section = &event->sections[s];
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "id");
        hf_json_string(json, section->id);
        HF_JSON_KEY(json, "price");
        hf_json_int(json, section->price);
        HF_JSON_KEY(json, "counts");
        render_counts(json, &section->counts, allocated);
        HF_JSON_KEY(json, "rows");
        hf_json_array_begin(json);
        for (uint32_t r = section->first_row; r < section->first_row + section->row_count; r++) {
            hf_json_object_begin(json);
            HF_JSON_KEY(json, "id");
            hf_json_string(json, event->rows[r].id);
            HF_JSON_KEY(json, "seats");
            hf_json_int(json, event->rows[r].seat_count);
            hf_json_object_end(json);
        }
        hf_json_array_end(json);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_array_begin(json);
    for (uint32_t p = 0; p < event->pool_count; p++) render_pool(json, &event->pools[p], allocated);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "waiting_room");
    hf_rows_room_render(json, &event->waiting_room, event->waiting_room.enabled);
    render_waitlist_setting(json, core, event);
    render_sales(json, core, event);
    hf_json_object_end(json);
}

void hf_render_seat(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                    uint32_t seat_index) {
    const hf_row_t *row = &event->rows[hf_core_seat_row(event, seat_index)];
    const hf_section_t *section = &event->sections[row->section];
    const hf_seat_t *seat = &event->seats[seat_index];
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(event, seat_index, seat_id);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "id");
    hf_json_string(json, seat_id);
    HF_JSON_KEY(json, "section");
    hf_json_string(json, section->id);
    HF_JSON_KEY(json, "row");
    hf_json_string(json, row->id);
    HF_JSON_KEY(json, "number");
    hf_json_int(json, seat_index - row->first_seat + 1);
    HF_JSON_KEY(json, "price");
    hf_json_int(json, section->price);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_seat_status_name(seat->status));
    HF_JSON_KEY(json, "version");
    hf_json_int(json, seat->version);
    /* A free allocated seat names its allocation (the page shows it on hover): who it is set
     * aside for is no buyer's identity, which a seat never shows. */
    if (seat->status == HF_SEAT_ALLOCATED) {
        HF_JSON_KEY(json, "allocation");
        hf_json_string(
            json, hf_core_allocation_id(core, hf_core_seat_allocation(core, event, seat_index)));
    }
    hf_json_object_end(json);
}

void hf_render_items(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                     uint32_t item_offset, uint32_t seat_count, uint32_t pool_count) {
    const hf_item_t *items = hf_core_items(core, item_offset);
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    HF_JSON_KEY(json, "seats");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < seat_count; i++) {
        hf_core_seat_id(event, items[i].index, seat_id);
        hf_json_string(json, seat_id);
    }
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    for (uint32_t i = 0; i < pool_count; i++) {
        hf_json_key(json, event->pools[items[seat_count + i].index].id);
        hf_json_int(json, items[seat_count + i].quantity);
    }
    hf_json_object_end(json);
}

/* What a hold or an order is on (hf_target_t): an event, or a calendar (API.md section 12),
 * whose holds and orders say "calendar" and "items" instead of "event", "seats" and "pools". */
typedef struct target {
    const hf_event_t *event;       /* NULL for a calendar's */
    const hf_calendar_t *calendar; /* NULL for an event's */
    const char *currency;
} target_t;

static target_t target_of(const hf_core_t *core, uint8_t target, uint32_t index) {
    if (target == HF_TARGET_CALENDAR) {
        const hf_calendar_t *calendar = hf_core_calendar_at(core, index);
        return (target_t){NULL, calendar, calendar->definition.currency};
    }
    const hf_event_t *event = hf_core_event_at(core, index);
    return (target_t){event, NULL, event->currency};
}

static void target_write(hf_json_t *json, const target_t *target) {
    hf_json_key(json, target->calendar ? "calendar" : "event");
    hf_json_string(json, target->calendar ? target->calendar->definition.id : target->event->id);
}

/* A calendar's items are its pool_count (core/calendars.h). */
static void target_items_write(hf_json_t *json, const hf_core_t *core, const target_t *target,
                               uint32_t item_offset, uint32_t seat_count, uint32_t pool_count) {
    if (target->calendar)
        hf_render_calendar_items(json, core, target->calendar, item_offset, pool_count);
    else hf_render_items(json, core, target->event, item_offset, seat_count, pool_count);
}

/* The allocation a hold or order took its inventory from (API.md section 14), when any. */
static void allocation_write(hf_json_t *json, const char *allocation_id) {
    if (!allocation_id) return;
    HF_JSON_KEY(json, "allocation");
    hf_json_string(json, allocation_id);
}

void hf_render_hold(hf_json_t *json, const hf_core_t *core, const hf_hold_t *hold, int64_t now_ms,
                    const bool *capped) {
    const target_t target = target_of(core, hold->target, hold->event);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, hold->id);
    target_write(json, &target);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, hf_core_user_id(core, hold->user));
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_hold_status_name(hold->status));
    target_items_write(json, core, &target, hold->item_offset, hold->seat_count, hold->pool_count);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, hold->total);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, target.currency);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, hold->created_at_ms);
    HF_JSON_KEY(json, "expires_at");
    hf_json_time(json, hold->expires_at_ms);
    int64_t remaining = hold->status == HF_HOLD_HELD ? hold->expires_at_ms - now_ms : 0;
    HF_JSON_KEY(json, "expires_in_ms");
    hf_json_int(json, remaining > 0 ? remaining : 0);
    if (hold->order) {
        HF_JSON_KEY(json, "order_id");
        hf_json_string(json, hf_core_order_at(core, hold->order - 1)->id);
    }
    if (hold->exchange_for)
        hf_render_exchange(json, core, hf_core_order_at(core, hold->exchange_for - 1)->id,
                           hold->total);
    else if (hold->exchange_elsewhere) hf_render_exchange_elsewhere(json, core, hold);
    allocation_write(json, hf_core_allocation_id(core, hold->allocation));
    const char *waitlist_id = hf_core_hold_waitlist_id(core,
                                                       (uint32_t)(hold - hf_core_hold_at(core, 0)));
    if (waitlist_id) {
        HF_JSON_KEY(json, "waitlist_id");
        hf_json_string(json, waitlist_id);
    }
    if (capped) {
        HF_JSON_KEY(json, "capped");
        hf_json_bool(json, *capped);
    }
    hf_json_object_end(json);
}

void hf_render_stored_hold(hf_json_t *json, const hf_core_t *core, const hf_event_t *event,
                           const hf_stored_hold_t *hold, uint8_t status) {
    const hf_hold_request_t *items = &hold->request;
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, items->hold_id);
    HF_JSON_KEY(json, "event");
    hf_json_string(json, event->id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, items->user_id);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_hold_status_name(status));
    HF_JSON_KEY(json, "seats");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < items->seat_count; i++) hf_json_string(json, items->seat_ids[i]);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    for (uint32_t i = 0; i < items->pool_count; i++) {
        hf_json_key(json, items->pools[i].pool_id);
        hf_json_int(json, items->pools[i].quantity);
    }
    hf_json_object_end(json);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, hold->total);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, event->currency);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, hold->created_at_ms);
    HF_JSON_KEY(json, "expires_at");
    hf_json_time(json, hold->expires_at_ms);
    /* Only a released or expired hold is ever forgotten: nothing remains of its time. */
    HF_JSON_KEY(json, "expires_in_ms");
    hf_json_int(json, 0);
    if (items->exchange_for) hf_render_exchange(json, core, items->exchange_for, hold->total);
    allocation_write(json, items->allocation_id);
    hf_json_object_end(json);
}

void hf_render_order(hf_json_t *json, const hf_core_t *core, const hf_order_t *order) {
    const target_t target = target_of(core, order->target, order->event);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, order->id);
    target_write(json, &target);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, hf_core_user_id(core, order->user));
    HF_JSON_KEY(json, "reservation_id");
    if (order->hold) hf_json_string(json, hf_core_hold_at(core, order->hold - 1)->id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_order_status_name(order->status));
    target_items_write(json, core, &target, order->item_offset, order->seat_count,
                       order->pool_count);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, order->total);
    HF_JSON_KEY(json, "currency");
    hf_json_string(json, target.currency);
    HF_JSON_KEY(json, "payment_ref");
    const char *payment_ref = hf_core_string(core, order->payment_ref);
    if (payment_ref) hf_json_string(json, payment_ref);
    else hf_json_null(json);
    /* The refund a paid order's cancel owes (API.md section 4), else null. */
    HF_JSON_KEY(json, "refund_id");
    if (order->refund) hf_json_string(json, hf_core_refund_at(core, order->refund - 1)->id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, order->created_at_ms);
    /* Exchanges (API.md section 13): the order this one replaced, and the one that replaced
     * this one (status exchanged). */
    const char *replaces = order->replaces ? hf_core_order_at(core, order->replaces - 1)->id
                                           : hf_core_string(core, order->replaces_elsewhere);
    const char *replaced_by = order->replaced_by
                                  ? hf_core_order_at(core, order->replaced_by - 1)->id
                                  : hf_core_string(core, order->replaced_by_elsewhere);
    if (replaces) {
        HF_JSON_KEY(json, "replaces");
        hf_json_string(json, replaces);
    }
    if (replaced_by) {
        HF_JSON_KEY(json, "replaced_by");
        hf_json_string(json, replaced_by);
    }
    allocation_write(json, hf_core_allocation_id(core, order->allocation));
    /* An order of a cancelled event with an open rebooking offer (API.md section 13). */
    const char *offer_id = NULL;
    hf_time_ms_t offer_expires_at_ms = 0;
    if (hf_core_order_rebooking(core, order, &offer_id, &offer_expires_at_ms)) {
        HF_JSON_KEY(json, "rebooking");
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "reservation_id");
        hf_json_string(json, offer_id);
        HF_JSON_KEY(json, "expires_at");
        hf_json_time(json, offer_expires_at_ms);
        hf_json_object_end(json);
    }
    hf_json_object_end(json);
}
