/* A cancel job's offers on another unit's rebook_to, the job's side (offers.h): batches sent
 * from the job's cursor and their answers applied, open offers past their expiry asked about,
 * and the driver's timer. The state changes are core/jobs.h's. */
#include "cluster/offers.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/call.h"
#include "cluster/internal.h"
#include "core/jobs.h"
#include "lib/log.h"

/* ---- the batch, written ---- */

static void order_write(hf_json_t *json, const hf_offer_order_t *order) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, order->order_id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, order->user_id);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, order->total);
    HF_JSON_KEY(json, "seats");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < order->seat_count; i++) hf_json_string(json, order->seat_ids[i]);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "groups");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < order->group_count; i++) {
        const hf_offer_group_t *group = &order->groups[i];
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "section");
        hf_json_string(json, group->section_id);
        HF_JSON_KEY(json, "price");
        hf_json_int(json, group->price);
        HF_JSON_KEY(json, "together");
        hf_json_bool(json, group->together);
        HF_JSON_KEY(json, "first");
        hf_json_int(json, group->first);
        HF_JSON_KEY(json, "count");
        hf_json_int(json, group->count);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < order->pool_count; i++) {
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "pool");
        hf_json_string(json, order->pools[i].pool_id);
        HF_JSON_KEY(json, "quantity");
        hf_json_int(json, order->pools[i].quantity);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
    hf_json_object_end(json);
}

/* The job's next orders from its cursor into out (a NUL-ended JSON body); how many. */
static uint32_t batch_write(hf_cluster_t *cluster, uint32_t job_index, hf_buffer_t *out) {
    const hf_core_t *core = cluster->context->core;
    const hf_job_t *job = hf_core_job_at(core, job_index);
    hf_offer_scratch_t *scratch = cluster->offer_scratch;
    hf_offer_order_t order = {.seat_ids = scratch->seat_ids,
                              .groups = scratch->groups,
                              .pools = scratch->pools};
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "job_id");
    hf_json_string(&json, job->id);
    HF_JSON_KEY(&json, "offer_ttl_ms");
    hf_json_int(&json, job->offer_ttl_ms);
    HF_JSON_KEY(&json, "orders");
    hf_json_array_begin(&json);
    uint32_t cursor = job->cursor, count = 0;
    while (count < HF_REBOOK_BATCH_MAX && out->length < HF_REBOOK_BODY_SOFT_MAX &&
           hf_core_job_remote_order(core, job_index, &cursor, &order, scratch)) {
        order_write(&json, &order);
        count++;
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
    hf_buffer_append_char(out, '\0');
    return count;
}

/* ---- the job's side: a batch and its answer ---- */

static rebook_batch_t *batch_of(hf_cluster_t *cluster, const char *job_id) {
    for (size_t i = 0; i < HF_REBOOK_JOBS_MAX; i++)
        if (cluster->batches[i].used && strcmp(cluster->batches[i].job_id, job_id) == 0)
            return &cluster->batches[i];
    return NULL;
}

static rebook_batch_t *batch_take(hf_cluster_t *cluster) {
    for (size_t i = 0; i < HF_REBOOK_JOBS_MAX; i++)
        if (!cluster->batches[i].used) return &cluster->batches[i];
    return NULL;
}

/* The answers of a 200, pointing into answer; how many (0 for a body that is not one). */
static uint32_t answers_read(json_t *answer, hf_offer_answer_t *out) {
    json_t *offers = json_object_get(answer, "offers");
    size_t count = json_is_array(offers) ? json_array_size(offers) : 0;
    if (count > HF_REBOOK_BATCH_MAX) return 0;
    for (size_t i = 0; i < count; i++) {
        json_t *offer = json_array_get(offers, i);
        const char *order_id = json_string_value(json_object_get(offer, "order_id"));
        if (!order_id) return 0;
        out[i] = (hf_offer_answer_t){
            .order_id = order_id,
            .reservation_id = json_string_value(json_object_get(offer, "reservation_id")),
            .expires_at_ms = json_integer_value(json_object_get(offer, "expires_at_ms")),
            .ended = json_is_true(json_object_get(offer, "ended"))};
    }
    return (uint32_t)count;
}

/* The batch's orders again, each refunded (no reservation): the cursor has not moved since the
 * batch left (one batch in flight per job, and the job's own steps leave it). */
static uint32_t batch_refusals(hf_cluster_t *cluster, uint32_t job_index, uint32_t sent,
                               hf_offer_answer_t *out) {
    const hf_core_t *core = cluster->context->core;
    hf_offer_scratch_t *scratch = cluster->offer_scratch;
    hf_offer_order_t order = {.seat_ids = scratch->seat_ids,
                              .groups = scratch->groups,
                              .pools = scratch->pools};
    uint32_t cursor = hf_core_job_at(core, job_index)->cursor, count = 0;
    while (count < sent && hf_core_job_remote_order(core, job_index, &cursor, &order, scratch))
        out[count++] = (hf_offer_answer_t){.order_id = order.order_id};
    return count;
}

/* What the target's owner answered, applied as a command of its own (its records go in the
 * open batch): a 200's offers; a 404 (no such event there: nothing is equivalent) refunds the
 * batch's orders; anything else is sent again later. */
static void batch_apply(hf_cluster_t *cluster, rebook_batch_t *batch, int status, const char *body,
                        size_t length) {
    hf_context_t *context = cluster->context;
    hf_time_ms_t now = hf_context_now_ms(context);
    uint32_t job_index;
    if (!hf_core_job_find(context->core, batch->job_id, &job_index)) return;
    hf_offer_answer_t *answers = cluster->offer_answers;
    uint32_t count = 0;
    json_t *answer = status == 200 ? json_loadb(body, length, 0, NULL) : NULL;
    if (status == 200) count = answers_read(answer, answers);
    if (status == 404) count = batch_refusals(cluster, job_index, batch->sent, answers);
    bool usable = (status == 200 && (count > 0 || batch->sent == 0)) || status == 404;
    if (usable) {
        hf_core_advance(context->core, now);
        uint32_t applied = hf_core_job_remote_apply(context->core, job_index, answers, count, now);
        if (applied < count)
            HF_LOG_FIELDS(HF_LOG_WARNING, "rebooking batch applied in part",
                          HF_LOG_TEXT("job_id", batch->job_id),
                          HF_LOG_NUMBER("answers", (double)count),
                          HF_LOG_NUMBER("applied", (double)applied));
    } else {
        cluster->offers_retry_at_ms = now + HF_REBOOK_RETRY_MS;
        HF_LOG_FIELDS(HF_LOG_WARNING, "rebooking batch not answered; sent again later",
                      HF_LOG_TEXT("job_id", batch->job_id),
                      HF_LOG_NUMBER("status", (double)status));
    }
    json_decref(answer);
}

static void on_batch(void *state, int status, const char *body, size_t length) {
    rebook_batch_t *batch = state;
    hf_cluster_t *cluster = batch->cluster;
    /* A rebuild since it left: the core it was read from is gone; the next tick reads again. */
    if (!cluster->stopped && !cluster->context->store_failed &&
        cluster->rebuilds == batch->rebuilds)
        batch_apply(cluster, batch, status, body, length);
    batch->used = false;
}

static void batch_send(hf_cluster_t *cluster, uint32_t job_index) {
    const hf_job_t *job = hf_core_job_at(cluster->context->core, job_index);
    rebook_batch_t *batch = batch_take(cluster);
    if (!batch) return;
    hf_buffer_t *body = &cluster->offer_body;
    hf_buffer_reset(body);
    uint32_t sent = batch_write(cluster, job_index, body);
    if (sent == 0) {
        /* Nothing to offer from the cursor: the orders left were passed over (or one is
         * locked); the apply moves the cursor past them and ends the job at the end. */
        hf_time_ms_t now = hf_context_now_ms(cluster->context);
        hf_core_advance(cluster->context->core, now);
        hf_core_job_remote_apply(cluster->context->core, job_index, NULL, 0, now);
        return;
    }
    char path[64 + HF_ID_SIZE_MAX];
    snprintf(path, sizeof path, "/v1/cluster/events/%s/offers", job->rebook_to);
    *batch = (rebook_batch_t){.used = true,
                              .cluster = cluster,
                              .sent = sent,
                              .rebuilds = cluster->rebuilds};
    snprintf(batch->job_id, sizeof batch->job_id, "%s", job->id);
    if (!hf_cluster_call(cluster, job->rebook_to, "POST", path, body->data, on_batch, batch))
        batch->used = false;
}

static void batches_send(hf_cluster_t *cluster, hf_time_ms_t now) {
    hf_core_t *core = cluster->context->core;
    if (now < cluster->offers_retry_at_ms) return;
    for (uint32_t i = 0; i < hf_core_job_count(core); i++)
        if (hf_core_job_remote(core, i) && !batch_of(cluster, hf_core_job_at(core, i)->id))
            batch_send(cluster, i);
}

/* ---- the job's side: open offers past their expiry, asked about ---- */

rebook_message_t *hf_cluster_message_take(rebook_message_t *slots, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!slots[i].used) return &slots[i];
    return NULL;
}

static bool asking_already(const hf_cluster_t *cluster, const char *order_id) {
    for (size_t i = 0; i < HF_REBOOK_ASKING_MAX; i++)
        if (cluster->offer_asking[i].used &&
            strcmp(cluster->offer_asking[i].order_id, order_id) == 0)
            return true;
    return false;
}

/* The hold's owner's word: committed or in progress is the exchange's resolution's to settle
 * (the order is locked); still held moves the expiry; ended, or a hold it does not have,
 * refunds the order. Anything else is asked again next period. */
static void asked_apply(hf_cluster_t *cluster, const rebook_message_t *asked, int status,
                        const char *body, size_t length) {
    json_t *answer = status == 200 ? json_loadb(body, length, 0, NULL) : NULL;
    const char *decision = json_string_value(json_object_get(answer, "decision"));
    const char *hold_status = json_string_value(json_object_get(answer, "status"));
    bool undecided = decision && strcmp(decision, "not_committed") == 0;
    bool held = undecided && hold_status && strcmp(hold_status, "held") == 0;
    bool ended = status == 404 || (undecided && !held);
    hf_core_t *core = cluster->context->core;
    hf_time_ms_t now = hf_context_now_ms(cluster->context);
    if (held || ended) hf_core_advance(core, now);
    if (held)
        hf_core_job_offer_held(core, asked->order_id, asked->hold_id,
                               json_integer_value(json_object_get(answer, "expires_at_ms")), now);
    if (ended) {
        hf_core_job_offer_ended(core, asked->order_id, asked->hold_id, now);
        HF_LOG_FIELDS(HF_LOG_INFO, "rebooking offer found ended at its expiry",
                      HF_LOG_TEXT("order_id", asked->order_id),
                      HF_LOG_TEXT("hold", asked->hold_id));
    }
    json_decref(answer);
}

static void on_asked(void *state, int status, const char *body, size_t length) {
    rebook_message_t *asked = state;
    hf_cluster_t *cluster = asked->cluster;
    if (!cluster->stopped && !cluster->context->store_failed)
        asked_apply(cluster, asked, status, body, length);
    asked->used = false;
}

static void lapsed_ask(hf_cluster_t *cluster, hf_time_ms_t now) {
    hf_remote_offer_view_t views[HF_REBOOK_ASKING_MAX];
    uint32_t count = hf_core_job_remote_lapsed(cluster->context->core, now - HF_REBOOK_ASK_AFTER_MS,
                                               views, HF_REBOOK_ASKING_MAX);
    for (uint32_t i = 0; i < count; i++) {
        if (asking_already(cluster, views[i].order_id)) continue;
        rebook_message_t *asked = hf_cluster_message_take(cluster->offer_asking,
                                                          HF_REBOOK_ASKING_MAX);
        if (!asked) return;
        *asked = (rebook_message_t){.used = true, .cluster = cluster};
        snprintf(asked->order_id, sizeof asked->order_id, "%s", views[i].order_id);
        snprintf(asked->hold_id, sizeof asked->hold_id, "%s", views[i].hold_id);
        char path[64 + HF_SERVER_ID_SIZE];
        snprintf(path, sizeof path, "/v1/cluster/holds/%s/decision", asked->hold_id);
        if (!hf_cluster_call(cluster, views[i].rebook_to, "GET", path, NULL, on_asked, asked))
            asked->used = false;
    }
}

/* ---- the timer ---- */

static void on_offers_timer(uv_timer_t *timer) {
    hf_cluster_t *cluster = timer->data;
    if (cluster->stopped || cluster->context->store_failed) return;
    hf_time_ms_t now = hf_context_now_ms(cluster->context);
    batches_send(cluster, now);
    hf_cluster_offers_tell(cluster);
    if (++cluster->offers_ticks % (HF_REBOOK_ASK_EVERY_MS / HF_REBOOK_EVERY_MS) == 0)
        lapsed_ask(cluster, now);
}

void hf_cluster_offers_start(hf_cluster_t *cluster, bool driven) {
    cluster->offer_scratch = malloc(sizeof *cluster->offer_scratch);
    cluster->offer_answers = malloc(HF_REBOOK_BATCH_MAX * sizeof *cluster->offer_answers);
    if (!cluster->offer_scratch || !cluster->offer_answers) abort(); /* out of memory */
    hf_buffer_init(&cluster->offer_body);
    cluster->offering = true;
    cluster->offers_driven = driven;
    if (!driven) return;
    uv_timer_init(cluster->loop, &cluster->offers_timer);
    cluster->offers_timer.data = cluster;
    uv_timer_start(&cluster->offers_timer, on_offers_timer, HF_REBOOK_EVERY_MS, HF_REBOOK_EVERY_MS);
}

static void offers_free(hf_cluster_t *cluster) {
    free(cluster->offer_scratch);
    free(cluster->offer_answers);
    cluster->offer_scratch = NULL;
    cluster->offer_answers = NULL;
    hf_buffer_free(&cluster->offer_body);
}

static void on_offers_closed(uv_handle_t *handle) { offers_free(handle->data); }

void hf_cluster_offers_stop(hf_cluster_t *cluster) {
    if (!cluster->offering) return;
    cluster->offering = false;
    if (cluster->offers_driven) uv_close((uv_handle_t *)&cluster->offers_timer, on_offers_closed);
    else offers_free(cluster);
}
