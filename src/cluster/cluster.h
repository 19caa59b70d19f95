/* Several nodes on one PostgreSQL (API.md section 11): which units (events, fleets) this node
 * owns, the lease timer, takeovers, and the routing of a request about a unit: served here
 * when this node owns it, forwarded to the owner (forward.h) when another live node does,
 * taken over (the lease acquired, the unit loaded from the store) when none does.
 *
 * The core holds only units this node owns. A unit lost (its lease renewed by the database
 * no more, or a batch refused with "lost lease") is at once answered about no more from
 * memory; the core is then rebuilt from the store with the units still owned, as soon as no
 * batch is in flight: what waits on the open batch gets 503 (never a 2xx of a batch that
 * could not be written), and every stream closes (a reconnect gets a snapshot).
 *
 * The lease renewal and the listing of nodes and leases run on libuv's thread pool once a
 * second (HF_CLUSTER_RENEW_MS), never on the loop; so do a takeover (the acquire, the unit's
 * rows), the lookup of an id's unit and a list across units, as jobs (jobs.h) a
 * request waits for parked, and the loop applies what they found; a rebuild reads the units
 * still owned again the same way (the records of no unit are one more unit, HF_STORE_UNIT_NONE,
 * owned and read like the others). Only the start (before the server listens) reads on the loop.
 *
 * With a store without leases (SQLite) the cluster is one node, itself, owning every unit:
 * requests are served here, with Holdfast-Node.
 *
 * A request's unit is what its route says (engine/route.h: hf_route_unit_t, HF_ROUTE_SPANS,
 * HF_ROUTE_STREAM): the cluster reads no path. A request parked for a job goes on with the
 * continuation stored with it (jobs.h), past the routing through the dispatcher's
 * hf_routes_resume, which the engine hands over (engine/units.h).
 *
 * The room, cluster/, stands on engine/ (the request, its context, restore, streams) and below
 * api/, whose dispatcher calls hf_cluster_route; the engine reaches it only through
 * hf_cluster_units. Its files:
 *   cluster.h/.c      units and leases, the renewal, takeovers, rebuilds, the table for the
 *                     engine (hf_cluster_units)
 *   routing.c         a request's unit, served here, forwarded, redirected or parked, and the
 *                     continuations of parked requests
 *   internal.h        the cluster's state, shared by cluster.c and routing.c
 *   jobs.h/.c         the database work for a request on libuv's thread pool (a takeover, an
 *                     id's unit, a list across units) and the requests parked on it
 *   view.h/.c         the nodes and leases as last listed
 *   forward.h/.c      forwarding to the owner over keep-alive connections (net/client.h)
 *   call.h/.c         internal calls to a unit's owner, over the forwarder's connections
 *   exchange.h        the exchange across two owners: exchange_old.c (the old order's
 *                     owner: lock, finish, resolution), exchange_new.c (the new hold's:
 *                     the hold's read, the commit's lock, decision and finish)
 *   handlers.h/.c     GET /v1/cluster, the exchange's internal routes, the cluster's metrics
 *
 * Threads: the loop's, but for the renewal's and the jobs' work functions. Ownership: the
 * engine owns the cluster (through hf_cluster_units); the cluster owns its forwarder and its
 * jobs. */
#ifndef HF_CLUSTER_CLUSTER_H
#define HF_CLUSTER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "core/core.h"
#include "engine/context.h"
#include "engine/units.h"
#include "cluster/forward.h"
#include "engine/route.h"
#include "lib/json.h"
#include "net/http.h"

typedef struct hf_cluster hf_cluster_t;

/* What the engine gives the cluster (engine/units.h). */
typedef hf_units_config_t hf_cluster_config_t;

/* The cluster as the engine's owner of units (engine/units.h): hf_cluster_create, _leased,
 * _load, _start, _batch_failed, _stop and _free below. cmd/main.c hands it to the engine. */
extern const hf_units_methods_t hf_cluster_units;

/* After the store is open, before anything is loaded. */
hf_cluster_t *hf_cluster_create(uv_loop_t *loop, hf_context_t *context,
                                const hf_cluster_config_t *config);
/* True when units are owned through leases (the store has them): the engine then loads no
 * unit itself. */
bool hf_cluster_leased(const hf_cluster_t *cluster);
/* Takes the units whose leases lapsed (or are this node's already) and loads them, before
 * the server listens: a lone node restarting gets its units back at once. 0, or -1 after
 * logging why. */
int hf_cluster_load(hf_cluster_t *cluster);
/* Starts the lease timer, once the HTTP server listens. */
void hf_cluster_start(hf_cluster_t *cluster, hf_http_server_t *http);
/* A batch failed: true when the cluster handles it (with leases, any failure: replies of
 * the batch get 503, the core is rebuilt from the store with the units still owned); false
 * without leases, the engine's to handle. */
bool hf_cluster_batch_failed(hf_cluster_t *cluster, const char *error);
/* Before the handler of route runs: true when the request was answered (forwarded, or 503);
 * false to serve it here (the answer then carries Holdfast-Node). */
bool hf_cluster_route(hf_cluster_t *cluster, hf_request_t *request, const hf_route_t *route);
/* A clean stop, once everything is durable: hands every lease back (SIGTERM), closes the
 * timer and the forwarder's connections. */
void hf_cluster_stop(hf_cluster_t *cluster);
/* After the loop returned. NULL is accepted. */
void hf_cluster_free(hf_cluster_t *cluster);

/* Whether unit is another node's as the last listing (a second old at most) names it: a
 * lease of it held by another node, live or lapsed. False without leases (one node owns every
 * unit) and for a unit no lease names yet (made within the last second, or unknown). A cancel
 * job's rebook_to must be its own node's (docs/API.md "Cancelling an event"). */
bool hf_cluster_unit_elsewhere(const hf_cluster_t *cluster, const char *unit);

/* GET /v1/cluster's body, and the metrics' figures. */
void hf_cluster_render(const hf_cluster_t *cluster, hf_json_t *json);
size_t hf_cluster_units_owned(const hf_cluster_t *cluster);
hf_forward_counts_t hf_cluster_forwarded(const hf_cluster_t *cluster);

#endif
