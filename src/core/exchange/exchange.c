/* Exchange holds (API.md section 13, within one node): a hold that names a confirmed order of
 * its user, whose commit swaps the two orders in one step. The hold's checks and its taking
 * and giving back of seats branch here from hold.c and calendar/ (internal.h, "exchange/");
 * this file has what is the exchange's own: which items a hold keeps of its old order, the
 * swap of the commit and the rebooking offer a cancel job places (the restore of exchange
 * holds, whose old orders are loaded after them, is restore.c's). */
#include "core/calendar/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the old order ---- */

hf_error_t exchange_order_check(const hf_core_t *core, const char *order_id, const char *user_id,
                                uint32_t *order_index) {
    const hf_order_t *order = hf_core_order_find(core, order_id, order_index);
    if (!order) return HF_ERROR_ORDER_NOT_FOUND;
    if (!user_id || !user_has_id(core, order->user, user_id)) return HF_ERROR_NOT_OWNER;
    if (order->status != HF_ORDER_CONFIRMED) return HF_ERROR_ORDER_NOT_ACTIVE;
    return HF_OK;
}

const hf_order_t *exchange_old_order(const hf_core_t *core, const hf_hold_t *hold) {
    if (hold->exchange_for == 0) return NULL;
    const hf_order_t *old = &core->orders.slots[hold->exchange_for - 1];
    return old->target == hold->target && old->event == hold->event ? old : NULL;
}

bool exchange_seat_kept(const hf_core_t *core, const hf_order_t *old, uint32_t seat_index) {
    const hf_item_t *items = core->items + old->item_offset;
    for (uint32_t i = 0; i < old->seat_count; i++)
        if (items[i].index == seat_index) return true;
    return false;
}

uint32_t exchange_pool_kept(const hf_core_t *core, const hf_order_t *old, uint32_t pool_index,
                            uint32_t requested) {
    const hf_item_t *items = core->items + old->item_offset + old->seat_count;
    for (uint32_t i = 0; i < old->pool_count; i++)
        if (items[i].index == pool_index)
            return items[i].quantity < requested ? items[i].quantity : requested;
    return 0;
}

uint32_t exchange_kept_units(const hf_core_t *core, const hf_hold_t *hold) {
    if (hold->target != HF_TARGET_EVENT) return 0;
    const hf_order_t *old = exchange_old_order(core, hold);
    if (!old) return 0;
    const hf_item_t *items = core->items + hold->item_offset;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        kept += exchange_seat_kept(core, old, items[i].index);
    for (uint32_t i = hold->seat_count; i < hold->seat_count + hold->pool_count; i++)
        kept += exchange_pool_kept(core, old, items[i].index, items[i].quantity);
    return kept;
}

uint32_t exchange_order_units(const hf_core_t *core, const hf_order_t *order) {
    return item_units(core->items + order->item_offset, order->seat_count, order->pool_count);
}

/* ---- the commit ---- */

/* Whether the new hold (on the old order's event) has the seat: then the new order takes it
 * straight from the old one. */
static bool hold_has_seat(const hf_core_t *core, const hf_hold_t *hold, uint32_t seat_index) {
    if (hold->target != HF_TARGET_EVENT) return false;
    const hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        if (items[i].index == seat_index) return true;
    return false;
}

/* The old order's seats, units and spans given back, but for the seats the new hold (on the
 * same event) keeps, which its order takes next. */
static void old_order_give_back(hf_core_t *core, uint32_t old_index, const hf_hold_t *hold,
                                hf_time_ms_t now) {
    hf_order_t *old = &core->orders.slots[old_index];
    if (old->target == HF_TARGET_CALENDAR) {
        calendar_order_cancel(core, old_index, now);
        return;
    }
    bool same_event = hold && hold->target == HF_TARGET_EVENT && hold->event == old->event;
    hf_event_t *event = core->events.slots[old->event];
    const hf_item_t *items = core->items + old->item_offset;
    owner_record(core, old->owner)->sold_units -= exchange_order_units(core, old);
    /* What comes free goes to the waitlist first (settled once the new order is made). */
    waitlist_came_free(core, old->event, items, old->seat_count, old->pool_count);
    for (uint32_t i = 0; i < old->seat_count; i++)
        if (!same_event || !hold_has_seat(core, hold, items[i].index))
            seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, now, true);
    for (uint32_t i = 0; i < old->pool_count; i++)
        pool_move(core, event, &items[old->seat_count + i], 0, -1, old->allocation, now, true);
}

/* The old order's record: status exchanged, naming the new order (whose id is its key: the
 * new order is made after this record, which the store must write first, since it frees the
 * old order's seats for the new order's rows). */
static void record_old_order(hf_core_t *core, uint32_t old_index, const char *new_id,
                             bool elsewhere, const char *user_id, hf_time_ms_t now) {
    hf_order_t *old = &core->orders.slots[old_index];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_ORDER_UPDATE,
        .at_ms = now,
        .as.order_update = {.order_id = old->id,
                            .event_id = unit_id_of(core, old->target, old->event),
                            .user_id = user_id,
                            .status = old->status,
                            .target = old->target,
                            .replaced_by = new_id,
                            .replaced_elsewhere = elsewhere}};
    record_emit(core, &mutation);
    old->last_change = core->change_count;
}

/* The refund of a negative difference, against the old order's payment (none when the old
 * order was not paid: nothing is owed). Its record comes first, as a cancel's does. */
static void refund_of_exchange(hf_core_t *core, uint32_t hold_index, uint32_t old_index,
                               const text_key_t *refund_key, hf_time_ms_t now) {
    const hf_order_t *old = &core->orders.slots[old_index];
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    const char *payment_ref = hf_core_string(core, old->payment_ref);
    int64_t difference = hold->total - old->total;
    if (difference >= 0 || !payment_ref) return;
    uint32_t index = refund_of_payment(core, refund_key, payment_ref, hold->id, -difference,
                                       HF_REFUND_EXCHANGE, now);
    record_refund(core, index, now);
}

hf_error_t exchange_commit(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                           const char *payment_ref, const text_key_t *refund_key,
                           const char *user_id, hf_time_ms_t now, uint32_t *order_index) {
    hf_hold_t *hold = hold_of(core, hold_index);
    assert(hold->status == HF_HOLD_HELD && hold->exchange_for != 0);
    uint32_t old_index = hold->exchange_for - 1;
    hf_order_t *old = &core->orders.slots[old_index];
    if (old->status != HF_ORDER_CONFIRMED || exchange_order_locked(core, old_index))
        return HF_ERROR_ORDER_NOT_ACTIVE;
    int64_t difference = hold->total - old->total;
    if (difference > 0 && (!payment_ref || !*payment_ref)) return HF_ERROR_INVALID_REQUEST;
    bool paid = old->payment_ref != NO_STRING;
    if (difference < 0 && paid && !refund_key) return HF_ERROR_INVALID_REQUEST;
    /* Held seats move to sold without a report (the new order's take reports each once). */
    hold_finish(core, hold_index, HF_HOLD_CONFIRMED, now, false);
    if (difference < 0 && paid) refund_of_exchange(core, hold_index, old_index, refund_key, now);
    old->status = HF_ORDER_EXCHANGED;
    old->replaced_by = core->orders.count + 1; /* the index order_from_hold gives it */
    bool elsewhere = old->target != hold->target || old->event != hold->event;
    char new_id[HF_SERVER_ID_SIZE + 1];
    server_id_copy(new_id, order_key);
    record_old_order(core, old_index, new_id, elsewhere, user_id, now);
    old_order_give_back(core, old_index, hold, now);
    core->orders.exchanged++;
    /* The new order is paid by the old one's payment, and by the commit's for a difference:
     * it names the commit's when it brings one, else the old one's, so a later refund (a
     * cancel, a cheaper exchange) knows where the money came from. */
    const char *paid_by = payment_ref && *payment_ref ? payment_ref : NULL;
    char old_payment[HF_PAYMENT_REF_SIZE_MAX + 1];
    if (!paid_by && paid) {
        snprintf(old_payment, sizeof old_payment, "%s", hf_core_string(core, old->payment_ref));
        paid_by = old_payment; /* copied: storing it may move the strings */
    }
    *order_index = order_from_hold(core, hold_index, order_key, paid_by, user_id, now);
    waitlist_settle(core, now);
    return HF_OK;
}

uint64_t hf_core_exchanges(const hf_core_t *core) { return core->orders.exchanged; }

void exchange_finish_remote(hf_core_t *core, uint32_t old_index, const char *new_id,
                            hf_time_ms_t now) {
    hf_order_t *old = &core->orders.slots[old_index];
    old->status = HF_ORDER_EXCHANGED;
    /* Both units may be this core's by now (a takeover): the orders are then linked. */
    uint32_t new_index;
    const hf_order_t *new = hf_core_order_find(core, new_id, &new_index);
    if (new &&new->replaces == old_index + 1) old->replaced_by = new_index + 1;
    else old->replaced_by_elsewhere = string_store(core, new_id, strlen(new_id));
    record_old_order(core, old_index, new_id, true, hf_core_user_id(core, old->user), now);
    old_order_give_back(core, old_index, NULL, now);
    waitlist_settle(core, now);
}

/* ---- the rebooking offer of a cancel job ---- */

uint32_t exchange_offer_place(hf_core_t *core, const exchange_offer_t *offer, hf_time_ms_t now) {
    command_at(core, now);
    /* Another unit's order (core/jobs.h, hf_core_job_offer_place): a remote exchange hold. */
    bool remote = offer->elsewhere_id != NULL;
    uint32_t user = remote ? user_intern_id(core, offer->user_id)
                           : core->orders.slots[offer->order_index].user;
    uint32_t elsewhere =
        remote ? string_store(core, offer->elsewhere_id, strlen(offer->elsewhere_id)) + 1 : 0;
    uint32_t index = hold_slot_take(core, offer->seat_count + offer->pool_count);
    hf_hold_t *hold = hold_of(core, index);
    text_key_t key = server_id_copy(hold->id, offer->hold_id);
    hold->event = offer->event_index;
    hold->user = user;
    hold->seat_count = offer->seat_count;
    hold->pool_count = offer->pool_count;
    hold->total = offer->total;
    hold->exchange_for = remote ? 0 : offer->order_index + 1;
    hold->exchange_elsewhere = elsewhere;
    hold->exchange_elsewhere_total = offer->total;
    hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < offer->seat_count; i++) items[i] = (hf_item_t){offer->seats[i], 0};
    for (uint32_t i = 0; i < offer->pool_count; i++) items[offer->seat_count + i] = offer->pools[i];
    ((event_tables_t *)core->events.slots[offer->event_index]->internal)->used = true;
    hf_index_map_insert(&core->holds.ids, key.hash, index);
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = now;
    hold->expires_at_ms = offer->expires_at_ms;
    record_hold_created(core, index, hf_core_user_id(core, hold->user));
    hold_take(core, index, now, true);
    return index;
}
