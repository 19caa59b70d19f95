/* The grid of free drivers and the ring search for a ride's best candidate (internal.h).
 *
 * Only free drivers (available, holding no offer) are filed: a search reads no driver it
 * could not offer the ride to, however many are busy. A cell's bucket keeps each driver's
 * position beside its index, so a search reads a cell's drivers in one sweep and touches a
 * driver's record only for one that may beat the best so far.
 *
 * The search widens a span around the ride (geo.h) ring by ring, doubling its distance from
 * one cell on, and reads only the cells the last span did not hold. It stops once the best
 * candidate found is nearer than the span's distance: every cell not read yet is farther
 * than that, so no driver in it can be nearer or tie. The last span reaches radius_m. */
#include "core/dispatch/internal.h"

#include <assert.h>

static uint32_t cell_first(uint32_t fleet, int32_t row) {
    return fleet << ROW_BITS | (uint32_t)row;
}

/* The bucket of a cell, made when missing (a bucket is kept once made, even empty: a city's
 * cells fill again). */
static uint32_t bucket_of_cell(struct dispatch *dispatch, uint32_t fleet, int32_t row,
                               int32_t column) {
    uint32_t index;
    if (hf_pair_map_get(&dispatch->cells, cell_first(fleet, row), (uint32_t)column, &index))
        return index;
    dispatch->buckets = grow(dispatch->buckets, &dispatch->bucket_capacity,
                             dispatch->bucket_count + 1, sizeof *dispatch->buckets);
    index = dispatch->bucket_count++;
    dispatch->buckets[index] = (bucket_t){0};
    hf_pair_map_put(&dispatch->cells, cell_first(fleet, row), (uint32_t)column, index);
    return index;
}

void grid_insert(struct dispatch *dispatch, uint32_t driver) {
    const hf_driver_t *view = &dispatch->drivers[driver];
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(state->bucket == 0);
    int32_t row, column;
    hf_geo_cell_of(view->lat, view->lng, &row, &column);
    uint32_t index = bucket_of_cell(dispatch, view->fleet, row, column);
    bucket_t *bucket = &dispatch->buckets[index];
    bucket->entries = grow(bucket->entries, &bucket->capacity, bucket->count + 1,
                           sizeof *bucket->entries);
    state->bucket = index + 1;
    state->slot = bucket->count;
    state->row = row;
    state->column = column;
    bucket->entries[bucket->count++] = (grid_entry_t){view->lat, view->lng, driver};
}

void grid_remove(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(state->bucket != 0);
    bucket_t *bucket = &dispatch->buckets[state->bucket - 1];
    grid_entry_t *last = &bucket->entries[--bucket->count];
    if (state->slot != bucket->count) {
        bucket->entries[state->slot] = *last;
        dispatch->driver_states[last->driver].slot = state->slot;
    }
    state->bucket = 0;
}

void grid_move(struct dispatch *dispatch, uint32_t driver) {
    const hf_driver_t *view = &dispatch->drivers[driver];
    driver_state_t *state = &dispatch->driver_states[driver];
    assert(state->bucket != 0);
    int32_t row, column;
    hf_geo_cell_of(view->lat, view->lng, &row, &column);
    /* A driver's fleet never changes, so the same cell is the same bucket: no map lookup, and
     * no removal and reinsertion, for a driver that stays in its cell. */
    if (row != state->row || column != state->column) {
        grid_remove(dispatch, driver);
        grid_insert(dispatch, driver);
        return;
    }
    grid_entry_t *entry = &dispatch->buckets[state->bucket - 1].entries[state->slot];
    entry->lat = view->lat;
    entry->lng = view->lng;
}

bool ride_excludes(const struct dispatch *dispatch, uint32_t ride, uint32_t driver, bool *lapsed) {
    const ride_state_t *state = &dispatch->ride_states[ride];
    for (uint32_t i = 0; i < state->excluded_count; i++) {
        if ((state->excluded[i] & ~EXCLUDED_LAPSED) != driver) continue;
        if (lapsed) *lapsed = (state->excluded[i] & EXCLUDED_LAPSED) != 0;
        return true;
    }
    return false;
}

/* What a search looks for and the best found so far. */
typedef struct search {
    const struct dispatch *dispatch;
    uint32_t fleet, ride;
    double lat, lng;
    int64_t radius_m;
    bool found;
    uint32_t driver;
    int64_t distance_m;
    double rating;
} search_t;

/* Whether driver at distance_m beats the best so far: nearer, then higher rating, then a
 * lower id (bytewise). */
static bool better(const search_t *search, const hf_driver_t *driver, int64_t distance_m) {
    if (!search->found) return true;
    if (distance_m != search->distance_m) return distance_m < search->distance_m;
    if (driver->rating != search->rating) return driver->rating > search->rating;
    return strcmp(driver->id, search->dispatch->drivers[search->driver].id) < 0;
}

static void bucket_read(search_t *search, const bucket_t *bucket) {
    for (uint32_t i = 0; i < bucket->count; i++) {
        const grid_entry_t *entry = &bucket->entries[i];
        int64_t distance = hf_geo_distance_whole_m(search->lat, search->lng, entry->lat,
                                                   entry->lng);
        if (distance > search->radius_m || (search->found && distance > search->distance_m))
            continue;
        const hf_driver_t *driver = &search->dispatch->drivers[entry->driver];
        if (!better(search, driver, distance)) continue;
        if (search->ride != UINT32_MAX &&
            ride_excludes(search->dispatch, search->ride, entry->driver, NULL))
            continue;
        search->found = true;
        search->driver = entry->driver;
        search->distance_m = distance;
        search->rating = driver->rating;
    }
}

/* Reads the cells of span that inner (NULL: none) does not hold. */
static void ring_read(search_t *search, const hf_geo_span_t *span, const hf_geo_span_t *inner) {
    const struct dispatch *dispatch = search->dispatch;
    for (int32_t row = span->row_first; row <= span->row_last; row++) {
        int32_t first, count, columns = hf_geo_row_columns(row);
        hf_geo_span_columns(span, row, &first, &count);
        for (int32_t i = 0; i < count; i++) {
            int32_t column = (first + i) % columns;
            if (inner && hf_geo_span_has(inner, row, column)) continue;
            uint32_t index;
            if (hf_pair_map_get(&dispatch->cells, cell_first(search->fleet, row), (uint32_t)column,
                                &index))
                bucket_read(search, &dispatch->buckets[index]);
        }
    }
}

bool candidate_find(const struct dispatch *dispatch, uint32_t fleet, double lat, double lng,
                    int64_t radius_m, uint32_t ride, uint32_t *driver, int64_t *distance_m) {
    search_t search = {.dispatch = dispatch,
                       .fleet = fleet,
                       .ride = ride,
                       .lat = lat,
                       .lng = lng,
                       .radius_m = radius_m};
    /* A driver at whole metres radius_m is at most radius_m + 0.5 away. */
    double limit = (double)radius_m + 0.5;
    hf_geo_span_t spans[2];
    hf_geo_span_t *inner = NULL, *outer = &spans[0];
    double reach = HF_GEO_CELL_M;
    for (;;) {
        if (reach > limit) reach = limit;
        hf_geo_span_of(lat, lng, reach, outer);
        ring_read(&search, outer, inner);
        /* Every driver not read is farther than reach: none can be nearer than the best, nor
         * tie it, once the best's whole metres round from below reach. */
        if ((search.found && (double)search.distance_m + 0.5 < reach) || reach >= limit) break;
        inner = outer;
        outer = outer == &spans[0] ? &spans[1] : &spans[0];
        reach *= 2;
    }
    if (!search.found) return false;
    *driver = search.driver;
    *distance_m = search.distance_m;
    return true;
}
