/* HTTP/1.1 server on libuv and llhttp: keep-alive, pipelining with answers in request order,
 * limits on head, body, connections, pipeline depth and idle time. It knows nothing of routes:
 * each complete request goes to one handler function, which fills a response at once.
 *
 * Durability gate: every response carries the store sequence it depends on; a connection's
 * responses leave in order, each only once hf_http_server_release has been told that sequence
 * is durable. This is how "a reply only after its change is durable" is enforced in one place.
 *
 * Threads: everything here runs on the loop's thread. */
#ifndef HF_HTTP_H
#define HF_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/buffer.h"

typedef struct hf_http_header {
    const char *name;   /* as received; compare case-insensitively */
    size_t name_length;
    const char *value;  /* leading and trailing blanks removed */
    size_t value_length;
} hf_http_header_t;

#define HF_HTTP_HEADERS_MAX 100

typedef struct hf_http_request {
    const char *method;        /* "GET", "POST", ... NUL-terminated */
    const char *path;          /* target before '?', not decoded, NUL-terminated */
    const char *query;         /* after '?', NUL-terminated, "" when none */
    const char *body;          /* NUL-terminated copy; body_length bytes */
    size_t body_length;
    const hf_http_header_t *headers;
    size_t header_count;
    void *connection;          /* opaque, stable while the request is handled */
} hf_http_request_t;

/* Header value by case-insensitive name, or NULL; *length set when found. */
const char *hf_http_request_header(const hf_http_request_t *request, const char *name,
                                   size_t *length);

typedef struct hf_http_response {
    int status;
    const char *content_type;  /* static string; NULL: application/json */
    hf_buffer_t body;          /* handler writes here; owned by the server */
    uint64_t durable_sequence; /* released once this store sequence is durable */
    bool close;                /* close the connection after this response */
} hf_http_response_t;

typedef void (*hf_http_handler_fn)(void *context, const hf_http_request_t *request,
                                   hf_http_response_t *response);

typedef struct hf_http_config {
    const char *host;
    int port;
    hf_http_handler_fn handler;
    void *context;
} hf_http_config_t;

typedef struct hf_http_server hf_http_server_t;

/* Binds and listens. Returns 0, or a negative libuv error with a sentence in error. */
int hf_http_server_start(hf_http_server_t **out, uv_loop_t *loop,
                         const hf_http_config_t *config, char *error, size_t error_size);
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

/* Writes {"error": {"code": code, "message": message}} with status; a field is added when
 * field is not NULL. Used by the server itself for 4xx parse errors and by handlers. */
void hf_http_error(hf_http_response_t *response, int status, const char *code,
                   const char *message, const char *field);

#endif
