/* The simulation's waiting room (included by test_simulation.c, which owns the PRNG and the
 * seed; test_queue_simulation). */
#ifndef HF_TESTS_SIM_QUEUE_H
#define HF_TESTS_SIM_QUEUE_H

/* ---- the waiting room (core/queue.h) against a plain list ----
 *
 * One event with a room of random settings; random joins (a few dozen users, so rejoins are
 * common), polls, completions and time passing in 1 ms steps, the clock handed to the core at
 * every step as the engine's timer would. The model keeps the tickets in a plain array in
 * join order, finds positions by counting, admits by the rules of API.md section 6 (a bucket
 * of max(1, admit_per_s / 10) refilled continuously, join order, max_active), expires tokens at
 * exp and drops waiting tickets unpolled for abandon_after; a join arms the room's admission
 * at its own instant, made by the next command or clock step. Within one millisecond the model
 * follows the core's documented order: the room's admission first, then the tickets' own
 * deadlines in join order. Every ticket's status and position, and the room's counts, are
 * compared after every step.
 *
 * Half the runs have a pre-queue (the first always, the second never): joins before opens_at
 * have no position and nobody is admitted; abandonment clocks of the pre-queue start at
 * opens_at; at the opening (touching its memory, its shuffle and its copy are a slice each for
 * so few tickets, so the line is whole two milliseconds after opens_at) the
 * pre-queue takes the places of core/shuffle.h's order for the room's seed (tested on its own
 * in test_prequeue.c), and every later join queues behind it. The model keeps the line as an
 * array of places. */

#define QM_USERS 40
#define QM_TICKETS_MAX 4096

typedef struct qm_ticket {
    char id[24];
    uint32_t user;
    uint8_t status;
    bool early; /* joined before opens_at */
    int64_t last_seen, admitted_at;
    int64_t joined_at; /* as the store keeps it (sim_prequeue.h's restarts) */
} qm_ticket_t;

typedef struct queue_model {
    hf_room_definition_t room;
    qm_ticket_t tickets[QM_TICKETS_MAX];
    uint32_t line[QM_TICKETS_MAX]; /* place - 1 -> ticket: join order, then the shuffle's */
    uint32_t count, waiting, active, early;
    bool lined;
    int32_t user_ticket[QM_USERS];
    bool made;
    double tokens;
    int64_t refilled, admit_armed;
} queue_model_t;

static queue_model_t qm;

/* sim_prequeue.h: the pre-queue's line shape and restarts. */
static void prequeue_check_line(void);
static void prequeue_run_begin(void);
static void prequeue_step(hf_core_t *queue_core, const hf_event_definition_t *definition,
                          int64_t t);
static void prequeue_run_end(void);
static void prequeue_report(void);

static bool qm_slot(void) { return qm.room.max_active == 0 || qm.active < qm.room.max_active; }

static void qm_admit(int64_t t) {
    if (t > qm.refilled) {
        qm.tokens += (double)(t - qm.refilled) * qm.room.admit_per_s / 1000.0;
        double capacity = qm.room.admit_per_s / 10.0 < 1.0 ? 1.0 : qm.room.admit_per_s / 10.0;
        if (qm.tokens > capacity) qm.tokens = capacity;
        qm.refilled = t;
    }
    if (!qm.lined) return;
    while (qm.waiting > 0 && qm.tokens >= 1.0 - 1e-9 && qm_slot()) {
        uint32_t place = 0;
        while (qm.tickets[qm.line[place]].status != HF_TICKET_WAITING) place++;
        uint32_t head = qm.line[place];
        qm.tickets[head].status = HF_TICKET_ADMITTED;
        qm.tickets[head].admitted_at = t;
        qm.waiting--;
        qm.active++;
        qm.tokens -= 1.0;
    }
    if (qm.waiting == 0 || !qm_slot()) return;
    int64_t next = t + (int64_t)ceil((1.0 - qm.tokens) * 1000.0 / qm.room.admit_per_s);
    if (next <= t) next = t + 1;
    qm.admit_armed = next;
}

static int64_t qm_expires_ms(const qm_ticket_t *ticket) {
    return (ticket->admitted_at / 1000 + qm.room.token_ttl_s) * 1000;
}

/* The room's admission when it is due: a join arms one at its own instant. */
static void qm_admit_due(int64_t t) {
    if (qm.admit_armed > t) return;
    qm.admit_armed = INT64_MAX;
    qm_admit(t);
}

/* The opening: the pre-queue at the places of the seed's order. */
static void qm_open(int64_t t) {
    bool due = qm.early > 0 ? t == qm.room.opens_at_ms + 2 : t >= qm.room.opens_at_ms;
    if (qm.lined || !due) return;
    hf_shuffle_t shuffle;
    hf_shuffle_run(&shuffle, qm.room.shuffle_seed, qm.early);
    for (uint32_t p = 0; p < qm.early; p++) qm.line[p] = hf_shuffle_at(&shuffle, p) - 1;
    hf_shuffle_free(&shuffle);
    qm.lined = true;
    prequeue_check_line();
    qm_admit(t);
}

/* When a waiting ticket's clock runs out: from its last poll, or from opens_at. */
static int64_t qm_abandon_at(const qm_ticket_t *ticket) {
    int64_t seen = ticket->last_seen;
    if (ticket->early && seen < qm.room.opens_at_ms) seen = qm.room.opens_at_ms;
    return seen + qm.room.abandon_after_ms;
}

static void qm_advance(int64_t t) {
    qm_admit_due(t);
    qm_open(t);
    for (uint32_t i = 0; i < qm.count; i++) {
        qm_ticket_t *ticket = &qm.tickets[i];
        if (ticket->status == HF_TICKET_ADMITTED && qm_expires_ms(ticket) == t) {
            ticket->status = HF_TICKET_EXPIRED;
            qm.active--;
            qm_admit(t);
        } else if (ticket->status == HF_TICKET_WAITING && qm_abandon_at(ticket) == t) {
            ticket->status = HF_TICKET_ABANDONED;
            qm.waiting--;
        }
    }
}

static hf_error_t qm_join(uint32_t user, int64_t t, uint32_t *index, bool *created) {
    *created = false;
    qm_admit_due(t); /* the core's hf_core_advance before every command */
    int32_t last = qm.user_ticket[user];
    if (last >= 0 && (qm.tickets[last].status == HF_TICKET_WAITING ||
                      qm.tickets[last].status == HF_TICKET_ADMITTED)) {
        if (qm.tickets[last].status == HF_TICKET_WAITING) qm.tickets[last].last_seen = t;
        *index = (uint32_t)last;
        return HF_OK;
    }
    if (!qm.made) {
        qm.made = true;
        qm.lined = qm.room.opens_at_ms <= t; /* a room made after its opening has no pre-queue */
        qm.tokens = qm.room.admit_per_s / 10.0 < 1.0 ? 1.0 : qm.room.admit_per_s / 10.0;
        qm.refilled = t;
    }
    if (qm.waiting >= qm.room.max_waiting) return HF_ERROR_WAITING_ROOM_FULL;
    qm_ticket_t *ticket = &qm.tickets[qm.count];
    snprintf(ticket->id, sizeof ticket->id, "q_%u", qm.count);
    ticket->user = user;
    ticket->status = HF_TICKET_WAITING;
    ticket->last_seen = t;
    ticket->joined_at = t;
    ticket->admitted_at = 0;
    ticket->early = !qm.lined && t < qm.room.opens_at_ms;
    qm.early += ticket->early;
    qm.line[qm.count] = qm.count;
    qm.user_ticket[user] = (int32_t)qm.count;
    *index = qm.count++;
    qm.waiting++;
    *created = true;
    if (qm.admit_armed == INT64_MAX) qm.admit_armed = t;
    return HF_OK;
}

static void qm_complete(uint32_t index, int64_t t) {
    qm_ticket_t *ticket = &qm.tickets[index];
    if (ticket->status == HF_TICKET_WAITING) {
        qm.waiting--;
        ticket->status = HF_TICKET_COMPLETED;
    } else if (ticket->status == HF_TICKET_ADMITTED) {
        qm.active--;
        ticket->status = HF_TICKET_COMPLETED;
        qm_admit(t);
    }
}

/* Every ticket's status and position, and the room's counts, as the model has them. */
static void qm_compare(hf_core_t *queue_core, uint64_t at_step) {
    uint32_t ahead = 0;
    for (uint32_t place = 0; place < qm.count; place++) {
        uint32_t index, i = qm.line[place];
        const hf_ticket_t *ticket = hf_core_ticket_find(queue_core, qm.tickets[i].id, &index);
        if (!ticket) fail_msg("step %" PRIu64 ": ticket %s unknown", at_step, qm.tickets[i].id);
        if (ticket->status != qm.tickets[i].status)
            fail_msg("step %" PRIu64 ": ticket %s is %s, the model says %s", at_step,
                     qm.tickets[i].id, hf_ticket_status_name(ticket->status),
                     hf_ticket_status_name(qm.tickets[i].status));
        uint32_t position = qm.tickets[i].status == HF_TICKET_WAITING ? ++ahead : 0;
        if (qm.tickets[i].early && !qm.lined) position = 0; /* pre_queue: no position yet */
        bool pre_queue = qm.tickets[i].early && !qm.lined &&
                         qm.tickets[i].status == HF_TICKET_WAITING;
        if (hf_core_ticket_pre_queue(queue_core, index) != pre_queue)
            fail_msg("step %" PRIu64 ": ticket %s %s of the pre-queue", at_step, qm.tickets[i].id,
                     pre_queue ? "not" : "still");
        if (hf_core_ticket_position(queue_core, index) != position)
            fail_msg("step %" PRIu64 ": ticket %s at %u, the model says %u", at_step,
                     qm.tickets[i].id, hf_core_ticket_position(queue_core, index), position);
        if (ticket->status == HF_TICKET_ADMITTED &&
            ticket->admitted_at_ms != qm.tickets[i].admitted_at)
            fail_msg("step %" PRIu64 ": ticket %s admitted at another time", at_step,
                     qm.tickets[i].id);
    }
    assert_int_equal(hf_core_room_waiting(queue_core, 0), qm.waiting);
    assert_int_equal(hf_core_room_active(queue_core, 0), qm.active);
}

/* The room of run number run: the first always with a pre-queue, the second never, the
 * others by a coin. */
static void qm_settings(uint32_t run) {
    static const double rates[] = {0.5, 3, 20, 150, 1000};
    static const uint32_t actives[] = {0, 0, 2, 5};
    static const uint32_t waitings[] = {3, 20, 1000};
    qm.room = (hf_room_definition_t){true,
                                     rates[rng_below(5)],
                                     rng_range(1, 3),
                                     actives[rng_below(4)],
                                     rng_range(200, 3000),
                                     waitings[rng_below(3)],
                                     0,
                                     {0}};
    if (run == 0 || (run > 1 && rng_chance(50))) qm.room.opens_at_ms = EPOCH + rng_range(100, 4000);
    for (uint32_t i = 0; i < HF_QUEUE_SEED_SIZE; i++)
        qm.room.shuffle_seed[i] = (uint8_t)rng_below(256);
}

/* A join of a random user at t, on the core and the model, answers compared. */
static void qm_join_one(hf_core_t *queue_core, int64_t t, uint64_t at_step) {
    uint32_t index = 0, model_index = 0;
    bool created, model_created;
    {
        uint32_t user = rng_below(QM_USERS);
        char user_id[16], id[24];
        snprintf(user_id, sizeof user_id, "u%u", user);
        snprintf(id, sizeof id, "q_%u", qm.count);
        hf_error_t expected = qm_join(user, t, &model_index, &model_created);
        hf_core_advance(queue_core, t); /* the engine's, before each request */
        hf_error_t error = hf_core_queue_join(queue_core, "room", user_id, id, t, &index, &created);
        if (error != expected)
            fail_msg("step %" PRIu64 ": join of %s answered %d, the model says %d", at_step,
                     user_id, error, expected);
        if (!error && (created != model_created || strcmp(hf_core_ticket_at(queue_core, index)->id,
                                                          qm.tickets[model_index].id) != 0))
            fail_msg("step %" PRIu64 ": join of %s gave another ticket", at_step, user_id);
    }
}

/* One random operation at t, on the core and the model, answers compared: a join (sometimes
 * a crowd joining at the same instant, which the bucket must meter), a poll or a complete. */
static void qm_operation(hf_core_t *queue_core, int64_t t, uint64_t at_step) {
    uint32_t roll = rng_below(100), index = 0;
    if (roll < 45 || qm.count == 0) {
        uint32_t crowd = rng_chance(15) ? 12 : 1;
        for (uint32_t i = 0; i < crowd && qm.count < QM_TICKETS_MAX; i++)
            qm_join_one(queue_core, t, at_step);
        return;
    }
    uint32_t pick = rng_below(qm.count);
    qm_admit_due(t); /* the core's hf_core_advance before every command */
    hf_core_advance(queue_core, t);
    if (roll < 80) {
        if (qm.tickets[pick].status == HF_TICKET_WAITING) qm.tickets[pick].last_seen = t;
        assert_int_equal(hf_core_queue_poll(queue_core, "room", qm.tickets[pick].id, t, &index),
                         HF_OK);
    } else {
        qm_complete(pick, t);
        assert_int_equal(hf_core_queue_complete(queue_core, "room", qm.tickets[pick].id, t, &index),
                         HF_OK);
    }
}

static void test_queue_simulation(void **state) {
    (void)state;
    uint64_t operations = env_number("HF_SIM_QUEUE_OPERATIONS", 20000);
    rng_state = seed ^ UINT64_C(0x0E0E0E);
    for (uint32_t run = 0; run < 4; run++) {
        memset(&qm, 0, sizeof qm);
        for (uint32_t u = 0; u < QM_USERS; u++) qm.user_ticket[u] = -1;
        qm.admit_armed = INT64_MAX;
        qm_settings(run);
        qm.lined = qm.room.opens_at_ms == 0;
        hf_core_t *queue_core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
        fx_event_t event;
        fx_event_init(&event, "room", 60000, 180000, 0, 10);
        fx_event_section(&event, "F", 100, 1, 4);
        event.definition.waiting_room = qm.room;
        assert_int_equal(hf_core_event_create(queue_core, &event.definition, EPOCH, NULL), HF_OK);
        int64_t t = EPOCH;
        prequeue_run_begin();
        for (uint64_t at_step = 0; at_step < operations / 4 && qm.count < QM_TICKETS_MAX;
             at_step++) {
            int64_t until = t + rng_range(0, 40);
            while (t < until) {
                t++;
                qm_advance(t);
                hf_core_advance(queue_core, t);
                prequeue_step(queue_core, &event.definition, t);
            }
            qm_operation(queue_core, t, at_step);
            qm_compare(queue_core, at_step);
            const char *fault = at_step % 16 == 0 ? hf_core_check(queue_core, t) : NULL;
            if (fault) fail_msg("step %" PRIu64 ": hf_core_check: %s", at_step, fault);
        }
        prequeue_run_end();
        hf_core_destroy(queue_core);
    }
    prequeue_report();
}

#endif
