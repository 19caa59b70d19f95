/* The waiting room's pre-queue (API.md section 6's opens_at; core/shuffle.c, core/line.c): the
 * shuffle is a bijection, the same from the same seed (sliced or not), and uniform (each
 * ticket's place, each pair's order and each whole permutation, by chi-square over many
 * seeded runs); a core's pre-queue has no position and admits nobody before opens_at, gets
 * its places at the opening (in slices, with joins and completions meanwhile), is FIFO after,
 * keeps one ticket per user, starts its abandonment clock at opens_at, and a restore from the
 * seed gives back the same places. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/queue.h"
#include "core/shuffle.h"
#include "core_fixtures.h"
#include "queue_fixtures.h"

#define T0 1795291200000LL
#define OPENS_AT (T0 + 60000)

/* A seed made from a run's number: distinct runs, distinct keys. */
static void seed_of(uint32_t run, uint8_t seed[HF_QUEUE_SEED_SIZE]) {
    memset(seed, 0x5a, HF_QUEUE_SEED_SIZE);
    memcpy(seed, &run, sizeof run);
}

/* ---- the shuffle alone ---- */

static void test_shuffle_is_a_bijection(void **state) {
    (void)state;
    static const uint32_t counts[] = {1, 2, 3, 64, 1000, 2 * HF_QUEUE_OPENING_SLICE + 5};
    uint8_t seed[HF_QUEUE_SEED_SIZE];
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        uint32_t count = counts[c];
        seed_of((uint32_t)c, seed);
        hf_shuffle_t shuffle;
        hf_shuffle_run(&shuffle, seed, count);
        uint8_t *seen = calloc(count + 1, 1);
        for (uint32_t p = 0; p < count; p++) {
            assert_true(hf_shuffle_at(&shuffle, p) >= 1 && hf_shuffle_at(&shuffle, p) <= count);
            assert_int_equal(seen[hf_shuffle_at(&shuffle, p)]++, 0);
        }
        free(seen);
        hf_shuffle_free(&shuffle);
    }
}

/* The same seed gives the same order whatever the slices; another seed another order. */
static void test_shuffle_replays_from_its_seed(void **state) {
    (void)state;
    enum { COUNT = 5000 };
    uint8_t seed[HF_QUEUE_SEED_SIZE];
    seed_of(42, seed);
    hf_shuffle_t whole, sliced, other;
    hf_shuffle_run(&whole, seed, COUNT);
    hf_shuffle_begin(&sliced, seed, COUNT);
    memset(sliced.order, 0, COUNT * sizeof *sliced.order);
    uint32_t slices = 0;
    while (!hf_shuffle_advance(&sliced, 7)) slices++;
    assert_true(slices > COUNT / 7 - 2);
    assert_memory_equal(whole.order, sliced.order, COUNT * sizeof *whole.order);
    seed_of(43, seed);
    hf_shuffle_run(&other, seed, COUNT);
    uint32_t same = 0;
    for (uint32_t p = 0; p < COUNT; p++)
        same += hf_shuffle_at(&whole, p) == hf_shuffle_at(&other, p);
    assert_true(same < 20); /* about 1 expected */
    hf_shuffle_free(&whole);
    hf_shuffle_free(&sliced);
    hf_shuffle_free(&other);
}

/* Each ticket's place is uniform (chi-square of each ticket's places, 7 degrees of freedom:
 * 24.3 is the 0.1% tail), and each pair is in either order half the time (within 4.5 standard
 * deviations). The runs' seeds are fixed, so the test is deterministic. */
static void test_shuffle_places_are_uniform(void **state) {
    (void)state;
    enum { COUNT = 8, RUNS = 40000 };
    static uint32_t places[COUNT][COUNT], before[COUNT][COUNT];
    uint8_t seed[HF_QUEUE_SEED_SIZE];
    for (uint32_t run = 0; run < RUNS; run++) {
        seed_of(run, seed);
        hf_shuffle_t shuffle;
        hf_shuffle_run(&shuffle, seed, COUNT);
        uint32_t place_of[COUNT];
        for (uint32_t p = 0; p < COUNT; p++) place_of[hf_shuffle_at(&shuffle, p) - 1] = p;
        for (uint32_t a = 0; a < COUNT; a++) {
            places[a][place_of[a]]++;
            for (uint32_t b = 0; b < COUNT; b++) before[a][b] += place_of[a] < place_of[b];
        }
        hf_shuffle_free(&shuffle);
    }
    double expected = (double)RUNS / COUNT, worst = 0;
    for (uint32_t a = 0; a < COUNT; a++) {
        double chi = 0;
        for (uint32_t p = 0; p < COUNT; p++)
            chi += (places[a][p] - expected) * (places[a][p] - expected) / expected;
        if (chi > worst) worst = chi;
        for (uint32_t b = 0; b < COUNT; b++) {
            if (a == b) continue;
            /* Binomial(RUNS, 1/2): a standard deviation of 100. */
            assert_true(before[a][b] > RUNS / 2 - 450 && before[a][b] < RUNS / 2 + 450);
        }
    }
    /* The worst of 8 tickets: 8 chances at 0.1%, still a rare failure for a fair shuffle. */
    assert_true(worst < 26.1);
}

/* Every permutation of 4 equally likely: 24 cells, 23 degrees of freedom (49.7 is the 0.1%
 * tail); a Feistel network's even permutations alone would score some 24,000. */
static void test_shuffle_permutations_are_uniform(void **state) {
    (void)state;
    enum { COUNT = 4, RUNS = 48000, PERMUTATIONS = 24 };
    static uint32_t seen[PERMUTATIONS];
    uint8_t seed[HF_QUEUE_SEED_SIZE];
    for (uint32_t run = 0; run < RUNS; run++) {
        seed_of(1000000 + run, seed);
        hf_shuffle_t shuffle;
        hf_shuffle_run(&shuffle, seed, COUNT);
        /* The permutation's rank: its Lehmer code read as a factorial-base number. */
        uint32_t rank = 0;
        for (uint32_t i = 0; i < COUNT; i++) {
            uint32_t smaller = 0;
            for (uint32_t j = i + 1; j < COUNT; j++)
                smaller += hf_shuffle_at(&shuffle, j) < hf_shuffle_at(&shuffle, i);
            rank = rank * (COUNT - i) + smaller;
        }
        seen[rank]++;
        hf_shuffle_free(&shuffle);
    }
    double expected = (double)RUNS / PERMUTATIONS, chi = 0;
    for (uint32_t r = 0; r < PERMUTATIONS; r++) {
        assert_true(seen[r] > 0);
        chi += (seen[r] - expected) * (seen[r] - expected) / expected;
    }
    assert_true(chi < 49.7);
}

/* ---- the pre-queue in a core ---- */

/* The event "e1" with a room opening at OPENS_AT, abandon_after in ms. */
static void room_make(fixture_t *f, double rate, int64_t abandon_ms) {
    fx_event_init(&f->event, "e1", 60000, 180000, 0, 10);
    fx_event_section(&f->event, "FLOOR", 100, 1, 10);
    hf_room_definition_t *room = &f->event.definition.waiting_room;
    *room = (hf_room_definition_t){true, rate, 900, 0, abandon_ms, 10000000, OPENS_AT, {0}};
    seed_of(7, room->shuffle_seed);
    assert_int_equal(hf_core_event_create(f->core, &f->event.definition, T0, NULL), HF_OK);
}

static uint32_t join(fixture_t *f, uint32_t user, int64_t at, bool *created) {
    char id[32], name[32];
    snprintf(id, sizeof id, "q_%d", ++f->next_id);
    snprintf(name, sizeof name, "u%u", user);
    uint32_t index;
    bool made;
    hf_core_advance(f->core, at); /* as the engine does before each request */
    assert_int_equal(hf_core_queue_join(f->core, "e1", name, id, at, &index, &made), HF_OK);
    if (created) *created = made;
    return index;
}

/* Advances a millisecond at a time from at until the line is lined up (the opening's slices);
 * returns the time it was. */
static int64_t open_fully(hf_core_t *core, uint32_t probe, int64_t at) {
    hf_core_advance(core, at);
    while (hf_core_ticket_pre_queue(core, probe)) hf_core_advance(core, ++at);
    assert_null(hf_core_check(core, at));
    return at;
}

/* Before opens_at: no position, nobody admitted, one ticket per user; at the opening the
 * pre-queue's positions are a permutation of 1..n, and later joins queue behind in order. */
static void test_pre_queue_then_fifo(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000.0, 3600000);
    enum { EARLY = 500, LATE = 20 };
    uint32_t tickets[EARLY + LATE];
    bool created;
    for (uint32_t u = 0; u < EARLY; u++) {
        tickets[u] = join(f, u, T0 + u, &created);
        assert_true(created);
        assert_true(hf_core_ticket_pre_queue(f->core, tickets[u]));
        assert_int_equal(hf_core_ticket_position(f->core, tickets[u]), 0);
    }
    assert_int_equal(join(f, 3, T0 + 1000, &created), tickets[3]);
    assert_false(created);
    hf_core_advance(f->core, OPENS_AT - 1);
    assert_int_equal(hf_core_room_admissions(f->core, 0), 0);
    assert_null(hf_core_check(f->core, OPENS_AT - 1));
    /* Pre-queue ticket 0 is the probe: open_fully stops once it has a place. */
    int64_t lined = open_fully(f->core, tickets[0], OPENS_AT);
    uint32_t admitted = (uint32_t)hf_core_room_admissions(f->core, 0);
    assert_true(admitted >= 1);
    uint8_t *seen = calloc(EARLY + 1, 1);
    for (uint32_t u = 0; u < EARLY; u++) {
        uint32_t position = hf_core_ticket_position(f->core, tickets[u]);
        if (hf_core_ticket_at(f->core, tickets[u])->status == HF_TICKET_ADMITTED) continue;
        assert_true(position >= 1 && position <= EARLY - admitted);
        assert_int_equal(seen[position]++, 0);
    }
    free(seen);
    for (uint32_t u = EARLY; u < EARLY + LATE; u++) {
        tickets[u] = join(f, u, lined, NULL);
        assert_int_equal(hf_core_ticket_position(f->core, tickets[u]), u + 1 - admitted);
    }
    /* Admissions follow the positions: whoever is first is admitted next. */
    for (uint32_t step = 0; step < 50; step++) {
        uint32_t first = UINT32_MAX;
        for (uint32_t u = 0; u < EARLY + LATE; u++)
            if (hf_core_ticket_position(f->core, tickets[u]) == 1) first = tickets[u];
        assert_int_not_equal(first, UINT32_MAX);
        uint64_t before = hf_core_room_admissions(f->core, 0);
        while (hf_core_room_admissions(f->core, 0) == before) hf_core_advance(f->core, ++lined);
        assert_int_equal(hf_core_ticket_at(f->core, first)->status, HF_TICKET_ADMITTED);
    }
    assert_null(hf_core_check(f->core, lined));
}

/* The abandonment clock of a pre-queue ticket starts at opens_at: never dropped before it, then
 * dropped abandon_after_ms after it unless polled. */
static void test_abandonment_starts_at_the_opening(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.001, 1000);
    uint32_t quiet = join(f, 1, T0, NULL);
    uint32_t polled = join(f, 2, T0 + 1, NULL);
    uint32_t other = join(f, 3, T0 + 2, NULL); /* keeps the line (and the admission) busy */
    (void)other;
    hf_core_advance(f->core, OPENS_AT - 1);
    assert_int_equal(hf_core_room_waiting(f->core, 0), 3);
    int64_t lined = open_fully(f->core, quiet, OPENS_AT);
    assert_true(lined < OPENS_AT + 1000);
    uint32_t index;
    const char *id = hf_core_ticket_at(f->core, polled)->id;
    assert_int_equal(hf_core_queue_poll(f->core, "e1", id, OPENS_AT + 500, &index), HF_OK);
    hf_core_advance(f->core, OPENS_AT + 999);
    uint8_t quiet_status = hf_core_ticket_at(f->core, quiet)->status;
    assert_true(quiet_status == HF_TICKET_WAITING || quiet_status == HF_TICKET_ADMITTED);
    hf_core_advance(f->core, OPENS_AT + 1000);
    if (quiet_status == HF_TICKET_WAITING)
        assert_int_equal(hf_core_ticket_at(f->core, quiet)->status, HF_TICKET_ABANDONED);
    if (hf_core_ticket_at(f->core, polled)->status != HF_TICKET_ADMITTED) {
        assert_int_equal(hf_core_ticket_at(f->core, polled)->status, HF_TICKET_WAITING);
        hf_core_advance(f->core, OPENS_AT + 1500);
        assert_int_equal(hf_core_ticket_at(f->core, polled)->status, HF_TICKET_ABANDONED);
    }
}

/* A long pre-queue opens in slices: after the first a pre-queue ticket still has no place and
 * nobody is admitted, a join meanwhile is behind all of the pre-queue, and a pre-queue ticket
 * that completes meanwhile leaves the line it is copied into. */
static void test_opening_in_slices(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000.0, 3600000);
    enum { EARLY = 3 * HF_QUEUE_OPENING_SLICE + 17 };
    uint32_t *tickets = malloc(EARLY * sizeof *tickets);
    for (uint32_t u = 0; u < EARLY; u++) tickets[u] = join(f, u, T0 + u / 1000, NULL);
    hf_core_advance(f->core, OPENS_AT);
    assert_true(hf_core_ticket_pre_queue(f->core, tickets[0]));
    assert_int_equal(hf_core_room_admissions(f->core, 0), 0);
    uint32_t late = join(f, EARLY, OPENS_AT, NULL);
    assert_int_equal(hf_core_ticket_position(f->core, late), EARLY + 1);
    uint32_t index;
    int64_t at = OPENS_AT;
    /* Past the turns touching memory and shuffling, and one of the copy's (the first turn was
     * at OPENS_AT), then completions of tickets copied already and not yet. */
    uint32_t prepare = (3 * 4 * EARLY + HF_QUEUE_OPENING_PREPARE_SIZE - 1) /
                       HF_QUEUE_OPENING_PREPARE_SIZE;
    uint32_t shuffle = (EARLY - 1 + HF_QUEUE_OPENING_SLICE - 1) / HF_QUEUE_OPENING_SLICE;
    for (uint32_t turn = 1; turn < prepare + shuffle + 1; turn++) hf_core_advance(f->core, ++at);
    assert_true(hf_core_ticket_pre_queue(f->core, tickets[0]));
    for (uint32_t u = 0; u < EARLY; u += 997) {
        const char *id = hf_core_ticket_at(f->core, tickets[u])->id;
        assert_int_equal(hf_core_queue_complete(f->core, "e1", id, at, &index), HF_OK);
    }
    assert_null(hf_core_check(f->core, at));
    at = open_fully(f->core, tickets[1], at + 1);
    assert_true(at - OPENS_AT < 20);
    uint32_t completed = (EARLY + 996) / 997;
    uint64_t admitted = hf_core_room_admissions(f->core, 0);
    assert_int_equal(hf_core_ticket_position(f->core, late), EARLY - completed + 1 - admitted);
    free(tickets);
}

/* A restore (the tickets as the store has them, created_at telling the pre-queue) draws the
 * same places from the seed, whether it comes before or after the opening. */
static void test_restore_gives_the_same_places(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.001, 3600000);
    enum { EARLY = 300 };
    uint32_t tickets[EARLY + 1];
    for (uint32_t u = 0; u < EARLY; u++) tickets[u] = join(f, u, T0 + u, NULL);
    int64_t lined = open_fully(f->core, tickets[0], OPENS_AT);
    tickets[EARLY] = join(f, EARLY, lined, NULL);
    for (int when = 0; when < 2; when++) {
        /* Restored before the opening (a crash just before), then just after it. */
        int64_t now = when == 0 ? OPENS_AT - 10 : lined + 5;
        hf_core_t *copy = hf_core_create((hf_mutation_sink_t){NULL, NULL});
        assert_int_equal(hf_core_restore_event(copy, &f->event.definition, T0), HF_OK);
        for (uint32_t u = 0; u <= EARLY; u++) {
            const hf_ticket_t *ticket = hf_core_ticket_at(f->core, tickets[u]);
            char user[32];
            snprintf(user, sizeof user, "u%u", u);
            hf_stored_ticket_t stored = {ticket->id,
                                         "e1",
                                         user,
                                         ticket->seq,
                                         ticket->status,
                                         ticket->admitted_at_ms,
                                         u < EARLY ? T0 + u : lined};
            assert_int_equal(hf_core_restore_ticket(copy, &stored, now), HF_OK);
        }
        uint32_t probe;
        assert_non_null(
            hf_core_ticket_find(copy, hf_core_ticket_at(f->core, tickets[1])->id, &probe));
        if (when == 0) assert_true(hf_core_ticket_pre_queue(copy, probe));
        open_fully(copy, probe, when == 0 ? OPENS_AT : now);
        for (uint32_t u = 0; u <= EARLY; u++) {
            uint32_t index;
            assert_non_null(
                hf_core_ticket_find(copy, hf_core_ticket_at(f->core, tickets[u])->id, &index));
            assert_int_equal(hf_core_ticket_position(copy, index),
                             hf_core_ticket_position(f->core, tickets[u]));
        }
        hf_core_destroy(copy);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shuffle_is_a_bijection),
        cmocka_unit_test(test_shuffle_replays_from_its_seed),
        cmocka_unit_test(test_shuffle_places_are_uniform),
        cmocka_unit_test(test_shuffle_permutations_are_uniform),
        cmocka_unit_test_setup_teardown(test_pre_queue_then_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandonment_starts_at_the_opening, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opening_in_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_gives_the_same_places, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
