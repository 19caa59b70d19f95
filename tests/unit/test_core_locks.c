/* Unit tests of order locks (core/locks.h, core/exchange/lock.c): the old unit's side of an
 * exchange across two owners. A lock refuses a cancel, another hold's lock and a local exchange
 * of the order; it ends by an unlock (the order confirmed as before) or a finish (the order
 * exchanged, its seats free, one record for the lock's end before the order's); a finish by
 * another hold is refused; a repeat of either changes nothing; a restored lock is the same. Every
 * step checks the core's invariants (hf_core_check); the fixture is core_cases.h's. */
#include "core_cases.h"
#include "core/jobs.h"
#include "core/locks.h"

static uint32_t order_of(fixture_t *f, const char *user, const char *hold_id, const char *order_id,
                         const char *const *seats, uint32_t seat_count) {
    uint32_t index;
    assert_int_equal(
        hold(f, user, hold_id, seats, seat_count, NO_POOLS, -1, false, T0, &index, NULL), HF_OK);
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, NULL, T0, &index), HF_OK);
    return index;
}

static const hf_order_t *order_named(fixture_t *f, const char *order_id) {
    const hf_order_t *order = hf_core_order_find(f->core, order_id, NULL);
    assert_non_null(order);
    return order;
}

static void test_a_lock_refuses_a_cancel_and_other_locks(void **state) {
    fixture_t *f = *state;
    uint32_t index = order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"));
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_LOCK], 1);
    assert_string_equal(hf_core_order_locked_by(f->core, index), "res_n");
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CONFIRMED);
    /* The same hold again: nothing more. */
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 2), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_LOCK], 1);
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_m", "other", T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_cancel(f->core, "ord_old", "u1", "ref_1", T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_order_lock(f->core, "ord_none", "res_n", "other", T0 + 2),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hf_core_order_lock_count(f->core), 1);
    hf_order_lock_view_t view = hf_core_order_lock_at(f->core, 0);
    assert_string_equal(view.order_id, "ord_old");
    assert_string_equal(view.hold_unit, "other");
    assert_int_equal(view.locked_at_ms, T0 + 1);
    /* Unlocked by another hold: nothing; by its own: confirmed as before, cancellable. */
    assert_int_equal(hf_core_order_unlock(f->core, "ord_old", "res_m", T0 + 3), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_LOCK], 1);
    assert_int_equal(hf_core_order_unlock(f->core, "ord_old", "res_n", T0 + 3), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_LOCK], 2);
    assert_null(hf_core_order_locked_by(f->core, index));
    assert_int_equal(hf_core_cancel(f->core, "ord_old", "u1", "ref_1", T0 + 4), HF_OK);
    assert_consistent(f, T0 + 4);
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 5),
                     HF_ERROR_ORDER_NOT_ACTIVE);
}

static void test_a_local_exchange_of_a_locked_order_is_refused(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"));
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u1",
                                 .hold_id = "res_x",
                                 .seat_ids = SEATS("FLOOR-A-2"),
                                 .ttl_ms = -1,
                                 .exchange_for = "ord_old"};
    uint32_t index;
    assert_int_equal(fx_hold(f->core, &request, T0, &index, NULL), HF_OK);
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 1), HF_OK);
    assert_int_equal(
        hf_core_commit_refunding(f->core, "res_x", "u1", "ord_x", NULL, "ref_x", T0 + 2, &index),
        HF_ERROR_ORDER_NOT_ACTIVE);
    assert_consistent(f, T0 + 2);
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CONFIRMED);
}

static void test_a_finish_exchanges_the_order_and_frees_its_seats(void **state) {
    fixture_t *f = *state;
    uint32_t index = order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1", "FLOOR-A-2"));
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 1), HF_OK);
    assert_int_equal(hf_core_order_exchange_finish(f->core, "ord_old", "res_m", "ord_new", T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_order_exchange_finish(f->core, "ord_old", "res_n", "ord_new", T0 + 2),
                     HF_OK);
    assert_consistent(f, T0 + 2);
    /* The lock's end first, then the order's record. */
    assert_true(f->sink.count >= 2);
    assert_int_equal(f->sink.records[0].type, HF_MUTATION_ORDER_LOCK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_UPDATE], 1);
    const hf_order_t *old = order_named(f, "ord_old");
    assert_int_equal(old->status, HF_ORDER_EXCHANGED);
    assert_string_equal(hf_core_string(f->core, old->replaced_by_elsewhere), "ord_new");
    assert_null(hf_core_order_locked_by(f->core, index));
    const hf_event_t *event = hf_core_event(f->core, "show", NULL);
    assert_int_equal(event->seats[0].status, HF_SEAT_AVAILABLE);
    assert_int_equal(event->seats[1].status, HF_SEAT_AVAILABLE);
    /* A repeat answers the same and changes nothing. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_order_exchange_finish(f->core, "ord_old", "res_n", "ord_new", T0 + 3),
                     HF_OK);
    assert_int_equal(f->sink.total, 0);
    assert_int_equal(hf_core_order_exchange_finish(f->core, "ord_old", "res_n", "ord_else", T0 + 3),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    /* Free for anyone now. */
    assert_int_equal(
        hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 4, &index, NULL),
        HF_OK);
    assert_consistent(f, T0 + 4);
}

static void test_a_restored_lock_refuses_as_before(void **state) {
    fixture_t *f = *state;
    uint32_t index = order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"));
    hf_stored_order_lock_t stored = {"ord_old", "show", "res_n", "other", T0 - 5000};
    hf_core_order_lock_restore(f->core, &stored);
    /* Twice, or for an order not here: nothing more. */
    hf_core_order_lock_restore(f->core, &stored);
    stored.order_id = "ord_none";
    hf_core_order_lock_restore(f->core, &stored);
    assert_int_equal(hf_core_order_lock_count(f->core), 1);
    assert_string_equal(hf_core_order_locked_by(f->core, index), "res_n");
    assert_int_equal(hf_core_order_lock_at(f->core, 0).locked_at_ms, T0 - 5000);
    assert_int_equal(hf_core_cancel(f->core, "ord_old", "u1", "ref_1", T0 + 1),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_consistent(f, T0 + 1);
}

/* The new unit's side: a hold of another unit's order, its commit refused without the lock,
 * and the decision with it (a refund of the negative difference, the records naming the old
 * order). */
static void test_a_remote_exchange_hold_and_its_decision(void **state) {
    fixture_t *f = *state;
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u1",
                                 .hold_id = "res_x",
                                 .seat_ids = SEATS("BALC-A-1"),
                                 .ttl_ms = -1,
                                 .exchange_for = "ord_far"};
    hf_remote_order_t old = {"ord_far", "u2", "pi_far", FLOOR_PRICE, true};
    uint32_t index;
    assert_int_equal(hf_core_hold_remote_exchange(f->core, &request, &old, T0, &index, NULL),
                     HF_ERROR_NOT_OWNER);
    old.user_id = "u1";
    old.confirmed = false;
    assert_int_equal(hf_core_hold_remote_exchange(f->core, &request, &old, T0, &index, NULL),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    old.confirmed = true;
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_hold_remote_exchange(f->core, &request, &old, T0, &index, NULL),
                     HF_OK);
    assert_consistent(f, T0);
    assert_string_equal(f->sink.records[0].hold_id, "res_x");
    int64_t total = 0;
    bool known = false;
    assert_string_equal(hf_core_remote_exchange_of(f->core, "res_x", &total, &known), "ord_far");
    assert_true(known);
    assert_int_equal(total, FLOOR_PRICE);
    /* No lock, no commit: the old order may still be confirmed over there. */
    assert_int_equal(hf_core_commit(f->core, "res_x", "u1", "ord_new", "pi_x", T0 + 1, &index),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    old.order_id = "ord_other";
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_new", NULL,
                                                    "ref_1", &old, T0 + 1, &index),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    old.order_id = "ord_far";
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_new", NULL,
                                                    "ref_1", &old, T0 + 1, &index),
                     HF_OK);
    assert_consistent(f, T0 + 1);
    const hf_order_t *made = order_named(f, "ord_new");
    assert_int_equal(made->status, HF_ORDER_CONFIRMED);
    assert_string_equal(hf_core_string(f->core, made->replaces_elsewhere), "ord_far");
    assert_string_equal(hf_core_string(f->core, made->payment_ref), "pi_far");
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1);
    const hf_refund_t *refund = hf_core_refund_find(f->core, "ref_1", NULL);
    assert_non_null(refund);
    assert_int_equal(refund->amount, FLOOR_PRICE - BALC_PRICE);
    /* A repeat answers the same order. */
    uint32_t again;
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_2", NULL, "ref_2",
                                                    &old, T0 + 2, &again),
                     HF_OK);
    assert_int_equal(again, index);
    /* As a local commit's repeat: the order's own payment answers it, another is refused. */
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_2", "pi_far",
                                                    "ref_2", &old, T0 + 2, &again),
                     HF_OK);
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_2", "pi_other",
                                                    "ref_2", &old, T0 + 2, &again),
                     HF_ERROR_ALREADY_CONFIRMED);
}

/* A restored exchange hold whose old order no unit here has is a remote one: its id known, its
 * total not (until the commit's lock), its commit refused without the lock, made with it. */
static void test_a_restored_remote_exchange_hold(void **state) {
    fixture_t *f = *state;
    const char *seats[] = {"BALC-A-1"};
    hf_stored_hold_t stored = {.request = {.event_id = "show",
                                           .user_id = "u1",
                                           .hold_id = "res_x",
                                           .seat_ids = seats,
                                           .seat_count = 1,
                                           .exchange_for = "ord_far"},
                               .status = HF_HOLD_HELD,
                               .created_at_ms = T0,
                               .expires_at_ms = T0 + TTL,
                               .total = BALC_PRICE};
    assert_int_equal(hf_core_restore_hold(f->core, &stored), HF_OK);
    hf_core_restore_finish(f->core);
    assert_consistent(f, T0 + 1);
    int64_t total = 0;
    bool known = true;
    assert_string_equal(hf_core_remote_exchange_of(f->core, "res_x", &total, &known), "ord_far");
    assert_false(known);
    hf_core_advance(f->core, T0 + 1);
    uint32_t index;
    assert_int_equal(hf_core_commit(f->core, "res_x", "u1", "ord_new", "pi", T0 + 1, &index),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    hf_remote_order_t old = {"ord_far", "u1", NULL, BALC_PRICE, true};
    assert_int_equal(hf_core_commit_remote_exchange(f->core, "res_x", "u1", "ord_new", NULL, NULL,
                                                    &old, T0 + 1, &index),
                     HF_OK);
    assert_consistent(f, T0 + 1);
    assert_string_equal(hf_core_string(f->core, order_named(f, "ord_new")->replaces_elsewhere),
                        "ord_far");
}

/* A payment of a remote exchange hold (its positive difference) commits it only with its old
 * order's lock: without one (hf_core_payment alone) or refused, the payment is refunded
 * order_not_active and the hold stays held; with it, the new order is paid by the intent. */
static hf_error_t pay_remote(fixture_t *f, const char *intent, const char *order_id,
                             const char *refund_id, int64_t amount, const hf_remote_order_t *locked,
                             hf_payment_outcome_t *outcome) {
    hf_payment_delivery_t delivery = {.event_id = intent,
                                      .type = HF_PAYMENT_SUCCEEDED,
                                      .payment_intent_id = intent,
                                      .reservation_id = "res_x",
                                      .amount = amount,
                                      .order_id = order_id,
                                      .refund_id = refund_id};
    hf_core_advance(f->core, T0 + 1);
    return hf_core_payment_remote(f->core, &delivery, locked, T0 + 1, outcome);
}

static void test_a_payment_of_a_remote_exchange_hold_needs_its_lock(void **state) {
    fixture_t *f = *state;
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u1",
                                 .hold_id = "res_x",
                                 .seat_ids = SEATS("FLOOR-A-1"),
                                 .ttl_ms = -1,
                                 .exchange_for = "ord_far"};
    hf_remote_order_t old = {"ord_far", "u1", "pi_far", BALC_PRICE, true};
    uint32_t index;
    assert_int_equal(hf_core_hold_remote_exchange(f->core, &request, &old, T0, &index, NULL),
                     HF_OK);
    hf_payment_outcome_t outcome;
    /* The whole price, without a lock: never a plain order beside the old one. */
    assert_int_equal(pay_remote(f, "pi_1", "ord_1", "ref_1", FLOOR_PRICE, NULL, &outcome), HF_OK);
    assert_int_equal(outcome.result, HF_PAYMENT_REFUND_REQUIRED);
    assert_int_equal(outcome.reason, HF_REFUND_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_hold_find(f->core, "res_x", NULL)->status, HF_HOLD_HELD);
    assert_int_equal(pay_remote(f, "pi_2", "ord_2", "ref_2", FLOOR_PRICE, &old, &outcome), HF_OK);
    assert_int_equal(outcome.reason, HF_REFUND_AMOUNT_MISMATCH);
    fx_sink_reset(&f->sink);
    assert_int_equal(
        pay_remote(f, "pi_3", "ord_3", "ref_3", FLOOR_PRICE - BALC_PRICE, &old, &outcome), HF_OK);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_consistent(f, T0 + 1);
    const hf_order_t *made = order_named(f, "ord_3");
    assert_int_equal(made->status, HF_ORDER_CONFIRMED);
    assert_string_equal(hf_core_string(f->core, made->replaces_elsewhere), "ord_far");
    assert_string_equal(hf_core_string(f->core, made->payment_ref), "pi_3");
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 0);
    assert_int_equal(hf_core_hold_find(f->core, "res_x", NULL)->status, HF_HOLD_CONFIRMED);
    /* The same delivery again answers the same order. */
    assert_int_equal(
        pay_remote(f, "pi_3", "ord_4", "ref_4", FLOOR_PRICE - BALC_PRICE, NULL, &outcome), HF_OK);
    assert_true(outcome.repeat);
    assert_int_equal(outcome.order, made - hf_core_order_at(f->core, 0));
}

/* A cancelled event's orders are its cancel job's: no lock. */
static void test_no_lock_of_a_cancelled_events_order(void **state) {
    fixture_t *f = *state;
    order_of(f, "u1", "res_o", "ord_old", SEATS("FLOOR-A-1"));
    hf_cancel_request_t cancel = {.job_id = "job_1", .offer_ttl_ms = 86400000};
    hf_error_detail_t detail = {0};
    uint32_t job;
    assert_int_equal(hf_core_event_cancel(f->core, "show", &cancel, T0 + 1, &detail, &job), HF_OK);
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 2),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_order_lock_count(f->core), 0);
    assert_consistent(f, T0 + 2);
}

/* A cancel job meeting an order locked before the cancel waits at it: handled meanwhile, its
 * refund could come beside the new order the other unit's decision confirms. Unlocked, the
 * order is the job's; exchanged, the job passes over it. */
static void cancel_with_a_locked_order(fixture_t *f, hf_job_t const **job) {
    order_of(f, "u1", "res_a", "ord_a", SEATS("FLOOR-A-1"));
    order_of(f, "u2", "res_o", "ord_old", SEATS("FLOOR-A-2"));
    order_of(f, "u3", "res_c", "ord_c", SEATS("FLOOR-A-3"));
    assert_int_equal(hf_core_order_lock(f->core, "ord_old", "res_n", "other", T0 + 1), HF_OK);
    hf_cancel_request_t cancel = {.job_id = "job_1", .offer_ttl_ms = 86400000};
    hf_error_detail_t detail = {0};
    uint32_t index;
    assert_int_equal(hf_core_event_cancel(f->core, "show", &cancel, T0 + 2, &detail, &index),
                     HF_OK);
    fx_sink_reset(&f->sink);
    /* The first order is handled, the step stops at the lock; a step after records nothing. */
    assert_int_equal(hf_core_job_step(f->core, 1000, T0 + 3), 1);
    assert_int_equal(hf_core_job_step(f->core, 1000, T0 + 4), 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_JOB], 1);
    *job = hf_core_job_find(f->core, "job_1", NULL);
    assert_non_null(*job);
    assert_int_equal((*job)->status, HF_JOB_RUNNING);
    assert_int_equal((*job)->refunded, 1);
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CONFIRMED);
    assert_consistent(f, T0 + 4);
}

static void test_a_cancel_job_waits_at_a_locked_order_then_handles_it(void **state) {
    fixture_t *f = *state;
    const hf_job_t *job;
    cancel_with_a_locked_order(f, &job);
    assert_int_equal(hf_core_order_unlock(f->core, "ord_old", "res_n", T0 + 5), HF_OK);
    assert_int_equal(hf_core_job_step(f->core, 1000, T0 + 6), 2);
    job = hf_core_job_find(f->core, "job_1", NULL);
    assert_int_equal(job->status, HF_JOB_DONE);
    assert_int_equal(job->refunded, 3);
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_CANCELLED);
    assert_consistent(f, T0 + 6);
}

static void test_a_cancel_job_passes_over_an_order_exchanged_meanwhile(void **state) {
    fixture_t *f = *state;
    const hf_job_t *job;
    cancel_with_a_locked_order(f, &job);
    assert_int_equal(hf_core_order_exchange_finish(f->core, "ord_old", "res_n", "ord_new", T0 + 5),
                     HF_OK);
    assert_int_equal(hf_core_job_step(f->core, 1000, T0 + 6), 2);
    job = hf_core_job_find(f->core, "job_1", NULL);
    assert_int_equal(job->status, HF_JOB_DONE);
    assert_int_equal(job->refunded, 2); /* the exchanged order is not refunded too */
    assert_int_equal(order_named(f, "ord_old")->status, HF_ORDER_EXCHANGED);
    assert_consistent(f, T0 + 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_lock_refuses_a_cancel_and_other_locks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_local_exchange_of_a_locked_order_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_finish_exchanges_the_order_and_frees_its_seats,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_restored_lock_refuses_as_before, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_remote_exchange_hold_and_its_decision, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_lock_of_a_cancelled_events_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_restored_remote_exchange_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_payment_of_a_remote_exchange_hold_needs_its_lock,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_cancel_job_waits_at_a_locked_order_then_handles_it,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_cancel_job_passes_over_an_order_exchanged_meanwhile,
                                        setup, teardown),
    };
    return cmocka_run_group_tests_name("core_locks", tests, NULL, NULL);
}
