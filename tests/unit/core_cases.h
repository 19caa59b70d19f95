/* The fixture the core's unit tests share (tests/unit/test_core_*.c, one file per domain of
 * src/core, split from what was test_core.c): a core with the "show" and "open" events, and
 * the helpers that hold, read and assert on it. Helpers are static inline, so a file that
 * uses some of them builds without warnings about the others. Fixtures of every core test
 * are in core_fixtures.h, which this includes. */
#ifndef HF_TESTS_CORE_CASES_H
#define HF_TESTS_CORE_CASES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "core/core.h"
#include "lib/map.h"
#include "core_fixtures.h"

#define T0 INT64_C(1800000000000)
#define TTL INT64_C(600000)
#define MAX_HOLD INT64_C(1800000)
#define FLOOR_PRICE 45000
#define BALC_PRICE 12000
#define GA_PRICE 9900
#define VIP_PRICE 50000

/* "show": FLOOR rows A, B of 30 seats; BALC row A of 40 seats; pools GA (10) and VIP (2).
 * At most 8 seats per user, 10 items per hold. "open": one section S of 2 rows of 20 seats,
 * pool P of 100, no user limit, 10 items per hold. */
typedef struct fixture {
    hf_core_t *core;
    fx_sink_t sink;
    fx_event_t show;
    fx_event_t open;
    const hf_event_t *event; /* "show", refreshed by seat() */
} fixture_t;

static inline int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->core = fx_core_create(&f->sink, 4096);
    fx_event_init(&f->show, "show", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&f->show, "FLOOR", FLOOR_PRICE, 2, 30);
    fx_event_section(&f->show, "BALC", BALC_PRICE, 1, 40);
    fx_event_pool(&f->show, "GA", 10, GA_PRICE);
    fx_event_pool(&f->show, "VIP", 2, VIP_PRICE);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &f->show.definition, T0, &detail), HF_OK);
    fx_event_init(&f->open, "open", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&f->open, "S", 100, 2, 20);
    fx_event_pool(&f->open, "P", 100, 10);
    assert_int_equal(hf_core_event_create(f->core, &f->open.definition, T0, &detail), HF_OK);
    fx_sink_reset(&f->sink);
    *state = f;
    return 0;
}

static inline int teardown(void **state) {
    fixture_t *f = *state;
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

/* ---- helpers ---- */

static inline hf_error_t hold_on(fixture_t *f, const char *event_id, const char *user,
                                 const char *hold_id, const char *const *seats, uint32_t seat_count,
                                 const hf_pool_request_t *pools, uint32_t pool_count,
                                 int64_t ttl_ms, bool replace, hf_time_ms_t now, uint32_t *index,
                                 hf_error_detail_t *detail) {
    hf_hold_request_t request = {
        .event_id = event_id,
        .user_id = user,
        .hold_id = hold_id,
        .seat_ids = seats,
        .seat_count = seat_count,
        .pools = pools,
        .pool_count = pool_count,
        .ttl_ms = ttl_ms,
        .replace_existing = replace,
    };
    return fx_hold(f->core, &request, now, index, detail);
}

static inline hf_error_t hold(fixture_t *f, const char *user, const char *hold_id,
                              const char *const *seats, uint32_t seat_count,
                              const hf_pool_request_t *pools, uint32_t pool_count, int64_t ttl_ms,
                              bool replace, hf_time_ms_t now, uint32_t *index,
                              hf_error_detail_t *detail) {
    return hold_on(f, "show", user, hold_id, seats, seat_count, pools, pool_count, ttl_ms, replace,
                   now, index, detail);
}

static inline const hf_event_t *event_of(fixture_t *f, const char *event_id) {
    return fx_event_of(f->core, event_id);
}

static inline const hf_seat_t *seat_on(fixture_t *f, const char *event_id, const char *seat_id) {
    return fx_seat_of(f->core, event_id, seat_id);
}

static inline const hf_seat_t *seat(fixture_t *f, const char *seat_id) {
    return seat_on(f, "show", seat_id);
}

static inline const hf_pool_t *pool(fixture_t *f, const char *pool_id) {
    const hf_event_t *event = event_of(f, "show");
    int32_t index = hf_core_pool_find(event, pool_id);
    assert_true(index >= 0);
    return &event->pools[index];
}

static inline const hf_hold_t *hold_by_id(fixture_t *f, const char *hold_id) {
    return fx_hold_of(f->core, hold_id);
}

static inline void assert_counts(hf_counts_t counts, uint32_t available, uint32_t held,
                                 uint32_t sold) {
    assert_int_equal(counts.available, available);
    assert_int_equal(counts.held, held);
    assert_int_equal(counts.sold, sold);
}

static inline void assert_consistent(fixture_t *f, hf_time_ms_t now) {
    fx_assert_consistent(f->core, now);
}

static inline void assert_no_mutation(fixture_t *f) { fx_assert_no_mutation(&f->sink); }

static inline void assert_seat_record(fixture_t *f, const char *seat_id, int status,
                                      uint32_t version) {
    const fx_record_t *record = fx_sink_seat(&f->sink, seat_id);
    if (record == NULL) fail_msg("no SEAT record for %s", seat_id);
    assert_string_equal(record->event_id, "show");
    assert_int_equal(record->status, status);
    assert_int_equal(record->version, version);
}

static inline void assert_items(fixture_t *f, uint32_t expected_count, const uint32_t *expected,
                                const hf_error_detail_t *detail) {
    (void)f;
    assert_int_equal(detail->item_count, expected_count);
    for (uint32_t i = 0; i < expected_count; i++) {
        bool found = false;
        for (uint32_t j = 0; j < detail->item_count; j++) found |= detail->items[j] == expected[i];
        if (!found) fail_msg("detail.items lacks index %u", expected[i]);
    }
}

static inline uint32_t commit(fixture_t *f, const char *hold_id, const char *user,
                              const char *order_id, hf_time_ms_t now) {
    uint32_t index = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, "pi_1", now, &index), HF_OK);
    return index;
}
/* ---- the paths and numbers of invalid definitions and requests (issue 18) ---- */

/* The path and fault the core gives, checked whole: a detail filled with garbage first, so a
 * member the core leaves unset shows. */
typedef struct expected_path {
    const char *field, *member;
    bool has_index, has_row;
    uint32_t index, row, other;
    uint8_t fault;
} expected_path_t;

static inline void assert_path(const hf_error_detail_t *detail, const expected_path_t *expected) {
    assert_non_null(detail->field);
    assert_string_equal(detail->field, expected->field);
    if (expected->member) {
        assert_non_null(detail->member);
        assert_string_equal(detail->member, expected->member);
    } else {
        assert_null(detail->member);
    }
    assert_int_equal(detail->has_index, expected->has_index);
    assert_int_equal(detail->has_row, expected->has_row);
    if (expected->has_index) assert_int_equal(detail->index, expected->index);
    if (expected->has_row) assert_int_equal(detail->row, expected->row);
    assert_int_equal(detail->fault, expected->fault);
    if (expected->fault == HF_FAULT_DUPLICATE) assert_int_equal(detail->other, expected->other);
}

static inline hf_error_detail_t *garbage_detail(void) {
    static hf_error_detail_t detail;
    memset(&detail, 0xa5, offsetof(hf_error_detail_t, items));
    return &detail;
}

static inline void expect_definition_path(fixture_t *f, fx_event_t *def,
                                          const expected_path_t *expected) {
    hf_error_detail_t *detail = garbage_detail();
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_event_create(f->core, &def->definition, T0, detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, expected);
    assert_no_mutation(f);
    assert_null(hf_core_event(f->core, def->definition.id, NULL));
}

#endif
