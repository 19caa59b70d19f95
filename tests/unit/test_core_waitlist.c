/* Unit tests of waitlists in the core (core/waitlist/, API.md section 14): the setting, joins
 * (one entry per user and event, positions, the checks), freed seats and units offered in the
 * step that freed them to the first entry they can fill (adjacent seats, entries that cannot be
 * filled keeping their place), offers fulfilled, lapsed and cancelled, and the matching against
 * a brute-force model over random operations. The fixture is core_cases.h's ("open": section S
 * of 2 rows of 20 seats, pool P of 100, no user limit, 10 items per hold). */
#include <stdio.h>

#include "core_cases.h"
#include "core/internal.h" /* a hold's items */
#include "core/jobs.h"

#define OFFER_TTL INT64_C(60000)

static void configure(fixture_t *f) {
    assert_int_equal(hf_core_waitlist_configure(f->core, "open", true, OFFER_TTL), HF_OK);
}

static hf_error_t join(fixture_t *f, const char *user, const char *id, const char *section,
                       const char *pool, uint32_t quantity, hf_time_ms_t now,
                       hf_waitlist_view_t *view, bool *existing) {
    hf_waitlist_request_t request = {.event_id = "open",
                                     .user_id = user,
                                     .waitlist_id = id,
                                     .section = section,
                                     .pool = pool,
                                     .quantity = quantity};
    return hf_core_waitlist_join(f->core, &request, now, view, existing);
}

static hf_waitlist_view_t entry(fixture_t *f, const char *id) {
    hf_waitlist_view_t view;
    assert_int_equal(hf_core_waitlist_get(f->core, "open", id, &view), HF_OK);
    return view;
}

/* Every seat of S held by "u0": res_h0 S-A-1, res_h1 S-A-2..3, res_h2 S-A-4..13, res_h3
 * S-A-14..20, res_h4 S-B-1..10, res_h5 S-B-11..20. */
static void sell_out(fixture_t *f) {
    static const struct {
        char row;
        uint32_t first, count;
    } HOLDS[] = {{'A', 1, 1}, {'A', 2, 2}, {'A', 4, 10}, {'A', 14, 7}, {'B', 1, 10}, {'B', 11, 10}};
    for (uint32_t h = 0; h < 6; h++) {
        char ids[10][16], hold_id[16];
        const char *seats[10];
        for (uint32_t i = 0; i < HOLDS[h].count; i++) {
            snprintf(ids[i], sizeof ids[i], "S-%c-%u", HOLDS[h].row, HOLDS[h].first + i);
            seats[i] = ids[i];
        }
        snprintf(hold_id, sizeof hold_id, "res_h%u", h);
        uint32_t index;
        assert_int_equal(hold_on(f, "open", "u0", hold_id, seats, HOLDS[h].count, NO_POOLS, -1,
                                 false, T0, &index, NULL),
                         HF_OK);
    }
}

static uint8_t status_of(fixture_t *f, const char *id) { return entry(f, id).status; }

static void test_setting_and_join_checks(void **state) {
    fixture_t *f = *state;
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing),
                     HF_ERROR_WAITLIST_DISABLED);
    configure(f);
    assert_int_equal(join(f, "u1", "w_1", "NOPE", NULL, 1, T0, &view, &existing),
                     HF_ERROR_SECTION_NOT_FOUND);
    assert_int_equal(join(f, "u1", "w_1", NULL, "NOPE", 1, T0, &view, &existing),
                     HF_ERROR_POOL_NOT_FOUND);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 0, T0, &view, &existing),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 11, T0, &view, &existing),
                     HF_ERROR_INVALID_REQUEST);
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 2, T0, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.status, HF_WAITLIST_WAITING);
    assert_int_equal(view.position, 1);
    /* Again for the same user and event: the same entry, whatever the new request asks. */
    assert_int_equal(join(f, "u1", "w_other", NULL, "P", 3, T0, &view, &existing), HF_OK);
    assert_true(existing);
    assert_string_equal(view.waitlist_id, "w_1");
    assert_int_equal(view.quantity, 2);
    assert_int_equal(hf_core_waitlist_get(f->core, "open", "w_other", &view),
                     HF_ERROR_WAITLIST_NOT_FOUND);
    assert_int_equal(hf_core_waitlist_get(f->core, "show", "w_1", &view),
                     HF_ERROR_WAITLIST_NOT_FOUND);
}

static void test_positions_and_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_2", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u3", "w_3", NULL, "P", 1, T0, &view, &existing), HF_OK);
    assert_int_equal(view.position, 3);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u1", T0, &view),
                     HF_ERROR_NOT_OWNER);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", T0, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(entry(f, "w_3").position, 2);
    assert_int_equal(entry(f, "w_1").position, 1);
    /* A done entry answers as it is; the user may join again, at the back. */
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", T0, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(join(f, "u2", "w_2b", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.position, 3);
    hf_waitlist_view_t views[4];
    bool more;
    assert_int_equal(hf_core_waitlist_list(f->core, "open", false, 0, -1, 2, views, &more), 2);
    assert_true(more);
    assert_string_equal(views[1].waitlist_id, "w_2");
    assert_int_equal(hf_core_waitlist_list(f->core, "open", true, HF_WAITLIST_WAITING,
                                           (int64_t)views[1].sequence, 4, views, &more),
                     2);
    assert_false(more);
    assert_string_equal(views[0].waitlist_id, "w_3");
    assert_string_equal(views[1].waitlist_id, "w_2b");
}

/* Entries w_big (3 seats of S) and w_one (1 seat, any section) on a sold-out S: one freed
 * seat skips w_big, which keeps its place, and goes to w_one; two more are still too few for
 * w_big; ten more give it 3 adjacent ones and the other 9 go back on sale. */
static void test_first_fillable_and_adjacency(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_big", "S", NULL, 3, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_one", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_WAITING);
    assert_int_equal(entry(f, "w_big").position, 1);
    view = entry(f, "w_one");
    assert_int_equal(view.status, HF_WAITLIST_OFFERED);
    assert_int_equal(view.expires_at_ms, T0 + 1 + OFFER_TTL);
    assert_string_equal(view.reservation_id, "res_one");
    uint32_t index;
    const hf_hold_t *offer = hf_core_hold_find(f->core, "res_one", &index);
    assert_int_equal(offer->seat_count, 1);
    assert_string_equal(hf_core_hold_waitlist_id(f->core, index), "w_one");
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    assert_int_equal(event_of(f, "open")->counts.available, 0);

    assert_int_equal(hf_core_release(f->core, "res_h1", "u0", T0 + 2), HF_OK);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_WAITING);
    assert_int_equal(event_of(f, "open")->counts.available, 2);
    assert_int_equal(hf_core_release(f->core, "res_h2", "u0", T0 + 3), HF_OK);
    assert_consistent(f, T0 + 3);
    assert_int_equal(status_of(f, "w_big"), HF_WAITLIST_OFFERED);
    offer = hf_core_hold_find(f->core, "res_big", &index);
    assert_int_equal(offer->seat_count, 3);
    const hf_item_t *items = f->core->items + offer->item_offset;
    for (uint32_t i = 1; i < 3; i++) assert_int_equal(items[i].index, items[0].index + i);
    assert_int_equal(event_of(f, "open")->counts.available, 9);
}

/* How many SEAT records of the seat the sink holds with the status. */
static uint32_t seat_records(fixture_t *f, const char *seat_id, int status) {
    uint32_t count = 0;
    for (size_t i = 0; i < f->sink.count; i++)
        count += f->sink.records[i].type == HF_MUTATION_SEAT &&
                 strcmp(f->sink.records[i].seat_id, seat_id) == 0 &&
                 f->sink.records[i].status == status;
    return count;
}

/* A seat the waitlist takes in the step that freed it is never told available (the stream
 * shows it held); one that fills no entry is told available once. */
static void test_the_stream_never_shows_an_offered_seat_available(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_two", "S", NULL, 2, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_one", "S", NULL, 1, T0, &view, &existing), HF_OK);
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_int_equal(status_of(f, "w_one"), HF_WAITLIST_OFFERED);
    assert_int_equal(seat_records(f, "S-A-1", HF_SEAT_AVAILABLE), 0);
    assert_int_equal(seat_records(f, "S-A-1", HF_SEAT_HELD), 1);
    /* Ten seats free for one entry of two: eight are told available, two held. */
    fx_sink_reset(&f->sink);
    assert_int_equal(hf_core_release(f->core, "res_h2", "u0", T0 + 2), HF_OK);
    uint32_t available = 0, held = 0;
    for (uint32_t n = 4; n <= 13; n++) {
        char seat_id[16];
        snprintf(seat_id, sizeof seat_id, "S-A-%u", n);
        available += seat_records(f, seat_id, HF_SEAT_AVAILABLE);
        held += seat_records(f, seat_id, HF_SEAT_HELD);
    }
    assert_int_equal(available, 8);
    assert_int_equal(held, 2);
    assert_consistent(f, T0 + 2);
}

/* An offer that lapses makes its entry lapsed and goes to the next entry; a committed offer
 * is fulfilled; a cancelled offered entry releases its hold to the next. */
static void test_lapse_commit_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_2", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u3", "w_3", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_OFFERED);
    assert_int_equal(entry(f, "w_2").position, 1);
    hf_core_advance(f->core, T0 + 1 + OFFER_TTL);
    assert_consistent(f, T0 + 1 + OFFER_TTL);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_LAPSED);
    assert_int_equal(status_of(f, "w_2"), HF_WAITLIST_OFFERED);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    hf_time_ms_t now = T0 + 2 + OFFER_TTL;
    hf_core_advance(f->core, now);
    assert_int_equal(hf_core_waitlist_cancel(f->core, "open", "w_2", "u2", now, &view), HF_OK);
    assert_int_equal(view.status, HF_WAITLIST_CANCELLED);
    assert_int_equal(hf_core_hold_find(f->core, "res_2", NULL)->status, HF_HOLD_RELEASED);
    assert_int_equal(status_of(f, "w_3"), HF_WAITLIST_OFFERED);
    uint32_t index;
    assert_int_equal(hf_core_commit(f->core, "res_3", "u3", "ord_3", NULL, now, &index), HF_OK);
    assert_int_equal(status_of(f, "w_3"), HF_WAITLIST_FULFILLED);
    assert_consistent(f, now);
    /* The lapsed user joins again, at the back. */
    assert_int_equal(join(f, "u1", "w_1b", "S", NULL, 1, now, &view, &existing), HF_OK);
    assert_false(existing);
    assert_int_equal(view.position, 1);
}

/* An offer is a hold of TTL offer_ttl_s even past the event's max_hold_s (the setting allows
 * up to 30 days): found by the simulation, where such an offer was refused as a hold whose
 * ttl_s is over max_hold_s, so the entry stayed waiting and the seat went back on sale. */
static void test_an_offer_may_outlast_max_hold(void **state) {
    fixture_t *f = *state;
    int64_t offer_ttl = MAX_HOLD + 60000;
    assert_int_equal(hf_core_waitlist_configure(f->core, "open", true, offer_ttl), HF_OK);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    view = entry(f, "w_1");
    assert_int_equal(view.status, HF_WAITLIST_OFFERED);
    assert_int_equal(view.expires_at_ms, T0 + 1 + offer_ttl);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    assert_consistent(f, T0 + 1);
    hf_core_advance(f->core, T0 + 1 + offer_ttl);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_LAPSED);
}

/* A cancelled event's entries are cancelled in the cancel's step, the offered one too (its
 * hold released, not lapsed, and nothing offered to the next); joins then answer
 * event_cancelled. */
static void test_an_event_cancel_cancels_its_entries(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_2", "S", NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u3", "w_3", NULL, "P", 2, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0 + 1), HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_OFFERED);
    hf_cancel_request_t request = {.job_id = "job_1", .offer_ttl_ms = 60000};
    hf_error_detail_t detail = {0};
    uint32_t job;
    assert_int_equal(hf_core_event_cancel(f->core, "open", &request, T0 + 2, &detail, &job), HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_CANCELLED);
    assert_int_equal(status_of(f, "w_2"), HF_WAITLIST_CANCELLED);
    assert_int_equal(status_of(f, "w_3"), HF_WAITLIST_CANCELLED);
    assert_int_equal(hf_core_hold_find(f->core, "res_1", NULL)->status, HF_HOLD_RELEASED);
    assert_null(hf_core_hold_find(f->core, "res_2", NULL));
    uint64_t counts[HF_WAITLIST_CANCELLED + 1];
    assert_true(hf_core_waitlist_counts(f->core, counts));
    assert_int_equal(counts[HF_WAITLIST_CANCELLED], 3);
    assert_int_equal(counts[HF_WAITLIST_WAITING] + counts[HF_WAITLIST_OFFERED], 0);
    assert_int_equal(join(f, "u4", "w_4", "S", NULL, 1, T0 + 3, &view, &existing),
                     HF_ERROR_EVENT_CANCELLED);
    assert_int_equal(join(f, "u1", "w_1c", "S", NULL, 1, T0 + 3, &view, &existing),
                     HF_ERROR_EVENT_CANCELLED);
    while (hf_core_job_step(f->core, 1000, T0 + 4) > 0) {
    }
    assert_int_equal(status_of(f, "w_2"), HF_WAITLIST_CANCELLED);
    assert_consistent(f, T0 + 4);
}

/* The staff's list by status pages through its own entries only, in join order, as entries
 * change status (the per-status trees), across the join numbers' growth. */
static void test_the_list_by_status_pages_in_join_order(void **state) {
    fixture_t *f = *state;
    configure(f);
    enum { JOINS = 300 };
    hf_waitlist_view_t view;
    bool existing;
    char user[16], id[16];
    for (uint32_t i = 0; i < JOINS; i++) {
        snprintf(user, sizeof user, "u%u", i);
        snprintf(id, sizeof id, "w_%u", i);
        assert_int_equal(join(f, user, id, "S", NULL, 1, T0, &view, &existing), HF_OK);
    }
    for (uint32_t i = 0; i < JOINS; i += 3) {
        snprintf(user, sizeof user, "u%u", i);
        snprintf(id, sizeof id, "w_%u", i);
        assert_int_equal(hf_core_waitlist_cancel(f->core, "open", id, user, T0 + 1, &view), HF_OK);
    }
    /* Waiting: the entries not a multiple of 3; cancelled: the multiples; offered: none. */
    static const uint8_t STATUSES[] = {HF_WAITLIST_WAITING, HF_WAITLIST_CANCELLED,
                                       HF_WAITLIST_OFFERED};
    for (uint32_t k = 0; k < 3; k++) {
        hf_waitlist_view_t views[7];
        bool more = true;
        int64_t after = -1;
        uint32_t seen = 0, next = 0;
        while (more) {
            uint32_t count = hf_core_waitlist_list(f->core, "open", true, STATUSES[k], after, 7,
                                                   views, &more);
            for (uint32_t v = 0; v < count; v++) {
                while (next < JOINS && (next % 3 == 0) != (k == 1)) next++;
                snprintf(id, sizeof id, "w_%u", next++);
                assert_string_equal(views[v].waitlist_id, id);
                assert_int_equal(views[v].status, STATUSES[k]);
                seen++;
            }
            if (count) after = views[count - 1].sequence;
            assert_true(count == 7 || !more);
        }
        assert_int_equal(seen, k == 0 ? JOINS - JOINS / 3 : k == 1 ? JOINS / 3 : 0);
    }
    assert_consistent(f, T0 + 1);
}

/* An exchange's old seat comes free when the exchange commits: the waitlist has it, in the
 * same step. */
static void test_an_exchange_frees_its_old_seat_to_the_waitlist(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    uint32_t index;
    assert_int_equal(hf_core_commit(f->core, "res_h0", "u0", "ord_old", NULL, T0, &index), HF_OK);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_1", "S", NULL, 1, T0, &view, &existing), HF_OK);
    hf_hold_request_t request = {.event_id = "open",
                                 .user_id = "u0",
                                 .hold_id = "res_x",
                                 .pools = POOLS({"P", 1}),
                                 .ttl_ms = -1,
                                 .exchange_for = "ord_old"};
    assert_int_equal(fx_hold(f->core, &request, T0 + 1, &index, NULL), HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_WAITING);
    assert_int_equal(hf_core_commit(f->core, "res_x", "u0", "ord_new", NULL, T0 + 2, &index),
                     HF_OK);
    assert_int_equal(status_of(f, "w_1"), HF_WAITLIST_OFFERED);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_HELD);
    assert_consistent(f, T0 + 2);
}

/* Pool units: a cancelled order's units go to the first entry they can fill. */
static void test_pool_units_from_a_cancel(void **state) {
    fixture_t *f = *state;
    configure(f);
    uint32_t index;
    assert_int_equal(hold_on(f, "open", "u0", "res_all", NO_SEATS, POOLS({"P", 10}), -1, false, T0,
                             &index, NULL),
                     HF_OK);
    for (uint32_t i = 0; i < 9; i++) {
        char hold_id[16];
        snprintf(hold_id, sizeof hold_id, "res_p%u", i);
        assert_int_equal(hold_on(f, "open", "u9", hold_id, NO_SEATS, POOLS({"P", 10}), -1, false,
                                 T0, &index, NULL),
                         HF_OK);
    }
    assert_int_equal(hf_core_commit(f->core, "res_all", "u0", "ord_all", NULL, T0, &index), HF_OK);
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_many", NULL, "P", 10, T0, &view, &existing), HF_OK);
    assert_int_equal(join(f, "u2", "w_few", NULL, "P", 4, T0, &view, &existing), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_all", "u0", NULL, T0 + 1), HF_OK);
    assert_consistent(f, T0 + 1);
    assert_int_equal(status_of(f, "w_many"), HF_WAITLIST_OFFERED);
    assert_int_equal(status_of(f, "w_few"), HF_WAITLIST_WAITING);
    const hf_event_t *event = event_of(f, "open");
    assert_int_equal(event->pools[0].held, 100);
}

/* Entries restored (as the store loads them, join numbers kept) come back with the same
 * positions and offers, and the line goes on from them: the next join is at the back. */
static void test_restore_keeps_positions_and_offers(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    uint32_t index;
    /* The offer's hold, held, as the holds load before the entries. */
    assert_int_equal(hf_core_release(f->core, "res_h0", "u0", T0), HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_abc", SEATS("S-A-1"), NO_POOLS, OFFER_TTL, false,
                             T0, &index, NULL),
                     HF_OK);
    const hf_stored_waitlist_t stored[] = {
        {.waitlist_id = "w_abc",
         .event_id = "open",
         .user_id = "u1",
         .section = "S",
         .hold_id = "res_abc",
         .quantity = 1,
         .sequence = 0,
         .status = HF_WAITLIST_OFFERED},
        {.waitlist_id = "w_gone",
         .event_id = "open",
         .user_id = "u2",
         .quantity = 1,
         .sequence = 1,
         .status = HF_WAITLIST_CANCELLED},
        {.waitlist_id = "w_two",
         .event_id = "open",
         .user_id = "u3",
         .quantity = 2,
         .sequence = 2,
         .status = HF_WAITLIST_WAITING},
        {.waitlist_id = "w_p",
         .event_id = "open",
         .user_id = "u4",
         .pool = "P",
         .quantity = 3,
         .sequence = 5,
         .status = HF_WAITLIST_WAITING},
    };
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(hf_core_restore_waitlist(f->core, &stored[i]), HF_OK);
    hf_stored_waitlist_t orphan = stored[0];
    orphan.waitlist_id = "w_orphan";
    orphan.hold_id = "res_none";
    assert_int_equal(hf_core_restore_waitlist(f->core, &orphan), HF_ERROR_HOLD_NOT_FOUND);
    assert_consistent(f, T0);
    assert_int_equal(entry(f, "w_two").position, 1);
    assert_int_equal(entry(f, "w_p").position, 2);
    uint32_t hold_index;
    assert_non_null(hf_core_hold_find(f->core, "res_abc", &hold_index));
    assert_string_equal(hf_core_hold_waitlist_id(f->core, hold_index), "w_abc");
    hf_waitlist_view_t view;
    bool existing;
    assert_int_equal(join(f, "u1", "w_again", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_true(existing); /* u1's offered entry */
    assert_int_equal(join(f, "u5", "w_new", NULL, NULL, 1, T0, &view, &existing), HF_OK);
    assert_int_equal(view.sequence, 6);
    assert_int_equal(view.position, 3);
    /* The offer lapses: its seat goes to the first entry it can fill, w_new (w_two asks 2). */
    hf_core_advance(f->core, T0 + OFFER_TTL);
    assert_int_equal(status_of(f, "w_abc"), HF_WAITLIST_LAPSED);
    assert_int_equal(status_of(f, "w_two"), HF_WAITLIST_WAITING);
    assert_int_equal(status_of(f, "w_new"), HF_WAITLIST_OFFERED);
    assert_consistent(f, T0 + OFFER_TTL);
}

/* ---- the matching against a brute-force model ----
 *
 * Random joins (S, any section or P; quantities 1 to 4), releases of public holds and of
 * offers, and expiries, on "open". The model keeps each entry's status and, after every
 * operation that freed inventory, scans every waiting entry in join order, offering each one
 * the free counts can fill (S and any section share the seats; P its units), as the contract
 * reads. The core must agree on every entry's status after every operation. */
#define MODEL_ENTRIES 60

typedef struct model_entry {
    char id[16], user[16];
    uint32_t target; /* 0 any, 1 S, 2 P */
    uint32_t quantity;
    uint8_t status;
} model_entry_t;

/* The free counts before this operation's offers: the core's now, plus what the offers made
 * in it hold (holds that did not exist before it). */
static void model_match(fixture_t *f, model_entry_t *entries, uint32_t count, bool seats_freed,
                        bool units_freed, const uint8_t *before, uint32_t before_count) {
    const hf_event_t *event = event_of(f, "open");
    int64_t seats = event->counts.available;
    int64_t units = event->pools[0].capacity - event->pools[0].held - event->pools[0].sold;
    for (uint32_t i = 0; i < count; i++) {
        char hold_id[24];
        snprintf(hold_id, sizeof hold_id, "res_%s", entries[i].id + 2);
        const hf_hold_t *hold = hf_core_hold_find(f->core, hold_id, NULL);
        bool made_now = 16 + i >= before_count || before[16 + i] == UINT8_MAX;
        if (!hold || !made_now) continue;
        *(entries[i].target == 2 ? &units : &seats) += entries[i].quantity;
    }
    for (uint32_t i = 0; i < count; i++) {
        model_entry_t *e = &entries[i];
        if (e->status != HF_WAITLIST_WAITING) continue;
        if (!(e->target == 2 ? units_freed : seats_freed)) continue;
        int64_t *free = e->target == 2 ? &units : &seats;
        if (*free < e->quantity) continue;
        *free -= e->quantity;
        e->status = HF_WAITLIST_OFFERED;
    }
}

static void model_compare(fixture_t *f, const model_entry_t *entries, uint32_t count) {
    for (uint32_t i = 0; i < count; i++)
        if (status_of(f, entries[i].id) != entries[i].status)
            fail_msg("entry %s: core %u, model %u", entries[i].id, status_of(f, entries[i].id),
                     entries[i].status);
}

/* The model's statuses of offers that ended: fulfilled or lapsed as the core's holds say. */
static void model_ended(fixture_t *f, model_entry_t *entries, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        if (entries[i].status != HF_WAITLIST_OFFERED) continue;
        char hold_id[24];
        snprintf(hold_id, sizeof hold_id, "res_%s", entries[i].id + 2);
        const hf_hold_t *hold = hf_core_hold_find(f->core, hold_id, NULL);
        if (hold->status == HF_HOLD_EXPIRED || hold->status == HF_HOLD_RELEASED)
            entries[i].status = HF_WAITLIST_LAPSED;
    }
}

/* Whether a hold that was held before the operation ended without its commit: which of seats
 * and units came free (res_h* hold seats, res_p* units, an offer its entry's target). */
static bool hold_freed(fixture_t *f, const char *hold_id, const uint8_t *before, uint32_t slot) {
    const hf_hold_t *hold = hf_core_hold_find(f->core, hold_id, NULL);
    return hold && before[slot] == HF_HOLD_HELD && hold->status != HF_HOLD_HELD &&
           hold->status != HF_HOLD_CONFIRMED;
}

typedef struct model_holds {
    uint8_t before[16 + MODEL_ENTRIES];
} model_holds_t;

static void hold_name(uint32_t slot, const model_entry_t *entries, char *out, size_t size) {
    if (slot < 6) snprintf(out, size, "res_h%u", slot);
    else if (slot < 16) snprintf(out, size, "res_p%u", slot - 6);
    else snprintf(out, size, "res_%s", entries[slot - 16].id + 2);
}

static void model_snapshot(fixture_t *f, const model_entry_t *entries, uint32_t count,
                           model_holds_t *holds) {
    for (uint32_t slot = 0; slot < 16 + count; slot++) {
        char hold_id[24];
        hold_name(slot, entries, hold_id, sizeof hold_id);
        const hf_hold_t *hold = hf_core_hold_find(f->core, hold_id, NULL);
        holds->before[slot] = hold ? hold->status : UINT8_MAX;
    }
}

static void model_freed(fixture_t *f, const model_entry_t *entries, uint32_t count,
                        const model_holds_t *holds, bool *seats, bool *units) {
    *seats = *units = false;
    for (uint32_t slot = 0; slot < 16 + count; slot++) {
        char hold_id[24];
        hold_name(slot, entries, hold_id, sizeof hold_id);
        if (!hold_freed(f, hold_id, holds->before, slot)) continue;
        bool pool = slot >= 16 ? entries[slot - 16].target == 2 : slot >= 6;
        *(pool ? units : seats) = true;
    }
}

static void random_step(fixture_t *f, model_entry_t *entries, uint32_t *count, hf_time_ms_t *now,
                        uint32_t *seed) {
    model_holds_t holds;
    uint32_t snapshot_count = *count;
    model_snapshot(f, entries, *count, &holds);
    *seed = *seed * 1103515245u + 12345u;
    uint32_t roll = (*seed >> 8) % 10, pick = (*seed >> 16);
    if (roll < 4 && *count < MODEL_ENTRIES) {
        model_entry_t *e = &entries[*count];
        snprintf(e->id, sizeof e->id, "w_%u", *count);
        snprintf(e->user, sizeof e->user, "user%u", *count);
        e->target = pick % 3;
        e->quantity = 1 + (pick >> 4) % 4;
        e->status = HF_WAITLIST_WAITING;
        static const char *const SECTIONS[] = {NULL, "S", NULL};
        hf_waitlist_view_t view;
        bool existing;
        assert_int_equal(join(f, e->user, e->id, SECTIONS[e->target], e->target == 2 ? "P" : NULL,
                              e->quantity, *now, &view, &existing),
                         HF_OK);
        (*count)++;
        return; /* a join takes nothing that is free already */
    }
    if (roll < 6) {
        *now += OFFER_TTL / 2; /* offers lapse */
        hf_core_advance(f->core, *now);
    } else if (roll < 8) { /* a public hold of u0 released, if any still holds */
        char hold_id[16];
        snprintf(hold_id, sizeof hold_id, "res_h%u", pick % 6);
        assert_int_equal(hf_core_release(f->core, hold_id, "u0", *now), HF_OK);
    } else if (*count > 0) { /* an entry's user releases its offer, or cancels */
        model_entry_t *e = &entries[pick % *count];
        hf_waitlist_view_t view;
        if (e->status == HF_WAITLIST_WAITING || roll == 9) {
            assert_int_equal(hf_core_waitlist_cancel(f->core, "open", e->id, e->user, *now, &view),
                             HF_OK);
            if (e->status <= HF_WAITLIST_OFFERED) e->status = HF_WAITLIST_CANCELLED;
        } else {
            char hold_id[24];
            snprintf(hold_id, sizeof hold_id, "res_%s", e->id + 2);
            hf_core_release(f->core, hold_id, e->user, *now);
        }
    }
    bool seats, units;
    model_freed(f, entries, *count, &holds, &seats, &units);
    model_ended(f, entries, *count);
    model_match(f, entries, *count, seats, units, holds.before, 16 + snapshot_count);
}

static void test_matching_against_a_model(void **state) {
    fixture_t *f = *state;
    configure(f);
    sell_out(f);
    uint32_t index;
    for (uint32_t i = 0; i < 10; i++) {
        char hold_id[16];
        snprintf(hold_id, sizeof hold_id, "res_p%u", i);
        assert_int_equal(hold_on(f, "open", "u9", hold_id, NO_SEATS, POOLS({"P", 10}),
                                 OFFER_TTL * 4, false, T0, &index, NULL),
                         HF_OK);
    }
    model_entry_t entries[MODEL_ENTRIES];
    uint32_t count = 0, seed = 7;
    hf_time_ms_t now = T0;
    for (uint32_t step = 0; step < 400; step++) {
        random_step(f, entries, &count, &now, &seed);
        model_compare(f, entries, count);
        assert_consistent(f, now);
    }
    /* The run went through the ways an entry ends, not only joins. */
    uint32_t seen[HF_WAITLIST_CANCELLED + 1] = {0};
    for (uint32_t i = 0; i < count; i++) seen[entries[i].status]++;
    assert_true(seen[HF_WAITLIST_LAPSED] > 0 && seen[HF_WAITLIST_CANCELLED] > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setting_and_join_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_positions_and_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_fillable_and_adjacency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lapse_commit_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_offer_may_outlast_max_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_stream_never_shows_an_offered_seat_available,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_units_from_a_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_event_cancel_cancels_its_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_list_by_status_pages_in_join_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_exchange_frees_its_old_seat_to_the_waitlist, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restore_keeps_positions_and_offers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matching_against_a_model, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_waitlist", tests, NULL, NULL);
}
