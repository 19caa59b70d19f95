/* The cluster's work on the database for a request (API.md section 11), off the loop's
 * thread: a takeover (the unit's lease acquired, its rows fetched), the lookup of an id's unit
 * (a hold's, an order's...), a list across units (every leased unit loaded into a core of the
 * job's own). Each runs on libuv's thread pool, one job at a time (they share the store's
 * lease connection), HF_CLUSTER_JOBS_MAX waiting or running; the requests that need it are
 * parked meanwhile (a deferred answer, net/http.h, and a copy of the request), up to
 * HF_CLUSTER_JOB_PARKED_MAX per job, and requests needing the same job (the same unit, the
 * same id, any list) wait on the one in flight.
 *
 * When the work is done, on the loop: the owner's done callback applies what it found (the
 * core's state is touched on the loop only), then each parked request goes on with the
 * continuation stored with it (a function and its state, given when it was parked), handed
 * the job it waited for: it takes the step that follows its wait (served, forwarded, parked on
 * another job) rather than being dispatched from the start. Its answer leaves once its changes
 * are durable, as any answer. A parked request whose client left is dropped.
 *
 * Threads: the loop's, but for the work functions, which read only the job and what
 * hf_cluster_jobs_create was given. Ownership: the cluster owns its jobs; a job's rows, view
 * and core are freed after its parked requests ran, unless done took them (set to NULL). */
#ifndef HF_CLUSTER_JOBS_H
#define HF_CLUSTER_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/core.h"
#include "lib/limits.h"
#include "cluster/view.h"
#include "engine/context.h"
#include "engine/request.h"
#include "engine/route.h"
#include "net/http.h"

typedef enum hf_cluster_job_kind {
    HF_CLUSTER_JOB_TAKEOVER, /* key: the unit */
    HF_CLUSTER_JOB_LOOKUP,   /* key: the id; id_kind: "hold", "order", "ride", "refund" */
    HF_CLUSTER_JOB_LIST      /* key: "" */
} hf_cluster_job_kind_t;

typedef struct hf_cluster_job {
    hf_cluster_job_kind_t kind;
    char key[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    char id_kind[16];
    int64_t now_ms; /* the loop's clock when the job was asked for */
    /* What the work found, read on the loop once it is done. */
    bool ok; /* the store answered; else error says why */
    char error[512];
    bool acquired; /* a takeover's: the lease is this node's now, at epoch */
    uint64_t epoch;
    void *rows; /* a takeover's rows (restore.h's fetch), when acquired */
    bool found; /* a lookup's: the id exists, in unit */
    char unit[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    hf_cluster_view_t view; /* a list's, and a takeover's not acquired: listed after */
    bool listed;
    hf_core_t *core; /* a list's: every leased unit and the records of none */
} hf_cluster_job_t;

typedef struct hf_cluster_jobs hf_cluster_jobs_t;

/* A parked request as its continuation gets it back: a copy of the HTTP request (the HTTP
 * layer's is gone once the handler returns) and the route it was on. */
typedef struct hf_cluster_parked {
    hf_http_request_t http;
    const hf_route_t *route;
} hf_cluster_parked_t;

/* A copy of http on route, for a request parked on something else than a job (an internal
 * call, exchange.h): one allocation, freed with free(). */
hf_cluster_parked_t *hf_cluster_parked_new(const hf_http_request_t *http, const hf_route_t *route);

/* What a parked request goes on with once its job is done, on the loop: resume(state, job,
 * parked, response), response its answer reopened (hf_http_deferred_reopen), written or
 * deferred again by resume; both borrowed for the call. */
typedef void (*hf_cluster_resume_fn)(void *state, const hf_cluster_job_t *job,
                                     const hf_cluster_parked_t *parked,
                                     hf_http_response_t *response);
typedef struct hf_cluster_continuation {
    hf_cluster_resume_fn resume;
    void *state;
} hf_cluster_continuation_t;

/* Called on the loop when a job's work is done, before its parked requests run again. */
typedef void (*hf_cluster_job_done_fn)(void *owner, hf_cluster_job_t *job);

/* context is the engine's (its store, and a copy of it for a list's core). */
hf_cluster_jobs_t *hf_cluster_jobs_create(uv_loop_t *loop, hf_context_t *context,
                                          const char *node_id, uint32_t finished_holds_max,
                                          hf_cluster_job_done_fn done, void *owner);
/* Once the HTTP server exists (parked requests are its deferred answers). */
void hf_cluster_jobs_serve(hf_cluster_jobs_t *jobs, hf_http_server_t *http);
/* The job of kind and key waiting or running, or NULL. */
hf_cluster_job_t *hf_cluster_jobs_find(hf_cluster_jobs_t *jobs, hf_cluster_job_kind_t kind,
                                       const char *key);
/* A new job (queued, not started: it runs after those before it), or NULL when
 * HF_CLUSTER_JOBS_MAX are waiting or running, or the jobs are stopped. id_kind: a lookup's,
 * else NULL. */
hf_cluster_job_t *hf_cluster_jobs_add(hf_cluster_jobs_t *jobs, hf_cluster_job_kind_t kind,
                                      const char *key, const char *id_kind);
/* Jobs waiting or running. */
size_t hf_cluster_jobs_count(const hf_cluster_jobs_t *jobs);
/* Starts the oldest job waiting when none runs: after adding a job nothing is parked on
 * (parking starts it). */
void hf_cluster_jobs_kick(hf_cluster_jobs_t *jobs);
/* Parks request (on its route, request->route, through the cluster's routing) until job is
 * done, then runs then: true when parked (the handler then answers nothing); false when the
 * job, or the server's table of deferred answers, is full (the caller answers 503). */
bool hf_cluster_jobs_park(hf_cluster_jobs_t *jobs, hf_cluster_job_t *job, hf_request_t *request,
                          hf_cluster_continuation_t then);
/* Starts no job from now on (a stop); work already on the pool finishes and is dropped. */
void hf_cluster_jobs_stop(hf_cluster_jobs_t *jobs);
/* After the loop returned (no work left on the pool). NULL is accepted. */
void hf_cluster_jobs_free(hf_cluster_jobs_t *jobs);

#endif
