/* A small JSON writer on a buffer: responses and stored rows are written straight into a
 * buffer, without building a DOM first. */
#ifndef HF_JSON_H
#define HF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buffer.h"

/* JSON writer: inserts commas itself. Usage:
 *   hf_json_t j; hf_json_init(&j, &buffer);
 *   hf_json_object_begin(&j); hf_json_key(&j, "id"); hf_json_string(&j, "x"); hf_json_object_end(&j);
 * Strings are escaped; invalid UTF-8 is not produced because every string written comes from
 * validated input or from the server itself. */
#define HF_JSON_NESTING_MAX 32
typedef struct hf_json {
    hf_buffer_t *out; /* borrowed */
    int depth;
    bool need_comma[HF_JSON_NESTING_MAX];
    bool after_key;
} hf_json_t;

void hf_json_init(hf_json_t *json, hf_buffer_t *out);
void hf_json_object_begin(hf_json_t *json);
void hf_json_object_end(hf_json_t *json);
void hf_json_array_begin(hf_json_t *json);
void hf_json_array_end(hf_json_t *json);
void hf_json_key(hf_json_t *json, const char *key);
/* A key that is a string literal of letters, digits and '_' (every key of API.md): quoted and
 * given its colon by the compiler, so nothing is measured or escaped at run time. */
#define HF_JSON_KEY(json, literal) \
    hf_json_key_quoted((json), "\"" literal "\":", sizeof("\"" literal "\":") - 1)

/* Writes the comma that separates the next value (or key) from the previous one, unless it
 * follows a key. Inline, with hf_json_key_quoted, so a literal key's copy has a length known
 * at compile time and needs no call. */
static inline void hf_json_separator_write(hf_json_t *json) {
    if (json->after_key) {
        json->after_key = false;
        return;
    }
    if (json->depth > 0) {
        if (json->need_comma[json->depth - 1]) hf_buffer_append_char(json->out, ',');
        json->need_comma[json->depth - 1] = true;
    }
}

/* Writes quoted (a key already quoted and followed by its colon) as the next key. */
static inline void hf_json_key_quoted(hf_json_t *json, const char *quoted, size_t length) {
    hf_json_separator_write(json);
    hf_buffer_append(json->out, quoted, length);
    json->after_key = true;
}
/* How many bytes at the start of text a JSON string holds as they are: printable ASCII (and
 * DEL) other than the quote and the backslash. Eight bytes at a time. */
size_t hf_json_plain_length(const char *text, size_t length);

void hf_json_string(hf_json_t *json, const char *text);
void hf_json_string_length(hf_json_t *json, const char *text, size_t length);
void hf_json_int(hf_json_t *json, int64_t value);
void hf_json_bool(hf_json_t *json, bool value);
void hf_json_null(hf_json_t *json);
/* A duration in milliseconds written as seconds: 600000 -> 600, 1500 -> 1.5. */
void hf_json_seconds(hf_json_t *json, int64_t milliseconds);
/* A time in ms since the Unix epoch as RFC 3339 UTC with milliseconds. */
void hf_json_time(hf_json_t *json, int64_t unix_ms);
/* A finite number as printf's "%.15g" writes it (no NaN or infinity: JSON has none). A value
 * of at most six decimals (a coordinate, a rating) is written without printf. */
void hf_json_decimal(hf_json_t *json, double value);
/* The text hf_json_decimal writes, into out (at least HF_DECIMAL_SIZE bytes, NUL-terminated);
 * returns its length. */
#define HF_DECIMAL_SIZE 32
size_t hf_format_decimal(double value, char out[HF_DECIMAL_SIZE]);
/* Raw, already valid JSON. */
void hf_json_raw(hf_json_t *json, const char *text, size_t length);

/* RFC 3339 UTC with milliseconds into out (at least 25 bytes). Years 0000 to 9999 only: times
 * outside that range are clamped to its ends. */
void hf_format_time(int64_t unix_ms, char out[32]);
/* An RFC 3339 date-time ("2026-11-21T20:00:00Z", a fraction of any length, "Z" or an offset
 * "+01:00") into ms since the Unix epoch (a fraction beyond milliseconds is cut off), years
 * 1970 to 9999; false for anything else (a leap second included: no clock here keeps one).
 * text is NUL-terminated. */
bool hf_parse_time(const char *text, int64_t *unix_ms);

/* Bytes of an HTTP date and its NUL: "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate). */
#define HF_HTTP_DATE_SIZE 30
/* The second of unix_ms as an HTTP date (RFC 9110 section 5.6.7, the Date header's form),
 * NUL-terminated; the same range and clamping as hf_format_time. */
void hf_format_http_date(int64_t unix_ms, char out[HF_HTTP_DATE_SIZE]);

#endif
