/* The restore of exchange holds (internal.h, "exchange/"): holds are loaded before orders, so
 * an exchange hold cannot know what it keeps of its old order when it is loaded. It waits for
 * that order, found by id through a map (a cancel job's offers can make a hundred thousand
 * waits, and every restored order asks for its own), and is linked when the order comes.
 * Versions are not stored (restore.c counts them from holds and orders): the seats a hold
 * keeps were never changed by it, so restore takes back what it counted for them, for
 * forgotten holds too, which have no slot and wait with their seats. */
#include "core/internal.h"
#include "core/locks.h"
#include "lib/map.h"

#include <stdlib.h>
#include <string.h>

typedef struct exchange_wait {
    /* The hold's id: a wait left for a later load (another unit's) must not link a slot that
     * a forgotten hold's successor took meanwhile. Empty for a forgotten hold's wait. */
    char hold_id[HF_SERVER_ID_SIZE + 1];
    uint32_t hold_index;
    uint32_t next; /* the next wait for the same order, plus one; 0 ends the chain */
    bool take;     /* a held event hold, which takes its seats and units once linked */
    bool done;     /* linked (a wait is never moved: the map names it by its index) */
    /* A forgotten hold's event and seats (seat_count indexes from seat_offset in seats). */
    uint32_t event_index, seat_offset, seat_count;
} exchange_wait_t;

struct exchange_waits {
    exchange_wait_t *items;
    uint32_t count, capacity;
    uint32_t *seats;
    uint32_t seat_count, seat_capacity;
    hf_map_t by_order; /* an old order's id -> the index of its first wait */
};

static struct exchange_waits *waits_of(hf_core_t *core) {
    if (!core->exchange_waits) {
        core->exchange_waits = calloc(1, sizeof *core->exchange_waits);
        if (!core->exchange_waits) abort();
        hf_map_init(&core->exchange_waits->by_order);
    }
    return core->exchange_waits;
}

/* A new wait for order_id, chained behind the order's first one. */
static exchange_wait_t *wait_add(hf_core_t *core, const char *order_id) {
    struct exchange_waits *waits = waits_of(core);
    waits->items = grow(waits->items, &waits->capacity, waits->count + 1, sizeof *waits->items);
    uint32_t index = waits->count++;
    exchange_wait_t *wait = &waits->items[index];
    memset(wait, 0, sizeof *wait);
    uint32_t first;
    if (hf_map_get(&waits->by_order, order_id, strlen(order_id), &first)) {
        wait->next = waits->items[first].next;
        waits->items[first].next = index + 1;
    } else {
        hf_map_put(&waits->by_order, order_id, strlen(order_id), index);
    }
    return wait;
}

void exchange_restore_wait(hf_core_t *core, uint32_t hold_index, const char *order_id, bool take) {
    /* Another unit's order until it is loaded here (wait_link): a remote exchange, whose
     * commit needs that order's lock, and whose old total is known once locked. */
    uint32_t offset = string_store(core, order_id, strlen(order_id));
    hold_of(core, hold_index)->exchange_elsewhere = offset + 1;
    hold_of(core, hold_index)->exchange_elsewhere_total = HF_REMOTE_TOTAL_UNKNOWN;
    exchange_wait_t *wait = wait_add(core, order_id);
    memcpy(wait->hold_id, hold_of(core, hold_index)->id, sizeof wait->hold_id);
    wait->hold_index = hold_index;
    wait->take = take;
}

/* The seats of an ended hold, restored with RESTORE_ENDED_HOLD_SEAT_CHANGES each, that the
 * old order (on their event) has: back to what they were. */
static void forgotten_versions(hf_core_t *core, const hf_order_t *old, uint32_t event_index,
                               const uint32_t *seats, uint32_t seat_count) {
    if (old->target != HF_TARGET_EVENT || old->event != event_index) return;
    hf_event_t *event = core->events.slots[event_index];
    for (uint32_t i = 0; i < seat_count; i++)
        if (exchange_seat_kept(core, old, seats[i]))
            event->seats[seats[i]].version -= RESTORE_ENDED_HOLD_SEAT_CHANGES;
}

void exchange_restore_forgotten(hf_core_t *core, const char *order_id, uint32_t event_index,
                                const uint32_t *seats, uint32_t seat_count) {
    uint32_t order_index;
    const hf_order_t *old = hf_core_order_find(core, order_id, &order_index);
    if (old) {
        forgotten_versions(core, old, event_index, seats, seat_count);
        return;
    }
    exchange_wait_t *wait = wait_add(core, order_id);
    struct exchange_waits *waits = core->exchange_waits;
    waits->seats = grow(waits->seats, &waits->seat_capacity, waits->seat_count + seat_count,
                        sizeof *waits->seats);
    memcpy(waits->seats + waits->seat_count, seats, seat_count * sizeof *seats);
    wait->event_index = event_index;
    wait->seat_offset = waits->seat_count;
    wait->seat_count = seat_count;
    waits->seat_count += seat_count;
}

/* One wait, its order restored at order_index: linked, its versions set right, and what a
 * held hold does not keep taken. */
static void wait_link(hf_core_t *core, exchange_wait_t *wait, uint32_t order_index) {
    wait->done = true;
    if (!wait->hold_id[0]) {
        forgotten_versions(core, &core->orders.slots[order_index], wait->event_index,
                           core->exchange_waits->seats + wait->seat_offset, wait->seat_count);
        return;
    }
    hf_hold_t *hold = hold_of(core, wait->hold_index);
    if (strcmp(hold->id, wait->hold_id) != 0 || hold->status == HF_HOLD_EVICTED) return;
    hold->exchange_for = order_index + 1;
    hold->exchange_elsewhere = 0;
    exchange_restore_versions(core, wait->hold_index);
    /* What it does not keep of its old order, now that the order is there. */
    if (wait->take) hold_take(core, wait->hold_index, hold->created_at_ms, false);
}

void exchange_restore_link(hf_core_t *core, const char *order_id, uint32_t order_index) {
    struct exchange_waits *waits = core->exchange_waits;
    uint32_t index;
    if (!waits || !hf_map_get(&waits->by_order, order_id, strlen(order_id), &index)) return;
    for (uint32_t next = index + 1; next; next = waits->items[next - 1].next) {
        exchange_wait_t *wait = &waits->items[next - 1];
        if (!wait->done) wait_link(core, wait, order_index);
    }
}

void exchange_restore_versions(hf_core_t *core, uint32_t hold_index) {
    const hf_hold_t *hold = hold_of(core, hold_index);
    const hf_order_t *old = exchange_old_order(core, hold);
    if (!old || hold->target != HF_TARGET_EVENT) return;
    uint32_t counted = hold->status == HF_HOLD_HELD ? 1 : RESTORE_ENDED_HOLD_SEAT_CHANGES;
    hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        if (exchange_seat_kept(core, old, items[i].index))
            event->seats[items[i].index].version -= counted;
}

void hf_core_restore_finish(hf_core_t *core) {
    struct exchange_waits *waits = core->exchange_waits;
    for (uint32_t i = 0; waits && i < waits->count; i++) {
        exchange_wait_t *wait = &waits->items[i];
        if (wait->done || !wait->take) continue;
        /* Its old order is in no unit loaded here (another's): it keeps nothing of it. The
         * wait stays, to link the hold should that unit be loaded into this core later. */
        wait->take = false;
        hold_take(core, wait->hold_index, hold_of(core, wait->hold_index)->created_at_ms, false);
    }
    jobs_restore_finish(core);
}

void exchange_free(hf_core_t *core) {
    exchange_locks_free(core);
    struct exchange_waits *waits = core->exchange_waits;
    if (!waits) return;
    hf_map_free(&waits->by_order);
    free(waits->items);
    free(waits->seats);
    free(waits);
    core->exchange_waits = NULL;
}
