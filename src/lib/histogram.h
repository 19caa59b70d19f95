/* A histogram of whole numbers (nanoseconds, mutations) in fixed buckets, as Prometheus reads
 * one: each bucket counts the values up to its upper bound, the last one everything above the
 * highest bound (+Inf). Recording is a few compares and three additions: no lock, no
 * allocation, no floating point, so the loop thread and the store's writer record on their
 * hot paths. Whoever shares one between threads guards it (the store's stats lock).
 *
 * Ownership: a histogram is plain memory inside its owner; the bounds are static constant
 * arrays that outlive it. */
#ifndef HF_HISTOGRAM_H
#define HF_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Bounds a histogram may have at most, +Inf aside. */
#define HF_HISTOGRAM_BOUNDS_MAX 20

typedef struct hf_histogram_bounds {
    const uint64_t *upper; /* increasing upper bounds, in the recorded unit */
    size_t count;          /* at most HF_HISTOGRAM_BOUNDS_MAX */
    double unit_scale;     /* one recorded unit in the exposed one (1e-9: ns as s) */
} hf_histogram_bounds_t;

typedef struct hf_histogram {
    /* counts[i] is the values in bucket i alone (not cumulative); counts[bounds->count]
     * the values above the last bound. */
    uint64_t counts[HF_HISTOGRAM_BOUNDS_MAX + 1];
    uint64_t sum; /* in the recorded unit */
    uint64_t count;
} hf_histogram_t;

/* Durations from 100 us to 10 s, in nanoseconds: a hold answered from memory and made
 * durable takes about a millisecond, a slow disk's commit tens, a stuck one seconds. */
extern const hf_histogram_bounds_t hf_histogram_seconds_bounds;

/* Adds value. Most values fall in the first buckets, so the scan starts there. */
static inline void hf_histogram_record(hf_histogram_t *histogram,
                                       const hf_histogram_bounds_t *bounds, uint64_t value) {
    size_t bucket = 0;
    while (bucket < bounds->count && value > bounds->upper[bucket]) bucket++;
    histogram->counts[bucket]++;
    histogram->sum += value;
    histogram->count++;
}

#endif
