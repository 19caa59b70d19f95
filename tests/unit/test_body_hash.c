/* Unit tests of the hash of a body as a JSON value (src/engine/body_hash.h): spellings of one
 * value hash alike (member order, whitespace, numbers' spelling, escapes), other values hash
 * apart, and the flat reader's reading hashes as jansson's DOM of the same bytes does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <openssl/sha.h>
#include <string.h>

#include "engine/body_hash.h"

static hf_flat_json_t flat; /* large: off the stack */

/* The hash of text as jansson reads it (the dispatcher's flags). */
static void json_hash(const char *text, uint8_t hash[HF_BODY_HASH_SIZE]) {
    json_error_t error;
    json_t *json = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
    assert_non_null(json);
    hf_body_hash(NULL, json, hash);
    json_decref(json);
}

static void flat_hash(const char *text, uint8_t hash[HF_BODY_HASH_SIZE]) {
    assert_true(hf_flat_json_read(&flat, text, strlen(text)));
    hf_body_hash(&flat, NULL, hash);
}

static bool same(const char *a, const char *b) {
    uint8_t first[HF_BODY_HASH_SIZE], second[HF_BODY_HASH_SIZE];
    json_hash(a, first);
    json_hash(b, second);
    return memcmp(first, second, sizeof first) == 0;
}

static void test_spellings_of_one_value_hash_alike(void **state) {
    (void)state;
    const char *hold = "{\"user_id\":\"u1\",\"seats\":[\"S-R-1\",\"S-R-2\"],\"ttl_s\":300}";
    assert_true(same(hold, "{ \"ttl_s\" : 300 ,\n\t\"seats\": [ \"S-R-1\", \"S-R-2\" ],"
                           " \"user_id\": \"u1\" }"));
    assert_true(same(hold, "{\"user_id\":\"u1\",\"seats\":[\"S-R-1\",\"S-R-2\"],\"ttl_s\":300.0}"));
    assert_true(same(hold, "{\"user_id\":\"u1\",\"seats\":[\"S-R-1\",\"S-R-2\"],\"ttl_s\":3e2}"));
    assert_true(same("{\"n\":1}", "{\"n\":1.0}"));
    assert_true(same("{\"n\":1}", "{\"n\":1e0}"));
    assert_true(same("{\"n\":1}", "{\"n\":10E-1}"));
    assert_true(same("{\"n\":0}", "{\"n\":-0.0}"));
    assert_true(same("{\"n\":0.5}", "{\"n\":5e-1}"));
    assert_true(same("{\"n\":0.1}", "{\"n\":0.10}"));
    /* Strings by their decoded value. */
    assert_true(same("{\"s\":\"A/\\u00e9\"}", "{\"s\":\"\\u0041\\/\xc3\xa9\"}"));
    /* Members sorted at every level, arrays keep their order. */
    assert_true(same("{\"a\":{\"x\":1,\"y\":[{\"p\":1,\"q\":2}]},\"b\":2}",
                     "{\"b\":2,\"a\":{\"y\":[{\"q\":2,\"p\":1}],\"x\":1}}"));
}

static void test_other_values_hash_apart(void **state) {
    (void)state;
    assert_false(same("{\"n\":1}", "{\"n\":2}"));
    assert_false(same("{\"n\":1}", "{\"n\":1.5}"));
    assert_false(same("{\"n\":1}", "{\"n\":\"1\"}"));
    assert_false(same("{\"n\":null}", "{\"n\":false}"));
    assert_false(same("{\"n\":true}", "{\"n\":false}"));
    assert_false(same("{\"a\":[1,2]}", "{\"a\":[2,1]}"));
    assert_false(same("{\"a\":{}}", "{\"a\":[]}"));
    assert_false(same("{\"a\":1}", "{\"a\":1,\"b\":null}"));
    assert_false(same("{\"a\":\"x\"}", "{\"b\":\"x\"}"));
    /* Lengths are part of the encoding: moving bytes between strings is another value. */
    assert_false(same("{\"a\":[\"ab\",\"c\"]}", "{\"a\":[\"a\",\"bc\"]}"));
    assert_false(same("{\"ab\":\"c\"}", "{\"a\":\"bc\"}"));
    assert_false(same("{\"user_id\":\"u1\"}", "{\"user_id\":\"u2\"}"));
}

static void test_flat_reading_hashes_as_jansson(void **state) {
    (void)state;
    const char *bodies[] = {
        "{}",
        "{\"user_id\":\"u1\",\"seats\":[\"S-R-1\",\"S-R-2\"],\"ttl_s\":300}",
        ("{ \"ttl_s\": 0.25, \"user_id\": \"u 1\", \"replace_existing\": true, \"x\": null,"
         " \"y\": false, \"seats\": [] }"),
        "{\"payment_ref\":\"pi_1\",\"user_id\":\"u1\",\"n\":-12,\"m\":1.0}",
        ("{\"user_id\":\"u1\",\"items\":[{\"resource\":\"r1\",\"to\":\"2027-01-03\","
         "\"from\":\"2027-01-01\"},{\"quantity\":2.0,\"resource\":\"r2\",\"x\":null},{}],"
         "\"ttl_s\":1}"),
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        uint8_t from_flat[HF_BODY_HASH_SIZE], from_json[HF_BODY_HASH_SIZE];
        flat_hash(bodies[i], from_flat);
        json_hash(bodies[i], from_json);
        assert_memory_equal(from_flat, from_json, sizeof from_flat);
    }
    /* One value, one spelling the flat reader reads (1.0) and one it leaves to jansson (1e0). */
    uint8_t from_flat[HF_BODY_HASH_SIZE], from_json[HF_BODY_HASH_SIZE];
    flat_hash("{\"user_id\":\"u1\",\"ttl_s\":1.0}", from_flat);
    assert_false(hf_flat_json_read(&flat, "{\"ttl_s\":1e0,\"user_id\":\"u1\"}", 28));
    json_hash("{\"ttl_s\":1e0,\"user_id\":\"u1\"}", from_json);
    assert_memory_equal(from_flat, from_json, sizeof from_flat);
}

static void test_empty_body_is_the_empty_object(void **state) {
    (void)state;
    uint8_t empty[HF_BODY_HASH_SIZE], object[HF_BODY_HASH_SIZE], raw[SHA256_DIGEST_LENGTH];
    hf_body_hash(NULL, NULL, empty);
    json_hash("{}", object);
    assert_memory_equal(empty, object, sizeof empty);
    /* The encoding's tag keeps it apart from the hash of raw bytes (an older server's). */
    SHA256((const unsigned char *)"{}", 2, raw);
    assert_memory_not_equal(object, raw, sizeof raw);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings_of_one_value_hash_alike),
        cmocka_unit_test(test_other_values_hash_apart),
        cmocka_unit_test(test_flat_reading_hashes_as_jansson),
        cmocka_unit_test(test_empty_body_is_the_empty_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
