/* Unit tests of the hash tables of src/core/map.h: the string map (lookups by content and
 * length, keys that share prefixes or differ in one byte, growth, keys whose hashes collide,
 * probe chains that wrap around the end of the table) and the pair map (order of the pair
 * matters, growth, keys that differ in one half only) and the index map (entries that stop
 * matching, clearing and rebuilding, against a plain reference, in probe runs that collide and
 * wrap around the end of the table). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/map.h"

static void test_string_put_get(void **state) {
    (void)state;
    hf_map_t map;
    hf_map_init(&map);
    uint32_t value = 99;
    assert_false(hf_map_get(&map, "a", 1, &value));
    hf_map_put(&map, "alpha", 5, 1);
    hf_map_put(&map, "beta", 4, 2);
    hf_map_put(&map, "", 0, 3);
    assert_true(hf_map_get(&map, "alpha", 5, &value));
    assert_int_equal(value, 1);
    assert_true(hf_map_get(&map, "beta", 4, &value));
    assert_int_equal(value, 2);
    assert_true(hf_map_get(&map, "", 0, &value));
    assert_int_equal(value, 3);
    /* A prefix or an extension of a key is another key. */
    assert_false(hf_map_get(&map, "alph", 4, &value));
    assert_false(hf_map_get(&map, "alphas", 6, &value));
    /* The length given counts, not a terminating NUL. */
    assert_true(hf_map_get(&map, "alphabet", 5, &value));
    assert_int_equal(value, 1);
    assert_int_equal(hf_map_count(&map), 3);
    hf_map_free(&map);
}

/* Every length from 0 to 40 of one text, and every single-byte change of a 40-byte key: the
 * tails of 1 to 7 bytes and the word boundaries are all distinguished. */
static void test_string_lengths_and_bytes(void **state) {
    (void)state;
    const char *text = "res_0123456789abcdef0123456789abcdefXYZW";
    hf_map_t map;
    hf_map_init(&map);
    for (uint32_t length = 0; length <= 40; length++) hf_map_put(&map, text, length, length);
    char changed[41];
    for (uint32_t i = 0; i < 40; i++) {
        memcpy(changed, text, 41);
        changed[i] = changed[i] == '#' ? '$' : '#';
        hf_map_put(&map, changed, 40, 100 + i);
    }
    uint32_t value;
    for (uint32_t length = 0; length <= 40; length++) {
        assert_true(hf_map_get(&map, text, length, &value));
        assert_int_equal(value, length);
    }
    for (uint32_t i = 0; i < 40; i++) {
        memcpy(changed, text, 41);
        changed[i] = changed[i] == '#' ? '$' : '#';
        assert_true(hf_map_get(&map, changed, 40, &value));
        assert_int_equal(value, 100 + i);
    }
    /* Keys may hold NUL bytes: they are compared over their whole length. */
    hf_map_put(&map, "a\0b", 3, 500);
    assert_true(hf_map_get(&map, "a\0b", 3, &value));
    assert_int_equal(value, 500);
    assert_false(hf_map_get(&map, "a\0c", 3, &value));
    hf_map_free(&map);
}

static void test_string_growth(void **state) {
    (void)state;
    hf_map_t map;
    hf_map_init(&map);
    char key[32];
    const uint32_t count = 100000;
    for (uint32_t i = 0; i < count; i++) {
        int length = snprintf(key, sizeof key, "u%u", i);
        hf_map_put(&map, key, (size_t)length, i);
    }
    assert_int_equal(hf_map_count(&map), count);
    assert_true(map.slot_count >= 2 * count);
    for (uint32_t i = 0; i < count; i++) {
        int length = snprintf(key, sizeof key, "u%u", i);
        uint32_t value;
        assert_true(hf_map_get(&map, key, (size_t)length, &value));
        assert_int_equal(value, i);
        const hf_map_slot_t *slot = hf_map_find(&map, key, (size_t)length,
                                                hf_map_hash(key, (size_t)length));
        assert_non_null(slot);
        assert_int_equal(slot->value, i);
        assert_string_equal(hf_map_key(&map, slot->key_offset), key);
    }
    uint32_t value;
    assert_false(hf_map_get(&map, "u100000", 7, &value));
    assert_false(hf_map_get(&map, "v1", 2, &value));
    hf_map_free(&map);
}

/* The map trusts the hash it is given: keys inserted under one hash form one probe chain, and
 * only the key's bytes tell them apart. A home slot at the end of the table wraps around. */
static void test_string_collisions(void **state) {
    (void)state;
    hf_map_t map;
    hf_map_init(&map);
    const char *keys[] = {"one", "two", "three", "tw", "twO"};
    uint32_t offsets[5];
    for (uint32_t i = 0; i < 5; i++)
        offsets[i] = hf_map_insert(&map, keys[i], strlen(keys[i]), 15, i);
    assert_int_equal(map.slot_count, 16);
    for (uint32_t i = 0; i < 5; i++) {
        const hf_map_slot_t *slot = hf_map_find(&map, keys[i], strlen(keys[i]), 15);
        assert_non_null(slot);
        assert_int_equal(slot->value, i);
        assert_int_equal(slot->key_offset, offsets[i]);
    }
    assert_null(hf_map_find(&map, "four", 4, 15));
    assert_null(hf_map_find(&map, "one", 3, 31));
    /* Growing keeps the chain: the stored hash gives each key its new home. */
    char key[16];
    for (uint32_t i = 0; i < 40; i++) {
        int length = snprintf(key, sizeof key, "k%u", i);
        hf_map_put(&map, key, (size_t)length, 1000 + i);
    }
    /* Keys stay readable, NUL-terminated, by their offsets while the arena grows. */
    for (uint32_t i = 0; i < 5; i++) {
        const hf_map_slot_t *slot = hf_map_find(&map, keys[i], strlen(keys[i]), 15);
        assert_non_null(slot);
        assert_int_equal(slot->value, i);
        assert_string_equal(hf_map_key(&map, offsets[i]), keys[i]);
    }
    hf_map_free(&map);
}

static void test_pair_put_get(void **state) {
    (void)state;
    hf_pair_map_t map;
    hf_pair_map_init(&map);
    uint32_t value = 99;
    assert_false(hf_pair_map_get(&map, 0, 0, &value));
    hf_pair_map_put(&map, 0, 0, 0);
    hf_pair_map_put(&map, 1, 2, 12);
    hf_pair_map_put(&map, 2, 1, 21);
    hf_pair_map_put(&map, UINT32_MAX, UINT32_MAX, UINT32_MAX - 1);
    assert_true(hf_pair_map_get(&map, 0, 0, &value));
    assert_int_equal(value, 0);
    assert_true(hf_pair_map_get(&map, 1, 2, &value));
    assert_int_equal(value, 12);
    assert_true(hf_pair_map_get(&map, 2, 1, &value));
    assert_int_equal(value, 21);
    assert_true(hf_pair_map_get(&map, UINT32_MAX, UINT32_MAX, &value));
    assert_int_equal(value, UINT32_MAX - 1);
    assert_false(hf_pair_map_get(&map, 1, 1, &value));
    assert_false(hf_pair_map_get(&map, 0, 1, &value));
    assert_int_equal(hf_pair_map_count(&map), 4);
    hf_pair_map_free(&map);
}

/* Many keys that differ in one half only (one event, many users; one user, many events),
 * through many doublings of the table. */
static void test_pair_growth(void **state) {
    (void)state;
    hf_pair_map_t map;
    hf_pair_map_init(&map);
    const uint32_t users = 50000, events = 64;
    for (uint32_t u = 0; u < users; u++) hf_pair_map_put(&map, 3, u, u);
    for (uint32_t e = 0; e < events; e++) hf_pair_map_put(&map, e + 100, 7, users + e);
    assert_int_equal(hf_pair_map_count(&map), users + events);
    assert_true(map.slot_count >= 2 * (users + events));
    uint32_t value;
    for (uint32_t u = 0; u < users; u++) {
        assert_true(hf_pair_map_get(&map, 3, u, &value));
        assert_int_equal(value, u);
        assert_false(hf_pair_map_get(&map, 4, u, &value));
    }
    for (uint32_t e = 0; e < events; e++) {
        assert_true(hf_pair_map_get(&map, e + 100, 7, &value));
        assert_int_equal(value, users + e);
        assert_false(hf_pair_map_get(&map, e + 100, 8, &value));
    }
    hf_pair_map_free(&map);
}

/* ---- index map: values are indexes into an array of keys, as holds carry their ids ---- */

typedef struct index_keys {
    uint32_t hashes[4096]; /* the key of value v: hashes[v] and v itself */
    bool live[4096];       /* false: v's record no longer carries its key */
    uint32_t wanted;       /* the value a lookup asks for */
} index_keys_t;

static bool index_match(const void *context, uint32_t value) {
    const index_keys_t *keys = context;
    return value == keys->wanted && keys->live[value];
}

static bool index_lookup(const hf_index_map_t *map, index_keys_t *keys, uint32_t value) {
    uint32_t found = UINT32_MAX;
    keys->wanted = value;
    if (!hf_index_map_find(map, keys->hashes[value], index_match, keys, &found)) return false;
    assert_int_equal(found, value);
    return true;
}

static void test_index_find_and_stale_entries(void **state) {
    (void)state;
    static index_keys_t keys;
    hf_index_map_t map;
    hf_index_map_init(&map);
    uint32_t found;
    keys.wanted = 1;
    assert_false(hf_index_map_find(&map, 5, index_match, &keys, &found));
    for (uint32_t v = 0; v < 3; v++) {
        keys.hashes[v] = 7; /* one hash for all three: only the match tells them apart */
        keys.live[v] = true;
        hf_index_map_insert(&map, 7, v);
    }
    for (uint32_t v = 0; v < 3; v++) assert_true(index_lookup(&map, &keys, v));
    /* A record that lost its key leaves an entry that no longer matches; the others behind it
     * in the probe run are still found. */
    keys.live[0] = false;
    assert_false(index_lookup(&map, &keys, 0));
    assert_true(index_lookup(&map, &keys, 1));
    assert_true(index_lookup(&map, &keys, 2));
    assert_int_equal(hf_index_map_count(&map), 3);
    size_t slots = map.slot_count;
    hf_index_map_clear(&map);
    assert_int_equal(hf_index_map_count(&map), 0);
    assert_int_equal(map.slot_count, slots);
    assert_false(index_lookup(&map, &keys, 1));
    hf_index_map_insert(&map, 7, 2);
    assert_true(index_lookup(&map, &keys, 2));
    hf_index_map_free(&map);
}

/* Random inserts, keys dropped and rebuilds against the "live" array. Hashes come from a small
 * range so probe runs are long, and some sit at the end of the table so runs wrap around. */
static void test_index_random_against_reference(void **state) {
    (void)state;
    static index_keys_t keys;
    memset(&keys, 0, sizeof keys);
    hf_index_map_t map;
    hf_index_map_init(&map);
    uint64_t rng = 42;
    for (uint32_t step = 0; step < 100000; step++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t value = (uint32_t)(rng >> 33) % 4096;
        if (keys.live[value]) {
            keys.live[value] = false; /* as a forgotten hold: the entry stays, stale */
        } else if (keys.hashes[value] == 0) {
            uint32_t roll = (uint32_t)(rng >> 20) % 3;
            uint32_t hash = roll == 0   ? 1 + (uint32_t)(rng >> 40) % 16
                            : roll == 1 ? 8191 - (uint32_t)(rng >> 40) % 16
                                        : 4093 + (uint32_t)(rng >> 40) % 3;
            keys.hashes[value] = hash;
            keys.live[value] = true;
            hf_index_map_insert(&map, hash, value);
        }
        if (step % 5000 == 4999) {
            /* The rebuild: only live keys go back, and dropped values may be used again. */
            hf_index_map_clear(&map);
            for (uint32_t v = 0; v < 4096; v++) {
                if (keys.live[v]) hf_index_map_insert(&map, keys.hashes[v], v);
                else keys.hashes[v] = 0;
            }
        }
        if (step % 997 == 0)
            for (uint32_t v = 0; v < 4096; v++)
                if (keys.hashes[v]) assert_int_equal(index_lookup(&map, &keys, v), keys.live[v]);
    }
    hf_index_map_free(&map);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_put_get),
        cmocka_unit_test(test_string_lengths_and_bytes),
        cmocka_unit_test(test_string_growth),
        cmocka_unit_test(test_string_collisions),
        cmocka_unit_test(test_pair_put_get),
        cmocka_unit_test(test_pair_growth),
        cmocka_unit_test(test_index_find_and_stale_entries),
        cmocka_unit_test(test_index_random_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
