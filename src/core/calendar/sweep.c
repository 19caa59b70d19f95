/* Uses whose span has ended leave memory (API.md section 12: memory follows what can still
 * conflict, not the past), and hf_core_check's part for calendars.
 *
 * An item of a confirmed order leaves the span index once nothing new can touch its span
 * widened by its buffers: a new use starts at earliest_start or later, and reaches back
 * buffer_before from there. Leaving then changes no answer about a present or future step: a
 * use that ended adds its quantity at from and takes it back at to, so the sums past to do
 * not move. Each confirmed order has one entry of the shared timer (HF_TIMER_CALENDAR_SWEEP)
 * at its next item's time; the entry's passing drops what ended and schedules the next. Held
 * holds give their spans back when they end, by their expiry at the latest. */
#include "core/calendar/internal.h"

#include <stdlib.h>
#include <string.h>

/* The time (ms) from which the item can leave the index. */
static int64_t item_sweep_time(const hf_calendar_t *calendar, const hf_calendar_item_t *item) {
    const hf_resource_definition_t *resource = &calendar->definition.resources[item->resource];
    if (calendar->definition.unit == HF_CALENDAR_NIGHT)
        return ((int64_t)item->to + 1) * MS_PER_DAY; /* yesterday no longer reaches it */
    int64_t grid = calendar->definition.granularity_min;
    int64_t reach = (int64_t)item->to + resource->buffer_after_min + resource->buffer_before_min;
    int64_t aligned = (reach + grid - 1) / grid * grid;
    return aligned * MS_PER_MINUTE;
}

int64_t order_sweep_deadline(const hf_core_t *core, uint32_t order_index) {
    const hf_order_t *order = &core->orders.slots[order_index];
    const hf_calendar_t *calendar = core->calendars->slots[order->event];
    int64_t earliest = INT64_MAX;
    for (uint32_t i = 0; i < order->pool_count; i++) {
        if (!core->calendars->live[order->item_offset + i]) continue;
        int64_t time = item_sweep_time(calendar, &core->calendars->items[order->item_offset + i]);
        if (time < earliest) earliest = time;
    }
    return earliest;
}

void calendar_sweep_schedule(hf_core_t *core, uint32_t order_index) {
    int64_t deadline = order_sweep_deadline(core, order_index);
    if (deadline != INT64_MAX)
        hf_timer_push(&core->timer, deadline, HF_TIMER_CALENDAR_SWEEP, order_index);
}

/* An entry earlier than its order's next item's time was left behind (the order's entry is
 * the one at that time); a later one is a postponed sweep, still due. */
bool calendar_sweep_stale(const hf_core_t *core, const hf_timer_entry_t *entry) {
    const hf_order_t *order = &core->orders.slots[entry->index];
    if (order->status != HF_ORDER_CONFIRMED) return true;
    int64_t deadline = order_sweep_deadline(core, entry->index);
    return deadline == INT64_MAX || entry->deadline_ms < deadline;
}

/* The entry's order: its items whose time has come leave the index (no record: nothing any
 * client can see changes), and the next one is scheduled; past the millisecond's budget the
 * order waits for the next millisecond. */
void calendar_sweep_due(hf_core_t *core, const hf_timer_entry_t *entry, int64_t now) {
    const hf_order_t *order = &core->orders.slots[entry->index];
    hf_calendar_t *calendar = core->calendars->slots[order->event];
    calendars_t *calendars = core->calendars;
    if (calendars->sweep_at != now) {
        calendars->sweep_at = now;
        calendars->sweep_done = 0;
    }
    if (calendars->sweep_done >= HF_CALENDAR_SWEEP_PER_ADVANCE) {
        hf_timer_push(&core->timer, now + 1, HF_TIMER_CALENDAR_SWEEP, entry->index);
        return;
    }
    for (uint32_t i = 0; i < order->pool_count; i++) {
        uint32_t item = order->item_offset + i;
        if (!calendars->live[item] || item_sweep_time(calendar, &calendars->items[item]) > now)
            continue;
        use_apply(calendar, &calendars->items[item], -1);
        calendars->live[item] = 0;
        calendars->uses_live--;
        tables_of(calendar)->uses_live--;
        calendars->sweep_done++;
    }
    calendar_sweep_schedule(core, entry->index);
}

/* A restored confirmed order: only its items that can still conflict enter the index. */
void calendar_order_restore(hf_core_t *core, uint32_t order_index) {
    hf_order_t *order = &core->orders.slots[order_index];
    hf_calendar_t *calendar = core->calendars->slots[order->event];
    calendars_t *calendars = core->calendars;
    order->owner = event_user_intern(core, calendar_owner_unit(order->event), order->user);
    for (uint32_t i = 0; i < order->pool_count; i++) {
        uint32_t item = order->item_offset + i;
        if (item_sweep_time(calendar, &calendars->items[item]) <= core->now) continue;
        use_apply(calendar, &calendars->items[item], 1);
        calendars->live[item] = 1;
        calendars->uses_live++;
        tables_of(calendar)->uses_live++;
    }
    calendar->orders++;
    calendar_sweep_schedule(core, order_index);
}

/* ---- hf_core_check's part ---- */

/* One breakpoint as the uses say it should be. */
typedef struct expected_point {
    uint32_t resource;
    int32_t key;
    int64_t delta;
} expected_point_t;

/* The digit of a point's place in the order (resource, then key) that pass sorts on: 16 bits
 * of the key's two halves (its sign flipped, so negative keys come first), then of the
 * resource's. */
static uint32_t point_digit(const expected_point_t *point, int pass) {
    uint32_t key = (uint32_t)point->key ^ 0x80000000u;
    uint32_t word = pass < 2 ? key : point->resource;
    return (word >> (16 * (pass % 2))) & 0xffffu;
}

/* Points sorted by (resource, key): a radix sort of four stable passes, as a restore checks
 * millions of them (qsort's calls were most of the check). */
static void points_sort(expected_point_t *points, uint32_t count) {
    expected_point_t *spare = malloc((size_t)count * sizeof *spare);
    uint32_t *starts = malloc(65536 * sizeof *starts);
    if (!spare || !starts) abort();
    expected_point_t *from = points, *to = spare;
    for (int pass = 0; pass < 4; pass++) {
        memset(starts, 0, 65536 * sizeof *starts);
        for (uint32_t i = 0; i < count; i++) starts[point_digit(&from[i], pass)]++;
        uint32_t total = 0;
        for (uint32_t d = 0; d < 65536; d++) {
            uint32_t here = starts[d];
            starts[d] = total;
            total += here;
        }
        for (uint32_t i = 0; i < count; i++) to[starts[point_digit(&from[i], pass)]++] = from[i];
        expected_point_t *swap = from;
        from = to;
        to = swap;
    }
    free(spare); /* four passes: the sorted points are back in points */
    free(starts);
}

typedef struct expected {
    expected_point_t *points;
    uint32_t count, capacity;
    uint64_t live;
} expected_t;

static void expect_items(const hf_core_t *core, const hf_calendar_t *calendar, uint32_t offset,
                         uint32_t count, bool wide, expected_t *expected) {
    for (uint32_t i = 0; i < count; i++) {
        if (!core->calendars->live[offset + i]) continue;
        const hf_calendar_item_t *item = &core->calendars->items[offset + i];
        const hf_resource_definition_t *resource = &calendar->definition.resources[item->resource];
        if (wide && !resource_buffered(resource)) continue; /* it has no widened tree */
        int64_t from = item->from, to = item->to;
        if (wide) widened(resource, item->from, item->to, &from, &to);
        expected->points = grow(expected->points, &expected->capacity, expected->count + 2,
                                sizeof *expected->points);
        expected->points[expected->count++] = (expected_point_t){item->resource, (int32_t)from,
                                                                 item->quantity};
        expected->points[expected->count++] = (expected_point_t){item->resource, (int32_t)to,
                                                                 -(int64_t)item->quantity};
        if (!wide) expected->live++;
    }
}

/* The breakpoints the calendar's live uses make, sorted and merged per key. */
static void expect_calendar(const hf_core_t *core, uint32_t calendar_index, bool wide,
                            expected_t *expected) {
    const hf_calendar_t *calendar = core->calendars->slots[calendar_index];
    const calendar_tables_t *tables = tables_of(calendar);
    for (uint32_t i = 0; i < tables->held.count; i++) {
        const hf_hold_t *hold = &core->holds.slots[tables->held.items[i]];
        expect_items(core, calendar, hold->item_offset, hold->pool_count, wide, expected);
    }
    for (uint32_t i = 0; i < tables->orders.count; i++) {
        const hf_order_t *order = &core->orders.slots[tables->orders.items[i]];
        if (order->status == HF_ORDER_CONFIRMED)
            expect_items(core, calendar, order->item_offset, order->pool_count, wide, expected);
    }
    if (expected->count) points_sort(expected->points, expected->count);
    uint32_t merged = 0;
    for (uint32_t i = 0; i < expected->count; i++) {
        expected_point_t point = expected->points[i];
        if (merged && expected->points[merged - 1].resource == point.resource &&
            expected->points[merged - 1].key == point.key)
            expected->points[merged - 1].delta += point.delta;
        else expected->points[merged++] = point;
        if (expected->points[merged - 1].delta == 0 &&
            (i + 1 == expected->count || expected->points[i + 1].resource != point.resource ||
             expected->points[i + 1].key != point.key))
            merged--;
    }
    expected->count = merged;
}

typedef struct compare_walk {
    const expected_point_t *next, *end;
    int64_t quantity; /* the expected sum so far */
    bool equal;
} compare_walk_t;

static bool compare_visit(void *context, int32_t key, int64_t quantity) {
    compare_walk_t *walk = context;
    if (walk->next == walk->end || walk->next->key != key) {
        walk->equal = false;
        return false;
    }
    walk->quantity += walk->next->delta;
    walk->next++;
    if (walk->quantity != quantity) walk->equal = false;
    return walk->equal;
}

/* The resource's tree against its expected points (from *next on, consumed); its capacity
 * against the most taken. */
static const char *resource_check(const calendar_tables_t *tables, const hf_calendar_t *calendar,
                                  uint32_t r, bool wide, const expected_t *expected, uint32_t *next,
                                  uint32_t *nodes, bool exchanging) {
    const resource_spans_t *spans = &tables->spans[r];
    uint32_t root = wide ? spans->wide_root : spans->root;
    const char *fault = span_check(&tables->pool, root, nodes);
    if (fault) return fault;
    uint32_t first = *next;
    while (*next < expected->count && expected->points[*next].resource == r) (*next)++;
    /* No points at all (a calendar without uses) leaves points NULL: NULL + 0 is undefined. */
    const expected_point_t *points = expected->points ? expected->points : NULL;
    compare_walk_t walk = {points ? points + first : NULL, points ? points + *next : NULL, 0, true};
    span_walk(&tables->pool, root, INT64_MIN, INT64_MAX, 0, compare_visit, &walk);
    if (!walk.equal || walk.next != walk.end) return "calendar: a span index differs from its uses";
    bool conflicts = wide || !resource_buffered(&calendar->definition.resources[r]);
    if (conflicts && root && !exchanging &&
        tables->pool.nodes[root].max_prefix > calendar->definition.resources[r].capacity)
        return "calendar: a resource is over its capacity at some instant";
    return NULL;
}

static const char *calendar_check_one(const hf_core_t *core, uint32_t c, expected_t *expected,
                                      uint64_t *live) {
    const hf_calendar_t *calendar = core->calendars->slots[c];
    const calendar_tables_t *tables = tables_of(calendar);
    uint32_t nodes = 0;
    /* A held exchange hold on the calendar of its old order takes its spans beside the old
     * order's (exchange/): the index may then pass the capacity where they overlap, until
     * the commit gives the old order's back or the hold ends. */
    bool exchanging = false;
    for (uint32_t i = 0; i < tables->held.count; i++) {
        const hf_hold_t *hold = &core->holds.slots[tables->held.items[i]];
        if (exchange_old_order(core, hold)) exchanging = true;
    }
    for (int pass = 0; pass < 2; pass++) {
        bool wide = pass == 1;
        expected->count = 0;
        if (!wide) expected->live = 0;
        expect_calendar(core, c, wide, expected);
        uint32_t next = 0;
        for (uint32_t r = 0; r < calendar->definition.resource_count; r++) {
            if (wide && !resource_buffered(&calendar->definition.resources[r])) continue;
            const char *fault = resource_check(tables, calendar, r, wide, expected, &next, &nodes,
                                               exchanging);
            if (fault) return fault;
        }
    }
    if (nodes != tables->pool.live) return "calendar: span nodes outside every tree";
    if (expected->live != tables->uses_live) return "calendar: live uses miscounted";
    if (tables->held.count != calendar->holds_active) return "calendar: held holds miscounted";
    *live += expected->live;
    return NULL;
}

const char *calendars_check(const hf_core_t *core) {
    if (!core->calendars) return NULL;
    expected_t expected = {NULL, 0, 0, 0};
    uint64_t live = 0;
    const char *fault = NULL;
    for (uint32_t c = 0; c < core->calendars->count && !fault; c++)
        fault = calendar_check_one(core, c, &expected, &live);
    free(expected.points);
    if (!fault && live != core->calendars->uses_live) fault = "calendar: live uses miscounted";
    return fault;
}
