/* HTTP/1.1 server on libuv and llhttp: keep-alive, pipelining with answers in request order,
 * limits on head, body, connections, pipeline depth and idle time. It knows nothing of routes:
 * each complete request goes to one handler function, which fills a response at once.
 *
 * Durability gate: every response carries the store sequence it depends on; a connection's
 * responses leave in order, each only once hf_http_server_release has been told that sequence
 * is durable. This is how "a reply only after its change is durable" is enforced in one place.
 *
 * Threads: everything here runs on the loop's thread.
 *
 * Files, by job: net/http.c (the server: listen, accept, release, fail, stop, close),
 * net/connection.c (a connection's lists, timer, reading, backpressure, closing),
 * net/http_parse.c (the llhttp callbacks and the request), net/response.c (the response queue,
 * serialization, the write, stream data); net/internal.h is what they share. */
#ifndef HF_HTTP_H
#define HF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lib/limits.h"
#include "lib/buffer.h"

typedef struct hf_http_header {
    const char *name; /* as received; compare case-insensitively */
    size_t name_length;
    const char *value; /* leading and trailing blanks removed */
    size_t value_length;
} hf_http_header_t;

#define HF_HTTP_HEADERS_MAX 100

typedef struct hf_http_request {
    const char *method; /* "GET", "POST", ... NUL-terminated */
    const char *path;   /* target before '?', not decoded, NUL-terminated */
    const char *query;  /* after '?', NUL-terminated, "" when none */
    const char *body;   /* NUL-terminated copy; body_length bytes */
    size_t body_length;
    const hf_http_header_t *headers;
    size_t header_count;
    void *connection; /* opaque, stable while the request is handled */
} hf_http_request_t;

/* Header value by case-insensitive name, or NULL; *length set when found. */
const char *hf_http_request_header(const hf_http_request_t *request, const char *name,
                                   size_t *length);

/* A header of an answer beyond those the server writes itself (Content-Type, Content-Length,
 * Connection, a stream's Cache-Control and X-Accel-Buffering). */
typedef struct hf_http_response_header {
    const char *name;
    const char *value;
    /* True for a header that holds whatever the answer is (CORS's, which depend on the
     * request alone): it stays when the server turns a queued answer into a 503
     * (hf_http_server_fail_pending). The others belong to the answer given and go with it. */
    bool every_answer;
} hf_http_response_header_t;

typedef struct hf_http_response {
    int status;
    const char *content_type;  /* static string; NULL: application/json */
    hf_buffer_t body;          /* handler writes here; owned by the server */
    uint64_t durable_sequence; /* released once this store sequence is durable */
    bool close;                /* close the connection after this response */
    /* Extra headers, in the order they are written; hf_http_response_header_add fills them. */
    hf_http_response_header_t headers[HF_HTTP_RESPONSE_HEADERS_MAX];
    uint32_t header_count;
    /* The handler's name for what the request was (the engine's route), handed back to the
     * answered callback; 0 for an answer the server made itself (a malformed request's). */
    uint32_t label;
} hf_http_response_t;

/* Adds a header to the answer. name and value are borrowed until the answer is written:
 * static strings, or strings that outlive the server. More than HF_HTTP_RESPONSE_HEADERS_MAX
 * is a bug (assert). An answer to HEAD (status 204 aside) keeps its Content-Length, the
 * length of the body the handler wrote, and the body is not sent. */
void hf_http_response_header_add(hf_http_response_t *response, const char *name, const char *value,
                                 bool every_answer);

typedef void (*hf_http_handler_fn)(void *context, const hf_http_request_t *request,
                                   hf_http_response_t *response);

/* Called as each final answer is handed to a write (a stream's first response included, its
 * data not): status as sent, the response's label, and the time since the request was read
 * whole, waiting for durability included. Loop thread; it must be cheap, since it runs for
 * every answer. */
typedef void (*hf_http_answered_fn)(void *context, uint32_t label, int status,
                                    uint64_t duration_ns);

typedef struct hf_http_config {
    const char *host;
    int port;
    hf_http_handler_fn handler;
    void *context;                /* the handler's and the answered callback's */
    hf_http_answered_fn answered; /* NULL: answers are not reported, nor timed */
    /* One log line per answer (method, path without its query, status, duration, bytes)
     * when it is written: off by default, since a busy server would log more than it serves.
     * The query is never logged: a stream may carry ?access_token=KEY there. */
    bool access_log;
    /* A socket hf_http_bind bound to host:port already: listened on as it is (the server
     * owns it from hf_http_server_start on, even when that fails). false: bound here. */
    bool bound;
    int bound_socket;
} hf_http_config_t;

typedef struct hf_http_server hf_http_server_t;

/* Binds a socket to host:port (SO_REUSEADDR, as the server's own bind) without listening, so
 * the address is taken before anything else is made (a port in use fails at once) while
 * connections are still refused until hf_http_server_start listens. Returns 0 with the
 * socket in *bound_socket, or a negative libuv error with a sentence in error. */
int hf_http_bind(uv_loop_t *loop, const char *host, int port, int *bound_socket, char *error,
                 size_t error_size);
/* Binds (unless config->bound) and listens. Returns 0, or a negative libuv error with a
 * sentence in error. */
int hf_http_server_start(hf_http_server_t **out, uv_loop_t *loop, const hf_http_config_t *config,
                         char *error, size_t error_size);
/* Sends every queued response whose sequence is <= durable_sequence. */
void hf_http_server_release(hf_http_server_t *server, uint64_t durable_sequence);
/* Turns every queued, unsent response that waits for a sequence > durable_sequence into a
 * 503 unavailable (the store failed: nothing of those batches is durable). */
void hf_http_server_fail_pending(hf_http_server_t *server, uint64_t durable_sequence);
/* Stops accepting; idle keep-alive connections are closed, others after their last answer. */
void hf_http_server_stop_accepting(hf_http_server_t *server);
/* Responses still queued (waiting for durability or being written). */
size_t hf_http_server_pending(const hf_http_server_t *server);
size_t hf_http_server_connections(const hf_http_server_t *server);
/* Closes every connection and the listener; the loop then runs until handles are closed. */
void hf_http_server_close(hf_http_server_t *server);
/* Frees the server after its handles are closed (after uv_run returns). */
void hf_http_server_free(hf_http_server_t *server);

/* ---- Streams (Server-Sent Events, API.md section 5) ----
 *
 * A handler turns its response into a stream with hf_http_response_stream. The response's
 * status, content type and body (the first data, e.g. a snapshot event) are queued like any
 * response and gated on its durable_sequence, but sent without Content-Length; from then on
 * the connection carries only stream data until it closes. Requests pipelined after a stream
 * request are not answered; bytes the client sends afterwards are read and discarded (so a
 * closed peer is noticed). A quiet stream never times out; a stream whose write has been
 * stuck for the idle timeout has a dead reader and is closed.
 *
 * Slow readers: when more than HF_HTTP_STREAM_BUFFER_MAX bytes of a stream are unsent,
 * hf_http_stream_send returns false and the connection is closed: a reader never holds the
 * server's memory or slows anyone else. */
typedef struct hf_http_stream hf_http_stream_t;

/* Called exactly once per stream, when it ends for any reason (peer gone, too slow,
 * hf_http_stream_close, server closing). Never called from inside hf_http_stream_send,
 * hf_http_stream_close or hf_http_response_stream: always from a later loop callback, so a
 * caller may iterate its subscribers while sending. After it returns the handle is invalid. */
typedef void (*hf_http_stream_closed_fn)(void *context, hf_http_stream_t *stream);

/* In a handler only. Returns the stream, owned by the server, valid until closed runs. */
hf_http_stream_t *hf_http_response_stream(hf_http_response_t *response,
                                          hf_http_stream_closed_fn closed, void *context);
/* In a handler answering HEAD where a GET would open a stream: the answer gets the head a
 * stream's first response has (its content type, Cache-Control and X-Accel-Buffering, no
 * Content-Length) and no body, no stream is opened, and the connection stays usable for the
 * requests after it. Calling it for another method is a bug (assert). */
void hf_http_response_stream_head(hf_http_response_t *response);
/* Appends data after everything queued before it on the connection (including a response
 * still waiting for durability). false when the stream is ending or the reader is too slow
 * (then it is being closed; the closed callback follows). */
bool hf_http_stream_send(hf_http_stream_t *stream, const char *data, size_t length);
/* Ends the stream after its queued data is written. */
void hf_http_stream_close(hf_http_stream_t *stream);

/* ---- Deferred answers (a request another node answers, cluster/forward.h) ----
 *
 * A handler defers its answer: the record stays in the connection's queue, held back whatever
 * the released sequence (and never turned into a 503 by hf_http_server_fail_pending), until
 * hf_http_deferred_finish. The handle is a slot and a generation: once the connection is gone
 * (its records freed), the handle finds nothing, so a late answer is simply dropped. At most
 * HF_HTTP_DEFERRED_MAX at once. */
typedef struct hf_http_deferred {
    uint32_t slot, generation;
} hf_http_deferred_t;

/* In a handler only. An invalid handle (hf_http_deferred_valid false) when the table is
 * full: the handler then answers itself. */
hf_http_deferred_t hf_http_response_defer(hf_http_response_t *response);
bool hf_http_deferred_valid(hf_http_deferred_t deferred);
/* In the handler that deferred: it answers itself after all. */
void hf_http_response_undefer(hf_http_response_t *response);
/* The deferred answer to fill, or NULL when its connection is gone. */
hf_http_response_t *hf_http_deferred_response(hf_http_server_t *server,
                                              hf_http_deferred_t deferred);
/* Sends the filled answer (in its turn among the connection's answers). */
void hf_http_deferred_finish(hf_http_server_t *server, hf_http_deferred_t deferred);
/* A deferred answer (its body empty) to be written by a handler once more, as if its request
 * had just arrived (a parked request dispatched again): the handle is released, so the
 * handler may defer the answer again (forwarding it, say); NULL when its connection is gone.
 * hf_http_response_settle follows the handler: the answer then leaves once its
 * durable_sequence is released, unless it was deferred again. */
hf_http_response_t *hf_http_deferred_reopen(hf_http_server_t *server, hf_http_deferred_t deferred);
void hf_http_response_settle(hf_http_response_t *response);
/* A copy of text for a header of this answer, freed with the answer; NULL past
 * HF_HTTP_RESPONSE_HEADERS_MAX + 1 copies. */
const char *hf_http_response_keep(hf_http_response_t *response, const char *text, size_t length);

/* Writes {"error": {"code": code, "message": message}} with status; a field is added when
 * field is not NULL. Used by the server itself for 4xx parse errors and by handlers. */
void hf_http_error(hf_http_response_t *response, int status, const char *code, const char *message,
                   const char *field);

#endif
