/* The owner of units (events, fleets, and the records of no unit) as the engine sees it: the
 * engine makes it once the store is open, asks it to load the units, tells it when the server
 * listens and when a batch failed, stops and frees it. The cluster (cluster/cluster.h) is the
 * one implementation; it stands above the engine (it reads the engine's context and restore),
 * so it plugs in as a table of functions, as a store backend does (store/backend.h): cmd/main.c
 * hands hf_cluster_units to the engine in hf_engine_options_t, and engine/ includes nothing of
 * the cluster's.
 *
 * Threads: the loop's. Ownership: the engine owns the owner it made, through these functions;
 * the table is static. */
#ifndef HF_ENGINE_UNITS_H
#define HF_ENGINE_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/core.h"
#include "engine/context.h"
#include "engine/route.h"
#include "net/http.h"

struct hf_cluster;

typedef struct hf_units_config {
    const char *node_id;         /* --node-id */
    const char *address;         /* --advertise */
    uint32_t finished_holds_max; /* as the engine's */
    uint32_t finished_rides_max; /* as the engine's */
    hf_mutation_sink_t sink;     /* the sink of a rebuilt core: the engine's */
    /* A request parked for the store goes on through it once its job is done (the
     * dispatcher's hf_routes_resume, api/routes.h). */
    hf_route_resume_fn resume;
} hf_units_config_t;

typedef struct hf_units_methods {
    /* After the store is open, before anything is loaded (hf_cluster_create). */
    struct hf_cluster *(*create)(uv_loop_t *loop, hf_context_t *context,
                                 const hf_units_config_t *config);
    /* True when units are owned through leases: the engine then loads no unit itself. */
    bool (*leased)(const struct hf_cluster *units);
    /* Loads the units this node takes, before the server listens: 0, or -1 after logging. */
    int (*load)(struct hf_cluster *units);
    /* Once the HTTP server listens. */
    void (*start)(struct hf_cluster *units, hf_http_server_t *http);
    /* A batch failed: true when the owner handles it, false when the engine is to. */
    bool (*batch_failed)(struct hf_cluster *units, const char *error);
    /* A clean stop, once everything is durable. */
    void (*stop)(struct hf_cluster *units);
    /* After the loop returned; NULL is accepted. */
    void (*free)(struct hf_cluster *units);
} hf_units_methods_t;

#endif
