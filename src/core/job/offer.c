/* A cancel job's rebooking offers (API.md section 13): the inventory on rebook_to equivalent
 * to an old order's, held for its user as an exchange hold of difference 0, and what becomes
 * of the offer (its commit accepts it; its release or lapse refunds the old order). */
#include "core/job/internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/best.h"
#include "lib/limits.h"

/* What an offer would hold: seat indexes and pool items on the target event, and the seats
 * it takes sorted, so that a later group of the order's seats does not take them again. */
typedef struct offer_items {
    uint32_t seats[HF_HOLD_ITEMS_MAX];
    uint32_t taken[HF_HOLD_ITEMS_MAX]; /* the same seats, sorted */
    hf_item_t pools[HF_HOLD_ITEMS_MAX];
    uint32_t seat_count, pool_count;
} offer_items_t;

/* The old order's seats of one section of the old event: they move as one, so that a party
 * that sat together is offered seats together, each at a price no higher than it paid. */
typedef struct seat_group {
    uint32_t section;      /* on the old event */
    uint32_t first, count; /* into offer_plan_t.old */
    bool together;         /* one row, consecutive numbers */
    bool placed;
} seat_group_t;

typedef struct offer_plan {
    uint32_t old[HF_HOLD_ITEMS_MAX]; /* the old order's seat indexes, sorted */
    seat_group_t groups[HF_HOLD_ITEMS_MAX];
    uint32_t group_count;
} offer_plan_t;

static int compare_indexes(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sections and rows are runs of seat indexes: sorted, a section's seats are one run of the
 * list, and seats together in a row are consecutive indexes of one row. */
static void groups_make(const hf_event_t *old_event, const hf_item_t *items, uint32_t count,
                        offer_plan_t *plan) {
    for (uint32_t i = 0; i < count; i++) plan->old[i] = items[i].index;
    qsort(plan->old, count, sizeof *plan->old, compare_indexes);
    plan->group_count = 0;
    for (uint32_t i = 0; i < count; i++) {
        const hf_seat_t *seat = &old_event->seats[plan->old[i]];
        uint32_t section = old_event->rows[seat->row].section;
        seat_group_t *group = plan->group_count ? &plan->groups[plan->group_count - 1] : NULL;
        if (!group || group->section != section) {
            plan->groups[plan->group_count++] = (seat_group_t){section, i, 1, true, false};
            continue;
        }
        const hf_seat_t *previous = &old_event->seats[plan->old[i - 1]];
        group->together &= previous->row == seat->row && plan->old[i - 1] + 1 == plan->old[i];
        group->count++;
    }
}

static bool offer_taken(const offer_items_t *out, uint32_t seat_index) {
    return bsearch(&seat_index, out->taken, out->seat_count, sizeof seat_index, compare_indexes) !=
           NULL;
}

/* Whether a seat of [first, first + count) is taken by the offer already. */
static bool offer_takes_any(const offer_items_t *out, uint32_t first, uint32_t count) {
    uint32_t low = 0, high = out->seat_count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (out->taken[middle] < first) low = middle + 1;
        else high = middle;
    }
    return low < out->seat_count && out->taken[low] < first + count;
}

/* The count seats at out->seats' end added to the offer's taken list. */
static void offer_take(offer_items_t *out, uint32_t count) {
    for (uint32_t i = out->seat_count; i < out->seat_count + count; i++) {
        uint32_t seat = out->seats[i], at = i;
        for (; at > 0 && out->taken[at - 1] > seat; at--) out->taken[at] = out->taken[at - 1];
        out->taken[at] = seat;
    }
    out->seat_count += count;
}

/* The same seat ids as the group's, when the target has them all and all are available. */
static bool same_seats(const hf_event_t *old_event, const hf_event_t *target,
                       const offer_plan_t *plan, const seat_group_t *group, offer_items_t *out) {
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    for (uint32_t i = 0; i < group->count; i++) {
        hf_core_seat_id(old_event, plan->old[group->first + i], seat_id);
        uint32_t index;
        if (!hf_core_seat_find(target, seat_id, &index) ||
            target->seats[index].status != HF_SEAT_AVAILABLE || offer_taken(out, index))
            return false;
        out->seats[out->seat_count + i] = index;
    }
    offer_take(out, group->count);
    return true;
}

typedef struct offer_context {
    const hf_event_t *target;
    const offer_items_t *out;
} offer_context_t;

static bool offer_free(void *context, uint32_t seat_index) {
    const offer_context_t *offer = context;
    return offer->target->seats[seat_index].status == HF_SEAT_AVAILABLE &&
           !offer_taken(offer->out, seat_index);
}

/* The best available count seats of the target's section (section 3's best_available),
 * together in one row when adjacent. */
static bool section_seats(hf_event_t *target, uint32_t section, uint32_t count, bool adjacent,
                          offer_items_t *out) {
    const hf_section_t *s = &target->sections[section];
    if (s->counts.available < count) return false;
    offer_context_t context = {target, out};
    /* The rows' counts and bounds are exact only for seats this offer has not taken yet. */
    bool exact = !offer_takes_any(out, s->first_seat, s->seat_count);
    hf_best_query_t query = {count,      (int32_t)section, adjacent, exact,
                             offer_free, &context,         0,        UINT32_MAX};
    if (!hf_best_pick(target, &query, out->seats + out->seat_count)) return false;
    offer_take(out, count);
    return true;
}

/* The group's seats in the section of the same id, else in the best section (in listed order)
 * whose price is no higher than the group's on the old event. */
static bool group_in_sections(const hf_event_t *old_event, hf_event_t *target,
                              const seat_group_t *group, bool adjacent, offer_items_t *out) {
    const hf_section_t *old_section = &old_event->sections[group->section];
    const event_tables_t *tables = target->internal;
    uint32_t same;
    if (!hf_map_get(&tables->sections, old_section->id, strlen(old_section->id), &same))
        same = NO_INDEX;
    if (same != NO_INDEX && section_seats(target, same, group->count, adjacent, out)) return true;
    for (uint32_t s = 0; s < target->section_count; s++)
        if (s != same && target->sections[s].price <= old_section->price &&
            section_seats(target, s, group->count, adjacent, out))
            return true;
    return false;
}

/* The group's seats elsewhere than on their own ids: together when they sat together, else
 * (or when no section has them together) apart, which is still an offer its user may take,
 * or release for the refund. */
static bool group_elsewhere(const hf_event_t *old_event, hf_event_t *target,
                            const seat_group_t *group, offer_items_t *out) {
    if (group_in_sections(old_event, target, group, group->together, out)) return true;
    return group->together && group->count > 1 &&
           group_in_sections(old_event, target, group, false, out);
}

/* The order's pool units from the same pool ids of the target; false when one cannot. */
static bool same_pools(const hf_event_t *old_event, const hf_event_t *target,
                       const hf_item_t *items, uint32_t count, offer_items_t *out) {
    const event_tables_t *tables = target->internal;
    for (uint32_t i = 0; i < count; i++) {
        const char *pool_id = old_event->pools[items[i].index].id;
        uint32_t pool;
        if (!hf_map_get(&tables->pools, pool_id, strlen(pool_id), &pool)) return false;
        if (hf_core_pool_available(&target->pools[pool]) < items[i].quantity) return false;
        out->pools[i] = (hf_item_t){pool, items[i].quantity};
    }
    out->pool_count = count;
    return true;
}

/* The groups not placed on their own seat ids, cheapest first: a cheap group has the fewest
 * sections to go to, so it chooses before a dearer one takes them. */
static uint32_t groups_by_price(const hf_event_t *old_event, const offer_plan_t *plan,
                                uint32_t *order) {
    uint32_t count = 0;
    for (uint32_t g = 0; g < plan->group_count; g++) {
        if (plan->groups[g].placed) continue;
        int64_t price = old_event->sections[plan->groups[g].section].price;
        uint32_t at = count++;
        for (; at > 0 && old_event->sections[plan->groups[order[at - 1]].section].price > price;
             at--)
            order[at] = order[at - 1];
        order[at] = g;
    }
    return count;
}

/* The inventory equivalent to the order's on target: its pool units from the same pools, and
 * each group of its seats (one per section) on the same ids, else elsewhere (group_elsewhere);
 * false when one group or pool cannot be placed. */
static bool equivalent_find(const hf_core_t *core, const hf_order_t *order, hf_event_t *target,
                            offer_plan_t *plan, offer_items_t *out) {
    const hf_event_t *old_event = core->events.slots[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    if (!same_pools(old_event, target, items + order->seat_count, order->pool_count, out))
        return false;
    groups_make(old_event, items, order->seat_count, plan);
    /* Every group's own ids first, before another group's choice can take them. */
    for (uint32_t g = 0; g < plan->group_count; g++)
        plan->groups[g].placed = same_seats(old_event, target, plan, &plan->groups[g], out);
    uint32_t order_of_groups[HF_HOLD_ITEMS_MAX];
    uint32_t left = groups_by_price(old_event, plan, order_of_groups);
    for (uint32_t i = 0; i < left; i++)
        if (!group_elsewhere(old_event, target, &plan->groups[order_of_groups[i]], out))
            return false;
    return true;
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
    if (!hf_core_event(core, job->rebook_to, &target_index)) return 0;
    /* Not const: best_available tightens the target's rows' bounds as it reads them. */
    hf_event_t *target = core->events.slots[target_index];
    const hf_order_t *order = &core->orders.slots[order_index];
    if (target->cancelled || order->target != HF_TARGET_EVENT ||
        order->seat_count + order->pool_count > HF_HOLD_ITEMS_MAX)
        return 0;
    offer_items_t items = {.seat_count = 0, .pool_count = 0};
    offer_plan_t plan;
    char hold_id[HF_SERVER_ID_SIZE + 1];
    text_key_t key = offer_key_of(order, hold_id);
    if (hf_core_hold_find(core, hold_id, NULL) ||
        !equivalent_find(core, order, target, &plan, &items))
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
