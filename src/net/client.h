/* The HTTP/1.1 client's common part, for both of its users: forwarding to another node
 * (cluster/forward.c: keep-alive connections on the loop) and the command line
 * (cmd/http_client.c: one blocking connection per request). Here: a request written into a
 * buffer, and an answer read with llhttp into its status, its headers (handed to the user one
 * by one) and its body, within bounds. Each user keeps its own connections, addresses and
 * timeouts.
 *
 * Threads: any, one parser per thread at a time. Ownership: the parser owns its body buffer
 * (freed by hf_client_parser_free); a header handed to the header function is borrowed for
 * the call. */
#ifndef HF_NET_CLIENT_H
#define HF_NET_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buffer.h"
#include "llhttp.h"

/* A header's name or value longer than this is not handed over (it is cut). */
#define HF_CLIENT_HEADER_TEXT_MAX 512

/* ---- the request ---- */

/* "METHOD PATH[?QUERY] HTTP/1.1", then Host, into out (reset first). query "" or NULL:
 * none. */
void hf_client_request_begin(hf_buffer_t *out, const char *method, const char *path,
                             const char *query, const char *host);
/* One header line. */
void hf_client_request_header(hf_buffer_t *out, const char *name, size_t name_length,
                              const char *value, size_t value_length);
/* The end of the head, then the body: Content-Length when body is not NULL (0 bytes
 * included). */
void hf_client_request_end(hf_buffer_t *out, const char *body, size_t body_length);

/* ---- the answer ---- */

/* Called for each header of the answer, name and value NUL-terminated (cut at
 * HF_CLIENT_HEADER_TEXT_MAX). */
typedef void (*hf_client_header_fn)(void *owner, const char *name, const char *value);

typedef enum hf_client_read {
    HF_CLIENT_MORE,     /* the answer is not whole yet */
    HF_CLIENT_COMPLETE, /* the answer is whole: status, body */
    HF_CLIENT_FAILED    /* not HTTP, or over body_max: hf_client_parser_error */
} hf_client_read_t;

typedef struct hf_client_parser {
    llhttp_t parser;
    llhttp_settings_t settings;
    hf_buffer_t body;
    size_t body_max; /* a longer body fails the answer */
    hf_client_header_fn header;
    void *owner;
    char field[HF_CLIENT_HEADER_TEXT_MAX + 1], value[HF_CLIENT_HEADER_TEXT_MAX + 1];
    size_t field_length, value_length;
    bool head_complete, complete, too_large;
    llhttp_errno_t failure; /* what failed the answer, HPE_OK until then */
} hf_client_parser_t;

/* header may be NULL (no header is handed over). */
void hf_client_parser_init(hf_client_parser_t *client, size_t body_max, hf_client_header_fn header,
                           void *owner);
/* Ready for the next answer on the same connection (keep-alive); the body is emptied. */
void hf_client_parser_reset(hf_client_parser_t *client);
void hf_client_parser_free(hf_client_parser_t *client);
/* Reads the next bytes of the answer. Bytes after a complete answer are not read. */
hf_client_read_t hf_client_parser_feed(hf_client_parser_t *client, const char *data, size_t length);
/* The connection ended: an answer whose body runs to the end of the connection is complete
 * now; any other not yet whole fails. */
hf_client_read_t hf_client_parser_finish(hf_client_parser_t *client);
int hf_client_parser_status(const hf_client_parser_t *client);
/* After a complete answer: whether the connection may carry the next request. */
bool hf_client_parser_keep_alive(const hf_client_parser_t *client);
/* After HF_CLIENT_FAILED: llhttp's name of what failed ("HPE_INVALID_CONSTANT", ...). */
const char *hf_client_parser_error(const hf_client_parser_t *client);
/* The body bytes still due by Content-Length when the answer failed at the connection's end
 * (0 when none were declared). */
uint64_t hf_client_parser_missing(const hf_client_parser_t *client);

#endif
