/* The simulation's reference model of events, seats, pools, holds and orders (included by
 * test_simulation.c, which documents the whole run; then sim_holds.h, sim_payments.h,
 * sim_queue.h and sim_dispatch.h, in that order): the PRNG, the model's state, its setup,
 * the comparison of the core's state and records with it, and the start of an operation. */
#ifndef HF_TESTS_SIM_MODEL_H
#define HF_TESTS_SIM_MODEL_H

#define EPOCH INT64_C(1750000000000)
#define USERS 8
#define EVENTS 4
#define SEATS_MAX 64
#define ROWS_MAX 16
#define POOLS_MAX 2
#define REQUEST_SEATS_MAX 8
#define ITEM_SEATS_MAX 16 /* named seats plus best_available picks: per_hold is at most 10 */
#define REQUEST_POOLS_MAX 3
#define SEAT_ID_SIZE (HF_SEAT_ID_SIZE_MAX + 1)
#define CHANGES_MAX 4096
#define ALLOCATIONS_MAX 400
/* A waitlist's targets, as the core numbers them: 0 any section, 1 + s, 1 + sections + p. */
#define TARGETS_MAX (1 + FX_SECTIONS_MAX + POOLS_MAX)
/* A seat released from its allocation while held or sold (the core's ALLOCATION_RELEASED). */
#define MODEL_RELEASED 0x80000000u

/* ---- PRNG: splitmix64, never rand() ---- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
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
    uint8_t status; /* hf_seat_status_t */
    uint32_t owner; /* model hold + 1 when held, model order + 1 when sold */
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
    /* Per seat: the allocation (model index + 1) it is set aside for or was taken from, with
     * MODEL_RELEASED once released while held or sold; 0 for the public's. */
    uint32_t seat_allocation[SEATS_MAX];
    /* The waitlist (sim_waitlist.h): its setting, its waiting entries, the join numbers given,
     * and the targets whose inventory came free in this command while entries waited. */
    bool waitlist;
    int64_t offer_ttl_ms;
    uint32_t waiting, joined;
    bool dirty[TARGETS_MAX], marked;
} model_event_t;

/* An allocation (API.md section 14, seats only here; pools are the unit tests'). Its index is
 * the core's: both make one at each successful creation, in the same order. */
typedef struct model_allocation {
    char id[16];
    uint32_t event;
} model_allocation_t;

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
    int32_t order; /* model order index or -1 */
    uint32_t core_index;
    bool forgotten; /* the core forgot it (hf_core_evict); core_index is stale */
    /* hf_core_change_count before the operation that ended it: its end's record is later. */
    uint64_t finished_after;
    uint64_t expired_step; /* step + 1 of the step that expired it (0: none) */
    uint32_t allocation;   /* the allocation it took its seats from (index + 1), else 0 */
} model_hold_t;

typedef struct model_order {
    char id[24];
    uint32_t event, user, hold;
    bool booked; /* hf_core_book: no hold (hold unused) */
    uint8_t status;
    hf_time_ms_t created;
    int64_t total;
    model_items_t items;
    uint32_t core_index;
    char payment[24]; /* the payment_ref it was committed with ("" for none) */
} model_order_t;

/* A refund a payment required; its index is the core's (refunds are never forgotten). */
typedef struct model_refund {
    char id[24];
    char intent[24];
    char reservation[24]; /* as the delivery named it */
    int64_t amount;       /* the amount paid */
    uint8_t reason, status;
    hf_time_ms_t created;
} model_refund_t;

/* A delivery that was not a repeat, with the outcome it decided. */
typedef struct model_delivery {
    char intent[24];
    uint8_t type;         /* hf_payment_type_t */
    int32_t hold;         /* the model hold it named, or -1 */
    char reservation[24]; /* as it named it */
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
    /* A seat freed while its section's waitlist target was marked: the core tells it only once
     * the command settled, and only if it is still available then (never when offered). */
    bool deferred;
} change_t;

typedef struct model {
    model_event_t events[EVENTS];
    model_hold_t *holds;
    uint32_t hold_count, hold_capacity;
    model_order_t *orders;
    uint32_t order_count, order_capacity;
    uint32_t *active; /* held holds */
    uint32_t active_count, active_capacity;
    uint32_t *live; /* confirmed orders */
    uint32_t live_count, live_capacity;
    uint32_t *kept; /* released and expired holds the core has not forgotten */
    uint32_t kept_count, kept_capacity;
    model_refund_t *refunds;
    uint32_t refund_count, refund_capacity;
    model_delivery_t *deliveries; /* in arrival order, so by age */
    uint32_t delivery_count, delivery_capacity;
    /* Deliveries before it were older than HF_WEBHOOK_DEDUP_KEEP_MS at the last delivery. */
    uint32_t delivery_first;
    uint32_t intent_serial; /* names fresh payment intents: pw_N */
    int32_t boundary;       /* the delivery whose window's edge the clock just moved to, or -1 */
    uint64_t operation_changes; /* hf_core_change_count when the operation began */
    uint64_t step_changes[8];   /* hf_core_change_count after each of the last 8 steps */
    hf_time_ms_t now;           /* the simulated clock */
    hf_time_ms_t applied;       /* the last time given to the core */
    /* What the current operation changed. */
    change_t changes[CHANGES_MAX];
    uint32_t change_count;
    uint32_t touched_holds[64], touched_hold_count;
    uint32_t expected[FX_TYPES]; /* mutation records by type */
    uint32_t extend_unchanged;   /* an extend that moved nothing: 0 or 1 HOLD_UPDATE */
    /* Seats of replaced holds taken again by the new hold: the core may report them released
     * and held again (two changes) or moved (none). */
    uint32_t moved_event, moved_seats[ITEM_SEATS_MAX], moved_count;
    bool moved_deferred[ITEM_SEATS_MAX]; /* the release of each was deferred */
    model_allocation_t allocations[ALLOCATIONS_MAX];
    uint32_t allocation_count;
    struct model_entry *entries; /* waitlist entries in join order (sim_waitlist.h) */
    uint32_t entry_count, entry_capacity;
    uint32_t latest[EVENTS][USERS]; /* the user's newest entry on the event + 1, else 0 */
    uint32_t touched_entries[64], touched_entry_count;
    uint32_t entries_by_status[HF_WAITLIST_CANCELLED + 1];
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

enum {
    S_HOLD,
    S_HOLD_OK,
    S_EXTEND,
    S_EXTEND_OK,
    S_RELEASE,
    S_RELEASE_OK,
    S_COMMIT,
    S_COMMIT_OK,
    S_CANCEL,
    S_CANCEL_OK,
    S_CLOCK,
    S_ADVANCE,
    S_EXPIRED,
    S_REPLACED,
    S_MOVED,
    S_CHECKS,
    S_FORGOTTEN,
    S_REVIVED,
    S_QUIET,
    S_AMBIGUOUS,
    S_BEST,
    S_BEST_OK,
    S_BEST_SEPARATE_OK,
    S_BEST_NAMED_OK,
    S_BEST_REPLACE_OK,
    S_BEST_NO_FIT,
    S_BEST_PICKED,
    S_BOOK,
    S_BOOK_OK,
    S_BOOK_CONFLICT,
    S_BOOK_CANCEL_OK,
    S_PAY,
    S_PAY_FAILED,
    S_PAY_REPEAT,
    S_PAY_REPEAT_CHANGED,
    S_PAY_REPEAT_PRUNED,
    S_PAY_INVALID,
    S_PAY_COMMITTED,
    S_PAY_LATE,
    S_PAY_OWN,
    S_PAY_REFUND,
    S_PAY_REASON, /* five counters, one per hf_refund_reason_t */
    S_REFUND_COMPLETE = S_PAY_REASON + 5,
    S_REFUND_COMPLETE_OK,
    S_REFUND_COMPLETE_AGAIN,
    S_WINDOW_JUMP,
    S_EDGE_KEPT,
    S_EDGE_PRUNED,
    S_EXCHANGE,
    S_EXCHANGE_OK,
    S_ALLOCATE,
    S_ALLOCATE_OK,
    S_ALLOCATION_HOLD,
    S_ALLOCATION_HOLD_OK,
    S_ALLOCATION_RELEASE,
    S_ALLOCATION_RELEASE_OK,
    S_WAITLIST_JOIN,
    S_WAITLIST_JOIN_OK,
    S_WAITLIST_EXISTING,
    S_WAITLIST_CANCEL,
    S_WAITLIST_CANCEL_OK,
    S_WAITLIST_OFFER,
    S_WAITLIST_OFFER_REFUSED,
    S_WAITLIST_OFFER_SEPARATE,
    S_WAITLIST_OFFER_POOL,
    S_WAITLIST_FULFILLED,
    S_WAITLIST_LAPSED,
    S_WAITLIST_SETTING,
    S_COUNT
};
static uint64_t stats[S_COUNT];

static void mismatch(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

static void mismatch(const char *format, ...) {
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    fprintf(stderr,
            "\nSIMULATION MISMATCH (%s) seed=%" PRIu64 " step=%" PRIu64 " now=%" PRId64
            " (epoch+%" PRId64 ")\n  operation: %s\n  %s\n  %s\n"
            "  reproduce: HF_SEED=%" PRIu64 " %s=%" PRIu64 " %s\n",
            run_name, seed, step, model.now, model.now - EPOCH, operation, description, text, seed,
            run_variable, step + 1, run_skip);
    fail_msg("simulation mismatch (%s) at seed=%" PRIu64 " step=%" PRIu64 ": %s", run_name, seed,
             step, text);
    abort(); /* not reached */
}

#define GROW(array, count, capacity) \
    do { \
        if ((count) >= (capacity)) { \
            (capacity) = (capacity) ? (capacity)*2 : 256; \
            (array) = realloc((array), (size_t)(capacity) * sizeof *(array)); \
            assert_non_null(array); \
        } \
    } while (0)

static void list_remove(uint32_t *list, uint32_t *count, uint32_t value) {
    for (uint32_t i = 0; i < *count; i++) {
        if (list[i] == value) {
            list[i] = list[--*count];
            return;
        }
    }
    mismatch("model bug: %u not in list", value);
}

static void touch_hold(uint32_t hold) {
    for (uint32_t i = 0; i < model.touched_hold_count; i++)
        if (model.touched_holds[i] == hold) return;
    if (model.touched_hold_count < 64) model.touched_holds[model.touched_hold_count++] = hold;
}

static void seat_change(uint32_t event, uint32_t seat, uint8_t status, uint32_t owner) {
    model_seat_t *s = &model.events[event].seats[seat];
    /* A seat of an allocation coming free goes back to it, or, released meanwhile, leaves it
     * for the public (one ALLOCATION record: the allocation as it now stands). */
    uint32_t *entry = &model.events[event].seat_allocation[seat];
    bool freed = status == HF_SEAT_AVAILABLE && s->status != HF_SEAT_AVAILABLE;
    if (status == HF_SEAT_AVAILABLE && *entry & MODEL_RELEASED) {
        *entry = 0;
        model.expected[HF_MUTATION_ALLOCATION]++;
    } else if (status == HF_SEAT_AVAILABLE && *entry) {
        status = HF_SEAT_ALLOCATED;
    }
    s->status = status;
    s->owner = owner;
    s->version++;
    assert_true(model.change_count < CHANGES_MAX);
    bool deferred = freed && status == HF_SEAT_AVAILABLE &&
                    model.events[event].dirty[1 + s->section];
    model.changes[model.change_count++] = (change_t){event, seat, s->version, status, deferred};
}

/* Inventory of a hold or order comes free (the core's waitlist_came_free, before the seats
 * are set free): while entries wait (a waitlist turned off still offers to those), "any
 * section", each seat's section and each pool are marked for the settle at the end of the
 * command, whatever the seats become (an allocation's go back to it). */
static void model_came_free(uint32_t event, const model_items_t *items) {
    model_event_t *e = &model.events[event];
    if (e->waiting == 0) return;
    if (items->seat_count > 0) e->dirty[0] = e->marked = true;
    for (uint32_t i = 0; i < items->seat_count; i++)
        e->dirty[1 + e->seats[items->seats[i]].section] = true;
    for (uint32_t i = 0; i < items->pool_count; i++)
        e->dirty[1 + e->section_count + items->pools[i]] = e->marked = true;
}

/* sim_waitlist.h: the entries' offers end with their holds, and what came free in this
 * command goes down the line (the core's waitlist_settle); and its comparison. */
static void waitlist_settle_model(void);
static void compare_waitlists(bool full);

/* A hold leaves the held state: its seats and units are free again. */
static void model_hold_finish(uint32_t index, uint8_t status) {
    model_hold_t *h = &model.holds[index];
    model_event_t *event = &model.events[h->event];
    h->status = status;
    list_remove(model.active, &model.active_count, index);
    model_came_free(h->event, &h->items);
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
static uint32_t model_expire(hf_time_ms_t now) {
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
    waitlist_settle_model(); /* hf_core_advance settles what the lapsed holds freed */
    return expired;
}

static uint32_t user_units(uint32_t event, uint32_t user, bool held, bool sold) {
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

static void event_setup(uint32_t e) {
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
    /* A waitlist on three of them; beta's offers outlast its max_hold_ms, as they may. */
    static const int64_t offer_ttl_ms[EVENTS] = {50000, 120000, 15000, 0};
    def->definition.waitlist = (hf_waitlist_setting_t){offer_ttl_ms[e] > 0, offer_ttl_ms[e]};
    event->waitlist = offer_ttl_ms[e] > 0;
    event->offer_ttl_ms = offer_ttl_ms[e];
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
            event->rows[event->row_count++] = (model_row_t){s, event->seat_count,
                                                            section->rows[r].seats};
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

static const char *status_name(uint8_t status) {
    static const char *const names[] = {"held", "confirmed", "released", "expired"};
    return status < 4 ? names[status] : "?";
}

/* A hold's or order's items, in order: named seats, then best_available picks, then pools. */
static void compare_items(const char *id, uint32_t event, const model_items_t *m,
                          uint32_t item_offset) {
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
            mismatch("%s: pool item %u is %u x%u, model %u x%u", id, i, item->index, item->quantity,
                     m->pools[i], m->quantities[i]);
    }
}

static void compare_hold(uint32_t index) {
    const model_hold_t *m = &model.holds[index];
    if (m->forgotten) {
        if (hf_core_hold_find(core, m->id, NULL) != NULL)
            mismatch("hold %s: forgotten but found", m->id);
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

static void compare_order(uint32_t index) {
    const model_order_t *m = &model.orders[index];
    const hf_order_t *c = hf_core_order_at(core, m->core_index);
    if (c == NULL || strcmp(c->id, m->id) != 0) mismatch("order %s: not at its index", m->id);
    if (c->status != m->status)
        mismatch("order %s: status %d, model %d", m->id, c->status, m->status);
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

static const char *reason_name(uint8_t reason) {
    return reason <= HF_REFUND_ALREADY_CONFIRMED ? hf_refund_reason_name(reason) : "?";
}

static void compare_refund(uint32_t index) {
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

static void compare_state(bool full) {
    for (uint32_t e = 0; e < EVENTS; e++) {
        const model_event_t *m = &model.events[e];
        const hf_event_t *c = hf_core_event_at(core, e);
        if (c == NULL || strcmp(c->id, m->id) != 0) mismatch("event %u missing", e);
        hf_counts_t total = {0, 0, 0, 0}, sections[FX_SECTIONS_MAX];
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
            uint32_t *slot[2][4] = {{&total.available, &total.held, &total.sold, &total.allocated},
                                    {&sections[ms->section].available, &sections[ms->section].held,
                                     &sections[ms->section].sold,
                                     &sections[ms->section].allocated}};
            uint32_t entry = m->seat_allocation[s];
            if (hf_core_seat_allocation(core, c, s) != (entry & ~MODEL_RELEASED) ||
                hf_core_seat_allocation_released(core, c, s) != ((entry & MODEL_RELEASED) != 0))
                mismatch("seat %s/%s: allocation %u%s, model %u%s", m->id, ms->id,
                         hf_core_seat_allocation(core, c, s),
                         hf_core_seat_allocation_released(core, c, s) ? " released" : "",
                         entry & ~MODEL_RELEASED, entry & MODEL_RELEASED ? " released" : "");
            (*slot[0][ms->status])++;
            (*slot[1][ms->status])++;
        }
        if (c->row_count != m->row_count)
            mismatch("event %s: %u rows, model %u", m->id, c->row_count, m->row_count);
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
                         " %" PRId64,
                         m->id, mp->id, cp->held, cp->sold, mp->held, mp->sold);
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
                     ? model.now - model.deliveries[model.delivery_first].at
                     : -1);
    compare_waitlists(full);
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
            if (expected != count)
                mismatch("user %s: %u orders, model %u", user_ids[u], count, expected);
        }
    }
}

/* The mutation records of one operation against the model's changes. */
static void compare_mutations(void) {
    /* Seats moved from a replaced hold to the new one: see what the core did. */
    for (uint32_t i = 0; i < model.moved_count; i++) {
        model_seat_t *ms = &model.events[model.moved_event].seats[model.moved_seats[i]];
        const hf_seat_t *cs =
            &hf_core_event_at(core, model.moved_event)->seats[model.moved_seats[i]];
        if (cs->version == ms->version + 2) {
            uint32_t owner = ms->owner;
            seat_change(model.moved_event, model.moved_seats[i], HF_SEAT_AVAILABLE, 0);
            model.changes[model.change_count - 1].deferred = model.moved_deferred[i];
            seat_change(model.moved_event, model.moved_seats[i], HF_SEAT_HELD, owner);
            stats[S_MOVED]++;
        } else if (cs->version != ms->version) {
            mismatch("seat %s moved by replace_existing: version %u, expected %u or %u", ms->id,
                     cs->version, ms->version, ms->version + 2);
        }
    }
    /* A release deferred by the waitlist (sim_waitlist.h tells those its settle leaves
     * available): the seats a replacing hold took again are told held only. */
    for (uint32_t c = 0; c < model.change_count;) {
        const change_t *change = &model.changes[c];
        const model_seat_t *seat = &model.events[change->event].seats[change->seat];
        if (change->deferred &&
            (seat->status != HF_SEAT_AVAILABLE || seat->version != change->version))
            model.changes[c] = model.changes[--model.change_count];
        else c++;
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
                /* An exchange hold is made and committed in one operation (sim_exchange.h), as
                 * is an offer the advance before the operation made (sim_waitlist.h). */
                bool exchanged = record->type == HF_MUTATION_HOLD_CREATE &&
                                 record->status == HF_HOLD_HELD && h->status != HF_HOLD_HELD &&
                                 (strcmp(operation, "exchange") == 0 ||
                                  strncmp(h->id, "res_wl", 6) == 0);
                if (record->status != h->status && !expired_then_paid && !exchanged)
                    mismatch("%s record of %s: status %s, model %s",
                             record->type == HF_MUTATION_HOLD_CREATE ? "HOLD_CREATE"
                                                                     : "HOLD_UPDATE",
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
        if (pool == NULL)
            mismatch("POOL record of unknown pool %s/%s", record->event_id, record->pool_id);
        if (record->held != pool->held || record->sold != pool->sold ||
            record->available != pool->capacity - pool->held - pool->sold)
            mismatch("POOL record %s/%s: available %" PRId64 " held %" PRId64 " sold %" PRId64
                     ", model held %" PRId64 " sold %" PRId64,
                     record->event_id, record->pool_id, record->available, record->held,
                     record->sold, pool->held, pool->sold);
    }
    if (by_type[HF_MUTATION_SEAT] != model.change_count)
        mismatch("%u SEAT records, model %u changes", by_type[HF_MUTATION_SEAT],
                 model.change_count);
    static const int types[] = {
        HF_MUTATION_EVENT_CREATE, HF_MUTATION_HOLD_CREATE, HF_MUTATION_HOLD_UPDATE,
        HF_MUTATION_ORDER_CREATE, HF_MUTATION_ORDER_ITEM,  HF_MUTATION_ORDER_UPDATE,
        HF_MUTATION_IDEMPOTENCY,  HF_MUTATION_POOL,        HF_MUTATION_DELIVERY,
        HF_MUTATION_REFUND,       HF_MUTATION_ALLOCATION,  HF_MUTATION_WAITLIST};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint32_t got = by_type[types[i]], want = model.expected[types[i]];
        if (types[i] == HF_MUTATION_HOLD_UPDATE && model.extend_unchanged && got == want + 1)
            continue;
        if (got != want) mismatch("%u records of type %d, model %u", got, types[i], want);
    }
}

/* ---- operations ---- */

static void begin(const char *name) {
    operation = name;
    description[0] = '\0';
    model.change_count = 0;
    model.touched_hold_count = 0;
    model.moved_count = 0;
    model.touched_entry_count = 0;
    model.extend_unchanged = 0;
    memset(model.expected, 0, sizeof model.expected);
    model.operation_changes = hf_core_change_count(core);
    stream_records = rng_below(4) != 0;
    hf_core_set_stream_records(core, stream_records);
    fx_sink_reset(&sink);
}

static bool error_in(hf_error_t error, uint32_t set) {
    return error != HF_OK && (set & (1u << error)) != 0;
}

static void describe_set(char *out, size_t size, uint32_t set) {
    size_t used = 0;
    out[0] = '\0';
    if (set == 0) snprintf(out, size, "ok");
    for (int e = 1; e <= ERROR_LAST; e++)
        if (set & (1u << e))
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "|" : "",
                                     fx_error_code((hf_error_t)e));
}

static void expect_result(hf_error_t got, uint32_t set) {
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
    "FLOOR-A-0", "FLOOR-A-9", "FLOOR-D-1",  "NOPE-A-1", "FLOOR-A-01", "FLOOR-A-", "FLOOR--1",
    "S-C-1",     "T.2-A-4",   "FLOOR-A-1x", "",         "BALC-A-",    "S-A-08",
};

#endif
