/* Dispatch's commands (dispatch.h): drivers' PUTs, rides, offers and how they move on. */
#include "core/dispatch/internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

/* ---- the state: made at the first command, freed with the core ---- */

struct dispatch *dispatch_make(hf_core_t *core) {
    if (core->dispatch) return core->dispatch;
    struct dispatch *dispatch = calloc(1, sizeof *dispatch);
    if (!dispatch) abort();
    hf_map_init(&dispatch->fleet_ids);
    hf_map_init(&dispatch->driver_ids);
    hf_map_init(&dispatch->ride_ids);
    hf_pair_map_init(&dispatch->cells);
    hf_buffer_init(&dispatch->key);
    hf_buffer_init(&dispatch->declined);
    hf_buffer_init(&dispatch->lapsed);
    core->dispatch = dispatch;
    return dispatch;
}

void dispatch_free(hf_core_t *core) {
    struct dispatch *dispatch = core->dispatch;
    if (!dispatch) return;
    for (uint32_t i = 0; i < dispatch->ride_count; i++) free(dispatch->ride_states[i].excluded);
    for (uint32_t i = 0; i < dispatch->bucket_count; i++) free(dispatch->buckets[i].entries);
    free(dispatch->fleets);
    free(dispatch->drivers);
    free(dispatch->driver_states);
    free(dispatch->rides);
    free(dispatch->ride_states);
    free(dispatch->buckets);
    free(dispatch->dirty);
    hf_map_free(&dispatch->fleet_ids);
    hf_map_free(&dispatch->driver_ids);
    hf_map_free(&dispatch->ride_ids);
    hf_pair_map_free(&dispatch->cells);
    hf_buffer_free(&dispatch->key);
    hf_buffer_free(&dispatch->declined);
    hf_buffer_free(&dispatch->lapsed);
    free(dispatch);
    core->dispatch = NULL;
}

/* ---- lookups ---- */

bool hf_dispatch_fleet_find(const hf_core_t *core, const char *fleet_id, uint32_t *fleet) {
    const struct dispatch *dispatch = dispatch_of(core);
    return dispatch && fleet_id && hf_map_get(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), fleet);
}

/* The key of a driver in driver_ids: drivers' ids are unique per fleet only. */
static void driver_key(struct dispatch *dispatch, uint32_t fleet, const char *driver_id) {
    hf_buffer_reset(&dispatch->key);
    hf_buffer_printf(&dispatch->key, "%u/%s", (unsigned)fleet, driver_id);
}

uint32_t driver_key_find(struct dispatch *dispatch, uint32_t fleet, const char *driver_id) {
    driver_key(dispatch, fleet, driver_id);
    uint32_t index;
    if (!hf_map_get(&dispatch->driver_ids, dispatch->key.data, dispatch->key.length, &index))
        return NO_INDEX;
    return index;
}

const hf_driver_t *hf_dispatch_driver_find(const hf_core_t *core, const char *fleet_id,
                                           const char *driver_id, uint32_t *index) {
    uint32_t fleet;
    if (!hf_dispatch_fleet_find(core, fleet_id, &fleet)) return NULL;
    uint32_t found = driver_key_find(core->dispatch, fleet, driver_id);
    if (found == NO_INDEX) return NULL;
    if (index) *index = found;
    return &core->dispatch->drivers[found];
}

const hf_driver_t *hf_dispatch_driver_at(const hf_core_t *core, uint32_t index) {
    assert(core->dispatch && index < core->dispatch->driver_count);
    return &core->dispatch->drivers[index];
}

uint32_t hf_dispatch_driver_count(const hf_core_t *core) {
    return core->dispatch ? core->dispatch->driver_count : 0;
}

const char *hf_dispatch_fleet_id(const hf_core_t *core, uint32_t fleet) {
    assert(core->dispatch && fleet < core->dispatch->fleet_count);
    return core->dispatch->fleets[fleet].id;
}

const hf_ride_t *hf_dispatch_ride_find(const hf_core_t *core, const char *ride_id,
                                       uint32_t *index) {
    const struct dispatch *dispatch = dispatch_of(core);
    uint32_t found;
    if (!dispatch || !ride_id || !hf_map_get(&dispatch->ride_ids, ride_id, strlen(ride_id), &found))
        return NULL;
    if (index) *index = found;
    return &dispatch->rides[found];
}

const hf_ride_t *hf_dispatch_ride_at(const hf_core_t *core, uint32_t index) {
    assert(core->dispatch && index < core->dispatch->ride_count);
    return &core->dispatch->rides[index];
}

uint32_t hf_dispatch_ride_count(const hf_core_t *core) {
    return core->dispatch ? core->dispatch->ride_count : 0;
}

bool hf_dispatch_ride_excluded(const hf_core_t *core, uint32_t ride, uint32_t driver,
                               bool *lapsed) {
    return ride_excludes(core->dispatch, ride, driver, lapsed);
}

uint64_t hf_dispatch_ride_change(const hf_core_t *core, uint32_t index) {
    return core->dispatch->ride_states[index].last_change;
}

uint64_t hf_dispatch_driver_change(const hf_core_t *core, uint32_t index) {
    return core->dispatch->driver_states[index].last_change;
}

bool hf_dispatch_candidate(const hf_core_t *core, uint32_t fleet, double lat, double lng,
                           int64_t radius_m, uint32_t ride, uint32_t *driver,
                           int64_t *distance_m) {
    if (!core->dispatch || fleet >= core->dispatch->fleet_count) return false;
    return candidate_find(core->dispatch, fleet, lat, lng, radius_m, ride, driver, distance_m);
}

/* ---- the searching rides of a fleet, oldest first ----
 *
 * Ordered by creation (a ride's index), whenever they began searching: a ride whose driver
 * declined keeps its place among the older ones, and the order is the same after a restart,
 * which restores rides in creation order. A new ride goes at the end at once; one moving back
 * to searching walks back from the end, over at most the fleet's searching rides. */

void searching_append(struct dispatch *dispatch, uint32_t ride) {
    ride_state_t *state = &dispatch->ride_states[ride];
    fleet_t *fleet = &dispatch->fleets[dispatch->rides[ride].fleet];
    assert(!state->in_searching);
    uint32_t after = fleet->searching_last; /* ride index + 1, 0: insert first */
    while (after && after - 1 > ride) after = dispatch->ride_states[after - 1].previous_searching;
    uint32_t before = after ? dispatch->ride_states[after - 1].next_searching
                            : fleet->searching_first;
    state->in_searching = true;
    state->previous_searching = after;
    state->next_searching = before;
    if (after) dispatch->ride_states[after - 1].next_searching = ride + 1;
    else fleet->searching_first = ride + 1;
    if (before) dispatch->ride_states[before - 1].previous_searching = ride + 1;
    else fleet->searching_last = ride + 1;
    fleet->searching_count++;
}

static void searching_remove(struct dispatch *dispatch, uint32_t ride) {
    ride_state_t *state = &dispatch->ride_states[ride];
    fleet_t *fleet = &dispatch->fleets[dispatch->rides[ride].fleet];
    if (!state->in_searching) return;
    if (state->previous_searching)
        dispatch->ride_states[state->previous_searching - 1].next_searching = state->next_searching;
    else fleet->searching_first = state->next_searching;
    if (state->next_searching)
        dispatch->ride_states[state->next_searching - 1].previous_searching =
            state->previous_searching;
    else fleet->searching_last = state->previous_searching;
    state->in_searching = false;
    state->previous_searching = state->next_searching = 0;
    fleet->searching_count--;
}

/* ---- offers ---- */

static bool driver_is_free(const hf_driver_t *driver) { return driver->available && !driver->offer; }

/* Files the driver in the grid, or takes it out, as it is free or not (and moves it). */
static void grid_sync(struct dispatch *dispatch, uint32_t driver) {
    bool filed = dispatch->driver_states[driver].bucket != 0;
    bool free_now = driver_is_free(&dispatch->drivers[driver]);
    if (free_now && filed) grid_move(dispatch, driver);
    else if (free_now) grid_insert(dispatch, driver);
    else if (filed) grid_remove(dispatch, driver);
}

/* After every change of an offer: the timer's top is a live deadline again, whatever its kind
 * (hf_core_next_expiry reads it). */
static void timer_prune(hf_core_t *core) { hf_timer_prune(&core->timer, timer_entry_stale, core); }

bool dispatch_offer_stale(const hf_core_t *core, const hf_timer_entry_t *entry) {
    const hf_ride_t *ride = &core->dispatch->rides[entry->index];
    return ride->status != HF_RIDE_OFFERED || ride->offer_expires_at_ms != entry->deadline_ms;
}

static void offer_make(hf_core_t *core, uint32_t ride_index, uint32_t driver_index,
                       int64_t distance_m, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[ride_index];
    hf_driver_t *driver = &dispatch->drivers[driver_index];
    assert(driver_is_free(driver) && ride->status != HF_RIDE_OFFERED);
    searching_remove(dispatch, ride_index);
    ride->status = HF_RIDE_OFFERED;
    ride->offer_driver = driver_index + 1;
    ride->offer_distance_m = distance_m;
    ride->offer_expires_at_ms = now + ride->offer_ttl_ms;
    driver->offer = ride_index + 1;
    grid_sync(dispatch, driver_index);
    hf_timer_push(&core->timer, ride->offer_expires_at_ms, HF_TIMER_OFFER, ride_index);
    timer_prune(core);
    /* The driver's row first: the ride's names it, and a restart must find it. */
    record_driver(core, driver_index, now);
    record_ride(core, ride_index, now);
}

/* The ride (not offered) goes to its best candidate, or searches. A ride that has excluded
 * as many drivers as it may stays searching without further offers (limits.h). */
static void ride_move_on(hf_core_t *core, uint32_t ride_index, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[ride_index];
    ride->status = HF_RIDE_SEARCHING;
    ride->offer_driver = 0;
    ride->offer_distance_m = 0;
    ride->offer_expires_at_ms = 0;
    bool exhausted = dispatch->ride_states[ride_index].excluded_count >= HF_DISPATCH_RIDE_EXCLUDED_MAX;
    uint32_t driver;
    int64_t distance;
    if (!exhausted && candidate_find(dispatch, ride->fleet, ride->lat, ride->lng, ride->radius_m,
                                     ride_index, &driver, &distance)) {
        offer_make(core, ride_index, driver, distance, now);
        return;
    }
    if (!exhausted && !dispatch->ride_states[ride_index].in_searching)
        searching_append(dispatch, ride_index);
    record_ride(core, ride_index, now);
}

/* A driver just free (or moving while free): the oldest searching ride of its fleet it fits
 * is offered to it. Searching rides have no free candidate, so this driver is the only one. */
static void driver_match(hf_core_t *core, uint32_t driver_index, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    const hf_driver_t *driver = &dispatch->drivers[driver_index];
    if (!driver_is_free(driver)) return;
    for (uint32_t next = dispatch->fleets[driver->fleet].searching_first; next;) {
        uint32_t ride_index = next - 1;
        const hf_ride_t *ride = &dispatch->rides[ride_index];
        next = dispatch->ride_states[ride_index].next_searching;
        int64_t distance = hf_geo_distance_whole_m(ride->lat, ride->lng, driver->lat, driver->lng);
        if (distance > ride->radius_m || ride_excludes(dispatch, ride_index, driver_index, NULL))
            continue;
        offer_make(core, ride_index, driver_index, distance, now);
        return;
    }
}

static void exclude(struct dispatch *dispatch, uint32_t ride, uint32_t driver, bool lapsed) {
    ride_state_t *state = &dispatch->ride_states[ride];
    assert(state->excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX);
    state->excluded = grow(state->excluded, &state->excluded_capacity, state->excluded_count + 1,
                           sizeof *state->excluded);
    state->excluded[state->excluded_count++] = driver | (lapsed ? EXCLUDED_LAPSED : 0);
}

/* The ride's offered driver declined it or let it lapse: never offered it again, free, and
 * the ride moves on before the driver looks for another. */
static void offer_end(hf_core_t *core, uint32_t ride_index, bool lapsed, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    uint32_t driver_index = dispatch->rides[ride_index].offer_driver - 1;
    exclude(dispatch, ride_index, driver_index, lapsed);
    dispatch->drivers[driver_index].offer = 0;
    grid_sync(dispatch, driver_index);
    ride_move_on(core, ride_index, now);
    driver_match(core, driver_index, now);
    timer_prune(core);
}

void dispatch_offer_lapse(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now) {
    offer_end(core, entry->index, true, now);
}

uint32_t hf_dispatch_rematch(hf_core_t *core, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    uint32_t offers = 0;
    for (uint32_t fleet = 0; dispatch && fleet < dispatch->fleet_count; fleet++) {
        for (uint32_t next = dispatch->fleets[fleet].searching_first; next;) {
            uint32_t ride_index = next - 1;
            const hf_ride_t *ride = &dispatch->rides[ride_index];
            next = dispatch->ride_states[ride_index].next_searching;
            uint32_t driver;
            int64_t distance;
            if (!candidate_find(dispatch, fleet, ride->lat, ride->lng, ride->radius_m, ride_index,
                                &driver, &distance))
                continue;
            offer_make(core, ride_index, driver, distance, now);
            offers++;
        }
    }
    return offers;
}

/* ---- drivers ---- */

static bool coordinates_valid(double lat, double lng, hf_error_detail_t *detail) {
    const char *field = NULL;
    if (!isfinite(lat) || lat < -90 || lat > 90) field = "lat";
    else if (!isfinite(lng) || lng < -180 || lng > 180) field = "lng";
    if (field) invalid(detail, field);
    return field == NULL;
}

static hf_error_t driver_update_check(const hf_driver_update_t *update, hf_error_detail_t *detail) {
    if (!update->fleet_id || !hf_core_id_valid(update->fleet_id)) return invalid(detail, "fleet");
    if (!update->driver_id || !hf_core_id_valid(update->driver_id))
        return invalid(detail, "driver_id");
    if (!coordinates_valid(update->lat, update->lng, detail)) return HF_ERROR_INVALID_REQUEST;
    if (update->has_rating &&
        (!isfinite(update->rating) || update->rating < 0 || update->rating > 5))
        return invalid(detail, "rating");
    return HF_OK;
}

static uint32_t fleet_add(struct dispatch *dispatch, const char *fleet_id) {
    dispatch->fleets = grow(dispatch->fleets, &dispatch->fleet_capacity, dispatch->fleet_count + 1,
                            sizeof *dispatch->fleets);
    uint32_t fleet = dispatch->fleet_count++;
    dispatch->fleets[fleet] = (fleet_t){0};
    snprintf(dispatch->fleets[fleet].id, sizeof dispatch->fleets[fleet].id, "%s", fleet_id);
    hf_map_put(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), fleet);
    return fleet;
}

/* A new driver, unavailable and at (0, 0) until its first values are set. */
static uint32_t driver_add(struct dispatch *dispatch, uint32_t fleet, const char *driver_id) {
    dispatch->drivers = grow(dispatch->drivers, &dispatch->driver_capacity,
                             dispatch->driver_count + 1, sizeof *dispatch->drivers);
    dispatch->driver_states = grow(dispatch->driver_states, &dispatch->driver_state_capacity,
                                   dispatch->driver_count + 1, sizeof *dispatch->driver_states);
    uint32_t index = dispatch->driver_count++;
    hf_driver_t *driver = &dispatch->drivers[index];
    *driver = (hf_driver_t){.fleet = fleet, .rating = HF_DISPATCH_RATING_DEFAULT};
    snprintf(driver->id, sizeof driver->id, "%s", driver_id);
    dispatch->driver_states[index] = (driver_state_t){0};
    driver_key(dispatch, fleet, driver_id);
    hf_map_put(&dispatch->driver_ids, dispatch->key.data, dispatch->key.length, index);
    dispatch->fleets[fleet].driver_count++;
    return index;
}

/* The driver the update names, made (with its fleet) when new; NO_INDEX at a limit. */
static uint32_t driver_intern(struct dispatch *dispatch, const hf_driver_update_t *update) {
    uint32_t fleet, index;
    bool fleet_known = hf_map_get(&dispatch->fleet_ids, update->fleet_id,
                                  strlen(update->fleet_id), &fleet);
    if (fleet_known && (index = driver_key_find(dispatch, fleet, update->driver_id)) != NO_INDEX)
        return index;
    if (!fleet_known && dispatch->fleet_count >= HF_DISPATCH_FLEETS_MAX) return NO_INDEX;
    if (fleet_known && dispatch->fleets[fleet].driver_count >= HF_DISPATCH_FLEET_DRIVERS_MAX)
        return NO_INDEX;
    if (!fleet_known) fleet = fleet_add(dispatch, update->fleet_id);
    index = driver_add(dispatch, fleet, update->driver_id);
    dispatch->drivers[index].available = true;
    return index;
}

hf_error_t hf_dispatch_driver_put(hf_core_t *core, const hf_driver_update_t *update,
                                  hf_time_ms_t now, uint32_t *driver_index,
                                  hf_error_detail_t *detail) {
    hf_core_advance(core, now);
    hf_error_t error = driver_update_check(update, detail);
    if (error) return error;
    struct dispatch *dispatch = dispatch_make(core);
    uint32_t index = driver_intern(dispatch, update);
    if (index == NO_INDEX) return HF_ERROR_CAPACITY;
    hf_driver_t *driver = &dispatch->drivers[index];
    driver->lat = update->lat;
    driver->lng = update->lng;
    if (update->has_rating) driver->rating = update->rating;
    if (update->has_available) {
        driver->available = update->available;
        /* Available again: the ride assigned to it is done, as far as dispatch goes. */
        if (update->available) driver->assigned = 0;
    }
    grid_sync(dispatch, index);
    driver_mark_dirty(dispatch, index);
    if (dispatch->fleets[driver->fleet].searching_count > 0) driver_match(core, index, now);
    *driver_index = index;
    return HF_OK;
}

/* ---- rides ---- */

static hf_error_t ride_request_check(const hf_ride_request_t *request, hf_error_detail_t *detail) {
    if (!request->ride_id || !hf_core_id_valid(request->ride_id)) return invalid(detail, "ride_id");
    size_t rider_length = request->rider_id ? strlen(request->rider_id) : 0;
    if (rider_length == 0 || rider_length > HF_USER_ID_SIZE_MAX) return invalid(detail, "rider_id");
    if (!coordinates_valid(request->lat, request->lng, detail)) return HF_ERROR_INVALID_REQUEST;
    if (request->radius_m == 0 || request->radius_m > HF_DISPATCH_RADIUS_M_MAX)
        return invalid(detail, "radius_m");
    if (request->offer_ttl_ms == 0 || request->offer_ttl_ms > HF_DISPATCH_OFFER_TTL_MS_MAX)
        return invalid(detail, "offer_ttl_s");
    if (!request->fleet_id || !hf_core_id_valid(request->fleet_id)) return invalid(detail, "fleet");
    return HF_OK;
}

static uint32_t ride_add(hf_core_t *core, const hf_ride_request_t *request, uint32_t fleet,
                         hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    dispatch->rides = grow(dispatch->rides, &dispatch->ride_capacity, dispatch->ride_count + 1,
                           sizeof *dispatch->rides);
    dispatch->ride_states = grow(dispatch->ride_states, &dispatch->ride_state_capacity,
                                 dispatch->ride_count + 1, sizeof *dispatch->ride_states);
    uint32_t index = dispatch->ride_count++;
    hf_ride_t *ride = &dispatch->rides[index];
    *ride = (hf_ride_t){.fleet = fleet, .lat = request->lat, .lng = request->lng,
                        .status = HF_RIDE_SEARCHING, .created_at_ms = now};
    snprintf(ride->id, sizeof ride->id, "%s", request->ride_id);
    ride->rider = string_store(core, request->rider_id, strlen(request->rider_id));
    ride->radius_m = request->radius_m < 0 ? HF_DISPATCH_RADIUS_M_DEFAULT : request->radius_m;
    ride->offer_ttl_ms =
        request->offer_ttl_ms < 0 ? HF_DISPATCH_OFFER_TTL_MS_DEFAULT : request->offer_ttl_ms;
    dispatch->ride_states[index] = (ride_state_t){0};
    hf_map_put(&dispatch->ride_ids, ride->id, strlen(ride->id), index);
    return index;
}

hf_error_t hf_dispatch_ride_create(hf_core_t *core, const hf_ride_request_t *request,
                                   hf_time_ms_t now, uint32_t *ride_index,
                                   hf_error_detail_t *detail) {
    hf_core_advance(core, now);
    hf_error_t error = ride_request_check(request, detail);
    if (error) return error;
    uint32_t fleet;
    if (!hf_dispatch_fleet_find(core, request->fleet_id, &fleet)) return HF_ERROR_FLEET_NOT_FOUND;
    if (hf_dispatch_ride_find(core, request->ride_id, NULL)) return HF_ERROR_RIDE_EXISTS;
    struct dispatch *dispatch = core->dispatch;
    if (dispatch->ride_count >= HF_DISPATCH_RIDES_MAX ||
        dispatch->fleets[fleet].searching_count >= HF_DISPATCH_FLEET_SEARCHING_MAX)
        return HF_ERROR_CAPACITY;
    uint32_t index = ride_add(core, request, fleet, now);
    ride_move_on(core, index, now);
    *ride_index = index;
    return HF_OK;
}

/* The ride and the driver a driver's answer names (the driver NO_INDEX when the fleet has no
 * such driver); the error when the ride is unknown or the id malformed. */
static hf_error_t answer_find(hf_core_t *core, const char *ride_id, const char *driver_id,
                              uint32_t *ride_index, uint32_t *driver_index) {
    if (!hf_dispatch_ride_find(core, ride_id, ride_index)) return HF_ERROR_RIDE_NOT_FOUND;
    if (!driver_id || !hf_core_id_valid(driver_id)) return HF_ERROR_INVALID_REQUEST;
    *driver_index = driver_key_find(core->dispatch, core->dispatch->rides[*ride_index].fleet,
                                    driver_id);
    return HF_OK;
}

/* Why this driver may not answer the ride: its offer lapsed, or it holds none. */
static hf_error_t answer_refusal(const hf_core_t *core, uint32_t ride, uint32_t driver) {
    bool lapsed = false;
    if (driver != NO_INDEX && ride_excludes(core->dispatch, ride, driver, &lapsed) && lapsed)
        return HF_ERROR_OFFER_EXPIRED;
    return HF_ERROR_NOT_OFFERED;
}

hf_error_t hf_dispatch_accept(hf_core_t *core, const char *ride_id, const char *driver_id,
                              hf_time_ms_t now, uint32_t *ride_index) {
    hf_core_advance(core, now);
    uint32_t driver_index;
    hf_error_t error = answer_find(core, ride_id, driver_id, ride_index, &driver_index);
    if (error) return error;
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[*ride_index];
    if (driver_index != NO_INDEX && ride->status == HF_RIDE_ASSIGNED &&
        ride->driver == driver_index + 1)
        return HF_OK;
    if (driver_index == NO_INDEX || ride->status != HF_RIDE_OFFERED ||
        ride->offer_driver != driver_index + 1)
        return answer_refusal(core, *ride_index, driver_index);
    hf_driver_t *driver = &dispatch->drivers[driver_index];
    ride->status = HF_RIDE_ASSIGNED;
    ride->driver = driver_index + 1;
    ride->offer_driver = 0;
    driver->offer = 0;
    driver->available = false;
    driver->assigned = *ride_index + 1;
    grid_sync(dispatch, driver_index);
    timer_prune(core);
    record_driver(core, driver_index, now);
    record_ride(core, *ride_index, now);
    return HF_OK;
}

hf_error_t hf_dispatch_decline(hf_core_t *core, const char *ride_id, const char *driver_id,
                               hf_time_ms_t now, uint32_t *ride_index) {
    hf_core_advance(core, now);
    uint32_t driver_index;
    hf_error_t error = answer_find(core, ride_id, driver_id, ride_index, &driver_index);
    if (error) return error;
    const hf_ride_t *ride = &core->dispatch->rides[*ride_index];
    if (driver_index == NO_INDEX || ride->status != HF_RIDE_OFFERED ||
        ride->offer_driver != driver_index + 1)
        return answer_refusal(core, *ride_index, driver_index);
    offer_end(core, *ride_index, false, now);
    timer_prune(core);
    return HF_OK;
}

hf_error_t hf_dispatch_cancel(hf_core_t *core, const char *ride_id, hf_time_ms_t now,
                              uint32_t *ride_index) {
    hf_core_advance(core, now);
    if (!hf_dispatch_ride_find(core, ride_id, ride_index)) return HF_ERROR_RIDE_NOT_FOUND;
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[*ride_index];
    if (ride->status == HF_RIDE_CANCELLED) return HF_OK;
    uint32_t freed = NO_INDEX;
    if (ride->status == HF_RIDE_OFFERED) {
        freed = ride->offer_driver - 1;
        dispatch->drivers[freed].offer = 0;
    } else if (ride->status == HF_RIDE_ASSIGNED &&
               dispatch->drivers[ride->driver - 1].assigned == *ride_index + 1) {
        freed = ride->driver - 1;
        dispatch->drivers[freed].assigned = 0;
        dispatch->drivers[freed].available = true;
    }
    searching_remove(dispatch, *ride_index);
    ride->status = HF_RIDE_CANCELLED;
    ride->offer_driver = 0;
    ride->offer_distance_m = 0;
    ride->offer_expires_at_ms = 0;
    timer_prune(core);
    record_ride(core, *ride_index, now);
    if (freed == NO_INDEX) return HF_OK;
    grid_sync(dispatch, freed);
    record_driver(core, freed, now);
    driver_match(core, freed, now);
    return HF_OK;
}

/* ---- restore ---- */

static uint32_t fleet_intern(struct dispatch *dispatch, const char *fleet_id) {
    uint32_t fleet;
    if (hf_map_get(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), &fleet)) return fleet;
    return fleet_add(dispatch, fleet_id);
}

/* A driver a stored ride names; one whose row was never flushed is made, unavailable. */
static uint32_t stored_driver_intern(struct dispatch *dispatch, uint32_t fleet, const char *id) {
    uint32_t index = driver_key_find(dispatch, fleet, id);
    return index != NO_INDEX ? index : driver_add(dispatch, fleet, id);
}

hf_error_t hf_dispatch_restore_driver(hf_core_t *core, const hf_stored_driver_t *stored) {
    if (!stored->fleet_id || !hf_core_id_valid(stored->fleet_id) || !stored->driver_id ||
        !hf_core_id_valid(stored->driver_id) || !coordinates_valid(stored->lat, stored->lng, NULL))
        return HF_ERROR_INVALID_REQUEST;
    struct dispatch *dispatch = dispatch_make(core);
    uint32_t fleet = fleet_intern(dispatch, stored->fleet_id);
    uint32_t index = stored_driver_intern(dispatch, fleet, stored->driver_id);
    hf_driver_t *driver = &dispatch->drivers[index];
    driver->lat = stored->lat;
    driver->lng = stored->lng;
    driver->rating = stored->rating;
    driver->available = stored->available;
    grid_sync(dispatch, index);
    return HF_OK;
}

/* The space-separated ids of list, excluded from the ride (lapsed or declined). */
static void excluded_restore(struct dispatch *dispatch, uint32_t ride, const char *list,
                             bool lapsed) {
    char id[HF_ID_SIZE_MAX + 1];
    if (!list) return;
    while (*list) {
        size_t length = strcspn(list, " ");
        if (length > 0 && length <= HF_ID_SIZE_MAX &&
            dispatch->ride_states[ride].excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX) {
            memcpy(id, list, length);
            id[length] = '\0';
            exclude(dispatch, ride, stored_driver_intern(dispatch, dispatch->rides[ride].fleet, id),
                    lapsed);
        }
        list += length;
        while (*list == ' ') list++;
    }
}

/* The ride's offer or assignment as stored, bound to its driver. */
static void ride_bind(hf_core_t *core, uint32_t index, const hf_stored_ride_t *stored) {
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[index];
    if (stored->driver_id) ride->driver = stored_driver_intern(dispatch, ride->fleet, stored->driver_id) + 1;
    if (ride->status == HF_RIDE_OFFERED) {
        uint32_t driver = stored_driver_intern(dispatch, ride->fleet, stored->offer_driver_id);
        ride->offer_driver = driver + 1;
        ride->offer_distance_m = stored->offer_distance_m;
        ride->offer_expires_at_ms = stored->offer_expires_at_ms;
        dispatch->drivers[driver].offer = index + 1;
        grid_sync(dispatch, driver);
        hf_timer_push(&core->timer, ride->offer_expires_at_ms, HF_TIMER_OFFER, index);
    } else if (ride->status == HF_RIDE_ASSIGNED && ride->driver &&
               !dispatch->drivers[ride->driver - 1].available) {
        dispatch->drivers[ride->driver - 1].assigned = index + 1;
    } else if (ride->status == HF_RIDE_SEARCHING &&
               dispatch->ride_states[index].excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX) {
        searching_append(dispatch, index);
    }
}

hf_error_t hf_dispatch_restore_ride(hf_core_t *core, const hf_stored_ride_t *stored) {
    hf_ride_request_t request = {.fleet_id = stored->fleet_id, .ride_id = stored->ride_id,
                                 .rider_id = stored->rider_id, .lat = stored->lat,
                                 .lng = stored->lng, .radius_m = stored->radius_m,
                                 .offer_ttl_ms = stored->offer_ttl_ms};
    if (ride_request_check(&request, NULL) != HF_OK || stored->status > HF_RIDE_CANCELLED ||
        hf_dispatch_ride_find(core, stored->ride_id, NULL) ||
        (stored->status == HF_RIDE_OFFERED &&
         (!stored->offer_driver_id || !hf_core_id_valid(stored->offer_driver_id))) ||
        (stored->driver_id && !hf_core_id_valid(stored->driver_id)))
        return HF_ERROR_INVALID_REQUEST;
    struct dispatch *dispatch = dispatch_make(core);
    uint32_t fleet = fleet_intern(dispatch, stored->fleet_id);
    uint32_t index = ride_add(core, &request, fleet, stored->created_at_ms);
    dispatch->rides[index].status = stored->status;
    excluded_restore(dispatch, index, stored->declined, false);
    excluded_restore(dispatch, index, stored->lapsed, true);
    ride_bind(core, index, stored);
    return HF_OK;
}
