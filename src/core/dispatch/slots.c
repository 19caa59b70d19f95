/* The slots of rides and drivers (internal.h): their id indexes, the finished rides kept up to
 * a bound and then forgotten, deleted drivers kept while a ride names them, and the pages of a
 * fleet's drivers.
 *
 * Why slots are reused: a server that dispatches for months makes rides without end, and a
 * fleet's drivers come and go. A forgotten ride's slot (its excluded list and rider id freed)
 * and a deleted driver's slot, once no ride in memory names it, go on free lists that new
 * rides and drivers take first, so memory follows the rides and drivers kept, not all there
 * ever were. Their id indexes keep hashes only (8 bytes a slot), the id living in the record:
 * an entry whose record was forgotten or deleted, or reused under another id, stops matching,
 * and the index is rebuilt in one pass once half of it is such entries (as holds' is). */
#include "core/dispatch/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- drivers ---- */

/* Drivers' ids are unique per fleet only: the fleet is mixed into the id's hash. */
static uint32_t driver_hash(uint32_t fleet, const char *driver_id) {
    uint32_t hash = hf_map_hash(driver_id, strlen(driver_id)) ^ (fleet * 0x9E3779B9u);
    return hash ? hash : 1;
}

typedef struct driver_key {
    const struct dispatch *dispatch;
    uint32_t fleet;
    const char *id;
} driver_key_t;

static bool driver_key_match(const void *context, uint32_t index) {
    const driver_key_t *key = context;
    const hf_driver_t *driver = &key->dispatch->drivers[index];
    return !key->dispatch->driver_states[index].deleted && driver->fleet == key->fleet &&
           strcmp(driver->id, key->id) == 0;
}

uint32_t driver_key_find(const struct dispatch *dispatch, uint32_t fleet, const char *driver_id) {
    driver_key_t key = {dispatch, fleet, driver_id};
    uint32_t index;
    if (!hf_index_map_find(&dispatch->driver_ids, driver_hash(fleet, driver_id), driver_key_match,
                           &key, &index))
        return NO_INDEX;
    return index;
}

static void driver_ids_rebuild(struct dispatch *dispatch) {
    hf_index_map_clear(&dispatch->driver_ids);
    for (uint32_t i = 0; i < dispatch->driver_count; i++) {
        if (dispatch->driver_states[i].deleted) continue;
        const hf_driver_t *driver = &dispatch->drivers[i];
        hf_index_map_insert(&dispatch->driver_ids, driver_hash(driver->fleet, driver->id), i);
    }
    dispatch->driver_ids_stale = 0;
}

static uint32_t driver_slot_take(struct dispatch *dispatch) {
    if (dispatch->driver_free_first) {
        uint32_t index = dispatch->driver_free_first - 1;
        dispatch->driver_free_first = dispatch->driver_states[index].next_free;
        return index;
    }
    dispatch->drivers = grow(dispatch->drivers, &dispatch->driver_capacity,
                             dispatch->driver_count + 1, sizeof *dispatch->drivers);
    dispatch->driver_states = grow(dispatch->driver_states, &dispatch->driver_state_capacity,
                                   dispatch->driver_count + 1, sizeof *dispatch->driver_states);
    return dispatch->driver_count++;
}

uint32_t driver_add(struct dispatch *dispatch, uint32_t fleet, const char *driver_id,
                    bool deleted) {
    uint32_t index = driver_slot_take(dispatch);
    hf_driver_t *driver = &dispatch->drivers[index];
    *driver = (hf_driver_t){.fleet = fleet, .rating = HF_DISPATCH_RATING_DEFAULT};
    snprintf(driver->id, sizeof driver->id, "%s", driver_id);
    dispatch->driver_states[index] = (driver_state_t){.counted_status = HF_DRIVER_UNAVAILABLE,
                                                      .deleted = deleted};
    if (deleted) return index;
    dispatch->counts.drivers[HF_DRIVER_UNAVAILABLE]++;
    hf_index_map_insert(&dispatch->driver_ids, driver_hash(fleet, driver_id), index);
    dispatch->fleets[fleet].driver_count++;
    return index;
}

static void driver_slot_free(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(state->deleted && state->references == 0);
    dispatch->drivers[driver].id[0] = '\0';
    state->next_free = dispatch->driver_free_first;
    dispatch->driver_free_first = driver + 1;
}

/* Out of the list of drivers to flush: a deleted driver has no row to write. */
static void dirty_remove(struct dispatch *dispatch, uint32_t driver) {
    if (!dispatch->driver_states[driver].dirty) return;
    dispatch->driver_states[driver].dirty = false;
    for (uint32_t i = 0; i < dispatch->dirty_count; i++) {
        if (dispatch->dirty[i] != driver) continue;
        memmove(dispatch->dirty + i, dispatch->dirty + i + 1,
                (size_t)(dispatch->dirty_count - i - 1) * sizeof dispatch->dirty[0]);
        dispatch->dirty_count--;
        return;
    }
}

void driver_remove(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(!state->deleted && !state->bucket && !dispatch->drivers[driver].offer);
    dirty_remove(dispatch, driver);
    dispatch->counts.drivers[state->counted_status]--;
    dispatch->fleets[dispatch->drivers[driver].fleet].driver_count--;
    state->deleted = true;
    if (++dispatch->driver_ids_stale > hf_index_map_count(&dispatch->driver_ids) / 2)
        driver_ids_rebuild(dispatch);
    if (state->references == 0) driver_slot_free(dispatch, driver);
}

void driver_reference(struct dispatch *dispatch, uint32_t driver) {
    dispatch->driver_states[driver].references++;
}

void driver_release(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(state->references > 0);
    if (--state->references == 0 && state->deleted) driver_slot_free(dispatch, driver);
}

uint32_t fleet_add(struct dispatch *dispatch, const char *fleet_id) {
    dispatch->fleets = grow(dispatch->fleets, &dispatch->fleet_capacity, dispatch->fleet_count + 1,
                            sizeof *dispatch->fleets);
    uint32_t fleet = dispatch->fleet_count++;
    dispatch->fleets[fleet] = (fleet_t){0};
    snprintf(dispatch->fleets[fleet].id, sizeof dispatch->fleets[fleet].id, "%s", fleet_id);
    hf_map_put(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), fleet);
    return fleet;
}

/* ---- rides ---- */

typedef struct ride_key {
    const struct dispatch *dispatch;
    const char *id;
} ride_key_t;

static bool ride_key_match(const void *context, uint32_t index) {
    const ride_key_t *key = context;
    const hf_ride_t *ride = &key->dispatch->rides[index];
    return ride->status != RIDE_FORGOTTEN && strcmp(ride->id, key->id) == 0;
}

const hf_ride_t *hf_dispatch_ride_find(const hf_core_t *core, const char *ride_id,
                                       uint32_t *index) {
    const struct dispatch *dispatch = dispatch_of(core);
    if (!dispatch || !ride_id) return NULL;
    ride_key_t key = {dispatch, ride_id};
    uint32_t found;
    if (!hf_index_map_find(&dispatch->ride_ids, hf_map_hash(ride_id, strlen(ride_id)),
                           ride_key_match, &key, &found))
        return NULL;
    if (index) *index = found;
    return &dispatch->rides[found];
}

static void ride_ids_rebuild(struct dispatch *dispatch) {
    hf_index_map_clear(&dispatch->ride_ids);
    for (uint32_t i = 0; i < dispatch->ride_count; i++) {
        const hf_ride_t *ride = &dispatch->rides[i];
        if (ride->status == RIDE_FORGOTTEN) continue;
        hf_index_map_insert(&dispatch->ride_ids, hf_map_hash(ride->id, strlen(ride->id)), i);
    }
    dispatch->ride_ids_stale = 0;
}

static uint32_t ride_slot_take(struct dispatch *dispatch) {
    if (dispatch->ride_free_first) {
        uint32_t index = dispatch->ride_free_first - 1;
        dispatch->ride_free_first = dispatch->ride_states[index].next_finished;
        return index;
    }
    dispatch->rides = grow(dispatch->rides, &dispatch->ride_capacity, dispatch->ride_count + 1,
                           sizeof *dispatch->rides);
    dispatch->ride_states = grow(dispatch->ride_states, &dispatch->ride_state_capacity,
                                 dispatch->ride_count + 1, sizeof *dispatch->ride_states);
    return dispatch->ride_count++;
}

static char *text_copy(const char *text) {
    size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (!copy) abort();
    memcpy(copy, text, length + 1);
    return copy;
}

uint32_t ride_add(hf_core_t *core, const hf_ride_request_t *request, uint32_t fleet,
                  hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    uint32_t index = ride_slot_take(dispatch);
    hf_ride_t *ride = &dispatch->rides[index];
    *ride = (hf_ride_t){.fleet = fleet,
                        .lat = request->lat,
                        .lng = request->lng,
                        .status = HF_RIDE_SEARCHING,
                        .created_at_ms = now};
    snprintf(ride->id, sizeof ride->id, "%s", request->ride_id);
    /* Its own copy, not the core's string table: that one never shrinks. */
    ride->rider_id = text_copy(request->rider_id);
    ride->radius_m = request->radius_m < 0 ? HF_DISPATCH_RADIUS_M_DEFAULT : request->radius_m;
    ride->offer_ttl_ms = request->offer_ttl_ms < 0 ? HF_DISPATCH_OFFER_TTL_MS_DEFAULT
                                                   : request->offer_ttl_ms;
    dispatch->ride_states[index] = (ride_state_t){.created_seq = ++dispatch->ride_seq};
    dispatch->counts.rides[HF_RIDE_SEARCHING]++;
    dispatch->rides_kept++;
    hf_index_map_insert(&dispatch->ride_ids, hf_map_hash(ride->id, strlen(ride->id)), index);
    return index;
}

void ride_finished_push(struct dispatch *dispatch, uint32_t ride) {
    assert(hf_ride_status_finished(dispatch->rides[ride].status));
    dispatch->ride_states[ride].next_finished = 0;
    if (dispatch->finished_last)
        dispatch->ride_states[dispatch->finished_last - 1].next_finished = ride + 1;
    else dispatch->finished_first = ride + 1;
    dispatch->finished_last = ride + 1;
    dispatch->finished_count++;
}

/* The ride's memory goes, and the drivers it named are named once fewer. */
static void ride_release(struct dispatch *dispatch, uint32_t index) {
    hf_ride_t *ride = &dispatch->rides[index];
    ride_state_t *state = &dispatch->ride_states[index];
    for (uint32_t i = 0; i < state->excluded_count; i++)
        driver_release(dispatch, state->excluded[i] & ~EXCLUDED_LAPSED);
    if (ride->driver) driver_release(dispatch, ride->driver - 1);
    free(state->excluded);
    free((char *)ride->rider_id);
    state->excluded = NULL;
    state->excluded_count = state->excluded_capacity = 0;
    ride->rider_id = NULL;
    ride->driver = 0;
}

/* ---- the filter of forgotten ids: 3 probes by double hashing of a 64-bit FNV-1a ---- */

#define FILTER_PROBES 3

static uint64_t id_hash64(const char *id) {
    uint64_t hash = 14695981039346656037ull;
    for (const unsigned char *c = (const unsigned char *)id; *c; c++)
        hash = (hash ^ *c) * 1099511628211ull;
    return hash;
}

static uint32_t filter_probe(uint64_t hash, uint32_t probe) {
    uint32_t low = (uint32_t)hash, high = (uint32_t)(hash >> 32) | 1u;
    return (low + probe * high) & (HF_DISPATCH_FORGOTTEN_FILTER_BITS - 1);
}

static void filter_add(struct dispatch *dispatch, const char *id) {
    if (!dispatch->forgotten_filter) {
        dispatch->forgotten_filter = calloc(HF_DISPATCH_FORGOTTEN_FILTER_BITS / 64,
                                            sizeof(uint64_t));
        if (!dispatch->forgotten_filter) abort();
    }
    uint64_t hash = id_hash64(id);
    for (uint32_t probe = 0; probe < FILTER_PROBES; probe++) {
        uint32_t bit = filter_probe(hash, probe);
        dispatch->forgotten_filter[bit / 64] |= 1ull << (bit % 64);
    }
}

bool hf_dispatch_ride_maybe_forgotten(const hf_core_t *core, const char *ride_id) {
    const struct dispatch *dispatch = dispatch_of(core);
    if (!dispatch || !dispatch->forgotten_filter || !ride_id) return false;
    uint64_t hash = id_hash64(ride_id);
    for (uint32_t probe = 0; probe < FILTER_PROBES; probe++) {
        uint32_t bit = filter_probe(hash, probe);
        if (!(dispatch->forgotten_filter[bit / 64] & 1ull << (bit % 64))) return false;
    }
    return true;
}

static void finished_forget_first(struct dispatch *dispatch) {
    uint32_t index = dispatch->finished_first - 1;
    hf_ride_t *ride = &dispatch->rides[index];
    ride_state_t *state = &dispatch->ride_states[index];
    dispatch->finished_first = state->next_finished;
    if (!dispatch->finished_first) dispatch->finished_last = 0;
    dispatch->finished_count--;
    ride_release(dispatch, index);
    dispatch->counts.rides[ride->status]--;
    dispatch->forgotten_rides[ride->status]++;
    dispatch->forgotten++;
    dispatch->rides_kept--;
    filter_add(dispatch, ride->id);
    ride->status = RIDE_FORGOTTEN;
    ride->id[0] = '\0';
    state->next_finished = dispatch->ride_free_first;
    dispatch->ride_free_first = index + 1;
    if (++dispatch->ride_ids_stale > hf_index_map_count(&dispatch->ride_ids) / 2)
        ride_ids_rebuild(dispatch);
}

uint32_t rides_finished_evict(struct dispatch *dispatch, uint64_t durable_changes) {
    uint32_t forgotten = 0;
    while (dispatch->finished_count > dispatch->finished_max &&
           dispatch->ride_states[dispatch->finished_first - 1].last_change <= durable_changes) {
        finished_forget_first(dispatch);
        forgotten++;
    }
    return forgotten;
}

uint32_t dispatch_evict(hf_core_t *core, uint64_t durable_changes) {
    return core->dispatch ? rides_finished_evict(core->dispatch, durable_changes) : 0;
}

void hf_dispatch_set_finished_max(hf_core_t *core, uint32_t finished_max) {
    dispatch_make(core)->finished_max = finished_max;
}

uint32_t hf_dispatch_rides_finished(const hf_core_t *core) {
    return core->dispatch ? core->dispatch->finished_count : 0;
}

uint64_t hf_dispatch_rides_forgotten(const hf_core_t *core) {
    return core->dispatch ? core->dispatch->forgotten : 0;
}

void slots_free(struct dispatch *dispatch) {
    free(dispatch->forgotten_filter);
    for (uint32_t i = 0; i < dispatch->ride_count; i++) {
        free(dispatch->ride_states[i].excluded);
        free((char *)dispatch->rides[i].rider_id);
    }
}

/* ---- pages of drivers, in id order ---- */

/* A max-heap of the smallest ids seen, by bytewise order of the drivers' ids. */
typedef struct page_heap {
    const struct dispatch *dispatch;
    uint32_t *items;
    uint32_t count, capacity;
} page_heap_t;

static int id_compare(const page_heap_t *heap, uint32_t a, uint32_t b) {
    return strcmp(heap->dispatch->drivers[a].id, heap->dispatch->drivers[b].id);
}

static void heap_swap(uint32_t *items, uint32_t a, uint32_t b) {
    uint32_t item = items[a];
    items[a] = items[b];
    items[b] = item;
}

static void heap_sift_down(page_heap_t *heap, uint32_t at) {
    for (;;) {
        uint32_t largest = at, left = 2 * at + 1, right = left + 1;
        if (left < heap->count && id_compare(heap, heap->items[left], heap->items[largest]) > 0)
            largest = left;
        if (right < heap->count && id_compare(heap, heap->items[right], heap->items[largest]) > 0)
            largest = right;
        if (largest == at) return;
        heap_swap(heap->items, at, largest);
        at = largest;
    }
}

static void heap_offer(page_heap_t *heap, uint32_t driver) {
    if (heap->count == heap->capacity) {
        if (id_compare(heap, driver, heap->items[0]) >= 0) return;
        heap->items[0] = driver;
        heap_sift_down(heap, 0);
        return;
    }
    uint32_t at = heap->count++;
    heap->items[at] = driver;
    while (at > 0 && id_compare(heap, heap->items[(at - 1) / 2], heap->items[at]) < 0) {
        heap_swap(heap->items, at, (at - 1) / 2);
        at = (at - 1) / 2;
    }
}

static bool driver_listed(const struct dispatch *dispatch, uint32_t index, uint32_t fleet,
                          int status, const char *after_id) {
    const hf_driver_t *driver = &dispatch->drivers[index];
    if (dispatch->driver_states[index].deleted || driver->fleet != fleet) return false;
    if (status >= 0 && (int)hf_dispatch_driver_status(driver) != status) return false;
    return !after_id || strcmp(driver->id, after_id) > 0;
}

uint32_t hf_dispatch_drivers_page(const hf_core_t *core, uint32_t fleet, int status,
                                  const char *after_id, uint32_t limit, uint32_t *indexes,
                                  bool *more) {
    const struct dispatch *dispatch = dispatch_of(core);
    *more = false;
    if (!dispatch || limit == 0) return 0;
    /* One more than the page: whether it is there tells whether more follow. */
    uint32_t *items = calloc((size_t)limit + 1, sizeof *items);
    if (!items) abort();
    page_heap_t heap = {dispatch, items, 0, limit + 1};
    for (uint32_t i = 0; i < dispatch->driver_count; i++)
        if (driver_listed(dispatch, i, fleet, status, after_id)) heap_offer(&heap, i);
    *more = heap.count > limit;
    /* Emptied from the top, largest first: the page fills from its end. */
    uint32_t count = heap.count > limit ? limit : heap.count;
    if (*more) {
        heap.items[0] = heap.items[--heap.count];
        heap_sift_down(&heap, 0);
    }
    for (uint32_t filled = count; filled > 0; filled--) {
        indexes[filled - 1] = heap.items[0];
        heap.items[0] = heap.items[--heap.count];
        heap_sift_down(&heap, 0);
    }
    free(items);
    return count;
}
