/* Seeded randomized simulation of the core against a deliberately simple reference model.
 *
 * The model keeps plain arrays and scans them; it has its own expiry logic (a hold is active
 * while its status is held and now < expires_at). For every random operation the model first
 * computes the set of errors that apply (the contract does not fix an order among several
 * applicable errors, so the core's answer must be one of them, and HF_OK exactly when the set is
 * empty), then the core runs the same operation, and the two states are compared: seat statuses,
 * versions and owners, counts, per-row free counts (hf_row_t.available), pools, holds (with their
 * items, in order), orders, the mutation records emitted, and hf_core_check.
 *
 * Holds may ask for best_available seats (random count, section, adjacency, with or without named
 * seats, pools and replace_existing): the model picks them with its own plain implementation of
 * the rules of API.md section 3 (every block of every row scored, every free seat of a row sorted
 * by distance from the middle), and the core must pick exactly the same seats in the same order.
 * Bookings (hf_core_book) name seats at their current or a stale version, and pools.
 *
 * The core keeps only a few finished holds (HF_SIM_FINISHED_MAX, default 3) and forgets older
 * ones when told which of its records are durable; durability lags a random number of steps
 * behind, as the store's does. The model records which holds the core has forgotten and checks
 * that no hold was forgotten before its end was durable and that no more than the maximum are
 * kept once everything is durable. An operation that picks a forgotten hold first takes it back
 * (hf_core_revive_hold) from the model's copy, as the engine does from the store.
 *
 * One operation in four runs with the core's seat and pool records off, as in the server while
 * no live stream is open (hf_core_set_stream_records): it must then emit none of them, while
 * versions and counts move exactly as the model says.
 *
 * Payments (hf_core_payment, API.md section 7) are mixed in: payment.succeeded with the right or
 * a wrong amount for held holds, lapsed ones (everything still free, or something taken since),
 * released ones, ones committed by another payment or by this very one, and unknown holds;
 * payment.failed; repeats of earlier deliveries (carrying the same or another hold and amount,
 * whatever happened since); ids already taken; and refund completions. The model keeps every
 * delivery and refund in plain arrays and decides each outcome itself (result, reason, late, the
 * order made with its seats sold and payment_ref, the refund and its amount); a repeat within
 * HF_WEBHOOK_DEDUP_KEEP_MS answers the first outcome and changes nothing. The clock of the first
 * run stays within a few days, so a second, shorter run (test_payment_window) has more payments
 * and jumps the clock by hours and days, to a delivery's last kept millisecond or the one after:
 * a repeat past the window is a new delivery.
 *
 *   HF_SEED=N               reproduce a run (default: from the time; printed first)
 *   HF_SIM_OPERATIONS=N     operations (default 100000)
 *   HF_SIM_WINDOW_OPERATIONS=N  operations of the run across the 7-day window (default 10000)
 *   HF_SIM_CHECK_EVERY=N    call hf_core_check every N steps (default 1)
 *   HF_SIM_LAX_NEXT_EXPIRY=1  hf_core_next_expiry may be early, never late (default: exact)
 *   HF_SIM_FINISHED_MAX=N   finished holds the core keeps (default 3)
 *   HF_SIM_QUEUE_OPERATIONS=N  operations of the waiting room's runs (default 20000)
 *
 * Dispatch (API.md section 8) runs on a core of its own against its own model, in
 * sim_dispatch.h (test_dispatch_simulation; HF_SIM_DISPATCH_OPERATIONS=N, default 50000).
 *
 * Waitlists (API.md section 14) are on three of the four events: joins and cancels, and every
 * operation that frees seats or units hands them down the line as offers the model predicts,
 * seat by seat, in the same step (sim_waitlist.h).
 *
 * This file is the driver (the clock, the table of operations, a run, the tests); the models
 * are headers by what they model, included in order: sim_model.h (events, seats, pools, holds
 * and orders: the state, its setup and its comparison), sim_holds.h (best_available and the
 * operations on holds and orders), sim_payments.h (deliveries and refunds), sim_exchange.h,
 * sim_allocations.h, sim_waitlist.h (entries and offers), sim_queue.h (the waiting room),
 * sim_prequeue.h (its pre-queue's line without the seed, and restarts) and sim_dispatch.h
 * (rides and drivers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/queue.h"
#include "core/shuffle.h"
#include "core_fixtures.h"

#include "sim_model.h"
#include "sim_holds.h"
#include "sim_payments.h"
#include "sim_exchange.h"
#include "sim_allocations.h"
#include "sim_waitlist.h"

static void op_clock(void) {
    uint32_t roll = rng_below(100);
    hf_time_ms_t target = model.now;
    if (window_run) {
        target = window_clock_target(roll);
    } else if (roll < 40) {
        target += rng_range(0, 1000);
    } else if (roll < 70) {
        target += rng_range(1000, 30000);
    } else if (roll < 82) {
        target += rng_range(30000, 200000);
    } else if (model.active_count > 0) {
        /* Exactly to a hold's expires_at, or one millisecond before. */
        hf_time_ms_t expires = model.holds[model.active[rng_below(model.active_count)]].expires;
        target = roll < 94 ? expires : expires - 1;
        if (target < model.now) target = model.now;
    }
    model.now = target;
    stats[S_CLOCK]++;
    bool advance = rng_chance(50);
    snprintf(description, sizeof description, "clock to epoch+%" PRId64 "%s", target - EPOCH,
             advance ? ", advance" : "");
    if (!advance) return;
    stats[S_ADVANCE]++;
    uint32_t expected = model_expire(model.now);
    uint32_t got = hf_core_advance(core, model.now);
    stats[S_EXPIRED] += expected;
    if (got != expected) mismatch("advance expired %u holds, model %u", got, expected);
}

/* The store makes batches durable a few steps late: the core may forget only holds whose end
 * is as old as that. Then the model learns which ones it forgot, and checks it. */
static void evict_step(void) {
    uint64_t now_changes = hf_core_change_count(core);
    uint32_t lag = rng_below(8);
    uint64_t durable = lag == 0      ? now_changes
                       : step >= lag ? model.step_changes[(step - lag) % 8]
                                     : 0;
    model.step_changes[step % 8] = now_changes;
    stats[S_FORGOTTEN] += hf_core_evict(core, durable);
    for (uint32_t i = 0; i < model.kept_count;) {
        model_hold_t *h = &model.holds[model.kept[i]];
        if (hf_core_hold_find(core, h->id, NULL) != NULL) {
            i++;
            continue;
        }
        if (h->finished_after >= durable)
            mismatch("hold %s forgotten before its end was durable (records up to %" PRIu64
                     " durable, it ended after %" PRIu64 ")",
                     h->id, durable, h->finished_after);
        h->forgotten = true;
        model.kept[i] = model.kept[--model.kept_count];
    }
    if (hf_core_holds_finished(core) != model.kept_count)
        mismatch("core keeps %u finished holds, model %u", hf_core_holds_finished(core),
                 model.kept_count);
    if (durable == now_changes && model.kept_count > finished_max)
        mismatch("%u finished holds kept with everything durable, at most %u", model.kept_count,
                 finished_max);
}

static uint64_t env_number(const char *name, uint64_t fallback) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') return fallback;
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || *end != '\0') {
        fprintf(stderr, "%s: not a decimal number: %s\n", name, text);
        exit(2);
    }
    return value;
}

/* The operations and their shares (percent) in a run. */
typedef struct operation_kind {
    const char *name;
    void (*run)(void);
    uint32_t main_percent, window_percent;
} operation_kind_t;

static const operation_kind_t operation_kinds[] = {
    {"hold", op_hold, 25, 17},
    {"waitlist join", op_waitlist_join, 3, 2},
    {"waitlist cancel", op_waitlist_cancel, 1, 1},
    {"waitlist setting", op_waitlist_setting, 1, 1},
    {"allocate", op_allocate, 2, 1},
    {"allocation hold", op_allocation_hold, 3, 1},
    {"allocation release", op_allocation_release, 1, 1},
    {"book", op_book, 7, 2},
    {"exchange", op_exchange, 3, 2},
    {"extend", op_extend, 8, 3},
    {"release", op_release, 10, 5},
    {"commit", op_commit, 9, 7},
    {"cancel", op_cancel, 9, 6},
    {"payment", op_payment, 4, 28},
    {"refund", op_refund_complete, 1, 4},
    {"clock", op_clock, 13, 19},
};

/* Each run's shares add up to 100, no more (a share past 100 would never be drawn). */
static void operation_shares_check(void) {
    uint32_t main_sum = 0, window_sum = 0;
    for (size_t k = 0; k < sizeof operation_kinds / sizeof operation_kinds[0]; k++) {
        main_sum += operation_kinds[k].main_percent;
        window_sum += operation_kinds[k].window_percent;
    }
    assert_int_equal(main_sum, 100);
    assert_int_equal(window_sum, 100);
}

static void operation_run(void) {
    uint32_t roll = rng_below(100), sum = 0;
    for (size_t k = 0; k < sizeof operation_kinds / sizeof operation_kinds[0]; k++) {
        sum += window_run ? operation_kinds[k].window_percent : operation_kinds[k].main_percent;
        if (roll >= sum) continue;
        begin(operation_kinds[k].name);
        /* A command runs as the engine runs a request's: the core advanced to its time first
         * (the clock's own step advances only half the time, to test both). */
        if (operation_kinds[k].run != op_clock) hf_core_advance(core, model.now);
        operation_kinds[k].run();
        waitlist_after_operation();
        return;
    }
    assert_true(!"the shares of operation_kinds add up to 100");
}

static void simulation_report(uint64_t operations, double seconds) {
    printf("%s: %" PRIu64 " operations in %.2f s (%.0f ops/s), clock at epoch+%" PRId64 " ms\n",
           run_name, operations, seconds, seconds > 0 ? (double)operations / seconds : 0.0,
           model.now - EPOCH);
    printf("  holds %" PRIu64 " (ok %" PRIu64 ", replaced %" PRIu64 ", moved seats %" PRIu64
           "), extends %" PRIu64 " (ok %" PRIu64 "), releases %" PRIu64 " (ok %" PRIu64
           "), commits %" PRIu64 " (ok %" PRIu64 "), cancels %" PRIu64 " (ok %" PRIu64 ")\n",
           stats[S_HOLD], stats[S_HOLD_OK], stats[S_REPLACED], stats[S_MOVED], stats[S_EXTEND],
           stats[S_EXTEND_OK], stats[S_RELEASE], stats[S_RELEASE_OK], stats[S_COMMIT],
           stats[S_COMMIT_OK], stats[S_CANCEL], stats[S_CANCEL_OK]);
    printf("  best_available %" PRIu64 " (ok %" PRIu64 ": separate %" PRIu64
           ", with named seats %" PRIu64 ", with replace %" PRIu64 "; seats picked %" PRIu64
           "; nothing fits %" PRIu64 "), bookings %" PRIu64 " (ok %" PRIu64
           ", version conflicts %" PRIu64 ", booked orders cancelled %" PRIu64 ")\n",
           stats[S_BEST], stats[S_BEST_OK], stats[S_BEST_SEPARATE_OK], stats[S_BEST_NAMED_OK],
           stats[S_BEST_REPLACE_OK], stats[S_BEST_PICKED], stats[S_BEST_NO_FIT], stats[S_BOOK],
           stats[S_BOOK_OK], stats[S_BOOK_CONFLICT], stats[S_BOOK_CANCEL_OK]);
    printf("  deliveries %" PRIu64 " (payment.failed %" PRIu64 ", refused %" PRIu64
           "): committed %" PRIu64 ", late %" PRIu64 ", by its own commit's payment %" PRIu64
           ", refunds %" PRIu64 " (",
           stats[S_PAY], stats[S_PAY_FAILED], stats[S_PAY_INVALID], stats[S_PAY_COMMITTED],
           stats[S_PAY_LATE], stats[S_PAY_OWN], stats[S_PAY_REFUND]);
    for (uint8_t r = 0; r <= HF_REFUND_ALREADY_CONFIRMED; r++)
        printf("%s%s %" PRIu64, r ? ", " : "", hf_refund_reason_name(r), stats[S_PAY_REASON + r]);
    printf(")\n  repeats %" PRIu64 " (the hold moved on since %" PRIu64
           ", past the window so new %" PRIu64 "), clock to a window's edge %" PRIu64
           " (repeats there %" PRIu64 ", a millisecond past %" PRIu64
           "), refund completions %" PRIu64 " (ok %" PRIu64 ", again %" PRIu64 ")\n",
           stats[S_PAY_REPEAT], stats[S_PAY_REPEAT_CHANGED], stats[S_PAY_REPEAT_PRUNED],
           stats[S_WINDOW_JUMP], stats[S_EDGE_KEPT], stats[S_EDGE_PRUNED], stats[S_REFUND_COMPLETE],
           stats[S_REFUND_COMPLETE_OK], stats[S_REFUND_COMPLETE_AGAIN]);
    printf("  exchanges %" PRIu64 " (swapped %" PRIu64 ")\n", stats[S_EXCHANGE],
           stats[S_EXCHANGE_OK]);
    printf("  allocations %" PRIu64 " (ok %" PRIu64 "), holds of an allocation %" PRIu64
           " (ok %" PRIu64 "), releases of an allocation %" PRIu64 " (ok %" PRIu64 ")\n",
           stats[S_ALLOCATE], stats[S_ALLOCATE_OK], stats[S_ALLOCATION_HOLD],
           stats[S_ALLOCATION_HOLD_OK], stats[S_ALLOCATION_RELEASE],
           stats[S_ALLOCATION_RELEASE_OK]);
    printf("  waitlist joins %" PRIu64 " (ok %" PRIu64 ", the live entry again %" PRIu64
           "), cancels %" PRIu64 " (ok %" PRIu64 "), offers %" PRIu64 " (refused %" PRIu64
           ", separate seats %" PRIu64 ", of a pool %" PRIu64 "), fulfilled %" PRIu64
           ", lapsed %" PRIu64 ", settings changed %" PRIu64 "\n",
           stats[S_WAITLIST_JOIN], stats[S_WAITLIST_JOIN_OK], stats[S_WAITLIST_EXISTING],
           stats[S_WAITLIST_CANCEL], stats[S_WAITLIST_CANCEL_OK], stats[S_WAITLIST_OFFER],
           stats[S_WAITLIST_OFFER_REFUSED], stats[S_WAITLIST_OFFER_SEPARATE],
           stats[S_WAITLIST_OFFER_POOL], stats[S_WAITLIST_FULFILLED], stats[S_WAITLIST_LAPSED],
           stats[S_WAITLIST_SETTING]);
    printf("  clock jumps %" PRIu64 " (advance %" PRIu64 ", holds expired by advance %" PRIu64
           "), hf_core_check calls %" PRIu64 "\n",
           stats[S_CLOCK], stats[S_ADVANCE], stats[S_EXPIRED], stats[S_CHECKS]);
    printf("  finished holds kept at most %u: forgotten %" PRIu64 ", taken back %" PRIu64
           "\n  operations without seat and pool records %" PRIu64 "\n  answers:",
           finished_max, stats[S_FORGOTTEN], stats[S_REVIVED], stats[S_QUIET]);
    for (int e = 0; e <= ERROR_LAST; e++)
        if (error_stats[e])
            printf(" %s=%" PRIu64, e == 0 ? "ok" : fx_error_code((hf_error_t)e), error_stats[e]);
    printf("\n");
}

/* One run from a fresh core and model: operations random steps, each checked. */
static void simulate(uint64_t operations, uint64_t stream) {
    uint64_t check_every = env_number("HF_SIM_CHECK_EVERY", 0);
    lax_next_expiry = env_number("HF_SIM_LAX_NEXT_EXPIRY", 0) != 0;
    finished_max = (uint32_t)env_number("HF_SIM_FINISHED_MAX", 3);
    operation_shares_check();
    rng_state = seed ^ stream;
    memset(&model, 0, sizeof model);
    memset(stats, 0, sizeof stats);
    memset(error_stats, 0, sizeof error_stats);
    model.boundary = -1;
    step = 0;
    operation = "start";
    description[0] = '\0';
    fx_sink_init(&sink, 4096);
    core = hf_core_create(fx_sink_of(&sink));
    assert_non_null(core);
    hf_core_set_finished_max(core, finished_max);
    model.now = model.applied = EPOCH;
    for (uint32_t e = 0; e < EVENTS; e++) event_setup(e);
    compare_state(true);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (step = 0; step < operations; step++) {
        operation_run();
        compare_mutations();
        evict_step();
        /* hf_core_check after every step (HF_SIM_CHECK_EVERY=N to space it out). */
        uint64_t every = check_every ? check_every : 1;
        bool full = step % 4096 == 0 || step + 1 == operations;
        compare_state(full);
        if (step % every == 0 || full) {
            stats[S_CHECKS]++;
            const char *fault = hf_core_check(core, model.applied);
            if (fault != NULL) mismatch("hf_core_check: %s", fault);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    simulation_report(operations, (double)(end.tv_sec - start.tv_sec) +
                                      (double)(end.tv_nsec - start.tv_nsec) / 1e9);
    hf_core_destroy(core);
    fx_sink_free(&sink);
    free(model.holds);
    free(model.orders);
    free(model.active);
    free(model.live);
    free(model.kept);
    free(model.refunds);
    free(model.deliveries);
    free(model.entries);
}

static void test_simulation(void **state) {
    (void)state;
    run_name = "test_simulation";
    run_variable = "HF_SIM_OPERATIONS";
    run_skip = "HF_SIM_WINDOW_OPERATIONS=0";
    window_run = false;
    simulate(env_number("HF_SIM_OPERATIONS", 100000), 0);
}

/* The first run's clock stays within a few days: this one crosses the 7-day window of
 * deliveries many times, with a third of its operations payments. */
static void test_payment_window(void **state) {
    (void)state;
    run_name = "test_payment_window";
    run_variable = "HF_SIM_WINDOW_OPERATIONS";
    run_skip = "HF_SIM_OPERATIONS=0";
    window_run = true;
    simulate(env_number("HF_SIM_WINDOW_OPERATIONS", 10000), UINT64_C(0x5EED0F7DA75));
}

#include "sim_queue.h"
#include "sim_prequeue.h"
#include "sim_dispatch.h"
#include "sim_calendars.h"
#include "sim_jobs.h"

int main(void) {
    const char *text = getenv("HF_SEED");
    if (text != NULL && *text != '\0') {
        seed = env_number("HF_SEED", 0);
    } else {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        seed = (uint64_t)now.tv_sec * 1000000007u ^ (uint64_t)now.tv_nsec;
        seed %= UINT64_C(10000000000000); /* short enough to retype */
    }
    printf("simulation seed=%" PRIu64 "\n", seed);
    fflush(stdout);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simulation),          cmocka_unit_test(test_payment_window),
        cmocka_unit_test(test_queue_simulation),    cmocka_unit_test(test_dispatch_simulation),
        cmocka_unit_test(test_calendar_simulation), cmocka_unit_test(test_cancel_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
