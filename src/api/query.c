/* Query strings and path segments: percent-decoding and query parameters by name. */
#include "api/query.h"

#include <string.h>

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool hf_query_percent_decode(const char *text, size_t length, char *out, size_t out_size,
                             bool plus_is_space) {
    size_t written = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '%') {
            if (i + 2 >= length) return false;
            int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
            if (high < 0 || low < 0 || (high == 0 && low == 0)) return false;
            c = (char)(high * 16 + low);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (written + 1 >= out_size) return false;
        out[written++] = c;
    }
    out[written] = '\0';
    return true;
}

bool hf_query_get(const char *query, const char *name, char *out, size_t out_size) {
    size_t name_length = strlen(name);
    const char *cursor = query;
    while (cursor && *cursor) {
        const char *end = strchr(cursor, '&');
        size_t length = end ? (size_t)(end - cursor) : strlen(cursor);
        if (length > name_length && strncmp(cursor, name, name_length) == 0 &&
            cursor[name_length] == '=') {
            return hf_query_percent_decode(cursor + name_length + 1, length - name_length - 1, out,
                                           out_size, true);
        }
        if (length == name_length && strncmp(cursor, name, name_length) == 0) {
            out[0] = '\0';
            return true;
        }
        cursor = end ? end + 1 : NULL;
    }
    return false;
}

bool hf_query_has(const char *query, const char *name) {
    size_t name_length = strlen(name);
    const char *cursor = query;
    while (cursor && *cursor) {
        const char *end = strchr(cursor, '&');
        size_t length = end ? (size_t)(end - cursor) : strlen(cursor);
        if (length >= name_length && strncmp(cursor, name, name_length) == 0 &&
            (length == name_length || cursor[name_length] == '='))
            return true;
        cursor = end ? end + 1 : NULL;
    }
    return false;
}
