/* The waiting room's estimate (estimate.h): the admissions of the recent window, and the
 * estimate of a waiting ticket's wait from them. */
#include "core/estimate.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* position / admit_per_s is a quotient of doubles: one that is a whole number in decimal
 * (7 / 0.7) may come out a unit in the last place above it, which ceil would take to the next
 * second. A few units in the last place are taken off first. */
#define QUOTIENT_ROUNDING (8 * DBL_EPSILON)

/* The count just before the window must still be in the ring when the newest step is now's. */
_Static_assert(HF_QUEUE_RATE_RING_STEPS > HF_QUEUE_RATE_WINDOW_MS / HF_QUEUE_RATE_STEP_MS,
               "the ring keeps the window's steps and the one before");
_Static_assert(HF_QUEUE_RATE_WINDOW_MS % HF_QUEUE_RATE_STEP_MS == 0,
               "the window is a whole number of steps");

/* The step of a time, rounded down (times before 1970 included, for the tests' sake). */
static int64_t step_of(int64_t ms) {
    int64_t step = ms / HF_QUEUE_RATE_STEP_MS;
    return ms % HF_QUEUE_RATE_STEP_MS < 0 ? step - 1 : step;
}

static uint64_t *step_count(hf_admission_window_t *window, int64_t step) {
    return &window->through[(uint64_t)step % HF_QUEUE_RATE_RING_STEPS];
}

void hf_admission_window_init(hf_admission_window_t *window) { memset(window, 0, sizeof *window); }

void hf_admission_window_count(hf_admission_window_t *window, int64_t now_ms) {
    int64_t step = step_of(now_ms);
    if (window->total == 0) {
        window->first_ms = now_ms;
        window->first_step = window->newest_step = step;
    } else if (step > window->newest_step) {
        /* The steps without an admission hold the count they ended with: only the last
         * ring's worth can ever be read again. */
        int64_t from = window->newest_step + 1;
        if (step - from >= HF_QUEUE_RATE_RING_STEPS) from = step - HF_QUEUE_RATE_RING_STEPS + 1;
        for (int64_t quiet = from; quiet < step; quiet++)
            *step_count(window, quiet) = window->total;
        window->newest_step = step;
    }
    window->total++;
    *step_count(window, window->newest_step) = window->total;
}

/* A, the admissions within the last T, with T in milliseconds in *span_ms; 0 when none. */
static uint64_t admissions_recent(const hf_admission_window_t *window, int64_t now_ms,
                                  int64_t *span_ms) {
    if (window->total == 0) return 0;
    int64_t since = now_ms - window->first_ms;
    if (since < HF_QUEUE_RATE_WINDOW_MS) {
        *span_ms = since < HF_QUEUE_RATE_SPAN_MIN_MS ? HF_QUEUE_RATE_SPAN_MIN_MS : since;
        return window->total;
    }
    *span_ms = HF_QUEUE_RATE_WINDOW_MS;
    int64_t step = step_of(now_ms);
    if (step < window->newest_step) step = window->newest_step;
    int64_t before = step - HF_QUEUE_RATE_WINDOW_MS / HF_QUEUE_RATE_STEP_MS;
    if (before >= window->newest_step) return 0;
    if (before < window->first_step) return window->total;
    return window->total - window->through[(uint64_t)before % HF_QUEUE_RATE_RING_STEPS];
}

/* ceil(numerator / denominator) of whole numbers, denominator > 0. */
static int64_t ceil_divide(uint64_t numerator, uint64_t denominator) {
    return (int64_t)((numerator + denominator - 1) / denominator);
}

int64_t hf_estimate_wait_s(const hf_estimate_room_t *room, uint32_t position, int64_t now_ms) {
    const hf_room_definition_t *settings = room->settings;
    /* ceil(position / min(a, b)) is the larger of ceil(position / a) and ceil(position / b):
     * each bound on r is a lower bound on the wait. */
    double quotient = (double)position / settings->admit_per_s;
    int64_t wait = (int64_t)ceil(quotient - quotient * QUOTIENT_ROUNDING);
    int64_t span_ms = 0;
    uint64_t recent = admissions_recent(room->window, now_ms, &span_ms);
    if (recent > 0) {
        int64_t measured = ceil_divide((uint64_t)position * (uint64_t)span_ms, recent * 1000);
        if (measured > wait) wait = measured;
    }
    if (room->slots_full && settings->max_active > 0) {
        int64_t capped = ceil_divide((uint64_t)position * (uint64_t)settings->token_ttl_s,
                                     settings->max_active);
        if (capped > wait) wait = capped;
    }
    return wait > 0 ? wait : 0;
}
