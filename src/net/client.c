/* The HTTP/1.1 client's common part (client.h): a request's bytes, and an answer read with
 * llhttp, one at a time per parser. */
#include "net/client.h"

#include <stdio.h>
#include <string.h>

/* ---- the request ---- */

void hf_client_request_begin(hf_buffer_t *out, const char *method, const char *path,
                             const char *query, const char *host) {
    hf_buffer_reset(out);
    bool has_query = query && query[0];
    hf_buffer_printf(out, "%s %s%s%s HTTP/1.1\r\nHost: %s\r\n", method, path, has_query ? "?" : "",
                     has_query ? query : "", host);
}

void hf_client_request_header(hf_buffer_t *out, const char *name, size_t name_length,
                              const char *value, size_t value_length) {
    hf_buffer_append(out, name, name_length);
    hf_buffer_append(out, ": ", 2);
    hf_buffer_append(out, value, value_length);
    hf_buffer_append(out, "\r\n", 2);
}

void hf_client_request_end(hf_buffer_t *out, const char *body, size_t body_length) {
    if (body) hf_buffer_printf(out, "Content-Length: %zu\r\n", body_length);
    hf_buffer_append(out, "\r\n", 2);
    if (body && body_length) hf_buffer_append(out, body, body_length);
}

/* ---- the answer ---- */

static int on_header_field(llhttp_t *parser, const char *at, size_t length) {
    hf_client_parser_t *client = parser->data;
    if (client->field_length + length <= HF_CLIENT_HEADER_TEXT_MAX) {
        memcpy(client->field + client->field_length, at, length);
        client->field_length += length;
    }
    return 0;
}

static int on_header_value(llhttp_t *parser, const char *at, size_t length) {
    hf_client_parser_t *client = parser->data;
    if (client->value_length + length <= HF_CLIENT_HEADER_TEXT_MAX) {
        memcpy(client->value + client->value_length, at, length);
        client->value_length += length;
    }
    return 0;
}

static int on_header_value_complete(llhttp_t *parser) {
    hf_client_parser_t *client = parser->data;
    client->field[client->field_length] = '\0';
    client->value[client->value_length] = '\0';
    if (client->header) client->header(client->owner, client->field, client->value);
    client->field_length = client->value_length = 0;
    return 0;
}

static int on_headers_complete(llhttp_t *parser) {
    hf_client_parser_t *client = parser->data;
    client->head_complete = true;
    return 0;
}

static int on_body(llhttp_t *parser, const char *at, size_t length) {
    hf_client_parser_t *client = parser->data;
    if (client->body.length + length > client->body_max) {
        client->too_large = true;
        return -1;
    }
    hf_buffer_append(&client->body, at, length);
    return 0;
}

/* Paused: bytes after the answer are the next answer's, read once the parser is reset. */
static int on_message_complete(llhttp_t *parser) {
    hf_client_parser_t *client = parser->data;
    client->complete = true;
    return HPE_PAUSED;
}

static void parser_start(hf_client_parser_t *client) {
    llhttp_init(&client->parser, HTTP_RESPONSE, &client->settings);
    client->parser.data = client;
    client->field_length = client->value_length = 0;
    client->head_complete = client->complete = client->too_large = false;
    client->failure = HPE_OK;
}

void hf_client_parser_init(hf_client_parser_t *client, size_t body_max, hf_client_header_fn header,
                           void *owner) {
    memset(client, 0, sizeof *client);
    llhttp_settings_init(&client->settings);
    client->settings.on_header_field = on_header_field;
    client->settings.on_header_value = on_header_value;
    client->settings.on_header_value_complete = on_header_value_complete;
    client->settings.on_headers_complete = on_headers_complete;
    client->settings.on_body = on_body;
    client->settings.on_message_complete = on_message_complete;
    client->body_max = body_max;
    client->header = header;
    client->owner = owner;
    parser_start(client);
}

void hf_client_parser_reset(hf_client_parser_t *client) {
    hf_buffer_reset(&client->body);
    parser_start(client);
}

void hf_client_parser_free(hf_client_parser_t *client) { hf_buffer_free(&client->body); }

hf_client_read_t hf_client_parser_feed(hf_client_parser_t *client, const char *data,
                                       size_t length) {
    llhttp_errno_t rc = llhttp_execute(&client->parser, data, length);
    if (rc == HPE_PAUSED && client->complete) return HF_CLIENT_COMPLETE;
    if (rc == HPE_OK) return HF_CLIENT_MORE;
    client->failure = rc;
    return HF_CLIENT_FAILED;
}

hf_client_read_t hf_client_parser_finish(hf_client_parser_t *client) {
    if (client->complete) return HF_CLIENT_COMPLETE;
    llhttp_errno_t rc = llhttp_finish(&client->parser);
    if (client->complete) return HF_CLIENT_COMPLETE;
    client->failure = rc != HPE_OK ? rc : HPE_INVALID_EOF_STATE;
    return HF_CLIENT_FAILED;
}

int hf_client_parser_status(const hf_client_parser_t *client) { return client->parser.status_code; }

bool hf_client_parser_keep_alive(const hf_client_parser_t *client) {
    return llhttp_should_keep_alive(&client->parser) != 0;
}

const char *hf_client_parser_error(const hf_client_parser_t *client) {
    return llhttp_errno_name(client->failure);
}

uint64_t hf_client_parser_missing(const hf_client_parser_t *client) {
    return (client->parser.flags & F_CONTENT_LENGTH) ? client->parser.content_length : 0;
}
