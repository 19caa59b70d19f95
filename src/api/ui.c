/* The box-office page (ui.h): files of ui/, embedded in the binary. */
#include "api/ui.h"

#include "lib/limits.h"
#include "lib/buffer.h"
#include "net/assets.h"

static void reply_asset(hf_request_t *request, const char *name) {
    const hf_asset_t *asset = hf_asset_find(name);
    if (!asset) {
        hf_reply_error(request, HF_API_ERROR_NOT_FOUND, "no such page", NULL);
        return;
    }
    request->response->status = 200;
    request->response->content_type = asset->content_type;
    hf_buffer_reset(&request->response->body);
    hf_buffer_append(&request->response->body, asset->data, asset->length);
}

static void handle_ui_index(hf_request_t *request) { reply_asset(request, "index.html"); }

/* One page serves every event: it reads the event id from its own address. */
static void handle_ui_event(hf_request_t *request) { reply_asset(request, "event.html"); }

/* Likewise one page for every calendar. */
static void handle_ui_calendar(hf_request_t *request) { reply_asset(request, "calendar.html"); }

static void handle_ui_file(hf_request_t *request) { reply_asset(request, request->params[0]); }

static const hf_route_t routes[] = {
    {"GET", "/", handle_ui_index, HF_ROUTE_PUBLIC, HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
    {"GET", "/ui/events/{}", handle_ui_event, HF_ROUTE_PUBLIC, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_NO_UNIT},
    {"GET", "/ui/calendars/{}", handle_ui_calendar, HF_ROUTE_PUBLIC, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_NO_UNIT},
    {"GET", "/ui/{}", handle_ui_file, HF_ROUTE_PUBLIC, HF_HTTP_BODY_SIZE_MAX, HF_ROUTE_NO_UNIT},
};

const hf_route_table_t hf_handlers_ui_routes = {routes, sizeof routes / sizeof routes[0], 0};
