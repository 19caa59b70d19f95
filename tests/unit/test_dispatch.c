/* Dispatch in the core (core/dispatch/): haversine against known distances, the ranking and
 * its ties, the radius's edge, the antimeridian and the poles, the grid's ring search against
 * a plain scan on random fleets, exclusivity, timeouts, decline, accept, cancel, searching
 * rides taken by a freed driver, limits, the soft flush, and a restore from the records;
 * complete, a driver deleted, finished rides forgotten and revived, pages of drivers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"
#include "core/dispatch/dispatch.h"
#include "core/dispatch/geo.h"
#include "store/store.h"

#define T0 1795291200000LL
#define TTL 10000
/* One degree of a great circle on the sphere of geo.h, in metres. */
#define DEGREE_M (HF_GEO_EARTH_RADIUS_M * 3.14159265358979323846 / 180.0)

typedef struct fixture {
    hf_core_t *core;
    hf_batch_t *batch;
} fixture_t;

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->batch = hf_batch_create();
    f->core = hf_core_create((hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    assert_null(hf_dispatch_check(f->core));
    hf_core_destroy(f->core);
    hf_batch_destroy(f->batch);
    free(f);
    return 0;
}

static hf_error_t put_full(fixture_t *f, const char *fleet, const char *id, double lat, double lng,
                           int available, double rating, int64_t at) {
    hf_driver_update_t update = {.fleet_id = fleet,
                                 .driver_id = id,
                                 .lat = lat,
                                 .lng = lng,
                                 .has_available = available >= 0,
                                 .available = available > 0,
                                 .has_rating = rating >= 0,
                                 .rating = rating};
    uint32_t index;
    hf_error_detail_t detail = {0};
    return hf_dispatch_driver_put(f->core, &update, at, &index, &detail);
}

static void put(fixture_t *f, const char *id, double lat, double lng, double rating) {
    assert_int_equal(put_full(f, "f1", id, lat, lng, 1, rating, T0), HF_OK);
}

static hf_error_t ride_full(fixture_t *f, const char *fleet, const char *id, double lat, double lng,
                            int64_t radius_m, int64_t ttl_ms, int64_t at, const char **field) {
    hf_ride_request_t request = {.fleet_id = fleet,
                                 .ride_id = id,
                                 .rider_id = "u1",
                                 .lat = lat,
                                 .lng = lng,
                                 .radius_m = radius_m,
                                 .offer_ttl_ms = ttl_ms};
    uint32_t index;
    hf_error_detail_t detail = {0};
    hf_error_t error = hf_dispatch_ride_create(f->core, &request, at, &index, &detail);
    if (field) *field = detail.field;
    return error;
}

static const hf_ride_t *ride(fixture_t *f, const char *id) {
    const hf_ride_t *found = hf_dispatch_ride_find(f->core, id, NULL);
    assert_non_null(found);
    return found;
}

static const hf_ride_t *ride_make(fixture_t *f, const char *id, double lat, double lng,
                                  int64_t radius_m, int64_t at) {
    assert_int_equal(ride_full(f, "f1", id, lat, lng, radius_m, TTL, at, NULL), HF_OK);
    return ride(f, id);
}

/* The id of the driver a ride is offered to, or "" when it has no offer. */
static const char *offered_to(fixture_t *f, const char *ride_id) {
    const hf_ride_t *found = ride(f, ride_id);
    if (found->status != HF_RIDE_OFFERED) return "";
    return hf_dispatch_driver_at(f->core, found->offer_driver - 1)->id;
}

/* ---- geometry ---- */

static void test_haversine_known_distances(void **state) {
    (void)state;
    /* One degree along a meridian and along the equator. */
    assert_int_equal(hf_geo_distance_whole_m(0, 0, 1, 0), (int64_t)floor(DEGREE_M + 0.5));
    assert_int_equal(hf_geo_distance_whole_m(0, 0, 0, 1), (int64_t)floor(DEGREE_M + 0.5));
    assert_int_equal(hf_geo_distance_whole_m(0, 0, 0, 0), 0);
    /* Across the antimeridian: 0.002 degrees, not 359.998. */
    assert_int_equal(hf_geo_distance_whole_m(0, 179.999, 0, -179.999),
                     (int64_t)floor(0.002 * DEGREE_M + 0.5));
    /* Over the pole: two points 0.001 degrees from it on opposite meridians. */
    assert_int_equal(hf_geo_distance_whole_m(89.999, 0, 89.999, 180),
                     (int64_t)floor(0.002 * DEGREE_M + 0.5));
    assert_int_equal(hf_geo_distance_whole_m(90, 0, 90, 123), 0);
    /* Antipodes: half the circumference. */
    assert_int_equal(hf_geo_distance_whole_m(0, 0, 0, 180), (int64_t)floor(180 * DEGREE_M + 0.5));
    /* JFK to LAX: 3,974 km on this sphere (3,983 km on the ellipsoid). */
    double jfk_lax = hf_geo_distance_m(40.6413, -73.7781, 33.9416, -118.4085);
    assert_true(jfk_lax > 3970000 && jfk_lax < 3980000);
    /* Paris to London: 343.6 km. */
    double paris_london = hf_geo_distance_m(48.8566, 2.3522, 51.5074, -0.1278);
    assert_true(paris_london > 343000 && paris_london < 344200);
}

static void test_grid_cells_and_spans(void **state) {
    (void)state;
    int32_t row, column;
    /* The polar rows have a few columns; the equator's the most, each at least a cell
     * wide. */
    hf_geo_cell_of(90, 45, &row, &column);
    assert_int_equal(row, hf_geo_rows() - 1);
    assert_true(hf_geo_row_columns(row) <= 8);
    assert_true(column < hf_geo_row_columns(row));
    hf_geo_cell_of(0, 0, &row, &column);
    assert_int_equal(hf_geo_row_columns(row), (int32_t)(360 * DEGREE_M / HF_GEO_CELL_M));
    hf_geo_cell_of(0, 180, &row, &column);
    int32_t east = column;
    hf_geo_cell_of(0, -180, &row, &column);
    assert_int_equal(east, column);
    /* A span near the pole takes every column; one at the equator a few. */
    hf_geo_span_t span;
    hf_geo_span_of(89.999, 0, 1000, &span);
    assert_true(span.every_column);
    hf_geo_span_of(0, 179.9999, 1000, &span);
    assert_false(span.every_column);
    hf_geo_cell_of(0, -179.9999, &row, &column);
    assert_true(hf_geo_span_has(&span, row, column));
    int32_t first, count;
    hf_geo_span_columns(&span, row, &first, &count);
    assert_true(count <= 12);
}

/* ---- ranking ---- */

static void test_ranking_nearest_then_rating_then_id(void **state) {
    fixture_t *f = *state;
    double step = 100 / DEGREE_M; /* 100 m of latitude */
    /* b and a at the same distance, the same rating: the lower id wins. */
    put(f, "b", 10 + step, 20, 4.0);
    put(f, "a", 10 - step, 20, 4.0);
    /* C is as near with a higher rating: it beats both, whatever its id. */
    put(f, "z", 10, 20 + step / cos(10 * 3.14159265358979323846 / 180), 4.5);
    /* Farther with the best rating: last. */
    put(f, "best", 10 + 3 * step, 20, 5.0);
    assert_string_equal(offered_to(f, ride_make(f, "r1", 10, 20, 3000, T0)->id), "z");
    assert_string_equal(offered_to(f, ride_make(f, "r2", 10, 20, 3000, T0)->id), "a");
    assert_string_equal(offered_to(f, ride_make(f, "r3", 10, 20, 3000, T0)->id), "b");
    assert_string_equal(offered_to(f, ride_make(f, "r4", 10, 20, 3000, T0)->id), "best");
    assert_int_equal(ride(f, "r2")->offer_distance_m, 100);
    assert_int_equal(ride_make(f, "r5", 10, 20, 3000, T0)->status, HF_RIDE_SEARCHING);
}

/* Bytewise: "B" (0x42) sorts before "a" (0x61). */
static void test_ties_are_bytewise(void **state) {
    fixture_t *f = *state;
    put(f, "a", 1, 1, 3.0);
    put(f, "B", 1, 1, 3.0);
    assert_string_equal(offered_to(f, ride_make(f, "r1", 1, 1.001, 3000, T0)->id), "B");
}

/* A driver at exactly radius_m (whole metres) is inside; one metre less and it is not. */
static void test_radius_edge(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 45.01, 7.0, -1);
    int64_t distance = hf_geo_distance_whole_m(45.0, 7.0, 45.01, 7.0);
    assert_int_equal(ride_make(f, "out", 45.0, 7.0, distance - 1, T0)->status, HF_RIDE_SEARCHING);
    const hf_ride_t *in = ride_make(f, "in", 45.0, 7.0, distance, T0);
    assert_string_equal(offered_to(f, in->id), "d1");
    assert_int_equal(in->offer_distance_m, distance);
}

static void test_antimeridian_and_poles(void **state) {
    fixture_t *f = *state;
    /* 111 m across the antimeridian beats 1.1 km on the same side. */
    put(f, "west", 0, -179.9995, -1);
    put(f, "east", 0, 179.99, -1);
    const hf_ride_t *across = ride_make(f, "r1", 0, 179.9995, 500, T0);
    assert_string_equal(offered_to(f, across->id), "west");
    assert_int_equal(across->offer_distance_m, (int64_t)floor(0.001 * DEGREE_M + 0.5));
    /* Over the pole: the driver on the opposite meridian is 111 m away. */
    put(f, "over", 89.9995, -170, -1);
    put(f, "below", 89.99, 10, -1);
    const hf_ride_t *polar = ride_make(f, "r2", 89.9995, 10, 2000, T0);
    assert_string_equal(offered_to(f, polar->id), "over");
    assert_string_equal(offered_to(f, ride_make(f, "r3", 89.9995, 10, 2000, T0)->id), "below");
    /* At the south pole itself every longitude is the same point. */
    put(f, "south", -90, 77, -1);
    assert_string_equal(offered_to(f, ride_make(f, "r4", -90, -3, 1, T0)->id), "south");
}

/* ---- the grid against a plain scan ---- */

static double uniform(unsigned *seed, double low, double high) {
    return low + (high - low) * ((double)rand_r(seed) / RAND_MAX);
}

/* The reference: every free driver of the fleet, ranked as API.md says. */
static bool scan_best(const hf_core_t *core, uint32_t fleet, double lat, double lng,
                      int64_t radius_m, uint32_t *best, int64_t *best_distance) {
    bool found = false;
    for (uint32_t i = 0; i < hf_dispatch_driver_count(core); i++) {
        const hf_driver_t *driver = hf_dispatch_driver_at(core, i);
        if (driver->fleet != fleet || !driver->available || driver->offer) continue;
        int64_t distance = hf_geo_distance_whole_m(lat, lng, driver->lat, driver->lng);
        if (distance > radius_m) continue;
        const hf_driver_t *held = found ? hf_dispatch_driver_at(core, *best) : NULL;
        bool better = !found || distance < *best_distance ||
                      (distance == *best_distance &&
                       (driver->rating > held->rating ||
                        (driver->rating == held->rating && strcmp(driver->id, held->id) < 0)));
        if (!better) continue;
        found = true;
        *best = i;
        *best_distance = distance;
    }
    return found;
}

/* Cities around ordinary places, the antimeridian and both poles; ratings from a few values
 * so ties happen; queries inside and around each city with radii from 1 m to 50 km. */
static void test_grid_search_equals_scan(void **state) {
    fixture_t *f = *state;
    static const double CENTRES[][2] = {{40.75, -73.99},
                                        {0, 179.99},
                                        {89.95, 0},
                                        {-89.97, 120},
                                        {-33.87, 151.21}};
    unsigned seed = 20261126;
    char id[32];
    for (uint32_t c = 0; c < 5; c++) {
        for (uint32_t i = 0; i < 1500; i++) {
            double lat = CENTRES[c][0] + uniform(&seed, -0.05, 0.05);
            double lng = CENTRES[c][1] + uniform(&seed, -0.05, 0.05);
            if (lat > 90) lat = 180 - lat;
            if (lat < -90) lat = -180 - lat;
            if (lng > 180) lng -= 360;
            snprintf(id, sizeof id, "d%u_%u", c, i);
            int available = rand_r(&seed) % 4 != 0;
            double rating = (double)(rand_r(&seed) % 3) + 3;
            assert_int_equal(put_full(f, "f1", id, lat, lng, available, rating, T0), HF_OK);
        }
    }
    uint32_t fleet;
    assert_true(hf_dispatch_fleet_find(f->core, "f1", &fleet));
    static const int64_t RADII[] = {1, 50, 250, 800, 3000, 12000, 50000};
    /* HF_TEST_ROUNDS (valgrind.sh: a tenth of test_json's 200,000) cuts the queries as it cuts
     * the other randomized comparisons: each scan reads all 7,500 drivers, 50x slower there. */
    const char *rounds_given = getenv("HF_TEST_ROUNDS");
    uint32_t queries = rounds_given ? (uint32_t)(2000.0 * atoi(rounds_given) / 200000) : 2000;
    for (uint32_t q = 0; q < queries; q++) {
        const double *centre = CENTRES[q % 5];
        double lat = fmax(-90, fmin(90, centre[0] + uniform(&seed, -0.08, 0.08)));
        double lng = centre[1] + uniform(&seed, -0.08, 0.08);
        if (lng > 180) lng -= 360;
        int64_t radius = RADII[rand_r(&seed) % 7];
        uint32_t grid_driver = 0, scan_driver = 0;
        int64_t grid_distance = -1, scan_distance = -1;
        bool grid = hf_dispatch_candidate(f->core, fleet, lat, lng, radius, UINT32_MAX,
                                          &grid_driver, &grid_distance);
        bool scan = scan_best(f->core, fleet, lat, lng, radius, &scan_driver, &scan_distance);
        if (grid != scan || grid_driver != scan_driver || grid_distance != scan_distance)
            fail_msg("query %u at (%.6f, %.6f) r=%lld: grid %d %u %lld, scan %d %u %lld", q, lat,
                     lng, (long long)radius, grid, grid_driver, (long long)grid_distance, scan,
                     scan_driver, (long long)scan_distance);
    }
}

/* Drivers moving a few metres (mostly within their cell, whose entry moves in place) and
 * across cells: the grid follows each move, and a search finds what a scan finds. */
static void test_grid_moves_in_and_out_of_cells(void **state) {
    fixture_t *f = *state;
    unsigned seed = 20261202;
    char id[32];
    double positions[200][2];
    for (uint32_t i = 0; i < 200; i++) {
        positions[i][0] = 40.75 + uniform(&seed, -0.02, 0.02);
        positions[i][1] = -73.99 + uniform(&seed, -0.02, 0.02);
        snprintf(id, sizeof id, "d%u", i);
        put(f, id, positions[i][0], positions[i][1], 4);
    }
    uint32_t fleet;
    assert_true(hf_dispatch_fleet_find(f->core, "f1", &fleet));
    for (uint32_t move = 0; move < 4000; move++) {
        uint32_t i = (uint32_t)rand_r(&seed) % 200;
        double step = rand_r(&seed) % 4 ? 0.0002 : 0.01;
        positions[i][0] += uniform(&seed, -step, step);
        positions[i][1] += uniform(&seed, -step, step);
        snprintf(id, sizeof id, "d%u", i);
        put(f, id, positions[i][0], positions[i][1], 4);
        const hf_driver_t *driver = hf_dispatch_driver_at(f->core, i);
        assert_true(driver->lat == positions[i][0] && driver->lng == positions[i][1]);
        if (move % 8) continue;
        assert_null(hf_dispatch_check(f->core));
        double lat = 40.75 + uniform(&seed, -0.02, 0.02);
        double lng = -73.99 + uniform(&seed, -0.02, 0.02);
        uint32_t grid_driver = 0, scan_driver = 0;
        int64_t grid_distance = -1, scan_distance = -1;
        bool grid = hf_dispatch_candidate(f->core, fleet, lat, lng, 300, UINT32_MAX, &grid_driver,
                                          &grid_distance);
        bool scan = scan_best(f->core, fleet, lat, lng, 300, &scan_driver, &scan_distance);
        assert_int_equal(grid, scan);
        assert_int_equal(grid_driver, scan_driver);
        assert_int_equal(grid_distance, scan_distance);
    }
}

/* Sparse fleets (60 drivers within 2 km of each centre): the nearest driver is often several
 * rings out, found in a corner of a span, where stopping a ring too early or too late shows. */
static void test_grid_search_equals_scan_sparse(void **state) {
    fixture_t *f = *state;
    static const double CENTRES[][2] = {{51.5, -0.12},
                                        {0.01, -179.995},
                                        {89.99, 45},
                                        {-89.99, -60}};
    unsigned seed = 77;
    char id[32];
    for (uint32_t c = 0; c < 4; c++) {
        for (uint32_t i = 0; i < 60; i++) {
            double lat = fmax(-90, fmin(90, CENTRES[c][0] + uniform(&seed, -0.02, 0.02)));
            double lng = CENTRES[c][1] + uniform(&seed, -0.02, 0.02);
            if (lng < -180) lng += 360;
            snprintf(id, sizeof id, "s%u_%u", c, i);
            assert_int_equal(
                put_full(f, "f1", id, lat, lng, 1, (double)(rand_r(&seed) % 2) + 4, T0), HF_OK);
        }
    }
    uint32_t fleet;
    assert_true(hf_dispatch_fleet_find(f->core, "f1", &fleet));
    static const int64_t RADII[] = {100, 400, 1000, 3000};
    for (uint32_t q = 0; q < 8000; q++) {
        const double *centre = CENTRES[q % 4];
        double lat = fmax(-90, fmin(90, centre[0] + uniform(&seed, -0.03, 0.03)));
        double lng = centre[1] + uniform(&seed, -0.03, 0.03);
        if (lng < -180) lng += 360;
        int64_t radius = RADII[rand_r(&seed) % 4];
        uint32_t grid_driver = 0, scan_driver = 0;
        int64_t grid_distance = -1, scan_distance = -1;
        bool grid = hf_dispatch_candidate(f->core, fleet, lat, lng, radius, UINT32_MAX,
                                          &grid_driver, &grid_distance);
        bool scan = scan_best(f->core, fleet, lat, lng, radius, &scan_driver, &scan_distance);
        if (grid != scan || grid_driver != scan_driver || grid_distance != scan_distance)
            fail_msg("query %u at (%.6f, %.6f) r=%lld: grid %d %u %lld, scan %d %u %lld", q, lat,
                     lng, (long long)radius, grid, grid_driver, (long long)grid_distance, scan,
                     scan_driver, (long long)scan_distance);
    }
}

/* ---- offers ---- */

static void test_exclusive_offers(void **state) {
    fixture_t *f = *state;
    char id[16];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "d%d", i);
        put(f, id, 10 + i * 0.001, 10, -1);
    }
    for (int i = 0; i < 12; i++) {
        snprintf(id, sizeof id, "r%d", i);
        ride_make(f, id, 10, 10, 5000, T0);
    }
    /* Ten offers to ten drivers, nearest first; two searching. */
    bool seen[10] = {false};
    for (int i = 0; i < 12; i++) {
        snprintf(id, sizeof id, "r%d", i);
        const hf_ride_t *r = ride(f, id);
        if (i >= 10) {
            assert_int_equal(r->status, HF_RIDE_SEARCHING);
            continue;
        }
        assert_int_equal(r->status, HF_RIDE_OFFERED);
        assert_false(seen[r->offer_driver - 1]);
        seen[r->offer_driver - 1] = true;
        uint32_t ride_index;
        hf_dispatch_ride_find(f->core, id, &ride_index);
        assert_int_equal(hf_dispatch_driver_at(f->core, r->offer_driver - 1)->offer,
                         ride_index + 1);
    }
    assert_string_equal(offered_to(f, "r0"), "d0");
    assert_string_equal(offered_to(f, "r9"), "d9");
    assert_null(hf_dispatch_check(f->core));
}

static void test_timeout_moves_on(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    ride_make(f, "r1", 10, 10, 3000, T0);
    assert_string_equal(offered_to(f, "r1"), "d1");
    assert_int_equal(hf_core_next_expiry(f->core), T0 + TTL);
    hf_core_advance(f->core, T0 + TTL - 1);
    assert_string_equal(offered_to(f, "r1"), "d1");
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_advance(f->core, T0 + TTL), 0); /* no hold expired */
    assert_string_equal(offered_to(f, "r1"), "d2");
    assert_int_equal(ride(f, "r1")->offer_expires_at_ms, T0 + 2 * TTL);
    assert_true(hf_batch_count(f->batch) >= 2); /* the driver's row and the ride's */
    uint32_t index;
    /* The lapsed driver: 410 to an accept, whatever happens next, 409 to a decline (the
     * contract gives a decline no 410); a stranger: 409. */
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0 + TTL + 1, &index),
                     HF_ERROR_OFFER_EXPIRED);
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d1", T0 + TTL + 1, &index),
                     HF_ERROR_NOT_OFFERED);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d9", T0 + TTL + 1, &index),
                     HF_ERROR_NOT_OFFERED);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d2", T0 + TTL + 2, &index), HF_OK);
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_ASSIGNED);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d2", T0 + TTL + 3, &index), HF_OK);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0 + TTL + 3, &index),
                     HF_ERROR_OFFER_EXPIRED);
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
    /* d1, freed by its lapse, is never offered r1 again, but takes a new ride. */
    assert_string_equal(offered_to(f, ride_make(f, "r2", 10, 10, 3000, T0 + TTL + 4)->id), "d1");
}

static void test_decline_and_searching(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    ride_make(f, "r1", 10, 10, 3000, T0);
    uint32_t index;
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d2", T0 + 1, &index),
                     HF_ERROR_NOT_OFFERED);
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d1", T0 + 1, &index), HF_OK);
    assert_string_equal(offered_to(f, "r1"), "d2");
    /* A driver that declined holds no offer: 409, not 410. */
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0 + 2, &index), HF_ERROR_NOT_OFFERED);
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d2", T0 + 3, &index), HF_OK);
    /* Both free, both excluded: searching. */
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_SEARCHING);
    bool lapsed = true;
    assert_true(hf_dispatch_ride_excluded(f->core, 0, 0, &lapsed));
    assert_false(lapsed);
    /* A declined driver moving about is still never offered r1. */
    put(f, "d1", 10, 10.0001, -1);
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_SEARCHING);
    /* Out of range: nothing; in range: offered at once. */
    put(f, "d3", 20, 20, -1);
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_SEARCHING);
    put(f, "d3", 10.002, 10, -1);
    assert_string_equal(offered_to(f, "r1"), "d3");
    assert_int_equal(ride(f, "r1")->offer_distance_m, hf_geo_distance_whole_m(10, 10, 10.002, 10));
}

static void test_searching_ride_taken_by_freed_driver(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    ride_make(f, "r1", 10, 10, 3000, T0);
    ride_make(f, "r2", 10, 10, 3000, T0 + 1);
    ride_make(f, "r3", 10, 10, 3000, T0 + 2);
    assert_int_equal(ride(f, "r2")->status, HF_RIDE_SEARCHING);
    uint32_t index;
    /* Declined: d1 takes the oldest searching ride. */
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d1", T0 + 3, &index), HF_OK);
    assert_string_equal(offered_to(f, "r2"), "d1");
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_SEARCHING);
    /* Cancelled: the offered driver is free and goes to the next (r1 excludes it: r3). */
    assert_int_equal(hf_dispatch_cancel(f->core, "r2", T0 + 4, &index), HF_OK);
    assert_int_equal(ride(f, "r2")->status, HF_RIDE_CANCELLED);
    assert_string_equal(offered_to(f, "r3"), "d1");
    assert_int_equal(hf_dispatch_cancel(f->core, "r2", T0 + 5, &index), HF_OK);
    /* Assigned: unavailable until it says so. */
    assert_int_equal(hf_dispatch_accept(f->core, "r3", "d1", T0 + 6, &index), HF_OK);
    assert_false(hf_dispatch_driver_at(f->core, 0)->available);
    put(f, "d2", 10, 10, -1);
    assert_string_equal(offered_to(f, "r1"), "d2");
    ride_make(f, "r4", 10, 10, 3000, T0 + 7);
    assert_int_equal(ride(f, "r4")->status, HF_RIDE_SEARCHING);
    /* Cancelling the assigned ride frees its driver, which takes r4. */
    assert_int_equal(hf_dispatch_cancel(f->core, "r3", T0 + 8, &index), HF_OK);
    assert_string_equal(offered_to(f, "r4"), "d1");
    assert_int_equal(hf_dispatch_accept(f->core, "r3", "d1", T0 + 9, &index), HF_ERROR_NOT_OFFERED);
}

static void test_available_again_after_assignment(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    ride_make(f, "r1", 10, 10, 3000, T0);
    uint32_t index;
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0 + 1, &index), HF_OK);
    /* A location update alone keeps it busy. */
    assert_int_equal(put_full(f, "f1", "d1", 10, 10, -1, -1, T0 + 2), HF_OK);
    assert_int_equal(ride_make(f, "r2", 10, 10, 3000, T0 + 3)->status, HF_RIDE_SEARCHING);
    assert_int_equal(put_full(f, "f1", "d1", 10, 10, 1, -1, T0 + 4), HF_OK);
    assert_string_equal(offered_to(f, "r2"), "d1");
    assert_int_equal(hf_dispatch_driver_at(f->core, 0)->assigned, 0);
    /* Going unavailable keeps the offer it holds; no new one comes. */
    assert_int_equal(put_full(f, "f1", "d1", 10, 10, 0, -1, T0 + 5), HF_OK);
    assert_string_equal(offered_to(f, "r2"), "d1");
}

/* ---- validation and limits ---- */

static void test_invalid_input(void **state) {
    fixture_t *f = *state;
    const char *field = NULL;
    assert_int_equal(put_full(f, "f1", "d1", 90.0001, 0, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f1", "d1", 0, -180.5, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f1", "d1", NAN, 0, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f1", "d1", 0, INFINITY, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f1", "d1", 0, 0, 1, 5.01, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f-1", "d1", 0, 0, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(put_full(f, "f1", "d 1", 0, 0, 1, -1, T0), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_dispatch_driver_count(f->core), 0);
    assert_int_equal(put_full(f, "f1", "d1", -90, 180, 1, 0, T0), HF_OK);
    assert_int_equal(ride_full(f, "nope", "r1", 0, 0, 10, 10, T0, NULL), HF_ERROR_FLEET_NOT_FOUND);
    assert_int_equal(ride_full(f, "f1", "r1", -91, 0, 10, 10, T0, &field),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(field, "lat");
    assert_int_equal(ride_full(f, "f1", "r1", 0, 181, 10, 10, T0, &field),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(field, "lng");
    assert_int_equal(ride_full(f, "f1", "r1", 0, 0, 0, 10, T0, &field), HF_ERROR_INVALID_REQUEST);
    assert_string_equal(field, "radius_m");
    assert_int_equal(ride_full(f, "f1", "r1", 0, 0, HF_DISPATCH_RADIUS_M_MAX + 1, 10, T0, &field),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(ride_full(f, "f1", "r1", 0, 0, 10, 0, T0, &field), HF_ERROR_INVALID_REQUEST);
    assert_string_equal(field, "offer_ttl_s");
    assert_int_equal(ride_full(f, "f1", "r-1", 0, 0, 10, 10, T0, &field), HF_ERROR_INVALID_REQUEST);
    assert_string_equal(field, "ride_id");
    assert_int_equal(hf_dispatch_ride_count(f->core), 0);
    /* Ride ids are unique across fleets. */
    assert_int_equal(put_full(f, "f2", "d1", 0, 0, 0, -1, T0), HF_OK);
    assert_int_equal(ride_full(f, "f1", "r1", 0, 0, -1, -1, T0, NULL), HF_OK);
    assert_int_equal(ride_full(f, "f2", "r1", 0, 0, -1, -1, T0, NULL), HF_ERROR_RIDE_EXISTS);
    assert_int_equal(ride(f, "r1")->radius_m, HF_DISPATCH_RADIUS_M_DEFAULT);
    assert_int_equal(ride(f, "r1")->offer_ttl_ms, HF_DISPATCH_OFFER_TTL_MS_DEFAULT);
    uint32_t index;
    assert_int_equal(hf_dispatch_accept(f->core, "r9", "d1", T0, &index), HF_ERROR_RIDE_NOT_FOUND);
    assert_int_equal(hf_dispatch_cancel(f->core, "r9", T0, &index), HF_ERROR_RIDE_NOT_FOUND);
}

static void test_searching_limit(void **state) {
    fixture_t *f = *state;
    assert_int_equal(put_full(f, "f1", "d1", 0, 0, 0, -1, T0), HF_OK);
    char id[16];
    for (uint32_t i = 0; i < HF_DISPATCH_FLEET_SEARCHING_MAX; i++) {
        snprintf(id, sizeof id, "r%u", i);
        assert_int_equal(ride_full(f, "f1", id, 0, 0, -1, -1, T0, NULL), HF_OK);
    }
    assert_int_equal(ride_full(f, "f1", "one_more", 0, 0, -1, -1, T0, NULL), HF_ERROR_CAPACITY);
    /* The driver, available again, takes the oldest. */
    assert_int_equal(put_full(f, "f1", "d1", 0, 0, 1, -1, T0 + 1), HF_OK);
    assert_string_equal(offered_to(f, "r0"), "d1");
    assert_int_equal(ride_full(f, "f1", "one_more", 0, 0, -1, -1, T0, NULL), HF_OK);
}

/* ---- records: soft drivers, durable rides, restore ---- */

static size_t records_of(const hf_batch_t *batch, hf_mutation_type_t type) {
    size_t count = 0;
    for (size_t i = 0; i < hf_batch_count(batch); i++) count += hf_batch_at(batch, i)->type == type;
    return count;
}

static void test_locations_are_soft(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d1", 10.0001, 10, -1);
    put(f, "d2", 11, 10, -1);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_int_equal(hf_dispatch_flush(f->core, T0 + 1000, UINT32_MAX), 2);
    assert_int_equal(records_of(f->batch, HF_MUTATION_DRIVER), 2);
    const hf_mutation_t *first = hf_batch_at(f->batch, 0);
    assert_string_equal(first->as.driver.driver_id, "d1");
    assert_true(first->as.driver.lat == 10.0001);
    assert_int_equal(hf_dispatch_flush(f->core, T0 + 2000, UINT32_MAX), 0);
    /* A flush writes at most max drivers, those changed longest ago first; the rest wait. */
    hf_batch_clear(f->batch);
    put(f, "d2", 11.0001, 10, -1);
    put(f, "d3", 12, 10, -1);
    put(f, "d1", 10.0002, 10, -1);
    assert_int_equal(hf_dispatch_flush(f->core, T0 + 3000, 2), 2);
    assert_int_equal(records_of(f->batch, HF_MUTATION_DRIVER), 2);
    assert_string_equal(hf_batch_at(f->batch, 0)->as.driver.driver_id, "d2");
    assert_string_equal(hf_batch_at(f->batch, 1)->as.driver.driver_id, "d3");
    assert_int_equal(hf_dispatch_flush(f->core, T0 + 4000, 2), 1);
    assert_string_equal(hf_batch_at(f->batch, 2)->as.driver.driver_id, "d1");
    assert_int_equal(hf_dispatch_flush(f->core, T0 + 5000, 2), 0);
    /* An offer is durable: the ride's record and its driver's. */
    hf_batch_clear(f->batch);
    ride_make(f, "r1", 10, 10, 3000, T0);
    assert_int_equal(records_of(f->batch, HF_MUTATION_RIDE), 1);
    assert_int_equal(records_of(f->batch, HF_MUTATION_DRIVER), 1);
    const hf_mutation_t *last = hf_batch_at(f->batch, hf_batch_count(f->batch) - 1);
    assert_string_equal(last->as.ride.offer_driver_id, "d1");
    assert_int_equal(last->as.ride.status, HF_RIDE_OFFERED);
    assert_int_equal(hf_dispatch_ride_change(f->core, 0), hf_core_change_count(f->core));
}

/* The running counts (GET /metrics) as a core's: rides and drivers by status, offers by
 * outcome. */
static void counts_expect(const hf_core_t *core, const uint64_t rides[HF_RIDE_STATUS_COUNT],
                          const uint64_t drivers[HF_DRIVER_STATUS_COUNT],
                          const uint64_t offers[HF_OFFER_OUTCOME_COUNT]) {
    hf_dispatch_counts_t counts;
    assert_true(hf_dispatch_counts(core, &counts));
    for (int i = 0; i < HF_RIDE_STATUS_COUNT; i++) assert_int_equal(counts.rides[i], rides[i]);
    for (int i = 0; i < HF_DRIVER_STATUS_COUNT; i++)
        assert_int_equal(counts.drivers[i], drivers[i]);
    for (int i = 0; i < HF_OFFER_OUTCOME_COUNT; i++) assert_int_equal(counts.offers[i], offers[i]);
    assert_null(hf_dispatch_check(core));
}

/* Every kind of change moves the counts: a new driver, an offer, a decline, a lapse, an
 * accept, a cancel of an assigned ride and of an offered one, a PUT unavailable and
 * available again. Arrays: rides {searching, offered, assigned, cancelled}, drivers
 * {available, offered, assigned, unavailable}, offers {accepted, declined, expired}. */
static void test_running_counts(void **state) {
    fixture_t *f = *state;
    hf_dispatch_counts_t none;
    assert_false(hf_dispatch_counts(f->core, &none));
    assert_int_equal(none.rides[HF_RIDE_SEARCHING] + none.drivers[HF_DRIVER_AVAILABLE], 0);
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    assert_int_equal(put_full(f, "f1", "d3", 10.002, 10, 0, -1, T0), HF_OK);
    counts_expect(f->core, (uint64_t[]){0, 0, 0, 0, 0}, (uint64_t[]){2, 0, 0, 1},
                  (uint64_t[]){0, 0, 0});
    ride_make(f, "r1", 10, 10, 3000, T0);
    counts_expect(f->core, (uint64_t[]){0, 1, 0, 0, 0}, (uint64_t[]){1, 1, 0, 1},
                  (uint64_t[]){0, 0, 0});
    uint32_t index;
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d1", T0 + 1, &index), HF_OK);
    counts_expect(f->core, (uint64_t[]){0, 1, 0, 0, 0}, (uint64_t[]){1, 1, 0, 1},
                  (uint64_t[]){0, 1, 0});
    /* d2's offer lapses; d1 declined and d3 is unavailable: searching. */
    hf_core_advance(f->core, T0 + 2 + TTL);
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_SEARCHING);
    counts_expect(f->core, (uint64_t[]){1, 0, 0, 0, 0}, (uint64_t[]){2, 0, 0, 1},
                  (uint64_t[]){0, 1, 1});
    /* d3 comes: offered r1 at once, accepts; then r2 goes to d1. */
    assert_int_equal(put_full(f, "f1", "d3", 10.002, 10, 1, -1, T0 + 3 + TTL), HF_OK);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d3", T0 + 4 + TTL, &index), HF_OK);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d3", T0 + 4 + TTL, &index), HF_OK);
    ride_make(f, "r2", 10, 10, 3000, T0 + 5 + TTL);
    counts_expect(f->core, (uint64_t[]){0, 1, 1, 0, 0}, (uint64_t[]){1, 1, 1, 0},
                  (uint64_t[]){1, 1, 1});
    /* An assigned driver saying unavailable stays assigned; available again frees it. */
    assert_int_equal(put_full(f, "f1", "d3", 10.002, 10, 0, -1, T0 + 6 + TTL), HF_OK);
    counts_expect(f->core, (uint64_t[]){0, 1, 1, 0, 0}, (uint64_t[]){1, 1, 1, 0},
                  (uint64_t[]){1, 1, 1});
    assert_int_equal(hf_dispatch_cancel(f->core, "r2", T0 + 7 + TTL, &index), HF_OK);
    assert_int_equal(hf_dispatch_cancel(f->core, "r1", T0 + 8 + TTL, &index), HF_OK);
    assert_int_equal(hf_dispatch_cancel(f->core, "r1", T0 + 9 + TTL, &index), HF_OK);
    counts_expect(f->core, (uint64_t[]){0, 0, 0, 2, 0}, (uint64_t[]){3, 0, 0, 0},
                  (uint64_t[]){1, 1, 1});
    assert_int_equal(put_full(f, "f1", "d2", 10.001, 10, 0, -1, T0 + 10 + TTL), HF_OK);
    counts_expect(f->core, (uint64_t[]){0, 0, 0, 2, 0}, (uint64_t[]){2, 0, 0, 1},
                  (uint64_t[]){1, 1, 1});
}

/* The newest record of each ride and driver, fed to a new core, gives the same state; an
 * offer that lapsed while "down" moves on at the first advance. */
static void test_restore_from_records(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    put(f, "d3", 10.002, 10, -1);
    ride_make(f, "r1", 10, 10, 3000, T0);
    ride_make(f, "r2", 10, 10, 3000, T0);
    uint32_t index;
    assert_int_equal(hf_dispatch_decline(f->core, "r1", "d1", T0 + 1, &index), HF_OK);
    assert_string_equal(offered_to(f, "r1"), "d3");
    assert_int_equal(hf_dispatch_accept(f->core, "r2", "d2", T0 + 2, &index), HF_OK);
    hf_dispatch_flush(f->core, T0 + 3, UINT32_MAX);
    hf_core_t *copy = hf_core_create((hf_mutation_sink_t){0});
    for (size_t i = 0; i < hf_batch_count(f->batch); i++) {
        const hf_mutation_t *m = hf_batch_at(f->batch, i);
        if (m->type != HF_MUTATION_DRIVER) continue;
        const hf_mutation_driver_t *d = &m->as.driver;
        hf_stored_driver_t stored = {d->fleet_id, d->driver_id, d->lat,
                                     d->lng,      d->rating,    d->available};
        assert_int_equal(hf_dispatch_restore_driver(copy, &stored), HF_OK);
    }
    /* Rides in the order they were created (their first records), each from its newest. */
    const char *seen[8];
    uint32_t seen_count = 0;
    for (size_t i = 0; i < hf_batch_count(f->batch); i++) {
        const hf_mutation_t *m = hf_batch_at(f->batch, i);
        bool again = false;
        for (uint32_t s = 0; m->type == HF_MUTATION_RIDE && s < seen_count; s++)
            again |= strcmp(seen[s], m->as.ride.ride_id) == 0;
        if (m->type == HF_MUTATION_RIDE && !again) seen[seen_count++] = m->as.ride.ride_id;
    }
    assert_int_equal(seen_count, 2);
    for (uint32_t s = 0; s < seen_count; s++) {
        for (size_t i = hf_batch_count(f->batch); i-- > 0;) {
            const hf_mutation_t *m = hf_batch_at(f->batch, i);
            if (m->type != HF_MUTATION_RIDE || strcmp(m->as.ride.ride_id, seen[s]) != 0) continue;
            const hf_mutation_ride_t *r = &m->as.ride;
            hf_stored_ride_t stored = {r->ride_id,
                                       r->fleet_id,
                                       r->rider_id,
                                       r->lat,
                                       r->lng,
                                       r->radius_m,
                                       r->offer_ttl_ms,
                                       (uint8_t)r->status,
                                       r->created_at_ms,
                                       r->offer_driver_id,
                                       r->offer_distance_m,
                                       r->offer_expires_at_ms,
                                       r->driver_id,
                                       r->declined,
                                       r->lapsed};
            assert_int_equal(hf_dispatch_restore_ride(copy, &stored), HF_OK);
            break;
        }
    }
    assert_null(hf_dispatch_check(copy));
    /* The restored counts are the statuses' (the offers' outcomes start again from 0). */
    counts_expect(copy, (uint64_t[]){0, 1, 1, 0, 0}, (uint64_t[]){1, 1, 1, 0},
                  (uint64_t[]){0, 0, 0});
    const hf_ride_t *r1 = hf_dispatch_ride_find(copy, "r1", &index);
    assert_int_equal(r1->status, HF_RIDE_OFFERED);
    assert_string_equal(hf_dispatch_driver_at(copy, r1->offer_driver - 1)->id, "d3");
    assert_int_equal(hf_dispatch_accept(copy, "r1", "d1", T0 + 4, &index), HF_ERROR_NOT_OFFERED);
    assert_int_equal(hf_dispatch_ride_find(copy, "r2", NULL)->status, HF_RIDE_ASSIGNED);
    /* Down past the offer's deadline: it lapses at the first advance, and nobody is left
     * (d1 declined, d2 assigned). */
    hf_core_advance(copy, T0 + 1 + TTL + 5000);
    assert_int_equal(hf_dispatch_ride_find(copy, "r1", NULL)->status, HF_RIDE_SEARCHING);
    assert_int_equal(hf_dispatch_accept(copy, "r1", "d3", T0 + 2 * TTL, &index),
                     HF_ERROR_OFFER_EXPIRED);
    assert_null(hf_dispatch_check(copy));
    hf_core_destroy(copy);
}

/* ---- issue 27: complete, delete, finished rides forgotten, pages of drivers ---- */

static void test_complete(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    uint32_t index;
    ride_make(f, "r1", 10, 10, 3000, T0);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d1", T0, &index), HF_ERROR_NOT_ASSIGNED);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0, &index), HF_OK);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d2", T0, &index), HF_ERROR_NOT_ASSIGNED);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d9", T0, &index), HF_ERROR_NOT_ASSIGNED);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d-1", T0, &index),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_dispatch_complete(f->core, "r9", "d1", T0, &index),
                     HF_ERROR_RIDE_NOT_FOUND);
    size_t records = hf_batch_count(f->batch);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d1", T0 + 1, &index), HF_OK);
    assert_true(hf_batch_count(f->batch) > records);
    assert_int_equal(ride(f, "r1")->status, HF_RIDE_COMPLETED);
    records = hf_batch_count(f->batch);
    assert_int_equal(hf_dispatch_complete(f->core, "r1", "d1", T0 + 2, &index), HF_OK);
    assert_int_equal(hf_batch_count(f->batch), records); /* a repeat changes nothing */
    const hf_driver_t *d1 = hf_dispatch_driver_find(f->core, "f1", "d1", NULL);
    assert_true(d1->available);
    assert_int_equal(d1->assigned, 0);
    assert_int_equal(hf_dispatch_cancel(f->core, "r1", T0 + 3, &index), HF_ERROR_RIDE_FINISHED);
    /* Free again: the nearest, offered the next ride. */
    ride_make(f, "r2", 10, 10, 3000, T0 + 4);
    assert_string_equal(offered_to(f, "r2"), "d1");
    /* A driver made available by a PUT since its assignment stays as it is. */
    assert_int_equal(hf_dispatch_accept(f->core, "r2", "d1", T0 + 5, &index), HF_OK);
    assert_int_equal(put_full(f, "f1", "d1", 10, 10, 1, -1, T0 + 6), HF_OK);
    ride_make(f, "r3", 10, 10, 3000, T0 + 7);
    assert_string_equal(offered_to(f, "r3"), "d1");
    assert_int_equal(hf_dispatch_complete(f->core, "r2", "d1", T0 + 8, &index), HF_OK);
    assert_string_equal(offered_to(f, "r3"), "d1");
    assert_int_equal(hf_dispatch_cancel(f->core, "r3", T0 + 9, &index), HF_OK);
    assert_int_equal(hf_dispatch_complete(f->core, "r3", "d1", T0 + 9, &index),
                     HF_ERROR_NOT_ASSIGNED);
    counts_expect(f->core, (uint64_t[]){0, 0, 0, 1, 2}, (uint64_t[]){2, 0, 0, 0},
                  (uint64_t[]){2, 0, 0});
}

static void test_driver_delete(void **state) {
    fixture_t *f = *state;
    put(f, "d1", 10, 10, -1);
    put(f, "d2", 10.001, 10, -1);
    put(f, "d3", 10.002, 10, -1);
    uint32_t index;
    ride_make(f, "r1", 10, 10, 3000, T0);
    assert_int_equal(hf_dispatch_accept(f->core, "r1", "d1", T0, &index), HF_OK);
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f1", "d1", T0), HF_ERROR_DRIVER_BUSY);
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f1", "d9", T0), HF_ERROR_DRIVER_NOT_FOUND);
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f9", "d1", T0), HF_ERROR_FLEET_NOT_FOUND);
    ride_make(f, "r2", 10, 10, 3000, T0 + 1);
    assert_string_equal(offered_to(f, "r2"), "d2");
    assert_int_equal(hf_dispatch_decline(f->core, "r2", "d2", T0 + 2, &index), HF_OK);
    assert_string_equal(offered_to(f, "r2"), "d3");
    /* d2 is named by r2 (it declined): deleted, its slot stays until r2 is forgotten. */
    uint32_t d2;
    assert_non_null(hf_dispatch_driver_find(f->core, "f1", "d2", &d2));
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f1", "d2", T0 + 3), HF_OK);
    const hf_mutation_t *last = hf_batch_at(f->batch, hf_batch_count(f->batch) - 1);
    assert_int_equal(last->type, HF_MUTATION_DRIVER);
    assert_true(last->as.driver.deleted);
    assert_string_equal(last->as.driver.driver_id, "d2");
    assert_null(hf_dispatch_driver_find(f->core, "f1", "d2", NULL));
    assert_string_equal(hf_dispatch_driver_at(f->core, d2)->id, "d2");
    /* The offered driver deleted: its offer moves on (nobody else: searching), and the ride
     * does not count it as declining. */
    uint32_t d3, r2;
    assert_non_null(hf_dispatch_driver_find(f->core, "f1", "d3", &d3));
    assert_non_null(hf_dispatch_ride_find(f->core, "r2", &r2));
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f1", "d3", T0 + 4), HF_OK);
    assert_int_equal(ride(f, "r2")->status, HF_RIDE_SEARCHING);
    assert_false(hf_dispatch_ride_excluded(f->core, r2, d3, NULL));
    assert_true(hf_dispatch_ride_excluded(f->core, r2, d2, NULL));
    assert_int_equal(hf_dispatch_accept(f->core, "r2", "d3", T0 + 5, &index), HF_ERROR_NOT_OFFERED);
    /* PUT again: a new driver, offered the searching ride (d2 declined it, the new d2 not). */
    uint32_t count = hf_dispatch_driver_count(f->core);
    assert_int_equal(put_full(f, "f1", "d3", 10.002, 10, 1, -1, T0 + 6), HF_OK);
    assert_int_equal(hf_dispatch_driver_count(f->core), count); /* d3's slot, reused */
    assert_string_equal(offered_to(f, "r2"), "d3");
    assert_int_equal(put_full(f, "f1", "d2", 10.001, 10, 1, -1, T0 + 7), HF_OK);
    assert_int_equal(hf_dispatch_driver_count(f->core), count + 1); /* d2's is still named */
    uint32_t new_d2;
    assert_non_null(hf_dispatch_driver_find(f->core, "f1", "d2", &new_d2));
    assert_int_not_equal(new_d2, d2);
    counts_expect(f->core, (uint64_t[]){0, 1, 1, 0, 0}, (uint64_t[]){1, 1, 1, 0},
                  (uint64_t[]){1, 1, 0});
}

/* The newest record of the ride in the batch, as the store would give it back. */
static hf_stored_ride_t stored_of(fixture_t *f, const char *ride_id) {
    for (size_t i = hf_batch_count(f->batch); i-- > 0;) {
        const hf_mutation_t *m = hf_batch_at(f->batch, i);
        if (m->type != HF_MUTATION_RIDE || strcmp(m->as.ride.ride_id, ride_id) != 0) continue;
        const hf_mutation_ride_t *r = &m->as.ride;
        return (hf_stored_ride_t){r->ride_id,
                                  r->fleet_id,
                                  r->rider_id,
                                  r->lat,
                                  r->lng,
                                  r->radius_m,
                                  r->offer_ttl_ms,
                                  (uint8_t)r->status,
                                  r->created_at_ms,
                                  r->offer_driver_id,
                                  r->offer_distance_m,
                                  r->offer_expires_at_ms,
                                  r->driver_id,
                                  r->declined,
                                  r->lapsed};
    }
    fail_msg("no record of %s", ride_id);
    return (hf_stored_ride_t){0};
}

static void test_finished_rides_forgotten(void **state) {
    fixture_t *f = *state;
    hf_dispatch_set_finished_max(f->core, 2);
    put(f, "d1", 10, 10, -1);
    uint32_t index;
    char id[16];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "r%d", i);
        ride_make(f, id, 10, 10, 3000, T0 + i);
        assert_int_equal(hf_dispatch_accept(f->core, id, "d1", T0 + i, &index), HF_OK);
        if (i % 2) assert_int_equal(hf_dispatch_cancel(f->core, id, T0 + i, &index), HF_OK);
        else assert_int_equal(hf_dispatch_complete(f->core, id, "d1", T0 + i, &index), HF_OK);
    }
    uint32_t slots = hf_dispatch_ride_count(f->core);
    assert_false(hf_dispatch_ride_maybe_forgotten(f->core, "r0"));
    /* Only what is durable is forgotten. */
    assert_int_equal(hf_core_evict(f->core, 0), 0);
    assert_int_equal(hf_dispatch_rides_finished(f->core), 5);
    assert_int_equal(hf_core_evict(f->core, hf_core_change_count(f->core)), 3);
    assert_int_equal(hf_dispatch_rides_finished(f->core), 2);
    assert_int_equal(hf_dispatch_rides_forgotten(f->core), 3);
    assert_null(hf_dispatch_ride_find(f->core, "r0", NULL));
    assert_null(hf_dispatch_ride_find(f->core, "r2", NULL));
    assert_non_null(hf_dispatch_ride_find(f->core, "r4", NULL));
    /* The filter knows every forgotten id (a new id: surely not forgotten, at these odds). */
    assert_true(hf_dispatch_ride_maybe_forgotten(f->core, "r0"));
    assert_true(hf_dispatch_ride_maybe_forgotten(f->core, "r1"));
    assert_true(hf_dispatch_ride_maybe_forgotten(f->core, "r2"));
    assert_false(hf_dispatch_ride_maybe_forgotten(f->core, "r4"));
    assert_false(hf_dispatch_ride_maybe_forgotten(f->core, "r9"));
    /* Counted still, under their final status. */
    counts_expect(f->core, (uint64_t[]){0, 0, 0, 2, 3}, (uint64_t[]){1, 0, 0, 0},
                  (uint64_t[]){5, 0, 0});
    /* New rides take the forgotten slots. */
    ride_make(f, "r5", 10, 10, 3000, T0 + 10);
    ride_make(f, "r6", 10, 10, 3000, T0 + 10);
    assert_int_equal(hf_dispatch_ride_count(f->core), slots);
    /* A forgotten ride comes back from its row, the newest finished, counted once. */
    hf_stored_ride_t r0 = stored_of(f, "r0");
    assert_int_equal(hf_dispatch_revive_ride(f->core, &r0, &index), HF_OK);
    assert_int_equal(hf_dispatch_revive_ride(f->core, &r0, &index), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(ride(f, "r0")->status, HF_RIDE_COMPLETED);
    assert_string_equal(ride(f, "r0")->rider_id, "u1");
    assert_int_equal(hf_dispatch_complete(f->core, "r0", "d1", T0 + 11, &index), HF_OK);
    assert_int_equal(hf_dispatch_cancel(f->core, "r0", T0 + 11, &index), HF_ERROR_RIDE_FINISHED);
    counts_expect(f->core, (uint64_t[]){1, 1, 0, 2, 3}, (uint64_t[]){0, 1, 0, 0},
                  (uint64_t[]){5, 0, 0});
    /* Rides in progress are never revived from a row. */
    hf_stored_ride_t r5 = stored_of(f, "r5");
    r5.ride_id = "r7";
    assert_int_equal(hf_dispatch_revive_ride(f->core, &r5, &index), HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_core_evict(f->core, hf_core_change_count(f->core)), 1);
    assert_null(hf_dispatch_ride_find(f->core, "r1", NULL));
    assert_null(hf_dispatch_check(f->core));
}

/* A restore keeps only the newest finished rides, and a ride naming a driver with no row
 * (deleted) names a deleted driver, not a new one. */
static void test_restore_forgets_and_knows_deleted(void **state) {
    fixture_t *f = *state;
    hf_dispatch_set_finished_max(f->core, 1);
    hf_stored_driver_t d1 = {"f1", "d1", 10, 10, 5, true};
    assert_int_equal(hf_dispatch_restore_driver(f->core, &d1), HF_OK);
    const char *ids[] = {"r1", "r2", "r3"};
    for (int i = 0; i < 3; i++) {
        hf_stored_ride_t stored = {ids[i],
                                   "f1",
                                   "u1",
                                   10,
                                   10,
                                   3000,
                                   TTL,
                                   HF_RIDE_COMPLETED,
                                   T0 + i,
                                   NULL,
                                   0,
                                   0,
                                   i == 0 ? "gone" : "d1",
                                   "",
                                   ""};
        assert_int_equal(hf_dispatch_restore_ride(f->core, &stored), HF_OK);
    }
    hf_stored_ride_t searching = {"r4",   "f1", "u1", 10, 10,   3000,   TTL, HF_RIDE_SEARCHING,
                                  T0 + 4, NULL, 0,    0,  NULL, "gone", ""};
    assert_int_equal(hf_dispatch_restore_ride(f->core, &searching), HF_OK);
    assert_int_equal(hf_dispatch_rides_finished(f->core), 1);
    assert_null(hf_dispatch_ride_find(f->core, "r1", NULL));
    assert_non_null(hf_dispatch_ride_find(f->core, "r3", NULL));
    assert_null(hf_dispatch_driver_find(f->core, "f1", "gone", NULL));
    assert_int_equal(hf_dispatch_rematch(f->core, T0 + 5), 1);
    assert_string_equal(offered_to(f, "r4"), "d1");
    counts_expect(f->core, (uint64_t[]){0, 1, 0, 0, 3}, (uint64_t[]){0, 1, 0, 0},
                  (uint64_t[]){0, 0, 0});
}

static void test_drivers_page(void **state) {
    fixture_t *f = *state;
    const char *order[] = {"d5", "d3", "d9", "d1", "d7", "d2"};
    for (int i = 0; i < 6; i++) put(f, order[i], 10 + i * 0.001, 10, -1);
    assert_int_equal(put_full(f, "f1", "d7", 10, 10, 0, -1, T0), HF_OK);
    assert_int_equal(put_full(f, "f2", "d4", 10, 10, 1, -1, T0), HF_OK);
    uint32_t fleet, indexes[8];
    bool more;
    assert_true(hf_dispatch_fleet_find(f->core, "f1", &fleet));
    uint32_t count = hf_dispatch_drivers_page(f->core, fleet, -1, NULL, 4, indexes, &more);
    assert_int_equal(count, 4);
    assert_true(more);
    const char *first[] = {"d1", "d2", "d3", "d5"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(hf_dispatch_driver_at(f->core, indexes[i])->id, first[i]);
    count = hf_dispatch_drivers_page(f->core, fleet, -1, "d5", 4, indexes, &more);
    assert_int_equal(count, 2);
    assert_false(more);
    assert_string_equal(hf_dispatch_driver_at(f->core, indexes[0])->id, "d7");
    assert_string_equal(hf_dispatch_driver_at(f->core, indexes[1])->id, "d9");
    count = hf_dispatch_drivers_page(f->core, fleet, -1, "d1", 5, indexes, &more);
    assert_int_equal(count, 5);
    assert_false(more); /* exactly the rest */
    count = hf_dispatch_drivers_page(f->core, fleet, HF_DRIVER_UNAVAILABLE, NULL, 8, indexes,
                                     &more);
    assert_int_equal(count, 1);
    assert_string_equal(hf_dispatch_driver_at(f->core, indexes[0])->id, "d7");
    assert_int_equal(hf_dispatch_driver_delete(f->core, "f1", "d2", T0), HF_OK);
    count = hf_dispatch_drivers_page(f->core, fleet, HF_DRIVER_AVAILABLE, NULL, 8, indexes, &more);
    assert_int_equal(count, 4);
    assert_string_equal(hf_dispatch_driver_at(f->core, indexes[1])->id, "d3");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_haversine_known_distances),
        cmocka_unit_test(test_grid_cells_and_spans),
        cmocka_unit_test_setup_teardown(test_grid_moves_in_and_out_of_cells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranking_nearest_then_rating_then_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ties_are_bytewise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_radius_edge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_antimeridian_and_poles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_search_equals_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_search_equals_scan_sparse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exclusive_offers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_moves_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decline_and_searching, setup, teardown),
        cmocka_unit_test_setup_teardown(test_searching_ride_taken_by_freed_driver, setup, teardown),
        cmocka_unit_test_setup_teardown(test_available_again_after_assignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_searching_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locations_are_soft, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_from_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_driver_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_rides_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_forgets_and_knows_deleted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drivers_page, setup, teardown),
    };
    return cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
}
