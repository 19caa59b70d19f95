/* The core's creation and destruction, its sink, the numbering of its changes and every
 * mutation record it emits (core.h). The commands live in one file per domain beside this one
 * (see core.h); they change the state and call the record_ functions here (internal.h), which
 * alone build an hf_mutation_t, so how records are shaped is decided in this file only. */
#include "core/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- time: the table of timer kinds, and hf_core_advance ---- */

/* What a kind of deadline means, told by its domain: whether an entry was left behind (its
 * object moved on) and what its passing does at now. */
typedef struct timer_kind {
    hf_timer_kind_t kind;
    bool (*stale)(const hf_core_t *core, const hf_timer_entry_t *entry);
    void (*due)(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);
} timer_kind_t;

/* One row per kind of timer.h, in its order (hf_core_create checks): a new domain's deadline
 * is a kind there and a row here, not a branch of hf_core_advance. */
static const timer_kind_t TIMER_KINDS[] = {
    {HF_TIMER_HOLD, hold_expiry_stale, hold_expiry_due},
    {HF_TIMER_QUEUE_ADMIT, queue_entry_stale, queue_admit_due},
    {HF_TIMER_QUEUE_TICKET, queue_entry_stale, queue_ticket_due},
    {HF_TIMER_OFFER, dispatch_offer_stale, dispatch_offer_lapse},
    {HF_TIMER_CALENDAR_SWEEP, calendar_sweep_stale, calendar_sweep_due},
    {HF_TIMER_QUEUE_OPEN, queue_entry_stale, queue_open_due},
};
_Static_assert(sizeof TIMER_KINDS / sizeof *TIMER_KINDS == HF_TIMER_KINDS,
               "every kind of timer.h has its row in TIMER_KINDS");

/* The heaps the entries are on, run in this order: the core's shared one (holds' expiry,
 * rides' offers) and the waiting rooms' own (NULL until a room is made), which keeps the
 * rooms' deadlines off the heap the hold path prunes. The core's is only peeked through a
 * const core (hf_core_next_expiry). */
static hf_timer_t *core_timer(const hf_core_t *core) { return (hf_timer_t *)&core->timer; }
static hf_timer_t *(*const TIMERS[])(const hf_core_t *core) = {core_timer, queue_timer};
#define TIMER_COUNT (sizeof TIMERS / sizeof *TIMERS)

bool timer_entry_stale(const void *core, const hf_timer_entry_t *entry) {
    assert(entry != NULL && entry->kind < HF_TIMER_KINDS);
    return TIMER_KINDS[entry->kind].stale(core, entry);
}

/* Pops and applies the entries due at now, skipping those left behind (an extension pushes a
 * new entry and leaves the old one, as releases and commits do); then the top is a live
 * deadline again. */
static void timer_run(hf_core_t *core, hf_timer_t *timer, hf_time_ms_t now) {
    const hf_timer_entry_t *top;
    bool popped = false;
    while ((top = hf_timer_peek(timer)) && top->deadline_ms <= now) {
        hf_timer_entry_t entry = *top;
        hf_timer_pop(timer);
        popped = true;
        const timer_kind_t *kind = &TIMER_KINDS[entry.kind];
        if (!kind->stale(core, &entry)) kind->due(core, &entry, now);
    }
    if (popped) hf_timer_prune(timer, timer_entry_stale, core);
}

uint32_t hf_core_advance(hf_core_t *core, hf_time_ms_t now) {
    assert(now >= core->now);
    core->now = now;
    uint64_t expired = core->holds.expired;
    for (size_t i = 0; i < TIMER_COUNT; i++) {
        hf_timer_t *timer = TIMERS[i](core);
        if (timer) timer_run(core, timer, now);
    }
    waitlist_settle(core, now); /* what the lapsed holds freed, in the same step */
    return (uint32_t)(core->holds.expired - expired);
}

hf_time_ms_t hf_core_next_expiry(const hf_core_t *core) {
    /* Every change prunes its heap, so each top is a live deadline. */
    hf_time_ms_t next = INT64_MAX;
    for (size_t i = 0; i < TIMER_COUNT; i++) {
        const hf_timer_t *timer = TIMERS[i](core);
        const hf_timer_entry_t *top = timer ? hf_timer_peek(timer) : NULL;
        if (top && top->deadline_ms < next) next = top->deadline_ms;
    }
    return next;
}

/* ---- lifecycle ---- */

static void timer_kinds_check(void) {
    for (uint32_t i = 0; i < HF_TIMER_KINDS; i++) assert(TIMER_KINDS[i].kind == i);
}

hf_core_t *hf_core_create(hf_mutation_sink_t sink) {
    timer_kinds_check();
    hf_core_t *core = calloc(1, sizeof *core);
    if (!core) abort();
    core->sink = sink;
    core->stream_records = true;
    core->holds.finished_max = HF_FINISHED_HOLDS_MAX;
    core->now = INT64_MIN;
    return core;
}

void hf_core_destroy(hf_core_t *core) {
    if (!core) return;
    waitlist_free(core); /* before the events: nothing of it is freed through them */
    for (uint32_t i = 0; i < core->events.count; i++)
        if (core->events.slots[i]) event_free(core->events.slots[i]);
    for (uint32_t i = 0; i < core->users.count; i++) free(core->users.slots[i].orders.items);
    free(core->events.slots);
    free(core->events.listed);
    free(core->holds.slots);
    free(core->holds.states);
    free(core->orders.slots);
    free(core->users.slots);
    free(core->users.per_event);
    free(core->items);
    free(core->strings);
    payment_free(core);
    dispatch_free(core);
    calendars_free(core);
    exchange_free(core);
    allocations_free(core);
    jobs_free(core);
    hf_timer_free(&core->timer);
    hf_map_free(&core->events.ids);
    hf_index_map_free(&core->holds.ids);
    hf_index_map_free(&core->orders.ids);
    hf_index_map_free(&core->users.ids);
    hf_pair_map_free(&core->users.per_event_ids);
    hf_buffer_free(&core->record_ids);
    queue_free(core);
    free(core);
}

void hf_core_set_sink(hf_core_t *core, hf_mutation_sink_t sink) { core->sink = sink; }

void hf_core_set_stream_records(hf_core_t *core, bool wanted) { core->stream_records = wanted; }

/* ---- change numbering: every record emitted is counted; holds, orders and seats keep the
 * number of their newest ---- */

static void emit(hf_core_t *core, const hf_mutation_t *mutation) {
    core->change_count++;
    if (core->sink.emit) core->sink.emit(core->sink.context, mutation);
}

uint64_t hf_core_change_count(const hf_core_t *core) { return core->change_count; }

void record_emit(hf_core_t *core, const hf_mutation_t *mutation) { emit(core, mutation); }

uint64_t hf_core_seat_change(const hf_event_t *event, uint32_t seat_index) {
    assert(seat_index < event->seat_count);
    uint64_t change = seat_changes_of(event)[seat_index];
    uint64_t created = ((const event_tables_t *)event->internal)->created_change;
    return change > created ? change : created;
}

uint64_t hf_core_hold_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->holds.count);
    return core->holds.states[index].last_change;
}

uint64_t hf_core_order_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->orders.count);
    return core->orders.slots[index].last_change;
}

/* ---- records ---- */

/* The lines of a hold or an order as a record carries them: seat ids written out (into
 * core->record_ids, sized first so that no id moves while the next is written), pool ids
 * borrowed from the event. Valid until the next call. */
static hf_mutation_items_t items_of(hf_core_t *core, const hf_event_t *event, uint32_t item_offset,
                                    uint32_t seat_count, uint32_t pool_count, uint32_t allocation) {
    const hf_item_t *items = core->items + item_offset;
    hf_buffer_t *ids = &core->record_ids;
    hf_buffer_reset(ids);
    hf_buffer_reserve(ids, (size_t)seat_count * (HF_SEAT_ID_SIZE_MAX + 1));
    for (uint32_t i = 0; i < seat_count; i++) {
        char *id = ids->data + ids->length;
        ids->length += seat_id_write(event, seat_row(event, items[i].index), items[i].index, id);
        ids->data[ids->length++] = '\0';
        core->record_lines[i] = (hf_mutation_item_t){id, 0};
    }
    for (uint32_t i = seat_count; i < seat_count + pool_count; i++)
        core->record_lines[i] = (hf_mutation_item_t){event->pools[items[i].index].id,
                                                     items[i].quantity};
    return (hf_mutation_items_t){core->record_lines, seat_count, pool_count,
                                 allocation_id_of(core, allocation)};
}

void record_event_created(hf_core_t *core, hf_event_t *event,
                          const hf_event_definition_t *definition, hf_time_ms_t now) {
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_CREATE,
                              .at_ms = now,
                              .as.event_create = {definition->id, definition}};
    emit(core, &mutation);
    ((event_tables_t *)event->internal)->created_change = core->change_count;
}

/* A seat's new status and version, for live streams: the caller counted the change already
 * (seat_changes) and checked core->stream_records. */
void record_seat(hf_core_t *core, const hf_event_t *event, uint32_t seat_index, uint32_t row_index,
                 hf_time_ms_t now) {
    const hf_seat_t *seat = &event->seats[seat_index];
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    seat_id_write(event, row_index, seat_index, seat_id);
    hf_mutation_t mutation = {
        .type = HF_MUTATION_SEAT,
        .at_ms = now,
        .as.seat = {event->id, seat_id, seat->status, seat->version, seat_index}};
    emit(core, &mutation);
}

/* A pool's counts after a change, for live streams (the store skips these records). */
void record_pool(hf_core_t *core, const hf_event_t *event, uint32_t pool_index, hf_time_ms_t now) {
    const hf_pool_t *pool = &event->pools[pool_index];
    hf_mutation_t mutation = {.type = HF_MUTATION_POOL,
                              .at_ms = now,
                              .as.pool = {event->id, pool->id, hf_core_pool_available(pool),
                                          pool->held, pool->sold, pool_index}};
    emit(core, &mutation);
}

void record_hold_created(hf_core_t *core, uint32_t hold_index, const char *user_id) {
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    if (hold->target == HF_TARGET_CALENDAR) {
        calendar_record_hold_created(core, hold_index, user_id);
        return;
    }
    const hf_event_t *event = core->events.slots[hold->event];
    assert(hold->status == HF_HOLD_HELD);
    hf_mutation_t mutation = {
        .type = HF_MUTATION_HOLD_CREATE,
        .at_ms = hold->created_at_ms,
        .as.hold_create = {.hold_id = hold->id,
                           .event_id = event->id,
                           .user_id = user_id,
                           .items = items_of(core, event, hold->item_offset, hold->seat_count,
                                             hold->pool_count, hold->allocation),
                           .total = hold->total,
                           .expires_at_ms = hold->expires_at_ms,
                           .status = HF_HOLD_HELD,
                           .exchange_for = hold->exchange_for
                                               ? exchange_order_id(core, hold->exchange_for)
                                               : exchange_elsewhere_id(core, hold)}};
    emit(core, &mutation);
    core->holds.states[hold_index].last_change = core->change_count;
}

void record_hold_updated(hf_core_t *core, uint32_t hold_index, hf_time_ms_t at_ms,
                         const char *user_id) {
    const hf_hold_t *hold = &core->holds.slots[hold_index];
    const char *order_id = hold->order ? core->orders.slots[hold->order - 1].id : NULL;
    hf_mutation_t mutation = {
        .type = HF_MUTATION_HOLD_UPDATE,
        .at_ms = at_ms,
        .as.hold_update = {.hold_id = hold->id,
                           .event_id = unit_id_of(core, hold->target, hold->event),
                           .user_id = user_id,
                           .order_id = order_id,
                           .expires_at_ms = hold->expires_at_ms,
                           .status = hold->status,
                           .target = hold->target}};
    emit(core, &mutation);
    core->holds.states[hold_index].last_change = core->change_count;
}

/* One item of a new order: a seat, or a pool line with its quantity. */
static void record_order_item(hf_core_t *core, const hf_event_t *event, const hf_order_t *order,
                              const hf_item_t *item, bool seat) {
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_ORDER_ITEM,
        .at_ms = order->created_at_ms,
        .as.order_item = {.order_id = order->id, .event_id = event->id, .quantity = 1}};
    if (seat) {
        seat_id_write(event, seat_row(event, item->index), item->index, seat_id);
        mutation.as.order_item.seat_id = seat_id;
    } else {
        mutation.as.order_item.pool_id = event->pools[item->index].id;
        mutation.as.order_item.quantity = item->quantity;
    }
    emit(core, &mutation);
}

void record_order_created(hf_core_t *core, uint32_t order_index) {
    hf_order_t *order = &core->orders.slots[order_index];
    if (order->target == HF_TARGET_CALENDAR) {
        calendar_record_order_created(core, order_index);
        return;
    }
    const hf_hold_t *hold = order->hold ? &core->holds.slots[order->hold - 1] : NULL;
    const hf_event_t *event = core->events.slots[order->event];
    const char *user_id = hf_core_user_id(core, order->user);
    hf_mutation_t created = {
        .type = HF_MUTATION_ORDER_CREATE,
        .at_ms = order->created_at_ms,
        .as.order_create = {.order_id = order->id,
                            .event_id = event->id,
                            .user_id = user_id,
                            .hold_id = hold ? hold->id : NULL,
                            .currency = event->currency,
                            .payment_ref = hf_core_string(core, order->payment_ref),
                            .items = items_of(core, event, order->item_offset, order->seat_count,
                                              order->pool_count, order->allocation),
                            .total = order->total,
                            .status = HF_ORDER_CONFIRMED,
                            .replaces = order->replaces
                                            ? exchange_order_id(core, order->replaces)
                                            : hf_core_string(core, order->replaces_elsewhere)}};
    emit(core, &created);
    const hf_item_t *items = core->items + order->item_offset;
    for (uint32_t i = 0; i < order->seat_count + order->pool_count; i++)
        record_order_item(core, event, order, &items[i], i < order->seat_count);
    order->last_change = core->change_count;
}

void record_event_sales(hf_core_t *core, const hf_event_t *event, hf_time_ms_t now) {
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_SALES,
                              .at_ms = now,
                              .as.event_sales = {event->id, event->sales_open}};
    emit(core, &mutation);
}

void record_event_updated(hf_core_t *core, hf_event_t *event,
                          const hf_event_definition_t *definition,
                          const hf_event_definition_t *changes, uint32_t members,
                          hf_time_ms_t now) {
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_UPDATE,
                              .at_ms = now,
                              .as.event_update = {event->id, definition, changes, members}};
    emit(core, &mutation);
    /* A read of a seat no change has touched rests on the layout it sees: this record's. */
    ((event_tables_t *)event->internal)->created_change = core->change_count;
}

void record_event_deleted(hf_core_t *core, const hf_event_t *event, hf_time_ms_t now) {
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_DELETE,
                              .at_ms = now,
                              .as.event_delete = {event->id}};
    emit(core, &mutation);
}

void record_order_updated(hf_core_t *core, uint32_t order_index, const char *user_id,
                          hf_time_ms_t now) {
    hf_order_t *order = &core->orders.slots[order_index];
    const char *refund_id = order->refund ? core->payments.refunds[order->refund - 1].id : NULL;
    hf_mutation_t mutation = {
        .type = HF_MUTATION_ORDER_UPDATE,
        .at_ms = now,
        .as.order_update = {.order_id = order->id,
                            .event_id = unit_id_of(core, order->target, order->event),
                            .user_id = user_id,
                            .status = order->status,
                            .refund_id = refund_id,
                            .target = order->target}};
    emit(core, &mutation);
    order->last_change = core->change_count;
}

void record_delivery(hf_core_t *core, const hf_payment_delivery_t *delivery, const delivery_t *kept,
                     hf_time_ms_t now) {
    bool committed = kept->result == HF_PAYMENT_COMMITTED;
    bool refunded = kept->result == HF_PAYMENT_REFUND_REQUIRED;
    uint32_t hold_index;
    const hf_hold_t *hold = delivery->reservation_id
                                ? hf_core_hold_find(core, delivery->reservation_id, &hold_index)
                                : NULL;
    hf_mutation_t mutation = {
        .type = HF_MUTATION_DELIVERY,
        .at_ms = now,
        .as.delivery = {.payment_intent_id = kept->payment_intent_id,
                        .event_id = delivery->event_id,
                        .reservation_id = delivery->reservation_id,
                        .amount = delivery->amount,
                        .type = kept->type,
                        .result = kept->result,
                        .reason = kept->reason,
                        .late = kept->late,
                        .order_id = committed ? core->orders.slots[kept->order].id : NULL,
                        .refund_id = refunded ? core->payments.refunds[kept->refund].id : NULL,
                        .hold_event_id = hold ? unit_id_of(core, hold->target, hold->event)
                                              : NULL}};
    emit(core, &mutation);
}

void record_refund(hf_core_t *core, uint32_t refund_index, hf_time_ms_t now) {
    hf_refund_t *refund = &core->payments.refunds[refund_index];
    hf_mutation_t mutation = {
        .type = HF_MUTATION_REFUND,
        .at_ms = now,
        .as.refund = {.refund_id = refund->id,
                      .payment_intent_id = refund->payment_intent_id,
                      .reservation_id = refund->reservation_id,
                      .order_id = refund->order ? core->orders.slots[refund->order - 1].id : NULL,
                      .amount = refund->amount,
                      .reason = refund->reason,
                      .status = refund->status,
                      .created_at_ms = refund->created_at_ms,
                      .event_id = refund->of_event ? unit_id_of(core, refund->target, refund->event)
                                                   : NULL}};
    emit(core, &mutation);
    refund->last_change = core->change_count;
}

void record_ticket(hf_core_t *core, const ticket_record_t *ticket, bool created,
                   hf_time_ms_t at_ms) {
    hf_mutation_t mutation = {.type = created ? HF_MUTATION_TICKET_CREATE
                                              : HF_MUTATION_TICKET_UPDATE,
                              .at_ms = at_ms,
                              .as.ticket = {.ticket_id = ticket->ticket_id,
                                            .event_id = core->events.slots[ticket->event]->id,
                                            .user_id = ticket->user_id,
                                            .seq = ticket->seq,
                                            .status = ticket->status,
                                            .admitted_at_ms = ticket->admitted_at_ms}};
    emit(core, &mutation);
}
