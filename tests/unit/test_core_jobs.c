/* Unit tests of cancel jobs in the core (core/jobs.h, API.md section 13): the cancel's checks
 * and its one step (the event cancelled, its holds released, the job's record first), the
 * steps (at most their limit of orders, oldest first, each confirmed order cancelled with a
 * refund of reason event_cancelled, once), the second cancel answering the same job, and the
 * restore resuming at the stored cursor without repeating an order. Every case checks the
 * core's invariants (hf_core_check); the fixture is core_cases.h's. */
#include "core_cases.h"
#include "core/jobs.h"
#include "lib/limits.h"

#define DAY_MS INT64_C(86400000)

/* A confirmed order of user on "open": one seat of row A, committed (paid when payment_ref). */
static void order_on_open(fixture_t *f, uint32_t n, const char *payment_ref, hf_time_ms_t now) {
    char user[16], hold_id[16], order_id[16], seat_id[16];
    snprintf(user, sizeof user, "u%u", n);
    snprintf(hold_id, sizeof hold_id, "res_%u", n);
    snprintf(order_id, sizeof order_id, "ord_%03u", n);
    snprintf(seat_id, sizeof seat_id, "S-A-%u", n + 1);
    const char *seats[] = {seat_id};
    uint32_t index;
    assert_int_equal(
        hold_on(f, "open", user, hold_id, seats, 1, NULL, 0, -1, false, now, &index, NULL), HF_OK);
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, payment_ref, now, &index),
                     HF_OK);
}

static hf_error_t cancel(fixture_t *f, const char *event_id, const char *job_id,
                         const char *rebook_to, int64_t ttl_ms, hf_time_ms_t now,
                         uint32_t *job_index, hf_error_detail_t *detail) {
    hf_cancel_request_t request = {.job_id = job_id,
                                   .rebook_to = rebook_to,
                                   .offer_ttl_ms = ttl_ms};
    hf_error_t error = hf_core_event_cancel(f->core, event_id, &request, now, detail, job_index);
    assert_consistent(f, now);
    return error;
}

static const hf_order_t *order_named(fixture_t *f, const char *order_id) {
    const hf_order_t *order = hf_core_order_find(f->core, order_id, NULL);
    assert_non_null(order);
    return order;
}

static void test_cancel_checks(void **state) {
    fixture_t *f = *state;
    uint32_t job;
    hf_error_detail_t detail = {0};
    assert_int_equal(cancel(f, "nope", "job_1", NULL, DAY_MS, T0, &job, &detail),
                     HF_ERROR_EVENT_NOT_FOUND);
    assert_int_equal(cancel(f, "open", "job_1", "nope", DAY_MS, T0, &job, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "rebook_to");
    assert_int_equal(cancel(f, "open", "job_1", "open", DAY_MS, T0, &job, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "rebook_to");
    assert_int_equal(
        cancel(f, "open", "job_1", "show", HF_JOB_OFFER_TTL_MS_MAX + 1000, T0, &job, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "offer_ttl_s");
    assert_int_equal(cancel(f, "open", "job_1", "show", 0, T0, &job, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_no_mutation(f);
    assert_false(event_of(f, "open")->cancelled);
    /* A cancelled event is no rebook_to. */
    assert_int_equal(cancel(f, "show", "job_s", NULL, DAY_MS, T0, &job, &detail), HF_OK);
    assert_int_equal(cancel(f, "open", "job_1", "show", DAY_MS, T0, &job, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "rebook_to");
    /* The job id is the caller's: one taken is refused. */
    assert_int_equal(cancel(f, "open", "job_s", NULL, DAY_MS, T0, &job, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "job_id");
}

static void test_cancel_closes_the_event_at_once(void **state) {
    fixture_t *f = *state;
    order_on_open(f, 0, "pi_0", T0);
    uint32_t index;
    assert_int_equal(
        hold_on(f, "open", "u9", "res_h", SEATS("S-B-1"), NULL, 0, -1, false, T0, &index, NULL),
        HF_OK);
    fx_sink_reset(&f->sink);
    uint32_t job_index;
    assert_int_equal(cancel(f, "open", "job_1", "show", DAY_MS, T0 + 5, &job_index, NULL), HF_OK);
    /* The job's record comes first, then the release of the held hold; no order changes yet. */
    assert_int_equal(f->sink.records[0].type, HF_MUTATION_EVENT_CANCEL);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_CANCEL], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_UPDATE], 0);
    assert_int_equal(hold_by_id(f, "res_h")->status, HF_HOLD_RELEASED);
    assert_true(event_of(f, "open")->cancelled);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_string_equal(job->id, "job_1");
    assert_string_equal(job->rebook_to, "show");
    assert_int_equal(job->orders, 1);
    assert_int_equal(job->status, HF_JOB_RUNNING);
    assert_int_equal(job->created_at_ms, T0 + 5);
    /* New holds, bookings and joins are refused; the second cancel answers the same job. */
    assert_int_equal(
        hold_on(f, "open", "u9", "res_2", SEATS("S-B-2"), NULL, 0, -1, false, T0 + 6, &index, NULL),
        HF_ERROR_EVENT_CANCELLED);
    fx_sink_reset(&f->sink);
    uint32_t again;
    assert_int_equal(cancel(f, "open", "job_2", NULL, 1, T0 + 7, &again, NULL), HF_OK);
    assert_int_equal(again, job_index);
    assert_no_mutation(f);
    assert_int_equal(hf_core_jobs_of_status(f->core, HF_JOB_RUNNING), 1);
    assert_true(hf_core_jobs_running(f->core));
}

static void test_steps_refund_each_order_once(void **state) {
    fixture_t *f = *state;
    for (uint32_t n = 0; n < 5; n++) order_on_open(f, n, n == 3 ? NULL : "pi_x", T0 + n);
    /* Cancelled by its user before: the job passes it by. */
    assert_int_equal(hf_core_cancel(f->core, "ord_001", "u1", "ref_u1", T0 + 10), HF_OK);
    uint32_t job_index;
    assert_int_equal(cancel(f, "open", "job_1", NULL, DAY_MS, T0 + 20, &job_index, NULL), HF_OK);
    assert_int_equal(hf_core_job_at(f->core, job_index)->orders, 4);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_step(f->core, 2, T0 + 21), 2);
    assert_consistent(f, T0 + 21);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->cursor, 2);
    assert_int_equal(job->refunded, 1);
    assert_int_equal(job->status, HF_JOB_RUNNING);
    assert_int_equal(f->sink.by_type[HF_MUTATION_JOB], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_JOB_OFFER], 1);
    assert_int_equal(f->sink.records[f->sink.count - 1].type, HF_MUTATION_JOB);
    assert_int_equal(order_named(f, "ord_000")->status, HF_ORDER_CANCELLED);
    assert_int_equal(order_named(f, "ord_002")->status, HF_ORDER_CONFIRMED);
    const hf_refund_t *refund = hf_core_refund_find(f->core, "ref_ord_000", NULL);
    assert_non_null(refund);
    assert_int_equal(refund->reason, HF_REFUND_EVENT_CANCELLED);
    assert_int_equal(refund->amount, 100);
    assert_string_equal(refund->payment_intent_id, "pi_x");
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_AVAILABLE);
    /* The rest in the next step; the unpaid order is cancelled owing nothing. */
    assert_int_equal(hf_core_job_step(f->core, 2, T0 + 22), 2);
    assert_int_equal(hf_core_job_step(f->core, 2, T0 + 23), 1);
    assert_consistent(f, T0 + 23);
    job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->cursor, 5);
    assert_int_equal(job->refunded, 4);
    assert_int_equal(job->status, HF_JOB_DONE);
    assert_int_equal(order_named(f, "ord_003")->status, HF_ORDER_CANCELLED);
    assert_int_equal(order_named(f, "ord_003")->refund, 0);
    assert_null(hf_core_refund_find(f->core, "ref_ord_003", NULL));
    assert_int_equal(hf_core_refund_count(f->core), 4); /* 3 of the job, 1 of the user */
    assert_int_equal(hf_core_job_outcome_count(job), 4);
    hf_job_outcome_t outcome;
    assert_true(hf_core_job_outcome_at(f->core, job, 1, &outcome));
    assert_string_equal(outcome.order->id, "ord_002");
    assert_int_equal(outcome.status, HF_JOB_OFFER_REFUNDED);
    assert_null(outcome.hold);
    bool found;
    assert_int_equal(hf_core_job_outcome_after(f->core, job, "ord_002", &found), 2);
    assert_true(found);
    hf_core_job_outcome_after(f->core, job, "ord_001", &found);
    assert_false(found);
    /* Done: no step does anything more. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_step(f->core, 2, T0 + 24), 0);
    assert_no_mutation(f);
    assert_false(hf_core_jobs_running(f->core));
    assert_int_equal(hf_core_jobs_of_status(f->core, HF_JOB_DONE), 1);
}

static void test_a_step_is_bounded(void **state) {
    fixture_t *f = *state;
    for (uint32_t n = 0; n < 20; n++) order_on_open(f, n, "pi_x", T0);
    uint32_t job_index;
    assert_int_equal(cancel(f, "open", "job_1", NULL, DAY_MS, T0 + 1, &job_index, NULL), HF_OK);
    uint32_t steps = 0;
    while (hf_core_jobs_running(f->core)) {
        assert_true(hf_core_job_step(f->core, 3, T0 + 2) <= 3);
        steps++;
    }
    assert_int_equal(steps, 7);
    assert_int_equal(hf_core_job_at(f->core, job_index)->refunded, 20);
    assert_consistent(f, T0 + 2);
}

/* A confirmed, paid order of user on "show" of the seats given. */
static void order_on_show(fixture_t *f, const char *user, const char *order_id,
                          const char *const *seats, uint32_t seat_count) {
    char hold_id[32];
    snprintf(hold_id, sizeof hold_id, "h_%s", order_id);
    uint32_t index;
    assert_int_equal(hf_core_hold(f->core,
                                  &(hf_hold_request_t){.event_id = "show",
                                                       .user_id = user,
                                                       .hold_id = hold_id,
                                                       .seat_ids = seats,
                                                       .seat_count = seat_count,
                                                       .ttl_ms = -1},
                                  T0, &index, &(hf_error_detail_t){0}),
                     HF_OK);
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, "pi_s", T0, &index), HF_OK);
}

/* A step bounded by its records too (the engine's HF_JOB_STEP_RECORDS): it ends after the
 * order that reached them, goes through one order at least, and running jobs share them. */
static void test_a_step_is_bounded_by_its_records(void **state) {
    fixture_t *f = *state;
    for (uint32_t n = 0; n < 12; n++) order_on_open(f, n, "pi_x", T0);
    uint32_t job_index;
    assert_int_equal(cancel(f, "open", "job_1", NULL, DAY_MS, T0 + 1, &job_index, NULL), HF_OK);
    /* No records to spend still goes through one order. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_job_step_bounded(f->core, HF_JOB_STEP_ORDERS, 0, T0 + 2), 1);
    uint32_t per_order = f->sink.count - 1; /* the step's own HF_MUTATION_JOB aside */
    assert_true(per_order >= 2);
    /* Two orders' records and one more: the third order reaches them, and the step ends. */
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hf_core_job_step_bounded(f->core, HF_JOB_STEP_ORDERS, 2 * per_order + 1, T0 + 3), 3);
    assert_int_equal(f->sink.count, 3 * per_order + 1);
    assert_int_equal(hf_core_job_at(f->core, job_index)->cursor, 4);
    /* The order limit still holds. */
    assert_int_equal(hf_core_job_step_bounded(f->core, 2, UINT64_MAX, T0 + 4), 2);
    assert_consistent(f, T0 + 4);
    /* A second job: the records are shared, one order's worth each. */
    order_on_show(f, "u1", "ord_s1", SEATS("FLOOR-A-1"));
    order_on_show(f, "u2", "ord_s2", SEATS("FLOOR-A-2"));
    uint32_t second;
    assert_int_equal(cancel(f, "show", "job_2", NULL, DAY_MS, T0 + 5, &second, NULL), HF_OK);
    assert_int_equal(hf_core_job_step_bounded(f->core, HF_JOB_STEP_ORDERS, 2, T0 + 6), 2);
    assert_int_equal(hf_core_job_at(f->core, job_index)->cursor, 7);
    assert_int_equal(hf_core_job_at(f->core, second)->cursor, 1);
    assert_consistent(f, T0 + 6);
}

/* Offers on rebook_to ("show2", the layout of "show"): the same seat ids, else the same section
 * and count, pools from the same pool; a commit accepts (the new order keeps the old total), a
 * release or a lapse refunds the old order. */
static void test_offers_and_how_they_settle(void **state) {
    fixture_t *f = *state;
    fx_event_t twin;
    fx_event_init(&twin, "show2", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&twin, "FLOOR", FLOOR_PRICE, 2, 30);
    fx_event_section(&twin, "BALC", BALC_PRICE, 1, 40);
    fx_event_pool(&twin, "GA", 10, GA_PRICE);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &twin.definition, T0, &detail), HF_OK);
    uint32_t index;
    /* FLOOR-A-3 is held on show2: the order of it gets another FLOOR seat. */
    assert_int_equal(
        hold_on(f, "show2", "x", "res_x", SEATS("FLOOR-A-3"), NULL, 0, -1, false, T0, &index, NULL),
        HF_OK);
    const char *ids[] = {"ord_1", "ord_2", "ord_3"};
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0, &index, NULL),
                     HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", ids[0], "pi_1", T0, &index), HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_2", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0, &index, NULL), HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_2", "u2", ids[1], "pi_2", T0, &index), HF_OK);
    assert_int_equal(
        hold(f, "u3", "res_3", NO_SEATS, POOLS({"GA", 2}), -1, false, T0, &index, NULL), HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_3", "u3", ids[2], "pi_3", T0, &index), HF_OK);
    uint32_t job_index;
    assert_int_equal(cancel(f, "show", "job_o", "show2", 60000, T0 + 1, &job_index, NULL), HF_OK);
    assert_int_equal(hf_core_job_step(f->core, HF_JOB_STEP_ORDERS, T0 + 2), 3);
    assert_consistent(f, T0 + 2);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->offered, 3);
    assert_int_equal(job->open, 3);
    assert_int_equal(job->status, HF_JOB_DONE);
    hf_job_outcome_t outcome;
    assert_true(hf_core_job_outcome_at(f->core, job, 0, &outcome));
    assert_int_equal(outcome.status, HF_JOB_OFFER_OFFERED);
    assert_non_null(outcome.hold);
    assert_int_equal(outcome.hold->total, 2 * FLOOR_PRICE);
    assert_int_equal(outcome.hold->expires_at_ms, T0 + 2 + 60000);
    assert_int_equal(seat_on(f, "show2", "FLOOR-A-1")->status, HF_SEAT_HELD);
    assert_int_equal(seat_on(f, "show2", "FLOOR-A-2")->status, HF_SEAT_HELD);
    /* A-3 was not free: the section's best available, a hold's best_available would pick. */
    assert_int_equal(seat_on(f, "show2", "FLOOR-A-15")->status, HF_SEAT_HELD);
    assert_int_equal(event_of(f, "show2")->pools[0].held, 2);
    char first[HF_SERVER_ID_SIZE + 1], second[HF_SERVER_ID_SIZE + 1];
    snprintf(first, sizeof first, "%s", outcome.hold->id);
    assert_true(hf_core_job_outcome_at(f->core, job, 1, &outcome));
    snprintf(second, sizeof second, "%s", outcome.hold->id);
    /* Accepted by its commit: no payment, the old total kept. */
    uint32_t new_index;
    assert_int_equal(hf_core_commit(f->core, first, "u1", "ord_new", NULL, T0 + 3, &new_index),
                     HF_OK);
    assert_consistent(f, T0 + 3);
    assert_int_equal(order_named(f, "ord_1")->status, HF_ORDER_EXCHANGED);
    assert_int_equal(hf_core_order_at(f->core, new_index)->total, 2 * FLOOR_PRICE);
    /* Released: the old order refunded. */
    assert_int_equal(hf_core_release(f->core, second, "u2", T0 + 4), HF_OK);
    assert_consistent(f, T0 + 4);
    assert_int_equal(order_named(f, "ord_2")->status, HF_ORDER_CANCELLED);
    assert_non_null(hf_core_refund_find(f->core, "ref_ord_2", NULL));
    /* Lapsed: refunded too. */
    hf_core_advance(f->core, T0 + 2 + 60000);
    assert_consistent(f, T0 + 2 + 60000);
    assert_int_equal(order_named(f, "ord_3")->status, HF_ORDER_CANCELLED);
    assert_int_equal(hf_core_refund_find(f->core, "ref_ord_3", NULL)->amount, 2 * GA_PRICE);
    job = hf_core_job_at(f->core, job_index);
    assert_int_equal(job->accepted, 1);
    assert_int_equal(job->refunded, 2);
    assert_int_equal(job->open, 0);
    assert_true(hf_core_job_outcome_at(f->core, job, 0, &outcome));
    assert_int_equal(outcome.status, HF_JOB_OFFER_ACCEPTED);
    assert_true(hf_core_job_outcome_at(f->core, job, 2, &outcome));
    assert_int_equal(outcome.status, HF_JOB_OFFER_REFUNDED);
}

/* The seats of the offer of the job's outcome at position, as "ID ID ...". */
static const char *offer_seats(fixture_t *f, const hf_job_t *job, uint32_t position) {
    static char text[256];
    hf_job_outcome_t outcome;
    assert_true(hf_core_job_outcome_at(f->core, job, position, &outcome));
    text[0] = '\0';
    if (!outcome.hold) return "refunded";
    uint32_t hold_index;
    assert_non_null(hf_core_hold_find(f->core, outcome.hold->id, &hold_index));
    const hf_event_t *target = event_of(f, "moved");
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    for (uint32_t i = 0; i < target->seat_count; i++) {
        if (target->seats[i].status != HF_SEAT_HELD || target->seats[i].owner != hold_index + 1)
            continue;
        hf_core_seat_id(target, i, seat_id);
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%s", used ? " " : "", seat_id);
    }
    return text;
}

/* The third choice: where neither the seat ids nor the section is free, the best section (in
 * listed order) whose price is no higher than the old seats'. An order's seats of each section
 * move as one group, together when they sat together (apart when no section has them
 * together); an order whose group finds nothing is refunded whole. */
static void test_offers_at_no_higher_price(void **state) {
    fixture_t *f = *state;
    fx_event_t moved;
    fx_event_init(&moved, "moved", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&moved, "BOX", FLOOR_PRICE + 1, 1, 4); /* dearer than FLOOR: never */
    fx_event_section(&moved, "STALLS", FLOOR_PRICE - 15000, 2, 3);
    fx_event_section(&moved, "BALC", BALC_PRICE, 1, 2);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &moved.definition, T0, &detail), HF_OK);
    uint32_t index;
    assert_int_equal(hold_on(f, "moved", "x", "res_x", SEATS("STALLS-B-2"), NULL, 0, -1, false, T0,
                             &index, NULL),
                     HF_OK);
    order_on_show(f, "u1", "ord_1", SEATS("FLOOR-A-2", "FLOOR-A-1")); /* together */
    order_on_show(f, "u2", "ord_2", SEATS("BALC-A-1"));
    order_on_show(f, "u3", "ord_3", SEATS("BALC-A-2", "FLOOR-B-1")); /* two sections */
    order_on_show(f, "u4", "ord_4", SEATS("BALC-A-3"));
    order_on_show(f, "u5", "ord_5", SEATS("FLOOR-A-10", "FLOOR-A-11"));
    order_on_show(f, "u6", "ord_6", SEATS("FLOOR-A-20", "FLOOR-B-20"));
    uint32_t job_index;
    assert_int_equal(cancel(f, "show", "job_p", "moved", 60000, T0 + 1, &job_index, NULL), HF_OK);
    assert_int_equal(hf_core_job_step(f->core, HF_JOB_STEP_ORDERS, T0 + 2), 6);
    assert_consistent(f, T0 + 2);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    /* No FLOOR on moved: STALLS, listed before BALC, the best block of two. */
    assert_string_equal(offer_seats(f, job, 0), "STALLS-A-1 STALLS-A-2");
    assert_string_equal(offer_seats(f, job, 1), "BALC-A-1"); /* its own id */
    /* BALC-A-2 on its own id; the FLOOR seat to STALLS's last seat of row A. */
    assert_string_equal(offer_seats(f, job, 2), "STALLS-A-3 BALC-A-2");
    /* BALC-A-3 is not on moved, BALC is full, and nothing cheaper is there. */
    assert_string_equal(offer_seats(f, job, 3), "refunded");
    /* No two together are left where FLOOR may go: two apart, around the held STALLS-B-2. */
    assert_string_equal(offer_seats(f, job, 4), "STALLS-B-1 STALLS-B-3");
    /* Only BOX is left, dearer: refunded, its seats with it. */
    assert_string_equal(offer_seats(f, job, 5), "refunded");
    assert_int_equal(seat_on(f, "moved", "BOX-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(job->offered, 4);
    assert_int_equal(job->refunded, 2);
    assert_int_equal(order_named(f, "ord_4")->status, HF_ORDER_CANCELLED);
    assert_int_equal(order_named(f, "ord_6")->status, HF_ORDER_CANCELLED);
    /* The cheaper seats keep the price paid: a difference of 0, the old total carried over. */
    hf_job_outcome_t outcome;
    assert_true(hf_core_job_outcome_at(f->core, job, 0, &outcome));
    assert_int_equal(outcome.hold->total, 2 * FLOOR_PRICE);
    char offer_id[HF_SERVER_ID_SIZE + 1];
    snprintf(offer_id, sizeof offer_id, "%s", outcome.hold->id);
    uint32_t new_index;
    assert_int_equal(hf_core_commit(f->core, offer_id, "u1", "ord_n1", NULL, T0 + 3, &new_index),
                     HF_OK);
    assert_consistent(f, T0 + 3);
    assert_int_equal(hf_core_order_at(f->core, new_index)->total, 2 * FLOOR_PRICE);
    assert_int_equal(order_named(f, "ord_1")->status, HF_ORDER_EXCHANGED);
}

/* An order's cheaper group chooses first: with one STALLS seat left and BALC full, the BALC
 * seat cannot go to STALLS (dearer) while the FLOOR seat could go to either. */
static void test_the_cheaper_group_chooses_first(void **state) {
    fixture_t *f = *state;
    fx_event_t moved;
    fx_event_init(&moved, "moved", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&moved, "STALLS", FLOOR_PRICE - 15000, 1, 1);
    fx_event_section(&moved, "CHEAP", BALC_PRICE - 1, 1, 1);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &moved.definition, T0, &detail), HF_OK);
    order_on_show(f, "u1", "ord_1", SEATS("FLOOR-A-1", "BALC-A-1"));
    uint32_t job_index;
    assert_int_equal(cancel(f, "show", "job_c", "moved", 60000, T0 + 1, &job_index, NULL), HF_OK);
    assert_int_equal(hf_core_job_step(f->core, HF_JOB_STEP_ORDERS, T0 + 2), 1);
    assert_consistent(f, T0 + 2);
    const hf_job_t *job = hf_core_job_at(f->core, job_index);
    /* BALC's seat to CHEAP (the only section at its price), FLOOR's to STALLS. */
    assert_string_equal(offer_seats(f, job, 0), "STALLS-A-1 CHEAP-A-1");
    assert_int_equal(job->offered, 1);
}

/* A restart: the job at its durable cursor, the orders handled before it cancelled, and the
 * rest still confirmed. The step goes on from the cursor, repeating nothing. */
static void test_restore_resumes_at_the_cursor(void **state) {
    fixture_t *f = *state;
    fx_sink_t sink;
    hf_core_t *core = fx_core_create(&sink, 64);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(core, &f->open.definition, T0, &detail), HF_OK);
    const char *order_ids[] = {"ord_a", "ord_b", "ord_c"};
    const char *seat_ids[] = {"S-A-1", "S-A-2", "S-A-3"};
    for (uint32_t n = 0; n < 3; n++) {
        const char *seats[] = {seat_ids[n]};
        hf_stored_order_t order = {
            .order_id = order_ids[n],
            .items = {.event_id = "open", .user_id = "u1", .seat_ids = seats, .seat_count = 1},
            .status = n == 0 ? HF_ORDER_CANCELLED : HF_ORDER_CONFIRMED,
            .created_at_ms = T0 + n,
            .total = 100,
            .payment_ref = "pi_r"};
        assert_int_equal(hf_core_restore_order(core, &order), HF_OK);
    }
    hf_stored_refund_t refund = {.refund_id = "ref_ord_a",
                                 .payment_intent_id = "pi_r",
                                 .amount = 100,
                                 .reason = HF_REFUND_EVENT_CANCELLED,
                                 .created_at_ms = T0 + 10,
                                 .event_id = "open",
                                 .order_id = "ord_a"};
    assert_int_equal(hf_core_restore_refund(core, &refund), HF_OK);
    hf_stored_job_t stored = {.job_id = "job_r",
                              .event_id = "open",
                              .offer_ttl_ms = DAY_MS,
                              .created_at_ms = T0 + 10,
                              .orders = 3,
                              .cursor = 1,
                              .refunded = 1,
                              .status = HF_JOB_RUNNING};
    assert_int_equal(hf_core_restore_job(core, &stored), HF_OK);
    assert_int_equal(hf_core_restore_job(core, &stored), HF_ERROR_INVALID_REQUEST);
    hf_stored_job_offer_t offer = {.job_id = "job_r",
                                   .order_id = "ord_a",
                                   .status = HF_JOB_OFFER_REFUNDED};
    assert_int_equal(hf_core_restore_job_offer(core, &offer), HF_OK);
    /* Outcomes come in order: one for an order before the last is refused. */
    assert_int_equal(hf_core_restore_job_offer(core, &offer), HF_ERROR_INVALID_REQUEST);
    hf_core_restore_finish(core);
    assert_true(hf_core_event(core, "open", NULL)->cancelled);
    assert_null(hf_core_check(core, T0 + 20));
    hf_hold_request_t request = {.event_id = "open",
                                 .user_id = "u2",
                                 .hold_id = "res_n",
                                 .seat_ids = (const char *[]){"S-B-1"},
                                 .seat_count = 1,
                                 .ttl_ms = -1};
    uint32_t index;
    assert_int_equal(fx_hold(core, &request, T0 + 20, &index, NULL), HF_ERROR_EVENT_CANCELLED);
    fx_sink_reset(&sink);
    assert_int_equal(hf_core_job_step(core, HF_JOB_STEP_ORDERS, T0 + 20), 2);
    assert_null(hf_core_check(core, T0 + 20));
    const hf_job_t *job = hf_core_job_find(core, "job_r", NULL);
    assert_int_equal(job->refunded, 3);
    assert_int_equal(job->status, HF_JOB_DONE);
    assert_int_equal(hf_core_job_outcome_count(job), 3);
    assert_int_equal(sink.by_type[HF_MUTATION_REFUND], 2);
    assert_int_equal(hf_core_refund_count(core), 3);
    fx_core_destroy(core, &sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cancel_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_closes_the_event_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_refund_each_order_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_step_is_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_step_is_bounded_by_its_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offers_and_how_they_settle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offers_at_no_higher_price, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_cheaper_group_chooses_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_resumes_at_the_cursor, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_jobs", tests, NULL, NULL);
}
