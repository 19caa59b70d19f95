/* The simulation's calendars (included by test_simulation.c, which owns the PRNG and the seed;
 * test_calendar_simulation). */
#ifndef HF_TESTS_SIM_CALENDARS_H
#define HF_TESTS_SIM_CALENDARS_H

/* ---- calendars (core/calendar/) against per-step counts ----
 *
 * One minute calendar of a few resources (random capacities, some with buffers) on a 15-minute
 * grid, and random holds of one to three items, bookings, commits, releases, extensions,
 * cancels and time passing (expiring holds, and letting ended uses leave memory). The model
 * keeps every use in a plain list and each resource's taken quantity per minute of a window in
 * a plain array; it decides each hold by the rules of API.md section 12 (the span's own checks,
 * overlapping items, capacity with buffers, the user limit) and the calendar_core must answer the same.
 * After every operation the taken quantity of every resource at every step of the window, as
 * the calendar_core's index says, equals the array, and hf_core_check passes. */

#define CM_RESOURCES 4
#define CM_USES_MAX 4096
#define CM_WINDOW_MIN (16 * 1440) /* minutes the counts cover, from the run's start */
#define CM_GRID 15
#define CM_USERS 6
#define CM_LIMIT 6 /* max_uses_per_user */

typedef struct cm_use {
    uint32_t resource, quantity;
    int32_t from, to;
    uint32_t owner; /* the hold or order it belongs to: index into cm.owners */
} cm_use_t;

typedef struct cm_owner {
    char hold_id[24], order_id[24];
    uint32_t user;
    uint8_t status; /* 0 held, 1 confirmed, 2 gone (released, expired, cancelled) */
    bool order;     /* an order (booked, or committed) */
    int64_t expires_at;
    int64_t created_at;
    uint32_t first, count; /* its uses in cm.uses */
} cm_owner_t;

typedef struct calendar_model {
    hf_resource_definition_t resources[CM_RESOURCES];
    cm_use_t uses[CM_USES_MAX];
    uint32_t use_count;
    cm_owner_t owners[CM_USES_MAX];
    uint32_t owner_count;
    int32_t start; /* the window's first minute */
    int64_t now;
    /* Per resource and minute of the window: the quantity its live uses take, as asked and
     * widened by the resource's buffers. */
    int32_t raw[CM_RESOURCES][CM_WINDOW_MIN], wide[CM_RESOURCES][CM_WINDOW_MIN];
} calendar_model_t;

static calendar_model_t cm;

/* Adds (sign 1) or takes out (-1) the owner's uses in the counts. */
static void cm_count(uint32_t o, int sign) {
    for (uint32_t u = cm.owners[o].first; u < cm.owners[o].first + cm.owners[o].count; u++) {
        const cm_use_t *use = &cm.uses[u];
        const hf_resource_definition_t *r = &cm.resources[use->resource];
        for (int64_t x = use->from - r->buffer_before_min; x < use->to + r->buffer_after_min; x++) {
            int64_t at = x - cm.start;
            if (at < 0 || at >= CM_WINDOW_MIN) mismatch("a use outside the model's window");
            cm.wide[use->resource][at] += sign * (int32_t)use->quantity;
            if (x >= use->from && x < use->to)
                cm.raw[use->resource][at] += sign * (int32_t)use->quantity;
        }
    }
}

/* The owner's uses no longer take anything (released, expired, cancelled, replaced). */
static void cm_gone(uint32_t o) {
    if (cm.owners[o].status >= 2) return;
    cm.owners[o].status = 2;
    cm_count(o, -1);
}

static int64_t cm_taken(uint32_t r, int64_t x, bool wide) {
    int64_t at = x - cm.start;
    if (at < 0 || at >= CM_WINDOW_MIN) return 0;
    return wide ? cm.wide[r][at] : cm.raw[r][at];
}

static bool cm_fits(uint32_t r, int32_t from, int32_t to, uint32_t quantity) {
    int64_t before = cm.resources[r].buffer_before_min, after = cm.resources[r].buffer_after_min;
    for (int64_t x = from - before; x < to + after; x++)
        if (cm_taken(r, x, true) + quantity > cm.resources[r].capacity) return false;
    return true;
}

/* The user's held and confirmed quantities whose span has not ended. */
static int64_t cm_user_current(uint32_t user, bool held_too) {
    int64_t now_step = cm.now / 60000, current = 0;
    for (uint32_t u = 0; u < cm.use_count; u++) {
        const cm_owner_t *owner = &cm.owners[cm.uses[u].owner];
        if (owner->user != user || owner->status >= 2 || cm.uses[u].to <= now_step) continue;
        if (owner->status == 0 && !held_too) continue;
        current += cm.uses[u].quantity;
    }
    return current;
}

typedef struct cm_item {
    uint32_t resource, quantity;
    int32_t from, to;
} cm_item_t;

/* What the model says a hold (or booking) of these items answers. */
static hf_error_t cm_decide(const cm_item_t *items, uint32_t count, uint32_t user, bool replace) {
    int64_t earliest = cm.now / 60000 / CM_GRID * CM_GRID;
    for (uint32_t i = 0; i < count; i++) {
        const hf_resource_definition_t *r = &cm.resources[items[i].resource];
        int32_t length = items[i].to - items[i].from;
        if (items[i].from < earliest || length < r->min_length || length > r->max_length ||
            items[i].quantity > r->capacity)
            return HF_ERROR_INVALID_REQUEST;
        for (uint32_t j = 0; j < i; j++)
            if (items[j].resource == items[i].resource &&
                items[i].from - r->buffer_before_min < items[j].to + r->buffer_after_min &&
                items[j].from - r->buffer_before_min < items[i].to + r->buffer_after_min)
                return HF_ERROR_INVALID_REQUEST;
    }
    /* replace_existing: the user's held holds count as free (taken out for the check). */
    bool out[CM_USES_MAX] = {false};
    for (uint32_t o = 0; o < cm.owner_count; o++)
        if (replace && cm.owners[o].user == user && cm.owners[o].status == 0) {
            out[o] = true;
            cm.owners[o].status = 3;
            cm_count(o, -1);
        }
    hf_error_t answer = HF_OK;
    for (uint32_t i = 0; i < count && !answer; i++)
        if (!cm_fits(items[i].resource, items[i].from, items[i].to, items[i].quantity))
            answer = HF_ERROR_RANGE_UNAVAILABLE;
    int64_t asked = 0;
    for (uint32_t i = 0; i < count; i++) asked += items[i].quantity;
    if (!answer && cm_user_current(user, true) + asked > CM_LIMIT)
        answer = HF_ERROR_USER_LIMIT_EXCEEDED;
    for (uint32_t o = 0; o < cm.owner_count; o++)
        if (out[o]) {
            cm.owners[o].status = 0;
            cm_count(o, 1);
        }
    return answer;
}

static void cm_draw_items(cm_item_t *items, uint32_t count) {
    int64_t now_min = cm.now / 60000;
    for (uint32_t i = 0; i < count; i++) {
        items[i].resource = rng_below(CM_RESOURCES);
        /* Mostly ahead, sometimes just behind now (the past is refused). */
        int64_t from = (now_min / CM_GRID + (int64_t)rng_below(40) - 2) * CM_GRID;
        int64_t to = from + CM_GRID * (1 + rng_below(6));
        items[i].from = (int32_t)from;
        items[i].to = (int32_t)to;
        items[i].quantity = 1 + rng_below(3);
    }
}

static void cm_take(const cm_item_t *items, uint32_t count, uint32_t owner) {
    cm.owners[owner].first = cm.use_count;
    cm.owners[owner].count = count;
    for (uint32_t i = 0; i < count; i++)
        cm.uses[cm.use_count++] = (cm_use_t){items[i].resource, items[i].quantity, items[i].from,
                                             items[i].to, owner};
    cm_count(owner, 1);
}

static void cm_hold(hf_core_t *calendar_core, bool booking) {
    cm_item_t items[3];
    uint32_t count = 1 + rng_below(3), user = rng_below(CM_USERS);
    if (cm.use_count + count > CM_USES_MAX || cm.owner_count == CM_USES_MAX) return;
    cm_draw_items(items, count);
    bool replace = !booking && rng_below(5) == 0;
    char user_id[8];
    snprintf(user_id, sizeof user_id, "u%u", user);
    hf_calendar_item_request_t requests[3];
    const char *names[CM_RESOURCES] = {"r0", "r1", "r2", "r3"};
    for (uint32_t i = 0; i < count; i++)
        requests[i] = (hf_calendar_item_request_t){names[items[i].resource], items[i].quantity,
                                                   items[i].from, items[i].to};
    cm_owner_t *owner = &cm.owners[cm.owner_count];
    memset(owner, 0, sizeof *owner);
    snprintf(owner->hold_id, sizeof owner->hold_id, "res_c%u", cm.owner_count);
    snprintf(owner->order_id, sizeof owner->order_id, "ord_c%u", cm.owner_count);
    hf_calendar_hold_request_t request = {.calendar_id = "cal",
                                          .user_id = user_id,
                                          .hold_id = owner->hold_id,
                                          .items = requests,
                                          .item_count = count,
                                          .ttl_ms = -1,
                                          .replace_existing = replace};
    hf_error_t expected = cm_decide(items, count, user, replace);
    uint32_t index;
    hf_error_t got = booking ? hf_core_calendar_book(calendar_core, &request, owner->order_id, NULL,
                                                     cm.now, &index, NULL)
                             : hf_core_calendar_hold(calendar_core, &request, cm.now, &index, NULL);
    if (got != expected)
        mismatch("calendar %s: calendar_core %s, model %s", booking ? "booking" : "hold",
                 fx_error_code(got), fx_error_code(expected));
    if (got != HF_OK) return;
    if (replace)
        for (uint32_t o = 0; o < cm.owner_count; o++)
            if (cm.owners[o].user == user && cm.owners[o].status == 0) cm_gone(o);
    owner->user = user;
    owner->order = booking;
    owner->status = booking ? 1 : 0;
    owner->created_at = cm.now;
    owner->expires_at = cm.now + 600000;
    cm_take(items, count, cm.owner_count++);
}

/* A random owner's next step: commit, release or extend a held hold; cancel an order. */
static void cm_change(hf_core_t *calendar_core) {
    if (cm.owner_count == 0) return;
    uint32_t o = rng_below(cm.owner_count);
    cm_owner_t *owner = &cm.owners[o];
    char user_id[8];
    snprintf(user_id, sizeof user_id, "u%u", owner->user);
    uint32_t order;
    bool capped;
    if (owner->status == 1) {
        if (hf_core_cancel(calendar_core, owner->order_id, user_id, "ref_c", cm.now) != HF_OK)
            mismatch("calendar cancel refused");
        cm_gone(o);
    } else if (owner->status == 0 && rng_below(3) == 0) {
        if (hf_core_commit(calendar_core, owner->hold_id, user_id, owner->order_id, NULL, cm.now,
                           &order))
            mismatch("calendar commit refused");
        owner->status = 1;
        owner->order = true;
    } else if (owner->status == 0 && rng_below(2) == 0) {
        if (hf_core_release(calendar_core, owner->hold_id, user_id, cm.now))
            mismatch("release refused");
        cm_gone(o);
    } else if (owner->status == 0) {
        if (hf_core_extend(calendar_core, owner->hold_id, user_id, 600000, cm.now, &capped))
            mismatch("calendar extend refused");
        int64_t wanted = cm.now + 600000, cap = owner->created_at + 1800000;
        int64_t expires = wanted < cap ? wanted : cap;
        if (expires > owner->expires_at) owner->expires_at = expires;
    }
}

static void cm_advance(hf_core_t *calendar_core, int64_t ms) {
    cm.now += ms;
    for (uint32_t o = 0; o < cm.owner_count; o++)
        if (cm.owners[o].status == 0 && cm.owners[o].expires_at <= cm.now) cm_gone(o);
    hf_core_advance(calendar_core, cm.now);
}

static void cm_compare(hf_core_t *calendar_core) {
    const hf_calendar_t *calendar = hf_core_calendar(calendar_core, "cal", NULL);
    /* Uses whose span ended may leave the index: compare from now's grid step back a margin
     * no new use reaches (the buffers), as the contract promises. */
    int64_t from = cm.now / 60000 / CM_GRID * CM_GRID;
    int64_t end = from + 16 * 60 < cm.start + CM_WINDOW_MIN ? from + 16 * 60
                                                            : cm.start + CM_WINDOW_MIN;
    for (uint32_t r = 0; r < CM_RESOURCES; r++)
        for (int64_t x = from; x < end; x++)
            if (hf_core_resource_taken(calendar, r, (int32_t)x, (int32_t)x + 1) !=
                cm_taken(r, x, false))
                mismatch("calendar taken of r%u at %" PRId64 ": calendar_core %" PRId64
                         ", model %" PRId64,
                         r, x, hf_core_resource_taken(calendar, r, (int32_t)x, (int32_t)x + 1),
                         cm_taken(r, x, false));
    const char *fault = hf_core_check(calendar_core, cm.now);
    if (fault) mismatch("calendar check: %s", fault);
}

static void cm_setup(hf_core_t *calendar_core, int64_t start_ms) {
    memset(&cm, 0, sizeof cm);
    cm.now = start_ms;
    cm.start = (int32_t)(start_ms / 60000) - 60; /* room for buffers before the first use */
    for (uint32_t r = 0; r < CM_RESOURCES; r++) {
        hf_resource_definition_t *resource = &cm.resources[r];
        snprintf(resource->id, sizeof resource->id, "r%u", r);
        resource->capacity = 1 + rng_below(3);
        resource->price = 10;
        resource->min_length = CM_GRID;
        resource->max_length = 4 * CM_GRID;
        resource->buffer_before_min = rng_below(2) ? 5 : 0;
        resource->buffer_after_min = rng_below(2) ? 10 : 0;
    }
    hf_calendar_definition_t definition = {.unit = HF_CALENDAR_MINUTE,
                                           .granularity_min = CM_GRID,
                                           .hold_ttl_ms = 600000,
                                           .max_hold_ms = 1800000,
                                           .horizon_days = 30,
                                           .max_items_per_hold = 3,
                                           .max_uses_per_user = CM_LIMIT,
                                           .resource_count = CM_RESOURCES,
                                           .resources = cm.resources};
    strcpy(definition.id, "cal");
    strcpy(definition.currency, "EUR");
    hf_core_advance(calendar_core, cm.now);
    if (hf_core_calendar_create(calendar_core, &definition, cm.now, NULL))
        mismatch("calendar create");
}

static void test_calendar_simulation(void **state) {
    (void)state;
    uint64_t operations = env_number("HF_SIM_CALENDAR_OPERATIONS", 5000);
    rng_state = seed ^ UINT64_C(0xCA1E4DA5);
    fx_sink_t calendar_sink;
    hf_core_t *calendar_core = fx_core_create(&calendar_sink, 0);
    cm_setup(calendar_core, 1796083200000LL + 8 * 3600 * 1000);
    for (uint64_t i = 0; i < operations; i++) {
        uint32_t kind = rng_below(10);
        if (kind < 4) cm_hold(calendar_core, false);
        else if (kind < 5) cm_hold(calendar_core, true);
        else if (kind < 8) cm_change(calendar_core);
        else cm_advance(calendar_core, 60000 * (1 + rng_below(20)));
        cm_compare(calendar_core);
    }
    fx_core_destroy(calendar_core, &calendar_sink);
}

#endif
