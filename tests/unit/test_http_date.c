/* The Date header's text (hf_format_http_date, src/lib/json.c): fixed cases, and every day
 * boundary over five centuries plus random instants checked against the C library's gmtime_r
 * and strftime in the C locale (which this program never leaves), whose %a and %b are the
 * English names IMF-fixdate asks for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/json.h"

static void reference_date(int64_t unix_ms, char *out, size_t size) {
    /* Floor division: the second an instant before 1970 falls in. */
    int64_t seconds = unix_ms / 1000 - (unix_ms % 1000 < 0 ? 1 : 0);
    time_t t = (time_t)seconds;
    struct tm parts;
    assert_non_null(gmtime_r(&t, &parts));
    assert_true(strftime(out, size, "%a, %d %b %Y %H:%M:%S GMT", &parts) > 0);
}

static void assert_date_matches_reference(int64_t unix_ms) {
    char expected[64];
    char actual[HF_HTTP_DATE_SIZE + 8];
    reference_date(unix_ms, expected, sizeof expected);
    memset(actual, 'x', sizeof actual);
    hf_format_http_date(unix_ms, actual);
    if (strcmp(actual, expected) != 0)
        fail_msg("%lld: %s, expected %s", (long long)unix_ms, actual, expected);
    assert_int_equal(strlen(actual), HF_HTTP_DATE_SIZE - 1);
}

static void test_http_date_fixed(void **state) {
    (void)state;
    static const struct {
        int64_t unix_ms;
        const char *expected;
    } cases[] = {
        {0, "Thu, 01 Jan 1970 00:00:00 GMT"},
        {999, "Thu, 01 Jan 1970 00:00:00 GMT"},
        {1000, "Thu, 01 Jan 1970 00:00:01 GMT"},
        {-1, "Wed, 31 Dec 1969 23:59:59 GMT"},
        {INT64_C(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT"}, /* RFC 9110's example */
        {INT64_C(951782400000), "Tue, 29 Feb 2000 00:00:00 GMT"},
        {INT64_C(1795291200000), "Sat, 21 Nov 2026 20:00:00 GMT"},
        {INT64_C(253402300799999), "Fri, 31 Dec 9999 23:59:59 GMT"},
        {INT64_MAX, "Fri, 31 Dec 9999 23:59:59 GMT"},
        {INT64_MIN, "Sat, 01 Jan 0000 00:00:00 GMT"},
    };
    char text[HF_HTTP_DATE_SIZE];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hf_format_http_date(cases[i].unix_ms, text);
        assert_string_equal(text, cases[i].expected);
    }
}

static uint64_t next_random(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void test_http_date_against_the_c_library(void **state) {
    (void)state;
    /* Every day boundary from 1900 to 2400, a millisecond either side included: every month
     * end, year end, leap day and weekday, before 1970 as well as after. */
    const int64_t first_ms = INT64_C(-2208988800000); /* 1900-01-01 */
    const int64_t end_ms = INT64_C(13601088000000);   /* 2401-01-01 */
    const int64_t day_ms = INT64_C(86400000);
    for (int64_t midnight = first_ms; midnight <= end_ms; midnight += day_ms) {
        assert_date_matches_reference(midnight - 1);
        assert_date_matches_reference(midnight);
        assert_date_matches_reference(midnight + 1);
    }
    uint64_t random = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 200000; i++) {
        uint64_t offset = next_random(&random) % (uint64_t)(end_ms - first_ms);
        assert_date_matches_reference(first_ms + (int64_t)offset);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_date_fixed),
        cmocka_unit_test(test_http_date_against_the_c_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
