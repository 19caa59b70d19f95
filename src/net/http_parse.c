/* Requests: llhttp's callbacks count the head and body against their limits, keep the request
 * in the connection's buffers, answer what is malformed or too large, and hand each complete
 * request to the handler. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/limits.h"
#include "net/internal.h"

/* Returned by a parser callback to stop parsing: llhttp turns it into an error, which is
 * ignored because the callback has already queued the answer. */
#define PARSE_STOP (-1)

/* ---- parsing ---- */

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
size_t connection_parse(connection_t *connection, const char *data, size_t length) {
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

/* The request's clock starts (limits.h): its head's deadline, or its body's first window. */
static void request_clock_start(connection_t *connection, enum request_phase phase) {
    uint64_t timeout_ms = phase == PHASE_HEAD ? HF_HTTP_HEAD_TIMEOUT_MS
                                              : HF_HTTP_BODY_RATE_WINDOW_MS;
    connection->phase = phase;
    connection->request_deadline_ms = uv_now(connection->server->loop) + timeout_ms;
    connection->body_credit = 0;
}

/* Bytes of a body push its deadline later, HF_HTTP_BODY_RATE_WINDOW_MS per
 * HF_HTTP_BODY_RATE_BYTES (exactly: the remainder is kept in byte-milliseconds), but never
 * more than one window past now: a client that sent fast may not then stall for long. */
static void body_clock_advance(connection_t *connection, size_t length) {
    connection->body_credit += (uint64_t)length * HF_HTTP_BODY_RATE_WINDOW_MS;
    uint64_t credit_ms = connection->body_credit / HF_HTTP_BODY_RATE_BYTES;
    connection->body_credit -= credit_ms * HF_HTTP_BODY_RATE_BYTES;
    uint64_t latest = uv_now(connection->server->loop) + HF_HTTP_BODY_RATE_WINDOW_MS;
    uint64_t deadline = connection->request_deadline_ms + credit_ms;
    connection->request_deadline_ms = deadline < latest ? deadline : latest;
}

static int on_message_begin(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    request_clock_start(connection, PHASE_HEAD);
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
static const char *parsed_header(const connection_t *connection, const char *name, size_t *length) {
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

/* RFC 9112 section 3.2: an HTTP/1.1 request has exactly one Host, and no request two (which
 * a proxy and this server might read differently); HTTP/1.0 may have none. */
static bool host_valid(connection_t *connection, const llhttp_t *parser) {
    size_t hosts = 0;
    for (size_t i = 0; i < connection->header_count; i++) {
        const header_span_t *span = &connection->headers[i];
        if (span->name_length == strlen("Host") &&
            strncasecmp(connection->head.data + span->name_offset, "Host", span->name_length) == 0)
            hosts++;
    }
    if (hosts == 1 || (hosts == 0 && parser->http_minor == 0)) return true;
    connection_reject(connection, 400, "bad_request",
                      hosts == 0 ? "malformed request: an HTTP/1.1 request needs a Host header"
                                 : "malformed request: more than one Host header");
    return false;
}

static int on_headers_complete(llhttp_t *parser) {
    connection_t *connection = parser_connection(parser);
    /* An HTTP/0.9 request line has no version, so on_version_complete never saw it. */
    if (!version_supported(connection, parser) || !head_count(connection, 2)) return PARSE_STOP;
    if (!host_valid(connection, parser)) return PARSE_STOP;
    /* Refused before a byte of the body is read: the client learns at once, and the body
     * never takes memory. */
    if ((parser->flags & F_CONTENT_LENGTH) && parser->content_length > HF_HTTP_BODY_SIZE_MAX) {
        connection_reject(connection, 413, "body_too_large", "the request body exceeds 1 MiB");
        return PARSE_STOP;
    }
    maybe_continue(connection, parser);
    bool has_body = (parser->flags & F_CHUNKED) ||
                    ((parser->flags & F_CONTENT_LENGTH) && parser->content_length > 0);
    if (has_body) request_clock_start(connection, PHASE_BODY);
    return 0;
}

static int on_body(llhttp_t *parser, const char *at, size_t length) {
    connection_t *connection = parser_connection(parser);
    if (connection->body.length + length > HF_HTTP_BODY_SIZE_MAX) {
        connection_reject(connection, 413, "body_too_large", "the request body exceeds 1 MiB");
        return PARSE_STOP;
    }
    hf_buffer_append(&connection->body, at, length);
    body_clock_advance(connection, length);
    return 0;
}

void connection_request_timeout(connection_t *connection) {
    bool head = connection->phase == PHASE_HEAD;
    connection->phase = PHASE_NONE;
    connection_reject(connection, 408, "request_timeout",
                      head ? "the request head was not whole within 30 s of its first byte"
                           : "the request body came slower than 1 KiB per 10 s");
    connection_settle(connection);
}

/* Where the path starts in a request target of url_length bytes at url: the absolute form
 * (RFC 9112 section 3.2.2, "http://host:port/path?query", which a proxy sends and a server
 * must accept) names its scheme and authority first, and the path is what follows them. */
static size_t target_path_offset(const char *url, size_t url_length) {
    size_t scheme = 0;
    if (url_length >= strlen("http://") && strncasecmp(url, "http://", strlen("http://")) == 0)
        scheme = strlen("http://");
    else if (url_length >= strlen("https://") &&
             strncasecmp(url, "https://", strlen("https://")) == 0)
        scheme = strlen("https://");
    if (scheme == 0) return 0;
    size_t offset = scheme;
    while (offset < url_length && url[offset] != '/' && url[offset] != '?') offset++;
    return offset;
}

/* Fills the request the handler sees; its strings live in the connection's buffers. */
static void request_fill(connection_t *connection, hf_http_request_t *request) {
    hf_http_server_t *server = connection->server;
    char *url = connection->head.data;
    size_t path_offset = target_path_offset(url, connection->url_length);
    char *path = url + path_offset;
    char *question = memchr(path, '?', connection->url_length - path_offset);
    if (question) *question = '\0';
    request->method = llhttp_method_name((llhttp_method_t)connection->parser.method);
    /* An absolute form without a path ("http://host" or "http://host?q") asks for "/". */
    request->path = path_offset > 0 && path[0] == '\0' ? "/" : path;
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
    connection->phase = PHASE_NONE;
    if (connection->input_done) return PARSE_STOP;
    hf_http_request_t request;
    request_fill(connection, &request);
    queued_response_t *entry = response_take(connection);
    /* Known before the handler runs: hf_http_response_stream_head checks it. */
    entry->head_only = parser->method == HTTP_HEAD;
    if (connection->server->access_log) response_access_begin(entry, request.method, request.path);
    connection->server->handler(connection->server->context, &request, &entry->response);
    if (connection->closing) { /* the handler closed the server */
        response_free(entry);
        return PARSE_STOP;
    }
    if (entry->stream) stream_request_complete(connection, entry);
    /* After an upgrade request the stream would change protocol: answer, then close. */
    else if (!llhttp_should_keep_alive(parser) || parser->upgrade || connection->input_done)
        entry->response.close = true;
    else if (parser->http_minor == 0) entry->keep_alive_header = true;
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

/* Readies a new connection's parser for its first request. */
void connection_parser_init(connection_t *connection) {
    llhttp_init(&connection->parser, HTTP_REQUEST, &parser_settings);
    connection->parser.data = connection;
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
