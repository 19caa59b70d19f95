/* What the files of the HTTP server share (http.h says which file does what): the connection,
 * server and queued-response structures, the list helpers, and the functions the files call
 * across. Private to src/net: nothing outside it includes this header. */
#ifndef HF_NET_INTERNAL_H
#define HF_NET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "lib/buffer.h"
#include "lib/json.h"
#include "llhttp.h"
#include "net/http.h"

/* Bytes read at once. One buffer serves every connection: libuv calls each read callback right
 * after its allocation, and whatever a paused parser has not consumed is copied out before the
 * callback returns. */
#define READ_BUFFER_SIZE (64u * 1024)
/* Buffers grown beyond this by one large request or response are freed after use instead of
 * kept for the next one, so an idle connection holds little memory. */
#define BUFFER_KEEP_SIZE (64u * 1024)

typedef struct link {
    struct link *previous;
    struct link *next;
} link_t;

#define CONTAINER_OF(pointer, type, member) ((type *)((char *)(pointer)-offsetof(type, member)))

static inline void list_init(link_t *head) { head->previous = head->next = head; }
static inline bool list_empty(const link_t *head) { return head->next == head; }

static inline void list_push_back(link_t *head, link_t *node) {
    node->previous = head->previous;
    node->next = head;
    head->previous->next = node;
    head->previous = node;
}

static inline void list_remove(link_t *node) {
    node->previous->next = node->next;
    node->next->previous = node->previous;
    node->previous = node->next = node;
}

/* Moves every node of from to the empty list to. */
static inline void list_take_all(link_t *to, link_t *from) {
    list_init(to);
    if (list_empty(from)) return;
    to->next = from->next;
    to->previous = from->previous;
    to->next->previous = to;
    to->previous->next = to;
    list_init(from);
}

typedef struct queued_response {
    hf_http_response_t response;
    struct queued_response *next;
    bool head_only;                /* answer to HEAD: headers without the body */
    bool keep_alive_header;        /* HTTP/1.0 client that asked for keep-alive must be told */
    bool interim;                  /* 100 Continue, not an answer of its own */
    bool stream;                   /* first response of a stream: no length, the body runs on */
    bool stream_head;              /* HEAD where GET opens a stream: that head, no stream */
    struct connection *connection; /* owner, for hf_http_response_stream */
    /* The access log's (net/response.c): the request's method (a static name) and a copy of
     * its path, and when it was parsed (uv_hrtime); NULL path: nothing to log. */
    const char *access_method;
    char *access_path;
    uint64_t access_started_ns;
    uint64_t received_ns; /* uv_hrtime when the request was read whole (server->answered) */
    /* An answer another node gives (net/deferred.c): held back, whatever the released
     * sequence, until hf_http_deferred_finish; its slot in the server's table while it is. */
    bool deferred;
    uint32_t deferred_slot;
    /* Strings copied for the answer's headers (hf_http_response_keep), freed with it. */
    char *kept[HF_HTTP_RESPONSE_HEADERS_MAX + 1];
    uint32_t kept_count;
} queued_response_t;

/* Offsets into the connection's head buffer: the buffer may move while it grows. */
typedef struct header_span {
    uint32_t name_offset;
    uint32_t name_length;
    uint32_t value_offset;
    uint32_t value_length;
} header_span_t;

enum connection_list { LIST_NONE, LIST_WAITING, LIST_IDLE, LIST_HEAD, LIST_BODY, LIST_LINGER };

/* What of a request has arrived: nothing yet (between requests), a part of its head, or its
 * head and a part of its body. */
enum request_phase { PHASE_NONE, PHASE_HEAD, PHASE_BODY };

/* Embedded in its connection, which it never outlives. */
struct hf_http_stream {
    hf_http_stream_closed_fn closed;
    void *context;
    hf_buffer_t unsent;   /* data not yet handed to a write */
    size_t writing_bytes; /* stream data at the tail of the write in flight */
    bool open;            /* hf_http_response_stream was called on this connection */
    bool started;         /* the first response is serialized: data may follow it */
    bool ending;          /* no more data accepted; the connection ends once it is written */
};

typedef struct connection {
    uv_tcp_t tcp;
    hf_http_server_t *server;
    llhttp_t parser;
    link_t all_link;  /* in server->connections until the handle is closed */
    link_t list_link; /* in the list named by list */
    enum connection_list list;
    uint64_t deadline_ms;

    /* The request being parsed. The head buffer holds the URL, then each header name and
     * value, each followed by a NUL. */
    hf_buffer_t head;
    size_t head_size;  /* request line and headers as sent, counted against the limit */
    size_t span_start; /* where the element being received starts in head */
    size_t url_length;
    header_span_t headers[HF_HTTP_HEADERS_MAX];
    size_t header_count;
    hf_buffer_t body;
    /* The request's clock (limits.h): its phase, when its head or body is due (uv_now's
     * time), and the body's bytes not yet turned into time, in byte-milliseconds. */
    enum request_phase phase;
    uint64_t request_deadline_ms;
    uint64_t body_credit;

    /* Input read but not parsed because the parser paused for backpressure. */
    hf_buffer_t held_input;
    size_t held_offset;

    /* Responses not yet handed to a write, in request order. */
    queued_response_t *queue_head;
    queued_response_t *queue_tail;
    size_t queued_count;
    size_t queued_bytes;
    queued_response_t *free_responses;
    size_t free_count;

    hf_buffer_t output; /* serialized responses of the write in flight */
    size_t writing_count;
    uv_write_t write_request;
    uv_shutdown_t shutdown_request;

    bool reading;       /* uv_read_start is in effect */
    bool parsing;       /* inside llhttp_execute: the parser may not be entered again */
    bool parser_paused; /* backpressure: parsing stopped until answers drain */
    bool input_done;    /* no further request will be read */
    bool peer_closed;   /* end of input seen */
    bool writing;
    bool lingering;
    bool closing; /* uv_close called; freed in its callback */

    hf_http_stream_t stream;
} connection_t;

struct hf_http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t timer;
    uint64_t timer_due_ms;
    hf_http_handler_fn handler;
    void *context;
    hf_http_answered_fn answered;
    uint64_t released_sequence;
    link_t connections;
    link_t waiting;
    link_t idle;
    link_t head;
    link_t body;
    link_t linger;
    size_t connection_count;
    size_t pending_count;
    bool listening;
    bool closed;
    bool access_log; /* hf_http_config_t.access_log */
    /* Deferred answers by slot (net/deferred.c), and each slot's generation, so a handle
     * kept past its answer's end finds nothing. */
    queued_response_t *deferred[HF_HTTP_DEFERRED_MAX];
    uint32_t deferred_generation[HF_HTTP_DEFERRED_MAX];
    /* The Date header's text (net/response.c): the wall clock is read at most once per turn
     * of the loop (when uv_now has moved) and the text made again only when its second
     * changed, so an answer costs a copy of it. */
    uint64_t date_loop_ms;
    int64_t date_second;
    char date[HF_HTTP_DATE_SIZE];
    hf_http_header_t headers[HF_HTTP_HEADERS_MAX]; /* the current request's, for the handler */
    char read_buffer[READ_BUFFER_SIZE];
};

/* ---- buffers ---- */

/* Empties a buffer for reuse, giving its memory back if one large use grew it. */
static inline void buffer_recycle(hf_buffer_t *buffer) {
    if (buffer->capacity > BUFFER_KEEP_SIZE) hf_buffer_free(buffer);
    else hf_buffer_reset(buffer);
}

/* ---- what the net files call across; every connection and record belongs to the server ---- */

/* net/connection.c: a connection's state. */
/* Brings a connection to the state its queue and flags call for; after every event on it. */
void connection_settle(connection_t *connection);
/* Closes at once: whatever is unsent is lost. The connection is freed by a later callback. */
void connection_close(connection_t *connection);
/* The client did something: its idle deadline starts again. */
void connection_touch(connection_t *connection);
/* Parses input held back by backpressure once answers have drained below the limits. */
void connection_resume(connection_t *connection);
/* Answers queued or being written. */
size_t connection_pending(const connection_t *connection);
/* Past the pipeline or output limit: the connection stops being read. */
bool connection_over_limits(const connection_t *connection);

/* net/http_parse.c: requests. */
/* Readies a new connection's parser for its first request. */
void connection_parser_init(connection_t *connection);
/* Parses data; returns how much was consumed, less than length only when the parser paused. */
size_t connection_parse(connection_t *connection, const char *data, size_t length);
/* The request in progress is past its deadline: answered 408, and the connection ends. */
void connection_request_timeout(connection_t *connection);

/* net/deferred.c: a deferred answer's and its kept strings' end, as its record is freed. */
void response_deferred_forget(queued_response_t *entry);

/* net/response.c: answers. */
/* A record with status 200, owned by the caller until enqueued or given to response_free. */
queued_response_t *response_take(connection_t *connection);
void response_free(queued_response_t *entry);
/* Appends to the connection's queue, which owns the record from then on. */
void response_enqueue(connection_t *connection, queued_response_t *entry);
/* Takes the head of a queue that is not empty; the caller owns it. */
queued_response_t *response_dequeue(connection_t *connection);
/* The access log: remembers the request of an answer, and logs the answer once it is written
 * (with its status, its duration since the request was parsed and its body's bytes). */
void response_access_begin(queued_response_t *entry, const char *method, const char *path);
void response_access_log(queued_response_t *entry);
/* Hands every ready response, and stream data after them, to one write; true when all of it
 * left at once. */
bool connection_flush(connection_t *connection);

#endif
