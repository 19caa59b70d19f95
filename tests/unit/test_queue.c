/* The core's waiting rooms (core/queue.c): positions from the Fenwick tree against a plain
 * count, the admission bucket's rate and smoothness on a simulated clock, max_active and
 * complete, abandonment with polls, rejoining after a token expired, the line's limit, the
 * records each change emits (a poll none), restore and forgetting finished tickets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/estimate.h"
#include "core/queue.h"
#include "core_fixtures.h"
#include "queue_fixtures.h"
#include "store_fixtures.h"

#define T0 1795291200000LL

/* The event "e1" with a room of these settings (abandon_after in ms). */
static void room_make(fixture_t *f, double rate, int64_t ttl_s, uint32_t max_active,
                      int64_t abandon_ms, uint32_t max_waiting) {
    fx_event_init(&f->event, "e1", 60000, 180000, 0, 10);
    fx_event_section(&f->event, "FLOOR", 100, 1, 10);
    f->event.definition.waiting_room = (hf_room_definition_t){
        true, rate, ttl_s, max_active, abandon_ms, max_waiting, 0, {0}};
    assert_true(hf_core_room_valid(&f->event.definition.waiting_room));
    assert_int_equal(hf_core_event_create(f->core, &f->event.definition, T0, NULL), HF_OK);
    fx_sink_reset(&f->sink);
}

static uint32_t join(fixture_t *f, const char *user, int64_t at, bool *created) {
    char id[32];
    snprintf(id, sizeof id, "q_%d", ++f->next_id);
    uint32_t index;
    bool made;
    hf_core_advance(f->core, at); /* as the engine does before each request */
    assert_int_equal(hf_core_queue_join(f->core, "e1", user, id, at, &index, &made), HF_OK);
    if (created) *created = made;
    return index;
}

static uint8_t status_of(fixture_t *f, uint32_t index) {
    return hf_core_ticket_at(f->core, index)->status;
}

static uint32_t count_status(fixture_t *f, uint32_t *tickets, uint32_t count, uint8_t status) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) n += status_of(f, tickets[i]) == status;
    return n;
}

static uint32_t records(const fixture_t *f, int type) { return (uint32_t)f->sink.by_type[type]; }

/* Positions are the waiting tickets ahead plus one, checked against a plain count while
 * tickets in the middle leave (the tree grows from 16 to 1024 join numbers on the way). */
static void test_positions(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.001, 900, 0, 3600000, 100000);
    enum { USERS = 1000 };
    uint32_t tickets[USERS];
    char user[32];
    for (int i = 0; i < USERS; i++) {
        snprintf(user, sizeof user, "u%d", i);
        tickets[i] = join(f, user, T0 + i, NULL);
    }
    /* The bucket held one unit: the first joiner was admitted (by the next join's advance),
     * nobody else. */
    assert_int_equal(status_of(f, tickets[0]), HF_TICKET_ADMITTED);
    assert_int_equal(hf_core_room_waiting(f->core, 0), USERS - 1);
    srand(7);
    for (int round = 0; round < 300; round++) {
        uint32_t victim = tickets[1 + (uint32_t)rand() % (USERS - 1)];
        uint32_t at;
        const hf_ticket_t *ticket = hf_core_ticket_at(f->core, victim);
        char id[HF_SERVER_ID_SIZE + 1];
        memcpy(id, ticket->id, sizeof id);
        assert_int_equal(hf_core_queue_complete(f->core, "e1", id, T0 + 2000, &at), HF_OK);
        assert_int_equal(status_of(f, victim), HF_TICKET_COMPLETED);
    }
    uint32_t ahead = 0;
    for (int i = 1; i < USERS; i++) {
        if (status_of(f, tickets[i]) != HF_TICKET_WAITING) {
            assert_int_equal(hf_core_ticket_position(f->core, tickets[i]), 0);
            continue;
        }
        assert_int_equal(hf_core_ticket_position(f->core, tickets[i]), ahead + 1);
        ahead++;
    }
    assert_int_equal(hf_core_room_waiting(f->core, 0), ahead);
    assert_null(hf_core_check(f->core, T0 + 2000));
}

/* A backlog admitted at 50/s for 10 s of 1 ms steps: within 5% of 500, and never more than
 * the bucket's 5 at one instant; after an idle spell, a crowd arriving at once gets 5. */
static void test_bucket_smooth(void **state) {
    fixture_t *f = *state;
    room_make(f, 50, 900, 0, 3600000, 100000);
    enum { USERS = 3000 };
    static uint32_t tickets[USERS];
    char user[32];
    for (int i = 0; i < USERS; i++) {
        snprintf(user, sizeof user, "u%d", i);
        tickets[i] = join(f, user, T0, NULL);
    }
    uint32_t admitted = count_status(f, tickets, USERS, HF_TICKET_ADMITTED);
    assert_int_equal(admitted, 5);
    uint64_t before = hf_core_room_admissions(f->core, 0), most = 0;
    for (int64_t t = T0 + 1; t <= T0 + 10000; t++) {
        uint64_t was = hf_core_room_admissions(f->core, 0);
        hf_core_advance(f->core, t);
        uint64_t now = hf_core_room_admissions(f->core, 0) - was;
        if (now > most) most = now;
        /* The engine wakes at the core's next deadline: it is never in the past. */
        assert_true(hf_core_next_expiry(f->core) > t);
    }
    uint64_t in_ten = hf_core_room_admissions(f->core, 0) - before;
    assert_true(in_ten >= 475 && in_ten <= 525);
    assert_true(most <= 5);
    /* The estimate follows the measured rate: the last waiting ticket, at position p, waits
     * about p / 50 s. */
    uint32_t last = tickets[USERS - 1];
    uint32_t position = hf_core_ticket_position(f->core, last);
    int64_t wait = hf_core_ticket_wait_s(f->core, last, position, T0 + 10000);
    assert_true(wait >= position / 55 && wait <= position / 45 + 1);
    /* Drain the line, then stay idle for a minute. */
    for (uint32_t i = 0; i < USERS; i++) {
        uint32_t at;
        if (status_of(f, tickets[i]) == HF_TICKET_WAITING)
            assert_int_equal(hf_core_queue_complete(f->core, "e1",
                                                    hf_core_ticket_at(f->core, tickets[i])->id,
                                                    T0 + 10000, &at),
                             HF_OK);
    }
    hf_core_advance(f->core, T0 + 70000);
    uint64_t idle = hf_core_room_admissions(f->core, 0);
    for (int i = 0; i < 100; i++) {
        snprintf(user, sizeof user, "late%d", i);
        join(f, user, T0 + 70000, NULL);
    }
    assert_int_equal(hf_core_room_admissions(f->core, 0) - idle, 5);
}

/* A fractional rate: one admission every 2 s, never two at once. */
static void test_bucket_fractional(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.5, 900, 0, 3600000, 100);
    char user[32];
    for (int i = 0; i < 20; i++) {
        snprintf(user, sizeof user, "u%d", i);
        join(f, user, T0, NULL);
    }
    assert_int_equal(hf_core_room_admissions(f->core, 0), 1);
    hf_core_advance(f->core, T0 + 1999);
    assert_int_equal(hf_core_room_admissions(f->core, 0), 1);
    hf_core_advance(f->core, T0 + 2000);
    assert_int_equal(hf_core_room_admissions(f->core, 0), 2);
    /* The engine's timer wakes at each deadline (a jump over many refills only one unit). */
    for (int64_t t = T0 + 2000; t <= T0 + 20000; t += 100) hf_core_advance(f->core, t);
    assert_int_equal(hf_core_room_admissions(f->core, 0), 11);
}

/* max_active caps admitted tickets with live tokens; complete frees a slot at once. */
static void test_max_active_and_complete(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000, 900, 2, 3600000, 100);
    uint32_t t[5];
    t[0] = join(f, "a", T0, NULL);
    t[1] = join(f, "b", T0, NULL);
    t[2] = join(f, "c", T0, NULL);
    t[3] = join(f, "d", T0, NULL);
    t[4] = join(f, "e", T0, NULL);
    hf_core_advance(f->core, T0 + 5000);
    assert_int_equal(count_status(f, t, 5, HF_TICKET_ADMITTED), 2);
    assert_int_equal(hf_core_room_active(f->core, 0), 2);
    assert_int_equal(hf_core_ticket_position(f->core, t[2]), 1);
    uint32_t at;
    assert_int_equal(
        hf_core_queue_complete(f->core, "e1", hf_core_ticket_at(f->core, t[0])->id, T0 + 5000, &at),
        HF_OK);
    assert_int_equal(status_of(f, t[0]), HF_TICKET_COMPLETED);
    assert_int_equal(status_of(f, t[2]), HF_TICKET_ADMITTED);
    assert_int_equal(hf_core_ticket_position(f->core, t[3]), 1);
    /* The completed token is void; a repeat of complete changes nothing. */
    assert_int_equal(hf_core_queue_admission(f->core, 0, hf_core_ticket_at(f->core, t[0])->id, "a"),
                     HF_ADMISSION_INVALID);
    assert_int_equal(hf_core_queue_admission(f->core, 0, hf_core_ticket_at(f->core, t[2])->id, "c"),
                     HF_ADMISSION_VALID);
    assert_int_equal(hf_core_queue_admission(f->core, 0, hf_core_ticket_at(f->core, t[2])->id, "a"),
                     HF_ADMISSION_INVALID);
    size_t count = f->sink.total;
    assert_int_equal(
        hf_core_queue_complete(f->core, "e1", hf_core_ticket_at(f->core, t[0])->id, T0 + 6000, &at),
        HF_OK);
    assert_int_equal(f->sink.total, count);
}

/* A waiting ticket not polled for abandon_after is dropped and those behind move up; a
 * poll keeps it; a poll emits no record. */
static void test_abandonment(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000, 900, 1, 1000, 100);
    uint32_t a = join(f, "a", T0, NULL);
    uint32_t b = join(f, "b", T0, NULL);
    uint32_t c = join(f, "c", T0, NULL);
    uint32_t d = join(f, "d", T0, NULL);
    assert_int_equal(status_of(f, a), HF_TICKET_ADMITTED);
    assert_int_equal(hf_core_ticket_position(f->core, d), 3);
    uint32_t at;
    size_t count = f->sink.total;
    assert_int_equal(
        hf_core_queue_poll(f->core, "e1", hf_core_ticket_at(f->core, c)->id, T0 + 800, &at), HF_OK);
    assert_int_equal(
        hf_core_queue_poll(f->core, "e1", hf_core_ticket_at(f->core, d)->id, T0 + 800, &at), HF_OK);
    assert_int_equal(f->sink.total, count);
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(status_of(f, b), HF_TICKET_ABANDONED);
    assert_int_equal(hf_core_ticket_position(f->core, c), 1);
    assert_int_equal(hf_core_ticket_position(f->core, d), 2);
    /* a's admission and b's abandonment. */
    assert_int_equal(records(f, HF_MUTATION_TICKET_UPDATE), 2);
    hf_core_advance(f->core, T0 + 1799);
    assert_int_equal(status_of(f, c), HF_TICKET_WAITING);
    hf_core_advance(f->core, T0 + 1800);
    assert_int_equal(status_of(f, c), HF_TICKET_ABANDONED);
    assert_int_equal(status_of(f, d), HF_TICKET_ABANDONED);
    assert_int_equal(hf_core_room_waiting(f->core, 0), 0);
    /* The admitted one is not abandoned: its token runs. */
    assert_int_equal(status_of(f, a), HF_TICKET_ADMITTED);
}

/* Joining again answers the same ticket while it waits or its token lives; once the token
 * expired the user gets a new ticket at the back, and the expired token is refused as such. */
static void test_rejoin(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000, 2, 0, 3600000, 100);
    bool created;
    uint32_t first = join(f, "a", T0 + 500, &created);
    assert_true(created);
    /* A join answers waiting: the room's admission comes at the next advance. */
    assert_int_equal(status_of(f, first), HF_TICKET_WAITING);
    hf_core_advance(f->core, T0 + 500);
    assert_int_equal(status_of(f, first), HF_TICKET_ADMITTED);
    assert_int_equal(hf_core_ticket_issued_s(f->core, first), T0 / 1000);
    assert_int_equal(hf_core_ticket_expires_s(f->core, first), T0 / 1000 + 2);
    char first_id[HF_SERVER_ID_SIZE + 1];
    memcpy(first_id, hf_core_ticket_at(f->core, first)->id, sizeof first_id);
    assert_int_equal(join(f, "a", T0 + 1999, &created), first);
    assert_false(created);
    hf_core_advance(f->core, T0 + 2000);
    assert_int_equal(status_of(f, first), HF_TICKET_EXPIRED);
    assert_int_equal(hf_core_queue_admission(f->core, 0, first_id, "a"), HF_ADMISSION_EXPIRED);
    uint32_t second = join(f, "a", T0 + 2000, &created);
    assert_true(created);
    assert_string_not_equal(hf_core_ticket_at(f->core, second)->id, first_id);
    assert_int_equal(hf_core_ticket_at(f->core, second)->seq, 2);
}

/* The line's limit counts waiting tickets; other rooms and unknown events answer their
 * errors; a poll of another event's ticket is not found. */
static void test_limit_and_errors(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.001, 900, 0, 3600000, 2);
    join(f, "a", T0, NULL); /* admitted */
    join(f, "b", T0, NULL);
    uint32_t c = join(f, "c", T0, NULL);
    uint32_t index;
    bool created;
    assert_int_equal(hf_core_queue_join(f->core, "e1", "d", "q_x", T0, &index, &created),
                     HF_ERROR_WAITING_ROOM_FULL);
    /* A waiting user joining again is not refused. */
    assert_int_equal(hf_core_queue_join(f->core, "e1", "c", "q_y", T0, &index, &created), HF_OK);
    assert_int_equal(index, c);
    assert_int_equal(hf_core_queue_join(f->core, "nope", "d", "q_x", T0, &index, &created),
                     HF_ERROR_EVENT_NOT_FOUND);
    fx_event_t other;
    fx_event_init(&other, "e2", 60000, 180000, 0, 10);
    fx_event_section(&other, "FLOOR", 100, 1, 10);
    assert_int_equal(hf_core_event_create(f->core, &other.definition, T0, NULL), HF_OK);
    assert_int_equal(hf_core_queue_join(f->core, "e2", "d", "q_x", T0, &index, &created),
                     HF_ERROR_WAITING_ROOM_DISABLED);
    const char *id = hf_core_ticket_at(f->core, c)->id;
    assert_int_equal(hf_core_queue_poll(f->core, "e2", id, T0, &index), HF_ERROR_TICKET_NOT_FOUND);
    assert_int_equal(hf_core_queue_poll(f->core, "e1", "q_none", T0, &index),
                     HF_ERROR_TICKET_NOT_FOUND);
    assert_int_equal(hf_core_queue_admission(f->core, 1, id, "c"), HF_ADMISSION_INVALID);
}

/* Records: a join's creation, an admission's change; restored tickets keep their order and
 * an admitted one its token. */
static void test_records_and_restore(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.001, 900, 0, 1000, 100);
    uint32_t a = join(f, "a", T0, NULL);
    join(f, "b", T0 + 1, NULL);
    join(f, "c", T0 + 2, NULL);
    assert_int_equal(records(f, HF_MUTATION_TICKET_CREATE), 3);
    assert_int_equal(records(f, HF_MUTATION_TICKET_UPDATE), 1);
    int64_t admitted_at = hf_core_ticket_at(f->core, a)->admitted_at_ms;

    hf_core_t *copy = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    assert_int_equal(hf_core_restore_event(copy, &f->event.definition, T0), HF_OK);
    hf_stored_ticket_t stored[] = {
        {"q_1", "e1", "a", 1, HF_TICKET_ADMITTED, admitted_at, T0},
        {"q_2", "e1", "b", 2, HF_TICKET_WAITING, 0, T0 + 1},
        {"q_3", "e1", "c", 3, HF_TICKET_WAITING, 0, T0 + 2},
    };
    int64_t later = T0 + 60000;
    for (int i = 0; i < 3; i++)
        assert_int_equal(hf_core_restore_ticket(copy, &stored[i], later), HF_OK);
    /* Out of order, or a taken id, is refused. */
    assert_int_equal(hf_core_restore_ticket(copy, &stored[1], later), HF_ERROR_INVALID_REQUEST);
    uint32_t index;
    assert_non_null(hf_core_ticket_find(copy, "q_3", &index));
    assert_int_equal(hf_core_ticket_position(copy, index), 2);
    assert_non_null(hf_core_ticket_find(copy, "q_1", &index));
    assert_int_equal(hf_core_queue_admission(copy, 0, "q_1", "a"), HF_ADMISSION_VALID);
    /* Abandonment clocks start again at the load: nothing is dropped before later + 1000. */
    hf_core_advance(copy, later + 999);
    assert_int_equal(hf_core_room_waiting(copy, 0), 2);
    hf_core_advance(copy, later + 1000);
    assert_int_equal(hf_core_room_waiting(copy, 0), 0);
    hf_core_destroy(copy);
}

/* Finished tickets beyond the limit are forgotten once their records are durable. */
static void test_forgetting(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000, 900, 0, 3600000, 100);
    hf_core_set_tickets_finished_max(f->core, 2);
    uint32_t t[5];
    char user[16], ids[5][HF_SERVER_ID_SIZE + 1];
    for (int i = 0; i < 5; i++) {
        snprintf(user, sizeof user, "u%d", i);
        t[i] = join(f, user, T0, NULL);
        memcpy(ids[i], hf_core_ticket_at(f->core, t[i])->id, sizeof ids[i]);
        uint32_t at;
        hf_core_advance(f->core, T0);
        assert_int_equal(hf_core_queue_complete(f->core, "e1", ids[i], T0, &at), HF_OK);
    }
    assert_int_equal(hf_core_tickets_finished(f->core), 5);
    assert_int_equal(hf_core_evict(f->core, 0), 0);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 3);
    assert_null(hf_core_ticket_find(f->core, ids[0], NULL));
    assert_non_null(hf_core_ticket_find(f->core, ids[4], NULL));
    /* The forgotten user joins anew; slots are reused. */
    bool created;
    uint32_t again = join(f, "u0", T0 + 1, &created);
    assert_true(created);
    assert_true(again < 5);
    uint32_t revived;
    hf_stored_ticket_t old = {ids[0], "e1", "u0", 1, HF_TICKET_COMPLETED, T0, T0};
    assert_int_equal(hf_core_revive_ticket(f->core, &old, &revived), HF_OK);
    assert_int_equal(status_of(f, revived), HF_TICKET_COMPLETED);
}

/* A forgotten ticket's slot taken by a new one: the old ticket's deadline left on the heap
 * neither abandons nor re-arms the new one. */
static void test_slot_reuse(void **state) {
    fixture_t *f = *state;
    room_make(f, 1000, 900, 1, 1000, 100);
    hf_core_set_tickets_finished_max(f->core, 0);
    join(f, "holder", T0, NULL);
    uint32_t a = join(f, "a", T0, NULL);
    uint32_t at;
    assert_int_equal(
        hf_core_queue_complete(f->core, "e1", hf_core_ticket_at(f->core, a)->id, T0 + 10, &at),
        HF_OK);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    uint32_t b = join(f, "b", T0 + 500, NULL);
    assert_int_equal(b, a);
    hf_core_advance(f->core, T0 + 1000); /* a's old deadline */
    assert_int_equal(status_of(f, b), HF_TICKET_WAITING);
    assert_int_equal(hf_core_ticket_position(f->core, b), 1);
    hf_core_advance(f->core, T0 + 1499);
    assert_int_equal(status_of(f, b), HF_TICKET_WAITING);
    hf_core_advance(f->core, T0 + 1500);
    assert_int_equal(status_of(f, b), HF_TICKET_ABANDONED);
    assert_null(hf_core_check(f->core, T0 + 1500));
}

/* ---- through the SQLite store: the tickets table, loading, and reading one back ---- */

static int store_event(void *context, const hf_stored_event_t *event) {
    return hf_core_restore_event(context, event->definition, event->created_at_ms);
}

static int store_ticket(void *context, const hf_stored_ticket_t *ticket) {
    return hf_core_restore_ticket(context, ticket, T0 + 5000);
}

typedef struct revive {
    hf_core_t *core;
    uint32_t index;
} revive_t;

static int store_revive(void *context, const hf_stored_ticket_t *ticket) {
    revive_t *revive = context;
    return hf_core_revive_ticket(revive->core, ticket, &revive->index);
}

/* Joins, an admission, a completion and an abandonment written by the store, loaded into a
 * fresh core with the same statuses, positions and admission times; a forgotten ticket read
 * back by id. */
static void test_through_the_store(void **state) {
    (void)state;
    hf_batch_t *batch = hf_batch_create();
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){hf_batch_sink_emit, batch});
    fx_event_t event;
    fx_event_init(&event, "e1", 60000, 180000, 0, 10);
    fx_event_section(&event, "FLOOR", 100, 1, 10);
    event.definition.waiting_room = (hf_room_definition_t){true, 0.25, 900, 0, 1000, 100, 0, {0}};
    assert_int_equal(hf_core_event_create(core, &event.definition, T0, NULL), HF_OK);
    const char *users[] = {"a", "b", "c", "d", "e"};
    char ids[5][16];
    uint32_t index;
    bool created;
    for (int i = 0; i < 5; i++) {
        snprintf(ids[i], sizeof ids[i], "q_%d", i);
        /* The engine's advance before each request; the last join comes at T0 + 900, before
         * the complete and the poll of earlier times below, which nothing advanced past. */
        if (i < 4) hf_core_advance(core, T0);
        assert_int_equal(hf_core_queue_join(core, "e1", users[i], ids[i], T0 + (i < 4 ? 0 : 900),
                                            &index, &created),
                         HF_OK);
    }
    assert_int_equal(hf_core_queue_complete(core, "e1", "q_2", T0 + 10, &index), HF_OK);
    assert_int_equal(hf_core_queue_poll(core, "e1", "q_3", T0 + 500, &index), HF_OK);
    hf_core_advance(core, T0 + 1000); /* q_1 is abandoned; q_3 and q_4 were polled later */
    assert_int_equal(hf_core_ticket_find(core, "q_1", NULL)->status, HF_TICKET_ABANDONED);

    temporary_database_t database;
    assert_true(temporary_database_make(&database, "queue"));
    store_write_batch(database.url, batch); /* writes, syncs and frees the batch */
    hf_core_set_sink(core, (hf_mutation_sink_t){NULL, NULL});

    hf_core_t *copy = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    hf_store_t *store = NULL;
    char error[256];
    assert_int_equal(hf_store_open(&store, database.url, error, sizeof error), 0);
    hf_store_loader_t loader = {.event = store_event, .ticket = store_ticket, .context = copy};
    if (hf_store_load(store, &loader, error, sizeof error)) fail_msg("load: %s", error);
    for (int i = 0; i < 5; i++) {
        uint32_t was, now;
        const hf_ticket_t *before = hf_core_ticket_find(core, ids[i], &was);
        const hf_ticket_t *after = hf_core_ticket_find(copy, ids[i], &now);
        assert_non_null(after);
        assert_int_equal(after->status, before->status);
        assert_int_equal(after->admitted_at_ms, before->admitted_at_ms);
        assert_int_equal(hf_core_ticket_position(copy, now), hf_core_ticket_position(core, was));
        assert_string_equal(hf_core_ticket_user(copy, now), users[i]);
    }
    assert_int_equal(hf_core_ticket_find(copy, "q_0", NULL)->status, HF_TICKET_ADMITTED);
    assert_int_equal(hf_core_ticket_position(copy, 4), 2);

    /* Forgotten once finished and durable, then read back by id. */
    hf_core_set_tickets_finished_max(copy, 0);
    assert_int_equal(hf_core_evict(copy, UINT64_MAX), 2);
    assert_null(hf_core_ticket_find(copy, "q_2", NULL));
    revive_t revive = {copy, 0};
    hf_store_loader_t reader = {.ticket = store_revive, .context = &revive};
    bool found = false;
    assert_int_equal(hf_store_read_ticket(store, "q_2", &reader, &found, error, sizeof error), 0);
    assert_true(found);
    assert_int_equal(hf_core_ticket_at(copy, revive.index)->status, HF_TICKET_COMPLETED);
    assert_int_equal(hf_store_read_ticket(store, "q_9", &reader, &found, error, sizeof error), 0);
    assert_false(found);
    hf_store_close(store);
    hf_core_destroy(copy);
    hf_core_destroy(core);
    temporary_database_remove(&database);
}

/* ---- estimated_wait_s (API.md section 6, core/estimate.h) ---- */

/* A poll's estimate at now: the core advanced to now first, as a poll does. */
static int64_t estimate_at(fixture_t *f, uint32_t index, int64_t now) {
    hf_core_advance(f->core, now);
    uint32_t position = hf_core_ticket_position(f->core, index);
    assert_true(position > 0);
    return hf_core_ticket_wait_s(f->core, index, position, now);
}

static int64_t ceil_div(int64_t numerator, int64_t denominator) {
    return (numerator + denominator - 1) / denominator;
}

/* The quiet room: at 0.1/s, positions 1 to 3 behind the first admission wait 10, 20
 * and 30 s (one admission in its first second is no rate of 1/s), from the join's answer on
 * and all through the 10 s until the next admission; then the line moves up one. */
static void test_estimate_quiet_room(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.1, 900, 0, 3600000, 100);
    uint32_t t[4];
    t[0] = join(f, "a", T0, NULL);
    /* Before any admission r is admit_per_s. */
    assert_int_equal(hf_core_ticket_wait_s(f->core, t[0], 1, T0), 10);
    static const char *const users[] = {"b", "c", "d"};
    for (int i = 0; i < 3; i++) {
        t[i + 1] = join(f, users[i], T0, NULL);
        assert_int_equal(estimate_at(f, t[i + 1], T0), 10 * (i + 1));
    }
    assert_int_equal(status_of(f, t[0]), HF_TICKET_ADMITTED);
    for (int64_t at = T0; at < T0 + 10000; at += 250)
        for (int i = 1; i < 4; i++) assert_int_equal(estimate_at(f, t[i], at), 10 * i);
    assert_int_equal(estimate_at(f, t[3], T0 + 10000), 20);
    assert_int_equal(status_of(f, t[1]), HF_TICKET_ADMITTED);
    assert_int_equal(estimate_at(f, t[3], T0 + 19999), 20);
}

/* A fractional rate whose quotients are whole in decimal (7 / 0.7 = 10) is not rounded up
 * past them by the doubles' last place. */
static void test_estimate_rounding(void **state) {
    fixture_t *f = *state;
    room_make(f, 0.7, 900, 0, 3600000, 100);
    join(f, "first", T0, NULL);
    static const int64_t expected[] = {2, 3, 5, 6, 8, 9, 10};
    char user[32];
    for (int i = 0; i < 7; i++) {
        snprintf(user, sizeof user, "u%d", i);
        uint32_t index = join(f, user, T0 + 10, NULL);
        assert_int_equal(estimate_at(f, index, T0 + 10), expected[i]);
    }
}

/* The early sale at 20/s: the first admissions at 0.9 s into a second. Within the
 * first second T is 1 s (A / 1 s, the formula's floor); from then on position 57 waits
 * 57 / 20 s, 3 s, as it does (it was told 19 s). Then, through 15 s of 1 ms steps, every
 * estimate is ceil(position / min(20, A / T)) with A counted from the admissions made. */
static void test_estimate_early_sale(void **state) {
    fixture_t *f = *state;
    room_make(f, 20, 900, 0, 3600000, 100000);
    enum { USERS = 400, SPAN_MS = 15000 };
    static uint32_t tickets[USERS];
    static uint64_t admitted_by[SPAN_MS + 1]; /* admissions made by T0 + 900 + ms */
    char user[32];
    const int64_t start = T0 + 900;
    for (int i = 0; i < USERS; i++) {
        snprintf(user, sizeof user, "u%d", i);
        tickets[i] = join(f, user, start, NULL);
    }
    hf_core_advance(f->core, start);
    assert_int_equal(hf_core_room_admissions(f->core, 0), 2);
    /* The engine's timer wakes at each admission's deadline: 1 ms steps do as much. */
    for (int64_t ms = 0; ms <= SPAN_MS; ms++) {
        hf_core_advance(f->core, start + ms);
        admitted_by[ms] = hf_core_room_admissions(f->core, 0);
        /* 0.2 s in: T is 1 s and A is 2 + 4 = 6, so position 57 is told ceil(57 / 6) s. */
        if (ms == 200) {
            assert_int_equal(admitted_by[ms], 6);
            assert_int_equal(hf_core_ticket_position(f->core, tickets[62]), 57);
            assert_int_equal(estimate_at(f, tickets[62], start + ms), 10);
        }
        /* 1.1 s in: A is 2 + 22 = 24 over 1.1 s, above 20/s: ceil(57 / 20) = 3. */
        if (ms == 1100) {
            assert_int_equal(admitted_by[ms], 24);
            assert_int_equal(hf_core_ticket_position(f->core, tickets[80]), 57);
            assert_int_equal(estimate_at(f, tickets[80], start + ms), 3);
        }
        if (ms % 50 != 0) continue;
        uint32_t last = tickets[USERS - 1];
        uint32_t position = hf_core_ticket_position(f->core, last);
        int64_t span = ms < 1000 ? 1000 : ms < 10000 ? ms : 10000;
        /* Past 10 s the window starts at the step of 100 ms 10 s before now's, exclusive. */
        uint64_t recent = admitted_by[ms];
        if (ms >= 10000) {
            int64_t step = (start + ms) / 100 - 100;
            recent -= admitted_by[(step + 1) * 100 - 1 - start];
        }
        int64_t expected = ceil_div(position, 20);
        int64_t measured = ceil_div((int64_t)position * span, (int64_t)recent * 1000);
        if (measured > expected) expected = measured;
        assert_int_equal(hf_core_ticket_wait_s(f->core, last, position, start + ms), expected);
    }
}

/* While every max_active slot is taken, r is at most max_active / token_ttl_s: position p
 * waits at least p * 60 / 2 s, whatever the recent admissions say (the position 1
 * was told 2 s for 36 s); once the last 10 s saw no admission, still so. A room with a free
 * slot is not capped. */
static void test_estimate_max_active_full(void **state) {
    fixture_t *f = *state;
    room_make(f, 10, 60, 2, 3600000, 100);
    uint32_t t[5];
    static const char *const users[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) t[i] = join(f, users[i], T0, NULL);
    hf_core_advance(f->core, T0 + 1000);
    assert_int_equal(hf_core_room_active(f->core, 0), 2);
    assert_int_equal(estimate_at(f, t[2], T0 + 1000), 30);
    assert_int_equal(estimate_at(f, t[3], T0 + 1000), 60);
    assert_int_equal(estimate_at(f, t[4], T0 + 1000), 90);
    uint32_t at;
    assert_int_equal(
        hf_core_queue_complete(f->core, "e1", hf_core_ticket_at(f->core, t[0])->id, T0 + 2000, &at),
        HF_OK);
    assert_int_equal(status_of(f, t[2]), HF_TICKET_ADMITTED);
    assert_int_equal(estimate_at(f, t[3], T0 + 2000), 30);
    assert_int_equal(estimate_at(f, t[4], T0 + 40000), 60);
    /* A free slot: only the bucket holds the line back, at admit_per_s (no cap of 5 / 60). */
    fixture_t *g = calloc(1, sizeof *g);
    g->core = fx_core_create(&g->sink, 1024);
    room_make(g, 0.1, 60, 5, 3600000, 100);
    join(g, "a", T0, NULL);
    uint32_t behind = join(g, "b", T0, NULL);
    assert_int_equal(estimate_at(g, behind, T0 + 500), 10);
    fx_core_destroy(g->core, &g->sink);
    free(g);
}

/* A burst after an idle spell never shortens estimates: 5 admitted at one instant after a
 * minute's quiet are 5 in the last 10 s, a rate of 0.5/s, below admit_per_s. */
static void test_estimate_burst_after_idle(void **state) {
    fixture_t *f = *state;
    room_make(f, 50, 900, 0, 3600000, 1000);
    join(f, "early", T0, NULL);
    hf_core_advance(f->core, T0 + 1); /* admits it */
    hf_core_advance(f->core, T0 + 60000);
    uint32_t tickets[100];
    char user[32];
    for (int i = 0; i < 100; i++) {
        snprintf(user, sizeof user, "u%d", i);
        tickets[i] = join(f, user, T0 + 60000, NULL);
    }
    assert_int_equal(hf_core_room_admissions(f->core, 0), 6);
    for (int i = 5; i < 100; i++) {
        int64_t wait = estimate_at(f, tickets[i], T0 + 60000);
        uint32_t position = hf_core_ticket_position(f->core, tickets[i]);
        assert_true(wait >= ceil_div(position, 50));
        assert_int_equal(wait, ceil_div((int64_t)position * 10, 5));
    }
}

/* The window alone against a list of admission times: random admissions, bursts and quiet
 * spells longer than its ring, read at random times; a position of 10^9 and a huge
 * admit_per_s make the estimate show A / T itself. */
static void test_estimate_window_against_a_list(void **state) {
    (void)state;
    enum { ADMISSIONS = 4000 };
    static int64_t times[ADMISSIONS];
    hf_admission_window_t window;
    hf_admission_window_init(&window);
    hf_room_definition_t settings = {true, 1000000.0, 900, 0, 1000, 100, 0, {0}};
    hf_estimate_room_t room = {&settings, &window, false};
    srand(11);
    int64_t now = T0 + 37;
    for (int count = 0; count < ADMISSIONS; count++) {
        int kind = rand() % 100;
        now += kind < 60 ? rand() % 40 : kind < 95 ? rand() % 700 : rand() % 40000;
        times[count] = now;
        hf_admission_window_count(&window, now);
        int64_t read = now + (rand() % 3 == 0 ? rand() % 15000 : 0);
        int64_t since = read - times[0];
        int64_t span = since < 1000 ? 1000 : since < 10000 ? since : 10000;
        int64_t recent = 0;
        for (int i = 0; i <= count; i++)
            recent += since < 10000 || times[i] / 100 > read / 100 - 100;
        int64_t expected = recent ? ceil_div(INT64_C(1000000000) * span, recent * 1000) : 1000;
        assert_int_equal(hf_estimate_wait_s(&room, 1000000000u, read), expected);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_positions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bucket_smooth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bucket_fractional, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_active_and_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandonment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejoin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_and_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forgetting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_reuse, setup, teardown),
        cmocka_unit_test(test_through_the_store),
        cmocka_unit_test_setup_teardown(test_estimate_quiet_room, setup, teardown),
        cmocka_unit_test_setup_teardown(test_estimate_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_estimate_early_sale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_estimate_max_active_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_estimate_burst_after_idle, setup, teardown),
        cmocka_unit_test(test_estimate_window_against_a_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
