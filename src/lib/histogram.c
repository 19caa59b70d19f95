/* The shared bounds of histograms (histogram.h). */
#include "lib/histogram.h"

/* Prometheus's own default buckets, stretched down to 100 us and up to 10 s. */
static const uint64_t SECONDS_UPPER_NS[] = {
    100000,   250000,    500000,    1000000,   2500000,    5000000,    10000000,   25000000,
    50000000, 100000000, 250000000, 500000000, 1000000000, 2500000000, 5000000000, 10000000000,
};

const hf_histogram_bounds_t hf_histogram_seconds_bounds = {
    SECONDS_UPPER_NS, sizeof SECONDS_UPPER_NS / sizeof SECONDS_UPPER_NS[0], 1e-9};
