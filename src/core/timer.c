/* The core's timer (timer.h): a binary min-heap in one array. */
#include "core/timer.h"

#include <assert.h>
#include <stdlib.h>

_Static_assert(sizeof(hf_timer_entry_t) == 16, "an entry is a deadline and two words");

static bool earlier(const hf_timer_entry_t *a, const hf_timer_entry_t *b) {
    if (a->deadline_ms != b->deadline_ms) return a->deadline_ms < b->deadline_ms;
    if (a->kind != b->kind) return a->kind < b->kind;
    return a->index < b->index;
}

static void swap(hf_timer_entry_t *a, hf_timer_entry_t *b) {
    hf_timer_entry_t held = *a;
    *a = *b;
    *b = held;
}

/* Room for one more entry: 16 at first, then doubling, as the core's tables grow. */
static void reserve(hf_timer_t *timer) {
    if (timer->count < timer->capacity) return;
    uint32_t capacity = timer->capacity ? timer->capacity * 2 : 16;
    hf_timer_entry_t *grown = realloc(timer->entries, (size_t)capacity * sizeof *grown);
    if (!grown) abort(); /* out of memory: nothing sensible to answer */
    timer->entries = grown;
    timer->capacity = capacity;
}

void hf_timer_free(hf_timer_t *timer) {
    free(timer->entries);
    *timer = (hf_timer_t){0};
}

void hf_timer_push(hf_timer_t *timer, int64_t deadline_ms, hf_timer_kind_t kind, uint32_t index) {
    reserve(timer);
    hf_timer_entry_t *entries = timer->entries;
    uint32_t i = timer->count++;
    entries[i] = (hf_timer_entry_t){deadline_ms, kind, index};
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!earlier(&entries[i], &entries[parent])) break;
        swap(&entries[i], &entries[parent]);
        i = parent;
    }
}

void hf_timer_pop(hf_timer_t *timer) {
    assert(timer->count > 0);
    hf_timer_entry_t *entries = timer->entries;
    entries[0] = entries[--timer->count];
    uint32_t i = 0;
    for (;;) {
        uint32_t smallest = i, left = 2 * i + 1, right = 2 * i + 2;
        if (left < timer->count && earlier(&entries[left], &entries[smallest])) smallest = left;
        if (right < timer->count && earlier(&entries[right], &entries[smallest])) smallest = right;
        if (smallest == i) return;
        swap(&entries[i], &entries[smallest]);
        i = smallest;
    }
}
