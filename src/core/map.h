/* A string-keyed hash table of uint32 values: open addressing with linear probing. Keys are
 * copied into an arena the map owns, so inserting never allocates per key once the arena and
 * the slot table have grown to the working size. Entries are never removed: everything the
 * core indexes (events, holds, orders, users) lives as long as the server. */
#ifndef HF_MAP_H
#define HF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hf_map_slot {
    uint64_t hash;               /* 0 marks an empty slot */
    uint32_t key_offset;         /* into keys */
    uint32_t value;
} hf_map_slot_t;

typedef struct hf_map {
    hf_map_slot_t *slots;
    size_t slot_count;           /* a power of two */
    size_t used;
    char *keys;                  /* NUL-separated copies */
    size_t keys_length, keys_capacity;
} hf_map_t;

void hf_map_init(hf_map_t *map);
void hf_map_free(hf_map_t *map);
/* Looks key (length bytes, not necessarily NUL-terminated) up; true and *value when found. */
bool hf_map_get(const hf_map_t *map, const char *key, size_t length, uint32_t *value);
/* Inserts key -> value; the key must not be present. */
void hf_map_put(hf_map_t *map, const char *key, size_t length, uint32_t value);
size_t hf_map_count(const hf_map_t *map);

#endif
