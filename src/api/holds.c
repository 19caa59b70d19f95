/* Handlers of holds, orders and bookings (holds.h). */
#include "cluster/exchange.h"
#include "core/locks.h"
#include "api/holds.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/query.h"
#include "api/render.h"
#include "engine/restore.h"

/* The domain's own context (route.h: hf_route_table_t.scratch_size): scratch its handlers
 * share, one request at a time, too large for the stack. */
typedef struct scratch {
    hf_error_detail_t detail;                /* a refusal's detail (items is large) */
    const char *seat_ids[HF_HOLD_ITEMS_MAX]; /* a booking's items */
    uint32_t seat_versions[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
} scratch_t;

static scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

/* The hold; with capped not NULL, plus "capped" (the extend answer). */
static void reply_hold(hf_request_t *request, int status, uint32_t hold_index, const bool *capped) {
    hf_core_t *core = request->core;
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    hf_render_hold(&json, core, hf_core_hold_at(core, hold_index), request->now_ms, capped);
}

static void reply_order(hf_request_t *request, int status, uint32_t order_index) {
    hf_core_t *core = request->core;
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    hf_render_order(&json, core, hf_core_order_at(core, order_index));
}

/* best_available's fault, if any: the whole member, or the path of the member inside it. */
static const char *best_available_fault(json_t *best) {
    if (!json_is_object(best)) return NULL;
    json_t *count = json_object_get(best, "count");
    json_t *section = json_object_get(best, "section");
    json_t *adjacent = json_object_get(best, "adjacent");
    if (!json_is_integer(count) || json_integer_value(count) < 1 ||
        json_integer_value(count) > HF_HOLD_ITEMS_MAX)
        return "count";
    if (section && !json_is_null(section) &&
        (!json_is_string(section) || json_string_length(section) > HF_ID_SIZE_MAX))
        return "section";
    if (adjacent && !json_is_boolean(adjacent)) return "adjacent";
    return "";
}

/* best_available: {"count": N, "section": "FLOOR", "adjacent": true}; false after a 400. */
static bool best_available_decode(hf_request_t *request, hf_hold_request_t *hold_request) {
    hf_member_t member = hf_decode_member(request, "best_available");
    hold_request->best_adjacent = true;
    if (member.kind == HF_MEMBER_ABSENT || member.kind == HF_MEMBER_NULL) return true;
    /* Only jansson reads objects: from the flat reader this member is always wrong. */
    json_t *best = member.json;
    const char *fault = best_available_fault(best);
    if (!fault || *fault) {
        hf_error_detail_t detail = {.field = "best_available",
                                    .member = fault,
                                    .fault = HF_FAULT_VALUE};
        if (fault && !json_object_get(best, fault)) detail.fault = HF_FAULT_REQUIRED;
        hf_fields_source_t source = {HF_FIELDS_HOLD, NULL, hold_request};
        hf_reply_invalid(request, &detail, &source);
        return false;
    }
    json_t *section = json_object_get(best, "section"),
           *adjacent = json_object_get(best, "adjacent");
    hold_request->best_count = (uint32_t)json_integer_value(json_object_get(best, "count"));
    hold_request->best_section = json_is_string(section) ? json_string_value(section) : NULL;
    hold_request->best_adjacent = !adjacent || json_is_true(adjacent);
    return true;
}

/* Decodes the hold request body; false after answering 400. */
static bool hold_request_decode(hf_request_t *request, hf_hold_request_t *hold_request,
                                const char **seat_ids, hf_pool_request_t *pools) {
    if (!hf_decode_user(request, &hold_request->user_id)) return false;
    if (!best_available_decode(request, hold_request)) return false;
    hf_error_detail_t *fault = &scratch_of(request)->detail;
    memset(fault, 0, offsetof(hf_error_detail_t, items));
    if (!hf_decode_request_items(request, hold_request, seat_ids, pools, fault)) {
        hf_fields_source_t source = {HF_FIELDS_HOLD, NULL, hold_request};
        hf_reply_invalid(request, fault, &source);
        return false;
    }
    hold_request->ttl_ms = -1;
    if (!hf_decode_seconds(request, "ttl_s", &hold_request->ttl_ms)) return false;
    if (!hf_decode_string(request, "exchange_for", HF_ID_SIZE_MAX, false,
                          &hold_request->exchange_for))
        return false;
    /* An allocation's hold takes only its inventory (API.md section 14). */
    if (!hf_decode_string(request, "allocation", HF_ID_SIZE_MAX, false,
                          &hold_request->allocation_id))
        return false;
    return hf_decode_bool(request, "replace_existing", &hold_request->replace_existing);
}

/* A hold or booking refused on the states of its seats: seats held or sold for long enough
 * are that way on disk too, so the loser of a race is answered without waiting for the next
 * batch (routes.c, reply_sequence). */
static void rest_on_seats(hf_request_t *request, const hf_error_detail_t *detail) {
    request->rests_on_known = true;
    request->rests_on_change = detail->observed_change;
}

/* best_available found no seats: 409 seats_unavailable with "seats": [] (API.md section 3),
 * and since no seat asked for was taken, a message that says what was missing rather than the
 * table's "seats are held or sold": the event has no seats at all, or not so many free. */
static void reply_no_best(hf_request_t *request, const hf_event_t *event,
                          const hf_hold_request_t *hold_request) {
    char message[HF_FIELDS_TEXT_SIZE], where[HF_ID_SIZE_MAX + 16] = "";
    if (hold_request->best_section)
        snprintf(where, sizeof where, " in section %s", hold_request->best_section);
    if (event->seat_count == 0)
        snprintf(message, sizeof message,
                 "this event has no seats, only pools: best_available "
                 "has nothing to pick (ask for pool units with \"pools\")");
    else if (hold_request->best_adjacent)
        snprintf(message, sizeof message,
                 "best_available found no %u adjacent free seats in one "
                 "row%s",
                 hold_request->best_count, where);
    else
        snprintf(message, sizeof message, "best_available found fewer than %u free seats%s",
                 hold_request->best_count, where);
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_SEATS_UNAVAILABLE, message, &json);
    HF_JSON_KEY(&json, "seats");
    hf_json_array_begin(&json);
    hf_json_array_end(&json);
    hf_reply_error_end(&json);
}

static void handle_hold_create(hf_request_t *request) {
    const char *seat_ids[HF_HOLD_ITEMS_MAX];
    hf_pool_request_t pools[HF_HOLD_ITEMS_MAX];
    char hold_id[HF_SERVER_ID_SIZE + 1];
    hf_hold_request_t hold_request = {.event_id = request->params[0], .hold_id = hold_id};
    hf_core_t *core = request->core;
    const hf_event_t *event = hf_core_event(core, request->params[0], NULL);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    if (!hold_request_decode(request, &hold_request, seat_ids, pools)) return;
    hf_context_id_make(request->context, "res_", hold_id);
    /* Large: kept off the stack, in the context's scratch; one request at a time uses it. */
    hf_error_detail_t *detail = &scratch_of(request)->detail;
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t hold_index;
    hf_error_t error = hf_core_hold(core, &hold_request, request->now_ms, &hold_index, detail);
    /* The old order is another unit's, as its owner read it (cluster/exchange.h). */
    hf_remote_order_t remote;
    if (error == HF_ERROR_ORDER_NOT_FOUND && hold_request.exchange_for &&
        hf_cluster_exchange_read(request->context->cluster, hold_request.exchange_for, &remote))
        error = hf_core_hold_remote_exchange(core, &hold_request, &remote, request->now_ms,
                                             &hold_index, detail);
    if (error) {
        if (error == HF_ERROR_SEATS_UNAVAILABLE) rest_on_seats(request, detail);
        hf_fields_source_t source = {HF_FIELDS_HOLD, NULL, &hold_request};
        if (error == HF_ERROR_SEATS_UNAVAILABLE && hold_request.best_count && !detail->item_count)
            reply_no_best(request, event, &hold_request);
        else hf_reply_core_error(request, error, detail, &source);
        return;
    }
    reply_hold(request, 201, hold_index, NULL);
}

/* The hold named by the first path parameter, or false after answering 404. A released or
 * expired hold the core has forgotten is taken back from the store first. An answer that
 * changes nothing (a read, a repeated release, a refusal) shows the hold as its records left
 * it: it waits for those, not for the open batch (routes.c, reply_sequence). */
static bool hold_or_404(hf_request_t *request, uint32_t *index) {
    hf_context_t *context = request->context;
    if (!hf_core_hold_find(request->core, request->params[0], index) &&
        !hf_restore_hold_revive(context, request->params[0], index)) {
        hf_reply_error(request, HF_API_ERROR_HOLD_NOT_FOUND, NULL, NULL);
        return false;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_core_hold_change(request->core, *index);
    return true;
}

/* As hold_or_404, for the order named by the first path parameter. */
static bool order_or_404(hf_request_t *request, uint32_t *index) {
    hf_core_t *core = request->core;
    if (!hf_core_order_find(core, request->params[0], index)) {
        hf_reply_error(request, HF_API_ERROR_ORDER_NOT_FOUND, NULL, NULL);
        return false;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_core_order_change(core, *index);
    return true;
}

static void handle_hold_get(hf_request_t *request) {
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    const hf_hold_t *hold = hf_core_hold_at(request->core, index);
    if (hf_request_owner_check(request, hf_core_user_id(request->core, hold->user)))
        reply_hold(request, 200, index, NULL);
}

static void handle_hold_extend(hf_request_t *request) {
    const char *user_id;
    int64_t ttl_ms = -1;
    if (!hf_decode_user(request, &user_id)) return;
    if (!hf_decode_extension(request, "ttl_s", &ttl_ms)) return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    bool capped = false;
    hf_error_t error = hf_core_extend(request->core, request->params[0], user_id, ttl_ms,
                                      request->now_ms, &capped);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_hold(request, 200, index, &capped);
}

static void handle_hold_release(hf_request_t *request) {
    const char *user_id;
    if (!hf_decode_user(request, &user_id)) return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    hf_error_t error = hf_core_release(request->core, request->params[0], user_id, request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_hold(request, 200, index, NULL);
}

/* 409 already_confirmed to a commit bringing another payment: the order's id and its own
 * payment_ref (null when it was committed without one), so the client can refund the second
 * payment (API.md section 3). */
static void reply_already_confirmed(hf_request_t *request, uint32_t order_index,
                                    const char *payment_ref) {
    const hf_core_t *core = request->core;
    const hf_order_t *order = hf_core_order_at(core, order_index);
    const char *own = hf_core_string(core, order->payment_ref);
    char paid[HF_PAYMENT_REF_SIZE_MAX + 32];
    char message[2 * HF_PAYMENT_REF_SIZE_MAX + HF_SERVER_ID_SIZE + 128];
    if (own) snprintf(paid, sizeof paid, "with payment_ref \"%s\"", own);
    else snprintf(paid, sizeof paid, "without payment_ref");
    snprintf(message, sizeof message,
             "the hold is already confirmed by order %s %s; payment_ref \"%s\" is another "
             "payment and was not taken",
             order->id, paid, payment_ref);
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_ALREADY_CONFIRMED, message, &json);
    HF_JSON_KEY(&json, "order_id");
    hf_json_string(&json, order->id);
    HF_JSON_KEY(&json, "payment_ref");
    if (own) hf_json_string(&json, own);
    else hf_json_null(&json);
    hf_reply_error_end(&json);
}

/* Whether the hold is an exchange whose positive difference is still to be paid: the reason
 * its commit without payment_ref was refused. */
static bool exchange_unpaid(const hf_core_t *core, uint32_t hold_index) {
    const hf_hold_t *hold = hf_core_hold_at(core, hold_index);
    if (hold && hold->exchange_elsewhere && hold->status == HF_HOLD_HELD)
        return hold->exchange_elsewhere_total != HF_REMOTE_TOTAL_UNKNOWN &&
               hold->total > hold->exchange_elsewhere_total;
    if (!hold || !hold->exchange_for || hold->status != HF_HOLD_HELD) return false;
    return hold->total > hf_core_order_at(core, hold->exchange_for - 1)->total;
}

static void handle_hold_commit(hf_request_t *request) {
    const char *user_id, *payment_ref = NULL;
    if (!hf_decode_user(request, &user_id)) return;
    if (!hf_decode_string(request, "payment_ref", HF_PAYMENT_REF_SIZE_MAX, false, &payment_ref))
        return;
    uint32_t index;
    if (!hold_or_404(request, &index)) return;
    char order_id[HF_SERVER_ID_SIZE + 1], refund_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "ord_", order_id);
    /* The refund an exchange to a cheaper order owes (API.md section 13), used only then. */
    hf_context_id_make(request->context, "ref_", refund_id);
    uint32_t order_index;
    /* A remote exchange hold's commit is the exchange's decision, once its old order's owner
     * locked the order for it (cluster/exchange.h); without that lock it changes nothing. */
    hf_remote_order_t locked;
    hf_error_t error =
        hf_cluster_exchange_locked(request->context->cluster, request->params[0], &locked)
            ? hf_core_commit_remote_exchange(request->core, request->params[0], user_id, order_id,
                                             payment_ref, refund_id, &locked, request->now_ms,
                                             &order_index)
            : hf_core_commit_refunding(request->core, request->params[0], user_id, order_id,
                                       payment_ref, refund_id, request->now_ms, &order_index);
    if (error == HF_ERROR_ALREADY_CONFIRMED)
        reply_already_confirmed(request, order_index, payment_ref);
    else if (error == HF_ERROR_INVALID_REQUEST && exchange_unpaid(request->core, index))
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "payment_ref is required: this exchange costs more than the order it "
                       "replaces (see the hold's difference)",
                       "payment_ref");
    else if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, 200, order_index);
}

static void handle_order_get(hf_request_t *request) {
    uint32_t index;
    if (!order_or_404(request, &index)) return;
    const hf_order_t *order = hf_core_order_at(request->core, index);
    if (hf_request_owner_check(request, hf_core_user_id(request->core, order->user)))
        reply_order(request, 200, index);
}

static void handle_order_cancel(hf_request_t *request) {
    const char *user_id;
    if (!hf_decode_user(request, &user_id)) return;
    uint32_t index;
    hf_core_t *core = request->core;
    if (!order_or_404(request, &index)) return;
    /* The id of the refund a paid order is owed, used only by such an order's first cancel. */
    char refund_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "ref_", refund_id);
    hf_error_t error = hf_core_cancel(core, request->params[0], user_id, refund_id,
                                      request->now_ms);
    if (error) hf_reply_core_error(request, error, NULL, NULL);
    else reply_order(request, 200, index);
}

/* What a user's orders are filtered by: ?event=E or ?calendar=C (API.md section 12). */
typedef struct order_filter {
    const char *unit_id; /* NULL: every order */
    uint8_t target;      /* hf_target_t */
} order_filter_t;

/* Whether the order is on the event or calendar the list is filtered by. */
static bool order_listed(const hf_core_t *core, uint32_t order_index,
                         const order_filter_t *filter) {
    const hf_order_t *order = hf_core_order_at(core, order_index);
    if (!filter->unit_id) return true;
    if (order->target != filter->target) return false;
    const char *id = order->target == HF_TARGET_CALENDAR
                         ? hf_core_calendar_at(core, order->event)->definition.id
                         : hf_core_event_at(core, order->event)->id;
    return strcmp(id, filter->unit_id) == 0;
}

/* Reads limit and after of a user's orders page into *limit and *start (the position in the
 * user's orders after the one named); false after answering 400. */
static bool user_page_read(hf_request_t *request, const uint32_t *orders, uint32_t count,
                           uint32_t *limit, uint32_t *start) {
    const char *query = request->http->query;
    char value[HF_SERVER_ID_SIZE + 2];
    *limit = HF_USER_ORDERS_PAGE_DEFAULT;
    *start = 0;
    if (hf_query_get(query, "limit", value, sizeof value)) {
        char *end;
        long asked = strtol(value, &end, 10);
        if (value[0] == '\0' || *end != '\0' || asked < 1 || asked > HF_USER_ORDERS_PAGE_MAX) {
            char message[128];
            snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                     HF_USER_ORDERS_PAGE_MAX);
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
            return false;
        }
        *limit = (uint32_t)asked;
    }
    if (!hf_query_get(query, "after", value, sizeof value)) return true;
    uint32_t after;
    const hf_order_t *order = hf_core_order_find(request->core, value, &after);
    while (order && *start < count && orders[*start] != after) (*start)++;
    if (!order || *start == count) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "after must be the id of one of this user's orders", "after");
        return false;
    }
    (*start)++;
    return true;
}

/* Whether order a was made before order b, by time alone: orders of the same millisecond
 * keep the core's order, which is their creation order within an event (an id's random part
 * says nothing of it), so the sort below must be stable. */
static bool order_before(const hf_core_t *core, uint32_t a, uint32_t b) {
    return hf_core_order_at(core, a)->created_at_ms < hf_core_order_at(core, b)->created_at_ms;
}

/* The user's orders oldest first. A core loaded unit by unit (a list across the units of
 * several nodes, cluster.h) has them by event: then a sorted copy, owned by the caller, is
 * made (a stable insertion sort: one user's orders are few); else the core's own list, and *copy NULL. */
static const uint32_t *oldest_first(const hf_core_t *core, const uint32_t *orders, uint32_t count,
                                    uint32_t **copy) {
    *copy = NULL;
    uint32_t at = 1;
    while (at < count && !order_before(core, orders[at], orders[at - 1])) at++;
    if (at >= count) return orders;
    *copy = malloc(count * sizeof **copy);
    if (!*copy) abort();
    for (uint32_t i = 0; i < count; i++) {
        uint32_t j = i;
        while (j > 0 && order_before(core, orders[i], (*copy)[j - 1])) {
            (*copy)[j] = (*copy)[j - 1];
            j--;
        }
        (*copy)[j] = orders[i];
    }
    return *copy;
}

/* GET /v1/users/{user}/orders?event=E (or ?calendar=C)&after=ID&limit=N: oldest first, paged
 * as seats are. */
static void handle_user_orders(hf_request_t *request) {
    if (!hf_request_owner_check(request, request->params[0])) return;
    hf_core_t *core = request->core;
    char unit_id[HF_ID_SIZE_MAX + 2];
    order_filter_t event_filter = {NULL, HF_TARGET_EVENT};
    if (hf_query_get(request->http->query, "event", unit_id, sizeof unit_id))
        event_filter.unit_id = unit_id;
    else if (hf_query_get(request->http->query, "calendar", unit_id, sizeof unit_id))
        event_filter = (order_filter_t){unit_id, HF_TARGET_CALENDAR};
    uint32_t count = 0, limit, at;
    uint32_t *sorted;
    const uint32_t *orders = hf_core_user_orders(core, request->params[0], &count);
    orders = oldest_first(core, orders, count, &sorted);
    if (!user_page_read(request, orders, count, &limit, &at)) {
        free(sorted);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "orders");
    hf_json_array_begin(&json);
    uint32_t returned = 0, last = 0;
    for (; at < count && returned < limit; at++) {
        if (!order_listed(core, orders[at], &event_filter)) continue;
        hf_render_order(&json, core, hf_core_order_at(core, orders[at]));
        last = orders[at];
        returned++;
    }
    hf_json_array_end(&json);
    while (at < count && !order_listed(core, orders[at], &event_filter)) at++;
    HF_JSON_KEY(&json, "next");
    if (returned > 0 && at < count) hf_json_string(&json, hf_core_order_at(core, last)->id);
    else hf_json_null(&json);
    hf_json_object_end(&json);
    free(sorted);
}

/* ---- bookings (optimistic: an order straight from the versions the client saw) ---- */

/* A booking's items: arrays of the context's scratch, large and kept off the stack. */
typedef struct booking_items {
    const char **seat_ids;
    uint32_t *versions;
    hf_pool_request_t *pools;
} booking_items_t;

/* seats[i] of a booking, or its member, as wrong; false. */
static bool booking_seat_wrong(hf_error_detail_t *fault, bool indexed, size_t index,
                               const char *member, const json_t *value) {
    *fault = (hf_error_detail_t){.field = "seats",
                                 .member = member,
                                 .has_index = indexed,
                                 .index = (uint32_t)index,
                                 .fault = value ? HF_FAULT_VALUE : HF_FAULT_REQUIRED};
    return false;
}

/* "seats": [{"id": "FLOOR-A-1", "version": 3}]; false with fault's path when malformed. */
static bool booking_seats_decode(json_t *body, hf_hold_request_t *booking, booking_items_t *items,
                                 hf_error_detail_t *fault) {
    json_t *seats = json_object_get(body, "seats");
    booking->seat_ids = items->seat_ids;
    booking->seat_versions = items->versions;
    if (!seats || json_is_null(seats)) return true;
    if (!json_is_array(seats) || json_array_size(seats) > HF_HOLD_ITEMS_MAX)
        return booking_seat_wrong(fault, false, 0, NULL, seats);
    for (size_t i = 0; i < json_array_size(seats); i++) {
        json_t *seat = json_array_get(seats, i);
        if (!json_is_object(seat)) return booking_seat_wrong(fault, true, i, NULL, seat);
        json_t *id = json_object_get(seat, "id"), *version = json_object_get(seat, "version");
        if (!json_is_string(id) || json_string_length(id) > HF_SEAT_ID_SIZE_MAX)
            return booking_seat_wrong(fault, true, i, "id", id);
        if (!json_is_integer(version) || json_integer_value(version) < 1 ||
            json_integer_value(version) > UINT32_MAX)
            return booking_seat_wrong(fault, true, i, "version", version);
        items->seat_ids[booking->seat_count] = json_string_value(id);
        items->versions[booking->seat_count++] = (uint32_t)json_integer_value(version);
    }
    return true;
}

static bool booking_decode(hf_request_t *request, hf_hold_request_t *booking,
                           booking_items_t *items, const char **payment_ref) {
    json_t *body = request->body;
    if (!hf_decode_user(request, &booking->user_id)) return false;
    hf_error_detail_t *fault = &scratch_of(request)->detail;
    memset(fault, 0, offsetof(hf_error_detail_t, items));
    if (!booking_seats_decode(body, booking, items, fault) ||
        !hf_decode_pools(body, booking, items->pools, fault)) {
        hf_fields_source_t source = {HF_FIELDS_BOOKING, NULL, booking};
        hf_reply_invalid(request, fault, &source);
        return false;
    }
    booking->ttl_ms = -1;
    if (!hf_decode_string(request, "allocation", HF_ID_SIZE_MAX, false, &booking->allocation_id))
        return false;
    return hf_decode_string(request, "payment_ref", HF_PAYMENT_REF_SIZE_MAX, false, payment_ref);
}

/* 409 version_conflict with the current version and status of each seat that moved. */
static void reply_version_conflict(hf_request_t *request, const hf_hold_request_t *booking,
                                   const hf_error_detail_t *detail) {
    const hf_event_t *event = hf_core_event(request->core, booking->event_id, NULL);
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_VERSION_CONFLICT, NULL, &json);
    HF_JSON_KEY(&json, "seats");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < detail->item_count; i++) {
        const char *seat_id = booking->seat_ids[detail->items[i]];
        uint32_t seat;
        hf_core_seat_find(event, seat_id, &seat);
        hf_json_object_begin(&json);
        HF_JSON_KEY(&json, "id");
        hf_json_string(&json, seat_id);
        HF_JSON_KEY(&json, "version");
        hf_json_int(&json, event->seats[seat].version);
        HF_JSON_KEY(&json, "status");
        hf_json_string(&json, hf_seat_status_name(event->seats[seat].status));
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_reply_error_end(&json);
}

static void handle_booking_create(hf_request_t *request) {
    scratch_t *scratch = scratch_of(request);
    booking_items_t items = {scratch->seat_ids, scratch->seat_versions, scratch->pools};
    hf_error_detail_t *detail = &scratch->detail;
    hf_hold_request_t booking = {.event_id = request->params[0]};
    const char *payment_ref = NULL;
    hf_core_t *core = request->core;
    if (!hf_core_event(core, request->params[0], NULL)) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    if (!booking_decode(request, &booking, &items, &payment_ref)) return;
    char order_id[HF_SERVER_ID_SIZE + 1];
    hf_context_id_make(request->context, "ord_", order_id);
    memset(detail, 0, offsetof(hf_error_detail_t, items));
    uint32_t order_index;
    hf_error_t error = hf_core_book(core, &booking, order_id, payment_ref, request->now_ms,
                                    &order_index, detail);
    if (error == HF_ERROR_VERSION_CONFLICT || error == HF_ERROR_SEATS_UNAVAILABLE)
        rest_on_seats(request, detail);
    if (error == HF_ERROR_VERSION_CONFLICT) reply_version_conflict(request, &booking, detail);
    else if (error) {
        hf_fields_source_t source = {HF_FIELDS_BOOKING, NULL, &booking};
        hf_reply_core_error(request, error, detail, &source);
    } else reply_order(request, 201, order_index);
}

/* Today every route takes what the HTTP layer reads (1 MiB); a route may take less. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX
/* Creates something, so an Idempotency-Key applies. */
#define CREATES (HF_ROUTE_BODY | HF_ROUTE_IDEMPOTENT)
/* A flat body: the hot routes (HF_ROUTE_FLAT). */
#define FLAT_BODY (HF_ROUTE_BODY | HF_ROUTE_FLAT)

static const hf_route_t routes[] = {
    {"POST", "/v1/events/{}/holds", handle_hold_create,
     CREATES | HF_ROUTE_FLAT | HF_ROUTE_ADMISSION | HF_ROUTE_BUYER | HF_ROUTE_EXCHANGE,
     BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/events/{}/bookings", handle_booking_create, CREATES | HF_ROUTE_ADMISSION,
     BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/holds/{}", handle_hold_get, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_HOLD, 0)},
    {"POST", "/v1/holds/{}/extend", handle_hold_extend, FLAT_BODY | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_HOLD, 0)},
    {"POST", "/v1/holds/{}/release", handle_hold_release, FLAT_BODY | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_HOLD, 0)},
    {"POST", "/v1/holds/{}/commit", handle_hold_commit,
     FLAT_BODY | HF_ROUTE_BUYER | HF_ROUTE_EXCHANGE, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_HOLD, 0)},
    {"GET", "/v1/orders/{}", handle_order_get, HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
    {"POST", "/v1/orders/{}/cancel", handle_order_cancel, FLAT_BODY | HF_ROUTE_BUYER, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_ORDER, 0)},
    {"GET", "/v1/users/{}/orders", handle_user_orders, HF_ROUTE_SPANS | HF_ROUTE_BUYER,
     BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
};

const hf_route_table_t hf_handlers_holds_routes = {routes, sizeof routes / sizeof routes[0],
                                                   sizeof(scratch_t)};

/* ---- GET /metrics (metrics.h) ---- */

void hf_handlers_holds_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    hf_metrics_family(out, "holdfast_holds_active", "gauge",
                      "Holds in status held (not yet committed, released or expired).");
    hf_metrics_sample(out, "holdfast_holds_active", NULL, 0, hf_core_holds_active(context->core));
    hf_metrics_family(out, "holdfast_exchanges_total", "counter",
                      "Exchange holds committed since the start: orders swapped for their "
                      "replacements (API.md section 13).");
    hf_metrics_sample(out, "holdfast_exchanges_total", NULL, 0,
                      (double)hf_core_exchanges(context->core));
}
