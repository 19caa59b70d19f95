/* Unit tests of changing and deleting events in the core (core.h, hf_core_event_update and
 * hf_core_event_delete): each member, prices for new holds only, capacities against what is
 * taken, the tables grown with seat indexes moved under live holds and orders, the checks
 * and faults of a creation, the records emitted (none for a refusal or a change of nothing),
 * and deleted slots taken again. Every test ends with hf_core_check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/queue.h"
#include "core_fixtures.h"

#define T0 INT64_C(1800000000000)
#define TTL INT64_C(600000)

typedef struct fixture {
    hf_core_t *core;
    fx_sink_t sink;
    fx_event_t show;
} fixture_t;

/* "show": FLOOR rows A, B of 4 seats at 1000; BALC row A of 2 at 500; pool GA of 5 at 100. */
static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->core = fx_core_create(&f->sink, 4096);
    fx_event_init(&f->show, "show", TTL, 3 * TTL, 0, 10);
    fx_event_section(&f->show, "FLOOR", 1000, 2, 4);
    fx_event_section(&f->show, "BALC", 500, 1, 2);
    fx_event_pool(&f->show, "GA", 5, 100);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &f->show.definition, T0, &detail), HF_OK);
    fx_sink_reset(&f->sink);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    fx_assert_consistent(f->core, T0 + 1000);
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

/* A patch of "show" with nothing in it yet: members are added by the tests. */
typedef struct patch {
    hf_event_definition_t definition;
    hf_section_definition_t sections[4];
    hf_row_definition_t rows[4][4];
    hf_pool_definition_t pools[4];
    uint32_t members;
} patch_t;

static void patch_init(patch_t *patch) {
    memset(patch, 0, sizeof *patch);
    snprintf(patch->definition.id, sizeof patch->definition.id, "show");
    patch->definition.sections = patch->sections;
    patch->definition.pools = patch->pools;
}

/* A listed section: price HF_UNCHANGED leaves it; rows named from first, of seats each. */
static void patch_section(patch_t *patch, const char *id, int64_t price, uint32_t rows, char first,
                          uint32_t seats) {
    uint32_t s = patch->definition.section_count++;
    hf_section_definition_t *section = &patch->sections[s];
    snprintf(section->id, sizeof section->id, "%s", id);
    section->price = price;
    section->row_count = rows;
    section->rows = patch->rows[s];
    for (uint32_t r = 0; r < rows; r++) {
        snprintf(patch->rows[s][r].id, sizeof patch->rows[s][r].id, "%c", (char)(first + r));
        patch->rows[s][r].seats = seats;
    }
    patch->members |= HF_EVENT_MEMBER_SECTIONS;
}

static void patch_pool(patch_t *patch, const char *id, int64_t capacity, int64_t price) {
    hf_pool_definition_t *pool = &patch->pools[patch->definition.pool_count++];
    snprintf(pool->id, sizeof pool->id, "%s", id);
    pool->capacity = capacity;
    pool->price = price;
    patch->members |= HF_EVENT_MEMBER_POOLS;
}

static hf_error_t apply(fixture_t *f, const patch_t *patch, bool *layout,
                        hf_error_detail_t *detail) {
    static hf_error_detail_t scratch;
    bool unused;
    memset(detail ? detail : &scratch, 0, sizeof scratch);
    return hf_core_event_update(f->core, &patch->definition, patch->members, T0 + 10,
                                layout ? layout : &unused, detail ? detail : &scratch);
}

static uint32_t hold_of(fixture_t *f, const char *user, const char *hold_id,
                        const char *const *seats, uint32_t seat_count,
                        const hf_pool_request_t *pools, uint32_t pool_count) {
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = user,
                                 .hold_id = hold_id,
                                 .seat_ids = seats,
                                 .seat_count = seat_count,
                                 .pools = pools,
                                 .pool_count = pool_count,
                                 .ttl_ms = -1};
    uint32_t index = UINT32_MAX;
    assert_int_equal(fx_hold(f->core, &request, T0 + 20, &index, NULL), HF_OK);
    return index;
}

static const hf_event_t *show(fixture_t *f) { return fx_event_of(f->core, "show"); }

/* ---- the members ---- */

static void test_limits_change_and_record(void **state) {
    fixture_t *f = *state;
    patch_t patch;
    patch_init(&patch);
    snprintf(patch.definition.name, sizeof patch.definition.name, "Night two");
    patch.definition.hold_ttl_ms = 60000;
    patch.definition.max_hold_ms = 120000;
    patch.definition.max_seats_per_user = 4;
    patch.definition.max_seats_per_hold = 3;
    patch.members = HF_EVENT_MEMBER_NAME | HF_EVENT_MEMBER_HOLD_TTL | HF_EVENT_MEMBER_MAX_HOLD |
                    HF_EVENT_MEMBER_MAX_SEATS_PER_USER | HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD;
    bool layout = true;
    assert_int_equal(apply(f, &patch, &layout, NULL), HF_OK);
    assert_false(layout);
    const hf_event_t *event = show(f);
    assert_string_equal(event->name, "Night two");
    assert_int_equal(event->hold_ttl_ms, 60000);
    assert_int_equal(event->max_hold_ms, 120000);
    assert_int_equal(event->max_seats_per_user, 4);
    assert_int_equal(event->max_seats_per_hold, 3);
    assert_int_equal(f->sink.total, 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_UPDATE], 1);
}

static void test_nothing_changed_emits_nothing(void **state) {
    fixture_t *f = *state;
    patch_t patch;
    patch_init(&patch);
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    patch.definition.max_seats_per_hold = 10; /* as it is */
    patch.members = HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD;
    patch_section(&patch, "FLOOR", 1000, 0, 'A', 0);
    patch_pool(&patch, "GA", 5, HF_UNCHANGED);
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    fx_assert_no_mutation(&f->sink);
}

static void test_prices_for_new_holds_only(void **state) {
    fixture_t *f = *state;
    uint32_t old = hold_of(f, "u1", "res_old", SEATS("FLOOR-A-1"), POOLS({"GA", 1}));
    assert_int_equal(hf_core_hold_at(f->core, old)->total, 1100);
    patch_t patch;
    patch_init(&patch);
    patch_section(&patch, "FLOOR", 2000, 0, 'A', 0);
    patch_pool(&patch, "GA", HF_UNCHANGED, 300);
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    uint32_t new = hold_of(f, "u2", "res_new", SEATS("FLOOR-A-2"), POOLS({"GA", 1}));
    assert_int_equal(hf_core_hold_at(f->core, new)->total, 2300);
    assert_int_equal(hf_core_hold_at(f->core, old)->total, 1100);
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_old", "u1", "ord_old", "pi", T0 + 30, &order),
                     HF_OK);
    assert_int_equal(hf_core_order_at(f->core, order)->total, 1100);
}

static void test_capacity_never_below_taken(void **state) {
    fixture_t *f = *state;
    hold_of(f, "u1", "res_a", NO_SEATS, POOLS({"GA", 3}));
    patch_t patch;
    patch_init(&patch);
    patch_pool(&patch, "GA", 2, HF_UNCHANGED);
    hf_error_detail_t detail;
    fx_sink_reset(&f->sink);
    assert_int_equal(apply(f, &patch, NULL, &detail), HF_ERROR_CAPACITY_BELOW_TAKEN);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.requested, 2);
    assert_int_equal(detail.current, 3);
    fx_assert_no_mutation(&f->sink);
    assert_int_equal(show(f)->pools[0].capacity, 5);
    patch.pools[0].capacity = 3;
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    assert_int_equal(show(f)->pools[0].capacity, 3);
}

/* ---- a larger layout ---- */

static void seat_status_is(fixture_t *f, const char *seat_id, uint8_t status) {
    const hf_seat_t *seat = fx_seat_of(f->core, "show", seat_id);
    assert_non_null(seat);
    assert_int_equal(seat->status, status);
}

static void test_rows_appended_move_indexes(void **state) {
    fixture_t *f = *state;
    uint32_t held = hold_of(f, "u1", "res_h", SEATS("BALC-A-1", "FLOOR-B-4"), NO_POOLS);
    hold_of(f, "u2", "res_s", SEATS("BALC-A-2"), NO_POOLS);
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_s", "u2", "ord_s", "pi", T0 + 30, &order), HF_OK);
    uint32_t balc_before;
    assert_true(hf_core_seat_find(show(f), "BALC-A-1", &balc_before));
    patch_t patch;
    patch_init(&patch);
    patch_section(&patch, "FLOOR", HF_UNCHANGED, 2, 'C', 3);
    patch_section(&patch, "BOX", 9000, 1, 'A', 2);
    patch_pool(&patch, "VIP", 2, 700);
    bool layout = false;
    fx_sink_reset(&f->sink);
    assert_int_equal(apply(f, &patch, &layout, NULL), HF_OK);
    assert_true(layout);
    assert_int_equal(f->sink.total, 1);
    const hf_event_t *event = show(f);
    assert_int_equal(event->seat_count, 10 + 6 + 2);
    assert_int_equal(event->section_count, 3);
    assert_int_equal(event->pool_count, 2);
    assert_int_equal(event->sections[0].row_count, 4);
    assert_int_equal(event->counts.available, 18 - 3);
    uint32_t balc_after;
    assert_true(hf_core_seat_find(event, "BALC-A-1", &balc_after));
    assert_int_equal(balc_after, balc_before + 6);
    seat_status_is(f, "BALC-A-1", HF_SEAT_HELD);
    seat_status_is(f, "FLOOR-B-4", HF_SEAT_HELD);
    seat_status_is(f, "BALC-A-2", HF_SEAT_SOLD);
    seat_status_is(f, "FLOOR-C-1", HF_SEAT_AVAILABLE);
    seat_status_is(f, "FLOOR-D-3", HF_SEAT_AVAILABLE);
    /* The hold's items follow their seats: its seats are still BALC-A-1 and FLOOR-B-4. */
    const hf_hold_t *hold = hf_core_hold_at(f->core, held);
    const hf_item_t *items = hf_core_items(f->core, hold->item_offset);
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(event, items[0].index, seat_id);
    assert_string_equal(seat_id, "BALC-A-1");
    hf_core_seat_id(event, items[1].index, seat_id);
    assert_string_equal(seat_id, "FLOOR-B-4");
    const hf_order_t *sold = hf_core_order_at(f->core, order);
    hf_core_seat_id(event, hf_core_items(f->core, sold->item_offset)[0].index, seat_id);
    assert_string_equal(seat_id, "BALC-A-2");
    fx_assert_consistent(f->core, T0 + 40);
    /* The new seats sell, and the old hold commits and releases what it held. */
    hold_of(f, "u3", "res_new", SEATS("FLOOR-D-3", "BOX-A-2"), POOLS({"VIP", 2}));
    assert_int_equal(hf_core_release(f->core, "res_h", "u1", T0 + 50), HF_OK);
    seat_status_is(f, "BALC-A-1", HF_SEAT_AVAILABLE);
    seat_status_is(f, "FLOOR-B-4", HF_SEAT_AVAILABLE);
}

static void test_best_available_finds_new_rows(void **state) {
    fixture_t *f = *state;
    hold_of(f, "u1", "res_full",
            SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-B-1", "FLOOR-B-2",
                  "FLOOR-B-3", "FLOOR-B-4"),
            NO_POOLS);
    patch_t patch;
    patch_init(&patch);
    patch_section(&patch, "FLOOR", HF_UNCHANGED, 1, 'C', 5);
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u2",
                                 .hold_id = "res_best",
                                 .ttl_ms = -1,
                                 .best_count = 3,
                                 .best_section = "FLOOR",
                                 .best_adjacent = true};
    uint32_t index;
    assert_int_equal(fx_hold(f->core, &request, T0 + 30, &index, NULL), HF_OK);
    const hf_hold_t *hold = hf_core_hold_at(f->core, index);
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(show(f), hf_core_items(f->core, hold->item_offset)[0].index, seat_id);
    /* The new row's 1-3 (2-4 would strand seats 1 and 5): best_available reads the new row. */
    assert_string_equal(seat_id, "FLOOR-C-1");
}

/* ---- refusals: the checks of a creation, and nothing changes ---- */

static void refused(fixture_t *f, const patch_t *patch, const char *field, bool has_row,
                    const char *member, uint8_t fault) {
    hf_error_detail_t detail;
    fx_sink_reset(&f->sink);
    assert_int_equal(apply(f, patch, NULL, &detail), HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, field);
    assert_int_equal(detail.has_row, has_row);
    if (member) assert_string_equal(detail.member, member);
    else assert_null(detail.member);
    assert_int_equal(detail.fault, fault);
    fx_assert_no_mutation(&f->sink);
    assert_int_equal(show(f)->seat_count, 10);
}

static void test_refusals(void **state) {
    fixture_t *f = *state;
    patch_t patch;
    patch_init(&patch);
    patch_section(&patch, "FLOOR", HF_UNCHANGED, 1, 'B', 3);
    refused(f, &patch, "sections", true, "id", HF_FAULT_EXISTS);
    patch_init(&patch);
    patch_section(&patch, "BOX", HF_UNCHANGED, 1, 'A', 3);
    refused(f, &patch, "sections", false, "price", HF_FAULT_REQUIRED);
    patch_init(&patch);
    patch_section(&patch, "BOX", 10, 0, 'A', 0);
    refused(f, &patch, "sections", false, "rows", HF_FAULT_REQUIRED);
    patch_init(&patch);
    patch_section(&patch, "BOX", 10, 2, 'A', HF_EVENT_SEATS_MAX / 2);
    refused(f, &patch, "sections", false, NULL, HF_FAULT_EVENT_SEATS);
    patch_init(&patch);
    patch_pool(&patch, "NEW", HF_UNCHANGED, 10);
    refused(f, &patch, "pools", false, "capacity", HF_FAULT_REQUIRED);
    patch_init(&patch);
    patch_pool(&patch, "GA", 1, 1);
    patch_pool(&patch, "GA", 2, 2);
    refused(f, &patch, "pools", false, "id", HF_FAULT_DUPLICATE);
    patch_init(&patch);
    patch.definition.max_hold_ms = TTL - 1;
    patch.members = HF_EVENT_MEMBER_MAX_HOLD;
    refused(f, &patch, "max_hold_s", false, NULL, HF_FAULT_VALUE);
    patch_init(&patch);
    snprintf(patch.definition.id, sizeof patch.definition.id, "nope");
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_ERROR_EVENT_NOT_FOUND);
}

/* ---- the waiting room ---- */

static void test_room_on_and_off(void **state) {
    fixture_t *f = *state;
    patch_t patch;
    patch_init(&patch);
    patch.definition.waiting_room = (hf_room_definition_t){true, 5.0, 900, 0, 300000, 1000, 0, {0}};
    patch.members = HF_EVENT_MEMBER_WAITING_ROOM;
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    assert_true(show(f)->waiting_room.enabled);
    assert_int_equal(hf_core_rooms_enabled(f->core), 1);
    patch.definition.waiting_room.enabled = false;
    assert_int_equal(apply(f, &patch, NULL, NULL), HF_OK);
    assert_false(show(f)->waiting_room.enabled);
    assert_true(show(f)->waiting_room.admit_per_s == 5.0); /* kept for its tickets */
    assert_int_equal(hf_core_rooms_enabled(f->core), 0);
}

/* ---- deleting ---- */

static void test_delete_unused_and_slot_reuse(void **state) {
    fixture_t *f = *state;
    fx_event_t other;
    fx_event_init(&other, "other", TTL, 3 * TTL, 0, 10);
    fx_event_section(&other, "S", 1, 1, 2);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &other.definition, T0, &detail), HF_OK);
    uint32_t index;
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_event_delete(f->core, "other", T0 + 5, &index), HF_OK);
    assert_int_equal(index, 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_DELETE], 1);
    assert_null(hf_core_event(f->core, "other", NULL));
    assert_null(hf_core_event_at(f->core, 1));
    uint32_t count;
    const uint32_t *listed = hf_core_events_listed(f->core, &count);
    assert_int_equal(count, 1);
    assert_int_equal(listed[0], 0);
    assert_int_equal(hf_core_event_delete(f->core, "other", T0 + 5, &index),
                     HF_ERROR_EVENT_NOT_FOUND);
    fx_event_init(&other, "again", TTL, 3 * TTL, 0, 10);
    fx_event_section(&other, "S", 1, 1, 2);
    assert_int_equal(hf_core_event_create(f->core, &other.definition, T0 + 6, &detail), HF_OK);
    assert_non_null(hf_core_event_at(f->core, 1)); /* the slot is taken again */
    listed = hf_core_events_listed(f->core, &count);
    assert_int_equal(count, 2);
    assert_string_equal(hf_core_event_at(f->core, listed[1])->id, "again");
    assert_non_null(fx_event_of(f->core, "show")); /* the id index was rebuilt */
}

static void test_delete_refused_once_used(void **state) {
    fixture_t *f = *state;
    hold_of(f, "u1", "res_x", SEATS("FLOOR-A-1"), NO_POOLS);
    assert_int_equal(hf_core_release(f->core, "res_x", "u1", T0 + 30), HF_OK);
    uint32_t index;
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_event_delete(f->core, "show", T0 + 40, &index), HF_ERROR_EVENT_IN_USE);
    fx_assert_no_mutation(&f->sink);
    assert_non_null(fx_event_of(f->core, "show"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_limits_change_and_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_changed_emits_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prices_for_new_holds_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_never_below_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rows_appended_move_indexes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_best_available_finds_new_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_room_on_and_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_unused_and_slot_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_refused_once_used, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
