/* Calendars in the SQLite store (API.md section 12): the records a core emits for calendars,
 * their holds and orders, written in a batch and read back. The rows are queryable (calendars,
 * calendar_resources, calendar_uses; holds' and orders' items as uses), the history's entries
 * carry items with dates, and a load into a new core restores the same availability, holds
 * and orders; a forgotten calendar hold is read back by its id and revived. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/core.h"
#include "store/store.h"
#include "store_cases.h"

#define DAY_MS 86400000LL
#define DAY0 ((int32_t)(NOW_MS / DAY_MS))

/* Ids of one run, prefixed: a PostgreSQL database may keep earlier runs' rows. Each call
 * returns one of a ring of buffers, so a few may be used at once. */
static char prefix[32] = "";

static const char *ID(const char *base) {
    static char ring[16][64];
    static unsigned next;
    char *out = ring[next++ % 16];
    snprintf(out, 64, "%s%s", prefix, base);
    return out;
}

/* ---- a core whose records go to a batch ---- */

static void batch_emit(void *context, const hf_mutation_t *mutation) {
    hf_batch_append(context, mutation);
}

static hf_resource_definition_t resource_of(const char *id, int64_t capacity, int64_t price) {
    hf_resource_definition_t resource = {.capacity = capacity,
                                         .price = price,
                                         .min_length = 1,
                                         .max_length = 30};
    snprintf(resource.id, sizeof resource.id, "%s", id);
    return resource;
}

static hf_calendar_definition_t hotel_definition(const hf_resource_definition_t *resources,
                                                 uint32_t count) {
    hf_calendar_definition_t definition = {.unit = HF_CALENDAR_NIGHT,
                                           .granularity_min = 1440,
                                           .hold_ttl_ms = 600000,
                                           .max_hold_ms = 1800000,
                                           .horizon_days = 365,
                                           .max_items_per_hold = 4,
                                           .resource_count = count,
                                           .resources = resources};
    snprintf(definition.id, sizeof definition.id, "%s", ID("hotel"));
    strcpy(definition.name, "Hotel");
    strcpy(definition.currency, "EUR");
    return definition;
}

static void hold(hf_core_t *core, const char *hold_id, const char *user, const char *resource,
                 int32_t from, int32_t to, uint32_t quantity) {
    hf_calendar_item_request_t item = {resource, quantity, from, to};
    hf_calendar_hold_request_t request = {.calendar_id = ID("hotel"),
                                          .user_id = user,
                                          .hold_id = hold_id,
                                          .items = &item,
                                          .item_count = 1,
                                          .ttl_ms = -1};
    uint32_t index;
    assert_int_equal(hf_core_calendar_hold(core, &request, NOW_MS, &index, NULL), HF_OK);
}

/* The calendar's life: made, a resource appended, sales closed and reopened; a hold held, one
 * committed, one released; a booking cancelled and one kept. */
static hf_core_t *calendar_life(hf_batch_t *batch) {
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){batch_emit, batch});
    hf_core_advance(core, NOW_MS);
    hf_resource_definition_t resources[2] = {resource_of("DBL", 2, 100),
                                             resource_of("SUITE", 1, 500)};
    hf_calendar_definition_t definition = hotel_definition(resources, 2);
    assert_int_equal(hf_core_calendar_create(core, &definition, NOW_MS, NULL), HF_OK);
    hf_resource_definition_t park = resource_of("PARK", 40, 15);
    assert_int_equal(hf_core_calendar_add_resources(core, ID("hotel"), &park, 1, NOW_MS, NULL),
                     HF_OK);
    assert_int_equal(hf_core_calendar_sales_set(core, ID("hotel"), false, NOW_MS), HF_OK);
    assert_int_equal(hf_core_calendar_sales_set(core, ID("hotel"), true, NOW_MS), HF_OK);
    hold(core, ID("res_1"), "u1", "DBL", DAY0 + 3, DAY0 + 6, 1);
    hold(core, ID("res_2"), "u2", "SUITE", DAY0 + 3, DAY0 + 5, 1);
    hold(core, ID("res_3"), "u3", "PARK", DAY0 + 1, DAY0 + 2, 3);
    uint32_t order;
    assert_int_equal(hf_core_commit(core, ID("res_2"), "u2", ID("ord_2"), "pi_2", NOW_MS, &order),
                     HF_OK);
    assert_int_equal(hf_core_release(core, ID("res_3"), "u3", NOW_MS), HF_OK);
    hf_calendar_item_request_t item = {"DBL", 1, DAY0 + 4, DAY0 + 8};
    hf_calendar_hold_request_t booking = {.calendar_id = ID("hotel"),
                                          .user_id = "staff",
                                          .items = &item,
                                          .item_count = 1};
    assert_int_equal(hf_core_calendar_book(core, &booking, ID("ord_4"), NULL, NOW_MS, &order, NULL),
                     HF_OK);
    assert_int_equal(hf_core_calendar_book(core, &booking, ID("ord_5"), NULL, NOW_MS, &order, NULL),
                     HF_ERROR_RANGE_UNAVAILABLE);
    item.resource_id = "PARK";
    assert_int_equal(hf_core_calendar_book(core, &booking, ID("ord_5"), NULL, NOW_MS, &order, NULL),
                     HF_OK);
    assert_int_equal(hf_core_cancel(core, ID("ord_4"), "staff", NULL, NOW_MS), HF_OK);
    assert_null(hf_core_check(core, NOW_MS));
    return core;
}

/* ---- a load into a new core, as the engine's restore does ---- */

static int on_calendar(void *context, const hf_stored_calendar_t *calendar) {
    hf_core_t *core = context;
    hf_error_t error = hf_core_restore_calendar(core, calendar->definition,
                                                calendar->created_at_ms);
    if (!error)
        error = hf_core_restore_calendar_sales(core, calendar->definition->id,
                                               calendar->sales_open);
    return error ? -1 : 0;
}

static int on_resource(void *context, const char *calendar_id,
                       const hf_resource_definition_t *resource) {
    hf_calendar_definition_t definition = {.resource_count = 1, .resources = resource};
    snprintf(definition.id, sizeof definition.id, "%s", calendar_id);
    return hf_core_restore_calendar(context, &definition, 0) ? -1 : 0;
}

static int on_calendar_hold(void *context, const hf_stored_calendar_hold_t *stored) {
    return hf_core_restore_calendar_hold(context, stored) ? -1 : 0;
}

static int on_calendar_order(void *context, const hf_stored_calendar_order_t *stored) {
    return hf_core_restore_calendar_order(context, stored) ? -1 : 0;
}

static void discard(void *context, const hf_mutation_t *mutation) {
    (void)context;
    (void)mutation;
}

/* A new core loaded from url: every row, or one unit's (unit not NULL: a takeover's load). */
static hf_core_t *restored_core(const char *url, const char *unit) {
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){discard, NULL});
    hf_store_t *store = NULL;
    char error[ERROR_SIZE];
    assert_int_equal(hf_store_open(&store, url, error, sizeof error), 0);
    hf_store_loader_t loader = {.calendar = on_calendar,
                                .calendar_resource = on_resource,
                                .calendar_hold = on_calendar_hold,
                                .calendar_order = on_calendar_order,
                                .context = core};
    int rc = unit ? hf_store_unit_load(store, unit, &loader, error, sizeof error)
                  : hf_store_load(store, &loader, error, sizeof error);
    if (rc != 0) fail_msg("load: %s", error);
    hf_store_close(store);
    hf_core_advance(core, NOW_MS);
    return core;
}

/* A load of url into a new core gives the calendar as core has it (the new core may hold more
 * calendars: earlier runs' in a shared database). */
static void assert_restored(hf_core_t *core, const char *url, const char *unit) {
    hf_core_t *restored = restored_core(url, unit);
    assert_null(hf_core_check(restored, NOW_MS));
    const hf_calendar_t *before = hf_core_calendar(core, ID("hotel"), NULL);
    const hf_calendar_t *after = hf_core_calendar(restored, ID("hotel"), NULL);
    assert_non_null(after);
    assert_int_equal(after->definition.resource_count, 3);
    assert_true(after->sales_open);
    assert_int_equal(after->holds_active, before->holds_active);
    assert_int_equal(after->orders, before->orders);
    for (uint32_t r = 0; r < 3; r++)
        for (int32_t x = DAY0; x < DAY0 + 10; x++)
            assert_int_equal(hf_core_resource_taken(after, r, x, x + 1),
                             hf_core_resource_taken(before, r, x, x + 1));
    const char *ids[] = {ID("res_1"), ID("res_2"), ID("res_3")};
    for (int i = 0; i < 3; i++)
        assert_int_equal(hf_core_hold_find(restored, ids[i], NULL)->status,
                         hf_core_hold_find(core, ids[i], NULL)->status);
    assert_int_equal(hf_core_order_find(restored, ID("ord_2"), NULL)->total, 1000);
    hf_core_destroy(restored);
}

static void test_calendar_round_trip(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    hf_core_t *core = calendar_life(batch);
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    /* The rows, as an operator reads them. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM calendars WHERE id = 'hotel'"
                                            " AND sales_open = 1"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT idx FROM calendar_resources WHERE id = 'PARK'"),
                     2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM calendar_uses"), 6);
    assert_int_equal(query_integer(fixture, "SELECT to_step - from_step FROM calendar_uses"
                                            " WHERE owner_id = 'res_1'"),
                     3);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders WHERE event_id = 'hotel'"
                                            " AND status = 'cancelled'"),
                     1);
    /* The hold's entry names its hold and repeats none of its uses: a read joins the hold's
     * row for them (store/history.h). */
    assert_int_equal(
        query_integer(fixture, "SELECT count(*) FROM history WHERE event_id = 'hotel'"
                               " AND type = 'hold' AND data LIKE '{\"reservation_id\":\"res_1\",%'"
                               " AND data NOT LIKE '%items%' AND data NOT LIKE '%user_id%'"),
        1);

    assert_restored(core, fixture->url, NULL);
    hf_core_destroy(core);
}

static int on_revived(void *context, const hf_stored_calendar_hold_t *stored) {
    uint32_t index;
    return hf_core_revive_calendar_hold(context, stored, &index) ? -1 : 0;
}

static void test_forgotten_calendar_hold_read_back(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    hf_core_t *core = calendar_life(batch);
    assert_true(submit_and_wait(store, batch, 1, error));
    /* The released hold forgotten, then read back by id into the core. */
    hf_core_set_finished_max(core, 0);
    assert_int_equal(hf_core_evict(core, UINT64_MAX), 1);
    assert_null(hf_core_hold_find(core, ID("res_3"), NULL));
    hf_store_loader_t one = {.calendar_hold = on_revived, .context = core};
    bool found = false;
    assert_int_equal(hf_store_read_hold(store, ID("res_3"), &one, &found, error, sizeof error), 0);
    assert_true(found);
    const hf_hold_t *revived = hf_core_hold_find(core, ID("res_3"), NULL);
    assert_non_null(revived);
    assert_int_equal(revived->status, HF_HOLD_RELEASED);
    assert_int_equal(revived->target, HF_TARGET_CALENDAR);
    assert_int_equal(hf_core_calendar_items(core, revived->item_offset)[0].quantity, 3);
    assert_null(hf_core_check(core, NOW_MS));
    hf_store_close(store);
    hf_batch_destroy(batch);
    hf_core_destroy(core);
}

/* The same life through PostgreSQL, when HOLDFAST_TEST_POSTGRES_URL names a database. */
static void test_calendar_round_trip_postgres(void **state) {
    (void)state;
    const char *url = getenv("HOLDFAST_TEST_POSTGRES_URL");
    if (url == NULL || url[0] == '\0') skip();
    snprintf(prefix, sizeof prefix, "pg%ld_", (long)time(NULL));
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    if (hf_store_open(&store, url, error, sizeof error) != 0) fail_msg("%s", error);
    assert_int_equal(hf_store_start(store, on_done, &waiter), 0);
    hf_batch_t *batch = hf_batch_create();
    hf_core_t *core = calendar_life(batch);
    if (!submit_and_wait(store, batch, 1, error)) fail_msg("%s", error);
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_restored(core, url, NULL);
    /* The calendar's unit alone, as a node taking it over loads it. */
    assert_restored(core, url, ID("hotel"));
    hf_core_destroy(core);
    prefix[0] = '\0';
}

#define STORE_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_calendar_round_trip),
        STORE_TEST(test_forgotten_calendar_hold_read_back),
        cmocka_unit_test(test_calendar_round_trip_postgres),
    };
    return cmocka_run_group_tests_name("store_calendars", tests, NULL, NULL);
}
