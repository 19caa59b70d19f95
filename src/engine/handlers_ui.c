/* The box-office page (API.md section 10): files of ui/, embedded in the binary. */
#include "engine/internal.h"

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

void hf_handle_ui_index(hf_request_t *request) { reply_asset(request, "index.html"); }

/* One page serves every event: it reads the event id from its own address. */
void hf_handle_ui_event(hf_request_t *request) { reply_asset(request, "event.html"); }

void hf_handle_ui_file(hf_request_t *request) { reply_asset(request, request->params[0]); }
