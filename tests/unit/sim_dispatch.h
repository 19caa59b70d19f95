/* The simulation's dispatch run (included by test_simulation.c, which owns the PRNG and the
 * seed): random drivers' PUTs, rides, accepts, declines, cancels and clock steps against a
 * reference model that keeps plain arrays and finds each candidate by a plain scan of the
 * fleet's drivers (nearest in whole metres, then higher rating, then lower id), keeps each
 * fleet's searching rides in a plain list, oldest first, and lapses offers itself (the earliest
 * deadline first, ties by the ride's creation), the searching rides ordered by creation. After every operation the core's answer must be
 * the model's, and every ride and driver the same: status, offer (driver, distance, deadline),
 * assigned driver, availability; hf_core_next_expiry the earliest live offer's deadline, and
 * hf_dispatch_check clean.
 *
 *   HF_SIM_DISPATCH_OPERATIONS=N  operations (default 50000)
 *
 * Two fleets of 12 drivers each: one around a city, one across the antimeridian; new rides
 * (and some repeated ids), radii from 100 m to 3 km, offers of 1 ms to 3 s, the clock moving
 * up to 0.7 s a step. The model knows the fleet's limit of searching rides too
 * (HF_DISPATCH_FLEET_SEARCHING_MAX). Every ride and hf_dispatch_check are compared every 500
 * operations, the open rides (searching, offered) and the one named after each. */
#include <math.h>

#include "core/dispatch/dispatch.h"
#include "core/dispatch/geo.h"

#define DS_FLEETS 2
#define DS_PER_FLEET 12
#define DS_DRIVERS (DS_FLEETS * DS_PER_FLEET)
#define DS_RIDES 20000
#define DS_NONE (-1)

typedef struct ds_driver {
    bool exists, available;
    double lat, lng, rating;
    int offer, assigned; /* ride numbers, DS_NONE */
} ds_driver_t;

typedef struct ds_ride {
    bool exists;
    int fleet, status;
    double lat, lng;
    int64_t radius_m, ttl_ms, created_order;
    int offer_driver, driver; /* driver numbers, DS_NONE */
    int64_t distance_m, expires_at_ms;
    int excluded[HF_DISPATCH_RIDE_EXCLUDED_MAX];
    bool lapsed[HF_DISPATCH_RIDE_EXCLUDED_MAX];
    int excluded_count;
} ds_ride_t;

typedef struct ds_model {
    ds_driver_t drivers[DS_DRIVERS];
    ds_ride_t rides[DS_RIDES];
    int searching[DS_FLEETS][DS_RIDES]; /* ride numbers, oldest first */
    int searching_count[DS_FLEETS];
    bool fleet_exists[DS_FLEETS];
    int64_t now, created;
    /* Rides searching or offered (the only ones that change but for a cancel), unordered. */
    int open[DS_RIDES];
    int open_count;
    int touched; /* the ride of this step's operation, compared after it */
    uint64_t outcomes[HF_OFFER_OUTCOME_COUNT]; /* offers ended, by hf_offer_outcome_t */
} ds_model_t;

static ds_model_t ds;
static hf_core_t *ds_core;
static uint64_t ds_step;
static char ds_operation[160];

static const char *const DS_FLEET_IDS[DS_FLEETS] = {"fa", "fb"};
static const double DS_CENTRES[DS_FLEETS][2] = {{45.07, 7.69}, {-16.5, 179.995}};

static void ds_fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

static void ds_fail(const char *format, ...) {
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    fprintf(stderr,
            "\nDISPATCH SIMULATION MISMATCH seed=%" PRIu64 " step=%" PRIu64
            "\n  operation: %s\n  %s\n  reproduce: HF_SEED=%" PRIu64
            " HF_SIM_DISPATCH_OPERATIONS=%" PRIu64 " HF_SIM_OPERATIONS=0"
            " HF_SIM_WINDOW_OPERATIONS=0\n",
            seed, ds_step, ds_operation, text, seed, ds_step + 1);
    fail_msg("dispatch simulation mismatch at seed=%" PRIu64 " step=%" PRIu64 ": %s", seed, ds_step,
             text);
    abort();
}

static void ds_driver_id(int driver, char *out, size_t size) {
    snprintf(out, size, "d%d", driver % DS_PER_FLEET);
}

static bool ds_excludes(const ds_ride_t *ride, int driver, bool *lapsed) {
    for (int i = 0; i < ride->excluded_count; i++) {
        if (ride->excluded[i] != driver) continue;
        if (lapsed) *lapsed = ride->lapsed[i];
        return true;
    }
    return false;
}

static bool ds_free(const ds_driver_t *driver) {
    return driver->available && driver->offer == DS_NONE;
}

/* The plain scan. */
static int ds_candidate(int ride_number, int64_t *distance_out) {
    const ds_ride_t *ride = &ds.rides[ride_number];
    int best = DS_NONE;
    int64_t best_distance = 0;
    char best_id[16] = "", id[16];
    for (int d = ride->fleet * DS_PER_FLEET; d < (ride->fleet + 1) * DS_PER_FLEET; d++) {
        const ds_driver_t *driver = &ds.drivers[d];
        if (!driver->exists || !ds_free(driver) || ds_excludes(ride, d, NULL)) continue;
        int64_t distance = hf_geo_distance_whole_m(ride->lat, ride->lng, driver->lat, driver->lng);
        if (distance > ride->radius_m) continue;
        ds_driver_id(d, id, sizeof id);
        bool better = best == DS_NONE || distance < best_distance ||
                      (distance == best_distance &&
                       (driver->rating > ds.drivers[best].rating ||
                        (driver->rating == ds.drivers[best].rating && strcmp(id, best_id) < 0)));
        if (!better) continue;
        best = d;
        best_distance = distance;
        snprintf(best_id, sizeof best_id, "%s", id);
    }
    *distance_out = best_distance;
    return best;
}

static void ds_searching_remove(int ride_number) {
    int fleet = ds.rides[ride_number].fleet;
    for (int i = 0; i < ds.searching_count[fleet]; i++) {
        if (ds.searching[fleet][i] != ride_number) continue;
        memmove(&ds.searching[fleet][i], &ds.searching[fleet][i + 1],
                (size_t)(ds.searching_count[fleet] - i - 1) * sizeof(int));
        ds.searching_count[fleet]--;
        return;
    }
}

static void ds_close(int ride_number) {
    for (int i = 0; i < ds.open_count; i++) {
        if (ds.open[i] != ride_number) continue;
        ds.open[i] = ds.open[--ds.open_count];
        return;
    }
}

static void ds_offer(int ride_number, int driver, int64_t distance) {
    ds_ride_t *ride = &ds.rides[ride_number];
    ds_searching_remove(ride_number);
    ride->status = HF_RIDE_OFFERED;
    ride->offer_driver = driver;
    ride->distance_m = distance;
    ride->expires_at_ms = ds.now + ride->ttl_ms;
    ds.drivers[driver].offer = ride_number;
}

static void ds_move_on(int ride_number) {
    ds_ride_t *ride = &ds.rides[ride_number];
    ride->status = HF_RIDE_SEARCHING;
    ride->offer_driver = DS_NONE;
    bool exhausted = ride->excluded_count >= (int)HF_DISPATCH_RIDE_EXCLUDED_MAX;
    int64_t distance;
    int driver = exhausted ? DS_NONE : ds_candidate(ride_number, &distance);
    if (driver != DS_NONE) {
        ds_offer(ride_number, driver, distance);
        return;
    }
    if (exhausted) return;
    /* Oldest (created first) first, wherever it began searching. */
    int *list = ds.searching[ride->fleet], count = ds.searching_count[ride->fleet], at = count;
    while (at > 0 && ds.rides[list[at - 1]].created_order > ride->created_order) at--;
    memmove(&list[at + 1], &list[at], (size_t)(count - at) * sizeof(int));
    list[at] = ride_number;
    ds.searching_count[ride->fleet]++;
}

/* A free driver takes the oldest searching ride of its fleet it fits. */
static void ds_match(int driver) {
    const ds_driver_t *view = &ds.drivers[driver];
    if (!ds_free(view)) return;
    int fleet = driver / DS_PER_FLEET;
    for (int i = 0; i < ds.searching_count[fleet]; i++) {
        int ride_number = ds.searching[fleet][i];
        const ds_ride_t *ride = &ds.rides[ride_number];
        int64_t distance = hf_geo_distance_whole_m(ride->lat, ride->lng, view->lat, view->lng);
        if (distance > ride->radius_m || ds_excludes(ride, driver, NULL)) continue;
        ds_offer(ride_number, driver, distance);
        return;
    }
}

static void ds_offer_end(int ride_number, bool lapsed) {
    ds_ride_t *ride = &ds.rides[ride_number];
    int driver = ride->offer_driver;
    ride->excluded[ride->excluded_count] = driver;
    ride->lapsed[ride->excluded_count++] = lapsed;
    ds.outcomes[lapsed ? HF_OFFER_EXPIRED : HF_OFFER_DECLINED]++;
    ds.drivers[driver].offer = DS_NONE;
    ds_move_on(ride_number);
    ds_match(driver);
}

/* Lapses every offer due at now, earliest first (ties: the ride created first). */
static void ds_advance(void) {
    for (;;) {
        int due = DS_NONE;
        for (int i = 0; i < ds.open_count; i++) {
            int r = ds.open[i];
            const ds_ride_t *ride = &ds.rides[r];
            if (ride->status != HF_RIDE_OFFERED || ride->expires_at_ms > ds.now) continue;
            if (due == DS_NONE || ride->expires_at_ms < ds.rides[due].expires_at_ms ||
                (ride->expires_at_ms == ds.rides[due].expires_at_ms &&
                 ride->created_order < ds.rides[due].created_order))
                due = r;
        }
        if (due == DS_NONE) return;
        ds_offer_end(due, true);
    }
}

static double ds_coordinate(double centre, double spread, double limit) {
    double value = centre + (double)rng_range(-1000, 1000) / 1000.0 * spread;
    if (value > limit) value -= 2 * limit;
    if (value < -limit) value += 2 * limit;
    return value;
}

/* ---- operations: each applies to the model, then to the core, and compares answers ---- */

static void ds_expect(hf_error_t got, hf_error_t want) {
    if (got != want) ds_fail("core answered %d, the model %d", (int)got, (int)want);
}

static void ds_put(void) {
    int driver = (int)rng_below(DS_DRIVERS), fleet = driver / DS_PER_FLEET;
    char id[16];
    ds_driver_id(driver, id, sizeof id);
    hf_driver_update_t update = {.fleet_id = DS_FLEET_IDS[fleet],
                                 .driver_id = id,
                                 .lat = ds_coordinate(DS_CENTRES[fleet][0], 0.02, 90),
                                 .lng = ds_coordinate(DS_CENTRES[fleet][1], 0.02, 180)};
    bool invalid = rng_chance(3);
    if (invalid) update.lat = rng_chance(50) ? 90.5 : NAN;
    update.has_available = rng_chance(70);
    update.available = rng_chance(75);
    update.has_rating = rng_chance(40);
    static const double RATINGS[] = {3.0, 4.0, 4.5, 5.0};
    update.rating = RATINGS[rng_below(4)];
    snprintf(ds_operation, sizeof ds_operation,
             "PUT %s/%s (%.5f, %.5f) available %d/%d rating %d/%.1f", update.fleet_id, id,
             update.lat, update.lng, update.has_available, update.available, update.has_rating,
             update.rating);
    hf_error_t want = invalid ? HF_ERROR_INVALID_REQUEST : HF_OK;
    if (!invalid) {
        ds_driver_t *model_driver = &ds.drivers[driver];
        if (!model_driver->exists)
            *model_driver = (ds_driver_t){.exists = true,
                                          .available = true,
                                          .rating = HF_DISPATCH_RATING_DEFAULT,
                                          .offer = DS_NONE,
                                          .assigned = DS_NONE};
        ds.fleet_exists[fleet] = true;
        model_driver->lat = update.lat;
        model_driver->lng = update.lng;
        if (update.has_rating) model_driver->rating = update.rating;
        if (update.has_available) {
            model_driver->available = update.available;
            if (update.available) model_driver->assigned = DS_NONE;
        }
        if (ds.searching_count[fleet] > 0) ds_match(driver);
    }
    uint32_t index;
    hf_error_detail_t detail = {0};
    ds_expect(hf_dispatch_driver_put(ds_core, &update, ds.now, &index, &detail), want);
}

static void ds_create(void) {
    int number = ds.created < DS_RIDES && rng_chance(90) ? (int)ds.created
                                                         : (int)rng_below((uint32_t)ds.created + 1);
    if (number >= DS_RIDES) number = DS_RIDES - 1;
    int fleet = (int)rng_below(DS_FLEETS);
    bool unknown_fleet = rng_chance(4), invalid = rng_chance(3);
    char id[16];
    snprintf(id, sizeof id, "r%d", number);
    static const int64_t RADII[] = {100, 500, 1500, 3000};
    hf_ride_request_t request = {.fleet_id = unknown_fleet ? "fz" : DS_FLEET_IDS[fleet],
                                 .ride_id = id,
                                 .rider_id = "rider",
                                 .lat = ds_coordinate(DS_CENTRES[fleet][0], 0.015, 90),
                                 .lng = ds_coordinate(DS_CENTRES[fleet][1], 0.015, 180),
                                 .radius_m = invalid ? 0 : RADII[rng_below(4)],
                                 .offer_ttl_ms = rng_range(1, 3000)};
    snprintf(ds_operation, sizeof ds_operation, "create %s in %s radius %" PRId64 " ttl %" PRId64,
             id, request.fleet_id, request.radius_m, request.offer_ttl_ms);
    hf_error_t want = HF_OK;
    if (invalid) want = HF_ERROR_INVALID_REQUEST;
    else if (unknown_fleet || !ds.fleet_exists[fleet]) want = HF_ERROR_FLEET_NOT_FOUND;
    else if (ds.rides[number].exists) want = HF_ERROR_RIDE_EXISTS;
    else if (ds.searching_count[fleet] >= (int)HF_DISPATCH_FLEET_SEARCHING_MAX)
        want = HF_ERROR_CAPACITY;
    ds.touched = number;
    if (want == HF_OK) {
        ds_ride_t *ride = &ds.rides[number];
        *ride = (ds_ride_t){.exists = true,
                            .fleet = fleet,
                            .lat = request.lat,
                            .lng = request.lng,
                            .radius_m = request.radius_m,
                            .ttl_ms = request.offer_ttl_ms,
                            .created_order = ds.created++,
                            .offer_driver = DS_NONE,
                            .driver = DS_NONE};
        ds.open[ds.open_count++] = number;
        ds_move_on(number);
    }
    uint32_t index;
    hf_error_detail_t detail = {0};
    ds_expect(hf_dispatch_ride_create(ds_core, &request, ds.now, &index, &detail), want);
}

/* Mostly a searching or offered ride; else any id made so far, or the next one (unknown). */
static int ds_pick_ride(void) {
    int number = ds.open_count > 0 && rng_chance(75) ? ds.open[rng_below((uint32_t)ds.open_count)]
                                                     : (int)rng_below((uint32_t)ds.created + 1);
    ds.touched = number < DS_RIDES ? number : DS_RIDES - 1;
    return ds.touched;
}

/* A ride number and a driver of its fleet: mostly its offered driver, when it has one. */
static int ds_pick_answer(int *driver) {
    int number = ds_pick_ride();
    const ds_ride_t *ride = &ds.rides[number];
    int fleet = ride->exists ? ride->fleet : (int)rng_below(DS_FLEETS);
    *driver = fleet * DS_PER_FLEET + (int)rng_below(DS_PER_FLEET);
    if (ride->exists && ride->status == HF_RIDE_OFFERED && rng_chance(60))
        *driver = ride->offer_driver;
    if (ride->exists && ride->status == HF_RIDE_ASSIGNED && rng_chance(20)) *driver = ride->driver;
    return number;
}

static hf_error_t ds_refusal(const ds_ride_t *ride, int driver) {
    bool lapsed = false;
    return ds.drivers[driver].exists && ds_excludes(ride, driver, &lapsed) && lapsed
               ? HF_ERROR_OFFER_EXPIRED
               : HF_ERROR_NOT_OFFERED;
}

static void ds_answer(bool accepting) {
    int driver;
    int number = ds_pick_answer(&driver);
    ds_ride_t *ride = &ds.rides[number];
    char ride_id[16], driver_id[16];
    snprintf(ride_id, sizeof ride_id, "r%d", number);
    ds_driver_id(driver, driver_id, sizeof driver_id);
    snprintf(ds_operation, sizeof ds_operation, "%s %s by %s", accepting ? "accept" : "decline",
             ride_id, driver_id);
    hf_error_t want = HF_OK;
    bool holds_offer = ride->exists && ride->status == HF_RIDE_OFFERED &&
                       ride->offer_driver == driver;
    if (!ride->exists) want = HF_ERROR_RIDE_NOT_FOUND;
    else if (accepting && ride->status == HF_RIDE_ASSIGNED && ride->driver == driver) want = HF_OK;
    else if (!holds_offer) want = accepting ? ds_refusal(ride, driver) : HF_ERROR_NOT_OFFERED;
    else if (accepting) {
        ds_close(number);
        ds.outcomes[HF_OFFER_ACCEPTED]++;
        ride->status = HF_RIDE_ASSIGNED;
        ride->driver = driver;
        ride->offer_driver = DS_NONE;
        ds.drivers[driver].offer = DS_NONE;
        ds.drivers[driver].available = false;
        ds.drivers[driver].assigned = number;
    } else {
        ds_offer_end(number, false);
    }
    uint32_t index;
    hf_error_t got = accepting ? hf_dispatch_accept(ds_core, ride_id, driver_id, ds.now, &index)
                               : hf_dispatch_decline(ds_core, ride_id, driver_id, ds.now, &index);
    ds_expect(got, want);
}

static void ds_cancel(void) {
    int number = ds_pick_ride();
    ds_ride_t *ride = &ds.rides[number];
    char ride_id[16];
    snprintf(ride_id, sizeof ride_id, "r%d", number);
    snprintf(ds_operation, sizeof ds_operation, "cancel %s", ride_id);
    hf_error_t want = ride->exists ? HF_OK : HF_ERROR_RIDE_NOT_FOUND;
    if (ride->exists && ride->status != HF_RIDE_CANCELLED) {
        int freed = DS_NONE;
        if (ride->status == HF_RIDE_OFFERED) {
            freed = ride->offer_driver;
            ds.drivers[freed].offer = DS_NONE;
        } else if (ride->status == HF_RIDE_ASSIGNED &&
                   ds.drivers[ride->driver].assigned == number) {
            freed = ride->driver;
            ds.drivers[freed].assigned = DS_NONE;
            ds.drivers[freed].available = true;
        }
        ds_searching_remove(number);
        ds_close(number);
        ride->status = HF_RIDE_CANCELLED;
        ride->offer_driver = DS_NONE;
        if (freed != DS_NONE) ds_match(freed);
    }
    uint32_t index;
    ds_expect(hf_dispatch_cancel(ds_core, ride_id, ds.now, &index), want);
}

/* ---- the comparison ---- */

static const char *ds_ride_id_of(int number, char *out) {
    if (number == DS_NONE) return "-";
    snprintf(out, 16, "r%d", number);
    return out;
}

static void ds_compare_ride(int number) {
    const ds_ride_t *want = &ds.rides[number];
    char id[16], driver_id[16];
    snprintf(id, sizeof id, "r%d", number);
    const hf_ride_t *got = hf_dispatch_ride_find(ds_core, id, NULL);
    if (!want->exists) {
        if (got) ds_fail("ride %s exists in the core only", id);
        return;
    }
    if (!got) ds_fail("ride %s is missing from the core", id);
    if (got->status != want->status)
        ds_fail("ride %s: status %s, the model's %s", id, hf_ride_status_name(got->status),
                hf_ride_status_name((uint8_t)want->status));
    if (want->status == HF_RIDE_OFFERED) {
        ds_driver_id(want->offer_driver, driver_id, sizeof driver_id);
        const char *offered = hf_dispatch_driver_at(ds_core, got->offer_driver - 1)->id;
        if (strcmp(offered, driver_id) != 0 || got->offer_distance_m != want->distance_m ||
            got->offer_expires_at_ms != want->expires_at_ms)
            ds_fail("ride %s: offered to %s at %" PRId64 " m until %" PRId64
                    ", the model's %s at %" PRId64 " m until %" PRId64,
                    id, offered, got->offer_distance_m, got->offer_expires_at_ms, driver_id,
                    want->distance_m, want->expires_at_ms);
    }
    if ((want->driver == DS_NONE) != (got->driver == 0))
        ds_fail("ride %s: assigned in one only", id);
    for (int d = 0; d < want->excluded_count; d++) {
        uint32_t driver_index;
        ds_driver_id(want->excluded[d], driver_id, sizeof driver_id);
        bool lapsed = false;
        if (!hf_dispatch_driver_find(ds_core, DS_FLEET_IDS[want->fleet], driver_id,
                                     &driver_index) ||
            !hf_dispatch_ride_excluded(ds_core, got - hf_dispatch_ride_at(ds_core, 0), driver_index,
                                       &lapsed) ||
            lapsed != want->lapsed[d])
            ds_fail("ride %s: driver %s should be excluded (lapsed %d)", id, driver_id,
                    want->lapsed[d]);
    }
}

/* The open rides and the one the operation named; every ride once in a while. */
static void ds_compare(bool every_ride) {
    int64_t next = INT64_MAX;
    uint32_t rides = 0, drivers = 0;
    for (int r = 0; every_ride && r <= ds.created && r < DS_RIDES; r++) ds_compare_ride(r);
    for (int i = 0; i < ds.open_count; i++) {
        const ds_ride_t *ride = &ds.rides[ds.open[i]];
        ds_compare_ride(ds.open[i]);
        if (ride->status == HF_RIDE_OFFERED && ride->expires_at_ms < next)
            next = ride->expires_at_ms;
    }
    ds_compare_ride(ds.touched);
    rides = (uint32_t)ds.created; /* ids are made in order: every id below it is a ride */
    char id[16], ride_id[16], other[16];
    for (int d = 0; d < DS_DRIVERS; d++) {
        const ds_driver_t *want = &ds.drivers[d];
        if (!want->exists) continue;
        drivers++;
        ds_driver_id(d, id, sizeof id);
        const hf_driver_t *got = hf_dispatch_driver_find(ds_core, DS_FLEET_IDS[d / DS_PER_FLEET],
                                                         id, NULL);
        if (!got) ds_fail("driver %s of %s is missing", id, DS_FLEET_IDS[d / DS_PER_FLEET]);
        const char *offer = got->offer ? hf_dispatch_ride_at(ds_core, got->offer - 1)->id : "-";
        const char *assigned = got->assigned ? hf_dispatch_ride_at(ds_core, got->assigned - 1)->id
                                             : "-";
        if (got->available != want->available ||
            strcmp(offer, ds_ride_id_of(want->offer, ride_id)) ||
            strcmp(assigned, ds_ride_id_of(want->assigned, other)))
            ds_fail("driver %s of %s: available %d offer %s assigned %s, the model's %d %s %s", id,
                    DS_FLEET_IDS[d / DS_PER_FLEET], got->available, offer, assigned,
                    want->available, ride_id, other);
    }
    if (hf_dispatch_ride_count(ds_core) != rides || hf_dispatch_driver_count(ds_core) != drivers)
        ds_fail("counts: %u rides and %u drivers, the model's %u and %u",
                hf_dispatch_ride_count(ds_core), hf_dispatch_driver_count(ds_core), rides, drivers);
    if (hf_core_next_expiry(ds_core) != next)
        ds_fail("next expiry %" PRId64 ", the model's %" PRId64, hf_core_next_expiry(ds_core),
                next);
    const char *fault = every_ride ? hf_dispatch_check(ds_core) : NULL;
    if (fault) ds_fail("hf_dispatch_check: %s", fault);
    /* The running counts of offers' outcomes (GET /metrics); those of statuses are recounted
     * by hf_dispatch_check. */
    hf_dispatch_counts_t counts;
    hf_dispatch_counts(ds_core, &counts);
    for (int o = 0; o < HF_OFFER_OUTCOME_COUNT; o++)
        if (counts.offers[o] != ds.outcomes[o])
            ds_fail("%s offers: %" PRIu64 ", the model's %" PRIu64,
                    hf_offer_outcome_name((uint8_t)o), counts.offers[o], ds.outcomes[o]);
}

static void test_dispatch_simulation(void **state) {
    (void)state;
    rng_state = seed ^ UINT64_C(0xD15BA7C4);
    memset(&ds, 0, sizeof ds);
    for (int d = 0; d < DS_DRIVERS; d++) ds.drivers[d].offer = ds.drivers[d].assigned = DS_NONE;
    ds.now = EPOCH;
    ds_core = hf_core_create((hf_mutation_sink_t){0});
    uint64_t operations = env_number("HF_SIM_DISPATCH_OPERATIONS", 50000);
    uint64_t counts[6] = {0};
    for (ds_step = 0; ds_step < operations; ds_step++) {
        ds.now += rng_range(0, 700);
        ds_advance();
        hf_core_advance(ds_core, ds.now); /* the engine's, before each request */
        uint32_t roll = rng_below(100);
        int kind = roll < 42   ? 0
                   : roll < 54 ? 1
                   : roll < 68 ? 2
                   : roll < 80 ? 3
                   : roll < 97 ? 4
                               : 5;
        counts[kind]++;
        switch (kind) {
        case 0: ds_put(); break;
        case 1: ds_create(); break;
        case 2: ds_answer(true); break;
        case 3: ds_answer(false); break;
        case 4: ds_cancel(); break;
        default:
            snprintf(ds_operation, sizeof ds_operation, "advance");
            hf_core_advance(ds_core, ds.now);
            break;
        }
        ds_compare(ds_step % 500 == 499 || ds_step + 1 == operations);
    }
    printf("dispatch simulation: %" PRIu64 " operations: %" PRIu64 " PUTs, %" PRIu64
           " rides, %" PRIu64 " accepts, %" PRIu64 " declines, %" PRIu64 " cancels, %" PRIu64
           " clock steps\n",
           operations, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);
    hf_core_destroy(ds_core);
}
