/* The waiting room's estimate (API.md section 6): estimated_wait_s = ceil(position / r), with
 * r = min(admit_per_s, A / T), T = the time since the room's first admission, at least 1 s and
 * at most HF_QUEUE_RATE_WINDOW_MS, A the admissions within the last T (admit_per_s when A is
 * 0), and r at most max_active / token_ttl_s while every max_active slot is taken.
 *
 * The admissions of the last T are read from a ring of cumulative counts, one per
 * HF_QUEUE_RATE_STEP_MS step: A is the count now less the count at the end of the step T ago,
 * two loads, so a poll never scans. Within the first T every admission is within it, so A is
 * all of them, exactly; once T is the whole window, its start is counted in whole steps (the
 * window is between 9.9 and 10 s long). Private to src/core (queue.c), pure: time is passed
 * in. */
#ifndef HF_CORE_ESTIMATE_H
#define HF_CORE_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/definition.h"
#include "lib/limits.h"

/* Admissions of one room over the recent window. Initialise with hf_admission_window_init. */
typedef struct hf_admission_window {
    /* Admissions up to the end of step s (now / HF_QUEUE_RATE_STEP_MS), at s % RING; kept for
     * the steps from newest_step - RING + 1 to newest_step, each step between written. */
    uint64_t through[HF_QUEUE_RATE_RING_STEPS];
    uint64_t total;   /* admissions counted, since the room was made */
    int64_t first_ms; /* the first of them; meaningless while total is 0 */
    int64_t first_step, newest_step;
} hf_admission_window_t;

void hf_admission_window_init(hf_admission_window_t *window);
/* One admission at now_ms (a time before the newest counted counts in the newest step). */
void hf_admission_window_count(hf_admission_window_t *window, int64_t now_ms);

/* A room as the estimate sees it at a poll. */
typedef struct hf_estimate_room {
    const hf_room_definition_t *settings;
    const hf_admission_window_t *window;
    bool slots_full; /* max_active > 0 and that many admitted with live tokens */
} hf_estimate_room_t;

/* Whole seconds, >= 0, for a waiting ticket at position (>= 1). */
int64_t hf_estimate_wait_s(const hf_estimate_room_t *room, uint32_t position, int64_t now_ms);

#endif
