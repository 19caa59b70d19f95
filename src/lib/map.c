/* Hash tables (see map.h). */
#include "lib/map.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Odd constants with bits spread over the whole word, so a multiply carries every input bit
 * into the high half of the product. */
#define MIX_A 0x91d93080f9b439fdULL
#define MIX_B 0xbceaaf308142c8ebULL
#define MIX_C 0xe27655daa05f1119ULL

static uint64_t load64(const char *bytes) {
    uint64_t word;
    memcpy(&word, bytes, sizeof word);
    return word;
}

static uint64_t load32(const char *bytes) {
    uint32_t word;
    memcpy(&word, bytes, sizeof word);
    return word;
}

/* One word into the state: the multiply spreads each input bit upwards, the shift brings the
 * high bits back down so the next word mixes with all of them. */
static uint64_t absorb(uint64_t state, uint64_t word) {
    state = (state ^ word) * MIX_A;
    return state ^ (state >> 29);
}

/* The last 1 to 7 bytes as one word. The key's length is already in the state, so reading
 * overlapping or repeated bytes for short tails is unambiguous. */
static uint64_t tail_word(const char *tail, size_t count) {
    if (count >= 4) return load32(tail) | load32(tail + count - 4) << 32;
    const unsigned char *bytes = (const unsigned char *)tail;
    return (uint64_t)bytes[0] | (uint64_t)bytes[count / 2] << 8 | (uint64_t)bytes[count - 1] << 16;
}

/* Eight bytes at a time: ids are 36 to 40 bytes, and a byte-at-a-time hash of them was a
 * quarter of a hold's cost. */
static uint64_t hash_bytes(const char *key, size_t length) {
    uint64_t state = (uint64_t)length * MIX_B;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) state = absorb(state, load64(key + i));
    if (i < length) state = absorb(state, tail_word(key + i, length - i));
    state *= MIX_C;
    return state ^ (state >> 32);
}

uint32_t hf_map_hash(const char *key, size_t length) {
    uint32_t hash = (uint32_t)hash_bytes(key, length);
    return hash ? hash : 1; /* 0 is the empty-slot mark */
}

void hf_map_init(hf_map_t *map) { memset(map, 0, sizeof *map); }

void hf_map_free(hf_map_t *map) {
    free(map->slots);
    free(map->keys);
    memset(map, 0, sizeof *map);
}

size_t hf_map_count(const hf_map_t *map) { return map->used; }

const hf_map_slot_t *hf_map_find(const hf_map_t *map, const char *key, size_t length,
                                 uint32_t hash) {
    if (map->slot_count == 0) return NULL;
    size_t mask = map->slot_count - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const hf_map_slot_t *slot = &map->slots[i];
        if (slot->hash == 0) return NULL;
        if (slot->hash == hash && slot->key_length == length &&
            memcmp(map->keys + slot->key_offset, key, length) == 0)
            return slot;
    }
}

bool hf_map_get(const hf_map_t *map, const char *key, size_t length, uint32_t *value) {
    if (map->slot_count == 0) return false;
    const hf_map_slot_t *slot = hf_map_find(map, key, length, hf_map_hash(key, length));
    if (!slot) return false;
    *value = slot->value;
    return true;
}

const char *hf_map_key(const hf_map_t *map, uint32_t key_offset) { return map->keys + key_offset; }

static void place(hf_map_slot_t *slots, size_t slot_count, hf_map_slot_t entry) {
    size_t mask = slot_count - 1;
    size_t i = entry.hash & mask;
    while (slots[i].hash != 0) i = (i + 1) & mask;
    slots[i] = entry;
}

/* Keeps the load factor under one half so probes stay short. The stored hash gives the new
 * home slot, so growing reads no key. */
static void grow_slots(hf_map_t *map) {
    size_t slot_count = map->slot_count ? map->slot_count * 2 : 16;
    hf_map_slot_t *slots = calloc(slot_count, sizeof *slots);
    if (!slots) abort();
    for (size_t i = 0; i < map->slot_count; i++)
        if (map->slots[i].hash) place(slots, slot_count, map->slots[i]);
    free(map->slots);
    map->slots = slots;
    map->slot_count = slot_count;
}

static uint32_t store_key(hf_map_t *map, const char *key, size_t length) {
    if (map->keys_length + length + 1 > map->keys_capacity) {
        size_t capacity = map->keys_capacity ? map->keys_capacity : 1024;
        while (capacity < map->keys_length + length + 1) capacity *= 2;
        char *keys = realloc(map->keys, capacity);
        if (!keys) abort();
        map->keys = keys;
        map->keys_capacity = capacity;
    }
    uint32_t offset = (uint32_t)map->keys_length;
    memcpy(map->keys + offset, key, length);
    map->keys[offset + length] = '\0';
    map->keys_length += length + 1;
    return offset;
}

uint32_t hf_map_insert(hf_map_t *map, const char *key, size_t length, uint32_t hash,
                       uint32_t value) {
    if ((map->used + 1) * 2 > map->slot_count) grow_slots(map);
    hf_map_slot_t entry = {hash, (uint32_t)length, store_key(map, key, length), value};
    place(map->slots, map->slot_count, entry);
    map->used++;
    return entry.key_offset;
}

void hf_map_put(hf_map_t *map, const char *key, size_t length, uint32_t value) {
    hf_map_insert(map, key, length, hf_map_hash(key, length), value);
}

/* ---- pair map ---- */

void hf_pair_map_init(hf_pair_map_t *map) { memset(map, 0, sizeof *map); }

void hf_pair_map_free(hf_pair_map_t *map) {
    free(map->slots);
    memset(map, 0, sizeof *map);
}

size_t hf_pair_map_count(const hf_pair_map_t *map) { return map->used; }

static uint64_t pair_key(uint32_t first, uint32_t second) { return (uint64_t)first << 32 | second; }

/* The high bits of a multiply depend on every bit of the key: user indexes that differ only
 * in their low bits still land far apart. */
static size_t pair_home(uint64_t key, size_t mask) {
    uint64_t mixed = key * MIX_A;
    return (size_t)(mixed ^ (mixed >> 32)) & mask;
}

bool hf_pair_map_get(const hf_pair_map_t *map, uint32_t first, uint32_t second, uint32_t *value) {
    if (map->slot_count == 0) return false;
    uint64_t key = pair_key(first, second);
    size_t mask = map->slot_count - 1;
    for (size_t i = pair_home(key, mask);; i = (i + 1) & mask) {
        const hf_pair_map_slot_t *slot = &map->slots[i];
        if (slot->value_plus_one == 0) return false;
        if (slot->key == key) {
            *value = slot->value_plus_one - 1;
            return true;
        }
    }
}

static void pair_place(hf_pair_map_slot_t *slots, size_t slot_count, hf_pair_map_slot_t entry) {
    size_t mask = slot_count - 1;
    size_t i = pair_home(entry.key, mask);
    while (slots[i].value_plus_one != 0) i = (i + 1) & mask;
    slots[i] = entry;
}

/* Load factor under one half, as for the string map. */
static void pair_grow(hf_pair_map_t *map) {
    size_t slot_count = map->slot_count ? map->slot_count * 2 : 16;
    hf_pair_map_slot_t *slots = calloc(slot_count, sizeof *slots);
    if (!slots) abort();
    for (size_t i = 0; i < map->slot_count; i++)
        if (map->slots[i].value_plus_one) pair_place(slots, slot_count, map->slots[i]);
    free(map->slots);
    map->slots = slots;
    map->slot_count = slot_count;
}

void hf_pair_map_put(hf_pair_map_t *map, uint32_t first, uint32_t second, uint32_t value) {
    assert(value < UINT32_MAX);
    if ((map->used + 1) * 2 > map->slot_count) pair_grow(map);
    hf_pair_map_slot_t entry = {pair_key(first, second), value + 1};
    pair_place(map->slots, map->slot_count, entry);
    map->used++;
}

/* ---- index map ---- */

void hf_index_map_init(hf_index_map_t *map) { memset(map, 0, sizeof *map); }

void hf_index_map_free(hf_index_map_t *map) {
    free(map->slots);
    memset(map, 0, sizeof *map);
}

size_t hf_index_map_count(const hf_index_map_t *map) { return map->used; }

bool hf_index_map_find(const hf_index_map_t *map, uint32_t hash, hf_index_map_match_fn match,
                       const void *context, uint32_t *value) {
    assert(hash != 0);
    if (map->slot_count == 0) return false;
    size_t mask = map->slot_count - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const hf_index_map_slot_t *slot = &map->slots[i];
        if (slot->hash == 0) return false;
        if (slot->hash == hash && match(context, slot->value)) {
            *value = slot->value;
            return true;
        }
    }
}

static void index_place(hf_index_map_slot_t *slots, size_t slot_count, hf_index_map_slot_t entry) {
    size_t mask = slot_count - 1;
    size_t i = entry.hash & mask;
    while (slots[i].hash != 0) i = (i + 1) & mask;
    slots[i] = entry;
}

/* Load factor under one half, as for the other maps. */
static void index_grow(hf_index_map_t *map) {
    size_t slot_count = map->slot_count ? map->slot_count * 2 : 16;
    hf_index_map_slot_t *slots = calloc(slot_count, sizeof *slots);
    if (!slots) abort();
    for (size_t i = 0; i < map->slot_count; i++)
        if (map->slots[i].hash) index_place(slots, slot_count, map->slots[i]);
    free(map->slots);
    map->slots = slots;
    map->slot_count = slot_count;
}

void hf_index_map_insert(hf_index_map_t *map, uint32_t hash, uint32_t value) {
    assert(hash != 0);
    if ((map->used + 1) * 2 > map->slot_count) index_grow(map);
    index_place(map->slots, map->slot_count, (hf_index_map_slot_t){hash, value});
    map->used++;
}

void hf_index_map_clear(hf_index_map_t *map) {
    if (map->slots) memset(map->slots, 0, map->slot_count * sizeof *map->slots);
    map->used = 0;
}
