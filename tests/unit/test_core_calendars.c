/* Calendars in the core (core/calendar/, API.md section 12): the span index against a plain
 * array of per-step counts under thousands of random operations; calendars and resources made
 * and refused; every fault of a hold's items; buffers; capacity above 1 and its last unit;
 * check-out and check-in on one date; expiry, release and cancel giving spans back; commit
 * keeping them; late payments taking them again or refunded; the per-user limit and
 * replace_existing; ended uses leaving memory with every present and future answer unchanged;
 * hf_core_check failing on a corrupted index; availability, fits and slots; restore from the
 * records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/calendar/internal.h"
#include "core/calendar/span.h"
#include "core/core.h"
#include "core/locks.h"
#include "core_fixtures.h"

#define DAY_MS 86400000LL
#define MINUTE_MS 60000LL
/* 2026-12-01T00:00:00Z, and its day number. */
#define T0 1796083200000LL
#define DAY0 ((int32_t)(T0 / DAY_MS))
#define MINUTE0 ((int32_t)(T0 / MINUTE_MS))

/* ---- the span index against an array ---- */

#define MODEL_STEPS 256

static int64_t model_at(const int64_t *deltas, int64_t x) {
    int64_t sum = 0;
    for (int64_t k = 0; k <= x && k < MODEL_STEPS; k++) sum += deltas[k];
    return sum;
}

static bool collect_visit(void *context, int32_t key, int64_t quantity) {
    int64_t *seen = context;
    seen[key] = quantity;
    return true;
}

static void span_compare(const span_pool_t *pool, uint32_t root, const int64_t *deltas,
                         int64_t from, int64_t to) {
    int64_t most = INT64_MIN, least = INT64_MAX;
    for (int64_t x = from; x < to; x++) {
        int64_t value = model_at(deltas, x);
        most = value > most ? value : most;
        least = value < least ? value : least;
        assert_int_equal(span_at(pool, root, x), value);
    }
    assert_int_equal(span_max(pool, root, from, to), most);
    assert_int_equal(span_min(pool, root, from, to), least);
    int64_t seen[MODEL_STEPS];
    for (int k = 0; k < MODEL_STEPS; k++) seen[k] = INT64_MIN;
    span_walk(pool, root, from, to, model_at(deltas, from), collect_visit, seen);
    for (int64_t k = 0; k < MODEL_STEPS; k++) {
        bool inside = k > from && k < to && deltas[k] != 0;
        assert_int_equal(seen[k] != INT64_MIN, inside);
        if (inside) assert_int_equal(seen[k], model_at(deltas, k));
    }
}

static void test_span_index_against_array(void **state) {
    (void)state;
    span_pool_t pool;
    span_pool_init(&pool);
    uint32_t root = 0;
    int64_t deltas[MODEL_STEPS] = {0};
    srand(29);
    for (int step = 0; step < 6000; step++) {
        int32_t from = rand() % (MODEL_STEPS - 1);
        int32_t to = from + 1 + rand() % (MODEL_STEPS - 1 - from);
        int64_t quantity = 1 + rand() % 5;
        if (rand() % 3 == 0) quantity = -quantity; /* a use given back, maybe never taken */
        span_add(&pool, &root, from, quantity);
        span_add(&pool, &root, to, -quantity);
        deltas[from] += quantity;
        deltas[to] -= quantity;
        int64_t a = rand() % (MODEL_STEPS - 1);
        int64_t b = a + 1 + rand() % (MODEL_STEPS - a - 1);
        span_compare(&pool, root, deltas, a, b);
        if (step % 500 == 0) {
            uint32_t nodes = 0;
            assert_null(span_check(&pool, root, &nodes));
            uint32_t nonzero = 0;
            for (int k = 0; k < MODEL_STEPS; k++) nonzero += deltas[k] != 0;
            assert_int_equal(nodes, nonzero);
            assert_int_equal(pool.live, nonzero);
        }
    }
    /* Everything given back: no node left. */
    for (int32_t k = 0; k < MODEL_STEPS; k++) span_add(&pool, &root, k, -deltas[k]);
    assert_int_equal(root, 0);
    assert_int_equal(pool.live, 0);
    span_pool_free(&pool);
}

/* ---- fixtures ---- */

typedef struct fixture {
    fx_sink_t sink;
    hf_core_t *core;
    hf_resource_definition_t resources[8];
    hf_calendar_definition_t definition;
    hf_calendar_conflict_t conflicts[8];
    hf_error_detail_t detail;
    int64_t now;
} fixture_t;

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->core = fx_core_create(&f->sink, 4096);
    f->now = T0 + 8 * 3600 * 1000; /* 08:00 */
    hf_core_advance(f->core, f->now);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

static hf_resource_definition_t resource_of(const char *id, int64_t capacity, int64_t price,
                                            int64_t max_length) {
    hf_resource_definition_t resource = {.capacity = capacity,
                                         .price = price,
                                         .min_length = 1,
                                         .max_length = max_length};
    snprintf(resource.id, sizeof resource.id, "%s", id);
    return resource;
}

/* A night calendar "hotel": DBL (capacity 2, 100 a night), SUITE (1, 500, at least 2 nights). */
static void hotel(fixture_t *f, uint32_t max_uses_per_user) {
    f->resources[0] = resource_of("DBL", 2, 100, 30);
    f->resources[1] = resource_of("SUITE", 1, 500, 30);
    f->resources[1].min_length = 2;
    f->definition = (hf_calendar_definition_t){.unit = HF_CALENDAR_NIGHT,
                                               .granularity_min = 1440,
                                               .hold_ttl_ms = 600000,
                                               .max_hold_ms = 1800000,
                                               .horizon_days = 365,
                                               .max_items_per_hold = 4,
                                               .max_uses_per_user = max_uses_per_user,
                                               .resource_count = 2,
                                               .resources = f->resources};
    strcpy(f->definition.id, "hotel");
    strcpy(f->definition.currency, "EUR");
    assert_int_equal(hf_core_calendar_create(f->core, &f->definition, f->now, NULL), HF_OK);
}

/* A minute calendar "clinic" of 15-minute steps: dr (capacity 1, 10 a step, 15 to 60 minutes,
 * buffers before and after as given). */
static void clinic(fixture_t *f, int64_t before, int64_t after) {
    f->resources[0] = resource_of("dr", 1, 10, 60);
    f->resources[0].min_length = 15;
    f->resources[0].buffer_before_min = before;
    f->resources[0].buffer_after_min = after;
    f->definition = (hf_calendar_definition_t){.unit = HF_CALENDAR_MINUTE,
                                               .granularity_min = 15,
                                               .hold_ttl_ms = 600000,
                                               .max_hold_ms = 1800000,
                                               .horizon_days = 30,
                                               .max_items_per_hold = 4,
                                               .resource_count = 1,
                                               .resources = f->resources};
    strcpy(f->definition.id, "clinic");
    strcpy(f->definition.currency, "EUR");
    assert_int_equal(hf_core_calendar_create(f->core, &f->definition, f->now, NULL), HF_OK);
}

typedef struct asked {
    const char *resource;
    int32_t from, to;
    uint32_t quantity;
} asked_t;

static hf_error_t hold_items(fixture_t *f, const char *calendar, const char *user,
                             const char *hold_id, const asked_t *items, uint32_t count,
                             bool replace, uint32_t *index) {
    hf_calendar_item_request_t requests[8];
    for (uint32_t i = 0; i < count; i++)
        requests[i] = (hf_calendar_item_request_t){items[i].resource, items[i].quantity,
                                                   items[i].from, items[i].to};
    hf_calendar_hold_request_t request = {.calendar_id = calendar,
                                          .user_id = user,
                                          .hold_id = hold_id,
                                          .items = requests,
                                          .item_count = count,
                                          .ttl_ms = -1,
                                          .replace_existing = replace,
                                          .conflicts = f->conflicts,
                                          .conflict_max = 8};
    memset(&f->detail, 0, offsetof(hf_error_detail_t, item_count));
    uint32_t ignored;
    hf_error_t error = hf_core_calendar_hold(f->core, &request, f->now, index ? index : &ignored,
                                             &f->detail);
    f->detail.item_count = request.conflict_count; /* the conflicts, for the asserts */
    fx_assert_consistent(f->core, f->now);
    return error;
}

static hf_error_t hold_one(fixture_t *f, const char *calendar, const char *user,
                           const char *hold_id, const char *resource, int32_t from, int32_t to,
                           uint32_t quantity) {
    asked_t item = {resource, from, to, quantity};
    return hold_items(f, calendar, user, hold_id, &item, 1, false, NULL);
}

static const hf_calendar_t *calendar_of(fixture_t *f, const char *id) {
    const hf_calendar_t *calendar = hf_core_calendar(f->core, id, NULL);
    assert_non_null(calendar);
    return calendar;
}

static int64_t taken(fixture_t *f, const char *calendar_id, uint32_t resource, int32_t from,
                     int32_t to) {
    return hf_core_resource_taken(calendar_of(f, calendar_id), resource, from, to);
}

static void advance(fixture_t *f, int64_t ms) {
    f->now += ms;
    hf_core_advance(f->core, f->now);
    fx_assert_consistent(f->core, f->now);
}

/* ---- calendars and resources ---- */

static void test_create_and_resources(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    assert_int_equal(hf_core_calendar_create(f->core, &f->definition, f->now, NULL),
                     HF_ERROR_CALENDAR_EXISTS);
    const hf_calendar_t *calendar = calendar_of(f, "hotel");
    assert_int_equal(calendar->definition.resource_count, 2);
    assert_int_equal(hf_core_resource_find(calendar, "SUITE"), 1);
    assert_int_equal(hf_core_resource_find(calendar, "NONE"), -1);
    assert_non_null(fx_sink_first(&f->sink, HF_MUTATION_CALENDAR_CREATE));

    hf_resource_definition_t more[2] = {resource_of("PARK", 40, 15, 30),
                                        resource_of("DBL", 1, 1, 30)};
    hf_error_detail_t detail;
    assert_int_equal(hf_core_calendar_add_resources(f->core, "hotel", more, 2, f->now, &detail),
                     HF_ERROR_RESOURCE_EXISTS);
    assert_int_equal(detail.index, 1);
    assert_int_equal(calendar_of(f, "hotel")->definition.resource_count, 2); /* all or nothing */
    assert_int_equal(hf_core_calendar_add_resources(f->core, "hotel", more, 1, f->now, &detail),
                     HF_OK);
    assert_int_equal(hf_core_resource_find(calendar_of(f, "hotel"), "PARK"), 2);
    assert_int_equal(hf_core_calendar_add_resources(f->core, "nope", more, 1, f->now, &detail),
                     HF_ERROR_CALENDAR_NOT_FOUND);

    /* Refused definitions, with their fields. */
    hf_calendar_definition_t bad = f->definition;
    strcpy(bad.id, "other");
    hf_resource_definition_t twice[2] = {resource_of("A", 1, 0, 10), resource_of("A", 1, 0, 10)};
    bad.resources = twice;
    bad.resource_count = 2;
    assert_int_equal(hf_core_calendar_create(f->core, &bad, f->now, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "resources");
    assert_int_equal(detail.fault, HF_FAULT_DUPLICATE);
    twice[1] = resource_of("B", 0, 0, 10);
    assert_int_equal(hf_core_calendar_create(f->core, &bad, f->now, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.member, "capacity");
    twice[1] = resource_of("B", 1, 0, 10);
    twice[1].buffer_after_min = 10; /* buffers are for minute calendars */
    assert_int_equal(hf_core_calendar_create(f->core, &bad, f->now, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.member, "buffer_after_min");
    twice[1].buffer_after_min = 0;
    bad.unit = HF_CALENDAR_MINUTE;
    bad.granularity_min = 7; /* not a divisor of a day */
    assert_int_equal(hf_core_calendar_create(f->core, &bad, f->now, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "granularity_min");
    assert_int_equal(hf_core_calendar_count(f->core), 1);

    assert_int_equal(hf_core_calendar_sales_set(f->core, "hotel", false, f->now), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", DAY0 + 3, DAY0 + 5, 1),
                     HF_ERROR_SALES_CLOSED);
    assert_int_equal(hf_core_calendar_sales_set(f->core, "hotel", true, f->now), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", DAY0 + 3, DAY0 + 5, 1), HF_OK);
}

/* ---- faults of a hold ---- */

static void expect_fault(fixture_t *f, const char *calendar, const asked_t *items, uint32_t count,
                         const char *member, uint32_t index) {
    assert_int_equal(hold_items(f, calendar, "u1", "res_bad", items, count, false, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(f->detail.field, "items");
    assert_true(f->detail.has_index);
    assert_int_equal(f->detail.index, index);
    if (member) assert_string_equal(f->detail.member, member);
    else assert_null(f->detail.member);
}

static void test_hold_faults(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    clinic(f, 0, 0);
    int32_t d = DAY0 + 10, m = MINUTE0 + 10 * 60;                                 /* 10:00 today */
    expect_fault(f, "hotel", &(asked_t){"DBL", d + 2, d, 1}, 1, "to", 0);         /* reversed */
    expect_fault(f, "hotel", &(asked_t){"DBL", d, d, 1}, 1, "to", 0);             /* empty */
    expect_fault(f, "hotel", &(asked_t){"SUITE", d, d + 1, 1}, 1, "to", 0);       /* too short */
    expect_fault(f, "hotel", &(asked_t){"DBL", d, d + 31, 1}, 1, "to", 0);        /* too long */
    expect_fault(f, "hotel", &(asked_t){"DBL", DAY0 - 2, DAY0, 1}, 1, "from", 0); /* past */
    expect_fault(f, "hotel", &(asked_t){"DBL", DAY0 + 360, DAY0 + 366, 1}, 1, "to", 0);
    expect_fault(f, "hotel", &(asked_t){"DBL", d, d + 1, 3}, 1, "quantity", 0);
    expect_fault(f, "clinic", &(asked_t){"dr", m + 5, m + 20, 1}, 1, "from", 0); /* off grid */
    expect_fault(f, "clinic", &(asked_t){"dr", m, m + 20, 1}, 1, "to", 0);
    expect_fault(f, "clinic", &(asked_t){"dr", MINUTE0 + 7 * 60, MINUTE0 + 7 * 60 + 15, 1}, 1,
                 "from", 0); /* 07:00 is before now (08:00) */
    asked_t overlapping[2] = {{"DBL", d, d + 3, 1}, {"DBL", d + 2, d + 4, 1}};
    expect_fault(f, "hotel", overlapping, 2, NULL, 1);
    /* Yesterday is allowed for nights (every time zone's today). */
    assert_int_equal(hold_one(f, "hotel", "u1", "res_y", "DBL", DAY0 - 1, DAY0 + 1, 1), HF_OK);
    /* The minute calendar's now, on its grid: 08:00 itself. */
    assert_int_equal(hold_one(f, "clinic", "u1", "res_n", "dr", MINUTE0 + 480, MINUTE0 + 495, 1),
                     HF_OK);

    asked_t one = {"NOPE", d, d + 1, 1};
    asked_t two[2] = {{"DBL", d, d + 1, 1}, one};
    assert_int_equal(hold_items(f, "hotel", "u1", "res_x", two, 2, false, NULL),
                     HF_ERROR_RESOURCE_NOT_FOUND);
    assert_int_equal(f->detail.index, 1);
    assert_int_equal(hold_items(f, "none", "u1", "res_x", &one, 1, false, NULL),
                     HF_ERROR_CALENDAR_NOT_FOUND);
    assert_int_equal(hold_items(f, "hotel", "u1", "res_x", NULL, 0, false, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(f->detail.fault, HF_FAULT_NO_ITEMS);
    asked_t five[5] = {{"DBL", d, d + 1, 1},
                       {"DBL", d + 1, d + 2, 1},
                       {"DBL", d + 2, d + 3, 1},
                       {"DBL", d + 3, d + 4, 1},
                       {"DBL", d + 4, d + 5, 1}};
    assert_int_equal(hold_items(f, "hotel", "u1", "res_x", five, 5, false, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(f->detail.fault, HF_FAULT_HOLD_ITEMS);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_y", "DBL", d, d + 1, 1),
                     HF_ERROR_INVALID_REQUEST); /* the id is taken */
    assert_int_equal(f->detail.fault, HF_FAULT_ID_TAKEN);
    /* Nothing refused took anything. */
    assert_int_equal(taken(f, "hotel", 0, d, d + 40), 0);
}

/* ---- conflicts ---- */

static void test_capacity_and_last_unit(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    int32_t d = DAY0 + 20;
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", d, d + 3, 1), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u2", "res_2", "DBL", d + 1, d + 2, 1), HF_OK);
    assert_int_equal(taken(f, "hotel", 0, d, d + 3), 2);
    /* The last unit of d+1 is gone: a stay over it is refused, with exactly that night. */
    assert_int_equal(hold_one(f, "hotel", "u3", "res_3", "DBL", d - 1, d + 4, 1),
                     HF_ERROR_RANGE_UNAVAILABLE);
    assert_int_equal(f->detail.item_count, 1);
    assert_int_equal(f->conflicts[0].from, d + 1);
    assert_int_equal(f->conflicts[0].to, d + 2);
    assert_int_equal(f->conflicts[0].available, 0);
    /* Two units asked: every night with fewer than two free, merged into one run. */
    assert_int_equal(hold_one(f, "hotel", "u3", "res_3", "DBL", d - 1, d + 4, 2),
                     HF_ERROR_RANGE_UNAVAILABLE);
    assert_int_equal(f->conflicts[0].from, d);
    assert_int_equal(f->conflicts[0].to, d + 3);
    assert_int_equal(f->conflicts[0].available, 0);
    /* Check-out and check-in on one date do not conflict. */
    assert_int_equal(hold_one(f, "hotel", "u3", "res_3", "DBL", d + 3, d + 5, 2), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u4", "res_4", "DBL", d - 2, d, 2), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u5", "res_5", "DBL", d + 2, d + 3, 1), HF_OK);
    assert_int_equal(calendar_of(f, "hotel")->holds_active, 5);
    assert_int_equal(hf_core_calendar_uses_live(f->core), 5);
}

static void test_buffers(void **state) {
    fixture_t *f = *state;
    clinic(f, 5, 10);
    int32_t nine = MINUTE0 + 9 * 60;
    assert_int_equal(hold_one(f, "clinic", "u1", "res_1", "dr", nine, nine + 30, 1), HF_OK);
    /* 09:30-10:00: 10 minutes after plus 5 before overlap. */
    assert_int_equal(hold_one(f, "clinic", "u2", "res_2", "dr", nine + 30, nine + 60, 1),
                     HF_ERROR_RANGE_UNAVAILABLE);
    assert_int_equal(f->conflicts[0].from, nine + 25); /* the asked span widened */
    assert_int_equal(f->conflicts[0].to, nine + 40);
    /* 09:45: a 15-minute gap, enough. */
    assert_int_equal(hold_one(f, "clinic", "u2", "res_2", "dr", nine + 45, nine + 60, 1), HF_OK);
    /* Before the first one: 08:30-08:45 ends 15 minutes before 09:00, also enough. */
    assert_int_equal(hold_one(f, "clinic", "u3", "res_3", "dr", nine - 30, nine - 15, 1), HF_OK);
    assert_int_equal(hold_one(f, "clinic", "u4", "res_4", "dr", nine - 15, nine, 1),
                     HF_ERROR_RANGE_UNAVAILABLE);
    /* Availability does not apply buffers: 09:30-09:45 is free there. */
    const hf_calendar_t *calendar = calendar_of(f, "clinic");
    assert_int_equal(hf_core_resource_taken(calendar, 0, nine + 30, nine + 45), 0);
    int64_t available;
    assert_false(
        hf_core_resource_fits(f->core, calendar, 0, nine + 30, nine + 45, 1, f->now, &available));
    assert_int_equal(available, 0);
    /* Two items of one hold whose buffers meet overlap. */
    asked_t close[2] = {{"dr", nine + 120, nine + 135, 1}, {"dr", nine + 135, nine + 150, 1}};
    assert_int_equal(hold_items(f, "clinic", "u5", "res_5", close, 2, false, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(f->detail.index, 1);
}

/* ---- spans given back, kept, taken again ---- */

static void test_expiry_release_cancel(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    int32_t d = DAY0 + 5;
    uint32_t hold_index;
    asked_t item = {"SUITE", d, d + 2, 1};
    assert_int_equal(hold_items(f, "hotel", "u1", "res_1", &item, 1, false, &hold_index), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, hold_index)->total, 1000);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 1);
    advance(f, 600000); /* the TTL: expired at expires_at */
    assert_int_equal(hf_core_hold_at(f->core, hold_index)->status, HF_HOLD_EXPIRED);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 0);
    assert_int_equal(calendar_of(f, "hotel")->holds_active, 0);

    assert_int_equal(hold_one(f, "hotel", "u1", "res_2", "SUITE", d, d + 2, 1), HF_OK);
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_2", "u1", 3600000, f->now, &capped), HF_OK);
    assert_true(capped); /* max_hold 30 minutes */
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", f->now), HF_OK);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 0);

    assert_int_equal(hold_one(f, "hotel", "u1", "res_3", "SUITE", d, d + 2, 1), HF_OK);
    uint32_t order_index;
    assert_int_equal(hf_core_commit(f->core, "res_3", "u1", "ord_3", "pi_3", f->now, &order_index),
                     HF_OK);
    const hf_order_t *order = hf_core_order_at(f->core, order_index);
    assert_int_equal(order->target, HF_TARGET_CALENDAR);
    assert_int_equal(order->total, 1000);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 1); /* kept by the order */
    assert_int_equal(calendar_of(f, "hotel")->orders, 1);
    fx_assert_consistent(f->core, f->now);
    assert_int_equal(hf_core_cancel(f->core, "ord_3", "u1", "ref_3", f->now), HF_OK);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 0);
    assert_int_equal(calendar_of(f, "hotel")->orders, 0);
    const hf_refund_t *refund = hf_core_refund_find(f->core, "ref_3", NULL);
    assert_non_null(refund);
    assert_int_equal(refund->amount, 1000);
    assert_int_equal(refund->target, HF_TARGET_CALENDAR);
    fx_assert_consistent(f->core, f->now);
}

static hf_error_t pay(fixture_t *f, const char *hold_id, int64_t amount, const char *order_id,
                      hf_payment_outcome_t *outcome) {
    hf_payment_delivery_t delivery = {.event_id = order_id,
                                      .type = HF_PAYMENT_SUCCEEDED,
                                      .payment_intent_id = order_id,
                                      .reservation_id = hold_id,
                                      .amount = amount,
                                      .currency = "eur",
                                      .order_id = order_id,
                                      .refund_id = "ref_late"};
    return hf_core_payment(f->core, &delivery, f->now, outcome);
}

static void test_late_payment(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    int32_t d = DAY0 + 7;
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "SUITE", d, d + 2, 1), HF_OK);
    advance(f, 700000);
    hf_payment_outcome_t outcome;
    assert_int_equal(pay(f, "res_1", 1000, "ord_1", &outcome), HF_OK);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_true(outcome.late);
    assert_int_equal(taken(f, "hotel", 1, d, d + 2), 1); /* taken again */
    fx_assert_consistent(f->core, f->now);

    /* Lapsed, then taken by another: refunded. */
    assert_int_equal(hold_one(f, "hotel", "u2", "res_2", "SUITE", d + 2, d + 4, 1), HF_OK);
    advance(f, 700000);
    assert_int_equal(hold_one(f, "hotel", "u3", "res_3", "SUITE", d + 3, d + 5, 1), HF_OK);
    assert_int_equal(pay(f, "res_2", 1000, "ord_2", &outcome), HF_OK);
    assert_int_equal(outcome.result, HF_PAYMENT_REFUND_REQUIRED);
    assert_int_equal(outcome.reason, HF_REFUND_HOLD_EXPIRED);
    const hf_refund_t *refund = hf_core_refund_at(f->core, outcome.refund);
    assert_int_equal(refund->target, HF_TARGET_CALENDAR);
    assert_int_equal(taken(f, "hotel", 1, d + 2, d + 3), 0);
    fx_assert_consistent(f->core, f->now);
}

static void test_user_limit_and_replace(void **state) {
    fixture_t *f = *state;
    hotel(f, 2);
    int32_t d = DAY0 + 30;
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", d, d + 1, 2), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_2", "SUITE", d + 5, d + 7, 1),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(f->detail.limit, 2);
    assert_int_equal(f->detail.current, 2);
    assert_int_equal(f->detail.requested, 1);
    /* Another user is not counted. */
    assert_int_equal(hold_one(f, "hotel", "u2", "res_3", "SUITE", d + 5, d + 7, 1), HF_OK);
    /* replace_existing releases the user's held holds first, and checks as if they were free:
     * the same two rooms again. */
    uint32_t index;
    asked_t again = {"DBL", d, d + 2, 2};
    assert_int_equal(hold_items(f, "hotel", "u1", "res_4", &again, 1, true, &index), HF_OK);
    assert_int_equal(fx_hold_of(f->core, "res_1")->status, HF_HOLD_RELEASED);
    assert_int_equal(taken(f, "hotel", 0, d, d + 2), 2);
    /* A refused replacement changes nothing. */
    asked_t over = {"SUITE", d + 5, d + 7, 1};
    assert_int_equal(hold_items(f, "hotel", "u1", "res_5", &over, 1, true, NULL),
                     HF_ERROR_RANGE_UNAVAILABLE);
    assert_int_equal(fx_hold_of(f->core, "res_4")->status, HF_HOLD_HELD);
    assert_int_equal(taken(f, "hotel", 0, d, d + 2), 2);
    /* Confirmed uses count too, until their span ends. */
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_4", "u1", "ord_4", NULL, f->now, &order), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_6", "DBL", d + 10, d + 11, 1),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(user_uses_current(f->core, 0, fx_hold_of(f->core, "res_4")->user,
                                       (int64_t)(d + 2) * DAY_MS, true),
                     0);
}

/* ---- bookings, availability, slots ---- */

static void test_booking_segments_slots(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    int32_t d = DAY0 + 40;
    hf_calendar_item_request_t item = {"DBL", 1, d + 2, d + 4};
    hf_calendar_hold_request_t request = {.calendar_id = "hotel",
                                          .user_id = "staff",
                                          .items = &item,
                                          .item_count = 1};
    uint32_t order;
    assert_int_equal(hf_core_calendar_book(f->core, &request, "ord_b", NULL, f->now, &order, NULL),
                     HF_OK);
    assert_int_equal(hf_core_order_at(f->core, order)->total, 200);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", d + 3, d + 6, 2),
                     HF_ERROR_RANGE_UNAVAILABLE);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", d + 3, d + 6, 1), HF_OK);
    const hf_calendar_t *calendar = calendar_of(f, "hotel");
    hf_calendar_segment_t segments[8];
    bool more;
    uint32_t count = hf_core_resource_segments(calendar, 0, d, d + 10, segments, 8, &more);
    assert_false(more);
    hf_calendar_segment_t expected[4] = {{d, d + 2, 2},
                                         {d + 2, d + 3, 1},
                                         {d + 3, d + 4, 0},
                                         {d + 4, d + 6, 1}};
    assert_int_equal(count, 5);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(segments[i].from, expected[i].from);
        assert_int_equal(segments[i].to, expected[i].to);
        assert_int_equal(segments[i].available, expected[i].available);
    }
    assert_int_equal(segments[4].from, d + 6);
    assert_int_equal(segments[4].to, d + 10);
    assert_int_equal(segments[4].available, 2);
    assert_int_equal(hf_core_resource_segments(calendar, 0, d, d + 10, segments, 2, &more), 2);
    assert_true(more);
    /* Slots of two nights starting in [d, d + 6): not over d + 3, where both rooms are taken. */
    hf_calendar_slot_t slots[32];
    uint32_t dbl = 0;
    count = hf_core_resource_slots(f->core, calendar, &dbl, 1, 2, 1, d, d + 6, -1, 0, f->now, slots,
                                   32, &more);
    int32_t starts[4] = {d, d + 1, d + 4, d + 5};
    assert_int_equal(count, 4);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(slots[i].from, starts[i]);
        assert_int_equal(slots[i].to, starts[i] + 2);
    }
    count = hf_core_resource_slots(f->core, calendar, NULL, 0, 2, 1, d, d + 2, -1, 0, f->now, slots,
                                   32, &more);
    assert_int_equal(count, 4); /* d: DBL, SUITE; d + 1: DBL, SUITE */
    assert_int_equal(slots[1].resource, 1);
    count = hf_core_resource_slots(f->core, calendar, NULL, 0, 2, 1, d, d + 2, 0, d, f->now, slots,
                                   2, &more);
    assert_int_equal(count, 2); /* after (DBL, d): SUITE at d, DBL at d + 1, then more */
    assert_int_equal(slots[0].resource, 1);
    assert_int_equal(slots[1].from, d + 1);
    assert_true(more);
}

/* ---- ended uses leave memory ---- */

static void test_ended_uses_leave(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    uint32_t order;
    for (int i = 0; i < 6; i++) {
        char hold_id[16], order_id[16];
        snprintf(hold_id, sizeof hold_id, "res_%d", i);
        snprintf(order_id, sizeof order_id, "ord_%d", i);
        assert_int_equal(hold_one(f, "hotel", "u1", hold_id, "DBL", DAY0 + i, DAY0 + i + 2, 1),
                         HF_OK);
        assert_int_equal(hf_core_commit(f->core, hold_id, "u1", order_id, NULL, f->now, &order),
                         HF_OK);
    }
    assert_int_equal(hf_core_calendar_uses_live(f->core), 6);
    hf_calendar_segment_t before[16], after[16];
    bool more;
    int32_t future = DAY0 + 4;
    uint32_t count = hf_core_resource_segments(calendar_of(f, "hotel"), 0, future, DAY0 + 20,
                                               before, 16, &more);
    advance(f, 4 * DAY_MS); /* today is DAY0 + 4: stays ending by DAY0 + 3 have gone */
    assert_int_equal(hf_core_calendar_uses_live(f->core), 4);
    assert_int_equal(
        hf_core_resource_segments(calendar_of(f, "hotel"), 0, future, DAY0 + 20, after, 16, &more),
        count);
    assert_memory_equal(before, after, count * sizeof *before);
    advance(f, 30 * DAY_MS);
    assert_int_equal(hf_core_calendar_uses_live(f->core), 0);
    assert_int_equal(tables_of(calendar_of(f, "hotel"))->pool.live, 0);
    /* A cancel of an order whose uses left changes nothing more in the index. */
    assert_int_equal(hf_core_cancel(f->core, "ord_0", "u1", NULL, f->now), HF_OK);
    fx_assert_consistent(f->core, f->now);
}

/* Many uses ending at once leave over several milliseconds, a budget each. */
static void test_sweep_is_bounded_per_advance(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    hf_resource_definition_t park = resource_of("PARK", 100000, 1, 30);
    assert_int_equal(hf_core_calendar_add_resources(f->core, "hotel", &park, 1, f->now, NULL),
                     HF_OK);
    uint32_t count = HF_CALENDAR_SWEEP_PER_ADVANCE + 100, order;
    hf_calendar_item_request_t item = {"PARK", 1, DAY0, DAY0 + 1};
    hf_calendar_hold_request_t booking = {.calendar_id = "hotel",
                                          .user_id = "fleet",
                                          .items = &item,
                                          .item_count = 1};
    for (uint32_t i = 0; i < count; i++) {
        char order_id[24];
        snprintf(order_id, sizeof order_id, "ord_%u", i);
        assert_int_equal(
            hf_core_calendar_book(f->core, &booking, order_id, NULL, f->now, &order, NULL), HF_OK);
    }
    f->now = (int64_t)(DAY0 + 2) * DAY_MS; /* the day after the stays' to: all may leave */
    hf_core_advance(f->core, f->now);
    assert_int_equal(hf_core_calendar_uses_live(f->core), 100);
    assert_int_equal(hf_core_next_expiry(f->core), f->now + 1);
    advance(f, 1);
    assert_int_equal(hf_core_calendar_uses_live(f->core), 0);
}

/* ---- hf_core_check sees a corrupted index ---- */

static void test_check_catches_corruption(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", DAY0 + 3, DAY0 + 6, 1), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u2", "res_2", "DBL", DAY0 + 4, DAY0 + 5, 1), HF_OK);
    hf_calendar_t *calendar = (hf_calendar_t *)calendar_of(f, "hotel");
    calendar_tables_t *tables = tables_of(calendar);
    span_node_t *root = &tables->pool.nodes[tables->spans[0].root];
    /* A delta moved with its sums kept: the tree is consistent, the uses say otherwise. */
    root->delta += 1;
    root->sum += 1;
    root->max_prefix += 1;
    assert_non_null(hf_core_check(f->core, f->now));
    root->delta -= 1;
    root->sum -= 1;
    root->max_prefix -= 1;
    assert_null(hf_core_check(f->core, f->now));
    /* Over capacity: a third use slipped in behind the checks. */
    hf_calendar_item_t extra = {0, 2, DAY0 + 4, DAY0 + 5, 0};
    use_apply(calendar, &extra, 1);
    const char *fault = hf_core_check(f->core, f->now);
    assert_non_null(fault);
    use_apply(calendar, &extra, -1);
    assert_null(hf_core_check(f->core, f->now));
}

/* ---- restore from the records ---- */

static void test_restore(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    int32_t d = DAY0 + 2;
    assert_int_equal(hold_one(f, "hotel", "u1", "res_1", "DBL", d, d + 2, 1), HF_OK);
    assert_int_equal(hold_one(f, "hotel", "u2", "res_2", "SUITE", d, d + 3, 1), HF_OK);
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_2", "u2", "ord_2", NULL, f->now, &order), HF_OK);

    fx_sink_t sink;
    hf_core_t *restored = fx_core_create(&sink, 16);
    assert_int_equal(hf_core_restore_calendar(restored, &f->definition, T0), HF_OK);
    hf_calendar_item_request_t one = {"DBL", 1, d, d + 2}, two = {"SUITE", 1, d, d + 3};
    hf_stored_calendar_hold_t held = {.request = {.calendar_id = "hotel",
                                                  .user_id = "u1",
                                                  .hold_id = "res_1",
                                                  .items = &one,
                                                  .item_count = 1},
                                      .status = HF_HOLD_HELD,
                                      .created_at_ms = f->now,
                                      .expires_at_ms = f->now + 600000,
                                      .total = 200};
    hf_stored_calendar_hold_t confirmed = held;
    confirmed.request = (hf_calendar_hold_request_t){.calendar_id = "hotel",
                                                     .user_id = "u2",
                                                     .hold_id = "res_2",
                                                     .items = &two,
                                                     .item_count = 1};
    confirmed.status = HF_HOLD_CONFIRMED;
    hf_stored_calendar_order_t stored_order = {.order_id = "ord_2",
                                               .hold_id = "res_2",
                                               .items = confirmed.request,
                                               .status = HF_ORDER_CONFIRMED,
                                               .created_at_ms = f->now,
                                               .total = 1500};
    assert_int_equal(hf_core_restore_calendar_hold(restored, &held), HF_OK);
    assert_int_equal(hf_core_restore_calendar_hold(restored, &confirmed), HF_OK);
    assert_int_equal(hf_core_restore_calendar_order(restored, &stored_order), HF_OK);
    hf_core_advance(restored, f->now);
    assert_null(hf_core_check(restored, f->now));
    const hf_calendar_t *calendar = hf_core_calendar(restored, "hotel", NULL);
    for (uint32_t r = 0; r < 2; r++)
        for (int32_t x = d - 1; x < d + 5; x++)
            assert_int_equal(hf_core_resource_taken(calendar, r, x, x + 1),
                             taken(f, "hotel", r, x, x + 1));
    assert_int_equal(calendar->holds_active, 1);
    assert_int_equal(calendar->orders, 1);
    /* A forgotten hold revived. */
    hf_stored_calendar_hold_t old = held;
    old.request.hold_id = "res_old";
    old.status = HF_HOLD_EXPIRED;
    uint32_t index;
    assert_int_equal(hf_core_revive_calendar_hold(restored, &old, &index), HF_OK);
    assert_int_equal(hf_core_hold_at(restored, index)->status, HF_HOLD_EXPIRED);
    assert_int_equal(hf_core_resource_taken(calendar, 0, d, d + 2), 1);
    assert_null(hf_core_check(restored, f->now));
    fx_core_destroy(restored, &sink);
}

/* A stay exchanging an order of another unit (core/locks.h): placed with the old order as its
 * owner read it (the user's, confirmed), its commit refused without the lock and made with it,
 * the new order replacing the remote one and the difference refunded to its payment. */
static void test_a_remote_exchange_stay(void **state) {
    fixture_t *f = *state;
    hotel(f, 0);
    hf_calendar_item_request_t night = {"DBL", 1, DAY0 + 3, DAY0 + 4};
    hf_calendar_hold_request_t request = {.calendar_id = "hotel",
                                          .user_id = "u1",
                                          .hold_id = "res_stay",
                                          .items = &night,
                                          .item_count = 1,
                                          .ttl_ms = -1,
                                          .exchange_for = "ord_far",
                                          .conflicts = f->conflicts,
                                          .conflict_max = 8};
    hf_remote_order_t old = {"ord_far", "u2", "pi_far", 300, true};
    uint32_t index;
    assert_int_equal(hf_core_calendar_hold(f->core, &request, f->now, &index, &f->detail),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(
        hf_core_calendar_hold_remote_exchange(f->core, &request, &old, f->now, &index, &f->detail),
        HF_ERROR_NOT_OWNER);
    old.user_id = "u1";
    assert_int_equal(
        hf_core_calendar_hold_remote_exchange(f->core, &request, &old, f->now, &index, &f->detail),
        HF_OK);
    assert_string_equal(request.exchange_for, "ord_far");
    fx_assert_consistent(f->core, f->now);
    int64_t total = 0;
    bool known = false;
    assert_string_equal(hf_core_remote_exchange_of(f->core, "res_stay", &total, &known), "ord_far");
    assert_true(known);
    assert_int_equal(total, 300);
    assert_int_equal(taken(f, "hotel", 0, DAY0 + 3, DAY0 + 4), 1);
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_stay", "u1", "ord_new", NULL, f->now, &order),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_stay", "u1", "ord_new", NULL,
                                                    "ref_1", &old, f->now, &order),
                     HF_OK);
    fx_assert_consistent(f->core, f->now);
    const hf_order_t *made = hf_core_order_find(f->core, "ord_new", NULL);
    assert_non_null(made);
    assert_string_equal(hf_core_string(f->core, made->replaces_elsewhere), "ord_far");
    assert_int_equal(hf_core_refund_find(f->core, "ref_1", NULL)->amount, 200);
    assert_int_equal(taken(f, "hotel", 0, DAY0 + 3, DAY0 + 4), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span_index_against_array),
        cmocka_unit_test_setup_teardown(test_create_and_resources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_and_last_unit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_release_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_payment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_limit_and_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_booking_segments_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ended_uses_leave, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_is_bounded_per_advance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_catches_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_remote_exchange_stay, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_calendars", tests, NULL, NULL);
}
