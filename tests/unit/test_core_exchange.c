/* Unit tests of exchange holds in the core (core/exchange/, API.md section 13): a seat kept and
 * another swapped in one event, across events, pools, a calendar stay moved by a night in a
 * full hotel, the differences (negative, positive, zero), the first of two commits winning, the
 * old order cancelled meanwhile, a release leaving the old order as it was, the user limit, the
 * rebooking offer of a cancel job and the restore of a held exchange hold. Every case checks the
 * core's invariants (hf_core_check) after each step; the fixture is core_cases.h's. */
#include "core_cases.h"
#include "core/internal.h" /* exchange_offer_place, the cancel job's entry */

/* An exchange hold on event_id of the given seats and pools, for old_order. */
static hf_error_t exchange_on(fixture_t *f, const char *event_id, const char *user,
                              const char *hold_id, const char *old_order, const char *const *seats,
                              uint32_t seat_count, const hf_pool_request_t *pools,
                              uint32_t pool_count, hf_time_ms_t now, uint32_t *index,
                              hf_error_detail_t *detail) {
    hf_hold_request_t request = {.event_id = event_id,
                                 .user_id = user,
                                 .hold_id = hold_id,
                                 .seat_ids = seats,
                                 .seat_count = seat_count,
                                 .pools = pools,
                                 .pool_count = pool_count,
                                 .ttl_ms = -1,
                                 .exchange_for = old_order};
    hf_error_t error = fx_hold(f->core, &request, now, index, detail);
    assert_consistent(f, now);
    return error;
}

/* A confirmed order of user on "show": a hold of the seats and pools, committed. */
static uint32_t order_of(fixture_t *f, const char *user, const char *hold_id, const char *order_id,
                         const char *const *seats, uint32_t seat_count,
                         const hf_pool_request_t *pools, uint32_t pool_count,
                         const char *payment_ref) {
    uint32_t index;
    assert_int_equal(
        hold(f, user, hold_id, seats, seat_count, pools, pool_count, -1, false, T0, &index, NULL),
        HF_OK);
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, payment_ref, T0, &index),
                     HF_OK);
    return index;
}

static const hf_order_t *order_named(fixture_t *f, const char *order_id) {
    const hf_order_t *order = hf_core_order_find(f->core, order_id, NULL);
    assert_non_null(order);
    return order;
}

static hf_error_t commit_refunding(fixture_t *f, const char *hold_id, const char *user,
                                   const char *order_id, const char *payment_ref,
                                   hf_time_ms_t now) {
    uint32_t index;
    hf_error_t error = hf_core_commit_refunding(f->core, hold_id, user, order_id, payment_ref,
                                                "ref_x", now, &index);
    assert_consistent(f, now);
    return error;
}

/* The old order exchanged for the new one, and the two name each other. */
static void assert_swapped(fixture_t *f, const char *old_id, const char *new_id) {
    const hf_order_t *old = order_named(f, old_id), *new = order_named(f, new_id);
    assert_int_equal(old->status, HF_ORDER_EXCHANGED);
    assert_int_equal(new->status, HF_ORDER_CONFIRMED);
    assert_string_equal(hf_core_order_at(f->core, old->replaced_by - 1)->id, new_id);
    assert_string_equal(hf_core_order_at(f->core, new->replaces - 1)->id, old_id);
}

/* ---- events ---- */

static void test_keep_a_seat_swap_another(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, "pi_old");
    uint32_t index;
    fx_sink_reset(&f->sink);
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old",
                                 SEATS("FLOOR-A-1", "FLOOR-B-7"), NO_POOLS, T0 + 10, &index, NULL),
                     HF_OK);
    const hf_hold_t *held = hf_core_hold_at(f->core, index);
    assert_string_equal(hf_core_order_at(f->core, held->exchange_for - 1)->id, "ord_old");
    const fx_record_t *created = fx_sink_first(&f->sink, HF_MUTATION_HOLD_CREATE);
    assert_non_null(created);
    /* The kept seat is not marked held: it stays sold to the old order. */
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_int_equal(seat(f, "FLOOR-B-7")->status, HF_SEAT_HELD);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_SOLD);
    fx_sink_reset(&f->sink);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", NULL, T0 + 20), HF_OK);
    assert_swapped(f, "ord_old", "ord_new");
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    uint32_t new_index;
    assert_non_null(hf_core_order_find(f->core, "ord_new", &new_index));
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, new_index + 1);
    assert_int_equal(seat(f, "FLOOR-B-7")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    /* The old order's update comes before the new order's rows (the store's unique index). */
    size_t update = SIZE_MAX, create = SIZE_MAX;
    for (size_t i = 0; i < f->sink.count; i++) {
        if (f->sink.records[i].type == HF_MUTATION_ORDER_UPDATE && update == SIZE_MAX) update = i;
        if (f->sink.records[i].type == HF_MUTATION_ORDER_CREATE && create == SIZE_MAX) create = i;
    }
    assert_true(update < create);
    assert_int_equal(hf_core_exchanges(f->core), 1);
    /* Same price, no payment: the new order is paid by the old one's payment. */
    assert_string_equal(hf_core_string(f->core, order_named(f, "ord_new")->payment_ref), "pi_old");
    assert_int_equal(hf_core_refund_count(f->core), 0);
    /* An exchanged order is neither cancelled nor exchanged again. */
    assert_int_equal(hf_core_cancel(f->core, "ord_old", "u1", "ref_c", T0 + 30),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(exchange_on(f, "show", "u1", "res_y", "ord_old", SEATS("FLOOR-A-9"), NO_POOLS,
                                 T0 + 30, NULL, NULL),
                     HF_ERROR_ORDER_NOT_ACTIVE);
}

static void test_the_old_order_is_checked(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"), NO_POOLS, NULL);
    fx_sink_reset(&f->sink);
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_none", SEATS("FLOOR-A-2"), NO_POOLS,
                                 T0, NULL, NULL),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(exchange_on(f, "show", "u2", "res_x", "ord_old", SEATS("FLOOR-A-2"), NO_POOLS,
                                 T0, NULL, NULL),
                     HF_ERROR_NOT_OWNER);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
}

static void test_across_events_and_a_refund(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"), POOLS({"GA", 2}), "pi_old");
    assert_int_equal(
        exchange_on(f, "open", "u1", "res_x", "ord_old", SEATS("S-A-1"), NO_POOLS, T0, NULL, NULL),
        HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    /* 100 against 45000 + 2 x 9900: no refund id, no commit. */
    uint32_t index;
    assert_int_equal(hf_core_commit(f->core, "res_x", "u1", "ord_new", NULL, T0, &index),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CONFIRMED);
    fx_sink_reset(&f->sink);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", NULL, T0), HF_OK);
    assert_swapped(f, "ord_old", "ord_new");
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(pool(f, "GA")->sold, 0);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(hf_core_refund_count(f->core), 1);
    const hf_refund_t *refund = hf_core_refund_at(f->core, 0);
    assert_int_equal(refund->reason, HF_REFUND_EXCHANGE);
    assert_int_equal(refund->amount, FLOOR_PRICE + 2 * GA_PRICE - 100);
    assert_string_equal(refund->payment_intent_id, "pi_old");
    assert_string_equal(refund->reservation_id, "res_x");
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1);
}

static void test_positive_difference_needs_a_payment(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("BALC-A-1"), NO_POOLS, "pi_old");
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old", SEATS("FLOOR-A-1"), NO_POOLS,
                                 T0, NULL, NULL),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", NULL, T0),
                     HF_ERROR_INVALID_REQUEST);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_x")->status, HF_HOLD_HELD);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", "pi_more", T0), HF_OK);
    assert_swapped(f, "ord_old", "ord_new");
    assert_string_equal(hf_core_string(f->core, order_named(f, "ord_new")->payment_ref), "pi_more");
    assert_int_equal(hf_core_refund_count(f->core), 0);
}

static void test_pools_keep_the_old_units(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", NO_SEATS, POOLS({"VIP", 2}), NULL);
    hf_error_detail_t detail;
    /* The pool is full (2 of 2 sold to the old order), which the exchange may keep. */
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old", SEATS("BALC-A-1"),
                                 POOLS({"VIP", 1}), T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(pool(f, "VIP")->held, 0);
    assert_int_equal(pool(f, "VIP")->sold, 2);
    assert_int_equal(exchange_on(f, "show", "u1", "res_y", "ord_old", NO_SEATS, POOLS({"VIP", 3}),
                                 T0, NULL, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.available, 2);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", "pi", T0), HF_OK);
    assert_int_equal(pool(f, "VIP")->sold, 1);
    assert_int_equal(pool(f, "VIP")->held, 0);
}

static void test_first_commit_wins(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, NULL);
    assert_int_equal(exchange_on(f, "show", "u1", "res_a", "ord_old",
                                 SEATS("FLOOR-A-1", "FLOOR-A-3"), NO_POOLS, T0, NULL, NULL),
                     HF_OK);
    assert_int_equal(exchange_on(f, "show", "u1", "res_b", "ord_old",
                                 SEATS("FLOOR-A-1", "FLOOR-A-4"), NO_POOLS, T0, NULL, NULL),
                     HF_OK);
    assert_int_equal(commit_refunding(f, "res_a", "u1", "ord_a", NULL, T0 + 1), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(commit_refunding(f, "res_b", "u1", "ord_b", NULL, T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_b")->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_release(f->core, "res_b", "u1", T0 + 3), HF_OK);
    assert_consistent(f, T0 + 3);
    assert_int_equal(seat(f, "FLOOR-A-4")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-A-3")->status, HF_SEAT_SOLD);
}

static void test_cancelled_meanwhile_and_release(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"), POOLS({"GA", 1}), NULL);
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old",
                                 SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 2}), T0, NULL, NULL),
                     HF_OK);
    assert_int_equal(pool(f, "GA")->held, 1);
    assert_int_equal(hf_core_cancel(f->core, "ord_old", "u1", "ref_c", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", NULL, T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(
        hold(f, "u2", "res_u2", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 3, NULL, NULL),
        HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_x", "u1", T0 + 4), HF_OK);
    assert_consistent(f, T0 + 4);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_HELD); /* u2's, untouched */
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(pool(f, "GA")->sold, 0);
}

static void test_release_leaves_the_old_order(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 1}), NULL);
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old",
                                 SEATS("FLOOR-A-1", "FLOOR-B-1"), POOLS({"GA", 3}), T0, NULL, NULL),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_x", "u1", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CONFIRMED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-B-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(pool(f, "GA")->sold, 1);
    /* Expiry likewise. */
    assert_int_equal(exchange_on(f, "show", "u1", "res_y", "ord_old",
                                 SEATS("FLOOR-A-2", "FLOOR-B-2"), NO_POOLS, T0 + 2, NULL, NULL),
                     HF_OK);
    hf_core_advance(f->core, T0 + 2 + TTL);
    assert_consistent(f, T0 + 2 + TTL);
    assert_int_equal(hold_by_id(f, "res_y")->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-B-2")->status, HF_SEAT_AVAILABLE);
}

static void test_user_limit(void **state) {
    fixture_t *f = *state; /* "show" allows 8 seats per user */
    order_of(f, "u1", "res_o", "ord_old",
             SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5", "FLOOR-A-6"),
             NO_POOLS, NULL);
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_h", SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3"), NO_POOLS,
                          -1, false, T0, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(exchange_on(f, "show", "u1", "res_x", "ord_old",
                                 SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3", "FLOOR-B-4",
                                       "FLOOR-B-5", "FLOOR-B-6", "FLOOR-B-7", "FLOOR-B-8"),
                                 NO_POOLS, T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(exchange_on(f, "show", "u1", "res_y", "ord_old", SEATS("FLOOR-A-1"), NO_POOLS,
                                 T0, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(detail.current, 8);
}

/* ---- the rebooking offer of a cancel job ---- */

static void test_offer_place(void **state) {
    fixture_t *f = *state;
    uint32_t old = order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"), POOLS({"GA", 2}),
                            "pi_old");
    const hf_event_t *open = event_of(f, "open");
    uint32_t open_index, seat_index;
    assert_non_null(hf_core_event(f->core, "open", &open_index));
    assert_true(hf_core_seat_find(open, "S-B-3", &seat_index));
    hf_item_t units = {(uint32_t)hf_core_pool_find(open, "P"), 2};
    fx_sink_reset(&f->sink);
    char id[] = "res_offer";
    text_key_t key = text_key_of(id, strlen(id));
    exchange_offer_t offer = {.order_index = old,
                              .event_index = open_index,
                              .seats = &seat_index,
                              .seat_count = 1,
                              .pools = &units,
                              .pool_count = 1,
                              .total = order_named(f, "ord_old")->total,
                              .expires_at_ms = T0 + 86400000,
                              .hold_id = &key};
    uint32_t index = exchange_offer_place(f->core, &offer, T0 + 5);
    assert_consistent(f, T0 + 5);
    const hf_hold_t *placed = hf_core_hold_at(f->core, index);
    assert_string_equal(placed->id, "res_offer");
    assert_int_equal(placed->status, HF_HOLD_HELD);
    assert_int_equal(placed->exchange_for, old + 1);
    assert_int_equal(placed->total - order_named(f, "ord_old")->total, 0);
    assert_int_equal(seat_on(f, "open", "S-B-3")->status, HF_SEAT_HELD);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    /* Accepted by its commit: no payment, no refund; the old payment carries over. */
    assert_int_equal(commit_refunding(f, "res_offer", "u1", "ord_new", NULL, T0 + 6), HF_OK);
    assert_swapped(f, "ord_old", "ord_new");
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(hf_core_refund_count(f->core), 0);
}

/* ---- restore ---- */

static void test_restore_a_held_exchange(void **state) {
    fixture_t *f = *state;
    /* Holds load before orders: the held exchange hold waits for its old order to know what
     * it keeps. */
    const char *old_seats[] = {"FLOOR-A-1", "FLOOR-A-2"};
    const char *new_seats[] = {"FLOOR-A-1", "FLOOR-B-1"};
    hf_pool_request_t units[] = {{"GA", 3}};
    hf_stored_hold_t old_hold = {.request = {.event_id = "show",
                                             .user_id = "u1",
                                             .hold_id = "res_o",
                                             .seat_ids = old_seats,
                                             .seat_count = 2},
                                 .status = HF_HOLD_CONFIRMED,
                                 .created_at_ms = T0,
                                 .expires_at_ms = T0 + TTL,
                                 .total = 2 * FLOOR_PRICE};
    hf_stored_hold_t exchange_hold = {.request = {.event_id = "show",
                                                  .user_id = "u1",
                                                  .hold_id = "res_x",
                                                  .seat_ids = new_seats,
                                                  .seat_count = 2,
                                                  .pools = units,
                                                  .pool_count = 1,
                                                  .exchange_for = "ord_old"},
                                      .status = HF_HOLD_HELD,
                                      .created_at_ms = T0 + 1,
                                      .expires_at_ms = T0 + TTL,
                                      .total = 2 * FLOOR_PRICE + 3 * GA_PRICE};
    hf_pool_request_t old_units[] = {{"GA", 2}};
    hf_stored_order_t old_order = {.order_id = "ord_old",
                                   .hold_id = "res_o",
                                   .items = {.event_id = "show",
                                             .user_id = "u1",
                                             .seat_ids = old_seats,
                                             .seat_count = 2,
                                             .pools = old_units,
                                             .pool_count = 1},
                                   .status = HF_ORDER_CONFIRMED,
                                   .created_at_ms = T0,
                                   .total = 2 * FLOOR_PRICE + 2 * GA_PRICE};
    old_hold.request.pools = old_units;
    old_hold.request.pool_count = 1;
    assert_int_equal(hf_core_restore_hold(f->core, &old_hold), HF_OK);
    assert_int_equal(hf_core_restore_hold(f->core, &exchange_hold), HF_OK);
    assert_int_equal(hf_core_restore_order(f->core, &old_order), HF_OK);
    hf_core_restore_finish(f->core);
    assert_consistent(f, T0 + 2);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-B-1")->status, HF_SEAT_HELD);
    assert_int_equal(pool(f, "GA")->held, 1);
    assert_int_equal(pool(f, "GA")->sold, 2);
    hf_core_advance(f->core, T0 + 2);
    assert_int_equal(commit_refunding(f, "res_x", "u1", "ord_new", "pi", T0 + 2), HF_OK);
    assert_swapped(f, "ord_old", "ord_new");
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(pool(f, "GA")->sold, 3);
}

/* Versions are counted again at a restore: an exchange hold changed none of the seats it
 * kept, committed or not, forgotten or not; the exchange's commit changed every seat of the
 * old order once. The orders come last, as a load hands them. */
static void test_restore_counts_versions_of_kept_seats(void **state) {
    fixture_t *f = *state;
    const char *old_seats[] = {"FLOOR-A-1", "FLOOR-A-2"};
    const char *new_seats[] = {"FLOOR-A-1", "FLOOR-B-1"};
    const char *let_go_seats[] = {"FLOOR-A-1", "FLOOR-B-2"};
    hf_stored_hold_t old_hold = {.request = {.event_id = "show",
                                             .user_id = "u1",
                                             .hold_id = "res_o",
                                             .seat_ids = old_seats,
                                             .seat_count = 2},
                                 .status = HF_HOLD_CONFIRMED,
                                 .created_at_ms = T0,
                                 .expires_at_ms = T0 + TTL,
                                 .total = 2 * FLOOR_PRICE};
    hf_stored_hold_t swapped = {.request = {.event_id = "show",
                                            .user_id = "u1",
                                            .hold_id = "res_x",
                                            .seat_ids = new_seats,
                                            .seat_count = 2,
                                            .exchange_for = "ord_old"},
                                .status = HF_HOLD_CONFIRMED,
                                .created_at_ms = T0 + 1,
                                .expires_at_ms = T0 + TTL,
                                .total = 2 * FLOOR_PRICE};
    hf_stored_hold_t let_go = {.request = {.event_id = "show",
                                           .user_id = "u1",
                                           .hold_id = "res_l",
                                           .seat_ids = let_go_seats,
                                           .seat_count = 2,
                                           .exchange_for = "ord_new"},
                               .status = HF_HOLD_RELEASED,
                               .created_at_ms = T0 + 2,
                               .expires_at_ms = T0 + TTL,
                               .total = 2 * FLOOR_PRICE};
    hf_stored_order_t old_order = {
        .order_id = "ord_old",
        .hold_id = "res_o",
        .items = {.event_id = "show", .user_id = "u1", .seat_ids = old_seats, .seat_count = 2},
        .status = HF_ORDER_EXCHANGED,
        .created_at_ms = T0,
        .total = 2 * FLOOR_PRICE,
        .replaced_by = "ord_new"};
    hf_stored_order_t new_order = {
        .order_id = "ord_new",
        .hold_id = "res_x",
        .items = {.event_id = "show", .user_id = "u1", .seat_ids = new_seats, .seat_count = 2},
        .status = HF_ORDER_CONFIRMED,
        .created_at_ms = T0 + 1,
        .total = 2 * FLOOR_PRICE,
        .replaces = "ord_old"};
    assert_int_equal(hf_core_restore_hold(f->core, &old_hold), HF_OK);
    assert_int_equal(hf_core_restore_hold(f->core, &swapped), HF_OK);
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &let_go), HF_OK);
    assert_int_equal(hf_core_restore_order(f->core, &old_order), HF_OK);
    assert_int_equal(hf_core_restore_order(f->core, &new_order), HF_OK);
    hf_core_restore_finish(f->core);
    assert_consistent(f, T0 + 3);
    /* Held and sold by its first hold, moved to the new order by the exchange's commit. */
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    /* Held, sold, then given back by the exchange's commit. */
    assert_int_equal(seat(f, "FLOOR-A-2")->version, 4);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-B-1")->version, 3); /* held, then sold */
    assert_int_equal(seat(f, "FLOOR-B-2")->version, 3); /* held, then released */
}

/* ---- calendars ---- */

static void test_calendar_stay_moved_by_a_night(void **state) {
    fixture_t *f = *state;
    hf_resource_definition_t room = {.capacity = 1,
                                     .price = 100,
                                     .min_length = 1,
                                     .max_length = 30};
    strcpy(room.id, "DBL");
    hf_calendar_definition_t definition = {.unit = HF_CALENDAR_NIGHT,
                                           .granularity_min = 1440,
                                           .hold_ttl_ms = TTL,
                                           .max_hold_ms = MAX_HOLD,
                                           .horizon_days = 365,
                                           .max_items_per_hold = 4,
                                           .resource_count = 1,
                                           .resources = &room};
    strcpy(definition.id, "hotel");
    strcpy(definition.currency, "EUR");
    assert_int_equal(hf_core_calendar_create(f->core, &definition, T0, NULL), HF_OK);
    int32_t today = (int32_t)(T0 / 86400000);
    hf_calendar_conflict_t conflicts[4];
    hf_calendar_item_request_t first = {"DBL", 1, today + 10, today + 13};
    hf_calendar_hold_request_t request = {.calendar_id = "hotel",
                                          .user_id = "u1",
                                          .hold_id = "res_c",
                                          .items = &first,
                                          .item_count = 1,
                                          .ttl_ms = -1,
                                          .conflicts = conflicts,
                                          .conflict_max = 4};
    uint32_t index;
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_calendar_hold(f->core, &request, T0, &index, &detail), HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_c", "u1", "ord_stay", "pi_stay", T0, &index),
                     HF_OK);
    hf_calendar_item_request_t moved = {"DBL", 1, today + 11, today + 14};
    request.items = &moved;
    request.hold_id = "res_m";
    assert_int_equal(hf_core_calendar_hold(f->core, &request, T0, &index, &detail),
                     HF_ERROR_RANGE_UNAVAILABLE);
    request.exchange_for = "ord_stay";
    assert_int_equal(hf_core_calendar_hold(f->core, &request, T0, &index, &detail), HF_OK);
    assert_consistent(f, T0);
    const hf_calendar_t *hotel = hf_core_calendar(f->core, "hotel", NULL);
    /* The old stay's nights that the new one shares count twice while the hold is open. */
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 10, today + 11), 1);
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 11, today + 13), 2);
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 13, today + 14), 1);
    assert_int_equal(commit_refunding(f, "res_m", "u1", "ord_moved", NULL, T0), HF_OK);
    assert_swapped(f, "ord_stay", "ord_moved");
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 10, today + 11), 0);
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 11, today + 14), 1);
    /* A release instead leaves the stay as it was. */
    hf_calendar_item_request_t shorter = {"DBL", 1, today + 11, today + 12};
    request.items = &shorter;
    request.hold_id = "res_s";
    request.exchange_for = "ord_moved";
    assert_int_equal(hf_core_calendar_hold(f->core, &request, T0, &index, &detail), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_s", "u1", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(order_named(f, "ord_moved")->status, HF_ORDER_CONFIRMED);
    assert_int_equal(hf_core_resource_taken(hotel, 0, today + 11, today + 14), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_keep_a_seat_swap_another, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_old_order_is_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_across_events_and_a_refund, setup, teardown),
        cmocka_unit_test_setup_teardown(test_positive_difference_needs_a_payment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pools_keep_the_old_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_commit_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancelled_meanwhile_and_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_leaves_the_old_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offer_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_a_held_exchange, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_counts_versions_of_kept_seats, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_calendar_stay_moved_by_a_night, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_exchange", tests, NULL, NULL);
}
