/* Unit tests of waitlists in the core (core/waitlist/, API.md section 14): the setting, joins
 * (one entry per user and event, positions, the checks), freed seats and units offered in the
 * step that freed them to the first entry they can fill (adjacent seats, entries that cannot be
 * filled keeping their place), offers fulfilled, lapsed and cancelled, and the matching against
 * a brute-force model over random operations. The fixture is core_cases.h's ("open": section S
 * of 2 rows of 20 seats, pool P of 100, no user limit, 10 items per hold). */
#include <stdio.h>

#include "core_cases.h"
#include "core/internal.h" /* a hold's items */

#define OFFER_TTL INT64_C(60000)

static void configure(fixture_t *f) {
    assert_int_equal(hf_core_waitlist_configure(f->core, "open", true, OFFER_TTL), HF_OK);
}

static hf_error_t join(fixture_t *f, const char *user, const char *id, const char *section,
                       const char *pool, uint32_t quantity, hf_time_ms_t now,
                       hf_waitlist_view_t *view, bool *existing) {
    hf_waitlist_request_t request = {.event_id = "open",
                                     .user_id = user,
                                     .waitlist_id = id,
                                     .section = section,
                                     .pool = pool,
                                     .quantity = quantity};
    return hf_core_waitlist_join(f->core, &request, now, view, existing);
}

static hf_waitlist_view_t entry(fixture_t *f, const char *id) {
    hf_waitlist_view_t view;
    assert_int_equal(hf_core_waitlist_get(f->core, "open", id, &view), HF_OK);
    return view;
}

/* Every seat of S held by "u0": res_h0 S-A-1, res_h1 S-A-2..3, res_h2 S-A-4..13, res_h3
 * S-A-14..20, res_h4 S-B-1..10, res_h5 S-B-11..20. */
static void sell_out(fixture_t *f) {
    static const struct {
        char row;
        uint32_t first, count;
    } HOLDS[] = {{'A', 1, 1}, {'A', 2, 2}, {'A', 4, 10}, {'A', 14, 7}, {'B', 1, 10}, {'B', 11, 10}};
    for (uint32_t h = 0; h < 6; h++) {
        char ids[10][16], hold_id[16];
        const char *seats[10];
        for (uint32_t i = 0; i < HOLDS[h].count; i++) {
            snprintf(ids[i], sizeof ids[i], "S-%c-%u", HOLDS[h].row, HOLDS[h].first + i);
            seats[i] = ids[i];
        }
        snprintf(hold_id, sizeof hold_id, "res_h%u", h);
        uint32_t index;
        assert_int_equal(hold_on(f, "open", "u0", hold_id, seats, HOLDS[h].count, NO_POOLS, -1,
                                 false, T0, &index, NULL),
                         HF_OK);
    }
}

static uint8_t status_of(fixture_t *f, const char *id) { return entry(f, id).status; }

static void test_setting_and_join_checks(void **state) {
    fixture_t *f = *state;
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing),
                     HF_ERROR_WAITLIST_DISABLED);
    configure(f);
    assert_int_equal(join(f, "u1", "w_1", "NOPE", NULL, 1, T0, &view, &existing),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_int_equal(join(f, "u1", "w_1", NULL, "NOPE", 1, T0, &view, &existing),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 0, T0, &view, &existing),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 11, T0, &view, &existing),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 2, T0, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.status, HF_WAITLIST_WAITING);
    assert_int_equal(view.position, 1);
    /* Again for the same user and event: the same entry, whatever the new request asks. */
    assert_int_equal(join(f, "u1", "w_other", NULL, "P", 3, T0, &view, &existing), HF_OK);
    assert_true(existing);
    assert_string_equal(view.waitlist_id, "w_1");
    assert_int_equal(view.quantity, 2);
    assert_int_equal(hf_core_waitlist_get(f->core, "open", "w_other", &view),
                     HF_ERROR_WAITLIST_NOT_FOUND);
    assert_int_equal(hf_core_waitlist_get(f->core, "show", "w_1", &view),
                     HF_ERROR_WAITLIST_NOT_FOUND);
}

static void test_positions_and_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_2", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u3", "w_3", NULL, "P", 1, T0, &view, &existing), HF_OK);
    assert_int_equal(view.position, 3);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u1", T0, &view),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", T0, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(entry(f, "w_3").position, 2);
    assert_int_equal(entry(f, "w_1").position, 1);
    /* A done entry answers as it is; the user may join again, at the back. */
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", T0, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(join(f, "u2", "w_2b", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.position, 3);
    hf_waitlist_view_t views[4];
    bool more;
    assert_int_equal(hf_core_waitlist_list(f->core, "open", false, 0, -1, 2, views, &more), 2);
    assert_true(more);
    assert_string_equal(views[1].waitlist_id, "w_2");
    assert_int_equal(hf_core_waitlist_list(f->core, "open", true, HF_WAITLIST_WAITING,
                                           (int64_t)views[1].sequence, 4, views, &more),
                     2);
    assert_false(more);
    assert_string_equal(views[0].waitlist_id, "w_3");
    assert_string_equal(views[1].waitlist_id, "w_2b");
}

/* Entries w_big (3 seats of S) and w_one (1 seat, any section) on a sold-out S: one freed
 * seat skips w_big, which keeps its place, and goes to w_one; two more are still too few for
 * w_big; ten more give it 3 adjacent ones and the other 9 go back on sale. */
static void test_first_fillable_and_adjacency(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_big", "S", NULL, 3, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_one", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_WAITING);
    assert_int_equal(entry(f, "w_big").position, 1);
    view = entry(f, "w_one");
    assert_int_equal(view.status, HF_WAITLIST_OFFERED);
    assert_int_equal(view.expires_at_ms, T0 + 1 + OFFER_TTL);
    assert_string_equal(view.reservation_id, "res_one");
    uint32_t index;
    const hf_hold_t *offer = hf_core_hold_find(f->core, "res_one", &index);
    assert_int_equal(offer->seat_count, 1);
    assert_string_equal(hf_core_hold_waitlist_id(f->core, index), "w_one");
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    assert_int_equal(event_of(f, "open")->counts.available, 0);

    assert_int_equal(hf_core_release(f->core, "res_h1", "u0", T0 + 2), HF_OK);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_WAITING);
    assert_int_equal(event_of(f, "open")->counts.available, 2);
    assert_int_equal(hf_core_release(f->core, "res_h2", "u0", T0 + 3), HF_OK);
    assert_consistent(f, T0 + 3);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_OFFERED);
    offer = hf_core_hold_find(f->core, "res_big", &index);
    assert_int_equal(offer->seat_count, 3);
    const hf_item_t *items = f->core->items + offer->item_offset;
    for (uint32_t i = 1; i < 3; i++) assert_int_equal(items[i].index, items[0].index + i);
    assert_int_equal(event_of(f, "open")->counts.available, 9);
}

/* An offer that lapses makes its entry lapsed and goes to the next entry; a committed offer
 * is fulfilled; a cancelled offered entry releases its hold to the next. */
static void test_lapse_commit_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_2", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u3", "w_3", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_OFFERED);
    assert_int_equal(entry(f, "w_2").position, 1);
    hf_core_advance(f->core, T0 + 1 + OFFER_TTL);
    assert_consistent(f, T0 + 1 + OFFER_TTL);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_LAPSED);
    assert_int_equal(status_of(f, "w_2"), HF_WAITLIST_OFFERED);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    hf_time_ms_t now = T0 + 2 + OFFER_TTL;
    hf_core_advance(f->core, now);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", now, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(hf_core_hold_find(f->core, "res_2", NULL)->status, HF_HOLD_RELEASED);
    assert_int_equal(status_of(f, "w_3"), HF_WAITLIST_OFFERED);
    uint32_t index;
    assert_int_equal(hf_core_commit(f->core, "res_3", "u3", "ord_3", NULL, now, &index), HF_OK);
    assert_int_equal(status_of(f, "w_3"), HF_WAITLIST_FULFILLED);
    assert_consistent(f, now);
    /* The lapsed user joins again, at the back. */
    assert_int_equal(join(f, "u1", "w_1b", "S", NULL, 1, now, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.position, 1);
}

/* Pool units: a cancelled order's units go to the first entry they can fill. */
static void test_pool_units_from_a_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    uint32_t index;
    assert_int_equal(hold_on(f, "open", "u0", "res_all", NO_SEATS, POOLS({"P", 10}), -1, false, T0,
                             &index, NULL),
                     HF_OK);
    for (uint32_t i = 0; i < 9; i++) {
        char hold_id[16];
        snprintf(hold_id, sizeof hold_id, "res_p%u", i);
        assert_int_equal(hold_on(f, "open", "u9", hold_id, NO_SEATS, POOLS({"P", 10}), -1, false,
                                 T0, &index, NULL),
                         HF_OK);
    }
    assert_int_equal(hf_core_commit(f->core, "res_all", "u0", "ord_all", NULL, T0, &index), HF_OK);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_many", NULL, "P", 10, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_few", NULL, "P", 4, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_all", "u0", NULL, T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(status_of(f, "w_many"), HF_WAITLIST_OFFERED);
    assert_int_equal(status_of(f, "w_few"), HF_WAITLIST_WAITING);
    const hf_event_t *event = event_of(f, "open");
    assert_int_equal(event->pools[0].held, 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setting_and_join_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_positions_and_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_fillable_and_adjacency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lapse_commit_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_units_from_a_cancel, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_waitlist", tests, NULL, NULL);
}
