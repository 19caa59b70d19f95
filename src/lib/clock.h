/* The two clocks the server reads, in the units it uses: wall time in milliseconds since the
 * Unix epoch (what the core is given and what answers show) and a monotonic count of seconds
 * (for durations the store measures). Written once here so that no file converts a timespec
 * on its own. */
#ifndef HF_CLOCK_H
#define HF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_REALTIME since the epoch. It can step backwards: callers that need a
 * time that never does (the engine) keep the largest value they have seen. */
static inline int64_t hf_clock_wall_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Seconds of CLOCK_MONOTONIC, for measuring how long something took. */
static inline double hf_clock_monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

#endif
