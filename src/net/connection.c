/* A connection's state: the lists that replace per-connection timers, reading, backpressure,
 * settling after every event, closing and lingering.
 *
 * Each open connection sits in at most one of five lists, which replace per-connection timers:
 * - waiting: its next response waits for the store; hf_http_server_release visits only these;
 * - idle: the client's clock runs (the store owes it nothing) between requests; closed when
 *   neither a read nor a completed write happened for HF_HTTP_IDLE_TIMEOUT_MS, which also ends
 *   a client that stops reading its answers;
 * - head: a request head has begun; it must be whole by HF_HTTP_HEAD_TIMEOUT_MS after its
 *   first byte, a deadline that reads do not move (else 408);
 * - body: a body is arriving; each HF_HTTP_BODY_RATE_BYTES of it must come within
 *   HF_HTTP_BODY_RATE_WINDOW_MS (else 408);
 * - linger: its last answer is sent; unread input is drained until the peer closes or a short
 *   deadline passes, so a close never resets (and destroys) an answer still in flight.
 * Each list's deadlines are one constant after the time a connection joins it (or, for head
 * and body, after the time its request's clock started, which is at most a few moments
 * earlier), so a connection is filed from the tail, nearly always right there: every list
 * stays sorted by deadline and one server timer, set to the earliest head, serves them all.
 *
 * Backpressure: when a connection has HF_HTTP_PIPELINE_MAX answers outstanding or more than
 * HF_HTTP_OUTPUT_SIZE_MAX bytes unsent, on_message_complete pauses the parser; the unparsed rest
 * of the read is kept and reading stops. When a write completes and the connection is below both
 * limits again, the kept input is parsed and reading resumes. */
#include <stdlib.h>

#include "lib/limits.h"
#include "net/internal.h"

/* How long a closing connection keeps draining input after its last answer was handed to the
 * kernel: long enough for the peer to read the answer and close, short enough that a peer which
 * keeps sending cannot hold the socket. */
#define LINGER_TIMEOUT_MS 5000u

/* ---- connection lists and the timer ---- */

static void on_timer(uv_timer_t *timer);

/* When a connection joining a timed list now is due. */
static uint64_t list_deadline_ms(const connection_t *connection, enum connection_list list) {
    uint64_t now = uv_now(connection->server->loop);
    switch (list) {
    case LIST_LINGER: return now + LINGER_TIMEOUT_MS;
    case LIST_HEAD:
    case LIST_BODY: return connection->request_deadline_ms;
    default: return now + HF_HTTP_IDLE_TIMEOUT_MS;
    }
}

static link_t *server_list(hf_http_server_t *server, enum connection_list list) {
    switch (list) {
    case LIST_WAITING: return &server->waiting;
    case LIST_IDLE: return &server->idle;
    case LIST_HEAD: return &server->head;
    case LIST_BODY: return &server->body;
    case LIST_LINGER: return &server->linger;
    default: return NULL;
    }
}

/* Inserts a timed connection after the last one due no later than it. */
static void list_insert_by_deadline(link_t *head, connection_t *connection) {
    link_t *after = head->previous;
    while (after != head &&
           CONTAINER_OF(after, connection_t, list_link)->deadline_ms > connection->deadline_ms)
        after = after->previous;
    list_push_back(after->next, &connection->list_link);
}

/* Makes sure the timer fires no later than deadline_ms. */
static void timer_schedule(hf_http_server_t *server, uint64_t deadline_ms) {
    if (server->closed) return;
    if (uv_is_active((uv_handle_t *)&server->timer) && server->timer_due_ms <= deadline_ms) return;
    uint64_t now = uv_now(server->loop);
    server->timer_due_ms = deadline_ms;
    uv_timer_start(&server->timer, on_timer, deadline_ms > now ? deadline_ms - now : 0, 0);
}

/* Files the connection in list; a timed list sets its deadline again. */
static void connection_list_set(connection_t *connection, enum connection_list list) {
    hf_http_server_t *server = connection->server;
    if (connection->list != LIST_NONE) list_remove(&connection->list_link);
    connection->list = list;
    if (list == LIST_NONE) return;
    if (list == LIST_WAITING) {
        list_push_back(&server->waiting, &connection->list_link);
        return;
    }
    connection->deadline_ms = list_deadline_ms(connection, list);
    list_insert_by_deadline(server_list(server, list), connection);
    timer_schedule(server, connection->deadline_ms);
}

/* The client did something: its idle deadline starts again. */
void connection_touch(connection_t *connection) {
    if (connection->list == LIST_IDLE) connection_list_set(connection, LIST_IDLE);
}

/* Ends the expired heads of one timed list: a request past its deadline is answered 408, an
 * idle or lingering connection closed. Returns the next deadline, or 0 if the list is empty. */
static uint64_t list_expire(hf_http_server_t *server, enum connection_list list, uint64_t now) {
    link_t *head = server_list(server, list);
    while (!list_empty(head)) {
        connection_t *connection = CONTAINER_OF(head->next, connection_t, list_link);
        if (connection->deadline_ms > now) return connection->deadline_ms;
        if (list == LIST_HEAD || list == LIST_BODY) connection_request_timeout(connection);
        /* Whatever the answer did, the connection leaves this list. */
        if (connection->list == list) connection_close(connection);
    }
    return 0;
}

static void on_timer(uv_timer_t *timer) {
    hf_http_server_t *server = timer->data;
    uint64_t now = uv_now(server->loop);
    static const enum connection_list timed[] = {LIST_IDLE, LIST_HEAD, LIST_BODY, LIST_LINGER};
    uint64_t next = 0;
    for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++) {
        uint64_t due = list_expire(server, timed[i], now);
        if (due && (!next || due < next)) next = due;
    }
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
void connection_close(connection_t *connection) {
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
    if (uv_shutdown(&connection->shutdown_request, (uv_stream_t *)&connection->tcp, on_shutdown) <
        0) {
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

/* ---- reading ---- */

size_t connection_pending(const connection_t *connection) {
    return connection->queued_count + connection->writing_count;
}

/* Past either limit the connection stops being read until its answers drain. */
bool connection_over_limits(const connection_t *connection) {
    size_t unsent = connection->queued_bytes +
                    (connection->writing ? connection->output.length : 0);
    return connection_pending(connection) >= HF_HTTP_PIPELINE_MAX ||
           unsent > HF_HTTP_OUTPUT_SIZE_MAX;
}

static void on_allocate(uv_handle_t *handle, size_t suggested_size, uv_buf_t *buffer) {
    connection_t *connection = handle->data;
    *buffer = uv_buf_init(connection->server->read_buffer, READ_BUFFER_SIZE);
}

/* Parses input held back by backpressure once answers have drained below the limits. */
void connection_resume(connection_t *connection) {
    if (!connection->parser_paused || connection->input_done || connection_over_limits(connection))
        return;
    connection->parser_paused = false;
    llhttp_resume(&connection->parser);
    hf_buffer_t *held = &connection->held_input;
    if (connection->held_offset < held->length) {
        connection->held_offset += connection_parse(connection,
                                                    held->data + connection->held_offset,
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
           (connection->queue_head->deferred || connection->queue_head->response.durable_sequence >
                                                    connection->server->released_sequence);
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

/* The clock that runs on a connection the store owes nothing: its request's, while one is
 * arriving that will be read, else the idle one. */
static enum connection_list connection_clock(const connection_t *connection) {
    if (connection->input_done) return LIST_IDLE;
    switch (connection->phase) {
    case PHASE_HEAD: return LIST_HEAD;
    case PHASE_BODY: return LIST_BODY;
    default: return LIST_IDLE;
    }
}

/* Brings a connection to the state its queue and flags call for: sends what is ready, ends it
 * when it has answered everything it will ever answer, reads or not, and files it in the list
 * whose clock applies. Called after every event on the connection. */
void connection_settle(connection_t *connection) {
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
                                               : connection_clock(connection);
    /* A body's window moves on as its bytes come: the connection is filed again. */
    bool moved = (list == LIST_HEAD || list == LIST_BODY) &&
                 connection->deadline_ms != connection->request_deadline_ms;
    if (connection->list != list || moved) connection_list_set(connection, list);
}
