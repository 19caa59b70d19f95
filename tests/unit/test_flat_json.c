/* Unit tests of the flat JSON reader (src/net/flat_json.h): what it reads, what it declines,
 * and, over random bodies near the hot routes' shape, that whatever it reads jansson reads
 * the same (same members, kinds and values), so it can never let through a body the server
 * would refuse or read one differently. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/flat_json.h"

static hf_flat_json_t flat; /* large: off the stack */

static bool read_text(const char *text) { return hf_flat_json_read(&flat, text, strlen(text)); }

static void test_reads_a_hold(void **state) {
    (void)state;
    assert_true(read_text("{\"user_id\":\"u12\",\"seats\":[\"FLOOR-A-1\",\"FLOOR-A-2\"],"
                          "\"ttl_s\":300,\"replace_existing\":true}"));
    assert_int_equal(flat.member_count, 4);
    const hf_flat_json_member_t *user = hf_flat_json_member(&flat, "user_id");
    assert_non_null(user);
    assert_int_equal(user->kind, HF_FLAT_JSON_STRING);
    assert_string_equal(user->string, "u12");
    assert_int_equal(user->length, 3);
    const hf_flat_json_member_t *seats = hf_flat_json_member(&flat, "seats");
    assert_int_equal(seats->kind, HF_FLAT_JSON_STRINGS);
    assert_int_equal(seats->length, 2);
    assert_string_equal(flat.items[seats->first_item], "FLOOR-A-1");
    assert_string_equal(flat.items[seats->first_item + 1], "FLOOR-A-2");
    assert_int_equal(flat.item_lengths[seats->first_item + 1], 9);
    const hf_flat_json_member_t *ttl = hf_flat_json_member(&flat, "ttl_s");
    assert_int_equal(ttl->kind, HF_FLAT_JSON_INTEGER);
    assert_int_equal(ttl->integer, 300);
    assert_true(ttl->real == 300.0);
    assert_int_equal(hf_flat_json_member(&flat, "replace_existing")->kind, HF_FLAT_JSON_TRUE);
    assert_null(hf_flat_json_member(&flat, "pools"));
    assert_null(hf_flat_json_member(&flat, "user"));
}

static void test_reads_every_kind(void **state) {
    (void)state;
    assert_true(read_text(" \t\r\n{ \"a\" : null , \"b\":false,\"c\" :-0.25,\"d\":[ ],"
                          "\"\":\"\", \"e\":-42 ,\"f\":[\"x\" ,\"\"]}\n "));
    assert_int_equal(flat.member_count, 7);
    assert_int_equal(hf_flat_json_member(&flat, "a")->kind, HF_FLAT_JSON_NULL);
    assert_int_equal(hf_flat_json_member(&flat, "b")->kind, HF_FLAT_JSON_FALSE);
    const hf_flat_json_member_t *real = hf_flat_json_member(&flat, "c");
    assert_int_equal(real->kind, HF_FLAT_JSON_REAL);
    assert_true(real->real == -0.25);
    assert_int_equal(hf_flat_json_member(&flat, "d")->kind, HF_FLAT_JSON_STRINGS);
    assert_int_equal(hf_flat_json_member(&flat, "d")->length, 0);
    assert_int_equal(hf_flat_json_member(&flat, "")->kind, HF_FLAT_JSON_STRING);
    assert_int_equal(hf_flat_json_member(&flat, "")->length, 0);
    assert_int_equal(hf_flat_json_member(&flat, "e")->integer, -42);
    assert_int_equal(hf_flat_json_member(&flat, "f")->length, 2);
    assert_true(read_text("{}"));
    assert_int_equal(flat.member_count, 0);
}

static void test_reads_a_calendar_hold(void **state) {
    (void)state;
    assert_true(read_text("{\"user_id\":\"u7\",\"items\":[{\"resource\":\"r00042\","
                          "\"from\":\"2027-01-02\",\"to\":\"2027-01-05\"}, { \"resource\" : \"r2\","
                          "\"quantity\":3,\"x\":null},{}],\"ttl_s\":1}"));
    assert_int_equal(flat.member_count, 3);
    const hf_flat_json_member_t *items = hf_flat_json_member(&flat, "items");
    assert_int_equal(items->kind, HF_FLAT_JSON_OBJECTS);
    assert_int_equal(items->length, 3);
    uint32_t first = items->first_item;
    assert_int_equal(flat.objects[first].member_count, 3);
    assert_string_equal(hf_flat_json_object_member(&flat, first, "resource")->string, "r00042");
    assert_string_equal(hf_flat_json_object_member(&flat, first, "to")->string, "2027-01-05");
    assert_null(hf_flat_json_object_member(&flat, first, "quantity"));
    assert_int_equal(hf_flat_json_object_member(&flat, first + 1, "quantity")->integer, 3);
    assert_int_equal(hf_flat_json_object_member(&flat, first + 1, "x")->kind, HF_FLAT_JSON_NULL);
    assert_null(hf_flat_json_object_member(&flat, first + 1, "from"));
    assert_int_equal(flat.objects[first + 2].member_count, 0);
    assert_int_equal(hf_flat_json_member(&flat, "ttl_s")->integer, 1);
}

static void test_declines_what_it_does_not_read(void **state) {
    (void)state;
    static const char *const declined[] = {
        "", /* empty: the dispatcher reads it as {} */
        "[]",
        "\"a\"",
        "1",
        "null",            /* not an object */
        "{\"a\":\"\\n\"}", /* escapes */
        "{\"\\u0061\":1}",
        "{\"a\":\"caf\xc3\xa9\"}", /* outside ASCII: jansson checks UTF-8 */
        "{\"a\":\"\x01\"}",        /* a control byte */
        "{\"a\":{\"b\":1}}",       /* nested object */
        "{\"a\":[1]}",
        "{\"a\":[[\"b\"]]}", /* arrays of anything but strings or objects */
        "{\"a\":[{\"b\":1},\"c\"]}",
        "{\"a\":[\"c\",{\"b\":1}]}", /* mixed arrays */
        "{\"a\":[{\"b\":[\"c\"]}]}",
        "{\"a\":[{\"b\":{}}]}",        /* objects in arrays with other than scalars */
        "{\"a\":[{\"b\":1,\"b\":2}]}", /* a repeated name in an item */
        "{\"a\":[{\"b\":1,}]}",
        "{\"a\":[{\"b\":1},]}",
        "{\"a\":[{\"b\"}]}",
        "{\"a\":1e3}",
        "{\"a\":1.5E-2}",    /* exponents */
        "{\"a\":1,\"a\":2}", /* a repeated name: jansson's error */
        "{\"a\":1} x",
        "{\"a\":1}}", /* trailing bytes */
        "{\"a\":1,}",
        "{,}",
        "{\"a\":[\"b\",]}", /* trailing commas */
        "{\"a\":01}",
        "{\"a\":-}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":+1}",
        "{\"a\":1234567890123456789}",       /* 19 digits: jansson judges overflow */
        "{\"a\":0.12345678901234567890123}", /* a long fraction */
        "{\"a\":tru}",
        "{\"a\":nul}",
        "{\"a\":True}",
        "{\"a\" 1}",
        "{\"a\":}",
        "{\"a\"",
        "{\"a\":\"b",
        "{",
        "{\"a\":[\"b\"",
        "{a:1}",
        "{'a':1}",
        "{\"a\":1}\x00", /* a NUL after the object */
    };
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++) {
        size_t length = strlen(declined[i]);
        if (strcmp(declined[i], "{\"a\":1}\x00") == 0) length = 8;
        if (hf_flat_json_read(&flat, declined[i], length)) fail_msg("read: %s", declined[i]);
    }
}

static void test_declines_past_its_limits(void **state) {
    (void)state;
    char body[HF_FLAT_JSON_SIZE_MAX + 64];
    /* HF_FLAT_JSON_MEMBERS_MAX members are read, one more is not. */
    size_t length = (size_t)sprintf(body, "{");
    for (int i = 0; i < HF_FLAT_JSON_MEMBERS_MAX; i++)
        length += (size_t)sprintf(body + length, "%s\"m%d\":%d", i ? "," : "", i, i);
    sprintf(body + length, "}");
    assert_true(read_text(body));
    sprintf(body + length, ",\"last\":1}");
    assert_false(read_text(body));
    /* HF_FLAT_JSON_ITEMS_MAX items in all, over two arrays. */
    length = (size_t)sprintf(body, "{\"a\":[");
    for (int i = 0; i < HF_FLAT_JSON_ITEMS_MAX - 1; i++)
        length += (size_t)sprintf(body + length, "%s\"s%d\"", i ? "," : "", i);
    sprintf(body + length, "],\"b\":[\"x\"]}");
    assert_true(read_text(body));
    sprintf(body + length, "],\"b\":[\"x\",\"y\"]}");
    assert_false(read_text(body));
    /* HF_FLAT_JSON_OBJECTS_MAX objects in arrays, and HF_FLAT_JSON_OBJECT_MEMBERS_MAX
     * members in them, in all. */
    length = (size_t)sprintf(body, "{\"a\":[");
    for (int i = 0; i < HF_FLAT_JSON_OBJECTS_MAX; i++)
        length += (size_t)sprintf(body + length, "%s{}", i ? "," : "");
    sprintf(body + length, "]}");
    assert_true(read_text(body));
    sprintf(body + length, ",{}]}");
    assert_false(read_text(body));
    length = (size_t)sprintf(body, "{\"a\":[{");
    for (int i = 0; i < HF_FLAT_JSON_OBJECT_MEMBERS_MAX; i++)
        length += (size_t)sprintf(body + length, "%s\"m%d\":%d", i ? "," : "", i, i);
    sprintf(body + length, "}]}");
    assert_true(read_text(body));
    sprintf(body + length, ",\"last\":1}]}");
    assert_false(read_text(body));
    /* A body of HF_FLAT_JSON_SIZE_MAX bytes is read, one byte more is not. */
    memset(body, ' ', sizeof body);
    memcpy(body, "{\"a\":\"", 6);
    memset(body + 6, 'x', HF_FLAT_JSON_SIZE_MAX - 8);
    memcpy(body + HF_FLAT_JSON_SIZE_MAX - 2, "\"}", 2);
    assert_true(hf_flat_json_read(&flat, body, HF_FLAT_JSON_SIZE_MAX));
    assert_int_equal(hf_flat_json_member(&flat, "a")->length, HF_FLAT_JSON_SIZE_MAX - 8);
    assert_false(hf_flat_json_read(&flat, body, HF_FLAT_JSON_SIZE_MAX + 1));
    /* 18 digits are read as an integer; 19 go to jansson. */
    assert_true(read_text("{\"a\":-999999999999999999}"));
    assert_int_equal(hf_flat_json_member(&flat, "a")->integer, -999999999999999999ll);
    assert_false(read_text("{\"a\":-1000000000000000000}"));
}

/* ---- against jansson ---- */

static uint64_t random_state;

static uint32_t random_below(uint32_t bound) {
    random_state = random_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((random_state >> 33) % bound);
}

static const char *const NAMES[] = {"user_id",     "seats", "ttl_s", "pools",   "replace_existing",
                                    "payment_ref", "a",     "",      "user_id", "seats"};
static const char *const STRINGS[] = {"u1",  "FLOOR-A-10",  "",          "pi_123",  "x y",
                                      "\\n", "caf\xc3\xa9", "tab\there", "\\u0000", "quote\\\"d"};
static const char *const NUMBERS[] = {"0",
                                      "-0",
                                      "300",
                                      "-7",
                                      "0.5",
                                      "-0.001",
                                      "123456789012345678",
                                      "1234567890123456789",
                                      "1e2",
                                      "2.5E+1",
                                      "01",
                                      "1.",
                                      "99999999999999999999999999",
                                      "3.14159265358979323846"};
static const char *const SPACES[] = {"", "", "", " ", "\n", "\t ", "\r\n"};

static void append(char *body, size_t *length, size_t size, const char *text) {
    size_t text_length = strlen(text);
    if (*length + text_length >= size) return;
    memcpy(body + *length, text, text_length);
    *length += text_length;
}

static const char *const ITEM_NAMES[] = {"resource", "from", "to", "quantity", "", "to"};

/* [ {...}, ... ]: objects of scalar members (a calendar hold's items), now and then with a
 * string or a nested value among them. */
static void append_objects(char *body, size_t *length, size_t size) {
    char text[64];
    append(body, length, size, "[");
    uint32_t count = 1 + random_below(3);
    for (uint32_t i = 0; i < count; i++) {
        if (i) append(body, length, size, ",");
        append(body, length, size, SPACES[random_below(7)]);
        if (random_below(16) == 0) {
            append(body, length, size, "\"s\"");
            continue;
        }
        append(body, length, size, "{");
        uint32_t members = random_below(4);
        for (uint32_t m = 0; m < members; m++) {
            snprintf(text, sizeof text, "%s\"%s\":", m ? "," : "", ITEM_NAMES[random_below(6)]);
            append(body, length, size, text);
            uint32_t kind = random_below(12);
            if (kind < 5) snprintf(text, sizeof text, "\"%s\"", STRINGS[random_below(10)]);
            else if (kind < 10) snprintf(text, sizeof text, "%s", NUMBERS[random_below(14)]);
            else snprintf(text, sizeof text, "%s", kind == 10 ? "null" : "[\"x\"]");
            append(body, length, size, text);
        }
        append(body, length, size, "}");
    }
    append(body, length, size, "]");
}

static void append_value(char *body, size_t *length, size_t size) {
    char text[64];
    switch (random_below(9)) {
    case 0:
    case 1:
        snprintf(text, sizeof text, "\"%s\"", STRINGS[random_below(10)]);
        append(body, length, size, text);
        break;
    case 2:
    case 3: append(body, length, size, NUMBERS[random_below(14)]); break;
    case 4:
        append(body, length, size,
               random_below(3) == 0 ? "null"
               : random_below(2)    ? "true"
                                    : "false");
        break;
    case 5:
    case 6: {
        append(body, length, size, "[");
        uint32_t count = random_below(4);
        for (uint32_t i = 0; i < count; i++) {
            if (i) append(body, length, size, ",");
            append(body, length, size, SPACES[random_below(7)]);
            snprintf(text, sizeof text, "\"%s\"", STRINGS[random_below(10)]);
            append(body, length, size, random_below(12) == 0 ? "7" : text);
        }
        append(body, length, size, "]");
        break;
    }
    case 7: append_objects(body, length, size); break;
    default: append(body, length, size, random_below(2) ? "{\"count\":2}" : "{}"); break;
    }
}

/* A body in the hot routes' shape, then maybe damaged: a byte changed, cut short or doubled. */
static size_t make_body(char *body, size_t size) {
    size_t length = 0;
    append(body, &length, size, SPACES[random_below(7)]);
    append(body, &length, size, "{");
    uint32_t count = random_below(6);
    for (uint32_t i = 0; i < count; i++) {
        if (i) append(body, &length, size, ",");
        append(body, &length, size, SPACES[random_below(7)]);
        char name[32];
        snprintf(name, sizeof name, "\"%s\"", NAMES[random_below(10)]);
        append(body, &length, size, name);
        append(body, &length, size, SPACES[random_below(7)]);
        append(body, &length, size, ":");
        append(body, &length, size, SPACES[random_below(7)]);
        append_value(body, &length, size);
    }
    append(body, &length, size, "}");
    append(body, &length, size, SPACES[random_below(7)]);
    static const char noise[] = "{}[]\",:0-.eE \\ntfu\x01\x80";
    switch (random_below(6)) {
    case 0: body[random_below((uint32_t)length)] = noise[random_below(sizeof noise - 1)]; break;
    case 1: length = random_below((uint32_t)length + 1); break;
    case 2:
        if (length * 2 < size) {
            memcpy(body + length, body, length);
            length *= 2;
        }
        break;
    default: break;
    }
    return length;
}

static void check_member(const hf_flat_json_member_t *member, json_t *value, const char *body);

/* Each object of the array as jansson read it: the same count of members, each the same. */
static void check_objects(const hf_flat_json_member_t *member, json_t *value, const char *body) {
    assert_true(json_is_array(value));
    assert_int_equal(json_array_size(value), member->length);
    for (uint32_t i = 0; i < member->length; i++) {
        json_t *item = json_array_get(value, i);
        const hf_flat_json_object_t *object = &flat.objects[member->first_item + i];
        assert_true(json_is_object(item));
        assert_int_equal(json_object_size(item), object->member_count);
        for (uint32_t m = 0; m < object->member_count; m++) {
            const hf_flat_json_member_t *inner = &flat.object_members[object->first_member + m];
            check_member(inner, json_object_get(item, inner->name), body);
        }
    }
}

/* The member as jansson read it must be the member as the flat reader read it. */
static void check_member(const hf_flat_json_member_t *member, json_t *value, const char *body) {
    if (!value) fail_msg("jansson lacks \"%s\" in %s", member->name, body);
    switch (member->kind) {
    case HF_FLAT_JSON_NULL: assert_true(json_is_null(value)); break;
    case HF_FLAT_JSON_FALSE: assert_true(json_is_false(value)); break;
    case HF_FLAT_JSON_TRUE: assert_true(json_is_true(value)); break;
    case HF_FLAT_JSON_INTEGER:
        assert_true(json_is_integer(value));
        assert_true(json_integer_value(value) == member->integer);
        assert_true(json_number_value(value) == member->real);
        break;
    case HF_FLAT_JSON_REAL:
        assert_true(json_is_real(value));
        assert_true(json_real_value(value) == member->real);
        assert_true(signbit(json_real_value(value)) == signbit(member->real));
        break;
    case HF_FLAT_JSON_STRING:
        assert_true(json_is_string(value));
        assert_int_equal(json_string_length(value), member->length);
        assert_memory_equal(json_string_value(value), member->string, member->length + 1);
        break;
    case HF_FLAT_JSON_STRINGS:
        assert_true(json_is_array(value));
        assert_int_equal(json_array_size(value), member->length);
        for (uint32_t i = 0; i < member->length; i++) {
            json_t *item = json_array_get(value, i);
            assert_true(json_is_string(item));
            assert_string_equal(json_string_value(item), flat.items[member->first_item + i]);
            assert_int_equal(json_string_length(item), flat.item_lengths[member->first_item + i]);
        }
        break;
    case HF_FLAT_JSON_OBJECTS: check_objects(member, value, body); break;
    }
}

static void test_reads_as_jansson_reads(void **state) {
    (void)state;
    uint64_t seed = 0x5eed0f1a7ull;
    const char *given = getenv("HF_TEST_SEED");
    if (given) seed = strtoull(given, NULL, 0);
    random_state = seed;
    print_message("flat json seed %" PRIu64 " (HF_TEST_SEED)\n", seed);
    unsigned read = 0, declined_valid = 0, declined_invalid = 0;
    char body[512];
    /* HF_TEST_ROUNDS: fewer under valgrind (tests/crash/valgrind.sh), which runs them 50x slower. */
    const char *rounds_given = getenv("HF_TEST_ROUNDS");
    int rounds = rounds_given ? atoi(rounds_given) : 200000;
    for (int round = 0; round < rounds; round++) {
        size_t length = make_body(body, sizeof body);
        json_error_t error;
        json_t *parsed = json_loadb(body, length, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
        bool flat_read = hf_flat_json_read(&flat, body, length);
        if (!flat_read) {
            if (parsed) declined_valid++;
            else declined_invalid++;
            json_decref(parsed);
            continue;
        }
        read++;
        if (!parsed || !json_is_object(parsed))
            fail_msg("read what jansson refuses (round %d, seed %" PRIu64 "): %.*s", round, seed,
                     (int)length, body);
        assert_int_equal(json_object_size(parsed), flat.member_count);
        for (uint32_t i = 0; i < flat.member_count; i++)
            check_member(&flat.members[i], json_object_get(parsed, flat.members[i].name), body);
        json_decref(parsed);
    }
    print_message("read %u, declined %u valid and %u invalid bodies\n", read, declined_valid,
                  declined_invalid);
    /* The generator must reach all three outcomes, or the comparison proves little: a tenth
     * of the rounds read, a twentieth declined of each kind (20,000 and 10,000 of 200,000). */
    assert_true(read > (unsigned)rounds / 10);
    assert_true(declined_valid > (unsigned)rounds / 20);
    assert_true(declined_invalid > (unsigned)rounds / 20);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_hold),
        cmocka_unit_test(test_reads_every_kind),
        cmocka_unit_test(test_reads_a_calendar_hold),
        cmocka_unit_test(test_declines_what_it_does_not_read),
        cmocka_unit_test(test_declines_past_its_limits),
        cmocka_unit_test(test_reads_as_jansson_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
