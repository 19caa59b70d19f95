/* The pre-queue in the waiting room's simulation (after sim_queue.h, in test_simulation.c;
 * API.md section 6's opens_at): what sim_queue.h's exact model does not show by itself, since
 * it takes the opening's order from core/shuffle.h for the room's seed.
 *
 * The line's shape, without the seed: at the opening the model's line must hold every
 * pre-queue ticket at exactly one of the places 1..N and every later join behind all of them
 * in join order (the core's positions are compared with that line at every step, so the core's
 * admissions follow the places).
 *
 * Restarts: a few times a run (before the opening, within its first milliseconds, while the
 * line is built, and later), a second core is restored from the tickets as the store has them
 * (join numbers, statuses, admission times, and join times telling the pre-queue), then driven
 * by the clock alone until none of its waiting tickets is of the pre-queue. Its own admissions
 * and a new abandonment clock make it drift from the first core, so what must agree is the
 * order: its waiting tickets, by its positions 1..W, are in the order of the model's line. */
#ifndef HF_TESTS_SIM_PREQUEUE_H
#define HF_TESTS_SIM_PREQUEUE_H

#define PREQUEUE_MOMENTS 4

/* A restored core under way: restored at, with the first core's first tickets. */
typedef struct prequeue_copy {
    hf_core_t *core;
    int64_t restored_at;
    uint32_t tickets;
} prequeue_copy_t;

/* The restored cores of the run, one per moment, and what the runs did. */
static struct prequeue_state {
    prequeue_copy_t copies[PREQUEUE_MOMENTS];
    bool taken[PREQUEUE_MOMENTS];
    uint32_t restores, checked; /* restores made, and finished with their order compared */
    uint32_t before_opening, compared;
} pc;

/* The model's line at the opening: places 1..N the pre-queue (the first N joins), each once,
 * then the later joins in join order. */
static void prequeue_check_line(void) {
    uint8_t seen[QM_TICKETS_MAX] = {0};
    for (uint32_t place = 0; place < qm.count; place++) {
        uint32_t ticket = qm.line[place];
        if (ticket >= qm.count || seen[ticket]++)
            fail_msg("the opening's line has ticket %u twice or out of range", ticket);
        if (place < qm.early ? !qm.tickets[ticket].early : ticket != place)
            fail_msg("place %u holds ticket %s (%s), not a %s", place + 1, qm.tickets[ticket].id,
                     qm.tickets[ticket].early ? "early" : "late",
                     place < qm.early ? "pre-queue one" : "later join in join order");
    }
}

/* A second core from the first one's tickets as stored, at now. */
static void prequeue_restore(prequeue_copy_t *copy, hf_core_t *queue_core,
                             const hf_event_definition_t *definition, int64_t now) {
    copy->core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    assert_non_null(copy->core);
    assert_int_equal(hf_core_restore_event(copy->core, definition, EPOCH), HF_OK);
    for (uint32_t i = 0; i < qm.count; i++) {
        uint32_t index;
        const hf_ticket_t *ticket = hf_core_ticket_find(queue_core, qm.tickets[i].id, &index);
        assert_non_null(ticket);
        char user[16];
        snprintf(user, sizeof user, "u%u", qm.tickets[i].user);
        hf_stored_ticket_t stored = {ticket->id,
                                     "room",
                                     user,
                                     ticket->seq,
                                     ticket->status,
                                     ticket->admitted_at_ms,
                                     qm.tickets[i].joined_at};
        if (hf_core_restore_ticket(copy->core, &stored, now) != HF_OK)
            fail_msg("restore of ticket %s at epoch+%" PRId64 " refused", ticket->id, now - EPOCH);
    }
    copy->restored_at = now;
    copy->tickets = qm.count;
    pc.restores++;
    pc.before_opening += now < qm.room.opens_at_ms;
}

/* Whether a restored waiting ticket still waits for its place. */
static bool prequeue_copy_placing(const prequeue_copy_t *copy) {
    for (uint32_t i = 0; i < copy->tickets; i++) {
        uint32_t index;
        if (hf_core_ticket_find(copy->core, qm.tickets[i].id, &index) &&
            hf_core_ticket_pre_queue(copy->core, index))
            return true;
    }
    return false;
}

/* The restored core's waiting tickets by its positions: 1..W, in the model's line order. */
static void prequeue_copy_compare(const prequeue_copy_t *copy, int64_t t) {
    uint32_t rank[QM_TICKETS_MAX], by_position[QM_TICKETS_MAX];
    for (uint32_t place = 0; place < qm.count; place++) rank[qm.line[place]] = place;
    uint32_t waiting = 0;
    for (uint32_t i = 0; i < copy->tickets; i++) by_position[i] = UINT32_MAX;
    for (uint32_t i = 0; i < copy->tickets; i++) {
        uint32_t index;
        const hf_ticket_t *ticket = hf_core_ticket_find(copy->core, qm.tickets[i].id, &index);
        if (ticket == NULL || ticket->status != HF_TICKET_WAITING) continue;
        uint32_t position = hf_core_ticket_position(copy->core, index);
        if (position == 0 || position > copy->tickets || by_position[position - 1] != UINT32_MAX)
            fail_msg("restored at epoch+%" PRId64 ", at epoch+%" PRId64
                     ": ticket %s at position %u, taken or out of range",
                     copy->restored_at - EPOCH, t - EPOCH, qm.tickets[i].id, position);
        by_position[position - 1] = i;
        waiting++;
    }
    for (uint32_t p = 0; p < waiting; p++) {
        if (by_position[p] == UINT32_MAX)
            fail_msg("restored: %u tickets wait but none is at position %u", waiting, p + 1);
        if (p > 0 && rank[by_position[p]] <= rank[by_position[p - 1]])
            fail_msg("restored at epoch+%" PRId64 ": ticket %s at position %u, but %s behind "
                     "it is ahead in the line",
                     copy->restored_at - EPOCH, qm.tickets[by_position[p - 1]].id, p,
                     qm.tickets[by_position[p]].id);
    }
    pc.compared += waiting;
}

/* A restored core driven by the clock until its line is whole, then compared and dropped. */
static void prequeue_copy_step(prequeue_copy_t *copy, int64_t t) {
    hf_core_advance(copy->core, t);
    if (!qm.lined || prequeue_copy_placing(copy)) return;
    prequeue_copy_compare(copy, t);
    const char *fault = hf_core_check(copy->core, t);
    if (fault) fail_msg("restored core: hf_core_check: %s", fault);
    hf_core_destroy(copy->core);
    copy->core = NULL;
    pc.checked++;
}

/* Every millisecond of a run with a pre-queue: a restart at each of the run's moments (just
 * before the opening, at it, a millisecond into its slices, a while later), and the restored
 * cores under way driven and compared. */
static void prequeue_step(hf_core_t *queue_core, const hf_event_definition_t *definition,
                          int64_t t) {
    static const int64_t moments[PREQUEUE_MOMENTS] = {-5, 0, 1, 1500};
    if (qm.room.opens_at_ms == 0) return;
    for (uint32_t m = 0; m < PREQUEUE_MOMENTS; m++) {
        prequeue_copy_t *copy = &pc.copies[m];
        if (copy->core) prequeue_copy_step(copy, t);
        if (pc.taken[m] || t < qm.room.opens_at_ms + moments[m] || qm.count == 0) continue;
        pc.taken[m] = true;
        prequeue_restore(copy, queue_core, definition, t);
    }
}

static void prequeue_run_begin(void) { memset(pc.taken, 0, sizeof pc.taken); }

static void prequeue_run_end(void) {
    for (uint32_t m = 0; m < PREQUEUE_MOMENTS; m++) {
        if (pc.copies[m].core) hf_core_destroy(pc.copies[m].core);
        pc.copies[m].core = NULL;
    }
}

static void prequeue_report(void) {
    printf("queue simulation: pre-queue restarts %u (before the opening %u), whole lines "
           "compared %u (waiting tickets %u)\n",
           pc.restores, pc.before_opening, pc.checked, pc.compared);
}

#endif
