/* The simulation's cancel jobs (API.md section 13; after sim_model.h, in test_simulation.c):
 * runs of random orders on two events of one layout (bookings by hold and commit, some paid,
 * some cancelled by their users), then the first event cancelled onto the second (or with no
 * rebook_to), its job stepped with random limits while random offers are committed, released
 * or left to lapse and new holds take seats on the second event. After every operation the
 * core's invariants hold (hf_core_check); at the end each order of the cancelled event is
 * exactly one of exchanged (its offer accepted, the new order of its total), cancelled with at
 * most one refund (none when unpaid), or confirmed with an open offer, and the job's counts are
 * those outcomes. A failure prints the seed (HF_SEED) that replays it. */
#ifndef HF_TESTS_SIM_JOBS_H
#define HF_TESTS_SIM_JOBS_H

#include "core/jobs.h"
#include "lib/limits.h"

#define SJ_ORDERS_MAX 120u

static void sj_check(hf_core_t *jc, hf_time_ms_t now, uint32_t run) {
    const char *fault = hf_core_check(jc, now);
    if (fault) fail_msg("cancel simulation run %u (HF_SEED=%" PRIu64 "): %s", run, seed, fault);
}

/* Random orders on "gone": one or two seats of a random row, or pool units. */
static uint32_t sj_orders(hf_core_t *jc, hf_time_ms_t now) {
    uint32_t made = 0;
    for (uint32_t n = 0; n < SJ_ORDERS_MAX; n++) {
        char user[16], hold_id[24], order_id[24], seat_a[24], seat_b[24];
        snprintf(user, sizeof user, "u%u", n);
        snprintf(hold_id, sizeof hold_id, "res_s%u", n);
        snprintf(order_id, sizeof order_id, "ord_s%u", n);
        snprintf(seat_a, sizeof seat_a, "F-%c-%u", 'A' + (char)rng_below(3), rng_below(20) + 1);
        snprintf(seat_b, sizeof seat_b, "F-%c-%u", 'A' + (char)rng_below(3), rng_below(20) + 1);
        const char *seats[] = {seat_a, seat_b};
        hf_pool_request_t pools[] = {{"GA", 1 + rng_below(3)}};
        bool pool = rng_chance(25);
        hf_hold_request_t request = {.event_id = "gone",
                                     .user_id = user,
                                     .hold_id = hold_id,
                                     .seat_ids = pool ? NULL : seats,
                                     .seat_count = pool ? 0 : 1 + rng_below(2),
                                     .pools = pool ? pools : NULL,
                                     .pool_count = pool ? 1 : 0,
                                     .ttl_ms = -1};
        uint32_t index;
        if (fx_hold(jc, &request, now, &index, NULL) != HF_OK) continue;
        const char *payment = rng_chance(80) ? "pi_s" : NULL;
        assert_int_equal(hf_core_commit(jc, hold_id, user, order_id, payment, now, &index), HF_OK);
        made++;
        if (rng_chance(10)) hf_core_cancel(jc, order_id, user, NULL, now);
    }
    return made;
}

/* A random open offer settled: committed or released by its user. */
static void sj_settle(hf_core_t *jc, const hf_job_t *job, hf_time_ms_t now) {
    uint32_t count = hf_core_job_outcome_count(job);
    if (count == 0) return;
    hf_job_outcome_t outcome;
    hf_core_job_outcome_at(jc, job, rng_below(count), &outcome);
    if (outcome.status != HF_JOB_OFFER_OFFERED || !outcome.hold ||
        outcome.hold->status != HF_HOLD_HELD)
        return;
    char hold_id[HF_SERVER_ID_SIZE + 1], order_id[HF_SERVER_ID_SIZE + 8];
    snprintf(hold_id, sizeof hold_id, "%s", outcome.hold->id);
    snprintf(order_id, sizeof order_id, "new_%s", outcome.order->id);
    const char *user = hf_core_user_id(jc, outcome.order->user);
    char user_id[HF_USER_ID_SIZE_MAX + 1];
    snprintf(user_id, sizeof user_id, "%s", user);
    uint32_t index;
    if (rng_chance(50))
        assert_int_equal(hf_core_commit(jc, hold_id, user_id, order_id, NULL, now, &index), HF_OK);
    else assert_int_equal(hf_core_release(jc, hold_id, user_id, now), HF_OK);
}

/* Every order of the cancelled event ends as one of the three, and the counts say so. */
static void sj_final(hf_core_t *jc, const hf_job_t *job, uint32_t run) {
    uint32_t count, accepted = 0, refunded = 0, open = 0, offered = 0;
    const uint32_t *orders = hf_core_event_orders(jc, job->event, &count);
    for (uint32_t p = 0; p < hf_core_job_outcome_count(job); p++) {
        hf_job_outcome_t outcome;
        hf_core_job_outcome_at(jc, job, p, &outcome);
        const hf_order_t *order = outcome.order;
        offered += outcome.hold != NULL; /* an offer made, whatever became of it */
        if (outcome.status == HF_JOB_OFFER_ACCEPTED) {
            accepted++;
            assert_int_equal(order->status, HF_ORDER_EXCHANGED);
            assert_int_equal(hf_core_order_at(jc, order->replaced_by - 1)->total, order->total);
        } else if (outcome.status == HF_JOB_OFFER_REFUNDED) {
            refunded++;
            assert_int_equal(order->status, HF_ORDER_CANCELLED);
            assert_true((order->refund != 0) == (order->payment_ref != UINT32_MAX));
        } else {
            open++;
            assert_int_equal(order->status, HF_ORDER_CONFIRMED);
            const char *offer_id = NULL;
            hf_time_ms_t offer_expires_at_ms = 0;
            assert_true(hf_core_order_rebooking(jc, order, &offer_id, &offer_expires_at_ms));
            assert_string_equal(offer_id, outcome.reservation_id);
            assert_int_equal(offer_expires_at_ms, outcome.expires_at_ms);
        }
    }
    (void)orders;
    if (job->accepted != accepted || job->refunded != refunded || job->open != open ||
        job->offered != offered)
        fail_msg("cancel simulation run %u (HF_SEED=%" PRIu64 "): counts off", run, seed);
    assert_int_equal(accepted + refunded + open, job->orders);
    assert_int_equal(job->status, HF_JOB_DONE);
}

static void test_cancel_simulation(void **state) {
    (void)state;
    rng_state = seed ^ UINT64_C(0xCA9CE1);
    for (uint32_t run = 0; run < 8; run++) {
        hf_core_t *jc = hf_core_create((hf_mutation_sink_t){NULL, NULL});
        fx_event_t gone, other;
        fx_event_init(&gone, "gone", 60000, 180000, 0, 10);
        fx_event_section(&gone, "F", 100, 3, 20);
        fx_event_pool(&gone, "GA", 60, 10);
        fx_event_init(&other, "other", 60000, 180000, 0, 10);
        fx_event_section(&other, "F", 100, 3, 20);
        fx_event_pool(&other, "GA", 20 + rng_below(40), 10);
        hf_time_ms_t now = EPOCH;
        assert_int_equal(hf_core_event_create(jc, &gone.definition, now, NULL), HF_OK);
        assert_int_equal(hf_core_event_create(jc, &other.definition, now, NULL), HF_OK);
        sj_orders(jc, now);
        sj_check(jc, now, run);
        hf_cancel_request_t cancel = {.job_id = "job_sim",
                                      .rebook_to = rng_chance(80) ? "other" : NULL,
                                      .offer_ttl_ms = 1000 + rng_below(20000)};
        uint32_t job_index;
        assert_int_equal(hf_core_event_cancel(jc, "gone", &cancel, now, NULL, &job_index), HF_OK);
        const hf_job_t *job = hf_core_job_at(jc, job_index);
        for (uint32_t turn = 0; hf_core_jobs_running(jc) || (turn < 400 && job->open > 0); turn++) {
            now += rng_below(400);
            hf_core_advance(jc, now);
            uint32_t roll = rng_below(100);
            if (roll < 40) assert_true(hf_core_job_step(jc, 1 + rng_below(30), now) <= 30);
            else if (roll < 80) sj_settle(jc, job, now);
            job = hf_core_job_at(jc, job_index);
            sj_check(jc, now, run);
        }
        sj_final(jc, job, run);
        hf_core_destroy(jc);
    }
}

#endif
