/* The records of rides and drivers, the flush of drivers' soft state, the status words and
 * the invariants (internal.h, dispatch.h). */
#include "core/dispatch/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *const RIDE_STATUS_NAMES[] = {[HF_RIDE_SEARCHING] = "searching",
                                                [HF_RIDE_OFFERED] = "offered",
                                                [HF_RIDE_ASSIGNED] = "assigned",
                                                [HF_RIDE_CANCELLED] = "cancelled",
                                                [HF_RIDE_COMPLETED] = "completed"};
#define RIDE_STATUS_COUNT (sizeof RIDE_STATUS_NAMES / sizeof RIDE_STATUS_NAMES[0])

const char *hf_ride_status_name(uint8_t status) {
    return status < RIDE_STATUS_COUNT ? RIDE_STATUS_NAMES[status] : "unknown";
}

bool hf_ride_status_parse(const char *text, uint8_t *status) {
    for (uint8_t i = 0; text && i < RIDE_STATUS_COUNT; i++) {
        if (strcmp(RIDE_STATUS_NAMES[i], text) != 0) continue;
        *status = i;
        return true;
    }
    return false;
}

static const char *const DRIVER_STATUS_NAMES[HF_DRIVER_STATUS_COUNT] = {
    [HF_DRIVER_AVAILABLE] = "available",
    [HF_DRIVER_OFFERED] = "offered",
    [HF_DRIVER_ASSIGNED] = "assigned",
    [HF_DRIVER_UNAVAILABLE] = "unavailable"};
static const char *const OFFER_OUTCOME_NAMES[HF_OFFER_OUTCOME_COUNT] = {
    [HF_OFFER_ACCEPTED] = "accepted",
    [HF_OFFER_DECLINED] = "declined",
    [HF_OFFER_EXPIRED] = "expired"};
_Static_assert(RIDE_STATUS_COUNT == HF_RIDE_STATUS_COUNT, "a count for every ride status");

const char *hf_driver_status_name(uint8_t status) {
    return status < HF_DRIVER_STATUS_COUNT ? DRIVER_STATUS_NAMES[status] : "unknown";
}

const char *hf_offer_outcome_name(uint8_t outcome) {
    return outcome < HF_OFFER_OUTCOME_COUNT ? OFFER_OUTCOME_NAMES[outcome] : "unknown";
}

/* ---- records ---- */

/* The ride's excluded drivers as two lists of ids separated by spaces, in the scratch
 * buffers (valid until the next record). */
static void excluded_lists(struct dispatch *dispatch, uint32_t ride) {
    const ride_state_t *state = &dispatch->ride_states[ride];
    hf_buffer_reset(&dispatch->declined);
    hf_buffer_reset(&dispatch->lapsed);
    for (uint32_t i = 0; i < state->excluded_count; i++) {
        bool lapsed = (state->excluded[i] & EXCLUDED_LAPSED) != 0;
        hf_buffer_t *list = lapsed ? &dispatch->lapsed : &dispatch->declined;
        if (list->length) hf_buffer_append_char(list, ' ');
        hf_buffer_append_string(list, dispatch->drivers[state->excluded[i] & ~EXCLUDED_LAPSED].id);
    }
    hf_buffer_append_char(&dispatch->declined, '\0');
    hf_buffer_append_char(&dispatch->lapsed, '\0');
}

void record_ride(hf_core_t *core, uint32_t ride_index, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    const hf_ride_t *ride = &dispatch->rides[ride_index];
    excluded_lists(dispatch, ride_index);
    hf_mutation_t mutation = {
        .type = HF_MUTATION_RIDE,
        .at_ms = now,
        .as.ride = {.ride_id = ride->id,
                    .fleet_id = dispatch->fleets[ride->fleet].id,
                    .rider_id = ride->rider_id,
                    .lat = ride->lat,
                    .lng = ride->lng,
                    .radius_m = ride->radius_m,
                    .offer_ttl_ms = ride->offer_ttl_ms,
                    .created_at_ms = ride->created_at_ms,
                    .status = ride->status,
                    .offer_driver_id =
                        ride->offer_driver ? dispatch->drivers[ride->offer_driver - 1].id : NULL,
                    .offer_distance_m = ride->offer_distance_m,
                    .offer_expires_at_ms = ride->offer_expires_at_ms,
                    .driver_id = ride->driver ? dispatch->drivers[ride->driver - 1].id : NULL,
                    .declined = dispatch->declined.data,
                    .lapsed = dispatch->lapsed.data}};
    record_emit(core, &mutation);
    dispatch->ride_states[ride_index].last_change = hf_core_change_count(core);
}

static void driver_emit(hf_core_t *core, uint32_t driver_index, hf_time_ms_t now) {
    struct dispatch *dispatch = core->dispatch;
    const hf_driver_t *driver = &dispatch->drivers[driver_index];
    hf_mutation_t mutation = {.type = HF_MUTATION_DRIVER,
                              .at_ms = now,
                              .as.driver = {.fleet_id = dispatch->fleets[driver->fleet].id,
                                            .driver_id = driver->id,
                                            .lat = driver->lat,
                                            .lng = driver->lng,
                                            .rating = driver->rating,
                                            .available = driver->available}};
    record_emit(core, &mutation);
}

/* A driver's row in a ride's change: durable with it, so its last change is this one. The
 * row is whole, so a pending flush of the driver has nothing more to say until it changes. */
void record_driver(hf_core_t *core, uint32_t driver_index, hf_time_ms_t now) {
    driver_emit(core, driver_index, now);
    core->dispatch->driver_states[driver_index].last_change = hf_core_change_count(core);
}

void driver_mark_dirty(struct dispatch *dispatch, uint32_t driver) {
    driver_state_t *state = &dispatch->driver_states[driver];
    if (state->dirty) return;
    state->dirty = true;
    dispatch->dirty = grow(dispatch->dirty, &dispatch->dirty_capacity, dispatch->dirty_count + 1,
                           sizeof *dispatch->dirty);
    dispatch->dirty[dispatch->dirty_count++] = driver;
}

uint32_t hf_dispatch_flush(hf_core_t *core, hf_time_ms_t now, uint32_t max) {
    command_at(core, now);
    struct dispatch *dispatch = core->dispatch;
    if (!dispatch) return 0;
    uint32_t count = dispatch->dirty_count < max ? dispatch->dirty_count : max;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t driver = dispatch->dirty[i];
        dispatch->driver_states[driver].dirty = false;
        driver_emit(core, driver, now);
    }
    /* The rest keep their order: changed longest ago, flushed first next time. */
    dispatch->dirty_count -= count;
    if (dispatch->dirty_count > 0)
        memmove(dispatch->dirty, dispatch->dirty + count,
                (size_t)dispatch->dirty_count * sizeof dispatch->dirty[0]);
    return count;
}

/* ---- invariants ---- */

static const char *driver_check(const struct dispatch *dispatch, uint32_t index) {
    const hf_driver_t *driver = &dispatch->drivers[index];
    const driver_state_t *state = &dispatch->driver_states[index];
    if (state->deleted)
        return state->bucket || driver->offer || driver->assigned || state->dirty
                   ? "a deleted driver is still filed, offered, assigned or to be flushed"
                   : NULL;
    bool free_now = driver->available && !driver->offer;
    if (free_now != (state->bucket != 0))
        return "the grid holds a driver that is not free, or misses a free one";
    if (state->bucket) {
        const bucket_t *bucket = &dispatch->buckets[state->bucket - 1];
        if (state->slot >= bucket->count || bucket->entries[state->slot].driver != index)
            return "a driver's grid entry does not point back";
        int32_t row, column;
        hf_geo_cell_of(driver->lat, driver->lng, &row, &column);
        uint32_t cell;
        if (!hf_pair_map_get(&dispatch->cells, driver->fleet << ROW_BITS | (uint32_t)row,
                             (uint32_t)column, &cell) ||
            cell + 1 != state->bucket)
            return "a free driver is filed in another cell than its position's";
        const grid_entry_t *entry = &bucket->entries[state->slot];
        if (state->row != row || state->column != column || entry->lat != driver->lat ||
            entry->lng != driver->lng)
            return "a free driver's grid entry keeps another cell or position than its own";
    }
    if (state->counted_status != hf_dispatch_driver_status(driver))
        return "a driver is counted under another status than its own";
    if (driver->offer) {
        const hf_ride_t *ride = &dispatch->rides[driver->offer - 1];
        if (ride->status != HF_RIDE_OFFERED || ride->offer_driver != index + 1)
            return "a driver's offer is not its ride's";
    }
    return NULL;
}

static const char *ride_check(const struct dispatch *dispatch, uint32_t index) {
    const hf_ride_t *ride = &dispatch->rides[index];
    const ride_state_t *state = &dispatch->ride_states[index];
    if (ride->status == RIDE_FORGOTTEN) return NULL;
    if (ride->status == HF_RIDE_COMPLETED && !ride->driver) return "a completed ride has no driver";
    if (ride->offer_driver && dispatch->driver_states[ride->offer_driver - 1].deleted)
        return "a ride is offered to a deleted driver";
    if (ride->status == HF_RIDE_OFFERED &&
        (!ride->offer_driver || dispatch->drivers[ride->offer_driver - 1].offer != index + 1))
        return "an offered ride's driver does not hold its offer";
    if (ride->status != HF_RIDE_OFFERED && ride->offer_driver)
        return "a ride not offered has an offer";
    if (ride->status == HF_RIDE_ASSIGNED && !ride->driver) return "an assigned ride has no driver";
    if (state->in_searching && ride->status != HF_RIDE_SEARCHING)
        return "a ride listed as searching is not";
    if (ride->status == HF_RIDE_SEARCHING && !state->in_searching &&
        state->excluded_count < HF_DISPATCH_RIDE_EXCLUDED_MAX)
        return "a searching ride is not listed";
    if (ride->offer_driver && ride_excludes(dispatch, index, ride->offer_driver - 1, NULL))
        return "a ride is offered to a driver it excludes";
    return NULL;
}

/* The running counts of statuses against a recount (the offers' outcomes are not kept
 * anywhere else: the simulation's model counts them). */
static const char *counts_check(const struct dispatch *dispatch) {
    uint64_t rides[HF_RIDE_STATUS_COUNT] = {0}, drivers[HF_DRIVER_STATUS_COUNT] = {0};
    uint32_t kept = 0, finished = 0;
    for (uint32_t i = 0; i < dispatch->ride_count; i++) {
        uint8_t status = dispatch->rides[i].status;
        if (status == RIDE_FORGOTTEN) continue;
        rides[status]++;
        kept++;
        finished += hf_ride_status_finished(status);
    }
    if (kept != dispatch->rides_kept || finished != dispatch->finished_count)
        return "the counts of rides kept or finished are not a recount's";
    for (uint32_t i = 0; i < dispatch->driver_count; i++)
        if (!dispatch->driver_states[i].deleted)
            drivers[hf_dispatch_driver_status(&dispatch->drivers[i])]++;
    if (memcmp(rides, dispatch->counts.rides, sizeof rides) != 0)
        return "the running counts of rides by status are not a recount's";
    if (memcmp(drivers, dispatch->counts.drivers, sizeof drivers) != 0)
        return "the running counts of drivers by status are not a recount's";
    return NULL;
}

/* Each driver's count of the rides naming it, against a recount. */
static const char *references_check(const struct dispatch *dispatch) {
    uint32_t *counts = calloc(dispatch->driver_count + 1, sizeof *counts);
    if (!counts) abort();
    for (uint32_t i = 0; i < dispatch->ride_count; i++) {
        const ride_state_t *state = &dispatch->ride_states[i];
        if (dispatch->rides[i].status == RIDE_FORGOTTEN) continue;
        if (dispatch->rides[i].driver) counts[dispatch->rides[i].driver - 1]++;
        for (uint32_t e = 0; e < state->excluded_count; e++)
            counts[state->excluded[e] & ~EXCLUDED_LAPSED]++;
    }
    const char *fault = NULL;
    for (uint32_t i = 0; i < dispatch->driver_count && !fault; i++)
        if (counts[i] != dispatch->driver_states[i].references)
            fault = "a driver's count of the rides naming it is not a recount's";
    free(counts);
    return fault;
}

const char *hf_dispatch_check(const hf_core_t *core) {
    const struct dispatch *dispatch = core->dispatch;
    if (!dispatch) return NULL;
    const char *references = references_check(dispatch);
    if (references) return references;
    for (uint32_t i = 0; i < dispatch->driver_count; i++) {
        const char *fault = driver_check(dispatch, i);
        if (fault) return fault;
    }
    uint32_t listed = 0;
    for (uint32_t i = 0; i < dispatch->ride_count; i++) {
        const char *fault = ride_check(dispatch, i);
        if (fault) return fault;
        listed += dispatch->ride_states[i].in_searching;
    }
    const char *fault = counts_check(dispatch);
    if (fault) return fault;
    uint32_t counted = 0;
    for (uint32_t f = 0; f < dispatch->fleet_count; f++)
        counted += dispatch->fleets[f].searching_count;
    return listed == counted ? NULL : "the fleets' counts of searching rides are wrong";
}
