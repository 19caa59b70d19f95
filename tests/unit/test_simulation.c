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
#include "core_fixtures.h"

#define EPOCH INT64_C(1750000000000)
#define USERS 8
#define EVENTS 4
#define SEATS_MAX 64
#define ROWS_MAX 16
#define POOLS_MAX 2
#define REQUEST_SEATS_MAX 8
#define ITEM_SEATS_MAX 16      /* named seats plus best_available picks: per_hold is at most 10 */
#define REQUEST_POOLS_MAX 3
#define SEAT_ID_SIZE (HF_SEAT_ID_SIZE_MAX + 1)
#define CHANGES_MAX 4096

/* ---- PRNG: splitmix64, never rand() ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t rng_below(uint32_t bound) { return bound ? (uint32_t)(rng_next() % bound) : 0; }
static bool rng_chance(uint32_t percent) { return rng_below(100) < percent; }
static int64_t rng_range(int64_t low, int64_t high) /* inclusive */
{
    return low + (int64_t)(rng_next() % (uint64_t)(high - low + 1));
}

/* ---- the model ---- */

typedef struct model_seat {
    char id[SEAT_ID_SIZE];
    uint8_t status;       /* hf_seat_status_t */
    uint32_t owner;       /* model hold + 1 when held, model order + 1 when sold */
    uint32_t version;
    uint32_t section;
    int64_t price;
} model_seat_t;

typedef struct model_pool {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t capacity, price, held, sold;
} model_pool_t;

typedef struct model_row {
    uint32_t section, first_seat, seat_count;
} model_row_t;

typedef struct model_event {
    fx_event_t definition;
    const char *id;
    uint32_t seat_count, pool_count, section_count, row_count;
    model_row_t rows[ROWS_MAX];
    uint32_t section_first_row[FX_SECTIONS_MAX], section_rows[FX_SECTIONS_MAX];
    model_seat_t seats[SEATS_MAX];
    model_pool_t pools[POOLS_MAX];
    int64_t ttl_ms, max_hold_ms;
    uint32_t per_user, per_hold;
} model_event_t;

typedef struct model_item {
    uint32_t seats[ITEM_SEATS_MAX];
    uint32_t seat_count;
    uint32_t pools[REQUEST_POOLS_MAX];
    uint32_t quantities[REQUEST_POOLS_MAX];
    uint32_t pool_count;
} model_items_t;

typedef struct model_hold {
    char id[24];
    uint32_t event, user;
    uint8_t status;
    hf_time_ms_t created, expires;
    int64_t total;
    model_items_t items;
    int32_t order;        /* model order index or -1 */
    uint32_t core_index;
    bool forgotten;       /* the core forgot it (hf_core_evict); core_index is stale */
    /* hf_core_change_count before the operation that ended it: its end's record is later. */
    uint64_t finished_after;
    uint64_t expired_step; /* step + 1 of the step that expired it (0: none) */
} model_hold_t;

typedef struct model_order {
    char id[24];
    uint32_t event, user, hold;
    bool booked;          /* hf_core_book: no hold (hold unused) */
    uint8_t status;
    hf_time_ms_t created;
    int64_t total;
    model_items_t items;
    uint32_t core_index;
    char payment[24];     /* the payment_ref it was committed with ("" for none) */
} model_order_t;

/* A refund a payment required; its index is the core's (refunds are never forgotten). */
typedef struct model_refund {
    char id[24];
    char intent[24];
    char reservation[24];  /* as the delivery named it */
    int64_t amount;        /* the amount paid */
    uint8_t reason, status;
    hf_time_ms_t created;
} model_refund_t;

/* A delivery that was not a repeat, with the outcome it decided. */
typedef struct model_delivery {
    char intent[24];
    uint8_t type;          /* hf_payment_type_t */
    int32_t hold;          /* the model hold it named, or -1 */
    char reservation[24];  /* as it named it */
    int64_t amount;
    uint8_t result, reason;
    bool late;
    int32_t order, refund; /* model indexes, or -1 */
    hf_time_ms_t at;
} model_delivery_t;

/* One seat status change, as the core should report it. */
typedef struct change {
    uint32_t event, seat, version;
    uint8_t status;
} change_t;

typedef struct model {
    model_event_t events[EVENTS];
    model_hold_t *holds;
    uint32_t hold_count, hold_capacity;
    model_order_t *orders;
    uint32_t order_count, order_capacity;
    uint32_t *active;     /* held holds */
    uint32_t active_count, active_capacity;
    uint32_t *live;       /* confirmed orders */
    uint32_t live_count, live_capacity;
    uint32_t *kept;       /* released and expired holds the core has not forgotten */
    uint32_t kept_count, kept_capacity;
    model_refund_t *refunds;
    uint32_t refund_count, refund_capacity;
    model_delivery_t *deliveries; /* in arrival order, so by age */
    uint32_t delivery_count, delivery_capacity;
    /* Deliveries before it were older than HF_WEBHOOK_DEDUP_KEEP_MS at the last delivery. */
    uint32_t delivery_first;
    uint32_t intent_serial; /* names fresh payment intents: pw_N */
    int32_t boundary;     /* the delivery whose window's edge the clock just moved to, or -1 */
    uint64_t operation_changes; /* hf_core_change_count when the operation began */
    uint64_t step_changes[8];   /* hf_core_change_count after each of the last 8 steps */
    hf_time_ms_t now;     /* the simulated clock */
    hf_time_ms_t applied; /* the last time given to the core */
    /* What the current operation changed. */
    change_t changes[CHANGES_MAX];
    uint32_t change_count;
    uint32_t touched_holds[64], touched_hold_count;
    uint32_t expected[FX_TYPES];      /* mutation records by type */
    uint32_t extend_unchanged;        /* an extend that moved nothing: 0 or 1 HOLD_UPDATE */
    /* Seats of replaced holds taken again by the new hold: the core may report them released
     * and held again (two changes) or moved (none). */
    uint32_t moved_event, moved_seats[ITEM_SEATS_MAX], moved_count;
} model_t;

static const char *const user_ids[USERS] = {"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"};

static model_t model;
static hf_core_t *core;
static fx_sink_t sink;
static uint64_t seed;
static uint64_t step;
static const char *operation = "start";
/* The run under way, and how to reproduce its step: the variable of its operations, and the
 * other run's setting that skips it. */
static const char *run_name = "test_simulation";
static const char *run_variable = "HF_SIM_OPERATIONS";
static const char *run_skip = "HF_SIM_WINDOW_OPERATIONS=0";
static char description[512];
/* The last error code of core.h (keep in step when one is added). */
#define ERROR_LAST HF_ERROR_REFUND_NOT_FOUND
static uint64_t error_stats[ERROR_LAST + 1];
/* HF_SIM_LAX_NEXT_EXPIRY=1: accept an hf_core_next_expiry earlier than the model's (a stale
 * timer entry) and only fail when it is late. For exploring past that known discrepancy; the
 * default is the header's contract, the exact earliest deadline. */
static bool lax_next_expiry;
static bool stream_records; /* this operation's seat and pool records are on */
/* The run across the 7-day window of deliveries: more payments, the clock jumps by days. */
static bool window_run;
static uint32_t finished_max;

enum { S_HOLD, S_HOLD_OK, S_EXTEND, S_EXTEND_OK, S_RELEASE, S_RELEASE_OK, S_COMMIT, S_COMMIT_OK,
       S_CANCEL, S_CANCEL_OK, S_CLOCK, S_ADVANCE, S_EXPIRED, S_REPLACED, S_MOVED, S_CHECKS,
       S_FORGOTTEN, S_REVIVED, S_QUIET,
       S_AMBIGUOUS, S_BEST, S_BEST_OK, S_BEST_SEPARATE_OK, S_BEST_NAMED_OK, S_BEST_REPLACE_OK,
       S_BEST_NO_FIT, S_BEST_PICKED, S_BOOK, S_BOOK_OK, S_BOOK_CONFLICT, S_BOOK_CANCEL_OK,
       S_PAY, S_PAY_FAILED, S_PAY_REPEAT, S_PAY_REPEAT_CHANGED, S_PAY_REPEAT_PRUNED,
       S_PAY_INVALID, S_PAY_COMMITTED, S_PAY_LATE, S_PAY_OWN, S_PAY_REFUND,
       S_PAY_REASON, /* five counters, one per hf_refund_reason_t */
       S_REFUND_COMPLETE = S_PAY_REASON + 5, S_REFUND_COMPLETE_OK, S_REFUND_COMPLETE_AGAIN,
       S_WINDOW_JUMP, S_EDGE_KEPT, S_EDGE_PRUNED, S_COUNT };
static uint64_t stats[S_COUNT];

static void mismatch(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

static void mismatch(const char *format, ...)
{
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    fprintf(stderr,
            "\nSIMULATION MISMATCH (%s) seed=%" PRIu64 " step=%" PRIu64 " now=%" PRId64
            " (epoch+%" PRId64 ")\n  operation: %s\n  %s\n  %s\n"
            "  reproduce: HF_SEED=%" PRIu64 " %s=%" PRIu64 " %s\n",
            run_name, seed, step, model.now, model.now - EPOCH, operation, description, text,
            seed, run_variable, step + 1, run_skip);
    fail_msg("simulation mismatch (%s) at seed=%" PRIu64 " step=%" PRIu64 ": %s", run_name, seed,
             step, text);
    abort(); /* not reached */
}

#define GROW(array, count, capacity)                                                   \
    do {                                                                               \
        if ((count) >= (capacity)) {                                                   \
            (capacity) = (capacity) ? (capacity) * 2 : 256;                            \
            (array) = realloc((array), (size_t)(capacity) * sizeof *(array));          \
            assert_non_null(array);                                                    \
        }                                                                              \
    } while (0)

static void list_remove(uint32_t *list, uint32_t *count, uint32_t value)
{
    for (uint32_t i = 0; i < *count; i++) {
        if (list[i] == value) {
            list[i] = list[--*count];
            return;
        }
    }
    mismatch("model bug: %u not in list", value);
}

static void touch_hold(uint32_t hold)
{
    for (uint32_t i = 0; i < model.touched_hold_count; i++)
        if (model.touched_holds[i] == hold) return;
    if (model.touched_hold_count < 64) model.touched_holds[model.touched_hold_count++] = hold;
}

static void seat_change(uint32_t event, uint32_t seat, uint8_t status, uint32_t owner)
{
    model_seat_t *s = &model.events[event].seats[seat];
    s->status = status;
    s->owner = owner;
    s->version++;
    assert_true(model.change_count < CHANGES_MAX);
    model.changes[model.change_count++] = (change_t){event, seat, s->version, status};
}

/* A hold leaves the held state: its seats and units are free again. */
static void model_hold_finish(uint32_t index, uint8_t status)
{
    model_hold_t *h = &model.holds[index];
    model_event_t *event = &model.events[h->event];
    h->status = status;
    list_remove(model.active, &model.active_count, index);
    for (uint32_t i = 0; i < h->items.seat_count; i++)
        seat_change(h->event, h->items.seats[i], HF_SEAT_AVAILABLE, 0);
    for (uint32_t i = 0; i < h->items.pool_count; i++)
        event->pools[h->items.pools[i]].held -= h->items.quantities[i];
    model.expected[HF_MUTATION_POOL] += h->items.pool_count;
    model.expected[HF_MUTATION_HOLD_UPDATE]++;
    touch_hold(index);
    h->finished_after = model.operation_changes;
    GROW(model.kept, model.kept_count, model.kept_capacity);
    model.kept[model.kept_count++] = index;
}

/* The model's own expiry: every held hold with now >= expires_at. */
static uint32_t model_expire(hf_time_ms_t now)
{
    uint32_t expired = 0;
    for (uint32_t i = 0; i < model.active_count;) {
        uint32_t index = model.active[i];
        if (now >= model.holds[index].expires) {
            model_hold_finish(index, HF_HOLD_EXPIRED);
            model.holds[index].expired_step = step + 1;
            expired++;
        } else {
            i++;
        }
    }
    model.applied = now;
    return expired;
}

static uint32_t user_units(uint32_t event, uint32_t user, bool held, bool sold)
{
    uint32_t units = 0;
    if (held) {
        for (uint32_t i = 0; i < model.active_count; i++) {
            const model_hold_t *h = &model.holds[model.active[i]];
            if (h->event != event || h->user != user) continue;
            units += h->items.seat_count;
            for (uint32_t p = 0; p < h->items.pool_count; p++) units += h->items.quantities[p];
        }
    }
    if (sold) {
        for (uint32_t i = 0; i < model.live_count; i++) {
            const model_order_t *o = &model.orders[model.live[i]];
            if (o->event != event || o->user != user) continue;
            units += o->items.seat_count;
            for (uint32_t p = 0; p < o->items.pool_count; p++) units += o->items.quantities[p];
        }
    }
    return units;
}

/* ---- setup ---- */

static void event_setup(uint32_t e)
{
    model_event_t *event = &model.events[e];
    fx_event_t *def = &event->definition;
    switch (e) {
    case 0:
        fx_event_init(def, "alpha", 60000, 180000, 6, 5);
        fx_event_section(def, "FLOOR", 100, 3, 8);
        fx_event_section(def, "BALC", 40, 3, 8);
        fx_event_pool(def, "GA", 5, 25);
        fx_event_pool(def, "VIP", 3, 200);
        break;
    case 1:
        fx_event_init(def, "beta", 30000, 90000, 0, 6);
        fx_event_section(def, "S", 10, 2, 8);
        fx_event_section(def, "T.2", 5, 1, 3);
        break;
    case 2:
        fx_event_init(def, "gamma", 20000, 40000, 3, 4);
        fx_event_pool(def, "P", 4, 7);
        fx_event_pool(def, "Q_1", 10, 1);
        break;
    default:
        /* Rows of odd, even and single-seat lengths, for best_available. */
        fx_event_init(def, "delta", 45000, 120000, 10, 10);
        fx_event_section(def, "L", 30, 4, 1);
        def->rows[0][0].seats = 7;
        def->rows[0][1].seats = 10;
        def->rows[0][2].seats = 1;
        def->rows[0][3].seats = 12;
        fx_event_section(def, "R", 20, 3, 1);
        def->rows[1][0].seats = 9;
        def->rows[1][1].seats = 4;
        def->rows[1][2].seats = 11;
        fx_event_pool(def, "G", 6, 15);
        break;
    }
    event->id = def->definition.id;
    event->ttl_ms = def->definition.hold_ttl_ms;
    event->max_hold_ms = def->definition.max_hold_ms;
    event->per_user = def->definition.max_seats_per_user;
    event->per_hold = def->definition.max_seats_per_hold;
    event->section_count = def->definition.section_count;
    for (uint32_t s = 0; s < def->definition.section_count; s++) {
        const hf_section_definition_t *section = &def->sections[s];
        event->section_first_row[s] = event->row_count;
        event->section_rows[s] = section->row_count;
        for (uint32_t r = 0; r < section->row_count; r++) {
            assert_true(event->row_count < ROWS_MAX);
            event->rows[event->row_count++] =
                (model_row_t){s, event->seat_count, section->rows[r].seats};
            assert_true(event->seat_count + section->rows[r].seats <= SEATS_MAX);
            for (uint32_t n = 1; n <= section->rows[r].seats; n++) {
                model_seat_t *seat = &event->seats[event->seat_count++];
                char id[SEAT_ID_SIZE];
                snprintf(id, sizeof id, "%s-%s-%u", section->id, section->rows[r].id, n);
                memcpy(seat->id, id, sizeof id);
                seat->status = HF_SEAT_AVAILABLE;
                seat->version = 1;
                seat->section = s;
                seat->price = section->price;
            }
        }
    }
    for (uint32_t p = 0; p < def->definition.pool_count; p++) {
        model_pool_t *pool = &event->pools[event->pool_count++];
        memcpy(pool->id, def->pools[p].id, sizeof pool->id);
        pool->capacity = def->pools[p].capacity;
        pool->price = def->pools[p].price;
    }
    hf_error_detail_t detail = {0};
    hf_error_t error = hf_core_event_create(core, &def->definition, EPOCH, &detail);
    if (error != HF_OK) mismatch("event %s: %s", event->id, fx_error_code(error));
}

/* ---- comparison ---- */

static const char *status_name(uint8_t status)
{
    static const char *const names[] = {"held", "confirmed", "released", "expired"};
    return status < 4 ? names[status] : "?";
}

/* A hold's or order's items, in order: named seats, then best_available picks, then pools. */
static void compare_items(const char *id, uint32_t event, const model_items_t *m,
                          uint32_t item_offset)
{
    const hf_item_t *items = hf_core_items(core, item_offset);
    const model_event_t *e = &model.events[event];
    for (uint32_t i = 0; i < m->seat_count; i++) {
        if (items[i].index != m->seats[i] || items[i].quantity != 0)
            mismatch("%s: seat item %u is %s (index %u, quantity %u), model %s", id, i,
                     items[i].index < e->seat_count ? e->seats[items[i].index].id : "?",
                     items[i].index, items[i].quantity, e->seats[m->seats[i]].id);
    }
    for (uint32_t i = 0; i < m->pool_count; i++) {
        const hf_item_t *item = &items[m->seat_count + i];
        if (item->index != m->pools[i] || item->quantity != m->quantities[i])
            mismatch("%s: pool item %u is %u x%u, model %u x%u", id, i, item->index,
                     item->quantity, m->pools[i], m->quantities[i]);
    }
}

static void compare_hold(uint32_t index)
{
    const model_hold_t *m = &model.holds[index];
    if (m->forgotten) {
        if (hf_core_hold_find(core, m->id, NULL) != NULL) mismatch("hold %s: forgotten but found", m->id);
        return;
    }
    const hf_hold_t *c = hf_core_hold_at(core, m->core_index);
    if (c == NULL) mismatch("hold %s: hf_core_hold_at(%u) is NULL", m->id, m->core_index);
    if (strcmp(c->id, m->id) != 0) mismatch("hold %s: core index has id %s", m->id, c->id);
    if (c->status != m->status)
        mismatch("hold %s: status %s, model %s (expires_at epoch+%" PRId64 ")", m->id,
                 status_name(c->status), status_name(m->status), m->expires - EPOCH);
    if (c->expires_at_ms != m->expires)
        mismatch("hold %s: expires_at epoch+%" PRId64 ", model epoch+%" PRId64, m->id,
                 c->expires_at_ms - EPOCH, m->expires - EPOCH);
    if (c->created_at_ms != m->created) mismatch("hold %s: created_at differs", m->id);
    if (c->total != m->total)
        mismatch("hold %s: total %" PRId64 ", model %" PRId64, m->id, c->total, m->total);
    if (c->seat_count != m->items.seat_count || c->pool_count != m->items.pool_count)
        mismatch("hold %s: %u seats %u pools, model %u %u", m->id, c->seat_count, c->pool_count,
                 m->items.seat_count, m->items.pool_count);
    compare_items(m->id, m->event, &m->items, c->item_offset);
    if (c->status == HF_HOLD_HELD && model.applied >= c->expires_at_ms)
        mismatch("hold %s: lapsed (expires_at epoch+%" PRId64 ") but held", m->id,
                 c->expires_at_ms - EPOCH);
    uint32_t order = m->order >= 0 ? model.orders[m->order].core_index + 1 : 0;
    if (c->order != order) mismatch("hold %s: order %u, model %u", m->id, c->order, order);
    if (strcmp(hf_core_user_id(core, c->user), user_ids[m->user]) != 0)
        mismatch("hold %s: user differs", m->id);
}

static void compare_order(uint32_t index)
{
    const model_order_t *m = &model.orders[index];
    const hf_order_t *c = hf_core_order_at(core, m->core_index);
    if (c == NULL || strcmp(c->id, m->id) != 0) mismatch("order %s: not at its index", m->id);
    if (c->status != m->status) mismatch("order %s: status %d, model %d", m->id, c->status, m->status);
    if (c->total != m->total) mismatch("order %s: total differs", m->id);
    uint32_t hold = m->booked ? 0 : model.holds[m->hold].core_index + 1;
    if (c->hold != hold) mismatch("order %s: hold %u, model %u", m->id, c->hold, hold);
    if (c->created_at_ms != m->created) mismatch("order %s: created_at differs", m->id);
    if (strcmp(hf_core_user_id(core, c->user), user_ids[m->user]) != 0)
        mismatch("order %s: user differs", m->id);
    if (c->event != m->event) mismatch("order %s: event %u, model %u", m->id, c->event, m->event);
    if (c->seat_count != m->items.seat_count || c->pool_count != m->items.pool_count)
        mismatch("order %s: %u seats %u pools, model %u %u", m->id, c->seat_count, c->pool_count,
                 m->items.seat_count, m->items.pool_count);
    compare_items(m->id, m->event, &m->items, c->item_offset);
    const char *payment = hf_core_string(core, c->payment_ref);
    if (strcmp(payment ? payment : "", m->payment) != 0)
        mismatch("order %s: payment_ref %s, model %s", m->id, payment ? payment : "none",
                 m->payment[0] ? m->payment : "none");
}

static const char *reason_name(uint8_t reason)
{
    return reason <= HF_REFUND_ALREADY_CONFIRMED ? hf_refund_reason_name(reason) : "?";
}

static void compare_refund(uint32_t index)
{
    const model_refund_t *m = &model.refunds[index];
    const hf_refund_t *c = hf_core_refund_at(core, index);
    if (c == NULL || strcmp(c->id, m->id) != 0)
        mismatch("refund %s: not at index %u (%s)", m->id, index, c ? c->id : "none");
    /* A cancelled booking's refund names no hold: "" in the model. */
    const char *reservation = c->reservation_id ? c->reservation_id : "";
    if (strcmp(c->payment_intent_id, m->intent) != 0 || strcmp(reservation, m->reservation) != 0)
        mismatch("refund %s: intent %s reservation %s, model %s %s", m->id, c->payment_intent_id,
                 reservation, m->intent, m->reservation);
    if (c->amount != m->amount)
        mismatch("refund %s: amount %" PRId64 ", model %" PRId64, m->id, c->amount, m->amount);
    if (c->reason != m->reason)
        mismatch("refund %s: reason %s, model %s", m->id, reason_name(c->reason),
                 reason_name(m->reason));
    if (c->status != m->status || c->created_at_ms != m->created)
        mismatch("refund %s: status %d created epoch+%" PRId64 ", model %d epoch+%" PRId64, m->id,
                 c->status, c->created_at_ms - EPOCH, m->status, m->created - EPOCH);
}

static void compare_state(bool full)
{
    for (uint32_t e = 0; e < EVENTS; e++) {
        const model_event_t *m = &model.events[e];
        const hf_event_t *c = hf_core_event_at(core, e);
        if (c == NULL || strcmp(c->id, m->id) != 0) mismatch("event %u missing", e);
        hf_counts_t total = {0, 0, 0}, sections[FX_SECTIONS_MAX];
        memset(sections, 0, sizeof sections);
        for (uint32_t s = 0; s < m->seat_count; s++) {
            const model_seat_t *ms = &m->seats[s];
            const hf_seat_t *cs = &c->seats[s];
            if (cs->status != ms->status)
                mismatch("seat %s/%s: status %d, model %d", m->id, ms->id, cs->status, ms->status);
            if (cs->version != ms->version)
                mismatch("seat %s/%s: version %u, model %u", m->id, ms->id, cs->version,
                         ms->version);
            uint32_t owner = 0;
            if (ms->status == HF_SEAT_HELD) owner = model.holds[ms->owner - 1].core_index + 1;
            if (ms->status == HF_SEAT_SOLD) owner = model.orders[ms->owner - 1].core_index + 1;
            if (cs->owner != owner)
                mismatch("seat %s/%s: owner %u, model %u", m->id, ms->id, cs->owner, owner);
            uint32_t *slot[2][3] = {
                {&total.available, &total.held, &total.sold},
                {&sections[ms->section].available, &sections[ms->section].held,
                 &sections[ms->section].sold}};
            (*slot[0][ms->status])++;
            (*slot[1][ms->status])++;
        }
        if (c->row_count != m->row_count) mismatch("event %s: %u rows, model %u", m->id, c->row_count,
                                                   m->row_count);
        for (uint32_t r = 0; r < m->row_count; r++) {
            const model_row_t *mr = &m->rows[r];
            const hf_row_t *cr = &c->rows[r];
            uint32_t available = 0;
            for (uint32_t s = mr->first_seat; s < mr->first_seat + mr->seat_count; s++)
                available += m->seats[s].status == HF_SEAT_AVAILABLE;
            if (cr->first_seat != mr->first_seat || cr->seat_count != mr->seat_count ||
                cr->section != mr->section)
                mismatch("event %s row %u: layout %u+%u in section %u, model %u+%u in %u", m->id, r,
                         cr->first_seat, cr->seat_count, cr->section, mr->first_seat,
                         mr->seat_count, mr->section);
            if (cr->available != available)
                mismatch("event %s row %s-%s: available %u, model %u", m->id,
                         c->sections[mr->section].id, cr->id, cr->available, available);
        }
        if (memcmp(&total, &c->counts, sizeof total) != 0)
            mismatch("event %s: counts %u/%u/%u, seats say %u/%u/%u", m->id, c->counts.available,
                     c->counts.held, c->counts.sold, total.available, total.held, total.sold);
        for (uint32_t s = 0; s < m->section_count; s++) {
            if (memcmp(&sections[s], &c->sections[s].counts, sizeof total) != 0)
                mismatch("event %s section %s: counts %u/%u/%u, seats say %u/%u/%u", m->id,
                         c->sections[s].id, c->sections[s].counts.available,
                         c->sections[s].counts.held, c->sections[s].counts.sold,
                         sections[s].available, sections[s].held, sections[s].sold);
        }
        for (uint32_t p = 0; p < m->pool_count; p++) {
            const model_pool_t *mp = &m->pools[p];
            const hf_pool_t *cp = &c->pools[p];
            if (cp->held != mp->held || cp->sold != mp->sold)
                mismatch("pool %s/%s: held %" PRId64 " sold %" PRId64 ", model %" PRId64
                         " %" PRId64, m->id, mp->id, cp->held, cp->sold, mp->held, mp->sold);
            if (mp->held < 0 || mp->held + mp->sold > mp->capacity)
                mismatch("model pool %s/%s out of bounds", m->id, mp->id);
        }
    }
    if (hf_core_holds_active(core) != model.active_count)
        mismatch("holds_active %u, model %u", hf_core_holds_active(core), model.active_count);
    hf_time_ms_t next = INT64_MAX;
    for (uint32_t i = 0; i < model.active_count; i++) {
        const model_hold_t *h = &model.holds[model.active[i]];
        if (h->expires < next) next = h->expires;
        if (model.applied >= h->expires) mismatch("model bug: a lapsed hold is active");
        compare_hold(model.active[i]);
    }
    hf_time_ms_t core_next = hf_core_next_expiry(core);
    if (core_next != next && !(lax_next_expiry && core_next < next))
        mismatch("next_expiry epoch+%" PRId64 ", model epoch+%" PRId64 " (%s)",
                 hf_core_next_expiry(core) == INT64_MAX ? -1 : hf_core_next_expiry(core) - EPOCH,
                 next == INT64_MAX ? -1 : next - EPOCH,
                 hf_core_next_expiry(core) < next ? "early" : "late");
    for (uint32_t i = 0; i < model.touched_hold_count; i++) compare_hold(model.touched_holds[i]);
    if (hf_core_order_at(core, model.order_count) != NULL)
        mismatch("an order beyond the model's %u: %s", model.order_count,
                 hf_core_order_at(core, model.order_count)->id);
    if (hf_core_refund_count(core) != model.refund_count)
        mismatch("%u refunds, model %u", hf_core_refund_count(core), model.refund_count);
    if (hf_core_deliveries_kept(core) != model.delivery_count - model.delivery_first)
        mismatch("hf_core_deliveries_kept %u, model %u (those at most %lld ms old at the last "
                 "delivery; the oldest the model keeps is %" PRId64 " ms old now)",
                 hf_core_deliveries_kept(core), model.delivery_count - model.delivery_first,
                 (long long)HF_WEBHOOK_DEDUP_KEEP_MS,
                 model.delivery_first < model.delivery_count
                     ? model.now - model.deliveries[model.delivery_first].at : -1);
    if (full) {
        for (uint32_t i = 0; i < model.hold_count; i++) compare_hold(i);
        for (uint32_t i = 0; i < model.order_count; i++) compare_order(i);
        for (uint32_t i = 0; i < model.refund_count; i++) compare_refund(i);
        for (uint32_t u = 0; u < USERS; u++) {
            uint32_t count = 0, expected = 0;
            const uint32_t *orders = hf_core_user_orders(core, user_ids[u], &count);
            for (uint32_t i = 0; i < model.order_count; i++) {
                if (model.orders[i].user != u) continue;
                if (orders == NULL || expected >= count ||
                    orders[expected] != model.orders[i].core_index)
                    mismatch("user %s: orders differ at %u", user_ids[u], expected);
                expected++;
            }
            if (expected != count) mismatch("user %s: %u orders, model %u", user_ids[u], count, expected);
        }
    }
}

/* The mutation records of one operation against the model's changes. */
static void compare_mutations(void)
{
    /* Seats moved from a replaced hold to the new one: see what the core did. */
    for (uint32_t i = 0; i < model.moved_count; i++) {
        model_seat_t *ms = &model.events[model.moved_event].seats[model.moved_seats[i]];
        const hf_seat_t *cs = &hf_core_event_at(core, model.moved_event)->seats[model.moved_seats[i]];
        if (cs->version == ms->version + 2) {
            uint32_t owner = ms->owner;
            seat_change(model.moved_event, model.moved_seats[i], HF_SEAT_AVAILABLE, 0);
            seat_change(model.moved_event, model.moved_seats[i], HF_SEAT_HELD, owner);
            stats[S_MOVED]++;
        } else if (cs->version != ms->version) {
            mismatch("seat %s moved by replace_existing: version %u, expected %u or %u", ms->id,
                     cs->version, ms->version, ms->version + 2);
        }
    }
    /* Without stream records the seats' versions moved all the same (compare_state checks
     * them), but no SEAT or POOL record may come out. */
    if (!stream_records) {
        model.change_count = 0;
        model.expected[HF_MUTATION_POOL] = 0;
        stats[S_QUIET]++;
    }
    if (sink.total > sink.count) mismatch("more than %zu mutations in one step", sink.capacity);
    uint32_t by_type[FX_TYPES] = {0};
    bool used[CHANGES_MAX] = {false};
    bool paid_late_seen[64] = {false}; /* per touched hold: its confirmed record came */
    for (size_t r = 0; r < sink.count; r++) {
        const fx_record_t *record = &sink.records[r];
        if (record->type < 0 || record->type >= FX_TYPES) mismatch("record type %d", record->type);
        by_type[record->type]++;
        if (record->type == HF_MUTATION_SEAT) {
            bool found = false;
            for (uint32_t c = 0; c < model.change_count && !found; c++) {
                const change_t *change = &model.changes[c];
                const model_event_t *event = &model.events[change->event];
                if (used[c] || strcmp(event->id, record->event_id) != 0 ||
                    strcmp(event->seats[change->seat].id, record->seat_id) != 0 ||
                    change->version != record->version)
                    continue;
                if (change->status != record->status)
                    mismatch("SEAT record %s/%s v%u: status %d, model %d", record->event_id,
                             record->seat_id, record->version, record->status, change->status);
                used[c] = found = true;
            }
            if (!found)
                mismatch("unexpected SEAT record %s/%s status %d version %u", record->event_id,
                         record->seat_id, record->status, record->version);
        } else if (record->type == HF_MUTATION_HOLD_UPDATE ||
                   record->type == HF_MUTATION_HOLD_CREATE) {
            bool found = false;
            for (uint32_t i = 0; i < model.touched_hold_count && !found; i++) {
                const model_hold_t *h = &model.holds[model.touched_holds[i]];
                if (strcmp(h->id, record->hold_id) != 0) continue;
                found = true;
                /* A delivery at the very millisecond its hold lapses: expired, then paid late
                 * in the same step (the expiry's record first). */
                bool expired_then_paid = record->status == HF_HOLD_EXPIRED &&
                                         h->status == HF_HOLD_CONFIRMED &&
                                         h->expired_step == step + 1 && !paid_late_seen[i];
                if (record->status == HF_HOLD_CONFIRMED) paid_late_seen[i] = true;
                if (record->status != h->status && !expired_then_paid)
                    mismatch("%s record of %s: status %s, model %s",
                             record->type == HF_MUTATION_HOLD_CREATE ? "HOLD_CREATE" : "HOLD_UPDATE",
                             h->id, status_name((uint8_t)record->status), status_name(h->status));
                if (h->status == HF_HOLD_HELD && record->expires_at_ms != h->expires)
                    mismatch("record of %s: expires_at differs", h->id);
            }
            if (!found) mismatch("hold record of untouched hold %s", record->hold_id);
        }
    }
    for (size_t r = sink.count; r-- > 0;) {
        const fx_record_t *record = &sink.records[r];
        if (record->type != HF_MUTATION_POOL) continue;
        bool later = false; /* only the last record of each pool gives the final counts */
        for (size_t q = r + 1; q < sink.count; q++)
            later |= sink.records[q].type == HF_MUTATION_POOL &&
                     strcmp(sink.records[q].event_id, record->event_id) == 0 &&
                     strcmp(sink.records[q].pool_id, record->pool_id) == 0;
        if (later) continue;
        const model_pool_t *pool = NULL;
        for (uint32_t e = 0; e < EVENTS && !pool; e++)
            for (uint32_t p = 0; p < model.events[e].pool_count && !pool; p++)
                if (strcmp(model.events[e].id, record->event_id) == 0 &&
                    strcmp(model.events[e].pools[p].id, record->pool_id) == 0)
                    pool = &model.events[e].pools[p];
        if (pool == NULL) mismatch("POOL record of unknown pool %s/%s", record->event_id,
                                   record->pool_id);
        if (record->held != pool->held || record->sold != pool->sold ||
            record->available != pool->capacity - pool->held - pool->sold)
            mismatch("POOL record %s/%s: available %" PRId64 " held %" PRId64 " sold %" PRId64
                     ", model held %" PRId64 " sold %" PRId64, record->event_id, record->pool_id,
                     record->available, record->held, record->sold, pool->held, pool->sold);
    }
    if (by_type[HF_MUTATION_SEAT] != model.change_count)
        mismatch("%u SEAT records, model %u changes", by_type[HF_MUTATION_SEAT], model.change_count);
    static const int types[] = {HF_MUTATION_EVENT_CREATE, HF_MUTATION_HOLD_CREATE,
                                HF_MUTATION_HOLD_UPDATE, HF_MUTATION_ORDER_CREATE,
                                HF_MUTATION_ORDER_ITEM, HF_MUTATION_ORDER_UPDATE,
                                HF_MUTATION_IDEMPOTENCY, HF_MUTATION_POOL,
                                HF_MUTATION_DELIVERY, HF_MUTATION_REFUND};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint32_t got = by_type[types[i]], want = model.expected[types[i]];
        if (types[i] == HF_MUTATION_HOLD_UPDATE && model.extend_unchanged && got == want + 1)
            continue;
        if (got != want) mismatch("%u records of type %d, model %u", got, types[i], want);
    }
}

/* ---- operations ---- */

static void begin(const char *name)
{
    operation = name;
    description[0] = '\0';
    model.change_count = 0;
    model.touched_hold_count = 0;
    model.moved_count = 0;
    model.extend_unchanged = 0;
    memset(model.expected, 0, sizeof model.expected);
    model.operation_changes = hf_core_change_count(core);
    stream_records = rng_below(4) != 0;
    hf_core_set_stream_records(core, stream_records);
    fx_sink_reset(&sink);
}

static bool error_in(hf_error_t error, uint32_t set)
{
    return error != HF_OK && (set & (1u << error)) != 0;
}

static void describe_set(char *out, size_t size, uint32_t set)
{
    size_t used = 0;
    out[0] = '\0';
    if (set == 0) snprintf(out, size, "ok");
    for (int e = 1; e <= ERROR_LAST; e++)
        if (set & (1u << e))
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "|" : "",
                                     fx_error_code((hf_error_t)e));
}

static void expect_result(hf_error_t got, uint32_t set)
{
    if ((int)got < 0 || (int)got > ERROR_LAST) mismatch("core answered unknown error %d", (int)got);
    error_stats[got]++;
    if (set == 0 && got == HF_OK) return;
    if (error_in(got, set)) return;
    char expected[256];
    describe_set(expected, sizeof expected, set);
    mismatch("core answered %s, model expects %s", got == HF_OK ? "ok" : fx_error_code(got),
             expected);
}

static const char *const bad_seat_ids[] = {
    "FLOOR-A-0", "FLOOR-A-9", "FLOOR-D-1", "NOPE-A-1", "FLOOR-A-01", "FLOOR-A-", "FLOOR--1",
    "S-C-1", "T.2-A-4", "FLOOR-A-1x", "", "BALC-A-", "S-A-08",
};

/* ---- best_available in the model: a plain reading of API.md section 3 ---- */

typedef struct pick_query {
    uint32_t event;
    int32_t user;                /* -1: none */
    bool replace;                /* the user's active holds on the event count as free */
    const uint32_t *named;       /* seats named in the same request: never picked */
    uint32_t named_count;
} pick_query_t;

static bool model_pickable(const pick_query_t *q, uint32_t seat)
{
    for (uint32_t i = 0; i < q->named_count; i++)
        if (q->named[i] == seat) return false;
    const model_seat_t *s = &model.events[q->event].seats[seat];
    if (s->status == HF_SEAT_AVAILABLE) return true;
    if (!q->replace || q->user < 0 || s->status != HF_SEAT_HELD) return false;
    const model_hold_t *h = &model.holds[s->owner - 1];
    return h->status == HF_HOLD_HELD && h->event == q->event && h->user == (uint32_t)q->user;
}

/* Seat number n (from 1) of a row is pickable; false outside the row. */
static bool model_free(const pick_query_t *q, const model_row_t *row, int64_t n)
{
    return n >= 1 && n <= (int64_t)row->seat_count &&
           model_pickable(q, row->first_seat + (uint32_t)(n - 1));
}

/* count seats into out, best first; section -1: every section in listed order. Every block of
 * every row is scored (strands, distance, number); separate seats are every free seat of a row
 * sorted by (distance, number). */
static bool model_pick(const pick_query_t *q, int32_t section, uint32_t count, bool adjacent,
                       uint32_t *out)
{
    const model_event_t *event = &model.events[q->event];
    uint32_t taken = 0;
    for (uint32_t s = 0; s < event->section_count; s++) {
        if (section >= 0 && s != (uint32_t)section) continue;
        for (uint32_t r = event->section_first_row[s];
             r < event->section_first_row[s] + event->section_rows[s]; r++) {
            const model_row_t *row = &event->rows[r];
            int64_t length = row->seat_count;
            if (adjacent) {
                bool found = false, best_strands = false;
                int64_t best_distance = 0, best_first = 0;
                for (int64_t first = 1; first + count - 1 <= length; first++) {
                    int64_t last = first + count - 1;
                    bool all = true;
                    for (int64_t n = first; n <= last && all; n++) all = model_free(q, row, n);
                    if (!all) continue;
                    /* A single free seat between the block and a taken seat or the row's end. */
                    bool strands = (model_free(q, row, first - 1) && !model_free(q, row, first - 2)) ||
                                   (model_free(q, row, last + 1) && !model_free(q, row, last + 2));
                    int64_t distance = 2 * first + count - 1 - (length + 1);
                    if (distance < 0) distance = -distance;
                    bool better = !found || (strands != best_strands ? !strands
                                             : distance != best_distance ? distance < best_distance
                                             : first < best_first);
                    if (better) {
                        found = true;
                        best_strands = strands;
                        best_distance = distance;
                        best_first = first;
                    }
                }
                if (found) {
                    for (uint32_t i = 0; i < count; i++)
                        out[i] = row->first_seat + (uint32_t)best_first - 1 + i;
                    return true;
                }
            } else {
                uint32_t numbers[SEATS_MAX], free_count = 0;
                for (int64_t n = 1; n <= length; n++)
                    if (model_free(q, row, n)) numbers[free_count++] = (uint32_t)n;
                /* Insertion sort by (distance from the middle, number). */
                for (uint32_t i = 1; i < free_count; i++) {
                    uint32_t n = numbers[i], j = i;
                    int64_t key = llabs(2 * (int64_t)n - (length + 1));
                    while (j > 0) {
                        int64_t other = llabs(2 * (int64_t)numbers[j - 1] - (length + 1));
                        if (other < key || (other == key && numbers[j - 1] < n)) break;
                        numbers[j] = numbers[j - 1];
                        j--;
                    }
                    numbers[j] = n;
                }
                for (uint32_t i = 0; i < free_count && taken < count; i++)
                    out[taken++] = row->first_seat + numbers[i] - 1;
                if (taken == count) return true;
            }
        }
    }
    return false;
}

static const char *const other_sections[] = {"NOPE", "S", "FLOOR", "T.2", "L", "R", "floor", ""};

static void op_hold(void)
{
    char seat_text[REQUEST_SEATS_MAX][SEAT_ID_SIZE];
    const char *seat_ids[REQUEST_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    char pool_text[REQUEST_POOLS_MAX][HF_ID_SIZE_MAX + 1];
    uint32_t seat_count = 0, pool_count = 0;

    /* Draw the request. */
    uint32_t e = rng_below(EVENTS);
    bool unknown_event = rng_chance(4);
    model_event_t *event = &model.events[e];
    const char *event_id = unknown_event ? "nope" : event->id;
    bool empty_user = rng_chance(2);
    int32_t u = (int32_t)rng_below(USERS);
    const char *user_id = empty_user ? "" : user_ids[u];
    /* best_available: a third of the holds. */
    bool use_best = rng_chance(event->seat_count > 0 ? 35 : 5);
    uint32_t best_count = 0;
    const char *best_section = NULL;
    bool best_adjacent = true;
    if (use_best) {
        uint32_t roll = rng_below(100);
        if (roll < 4) best_count = 0;
        else if (roll < 70) best_count = 1 + rng_below(4);
        else if (roll < 92) best_count = 1 + rng_below(event->per_hold + 1);
        else best_count = 1 + rng_below(14);
        best_adjacent = rng_chance(65);
        roll = rng_below(100);
        if (roll < 85 && event->section_count > 0 && roll >= 50)
            best_section = event->definition.sections[rng_below(event->section_count)].id;
        else if (roll >= 85)
            best_section = other_sections[rng_below(sizeof other_sections / sizeof *other_sections)];
    }
    uint32_t wanted_seats = 0;
    if (use_best && rng_chance(60)) {
        wanted_seats = 0;
    } else if (event->seat_count > 0 || rng_chance(5)) {
        static const uint32_t weights[] = {20, 35, 20, 12, 6, 4, 3};
        uint32_t roll = rng_below(100), sum = 0;
        for (wanted_seats = 0; wanted_seats < 7; wanted_seats++) {
            sum += weights[wanted_seats];
            if (roll < sum) break;
        }
    }
    for (uint32_t i = 0; i < wanted_seats && seat_count < REQUEST_SEATS_MAX; i++) {
        uint32_t roll = rng_below(100);
        if (event->seat_count == 0 || roll < 8) {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     bad_seat_ids[rng_below(sizeof bad_seat_ids / sizeof bad_seat_ids[0])]);
        } else if (roll < 15 && seat_count > 0) {
            memcpy(seat_text[seat_count], seat_text[rng_below(seat_count)], SEAT_ID_SIZE);
        } else if (roll < 55) {
            uint32_t free_seats[SEATS_MAX], free_count = 0;
            for (uint32_t s = 0; s < event->seat_count; s++)
                if (event->seats[s].status == HF_SEAT_AVAILABLE) free_seats[free_count++] = s;
            uint32_t s = free_count ? free_seats[rng_below(free_count)]
                                    : rng_below(event->seat_count);
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s", event->seats[s].id);
        } else {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     event->seats[rng_below(event->seat_count)].id);
        }
        seat_ids[seat_count] = seat_text[seat_count];
        seat_count++;
    }
    if ((event->pool_count > 0 || rng_chance(5)) && !(use_best && rng_chance(65))) {
        uint32_t lines = rng_below(3);
        if (event->seat_count == 0 && lines == 0 && rng_chance(80)) lines = 1;
        for (uint32_t i = 0; i < lines; i++) {
            uint32_t roll = rng_below(100);
            if (event->pool_count == 0 || roll < 5)
                snprintf(pool_text[pool_count], sizeof pool_text[0], "NOPE");
            else if (roll < 10 && pool_count > 0)
                memcpy(pool_text[pool_count], pool_text[0], sizeof pool_text[0]);
            else
                snprintf(pool_text[pool_count], sizeof pool_text[0], "%s",
                         event->pools[rng_below(event->pool_count)].id);
            pools[pool_count].pool_id = pool_text[pool_count];
            pools[pool_count].quantity = rng_chance(5) ? 5 : 1 + rng_below(3);
            pool_count++;
        }
    }
    int64_t ttl;
    uint32_t roll = rng_below(100);
    if (roll < 45) ttl = -1;
    else if (roll < 75) ttl = rng_range(1, event->max_hold_ms);
    else if (roll < 82) ttl = rng_range(1, 3000);
    else if (roll < 87) ttl = 0;
    else if (roll < 92) ttl = event->max_hold_ms + rng_range(1, 1000);
    else ttl = event->max_hold_ms;
    bool replace = rng_chance(20);
    char hold_id[24];
    snprintf(hold_id, sizeof hold_id, "res_%u", model.hold_count);

    size_t used = (size_t)snprintf(description, sizeof description,
                                   "hold %s user=\"%s\" event=%s ttl=%" PRId64 "%s seats=[",
                                   hold_id, user_id, event_id, ttl, replace ? " replace" : "");
    for (uint32_t i = 0; i < seat_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s\"%s\"",
                                 i ? "," : "", seat_ids[i]);
    used += (size_t)snprintf(description + used, sizeof description - used, "] pools={");
    for (uint32_t i = 0; i < pool_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s:%u",
                                 i ? "," : "", pools[i].pool_id, pools[i].quantity);
    used += (size_t)snprintf(description + used, sizeof description - used, "}");
    if (use_best)
        snprintf(description + used, sizeof description - used,
                 " best_available={count:%u section:%s%s%s adjacent:%s}", best_count,
                 best_section ? "\"" : "", best_section ? best_section : "null",
                 best_section ? "\"" : "", best_adjacent ? "true" : "false");

    /* The model: expire, then every error that applies. */
    model_expire(model.now);
    stats[S_HOLD]++;
    if (best_count > 0) stats[S_BEST]++;
    uint32_t set = 0;
    uint32_t unknown_items[REQUEST_SEATS_MAX], unknown_count = 0;
    uint32_t taken_items[REQUEST_SEATS_MAX], taken_count = 0;
    uint32_t seat_index[REQUEST_SEATS_MAX];
    int32_t pool_index[REQUEST_POOLS_MAX];
    uint32_t missing_pools = 0, short_pools = 0;
    int64_t units = seat_count + best_count;
    bool duplicate_seats = false, duplicate_pools = false;
    for (uint32_t i = 0; i < seat_count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(seat_ids[i], seat_ids[j]) == 0) duplicate_seats = true;
    for (uint32_t i = 0; i < pool_count; i++) {
        units += pools[i].quantity;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(pools[i].pool_id, pools[j].pool_id) == 0) duplicate_pools = true;
    }
    if (empty_user || seat_count + pool_count + best_count == 0 || duplicate_seats ||
        duplicate_pools)
        set |= 1u << HF_ERROR_INVALID_REQUEST;
    uint32_t picked[SEATS_MAX];
    bool best_no_fit = false;
    if (unknown_event) {
        set |= 1u << HF_ERROR_EVENT_NOT_FOUND;
    } else {
        if (units > event->per_hold || ttl == 0 || ttl > event->max_hold_ms)
            set |= 1u << HF_ERROR_INVALID_REQUEST;
        for (uint32_t i = 0; i < seat_count; i++) {
            bool found = false;
            for (uint32_t s = 0; s < event->seat_count && !found; s++) {
                if (strcmp(event->seats[s].id, seat_ids[i]) == 0) {
                    found = true;
                    seat_index[i] = s;
                }
            }
            if (!found) {
                unknown_items[unknown_count++] = i;
                continue;
            }
            const model_seat_t *s = &event->seats[seat_index[i]];
            bool mine = replace && !empty_user && s->status == HF_SEAT_HELD &&
                        model.holds[s->owner - 1].user == (uint32_t)u;
            if (s->status != HF_SEAT_AVAILABLE && !mine) taken_items[taken_count++] = i;
        }
        if (unknown_count) set |= 1u << HF_ERROR_SEAT_NOT_FOUND;
        if (taken_count) set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
        for (uint32_t i = 0; i < pool_count; i++) {
            pool_index[i] = -1;
            for (uint32_t p = 0; p < event->pool_count; p++)
                if (strcmp(event->pools[p].id, pools[i].pool_id) == 0) pool_index[i] = (int32_t)p;
            if (pool_index[i] < 0) {
                missing_pools |= 1u << i;
                continue;
            }
            const model_pool_t *p = &event->pools[pool_index[i]];
            int64_t replaced_units = 0;
            for (uint32_t a = 0; replace && !empty_user && a < model.active_count; a++) {
                const model_hold_t *h = &model.holds[model.active[a]];
                if (h->event != e || h->user != (uint32_t)u) continue;
                for (uint32_t l = 0; l < h->items.pool_count; l++)
                    if (h->items.pools[l] == (uint32_t)pool_index[i])
                        replaced_units += h->items.quantities[l];
            }
            if (p->capacity - p->held - p->sold + replaced_units < pools[i].quantity)
                short_pools |= 1u << i;
        }
        if (missing_pools) set |= 1u << HF_ERROR_POOL_NOT_FOUND;
        if (short_pools) set |= 1u << HF_ERROR_INSUFFICIENT_QUANTITY;
        if (event->per_user > 0 && !empty_user) {
            uint32_t have = user_units(e, (uint32_t)u, !replace, true);
            if ((int64_t)have + units > event->per_user) set |= 1u << HF_ERROR_USER_LIMIT_EXCEEDED;
        }
        if (best_count > 0) {
            int32_t section = -1;
            bool known = true;
            if (best_section != NULL) {
                known = false;
                for (uint32_t s = 0; s < event->section_count && !known; s++)
                    if (strcmp(event->definition.sections[s].id, best_section) == 0) {
                        known = true;
                        section = (int32_t)s;
                    }
            }
            if (!known) {
                set |= 1u << HF_ERROR_SECTION_NOT_FOUND;
            } else if (best_count <= SEATS_MAX) {
                uint32_t named[REQUEST_SEATS_MAX], named_count = 0;
                for (uint32_t i = 0; i < seat_count; i++) {
                    bool unknown = false;
                    for (uint32_t k = 0; k < unknown_count; k++) unknown |= unknown_items[k] == i;
                    if (!unknown) named[named_count++] = seat_index[i];
                }
                pick_query_t query = {e, empty_user ? -1 : u, replace, named, named_count};
                if (!model_pick(&query, section, best_count, best_adjacent, picked)) {
                    best_no_fit = true;
                    set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
                }
            } else {
                best_no_fit = true; /* more than the event's seats; invalid anyway */
                set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
            }
        }
    }

    /* The core. */
    hf_hold_request_t request = {
        .event_id = event_id, .user_id = user_id, .hold_id = hold_id,
        .seat_ids = seat_count ? seat_ids : NULL, .seat_count = seat_count,
        .pools = pool_count ? pools : NULL, .pool_count = pool_count,
        .ttl_ms = ttl, .replace_existing = replace,
        .best_count = best_count, .best_section = best_section, .best_adjacent = best_adjacent,
    };
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    detail.item_count = UINT32_MAX;
    uint32_t core_index = UINT32_MAX;
    hf_error_t got = hf_core_hold(core, &request, model.now, &core_index, &detail);
    expect_result(got, set);
    if (best_count > 0 && best_no_fit) stats[S_BEST_NO_FIT]++;

    /* Details of the error the core chose: for best_available finding nothing, no seats. */
    if (got == HF_ERROR_SEATS_UNAVAILABLE && best_no_fit && detail.item_count == 0) {
        /* fine */
    } else if (got == HF_ERROR_SEAT_NOT_FOUND || got == HF_ERROR_SEATS_UNAVAILABLE) {
        const uint32_t *want = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_items : taken_items;
        uint32_t want_count = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_count : taken_count;
        bool same = detail.item_count == want_count;
        for (uint32_t i = 0; same && i < want_count; i++) {
            bool found = false;
            for (uint32_t j = 0; j < detail.item_count; j++) found |= detail.items[j] == want[i];
            same = found;
        }
        if (!same) mismatch("%s: detail has %u items, model %u%s", fx_error_code(got),
                            detail.item_count, want_count,
                            best_no_fit ? " (or 0: best_available found nothing)" : "");
    }
    if (got == HF_ERROR_POOL_NOT_FOUND &&
        (detail.pool >= pool_count || !(missing_pools & (1u << detail.pool))))
        mismatch("pool_not_found: detail.pool %u is not an unknown pool", detail.pool);
    if (got == HF_ERROR_INSUFFICIENT_QUANTITY) {
        if (detail.pool >= pool_count || !(short_pools & (1u << detail.pool)))
            mismatch("insufficient_quantity: detail.pool %u is not short", detail.pool);
        const model_pool_t *p = &event->pools[pool_index[detail.pool]];
        int64_t plain = p->capacity - p->held - p->sold;
        int64_t replaced_units = 0;
        for (uint32_t a = 0; replace && a < model.active_count; a++) {
            const model_hold_t *h = &model.holds[model.active[a]];
            if (h->event != e || h->user != (uint32_t)u) continue;
            for (uint32_t l = 0; l < h->items.pool_count; l++)
                if (h->items.pools[l] == (uint32_t)pool_index[detail.pool])
                    replaced_units += h->items.quantities[l];
        }
        if (detail.available != plain && detail.available != plain + replaced_units)
            mismatch("insufficient_quantity: available %" PRId64 ", model %" PRId64, detail.available,
                     plain);
    }
    if (got == HF_ERROR_INVALID_REQUEST && detail.field == NULL)
        mismatch("invalid_request without detail.field");
    if (got != HF_OK) return;

    /* The seats best_available chose, before anything else. */
    if (best_count > 0) {
        const hf_hold_t *c = hf_core_hold_at(core, core_index);
        if (c == NULL) mismatch("hold answered ok but hf_core_hold_at(%u) is NULL", core_index);
        const hf_item_t *items = hf_core_items(core, c->item_offset);
        bool same = c->seat_count == seat_count + best_count;
        for (uint32_t i = 0; same && i < seat_count; i++) same = items[i].index == seat_index[i];
        for (uint32_t i = 0; same && i < best_count; i++)
            same = items[seat_count + i].index == picked[i];
        if (!same) {
            char got_text[256] = "", want_text[256] = "";
            size_t got_used = 0, want_used = 0;
            for (uint32_t i = 0; i < c->seat_count && got_used < sizeof got_text - 40; i++)
                got_used += (size_t)snprintf(got_text + got_used, sizeof got_text - got_used,
                                             "%s%s", i ? " " : "",
                                             items[i].index < event->seat_count
                                                 ? event->seats[items[i].index].id : "?");
            for (uint32_t i = 0; i < seat_count + best_count && want_used < sizeof want_text - 40;
                 i++)
                want_used += (size_t)snprintf(want_text + want_used, sizeof want_text - want_used,
                                              "%s%s", i ? " " : "",
                                              event->seats[i < seat_count ? seat_index[i]
                                                                          : picked[i - seat_count]].id);
            mismatch("best_available: hold seats [%s], model [%s]", got_text, want_text);
        }
    }

    /* Apply to the model. */
    stats[S_HOLD_OK]++;
    uint32_t replace_mark = model.change_count;
    if (replace) {
        for (uint32_t a = 0; a < model.active_count;) {
            uint32_t index = model.active[a];
            const model_hold_t *h = &model.holds[index];
            if (h->event == e && h->user == (uint32_t)u) {
                model_hold_finish(index, HF_HOLD_RELEASED);
                stats[S_REPLACED]++;
            } else {
                a++;
            }
        }
    }
    GROW(model.holds, model.hold_count, model.hold_capacity);
    uint32_t index = model.hold_count++;
    model_hold_t *h = &model.holds[index];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", hold_id);
    h->event = e;
    h->user = (uint32_t)u;
    h->status = HF_HOLD_HELD;
    h->created = model.now;
    h->expires = model.now + (ttl < 0 ? event->ttl_ms : ttl);
    h->order = -1;
    h->core_index = core_index;
    h->items.seat_count = seat_count + best_count;
    h->items.pool_count = pool_count;
    assert_true(h->items.seat_count <= ITEM_SEATS_MAX);
    for (uint32_t i = 0; i < seat_count; i++) h->items.seats[i] = seat_index[i];
    for (uint32_t i = 0; i < best_count; i++) h->items.seats[seat_count + i] = picked[i];
    if (best_count > 0) {
        stats[S_BEST_OK]++;
        stats[S_BEST_PICKED] += best_count;
        if (!best_adjacent) stats[S_BEST_SEPARATE_OK]++;
        if (seat_count > 0) stats[S_BEST_NAMED_OK]++;
        if (replace) stats[S_BEST_REPLACE_OK]++;
    }
    for (uint32_t i = 0; i < h->items.seat_count; i++) {
        uint32_t seat = h->items.seats[i];
        h->total += event->seats[seat].price;
        model_seat_t *s = &event->seats[seat];
        if (s->status == HF_SEAT_AVAILABLE && replace && model.change_count > replace_mark) {
            /* Freed by the replace in this very step? Then the core may have moved it. */
            bool freed = false;
            for (uint32_t c = replace_mark; c < model.change_count; c++)
                if (model.changes[c].event == e && model.changes[c].seat == seat &&
                    model.changes[c].version == s->version &&
                    model.changes[c].status == HF_SEAT_AVAILABLE)
                    freed = true;
            if (freed) {
                /* Undo the model's release change: decide after the core answered. */
                for (uint32_t c = replace_mark; c < model.change_count; c++) {
                    if (model.changes[c].event == e && model.changes[c].seat == seat &&
                        model.changes[c].version == s->version) {
                        model.changes[c] = model.changes[--model.change_count];
                        break;
                    }
                }
                s->version--;
                s->status = HF_SEAT_HELD;
                s->owner = index + 1;
                model.moved_event = e;
                model.moved_seats[model.moved_count++] = seat;
                continue;
            }
        }
        seat_change(e, seat, HF_SEAT_HELD, index + 1);
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        h->items.pools[i] = (uint32_t)pool_index[i];
        h->items.quantities[i] = pools[i].quantity;
        h->total += event->pools[pool_index[i]].price * pools[i].quantity;
        event->pools[pool_index[i]].held += pools[i].quantity;
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.active, model.active_count, model.active_capacity);
    model.active[model.active_count++] = index;
    model.expected[HF_MUTATION_HOLD_CREATE]++;
    touch_hold(index);
}

/* A hold id for extend, release and commit: mostly live ones, some old, some unknown. */
/* Gives a forgotten hold back to the core from the model's copy, as the engine does from the
 * store's row when a request names it. */
static void revive(uint32_t index)
{
    model_hold_t *h = &model.holds[index];
    const model_event_t *event = &model.events[h->event];
    const char *seat_ids[ITEM_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    for (uint32_t i = 0; i < h->items.seat_count; i++) seat_ids[i] = event->seats[h->items.seats[i]].id;
    for (uint32_t i = 0; i < h->items.pool_count; i++)
        pools[i] = (hf_pool_request_t){event->pools[h->items.pools[i]].id, h->items.quantities[i]};
    hf_stored_hold_t stored = {
        .request = {.event_id = event->id, .user_id = user_ids[h->user], .hold_id = h->id,
                    .seat_ids = seat_ids, .seat_count = h->items.seat_count, .pools = pools,
                    .pool_count = h->items.pool_count, .ttl_ms = -1},
        .status = h->status, .created_at_ms = h->created, .expires_at_ms = h->expires,
        .total = h->total};
    size_t emitted = sink.total; /* the request's advance, before the revive, may have */
    hf_error_t error = hf_core_revive_hold(core, &stored, &h->core_index);
    if (error != HF_OK) mismatch("revive %s: %s", h->id, fx_error_code(error));
    if (sink.total != emitted) mismatch("revive %s emitted a record", h->id);
    h->forgotten = false;
    h->finished_after = 0;
    GROW(model.kept, model.kept_count, model.kept_capacity);
    model.kept[model.kept_count++] = index;
    stats[S_REVIVED]++;
}

static int32_t pick_hold_any(char *hold_id, size_t size);

static int32_t pick_hold(char *hold_id, size_t size)
{
    int32_t index = pick_hold_any(hold_id, size);
    if (index >= 0 && model.holds[index].forgotten) revive((uint32_t)index);
    return index;
}

static int32_t pick_hold_any(char *hold_id, size_t size)
{
    uint32_t roll = rng_below(100);
    if (roll < 60 && model.active_count > 0) {
        uint32_t index = model.active[rng_below(model.active_count)];
        snprintf(hold_id, size, "%s", model.holds[index].id);
        return (int32_t)index;
    }
    if (roll < 92 && model.hold_count > 0) {
        /* Recent holds are more interesting than ancient ones. */
        uint32_t window = model.hold_count < 64 ? model.hold_count : 64;
        uint32_t index = rng_chance(80) ? model.hold_count - 1 - rng_below(window)
                                        : rng_below(model.hold_count);
        snprintf(hold_id, size, "%s", model.holds[index].id);
        return (int32_t)index;
    }
    snprintf(hold_id, size, rng_chance(50) ? "res_none" : "ord_0");
    return -1;
}

static const char *pick_user(uint32_t owner)
{
    uint32_t roll = rng_below(100);
    if (roll < 75) return user_ids[owner];
    if (roll < 95) return user_ids[rng_below(USERS)];
    return "ghost";
}

static void op_extend(void)
{
    char hold_id[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    int64_t ttl;
    uint32_t roll = rng_below(100);
    uint32_t e = index >= 0 ? model.holds[index].event : 0;
    int64_t max_hold = model.events[e].max_hold_ms;
    int64_t to_cap = index >= 0 ? model.holds[index].created + max_hold - model.now : 0;
    if (roll < 28) ttl = -1;
    else if (roll < 55) ttl = rng_range(1, max_hold);
    else if (roll < 78) ttl = rng_range(1, 5000);
    else if (roll < 88 && to_cap > 1) ttl = to_cap - rng_below(2); /* exactly at the cap */
    else ttl = rng_range(max_hold, 4 * max_hold);
    snprintf(description, sizeof description, "extend %s user=%s ttl=%" PRId64, hold_id, user, ttl);

    model_expire(model.now);
    stats[S_EXTEND]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_EXPIRED) set |= 1u << HF_ERROR_HOLD_EXPIRED;
        if (h->status == HF_HOLD_RELEASED || h->status == HF_HOLD_CONFIRMED)
            set |= 1u << HF_ERROR_HOLD_NOT_ACTIVE;
    }
    bool capped = false;
    hf_error_t got = hf_core_extend(core, hold_id, user, ttl, model.now, &capped);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_EXTEND_OK]++;
    int64_t wanted = model.now + (ttl < 0 ? model.events[e].ttl_ms : ttl);
    int64_t cap = h->created + max_hold;
    bool want_capped = wanted > cap;
    if (capped != want_capped) mismatch("extend: capped %d, model %d", capped, want_capped);
    int64_t expires = want_capped ? cap : wanted;
    if (expires > h->expires) {
        h->expires = expires;
        model.expected[HF_MUTATION_HOLD_UPDATE]++;
    } else {
        model.extend_unchanged = 1;
    }
    touch_hold((uint32_t)index);
}

static void op_release(void)
{
    char hold_id[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    snprintf(description, sizeof description, "release %s user=%s", hold_id, user);
    model_expire(model.now);
    stats[S_RELEASE]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_CONFIRMED) set |= 1u << HF_ERROR_ALREADY_CONFIRMED;
    }
    hf_error_t got = hf_core_release(core, hold_id, user, model.now);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_RELEASE_OK]++;
    if (h->status == HF_HOLD_HELD) model_hold_finish((uint32_t)index, HF_HOLD_RELEASED);
    touch_hold((uint32_t)index);
}

/* A hold becomes an order: committed, or paid in time (its seats go from held to sold), or
 * paid late (it had expired: its seats go from available to sold and its units from free to
 * sold). Returns the model order. */
static uint32_t model_order_from_hold(uint32_t index, const char *order_id, const char *payment,
                                      uint32_t core_order)
{
    model_hold_t *h = &model.holds[index];
    model_event_t *event = &model.events[h->event];
    bool late = h->status == HF_HOLD_EXPIRED;
    GROW(model.orders, model.order_count, model.order_capacity);
    uint32_t o = model.order_count++;
    model_order_t *order = &model.orders[o];
    memset(order, 0, sizeof *order);
    snprintf(order->id, sizeof order->id, "%s", order_id);
    order->event = h->event;
    order->user = h->user;
    order->hold = index;
    order->status = HF_ORDER_CONFIRMED;
    order->created = model.now;
    order->total = h->total;
    order->items = h->items;
    order->core_index = core_order;
    snprintf(order->payment, sizeof order->payment, "%s", payment);
    h->status = HF_HOLD_CONFIRMED;
    h->order = (int32_t)o;
    if (late) list_remove(model.kept, &model.kept_count, index);
    else list_remove(model.active, &model.active_count, index);
    for (uint32_t i = 0; i < h->items.seat_count; i++)
        seat_change(h->event, h->items.seats[i], HF_SEAT_SOLD, o + 1);
    for (uint32_t i = 0; i < h->items.pool_count; i++) {
        if (!late) event->pools[h->items.pools[i]].held -= h->items.quantities[i];
        event->pools[h->items.pools[i]].sold += h->items.quantities[i];
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.live, model.live_count, model.live_capacity);
    model.live[model.live_count++] = o;
    model.expected[HF_MUTATION_HOLD_UPDATE]++;
    model.expected[HF_MUTATION_ORDER_CREATE]++;
    model.expected[HF_MUTATION_ORDER_ITEM] += h->items.seat_count + h->items.pool_count;
    touch_hold(index);
    return o;
}

static void op_commit(void)
{
    char hold_id[24], order_id[24], payment[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    snprintf(order_id, sizeof order_id, "ord_%u", model.order_count);
    snprintf(payment, sizeof payment, "pi_%" PRIu64, step);
    model_expire(model.now);
    stats[S_COMMIT]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    /* A confirmed hold is committed again with its own payment, none, or another one, which
     * is refused: a second payment is never absorbed. */
    const char *paid = payment;
    if (h && h->status == HF_HOLD_CONFIRMED) {
        uint32_t choice = rng_below(3);
        if (choice == 0) paid = model.orders[h->order].payment;
        else if (choice == 1) paid = NULL;
    }
    snprintf(description, sizeof description, "commit %s user=%s order=%s payment=%s", hold_id,
             user, order_id, paid ? paid : "none");
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_EXPIRED) set |= 1u << HF_ERROR_HOLD_EXPIRED;
        if (h->status == HF_HOLD_RELEASED) set |= 1u << HF_ERROR_HOLD_RELEASED;
        if (h->status == HF_HOLD_CONFIRMED && paid == payment)
            set |= 1u << HF_ERROR_ALREADY_CONFIRMED;
    }
    uint32_t core_order = UINT32_MAX;
    hf_error_t got = hf_core_commit(core, hold_id, user, order_id, paid, model.now, &core_order);
    expect_result(got, set);
    if (got == HF_ERROR_ALREADY_CONFIRMED && core_order != model.orders[h->order].core_index)
        mismatch("commit with another payment: order index %u, the hold's %u", core_order,
                 model.orders[h->order].core_index);
    if (got != HF_OK) {
        if (hf_core_order_find(core, order_id, NULL) != NULL)
            mismatch("a failed commit created order %s", order_id);
        return;
    }
    stats[S_COMMIT_OK]++;
    touch_hold((uint32_t)index);
    if (h->status == HF_HOLD_CONFIRMED) {
        if (core_order != model.orders[h->order].core_index)
            mismatch("repeated commit: order index %u, first %u", core_order,
                     model.orders[h->order].core_index);
        if (hf_core_order_find(core, order_id, NULL) != NULL)
            mismatch("a repeated commit created order %s", order_id);
        return;
    }
    compare_order(model_order_from_hold((uint32_t)index, order_id, payment, core_order));
}

/* The refund a paid order's cancel owes: its total to its payment, named by the order. */
static void model_cancel_refund(const model_order_t *o, const char *refund_id)
{
    GROW(model.refunds, model.refund_count, model.refund_capacity);
    uint32_t index = model.refund_count++;
    model_refund_t *r = &model.refunds[index];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", refund_id);
    snprintf(r->intent, sizeof r->intent, "%s", o->payment);
    snprintf(r->reservation, sizeof r->reservation, "%s", o->booked ? "" : model.holds[o->hold].id);
    r->amount = o->total;
    r->reason = HF_REFUND_ORDER_CANCELLED;
    r->status = HF_REFUND_PENDING;
    r->created = model.now;
    model.expected[HF_MUTATION_REFUND]++;
    const hf_order_t *order = hf_core_order_at(core, o->core_index);
    if (order->refund != index + 1) mismatch("cancel of %s: refund %u, model %u", o->id,
                                             order->refund, index + 1);
    compare_refund(index);
}

static void op_cancel(void)
{
    char order_id[24];
    int32_t index = -1;
    uint32_t roll = rng_below(100);
    if (roll < 70 && model.live_count > 0) index = (int32_t)model.live[rng_below(model.live_count)];
    else if (roll < 90 && model.order_count > 0) index = (int32_t)rng_below(model.order_count);
    if (index >= 0) snprintf(order_id, sizeof order_id, "%s", model.orders[index].id);
    else snprintf(order_id, sizeof order_id, rng_chance(50) ? "ord_none" : "res_0");
    const char *user = pick_user(index >= 0 ? model.orders[index].user : rng_below(USERS));
    snprintf(description, sizeof description, "cancel %s user=%s", order_id, user);
    model_expire(model.now);
    stats[S_CANCEL]++;
    uint32_t set = 0;
    model_order_t *o = index >= 0 ? &model.orders[index] : NULL;
    if (o == NULL) set = 1u << HF_ERROR_ORDER_NOT_FOUND;
    else if (strcmp(user_ids[o->user], user) != 0) set = 1u << HF_ERROR_NOT_OWNER;
    char refund_id[24];
    snprintf(refund_id, sizeof refund_id, "ref_c%" PRIu64, step);
    hf_error_t got = hf_core_cancel(core, order_id, user, refund_id, model.now);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_CANCEL_OK]++;
    if (o->status == HF_ORDER_CONFIRMED && o->payment[0]) model_cancel_refund(o, refund_id);
    if (o->status == HF_ORDER_CONFIRMED) {
        const model_items_t *items = &o->items;
        model_event_t *event = &model.events[o->event];
        o->status = HF_ORDER_CANCELLED;
        if (o->booked) stats[S_BOOK_CANCEL_OK]++;
        list_remove(model.live, &model.live_count, (uint32_t)index);
        for (uint32_t i = 0; i < items->seat_count; i++)
            seat_change(o->event, items->seats[i], HF_SEAT_AVAILABLE, 0);
        for (uint32_t i = 0; i < items->pool_count; i++)
            event->pools[items->pools[i]].sold -= items->quantities[i];
        model.expected[HF_MUTATION_POOL] += items->pool_count;
        model.expected[HF_MUTATION_ORDER_UPDATE]++;
    }
    compare_order((uint32_t)index);
}

/* A booking (hf_core_book): seats at the version last seen (current, or stale), pools. */
static void op_book(void)
{
    char seat_text[REQUEST_SEATS_MAX][SEAT_ID_SIZE];
    const char *seat_ids[REQUEST_SEATS_MAX];
    uint32_t versions[REQUEST_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    char pool_text[REQUEST_POOLS_MAX][HF_ID_SIZE_MAX + 1];
    uint32_t seat_count = 0, pool_count = 0;

    uint32_t e = rng_below(EVENTS);
    bool unknown_event = rng_chance(3);
    model_event_t *event = &model.events[e];
    const char *event_id = unknown_event ? "nope" : event->id;
    bool empty_user = rng_chance(2);
    uint32_t u = rng_below(USERS);
    const char *user_id = empty_user ? "" : user_ids[u];
    uint32_t wanted = event->seat_count > 0 ? rng_below(5) : (rng_chance(10) ? 1 : 0);
    for (uint32_t i = 0; i < wanted; i++) {
        uint32_t roll = rng_below(100);
        if (event->seat_count == 0 || roll < 4) {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     bad_seat_ids[rng_below(sizeof bad_seat_ids / sizeof bad_seat_ids[0])]);
            versions[seat_count] = 1;
        } else if (roll < 8 && seat_count > 0) {
            uint32_t other = rng_below(seat_count);
            memcpy(seat_text[seat_count], seat_text[other], SEAT_ID_SIZE);
            versions[seat_count] = versions[other];
        } else {
            uint32_t seat;
            if (roll < 75) {
                uint32_t free_seats[SEATS_MAX], free_count = 0;
                for (uint32_t s = 0; s < event->seat_count; s++)
                    if (event->seats[s].status == HF_SEAT_AVAILABLE) free_seats[free_count++] = s;
                seat = free_count ? free_seats[rng_below(free_count)] : rng_below(event->seat_count);
            } else {
                seat = rng_below(event->seat_count);
            }
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s", event->seats[seat].id);
            uint32_t version = event->seats[seat].version;
            if (rng_chance(15)) /* the client saw an older (or a made-up newer) version */
                version = version > 1 && rng_chance(70) ? version - 1 - rng_below(version - 1)
                                                        : version + 1 + rng_below(2);
            versions[seat_count] = version;
        }
        seat_ids[seat_count] = seat_text[seat_count];
        seat_count++;
    }
    if (event->pool_count > 0 || rng_chance(5)) {
        uint32_t lines = rng_below(3);
        if (event->seat_count == 0 && lines == 0 && rng_chance(80)) lines = 1;
        for (uint32_t i = 0; i < lines; i++) {
            uint32_t roll = rng_below(100);
            if (event->pool_count == 0 || roll < 5)
                snprintf(pool_text[pool_count], sizeof pool_text[0], "NOPE");
            else if (roll < 10 && pool_count > 0)
                memcpy(pool_text[pool_count], pool_text[0], sizeof pool_text[0]);
            else
                snprintf(pool_text[pool_count], sizeof pool_text[0], "%s",
                         event->pools[rng_below(event->pool_count)].id);
            pools[pool_count].pool_id = pool_text[pool_count];
            pools[pool_count].quantity = rng_chance(5) ? 5 : 1 + rng_below(3);
            pool_count++;
        }
    }
    bool no_versions = seat_count > 0 && rng_chance(2);
    bool replace = rng_chance(10); /* no meaning for a booking: must change nothing */
    char order_id[24], payment[24];
    bool reused_id = model.order_count > 0 && rng_chance(2);
    if (reused_id) snprintf(order_id, sizeof order_id, "%s", model.orders[rng_below(model.order_count)].id);
    else snprintf(order_id, sizeof order_id, "ord_%u", model.order_count);
    snprintf(payment, sizeof payment, "pb_%" PRIu64, step);

    size_t used = (size_t)snprintf(description, sizeof description,
                                   "book %s user=\"%s\" event=%s%s%s seats=[", order_id, user_id,
                                   event_id, replace ? " replace" : "",
                                   no_versions ? " versions=NULL" : "");
    for (uint32_t i = 0; i < seat_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s\"%s\"@%u",
                                 i ? "," : "", seat_ids[i], versions[i]);
    used += (size_t)snprintf(description + used, sizeof description - used, "] pools={");
    for (uint32_t i = 0; i < pool_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s:%u",
                                 i ? "," : "", pools[i].pool_id, pools[i].quantity);
    snprintf(description + used, sizeof description - used, "}");

    /* The model. */
    model_expire(model.now);
    stats[S_BOOK]++;
    uint32_t set = 0;
    uint32_t unknown_items[REQUEST_SEATS_MAX], unknown_count = 0;
    uint32_t moved_items[REQUEST_SEATS_MAX], moved_count = 0;
    uint32_t seat_index[REQUEST_SEATS_MAX];
    int32_t pool_index[REQUEST_POOLS_MAX];
    uint32_t missing_pools = 0, short_pools = 0;
    int64_t units = seat_count;
    bool duplicates = false;
    for (uint32_t i = 0; i < seat_count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(seat_ids[i], seat_ids[j]) == 0) duplicates = true;
    for (uint32_t i = 0; i < pool_count; i++) {
        units += pools[i].quantity;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(pools[i].pool_id, pools[j].pool_id) == 0) duplicates = true;
    }
    if (empty_user || seat_count + pool_count == 0 || duplicates || reused_id)
        set |= 1u << HF_ERROR_INVALID_REQUEST;
    if (unknown_event) {
        set |= 1u << HF_ERROR_EVENT_NOT_FOUND;
    } else {
        if (units > event->per_hold || no_versions) set |= 1u << HF_ERROR_INVALID_REQUEST;
        for (uint32_t i = 0; i < seat_count; i++) {
            bool found = false;
            for (uint32_t s = 0; s < event->seat_count && !found; s++)
                if (strcmp(event->seats[s].id, seat_ids[i]) == 0) {
                    found = true;
                    seat_index[i] = s;
                }
            if (!found) {
                unknown_items[unknown_count++] = i;
                continue;
            }
            const model_seat_t *s = &event->seats[seat_index[i]];
            if (s->status != HF_SEAT_AVAILABLE || s->version != versions[i])
                moved_items[moved_count++] = i;
        }
        if (unknown_count) set |= 1u << HF_ERROR_SEAT_NOT_FOUND;
        if (moved_count && !no_versions) set |= 1u << HF_ERROR_VERSION_CONFLICT;
        for (uint32_t i = 0; i < pool_count; i++) {
            pool_index[i] = -1;
            for (uint32_t p = 0; p < event->pool_count; p++)
                if (strcmp(event->pools[p].id, pools[i].pool_id) == 0) pool_index[i] = (int32_t)p;
            if (pool_index[i] < 0) {
                missing_pools |= 1u << i;
                continue;
            }
            const model_pool_t *p = &event->pools[pool_index[i]];
            if (p->capacity - p->held - p->sold < pools[i].quantity) short_pools |= 1u << i;
        }
        if (missing_pools) set |= 1u << HF_ERROR_POOL_NOT_FOUND;
        if (short_pools) set |= 1u << HF_ERROR_INSUFFICIENT_QUANTITY;
        if (event->per_user > 0 && !empty_user &&
            (int64_t)user_units(e, u, true, true) + units > event->per_user)
            set |= 1u << HF_ERROR_USER_LIMIT_EXCEEDED;
    }

    /* The core. */
    hf_hold_request_t request = {
        .event_id = event_id, .user_id = user_id,
        .seat_ids = seat_count ? seat_ids : NULL, .seat_count = seat_count,
        .seat_versions = no_versions ? NULL : versions,
        .pools = pool_count ? pools : NULL, .pool_count = pool_count,
        .ttl_ms = -1, .replace_existing = replace,
    };
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    detail.item_count = UINT32_MAX;
    uint32_t core_order = UINT32_MAX;
    hf_error_t got = hf_core_book(core, &request, order_id, payment, model.now, &core_order, &detail);
    expect_result(got, set);
    if (got == HF_ERROR_SEAT_NOT_FOUND || got == HF_ERROR_VERSION_CONFLICT) {
        const uint32_t *want = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_items : moved_items;
        uint32_t want_count = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_count : moved_count;
        bool same = detail.item_count == want_count;
        for (uint32_t i = 0; same && i < want_count; i++) same = detail.items[i] == want[i];
        if (!same) {
            char text[128] = "";
            size_t length = 0;
            for (uint32_t i = 0; i < detail.item_count && i < 16 && length < sizeof text - 8; i++)
                length += (size_t)snprintf(text + length, sizeof text - length, "%s%u",
                                           i ? "," : "", detail.items[i]);
            mismatch("booking %s: detail.items [%s] (%u), model %u items (first %u)",
                     fx_error_code(got), text, detail.item_count, want_count,
                     want_count ? want[0] : UINT32_MAX);
        }
    }
    if (got == HF_ERROR_VERSION_CONFLICT) stats[S_BOOK_CONFLICT]++;
    if (got == HF_ERROR_POOL_NOT_FOUND &&
        (detail.pool >= pool_count || !(missing_pools & (1u << detail.pool))))
        mismatch("booking pool_not_found: detail.pool %u is not an unknown pool", detail.pool);
    if (got == HF_ERROR_INSUFFICIENT_QUANTITY) {
        if (detail.pool >= pool_count || !(short_pools & (1u << detail.pool)))
            mismatch("booking insufficient_quantity: detail.pool %u is not short", detail.pool);
        const model_pool_t *p = &event->pools[pool_index[detail.pool]];
        if (detail.available != p->capacity - p->held - p->sold)
            mismatch("booking insufficient_quantity: available %" PRId64 ", model %" PRId64,
                     detail.available, p->capacity - p->held - p->sold);
    }
    if (got == HF_ERROR_INVALID_REQUEST && detail.field == NULL)
        mismatch("booking invalid_request without detail.field");
    if (got != HF_OK) {
        if (hf_core_order_at(core, model.order_count) != NULL)
            mismatch("a failed booking created an order");
        return;
    }

    /* Apply to the model. */
    stats[S_BOOK_OK]++;
    GROW(model.orders, model.order_count, model.order_capacity);
    uint32_t o = model.order_count++;
    model_order_t *order = &model.orders[o];
    memset(order, 0, sizeof *order);
    snprintf(order->id, sizeof order->id, "%s", order_id);
    order->event = e;
    order->user = u;
    order->booked = true;
    order->status = HF_ORDER_CONFIRMED;
    order->created = model.now;
    order->core_index = core_order;
    snprintf(order->payment, sizeof order->payment, "%s", payment);
    order->items.seat_count = seat_count;
    order->items.pool_count = pool_count;
    for (uint32_t i = 0; i < seat_count; i++) {
        order->items.seats[i] = seat_index[i];
        order->total += event->seats[seat_index[i]].price;
        seat_change(e, seat_index[i], HF_SEAT_SOLD, o + 1);
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        order->items.pools[i] = (uint32_t)pool_index[i];
        order->items.quantities[i] = pools[i].quantity;
        order->total += event->pools[pool_index[i]].price * pools[i].quantity;
        event->pools[pool_index[i]].sold += pools[i].quantity;
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.live, model.live_count, model.live_capacity);
    model.live[model.live_count++] = o;
    model.expected[HF_MUTATION_ORDER_CREATE]++;
    model.expected[HF_MUTATION_ORDER_ITEM] += seat_count + pool_count;
    const fx_record_t *created = fx_sink_first(&sink, HF_MUTATION_ORDER_CREATE);
    if (created == NULL) mismatch("booking: no ORDER_CREATE record");
    if (strcmp(created->order_id, order_id) != 0 || created->hold_id[0] != '\0' ||
        strcmp(created->user_id, user_id) != 0 || strcmp(created->event_id, event->id) != 0 ||
        created->total != order->total)
        mismatch("booking: ORDER_CREATE order %s hold \"%s\" user %s event %s total %" PRId64
                 ", model %s, no hold, %s, %s, %" PRId64, created->order_id, created->hold_id,
                 created->user_id, created->event_id, created->total, order_id, user_id,
                 event->id, order->total);
    if (strcmp(hf_core_string(core, hf_core_order_at(core, core_order)->payment_ref), payment) != 0)
        mismatch("booking: payment_ref differs");
    /* replace_existing means nothing here: the user's holds stay (compare_state checks). */
    compare_order(o);
}

/* ---- payments: the model decides each delivery by its own reading of API.md section 7 ---- */

/* What the model says a delivery answers. */
typedef struct prediction {
    hf_error_t error;
    bool repeat;
    int32_t delivery;     /* the kept delivery a repeat answers, or -1 */
    uint8_t result, reason;
    bool late;
    int32_t order;        /* the model order a commit names; -1 for a new one */
} prediction_t;

/* A delivery as drawn: what the provider sends, and the ids the caller makes for it. */
typedef struct delivery_draw {
    uint8_t type;
    char intent[24];
    int32_t hold;         /* the model hold named, or -1 */
    char reservation[24];
    int64_t amount;
    char order_id[24], refund_id[24];
    int32_t repeat_of;    /* the earlier delivery it repeats on purpose, or -1 */
} delivery_draw_t;

static const char *result_name(uint8_t result)
{
    return result <= HF_PAYMENT_RECORDED ? hf_payment_result_name(result) : "?";
}

/* Everything a lapsed hold held is still free: its seats available, its pools with the units. */
static bool model_inventory_free(const model_hold_t *h)
{
    const model_event_t *event = &model.events[h->event];
    for (uint32_t i = 0; i < h->items.seat_count; i++)
        if (event->seats[h->items.seats[i]].status != HF_SEAT_AVAILABLE) return false;
    for (uint32_t i = 0; i < h->items.pool_count; i++) {
        const model_pool_t *pool = &event->pools[h->items.pools[i]];
        if (pool->capacity - pool->held - pool->sold < h->items.quantities[i]) return false;
    }
    return true;
}

/* Forgets the deliveries older than the window at now, as every delivery does first. */
static void model_deliveries_prune(hf_time_ms_t now)
{
    while (model.delivery_first < model.delivery_count &&
           now - model.deliveries[model.delivery_first].at > HF_WEBHOOK_DEDUP_KEEP_MS)
        model.delivery_first++;
}

/* The delivery of (intent, type) among those from first on, or -1. */
static int32_t model_delivery_find(uint32_t first, uint32_t end, const char *intent,
                                   uint8_t type)
{
    for (uint32_t d = first; d < end; d++)
        if (model.deliveries[d].type == type && strcmp(model.deliveries[d].intent, intent) == 0)
            return (int32_t)d;
    return -1;
}

/* A new payment.succeeded: committed (late when the hold had lapsed and all it held is free),
 * or the reason of the refund it requires. Changes nothing. */
static void model_decide(int32_t hold, int64_t amount, const char *intent, prediction_t *p)
{
    p->result = HF_PAYMENT_REFUND_REQUIRED;
    p->reason = 0;
    p->late = false;
    p->order = -1;
    if (hold < 0) {
        p->reason = HF_REFUND_HOLD_NOT_FOUND;
        return;
    }
    const model_hold_t *h = &model.holds[hold];
    if (h->status == HF_HOLD_CONFIRMED) {
        /* Committed by this very payment (the client's commit came first), or by another. */
        const model_order_t *order = &model.orders[h->order];
        if (order->payment[0] != '\0' && strcmp(order->payment, intent) == 0) {
            p->result = HF_PAYMENT_COMMITTED;
            p->order = h->order;
        } else {
            p->reason = HF_REFUND_ALREADY_CONFIRMED;
        }
    } else if (h->status == HF_HOLD_RELEASED) {
        p->reason = HF_REFUND_HOLD_RELEASED;
    } else if (amount != h->total) {
        p->reason = HF_REFUND_AMOUNT_MISMATCH;
    } else if (h->status == HF_HOLD_EXPIRED && !model_inventory_free(h)) {
        p->reason = HF_REFUND_HOLD_EXPIRED;
    } else {
        p->result = HF_PAYMENT_COMMITTED;
        p->late = h->status == HF_HOLD_EXPIRED;
    }
}

/* The whole answer: an invalid delivery, a repeat of a kept one, or a new decision. */
static void model_predict(const delivery_draw_t *draw, prediction_t *p)
{
    memset(p, 0, sizeof *p);
    p->delivery = p->order = -1;
    model_deliveries_prune(model.now);
    if (draw->intent[0] == '\0') {
        p->error = HF_ERROR_INVALID_REQUEST;
        return;
    }
    p->delivery = model_delivery_find(model.delivery_first, model.delivery_count, draw->intent,
                                      draw->type);
    if (p->delivery >= 0) {
        const model_delivery_t *d = &model.deliveries[p->delivery];
        p->repeat = true;
        p->result = d->result;
        p->reason = d->reason;
        p->late = d->late;
        p->order = d->order;
        return;
    }
    bool order_taken = false, refund_taken = false;
    for (uint32_t o = 0; o < model.order_count && !order_taken; o++)
        order_taken = strcmp(model.orders[o].id, draw->order_id) == 0;
    for (uint32_t r = 0; r < model.refund_count && !refund_taken; r++)
        refund_taken = strcmp(model.refunds[r].id, draw->refund_id) == 0;
    if (order_taken || refund_taken) {
        p->error = HF_ERROR_INVALID_REQUEST;
        return;
    }
    if (draw->type == HF_PAYMENT_FAILED) p->result = HF_PAYMENT_RECORDED;
    else model_decide(draw->hold, draw->amount, draw->intent, p);
}

enum { PICK_HELD, PICK_LAPSED_FREE, PICK_LAPSED_TAKEN, PICK_RELEASED, PICK_CONFIRMED, PICK_ANY };

static bool hold_of_kind(uint32_t index, int kind)
{
    const model_hold_t *h = &model.holds[index];
    switch (kind) {
    case PICK_LAPSED_FREE: return h->status == HF_HOLD_EXPIRED && model_inventory_free(h);
    case PICK_LAPSED_TAKEN: return h->status == HF_HOLD_EXPIRED && !model_inventory_free(h);
    case PICK_RELEASED: return h->status == HF_HOLD_RELEASED;
    case PICK_CONFIRMED: return h->status == HF_HOLD_CONFIRMED;
    default: return true;
    }
}

/* A hold of the kind: an active one, or one of the newest 256 (scanned from a random start);
 * -1 when there is none. */
static int32_t payment_hold_pick(int kind)
{
    if (kind == PICK_HELD)
        return model.active_count ? (int32_t)model.active[rng_below(model.active_count)] : -1;
    uint32_t window = model.hold_count < 256 ? model.hold_count : 256;
    uint32_t start = rng_below(window);
    for (uint32_t i = 0; i < window; i++) {
        uint32_t index = model.hold_count - 1 - (start + i) % window;
        if (hold_of_kind(index, kind)) return (int32_t)index;
    }
    return -1;
}

/* The reservation a delivery names: a model hold, or an id no hold has. */
static void draw_hold(delivery_draw_t *draw, int32_t hold)
{
    static const char *const unknown[] = {"res_none", "ord_0", "res_", "RES_0"};
    draw->hold = hold;
    snprintf(draw->reservation, sizeof draw->reservation, "%s",
             hold >= 0 ? model.holds[hold].id : unknown[rng_below(4)]);
}

/* The hold's total (mostly), or an amount that differs from it. */
static int64_t draw_amount(int32_t hold, uint32_t right_percent)
{
    if (hold < 0) return rng_range(0, 100000);
    int64_t total = model.holds[hold].total;
    if (rng_chance(right_percent)) return total;
    uint32_t roll = rng_below(3);
    if (roll == 0 && total > 0) return total - 1 - rng_range(0, total - 1);
    if (roll == 1) return total + 1 + rng_range(0, 999);
    return total == 0 ? 1 : 0;
}

static void draw_fresh_intent(delivery_draw_t *draw)
{
    snprintf(draw->intent, sizeof draw->intent, "pw_%u", model.intent_serial++);
}

/* payment.succeeded for a hold of a random kind, paid with a fresh intent or (a hold committed
 * by the client's commit) the very payment it was committed with. */
static void draw_succeeded(delivery_draw_t *draw)
{
    static const int kinds[] = {PICK_HELD, PICK_LAPSED_FREE, PICK_LAPSED_TAKEN, PICK_RELEASED,
                                PICK_CONFIRMED};
    static const uint32_t weights[] = {30, 18, 12, 10, 16}; /* the rest: an unknown hold */
    uint32_t roll = rng_below(100), sum = 0;
    int32_t hold = -1;
    bool unknown = true;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && unknown; k++) {
        sum += weights[k];
        if (roll >= sum) continue;
        unknown = false;
        hold = payment_hold_pick(kinds[k]);
        if (hold < 0) hold = payment_hold_pick(PICK_ANY);
    }
    draw->type = HF_PAYMENT_SUCCEEDED;
    draw_hold(draw, unknown ? -1 : hold);
    draw->amount = draw_amount(draw->hold, 80);
    const model_hold_t *h = draw->hold >= 0 ? &model.holds[draw->hold] : NULL;
    if (h && h->status == HF_HOLD_CONFIRMED && rng_chance(40))
        snprintf(draw->intent, sizeof draw->intent, "%s", model.orders[h->order].payment);
    else
        draw_fresh_intent(draw);
}

/* payment.failed, with a fresh intent or one that already succeeded (another delivery). */
static void draw_failed(delivery_draw_t *draw)
{
    draw->type = HF_PAYMENT_FAILED;
    draw_hold(draw, rng_chance(85) ? payment_hold_pick(rng_chance(60) ? PICK_HELD : PICK_ANY) : -1);
    draw->amount = draw_amount(draw->hold, 90);
    if (model.delivery_count > 0 && rng_chance(40))
        snprintf(draw->intent, sizeof draw->intent, "%s",
                 model.deliveries[rng_below(model.delivery_count)].intent);
    else
        draw_fresh_intent(draw);
}

/* The same (intent, type) as an earlier delivery: recent ones mostly, the one whose window's
 * edge the clock was just moved to, or any (maybe forgotten by now). What it carries besides
 * is mostly what the first one carried. */
static void draw_repeat(delivery_draw_t *draw)
{
    uint32_t count = model.delivery_count;
    uint32_t index;
    if (model.boundary >= 0 && rng_chance(90)) index = (uint32_t)model.boundary;
    else if (rng_chance(60)) index = count - 1 - rng_below(count < 16 ? count : 16);
    else index = rng_below(count);
    model.boundary = -1;
    const model_delivery_t *d = &model.deliveries[index];
    draw->repeat_of = (int32_t)index;
    draw->type = d->type;
    snprintf(draw->intent, sizeof draw->intent, "%s", d->intent);
    if (rng_chance(70)) {
        draw->hold = d->hold;
        snprintf(draw->reservation, sizeof draw->reservation, "%s", d->reservation);
    } else {
        draw_hold(draw, rng_chance(80) ? payment_hold_pick(PICK_ANY) : -1);
    }
    draw->amount = rng_chance(70) ? d->amount : draw_amount(draw->hold, 50);
}

/* A delivery: a repeat a quarter of the time (mostly, right after the clock moved to a kept
 * delivery's window's edge), else payment.succeeded or payment.failed; a few are refused. */
static void payment_draw(delivery_draw_t *draw)
{
    memset(draw, 0, sizeof *draw);
    draw->repeat_of = -1;
    uint32_t roll = rng_below(100);
    if (model.delivery_count > 0 && (roll < 25 || (model.boundary >= 0 && roll < 85)))
        draw_repeat(draw);
    else if (roll < 85) draw_succeeded(draw);
    else draw_failed(draw);
    snprintf(draw->order_id, sizeof draw->order_id, "ord_%u", model.order_count);
    snprintf(draw->refund_id, sizeof draw->refund_id, "ref_%u", model.refund_count);
    /* Refused whatever else: no intent. Refused unless a repeat: an id already taken. */
    roll = rng_below(100);
    if (roll < 2) draw->intent[0] = '\0';
    else if (roll < 4 && model.order_count > 0)
        snprintf(draw->order_id, sizeof draw->order_id, "%s",
                 model.orders[rng_below(model.order_count)].id);
    else if (roll < 6 && model.refund_count > 0)
        snprintf(draw->refund_id, sizeof draw->refund_id, "%s",
                 model.refunds[rng_below(model.refund_count)].id);
}

/* The DELIVERY record (and REFUND record) of a new delivery against the model. */
static void payment_records_check(const delivery_draw_t *draw, const prediction_t *p)
{
    const fx_record_t *record = fx_sink_first(&sink, HF_MUTATION_DELIVERY);
    if (record == NULL) mismatch("delivery: no DELIVERY record");
    const char *event_id = draw->hold >= 0 ? model.events[model.holds[draw->hold].event].id : "";
    const char *order_id = p->result != HF_PAYMENT_COMMITTED ? ""
                           : p->order >= 0 ? model.orders[p->order].id : draw->order_id;
    const char *refund_id = p->result == HF_PAYMENT_REFUND_REQUIRED ? draw->refund_id : "";
    if (strcmp(record->payment_intent_id, draw->intent) != 0 ||
        strcmp(record->hold_id, draw->reservation) != 0 || record->amount != draw->amount ||
        record->payment_type != draw->type || strcmp(record->event_id, event_id) != 0)
        mismatch("DELIVERY record: intent %s reservation %s amount %" PRId64 " type %d event %s",
                 record->payment_intent_id, record->hold_id, record->amount,
                 record->payment_type, record->event_id);
    if (record->status != p->result || record->late != p->late ||
        strcmp(record->order_id, order_id) != 0 || strcmp(record->refund_id, refund_id) != 0 ||
        (p->result == HF_PAYMENT_REFUND_REQUIRED && record->reason != p->reason))
        mismatch("DELIVERY record: %s%s order \"%s\" refund \"%s\" reason %s, model %s%s \"%s\" "
                 "\"%s\" %s", result_name((uint8_t)record->status), record->late ? " late" : "",
                 record->order_id, record->refund_id, reason_name((uint8_t)record->reason),
                 result_name(p->result), p->late ? " late" : "", order_id, refund_id,
                 reason_name(p->reason));
    if (p->result != HF_PAYMENT_REFUND_REQUIRED) return;
    record = fx_sink_first(&sink, HF_MUTATION_REFUND);
    if (record == NULL) mismatch("refund required: no REFUND record");
    if (strcmp(record->refund_id, draw->refund_id) != 0 || record->amount != draw->amount ||
        record->reason != p->reason || record->status != HF_REFUND_PENDING ||
        record->created_at_ms != model.now)
        mismatch("REFUND record %s: amount %" PRId64 " reason %s status %d", record->refund_id,
                 record->amount, reason_name((uint8_t)record->reason), record->status);
}

/* The model takes the new delivery's outcome: the order made, the refund, the delivery kept. */
static void payment_apply(const delivery_draw_t *draw, const prediction_t *p,
                          const hf_payment_outcome_t *outcome)
{
    int32_t order = p->order, refund = -1;
    if (p->result == HF_PAYMENT_COMMITTED && order >= 0) {
        if (outcome->order != model.orders[order].core_index)
            mismatch("committed by its own payment: order index %u, model %s at %u",
                     outcome->order, model.orders[order].id, model.orders[order].core_index);
        stats[S_PAY_OWN]++;
    } else if (p->result == HF_PAYMENT_COMMITTED) {
        const hf_order_t *made = hf_core_order_at(core, outcome->order);
        if (made == NULL || strcmp(made->id, draw->order_id) != 0)
            mismatch("committed: order index %u is %s, not %s", outcome->order,
                     made ? made->id : "none", draw->order_id);
        order = (int32_t)model_order_from_hold((uint32_t)draw->hold, draw->order_id,
                                               draw->intent, outcome->order);
        compare_order((uint32_t)order);
        stats[p->late ? S_PAY_LATE : S_PAY_COMMITTED]++;
    } else if (p->result == HF_PAYMENT_REFUND_REQUIRED) {
        if (outcome->refund != model.refund_count)
            mismatch("refund index %u, model %u", outcome->refund, model.refund_count);
        GROW(model.refunds, model.refund_count, model.refund_capacity);
        refund = (int32_t)model.refund_count++;
        model_refund_t *r = &model.refunds[refund];
        memset(r, 0, sizeof *r);
        snprintf(r->id, sizeof r->id, "%s", draw->refund_id);
        snprintf(r->intent, sizeof r->intent, "%s", draw->intent);
        snprintf(r->reservation, sizeof r->reservation, "%s", draw->reservation);
        r->amount = draw->amount;
        r->reason = p->reason;
        r->status = HF_REFUND_PENDING;
        r->created = model.now;
        model.expected[HF_MUTATION_REFUND]++;
        compare_refund((uint32_t)refund);
        stats[S_PAY_REFUND]++;
        stats[S_PAY_REASON + p->reason]++;
    }
    GROW(model.deliveries, model.delivery_count, model.delivery_capacity);
    model.deliveries[model.delivery_count++] = (model_delivery_t){
        .type = draw->type, .hold = draw->hold, .amount = draw->amount, .result = p->result,
        .reason = p->reason, .late = p->late, .order = order, .refund = refund, .at = model.now};
    model_delivery_t *kept = &model.deliveries[model.delivery_count - 1];
    snprintf(kept->intent, sizeof kept->intent, "%s", draw->intent);
    snprintf(kept->reservation, sizeof kept->reservation, "%s", draw->reservation);
    model.expected[HF_MUTATION_DELIVERY]++;
    payment_records_check(draw, p);
}

/* A repeat answers the kept outcome and changes nothing; counts one whose hold has moved on
 * since (a new delivery would now decide otherwise). */
static void payment_repeat_check(const delivery_draw_t *draw, const prediction_t *p,
                                 const hf_payment_outcome_t *outcome)
{
    const model_delivery_t *d = &model.deliveries[p->delivery];
    if (d->result == HF_PAYMENT_COMMITTED && outcome->order != model.orders[d->order].core_index)
        mismatch("repeat: order index %u, first delivery's %s at %u", outcome->order,
                 model.orders[d->order].id, model.orders[d->order].core_index);
    if (d->result == HF_PAYMENT_REFUND_REQUIRED && outcome->refund != (uint32_t)d->refund)
        mismatch("repeat: refund index %u, first delivery's %u", outcome->refund, d->refund);
    stats[S_PAY_REPEAT]++;
    if (d->type != HF_PAYMENT_SUCCEEDED) return;
    prediction_t now;
    model_decide(draw->hold, draw->amount, draw->intent, &now);
    if (now.result != d->result || now.late != d->late ||
        (now.result == HF_PAYMENT_REFUND_REQUIRED && now.reason != d->reason))
        stats[S_PAY_REPEAT_CHANGED]++;
}

static void op_payment(void)
{
    model_expire(model.now); /* the kinds of holds as the delivery will find them */
    delivery_draw_t draw;
    payment_draw(&draw);
    /* A hold the core forgot is taken back first, as the engine does from the store. */
    if (draw.hold >= 0 && model.holds[draw.hold].forgotten) revive((uint32_t)draw.hold);
    snprintf(description, sizeof description,
             "%s intent=\"%s\" reservation=%s amount=%" PRId64 " order=%s refund=%s%s",
             hf_payment_type_name(draw.type), draw.intent, draw.reservation, draw.amount,
             draw.order_id, draw.refund_id, draw.repeat_of >= 0 ? " (a repeat)" : "");
    prediction_t p;
    model_predict(&draw, &p);
    stats[S_PAY]++;
    if (draw.type == HF_PAYMENT_FAILED) stats[S_PAY_FAILED]++;
    if (draw.repeat_of >= 0 && !p.repeat && p.error == HF_OK &&
        model_delivery_find(0, model.delivery_first, draw.intent, draw.type) >= 0)
        stats[S_PAY_REPEAT_PRUNED]++;
    if (draw.repeat_of >= 0 && p.error == HF_OK) {
        /* At the window's last millisecond, or the first one past it. */
        int64_t age = model.now - model.deliveries[draw.repeat_of].at;
        if (age == HF_WEBHOOK_DEDUP_KEEP_MS) stats[S_EDGE_KEPT]++;
        if (age == HF_WEBHOOK_DEDUP_KEEP_MS + 1) stats[S_EDGE_PRUNED]++;
    }

    hf_payment_delivery_t delivery = {
        .event_id = "evt_sim", .type = draw.type, .payment_intent_id = draw.intent,
        .reservation_id = draw.reservation, .amount = draw.amount, .order_id = draw.order_id,
        .refund_id = draw.refund_id};
    hf_payment_outcome_t outcome;
    memset(&outcome, 0xA5, sizeof outcome);
    hf_error_t got = hf_core_payment(core, &delivery, model.now, &outcome);
    expect_result(got, p.error == HF_OK ? 0 : 1u << p.error);
    if (got != HF_OK) {
        stats[S_PAY_INVALID]++;
        return;
    }
    if (outcome.repeat != p.repeat || outcome.result != p.result || outcome.late != p.late ||
        (p.result == HF_PAYMENT_REFUND_REQUIRED && outcome.reason != p.reason))
        mismatch("delivery answered %s%s%s%s%s, model %s%s%s%s%s", result_name(outcome.result),
                 outcome.result == HF_PAYMENT_REFUND_REQUIRED ? " " : "",
                 outcome.result == HF_PAYMENT_REFUND_REQUIRED ? reason_name(outcome.reason) : "",
                 outcome.late ? " late" : "", outcome.repeat ? " (repeat)" : "",
                 result_name(p.result), p.result == HF_PAYMENT_REFUND_REQUIRED ? " " : "",
                 p.result == HF_PAYMENT_REFUND_REQUIRED ? reason_name(p.reason) : "",
                 p.late ? " late" : "", p.repeat ? " (repeat)" : "");
    if (p.repeat) payment_repeat_check(&draw, &p, &outcome);
    else payment_apply(&draw, &p, &outcome);
    if (draw.hold >= 0) touch_hold((uint32_t)draw.hold);
}

/* A refund completed: a pending one mostly, one completed already (changes nothing), or an id
 * no refund has. */
static void op_refund_complete(void)
{
    int32_t index = -1;
    uint32_t roll = rng_below(100);
    if (roll < 60 && model.refund_count > 0) {
        uint32_t start = rng_below(model.refund_count);
        for (uint32_t i = 0; i < model.refund_count && index < 0; i++) {
            uint32_t r = (start + i) % model.refund_count;
            if (model.refunds[r].status == HF_REFUND_PENDING) index = (int32_t)r;
        }
    }
    if (index < 0 && roll < 85 && model.refund_count > 0)
        index = (int32_t)rng_below(model.refund_count);
    static const char *const unknown[] = {"ref_none", "ord_0", "", "REF_0"};
    const char *id = index >= 0 ? model.refunds[index].id : unknown[rng_below(4)];
    snprintf(description, sizeof description, "complete refund \"%s\"", id);
    model_expire(model.now);
    stats[S_REFUND_COMPLETE]++;
    uint32_t core_index = UINT32_MAX;
    hf_error_t got = hf_core_refund_complete(core, id, model.now, &core_index);
    expect_result(got, index < 0 ? 1u << HF_ERROR_REFUND_NOT_FOUND : 0);
    if (got != HF_OK) return;
    if (core_index != (uint32_t)index)
        mismatch("refund %s: completed index %u, model %d", id, core_index, index);
    model_refund_t *r = &model.refunds[index];
    if (r->status == HF_REFUND_COMPLETED) {
        stats[S_REFUND_COMPLETE_AGAIN]++;
    } else {
        r->status = HF_REFUND_COMPLETED;
        model.expected[HF_MUTATION_REFUND]++;
        const fx_record_t *record = fx_sink_first(&sink, HF_MUTATION_REFUND);
        if (record == NULL || strcmp(record->refund_id, id) != 0 ||
            record->status != HF_REFUND_COMPLETED || record->created_at_ms != r->created ||
            record->amount != r->amount)
            mismatch("refund %s completed: its REFUND record is missing or differs", id);
        stats[S_REFUND_COMPLETE_OK]++;
    }
    compare_refund((uint32_t)index);
}

/* The window run's clock: short steps (holds get paid), hours and days, and to the last
 * millisecond a kept delivery is kept, or the one after. */
static hf_time_ms_t window_clock_target(uint32_t roll)
{
    hf_time_ms_t target = model.now;
    const int64_t hour = 3600 * 1000;
    if (roll < 35) {
        target += rng_range(0, 30000);
    } else if (roll < 55) {
        /* Exactly to a hold's expires_at, or one millisecond before. */
        if (model.active_count > 0)
            target = model.holds[model.active[rng_below(model.active_count)]].expires -
                     (hf_time_ms_t)rng_below(2);
    } else if (roll < 75) {
        target += rng_range(hour, 36 * hour);
    } else if (roll < 88) {
        /* A delivery still kept now (by the model's reckoning), to its window's edge. */
        uint32_t first = model.delivery_first;
        while (first < model.delivery_count &&
               model.now - model.deliveries[first].at > HF_WEBHOOK_DEDUP_KEEP_MS)
            first++;
        if (first < model.delivery_count) {
            uint32_t d = first + rng_below(model.delivery_count - first);
            target = model.deliveries[d].at + HF_WEBHOOK_DEDUP_KEEP_MS + rng_below(2);
            model.boundary = (int32_t)d;
            stats[S_WINDOW_JUMP]++;
        }
    } else {
        target += rng_range(24 * hour, 8 * 24 * hour);
    }
    return target < model.now ? model.now : target;
}

static void op_clock(void)
{
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
static void evict_step(void)
{
    uint64_t now_changes = hf_core_change_count(core);
    uint32_t lag = rng_below(8);
    uint64_t durable = lag == 0 ? now_changes
                     : step >= lag ? model.step_changes[(step - lag) % 8] : 0;
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
                     " durable, it ended after %" PRIu64 ")", h->id, durable, h->finished_after);
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

static uint64_t env_number(const char *name, uint64_t fallback)
{
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
    {"hold", op_hold, 36, 24},
    {"book", op_book, 7, 2},
    {"extend", op_extend, 8, 3},
    {"release", op_release, 10, 5},
    {"commit", op_commit, 9, 7},
    {"cancel", op_cancel, 9, 6},
    {"payment", op_payment, 4, 28},
    {"refund", op_refund_complete, 1, 4},
    {"clock", op_clock, 16, 21},
};

static void operation_run(void)
{
    uint32_t roll = rng_below(100), sum = 0;
    for (size_t k = 0; k < sizeof operation_kinds / sizeof operation_kinds[0]; k++) {
        sum += window_run ? operation_kinds[k].window_percent : operation_kinds[k].main_percent;
        if (roll >= sum) continue;
        begin(operation_kinds[k].name);
        /* A command runs as the engine runs a request's: the core advanced to its time first
         * (the clock's own step advances only half the time, to test both). */
        if (operation_kinds[k].run != op_clock) hf_core_advance(core, model.now);
        operation_kinds[k].run();
        return;
    }
    assert_true(!"the shares of operation_kinds add up to 100");
}

static void simulation_report(uint64_t operations, double seconds)
{
    printf("%s: %" PRIu64 " operations in %.2f s (%.0f ops/s), clock at epoch+%" PRId64
           " ms\n", run_name, operations, seconds,
           seconds > 0 ? (double)operations / seconds : 0.0, model.now - EPOCH);
    printf("  holds %" PRIu64 " (ok %" PRIu64 ", replaced %" PRIu64 ", moved seats %" PRIu64
           "), extends %" PRIu64 " (ok %" PRIu64 "), releases %" PRIu64 " (ok %" PRIu64
           "), commits %" PRIu64 " (ok %" PRIu64 "), cancels %" PRIu64 " (ok %" PRIu64 ")\n",
           stats[S_HOLD], stats[S_HOLD_OK], stats[S_REPLACED], stats[S_MOVED], stats[S_EXTEND],
           stats[S_EXTEND_OK], stats[S_RELEASE], stats[S_RELEASE_OK], stats[S_COMMIT],
           stats[S_COMMIT_OK], stats[S_CANCEL], stats[S_CANCEL_OK]);
    printf("  best_available %" PRIu64 " (ok %" PRIu64 ": separate %" PRIu64 ", with named seats %"
           PRIu64 ", with replace %" PRIu64 "; seats picked %" PRIu64 "; nothing fits %" PRIu64
           "), bookings %" PRIu64 " (ok %" PRIu64 ", version conflicts %" PRIu64
           ", booked orders cancelled %" PRIu64 ")\n",
           stats[S_BEST], stats[S_BEST_OK], stats[S_BEST_SEPARATE_OK], stats[S_BEST_NAMED_OK],
           stats[S_BEST_REPLACE_OK], stats[S_BEST_PICKED], stats[S_BEST_NO_FIT], stats[S_BOOK],
           stats[S_BOOK_OK], stats[S_BOOK_CONFLICT], stats[S_BOOK_CANCEL_OK]);
    printf("  deliveries %" PRIu64 " (payment.failed %" PRIu64 ", refused %" PRIu64
           "): committed %" PRIu64 ", late %" PRIu64 ", by its own commit's payment %" PRIu64
           ", refunds %" PRIu64 " (", stats[S_PAY], stats[S_PAY_FAILED], stats[S_PAY_INVALID],
           stats[S_PAY_COMMITTED], stats[S_PAY_LATE], stats[S_PAY_OWN], stats[S_PAY_REFUND]);
    for (uint8_t r = 0; r <= HF_REFUND_ALREADY_CONFIRMED; r++)
        printf("%s%s %" PRIu64, r ? ", " : "", hf_refund_reason_name(r), stats[S_PAY_REASON + r]);
    printf(")\n  repeats %" PRIu64 " (the hold moved on since %" PRIu64 ", past the window so new %"
           PRIu64 "), clock to a window's edge %" PRIu64 " (repeats there %" PRIu64
           ", a millisecond past %" PRIu64 "), refund completions %" PRIu64 " (ok %" PRIu64
           ", again %" PRIu64 ")\n", stats[S_PAY_REPEAT], stats[S_PAY_REPEAT_CHANGED],
           stats[S_PAY_REPEAT_PRUNED], stats[S_WINDOW_JUMP], stats[S_EDGE_KEPT],
           stats[S_EDGE_PRUNED],
           stats[S_REFUND_COMPLETE], stats[S_REFUND_COMPLETE_OK], stats[S_REFUND_COMPLETE_AGAIN]);
    printf("  clock jumps %" PRIu64 " (advance %" PRIu64 ", holds expired by advance %" PRIu64
           "), hf_core_check calls %" PRIu64 "\n", stats[S_CLOCK], stats[S_ADVANCE],
           stats[S_EXPIRED], stats[S_CHECKS]);
    printf("  finished holds kept at most %u: forgotten %" PRIu64 ", taken back %" PRIu64
           "\n  operations without seat and pool records %" PRIu64 "\n  answers:", finished_max,
           stats[S_FORGOTTEN], stats[S_REVIVED], stats[S_QUIET]);
    for (int e = 0; e <= ERROR_LAST; e++)
        if (error_stats[e])
            printf(" %s=%" PRIu64, e == 0 ? "ok" : fx_error_code((hf_error_t)e), error_stats[e]);
    printf("\n");
}

/* One run from a fresh core and model: operations random steps, each checked. */
static void simulate(uint64_t operations, uint64_t stream)
{
    uint64_t check_every = env_number("HF_SIM_CHECK_EVERY", 0);
    lax_next_expiry = env_number("HF_SIM_LAX_NEXT_EXPIRY", 0) != 0;
    finished_max = (uint32_t)env_number("HF_SIM_FINISHED_MAX", 3);
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
}

static void test_simulation(void **state)
{
    (void)state;
    run_name = "test_simulation";
    run_variable = "HF_SIM_OPERATIONS";
    run_skip = "HF_SIM_WINDOW_OPERATIONS=0";
    window_run = false;
    simulate(env_number("HF_SIM_OPERATIONS", 100000), 0);
}

/* The first run's clock stays within a few days: this one crosses the 7-day window of
 * deliveries many times, with a third of its operations payments. */
static void test_payment_window(void **state)
{
    (void)state;
    run_name = "test_payment_window";
    run_variable = "HF_SIM_WINDOW_OPERATIONS";
    run_skip = "HF_SIM_OPERATIONS=0";
    window_run = true;
    simulate(env_number("HF_SIM_WINDOW_OPERATIONS", 10000), UINT64_C(0x5EED0F7DA75));
}

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
 * compared after every step. */

#define QM_USERS 40
#define QM_TICKETS_MAX 4096

typedef struct qm_ticket {
    char id[24];
    uint32_t user;
    uint8_t status;
    int64_t last_seen, admitted_at;
} qm_ticket_t;

typedef struct queue_model {
    hf_room_definition_t room;
    qm_ticket_t tickets[QM_TICKETS_MAX];
    uint32_t count, waiting, active;
    int32_t user_ticket[QM_USERS];
    bool made;
    double tokens;
    int64_t refilled, admit_armed;
} queue_model_t;

static queue_model_t qm;

static bool qm_slot(void) { return qm.room.max_active == 0 || qm.active < qm.room.max_active; }

static void qm_admit(int64_t t)
{
    if (t > qm.refilled) {
        qm.tokens += (double)(t - qm.refilled) * qm.room.admit_per_s / 1000.0;
        double capacity = qm.room.admit_per_s / 10.0 < 1.0 ? 1.0 : qm.room.admit_per_s / 10.0;
        if (qm.tokens > capacity) qm.tokens = capacity;
        qm.refilled = t;
    }
    while (qm.waiting > 0 && qm.tokens >= 1.0 - 1e-9 && qm_slot()) {
        uint32_t head = 0;
        while (qm.tickets[head].status != HF_TICKET_WAITING) head++;
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

static int64_t qm_expires_ms(const qm_ticket_t *ticket)
{
    return (ticket->admitted_at / 1000 + qm.room.token_ttl_s) * 1000;
}

/* The room's admission when it is due: a join arms one at its own instant. */
static void qm_admit_due(int64_t t)
{
    if (qm.admit_armed > t) return;
    qm.admit_armed = INT64_MAX;
    qm_admit(t);
}

static void qm_advance(int64_t t)
{
    qm_admit_due(t);
    for (uint32_t i = 0; i < qm.count; i++) {
        qm_ticket_t *ticket = &qm.tickets[i];
        if (ticket->status == HF_TICKET_ADMITTED && qm_expires_ms(ticket) == t) {
            ticket->status = HF_TICKET_EXPIRED;
            qm.active--;
            qm_admit(t);
        } else if (ticket->status == HF_TICKET_WAITING &&
                   ticket->last_seen + qm.room.abandon_after_ms == t) {
            ticket->status = HF_TICKET_ABANDONED;
            qm.waiting--;
        }
    }
}

static hf_error_t qm_join(uint32_t user, int64_t t, uint32_t *index, bool *created)
{
    *created = false;
    qm_admit_due(t);   /* the core's hf_core_advance before every command */
    int32_t last = qm.user_ticket[user];
    if (last >= 0 && (qm.tickets[last].status == HF_TICKET_WAITING ||
                      qm.tickets[last].status == HF_TICKET_ADMITTED)) {
        if (qm.tickets[last].status == HF_TICKET_WAITING) qm.tickets[last].last_seen = t;
        *index = (uint32_t)last;
        return HF_OK;
    }
    if (!qm.made) {
        qm.made = true;
        qm.tokens = qm.room.admit_per_s / 10.0 < 1.0 ? 1.0 : qm.room.admit_per_s / 10.0;
        qm.refilled = t;
    }
    if (qm.waiting >= qm.room.max_waiting) return HF_ERROR_WAITING_ROOM_FULL;
    qm_ticket_t *ticket = &qm.tickets[qm.count];
    snprintf(ticket->id, sizeof ticket->id, "q_%u", qm.count);
    ticket->user = user;
    ticket->status = HF_TICKET_WAITING;
    ticket->last_seen = t;
    ticket->admitted_at = 0;
    qm.user_ticket[user] = (int32_t)qm.count;
    *index = qm.count++;
    qm.waiting++;
    *created = true;
    if (qm.admit_armed == INT64_MAX) qm.admit_armed = t;
    return HF_OK;
}

static void qm_complete(uint32_t index, int64_t t)
{
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
static void qm_compare(hf_core_t *queue_core, uint64_t at_step)
{
    uint32_t ahead = 0;
    for (uint32_t i = 0; i < qm.count; i++) {
        uint32_t index;
        const hf_ticket_t *ticket = hf_core_ticket_find(queue_core, qm.tickets[i].id, &index);
        if (!ticket) fail_msg("step %" PRIu64 ": ticket %s unknown", at_step, qm.tickets[i].id);
        if (ticket->status != qm.tickets[i].status)
            fail_msg("step %" PRIu64 ": ticket %s is %s, the model says %s", at_step,
                     qm.tickets[i].id, hf_ticket_status_name(ticket->status),
                     hf_ticket_status_name(qm.tickets[i].status));
        uint32_t position = qm.tickets[i].status == HF_TICKET_WAITING ? ++ahead : 0;
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

static void qm_settings(void)
{
    static const double rates[] = {0.5, 3, 20, 150, 1000};
    static const uint32_t actives[] = {0, 0, 2, 5};
    static const uint32_t waitings[] = {3, 20, 1000};
    qm.room = (hf_room_definition_t){true, rates[rng_below(5)], rng_range(1, 3),
                                     actives[rng_below(4)], rng_range(200, 3000),
                                     waitings[rng_below(3)]};
}

/* A join of a random user at t, on the core and the model, answers compared. */
static void qm_join_one(hf_core_t *queue_core, int64_t t, uint64_t at_step)
{
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
        if (!error && (created != model_created ||
                       strcmp(hf_core_ticket_at(queue_core, index)->id,
                              qm.tickets[model_index].id) != 0))
            fail_msg("step %" PRIu64 ": join of %s gave another ticket", at_step, user_id);
    }
}

/* One random operation at t, on the core and the model, answers compared: a join (sometimes
 * a crowd joining at the same instant, which the bucket must meter), a poll or a complete. */
static void qm_operation(hf_core_t *queue_core, int64_t t, uint64_t at_step)
{
    uint32_t roll = rng_below(100), index = 0;
    if (roll < 45 || qm.count == 0) {
        uint32_t crowd = rng_chance(15) ? 12 : 1;
        for (uint32_t i = 0; i < crowd && qm.count < QM_TICKETS_MAX; i++)
            qm_join_one(queue_core, t, at_step);
        return;
    }
    uint32_t pick = rng_below(qm.count);
    qm_admit_due(t);   /* the core's hf_core_advance before every command */
    hf_core_advance(queue_core, t);
    if (roll < 80) {
        if (qm.tickets[pick].status == HF_TICKET_WAITING) qm.tickets[pick].last_seen = t;
        assert_int_equal(hf_core_queue_poll(queue_core, "room", qm.tickets[pick].id, t, &index),
                         HF_OK);
    } else {
        qm_complete(pick, t);
        assert_int_equal(hf_core_queue_complete(queue_core, "room", qm.tickets[pick].id, t,
                                                &index), HF_OK);
    }
}

static void test_queue_simulation(void **state)
{
    (void)state;
    uint64_t operations = env_number("HF_SIM_QUEUE_OPERATIONS", 20000);
    rng_state = seed ^ UINT64_C(0x0E0E0E);
    for (uint32_t run = 0; run < 4; run++) {
        memset(&qm, 0, sizeof qm);
        for (uint32_t u = 0; u < QM_USERS; u++) qm.user_ticket[u] = -1;
        qm.admit_armed = INT64_MAX;
        qm_settings();
        hf_core_t *queue_core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
        fx_event_t event;
        fx_event_init(&event, "room", 60000, 180000, 0, 10);
        fx_event_section(&event, "F", 100, 1, 4);
        event.definition.waiting_room = qm.room;
        assert_int_equal(hf_core_event_create(queue_core, &event.definition, EPOCH, NULL), HF_OK);
        int64_t t = EPOCH;
        for (uint64_t at_step = 0; at_step < operations / 4 && qm.count < QM_TICKETS_MAX;
             at_step++) {
            int64_t until = t + rng_range(0, 40);
            while (t < until) {
                t++;
                qm_advance(t);
                hf_core_advance(queue_core, t);
            }
            qm_operation(queue_core, t, at_step);
            qm_compare(queue_core, at_step);
            const char *fault = at_step % 16 == 0 ? hf_core_check(queue_core, t) : NULL;
            if (fault) fail_msg("step %" PRIu64 ": hf_core_check: %s", at_step, fault);
        }
        hf_core_destroy(queue_core);
    }
}
#include "sim_dispatch.h"

int main(void)
{
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
        cmocka_unit_test(test_simulation),
        cmocka_unit_test(test_payment_window),
        cmocka_unit_test(test_queue_simulation),
        cmocka_unit_test(test_dispatch_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
