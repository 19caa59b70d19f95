/* Unit tests of a cancel job's offers on a rebook_to another core holds (core/jobs.h,
 * docs/DESIGN.md "Rebooking onto another owner"), both sides in two cores: A (the fixture's,
 * "show" cancelled, its job) and B ("far", the rebook_to). The tests drive by hand what the
 * cluster carries: A's orders read out, B's offers placed, A's outcomes applied; a commit's
 * lock and finish; a release or lapse queued on B and told to A; A's restore. Every case
 * checks both cores' invariants (hf_core_check). */
#include "core_cases.h"
#include "core/jobs.h"
#include "core/locks.h"
#include "lib/limits.h"

#define DAY_MS INT64_C(86400000)
#define BATCH_MAX 16

typedef struct far {
    hf_core_t *core;
    fx_sink_t sink;
    fx_event_t event;
    hf_offer_scratch_t *scratch;
} far_t;

static far_t *far_make(void) {
    far_t *far = calloc(1, sizeof *far);
    far->core = fx_core_create(&far->sink, 4096);
    far->scratch = malloc(sizeof *far->scratch);
    fx_event_init(&far->event, "far", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&far->event, "FLOOR", FLOOR_PRICE, 2, 30);
    fx_event_section(&far->event, "BALC", BALC_PRICE, 1, 40);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(far->core, &far->event.definition, T0, &detail), HF_OK);
    fx_sink_reset(&far->sink);
    return far;
}

static void far_free(far_t *far) {
    fx_core_destroy(far->core, &far->sink);
    free(far->scratch);
    free(far);
}

static void both_consistent(fixture_t *f, far_t *far, hf_time_ms_t now) {
    assert_consistent(f, now);
    assert_null(hf_core_check(far->core, now));
}

/* A paid order of user on "show" of the given seats, committed. */
static void order_of(fixture_t *f, const char *user, const char *order_id, const char *const *seats,
                     uint32_t seat_count, const hf_pool_request_t *pools, uint32_t pool_count) {
    char hold_id[32], payment[32];
    snprintf(hold_id, sizeof hold_id, "res_h%s", order_id);
    snprintf(payment, sizeof payment, "pi_%s", order_id);
    uint32_t index;
    assert_int_equal(
        hold(f, user, hold_id, seats, seat_count, pools, pool_count, -1, false, T0, &index, NULL),
        HF_OK);
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, payment, T0, &index), HF_OK);
}

static hf_error_t cancel_onto(fixture_t *f, const char *rebook_to, const char *currency,
                              bool cancelled, uint32_t *job_index, hf_error_detail_t *detail) {
    hf_cancel_request_t request = {.job_id = "job_1",
                                   .rebook_to = rebook_to,
                                   .offer_ttl_ms = DAY_MS,
                                   .rebook_currency = currency,
                                   .rebook_cancelled = cancelled,
                                   .rebook_remote = currency != NULL};
    return hf_core_event_cancel(f->core, "show", &request, T0 + 10, detail, job_index);
}

/* One batch as the cluster carries it: A's next orders placed on B, B's answers applied on
 * A. Returns the answers applied. */
static uint32_t drive(fixture_t *f, far_t *far, uint32_t job_index, hf_time_ms_t now) {
    hf_offer_answer_t answers[BATCH_MAX];
    char order_ids[BATCH_MAX][HF_ID_SIZE_MAX + 1], hold_ids[BATCH_MAX][HF_SERVER_ID_SIZE + 1];
    hf_offer_order_t order;
    uint32_t cursor = hf_core_job_at(f->core, job_index)->cursor, count = 0;
    while (count < BATCH_MAX &&
           hf_core_job_remote_order(f->core, job_index, &cursor, &order, far->scratch)) {
        uint32_t hold_index = 0;
        bool placed = false;
        assert_int_equal(hf_core_job_offer_place(far->core, "far", &order, now + DAY_MS, now,
                                                 &hold_index, &placed),
                         HF_OK);
        snprintf(order_ids[count], sizeof order_ids[count], "%s", order.order_id);
        const hf_hold_t *hold = placed ? hf_core_hold_at(far->core, hold_index) : NULL;
        if (hold) snprintf(hold_ids[count], sizeof hold_ids[count], "%s", hold->id);
        answers[count] = (hf_offer_answer_t){
            order_ids[count], hold ? hold_ids[count] : NULL, hold ? hold->expires_at_ms : 0,
            hold && (hold->status == HF_HOLD_RELEASED || hold->status == HF_HOLD_EXPIRED)};
        count++;
    }
    return hf_core_job_remote_apply(f->core, job_index, answers, count, now);
}

static hf_job_outcome_t outcome_at(fixture_t *f, uint32_t job_index, uint32_t position) {
    hf_job_outcome_t outcome;
    assert_true(
        hf_core_job_outcome_at(f->core, hf_core_job_at(f->core, job_index), position, &outcome));
    return outcome;
}

/* Three orders: ord_1 two FLOOR seats (free on far under the same ids), ord_2 a BALC seat
 * (taken on far: offered another BALC seat), ord_3 a VIP unit (far has no VIP: refunded). */
static uint32_t three_orders_cancelled(fixture_t *f, far_t *far) {
    order_of(f, "u1", "ord_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NULL, 0);
    order_of(f, "u2", "ord_2", SEATS("BALC-A-1"), NULL, 0);
    hf_pool_request_t vip = {"VIP", 1};
    order_of(f, "u3", "ord_3", NULL, 0, &vip, 1);
    hf_hold_request_t taken = {.event_id = "far",
                               .user_id = "u9",
                               .hold_id = "res_far",
                               .seat_ids = (const char *[]){"BALC-A-1"},
                               .seat_count = 1,
                               .ttl_ms = -1};
    uint32_t index;
    assert_int_equal(fx_hold(far->core, &taken, T0, &index, NULL), HF_OK);
    uint32_t job_index;
    assert_int_equal(cancel_onto(f, "far", event_of(f, "show")->currency, false, &job_index, NULL),
                     HF_OK);
    return job_index;
}

static void test_the_cancel_checks_a_remote_rebook_to(void **state) {
    fixture_t *f = *state;
    uint32_t job_index;
    hf_error_detail_t detail = {0};
    /* Not in this core and not described: unknown. */
    assert_int_equal(cancel_onto(f, "far", NULL, false, &job_index, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "rebook_to");
    assert_int_equal(cancel_onto(f, "far", "EUR", false, &job_index, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "rebook_to");
    assert_int_equal(
        cancel_onto(f, "far", event_of(f, "show")->currency, true, &job_index, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_false(event_of(f, "show")->cancelled);
    assert_int_equal(
        cancel_onto(f, "far", event_of(f, "show")->currency, false, &job_index, &detail), HF_OK);
    assert_true(hf_core_job_remote(f->core, job_index));
}

static void test_offers_are_placed_on_the_other_core(void **state) {
    fixture_t *f = *state;
    far_t *far = far_make();
    uint32_t job_index = three_orders_cancelled(f, far);
    /* The engine's steps leave a remote job: no refund of an order that should be offered. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_step(f->core, HF_JOB_STEP_ORDERS, T0 + 11), 0);
    assert_no_mutation(f);
    assert_int_equal(drive(f, far, job_index, T0 + 20), 3);
    both_consistent(f, far, T0 + 20);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->offered, 2);
    assert_int_equal(job->open, 2);
    assert_int_equal(job->refunded, 1);
    assert_int_equal(job->status, HF_JOB_DONE);
    assert_false(hf_core_job_remote(f->core, job_index));
    hf_job_outcome_t first = outcome_at(f, job_index, 0);
    assert_int_equal(first.status, HF_JOB_OFFER_OFFERED);
    assert_null(first.hold);
    assert_string_equal(first.reservation_id, "res_ord_1");
    assert_int_equal(first.expires_at_ms, T0 + 20 + DAY_MS);
    const hf_hold_t *offer = hf_core_hold_find(far->core, "res_ord_1", NULL);
    assert_non_null(offer);
    assert_int_equal(offer->total, 2 * FLOOR_PRICE);
    int64_t total = 0;
    bool known = false;
    assert_string_equal(hf_core_remote_exchange_of(far->core, "res_ord_1", &total, &known),
                        "ord_1");
    assert_int_equal(total, 2 * FLOOR_PRICE);
    const hf_event_t *target = hf_core_event(far->core, "far", NULL);
    uint32_t seat_index;
    assert_true(hf_core_seat_find(target, "FLOOR-A-1", &seat_index));
    assert_int_equal(target->seats[seat_index].status, HF_SEAT_HELD);
    /* ord_2's own BALC-A-1 is taken on far: the best other BALC seat. */
    const hf_hold_t *second = hf_core_hold_find(far->core, "res_ord_2", NULL);
    assert_non_null(second);
    assert_int_equal(second->seat_count, 1);
    assert_int_equal(outcome_at(f, job_index, 2).status, HF_JOB_OFFER_REFUNDED);
    assert_null(outcome_at(f, job_index, 2).reservation_id);
    assert_int_equal(hf_core_order_find(f->core, "ord_3", NULL)->status, HF_ORDER_CANCELLED);
    const char *offer_id = NULL;
    hf_time_ms_t expires_at_ms = 0;
    assert_true(hf_core_order_rebooking(f->core, hf_core_order_find(f->core, "ord_1", NULL),
                                        &offer_id, &expires_at_ms));
    assert_string_equal(offer_id, "res_ord_1");
    /* A batch asked again (its job's node crashed before recording it) answers the same hold. */
    uint32_t index = 0;
    bool placed = false;
    hf_offer_scratch_t *scratch = far->scratch;
    hf_offer_order_t order = {.order_id = "ord_1",
                              .user_id = "u1",
                              .total = 1,
                              .seat_ids = scratch->seat_ids,
                              .groups = scratch->groups,
                              .pools = scratch->pools};
    fx_sink_reset(&far->sink);
    assert_int_equal(
        hf_core_job_offer_place(far->core, "far", &order, T0 + 99, T0 + 30, &index, &placed),
        HF_OK);
    assert_true(placed);
    assert_string_equal(hf_core_hold_at(far->core, index)->id, "res_ord_1");
    fx_assert_no_mutation(&far->sink);
    assert_int_equal(
        hf_core_job_offer_place(far->core, "nope", &order, T0 + 99, T0 + 30, &index, &placed),
        HF_ERROR_EVENT_NOT_FOUND);
    far_free(far);
}

static void test_an_answer_for_another_order_is_not_applied(void **state) {
    fixture_t *f = *state;
    far_t *far = far_make();
    uint32_t job_index = three_orders_cancelled(f, far);
    hf_offer_answer_t wrong = {"ord_2", "res_ord_2", T0 + DAY_MS, false};
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_remote_apply(f->core, job_index, &wrong, 1, T0 + 20), 0);
    assert_no_mutation(f);
    assert_int_equal(hf_core_job_at(f->core, job_index)->cursor, 0);
    /* One answer of three: the cursor past it, the job still running. */
    hf_offer_answer_t right = {"ord_1", "res_ord_1", T0 + DAY_MS, false};
    assert_int_equal(hf_core_job_remote_apply(f->core, job_index, &right, 1, T0 + 20), 1);
    assert_int_equal(hf_core_job_at(f->core, job_index)->cursor, 1);
    assert_int_equal(hf_core_job_at(f->core, job_index)->status, HF_JOB_RUNNING);
    assert_int_equal(f->sink.by_type[HF_MUTATION_JOB], 1);
    /* An answer of an offer that ended there already refunds at once. */
    hf_offer_answer_t ended = {"ord_2", "res_ord_2", T0 + DAY_MS, true};
    assert_int_equal(hf_core_job_remote_apply(f->core, job_index, &ended, 1, T0 + 21), 1);
    assert_int_equal(hf_core_order_find(f->core, "ord_2", NULL)->status, HF_ORDER_CANCELLED);
    assert_int_equal(outcome_at(f, job_index, 1).status, HF_JOB_OFFER_REFUNDED);
    assert_int_equal(hf_core_job_at(f->core, job_index)->offered, 2);
    assert_int_equal(hf_core_job_at(f->core, job_index)->open, 1);
    assert_consistent(f, T0 + 21);
    far_free(far);
}

static void test_an_offer_committed_on_the_other_core_is_accepted(void **state) {
    fixture_t *f = *state;
    far_t *far = far_make();
    uint32_t job_index = three_orders_cancelled(f, far);
    assert_int_equal(drive(f, far, job_index, T0 + 20), 3);
    /* A's lock: only for the offer's own hold. */
    assert_int_equal(hf_core_order_lock(f->core, "ord_1", "res_other", "far", T0 + 30),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_order_lock(f->core, "ord_3", "res_ord_3", "far", T0 + 30),
                     HF_ERROR_ORDER_NOT_ACTIVE);
    assert_int_equal(hf_core_order_lock(f->core, "ord_1", "res_ord_1", "far", T0 + 30), HF_OK);
    /* Locked, an ended message is the lock's to settle: nothing happens. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_offer_ended(f->core, "ord_1", "res_ord_1", T0 + 31), HF_OK);
    assert_no_mutation(f);
    hf_remote_order_t old = {"ord_1", "u1", "pi_ord_1", 2 * FLOOR_PRICE, true};
    uint32_t new_index;
    assert_int_equal(hf_core_commit_remote_exchange(far->core, "res_ord_1", "u1", "ord_new", NULL,
                                                    NULL, &old, T0 + 32, &new_index),
                     HF_OK);
    const hf_order_t *made = hf_core_order_at(far->core, new_index);
    assert_int_equal(made->total, 2 * FLOOR_PRICE);
    assert_int_equal(hf_core_refund_count(far->core), 0);
    assert_int_equal(
        hf_core_order_exchange_finish(f->core, "ord_1", "res_ord_1", "ord_new", T0 + 33), HF_OK);
    both_consistent(f, far, T0 + 33);
    assert_int_equal(hf_core_order_find(f->core, "ord_1", NULL)->status, HF_ORDER_EXCHANGED);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->accepted, 1);
    assert_int_equal(job->open, 1);
    assert_int_equal(outcome_at(f, job_index, 0).status, HF_JOB_OFFER_ACCEPTED);
    /* A commit is no end to tell. */
    hf_offer_ended_t ended[4];
    assert_int_equal(hf_core_offers_ended_take(far->core, ended, 4), 0);
    far_free(far);
}

static void test_a_released_or_lapsed_offer_is_told_and_refunded(void **state) {
    fixture_t *f = *state;
    far_t *far = far_make();
    uint32_t job_index = three_orders_cancelled(f, far);
    assert_int_equal(drive(f, far, job_index, T0 + 20), 3);
    /* A buyer's own exchange hold is not an offer: its end is not queued. */
    assert_int_equal(hf_core_release(far->core, "res_far", "u9", T0 + 25), HF_OK);
    assert_int_equal(hf_core_release(far->core, "res_ord_1", "u1", T0 + 30), HF_OK);
    hf_offer_ended_t ended[4];
    assert_int_equal(hf_core_offers_ended_take(far->core, ended, 4), 1);
    assert_string_equal(ended[0].order_id, "ord_1");
    assert_string_equal(ended[0].hold_id, "res_ord_1");
    assert_int_equal(hf_core_offers_ended_take(far->core, ended, 4), 0);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_offer_ended(f->core, "ord_1", "res_ord_1", T0 + 31), HF_OK);
    const hf_order_t *old = hf_core_order_find(f->core, "ord_1", NULL);
    assert_int_equal(old->status, HF_ORDER_CANCELLED);
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1);
    const hf_refund_t *refund = hf_core_refund_at(f->core, old->refund - 1);
    assert_int_equal(refund->reason, HF_REFUND_EVENT_CANCELLED);
    assert_int_equal(refund->amount, 2 * FLOOR_PRICE);
    assert_int_equal(outcome_at(f, job_index, 0).status, HF_JOB_OFFER_REFUNDED);
    /* Told twice: nothing more. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_offer_ended(f->core, "ord_1", "res_ord_1", T0 + 32), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_job_offer_ended(f->core, "nope", "res_ord_1", T0 + 32),
                     HF_ERROR_ORDER_NOT_FOUND);
    /* ord_2's offer: listed once its expiry passed, extended by B's word, then lapsed. */
    hf_remote_offer_view_t views[4];
    hf_time_ms_t expiry = T0 + 20 + DAY_MS;
    assert_int_equal(hf_core_job_remote_lapsed(f->core, expiry, views, 4), 0);
    assert_int_equal(hf_core_job_remote_lapsed(f->core, expiry + 1, views, 4), 1);
    assert_string_equal(views[0].order_id, "ord_2");
    assert_string_equal(views[0].rebook_to, "far");
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_offer_held(f->core, "ord_2", "res_ord_2", expiry + 500, T0 + 40),
                     HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_JOB_OFFER], 1);
    assert_int_equal(hf_core_job_remote_lapsed(f->core, expiry + 1, views, 4), 0);
    assert_int_equal(outcome_at(f, job_index, 1).expires_at_ms, expiry + 500);
    hf_core_advance(far->core, expiry + 1);
    assert_int_equal(hf_core_hold_find(far->core, "res_ord_2", NULL)->status, HF_HOLD_EXPIRED);
    assert_int_equal(hf_core_offers_ended_take(far->core, ended, 4), 1);
    assert_string_equal(ended[0].order_id, "ord_2");
    assert_int_equal(hf_core_job_offer_ended(f->core, "ord_2", "res_ord_2", expiry + 2), HF_OK);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->open, 0);
    assert_int_equal(job->refunded, 3);
    both_consistent(f, far, expiry + 2);
    far_free(far);
}

static void test_a_restore_keeps_a_remote_offer(void **state) {
    fixture_t *f = *state;
    fx_sink_t sink;
    hf_core_t *core = fx_core_create(&sink, 64);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(core, &f->show.definition, T0, &detail), HF_OK);
    const char *seats[] = {"FLOOR-A-1"};
    hf_stored_order_t order = {
        .order_id = "ord_1",
        .items = {.event_id = "show", .user_id = "u1", .seat_ids = seats, .seat_count = 1},
        .status = HF_ORDER_CONFIRMED,
        .created_at_ms = T0,
        .total = FLOOR_PRICE,
        .payment_ref = "pi_1"};
    assert_int_equal(hf_core_restore_order(core, &order), HF_OK);
    hf_stored_job_t stored = {.job_id = "job_r",
                              .event_id = "show",
                              .rebook_to = "far",
                              .offer_ttl_ms = DAY_MS,
                              .created_at_ms = T0 + 10,
                              .orders = 1,
                              .cursor = 1,
                              .offered = 1,
                              .status = HF_JOB_DONE};
    assert_int_equal(hf_core_restore_job(core, &stored), HF_OK);
    hf_stored_job_offer_t offer = {.job_id = "job_r",
                                   .order_id = "ord_1",
                                   .reservation_id = "res_ord_1",
                                   .status = HF_JOB_OFFER_OFFERED,
                                   .expires_at_ms = T0 + DAY_MS};
    assert_int_equal(hf_core_restore_job_offer(core, &offer), HF_OK);
    hf_core_restore_finish(core);
    assert_null(hf_core_check(core, T0 + 20));
    const hf_job_t *job = hf_core_job_find(core, "job_r", NULL);
    assert_int_equal(job->open, 1);
    hf_job_outcome_t outcome;
    assert_true(hf_core_job_outcome_at(core, job, 0, &outcome));
    assert_string_equal(outcome.reservation_id, "res_ord_1");
    assert_int_equal(outcome.expires_at_ms, T0 + DAY_MS);
    /* Its commit's lock is accepted, its end refunds: the offer works as before the restart. */
    assert_int_equal(hf_core_order_lock(core, "ord_1", "res_ord_1", "far", T0 + 30), HF_OK);
    assert_int_equal(hf_core_order_unlock(core, "ord_1", "res_ord_1", T0 + 31), HF_OK);
    hf_remote_offer_view_t views[2];
    assert_int_equal(hf_core_job_remote_lapsed(core, T0 + DAY_MS + 1, views, 2), 1);
    assert_int_equal(hf_core_job_offer_ended(core, "ord_1", "res_ord_1", T0 + 32), HF_OK);
    assert_int_equal(hf_core_order_find(core, "ord_1", NULL)->status, HF_ORDER_CANCELLED);
    assert_null(hf_core_check(core, T0 + 32));
    fx_core_destroy(core, &sink);
}

/* rebook_to taken over by the job's own node while a batch was out: the answer's holds were
 * placed in the job's core, and its own step adopts them rather than refunding the orders. */
static void test_offers_placed_here_by_a_takeover_are_adopted(void **state) {
    fixture_t *f = *state;
    far_t *far = far_make();
    uint32_t job_index = three_orders_cancelled(f, far);
    hf_offer_order_t order;
    uint32_t cursor = 0;
    assert_true(hf_core_job_remote_order(f->core, job_index, &cursor, &order, far->scratch));
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &far->event.definition, T0 + 11, &detail),
                     HF_OK);
    assert_false(hf_core_job_remote(f->core, job_index));
    uint32_t hold_index;
    bool placed = false;
    assert_int_equal(
        hf_core_job_offer_place(f->core, "far", &order, T0 + DAY_MS, T0 + 12, &hold_index, &placed),
        HF_OK);
    assert_true(placed);
    /* The answer comes back to a job that is local now: not applied. */
    hf_offer_answer_t answer = {"ord_1", "res_ord_1", T0 + DAY_MS, false};
    assert_int_equal(hf_core_job_remote_apply(f->core, job_index, &answer, 1, T0 + 13), 0);
    assert_int_equal(hf_core_job_step(f->core, HF_JOB_STEP_ORDERS, T0 + 14), 3);
    assert_consistent(f, T0 + 14);
    hf_job_outcome_t first = outcome_at(f, job_index, 0);
    assert_int_equal(first.status, HF_JOB_OFFER_OFFERED);
    assert_non_null(first.hold);
    assert_string_equal(first.hold->id, "res_ord_1");
    /* Adopted, it settles as any local offer: its release refunds the order. */
    assert_int_equal(hf_core_release(f->core, "res_ord_1", "u1", T0 + 15), HF_OK);
    assert_int_equal(hf_core_order_find(f->core, "ord_1", NULL)->status, HF_ORDER_CANCELLED);
    assert_int_equal(outcome_at(f, job_index, 0).status, HF_JOB_OFFER_REFUNDED);
    assert_consistent(f, T0 + 15);
    far_free(far);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_cancel_checks_a_remote_rebook_to, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offers_are_placed_on_the_other_core, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_answer_for_another_order_is_not_applied, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_offer_committed_on_the_other_core_is_accepted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_released_or_lapsed_offer_is_told_and_refunded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_restore_keeps_a_remote_offer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offers_placed_here_by_a_takeover_are_adopted, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("core_jobs_remote", tests, NULL, NULL);
}
