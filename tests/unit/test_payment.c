/* The core's payments (core/payment.c): every outcome of a delivery, deduplication and its
 * pruning by age, late commits, a delivery at the very millisecond its hold expires, refunds
 * completed, and the records each change emits; and the same outcome after a restore through
 * the SQLite store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core_fixtures.h"
#include "store_fixtures.h"

#define T0 1795291200000LL
#define TTL 60000
#define SEAT_PRICE 100
#define POOL_PRICE 50

typedef struct fixture {
    hf_core_t *core;
    hf_batch_t *batch; /* every record the core emitted, deep-copied */
    fx_event_t event;
    int next_id; /* the ids of orders and refunds made by deliveries */
} fixture_t;

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    f->batch = hf_batch_create();
    f->core = hf_core_create((hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    fx_event_init(&f->event, "e1", TTL, 3 * TTL, 0, 10);
    fx_event_section(&f->event, "FLOOR", SEAT_PRICE, 1, 10);
    fx_event_pool(&f->event, "GA", 3, POOL_PRICE);
    assert_int_equal(hf_core_event_create(f->core, &f->event.definition, T0, NULL), HF_OK);
    hf_batch_clear(f->batch);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    hf_core_destroy(f->core);
    hf_batch_destroy(f->batch);
    free(f);
    return 0;
}

/* A hold of seats (and GA units) made at `at`; answers its index. */
static uint32_t hold_make(fixture_t *f, const char *hold_id, const char *user,
                          const char *const *seats, uint32_t seat_count, uint32_t units,
                          int64_t at) {
    hf_pool_request_t pool = {"GA", units};
    hf_hold_request_t request = {.event_id = "e1",
                                 .user_id = user,
                                 .hold_id = hold_id,
                                 .seat_ids = seats,
                                 .seat_count = seat_count,
                                 .pools = units ? &pool : NULL,
                                 .pool_count = units ? 1 : 0,
                                 .ttl_ms = -1};
    uint32_t index;
    hf_error_detail_t detail;
    memset(&detail, 0, offsetof(hf_error_detail_t, items));
    assert_int_equal(hf_core_hold(f->core, &request, at, &index, &detail), HF_OK);
    return index;
}

static hf_error_t deliver(fixture_t *f, uint8_t type, const char *intent, const char *hold_id,
                          int64_t amount, int64_t at, hf_payment_outcome_t *outcome) {
    char order_id[32], refund_id[32];
    f->next_id++;
    snprintf(order_id, sizeof order_id, "ord_%d", f->next_id);
    snprintf(refund_id, sizeof refund_id, "ref_%d", f->next_id);
    hf_payment_delivery_t delivery = {.event_id = "evt",
                                      .type = type,
                                      .payment_intent_id = intent,
                                      .reservation_id = hold_id,
                                      .amount = amount,
                                      .order_id = order_id,
                                      .refund_id = refund_id};
    return hf_core_payment(f->core, &delivery, at, outcome);
}

/* A payment.succeeded naming a currency (NULL: none), with ids as deliver's. */
static hf_error_t deliver_in(fixture_t *f, const char *intent, const char *hold_id, int64_t amount,
                             const char *currency, int64_t at, hf_payment_outcome_t *outcome) {
    char order_id[32], refund_id[32];
    f->next_id++;
    snprintf(order_id, sizeof order_id, "ord_%d", f->next_id);
    snprintf(refund_id, sizeof refund_id, "ref_%d", f->next_id);
    hf_payment_delivery_t delivery = {.event_id = "evt",
                                      .type = HF_PAYMENT_SUCCEEDED,
                                      .payment_intent_id = intent,
                                      .reservation_id = hold_id,
                                      .amount = amount,
                                      .currency = currency,
                                      .order_id = order_id,
                                      .refund_id = refund_id};
    return hf_core_payment(f->core, &delivery, at, outcome);
}

/* How many records of the kind the batch holds, and the last one. */
static size_t records_of(const fixture_t *f, hf_mutation_type_t type, const hf_mutation_t **last) {
    size_t count = 0;
    for (size_t i = 0; i < hf_batch_count(f->batch); i++) {
        if (hf_batch_at(f->batch, i)->type != type) continue;
        count++;
        if (last) *last = hf_batch_at(f->batch, i);
    }
    return count;
}

static uint8_t seat_status(const fixture_t *f, const char *seat_id) {
    return fx_seat_of(f->core, "e1", seat_id)->status;
}

static void assert_consistent(const fixture_t *f, int64_t now) {
    fx_assert_consistent(f->core, now);
}

/* An active hold paid in full: committed with the intent as payment_ref, in one command whose
 * records are the order, the hold's update and the delivery. */
static void test_succeeded_commits(void **state) {
    fixture_t *f = *state;
    uint32_t hold = hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1", "FLOOR-A-2"), 1, T0);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    assert_int_equal(deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 250, T0 + 10, &outcome),
                     HF_OK);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_false(outcome.late);
    assert_false(outcome.repeat);
    const hf_order_t *order = hf_core_order_at(f->core, outcome.order);
    assert_string_equal(order->id, "ord_1");
    assert_string_equal(hf_core_string(f->core, order->payment_ref), "pi_1");
    assert_int_equal(hf_core_hold_at(f->core, hold)->status, HF_HOLD_CONFIRMED);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_SOLD);
    assert_int_equal(hf_core_event(f->core, "e1", NULL)->pools[0].sold, 1);
    const hf_mutation_t *delivery = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_ORDER_CREATE, NULL), 1);
    assert_int_equal(records_of(f, HF_MUTATION_HOLD_UPDATE, NULL), 1);
    assert_int_equal(records_of(f, HF_MUTATION_REFUND, NULL), 0);
    assert_int_equal(records_of(f, HF_MUTATION_DELIVERY, &delivery), 1);
    assert_string_equal(delivery->as.delivery.payment_intent_id, "pi_1");
    assert_string_equal(delivery->as.delivery.order_id, "ord_1");
    assert_null(delivery->as.delivery.refund_id);
    assert_int_equal(delivery->as.delivery.result, HF_PAYMENT_COMMITTED);
    assert_int_equal(delivery->at_ms, T0 + 10);
    assert_consistent(f, T0 + 10);
}

/* A repeat of (intent, type) answers the first outcome and emits nothing, whatever it
 * carries; the other type of the same intent is another delivery. */
static void test_repeat_changes_nothing(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hf_payment_outcome_t first, again;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 100, T0 + 1, &first);
    hf_batch_clear(f->batch);
    uint64_t changes = hf_core_change_count(f->core);
    assert_int_equal(deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_zzz", 7, T0 + 2, &again), HF_OK);
    assert_true(again.repeat);
    assert_int_equal(again.result, HF_PAYMENT_COMMITTED);
    assert_int_equal(again.order, first.order);
    assert_int_equal(hf_core_change_count(f->core), changes);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_int_equal(hf_core_refund_count(f->core), 0);
    assert_int_equal(deliver(f, HF_PAYMENT_FAILED, "pi_1", "res_a", 100, T0 + 3, &again), HF_OK);
    assert_false(again.repeat);
    assert_int_equal(again.result, HF_PAYMENT_RECORDED);
    assert_int_equal(hf_core_deliveries_kept(f->core), 2);
    /* GET /metrics' counts: one of each decided, one repeat. */
    const uint64_t *counts = hf_core_payment_counts(f->core);
    assert_int_equal(counts[HF_PAYMENT_COMMITTED], 1);
    assert_int_equal(counts[HF_PAYMENT_RECORDED], 1);
    assert_int_equal(counts[HF_PAYMENT_REFUND_REQUIRED], 0);
    assert_int_equal(counts[HF_PAYMENT_COUNT_REPEAT], 1);
}

/* payment.failed is recorded and the hold stays until it expires. */
static void test_failed_is_recorded(void **state) {
    fixture_t *f = *state;
    uint32_t hold = hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_FAILED, "pi_1", "res_a", 100, T0 + 1, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_RECORDED);
    assert_int_equal(hf_core_hold_at(f->core, hold)->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_hold_at(f->core, hold)->expires_at_ms, T0 + TTL);
    const hf_mutation_t *delivery = NULL;
    assert_int_equal(hf_batch_count(f->batch), 1);
    assert_int_equal(records_of(f, HF_MUTATION_DELIVERY, &delivery), 1);
    assert_int_equal(delivery->as.delivery.type, HF_PAYMENT_FAILED);
    assert_int_equal(delivery->as.delivery.result, HF_PAYMENT_RECORDED);
    /* The hold still commits by a later success of the same intent. */
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 100, T0 + 2, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
}

/* A refund required, with its reason and the amount paid, and its two records. */
static void assert_refund(fixture_t *f, const hf_payment_outcome_t *outcome, uint8_t reason,
                          const char *intent, const char *hold_id, int64_t amount) {
    assert_int_equal(outcome->result, HF_PAYMENT_REFUND_REQUIRED);
    assert_int_equal(outcome->reason, reason);
    const hf_refund_t *refund = hf_core_refund_at(f->core, outcome->refund);
    assert_non_null(refund);
    assert_int_equal(refund->reason, reason);
    assert_int_equal(refund->status, HF_REFUND_PENDING);
    assert_int_equal(refund->amount, amount);
    assert_string_equal(refund->payment_intent_id, intent);
    assert_string_equal(refund->reservation_id, hold_id);
    const hf_mutation_t *record = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_REFUND, &record), 1);
    assert_string_equal(record->as.refund.refund_id, refund->id);
    assert_int_equal(record->as.refund.status, HF_REFUND_PENDING);
    /* Its unit with several nodes: the hold's event, none for a hold no event has. */
    const hf_hold_t *hold = hf_core_hold_find(f->core, hold_id, NULL);
    assert_int_equal(refund->of_event, hold != NULL);
    if (hold != NULL)
        assert_string_equal(record->as.refund.event_id, hf_core_event_at(f->core, hold->event)->id);
    else assert_null(record->as.refund.event_id);
    assert_int_equal(records_of(f, HF_MUTATION_DELIVERY, &record), 1);
    assert_string_equal(record->as.delivery.refund_id, refund->id);
    assert_int_equal(record->as.delivery.reason, reason);
    assert_int_equal(records_of(f, HF_MUTATION_ORDER_CREATE, NULL), 0);
}

/* A wrong amount leaves the hold exactly as it was: held, same expiry, seats held. */
static void test_amount_mismatch_leaves_the_hold(void **state) {
    fixture_t *f = *state;
    uint32_t hold = hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 1, T0);
    hf_hold_t before = *hf_core_hold_at(f->core, hold);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 149, T0 + 5, &outcome);
    assert_refund(f, &outcome, HF_REFUND_AMOUNT_MISMATCH, "pi_1", "res_a", 149);
    assert_memory_equal(hf_core_hold_at(f->core, hold), &before, sizeof before);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_HELD);
    assert_int_equal(hf_core_event(f->core, "e1", NULL)->pools[0].held, 1);
    assert_int_equal(records_of(f, HF_MUTATION_HOLD_UPDATE, NULL), 0);
    assert_consistent(f, T0 + 5);
}

static void test_released_and_unknown_holds(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    assert_int_equal(hf_core_release(f->core, "res_a", "u1", T0 + 1), HF_OK);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 100, T0 + 2, &outcome);
    assert_refund(f, &outcome, HF_REFUND_HOLD_RELEASED, "pi_1", "res_a", 100);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_AVAILABLE);
    hf_batch_clear(f->batch);
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_2", "res_nope", 5, T0 + 3, &outcome);
    assert_refund(f, &outcome, HF_REFUND_HOLD_NOT_FOUND, "pi_2", "res_nope", 5);
    assert_int_equal(hf_core_refund_count(f->core), 2);
    assert_consistent(f, T0 + 3);
}

/* A hold committed by another payment requires a refund; one committed by this very payment
 * (the client's commit came first) answers its order. */
static void test_already_confirmed(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    uint32_t order;
    assert_int_equal(hf_core_commit(f->core, "res_a", "u1", "ord_c", "pi_a", T0 + 1, &order),
                     HF_OK);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_b", "res_a", 100, T0 + 2, &outcome);
    assert_refund(f, &outcome, HF_REFUND_ALREADY_CONFIRMED, "pi_b", "res_a", 100);
    hf_batch_clear(f->batch);
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_a", "res_a", 100, T0 + 3, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_int_equal(outcome.order, order);
    assert_int_equal(records_of(f, HF_MUTATION_ORDER_CREATE, NULL), 0);
    assert_int_equal(records_of(f, HF_MUTATION_DELIVERY, NULL), 1);
    assert_consistent(f, T0 + 3);
}

/* A lapsed hold whose seats and units are all free is taken again and committed, late. */
static void test_late_commit(void **state) {
    fixture_t *f = *state;
    uint32_t hold = hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 2, T0);
    assert_int_equal(hf_core_advance(f->core, T0 + TTL), 1);
    assert_int_equal(hf_core_holds_finished(f->core), 1);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 200, T0 + TTL + 500, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_true(outcome.late);
    assert_int_equal(hf_core_hold_at(f->core, hold)->status, HF_HOLD_CONFIRMED);
    assert_int_equal(hf_core_holds_finished(f->core), 0);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_SOLD);
    const hf_pool_t *pool = &hf_core_event(f->core, "e1", NULL)->pools[0];
    assert_int_equal(pool->sold, 2);
    assert_int_equal(pool->held, 0);
    const hf_mutation_t *record = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_DELIVERY, &record), 1);
    assert_true(record->as.delivery.late);
    assert_int_equal(records_of(f, HF_MUTATION_HOLD_UPDATE, &record), 1);
    assert_int_equal(record->as.hold_update.status, HF_HOLD_CONFIRMED);
    assert_non_null(record->as.hold_update.order_id);
    assert_consistent(f, T0 + TTL + 500);
    /* Evicting finished holds never forgets the confirmed one. */
    hf_core_set_finished_max(f->core, 0);
    hf_core_evict(f->core, UINT64_MAX);
    assert_non_null(hf_core_hold_find(f->core, "res_a", NULL));
}

/* A lapsed hold with a seat or a unit taken since: refund hold_expired, nothing moves. */
static void test_late_but_taken(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1", "FLOOR-A-2"), 0, T0);
    hold_make(f, "res_b", "u2", SEATS("FLOOR-A-3"), 2, T0);
    hf_core_advance(f->core, T0 + TTL);
    hold_make(f, "res_c", "u3", SEATS("FLOOR-A-2"), 0, T0 + TTL + 1);
    hold_make(f, "res_d", "u4", NULL, 0, 2, T0 + TTL + 1);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 200, T0 + TTL + 2, &outcome);
    assert_refund(f, &outcome, HF_REFUND_HOLD_EXPIRED, "pi_1", "res_a", 200);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_AVAILABLE);
    assert_int_equal(seat_status(f, "FLOOR-A-2"), HF_SEAT_HELD);
    hf_batch_clear(f->batch);
    /* Its seat is free but 2 of the 3 units are held by another. */
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_2", "res_b", 200, T0 + TTL + 3, &outcome);
    assert_refund(f, &outcome, HF_REFUND_HOLD_EXPIRED, "pi_2", "res_b", 200);
    assert_int_equal(seat_status(f, "FLOOR-A-3"), HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + TTL + 3);
}

/* Deliveries older than HF_WEBHOOK_DEDUP_KEEP_MS are pruned (then the same intent counts as a
 * new delivery); younger ones are kept, and the array is compacted as it goes. */
static void test_dedup_pruned_by_age(void **state) {
    fixture_t *f = *state;
    hf_payment_outcome_t outcome;
    char intent[32];
    for (int i = 0; i < 100; i++) {
        snprintf(intent, sizeof intent, "pi_%d", i);
        assert_int_equal(deliver(f, HF_PAYMENT_FAILED, intent, "res_x", 1, T0 + i, &outcome),
                         HF_OK);
    }
    assert_int_equal(hf_core_deliveries_kept(f->core), 100);
    int64_t later = T0 + HF_WEBHOOK_DEDUP_KEEP_MS;
    deliver(f, HF_PAYMENT_FAILED, "pi_0", "res_x", 1, later, &outcome);
    assert_true(outcome.repeat); /* exactly 7 days old: still kept */
    deliver(f, HF_PAYMENT_FAILED, "pi_new", "res_x", 1, later + 50, &outcome);
    assert_false(outcome.repeat);
    assert_int_equal(hf_core_deliveries_kept(f->core), 51); /* pi_50 to pi_99, and pi_new */
    deliver(f, HF_PAYMENT_FAILED, "pi_60", "res_x", 1, later + 51, &outcome);
    assert_true(outcome.repeat);
    deliver(f, HF_PAYMENT_FAILED, "pi_3", "res_x", 1, later + 52, &outcome);
    assert_false(outcome.repeat);
    for (int i = 0; i < 300; i++) {
        snprintf(intent, sizeof intent, "pi_late_%d", i);
        deliver(f, HF_PAYMENT_FAILED, intent, "res_x", 1, later + 100 + i, &outcome);
    }
    deliver(f, HF_PAYMENT_FAILED, "pi_new", "res_x", 1, later + 400, &outcome);
    assert_true(outcome.repeat);
    deliver(f, HF_PAYMENT_FAILED, "pi_late_0", "res_x", 1, later + 400, &outcome);
    assert_true(outcome.repeat);
}

static void test_refund_complete(void **state) {
    fixture_t *f = *state;
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_nope", 10, T0, &outcome);
    const hf_refund_t *refund = hf_core_refund_at(f->core, outcome.refund);
    char id[HF_SERVER_ID_SIZE + 1];
    snprintf(id, sizeof id, "%s", refund->id);
    hf_batch_clear(f->batch);
    uint32_t index;
    assert_int_equal(hf_core_refund_complete(f->core, id, T0 + 1, &index), HF_OK);
    assert_int_equal(index, outcome.refund);
    assert_int_equal(hf_core_refund_at(f->core, index)->status, HF_REFUND_COMPLETED);
    assert_int_equal(hf_core_refunds_completed(f->core), 1);
    assert_int_equal(hf_core_payment_counts(f->core)[HF_PAYMENT_REFUND_REQUIRED], 1);
    const hf_mutation_t *record = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_REFUND, &record), 1);
    assert_int_equal(record->as.refund.status, HF_REFUND_COMPLETED);
    assert_int_equal(record->as.refund.created_at_ms, T0);
    assert_null(record->as.refund.event_id); /* a record of no unit, as when it was made */
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_refund_complete(f->core, id, T0 + 2, &index), HF_OK);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_int_equal(hf_core_refunds_completed(f->core), 1); /* a repeat counts nothing */
    assert_null(hf_core_check(f->core, T0 + 2));
    assert_int_equal(hf_core_refund_complete(f->core, "ref_nope", T0 + 2, &index),
                     HF_ERROR_REFUND_NOT_FOUND);
}

/* A currency other than the event's is refunded as amount_mismatch and leaves the hold as it
 * was; the event's own, in any case, commits. */
static void test_currency(void **state) {
    fixture_t *f = *state;
    uint32_t hold = hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hf_hold_t before = *hf_core_hold_at(f->core, hold);
    hf_batch_clear(f->batch);
    hf_payment_outcome_t outcome;
    assert_int_equal(deliver_in(f, "pi_1", "res_a", SEAT_PRICE, "EUR", T0 + 1, &outcome), HF_OK);
    assert_refund(f, &outcome, HF_REFUND_AMOUNT_MISMATCH, "pi_1", "res_a", SEAT_PRICE);
    assert_memory_equal(hf_core_hold_at(f->core, hold), &before, sizeof before);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_HELD);
    /* A prefix or a longer word is another currency too. */
    deliver_in(f, "pi_2", "res_a", SEAT_PRICE, "US", T0 + 2, &outcome);
    assert_int_equal(outcome.reason, HF_REFUND_AMOUNT_MISMATCH);
    deliver_in(f, "pi_3", "res_a", SEAT_PRICE, "USDX", T0 + 2, &outcome);
    assert_int_equal(outcome.reason, HF_REFUND_AMOUNT_MISMATCH);
    deliver_in(f, "pi_4", "res_a", SEAT_PRICE, "usd", T0 + 3, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    hold_make(f, "res_b", "u2", SEATS("FLOOR-A-2"), 0, T0 + 4);
    deliver_in(f, "pi_5", "res_b", SEAT_PRICE, "USD", T0 + 5, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_consistent(f, T0 + 5);
}

/* The refund a paid order's cancel owes: the order's total to its payment_ref, reason
 * order_cancelled, of the order's event; order and refund name each other, and the refund's
 * record comes before the order's, which names it. Returns the refund's index. */
static uint32_t assert_cancel_refund(fixture_t *f, uint32_t order_index, const char *intent,
                                     const char *hold_id) {
    const hf_order_t *order = hf_core_order_at(f->core, order_index);
    assert_int_equal(order->status, HF_ORDER_CANCELLED);
    assert_int_not_equal(order->refund, 0);
    const hf_refund_t *refund = hf_core_refund_at(f->core, order->refund - 1);
    assert_int_equal(refund->reason, HF_REFUND_ORDER_CANCELLED);
    assert_int_equal(refund->status, HF_REFUND_PENDING);
    assert_int_equal(refund->amount, order->total);
    assert_string_equal(refund->payment_intent_id, intent);
    if (hold_id) assert_string_equal(refund->reservation_id, hold_id);
    else assert_null(refund->reservation_id);
    assert_int_equal(refund->order, order_index + 1);
    assert_true(refund->of_event);
    assert_int_equal(refund->event, order->event);
    const hf_mutation_t *first = NULL, *second = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_REFUND, &first), 1);
    assert_int_equal(records_of(f, HF_MUTATION_ORDER_UPDATE, &second), 1);
    size_t refund_at = 0, order_at = 0;
    for (size_t i = 0; i < hf_batch_count(f->batch); i++) {
        if (hf_batch_at(f->batch, i) == first) refund_at = i;
        if (hf_batch_at(f->batch, i) == second) order_at = i;
    }
    assert_true(refund_at < order_at);
    assert_string_equal(first->as.refund.refund_id, refund->id);
    assert_string_equal(first->as.refund.order_id, order->id);
    assert_string_equal(first->as.refund.event_id, "e1");
    if (hold_id) assert_string_equal(first->as.refund.reservation_id, hold_id);
    else assert_null(first->as.refund.reservation_id);
    assert_string_equal(second->as.order_update.refund_id, refund->id);
    return order->refund - 1;
}

/* A paid hold's order and a paid booking, cancelled: each gets its pending refund in the same
 * step; a repeated cancel changes nothing and makes no second refund. */
static void test_cancel_refunds_paid_orders(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 1, T0);
    uint32_t committed, booked;
    assert_int_equal(hf_core_commit(f->core, "res_a", "u1", "ord_a", "pi_a", T0 + 1, &committed),
                     HF_OK);
    const char *seat = "FLOOR-A-2";
    uint32_t version = fx_seat_of(f->core, "e1", seat)->version;
    hf_hold_request_t booking = {.event_id = "e1",
                                 .user_id = "u2",
                                 .seat_ids = &seat,
                                 .seat_count = 1,
                                 .seat_versions = &version,
                                 .ttl_ms = -1};
    assert_int_equal(hf_core_book(f->core, &booking, "ord_b", "pi_b", T0 + 2, &booked, NULL),
                     HF_OK);
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_cancel(f->core, "ord_a", "u1", "ref_a", T0 + 3), HF_OK);
    uint32_t refund = assert_cancel_refund(f, committed, "pi_a", "res_a");
    assert_string_equal(hf_core_refund_at(f->core, refund)->id, "ref_a");
    assert_int_equal(hf_core_refund_at(f->core, refund)->amount, SEAT_PRICE + POOL_PRICE);
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_cancel(f->core, "ord_a", "u1", "ref_again", T0 + 4), HF_OK);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_null(hf_core_refund_find(f->core, "ref_again", NULL));
    assert_int_equal(hf_core_cancel(f->core, "ord_b", "u2", "ref_b", T0 + 5), HF_OK);
    assert_cancel_refund(f, booked, "pi_b", NULL);
    assert_int_equal(hf_core_refund_count(f->core), 2);
    assert_int_equal(seat_status(f, "FLOOR-A-2"), HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + 5);
}

/* An order without payment_ref owes nothing; a paid one refuses a refund id missing or taken
 * and changes nothing then. */
static void test_cancel_unpaid_and_refused(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hold_make(f, "res_b", "u1", SEATS("FLOOR-A-2"), 0, T0);
    uint32_t unpaid, paid;
    assert_int_equal(hf_core_commit(f->core, "res_a", "u1", "ord_a", NULL, T0 + 1, &unpaid), HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_b", "u1", "ord_b", "pi_b", T0 + 1, &paid), HF_OK);
    hf_payment_outcome_t outcome;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_x", "res_nope", 5, T0 + 1, &outcome); /* ref_1 */
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_cancel(f->core, "ord_a", "u1", NULL, T0 + 2), HF_OK);
    assert_int_equal(hf_core_order_at(f->core, unpaid)->refund, 0);
    const hf_mutation_t *record = NULL;
    assert_int_equal(records_of(f, HF_MUTATION_REFUND, NULL), 0);
    assert_int_equal(records_of(f, HF_MUTATION_ORDER_UPDATE, &record), 1);
    assert_null(record->as.order_update.refund_id);
    hf_batch_clear(f->batch);
    uint64_t changes = hf_core_change_count(f->core);
    assert_int_equal(hf_core_cancel(f->core, "ord_b", "u1", NULL, T0 + 3),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_core_cancel(f->core, "ord_b", "u1", "ref_1", T0 + 3),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_core_change_count(f->core), changes);
    assert_int_equal(hf_core_order_at(f->core, paid)->status, HF_ORDER_CONFIRMED);
    assert_int_equal(seat_status(f, "FLOOR-A-2"), HF_SEAT_SOLD);
    assert_int_equal(hf_core_refund_count(f->core), 1);
    assert_consistent(f, T0 + 3);
}

/* Ids already taken, or no intent: refused, nothing changes. */
static void test_invalid_deliveries(void **state) {
    fixture_t *f = *state;
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hf_payment_outcome_t outcome;
    hf_payment_delivery_t delivery = {.type = HF_PAYMENT_SUCCEEDED,
                                      .payment_intent_id = "",
                                      .reservation_id = "res_a",
                                      .amount = 100,
                                      .order_id = "ord_x",
                                      .refund_id = "ref_x"};
    hf_batch_clear(f->batch);
    assert_int_equal(hf_core_payment(f->core, &delivery, T0 + 1, &outcome),
                     HF_ERROR_INVALID_REQUEST);
    delivery.payment_intent_id = "pi_1";
    delivery.order_id = NULL;
    assert_int_equal(hf_core_payment(f->core, &delivery, T0 + 1, &outcome),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_int_equal(hf_core_deliveries_kept(f->core), 0);
}

/* ---- the same outcome after a restore (through the SQLite store, as at start) ---- */

static int restore_event(void *context, const hf_stored_event_t *event) {
    return hf_core_restore_event(context, event->definition, event->created_at_ms);
}

static int restore_hold(void *context, const hf_stored_hold_t *hold) {
    return hf_core_restore_hold(context, hold);
}

static int restore_order(void *context, const hf_stored_order_t *order) {
    return hf_core_restore_order(context, order);
}

static int restore_refund(void *context, const hf_stored_refund_t *refund) {
    return hf_core_restore_refund(context, refund);
}

static int restore_delivery(void *context, const hf_stored_delivery_t *delivery) {
    return hf_core_restore_delivery(context, delivery);
}

/* Writes the fixture's batch to a new store, then loads it into a fresh core. */
static hf_core_t *restored(fixture_t *f, int64_t now) {
    temporary_database_t database;
    assert_true(temporary_database_make(&database, "payment"));
    store_write_batch(database.url, f->batch);
    f->batch = hf_batch_create();
    hf_core_set_sink(f->core, (hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    hf_store_t *store = NULL;
    char error[256];
    assert_int_equal(hf_store_open(&store, database.url, error, sizeof error), 0);
    hf_store_loader_t loader = {.event = restore_event,
                                .hold = restore_hold,
                                .order = restore_order,
                                .refund = restore_refund,
                                .delivery = restore_delivery,
                                .deliveries_since_ms = now - HF_WEBHOOK_DEDUP_KEEP_MS,
                                .context = core};
    int rc = hf_store_load(store, &loader, error, sizeof error);
    if (rc) fail_msg("load: %s", error);
    hf_store_close(store);
    temporary_database_remove(&database);
    return core;
}

/* A delivery at the very millisecond its hold expires: the hold is expired (now >=
 * expires_at), its seat free, so it commits late; one outcome, and after a restore a repeat
 * answers it again, as do refunds. */
static void test_expiry_race_and_restore(void **state) {
    fixture_t *f = *state;
    hf_batch_clear(f->batch);
    hf_core_t *creator = hf_core_create((hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    hf_core_destroy(f->core);
    f->core = creator;
    assert_int_equal(hf_core_event_create(f->core, &f->event.definition, T0, NULL), HF_OK);
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    hf_payment_outcome_t outcome, refund_outcome, again;
    hf_core_advance(f->core, T0 + TTL); /* the delivery's request: res_a lapses first */
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 100, T0 + TTL, &outcome);
    assert_int_equal(outcome.result, HF_PAYMENT_COMMITTED);
    assert_true(outcome.late);
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_2", "res_nope", 3, T0 + TTL, &refund_outcome);
    /* A refund of a hold of e1 (the amount differs): its unit is e1 again once restored. */
    hold_make(f, "res_b", "u2", SEATS("FLOOR-A-2"), 0, T0 + TTL);
    hf_payment_outcome_t mismatch;
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_3", "res_b", 7, T0 + TTL, &mismatch);
    assert_int_equal(mismatch.result, HF_PAYMENT_REFUND_REQUIRED);
    uint32_t refund_index;
    assert_int_equal(hf_core_refund_complete(f->core, hf_core_refund_at(f->core, 0)->id, T0 + TTL,
                                             &refund_index),
                     HF_OK);
    char order_id[HF_SERVER_ID_SIZE + 1];
    snprintf(order_id, sizeof order_id, "%s", hf_core_order_at(f->core, outcome.order)->id);
    hf_core_t *before = f->core;
    const hf_event_t *event = hf_core_event(before, "e1", NULL);
    uint32_t seat;
    assert_true(hf_core_seat_find(event, "FLOOR-A-1", &seat));
    uint32_t version = event->seats[seat].version; /* held, expired, sold: 4 */
    assert_int_equal(version, 4);

    hf_core_t *core = restored(f, T0 + TTL + 1);
    hf_core_destroy(f->core);
    f->core = core;
    hf_core_set_sink(f->core, (hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    assert_consistent(f, T0 + TTL + 1);
    assert_int_equal(hf_core_deliveries_kept(f->core), 3);
    uint32_t e1_index;
    assert_non_null(hf_core_event(f->core, "e1", &e1_index));
    assert_false(hf_core_refund_at(f->core, refund_outcome.refund)->of_event);
    assert_true(hf_core_refund_at(f->core, mismatch.refund)->of_event);
    assert_int_equal(hf_core_refund_at(f->core, mismatch.refund)->event, e1_index);
    /* The completed refund is counted again from the store; restored deliveries are not. */
    assert_int_equal(hf_core_refunds_completed(f->core), 1);
    assert_int_equal(hf_core_payment_counts(f->core)[HF_PAYMENT_COMMITTED], 0);
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_1", "res_a", 100, T0 + TTL + 1, &again);
    assert_true(again.repeat);
    assert_int_equal(again.result, HF_PAYMENT_COMMITTED);
    assert_true(again.late);
    assert_string_equal(hf_core_order_at(f->core, again.order)->id, order_id);
    deliver(f, HF_PAYMENT_SUCCEEDED, "pi_2", "res_nope", 3, T0 + TTL + 1, &again);
    assert_true(again.repeat);
    assert_int_equal(again.reason, HF_REFUND_HOLD_NOT_FOUND);
    const hf_refund_t *refund = hf_core_refund_at(f->core, again.refund);
    assert_int_equal(refund->status, HF_REFUND_COMPLETED);
    assert_int_equal(refund->amount, 3);
    assert_int_equal(refund->created_at_ms, T0 + TTL);
    assert_int_equal(hf_batch_count(f->batch), 0);
    assert_int_equal(seat_status(f, "FLOOR-A-1"), HF_SEAT_SOLD);
    /* The seat's version is recounted as it was: a late sale is one change more. */
    assert_int_equal(hf_core_event(f->core, "e1", NULL)->seats[seat].version, version);
}

/* Cancels' refunds read back from the store: each names its order and the order it, of the
 * order's event, the booking's without a hold; a repeated cancel makes no second one. */
static void test_cancel_refunds_restored(void **state) {
    fixture_t *f = *state;
    hf_batch_clear(f->batch);
    hf_core_t *creator = hf_core_create((hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    hf_core_destroy(f->core);
    f->core = creator;
    assert_int_equal(hf_core_event_create(f->core, &f->event.definition, T0, NULL), HF_OK);
    hold_make(f, "res_a", "u1", SEATS("FLOOR-A-1"), 0, T0);
    uint32_t committed, booked;
    assert_int_equal(hf_core_commit(f->core, "res_a", "u1", "ord_a", "pi_a", T0 + 1, &committed),
                     HF_OK);
    const char *seat = "FLOOR-A-2";
    uint32_t version = 1;
    hf_hold_request_t booking = {.event_id = "e1",
                                 .user_id = "u2",
                                 .seat_ids = &seat,
                                 .seat_count = 1,
                                 .seat_versions = &version,
                                 .ttl_ms = -1};
    assert_int_equal(hf_core_book(f->core, &booking, "ord_b", "pi_b", T0 + 2, &booked, NULL),
                     HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_a", "u1", "ref_a", T0 + 3), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_b", "u2", "ref_b", T0 + 4), HF_OK);
    uint32_t index;
    assert_int_equal(hf_core_refund_complete(f->core, "ref_b", T0 + 5, &index), HF_OK);

    hf_core_t *core = restored(f, T0 + 6);
    hf_core_destroy(f->core);
    f->core = core;
    hf_core_set_sink(f->core, (hf_mutation_sink_t){hf_batch_sink_emit, f->batch});
    assert_consistent(f, T0 + 6);
    uint32_t e1_index;
    assert_non_null(hf_core_event(f->core, "e1", &e1_index));
    const char *const names[] = {"ord_a", "ord_b"}, *const refunds[] = {"ref_a", "ref_b"};
    for (int i = 0; i < 2; i++) {
        uint32_t order_index, refund_index;
        const hf_order_t *order = hf_core_order_find(f->core, names[i], &order_index);
        const hf_refund_t *refund = hf_core_refund_find(f->core, refunds[i], &refund_index);
        assert_non_null(order);
        assert_non_null(refund);
        assert_int_equal(order->refund, refund_index + 1);
        assert_int_equal(refund->order, order_index + 1);
        assert_int_equal(refund->reason, HF_REFUND_ORDER_CANCELLED);
        assert_true(refund->of_event);
        assert_int_equal(refund->event, e1_index);
    }
    assert_string_equal(hf_core_refund_find(f->core, "ref_a", NULL)->reservation_id, "res_a");
    assert_null(hf_core_refund_find(f->core, "ref_b", NULL)->reservation_id);
    assert_int_equal(hf_core_refund_find(f->core, "ref_b", NULL)->status, HF_REFUND_COMPLETED);
    assert_int_equal(hf_core_cancel(f->core, "ord_b", "u2", "ref_c", T0 + 7), HF_OK);
    assert_int_equal(hf_core_refund_count(f->core), 2);
    assert_int_equal(hf_batch_count(f->batch), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_succeeded_commits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeat_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_is_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_amount_mismatch_leaves_the_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_released_and_unknown_holds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_already_confirmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_but_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dedup_pruned_by_age, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refund_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_deliveries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_currency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_refunds_paid_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_unpaid_and_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_refunds_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_race_and_restore, setup, teardown),
    };
    return cmocka_run_group_tests_name("payment", tests, NULL, NULL);
}
