/* The flat JSON reader (flat_json.h): a plain subset of JSON read in one pass, declining
 * everything else to jansson. */
#include "net/flat_json.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

typedef struct reader {
    const char *at;
    const char *end;
    hf_flat_json_t *flat;
    size_t text_used;
} reader_t;

static bool at_end(const reader_t *reader) { return reader->at >= reader->end; }

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* JSON's whitespace: space, tab, line feed and carriage return, nothing else. */
static void skip_space(reader_t *reader) {
    while (!at_end(reader) && (*reader->at == ' ' || *reader->at == '\n' || *reader->at == '\r' ||
                               *reader->at == '\t'))
        reader->at++;
}

/* Consumes c, after whitespace; false when the next byte is another. */
static bool expect(reader_t *reader, char c) {
    skip_space(reader);
    if (at_end(reader) || *reader->at != c) return false;
    reader->at++;
    return true;
}

/* A string of printable ASCII without escapes, copied into the text with a NUL. Escapes,
 * control bytes and anything outside ASCII (which jansson checks as UTF-8) decline. */
static bool read_string(reader_t *reader, const char **out, size_t *length) {
    skip_space(reader);
    if (at_end(reader) || *reader->at != '"') return false;
    const char *start = ++reader->at;
    /* The run ends at the closing quote, or at a byte that needs care: then it declines. */
    size_t size = hf_json_plain_length(start, (size_t)(reader->end - start));
    reader->at = start + size;
    if (at_end(reader) || *reader->at != '"') return false;
    reader->at++;
    /* Each string came with two quotes and leaves one NUL, and the body is at most the size
     * of the text: it always fits. */
    assert(reader->text_used + size + 1 <= sizeof reader->flat->text);
    char *copy = reader->flat->text + reader->text_used;
    memcpy(copy, start, size);
    copy[size] = '\0';
    reader->text_used += size + 1;
    *out = copy;
    *length = size;
    return true;
}

/* An integer of at most HF_FLAT_JSON_INTEGER_DIGITS_MAX digits, or a number with a fraction
 * of at most HF_FLAT_JSON_REAL_SIZE_MAX characters; no exponent. Neither can overflow, so
 * jansson would read the same value without an error. */
static bool read_number(reader_t *reader, hf_flat_json_member_t *member) {
    const char *start = reader->at;
    bool negative = !at_end(reader) && *reader->at == '-';
    if (negative) reader->at++;
    const char *digits = reader->at;
    if (at_end(reader) || !is_digit(*reader->at)) return false;
    if (*reader->at == '0') reader->at++;
    else
        while (!at_end(reader) && is_digit(*reader->at)) reader->at++;
    size_t digit_count = (size_t)(reader->at - digits);
    bool fraction = !at_end(reader) && *reader->at == '.';
    if (fraction) {
        reader->at++;
        if (at_end(reader) || !is_digit(*reader->at)) return false;
        while (!at_end(reader) && is_digit(*reader->at)) reader->at++;
    }
    if (!at_end(reader) && (*reader->at == 'e' || *reader->at == 'E')) return false;
    if (!fraction) {
        if (digit_count > HF_FLAT_JSON_INTEGER_DIGITS_MAX) return false;
        int64_t value = 0;
        for (size_t i = 0; i < digit_count; i++) value = value * 10 + (digits[i] - '0');
        member->kind = HF_FLAT_JSON_INTEGER;
        member->integer = negative ? -value : value;
        member->real = (double)member->integer;
        return true;
    }
    size_t size = (size_t)(reader->at - start);
    if (size > HF_FLAT_JSON_REAL_SIZE_MAX) return false;
    /* strtod as jansson does; the server never changes the C locale's decimal point. */
    char copy[HF_FLAT_JSON_REAL_SIZE_MAX + 1];
    memcpy(copy, start, size);
    copy[size] = '\0';
    member->kind = HF_FLAT_JSON_REAL;
    member->real = strtod(copy, NULL);
    return true;
}

static bool read_word(reader_t *reader, const char *word, size_t size) {
    if ((size_t)(reader->end - reader->at) < size || memcmp(reader->at, word, size) != 0)
        return false;
    reader->at += size;
    return true;
}

/* [ "a", "b" ], after its '[' and its first item's whitespace: strings only; anything else in
 * it declines. */
static bool read_strings(reader_t *reader, hf_flat_json_member_t *member) {
    hf_flat_json_t *flat = reader->flat;
    member->kind = HF_FLAT_JSON_STRINGS;
    member->first_item = flat->item_count;
    member->length = 0;
    for (;;) {
        if (flat->item_count == HF_FLAT_JSON_ITEMS_MAX) return false;
        uint32_t item = flat->item_count;
        if (!read_string(reader, &flat->items[item], &flat->item_lengths[item])) return false;
        flat->item_count++;
        member->length++;
        skip_space(reader);
        if (at_end(reader)) return false;
        char c = *reader->at++;
        if (c == ']') return true;
        if (c != ',') return false;
    }
}

/* A string, a number, true, false or null: anything else (an array, an object) declines. */
static bool read_scalar(reader_t *reader, hf_flat_json_member_t *member) {
    skip_space(reader);
    if (at_end(reader)) return false;
    switch (*reader->at) {
    case '"':
        member->kind = HF_FLAT_JSON_STRING;
        return read_string(reader, &member->string, &member->length);
    case 't': member->kind = HF_FLAT_JSON_TRUE; return read_word(reader, "true", 4);
    case 'f': member->kind = HF_FLAT_JSON_FALSE; return read_word(reader, "false", 5);
    case 'n': member->kind = HF_FLAT_JSON_NULL; return read_word(reader, "null", 4);
    default: return read_number(reader, member);
    }
}

/* Names of one object mostly differ in their first byte: that is tested before a call. */
static bool same_name(const char *a, const char *b) { return a[0] == b[0] && strcmp(a, b) == 0; }

static bool name_among(const hf_flat_json_member_t *members, uint32_t count, const char *name) {
    for (uint32_t i = 0; i < count; i++)
        if (same_name(members[i].name, name)) return true;
    return false;
}

/* One member of an object in an array: a name not seen in that object, then a scalar. */
static bool read_object_member(reader_t *reader, hf_flat_json_object_t *object) {
    hf_flat_json_t *flat = reader->flat;
    if (flat->object_member_count == HF_FLAT_JSON_OBJECT_MEMBERS_MAX) return false;
    hf_flat_json_member_t *member = &flat->object_members[flat->object_member_count];
    size_t name_length;
    if (!read_string(reader, &member->name, &name_length) ||
        name_among(&flat->object_members[object->first_member], object->member_count,
                   member->name) ||
        !expect(reader, ':') || !read_scalar(reader, member))
        return false;
    flat->object_member_count++;
    object->member_count++;
    return true;
}

/* { "name": scalar, ... } as an item of an array. */
static bool read_object(reader_t *reader) {
    hf_flat_json_t *flat = reader->flat;
    if (flat->object_count == HF_FLAT_JSON_OBJECTS_MAX || !expect(reader, '{')) return false;
    hf_flat_json_object_t *object = &flat->objects[flat->object_count++];
    object->first_member = flat->object_member_count;
    object->member_count = 0;
    skip_space(reader);
    if (!at_end(reader) && *reader->at == '}') {
        reader->at++;
        return true;
    }
    for (;;) {
        if (!read_object_member(reader, object)) return false;
        skip_space(reader);
        if (at_end(reader)) return false;
        char c = *reader->at++;
        if (c == '}') return true;
        if (c != ',') return false;
    }
}

/* [ {...}, {...} ], at its first '{': objects only; anything else in it declines. */
static bool read_objects(reader_t *reader, hf_flat_json_member_t *member) {
    member->kind = HF_FLAT_JSON_OBJECTS;
    member->first_item = reader->flat->object_count;
    member->length = 0;
    for (;;) {
        if (!read_object(reader)) return false;
        member->length++;
        skip_space(reader);
        if (at_end(reader)) return false;
        char c = *reader->at++;
        if (c == ']') return true;
        if (c != ',') return false;
    }
}

/* An array: empty, of strings, or of objects, told by its first item. */
static bool read_array(reader_t *reader, hf_flat_json_member_t *member) {
    reader->at++; /* the '[' */
    skip_space(reader);
    if (!at_end(reader) && *reader->at == ']') {
        reader->at++;
        member->kind = HF_FLAT_JSON_STRINGS;
        member->first_item = reader->flat->item_count;
        member->length = 0;
        return true;
    }
    if (!at_end(reader) && *reader->at == '{') return read_objects(reader, member);
    return read_strings(reader, member);
}

static bool read_value(reader_t *reader, hf_flat_json_member_t *member) {
    skip_space(reader);
    if (!at_end(reader) && *reader->at == '[') return read_array(reader, member);
    return read_scalar(reader, member);
}

static bool read_member(reader_t *reader) {
    hf_flat_json_t *flat = reader->flat;
    if (flat->member_count == HF_FLAT_JSON_MEMBERS_MAX) return false;
    hf_flat_json_member_t *member = &flat->members[flat->member_count];
    size_t name_length;
    /* A repeated name is an error for jansson (JSON_REJECT_DUPLICATES): it gives it. */
    if (!read_string(reader, &member->name, &name_length) ||
        name_among(flat->members, flat->member_count, member->name) || !expect(reader, ':') ||
        !read_value(reader, member))
        return false;
    flat->member_count++;
    return true;
}

bool hf_flat_json_read(hf_flat_json_t *flat, const char *body, size_t length) {
    if (length > HF_FLAT_JSON_SIZE_MAX) return false;
    reader_t reader = {.at = body, .end = body + length, .flat = flat};
    flat->member_count = 0;
    flat->item_count = 0;
    flat->object_count = 0;
    flat->object_member_count = 0;
    if (!expect(&reader, '{')) return false;
    skip_space(&reader);
    if (!at_end(&reader) && *reader.at == '}') {
        reader.at++;
    } else {
        for (;;) {
            if (!read_member(&reader)) return false;
            skip_space(&reader);
            if (at_end(&reader)) return false;
            char c = *reader.at++;
            if (c == '}') break;
            if (c != ',') return false;
        }
    }
    skip_space(&reader);
    return at_end(&reader);
}

const hf_flat_json_member_t *hf_flat_json_member(const hf_flat_json_t *flat, const char *name) {
    for (uint32_t i = 0; i < flat->member_count; i++)
        if (same_name(flat->members[i].name, name)) return &flat->members[i];
    return NULL;
}

const hf_flat_json_member_t *hf_flat_json_object_member(const hf_flat_json_t *flat, uint32_t object,
                                                        const char *name) {
    const hf_flat_json_object_t *read = &flat->objects[object];
    for (uint32_t i = 0; i < read->member_count; i++) {
        const hf_flat_json_member_t *member = &flat->object_members[read->first_member + i];
        if (same_name(member->name, name)) return member;
    }
    return NULL;
}
