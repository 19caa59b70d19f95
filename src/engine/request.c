/* Replies (request.h): every error answer takes its code, status and default message from
 * the error table (errors.h). */
#include "engine/request.h"

#include <stdio.h>
#include <string.h>

void hf_request_init(hf_request_t *request, hf_context_t *context, const hf_http_request_t *http,
                     hf_http_response_t *response) {
    request->context = context;
    request->route = NULL;
    request->core = context->core;
    request->http = http;
    request->response = response;
    for (size_t i = 0; i < HF_ROUTE_PARAMS_MAX; i++) request->params[i][0] = '\0';
    request->body = NULL;
    request->flat = NULL;
    request->scratch = NULL;
    request->now_ms = 0;
    request->head = false;
    request->rests_on_known = false;
    request->rests_on_change = 0;
    request->unit[0] = '\0';
    request->acting_user[0] = '\0';
    request->token_refusal = NULL;
}

bool hf_request_owner_check(hf_request_t *request, const char *owner) {
    if (!request->acting_user[0] || strcmp(request->acting_user, owner) == 0) return true;
    hf_reply_error(request, HF_API_ERROR_NOT_OWNER, NULL, NULL);
    return false;
}

void hf_reply_begin(hf_request_t *request, int status, hf_json_t *json) {
    request->response->status = status;
    hf_buffer_reset(&request->response->body);
    hf_json_init(json, &request->response->body);
}

void hf_reply_error_begin(hf_request_t *request, hf_api_error_t id, const char *message,
                          hf_json_t *json) {
    const hf_api_error_entry_t *entry = hf_errors_entry(id);
    hf_reply_begin(request, entry->status, json);
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "error");
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "code");
    hf_json_string(json, entry->code);
    HF_JSON_KEY(json, "message");
    hf_json_string(json, message ? message : entry->message);
}

void hf_reply_error_end(hf_json_t *json) {
    hf_json_object_end(json);
    hf_json_object_end(json);
}

void hf_reply_error(hf_request_t *request, hf_api_error_t id, const char *message,
                    const char *field) {
    hf_json_t json;
    hf_reply_error_begin(request, id, message, &json);
    if (field) {
        HF_JSON_KEY(&json, "field");
        hf_json_string(&json, field);
    }
    hf_reply_error_end(&json);
}

void hf_reply_error_naming(hf_request_t *request, hf_api_error_t id, const char *member,
                           const char *value) {
    hf_json_t json;
    hf_reply_error_begin(request, id, NULL, &json);
    hf_json_key(&json, member);
    hf_json_string(&json, value);
    hf_reply_error_end(&json);
}

void hf_reply_invalid(hf_request_t *request, const hf_error_detail_t *detail,
                      const hf_fields_source_t *source) {
    char path[HF_FIELDS_TEXT_SIZE], message[HF_FIELDS_TEXT_SIZE];
    hf_fields_path(detail, source, path, sizeof path);
    hf_fields_message(detail, source, message, sizeof message);
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, path);
}

/* 429 user_limit_exceeded with the numbers: "limit", "current", "requested". */
static void reply_user_limit(hf_request_t *request, const hf_error_detail_t *detail,
                             const hf_hold_request_t *hold_request) {
    char message[HF_FIELDS_TEXT_SIZE];
    hf_fields_user_limit(detail, hold_request ? hold_request->user_id : NULL, message,
                         sizeof message);
    hf_json_t json;
    hf_reply_error_begin(request, HF_API_ERROR_USER_LIMIT_EXCEEDED, message, &json);
    HF_JSON_KEY(&json, "limit");
    hf_json_int(&json, detail->limit);
    HF_JSON_KEY(&json, "current");
    hf_json_int(&json, detail->current);
    HF_JSON_KEY(&json, "requested");
    hf_json_int(&json, detail->requested);
    hf_reply_error_end(&json);
}

void hf_reply_core_error(hf_request_t *request, hf_error_t error, const hf_error_detail_t *detail,
                         const hf_fields_source_t *source) {
    if (error == HF_ERROR_INVALID_REQUEST) {
        hf_fields_source_t none = {HF_FIELDS_HOLD, NULL, NULL};
        hf_error_detail_t unknown = {.field = "body"};
        hf_reply_invalid(request, detail && detail->field ? detail : &unknown,
                         source ? source : &none);
        return;
    }
    const hf_hold_request_t *hold_request = source ? source->request : NULL;
    if (error == HF_ERROR_USER_LIMIT_EXCEEDED && detail) {
        reply_user_limit(request, detail, hold_request);
        return;
    }
    hf_json_t json;
    hf_reply_error_begin(request, hf_errors_from_core(error), NULL, &json);
    bool seats = error == HF_ERROR_SEAT_NOT_FOUND || error == HF_ERROR_SEATS_UNAVAILABLE;
    if (seats && detail && hold_request) {
        HF_JSON_KEY(&json, "seats");
        hf_json_array_begin(&json);
        for (uint32_t i = 0; i < detail->item_count; i++)
            hf_json_string(&json, hold_request->seat_ids[detail->items[i]]);
        hf_json_array_end(&json);
    }
    bool pool = error == HF_ERROR_POOL_NOT_FOUND || error == HF_ERROR_INSUFFICIENT_QUANTITY;
    if (pool && detail && hold_request) {
        HF_JSON_KEY(&json, "pool");
        hf_json_string(&json, hold_request->pools[detail->pool].pool_id);
    }
    /* Only best_available names a section in a hold (API.md section 3). */
    if (error == HF_ERROR_SECTION_NOT_FOUND && hold_request && hold_request->best_section) {
        HF_JSON_KEY(&json, "section");
        hf_json_string(&json, hold_request->best_section);
    }
    if (error == HF_ERROR_INSUFFICIENT_QUANTITY && detail) {
        HF_JSON_KEY(&json, "available");
        hf_json_int(&json, detail->available);
    }
    hf_reply_error_end(&json);
}
