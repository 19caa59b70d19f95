/* A batch: deep copies of mutation records, collected on the engine thread and written by the
 * store's writer thread in one transaction. Appending is on the hot path of every change, so a
 * batch allocates nothing per record once warmed up: records live in one growable array and their
 * strings in a chain of chunks that hf_batch_clear rewinds and keeps for the next batch. Each
 * kind's copy is its row's in the table of record kinds (records.h): one function per union
 * member, below. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/records.h"
#include "store/store.h"

/* Most records carry a few ids of a few dozen bytes; 64 KiB holds hundreds of them, so a
 * busy batch needs few chunks. A string larger than this (an event definition, a response
 * body) gets a chunk of its own size. */
#define CHUNK_SIZE_DEFAULT (64u * 1024)
#define RECORDS_CAPACITY_INITIAL 256u
#define HASH_SIZE 32u

typedef struct chunk {
    struct chunk *next;
    size_t capacity;
    size_t used;
    unsigned char data[];
} chunk_t;

struct hf_batch {
    hf_mutation_t *records;
    size_t count;
    size_t capacity;
    chunk_t *first;   /* every chunk ever allocated, kept across clears */
    chunk_t *current; /* the chunk being filled; those before it are full */
};

/* Memory is bounded by limits.h (records per batch, size of each string), so running out of
 * it is not an operating error the server could answer sensibly. */
static void *allocate_or_abort(void *memory, size_t size) {
    void *result = realloc(memory, size);
    if (result == NULL) abort();
    return result;
}

static chunk_t *chunk_create(size_t capacity) {
    chunk_t *chunk = allocate_or_abort(NULL, sizeof(chunk_t) + capacity);
    chunk->next = NULL;
    chunk->capacity = capacity;
    chunk->used = 0;
    return chunk;
}

/* An empty chunk of at least size bytes after the current one. The chunks after the current
 * one are always empty (kept from earlier batches): the next is reused when big enough. */
static chunk_t *chunk_next(hf_batch_t *batch, size_t size) {
    chunk_t *current = batch->current;
    if (current != NULL && current->next != NULL && current->next->capacity >= size)
        return current->next;
    chunk_t *fresh = chunk_create(size > CHUNK_SIZE_DEFAULT ? size : CHUNK_SIZE_DEFAULT);
    if (current == NULL) {
        /* No chunk at all yet (a cleared batch has current == first). */
        fresh->next = batch->first;
        batch->first = fresh;
    } else {
        fresh->next = current->next;
        current->next = fresh;
    }
    return fresh;
}

/* Space for size bytes that stays put until the batch is cleared. Chunks never move, so the
 * pointers already handed out stay valid while the batch grows. */
static void *arena_take(hf_batch_t *batch, size_t size) {
    chunk_t *chunk = batch->current;
    if (chunk == NULL || chunk->capacity - chunk->used < size) chunk = chunk_next(batch, size);
    batch->current = chunk;
    void *space = chunk->data + chunk->used;
    chunk->used += size;
    return space;
}

static const char *copy_string(hf_batch_t *batch, const char *text) {
    if (text == NULL) return NULL;
    size_t size = strlen(text) + 1;
    char *copy = arena_take(batch, size);
    memcpy(copy, text, size);
    return copy;
}

static const uint8_t *copy_hash(hf_batch_t *batch, const uint8_t *hash) {
    if (hash == NULL) return NULL;
    uint8_t *copy = arena_take(batch, HASH_SIZE);
    memcpy(copy, hash, HASH_SIZE);
    return copy;
}

/* Like arena_take, for structs: the space starts on a boundary any type may use (strings
 * before it leave the chunk at any offset). Asking for alignment - 1 bytes more leaves room
 * for the padding wherever the space starts. */
static void *arena_take_aligned(hf_batch_t *batch, size_t size) {
    const size_t alignment = _Alignof(max_align_t);
    unsigned char *space = arena_take(batch, size + alignment - 1);
    return space + (alignment - (uintptr_t)space % alignment) % alignment;
}

static hf_mutation_items_t copy_items(hf_batch_t *batch, const hf_mutation_items_t *items) {
    uint32_t count = items->seat_count + items->pool_count;
    if (count == 0) return (hf_mutation_items_t){NULL, 0, 0, NULL};
    hf_mutation_item_t *lines = arena_take_aligned(batch, count * sizeof *lines);
    for (uint32_t i = 0; i < count; i++)
        lines[i] = (hf_mutation_item_t){copy_string(batch, items->lines[i].id),
                                        items->lines[i].quantity};
    return (hf_mutation_items_t){lines, items->seat_count, items->pool_count,
                                 copy_string(batch, items->allocation)};
}

/* An array of size bytes in the batch; NULL for an empty or absent one (an event without pools
 * has none, and memcpy from NULL is undefined even for 0 bytes). */
static void *copy_array(hf_batch_t *batch, const void *source, size_t size) {
    if (source == NULL || size == 0) return NULL;
    void *copy = arena_take_aligned(batch, size);
    memcpy(copy, source, size);
    return copy;
}

/* The definition with its arrays, all in the batch (an event's creation: rare, so plainly). */
static const hf_event_definition_t *copy_definition(hf_batch_t *batch,
                                                    const hf_event_definition_t *definition) {
    hf_event_definition_t *copy = arena_take_aligned(batch, sizeof *copy);
    *copy = *definition;
    copy->sections = copy_array(batch, definition->sections,
                                definition->section_count * sizeof *copy->sections);
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        copy->sections[s].rows = copy_array(batch, section->rows,
                                            section->row_count * sizeof *section->rows);
    }
    copy->pools = copy_array(batch, definition->pools,
                             definition->pool_count * sizeof *copy->pools);
    return copy;
}

static hf_mutation_uses_t copy_uses(hf_batch_t *batch, const hf_mutation_uses_t *uses) {
    if (uses->count == 0) return (hf_mutation_uses_t){NULL, 0, uses->unit};
    hf_mutation_use_t *lines = arena_take_aligned(batch, uses->count * sizeof *lines);
    for (uint32_t i = 0; i < uses->count; i++) {
        lines[i] = uses->lines[i];
        lines[i].resource_id = copy_string(batch, uses->lines[i].resource_id);
    }
    return (hf_mutation_uses_t){lines, uses->count, uses->unit};
}

hf_batch_t *hf_batch_create(void) {
    hf_batch_t *batch = allocate_or_abort(NULL, sizeof *batch);
    memset(batch, 0, sizeof *batch);
    return batch;
}

void hf_batch_destroy(hf_batch_t *batch) {
    if (batch == NULL) return;
    chunk_t *chunk = batch->first;
    while (chunk != NULL) {
        chunk_t *next = chunk->next;
        free(chunk);
        chunk = next;
    }
    free(batch->records);
    free(batch);
}

/* ---- The copies of the table of record kinds (records.h): one per union member ---- */

void hf_batch_copy_event_create(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_event_create_t *event = &copy->as.event_create;
    event->event_id = copy_string(batch, event->event_id);
    event->definition = copy_definition(batch, event->definition);
}

void hf_batch_copy_event_sales(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.event_sales.event_id = copy_string(batch, copy->as.event_sales.event_id);
}

/* Both definitions: the event whole and what changed. */
void hf_batch_copy_event_update(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_event_update_t *event = &copy->as.event_update;
    event->event_id = copy_string(batch, event->event_id);
    event->definition = copy_definition(batch, event->definition);
    event->changes = copy_definition(batch, event->changes);
}

void hf_batch_copy_event_delete(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.event_delete.event_id = copy_string(batch, copy->as.event_delete.event_id);
}

void hf_batch_copy_seat(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.seat.event_id = copy_string(batch, copy->as.seat.event_id);
    copy->as.seat.seat_id = copy_string(batch, copy->as.seat.seat_id);
}

void hf_batch_copy_pool(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.pool.event_id = copy_string(batch, copy->as.pool.event_id);
    copy->as.pool.pool_id = copy_string(batch, copy->as.pool.pool_id);
}

void hf_batch_copy_hold_create(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_hold_create_t *hold = &copy->as.hold_create;
    hold->hold_id = copy_string(batch, hold->hold_id);
    hold->event_id = copy_string(batch, hold->event_id);
    hold->user_id = copy_string(batch, hold->user_id);
    hold->items = copy_items(batch, &hold->items);
    hold->uses = copy_uses(batch, &hold->uses);
    hold->exchange_for = copy_string(batch, hold->exchange_for);
}

void hf_batch_copy_hold_update(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_hold_update_t *hold = &copy->as.hold_update;
    hold->hold_id = copy_string(batch, hold->hold_id);
    hold->event_id = copy_string(batch, hold->event_id);
    hold->user_id = copy_string(batch, hold->user_id);
    hold->order_id = copy_string(batch, hold->order_id);
}

void hf_batch_copy_order_create(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_order_create_t *order = &copy->as.order_create;
    order->order_id = copy_string(batch, order->order_id);
    order->event_id = copy_string(batch, order->event_id);
    order->user_id = copy_string(batch, order->user_id);
    order->hold_id = copy_string(batch, order->hold_id);
    order->currency = copy_string(batch, order->currency);
    order->payment_ref = copy_string(batch, order->payment_ref);
    order->items = copy_items(batch, &order->items);
    order->uses = copy_uses(batch, &order->uses);
    order->replaces = copy_string(batch, order->replaces);
}

void hf_batch_copy_order_item(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_order_item_t *item = &copy->as.order_item;
    item->order_id = copy_string(batch, item->order_id);
    item->event_id = copy_string(batch, item->event_id);
    item->seat_id = copy_string(batch, item->seat_id);
    item->pool_id = copy_string(batch, item->pool_id);
}

void hf_batch_copy_order_update(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_order_update_t *order = &copy->as.order_update;
    order->order_id = copy_string(batch, order->order_id);
    order->event_id = copy_string(batch, order->event_id);
    order->user_id = copy_string(batch, order->user_id);
    order->refund_id = copy_string(batch, order->refund_id);
    order->replaced_by = copy_string(batch, order->replaced_by);
}

void hf_batch_copy_idempotency(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_idempotency_t *answer = &copy->as.idempotency;
    answer->key = copy_string(batch, answer->key);
    answer->body = copy_string(batch, answer->body);
    answer->hash = copy_hash(batch, answer->hash);
    answer->unit = copy_string(batch, answer->unit);
}

void hf_batch_copy_job(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_job_t *job = &copy->as.job;
    job->job_id = copy_string(batch, job->job_id);
    job->event_id = copy_string(batch, job->event_id);
    job->rebook_to = copy_string(batch, job->rebook_to);
}

void hf_batch_copy_job_offer(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_job_offer_t *offer = &copy->as.job_offer;
    offer->job_id = copy_string(batch, offer->job_id);
    offer->event_id = copy_string(batch, offer->event_id);
    offer->order_id = copy_string(batch, offer->order_id);
    offer->user_id = copy_string(batch, offer->user_id);
    offer->reservation_id = copy_string(batch, offer->reservation_id);
}

void hf_batch_copy_notify(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_notify_t *notify = &copy->as.notify;
    notify->unit = copy_string(batch, notify->unit);
    notify->last_error = copy_string(batch, notify->last_error);
}

void hf_batch_copy_delivery(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_delivery_t *delivery = &copy->as.delivery;
    delivery->payment_intent_id = copy_string(batch, delivery->payment_intent_id);
    delivery->event_id = copy_string(batch, delivery->event_id);
    delivery->reservation_id = copy_string(batch, delivery->reservation_id);
    delivery->order_id = copy_string(batch, delivery->order_id);
    delivery->refund_id = copy_string(batch, delivery->refund_id);
    delivery->hold_event_id = copy_string(batch, delivery->hold_event_id);
}

void hf_batch_copy_refund(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_refund_t *refund = &copy->as.refund;
    refund->refund_id = copy_string(batch, refund->refund_id);
    refund->payment_intent_id = copy_string(batch, refund->payment_intent_id);
    refund->reservation_id = copy_string(batch, refund->reservation_id);
    refund->order_id = copy_string(batch, refund->order_id);
    refund->event_id = copy_string(batch, refund->event_id);
}

/* Both kinds of ticket. */
void hf_batch_copy_ticket(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_ticket_t *ticket = &copy->as.ticket;
    ticket->ticket_id = copy_string(batch, ticket->ticket_id);
    ticket->event_id = copy_string(batch, ticket->event_id);
    ticket->user_id = copy_string(batch, ticket->user_id);
}

void hf_batch_copy_waitlist(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_waitlist_t *entry = &copy->as.waitlist;
    entry->waitlist_id = copy_string(batch, entry->waitlist_id);
    entry->event_id = copy_string(batch, entry->event_id);
    entry->user_id = copy_string(batch, entry->user_id);
    entry->section = copy_string(batch, entry->section);
    entry->pool = copy_string(batch, entry->pool);
    entry->hold_id = copy_string(batch, entry->hold_id);
}

void hf_batch_copy_driver(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.driver.fleet_id = copy_string(batch, copy->as.driver.fleet_id);
    copy->as.driver.driver_id = copy_string(batch, copy->as.driver.driver_id);
}

void hf_batch_copy_ride(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_ride_t *ride = &copy->as.ride;
    ride->ride_id = copy_string(batch, ride->ride_id);
    ride->fleet_id = copy_string(batch, ride->fleet_id);
    ride->rider_id = copy_string(batch, ride->rider_id);
    ride->offer_driver_id = copy_string(batch, ride->offer_driver_id);
    ride->driver_id = copy_string(batch, ride->driver_id);
    ride->declined = copy_string(batch, ride->declined);
    ride->lapsed = copy_string(batch, ride->lapsed);
}

void hf_batch_append(hf_batch_t *batch, const hf_mutation_t *mutation) {
    assert(batch != NULL && mutation != NULL);
    if (batch->count == batch->capacity) {
        size_t capacity = batch->capacity == 0 ? RECORDS_CAPACITY_INITIAL : batch->capacity * 2;
        batch->records = allocate_or_abort(batch->records, capacity * sizeof *batch->records);
        batch->capacity = capacity;
    }
    hf_mutation_t *copy = &batch->records[batch->count++];
    *copy = *mutation;
    hf_record_row(copy->type)->copy(batch, copy);
}

size_t hf_batch_count(const hf_batch_t *batch) {
    assert(batch != NULL);
    return batch->count;
}

/* The record moves when a later append grows the array: valid until the next append or clear. */
const hf_mutation_t *hf_batch_at(const hf_batch_t *batch, size_t index) {
    assert(batch != NULL && index < batch->count);
    return &batch->records[index];
}

void hf_batch_clear(hf_batch_t *batch) {
    assert(batch != NULL);
    for (chunk_t *chunk = batch->first; chunk != NULL; chunk = chunk->next) chunk->used = 0;
    batch->current = batch->first;
    batch->count = 0;
}

void hf_batch_sink_emit(void *batch, const hf_mutation_t *mutation) {
    hf_batch_append(batch, mutation);
}

/* A calendar's definition with its resources, all in the batch. */
void hf_batch_copy_calendar_create(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_calendar_create_t *calendar = &copy->as.calendar_create;
    calendar->calendar_id = copy_string(batch, calendar->calendar_id);
    hf_calendar_definition_t *definition = arena_take_aligned(batch, sizeof *definition);
    *definition = *calendar->definition;
    definition->resources = copy_array(batch, calendar->definition->resources,
                                       calendar->definition->resource_count *
                                           sizeof *definition->resources);
    calendar->definition = definition;
}

void hf_batch_copy_calendar_resources(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_calendar_resources_t *added = &copy->as.calendar_resources;
    added->calendar_id = copy_string(batch, added->calendar_id);
    added->resources = copy_array(batch, added->resources,
                                  added->count * sizeof(hf_resource_definition_t));
}

void hf_batch_copy_calendar_sales(hf_batch_t *batch, hf_mutation_t *copy) {
    copy->as.calendar_sales.calendar_id = copy_string(batch, copy->as.calendar_sales.calendar_id);
}

void hf_batch_copy_calendar_change(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_calendar_change_t *change = &copy->as.calendar_change;
    change->calendar_id = copy_string(batch, change->calendar_id);
    change->resource_id = copy_string(batch, change->resource_id);
}

/* An allocation whole: its seats' and pools' ids, all in the batch. */
void hf_batch_copy_allocation(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_allocation_t *allocation = &copy->as.allocation;
    allocation->event_id = copy_string(batch, allocation->event_id);
    allocation->allocation_id = copy_string(batch, allocation->allocation_id);
    hf_mutation_allocation_seat_t *seats = copy_array(batch, allocation->seats,
                                                      allocation->seat_count * sizeof *seats);
    for (uint32_t i = 0; i < allocation->seat_count; i++)
        seats[i].seat_id = copy_string(batch, seats[i].seat_id);
    allocation->seats = seats;
    hf_mutation_allocation_left_t *left = copy_array(batch, allocation->left,
                                                     allocation->left_count * sizeof *left);
    for (uint32_t i = 0; i < allocation->left_count; i++)
        left[i].seat_id = copy_string(batch, left[i].seat_id);
    allocation->left = left;
    hf_mutation_allocation_pool_t *pools = copy_array(batch, allocation->pools,
                                                      allocation->pool_count * sizeof *pools);
    for (uint32_t i = 0; i < allocation->pool_count; i++)
        pools[i].pool_id = copy_string(batch, pools[i].pool_id);
    allocation->pools = pools;
}

void hf_batch_copy_order_lock(hf_batch_t *batch, hf_mutation_t *copy) {
    hf_mutation_order_lock_t *lock = &copy->as.order_lock;
    lock->order_id = copy_string(batch, lock->order_id);
    lock->event_id = copy_string(batch, lock->event_id);
    lock->hold_id = copy_string(batch, lock->hold_id);
    lock->hold_unit = copy_string(batch, lock->hold_unit);
}
