/* Three hash tables of uint32 values, all open addressing with linear probing. None removes
 * single entries: what they index (events, orders, users) lives as long as the server, except
 * the holds of hf_index_map_t, whose slots are reused once a finished hold is forgotten
 * (core.h, hf_core_evict): that index is emptied and rebuilt instead.
 *
 * hf_map_t is keyed by strings. Keys are copied into an arena the map owns, so inserting
 * never allocates per key once the arena and the slot table have grown to the working size.
 *
 * hf_pair_map_t is keyed by a pair of uint32 (an event index and a user index, say): no key
 * is built or copied, and a lookup is one multiply and one probe. */
#ifndef HF_MAP_H
#define HF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hf_map_slot {
    uint32_t hash; /* 0 marks an empty slot; its low bits are the home slot */
    uint32_t key_length;
    uint32_t key_offset; /* into keys */
    uint32_t value;
} hf_map_slot_t;

typedef struct hf_map {
    hf_map_slot_t *slots;
    size_t slot_count; /* a power of two */
    size_t used;
    char *keys; /* the keys, each followed by a NUL */
    size_t keys_length, keys_capacity;
} hf_map_t;

void hf_map_init(hf_map_t *map);
void hf_map_free(hf_map_t *map);
/* Looks key (length bytes, not necessarily NUL-terminated) up; true and *value when found. */
bool hf_map_get(const hf_map_t *map, const char *key, size_t length, uint32_t *value);
/* Inserts key -> value; the key must not be present. */
void hf_map_put(hf_map_t *map, const char *key, size_t length, uint32_t value);
size_t hf_map_count(const hf_map_t *map);

/* The same two operations with the key's hash computed by the caller, so a key looked up and
 * then inserted is hashed once (hf_map_get and hf_map_put are built on them, and the tests
 * force collisions through them). hash must be hf_map_hash of the same key. hf_map_find
 * returns the entry found (borrowed, valid until the next insert) or NULL; hf_map_insert
 * returns the new key's offset for hf_map_key. */
uint32_t hf_map_hash(const char *key, size_t length);
const hf_map_slot_t *hf_map_find(const hf_map_t *map, const char *key, size_t length,
                                 uint32_t hash);
uint32_t hf_map_insert(hf_map_t *map, const char *key, size_t length, uint32_t hash,
                       uint32_t value);
/* The map's NUL-terminated copy of a key, by the key_offset of its entry: the copy can stand
 * for the key (a user's id) without a second copy elsewhere. Valid until the next insert. */
const char *hf_map_key(const hf_map_t *map, uint32_t key_offset);

typedef struct hf_pair_map_slot {
    uint64_t key;            /* first << 32 | second */
    uint32_t value_plus_one; /* 0 marks an empty slot */
} hf_pair_map_slot_t;

typedef struct hf_pair_map {
    hf_pair_map_slot_t *slots;
    size_t slot_count; /* a power of two */
    size_t used;
} hf_pair_map_t;

void hf_pair_map_init(hf_pair_map_t *map);
void hf_pair_map_free(hf_pair_map_t *map);
/* true and *value when (first, second) is present. */
bool hf_pair_map_get(const hf_pair_map_t *map, uint32_t first, uint32_t second, uint32_t *value);
/* Inserts (first, second) -> value; the pair must not be present and value < UINT32_MAX. */
void hf_pair_map_put(hf_pair_map_t *map, uint32_t first, uint32_t second, uint32_t value);
size_t hf_pair_map_count(const hf_pair_map_t *map);

/* hf_index_map_t keeps no keys at all: a slot is a key's hash and a value, and the caller
 * tells whether a value's own record carries the key (a hold's id lives in the hold, a user's
 * in the user's record). So an entry whose record has since changed simply stops matching,
 * and a slot is 8 bytes. */
typedef struct hf_index_map_slot {
    uint32_t hash; /* hf_map_hash of the key; 0 marks an empty slot */
    uint32_t value;
} hf_index_map_slot_t;

typedef struct hf_index_map {
    hf_index_map_slot_t *slots;
    size_t slot_count; /* a power of two */
    size_t used;
} hf_index_map_t;

/* True when value's record carries the key being looked up. */
typedef bool (*hf_index_map_match_fn)(const void *context, uint32_t value);

void hf_index_map_init(hf_index_map_t *map);
void hf_index_map_free(hf_index_map_t *map);
/* The value whose record matches, among the entries of this hash; false when none does. */
bool hf_index_map_find(const hf_index_map_t *map, uint32_t hash, hf_index_map_match_fn match,
                       const void *context, uint32_t *value);
/* Adds hash -> value; the key must not be present (hash must be hf_map_hash of it). */
void hf_index_map_insert(hf_index_map_t *map, uint32_t hash, uint32_t value);
/* Empties the map, keeping its table for the inserts that follow. */
void hf_index_map_clear(hf_index_map_t *map);
size_t hf_index_map_count(const hf_index_map_t *map);
/* Starts loading the slot where a lookup of hash begins, so that its cache miss overlaps the
 * work a command does before the lookup. A hint: it changes nothing. */
static inline void hf_index_map_prefetch(const hf_index_map_t *map, uint32_t hash) {
    if (map->slot_count) __builtin_prefetch(&map->slots[hash & (map->slot_count - 1)]);
}

#endif
