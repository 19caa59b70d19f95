/* Unit tests of the core state machine (src/core/core.h): every success path and every error
 * path of events, holds, expiry, extend, release, commit, cancel and restore, asserting the
 * resulting values and the mutation records emitted (an error emits none). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "core/core.h"
#include "lib/map.h"
#include "core_fixtures.h"

#define T0 INT64_C(1800000000000)
#define TTL INT64_C(600000)
#define MAX_HOLD INT64_C(1800000)
#define FLOOR_PRICE 45000
#define BALC_PRICE 12000
#define GA_PRICE 9900
#define VIP_PRICE 50000

/* "show": FLOOR rows A, B of 30 seats; BALC row A of 40 seats; pools GA (10) and VIP (2).
 * At most 8 seats per user, 10 items per hold. "open": one section S of 2 rows of 20 seats,
 * pool P of 100, no user limit, 10 items per hold. */
typedef struct fixture {
    hf_core_t *core;
    fx_sink_t sink;
    fx_event_t show;
    fx_event_t open;
    const hf_event_t *event; /* "show", refreshed by seat() */
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    f->core = fx_core_create(&f->sink, 4096);
    fx_event_init(&f->show, "show", TTL, MAX_HOLD, 8, 10);
    fx_event_section(&f->show, "FLOOR", FLOOR_PRICE, 2, 30);
    fx_event_section(&f->show, "BALC", BALC_PRICE, 1, 40);
    fx_event_pool(&f->show, "GA", 10, GA_PRICE);
    fx_event_pool(&f->show, "VIP", 2, VIP_PRICE);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &f->show.definition, T0, &detail), HF_OK);
    fx_event_init(&f->open, "open", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&f->open, "S", 100, 2, 20);
    fx_event_pool(&f->open, "P", 100, 10);
    assert_int_equal(hf_core_event_create(f->core, &f->open.definition, T0, &detail), HF_OK);
    fx_sink_reset(&f->sink);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

/* ---- helpers ---- */

static hf_error_t hold_on(fixture_t *f, const char *event_id, const char *user, const char *hold_id,
                          const char *const *seats, uint32_t seat_count,
                          const hf_pool_request_t *pools, uint32_t pool_count, int64_t ttl_ms,
                          bool replace, hf_time_ms_t now, uint32_t *index,
                          hf_error_detail_t *detail)
{
    hf_hold_request_t request = {
        .event_id = event_id, .user_id = user, .hold_id = hold_id,
        .seat_ids = seats, .seat_count = seat_count,
        .pools = pools, .pool_count = pool_count,
        .ttl_ms = ttl_ms, .replace_existing = replace,
    };
    return fx_hold(f->core, &request, now, index, detail);
}

static hf_error_t hold(fixture_t *f, const char *user, const char *hold_id,
                       const char *const *seats, uint32_t seat_count,
                       const hf_pool_request_t *pools, uint32_t pool_count, int64_t ttl_ms,
                       bool replace, hf_time_ms_t now, uint32_t *index, hf_error_detail_t *detail)
{
    return hold_on(f, "show", user, hold_id, seats, seat_count, pools, pool_count, ttl_ms,
                   replace, now, index, detail);
}

static const hf_event_t *event_of(fixture_t *f, const char *event_id)
{
    return fx_event_of(f->core, event_id);
}

static const hf_seat_t *seat_on(fixture_t *f, const char *event_id, const char *seat_id)
{
    return fx_seat_of(f->core, event_id, seat_id);
}

static const hf_seat_t *seat(fixture_t *f, const char *seat_id)
{
    return seat_on(f, "show", seat_id);
}

static const hf_pool_t *pool(fixture_t *f, const char *pool_id)
{
    const hf_event_t *event = event_of(f, "show");
    int32_t index = hf_core_pool_find(event, pool_id);
    assert_true(index >= 0);
    return &event->pools[index];
}

static const hf_hold_t *hold_by_id(fixture_t *f, const char *hold_id)
{
    return fx_hold_of(f->core, hold_id);
}

static void assert_counts(hf_counts_t counts, uint32_t available, uint32_t held, uint32_t sold)
{
    assert_int_equal(counts.available, available);
    assert_int_equal(counts.held, held);
    assert_int_equal(counts.sold, sold);
}

static void assert_consistent(fixture_t *f, hf_time_ms_t now)
{
    fx_assert_consistent(f->core, now);
}

static void assert_no_mutation(fixture_t *f)
{
    fx_assert_no_mutation(&f->sink);
}

static void assert_seat_record(fixture_t *f, const char *seat_id, int status, uint32_t version)
{
    const fx_record_t *record = fx_sink_seat(&f->sink, seat_id);
    if (record == NULL) fail_msg("no SEAT record for %s", seat_id);
    assert_string_equal(record->event_id, "show");
    assert_int_equal(record->status, status);
    assert_int_equal(record->version, version);
}

static void assert_items(fixture_t *f, uint32_t expected_count, const uint32_t *expected,
                         const hf_error_detail_t *detail)
{
    (void)f;
    assert_int_equal(detail->item_count, expected_count);
    for (uint32_t i = 0; i < expected_count; i++) {
        bool found = false;
        for (uint32_t j = 0; j < detail->item_count; j++) found |= detail->items[j] == expected[i];
        if (!found) fail_msg("detail.items lacks index %u", expected[i]);
    }
}

static uint32_t commit(fixture_t *f, const char *hold_id, const char *user, const char *order_id,
                       hf_time_ms_t now)
{
    uint32_t index = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, hold_id, user, order_id, "pi_1", now, &index), HF_OK);
    return index;
}

/* ---- seat and pool records only while streams want them ---- */

/* With stream records off a hold and its release emit only the hold's own records, yet seat
 * versions, seat counts and pool counts move exactly as with them on; turned on again, the
 * next change reports the version that counted on in between. */
static void test_stream_records_off(void **state)
{
    fixture_t *f = *state;
    hf_core_set_stream_records(f->core, false);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("BALC-A-7"), POOLS({"GA", 3}), -1, false, T0,
                          NULL, NULL),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 1), HF_OK);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 0);
    assert_int_equal(f->sink.total, 2);
    /* A new event's seats start at version 1; the hold and the release count 2 more. */
    assert_int_equal(seat_on(f, "show", "BALC-A-7")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);

    hf_core_set_stream_records(f->core, true);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("BALC-A-7"), POOLS({"GA", 3}), -1, false,
                          T0 + 2, NULL, NULL),
                     HF_OK);
    assert_seat_record(f, "BALC-A-7", HF_SEAT_HELD, 4);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(pool(f, "GA")->held, 3);
    assert_consistent(f, T0 + 3);
}

/* ---- what a refused hold rests on ---- */

static uint64_t refused_change(fixture_t *f, const char *const *seats, uint32_t count,
                               hf_time_ms_t now)
{
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u9", "res_refused", seats, count, NULL, 0, -1, false, now, NULL,
                          &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    return detail.observed_change;
}

/* A hold refused for taken seats names the newest change their states rest on: one of the
 * records of the hold that took them, of an extension that keeps them past their old expiry,
 * of the order that sold them. Only the seats asked for count. */
static void test_refusal_names_the_change_it_rests_on(void **state)
{
    fixture_t *f = *state;
    uint64_t start = hf_core_change_count(f->core);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NULL, 0, -1, false, T0, NULL, NULL),
                     HF_OK);
    uint64_t first = hf_core_change_count(f->core);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NULL, 0, -1, false, T0, NULL, NULL),
                     HF_OK);
    uint64_t second = hf_core_change_count(f->core);
    uint64_t change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 1);
    assert_true(change > start && change <= first);
    assert_int_equal(refused_change(f, SEATS("FLOOR-A-1", "FLOOR-A-3"), T0 + 1), change);
    change = refused_change(f, SEATS("FLOOR-A-2", "FLOOR-A-1"), T0 + 1);
    assert_true(change > first && change <= second);
    /* Refusals change nothing. */
    assert_int_equal(hf_core_change_count(f->core), second);

    bool capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", -1, T0 + 2, &capped), HF_OK);
    uint64_t extended = hf_core_change_count(f->core);
    change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 3);
    assert_true(change > second && change <= extended);

    commit(f, "res_1", "u1", "ord_1", T0 + 4);
    uint64_t sold = hf_core_change_count(f->core);
    change = refused_change(f, SEATS("FLOOR-A-1"), T0 + 5);
    assert_true(change > extended && change <= sold);
    change = refused_change(f, SEATS("FLOOR-A-2"), T0 + 5);
    assert_true(change > first && change <= second);
    assert_consistent(f, T0 + 6);
}

/* A hold's, an order's and a seat's newest record: what a read of them rests on. Seat records
 * (on in these tests, as while a stream is open) may follow it, so it lies within each step. */
static void assert_within(uint64_t change, uint64_t after, uint64_t up_to)
{
    if (change <= after || change > up_to)
        fail_msg("change %llu outside (%llu, %llu]", (unsigned long long)change,
                 (unsigned long long)after, (unsigned long long)up_to);
}

static void test_hold_and_order_name_their_newest_change(void **state)
{
    fixture_t *f = *state;
    uint32_t kept, sold;
    /* A seat nothing has touched rests on its event's creation: "show" was made first (change
     * 1), "open" second. */
    const hf_event_t *show = event_of(f, "show");
    uint32_t seat;
    assert_true(hf_core_seat_find(show, "FLOOR-A-1", &seat));
    assert_int_equal(hf_core_seat_change(show, seat), 1);
    assert_int_equal(hf_core_seat_change(event_of(f, "open"), 0), 2);
    uint64_t start = hf_core_change_count(f->core);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NULL, 0, -1, false, T0, &kept, NULL),
                     HF_OK);
    uint64_t created = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), start, created);
    assert_within(hf_core_seat_change(show, seat), start, created);
    uint64_t kept_change = hf_core_hold_change(f->core, kept);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NULL, 0, -1, false, T0, &sold, NULL),
                     HF_OK);
    uint64_t second = hf_core_change_count(f->core);
    /* Another hold's records leave this one's alone. */
    assert_int_equal(hf_core_hold_change(f->core, kept), kept_change);
    bool capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", -1, T0 + 1, &capped), HF_OK);
    uint64_t extended = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), second, extended);
    /* A refusal about the hold changes nothing, and a repeated release emits nothing. */
    assert_int_equal(hf_core_release(f->core, "res_1", "u9", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 2), HF_OK);
    uint64_t released = hf_core_change_count(f->core);
    assert_within(hf_core_hold_change(f->core, kept), extended, released);
    kept_change = hf_core_hold_change(f->core, kept);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 3), HF_OK);
    assert_int_equal(hf_core_change_count(f->core), released);
    assert_int_equal(hf_core_hold_change(f->core, kept), kept_change);
    /* A commit: the hold's newest record is its confirmation, written after the order's. */
    uint32_t order = commit(f, "res_2", "u2", "ord_1", T0 + 4);
    uint64_t committed = hf_core_change_count(f->core);
    assert_within(hf_core_order_change(f->core, order), released, committed);
    assert_within(hf_core_hold_change(f->core, sold), hf_core_order_change(f->core, order),
                  committed);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_300", T0 + 5), HF_OK);
    assert_within(hf_core_order_change(f->core, order), committed, hf_core_change_count(f->core));
    /* Expiry is the hold's record too. */
    uint32_t lapsing;
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NULL, 0, 1000, false, T0 + 6,
                          &lapsing, NULL), HF_OK);
    uint64_t before = hf_core_change_count(f->core);
    hf_core_advance(f->core, T0 + 1006);
    assert_within(hf_core_hold_change(f->core, lapsing), before, hf_core_change_count(f->core));
    assert_true(hf_core_seat_find(show, "FLOOR-A-3", &seat));
    assert_within(hf_core_seat_change(show, seat), before, hf_core_change_count(f->core));
    assert_consistent(f, T0 + 1007);
}

/* ---- forgetting finished holds (hf_core_evict) and taking them back ---- */

/* Holds res_e1..res_eN of one seat each (S-A-1...) on "open", each released at once; returns
 * the change count after each release in changes[]. */
static void release_in_turn(fixture_t *f, uint32_t count, uint64_t *changes, uint32_t *indexes)
{
    for (uint32_t i = 0; i < count; i++) {
        char hold_id[16], seat_id[16];
        snprintf(hold_id, sizeof hold_id, "res_e%u", i + 1);
        snprintf(seat_id, sizeof seat_id, "S-A-%u", i + 1);
        const char *seats[] = {seat_id};
        assert_int_equal(hold_on(f, "open", "u1", hold_id, seats, 1, NULL, 0, -1, false,
                                 T0 + i, &indexes[i], NULL),
                         HF_OK);
        assert_int_equal(hf_core_release(f->core, hold_id, "u1", T0 + i), HF_OK);
        changes[i] = hf_core_change_count(f->core);
    }
}

/* The same with no finished hold kept: each is forgotten once all is durable. */
static void forget_in_turn(fixture_t *f, uint32_t count, uint32_t *indexes)
{
    uint64_t changes[8];
    assert_true(count <= 8);
    hf_core_set_finished_max(f->core, 0);
    release_in_turn(f, count, changes, indexes);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), count);
}

static void test_evict_oldest_beyond_max(void **state)
{
    fixture_t *f = *state;
    uint64_t changes[4];
    uint32_t indexes[4];
    hf_core_set_finished_max(f->core, 2);
    release_in_turn(f, 4, changes, indexes);
    assert_int_equal(hf_core_holds_finished(f->core), 4);
    /* Nothing is durable yet: nothing may be forgotten. */
    assert_int_equal(hf_core_evict(f->core, 0), 0);
    /* Only the first release is durable: only it may go, although two are too many. */
    assert_int_equal(hf_core_evict(f->core, changes[0]), 1);
    assert_null(hf_core_hold_find(f->core, "res_e1", NULL));
    assert_null(hf_core_hold_at(f->core, indexes[0]));
    assert_non_null(hf_core_hold_find(f->core, "res_e2", NULL));
    /* Everything durable: the oldest beyond two go, the two newest stay. */
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_null(hf_core_hold_find(f->core, "res_e2", NULL));
    assert_int_equal(hold_by_id(f, "res_e3")->status, HF_HOLD_RELEASED);
    assert_int_equal(hold_by_id(f, "res_e4")->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_holds_finished(f->core), 2);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 0);
    /* Forgetting changes no seat: versions stay as the hold and release left them. */
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, 3);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + 10);
}

static void test_evict_keeps_held_and_confirmed(void **state)
{
    fixture_t *f = *state;
    uint32_t held_index, confirmed_index, expired_index;
    hf_core_set_finished_max(f->core, 0);
    assert_int_equal(hold_on(f, "open", "u1", "res_held", SEATS("S-A-1"), NULL, 0, -1, false, T0,
                             &held_index, NULL),
                     HF_OK);
    assert_int_equal(hold_on(f, "open", "u2", "res_sold", SEATS("S-A-2"), NULL, 0, -1, false, T0,
                             &confirmed_index, NULL),
                     HF_OK);
    uint32_t order = commit(f, "res_sold", "u2", "ord_1", T0 + 1);
    assert_int_equal(hold_on(f, "open", "u3", "res_lapse", SEATS("S-A-3"), NULL, 0, 1000, false,
                             T0, &expired_index, NULL),
                     HF_OK);
    /* Expired by the clock: it joins the finished holds like a release. */
    assert_int_equal(hf_core_advance(f->core, T0 + 1000), 1);
    assert_int_equal(hf_core_holds_finished(f->core), 1);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_null(hf_core_hold_find(f->core, "res_lapse", NULL));
    assert_int_equal(hold_by_id(f, "res_held")->status, HF_HOLD_HELD);
    assert_int_equal(hold_by_id(f, "res_sold")->status, HF_HOLD_CONFIRMED);
    const hf_order_t *o = hf_core_order_at(f->core, order);
    assert_int_equal(o->hold, confirmed_index + 1);
    /* A repeated commit still answers its order. */
    uint32_t again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_sold", "u2", "ord_2", "pi_1", T0 + 1000, &again),
                     HF_OK);
    assert_int_equal(again, order);
    assert_consistent(f, T0 + 1000);
}

static void test_evict_slot_reuse(void **state)
{
    fixture_t *f = *state;
    uint32_t indexes[2];
    forget_in_turn(f, 2, indexes);
    /* A one-seat hold fits in a forgotten one-seat slot: the newest forgotten slot first. */
    uint32_t index;
    assert_int_equal(hold_on(f, "open", "u2", "res_new", SEATS("S-B-1"), NULL, 0, -1, false,
                             T0 + 10, &index, NULL),
                     HF_OK);
    assert_int_equal(index, indexes[1]);
    assert_null(hf_core_hold_find(f->core, "res_e2", NULL));
    const hf_hold_t *h = hold_by_id(f, "res_new");
    assert_int_equal(h->seat_count, 1);
    assert_int_equal(hf_core_items(f->core, h->item_offset)[0].index,
                     seat_on(f, "open", "S-B-1") - event_of(f, "open")->seats);
    /* Three seats and a pool line do not fit in the other one-seat slot: it gets new items. */
    assert_int_equal(hold_on(f, "open", "u2", "res_big", SEATS("S-B-2", "S-B-3", "S-B-4"),
                             POOLS({"P", 2}), -1, false, T0 + 11, &index, NULL),
                     HF_OK);
    assert_int_equal(index, indexes[0]);
    h = hold_by_id(f, "res_big");
    assert_int_equal(h->seat_count, 3);
    assert_int_equal(h->pool_count, 1);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[3].quantity, 2);
    assert_int_equal(h->total, 3 * 100 + 2 * 10);
    /* The first hold's items were not overwritten by the second's. */
    const hf_hold_t *small = hold_by_id(f, "res_new");
    assert_int_equal(hf_core_items(f->core, small->item_offset)[0].index,
                     seat_on(f, "open", "S-B-1") - event_of(f, "open")->seats);
    assert_consistent(f, T0 + 11);
}

/* An extension leaves a stale entry in the expiry heap; the hold is then released, forgotten
 * and its slot reused by a hold that expires later. The stale entry must not expire it. */
static void test_evict_stale_expiry_entry(void **state)
{
    fixture_t *f = *state;
    uint32_t first, second;
    hf_core_set_finished_max(f->core, 0);
    assert_int_equal(hold_on(f, "open", "u1", "res_a", SEATS("S-A-1"), NULL, 0, 1000, false, T0,
                             &first, NULL),
                     HF_OK);
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_a", "u1", 5000, T0, &capped), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_a", "u1", T0 + 1), HF_OK);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_int_equal(hold_on(f, "open", "u2", "res_b", SEATS("S-A-2"), NULL, 0, 9000, false,
                             T0 + 2, &second, NULL),
                     HF_OK);
    assert_int_equal(second, first);
    assert_int_equal(hf_core_advance(f->core, T0 + 5000), 0);
    assert_int_equal(hold_by_id(f, "res_b")->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 9002);
    assert_int_equal(hf_core_advance(f->core, T0 + 9002), 1);
    assert_int_equal(hold_by_id(f, "res_b")->status, HF_HOLD_EXPIRED);
    assert_consistent(f, T0 + 9002);
}

static void test_revive(void **state)
{
    fixture_t *f = *state;
    uint32_t indexes[1];
    forget_in_turn(f, 1, indexes);
    hf_counts_t counts = event_of(f, "open")->counts;
    uint32_t version = seat_on(f, "open", "S-A-1")->version;
    fx_sink_reset(&f->sink);
    const char *seats[] = {"S-A-1"};
    hf_stored_hold_t stored = {
        .request = {.event_id = "open", .user_id = "u1", .hold_id = "res_e1", .seat_ids = seats,
                    .seat_count = 1},
        .status = HF_HOLD_RELEASED, .created_at_ms = T0, .expires_at_ms = T0 + TTL, .total = 100};
    /* Only a finished hold can come back, and only one the core does not know. */
    uint32_t index = UINT32_MAX;
    stored.status = HF_HOLD_HELD;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_CONFIRMED;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_RELEASED;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_OK);
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    const hf_hold_t *h = hold_by_id(f, "res_e1");
    assert_int_equal(h->status, HF_HOLD_RELEASED);
    assert_int_equal(h->created_at_ms, T0);
    assert_int_equal(h->expires_at_ms, T0 + TTL);
    assert_int_equal(h->total, 100);
    assert_string_equal(hf_core_user_id(f->core, h->user), "u1");
    /* Nothing else moved, and nothing was emitted. */
    assert_no_mutation(f);
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, version);
    assert_memory_equal(&event_of(f, "open")->counts, &counts, sizeof counts);
    /* A release answers as before; it is kept as the newest finished hold, then forgotten
     * again like any other. */
    assert_int_equal(hf_core_release(f->core, "res_e1", "u1", T0 + 5), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_holds_finished(f->core), 1);
    assert_int_equal(hf_core_evict(f->core, 0), 1);
    assert_null(hf_core_hold_find(f->core, "res_e1", NULL));
    assert_consistent(f, T0 + 5);
}

/* A finished hold the restore does not keep: only its seats' versions count. */
static void test_restore_forgotten_hold(void **state)
{
    fixture_t *f = *state;
    const char *seats[] = {"S-A-1", "S-A-2"};
    hf_stored_hold_t stored = {
        .request = {.event_id = "open", .user_id = "u1", .hold_id = "res_old", .seat_ids = seats,
                    .seat_count = 2},
        .status = HF_HOLD_HELD, .created_at_ms = T0, .expires_at_ms = T0 + TTL, .total = 200};
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_CONFIRMED;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_EXPIRED;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_OK);
    stored.status = HF_HOLD_RELEASED;
    stored.request.hold_id = "res_older";
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_OK);
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, 5);
    assert_int_equal(seat_on(f, "open", "S-A-2")->version, 5);
    assert_int_equal(seat_on(f, "open", "S-A-3")->version, 1);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_AVAILABLE);
    assert_null(hf_core_hold_find(f->core, "res_old", NULL));
    assert_int_equal(hf_core_holds_finished(f->core), 0);
    assert_counts(event_of(f, "open")->counts, 40, 0, 0);
    /* Unknown seats are a corrupt store, as for a kept hold. */
    const char *unknown[] = {"S-Z-1"};
    stored.request.seat_ids = unknown;
    stored.request.seat_count = 1;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_SEAT_NOT_FOUND);
    assert_no_mutation(f);
    assert_consistent(f, T0);
}

/* ---- error codes ---- */

/* Every core error has its code and HTTP status in the engine's one table. */
static void test_error_codes(void **state)
{
    (void)state;
    static const struct { hf_error_t error; const char *code; int status; } table[] = {
        {HF_ERROR_INVALID_REQUEST, "invalid_request", 400},
        {HF_ERROR_EVENT_EXISTS, "event_exists", 409},
        {HF_ERROR_EVENT_NOT_FOUND, "event_not_found", 404},
        {HF_ERROR_SEAT_NOT_FOUND, "seat_not_found", 404},
        {HF_ERROR_SEATS_UNAVAILABLE, "seats_unavailable", 409},
        {HF_ERROR_POOL_NOT_FOUND, "pool_not_found", 404},
        {HF_ERROR_INSUFFICIENT_QUANTITY, "insufficient_quantity", 409},
        {HF_ERROR_USER_LIMIT_EXCEEDED, "user_limit_exceeded", 429},
        {HF_ERROR_HOLD_NOT_FOUND, "hold_not_found", 404},
        {HF_ERROR_NOT_OWNER, "not_owner", 403},
        {HF_ERROR_HOLD_EXPIRED, "hold_expired", 410},
        {HF_ERROR_HOLD_NOT_ACTIVE, "hold_not_active", 409},
        {HF_ERROR_ALREADY_CONFIRMED, "already_confirmed", 409},
        {HF_ERROR_HOLD_RELEASED, "hold_released", 409},
        {HF_ERROR_ORDER_NOT_FOUND, "order_not_found", 404},
        {HF_ERROR_SALES_CLOSED, "sales_closed", 409},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const hf_api_error_entry_t *entry = hf_errors_entry(hf_errors_from_core(table[i].error));
        assert_string_equal(entry->code, table[i].code);
        assert_int_equal(entry->status, table[i].status);
        assert_non_null(entry->message);
    }
    const hf_api_error_entry_t *capacity = hf_errors_entry(hf_errors_from_core(HF_ERROR_CAPACITY));
    assert_string_equal(capacity->code, "capacity_exceeded");
    assert_true(capacity->status >= 400);
}

/* ---- events ---- */

static void test_event_create_ok(void **state)
{
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

static void test_event_create_exists(void **state)
{
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
                                 const char *field2)
{
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

static void test_event_create_invalid(void **state)
{
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

static void test_event_too_many_seats(void **state)
{
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

/* ---- the paths and numbers of invalid definitions and requests (issue 18) ---- */

/* The path and fault the core gives, checked whole: a detail filled with garbage first, so a
 * member the core leaves unset shows. */
typedef struct expected_path {
    const char *field, *member;
    bool has_index, has_row;
    uint32_t index, row, other;
    uint8_t fault;
} expected_path_t;

static void assert_path(const hf_error_detail_t *detail, const expected_path_t *expected)
{
    assert_non_null(detail->field);
    assert_string_equal(detail->field, expected->field);
    if (expected->member) {
        assert_non_null(detail->member);
        assert_string_equal(detail->member, expected->member);
    } else {
        assert_null(detail->member);
    }
    assert_int_equal(detail->has_index, expected->has_index);
    assert_int_equal(detail->has_row, expected->has_row);
    if (expected->has_index) assert_int_equal(detail->index, expected->index);
    if (expected->has_row) assert_int_equal(detail->row, expected->row);
    assert_int_equal(detail->fault, expected->fault);
    if (expected->fault == HF_FAULT_DUPLICATE) assert_int_equal(detail->other, expected->other);
}

static hf_error_detail_t *garbage_detail(void)
{
    static hf_error_detail_t detail;
    memset(&detail, 0xa5, offsetof(hf_error_detail_t, items));
    return &detail;
}

static void expect_definition_path(fixture_t *f, fx_event_t *def, const expected_path_t *expected)
{
    hf_error_detail_t *detail = garbage_detail();
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_event_create(f->core, &def->definition, T0, detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, expected);
    assert_no_mutation(f);
    assert_null(hf_core_event(f->core, def->definition.id, NULL));
}

static void test_event_invalid_paths(void **state)
{
    fixture_t *f = *state;
    fx_event_t def;

    fx_event_init(&def, "dup_sections", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 1, 5);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_definition_path(f, &def, &(expected_path_t){"sections", "id", true, false, 2, 0, 0,
                                                        HF_FAULT_DUPLICATE});

    fx_event_init(&def, "dup_rows", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 3, 5);
    snprintf(def.rows[1][2].id, sizeof def.rows[1][2].id, "B");
    expect_definition_path(f, &def, &(expected_path_t){"sections", "id", true, true, 1, 2, 1,
                                                        HF_FAULT_DUPLICATE});

    fx_event_init(&def, "dup_pools", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    fx_event_pool(&def, "VIP", 5, 1);
    fx_event_pool(&def, "GA", 5, 1);
    expect_definition_path(f, &def, &(expected_path_t){"pools", "id", true, false, 2, 0, 0,
                                                        HF_FAULT_DUPLICATE});

    fx_event_init(&def, "zero_seats", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", 1, 2, 5);
    def.rows[1][1].seats = 0;
    expect_definition_path(f, &def, &(expected_path_t){"sections", "seats", true, true, 1, 1, 0,
                                                        HF_FAULT_VALUE});

    fx_event_init(&def, "bad_row_id", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 2, 5);
    snprintf(def.rows[0][1].id, sizeof def.rows[0][1].id, "B-1");
    expect_definition_path(f, &def, &(expected_path_t){"sections", "id", true, true, 0, 1, 0,
                                                        HF_FAULT_VALUE});

    fx_event_init(&def, "price", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    fx_event_section(&def, "T", -1, 1, 5);
    expect_definition_path(f, &def, &(expected_path_t){"sections", "price", true, false, 1, 0, 0,
                                                        HF_FAULT_VALUE});

    fx_event_init(&def, "no_rows", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 0, 5);
    expect_definition_path(f, &def, &(expected_path_t){"sections", "rows", true, false, 0, 0, 0,
                                                        HF_FAULT_VALUE});

    fx_event_init(&def, "capacity", TTL, MAX_HOLD, 0, 10);
    fx_event_pool(&def, "GA", 5, 1);
    fx_event_pool(&def, "VIP", -5, 1);
    expect_definition_path(f, &def, &(expected_path_t){"pools", "capacity", true, false, 1, 0, 0,
                                                        HF_FAULT_VALUE});

    fx_event_init(&def, "empty", TTL, MAX_HOLD, 0, 10);
    expect_definition_path(f, &def, &(expected_path_t){"sections", NULL, false, false, 0, 0, 0,
                                                        HF_FAULT_NO_INVENTORY});

    fx_event_init(&def, "ttl", 0, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 1, 5);
    expect_definition_path(f, &def, &(expected_path_t){"hold_ttl_s", NULL, false, false, 0, 0, 0,
                                                        HF_FAULT_VALUE});
}

static void test_event_invalid_totals(void **state)
{
    fixture_t *f = *state;
    fx_event_t def;
    fx_event_init(&def, "seats", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 1, 2, HF_EVENT_SEATS_MAX / 2);
    fx_event_section(&def, "T", 1, 1, 3);
    expect_definition_path(f, &def, &(expected_path_t){"sections", NULL, false, false, 0, 0, 0,
                                                        HF_FAULT_EVENT_SEATS});
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
    assert_path(detail, &(expected_path_t){"sections", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_EVENT_ROWS});
    assert_int_equal(detail->requested, (int64_t)sections * HF_SECTION_ROWS_MAX);
    assert_int_equal(detail->limit, HF_EVENT_ROWS_MAX);
    free(many);
    free(rows);
}

/* A hold on "show" (max_seats_per_user 8, max_seats_per_hold 10) with a garbage detail. */
static hf_error_t hold_detailed(fixture_t *f, const char *user, const char *hold_id,
                                const char *const *seats, uint32_t seat_count,
                                const hf_pool_request_t *pools, uint32_t pool_count,
                                int64_t ttl_ms, bool replace, hf_error_detail_t **detail)
{
    hf_hold_request_t request = {
        .event_id = "show", .user_id = user, .hold_id = hold_id,
        .seat_ids = seats, .seat_count = seat_count,
        .pools = pools, .pool_count = pool_count,
        .ttl_ms = ttl_ms, .replace_existing = replace,
    };
    *detail = garbage_detail();
    uint32_t index;
    return hf_core_hold(f->core, &request, T0, &index, *detail);
}

static void test_hold_invalid_paths(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t *detail;
    assert_int_equal(hold_detailed(f, "u1", "res_1",
                                   SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-2"),
                                   NO_POOLS, -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"seats", NULL, true, false, 3, 0, 1,
                                          HF_FAULT_DUPLICATE});
    assert_int_equal(hold_detailed(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 1}, {"VIP", 0}), -1,
                                   false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"pools", NULL, true, false, 1, 0, 0, HF_FAULT_VALUE});
    assert_int_equal(hold_detailed(f, "u1", "res_1",
                                   SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4",
                                         "FLOOR-A-5", "FLOOR-A-6", "FLOOR-A-7", "FLOOR-A-8"),
                                   POOLS({"GA", 3}), -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"seats", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_HOLD_ITEMS});
    assert_int_equal(detail->requested, 11);
    assert_int_equal(detail->limit, 10);
    assert_int_equal(hold_detailed(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 11}), -1, false,
                                   &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"pools", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_HOLD_ITEMS});
    assert_int_equal(hold_detailed(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, MAX_HOLD + 1,
                                   false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"ttl_s", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_HOLD_TTL});
    assert_int_equal(detail->requested, MAX_HOLD + 1);
    assert_int_equal(detail->limit, MAX_HOLD);
    assert_int_equal(hold_detailed(f, "u1", "res_1", NO_SEATS, NO_POOLS, -1, false, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"seats", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_NO_ITEMS});
    assert_int_equal(hold_detailed(f, NULL, "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false,
                                   &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_path(detail, &(expected_path_t){"user_id", NULL, false, false, 0, 0, 0,
                                          HF_FAULT_REQUIRED});
    assert_int_equal(hf_core_holds_active(f->core), 0);
}

static void test_user_limit_numbers(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t *detail;
    /* 4 bought (2 seats, 2 units: pool units count one each), 2 held: 6 of 8. */
    assert_int_equal(hold_detailed(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"),
                                   POOLS({"GA", 2}), -1, false, &detail),
                     HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    assert_int_equal(hold_detailed(f, "u1", "res_2", SEATS("FLOOR-A-3", "FLOOR-A-4"), NO_POOLS,
                                   -1, false, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold_detailed(f, "u1", "res_3", SEATS("FLOOR-B-1", "FLOOR-B-2"),
                                   POOLS({"GA", 1}), -1, false, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(detail->limit, 8);
    assert_int_equal(detail->current, 6);
    assert_int_equal(detail->requested, 3);
    /* replace_existing: the held 2 are released in the same step, so they do not count. */
    assert_int_equal(hold_detailed(f, "u1", "res_3",
                                   SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3", "FLOOR-B-4",
                                         "FLOOR-B-5"),
                                   NO_POOLS, -1, true, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(detail->limit, 8);
    assert_int_equal(detail->current, 4);
    assert_int_equal(detail->requested, 5);
    assert_no_mutation(f);
    /* The limit itself passes. */
    assert_int_equal(hold_detailed(f, "u1", "res_3", SEATS("FLOOR-B-1", "FLOOR-B-2"), NO_POOLS,
                                   -1, false, &detail),
                     HF_OK);
}

/* ---- seat ids ---- */

static void test_seat_find_parsing(void **state)
{
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
        "FLOOR-A-0", "FLOOR-A-31", "FLOOR-A-01", "FLOOR-A-", "FLOOR--1", "NOPE-A-1",
        "FLOOR-A-1x", "", "FLOOR", "FLOOR-A", "-A-1", "FLOOR-A-+1", "FLOOR-A--1", "FLOOR-A-1-",
        "FLOOR-A- 1", "FLOOR-A-1 ", "floor-A-1", "FLOOR-C-1", "BALC-A-41", "FLOOR-A-99999999",
        "FLOOR-A-4294967297", "FLOOR-A-18446744073709551617", "FLOOR-A-0x1", "FLOOR-A-1.0",
        "FLOOR-A-1-1", "FLOOR-BALC-A-1", "BALC-B-1", "FLOOR-A-00",
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

static void test_seat_id_round_trip(void **state)
{
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

static void test_pool_find(void **state)
{
    fixture_t *f = *state;
    const hf_event_t *event = event_of(f, "show");
    assert_int_equal(hf_core_pool_find(event, "GA"), 0);
    assert_int_equal(hf_core_pool_find(event, "VIP"), 1);
    assert_int_equal(hf_core_pool_find(event, "ga"), -1);
    assert_int_equal(hf_core_pool_find(event, ""), -1);
    assert_int_equal(hf_core_pool_find(event, "GAX"), -1);
}

/* ---- a million seats ---- */

static void test_million_seats(void **state)
{
    fixture_t *f = *state;
    enum { ROWS = 1000, SEATS_PER_ROW = 1000 };
    hf_row_definition_t *rows = calloc(ROWS, sizeof *rows);
    for (uint32_t r = 0; r < ROWS; r++) {
        snprintf(rows[r].id, sizeof rows[r].id, "R%u", r);
        rows[r].seats = SEATS_PER_ROW;
    }
    hf_section_definition_t section = {.id = "MAIN", .price = 7, .row_count = ROWS, .rows = rows};
    hf_event_definition_t definition = {
        .id = "million", .name = "Million", .currency = "EUR", .hold_ttl_ms = TTL,
        .max_hold_ms = MAX_HOLD, .max_seats_per_user = 0, .max_seats_per_hold = 10,
        .section_count = 1, .sections = &section,
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
    hf_section_definition_t big_section = {.id = "BIG", .price = 1, .row_count = 1,
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

/* ---- holds ---- */

static void test_hold_seats_ok(void **state)
{
    fixture_t *f = *state;
    uint32_t index = UINT32_MAX;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0 + 10, &index, &detail),
                     HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_non_null(h);
    assert_ptr_equal(hold_by_id(f, "res_1"), h);
    assert_string_equal(h->id, "res_1");
    assert_int_equal(h->status, HF_HOLD_HELD);
    assert_int_equal(h->order, 0);
    assert_string_equal(hf_core_user_id(f->core, h->user), "u1");
    assert_string_equal(hf_core_event_at(f->core, h->event)->id, "show");
    assert_int_equal(h->created_at_ms, T0 + 10);
    assert_int_equal(h->expires_at_ms, T0 + 10 + TTL);
    assert_int_equal(h->total, 2 * FLOOR_PRICE);
    assert_int_equal(h->seat_count, 2);
    assert_int_equal(h->pool_count, 0);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_non_null(items);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[1].quantity, 0);
    assert_true((items[0].index == 0 && items[1].index == 1) ||
                (items[0].index == 1 && items[1].index == 0));

    for (int i = 0; i < 2; i++) {
        const hf_seat_t *s = seat(f, i == 0 ? "FLOOR-A-1" : "FLOOR-A-2");
        assert_int_equal(s->status, HF_SEAT_HELD);
        assert_int_equal(s->version, 2);
        assert_int_equal(s->owner, index + 1);
    }
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 1);
    const hf_event_t *event = event_of(f, "show");
    assert_counts(event->counts, 98, 2, 0);
    assert_counts(event->sections[0].counts, 58, 2, 0);
    assert_counts(event->sections[1].counts, 40, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 1);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 10 + TTL);

    assert_int_equal(f->sink.total, 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_CREATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_string_equal(record->event_id, "show");
    assert_string_equal(record->user_id, "u1");
    assert_int_equal(record->total, 2 * FLOOR_PRICE);
    assert_int_equal(record->at_ms, T0 + 10);
    assert_int_equal(record->expires_at_ms, T0 + 10 + TTL);
    assert_int_equal(record->status, HF_HOLD_HELD);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_HELD, 2);
    assert_seat_record(f, "FLOOR-A-2", HF_SEAT_HELD, 2);
    assert_consistent(f, T0 + 10);
}

static void test_hold_pools_ok(void **state)
{
    fixture_t *f = *state;
    uint32_t index = UINT32_MAX;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("BALC-A-7"), POOLS({"GA", 3}, {"VIP", 1}), -1,
                          false, T0, &index, &detail),
                     HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->total, BALC_PRICE + 3 * GA_PRICE + VIP_PRICE);
    assert_int_equal(h->seat_count, 1);
    assert_int_equal(h->pool_count, 2);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[0].index, 66);
    uint32_t ga = items[1].index == 0 ? 1 : 2, vip = ga == 1 ? 2 : 1;
    assert_int_equal(items[ga].index, 0);
    assert_int_equal(items[ga].quantity, 3);
    assert_int_equal(items[vip].index, 1);
    assert_int_equal(items[vip].quantity, 1);
    assert_int_equal(pool(f, "GA")->held, 3);
    assert_int_equal(pool(f, "GA")->sold, 0);
    assert_int_equal(pool(f, "VIP")->held, 1);
    assert_counts(event_of(f, "show")->counts, 99, 1, 0);
    assert_counts(event_of(f, "show")->sections[1].counts, 39, 1, 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 2);
    assert_seat_record(f, "BALC-A-7", HF_SEAT_HELD, 2);
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *r = &f->sink.records[i];
        if (r->type != HF_MUTATION_POOL) continue;
        bool is_ga = strcmp(r->pool_id, "GA") == 0;
        assert_int_equal(r->held, is_ga ? 3 : 1);
        assert_int_equal(r->sold, 0);
        assert_int_equal(r->available, is_ga ? 7 : 1);
    }

    /* Pools only. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u2", "res_2", NO_SEATS, POOLS({"GA", 7}), -1, false, T0, &index,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->total, 7 * GA_PRICE);
    assert_int_equal(pool(f, "GA")->held, 10);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    assert_consistent(f, T0);
}

static void test_hold_ttl(void **state)
{
    fixture_t *f = *state;
    uint32_t index;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, &index,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1000);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, MAX_HOLD, false, T0,
                          &index, &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + MAX_HOLD);
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 1, false, T0, &index,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 1);
}

static void test_hold_event_not_found(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold_on(f, "nope", "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0,
                             NULL, &detail),
                     HF_ERROR_EVENT_NOT_FOUND);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_1", NULL));
    assert_int_equal(hf_core_holds_active(f->core), 0);
}

static void test_hold_seat_not_found(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1",
                          SEATS("FLOOR-A-1", "NOPE-A-1", "FLOOR-A-31", "FLOOR-A-2", "FLOOR-A-01"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_items(f, 3, (const uint32_t[]){1, 2, 4}, &detail);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_1", NULL));
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 1);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
}

static void test_hold_seats_unavailable(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u3", "res_s", SEATS("BALC-A-1"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    commit(f, "res_s", "u3", "ord_s", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u2", "res_2",
                          SEATS("FLOOR-A-3", "FLOOR-A-2", "FLOOR-A-1", "BALC-A-1", "BALC-A-2"),
                          POOLS({"GA", 1}), -1, false, T0 + 2, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 3, (const uint32_t[]){1, 2, 3}, &detail);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_2", NULL));
    assert_int_equal(seat(f, "FLOOR-A-3")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 1);
    assert_int_equal(seat(f, "BALC-A-2")->version, 1);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 97, 2, 1);
    /* The holder itself cannot hold its own seat twice either (without replace_existing). */
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 3, NULL,
                          &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 1, (const uint32_t[]){0}, &detail);
    assert_consistent(f, T0 + 3);
}

static void test_hold_pool_not_found(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}, {"NOPE", 1}), -1,
                          false, T0, NULL, &detail),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(detail.pool, 1);
    assert_no_mutation(f);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    /* Pools on an event without pools. */
    assert_int_equal(hold_on(f, "open", "u1", "res_2", NO_SEATS, POOLS({"GA", 1}), -1, false, T0,
                             NULL, &detail),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(detail.pool, 0);
}

static void test_hold_insufficient_quantity(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", NO_SEATS, POOLS({"GA", 6}), -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_2", NO_SEATS, POOLS({"GA", 5}), -1, false, T0, NULL,
                          &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 4);
    assert_int_equal(hold(f, "u2", "res_3", SEATS("FLOOR-A-1"), POOLS({"VIP", 1}, {"GA", 5}), -1,
                          false, T0, NULL, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 1);
    assert_int_equal(detail.available, 4);
    assert_int_equal(hold(f, "u2", "res_4", NO_SEATS, POOLS({"VIP", 3}), -1, false, T0, NULL,
                          &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 2);
    assert_int_equal(pool(f, "GA")->held, 6);
    assert_int_equal(pool(f, "VIP")->held, 0);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    /* Sold units count too; exactly the rest is fine. */
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u2", "res_5", NO_SEATS, POOLS({"GA", 5}), -1, false, T0 + 2, NULL,
                          &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.available, 4);
    assert_no_mutation(f);
    assert_int_equal(hold(f, "u2", "res_6", NO_SEATS, POOLS({"GA", 4}), -1, false, T0 + 2, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(pool(f, "GA")->held, 4);
    assert_int_equal(pool(f, "GA")->sold, 6);
    assert_consistent(f, T0 + 2);
}

static void test_hold_user_limit(void **state)
{
    fixture_t *f = *state; /* show: at most 8 per user */
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1",
                          SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-B-1", "FLOOR-B-2"), POOLS({"GA", 1}), -1,
                          false, T0 + 2, NULL, &detail),
                     HF_OK); /* 5 bought + 3 = 8 */
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-B-3"), NO_POOLS, -1, false, T0 + 3, NULL,
                          &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(hold(f, "u1", "res_4", NO_SEATS, POOLS({"GA", 1}), -1, false, T0 + 3, NULL,
                          &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-B-3")->status, HF_SEAT_AVAILABLE);
    /* Another user, another event: not affected. */
    assert_int_equal(hold(f, "u2", "res_5", SEATS("FLOOR-B-3"), NO_POOLS, -1, false, T0 + 3, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_6", SEATS("S-A-1"), NO_POOLS, -1, false,
                             T0 + 3, NULL, &detail),
                     HF_OK);
    /* Released and expired holds and cancelled orders stop counting. */
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 4), HF_OK);
    assert_int_equal(hold(f, "u1", "res_7", SEATS("FLOOR-B-4", "FLOOR-B-5", "FLOOR-B-6"), NO_POOLS,
                          1000, false, T0 + 5, NULL, &detail),
                     HF_OK); /* 5 + 3 = 8 */
    assert_int_equal(hold(f, "u1", "res_8", SEATS("FLOOR-B-7"), NO_POOLS, -1, false, T0 + 6, NULL,
                          &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    hf_core_advance(f->core, T0 + 5 + 1000); /* the request's advance: res_7 lapses */
    assert_int_equal(hold(f, "u1", "res_9", SEATS("FLOOR-B-7", "FLOOR-B-8", "FLOOR-B-9"), NO_POOLS,
                          -1, false, T0 + 5 + 1000, NULL, &detail),
                     HF_OK); /* res_7 lapsed at T0 + 1005 */
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1422", T0 + 1006), HF_OK);
    assert_int_equal(hold(f, "u1", "res_10",
                          SEATS("BALC-A-1", "BALC-A-2", "BALC-A-3", "BALC-A-4", "BALC-A-5"),
                          NO_POOLS, -1, false, T0 + 1007, NULL, &detail),
                     HF_OK); /* 3 + 5 = 8 */
    /* A single request above the limit. */
    assert_int_equal(hold(f, "u9", "res_11",
                          SEATS("BALC-A-11", "BALC-A-12", "BALC-A-13", "BALC-A-14", "BALC-A-15",
                                "BALC-A-16", "BALC-A-17", "BALC-A-18", "BALC-A-19"),
                          NO_POOLS, -1, false, T0 + 1007, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_consistent(f, T0 + 1007);
}

static void expect_hold_invalid(fixture_t *f, const char *event_id, const char *user,
                                const char *const *seats, uint32_t seat_count,
                                const hf_pool_request_t *pools, uint32_t pool_count,
                                int64_t ttl_ms, const char *field1, const char *field2)
{
    hf_error_detail_t detail;
    fx_sink_reset(&f->sink);
    hf_error_t error = hold_on(f, event_id, user, "res_bad", seats, seat_count, pools, pool_count,
                               ttl_ms, false, T0, NULL, &detail);
    if (error != HF_ERROR_INVALID_REQUEST)
        fail_msg("expected invalid_request (%s), got %s", field1, fx_error_code(error));
    if (detail.field == NULL) fail_msg("no detail.field, expected %s", field1);
    if (strcmp(detail.field, field1) != 0 && (field2 == NULL || strcmp(detail.field, field2) != 0))
        fail_msg("field \"%s\", expected \"%s\"%s%s", detail.field, field1, field2 ? " or " : "",
                 field2 ? field2 : "");
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_bad", NULL));
}

typedef struct hashed_id {
    uint32_t hash, number;
} hashed_id_t;

static int compare_hashed_ids(const void *a, const void *b)
{
    const hashed_id_t *left = a, *right = b;
    if (left->hash != right->hash) return left->hash < right->hash ? -1 : 1;
    return (left->number > right->number) - (left->number < right->number);
}

/* Two different ids made by format (one %08x in it, so both have one length) whose hashes
 * collide (a birthday search over 2^18 ids finds some 8 such pairs): only then does a lookup
 * in an index of hashes compare the ids themselves. */
static void colliding_ids(const char *format, char first[48], char second[48])
{
    const uint32_t count = 1u << 18;
    hashed_id_t *ids = malloc(count * sizeof *ids);
    assert_non_null(ids);
    char id[48];
    for (uint32_t i = 0; i < count; i++) {
        int length = snprintf(id, sizeof id, format, i);
        ids[i] = (hashed_id_t){hf_map_hash(id, (size_t)length), i};
    }
    qsort(ids, count, sizeof *ids, compare_hashed_ids);
    uint32_t i = 1;
    while (i < count && ids[i].hash != ids[i - 1].hash) i++;
    assert_true(i < count);
    snprintf(first, 48, format, ids[i - 1].number);
    snprintf(second, 48, format, ids[i].number);
    free(ids);
}

/* Users whose ids share their first 16 bytes (what a user's record keeps of the id) and
 * their hash are still different users: each has its own per-user limit, and only the owner
 * may release. */
static void test_user_ids_sharing_a_prefix(void **state)
{
    fixture_t *f = *state; /* show: at most 8 per user */
    char first[48], second[48];
    colliding_ids("customer-0000000000000000-%08x", first, second);
    const char *longer = "customer-0000000000000000-000000000";
    const char *shorter = "customer-0000000";
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, first, "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3",
                                                   "FLOOR-A-4", "FLOOR-A-5"),
                          NO_POOLS, -1, false, T0, NULL, &detail),
                     HF_OK);
    const char *others[] = {second, longer, shorter};
    const char *hold_ids[] = {"res_2", "res_3", "res_4"};
    for (int i = 0; i < 3; i++) {
        char seat_ids[5][16];
        const char *seats[5];
        for (int s = 0; s < 5; s++) {
            snprintf(seat_ids[s], sizeof seat_ids[s], "FLOOR-%c-%d", i == 0 ? 'B' : 'A', 6 + 5 * i + s);
            seats[s] = seat_ids[s];
        }
        /* 5 + 5 would pass a user's limit of 8 if the ids were taken for one user. */
        assert_int_equal(hold(f, others[i], hold_ids[i], seats, 5, NO_POOLS, -1, false, T0 + 1,
                              &index, &detail),
                         HF_OK);
        assert_string_equal(hf_core_user_id(f->core, hf_core_hold_at(f->core, index)->user),
                            others[i]);
        assert_int_equal(hf_core_release(f->core, "res_1", others[i], T0 + 2), HF_ERROR_NOT_OWNER);
    }
    assert_int_equal(hold(f, first, "res_5", SEATS("FLOOR-B-1", "FLOOR-B-2", "FLOOR-B-3",
                                                   "FLOOR-B-4"),
                          NO_POOLS, -1, false, T0 + 3, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(hf_core_release(f->core, "res_1", first, T0 + 4), HF_OK);
    assert_null(hf_core_check(f->core, T0 + 4));
}

/* Orders whose ids collide in the id index are still two orders, each found by its own id;
 * the same for holds. */
static void test_order_and_hold_ids_colliding(void **state)
{
    fixture_t *f = *state;
    char first_hold[48], second_hold[48], first_order[48], second_order[48];
    colliding_ids("res_00000000000000000000%08x", first_hold, second_hold);
    colliding_ids("ord_00000000000000000000%08x", first_order, second_order);
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", first_hold, SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0,
                          NULL, &detail),
                     HF_OK);
    assert_null(hf_core_hold_find(f->core, second_hold, NULL));
    assert_int_equal(hold(f, "u2", second_hold, SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0,
                          NULL, &detail),
                     HF_OK);
    uint32_t first = commit(f, first_hold, "u1", first_order, T0 + 1);
    assert_null(hf_core_order_find(f->core, second_order, NULL));
    uint32_t second = commit(f, second_hold, "u2", second_order, T0 + 1);
    assert_int_not_equal(first, second);
    uint32_t found;
    assert_non_null(hf_core_order_find(f->core, first_order, &found));
    assert_int_equal(found, first);
    assert_non_null(hf_core_order_find(f->core, second_order, &found));
    assert_int_equal(found, second);
    assert_int_equal(hf_core_cancel(f->core, second_order, "u1", "ref_1554", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_cancel(f->core, second_order, "u2", "ref_1555", T0 + 2), HF_OK);
    assert_int_equal(hf_core_order_at(f->core, first)->status, HF_ORDER_CONFIRMED);
    assert_null(hf_core_check(f->core, T0 + 2));
}

static void test_hold_invalid_request(void **state)
{
    fixture_t *f = *state;
    expect_hold_invalid(f, "show", "u1", NO_SEATS, NO_POOLS, -1, "seats", "pools");
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-1"), NO_POOLS,
                        -1, "seats", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}, {"GA", 2}), -1,
                        "pools", NULL);
    expect_hold_invalid(f, "open", "u1",
                        SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7",
                              "S-A-8", "S-A-9", "S-A-10", "S-A-11"),
                        NO_POOLS, -1, "seats", "pools");
    /* Pool units count one each: 9 seats + 2 units = 11 > 10. */
    expect_hold_invalid(f, "open", "u1",
                        SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7",
                              "S-A-8", "S-A-9"),
                        POOLS({"P", 2}), -1, "pools", "seats");
    expect_hold_invalid(f, "open", "u1", NO_SEATS, POOLS({"P", 11}), -1, "pools", "seats");
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), NO_POOLS, 0, "ttl_s", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), NO_POOLS, MAX_HOLD + 1, "ttl_s",
                        NULL);
    expect_hold_invalid(f, "show", "", SEATS("FLOOR-A-1"), NO_POOLS, -1, "user_id", NULL);
    expect_hold_invalid(f, "show", "u1", SEATS("FLOOR-A-1"), POOLS({"GA", 0}), -1, "pools", NULL);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 1);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    /* Exactly max_seats_per_hold items is fine. */
    hf_error_detail_t detail;
    assert_int_equal(hold_on(f, "open", "u1", "res_ok",
                             SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7",
                                   "S-A-8"),
                             POOLS({"P", 2}), -1, false, T0, NULL, &detail),
                     HF_OK);
    assert_consistent(f, T0);
}

/* A user's held holds on an event form a list that holds leave from anywhere (the middle, the
 * front, the back): replace_existing then releases exactly the ones still held, newest first. */
static void test_hold_replace_after_releases(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h[5];
    const char *ids[5] = {"res_a", "res_b", "res_c", "res_d", "res_e"};
    const char *seats[5] = {"FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-3", "FLOOR-A-4", "FLOOR-A-5"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(hold(f, "u1", ids[i], SEATS(seats[i]), NO_POOLS, -1, false, T0, &h[i],
                              &detail),
                         HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_c", "u1", T0 + 1), HF_OK); /* middle */
    assert_int_equal(hf_core_release(f->core, "res_a", "u1", T0 + 1), HF_OK); /* front */
    assert_int_equal(hf_core_release(f->core, "res_e", "u1", T0 + 1), HF_OK); /* back */
    uint32_t last;
    assert_int_equal(hold(f, "u1", "res_f", SEATS("FLOOR-A-6"), NO_POOLS, -1, false, T0 + 2,
                          &last, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_g", SEATS("FLOOR-A-4", "FLOOR-A-7"), NO_POOLS, -1, true,
                          T0 + 3, NULL, &detail),
                     HF_OK);
    const char *released[3] = {"res_f", "res_d", "res_b"};
    size_t seen = 0;
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *record = &f->sink.records[i];
        if (record->type != HF_MUTATION_HOLD_UPDATE) continue;
        assert_true(seen < 3);
        assert_string_equal(record->hold_id, released[seen]);
        assert_int_equal(record->status, HF_HOLD_RELEASED);
        seen++;
    }
    assert_int_equal(seen, 3);
    assert_int_equal(hf_core_hold_at(f->core, h[1])->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h[3])->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, last)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_holds_active(f->core), 1);
    assert_null(hf_core_check(f->core, T0 + 3));
}

static void test_hold_replace_existing(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h1, h2, h3, h4, h5;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), NO_POOLS, -1, false,
                          T0, &h1, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u1", "res_2", NO_SEATS, POOLS({"GA", 2}), -1, false, T0, &h2,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0, &h3,
                          &detail),
                     HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_4", SEATS("S-A-1"), NO_POOLS, -1, false, T0,
                             &h4, &detail),
                     HF_OK);
    /* A failing replace changes nothing. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_x", SEATS("FLOOR-A-2", "FLOOR-A-3"), NO_POOLS, -1, true,
                          T0 + 1, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_items(f, 1, (const uint32_t[]){1}, &detail); /* only u2's seat */
    assert_no_mutation(f);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_hold_at(f->core, h2)->status, HF_HOLD_HELD);

    /* u1 holds 2 seats + 2 units: 8 more would pass the limit, but they are replaced. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hold(f, "u1", "res_5",
                          SEATS("FLOOR-A-2", "FLOOR-A-5", "FLOOR-A-6", "FLOOR-A-7", "FLOOR-A-8",
                                "FLOOR-A-9"),
                          POOLS({"GA", 2}), -1, true, T0 + 2, &h5, &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h2)->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_hold_at(f->core, h3)->status, HF_HOLD_HELD); /* another user */
    assert_int_equal(hf_core_hold_at(f->core, h4)->status, HF_HOLD_HELD); /* another event */
    assert_int_equal(hf_core_hold_at(f->core, h5)->status, HF_HOLD_HELD);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_HELD);
    assert_int_equal(seat(f, "FLOOR-A-2")->owner, h5 + 1);
    /* Released then held again: two status changes, or one move without a change. */
    uint32_t version = seat(f, "FLOOR-A-2")->version;
    if (version != 4 && version != 2) fail_msg("FLOOR-A-2 version %u after replace", version);
    assert_int_equal(seat(f, "FLOOR-A-5")->version, 2);
    assert_int_equal(pool(f, "GA")->held, 2);
    assert_counts(event_of(f, "show")->counts, 93, 7, 0);
    assert_int_equal(hf_core_holds_active(f->core), 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], version == 4 ? 8 : 6);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "FLOOR-A-2", HF_SEAT_HELD, version);
    assert_seat_record(f, "FLOOR-A-9", HF_SEAT_HELD, 2);
    /* replace_existing with nothing to replace is a plain hold. */
    assert_int_equal(hold(f, "u7", "res_6", SEATS("BALC-A-1"), NO_POOLS, -1, true, T0 + 3, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h5)->status, HF_HOLD_HELD);
    assert_consistent(f, T0 + 3);
}

/* ---- expiry ---- */

static void test_expiry_advance(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "BALC-A-1"), POOLS({"GA", 2}), 1000,
                          false, T0, &index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_advance(f->core, T0 + 999), 0);
    assert_no_mutation(f);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 1000);
    assert_int_equal(hf_core_advance(f->core, T0 + 1000), 1);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->status, HF_HOLD_EXPIRED);
    assert_int_equal(h->expires_at_ms, T0 + 1000);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "BALC-A-1")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_counts(event_of(f, "show")->sections[0].counts, 60, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 4);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_EXPIRED);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "BALC-A-1", HF_SEAT_AVAILABLE, 3);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_advance(f->core, T0 + 5000), 0);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 5000);
}

static void test_expiry_on_command(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t h1, h2;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), 1000, false, T0,
                          &h1, &detail),
                     HF_OK);
    /* At expires_at exactly, with no sweep before: the request's advance (the engine makes one
     * before each request's command) frees the seat and the units at once. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), -1, false,
                          T0 + 1000, &h2, &detail),
                     HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, h1)->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, h2 + 1);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_int_equal(pool(f, "VIP")->held, 2);
    assert_counts(event_of(f, "show")->counts, 99, 1, 0);
    assert_consistent(f, T0 + 1000);
    /* A failing command's request expires too. */
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, 500, false, T0 + 1000,
                          NULL, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    hf_core_advance(f->core, T0 + 1500);
    assert_int_equal(hf_core_cancel(f->core, "ord_none", "u3", "ref_1767", T0 + 1500),
                     HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hold_by_id(f, "res_3")->status, HF_HOLD_EXPIRED);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 1);
    assert_consistent(f, T0 + 1500);
}

static void test_next_expiry(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 5000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, 3000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 4000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 3000);
    assert_int_equal(hf_core_release(f->core, "res_2", "u2", T0 + 1), HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 4000);
    commit(f, "res_3", "u3", "ord_3", T0 + 2);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 5000);
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 10000, T0 + 3, &capped), HF_OK);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 10003);
    assert_int_equal(hf_core_advance(f->core, T0 + 10003), 1);
    assert_int_equal(hf_core_next_expiry(f->core), INT64_MAX);
}

/* ---- extend ---- */

static void test_extend_ok(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    bool capped = true;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, &index,
                          &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    /* Shorter than what is left: never earlier. */
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 300000, T0 + 100000, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + TTL);
    /* Longer. */
    capped = true;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000000, T0 + 100000, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + 1100000);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_non_null(record);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->expires_at_ms, T0 + 1100000);
    assert_int_equal(record->status, HF_HOLD_HELD);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */
    /* Any positive ttl is accepted, the cap applies. */
    capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 100 * MAX_HOLD, T0 + 1000000, &capped),
                     HF_OK);
    assert_true(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, T0 + MAX_HOLD);
    /* Exactly at the cap is not cut. */
    const hf_time_ms_t t1 = T0 + 1000000;
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, t1, &index,
                          &detail),
                     HF_OK);
    capped = true;
    assert_int_equal(hf_core_extend(f->core, "res_2", "u1", MAX_HOLD - 5000, t1 + 5000, &capped),
                     HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, t1 + MAX_HOLD);
    /* Default ttl: the event's hold_ttl. */
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, 1000, false, t1 + 5000,
                          &index, &detail),
                     HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_3", "u1", -1, t1 + 5500, &capped), HF_OK);
    assert_false(capped);
    assert_int_equal(hf_core_hold_at(f->core, index)->expires_at_ms, t1 + 5500 + TTL);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_HELD);
    assert_int_equal(seat(f, "FLOOR-A-3")->version, 2);
    assert_consistent(f, t1 + 5500);
    assert_int_equal(next_expiry, T0 + 1100000);
}

static void test_extend_errors(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    bool capped;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u1", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 1), HF_OK);
    commit(f, "res_3", "u1", "ord_3", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_extend(f->core, "res_none", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u2", 1000, T0 + 2, &capped),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_extend(f->core, "res_1", "ghost", 1000, T0 + 2, &capped),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_extend(f->core, "res_2", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_ACTIVE);
    assert_int_equal(hf_core_extend(f->core, "res_3", "u1", 1000, T0 + 2, &capped),
                     HF_ERROR_HOLD_NOT_ACTIVE);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_1")->expires_at_ms, T0 + 1000);
    /* At expires_at exactly, before any sweep: the request's advance expires it. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000, T0 + 1000, &capped),
                     HF_ERROR_HOLD_EXPIRED);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(hold_by_id(f, "res_1")->expires_at_ms, T0 + 1000);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_extend(f->core, "res_1", "u1", 1000, T0 + 1001, &capped),
                     HF_ERROR_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 1001);
}

/* ---- release ---- */

static void test_release_ok(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-B-2"), POOLS({"GA", 3}), -1,
                          false, T0, &index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 10), HF_OK);
    const hf_hold_t *h = hf_core_hold_at(f->core, index);
    assert_int_equal(h->status, HF_HOLD_RELEASED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "FLOOR-B-2")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 4);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_RELEASED);
    assert_int_equal(record->at_ms, T0 + 10);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 3);
    assert_seat_record(f, "FLOOR-B-2", HF_SEAT_AVAILABLE, 3);
    /* Repeating answers the same and changes nothing. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 20), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_RELEASED);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    /* Its seats can be held again. */
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"GA", 3}), -1, false,
                          T0 + 30, NULL, &detail),
                     HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_consistent(f, T0 + 30);
    assert_int_equal(next_expiry, INT64_MAX);
}

static void test_release_expired(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t index;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, &index,
                          &detail),
                     HF_OK);
    hf_core_advance(f->core, T0 + 1000); /* the request's advance */
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 1000), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 2000), HF_OK);
    assert_int_equal(hf_core_hold_at(f->core, index)->status, HF_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_consistent(f, T0 + 2000);
}

static void test_release_errors(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    commit(f, "res_2", "u1", "ord_2", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_none", "u1", T0 + 2), HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_release(f->core, "res_1", "u2", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_1", "nobody", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 2), HF_ERROR_ALREADY_CONFIRMED);
    assert_no_mutation(f);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_HELD);
    assert_int_equal(hold_by_id(f, "res_2")->status, HF_HOLD_CONFIRMED);
    assert_int_equal(seat(f, "FLOOR-A-2")->status, HF_SEAT_SOLD);
    assert_consistent(f, T0 + 2);
}

/* ---- commit ---- */

static void test_commit_ok(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t hold_index, order_index = UINT32_MAX;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "BALC-A-2"), POOLS({"GA", 2}), -1,
                          false, T0, &hold_index, &detail),
                     HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi_123", T0 + 100,
                                    &order_index),
                     HF_OK);
    const hf_order_t *order = hf_core_order_at(f->core, order_index);
    assert_non_null(order);
    uint32_t found = UINT32_MAX;
    assert_ptr_equal(hf_core_order_find(f->core, "ord_1", &found), order);
    assert_int_equal(found, order_index);
    assert_string_equal(order->id, "ord_1");
    assert_string_equal(hf_core_event_at(f->core, order->event)->id, "show");
    assert_string_equal(hf_core_user_id(f->core, order->user), "u1");
    assert_int_equal(order->hold, hold_index + 1);
    assert_int_equal(order->status, HF_ORDER_CONFIRMED);
    assert_int_equal(order->created_at_ms, T0 + 100);
    int64_t total = FLOOR_PRICE + BALC_PRICE + 2 * GA_PRICE;
    assert_int_equal(order->total, total);
    assert_string_equal(hf_core_string(f->core, order->payment_ref), "pi_123");
    assert_int_equal(order->seat_count, 2);
    assert_int_equal(order->pool_count, 1);
    const hf_item_t *items = hf_core_items(f->core, order->item_offset);
    assert_int_equal(items[0].quantity, 0);
    assert_int_equal(items[1].quantity, 0);
    assert_int_equal(items[0].index + items[1].index, 0 + 61);
    assert_int_equal(items[2].index, 0);
    assert_int_equal(items[2].quantity, 2);

    const hf_hold_t *h = hf_core_hold_at(f->core, hold_index);
    assert_int_equal(h->status, HF_HOLD_CONFIRMED);
    assert_int_equal(h->order, order_index + 1);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, order_index + 1);
    assert_int_equal(seat(f, "BALC-A-2")->status, HF_SEAT_SOLD);
    assert_int_equal(seat(f, "BALC-A-2")->version, 3);
    assert_int_equal(pool(f, "GA")->held, 0);
    assert_int_equal(pool(f, "GA")->sold, 2);
    assert_counts(event_of(f, "show")->counts, 98, 0, 2);
    assert_counts(event_of(f, "show")->sections[0].counts, 59, 0, 1);
    assert_counts(event_of(f, "show")->sections[1].counts, 39, 0, 1);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    hf_time_ms_t next_expiry = hf_core_next_expiry(f->core); /* checked last */

    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_ITEM], 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.total, 8);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_HOLD_UPDATE);
    assert_string_equal(record->hold_id, "res_1");
    assert_int_equal(record->status, HF_HOLD_CONFIRMED);
    assert_string_equal(record->order_id, "ord_1");
    record = fx_sink_first(&f->sink, HF_MUTATION_ORDER_CREATE);
    assert_string_equal(record->order_id, "ord_1");
    assert_string_equal(record->hold_id, "res_1");
    assert_string_equal(record->event_id, "show");
    assert_string_equal(record->user_id, "u1");
    assert_int_equal(record->total, total);
    assert_int_equal(record->at_ms, T0 + 100);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_SOLD, 3);
    assert_seat_record(f, "BALC-A-2", HF_SEAT_SOLD, 3);
    bool ga_item = false;
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *r = &f->sink.records[i];
        if (r->type != HF_MUTATION_ORDER_ITEM) continue;
        assert_string_equal(r->order_id, "ord_1");
        if (strcmp(r->pool_id, "GA") == 0) {
            ga_item = true;
            assert_int_equal(r->quantity, 2);
        } else {
            assert_true(strcmp(r->seat_id, "FLOOR-A-1") == 0 || strcmp(r->seat_id, "BALC-A-2") == 0);
        }
    }
    assert_true(ga_item);

    uint32_t count = 0;
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], order_index);
    assert_consistent(f, T0 + 100);
    assert_int_equal(next_expiry, INT64_MAX);
}

static void test_commit_repeat(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL,
                          &detail),
                     HF_OK);
    uint32_t first = commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    uint32_t again = UINT32_MAX;
    /* Even after the hold's expires_at: it is confirmed, not expired. The same payment, or
     * none, answers the order. */
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "pi_1", T0 + 5000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", NULL, T0 + 5000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "", T0 + 5000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    /* Another payment is never absorbed: refused, naming the order it would have joined. */
    again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_2", "pi_other", T0 + 5000,
                                    &again),
                     HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(again, first);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_2", NULL));
    assert_string_equal(hf_core_string(f->core, hf_core_order_at(f->core, first)->payment_ref),
                        "pi_1");
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 3);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_CONFIRMED);
    /* And after the order's cancellation: the hold still answers its order. */
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2118", T0 + 6000), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_3", "pi_1", T0 + 7000, &again),
                     HF_OK);
    assert_int_equal(again, first);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_3", "pi_x", T0 + 7000, &again),
                     HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(again, first);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_3", NULL));
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + 7000);
}

static void test_commit_errors(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, 1000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u1", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_2", "u1", T0 + 1), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_none", "u1", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_HOLD_NOT_FOUND);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u2", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_commit(f->core, "res_2", "u1", "ord_1", "pi", T0 + 2, &order),
                     HF_ERROR_HOLD_RELEASED);
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, "ord_1", NULL));
    /* now == expires_at, no sweep has run yet but the request's advance. */
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi", T0 + 1000, &order),
                     HF_ERROR_HOLD_EXPIRED);
    assert_null(hf_core_order_find(f->core, "ord_1", NULL));
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_CREATE], 0);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_commit(f->core, "res_1", "u1", "ord_1", "pi", T0 + 1001, &order),
                     HF_ERROR_HOLD_EXPIRED);
    assert_no_mutation(f);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_consistent(f, T0 + 1001);
}

/* ---- cancel ---- */

static void test_cancel_ok(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"VIP", 2}), -1,
                          false, T0, NULL, &detail),
                     HF_OK);
    uint32_t order = commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2179", T0 + 2), HF_OK);
    assert_int_equal(hf_core_order_at(f->core, order)->status, HF_ORDER_CANCELLED);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_CONFIRMED);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 4);
    assert_int_equal(seat(f, "FLOOR-A-1")->owner, 0);
    assert_int_equal(seat(f, "FLOOR-A-2")->version, 4);
    assert_int_equal(pool(f, "VIP")->sold, 0);
    assert_int_equal(pool(f, "VIP")->held, 0);
    assert_counts(event_of(f, "show")->counts, 100, 0, 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    /* The order was paid (commit gives it a payment_ref): its refund is owed in the same step. */
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1);
    assert_int_equal(f->sink.total, 5);
    const fx_record_t *record = fx_sink_first(&f->sink, HF_MUTATION_ORDER_UPDATE);
    assert_string_equal(record->order_id, "ord_1");
    assert_int_equal(record->status, HF_ORDER_CANCELLED);
    assert_seat_record(f, "FLOOR-A-1", HF_SEAT_AVAILABLE, 4);
    /* Repeat: the same, nothing changes. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_2199", T0 + 3), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_order_at(f->core, order)->status, HF_ORDER_CANCELLED);
    /* Seats and units are free again. */
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-1"), POOLS({"VIP", 2}), -1, false,
                          T0 + 4, NULL, &detail),
                     HF_OK);
    assert_int_equal(seat(f, "FLOOR-A-1")->version, 5);
    uint32_t count = 0;
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 1); /* cancelled ones stay listed */
    assert_consistent(f, T0 + 4);
}

static void test_cancel_errors(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    commit(f, "res_1", "u1", "ord_1", T0 + 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_cancel(f->core, "ord_none", "u1", "ref_2223", T0 + 2), HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hf_core_cancel(f->core, "res_1", "u1", "ref_2224", T0 + 2), HF_ERROR_ORDER_NOT_FOUND);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_2225", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "ghost", "ref_2226", T0 + 2), HF_ERROR_NOT_OWNER);
    assert_no_mutation(f);
    assert_int_equal(seat(f, "FLOOR-A-1")->status, HF_SEAT_SOLD);
    assert_int_equal(hf_core_order_find(f->core, "ord_1", NULL)->status, HF_ORDER_CONFIRMED);
}

/* ---- lookups ---- */

static void test_user_orders(void **state)
{
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t count = 99;
    assert_null(hf_core_user_orders(f->core, "nobody", &count));
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_2", SEATS("S-A-1"), NO_POOLS, -1, false, T0,
                             NULL, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    uint32_t o2 = commit(f, "res_2", "u1", "ord_2", T0 + 1);
    /* One order is kept apart from the array later orders go to: both read the same. */
    const uint32_t *first = hf_core_user_orders(f->core, "u1", &count);
    assert_int_equal(count, 1);
    assert_int_equal(first[0], o2);
    uint32_t o3 = commit(f, "res_3", "u2", "ord_3", T0 + 2);
    uint32_t o1 = commit(f, "res_1", "u1", "ord_1", T0 + 3);
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 2);
    assert_int_equal(orders[0], o2);
    assert_int_equal(orders[1], o1);
    orders = hf_core_user_orders(f->core, "u2", &count);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], o3);
    assert_null(hf_core_order_find(f->core, "ord_none", NULL));
    assert_null(hf_core_hold_find(f->core, "res_none", NULL));
}

/* ---- restore ---- */

typedef struct snapshot_hold {
    char id[HF_SERVER_ID_SIZE + 1];
    char event[HF_ID_SIZE_MAX + 1];
    char user[HF_USER_ID_SIZE_MAX + 1];
    char seat_ids[16][HF_SEAT_ID_SIZE_MAX + 1];
    const char *seat_pointers[16];
    char pool_ids[4][HF_ID_SIZE_MAX + 1];
    hf_pool_request_t pools[4];
    uint32_t seat_count, pool_count;
    uint8_t status;
    hf_time_ms_t created, expires;
    int64_t total;
} snapshot_hold_t;

/* Copies a hold's or order's items out of a core, as the store would have kept them. */
static void snapshot_items(const hf_core_t *core, const hf_event_t *event, uint32_t offset,
                           uint32_t seat_count, uint32_t pool_count, snapshot_hold_t *out)
{
    const hf_item_t *items = hf_core_items(core, offset);
    assert_true(seat_count <= 16 && pool_count <= 4);
    out->seat_count = seat_count;
    out->pool_count = pool_count;
    for (uint32_t i = 0; i < seat_count; i++) {
        assert_int_equal(items[i].quantity, 0);
        hf_core_seat_id(event, items[i].index, out->seat_ids[i]);
        out->seat_pointers[i] = out->seat_ids[i];
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        const hf_item_t *item = &items[seat_count + i];
        snprintf(out->pool_ids[i], sizeof out->pool_ids[i], "%s", event->pools[item->index].id);
        out->pools[i].pool_id = out->pool_ids[i];
        out->pools[i].quantity = item->quantity;
    }
}

static void build_restore_source(fixture_t *f, hf_time_ms_t *end)
{
    hf_error_detail_t detail;
    bool capped;
    /* held, released, expired, confirmed, confirmed then cancelled, replaced, extended. */
    assert_int_equal(hold(f, "u1", "res_held", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 2}),
                          -1, false, T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_rel", SEATS("FLOOR-A-3"), POOLS({"VIP", 1}), -1, false, T0,
                          NULL, &detail),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_rel", "u2", T0 + 1), HF_OK);
    assert_int_equal(hold(f, "u3", "res_exp", SEATS("FLOOR-A-4"), NO_POOLS, 1000, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u4", "res_sold", SEATS("BALC-A-1", "BALC-A-2"), POOLS({"GA", 1}), -1,
                          false, T0 + 2, NULL, &detail),
                     HF_OK);
    commit(f, "res_sold", "u4", "ord_sold", T0 + 3);
    assert_int_equal(hold(f, "u5", "res_canc", SEATS("BALC-A-3"), POOLS({"VIP", 1}), -1, false,
                          T0 + 4, NULL, &detail),
                     HF_OK);
    commit(f, "res_canc", "u5", "ord_canc", T0 + 5);
    assert_int_equal(hf_core_cancel(f->core, "ord_canc", "u5", "ref_2328", T0 + 6), HF_OK);
    assert_int_equal(hold(f, "u6", "res_old", SEATS("FLOOR-B-1"), NO_POOLS, -1, false, T0 + 7,
                          NULL, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u6", "res_new", SEATS("FLOOR-B-1", "FLOOR-B-2"), NO_POOLS, -1, true,
                          T0 + 8, NULL, &detail),
                     HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_new", "u6", 900000, T0 + 9, &capped), HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_open", SEATS("S-B-20"), POOLS({"P", 5}), -1,
                             false, T0 + 10, NULL, &detail),
                     HF_OK);
    commit(f, "res_open", "u1", "ord_open", T0 + 11);
    assert_int_equal(hf_core_advance(f->core, T0 + 2000), 1); /* res_exp */
    *end = T0 + 2000;
}

static void compare_cores(const hf_core_t *a, const hf_core_t *b, hf_time_ms_t now,
                          uint32_t hold_count, uint32_t order_count)
{
    assert_int_equal(hf_core_event_count(a), hf_core_event_count(b));
    for (uint32_t e = 0; e < hf_core_event_count(a); e++) {
        const hf_event_t *x = hf_core_event_at(a, e), *y = hf_core_event_at(b, e);
        assert_string_equal(x->id, y->id);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->seat_count, y->seat_count);
        assert_counts(y->counts, x->counts.available, x->counts.held, x->counts.sold);
        for (uint32_t s = 0; s < x->section_count; s++)
            assert_counts(y->sections[s].counts, x->sections[s].counts.available,
                          x->sections[s].counts.held, x->sections[s].counts.sold);
        for (uint32_t s = 0; s < x->seat_count; s++) {
            if (x->seats[s].status != y->seats[s].status ||
                x->seats[s].version != y->seats[s].version) {
                char id[HF_SEAT_ID_SIZE_MAX + 1];
                hf_core_seat_id(x, s, id);
                fail_msg("seat %s/%s: status %d version %u, restored %d version %u", x->id, id,
                         x->seats[s].status, x->seats[s].version, y->seats[s].status,
                         y->seats[s].version);
            }
        }
        for (uint32_t p = 0; p < x->pool_count; p++) {
            assert_int_equal(x->pools[p].held, y->pools[p].held);
            assert_int_equal(x->pools[p].sold, y->pools[p].sold);
        }
    }
    assert_int_equal(hf_core_holds_active(a), hf_core_holds_active(b));
    assert_int_equal(hf_core_next_expiry(a), hf_core_next_expiry(b));
    for (uint32_t i = 0; i < hold_count; i++) {
        const hf_hold_t *x = hf_core_hold_at(a, i);
        assert_non_null(x);
        const hf_hold_t *y = hf_core_hold_find(b, x->id, NULL);
        if (y == NULL) fail_msg("hold %s not restored", x->id);
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->expires_at_ms, y->expires_at_ms);
        assert_int_equal(x->total, y->total);
        assert_int_equal(x->seat_count, y->seat_count);
        assert_int_equal(x->pool_count, y->pool_count);
        assert_string_equal(hf_core_user_id(a, x->user), hf_core_user_id(b, y->user));
        assert_int_equal(x->order != 0, y->order != 0);
        if (x->order) {
            assert_string_equal(hf_core_order_at(a, x->order - 1)->id,
                                hf_core_order_at(b, y->order - 1)->id);
        }
    }
    for (uint32_t i = 0; i < order_count; i++) {
        const hf_order_t *x = hf_core_order_at(a, i);
        assert_non_null(x);
        const hf_order_t *y = hf_core_order_find(b, x->id, NULL);
        if (y == NULL) fail_msg("order %s not restored", x->id);
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->total, y->total);
        assert_string_equal(hf_core_string(a, x->payment_ref), hf_core_string(b, y->payment_ref));
        assert_string_equal(hf_core_user_id(a, x->user), hf_core_user_id(b, y->user));
        assert_int_equal(x->hold != 0, y->hold != 0);
        if (x->hold)
            assert_string_equal(hf_core_hold_at(a, x->hold - 1)->id,
                                hf_core_hold_at(b, y->hold - 1)->id);
    }
    const char *fault = hf_core_check(b, now);
    if (fault != NULL) fail_msg("restored core: %s", fault);
}

static void test_restore_round_trip(void **state)
{
    fixture_t *f = *state;
    hf_time_ms_t end;
    build_restore_source(f, &end);
    assert_consistent(f, end);

    fx_sink_t sink;
    fx_sink_init(&sink, 64);
    hf_core_t *copy = hf_core_create(fx_sink_of(&sink));
    assert_int_equal(hf_core_restore_event(copy, &f->show.definition, T0), HF_OK);
    assert_int_equal(hf_core_restore_event(copy, &f->open.definition, T0), HF_OK);
    /* Holds in creation order, then orders, then seat versions. */
    for (uint32_t i = 0; i < 8; i++) { /* the holds of build_restore_source */
        const hf_hold_t *h = hf_core_hold_at(f->core, i);
        assert_non_null(h);
        const hf_event_t *event = hf_core_event_at(f->core, h->event);
        snapshot_hold_t snap;
        memset(&snap, 0, sizeof snap);
        snapshot_items(f->core, event, h->item_offset, h->seat_count, h->pool_count, &snap);
        hf_stored_hold_t stored = {
            .request = {.event_id = event->id, .user_id = hf_core_user_id(f->core, h->user),
                        .hold_id = h->id, .seat_ids = snap.seat_pointers,
                        .seat_count = snap.seat_count, .pools = snap.pools,
                        .pool_count = snap.pool_count, .ttl_ms = -1},
            .status = h->status, .created_at_ms = h->created_at_ms,
            .expires_at_ms = h->expires_at_ms, .total = h->total,
        };
        assert_int_equal(hf_core_restore_hold(copy, &stored), HF_OK);
    }
    for (uint32_t i = 0; i < 3; i++) { /* its orders */
        const hf_order_t *o = hf_core_order_at(f->core, i);
        assert_non_null(o);
        const hf_event_t *event = hf_core_event_at(f->core, o->event);
        snapshot_hold_t snap;
        memset(&snap, 0, sizeof snap);
        snapshot_items(f->core, event, o->item_offset, o->seat_count, o->pool_count, &snap);
        hf_stored_order_t stored = {
            .order_id = o->id,
            .hold_id = o->hold ? hf_core_hold_at(f->core, o->hold - 1)->id : NULL,
            .items = {.event_id = event->id, .user_id = hf_core_user_id(f->core, o->user),
                      .seat_ids = snap.seat_pointers, .seat_count = snap.seat_count,
                      .pools = snap.pools, .pool_count = snap.pool_count, .ttl_ms = -1},
            .status = o->status, .created_at_ms = o->created_at_ms, .total = o->total,
            .payment_ref = hf_core_string(f->core, o->payment_ref),
        };
        assert_int_equal(hf_core_restore_order(copy, &stored), HF_OK);
    }
    for (uint32_t e = 0; e < hf_core_event_count(f->core); e++) {
        const hf_event_t *event = hf_core_event_at(f->core, e);
        for (uint32_t s = 0; s < event->seat_count; s++) {
            if (event->seats[s].version == 1) continue;
            char id[HF_SEAT_ID_SIZE_MAX + 1];
            hf_core_seat_id(event, s, id);
            assert_int_equal(hf_core_restore_seat(copy, event->id, id, event->seats[s].version),
                             HF_OK);
        }
    }
    if (sink.total != 0) fail_msg("restore emitted %zu mutations", sink.total);
    compare_cores(f->core, copy, end, 8, 3);

    /* The restored core works on: the same commands give the same answers. */
    hf_error_detail_t detail;
    bool capped;
    assert_int_equal(hf_core_commit(copy, "res_held", "u1", "ord_x", "pi", end + 1, &(uint32_t){0}),
                     HF_OK);
    assert_int_equal(hf_core_commit(f->core, "res_held", "u1", "ord_x", "pi", end + 1,
                                    &(uint32_t){0}),
                     HF_OK);
    assert_int_equal(hf_core_extend(copy, "res_new", "u6", 1000000, end + 2, &capped), HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_new", "u6", 1000000, end + 2, &capped), HF_OK);
    assert_int_equal(hf_core_release(copy, "res_rel", "u2", end + 3), HF_OK);
    assert_int_equal(hf_core_release(copy, "res_sold", "u4", end + 3), HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(hf_core_cancel(copy, "ord_sold", "u4", "ref_2484", end + 4), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_sold", "u4", "ref_2485", end + 4), HF_OK);
    hf_hold_request_t request = {.event_id = "show", .user_id = "u9", .hold_id = "res_z",
                                 .seat_ids = (const char *const[]){"FLOOR-A-3", "FLOOR-A-4"},
                                 .seat_count = 2, .ttl_ms = -1};
    assert_int_equal(hf_core_hold(copy, &request, end + 5, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 5, &(uint32_t){0}, &detail), HF_OK);
    request.hold_id = "res_y";
    request.seat_ids = (const char *const[]){"FLOOR-B-2"};
    request.seat_count = 1;
    assert_int_equal(hf_core_hold(copy, &request, end + 5, &(uint32_t){0}, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    /* The user limit counts restored holds and orders: u1 holds nothing on "show" any more but
     * bought FLOOR-A-1, FLOOR-A-2 and 2 GA (res_held, committed above): 4 + 5 > 8. */
    request.user_id = "u1";
    request.hold_id = "res_w";
    request.seat_ids = (const char *const[]){"BALC-A-20", "BALC-A-21", "BALC-A-22", "BALC-A-23",
                                             "BALC-A-24"};
    request.seat_count = 5;
    assert_int_equal(hf_core_hold(copy, &request, end + 6, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(hf_core_hold(f->core, &request, end + 6, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    request.seat_count = 4;
    assert_int_equal(hf_core_hold(copy, &request, end + 6, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 6, &(uint32_t){0}, &detail), HF_OK);
    /* u6 holds res_new (2 seats, restored held): 2 + 7 > 8 unless replaced. */
    request.user_id = "u6";
    request.hold_id = "res_v";
    request.seat_ids = (const char *const[]){"BALC-A-30", "BALC-A-31", "BALC-A-32", "BALC-A-33",
                                             "BALC-A-34", "BALC-A-35", "BALC-A-36"};
    request.seat_count = 7;
    assert_int_equal(hf_core_hold(copy, &request, end + 7, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    request.replace_existing = true;
    assert_int_equal(hf_core_hold(copy, &request, end + 7, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 7, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold_find(copy, "res_new", NULL)->status, HF_HOLD_RELEASED);
    compare_cores(f->core, copy, end + 7, 11, 4);
    hf_core_destroy(copy);
    fx_sink_free(&sink);
}

static void test_restore_lapsed_hold(void **state)
{
    (void)state;
    fx_sink_t sink;
    fx_sink_init(&sink, 64);
    hf_core_t *core = hf_core_create(fx_sink_of(&sink));
    fx_event_t def;
    fx_event_init(&def, "ev", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 10, 1, 4);
    fx_event_pool(&def, "P", 5, 3);
    assert_int_equal(hf_core_restore_event(core, &def.definition, T0), HF_OK);
    hf_stored_hold_t stored = {
        .request = {.event_id = "ev", .user_id = "u1", .hold_id = "res_1",
                    .seat_ids = (const char *const[]){"S-A-2"}, .seat_count = 1,
                    .pools = (const hf_pool_request_t[]){{"P", 2}}, .pool_count = 1,
                    .ttl_ms = -1},
        .status = HF_HOLD_HELD, .created_at_ms = T0, .expires_at_ms = T0 + 1000, .total = 16,
    };
    assert_int_equal(hf_core_restore_hold(core, &stored), HF_OK);
    assert_int_equal(hf_core_restore_seat(core, "ev", "S-A-2", 6), HF_OK);
    assert_int_equal(sink.total, 0);
    const hf_event_t *event = hf_core_event(core, "ev", NULL);
    assert_int_equal(event->seats[1].status, HF_SEAT_HELD);
    assert_int_equal(event->seats[1].version, 6);
    assert_int_equal(event->pools[0].held, 2);
    assert_counts(event->counts, 3, 1, 0);
    assert_int_equal(hf_core_holds_active(core), 1);
    assert_int_equal(hf_core_next_expiry(core), T0 + 1000);
    assert_int_equal(hf_core_hold_find(core, "res_1", NULL)->status, HF_HOLD_HELD);
    /* Lapsed long ago: the first advance expires it durably. */
    assert_int_equal(hf_core_advance(core, T0 + 50000), 1);
    assert_int_equal(hf_core_hold_find(core, "res_1", NULL)->status, HF_HOLD_EXPIRED);
    event = hf_core_event(core, "ev", NULL);
    assert_int_equal(event->seats[1].status, HF_SEAT_AVAILABLE);
    assert_int_equal(event->seats[1].version, 7);
    assert_int_equal(event->pools[0].held, 0);
    assert_int_equal(sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(sink.by_type[HF_MUTATION_SEAT], 1);
    const fx_record_t *record = fx_sink_seat(&sink, "S-A-2");
    assert_non_null(record);
    assert_int_equal(record->version, 7);
    assert_null(hf_core_check(core, T0 + 50000));
    /* Restored events and a held hold emit nothing, a bad restore is refused. */
    hf_stored_hold_t bad = stored;
    bad.request.hold_id = "res_2";
    bad.request.event_id = "nope";
    assert_int_not_equal(hf_core_restore_hold(core, &bad), HF_OK);
    assert_int_not_equal(hf_core_restore_seat(core, "ev", "S-A-9", 2), HF_OK);
    hf_core_destroy(core);
    fx_sink_free(&sink);
}

static void test_set_sink(void **state)
{
    fixture_t *f = *state;
    fx_sink_t other;
    fx_sink_init(&other, 16);
    hf_core_set_sink(f->core, fx_sink_of(&other));
    hf_error_detail_t detail;
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL,
                          &detail),
                     HF_OK);
    assert_no_mutation(f);
    assert_int_equal(other.total, 2);
    hf_core_set_sink(f->core, fx_sink_of(&f->sink));
    fx_sink_free(&other);
}

/* ---- JSON writer numbers and times (src/core/buffer.c), checked against the C library ---- */

/* A small deterministic generator, so a failure can be reproduced exactly. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* What the writer used to produce with snprintf, as the reference for the hand-written one. */
static void reference_time(int64_t unix_ms, char *out, size_t size)
{
    int64_t milliseconds = unix_ms % 1000;
    time_t seconds = (time_t)(unix_ms / 1000);
    if (milliseconds < 0) {
        milliseconds += 1000;
        seconds -= 1;
    }
    struct tm parts;
    assert_non_null(gmtime_r(&seconds, &parts));
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
             parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
             (int)milliseconds);
}

static void reference_seconds(int64_t milliseconds, char *out, size_t size)
{
    if (milliseconds % 1000 == 0) {
        snprintf(out, size, "%lld", (long long)(milliseconds / 1000));
        return;
    }
    snprintf(out, size, "%lld.%03lld", (long long)(milliseconds / 1000),
             (long long)llabs(milliseconds % 1000));
    size_t length = strlen(out);
    while (out[length - 1] == '0') out[--length] = '\0';
}

static void assert_time_matches_reference(int64_t unix_ms)
{
    char expected[96];
    char actual[32];
    reference_time(unix_ms, expected, sizeof expected);
    memset(actual, 'x', sizeof actual);
    hf_format_time(unix_ms, actual);
    if (strcmp(actual, expected) != 0)
        fail_msg("%lld: %s, expected %s", (long long)unix_ms, actual, expected);
}

/* The text one JSON writer function makes of value, alone in the buffer. */
static const char *json_value_text(hf_buffer_t *buffer, void (*write)(hf_json_t *, int64_t),
                                   int64_t value)
{
    hf_json_t json;
    hf_buffer_reset(buffer);
    hf_json_init(&json, buffer);
    write(&json, value);
    return buffer->data;
}

static const char *json_int_text(hf_buffer_t *buffer, int64_t value)
{
    return json_value_text(buffer, hf_json_int, value);
}

static const char *json_seconds_text(hf_buffer_t *buffer, int64_t milliseconds)
{
    return json_value_text(buffer, hf_json_seconds, milliseconds);
}

static void test_json_int(void **state)
{
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    assert_string_equal(json_int_text(&buffer, INT64_MIN), "-9223372036854775808");
    assert_string_equal(json_int_text(&buffer, INT64_MAX), "9223372036854775807");
    assert_string_equal(json_int_text(&buffer, 0), "0");
    assert_string_equal(json_int_text(&buffer, -1), "-1");
    assert_string_equal(json_int_text(&buffer, 10), "10");
    assert_string_equal(json_int_text(&buffer, 99), "99");
    assert_string_equal(json_int_text(&buffer, 100), "100");
    assert_string_equal(json_int_text(&buffer, INT64_MIN + 1), "-9223372036854775807");
    uint64_t random = 0x9e3779b97f4a7c15u;
    char expected[32];
    for (int i = 0; i < 10000; i++) {
        /* Shifted right by a random amount too, so short numbers are as common as long ones. */
        uint64_t bits = next_random(&random);
        int64_t value = (int64_t)(bits >> (next_random(&random) % 64));
        if (i % 2) value = -value;
        snprintf(expected, sizeof expected, "%lld", (long long)value);
        assert_string_equal(json_int_text(&buffer, value), expected);
    }
    /* Commas between values are still the writer's business. */
    hf_json_t json;
    hf_buffer_reset(&buffer);
    hf_json_init(&json, &buffer);
    hf_json_array_begin(&json);
    hf_json_int(&json, 0);
    hf_json_int(&json, -1);
    hf_json_seconds(&json, 1500);
    hf_json_array_end(&json);
    assert_string_equal(buffer.data, "[0,-1,1.5]");
    hf_buffer_free(&buffer);
}

static void test_json_seconds(void **state)
{
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    assert_string_equal(json_seconds_text(&buffer, 1000), "1");
    assert_string_equal(json_seconds_text(&buffer, 1500), "1.5");
    assert_string_equal(json_seconds_text(&buffer, 1050), "1.05");
    assert_string_equal(json_seconds_text(&buffer, 1), "0.001");
    assert_string_equal(json_seconds_text(&buffer, 0), "0");
    assert_string_equal(json_seconds_text(&buffer, 123456), "123.456");
    assert_string_equal(json_seconds_text(&buffer, 600000), "600");
    assert_string_equal(json_seconds_text(&buffer, 999), "0.999");
    assert_string_equal(json_seconds_text(&buffer, -1500), "-1.5");
    assert_string_equal(json_seconds_text(&buffer, -2000), "-2");
    assert_string_equal(json_seconds_text(&buffer, INT64_MAX), "9223372036854775.807");
    assert_string_equal(json_seconds_text(&buffer, INT64_MIN), "-9223372036854775.808");
    char expected[48];
    for (int64_t milliseconds = -5000; milliseconds <= 5000; milliseconds++) {
        reference_seconds(milliseconds, expected, sizeof expected);
        assert_string_equal(json_seconds_text(&buffer, milliseconds), expected);
    }
    uint64_t random = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 10000; i++) {
        int64_t milliseconds = (int64_t)next_random(&random);
        reference_seconds(milliseconds, expected, sizeof expected);
        assert_string_equal(json_seconds_text(&buffer, milliseconds), expected);
    }
    hf_buffer_free(&buffer);
}

static void test_format_time(void **state)
{
    char text[32];
    struct {
        int64_t unix_ms;
        const char *expected;
    } cases[] = {
        {0, "1970-01-01T00:00:00.000Z"},
        {-1, "1969-12-31T23:59:59.999Z"},
        {-1000, "1969-12-31T23:59:59.000Z"},
        {-1001, "1969-12-31T23:59:58.999Z"},
        {-86400000, "1969-12-31T00:00:00.000Z"},
        {INT64_C(1795291200000), "2026-11-21T20:00:00.000Z"},
        {INT64_C(951782400000), "2000-02-29T00:00:00.000Z"},
        {INT64_C(951868799999), "2000-02-29T23:59:59.999Z"},
        {INT64_C(4107542399999), "2100-02-28T23:59:59.999Z"},
        {INT64_C(4107542400000), "2100-03-01T00:00:00.000Z"},
        {INT64_C(946684799999), "1999-12-31T23:59:59.999Z"},
        {INT64_C(946684800000), "2000-01-01T00:00:00.000Z"},
        {INT64_C(-2208988800000), "1900-01-01T00:00:00.000Z"},
        {INT64_C(-2203891200001), "1900-02-28T23:59:59.999Z"},
        {INT64_C(-2203891200000), "1900-03-01T00:00:00.000Z"},
        {INT64_C(13601087999999), "2400-12-31T23:59:59.999Z"},
        /* The supported range is years 0000 to 9999; beyond it the ends are written. */
        {INT64_C(-62167219200000), "0000-01-01T00:00:00.000Z"},
        {INT64_C(253402300799999), "9999-12-31T23:59:59.999Z"},
        {INT64_MIN, "0000-01-01T00:00:00.000Z"},
        {INT64_MAX, "9999-12-31T23:59:59.999Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hf_format_time(cases[i].unix_ms, text);
        assert_string_equal(text, cases[i].expected);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] - 2; i++)
        assert_time_matches_reference(cases[i].unix_ms);

    /* Every day boundary from 1900 to 2400, a millisecond either side included: that covers
     * every month end, year end and leap day, before 1970 as well as after. */
    const int64_t first_ms = INT64_C(-2208988800000); /* 1900-01-01 */
    const int64_t end_ms = INT64_C(13601088000000);   /* 2401-01-01 */
    const int64_t day_ms = INT64_C(86400000);
    for (int64_t midnight = first_ms; midnight <= end_ms; midnight += day_ms) {
        assert_time_matches_reference(midnight - 1);
        assert_time_matches_reference(midnight);
        assert_time_matches_reference(midnight + 1);
    }
    uint64_t random = 0xd1b54a32d192ed03u;
    for (int i = 0; i < 200000; i++) {
        uint64_t offset = next_random(&random) % (uint64_t)(end_ms - first_ms);
        assert_time_matches_reference(first_ms + (int64_t)offset);
    }

    /* hf_json_time writes the same text as a JSON string. */
    hf_buffer_t buffer;
    hf_buffer_init(&buffer);
    hf_json_t json;
    hf_json_init(&json, &buffer);
    hf_json_time(&json, INT64_C(1795291200000));
    assert_string_equal(buffer.data, "\"2026-11-21T20:00:00.000Z\"");
    hf_buffer_free(&buffer);
}


/* ---- closing sales ---- */

/* A booking of seats at the versions given (1: never touched). */
static hf_error_t book(fixture_t *f, const char *user, const char *order_id,
                       const char *const *seats, uint32_t seat_count, const uint32_t *versions,
                       hf_time_ms_t now, hf_error_detail_t *detail)
{
    hf_hold_request_t request = {.event_id = "show", .user_id = user, .seat_ids = seats,
                                 .seat_count = seat_count, .ttl_ms = -1,
                                 .seat_versions = versions};
    uint32_t index;
    memset(detail, 0, sizeof *detail);
    return hf_core_book(f->core, &request, order_id, "pi_b", now, &index, detail);
}

/* Closing refuses new holds and bookings after the request's own checks, emits one record per
 * change and none for a repeat, and leaves live holds and orders free to move. */
static void test_sales_closed(void **state)
{
    fixture_t *f = *state;
    static hf_error_detail_t detail;
    uint32_t live;
    assert_true(event_of(f, "show")->sales_open);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), POOLS({"GA", 1}), -1, false, T0,
                          &live, NULL), HF_OK);
    assert_int_equal(hold(f, "u2", "res_2", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          NULL), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_sales_set(f->core, "show", false, T0 + 1), HF_OK);
    assert_false(event_of(f, "show")->sales_open);
    assert_true(event_of(f, "open")->sales_open);
    assert_int_equal(f->sink.total, 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_EVENT_SALES], 1);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_sales_set(f->core, "show", false, T0 + 2), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_sales_set(f->core, "nope", false, T0 + 2),
                     HF_ERROR_EVENT_NOT_FOUND);

    /* Refused, and nothing moves; the request's own 400s and 404s come first. */
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0 + 3,
                          NULL, &detail), HF_ERROR_SALES_CLOSED);
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0 + 3,
                          NULL, &detail), HF_ERROR_SALES_CLOSED);
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-Z-1"), NO_POOLS, -1, false, T0 + 3,
                          NULL, &detail), HF_ERROR_SEAT_NOT_FOUND);
    assert_int_equal(hold(f, "u3", "res_3", NO_SEATS, POOLS({"NOPE", 1}), -1, false, T0 + 3,
                          NULL, &detail), HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(hold(f, "u3", "res_3", NO_SEATS, NO_POOLS, -1, false, T0 + 3, NULL,
                          &detail), HF_ERROR_INVALID_REQUEST);
    hf_hold_request_t best = {.event_id = "show", .user_id = "u3", .hold_id = "res_3",
                              .ttl_ms = -1, .best_count = 2, .best_section = "NOPE"};
    uint32_t unused;
    assert_int_equal(hf_core_hold(f->core, &best, T0 + 3, &unused, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    best.best_section = "BALC";
    assert_int_equal(hf_core_hold(f->core, &best, T0 + 3, &unused, &detail),
                     HF_ERROR_SALES_CLOSED);
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
    assert_int_equal(hold_on(f, "open", "u5", "res_5", SEATS("S-A-1"), NO_POOLS, -1, false,
                             T0 + 3, NULL, NULL), HF_OK);

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
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-3"), NO_POOLS, -1, false, T0 + 9,
                          NULL, NULL), HF_OK);
    assert_int_equal(book(f, "u4", "ord_b", SEATS("FLOOR-B-1"), fresh, T0 + 9, &detail), HF_OK);
    assert_consistent(f, T0 + 9);
}

/* The record carries the event and the state after the change; a restore sets the state
 * without a record. */
static void test_sales_record_and_restore(void **state)
{
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
static void test_event_orders(void **state)
{
    fixture_t *f = *state;
    uint32_t count = 99;
    assert_null(hf_core_event_orders(f->core, 0, &count));
    assert_int_equal(count, 0);
    assert_int_equal(hold(f, "u1", "res_1", SEATS("FLOOR-A-1"), NO_POOLS, -1, false, T0, NULL,
                          NULL), HF_OK);
    assert_int_equal(hold_on(f, "open", "u2", "res_2", SEATS("S-A-1"), NO_POOLS, -1, false, T0,
                             NULL, NULL), HF_OK);
    assert_int_equal(hold(f, "u3", "res_3", SEATS("FLOOR-A-2"), NO_POOLS, -1, false, T0, NULL,
                          NULL), HF_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_codes),
        cmocka_unit_test_setup_teardown(test_event_create_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_create_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_create_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_too_many_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_invalid_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_invalid_totals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_invalid_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_limit_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seat_find_parsing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seat_id_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_million_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seats_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_pools_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_event_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seat_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_seats_unavailable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_pool_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_insufficient_quantity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_user_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_ids_sharing_a_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_and_hold_ids_colliding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_invalid_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_replace_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_replace_after_releases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_advance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_on_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extend_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extend_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_repeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_round_trip, setup, teardown),
        cmocka_unit_test(test_restore_lapsed_hold),
        cmocka_unit_test_setup_teardown(test_stream_records_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_names_the_change_it_rests_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold_and_order_name_their_newest_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_oldest_beyond_max, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_keeps_held_and_confirmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_slot_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_stale_expiry_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_forgotten_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_sink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sales_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sales_record_and_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_orders, setup, teardown),
        cmocka_unit_test(test_json_int),
        cmocka_unit_test(test_json_seconds),
        cmocka_unit_test(test_format_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
