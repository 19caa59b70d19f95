/* Unit tests of the core (src/core/core.h), core.c: the sink, the seat and pool records only while streams want them, and the
 * numbers of changes that refusals, holds and orders rest on. Each asserts the resulting values and the
 * mutation records emitted (an error emits none); the fixture is core_cases.h. */
#include "core_cases.h"

/* ---- seat and pool records only while streams want them ---- */

/* With stream records off a hold and its release emit only the hold's own records, yet seat
 * versions, seat counts and pool counts move exactly as with them on; turned on again, the
 * next change reports the version that counted on in between. */
static void test_stream_records_off(void **state) {
    fixture_t *f = *state;
    hf_core_set_stream_records(f->core, false);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("BALC-A-7"), POOLS({"GA", 3}), -1, false, T0, NULL, NULL),
        HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 1), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 0);
    assert_int_equal(f->sink.total, 2);
    /* A new event's seats start at version 1; the hold and the release count 2 more. */
    assert_int_equal(seat_on(f, "show", "BALC-A-7")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);

    hf_core_set_stream_records(f->core, true);
    fx_sink_reset(&f->sink);
    assert_int_equal(
        hold(f, "u1", "res_2", SEATS("BALC-A-7"), POOLS({"GA", 3}), -1, false, T0 + 2, NULL, NULL),
        HF_OK);
    assert_seat_record(f, "BALC-A-7", HF_SEAT_HELD, 4);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(pool(f, "GA")->held, 3);
    assert_consistent(f, T0 + 3);
}

/* ---- what a refused hold rests on ---- */

static uint64_t refused_change(fixture_t *f, const char *const *seats, uint32_t count,
                               hf_time_ms_t now) {
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u9", "res_refused", seats, count, NULL, 0, -1, false, now, NULL, &detail),
        HF_ERROR_SEATS_UNAVAILABLE);
    return detail.observed_change;
}

/* A hold refused for taken seats names the newest change their states rest on: one of the
 * records of the hold that took them, of an extension that keeps them past their old expiry,
 * of the order that sold them. Only the seats asked for count. */
static void test_refusal_names_the_change_it_rests_on(void **state) {
    fixture_t *f = *state;
    uint64_t start = hf_core_change_count(f->core);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NULL, 0, -1, false, T0, NULL, NULL),
                     HF_OK);
    uint64_t first = hf_core_change_count(f->core);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NULL, 0, -1, false, T0, NULL, NULL),
                     HF_OK);
    uint64_t second = hf_core_change_count(f->core);
    uint64_t change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 1);
    assert_true(change > start && change <= first);
    assert_int_equal(refused_change(f, SEATS("FLOOR-A-1", "FLOOR-A-3"), T0 + 1), change);
    change = refused_change(f, SEATS("FLOOR-A-2", "FLOOR-A-1"), T0 + 1);
    assert_true(change > first && change <= second);
    /* Refusals change nothing. */
    assert_int_equal(hf_core_change_count(f->core), second);

    bool capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", -1, T0 + 2, &capped), HF_OK);
    uint64_t extended = hf_core_change_count(f->core);
    change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 3);
    assert_true(change > second && change <= extended);

    commit(f, "res_1", "u1", "ord_1", T0 + 4);
    uint64_t sold = hf_core_change_count(f->core);
    change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 5);
    assert_true(change > extended && change <= sold);
    change = refused_change(f, SEATS("FLOOR-A-2"), T0 + 5);
    assert_true(change > first && change <= second);
    assert_consistent(f, T0 + 6);
}

/* A hold's, an order's and a seat's newest record: what a read of them rests on. Seat records
 * (on in these tests, as while a stream is open) may follow it, so it lies within each step. */
static void assert_within(uint64_t change, uint64_t after, uint64_t up_to) {
    if (change <= after || change > up_to)
        fail_msg("change %llu outside (%llu, %llu]", (unsigned long long)change,
                 (unsigned long long)after, (unsigned long long)up_to);
}

static void test_hold_and_order_name_their_newest_change(void **state) {
    fixture_t *f = *state;
    uint32_t kept, sold;
    /* A seat nothing has touched rests on its event's creation: "show" was made first (change
     * 1), "open" second. */
    const hf_event_t *show = event_of(f, "show");
    uint32_t seat;
    assert_true(hf_core_seat_find(show, "FLOOR-A-1", &seat));
    assert_int_equal(hf_core_seat_change(show, seat), 1);
    assert_int_equal(hf_core_seat_change(event_of(f, "open"), 0), 2);
    uint64_t start = hf_core_change_count(f->core);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NULL, 0, -1, false, T0, &kept, NULL), HF_OK);
    uint64_t created = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), start, created);
    assert_within(hf_core_seat_change(show, seat), start, created);
    uint64_t kept_change = hf_core_hold_change(f->core, kept);
    assert_int_equal(
        hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NULL, 0, -1, false, T0, &sold, NULL), HF_OK);
    uint64_t second = hf_core_change_count(f->core);
    /* Another hold's records leave this one's alone. */
    assert_int_equal(hf_core_hold_change(f->core, kept), kept_change);
    bool capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", -1, T0 + 1, &capped), HF_OK);
    uint64_t extended = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), second, extended);
    /* A refusal about the hold changes nothing, and a repeated release emits nothing. */
    assert_int_equal(hf_core_release(f->core, "res_1", "u9", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 2), HF_OK);
    uint64_t released = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), extended, released);
    kept_change = hf_core_hold_change(f->core, kept);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 3), HF_OK);
    assert_int_equal(hf_core_change_count(f->core), released);
    assert_int_equal(hf_core_hold_change(f->core, kept), kept_change);
    /* A commit: the hold's newest record is its confirmation, written after the order's. */
    uint32_t order = commit(f, "res_2", "u2", "ord_1", T0 + 4);
    uint64_t committed = hf_core_change_count(f->core);
    assert_within(hf_core_order_change(f->core, order), released, committed);
    assert_within(hf_core_hold_change(f->core, sold), hf_core_order_change(f->core, order),
                  committed);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_300", T0 + 5), HF_OK);
    assert_within(hf_core_order_change(f->core, order), committed, hf_core_change_count(f->core));
    /* Expiry is the hold's record too. */
    uint32_t lapsing;
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NULL, 0, 1000, false, T0 + 6, &lapsing, NULL),
        HF_OK);
    uint64_t before = hf_core_change_count(f->core);
    hf_core_advance(f->core, T0 + 1006);
    assert_within(hf_core_hold_change(f->core, lapsing), before, hf_core_change_count(f->core));
    assert_true(hf_core_seat_find(show, "FLOOR-A-3", &seat));
    assert_within(hf_core_seat_change(show, seat), before, hf_core_change_count(f->core));
    assert_consistent(f, T0 + 1007);
}

static void test_set_sink(void **state) {
    fixture_t *f = *state;
    fx_sink_t other;
    fx_sink_init(&other, 16);
    hf_core_set_sink(f->core, fx_sink_of(&other));
    hf_error_detail_t detail;
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, &detail), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(other.total, 2);
    hf_core_set_sink(f->core, fx_sink_of(&f->sink));
    fx_sink_free(&other);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stream_records_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_names_the_change_it_rests_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_and_order_name_their_newest_change, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_set_sink, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_records", tests, NULL, NULL);
}
