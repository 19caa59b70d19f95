/* Unit tests of store/'s reading side through the SQLite store: every kind of record written,
 * read back after a reopen by the one decoder (store/decoder.h) in the loader's order and field
 * by field in the core's shapes; a loader's callback stopping the load; the count of finished
 * holds; one forgotten hold read back; an event's holds listed; dispatch's drivers and rides,
 * payments' refunds and deliveries, events' sales; older schemas migrated and read back. The
 * writing side is test_store.c's. Each test works in its own temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/core.h"
#include "lib/limits.h"
#include "lib/buffer.h"
#include "store/decoder.h"
#include "store/store.h"
#include "store_cases.h"

/* ---- Round trip of every mutation type ---- */

static void test_every_mutation_round_trips(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    const int64_t t = NOW_MS;

    append(batch, event_create("e1", t));
    append(batch, event_create_as("e0", &club, t + 1));
    append(batch, hold_create("res_b", "e1", "u1", ITEMS(two_seats, 2, 0), 100, t + 2, t + 600000));
    append(batch,
           hold_create("res_a", "e1", "u2", ITEMS(seat_and_pool, 1, 1), 50, t + 3, t + 600000));
    append(batch, seat_change("e1", "F-A-2", HF_SEAT_HELD, 2));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_HELD, 2));
    append(batch, idempotency("POST /v1/events k1", "{\"id\":\"e1\"}", 201, t));
    assert_true(submit_and_wait(store, batch, 1, error));
    assert_string_equal(error, "");

    /* The second batch changes rows the first one wrote. */
    append(batch, hold_update("res_b", HF_HOLD_CONFIRMED, t + 600000, "ord_1"));
    append(batch,
           order_create("ord_1", "e1", "u1", "res_b", ITEMS(two_seats, 1, 0), 100, "pi_1", t + 10));
    append(batch, order_seat("ord_1", "e1", "F-A-1"));
    append(batch, seat_change("e1", "F-A-1", HF_SEAT_SOLD, 3));
    append(batch, hold_update("res_a", HF_HOLD_HELD, t + 900000, NULL));
    append(batch, hold_update("res_a", HF_HOLD_RELEASED, t + 20, NULL));
    append(batch,
           order_create("ord_0", "e1", "u2", NULL, ITEMS(three_of_ga, 0, 1), 30, NULL, t + 30));
    append(batch, order_pool("ord_0", "e1", "GA", 3));
    append(batch, order_update("ord_0", HF_ORDER_CANCELLED));
    assert_true(submit_and_wait(store, batch, 2, error));
    assert_string_equal(error, "");

    hf_store_stats_t stats;
    hf_store_stats(store, &stats);
    assert_int_equal(stats.batches, 2);
    assert_int_equal(stats.mutations, 16);
    assert_int_equal(stats.last_batch_size, 9);
    assert_int_equal(stats.failures, 0);
    assert_true(stats.last_commit_seconds > 0.0 && stats.last_commit_seconds < 10.0);
    /* Sizes 7 and 9, each in the bucket up to 10 (1, 2, 5, 10, ...); both commits timed. */
    assert_int_equal(stats.batch_sizes.count, 2);
    assert_int_equal(stats.batch_sizes.sum, 16);
    assert_int_equal(stats.batch_sizes.counts[3], 2);
    assert_int_equal(stats.commit_durations.count, 2);
    assert_true(stats.commit_durations.sum > 0 &&
                stats.commit_durations.sum < (uint64_t)(20.0 * 1e9));
    hf_store_close(store);
    hf_batch_destroy(batch);

    transcript_t transcript = {0};
    reload(fixture, t - HF_IDEMPOTENCY_KEEP_MS, &transcript);
    const char *const expected[] = {
        "event id=e1 name=Arena currency=USD ttl=600000 max_hold=1800000 per_user=4"
        " per_hold=10 sections=F:100[A:2,B:3],BAL:60[C:4] pools=GA:5@50 at=1795291200000",
        "event id=e0 name=Club currency=EUR ttl=1500 max_hold=3000 per_user=0 per_hold=2"
        " sections=S:10[C:4] pools= at=1795291200001",
        "hold id=res_b event=e1 user=u1 seats=F-A-1,F-A-2 pools= ttl=-1 replace=0 best=0/-/0"
        " versions=- status=1 at=1795291200002 expires=1795291800000 total=100",
        "hold id=res_a event=e1 user=u2 seats=F-B-1 pools=GA:2 ttl=-1 replace=0 best=0/-/0"
        " versions=- status=2 at=1795291200003 expires=1795291200020 total=50",
        "order id=ord_1 hold=res_b event=e1 user=u1 seats=F-A-1 pools= ttl=-1 replace=0"
        " best=0/-/0 versions=- items_hold=- status=0 at=1795291200010 total=100 ref=pi_1",
        "order id=ord_0 hold=- event=e1 user=u2 seats= pools=GA:3 ttl=-1 replace=0 best=0/-/0"
        " versions=- items_hold=- status=1 at=1795291200030 total=30 ref=-",
        "key key=POST /v1/events k1 body={\"id\":\"e1\"} status=201 hash=ok at=1795291200000",
    };
    assert_transcript(&transcript, expected, 7);
    transcript_free(&transcript);

    /* What the loader does not hand back is in the tables all the same: the hold's order and
     * the orders' currency. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE id = 'res_b'"
                                            " AND order_id = 'ord_1'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds WHERE order_id IS NULL"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders WHERE currency = 'USD'"),
                     2);
    /* The JSON columns as an operator reads them: the items in the API's shape, byte for byte,
     * and the definition in seconds. */
    assert_int_equal(query_integer(fixture, "SELECT items = '{\"seats\":[\"F-A-1\",\"F-A-2\"],"
                                            "\"pools\":{}}' FROM holds WHERE id = 'res_b'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT items = '{\"seats\":[],\"pools\":"
                                            "{\"GA\":3}}' FROM orders WHERE id = 'ord_0'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT json_extract(config, '$.hold_ttl_s') = 1.5"
                                            " FROM events WHERE id = 'e0'"),
                     1);

    /* Operators read words, and a cancelled order's lines leave the one-sale index. Seat
     * records are not written: the seat_state view derives them from orders and holds. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state WHERE"
                                            " status = 'sold' AND seat_id = 'F-A-1'"
                                            " AND owner = 'ord_1'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state"), 1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM orders WHERE"
                                            " status = 'cancelled' AND id = 'ord_0'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT active FROM order_items WHERE"
                                            " order_id = 'ord_0'"),
                     0);
    assert_int_equal(query_integer(fixture, "SELECT quantity FROM order_items WHERE"
                                            " order_id = 'ord_0' AND pool_id = 'GA'"),
                     3);
    assert_int_equal(query_integer(fixture, "SELECT active FROM order_items WHERE"
                                            " order_id = 'ord_1' AND seat_id = 'F-A-1'"),
                     1);
}

/* The view seat_state reads a held hold's seats out of the items the store wrote, with
 * json_each: the pools of the same hold are not seats. */
/* ---- Loader and lifecycle ---- */

static void test_loader_callback_stops_the_load(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, hold_create("res_1", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    append(batch, hold_create("res_2", "e1", "u1", NO_ITEMS, 0, NOW_MS, NOW_MS + 1));
    append(batch, order_create("ord_1", "e1", "u1", NULL, NO_ITEMS, 0, NULL, NOW_MS));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript_t transcript = {.stop_at = 2, .stop_value = -7};
    hf_store_loader_t loader = {.event = on_event,
                                .hold = on_hold,
                                .order = on_order,
                                .idempotency = on_key,
                                .context = &transcript};
    error[0] = '\0';
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), -7);
    assert_non_null(strstr(error, "loading holds stopped at res_1"));
    /* Nothing after the refusing row: not the second hold, not the order. */
    assert_int_equal(transcript.count, 2);
    transcript_free(&transcript);

    /* Callbacks left NULL skip their table. */
    hf_store_loader_t orders_only = {.order = on_order, .context = &transcript};
    assert_int_equal(hf_store_load(store, &orders_only, error, sizeof error), 0);
    assert_int_equal(transcript.count, 1);
    assert_non_null(strstr(transcript.lines[0], "order id=ord_1 "));
    transcript_free(&transcript);
    hf_store_close(store);
}

static int on_finished_count(void *context, uint64_t count) {
    ((transcript_t *)context)->finished = count;
    return 0;
}

/* Before the holds, the loader learns how many are released or expired; and a forgotten hold
 * is read back alone, by id, through the store's own reader, while the workers run. */
static void test_finished_count_and_reading_one_hold(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "res_%d", i);
        append(batch, hold_create(id, "e1", "u1", NO_ITEMS, 7, NOW_MS, NOW_MS + 1000));
    }
    append(batch, hold_update("res_1", HF_HOLD_RELEASED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_2", HF_HOLD_EXPIRED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_3", HF_HOLD_CONFIRMED, NOW_MS + 1000, "ord_1"));
    assert_true(submit_and_wait(store, batch, 1, error));

    transcript_t transcript = {0};
    hf_store_loader_t one = {.hold = on_hold, .context = &transcript};
    bool found = false;
    assert_int_equal(hf_store_read_hold(store, "res_2", &one, &found, error, sizeof error), 0);
    assert_true(found);
    assert_int_equal(transcript.count, 1);
    assert_non_null(strstr(transcript.lines[0], "hold id=res_2 "));
    assert_non_null(strstr(transcript.lines[0], "status=3"));
    assert_int_equal(hf_store_read_hold(store, "res_9", &one, &found, error, sizeof error), 0);
    assert_false(found);
    assert_int_equal(transcript.count, 1);
    transcript_free(&transcript);
    hf_store_close(store);
    hf_batch_destroy(batch);

    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript.finished = 99;
    hf_store_loader_t loader = {.event = on_event,
                                .hold = on_hold,
                                .order = on_order,
                                .idempotency = on_key,
                                .context = &transcript,
                                .finished_holds = on_finished_count};
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), 0);
    assert_int_equal(transcript.finished, 2);
    transcript_free(&transcript);
    hf_store_close(store);
}

/* ---- Dispatch: drivers and rides ---- */

static hf_mutation_t driver_record(const char *driver_id, double lat, bool available) {
    return (hf_mutation_t){.type = HF_MUTATION_DRIVER,
                           .at_ms = NOW_MS,
                           .as.driver = {"f1", driver_id, lat, -73.99, 4.5, available, false}};
}

static hf_mutation_t ride_record(const char *ride_id, int status, const char *offer_driver,
                                 const char *driver, const char *declined, const char *lapsed) {
    return (hf_mutation_t){.type = HF_MUTATION_RIDE,
                           .at_ms = NOW_MS + 1,
                           .as.ride = {.ride_id = ride_id,
                                       .fleet_id = "f1",
                                       .rider_id = "rider 1",
                                       .lat = 40.75,
                                       .lng = -73.99,
                                       .radius_m = 3000,
                                       .offer_ttl_ms = 1500,
                                       .created_at_ms = NOW_MS,
                                       .status = status,
                                       .offer_driver_id = offer_driver,
                                       .offer_distance_m = offer_driver ? 420 : 0,
                                       .offer_expires_at_ms = offer_driver ? NOW_MS + 1500 : 0,
                                       .driver_id = driver,
                                       .declined = declined,
                                       .lapsed = lapsed}};
}

static int on_driver(void *context, const hf_stored_driver_t *driver) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "driver %s/%s %.4f %.2f %.1f %d", driver->fleet_id, driver->driver_id,
                     driver->lat, driver->lng, driver->rating, driver->available);
    return record(context, &line);
}

static int on_ride(void *context, const hf_stored_ride_t *ride) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line,
                     "ride %s/%s rider=%s %.2f %.2f r=%" PRId64 " ttl=%" PRId64 " %s"
                     " at=%" PRId64 " offer=%s %" PRId64 " %" PRId64 " driver=%s declined=[%s]"
                     " lapsed=[%s]",
                     ride->fleet_id, ride->ride_id, ride->rider_id, ride->lat, ride->lng,
                     ride->radius_m, ride->offer_ttl_ms, hf_ride_status_name(ride->status),
                     ride->created_at_ms, or_dash(ride->offer_driver_id), ride->offer_distance_m,
                     ride->offer_expires_at_ms, or_dash(ride->driver_id), ride->declined,
                     ride->lapsed);
    return record(context, &line);
}

/* A driver's row is upserted whole (its last record wins); a ride's too, its offer and lists
 * included; rides come back in the order they were created. */
static void test_dispatch_round_trip(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, driver_record("d2", 40.7511, true));
    append(batch, driver_record("d1", 40.75, true));
    append(batch, ride_record("r2", HF_RIDE_SEARCHING, NULL, NULL, "", ""));
    append(batch, ride_record("r1", HF_RIDE_OFFERED, "d1", NULL, "", ""));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, driver_record("d1", 40.7522, false));
    append(batch, ride_record("r1", HF_RIDE_ASSIGNED, NULL, "d1", "d3 d4", "d2"));
    append(batch, ride_record("r2", HF_RIDE_OFFERED, "d2", NULL, "", "d1"));
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "driver f1/d1 40.7522 -73.99 4.5 0",
        "driver f1/d2 40.7511 -73.99 4.5 1",
        "ride f1/r2 rider=rider 1 40.75 -73.99 r=3000 ttl=1500 offered at=1795291200000"
        " offer=d2 420 1795291201500 driver=- declined=[] lapsed=[d1]",
        "ride f1/r1 rider=rider 1 40.75 -73.99 r=3000 ttl=1500 assigned at=1795291200000"
        " offer=- 0 0 driver=d1 declined=[d3 d4] lapsed=[d2]",
    };
    assert_loaded(fixture, (hf_store_loader_t){.driver = on_driver, .ride = on_ride}, expected, 4);
}

/* ---- Closing sales, and the schema's migration ---- */

/* ---- Payments: deliveries and refunds ---- */

static hf_mutation_t refund_record(const char *refund_id, const char *intent_id, int reason,
                                   int status) {
    return (hf_mutation_t){.type = HF_MUTATION_REFUND,
                           .at_ms = NOW_MS,
                           .as.refund = {refund_id, intent_id, "res_1", 109800, reason, status,
                                         NOW_MS - 5, NULL, NULL}};
}

static hf_mutation_t delivery_record(const char *intent_id, int type, int result, int reason,
                                     const char *order_id, const char *refund_id, int64_t at_ms) {
    return (hf_mutation_t){.type = HF_MUTATION_DELIVERY,
                           .at_ms = at_ms,
                           .as.delivery = {.payment_intent_id = intent_id,
                                           .event_id = "evt_1",
                                           .reservation_id = "res_1",
                                           .amount = 109800,
                                           .type = type,
                                           .result = result,
                                           .reason = reason,
                                           .late = order_id != NULL,
                                           .order_id = order_id,
                                           .refund_id = refund_id}};
}

static int on_refund(void *context, const hf_stored_refund_t *refund) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "refund %s intent=%s hold=%s amount=%" PRId64 " %s %s at=%" PRId64,
                     refund->refund_id, refund->payment_intent_id, or_dash(refund->reservation_id),
                     refund->amount, hf_refund_reason_name(refund->reason),
                     hf_refund_status_name(refund->status), refund->created_at_ms);
    if (refund->order_id) hf_buffer_printf(&line, " order=%s", refund->order_id);
    return record(context, &line);
}

static int on_delivery(void *context, const hf_stored_delivery_t *delivery) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(
        &line, "delivery %s %s %s reason=%s late=%d order=%s refund=%s at=%" PRId64,
        delivery->payment_intent_id, hf_payment_type_name(delivery->type),
        hf_payment_result_name(delivery->result),
        delivery->result == HF_PAYMENT_REFUND_REQUIRED ? hf_refund_reason_name(delivery->reason)
                                                       : "-",
        delivery->late, or_dash(delivery->order_id), or_dash(delivery->refund_id), delivery->at_ms);
    return record(context, &line);
}

static void assert_payments_loaded(const fixture_t *fixture, int64_t since_ms,
                                   const char *const *expected, int count) {
    hf_store_loader_t loader = {.refund = on_refund,
                                .delivery = on_delivery,
                                .deliveries_since_ms = since_ms};
    assert_loaded(fixture, loader, expected, count);
}

/* Refunds and deliveries come back as written (a refund's later record changes only its
 * status); deliveries older than the loader's bound are skipped; a second delivery of the
 * same (intent, type) fails its batch, the table's UNIQUE behind the core's deduplication. */
static void test_payments_round_trip(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, delivery_record("pi_old", HF_PAYMENT_FAILED, HF_PAYMENT_RECORDED, 0, NULL, NULL,
                                  NOW_MS - 100));
    append(batch, delivery_record("pi_1", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_REFUND_REQUIRED,
                                  HF_REFUND_AMOUNT_MISMATCH, NULL, "ref_1", NOW_MS));
    append(batch, refund_record("ref_1", "pi_1", HF_REFUND_AMOUNT_MISMATCH, HF_REFUND_PENDING));
    append(batch, delivery_record("pi_2", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_COMMITTED, 0, "ord_2",
                                  NULL, NOW_MS + 1));
    append(batch, delivery_record("pi_2", HF_PAYMENT_FAILED, HF_PAYMENT_RECORDED, 0, NULL, NULL,
                                  NOW_MS + 2));
    append(batch, refund_record("ref_1", "pi_1", HF_REFUND_AMOUNT_MISMATCH, HF_REFUND_COMPLETED));
    assert_true(submit_and_wait(store, batch, 1, error));
    append(batch, delivery_record("pi_2", HF_PAYMENT_SUCCEEDED, HF_PAYMENT_RECORDED, 0, NULL, NULL,
                                  NOW_MS + 3));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "DELIVERY of pi_2 failed"));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_1 intent=pi_1 hold=res_1 amount=109800 amount_mismatch completed"
        " at=1795291199995",
        "delivery pi_1 payment.succeeded refund_required reason=amount_mismatch late=0"
        " order=- refund=ref_1 at=1795291200000",
        "delivery pi_2 payment.succeeded committed reason=- late=1 order=ord_2 refund=-"
        " at=1795291200001",
        "delivery pi_2 payment.failed recorded reason=- late=0 order=- refund=-"
        " at=1795291200002",
    };
    assert_payments_loaded(fixture, NOW_MS - 50, expected, 4);
}

/* A version 3 database (no payments, no history yet) gains their tables and version 5. */
static void test_version_3_is_migrated(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    execute(fixture, "DROP TABLE deliveries; DROP TABLE refunds; DROP TABLE history;"
                     "UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    store = store_open_started(fixture);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, refund_record("ref_9", "pi_9", HF_REFUND_HOLD_NOT_FOUND, HF_REFUND_PENDING));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_9 intent=pi_9 hold=res_1 amount=109800 hold_not_found pending"
        " at=1795291199995"};
    assert_payments_loaded(fixture, 0, expected, 1);
}

/* Version 7 knew refunds of webhooks only: its refunds gain order_id and a reservation_id
 * that may be NULL, keeping every row and its order; a cancelled booking's refund (no hold)
 * is then written and read back with its order. */
static void test_version_7_is_migrated(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    execute(fixture, "DROP TABLE refunds;"
                     "CREATE TABLE refunds(seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
                     " payment_intent_id TEXT NOT NULL, reservation_id TEXT NOT NULL,"
                     " amount INTEGER NOT NULL, reason TEXT NOT NULL, status TEXT NOT NULL,"
                     " created_at INTEGER NOT NULL);"
                     "INSERT INTO refunds VALUES(5, 'ref_old', 'pi_old', 'res_old', 42,"
                     " 'hold_not_found', 'completed', 1000);"
                     "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
    store = store_open_started(fixture);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('refunds')"
                                            " WHERE name = 'order_id'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT \"notnull\" FROM pragma_table_info("
                                            "'refunds') WHERE name = 'reservation_id'"),
                     0);
    assert_int_equal(query_integer(fixture, "SELECT seq FROM refunds WHERE id = 'ref_old'"), 5);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    hf_mutation_t cancelled = refund_record("ref_new", "pi_new", HF_REFUND_ORDER_CANCELLED,
                                            HF_REFUND_PENDING);
    cancelled.as.refund.reservation_id = NULL;
    cancelled.as.refund.order_id = "ord_7";
    append(batch, cancelled);
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {
        "refund ref_old intent=pi_old hold=res_old amount=42 hold_not_found completed at=1000",
        "refund ref_new intent=pi_new hold=- amount=109800 order_cancelled pending"
        " at=1795291199995 order=ord_7"};
    assert_payments_loaded(fixture, 0, expected, 2);
}

/* Version 9 had no exchanges: holds gain exchange_for, orders replaces and replaced_by, NULL
 * in the rows already there, which still load. */
static void test_version_9_is_migrated(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    /* A version 9 database's view seat_state read no exchange_for: this one's would refuse
     * the column's drop. The open makes it again. */
    execute(fixture, "DROP VIEW seat_state;"
                     "ALTER TABLE holds DROP COLUMN exchange_for;"
                     "ALTER TABLE orders DROP COLUMN replaces;"
                     "ALTER TABLE orders DROP COLUMN replaced_by;"
                     "UPDATE meta SET value = '9' WHERE key = 'schema_version'");
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('orders')"
                                            " WHERE name IN ('replaces', 'replaced_by')"),
                     0);
    store = store_open_started(fixture);
    hf_store_close(store);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('orders')"
                                            " WHERE name IN ('replaces', 'replaced_by')"),
                     2);
    /* Version 12: the table of allocations, empty. */
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM allocations"), 0);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('holds')"
                                            " WHERE name = 'exchange_for'"),
                     1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM seat_state"), 0);
}

static hf_mutation_t event_sales(const char *event_id, bool open) {
    return (hf_mutation_t){.type = HF_MUTATION_EVENT_SALES,
                           .at_ms = NOW_MS,
                           .as.event_sales = {event_id, open}};
}

/* What a load hands back of each event's sales: "id=0" or "id=1", in order. */
static int on_event_sales(void *context, const hf_stored_event_t *event) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "%s=%d", event->definition->id, event->sales_open);
    return record(context, &line);
}

static void assert_sales_loaded(const fixture_t *fixture, const char *const *expected, int count) {
    assert_loaded(fixture, (hf_store_loader_t){.event = on_event_sales}, expected, count);
}

/* The record closes or reopens the event's row (its id copied by the batch); a load hands the
 * state back; one for an event the table lacks fails the batch. */
static void test_sales_record_round_trips(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    char closed[] = "e1";
    append(batch, event_create("e1", NOW_MS));
    append(batch, event_create("e2", NOW_MS));
    append(batch, event_create("e3", NOW_MS));
    append(batch, event_sales(closed, false));
    scribble(closed);
    append(batch, event_sales("e2", false));
    append(batch, event_sales("e2", true));
    assert_true(submit_and_wait(store, batch, 1, error));
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e1'"), 0);
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e2'"), 1);
    assert_int_equal(query_integer(fixture, "SELECT sales_open FROM events WHERE id = 'e3'"), 1);
    append(batch, event_sales("nope", false));
    assert_false(submit_and_wait(store, batch, 2, error));
    assert_non_null(strstr(error, "EVENT_SALES of nope failed"));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const expected[] = {"e1=0", "e2=1", "e3=1"};
    assert_sales_loaded(fixture, expected, 3);
}

/* ---- Allocations (schema version 12) ---- */

static int on_allocation(void *context, const hf_stored_allocation_t *allocation) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "%s/%s created=%lld", allocation->event_id, allocation->allocation_id,
                     (long long)allocation->created_at_ms);
    for (uint32_t i = 0; i < allocation->seat_count; i++)
        hf_buffer_printf(&line, " %s%s", allocation->seats[i].seat_id,
                         allocation->seats[i].released ? "*" : "");
    for (uint32_t i = 0; i < allocation->pool_count; i++)
        hf_buffer_printf(&line, " %s=%lld/%lld", allocation->pools[i].pool_id,
                         (long long)allocation->pools[i].units,
                         (long long)allocation->pools[i].release_pending);
    return record(context, &line);
}

static int on_allocated_hold(void *context, const hf_stored_hold_t *hold) {
    hf_buffer_t line;
    hf_buffer_init(&line);
    hf_buffer_printf(&line, "hold %s allocation=%s", hold->request.hold_id,
                     hold->request.allocation_id ? hold->request.allocation_id : "-");
    return record(context, &line);
}

/* An allocation's row is upserted whole at each record; its hold's items name it. */
static void test_allocation_round_trips(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    hf_mutation_allocation_seat_t seats[] = {{"F-A-1", false}, {"F-A-2", false}};
    hf_mutation_allocation_pool_t pools[] = {{"GA", 5, 0}};
    hf_mutation_t allocation = {.type = HF_MUTATION_ALLOCATION,
                                .at_ms = NOW_MS,
                                .as.allocation = {.event_id = "e1",
                                                  .allocation_id = "amex",
                                                  .seats = seats,
                                                  .seat_count = 2,
                                                  .pools = pools,
                                                  .pool_count = 1,
                                                  .created_at_ms = NOW_MS,
                                                  .change = HF_ALLOCATION_CREATED}};
    append(batch, event_create("e1", NOW_MS));
    append(batch, allocation);
    hf_mutation_items_t items = {two_seats, 1, 0, "amex"};
    append(batch, hold_create("res_1", "e1", "u1", items, 7, NOW_MS, NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    seats[1].released = true;
    pools[0] = (hf_mutation_allocation_pool_t){"GA", 3, 1};
    allocation.as.allocation.change = HF_ALLOCATION_RELEASED;
    allocation.at_ms = NOW_MS + 5;
    append(batch, allocation);
    assert_true(submit_and_wait(store, batch, 2, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM allocations"), 1);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM history"
                                            " WHERE type IN ('allocation', 'allocation_release')"),
                     2);
    char created[64];
    snprintf(created, sizeof created, "e1/amex created=%lld F-A-1 F-A-2* GA=3/1",
             (long long)NOW_MS);
    const char *const expected[] = {created, "hold res_1 allocation=amex"};
    assert_loaded(fixture,
                  (hf_store_loader_t){.allocation = on_allocation, .hold = on_allocated_hold},
                  expected, 2);
}

/* A version 2 database (events without sales_open, no history) opens as the current version
 * (4: test_history.c checks the history's part), its events open, and closing one is written
 * and read back. */
static void test_version_2_is_migrated(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("old", NOW_MS));
    append(batch,
           hold_create("res_1", "old", "u1", ITEMS(two_seats, 2, 0), 7, NOW_MS, NOW_MS + 1000));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    execute(fixture, "ALTER TABLE events DROP COLUMN sales_open; DROP TABLE history;"
                     "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM pragma_table_info('events')"
                                            " WHERE name = 'sales_open'"),
                     0);

    static const char *const open[] = {"old=1"};
    assert_sales_loaded(fixture, open, 1);
    assert_int_equal(query_integer(fixture, "SELECT value FROM meta WHERE key ="
                                            " 'schema_version'"),
                     13);
    assert_int_equal(query_integer(fixture, "SELECT count(*) FROM holds"), 1);
    store = store_open_started(fixture);
    append(batch, event_sales("old", false));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    static const char *const closed[] = {"old=0"};
    assert_sales_loaded(fixture, closed, 1);
}

static void list(hf_store_t *store, const hf_store_hold_query_t *query, transcript_t *transcript,
                 bool expect_found) {
    char error[ERROR_SIZE] = "";
    hf_store_loader_t loader = {.hold = on_hold, .context = transcript};
    bool found = !expect_found;
    int rc = hf_store_list_holds(store, query, &loader, &found, error, sizeof error);
    if (rc != 0) fprintf(stderr, "list failed: %s\n", error);
    assert_int_equal(rc, 0);
    assert_int_equal(found, expect_found);
}

/* Only the ids of a transcript of holds, joined by spaces. */
static void assert_listed(const transcript_t *transcript, const char *expected) {
    char ids[256] = "";
    for (int i = 0; i < transcript->count; i++) {
        char id[32];
        sscanf(transcript->lines[i], "hold id=%31s", id);
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", i ? " " : "", id);
    }
    assert_string_equal(ids, expected);
}

/* An event's holds, in creation order, after a hold, with a status filter, and stopped by the
 * callback; a range scan of the index holds_event. */
static void test_listing_holds(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch, event_create("e2", NOW_MS));
    const char *events[] = {"e1", "e2", "e1", "e1", "e2", "e1"};
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof id, "res_%d", i + 1);
        append(batch, hold_create(id, events[i], "u1", NO_ITEMS, 7, NOW_MS, NOW_MS + 1000));
    }
    append(batch, hold_update("res_3", HF_HOLD_RELEASED, NOW_MS + 1000, NULL));
    append(batch, hold_update("res_4", HF_HOLD_EXPIRED, NOW_MS + 1000, NULL));
    assert_true(submit_and_wait(store, batch, 1, error));

    transcript_t transcript = {0};
    hf_store_hold_query_t query = {"e1", NULL, 0};
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_1 res_3 res_4 res_6");
    assert_non_null(strstr(transcript.lines[1], "status=2"));
    transcript_free(&transcript);
    query.after_id = "res_3";
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_4 res_6");
    transcript_free(&transcript);
    query.statuses = (1u << HF_HOLD_HELD) | (1u << HF_HOLD_EXPIRED);
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_4 res_6");
    transcript_free(&transcript);
    query.after_id = NULL;
    query.statuses = 1u << HF_HOLD_RELEASED;
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_3");
    transcript_free(&transcript);
    /* Stopped by the callback after the second: not an error. */
    query.statuses = 0;
    transcript.stop_at = 2;
    transcript.stop_value = HF_STORE_LIST_STOP;
    list(store, &query, &transcript, true);
    assert_listed(&transcript, "res_1 res_3");
    transcript_free(&transcript);
    transcript.stop_at = 0;
    /* A hold of another event, or none, is no place to resume from. */
    query.after_id = "res_2";
    list(store, &query, &transcript, false);
    query.after_id = "res_9";
    list(store, &query, &transcript, false);
    assert_int_equal(transcript.count, 0);
    hf_store_close(store);
    hf_batch_destroy(batch);

    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open_v2(fixture->path, &database, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database,
                                        "EXPLAIN QUERY PLAN SELECT id FROM holds WHERE"
                                        " event_id = 'e1' AND seq > 3 ORDER BY seq",
                                        -1, &statement, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(statement), SQLITE_ROW);
    const char *plan = (const char *)sqlite3_column_text(statement, 3);
    if (strstr(plan, "USING INDEX holds_event (event_id=? AND seq>?)") == NULL)
        fail_msg("the listing is no range scan: %s", plan);
    sqlite3_finalize(statement);
    sqlite3_close(database);
}

/* ---- The decoder itself ---- */

/* Each kind's column list (the one both backends' SELECTs use) gives as many columns as the
 * decoder's enum of that kind counts. */
static void test_column_lists_follow_the_decoder(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_store_close(store);
    static const struct {
        const char *sql;
        int count;
    } kinds[] = {
        {"SELECT " HF_EVENT_COLUMNS " FROM events", HF_COLUMN_EVENT_COUNT},
        {"SELECT " HF_ALLOCATION_COLUMNS " FROM allocations", HF_COLUMN_ALLOCATION_COUNT},
        {"SELECT " HF_CALENDAR_COLUMNS " FROM calendars", HF_COLUMN_CALENDAR_COUNT},
        {"SELECT " HF_CALENDAR_RESOURCE_COLUMNS " FROM calendar_resources",
         HF_COLUMN_CALENDAR_RESOURCE_COUNT},
        {"SELECT " HF_FINISHED_HOLDS_COLUMNS " FROM holds", HF_COLUMN_FINISHED_HOLDS_COUNT},
        {"SELECT " HF_HOLD_COLUMNS " FROM holds", HF_COLUMN_HOLD_COUNT},
        {"SELECT " HF_ORDER_COLUMNS " FROM orders", HF_COLUMN_ORDER_COUNT},
        {"SELECT " HF_IDEMPOTENCY_COLUMNS("hex(hash)") " FROM idempotency",
         HF_COLUMN_IDEMPOTENCY_COUNT},
        {"SELECT " HF_REFUND_COLUMNS " FROM refunds", HF_COLUMN_REFUND_COUNT},
        {"SELECT " HF_JOB_COLUMNS " FROM jobs", HF_COLUMN_JOB_COUNT},
        {"SELECT " HF_JOB_OFFER_COLUMNS " FROM job_offers", HF_COLUMN_JOB_OFFER_COUNT},
        {"SELECT " HF_DELIVERY_COLUMNS " FROM deliveries", HF_COLUMN_DELIVERY_COUNT},
        {"SELECT " HF_TICKET_COLUMNS " FROM tickets", HF_COLUMN_TICKET_COUNT},
        {"SELECT " HF_WAITLIST_COLUMNS " FROM waitlist", HF_COLUMN_WAITLIST_COUNT},
        {"SELECT " HF_ORDER_LOCK_COLUMNS " FROM order_locks", HF_COLUMN_ORDER_LOCK_COUNT},
        {"SELECT " HF_DRIVER_COLUMNS " FROM drivers", HF_COLUMN_DRIVER_COUNT},
        {"SELECT " HF_RIDE_COLUMNS " FROM rides", HF_COLUMN_RIDE_COUNT},
    };
    assert_int_equal(sizeof kinds / sizeof kinds[0], HF_ROW_KIND_COUNT);
    sqlite3 *database = NULL;
    assert_int_equal(sqlite3_open_v2(fixture->path, &database, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        sqlite3_stmt *statement = NULL;
        if (sqlite3_prepare_v2(database, kinds[i].sql, -1, &statement, NULL) != SQLITE_OK)
            fail_msg("%s: %s", kinds[i].sql, sqlite3_errmsg(database));
        assert_int_equal(sqlite3_column_count(statement), kinds[i].count);
        sqlite3_finalize(statement);
    }
    sqlite3_close(database);
}

/* Doubles come back as written, to the last bit: SQLite's own text of a double keeps only 15
 * digits (0.30000000000000004 would read back as 0.3). */
static double read_lat, read_lng, read_rating;

static int on_driver_exact(void *context, const hf_stored_driver_t *driver) {
    (void)context;
    read_lat = driver->lat;
    read_lng = driver->lng;
    read_rating = driver->rating;
    return 0;
}

static void test_real_numbers_read_back_exactly(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    volatile double tenth = 0.1, fifth = 0.2;
    const double lat = tenth + fifth, lng = -73.98765432109876, rating = 4.999999999999999;
    hf_mutation_t driver = {.type = HF_MUTATION_DRIVER,
                            .at_ms = NOW_MS,
                            .as.driver = {"f1", "d1", lat, lng, rating, true, false}};
    append(batch, driver);
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);
    transcript_t transcript = {0};
    load_into(fixture, (hf_store_loader_t){.driver = on_driver_exact}, &transcript);
    assert_true(read_lat == lat);
    assert_true(read_lng == lng);
    assert_true(read_rating == rating);
}

/* Loads the store with every kind's callback and expects a refusal naming why. */
static void assert_load_refused(const fixture_t *fixture, const char *why) {
    hf_store_t *store = NULL;
    char error[ERROR_SIZE] = "";
    assert_int_equal(hf_store_open(&store, fixture->url, error, sizeof error), 0);
    transcript_t transcript = {0};
    hf_store_loader_t loader = {.event = on_event,
                                .hold = on_hold,
                                .order = on_order,
                                .idempotency = on_key,
                                .driver = on_driver,
                                .ride = on_ride,
                                .context = &transcript};
    assert_int_equal(hf_store_load(store, &loader, error, sizeof error), -1);
    if (strstr(error, why) == NULL) fail_msg("expected \"%s\" in \"%s\"", why, error);
    transcript_free(&transcript);
    hf_store_close(store);
}

/* A damaged row fails the load with a sentence naming its table, its id and the fault, before
 * anything of it reaches the loader; a forgotten hold read back alike. */
static void test_damaged_rows_are_refused(void **state) {
    fixture_t *fixture = *state;
    hf_store_t *store = store_open_started(fixture);
    hf_batch_t *batch = hf_batch_create();
    char error[ERROR_SIZE];
    append(batch, event_create("e1", NOW_MS));
    append(batch,
           hold_create("res_1", "e1", "u1", ITEMS(two_seats, 2, 0), 7, NOW_MS, NOW_MS + 1000));
    append(batch, idempotency("k1", "{}", 201, NOW_MS));
    append(batch, ride_record("r1", HF_RIDE_SEARCHING, NULL, NULL, "", ""));
    assert_true(submit_and_wait(store, batch, 1, error));
    hf_store_close(store);
    hf_batch_destroy(batch);

    execute(fixture, "UPDATE holds SET status = 'lost'");
    assert_load_refused(fixture, "store: holds row res_1: the unknown status \"lost\"");
    store = store_open_started(fixture);
    transcript_t transcript = {0};
    hf_store_loader_t one = {.hold = on_hold, .context = &transcript};
    bool found = false;
    assert_int_equal(hf_store_read_hold(store, "res_1", &one, &found, error, sizeof error), -1);
    assert_true(found);
    assert_int_equal(transcript.count, 0);
    assert_non_null(strstr(error, "the unknown status \"lost\""));
    hf_store_close(store);
    execute(fixture, "UPDATE holds SET status = 'held', items = '{\"seats\":'");
    assert_load_refused(fixture, "store: holds row res_1: ");
    execute(fixture, "UPDATE holds SET items = '{\"seats\":[],\"pools\":{}}'");
    execute(fixture, "UPDATE idempotency SET hash = x'0102'");
    assert_load_refused(fixture, "store: idempotency row k1: a hash of 4 hexadecimal digits");
    execute(fixture, "DELETE FROM idempotency; UPDATE rides SET status = 'parked'");
    assert_load_refused(fixture, "store: rides row r1: the unknown status \"parked\"");
    execute(fixture, "DELETE FROM rides; UPDATE events SET config = json_set(config, '$.id',"
                     " 'e2')");
    assert_load_refused(fixture, "store: events row e1: its definition names another event");
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define STORE_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
        STORE_TEST(test_every_mutation_round_trips),
        STORE_TEST(test_loader_callback_stops_the_load),
        STORE_TEST(test_finished_count_and_reading_one_hold),
        STORE_TEST(test_sales_record_round_trips),
        STORE_TEST(test_allocation_round_trips),
        STORE_TEST(test_version_2_is_migrated),
        STORE_TEST(test_payments_round_trip),
        STORE_TEST(test_version_3_is_migrated),
        STORE_TEST(test_version_7_is_migrated),
        STORE_TEST(test_version_9_is_migrated),
        STORE_TEST(test_listing_holds),
        STORE_TEST(test_dispatch_round_trip),
        STORE_TEST(test_column_lists_follow_the_decoder),
        STORE_TEST(test_real_numbers_read_back_exactly),
        STORE_TEST(test_damaged_rows_are_refused),
    };
    return cmocka_run_group_tests_name("store_load", tests, NULL, NULL);
}
