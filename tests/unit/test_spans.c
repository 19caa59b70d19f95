/* The texts of a calendar's spans (lib/spans.h): dates and RFC 3339 instants into steps and
 * back. Fixed cases (leap years, offsets, bounds, garbage), then every day over two centuries
 * and random minutes checked against the C library's timegm and gmtime_r. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/spans.h"

static hf_span_parse_t date(const char *text, int32_t *day) {
    return hf_span_date_parse(text, strlen(text), day);
}

static hf_span_parse_t instant(const char *text, int32_t *minute) {
    return hf_span_instant_parse(text, strlen(text), minute);
}

static void test_dates(void **state) {
    (void)state;
    int32_t day = -7;
    assert_int_equal(date("1970-01-01", &day), HF_SPAN_PARSED);
    assert_int_equal(day, 0);
    assert_int_equal(date("2026-12-24", &day), HF_SPAN_PARSED);
    assert_int_equal(day, 20811);
    assert_int_equal(date("2000-02-29", &day), HF_SPAN_PARSED); /* divisible by 400 */
    assert_int_equal(day, 11016);
    assert_int_equal(date("2028-02-29", &day), HF_SPAN_PARSED);
    assert_int_equal(date("9999-12-31", &day), HF_SPAN_PARSED);
    assert_int_equal(day, 2932896);
    day = 5;
    assert_int_equal(date("2027-02-29", &day), HF_SPAN_MALFORMED); /* not a leap year */
    assert_int_equal(date("2100-02-29", &day), HF_SPAN_MALFORMED); /* divisible by 100 */
    assert_int_equal(date("2026-04-31", &day), HF_SPAN_MALFORMED);
    assert_int_equal(date("2026-13-01", &day), HF_SPAN_MALFORMED);
    assert_int_equal(date("2026-00-10", &day), HF_SPAN_MALFORMED);
    assert_int_equal(date("2026-01-00", &day), HF_SPAN_MALFORMED);
    assert_int_equal(day, 5); /* untouched by a refusal */
    assert_int_equal(date("1969-12-31", &day), HF_SPAN_OUT_OF_RANGE);
}

static void test_dates_garbage(void **state) {
    (void)state;
    static const char *const garbage[] = {
        "",           "2026",       "2026-12-2",   "2026-12-244",    "2026/12/24",
        "26-12-24xx", "2026-1-245", " 2026-12-24", "2026-12-24 ",    "2026-12-24T00:00:00Z",
        "+026-12-24", "2026-12-2a", "abcd-ef-gh",  "２０２６-12-24",
    };
    int32_t day;
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        if (date(garbage[i], &day) != HF_SPAN_MALFORMED) fail_msg("accepted \"%s\"", garbage[i]);
    /* The length given is the text: the bytes after it are not read. */
    assert_int_equal(hf_span_date_parse("2026-12-24xyz", 10, &day), HF_SPAN_PARSED);
    assert_int_equal(hf_span_date_parse("2026-12-24", 9, &day), HF_SPAN_MALFORMED);
}

static void test_instants(void **state) {
    (void)state;
    int32_t minute = 0;
    assert_int_equal(instant("2026-12-24T09:00:00Z", &minute), HF_SPAN_PARSED);
    int32_t expected = 20811 * 1440 + 9 * 60;
    assert_int_equal(minute, expected);
    assert_int_equal(instant("2026-12-24t09:00:00z", &minute), HF_SPAN_PARSED);
    assert_int_equal(minute, expected);
    assert_int_equal(instant("2026-12-24T10:00:00+01:00", &minute), HF_SPAN_PARSED);
    assert_int_equal(minute, expected);
    assert_int_equal(instant("2026-12-24T03:30:00.000-05:30", &minute), HF_SPAN_PARSED);
    assert_int_equal(minute, expected);
    /* An offset moves the instant across midnight and into another day. */
    assert_int_equal(instant("2026-12-25T08:00:00+23:00", &minute), HF_SPAN_PARSED);
    assert_int_equal(minute, expected);
    assert_int_equal(instant("1970-01-01T00:00:00Z", &minute), HF_SPAN_PARSED);
    assert_int_equal(minute, 0);
    assert_int_equal(instant("2026-12-24T09:00:00.000000000Z", &minute), HF_SPAN_PARSED);
}

static void test_instants_refused(void **state) {
    (void)state;
    int32_t minute = 3;
    assert_int_equal(instant("2026-12-24T09:00:01Z", &minute), HF_SPAN_MISALIGNED);
    assert_int_equal(instant("2026-12-24T09:00:00.001Z", &minute), HF_SPAN_MISALIGNED);
    assert_int_equal(instant("2026-12-31T23:59:60Z", &minute), HF_SPAN_MISALIGNED);
    assert_int_equal(instant("1970-01-01T00:30:00+01:00", &minute), HF_SPAN_OUT_OF_RANGE);
    assert_int_equal(instant("9999-12-31T23:59:00Z", &minute), HF_SPAN_OUT_OF_RANGE);
    assert_int_equal(minute, 3);
    static const char *const garbage[] = {
        "",
        "2026-12-24",
        "2026-12-24T09:00Z",
        "2026-12-24T09:00:00",
        "2026-12-24 09:00:00Z",
        "2026-12-24T24:00:00Z",
        "2026-12-24T09:60:00Z",
        "2026-12-24T09:00:00.Z",
        "2026-12-24T09:00:00+1:00",
        "2026-12-24T09:00:00+01:60",
        "2026-12-24T09:00:00+24:00",
        "2026-12-24T09:00:00+0100",
        "2026-12-24T09:00:00ZZ",
        "2026-02-30T09:00:00Z",
        "2026-12-24T09:00:00.5.5Z",
        "2026-12-24T09:00:00 Z",
        "2026-12-24T9:00:00Z",
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        if (instant(garbage[i], &minute) != HF_SPAN_MALFORMED)
            fail_msg("accepted \"%s\"", garbage[i]);
}

static void test_formats(void **state) {
    (void)state;
    char text[HF_SPAN_INSTANT_SIZE];
    hf_span_date_format(20811, text);
    assert_string_equal(text, "2026-12-24");
    hf_span_date_format(0, text);
    assert_string_equal(text, "1970-01-01");
    hf_span_instant_format(20811 * 1440 + 9 * 60 + 30, text);
    assert_string_equal(text, "2026-12-24T09:30:00.000Z");
    hf_span_instant_format(INT32_MAX, text);
    assert_int_equal(strlen(text), HF_SPAN_INSTANT_SIZE - 1);
    assert_int_equal(hf_span_day_of(0), 0);
    assert_int_equal(hf_span_day_of(86399999), 0);
    assert_int_equal(hf_span_day_of(86400000), 1);
    assert_int_equal(hf_span_day_of(-1), -1);
}

/* Every day from 1970 to 2170: the parse agrees with timegm, and the format reads back. */
static void test_days_against_libc(void **state) {
    (void)state;
    for (int32_t day = 0; day < 200 * 366; day++) {
        time_t t = (time_t)day * 86400;
        struct tm parts;
        assert_non_null(gmtime_r(&t, &parts));
        char expected[32], text[HF_SPAN_DATE_SIZE];
        strftime(expected, sizeof expected, "%Y-%m-%d", &parts);
        hf_span_date_format(day, text);
        if (strcmp(text, expected) != 0) fail_msg("day %d: %s, expected %s", day, text, expected);
        int32_t back;
        assert_int_equal(date(text, &back), HF_SPAN_PARSED);
        assert_int_equal(back, day);
    }
}

/* Random minutes in an offset of their own: the parse gives the minute back. */
static void test_minutes_round_trip(void **state) {
    (void)state;
    srand(29);
    for (int i = 0; i < 100000; i++) {
        int32_t minute = (int32_t)(((int64_t)rand() * RAND_MAX + rand()) % (INT32_MAX - 2000));
        minute += 1440;
        int offset = rand() % (2 * 1440 - 1) - 1439;
        time_t local = (time_t)(minute + offset) * 60;
        struct tm parts;
        assert_non_null(gmtime_r(&local, &parts));
        char text[64];
        size_t used = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
        int magnitude = offset < 0 ? -offset : offset;
        snprintf(text + used, sizeof text - used, "%c%02d:%02d", offset < 0 ? '-' : '+',
                 magnitude / 60, magnitude % 60);
        int32_t back;
        if (instant(text, &back) != HF_SPAN_PARSED || back != minute)
            fail_msg("%s: expected minute %d", text, minute);
        char formatted[HF_SPAN_INSTANT_SIZE];
        hf_span_instant_format(minute, formatted);
        assert_int_equal(instant(formatted, &back), HF_SPAN_PARSED);
        assert_int_equal(back, minute);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_dates_garbage),
        cmocka_unit_test(test_instants),
        cmocka_unit_test(test_instants_refused),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_days_against_libc),
        cmocka_unit_test(test_minutes_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
