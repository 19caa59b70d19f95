/* Unit tests of the audit history (store/history.h and the SQLite backend's store/sqlite/
 * history.c): the entry each kind of record makes, field by field; entries numbered per event
 * without gaps across batches and a reopen; a failed batch leaves no entry and no gap; pages
 * read back with after and limit, joined with their hold or order; the migration of a
 * version 4 database. Each test works in
 * its own temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/buffer.h"
#include "store/history.h"
#include "store/store.h"

#include "sqlite_fixtures.h"

/* 2026-11-21T20:00:00Z. */
#define NOW_MS 1795291200000LL
#define ERROR_SIZE 512

/* ---- Records ---- */

static const hf_mutation_item_t seat_and_pool[] = {{"F-A-1", 0}, {"GA", 2}};
static const hf_mutation_items_t ITEMS = {seat_and_pool, 1, 1, NULL};
static hf_row_definition_t rows[] = {{"A", 4}};
static hf_section_definition_t sections[] = {{"F", 100, 1, rows}};
static hf_pool_definition_t pools[] = {{"GA", 5, 50}};
static hf_event_definition_t definition = {.name = "Arena",
                                           .currency = "USD",
                                           .hold_ttl_ms = 600000,
                                           .max_hold_ms = 1800000,
                                           .max_seats_per_hold = 10,
                                           .section_count = 1,
                                           .sections = sections,
                                           .pool_count = 1,
                                           .pools = pools};

static hf_mutation_t event_create(const char *event_id) {
    snprintf(definition.id, sizeof definition.id, "%s", event_id);
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_CREATE,
                           .at_ms = NOW_MS,
                           .as.event_create = {event_id, &definition}};
}

static hf_mutation_t hold_create(const char *hold_id, const char *event_id, int64_t at_ms) {
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_CREATE,
                           .at_ms = at_ms,
                           .as.hold_create = {.hold_id = hold_id,
                                              .event_id = event_id,
                                              .user_id = "u\"1",
                                              .items = ITEMS,
                                              .total = 200,
                                              .expires_at_ms = at_ms + 60000,
                                              .status = HF_HOLD_HELD}};
}

static hf_mutation_t hold_update(const char *hold_id, const char *event_id, int status,
                                 const char *user_id, const char *order_id, int64_t at_ms) {
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_UPDATE,
                           .at_ms = at_ms,
                           .as.hold_update = {.hold_id = hold_id,
                                              .event_id = event_id,
                                              .user_id = user_id,
                                              .order_id = order_id,
                                              .expires_at_ms = NOW_MS + 120000,
                                              .status = status}};
}

static hf_mutation_t order_create(const char *order_id, const char *event_id, const char *hold_id,
                                  const char *payment_ref) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_CREATE,
                           .at_ms = NOW_MS + 5,
                           .as.order_create = {.order_id = order_id,
                                               .event_id = event_id,
                                               .user_id = "u2",
                                               .hold_id = hold_id,
                                               .currency = "USD",
                                               .payment_ref = payment_ref,
                                               .items = ITEMS,
                                               .total = 200,
                                               .status = HF_ORDER_CONFIRMED}};
}

static hf_mutation_t order_cancel(const char *order_id, const char *event_id) {
    return (hf_mutation_t){.type = HF_MUTATION_ORDER_UPDATE,
                           .at_ms = NOW_MS + 9,
                           .as.order_update = {.order_id = order_id,
                                               .event_id = event_id,
                                               .user_id = "u2",
                                               .status = HF_ORDER_CANCELLED}};
}

static hf_mutation_t event_sales(const char *event_id) {
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_SALES,
                           .at_ms = NOW_MS,
                           .as.event_sales = {event_id, false}};
}

/* "type data" of a record's entry, or "-" when it makes none. */
static void assert_entry(hf_mutation_t mutation, const char *expected) {
    const char *type, *event_id;
    hf_buffer_t text;
    hf_buffer_init(&text);
    if (hf_history_entry_of(&mutation, &type, &event_id)) {
        assert_non_null(event_id);
        hf_buffer_printf(&text, "%s ", type);
        hf_history_data_write(&text, &mutation);
    } else {
        hf_buffer_printf(&text, "-");
    }
    assert_string_equal(text.data, expected);
    hf_buffer_free(&text);
}

/* Every kind of record: the entry it makes, field by field, or none. An entry names its hold
 * or order and repeats none of its user, seats or pools (a read joins them: the test below). */
static void test_entries_derived_from_records(void **state) {
    (void)state;
    assert_entry(hold_create("res_1", "e1", NOW_MS),
                 "hold {\"reservation_id\":\"res_1\",\"total\":200,"
                 "\"expires_at\":\"2026-11-21T20:01:00.000Z\"}");
    assert_entry(hold_update("res_1", "e1", HF_HOLD_HELD, "u1", NULL, NOW_MS),
                 "extend {\"reservation_id\":\"res_1\","
                 "\"expires_at\":\"2026-11-21T20:02:00.000Z\"}");
    assert_entry(hold_update("res_1", "e1", HF_HOLD_RELEASED, NULL, NULL, NOW_MS),
                 "release {\"reservation_id\":\"res_1\"}");
    assert_entry(hold_update("res_1", "e1", HF_HOLD_EXPIRED, NULL, NULL, NOW_MS),
                 "expiry {\"reservation_id\":\"res_1\","
                 "\"expires_at\":\"2026-11-21T20:02:00.000Z\"}");
    /* A confirmation is told by its order's commit, which has the payment reference. */
    assert_entry(hold_update("res_1", "e1", HF_HOLD_CONFIRMED, "u1", "ord_1", NOW_MS), "-");
    assert_entry(order_create("ord_1", "e1", "res_1", "pi_1"),
                 "commit {\"reservation_id\":\"res_1\",\"order_id\":\"ord_1\","
                 "\"total\":200,\"payment_ref\":\"pi_1\"}");
    assert_entry(order_create("ord_2", "e1", NULL, NULL),
                 "booking {\"order_id\":\"ord_2\",\"total\":200,\"payment_ref\":null}");
    assert_entry(order_cancel("ord_2", "e1"), "cancel {\"order_id\":\"ord_2\",\"refund_id\":null}");
    assert_entry(event_create("e1"), "-");
    assert_entry(event_sales("e1"), "-");
    hf_mutation_t seat = {.type = HF_MUTATION_SEAT,
                          .at_ms = NOW_MS,
                          .as.seat = {.event_id = "e1", .seat_id = "F-A-1", .version = 2}};
    assert_entry(seat, "-");
    hf_mutation_t item = {.type = HF_MUTATION_ORDER_ITEM,
                          .at_ms = NOW_MS,
                          .as.order_item = {"ord_1", "e1", "F-A-1", NULL, 1}};
    assert_entry(item, "-");
}

/* ---- The store ---- */

typedef struct fixture {
    temporary_database_t database;
    char url[160];
} fixture_t;

static int fixture_setup(void **state) {
    fixture_t *fixture = calloc(1, sizeof *fixture);
    if (!temporary_database_make(&fixture->database, "history")) return -1;
    snprintf(fixture->url, sizeof fixture->url, "sqlite:%s", fixture->database.path);
    *state = fixture;
    return 0;
}

static int fixture_teardown(void **state) {
    fixture_t *fixture = *state;
    temporary_database_remove(&fixture->database);
    free(fixture);
    return 0;
}

static pthread_mutex_t done_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_changed = PTHREAD_COND_INITIALIZER;
static int done_count;

static void on_done(void *context) {
    (void)context;
    pthread_mutex_lock(&done_mutex);
    done_count++;
    pthread_cond_broadcast(&done_changed);
    pthread_mutex_unlock(&done_mutex);
}

static hf_store_t *store_open_started(const fixture_t *fixture) {
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    int rc = hf_store_open(&store, fixture->url, error, sizeof error);
    if (rc != 0) fail_msg("open failed: %s", error);
    assert_int_equal(hf_store_start(store, on_done, NULL), 0);
    return store;
}

/* Submits the records as one batch and waits for it to be written; true when it was. */
static bool batch_write(hf_store_t *store, const hf_mutation_t *records, size_t count,
                        uint64_t sequence) {
    hf_batch_t *batch = hf_batch_create();
    for (size_t i = 0; i < count; i++) hf_batch_append(batch, &records[i]);
    hf_store_submit(store, batch, sequence);
    uint64_t taken_sequence;
    bool ok = false;
    char error[ERROR_SIZE];
    hf_batch_t *taken = NULL;
    pthread_mutex_lock(&done_mutex);
    while ((taken = hf_store_take_result(store, &taken_sequence, &ok, error, sizeof error)) == NULL)
        pthread_cond_wait(&done_changed, &done_mutex);
    pthread_mutex_unlock(&done_mutex);
    assert_ptr_equal(taken, batch);
    hf_batch_destroy(batch);
    return ok;
}

/* A page of the event's history as "seq:type" words, with " next" when the callback was asked
 * to stop (the page had more than limit rows). */
typedef struct page {
    char text[512];
    uint32_t limit, count;
} page_t;

static int on_entry(void *context, const hf_stored_history_t *entry) {
    page_t *page = context;
    if (page->count == page->limit) {
        strcat(page->text, " more");
        return HF_STORE_LIST_STOP;
    }
    assert_true(entry->data_length >= 2 && entry->data[0] == '{');
    assert_int_equal(entry->data[entry->data_length - 1], '}');
    snprintf(page->text + strlen(page->text), sizeof page->text - strlen(page->text),
             "%s%lld:%s@%lld", page->count ? " " : "", (long long)entry->seq, entry->type,
             (long long)(entry->at_ms - NOW_MS));
    page->count++;
    return 0;
}

static void assert_page(hf_store_t *store, const char *event_id, int64_t after, uint32_t limit,
                        const char *expected) {
    page_t page = {.limit = limit};
    hf_store_history_query_t query = {.event_id = event_id, .after_seq = after, .limit = limit + 1};
    char error[ERROR_SIZE] = "";
    int rc = hf_store_read_history(store, &query, on_entry, &page, error, sizeof error);
    if (rc != 0) fail_msg("read failed: %s", error);
    assert_string_equal(page.text, expected);
}

/* Entries are numbered per event from 1 without gaps, across batches and a reopen (the store
 * finds each event's last seq again); pages start after a seq and stop at a limit. */
static void test_seq_per_event_across_batches_and_reopen(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    const hf_mutation_t first[] = {
        event_create("e1"), event_create("e2"), hold_create("res_1", "e1", NOW_MS + 1),
        hold_create("res_2", "e2", NOW_MS + 2),
        hold_update("res_1", "e1", HF_HOLD_HELD, "u1", NULL, NOW_MS + 3)};
    assert_true(batch_write(store, first, 5, 1));
    const hf_mutation_t second[] = {
        hold_update("res_1", "e1", HF_HOLD_RELEASED, NULL, NULL, NOW_MS + 4),
        hold_create("res_3", "e1", NOW_MS + 5)};
    assert_true(batch_write(store, second, 2, 2));
    assert_page(store, "e1", 0, 100, "1:hold@1 2:extend@3 3:release@4 4:hold@5");
    assert_page(store, "e2", 0, 100, "1:hold@2");
    hf_store_close(store);

    store = store_open_started(fixture);
    const hf_mutation_t third[] = {
        hold_update("res_3", "e1", HF_HOLD_EXPIRED, NULL, NULL, NOW_MS + 6),
        hold_create("res_4", "e2", NOW_MS + 7)};
    assert_true(batch_write(store, third, 2, 1));
    assert_page(store, "e1", 0, 100, "1:hold@1 2:extend@3 3:release@4 4:hold@5 5:expiry@6");
    assert_page(store, "e2", 0, 100, "1:hold@2 2:hold@7");
    assert_page(store, "e1", 1, 2, "2:extend@3 3:release@4 more");
    assert_page(store, "e1", 3, 2, "4:hold@5 5:expiry@6");
    assert_page(store, "e1", 5, 2, "");
    assert_page(store, "nope", 0, 2, "");
    hf_store_close(store);
}

/* The writer numbers a batch's entries as they come and writes them several to an INSERT
 * (sqlite/history.c): a batch of more entries than one INSERT takes, over two events, numbers
 * each event's without gaps; a notification's state in the same batch finds its entry, and an
 * event deleted in it takes its entries with it, the ones before the deletion included. */
static void test_many_entries_in_one_batch(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    const hf_mutation_t events[] = {event_create("e1"), event_create("e2"), event_create("e3")};
    assert_true(batch_write(store, events, 3, 1));
    enum { HOLDS = 19 };
    char ids[HOLDS][16];
    hf_mutation_t records[HOLDS + 4];
    size_t count = 0;
    for (int i = 0; i < HOLDS; i++) {
        snprintf(ids[i], sizeof ids[i], "res_%d", i);
        records[count++] = hold_create(ids[i], i % 3 == 2 ? "e2" : "e1", NOW_MS + i);
        if (i == 4) {
            hf_mutation_t notify = {.type = HF_MUTATION_NOTIFY,
                                    .at_ms = NOW_MS,
                                    .as.notify = {.unit = "e1",
                                                  .seq = 3,
                                                  .status = 1,
                                                  .attempts = 1,
                                                  .last_status = 204}};
            records[count++] = notify;
        }
    }
    /* The store takes the deletion as it comes (the core would refuse it for an event with
     * a hold): the entry made just before it goes with the event. */
    records[count++] = hold_create("res_e3", "e3", NOW_MS);
    hf_mutation_t deleted = {.type = HF_MUTATION_EVENT_DELETE,
                             .at_ms = NOW_MS,
                             .as.event_delete = {.event_id = "e3"}};
    records[count++] = deleted;
    assert_true(batch_write(store, records, count, 2));
    assert_page(store, "e1", 0, 100,
                "1:hold@0 2:hold@1 3:hold@3 4:hold@4 5:hold@6 6:hold@7 7:hold@9 8:hold@10"
                " 9:hold@12 10:hold@13 11:hold@15 12:hold@16 13:hold@18");
    assert_page(store, "e2", 0, 100, "1:hold@2 2:hold@5 3:hold@8 4:hold@11 5:hold@14 6:hold@17");
    hf_store_close(store);

    sqlite3 *database = open_with(fixture->database.path, NULL);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history"), HOLDS);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history WHERE event_id = 'e1'"
                                            " AND seq = 3 AND notify_status = 1"
                                            " AND data LIKE '{\"reservation_id\":\"res_3\",%'"),
                     1);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history WHERE notify_status = 1"),
                     1);
    assert_int_equal(query_number(database, "SELECT count(*) FROM events"), 2);
    sqlite3_close(database);
}

/* A page as "seq:type reservation user items" lines. */
typedef struct subjects {
    char text[1024];
    uint32_t limit, count;
} subjects_t;

static int on_subject(void *context, const hf_stored_history_t *entry) {
    subjects_t *subjects = context;
    if (subjects->count == subjects->limit) return HF_STORE_LIST_STOP;
    size_t used = strlen(subjects->text);
    snprintf(subjects->text + used, sizeof subjects->text - used, "%s%lld:%s%s %s %s %s",
             used ? "\n" : "", (long long)entry->seq, entry->type,
             entry->has_subject ? "" : " (none)",
             entry->reservation_id ? entry->reservation_id : "null",
             entry->user_id ? entry->user_id : "null", entry->items ? entry->items : "null");
    subjects->count++;
    return 0;
}

static void assert_subjects(hf_store_t *store, int64_t after, uint32_t limit, uint32_t stop,
                            const char *expected) {
    subjects_t subjects = {"", stop, 0};
    hf_store_history_query_t query = {.event_id = "e1", .after_seq = after, .limit = limit};
    char error[ERROR_SIZE] = "";
    int rc = hf_store_read_history(store, &query, on_subject, &subjects, error, sizeof error);
    if (rc != 0) fail_msg("read failed: %s", error);
    assert_string_equal(subjects.text, expected);
}

/* Entries carry their hold's (or else their order's) reservation, user and items, joined at
 * read time, in seq order, as many as the limit asks; a callback that stops ends the read. */
static void test_pages_join_their_hold_or_order(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    static const hf_mutation_item_t other_seat[] = {{"F-A-3", 0}};
    hf_mutation_t booking = order_create("ord_2", "e1", NULL, NULL);
    booking.as.order_create.items = (hf_mutation_items_t){other_seat, 1, 0, NULL};
    /* A payment for a hold the store does not have names its reservation only. */
    hf_mutation_t payment = {.type = HF_MUTATION_DELIVERY,
                             .at_ms = NOW_MS + 10,
                             .as.delivery = {.payment_intent_id = "pi_9",
                                             .event_id = "e1",
                                             .reservation_id = "res_9",
                                             .amount = 5,
                                             .hold_event_id = "e1"}};
    const hf_mutation_t records[] = {
        event_create("e1"),
        hold_create("res_1", "e1", NOW_MS + 1),
        hold_update("res_1", "e1", HF_HOLD_RELEASED, NULL, NULL, NOW_MS + 2),
        hold_create("res_2", "e1", NOW_MS + 3),
        order_create("ord_1", "e1", "res_2", "pi_1"),
        order_cancel("ord_1", "e1"),
        booking,
        payment};
    assert_true(batch_write(store, records, 8, 1));
    const char *items = "{\"seats\":[\"F-A-1\"],\"pools\":{\"GA\":2}}";
    char all[1024];
    /* The commit's subject is its hold (u"1), the cancel's its order (u2, of the hold res_2). */
    snprintf(all, sizeof all,
             "1:hold res_1 u\"1 %s\n2:release res_1 u\"1 %s\n3:hold res_2 u\"1 %s\n"
             "4:commit res_2 u\"1 %s\n5:cancel res_2 u2 %s\n"
             "6:booking null u2 {\"seats\":[\"F-A-3\"],\"pools\":{}}\n"
             "7:payment res_9 null null",
             items, items, items, items, items);
    assert_subjects(store, 0, 100, 100, all);
    char tail[512];
    snprintf(tail, sizeof tail, "%s", strstr(all, "5:cancel"));
    *strstr(tail, "\n7:") = '\0';
    assert_subjects(store, 4, 2, 100, tail);
    char head[256];
    snprintf(head, sizeof head, "1:hold res_1 u\"1 %s", items);
    assert_subjects(store, 0, 100, 1, head);
    hf_store_close(store);
}

/* A failed batch leaves none of its entries, and the next batch numbers on from the last
 * committed entry, not from the numbers the failed one had taken. */
static void test_failed_batch_leaves_no_entry(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    const hf_mutation_t first[] = {event_create("e1"), hold_create("res_1", "e1", NOW_MS + 1)};
    assert_true(batch_write(store, first, 2, 1));
    /* The sales record of an event the table lacks fails the whole batch. */
    const hf_mutation_t failing[] = {hold_create("res_2", "e1", NOW_MS + 2),
                                     hold_create("res_3", "e1", NOW_MS + 3), event_sales("nope")};
    assert_false(batch_write(store, failing, 3, 2));
    const hf_mutation_t third[] = {hold_create("res_4", "e1", NOW_MS + 4)};
    assert_true(batch_write(store, third, 1, 3));
    assert_page(store, "e1", 0, 100, "1:hold@1 2:hold@4");
    hf_store_close(store);
    sqlite3 *database = open_with(fixture->database.path, NULL);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history"), 2);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history WHERE data LIKE"
                                            " '%res_2%' OR data LIKE '%res_3%'"),
                     0);
    sqlite3_close(database);
}

/* A version 4 database (no history) opens as version 5 with an empty history, which its
 * events' next changes start at 1. */
static void test_version_4_is_migrated(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    const hf_mutation_t first[] = {event_create("old"), hold_create("res_1", "old", NOW_MS)};
    assert_true(batch_write(store, first, 2, 1));
    hf_store_close(store);
    sqlite3 *database = open_with(fixture->database.path, NULL);
    exec_ok(database, "DROP TABLE history;"
                      "UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    sqlite3_close(database);

    store = store_open_started(fixture);
    database = open_with(fixture->database.path, NULL);
    assert_int_equal(query_number(database, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    assert_int_equal(query_number(database, "SELECT count(*) FROM history"), 0);
    assert_int_equal(query_number(database, "SELECT count(*) FROM holds"), 1);
    sqlite3_close(database);
    const hf_mutation_t second[] = {
        hold_update("res_1", "old", HF_HOLD_RELEASED, NULL, NULL, NOW_MS + 1)};
    assert_true(batch_write(store, second, 1, 1));
    assert_page(store, "old", 0, 100, "1:release@1");
    hf_store_close(store);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_derived_from_records),
#define STORE_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
        STORE_TEST(test_seq_per_event_across_batches_and_reopen),
        STORE_TEST(test_many_entries_in_one_batch),
        STORE_TEST(test_failed_batch_leaves_no_entry),
        STORE_TEST(test_pages_join_their_hold_or_order),
        STORE_TEST(test_version_4_is_migrated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
