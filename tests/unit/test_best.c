/* Unit tests of best_available (API.md section 3, docs/API.md "Holds") and of bookings
 * (hf_core_book, API.md section 4): the seats chosen, exactly, for every rule of the selection
 * (section order, rows front first, the first row that can serve, no stranded single seat,
 * closeness to the row's middle, lower numbers, separate seats from the middle outwards), the
 * errors, the interplay with named seats, replace_existing and the user limit, the per-row free
 * counts (hf_row_t.available) through every kind of change, a 100,000-seat event nearly sold
 * out; and bookings: success, version conflicts, the other errors, cancellation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core_fixtures.h"

#define T0 INT64_C(1800000000000)
#define TTL INT64_C(600000)
#define MAX_HOLD INT64_C(1800000)

typedef struct fixture {
    hf_core_t *core;
    fx_sink_t sink;
    /* ORDER_CREATE records seen with a NULL / non-NULL hold_id (fx_record_t cannot tell). */
    uint32_t order_create_null_hold, order_create_with_hold;
    char last_payment_ref[64];
    fx_event_t defs[6];
    uint32_t def_count;
} fixture_t;

static void record_emit(void *context, const hf_mutation_t *mutation) {
    fixture_t *f = context;
    if (mutation->type == HF_MUTATION_ORDER_CREATE) {
        const hf_mutation_order_create_t *order = &mutation->as.order_create;
        if (order->hold_id == NULL) f->order_create_null_hold++;
        else f->order_create_with_hold++;
        snprintf(f->last_payment_ref, sizeof f->last_payment_ref, "%s",
                 order->payment_ref ? order->payment_ref : "(null)");
    }
    fx_sink_emit(&f->sink, mutation);
}

static void sink_reset(fixture_t *f) {
    fx_sink_reset(&f->sink);
    f->order_create_null_hold = f->order_create_with_hold = 0;
    f->last_payment_ref[0] = '\0';
}

/* An event with sections of rows of the given lengths ({10, 10, 9} = rows A, B, C). */
typedef struct section_spec {
    const char *id;
    int64_t price;
    uint32_t rows[FX_ROWS_MAX];
    uint32_t row_count;
} section_spec_t;

static void make_event(fixture_t *f, const char *id, uint32_t per_user, uint32_t per_hold,
                       const section_spec_t *sections, uint32_t section_count,
                       int64_t pool_capacity) {
    assert_true(f->def_count < 6);
    fx_event_t *def = &f->defs[f->def_count++];
    fx_event_init(def, id, TTL, MAX_HOLD, per_user, per_hold);
    for (uint32_t s = 0; s < section_count; s++) {
        fx_event_section(def, sections[s].id, sections[s].price, sections[s].row_count, 1);
        for (uint32_t r = 0; r < sections[s].row_count; r++)
            def->rows[s][r].seats = sections[s].rows[r];
    }
    if (pool_capacity > 0) fx_event_pool(def, "P", pool_capacity, 7);
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_event_create(f->core, &def->definition, T0, &detail), HF_OK);
}

static int setup(void **state) {
    fixture_t *f = calloc(1, sizeof *f);
    assert_non_null(f);
    fx_sink_init(&f->sink, 8192);
    hf_mutation_sink_t sink = {.emit = record_emit, .context = f};
    f->core = hf_core_create(sink);
    assert_non_null(f->core);
    /* "ten": S (100) rows A 10, B 10, C 9; T (50) rows A 7, B 12; pool P 10. No user limit. */
    section_spec_t ten[] = {{"S", 100, {10, 10, 9}, 3}, {"T", 50, {7, 12}, 2}};
    make_event(f, "ten", 0, 40, ten, 2, 10);
    /* "lim": S (100) rows A, B of 10; pool P 5; at most 8 per user, 10 per hold. */
    section_spec_t lim[] = {{"S", 100, {10, 10}, 2}};
    make_event(f, "lim", 8, 10, lim, 1, 5);
    sink_reset(f);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture_t *f = *state;
    fx_core_destroy(f->core, &f->sink);
    free(f);
    return 0;
}

/* ---- helpers ---- */

typedef struct best_spec {
    uint32_t count;
    const char *section;
    bool adjacent;
} best_spec_t;

#define BEST(n, sec, adj) ((best_spec_t){(n), (sec), (adj)})
#define NO_BEST ((best_spec_t){0, NULL, true})

static hf_error_t request_hold(fixture_t *f, const char *event_id, const char *user,
                               const char *hold_id, const char *const *seats, uint32_t seat_count,
                               const hf_pool_request_t *pools, uint32_t pool_count,
                               best_spec_t best, bool replace, hf_time_ms_t now, uint32_t *index,
                               hf_error_detail_t *detail) {
    hf_hold_request_t request = {
        .event_id = event_id,
        .user_id = user,
        .hold_id = hold_id,
        .seat_ids = seats,
        .seat_count = seat_count,
        .pools = pools,
        .pool_count = pool_count,
        .ttl_ms = -1,
        .replace_existing = replace,
        .best_count = best.count,
        .best_section = best.section,
        .best_adjacent = best.adjacent,
    };
    return fx_hold(f->core, &request, now, index, detail);
}

/* A best_available hold without named seats or pools. */
static hf_error_t best(fixture_t *f, const char *event_id, const char *user, const char *hold_id,
                       uint32_t count, const char *section, bool adjacent, hf_time_ms_t now,
                       hf_error_detail_t *detail) {
    return request_hold(f, event_id, user, hold_id, NO_SEATS, NO_POOLS,
                        BEST(count, section, adjacent), false, now, NULL, detail);
}

/* Named seats only. */
static void take(fixture_t *f, const char *event_id, const char *user, const char *hold_id,
                 const char *const *seats, uint32_t seat_count, hf_time_ms_t now) {
    hf_error_detail_t detail;
    assert_int_equal(request_hold(f, event_id, user, hold_id, seats, seat_count, NO_POOLS, NO_BEST,
                                  false, now, NULL, &detail),
                     HF_OK);
}

static const hf_event_t *event_of(fixture_t *f, const char *event_id) {
    return fx_event_of(f->core, event_id);
}

static const hf_seat_t *seat_of(fixture_t *f, const char *event_id, const char *seat_id) {
    return fx_seat_of(f->core, event_id, seat_id);
}

static const hf_hold_t *hold_by_id(fixture_t *f, const char *hold_id) {
    return fx_hold_of(f->core, hold_id);
}

/* The seats of a hold or order's items, as "S-A-4 S-A-5", in their stored order. */
static void items_text(fixture_t *f, uint32_t event, uint32_t item_offset, uint32_t seat_count,
                       char *out, size_t size) {
    const hf_event_t *e = hf_core_event_at(f->core, event);
    const hf_item_t *items = hf_core_items(f->core, item_offset);
    size_t used = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < seat_count; i++) {
        char id[HF_SEAT_ID_SIZE_MAX + 1];
        assert_int_equal(items[i].quantity, 0);
        hf_core_seat_id(e, items[i].index, id);
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? " " : "", id);
        assert_true(used < size);
    }
}

static void assert_hold_seats(fixture_t *f, const char *hold_id, const char *expected) {
    const hf_hold_t *h = hold_by_id(f, hold_id);
    char text[4096];
    items_text(f, h->event, h->item_offset, h->seat_count, text, sizeof text);
    if (strcmp(text, expected) != 0)
        fail_msg("hold %s: seats \"%s\", expected \"%s\"", hold_id, text, expected);
    const hf_event_t *event = hf_core_event_at(f->core, h->event);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    for (uint32_t i = 0; i < h->seat_count && h->status == HF_HOLD_HELD; i++) {
        assert_int_equal(event->seats[items[i].index].status, HF_SEAT_HELD);
    }
}

/* Every row's available count equals its seats' statuses, in every event; and the core's own
 * consistency check holds. */
static void assert_rows(fixture_t *f, hf_time_ms_t now) {
    for (uint32_t e = 0; e < hf_core_event_count(f->core); e++) {
        const hf_event_t *event = hf_core_event_at(f->core, e);
        uint32_t seats = 0;
        for (uint32_t r = 0; r < event->row_count; r++) {
            const hf_row_t *row = &event->rows[r];
            uint32_t available = 0;
            assert_int_equal(row->first_seat, seats);
            for (uint32_t s = row->first_seat; s < row->first_seat + row->seat_count; s++)
                available += event->seats[s].status == HF_SEAT_AVAILABLE;
            seats += row->seat_count;
            if (row->available != available)
                fail_msg("event %s row %s-%s: available %u, seats say %u", event->id,
                         event->sections[row->section].id, row->id, row->available, available);
        }
        assert_int_equal(seats, event->seat_count);
    }
    fx_assert_consistent(f->core, now);
}

static void assert_no_mutation(fixture_t *f) { fx_assert_no_mutation(&f->sink); }

static uint32_t row_available(fixture_t *f, const char *event_id, const char *section,
                              const char *row) {
    const hf_event_t *event = event_of(f, event_id);
    for (uint32_t r = 0; r < event->row_count; r++)
        if (strcmp(event->sections[event->rows[r].section].id, section) == 0 &&
            strcmp(event->rows[r].id, row) == 0)
            return event->rows[r].available;
    fail_msg("no row %s-%s", section, row);
    return 0;
}

/* ---- adjacent: within one row ---- */

static void test_adjacent_even_row(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* Empty 10-seat row: 4 seats in the middle. */
    assert_int_equal(best(f, "ten", "u1", "res_1", 4, "S", true, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-4 S-A-5 S-A-6 S-A-7");
    assert_int_equal(hold_by_id(f, "res_1")->total, 400);
    assert_int_equal(row_available(f, "ten", "S", "A"), 6);
    /* Free runs 1-3 and 8-10: every 2-block strands one; 2-3 and 8-9 are equally close (6),
     * the lower wins. */
    assert_int_equal(best(f, "ten", "u2", "res_2", 2, "S", true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-A-2 S-A-3");
    /* Free: 1, 8-10. A single: seat 1 (distance 9) and 10 (9) strand nothing, 9 strands 8 and
     * 10, 8 strands nothing at distance 5. */
    assert_int_equal(best(f, "ten", "u3", "res_3", 1, "S", true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-A-8");
    /* Free: 1, 9-10: a pair fits only at 9-10. */
    assert_int_equal(best(f, "ten", "u4", "res_4", 2, "S", true, T0 + 3, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "S-A-9 S-A-10");
    assert_int_equal(row_available(f, "ten", "S", "A"), 1);
    /* Row A has 1 free seat: a pair goes to row B's middle. */
    assert_int_equal(best(f, "ten", "u5", "res_5", 2, "S", true, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_5", "S-B-5 S-B-6");
    /* A single still fits row A, the front row: seat 1. */
    assert_int_equal(best(f, "ten", "u6", "res_6", 1, "S", true, T0 + 5, &detail), HF_OK);
    assert_hold_seats(f, "res_6", "S-A-1");
    assert_int_equal(row_available(f, "ten", "S", "A"), 0);
    assert_rows(f, T0 + 5);
}

static void test_adjacent_odd_row(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* T-A has 7 seats. One seat: the middle, 4. */
    assert_int_equal(best(f, "ten", "u1", "res_1", 1, "T", true, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "T-A-4");
    /* Free 1-3, 5-7: 3-block fits only as 1-3 or 5-7 (no strand, distance 4 each): lower. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 3, "T", true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "T-A-1 T-A-2 T-A-3");
    /* S-C has 9 seats (third row of S): fill rows A and B first by best picks of 10. */
    assert_int_equal(best(f, "ten", "u2", "res_3", 10, "S", true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-A-1 S-A-2 S-A-3 S-A-4 S-A-5 S-A-6 S-A-7 S-A-8 S-A-9 S-A-10");
    assert_int_equal(best(f, "ten", "u2", "res_4", 10, "S", true, T0 + 3, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "S-B-1 S-B-2 S-B-3 S-B-4 S-B-5 S-B-6 S-B-7 S-B-8 S-B-9 S-B-10");
    /* 9 seats, 3-block: 4-6 exactly in the middle. */
    assert_int_equal(best(f, "ten", "u3", "res_5", 3, "S", true, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_5", "S-C-4 S-C-5 S-C-6");
    /* Free 1-3, 7-9: a pair strands in every place; 2-3 and 7-8 tie at distance 5: lower. */
    assert_int_equal(best(f, "ten", "u3", "res_6", 2, "S", true, T0 + 5, &detail), HF_OK);
    assert_hold_seats(f, "res_6", "S-C-2 S-C-3");
    /* T-A has 5-7 free (1-4 held): a pair at 5-6 strands 7 at the row's end, 6-7 strands 5
     * against the taken 4: both strand, 5-6 is closer (3 against 5). */
    assert_int_equal(best(f, "ten", "u4", "res_7", 2, "T", true, T0 + 6, &detail), HF_OK);
    assert_hold_seats(f, "res_7", "T-A-5 T-A-6");
    assert_rows(f, T0 + 6);
}

static void test_adjacent_even_block_odd_row(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* T-A: 7 seats, 2-block: 3-4 and 4-5 both at distance 1, neither strands: 3-4. */
    assert_int_equal(best(f, "ten", "u1", "res_1", 2, "T", true, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "T-A-3 T-A-4");
    /* Free 1-2, 5-7. A 2-block: 1-2 (no strand, distance 5), 5-6 (strands 7, d 3),
     * 6-7 (strands 5, d 5): 1-2 as it strands nothing. */
    assert_int_equal(best(f, "ten", "u2", "res_2", 2, "T", true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "T-A-1 T-A-2");
    /* 3 adjacent: T-A's 5-7, the only block. */
    assert_int_equal(best(f, "ten", "u3", "res_3", 3, "T", true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "T-A-5 T-A-6 T-A-7");
    /* T-A is full: 4 adjacent in T-B (12 seats): 5-8, exactly in the middle. */
    assert_int_equal(best(f, "ten", "u3", "res_4", 4, "T", true, T0 + 3, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "T-B-5 T-B-6 T-B-7 T-B-8");
    assert_int_equal(row_available(f, "ten", "T", "A"), 0);
    assert_int_equal(row_available(f, "ten", "T", "B"), 8);
    assert_rows(f, T0 + 3);
}

static void test_non_stranding_beats_closer(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* S-A (10 seats) with seat 8 taken: free 1-7, 9-10. A pair at 5-6 is the closest
     * (distance 0) but strands seat 7; 4-5 and 6-7 strand nothing at distance 2: 4-5. */
    take(f, "ten", "x", "res_x", SEATS("S-A-8"), T0);
    assert_int_equal(best(f, "ten", "u1", "res_1", 2, "S", true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-4 S-A-5");
    /* T-B (12 seats) with seat 10 taken: free 1-9, 11-12. A 4-block at 5-8 (distance 0)
     * strands 9; 4-7 and 6-9 strand nothing (distance 2): 4-7. */
    take(f, "ten", "x", "res_y", SEATS("T-B-10"), T0 + 2);
    take(f, "ten", "x", "res_z", SEATS("T-A-1", "T-A-2", "T-A-3", "T-A-4"), T0 + 3);
    assert_int_equal(best(f, "ten", "u2", "res_2", 4, "T", true, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "T-B-4 T-B-5 T-B-6 T-B-7");
    /* S-A now: free 1-3, 6-7, 9-10. A pair: 1-2 strands 3; 2-3 strands 1; 6-7 strands
     * nothing (distance 2); 9-10 nothing (distance 8): 6-7. */
    assert_int_equal(best(f, "ten", "u3", "res_3", 2, "S", true, T0 + 5, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-A-6 S-A-7");
    /* Free 1-3, 9-10. A single: 1 and 3 strand nothing (1: d 9, 3: d 5), 2 strands both
     * sides, 9 (d 7) and 10 (d 9) strand the other: 3. */
    assert_int_equal(best(f, "ten", "u4", "res_4", 1, "S", true, T0 + 6, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "S-A-3");
    assert_rows(f, T0 + 6);
}

static void test_stranding_row_still_serves(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* S-A: take 1-3 and 8-10, free 4-7. A 3-block strands a seat in every place (4-6
     * strands 7, 5-7 strands 4); row A still serves (the first row that can), 4-6 and 5-7 at
     * distance 1: 4-6. Row B, fully free, would strand nothing but comes after. */
    take(f, "ten", "x", "res_x", SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-8", "S-A-9", "S-A-10"), T0);
    assert_int_equal(best(f, "ten", "u1", "res_1", 3, NULL, true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-4 S-A-5 S-A-6");
    /* Free in A: only 7. A pair: row B. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 2, NULL, true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-B-5 S-B-6");
    assert_rows(f, T0 + 2);
}

/* Enough free seats in a row but no block long enough: the next row serves. */
static void test_row_with_enough_seats_but_no_block(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    take(f, "ten", "x", "res_x", SEATS("S-A-3", "S-A-6", "S-A-9"), T0);
    assert_int_equal(row_available(f, "ten", "S", "A"), 7);
    assert_int_equal(best(f, "ten", "u1", "res_1", 3, NULL, true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-B-4 S-B-5 S-B-6");
    /* A pair fits A: runs 1-2, 4-5, 7-8, 10. 4-5 (d 2) and 7-8 (d 4) strand nothing. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 2, NULL, true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-A-4 S-A-5");
    assert_rows(f, T0 + 2);
}

/* ---- sections ---- */

static void test_sections_order_and_filter(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* 11 adjacent: only T-B (12 seats) can: S is skipped although listed first. */
    assert_int_equal(best(f, "ten", "u1", "res_1", 11, NULL, true, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1",
                      "T-B-1 T-B-2 T-B-3 T-B-4 T-B-5 T-B-6 T-B-7 T-B-8 T-B-9 T-B-10 T-B-11");
    assert_int_equal(hold_by_id(f, "res_1")->total, 11 * 50);
    /* No section given: S first. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 2, NULL, true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-A-5 S-A-6");
    /* Section T only: T-A's middle (7 seats: 3-4 and 4-5 at distance 1: 3-4). */
    assert_int_equal(best(f, "ten", "u1", "res_3", 2, "T", true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "T-A-3 T-A-4");
    assert_int_equal(hold_by_id(f, "res_3")->total, 100);
    /* Unknown section: section_not_found, nothing changes. */
    sink_reset(f);
    uint32_t holds = hf_core_holds_active(f->core);
    assert_int_equal(best(f, "ten", "u1", "res_4", 2, "NOPE", true, T0 + 3, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_4", NULL));
    assert_int_equal(hf_core_holds_active(f->core), holds);
    /* Section ids are exact: "s" is not "S", and a section of another event is unknown. */
    assert_int_equal(best(f, "ten", "u1", "res_4", 1, "s", true, T0 + 3, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_int_equal(best(f, "lim", "u1", "res_4", 1, "T", true, T0 + 3, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_int_equal(best(f, "ten", "u1", "res_4", 1, "", false, T0 + 3, &detail),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_no_mutation(f);
    /* Section with no room: unavailable, even though S has room. T has 7-2=5 in A, 12-11=1
     * in B: no 6-block in T. */
    assert_int_equal(best(f, "ten", "u1", "res_4", 6, "T", true, T0 + 4, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_no_mutation(f);
    /* Unknown event comes first. */
    assert_int_equal(best(f, "nope", "u1", "res_4", 1, "S", true, T0 + 4, &detail),
                     HF_ERROR_EVENT_NOT_FOUND);
    assert_rows(f, T0 + 4);
}

/* ---- adjacent false ---- */

static void test_separate_middle_outwards(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* Empty 10-seat row: 5, 6, 4, 7, 3 (lower first at equal distance). */
    assert_int_equal(best(f, "ten", "u1", "res_1", 5, "S", false, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-5 S-A-6 S-A-4 S-A-7 S-A-3");
    assert_int_equal(hold_by_id(f, "res_1")->total, 500);
    /* Free 1, 2, 8, 9, 10: next ones 8, 2, 9 (distance 2.5 then 3.5: 2 before 9). */
    assert_int_equal(best(f, "ten", "u2", "res_2", 3, "S", false, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-A-8 S-A-2 S-A-9");
    /* Free 1, 10 in A; then B from its middle: 1, 10, 5, 6, 4. */
    assert_int_equal(best(f, "ten", "u3", "res_3", 5, "S", false, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-A-1 S-A-10 S-B-5 S-B-6 S-B-4");
    assert_int_equal(row_available(f, "ten", "S", "A"), 0);
    assert_int_equal(row_available(f, "ten", "S", "B"), 7);
    /* Odd row (T-A, 7 seats): 4, 3, 5, 2. */
    assert_int_equal(best(f, "ten", "u4", "res_4", 4, "T", false, T0 + 3, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "T-A-4 T-A-3 T-A-5 T-A-2");
    /* Across rows and sections: B's 7 (7,3,8,2,9,1,10), C's 9 (5,4,6,3,7,2,8,1,9), then T-A's
     * 6, 1, 7, then T-B's middle 6, 7. */
    assert_int_equal(best(f, "ten", "u5", "res_5", 21, NULL, false, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_5",
                      "S-B-7 S-B-3 S-B-8 S-B-2 S-B-9 S-B-1 S-B-10 "
                      "S-C-5 S-C-4 S-C-6 S-C-3 S-C-7 S-C-2 S-C-8 S-C-1 S-C-9 "
                      "T-A-6 T-A-1 T-A-7 T-B-6 T-B-7");
    assert_int_equal(hold_by_id(f, "res_5")->total, 16 * 100 + 5 * 50);
    /* Only 10 free seats remain (T-B): 11 separate seats do not fit, nothing is held. */
    sink_reset(f);
    assert_int_equal(best(f, "ten", "u6", "res_6", 11, NULL, false, T0 + 5, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_no_mutation(f);
    assert_int_equal(best(f, "ten", "u6", "res_6", 1, "S", false, T0 + 5, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    /* Exactly the 10 left: all of T-B's free seats, middle outwards. */
    assert_int_equal(best(f, "ten", "u6", "res_6", 10, NULL, false, T0 + 6, &detail), HF_OK);
    assert_hold_seats(f, "res_6", "T-B-5 T-B-8 T-B-4 T-B-9 T-B-3 T-B-10 T-B-2 T-B-11 T-B-1 T-B-12");
    assert_int_equal(event_of(f, "ten")->counts.available, 0);
    assert_rows(f, T0 + 6);
}

/* ---- nothing fits ---- */

static void test_nothing_fits(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* Longer than any row. */
    sink_reset(f);
    assert_int_equal(best(f, "ten", "u1", "res_1", 13, NULL, true, T0, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_int_equal(best(f, "ten", "u1", "res_1", 11, "S", true, T0, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_no_mutation(f);
    /* Checkerboard S-A: 10 seats, 5 free, no pair. */
    take(f, "lim", "x", "res_x", SEATS("S-A-1", "S-A-3", "S-A-5", "S-A-7", "S-A-9"), T0);
    take(f, "lim", "y", "res_y", SEATS("S-B-2", "S-B-4", "S-B-6", "S-B-8", "S-B-10"), T0);
    sink_reset(f);
    assert_int_equal(best(f, "lim", "u1", "res_1", 2, NULL, true, T0 + 1, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_no_mutation(f);
    assert_null(hf_core_hold_find(f->core, "res_1", NULL));
    /* Separate seats fit: A 6, 4, 8, 2, 10 then B 5. */
    assert_int_equal(best(f, "lim", "u1", "res_1", 6, NULL, false, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-6 S-A-4 S-A-8 S-A-2 S-A-10 S-B-5");
    /* A single adjacent seat: A is full; B's free 1, 3, 7, 9: 3 and 7 at distance... 3: |6-11|
     * = 5, 7: |14-11| = 3: 7 (neither strands). */
    assert_int_equal(best(f, "lim", "u2", "res_2", 1, NULL, true, T0 + 3, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-B-7");
    assert_rows(f, T0 + 3);
}

/* ---- shape and limits ---- */

static void test_best_count_against_per_hold(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* lim: at most 10 items per hold. */
    sink_reset(f);
    assert_int_equal(best(f, "lim", "u1", "res_1", 11, NULL, true, T0, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_non_null(detail.field);
    assert_string_equal(detail.field, "best_available");
    assert_int_equal(request_hold(f, "lim", "u1", "res_1", SEATS("S-A-1", "S-A-2"), NO_POOLS,
                                  BEST(9, NULL, false), false, T0, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "best_available");
    assert_int_equal(request_hold(f, "lim", "u1", "res_1", NO_SEATS, POOLS({"P", 3}),
                                  BEST(8, NULL, true), false, T0, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "best_available");
    assert_no_mutation(f);
    /* Exactly 10 is fine; a user limit of 8 still applies, so use the unlimited event too. */
    assert_int_equal(best(f, "ten", "u1", "res_1", 40, NULL, false, T0, &detail), HF_OK);
    assert_int_equal(hold_by_id(f, "res_1")->seat_count, 40);
    assert_int_equal(best(f, "ten", "u1", "res_2", 41, NULL, false, T0, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "best_available");
    /* best_count 0 with nothing else: empty request. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 0, NULL, true, T0, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_rows(f, T0);
}

static void test_user_limit_includes_best(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* lim: 8 per user. u1 holds 3 seats and 2 units. */
    assert_int_equal(request_hold(f, "lim", "u1", "res_1", SEATS("S-A-1", "S-A-2", "S-A-3"),
                                  POOLS({"P", 2}), NO_BEST, false, T0, NULL, &detail),
                     HF_OK);
    sink_reset(f);
    assert_int_equal(best(f, "lim", "u1", "res_2", 4, NULL, true, T0 + 1, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_no_mutation(f);
    assert_int_equal(request_hold(f, "lim", "u1", "res_2", SEATS("S-B-1"), NO_POOLS,
                                  BEST(3, NULL, true), false, T0 + 1, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_no_mutation(f);
    /* 3 more: exactly 8. Free 4-10: 4-6 strands nothing at distance 1 (5-7 strands 4). */
    assert_int_equal(best(f, "lim", "u1", "res_2", 3, NULL, true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-A-4 S-A-5 S-A-6");
    /* With replace_existing the replaced holds do not count: 8 fresh ones are fine. */
    assert_int_equal(request_hold(f, "lim", "u1", "res_3", NO_SEATS, NO_POOLS, BEST(8, NULL, false),
                                  true, T0 + 3, NULL, &detail),
                     HF_OK);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_RELEASED);
    assert_int_equal(hold_by_id(f, "res_2")->status, HF_HOLD_RELEASED);
    /* Everything of A is free again: A's 8 middle-most seats. */
    assert_hold_seats(f, "res_3", "S-A-5 S-A-6 S-A-4 S-A-7 S-A-3 S-A-8 S-A-2 S-A-9");
    assert_int_equal(event_of(f, "lim")->pools[0].held, 0);
    /* Bought seats count too: commit, then one more is over the limit. */
    uint32_t order = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_3", "u1", "ord_1", NULL, T0 + 4, &order), HF_OK);
    assert_int_equal(best(f, "lim", "u1", "res_4", 1, NULL, true, T0 + 5, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(request_hold(f, "lim", "u1", "res_4", NO_SEATS, NO_POOLS, BEST(1, NULL, true),
                                  true, T0 + 5, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_rows(f, T0 + 5);
}

/* ---- with named seats ---- */

static void test_with_named_seats(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    /* Named 5 and 6 (the middle) are not pickable: free for the pick 1-4, 7-10. 3-4 and 7-8
     * strand nothing at distance 4: 3-4. The hold lists the named ones first. */
    assert_int_equal(request_hold(f, "ten", "u1", "res_1", SEATS("S-A-6", "S-A-5"), POOLS({"P", 2}),
                                  BEST(2, "S", true), false, T0, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_1", "S-A-6 S-A-5 S-A-3 S-A-4");
    const hf_hold_t *h = hold_by_id(f, "res_1");
    assert_int_equal(h->seat_count, 4);
    assert_int_equal(h->pool_count, 1);
    assert_int_equal(h->total, 400 + 2 * 7);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 4);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(row_available(f, "ten", "S", "A"), 6);
    /* Separate with named seats in another row: picks skip the named. */
    assert_int_equal(request_hold(f, "ten", "u2", "res_2", SEATS("S-B-5", "S-A-7"), NO_POOLS,
                                  BEST(3, "S", false), false, T0 + 1, NULL, &detail),
                     HF_OK);
    /* A free (not named): 1, 2, 8, 9, 10: middle outwards 8, 2, 9. */
    assert_hold_seats(f, "res_2", "S-B-5 S-A-7 S-A-8 S-A-2 S-A-9");
    /* Named seats taken: seats_unavailable with their indexes, not a pick error. */
    sink_reset(f);
    assert_int_equal(request_hold(f, "ten", "u3", "res_3", SEATS("S-C-1", "S-A-5", "S-A-9"),
                                  NO_POOLS, BEST(1, NULL, true), false, T0 + 2, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 2);
    assert_int_equal(detail.items[0], 1);
    assert_int_equal(detail.items[1], 2);
    /* Unknown named seat. */
    assert_int_equal(request_hold(f, "ten", "u3", "res_3", SEATS("S-C-10"), NO_POOLS,
                                  BEST(1, NULL, true), false, T0 + 2, NULL, &detail),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_int_equal(detail.item_count, 1);
    assert_int_equal(detail.items[0], 0);
    assert_no_mutation(f);
    /* Named T-A-1 and T-A-7, 6 adjacent in T: T-A keeps only 2-6 for the pick (5 seats), so
     * T-B (12) serves: 4-9, exactly in the middle. */
    assert_int_equal(request_hold(f, "ten", "u3", "res_3", SEATS("T-A-1", "T-A-7"), NO_POOLS,
                                  BEST(6, "T", true), false, T0 + 3, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_3", "T-A-1 T-A-7 T-B-4 T-B-5 T-B-6 T-B-7 T-B-8 T-B-9");
    /* The named seat set aside leaves no block: 5 adjacent in T-A (2-6 free) when 4 is
     * named: no. T-B: 4-9 held, 1-3 and 10-12: no 5 there either: unavailable. */
    assert_int_equal(request_hold(f, "ten", "u4", "res_4", SEATS("T-A-4"), NO_POOLS,
                                  BEST(5, "T", true), false, T0 + 4, NULL, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    /* Without the named seat, T-A's 2-6 serves. */
    assert_int_equal(best(f, "ten", "u4", "res_4", 5, "T", true, T0 + 5, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "T-A-2 T-A-3 T-A-4 T-A-5 T-A-6");
    assert_rows(f, T0 + 5);
}

/* ---- replace_existing ---- */

static void test_replace_existing_picks_own_seats(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(best(f, "ten", "u1", "res_1", 4, "S", true, T0, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-4 S-A-5 S-A-6 S-A-7");
    assert_int_equal(seat_of(f, "ten", "S-A-5")->version, 2);
    /* Another user's replace does not free u1's seats: free 1-3, 8-10, every pair strands,
     * 2-3 and 8-9 tie: 2-3. */
    assert_int_equal(request_hold(f, "ten", "u2", "res_2", NO_SEATS, NO_POOLS, BEST(2, "S", true),
                                  true, T0 + 1, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_2", "S-A-2 S-A-3");
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_HELD);
    /* u1 again without replace: 4 adjacent in A no longer fit (1, 8-10): row B. */
    assert_int_equal(best(f, "ten", "u1", "res_3", 4, "S", true, T0 + 2, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-B-4 S-B-5 S-B-6 S-B-7");
    /* u1 with replace: both its holds count as free: A's 4-7 again. */
    sink_reset(f);
    assert_int_equal(request_hold(f, "ten", "u1", "res_4", NO_SEATS, NO_POOLS, BEST(4, "S", true),
                                  true, T0 + 3, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_4", "S-A-4 S-A-5 S-A-6 S-A-7");
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_RELEASED);
    assert_int_equal(hold_by_id(f, "res_3")->status, HF_HOLD_RELEASED);
    assert_int_equal(hold_by_id(f, "res_2")->status, HF_HOLD_HELD);
    /* Released and held again: version 2 -> 4; B's seats are free. */
    assert_int_equal(seat_of(f, "ten", "S-A-5")->version, 4);
    assert_int_equal(seat_of(f, "ten", "S-A-5")->status, HF_SEAT_HELD);
    assert_int_equal(seat_of(f, "ten", "S-B-5")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(row_available(f, "ten", "S", "A"), 4);
    assert_int_equal(row_available(f, "ten", "S", "B"), 10);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 8 + 4);
    assert_rows(f, T0 + 3);
    /* Separate seats with replace: u2's 2-3 count as free; free for u2 in A: 1, 2, 3, 8, 9,
     * 10 -> from the middle outwards, lower first: 3, 8, 2, 9, 1. */
    assert_int_equal(request_hold(f, "ten", "u2", "res_5", NO_SEATS, NO_POOLS, BEST(5, "S", false),
                                  true, T0 + 4, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_5", "S-A-3 S-A-8 S-A-2 S-A-9 S-A-1");
    assert_int_equal(hold_by_id(f, "res_2")->status, HF_HOLD_RELEASED);
    assert_int_equal(seat_of(f, "ten", "S-A-2")->version, 4);
    /* With named seats and replace: u1 names one of its own seats, picks 1 more. Free for u1:
     * 4-7 (its own) and 10, minus the named 5: runs 4, 6-7, 10: 4 (d 3, no strand),
     * 6 (strands 7), 7 (strands 6), 10 (d 9): 4. */
    assert_int_equal(request_hold(f, "ten", "u1", "res_6", SEATS("S-A-5"), NO_POOLS,
                                  BEST(1, "S", true), true, T0 + 5, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_6", "S-A-5 S-A-4");
    assert_int_equal(hold_by_id(f, "res_4")->status, HF_HOLD_RELEASED);
    assert_int_equal(seat_of(f, "ten", "S-A-6")->status, HF_SEAT_AVAILABLE);
    assert_rows(f, T0 + 5);
}

/* A row with no available seat at all still serves when the user's replaced hold frees it:
 * its count of available seats must not make the pick skip it. */
static void test_replace_existing_full_row(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    take(f, "ten", "x", "res_x", SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-8", "S-A-9", "S-A-10"), T0);
    take(f, "ten", "u1", "res_1", SEATS("S-A-4", "S-A-5", "S-A-6", "S-A-7"), T0);
    assert_int_equal(row_available(f, "ten", "S", "A"), 0);
    /* Without replace: row B. */
    assert_int_equal(best(f, "ten", "u1", "res_2", 4, "S", true, T0 + 1, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "S-B-4 S-B-5 S-B-6 S-B-7");
    /* With replace: A's 4-7, the front row, although it counts 0 available seats. */
    assert_int_equal(request_hold(f, "ten", "u1", "res_3", NO_SEATS, NO_POOLS, BEST(4, "S", true),
                                  true, T0 + 2, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_3", "S-A-4 S-A-5 S-A-6 S-A-7");
    assert_int_equal(row_available(f, "ten", "S", "B"), 10);
    /* Separate seats the same way: 5 and 6 of row A. */
    assert_int_equal(request_hold(f, "ten", "u1", "res_4", NO_SEATS, NO_POOLS, BEST(2, NULL, false),
                                  true, T0 + 3, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_4", "S-A-5 S-A-6");
    assert_int_equal(hold_by_id(f, "res_3")->status, HF_HOLD_RELEASED);
    assert_int_equal(row_available(f, "ten", "S", "A"), 2);
    /* A 3-block with replace: A has 4, 7 free and 5-6 u1's own: 4-6 and 5-7 both strand
     * (7 / 4), distance 1 each: 4-6. */
    assert_int_equal(request_hold(f, "ten", "u1", "res_5", NO_SEATS, NO_POOLS, BEST(3, NULL, true),
                                  true, T0 + 4, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_5", "S-A-4 S-A-5 S-A-6");
    assert_rows(f, T0 + 4);
}

/* ---- row counts through every change ---- */

static void test_row_available_through_changes(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_rows(f, T0);
    assert_int_equal(row_available(f, "ten", "T", "B"), 12);
    assert_int_equal(row_available(f, "ten", "S", "C"), 9);
    /* Hold (named and picked), release, commit, cancel, expiry, extend, replace. */
    take(f, "ten", "u1", "res_1", SEATS("S-A-1", "S-B-1", "T-B-12"), T0);
    assert_rows(f, T0);
    assert_int_equal(row_available(f, "ten", "S", "A"), 9);
    assert_int_equal(best(f, "ten", "u2", "res_2", 6, NULL, false, T0 + 1, &detail), HF_OK);
    assert_rows(f, T0 + 1);
    assert_int_equal(row_available(f, "ten", "S", "A"), 3);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 2), HF_OK);
    assert_rows(f, T0 + 2);
    assert_int_equal(row_available(f, "ten", "S", "A"), 4);
    assert_int_equal(row_available(f, "ten", "S", "B"), 10);
    uint32_t order = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_2", "u2", "ord_1", "pi", T0 + 3, &order), HF_OK);
    assert_rows(f, T0 + 3);
    assert_int_equal(row_available(f, "ten", "S", "A"), 4);
    assert_int_equal(best(f, "ten", "u3", "res_3", 10, "S", true, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_3", "S-B-1 S-B-2 S-B-3 S-B-4 S-B-5 S-B-6 S-B-7 S-B-8 S-B-9 S-B-10");
    assert_int_equal(row_available(f, "ten", "S", "B"), 0);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_753", T0 + 5), HF_OK);
    assert_rows(f, T0 + 5);
    assert_int_equal(row_available(f, "ten", "S", "A"), 10);
    bool capped = false;
    assert_int_equal(hf_core_extend(f->core, "res_3", "u3", TTL, T0 + 6, &capped), HF_OK);
    assert_rows(f, T0 + 6);
    /* Expiry by advance: res_3 now expires at T0 + 6 + TTL. */
    assert_int_equal(hf_core_advance(f->core, T0 + 6 + TTL), 1);
    assert_rows(f, T0 + 6 + TTL);
    assert_int_equal(row_available(f, "ten", "S", "B"), 10);
    /* Expiry by the request's advance, right before its command: the lapsed hold's row serves
     * the pick at once. */
    hf_time_ms_t t = T0 + 10 * TTL;
    assert_int_equal(best(f, "ten", "u4", "res_4", 10, "S", true, t, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "S-A-1 S-A-2 S-A-3 S-A-4 S-A-5 S-A-6 S-A-7 S-A-8 S-A-9 S-A-10");
    hf_core_advance(f->core, t + TTL);
    assert_int_equal(best(f, "ten", "u5", "res_5", 10, "S", true, t + TTL, &detail), HF_OK);
    assert_hold_seats(f, "res_5", "S-A-1 S-A-2 S-A-3 S-A-4 S-A-5 S-A-6 S-A-7 S-A-8 S-A-9 S-A-10");
    assert_int_equal(hold_by_id(f, "res_4")->status, HF_HOLD_EXPIRED);
    assert_rows(f, t + TTL);
    /* Replace: counts move out and back. */
    assert_int_equal(request_hold(f, "ten", "u5", "res_6", SEATS("S-A-1"), NO_POOLS,
                                  BEST(2, "T", true), true, t + TTL + 1, NULL, &detail),
                     HF_OK);
    assert_hold_seats(f, "res_6", "S-A-1 T-A-3 T-A-4");
    assert_int_equal(row_available(f, "ten", "S", "A"), 9);
    assert_int_equal(row_available(f, "ten", "T", "A"), 5);
    assert_rows(f, t + TTL + 1);
    /* A booking and its cancellation. */
    const char *ids[] = {"S-C-5", "T-B-1"};
    uint32_t versions[] = {1, 1};
    hf_hold_request_t booking = {.event_id = "ten",
                                 .user_id = "u6",
                                 .seat_ids = ids,
                                 .seat_count = 2,
                                 .seat_versions = versions,
                                 .ttl_ms = -1};
    assert_int_equal(hf_core_book(f->core, &booking, "ord_2", NULL, t + TTL + 2, &order, &detail),
                     HF_OK);
    assert_int_equal(row_available(f, "ten", "S", "C"), 8);
    assert_int_equal(row_available(f, "ten", "T", "B"), 11);
    assert_rows(f, t + TTL + 2);
    assert_int_equal(hf_core_cancel(f->core, "ord_2", "u6", "ref_789", t + TTL + 3), HF_OK);
    assert_int_equal(row_available(f, "ten", "S", "C"), 9);
    assert_rows(f, t + TTL + 3);
}

/* Rows are restored with their free counts (seats taken without reporting). */
static void test_row_available_after_restore(void **state) {
    fixture_t *f = *state;
    hf_core_t *copy = hf_core_create((hf_mutation_sink_t){0});
    assert_non_null(copy);
    assert_int_equal(hf_core_restore_event(copy, &f->defs[0].definition, T0), HF_OK);
    const char *held[] = {"S-A-4", "S-A-5", "S-A-6", "S-A-7"};
    hf_stored_hold_t hold = {.request = {.event_id = "ten",
                                         .user_id = "u1",
                                         .hold_id = "res_1",
                                         .seat_ids = held,
                                         .seat_count = 4,
                                         .ttl_ms = -1},
                             .status = HF_HOLD_HELD,
                             .created_at_ms = T0,
                             .expires_at_ms = T0 + TTL,
                             .total = 400};
    assert_int_equal(hf_core_restore_hold(copy, &hold), HF_OK);
    const char *sold[] = {"S-B-1"};
    hf_stored_order_t order = {
        .order_id = "ord_1",
        .items = {.event_id = "ten", .user_id = "u2", .seat_ids = sold, .seat_count = 1},
        .status = HF_ORDER_CONFIRMED,
        .created_at_ms = T0,
        .total = 100};
    assert_int_equal(hf_core_restore_order(copy, &order), HF_OK);
    const hf_event_t *event = hf_core_event(copy, "ten", NULL);
    assert_int_equal(event->rows[0].available, 6);
    assert_int_equal(event->rows[1].available, 9);
    assert_int_equal(event->rows[2].available, 9);
    /* The restored counts steer the pick: 4 adjacent in S: A has 1-3, 8-10: row B (1 sold)
     * 2-10 free: 4-7 (d 0, strands nothing: 2-3 and 8-10 remain). */
    hf_hold_request_t request = {.event_id = "ten",
                                 .user_id = "u3",
                                 .hold_id = "res_2",
                                 .ttl_ms = -1,
                                 .best_count = 4,
                                 .best_section = "S",
                                 .best_adjacent = true};
    uint32_t index = UINT32_MAX;
    hf_error_detail_t detail = {0};
    assert_int_equal(hf_core_hold(copy, &request, T0 + 1, &index, &detail), HF_OK);
    const hf_hold_t *h = hf_core_hold_at(copy, index);
    const hf_item_t *items = hf_core_items(copy, h->item_offset);
    char id[HF_SEAT_ID_SIZE_MAX + 1];
    hf_core_seat_id(event, items[0].index, id);
    assert_string_equal(id, "S-B-4");
    hf_core_seat_id(event, items[3].index, id);
    assert_string_equal(id, "S-B-7");
    assert_int_equal(event->rows[1].available, 5);
    assert_null(hf_core_check(copy, T0 + 1));
    hf_core_destroy(copy);
}

/* ---- a large event nearly sold out ---- */

#define BIG_ROWS 100
#define BIG_SEATS 1000

static void test_large_event_nearly_sold_out(void **state) {
    fixture_t *f = *state;
    static hf_row_definition_t rows[2][BIG_ROWS / 2];
    hf_section_definition_t sections[2];
    memset(sections, 0, sizeof sections);
    for (uint32_t s = 0; s < 2; s++) {
        snprintf(sections[s].id, sizeof sections[s].id, "%s", s ? "UPPER" : "LOWER");
        sections[s].price = s ? 10 : 20;
        sections[s].row_count = BIG_ROWS / 2;
        sections[s].rows = rows[s];
        for (uint32_t r = 0; r < BIG_ROWS / 2; r++) {
            snprintf(rows[s][r].id, sizeof rows[s][r].id, "R%u", r + 1);
            rows[s][r].seats = BIG_SEATS;
        }
    }
    hf_event_definition_t def;
    memset(&def, 0, sizeof def);
    snprintf(def.id, sizeof def.id, "big");
    snprintf(def.name, sizeof def.name, "Big");
    snprintf(def.currency, sizeof def.currency, "USD");
    def.hold_ttl_ms = TTL;
    def.max_hold_ms = MAX_HOLD;
    def.max_seats_per_user = 0;
    def.max_seats_per_hold = 1000;
    def.section_count = 2;
    def.sections = sections;
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    assert_int_equal(hf_core_event_create(f->core, &def, T0, &detail), HF_OK);
    const hf_event_t *event = event_of(f, "big");
    assert_int_equal(event->seat_count, BIG_ROWS * BIG_SEATS);
    /* 999 adjacent in a 1000-seat row: 1-999 and 2-1000 both strand and tie: 1-999. Each
     * request goes to the next row (the previous one has a single free seat). */
    char hold_id[32], order_id[32];
    for (uint32_t r = 0; r < BIG_ROWS; r++) {
        snprintf(hold_id, sizeof hold_id, "res_big_%u", r);
        assert_int_equal(best(f, "big", "buyer", hold_id, 999, NULL, true, T0 + r, &detail), HF_OK);
        const hf_hold_t *h = hold_by_id(f, hold_id);
        assert_int_equal(h->seat_count, 999);
        const hf_item_t *items = hf_core_items(f->core, h->item_offset);
        assert_int_equal(items[0].index, r * BIG_SEATS);
        assert_int_equal(items[998].index, r * BIG_SEATS + 998);
        assert_int_equal(event->rows[r].available, 1);
        if (r % 2 == 0) {
            snprintf(order_id, sizeof order_id, "ord_big_%u", r);
            uint32_t order = UINT32_MAX;
            assert_int_equal(
                hf_core_commit(f->core, hold_id, "buyer", order_id, NULL, T0 + r, &order), HF_OK);
        }
    }
    assert_int_equal(event->counts.available, BIG_ROWS);
    assert_rows(f, T0 + BIG_ROWS);
    /* No pair anywhere. */
    sink_reset(f);
    assert_int_equal(best(f, "big", "u1", "res_1", 2, NULL, true, T0 + 200, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    assert_int_equal(detail.item_count, 0);
    assert_no_mutation(f);
    /* One seat: the front row's last. */
    assert_int_equal(best(f, "big", "u1", "res_1", 1, NULL, true, T0 + 201, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "LOWER-R1-1000");
    /* Three separate ones in UPPER: the first three rows' last seats. */
    assert_int_equal(best(f, "big", "u1", "res_2", 3, "UPPER", false, T0 + 202, &detail), HF_OK);
    assert_hold_seats(f, "res_2", "UPPER-R1-1000 UPPER-R2-1000 UPPER-R3-1000");
    /* Free a sold row in the middle (row index 74 = UPPER-R25) by cancelling its order, and
     * a held one (index 77 = UPPER-R28) by releasing its hold. */
    assert_int_equal(hf_core_cancel(f->core, "ord_big_74", "buyer", "ref_910", T0 + 203), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_big_77", "buyer", T0 + 204), HF_OK);
    assert_int_equal(event->rows[74].available, 1000);
    assert_int_equal(event->rows[77].available, 1000);
    /* 1000 adjacent: the first full row, UPPER-R25, whole. */
    assert_int_equal(best(f, "big", "u2", "res_3", 1000, NULL, true, T0 + 205, &detail), HF_OK);
    const hf_hold_t *h = hold_by_id(f, "res_3");
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[0].index, 74 * BIG_SEATS);
    assert_int_equal(items[999].index, 74 * BIG_SEATS + 999);
    assert_int_equal(h->total, 1000 * 10);
    /* 4 adjacent: UPPER-R28, middle: 499-502 (2*499+3 = 1001). */
    assert_int_equal(best(f, "big", "u2", "res_4", 4, NULL, true, T0 + 206, &detail), HF_OK);
    assert_hold_seats(f, "res_4", "UPPER-R28-499 UPPER-R28-500 UPPER-R28-501 UPPER-R28-502");
    /* Separate 5 over everything: LOWER rows 2..6's seat 1000 (R1's is held by res_1). */
    assert_int_equal(best(f, "big", "u3", "res_5", 5, NULL, false, T0 + 207, &detail), HF_OK);
    assert_hold_seats(f, "res_5",
                      "LOWER-R2-1000 LOWER-R3-1000 LOWER-R4-1000 LOWER-R5-1000 LOWER-R6-1000");
    /* Expiry of the unsold 999-holds frees their rows: rows with odd index. After the TTL,
     * a 999-block goes to LOWER-R2 (index 1): its seat 1000 is held by res_5... which has
     * expired too (created at T0 + 207): everything but the committed rows is free. */
    hf_time_ms_t later = T0 + 300 + TTL;
    hf_core_advance(f->core, later);
    assert_int_equal(best(f, "big", "u4", "res_6", 1000, NULL, true, later, &detail), HF_OK);
    h = hold_by_id(f, "res_6");
    items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[0].index, 1 * BIG_SEATS);
    assert_int_equal(hold_by_id(f, "res_big_1")->status, HF_HOLD_EXPIRED);
    assert_int_equal(hold_by_id(f, "res_5")->status, HF_HOLD_EXPIRED);
    assert_int_equal(hf_core_order_find(f->core, "ord_big_0", NULL)->status, HF_ORDER_CONFIRMED);
    assert_int_equal(event->rows[0].available, 1);
    assert_rows(f, later);
}

/* ---- bookings ---- */

static hf_error_t book(fixture_t *f, const char *event_id, const char *user, const char *order_id,
                       const char *const *seats, uint32_t seat_count, const uint32_t *versions,
                       const hf_pool_request_t *pools, uint32_t pool_count, hf_time_ms_t now,
                       uint32_t *order, hf_error_detail_t *detail) {
    hf_hold_request_t request = {
        .event_id = event_id,
        .user_id = user,
        .seat_ids = seats,
        .seat_count = seat_count,
        .seat_versions = versions,
        .pools = pools,
        .pool_count = pool_count,
        .ttl_ms = -1,
    };
    uint32_t unused = UINT32_MAX;
    memset(detail, 0, sizeof *detail);
    return hf_core_book(f->core, &request, order_id, "pi_book", now, order ? order : &unused,
                        detail);
}

#define VERSIONS(...) ((const uint32_t[]){__VA_ARGS__})

static void assert_nothing_booked(fixture_t *f, const char *order_id, uint32_t orders_before) {
    assert_no_mutation(f);
    assert_null(hf_core_order_find(f->core, order_id, NULL));
    assert_null(hf_core_order_at(f->core, orders_before));
}

static void test_book_ok(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    assert_int_equal(book(f, "ten", "u1", "ord_1", SEATS("S-A-1", "T-B-3"), VERSIONS(1, 1),
                          POOLS({"P", 3}), T0, &order, &detail),
                     HF_OK);
    const hf_order_t *o = hf_core_order_at(f->core, order);
    assert_non_null(o);
    assert_ptr_equal(hf_core_order_find(f->core, "ord_1", NULL), o);
    assert_string_equal(o->id, "ord_1");
    assert_int_equal(o->hold, 0);
    assert_int_equal(o->status, HF_ORDER_CONFIRMED);
    assert_int_equal(o->created_at_ms, T0);
    assert_int_equal(o->total, 100 + 50 + 3 * 7);
    assert_int_equal(o->seat_count, 2);
    assert_int_equal(o->pool_count, 1);
    assert_string_equal(hf_core_string(f->core, o->payment_ref), "pi_book");
    assert_string_equal(hf_core_user_id(f->core, o->user), "u1");
    char text[256];
    items_text(f, o->event, o->item_offset, o->seat_count, text, sizeof text);
    assert_string_equal(text, "S-A-1 T-B-3");
    const hf_item_t *items = hf_core_items(f->core, o->item_offset);
    assert_int_equal(items[2].index, 0);
    assert_int_equal(items[2].quantity, 3);
    /* Seats straight to sold, version + 1, owned by the order. */
    const hf_seat_t *s = seat_of(f, "ten", "S-A-1");
    assert_int_equal(s->status, HF_SEAT_SOLD);
    assert_int_equal(s->version, 2);
    assert_int_equal(s->owner, order + 1);
    assert_int_equal(seat_of(f, "ten", "T-B-3")->version, 2);
    const hf_event_t *event = event_of(f, "ten");
    assert_int_equal(event->pools[0].sold, 3);
    assert_int_equal(event->pools[0].held, 0);
    assert_int_equal(event->counts.sold, 2);
    assert_int_equal(event->counts.held, 0);
    assert_int_equal(event->sections[0].counts.sold, 1);
    assert_int_equal(event->sections[1].counts.sold, 1);
    assert_int_equal(hf_core_holds_active(f->core), 0);
    /* The records: ORDER_CREATE (no hold), 3 ORDER_ITEM, 2 SEAT (sold, v2), 1 POOL. */
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_CREATE], 1);
    assert_int_equal(f->order_create_null_hold, 1);
    assert_int_equal(f->order_create_with_hold, 0);
    assert_string_equal(f->last_payment_ref, "pi_book");
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_ITEM], 3);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_CREATE], 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 0);
    assert_int_equal(f->sink.total, 7);
    const fx_record_t *created = fx_sink_first(&f->sink, HF_MUTATION_ORDER_CREATE);
    assert_string_equal(created->order_id, "ord_1");
    assert_string_equal(created->event_id, "ten");
    assert_string_equal(created->user_id, "u1");
    assert_string_equal(created->hold_id, "");
    assert_int_equal(created->total, 171);
    assert_int_equal(created->status, HF_ORDER_CONFIRMED);
    assert_int_equal(created->at_ms, T0);
    uint32_t seat_items = 0, pool_items = 0;
    for (size_t i = 0; i < f->sink.count; i++) {
        const fx_record_t *r = &f->sink.records[i];
        if (r->type == HF_MUTATION_ORDER_ITEM) {
            assert_string_equal(r->order_id, "ord_1");
            if (r->seat_id[0]) {
                seat_items++;
                assert_int_equal(r->quantity, 1);
                assert_true(strcmp(r->seat_id, "S-A-1") == 0 || strcmp(r->seat_id, "T-B-3") == 0);
            } else {
                pool_items++;
                assert_string_equal(r->pool_id, "P");
                assert_int_equal(r->quantity, 3);
            }
        } else if (r->type == HF_MUTATION_SEAT) {
            assert_int_equal(r->status, HF_SEAT_SOLD);
            assert_int_equal(r->version, 2);
            assert_int_equal(r->at_ms, T0);
        } else if (r->type == HF_MUTATION_POOL) {
            assert_string_equal(r->pool_id, "P");
            assert_int_equal(r->available, 7);
            assert_int_equal(r->held, 0);
            assert_int_equal(r->sold, 3);
        }
    }
    assert_int_equal(seat_items, 2);
    assert_int_equal(pool_items, 1);
    /* The ORDER_CREATE comes before its items and the seats. */
    assert_int_equal(f->sink.records[0].type, HF_MUTATION_ORDER_CREATE);
    uint32_t count = 0;
    const uint32_t *orders = hf_core_user_orders(f->core, "u1", &count);
    assert_non_null(orders);
    assert_int_equal(count, 1);
    assert_int_equal(orders[0], order);
    /* Pools only, no seats (no versions needed). */
    sink_reset(f);
    assert_int_equal(
        book(f, "ten", "u2", "ord_2", NULL, 0, NULL, POOLS({"P", 7}), T0 + 1, &order, &detail),
        HF_OK);
    assert_int_equal(hf_core_order_at(f->core, order)->total, 49);
    assert_int_equal(event->pools[0].sold, 10);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 0);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_ITEM], 1);
    /* Booking a seat at a higher version after a hold and release (version 3). */
    take(f, "ten", "u3", "res_1", SEATS("S-A-2"), T0 + 2);
    assert_int_equal(hf_core_release(f->core, "res_1", "u3", T0 + 3), HF_OK);
    assert_int_equal(book(f, "ten", "u2", "ord_3", SEATS("S-A-2"), VERSIONS(3), NO_POOLS, T0 + 4,
                          &order, &detail),
                     HF_OK);
    assert_int_equal(seat_of(f, "ten", "S-A-2")->version, 4);
    assert_int_equal(seat_of(f, "ten", "S-A-2")->status, HF_SEAT_SOLD);
    assert_rows(f, T0 + 4);
}

/* A refused booking names the newest change the named seats' states rest on (the engine
 * answers once that change is durable): a seat never changed rests on nothing. */
static void test_book_refusal_names_the_change_it_rests_on(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    assert_int_equal(
        book(f, "ten", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(2), NO_POOLS, T0, NULL, &detail),
        HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.observed_change, 0);
    uint64_t before = hf_core_change_count(f->core);
    take(f, "ten", "x", "res_x", SEATS("S-A-3"), T0);
    uint64_t held = hf_core_change_count(f->core);
    assert_int_equal(book(f, "ten", "u1", "ord_1", SEATS("S-A-1", "S-A-3"), VERSIONS(1, 2),
                          NO_POOLS, T0 + 1, NULL, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_true(detail.observed_change > before && detail.observed_change <= held);
    assert_int_equal(hf_core_release(f->core, "res_x", "x", T0 + 2), HF_OK);
    uint64_t released = hf_core_change_count(f->core);
    assert_int_equal(
        book(f, "ten", "u1", "ord_1", SEATS("S-A-3"), VERSIONS(2), NO_POOLS, T0 + 3, NULL, &detail),
        HF_ERROR_VERSION_CONFLICT);
    assert_true(detail.observed_change > held && detail.observed_change <= released);
    /* Refusals change nothing. */
    assert_int_equal(hf_core_change_count(f->core), released);
}

static void test_book_version_conflict(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    take(f, "ten", "x", "res_x", SEATS("S-A-3"), T0); /* held, version 2 */
    uint32_t order = UINT32_MAX;
    assert_int_equal(
        book(f, "ten", "y", "ord_y", SEATS("S-A-4"), VERSIONS(1), NO_POOLS, T0, &order, &detail),
        HF_OK); /* sold, version 2 */
    take(f, "ten", "x", "res_z", SEATS("S-A-5"), T0);
    assert_int_equal(hf_core_release(f->core, "res_z", "x", T0), HF_OK); /* free, version 3 */
    uint32_t orders = 1;
    const hf_event_t *event = event_of(f, "ten");
    int64_t pool_sold = event->pools[0].sold;
    sink_reset(f);
    /* A stale version of a free seat. */
    assert_int_equal(book(f, "ten", "u1", "ord_1", SEATS("S-A-1", "S-A-5"), VERSIONS(1, 2),
                          POOLS({"P", 1}), T0 + 1, NULL, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 1);
    assert_int_equal(detail.items[0], 1);
    assert_nothing_booked(f, "ord_1", orders);
    /* A future version. */
    assert_int_equal(
        book(f, "ten", "u1", "ord_1", SEATS("S-A-5"), VERSIONS(4), NO_POOLS, T0 + 1, NULL, &detail),
        HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 1);
    assert_int_equal(detail.items[0], 0);
    /* Held and sold seats at their exact current versions conflict too; the good seats are
     * not listed. */
    assert_int_equal(book(f, "ten", "u1", "ord_1",
                          SEATS("S-A-1", "S-A-3", "S-A-5", "S-A-4", "S-A-6"),
                          VERSIONS(1, 2, 3, 2, 1), NO_POOLS, T0 + 1, NULL, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 2);
    assert_int_equal(detail.items[0], 1);
    assert_int_equal(detail.items[1], 3);
    /* Every kind at once: stale free, held, sold. */
    assert_int_equal(book(f, "ten", "u1", "ord_1", SEATS("S-A-5", "S-A-3", "S-A-4", "S-A-7"),
                          VERSIONS(1, 1, 1, 1), POOLS({"P", 2}), T0 + 1, NULL, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 3);
    assert_int_equal(detail.items[0], 0);
    assert_int_equal(detail.items[1], 1);
    assert_int_equal(detail.items[2], 2);
    assert_nothing_booked(f, "ord_1", orders);
    /* Nothing changed: seats and pool. */
    assert_int_equal(seat_of(f, "ten", "S-A-1")->version, 1);
    assert_int_equal(seat_of(f, "ten", "S-A-1")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat_of(f, "ten", "S-A-7")->version, 1);
    assert_int_equal(seat_of(f, "ten", "S-A-3")->status, HF_SEAT_HELD);
    assert_int_equal(seat_of(f, "ten", "S-A-3")->version, 2);
    assert_int_equal(seat_of(f, "ten", "S-A-5")->version, 3);
    assert_int_equal(event->pools[0].sold, pool_sold);
    /* A seat held by the booking user is still a conflict, replace_existing or not. */
    take(f, "ten", "u1", "res_1", SEATS("S-A-8"), T0 + 2);
    sink_reset(f);
    hf_hold_request_t request = {.event_id = "ten",
                                 .user_id = "u1",
                                 .seat_ids = (const char *const[]){"S-A-8"},
                                 .seat_count = 1,
                                 .seat_versions = VERSIONS(2),
                                 .ttl_ms = -1,
                                 .replace_existing = true};
    memset(&detail, 0, sizeof detail);
    assert_int_equal(hf_core_book(f->core, &request, "ord_1", NULL, T0 + 3, &order, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 1);
    assert_int_equal(detail.items[0], 0);
    assert_nothing_booked(f, "ord_1", orders);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_HELD);
    /* A seat of a lapsed hold is free at once (the request's advance), at the version of its
     * expiry. */
    hf_core_advance(f->core, T0 + TTL);
    assert_int_equal(book(f, "ten", "u1", "ord_1", SEATS("S-A-3"), VERSIONS(3), NO_POOLS, T0 + TTL,
                          &order, &detail),
                     HF_OK);
    assert_int_equal(hold_by_id(f, "res_x")->status, HF_HOLD_EXPIRED);
    assert_int_equal(seat_of(f, "ten", "S-A-3")->version, 4);
    assert_rows(f, T0 + TTL);
}

static void test_book_errors(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    sink_reset(f);
    /* Unknown event. */
    assert_int_equal(
        book(f, "nope", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1), NO_POOLS, T0, NULL, &detail),
        HF_ERROR_EVENT_NOT_FOUND);
    /* Unknown seats: their indexes. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1", "S-C-1", "S-A-11"),
                          VERSIONS(1, 1, 1), NO_POOLS, T0, NULL, &detail),
                     HF_ERROR_SEAT_NOT_FOUND);
    assert_int_equal(detail.item_count, 2);
    assert_int_equal(detail.items[0], 1);
    assert_int_equal(detail.items[1], 2);
    /* Unknown pool. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1),
                          POOLS({"P", 1}, {"Q", 1}), T0, NULL, &detail),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(detail.pool, 1);
    /* Not enough units: P has 5. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1), POOLS({"P", 6}), T0,
                          NULL, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 5);
    assert_null(hf_core_order_find(f->core, "ord_1", NULL));
    assert_int_equal(seat_of(f, "lim", "S-A-1")->version, 1);
    assert_no_mutation(f);
    assert_rows(f, T0);
}

static void test_book_insufficient_and_limits(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    /* lim: pool P of 5, 8 per user, 10 per hold. Another user holds 3 units. */
    assert_int_equal(request_hold(f, "lim", "x", "res_x", NO_SEATS, POOLS({"P", 3}), NO_BEST, false,
                                  T0, NULL, &detail),
                     HF_OK);
    sink_reset(f);
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1), POOLS({"P", 3}), T0,
                          NULL, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 2);
    assert_nothing_booked(f, "ord_1", 0);
    /* User limit: u1 holds 6 seats; a booking of 3 passes 8. */
    take(f, "lim", "u1", "res_1", SEATS("S-B-1", "S-B-2", "S-B-3", "S-B-4", "S-B-5", "S-B-6"), T0);
    sink_reset(f);
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1", "S-A-2"), VERSIONS(1, 1),
                          POOLS({"P", 1}), T0, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_nothing_booked(f, "ord_1", 0);
    /* 2 is fine: exactly 8. Then anything more is over, bought units counting. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1), POOLS({"P", 1}), T0,
                          &order, &detail),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_1", "u1", T0 + 1), HF_OK);
    /* 2 bought: 6 more fine, 7 not. */
    assert_int_equal(best(f, "lim", "u1", "res_2", 7, NULL, true, T0 + 2, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(book(f, "lim", "u1", "ord_2",
                          SEATS("S-B-1", "S-B-2", "S-B-3", "S-B-4", "S-B-5", "S-B-6"),
                          VERSIONS(3, 3, 3, 3, 3, 3), POOLS({"P", 1}), T0 + 2, NULL, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(book(f, "lim", "u1", "ord_2",
                          SEATS("S-B-1", "S-B-2", "S-B-3", "S-B-4", "S-B-5", "S-B-6"),
                          VERSIONS(3, 3, 3, 3, 3, 3), NO_POOLS, T0 + 2, NULL, &detail),
                     HF_OK);
    assert_rows(f, T0 + 2);
}

/* replace_existing means nothing to a booking: the user's holds are neither released nor
 * counted as free (seats, pool units, user limit). */
static void test_book_ignores_replace(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    /* lim: P of 5, 8 per user. u1 holds 3 units and 4 seats. */
    assert_int_equal(request_hold(f, "lim", "u1", "res_1",
                                  SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4"), POOLS({"P", 3}),
                                  NO_BEST, false, T0, NULL, &detail),
                     HF_OK);
    hf_hold_request_t request = {.event_id = "lim",
                                 .user_id = "u1",
                                 .ttl_ms = -1,
                                 .replace_existing = true,
                                 .pools = (const hf_pool_request_t[]){{"P", 3}},
                                 .pool_count = 1};
    sink_reset(f);
    memset(&detail, 0, sizeof detail);
    assert_int_equal(hf_core_book(f->core, &request, "ord_1", NULL, T0 + 1, &order, &detail),
                     HF_ERROR_INSUFFICIENT_QUANTITY);
    assert_int_equal(detail.pool, 0);
    assert_int_equal(detail.available, 2);
    assert_nothing_booked(f, "ord_1", 0);
    /* 2 units fit the pool, but 4 + 3 + 2 passes 8 with the held units counted. */
    request.pools = (const hf_pool_request_t[]){{"P", 2}};
    memset(&detail, 0, sizeof detail);
    assert_int_equal(hf_core_book(f->core, &request, "ord_1", NULL, T0 + 1, &order, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_nothing_booked(f, "ord_1", 0);
    /* 1 unit: fine, and the hold stays held. */
    request.pools = (const hf_pool_request_t[]){{"P", 1}};
    assert_int_equal(hf_core_book(f->core, &request, "ord_1", NULL, T0 + 1, &order, &detail),
                     HF_OK);
    assert_int_equal(hold_by_id(f, "res_1")->status, HF_HOLD_HELD);
    assert_int_equal(f->sink.by_type[HF_MUTATION_HOLD_UPDATE], 0);
    const hf_event_t *event = event_of(f, "lim");
    assert_int_equal(event->pools[0].held, 3);
    assert_int_equal(event->pools[0].sold, 1);
    assert_int_equal(seat_of(f, "lim", "S-A-1")->status, HF_SEAT_HELD);
    assert_rows(f, T0 + 1);
}

static void test_book_invalid_shapes(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    sink_reset(f);
    /* Empty. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", NULL, 0, NULL, NO_POOLS, T0, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_non_null(detail.field);
    /* Empty and too long user ids. */
    assert_int_equal(
        book(f, "lim", "", "ord_1", SEATS("S-A-1"), VERSIONS(1), NO_POOLS, T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "user_id");
    char long_user[HF_USER_ID_SIZE_MAX + 2];
    memset(long_user, 'u', sizeof long_user - 1);
    long_user[sizeof long_user - 1] = '\0';
    assert_int_equal(book(f, "lim", long_user, "ord_1", SEATS("S-A-1"), VERSIONS(1), NO_POOLS, T0,
                          NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "user_id");
    /* Duplicate seats, duplicate pools, zero quantity. */
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-1", "S-A-1"), VERSIONS(1, 1),
                          NO_POOLS, T0, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "seats");
    assert_int_equal(
        book(f, "lim", "u1", "ord_1", NO_SEATS, NULL, POOLS({"P", 1}, {"P", 1}), T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "pools");
    assert_int_equal(
        book(f, "lim", "u1", "ord_1", NO_SEATS, NULL, POOLS({"P", 0}), T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "pools");
    /* More than 10 items per hold (7 seats + 4 units). */
    assert_int_equal(book(f, "lim", "u1", "ord_1",
                          SEATS("S-A-1", "S-A-2", "S-A-3", "S-A-4", "S-A-5", "S-A-6", "S-A-7"),
                          VERSIONS(1, 1, 1, 1, 1, 1, 1), POOLS({"P", 4}), T0, NULL, &detail),
                     HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "seats");
    /* Seats without versions. */
    assert_int_equal(
        book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), NULL, NO_POOLS, T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_string_equal(detail.field, "seats");
    /* A missing or already used order id. */
    assert_int_equal(
        book(f, "lim", "u1", NULL, SEATS("S-A-1"), VERSIONS(1), NO_POOLS, T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_no_mutation(f);
    assert_int_equal(
        book(f, "lim", "u1", "ord_1", SEATS("S-A-1"), VERSIONS(1), NO_POOLS, T0, NULL, &detail),
        HF_OK);
    sink_reset(f);
    assert_int_equal(
        book(f, "lim", "u2", "ord_1", SEATS("S-A-2"), VERSIONS(1), NO_POOLS, T0, NULL, &detail),
        HF_ERROR_INVALID_REQUEST);
    assert_no_mutation(f);
    assert_int_equal(seat_of(f, "lim", "S-A-2")->status, HF_SEAT_AVAILABLE);
    assert_rows(f, T0);
}

static void test_book_cancel(void **state) {
    fixture_t *f = *state;
    hf_error_detail_t detail;
    uint32_t order = UINT32_MAX;
    assert_int_equal(book(f, "lim", "u1", "ord_1", SEATS("S-A-5", "S-A-6"), VERSIONS(1, 1),
                          POOLS({"P", 2}), T0, &order, &detail),
                     HF_OK);
    /* u1 has 4 of 8: 5 more is over. */
    assert_int_equal(best(f, "lim", "u1", "res_1", 5, NULL, true, T0 + 1, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    sink_reset(f);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u2", "ref_1374", T0 + 2),
                     HF_ERROR_NOT_OWNER);
    assert_no_mutation(f);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1376", T0 + 2), HF_OK);
    const hf_order_t *o = hf_core_order_at(f->core, order);
    assert_int_equal(o->status, HF_ORDER_CANCELLED);
    assert_int_equal(o->hold, 0);
    assert_int_equal(seat_of(f, "lim", "S-A-5")->status, HF_SEAT_AVAILABLE);
    assert_int_equal(seat_of(f, "lim", "S-A-5")->version, 3);
    assert_int_equal(seat_of(f, "lim", "S-A-5")->owner, 0);
    const hf_event_t *event = event_of(f, "lim");
    assert_int_equal(event->pools[0].sold, 0);
    assert_int_equal(event->counts.available, 20);
    assert_int_equal(f->sink.by_type[HF_MUTATION_ORDER_UPDATE], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_SEAT], 2);
    assert_int_equal(f->sink.by_type[HF_MUTATION_POOL], 1);
    assert_int_equal(f->sink.by_type[HF_MUTATION_REFUND], 1); /* the booking was paid */
    assert_int_equal(f->sink.total, 5);
    const fx_record_t *pool_record = fx_sink_first(&f->sink, HF_MUTATION_POOL);
    assert_int_equal(pool_record->available, 5);
    assert_int_equal(pool_record->sold, 0);
    /* Repeat: same answer, nothing. */
    sink_reset(f);
    assert_int_equal(hf_core_cancel(f->core, "ord_1", "u1", "ref_1395", T0 + 3), HF_OK);
    assert_no_mutation(f);
    /* The units no longer count: 8 is fine, and the row is whole again: 2-9 would be in the
     * middle but strands 1 and 10; 1-8 and 3-10 strand nothing at distance 2: 1-8. */
    assert_int_equal(best(f, "lim", "u1", "res_1", 8, NULL, true, T0 + 4, &detail), HF_OK);
    assert_hold_seats(f, "res_1", "S-A-1 S-A-2 S-A-3 S-A-4 S-A-5 S-A-6 S-A-7 S-A-8");
    assert_int_equal(seat_of(f, "lim", "S-A-5")->version, 4);
    /* The version a client read before the cancellation (2) is stale now. */
    assert_int_equal(book(f, "lim", "u2", "ord_2", SEATS("S-B-1", "S-A-5"), VERSIONS(1, 2),
                          NO_POOLS, T0 + 5, NULL, &detail),
                     HF_ERROR_VERSION_CONFLICT);
    assert_int_equal(detail.item_count, 1);
    assert_int_equal(detail.items[0], 1);
    assert_rows(f, T0 + 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_adjacent_even_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adjacent_odd_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adjacent_even_block_odd_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_stranding_beats_closer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stranding_row_still_serves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_with_enough_seats_but_no_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sections_order_and_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_separate_middle_outwards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_fits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_best_count_against_per_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_limit_includes_best, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_named_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_existing_picks_own_seats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_existing_full_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_available_through_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_available_after_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_event_nearly_sold_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_version_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_refusal_names_the_change_it_rests_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_book_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_insufficient_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_ignores_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_invalid_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_cancel, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
