/* A cancel job's offers on another unit's rebook_to, the target's side (offers.h): the offers
 * placed for a batch, the ended ones told to their job's unit, and the job's unit's route that
 * hears it; with the description of an event a cancel asks for. */
#include "cluster/offers.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cluster/call.h"
#include "cluster/internal.h"
#include "core/jobs.h"
#include "lib/log.h"

/* ---- the target's side: ended offers told ---- */

static void on_told(void *state, int status, const char *body, size_t length) {
    (void)body, (void)length;
    rebook_message_t *told = state;
    /* Lost (status 0, 503): the job's unit asks at the offer's expiry (lapsed_ask). */
    if (status != 200 && !told->cluster->stopped)
        HF_LOG_FIELDS(HF_LOG_INFO, "ended rebooking offer not told; its job asks at expiry",
                      HF_LOG_TEXT("order_id", told->order_id),
                      HF_LOG_NUMBER("status", (double)status));
    told->used = false;
}

void hf_cluster_offers_tell(hf_cluster_t *cluster) {
    uint32_t free_slots = 0;
    for (size_t i = 0; i < HF_REBOOK_TELLING_MAX; i++)
        free_slots += !cluster->offer_telling[i].used;
    hf_offer_ended_t ended[HF_REBOOK_TELLING_MAX];
    uint32_t count = hf_core_offers_ended_take(cluster->context->core, ended, free_slots);
    for (uint32_t i = 0; i < count; i++) {
        rebook_message_t *told = hf_cluster_message_take(cluster->offer_telling,
                                                         HF_REBOOK_TELLING_MAX);
        if (!told) return; /* not after free_slots were counted: a guard */
        *told = (rebook_message_t){.used = true, .cluster = cluster};
        memcpy(told->order_id, ended[i].order_id, sizeof told->order_id);
        memcpy(told->hold_id, ended[i].hold_id, sizeof told->hold_id);
        char path[64 + HF_ID_SIZE_MAX], body[32 + HF_SERVER_ID_SIZE];
        snprintf(path, sizeof path, "/v1/cluster/orders/%s/offer_ended", told->order_id);
        snprintf(body, sizeof body, "{\"hold\": \"%s\"}", told->hold_id);
        if (!hf_cluster_call(cluster, NULL, "POST", path, body, on_told, told)) told->used = false;
    }
}

/* ---- the routes ---- */

/* One order of a batch read into out (its arrays the scratch's); false when malformed. */
static bool offer_read(json_t *from, hf_offer_order_t *out) {
    json_t *seats = json_object_get(from, "seats"), *groups = json_object_get(from, "groups");
    json_t *pools = json_object_get(from, "pools");
    out->order_id = json_string_value(json_object_get(from, "order_id"));
    out->user_id = json_string_value(json_object_get(from, "user_id"));
    out->total = json_integer_value(json_object_get(from, "total"));
    if (!out->order_id || !out->user_id || !json_is_array(seats) || !json_is_array(groups) ||
        !json_is_array(pools) || json_array_size(seats) > HF_HOLD_ITEMS_MAX ||
        json_array_size(groups) > HF_HOLD_ITEMS_MAX || json_array_size(pools) > HF_HOLD_ITEMS_MAX)
        return false;
    out->seat_count = (uint32_t)json_array_size(seats);
    out->group_count = (uint32_t)json_array_size(groups);
    out->pool_count = (uint32_t)json_array_size(pools);
    for (uint32_t i = 0; i < out->seat_count; i++)
        if (!(out->seat_ids[i] = json_string_value(json_array_get(seats, i)))) return false;
    for (uint32_t i = 0; i < out->group_count; i++) {
        json_t *group = json_array_get(groups, i);
        json_int_t first = json_integer_value(json_object_get(group, "first"));
        json_int_t count = json_integer_value(json_object_get(group, "count"));
        out->groups[i] = (hf_offer_group_t){
            .section_id = json_string_value(json_object_get(group, "section")),
            .price = json_integer_value(json_object_get(group, "price")),
            .together = json_is_true(json_object_get(group, "together")),
            .first = (uint32_t)first,
            .count = (uint32_t)count};
        if (!out->groups[i].section_id || first < 0 || count < 1 ||
            first + count > (json_int_t)out->seat_count)
            return false;
    }
    for (uint32_t i = 0; i < out->pool_count; i++) {
        json_t *pool = json_array_get(pools, i);
        json_int_t quantity = json_integer_value(json_object_get(pool, "quantity"));
        out->pools[i] = (hf_offer_pool_t){json_string_value(json_object_get(pool, "pool")),
                                          (uint32_t)quantity};
        if (!out->pools[i].pool_id || quantity < 1 || quantity > UINT32_MAX) return false;
    }
    return true;
}

/* The batch's orders, each readable, or false after answering 400. */
static bool offers_valid(hf_request_t *request, json_t *orders, hf_offer_order_t *order) {
    int64_t ttl_ms = json_integer_value(json_object_get(request->body, "offer_ttl_ms"));
    bool valid = json_is_array(orders) && json_array_size(orders) <= HF_REBOOK_BATCH_MAX &&
                 ttl_ms > 0 && ttl_ms <= HF_JOB_OFFER_TTL_MS_MAX;
    for (size_t i = 0; valid && i < json_array_size(orders); i++)
        valid = offer_read(json_array_get(orders, i), order);
    if (!valid)
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST,
                       "a batch of rebooking orders is required", "orders");
    return valid;
}

static void offer_answer(hf_json_t *json, const hf_core_t *core, const char *order_id, bool placed,
                         uint32_t hold_index) {
    const hf_hold_t *hold = placed ? hf_core_hold_at(core, hold_index) : NULL;
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, order_id);
    HF_JSON_KEY(json, "reservation_id");
    if (hold) hf_json_string(json, hold->id);
    else hf_json_null(json);
    HF_JSON_KEY(json, "expires_at_ms");
    hf_json_int(json, hold ? hold->expires_at_ms : 0);
    HF_JSON_KEY(json, "ended");
    hf_json_bool(json,
                 hold && (hold->status == HF_HOLD_RELEASED || hold->status == HF_HOLD_EXPIRED));
    hf_json_object_end(json);
}

void hf_cluster_offers_place(hf_request_t *request) {
    hf_cluster_t *cluster = request->context->cluster;
    hf_offer_scratch_t *scratch = cluster->offer_scratch;
    if (!scratch) { /* the cluster stopped */
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "the node is stopping", NULL);
        return;
    }
    hf_offer_order_t order = {.seat_ids = scratch->seat_ids,
                              .groups = scratch->groups,
                              .pools = scratch->pools};
    json_t *orders = request->body ? json_object_get(request->body, "orders") : NULL;
    if (!offers_valid(request, orders, &order)) return;
    if (!hf_core_event(request->core, request->params[0], NULL)) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_time_ms_t expires_at_ms = request->now_ms +
                                 json_integer_value(json_object_get(request->body, "offer_ttl_ms"));
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "offers");
    hf_json_array_begin(&json);
    for (size_t i = 0; i < json_array_size(orders); i++) {
        offer_read(json_array_get(orders, i), &order);
        uint32_t hold_index = 0;
        bool placed = false;
        hf_core_job_offer_place(request->core, request->params[0], &order, expires_at_ms,
                                request->now_ms, &hold_index, &placed);
        offer_answer(&json, request->core, order.order_id, placed, hold_index);
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

void hf_cluster_offer_ended(hf_request_t *request) {
    const char *hold_id;
    if (!hf_cluster_body_text(request, "hold", &hold_id)) return;
    hf_error_t error = hf_core_job_offer_ended(request->core, request->params[0], hold_id,
                                               request->now_ms);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "order_id");
    hf_json_string(&json, request->params[0]);
    HF_JSON_KEY(&json, "hold");
    hf_json_string(&json, hold_id);
    hf_json_object_end(&json);
}

void hf_cluster_event_describe(hf_request_t *request) {
    const hf_event_t *event = hf_core_event(request->core, request->params[0], NULL);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "event_id");
    hf_json_string(&json, event->id);
    HF_JSON_KEY(&json, "currency");
    hf_json_string(&json, event->currency);
    HF_JSON_KEY(&json, "cancelled");
    hf_json_bool(&json, event->cancelled);
    hf_json_object_end(&json);
}
