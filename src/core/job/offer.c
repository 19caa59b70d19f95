/* A cancel job's rebooking offers (API.md section 13): the inventory on rebook_to equivalent
 * to an old order's, held for its user as an exchange hold of difference 0, and what becomes
 * of the offer (its commit accepts it; its release or lapse refunds the old order). */
#include "core/job/internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/best.h"
#include "lib/limits.h"

static int compare_indexes(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---- the old order described ---- */

/* Sections and rows are runs of seat indexes: sorted, a section's seats are one run of the
 * list, and seats together in a row are consecutive indexes of one row. Each section's run is
 * a group: its seats move as one, so that a party that sat together is offered seats
 * together, each at a price no higher than it paid. */
static void groups_describe(const hf_event_t *old_event, const uint32_t *sorted, uint32_t count,
                            hf_offer_order_t *out) {
    out->group_count = 0;
    uint32_t last_section = UINT32_MAX;
    for (uint32_t i = 0; i < count; i++) {
        const hf_seat_t *seat = &old_event->seats[sorted[i]];
        uint32_t section = old_event->rows[seat->row].section;
        if (section != last_section) {
            const hf_section_t *s = &old_event->sections[section];
            out->groups[out->group_count++] = (hf_offer_group_t){s->id, s->price, true, i, 1};
            last_section = section;
            continue;
        }
        hf_offer_group_t *group = &out->groups[out->group_count - 1];
        const hf_seat_t *previous = &old_event->seats[sorted[i - 1]];
        group->together &= previous->row == seat->row && sorted[i - 1] + 1 == sorted[i];
        group->count++;
    }
}

void job_order_describe(const hf_core_t *core, const hf_order_t *order, hf_offer_order_t *out,
                        hf_offer_scratch_t *scratch) {
    const hf_event_t *old_event = core->events.slots[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    uint32_t *sorted = core->jobs->sorted;
    for (uint32_t i = 0; i < order->seat_count; i++) sorted[i] = items[i].index;
    qsort(sorted, order->seat_count, sizeof *sorted, compare_indexes);
    *out = (hf_offer_order_t){.order_id = order->id,
                              .user_id = hf_core_user_id(core, order->user),
                              .total = order->total,
                              .seat_ids = scratch->seat_ids,
                              .groups = scratch->groups,
                              .pools = scratch->pools,
                              .seat_count = order->seat_count,
                              .pool_count = order->pool_count};
    for (uint32_t i = 0; i < order->seat_count; i++) {
        hf_core_seat_id(old_event, sorted[i], scratch->seat_texts[i]);
        scratch->seat_ids[i] = scratch->seat_texts[i];
    }
    groups_describe(old_event, sorted, order->seat_count, out);
    const hf_item_t *pools = items + order->seat_count;
    for (uint32_t i = 0; i < order->pool_count; i++)
        scratch->pools[i] = (hf_offer_pool_t){old_event->pools[pools[i].index].id,
                                              pools[i].quantity};
}

/* ---- the equivalent inventory ---- */

/* What an offer would hold: seat indexes and pool items on the target event, and the seats
 * it takes sorted, so that a later group of the order's seats does not take them again. */
typedef struct offer_items {
    uint32_t seats[HF_HOLD_ITEMS_MAX];
    uint32_t taken[HF_HOLD_ITEMS_MAX]; /* the same seats, sorted */
    hf_item_t pools[HF_HOLD_ITEMS_MAX];
    bool placed[HF_HOLD_ITEMS_MAX]; /* by group: on its own seat ids */
    uint32_t seat_count, pool_count;
} offer_items_t;

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
static bool same_seats(const hf_event_t *target, const hf_offer_order_t *order,
                       const hf_offer_group_t *group, offer_items_t *out) {
    for (uint32_t i = 0; i < group->count; i++) {
        uint32_t index;
        if (!hf_core_seat_find(target, order->seat_ids[group->first + i], &index) ||
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
static bool group_in_sections(hf_event_t *target, const hf_offer_group_t *group, bool adjacent,
                              offer_items_t *out) {
    const event_tables_t *tables = target->internal;
    uint32_t same;
    if (!hf_map_get(&tables->sections, group->section_id, strlen(group->section_id), &same))
        same = NO_INDEX;
    if (same != NO_INDEX && section_seats(target, same, group->count, adjacent, out)) return true;
    for (uint32_t s = 0; s < target->section_count; s++)
        if (s != same && target->sections[s].price <= group->price &&
            section_seats(target, s, group->count, adjacent, out))
            return true;
    return false;
}

/* The group's seats elsewhere than on their own ids: together when they sat together, else
 * (or when no section has them together) apart, which is still an offer its user may take,
 * or release for the refund. */
static bool group_elsewhere(hf_event_t *target, const hf_offer_group_t *group, offer_items_t *out) {
    if (group_in_sections(target, group, group->together, out)) return true;
    return group->together && group->count > 1 && group_in_sections(target, group, false, out);
}

/* The order's pool units from the same pool ids of the target; false when one cannot. */
static bool same_pools(const hf_event_t *target, const hf_offer_order_t *order,
                       offer_items_t *out) {
    const event_tables_t *tables = target->internal;
    for (uint32_t i = 0; i < order->pool_count; i++) {
        const hf_offer_pool_t *wanted = &order->pools[i];
        uint32_t pool;
        if (!hf_map_get(&tables->pools, wanted->pool_id, strlen(wanted->pool_id), &pool))
            return false;
        if (hf_core_pool_available(&target->pools[pool]) < wanted->quantity) return false;
        out->pools[i] = (hf_item_t){pool, wanted->quantity};
    }
    out->pool_count = order->pool_count;
    return true;
}

/* The groups not placed on their own seat ids, cheapest first: a cheap group has the fewest
 * sections to go to, so it chooses before a dearer one takes them. */
static uint32_t groups_by_price(const hf_offer_order_t *order, const offer_items_t *items,
                                uint32_t *by_price) {
    uint32_t count = 0;
    for (uint32_t g = 0; g < order->group_count; g++) {
        if (items->placed[g]) continue;
        int64_t price = order->groups[g].price;
        uint32_t at = count++;
        for (; at > 0 && order->groups[by_price[at - 1]].price > price; at--)
            by_price[at] = by_price[at - 1];
        by_price[at] = g;
    }
    return count;
}

/* The inventory equivalent to the order's on target: its pool units from the same pools, and
 * each group of its seats on the same ids, else elsewhere (group_elsewhere); false when one
 * group or pool cannot be placed. */
static bool equivalent_find(hf_event_t *target, const hf_offer_order_t *order, offer_items_t *out) {
    if (order->seat_count + order->pool_count > HF_HOLD_ITEMS_MAX ||
        !same_pools(target, order, out))
        return false;
    /* Every group's own ids first, before another group's choice can take them. */
    for (uint32_t g = 0; g < order->group_count; g++)
        out->placed[g] = same_seats(target, order, &order->groups[g], out);
    uint32_t by_price[HF_HOLD_ITEMS_MAX];
    uint32_t left = groups_by_price(order, out, by_price);
    for (uint32_t i = 0; i < left; i++)
        if (!group_elsewhere(target, &order->groups[by_price[i]], out)) return false;
    return true;
}

/* An offer's hold id, made from its order's id as a refund's is (job.c): the same on any
 * node, so that a remote exchange hold with this id is known to be an offer of its order. */
text_key_t offer_key_of(const char *order_id, char out[HF_SERVER_ID_SIZE + 1]) {
    size_t length = strlen(order_id), room = HF_SERVER_ID_SIZE - 4;
    size_t kept = length < room ? length : room;
    memcpy(out, "res_", 4);
    memcpy(out + 4, order_id + length - kept, kept);
    out[4 + kept] = '\0';
    return text_key_of(out, 4 + kept);
}

/* The offer's items on target for order (described), kept in the jobs' scratch; false when
 * nothing equivalent is free. */
static offer_items_t *offer_items_find(hf_core_t *core, hf_event_t *target,
                                       const hf_offer_order_t *order) {
    offer_items_t *items = jobs_state(core)->items;
    items->seat_count = items->pool_count = 0;
    return equivalent_find(target, order, items) ? items : NULL;
}

/* The hold an offer places: its items found on the target, the old order's total. */
static exchange_offer_t offer_of(const offer_items_t *items, uint32_t target_index, int64_t total,
                                 const text_key_t *key) {
    return (exchange_offer_t){.event_index = target_index,
                              .seats = items->seats,
                              .seat_count = items->seat_count,
                              .pools = items->pools,
                              .pool_count = items->pool_count,
                              .total = total,
                              .hold_id = key};
}

/* The offer placed already for the order (by its target's owner, whose unit this core took
 * over since: hf_core_job_offer_place): its hold, still held, is the offer, made a local
 * exchange hold of the order; ended (or not this order's), nothing is offered. */
static uint32_t offer_adopt(hf_core_t *core, uint32_t job_index, uint32_t order_index,
                            uint32_t hold_index) {
    hf_hold_t *hold = hold_of(core, hold_index);
    const char *named = exchange_elsewhere_id(core, hold);
    bool ours = hold->exchange_for == order_index + 1 ||
                (named && strcmp(named, core->orders.slots[order_index].id) == 0);
    if (hold->status != HF_HOLD_HELD || !ours) return 0;
    hold->exchange_for = order_index + 1;
    hold->exchange_elsewhere = 0;
    hf_map_put(&core->jobs->offer_holds, hold->id, strlen(hold->id), job_index);
    return hold_index + 1;
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
    char hold_id[HF_SERVER_ID_SIZE + 1];
    text_key_t key = offer_key_of(order->id, hold_id);
    uint32_t placed;
    if (hf_core_hold_find(core, hold_id, &placed))
        return offer_adopt(core, job_index, order_index, placed);
    hf_offer_order_t described;
    job_order_describe(core, order, &described, core->jobs->scratch);
    offer_items_t *items = offer_items_find(core, target, &described);
    if (!items) return 0;
    exchange_offer_t offer = offer_of(items, target_index, order->total, &key);
    offer.order_index = order_index;
    offer.expires_at_ms = now + job->offer_ttl_ms;
    uint32_t hold_index = exchange_offer_place(core, &offer, now);
    hf_map_put(&core->jobs->offer_holds, hold_id, strlen(hold_id), job_index);
    return hold_index + 1;
}

hf_error_t hf_core_job_offer_place(hf_core_t *core, const char *event_id,
                                   const hf_offer_order_t *order, hf_time_ms_t expires_at_ms,
                                   hf_time_ms_t now, uint32_t *hold_index, bool *placed) {
    command_at(core, now);
    *placed = false;
    uint32_t target_index;
    if (!hf_core_event(core, event_id, &target_index)) return HF_ERROR_EVENT_NOT_FOUND;
    char hold_id[HF_SERVER_ID_SIZE + 1];
    text_key_t key = offer_key_of(order->order_id, hold_id);
    /* Placed already: a batch asked again after its job's node crashed. */
    *placed = hf_core_hold_find(core, hold_id, hold_index) != NULL;
    hf_event_t *target = core->events.slots[target_index];
    if (*placed || target->cancelled || strlen(order->order_id) > HF_ID_SIZE_MAX ||
        strlen(order->user_id) > HF_USER_ID_SIZE_MAX)
        return HF_OK;
    offer_items_t *items = offer_items_find(core, target, order);
    if (!items) return HF_OK;
    /* The order in this core too (both units loaded here): a local offer, which the job's
     * step adopts. */
    uint32_t local;
    bool here = hf_core_order_find(core, order->order_id, &local) != NULL;
    exchange_offer_t offer = offer_of(items, target_index, order->total, &key);
    offer.order_index = here ? local : 0;
    offer.expires_at_ms = expires_at_ms;
    offer.elsewhere_id = here ? NULL : order->order_id;
    offer.user_id = order->user_id;
    *hold_index = exchange_offer_place(core, &offer, now);
    *placed = true;
    return HF_OK;
}

struct offer_items *job_offer_items_new(void) {
    return malloc(sizeof(offer_items_t));
}

/* ---- an offer settled ---- */

void job_outcome_settle(hf_core_t *core, uint32_t job_index, uint32_t position, bool accepted,
                        hf_time_ms_t at) {
    job_entry_t *entry = &core->jobs->slots[job_index];
    job_outcome_t *outcome = &entry->outcomes[position];
    entry->job.open--;
    if (accepted) {
        outcome->status = HF_JOB_OFFER_ACCEPTED;
        entry->job.accepted++;
    } else {
        job_order_refund(core, job_index, outcome->order, at);
        entry = &core->jobs->slots[job_index];
        outcome = &entry->outcomes[position];
        outcome->status = HF_JOB_OFFER_REFUNDED;
        entry->job.refunded++;
    }
    job_offer_record(core, job_index, outcome, at);
    job_record(core, job_index, HF_MUTATION_JOB, at);
}

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
    job_outcome_settle(core, job_index, position, status == HF_HOLD_CONFIRMED, at);
}

bool hf_core_order_rebooking(const hf_core_t *core, const hf_order_t *order,
                             const char **reservation_id, hf_time_ms_t *expires_at_ms) {
    if (!core->jobs || order->status != HF_ORDER_CONFIRMED) return false;
    const job_outcome_t *outcome = job_outcome_of(core, (uint32_t)(order - core->orders.slots),
                                                  NULL);
    if (!outcome || outcome->status != HF_JOB_OFFER_OFFERED) return false;
    const job_remote_t *remote = job_remote_of(core, outcome);
    if (outcome->hold) {
        const hf_hold_t *hold = &core->holds.slots[outcome->hold - 1];
        *reservation_id = hold->id;
        *expires_at_ms = hold->expires_at_ms;
    } else if (remote) {
        *reservation_id = remote->hold_id;
        *expires_at_ms = remote->expires_at_ms;
    }
    return outcome->hold || remote;
}
