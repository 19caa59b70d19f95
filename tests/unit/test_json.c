/* Unit tests of lib/json.h: the JSON writer's numbers and times, checked against the C library. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "core/core.h"
#include "lib/map.h"
#include "core_fixtures.h"

/* ---- JSON writer numbers and times (src/core/buffer.c), checked against the C library ---- */

/* A small deterministic generator, so a failure can be reproduced exactly. */
static uint64_t next_random(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* What the writer used to produce with snprintf, as the reference for the hand-written one. */
static void reference_time(int64_t unix_ms, char *out, size_t size) {
    int64_t milliseconds = unix_ms % 1000;
    time_t seconds = (time_t)(unix_ms / 1000);
    if (milliseconds < 0) {
        milliseconds += 1000;
        seconds -= 1;
    }
    struct tm parts;
    assert_non_null(gmtime_r(&seconds, &parts));
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
             parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
             (int)milliseconds);
}

static void reference_seconds(int64_t milliseconds, char *out, size_t size) {
    if (milliseconds % 1000 == 0) {
        snprintf(out, size, "%lld", (long long)(milliseconds / 1000));
        return;
    }
    snprintf(out, size, "%lld.%03lld", (long long)(milliseconds / 1000),
             (long long)llabs(milliseconds % 1000));
    size_t length = strlen(out);
    while (out[length - 1] == '0') out[--length] = '\0';
}

static void assert_time_matches_reference(int64_t unix_ms) {
    char expected[96];
    char actual[32];
    reference_time(unix_ms, expected, sizeof expected);
    memset(actual, 'x', sizeof actual);
    hf_format_time(unix_ms, actual);
    if (strcmp(actual, expected) != 0)
        fail_msg("%lld: %s, expected %s", (long long)unix_ms, actual, expected);
}

/* The text one JSON writer function makes of value, alone in the buffer. */
static const char *json_value_text(hf_buffer_t *buffer, void (*write)(hf_json_t *, int64_t),
                                   int64_t value) {
    hf_json_t json;
    hf_buffer_reset(buffer);
    hf_json_init(&json, buffer);
    write(&json, value);
    return buffer->data;
}

static const char *json_int_text(hf_buffer_t *buffer, int64_t value) {
    return json_value_text(buffer, hf_json_int, value);
}

static const char *json_seconds_text(hf_buffer_t *buffer, int64_t milliseconds) {
    return json_value_text(buffer, hf_json_seconds, milliseconds);
}

static void test_json_int(void **state) {
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    assert_string_equal(json_int_text(&buffer, INT64_MIN), "-9223372036854775808");
    assert_string_equal(json_int_text(&buffer, INT64_MAX), "9223372036854775807");
    assert_string_equal(json_int_text(&buffer, 0), "0");
    assert_string_equal(json_int_text(&buffer, -1), "-1");
    assert_string_equal(json_int_text(&buffer, 10), "10");
    assert_string_equal(json_int_text(&buffer, 99), "99");
    assert_string_equal(json_int_text(&buffer, 100), "100");
    assert_string_equal(json_int_text(&buffer, INT64_MIN + 1), "-9223372036854775807");
    uint64_t random = 0x9e3779b97f4a7c15u;
    char expected[32];
    for (int i = 0; i < 10000; i++) {
        /* Shifted right by a random amount too, so short numbers are as common as long ones. */
        uint64_t bits = next_random(&random);
        int64_t value = (int64_t)(bits >> (next_random(&random) % 64));
        if (i % 2) value = -value;
        snprintf(expected, sizeof expected, "%lld", (long long)value);
        assert_string_equal(json_int_text(&buffer, value), expected);
    }
    /* Commas between values are still the writer's business. */
    hf_json_t json;
    hf_buffer_reset(&buffer);
    hf_json_init(&json, &buffer);
    hf_json_array_begin(&json);
    hf_json_int(&json, 0);
    hf_json_int(&json, -1);
    hf_json_seconds(&json, 1500);
    hf_json_array_end(&json);
    assert_string_equal(buffer.data, "[0,-1,1.5]");
    hf_buffer_free(&buffer);
}

static void test_json_seconds(void **state) {
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    assert_string_equal(json_seconds_text(&buffer, 1000), "1");
    assert_string_equal(json_seconds_text(&buffer, 1500), "1.5");
    assert_string_equal(json_seconds_text(&buffer, 1050), "1.05");
    assert_string_equal(json_seconds_text(&buffer, 1), "0.001");
    assert_string_equal(json_seconds_text(&buffer, 0), "0");
    assert_string_equal(json_seconds_text(&buffer, 123456), "123.456");
    assert_string_equal(json_seconds_text(&buffer, 600000), "600");
    assert_string_equal(json_seconds_text(&buffer, 999), "0.999");
    assert_string_equal(json_seconds_text(&buffer, -1500), "-1.5");
    assert_string_equal(json_seconds_text(&buffer, -2000), "-2");
    assert_string_equal(json_seconds_text(&buffer, INT64_MAX), "9223372036854775.807");
    assert_string_equal(json_seconds_text(&buffer, INT64_MIN), "-9223372036854775.808");
    char expected[48];
    for (int64_t milliseconds = -5000; milliseconds <= 5000; milliseconds++) {
        reference_seconds(milliseconds, expected, sizeof expected);
        assert_string_equal(json_seconds_text(&buffer, milliseconds), expected);
    }
    uint64_t random = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 10000; i++) {
        int64_t milliseconds = (int64_t)next_random(&random);
        reference_seconds(milliseconds, expected, sizeof expected);
        assert_string_equal(json_seconds_text(&buffer, milliseconds), expected);
    }
    hf_buffer_free(&buffer);
}

static void test_format_time(void **state) {
    char text[32];
    struct {
        int64_t unix_ms;
        const char *expected;
    } cases[] = {
        {0, "1970-01-01T00:00:00.000Z"},
        {-1, "1969-12-31T23:59:59.999Z"},
        {-1000, "1969-12-31T23:59:59.000Z"},
        {-1001, "1969-12-31T23:59:58.999Z"},
        {-86400000, "1969-12-31T00:00:00.000Z"},
        {INT64_C(1795291200000), "2026-11-21T20:00:00.000Z"},
        {INT64_C(951782400000), "2000-02-29T00:00:00.000Z"},
        {INT64_C(951868799999), "2000-02-29T23:59:59.999Z"},
        {INT64_C(4107542399999), "2100-02-28T23:59:59.999Z"},
        {INT64_C(4107542400000), "2100-03-01T00:00:00.000Z"},
        {INT64_C(946684799999), "1999-12-31T23:59:59.999Z"},
        {INT64_C(946684800000), "2000-01-01T00:00:00.000Z"},
        {INT64_C(-2208988800000), "1900-01-01T00:00:00.000Z"},
        {INT64_C(-2203891200001), "1900-02-28T23:59:59.999Z"},
        {INT64_C(-2203891200000), "1900-03-01T00:00:00.000Z"},
        {INT64_C(13601087999999), "2400-12-31T23:59:59.999Z"},
        /* The supported range is years 0000 to 9999; beyond it the ends are written. */
        {INT64_C(-62167219200000), "0000-01-01T00:00:00.000Z"},
        {INT64_C(253402300799999), "9999-12-31T23:59:59.999Z"},
        {INT64_MIN, "0000-01-01T00:00:00.000Z"},
        {INT64_MAX, "9999-12-31T23:59:59.999Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hf_format_time(cases[i].unix_ms, text);
        assert_string_equal(text, cases[i].expected);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] - 2; i++)
        assert_time_matches_reference(cases[i].unix_ms);

    /* Every day boundary from 1900 to 2400, a millisecond either side included: that covers
     * every month end, year end and leap day, before 1970 as well as after. */
    const int64_t first_ms = INT64_C(-2208988800000); /* 1900-01-01 */
    const int64_t end_ms = INT64_C(13601088000000);   /* 2401-01-01 */
    const int64_t day_ms = INT64_C(86400000);
    for (int64_t midnight = first_ms; midnight <= end_ms; midnight += day_ms) {
        assert_time_matches_reference(midnight - 1);
        assert_time_matches_reference(midnight);
        assert_time_matches_reference(midnight + 1);
    }
    uint64_t random = 0xd1b54a32d192ed03u;
    for (int i = 0; i < 200000; i++) {
        uint64_t offset = next_random(&random) % (uint64_t)(end_ms - first_ms);
        assert_time_matches_reference(first_ms + (int64_t)offset);
    }

    /* hf_json_time writes the same text as a JSON string. */
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    hf_json_t json;
    hf_json_init(&json, &buffer);
    hf_json_time(&json, INT64_C(1795291200000));
    assert_string_equal(buffer.data, "\"2026-11-21T20:00:00.000Z\"");
    hf_buffer_free(&buffer);
}

/* RFC 3339 read back: offsets, fractions cut to milliseconds, and every malformed or impossible
 * date refused. */
static void test_parse_time(void **state) {
    (void)state;
    int64_t ms = 0;
    assert_true(hf_parse_time("2026-11-21T20:00:00.000Z", &ms));
    assert_int_equal(ms, 1795291200000LL);
    assert_true(hf_parse_time("2026-11-21T21:30:00.1239+01:30", &ms));
    assert_int_equal(ms, 1795291200123LL);
    assert_true(hf_parse_time("1970-01-01t00:00:00z", &ms));
    assert_int_equal(ms, 0);
    assert_true(hf_parse_time("2024-02-29T23:59:59-00:00", &ms));
    char formatted[32];
    hf_format_time(ms, formatted);
    assert_string_equal(formatted, "2024-02-29T23:59:59.000Z");
    static const char *const refused[] = {"2026-11-21T20:00:00",
                                          "2026-11-21 20:00:00Z",
                                          "2026-11-21T20:00Z",
                                          "2023-02-29T00:00:00Z",
                                          "2026-13-01T00:00:00Z",
                                          "2026-04-31T00:00:00Z",
                                          "2026-11-21T24:00:00Z",
                                          "2026-11-21T20:00:60Z",
                                          "1969-12-31T23:59:59Z",
                                          "2026-11-21T20:00:00.Z",
                                          "2026-11-21T20:00:00+1:00",
                                          "2026-11-21T20:00:00Zjunk",
                                          "1970-01-01T00:30:00+01:00",
                                          "",
                                          "tomorrow"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        assert_false(hf_parse_time(refused[i], &ms));
    assert_false(hf_parse_time(NULL, &ms));
}

/* hf_format_decimal against snprintf's "%.15g", which the dispatch answers always used. */
static void decimal_matches(double value) {
    char expected[64], formatted[HF_DECIMAL_SIZE];
    int expected_length = snprintf(expected, sizeof expected, "%.15g", value);
    size_t length = hf_format_decimal(value, formatted);
    assert_string_equal(formatted, expected);
    assert_int_equal(length, (size_t)expected_length);
}

/* A random whole number below 10^digits, either sign. */
static int64_t random_whole(uint64_t *state, int digits) {
    int64_t bound = 1;
    for (int i = 0; i < digits; i++) bound *= 10;
    int64_t whole = (int64_t)(next_random(state) % (uint64_t)bound);
    return next_random(state) & 1 ? -whole : whole;
}

static void test_format_decimal_fixed(void **state) {
    (void)state;
    static const double fixed[] = {40.75,
                                   -73.99,
                                   4.9,
                                   5,
                                   0,
                                   -0.0,
                                   90,
                                   -90,
                                   180,
                                   -180,
                                   0.0001,
                                   -0.0001,
                                   0.00001,
                                   0.000001,
                                   1e-7,
                                   0.5,
                                   123.456789,
                                   1.0000005,
                                   2.9999995,
                                   999999999.999999,
                                   1e9,
                                   -1e9,
                                   1e15,
                                   1e16,
                                   123456789012345678.0,
                                   1e300,
                                   -1e-300,
                                   5e-324,
                                   1.7976931348623157e308};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) decimal_matches(fixed[i]);
}

static void test_format_decimal_random(void **state) {
    (void)state;
    uint64_t random = 0x5DEECE66Dull;
    /* HF_TEST_ROUNDS: fewer under valgrind (tests/crash/valgrind.sh), which runs them 50x slower. */
    const char *rounds_given = getenv("HF_TEST_ROUNDS");
    int rounds = rounds_given ? atoi(rounds_given) : 200000;
    for (int i = 0; i < rounds; i++) {
        /* Coordinates and ratings as clients send them: up to six decimals, any magnitude
         * the fast path takes and past it. */
        int64_t whole = random_whole(&random, 1 + (int)(next_random(&random) % 17));
        decimal_matches((double)whole / 1e6);
        /* Seven to nine decimals: the 6th decimal rounds, printf writes them. */
        int64_t finer = random_whole(&random, 1 + (int)(next_random(&random) % 15));
        decimal_matches((double)finer / (next_random(&random) & 1 ? 1e7 : 1e9));
        /* Halves at the 7th decimal, where a rounding to six would go either way. */
        decimal_matches(((double)random_whole(&random, 9) + 0.5) / 1e6);
        /* Any finite double at all. */
        uint64_t bits = next_random(&random);
        double any;
        memcpy(&any, &bits, sizeof any);
        if (isfinite(any)) decimal_matches(any);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_int),
        cmocka_unit_test(test_json_seconds),
        cmocka_unit_test(test_format_time),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_format_decimal_fixed),
        cmocka_unit_test(test_format_decimal_random),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
