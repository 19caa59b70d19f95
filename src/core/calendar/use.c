/* Calendar holds and orders (API.md section 12): made by a hold or a booking, their spans
 * taken into the span index and given back, and the calendar's share of the commands every
 * hold and order goes through (hold.c, order.c and payment.c branch here on the target). A
 * hold's spans stay in the index when it is committed: its order takes its items as they are,
 * so the free quantity never moves. */
#include "core/calendar/internal.h"

#include <string.h>

/* ---- items and the index ---- */

uint32_t calendar_items_allocate(hf_core_t *core, uint32_t count) {
    calendars_t *calendars = core->calendars;
    uint32_t needed = calendars->item_count + count + 1;
    calendars->items = grow(calendars->items, &calendars->item_capacity, needed,
                            sizeof *calendars->items);
    calendars->live = grow(calendars->live, &calendars->live_capacity, needed,
                           sizeof *calendars->live);
    uint32_t offset = calendars->item_count;
    memset(calendars->live + offset, 0, count);
    calendars->item_count += count;
    return offset;
}

/* Items for a hold slot: the slot's own when they are enough (a slot is reused once its hold
 * is forgotten), else new ones, as event holds' items are. */
uint32_t calendar_hold_items(hf_core_t *core, uint32_t hold_index, uint32_t count) {
    hold_state_t *state = &core->holds.states[hold_index];
    if (state->calendar_item_capacity < count) {
        uint32_t capacity = 1;
        while (capacity < count) capacity *= 2;
        state->calendar_items = calendar_items_allocate(core, capacity);
        state->calendar_item_capacity = capacity;
    }
    memset(core->calendars->live + state->calendar_items, 0, count);
    return state->calendar_items;
}

void use_apply(hf_calendar_t *calendar, const hf_calendar_item_t *item, int sign) {
    calendar_tables_t *tables = tables_of(calendar);
    const hf_resource_definition_t *resource = &calendar->definition.resources[item->resource];
    resource_spans_t *spans = &tables->spans[item->resource];
    int64_t quantity = (int64_t)item->quantity * sign;
    span_add(&tables->pool, &spans->root, item->from, quantity);
    span_add(&tables->pool, &spans->root, item->to, -quantity);
    if (!resource_buffered(resource)) return;
    int64_t from, to;
    widened(resource, item->from, item->to, &from, &to);
    span_add(&tables->pool, &spans->wide_root, (int32_t)from, quantity);
    span_add(&tables->pool, &spans->wide_root, (int32_t)to, -quantity);
}

/* Takes the spans of the items at offset that are not in the index yet. */
static void uses_take(hf_core_t *core, uint32_t calendar_index, uint32_t offset, uint32_t count,
                      int64_t now, bool report) {
    hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    calendars_t *calendars = core->calendars;
    for (uint32_t i = 0; i < count; i++) {
        if (calendars->live[offset + i]) continue;
        const hf_calendar_item_t *item = &calendars->items[offset + i];
        use_apply(calendar, item, 1);
        calendars->live[offset + i] = 1;
        calendars->uses_live++;
        tables_of(calendar)->uses_live++;
        if (report)
            calendar_record_change(core, calendar_index, item, -(int64_t)item->quantity, now);
    }
}

/* Gives back the spans of the items at offset that are in the index. */
void uses_give_back(hf_core_t *core, uint32_t calendar_index, uint32_t offset, uint32_t count,
                    int64_t now, bool report) {
    hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    calendars_t *calendars = core->calendars;
    for (uint32_t i = 0; i < count; i++) {
        if (!calendars->live[offset + i]) continue;
        const hf_calendar_item_t *item = &calendars->items[offset + i];
        use_apply(calendar, item, -1);
        calendars->live[offset + i] = 0;
        calendars->uses_live--;
        tables_of(calendar)->uses_live--;
        if (report) calendar_record_change(core, calendar_index, item, item->quantity, now);
    }
}

int64_t calendar_items_fill(hf_core_t *core, uint32_t offset, uint32_t count) {
    int64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        core->calendars->items[offset + i] = core->calendars->scratch[i];
        total += core->calendars->scratch[i].total;
    }
    return total;
}

/* ---- the list of held holds of a calendar ---- */

static void held_push(hf_core_t *core, uint32_t calendar_index, uint32_t hold_index) {
    calendars_t *calendars = core->calendars;
    index_list_t *held = &tables_of(calendar_slot(core, calendar_index))->held;
    calendars->held_place = grow(calendars->held_place, &calendars->held_place_capacity,
                                 hold_index + 1, sizeof *calendars->held_place);
    calendars->held_place[hold_index] = held->count;
    index_list_push(held, hold_index);
    calendar_slot(core, calendar_index)->holds_active++;
}

static void held_remove(hf_core_t *core, uint32_t calendar_index, uint32_t hold_index) {
    calendars_t *calendars = core->calendars;
    index_list_t *held = &tables_of(calendar_slot(core, calendar_index))->held;
    uint32_t place = calendars->held_place[hold_index];
    uint32_t last = held->items[--held->count];
    held->items[place] = last;
    calendars->held_place[last] = place;
    calendar_slot(core, calendar_index)->holds_active--;
}

/* ---- records ---- */

static hf_mutation_uses_t uses_of(hf_core_t *core, const hf_calendar_t *calendar, uint32_t offset,
                                  uint32_t count, hf_mutation_use_t *lines) {
    for (uint32_t i = 0; i < count; i++) {
        const hf_calendar_item_t *item = &core->calendars->items[offset + i];
        lines[i] = (hf_mutation_use_t){calendar->definition.resources[item->resource].id,
                                       item->from, item->to, item->quantity, item->total};
    }
    return (hf_mutation_uses_t){lines, count, calendar->definition.unit};
}

void calendar_record_hold_created(hf_core_t *core, uint32_t hold_index, const char *user_id) {
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    const hf_calendar_t *calendar = calendar_slot(core, hold->event);
    hf_mutation_use_t lines[HF_CALENDAR_HOLD_ITEMS_MAX];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_HOLD_CREATE,
        .at_ms = hold->created_at_ms,
        .as.hold_create = {
            .hold_id = hold->id,
            .event_id = calendar->definition.id,
            .user_id = user_id,
            .total = hold->total,
            .expires_at_ms = hold->expires_at_ms,
            .status = HF_HOLD_HELD,
            .target = HF_TARGET_CALENDAR,
            .uses = uses_of(core, calendar, hold->item_offset, hold->pool_count, lines),
            .exchange_for = hold->exchange_elsewhere
                                ? exchange_elsewhere_id(core, hold)
                                : exchange_order_id(core, hold->exchange_for)}};
    record_emit(core, &mutation);
    core->holds.states[hold_index].last_change = core->change_count;
}

void calendar_record_order_created(hf_core_t *core, uint32_t order_index) {
    hf_order_t *order = &core->orders.slots[order_index];
    const hf_hold_t *hold = order->hold ? &core->holds.slots[order->hold - 1] : NULL;
    const hf_calendar_t *calendar = calendar_slot(core, order->event);
    hf_mutation_use_t lines[HF_CALENDAR_HOLD_ITEMS_MAX];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_ORDER_CREATE,
        .at_ms = order->created_at_ms,
        .as.order_create = {
            .order_id = order->id,
            .event_id = calendar->definition.id,
            .user_id = hf_core_user_id(core, order->user),
            .hold_id = hold ? hold->id : NULL,
            .currency = calendar->definition.currency,
            .payment_ref = hf_core_string(core, order->payment_ref),
            .total = order->total,
            .status = HF_ORDER_CONFIRMED,
            .target = HF_TARGET_CALENDAR,
            .uses = uses_of(core, calendar, order->item_offset, order->pool_count, lines),
            .replaces = exchange_order_id(core, order->replaces)}};
    record_emit(core, &mutation);
    order->last_change = core->change_count;
}

/* ---- holds ---- */

/* The user's held holds on the calendar, released (replace_existing). */
static void release_replaced(hf_core_t *core, uint32_t calendar_index, uint32_t user, int64_t now) {
    event_user_t *owner = event_user_find(core, calendar_owner_unit(calendar_index), user);
    while (owner && owner->last_active != 0)
        hold_finish(core, owner->last_active - 1, HF_HOLD_RELEASED, now, true);
}

/* The spans of the user's held holds on the calendar out of the index (sign -1) or back
 * (sign 1): a hold that replaces them is checked as if they were free, and nothing changed
 * when it is refused. */
static void replaced_apply(hf_core_t *core, uint32_t calendar_index, uint32_t user, int sign) {
    event_user_t *owner = event_user_find(core, calendar_owner_unit(calendar_index), user);
    hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    for (uint32_t h = owner ? owner->first_active : 0; h != 0;
         h = core->holds.states[h - 1].next_active) {
        const hf_hold_t *hold = &core->holds.slots[h - 1];
        for (uint32_t i = 0; i < hold->pool_count; i++)
            if (core->calendars->live[hold->item_offset + i])
                use_apply(calendar, &core->calendars->items[hold->item_offset + i], sign);
    }
}

/* The live spans of an exchange's old order out of the index (sign -1) or back (sign 1): the
 * exchange hold is checked as if they were free, and the index is left as it was. */
static void exchanged_apply(hf_core_t *core, uint32_t order_plus_one, int sign) {
    if (order_plus_one == 0) return;
    const hf_order_t *old = &core->orders.slots[order_plus_one - 1];
    hf_calendar_t *calendar = calendar_slot(core, old->event);
    for (uint32_t i = 0; i < old->pool_count; i++)
        if (core->calendars->live[old->item_offset + i])
            use_apply(calendar, &core->calendars->items[old->item_offset + i], sign);
}

/* The old order an exchange hold names, checked (*exchange its index + 1, else 0), and the
 * calendars' exchange_order: that order when it is on this calendar. */
static hf_error_t exchange_check(hf_core_t *core, const hf_calendar_hold_request_t *request,
                                 uint32_t calendar_index, uint32_t *exchange) {
    core->calendars->exchange_order = 0;
    *exchange = 0;
    if (!request->exchange_for) return HF_OK;
    uint32_t order_index;
    hf_error_t error = exchange_order_check(core, request->exchange_for, request->user_id,
                                            &order_index);
    if (error) return error;
    const hf_order_t *old = &core->orders.slots[order_index];
    *exchange = order_index + 1;
    if (old->target == HF_TARGET_CALENDAR && old->event == calendar_index)
        core->calendars->exchange_order = order_index + 1;
    return HF_OK;
}

/* The checks of a hold or booking, with its calendar found and its user looked up; *exchange
 * is an exchange hold's old order (index + 1, else 0). */
static hf_error_t request_check(hf_core_t *core, hf_calendar_hold_request_t *request,
                                uint32_t *calendar_index, user_ref_t *user, bool booking,
                                int64_t now, uint32_t *exchange, hf_error_detail_t *detail) {
    const hf_calendar_t *calendar = hf_core_calendar(core, request->calendar_id, calendar_index);
    if (!calendar) return HF_ERROR_CALENDAR_NOT_FOUND;
    hf_error_t error = calendar_request_shape(calendar, request, booking, detail);
    if (!error && !booking) error = exchange_check(core, request, *calendar_index, exchange);
    if (booking) core->calendars->exchange_order = *exchange = 0;
    if (error) return error;
    *user = user_ref_of(core, request->user_id);
    bool replacing = !booking && request->replace_existing && user->index != NO_INDEX;
    uint32_t exchanged = core->calendars->exchange_order;
    if (replacing) replaced_apply(core, *calendar_index, user->index, -1);
    exchanged_apply(core, exchanged, -1);
    error = calendar_request_check(core, *calendar_index, request, user, replacing, now, detail);
    exchanged_apply(core, exchanged, 1);
    if (replacing) replaced_apply(core, *calendar_index, user->index, 1);
    return error;
}

hf_error_t hf_core_calendar_hold(hf_core_t *core, hf_calendar_hold_request_t *request, int64_t now,
                                 uint32_t *hold_index, hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t calendar_index, exchange;
    user_ref_t user;
    hf_error_t error = request_check(core, request, &calendar_index, &user, false, now, &exchange,
                                     detail);
    if (error) return error;
    text_key_t hold_key;
    if (hold_id_taken(core, request->hold_id, &hold_key))
        return invalid_because(detail, "id", HF_FAULT_ID_TAKEN);
    if (request->replace_existing && user.index != NO_INDEX)
        release_replaced(core, calendar_index, user.index, now);
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    uint32_t index = hold_slot_take(core, 0);
    hf_hold_t *hold = hold_of(core, index);
    text_key_t key = server_id_copy(hold->id, &hold_key);
    hf_index_map_insert(&core->holds.ids, key.hash, index);
    hold->target = HF_TARGET_CALENDAR;
    hold->event = calendar_index;
    hold->exchange_for = exchange;
    /* A remote exchange's old order (exchange/remote.c), named by its record. */
    hold->exchange_elsewhere = core->scratch.exchange_elsewhere;
    hold->user = user_intern(core, &user);
    hold->pool_count = request->item_count;
    hold->item_offset = calendar_hold_items(core, index, request->item_count);
    hold->total = calendar_items_fill(core, hold->item_offset, request->item_count);
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = now;
    int64_t ttl = request->ttl_ms < 0 ? calendar->definition.hold_ttl_ms : request->ttl_ms;
    hold->expires_at_ms = now + ttl;
    calendar_record_hold_created(core, index, request->user_id);
    calendar_hold_take(core, index, now, true);
    *hold_index = index;
    return HF_OK;
}

void calendar_hold_take(hf_core_t *core, uint32_t hold_index, int64_t now, bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hold->owner = event_user_intern(core, calendar_owner_unit(hold->event), hold->user);
    hold_active_push(core, owner_record(core, hold->owner), hold_index);
    core->holds.active++;
    held_push(core, hold->event, hold_index);
    uses_take(core, hold->event, hold->item_offset, hold->pool_count, now, report);
    hf_timer_push(&core->timer, hold->expires_at_ms, HF_TIMER_HOLD, hold_index);
}

/* hold_finish's share (hold.c): a committed hold's spans stay for its order. */
void calendar_hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status, int64_t at,
                          bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hold->status = status;
    core->holds.active--;
    hold_active_remove(core, owner_record(core, hold->owner), hold_index);
    held_remove(core, hold->event, hold_index);
    if (report) record_hold_updated(core, hold_index, at, NULL);
    if (hold_status_finished(status)) finished_push(core, hold_index);
    if (status != HF_HOLD_CONFIRMED)
        uses_give_back(core, hold->event, hold->item_offset, hold->pool_count, at, report);
}

void calendar_hold_limits(const hf_core_t *core, uint32_t calendar_index, int64_t *hold_ttl_ms,
                          int64_t *max_hold_ms) {
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    *hold_ttl_ms = calendar->definition.hold_ttl_ms;
    *max_hold_ms = calendar->definition.max_hold_ms;
}

/* Whether every span of a lapsed hold is free again (a late payment takes them back). */
bool calendar_hold_free(const hf_core_t *core, const hf_hold_t *hold) {
    const hf_calendar_t *calendar = calendar_slot(core, hold->event);
    const calendar_tables_t *tables = tables_of(calendar);
    for (uint32_t i = 0; i < hold->pool_count; i++) {
        const hf_calendar_item_t *item = &core->calendars->items[hold->item_offset + i];
        const hf_resource_definition_t *resource = &calendar->definition.resources[item->resource];
        const resource_spans_t *spans = &tables->spans[item->resource];
        uint32_t root = resource_buffered(resource) ? spans->wide_root : spans->root;
        int64_t from, to;
        widened(resource, item->from, item->to, &from, &to);
        if (span_max(&tables->pool, root, from, to) + item->quantity > resource->capacity)
            return false;
    }
    return true;
}

/* ---- orders ---- */

void calendar_order_listed(hf_core_t *core, uint32_t calendar_index, uint32_t order_index) {
    index_list_push(&tables_of(calendar_slot(core, calendar_index))->orders, order_index);
}

/* order_take's share (order.c): the spans a committed hold left in the index are the order's;
 * a booking's or a late payment's are taken now. */
void calendar_order_take(hf_core_t *core, uint32_t order_index, int64_t now, bool report) {
    hf_order_t *order = &core->orders.slots[order_index];
    order->owner = event_user_intern(core, calendar_owner_unit(order->event), order->user);
    uses_take(core, order->event, order->item_offset, order->pool_count, now, report);
    calendar_slot(core, order->event)->orders++;
    calendar_sweep_schedule(core, order_index);
}

/* hf_core_cancel's share: the spans are free at once. */
void calendar_order_cancel(hf_core_t *core, uint32_t order_index, int64_t now) {
    hf_order_t *order = &core->orders.slots[order_index];
    uses_give_back(core, order->event, order->item_offset, order->pool_count, now, true);
    calendar_slot(core, order->event)->orders--;
}

hf_error_t hf_core_calendar_book(hf_core_t *core, hf_calendar_hold_request_t *request,
                                 const char *order_id, const char *payment_ref, int64_t now,
                                 uint32_t *order_index, hf_error_detail_t *detail) {
    command_at(core, now);
    uint32_t calendar_index, exchange;
    user_ref_t user;
    hf_error_t error = request_check(core, request, &calendar_index, &user, true, now, &exchange,
                                     detail);
    if (error) return error;
    text_key_t order_key;
    if (order_id_taken(core, order_id, &order_key))
        return invalid_because(detail, "id", HF_FAULT_ID_TAKEN);
    uint32_t index = order_allocate(core, &order_key, calendar_index, user_intern(core, &user), now,
                                    HF_TARGET_CALENDAR);
    hf_order_t *order = &core->orders.slots[index];
    order->pool_count = request->item_count;
    order->item_offset = calendar_items_allocate(core, request->item_count);
    order->total = calendar_items_fill(core, order->item_offset, request->item_count);
    if (payment_ref && *payment_ref)
        order->payment_ref = string_store(core, payment_ref, strlen(payment_ref));
    calendar_record_order_created(core, index);
    calendar_order_take(core, index, now, true);
    *order_index = index;
    return HF_OK;
}
