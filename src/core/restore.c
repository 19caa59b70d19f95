/* Restore: the state loaded back from the store at start (events, holds, orders, seat
 * versions), re-applied with its original times and statuses. Nothing is emitted: the store
 * has it all already. */
#include "core/internal.h"

#include <string.h>

/* Resolves stored items into the scratch arrays; stored data that does not resolve is a
 * corrupt store, reported as an invalid request. */
static hf_error_t restore_resolve(hf_core_t *core, const hf_hold_request_t *request,
                                  uint32_t *event_index) {
    const hf_event_t *event = hf_core_event(core, request->event_id, event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (request->seat_count + request->pool_count > HF_HOLD_ITEMS_MAX)
        return HF_ERROR_INVALID_REQUEST;
    hf_error_t error = resolve_seats(core, event, request, NULL);
    if (!error) error = resolve_pools(core, event, request, NULL);
    if (!error) error = allocation_resolve(core, *event_index, request);
    return error;
}

/* Versions are not stored: they are counted from the holds and orders (internal.h's
 * RESTORE_ENDED_HOLD_SEAT_CHANGES). */
#define ENDED_HOLD_SEAT_CHANGES RESTORE_ENDED_HOLD_SEAT_CHANGES

static void restore_versions(hf_core_t *core, uint32_t event_index, uint32_t item_offset,
                             uint32_t seat_count, uint32_t changes) {
    hf_event_t *event = core->events.slots[event_index];
    const hf_item_t *items = core->items + item_offset;
    for (uint32_t i = 0; i < seat_count; i++) event->seats[items[i].index].version += changes;
}

/* What restore and revive share: a stored hold's items resolved, its id new, a held one's seats
 * free; then a slot with its stored times and total, status held until the caller decides. */
hf_error_t stored_hold_place(hf_core_t *core, const hf_stored_hold_t *stored, uint32_t *index) {
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->request, &event_index);
    if (error) return error;
    if (!stored->request.user_id || !*stored->request.user_id) return HF_ERROR_INVALID_REQUEST;
    text_key_t hold_id;
    if (hold_id_taken(core, stored->request.hold_id, &hold_id)) return HF_ERROR_INVALID_REQUEST;
    const hf_event_t *event = core->events.slots[event_index];
    if (stored->status == HF_HOLD_HELD) {
        for (uint32_t i = 0; i < stored->request.seat_count; i++)
            if (!seat_free_for(event, core->scratch.seats[i], core->scratch.allocation))
                return HF_ERROR_SEATS_UNAVAILABLE;
    }
    user_ref_t user = user_ref_of(core, stored->request.user_id);
    *index = hold_allocate(core, &stored->request, &hold_id, event_index, &user);
    hf_hold_t *hold = hold_of(core, *index);
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = stored->created_at_ms;
    hold->expires_at_ms = stored->expires_at_ms;
    hold->total = stored->total;
    uint32_t order_index;
    if (stored->request.exchange_for &&
        hf_core_order_find(core, stored->request.exchange_for, &order_index))
        hold->exchange_for = order_index + 1;
    return HF_OK;
}

/* Whether a stored exchange hold's old order is still to come (orders load after holds):
 * the hold then waits for it (exchange/), a held one taking nothing until then. */
static bool exchange_waits(hf_core_t *core, const hf_stored_hold_t *stored, uint32_t index) {
    if (!stored->request.exchange_for || hold_of(core, index)->exchange_for) return false;
    exchange_restore_wait(core, index, stored->request.exchange_for,
                          stored->status == HF_HOLD_HELD);
    return true;
}

hf_error_t hf_core_restore_event(hf_core_t *core, const hf_event_definition_t *definition,
                                 hf_time_ms_t created_at_ms) {
    return event_add(core, definition, created_at_ms, NULL);
}

hf_error_t hf_core_restore_sales(hf_core_t *core, const char *event_id, bool open) {
    uint32_t index;
    if (!hf_core_event(core, event_id, &index)) return HF_ERROR_EVENT_NOT_FOUND;
    core->events.slots[index]->sales_open = open;
    return HF_OK;
}

hf_error_t hf_core_restore_hold(hf_core_t *core, const hf_stored_hold_t *stored) {
    uint32_t index;
    hf_error_t error = stored_hold_place(core, stored, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    restore_versions(core, hold->event, hold->item_offset, hold->seat_count,
                     stored->status == HF_HOLD_HELD ? 1 : ENDED_HOLD_SEAT_CHANGES);
    bool waiting = exchange_waits(core, stored, index);
    if (!waiting && hold->exchange_for) exchange_restore_versions(core, index);
    if (stored->status == HF_HOLD_HELD && !waiting)
        hold_take(core, index, stored->created_at_ms, false);
    else if (stored->status != HF_HOLD_HELD) hold->status = stored->status;
    if (hold_status_finished(hold->status)) finished_push(core, index);
    return HF_OK;
}

hf_error_t hf_core_restore_forgotten_hold(hf_core_t *core, const hf_stored_hold_t *stored) {
    if (!hold_status_finished(stored->status)) return HF_ERROR_INVALID_REQUEST;
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->request, &event_index);
    if (error) return error;
    hf_event_t *event = core->events.slots[event_index];
    ((event_tables_t *)event->internal)->used = true;
    for (uint32_t i = 0; i < stored->request.seat_count; i++)
        event->seats[core->scratch.seats[i]].version += ENDED_HOLD_SEAT_CHANGES;
    if (stored->request.exchange_for)
        exchange_restore_forgotten(core, stored->request.exchange_for, event_index,
                                   core->scratch.seats, stored->request.seat_count);
    return HF_OK;
}

hf_error_t hf_core_restore_order(hf_core_t *core, const hf_stored_order_t *stored) {
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->items, &event_index);
    if (error) return error;
    text_key_t order_key;
    if (order_id_taken(core, stored->order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    const hf_event_t *event = core->events.slots[event_index];
    if (stored->status > HF_ORDER_EXCHANGED) return HF_ERROR_INVALID_REQUEST;
    if (stored->status == HF_ORDER_CONFIRMED) {
        for (uint32_t i = 0; i < stored->items.seat_count; i++)
            if (!seat_free_for(event, core->scratch.seats[i], core->scratch.allocation))
                return HF_ERROR_SEATS_UNAVAILABLE;
    }
    uint32_t hold_index = 0;
    if (stored->hold_id && !hf_core_hold_find(core, stored->hold_id, &hold_index))
        return HF_ERROR_HOLD_NOT_FOUND;
    uint32_t index = order_allocate(core, &order_key, event_index,
                                    user_intern_id(core, stored->items.user_id),
                                    stored->created_at_ms, HF_TARGET_EVENT);
    hf_order_t *order = &core->orders.slots[index];
    order->total = stored->total;
    order->seat_count = stored->items.seat_count;
    order->pool_count = stored->items.pool_count;
    order->allocation = core->scratch.allocation;
    order->item_offset = item_allocate(core, order->seat_count + order->pool_count);
    hf_item_t *items = core->items + order->item_offset;
    for (uint32_t i = 0; i < order->seat_count; i++)
        items[i] = (hf_item_t){core->scratch.seats[i], 0};
    for (uint32_t i = 0; i < order->pool_count; i++)
        items[order->seat_count + i] = (hf_item_t){core->scratch.pools[i],
                                                   stored->items.pools[i].quantity};
    if (stored->payment_ref && *stored->payment_ref)
        order->payment_ref = string_store(core, stored->payment_ref, strlen(stored->payment_ref));
    if (stored->hold_id) {
        order->hold = hold_index + 1;
        core->holds.slots[hold_index].order = index + 1;
    }
    order->status = stored->status;
    /* A booking sold its seats itself (a committed hold's change is counted with the hold);
     * a cancel made them available again, and so did an exchange's commit, or moved them to
     * the new order that keeps them (one change either way: the exchange hold changed none
     * of the seats it keeps). An order made at or after its hold's expiry is a late
     * payment's (payment.c): the hold expired first, then its seats were sold, one change
     * more than a commit in time. */
    bool late = stored->hold_id &&
                stored->created_at_ms >= core->holds.slots[hold_index].expires_at_ms;
    uint32_t changes = (stored->hold_id ? 0 : 1) + (late ? 1 : 0) +
                       (stored->status == HF_ORDER_CANCELLED ? 1 : 0) +
                       (stored->status == HF_ORDER_EXCHANGED ? 1 : 0);
    restore_versions(core, event_index, order->item_offset, order->seat_count, changes);
    if (stored->status == HF_ORDER_CONFIRMED) order_take(core, index, stored->created_at_ms, false);
    exchange_restore_orders(core, stored->replaces, stored->replaced_by, index);
    return HF_OK;
}

/* Links two orders of an exchange: the old one replaced by the new one. */
static void exchange_link(hf_core_t *core, uint32_t old_index, uint32_t new_index) {
    hf_order_t *old = &core->orders.slots[old_index], *new = &core->orders.slots[new_index];
    new->replaces = old_index + 1;
    new->replaces_elsewhere = NO_STRING;
    /* An exchange across owners decided and not finished leaves the old order confirmed
     * (core/locks.h): it is replaced once its finish says so. */
    if (old->status != HF_ORDER_EXCHANGED) return;
    old->replaced_by = new_index + 1;
    old->replaced_by_elsewhere = NO_STRING;
}

/* Either order of an exchange may be loaded first (units load one by one): the second one
 * links both; one whose other side is not here keeps that side's id. */
void exchange_restore_orders(hf_core_t *core, const char *replaces, const char *replaced_by,
                             uint32_t index) {
    uint32_t other;
    if (replaces && hf_core_order_find(core, replaces, &other)) exchange_link(core, other, index);
    else if (replaces)
        core->orders.slots[index].replaces_elsewhere = string_store(core, replaces,
                                                                    strlen(replaces));
    if (replaced_by && hf_core_order_find(core, replaced_by, &other))
        exchange_link(core, index, other);
    else if (replaced_by)
        core->orders.slots[index].replaced_by_elsewhere = string_store(core, replaced_by,
                                                                       strlen(replaced_by));
    exchange_restore_link(core, core->orders.slots[index].id, index);
}

hf_error_t hf_core_restore_seat(hf_core_t *core, const char *event_id, const char *seat_id,
                                uint32_t version) {
    uint32_t event_index, seat;
    const hf_event_t *event = hf_core_event(core, event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (!hf_core_seat_find(event, seat_id, &seat)) return HF_ERROR_SEAT_NOT_FOUND;
    core->events.slots[event_index]->seats[seat].version = version;
    return HF_OK;
}
