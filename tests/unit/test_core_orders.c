/* Unit tests of the core (src/core/core.h), order.c and user.c: commit, cancel and a user's orders. Each asserts the resulting values and the
 * mutation records emitted (an error emits none); the fixture is core_cases.h. */
#include "core_cases.h"

/* ---- commit ---- */

static void test_commit_ok(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t hold_index, order_index = UINT32_MAX;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "BALC-A-2"), POOLS({"GA", 2}), -1,
                          false, T0, &hold_index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi_123", T0 + 100, &order_index), HF_OK);
    const hf_order_t *order = hf_core_order_at(f->core, order_index);
    assert_non_null(order);
    uint32_t found = UINT32_MAX;
    assert_ptr_equal(hf_core_order_find(f->core, "ord_1", &found), order);
    assert_int_equal(found, order_index);
    assert_string_equal(order->id, "ord_1");
    assert_string_equal(hf_core_event_at(f->core, order->event)->id, "show");
    assert_string_equal(hf_core_user_id(f->core, order->user), "u1");
    assert_int_equal(order->hold, hold_index + 1);
    assert_int_equal(order->status, HF_ORDER_CONFIRMED);
    assert_int_equal(order->created_at_ms, T0 + 100);
    int64_t total = FLOOR_PRICE + BALC_PRICE + 2 * GA_PRICE;
    assert_int_equal(order->total, total);
    assert_string_equal(hf_core_string(f->core, order->payment_ref), "pi_123");
    assert_int_equal(order->seat_count, 2);
    assert_int_equal(order->pool_count, 1);
    const hf_item_t *items = hf_core_items(f->core, order->item_offset);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[1].quantity, 0);
    assert_int_equal(items[0].index + items[1].index, 0 + 61);
    assert_int_equal(items[2].index, 0);
    assert_int_equal(items[2].quantity, 2);

    const hf_hold_t *h = hf_core_hold_at(f->core, hold_index);
    assert_int_equal(h->status, HF_HOLD_CONFIRMED);
    assert_int_equal(h->order, order_index + 1);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, order_index + 1);
    assert_int_equal(seat(f, "BALC-A-2")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "BALC-A-2")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(pool(f, "GA")->sold, 2);
    assert_counts(event_of(f, "show")->counts, 98, 0, 2);
    assert_counts(event_of(f, "show")->sections[0].counts, 59, 0, 1);
    assert_counts(event_of(f, "show")->sections[1].counts, 39, 0, 1);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */

    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_ITEM], 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 8);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_CONFIRMED);
    assert_string_equal(record->order_id, "ord_1");
    record = fx_sink_first(&f->sink, HF_MUTATION_ORDER_CREATE);
    assert_string_equal(record->order_id, "ord_1");
    assert_string_equal(record->hold_id, "res_1");
    assert_string_equal(record->event_id, "show");
    assert_string_equal(record->user_id, "u1");
    assert_int_equal(record->total, total);
    assert_int_equal(record->at_ms, T0 + 100);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_SOLD, 3);
    assert_seat_record(f, "BALC-A-2", HF_SEAT_SOLD, 3);
    bool ga_item = false;
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *r = &f->sink.records[i];
        if (r->type != HF_MUTATION_ORDER_ITEM) continue;
        assert_string_equal(r->order_id, "ord_1");
        if (strcmp(r->pool_id, "GA") == 0) {
            ga_item = true;
            assert_int_equal(r->quantity, 2);
        } else {
            assert_true(strcmp(r->seat_id, "FLOOR-A-1") == 0 ||
                        strcmp(r->seat_id, "BALC-A-2") == 0);
        }
    }
    assert_true(ga_item);

    uint32_t count = 0;
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], order_index);
    assert_consistent(f, T0 + 100);
    assert_int_equal(next_expiry, INT64_MAX);
}

static void test_commit_repeat(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL, &detail),
        HF_OK);
    uint32_t first = commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    uint32_t again = UINT32_MAX;
    /* Even after the hold's expires_at: it is confirmed, not expired. The same payment, or
     * none, answers the order. */
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "pi_1", T0 + 5000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", NULL, T0 + 5000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "", T0 + 5000, &again), HF_OK);
    assert_int_equal(again, first);
    /* Another payment is never absorbed: refused, naming the order it would have joined. */
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "pi_other", T0 + 5000, &again),
                     HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(again, first);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_2", NULL));
    assert_string_equal(hf_core_string(f->core, hf_core_order_at(f->core, first)->payment_ref),
                        "pi_1");
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_CONFIRMED);
    /* And after the order's cancellation: the hold still answers its order. */
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2118", T0 + 6000), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_3", "pi_1", T0 + 7000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_3", "pi_x", T0 + 7000, &again),
                     HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(again, first);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_3", NULL));
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + 7000);
}

static void test_commit_errors(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 1), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_none", "u1", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u2", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_commit(f->core, "res_2", "u1", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_HOLD_RELEASED);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_1", NULL));
    /* now == expires_at, no sweep has run yet but the request's advance. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi", T0 + 1000, &order),
                     HF_ERROR_HOLD_EXPIRED);
    assert_null(hf_core_order_find(f->core, "ord_1", NULL));
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_CREATE], 0);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi", T0 + 1001, &order),
                     HF_ERROR_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_consistent(f, T0 + 1001);
}

/* ---- cancel ---- */

static void test_cancel_ok(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"VIP", 2}), -1,
                          false, T0, NULL, &detail),
                     HF_OK);
    uint32_t order = commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2179", T0 + 2), HF_OK);
    assert_int_equal(hf_core_order_at(f->core, order)->status, HF_ORDER_CANCELLED);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_CONFIRMED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "FLOOR-A-2")->version, 4);
    assert_int_equal(pool(f, "VIP")->sold, 0);
    assert_int_equal(pool(f, "VIP")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    /* The order was paid (commit gives it a payment_ref): its refund is owed in the same step. */
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1);
    assert_int_equal(f->sink.total, 5);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_ORDER_UPDATE);
    assert_string_equal(record->order_id, "ord_1");
    assert_int_equal(record->status, HF_ORDER_CANCELLED);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 4);
    /* Repeat: the same, nothing changes. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2199", T0 + 3), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_order_at(f->core, order)->status, HF_ORDER_CANCELLED);
    /* Seats and units are free again. */
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), -1, false,
                          T0 + 4, NULL, &detail),
                     HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 5);
    uint32_t count = 0;
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 1); /* cancelled ones stay listed */
    assert_consistent(f, T0 + 4);
}

static void test_cancel_errors(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_none", "u1", "ref_2223", T0 + 2),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hf_core_cancel(f->core, "res_1", "u1", "ref_2224", T0 + 2),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_2225", T0 + 2),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "ghost", "ref_2226", T0 + 2),
                     HF_ERROR_NOT_OWNER);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(hf_core_order_find(f->core, "ord_1", NULL)->status, HF_ORDER_CONFIRMED);
}

/* ---- lookups ---- */

static void test_user_orders(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t count = 99;
    assert_null(hf_core_user_orders(f->core, "nobody", &count));
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_int_equal(
        hold_on(f, "open", "u1", "res_2", SEATS("S-A-1"), NO_POOLS, -1, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    uint32_t o2 = commit(f, "res_2", "u1", "ord_2", T0 + 1);
    /* One order is kept apart from the array later orders go to: both read the same. */
    const uint32_t *first = hf_core_user_orders(f->core, "u1", &count);
    assert_int_equal(count, 1);
    assert_int_equal(first[0], o2);
    uint32_t o3 = commit(f, "res_3", "u2", "ord_3", T0 + 2);
    uint32_t o1 = commit(f, "res_1", "u1", "ord_1", T0 + 3);
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 2);
    assert_int_equal(orders[0], o2);
    assert_int_equal(orders[1], o1);
    orders = hf_core_user_orders(f->core, "u2", &count);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], o3);
    assert_null(hf_core_order_find(f->core, "ord_none", NULL));
    assert_null(hf_core_hold_find(f->core, "res_none", NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_repeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_orders, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_orders", tests, NULL, NULL);
}
