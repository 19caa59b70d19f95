/* Unit tests of store/rows.c, the JSON of the store's text columns: a definition and a hold's or
 * order's lines written then read back field by field; the items' exact bytes (the view
 * seat_state reads them with json_each, and old data directories hold them); a definition as
 * the old core wrote it; the refusals of damaged text; and a damaged row read back through the
 * store, which must fail the load with a sentence naming the table, the row and the reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/buffer.h"
#include "store/rows.h"
#include "store/store.h"
#include "store_fixtures.h"

#define ERROR_SIZE 256

/* ---- Definitions ---- */

static hf_row_definition_t floor_rows[] = {{"A", 2}, {"B", 30}};
static hf_row_definition_t balcony_rows[] = {{"C", 4}, {"D", 1}, {"E.1", 7}};
static hf_section_definition_t sections[] = {
    {"FLOOR", 12500, 2, floor_rows},
    {"BAL_2", 0, 3, balcony_rows},
};
static hf_pool_definition_t pools[] = {{"GA", 5, 50}, {"VIP", 1000000000LL, 1000000000000LL}};

/* Every field away from its default: two sections of several rows, two pools, a ttl that is not
 * a whole number of seconds, no per-user limit, and a name that needs escaping. */
static hf_event_definition_t full_definition(void) {
    hf_event_definition_t definition = {.id = "eras_n1",
                                        .name = "Eras \"Night\" \\ caf\xc3\xa9",
                                        .currency = "EUR",
                                        .hold_ttl_ms = 1500,
                                        .max_hold_ms = 1800001,
                                        .max_seats_per_user = 0,
                                        .max_seats_per_hold = 10,
                                        .section_count = 2,
                                        .sections = sections,
                                        .pool_count = 2,
                                        .pools = pools};
    return definition;
}

static void assert_definitions_equal(const hf_event_definition_t *got,
                                     const hf_event_definition_t *expected) {
    assert_string_equal(got->id, expected->id);
    assert_string_equal(got->name, expected->name);
    assert_string_equal(got->currency, expected->currency);
    assert_int_equal(got->hold_ttl_ms, expected->hold_ttl_ms);
    assert_int_equal(got->max_hold_ms, expected->max_hold_ms);
    assert_int_equal(got->max_seats_per_user, expected->max_seats_per_user);
    assert_int_equal(got->max_seats_per_hold, expected->max_seats_per_hold);
    assert_int_equal(got->section_count, expected->section_count);
    for (uint32_t s = 0; s < expected->section_count; s++) {
        const hf_section_definition_t *section = &got->sections[s];
        assert_string_equal(section->id, expected->sections[s].id);
        assert_int_equal(section->price, expected->sections[s].price);
        assert_int_equal(section->row_count, expected->sections[s].row_count);
        for (uint32_t r = 0; r < section->row_count; r++) {
            assert_string_equal(section->rows[r].id, expected->sections[s].rows[r].id);
            assert_int_equal(section->rows[r].seats, expected->sections[s].rows[r].seats);
        }
    }
    assert_int_equal(got->pool_count, expected->pool_count);
    for (uint32_t p = 0; p < expected->pool_count; p++) {
        assert_string_equal(got->pools[p].id, expected->pools[p].id);
        assert_int_equal(got->pools[p].capacity, expected->pools[p].capacity);
        assert_int_equal(got->pools[p].price, expected->pools[p].price);
    }
}

static void test_definition_round_trips(void **state) {
    (void)state;
    hf_event_definition_t source = full_definition();
    hf_buffer_t text;
    hf_buffer_init(&text);
    hf_rows_definition_write(&text, &source);

    hf_event_definition_t read;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_definition_read(text.data, &read, error, sizeof error), 0);
    assert_definitions_equal(&read, &source);
    /* The arrays are the reader's own, not the writer's. */
    assert_ptr_not_equal(read.sections, sections);
    assert_ptr_not_equal(read.sections[0].rows, floor_rows);
    assert_ptr_not_equal(read.pools, pools);

    /* Written again, the same bytes: nothing is lost or reshaped on the way. */
    hf_buffer_t again;
    hf_buffer_init(&again);
    hf_rows_definition_write(&again, &read);
    assert_string_equal(again.data, text.data);
    hf_rows_definition_free(&read);
    assert_null(read.sections);
    assert_null(read.pools);
    hf_buffer_free(&again);
    hf_buffer_free(&text);
}

/* A room with a pre-queue keeps its opening and the seed of its shuffle exactly (a restart
 * must draw the same places); a damaged seed or a lone member is refused. */
static void test_room_opening_round_trips(void **state) {
    (void)state;
    hf_event_definition_t source = full_definition();
    source.waiting_room = (hf_room_definition_t){true, 2.5, 900, 3, 300000, 1000, 1795291200123LL,
                                                 {0}};
    for (int i = 0; i < HF_QUEUE_SEED_SIZE; i++)
        source.waiting_room.shuffle_seed[i] = (uint8_t)(i * 37 + 201);
    hf_buffer_t text;
    hf_buffer_init(&text);
    hf_rows_definition_write(&text, &source);
    hf_event_definition_t read;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_definition_read(text.data, &read, error, sizeof error), 0);
    assert_int_equal(read.waiting_room.opens_at_ms, 1795291200123LL);
    assert_memory_equal(read.waiting_room.shuffle_seed, source.waiting_room.shuffle_seed,
                        HF_QUEUE_SEED_SIZE);
    hf_rows_definition_free(&read);
    char *seed = strstr(text.data, "\"shuffle_seed\":\"") + 16;
    seed[5] = 'g';
    assert_int_not_equal(hf_rows_definition_read(text.data, &read, error, sizeof error), 0);
    assert_non_null(strstr(error, "waiting_room"));
    hf_rows_definition_free(&read); /* a failed read leaves what it had read (rows.h) */
    hf_buffer_free(&text);
}

/* An event of seats only (no pools) keeps its empty pools, and one of pools only its empty
 * sections. */
static void test_definition_round_trips_empty_sections_and_pools(void **state) {
    (void)state;
    hf_event_definition_t seats_only = full_definition();
    seats_only.pool_count = 0;
    seats_only.pools = NULL;
    hf_event_definition_t pools_only = full_definition();
    pools_only.section_count = 0;
    pools_only.sections = NULL;
    const hf_event_definition_t *cases[] = {&seats_only, &pools_only};
    for (size_t i = 0; i < 2; i++) {
        hf_buffer_t text;
        hf_buffer_init(&text);
        hf_rows_definition_write(&text, cases[i]);
        hf_event_definition_t read;
        char error[ERROR_SIZE] = "";
        assert_int_equal(hf_rows_definition_read(text.data, &read, error, sizeof error), 0);
        assert_definitions_equal(&read, cases[i]);
        hf_rows_definition_free(&read);
        hf_buffer_free(&text);
    }
}

/* What the core wrote into events.config before the store wrote it: data directories of the
 * last version hold it, and must start. */
#define OLD_DEFINITION \
    "{\"id\":\"e1\",\"name\":\"E\",\"currency\":\"USD\",\"hold_ttl_s\":600,\"max_hold_s\":1800," \
    "\"max_seats_per_user\":0,\"max_seats_per_hold\":10,\"sections\":[{\"id\":\"F\"," \
    "\"price\":100,\"rows\":[{\"id\":\"A\",\"seats\":2}]}],\"pools\":[{\"id\":\"GA\"," \
    "\"capacity\":5,\"price\":50}]}"

static void test_definition_of_the_old_core_reads_back(void **state) {
    (void)state;
    hf_event_definition_t read;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_definition_read(OLD_DEFINITION, &read, error, sizeof error), 0);
    assert_string_equal(read.id, "e1");
    assert_string_equal(read.name, "E");
    assert_string_equal(read.currency, "USD");
    assert_int_equal(read.hold_ttl_ms, 600000);
    assert_int_equal(read.max_hold_ms, 1800000);
    assert_int_equal(read.max_seats_per_user, 0);
    assert_int_equal(read.max_seats_per_hold, 10);
    assert_int_equal(read.section_count, 1);
    assert_string_equal(read.sections[0].id, "F");
    assert_int_equal(read.sections[0].price, 100);
    assert_int_equal(read.sections[0].row_count, 1);
    assert_string_equal(read.sections[0].rows[0].id, "A");
    assert_int_equal(read.sections[0].rows[0].seats, 2);
    assert_int_equal(read.pool_count, 1);
    assert_string_equal(read.pools[0].id, "GA");
    assert_int_equal(read.pools[0].capacity, 5);
    assert_int_equal(read.pools[0].price, 50);

    /* The store writes what the old core wrote, byte for byte: old and new rows look alike. */
    hf_buffer_t text;
    hf_buffer_init(&text);
    hf_rows_definition_write(&text, &read);
    assert_string_equal(text.data, OLD_DEFINITION);
    hf_buffer_free(&text);
    hf_rows_definition_free(&read);
}

/* Each refusal names what is wrong, and the definition can be freed after it (twice, even:
 * the loader frees whatever the reader left). */
static void assert_definition_refused(const char *text, const char *named) {
    hf_event_definition_t read;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_definition_read(text, &read, error, sizeof error), -1);
    if (strstr(error, named) == NULL) fail_msg("\"%s\" does not name %s", error, named);
    hf_rows_definition_free(&read);
    hf_rows_definition_free(&read);
}

static void test_definition_refusals(void **state) {
    (void)state;
    assert_definition_refused("{\"id\":\"e1\"", "not a JSON object");
    assert_definition_refused("[1]", "not a JSON object");
    assert_definition_refused("", "not a JSON object");
    assert_definition_refused(NULL, "not a JSON object");
    /* A duplicate member is refused by the parser, which names it: which of two values would
     * be the row's is anyone's guess. */
    assert_definition_refused("{\"id\":\"e1\",\"id\":\"e2\"}",
                              "duplicate object key near '\"id\"'");
    assert_definition_refused("{\"id\":\"e1\",\"name\":\"E\",\"name\":\"F\"}",
                              "duplicate object key near '\"name\"'");
    assert_definition_refused("{\"name\":\"E\",\"currency\":\"USD\"}", "definition's id ");
    assert_definition_refused("{\"id\":\"a-b\",\"name\":\"E\",\"currency\":\"USD\"}",
                              "definition's id ");

    /* The old literal with one value spoiled at a time. */
    const struct {
        const char *from, *to, *named;
    } spoiled[] = {
        {"\"seats\":2", "\"seats\":0", "sections"},
        {"\"price\":100", "\"price\":-1", "sections"},
        {"\"price\":50", "\"price\":-50", "pools"},
        {"\"id\":\"A\"", "\"id\":\"a-b\"", "sections"},
        {"\"id\":\"GA\"", "\"id\":\"G A\"", "pools"},
        {"\"hold_ttl_s\":600", "\"hold_ttl_s\":0", "hold_ttl_s"},
        {"\"max_hold_s\":1800", "\"max_hold_s\":\"1800\"", "max_hold_s"},
        {"\"max_seats_per_hold\":10", "\"max_seats_per_hold\":0", "max_seats_per_hold"},
        {"\"max_seats_per_user\":0", "\"max_seats_per_user\":-1", "max_seats_per_user"},
        {"\"currency\":\"USD\"", "\"currency\":\"\"", "currency"},
        {"\"rows\":[{\"id\":\"A\",\"seats\":2}]", "\"rows\":[]", "sections"},
    };
    for (size_t i = 0; i < sizeof spoiled / sizeof spoiled[0]; i++) {
        char text[512];
        const char *at = strstr(OLD_DEFINITION, spoiled[i].from);
        assert_non_null(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - OLD_DEFINITION), OLD_DEFINITION,
                 spoiled[i].to, at + strlen(spoiled[i].from));
        char named[64];
        snprintf(named, sizeof named, "definition's %s ", spoiled[i].named);
        assert_definition_refused(text, named);
    }
}

/* ---- Items ---- */

static const char *items_text(hf_buffer_t *buffer, const hf_mutation_item_t *lines,
                              uint32_t seat_count, uint32_t pool_count) {
    hf_mutation_items_t items = {lines, seat_count, pool_count, NULL};
    hf_buffer_reset(buffer);
    hf_rows_items_write(buffer, &items);
    return buffer->data;
}

/* The exact bytes, since the view seat_state reads $.seats with json_each and rows written by
 * the old core look like this. */
static void test_items_bytes(void **state) {
    (void)state;
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    const hf_mutation_item_t both[] = {{"F-A-1", 0}, {"F-A-2", 0}, {"GA", 2}};
    assert_string_equal(items_text(&buffer, both, 2, 1),
                        "{\"seats\":[\"F-A-1\",\"F-A-2\"],\"pools\":{\"GA\":2}}");
    const hf_mutation_item_t pool_only[] = {{"GA", 2}};
    assert_string_equal(items_text(&buffer, pool_only, 0, 1),
                        "{\"seats\":[],\"pools\":{\"GA\":2}}");
    assert_string_equal(items_text(&buffer, both, 2, 0),
                        "{\"seats\":[\"F-A-1\",\"F-A-2\"],\"pools\":{}}");
    assert_string_equal(items_text(&buffer, NULL, 0, 0), "{\"seats\":[],\"pools\":{}}");
    /* Several pools, and a quantity of ten digits. */
    const hf_mutation_item_t pools_many[] = {{"F-A-1", 0}, {"GA", 4294967295u}, {"VIP", 10}};
    assert_string_equal(items_text(&buffer, pools_many, 1, 2),
                        "{\"seats\":[\"F-A-1\"],\"pools\":{\"GA\":4294967295,\"VIP\":10}}");
    hf_buffer_free(&buffer);
}

/* An allocation's hold or order names it in its items; an allocation's own row round-trips,
 * seats in their order with the released ones flagged; damaged ones are refused. */
static void test_allocation_rows(void **state) {
    (void)state;
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    const hf_mutation_item_t lines[] = {{"F-A-1", 0}, {"GA", 2}};
    hf_mutation_items_t items = {lines, 1, 1, "amex"};
    hf_rows_items_write(&buffer, &items);
    assert_string_equal(buffer.data,
                        "{\"seats\":[\"F-A-1\"],\"pools\":{\"GA\":2},\"allocation\":\"amex\"}");
    hf_rows_items_t *parsed = calloc(1, sizeof *parsed);
    assert_non_null(parsed);
    hf_hold_request_t request = {0};
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_items_read(buffer.data, parsed, &request, error, sizeof error), 0);
    assert_string_equal(request.allocation_id, "amex");
    assert_int_equal(hf_rows_items_read("{\"seats\":[],\"pools\":{},\"allocation\":\"a-b\"}",
                                        parsed, &request, error, sizeof error),
                     -1);
    hf_rows_items_free(parsed);
    free(parsed);

    const hf_mutation_allocation_seat_t seats[] = {{"F-A-2", true}, {"F-A-1", false}};
    const hf_mutation_allocation_pool_t units[] = {{"GA", 5, 2}};
    hf_mutation_allocation_t allocation = {.event_id = "e1",
                                           .allocation_id = "amex",
                                           .seats = seats,
                                           .seat_count = 2,
                                           .pools = units,
                                           .pool_count = 1};
    hf_buffer_reset(&buffer);
    hf_rows_allocation_write(&buffer, &allocation);
    assert_string_equal(buffer.data,
                        "{\"seats\":[\"F-A-2\",\"F-A-1\"],\"released_seats\":[\"F-A-2\"],"
                        "\"pools\":{\"GA\":{\"units\":5,\"release_pending\":2}}}");
    hf_rows_allocation_t *rows = calloc(1, sizeof *rows);
    assert_non_null(rows);
    hf_stored_allocation_t stored = {0};
    assert_int_equal(hf_rows_allocation_read(buffer.data, rows, &stored, error, sizeof error), 0);
    assert_int_equal(stored.seat_count, 2);
    assert_string_equal(stored.seats[0].seat_id, "F-A-2");
    assert_true(stored.seats[0].released);
    assert_false(stored.seats[1].released);
    assert_int_equal(stored.pool_count, 1);
    assert_int_equal(stored.pools[0].units, 5);
    assert_int_equal(stored.pools[0].release_pending, 2);
    /* A released seat that is no seat of it, and more pending than units. */
    assert_int_equal(hf_rows_allocation_read("{\"seats\":[],\"released_seats\":[\"X-A-1\"],"
                                             "\"pools\":{}}",
                                             rows, &stored, error, sizeof error),
                     -1);
    assert_int_equal(hf_rows_allocation_read("{\"seats\":[],\"released_seats\":[],"
                                             "\"pools\":{\"GA\":{\"units\":1,"
                                             "\"release_pending\":2}}}",
                                             rows, &stored, error, sizeof error),
                     -1);
    /* Seats that left, with the changes their versions get back at a load; 1 or 2 only. */
    const hf_mutation_allocation_left_t left[] = {{"F-A-7", 2}, {"F-A-8", 1}};
    allocation.left = left;
    allocation.left_count = 2;
    hf_buffer_reset(&buffer);
    hf_rows_allocation_write(&buffer, &allocation);
    assert_non_null(strstr(buffer.data, ",\"left_seats\":[[\"F-A-7\",2],[\"F-A-8\",1]],"));
    assert_int_equal(hf_rows_allocation_read(buffer.data, rows, &stored, error, sizeof error), 0);
    assert_int_equal(stored.left_count, 2);
    assert_string_equal(stored.left[0].seat_id, "F-A-7");
    assert_int_equal(stored.left[0].changes, 2);
    assert_int_equal(stored.left[1].changes, 1);
    assert_int_equal(hf_rows_allocation_read("{\"seats\":[],\"released_seats\":[],"
                                             "\"left_seats\":[[\"F-A-7\",3]],\"pools\":{}}",
                                             rows, &stored, error, sizeof error),
                     -1);
    hf_rows_allocation_free(rows);
    free(rows);
    hf_buffer_free(&buffer);
}

static void test_items_round_trip(void **state) {
    (void)state;
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    hf_rows_items_t *items = calloc(1, sizeof *items);
    assert_non_null(items);
    hf_hold_request_t request = {0};
    char error[ERROR_SIZE] = "";

    const hf_mutation_item_t lines[] = {{"F-A-1", 0}, {"F-A-2", 0}, {"GA", 2}, {"VIP", 1}};
    assert_int_equal(
        hf_rows_items_read(items_text(&buffer, lines, 2, 2), items, &request, error, sizeof error),
        0);
    assert_int_equal(request.seat_count, 2);
    assert_string_equal(request.seat_ids[0], "F-A-1");
    assert_string_equal(request.seat_ids[1], "F-A-2");
    assert_int_equal(request.pool_count, 2);
    assert_string_equal(request.pools[0].pool_id, "GA");
    assert_int_equal(request.pools[0].quantity, 2);
    assert_string_equal(request.pools[1].pool_id, "VIP");
    assert_int_equal(request.pools[1].quantity, 1);

    /* A second read into the same items replaces the first (and frees its document: ASan
     * would report the leak). */
    assert_int_equal(
        hf_rows_items_read(items_text(&buffer, NULL, 0, 0), items, &request, error, sizeof error),
        0);
    assert_int_equal(request.seat_count, 0);
    assert_int_equal(request.pool_count, 0);
    assert_int_equal(hf_rows_items_read(items_text(&buffer, lines + 2, 0, 1), items, &request,
                                        error, sizeof error),
                     0);
    assert_int_equal(request.seat_count, 0);
    assert_int_equal(request.pool_count, 1);
    assert_string_equal(request.pools[0].pool_id, "GA");
    assert_int_equal(request.pools[0].quantity, 2);
    hf_rows_items_free(items);
    hf_rows_items_free(items);
    free(items);
    hf_buffer_free(&buffer);
}

static void assert_items_refused(hf_rows_items_t *items, const char *text, const char *named) {
    hf_hold_request_t request;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_rows_items_read(text, items, &request, error, sizeof error), -1);
    if (strstr(error, named) == NULL) fail_msg("\"%s\" does not name %s", error, named);
}

static void test_items_refusals(void **state) {
    (void)state;
    hf_rows_items_t *items = calloc(1, sizeof *items);
    assert_non_null(items);
    assert_items_refused(items, "{\"seats\":[", "not a JSON object");
    assert_items_refused(items, "[]", "not a JSON object");
    assert_items_refused(items, NULL, "not a JSON object");
    assert_items_refused(items, "{\"seats\":[],\"seats\":[],\"pools\":{}}", "duplicate");
    assert_items_refused(items, "{\"seats\":\"F-A-1\",\"pools\":{}}", "seats");
    assert_items_refused(items, "{\"pools\":{}}", "seats");
    assert_items_refused(items, "{\"seats\":[1],\"pools\":{}}", "seats");
    assert_items_refused(items, "{\"seats\":[],\"pools\":{\"GA\":0}}", "pools");
    assert_items_refused(items, "{\"seats\":[],\"pools\":{\"GA\":-2}}", "pools");
    assert_items_refused(items, "{\"seats\":[],\"pools\":{\"GA\":\"2\"}}", "pools");
    assert_items_refused(items, "{\"seats\":[],\"pools\":[]}", "pools");
    assert_items_refused(items, "{\"seats\":[]}", "pools");
    /* After refusals the items are freed as usual (ASan reports a leaked document). */
    hf_rows_items_free(items);
    free(items);
}

/* ---- A damaged row read back through the store ---- */

typedef temporary_database_t directory_t;

static int directory_setup(void **state) {
    directory_t *directory = calloc(1, sizeof *directory);
    if (directory == NULL || !temporary_database_make(directory, "rows")) return -1;
    *state = directory;
    return 0;
}

static int directory_teardown(void **state) {
    directory_t *directory = *state;
    temporary_database_remove(directory);
    free(directory);
    return 0;
}

/* Writes an event e1 and a hold res_1 through the store: closing right after the submit still
 * writes the batch in flight, and frees it. */
static void store_write_event_and_hold(const directory_t *directory) {
    hf_batch_t *batch = hf_batch_create();
    hf_event_definition_t definition = full_definition();
    snprintf(definition.id, sizeof definition.id, "e1");
    hf_mutation_t event = {.type = HF_MUTATION_EVENT_CREATE,
                           .at_ms = 1,
                           .as.event_create = {"e1", &definition}};
    hf_batch_append(batch, &event);
    const hf_mutation_item_t lines[] = {{"FLOOR-A-1", 0}, {"GA", 2}};
    hf_mutation_t hold = {.type = HF_MUTATION_HOLD_CREATE,
                          .at_ms = 2,
                          .as.hold_create = {.hold_id = "res_1",
                                             .event_id = "e1",
                                             .user_id = "u1",
                                             .items = {lines, 1, 1, NULL},
                                             .total = 100,
                                             .expires_at_ms = 1000,
                                             .status = HF_HOLD_HELD}};
    hf_batch_append(batch, &hold);
    store_write_batch(directory->url, batch);
}

static void execute(const directory_t *directory, const char *sql) {
    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open(directory->path, &database), SQLITE_OK);
    assert_int_equal(sqlite3_exec(database, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_changes(database), 1);
    sqlite3_close(database);
}

typedef struct counts {
    int events, holds;
} counts_t;

static int count_event(void *context, const hf_stored_event_t *event) {
    assert_string_equal(event->definition->id, "e1");
    ((counts_t *)context)->events++;
    return 0;
}

static int count_hold(void *context, const hf_stored_hold_t *hold) {
    assert_string_equal(hold->request.hold_id, "res_1");
    ((counts_t *)context)->holds++;
    return 0;
}

/* Loads the store; returns hf_store_load's answer with its error in error. */
static int store_load(const directory_t *directory, counts_t *counts, char *error) {
    hf_store_t *store = NULL;
    assert_int_equal(hf_store_open(&store, directory->url, error, ERROR_SIZE), 0);
    hf_store_loader_t loader = {.event = count_event, .hold = count_hold, .context = counts};
    error[0] = '\0';
    int rc = hf_store_load(store, &loader, error, ERROR_SIZE);
    hf_store_close(store);
    return rc;
}

static void assert_mentions(const char *error, const char *part) {
    if (strstr(error, part) == NULL) fail_msg("\"%s\" does not mention \"%s\"", error, part);
}

static void test_damaged_event_fails_the_load(void **state) {
    const directory_t *directory = *state;
    store_write_event_and_hold(directory);
    counts_t counts = {0};
    char error[ERROR_SIZE];
    assert_int_equal(store_load(directory, &counts, error), 0);
    assert_int_equal(counts.events, 1);
    assert_int_equal(counts.holds, 1);

    /* Rows of the same event as the store wrote them, then damaged one way at a time. */
    execute(directory, "UPDATE events SET config = json_set(config, '$.sections[0].rows[1].seats',"
                       " 0) WHERE id = 'e1'");
    counts = (counts_t){0};
    assert_int_equal(store_load(directory, &counts, error), -1);
    assert_mentions(error, "store: events row e1: ");
    assert_mentions(error, "sections");
    /* Nothing reached the loader: not the damaged event, not the holds after it. */
    assert_int_equal(counts.events, 0);
    assert_int_equal(counts.holds, 0);

    execute(directory, "UPDATE events SET config = '{\"id\":\"e1\"' WHERE id = 'e1'");
    assert_int_equal(store_load(directory, &counts, error), -1);
    assert_mentions(error, "store: events row e1: ");
    assert_mentions(error, "not a JSON object");

    execute(directory, "UPDATE events SET config = '" OLD_DEFINITION "' WHERE id = 'e1'");
    assert_int_equal(store_load(directory, &counts, error), 0);
    execute(directory, "UPDATE events SET config = replace(config, '\"e1\"', '\"e2\"')"
                       " WHERE id = 'e1'");
    assert_int_equal(store_load(directory, &counts, error), -1);
    assert_mentions(error, "store: events row e1: ");
    assert_mentions(error, "another event");
}

static int found_hold(void *context, const hf_stored_hold_t *hold) {
    (void)hold;
    (*(int *)context)++;
    return 0;
}

static void test_damaged_hold_fails_the_load(void **state) {
    const directory_t *directory = *state;
    store_write_event_and_hold(directory);
    counts_t counts = {0};
    char error[ERROR_SIZE];
    execute(directory, "UPDATE holds SET items = '{\"seats\":\"FLOOR-A-1\",\"pools\":{}}'"
                       " WHERE id = 'res_1'");
    assert_int_equal(store_load(directory, &counts, error), -1);
    assert_mentions(error, "store: holds row res_1: ");
    assert_mentions(error, "seats");
    assert_int_equal(counts.events, 1);
    assert_int_equal(counts.holds, 0);

    /* A forgotten hold read back alone fails the same way. */
    hf_store_t *store = NULL;
    assert_int_equal(hf_store_open(&store, directory->url, error, sizeof error), 0);
    int found_count = 0;
    hf_store_loader_t one = {.hold = found_hold, .context = &found_count};
    bool found = false;
    error[0] = '\0';
    assert_int_equal(hf_store_read_hold(store, "res_1", &one, &found, error, sizeof error), -1);
    assert_mentions(error, "store: holds row res_1: ");
    assert_mentions(error, "seats");
    assert_int_equal(found_count, 0);

    /* Damaged another way, then repaired: the same reader reads the row anew each time. */
    execute(directory, "UPDATE holds SET items = '{\"seats\":[],\"pools\":{\"GA\":0}}'"
                       " WHERE id = 'res_1'");
    assert_int_equal(hf_store_read_hold(store, "res_1", &one, &found, error, sizeof error), -1);
    assert_mentions(error, "store: holds row res_1: ");
    assert_mentions(error, "pools");
    execute(directory, "UPDATE holds SET items = '{\"seats\":[],\"pools\":{\"GA\":2}}'"
                       " WHERE id = 'res_1'");
    assert_int_equal(hf_store_read_hold(store, "res_1", &one, &found, error, sizeof error), 0);
    assert_true(found);
    assert_int_equal(found_count, 1);
    hf_store_close(store);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition_round_trips),
        cmocka_unit_test(test_room_opening_round_trips),
        cmocka_unit_test(test_definition_round_trips_empty_sections_and_pools),
        cmocka_unit_test(test_definition_of_the_old_core_reads_back),
        cmocka_unit_test(test_definition_refusals),
        cmocka_unit_test(test_items_bytes),
        cmocka_unit_test(test_items_round_trip),
        cmocka_unit_test(test_allocation_rows),
        cmocka_unit_test(test_items_refusals),
        cmocka_unit_test_setup_teardown(test_damaged_event_fails_the_load, directory_setup,
                                        directory_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_hold_fails_the_load, directory_setup,
                                        directory_teardown),
    };
    return cmocka_run_group_tests_name("rows", tests, NULL, NULL);
}
