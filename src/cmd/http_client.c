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
    snprintf(error, size, "--server %.200s: expected [http://]HOST:PORT (a port from 1 to "
             "65535)", server);
    return -1;
}

int hf_client_server_url(const char *given, char *url, size_t url_size, char *error,
                         size_t error_size) {
    const char *scheme_end = strstr(given, "://");
    if (scheme_end && (scheme_end - given != 4 || strncasecmp(given, "http", 4) != 0)) {
        snprintf(error, error_size, "--server %.200s: only http:// is supported (no TLS: put "
                 "the server behind a local address)", given);
        return -1;
    }
    const char *rest = scheme_end ? scheme_end + 3 : given;
    if ((size_t)snprintf(url, url_size, "http://%s", rest) >= url_size) {
        snprintf(error, error_size, "--server: the address is too long");
        return -1;
    }
    address_t address;
    if (address_parse(url, &address, error, error_size) != 0) {
        snprintf(error, error_size, "--server %.200s: expected [http://]HOST:PORT (a port "
                 "from 1 to 65535)", given);
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
        snprintf(error, size, "cannot reach the server %.200s: %s (is it running? --server "
                 "or HOLDFAST_SERVER says where)", server, strerror(saved ? saved : ECONNREFUSED));
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

static int receive_all(int fd, hf_buffer_t *in, char *error, size_t size) {
    char chunk[65536];
    for (;;) {
        ssize_t got = recv(fd, chunk, sizeof chunk, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(error, size, "reading the answer failed: %s", strerror(errno));
            return -1;
        }
        if (got == 0) return 0;
        if (in->length + (size_t)got > HF_CLIENT_ANSWER_SIZE_MAX) {
            snprintf(error, size, "the answer is larger than %u bytes", HF_CLIENT_ANSWER_SIZE_MAX);
            return -1;
        }
        hf_buffer_append(in, chunk, (size_t)got);
    }
}

/* Status line, head and body of what was read; the body runs to Content-Length, or to the
 * end of the connection without one. */
static int answer_parse(hf_buffer_t *in, hf_client_answer_t *answer, char *error, size_t size) {
    hf_buffer_append_char(in, '\0');
    in->length--;
    const char *text = in->data ? in->data : "";
    const char *end = strstr(text, "\r\n\r\n");
    long status = 0;
    if (end && strncmp(text, "HTTP/1.", 7) == 0 && text[7] >= '0' && text[7] <= '9' &&
        text[8] == ' ')
        status = strtol(text + 9, NULL, 10);
    if (!end || status < 100 || status > 999) {
        snprintf(error, size, "the server's answer is not HTTP");
        return -1;
    }
    const char *body = end + 4;
    size_t length = in->length - (size_t)(body - text);
    for (const char *line = strstr(text, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
        if (strncasecmp(line, "Content-Length:", 15) != 0) continue;
        char *digits_end = NULL;
        unsigned long long declared = strtoull(line + 15, &digits_end, 10);
        if (digits_end == line + 15) continue;
        if (declared > length) {
            snprintf(error, size, "the server's answer was cut short (%zu of %llu bytes)",
                     length, declared);
            return -1;
        }
        length = (size_t)declared;
    }
    answer->status = (int)status;
    answer->body = malloc(length + 1);
    if (!answer->body) abort();
    memcpy(answer->body, body, length);
    answer->body[length] = '\0';
    answer->body_length = length;
    return 0;
}

int hf_client_request(const char *server, const char *api_key, const char *method,
                      const char *target, const char *body, size_t body_length,
                      hf_client_answer_t *answer, char *error, size_t error_size) {
    memset(answer, 0, sizeof *answer);
    address_t address;
    if (address_parse(server, &address, error, error_size) != 0) return -1;
    int fd = connect_to(&address, server, error, error_size);
    if (fd < 0) return -1;
    hf_buffer_t out = {0}, in = {0};
    char head[1024];
    bool ipv6 = strchr(address.host, ':') != NULL;
    snprintf(head, sizeof head, "%s ", method);
    hf_buffer_append_string(&out, head);
    hf_buffer_append_string(&out, target);
    snprintf(head, sizeof head, " HTTP/1.1\r\nHost: %s%s%s:%s\r\nConnection: close\r\n"
             "User-Agent: holdfast-cli\r\nAccept: application/json\r\n", ipv6 ? "[" : "",
             address.host, ipv6 ? "]" : "", address.port);
    hf_buffer_append_string(&out, head);
    if (api_key && *api_key) {
        hf_buffer_append_string(&out, "Authorization: Bearer ");
        hf_buffer_append_string(&out, api_key);
        hf_buffer_append_string(&out, "\r\n");
    }
    if (body) {
        snprintf(head, sizeof head, "Content-Type: application/json\r\nContent-Length: %zu\r\n",
                 body_length);
        hf_buffer_append_string(&out, head);
    }
    hf_buffer_append_string(&out, "\r\n");
    if (body) hf_buffer_append(&out, body, body_length);
    int rc = -1;
    if (send_all(fd, out.data, out.length) != 0)
        snprintf(error, error_size, "sending the request failed: %s", strerror(errno));
    else if (receive_all(fd, &in, error, error_size) == 0)
        rc = answer_parse(&in, answer, error, error_size);
    close(fd);
    hf_buffer_free(&out);
    hf_buffer_free(&in);
    return rc;
}

void hf_client_answer_free(hf_client_answer_t *answer) {
    free(answer->body);
    answer->body = NULL;
}
