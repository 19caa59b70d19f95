/* Restore and revive (dispatch.h): drivers and rides taken back from their stored rows, at
 * start, at a takeover of a fleet, or one forgotten ride when a request names it. */
#include "core/dispatch/internal.h"

#include <string.h>

static uint32_t fleet_intern(struct dispatch *dispatch, const char *fleet_id) {
    uint32_t fleet;
    if (hf_map_get(&dispatch->fleet_ids, fleet_id, strlen(fleet_id), &fleet)) return fleet;
    return fleet_add(dispatch, fleet_id);
}

/* A driver a stored ride names. Every driver a ride names had its row written with the ride's
 * change that named it (offer_make), so one without a row was deleted since: its slot is made
 * deleted, to carry the name the ride shows, and goes with the ride. */
static uint32_t stored_driver_intern(struct dispatch *dispatch, uint32_t fleet, const char *id) {
    uint32_t index = driver_key_find(dispatch, fleet, id);
    return index != NO_INDEX ? index : driver_add(dispatch, fleet, id, true);
}

hf_error_t hf_dispatch_restore_driver(hf_core_t *core, const hf_stored_driver_t *stored) {
    if (!stored->fleet_id || !hf_core_id_valid(stored->fleet_id) || !stored->driver_id ||
        !hf_core_id_valid(stored->driver_id) || !coordinates_valid(stored->lat, stored->lng, NULL))
        return HF_ERROR_INVALID_REQUEST;
    struct dispatch *dispatch = dispatch_make(core);
    uint32_t fleet = fleet_intern(dispatch, stored->fleet_id);
    uint32_t index = driver_key_find(dispatch, fleet, stored->driver_id);
    if (index == NO_INDEX) index = driver_add(dispatch, fleet, stored->driver_id, false);
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

/* The stored offer, bound to its driver; one to a deleted driver is a search again (the
 * deletion's batch moved it on, so only a damaged store has it). */
static void offer_bind(hf_core_t *core, uint32_t index, const hf_stored_ride_t *stored) {
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[index];
    uint32_t driver = stored_driver_intern(dispatch, ride->fleet, stored->offer_driver_id);
    if (dispatch->driver_states[driver].deleted) {
        /* A slot made for no ride goes back at once. */
        driver_reference(dispatch, driver);
        driver_release(dispatch, driver);
        ride_status_set(dispatch, ride, HF_RIDE_SEARCHING);
        return;
    }
    ride->offer_driver = driver + 1;
    ride->offer_distance_m = stored->offer_distance_m;
    ride->offer_expires_at_ms = stored->offer_expires_at_ms;
    dispatch->drivers[driver].offer = index + 1;
    grid_sync(dispatch, driver);
    hf_timer_push(&core->timer, ride->offer_expires_at_ms, HF_TIMER_OFFER, index);
}

/* The ride's offer or assignment as stored, bound to its driver. */
static void ride_bind(hf_core_t *core, uint32_t index, const hf_stored_ride_t *stored) {
    struct dispatch *dispatch = core->dispatch;
    hf_ride_t *ride = &dispatch->rides[index];
    if (stored->driver_id) {
        uint32_t driver = stored_driver_intern(dispatch, ride->fleet, stored->driver_id);
        ride->driver = driver + 1;
        driver_reference(dispatch, driver);
    }
    if (ride->status == HF_RIDE_OFFERED) offer_bind(core, index, stored);
    if (ride->status == HF_RIDE_ASSIGNED && ride->driver &&
        !dispatch->driver_states[ride->driver - 1].deleted &&
        !dispatch->drivers[ride->driver - 1].available) {
        dispatch->drivers[ride->driver - 1].assigned = index + 1;
        driver_count_sync(dispatch, ride->driver - 1);
    } else if (ride->status == HF_RIDE_SEARCHING &&
               dispatch->ride_states[index].excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX) {
        searching_append(dispatch, index);
    }
}

static bool stored_ride_valid(const hf_core_t *core, const hf_stored_ride_t *stored,
                              const hf_ride_request_t *request) {
    return ride_request_check(request, NULL) == HF_OK && stored->status <= HF_RIDE_COMPLETED &&
           !hf_dispatch_ride_find(core, stored->ride_id, NULL) &&
           (stored->status != HF_RIDE_OFFERED ||
            (stored->offer_driver_id && hf_core_id_valid(stored->offer_driver_id))) &&
           (!stored->driver_id || hf_core_id_valid(stored->driver_id)) &&
           (stored->status != HF_RIDE_COMPLETED || stored->driver_id);
}

/* The stored ride in a new slot of fleet, bound to its drivers. */
static uint32_t ride_place(hf_core_t *core, uint32_t fleet, const hf_stored_ride_t *stored,
                           const hf_ride_request_t *request) {
    struct dispatch *dispatch = core->dispatch;
    uint32_t index = ride_add(core, request, fleet, stored->created_at_ms);
    ride_status_set(dispatch, &dispatch->rides[index], stored->status);
    excluded_restore(dispatch, index, stored->declined, false);
    excluded_restore(dispatch, index, stored->lapsed, true);
    ride_bind(core, index, stored);
    return index;
}

static hf_ride_request_t stored_request(const hf_stored_ride_t *stored) {
    return (hf_ride_request_t){.fleet_id = stored->fleet_id,
                               .ride_id = stored->ride_id,
                               .rider_id = stored->rider_id,
                               .lat = stored->lat,
                               .lng = stored->lng,
                               .radius_m = stored->radius_m,
                               .offer_ttl_ms = stored->offer_ttl_ms};
}

hf_error_t hf_dispatch_restore_ride(hf_core_t *core, const hf_stored_ride_t *stored) {
    hf_ride_request_t request = stored_request(stored);
    if (!stored_ride_valid(core, stored, &request)) return HF_ERROR_INVALID_REQUEST;
    struct dispatch *dispatch = dispatch_make(core);
    uint32_t index = ride_place(core, fleet_intern(dispatch, stored->fleet_id), stored, &request);
    if (!hf_ride_status_finished(stored->status)) return HF_OK;
    ride_finished_push(dispatch, index);
    /* Restored rides are durable (their last change is 0): past the bound the oldest go at
     * once, and no other is touched (this run's own changes are numbered above 0). */
    rides_finished_evict(dispatch, 0);
    return HF_OK;
}

hf_error_t hf_dispatch_revive_ride(hf_core_t *core, const hf_stored_ride_t *stored,
                                   uint32_t *ride_index) {
    hf_ride_request_t request = stored_request(stored);
    uint32_t fleet;
    if (!hf_ride_status_finished(stored->status) || !stored_ride_valid(core, stored, &request) ||
        !hf_dispatch_fleet_find(core, stored->fleet_id, &fleet))
        return HF_ERROR_INVALID_REQUEST;
    struct dispatch *dispatch = core->dispatch;
    uint32_t index = ride_place(core, fleet, stored, &request);
    ride_finished_push(dispatch, index);
    /* Counted among the forgotten until now: counted once, in memory again. */
    if (dispatch->forgotten_rides[stored->status] > 0) dispatch->forgotten_rides[stored->status]--;
    *ride_index = index;
    return HF_OK;
}
