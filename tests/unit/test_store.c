/* Unit tests of store/'s pipeline, batch and writer: the batch's deep copies of every kind of
 * record and its memory reuse, and the SQLite store end to end on the writing side: the
 * schema, every mutation written by the store's workers, the unique index as the last arbiter,
 * failures rolled back whole, old idempotency keys purged, batches durable in order and the
 * log's syncer. Loading, the decoder and the reads are test_store_load.c's. Each test works in
 * its own temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/limits.h"
#include "lib/buffer.h"
#include "store/store.h"
#include "store/fault.h"
#include "store/sqlite/sync.h"
#include "store_cases.h"

/* ---- Batch ---- */

static void assert_items_copied(const hf_mutation_items_t *copy, const hf_mutation_item_t *source,
                                const char *const *ids, const uint32_t *quantities,
                                uint32_t seat_count, uint32_t pool_count) {
    assert_int_equal(copy->seat_count, seat_count);
    assert_int_equal(copy->pool_count, pool_count);
    assert_ptr_not_equal(copy->lines, source);
    for (uint32_t i = 0; i < seat_count + pool_count; i++) {
        assert_ptr_not_equal(copy->lines[i].id, source[i].id);
        assert_string_equal(copy->lines[i].id, ids[i]);
        assert_int_equal(copy->lines[i].quantity, quantities[i]);
    }
}

/* Every kind carries pointers: each is appended, every source buffer it points to (strings, the
 * items array and its ids, the definition with its sections, rows and pools) is scribbled over,
 * and the copies must not see it. */
static void test_batch_deep_copy(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();

    /* An event's creation: its id and its whole definition. */
    char event_id[] = "eras_n1";
    hf_row_definition_t rows_f[] = {{"A", 2}, {"B", 3}};
    hf_row_definition_t rows_bal[] = {{"C", 4}};
    hf_section_definition_t sections[] = {{"F", 100, 2, rows_f}, {"BAL", 60, 1, rows_bal}};
    hf_pool_definition_t pools[] = {{"GA", 5, 50}, {"VIP", 2, 500}};
    hf_event_definition_t definition = {.id = "eras_n1",
                                        .name = "Eras",
                                        .currency = "USD",
                                        .hold_ttl_ms = 1500,
                                        .max_hold_ms = 3000,
                                        .max_seats_per_user = 0,
                                        .max_seats_per_hold = 10,
                                        .section_count = 2,
                                        .sections = sections,
                                        .pool_count = 2,
                                        .pools = pools};
    hf_mutation_t event = {.type = HF_MUTATION_EVENT_CREATE,
                           .at_ms = 41,
                           .as.event_create = {event_id, &definition}};
    hf_batch_append(batch, &event);

    /* The live streams' seats and pools. */
    char seat_event[] = "e_seat", seat_id[] = "F-A-1", pool_event[] = "e_pool", pool_id[] = "GA";
    hf_mutation_t seat = {.type = HF_MUTATION_SEAT,
                          .at_ms = 42,
                          .as.seat = {seat_event, seat_id, HF_SEAT_HELD, 3, 0}};
    hf_batch_append(batch, &seat);
    hf_mutation_t pool = {.type = HF_MUTATION_POOL,
                          .at_ms = 43,
                          .as.pool = {pool_event, pool_id, 4, 5, 6, 0}};
    hf_batch_append(batch, &pool);

    /* A hold: its ids and its lines. */
    char hold_id[] = "res_1", hold_event[] = "e_hold", hold_user[] = "u_hold";
    char hold_seat[] = "F-A-2", hold_pool[] = "VIP";
    hf_mutation_item_t hold_lines[] = {{hold_seat, 0}, {hold_pool, 2}};
    hf_mutation_t hold = {.type = HF_MUTATION_HOLD_CREATE,
                          .at_ms = 44,
                          .as.hold_create = {.hold_id = hold_id,
                                             .event_id = hold_event,
                                             .user_id = hold_user,
                                             .items = {hold_lines, 1, 1, NULL},
                                             .total = 900,
                                             .expires_at_ms = 77,
                                             .status = HF_HOLD_HELD}};
    hf_batch_append(batch, &hold);
    char update_hold[] = "res_2", update_event[] = "e_update", update_user[] = "u_update";
    char update_order[] = "ord_2";
    hf_mutation_t update = {.type = HF_MUTATION_HOLD_UPDATE,
                            .at_ms = 45,
                            .as.hold_update = {.hold_id = update_hold,
                                               .event_id = update_event,
                                               .user_id = update_user,
                                               .order_id = update_order,
                                               .expires_at_ms = 78,
                                               .status = HF_HOLD_CONFIRMED}};
    hf_batch_append(batch, &update);

    /* An order, its lines as a row each, its update. */
    char order_id[] = "ord_1", order_event[] = "e_order", order_user[] = "u_order";
    char order_hold[] = "res_3", currency[] = "EUR", payment_ref[] = "pi_1";
    char order_seat_id[] = "F-B-1", order_seat_id2[] = "F-B-2", order_pool_id[] = "GA";
    hf_mutation_item_t order_lines[] = {{order_seat_id, 0},
                                        {order_seat_id2, 0},
                                        {order_pool_id, 3}};
    hf_mutation_t order = {.type = HF_MUTATION_ORDER_CREATE,
                           .at_ms = 46,
                           .as.order_create = {.order_id = order_id,
                                               .event_id = order_event,
                                               .user_id = order_user,
                                               .hold_id = order_hold,
                                               .currency = currency,
                                               .payment_ref = payment_ref,
                                               .items = {order_lines, 2, 1, NULL},
                                               .total = 950,
                                               .status = HF_ORDER_CONFIRMED}};
    hf_batch_append(batch, &order);
    char item_order[] = "ord_3", item_event[] = "e_item", item_seat[] = "F-C-1";
    char item_pool[] = "GA2";
    hf_mutation_t item = {.type = HF_MUTATION_ORDER_ITEM,
                          .at_ms = 47,
                          .as.order_item = {item_order, item_event, item_seat, item_pool, 2}};
    hf_batch_append(batch, &item);
    char cancel_order[] = "ord_4", cancel_event[] = "e_cancel", cancel_user[] = "u_cancel";
    hf_mutation_t cancel = {.type = HF_MUTATION_ORDER_UPDATE,
                            .at_ms = 48,
                            .as.order_update = {.order_id = cancel_order,
                                                .event_id = cancel_event,
                                                .user_id = cancel_user,
                                                .status = HF_ORDER_CANCELLED}};
    hf_batch_append(batch, &cancel);

    /* An answer: key, body and hash. */
    char key[] = "POST /v1/events k1", body[] = "{\"a\":1}";
    uint8_t hash[32];
    memcpy(hash, test_hash, sizeof hash);
    hf_mutation_t answer = {.type = HF_MUTATION_IDEMPOTENCY,
                            .at_ms = 49,
                            .as.idempotency = {key, body, hash, 201, NULL}};
    hf_batch_append(batch, &answer);

    /* Scribble over every source buffer: the batch must not see it. */
    char *strings[] = {
        event_id,    seat_event,   seat_id,       pool_event,     pool_id,       hold_id,
        hold_event,  hold_user,    hold_seat,     hold_pool,      update_hold,   update_event,
        update_user, update_order, order_id,      order_event,    order_user,    order_hold,
        currency,    payment_ref,  order_seat_id, order_seat_id2, order_pool_id, item_order,
        item_event,  item_seat,    item_pool,     cancel_order,   cancel_event,  cancel_user,
        key,         body};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) scribble(strings[i]);
    memset(hash, 0, sizeof hash);
    memset(rows_f, 0x5a, sizeof rows_f);
    memset(rows_bal, 0x5a, sizeof rows_bal);
    memset(sections, 0x5a, sizeof sections);
    memset(pools, 0x5a, sizeof pools);
    memset(&definition, 0x5a, sizeof definition);
    memset(hold_lines, 0x5a, sizeof hold_lines);
    memset(order_lines, 0x5a, sizeof order_lines);

    assert_int_equal(hf_batch_count(batch), 9);
    const hf_mutation_t *copy = hf_batch_at(batch, 0);
    assert_int_equal(copy->type, HF_MUTATION_EVENT_CREATE);
    assert_int_equal(copy->at_ms, 41);
    assert_string_equal(copy->as.event_create.event_id, "eras_n1");
    const hf_event_definition_t *copied = copy->as.event_create.definition;
    assert_ptr_not_equal(copied, &definition);
    assert_string_equal(copied->id, "eras_n1");
    assert_string_equal(copied->name, "Eras");
    assert_string_equal(copied->currency, "USD");
    assert_int_equal(copied->hold_ttl_ms, 1500);
    assert_int_equal(copied->max_hold_ms, 3000);
    assert_int_equal(copied->max_seats_per_user, 0);
    assert_int_equal(copied->max_seats_per_hold, 10);
    assert_int_equal(copied->section_count, 2);
    assert_ptr_not_equal(copied->sections, sections);
    assert_string_equal(copied->sections[0].id, "F");
    assert_int_equal(copied->sections[0].price, 100);
    assert_int_equal(copied->sections[0].row_count, 2);
    assert_ptr_not_equal(copied->sections[0].rows, rows_f);
    assert_string_equal(copied->sections[0].rows[0].id, "A");
    assert_int_equal(copied->sections[0].rows[0].seats, 2);
    assert_string_equal(copied->sections[0].rows[1].id, "B");
    assert_int_equal(copied->sections[0].rows[1].seats, 3);
    assert_string_equal(copied->sections[1].id, "BAL");
    assert_int_equal(copied->sections[1].price, 60);
    assert_int_equal(copied->sections[1].row_count, 1);
    assert_ptr_not_equal(copied->sections[1].rows, rows_bal);
    assert_string_equal(copied->sections[1].rows[0].id, "C");
    assert_int_equal(copied->sections[1].rows[0].seats, 4);
    assert_int_equal(copied->pool_count, 2);
    assert_ptr_not_equal(copied->pools, pools);
    assert_string_equal(copied->pools[0].id, "GA");
    assert_int_equal(copied->pools[0].capacity, 5);
    assert_int_equal(copied->pools[0].price, 50);
    assert_string_equal(copied->pools[1].id, "VIP");
    assert_int_equal(copied->pools[1].capacity, 2);
    assert_int_equal(copied->pools[1].price, 500);

    copy = hf_batch_at(batch, 1);
    assert_int_equal(copy->type, HF_MUTATION_SEAT);
    assert_int_equal(copy->at_ms, 42);
    assert_string_equal(copy->as.seat.event_id, "e_seat");
    assert_string_equal(copy->as.seat.seat_id, "F-A-1");
    assert_int_equal(copy->as.seat.status, HF_SEAT_HELD);
    assert_int_equal(copy->as.seat.version, 3);

    copy = hf_batch_at(batch, 2);
    assert_int_equal(copy->type, HF_MUTATION_POOL);
    assert_int_equal(copy->at_ms, 43);
    assert_string_equal(copy->as.pool.event_id, "e_pool");
    assert_string_equal(copy->as.pool.pool_id, "GA");
    assert_int_equal(copy->as.pool.available, 4);
    assert_int_equal(copy->as.pool.held, 5);
    assert_int_equal(copy->as.pool.sold, 6);

    copy = hf_batch_at(batch, 3);
    assert_int_equal(copy->type, HF_MUTATION_HOLD_CREATE);
    assert_int_equal(copy->at_ms, 44);
    assert_string_equal(copy->as.hold_create.hold_id, "res_1");
    assert_string_equal(copy->as.hold_create.event_id, "e_hold");
    assert_string_equal(copy->as.hold_create.user_id, "u_hold");
    const char *const hold_ids[] = {"F-A-2", "VIP"};
    const uint32_t hold_quantities[] = {0, 2};
    assert_items_copied(&copy->as.hold_create.items, hold_lines, hold_ids, hold_quantities, 1, 1);
    assert_int_equal(copy->as.hold_create.total, 900);
    assert_int_equal(copy->as.hold_create.expires_at_ms, 77);
    assert_int_equal(copy->as.hold_create.status, HF_HOLD_HELD);

    copy = hf_batch_at(batch, 4);
    assert_int_equal(copy->type, HF_MUTATION_HOLD_UPDATE);
    assert_int_equal(copy->at_ms, 45);
    assert_string_equal(copy->as.hold_update.hold_id, "res_2");
    assert_string_equal(copy->as.hold_update.event_id, "e_update");
    assert_string_equal(copy->as.hold_update.user_id, "u_update");
    assert_string_equal(copy->as.hold_update.order_id, "ord_2");
    assert_int_equal(copy->as.hold_update.expires_at_ms, 78);
    assert_int_equal(copy->as.hold_update.status, HF_HOLD_CONFIRMED);

    copy = hf_batch_at(batch, 5);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_CREATE);
    assert_int_equal(copy->at_ms, 46);
    assert_string_equal(copy->as.order_create.order_id, "ord_1");
    assert_string_equal(copy->as.order_create.event_id, "e_order");
    assert_string_equal(copy->as.order_create.user_id, "u_order");
    assert_string_equal(copy->as.order_create.hold_id, "res_3");
    assert_string_equal(copy->as.order_create.currency, "EUR");
    assert_string_equal(copy->as.order_create.payment_ref, "pi_1");
    const char *const order_ids[] = {"F-B-1", "F-B-2", "GA"};
    const uint32_t order_quantities[] = {0, 0, 3};
    assert_items_copied(&copy->as.order_create.items, order_lines, order_ids, order_quantities, 2,
                        1);
    assert_int_equal(copy->as.order_create.total, 950);
    assert_int_equal(copy->as.order_create.status, HF_ORDER_CONFIRMED);

    copy = hf_batch_at(batch, 6);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_ITEM);
    assert_int_equal(copy->at_ms, 47);
    assert_string_equal(copy->as.order_item.order_id, "ord_3");
    assert_string_equal(copy->as.order_item.event_id, "e_item");
    assert_string_equal(copy->as.order_item.seat_id, "F-C-1");
    assert_string_equal(copy->as.order_item.pool_id, "GA2");
    assert_int_equal(copy->as.order_item.quantity, 2);

    copy = hf_batch_at(batch, 7);
    assert_int_equal(copy->type, HF_MUTATION_ORDER_UPDATE);
    assert_int_equal(copy->at_ms, 48);
    assert_string_equal(copy->as.order_update.order_id, "ord_4");
    assert_string_equal(copy->as.order_update.event_id, "e_cancel");
    assert_string_equal(copy->as.order_update.user_id, "u_cancel");
    assert_int_equal(copy->as.order_update.status, HF_ORDER_CANCELLED);

    copy = hf_batch_at(batch, 8);
    assert_int_equal(copy->type, HF_MUTATION_IDEMPOTENCY);
    assert_int_equal(copy->at_ms, 49);
    assert_string_equal(copy->as.idempotency.key, "POST /v1/events k1");
    assert_string_equal(copy->as.idempotency.body, "{\"a\":1}");
    assert_memory_equal(copy->as.idempotency.hash, test_hash, 32);
    assert_ptr_not_equal(copy->as.idempotency.hash, hash);
    assert_int_equal(copy->as.idempotency.status, 201);

    /* Absent pointers stay absent, in every kind that may leave one out. */
    hf_mutation_t sparse[] = {
        {.type = HF_MUTATION_HOLD_UPDATE, .as.hold_update = {.hold_id = "res_9"}},
        {.type = HF_MUTATION_ORDER_CREATE, .as.order_create = {.order_id = "ord_9"}},
        {.type = HF_MUTATION_ORDER_ITEM, .as.order_item = {.order_id = "ord_9", .seat_id = "S"}},
        {.type = HF_MUTATION_ORDER_ITEM, .as.order_item = {.order_id = "ord_9", .pool_id = "P"}},
        {.type = HF_MUTATION_ORDER_UPDATE, .as.order_update = {.order_id = "ord_9"}},
        {.type = HF_MUTATION_IDEMPOTENCY, .as.idempotency = {.key = "k9"}},
        {.type = HF_MUTATION_SEAT, .as.seat = {.seat_id = "F-A-9"}},
        {.type = HF_MUTATION_POOL, .as.pool = {.pool_id = "GA9"}},
        {.type = HF_MUTATION_HOLD_CREATE, .as.hold_create = {.hold_id = "res_8"}},
        /* An event of seats only: no pools at all. */
        {.type = HF_MUTATION_EVENT_CREATE, .as.event_create = {"e9", &club}},
    };
    for (size_t i = 0; i < sizeof sparse / sizeof sparse[0]; i++)
        hf_batch_append(batch, &sparse[i]);
    const hf_mutation_hold_update_t *hold_sparse = &hf_batch_at(batch, 9)->as.hold_update;
    assert_string_equal(hold_sparse->hold_id, "res_9");
    assert_null(hold_sparse->event_id);
    assert_null(hold_sparse->user_id);
    assert_null(hold_sparse->order_id);
    const hf_mutation_order_create_t *order_sparse = &hf_batch_at(batch, 10)->as.order_create;
    assert_string_equal(order_sparse->order_id, "ord_9");
    assert_null(order_sparse->event_id);
    assert_null(order_sparse->user_id);
    assert_null(order_sparse->hold_id);
    assert_null(order_sparse->currency);
    assert_null(order_sparse->payment_ref);
    assert_int_equal(order_sparse->items.seat_count + order_sparse->items.pool_count, 0);
    assert_null(order_sparse->items.lines);
    const hf_mutation_order_item_t *seat_item = &hf_batch_at(batch, 11)->as.order_item;
    assert_string_equal(seat_item->seat_id, "S");
    assert_null(seat_item->pool_id);
    assert_null(seat_item->event_id);
    const hf_mutation_order_item_t *pool_item = &hf_batch_at(batch, 12)->as.order_item;
    assert_string_equal(pool_item->pool_id, "P");
    assert_null(pool_item->seat_id);
    const hf_mutation_order_update_t *update_sparse = &hf_batch_at(batch, 13)->as.order_update;
    assert_string_equal(update_sparse->order_id, "ord_9");
    assert_null(update_sparse->event_id);
    assert_null(update_sparse->user_id);
    const hf_mutation_idempotency_t *answer_sparse = &hf_batch_at(batch, 14)->as.idempotency;
    assert_string_equal(answer_sparse->key, "k9");
    assert_null(answer_sparse->body);
    assert_null(answer_sparse->hash);
    assert_null(hf_batch_at(batch, 15)->as.seat.event_id);
    assert_null(hf_batch_at(batch, 16)->as.pool.event_id);
    const hf_mutation_hold_create_t *create_sparse = &hf_batch_at(batch, 17)->as.hold_create;
    assert_string_equal(create_sparse->hold_id, "res_8");
    assert_null(create_sparse->event_id);
    assert_null(create_sparse->user_id);
    assert_int_equal(create_sparse->items.seat_count + create_sparse->items.pool_count, 0);
    assert_null(create_sparse->items.lines);
    const hf_event_definition_t *seats_only = hf_batch_at(batch, 18)->as.event_create.definition;
    assert_ptr_not_equal(seats_only, &club);
    assert_int_equal(seats_only->section_count, 1);
    assert_ptr_not_equal(seats_only->sections, club.sections);
    assert_string_equal(seats_only->sections[0].id, "S");
    assert_string_equal(seats_only->sections[0].rows[0].id, "C");
    assert_int_equal(seats_only->pool_count, 0);
    assert_null(seats_only->pools);
    hf_batch_destroy(batch);
}

static void test_batch_clear_reuses_memory(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    /* Enough records and one large answer body to need several chunks and array growth. */
    size_t big_size = 300 * 1024;
    char *big = malloc(big_size + 1);
    memset(big, 'b', big_size);
    big[big_size] = '\0';
    char id[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            hf_mutation_t m = i == 2500 ? idempotency(id, big, 201, NOW_MS)
                                        : seat_change("e1", id, HF_SEAT_HELD, (uint32_t)i);
            hf_batch_append(batch, &m);
        }
        assert_int_equal(hf_batch_count(batch), 5000);
        for (int i = 0; i < 5000; i += 499) {
            snprintf(id, sizeof id, "seat-%d-%d", round, i);
            assert_int_equal(hf_batch_at(batch, (size_t)i)->type, HF_MUTATION_SEAT);
            assert_string_equal(hf_batch_at(batch, (size_t)i)->as.seat.seat_id, id);
            assert_int_equal(hf_batch_at(batch, (size_t)i)->as.seat.version, i);
        }
        /* The large body is whole, and the records around it are untouched by it. */
        const hf_mutation_idempotency_t *answer = &hf_batch_at(batch, 2500)->as.idempotency;
        assert_int_equal(hf_batch_at(batch, 2500)->type, HF_MUTATION_IDEMPOTENCY);
        assert_int_equal(strlen(answer->body), big_size);
        assert_memory_equal(answer->hash, test_hash, 32);
        snprintf(id, sizeof id, "seat-%d-2500", round);
        assert_string_equal(answer->key, id);
        snprintf(id, sizeof id, "seat-%d-2499", round);
        assert_string_equal(hf_batch_at(batch, 2499)->as.seat.seat_id, id);
        snprintf(id, sizeof id, "seat-%d-2501", round);
        assert_string_equal(hf_batch_at(batch, 2501)->as.seat.seat_id, id);
        hf_batch_clear(batch);
        assert_int_equal(hf_batch_count(batch), 0);
    }
    /* After a clear the first string lands where the first string of the last round did:
     * the memory is rewound, not given back and asked for again. */
    hf_mutation_t first = seat_change("e1", "A", HF_SEAT_HELD, 1);
    hf_batch_append(batch, &first);
    const char *place = hf_batch_at(batch, 0)->as.seat.event_id;
    hf_batch_clear(batch);
    hf_batch_append(batch, &first);
    assert_ptr_equal(hf_batch_at(batch, 0)->as.seat.event_id, place);
    assert_string_equal(hf_batch_at(batch, 0)->as.seat.seat_id, "A");
    free(big);
    hf_batch_destroy(batch);
}

static void test_batch_sink(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_sink_t sink = {hf_batch_sink_emit, batch};
    hf_mutation_t m = order_update("ord_9", HF_ORDER_CANCELLED);
    sink.emit(sink.context, &m);
    assert_int_equal(hf_batch_count(batch), 1);
    assert_int_equal(hf_batch_at(batch, 0)->type, HF_MUTATION_ORDER_UPDATE);
    assert_string_equal(hf_batch_at(batch, 0)->as.order_update.order_id, "ord_9");
    assert_ptr_not_equal(hf_batch_at(batch, 0)->as.order_update.order_id,
                         m.as.order_update.order_id);
    assert_int_equal(hf_batch_at(batch, 0)->as.order_update.status, HF_ORDER_CANCELLED);
    hf_batch_destroy(batch);
}

/* ---- Opening ---- */

static void test_open_creates_schema_in_wal_mode(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);

    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open(fixture->path, &database), SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database, "PRAGMA journal_mode", -1, &statement, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(statement, 0), "wal");
    sqlite3_finalize(statement);
    sqlite3_close(database);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('events', 'holds',"
                                            " 'orders', 'order_items', 'idempotency', 'meta',"
                                            " 'history')"),
                     7);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'view' AND name = 'seat_state'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'index' AND name = 'order_items_one_sale'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name = 'allocations'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name = 'tickets'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('deliveries', 'refunds')"),
                     2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM sqlite_master WHERE type ="
                                            " 'table' AND name IN ('drivers', 'rides')"),
                     2);

    /* A second open finds the schema in place and leaves it be. */
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM meta"), 1);
}

static void test_open_rejects_what_it_cannot_serve(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = (hf_store_t *)fixture; /* must be reset to NULL on failure */
    char error[ERROR_SIZE] = "";

    /* Port 1 of the loopback refuses at once: the backend is built, and says why it failed. */
    assert_int_not_equal(
        hf_store_open(&store, "postgres://127.0.0.1:1/holdfast", error, sizeof error), 0);
    assert_null(store);
    assert_non_null(strstr(error, "cannot connect to PostgreSQL"));

    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, "mysql://db", error, sizeof error), 0);
    assert_non_null(strstr(error, "unknown store URL \"mysql://db\""));

    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, "sqlite:", error, sizeof error), 0);
    assert_non_null(strstr(error, "expected sqlite:PATH"));

    error[0] = '\0';
    assert_int_not_equal(
        hf_store_open(&store, "sqlite:/nonexistent-holdfast-dir/x.db", error, sizeof error), 0);
    assert_non_null(strstr(error, "cannot open /nonexistent-holdfast-dir/x.db"));

    /* A database written by a newer server is refused, not misread. */
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
    execute(fixture, "UPDATE meta SET value = '14' WHERE key = 'schema_version'");
    error[0] = '\0';
    assert_int_not_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    assert_non_null(strstr(error, "schema version \"14\""));
}

static void test_seat_state_reads_the_written_items(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    static const hf_mutation_item_t lines[] = {{"F-A-1", 0}, {"F-A-2", 0}, {"GA", 2}};
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", ITEMS(lines, 2, 1), 300, NOW_MS, NOW_MS + 1000));
    append(batch,
           hold_create("res_2", "e1", "u2", ITEMS(lines + 2, 0, 1), 100, NOW_MS, NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state"), 2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state WHERE"
                                            " status = 'held' AND owner = 'res_1'"
                                            " AND event_id = 'e1'"
                                            " AND seat_id IN ('F-A-1', 'F-A-2')"),
                     2);
}

static void test_hold_update_keeps_order_id_when_absent(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    append(batch, hold_update("res_1", HF_HOLD_CONFIRMED, NOW_MS + 1000, "ord_7"));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, hold_update("res_1", HF_HOLD_CONFIRMED, NOW_MS + 2000, NULL));
    assert_true(submit_and_wait(store, batch, 6, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_1'"
                                            " AND order_id = 'ord_7' AND status = 'confirmed'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT expires_at FROM holds"), NOW_MS + 2000);
}

/* The writer finds a hold it inserted by its row's seq (sqlite/hold_rows.c). A batch that
 * fails takes its holds' seqs back, and the next hold is given the same seq: the update of the
 * new hold changes that hold alone, and one of the hold rolled back finds no row. */
static void test_hold_updates_find_their_rows_after_a_failed_batch(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, hold_update("res_1", HF_HOLD_EXPIRED, NOW_MS + 1000, NULL));
    assert_true(submit_and_wait(store, batch, 2, error));

    append(batch, hold_create("res_gone", "e1", "u2", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    append(batch, event_create("e1", NOW_MS)); /* a duplicate: the batch fails */
    assert_false(submit_and_wait(store, batch, 3, error));
    append(batch, hold_create("res_2", "e1", "u3", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 4, error));
    append(batch, hold_update("res_2", HF_HOLD_RELEASED, NOW_MS + 5, NULL));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, hold_update("res_gone", HF_HOLD_RELEASED, NOW_MS + 5, NULL));
    assert_false(submit_and_wait(store, batch, 6, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_gone failed: no such row to update"));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_1'"
                                            " AND status = 'expired' AND seq = 1"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_2'"
                                            " AND status = 'released' AND seq = 2"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT expires_at FROM holds WHERE id = 'res_2'"),
                     NOW_MS + 5);
}

/* ---- The store as the last arbiter ---- */

static void test_second_sale_of_a_seat_fails_the_whole_batch(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    /* Everything in the failing batch, before and after the offending line, must vanish. */
    append(batch, hold_create("res_x", "e1", "u2", NO_ITEMS, 0, NOW_MS, NOW_MS + 1000));
    append(batch, order_create("ord_2", "e1", "u2", NULL, NO_ITEMS, 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    append(batch, idempotency("POST /v1/events/e1/bookings k2", "{}", 201, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_ITEM of F-A-1 failed"));
    assert_non_null(strstr(error, "UNIQUE constraint failed"));

    /* The same seat in another event is another seat. */
    append(batch, event_create("e2", NOW_MS));
    append(batch, order_create("ord_3", "e2", "u2", NULL, NO_ITEMS, 10, "pi_3", NOW_MS + 2));
    append(batch, order_seat("ord_3", "e2", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 3, error));
    assert_string_equal(error, "");

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.batches, 2);
    assert_int_equal(stats.failures, 1);
    assert_int_equal(stats.mutations, 6);
    hf_store_close(store);
    hf_batch_destroy(batch);

    transcript_t transcript = {0};
    reload(fixture, 0, &transcript);
    assert_int_equal(transcript.count, 4);
    assert_non_null(strstr(transcript.lines[0], "event id=e1 "));
    assert_non_null(strstr(transcript.lines[1], "event id=e2 "));
    assert_non_null(strstr(transcript.lines[2], "order id=ord_1 hold=- event=e1 "));
    assert_non_null(strstr(transcript.lines[3], "order id=ord_3 hold=- event=e2 "));
    transcript_free(&transcript);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items"), 2);
}

/* An order's items are written several to an INSERT (sqlite.c): ten seats make two INSERTs,
 * and all ten rows are there; a seat sold already, third of four, fails the whole batch by the
 * UNIQUE index as one item alone does, and none of the four is written. */
static void test_an_orders_items_together(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    static const char *const seats[] = {"S-1", "S-2", "S-3", "S-4", "S-5",
                                        "S-6", "S-7", "S-8", "S-9", "S-10"};
    append(batch, event_create("e1", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 10, "pi_1", NOW_MS));
    for (int i = 0; i < 10; i++) append(batch, order_seat("ord_1", "e1", seats[i]));
    append(batch, order_create("ord_2", "e1", "u2", NULL, NO_ITEMS, 10, "pi_2", NOW_MS));
    append(batch, order_seat("ord_2", "e1", "T-1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    append(batch, order_create("ord_3", "e1", "u3", NULL, NO_ITEMS, 10, "pi_3", NOW_MS + 1));
    append(batch, order_seat("ord_3", "e1", "U-1"));
    append(batch, order_seat("ord_3", "e1", "U-2"));
    append(batch, order_seat("ord_3", "e1", "S-7"));
    append(batch, order_seat("ord_3", "e1", "U-3"));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_ITEM of U-1 or the items after it failed"));
    assert_non_null(strstr(error, "UNIQUE constraint failed"));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " order_id = 'ord_1' AND active = 1 AND quantity = 1"),
                     10);
    assert_int_equal(query_integer(fixture, "SELECT count(DISTINCT seat_id) FROM order_items"
                                            " WHERE order_id = 'ord_1' AND seat_id LIKE 'S-%'"),
                     10);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " order_id = 'ord_2' AND seat_id = 'T-1'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " order_id = 'ord_3'"),
                     0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders"), 2);
}

static void test_cancelled_seat_can_be_sold_again(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 10, "pi_1", NOW_MS));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, order_update("ord_1", HF_ORDER_CANCELLED));
    assert_true(submit_and_wait(store, batch, 2, error));
    append(batch, order_create("ord_2", "e1", "u2", NULL, NO_ITEMS, 10, "pi_2", NOW_MS + 1));
    append(batch, order_seat("ord_2", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 3, error));
    assert_string_equal(error, "");

    /* Cancel and resale in one batch work as well: statements run in record order. */
    append(batch, order_update("ord_2", HF_ORDER_CANCELLED));
    append(batch, order_create("ord_3", "e1", "u3", NULL, NO_ITEMS, 10, "pi_3", NOW_MS + 2));
    append(batch, order_seat("ord_3", "e1", "F-A-1"));
    assert_true(submit_and_wait(store, batch, 4, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " seat_id = 'F-A-1'"),
                     3);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " seat_id = 'F-A-1' AND active = 1"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM order_items WHERE"
                                            " order_id = 'ord_3' AND active = 1"),
                     1);
}

static void test_failures_roll_back_and_the_store_goes_on(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];

    /* An update of a hold the store never saw: the tables and the engine disagree. */
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_update("res_missing", HF_HOLD_RELEASED, NOW_MS, NULL));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_missing failed: no such row to update"));

    append(batch, order_update("ord_missing", HF_ORDER_CANCELLED));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "ORDER_UPDATE of ord_missing failed"));

    /* A status the tables have no word for. */
    append(batch, hold_create("res_odd", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    hf_mutation_t odd = hold_update("res_odd", 9, NOW_MS, NULL);
    hf_batch_append(batch, &odd);
    assert_false(submit_and_wait(store, batch, 3, error));
    assert_non_null(strstr(error, "HOLD_UPDATE of res_odd failed: NOT NULL constraint failed:"
                                  " holds.status"));

    /* An idempotency record without its request hash. */
    hf_mutation_t key = idempotency("k", "{}", 201, NOW_MS);
    key.as.idempotency.hash = NULL;
    hf_batch_append(batch, &key);
    assert_false(submit_and_wait(store, batch, 4, error));
    assert_non_null(strstr(error, "IDEMPOTENCY of k failed"));

    /* A duplicate event id. */
    append(batch, event_create("e1", NOW_MS));
    assert_true(submit_and_wait(store, batch, 5, error));
    append(batch, event_create("e1", NOW_MS));
    assert_false(submit_and_wait(store, batch, 6, error));
    assert_non_null(strstr(error, "EVENT_CREATE of e1 failed: UNIQUE constraint failed"));

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.failures, 5);
    assert_int_equal(stats.batches, 1);
    assert_int_equal(stats.mutations, 1);
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 0);
}

/* A table dropped behind the store's back (an operator's mistake): the prepared statement
 * cannot run any more, the batch fails with SQLite's reason, and the rest still works. */
static void test_missing_table_fails_the_batch(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    execute(fixture, "DROP TABLE holds");
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    assert_false(submit_and_wait(store, batch, 1, error));
    assert_non_null(strstr(error, "HOLD_CREATE of res_1 failed: no such table: holds"));

    append(batch, event_create("e1", NOW_MS));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);
}

/* ---- Idempotency keys: kept 24 hours ---- */

static void test_old_idempotency_keys_are_not_loaded_then_purged(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    const int64_t day = HF_IDEMPOTENCY_KEEP_MS;
    append(batch, idempotency("old", "{\"n\":1}", 201, NOW_MS - day - 1));
    append(batch, idempotency("edge", "{\"n\":2}", 200, NOW_MS - day));
    append(batch, idempotency("new", "{\"n\":3}", 201, NOW_MS));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);

    transcript_t transcript = {0};
    reload(fixture, NOW_MS - day, &transcript);
    assert_int_equal(transcript.count, 2);
    assert_non_null(strstr(transcript.lines[0], "key key=edge body={\"n\":2}"));
    assert_non_null(strstr(transcript.lines[0], "status=200 hash=ok"));
    assert_non_null(strstr(transcript.lines[1], "key key=new body={\"n\":3}"));
    transcript_free(&transcript);
    /* The load left the old row alone: it is filtered, not deleted, on reading. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 3);

    /* A fresh store purges on its first batch, with the batch's own time as now. */
    store = store_open_started(fixture);
    append(batch, idempotency("newer", "{}", 201, NOW_MS + 1));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"), 2);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM idempotency"
                                            " WHERE key IN ('old', 'edge')"),
                     0);
}

static void test_close_frees_a_result_never_taken(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    append(batch, event_create("e1", NOW_MS));
    hf_store_submit(store, batch, 1);
    /* Closed at once: the batch in flight is still written, and the store frees it
     * (AddressSanitizer reports a leak otherwise). */
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 1);

    /* A store never started closes too. */
    char error[ERROR_SIZE];
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    hf_store_close(store);
}

/* Waits for the done callback until the store reports sequence durable or a failed sync. */
static bool wait_durable(hf_store_t *store, uint64_t sequence, uint64_t *durable, char *error) {
    for (;;) {
        pthread_mutex_lock(&waiter.mutex);
        int before = waiter.done_count;
        pthread_mutex_unlock(&waiter.mutex);
        bool ok = hf_store_durable(store, durable, error, ERROR_SIZE);
        if (!ok || *durable >= sequence) return ok;
        pthread_mutex_lock(&waiter.mutex);
        while (waiter.done_count == before) pthread_cond_wait(&waiter.changed, &waiter.mutex);
        pthread_mutex_unlock(&waiter.mutex);
    }
}

static void test_written_batches_become_durable_in_order(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE] = "";
    uint64_t durable = 0, last = 0;
    for (uint64_t sequence = 1; sequence <= 20; sequence++) {
        char id[32];
        snprintf(id, sizeof id, "e%llu", (unsigned long long)sequence);
        append(batch, event_create(id, NOW_MS));
        assert_true(submit_and_wait(store, batch, sequence, error));
        /* Written is not yet durable, but durable never moves back nor passes written. */
        assert_true(hf_store_durable(store, &durable, error, sizeof error));
        assert_true(durable >= last && durable <= sequence);
        last = durable;
    }
    assert_true(wait_durable(store, 20, &durable, error));
    assert_int_equal(durable, 20);
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM events"), 20);
    hf_batch_destroy(batch);
}

static void test_failed_sync_is_final(void **state) {
    fixture_t *fixture = *state;
    setenv("HOLDFAST_FAULT_FAIL_SYNC", "1", 1);
    hf_store_t *store = store_open_started(fixture);
    unsetenv("HOLDFAST_FAULT_FAIL_SYNC");
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE] = "";
    append(batch, event_create("e1", NOW_MS));
    /* The commit itself succeeds: only the sync after it fails. */
    assert_true(submit_and_wait(store, batch, 1, error));
    uint64_t durable = 99;
    assert_false(wait_durable(store, 1, &durable, error));
    assert_int_equal(durable, 0);
    assert_non_null(strstr(error, "fdatasync"));
    /* Later batches are still written, and never reported durable. */
    append(batch, event_create("e2", NOW_MS));
    assert_true(submit_and_wait(store, batch, 2, error));
    assert_false(hf_store_durable(store, &durable, error, sizeof error));
    assert_int_equal(durable, 0);
    hf_store_close(store);
    hf_batch_destroy(batch);
}

/* ---- The syncer alone ---- */

static void count_notify(void *context) { (*(int *)context)++; }

static hf_syncer_t *syncer_open(const fixture_t *fixture, int *notified) {
    char error[ERROR_SIZE] = "";
    /* Clears the injected faults an earlier test armed: without the variables, none. */
    assert_false(hf_store_fault_configure());
    hf_syncer_t *syncer = hf_syncer_open(fixture->path, count_notify, notified, error,
                                         sizeof error);
    assert_non_null(syncer);
    return syncer;
}

static uint64_t syncer_durable(hf_syncer_t *syncer) {
    uint64_t durable = 99;
    char error[ERROR_SIZE] = "";
    assert_true(hf_syncer_durable(syncer, &durable, error, sizeof error));
    return durable;
}

/* A sync covers what was written before it started, and nothing is durable before a sync. A
 * second sync with nothing newly written is skipped (no fdatasync, no notify). */
static void test_syncer_covers_what_was_written_before_it(void **state) {
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 3);
    assert_int_equal(syncer_durable(syncer), 0);
    hf_syncer_sync(syncer);
    assert_int_equal(syncer_durable(syncer), 3);
    assert_int_equal(notified, 1);
    hf_syncer_sync(syncer);
    assert_int_equal(notified, 1);
    hf_syncer_written(syncer, 5);
    assert_int_equal(syncer_durable(syncer), 3);
    hf_syncer_sync(syncer);
    assert_int_equal(syncer_durable(syncer), 5);
    assert_int_equal(notified, 2);
    hf_syncer_close(syncer);
}

typedef struct sync_later {
    hf_syncer_t *syncer;
} sync_later_t;

static void *sync_after_a_while(void *argument) {
    sync_later_t *later = argument;
    usleep(20000);
    hf_syncer_sync(later->syncer);
    return NULL;
}

/* hf_syncer_wait returns once another thread's sync covers what is written: this is how a
 * worker whose write failed waits for the syncs of the batches before it. */
static void test_syncer_wait_is_served_by_another_thread(void **state) {
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 7);
    sync_later_t later = {syncer};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, sync_after_a_while, &later), 0);
    hf_syncer_wait(syncer);
    assert_int_equal(syncer_durable(syncer), 7);
    pthread_join(thread, NULL);
    hf_syncer_close(syncer);
}

static void count_notify_atomic(void *context) { atomic_fetch_add((atomic_int *)context, 1); }

/* With its threads started the syncer needs no one to call hf_syncer_sync: each written batch
 * becomes durable by itself and is notified, and close joins the threads with nothing lost. */
static void test_syncer_threads_sync_what_is_written(void **state) {
    const fixture_t *fixture = *state;
    char error[ERROR_SIZE] = "";
    assert_false(hf_store_fault_configure());
    atomic_int notified = 0;
    hf_syncer_t *syncer = hf_syncer_open(fixture->path, count_notify_atomic, &notified, error,
                                         sizeof error);
    assert_non_null(syncer);
    assert_int_equal(hf_syncer_start(syncer, 2, error, sizeof error), 0);
    for (uint64_t sequence = 1; sequence <= 50; sequence++) {
        hf_syncer_written(syncer, sequence);
        if (sequence % 10 == 0) {
            hf_syncer_wait(syncer);
            assert_int_equal(syncer_durable(syncer), sequence);
        }
    }
    hf_syncer_written(syncer, 51);
    hf_syncer_close(syncer); /* joins the threads, then syncs 51 itself if none took it */
    /* A sync may cover several batches, but each wait needed at least one. */
    int count = atomic_load(&notified);
    assert_true(count >= 5 && count <= 51);
}

/* After a failure recorded from elsewhere (SQLite's own sync), syncs do nothing and the
 * durable sequence stays where it was; waiting returns at once. */
static void test_syncer_failure_stops_everything(void **state) {
    int notified = 0;
    hf_syncer_t *syncer = syncer_open(*state, &notified);
    hf_syncer_written(syncer, 1);
    hf_syncer_sync(syncer);
    hf_syncer_written(syncer, 2);
    hf_syncer_fail(syncer, "store: injected");
    hf_syncer_sync(syncer);
    hf_syncer_wait(syncer);
    uint64_t durable = 99;
    char error[ERROR_SIZE] = "";
    assert_false(hf_syncer_durable(syncer, &durable, error, sizeof error));
    assert_int_equal(durable, 1);
    assert_string_equal(error, "store: injected");
    assert_int_equal(notified, 1);
    hf_syncer_close(syncer);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_deep_copy),
        cmocka_unit_test(test_batch_clear_reuses_memory),
        cmocka_unit_test(test_batch_sink),
#define STORE_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
        STORE_TEST(test_open_creates_schema_in_wal_mode),
        STORE_TEST(test_open_rejects_what_it_cannot_serve),
        STORE_TEST(test_seat_state_reads_the_written_items),
        STORE_TEST(test_hold_update_keeps_order_id_when_absent),
        STORE_TEST(test_hold_updates_find_their_rows_after_a_failed_batch),
        STORE_TEST(test_an_orders_items_together),
        STORE_TEST(test_second_sale_of_a_seat_fails_the_whole_batch),
        STORE_TEST(test_cancelled_seat_can_be_sold_again),
        STORE_TEST(test_failures_roll_back_and_the_store_goes_on),
        STORE_TEST(test_missing_table_fails_the_batch),
        STORE_TEST(test_old_idempotency_keys_are_not_loaded_then_purged),
        STORE_TEST(test_close_frees_a_result_never_taken),
        STORE_TEST(test_written_batches_become_durable_in_order),
        STORE_TEST(test_failed_sync_is_final),
        STORE_TEST(test_syncer_covers_what_was_written_before_it),
        STORE_TEST(test_syncer_wait_is_served_by_another_thread),
        STORE_TEST(test_syncer_failure_stops_everything),
        STORE_TEST(test_syncer_threads_sync_what_is_written),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
