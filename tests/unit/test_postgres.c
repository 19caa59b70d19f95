/* The PostgreSQL backend's pure parts (the units of a batch, the fence's array literals) and,
 * when HOLDFAST_TEST_POSTGRES_URL names a database (scripts/test.sh starts one with
 * scripts/postgres.sh), its fencing: two instances on one database, the second takes a lapsed
 * lease, and the first one's next batch fails with "lost lease" and writes nothing. Without
 * the variable the database tests are skipped (cmocka's skip), the pure ones still run. A
 * unit's load in two halves (fetch, then delivery) is checked against load_unit too, and what
 * a load reads back through the store's decoder against what was written (doubles, hashes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "core/core.h"
#include "lib/buffer.h"
#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/store.h"

#define ERROR_SIZE 512

static const hf_mutation_item_t SEAT_LINE[] = {{"A-1", 0}};

static hf_mutation_t hold_create(const char *hold_id, const char *event_id) {
    return (hf_mutation_t){.type = HF_MUTATION_HOLD_CREATE,
                           .at_ms = 1000,
                           .as.hold_create = {.hold_id = hold_id,
                                              .event_id = event_id,
                                              .user_id = "u1",
                                              .items = {SEAT_LINE, 1, 0, NULL},
                                              .total = 100,
                                              .expires_at_ms = 61000,
                                              .status = HF_HOLD_HELD}};
}

/* ---- Pure ---- */

static void test_batch_units_are_distinct_and_name_records_of_no_unit(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_t first = hold_create("res_1", "E1");
    hf_mutation_t second = hold_create("res_2", "E2");
    hf_mutation_t again = hold_create("res_3", "E1");
    static const uint8_t hash[32];
    hf_mutation_t key = {.type = HF_MUTATION_IDEMPOTENCY,
                         .at_ms = 1,
                         .as.idempotency = {.key = "k", .body = "{}", .hash = hash, .status = 201}};
    hf_batch_append(batch, &first);
    hf_batch_append(batch, &key);
    hf_batch_append(batch, &second);
    hf_batch_append(batch, &again);
    const char *units[4];
    /* A key of a request about no unit is a record of no unit, fenced as one. */
    assert_int_equal(hf_store_batch_units(batch, units, 4), 3);
    assert_string_equal(units[0], "E1");
    assert_string_equal(units[1], HF_STORE_UNIT_NONE);
    assert_string_equal(units[2], "E2");
    assert_string_equal(hf_store_record_unit(&key), HF_STORE_UNIT_NONE);
    /* Past the capacity the count still tells how many there are. */
    assert_int_equal(hf_store_batch_units(batch, units, 1), 3);
    assert_string_equal(units[0], "E1");
    /* A key, a refund and a delivery belong to their request's or hold's event. */
    key.as.idempotency.unit = "E2";
    assert_string_equal(hf_store_record_unit(&key), "E2");
    hf_mutation_t refund = {.type = HF_MUTATION_REFUND, .as.refund = {.refund_id = "ref_1"}};
    assert_string_equal(hf_store_record_unit(&refund), HF_STORE_UNIT_NONE);
    refund.as.refund.event_id = "E1";
    assert_string_equal(hf_store_record_unit(&refund), "E1");
    hf_mutation_t delivery = {.type = HF_MUTATION_DELIVERY,
                              .as.delivery = {.payment_intent_id = "pi_1"}};
    assert_string_equal(hf_store_record_unit(&delivery), HF_STORE_UNIT_NONE);
    hf_batch_destroy(batch);
}

static void test_array_literal_escapes_quotes_and_backslashes(void **state) {
    (void)state;
    hf_buffer_t out;
    hf_buffer_init(&out);
    const char *items[] = {"E1", "a\"b", "c\\d", "x,y"};
    hf_pg_array_write(&out, items, 4);
    hf_buffer_append_char(&out, '\0');
    assert_string_equal(out.data, "{\"E1\",\"a\\\"b\",\"c\\\\d\",\"x,y\"}");
    hf_buffer_reset(&out);
    hf_pg_array_write(&out, items, 0);
    hf_buffer_append_char(&out, '\0');
    assert_string_equal(out.data, "{}");
    hf_buffer_free(&out);
}

/* ---- With a database ---- */

typedef struct counted {
    int holds;
    const char *unit;
    bool other_unit;
} counted_t;

static int hold_count(void *context, const hf_stored_hold_t *hold) {
    counted_t *counted = context;
    counted->holds++;
    if (strcmp(hold->request.event_id, counted->unit) != 0) counted->other_unit = true;
    return 0;
}

static const char *database_url(void) {
    const char *url = getenv("HOLDFAST_TEST_POSTGRES_URL");
    return url != NULL && url[0] != '\0' ? url : NULL;
}

static void done_ignored(void *context) { (void)context; }

static void *instance_open(const char *url) {
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    void *instance = NULL;
    char error[ERROR_SIZE] = "";
    if (backend->open(&instance, url, error, sizeof error) != 0) fail_msg("%s", error);
    if (backend->start(instance, done_ignored, NULL, error, sizeof error) != 0)
        fail_msg("%s", error);
    return instance;
}

/* Writes one batch of one hold through the backend's methods, as the pipeline does. */
static int hold_write(void *instance, const char *hold_id, const char *unit, char *error) {
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_t hold = hold_create(hold_id, unit);
    hf_batch_append(batch, &hold);
    int rc = backend->batch_write(instance, batch, error, ERROR_SIZE);
    if (rc == 0) rc = backend->batch_commit(instance, 1, error, ERROR_SIZE);
    if (rc != 0) backend->batch_abort(instance, error);
    hf_batch_destroy(batch);
    return rc;
}

static long long query_number(PGconn *connection, const char *sql, const char *argument) {
    const char *values[] = {argument};
    PGresult *result = PQexecParams(connection, sql, 1, NULL, values, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(result), PGRES_TUPLES_OK);
    long long value = PQntuples(result) ? strtoll(PQgetvalue(result, 0, 0), NULL, 10) : -1;
    PQclear(result);
    return value;
}

static void test_a_stale_epoch_is_refused_and_writes_nothing(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char unit[64], hold_a[64], hold_late[64], hold_b[64], error[ERROR_SIZE] = "";
    long stamp = (long)time(NULL) * 1000 + getpid() % 1000;
    snprintf(unit, sizeof unit, "fence_%ld", stamp);
    snprintf(hold_a, sizeof hold_a, "res_a_%ld", stamp);
    snprintf(hold_late, sizeof hold_late, "res_late_%ld", stamp);
    snprintf(hold_b, sizeof hold_b, "res_b_%ld", stamp);
    void *a = instance_open(url), *b = instance_open(url);
    PGconn *look = PQconnectdb(url);
    assert_int_equal(PQstatus(look), CONNECTION_OK);

    uint64_t epoch_a = 0, epoch_b = 0;
    bool acquired = false;
    assert_int_equal(
        backend->lease_acquire(a, "node-a", unit, &epoch_a, &acquired, error, sizeof error), 0);
    assert_true(acquired);
    assert_int_equal(hold_write(a, hold_a, unit, error), 0);
    /* B cannot take a live lease. */
    assert_int_equal(
        backend->lease_acquire(b, "node-b", unit, &epoch_b, &acquired, error, sizeof error), 0);
    assert_false(acquired);
    /* A's lease lapses (as if A were paused for 5 s); B takes the unit over. */
    PQclear(PQexecParams(look,
                         "UPDATE leases SET expires_at = now() - interval '1 second'"
                         " WHERE unit = $1",
                         1, NULL, (const char *const[]){unit}, NULL, NULL, 0));
    assert_int_equal(
        backend->lease_acquire(b, "node-b", unit, &epoch_b, &acquired, error, sizeof error), 0);
    assert_true(acquired);
    assert_int_equal(epoch_b, epoch_a + 1);
    /* A still believes its epoch. The takeover ended A's session (pg_terminate_backend, its
     * lease had lapsed): A's first batch finds the connection gone, the next one connects
     * again and is refused by the fence. Neither writes anything. */
    if (hold_write(a, hold_late, unit, error) == 0) fail_msg("a stale batch was written");
    if (strncmp(error, HF_STORE_LOST_LEASE, strlen(HF_STORE_LOST_LEASE)) != 0) {
        assert_non_null(strstr(error, "connection"));
        assert_int_not_equal(hold_write(a, hold_late, unit, error), 0);
    }
    assert_int_equal(strncmp(error, HF_STORE_LOST_LEASE, strlen(HF_STORE_LOST_LEASE)), 0);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE id = $1", hold_late), 0);
    /* B writes; A's renewal finds nothing of its own left. */
    assert_int_equal(hold_write(b, hold_b, unit, error), 0);
    size_t renewed = 99;
    assert_int_equal(
        backend->lease_renew(a, "node-a", "127.0.0.1:1", &renewed, error, sizeof error), 0);
    assert_int_equal(renewed, 0);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE event_id = $1", unit), 2);
    /* A clean stop hands B's lease back at once: A may take it, at the next epoch. */
    assert_int_equal(backend->lease_release(b, "node-b", error, sizeof error), 0);
    assert_int_equal(
        backend->lease_acquire(a, "node-a", unit, &epoch_a, &acquired, error, sizeof error), 0);
    assert_true(acquired);
    assert_int_equal(epoch_a, epoch_b + 1);
    assert_int_not_equal(hold_write(b, "res_never", unit, error), 0);
    char found_unit[64] = "";
    bool found = false;
    assert_int_equal(backend->unit_find(b, "hold", hold_b, found_unit, sizeof found_unit, &found,
                                        error, sizeof error),
                     0);
    assert_true(found);
    assert_string_equal(found_unit, unit);
    /* A takeover reads back only the unit taken: its two holds, none of another unit's. */
    counted_t counted = {0, unit, false};
    hf_store_loader_t loader = {.hold = hold_count, .context = &counted};
    assert_int_equal(backend->load_unit(a, unit, &loader, error, sizeof error), 0);
    assert_int_equal(counted.holds, 2);
    assert_false(counted.other_unit);
    PQfinish(look);
    backend->close(a);
    backend->close(b);
}

/* Writes one batch of a refund of no event and a key of no unit, as the owner of the records
 * of no unit does for a payment of an unknown hold. */
static int no_unit_write(void *instance, const char *refund_id, char *error) {
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    static const uint8_t hash[32];
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_t refund = {.type = HF_MUTATION_REFUND,
                            .at_ms = 1000,
                            .as.refund = {.refund_id = refund_id,
                                          .payment_intent_id = refund_id,
                                          .reservation_id = "res_gone",
                                          .amount = 100,
                                          .created_at_ms = 1000}};
    hf_mutation_t key = {
        .type = HF_MUTATION_IDEMPOTENCY,
        .at_ms = 1000,
        .as.idempotency = {.key = refund_id, .body = "{}", .hash = hash, .status = 200}};
    hf_batch_append(batch, &refund);
    hf_batch_append(batch, &key);
    int rc = backend->batch_write(instance, batch, error, ERROR_SIZE);
    if (rc == 0) rc = backend->batch_commit(instance, 1, error, ERROR_SIZE);
    if (rc != 0) backend->batch_abort(instance, error);
    hf_batch_destroy(batch);
    return rc;
}

typedef struct refunds_seen {
    const char *first, *late;
    int first_count, late_count;
} refunds_seen_t;

static int refund_count(void *context, const hf_stored_refund_t *refund) {
    refunds_seen_t *seen = context;
    if (strcmp(refund->refund_id, seen->first) == 0) seen->first_count++;
    if (strcmp(refund->refund_id, seen->late) == 0) seen->late_count++;
    return 0;
}

/* The records of no unit are one unit: a node whose lease of it was taken over writes none. */
static void test_a_stale_writer_of_no_unit_is_refused(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char first[64], late[64], error[ERROR_SIZE] = "";
    long stamp = (long)time(NULL) * 1000 + getpid() % 1000;
    snprintf(first, sizeof first, "ref_first_%ld", stamp);
    snprintf(late, sizeof late, "ref_late_%ld", stamp);
    void *a = instance_open(url), *b = instance_open(url);
    PGconn *look = PQconnectdb(url);
    assert_int_equal(PQstatus(look), CONNECTION_OK);
    const char *const none[] = {HF_STORE_UNIT_NONE};
    const char *lapse =
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE unit = $1";
    PQclear(PQexecParams(look, lapse, 1, NULL, none, NULL, NULL, 0));
    uint64_t epoch_a = 0, epoch_b = 0;
    bool acquired = false;
    assert_int_equal(backend->lease_acquire(a, "node-na", HF_STORE_UNIT_NONE, &epoch_a, &acquired,
                                            error, sizeof error),
                     0);
    assert_true(acquired);
    assert_int_equal(no_unit_write(a, first, error), 0);
    /* Without the lease, B's records of no unit are refused. */
    assert_int_equal(
        backend->lease_acquire(b, "node-nb", "nb_unit", &epoch_b, &acquired, error, sizeof error),
        0);
    assert_int_not_equal(no_unit_write(b, late, error), 0);
    assert_non_null(strstr(error, "lost lease"));
    /* A's lease lapses; B takes the records of no unit over; A, stale, writes nothing. */
    PQclear(PQexecParams(look, lapse, 1, NULL, none, NULL, NULL, 0));
    assert_int_equal(backend->lease_acquire(b, "node-nb", HF_STORE_UNIT_NONE, &epoch_b, &acquired,
                                            error, sizeof error),
                     0);
    assert_true(acquired);
    if (no_unit_write(a, late, error) == 0) fail_msg("a stale batch of no unit was written");
    if (strncmp(error, HF_STORE_LOST_LEASE, strlen(HF_STORE_LOST_LEASE)) != 0)
        assert_int_not_equal(no_unit_write(a, late, error), 0);
    assert_int_equal(strncmp(error, HF_STORE_LOST_LEASE, strlen(HF_STORE_LOST_LEASE)), 0);
    assert_int_equal(query_number(look, "SELECT count(*) FROM refunds WHERE id = $1", late), 0);
    assert_int_equal(
        query_number(look,
                     "SELECT count(*) FROM idempotency WHERE unit = '" HF_STORE_UNIT_NONE
                     "' AND key = $1",
                     first),
        1);
    /* The taker reads them back with the unit, the refund found by its id's unit too. */
    refunds_seen_t seen = {first, late, 0, 0};
    hf_store_loader_t loader = {.refund = refund_count, .context = &seen};
    assert_int_equal(backend->load_unit(b, HF_STORE_UNIT_NONE, &loader, error, sizeof error), 0);
    assert_int_equal(seen.first_count, 1);
    assert_int_equal(seen.late_count, 0);
    char found_unit[64] = "";
    bool found = false;
    assert_int_equal(backend->unit_find(b, "refund", first, found_unit, sizeof found_unit, &found,
                                        error, sizeof error),
                     0);
    assert_true(found);
    assert_string_equal(found_unit, HF_STORE_UNIT_NONE);
    assert_int_equal(backend->lease_release(b, "node-nb", error, sizeof error), 0);
    PQfinish(look);
    backend->close(a);
    backend->close(b);
}

/* A unit's load in two halves (backend.h, version 7): the fetch reads the rows without
 * calling back, the delivery calls back exactly as load_unit does, with no connection. */
static void test_a_fetched_unit_is_delivered_as_load_unit_reads_it(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char unit[64], other[64], hold_id[64], error[ERROR_SIZE] = "";
    long stamp = (long)time(NULL) * 1000 + getpid() % 1000;
    snprintf(unit, sizeof unit, "fetch_%ld", stamp);
    snprintf(other, sizeof other, "fetch_other_%ld", stamp);
    void *a = instance_open(url);
    uint64_t epoch = 0;
    bool acquired = false;
    for (int u = 0; u < 2; u++)
        assert_int_equal(backend->lease_acquire(a, "node-f", u ? other : unit, &epoch, &acquired,
                                                error, sizeof error),
                         0);
    for (int i = 0; i < 3; i++) {
        snprintf(hold_id, sizeof hold_id, "res_fetch_%d_%ld", i, stamp);
        assert_int_equal(hold_write(a, hold_id, i < 2 ? unit : other, error), 0);
    }
    counted_t loaded = {0, unit, false}, fetched = {0, unit, false};
    hf_store_loader_t loader = {.hold = hold_count, .context = &loaded};
    assert_int_equal(backend->load_unit(a, unit, &loader, error, sizeof error), 0);
    assert_int_equal(loaded.holds, 2);
    loader.context = &fetched;
    void *rows = NULL;
    assert_int_equal(backend->unit_fetch(a, unit, &loader, &rows, error, sizeof error), 0);
    assert_non_null(rows);
    assert_int_equal(fetched.holds, 0); /* nothing delivered yet */
    /* Written after the fetch: not in what it read. */
    snprintf(hold_id, sizeof hold_id, "res_fetch_late_%ld", stamp);
    assert_int_equal(hold_write(a, hold_id, unit, error), 0);
    assert_int_equal(backend->unit_deliver(a, rows, &loader, error, sizeof error), 0);
    assert_int_equal(fetched.holds, loaded.holds);
    assert_false(fetched.other_unit);
    /* Rows never delivered are freed (ASan checks). */
    assert_int_equal(backend->unit_fetch(a, other, &loader, &rows, error, sizeof error), 0);
    backend->unit_rows_free(rows);
    assert_int_equal(fetched.holds, loaded.holds);
    backend->close(a);
}

/* A batch of a unit this node never acquired is refused once the node holds any lease. */
static void test_a_unit_never_acquired_is_refused(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char unit[64], other[64], error[ERROR_SIZE] = "";
    long stamp = (long)time(NULL) * 1000 + getpid() % 1000;
    snprintf(unit, sizeof unit, "mine_%ld", stamp);
    snprintf(other, sizeof other, "other_%ld", stamp);
    void *a = instance_open(url);
    uint64_t epoch = 0;
    bool acquired = false;
    assert_int_equal(
        backend->lease_acquire(a, "node-c", unit, &epoch, &acquired, error, sizeof error), 0);
    assert_true(acquired);
    assert_int_not_equal(hold_write(a, "res_other", other, error), 0);
    assert_non_null(strstr(error, "lost lease"));
    /* The connection dropped with the refused batch comes back by itself. */
    char hold_id[64];
    snprintf(hold_id, sizeof hold_id, "res_mine_%ld", stamp);
    assert_int_equal(hold_write(a, hold_id, unit, error), 0);
    backend->close(a);
}

/* What a load reads back through the decoder is what was written, on PostgreSQL's text too:
 * a driver's doubles to the last bit, and an idempotency key's hash (bytea as hexadecimal). */
static double driver_lat;
static int key_hash_byte = -1;

static int driver_seen(void *context, const hf_stored_driver_t *driver) {
    (void)context;
    driver_lat = driver->lat;
    return 0;
}

static int key_seen(void *context, const hf_stored_idempotency_t *answer) {
    (void)context;
    key_hash_byte = answer->hash[31];
    return 0;
}

static void test_a_unit_reads_back_doubles_and_hashes_exactly(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char fleet[64], key[96], error[ERROR_SIZE] = "";
    long stamp = (long)time(NULL) * 1000 + getpid() % 1000;
    snprintf(fleet, sizeof fleet, "exact_%ld", stamp);
    snprintf(key, sizeof key, "POST /v1/fleets/%s/drivers k", fleet);
    void *a = instance_open(url);
    volatile double tenth = 0.1, fifth = 0.2;
    const double lat = tenth + fifth;
    uint8_t hash[32];
    for (int i = 0; i < 32; i++) hash[i] = (uint8_t)(i * 7 + 1);
    hf_batch_t *batch = hf_batch_create();
    hf_mutation_t driver = {.type = HF_MUTATION_DRIVER,
                            .at_ms = 1000,
                            .as.driver = {fleet, "d1", lat, -73.98765432109876, 4.5, true, false}};
    hf_mutation_t answer = {.type = HF_MUTATION_IDEMPOTENCY,
                            .at_ms = 1000,
                            .as.idempotency = {key, "{}", hash, 201, fleet}};
    hf_batch_append(batch, &driver);
    hf_batch_append(batch, &answer);
    int rc = backend->batch_write(a, batch, error, ERROR_SIZE);
    if (rc == 0) rc = backend->batch_commit(a, 1, error, ERROR_SIZE);
    if (rc != 0) fail_msg("%s", error);
    hf_batch_destroy(batch);
    hf_store_loader_t loader = {.driver = driver_seen, .idempotency = key_seen};
    assert_int_equal(backend->load_unit(a, fleet, &loader, error, sizeof error), 0);
    assert_true(driver_lat == lat);
    assert_int_equal(key_hash_byte, hash[31]);
    backend->close(a);
}

/* ---- Batches that overlap (store/postgres/inflight.c) ---- */

/* A batch of the holds named, written and sent (its COMMIT on the wire, nothing read back);
 * the batch is returned for the caller to finish and destroy. */
static hf_batch_t *holds_send(void *instance, const char *const *hold_ids, size_t count,
                              const char *unit, uint64_t sequence) {
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char error[ERROR_SIZE] = "";
    hf_batch_t *batch = hf_batch_create();
    for (size_t i = 0; i < count; i++) {
        hf_mutation_t hold = hold_create(hold_ids[i], unit);
        hf_batch_append(batch, &hold);
    }
    if (backend->batch_write(instance, batch, error, sizeof error) != 0 ||
        backend->batch_send(instance, sequence, error, sizeof error) != 0)
        fail_msg("%s", error);
    return batch;
}

static void stamp_name(char *out, size_t size, const char *prefix) {
    static int counter;
    snprintf(out, size, "%s_%ld_%d", prefix, (long)time(NULL) * 1000 + getpid() % 1000, counter++);
}

static void test_overlapped_batches_commit_in_order(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    assert_true(backend->batches_in_flight_max >= 2);
    char unit[64], first[64], second[64], after[64], error[ERROR_SIZE] = "";
    stamp_name(unit, sizeof unit, "overlap");
    stamp_name(first, sizeof first, "res_first");
    stamp_name(second, sizeof second, "res_second");
    stamp_name(after, sizeof after, "res_after_overlap");
    void *instance = instance_open(url);
    hf_batch_t *one = holds_send(instance, (const char *[]){first}, 1, unit, 1);
    hf_batch_t *two = holds_send(instance, (const char *[]){second}, 1, unit, 2);
    bool woken = true;
    assert_int_equal(backend->batch_finish(instance, 1, -1, &woken, error, sizeof error), 0);
    assert_false(woken);
    assert_int_equal(backend->batch_finish(instance, 2, -1, &woken, error, sizeof error), 0);
    PGconn *look = PQconnectdb(url);
    assert_int_equal(PQstatus(look), CONNECTION_OK);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE event_id = $1", unit), 2);
    /* After a pause (the segment's Sync sent), the next batch is written as usual. */
    assert_int_equal(hold_write(instance, after, unit, error), 0);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE event_id = $1", unit), 3);
    PQfinish(look);
    hf_batch_destroy(one);
    hf_batch_destroy(two);
    backend->close(instance);
}

static void test_a_failed_batch_fails_the_one_sent_behind_it(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char unit[64], twice[64], behind[64], after[64], error[ERROR_SIZE] = "";
    stamp_name(unit, sizeof unit, "overlap_fail");
    stamp_name(twice, sizeof twice, "res_twice");
    stamp_name(behind, sizeof behind, "res_behind");
    stamp_name(after, sizeof after, "res_after");
    void *instance = instance_open(url);
    PGconn *look = PQconnectdb(url);
    assert_int_equal(PQstatus(look), CONNECTION_OK);
    /* Batch 1 inserts one hold twice (the primary key refuses it); batch 2, sent behind it
     * before its outcome is known, is a valid batch on its own. */
    hf_batch_t *one = holds_send(instance, (const char *[]){twice, twice}, 2, unit, 1);
    hf_batch_t *two = holds_send(instance, (const char *[]){behind}, 1, unit, 2);
    bool woken = false;
    assert_int_not_equal(backend->batch_finish(instance, 1, -1, &woken, error, sizeof error), 0);
    /* Given time to run batch 2 if it would, PostgreSQL has not: it skips to the next Sync. */
    usleep(200 * 1000);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE id = $1", behind), 0);
    backend->batch_abort(instance, error);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE event_id = $1", unit), 0);
    /* The next batch connects again and is written. */
    assert_int_equal(hold_write(instance, after, unit, error), 0);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE event_id = $1", unit), 1);
    PQfinish(look);
    hf_batch_destroy(one);
    hf_batch_destroy(two);
    backend->close(instance);
}

static void test_a_wake_ends_the_wait_for_a_commit_and_decides_nothing(void **state) {
    (void)state;
    const char *url = database_url();
    if (url == NULL) skip();
    const hf_store_backend_t *backend = &hf_store_postgres_backend;
    char unit[64], hold[64], error[ERROR_SIZE] = "";
    stamp_name(unit, sizeof unit, "overlap_wake");
    stamp_name(hold, sizeof hold, "res_wake");
    void *instance = instance_open(url);
    /* Another session keeps the holds table from taking rows, so the batch waits. */
    PGconn *look = PQconnectdb(url);
    assert_int_equal(PQstatus(look), CONNECTION_OK);
    PQclear(PQexec(look, "BEGIN; LOCK TABLE holds IN SHARE MODE"));
    hf_batch_t *batch = holds_send(instance, (const char *[]){hold}, 1, unit, 1);
    int wake = eventfd(1, EFD_NONBLOCK);
    assert_true(wake >= 0);
    bool woken = false;
    assert_int_equal(backend->batch_finish(instance, 1, wake, &woken, error, sizeof error), 0);
    assert_true(woken);
    PQclear(PQexec(look, "ROLLBACK"));
    assert_int_equal(backend->batch_finish(instance, 1, -1, &woken, error, sizeof error), 0);
    assert_false(woken);
    assert_int_equal(query_number(look, "SELECT count(*) FROM holds WHERE id = $1", hold), 1);
    close(wake);
    PQfinish(look);
    hf_batch_destroy(batch);
    backend->close(instance);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_units_are_distinct_and_name_records_of_no_unit),
        cmocka_unit_test(test_a_stale_writer_of_no_unit_is_refused),
        cmocka_unit_test(test_array_literal_escapes_quotes_and_backslashes),
        cmocka_unit_test(test_a_stale_epoch_is_refused_and_writes_nothing),
        cmocka_unit_test(test_a_unit_never_acquired_is_refused),
        cmocka_unit_test(test_a_fetched_unit_is_delivered_as_load_unit_reads_it),
        cmocka_unit_test(test_a_unit_reads_back_doubles_and_hashes_exactly),
        cmocka_unit_test(test_overlapped_batches_commit_in_order),
        cmocka_unit_test(test_a_failed_batch_fails_the_one_sent_behind_it),
        cmocka_unit_test(test_a_wake_ends_the_wait_for_a_commit_and_decides_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
