/* Whether a peer node's advertised URL accepts connections: asked only at start, by a node
 * that finds live leases of a node that may be its own former process (cluster.h).
 *
 * Threads: any; it blocks for at most HF_PEER_PROBE_MS. */
#ifndef HF_ENGINE_PEER_H
#define HF_ENGINE_PEER_H

#include <stdbool.h>

/* How long a connection to a peer may take before it counts as not answering: a live peer on
 * the same network accepts within a few milliseconds. */
#define HF_PEER_PROBE_MS 300

/* True when something accepts a connection at address (http://HOST:PORT, a numeric host or
 * localhost) within HF_PEER_PROBE_MS; also true for an address it cannot read, which is
 * assumed alive rather than taken over from. */
bool hf_peer_address_answers(const char *address);

#endif
