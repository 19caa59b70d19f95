/* String-keyed hash table (see map.h). */
#include "core/map.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a, then mixed: cheap, and good enough for ids that share long prefixes. */
static uint64_t hash_key(const char *key, size_t length) {
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < length; i++) {
        hash ^= (unsigned char)key[i];
        hash *= 1099511628211ULL;
    }
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    return hash ? hash : 1; /* 0 is the empty-slot mark */
}

void hf_map_init(hf_map_t *map) { memset(map, 0, sizeof *map); }

void hf_map_free(hf_map_t *map) {
    free(map->slots);
    free(map->keys);
    memset(map, 0, sizeof *map);
}

size_t hf_map_count(const hf_map_t *map) { return map->used; }

static bool slot_matches(const hf_map_t *map, const hf_map_slot_t *slot, uint64_t hash,
                         const char *key, size_t length) {
    if (slot->hash != hash) return false;
    const char *stored = map->keys + slot->key_offset;
    return strncmp(stored, key, length) == 0 && stored[length] == '\0';
}

bool hf_map_get(const hf_map_t *map, const char *key, size_t length, uint32_t *value) {
    if (map->slot_count == 0) return false;
    uint64_t hash = hash_key(key, length);
    size_t mask = map->slot_count - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const hf_map_slot_t *slot = &map->slots[i];
        if (slot->hash == 0) return false;
        if (slot_matches(map, slot, hash, key, length)) {
            *value = slot->value;
            return true;
        }
    }
}

static void place(hf_map_slot_t *slots, size_t slot_count, hf_map_slot_t entry) {
    size_t mask = slot_count - 1;
    size_t i = entry.hash & mask;
    while (slots[i].hash != 0) i = (i + 1) & mask;
    slots[i] = entry;
}

/* Keeps the load factor under one half so probes stay short. */
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

void hf_map_put(hf_map_t *map, const char *key, size_t length, uint32_t value) {
    if ((map->used + 1) * 2 > map->slot_count) grow_slots(map);
    hf_map_slot_t entry = {hash_key(key, length), store_key(map, key, length), value};
    place(map->slots, map->slot_count, entry);
    map->used++;
}
