/* The waitlist's index (waitlist.h): per target a queue per quantity, and the Fenwick tree of
 * waiting entries that tells positions. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/waitlist/waitlist.h"

static void queue_grow(entry_queue_t *queue) {
    if (queue->count < queue->capacity) return;
    uint32_t capacity = queue->capacity ? queue->capacity * 2 : 4;
    uint32_t *items = malloc((size_t)capacity * sizeof *items);
    if (!items) abort();
    for (uint32_t i = 0; i < queue->count; i++)
        items[i] = queue->items[(queue->head + i) & (queue->capacity - 1)];
    free(queue->items);
    queue->items = items;
    queue->head = 0;
    queue->capacity = capacity;
}

void queue_push(entry_queue_t *queue, uint32_t entry) {
    queue_grow(queue);
    queue->items[(queue->head + queue->count) & (queue->capacity - 1)] = entry;
    queue->count++;
}

void queue_push_front(entry_queue_t *queue, uint32_t entry) {
    queue_grow(queue);
    queue->head = (queue->head + queue->capacity - 1) & (queue->capacity - 1);
    queue->items[queue->head] = entry;
    queue->count++;
}

void queue_pop(entry_queue_t *queue) {
    queue->head = (queue->head + 1) & (queue->capacity - 1);
    queue->count--;
}

uint32_t queue_head(struct waitlists *waitlists, entry_queue_t *queue) {
    while (queue->count > 0) {
        uint32_t entry = queue->items[queue->head];
        if (waitlists->entries[entry].status == HF_WAITLIST_WAITING) return entry;
        queue_pop(queue);
    }
    return NO_INDEX;
}

void target_add(event_waitlist_t *list, uint32_t target, uint32_t quantity, uint32_t entry) {
    target_queues_t *queues = &list->targets[target];
    if (quantity > queues->quantity_count) {
        entry_queue_t *grown = realloc(queues->by_quantity, (size_t)quantity * sizeof *grown);
        if (!grown) abort();
        memset(grown + queues->quantity_count, 0,
               (size_t)(quantity - queues->quantity_count) * sizeof *grown);
        queues->by_quantity = grown;
        queues->quantity_count = quantity;
    }
    queue_push(&queues->by_quantity[quantity - 1], entry);
}

uint32_t target_first_fillable(struct waitlists *waitlists, event_waitlist_t *list, uint32_t target,
                               int64_t free, uint32_t *quantity_queue) {
    target_queues_t *queues = &list->targets[target];
    uint32_t best = NO_INDEX;
    uint32_t limit = free < (int64_t)queues->quantity_count ? (uint32_t)(free > 0 ? free : 0)
                                                            : queues->quantity_count;
    for (uint32_t q = 0; q < limit; q++) {
        uint32_t head = queue_head(waitlists, &queues->by_quantity[q]);
        if (head == NO_INDEX) continue;
        if (best == NO_INDEX ||
            waitlists->entries[head].sequence < waitlists->entries[best].sequence) {
            best = head;
            *quantity_queue = q;
        }
    }
    return best;
}

void status_add(event_waitlist_t *list, uint8_t status, uint32_t sequence, int32_t delta) {
    uint32_t *tree = list->status_tree[status];
    for (uint32_t i = sequence + 1; i <= list->joined_capacity; i += i & (0u - i))
        tree[i - 1] += (uint32_t)delta;
    if (status == HF_WAITLIST_WAITING) list->waiting += (uint32_t)delta;
}

static uint32_t status_rank(const event_waitlist_t *list, uint8_t status, uint32_t sequence) {
    const uint32_t *tree = list->status_tree[status];
    uint32_t rank = 0;
    for (uint32_t i = sequence + 1; i > 0; i -= i & (0u - i)) rank += tree[i - 1];
    return rank;
}

uint32_t waiting_rank(const event_waitlist_t *list, uint32_t sequence) {
    return status_rank(list, HF_WAITLIST_WAITING, sequence);
}

uint32_t status_next(const event_waitlist_t *list, uint8_t status, int64_t after) {
    if (list->joined == 0) return NO_INDEX;
    /* The (rank + 1)-th entry of the status: the tree's descent, from its largest power of
     * two down, keeps the longest prefix that holds fewer. */
    uint32_t wanted = (after < 0 ? 0 : status_rank(list, status, (uint32_t)after)) + 1;
    const uint32_t *tree = list->status_tree[status];
    uint32_t position = 0, step = 1;
    while (step * 2 <= list->joined_capacity) step *= 2;
    for (; step > 0; step /= 2) {
        uint32_t next = position + step;
        if (next <= list->joined_capacity && tree[next - 1] < wanted) {
            position = next;
            wanted -= tree[next - 1];
        }
    }
    return position < list->joined ? position : NO_INDEX;
}

void event_waitlist_free(event_waitlist_t *list) {
    for (uint32_t t = 0; t < list->target_count; t++) {
        for (uint32_t q = 0; q < list->targets[t].quantity_count; q++)
            free(list->targets[t].by_quantity[q].items);
        free(list->targets[t].by_quantity);
    }
    free(list->targets);
    free(list->entries);
    for (unsigned s = 0; s <= HF_WAITLIST_CANCELLED; s++) free(list->status_tree[s]);
}
