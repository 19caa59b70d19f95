/* Private to src/core/dispatch/: the state of fleets, drivers, rides and the grid of free
 * drivers, and what the folder's files offer each other:
 *   dispatch.c  the commands (PUT driver, rides, accept, decline, cancel, complete, a lapse)
 *   slots.c     the slots of rides and drivers, their id indexes, finished rides forgotten,
 *               deleted drivers, the pages of drivers
 *   restore.c   restore and revive from stored rows
 *   index.c     the grid of free drivers and the ring search for a ride's candidate
 *   records.c   the records of rides and drivers, the flush of soft state, check
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
    uint32_t bucket;     /* bucket index + 1 while free (in the grid), else 0 */
    uint32_t slot;       /* its entry in the bucket */
    int32_t row, column; /* the bucket's cell (geo.h), while free: a move within it stays */
    /* Rides in memory naming the driver (as assigned, or among their excluded): a deleted
     * driver's slot is reused once none does. */
    uint32_t references;
    uint32_t next_free;     /* a free slot's next free slot, index + 1 */
    bool deleted;           /* out of its fleet, kept only for the rides naming it */
    bool dirty;             /* changed since the last flush */
    uint64_t last_change;   /* see hf_dispatch_driver_change */
    uint8_t counted_status; /* hf_driver_status_t it is counted under (counts.drivers) */
} driver_state_t;

/* An excluded driver's index, with this bit when its offer lapsed (else it declined). */
#define EXCLUDED_LAPSED 0x80000000u

typedef struct ride_state {
    uint32_t *excluded; /* driver indexes, maybe | EXCLUDED_LAPSED */
    uint32_t excluded_count, excluded_capacity;
    uint32_t previous_searching, next_searching; /* ride index + 1 in the fleet's list */
    bool in_searching;
    uint64_t last_change;
    /* Creation order: slots are reused, so the index is not it (searching lists follow it). */
    uint64_t created_seq;
    /* Finished rides in the order they finished, and free slots (ride index + 1). */
    uint32_t next_finished;
} ride_state_t;

/* The status of a forgotten ride's slot, waiting for reuse (no public status). */
#define RIDE_FORGOTTEN 0xFFu

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
    /* Hash of "FLEET_INDEX/DRIVER_ID" -> driver index; a deleted driver's entry stops
     * matching, and the index is rebuilt once half of it is such entries. */
    hf_index_map_t driver_ids;
    uint32_t driver_ids_stale;
    uint32_t driver_free_first; /* free driver slots (index + 1), through next_free */
    hf_ride_t *rides;
    ride_state_t *ride_states;
    uint32_t ride_count, ride_capacity, ride_state_capacity;
    uint32_t rides_kept; /* slots holding a ride (ride_count less the free ones) */
    /* Hash of the id -> ride index; a forgotten ride's entry stops matching, and the index is
     * rebuilt once half of it is such entries. */
    hf_index_map_t ride_ids;
    uint32_t ride_ids_stale;
    uint64_t ride_seq; /* the last ride's created_seq */
    uint32_t finished_first, finished_last, finished_count, finished_max;
    uint32_t ride_free_first;   /* forgotten slots, through next_finished */
    uint64_t forgotten;         /* rides forgotten since the core was made */
    uint64_t *forgotten_filter; /* a Bloom filter of their ids (slots.c), or NULL */
    uint64_t forgotten_rides[HF_RIDE_STATUS_COUNT]; /* of them, still forgotten, by status */
    bucket_t *buckets;
    uint32_t bucket_count, bucket_capacity;
    hf_pair_map_t cells; /* (fleet << ROW_BITS | row, column) -> bucket index */
    uint32_t *dirty;     /* drivers changed since the last flush */
    uint32_t dirty_count, dirty_capacity;
    hf_buffer_t key;              /* a driver's key being built */
    hf_buffer_t declined, lapsed; /* a ride record's lists being built */
    hf_dispatch_counts_t counts;  /* running counts (dispatch.h), moved at every change */
};

static inline struct dispatch *dispatch_of(const hf_core_t *core) { return core->dispatch; }

/* Made at the first command that needs it. */
struct dispatch *dispatch_make(hf_core_t *core);

/* ---- index.c ---- */

/* Files a driver that became free in its cell; takes it out; moves it after a PUT. */
void grid_insert(struct dispatch *dispatch, uint32_t driver);
void grid_remove(struct dispatch *dispatch, uint32_t driver);
void grid_move(struct dispatch *dispatch, uint32_t driver);
bool ride_excludes(const struct dispatch *dispatch, uint32_t ride, uint32_t driver, bool *lapsed);
/* The best free candidate (hf_dispatch_candidate). */
bool candidate_find(const struct dispatch *dispatch, uint32_t fleet, double lat, double lng,
                    int64_t radius_m, uint32_t ride, uint32_t *driver, int64_t *distance_m);

/* ---- records.c ---- */

void record_ride(hf_core_t *core, uint32_t ride, hf_time_ms_t now);
void record_driver(hf_core_t *core, uint32_t driver, hf_time_ms_t now);
void driver_mark_dirty(struct dispatch *dispatch, uint32_t driver);

/* ---- dispatch.c, for restore.c ---- */

void searching_append(struct dispatch *dispatch, uint32_t ride);
void exclude(struct dispatch *dispatch, uint32_t ride, uint32_t driver, bool lapsed);
void ride_status_set(struct dispatch *dispatch, hf_ride_t *ride, uint8_t status);
void grid_sync(struct dispatch *dispatch, uint32_t driver);
void driver_count_sync(struct dispatch *dispatch, uint32_t driver);
bool coordinates_valid(double lat, double lng, hf_error_detail_t *detail);
hf_error_t ride_request_check(const hf_ride_request_t *request, hf_error_detail_t *detail);

/* ---- slots.c ---- */

/* The live driver of the fleet with this id, or NO_INDEX. */
uint32_t driver_key_find(const struct dispatch *dispatch, uint32_t fleet, const char *driver_id);
/* A new driver of the fleet (a free slot's, or a new one), unavailable at (0, 0) and counted
 * so; filed in driver_ids unless deleted (a restore's driver that has no row). */
uint32_t driver_add(struct dispatch *dispatch, uint32_t fleet, const char *driver_id, bool deleted);
/* The driver takes it out of its fleet (not free, no offer, not assigned: the caller saw to
 * it); its slot is reused once no ride names it. */
void driver_remove(struct dispatch *dispatch, uint32_t driver);
/* One more, or one fewer, ride naming the driver. */
void driver_reference(struct dispatch *dispatch, uint32_t driver);
void driver_release(struct dispatch *dispatch, uint32_t driver);
uint32_t fleet_add(struct dispatch *dispatch, const char *fleet_id);
/* A new ride's slot (a forgotten one's, or a new one), searching and counted so, filed in
 * ride_ids, its rider id copied. */
uint32_t ride_add(hf_core_t *core, const hf_ride_request_t *request, uint32_t fleet,
                  hf_time_ms_t now);
/* The ride just finished (cancelled, completed): the newest of the finished. */
void ride_finished_push(struct dispatch *dispatch, uint32_t ride);
/* Forgets the oldest finished rides past the bound whose last change is at most
 * durable_changes. */
uint32_t rides_finished_evict(struct dispatch *dispatch, uint64_t durable_changes);
void slots_free(struct dispatch *dispatch);

#endif
