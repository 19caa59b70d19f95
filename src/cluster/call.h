/* Internal calls (API.md section 11, the exchange across two owners of docs/DESIGN.md): a node
 * asks a unit, not a node, over HTTP. The call goes to the unit's owner as the last listing
 * names it when that is a live node, else to this node's own address; the node that receives
 * it routes it as any request (served, forwarded to the owner, or the unit taken over), so a
 * takeover in the middle changes nothing but who answers. The internal routes it reaches
 * (/v1/cluster/...) take the API key, which every node of a cluster is given: a call carries
 * this node's.
 *
 * Bounded: HF_CLUSTER_CALLS_MAX in flight (a call past them is refused at once), each
 * unanswered after HF_CLUSTER_CALL_TIMEOUT_MS has no answer (status 0). A call is never sent
 * twice: its outcome is then unknown, and the caller decides what follows.
 *
 * Threads: the loop's only. Ownership: the cluster's forwarder owns the connection; body and
 * the texts are copied into the request at once. */
#ifndef HF_CLUSTER_CALL_H
#define HF_CLUSTER_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "cluster/forward.h"

struct hf_cluster;

/* The answer (status 0: none came), on the loop; body borrowed for the callback. */
typedef hf_forward_done_fn hf_cluster_call_fn;

/* Asks the unit (NULL or "": the path's id names it, and this node's routing finds it)
 * method path with body (a JSON object, or NULL). true when sent: done is called once, later;
 * false when it could not be (the node stops, too many calls): done is never called. */
bool hf_cluster_call(struct hf_cluster *cluster, const char *unit, const char *method,
                     const char *path, const char *body, hf_cluster_call_fn done, void *state);

#endif
