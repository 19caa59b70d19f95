/* The commands' HTTP client (http_client.h). */
#include "cmd/http_client.h"

#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/buffer.h"
#include "net/client.h"

typedef struct address {
    char host[256];
    char port[8];
} address_t;

/* The port of a URL: 1 to 65535, in digits. */
static bool port_valid(const char *port, size_t length) {
    if (length == 0 || length > 5 || strspn(port, "0123456789") < length) return false;
    long value = strtol(port, NULL, 10);
    return value >= 1 && value <= 65535;
}

/* http://HOST[:PORT][/], HOST possibly [IPv6]; the port defaults to 80. */
static int address_parse(const char *server, address_t *address, char *error, size_t size) {
    if (strncmp(server, "http://", 7) != 0) goto bad;
    const char *host = server + 7, *end = host + strcspn(host, "/");
    const char *host_end = end, *port = NULL;
    if (*host == '[') {
        const char *close = memchr(host, ']', (size_t)(end - host));
        if (!close || (close + 1 < end && close[1] != ':')) goto bad;
        host_end = close++;
        host++;
        if (close < end) port = close + 1;
    } else {
        const char *colon = memchr(host, ':', (size_t)(end - host));
        if (colon) {
            host_end = colon;
            port = colon + 1;
        }
    }
    size_t length = (size_t)(host_end - host);
    if (length == 0 || length >= sizeof address->host) goto bad;
    memcpy(address->host, host, length);
    address->host[length] = '\0';
    size_t port_length = port ? (size_t)(end - port) : 2;
    if (!port) port = "80";
    if (port_length >= sizeof address->port || !port_valid(port, port_length)) goto bad;
    memcpy(address->port, port, port_length);
    address->port[port_length] = '\0';
    return 0;
bad:
    snprintf(error, size,
             "--server %.200s: expected [http://]HOST:PORT (a port from 1 to "
             "65535)",
             server);
    return -1;
}

int hf_client_server_url(const char *given, char *url, size_t url_size, char *error,
                         size_t error_size) {
    const char *scheme_end = strstr(given, "://");
    if (scheme_end && (scheme_end - given != 4 || strncasecmp(given, "http", 4) != 0)) {
        snprintf(error, error_size,
                 "--server %.200s: only http:// is supported (no TLS: put "
                 "the server behind a local address)",
                 given);
        return -1;
    }
    const char *rest = scheme_end ? scheme_end + 3 : given;
    if ((size_t)snprintf(url, url_size, "http://%s", rest) >= url_size) {
        snprintf(error, error_size, "--server: the address is too long");
        return -1;
    }
    address_t address;
    if (address_parse(url, &address, error, error_size) != 0) {
        snprintf(error, error_size,
                 "--server %.200s: expected [http://]HOST:PORT (a port "
                 "from 1 to 65535)",
                 given);
        return -1;
    }
    return 0;
}

static int connect_to(const address_t *address, const char *server, char *error, size_t size) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int rc = getaddrinfo(address->host, address->port, &hints, &found);
    if (rc != 0) {
        snprintf(error, size, "cannot reach the server %.200s: %s", server, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *a = found; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        struct timeval limit = {.tv_sec = HF_CLIENT_TIMEOUT_S};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    if (fd < 0)
        snprintf(error, size,
                 "cannot reach the server %.200s: %s (is it running? --server "
                 "or HOLDFAST_SERVER says where)",
                 server, strerror(saved ? saved : ECONNREFUSED));
    return fd;
}

static int send_all(int fd, const char *data, size_t length) {
    for (size_t done = 0; done < length;) {
        ssize_t sent = send(fd, data + done, length - done, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        done += (size_t)sent;
    }
    return 0;
}

/* Reads the answer as it arrives (net/client.h), until it is whole or the server closes. */
static int receive_answer(int fd, hf_client_parser_t *reader, char *error, size_t size) {
    char chunk[65536];
    hf_client_read_t read = HF_CLIENT_MORE;
    while (read == HF_CLIENT_MORE) {
        ssize_t got = recv(fd, chunk, sizeof chunk, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(error, size, "reading the answer failed: %s", strerror(errno));
            return -1;
        }
        read = got == 0 ? hf_client_parser_finish(reader)
                        : hf_client_parser_feed(reader, chunk, (size_t)got);
    }
    if (read == HF_CLIENT_COMPLETE) return 0;
    uint64_t missing = hf_client_parser_missing(reader);
    if (reader->too_large)
        snprintf(error, size, "the answer is larger than %u bytes", HF_CLIENT_ANSWER_SIZE_MAX);
    else if (reader->head_complete && missing > 0)
        snprintf(error, size, "the server's answer was cut short (%zu of %llu bytes)",
                 reader->body.length, (unsigned long long)reader->body.length + missing);
    else snprintf(error, size, "the server's answer is not HTTP");
    return -1;
}

/* The answer's body, copied for the caller. */
static void answer_take(const hf_client_parser_t *reader, hf_client_answer_t *answer) {
    size_t length = reader->body.length;
    answer->status = hf_client_parser_status(reader);
    answer->body = malloc(length + 1);
    if (!answer->body) abort();
    if (length) memcpy(answer->body, reader->body.data, length);
    answer->body[length] = '\0';
    answer->body_length = length;
}

int hf_client_request(const char *server, const char *api_key, const char *method,
                      const char *target, const char *body, size_t body_length,
                      hf_client_answer_t *answer, char *error, size_t error_size) {
    memset(answer, 0, sizeof *answer);
    address_t address;
    if (address_parse(server, &address, error, error_size) != 0) return -1;
    int fd = connect_to(&address, server, error, error_size);
    if (fd < 0) return -1;
    hf_buffer_t out = {0};
    char host[300];
    bool ipv6 = strchr(address.host, ':') != NULL;
    snprintf(host, sizeof host, "%s%s%s:%s", ipv6 ? "[" : "", address.host, ipv6 ? "]" : "",
             address.port);
    hf_client_request_begin(&out, method, target, NULL, host);
    static const char *const HEADERS[][2] = {{"Connection", "close"},
                                             {"User-Agent", "holdfast-cli"},
                                             {"Accept", "application/json"}};
    for (size_t i = 0; i < sizeof HEADERS / sizeof HEADERS[0]; i++)
        hf_client_request_header(&out, HEADERS[i][0], strlen(HEADERS[i][0]), HEADERS[i][1],
                                 strlen(HEADERS[i][1]));
    if (api_key && *api_key) {
        hf_buffer_t bearer = {0};
        hf_buffer_append_string(&bearer, "Bearer ");
        hf_buffer_append_string(&bearer, api_key);
        hf_client_request_header(&out, "Authorization", 13, bearer.data, bearer.length);
        hf_buffer_free(&bearer);
    }
    if (body) hf_client_request_header(&out, "Content-Type", 12, "application/json", 16);
    hf_client_request_end(&out, body, body_length);
    hf_client_parser_t reader;
    hf_client_parser_init(&reader, HF_CLIENT_ANSWER_SIZE_MAX, NULL, NULL);
    int rc = -1;
    if (send_all(fd, out.data, out.length) != 0)
        snprintf(error, error_size, "sending the request failed: %s", strerror(errno));
    else if (receive_answer(fd, &reader, error, error_size) == 0) {
        answer_take(&reader, answer);
        rc = 0;
    }
    close(fd);
    hf_buffer_free(&out);
    hf_client_parser_free(&reader);
    return rc;
}

void hf_client_answer_free(hf_client_answer_t *answer) {
    free(answer->body);
    answer->body = NULL;
}
