/* Holds: made, extended, released, expired and ended; the timer entries of their expiry; the
 * finished ones kept answerable for a while, then forgotten and revived from the store. */
#include "core/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookups ---- */

static bool hold_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    return id_field_equal(key->core->holds.slots[index].id, &key->id);
}

/* Longer ids are never stored (server_id_copy cuts them): they are not compared past the
 * field. */
static bool hold_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->holds.ids, id->hash, hold_key_match, &key, index);
}

const hf_hold_t *hf_core_hold_find(const hf_core_t *core, const char *hold_id, uint32_t *index) {
    uint32_t found;
    if (!hold_id) return NULL;
    text_key_t key = text_key_of(hold_id, strlen(hold_id));
    if (!hold_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->holds.slots[found];
}

const hf_hold_t *hf_core_hold_at(const hf_core_t *core, uint32_t index) {
    if (index >= core->holds.count || core->holds.slots[index].status == HF_HOLD_EVICTED)
        return NULL;
    return &core->holds.slots[index];
}

uint32_t hf_core_holds_active(const hf_core_t *core) { return core->holds.active; }

const hf_item_t *hf_core_items(const hf_core_t *core, uint32_t item_offset) {
    return core->items + item_offset;
}

/* ---- a user's held holds on an event ---- */

/* Appends a hold to its owner's list of held holds. */
static inline void active_push(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    hold_state_t *state = &core->holds.states[hold_index];
    state->previous_active = owner->last_active;
    state->next_active = 0;
    if (owner->last_active) core->holds.states[owner->last_active - 1].next_active = hold_index + 1;
    else owner->first_active = hold_index + 1;
    owner->last_active = hold_index + 1;
}

/* Takes a hold out of its owner's list of held holds. */
static inline void active_remove(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    const hold_state_t *state = &core->holds.states[hold_index];
    uint32_t previous = state->previous_active, next = state->next_active;
    if (previous) core->holds.states[previous - 1].next_active = next;
    else owner->first_active = next;
    if (next) core->holds.states[next - 1].previous_active = previous;
    else owner->last_active = previous;
}

void hold_active_push(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    active_push(core, owner, hold_index);
}

void hold_active_remove(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    active_remove(core, owner, hold_index);
}

/* ---- finished holds: kept in the order they finished, the oldest forgotten first ---- */

void finished_push(hf_core_t *core, uint32_t hold_index) {
    hold_state_t *state = &core->holds.states[hold_index];
    state->next_finished = 0;
    if (core->holds.finished_last)
        core->holds.states[core->holds.finished_last - 1].next_finished = hold_index + 1;
    else core->holds.finished_first = hold_index + 1;
    core->holds.finished_last = hold_index + 1;
    core->holds.finished_count++;
}

/* A walk of the list from its oldest: only a late payment commit (a lapsed hold paid for)
 * takes a hold out of the middle, which is rare enough that the list keeps no back links. */
void finished_remove(hf_core_t *core, uint32_t hold_index) {
    uint32_t previous = 0;
    for (uint32_t h = core->holds.finished_first; h != 0;
         h = core->holds.states[h - 1].next_finished) {
        if (h != hold_index + 1) {
            previous = h;
            continue;
        }
        uint32_t next = core->holds.states[hold_index].next_finished;
        if (previous) core->holds.states[previous - 1].next_finished = next;
        else core->holds.finished_first = next;
        if (core->holds.finished_last == hold_index + 1) core->holds.finished_last = previous;
        core->holds.states[hold_index].next_finished = 0;
        core->holds.finished_count--;
        return;
    }
    assert(!"the hold is not in the finished list");
}

/* The id index anew from the holds that are not forgotten: rebuilt in one pass over the holds,
 * whose independent inserts the processor overlaps, where removing entries one by one waited
 * for a cache miss each. */
static void hold_ids_rebuild(hf_core_t *core) {
    hf_index_map_clear(&core->holds.ids);
    for (uint32_t h = 0; h < core->holds.count; h++) {
        const hf_hold_t *hold = &core->holds.slots[h];
        if (hold->status != HF_HOLD_EVICTED)
            hf_index_map_insert(&core->holds.ids, hf_map_hash(hold->id, strlen(hold->id)), h);
    }
    core->holds.ids_stale = 0;
}

/* Forgets the oldest finished hold: its id stops matching (the index entry stays until the
 * next rebuild) and its slot joins the free list. Its items stay reserved for the slot's next
 * hold. */
static void finished_forget_first(hf_core_t *core) {
    uint32_t index = core->holds.finished_first - 1;
    hold_state_t *state = &core->holds.states[index];
    hf_hold_t *hold = &core->holds.slots[index];
    core->holds.finished_first = state->next_finished;
    if (core->holds.finished_first == 0) core->holds.finished_last = 0;
    core->holds.finished_count--;
    hold->status = HF_HOLD_EVICTED;
    hold->id[0] = '\0';
    state->next_finished = core->holds.free_first;
    core->holds.free_first = index + 1;
    if (++core->holds.ids_stale > hf_index_map_count(&core->holds.ids) / 2) hold_ids_rebuild(core);
}

void hf_core_set_finished_max(hf_core_t *core, uint32_t finished_max) {
    core->holds.finished_max = finished_max;
}

uint32_t hf_core_holds_finished(const hf_core_t *core) { return core->holds.finished_count; }

uint32_t hf_core_evict(hf_core_t *core, uint64_t durable_changes) {
    uint32_t forgotten = 0;
    while (core->holds.finished_count > core->holds.finished_max &&
           core->holds.states[core->holds.finished_first - 1].last_change <= durable_changes) {
        finished_forget_first(core);
        forgotten++;
    }
    if (core->queue) forgotten += queue_evict(core, durable_changes);
    if (core->dispatch) forgotten += dispatch_evict(core, durable_changes);
    return forgotten;
}

/* ---- expiry: each held hold has an entry in core->timer at its expires_at ---- */

/* An entry is left behind once its hold is no longer held at that expires_at (extended,
 * released, committed). */
static inline bool hold_entry_stale(const hf_core_t *core, const hf_timer_entry_t *entry) {
    const hf_hold_t *hold = &core->holds.slots[entry->index];
    return hold->status != HF_HOLD_HELD || hold->expires_at_ms != entry->deadline_ms;
}

bool hold_expiry_stale(const hf_core_t *core, const hf_timer_entry_t *entry) {
    return hold_entry_stale(core, entry);
}

/* The prune after every hold change: a hold's entry is checked here, inline (the hold path
 * makes no call for it); any other kind by its row of the table (timer_entry_stale). */
static bool expiry_stale(const void *context, const hf_timer_entry_t *entry) {
    const hf_core_t *core = context;
    if (entry->kind != HF_TIMER_HOLD) return timer_entry_stale(core, entry);
    return hold_entry_stale(core, entry);
}

/* Drops top entries left behind by extensions, releases and commits, so the top is always
 * the deadline of a hold that is really held. */
static void expiry_prune(hf_core_t *core) { hf_timer_prune(&core->timer, expiry_stale, core); }

static void exchange_hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status,
                                 hf_time_ms_t at, bool report);

void hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at,
                 bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    assert(hold->status == HF_HOLD_HELD);
    if (hold->target == HF_TARGET_CALENDAR) {
        calendar_hold_finish(core, hold_index, status, at, report);
        expiry_prune(core);
        return;
    }
    if (hold->exchange_for) {
        exchange_hold_finish(core, hold_index, status, at, report);
        job_offer_settle(core, hold_index, status, at);
        expiry_prune(core);
        return;
    }
    hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    hold->status = status;
    core->holds.active--;
    event_user_t *owner = owner_record(core, hold->owner);
    owner->held_units -= item_units(items, hold->seat_count, hold->pool_count);
    active_remove(core, owner, hold_index);
    if (report) record_hold_updated(core, hold_index, at, NULL);
    if (core->waitlists) waitlist_hold_freed(core, hold_index, status, at);
    if (hold_status_finished(status)) finished_push(core, hold_index);
    if (hold->exchange_elsewhere) job_offer_elsewhere_ended(core, hold_index, status);
    for (uint32_t i = 0; i < hold->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, at, report);
    for (uint32_t i = 0; i < hold->pool_count; i++)
        pool_move(core, event, &items[hold->seat_count + i], -1, 0, hold->allocation, at, report);
    expiry_prune(core);
}

/* hold_finish's share for an exchange hold on an event: only what it really held is given
 * back (a kept seat stays its old order's; a seat is freed only while held by this hold). */
static void exchange_hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status,
                                 hf_time_ms_t at, bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    const hf_order_t *old = exchange_old_order(core, hold);
    hold->status = status;
    core->holds.active--;
    event_user_t *owner = owner_record(core, hold->owner);
    owner->held_units -= item_units(items, hold->seat_count, hold->pool_count) -
                         exchange_kept_units(core, hold);
    active_remove(core, owner, hold_index);
    if (report) record_hold_updated(core, hold_index, at, NULL);
    if (hold_status_finished(status)) finished_push(core, hold_index);
    if (status != HF_HOLD_CONFIRMED)
        waitlist_came_free(core, hold->event, items, hold->seat_count, hold->pool_count);
    for (uint32_t i = 0; i < hold->seat_count; i++) {
        const hf_seat_t *seat = &event->seats[items[i].index];
        if (seat->status == HF_SEAT_HELD && seat->owner == hold_index + 1)
            seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, at, report);
    }
    for (uint32_t i = hold->seat_count; i < hold->seat_count + hold->pool_count; i++) {
        hf_item_t held = items[i];
        if (old) held.quantity -= exchange_pool_kept(core, old, held.index, held.quantity);
        pool_move(core, event, &held, -1, 0, hold->allocation, at, report);
    }
}

void hold_expiry_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now) {
    hf_hold_t *hold = hold_of(core, entry->index);
    hold_finish(core, entry->index, HF_HOLD_EXPIRED, hold->expires_at_ms, true);
    core->holds.expired++;
}

/* ---- new holds ---- */

/* Item space for a slot: a power of two, so a slot reused by ever larger holds moves to new
 * items at most log2(HF_HOLD_ITEMS_MAX) times and the items left behind stay bounded. */
static uint32_t item_capacity_for(uint32_t count) {
    uint32_t capacity = 1;
    while (capacity < count) capacity *= 2;
    return capacity;
}

/* A slot for a new hold of item_count items: a forgotten hold's slot when there is one (with
 * its items when they are enough), else a new one. Returns the index; the hold itself is
 * cleared except for item_offset. */
uint32_t hold_slot_take(hf_core_t *core, uint32_t item_count) {
    uint32_t index;
    if (core->holds.free_first != 0) {
        index = core->holds.free_first - 1;
        core->holds.free_first = core->holds.states[index].next_finished;
    } else {
        core->holds.slots = grow(core->holds.slots, &core->holds.capacity, core->holds.count + 1,
                                 sizeof *core->holds.slots);
        core->holds.states = grow(core->holds.states, &core->holds.state_capacity,
                                  core->holds.count + 1, sizeof *core->holds.states);
        index = core->holds.count++;
        core->holds.states[index].item_capacity = 0;
        core->holds.states[index].calendar_item_capacity = 0;
    }
    hold_state_t *state = &core->holds.states[index];
    hf_hold_t *hold = &core->holds.slots[index];
    uint32_t item_offset = state->item_capacity ? state->item_reserved : 0;
    uint32_t capacity = item_capacity_for(item_count);
    if (state->item_capacity < capacity) {
        state->item_capacity = capacity;
        item_offset = item_allocate(core, state->item_capacity);
    }
    state->item_reserved = item_offset;
    memset(hold, 0, sizeof *hold);
    hold->item_offset = item_offset;
    state->previous_active = state->next_active = state->next_finished = 0;
    state->last_change = 0;
    return index;
}

uint32_t hold_allocate(hf_core_t *core, const hf_hold_request_t *request, const text_key_t *hold_id,
                       uint32_t event, user_ref_t *user) {
    uint32_t index = hold_slot_take(core, core->scratch.seat_count + request->pool_count);
    hf_hold_t *hold = &core->holds.slots[index];
    text_key_t key = server_id_copy(hold->id, hold_id);
    hold->event = event;
    hold->user = user_intern(core, user);
    hold->seat_count = core->scratch.seat_count;
    hold->pool_count = request->pool_count;
    hold->total = items_fill(core, core->events.slots[event], request, hold->item_offset);
    hold->allocation = core->scratch.allocation;
    ((event_tables_t *)core->events.slots[event]->internal)->used = true;
    hf_index_map_insert(&core->holds.ids, key.hash, index);
    return index;
}

static void exchange_hold_take(hf_core_t *core, uint32_t hold_index, hf_time_ms_t now, bool report);

void hold_take(hf_core_t *core, uint32_t hold_index, hf_time_ms_t now, bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    hold->owner = event_user_intern(core, hold->event, hold->user);
    event_user_t *owner = owner_record(core, hold->owner);
    owner->held_units += item_units(items, hold->seat_count, hold->pool_count);
    active_push(core, owner, hold_index);
    core->holds.active++;
    if (hold->exchange_for) {
        exchange_hold_take(core, hold_index, now, report);
        return;
    }
    for (uint32_t i = 0; i < hold->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_HELD, hold_index + 1, now, report);
    for (uint32_t i = 0; i < hold->pool_count; i++)
        pool_move(core, event, &items[hold->seat_count + i], 1, 0, hold->allocation, now, report);
    hf_timer_push(&core->timer, hold->expires_at_ms, HF_TIMER_HOLD, hold_index);
}

/* hold_take's share for an exchange hold: what it keeps of its old order is not held (it
 * stays sold to that order), and counts as none of the user's held units. */
static void exchange_hold_take(hf_core_t *core, uint32_t hold_index, hf_time_ms_t now,
                               bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    const hf_order_t *old = exchange_old_order(core, hold);
    owner_record(core, hold->owner)->held_units -= exchange_kept_units(core, hold);
    for (uint32_t i = 0; i < hold->seat_count; i++)
        if (!old || !exchange_seat_kept(core, old, items[i].index))
            seat_set(core, event, items[i].index, HF_SEAT_HELD, hold_index + 1, now, report);
    for (uint32_t i = hold->seat_count; i < hold->seat_count + hold->pool_count; i++) {
        hf_item_t held = items[i];
        if (old) held.quantity -= exchange_pool_kept(core, old, held.index, held.quantity);
        pool_move(core, event, &held, 1, 0, hold->allocation, now, report);
    }
    hf_timer_push(&core->timer, hold->expires_at_ms, HF_TIMER_HOLD, hold_index);
}

static void release_replaced(hf_core_t *core, uint32_t event, uint32_t user, hf_time_ms_t now) {
    event_user_t *owner = event_user_find(core, event, user);
    while (owner && owner->last_active != 0)
        hold_finish(core, owner->last_active - 1, HF_HOLD_RELEASED, now, true);
}

bool hold_id_taken(const hf_core_t *core, const char *id, text_key_t *key) {
    if (!id) return true;
    *key = server_id_key(id);
    uint32_t index;
    return hold_index_find(core, key, &index);
}

/* The keys of a hold request's two ids, each hashed once. */
typedef struct hold_keys {
    text_key_t hold_id; /* text NULL when the request has none */
    text_key_t user_id; /* text NULL when the request has none */
} hold_keys_t;

/* Hashes the request's ids and starts loading the slots where their lookups begin, and the
 * oldest finished hold when the core keeps more than it may (forgetting reads it next): the
 * cache misses of a large table then overlap the checks that come before the lookups. */
static hold_keys_t hold_keys_of(const hf_core_t *core, const hf_hold_request_t *request) {
    hold_keys_t keys = {{NULL, 0, 0}, {NULL, 0, 0}};
    if (request->hold_id) {
        keys.hold_id = server_id_key(request->hold_id);
        hf_index_map_prefetch(&core->holds.ids, keys.hold_id.hash);
    }
    if (request->user_id) {
        keys.user_id = text_key_of(request->user_id, strlen(request->user_id));
        hf_index_map_prefetch(&core->users.ids, keys.user_id.hash);
    }
    if (core->holds.finished_first != 0 && core->holds.finished_count >= core->holds.finished_max) {
        __builtin_prefetch(&core->holds.slots[core->holds.finished_first - 1]);
        __builtin_prefetch(&core->holds.states[core->holds.finished_first - 1]);
    }
    return keys;
}

static hf_error_t exchange_check(hf_core_t *core, const hf_hold_request_t *request,
                                 uint32_t event_index, uint32_t *exchange);

/* Checks a hold request; on success *user is the user named and *exchange the old order of
 * an exchange hold (index + 1, else 0). */
static hf_error_t hold_check(hf_core_t *core, const hf_hold_request_t *request,
                             uint32_t event_index, const hold_keys_t *keys, user_ref_t *user,
                             uint32_t *exchange, hf_error_detail_t *detail) {
    const hf_event_t *event = core->events.slots[event_index];
    /* As check_request_shape would answer; first, so the user's key is known to be set. */
    if (!keys->user_id.text) return invalid_because(detail, "user_id", HF_FAULT_REQUIRED);
    hf_error_t error = check_request_shape(event, request, keys->user_id.length, detail);
    if (!error) error = resolve_seats(core, event, request, detail);
    if (!error) error = resolve_pools(core, event, request, detail);
    if (!error) error = check_sales_open(event, request);
    if (!error) error = allocation_resolve(core, event_index, request);
    /* An exchange hold takes the public's inventory (its old order's counts as free): it
     * names no allocation. */
    if (!error && request->allocation_id && request->exchange_for)
        return invalid(detail, "allocation");
    if (!error) error = exchange_check(core, request, event_index, exchange);
    if (error) return error;
    uint32_t taken;
    if (!keys->hold_id.text || hold_index_find(core, &keys->hold_id, &taken))
        return invalid_because(detail, "id", HF_FAULT_ID_TAKEN);
    *user = user_ref_find(core, &keys->user_id);
    const event_user_t *owner = event_user_find(core, event_index, user->index);
    error = check_available(core, event, request, owner, detail);
    if (!error && request->best_count > 0)
        error = pick_best(core, core->events.slots[event_index], request, owner, detail);
    if (error) return error;
    uint32_t replaced = request->replace_existing && owner ? owner->held_units : 0;
    /* An exchange gives the old order's units on this event back. */
    if (core->scratch.exchange_order)
        replaced += exchange_order_units(core,
                                         &core->orders.slots[core->scratch.exchange_order - 1]);
    return check_user_limit(event, request, owner, replaced, detail);
}

/* The old order an exchange hold names, checked (*exchange its index + 1, else 0), and the
 * scratch's old order on this event, whose seats and units count as free. */
static hf_error_t exchange_check(hf_core_t *core, const hf_hold_request_t *request,
                                 uint32_t event_index, uint32_t *exchange) {
    core->scratch.exchange_order = 0;
    *exchange = 0;
    if (!request->exchange_for) return HF_OK;
    uint32_t order_index;
    hf_error_t error = exchange_order_check(core, request->exchange_for, request->user_id,
                                            &order_index);
    if (error) return error;
    const hf_order_t *old = &core->orders.slots[order_index];
    *exchange = order_index + 1;
    if (old->target == HF_TARGET_EVENT && old->event == event_index)
        core->scratch.exchange_order = order_index + 1;
    return HF_OK;
}

hf_error_t hf_core_hold(hf_core_t *core, const hf_hold_request_t *request, hf_time_ms_t now,
                        uint32_t *hold_index, hf_error_detail_t *detail) {
    hold_keys_t keys = hold_keys_of(core, request);
    command_at(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    user_ref_t user;
    uint32_t exchange;
    hf_error_t error = hold_check(core, request, event_index, &keys, &user, &exchange, detail);
    if (error) return error;
    const hf_event_t *event = core->events.slots[event_index];
    if (request->replace_existing) release_replaced(core, event_index, user.index, now);
    uint32_t index = hold_allocate(core, request, &keys.hold_id, event_index, &user);
    hf_hold_t *hold = hold_of(core, index);
    hold->exchange_for = exchange;
    hold->exchange_elsewhere = core->scratch.exchange_elsewhere;
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = now;
    hold->expires_at_ms = now + (request->ttl_ms < 0 ? event->hold_ttl_ms : request->ttl_ms);
    record_hold_created(core, index, request->user_id);
    hold_take(core, index, now, true);
    *hold_index = index;
    waitlist_settle(core, now); /* what the replaced holds freed */
    return HF_OK;
}

/* ---- extend, release, revive ---- */

hf_error_t hold_owned(hf_core_t *core, const char *hold_id, const char *user_id, uint32_t *index) {
    const hf_hold_t *hold = hf_core_hold_find(core, hold_id, index);
    if (!hold) return HF_ERROR_HOLD_NOT_FOUND;
    if (!user_id || !user_has_id(core, core->holds.slots[*index].user, user_id))
        return HF_ERROR_NOT_OWNER;
    return HF_OK;
}

hf_error_t hf_core_extend(hf_core_t *core, const char *hold_id, const char *user_id, int64_t ttl_ms,
                          hf_time_ms_t now, bool *capped) {
    command_at(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_EXPIRED) return HF_ERROR_HOLD_EXPIRED;
    if (hold->status != HF_HOLD_HELD) return HF_ERROR_HOLD_NOT_ACTIVE;
    bool calendar = hold->target == HF_TARGET_CALENDAR;
    const hf_event_t *event = calendar ? NULL : core->events.slots[hold->event];
    int64_t hold_ttl_ms, max_hold_ms;
    if (calendar) calendar_hold_limits(core, hold->event, &hold_ttl_ms, &max_hold_ms);
    else hold_ttl_ms = event->hold_ttl_ms, max_hold_ms = event->max_hold_ms;
    if (ttl_ms < 0) ttl_ms = hold_ttl_ms;
    if (ttl_ms == 0) return HF_ERROR_INVALID_REQUEST;
    if (ttl_ms > HF_HOLD_TTL_MS_MAX) ttl_ms = HF_HOLD_TTL_MS_MAX;
    hf_time_ms_t wanted = now + ttl_ms;
    hf_time_ms_t cap = hold->created_at_ms + max_hold_ms;
    *capped = wanted > cap;
    hf_time_ms_t expires_at = *capped ? cap : wanted;
    if (expires_at <= hold->expires_at_ms) return HF_OK; /* never earlier */
    hold->expires_at_ms = expires_at;
    hf_timer_push(&core->timer, expires_at, HF_TIMER_HOLD, index);
    expiry_prune(core);
    record_hold_updated(core, index, now, user_id);
    if (calendar) return HF_OK;
    /* The seats stay held past their old expiry only once this record is durable. */
    uint64_t *seat_changes = seat_changes_of(event);
    const hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        seat_changes[items[i].index] = core->change_count;
    return HF_OK;
}

hf_error_t hf_core_release(hf_core_t *core, const char *hold_id, const char *user_id,
                           hf_time_ms_t now) {
    command_at(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_CONFIRMED) return HF_ERROR_ALREADY_CONFIRMED;
    if (hold->status == HF_HOLD_HELD) hold_finish(core, index, HF_HOLD_RELEASED, now, true);
    waitlist_settle(core, now);
    return HF_OK;
}

hf_error_t hf_core_revive_hold(hf_core_t *core, const hf_stored_hold_t *stored, uint32_t *index) {
    if (!hold_status_finished(stored->status)) return HF_ERROR_INVALID_REQUEST;
    uint32_t revived;
    hf_error_t error = stored_hold_place(core, stored, &revived);
    if (error) return error;
    hold_of(core, revived)->status = stored->status;
    /* It finished long ago, but it is the most recently asked for: kept as if it had just
     * finished, so a client polling it does not send each poll to the store. */
    finished_push(core, revived);
    *index = revived;
    return HF_OK;
}
