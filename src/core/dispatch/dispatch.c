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
    hf_index_map_init(&dispatch->driver_ids);
    hf_index_map_init(&dispatch->ride_ids);
    hf_pair_map_init(&dispatch->cells);
    hf_buffer_init(&dispatch->declined);
    hf_buffer_init(&dispatch->lapsed);
    dispatch->finished_max = HF_DISPATCH_FINISHED_RIDES_MAX;
    core->dispatch = dispatch;
    return dispatch;
}

void dispatch_free(hf_core_t *core) {
    struct dispatch *dispatch = core->dispatch;
    if (!dispatch) return;
    slots_free(dispatch);
    for (uint32_t i = 0; i < dispatch->bucket_count; i++) free(dispatch->buckets[i].entries);
    free(dispatch->fleets);
    free(dispatch->drivers);
    free(dispatch->driver_states);
    free(dispatch->rides);
    free(dispatch->ride_states);
    free(dispatch->buckets);
    free(dispatch->dirty);
    hf_map_free(&dispatch->fleet_ids);
    hf_index_map_free(&dispatch->driver_ids);
    hf_index_map_free(&dispatch->ride_ids);
    hf_pair_map_free(&dispatch->cells);
    hf_buffer_free(&dispatch->declined);
    hf_buffer_free(&dispatch->lapsed);
    free(dispatch);
    core->dispatch = NULL;
}

/* ---- lookups ---- */

bool hf_dispatch_fleet_find(const hf_core_t *core, const char *fleet_id, uint32_t *fleet) {
    const struct dispatch *dispatch = dispatch_of(core);
    return dispatch && fleet_id &&
           hf_map_get(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), fleet);
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

bool hf_dispatch_counts(const hf_core_t *core, hf_dispatch_counts_t *counts) {
    const struct dispatch *dispatch = dispatch_of(core);
    bool in_use = dispatch && dispatch->fleet_count > 0;
    *counts = in_use ? dispatch->counts : (hf_dispatch_counts_t){0};
    for (int status = 0; in_use && status < HF_RIDE_STATUS_COUNT; status++)
        counts->rides[status] += dispatch->forgotten_rides[status];
    return in_use;
}

uint32_t hf_dispatch_driver_count(const hf_core_t *core) {
    return core->dispatch ? core->dispatch->driver_count : 0;
}

const char *hf_dispatch_fleet_id(const hf_core_t *core, uint32_t fleet) {
    assert(core->dispatch && fleet < core->dispatch->fleet_count);
    return core->dispatch->fleets[fleet].id;
}

const hf_ride_t *hf_dispatch_ride_at(const hf_core_t *core, uint32_t index) {
    assert(core->dispatch && index < core->dispatch->ride_count &&
           core->dispatch->rides[index].status != RIDE_FORGOTTEN);
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
                           int64_t radius_m, uint32_t ride, uint32_t *driver, int64_t *distance_m) {
    if (!core->dispatch || fleet >= core->dispatch->fleet_count) return false;
    return candidate_find(core->dispatch, fleet, lat, lng, radius_m, ride, driver, distance_m);
}

/* ---- the searching rides of a fleet, oldest first ----
 *
 * Ordered by creation (a ride's created_seq: slots are reused), whenever they began searching: a ride whose driver
 * declined keeps its place among the older ones, and the order is the same after a restart,
 * which restores rides in creation order. A new ride goes at the end at once; one moving back
 * to searching walks back from the end, over at most the fleet's searching rides. */

void searching_append(struct dispatch *dispatch, uint32_t ride) {
    ride_state_t *state = &dispatch->ride_states[ride];
    fleet_t *fleet = &dispatch->fleets[dispatch->rides[ride].fleet];
    assert(!state->in_searching);
    uint32_t after = fleet->searching_last; /* ride index + 1, 0: insert first */
    while (after && dispatch->ride_states[after - 1].created_seq > state->created_seq)
        after = dispatch->ride_states[after - 1].previous_searching;
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

static bool driver_is_free(const hf_driver_t *driver) {
    return driver->available && !driver->offer;
}

hf_driver_status_t hf_dispatch_driver_status(const hf_driver_t *driver) {
    if (driver->offer) return HF_DRIVER_OFFERED;
    if (driver->assigned) return HF_DRIVER_ASSIGNED;
    return driver->available ? HF_DRIVER_AVAILABLE : HF_DRIVER_UNAVAILABLE;
}

/* Moves the driver's count to its status now. Called wherever its offer, assignment or
 * availability may have changed (grid_sync, which every such change goes through, and the
 * restore of an assignment). */
void driver_count_sync(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    uint8_t status = (uint8_t)hf_dispatch_driver_status(&dispatch->drivers[driver]);
    if (status == state->counted_status) return;
    dispatch->counts.drivers[state->counted_status]--;
    dispatch->counts.drivers[status]++;
    state->counted_status = status;
}

/* Every change of a ride's status goes here, so its running count follows. */
void ride_status_set(struct dispatch *dispatch, hf_ride_t *ride, uint8_t status) {
    dispatch->counts.rides[ride->status]--;
    dispatch->counts.rides[status]++;
    ride->status = status;
}

/* Files the driver in the grid, or takes it out, as it is free or not (and moves it). */
void grid_sync(struct dispatch *dispatch, uint32_t driver) {
    bool filed = dispatch->driver_states[driver].bucket != 0;
    bool free_now = driver_is_free(&dispatch->drivers[driver]);
    driver_count_sync(dispatch, driver);
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
    ride_status_set(dispatch, ride, HF_RIDE_OFFERED);
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
    ride_status_set(dispatch, ride, HF_RIDE_SEARCHING);
    ride->offer_driver = 0;
    ride->offer_distance_m = 0;
    ride->offer_expires_at_ms = 0;
    bool exhausted = dispatch->ride_states[ride_index].excluded_count >=
                     HF_DISPATCH_RIDE_EXCLUDED_MAX;
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

void exclude(struct dispatch *dispatch, uint32_t ride, uint32_t driver, bool lapsed) {
    ride_state_t *state = &dispatch->ride_states[ride];
    assert(state->excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX);
    state->excluded = grow(state->excluded, &state->excluded_capacity, state->excluded_count + 1,
                           sizeof *state->excluded);
    state->excluded[state->excluded_count++] = driver | (lapsed ? EXCLUDED_LAPSED : 0);
    driver_reference(dispatch, driver);
}

/* The ride's offered driver declined it or let it lapse: never offered it again, free, and
 * the ride moves on before the driver looks for another. */
static void offer_end(hf_core_t *core, uint32_t ride_index, bool lapsed, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    uint32_t driver_index = dispatch->rides[ride_index].offer_driver - 1;
    exclude(dispatch, ride_index, driver_index, lapsed);
    dispatch->counts.offers[lapsed ? HF_OFFER_EXPIRED : HF_OFFER_DECLINED]++;
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
    command_at(core, now);
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

bool coordinates_valid(double lat, double lng, hf_error_detail_t *detail) {
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

/* The driver the update names, made (with its fleet) when new; NO_INDEX at a limit. */
static uint32_t driver_intern(struct dispatch *dispatch, const hf_driver_update_t *update) {
    uint32_t fleet, index;
    bool fleet_known = hf_map_get(&dispatch->fleet_ids, update->fleet_id, strlen(update->fleet_id),
                                  &fleet);
    if (fleet_known && (index = driver_key_find(dispatch, fleet, update->driver_id)) != NO_INDEX)
        return index;
    if (!fleet_known && dispatch->fleet_count >= HF_DISPATCH_FLEETS_MAX) return NO_INDEX;
    if (fleet_known && dispatch->fleets[fleet].driver_count >= HF_DISPATCH_FLEET_DRIVERS_MAX)
        return NO_INDEX;
    if (!fleet_known) fleet = fleet_add(dispatch, update->fleet_id);
    index = driver_add(dispatch, fleet, update->driver_id, false);
    dispatch->drivers[index].available = true;
    return index;
}

hf_error_t hf_dispatch_driver_put(hf_core_t *core, const hf_driver_update_t *update,
                                  hf_time_ms_t now, uint32_t *driver_index,
                                  hf_error_detail_t *detail) {
    command_at(core, now);
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

hf_error_t ride_request_check(const hf_ride_request_t *request, hf_error_detail_t *detail) {
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

hf_error_t hf_dispatch_ride_create(hf_core_t *core, const hf_ride_request_t *request,
                                   hf_time_ms_t now, uint32_t *ride_index,
                                   hf_error_detail_t *detail) {
    command_at(core, now);
    hf_error_t error = ride_request_check(request, detail);
    if (error) return error;
    uint32_t fleet;
    if (!hf_dispatch_fleet_find(core, request->fleet_id, &fleet)) return HF_ERROR_FLEET_NOT_FOUND;
    if (hf_dispatch_ride_find(core, request->ride_id, NULL)) return HF_ERROR_RIDE_EXISTS;
    struct dispatch *dispatch = core->dispatch;
    if (dispatch->rides_kept >= HF_DISPATCH_RIDES_MAX ||
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
    command_at(core, now);
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
    ride_status_set(dispatch, ride, HF_RIDE_ASSIGNED);
    dispatch->counts.offers[HF_OFFER_ACCEPTED]++;
    ride->driver = driver_index + 1;
    driver_reference(dispatch, driver_index);
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
    command_at(core, now);
    uint32_t driver_index;
    hf_error_t error = answer_find(core, ride_id, driver_id, ride_index, &driver_index);
    if (error) return error;
    const hf_ride_t *ride = &core->dispatch->rides[*ride_index];
    /* Only 409 for a decline, lapsed or not (API.md section 8 lists no 410 for it). */
    if (driver_index == NO_INDEX || ride->status != HF_RIDE_OFFERED ||
        ride->offer_driver != driver_index + 1)
        return HF_ERROR_NOT_OFFERED;
    offer_end(core, *ride_index, false, now);
    timer_prune(core);
    return HF_OK;
}

hf_error_t hf_dispatch_cancel(hf_core_t *core, const char *ride_id, hf_time_ms_t now,
                              uint32_t *ride_index) {
    command_at(core, now);
    if (!hf_dispatch_ride_find(core, ride_id, ride_index)) return HF_ERROR_RIDE_NOT_FOUND;
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[*ride_index];
    if (ride->status == HF_RIDE_CANCELLED) return HF_OK;
    if (ride->status == HF_RIDE_COMPLETED) return HF_ERROR_RIDE_FINISHED;
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
    ride_status_set(dispatch, ride, HF_RIDE_CANCELLED);
    ride_finished_push(dispatch, *ride_index);
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

hf_error_t hf_dispatch_complete(hf_core_t *core, const char *ride_id, const char *driver_id,
                                hf_time_ms_t now, uint32_t *ride_index) {
    command_at(core, now);
    uint32_t driver_index;
    hf_error_t error = answer_find(core, ride_id, driver_id, ride_index, &driver_index);
    if (error) return error;
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[*ride_index];
    if (driver_index == NO_INDEX || ride->driver != driver_index + 1 ||
        (ride->status != HF_RIDE_ASSIGNED && ride->status != HF_RIDE_COMPLETED))
        return HF_ERROR_NOT_ASSIGNED;
    if (ride->status == HF_RIDE_COMPLETED) return HF_OK;
    ride_status_set(dispatch, ride, HF_RIDE_COMPLETED);
    ride_finished_push(dispatch, *ride_index);
    record_ride(core, *ride_index, now);
    hf_driver_t *driver = &dispatch->drivers[driver_index];
    /* A PUT since the assignment freed the driver already (it may hold another offer). */
    if (driver->assigned != *ride_index + 1) return HF_OK;
    driver->assigned = 0;
    driver->available = true;
    grid_sync(dispatch, driver_index);
    record_driver(core, driver_index, now);
    driver_match(core, driver_index, now);
    return HF_OK;
}

/* ---- deleting a driver ---- */

hf_error_t hf_dispatch_driver_delete(hf_core_t *core, const char *fleet_id, const char *driver_id,
                                     hf_time_ms_t now) {
    command_at(core, now);
    uint32_t fleet, index;
    if (!hf_dispatch_fleet_find(core, fleet_id, &fleet)) return HF_ERROR_FLEET_NOT_FOUND;
    struct dispatch *dispatch = core->dispatch;
    if (!driver_id || (index = driver_key_find(dispatch, fleet, driver_id)) == NO_INDEX)
        return HF_ERROR_DRIVER_NOT_FOUND;
    hf_driver_t *driver = &dispatch->drivers[index];
    if (hf_dispatch_driver_status(driver) == HF_DRIVER_ASSIGNED) return HF_ERROR_DRIVER_BUSY;
    uint32_t offered = driver->offer;
    driver->offer = 0;
    driver->available = false;
    grid_sync(dispatch, index);
    /* The record first: a restart must not find the row the ride's offer moves away from. */
    hf_mutation_t mutation = {.type = HF_MUTATION_DRIVER,
                              .at_ms = now,
                              .as.driver = {.fleet_id = dispatch->fleets[fleet].id,
                                            .driver_id = driver->id,
                                            .lat = driver->lat,
                                            .lng = driver->lng,
                                            .rating = driver->rating,
                                            .deleted = true}};
    record_emit(core, &mutation);
    driver_remove(dispatch, index);
    if (offered) ride_move_on(core, offered - 1, now);
    timer_prune(core);
    return HF_OK;
}
