/* Unit tests of the core (src/core/core.h), hold.c and request.c: holds of seats and pools, every refusal and the path it names,
 * users' limits and ids, replace_existing, expiry, extend and release. Each asserts the resulting values and the
 * mutation records emitted (an error emits none); the fixture is core_cases.h. */
#include "core_cases.h"

static hf_error_t hold_detailed(fixture_t *f, const char *user, const char *hold_id,
                                const char *const *seats, uint32_t seat_count,
                                const hf_pool_request_t *pools, uint32_t pool_count, int64_t ttl_ms,
                                bool replace, hf_error_detail_t **detail) {
    hf_hold_request_t request = {
        .event_id = "show",
        .user_id = user,
        .hold_id = hold_id,
        .seat_ids = seats,
        .seat_count = seat_count,
        .pools = pools,
        .pool_count = pool_count,
        .ttl_ms = ttl_ms,
        .replace_existing = replace,
    };
    *detail = garbage_detail();
    uint32_t index;
    return hf_core_hold(f->core, &request, T0, &index, *detail);
}

static void test_hold_invalid_paths(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t *detail;
    assert_int_equal(hold_detailed(f, "u1", "res_1",
                                   SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-2"),
                                   NO_POOLS, -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"seats", NULL, true, false, 3, 0, 1, HF_FAULT_DUPLICATE});
    assert_int_equal(
        hold_detailed(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 1}, {"VIP", 0}), -1, false, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"pools", NULL, true, false, 1, 0, 0, HF_FAULT_VALUE});
    assert_int_equal(hold_detailed(f, "u1", "res_1",
                                   SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4",
                                         "FLOOR-A-5", "FLOOR-A-6", "FLOOR-A-7", "FLOOR-A-8"),
                                   POOLS({"GA", 3}), -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"seats", NULL, false, false, 0, 0, 0, HF_FAULT_HOLD_ITEMS});
    assert_int_equal(detail->requested, 11);
    assert_int_equal(detail->limit, 10);
    assert_int_equal(
        hold_detailed(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 11}), -1, false, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"pools", NULL, false, false, 0, 0, 0, HF_FAULT_HOLD_ITEMS});
    assert_int_equal(
        hold_detailed(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, MAX_HOLD + 1, false, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"ttl_s", NULL, false, false, 0, 0, 0, HF_FAULT_HOLD_TTL});
    assert_int_equal(detail->requested, MAX_HOLD + 1);
    assert_int_equal(detail->limit, MAX_HOLD);
    assert_int_equal(hold_detailed(f, "u1", "res_1", NO_SEATS, NO_POOLS, -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"seats", NULL, false, false, 0, 0, 0, HF_FAULT_NO_ITEMS});
    assert_int_equal(
        hold_detailed(f, NULL, "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"user_id", NULL, false, false, 0, 0, 0, HF_FAULT_REQUIRED});
    assert_int_equal(hf_core_holds_active(f->core), 0);
}

static void test_user_limit_numbers(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t *detail;
    /* 4 bought (2 seats, 2 units: pool units count one each), 2 held: 6 of 8. */
    assert_int_equal(hold_detailed(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"),
                                   POOLS({"GA", 2}), -1, false, &detail),
                     HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    assert_int_equal(hold_detailed(f, "u1", "res_2", SEATS("FLOOR-A-3", "FLOOR-A-4"), NO_POOLS, -1,
                                   false, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold_detailed(f, "u1", "res_3", SEATS("FLOOR-B-1", "FLOOR-B-2"),
                                   POOLS({"GA", 1}), -1, false, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(detail->limit, 8);
    assert_int_equal(detail->current, 6);
    assert_int_equal(detail->requested, 3);
    /* replace_existing: the held 2 are released in the same step, so they do not count. */
    assert_int_equal(
        hold_detailed(f, "u1", "res_3",
                      SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3", "FLOOR-B-4", "FLOOR-B-5"),
                      NO_POOLS, -1, true, &detail),
        HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(detail->limit, 8);
    assert_int_equal(detail->current, 4);
    assert_int_equal(detail->requested, 5);
    assert_no_mutation(f);
    /* The limit itself passes. */
    assert_int_equal(hold_detailed(f, "u1", "res_3", SEATS("FLOOR-B-1", "FLOOR-B-2"), NO_POOLS, -1,
                                   false, &detail),
                     HF_OK);
}

/* ---- holds ---- */

static void test_hold_seats_ok(void **state) {
    fixture_t *f = *state;
    uint32_t index = UINT32_MAX;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0 + 10, &index, &detail),
                     HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_non_null(h);
    assert_ptr_equal(hold_by_id(f, "res_1"), h);
    assert_string_equal(h->id, "res_1");
    assert_int_equal(h->status, HF_HOLD_HELD);
    assert_int_equal(h->order, 0);
    assert_string_equal(hf_core_user_id(f->core, h->user), "u1");
    assert_string_equal(hf_core_event_at(f->core, h->event)->id, "show");
    assert_int_equal(h->created_at_ms, T0 + 10);
    assert_int_equal(h->expires_at_ms, T0 + 10 + TTL);
    assert_int_equal(h->total, 2 * FLOOR_PRICE);
    assert_int_equal(h->seat_count, 2);
    assert_int_equal(h->pool_count, 0);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_non_null(items);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[1].quantity, 0);
    assert_true((items[0].index == 0 && items[1].index == 1) ||
                (items[0].index == 1 && items[1].index == 0));

    for (int i = 0; i < 2; i++) {
        const hf_seat_t *s = seat(f, i == 0 ? "FLOOR-A-1" : "FLOOR-A-2");
        assert_int_equal(s->status, HF_SEAT_HELD);
        assert_int_equal(s->version, 2);
        assert_int_equal(s->owner, index + 1);
    }
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 1);
    const hf_event_t *event = event_of(f, "show");
    assert_counts(event->counts, 98, 2, 0);
    assert_counts(event->sections[0].counts, 58, 2, 0);
    assert_counts(event->sections[1].counts, 40, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 1);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 10 + TTL);

    assert_int_equal(f->sink.total, 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_CREATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_string_equal(record->event_id, "show");
    assert_string_equal(record->user_id, "u1");
    assert_int_equal(record->total, 2 * FLOOR_PRICE);
    assert_int_equal(record->at_ms, T0 + 10);
    assert_int_equal(record->expires_at_ms, T0 + 10 + TTL);
    assert_int_equal(record->status, HF_HOLD_HELD);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_HELD, 2);
    assert_seat_record(f, "FLOOR-A-2", HF_SEAT_HELD, 2);
    assert_consistent(f, T0 + 10);
}

static void test_hold_pools_ok(void **state) {
    fixture_t *f = *state;
    uint32_t index = UINT32_MAX;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("BALC-A-7"), POOLS({"GA", 3}, {"VIP", 1}), -1,
                          false, T0, &index, &detail),
                     HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->total, BALC_PRICE + 3 * GA_PRICE + VIP_PRICE);
    assert_int_equal(h->seat_count, 1);
    assert_int_equal(h->pool_count, 2);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[0].index, 66);
    uint32_t ga = items[1].index == 0 ? 1 : 2, vip = ga == 1 ? 2 : 1;
    assert_int_equal(items[ga].index, 0);
    assert_int_equal(items[ga].quantity, 3);
    assert_int_equal(items[vip].index, 1);
    assert_int_equal(items[vip].quantity, 1);
    assert_int_equal(pool(f, "GA")->held, 3);
    assert_int_equal(pool(f, "GA")->sold, 0);
    assert_int_equal(pool(f, "VIP")->held, 1);
    assert_counts(event_of(f, "show")->counts, 99, 1, 0);
    assert_counts(event_of(f, "show")->sections[1].counts, 39, 1, 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 2);
    assert_seat_record(f, "BALC-A-7", HF_SEAT_HELD, 2);
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *r = &f->sink.records[i];
        if (r->type != HF_MUTATION_POOL) continue;
        bool is_ga = strcmp(r->pool_id, "GA") == 0;
        assert_int_equal(r->held, is_ga ? 3 : 1);
        assert_int_equal(r->sold, 0);
        assert_int_equal(r->available, is_ga ? 7 : 1);
    }

    /* Pools only. */
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hold(f, "u2", "res_2", NO_SEATS, POOLS({"GA", 7}), -1, false, T0, &index, &detail), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->total, 7 * GA_PRICE);
    assert_int_equal(pool(f, "GA")->held, 10);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    assert_consistent(f, T0);
}

static void test_hold_ttl(void **state) {
    fixture_t *f = *state;
    uint32_t index;
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, &index, &detail),
        HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1000);
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, MAX_HOLD, false, T0, &index, &detail),
        HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + MAX_HOLD);
    assert_int_equal(
        hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 1, false, T0, &index, &detail), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 1);
}

static void test_hold_event_not_found(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold_on(f, "nope", "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0,
                             NULL, &detail),
                     HF_ERROR_EVENT_NOT_FOUND);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_1", NULL));
    assert_int_equal(hf_core_holds_active(f->core), 0);
}

static void test_hold_seat_not_found(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1",
                          SEATS("FLOOR-A-1", "NOPE-A-1", "FLOOR-A-31", "FLOOR-A-2", "FLOOR-A-01"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_items(f, 3, (const uint32_t[]){1, 2, 4}, &detail);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_1", NULL));
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 1);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
}

static void test_hold_seats_unavailable(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(
        hold(f, "u3", "res_s", SEATS("BALC-A-1"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    commit(f, "res_s", "u3", "ord_s", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u2", "res_2",
                          SEATS("FLOOR-A-3", "FLOOR-A-2", "FLOOR-A-1", "BALC-A-1", "BALC-A-2"),
                          POOLS({"GA", 1}), -1, false, T0 + 2, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 3, (const uint32_t[]){1, 2, 3}, &detail);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_2", NULL));
    assert_int_equal(seat(f, "FLOOR-A-3")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 1);
    assert_int_equal(seat(f, "BALC-A-2")->version, 1);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 97, 2, 1);
    /* The holder itself cannot hold its own seat twice either (without replace_existing). */
    assert_int_equal(
        hold(f, "u1", "res_3", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 1, (const uint32_t[]){0}, &detail);
    assert_consistent(f, T0 + 3);
}

static void test_hold_pool_not_found(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}, {"NOPE", 1}), -1,
                          false, T0, NULL, &detail),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(detail.pool, 1);
    assert_no_mutation(f);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    /* Pools on an event without pools. */
    assert_int_equal(
        hold_on(f, "open", "u1", "res_2", NO_SEATS, POOLS({"GA", 1}), -1, false, T0, NULL, &detail),
        HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(detail.pool, 0);
}

static void test_hold_insufficient_quantity(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 6}), -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_2", NO_SEATS, POOLS({"GA", 5}), -1, false, T0, NULL, &detail),
        HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 4);
    assert_int_equal(hold(f, "u2", "res_3", SEATS("FLOOR-A-1"), POOLS({"VIP", 1}, {"GA", 5}), -1,
                          false, T0, NULL, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 1);
    assert_int_equal(detail.available, 4);
    assert_int_equal(
        hold(f, "u2", "res_4", NO_SEATS, POOLS({"VIP", 3}), -1, false, T0, NULL, &detail),
        HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 2);
    assert_int_equal(pool(f, "GA")->held, 6);
    assert_int_equal(pool(f, "VIP")->held, 0);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    /* Sold units count too; exactly the rest is fine. */
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hold(f, "u2", "res_5", NO_SEATS, POOLS({"GA", 5}), -1, false, T0 + 2, NULL, &detail),
        HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.available, 4);
    assert_no_mutation(f);
    assert_int_equal(
        hold(f, "u2", "res_6", NO_SEATS, POOLS({"GA", 4}), -1, false, T0 + 2, NULL, &detail),
        HF_OK);
    assert_int_equal(pool(f, "GA")->held, 4);
    assert_int_equal(pool(f, "GA")->sold, 6);
    assert_consistent(f, T0 + 2);
}

static void test_hold_user_limit(void **state) {
    fixture_t *f = *state; /* show: at most 8 per user */
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1",
                          SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-B-1", "FLOOR-B-2"), POOLS({"GA", 1}), -1,
                          false, T0 + 2, NULL, &detail),
                     HF_OK); /* 5 bought + 3 = 8 */
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hold(f, "u1", "res_3", SEATS("FLOOR-B-3"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(
        hold(f, "u1", "res_4", NO_SEATS, POOLS({"GA", 1}), -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-B-3")->status, HF_SEAT_AVAILABLE);
    /* Another user, another event: not affected. */
    assert_int_equal(
        hold(f, "u2", "res_5", SEATS("FLOOR-B-3"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_6", SEATS("S-A-1"), NO_POOLS, -1, false, T0 + 3,
                             NULL, &detail),
                     HF_OK);
    /* Released and expired holds and cancelled orders stop counting. */
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 4), HF_OK);
    assert_int_equal(hold(f, "u1", "res_7", SEATS("FLOOR-B-4", "FLOOR-B-5", "FLOOR-B-6"), NO_POOLS,
                          1000, false, T0 + 5, NULL, &detail),
                     HF_OK); /* 5 + 3 = 8 */
    assert_int_equal(
        hold(f, "u1", "res_8", SEATS("FLOOR-B-7"), NO_POOLS, -1, false, T0 + 6, NULL, &detail),
        HF_ERROR_USER_LIMIT_EXCEEDED);
    hf_core_advance(f->core, T0 + 5 + 1000); /* the request's advance: res_7 lapses */
    assert_int_equal(hold(f, "u1", "res_9", SEATS("FLOOR-B-7", "FLOOR-B-8", "FLOOR-B-9"), NO_POOLS,
                          -1, false, T0 + 5 + 1000, NULL, &detail),
                     HF_OK); /* res_7 lapsed at T0 + 1005 */
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1422", T0 + 1006), HF_OK);
    assert_int_equal(hold(f, "u1", "res_10",
                          SEATS("BALC-A-1", "BALC-A-2", "BALC-A-3", "BALC-A-4", "BALC-A-5"),
                          NO_POOLS, -1, false, T0 + 1007, NULL, &detail),
                     HF_OK); /* 3 + 5 = 8 */
    /* A single request above the limit. */
    assert_int_equal(hold(f, "u9", "res_11",
                          SEATS("BALC-A-11", "BALC-A-12", "BALC-A-13", "BALC-A-14", "BALC-A-15",
                                "BALC-A-16", "BALC-A-17", "BALC-A-18", "BALC-A-19"),
                          NO_POOLS, -1, false, T0 + 1007, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_consistent(f, T0 + 1007);
}

static void expect_hold_invalid(fixture_t *f, const char *event_id, const char *user,
                                const char *const *seats, uint32_t seat_count,
                                const hf_pool_request_t *pools, uint32_t pool_count, int64_t ttl_ms,
                                const char *field1, const char *field2) {
    hf_error_detail_t detail;
    fx_sink_reset(&f->sink);
    hf_error_t error = hold_on(f, event_id, user, "res_bad", seats, seat_count, pools, pool_count,
                               ttl_ms, false, T0, NULL, &detail);
    if (error != HF_ERROR_INVALID_REQUEST)
        fail_msg("expected invalid_request (%s), got %s", field1, fx_error_code(error));
    if (detail.field == NULL) fail_msg("no detail.field, expected %s", field1);
    if (strcmp(detail.field, field1) != 0 && (field2 == NULL || strcmp(detail.field, field2) != 0))
        fail_msg("field \"%s\", expected \"%s\"%s%s", detail.field, field1, field2 ? " or " : "",
                 field2 ? field2 : "");
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_bad", NULL));
}

typedef struct hashed_id {
    uint32_t hash, number;
} hashed_id_t;

static int compare_hashed_ids(const void *a, const void *b) {
    const hashed_id_t *left = a, *right = b;
    if (left->hash != right->hash) return left->hash < right->hash ? -1 : 1;
    return (left->number > right->number) - (left->number < right->number);
}

/* Two different ids made by format (one %08x in it, so both have one length) whose hashes
 * collide (a birthday search over 2^18 ids finds some 8 such pairs): only then does a lookup
 * in an index of hashes compare the ids themselves. */
static void colliding_ids(const char *format, char first[48], char second[48]) {
    const uint32_t count = 1u << 18;
    hashed_id_t *ids = malloc(count * sizeof *ids);
    assert_non_null(ids);
    char id[48];
    for (uint32_t i = 0; i < count; i++) {
        int length = snprintf(id, sizeof id, format, i);
        ids[i] = (hashed_id_t){hf_map_hash(id, (size_t)length), i};
    }
    qsort(ids, count, sizeof *ids, compare_hashed_ids);
    uint32_t i = 1;
    while (i < count && ids[i].hash != ids[i - 1].hash) i++;
    assert_true(i < count);
    snprintf(first, 48, format, ids[i - 1].number);
    snprintf(second, 48, format, ids[i].number);
    free(ids);
}

/* Users whose ids share their first 16 bytes (what a user's record keeps of the id) and
 * their hash are still different users: each has its own per-user limit, and only the owner
 * may release. */
static void test_user_ids_sharing_a_prefix(void **state) {
    fixture_t *f = *state; /* show: at most 8 per user */
    char first[48], second[48];
    colliding_ids("customer-0000000000000000-%08x", first, second);
    const char *longer = "customer-0000000000000000-000000000";
    const char *shorter = "customer-0000000";
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, first, "res_1",
                          SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_OK);
    const char *others[] = {second, longer, shorter};
    const char *hold_ids[] = {"res_2", "res_3", "res_4"};
    for (int i = 0; i < 3; i++) {
        char seat_ids[5][16];
        const char *seats[5];
        for (int s = 0; s < 5; s++) {
            snprintf(seat_ids[s], sizeof seat_ids[s], "FLOOR-%c-%d", i == 0 ? 'B' : 'A',
                     6 + 5 * i + s);
            seats[s] = seat_ids[s];
        }
        /* 5 + 5 would pass a user's limit of 8 if the ids were taken for one user. */
        assert_int_equal(
            hold(f, others[i], hold_ids[i], seats, 5, NO_POOLS, -1, false, T0 + 1, &index, &detail),
            HF_OK);
        assert_string_equal(hf_core_user_id(f->core, hf_core_hold_at(f->core, index)->user),
                            others[i]);
        assert_int_equal(hf_core_release(f->core, "res_1", others[i], T0 + 2), HF_ERROR_NOT_OWNER);
    }
    assert_int_equal(hold(f, first, "res_5",
                          SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3", "FLOOR-B-4"), NO_POOLS, -1,
                          false, T0 + 3, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(hf_core_release(f->core, "res_1", first, T0 + 4), HF_OK);
    assert_null(hf_core_check(f->core, T0 + 4));
}

/* Orders whose ids collide in the id index are still two orders, each found by its own id;
 * the same for holds. */
static void test_order_and_hold_ids_colliding(void **state) {
    fixture_t *f = *state;
    char first_hold[48], second_hold[48], first_order[48], second_order[48];
    colliding_ids("res_00000000000000000000%08x", first_hold, second_hold);
    colliding_ids("ord_00000000000000000000%08x", first_order, second_order);
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", first_hold, SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, &detail),
        HF_OK);
    assert_null(hf_core_hold_find(f->core, second_hold, NULL));
    assert_int_equal(
        hold(f, "u2", second_hold, SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, &detail),
        HF_OK);
    uint32_t first = commit(f, first_hold, "u1", first_order, T0 + 1);
    assert_null(hf_core_order_find(f->core, second_order, NULL));
    uint32_t second = commit(f, second_hold, "u2", second_order, T0 + 1);
    assert_int_not_equal(first, second);
    uint32_t found;
    assert_non_null(hf_core_order_find(f->core, first_order, &found));
    assert_int_equal(found, first);
    assert_non_null(hf_core_order_find(f->core, second_order, &found));
    assert_int_equal(found, second);
    assert_int_equal(hf_core_cancel(f->core, second_order, "u1", "ref_1554", T0 + 2),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_cancel(f->core, second_order, "u2", "ref_1555", T0 + 2), HF_OK);
    assert_int_equal(hf_core_order_at(f->core, first)->status, HF_ORDER_CONFIRMED);
    assert_null(hf_core_check(f->core, T0 + 2));
}

static void test_hold_invalid_request(void **state) {
    fixture_t *f = *state;
    expect_hold_invalid(f, "show", "u1", NO_SEATS, NO_POOLS, -1, "seats", "pools");
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-1"), NO_POOLS, -1,
                        "seats", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}, {"GA", 2}), -1,
                        "pools", NULL);
    expect_hold_invalid(f, "open", "u1",
                        SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7",
                              "S-A-8", "S-A-9", "S-A-10", "S-A-11"),
                        NO_POOLS, -1, "seats", "pools");
    /* Pool units count one each: 9 seats + 2 units = 11 > 10. */
    expect_hold_invalid(
        f, "open", "u1",
        SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7", "S-A-8", "S-A-9"),
        POOLS({"P", 2}), -1, "pools", "seats");
    expect_hold_invalid(f, "open", "u1", NO_SEATS, POOLS({"P", 11}), -1, "pools", "seats");
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), NO_POOLS, 0, "ttl_s", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), NO_POOLS, MAX_HOLD + 1, "ttl_s", NULL);
    expect_hold_invalid(f, "show", "", SEATS("FLOOR-A-1"), NO_POOLS, -1, "user_id", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), POOLS({"GA", 0}), -1, "pools", NULL);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 1);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    /* Exactly max_seats_per_hold items is fine. */
    hf_error_detail_t detail;
    assert_int_equal(
        hold_on(f, "open", "u1", "res_ok",
                SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7", "S-A-8"),
                POOLS({"P", 2}), -1, false, T0, NULL, &detail),
        HF_OK);
    assert_consistent(f, T0);
}

/* A user's held holds on an event form a list that holds leave from anywhere (the middle, the
 * front, the back): replace_existing then releases exactly the ones still held, newest first. */
static void test_hold_replace_after_releases(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h[5];
    const char *ids[5] = {"res_a", "res_b", "res_c", "res_d", "res_e"};
    const char *seats[5] = {"FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(
            hold(f, "u1", ids[i], SEATS(seats[i]), NO_POOLS, -1, false, T0, &h[i], &detail), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_c", "u1", T0 + 1), HF_OK); /* middle */
    assert_int_equal(hf_core_release(f->core, "res_a", "u1", T0 + 1), HF_OK); /* front */
    assert_int_equal(hf_core_release(f->core, "res_e", "u1", T0 + 1), HF_OK); /* back */
    uint32_t last;
    assert_int_equal(
        hold(f, "u1", "res_f", SEATS("FLOOR-A-6"), NO_POOLS, -1, false, T0 + 2, &last, &detail),
        HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_g", SEATS("FLOOR-A-4", "FLOOR-A-7"), NO_POOLS, -1, true,
                          T0 + 3, NULL, &detail),
                     HF_OK);
    const char *released[3] = {"res_f", "res_d", "res_b"};
    size_t seen = 0;
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *record = &f->sink.records[i];
        if (record->type != HF_MUTATION_HOLD_UPDATE) continue;
        assert_true(seen < 3);
        assert_string_equal(record->hold_id, released[seen]);
        assert_int_equal(record->status, HF_HOLD_RELEASED);
        seen++;
    }
    assert_int_equal(seen, 3);
    assert_int_equal(hf_core_hold_at(f->core, h[1])->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h[3])->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, last)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_holds_active(f->core), 1);
    assert_null(hf_core_check(f->core, T0 + 3));
}

static void test_hold_replace_existing(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h1, h2, h3, h4, h5;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0, &h1, &detail),
                     HF_OK);
    assert_int_equal(
        hold(f, "u1", "res_2", NO_SEATS, POOLS({"GA", 2}), -1, false, T0, &h2, &detail), HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0, &h3, &detail), HF_OK);
    assert_int_equal(
        hold_on(f, "open", "u1", "res_4", SEATS("S-A-1"), NO_POOLS, -1, false, T0, &h4, &detail),
        HF_OK);
    /* A failing replace changes nothing. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_x", SEATS("FLOOR-A-2", "FLOOR-A-3"), NO_POOLS, -1, true,
                          T0 + 1, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 1, (const uint32_t[]){1}, &detail); /* only u2's seat */
    assert_no_mutation(f);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_hold_at(f->core, h2)->status, HF_HOLD_HELD);

    /* u1 holds 2 seats + 2 units: 8 more would pass the limit, but they are replaced. */
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hold(f, "u1", "res_5",
             SEATS("FLOOR-A-2", "FLOOR-A-5", "FLOOR-A-6", "FLOOR-A-7", "FLOOR-A-8", "FLOOR-A-9"),
             POOLS({"GA", 2}), -1, true, T0 + 2, &h5, &detail),
        HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h2)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h3)->status, HF_HOLD_HELD); /* another user */
    assert_int_equal(hf_core_hold_at(f->core, h4)->status, HF_HOLD_HELD); /* another event */
    assert_int_equal(hf_core_hold_at(f->core, h5)->status, HF_HOLD_HELD);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_HELD);
    assert_int_equal(seat(f, "FLOOR-A-2")->owner, h5 + 1);
    /* Released then held again: two status changes, or one move without a change. */
    uint32_t version = seat(f, "FLOOR-A-2")->version;
    if (version != 4 && version != 2) fail_msg("FLOOR-A-2 version %u after replace", version);
    assert_int_equal(seat(f, "FLOOR-A-5")->version, 2);
    assert_int_equal(pool(f, "GA")->held, 2);
    assert_counts(event_of(f, "show")->counts, 93, 7, 0);
    assert_int_equal(hf_core_holds_active(f->core), 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], version == 4 ? 8 : 6);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "FLOOR-A-2", HF_SEAT_HELD, version);
    assert_seat_record(f, "FLOOR-A-9", HF_SEAT_HELD, 2);
    /* replace_existing with nothing to replace is a plain hold. */
    assert_int_equal(
        hold(f, "u7", "res_6", SEATS("BALC-A-1"), NO_POOLS, -1, true, T0 + 3, NULL, &detail),
        HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h5)->status, HF_HOLD_HELD);
    assert_consistent(f, T0 + 3);
}

/* ---- expiry ---- */

static void test_expiry_advance(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "BALC-A-1"), POOLS({"GA", 2}), 1000,
                          false, T0, &index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_advance(f->core, T0 + 999), 0);
    assert_no_mutation(f);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 1000);
    assert_int_equal(hf_core_advance(f->core, T0 + 1000), 1);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->status, HF_HOLD_EXPIRED);
    assert_int_equal(h->expires_at_ms, T0 + 1000);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "BALC-A-1")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_counts(event_of(f, "show")->sections[0].counts, 60, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 4);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_EXPIRED);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "BALC-A-1", HF_SEAT_AVAILABLE, 3);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_advance(f->core, T0 + 5000), 0);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 5000);
}

static void test_expiry_on_command(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h1, h2;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), 1000, false, T0,
                          &h1, &detail),
                     HF_OK);
    /* At expires_at exactly, with no sweep before: the request's advance (the engine makes one
     * before each request's command) frees the seat and the units at once. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), -1, false,
                          T0 + 1000, &h2, &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, h2 + 1);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_int_equal(pool(f, "VIP")->held, 2);
    assert_counts(event_of(f, "show")->counts, 99, 1, 0);
    assert_consistent(f, T0 + 1000);
    /* A failing command's request expires too. */
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, 500, false, T0 + 1000, NULL, &detail),
        HF_OK);
    fx_sink_reset(&f->sink);
    hf_core_advance(f->core, T0 + 1500);
    assert_int_equal(hf_core_cancel(f->core, "ord_none", "u3", "ref_1767", T0 + 1500),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hold_by_id(f, "res_3")->status, HF_HOLD_EXPIRED);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_consistent(f, T0 + 1500);
}

static void test_next_expiry(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 5000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, 3000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 4000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 3000);
    assert_int_equal(hf_core_release(f->core, "res_2", "u2", T0 + 1), HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 4000);
    commit(f, "res_3", "u3", "ord_3", T0 + 2);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 5000);
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 10000, T0 + 3, &capped), HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 10003);
    assert_int_equal(hf_core_advance(f->core, T0 + 10003), 1);
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
}

/* ---- extend ---- */

static void test_extend_ok(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    bool capped = true;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, &index, &detail),
        HF_OK);
    fx_sink_reset(&f->sink);
    /* Shorter than what is left: never earlier. */
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 300000, T0 + 100000, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + TTL);
    /* Longer. */
    capped = true;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000000, T0 + 100000, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1100000);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_non_null(record);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->expires_at_ms, T0 + 1100000);
    assert_int_equal(record->status, HF_HOLD_HELD);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */
    /* Any positive ttl is accepted, the cap applies. */
    capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 100 * MAX_HOLD, T0 + 1000000, &capped),
                     HF_OK);
    assert_true(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + MAX_HOLD);
    /* Exactly at the cap is not cut. */
    const hf_time_ms_t t1 = T0 + 1000000;
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, t1, &index, &detail),
        HF_OK);
    capped = true;
    assert_int_equal(hf_core_extend(f->core, "res_2", "u1", MAX_HOLD - 5000, t1 + 5000, &capped),
                     HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, t1 + MAX_HOLD);
    /* Default ttl: the event's hold_ttl. */
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 1000, false, t1 + 5000,
                          &index, &detail),
                     HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_3", "u1", -1, t1 + 5500, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, t1 + 5500 + TTL);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_HELD);
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 2);
    assert_consistent(f, t1 + 5500);
    assert_int_equal(next_expiry, T0 + 1100000);
}

static void test_extend_errors(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    bool capped;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(
        hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 1), HF_OK);
    commit(f, "res_3", "u1", "ord_3", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_extend(f->core, "res_none", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u2", 1000, T0 + 2, &capped),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_extend(f->core, "res_1", "ghost", 1000, T0 + 2, &capped),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_extend(f->core, "res_2", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_ACTIVE);
    assert_int_equal(hf_core_extend(f->core, "res_3", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_ACTIVE);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_1")->expires_at_ms, T0 + 1000);
    /* At expires_at exactly, before any sweep: the request's advance expires it. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000, T0 + 1000, &capped),
                     HF_ERROR_HOLD_EXPIRED);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(hold_by_id(f, "res_1")->expires_at_ms, T0 + 1000);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000, T0 + 1001, &capped),
                     HF_ERROR_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 1001);
}

/* ---- release ---- */

static void test_release_ok(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-B-2"), POOLS({"GA", 3}), -1,
                          false, T0, &index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 10), HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->status, HF_HOLD_RELEASED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "FLOOR-B-2")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 4);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_RELEASED);
    assert_int_equal(record->at_ms, T0 + 10);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "FLOOR-B-2", HF_SEAT_AVAILABLE, 3);
    /* Repeating answers the same and changes nothing. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 20), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_RELEASED);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    /* Its seats can be held again. */
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"GA", 3}), -1, false,
                          T0 + 30, NULL, &detail),
                     HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_consistent(f, T0 + 30);
    assert_int_equal(next_expiry, INT64_MAX);
}

static void test_release_expired(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, &index, &detail),
        HF_OK);
    hf_core_advance(f->core, T0 + 1000); /* the request's advance */
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 1000), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 2000), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 2000);
}

static void test_release_errors(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    commit(f, "res_2", "u1", "ord_2", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_none", "u1", T0 + 2), HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_release(f->core, "res_1", "u2", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_1", "nobody", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 2), HF_ERROR_ALREADY_CONFIRMED);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_HELD);
    assert_int_equal(hold_by_id(f, "res_2")->status, HF_HOLD_CONFIRMED);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_SOLD);
    assert_consistent(f, T0 + 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hold_invalid_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_limit_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seats_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_pools_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_event_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seat_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seats_unavailable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_pool_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_insufficient_quantity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_user_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_ids_sharing_a_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_and_hold_ids_colliding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_invalid_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_replace_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_replace_after_releases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_advance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_on_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extend_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extend_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_errors, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_holds", tests, NULL, NULL);
}
