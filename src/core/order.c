/* Orders: a hold committed, an order cancelled, and bookings (an order straight from
 * available seats, without a hold). */
#include "core/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookups ---- */

static bool order_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    return id_field_equal(key->core->orders.slots[index].id, &key->id);
}

static bool order_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->orders.ids, id->hash, order_key_match, &key, index);
}

const hf_order_t *hf_core_order_find(const hf_core_t *core, const char *order_id, uint32_t *index) {
    uint32_t found;
    if (!order_id) return NULL;
    text_key_t key = text_key_of(order_id, strlen(order_id));
    if (!order_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->orders.slots[found];
}

const hf_order_t *hf_core_order_at(const hf_core_t *core, uint32_t index) {
    return index < core->orders.count ? &core->orders.slots[index] : NULL;
}

const char *hf_core_string(const hf_core_t *core, uint32_t offset) {
    return offset == NO_STRING ? NULL : core->strings + offset;
}

/* ---- orders ---- */

bool order_id_taken(const hf_core_t *core, const char *id, text_key_t *key) {
    if (!id) return true;
    *key = server_id_key(id);
    uint32_t index;
    return order_index_find(core, key, &index);
}

uint32_t order_allocate(hf_core_t *core, const text_key_t *order_id, uint32_t event, uint32_t user,
                        hf_time_ms_t now, uint8_t target) {
    core->orders.slots = grow(core->orders.slots, &core->orders.capacity, core->orders.count + 1,
                              sizeof *core->orders.slots);
    uint32_t index = core->orders.count++;
    hf_order_t *order = &core->orders.slots[index];
    memset(order, 0, sizeof *order);
    text_key_t key = server_id_copy(order->id, order_id);
    order->event = event;
    order->user = user;
    order->created_at_ms = now;
    order->payment_ref = NO_STRING;
    order->replaces_elsewhere = order->replaced_by_elsewhere = NO_STRING;
    order->target = target;
    hf_index_map_insert(&core->orders.ids, key.hash, index);
    user_order_push(&core->users.slots[user], index);
    if (target == HF_TARGET_CALENDAR) calendar_order_listed(core, event, index);
    else index_list_push(&((event_tables_t *)core->events.slots[event]->internal)->orders, index);
    return index;
}

void order_take(hf_core_t *core, uint32_t order_index, hf_time_ms_t now, bool report) {
    hf_order_t *order = &core->orders.slots[order_index];
    if (order->target == HF_TARGET_CALENDAR) {
        calendar_order_take(core, order_index, now, report);
        return;
    }
    hf_event_t *event = core->events.slots[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    order->owner = event_user_intern(core, order->event, order->user);
    event_user_t *owner = owner_record(core, order->owner);
    owner->sold_units += item_units(items, order->seat_count, order->pool_count);
    for (uint32_t i = 0; i < order->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_SOLD, order_index + 1, now, report);
    for (uint32_t i = 0; i < order->pool_count; i++)
        pool_move(core, event, &items[order->seat_count + i], 0, 1, order->allocation, now, report);
}

/* An order committed without a payment refuses any payment that comes later, since none of
 * them was recorded for it. */
bool order_same_payment(const hf_core_t *core, const hf_order_t *order, const char *payment_ref) {
    if (!payment_ref || !*payment_ref) return true;
    const char *own = hf_core_string(core, order->payment_ref);
    return own && strcmp(own, payment_ref) == 0;
}

hf_error_t hf_core_commit_refunding(hf_core_t *core, const char *hold_id, const char *user_id,
                                    const char *order_id, const char *payment_ref,
                                    const char *refund_id, hf_time_ms_t now,
                                    uint32_t *order_index) {
    command_at(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_CONFIRMED) {
        *order_index = hold->order - 1;
        return order_same_payment(core, &core->orders.slots[hold->order - 1], payment_ref)
                   ? HF_OK
                   : HF_ERROR_ALREADY_CONFIRMED;
    }
    if (hold->status == HF_HOLD_RELEASED) return HF_ERROR_HOLD_RELEASED;
    if (hold->status == HF_HOLD_EXPIRED) return HF_ERROR_HOLD_EXPIRED;
    text_key_t order_key, refund_key;
    if (order_id_taken(core, order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    /* A remote exchange commits only as its decision, once its old order is locked. */
    if (hold->exchange_elsewhere) return HF_ERROR_ORDER_NOT_ACTIVE;
    if (hold->exchange_for) {
        bool refunding = refund_id && !refund_id_taken(core, refund_id, &refund_key);
        return exchange_commit(core, index, &order_key, payment_ref, refunding ? &refund_key : NULL,
                               user_id, now, order_index);
    }
    /* The hold's seats move straight from held to sold: release them without reporting, then
     * take them for the order, which reports each seat once. */
    hold_finish(core, index, HF_HOLD_CONFIRMED, now, false);
    *order_index = order_from_hold(core, index, &order_key, payment_ref, user_id, now);
    return HF_OK;
}

hf_error_t hf_core_commit(hf_core_t *core, const char *hold_id, const char *user_id,
                          const char *order_id, const char *payment_ref, hf_time_ms_t now,
                          uint32_t *order_index) {
    return hf_core_commit_refunding(core, hold_id, user_id, order_id, payment_ref, NULL, now,
                                    order_index);
}

uint32_t order_from_hold(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                         const char *payment_ref, const char *user_id, hf_time_ms_t now) {
    hf_hold_t *hold = hold_of(core, hold_index);
    assert(hold->status == HF_HOLD_CONFIRMED);
    uint32_t order = order_allocate(core, order_key, hold->event, hold->user, now, hold->target);
    hf_order_t *record = &core->orders.slots[order];
    record->hold = hold_index + 1;
    record->total = hold->total;
    record->item_offset = hold->item_offset;
    record->seat_count = hold->seat_count;
    record->pool_count = hold->pool_count;
    record->allocation = hold->allocation;
    if (payment_ref && *payment_ref)
        record->payment_ref = string_store(core, payment_ref, strlen(payment_ref));
    hold->order = order + 1;
    record->replaces = hold->exchange_for;
    /* A remote exchange's new order replaces an order of another unit (core/locks.h). */
    if (hold->exchange_elsewhere) record->replaces_elsewhere = hold->exchange_elsewhere - 1;
    record_order_created(core, order);
    record_hold_updated(core, hold_index, now, user_id);
    order_take(core, order, now, true);
    return order;
}

void order_cancel_apply(hf_core_t *core, uint32_t index, const text_key_t *refund_key,
                        uint8_t reason, const char *user_id, hf_time_ms_t now) {
    hf_order_t *order = &core->orders.slots[index];
    order->status = HF_ORDER_CANCELLED;
    /* Money in hand is never forgotten: the refund is owed in the same step, and its record
     * comes before the order's, which names it. */
    if (order->payment_ref != NO_STRING) refund_of_cancel(core, index, refund_key, reason, now);
    if (order->target == HF_TARGET_CALENDAR) {
        record_order_updated(core, index, user_id, now);
        calendar_order_cancel(core, index, now);
        return;
    }
    hf_event_t *event = core->events.slots[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    record_order_updated(core, index, user_id, now);
    event_user_t *owner = owner_record(core, order->owner);
    owner->sold_units -= item_units(items, order->seat_count, order->pool_count);
    waitlist_came_free(core, order->event, items, order->seat_count, order->pool_count);
    for (uint32_t i = 0; i < order->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, now, true);
    for (uint32_t i = 0; i < order->pool_count; i++)
        pool_move(core, event, &items[order->seat_count + i], 0, -1, order->allocation, now, true);
    waitlist_settle(core, now);
}

hf_error_t hf_core_cancel(hf_core_t *core, const char *order_id, const char *user_id,
                          const char *refund_id, hf_time_ms_t now) {
    command_at(core, now);
    uint32_t index;
    hf_order_t *order = (hf_order_t *)hf_core_order_find(core, order_id, &index);
    if (!order) return HF_ERROR_ORDER_NOT_FOUND;
    if (!user_id || !user_has_id(core, order->user, user_id)) return HF_ERROR_NOT_OWNER;
    if (order->status == HF_ORDER_CANCELLED) return HF_OK;
    /* Locked: an exchange of another unit may have replaced it already (core/locks.h). */
    if (order->status == HF_ORDER_EXCHANGED || exchange_order_locked(core, index))
        return HF_ERROR_ORDER_NOT_ACTIVE;
    bool paid = order->payment_ref != NO_STRING;
    text_key_t refund_key;
    if (paid && refund_id_taken(core, refund_id, &refund_key)) return HF_ERROR_INVALID_REQUEST;
    order_cancel_apply(core, index, &refund_key, HF_REFUND_ORDER_CANCELLED, user_id, now);
    return HF_OK;
}

/* ---- bookings: an order straight from available seats ---- */

static hf_error_t check_versions(hf_core_t *core, const hf_event_t *event,
                                 const hf_hold_request_t *request, hf_error_detail_t *detail) {
    if (!request->seat_versions && request->seat_count > 0) return invalid(detail, "seats");
    uint32_t moved = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        const hf_seat_t *seat = &event->seats[core->scratch.seats[i]];
        if (seat_free_for(event, core->scratch.seats[i], core->scratch.allocation) &&
            seat->version == request->seat_versions[i])
            continue;
        if (detail) detail->items[moved] = i;
        moved++;
    }
    if (detail) detail->item_count = moved;
    if (moved && detail)
        detail->observed_change = seats_observed_change(core, event, request->seat_count);
    return moved ? HF_ERROR_VERSION_CONFLICT : HF_OK;
}

/* Checks a booking; on success *order_key is the new id's key and *user the user named. */
static hf_error_t book_check(hf_core_t *core, const hf_hold_request_t *request,
                             uint32_t event_index, const char *order_id, text_key_t *order_key,
                             user_ref_t *user, hf_error_detail_t *detail) {
    const hf_event_t *event = core->events.slots[event_index];
    core->scratch.exchange_order = 0; /* a booking exchanges nothing */
    if (request->best_count > 0) return invalid(detail, "best_available");
    size_t user_length = request->user_id ? strlen(request->user_id) : 0;
    hf_error_t error = check_request_shape(event, request, user_length, detail);
    if (!error) error = resolve_seats(core, event, request, detail);
    if (!error) error = resolve_pools(core, event, request, detail);
    if (!error) error = check_sales_open(event, request);
    if (!error) error = allocation_resolve(core, event_index, request);
    if (!error) error = check_versions(core, event, request, detail);
    if (error) return error;
    if (order_id_taken(core, order_id, order_key))
        return invalid_because(detail, "id", HF_FAULT_ID_TAKEN);
    *user = user_ref_of(core, request->user_id);
    const event_user_t *owner = event_user_find(core, event_index, user->index);
    hf_hold_request_t plain = *request;
    plain.replace_existing = false;
    error = check_available(core, event, &plain, owner, detail);
    return error ? error : check_user_limit(event, &plain, owner, 0, detail);
}

hf_error_t hf_core_book(hf_core_t *core, const hf_hold_request_t *request, const char *order_id,
                        const char *payment_ref, hf_time_ms_t now, uint32_t *order_index,
                        hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    text_key_t order_key;
    user_ref_t user;
    hf_error_t error = book_check(core, request, event_index, order_id, &order_key, &user, detail);
    if (error) return error;
    const hf_event_t *event = core->events.slots[event_index];
    uint32_t index = order_allocate(core, &order_key, event_index, user_intern(core, &user), now,
                                    HF_TARGET_EVENT);
    hf_order_t *order = &core->orders.slots[index];
    order->seat_count = core->scratch.seat_count;
    order->pool_count = request->pool_count;
    order->item_offset = item_allocate(core, order->seat_count + order->pool_count);
    order->total = items_fill(core, event, request, order->item_offset);
    order->allocation = core->scratch.allocation;
    if (payment_ref && *payment_ref)
        order->payment_ref = string_store(core, payment_ref, strlen(payment_ref));
    record_order_created(core, index);
    order_take(core, index, now, true);
    *order_index = index;
    return HF_OK;
}

const uint32_t *hf_core_event_orders(const hf_core_t *core, uint32_t event_index, uint32_t *count) {
    assert(event_index < core->events.count);
    const event_tables_t *tables = core->events.slots[event_index]->internal;
    const index_list_t *orders = &tables->orders;
    *count = orders->count;
    return orders->count ? orders->items : NULL;
}
