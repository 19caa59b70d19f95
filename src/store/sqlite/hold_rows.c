/* The writer's memory of where the holds it inserted are (internal.h, hf_sqlite_hold_rows_*):
 * a hold's id to its row's seq, so that the hold's next update (its expiry, its confirmation
 * by a payment, its release) finds the row by the table's own key instead of seeking the
 * UNIQUE index on holds.id first. That seek was a quarter of the update's instructions
 * (docs/PERFORMANCE.md, "Rows per change").
 *
 * The memory is bounded: two generations of at most HF_SQLITE_HOLD_ROWS_MAX ids each; when the
 * newer one is full the older one is dropped, so the holds remembered are the most recent
 * ones, which are the ones updated soonest. A hold not remembered (an older one, one loaded at
 * start, a seq past 32 bits) is updated by its id as before. A batch that fails forgets all:
 * the seqs its inserts took were rolled back with it and may be given again. */
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store/sqlite/internal.h"

static void generation_drop(hf_map_t *generation) {
    hf_map_free(generation);
    hf_map_init(generation);
}

void hf_sqlite_hold_rows_init(hf_sqlite_store_t *store) {
    hf_map_init(&store->hold_rows[0]);
    hf_map_init(&store->hold_rows[1]);
    store->hold_rows_newer = 0;
}

void hf_sqlite_hold_rows_remember(hf_sqlite_store_t *store, const char *hold_id, int64_t seq) {
    if (seq <= 0 || seq > UINT32_MAX) return;
    size_t length = strlen(hold_id);
    uint32_t hash = hf_map_hash(hold_id, length);
    hf_map_t *newer = &store->hold_rows[store->hold_rows_newer];
    if (hf_map_count(newer) >= HF_SQLITE_HOLD_ROWS_MAX) {
        store->hold_rows_newer ^= 1;
        newer = &store->hold_rows[store->hold_rows_newer];
        generation_drop(newer);
    }
    /* Ids are unique in the table, so a hold is inserted once: no entry to replace. */
    if (hf_map_find(newer, hold_id, length, hash) == NULL)
        hf_map_insert(newer, hold_id, length, hash, (uint32_t)seq);
}

int64_t hf_sqlite_hold_rows_find(const hf_sqlite_store_t *store, const char *hold_id) {
    size_t length = strlen(hold_id);
    uint32_t hash = hf_map_hash(hold_id, length);
    for (int age = 0; age < 2; age++) {
        const hf_map_t *generation = &store->hold_rows[store->hold_rows_newer ^ age];
        const hf_map_slot_t *found = hf_map_find(generation, hold_id, length, hash);
        if (found != NULL) return found->value;
    }
    return 0;
}

void hf_sqlite_hold_rows_forget(hf_sqlite_store_t *store) {
    generation_drop(&store->hold_rows[0]);
    generation_drop(&store->hold_rows[1]);
}

void hf_sqlite_hold_rows_close(hf_sqlite_store_t *store) {
    hf_map_free(&store->hold_rows[0]);
    hf_map_free(&store->hold_rows[1]);
}
