/* Dispatch (API.md section 8): fleets of drivers, rides and their exclusive timed offers, in
 * the core: pure, clocked from outside, deterministic. The engine and the tests include this
 * beside core/core.h.
 *
 * A ride is offered to one driver at a time: the best free candidate within its radius,
 * nearest first (great-circle distance, whole metres; a driver at exactly radius_m is in),
 * then higher rating, then lower driver id (bytewise). A driver is free when available and
 * holding no offer; a driver has at most one live offer. An offer lives offer_ttl_ms; accept
 * assigns the ride, decline or a lapse (hf_core_advance, on the core's timer) moves it to the
 * next candidate, and the driver who declined or let it lapse is never offered that ride
 * again. With no candidate the ride is searching, and it is offered as soon as a driver it
 * fits becomes free: a PUT that makes or keeps a driver free (a moving free driver may come
 * into range), a decline, a lapse, a cancel. An assigned driver is no longer available until
 * a PUT says so.
 *
 * Drivers' positions are soft state: a PUT changes memory and emits nothing by itself, unless
 * it made an offer (the ride's and the driver's records); hf_dispatch_flush emits the drivers
 * changed since the last flush, which the engine calls once a second. Every ride change emits
 * the ride whole (HF_MUTATION_RIDE) and the driver records it concerns.
 *
 * A ride is finished once cancelled or completed (its assigned driver's POST .../complete, which
 * makes that driver available again). Finished rides are kept in memory up to a bound
 * (hf_dispatch_set_finished_max, HF_DISPATCH_FINISHED_RIDES_MAX); older ones are forgotten once
 * their last record is durable (hf_core_evict), their slots reused, and read back from the store
 * when asked for (hf_dispatch_revive_ride). A deleted driver leaves the fleet at once; its slot
 * is kept, under its id but found by no lookup, while a ride in memory still names it.
 *
 * Lifetimes: as core.h: views returned here are borrowed until the next call that changes the
 * core. The index of a live ride or driver never changes; a forgotten ride's or a deleted
 * driver's slot may be reused by a new one. */
#ifndef HF_CORE_DISPATCH_H
#define HF_CORE_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

typedef enum hf_ride_status {
    HF_RIDE_SEARCHING = 0,
    HF_RIDE_OFFERED = 1,
    HF_RIDE_ASSIGNED = 2,
    HF_RIDE_CANCELLED = 3,
    HF_RIDE_COMPLETED = 4,
} hf_ride_status_t;

/* Cancelled or completed: final, and kept in memory only up to the bound. */
static inline bool hf_ride_status_finished(uint8_t status) {
    return status == HF_RIDE_CANCELLED || status == HF_RIDE_COMPLETED;
}

/* "searching", "offered", "assigned", "cancelled", "completed"; static. */
const char *hf_ride_status_name(uint8_t status);
bool hf_ride_status_parse(const char *text, uint8_t *status);

/* The default rating of a driver whose first PUT gives none. */
#define HF_DISPATCH_RATING_DEFAULT 5.0

typedef struct hf_driver {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t fleet; /* see hf_dispatch_fleet_id */
    double lat, lng, rating;
    bool available;    /* as last said, cleared by an assignment */
    uint32_t offer;    /* ride index + 1 of its live offer, else 0 */
    uint32_t assigned; /* ride index + 1 assigned to it until a PUT makes it
                                      available again, else 0 */
} hf_driver_t;

typedef struct hf_ride {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t fleet;
    const char *rider_id; /* owned by the core, freed when the ride is forgotten */
    double lat, lng;
    int64_t radius_m, offer_ttl_ms;
    uint8_t status; /* hf_ride_status_t */
    hf_time_ms_t created_at_ms;
    /* The live offer (status offered): driver index + 1, its distance and deadline. */
    uint32_t offer_driver;
    int64_t offer_distance_m;
    hf_time_ms_t offer_expires_at_ms;
    uint32_t driver; /* the assigned driver's index + 1, else 0 */
} hf_ride_t;

/* A driver's PUT. lat and lng are required; available and rating keep their values when not
 * given (a new driver: available, HF_DISPATCH_RATING_DEFAULT). */
typedef struct hf_driver_update {
    const char *fleet_id, *driver_id;
    double lat, lng;
    bool has_available, available;
    bool has_rating;
    double rating;
} hf_driver_update_t;

typedef struct hf_ride_request {
    const char *fleet_id, *ride_id, *rider_id;
    double lat, lng;
    int64_t radius_m;     /* < 0: HF_DISPATCH_RADIUS_M_DEFAULT */
    int64_t offer_ttl_ms; /* < 0: HF_DISPATCH_OFFER_TTL_MS_DEFAULT */
} hf_ride_request_t;

/* HF_ERROR_INVALID_REQUEST (detail.field: "lat", "lng", "rating", "fleet", "driver_id"),
 * HF_ERROR_CAPACITY (fleets or drivers per fleet at their limit). A new fleet is made by its
 * first driver. *driver_index is the driver's. */
hf_error_t hf_dispatch_driver_put(hf_core_t *core, const hf_driver_update_t *update,
                                  hf_time_ms_t now, uint32_t *driver_index,
                                  hf_error_detail_t *detail);
/* HF_ERROR_INVALID_REQUEST (ride_id, rider_id, lat, lng, radius_m, offer_ttl_s),
 * HF_ERROR_FLEET_NOT_FOUND, HF_ERROR_RIDE_EXISTS (in any fleet), HF_ERROR_CAPACITY (rides
 * kept, or the fleet's searching rides, at their limit). The ride is offered at once when a
 * candidate is free, else searching. */
hf_error_t hf_dispatch_ride_create(hf_core_t *core, const hf_ride_request_t *request,
                                   hf_time_ms_t now, uint32_t *ride_index,
                                   hf_error_detail_t *detail);
/* HF_OK: assigned to driver_id (a repeat by the assigned driver changes nothing).
 * HF_ERROR_OFFER_EXPIRED: this driver's offer of this ride lapsed (whatever happened since).
 * HF_ERROR_NOT_OFFERED: no live offer of the ride to this driver (never offered, declined,
 * the ride cancelled or assigned to another). HF_ERROR_RIDE_NOT_FOUND. */
hf_error_t hf_dispatch_accept(hf_core_t *core, const char *ride_id, const char *driver_id,
                              hf_time_ms_t now, uint32_t *ride_index);
/* HF_OK: the ride moved to its next candidate (or searching). HF_ERROR_NOT_OFFERED when the
 * driver holds no live offer of the ride, its offer lapsed included (the contract gives a
 * decline no 410); HF_ERROR_RIDE_NOT_FOUND. */
hf_error_t hf_dispatch_decline(hf_core_t *core, const char *ride_id, const char *driver_id,
                               hf_time_ms_t now, uint32_t *ride_index);
/* HF_OK: cancelled (a repeat changes nothing); the offered or assigned driver is free again.
 * HF_ERROR_RIDE_FINISHED for a completed ride; HF_ERROR_RIDE_NOT_FOUND. */
hf_error_t hf_dispatch_cancel(hf_core_t *core, const char *ride_id, hf_time_ms_t now,
                              uint32_t *ride_index);
/* HF_OK: completed by its assigned driver, who is available again (unless a PUT since made it
 * available already: then it stays as it is); a repeat by that driver changes nothing.
 * HF_ERROR_NOT_ASSIGNED when the ride is not assigned to driver_id (offered, searching,
 * cancelled, another driver's, or no such driver); HF_ERROR_INVALID_REQUEST for a malformed
 * driver id; HF_ERROR_RIDE_NOT_FOUND. */
hf_error_t hf_dispatch_complete(hf_core_t *core, const char *ride_id, const char *driver_id,
                                hf_time_ms_t now, uint32_t *ride_index);
/* Takes the driver out of its fleet: its live offer moves on to the next candidate (the
 * driver is not counted as declining it), and a later PUT of the same id makes a new driver.
 * HF_ERROR_DRIVER_BUSY while a ride is assigned to it (status assigned);
 * HF_ERROR_FLEET_NOT_FOUND, HF_ERROR_DRIVER_NOT_FOUND. */
hf_error_t hf_dispatch_driver_delete(hf_core_t *core, const char *fleet_id, const char *driver_id,
                                     hf_time_ms_t now);
/* Emits a record of the drivers changed since the last flush (soft state), at most max of
 * them, those changed longest ago first; the others stay to be flushed next time. Returns how
 * many it emitted. */
uint32_t hf_dispatch_flush(hf_core_t *core, hf_time_ms_t now, uint32_t max);

/* Offers every searching ride that has a free candidate, oldest first in each fleet. After a
 * restore (drivers' soft rows may be newer than the rides' records, or the other way round);
 * at run time no searching ride has one. Returns the offers made. */
uint32_t hf_dispatch_rematch(hf_core_t *core, hf_time_ms_t now);

/* ---- Finished rides: kept up to a bound, then forgotten (hf_core_evict) ---- */

/* Finished rides kept in memory (HF_DISPATCH_FINISHED_RIDES_MAX unless set); past it the
 * oldest whose last record is durable are forgotten by hf_core_evict. */
void hf_dispatch_set_finished_max(hf_core_t *core, uint32_t finished_max);
uint32_t hf_dispatch_rides_finished(const hf_core_t *core);
/* Rides forgotten since this core was made (restored ones included). */
uint64_t hf_dispatch_rides_forgotten(const hf_core_t *core);
/* Whether ride_id may name a ride this core forgot (a filter: false means surely not, so a
 * ride the core does not have is no ride and the store need not be asked). */
bool hf_dispatch_ride_maybe_forgotten(const hf_core_t *core, const char *ride_id);

/* ---- Lookups ---- */

const hf_ride_t *hf_dispatch_ride_find(const hf_core_t *core, const char *ride_id, uint32_t *index);
const hf_ride_t *hf_dispatch_ride_at(const hf_core_t *core, uint32_t index);
uint32_t hf_dispatch_ride_count(const hf_core_t *core);
const hf_driver_t *hf_dispatch_driver_find(const hf_core_t *core, const char *fleet_id,
                                           const char *driver_id, uint32_t *index);
const hf_driver_t *hf_dispatch_driver_at(const hf_core_t *core, uint32_t index);
uint32_t hf_dispatch_driver_count(const hf_core_t *core);
const char *hf_dispatch_fleet_id(const hf_core_t *core, uint32_t fleet);
/* Whether the ride remembers driver (an index) as excluded; *lapsed: its offer lapsed (else it
 * declined). */
bool hf_dispatch_ride_excluded(const hf_core_t *core, uint32_t ride, uint32_t driver, bool *lapsed);
/* The number (hf_core_change_count) of the newest record of the ride, or of a record that
 * concerned the driver (an offer, an assignment, a freeing): an answer showing them as they
 * are tells nothing the store lacks once that record is durable. 0 for restored ones. */
uint64_t hf_dispatch_ride_change(const hf_core_t *core, uint32_t index);
uint64_t hf_dispatch_driver_change(const hf_core_t *core, uint32_t index);

/* A page of the fleet's drivers in id order (bytewise): those whose id is above after_id (NULL:
 * from the first) and whose status is status (hf_driver_status_t, or -1 for any), at most
 * limit of them, into indexes (limit entries); *more tells whether more follow. Reads every
 * driver of the server once: O(drivers * log limit). */
uint32_t hf_dispatch_drivers_page(const hf_core_t *core, uint32_t fleet, int status,
                                  const char *after_id, uint32_t limit, uint32_t *indexes,
                                  bool *more);

/* The best free candidate for a ride at (lat, lng) within radius_m in the fleet, skipping the
 * drivers ride (an index, or UINT32_MAX for none) excludes: false when there is none. The
 * index's ring search; for tests and benchmarks (rides use it themselves). */
bool hf_dispatch_candidate(const hf_core_t *core, uint32_t fleet, double lat, double lng,
                           int64_t radius_m, uint32_t ride, uint32_t *driver, int64_t *distance_m);
/* The fleet's index, false when there is no such fleet. */
bool hf_dispatch_fleet_find(const hf_core_t *core, const char *fleet_id, uint32_t *fleet);

/* ---- Restore (at start; nothing is emitted) ---- */

typedef struct hf_stored_driver {
    const char *fleet_id, *driver_id;
    double lat, lng, rating;
    bool available;
} hf_stored_driver_t;

typedef struct hf_stored_ride {
    const char *ride_id, *fleet_id, *rider_id;
    double lat, lng;
    int64_t radius_m, offer_ttl_ms;
    uint8_t status;
    hf_time_ms_t created_at_ms;
    const char *offer_driver_id; /* NULL without an offer */
    int64_t offer_distance_m;
    hf_time_ms_t offer_expires_at_ms;
    const char *driver_id;         /* NULL until assigned */
    const char *declined, *lapsed; /* ids separated by single spaces */
} hf_stored_ride_t;

/* Drivers first, then rides in the order they were created. An offer whose deadline has
 * passed lapses at the first hf_core_advance, durably. HF_ERROR_INVALID_REQUEST for a row
 * that does not fit (unknown fleet, driver of another fleet, bad status). A ride naming a
 * driver that has no row names a deleted one (its slot is kept, found by no lookup; an offer
 * to it becomes a search). Finished rides past the bound are forgotten as they come, so a
 * restore after millions of rides needs no more memory than the server had while running. */
hf_error_t hf_dispatch_restore_driver(hf_core_t *core, const hf_stored_driver_t *driver);
hf_error_t hf_dispatch_restore_ride(hf_core_t *core, const hf_stored_ride_t *ride);
/* Takes a forgotten ride back from its stored row (a finished one, of a fleet this core has,
 * not in memory): it is then the newest finished ride. HF_ERROR_INVALID_REQUEST otherwise. */
hf_error_t hf_dispatch_revive_ride(hf_core_t *core, const hf_stored_ride_t *ride,
                                   uint32_t *ride_index);

/* ---- Running counts (GET /metrics: API.md section 9) ----
 *
 * Kept as every ride and driver changes (restore included), so a scrape reads a few integers
 * instead of walking up to HF_DISPATCH_RIDES_MAX rides; hf_dispatch_check recounts them.
 * A driver's status, one of four, in this order of precedence: offered (holds a live offer),
 * assigned (a ride was assigned to it and no PUT made it available since), available (free:
 * an offer may come), unavailable (its last PUT said so). */
typedef enum hf_driver_status {
    HF_DRIVER_AVAILABLE = 0,
    HF_DRIVER_OFFERED = 1,
    HF_DRIVER_ASSIGNED = 2,
    HF_DRIVER_UNAVAILABLE = 3,
} hf_driver_status_t;
#define HF_DRIVER_STATUS_COUNT 4
#define HF_RIDE_STATUS_COUNT 5

/* How an offer ended: accepted, declined, or lapsed ("expired"). */
typedef enum hf_offer_outcome {
    HF_OFFER_ACCEPTED = 0,
    HF_OFFER_DECLINED = 1,
    HF_OFFER_EXPIRED = 2,
} hf_offer_outcome_t;
#define HF_OFFER_OUTCOME_COUNT 3

/* "available", "offered", "assigned", "unavailable"; "accepted", "declined", "expired";
 * static. */
const char *hf_driver_status_name(uint8_t status);
const char *hf_offer_outcome_name(uint8_t outcome);
/* The driver's status as its fields say (the precedence above). */
hf_driver_status_t hf_dispatch_driver_status(const hf_driver_t *driver);

typedef struct hf_dispatch_counts {
    /* By hf_ride_status_t: every ride this core has known, those forgotten included (under
     * their final status: the store keeps them). */
    uint64_t rides[HF_RIDE_STATUS_COUNT];
    uint64_t drivers[HF_DRIVER_STATUS_COUNT]; /* by hf_driver_status_t */
    /* Offers ended since this core was made (a restart starts again from 0, as a Prometheus
     * counter may): by hf_offer_outcome_t. */
    uint64_t offers[HF_OFFER_OUTCOME_COUNT];
} hf_dispatch_counts_t;

/* The running counts; false (and zeros) while dispatch is not in use (no fleet yet). */
bool hf_dispatch_counts(const hf_core_t *core, hf_dispatch_counts_t *counts);

/* Invariants for tests: at most one live offer per driver and it points back, the grid holds
 * exactly the free drivers, searching lists hold searching rides, the running counts are a
 * recount's. NULL or a static fault. */
const char *hf_dispatch_check(const hf_core_t *core);

#endif
