/* Private to src/core/dispatch/: the state of fleets, drivers, rides and the grid of free
 * drivers, and what the folder's files offer each other:
 *   dispatch.c  the commands (PUT driver, rides, accept, decline, cancel, a lapse)
 *   index.c     the grid of free drivers and the ring search for a ride's candidate
 *   records.c   the records of rides and drivers, the flush of soft state, restore, check
 *   geo.c       distances and cells (geo.h) */
#ifndef HF_CORE_DISPATCH_INTERNAL_H
#define HF_CORE_DISPATCH_INTERNAL_H

#include "core/dispatch/dispatch.h"
#include "core/dispatch/geo.h"
#include "core/internal.h"

/* A free driver filed in its cell, with its position beside it so a search reads a cell's
 * drivers without touching their records. */
typedef struct grid_entry {
    double lat, lng;
    uint32_t driver;
} grid_entry_t;

typedef struct bucket {
    grid_entry_t *entries;
    uint32_t count, capacity;
} bucket_t;

typedef struct fleet {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t driver_count;
    /* The fleet's searching rides, oldest first (ride index + 1; 0 marks none). */
    uint32_t searching_first, searching_last, searching_count;
} fleet_t;

typedef struct driver_state {
    uint32_t bucket;             /* bucket index + 1 while free (in the grid), else 0 */
    uint32_t slot;               /* its entry in the bucket */
    bool dirty;                  /* changed since the last flush */
    uint64_t last_change;        /* see hf_dispatch_driver_change */
} driver_state_t;

/* An excluded driver's index, with this bit when its offer lapsed (else it declined). */
#define EXCLUDED_LAPSED 0x80000000u

typedef struct ride_state {
    uint32_t *excluded;          /* driver indexes, maybe | EXCLUDED_LAPSED */
    uint32_t excluded_count, excluded_capacity;
    uint32_t previous_searching, next_searching; /* ride index + 1 in the fleet's list */
    bool in_searching;
    uint64_t last_change;
} ride_state_t;

/* Rows of the grid stay below 2^17 (geo.h: 80,063 rows of 250 m), so a fleet and a row make
 * one 32-bit half of a cell's key. */
#define ROW_BITS 17
_Static_assert((uint64_t)HF_DISPATCH_FLEETS_MAX << ROW_BITS <= UINT32_MAX,
               "a fleet and a row fit one uint32");

struct dispatch {
    fleet_t *fleets;
    uint32_t fleet_count, fleet_capacity;
    hf_map_t fleet_ids;
    hf_driver_t *drivers;
    driver_state_t *driver_states;
    uint32_t driver_count, driver_capacity, driver_state_capacity;
    hf_map_t driver_ids;         /* "FLEET_INDEX/DRIVER_ID" -> driver index */
    hf_ride_t *rides;
    ride_state_t *ride_states;
    uint32_t ride_count, ride_capacity, ride_state_capacity;
    hf_map_t ride_ids;
    bucket_t *buckets;
    uint32_t bucket_count, bucket_capacity;
    hf_pair_map_t cells;         /* (fleet << ROW_BITS | row, column) -> bucket index */
    uint32_t *dirty;             /* drivers changed since the last flush */
    uint32_t dirty_count, dirty_capacity;
    hf_buffer_t key;             /* a driver's key being built */
    hf_buffer_t declined, lapsed; /* a ride record's lists being built */
};

static inline struct dispatch *dispatch_of(const hf_core_t *core) { return core->dispatch; }

/* Made at the first command that needs it. */
struct dispatch *dispatch_make(hf_core_t *core);

/* ---- index.c ---- */

/* Files a driver that became free in its cell; takes it out; moves it after a PUT. */
void grid_insert(struct dispatch *dispatch, uint32_t driver);
void grid_remove(struct dispatch *dispatch, uint32_t driver);
void grid_move(struct dispatch *dispatch, uint32_t driver);
bool ride_excludes(const struct dispatch *dispatch, uint32_t ride, uint32_t driver,
                   bool *lapsed);
/* The best free candidate (hf_dispatch_candidate). */
bool candidate_find(const struct dispatch *dispatch, uint32_t fleet, double lat, double lng,
                    int64_t radius_m, uint32_t ride, uint32_t *driver, int64_t *distance_m);

/* ---- records.c ---- */

void record_ride(hf_core_t *core, uint32_t ride, hf_time_ms_t now);
void record_driver(hf_core_t *core, uint32_t driver, hf_time_ms_t now);
void driver_mark_dirty(struct dispatch *dispatch, uint32_t driver);

/* ---- dispatch.c, for records.c's restore ---- */

void searching_append(struct dispatch *dispatch, uint32_t ride);
uint32_t driver_key_find(struct dispatch *dispatch, uint32_t fleet, const char *driver_id);

#endif
