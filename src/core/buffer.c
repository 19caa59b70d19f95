/* Growable buffer and JSON writer (see buffer.h). */
#include "core/buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hf_buffer_init(hf_buffer_t *buffer) { memset(buffer, 0, sizeof *buffer); }

void hf_buffer_free(hf_buffer_t *buffer) {
    free(buffer->data);
    memset(buffer, 0, sizeof *buffer);
}

void hf_buffer_reset(hf_buffer_t *buffer) {
    buffer->length = 0;
    if (buffer->data) buffer->data[0] = '\0';
}

void hf_buffer_reserve(hf_buffer_t *buffer, size_t extra) {
    size_t needed = buffer->length + extra + 1; /* room for the terminating NUL */
    if (needed <= buffer->capacity) return;
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity < needed) capacity *= 2;
    char *data = realloc(buffer->data, capacity);
    if (!data) abort(); /* see buffer.h: out of memory is not recoverable here */
    buffer->data = data;
    buffer->capacity = capacity;
}

void hf_buffer_append(hf_buffer_t *buffer, const void *data, size_t length) {
    hf_buffer_reserve(buffer, length);
    if (length) memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    buffer->data[buffer->length] = '\0';
}

void hf_buffer_append_string(hf_buffer_t *buffer, const char *text) {
    hf_buffer_append(buffer, text, strlen(text));
}

void hf_buffer_append_char(hf_buffer_t *buffer, char c) { hf_buffer_append(buffer, &c, 1); }

void hf_buffer_printf(hf_buffer_t *buffer, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    va_list copy;
    va_copy(copy, arguments);
    int length = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (length > 0) {
        hf_buffer_reserve(buffer, (size_t)length);
        vsnprintf(buffer->data + buffer->length, (size_t)length + 1, format, arguments);
        buffer->length += (size_t)length;
    }
    va_end(arguments);
}

/* ---- JSON writer ---- */

void hf_json_init(hf_json_t *json, hf_buffer_t *out) {
    memset(json, 0, sizeof *json);
    json->out = out;
}

/* Writes the comma that separates this value from the previous one, unless it follows a key. */
static void value_prefix(hf_json_t *json) {
    if (json->after_key) {
        json->after_key = false;
        return;
    }
    if (json->depth > 0) {
        if (json->need_comma[json->depth - 1]) hf_buffer_append_char(json->out, ',');
        json->need_comma[json->depth - 1] = true;
    }
}

static void open_container(hf_json_t *json, char c) {
    value_prefix(json);
    hf_buffer_append_char(json->out, c);
    if (json->depth >= HF_JSON_NESTING_MAX) abort(); /* programmer error: fixed shapes only */
    json->need_comma[json->depth++] = false;
}

static void close_container(hf_json_t *json, char c) {
    json->depth--;
    hf_buffer_append_char(json->out, c);
}

void hf_json_object_begin(hf_json_t *json) { open_container(json, '{'); }
void hf_json_object_end(hf_json_t *json) { close_container(json, '}'); }
void hf_json_array_begin(hf_json_t *json) { open_container(json, '['); }
void hf_json_array_end(hf_json_t *json) { close_container(json, ']'); }

/* Length of the valid UTF-8 sequence at text (1 to 4), or 0 when it is not valid: overlong
 * forms, surrogates and code points above U+10FFFF are invalid too. */
static size_t utf8_sequence(const unsigned char *text, size_t available) {
    unsigned char c = text[0];
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || c >= 0xf5 || c == 0xc0 || c == 0xc1 || length > available) return 0;
    for (size_t i = 1; i < length; i++)
        if ((text[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && text[1] < 0xa0) return 0; /* overlong */
    if (c == 0xed && text[1] >= 0xa0) return 0; /* surrogate */
    if (c == 0xf0 && text[1] < 0x90) return 0; /* overlong */
    if (c == 0xf4 && text[1] >= 0x90) return 0; /* above U+10FFFF */
    return length;
}

/* Escapes text as a JSON string. Bytes that are not valid UTF-8 (an error message quoting a
 * client's broken input, say) become U+FFFD, so no answer is ever invalid JSON text. */
static void write_escaped(hf_buffer_t *out, const char *text, size_t length) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *bytes = (const unsigned char *)text;
    hf_buffer_reserve(out, length + 2);
    hf_buffer_append_char(out, '"');
    size_t start = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = bytes[i];
        if (c >= 0x80) {
            size_t sequence = utf8_sequence(bytes + i, length - i);
            if (sequence > 0) {
                i += sequence - 1;
                continue;
            }
            hf_buffer_append(out, text + start, i - start);
            hf_buffer_append(out, "\\ufffd", 6);
            start = i + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        hf_buffer_append(out, text + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': hf_buffer_append(out, "\\\"", 2); break;
        case '\\': hf_buffer_append(out, "\\\\", 2); break;
        case '\n': hf_buffer_append(out, "\\n", 2); break;
        case '\r': hf_buffer_append(out, "\\r", 2); break;
        case '\t': hf_buffer_append(out, "\\t", 2); break;
        default: {
            char escape[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            hf_buffer_append(out, escape, 6);
        }
        }
    }
    hf_buffer_append(out, text + start, length - start);
    hf_buffer_append_char(out, '"');
}

void hf_json_key(hf_json_t *json, const char *key) {
    value_prefix(json);
    write_escaped(json->out, key, strlen(key));
    hf_buffer_append_char(json->out, ':');
    json->after_key = true;
}

void hf_json_string_length(hf_json_t *json, const char *text, size_t length) {
    value_prefix(json);
    write_escaped(json->out, text, length);
}

void hf_json_string(hf_json_t *json, const char *text) {
    hf_json_string_length(json, text, strlen(text));
}

void hf_json_int(hf_json_t *json, int64_t value) {
    value_prefix(json);
    char digits[24];
    int length = snprintf(digits, sizeof digits, "%lld", (long long)value);
    hf_buffer_append(json->out, digits, (size_t)length);
}

void hf_json_bool(hf_json_t *json, bool value) {
    value_prefix(json);
    hf_buffer_append_string(json->out, value ? "true" : "false");
}

void hf_json_null(hf_json_t *json) {
    value_prefix(json);
    hf_buffer_append(json->out, "null", 4);
}

void hf_json_seconds(hf_json_t *json, int64_t milliseconds) {
    value_prefix(json);
    if (milliseconds % 1000 == 0) {
        hf_buffer_printf(json->out, "%lld", (long long)(milliseconds / 1000));
        return;
    }
    /* Three decimals, trailing zeros removed: 1500 -> 1.5. */
    char text[32];
    snprintf(text, sizeof text, "%lld.%03lld", (long long)(milliseconds / 1000),
             (long long)(llabs(milliseconds % 1000)));
    size_t length = strlen(text);
    while (text[length - 1] == '0') length--;
    hf_buffer_append(json->out, text, length);
}

void hf_format_time(int64_t unix_ms, char out[32]) {
    time_t seconds = (time_t)(unix_ms / 1000);
    int64_t milliseconds = unix_ms % 1000;
    if (milliseconds < 0) {
        milliseconds += 1000;
        seconds -= 1;
    }
    struct tm parts;
    gmtime_r(&seconds, &parts);
    /* Formatted wide first: the compiler cannot know tm fields stay in their ranges. */
    char wide[96];
    snprintf(wide, sizeof wide, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
             parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
             (int)milliseconds);
    snprintf(out, 32, "%.31s", wide);
}

void hf_json_time(hf_json_t *json, int64_t unix_ms) {
    char text[32];
    hf_format_time(unix_ms, text);
    hf_json_string(json, text);
}

void hf_json_raw(hf_json_t *json, const char *text, size_t length) {
    value_prefix(json);
    hf_buffer_append(json->out, text, length);
}
