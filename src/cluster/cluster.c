/* Several nodes (cluster.h): units and leases, the renewal, takeovers, rebuilds, routing. */
#include "cluster/cluster.h"

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

/* The lease's length as the store keeps it (store/postgres/lease.c): a node whose renewals
 * failed this long ago may have lost every unit. */
#define LEASE_MS 5000
/* A node stops answering from memory this much before its lease could lapse, for the clocks'
 * drift between it and the database. */
#define LEASE_MARGIN_MS 1000
/* An owner whose heartbeat is older than this has missed two renewals (paused, cut off, or
 * dead): requests are not forwarded to it, to wait up to HF_FORWARD_TIMEOUT_MS, but answered
 * 503 at once until its lease lapses and the unit is taken over. */
#define HEARTBEAT_STALE_MS 2500
/* Ids whose unit was looked up (a hold's, an order's...) kept before the cache starts over. */
#define ID_CACHE_MAX 65536
/* Lapsed units taken over per renewal: the rest at the next one, so a node taking over a
 * dead peer's thousands of units still answers in between. */
#define TAKEOVERS_PER_TICK 64
/* Jobs the renewal's takeovers may have at once: the rest are left to requests. */
#define TAKEOVER_JOBS_MAX (HF_CLUSTER_JOBS_MAX / 2)

typedef struct unit_entry {
    char id[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    bool owned;                  /* this node holds the lease */
    bool loaded;                 /* the core holds the unit's state */
    int64_t acquired_at_ms;      /* when this node last acquired it (loop's clock) */
} unit_entry_t;

struct hf_cluster {
    uv_loop_t *loop;
    hf_context_t *context;
    hf_http_server_t *http;
    hf_forward_t *forward;
    hf_cluster_config_t config;
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    char address[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    bool leased;
    uint64_t refused;            /* requests about a unit answered 503 here */
    unit_entry_t *units;
    size_t unit_count, unit_capacity;
    hf_map_t unit_index;         /* unit id -> index in units */
    hf_map_t id_units;           /* hold, order... id -> index in units */
    size_t owned_count;
    bool rebuild_pending;
    /* The renewal: its timer, its work on the thread pool and what it found. */
    uv_timer_t timer;
    uv_check_t check;
    uv_work_t work;
    bool working, stopped;
    int64_t work_started_ms;
    bool renew_ok;
    char renew_error[256];
    int64_t renewed_at_ms;       /* the last successful renewal began then */
    hf_cluster_view_t next, view;
    hf_cluster_jobs_t *jobs;     /* takeovers, lookups and lists on the thread pool */
    /* What id_unit found no answer to here: the lookup hf_cluster_route parks the request on
     * (kind NULL: none), or one that failed (503). */
    const char *lookup_kind;
    char lookup_id[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    bool lookup_failed;
};

/* ---- units ---- */

static unit_entry_t *unit_get(hf_cluster_t *cluster, const char *unit, bool create) {
    uint32_t index;
    size_t length = strlen(unit);
    if (hf_map_get(&cluster->unit_index, unit, length, &index)) return &cluster->units[index];
    if (!create || length > HF_CLUSTER_UNIT_SIZE_MAX ||
        cluster->unit_count >= HF_CLUSTER_UNITS_MAX)
        return NULL;
    if (cluster->unit_count == cluster->unit_capacity) {
        cluster->unit_capacity = cluster->unit_capacity ? 2 * cluster->unit_capacity : 64;
        cluster->units = realloc(cluster->units, cluster->unit_capacity * sizeof *cluster->units);
        if (!cluster->units) abort();
    }
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
    if (hf_store_lease_acquire(cluster->context->store, cluster->node_id, entry->id, &epoch,
                               taken, error, sizeof error) != 0) {
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
    cluster->renew_ok =
        hf_store_lease_renew(cluster->context->store, cluster->node_id, cluster->address,
                             &renewed, cluster->renew_error, sizeof cluster->renew_error) == 0 &&
        hf_cluster_view_list(cluster->context->store, &cluster->next, cluster->renew_error,
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
        unit_entry_t *entry = unit_get(cluster, lease->unit, true);
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

/* ---- what the jobs found (cluster_jobs.h), applied on the loop ---- */

static void id_cache_put(hf_cluster_t *cluster, const char *id, const char *unit) {
    unit_entry_t *entry = unit_get(cluster, unit, true);
    if (!entry) return;
    if (hf_map_count(&cluster->id_units) >= ID_CACHE_MAX) {
        hf_map_free(&cluster->id_units);
        hf_map_init(&cluster->id_units);
    }
    hf_map_put(&cluster->id_units, id, strlen(id), (uint32_t)(entry - cluster->units));
}

/* The lease acquired and the rows fetched on the pool: the unit goes into the core here. */
static void takeover_apply(hf_cluster_t *cluster, hf_cluster_job_t *job) {
    unit_entry_t *entry = unit_get(cluster, job->key, true);
    if (!job->ok)
        hf_log(HF_LOG_WARNING, "cannot take unit %s over: %s", job->key, job->error);
    /* Held by another node now: not this node's any more (a unit read again after a rebuild). */
    if (entry && job->ok && !job->acquired && !entry->loaded)
        unit_owned_set(cluster, entry, false);
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
                                           config->finished_holds_max, config->dispatch,
                                           job_done, cluster);
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
    if (hf_store_lease_renew(cluster->context->store, cluster->node_id, cluster->address,
                             &renewed, error, sizeof error) != 0 ||
        hf_cluster_view_list(cluster->context->store, &cluster->view, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "cannot read the leases: %s", error);
        return -1;
    }
    wait_for_dead_owners(cluster);
    cluster->renew_ok = true;
    cluster->renewed_at_ms = cluster->work_started_ms = now_ms(cluster);
    while (takeovers(cluster, true) == TAKEOVERS_PER_TICK) {}
    if (cluster->rebuild_pending) rebuild(cluster);
    HF_LOG_FIELDS(HF_LOG_INFO, "cluster node ready", HF_LOG_TEXT("node_id", cluster->node_id),
                  HF_LOG_TEXT("advertise", cluster->address),
                  HF_LOG_NUMBER("units", (double)cluster->owned_count));
    return 0;
}

void hf_cluster_start(hf_cluster_t *cluster, hf_http_server_t *http) {
    cluster->http = http;
    hf_cluster_jobs_serve(cluster->jobs, http);
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
                           &index) && cluster->units[index].owned;
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

/* ---- routing ---- */

/* The unit of an id the local core knows: its event's or fleet's id, or NULL. A refund's is
 * always looked up. */
static const char *local_unit(const hf_core_t *core, hf_route_id_kind_t kind, const char *id) {
    if (kind == HF_ROUTE_ID_HOLD) {
        const hf_hold_t *hold = hf_core_hold_find(core, id, NULL);
        return hold ? hf_core_event_at(core, hold->event)->id : NULL;
    }
    if (kind == HF_ROUTE_ID_ORDER) {
        const hf_order_t *order = hf_core_order_find(core, id, NULL);
        return order ? hf_core_event_at(core, order->event)->id : NULL;
    }
    if (kind == HF_ROUTE_ID_RIDE) {
        const hf_ride_t *ride = hf_dispatch_ride_find(core, id, NULL);
        return ride ? hf_dispatch_fleet_id(core, ride->fleet) : NULL;
    }
    return NULL;
}

/* The store's word for a kind of id (hf_store_unit_find). */
static const char *const ID_KIND_WORDS[] = {
    [HF_ROUTE_ID_HOLD] = "hold", [HF_ROUTE_ID_ORDER] = "order", [HF_ROUTE_ID_RIDE] = "ride",
    [HF_ROUTE_ID_REFUND] = "refund"};

/* The unit of an id of kind: the local core's, the cache's, or the store's. false when there
 * is no such id anywhere (the request is then served here: a 404). */
static bool id_unit(hf_cluster_t *cluster, hf_route_id_kind_t kind, const char *id, char *unit,
                    size_t unit_size) {
    const char *local = local_unit(cluster->context->core, kind, id);
    if (local) {
        snprintf(unit, unit_size, "%s", local);
        return true;
    }
    uint32_t index;
    if (hf_map_get(&cluster->id_units, id, strlen(id), &index)) {
        snprintf(unit, unit_size, "%s", cluster->units[index].id);
        return true;
    }
    if (!cluster->leased || strlen(id) > HF_CLUSTER_UNIT_SIZE_MAX) return false;
    const hf_cluster_job_t *resumed = hf_cluster_jobs_resuming(cluster->jobs);
    if (resumed && resumed->kind == HF_CLUSTER_JOB_LOOKUP && strcmp(resumed->key, id) == 0) {
        /* Looked up already, not found (a found one is in the cache): no second wait. */
        cluster->lookup_failed = !resumed->ok;
        return false;
    }
    /* The database is asked on the thread pool, the request parked (hf_cluster_route). */
    cluster->lookup_kind = ID_KIND_WORDS[kind];
    snprintf(cluster->lookup_id, sizeof cluster->lookup_id, "%s", id);
    return false;
}

/* A text member of the body (a new event's "id", a webhook's "reservation_id"). Read by the
 * flat reader (decode.c's, into the same scratch the handler reads the body into next) when
 * it can: every webhook comes through here, and jansson's DOM costs several times as much. */
static bool body_text(const hf_request_t *request, const char *name, char *unit,
                      size_t unit_size) {
    hf_flat_json_t *flat = &request->context->flat_body;
    if (hf_flat_json_read(flat, request->http->body, request->http->body_length)) {
        const hf_flat_json_member_t *member = hf_flat_json_member(flat, name);
        bool ok = member && member->kind == HF_FLAT_JSON_STRING && member->length > 0 &&
                  member->length < unit_size;
        if (ok) memcpy(unit, member->string, member->length + 1);
        return ok;
    }
    json_t *body = json_loadb(request->http->body, request->http->body_length, 0, NULL);
    json_t *id = body ? json_object_get(body, name) : NULL;
    bool ok = json_is_string(id) && strlen(json_string_value(id)) < unit_size &&
              json_string_value(id)[0] != '\0';
    if (ok) snprintf(unit, unit_size, "%s", json_string_value(id));
    json_decref(body);
    return ok;
}

/* The unit of the record whose id is the body's member (route.h: HF_ROUTE_UNIT_OF_BODY): a
 * payment's is its hold's event's, whose owner applies it; with leases, the records of no unit
 * (HF_STORE_UNIT_NONE) once the store said no unit has the id. Never on a failed or pending
 * lookup (the owner of no unit would refund a hold that exists): hf_cluster_route then waits
 * for the lookup or answers 503. A body without the member is served here (its 400). */
static bool member_id_unit(hf_cluster_t *cluster, const hf_request_t *request,
                           const hf_route_unit_t *from, char *unit, size_t unit_size) {
    char id[HF_SERVER_ID_SIZE + 1];
    if (!body_text(request, from->member, id, sizeof id)) return false;
    if (id_unit(cluster, from->id, id, unit, unit_size)) return true;
    if (!from->else_no_unit || !cluster->leased || cluster->lookup_kind || cluster->lookup_failed)
        return false;
    snprintf(unit, unit_size, "%s", HF_STORE_UNIT_NONE);
    return true;
}

/* The unit a request is about, as its route names it (route.h: hf_route_unit_t): false when
 * none (lists, health, metrics), or when the route's text names none here. */
static bool request_unit(hf_cluster_t *cluster, const hf_request_t *request,
                         const hf_route_t *route, char *unit, size_t unit_size) {
    const hf_route_unit_t *from = &route->unit;
    if (from->from == HF_ROUTE_UNIT_NONE) return false;
    if (from->from == HF_ROUTE_UNIT_MEMBER)
        return from->id == HF_ROUTE_ID_UNIT ? body_text(request, from->member, unit, unit_size)
                                            : member_id_unit(cluster, request, from, unit,
                                                             unit_size);
    assert(from->param < HF_ROUTE_PARAMS_MAX);
    const char *param = request->params[from->param];
    if (from->id != HF_ROUTE_ID_UNIT) return id_unit(cluster, from->id, param, unit, unit_size);
    size_t length = strlen(param);
    if (length == 0 || length >= unit_size) return false;
    memcpy(unit, param, length + 1);
    return true;
}

static bool refuse(hf_cluster_t *cluster, hf_request_t *request, const char *message) {
    cluster->refused++;
    hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, message, NULL);
    return true;
}

/* Hands the request to the node at address; its answer comes later. */
static bool forward_to(hf_cluster_t *cluster, hf_request_t *request, const char *address) {
    hf_http_response_t *response = request->response;
    hf_http_deferred_t deferred = hf_http_response_defer(response);
    if (!hf_http_deferred_valid(deferred))
        return refuse(cluster, request, "too many requests wait for other nodes");
    hf_buffer_reset(&response->body);
    if (!hf_forward_send(cluster->forward, cluster->http, deferred, address, request->http)) {
        hf_http_response_undefer(response);
        return refuse(cluster, request, "the node owning this unit cannot be reached");
    }
    return true;
}

/* A stream (an event's live changes) lasts: it is not relayed but redirected to the owner
 * (307; a browser's EventSource follows it, across origins when the owner lists the page's
 * origin in --cors-origin). */
static bool redirect_to(hf_request_t *request, const char *address) {
    const hf_http_request_t *http = request->http;
    char location[HF_CLUSTER_ADDRESS_SIZE_MAX + HF_HTTP_HEAD_SIZE_MAX];
    int length = snprintf(location, sizeof location, "%s%s%s%s", address, http->path,
                          http->query[0] ? "?" : "", http->query);
    if (length <= 0 || (size_t)length >= sizeof location) return false;
    hf_http_response_t *response = request->response;
    const char *kept = hf_http_response_keep(response, location, (size_t)length);
    if (!kept) return false;
    response->status = 307;
    hf_buffer_reset(&response->body);
    hf_http_response_header_add(response, "Location", kept, false);
    return true;
}

/* The live owner's address, from the view (the renewal's, or a job's if fresher), or NULL. */
static const char *owner_address(hf_cluster_t *cluster, const char *unit) {
    const hf_cluster_view_lease_t *lease = hf_cluster_view_lease(&cluster->view, unit);
    if (!lease || !lease->live || strcmp(lease->node_id, cluster->node_id) == 0) return NULL;
    const hf_cluster_view_node_t *node = hf_cluster_view_node(&cluster->view, lease->node_id);
    if (!node || !node->address[0] ||
        hf_context_now_ms(cluster->context) - node->heartbeat_at_ms > HEARTBEAT_STALE_MS)
        return NULL;
    return node->address;
}

/* Parks the request on the job of kind and key (asked for when none is in flight). */
static bool wait_for(hf_cluster_t *cluster, hf_request_t *request, hf_cluster_job_kind_t kind,
                     const char *key, const char *id_kind) {
    hf_cluster_job_t *job = hf_cluster_jobs_find(cluster->jobs, kind, key);
    if (!job) job = hf_cluster_jobs_add(cluster->jobs, kind, key, id_kind);
    if (job && hf_cluster_jobs_park(cluster->jobs, job, request)) return true;
    hf_cluster_jobs_kick(cluster->jobs); /* a job asked for with nothing parked still runs */
    return refuse(cluster, request, "too many requests wait for the store; retry shortly");
}

/* Answers that span units (API.md section 11; HF_ROUTE_SPANS) are read from the store: every
 * unit with a lease is loaded by a list job into a core of its own (jobs.h), and the route's
 * handler answers from it here, on the loop. Choice: correct rather than fast (it reads every
 * unit's rows); such lists are rare next to the requests about one unit. */
static bool answer_from_store(hf_cluster_t *cluster, hf_request_t *request,
                              const hf_route_t *route) {
    const hf_cluster_job_t *resumed = hf_cluster_jobs_resuming(cluster->jobs);
    if (!resumed || resumed->kind != HF_CLUSTER_JOB_LIST)
        return wait_for(cluster, request, HF_CLUSTER_JOB_LIST, "", NULL);
    if (!resumed->ok || !resumed->core) {
        hf_log(HF_LOG_WARNING, "a list across units could not be read: %s", resumed->error);
        return refuse(cluster, request, "the store cannot be read now");
    }
    hf_context_t *context = cluster->context;
    hf_core_t *own = context->core;
    context->core = resumed->core;
    route->handler(request);
    context->core = own;
    return true;
}

/* A unit no live node owns (or whose owner does not answer): taken over on the thread pool,
 * the request parked; once it was, forwarded to the owner the database names, or 503. */
static bool take_over(hf_cluster_t *cluster, hf_request_t *request, const char *unit,
                      bool forwarded) {
    const hf_cluster_job_t *resumed = hf_cluster_jobs_resuming(cluster->jobs);
    if (!resumed || resumed->kind != HF_CLUSTER_JOB_TAKEOVER || strcmp(resumed->key, unit) != 0)
        return wait_for(cluster, request, HF_CLUSTER_JOB_TAKEOVER, unit, NULL);
    if (!resumed->ok) return refuse(cluster, request, "the store is unreachable; retry shortly");
    const char *address = forwarded ? NULL : owner_address(cluster, unit);
    if (address) return forward_to(cluster, request, address);
    return refuse(cluster, request, "no node can serve this unit now; retry shortly");
}

/* No unit found for the request here: a lookup to wait for, a failed one, or none at all
 * (served here). */
static bool route_unknown(hf_cluster_t *cluster, hf_request_t *request) {
    if (cluster->lookup_failed) return refuse(cluster, request, "the store cannot be read now");
    if (!cluster->lookup_kind) return false;
    return wait_for(cluster, request, HF_CLUSTER_JOB_LOOKUP, cluster->lookup_id,
                    cluster->lookup_kind);
}

bool hf_cluster_route(hf_cluster_t *cluster, hf_request_t *request, const hf_route_t *route) {
    char *unit = request->unit; /* kept: the request's idempotency key belongs to its unit */
    if (!cluster) return false;
    if (cluster->leased && (route->flags & HF_ROUTE_SPANS))
        return answer_from_store(cluster, request, route);
    cluster->lookup_kind = NULL;
    cluster->lookup_failed = false;
    if (!request_unit(cluster, request, route, unit, sizeof request->unit)) {
        unit[0] = '\0';
        return route_unknown(cluster, request);
    }
    unit_entry_t *entry = cluster->leased ? unit_get(cluster, unit, true) : NULL;
    if (cluster->leased && !entry) return refuse(cluster, request, "too many units");
    bool stream = (route->flags & HF_ROUTE_STREAM) != 0;
    if (!cluster->leased || (entry->owned && entry->loaded)) {
        /* A stream that waited for its takeover starts on a request of its own (it lasts). */
        if (stream && hf_cluster_jobs_resuming(cluster->jobs) &&
            hf_core_event(cluster->context->core, unit, NULL))
            return redirect_to(request, cluster->address) || refuse(cluster, request, NULL);
        hf_http_response_header_add(request->response, "Holdfast-Node", cluster->node_id, false);
        return false;
    }
    bool forwarded = hf_http_request_header(request->http, HF_FORWARD_HEADER, NULL) != NULL;
    const char *address = owner_address(cluster, unit);
    if (address && !forwarded && stream && redirect_to(request, address)) return true;
    if (address && !forwarded) return forward_to(cluster, request, address);
    if (entry->loaded || cluster->rebuild_pending)
        return refuse(cluster, request, "this unit is moving between nodes; retry shortly");
    /* The last renewal could not reach PostgreSQL: a takeover would wait for nothing (up to
     * the connect timeout when the network drops packets). */
    if (!cluster->renew_ok)
        return refuse(cluster, request, "the store is unreachable; retry shortly");
    return take_over(cluster, request, unit, forwarded);
}
