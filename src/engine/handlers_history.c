/* An event's audit history (handlers_history.h).
 *
 * Where the entries come from. The store appends them in the transaction of the batch that
 * holds their changes, so what the loop thread's read-only connection sees is committed, and a
 * change whose answer was sent is durable, hence committed, hence seen. Nothing of the history
 * is kept in memory: a page is one range scan of the store's key (event, seq) of at most
 * HF_HISTORY_PAGE_MAX + 1 rows, written straight into the answer, which then waits for the
 * open batch like every read (routes.c). A change applied but not yet committed is not shown
 * yet: its own answer has not left either. */
#include "engine/handlers_history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/query.h"
#include "engine/render.h"

/* What a page asks for. */
typedef struct page {
    int64_t after;
    uint32_t limit;
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
static bool page_read(hf_request_t *request, page_t *page) {
    const char *query = request->http->query;
    /* As long as a head may be: a value too long for it would read as absent. */
    char value[HF_HTTP_HEAD_SIZE_MAX];
    long long number;
    *page = (page_t){.after = 0, .limit = HF_HISTORY_PAGE_DEFAULT};
    if (hf_query_get(query, "after", value, sizeof value)) {
        if (!integer_parse(value, 0, INT64_MAX, &number)) {
            hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                           "after must be an integer of at least 0 (the seq of an entry)",
                           "after");
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

/* A page in progress: the store passes each entry to entry_listed. */
typedef struct listing {
    hf_json_t *json;
    uint32_t limit, returned;
    bool more;
    int64_t last;
} listing_t;

/* {"seq":…,"type":…,"at":…, then the stored data's members}: the data is the store's own
 * JSON object (store/history.h), spliced in without parsing it. */
static void entry_write(hf_json_t *json, const hf_stored_history_t *entry) {
    hf_json_separator_write(json);
    hf_json_t head;
    hf_json_init(&head, json->out);
    hf_json_object_begin(&head);
    HF_JSON_KEY(&head, "seq"); hf_json_int(&head, entry->seq);
    HF_JSON_KEY(&head, "type"); hf_json_string(&head, entry->type);
    HF_JSON_KEY(&head, "at"); hf_json_time(&head, entry->at_ms);
    /* The data is "{...}": its members follow a comma, its brace closes the entry. */
    if (entry->data_length > 2) hf_buffer_append_char(json->out, ',');
    hf_buffer_append(json->out, entry->data + 1, entry->data_length - 1);
}

static int entry_listed(void *context, const hf_stored_history_t *entry) {
    listing_t *listing = context;
    if (listing->returned == listing->limit) {
        listing->more = true;
        return HF_STORE_LIST_STOP;
    }
    entry_write(listing->json, entry);
    listing->last = entry->seq;
    listing->returned++;
    return 0;
}

static void handle_history(hf_request_t *request) {
    const hf_event_t *event = hf_core_event(request->context->core, request->params[0], NULL);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
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
    listing_t listing = {&json, page.limit, 0, false, 0};
    /* One row past the page tells whether more follow. */
    hf_store_history_query_t query = {event->id, page.after, page.limit + 1};
    char error[512] = "";
    if (hf_store_read_history(store, &query, entry_listed, &listing, error, sizeof error) != 0) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "reading the history failed; retry",
                       NULL);
        return;
    }
    hf_json_array_end(&json);
    HF_JSON_KEY(&json, "next");
    if (listing.more) hf_json_int(&json, listing.last);
    else hf_json_null(&json);
    hf_json_object_end(&json);
}

/* Today every route takes what the HTTP layer reads (1 MiB); a GET reads no body. */
#define BODY_SIZE_MAX HF_HTTP_BODY_SIZE_MAX

static const hf_route_t routes[] = {
    {"GET", "/v1/events/{}/history", handle_history, 0, BODY_SIZE_MAX},
};

const hf_route_table_t hf_handlers_history_routes = {routes, sizeof routes / sizeof routes[0]};
