/* The cluster's database work off the loop (jobs.h): the job table, the work on the
 * thread pool, the parked requests and their second dispatch. */
#include "cluster/jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/errors.h"
#include "engine/idempotency.h"
#include "engine/restore.h"
#include "lib/log.h"

/* A request waiting for a job: its deferred answer, its continuation, and a copy of the
 * request with its route (the HTTP layer's is gone once the handler returns); the headers'
 * array and the texts follow it in the same allocation. */
typedef struct parked {
    struct parked *next;
    hf_http_deferred_t deferred;
    hf_cluster_continuation_t then;
    hf_cluster_parked_t request;
} parked_t;

typedef struct slot {
    hf_cluster_job_t job;
    hf_cluster_jobs_t *jobs;
    bool used, started, finishing;
    uint64_t order; /* jobs start in the order they were asked for */
    parked_t *parked, *parked_last;
    uint32_t parked_count;
    hf_context_t *scratch; /* a list's copy of the engine's context, made on the loop */
    uv_work_t work;
} slot_t;

struct hf_cluster_jobs {
    uv_loop_t *loop;
    hf_context_t *context;
    hf_http_server_t *http;
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    uint32_t finished_holds_max;
    hf_cluster_job_done_fn done;
    void *owner;
    slot_t slots[HF_CLUSTER_JOBS_MAX];
    bool running, stopped;
    uint64_t next_order;
};

/* ---- the work, on the thread pool ---- */

static void takeover_work(hf_cluster_jobs_t *jobs, hf_cluster_job_t *job) {
    hf_store_t *store = jobs->context->store;
    job->ok = hf_store_lease_acquire(store, jobs->node_id, job->key, &job->epoch, &job->acquired,
                                     job->error, sizeof job->error) == 0;
    if (job->ok && job->acquired)
        job->ok = hf_restore_unit_fetch(store, job->key, job->now_ms, &job->rows, job->error,
                                        sizeof job->error) == 0;
    else if (job->ok) /* another node's: where it is, as the database says now */
        job->listed = hf_cluster_view_list(store, &job->view, job->error, sizeof job->error) == 0;
}

static void lookup_work(hf_cluster_jobs_t *jobs, hf_cluster_job_t *job) {
    job->ok = hf_store_unit_find(jobs->context->store, job->id_kind, job->key, job->unit,
                                 sizeof job->unit, &job->found, job->error, sizeof job->error) == 0;
}

/* Every leased unit, in the listing's order (events as created), and the records of no unit
 * into a core of the job's own: a copy of the engine's context with its own core and keys,
 * which nothing else reads until the work is done. */
static void list_work(hf_cluster_jobs_t *jobs, slot_t *slot) {
    hf_cluster_job_t *job = &slot->job;
    hf_context_t *scratch = slot->scratch;
    hf_idempotency_t keys;
    hf_idempotency_init(&keys);
    scratch->idempotency = &keys;
    scratch->durable_changes = UINT64_MAX;
    scratch->core = job->core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    hf_store_t *store = scratch->store;
    job->ok = hf_cluster_view_list(store, &job->view, job->error, sizeof job->error) == 0;
    job->listed = job->ok;
    /* The records of no unit first (refunds of no event, as the one-node list has them). */
    if (job->ok)
        job->ok = hf_restore_load_unit(scratch, store, HF_STORE_UNIT_NONE, jobs->finished_holds_max,
                                       job->error, sizeof job->error) == 0;
    for (size_t i = 0; job->ok && i < job->view.lease_count; i++)
        if (strcmp(job->view.leases[i].unit, HF_STORE_UNIT_NONE) != 0)
            job->ok = hf_restore_load_unit(scratch, store, job->view.leases[i].unit,
                                           jobs->finished_holds_max, job->error,
                                           sizeof job->error) == 0;
    hf_idempotency_free(&keys);
}

static void job_work(uv_work_t *work) {
    slot_t *slot = work->data;
    hf_cluster_job_t *job = &slot->job;
    switch (job->kind) {
    case HF_CLUSTER_JOB_TAKEOVER: takeover_work(slot->jobs, job); break;
    case HF_CLUSTER_JOB_LOOKUP: lookup_work(slot->jobs, job); break;
    case HF_CLUSTER_JOB_LIST: list_work(slot->jobs, slot); break;
    }
}

static void jobs_next(hf_cluster_jobs_t *jobs);

/* ---- parked requests ---- */

static size_t text_copy(char *to, const char *from, size_t length) {
    memcpy(to, from, length);
    to[length] = '\0';
    return length + 1;
}

/* The bytes a copy of http takes after its head: the headers' array, then the texts. */
static size_t request_extra(const hf_http_request_t *http) {
    size_t size = http->header_count * sizeof(hf_http_header_t) + strlen(http->method) +
                  strlen(http->path) + strlen(http->query) + http->body_length + 4;
    for (size_t i = 0; i < http->header_count; i++)
        size += http->headers[i].name_length + http->headers[i].value_length + 2;
    return size;
}

/* Copies http into copy, its headers and texts into extra (request_extra's bytes). */
static void request_copy(hf_http_request_t *copy, void *extra, const hf_http_request_t *http) {
    hf_http_header_t *headers = extra;
    char *text = (char *)(headers + http->header_count);
    *copy = (hf_http_request_t){.headers = headers, .header_count = http->header_count};
    copy->method = text;
    text += text_copy(text, http->method, strlen(http->method));
    copy->path = text;
    text += text_copy(text, http->path, strlen(http->path));
    copy->query = text;
    text += text_copy(text, http->query, strlen(http->query));
    copy->body = text;
    copy->body_length = http->body_length;
    text += text_copy(text, http->body, http->body_length);
    for (size_t i = 0; i < http->header_count; i++) {
        const hf_http_header_t *header = &http->headers[i];
        headers[i] = (hf_http_header_t){.name = text, .name_length = header->name_length};
        text += text_copy(text, header->name, header->name_length);
        headers[i].value = text;
        headers[i].value_length = header->value_length;
        text += text_copy(text, header->value, header->value_length);
    }
}

static parked_t *parked_copy(const hf_http_request_t *http) {
    parked_t *parked = malloc(sizeof(parked_t) + request_extra(http));
    if (!parked) abort();
    parked->next = NULL;
    request_copy(&parked->request.http, parked + 1, http);
    return parked;
}

hf_cluster_parked_t *hf_cluster_parked_new(const hf_http_request_t *http, const hf_route_t *route) {
    hf_cluster_parked_t *parked = malloc(sizeof *parked + request_extra(http));
    if (!parked) abort();
    request_copy(&parked->http, parked + 1, http);
    parked->route = route;
    return parked;
}

/* The request goes on with its continuation, into its answer kept waiting (which keeps the
 * headers written before it was parked); nothing when its client left. */
static void parked_resume(hf_cluster_jobs_t *jobs, const hf_cluster_job_t *job, parked_t *parked) {
    hf_http_response_t *response = hf_http_deferred_reopen(jobs->http, parked->deferred);
    if (!response) return;
    response->status = 200;
    response->content_type = NULL;
    hf_buffer_reset(&response->body);
    parked->then.resume(parked->then.state, job, &parked->request, response);
    hf_http_response_settle(response);
}

/* Answers a parked request 503 (the node stops). */
static void parked_refuse(hf_cluster_jobs_t *jobs, parked_t *parked) {
    hf_http_response_t *response = hf_http_deferred_reopen(jobs->http, parked->deferred);
    if (!response) return;
    response->header_count = 0;
    hf_request_t request;
    hf_request_init(&request, jobs->context, &parked->request.http, response);
    hf_reply_error(&request, HF_API_ERROR_UNAVAILABLE, "the node is stopping", NULL);
    response->durable_sequence = 0;
    hf_http_response_settle(response);
}

bool hf_cluster_jobs_park(hf_cluster_jobs_t *jobs, hf_cluster_job_t *job, hf_request_t *request,
                          hf_cluster_continuation_t then) {
    slot_t *slot = (slot_t *)job; /* the job is the slot's first member */
    if (!jobs->http || slot->parked_count >= HF_CLUSTER_JOB_PARKED_MAX) return false;
    hf_http_response_t *response = request->response;
    hf_http_deferred_t deferred = hf_http_response_defer(response);
    if (!hf_http_deferred_valid(deferred)) return false;
    hf_buffer_reset(&response->body);
    parked_t *parked = parked_copy(request->http);
    parked->deferred = deferred;
    parked->then = then;
    parked->request.route = request->route;
    if (slot->parked_last) slot->parked_last->next = parked;
    else slot->parked = parked;
    slot->parked_last = parked;
    slot->parked_count++;
    jobs_next(jobs);
    return true;
}

/* ---- the table ---- */

static void slot_release(hf_cluster_jobs_t *jobs, slot_t *slot) {
    hf_store_unit_rows_free(jobs->context->store, slot->job.rows);
    hf_cluster_view_free(&slot->job.view);
    if (slot->job.core) hf_core_destroy(slot->job.core);
    free(slot->scratch);
    memset(slot, 0, sizeof *slot);
}

static void job_after(uv_work_t *work, int status);

/* Starts the oldest job waiting when none runs. */
static void jobs_next(hf_cluster_jobs_t *jobs) {
    if (jobs->running || jobs->stopped) return;
    slot_t *next = NULL;
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++) {
        slot_t *slot = &jobs->slots[i];
        if (slot->used && !slot->started && (!next || slot->order < next->order)) next = slot;
    }
    if (!next) return;
    next->started = jobs->running = true;
    next->job.now_ms = hf_context_now_ms(jobs->context);
    if (next->job.kind == HF_CLUSTER_JOB_LIST) {
        next->scratch = malloc(sizeof *next->scratch);
        if (!next->scratch) abort();
        *next->scratch = *jobs->context;
    }
    next->work.data = next;
    int rc = uv_queue_work(jobs->loop, &next->work, job_work, job_after);
    if (rc != 0) {
        snprintf(next->job.error, sizeof next->job.error, "the thread pool refused: %s",
                 uv_strerror(rc));
        job_after(&next->work, rc);
    }
}

static void job_after(uv_work_t *work, int status) {
    slot_t *slot = work->data;
    hf_cluster_jobs_t *jobs = slot->jobs;
    jobs->running = false;
    slot->finishing = true; /* requests arriving from now on ask for a job of their own */
    if (status != 0) slot->job.ok = false;
    if (!jobs->stopped) jobs->done(jobs->owner, &slot->job);
    parked_t *parked = slot->parked;
    slot->parked = slot->parked_last = NULL;
    while (parked) {
        parked_t *next = parked->next;
        if (jobs->stopped) parked_refuse(jobs, parked);
        else parked_resume(jobs, &slot->job, parked);
        free(parked);
        parked = next;
    }
    slot_release(jobs, slot);
    jobs_next(jobs);
}

hf_cluster_job_t *hf_cluster_jobs_find(hf_cluster_jobs_t *jobs, hf_cluster_job_kind_t kind,
                                       const char *key) {
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++) {
        slot_t *slot = &jobs->slots[i];
        if (slot->used && !slot->finishing && slot->job.kind == kind &&
            strcmp(slot->job.key, key) == 0)
            return &slot->job;
    }
    return NULL;
}

hf_cluster_job_t *hf_cluster_jobs_add(hf_cluster_jobs_t *jobs, hf_cluster_job_kind_t kind,
                                      const char *key, const char *id_kind) {
    if (jobs->stopped || strlen(key) > HF_CLUSTER_UNIT_SIZE_MAX) return NULL;
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++) {
        slot_t *slot = &jobs->slots[i];
        if (slot->used) continue;
        slot->used = true;
        slot->jobs = jobs;
        slot->order = jobs->next_order++;
        slot->job.kind = kind;
        snprintf(slot->job.key, sizeof slot->job.key, "%s", key);
        snprintf(slot->job.id_kind, sizeof slot->job.id_kind, "%s", id_kind ? id_kind : "");
        return &slot->job;
    }
    return NULL;
}

size_t hf_cluster_jobs_count(const hf_cluster_jobs_t *jobs) {
    size_t count = 0;
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++) count += jobs->slots[i].used;
    return count;
}

void hf_cluster_jobs_kick(hf_cluster_jobs_t *jobs) { jobs_next(jobs); }

hf_cluster_jobs_t *hf_cluster_jobs_create(uv_loop_t *loop, hf_context_t *context,
                                          const char *node_id, uint32_t finished_holds_max,
                                          hf_cluster_job_done_fn done, void *owner) {
    hf_cluster_jobs_t *jobs = calloc(1, sizeof *jobs);
    if (!jobs) abort();
    jobs->loop = loop;
    jobs->context = context;
    snprintf(jobs->node_id, sizeof jobs->node_id, "%s", node_id);
    jobs->finished_holds_max = finished_holds_max;
    jobs->done = done;
    jobs->owner = owner;
    return jobs;
}

void hf_cluster_jobs_serve(hf_cluster_jobs_t *jobs, hf_http_server_t *http) { jobs->http = http; }

void hf_cluster_jobs_stop(hf_cluster_jobs_t *jobs) {
    if (!jobs || jobs->stopped) return;
    jobs->stopped = true;
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++) {
        slot_t *slot = &jobs->slots[i];
        if (!slot->used) continue;
        for (parked_t *parked = slot->parked, *next; parked; parked = next) {
            next = parked->next;
            parked_refuse(jobs, parked);
            free(parked);
        }
        slot->parked = slot->parked_last = NULL;
        slot->parked_count = 0;
        /* The one on the pool is released when its work returns. */
        if (!slot->started) slot_release(jobs, slot);
    }
}

void hf_cluster_jobs_free(hf_cluster_jobs_t *jobs) {
    if (!jobs) return;
    for (size_t i = 0; i < HF_CLUSTER_JOBS_MAX; i++)
        if (jobs->slots[i].used) slot_release(jobs, &jobs->slots[i]);
    free(jobs);
}
