/* The engine: owns the core on the loop's thread, collects the mutations of each loop turn
 * into a batch for the store (group commit), and gates every reply on the durability of what
 * it observed. Its room, engine/, is the plumbing the rooms above it stand on: the request
 * and its replies, the context handlers reach, streams, restore, metrics.
 *
 * The rooms (scripts/check_layout.py's ROOMS_BELOW): engine/ under cluster/ (several nodes:
 * cluster/cluster.h) under api/ (the dispatcher and each domain's handlers: api/routes.h),
 * under cmd/. The engine calls up only through what cmd/main.c hands it in
 * hf_engine_options_t: the dispatcher (dispatch, resume, routes) and the owner of units
 * (units.h); it includes neither room.
 *
 * Threads: everything here runs on the libuv loop's thread, except the store's done callback,
 * which only wakes the loop.
 *
 * Its files, each module a header and a source (x.h and x.c), none including a file that
 * includes it back:
 *   engine.c          the plumbing: store batches and the durability gate, expiry timer,
 *                     signals, start-up and shutdown; the only file that sees struct hf_engine
 *   units.h           the owner of units as the engine sees it (the cluster's table of
 *                     functions, handed over by cmd/main.c)
 *   context.h/.c      what a handler needs from the engine: core, store, idempotency table,
 *                     streams, open batch and sequences, clock, ids, the domains' scratch
 *   request.h/.c      the request handed to a handler (its route, its core, its unit, its
 *                     body's flat reading, its domain's scratch), and the replies (hf_reply_*)
 *   route.h           a route: method, pattern, handler, flags, body limit, where its unit
 *                     comes from; a domain's table of routes; how a parked request resumes
 *   errors.h/.c       the table of every error the API answers, and the core's mapping onto it
 *   fields.h/.c       an invalid field's path ("sections[1].price"), its rule in words quoting
 *                     limits.h, and the one sentence of its error, for decoder and core alike
 *   idempotency.h/.c  the Idempotency-Key table and the handling of a request with a key
 *   body_hash.h/.c    the hash of a body as a JSON value (idempotency keys; pure)
 *   arena.h/.c        the per-request allocator of jansson
 *   streams.h/.c      live streams (SSE): subscribers, the ids of changes, changes waiting to
 *                     be durable, and each event's replay window for Last-Event-ID
 *   replay.h/.c       a stream's ids and the ring of an event's last durable changes (pure)
 *   restore.h/.c      the state read back from the store; forgotten holds taken back
 *   metrics.h/.c      GET /metrics' counters (every answer by route and status, timed) and
 *                     the writer of Prometheus's text format
 *   token.h/.c        the waiting room's admission token, a JWT HS256: signed and checked with
 *                     OpenSSL's HMAC (pure otherwise; its secret comes from cmd/token_secret.c)
 *
 * A new domain's handlers go in api/DOMAIN.c (api/routes.h), not here. */
#ifndef HF_ENGINE_H
#define HF_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "engine/outbox.h"
#include "engine/route.h"
#include "engine/token.h"
#include "engine/units.h"
#include "net/http.h"

typedef struct hf_engine_options {
    const char *host;
    int port;
    const char *store_url; /* "sqlite:PATH" */
    const char *api_key;   /* NULL or "": no authentication */
    /* The payment webhook's secret; NULL or "": webhooks answer 503 (API.md section 7). */
    const char *webhook_secret;
    bool demo; /* create the demo event when missing */
    /* Released and expired holds kept in memory; older ones are read back from the store
     * when asked for (hf_core_evict). */
    uint32_t finished_holds_max;
    /* Completed and cancelled rides kept in memory, likewise (core/dispatch/dispatch.h). */
    uint32_t finished_rides_max;
    /* Origins answered with CORS headers (API.md section 1), each scheme://host[:port] as a
     * browser sends it in Origin, already checked; at most HF_CORS_ORIGINS_MAX (limits.h).
     * The strings belong to the caller and outlive the engine. */
    const char *const *cors_origins;
    uint32_t cors_origin_count;
    /* Operations (issue 22): the version logged at start; one log line per request
     * (--access-log); a service manager told when the server is ready and when it stops
     * (sd_notify, lib/notify.h); loading's progress shown on a terminal. The version is static and
     * also GET /metrics' holdfast_build_info. */
    const char *version;
    bool access_log;
    bool progress;
    /* The admission tokens' secret (token.h), owned by the caller and outliving the engine;
     * NULL or empty: no token is signed and every token is refused. */
    const hf_token_secret_t *token_secret;
    /* The user tokens' secret (API.md section 16, token.h), owned by the caller and outliving
     * the engine; NULL or empty: no user token is accepted. */
    const hf_token_secret_t *user_token_secret;
    /* Several nodes (API.md section 11, cluster.h): this node's id and advertised URL; NULL:
     * the listen address, and http:// it. Owned by the caller. */
    const char *node_id;
    const char *advertise;
    /* The socket hf_http_bind bound to host:port before the data directory was made (a start
     * that cannot listen creates nothing); the engine owns it from hf_engine_create on, even
     * when that fails. false: the engine binds host:port itself. */
    bool bound;
    int bound_socket;
    /* The rooms above the engine, wired by cmd/main.c (engine/ includes neither): the
     * dispatcher every request goes to and the list of its routes, for the metrics' slots
     * (api/routes.h: hf_routes_dispatch, hf_routes_resume, hf_routes_known), and the owner of units
     * (engine/units.h; cluster/cluster.h's hf_cluster_units). */
    hf_http_handler_fn dispatch;
    hf_route_resume_fn resume; /* hf_routes_resume: a parked request goes on */
    const hf_route_t *const *(*routes)(size_t *count);
    const hf_units_methods_t *units;
    /* Outbound notifications (API.md section 15, outbox.h): the URL (NULL: none sent), its
     * secret, the authority file, the backlog's bound, and the entries' JSON
     * (api/history.h's hf_history_entry_write). Owned by the caller. */
    hf_outbox_config_t notify;
} hf_engine_options_t;

typedef struct hf_engine hf_engine_t;

/* Opens and loads the store, binds the listener. Returns NULL after printing why. */
hf_engine_t *hf_engine_create(uv_loop_t *loop, const hf_engine_options_t *options);
/* Runs the loop until a signal stops the server; returns the process exit code. */
int hf_engine_run(hf_engine_t *engine);
void hf_engine_destroy(hf_engine_t *engine);

#endif
