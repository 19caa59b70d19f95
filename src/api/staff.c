/* Handlers of the staff's view: listings of an event's or a calendar's holds and orders (one
 * mechanism for both units: API.md sections 2 and 12), closing and reopening an event's sales
 * (staff.h).
 *
 * Where the listings come from. Orders are never forgotten by the core, and each event keeps
 * its orders in creation order (hf_core_event_orders), so their pages come from memory. Holds
 * are not all in memory: released and expired ones beyond the newest --finished-holds are
 * forgotten (hf_core_evict), and the slots of forgotten holds are reused, so memory has no
 * creation order either. The store has every committed hold in creation order (its seq), so a
 * page of holds is a range scan of the store's index (hf_store_list_holds, through the loop
 * thread's read-only connection), and each hold the core still has is shown as the core has
 * it: a release, commit or expiry not yet committed is already what the page says, and the
 * answer waits for the open batch like every read (routes.c). A forgotten hold is final in the
 * store, which is why it could be forgotten. A hold whose creation is not yet committed is
 * left out: it has not been acknowledged to anyone either. */
#include "api/staff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/calendar_render.h"
#include "api/query.h"
#include "api/render.h"

/* The unit a staff list is of: the event, or the calendar, named by the first path
 * parameter. */
typedef struct unit {
    const hf_event_t *event;       /* NULL for a calendar */
    const hf_calendar_t *calendar; /* NULL for an event */
    uint32_t index;
    const char *id;
} unit_t;

/* The unit of the path (a calendar's when calendar), false after answering its 404. */
static bool unit_or_404(hf_request_t *request, bool calendar, unit_t *unit) {
    *unit = (unit_t){0};
    if (calendar)
        unit->calendar = hf_core_calendar(request->core, request->params[0], &unit->index);
    else unit->event = hf_core_event(request->core, request->params[0], &unit->index);
    if (unit->event) unit->id = unit->event->id;
    else if (unit->calendar) unit->id = unit->calendar->definition.id;
    else {
        hf_reply_error(request,
                       calendar ? HF_API_ERROR_CALENDAR_NOT_FOUND : HF_API_ERROR_EVENT_NOT_FOUND,
                       NULL, NULL);
        return false;
    }
    return true;
}

/* What a listing's query asks for. */
typedef struct page {
    int status; /* -1: any */
    uint32_t limit;
    bool after_given;
    char after[HF_SERVER_ID_SIZE + 1];
} page_t;

static bool limit_parse(const char *text, uint32_t *limit) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > (long)HF_STAFF_PAGE_MAX) return false;
    *limit = (uint32_t)value;
    return true;
}

/* Reads status (a word parse reads: core/names.c's), limit and after; false after answering
 * 400. */
static bool page_read(hf_request_t *request, bool (*parse)(const char *, uint8_t *),
                      const char *status_message, page_t *page) {
    const char *query = request->http->query;
    /* As long as a head may be: a value too long for it would read as absent. */
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *page = (page_t){.status = -1, .limit = HF_STAFF_PAGE_DEFAULT};
    if (hf_query_get(query, "status", value, sizeof value)) {
        uint8_t status;
        if (!parse(value, &status)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, status_message, "status");
            return false;
        }
        page->status = status;
    }
    if (hf_query_get(query, "limit", value, sizeof value) && !limit_parse(value, &page->limit)) {
        char message[64];
        snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                 (unsigned)HF_STAFF_PAGE_MAX);
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
        return false;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        /* Longer than any id the server makes: it cannot name one (answered as unknown). */
        page->after_given = true;
        size_t length = strlen(value);
        if (length > HF_SERVER_ID_SIZE) length = 0;
        memcpy(page->after, value, length);
        page->after[length] = '\0';
    }
    return true;
}

static void reply_bad_after(hf_request_t *request, const unit_t *unit, const char *what) {
    char message[96];
    snprintf(message, sizeof message, "after must be the id of %s of this %s", what,
             unit->calendar ? "calendar" : "event");
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "after");
}

/* The end of a page: "next" is the last id shown when more follow, else null. */
static void page_end(hf_json_t *json, bool more, const char *last) {
    hf_json_array_end(json);
    HF_JSON_KEY(json, "next");
    if (more) hf_json_string(json, last);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* ---- holds ---- */

/* A listing of holds in progress: each stored hold passes through hold_listed. */
typedef struct hold_listing {
    hf_request_t *request;
    const unit_t *unit;
    const void *stored; /* the stored hold listed now: an hf_stored_hold_t or a calendar's */
    const page_t *page;
    hf_json_t *json;
    uint32_t returned;
    bool more;
    char last[HF_SERVER_ID_SIZE + 1];
} hold_listing_t;

/* One stored hold of the list (an event's or a calendar's: hold_id, its stored status and
 * expiry, and stored_write for one the core has forgotten). */
static int listed(hold_listing_t *listing, const char *hold_id, uint8_t stored_status,
                  int64_t expires_at_ms, void (*stored_write)(hold_listing_t *, uint8_t)) {
    hf_core_t *core = listing->request->core;
    const hf_hold_t *hold = hf_core_hold_find(core, hold_id, NULL);
    uint8_t status = hold ? hold->status : stored_status;
    /* Only a finished hold is forgotten; a held row of the store the core lacks could only be
     * a lapsed one, and a lapsed hold is never shown as held (API.md section 3). */
    if (!hold && status == HF_HOLD_HELD && expires_at_ms <= listing->request->now_ms)
        status = HF_HOLD_EXPIRED;
    if (listing->page->status >= 0 && status != listing->page->status) return 0;
    if (listing->returned == listing->page->limit) {
        listing->more = true;
        return HF_STORE_LIST_STOP;
    }
    if (hold) hf_render_hold(listing->json, core, hold, listing->request->now_ms, NULL);
    else stored_write(listing, status);
    snprintf(listing->last, sizeof listing->last, "%s", hold_id);
    listing->returned++;
    return 0;
}

static void event_hold_write(hold_listing_t *listing, uint8_t status) {
    hf_render_stored_hold(listing->json, listing->request->core, listing->unit->event,
                          listing->stored, status);
}

static void calendar_hold_write(hold_listing_t *listing, uint8_t status) {
    hf_render_stored_calendar_hold(listing->json, listing->request->core, listing->unit->calendar,
                                   listing->stored, status);
}

static int hold_listed(void *context, const hf_stored_hold_t *stored) {
    hold_listing_t *listing = context;
    listing->stored = stored;
    return listed(listing, stored->request.hold_id, stored->status, stored->expires_at_ms,
                  event_hold_write);
}

static int calendar_hold_listed(void *context, const hf_stored_calendar_hold_t *stored) {
    hold_listing_t *listing = context;
    listing->stored = stored;
    return listed(listing, stored->request.hold_id, stored->status, stored->expires_at_ms,
                  calendar_hold_write);
}

static void hold_list(hf_request_t *request, bool calendar) {
    unit_t unit;
    if (!unit_or_404(request, calendar, &unit)) return;
    page_t page;
    if (!page_read(request, hf_hold_status_parse,
                   "status must be held, confirmed, released or expired", &page))
        return;
    hf_store_t *store = request->context->store;
    if (!store) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "no store to list holds from", NULL);
        return;
    }
    /* A hold stored as held may have ended since (in memory, or by lapsing): it is read too. */
    unsigned statuses = page.status < 0 ? 0 : (1u << page.status) | (1u << HF_HOLD_HELD);
    hf_store_hold_query_t query = {unit.id, page.after_given ? page.after : NULL, statuses};
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "holds");
    hf_json_array_begin(&json);
    hold_listing_t listing = {request, &unit, NULL, &page, &json, 0, false, ""};
    hf_store_loader_t loader = {.hold = hold_listed,
                                .calendar_hold = calendar_hold_listed,
                                .context = &listing};
    bool after_found;
    char error[512] = "";
    if (hf_store_list_holds(store, &query, &loader, &after_found, error, sizeof error) != 0) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "reading the holds failed; retry", NULL);
        return;
    }
    if (!after_found) {
        reply_bad_after(request, &unit, "a hold");
        return;
    }
    page_end(&json, listing.more, listing.last);
}

static void handle_hold_list(hf_request_t *request) { hold_list(request, false); }

static void handle_calendar_hold_list(hf_request_t *request) { hold_list(request, true); }

/* ---- orders ---- */

/* Where a page of the event's orders starts: past the order after names, found by its index
 * (the list's indexes grow); false when after names no order of this event. */
static bool orders_start(const hf_core_t *core, const unit_t *unit, const uint32_t *orders,
                         uint32_t count, const page_t *page, uint32_t *start) {
    *start = 0;
    if (!page->after_given) return true;
    uint32_t after;
    const hf_order_t *order = hf_core_order_find(core, page->after, &after);
    uint8_t target = unit->calendar ? HF_TARGET_CALENDAR : HF_TARGET_EVENT;
    if (!order || order->target != target || order->event != unit->index) return false;
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (orders[middle] <= after) low = middle + 1;
        else high = middle;
    }
    *start = low;
    return true;
}

static void order_list(hf_request_t *request, bool calendar) {
    unit_t unit;
    if (!unit_or_404(request, calendar, &unit)) return;
    page_t page;
    if (!page_read(request, hf_order_status_parse, "status must be confirmed or cancelled", &page))
        return;
    hf_core_t *core = request->core;
    uint32_t count, position;
    const uint32_t *orders = calendar ? hf_core_calendar_orders(core, unit.index, &count)
                                      : hf_core_event_orders(core, unit.index, &count);
    if (!orders_start(core, &unit, orders, count, &page, &position)) {
        reply_bad_after(request, &unit, "an order");
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "orders");
    hf_json_array_begin(&json);
    uint32_t returned = 0;
    const char *last = NULL;
    bool more = false;
    for (; position < count; position++) {
        const hf_order_t *order = hf_core_order_at(core, orders[position]);
        if (page.status >= 0 && order->status != page.status) continue;
        if (returned == page.limit) {
            more = true;
            break;
        }
        hf_render_order(&json, core, order);
        last = order->id;
        returned++;
    }
    page_end(&json, more, last);
}

static void handle_order_list(hf_request_t *request) { order_list(request, false); }

static void handle_calendar_order_list(hf_request_t *request) { order_list(request, true); }

/* ---- closing and reopening sales ---- */

static void sales_set(hf_request_t *request, bool open) {
    hf_core_t *core = request->core;
    hf_error_t error = hf_core_sales_set(core, request->params[0], open, request->now_ms);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_render_event(&json, core, hf_core_event(core, request->params[0], NULL));
}

static void handle_sales_close(hf_request_t *request) { sales_set(request, false); }

static void handle_sales_open(hf_request_t *request) { sales_set(request, true); }

/* Today every route takes what the HTTP layer reads (1 MiB); a route may take less. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"GET", "/v1/events/{}/holds", handle_hold_list, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/events/{}/orders", handle_order_list, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/events/{}/close", handle_sales_close, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/events/{}/open", handle_sales_open, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/calendars/{}/holds", handle_calendar_hold_list, 0, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/calendars/{}/orders", handle_calendar_order_list, 0, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_staff_routes = {routes, sizeof routes / sizeof routes[0], 0};
