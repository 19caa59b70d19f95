/* Forwarding (API.md section 11): a request about a unit this node does not own goes to the
 * owner's advertised URL over a pool of keep-alive connections (HF_FORWARD_CONNECTIONS_MAX per
 * peer), and the owner's answer is relayed unchanged: status, body, Content-Type and the
 * headers an answer of the API carries (Holdfast-Node among them). The request carries
 * Holdfast-Forwarded: a node that receives a forwarded request never forwards it again.
 *
 * A peer that fails before answering (refused, reset, closed, silent for
 * HF_FORWARD_TIMEOUT_MS) gives 503 unavailable: the outcome is unknown, and a retry with the
 * same Idempotency-Key is safe. A request is never sent twice.
 *
 * Choice: an advertised URL is http://HOST:PORT with HOST a numeric IPv4 or IPv6 address or
 * "localhost" (no name lookup on the loop's thread).
 *
 * Threads: the loop's only. Ownership: the forwarder owns its connections; the deferred
 * answer is the HTTP server's, filled and finished here. */
#ifndef HF_CLUSTER_FORWARD_H
#define HF_CLUSTER_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net/http.h"

/* The header a forwarded request carries: its value is the forwarding node's id. */
#define HF_FORWARD_HEADER "Holdfast-Forwarded"

typedef struct hf_forward hf_forward_t;

hf_forward_t *hf_forward_create(uv_loop_t *loop, const char *node_id);
/* Closes every connection (answers in flight get 503); the handles close in the loop. */
void hf_forward_close(hf_forward_t *forward);
/* After the loop ran the closes out. */
void hf_forward_free(hf_forward_t *forward);

/* Sends request to the node at address (its advertised URL) and relays its answer into the
 * deferred one. false when it cannot even be sent (a bad address, too many connections):
 * the caller answers itself. */
bool hf_forward_send(hf_forward_t *forward, hf_http_server_t *server, hf_http_deferred_t deferred,
                     const char *address, const hf_http_request_t *request);

/* An internal call (cluster/call.h): a request of this node's own to another node, whose
 * answer goes to a callback rather than to a client. Its texts are borrowed for the call of
 * hf_forward_call only (the request is written out at once). api_key NULL or "": none sent. */
typedef struct hf_forward_call {
    const char *method, *path;
    const char *body;
    size_t body_length;
    const char *api_key;
} hf_forward_call_t;
/* The answer: its status and body (borrowed for the callback), or status 0 when none came
 * whole (refused, reset, closed, silent for HF_CLUSTER_CALL_TIMEOUT_MS, the node stopping). */
typedef void (*hf_forward_done_fn)(void *state, int status, const char *body, size_t length);
/* Sends the call to the node at address; done is called once, later, on the loop. false
 * when it cannot even be sent (a bad address, too many connections, HF_CLUSTER_CALLS_MAX in
 * flight): done is then never called. */
bool hf_forward_call(hf_forward_t *forward, const char *address, const hf_forward_call_t *call,
                     hf_forward_done_fn done, void *state);

/* Relayed answers by outcome (holdfast_forwarded_total). */
typedef struct hf_forward_counts {
    uint64_t ok, unavailable;
} hf_forward_counts_t;
hf_forward_counts_t hf_forward_counts(const hf_forward_t *forward);

#endif
