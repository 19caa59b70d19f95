/* Histograms (src/lib/histogram.h): each value lands in the first bucket whose bound it does
 * not exceed, a value on a bound in that bound's bucket, anything above the last in +Inf; the
 * sum and count follow every value. Checked against a plain model over random values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/histogram.h"

static const uint64_t UPPER[] = {1, 10, 100};
static const hf_histogram_bounds_t BOUNDS = {UPPER, 3, 1.0};

static void test_bounds_and_infinity(void **state) {
    (void)state;
    hf_histogram_t histogram;
    memset(&histogram, 0, sizeof histogram);
    const uint64_t values[] = {0, 1, 2, 10, 11, 100, 101, 5000};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        hf_histogram_record(&histogram, &BOUNDS, values[i]);
    assert_int_equal(histogram.counts[0], 2); /* 0, 1 */
    assert_int_equal(histogram.counts[1], 2); /* 2, 10 */
    assert_int_equal(histogram.counts[2], 2); /* 11, 100 */
    assert_int_equal(histogram.counts[3], 2); /* 101, 5000: +Inf */
    assert_int_equal(histogram.count, 8);
    assert_int_equal(histogram.sum, 0 + 1 + 2 + 10 + 11 + 100 + 101 + 5000);
}

/* The shared bounds of durations: increasing, 100 us to 10 s, in nanoseconds. */
static void test_seconds_bounds(void **state) {
    (void)state;
    const hf_histogram_bounds_t *bounds = &hf_histogram_seconds_bounds;
    assert_true(bounds->count > 0 && bounds->count <= HF_HISTOGRAM_BOUNDS_MAX);
    assert_int_equal(bounds->upper[0], 100000);
    assert_int_equal(bounds->upper[bounds->count - 1], 10000000000ull);
    for (size_t i = 1; i < bounds->count; i++) assert_true(bounds->upper[i] > bounds->upper[i - 1]);
    assert_true(bounds->unit_scale == 1e-9);
}

static void test_against_a_model(void **state) {
    (void)state;
    const hf_histogram_bounds_t *bounds = &hf_histogram_seconds_bounds;
    hf_histogram_t histogram;
    memset(&histogram, 0, sizeof histogram);
    uint64_t model[HF_HISTOGRAM_BOUNDS_MAX + 1] = {0}, sum = 0;
    srand(7);
    for (int n = 0; n < 100000; n++) {
        uint64_t value = ((uint64_t)rand() << 20 ^ (uint64_t)rand()) % 20000000000ull;
        if (n % 7 == 0) value = bounds->upper[(size_t)n % bounds->count]; /* on a bound */
        hf_histogram_record(&histogram, bounds, value);
        size_t bucket = bounds->count;
        for (size_t i = bounds->count; i-- > 0;)
            if (value <= bounds->upper[i]) bucket = i;
        model[bucket]++;
        sum += value;
    }
    for (size_t i = 0; i <= bounds->count; i++) assert_int_equal(histogram.counts[i], model[i]);
    assert_int_equal(histogram.sum, sum);
    assert_int_equal(histogram.count, 100000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_and_infinity),
        cmocka_unit_test(test_seconds_bounds),
        cmocka_unit_test(test_against_a_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
