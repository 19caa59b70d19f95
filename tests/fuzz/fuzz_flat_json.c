/* libFuzzer target: the flat JSON reader (src/net/flat_json.h) against jansson, the parser of
 * record. For any input: when the flat reader reads it, jansson (strict, as the server calls
 * it) must read it too, as an object with the same members, kinds and values. The reader may
 * decline anything; it may never read what jansson refuses, or read it differently. Any
 * breach aborts. Seeds: tests/fuzz/corpus/flat_json/. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/flat_json.h"

static hf_flat_json_t flat;

static void fail(const char *what, const char *name) {
    fprintf(stderr, "fuzz_flat_json: %s (member \"%s\")\n", what, name ? name : "");
    abort();
}

static bool same_strings(const hf_flat_json_member_t *member, json_t *value) {
    if (!json_is_array(value) || json_array_size(value) != member->length) return false;
    for (uint32_t i = 0; i < member->length; i++) {
        json_t *item = json_array_get(value, i);
        size_t length = flat.item_lengths[member->first_item + i];
        if (!json_is_string(item) || json_string_length(item) != length ||
            memcmp(json_string_value(item), flat.items[member->first_item + i], length + 1) != 0)
            return false;
    }
    return true;
}

static bool same_member(const hf_flat_json_member_t *member, json_t *value);

/* Each object of the array as jansson read it: the same members, each the same value. */
static bool same_objects(const hf_flat_json_member_t *member, json_t *value) {
    if (!json_is_array(value) || json_array_size(value) != member->length) return false;
    for (uint32_t i = 0; i < member->length; i++) {
        json_t *item = json_array_get(value, i);
        const hf_flat_json_object_t *object = &flat.objects[member->first_item + i];
        if (!json_is_object(item) || json_object_size(item) != object->member_count) return false;
        for (uint32_t m = 0; m < object->member_count; m++) {
            const hf_flat_json_member_t *inner = &flat.object_members[object->first_member + m];
            json_t *inner_value = json_object_get(item, inner->name);
            if (!inner_value || !same_member(inner, inner_value) ||
                hf_flat_json_object_member(&flat, member->first_item + i, inner->name) != inner)
                return false;
        }
    }
    return true;
}

static bool same_member(const hf_flat_json_member_t *member, json_t *value) {
    switch (member->kind) {
    case HF_FLAT_JSON_NULL: return json_is_null(value);
    case HF_FLAT_JSON_FALSE: return json_is_false(value);
    case HF_FLAT_JSON_TRUE: return json_is_true(value);
    case HF_FLAT_JSON_INTEGER:
        return json_is_integer(value) && json_integer_value(value) == member->integer &&
               json_number_value(value) == member->real;
    case HF_FLAT_JSON_REAL: {
        /* The same value and the same sign: -0.0 equals 0.0 but is another reading. JSON has
         * no NaN. */
        double real = json_is_real(value) ? json_real_value(value) : 0;
        return json_is_real(value) && real == member->real &&
               signbit(real) == signbit(member->real);
    }
    case HF_FLAT_JSON_STRING:
        return json_is_string(value) && json_string_length(value) == member->length &&
               memcmp(json_string_value(value), member->string, member->length + 1) == 0;
    case HF_FLAT_JSON_STRINGS: return same_strings(member, value);
    case HF_FLAT_JSON_OBJECTS: return same_objects(member, value);
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!hf_flat_json_read(&flat, (const char *)data, size)) return 0;
    json_error_t error;
    json_t *parsed = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                                &error);
    if (!parsed) fail(error.text, NULL);
    if (!json_is_object(parsed)) fail("jansson read no object", NULL);
    if (json_object_size(parsed) != flat.member_count) fail("member counts differ", NULL);
    for (uint32_t i = 0; i < flat.member_count; i++) {
        const hf_flat_json_member_t *member = &flat.members[i];
        json_t *value = json_object_get(parsed, member->name);
        if (!value) fail("jansson lacks the member", member->name);
        if (!same_member(member, value)) fail("values differ", member->name);
        if (hf_flat_json_member(&flat, member->name) != member)
            fail("lookup differs", member->name);
    }
    json_decref(parsed);
    return 0;
}
