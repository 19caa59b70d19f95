/* Unit tests of the core (src/core/core.h), event.c: events created (and refused, with the path of what is wrong), seat and pool ids,
 * a million seats, sales closed and reopened, an event's orders. Each asserts the resulting values and the
 * mutation records emitted (an error emits none); the fixture is core_cases.h. */
#include "core_cases.h"

/* ---- events ---- */

static void test_event_create_ok(void **state) {
    fixture_t *f = *state;
    fx_event_t def;
    fx_event_init(&def, "fresh.event_1", 30000, 90000, 4, 6);
    fx_event_section(&def, "FLOOR", 100, 3, 5);
    fx_event_section(&def, "BALC", 50, 1, 7);
    fx_event_pool(&def, "GA", 25, 10);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0 + 5, &detail), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_CREATE], 1);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_EVENT_CREATE);
    assert_non_null(record);
    assert_string_equal(record->event_id, "fresh.event_1");
    assert_int_equal(record->at_ms, T0 + 5);

    assert_int_equal(hf_core_event_count(f->core), 3);
    uint32_t index = UINT32_MAX;
    const hf_event_t *event = hf_core_event(f->core, "fresh.event_1", &index);
    assert_non_null(event);
    assert_int_equal(index, 2);
    assert_ptr_equal(hf_core_event_at(f->core, 2), event);
    assert_string_equal(hf_core_event_at(f->core, 0)->id, "show");
    assert_string_equal(hf_core_event_at(f->core, 1)->id, "open");
    assert_null(hf_core_event(f->core, "nope", NULL));
    assert_string_equal(event->name, "Event fresh.event_1");
    assert_string_equal(event->currency, "USD");
    assert_int_equal(event->hold_ttl_ms, 30000);
    assert_int_equal(event->max_hold_ms, 90000);
    assert_int_equal(event->max_seats_per_user, 4);
    assert_int_equal(event->max_seats_per_hold, 6);
    assert_int_equal(event->created_at_ms, T0 + 5);
    assert_int_equal(event->section_count, 2);
    assert_int_equal(event->row_count, 4);
    assert_int_equal(event->seat_count, 22);
    assert_int_equal(event->pool_count, 1);
    assert_counts(event->counts, 22, 0, 0);
    assert_string_equal(event->sections[0].id, "FLOOR");
    assert_int_equal(event->sections[0].price, 100);
    assert_int_equal(event->sections[0].row_count, 3);
    assert_int_equal(event->sections[0].seat_count, 15);
    assert_int_equal(event->sections[0].first_seat, 0);
    assert_counts(event->sections[0].counts, 15, 0, 0);
    assert_string_equal(event->sections[1].id, "BALC");
    assert_int_equal(event->sections[1].first_row, 3);
    assert_int_equal(event->sections[1].first_seat, 15);
    assert_int_equal(event->sections[1].seat_count, 7);
    assert_counts(event->sections[1].counts, 7, 0, 0);
    assert_string_equal(event->rows[1].id, "B");
    assert_int_equal(event->rows[1].section, 0);
    assert_int_equal(event->rows[1].first_seat, 5);
    assert_int_equal(event->rows[1].seat_count, 5);
    assert_string_equal(event->rows[3].id, "A");
    assert_int_equal(event->rows[3].section, 1);
    assert_string_equal(event->pools[0].id, "GA");
    assert_int_equal(event->pools[0].capacity, 25);
    assert_int_equal(event->pools[0].price, 10);
    assert_int_equal(event->pools[0].held, 0);
    assert_int_equal(event->pools[0].sold, 0);
    for (uint32_t i = 0; i < event->seat_count; i++) {
        assert_int_equal(event->seats[i].version, 1);
        assert_int_equal(event->seats[i].status, HF_SEAT_AVAILABLE);
        assert_int_equal(event->seats[i].owner, 0);
    }
    assert_consistent(f, T0 + 5);
}

static void test_event_create_exists(void **state) {
    fixture_t *f = *state;
    fx_event_t def;
    fx_event_init(&def, "show", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "X", 1, 1, 1);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, &detail),
                     HF_ERROR_EVENT_EXISTS);
    assert_no_mutation(f);
    assert_int_equal(hf_core_event_count(f->core), 2);
    assert_int_equal(event_of(f, "show")->seat_count, 100); /* the first definition stays */
}

static void expect_event_invalid(fixture_t *f, fx_event_t *def, const char *field1,
                                 const char *field2) {
    hf_error_detail_t detail = {0};
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_event_create(f->core, &def->definition, T0, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_non_null(detail.field);
    if (strcmp(detail.field, field1) != 0 && (field2 == NULL || strcmp(detail.field, field2) != 0))
        fail_msg("field \"%s\", expected \"%s\"%s%s", detail.field, field1, field2 ? " or " : "",
                 field2 ? field2 : "");
    assert_no_mutation(f);
    assert_null(hf_core_event(f->core, def->definition.id, NULL));
    assert_int_equal(hf_core_event_count(f->core), 2);
}

static void test_event_create_invalid(void **state) {
    fixture_t *f = *state;
    fx_event_t def;

    fx_event_init(&def, "empty", TTL, MAX_HOLD, 0, 10); /* no seats nor pools */
    expect_event_invalid(f, &def, "sections", "pools");

    fx_event_init(&def, "too_many_items", TTL, MAX_HOLD, 0, HF_HOLD_ITEMS_MAX + 1);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_event_invalid(f, &def, "max_seats_per_hold", NULL);

    fx_event_init(&def, "dup_sections", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_event_invalid(f, &def, "sections", NULL);

    fx_event_init(&def, "dup_rows", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 2, 5);
    snprintf(def.rows[0][1].id, sizeof def.rows[0][1].id, "A");
    expect_event_invalid(f, &def, "rows", "sections");

    fx_event_init(&def, "dup_pools", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    fx_event_pool(&def, "GA", 5, 1);
    expect_event_invalid(f, &def, "pools", NULL);

    /* Valid corners: the same row id in two sections, pools only, the item cap itself. */
    hf_error_detail_t detail = {0};
    fx_event_init(&def, "rows_ok", TTL, MAX_HOLD, 0, HF_HOLD_ITEMS_MAX);
    fx_event_section(&def, "S1", 1, 1, 5);
    fx_event_section(&def, "S2", 1, 1, 5);
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, &detail), HF_OK);
    uint32_t index;
    assert_true(hf_core_seat_find(event_of(f, "rows_ok"), "S2-A-5", &index));
    assert_int_equal(index, 9);
    fx_event_init(&def, "pools_only", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, &detail), HF_OK);
    assert_int_equal(event_of(f, "pools_only")->seat_count, 0);
    assert_counts(event_of(f, "pools_only")->counts, 0, 0, 0);
    assert_consistent(f, T0);
}

static void test_event_too_many_seats(void **state) {
    fixture_t *f = *state;
    fx_event_t def;
    fx_event_init(&def, "huge", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, HF_EVENT_SEATS_MAX + 1);
    hf_error_detail_t detail = {0};
    hf_error_t error = hf_core_event_create(f->core, &def.definition, T0, &detail);
    if (error != HF_ERROR_INVALID_REQUEST && error != HF_ERROR_CAPACITY)
        fail_msg("4,000,001 seats: got %d", error);
    assert_no_mutation(f);
    assert_null(hf_core_event(f->core, "huge", NULL));
}

static void test_event_invalid_paths(void **state) {
    fixture_t *f = *state;
    fx_event_t def;

    fx_event_init(&def, "dup_sections", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 1, 5);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "id", true, false, 2, 0, 0, HF_FAULT_DUPLICATE});

    fx_event_init(&def, "dup_rows", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 3, 5);
    snprintf(def.rows[1][2].id, sizeof def.rows[1][2].id, "B");
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "id", true, true, 1, 2, 1, HF_FAULT_DUPLICATE});

    fx_event_init(&def, "dup_pools", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    fx_event_pool(&def, "VIP", 5, 1);
    fx_event_pool(&def, "GA", 5, 1);
    expect_definition_path(
        f, &def, &(expected_path_t){"pools", "id", true, false, 2, 0, 0, HF_FAULT_DUPLICATE});

    fx_event_init(&def, "zero_seats", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 2, 5);
    def.rows[1][1].seats = 0;
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "seats", true, true, 1, 1, 0, HF_FAULT_VALUE});

    fx_event_init(&def, "bad_row_id", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 2, 5);
    snprintf(def.rows[0][1].id, sizeof def.rows[0][1].id, "B-1");
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "id", true, true, 0, 1, 0, HF_FAULT_VALUE});

    fx_event_init(&def, "price", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", -1, 1, 5);
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "price", true, false, 1, 0, 0, HF_FAULT_VALUE});

    fx_event_init(&def, "no_rows", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 0, 5);
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", "rows", true, false, 0, 0, 0, HF_FAULT_VALUE});

    fx_event_init(&def, "capacity", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    fx_event_pool(&def, "VIP", -5, 1);
    expect_definition_path(
        f, &def, &(expected_path_t){"pools", "capacity", true, false, 1, 0, 0, HF_FAULT_VALUE});

    fx_event_init(&def, "empty", TTL, MAX_HOLD, 0, 10);
    expect_definition_path(
        f, &def,
        &(expected_path_t){"sections", NULL, false, false, 0, 0, 0, HF_FAULT_NO_INVENTORY});

    fx_event_init(&def, "ttl", 0, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_definition_path(
        f, &def, &(expected_path_t){"hold_ttl_s", NULL, false, false, 0, 0, 0, HF_FAULT_VALUE});
}

static void test_event_invalid_totals(void **state) {
    fixture_t *f = *state;
    fx_event_t def;
    fx_event_init(&def, "seats", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 2, HF_EVENT_SEATS_MAX / 2);
    fx_event_section(&def, "T", 1, 1, 3);
    expect_definition_path(
        f, &def, &(expected_path_t){"sections", NULL, false, false, 0, 0, 0, HF_FAULT_EVENT_SEATS});
    hf_error_detail_t *detail = garbage_detail();
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(detail->requested, (int64_t)HF_EVENT_SEATS_MAX + 3);
    assert_int_equal(detail->limit, HF_EVENT_SEATS_MAX);

    /* More rows than an event may have: sections of the most rows a section may have. */
    uint32_t sections = HF_EVENT_ROWS_MAX / HF_SECTION_ROWS_MAX + 1;
    hf_section_definition_t *many = calloc(sections, sizeof *many);
    hf_row_definition_t *rows = calloc(HF_SECTION_ROWS_MAX, sizeof *rows);
    assert_non_null(many);
    assert_non_null(rows);
    for (uint32_t r = 0; r < HF_SECTION_ROWS_MAX; r++) {
        snprintf(rows[r].id, sizeof rows[r].id, "R%u", r);
        rows[r].seats = 1;
    }
    for (uint32_t s = 0; s < sections; s++) {
        snprintf(many[s].id, sizeof many[s].id, "S%u", s);
        many[s].rows = rows;
        many[s].row_count = HF_SECTION_ROWS_MAX;
    }
    fx_event_init(&def, "rows", TTL, MAX_HOLD, 0, 10);
    def.definition.sections = many;
    def.definition.section_count = sections;
    detail = garbage_detail();
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail,
                &(expected_path_t){"sections", NULL, false, false, 0, 0, 0, HF_FAULT_EVENT_ROWS});
    assert_int_equal(detail->requested, (int64_t)sections * HF_SECTION_ROWS_MAX);
    assert_int_equal(detail->limit, HF_EVENT_ROWS_MAX);
    free(many);
    free(rows);
}

/* A hold on "show" (max_seats_per_user 8, max_seats_per_hold 10) with a garbage detail. */
/* ---- seat ids ---- */

static void test_seat_find_parsing(void **state) {
    fixture_t *f = *state;
    const hf_event_t *event = event_of(f, "show");
    uint32_t index = 12345;
    assert_true(hf_core_seat_find(event, "FLOOR-A-1", &index));
    assert_int_equal(index, 0);
    assert_true(hf_core_seat_find(event, "FLOOR-A-30", &index));
    assert_int_equal(index, 29);
    assert_true(hf_core_seat_find(event, "FLOOR-B-1", &index));
    assert_int_equal(index, 30);
    assert_true(hf_core_seat_find(event, "BALC-A-40", &index));
    assert_int_equal(index, 99);
    static const char *const bad[] = {
        "FLOOR-A-0",
        "FLOOR-A-31",
        "FLOOR-A-01",
        "FLOOR-A-",
        "FLOOR--1",
        "NOPE-A-1",
        "FLOOR-A-1x",
        "",
        "FLOOR",
        "FLOOR-A",
        "-A-1",
        "FLOOR-A-+1",
        "FLOOR-A--1",
        "FLOOR-A-1-",
        "FLOOR-A- 1",
        "FLOOR-A-1 ",
        "floor-A-1",
        "FLOOR-C-1",
        "BALC-A-41",
        "FLOOR-A-99999999",
        "FLOOR-A-4294967297",
        "FLOOR-A-18446744073709551617",
        "FLOOR-A-0x1",
        "FLOOR-A-1.0",
        "FLOOR-A-1-1",
        "FLOOR-BALC-A-1",
        "BALC-B-1",
        "FLOOR-A-00",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (hf_core_seat_find(event, bad[i], &index))
            fail_msg("seat \"%s\" found (index %u)", bad[i], index);
    }
    /* Ids with the other allowed characters. */
    fx_event_t def;
    fx_event_init(&def, "chars", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S.1_x", 1, 1, 12);
    snprintf(def.rows[0][0].id, sizeof def.rows[0][0].id, "r_2.b");
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &def.definition, T0, &detail), HF_OK);
    assert_true(hf_core_seat_find(event_of(f, "chars"), "S.1_x-r_2.b-12", &index));
    assert_int_equal(index, 11);
    assert_false(hf_core_seat_find(event_of(f, "chars"), "S.1_x-r_2.b-13", &index));
    assert_false(hf_core_seat_find(event_of(f, "chars"), "S.1_x-r_2-12", &index));
}

static void test_seat_id_round_trip(void **state) {
    fixture_t *f = *state;
    const hf_event_t *event = event_of(f, "show");
    char id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(event, 0, id);
    assert_string_equal(id, "FLOOR-A-1");
    hf_core_seat_id(event, 59, id);
    assert_string_equal(id, "FLOOR-B-30");
    hf_core_seat_id(event, 60, id);
    assert_string_equal(id, "BALC-A-1");
    hf_core_seat_id(event, 99, id);
    assert_string_equal(id, "BALC-A-40");
    for (uint32_t i = 0; i < event->seat_count; i++) {
        uint32_t index = UINT32_MAX;
        hf_core_seat_id(event, i, id);
        assert_true(hf_core_seat_find(event, id, &index));
        assert_int_equal(index, i);
        uint32_t row = hf_core_seat_row(event, i);
        assert_int_equal(row, i < 30 ? 0 : i < 60 ? 1 : 2);
        assert_true(i >= event->rows[row].first_seat &&
                    i < event->rows[row].first_seat + event->rows[row].seat_count);
    }
}

static void test_pool_find(void **state) {
    fixture_t *f = *state;
    const hf_event_t *event = event_of(f, "show");
    assert_int_equal(hf_core_pool_find(event, "GA"), 0);
    assert_int_equal(hf_core_pool_find(event, "VIP"), 1);
    assert_int_equal(hf_core_pool_find(event, "ga"), -1);
    assert_int_equal(hf_core_pool_find(event, ""), -1);
    assert_int_equal(hf_core_pool_find(event, "GAX"), -1);
}

/* ---- a million seats ---- */

static void test_million_seats(void **state) {
    fixture_t *f = *state;
    enum { ROWS = 1000, SEATS_PER_ROW = 1000 };
    hf_row_definition_t *rows = calloc(ROWS, sizeof *rows);
    for (uint32_t r = 0; r < ROWS; r++) {
        snprintf(rows[r].id, sizeof rows[r].id, "R%u", r);
        rows[r].seats = SEATS_PER_ROW;
    }
    hf_section_definition_t section = {.id = "MAIN", .price = 7, .row_count = ROWS, .rows = rows};
    hf_event_definition_t definition = {
        .id = "million",
        .name = "Million",
        .currency = "EUR",
        .hold_ttl_ms = TTL,
        .max_hold_ms = MAX_HOLD,
        .max_seats_per_user = 0,
        .max_seats_per_hold = 10,
        .section_count = 1,
        .sections = &section,
    };
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &definition, T0, &detail), HF_OK);
    free(rows);
    const hf_event_t *event = event_of(f, "million");
    assert_int_equal(event->seat_count, 1000000);
    assert_counts(event->counts, 1000000, 0, 0);
    uint32_t index = 0;
    assert_true(hf_core_seat_find(event, "MAIN-R999-1000", &index));
    assert_int_equal(index, 999999);
    assert_true(hf_core_seat_find(event, "MAIN-R500-1", &index));
    assert_int_equal(index, 500000);
    assert_false(hf_core_seat_find(event, "MAIN-R1000-1", &index));
    assert_false(hf_core_seat_find(event, "MAIN-R999-1001", &index));
    char id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(event, 999999, id);
    assert_string_equal(id, "MAIN-R999-1000");

    fx_sink_reset(&f->sink);
    uint32_t hold_index = UINT32_MAX;
    assert_int_equal(hold_on(f, "million", "u1", "res_m1", SEATS("MAIN-R999-1000"), NO_POOLS, -1,
                             false, T0 + 1, &hold_index, &detail),
                     HF_OK);
    event = event_of(f, "million");
    assert_int_equal(event->seats[999999].status, HF_SEAT_HELD);
    assert_int_equal(event->seats[999999].version, 2);
    assert_int_equal(event->seats[999999].owner, hold_index + 1);
    assert_counts(event->counts, 999999, 1, 0);
    assert_counts(event->sections[0].counts, 999999, 1, 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_int_equal(hf_core_hold_at(f->core, hold_index)->total, 7);
    assert_int_equal(hold_on(f, "million", "u2", "res_m2", SEATS("MAIN-R999-1000"), NO_POOLS, -1,
                             false, T0 + 2, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_consistent(f, T0 + 2);

    /* One row of a million seats: the 7-digit number. */
    hf_row_definition_t big_row = {.id = "A", .seats = 1000000};
    hf_section_definition_t big_section = {.id = "BIG",
                                           .price = 1,
                                           .row_count = 1,
                                           .rows = &big_row};
    hf_event_definition_t big = definition;
    snprintf(big.id, sizeof big.id, "onerow");
    big.sections = &big_section;
    assert_int_equal(hf_core_event_create(f->core, &big, T0, &detail), HF_OK);
    event = event_of(f, "onerow");
    assert_true(hf_core_seat_find(event, "BIG-A-1000000", &index));
    assert_int_equal(index, 999999);
    assert_false(hf_core_seat_find(event, "BIG-A-1000001", &index));
    assert_false(hf_core_seat_find(event, "BIG-A-0999999", &index));
    hf_core_seat_id(event, 999999, id);
    assert_string_equal(id, "BIG-A-1000000");
    assert_int_equal(hold_on(f, "onerow", "u1", "res_m3", SEATS("BIG-A-1000000", "BIG-A-1"),
                             NO_POOLS, -1, false, T0 + 3, NULL, &detail),
                     HF_OK);
    assert_counts(event_of(f, "onerow")->counts, 999998, 2, 0);
}

/* ---- closing sales ---- */

/* A booking of seats at the versions given (1: never touched). */
static hf_error_t book(fixture_t *f, const char *user, const char *order_id,
                       const char *const *seats, uint32_t seat_count, const uint32_t *versions,
                       hf_time_ms_t now, hf_error_detail_t *detail) {
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = user,
                                 .seat_ids = seats,
                                 .seat_count = seat_count,
                                 .ttl_ms = -1,
                                 .seat_versions = versions};
    uint32_t index;
    memset(detail, 0, sizeof *detail);
    return hf_core_book(f->core, &request, order_id, "pi_b", now, &index, detail);
}

/* Closing refuses new holds and bookings after the request's own checks, emits one record per
 * change and none for a repeat, and leaves live holds and orders free to move. */
static void test_sales_closed(void **state) {
    fixture_t *f = *state;
    static hf_error_detail_t detail;
    uint32_t live;
    assert_true(event_of(f, "show")->sales_open);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}), -1, false, T0, &live, NULL),
        HF_OK);
    assert_int_equal(
        hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, NULL), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_sales_set(f->core, "show", false, T0 + 1), HF_OK);
    assert_false(event_of(f, "show")->sales_open);
    assert_true(event_of(f, "open")->sales_open);
    assert_int_equal(f->sink.total, 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_SALES], 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_sales_set(f->core, "show", false, T0 + 2), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_sales_set(f->core, "nope", false, T0 + 2), HF_ERROR_EVENT_NOT_FOUND);

    /* Refused, and nothing moves; the request's own 400s and 404s come first. */
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_SALES_CLOSED);
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_SALES_CLOSED);
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-Z-1"), NO_POOLS, -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_SEAT_NOT_FOUND);
    assert_int_equal(
        hold(f, "u3", "res_3", NO_SEATS, POOLS({"NOPE", 1}), -1, false, T0 + 3, NULL, &detail),
        HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(hold(f, "u3", "res_3", NO_SEATS, NO_POOLS, -1, false, T0 + 3, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    hf_hold_request_t best = {.event_id = "show",
                              .user_id = "u3",
                              .hold_id = "res_3",
                              .ttl_ms = -1,
                              .best_count = 2,
                              .best_section = "NOPE"};
    uint32_t unused;
    assert_int_equal(hf_core_hold(f->core, &best, T0 + 3, &unused, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    best.best_section = "BALC";
    assert_int_equal(hf_core_hold(f->core, &best, T0 + 3, &unused, &detail), HF_ERROR_SALES_CLOSED);
    static const uint32_t fresh[] = {1}, moved[] = {1};
    assert_int_equal(book(f, "u4", "ord_b", SEATS("FLOOR-B-1"), fresh, T0 + 3, &detail),
                     HF_ERROR_SALES_CLOSED);
    assert_int_equal(book(f, "u4", "ord_b", SEATS("FLOOR-A-2"), moved, T0 + 3, &detail),
                     HF_ERROR_SALES_CLOSED);
    assert_int_equal(book(f, "u4", "ord_b", SEATS("FLOOR-Z-9"), fresh, T0 + 3, &detail),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_3", NULL));
    assert_int_equal(seat(f, "FLOOR-A-3")->status, HF_SEAT_AVAILABLE);
    /* Another event is not closed by this one. */
    assert_int_equal(
        hold_on(f, "open", "u5", "res_5", SEATS("S-A-1"), NO_POOLS, -1, false, T0 + 3, NULL, NULL),
        HF_OK);

    /* Live holds still extend, commit and release; orders still cancel. */
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000, T0 + 4, &capped), HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 5);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(hf_core_release(f->core, "res_2", "u2", T0 + 6), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2872", T0 + 7), HF_OK);
    assert_consistent(f, T0 + 7);

    /* Reopened: one record, and holds and bookings work again. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_sales_set(f->core, "show", true, T0 + 8), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_SALES], 1);
    assert_true(event_of(f, "show")->sales_open);
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0 + 9, NULL, NULL), HF_OK);
    assert_int_equal(book(f, "u4", "ord_b", SEATS("FLOOR-B-1"), fresh, T0 + 9, &detail), HF_OK);
    assert_consistent(f, T0 + 9);
}

/* The record carries the event and the state after the change; a restore sets the state
 * without a record. */
static void test_sales_record_and_restore(void **state) {
    fixture_t *f = *state;
    assert_int_equal(hf_core_sales_set(f->core, "open", false, T0 + 5), HF_OK);
    assert_int_equal(f->sink.count, 1);
    assert_int_equal(f->sink.records[0].type, HF_MUTATION_EVENT_SALES);
    assert_string_equal(f->sink.records[0].event_id, "open");
    assert_int_equal(f->sink.records[0].status, 0);
    assert_int_equal(f->sink.records[0].at_ms, T0 + 5);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_restore_sales(f->core, "show", false), HF_OK);
    assert_false(event_of(f, "show")->sales_open);
    assert_int_equal(hf_core_restore_sales(f->core, "nope", false), HF_ERROR_EVENT_NOT_FOUND);
    assert_no_mutation(f);
}

/* An event's orders, oldest first, whatever other events do in between. */
static void test_event_orders(void **state) {
    fixture_t *f = *state;
    uint32_t count = 99;
    assert_null(hf_core_event_orders(f->core, 0, &count));
    assert_int_equal(count, 0);
    assert_int_equal(
        hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL, NULL), HF_OK);
    assert_int_equal(
        hold_on(f, "open", "u2", "res_2", SEATS("S-A-1"), NO_POOLS, -1, false, T0, NULL, NULL),
        HF_OK);
    assert_int_equal(
        hold(f, "u3", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL, NULL), HF_OK);
    uint32_t first = commit(f, "res_1", "u1", "ord_1", T0 + 1);
    uint32_t other = commit(f, "res_2", "u2", "ord_2", T0 + 2);
    uint32_t third = commit(f, "res_3", "u3", "ord_3", T0 + 3);
    uint32_t show;
    assert_non_null(hf_core_event(f->core, "show", &show));
    const uint32_t *orders = hf_core_event_orders(f->core, show, &count);
    assert_int_equal(count, 2);
    assert_int_equal(orders[0], first);
    assert_int_equal(orders[1], third);
    uint32_t open;
    assert_non_null(hf_core_event(f->core, "open", &open));
    orders = hf_core_event_orders(f->core, open, &count);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], other);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_event_create_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_create_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_create_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_too_many_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_invalid_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_invalid_totals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seat_find_parsing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seat_id_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_million_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sales_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sales_record_and_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_orders, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_events", tests, NULL, NULL);
}
