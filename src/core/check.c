/* hf_core_check: the invariants of the whole state, checked from scratch (for tests). */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* Each row's count of available seats is exact and its free-run bound is not below the
 * longest run of available seats. */
static const char *check_rows(const hf_event_t *event) {
    for (uint32_t r = 0; r < event->row_count; r++) {
        const hf_row_t *row = &event->rows[r];
        uint32_t available = 0, run = 0, longest = 0;
        for (uint32_t i = row->first_seat; i < row->first_seat + row->seat_count; i++) {
            bool free = event->seats[i].status == HF_SEAT_AVAILABLE;
            available += free;
            run = free ? run + 1 : 0;
            if (run > longest) longest = run;
        }
        if (available != row->available) return "a row's available count differs from its seats";
        if (longest > row->free_run_bound) return "a row has a free run longer than its bound";
    }
    return NULL;
}

static const char *check_event(const hf_core_t *core, const hf_event_t *event) {
    const char *fault = check_rows(event);
    if (fault) return fault;
    hf_counts_t counts = {0, 0, 0, 0};
    for (uint32_t s = 0; s < event->section_count; s++) {
        const hf_section_t *section = &event->sections[s];
        hf_counts_t section_counts = {0, 0, 0, 0};
        for (uint32_t i = section->first_seat; i < section->first_seat + section->seat_count; i++) {
            const hf_seat_t *seat = &event->seats[i];
            uint32_t *slots[4] = {&section_counts.available, &section_counts.held,
                                  &section_counts.sold, &section_counts.allocated};
            (*slots[seat->status])++;
            if (seat->status == HF_SEAT_HELD &&
                (seat->owner == 0 || core->holds.slots[seat->owner - 1].status != HF_HOLD_HELD))
                return "a held seat's owner is not an active hold";
            if (seat->status == HF_SEAT_SOLD &&
                (seat->owner == 0 ||
                 core->orders.slots[seat->owner - 1].status != HF_ORDER_CONFIRMED))
                return "a sold seat's owner is not a confirmed order";
        }
        if (memcmp(&section_counts, &section->counts, sizeof counts) != 0)
            return "section counts differ from seat statuses";
        counts.available += section_counts.available;
        counts.held += section_counts.held;
        counts.sold += section_counts.sold;
        counts.allocated += section_counts.allocated;
    }
    if (memcmp(&counts, &event->counts, sizeof counts) != 0)
        return "event counts differ from seat statuses";
    for (uint32_t p = 0; p < event->pool_count; p++) {
        const hf_pool_t *pool = &event->pools[p];
        if (pool->held < 0 || pool->sold < 0 || pool->allocated < 0 ||
            pool->held + pool->sold + pool->allocated > pool->capacity)
            return "pool held + sold + allocated outside 0..capacity";
    }
    return NULL;
}

/* The finished list holds exactly the released and expired holds, the free list exactly the
 * forgotten ones, and the id index exactly the holds that are not forgotten. A list with a
 * repeat would loop, so a walk longer than the table is a fault; equal counts then mean equal
 * sets. */
static const char *check_hold_lists(const hf_core_t *core) {
    uint32_t listed_finished = 0, listed_free = 0, finished = 0, forgotten = 0;
    for (uint32_t h = core->holds.finished_first; h != 0;
         h = core->holds.states[h - 1].next_finished) {
        if (!hold_status_finished(core->holds.slots[h - 1].status))
            return "the finished list has a hold that is not released or expired";
        if (++listed_finished > core->holds.count) return "the finished list loops";
    }
    for (uint32_t h = core->holds.free_first; h != 0; h = core->holds.states[h - 1].next_finished) {
        if (core->holds.slots[h - 1].status != HF_HOLD_EVICTED)
            return "the free list has a live hold";
        if (++listed_free > core->holds.count) return "the free list loops";
    }
    for (uint32_t h = 0; h < core->holds.count; h++) {
        const hf_hold_t *hold = &core->holds.slots[h];
        if (hold->status == HF_HOLD_EVICTED) {
            forgotten++;
            continue;
        }
        if (hold_status_finished(hold->status)) finished++;
        uint32_t found;
        if (!hf_core_hold_find(core, hold->id, &found) || found != h)
            return "a hold is not found by its id";
        const hold_state_t *slot = &core->holds.states[h];
        uint32_t reserved = hold->target == HF_TARGET_CALENDAR ? slot->calendar_item_capacity
                                                               : slot->item_capacity;
        if (reserved < hold->seat_count + hold->pool_count)
            return "a hold has more items than its slot reserves";
    }
    if (listed_finished != finished || finished != core->holds.finished_count)
        return "the finished list differs from the finished holds";
    if (listed_free != forgotten) return "the free list differs from the forgotten holds";
    if (hf_index_map_count(&core->holds.ids) !=
        core->holds.count - forgotten + core->holds.ids_stale)
        return "the id index has entries it should not";
    return NULL;
}

static const char *check_holds(const hf_core_t *core, hf_time_ms_t now) {
    const char *fault = check_hold_lists(core);
    if (fault) return fault;
    for (uint32_t h = 0; h < core->holds.count; h++) {
        const hf_hold_t *hold = &core->holds.slots[h];
        if (hold->status != HF_HOLD_HELD) continue;
        if (hold->expires_at_ms <= now) return "a lapsed hold is still held";
        if (hold->target == HF_TARGET_CALENDAR) continue; /* calendars_check's */
        const hf_event_t *event = core->events.slots[hold->event];
        const hf_item_t *items = core->items + hold->item_offset;
        const hf_order_t *old = exchange_old_order(core, hold);
        for (uint32_t i = 0; i < hold->seat_count; i++) {
            /* A seat an exchange hold keeps stays its old order's. */
            if (old && exchange_seat_kept(core, old, items[i].index)) continue;
            if (event->seats[items[i].index].owner != h + 1)
                return "a held hold's seat points elsewhere";
        }
    }
    if (hf_index_map_count(&core->orders.ids) != core->orders.count)
        return "the order id index has entries it should not";
    for (uint32_t o = 0; o < core->orders.count; o++) {
        const hf_order_t *order = &core->orders.slots[o];
        uint32_t found;
        if (!hf_core_order_find(core, order->id, &found) || found != o)
            return "an order is not found by its id";
        if (order->status != HF_ORDER_CONFIRMED || order->target == HF_TARGET_CALENDAR) continue;
        const hf_event_t *event = core->events.slots[order->event];
        const hf_item_t *items = core->items + order->item_offset;
        for (uint32_t i = 0; i < order->seat_count; i++)
            if (event->seats[items[i].index].owner != o + 1)
                return "an order's seat points elsewhere";
    }
    return NULL;
}

/* The record a hold or order names is its user's on its event, and each record's counts are
 * the sums of its user's held holds and confirmed orders on that event. The sums are kept
 * per record: users' own records first, then those of core->users.per_event. */
static uint32_t owner_slot(const hf_core_t *core, uint32_t handle) {
    return handle & OWNER_IN_TABLE ? core->users.count + (handle & ~OWNER_IN_TABLE) : handle;
}

static bool record_counts_equal(const event_user_t *record, uint32_t held, uint32_t sold) {
    return record->held_units == held && record->sold_units == sold;
}

static const char *check_owner_sums(const hf_core_t *core, const uint32_t *held,
                                    const uint32_t *sold) {
    for (uint32_t u = 0; u < core->users.count; u++) {
        if (core->users.slots[u].first_event == 0) continue;
        if (!record_counts_equal(&core->users.slots[u].first_event_record, held[u], sold[u]))
            return "a user's units on an event differ from its holds and orders";
    }
    for (uint32_t r = 0; r < core->users.per_event_count; r++) {
        uint32_t slot = core->users.count + r;
        if (!record_counts_equal(&core->users.per_event[r], held[slot], sold[slot]))
            return "a user's units on an event differ from its holds and orders";
    }
    return NULL;
}

static const char *check_owners(const hf_core_t *core) {
    size_t slots = (size_t)core->users.count + core->users.per_event_count + 1;
    uint32_t *held = calloc(slots, sizeof *held), *sold = calloc(slots, sizeof *sold);
    if (!held || !sold) abort();
    const char *fault = NULL;
    for (uint32_t h = 0; h < core->holds.count && !fault; h++) {
        const hf_hold_t *hold = &core->holds.slots[h];
        if (hold->status != HF_HOLD_HELD) continue;
        if (hold->target == HF_TARGET_CALENDAR) {
            /* Its record (under the calendar's number) keeps the list of held holds only. */
            if (event_user_handle(core, calendar_owner_unit(hold->event), hold->user) !=
                hold->owner)
                fault = "a hold names another user's record";
            continue;
        }
        if (event_user_handle(core, hold->event, hold->user) != hold->owner)
            fault = "a hold names another user's record";
        held[owner_slot(core, hold->owner)] += item_units(core->items + hold->item_offset,
                                                          hold->seat_count, hold->pool_count) -
                                               exchange_kept_units(core, hold);
    }
    for (uint32_t o = 0; o < core->orders.count && !fault; o++) {
        const hf_order_t *order = &core->orders.slots[o];
        if (order->status != HF_ORDER_CONFIRMED || order->target == HF_TARGET_CALENDAR) continue;
        if (event_user_handle(core, order->event, order->user) != order->owner)
            fault = "an order names another user's record";
        sold[owner_slot(core, order->owner)] += item_units(core->items + order->item_offset,
                                                           order->seat_count, order->pool_count);
    }
    if (!fault) fault = check_owner_sums(core, held, sold);
    free(held);
    free(sold);
    return fault;
}

/* Every kept delivery names what its outcome made: an order paid by its intent, a refund of
 * it. (Their arrival times are not checked for order: a clock set back between two runs may
 * break it, which only keeps a few deliveries past their 7 days.) */
static const char *check_deliveries(const hf_core_t *core) {
    for (uint32_t d = core->payments.delivery_first; d < core->payments.delivery_count; d++) {
        const delivery_t *delivery = &core->payments.deliveries[d];
        if (!delivery->payment_intent_id) return "a kept delivery has no intent id";
        if (delivery->result == HF_PAYMENT_COMMITTED) {
            if (delivery->order >= core->orders.count) return "a delivery names no order";
            const char *paid = hf_core_string(core,
                                              core->orders.slots[delivery->order].payment_ref);
            if (!paid || strcmp(paid, delivery->payment_intent_id) != 0)
                return "a committed delivery's order has another payment_ref";
        }
        if (delivery->result == HF_PAYMENT_REFUND_REQUIRED &&
            (delivery->refund >= core->payments.refund_count ||
             strcmp(core->payments.refunds[delivery->refund].payment_intent_id,
                    delivery->payment_intent_id) != 0))
            return "a refund_required delivery names no refund of its intent";
    }
    return NULL;
}

/* An order_cancelled refund and its cancelled, paid order name each other. (A paid order
 * cancelled before version 8 of the store may have none: those cancels owed no refund yet.) */
static const char *check_refunds(const hf_core_t *core) {
    uint32_t completed = 0;
    for (uint32_t r = 0; r < core->payments.refund_count; r++) {
        const hf_refund_t *refund = &core->payments.refunds[r];
        completed += refund->status == HF_REFUND_COMPLETED;
        if (hf_refund_reason_of_cancel(refund->reason) != (refund->order != 0))
            return "an order_cancelled refund names no order";
        if (refund->order && (refund->order > core->orders.count ||
                              core->orders.slots[refund->order - 1].refund != r + 1))
            return "a refund's order does not name it back";
    }
    for (uint32_t o = 0; o < core->orders.count; o++) {
        const hf_order_t *order = &core->orders.slots[o];
        bool owed = order->status == HF_ORDER_CANCELLED && order->payment_ref != NO_STRING;
        if (order->refund && (!owed || order->refund > core->payments.refund_count))
            return "an order's refund is owed by no cancel of a paid order";
    }
    return completed == core->payments.refunds_completed ? NULL
                                                         : "the count of completed refunds is off";
}

/* Exchanges: an exchanged order names its replacement, which names it back (the replacement
 * is confirmed, or moved on since as any order may: exchanged again, cancelled); an order
 * that replaces another names an exchanged one that names it. (No
 * seat is sold to two orders: a seat has one owner, and check_holds has each confirmed
 * order's seats point at it.) */
static const char *check_exchanges(const hf_core_t *core) {
    for (uint32_t o = 0; o < core->orders.count; o++) {
        const hf_order_t *order = &core->orders.slots[o];
        bool named = order->replaced_by != 0 || order->replaced_by_elsewhere != NO_STRING;
        if ((order->status == HF_ORDER_EXCHANGED) != named)
            return "an exchanged order names no replacement";
        if (order->replaced_by) {
            if (order->replaced_by > core->orders.count) return "an exchange names no order";
            const hf_order_t *next = &core->orders.slots[order->replaced_by - 1];
            if (next->replaces != o + 1) return "an exchange's orders do not name each other";
        }
        if (order->replaces && order->replaces <= core->orders.count &&
            exchange_decided_unfinished(core, o))
            continue;
        if (order->replaces &&
            (order->replaces > core->orders.count ||
             core->orders.slots[order->replaces - 1].replaced_by != o + 1 ||
             core->orders.slots[order->replaces - 1].status != HF_ORDER_EXCHANGED))
            return "an order replaces one that is not exchanged for it";
    }
    return NULL;
}

const char *hf_core_check(const hf_core_t *core, hf_time_ms_t now) {
    for (uint32_t e = 0; e < core->events.count; e++) {
        if (!core->events.slots[e]) continue; /* a slot a deleted event left */
        const char *fault = check_event(core, core->events.slots[e]);
        if (fault) return fault;
    }
    const char *fault = check_holds(core, now);
    if (!fault) fault = check_owners(core);
    if (!fault) fault = queue_check(core);
    if (!fault) fault = calendars_check(core);
    if (!fault) fault = hf_core_allocations_check(core);
    if (!fault) fault = check_deliveries(core);
    if (!fault) fault = check_exchanges(core);
    if (!fault) fault = waitlist_check(core);
    return fault ? fault : check_refunds(core);
}
