/* The texts of a calendar's spans (API.md section 12): dates "YYYY-MM-DD" for night
 * calendars, RFC 3339 instants for minute calendars, turned into steps and back. A date's step
 * is its day count since 1970-01-01, an instant's its minute count since the Unix epoch; both
 * fit an int32_t from 1970 on (minutes until the year 6053), and steps before 1970 are
 * refused, since no span may start in the past.
 *
 * Pure functions (no clock, no locale, no allocation) so that a fuzzer can drive them
 * (tests/fuzz/fuzz_spans.c). Any thread. */
#ifndef HF_LIB_SPANS_H
#define HF_LIB_SPANS_H

#include <stddef.h>
#include <stdint.h>

typedef enum hf_span_parse {
    HF_SPAN_PARSED = 0,
    HF_SPAN_MALFORMED,    /* not a date, or not an RFC 3339 date-time */
    HF_SPAN_MISALIGNED,   /* an instant with seconds or a fraction that are not zero */
    HF_SPAN_OUT_OF_RANGE, /* before 1970, or past what a step holds */
} hf_span_parse_t;

/* Bytes of a formatted date and instant, their NUL included. */
#define HF_SPAN_DATE_SIZE 11
#define HF_SPAN_INSTANT_SIZE 25

/* "2026-12-24" (exactly ten bytes, a real day of the proleptic Gregorian calendar) into *day;
 * text need not be NUL-terminated and is read for length bytes only. *day is set only when
 * the answer is HF_SPAN_PARSED. */
hf_span_parse_t hf_span_date_parse(const char *text, size_t length, int32_t *day);

/* "2026-12-24T09:00:00Z", "2026-12-24T10:00:00.000+01:00" (any offset, 'T' or 't', 'Z' or 'z')
 * into *minute, the instant's minute in UTC. The same reading rules as the date's. */
hf_span_parse_t hf_span_instant_parse(const char *text, size_t length, int32_t *minute);

/* A day as "2026-12-24" and a minute as "2026-12-24T09:00:00.000Z", NUL-terminated. day and
 * minute are steps as the parsers make them (>= 0). */
void hf_span_date_format(int32_t day, char out[HF_SPAN_DATE_SIZE]);
void hf_span_instant_format(int32_t minute, char out[HF_SPAN_INSTANT_SIZE]);

/* The day an instant in ms since the epoch falls in (UTC): today, for the horizon's checks. */
int32_t hf_span_day_of(int64_t unix_ms);

#endif
