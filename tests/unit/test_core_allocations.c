/* Unit tests of allocations in the core (core/allocation/, API.md section 14): inventory set
 * aside from free seats and units only, skipped by the public (named seats, best_available,
 * pools), taken by holds and bookings naming the allocation, given back to it when a hold is
 * released or lapses and an order is cancelled, released to the public at once when free and
 * once they come free when held or sold, restored from its stored form, and the invariants of
 * hf_core_check after every step. The fixture is core_cases.h's. */
#include "core_cases.h"

static hf_error_t allocate(fixture_t *f, const char *id, const char *const *seats,
                           uint32_t seat_count, const hf_pool_request_t *pools, uint32_t pool_count,
                           uint32_t best_count, hf_time_ms_t now, hf_error_detail_t *detail) {
    hf_allocation_request_t request = {.event_id = "show",
                                       .allocation_id = id,
                                       .seat_ids = seats,
                                       .seat_count = seat_count,
                                       .pools = pools,
                                       .pool_count = pool_count,
                                       .best_count = best_count,
                                       .best_section = best_count ? "FLOOR" : NULL,
                                       .best_adjacent = true};
    static hf_error_detail_t scratch;
    uint32_t index;
    memset(detail ? detail : &scratch, 0, sizeof scratch);
    hf_error_t error = hf_core_allocation_create(f->core, &request, now, &index,
                                                 detail ? detail : &scratch);
    assert_consistent(f, now);
    return error;
}

static hf_error_t release(fixture_t *f, const char *id, const char *const *seats,
                          uint32_t seat_count, const hf_pool_request_t *pools, uint32_t pool_count,
                          hf_time_ms_t now) {
    hf_allocation_request_t request = {.event_id = "show",
                                       .allocation_id = id,
                                       .seat_ids = seats,
                                       .seat_count = seat_count,
                                       .pools = pools,
                                       .pool_count = pool_count};
    static hf_error_detail_t detail;
    uint32_t index;
    hf_error_t error = hf_core_allocation_release(f->core, &request, now, &index, &detail);
    assert_consistent(f, now);
    return error;
}

/* A hold of the allocation (NULL: the public's) of the seats, pools and best seats. */
static hf_error_t hold_of_allocation(fixture_t *f, const char *allocation, const char *hold_id,
                                     const char *const *seats, uint32_t seat_count,
                                     const hf_pool_request_t *pools, uint32_t pool_count,
                                     uint32_t best_count, hf_time_ms_t now) {
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u1",
                                 .hold_id = hold_id,
                                 .seat_ids = seats,
                                 .seat_count = seat_count,
                                 .pools = pools,
                                 .pool_count = pool_count,
                                 .ttl_ms = -1,
                                 .best_count = best_count,
                                 .best_adjacent = true,
                                 .allocation_id = allocation};
    hf_error_t error = fx_hold(f->core, &request, now, NULL, NULL);
    assert_consistent(f, now);
    return error;
}

static hf_allocation_view_t view_of(fixture_t *f, const char *id) {
    uint32_t event_index, index;
    assert_non_null(hf_core_event(f->core, "show", &event_index));
    assert_true(hf_core_allocation_find(f->core, event_index, id, &index));
    hf_allocation_view_t view;
    hf_core_allocation_view(f->core, index, &view);
    return view;
}

static hf_allocation_pool_view_t line_of(fixture_t *f, const char *id, uint32_t line) {
    uint32_t event_index, index;
    hf_core_event(f->core, "show", &event_index);
    assert_true(hf_core_allocation_find(f->core, event_index, id, &index));
    hf_allocation_pool_view_t view;
    hf_core_allocation_pool(f->core, index, line, &view);
    return view;
}

static void test_only_free_inventory_is_set_aside(void **state) {
    fixture_t *f = *state;
    assert_int_equal(
        hold(f, "u9", "res_p", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, NULL), HF_OK);
    hf_error_detail_t detail;
    assert_int_equal(
        allocate(f, "amex", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, 0, T0 + 1, &detail),
        HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 1, (const uint32_t[]){1}, &detail);
    assert_int_equal(allocate(f, "amex", NO_SEATS, POOLS({"GA", 11}), 0, T0 + 1, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.available, 10);
    assert_int_equal(allocate(f, "amex", SEATS("NOPE-A-1"), NO_POOLS, 0, T0 + 1, NULL),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_int_equal(allocate(f, "bad-id", SEATS("FLOOR-A-1"), NO_POOLS, 0, T0 + 1, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(allocate(f, "amex", NO_SEATS, NO_POOLS, 0, T0 + 1, NULL),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(
        allocate(f, "amex", SEATS("FLOOR-A-1", "FLOOR-A-1"), NO_POOLS, 0, T0 + 1, NULL),
        HF_ERROR_INVALID_REQUEST);
    assert_int_equal(allocate(f, "amex", SEATS("FLOOR-A-1"), POOLS({"GA", 4}), 0, T0 + 1, NULL),
                     HF_OK);
    assert_int_equal(allocate(f, "amex", SEATS("FLOOR-A-3"), NO_POOLS, 0, T0 + 2, NULL),
                     HF_ERROR_ALLOCATION_EXISTS);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_ALLOCATED);
    const hf_event_t *event = event_of(f, "show");
    assert_int_equal(event->counts.allocated, 1);
    assert_int_equal(event->counts.available, 30 + 30 + 40 - 2);
    assert_int_equal(pool(f, "GA")->allocated, 4);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 6);
    hf_allocation_view_t view = view_of(f, "amex");
    assert_counts(view.seats, 1, 0, 0);
    assert_int_equal(line_of(f, "amex", 0).available, 4);
}

static void test_the_public_skips_allocated_inventory(void **state) {
    fixture_t *f = *state;
    /* Row A's middle block set aside: best_available for the public goes around it. */
    assert_int_equal(allocate(f, "guests", NO_SEATS, POOLS({"GA", 8}), 30, T0, NULL), HF_OK);
    assert_int_equal(view_of(f, "guests").seat_count, 30);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-15"), NO_POOLS, -1, false, T0 + 1, NULL, NULL),
        HF_ERROR_SEATS_UNAVAILABLE);
    uint32_t index;
    assert_int_equal(hold_of_allocation(f, NULL, "res_2", NO_SEATS, NO_POOLS, 2, T0 + 2), HF_OK);
    assert_non_null(hf_core_hold_find(f->core, "res_2", &index));
    const hf_hold_t *held = hf_core_hold_at(f->core, index);
    const hf_item_t *items = hf_core_items(f->core, held->item_offset);
    const hf_event_t *event = event_of(f, "show");
    for (uint32_t i = 0; i < held->seat_count; i++)
        assert_string_equal(event->rows[event->seats[items[i].index].row].id, "B");
    assert_int_equal(
        hold(f, "u2", "res_3", NO_SEATS, POOLS({"GA", 3}), -1, false, T0 + 3, NULL, NULL),
        HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(
        hold(f, "u2", "res_4", NO_SEATS, POOLS({"GA", 2}), -1, false, T0 + 4, NULL, NULL), HF_OK);
}

static void test_holds_of_the_allocation_take_only_its_own(void **state) {
    fixture_t *f = *state;
    assert_int_equal(allocate(f, "amex", SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3"),
                              POOLS({"GA", 3}), 0, T0, NULL),
                     HF_OK);
    assert_int_equal(
        hold_of_allocation(f, "nope", "res_0", SEATS("FLOOR-A-1"), NO_POOLS, 0, T0 + 1),
        HF_ERROR_ALLOCATION_NOT_FOUND);
    /* A public seat is not the allocation's. */
    assert_int_equal(
        hold_of_allocation(f, "amex", "res_0", SEATS("FLOOR-A-4"), NO_POOLS, 0, T0 + 1),
        HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(hold_of_allocation(f, "amex", "res_0", NO_SEATS, POOLS({"GA", 4}), 0, T0 + 1),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(hold_of_allocation(f, "amex", "res_1", NO_SEATS, POOLS({"GA", 2}), 2, T0 + 2),
                     HF_OK);
    const hf_hold_t *held = hold_by_id(f, "res_1");
    const hf_item_t *items = hf_core_items(f->core, held->item_offset);
    assert_int_equal(hf_core_seat_allocation(f->core, event_of(f, "show"), items[0].index), 1);
    hf_allocation_view_t view = view_of(f, "amex");
    assert_counts(view.seats, 1, 2, 0);
    assert_int_equal(line_of(f, "amex", 0).held, 2);
    assert_int_equal(line_of(f, "amex", 0).available, 1);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 7);
    /* Sold, then cancelled: back to the allocation, not to the public. */
    commit(f, "res_1", "u1", "ord_1", T0 + 3);
    assert_counts(view_of(f, "amex").seats, 1, 0, 2);
    assert_int_equal(line_of(f, "amex", 0).sold, 2);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1", T0 + 4), HF_OK);
    assert_consistent(f, T0 + 4);
    assert_counts(view_of(f, "amex").seats, 3, 0, 0);
    assert_int_equal(line_of(f, "amex", 0).available, 3);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 7);
    assert_int_equal(event_of(f, "show")->counts.allocated, 3);
}

static void test_a_lapsed_hold_gives_back_to_the_allocation(void **state) {
    fixture_t *f = *state;
    assert_int_equal(allocate(f, "amex", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), 0, T0, NULL),
                     HF_OK);
    assert_int_equal(
        hold_of_allocation(f, "amex", "res_1", SEATS("FLOOR-A-1"), POOLS({"VIP", 1}), 0, T0 + 1),
        HF_OK);
    hf_core_advance(f->core, T0 + 1 + TTL);
    assert_consistent(f, T0 + 1 + TTL);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_ALLOCATED);
    assert_int_equal(line_of(f, "amex", 0).available, 2);
    assert_int_equal(hf_core_pool_available(pool(f, "VIP")), 0);
}

static void test_release_while_held(void **state) {
    fixture_t *f = *state;
    assert_int_equal(
        allocate(f, "amex", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 4}), 0, T0, NULL), HF_OK);
    assert_int_equal(
        hold_of_allocation(f, "amex", "res_1", SEATS("FLOOR-A-1"), POOLS({"GA", 3}), 0, T0 + 1),
        HF_OK);
    /* A seat not the allocation's, and more units than it keeps, are refused. */
    assert_int_equal(release(f, "amex", SEATS("FLOOR-A-3"), NO_POOLS, T0 + 2),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(release(f, "amex", NO_SEATS, POOLS({"GA", 5}), T0 + 2),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(release(f, "nope", NO_SEATS, NO_POOLS, T0 + 2), HF_ERROR_ALLOCATION_NOT_FOUND);
    /* All of it: the free seat and unit now, the held ones once they come free. */
    assert_int_equal(release(f, "amex", NO_SEATS, NO_POOLS, T0 + 3), HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_HELD);
    assert_counts(view_of(f, "amex").seats, 0, 1, 0);
    assert_int_equal(line_of(f, "amex", 0).release_pending, 3);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 7);
    /* Committed: still the allocation's; cancelled: the public's. */
    commit(f, "res_1", "u1", "ord_1", T0 + 4);
    assert_counts(view_of(f, "amex").seats, 0, 0, 1);
    assert_int_equal(line_of(f, "amex", 0).sold, 3);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1", T0 + 5), HF_OK);
    assert_consistent(f, T0 + 5);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(view_of(f, "amex").seat_count, 0);
    assert_int_equal(line_of(f, "amex", 0).release_pending, 0);
    assert_int_equal(line_of(f, "amex", 0).available, 0);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 10);
    assert_int_equal(event_of(f, "show")->counts.allocated, 0);
}

static void test_partial_release(void **state) {
    fixture_t *f = *state;
    assert_int_equal(
        allocate(f, "amex", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 4}), 0, T0, NULL), HF_OK);
    assert_int_equal(hold_of_allocation(f, "amex", "res_1", NO_SEATS, POOLS({"GA", 3}), 0, T0 + 1),
                     HF_OK);
    assert_int_equal(release(f, "amex", SEATS("FLOOR-A-2"), POOLS({"GA", 2}), T0 + 2), HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_ALLOCATED);
    /* One free unit went at once, one more when the hold's come free. */
    assert_int_equal(line_of(f, "amex", 0).available, 0);
    assert_int_equal(line_of(f, "amex", 0).release_pending, 1);
    assert_int_equal(release(f, "amex", SEATS("FLOOR-A-2"), NO_POOLS, T0 + 3),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 4), HF_OK);
    assert_consistent(f, T0 + 4);
    assert_int_equal(line_of(f, "amex", 0).available, 2);
    assert_int_equal(hf_core_pool_available(pool(f, "GA")), 8);
}

static void test_bookings_of_the_allocation(void **state) {
    fixture_t *f = *state;
    assert_int_equal(allocate(f, "amex", SEATS("FLOOR-A-1"), NO_POOLS, 0, T0, NULL), HF_OK);
    uint32_t version = seat(f, "FLOOR-A-1")->version;
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u1",
                                 .seat_ids = (const char *const[]){"FLOOR-A-1"},
                                 .seat_count = 1,
                                 .seat_versions = &version,
                                 .ttl_ms = -1};
    uint32_t index;
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_book(f->core, &request, "ord_p", NULL, T0 + 1, &index, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    request.allocation_id = "amex";
    assert_int_equal(hf_core_book(f->core, &request, "ord_a", NULL, T0 + 1, &index, &detail),
                     HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(hf_core_order_at(f->core, index)->allocation, 1);
    assert_counts(view_of(f, "amex").seats, 0, 0, 1);
}

/* A layout change (rows appended to a section before another one) moves seat indexes: the
 * allocation's seats and index move with them. A second release of everything changes
 * nothing and records nothing; an exchange hold names no allocation. */
static void test_layout_change_and_repeats(void **state) {
    fixture_t *f = *state;
    assert_int_equal(allocate(f, "amex", SEATS("BALC-A-3"), NO_POOLS, 0, T0, NULL), HF_OK);
    hf_row_definition_t row_c[] = {{"C", 30}};
    hf_section_definition_t floor_c = {.id = "FLOOR",
                                       .price = HF_UNCHANGED,
                                       .row_count = 1,
                                       .rows = row_c};
    hf_event_definition_t patch = {.id = "show", .section_count = 1, .sections = &floor_c};
    bool layout = false;
    hf_error_detail_t detail = {0};
    assert_int_equal(
        hf_core_event_update(f->core, &patch, HF_EVENT_MEMBER_SECTIONS, T0 + 1, &layout, &detail),
        HF_OK);
    assert_true(layout);
    assert_consistent(f, T0 + 1);
    assert_int_equal(seat(f, "BALC-A-3")->status, HF_SEAT_ALLOCATED);
    assert_int_equal(hold_of_allocation(f, "amex", "res_1", SEATS("BALC-A-3"), NO_POOLS, 0, T0 + 2),
                     HF_OK);
    assert_int_equal(release(f, "amex", NO_SEATS, NO_POOLS, T0 + 3), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(release(f, "amex", NO_SEATS, NO_POOLS, T0 + 4), HF_OK);
    assert_no_mutation(f);
    hf_hold_request_t exchange = {.event_id = "show",
                                  .user_id = "u1",
                                  .hold_id = "res_x",
                                  .seat_ids = (const char *const[]){"FLOOR-A-1"},
                                  .seat_count = 1,
                                  .ttl_ms = -1,
                                  .exchange_for = "ord_none",
                                  .allocation_id = "amex"};
    assert_int_equal(fx_hold(f->core, &exchange, T0 + 5, NULL, NULL), HF_ERROR_INVALID_REQUEST);
}

/* The stored allocation, then a hold of it, loaded into a new core: the same counts. */
static void test_restore(void **state) {
    fixture_t *f = *state;
    fx_sink_t sink;
    hf_core_t *core = fx_core_create(&sink, 64);
    assert_int_equal(hf_core_restore_event(core, &f->show.definition, T0), HF_OK);
    hf_stored_allocation_seat_t seats[] = {{"FLOOR-A-1", false}, {"FLOOR-A-2", true}};
    hf_stored_allocation_pool_t pools[] = {{"GA", 4, 1}};
    hf_stored_allocation_t stored = {.event_id = "show",
                                     .allocation_id = "amex",
                                     .seats = seats,
                                     .seat_count = 2,
                                     .pools = pools,
                                     .pool_count = 1,
                                     .created_at_ms = T0};
    assert_int_equal(hf_core_restore_allocation(core, &stored), HF_OK);
    assert_int_equal(hf_core_restore_allocation(core, &stored), HF_ERROR_INVALID_REQUEST);
    const char *held_seats[] = {"FLOOR-A-2"};
    hf_pool_request_t units[] = {{"GA", 2}};
    hf_stored_hold_t hold_row = {.request = {.event_id = "show",
                                             .user_id = "u1",
                                             .hold_id = "res_1",
                                             .seat_ids = held_seats,
                                             .seat_count = 1,
                                             .pools = units,
                                             .pool_count = 1,
                                             .allocation_id = "amex"},
                                 .status = HF_HOLD_HELD,
                                 .created_at_ms = T0,
                                 .expires_at_ms = T0 + TTL,
                                 .total = FLOOR_PRICE + 2 * GA_PRICE};
    assert_int_equal(hf_core_restore_hold(core, &hold_row), HF_OK);
    fx_assert_consistent(core, T0);
    const hf_event_t *event = fx_event_of(core, "show");
    assert_int_equal(event->counts.allocated, 1);
    assert_int_equal(event->pools[0].allocated, 2);
    /* The released seat and unit come free for the public when the hold lapses. */
    hf_core_advance(core, T0 + TTL);
    fx_assert_consistent(core, T0 + TTL);
    assert_int_equal(fx_seat_of(core, "show", "FLOOR-A-2")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(event->pools[0].allocated, 3);
    assert_int_equal(hf_core_pool_available(&event->pools[0]), 7);
    fx_core_destroy(core, &sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_only_free_inventory_is_set_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_public_skips_allocated_inventory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holds_of_the_allocation_take_only_its_own, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_lapsed_hold_gives_back_to_the_allocation, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_release_while_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bookings_of_the_allocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layout_change_and_repeats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_allocations", tests, NULL, NULL);
}
