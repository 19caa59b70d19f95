/* Answers: response records and the connection's queue of them, status reasons and
 * serialization, the one write that sends what is ready, and stream data joining it.
 *
 * Streams: a response turned into a stream is the last one a connection parses. Its data waits
 * in the stream's own unsent buffer until the stream's first response has been serialized, then
 * joins the connection's single write; sends made while a write is in flight coalesce into the
 * next one. The stream's state lives in the connection, so its closed callback runs from the
 * connection's close callback: never synchronously, and exactly once. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lib/limits.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/log.h"
#include "net/internal.h"

/* Response records kept per connection for reuse; a deeper pipeline allocates more for a while. */
#define FREE_RESPONSES_KEEP 4u
/* Rough size of a serialized status line and headers, counted against the output limit. */
#define RESPONSE_HEAD_SIZE_ESTIMATE 128u

/* ---- response records ---- */

queued_response_t *response_take(connection_t *connection) {
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
    /* Taken as the request is complete (or refused), so its answer's time is measured from
     * here; a read of the monotonic clock through the vDSO, tens of nanoseconds. */
    if (connection->server->answered) entry->received_ns = uv_hrtime();
    return entry;
}

void response_free(queued_response_t *entry) {
    response_deferred_forget(entry);
    free(entry->access_path);
    hf_buffer_free(&entry->response.body);
    free(entry);
}

static void response_recycle(connection_t *connection, queued_response_t *entry) {
    response_deferred_forget(entry);
    free(entry->access_path);
    entry->access_path = NULL;
    if (connection->free_count >= FREE_RESPONSES_KEEP) {
        response_free(entry);
        return;
    }
    buffer_recycle(&entry->response.body);
    entry->next = connection->free_responses;
    connection->free_responses = entry;
    connection->free_count++;
}

void response_enqueue(connection_t *connection, queued_response_t *entry) {
    entry->next = NULL;
    if (connection->queue_tail) connection->queue_tail->next = entry;
    else connection->queue_head = entry;
    connection->queue_tail = entry;
    connection->queued_count++;
    connection->queued_bytes += entry->response.body.length + RESPONSE_HEAD_SIZE_ESTIMATE;
    connection->server->pending_count++;
}

queued_response_t *response_dequeue(connection_t *connection) {
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
    case 307: return "Temporary Redirect";
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

/* Content-Type and the extra headers (http.h), each line ended. A 204 has no content, so no
 * type either. */
static void headers_serialize(hf_buffer_t *out, const queued_response_t *entry, int status,
                              bool stream_shaped) {
    const hf_http_response_t *response = &entry->response;
    if (response->content_type || stream_shaped) {
        HF_BUFFER_APPEND_LITERAL(out, "Content-Type: ");
        const char *fallback_type = stream_shaped ? "text/event-stream" : "application/json";
        hf_buffer_append_string(out,
                                response->content_type ? response->content_type : fallback_type);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    } else if (status != 204) {
        HF_BUFFER_APPEND_LITERAL(out, "Content-Type: application/json\r\n"); /* most answers */
    }
    for (uint32_t i = 0; i < response->header_count; i++) {
        hf_buffer_append_string(out, response->headers[i].name);
        HF_BUFFER_APPEND_LITERAL(out, ": ");
        hf_buffer_append_string(out, response->headers[i].value);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    }
}

static void connection_serialize(hf_buffer_t *out, const queued_response_t *entry) {
    if (entry->response.close) HF_BUFFER_APPEND_LITERAL(out, "Connection: close\r\n");
    else if (entry->keep_alive_header) HF_BUFFER_APPEND_LITERAL(out, "Connection: keep-alive\r\n");
}

/* A final answer must be 2xx to 5xx: anything else from a handler is a bug, and sending it
 * would break the framing of the connection. */
static int status_sent(const hf_http_response_t *response) {
    return response->status >= 200 && response->status <= 599 ? response->status : 500;
}

/* The Date header's value for answers written now (RFC 9110 section 6.6.1: a server with a
 * clock sends it on every answer). */
static const char *server_date(hf_http_server_t *server) {
    uint64_t loop_ms = uv_now(server->loop);
    if (server->date[0] != '\0' && loop_ms == server->date_loop_ms) return server->date;
    server->date_loop_ms = loop_ms;
    int64_t now_ms = hf_clock_wall_ms();
    int64_t second = now_ms / 1000;
    if (server->date[0] == '\0' || second != server->date_second) {
        server->date_second = second;
        hf_format_http_date(now_ms, server->date);
    }
    return server->date;
}

static void response_serialize(hf_buffer_t *out, const queued_response_t *entry, const char *date) {
    if (entry->interim) {
        HF_BUFFER_APPEND_LITERAL(out, "HTTP/1.1 100 Continue\r\n\r\n");
        return;
    }
    const hf_http_response_t *response = &entry->response;
    int status = status_sent(response);
    /* 204 carries no body and no length (RFC 9110 section 8.6). */
    bool has_body = status != 204;
    bool stream_shaped = entry->stream || entry->stream_head;
    HF_BUFFER_APPEND_LITERAL(out, "HTTP/1.1 ");
    append_decimal(out, (size_t)status);
    hf_buffer_append_char(out, ' ');
    hf_buffer_append_string(out, status_reason(status));
    HF_BUFFER_APPEND_LITERAL(out, "\r\nDate: ");
    hf_buffer_append(out, date, HF_HTTP_DATE_SIZE - 1);
    HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    headers_serialize(out, entry, status, stream_shaped);
    if (stream_shaped) {
        /* The body runs until the connection closes, so it has no length. The other two
         * headers keep caches and proxies (nginx) from holding events back. A stream's head
         * answering HEAD has no body at all, and the connection carries on. */
        HF_BUFFER_APPEND_LITERAL(out, "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n");
        if (entry->stream_head) connection_serialize(out, entry);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
        if (!entry->head_only) hf_buffer_append(out, response->body.data, response->body.length);
        return;
    }
    if (has_body) {
        /* A HEAD answer keeps the length of the body a GET would get (RFC 9110 9.3.2). */
        HF_BUFFER_APPEND_LITERAL(out, "Content-Length: ");
        append_decimal(out, response->body.length);
        HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    }
    connection_serialize(out, entry);
    HF_BUFFER_APPEND_LITERAL(out, "\r\n");
    if (has_body && !entry->head_only)
        hf_buffer_append(out, response->body.data, response->body.length);
}

/* ---- the access log ---- */

void response_access_begin(queued_response_t *entry, const char *method, const char *path) {
    entry->access_method = method;
    entry->access_path = strdup(path);
    if (!entry->access_path) abort();
    entry->access_started_ns = uv_hrtime();
}

/* Logged when the answer is serialized for its write: after the durability gate let it go, so
 * the duration is what the client waited. */
void response_access_log(queued_response_t *entry) {
    const hf_http_response_t *response = &entry->response;
    uint64_t elapsed_us = (uv_hrtime() - entry->access_started_ns) / 1000;
    HF_LOG_FIELDS(HF_LOG_INFO, "request", HF_LOG_TEXT("method", entry->access_method),
                  HF_LOG_TEXT("path", entry->access_path),
                  HF_LOG_NUMBER("status", response->status),
                  HF_LOG_NUMBER("duration_us", elapsed_us),
                  HF_LOG_NUMBER("bytes", entry->head_only ? 0 : response->body.length));
    free(entry->access_path);
    entry->access_path = NULL;
}

/* ---- writing ---- */

/* Tells the server's answered callback about a final answer leaving; *now_ns is read once per
 * write, at its first answer. */
static void answer_report(hf_http_server_t *server, const queued_response_t *entry,
                          uint64_t *now_ns) {
    if (!server->answered || entry->interim) return;
    if (*now_ns == 0) *now_ns = uv_hrtime();
    uint64_t duration = *now_ns > entry->received_ns ? *now_ns - entry->received_ns : 0;
    server->answered(server->context, entry->response.label, status_sent(&entry->response),
                     duration);
}

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
bool connection_flush(connection_t *connection) {
    if (connection->closing || connection->lingering || connection->writing) return false;
    hf_http_server_t *server = connection->server;
    size_t count = 0;
    bool close = false;
    uint64_t now_ns = 0;
    const char *date = server_date(server);
    while (connection->queue_head && !close && !connection->queue_head->deferred &&
           connection->queue_head->response.durable_sequence <= server->released_sequence) {
        queued_response_t *entry = response_dequeue(connection);
        response_serialize(&connection->output, entry, date);
        if (entry->access_path) response_access_log(entry);
        answer_report(server, entry, &now_ns);
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

void hf_http_response_stream_head(hf_http_response_t *response) {
    queued_response_t *entry = CONTAINER_OF(response, queued_response_t, response);
    assert(entry->head_only && "hf_http_response_stream_head answers HEAD only");
    entry->stream_head = true;
}

void hf_http_response_header_add(hf_http_response_t *response, const char *name, const char *value,
                                 bool every_answer) {
    assert(response->header_count < HF_HTTP_RESPONSE_HEADERS_MAX && "too many headers");
    response->headers[response->header_count++] = (hf_http_response_header_t){name, value,
                                                                              every_answer};
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

void hf_http_error(hf_http_response_t *response, int status, const char *code, const char *message,
                   const char *field) {
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
