/* A small blocking HTTP/1.1 client for the commands that talk to a running server (client.c):
 * one request per connection (Connection: close), http:// only, the answer read whole. No new
 * dependency: the server is on the operator's own network, usually loopback. */
#ifndef HF_CMD_HTTP_CLIENT_H
#define HF_CMD_HTTP_CLIENT_H

#include <stddef.h>

/* The largest answer read: the server's largest page (1,000 orders of up to 1,000 items) fits
 * many times over; beyond is refused rather than read without end. */
#define HF_CLIENT_ANSWER_SIZE_MAX (256u * 1024 * 1024)
/* A --server URL: http://, a host name of up to 255 bytes, a port and a path fit. */
#define HF_CLIENT_URL_SIZE_MAX 512
/* A server that neither answers nor closes within this is taken for gone. */
#define HF_CLIENT_TIMEOUT_S 60

typedef struct hf_client_answer {
    int status;
    char *body; /* NUL-terminated, malloc'd; free with hf_client_answer_free */
    size_t body_length;
} hf_client_answer_t;

/* The --server value as the URL hf_client_request takes: HOST:PORT without a scheme is
 * http://HOST:PORT. Returns 0 with the URL in url, or -1 with a sentence naming --server in
 * error (another scheme than http, no host, a port not from 1 to 65535): a usage error. */
int hf_client_server_url(const char *given, char *url, size_t url_size, char *error,
                         size_t error_size);
/* Sends METHOD target (a path with its query) to server (http://HOST[:PORT]), with
 * Authorization: Bearer api_key when api_key is not NULL or "", and body when not NULL.
 * Returns 0 with *answer filled, or -1 with a sentence in error (unreachable, malformed). */
int hf_client_request(const char *server, const char *api_key, const char *method,
                      const char *target, const char *body, size_t body_length,
                      hf_client_answer_t *answer, char *error, size_t error_size);
void hf_client_answer_free(hf_client_answer_t *answer);

#endif
