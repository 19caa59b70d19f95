/* A cancel job's rebooking offers (API.md section 13): the inventory on rebook_to equivalent
 * to an old order's, held for its user as an exchange hold of difference 0, and what becomes
 * of the offer (its commit accepts it; its release or lapse refunds the old order). */
#include "core/job/internal.h"

#include <stdio.h>

#include "lib/limits.h"

/* What an offer would hold: seat indexes and pool items on the target event. */
typedef struct offer_items {
    uint32_t seats[HF_HOLD_ITEMS_MAX];
    hf_item_t pools[HF_HOLD_ITEMS_MAX];
    uint32_t seat_count, pool_count;
} offer_items_t;

/* The same seat ids, when the target has them all and all are available. */
static bool same_seats(const hf_event_t *old_event, const hf_event_t *target,
                       const hf_item_t *items, uint32_t count, offer_items_t *out) {
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    for (uint32_t i = 0; i < count; i++) {
        hf_core_seat_id(old_event, items[i].index, seat_id);
        uint32_t index;
        if (!hf_core_seat_find(target, seat_id, &index) ||
            target->seats[index].status != HF_SEAT_AVAILABLE)
            return false;
        out->seats[i] = index;
    }
    out->seat_count = count;
    return true;
}

/* The first count available seats of the target's section of that id (rows front first,
 * so the best), in one row when a row has them together, else wherever they are. */
static bool same_section(const hf_event_t *target, const char *section_id, uint32_t count,
                         offer_items_t *out) {
    uint32_t section;
    const event_tables_t *tables = target->internal;
    if (!hf_map_get(&tables->sections, section_id, strlen(section_id), &section)) return false;
    const hf_section_t *s = &target->sections[section];
    for (uint32_t r = s->first_row; r < s->first_row + s->row_count; r++) {
        const hf_row_t *row = &target->rows[r];
        uint32_t run = 0;
        for (uint32_t i = row->first_seat; i < row->first_seat + row->seat_count; i++) {
            run = target->seats[i].status == HF_SEAT_AVAILABLE ? run + 1 : 0;
            if (run < count) continue;
            for (uint32_t k = 0; k < count; k++) out->seats[k] = i + 1 - count + k;
            out->seat_count = count;
            return true;
        }
    }
    uint32_t found = 0;
    for (uint32_t i = s->first_seat; i < s->first_seat + s->seat_count && found < count; i++)
        if (target->seats[i].status == HF_SEAT_AVAILABLE) out->seats[found++] = i;
    out->seat_count = found;
    return found == count;
}

/* The order's pool units from the same pool ids of the target; false when one cannot. */
static bool same_pools(const hf_event_t *old_event, const hf_event_t *target,
                       const hf_item_t *items, uint32_t count, offer_items_t *out) {
    const event_tables_t *tables = target->internal;
    for (uint32_t i = 0; i < count; i++) {
        const char *pool_id = old_event->pools[items[i].index].id;
        uint32_t pool;
        if (!hf_map_get(&tables->pools, pool_id, strlen(pool_id), &pool)) return false;
        const hf_pool_t *p = &target->pools[pool];
        if (p->capacity - p->held - p->sold < items[i].quantity) return false;
        out->pools[i] = (hf_item_t){pool, items[i].quantity};
    }
    out->pool_count = count;
    return true;
}

/* The inventory equivalent to the order's on target: its seats (the same ids, else the same
 * section and count) and its pool units (the same pools); false when nothing is. */
static bool equivalent_find(const hf_core_t *core, const hf_order_t *order,
                            const hf_event_t *target, offer_items_t *out) {
    const hf_event_t *old_event = core->events.slots[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    if (!same_pools(old_event, target, items + order->seat_count, order->pool_count, out))
        return false;
    if (order->seat_count == 0) return true;
    if (same_seats(old_event, target, items, order->seat_count, out)) return true;
    /* One section for all the seats: the old order's first seat's. */
    const hf_row_t *row = &old_event->rows[old_event->seats[items[0].index].row];
    return same_section(target, old_event->sections[row->section].id, order->seat_count, out);
}

/* An offer's hold id, made from its order's as a refund's is (job.c). */
static text_key_t offer_key_of(const hf_order_t *order, char out[HF_SERVER_ID_SIZE + 1]) {
    size_t length = strlen(order->id), room = HF_SERVER_ID_SIZE - 4;
    size_t kept = length < room ? length : room;
    memcpy(out, "res_", 4);
    memcpy(out + 4, order->id + length - kept, kept);
    out[4 + kept] = '\0';
    return text_key_of(out, 4 + kept);
}

uint32_t job_offer_make(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                        hf_time_ms_t now) {
    const hf_job_t *job = &core->jobs->slots[job_index].job;
    uint32_t target_index;
    const hf_event_t *target = hf_core_event(core, job->rebook_to, &target_index);
    const hf_order_t *order = &core->orders.slots[order_index];
    if (!target || target->cancelled || order->target != HF_TARGET_EVENT ||
        order->seat_count + order->pool_count > HF_HOLD_ITEMS_MAX)
        return 0;
    offer_items_t items = {.seat_count = 0, .pool_count = 0};
    char hold_id[HF_SERVER_ID_SIZE + 1];
    text_key_t key = offer_key_of(order, hold_id);
    if (!equivalent_find(core, order, target, &items) || hf_core_hold_find(core, hold_id, NULL))
        return 0;
    exchange_offer_t offer = {.order_index = order_index,
                              .event_index = target_index,
                              .seats = items.seats,
                              .seat_count = items.seat_count,
                              .pools = items.pools,
                              .pool_count = items.pool_count,
                              .total = order->total,
                              .expires_at_ms = now + job->offer_ttl_ms,
                              .hold_id = &key};
    uint32_t hold_index = exchange_offer_place(core, &offer, now);
    hf_map_put(&core->jobs->offer_holds, hold_id, strlen(hold_id), job_index);
    return hold_index + 1;
}

/* ---- an offer settled ---- */

void job_offer_settle(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at) {
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    uint32_t job_index;
    if (!core->jobs ||
        !hf_map_get(&core->jobs->offer_holds, hold->id, strlen(hold->id), &job_index))
        return;
    job_entry_t *entry = &core->jobs->slots[job_index];
    uint32_t position = job_outcome_position(entry, hold->exchange_for - 1);
    if (position == NO_INDEX) return;
    job_outcome_t *outcome = &entry->outcomes[position];
    if (outcome->status != HF_JOB_OFFER_OFFERED || outcome->hold != hold_index + 1) return;
    entry->job.open--;
    if (status == HF_HOLD_CONFIRMED) {
        outcome->status = HF_JOB_OFFER_ACCEPTED;
        entry->job.accepted++;
    } else {
        job_order_refund(core, job_index, hold->exchange_for - 1, at);
        entry = &core->jobs->slots[job_index];
        outcome = &entry->outcomes[position];
        outcome->status = HF_JOB_OFFER_REFUNDED;
        entry->job.refunded++;
    }
    job_offer_record(core, job_index, outcome, at);
    job_record(core, job_index, HF_MUTATION_JOB, at);
}

const hf_hold_t *hf_core_order_rebooking(const hf_core_t *core, const hf_order_t *order) {
    if (!core->jobs || order->target != HF_TARGET_EVENT || order->status != HF_ORDER_CONFIRMED)
        return NULL;
    const hf_event_t *event = core->events.slots[order->event];
    if (!event || !event->cancelled) return NULL;
    const job_entry_t *entry = &core->jobs->slots[event->job - 1];
    uint32_t position = job_outcome_position(entry, (uint32_t)(order - core->orders.slots));
    if (position == NO_INDEX) return NULL;
    const job_outcome_t *outcome = &entry->outcomes[position];
    bool open = outcome->status == HF_JOB_OFFER_OFFERED && outcome->hold;
    return open ? &core->holds.slots[outcome->hold - 1] : NULL;
}
