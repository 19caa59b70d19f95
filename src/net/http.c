/* HTTP/1.1 server on libuv and llhttp (see http.h).
 *
 * A connection parses requests as bytes arrive and calls the handler as each request completes.
 * The handler's response joins the connection's queue with the store sequence it depends on.
 * The queue leaves in order: its head responses whose sequence is released are serialized into
 * one output buffer and sent with one write, so a pipelining client costs one write per batch.
 *
 * Each open connection sits in at most one of three lists, which replace per-connection timers:
 * - waiting: its next response waits for the store; hf_http_server_release visits only these;
 * - idle: the client's clock runs (the store owes it nothing); closed when neither a read nor a
 *   completed write happened for HF_HTTP_IDLE_TIMEOUT_MS, which also ends a client that stalls
 *   in the middle of a request or stops reading its answers;
 * - linger: its last answer is sent; unread input is drained until the peer closes or a short
 *   deadline passes, so a close never resets (and destroys) an answer still in flight.
 * Idle and linger each use one constant timeout, so appending at the tail keeps them sorted by
 * deadline and one server timer, set to the earliest head, serves every connection.
 *
 * Backpressure: when a connection has HF_HTTP_PIPELINE_MAX answers outstanding or more than
 * HF_HTTP_OUTPUT_SIZE_MAX bytes unsent, on_message_complete pauses the parser; the unparsed rest
 * of the read is kept and reading stops. When a write completes and the connection is below both
 * limits again, the kept input is parsed and reading resumes.
 *
 * Streams: a response turned into a stream is the last one a connection parses. Its data waits
 * in the stream's own unsent buffer until the stream's first response has been serialized, then
 * joins the connection's single write; sends made while a write is in flight coalesce into the
 * next one. The stream's state lives in the connection, so its closed callback runs from the
 * connection's close callback: never synchronously, and exactly once. */
#include "net/http.h"

#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/limits.h"
#include "lib/json.h"
#include "llhttp.h"

/* Bytes read at once. One buffer serves every connection: libuv calls each read callback right
 * after its allocation, and whatever a paused parser has not consumed is copied out before the
 * callback returns. */
#define READ_BUFFER_SIZE (64u * 1024)
/* How long a closing connection keeps draining input after its last answer was handed to the
 * kernel: long enough for the peer to read the answer and close, short enough that a peer which
 * keeps sending cannot hold the socket. */
#define LINGER_TIMEOUT_MS 5000u
/* Buffers grown beyond this by one large request or response are freed after use instead of
 * kept for the next one, so an idle connection holds little memory. */
#define BUFFER_KEEP_SIZE (64u * 1024)
/* Response records kept per connection for reuse; a deeper pipeline allocates more for a while. */
#define FREE_RESPONSES_KEEP 4u
#define LISTEN_BACKLOG 1024
/* Rough size of a serialized status line and headers, counted against the output limit. */
#define RESPONSE_HEAD_SIZE_ESTIMATE 128u

/* Returned by a parser callback to stop parsing: llhttp turns it into an error, which is
 * ignored because the callback has already queued the answer. */
#define PARSE_STOP (-1)

typedef struct link {
    struct link *previous;
    struct link *next;
} link_t;

#define CONTAINER_OF(pointer, type, member) ((type *)((char *)(pointer)-offsetof(type, member)))

static void list_init(link_t *head) { head->previous = head->next = head; }
static bool list_empty(const link_t *head) { return head->next == head; }

static void list_push_back(link_t *head, link_t *node) {
    node->previous = head->previous;
    node->next = head;
    head->previous->next = node;
    head->previous = node;
}

static void list_remove(link_t *node) {
    node->previous->next = node->next;
    node->next->previous = node->previous;
    node->previous = node->next = node;
}

/* Moves every node of from to the empty list to. */
static void list_take_all(link_t *to, link_t *from) {
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
    bool head_only;         /* answer to HEAD: headers without the body */
    bool keep_alive_header; /* HTTP/1.0 client that asked for keep-alive must be told */
    bool interim;           /* 100 Continue, not an answer of its own */
    bool stream;            /* first response of a stream: no length, the body runs on */
    struct connection *connection; /* owner, for hf_http_response_stream */
} queued_response_t;

/* Offsets into the connection's head buffer: the buffer may move while it grows. */
typedef struct header_span {
    uint32_t name_offset;
    uint32_t name_length;
    uint32_t value_offset;
    uint32_t value_length;
} header_span_t;

enum connection_list { LIST_NONE, LIST_WAITING, LIST_IDLE, LIST_LINGER };

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
    link_t all_link;          /* in server->connections until the handle is closed */
    link_t list_link;         /* in the list named by list */
    enum connection_list list;
    uint64_t deadline_ms;

    /* The request being parsed. The head buffer holds the URL, then each header name and
     * value, each followed by a NUL. */
    hf_buffer_t head;
    size_t head_size; /* request line and headers as sent, counted against the limit */
    size_t span_start; /* where the element being received starts in head */
    size_t url_length;
    header_span_t headers[HF_HTTP_HEADERS_MAX];
    size_t header_count;
    hf_buffer_t body;

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

    bool reading;        /* uv_read_start is in effect */
    bool parsing;        /* inside llhttp_execute: the parser may not be entered again */
    bool parser_paused;  /* backpressure: parsing stopped until answers drain */
    bool input_done;     /* no further request will be read */
    bool peer_closed;    /* end of input seen */
    bool writing;
    bool lingering;
    bool closing;        /* uv_close called; freed in its callback */

    hf_http_stream_t stream;
} connection_t;

struct hf_http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    uv_timer_t timer;
    uint64_t timer_due_ms;
    hf_http_handler_fn handler;
    void *context;
    uint64_t released_sequence;
    link_t connections;
    link_t waiting;
    link_t idle;
    link_t linger;
    size_t connection_count;
    size_t pending_count;
    bool listening;
    bool closed;
    hf_http_header_t headers[HF_HTTP_HEADERS_MAX]; /* the current request's, for the handler */
    char read_buffer[READ_BUFFER_SIZE];
};

static void connection_settle(connection_t *connection);
static void connection_close(connection_t *connection);

/* ---- buffers ---- */

/* Empties a buffer for reuse, giving its memory back if one large use grew it. */
static void buffer_recycle(hf_buffer_t *buffer) {
    if (buffer->capacity > BUFFER_KEEP_SIZE)
        hf_buffer_free(buffer);
    else
        hf_buffer_reset(buffer);
}

/* ---- response records ---- */

static queued_response_t *response_take(connection_t *connection) {
    queued_response_t *entry = connection->free_responses;
    if (entry) {
        connection->free_responses = entry->next;
        connection->free_count--;
        hf_buffer_reset(&entry->response.body);
    } else {
        entry = calloc(1, sizeof *entry);
        if (!entry) abort(); /* as hf_buffer: no sensible answer without memory */
    }
    hf_buffer_t body = entry->response.body;
    memset(entry, 0, sizeof *entry);
    entry->response.body = body;
    entry->response.status = 200;
    entry->connection = connection;
    return entry;
}

static void response_free(queued_response_t *entry) {
    hf_buffer_free(&entry->response.body);
    free(entry);
}

static void response_recycle(connection_t *connection, queued_response_t *entry) {
    if (connection->free_count >= FREE_RESPONSES_KEEP) {
        response_free(entry);
        return;
    }
    buffer_recycle(&entry->response.body);
    entry->next = connection->free_responses;
    connection->free_responses = entry;
    connection->free_count++;
}

static void response_enqueue(connection_t *connection, queued_response_t *entry) {
    entry->next = NULL;
    if (connection->queue_tail)
        connection->queue_tail->next = entry;
    else
        connection->queue_head = entry;
    connection->queue_tail = entry;
    connection->queued_count++;
    connection->queued_bytes += entry->response.body.length + RESPONSE_HEAD_SIZE_ESTIMATE;
    connection->server->pending_count++;
}

static queued_response_t *response_dequeue(connection_t *connection) {
    queued_response_t *entry = connection->queue_head;
    connection->queue_head = entry->next;
    if (!connection->queue_head) connection->queue_tail = NULL;
    connection->queued_count--;
    connection->queued_bytes -= entry->response.body.length + RESPONSE_HEAD_SIZE_ESTIMATE;
    return entry;
}

static const char *status_reason(int status) {
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* Serializing runs once per answer: plain appends cost a fraction of printf. */
static void append_decimal(hf_buffer_t *out, size_t value) {
    char digits[24];
    size_t start = sizeof digits;
    do {
        digits[--start] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    hf_buffer_append(out, digits + start, sizeof digits - start);
}

static void response_serialize(hf_buffer_t *out, const queued_response_t *entry) {
    if (entry->interim) {
        HF_BUFFER_APPEND_LITERAL(out, "HTTP/1.1 100 Continue\r\n\r\n");
        return;
    }
    const hf_http_response_t *response = &entry->response;
    /* A final answer must be 2xx to 5xx: anything else from a handler is a bug, and sending
     * it would break the framing of the connection. */
    int status = response->status >= 200 && response->status <= 599 ? response->status : 500;
    /* 204 carries no body and no length (RFC 9110 section 8.6). */
    bool has_body = status != 204;
    HF_BUFFER_APPEND_LITERAL(out, "HTTP/1.1 ");
    append_decimal(out, (size_t)status);
    hf_buffer_append_char(out, ' ');
    hf_buffer_append_string(out, status_reason(status));
    if (response->content_type || entry->stream) {
        HF_BUFFER_APPEND_LITERAL(out, "\r\nContent-Type: ");
        const char *fallback_type = entry->stream ? "text/event-stream" : "application/json";
        hf_buffer_append_string(out, response->content_type ? response->content_type
                                                            : fallback_type);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    } else {
        HF_BUFFER_APPEND_LITERAL(out, "\r\nContent-Type: application/json\r\n"); /* most answers */
    }
    if (entry->stream) {
        /* The body runs until the connection closes, so it has no length. The other two
         * headers keep caches and proxies (nginx) from holding events back. */
        HF_BUFFER_APPEND_LITERAL(out, "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n\r\n");
        if (!entry->head_only) hf_buffer_append(out, response->body.data, response->body.length);
        return;
    }
    if (has_body) {
        HF_BUFFER_APPEND_LITERAL(out, "Content-Length: ");
        append_decimal(out, response->body.length);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    }
    if (response->close)
        HF_BUFFER_APPEND_LITERAL(out, "Connection: close\r\n");
    else if (entry->keep_alive_header)
        HF_BUFFER_APPEND_LITERAL(out, "Connection: keep-alive\r\n");
    HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    if (has_body && !entry->head_only)
        hf_buffer_append(out, response->body.data, response->body.length);
}

/* ---- connection lists and the timer ---- */

static void on_timer(uv_timer_t *timer);

static uint64_t list_timeout_ms(enum connection_list list) {
    return list == LIST_LINGER ? LINGER_TIMEOUT_MS : HF_HTTP_IDLE_TIMEOUT_MS;
}

static link_t *server_list(hf_http_server_t *server, enum connection_list list) {
    switch (list) {
    case LIST_WAITING: return &server->waiting;
    case LIST_IDLE: return &server->idle;
    case LIST_LINGER: return &server->linger;
    default: return NULL;
    }
}

/* Makes sure the timer fires no later than deadline_ms. */
static void timer_schedule(hf_http_server_t *server, uint64_t deadline_ms) {
    if (server->closed) return;
    if (uv_is_active((uv_handle_t *)&server->timer) && server->timer_due_ms <= deadline_ms)
        return;
    uint64_t now = uv_now(server->loop);
    server->timer_due_ms = deadline_ms;
    uv_timer_start(&server->timer, on_timer, deadline_ms > now ? deadline_ms - now : 0, 0);
}

/* Puts the connection at the tail of list; a timed list restarts its deadline. */
static void connection_list_set(connection_t *connection, enum connection_list list) {
    hf_http_server_t *server = connection->server;
    if (connection->list != LIST_NONE) list_remove(&connection->list_link);
    connection->list = list;
    if (list == LIST_NONE) return;
    list_push_back(server_list(server, list), &connection->list_link);
    if (list == LIST_WAITING) return;
    connection->deadline_ms = uv_now(server->loop) + list_timeout_ms(list);
    timer_schedule(server, connection->deadline_ms);
}

/* The client did something: its idle deadline starts again. */
static void connection_touch(connection_t *connection) {
    if (connection->list == LIST_IDLE) connection_list_set(connection, LIST_IDLE);
}

/* Closes the expired heads of one timed list; returns the next deadline, or 0 if empty. */
static uint64_t list_expire(link_t *head, uint64_t now) {
    while (!list_empty(head)) {
        connection_t *connection = CONTAINER_OF(head->next, connection_t, list_link);
        if (connection->deadline_ms > now) return connection->deadline_ms;
        connection_close(connection);
    }
    return 0;
}

static void on_timer(uv_timer_t *timer) {
    hf_http_server_t *server = timer->data;
    uint64_t now = uv_now(server->loop);
    uint64_t idle_next = list_expire(&server->idle, now);
    uint64_t linger_next = list_expire(&server->linger, now);
    uint64_t next = idle_next;
    if (linger_next && (!next || linger_next < next)) next = linger_next;
    if (next) timer_schedule(server, next);
}

/* ---- closing ---- */

static void on_connection_closed(uv_handle_t *handle) {
    connection_t *connection = handle->data;
    hf_http_server_t *server = connection->server;
    /* The one place a stream ends, whatever ended it: so its owner hears of it exactly once,
     * and from a loop callback of its own. */
    hf_http_stream_t *stream = &connection->stream;
    if (stream->open && stream->closed) stream->closed(stream->context, stream);
    hf_buffer_free(&stream->unsent);
    list_remove(&connection->all_link);
    server->connection_count--;
    /* A write in flight was cancelled (its callback ran first); what remains is the queue. */
    server->pending_count -= connection->queued_count;
    while (connection->queue_head) response_free(response_dequeue(connection));
    while (connection->free_responses) {
        queued_response_t *entry = connection->free_responses;
        connection->free_responses = entry->next;
        response_free(entry);
    }
    hf_buffer_free(&connection->head);
    hf_buffer_free(&connection->body);
    hf_buffer_free(&connection->held_input);
    hf_buffer_free(&connection->output);
    free(connection);
}

/* Closes at once: whatever is unsent is lost. For errors, timeouts and server shutdown. */
static void connection_close(connection_t *connection) {
    if (connection->closing) return;
    connection->closing = true;
    connection->input_done = true;
    connection_list_set(connection, LIST_NONE);
    uv_close((uv_handle_t *)&connection->tcp, on_connection_closed);
}

static void on_shutdown(uv_shutdown_t *request, int status) {
    connection_t *connection = request->data;
    if (status < 0) connection_close(connection);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer);
static void on_allocate(uv_handle_t *handle, size_t suggested_size, uv_buf_t *buffer);

/* Ends a connection whose last answer has been handed to the kernel. */
static void connection_end(connection_t *connection) {
    /* The peer already closed its side: nothing unread can turn our close into a reset. */
    if (connection->peer_closed) {
        connection_close(connection);
        return;
    }
    connection->lingering = true;
    connection->input_done = true;
    hf_buffer_free(&connection->held_input);
    connection->shutdown_request.data = connection;
    if (uv_shutdown(&connection->shutdown_request, (uv_stream_t *)&connection->tcp,
                    on_shutdown) < 0) {
        connection_close(connection);
        return;
    }
    if (!connection->reading &&
        uv_read_start((uv_stream_t *)&connection->tcp, on_allocate, on_read) < 0) {
        connection_close(connection);
        return;
    }
    connection->reading = true;
    connection_list_set(connection, LIST_LINGER);
}

/* ---- writing ---- */

static void on_write(uv_write_t *request, int status);

/* Moves the stream's unsent data into output, behind the responses there, once nothing queued
 * precedes it; returns how much it moved. */
static size_t stream_serialize(connection_t *connection) {
    hf_http_stream_t *stream = &connection->stream;
    size_t length = stream->unsent.length;
    if (!stream->started || connection->queue_head || length == 0) return 0;
    if (connection->output.length == 0) {
        /* The usual case, a write of stream data alone: swapping the buffers saves a copy. */
        hf_buffer_t empty = connection->output;
        connection->output = stream->unsent;
        stream->unsent = empty;
    } else {
        hf_buffer_append(&connection->output, stream->unsent.data, length);
        buffer_recycle(&stream->unsent);
    }
    return length;
}

/* The bookkeeping once a write has left, whether it left at once or through uv_write. */
static void write_done(connection_t *connection) {
    connection->writing = false;
    connection->server->pending_count -= connection->writing_count;
    connection->writing_count = 0;
    connection->stream.writing_bytes = 0;
    buffer_recycle(&connection->output);
}

/* Hands every ready response at the head of the queue, and stream data after them, to one
 * write. Most answers fit in the socket's buffer, so the write is first tried at once with
 * uv_try_write: then it needs no write request, no callback on a later loop turn and no
 * epoll_ctl (libuv re-arms the stream's watcher after every uv_write, one system call per
 * answer). Only what does not fit goes through uv_write. Returns true when everything left at
 * once: the caller then carries on as on_write would. */
static bool connection_flush(connection_t *connection) {
    if (connection->closing || connection->lingering || connection->writing) return false;
    hf_http_server_t *server = connection->server;
    size_t count = 0;
    bool close = false;
    while (connection->queue_head && !close &&
           connection->queue_head->response.durable_sequence <= server->released_sequence) {
        queued_response_t *entry = response_dequeue(connection);
        response_serialize(&connection->output, entry);
        close = entry->response.close;
        if (entry->stream) connection->stream.started = true;
        count++;
        response_recycle(connection, entry);
    }
    /* Nothing is read after an answer that closes, so nothing should follow it. */
    while (close && connection->queue_head) {
        response_free(response_dequeue(connection));
        server->pending_count--;
    }
    size_t stream_bytes = stream_serialize(connection);
    if (count == 0 && stream_bytes == 0) return false;
    connection->writing_count = count;
    connection->stream.writing_bytes = stream_bytes;
    connection->writing = true;
    uv_stream_t *tcp = (uv_stream_t *)&connection->tcp;
    uv_buf_t buffer = uv_buf_init(connection->output.data, (unsigned)connection->output.length);
    int sent = uv_try_write(tcp, &buffer, 1);
    if (sent == (int)buffer.len) {
        write_done(connection);
        connection_touch(connection);
        return true;
    }
    if (sent < 0 && sent != UV_EAGAIN) {
        write_done(connection);
        connection_close(connection); /* the peer is gone */
        return false;
    }
    if (sent > 0) buffer = uv_buf_init(buffer.base + sent, buffer.len - (unsigned)sent);
    connection->write_request.data = connection;
    if (uv_write(&connection->write_request, tcp, &buffer, 1, on_write) < 0) {
        write_done(connection);
        connection_close(connection);
    }
    return false;
}

static void connection_resume(connection_t *connection);

static void on_write(uv_write_t *request, int status) {
    connection_t *connection = request->data;
    write_done(connection);
    if (connection->closing) return;
    if (status < 0) {
        connection_close(connection); /* the peer is gone */
        return;
    }
    connection_touch(connection);
    connection_resume(connection);
    connection_settle(connection);
}

/* ---- reading and parsing ---- */

static const llhttp_settings_t parser_settings;

static size_t connection_pending(const connection_t *connection) {
    return connection->queued_count + connection->writing_count;
}

/* Past either limit the connection stops being read until its answers drain. */
static bool connection_over_limits(const connection_t *connection) {
    size_t unsent = connection->queued_bytes + (connection->writing ? connection->output.length : 0);
    return connection_pending(connection) >= HF_HTTP_PIPELINE_MAX ||
           unsent > HF_HTTP_OUTPUT_SIZE_MAX;
}

static void on_allocate(uv_handle_t *handle, size_t suggested_size, uv_buf_t *buffer) {
    connection_t *connection = handle->data;
    *buffer = uv_buf_init(connection->server->read_buffer, READ_BUFFER_SIZE);
}

/* Queues an answer of the server's own (a malformed or oversized request) and stops reading:
 * after such a request the rest of the stream cannot be trusted to be framed right. */
static void connection_reject(connection_t *connection, int status, const char *code,
                              const char *message) {
    if (connection->input_done) return;
    queued_response_t *entry = response_take(connection);
    hf_http_error(&entry->response, status, code, message, NULL);
    entry->response.close = true;
    response_enqueue(connection, entry);
    connection->input_done = true;
    hf_buffer_free(&connection->held_input);
}

static void connection_reject_parse_error(connection_t *connection, llhttp_errno_t error) {
    if (error == HPE_INVALID_VERSION || error == HPE_PAUSED_H2_UPGRADE) {
        connection_reject(connection, 505, "http_version_not_supported",
                          "only HTTP/1.0 and HTTP/1.1 are supported");
        return;
    }
    char message[256];
    snprintf(message, sizeof message, "malformed request: %s (%s)",
             llhttp_get_error_reason(&connection->parser), llhttp_errno_name(error));
    connection_reject(connection, 400, "bad_request", message);
}

/* Parses data; returns how much was consumed, less than length only when the parser paused
 * for backpressure. Bytes after a final answer or an error are dropped (reported consumed). */
static size_t connection_parse(connection_t *connection, const char *data, size_t length) {
    connection->parsing = true;
    llhttp_errno_t error = llhttp_execute(&connection->parser, data, length);
    connection->parsing = false;
    if (error == HPE_OK || connection->closing || connection->input_done) return length;
    if (error == HPE_PAUSED) {
        connection->parser_paused = true;
        return (size_t)(llhttp_get_error_pos(&connection->parser) - data);
    }
    connection_reject_parse_error(connection, error);
    return length;
}

/* Parses input held back by backpressure once answers have drained below the limits. */
static void connection_resume(connection_t *connection) {
    if (!connection->parser_paused || connection->input_done || connection_over_limits(connection))
        return;
    connection->parser_paused = false;
    llhttp_resume(&connection->parser);
    hf_buffer_t *held = &connection->held_input;
    if (connection->held_offset < held->length) {
        connection->held_offset += connection_parse(connection, held->data + connection->held_offset,
                                                    held->length - connection->held_offset);
    }
    if (connection->held_offset >= held->length || connection->input_done) {
        buffer_recycle(held);
        connection->held_offset = 0;
    }
}

static void connection_peer_closed(connection_t *connection) {
    connection->peer_closed = true;
    connection->input_done = true;
    connection->reading = false; /* libuv stops reading at the end of the stream */
    hf_buffer_free(&connection->held_input);
    /* A request cut short has no answer: its sender is gone or broken. */
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer) {
    connection_t *connection = stream->data;
    if (connection->closing || nread == 0) return;
    if (nread < 0) {
        /* A stream's reader that closes its side is gone: nothing more is owed to it. */
        if (nread == UV_EOF && !connection->lingering && !connection->stream.open) {
            connection_peer_closed(connection);
            connection_settle(connection);
        } else {
            connection_close(connection);
        }
        return;
    }
    if (connection->lingering || connection->input_done) return; /* drained, not parsed */
    connection_touch(connection);
    size_t length = (size_t)nread;
    size_t consumed = connection_parse(connection, buffer->base, length);
    if (consumed < length && !connection->input_done && !connection->closing) {
        /* The shared read buffer is reused by the next read: keep the rest. */
        hf_buffer_append(&connection->held_input, buffer->base + consumed, length - consumed);
        connection->held_offset = 0;
    }
    connection_settle(connection);
}

static void connection_reading_set(connection_t *connection, bool reading) {
    if (connection->reading == reading) return;
    uv_stream_t *stream = (uv_stream_t *)&connection->tcp;
    if (!reading) {
        uv_read_stop(stream);
        connection->reading = false;
        return;
    }
    if (uv_read_start(stream, on_allocate, on_read) < 0) {
        connection_close(connection);
        return;
    }
    connection->reading = true;
}

/* The store owes this connection its next answer. */
static bool connection_waits_for_store(const connection_t *connection) {
    return connection->queue_head &&
           connection->queue_head->response.durable_sequence >
               connection->server->released_sequence;
}

/* Everything the connection will ever send has been handed to the kernel. */
static bool connection_finished(const connection_t *connection) {
    if (!connection->input_done || connection_pending(connection) > 0 || connection->parsing)
        return false;
    const hf_http_stream_t *stream = &connection->stream;
    return !stream->open || (stream->ending && stream->unsent.length == 0 && !connection->writing);
}

/* A stream's input is still read, and dropped, so that a reader who leaves is noticed. */
static bool connection_wants_input(const connection_t *connection) {
    if (connection->stream.open) return true;
    return !connection->input_done && !connection->parser_paused;
}

/* Brings a connection to the state its queue and flags call for: sends what is ready, ends it
 * when it has answered everything it will ever answer, reads or not, and files it in the list
 * whose clock applies. Called after every event on the connection. */
static void connection_settle(connection_t *connection) {
    if (connection->closing || connection->lingering) return;
    /* A write that left at once is followed by what on_write does after one: the parser,
     * paused at a limit, may go on, and what it answers may be ready to send as well. */
    while (connection_flush(connection)) {
        if (connection->closing) return;
        connection_resume(connection);
        if (connection->closing || connection->lingering) return;
    }
    if (connection->closing) return;
    if (connection_finished(connection)) {
        connection_end(connection);
        return;
    }
    if (!connection->peer_closed)
        connection_reading_set(connection, connection_wants_input(connection));
    if (connection->closing) return;
    /* A stream may stay quiet for as long as nothing happens, so the idle clock runs on it
     * only while a write is in flight: a write that stalls that long has a dead reader. */
    bool quiet_stream = connection->stream.open && !connection->writing;
    enum connection_list list = connection_waits_for_store(connection) ? LIST_WAITING
                                : quiet_stream                         ? LIST_NONE
                                                                       : LIST_IDLE;
    if (connection->list != list) connection_list_set(connection, list);
}

/* ---- parser callbacks ---- */

static connection_t *parser_connection(llhttp_t *parser) { return parser->data; }

/* Counts bytes of the request head; past the limit the request is answered 431. */
static bool head_count(connection_t *connection, size_t length) {
    connection->head_size += length;
    if (connection->head_size <= HF_HTTP_HEAD_SIZE_MAX) return true;
    connection_reject(connection, 431, "head_too_large",
                      "the request line and headers exceed 16 KiB");
    return false;
}

/* Appends a piece of the element being received (URL, header name or value) to the head. */
static int head_append(connection_t *connection, const char *at, size_t length) {
    if (!head_count(connection, length)) return PARSE_STOP;
    hf_buffer_append(&connection->head, at, length);
    return 0;
}

/* Ends the element being received with a NUL; returns its offset and length. */
static void head_element_end(connection_t *connection, uint32_t *offset, uint32_t *length) {
    *offset = (uint32_t)connection->span_start;
    *length = (uint32_t)(connection->head.length - connection->span_start);
    hf_buffer_append_char(&connection->head, '\0');
    connection->span_start = connection->head.length;
}

static int on_message_begin(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    hf_buffer_reset(&connection->head);
    hf_buffer_reset(&connection->body);
    connection->head_size = 0;
    connection->span_start = 0;
    connection->url_length = 0;
    connection->header_count = 0;
    return 0;
}

static int on_method(llhttp_t *parser, const char *at, size_t length) {
    /* The method is known by number; only its size counts. The 1 is the space after it. */
    return head_count(parser_connection(parser), length + 1) ? 0 : PARSE_STOP;
}

static int on_url(llhttp_t *parser, const char *at, size_t length) {
    return head_append(parser_connection(parser), at, length);
}

static int on_url_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    uint32_t offset, length;
    head_element_end(connection, &offset, &length);
    connection->url_length = length;
    return head_count(connection, 1) ? 0 : PARSE_STOP;
}

static int on_version(llhttp_t *parser, const char *at, size_t length) {
    return head_count(parser_connection(parser), length) ? 0 : PARSE_STOP;
}

/* llhttp accepts other versions it knows (0.9, 2.0): this server speaks only 1.0 and 1.1. */
static bool version_supported(connection_t *connection, const llhttp_t *parser) {
    if (parser->http_major == 1 && parser->http_minor <= 1) return true;
    connection_reject(connection, 505, "http_version_not_supported",
                      "only HTTP/1.0 and HTTP/1.1 are supported");
    return false;
}

static int on_version_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    if (!version_supported(connection, parser)) return PARSE_STOP;
    return head_count(connection, strlen("HTTP/") + 2) ? 0 : PARSE_STOP;
}

static int on_header_field(llhttp_t *parser, const char *at, size_t length) {
    return head_append(parser_connection(parser), at, length);
}

static int on_header_field_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    if (connection->header_count == HF_HTTP_HEADERS_MAX) {
        connection_reject(connection, 431, "head_too_large", "more than 100 header fields");
        return PARSE_STOP;
    }
    header_span_t *span = &connection->headers[connection->header_count];
    head_element_end(connection, &span->name_offset, &span->name_length);
    /* llhttp lets a line ": value" through; a field name is a token of at least one
     * character (RFC 9110 section 5.1), so such a head is malformed. */
    if (span->name_length == 0) {
        connection_reject(connection, 400, "bad_request",
                          "malformed request: a header field without a name");
        return PARSE_STOP;
    }
    return head_count(connection, 2) ? 0 : PARSE_STOP; /* ": " */
}

static int on_header_value(llhttp_t *parser, const char *at, size_t length) {
    return head_append(parser_connection(parser), at, length);
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static int on_header_value_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    header_span_t *span = &connection->headers[connection->header_count];
    head_element_end(connection, &span->value_offset, &span->value_length);
    char *data = connection->head.data;
    while (span->value_length > 0 && is_blank(data[span->value_offset])) {
        span->value_offset++;
        span->value_length--;
    }
    while (span->value_length > 0 && is_blank(data[span->value_offset + span->value_length - 1]))
        span->value_length--;
    data[span->value_offset + span->value_length] = '\0';
    connection->header_count++;
    return head_count(connection, 2) ? 0 : PARSE_STOP; /* CRLF */
}

/* Value of a header of the request being parsed, or NULL. */
static const char *parsed_header(const connection_t *connection, const char *name,
                                 size_t *length) {
    size_t name_length = strlen(name);
    for (size_t i = 0; i < connection->header_count; i++) {
        const header_span_t *span = &connection->headers[i];
        if (span->name_length == name_length &&
            strncasecmp(connection->head.data + span->name_offset, name, name_length) == 0) {
            *length = span->value_length;
            return connection->head.data + span->value_offset;
        }
    }
    return NULL;
}

/* A client that sent "Expect: 100-continue" waits for a go-ahead before sending the body. It
 * is queued like an answer, so it never overtakes the answers to earlier requests. */
static void maybe_continue(connection_t *connection, llhttp_t *parser) {
    size_t length = 0;
    const char *expect = parsed_header(connection, "Expect", &length);
    bool has_body = (parser->flags & F_CHUNKED) ||
                    ((parser->flags & F_CONTENT_LENGTH) && parser->content_length > 0);
    if (!expect || !has_body || parser->http_minor == 0) return;
    if (length != strlen("100-continue") || strncasecmp(expect, "100-continue", length) != 0)
        return;
    queued_response_t *entry = response_take(connection);
    entry->interim = true;
    response_enqueue(connection, entry);
}

static int on_headers_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    /* An HTTP/0.9 request line has no version, so on_version_complete never saw it. */
    if (!version_supported(connection, parser) || !head_count(connection, 2)) return PARSE_STOP;
    /* Refused before a byte of the body is read: the client learns at once, and the body
     * never takes memory. */
    if ((parser->flags & F_CONTENT_LENGTH) && parser->content_length > HF_HTTP_BODY_SIZE_MAX) {
        connection_reject(connection, 413, "body_too_large", "the request body exceeds 1 MiB");
        return PARSE_STOP;
    }
    maybe_continue(connection, parser);
    return 0;
}

static int on_body(llhttp_t *parser, const char *at, size_t length) {
    connection_t *connection = parser_connection(parser);
    if (connection->body.length + length > HF_HTTP_BODY_SIZE_MAX) {
        connection_reject(connection, 413, "body_too_large", "the request body exceeds 1 MiB");
        return PARSE_STOP;
    }
    hf_buffer_append(&connection->body, at, length);
    return 0;
}

/* Fills the request the handler sees; its strings live in the connection's buffers. */
static void request_fill(connection_t *connection, hf_http_request_t *request) {
    hf_http_server_t *server = connection->server;
    char *url = connection->head.data;
    char *question = memchr(url, '?', connection->url_length);
    if (question) *question = '\0';
    request->method = llhttp_method_name((llhttp_method_t)connection->parser.method);
    request->path = url;
    request->query = question ? question + 1 : "";
    request->body = connection->body.length ? connection->body.data : "";
    request->body_length = connection->body.length;
    for (size_t i = 0; i < connection->header_count; i++) {
        const header_span_t *span = &connection->headers[i];
        server->headers[i] = (hf_http_header_t){
            .name = url + span->name_offset,
            .name_length = span->name_length,
            .value = url + span->value_offset,
            .value_length = span->value_length,
        };
    }
    request->headers = server->headers;
    request->header_count = connection->header_count;
    request->connection = connection;
}

/* A stream's connection carries nothing else: no request after it is parsed, and it closes
 * when the stream ends, whatever keep-alive asked. */
static void stream_request_complete(connection_t *connection, queued_response_t *entry) {
    connection->input_done = true;
    /* HEAD gets the head alone; a handler asking to close gets the first response alone. */
    if (entry->head_only || entry->response.close) {
        connection->stream.ending = true;
        hf_buffer_free(&connection->stream.unsent);
    }
}

static int on_message_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    if (connection->input_done) return PARSE_STOP;
    hf_http_request_t request;
    request_fill(connection, &request);
    queued_response_t *entry = response_take(connection);
    connection->server->handler(connection->server->context, &request, &entry->response);
    if (connection->closing) { /* the handler closed the server */
        response_free(entry);
        return PARSE_STOP;
    }
    entry->head_only = parser->method == HTTP_HEAD;
    if (entry->stream)
        stream_request_complete(connection, entry);
    /* After an upgrade request the stream would change protocol: answer, then close. */
    else if (!llhttp_should_keep_alive(parser) || parser->upgrade || connection->input_done)
        entry->response.close = true;
    else if (parser->http_minor == 0)
        entry->keep_alive_header = true;
    response_enqueue(connection, entry);
    if (connection->body.capacity > BUFFER_KEEP_SIZE) hf_buffer_free(&connection->body);
    if (connection->head.capacity > BUFFER_KEEP_SIZE) hf_buffer_free(&connection->head);
    if (entry->response.close || connection->input_done) {
        connection->input_done = true;
        return HPE_PAUSED;
    }
    return connection_over_limits(connection) ? HPE_PAUSED : 0;
}

static const llhttp_settings_t parser_settings = {
    .on_message_begin = on_message_begin,
    .on_method = on_method,
    .on_url = on_url,
    .on_url_complete = on_url_complete,
    .on_version = on_version,
    .on_version_complete = on_version_complete,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ---- accepting ---- */

static void free_handle(uv_handle_t *handle) { free(handle); }

/* Over the connection limit: accepted and closed at once, so the listen queue does not back up
 * silently and the client learns immediately. */
static void connection_refuse(hf_http_server_t *server) {
    uv_tcp_t *tcp = malloc(sizeof *tcp);
    if (!tcp) abort(); /* an unaccepted connection would stall the listener for good */
    uv_tcp_init(server->loop, tcp);
    uv_accept((uv_stream_t *)&server->listener, (uv_stream_t *)tcp);
    uv_close((uv_handle_t *)tcp, free_handle);
}

static void on_connection(uv_stream_t *listener, int status) {
    hf_http_server_t *server = listener->data;
    if (status < 0 || server->closed) return;
    if (server->connection_count >= HF_HTTP_CONNECTIONS_MAX) {
        connection_refuse(server);
        return;
    }
    connection_t *connection = calloc(1, sizeof *connection);
    if (!connection) abort(); /* as hf_buffer: no sensible answer without memory */
    connection->server = server;
    list_init(&connection->list_link);
    list_push_back(&server->connections, &connection->all_link);
    server->connection_count++;
    uv_tcp_init(server->loop, &connection->tcp);
    connection->tcp.data = connection;
    llhttp_init(&connection->parser, HTTP_REQUEST, &parser_settings);
    connection->parser.data = connection;
    if (uv_accept(listener, (uv_stream_t *)&connection->tcp) < 0) {
        connection_close(connection);
        return;
    }
    /* Answers are whole and written at once: Nagle's delay would only add latency. */
    uv_tcp_nodelay(&connection->tcp, 1);
    connection_settle(connection);
}

/* ---- the server ---- */

static int address_resolve(uv_loop_t *loop, const char *host, int port,
                           struct sockaddr_storage *address) {
    if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)address) == 0) return 0;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)address) == 0) return 0;
    /* A host name: resolved once, synchronously, since nothing else runs before start. */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    uv_getaddrinfo_t request;
    int result = uv_getaddrinfo(loop, &request, NULL, host, NULL, &hints);
    if (result < 0) return result;
    memcpy(address, request.addrinfo->ai_addr, request.addrinfo->ai_addrlen);
    uv_freeaddrinfo(request.addrinfo);
    if (address->ss_family == AF_INET)
        ((struct sockaddr_in *)address)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)address)->sin6_port = htons((uint16_t)port);
    return 0;
}

static void on_listener_closed_after_failure(uv_handle_t *handle) { free(handle->data); }

int hf_http_server_start(hf_http_server_t **out, uv_loop_t *loop,
                         const hf_http_config_t *config, char *error, size_t error_size) {
    *out = NULL;
    /* libuv writes with write(2): a peer gone between two writes would raise SIGPIPE and kill
     * the process, where the write error alone closes the one connection. */
    signal(SIGPIPE, SIG_IGN);
    const char *host = config->host ? config->host : "127.0.0.1";
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    int result = address_resolve(loop, host, config->port, &address);
    if (result < 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", host, uv_strerror(result));
        return result;
    }
    hf_http_server_t *server = calloc(1, sizeof *server);
    if (!server) abort();
    server->loop = loop;
    server->handler = config->handler;
    server->context = config->context;
    list_init(&server->connections);
    list_init(&server->waiting);
    list_init(&server->idle);
    list_init(&server->linger);
    uv_tcp_init(loop, &server->listener);
    server->listener.data = server;
    result = uv_tcp_bind(&server->listener, (const struct sockaddr *)&address, 0);
    if (result == 0)
        result = uv_listen((uv_stream_t *)&server->listener, LISTEN_BACKLOG, on_connection);
    if (result < 0) goto fail;
    uv_timer_init(loop, &server->timer);
    server->timer.data = server;
    server->listening = true;
    *out = server;
    return 0;
fail:
    snprintf(error, error_size, "cannot listen on %s port %d: %s", host, config->port,
             uv_strerror(result));
    /* The handle exists: the server is freed when the loop has closed it. */
    uv_close((uv_handle_t *)&server->listener, on_listener_closed_after_failure);
    return result;
}

void hf_http_server_release(hf_http_server_t *server, uint64_t durable_sequence) {
    if (durable_sequence <= server->released_sequence) return;
    server->released_sequence = durable_sequence;
    /* Settling files each connection again: into waiting if its next answer still waits. */
    link_t visit;
    list_take_all(&visit, &server->waiting);
    while (!list_empty(&visit)) {
        connection_t *connection = CONTAINER_OF(visit.next, connection_t, list_link);
        list_remove(&connection->list_link);
        connection->list = LIST_NONE;
        connection_settle(connection);
    }
}

/* A stream whose first response cannot be acknowledged ends with the 503 and sends nothing. */
static void stream_fail(connection_t *connection, queued_response_t *entry) {
    entry->stream = false;
    entry->response.close = true;
    connection->stream.ending = true;
    hf_buffer_free(&connection->stream.unsent);
}

/* Turns the answers of one connection that wait past durable_sequence into 503s. */
static void connection_fail_pending(connection_t *connection, uint64_t durable_sequence) {
    for (queued_response_t *entry = connection->queue_head; entry; entry = entry->next) {
        hf_http_response_t *response = &entry->response;
        if (entry->interim || response->durable_sequence <= durable_sequence) continue;
        connection->queued_bytes -= response->body.length;
        hf_http_error(response, 503, "unavailable",
                      "the store failed; nothing was acknowledged", NULL);
        response->content_type = NULL;
        response->durable_sequence = 0;
        connection->queued_bytes += response->body.length;
        if (entry->stream) stream_fail(connection, entry);
    }
}

void hf_http_server_fail_pending(hf_http_server_t *server, uint64_t durable_sequence) {
    /* Rare (the store failed), so every connection is visited: an answer waiting behind a
     * write in flight is not in the waiting list. */
    for (link_t *link = server->connections.next; link != &server->connections;) {
        connection_t *connection = CONTAINER_OF(link, connection_t, all_link);
        link = link->next;
        if (connection->closing || !connection->queue_head) continue;
        connection_fail_pending(connection, durable_sequence);
        connection_settle(connection);
    }
}

void hf_http_server_stop_accepting(hf_http_server_t *server) {
    if (server->listening) {
        uv_close((uv_handle_t *)&server->listener, NULL);
        server->listening = false;
    }
    for (link_t *link = server->connections.next; link != &server->connections;) {
        connection_t *connection = CONTAINER_OF(link, connection_t, all_link);
        link = link->next;
        if (connection->closing || connection->lingering) continue;
        /* An open stream would keep the server from draining: it ends after its data. */
        if (connection->stream.open) {
            hf_http_stream_close(&connection->stream);
            continue;
        }
        connection->input_done = true;
        hf_buffer_free(&connection->held_input);
        /* Idle, or in the middle of a request that will now never be read: nothing is owed. */
        if (connection_pending(connection) == 0 && !connection->parsing)
            connection_close(connection);
        else
            connection_settle(connection);
    }
}

size_t hf_http_server_pending(const hf_http_server_t *server) { return server->pending_count; }

size_t hf_http_server_connections(const hf_http_server_t *server) {
    return server->connection_count;
}

void hf_http_server_close(hf_http_server_t *server) {
    if (server->listening) {
        uv_close((uv_handle_t *)&server->listener, NULL);
        server->listening = false;
    }
    if (!server->closed) uv_close((uv_handle_t *)&server->timer, NULL);
    server->closed = true;
    for (link_t *link = server->connections.next; link != &server->connections; link = link->next)
        connection_close(CONTAINER_OF(link, connection_t, all_link));
}

void hf_http_server_free(hf_http_server_t *server) {
    if (!server) return;
    assert(list_empty(&server->connections) && "hf_http_server_free before the loop ended");
    free(server);
}

/* ---- streams ---- */

hf_http_stream_t *hf_http_response_stream(hf_http_response_t *response,
                                          hf_http_stream_closed_fn closed, void *context) {
    queued_response_t *entry = CONTAINER_OF(response, queued_response_t, response);
    connection_t *connection = entry->connection;
    hf_http_stream_t *stream = &connection->stream;
    assert(connection->parsing && !stream->open && "hf_http_response_stream outside a handler");
    entry->stream = true;
    stream->open = true;
    stream->closed = closed;
    stream->context = context;
    return stream;
}

/* Stream bytes not yet handed to the kernel: the unsent buffer, and what libuv still holds of
 * the write in flight, whose tail is stream data. */
static size_t stream_unsent(const connection_t *connection) {
    const hf_http_stream_t *stream = &connection->stream;
    size_t held = uv_stream_get_write_queue_size((const uv_stream_t *)&connection->tcp);
    return stream->unsent.length + (held < stream->writing_bytes ? held : stream->writing_bytes);
}

bool hf_http_stream_send(hf_http_stream_t *stream, const char *data, size_t length) {
    connection_t *connection = CONTAINER_OF(stream, connection_t, stream);
    if (stream->ending || connection->closing) return false;
    if (stream_unsent(connection) + length > HF_HTTP_STREAM_BUFFER_MAX) {
        /* A reader this far behind is cut off rather than allowed to hold memory. */
        stream->ending = true;
        connection_close(connection);
        return false;
    }
    hf_buffer_append(&stream->unsent, data, length);
    connection_settle(connection);
    return true;
}

void hf_http_stream_close(hf_http_stream_t *stream) {
    if (stream->ending) return;
    stream->ending = true;
    connection_settle(CONTAINER_OF(stream, connection_t, stream));
}

const char *hf_http_request_header(const hf_http_request_t *request, const char *name,
                                   size_t *length) {
    size_t name_length = strlen(name);
    for (size_t i = 0; i < request->header_count; i++) {
        const hf_http_header_t *header = &request->headers[i];
        if (header->name_length == name_length &&
            strncasecmp(header->name, name, name_length) == 0) {
            if (length) *length = header->value_length;
            return header->value;
        }
    }
    return NULL;
}

void hf_http_error(hf_http_response_t *response, int status, const char *code,
                   const char *message, const char *field) {
    hf_buffer_reset(&response->body);
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "error");
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "code");
    hf_json_string(&json, code);
    HF_JSON_KEY(&json, "message");
    hf_json_string(&json, message);
    if (field) {
        HF_JSON_KEY(&json, "field");
        hf_json_string(&json, field);
    }
    hf_json_object_end(&json);
    hf_json_object_end(&json);
    response->status = status;
}
