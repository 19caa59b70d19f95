/* Private to src/core/calendar/: the state of calendars (one member of struct hf_core, made at
 * the first calendar, by pointer as dispatch's) and what the folder's files offer each other:
 *   calendar.c  calendars and resources made, sales, lookups, restore of definitions
 *   span.c      the span index: per resource, a treap of breakpoints (span.h)
 *   request.c   the checks of a hold or booking request: resources, spans, overlaps, the
 *               index's conflicts, the per-user limit
 *   use.c       holds and bookings made, their spans taken and given back, commit and
 *               cancel, payments, restore and revive of holds and orders
 *   query.c     availability: taken, segments, fits, slots
 *   restore.c   calendar holds and orders loaded back from the store, forgotten holds revived
 *   sweep.c     uses whose span ended leave the index; hf_core_check's part */
#ifndef HF_CORE_CALENDAR_INTERNAL_H
#define HF_CORE_CALENDAR_INTERNAL_H

#include "core/calendar/span.h"
#include "core/internal.h"

/* Steps per day, by unit: a night calendar counts days, a minute calendar minutes. */
#define MINUTES_PER_DAY 1440
#define MS_PER_MINUTE 60000LL
#define MS_PER_DAY 86400000LL

/* The span indexes of one resource: its uses as asked (availability), and, for a resource with
 * buffers, its uses widened by them (conflicts). Without buffers both are the same tree. */
typedef struct resource_spans {
    uint32_t root, wide_root;
} resource_spans_t;

/* A calendar's private tables (hf_calendar_t.internal). */
typedef struct calendar_tables {
    hf_resource_definition_t *resources; /* the definition's array, grown by appends */
    uint32_t resource_capacity;
    resource_spans_t *spans; /* one per resource */
    hf_map_t resource_ids;   /* a resource's id -> its index */
    span_pool_t pool;        /* the nodes of every tree of the calendar */
    index_list_t orders;     /* every order, oldest first */
    index_list_t held;       /* held holds, in no particular order */
    uint64_t uses_live;      /* items whose breakpoints are in the index */
} calendar_tables_t;

typedef struct calendars {
    hf_calendar_t **slots;
    uint32_t count, capacity;
    hf_map_t ids;
    /* The items of calendar holds and orders (hold->item_offset, order->item_offset), and per
     * item whether its breakpoints have left the index (given back, or its span ended). */
    hf_calendar_item_t *items;
    uint8_t *live;
    uint32_t item_count, item_capacity, live_capacity;
    /* Per hold index: its place in its calendar's list of held holds. */
    uint32_t *held_place;
    uint32_t held_place_capacity;
    uint64_t uses_live;
    /* Ended items taken out of the index at sweep_at (HF_CALENDAR_SWEEP_PER_ADVANCE). */
    int64_t sweep_at;
    uint32_t sweep_done;
    /* The old order of the exchange hold being checked when it is on the same calendar
     * (order index + 1, else 0): its uses count as given back for the user's limit. */
    uint32_t exchange_order;
    /* The items of the request being checked, resolved. */
    hf_calendar_item_t scratch[HF_CALENDAR_HOLD_ITEMS_MAX];
} calendars_t;

static inline calendar_tables_t *tables_of(const hf_calendar_t *calendar) {
    return calendar->internal;
}

static inline hf_calendar_t *calendar_slot(const hf_core_t *core, uint32_t index) {
    return core->calendars->slots[index];
}

/* The step of now: today's date for a night calendar, the minute for a minute one. */
static inline int64_t step_of_now(const hf_calendar_t *calendar, int64_t now) {
    int64_t unit_ms = calendar->definition.unit == HF_CALENDAR_NIGHT ? MS_PER_DAY : MS_PER_MINUTE;
    return now >= 0 ? now / unit_ms : -((-now + unit_ms - 1) / unit_ms);
}

/* The earliest step a new use may start at: yesterday's date (every time zone's today), or
 * now's step of the grid. */
static inline int64_t earliest_start(const hf_calendar_t *calendar, int64_t now) {
    int64_t step = step_of_now(calendar, now);
    if (calendar->definition.unit == HF_CALENDAR_NIGHT) return step - 1;
    int64_t grid = calendar->definition.granularity_min;
    return step - ((step % grid) + grid) % grid;
}

/* The latest step a span may end at: horizon_days after today (night) or after now. */
static inline int64_t latest_end(const hf_calendar_t *calendar, int64_t now) {
    int64_t days = calendar->definition.horizon_days;
    return step_of_now(calendar, now) +
           (calendar->definition.unit == HF_CALENDAR_NIGHT ? days : days * MINUTES_PER_DAY);
}

/* The span a use occupies for conflicts: widened by the resource's buffers. */
static inline void widened(const hf_resource_definition_t *resource, int32_t from, int32_t to,
                           int64_t *wide_from, int64_t *wide_to) {
    *wide_from = (int64_t)from - resource->buffer_before_min;
    *wide_to = (int64_t)to + resource->buffer_after_min;
}

static inline bool resource_buffered(const hf_resource_definition_t *resource) {
    return resource->buffer_before_min > 0 || resource->buffer_after_min > 0;
}

/* ---- calendar.c ---- */

/* The calendars' state, made at the first calendar. */
calendars_t *calendars_of(hf_core_t *core);
/* A use taken (delta negative) or given back over an item's span, for live streams: emitted
 * only while the core emits stream records (hf_core_set_stream_records). */
void calendar_record_change(hf_core_t *core, uint32_t calendar_index,
                            const hf_calendar_item_t *item, int64_t delta, int64_t now);

/* ---- use.c ---- */

/* Adds (sign 1) or takes out (sign -1) an item's breakpoints in both trees of its resource. */
void use_apply(hf_calendar_t *calendar, const hf_calendar_item_t *item, int sign);
/* Items in the calendars' table for count items (none live): the offset. */
uint32_t calendar_items_allocate(hf_core_t *core, uint32_t count);
/* The items of a hold slot, reused when the slot's are enough. */
uint32_t calendar_hold_items(hf_core_t *core, uint32_t hold_index, uint32_t count);
/* The scratch's count items copied to offset; returns their total. */
int64_t calendar_items_fill(hf_core_t *core, uint32_t offset, uint32_t count);
/* A new or restored held hold: its owner's list, the calendar's, its spans, its expiry. */
void calendar_hold_take(hf_core_t *core, uint32_t hold_index, int64_t now, bool report);
/* Gives back the spans of the items at offset that are in the index. */
void uses_give_back(hf_core_t *core, uint32_t calendar_index, uint32_t offset, uint32_t count,
                    int64_t now, bool report);

/* ---- request.c ---- */

/* The request's user, item count and TTL (booking: no TTL). */
hf_error_t calendar_request_shape(const hf_calendar_t *calendar,
                                  const hf_calendar_hold_request_t *request, bool booking,
                                  hf_error_detail_t *detail);
/* Whether a span passes its own checks now: grid, lengths, past, horizon. */
bool calendar_span_valid(const hf_calendar_t *calendar, uint32_t resource, int64_t from, int64_t to,
                         int64_t now);

/* The request's items resolved into core->calendars->scratch and checked (resources, spans,
 * quantities, overlaps), then the index's conflicts and the user's limit. */
hf_error_t calendar_request_check(hf_core_t *core, uint32_t calendar_index,
                                  hf_calendar_hold_request_t *request, const user_ref_t *user,
                                  bool replacing, int64_t now, hf_error_detail_t *detail);
/* The quantities of the user's held and confirmed uses on the calendar whose span has not
 * ended at now. */
int64_t user_uses_current(hf_core_t *core, uint32_t calendar_index, uint32_t user, int64_t now,
                          bool held_too);

/* ---- sweep.c ---- */

/* When the order's next item can leave the index (its span widened has ended before anything
 * new could touch it), or INT64_MAX when none of its items is live. */
int64_t order_sweep_deadline(const hf_core_t *core, uint32_t order_index);
/* The order's entry on the timer at its next item's time, when one is live. */
void calendar_sweep_schedule(hf_core_t *core, uint32_t order_index);
/* A restored confirmed order's items that can still conflict, into the index. */
void calendar_order_restore(hf_core_t *core, uint32_t order_index);

#endif
