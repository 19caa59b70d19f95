/* bench/corebench: operations per second of the core alone, on one core, no network, no store.
 *
 *   hold+release  hold one random seat of a 60,000-seat event for a random user (of 1,000,000),
 *                 then release it: one "op" is the pair.
 *   hold+commit   hold one seat (a random permutation of a large event's seats, so each is sold
 *                 once), then commit it into an order: one "op" is the pair.
 *
 * Each op goes through the public API of src/core/core.h as the engine calls it: seat ids are
 * strings ("S-R12-345"), hold and order ids are fresh 36-byte strings, the mutation sink is
 * called for every record the store gets (it only counts them: the copy into a store batch is
 * not part of the core); seat and pool records are off, as in the server while no live stream
 * is open. Holds and orders stay in the core's tables as in the server, so tables grow
 * during the run; each repetition starts from a fresh core.
 *
 *   corebench [--ops N] [--reps R] [--seats N] [--users N] [--only release|commit] [--json PATH]
 *
 *   prequeue      the waiting room's opening (API.md section 6's opens_at): --ops pre-queue
 *                 tickets (at most 1,000,000) get their places in slices of the loop's turns;
 *                 the turns until all have one, the slices' time, and the p99 of polls and of
 *                 hold+release on another event during it, against the same line without an
 *                 opening (50 of each per turn, each timed from its turn's start).
 * --only runs one of the two and skips the best_available and dispatch measurements;
 * --only dispatch runs the dispatch measurement alone:
 *
 *   dispatch      the candidate search of a ride (core/dispatch/): a city of 100,000 free
 *                 drivers spread evenly over a 30 km square around Times Square, and rides at
 *                 random points of it with the default 3 km radius; the mean time of one
 *                 search (hf_dispatch_candidate, the ring search over the grid of free
 *                 drivers), then the same with nine drivers in ten busy (off the grid).
 * --users (default 1,000,000) sets how many users the holds are spread over: with a thousand,
 * everything the core touches stays in the caches, which shows its cost without the misses.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/dispatch/dispatch.h"
#include "core/queue.h"

static uint64_t mutations;

static void count_mutation(void *context, const hf_mutation_t *mutation) {
    (void)context;
    (void)mutation;
    mutations++;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t random_below(uint64_t *state, uint32_t bound) {
    return (uint32_t)(((splitmix64(state) >> 32) * (uint64_t)bound) >> 32);
}

/* "res_" or "ord_" and 32 hex digits of a counter mixed so ids do not share prefixes. */
static void make_id(char *out, const char *prefix, uint64_t counter) {
    static const char hex[] = "0123456789abcdef";
    uint64_t state = counter;
    uint64_t a = splitmix64(&state), b = splitmix64(&state);
    memcpy(out, prefix, 4);
    for (int i = 0; i < 16; i++) {
        out[4 + i] = hex[(a >> (4 * i)) & 15];
        out[20 + i] = hex[(b >> (4 * i)) & 15];
    }
    out[36] = '\0';
}

static void seat_name(char *out, size_t size, uint32_t seat) {
    snprintf(out, size, "S-R%" PRIu32 "-%" PRIu32, seat / 1000, seat % 1000 + 1);
}

static hf_core_t *make_core(uint32_t seats) {
    hf_mutation_sink_t sink = {count_mutation, NULL};
    hf_core_t *core = hf_core_create(sink);
    /* As the engine runs it while no live stream is open: seat and pool records are for
     * streams only (hf_core_set_stream_records). */
    hf_core_set_stream_records(core, false);
    uint32_t row_count = (seats + 999) / 1000;
    hf_row_definition_t *rows = calloc(row_count, sizeof *rows);
    for (uint32_t r = 0; r < row_count; r++) {
        snprintf(rows[r].id, sizeof rows[r].id, "R%" PRIu32, r);
        rows[r].seats = r + 1 < row_count ? 1000 : seats - r * 1000;
    }
    hf_section_definition_t section = {.id = "S",
                                       .price = 100,
                                       .row_count = row_count,
                                       .rows = rows};
    hf_event_definition_t definition = {
        .id = "bench",
        .name = "bench",
        .currency = "USD",
        .hold_ttl_ms = 600000,
        .max_hold_ms = 1800000,
        .max_seats_per_hold = 10,
        .section_count = 1,
        .sections = &section,
    };
    hf_error_detail_t detail;
    if (hf_core_event_create(core, &definition, 1700000000000, &detail) != HF_OK) {
        fprintf(stderr, "corebench: event create failed\n");
        exit(1);
    }
    free(rows);
    return core;
}

/* Seat ids and user ids are formatted before the clock starts: the engine receives them as
 * strings from the JSON decoder, so making them is not the core's work. */
typedef struct inputs {
    char (*seat_ids)[24];
    uint32_t seat_count;
    char (*user_ids)[16];
    uint32_t user_count;
} inputs_t;

/* The strings of one operation, as the engine hands them to the core: just parsed out of a
 * request, so in the processor's cache. A chunk of them is copied out of the big input arrays
 * before the clock runs: reading a random user's id out of a 16 MB array was a cache miss
 * that the engine never has (it was 11% of the time, charged to the core's first strlen). */
typedef struct op_strings {
    char seat_id[24];
    char user_id[16];
    char hold_id[40];
    char order_id[40];
} op_strings_t;

/* Small enough to stay in the first-level cache while the chunk runs. */
#define CHUNK_OPS 128u

typedef struct chunk {
    op_strings_t ops[CHUNK_OPS];
    uint32_t count;
} chunk_t;

/* A run counts only if the core it leaves behind is consistent. */
static void check_and_destroy(hf_core_t *core, hf_time_ms_t now) {
    const char *fault = hf_core_check(core, now);
    if (fault) {
        fprintf(stderr, "corebench: core check: %s\n", fault);
        exit(1);
    }
    hf_core_destroy(core);
}

/* What one run's operations share. */
typedef struct run {
    hf_core_t *core;
    const inputs_t *inputs;
    char (*seat_ids)[24]; /* hold+commit: the seats in sale order */
    uint64_t rng;
} run_t;

/* Fills the chunk with the strings of operations first .. first + count - 1. */
typedef void (*fill_fn)(chunk_t *chunk, run_t *run, uint64_t first, uint32_t count);
/* One operation on its strings; false when the core refused it. */
typedef bool (*operation_fn)(run_t *run, const op_strings_t *op, hf_time_ms_t now);

/* Runs ops operations chunk by chunk, the clock running only while the core works; checks
 * and frees the core; returns operations per second. */
static double run_chunks(run_t *run, uint64_t ops, fill_fn fill, operation_fn operation,
                         const char *name) {
    static chunk_t chunk;
    hf_time_ms_t now = 1700000001000;
    double elapsed = 0;
    for (uint64_t first = 0; first < ops; first += CHUNK_OPS) {
        uint32_t count = ops - first < CHUNK_OPS ? (uint32_t)(ops - first) : CHUNK_OPS;
        fill(&chunk, run, first, count);
        double start = now_s();
        for (uint32_t k = 0; k < count; k++) {
            if (((first + k) & 1023) == 0) now++;
            if (!operation(run, &chunk.ops[k], now)) {
                fprintf(stderr, "corebench: %s failed at %" PRIu64 "\n", name, first + k);
                exit(1);
            }
        }
        elapsed += now_s() - start;
    }
    check_and_destroy(run->core, now);
    return (double)ops / elapsed;
}

static bool hold_one(run_t *run, const op_strings_t *op, hf_time_ms_t now) {
    const char *seat = op->seat_id;
    hf_hold_request_t request = {.event_id = "bench",
                                 .user_id = op->user_id,
                                 .hold_id = op->hold_id,
                                 .seat_ids = &seat,
                                 .seat_count = 1,
                                 .ttl_ms = -1};
    uint32_t hold_index;
    hf_error_detail_t detail;
    return hf_core_hold(run->core, &request, now, &hold_index, &detail) == HF_OK;
}

/* A random seat for a random user. */
static void fill_release(chunk_t *chunk, run_t *run, uint64_t first, uint32_t count) {
    chunk->count = count;
    for (uint32_t k = 0; k < count; k++) {
        op_strings_t *op = &chunk->ops[k];
        const inputs_t *inputs = run->inputs;
        memcpy(op->seat_id, inputs->seat_ids[random_below(&run->rng, inputs->seat_count)], 24);
        memcpy(op->user_id, inputs->user_ids[random_below(&run->rng, inputs->user_count)], 16);
        make_id(op->hold_id, "res_", first + k);
    }
}

static bool hold_and_release(run_t *run, const op_strings_t *op, hf_time_ms_t now) {
    if (!hold_one(run, op, now)) return false;
    if (hf_core_release(run->core, op->hold_id, op->user_id, now) != HF_OK) return false;
    /* As the engine does once a batch is durable; here nothing waits for a store. */
    hf_core_evict(run->core, hf_core_change_count(run->core));
    return true;
}

static double run_hold_release(const inputs_t *inputs, uint64_t ops, uint64_t seed) {
    run_t run = {make_core(inputs->seat_count), inputs, NULL, seed};
    return run_chunks(&run, ops, fill_release, hold_and_release, "hold+release");
}

/* The run's seats in sale order, each for a random user. */
static void fill_commit(chunk_t *chunk, run_t *run, uint64_t first, uint32_t count) {
    chunk->count = count;
    for (uint32_t k = 0; k < count; k++) {
        op_strings_t *op = &chunk->ops[k];
        const inputs_t *inputs = run->inputs;
        memcpy(op->seat_id, run->seat_ids[first + k], 24);
        memcpy(op->user_id, inputs->user_ids[random_below(&run->rng, inputs->user_count)], 16);
        make_id(op->hold_id, "res_", first + k);
        make_id(op->order_id, "ord_", first + k);
    }
}

static bool hold_and_commit(run_t *run, const op_strings_t *op, hf_time_ms_t now) {
    uint32_t order_index;
    return hold_one(run, op, now) &&
           hf_core_commit(run->core, op->hold_id, op->user_id, op->order_id, "pi_1", now,
                          &order_index) == HF_OK;
}

static double run_hold_commit(const inputs_t *inputs, uint64_t ops, uint64_t seed) {
    /* One seat per op, each sold once: the event has as many seats as ops. */
    run_t run = {make_core((uint32_t)ops), inputs, malloc(ops * sizeof *run.seat_ids), seed};
    uint32_t *order = malloc(ops * sizeof *order);
    for (uint32_t i = 0; i < ops; i++) order[i] = i;
    for (uint32_t i = (uint32_t)ops - 1; i > 0; i--) {
        uint32_t j = random_below(&run.rng, i + 1), swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
    for (uint32_t i = 0; i < ops; i++) seat_name(run.seat_ids[i], sizeof run.seat_ids[i], order[i]);
    free(order);
    double result = run_chunks(&run, ops, fill_commit, hold_and_commit, "hold+commit");
    free(run.seat_ids);
    return result;
}

/* best_available on a nearly sold-out 100,000-seat event (100 rows of 1,000): every row has
 * scattered single seats left (one in 50), and one adjacent pair is left in the last row. A
 * pick of 2 must find that pair; it is held and released again, so every pick sees the same
 * state. Returns the microseconds of the first pick (which reads every row) and, in *steady,
 * the mean of the following ones (rows already known too full are skipped unread). */
static double run_best_available(uint64_t picks, double *steady) {
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){count_mutation, NULL});
    hf_row_definition_t rows[100];
    for (uint32_t r = 0; r < 100; r++) {
        snprintf(rows[r].id, sizeof rows[r].id, "R%" PRIu32, r);
        rows[r].seats = 1000;
    }
    hf_section_definition_t section = {.id = "S", .price = 100, .row_count = 100, .rows = rows};
    hf_event_definition_t definition = {.id = "best",
                                        .name = "best",
                                        .currency = "USD",
                                        .hold_ttl_ms = 600000,
                                        .max_hold_ms = 1800000,
                                        .max_seats_per_hold = 1000,
                                        .section_count = 1,
                                        .sections = &section};
    hf_error_detail_t detail;
    hf_time_ms_t now = 1700000000000;
    if (hf_core_event_create(core, &definition, now, &detail) != HF_OK) exit(1);
    static char names[1000][24];
    const char *ids[1000];
    char hold_id[40];
    for (uint32_t r = 0; r < 100; r++) {
        uint32_t count = 0;
        for (uint32_t n = 1; n <= 1000; n++) {
            bool keep_single = n % 50 == 25, keep_pair = r == 99 && (n == 500 || n == 501);
            if (keep_single || keep_pair) continue;
            snprintf(names[count], sizeof names[count], "S-R%" PRIu32 "-%" PRIu32, r, n);
            ids[count] = names[count];
            count++;
        }
        make_id(hold_id, "res_", 900000000ull + r);
        hf_hold_request_t fill = {.event_id = "best",
                                  .user_id = "filler",
                                  .hold_id = hold_id,
                                  .seat_ids = ids,
                                  .seat_count = count,
                                  .ttl_ms = -1};
        uint32_t index;
        if (hf_core_hold(core, &fill, now, &index, &detail) != HF_OK) exit(1);
    }
    double first = 0, total = 0;
    for (uint64_t i = 0; i < picks; i++) {
        make_id(hold_id, "res_", i);
        hf_hold_request_t pick = {.event_id = "best",
                                  .user_id = "buyer",
                                  .hold_id = hold_id,
                                  .ttl_ms = -1,
                                  .best_count = 2,
                                  .best_adjacent = true};
        uint32_t index;
        double start = now_s();
        hf_error_t error = hf_core_hold(core, &pick, now, &index, &detail);
        double elapsed = (now_s() - start) * 1e6;
        if (error != HF_OK || hf_core_release(core, hold_id, "buyer", now) != HF_OK) {
            fprintf(stderr, "corebench: best_available pick failed at %" PRIu64 "\n", i);
            exit(1);
        }
        if (i == 0) first = elapsed;
        else total += elapsed;
    }
    *steady = picks > 1 ? total / (double)(picks - 1) : first;
    hf_core_destroy(core);
    return first;
}

/* Dispatch's candidate search (see the top): drivers spread evenly over a 30 km square, then
 * searches from random points of it. free_percent of the drivers are free (the others are
 * PUT unavailable, so the grid holds only the free ones). Returns microseconds per search. */
static double run_dispatch_search(uint32_t drivers, uint32_t free_percent, uint64_t searches) {
    hf_core_t *core = hf_core_create((hf_mutation_sink_t){count_mutation, NULL});
    const double lat = 40.758, lng = -73.9855;
    /* 15 km each way: 0.1349 degrees of latitude, 0.1781 of longitude at this latitude. */
    const double half_lat = 15000.0 / 111195.0, half_lng = half_lat / 0.75736;
    uint64_t state = 42;
    hf_time_ms_t now = 1700000000000;
    hf_error_detail_t detail;
    char id[32];
    for (uint32_t d = 0; d < drivers; d++) {
        snprintf(id, sizeof id, "driver%" PRIu32, d);
        hf_driver_update_t update = {
            .fleet_id = "city",
            .driver_id = id,
            .lat = lat + half_lat * (2.0 * random_below(&state, 1000000) / 1e6 - 1),
            .lng = lng + half_lng * (2.0 * random_below(&state, 1000000) / 1e6 - 1),
            .has_available = true,
            .available = random_below(&state, 100) < free_percent,
            .has_rating = true,
            .rating = 4.0 + random_below(&state, 11) / 10.0};
        uint32_t index;
        if (hf_dispatch_driver_put(core, &update, now, &index, &detail) != HF_OK) exit(1);
    }
    uint32_t fleet;
    if (!hf_dispatch_fleet_find(core, "city", &fleet)) exit(1);
    double(*points)[2] = malloc(searches * sizeof *points);
    for (uint64_t i = 0; i < searches; i++) {
        points[i][0] = lat + half_lat * (2.0 * random_below(&state, 1000000) / 1e6 - 1);
        points[i][1] = lng + half_lng * (2.0 * random_below(&state, 1000000) / 1e6 - 1);
    }
    uint64_t found = 0, distance_sum = 0;
    double start = now_s();
    for (uint64_t i = 0; i < searches; i++) {
        uint32_t driver;
        int64_t distance;
        if (hf_dispatch_candidate(core, fleet, points[i][0], points[i][1],
                                  HF_DISPATCH_RADIUS_M_DEFAULT, UINT32_MAX, &driver, &distance)) {
            found++;
            distance_sum += (uint64_t)distance;
        }
    }
    double elapsed = now_s() - start;
    printf("dispatch: %" PRIu32 " drivers, %" PRIu32 "%% free: %.2f us per search (%" PRIu64
           " searches, %" PRIu64 " found a driver, %.0f m away on average)\n",
           drivers, free_percent, elapsed * 1e6 / (double)searches, searches, found,
           found ? (double)distance_sum / (double)found : 0.0);
    free(points);
    hf_core_destroy(core);
    return elapsed * 1e6 / (double)searches;
}

static int compare_doubles(const void *a, const void *b) {
    double left = *(const double *)a, right = *(const double *)b;
    return (left > right) - (left < right);
}

/* ---- the pre-queue's opening ---- */

#define PREQUEUE_T0 1700000001000

/* The loop thread's own time (user and system, page faults included), not the wall clock: on
 * a machine shared with other work, a preempted turn would measure the neighbours. */
static double thread_s(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}
/* Requests of each kind per loop turn (a turn is the millisecond between two slices): 50 polls
 * and 50 holds, some 100,000 requests a second. */
#define PREQUEUE_TURN_REQUESTS 50
#define PREQUEUE_TURNS 400

typedef struct prequeue_result {
    uint32_t turns_to_line; /* turns until every ticket had its place; 0 without an opening */
    double slices_s;        /* the opening's own time, summed over its slices */
    double slice_max_s;
    double poll_p99_us, hold_p99_us;
} prequeue_result_t;

/* "room": a waiting room of count tickets joined before opens_at (with_opening), or the same
 * line with no pre-queue; beside it the 60,000-seat "bench" event of the holds. */
static hf_core_t *prequeue_core(uint32_t count, bool with_opening, char (*ticket_ids)[40]) {
    hf_core_t *core = make_core(60000);
    hf_time_ms_t opens_at = PREQUEUE_T0 + count / 1000 + 10;
    hf_pool_definition_t pool = {.id = "ga", .capacity = 10, .price = 1};
    hf_event_definition_t room = {.id = "room",
                                  .name = "room",
                                  .currency = "USD",
                                  .hold_ttl_ms = 600000,
                                  .max_hold_ms = 1800000,
                                  .max_seats_per_hold = 10,
                                  .pool_count = 1,
                                  .pools = &pool};
    room.waiting_room = (hf_room_definition_t){
        true, 1000.0, 900, 0, 3600000, HF_QUEUE_WAITING_LIMIT, with_opening ? opens_at : 0, {0}};
    memset(room.waiting_room.shuffle_seed, 0x42, sizeof room.waiting_room.shuffle_seed);
    hf_error_detail_t detail;
    if (hf_core_event_create(core, &room, PREQUEUE_T0, &detail) != HF_OK) {
        fprintf(stderr, "corebench: the room's event create failed\n");
        exit(1);
    }
    char user[16];
    for (uint32_t i = 0; i < count; i++) {
        snprintf(user, sizeof user, "u%" PRIu32, i);
        make_id(ticket_ids[i], "q_t_", i);
        hf_time_ms_t at = PREQUEUE_T0 + i / 1000;
        hf_core_advance(core, at);
        uint32_t index;
        bool created;
        hf_error_t error = hf_core_queue_join(core, "room", user, ticket_ids[i], at, &index,
                                              &created);
        if (error != HF_OK) {
            fprintf(stderr, "corebench: join %" PRIu32 " failed (%d)\n", i, error);
            exit(1);
        }
    }
    return core;
}

/* A turn's requests, each timed from the turn's start: a request that arrived as the turn
 * began waits behind the slice and the requests before it, as on the server's loop (in the
 * thread's own time: thread_s). */
static void prequeue_requests(hf_core_t *core, char (*ticket_ids)[40], uint32_t count,
                              hf_time_ms_t now, double start, uint64_t *rng, double *polls,
                              double *holds, uint64_t *serial) {
    for (uint32_t k = 0; k < PREQUEUE_TURN_REQUESTS; k++) {
        uint32_t index;
        if (hf_core_queue_poll(core, "room", ticket_ids[random_below(rng, count)], now, &index) !=
            HF_OK) {
            fprintf(stderr, "corebench: a poll failed\n");
            exit(1);
        }
        (void)hf_core_ticket_position(core, index);
        polls[k] = (thread_s() - start) * 1e6;
        run_t run = {core, NULL, NULL, 0};
        op_strings_t op;
        seat_name(op.seat_id, sizeof op.seat_id, random_below(rng, 60000));
        snprintf(op.user_id, sizeof op.user_id, "h%" PRIu32, random_below(rng, 100000));
        make_id(op.hold_id, "res_", (*serial)++);
        if (!hold_and_release(&run, &op, now)) {
            fprintf(stderr, "corebench: a hold failed\n");
            exit(1);
        }
        holds[k] = (thread_s() - start) * 1e6;
    }
}

static prequeue_result_t run_prequeue(uint32_t count, bool with_opening) {
    char(*ticket_ids)[40] = malloc((size_t)count * sizeof *ticket_ids);
    hf_core_t *core = prequeue_core(count, with_opening, ticket_ids);
    size_t samples = (size_t)PREQUEUE_TURNS * PREQUEUE_TURN_REQUESTS;
    double *polls = malloc(samples * sizeof *polls), *holds = malloc(samples * sizeof *holds);
    prequeue_result_t result = {0};
    uint64_t rng = 7, serial = 0;
    uint32_t probe;
    hf_core_ticket_find(core, ticket_ids[0], &probe);
    hf_time_ms_t now = PREQUEUE_T0 + count / 1000 + 10;
    for (uint32_t turn = 0; turn < PREQUEUE_TURNS; turn++, now++) {
        double start = thread_s();
        hf_core_advance(core, now);
        double slice = thread_s() - start;
        if (with_opening && result.turns_to_line == 0) {
            result.slices_s += slice;
            if (slice > result.slice_max_s) result.slice_max_s = slice;
            if (!hf_core_ticket_pre_queue(core, probe)) result.turns_to_line = turn + 1;
        }
        size_t at = (size_t)turn * PREQUEUE_TURN_REQUESTS;
        prequeue_requests(core, ticket_ids, count, now, start, &rng, polls + at, holds + at,
                          &serial);
    }
    if (with_opening && result.turns_to_line == 0) {
        fprintf(stderr, "corebench: the line was not whole after %d turns\n", PREQUEUE_TURNS);
        exit(1);
    }
    qsort(polls, samples, sizeof *polls, compare_doubles);
    qsort(holds, samples, sizeof *holds, compare_doubles);
    result.poll_p99_us = polls[samples * 99 / 100];
    result.hold_p99_us = holds[samples * 99 / 100];
    check_and_destroy(core, now);
    free(polls);
    free(holds);
    free(ticket_ids);
    return result;
}

/* --only prequeue: the opening of count pre-queue tickets against the same line without one. */
static void report_prequeue(uint32_t count, const char *json_path) {
    prequeue_result_t opening = run_prequeue(count, true), plain = run_prequeue(count, false);
    printf("pre-queue of %" PRIu32 " tickets: every place given after %" PRIu32
           " loop turns (%.1f ms of slices, the longest %.2f ms; on the server a turn waits 1 ms "
           "for the next slice, so about %.0f ms from opens_at; times are the thread's own)\n",
           count, opening.turns_to_line, opening.slices_s * 1e3, opening.slice_max_s * 1e3,
           opening.turns_to_line + opening.slices_s * 1e3);
    printf("p99 during the opening: poll %.0f us, hold+release on another event %.0f us; "
           "without an opening: poll %.0f us, hold+release %.0f us\n",
           opening.poll_p99_us, opening.hold_p99_us, plain.poll_p99_us, plain.hold_p99_us);
    FILE *file = json_path ? fopen(json_path, "w") : NULL;
    if (!file) return;
    fprintf(file,
            "{\"tickets\":%" PRIu32 ",\"turns\":%" PRIu32 ",\"slices_ms\":%.1f,"
            "\"slice_max_ms\":%.2f,\"poll_p99_us\":%.0f,\"hold_p99_us\":%.0f,"
            "\"plain_poll_p99_us\":%.0f,\"plain_hold_p99_us\":%.0f}\n",
            count, opening.turns_to_line, opening.slices_s * 1e3, opening.slice_max_s * 1e3,
            opening.poll_p99_us, opening.hold_p99_us, plain.poll_p99_us, plain.hold_p99_us);
    fclose(file);
}

int main(int argc, char **argv) {
    uint64_t ops = 2000000;
    int reps = 3;
    uint32_t seats = 60000, users = 1000000;
    const char *json_path = NULL;
    const char *only = "";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) ops = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seats") == 0 && i + 1 < argc) seats = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--users") == 0 && i + 1 < argc) users = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json_path = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: corebench [--ops N] [--reps R] [--seats N] [--users N] "
                            "[--only release|commit|dispatch|prequeue] [--json PATH]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 99 || ops < 1 || ops > HF_EVENT_SEATS_MAX || seats < 1 || users < 1 ||
        users > 10000000) {
        fprintf(stderr, "corebench: bad options (ops at most %u)\n", HF_EVENT_SEATS_MAX);
        return 2;
    }
    inputs_t inputs = {.seat_count = seats, .user_count = users};
    inputs.seat_ids = malloc(seats * sizeof *inputs.seat_ids);
    inputs.user_ids = malloc(inputs.user_count * sizeof *inputs.user_ids);
    for (uint32_t s = 0; s < seats; s++)
        seat_name(inputs.seat_ids[s], sizeof inputs.seat_ids[s], s);
    for (uint32_t u = 0; u < inputs.user_count; u++)
        snprintf(inputs.user_ids[u], sizeof inputs.user_ids[u], "u%" PRIu32, u);

    double dispatch_us = 0, dispatch_busy_us = 0;
    if (only[0] == '\0' || strcmp(only, "dispatch") == 0) {
        dispatch_us = run_dispatch_search(100000, 100, 200000);
        dispatch_busy_us = run_dispatch_search(100000, 10, 200000);
    }
    if (strcmp(only, "dispatch") == 0) return 0;
    if (strcmp(only, "prequeue") == 0) {
        report_prequeue(ops < 1000000 ? (uint32_t)ops : 1000000, json_path);
        return 0;
    }
    double release[99], commit[99];
    for (int r = 0; r < reps; r++) {
        release[r] = strcmp(only, "commit") ? run_hold_release(&inputs, ops, 1 + (uint64_t)r) : 0;
        commit[r] = strcmp(only, "release") ? run_hold_commit(&inputs, ops, 1 + (uint64_t)r) : 0;
        printf("rep %d: hold+release %.0f/s, hold+commit %.0f/s\n", r + 1, release[r], commit[r]);
    }
    qsort(release, (size_t)reps, sizeof release[0], compare_doubles);
    qsort(commit, (size_t)reps, sizeof commit[0], compare_doubles);
    double release_median = release[reps / 2], commit_median = commit[reps / 2];
    printf("median of %d: hold+release %.0f/s, hold+commit %.0f/s (%" PRIu64
           " ops each, one core)\n",
           reps, release_median, commit_median, ops);
    double best_steady = 0, best_first = 0;
    if (only[0] == '\0') {
        best_first = run_best_available(10000, &best_steady);
        printf("best_available on a nearly sold-out 100,000-seat event: first pick %.1f us, "
               "then %.2f us per pick\n",
               best_first, best_steady);
    }
    if (json_path) {
        FILE *file = fopen(json_path, "w");
        if (!file) {
            perror(json_path);
            return 1;
        }
        fprintf(file,
                "{\"ops\":%" PRIu64 ",\"reps\":%d,\"hold_release_per_s\":%.0f,"
                "\"hold_commit_per_s\":%.0f,\"mutations\":%" PRIu64 ","
                "\"best_available_first_us\":%.1f,\"best_available_us\":%.2f,"
                "\"dispatch_search_us\":%.2f,\"dispatch_search_busy_us\":%.2f}\n",
                ops, reps, release_median, commit_median, mutations, best_first, best_steady,
                dispatch_us, dispatch_busy_us);
        fclose(file);
    }
    free(inputs.seat_ids);
    free(inputs.user_ids);
    return 0;
}
