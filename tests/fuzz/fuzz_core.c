/* libFuzzer target: sequences of core operations checked against the core's invariants.
 *
 * The input is read as a small program: the first bytes lay out one or two events (sections,
 * rows, seats, pools, limits, and maybe a waiting room), the rest is a list of operations
 * (hold with seats, pools and best_available; extend; release; commit; cancel; booking; time
 * passing; a waiting room's join, poll and complete). After every operation:
 *   - hf_core_check finds nothing wrong (counts match statuses, owners point back, pool sums,
 *     no lapsed hold still held);
 *   - an operation that returns an error emitted no mutation (all-or-nothing);
 *   - a sold seat belongs to exactly one confirmed order, and the event's counts add up.
 * The first byte after the events sets how many finished holds (and tickets) the core keeps
 * (0 to 3); the step of time passing by 1 ms also makes everything durable, so the core
 * forgets finished holds and tickets and reuses their slots.
 * Any breach aborts, which libFuzzer reports as a crash with the input saved.
 *
 * Build: make build/fuzz/fuzz_core (mk/reliability.mk). Seeds: tests/fuzz/corpus/core/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/queue.h"
#include "engine/errors.h"

typedef struct reader {
    const uint8_t *data;
    size_t size, at;
} reader_t;

static uint32_t next_byte(reader_t *reader) {
    return reader->at < reader->size ? reader->data[reader->at++] : 0;
}

static uint32_t next_below(reader_t *reader, uint32_t bound) {
    return bound ? next_byte(reader) % bound : 0;
}

static size_t emitted;
/* The API's code of a core error, for messages (the engine's table names them). */
static const char *error_code(hf_error_t error) {
    return hf_errors_entry(hf_errors_from_core(error))->code;
}

static void count_sink(void *context, const hf_mutation_t *mutation) {
    (void)context;
    (void)mutation;
    emitted++;
}

#define EVENTS_MAX 2
#define HOLDS_MAX 64
#define USERS 4

typedef struct fuzz_state {
    hf_core_t *core;
    hf_time_ms_t now;
    char event_ids[EVENTS_MAX][8];
    uint32_t event_count;
    char hold_ids[HOLDS_MAX][HF_SERVER_ID_SIZE + 1];
    uint32_t hold_count;
    char order_ids[HOLDS_MAX][HF_SERVER_ID_SIZE + 1];
    uint32_t order_count;
    char ticket_ids[HOLDS_MAX][HF_SERVER_ID_SIZE + 1];
    uint32_t ticket_count;
    uint32_t serial;
} fuzz_state_t;

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_core: %s: %s\n", what, detail ? detail : "");
    abort();
}

static void create_event(fuzz_state_t *state, reader_t *reader) {
    hf_row_definition_t rows[2][3];
    hf_section_definition_t sections[2];
    hf_pool_definition_t pools[2];
    hf_event_definition_t definition;
    memset(&definition, 0, sizeof definition);
    memset(rows, 0, sizeof rows);
    memset(sections, 0, sizeof sections);
    memset(pools, 0, sizeof pools);
    uint32_t index = state->event_count;
    snprintf(state->event_ids[index], sizeof state->event_ids[index], "e%u", index);
    snprintf(definition.id, sizeof definition.id, "%s", state->event_ids[index]);
    snprintf(definition.name, sizeof definition.name, "fuzz");
    snprintf(definition.currency, sizeof definition.currency, "USD");
    definition.hold_ttl_ms = 1 + next_below(reader, 50) * 100;
    definition.max_hold_ms = definition.hold_ttl_ms * (1 + next_below(reader, 4));
    definition.max_seats_per_user = next_below(reader, 8);
    definition.max_seats_per_hold = 1 + next_below(reader, 10);
    definition.section_count = 1 + next_below(reader, 2);
    for (uint32_t s = 0; s < definition.section_count; s++) {
        snprintf(sections[s].id, sizeof sections[s].id, "%c", 'A' + s);
        sections[s].price = next_below(reader, 100);
        sections[s].row_count = 1 + next_below(reader, 3);
        sections[s].rows = rows[s];
        for (uint32_t r = 0; r < sections[s].row_count; r++) {
            snprintf(rows[s][r].id, sizeof rows[s][r].id, "%u", r + 1);
            rows[s][r].seats = 1 + next_below(reader, 8);
        }
    }
    definition.sections = sections;
    definition.pool_count = next_below(reader, 3);
    for (uint32_t p = 0; p < definition.pool_count; p++) {
        snprintf(pools[p].id, sizeof pools[p].id, "P%u", p);
        pools[p].capacity = next_below(reader, 12);
        pools[p].price = next_below(reader, 50);
    }
    definition.pools = pools;
    if (next_below(reader, 2))
        definition.waiting_room = (hf_room_definition_t){true,
                                                         0.5 * (1 + next_below(reader, 40)),
                                                         1 + next_below(reader, 3),
                                                         next_below(reader, 4),
                                                         100 + next_below(reader, 20) * 100,
                                                         1 + next_below(reader, 20),
                                                         0,
                                                         {0}};
    /* Half the rooms have a pre-queue opening within the next two seconds. */
    if (definition.waiting_room.enabled && next_below(reader, 2)) {
        definition.waiting_room.opens_at_ms = state->now + 1 + next_below(reader, 2000);
        memset(definition.waiting_room.shuffle_seed, (int)next_below(reader, 256),
               sizeof definition.waiting_room.shuffle_seed);
    }
    hf_error_detail_t detail;
    hf_error_t error = hf_core_event_create(state->core, &definition, state->now, &detail);
    if (error) fail("event create refused a valid definition", error_code(error));
    state->event_count++;
}

/* A seat id that exists most of the time, or a near miss. */
static void seat_id(reader_t *reader, char *out, size_t size) {
    uint32_t kind = next_byte(reader);
    char section = (char)('A' + (kind & 1) + ((kind & 0x40) ? 2 : 0));
    unsigned row = 1 + next_below(reader, 4);
    unsigned number = next_below(reader, 10);
    if ((kind & 0x80) && (kind & 0x20)) {
        snprintf(out, size, "%c-%u-%u-x", section, row, number);
        return;
    }
    snprintf(out, size, "%c-%u-%u", section, row, number);
}

static const char *hold_id_pick(fuzz_state_t *state, reader_t *reader) {
    if (state->hold_count == 0 || next_below(reader, 16) == 0) return "res_missing";
    return state->hold_ids[next_below(reader, state->hold_count)];
}

static const char *user_pick(reader_t *reader) {
    static const char *const users[USERS] = {"u0", "u1", "u2", "u3"};
    return users[next_below(reader, USERS)];
}

static int64_t ttl_pick(reader_t *reader) {
    uint32_t value = next_byte(reader);
    if (value < 32) return -1;
    if (value > 250) return HF_HOLD_TTL_MS_MAX + 1;
    return (int64_t)(value - 32) * 50;
}

static hf_error_t op_hold(fuzz_state_t *state, reader_t *reader, bool booking) {
    char seats[4][64];
    const char *seat_ids[4];
    uint32_t versions[4];
    hf_pool_request_t pools[2];
    hf_hold_request_t request;
    memset(&request, 0, sizeof request);
    request.event_id = state->event_ids[next_below(reader, state->event_count)];
    if (next_below(reader, 32) == 0) request.event_id = "missing";
    request.user_id = user_pick(reader);
    request.seat_count = next_below(reader, 5);
    for (uint32_t i = 0; i < request.seat_count; i++) {
        seat_id(reader, seats[i], sizeof seats[i]);
        seat_ids[i] = seats[i];
        versions[i] = 1 + next_below(reader, 4);
    }
    request.seat_ids = seat_ids;
    request.pool_count = next_below(reader, 3);
    for (uint32_t i = 0; i < request.pool_count; i++) {
        pools[i].pool_id = next_below(reader, 8) ? (i ? "P1" : "P0") : "P9";
        pools[i].quantity = next_below(reader, 6);
    }
    request.pools = pools;
    request.ttl_ms = ttl_pick(reader);
    request.replace_existing = next_below(reader, 4) == 0;
    uint32_t best = next_byte(reader);
    if (!booking && best >= 160) {
        request.best_count = best % 6;
        request.best_adjacent = best & 1;
        request.best_section = (best & 2) ? NULL : ((best & 4) ? "A" : "Z");
    }
    char id[HF_SERVER_ID_SIZE + 1];
    snprintf(id, sizeof id, "%s%u", booking ? "ord_" : "res_", ++state->serial);
    hf_error_detail_t detail;
    hf_error_t error;
    if (booking) {
        request.seat_versions = versions;
        uint32_t order_index;
        error = hf_core_book(state->core, &request, id, "pi_fuzz", state->now, &order_index,
                             &detail);
        if (!error && state->order_count < HOLDS_MAX)
            memcpy(state->order_ids[state->order_count++], id, sizeof id);
    } else {
        request.hold_id = id;
        uint32_t hold_index;
        error = hf_core_hold(state->core, &request, state->now, &hold_index, &detail);
        if (!error && state->hold_count < HOLDS_MAX)
            memcpy(state->hold_ids[state->hold_count++], id, sizeof id);
    }
    return error;
}

static hf_error_t op_commit(fuzz_state_t *state, reader_t *reader) {
    char id[HF_SERVER_ID_SIZE + 1];
    snprintf(id, sizeof id, "ord_%u", ++state->serial);
    uint32_t order_index;
    const char *hold_id = hold_id_pick(state, reader);
    hf_error_t error = hf_core_commit(state->core, hold_id, user_pick(reader), id, "pi_1",
                                      state->now, &order_index);
    if (!error && state->order_count < HOLDS_MAX) {
        const hf_order_t *order = hf_core_order_at(state->core, order_index);
        if (!order) fail("commit", "no order at the index it returned");
        memcpy(state->order_ids[state->order_count++], order->id, sizeof id);
    }
    return error;
}

/* Independent of hf_core_check: counts add up and each sold seat has one confirmed order. */
static void check_sales(const fuzz_state_t *state) {
    const hf_core_t *core = state->core;
    for (uint32_t e = 0; e < hf_core_event_count(core); e++) {
        const hf_event_t *event = hf_core_event_at(core, e);
        const hf_counts_t *c = &event->counts;
        if (c->available + c->held + c->sold != event->seat_count)
            fail("counts do not add up", event->id);
        uint32_t *sold_by = calloc(event->seat_count ? event->seat_count : 1, sizeof *sold_by);
        if (!sold_by) abort();
        for (uint32_t o = 0;; o++) {
            const hf_order_t *order = hf_core_order_at(core, o);
            if (!order) break;
            if (order->event != e || order->status != HF_ORDER_CONFIRMED) continue;
            const hf_item_t *items = hf_core_items(core, order->item_offset);
            for (uint32_t i = 0; i < order->seat_count; i++) {
                if (items[i].index >= event->seat_count) fail("order seat out of range", order->id);
                if (sold_by[items[i].index]) fail("a seat is in two confirmed orders", order->id);
                sold_by[items[i].index] = o + 1;
            }
        }
        uint32_t sold = 0;
        for (uint32_t s = 0; s < event->seat_count; s++) {
            bool is_sold = event->seats[s].status == HF_SEAT_SOLD;
            if (is_sold != (sold_by[s] != 0))
                fail("sold seats != seats of confirmed orders", event->id);
            sold += is_sold;
        }
        if (sold != c->sold) fail("sold count is wrong", event->id);
        for (uint32_t p = 0; p < event->pool_count; p++) {
            const hf_pool_t *pool = &event->pools[p];
            if (pool->held < 0 || pool->sold < 0 || pool->held + pool->sold > pool->capacity)
                fail("pool counts out of range", pool->id);
        }
        free(sold_by);
    }
}

/* A waiting room's join (op 0), poll (1) or complete (2) on a picked event and ticket. */
static hf_error_t op_queue(fuzz_state_t *state, reader_t *reader, uint32_t op) {
    const char *event_id = state->event_ids[next_below(reader, state->event_count)];
    uint32_t index;
    if (op == 0) {
        char id[HF_SERVER_ID_SIZE + 1];
        snprintf(id, sizeof id, "q_%u", state->serial++);
        bool created;
        hf_error_t error = hf_core_queue_join(state->core, event_id, user_pick(reader), id,
                                              state->now, &index, &created);
        if (!error && created && state->ticket_count < HOLDS_MAX)
            snprintf(state->ticket_ids[state->ticket_count++], HF_SERVER_ID_SIZE + 1, "%s", id);
        return error;
    }
    const char *ticket_id = state->ticket_count && next_below(reader, 16)
                                ? state->ticket_ids[next_below(reader, state->ticket_count)]
                                : "q_missing";
    hf_error_t error =
        op == 1 ? hf_core_queue_poll(state->core, event_id, ticket_id, state->now, &index)
                : hf_core_queue_complete(state->core, event_id, ticket_id, state->now, &index);
    if (!error && op == 1 && emitted != 0) fail("a poll emitted mutations", ticket_id);
    return error;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader_t reader = {data, size, 0};
    fuzz_state_t *state = calloc(1, sizeof *state);
    if (!state) abort();
    state->core = hf_core_create((hf_mutation_sink_t){count_sink, NULL});
    state->now = 1700000000000LL;
    /* Few finished holds kept, so slots are forgotten and reused within one input. */
    uint32_t finished_max = next_below(&reader, 4);
    hf_core_set_finished_max(state->core, finished_max);
    hf_core_set_tickets_finished_max(state->core, finished_max);
    create_event(state, &reader);
    if (next_below(&reader, 2)) create_event(state, &reader);
    for (int steps = 0; steps < 200 && reader.at < reader.size; steps++) {
        uint32_t op = next_below(&reader, 12);
        /* Expiry first, so an operation's own mutations can be counted alone. */
        hf_core_advance(state->core, state->now);
        emitted = 0;
        hf_error_t error = HF_OK;
        bool capped;
        switch (op) {
        case 0:
        case 1: error = op_hold(state, &reader, false); break;
        case 2:
            error = hf_core_extend(state->core, hold_id_pick(state, &reader), user_pick(&reader),
                                   ttl_pick(&reader), state->now, &capped);
            break;
        case 3:
            error = hf_core_release(state->core, hold_id_pick(state, &reader), user_pick(&reader),
                                    state->now);
            break;
        case 4: error = op_commit(state, &reader); break;
        case 5: {
            const char *order_id = state->order_count && next_below(&reader, 16)
                                       ? state->order_ids[next_below(&reader, state->order_count)]
                                       : "ord_missing";
            char refund_id[HF_SERVER_ID_SIZE + 1];
            snprintf(refund_id, sizeof refund_id, "ref_%u", ++state->serial);
            error = hf_core_cancel(state->core, order_id, user_pick(&reader), refund_id,
                                   state->now);
            break;
        }
        case 6: error = op_hold(state, &reader, true); break;
        case 7: state->now += (hf_time_ms_t)next_byte(&reader) * 37; break;
        case 9:
        case 10:
        case 11: error = op_queue(state, &reader, op - 9); break;
        case 8:
            state->now += 1;
            /* Everything so far durable, as when the store catches up. */
            hf_core_evict(state->core, hf_core_change_count(state->core));
            break;
        }
        /* Time moved without a command: the timer's sweep, as the engine runs it. */
        if (op == 7 || op == 8) hf_core_advance(state->core, state->now);
        if (error != HF_OK && emitted != 0)
            fail("an operation that failed emitted mutations", error_code(error));
        const char *fault = hf_core_check(state->core, state->now);
        if (fault) fail("hf_core_check", fault);
        check_sales(state);
    }
    hf_core_destroy(state->core);
    free(state);
    return 0;
}
