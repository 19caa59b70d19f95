/* Order locks (core/locks.h): the old unit's side of an exchange across two owners. A short
 * table (locks are exchanges in flight), searched by order index; a lock's records are
 * HF_MUTATION_ORDER_LOCK, the finish's the old order's exchange record (exchange.c). */
#include "core/locks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

typedef struct order_lock {
    uint32_t order_index;
    char hold_id[HF_SERVER_ID_SIZE + 1];
    char hold_unit[HF_ID_SIZE_MAX + 1];
    hf_time_ms_t locked_at_ms;
} order_lock_t;

struct order_locks {
    order_lock_t items[HF_ORDER_LOCKS_MAX];
    uint32_t count;
};

static order_lock_t *lock_find(const hf_core_t *core, uint32_t order_index) {
    struct order_locks *locks = core->order_locks;
    for (uint32_t i = 0; locks && i < locks->count; i++)
        if (locks->items[i].order_index == order_index) return &locks->items[i];
    return NULL;
}

bool exchange_order_locked(const hf_core_t *core, uint32_t order_index) {
    return lock_find(core, order_index) != NULL;
}

bool exchange_decided_unfinished(const hf_core_t *core, uint32_t new_index) {
    const hf_order_t *order = &core->orders.slots[new_index];
    if (!order->replaces || !order->hold) return false;
    const hf_order_t *old = &core->orders.slots[order->replaces - 1];
    const hf_hold_t *hold = &core->holds.slots[order->hold - 1];
    const order_lock_t *lock = lock_find(core, order->replaces - 1);
    return old->status == HF_ORDER_CONFIRMED && old->replaced_by == 0 && lock &&
           hold->status == HF_HOLD_CONFIRMED && strcmp(lock->hold_id, hold->id) == 0;
}

const char *hf_core_order_locked_by(const hf_core_t *core, uint32_t order_index) {
    const order_lock_t *lock = lock_find(core, order_index);
    return lock ? lock->hold_id : NULL;
}

/* A new lock, or NULL when the table is full. */
static order_lock_t *lock_add(hf_core_t *core, uint32_t order_index, const char *hold_id,
                              const char *hold_unit, hf_time_ms_t now) {
    if (!core->order_locks) {
        core->order_locks = calloc(1, sizeof *core->order_locks);
        if (!core->order_locks) abort();
    }
    struct order_locks *locks = core->order_locks;
    if (locks->count == HF_ORDER_LOCKS_MAX) return NULL;
    order_lock_t *lock = &locks->items[locks->count++];
    lock->order_index = order_index;
    snprintf(lock->hold_id, sizeof lock->hold_id, "%s", hold_id);
    snprintf(lock->hold_unit, sizeof lock->hold_unit, "%s", hold_unit);
    lock->locked_at_ms = now;
    return lock;
}

static void lock_remove(hf_core_t *core, order_lock_t *lock) {
    struct order_locks *locks = core->order_locks;
    *lock = locks->items[--locks->count];
}

static void record_lock(hf_core_t *core, const order_lock_t *lock, bool locked, hf_time_ms_t now) {
    hf_order_t *order = &core->orders.slots[lock->order_index];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_ORDER_LOCK,
        .at_ms = now,
        .as.order_lock = {.order_id = order->id,
                          .event_id = unit_id_of(core, order->target, order->event),
                          .hold_id = lock->hold_id,
                          .hold_unit = lock->hold_unit,
                          .locked = locked}};
    record_emit(core, &mutation);
    order->last_change = core->change_count;
}

hf_error_t hf_core_order_lock(hf_core_t *core, const char *order_id, const char *hold_id,
                              const char *hold_unit, hf_time_ms_t now) {
    command_at(core, now);
    if (strlen(hold_id) > HF_SERVER_ID_SIZE || strlen(hold_unit) > HF_ID_SIZE_MAX)
        return HF_ERROR_INVALID_REQUEST;
    uint32_t index;
    const hf_order_t *order = hf_core_order_find(core, order_id, &index);
    if (!order) return HF_ERROR_ORDER_NOT_FOUND;
    const order_lock_t *held = lock_find(core, index);
    if (held) return strcmp(held->hold_id, hold_id) == 0 ? HF_OK : HF_ERROR_ORDER_NOT_ACTIVE;
    if (order->status != HF_ORDER_CONFIRMED) return HF_ERROR_ORDER_NOT_ACTIVE;
    /* A cancelled event's orders are its cancel job's to refund or rebook (API.md section 13):
     * locked only for the commit of the job's own offer, placed on another unit. */
    if (order->target == HF_TARGET_EVENT && core->events.slots[order->event]->cancelled &&
        !job_offer_remote_open(core, index, hold_id))
        return HF_ERROR_ORDER_NOT_ACTIVE;
    const order_lock_t *lock = lock_add(core, index, hold_id, hold_unit, now);
    if (!lock) return HF_ERROR_CAPACITY;
    record_lock(core, lock, true, now);
    return HF_OK;
}

hf_error_t hf_core_order_unlock(hf_core_t *core, const char *order_id, const char *hold_id,
                                hf_time_ms_t now) {
    command_at(core, now);
    uint32_t index;
    if (!hf_core_order_find(core, order_id, &index)) return HF_ERROR_ORDER_NOT_FOUND;
    order_lock_t *lock = lock_find(core, index);
    if (!lock || strcmp(lock->hold_id, hold_id) != 0) return HF_OK;
    record_lock(core, lock, false, now);
    lock_remove(core, lock);
    return HF_OK;
}

/* Whether the order was exchanged for new_order_id already (a finish repeated). */
static bool exchanged_for(const hf_core_t *core, const hf_order_t *order,
                          const char *new_order_id) {
    if (order->status != HF_ORDER_EXCHANGED) return false;
    const char *by = order->replaced_by ? exchange_order_id(core, order->replaced_by)
                                        : hf_core_string(core, order->replaced_by_elsewhere);
    return by && strcmp(by, new_order_id) == 0;
}

hf_error_t hf_core_order_exchange_finish(hf_core_t *core, const char *order_id, const char *hold_id,
                                         const char *new_order_id, hf_time_ms_t now) {
    command_at(core, now);
    if (strlen(new_order_id) > HF_SERVER_ID_SIZE) return HF_ERROR_INVALID_REQUEST;
    uint32_t index;
    const hf_order_t *order = hf_core_order_find(core, order_id, &index);
    if (!order) return HF_ERROR_ORDER_NOT_FOUND;
    if (exchanged_for(core, order, new_order_id)) return HF_OK;
    order_lock_t *lock = lock_find(core, index);
    if (!lock || strcmp(lock->hold_id, hold_id) != 0 || order->status != HF_ORDER_CONFIRMED)
        return HF_ERROR_ORDER_NOT_ACTIVE;
    /* The lock's end first: a load sees the order exchanged with no lock, never locked and
     * exchanged. Both are in this command's batch. */
    record_lock(core, lock, false, now);
    lock_remove(core, lock);
    exchange_finish_remote(core, index, new_order_id, now);
    const hf_order_t *finished = &core->orders.slots[index];
    if (finished->target == HF_TARGET_EVENT && core->events.slots[finished->event]->cancelled)
        job_offer_remote_accepted(core, index, now);
    return HF_OK;
}

uint32_t hf_core_order_lock_count(const hf_core_t *core) {
    return core->order_locks ? core->order_locks->count : 0;
}

hf_order_lock_view_t hf_core_order_lock_at(const hf_core_t *core, uint32_t index) {
    const order_lock_t *lock = &core->order_locks->items[index];
    return (hf_order_lock_view_t){core->orders.slots[lock->order_index].id, lock->hold_id,
                                  lock->hold_unit, lock->locked_at_ms};
}

void hf_core_order_lock_restore(hf_core_t *core, const hf_stored_order_lock_t *stored) {
    uint32_t index;
    const hf_order_t *order = hf_core_order_find(core, stored->order_id, &index);
    if (!order || order->status != HF_ORDER_CONFIRMED || lock_find(core, index)) return;
    if (!stored->hold_id || !stored->hold_unit || strlen(stored->hold_id) > HF_SERVER_ID_SIZE ||
        strlen(stored->hold_unit) > HF_ID_SIZE_MAX)
        return;
    lock_add(core, index, stored->hold_id, stored->hold_unit, stored->locked_at_ms);
}

void exchange_locks_free(hf_core_t *core) {
    free(core->order_locks);
    core->order_locks = NULL;
}
