/* libFuzzer target: the span texts of calendars (src/lib/spans.h). Each input is read as a
 * date and as an instant, from a buffer of its exact size so that ASan sees any overread.
 * Whatever either parser accepts reprints, through its format, to a text that parses back to
 * the same step; a date accepted is exactly ten bytes; an instant and the same instant in UTC
 * agree. Seeds: tests/fuzz/corpus/spans/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/spans.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_spans: %s\n", what);
    abort();
}

static void check_date(const char *text, size_t size) {
    int32_t day;
    if (hf_span_date_parse(text, size, &day) != HF_SPAN_PARSED) return;
    if (size != 10 || day < 0) fail("a date accepted is not ten bytes or is before 1970");
    char printed[HF_SPAN_DATE_SIZE];
    hf_span_date_format(day, printed);
    if (memcmp(printed, text, size) != 0) fail("a date reprints differently");
}

static void check_instant(const char *text, size_t size) {
    int32_t minute, again;
    if (hf_span_instant_parse(text, size, &minute) != HF_SPAN_PARSED) return;
    if (minute < 0) fail("an instant accepted is before 1970");
    char printed[HF_SPAN_INSTANT_SIZE];
    hf_span_instant_format(minute, printed);
    if (hf_span_instant_parse(printed, strlen(printed), &again) != HF_SPAN_PARSED)
        fail("an instant's reprint is refused");
    if (again != minute) fail("an instant's reprint is another minute");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    if (!text) abort();
    memcpy(text, data, size);
    check_date(text, size);
    check_instant(text, size);
    free(text);
    return 0;
}
