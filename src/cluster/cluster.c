/* Several nodes (cluster.h): units and leases, the renewal, takeovers, rebuilds, routing. */
#include "cluster/internal.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dispatch/dispatch.h"
#include "engine/idempotency.h"
#include "engine/request.h"
#include "cluster/jobs.h"
#include "engine/restore.h"
#include "engine/streams.h"
#include "lib/log.h"
#include "lib/map.h"
#include "net/flat_json.h"
#include "store/backend.h"

/* ---- units ---- */

unit_entry_t *hf_cluster_unit_get(hf_cluster_t *cluster, const char *unit, bool create) {
    uint32_t index;
    size_t length = strlen(unit);
    if (hf_map_get(&cluster->unit_index, unit, length, &index)) return &cluster->units[index];
    if (!create || length > HF_CLUSTER_UNIT_SIZE_MAX || cluster->unit_count >= HF_CLUSTER_UNITS_MAX)
        return NULL;
    if (cluster->unit_count == cluster->unit_capacity) {
        cluster->unit_capacity = cluster->unit_capacity ? 2 * cluster->unit_capacity : 64;
        cluster->units = realloc(cluster->units, cluster->unit_capacity * sizeof *cluster->units);
        if (!cluster->units) abort();
    }
    assert(cluster->units != NULL);
    unit_entry_t *entry = &cluster->units[cluster->unit_count];
    memset(entry, 0, sizeof *entry);
    memcpy(entry->id, unit, length + 1);
    hf_map_put(&cluster->unit_index, unit, length, (uint32_t)cluster->unit_count++);
    return entry;
}

static void unit_owned_set(hf_cluster_t *cluster, unit_entry_t *entry, bool owned) {
    if (entry->owned == owned) return;
    entry->owned = owned;
    if (owned) cluster->owned_count++;
    else cluster->owned_count--;
}

static int64_t now_ms(hf_cluster_t *cluster) { return hf_context_now_ms(cluster->context); }

/* Reads one unit's rows into the core. false when the store could not: the lease is then
 * handed back to lapse (nobody else could have written meanwhile). */
static bool unit_load(hf_cluster_t *cluster, unit_entry_t *entry) {
    char error[512] = "";
    if (hf_restore_load_unit(cluster->context, cluster->context->store, entry->id,
                             cluster->config.finished_holds_max, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "cannot load unit %s: %s", entry->id, error);
        unit_owned_set(cluster, entry, false);
        /* Part of it may be in the core: rebuilt without it. */
        cluster->rebuild_pending = true;
        entry->loaded = true;
        return false;
    }
    entry->loaded = true;
    return true;
}

/* Acquires the unit's lease (the loop waits for one round trip: before the server listens
 * only); *taken false when another
 * live node holds it. Returns false when the store failed. */
static bool unit_acquire(hf_cluster_t *cluster, unit_entry_t *entry, bool *taken) {
    char error[512] = "";
    uint64_t epoch = 0;
    *taken = false;
    if (hf_store_lease_acquire(cluster->context->store, cluster->node_id, entry->id, &epoch, taken,
                               error, sizeof error) != 0) {
        hf_log(HF_LOG_WARNING, "cannot acquire unit %s: %s", entry->id, error);
        return false;
    }
    if (*taken) {
        entry->acquired_at_ms = now_ms(cluster);
        unit_owned_set(cluster, entry, true);
        HF_LOG_FIELDS(HF_LOG_INFO, "unit acquired", HF_LOG_TEXT("unit", entry->id),
                      HF_LOG_NUMBER("epoch", (double)epoch));
    }
    return true;
}

/* Takes a unit no live node owns and loads it: true when it is served here now. */
static bool unit_take(hf_cluster_t *cluster, unit_entry_t *entry) {
    bool taken = false;
    if (!unit_acquire(cluster, entry, &taken) || !taken) return false;
    if (entry->loaded) { /* a stale copy still in the core: the rebuild loads it afresh */
        cluster->rebuild_pending = true;
        return false;
    }
    return unit_load(cluster, entry);
}

/* ---- the rebuild: the core with exactly the owned units ---- */

static void rebuild(hf_cluster_t *cluster) {
    hf_context_t *context = cluster->context;
    cluster->rebuild_pending = false;
    cluster->rebuilds++;
    /* Nothing in flight: whatever waits past the durable sequence waits on the open batch,
     * which is dropped with the core it came from. */
    if (cluster->http) hf_http_server_fail_pending(cluster->http, context->durable_sequence);
    hf_batch_clear(context->open_batch);
    /* Every batch handed over is durable or failed (and its answers are 503s now): nothing
     * from here on waits for them, even if no batch is ever written again (PostgreSQL gone). */
    context->durable_sequence = context->open_sequence - 1;
    if (cluster->http) hf_http_server_release(cluster->http, context->durable_sequence);
    hf_streams_reset(context->streams);
    hf_core_destroy(context->core);
    context->core = hf_core_create(cluster->config.sink);
    hf_core_set_stream_records(context->core, false);
    hf_core_set_finished_max(context->core, cluster->config.finished_holds_max);
    hf_dispatch_set_finished_max(context->core, cluster->config.finished_rides_max);
    context->durable_changes = 0;
    for (size_t i = 0; i < HF_STORE_BATCHES_IN_FLIGHT_MAX; i++) context->batch_changes[i] = 0;
    hf_idempotency_free(context->idempotency);
    hf_idempotency_init(context->idempotency);
    hf_map_free(&cluster->id_units);
    hf_map_init(&cluster->id_units);
    context->durable_changes = hf_core_change_count(context->core);
    /* The units still owned are read again on the thread pool (an acquire of a lease held
     * keeps its epoch), each as a takeover that requests about it wait for; one that cannot
     * be asked for now is asked for by the next request or renewal. */
    size_t asked = 0;
    for (size_t i = 0; i < cluster->unit_count; i++) {
        unit_entry_t *entry = &cluster->units[i];
        entry->loaded = false;
        if (entry->owned &&
            (hf_cluster_jobs_find(cluster->jobs, HF_CLUSTER_JOB_TAKEOVER, entry->id) ||
             hf_cluster_jobs_add(cluster->jobs, HF_CLUSTER_JOB_TAKEOVER, entry->id, NULL)))
            asked++;
    }
    hf_cluster_jobs_kick(cluster->jobs);
    HF_LOG_FIELDS(HF_LOG_INFO, "core rebuilt: the units still owned are read again",
                  HF_LOG_NUMBER("units", (double)asked));
}

/* A unit is lost: nothing about it is answered from memory from now on. */
static void unit_lose(hf_cluster_t *cluster, unit_entry_t *entry, const char *why) {
    if (!entry->owned) return;
    unit_owned_set(cluster, entry, false);
    if (entry->loaded) cluster->rebuild_pending = true;
    HF_LOG_FIELDS(HF_LOG_WARNING, "unit lost", HF_LOG_TEXT("unit", entry->id),
                  HF_LOG_TEXT("reason", why));
}

static void on_check(uv_check_t *check) {
    hf_cluster_t *cluster = check->data;
    if (cluster->rebuild_pending && !cluster->context->store_failed &&
        hf_store_idle(cluster->context->store))
        rebuild(cluster);
}

bool hf_cluster_batch_failed(hf_cluster_t *cluster, const char *error) {
    if (!cluster || !cluster->leased) return false;
    /* Refused for a lost lease, or cut off (a taker ended this node's session after a pause,
     * or PostgreSQL went away): with leases the memory is always one load away, so the core is
     * rebuilt with the units the database still gives this node, and the node serves on (or
     * forwards, or answers 503 while PostgreSQL is gone) instead of failing for good. */
    bool lost = strncmp(error, HF_STORE_LOST_LEASE, strlen(HF_STORE_LOST_LEASE)) == 0;
    HF_LOG_FIELDS(HF_LOG_WARNING, "a batch failed: rebuilding from the store",
                  HF_LOG_TEXT("reason", lost ? "lost lease" : error));
    /* No wait for PostgreSQL on the loop (it may be paused): units answer 503 until a renewal
     * (thread pool) reaches it; its takeovers load again those still this node's. */
    for (size_t i = 0; i < cluster->unit_count; i++)
        if (cluster->units[i].owned)
            unit_lose(cluster, &cluster->units[i], lost ? "lost lease" : "a batch failed");
    cluster->renew_ok = false;
    cluster->rebuild_pending = false;
    rebuild(cluster);
    return true;
}

/* ---- the renewal ---- */

static void renew_work(uv_work_t *work) {
    hf_cluster_t *cluster = work->data;
    size_t renewed = 0;
    cluster->renew_ok = hf_store_lease_renew(cluster->context->store, cluster->node_id,
                                             cluster->address, &renewed, cluster->renew_error,
                                             sizeof cluster->renew_error) == 0 &&
                        hf_cluster_view_list(cluster->context->store, &cluster->next,
                                             cluster->renew_error,
                                             sizeof cluster->renew_error) == 0;
}

/* Units this node believes it owns that the database gives it no more are lost; a failed
 * renewal loses everything once the lease could have lapsed. */
static void leases_check(hf_cluster_t *cluster) {
    int64_t now = now_ms(cluster);
    bool expired = now - cluster->renewed_at_ms >= LEASE_MS - LEASE_MARGIN_MS;
    for (size_t i = 0; i < cluster->unit_count; i++) {
        unit_entry_t *entry = &cluster->units[i];
        if (!entry->owned) continue;
        if (!cluster->renew_ok) {
            if (expired) unit_lose(cluster, entry, "the lease could not be renewed");
            continue;
        }
        /* Acquired after the listing began: the listing may not show it yet. */
        if (entry->acquired_at_ms >= cluster->work_started_ms) continue;
        const hf_cluster_view_lease_t *lease = hf_cluster_view_lease(&cluster->view, entry->id);
        if (!lease || !lease->live || strcmp(lease->node_id, cluster->node_id) != 0)
            unit_lose(cluster, entry, "the database gives its lease to no one or another node");
    }
}

/* Lapsed leases are taken without waiting for a request, so expiries keep running: here and
 * now before the server listens, else as jobs on the thread pool. */
static size_t takeovers(hf_cluster_t *cluster, bool here) {
    size_t taken = 0;
    for (size_t i = 0; i < cluster->view.lease_count && taken < TAKEOVERS_PER_TICK; i++) {
        const hf_cluster_view_lease_t *lease = &cluster->view.leases[i];
        bool mine = strcmp(lease->node_id, cluster->node_id) == 0;
        if (lease->live && !mine) continue;
        unit_entry_t *entry = hf_cluster_unit_get(cluster, lease->unit, true);
        if (!entry || (entry->owned && entry->loaded)) continue;
        if (here) {
            if (unit_take(cluster, entry)) taken++;
            continue;
        }
        if (hf_cluster_jobs_find(cluster->jobs, HF_CLUSTER_JOB_TAKEOVER, entry->id)) continue;
        if (hf_cluster_jobs_count(cluster->jobs) >= TAKEOVER_JOBS_MAX ||
            !hf_cluster_jobs_add(cluster->jobs, HF_CLUSTER_JOB_TAKEOVER, entry->id, NULL))
            break;
        taken++;
    }
    if (!here) hf_cluster_jobs_kick(cluster->jobs);
    if (taken > 0)
        HF_LOG_FIELDS(HF_LOG_INFO, here ? "units taken over" : "takeovers asked for",
                      HF_LOG_NUMBER("units", (double)taken));
    return taken;
}

static void renew_after(uv_work_t *work, int status) {
    hf_cluster_t *cluster = work->data;
    cluster->working = false;
    if (status != 0 || cluster->stopped) return;
    if (cluster->renew_ok) {
        cluster->renewed_at_ms = cluster->work_started_ms;
        hf_cluster_view_t swap = cluster->view;
        cluster->view = cluster->next;
        cluster->next = swap;
        cluster->view.listed_at_ms = cluster->work_started_ms;
    } else {
        hf_log(HF_LOG_WARNING, "lease renewal failed: %s", cluster->renew_error);
    }
    leases_check(cluster);
    if (cluster->renew_ok && !cluster->context->store_failed) takeovers(cluster, false);
    on_check(&cluster->check);
}

static void on_timer(uv_timer_t *timer) {
    hf_cluster_t *cluster = timer->data;
    if (cluster->working || cluster->stopped) return;
    cluster->working = true;
    cluster->work_started_ms = now_ms(cluster);
    cluster->work.data = cluster;
    if (uv_queue_work(cluster->loop, &cluster->work, renew_work, renew_after) != 0)
        cluster->working = false;
}

/* ---- what the jobs found (jobs.h), applied on the loop ---- */

static void id_cache_put(hf_cluster_t *cluster, const char *id, const char *unit) {
    unit_entry_t *entry = hf_cluster_unit_get(cluster, unit, true);
    if (!entry) return;
    if (hf_map_count(&cluster->id_units) >= ID_CACHE_MAX) {
        hf_map_free(&cluster->id_units);
        hf_map_init(&cluster->id_units);
    }
    hf_map_put(&cluster->id_units, id, strlen(id), (uint32_t)(entry - cluster->units));
}

/* The lease acquired and the rows fetched on the pool: the unit goes into the core here. */
static void takeover_apply(hf_cluster_t *cluster, hf_cluster_job_t *job) {
    unit_entry_t *entry = hf_cluster_unit_get(cluster, job->key, true);
    if (!job->ok) hf_log(HF_LOG_WARNING, "cannot take unit %s over: %s", job->key, job->error);
    /* Held by another node now: not this node's any more (a unit read again after a rebuild). */
    if (entry && job->ok && !job->acquired && !entry->loaded) unit_owned_set(cluster, entry, false);
    /* Acquired but not read: the next renewal's takeovers try again (the lease is ours). */
    if (!entry || !job->acquired || !job->ok || (entry->owned && entry->loaded)) return;
    entry->acquired_at_ms = now_ms(cluster);
    unit_owned_set(cluster, entry, true);
    HF_LOG_FIELDS(HF_LOG_INFO, "unit acquired", HF_LOG_TEXT("unit", entry->id),
                  HF_LOG_NUMBER("epoch", (double)job->epoch));
    if (entry->loaded) { /* a stale copy still in the core: the rebuild loads it afresh */
        cluster->rebuild_pending = true;
        return;
    }
    char error[512] = "";
    void *rows = job->rows;
    job->rows = NULL;
    entry->loaded = true;
    if (hf_restore_unit_deliver(cluster->context, cluster->context->store, rows, job->now_ms,
                                cluster->config.finished_holds_max, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "cannot load unit %s: %s", entry->id, error);
        unit_owned_set(cluster, entry, false);
        cluster->rebuild_pending = true; /* part of it may be in the core */
    }
}

static void job_done(void *owner, hf_cluster_job_t *job) {
    hf_cluster_t *cluster = owner;
    if (job->listed) { /* the freshest view there is */
        hf_cluster_view_t swap = cluster->view;
        cluster->view = job->view;
        job->view = swap;
        cluster->view.listed_at_ms = job->now_ms;
    }
    if (job->kind == HF_CLUSTER_JOB_LOOKUP && job->ok && job->found)
        id_cache_put(cluster, job->key, job->unit);
    if (job->kind == HF_CLUSTER_JOB_TAKEOVER) takeover_apply(cluster, job);
}

/* ---- life ---- */

hf_cluster_t *hf_cluster_create(uv_loop_t *loop, hf_context_t *context,
                                const hf_cluster_config_t *config) {
    hf_cluster_t *cluster = calloc(1, sizeof *cluster);
    if (!cluster) abort();
    cluster->loop = loop;
    cluster->context = context;
    cluster->config = *config;
    snprintf(cluster->node_id, sizeof cluster->node_id, "%s", config->node_id);
    snprintf(cluster->address, sizeof cluster->address, "%s", config->address);
    cluster->leased = context->store && hf_store_has_leases(context->store);
    hf_map_init(&cluster->unit_index);
    hf_map_init(&cluster->id_units);
    cluster->forward = hf_forward_create(loop, cluster->node_id);
    cluster->jobs = hf_cluster_jobs_create(loop, context, cluster->node_id,
                                           config->finished_holds_max, job_done, cluster);
    uv_timer_init(loop, &cluster->timer);
    uv_check_init(loop, &cluster->check);
    cluster->timer.data = cluster->check.data = cluster;
    return cluster;
}

bool hf_cluster_leased(const hf_cluster_t *cluster) { return cluster && cluster->leased; }

const hf_units_methods_t hf_cluster_units = {
    .create = hf_cluster_create,
    .leased = hf_cluster_leased,
    .load = hf_cluster_load,
    .start = hf_cluster_start,
    .batch_failed = hf_cluster_batch_failed,
    .stop = hf_cluster_stop,
    .free = hf_cluster_free,
};

/* Live leases of nodes that do not answer (this node's former process, killed) lapse within
 * the lease's length: waited for, so a lone node restarted at once serves its units. */
static void wait_for_dead_owners(hf_cluster_t *cluster) {
    char error[256];
    hf_cluster_view_t *view = &cluster->view;
    int64_t deadline = now_ms(cluster) + LEASE_MS + LEASE_MARGIN_MS;
    while (now_ms(cluster) < deadline) {
        bool waiting = false;
        for (size_t i = 0; i < view->lease_count && !waiting; i++) {
            const hf_cluster_view_lease_t *lease = &view->leases[i];
            if (!lease->live || strcmp(lease->node_id, cluster->node_id) == 0) continue;
            const hf_cluster_view_node_t *node = hf_cluster_view_node(view, lease->node_id);
            waiting = node && !hf_cluster_address_answers(node->address);
        }
        if (!waiting) return;
        uv_sleep(250);
        if (hf_cluster_view_list(cluster->context->store, view, error, sizeof error)) return;
    }
}

int hf_cluster_load(hf_cluster_t *cluster) {
    if (!cluster->leased) return 0;
    char error[512] = "";
    size_t renewed = 0;
    /* The node's row first (and the fencing from now on): other nodes see it at once. */
    if (hf_store_lease_renew(cluster->context->store, cluster->node_id, cluster->address, &renewed,
                             error, sizeof error) != 0 ||
        hf_cluster_view_list(cluster->context->store, &cluster->view, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "cannot read the leases: %s", error);
        return -1;
    }
    wait_for_dead_owners(cluster);
    cluster->renew_ok = true;
    cluster->renewed_at_ms = cluster->work_started_ms = now_ms(cluster);
    while (takeovers(cluster, true) == TAKEOVERS_PER_TICK) {
    }
    if (cluster->rebuild_pending) rebuild(cluster);
    HF_LOG_FIELDS(HF_LOG_INFO, "cluster node ready", HF_LOG_TEXT("node_id", cluster->node_id),
                  HF_LOG_TEXT("advertise", cluster->address),
                  HF_LOG_NUMBER("units", (double)cluster->owned_count));
    return 0;
}

void hf_cluster_start(hf_cluster_t *cluster, hf_http_server_t *http) {
    cluster->http = http;
    hf_cluster_jobs_serve(cluster->jobs, http);
    /* Locks are resolved on one node too: one made by a call is a row like any other. */
    hf_cluster_exchange_start(cluster);
    hf_cluster_offers_start(cluster, cluster->leased);
    if (!cluster->leased) return;
    uv_timer_start(&cluster->timer, on_timer, HF_CLUSTER_RENEW_MS, HF_CLUSTER_RENEW_MS);
    uv_check_start(&cluster->check, on_check);
}

void hf_cluster_stop(hf_cluster_t *cluster) {
    if (!cluster || cluster->stopped) return;
    cluster->stopped = true;
    hf_cluster_jobs_stop(cluster->jobs);
    if (cluster->leased && cluster->owned_count > 0) {
        char error[256];
        if (hf_store_lease_release(cluster->context->store, cluster->node_id, error,
                                   sizeof error) != 0)
            hf_log(HF_LOG_WARNING, "leases not handed back (they lapse): %s", error);
        else
            HF_LOG_FIELDS(HF_LOG_DEBUG, "leases handed back",
                          HF_LOG_NUMBER("units", (double)cluster->owned_count));
    }
    hf_cluster_exchange_stop(cluster);
    hf_cluster_offers_stop(cluster);
    uv_close((uv_handle_t *)&cluster->timer, NULL);
    uv_close((uv_handle_t *)&cluster->check, NULL);
    hf_forward_close(cluster->forward);
}

void hf_cluster_free(hf_cluster_t *cluster) {
    if (!cluster) return;
    hf_forward_free(cluster->forward);
    hf_cluster_jobs_free(cluster->jobs);
    hf_map_free(&cluster->unit_index);
    hf_map_free(&cluster->id_units);
    free(cluster->units);
    hf_cluster_view_free(&cluster->view);
    hf_cluster_view_free(&cluster->next);
    free(cluster);
}

size_t hf_cluster_units_owned(const hf_cluster_t *cluster) {
    if (!cluster) return 0;
    uint32_t events;
    hf_core_events_listed(cluster->context->core, &events);
    if (!cluster->leased) return events;
    uint32_t index; /* events and fleets: the records of no unit are not counted */
    bool none = hf_map_get(&cluster->unit_index, HF_STORE_UNIT_NONE, strlen(HF_STORE_UNIT_NONE),
                           &index) &&
                cluster->units[index].owned;
    return cluster->owned_count - (none ? 1 : 0);
}

hf_forward_counts_t hf_cluster_forwarded(const hf_cluster_t *cluster) {
    hf_forward_counts_t counts = hf_forward_counts(cluster ? cluster->forward : NULL);
    if (cluster) counts.unavailable += cluster->refused;
    return counts;
}

/* One node of /v1/cluster's list. */
static void render_node(hf_json_t *json, const char *node_id, const char *address, bool alive,
                        size_t units) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "node_id");
    hf_json_string(json, node_id);
    HF_JSON_KEY(json, "address");
    hf_json_string(json, address);
    HF_JSON_KEY(json, "alive");
    hf_json_bool(json, alive);
    HF_JSON_KEY(json, "units");
    hf_json_int(json, (int64_t)units);
    hf_json_object_end(json);
}

void hf_cluster_render(const hf_cluster_t *cluster, hf_json_t *json) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "self");
    hf_json_string(json, cluster->node_id);
    HF_JSON_KEY(json, "nodes");
    hf_json_array_begin(json);
    if (!cluster->leased)
        render_node(json, cluster->node_id, cluster->address, true,
                    hf_cluster_units_owned(cluster));
    int64_t now = hf_context_now_ms(cluster->context);
    for (size_t i = 0; cluster->leased && i < cluster->view.node_count; i++) {
        const hf_cluster_view_node_t *node = &cluster->view.nodes[i];
        bool self = strcmp(node->node_id, cluster->node_id) == 0;
        render_node(json, node->node_id, node->address, now - node->heartbeat_at_ms <= LEASE_MS,
                    self ? hf_cluster_units_owned(cluster) : node->units);
    }
    hf_json_array_end(json);
    hf_json_object_end(json);
}
