/* The audit history of an event or a calendar (history.h).
 *
 * Where the entries come from. The store appends them in the transaction of the batch that
 * holds their changes, so what the loop thread's read-only connection sees is committed, and a
 * change whose answer was sent is durable, hence committed, hence seen. Nothing of the history
 * is kept in memory: a page is one range scan of the store's key (event, seq) of at most
 * HF_HISTORY_PAGE_MAX + 1 rows, written straight into the answer, which then waits for the
 * open batch like every read (routes.c). A change applied but not yet committed is not shown
 * yet: its own answer has not left either.
 *
 * What an entry carries. The store keeps only each entry's own fields; an entry about a hold or
 * an order is joined at read time with that hold or order (store.h), whose reservation_id,
 * user_id, seats and pools are written first, so an entry reads alone without costing the
 * durable step a byte more. The filters (seat=, user=, reservation=) match those joined
 * fields: the history has no index by them, so a filtered page examines at most
 * HF_HISTORY_SCAN_MAX entries from after= and, when it stopped there, answers next to go on. */
#include "api/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/calendar_decode.h"
#include "api/query.h"
#include "api/render.h"

/* What a page asks for: the filters are NULL when not given, else point into the values. */
typedef struct page {
    int64_t after;
    uint32_t limit;
    const char *user, *reservation, *seat;
    char user_value[HF_USER_ID_SIZE_MAX + 1];
    char reservation_value[HF_ID_SIZE_MAX + 1];
    char seat_value[HF_SEAT_ID_SIZE_MAX + 1];
} page_t;

/* A whole decimal number from minimum to maximum, nothing else (no sign, no space). */
static bool integer_parse(const char *text, long long minimum, long long maximum,
                          long long *value) {
    if (*text < '0' || *text > '9') return false;
    char *end;
    errno = 0;
    long long parsed = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || parsed < minimum || parsed > maximum) return false;
    *value = parsed;
    return true;
}

/* Reads after and limit; false after answering 400. */
static bool bounds_read(hf_request_t *request, page_t *page) {
    const char *query = request->http->query;
    /* As long as a head may be: a value too long for it would read as absent. */
    char value[HF_HTTP_HEAD_SIZE_MAX];
    long long number;
    if (hf_query_get(query, "after", value, sizeof value)) {
        if (!integer_parse(value, 0, INT64_MAX, &number)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be an integer of at least 0 (the seq of an entry)", "after");
            return false;
        }
        page->after = number;
    }
    if (hf_query_get(query, "limit", value, sizeof value)) {
        if (!integer_parse(value, 1, HF_HISTORY_PAGE_MAX, &number)) {
            char message[64];
            snprintf(message, sizeof message, "limit must be an integer from 1 to %u",
                     (unsigned)HF_HISTORY_PAGE_MAX);
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, "limit");
            return false;
        }
        page->limit = (uint32_t)number;
    }
    return true;
}

/* Whether text is a client-chosen id (core.h) of exactly length bytes. */
static bool id_part_valid(const char *text, size_t length) {
    char part[HF_ID_SIZE_MAX + 1];
    if (length == 0 || length > HF_ID_SIZE_MAX) return false;
    memcpy(part, text, length);
    part[length] = '\0';
    return hf_core_id_valid(part);
}

/* SECTION-ROW-NUMBER (API.md section 1): two ids without dashes and a number from 1, written
 * without leading zeros, of at most 7 digits. */
static bool seat_id_form(const char *text) {
    const char *first = strchr(text, '-');
    const char *second = first ? strchr(first + 1, '-') : NULL;
    if (!second || !id_part_valid(text, (size_t)(first - text)) ||
        !id_part_valid(first + 1, (size_t)(second - first - 1)))
        return false;
    const char *number = second + 1;
    size_t digits = strspn(number, "0123456789");
    return digits >= 1 && digits <= 7 && number[digits] == '\0' && number[0] != '0';
}

/* One filter: *filter stays NULL when the parameter is absent; false after answering 400 for a
 * value that is empty, too long, not decodable or (valid NULL) refused. */
static bool filter_read(hf_request_t *request, const char *name, char *value, size_t size,
                        bool (*valid)(const char *), const char *message, const char **filter) {
    const char *query = request->http->query;
    if (!hf_query_has(query, name)) return true;
    if (!hf_query_get(query, name, value, size) || value[0] == '\0' ||
        (valid != NULL && !valid(value))) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, name);
        return false;
    }
    *filter = value;
    return true;
}

/* Reads after, limit and the filters, in that order; false after answering 400. */
static bool page_read(hf_request_t *request, page_t *page) {
    page->after = 0;
    page->limit = HF_HISTORY_PAGE_DEFAULT;
    page->user = page->reservation = page->seat = NULL;
    return bounds_read(request, page) &&
           filter_read(request, "seat", page->seat_value, sizeof page->seat_value, seat_id_form,
                       "seat must be a seat id: SECTION-ROW-NUMBER", &page->seat) &&
           filter_read(request, "user", page->user_value, sizeof page->user_value, NULL,
                       "user must be a user_id: 1 to 128 bytes", &page->user) &&
           filter_read(request, "reservation", page->reservation_value,
                       sizeof page->reservation_value, hf_core_id_valid,
                       "reservation must be a hold's reservation_id", &page->reservation);
}

/* A page in progress: the store passes each entry to entry_listed, which counts what it
 * examines and lists those the filters pick. */
typedef struct listing {
    hf_json_t *json;
    const page_t *page;
    int unit; /* a calendar's (hf_calendar_unit_t), or -1 for an event's history */
    uint32_t examined, returned;
    bool more, damaged;
    int64_t last_examined, last;
} listing_t;

/* The length of the JSON string at text (text[0] is its quote), quotes included; 0 when it
 * does not end. */
static size_t string_span(const char *text, size_t length) {
    for (size_t i = 1; i < length; i++) {
        if (text[i] == '\\') i++;
        else if (text[i] == '"') return i + 1;
    }
    return 0;
}

/* The length of the JSON value at text, up to the ',' or '}' that follows it in its object;
 * 0 when there is none. */
static size_t value_span(const char *text, size_t length) {
    int depth = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '"') {
            size_t span = string_span(text + i, length - i);
            if (span == 0) return 0;
            i += span - 1;
        } else if (depth == 0 && (c == ',' || c == '}')) {
            return i;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return 0;
}

/* The members an entry's subject gives (below), which older rows also have in their data; the
 * allocation of an allocation's hold or order is among its stored items. */
static bool subject_key(const char *key, size_t length) {
    static const char *const keys[] = {"reservation_id", "user_id", "seats",
                                       "pools",          "items",   "allocation"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i]) == length && memcmp(keys[i], key, length) == 0) return true;
    return false;
}

/* The stored data's members, as stored, but for the subject's when the entry has one; false
 * when the data is no flat object of members (a damaged row). */
static bool data_members_write(hf_json_t *json, const hf_stored_history_t *entry) {
    const char *data = entry->data;
    size_t length = entry->data_length, at = 1;
    while (at < length && data[at] == '"') {
        size_t key = string_span(data + at, length - at);
        if (key == 0 || at + key >= length || data[at + key] != ':') return false;
        size_t value_at = at + key + 1;
        size_t value = value_span(data + value_at, length - value_at);
        if (value == 0) return false;
        if (!entry->has_subject || !subject_key(data + at + 1, key - 2)) {
            hf_json_separator_write(json);
            hf_buffer_append(json->out, data + at, key + 1 + value);
        }
        at = value_at + value;
        if (data[at] == ',') at++;
    }
    return at == length - 1 && data[at] == '}';
}

static void string_or_null(hf_json_t *json, const char *text) {
    if (text != NULL) hf_json_string(json, text);
    else hf_json_null(json);
}

/* reservation_id, user_id, seats and pools of the hold or order the entry is about: the stored
 * row's items are {"seats":[...],"pools":{...}} (store/rows.c), spliced in as they are; none
 * when the store has no such hold or order (a payment for an unknown hold). */
/* One stored use {"resource", "from", "to", "quantity", "total"} (steps) as an item, its steps
 * as the calendar's unit writes them. */
static void use_write(hf_json_t *json, json_t *use, uint8_t unit) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "resource");
    hf_json_string(json, json_string_value(json_object_get(use, "resource")));
    HF_JSON_KEY(json, "from");
    hf_calendar_step_json(json, unit, (int32_t)json_integer_value(json_object_get(use, "from")));
    HF_JSON_KEY(json, "to");
    hf_calendar_step_json(json, unit, (int32_t)json_integer_value(json_object_get(use, "to")));
    HF_JSON_KEY(json, "quantity");
    hf_json_int(json, json_integer_value(json_object_get(use, "quantity")));
    HF_JSON_KEY(json, "total");
    hf_json_int(json, json_integer_value(json_object_get(use, "total")));
    hf_json_object_end(json);
}

/* A calendar hold's or order's stored uses ({"uses": [...]}, store/rows.h) as "items"; false
 * when they are not such a list (a damaged row). */
static bool uses_write(hf_json_t *json, const char *items, uint8_t unit) {
    json_t *document = json_loads(items, 0, NULL);
    json_t *uses = json_object_get(document, "uses");
    bool whole = json_is_array(uses);
    for (size_t i = 0; whole && i < json_array_size(uses); i++) {
        json_t *use = json_array_get(uses, i);
        whole = json_is_string(json_object_get(use, "resource")) &&
                json_is_integer(json_object_get(use, "from")) &&
                json_is_integer(json_object_get(use, "to"));
    }
    if (whole) {
        HF_JSON_KEY(json, "items");
        hf_json_array_begin(json);
        for (size_t i = 0; i < json_array_size(uses); i++)
            use_write(json, json_array_get(uses, i), unit);
        hf_json_array_end(json);
    }
    json_decref(document);
    return whole;
}

static void subject_write(hf_json_t *json, const hf_stored_history_t *entry, int unit) {
    HF_JSON_KEY(json, "reservation_id");
    string_or_null(json, entry->reservation_id);
    HF_JSON_KEY(json, "user_id");
    string_or_null(json, entry->user_id);
    /* A calendar's entries carry its items, never seats and pools (API.md section 12). */
    if (unit >= 0) {
        if (!entry->items || !uses_write(json, entry->items, (uint8_t)unit)) {
            HF_JSON_KEY(json, "items");
            hf_json_array_begin(json);
            hf_json_array_end(json);
        }
        return;
    }
    size_t length = entry->items ? strlen(entry->items) : 0;
    if (length > 2 && entry->items[0] == '{' && entry->items[length - 1] == '}') {
        hf_json_separator_write(json);
        hf_buffer_append(json->out, entry->items + 1, length - 2);
        return;
    }
    HF_JSON_KEY(json, "seats");
    hf_json_array_begin(json);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    hf_json_object_end(json);
}

/* {"seq":…,"type":…,"at":…, the subject's members, then the stored data's own}. */
static bool entry_write(hf_json_t *json, const hf_stored_history_t *entry, int unit) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "seq");
    hf_json_int(json, entry->seq);
    HF_JSON_KEY(json, "type");
    hf_json_string(json, entry->type);
    HF_JSON_KEY(json, "at");
    hf_json_time(json, entry->at_ms);
    if (entry->has_subject) subject_write(json, entry, unit);
    bool whole = data_members_write(json, entry);
    hf_json_object_end(json);
    return whole;
}

bool hf_history_entry_write(hf_buffer_t *out, const hf_stored_history_t *entry, int calendar_unit) {
    hf_json_t json;
    hf_json_init(&json, out);
    return entry_write(&json, entry, calendar_unit);
}

/* Whether the stored items, {"seats":[...],"pools":{...}} as store/rows.c writes them (seat
 * ids need no escapes), list seat. */
static bool seats_have(const char *items, const char *seat) {
    static const char SEATS[] = "{\"seats\":[";
    if (items == NULL || strncmp(items, SEATS, sizeof SEATS - 1) != 0) return false;
    size_t length = strlen(items), at = sizeof SEATS - 1, seat_length = strlen(seat);
    while (at < length && items[at] == '"') {
        size_t span = string_span(items + at, length - at);
        if (span == 0) return false;
        if (span - 2 == seat_length && memcmp(items + at + 1, seat, seat_length) == 0) return true;
        at += span;
        if (at < length && items[at] == ',') at++;
    }
    return false;
}

static bool text_is(const char *text, const char *wanted) {
    return text != NULL && strcmp(text, wanted) == 0;
}

/* Whether the entry is one the page's filters pick: all of them (AND), by the fields its
 * subject gives, so an entry about no hold or order matches no filter. */
static bool entry_matches(const page_t *page, const hf_stored_history_t *entry) {
    if (!page->user && !page->reservation && !page->seat) return true;
    return entry->has_subject && (!page->user || text_is(entry->user_id, page->user)) &&
           (!page->reservation || text_is(entry->reservation_id, page->reservation)) &&
           (!page->seat || seats_have(entry->items, page->seat));
}

static int entry_listed(void *context, const hf_stored_history_t *entry) {
    listing_t *listing = context;
    listing->examined++;
    listing->last_examined = entry->seq;
    if (!entry_matches(listing->page, entry)) return 0;
    if (listing->returned == listing->page->limit) {
        listing->more = true;
        return HF_STORE_LIST_STOP;
    }
    if (!entry_write(listing->json, entry, listing->unit)) {
        listing->damaged = true;
        return -1;
    }
    listing->last = entry->seq;
    listing->returned++;
    return 0;
}

/* The rows a page reads of the unit's history: one past the page tells whether more follow;
 * a filtered page reads at most HF_HISTORY_SCAN_MAX, whatever they match. */
static hf_store_history_query_t query_of(const char *unit_id, const page_t *page) {
    bool filtered = page->user || page->reservation || page->seat;
    return (hf_store_history_query_t){.event_id = unit_id,
                                      .after_seq = page->after,
                                      .limit = filtered ? HF_HISTORY_SCAN_MAX : page->limit + 1};
}

/* next: the last entry returned when more matched; else, when the read stopped at its bound,
 * the last entry it examined (more may match beyond it: a filtered page only); else null. */
static void page_end(hf_json_t *json, const listing_t *listing,
                     const hf_store_history_query_t *query) {
    hf_json_array_end(json);
    HF_JSON_KEY(json, "next");
    if (listing->more) hf_json_int(json, listing->last);
    else if (listing->examined == query->limit) hf_json_int(json, listing->last_examined);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* A page of the history of unit_id: an event (event set) or a calendar of unit (>= 0; API.md
 * section 12: its entries carry items, and it has no seats to filter by). */
static void history_reply(hf_request_t *request, const char *unit_id, const hf_event_t *event,
                          int unit) {
    page_t page;
    if (!page_read(request, &page)) return;
    hf_store_t *store = request->context->store;
    if (!store) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "no store to read the history from",
                       NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "history");
    hf_json_array_begin(&json);
    listing_t listing = {.json = &json, .page = &page, .unit = unit};
    hf_store_history_query_t query = query_of(unit_id, &page);
    uint32_t seat_index;
    /* A seat the event does not have is in no entry: nothing to read. */
    bool none = page.seat && (!event || !hf_core_seat_find(event, page.seat, &seat_index));
    char error[512] = "";
    if (!none &&
        hf_store_read_history(store, &query, entry_listed, &listing, error, sizeof error) != 0) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE,
                       listing.damaged ? "a history entry is damaged"
                                       : "reading the history failed; retry",
                       NULL);
        return;
    }
    page_end(&json, &listing, &query);
}

static void handle_history(hf_request_t *request) {
    const hf_event_t *event = hf_core_event(request->core, request->params[0], NULL);
    if (!event) hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
    else history_reply(request, event->id, event, -1);
}

static void handle_calendar_history(hf_request_t *request) {
    const hf_calendar_t *calendar = hf_core_calendar(request->core, request->params[0], NULL);
    if (!calendar) hf_reply_error(request, HF_API_ERROR_CALENDAR_NOT_FOUND, NULL, NULL);
    else history_reply(request, calendar->definition.id, NULL, calendar->definition.unit);
}

/* Today every route takes what the HTTP layer reads (1 MiB); a GET reads no body. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"GET", "/v1/events/{}/history", handle_history, 0, BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/calendars/{}/history", handle_calendar_history, 0, BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
};

const hf_route_table_t hf_handlers_history_routes = {routes, sizeof routes / sizeof routes[0], 0};
