/* Calendar holds and orders loaded back from the store at start, and forgotten holds revived:
 * re-applied with their stored times and statuses, nothing emitted. Spans are not checked
 * against the past or the horizon (they were when made); an item a store hands back that
 * names no resource, or a span reversed, is a corrupt store (HF_ERROR_INVALID_REQUEST). */
#include "core/calendar/internal.h"

#include <string.h>

/* The stored items resolved into core->calendars->scratch, their totals from the prices. */
static hf_error_t stored_items_resolve(hf_core_t *core, const hf_calendar_hold_request_t *request,
                                       uint32_t *calendar_index) {
    const hf_calendar_t *calendar = hf_core_calendar(core, request->calendar_id, calendar_index);
    if (!calendar) return HF_ERROR_CALENDAR_NOT_FOUND;
    if (request->item_count == 0 || request->item_count > HF_CALENDAR_HOLD_ITEMS_MAX ||
        !request->user_id || !*request->user_id)
        return HF_ERROR_INVALID_REQUEST;
    calendars_t *calendars = core->calendars;
    for (uint32_t i = 0; i < request->item_count; i++) {
        const hf_calendar_item_request_t *asked = &request->items[i];
        int32_t resource = hf_core_resource_find(calendar, asked->resource_id);
        if (resource < 0) return HF_ERROR_RESOURCE_NOT_FOUND;
        const hf_resource_definition_t *definition = &calendar->definition.resources[resource];
        uint32_t quantity = asked->quantity ? asked->quantity : 1;
        if (asked->from >= asked->to || quantity > definition->capacity)
            return HF_ERROR_INVALID_REQUEST;
        int64_t steps = asked->to - asked->from;
        if (calendar->definition.unit == HF_CALENDAR_MINUTE)
            steps /= calendar->definition.granularity_min;
        calendars->scratch[i] = (hf_calendar_item_t){(uint32_t)resource, quantity, asked->from,
                                                     asked->to,
                                                     definition->price * steps * quantity};
    }
    return HF_OK;
}

/* A slot for a stored hold, held until the caller decides its status. */
static hf_error_t stored_hold_slot(hf_core_t *core, const hf_stored_calendar_hold_t *stored,
                                   uint32_t *index) {
    uint32_t calendar_index;
    hf_error_t error = stored_items_resolve(core, &stored->request, &calendar_index);
    if (error) return error;
    text_key_t hold_key;
    if (hold_id_taken(core, stored->request.hold_id, &hold_key)) return HF_ERROR_INVALID_REQUEST;
    user_ref_t user = user_ref_of(core, stored->request.user_id);
    *index = hold_slot_take(core, 0);
    hf_hold_t *hold = hold_of(core, *index);
    text_key_t key = server_id_copy(hold->id, &hold_key);
    hf_index_map_insert(&core->holds.ids, key.hash, *index);
    hold->target = HF_TARGET_CALENDAR;
    hold->event = calendar_index;
    hold->user = user_intern(core, &user);
    hold->pool_count = stored->request.item_count;
    hold->item_offset = calendar_hold_items(core, *index, hold->pool_count);
    calendar_items_fill(core, hold->item_offset, hold->pool_count);
    hold->total = stored->total;
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = stored->created_at_ms;
    hold->expires_at_ms = stored->expires_at_ms;
    /* An exchange hold's old order, or a wait for it (orders load after holds): a calendar
     * hold takes all its spans either way, so it only waits for the link. */
    uint32_t order_index;
    const char *old_id = stored->request.exchange_for;
    if (old_id && hf_core_order_find(core, old_id, &order_index))
        hold->exchange_for = order_index + 1;
    else if (old_id) exchange_restore_wait(core, *index, old_id, false);
    return HF_OK;
}

hf_error_t hf_core_restore_calendar_hold(hf_core_t *core, const hf_stored_calendar_hold_t *stored) {
    if (stored->status > HF_HOLD_EXPIRED) return HF_ERROR_INVALID_REQUEST;
    uint32_t index;
    hf_error_t error = stored_hold_slot(core, stored, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (stored->status == HF_HOLD_HELD)
        calendar_hold_take(core, index, stored->created_at_ms, false);
    else hold->status = stored->status;
    if (hold_status_finished(hold->status)) finished_push(core, index);
    return HF_OK;
}

hf_error_t hf_core_revive_calendar_hold(hf_core_t *core, const hf_stored_calendar_hold_t *stored,
                                        uint32_t *index) {
    if (!hold_status_finished(stored->status)) return HF_ERROR_INVALID_REQUEST;
    uint32_t revived;
    hf_error_t error = stored_hold_slot(core, stored, &revived);
    if (error) return error;
    hold_of(core, revived)->status = stored->status;
    finished_push(core, revived); /* as hf_core_revive_hold: the most recently asked for */
    *index = revived;
    return HF_OK;
}

hf_error_t hf_core_restore_calendar_order(hf_core_t *core,
                                          const hf_stored_calendar_order_t *stored) {
    uint32_t calendar_index;
    hf_error_t error = stored_items_resolve(core, &stored->items, &calendar_index);
    if (error) return error;
    if (stored->status > HF_ORDER_EXCHANGED) return HF_ERROR_INVALID_REQUEST;
    text_key_t order_key;
    if (order_id_taken(core, stored->order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    uint32_t hold_index = 0;
    if (stored->hold_id && !hf_core_hold_find(core, stored->hold_id, &hold_index))
        return HF_ERROR_HOLD_NOT_FOUND;
    uint32_t index = order_allocate(core, &order_key, calendar_index,
                                    user_intern_id(core, stored->items.user_id),
                                    stored->created_at_ms, HF_TARGET_CALENDAR);
    hf_order_t *order = &core->orders.slots[index];
    order->total = stored->total;
    order->pool_count = stored->items.item_count;
    order->item_offset = calendar_items_allocate(core, order->pool_count);
    calendar_items_fill(core, order->item_offset, order->pool_count);
    if (stored->payment_ref && *stored->payment_ref)
        order->payment_ref = string_store(core, stored->payment_ref, strlen(stored->payment_ref));
    if (stored->hold_id) {
        order->hold = hold_index + 1;
        core->holds.slots[hold_index].order = index + 1;
    }
    order->status = stored->status;
    if (stored->status == HF_ORDER_CONFIRMED) calendar_order_restore(core, index);
    exchange_restore_orders(core, stored->replaces, stored->replaced_by, index);
    return HF_OK;
}
