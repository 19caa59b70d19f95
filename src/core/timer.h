/* Deadlines of the core: a binary min-heap of (deadline_ms, kind, index) entries, earliest
 * first (ties by kind, then index, so the same entries always come out in the same order).
 * What an entry stands for is the caller's business: the timer knows only its kind and an
 * index. Entries are never removed from the middle: one that no longer matters (a hold
 * extended, released or committed) stays until it reaches the top, where the caller drops it
 * (hf_timer_prune), or pops it and skips it. Private to src/core. */
#ifndef HF_CORE_TIMER_H
#define HF_CORE_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hf_timer_kind {
    HF_TIMER_HOLD = 0, /* index: a hold's index; the deadline: its expires_at */
    /* The waiting room's own heap (queue.c): */
    HF_TIMER_QUEUE_ADMIT = 1,  /* index: an event's; the next admission of its room */
    HF_TIMER_QUEUE_TICKET = 2, /* index: a ticket's; its abandonment or its token's expiry */
    /* The core's heap again (dispatch/): */
    HF_TIMER_OFFER = 3, /* index: a ride's index; the deadline: its offer's expires_at */
    /* index: an order's on a calendar; the deadline: when its next ended use leaves memory */
    HF_TIMER_CALENDAR_SWEEP = 4,
    /* New kinds go here, each with its row in core.c's table of timer kinds (what an entry's
     * staleness and its passing mean, told by its domain): a kind without a row does not
     * compile. */
    HF_TIMER_KINDS
} hf_timer_kind_t;

typedef struct hf_timer_entry {
    int64_t deadline_ms;
    hf_timer_kind_t kind;
    uint32_t index;
} hf_timer_entry_t;

/* Zero-filled is an empty timer. The entries grow by doubling, like the core's tables. */
typedef struct hf_timer {
    hf_timer_entry_t *entries;
    uint32_t count, capacity;
} hf_timer_t;

void hf_timer_free(hf_timer_t *timer);
void hf_timer_push(hf_timer_t *timer, int64_t deadline_ms, hf_timer_kind_t kind, uint32_t index);
/* Removes the earliest entry; the timer must not be empty. */
void hf_timer_pop(hf_timer_t *timer);

/* The earliest entry (borrowed until the next push or pop), or NULL when there is none. */
static inline const hf_timer_entry_t *hf_timer_peek(const hf_timer_t *timer) {
    return timer->count > 0 ? &timer->entries[0] : NULL;
}

/* Whether an entry has been left behind (its object no longer waits for that deadline). */
typedef bool (*hf_timer_stale_fn)(const void *context, const hf_timer_entry_t *entry);

/* Pops entries from the top while stale says they are, so the top is an entry that still
 * matters. Inline: it runs after every hold change, and a caller's stale function, known at
 * the call, is then inlined too. */
static inline void hf_timer_prune(hf_timer_t *timer, hf_timer_stale_fn stale, const void *context) {
    while (timer->count > 0 && stale(context, &timer->entries[0])) hf_timer_pop(timer);
}

#endif
