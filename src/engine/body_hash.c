/* The hash of a request body as a JSON value (body_hash.h).
 *
 * The canonical encoding is binary and length-prefixed, so no two values share one and no
 * escaping is needed: a kind byte, then for a string its length and decoded bytes, for a number
 * its value (an integer as 8 bytes, another number as the 8 bytes of its double), for an array
 * its count and items, for an object its count and its members sorted by name (bytewise), each
 * name as a string followed by its value. Lengths, counts and numbers are big-endian, so a hash
 * kept in the store compares the same on any machine. */
#include "engine/body_hash.h"

#include <math.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buffer.h"

/* The version of the encoding, hashed first: a later change of the encoding changes it. */
#define ENCODING_TAG "holdfast body value 1\n"

static void put_u64(hf_buffer_t *out, uint64_t value) {
    unsigned char bytes[8];
    for (int i = 7; i >= 0; i--) {
        bytes[i] = (unsigned char)(value & 0xff);
        value >>= 8;
    }
    hf_buffer_append(out, bytes, sizeof bytes);
}

static void put_integer(hf_buffer_t *out, int64_t value) {
    hf_buffer_append_char(out, 'i');
    put_u64(out, (uint64_t)value);
}

/* An integral number within int64_t's range is the integer of that value, so 1.0, 1e0 and
 * 10E-1 encode as 1 does (and -0.0 as 0); any other keeps its double, which strtod made the
 * same for every spelling of it. JSON has no NaN nor infinity. */
static void put_number(hf_buffer_t *out, double value) {
    if (value == trunc(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0) {
        put_integer(out, (int64_t)value);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    hf_buffer_append_char(out, 'r');
    put_u64(out, bits);
}

static void put_string(hf_buffer_t *out, const char *text, size_t length) {
    hf_buffer_append_char(out, 's');
    put_u64(out, length);
    hf_buffer_append(out, text, length);
}

static void put_count(hf_buffer_t *out, char kind, size_t count) {
    hf_buffer_append_char(out, kind);
    put_u64(out, count);
}

/* ---- jansson's DOM ---- */

typedef struct named {
    const char *name;
    json_t *value;
} named_t;

/* jansson refuses a NUL in a member name, so names compare as C strings. */
static int named_compare(const void *a, const void *b) {
    return strcmp(((const named_t *)a)->name, ((const named_t *)b)->name);
}

static void put_json(hf_buffer_t *out, json_t *value);

static void put_object(hf_buffer_t *out, json_t *object) {
    size_t count = json_object_size(object), at = 0;
    named_t *members = malloc((count ? count : 1) * sizeof *members);
    if (!members) abort();
    const char *name;
    json_t *value;
    json_object_foreach(object, name, value) members[at++] = (named_t){name, value};
    qsort(members, count, sizeof *members, named_compare);
    put_count(out, 'o', count);
    for (size_t i = 0; i < count; i++) {
        put_string(out, members[i].name, strlen(members[i].name));
        put_json(out, members[i].value);
    }
    free(members);
}

/* Recursion is bounded by the body's depth, which decode.c limits to HF_JSON_DEPTH_MAX. */
static void put_json(hf_buffer_t *out, json_t *value) {
    switch (json_typeof(value)) {
    case JSON_OBJECT: put_object(out, value); break;
    case JSON_ARRAY:
        put_count(out, 'a', json_array_size(value));
        for (size_t i = 0; i < json_array_size(value); i++) put_json(out, json_array_get(value, i));
        break;
    case JSON_STRING: put_string(out, json_string_value(value), json_string_length(value)); break;
    case JSON_INTEGER: put_integer(out, json_integer_value(value)); break;
    case JSON_REAL: put_number(out, json_real_value(value)); break;
    case JSON_TRUE: hf_buffer_append_char(out, 't'); break;
    case JSON_FALSE: hf_buffer_append_char(out, 'f'); break;
    case JSON_NULL: hf_buffer_append_char(out, 'n'); break;
    }
}

/* ---- the flat reader's members: the values jansson would read from the same bytes ---- */

static void put_flat_members(hf_buffer_t *out, const hf_flat_json_t *flat,
                             const hf_flat_json_member_t *members, uint32_t count);

/* Recursion is bounded: an object in an array has only scalar members. */
static void put_flat_value(hf_buffer_t *out, const hf_flat_json_t *flat,
                           const hf_flat_json_member_t *member) {
    switch (member->kind) {
    case HF_FLAT_JSON_NULL: hf_buffer_append_char(out, 'n'); break;
    case HF_FLAT_JSON_FALSE: hf_buffer_append_char(out, 'f'); break;
    case HF_FLAT_JSON_TRUE: hf_buffer_append_char(out, 't'); break;
    case HF_FLAT_JSON_INTEGER: put_integer(out, member->integer); break;
    case HF_FLAT_JSON_REAL: put_number(out, member->real); break;
    case HF_FLAT_JSON_STRING: put_string(out, member->string, member->length); break;
    case HF_FLAT_JSON_STRINGS:
        put_count(out, 'a', member->length);
        for (size_t i = 0; i < member->length; i++)
            put_string(out, flat->items[member->first_item + i],
                       flat->item_lengths[member->first_item + i]);
        break;
    case HF_FLAT_JSON_OBJECTS:
        put_count(out, 'a', member->length);
        for (size_t i = 0; i < member->length; i++) {
            const hf_flat_json_object_t *object = &flat->objects[member->first_item + i];
            put_flat_members(out, flat, &flat->object_members[object->first_member],
                             object->member_count);
        }
        break;
    }
}

/* An object's members, sorted by name (by insertion: there are few). Either the body's
 * (at most HF_FLAT_JSON_MEMBERS_MAX) or an object's in an array (fewer than
 * HF_FLAT_JSON_OBJECT_MEMBERS_MAX in all). */
static void put_flat_members(hf_buffer_t *out, const hf_flat_json_t *flat,
                             const hf_flat_json_member_t *members, uint32_t count) {
    const hf_flat_json_member_t *sorted[HF_FLAT_JSON_MEMBERS_MAX > HF_FLAT_JSON_OBJECT_MEMBERS_MAX
                                            ? HF_FLAT_JSON_MEMBERS_MAX
                                            : HF_FLAT_JSON_OBJECT_MEMBERS_MAX];
    for (uint32_t i = 0; i < count; i++) {
        const hf_flat_json_member_t *member = &members[i];
        uint32_t j = i;
        for (; j > 0 && strcmp(sorted[j - 1]->name, member->name) > 0; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = member;
    }
    put_count(out, 'o', count);
    for (uint32_t i = 0; i < count; i++) {
        put_string(out, sorted[i]->name, strlen(sorted[i]->name));
        put_flat_value(out, flat, sorted[i]);
    }
}

void hf_body_hash(const hf_flat_json_t *flat, json_t *json, uint8_t hash[HF_BODY_HASH_SIZE]) {
    hf_buffer_t out;
    hf_buffer_init(&out);
    hf_buffer_append(&out, ENCODING_TAG, sizeof ENCODING_TAG - 1);
    if (flat) put_flat_members(&out, flat, flat->members, flat->member_count);
    else if (json) put_json(&out, json);
    else put_count(&out, 'o', 0);
    SHA256((const unsigned char *)out.data, out.length, hash);
    hf_buffer_free(&out);
}
