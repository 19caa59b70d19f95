/* libFuzzer target: the HTTP request path of src/net/http.c, bytes in -> answers or a clean close.
 *
 * One server (the real hf_http_server on a libuv loop, listening on 127.0.0.1, any port) lives
 * for the whole run. Each input is sent by a client socket in the same thread, in one write or
 * in chunks (the first byte chooses), then the client half-closes and reads until the server
 * closes. The loop is pumped in between. Checked:
 *   - the server always ends the connection (no hang: a wall-clock bound aborts);
 *   - whatever comes back starts as an HTTP/1.1 status line;
 *   - the handler sees sane requests: NUL-terminated method, path and query, a body within
 *     1 MiB, at most 100 headers with non-empty names;
 *   - after every input, no connection and no queued answer is left behind.
 * The handler gates every other answer on a store sequence that is released on the next loop
 * turn, so the durability gate's path runs too. Seeds: tests/fuzz/corpus/http/. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include "lib/limits.h"
#include "lib/json.h"
#include "net/http.h"

static uv_loop_t *loop;
static hf_http_server_t *server;
static uv_check_t release_check;
static uint64_t next_sequence;
static int port;

static void fail(const char *what) {
    fprintf(stderr, "fuzz_http: %s\n", what);
    abort();
}

static void handler(void *context, const hf_http_request_t *request,
                    hf_http_response_t *response) {
    (void)context;
    if (!request->method || !request->path || !request->query || !request->body)
        fail("a request with a NULL string");
    if (strlen(request->method) == 0) fail("an empty method");
    if (request->body_length > HF_HTTP_BODY_SIZE_MAX) fail("a body over the limit reached the handler");
    if (request->body[request->body_length] != '\0') fail("the body is not NUL-terminated");
    if (request->header_count > HF_HTTP_HEADERS_MAX) fail("too many headers");
    for (size_t i = 0; i < request->header_count; i++) {
        const hf_http_header_t *header = &request->headers[i];
        if (header->name_length == 0) fail("a header without a name");
        if (header->name[header->name_length] != '\0' || header->value[header->value_length] != '\0')
            fail("a header not NUL-terminated");
    }
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_json_object_begin(&json);
    hf_json_key(&json, "path");
    hf_json_string(&json, request->path);
    hf_json_key(&json, "body_length");
    hf_json_int(&json, (int64_t)request->body_length);
    hf_json_object_end(&json);
    /* Every other answer waits for a "store" sequence, released at the next loop turn. */
    response->durable_sequence = (request->body_length & 1) ? ++next_sequence : 0;
    if (request->query[0] == 'c') response->close = true;
}

static void on_check(uv_check_t *handle) {
    (void)handle;
    hf_http_server_release(server, next_sequence);
}

static void find_listener(uv_handle_t *handle, void *argument) {
    if (handle->type != UV_TCP || port) return;
    struct sockaddr_storage address;
    int length = sizeof address;
    if (uv_tcp_getsockname((uv_tcp_t *)handle, (struct sockaddr *)&address, &length) == 0 &&
        address.ss_family == AF_INET)
        port = ntohs(((struct sockaddr_in *)&address)->sin_port);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    loop = uv_default_loop();
    hf_http_config_t config = {.host = "127.0.0.1", .port = 0, .handler = handler};
    char error[256];
    if (hf_http_server_start(&server, loop, &config, error, sizeof error) != 0) fail(error);
    uv_walk(loop, find_listener, NULL);
    if (!port) fail("cannot find the listening port");
    uv_check_init(loop, &release_check);
    uv_check_start(&release_check, on_check);
    uv_unref((uv_handle_t *)&release_check);
    return 0;
}

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int client_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) fail("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS)
        fail("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Pumps the loop once and waits a little for the client socket. */
static void pump(int fd, short events) {
    uv_run(loop, UV_RUN_NOWAIT);
    struct pollfd poller = {.fd = fd, .events = events};
    poll(&poller, 1, 1);
    uv_run(loop, UV_RUN_NOWAIT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t chunk = (data[0] & 1) ? (size_t)(data[0] >> 1) + 1 : size;
    data++;
    size--;
    int fd = client_connect();
    size_t sent = 0;
    bool half_closed = false, closed = false;
    char received[4096];
    size_t received_length = 0;
    double deadline = now_seconds() + 8.0;
    while (!closed) {
        if (now_seconds() > deadline) fail("the server neither answered nor closed (hang)");
        if (sent < size) {
            size_t length = size - sent < chunk ? size - sent : chunk;
            ssize_t written = send(fd, data + sent, length, MSG_NOSIGNAL);
            if (written > 0) sent += (size_t)written;
            else if (written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)
                sent = size; /* the server closed on us: nothing more can be sent */
        } else if (!half_closed) {
            shutdown(fd, SHUT_WR);
            half_closed = true;
        }
        pump(fd, POLLIN | (sent < size ? POLLOUT : 0));
        for (;;) {
            char buffer[65536];
            ssize_t got = recv(fd, buffer, sizeof buffer, 0);
            if (got > 0) {
                size_t keep = sizeof received - received_length;
                if ((size_t)got < keep) keep = (size_t)got;
                memcpy(received + received_length, buffer, keep);
                received_length += keep;
                continue;
            }
            if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                closed = true;
            break;
        }
    }
    close(fd);
    if (received_length > 0 &&
        (received_length < 9 || memcmp(received, "HTTP/1.1 ", 9) != 0))
        fail("the answer does not start with an HTTP/1.1 status line");
    /* The server lets go of the connection and of every answer. */
    for (int i = 0; hf_http_server_connections(server) > 0 || hf_http_server_pending(server) > 0;
         i++) {
        if (i > 2000) fail("a connection or an answer is left behind after the peer closed");
        uv_run(loop, UV_RUN_NOWAIT);
        if (i > 10) usleep(100);
    }
    return 0;
}
