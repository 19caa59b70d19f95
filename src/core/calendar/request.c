/* The checks of a calendar hold or booking (API.md section 12), in the order their answers
 * take precedence: the request's shape, each item (its resource, then its span and quantity),
 * items overlapping on one resource, sales, then the index (409 range_unavailable) and the
 * user's limit (429). Nothing changes until every check passed. */
#include "core/calendar/internal.h"

#include <string.h>

/* A span's own checks, as GET /free and /slots make them too: which member is at fault, or
 * NULL when the span may be held now. */
static const char *span_fault(const hf_calendar_t *calendar,
                              const hf_resource_definition_t *resource, int64_t from, int64_t to,
                              int64_t now) {
    if (from >= to) return "to";
    int64_t grid = calendar->definition.unit == HF_CALENDAR_MINUTE
                       ? calendar->definition.granularity_min
                       : 1;
    if (from % grid != 0) return "from";
    if (to % grid != 0) return "to";
    int64_t length = to - from;
    if (length < resource->min_length || length > resource->max_length) return "to";
    if (from < earliest_start(calendar, now)) return "from";
    if (to > latest_end(calendar, now)) return "to";
    return NULL;
}

bool calendar_span_valid(const hf_calendar_t *calendar, uint32_t resource, int64_t from, int64_t to,
                         int64_t now) {
    return span_fault(calendar, &calendar->definition.resources[resource], from, to, now) == NULL;
}

/* The item i resolved into out: its resource, span and quantity checked. */
static hf_error_t item_resolve(const hf_calendar_t *calendar,
                               const hf_calendar_item_request_t *asked, uint32_t i, int64_t now,
                               hf_calendar_item_t *out, hf_error_detail_t *detail) {
    int32_t resource = hf_core_resource_find(calendar, asked->resource_id);
    if (resource < 0) {
        if (detail) detail->index = i;
        return HF_ERROR_RESOURCE_NOT_FOUND;
    }
    const hf_resource_definition_t *definition = &calendar->definition.resources[resource];
    const char *fault = span_fault(calendar, definition, asked->from, asked->to, now);
    if (fault) return invalid_at(detail, "items", i, fault, HF_FAULT_VALUE);
    uint32_t quantity = asked->quantity ? asked->quantity : 1;
    if (quantity > definition->capacity)
        return invalid_at(detail, "items", i, "quantity", HF_FAULT_VALUE);
    int64_t steps = asked->to - asked->from;
    if (calendar->definition.unit == HF_CALENDAR_MINUTE)
        steps /= calendar->definition.granularity_min;
    *out = (hf_calendar_item_t){(uint32_t)resource, quantity, asked->from, asked->to,
                                definition->price * steps * quantity};
    return HF_OK;
}

/* Two items of the request on one resource whose spans, widened by its buffers, meet. */
static hf_error_t check_overlaps(const hf_calendar_t *calendar, const hf_calendar_item_t *items,
                                 uint32_t count, hf_error_detail_t *detail) {
    for (uint32_t i = 1; i < count; i++)
        for (uint32_t other = 0; other < i; other++) {
            if (items[i].resource != items[other].resource) continue;
            const hf_resource_definition_t *resource =
                &calendar->definition.resources[items[i].resource];
            int64_t a_from, a_to, b_from, b_to;
            widened(resource, items[i].from, items[i].to, &a_from, &a_to);
            widened(resource, items[other].from, items[other].to, &b_from, &b_to);
            if (a_from < b_to && b_from < a_to) {
                invalid_at(detail, "items", i, NULL, HF_FAULT_VALUE);
                if (detail) detail->other = other;
                return HF_ERROR_INVALID_REQUEST;
            }
        }
    return HF_OK;
}

static hf_error_t check_shape(const hf_calendar_t *calendar,
                              const hf_calendar_hold_request_t *request, bool booking,
                              hf_error_detail_t *detail) {
    size_t user_length = request->user_id ? strlen(request->user_id) : 0;
    if (user_length == 0 || user_length > HF_USER_ID_SIZE_MAX) return invalid(detail, "user_id");
    if (request->item_count == 0) return invalid_because(detail, "items", HF_FAULT_NO_ITEMS);
    uint32_t limit = calendar->definition.max_items_per_hold;
    if (request->item_count > limit)
        return invalid_count(detail, "items", HF_FAULT_HOLD_ITEMS, request->item_count, limit);
    if (booking) return HF_OK;
    if (request->ttl_ms == 0) return invalid(detail, "ttl_s");
    if (request->ttl_ms > calendar->definition.max_hold_ms)
        return invalid_count(detail, "ttl_s", HF_FAULT_HOLD_TTL, request->ttl_ms,
                             calendar->definition.max_hold_ms);
    return HF_OK;
}

/* ---- the index's conflicts ---- */

typedef struct conflict_walk {
    hf_calendar_hold_request_t *request;
    uint32_t item;
    int64_t capacity, quantity;
    int64_t from, to;     /* the widened span */
    int64_t at, free_now; /* the segment being walked: its start and free quantity */
    bool open;            /* a run where too little is free, from run_from, is open */
    int64_t run_from, run_least;
    uint32_t found;
} conflict_walk_t;

static void conflict_close(conflict_walk_t *walk, int64_t end) {
    if (!walk->open) return;
    walk->open = false;
    walk->found++;
    hf_calendar_hold_request_t *request = walk->request;
    if (!request->conflicts || request->conflict_count >= request->conflict_max) return;
    /* Below 0 only while an exchange hold counts its old order's spans twice (exchange/). */
    int64_t least = walk->run_least > 0 ? walk->run_least : 0;
    request->conflicts[request->conflict_count++] = (hf_calendar_conflict_t){
        walk->item, (int32_t)walk->run_from, (int32_t)end, least};
}

/* The segment from walk->at with free quantity walk->free_now ends at end. */
static void conflict_segment(conflict_walk_t *walk, int64_t end) {
    if (walk->free_now < walk->quantity) {
        if (!walk->open) {
            walk->open = true;
            walk->run_from = walk->at;
            walk->run_least = walk->free_now;
        } else if (walk->free_now < walk->run_least) {
            walk->run_least = walk->free_now;
        }
    } else {
        conflict_close(walk, walk->at);
    }
    walk->at = end;
}

static bool conflict_visit(void *context, int32_t key, int64_t taken) {
    conflict_walk_t *walk = context;
    conflict_segment(walk, key);
    walk->free_now = walk->capacity - taken;
    return true;
}

/* Appends the item's conflicts to the request's; returns whether it had any. */
static bool item_conflicts(const hf_calendar_t *calendar, const hf_calendar_item_t *item,
                           uint32_t index, hf_calendar_hold_request_t *request) {
    const hf_resource_definition_t *resource = &calendar->definition.resources[item->resource];
    const calendar_tables_t *tables = tables_of(calendar);
    const resource_spans_t *spans = &tables->spans[item->resource];
    uint32_t root = resource_buffered(resource) ? spans->wide_root : spans->root;
    conflict_walk_t walk = {.request = request,
                            .item = index,
                            .capacity = resource->capacity,
                            .quantity = item->quantity};
    widened(resource, item->from, item->to, &walk.from, &walk.to);
    if (span_max(&tables->pool, root, walk.from, walk.to) + item->quantity <= resource->capacity)
        return false;
    walk.at = walk.from;
    walk.free_now = resource->capacity - span_at(&tables->pool, root, walk.from);
    span_walk(&tables->pool, root, walk.from, walk.to, resource->capacity - walk.free_now,
              conflict_visit, &walk);
    conflict_segment(&walk, walk.to);
    conflict_close(&walk, walk.to);
    return walk.found > 0;
}

/* ---- the per-user limit ---- */

static int64_t items_current(const hf_core_t *core, uint32_t item_offset, uint32_t count,
                             int64_t now_step) {
    const hf_calendar_item_t *items = core->calendars->items + item_offset;
    int64_t quantity = 0;
    for (uint32_t i = 0; i < count; i++)
        if (items[i].to > now_step) quantity += items[i].quantity;
    return quantity;
}

int64_t user_uses_current(hf_core_t *core, uint32_t calendar_index, uint32_t user, int64_t now,
                          bool held_too) {
    if (user == NO_INDEX) return 0;
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    int64_t now_step = step_of_now(calendar, now);
    int64_t current = 0;
    event_user_t *owner = event_user_find(core, calendar_owner_unit(calendar_index), user);
    for (uint32_t h = owner && held_too ? owner->first_active : 0; h != 0;
         h = core->holds.states[h - 1].next_active) {
        const hf_hold_t *hold = &core->holds.slots[h - 1];
        current += items_current(core, hold->item_offset, hold->pool_count, now_step);
    }
    uint32_t count;
    const uint32_t *orders = hf_core_user_orders(core, hf_core_user_id(core, user), &count);
    for (uint32_t i = 0; i < count; i++) {
        const hf_order_t *order = &core->orders.slots[orders[i]];
        if (order->target != HF_TARGET_CALENDAR || order->event != calendar_index ||
            order->status != HF_ORDER_CONFIRMED)
            continue;
        current += items_current(core, order->item_offset, order->pool_count, now_step);
    }
    return current;
}

static hf_error_t check_user_uses(hf_core_t *core, uint32_t calendar_index, uint32_t count,
                                  const user_ref_t *user, bool replacing, int64_t now,
                                  hf_error_detail_t *detail) {
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    uint32_t limit = calendar->definition.max_uses_per_user;
    if (limit == 0) return HF_OK;
    int64_t requested = 0;
    for (uint32_t i = 0; i < count; i++) requested += core->calendars->scratch[i].quantity;
    int64_t current = user_uses_current(core, calendar_index, user->index, now, !replacing);
    if (core->calendars->exchange_order) {
        const hf_order_t *old = &core->orders.slots[core->calendars->exchange_order - 1];
        current -= items_current(core, old->item_offset, old->pool_count,
                                 step_of_now(calendar, now));
    }
    if (current + requested <= limit) return HF_OK;
    if (detail) {
        detail->limit = limit;
        detail->current = current;
        detail->requested = requested;
    }
    return HF_ERROR_USER_LIMIT_EXCEEDED;
}

hf_error_t calendar_request_check(hf_core_t *core, uint32_t calendar_index,
                                  hf_calendar_hold_request_t *request, const user_ref_t *user,
                                  bool replacing, int64_t now, hf_error_detail_t *detail) {
    const hf_calendar_t *calendar = calendar_slot(core, calendar_index);
    hf_calendar_item_t *items = core->calendars->scratch;
    for (uint32_t i = 0; i < request->item_count; i++) {
        hf_error_t error = item_resolve(calendar, &request->items[i], i, now, &items[i], detail);
        if (error) return error;
    }
    hf_error_t error = check_overlaps(calendar, items, request->item_count, detail);
    if (error) return error;
    if (!calendar->sales_open) return HF_ERROR_SALES_CLOSED;
    request->conflict_count = 0;
    bool conflicts = false;
    for (uint32_t i = 0; i < request->item_count; i++)
        conflicts = item_conflicts(calendar, &items[i], i, request) || conflicts;
    if (conflicts) return HF_ERROR_RANGE_UNAVAILABLE;
    return check_user_uses(core, calendar_index, request->item_count, user, replacing, now, detail);
}

hf_error_t calendar_request_shape(const hf_calendar_t *calendar,
                                  const hf_calendar_hold_request_t *request, bool booking,
                                  hf_error_detail_t *detail) {
    return check_shape(calendar, request, booking, detail);
}
