/* The nodes and leases as the database had them at one listing (API.md section 11): what the
 * cluster routes by (a unit's live owner and its address), renders at GET /v1/cluster, and
 * what a list across units reads (cluster/jobs.h).
 *
 * Threads: a view is filled by one thread (the renewal's or a job's work on the thread pool,
 * or the loop before the server listens) and read by the loop once that work is done.
 * Ownership: the owner of the struct; hf_cluster_view_free frees its arrays. */
#ifndef HF_CLUSTER_VIEW_H
#define HF_CLUSTER_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"
#include "store/store.h"

typedef struct hf_cluster_view_node {
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    char address[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    int64_t heartbeat_at_ms;
    size_t units;
} hf_cluster_view_node_t;

typedef struct hf_cluster_view_lease {
    char unit[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    bool live;
} hf_cluster_view_lease_t;

typedef struct hf_cluster_view {
    hf_cluster_view_node_t *nodes;
    size_t node_count, node_capacity;
    hf_cluster_view_lease_t *leases;
    size_t lease_count, lease_capacity;
    int64_t listed_at_ms;
} hf_cluster_view_t;

/* Lists every node and lease of store into view (emptied first), on the calling thread: one
 * lease method (store.h's rule: one thread at a time). 0, or non-zero with a sentence. */
int hf_cluster_view_list(hf_store_t *store, hf_cluster_view_t *view, char *error,
                         size_t error_size);
void hf_cluster_view_free(hf_cluster_view_t *view);
/* The lease of unit, or the node named node_id, in view; NULL when none. */
const hf_cluster_view_lease_t *hf_cluster_view_lease(const hf_cluster_view_t *view,
                                                     const char *unit);
const hf_cluster_view_node_t *hf_cluster_view_node(const hf_cluster_view_t *view,
                                                   const char *node_id);
/* Whether something accepts connections at a node's advertised URL (http://HOST:PORT,
 * numeric or localhost; true when it cannot tell), within 300 ms, on the calling thread. Only
 * at start: a node restarted after a kill -9 finds its former self's leases live for up to
 * the lease's length, and waits for them. */
bool hf_cluster_address_answers(const char *address);

#endif
