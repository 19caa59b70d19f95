/* Availability from the span index (API.md section 12): never a scan of the uses. */
#include "core/calendar/internal.h"

int64_t hf_core_resource_taken(const hf_calendar_t *calendar, uint32_t resource, int32_t from,
                               int32_t to) {
    const calendar_tables_t *tables = tables_of(calendar);
    if (resource >= calendar->definition.resource_count || from >= to) return 0;
    return span_max(&tables->pool, tables->spans[resource].root, from, to);
}

typedef struct segment_walk {
    hf_calendar_segment_t *out;
    uint32_t max, written;
    int64_t capacity;
    int32_t at;      /* the open segment's start */
    int64_t free_at; /* and its free quantity */
    bool more;
} segment_walk_t;

/* Closes the open segment at end; false once out is full and another one follows. */
static bool segment_close(segment_walk_t *walk, int32_t end) {
    if (walk->written == walk->max) {
        walk->more = true;
        return false;
    }
    /* Below 0 only while an exchange hold counts its old order's spans twice (exchange/). */
    int64_t free_at = walk->free_at > 0 ? walk->free_at : 0;
    walk->out[walk->written++] = (hf_calendar_segment_t){walk->at, end, free_at};
    return true;
}

static bool segment_visit(void *context, int32_t key, int64_t taken) {
    segment_walk_t *walk = context;
    if (!segment_close(walk, key)) return false;
    walk->at = key;
    walk->free_at = walk->capacity - taken;
    return true;
}

uint32_t hf_core_resource_segments(const hf_calendar_t *calendar, uint32_t resource, int32_t from,
                                   int32_t to, hf_calendar_segment_t *out, uint32_t max,
                                   bool *more) {
    *more = false;
    if (resource >= calendar->definition.resource_count || from >= to) return 0;
    const calendar_tables_t *tables = tables_of(calendar);
    uint32_t root = tables->spans[resource].root;
    segment_walk_t walk = {out,  max, 0,    calendar->definition.resources[resource].capacity,
                           from, 0,   false};
    walk.free_at = walk.capacity - span_at(&tables->pool, root, from);
    span_walk(&tables->pool, root, from, to, walk.capacity - walk.free_at, segment_visit, &walk);
    if (!walk.more) segment_close(&walk, to);
    *more = walk.more;
    return walk.written;
}

/* The least free quantity over the span widened by the resource's buffers. */
static int64_t least_free(const hf_calendar_t *calendar, uint32_t resource, int64_t from,
                          int64_t to) {
    const calendar_tables_t *tables = tables_of(calendar);
    const hf_resource_definition_t *definition = &calendar->definition.resources[resource];
    const resource_spans_t *spans = &tables->spans[resource];
    uint32_t root = resource_buffered(definition) ? spans->wide_root : spans->root;
    int64_t wide_from = from - definition->buffer_before_min;
    int64_t wide_to = to + definition->buffer_after_min;
    int64_t least = definition->capacity - span_max(&tables->pool, root, wide_from, wide_to);
    return least > 0 ? least : 0; /* see segment_close */
}

bool hf_core_resource_fits(const hf_core_t *core, const hf_calendar_t *calendar, uint32_t resource,
                           int32_t from, int32_t to, uint32_t quantity, int64_t now,
                           int64_t *available) {
    (void)core;
    *available = 0;
    if (resource >= calendar->definition.resource_count) return false;
    if (!calendar_span_valid(calendar, resource, from, to, now)) return false;
    *available = least_free(calendar, resource, from, to);
    uint32_t asked = quantity ? quantity : 1;
    if (asked > calendar->definition.resources[resource].capacity) return false;
    return *available >= (int64_t)asked;
}

/* The next start on the grid at or after step (each date for night calendars). */
static int64_t grid_ceil(const hf_calendar_t *calendar, int64_t step) {
    if (calendar->definition.unit == HF_CALENDAR_NIGHT) return step;
    int64_t grid = calendar->definition.granularity_min;
    int64_t below = step - ((step % grid) + grid) % grid;
    return below == step ? step : below + grid;
}

/* Where the cursor's resource is in the list: slots at the cursor's start resume after it. */
static int64_t cursor_place(const uint32_t *resources, uint32_t count, int64_t after_resource) {
    if (after_resource < 0) return -1;
    for (uint32_t i = 0; i < count; i++)
        if ((resources ? resources[i] : i) == (uint32_t)after_resource) return i;
    return -1;
}

uint32_t hf_core_resource_slots(const hf_core_t *core, const hf_calendar_t *calendar,
                                const uint32_t *resources, uint32_t resource_count, int32_t length,
                                uint32_t quantity, int32_t from, int32_t to, int64_t after_resource,
                                int32_t after_start, int64_t now, hf_calendar_slot_t *out,
                                uint32_t max, bool *more) {
    *more = false;
    uint32_t count = resources ? resource_count : calendar->definition.resource_count;
    int64_t step = calendar->definition.unit == HF_CALENDAR_NIGHT
                       ? 1
                       : calendar->definition.granularity_min;
    int64_t place = cursor_place(resources, count, after_resource);
    bool resuming = after_resource >= 0 && after_start >= from;
    uint32_t written = 0;
    for (int64_t s = grid_ceil(calendar, resuming ? after_start : from); s < to; s += step) {
        uint32_t first = resuming && s == after_start ? (uint32_t)(place + 1) : 0;
        for (uint32_t i = first; i < count; i++) {
            uint32_t r = resources ? resources[i] : i;
            int64_t available;
            if (!hf_core_resource_fits(core, calendar, r, (int32_t)s, (int32_t)(s + length),
                                       quantity, now, &available))
                continue;
            if (written == max) {
                *more = true;
                return written;
            }
            out[written++] = (hf_calendar_slot_t){r, (int32_t)s, (int32_t)(s + length)};
        }
    }
    return written;
}
