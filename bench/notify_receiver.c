/* The benchmark's notification receiver (bench/run.sh, part notify): accepts POSTs on
 * 127.0.0.1:PORT and answers each 204 at once, over keep-alive, counting them; prints the count
 * on SIGTERM. Heads are read up to their blank line, bodies by their Content-Length: enough
 * for what the server sends (libcurl's requests), not a general HTTP server. One libuv loop.
 *
 *   notify_receiver PORT */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#define BUFFER_SIZE (1 << 20)

typedef struct peer {
    uv_tcp_t tcp;
    char *data;
    size_t length;
} peer_t;

static unsigned long long received;
static const char ANSWER[] = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n";

static void closed(uv_handle_t *handle) {
    peer_t *peer = handle->data;
    free(peer->data);
    free(peer);
}

static void buffer_give(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    peer_t *peer = handle->data;
    buffer->base = peer->data + peer->length;
    buffer->len = BUFFER_SIZE - peer->length;
}

static void written(uv_write_t *request, int status) { free(request); }

/* The length of the first whole request in the buffer, or 0 while it is not whole. */
static size_t request_length(const char *data, size_t length) {
    const char *end = memmem(data, length, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    size_t head = (size_t)(end - data) + 4, body = 0;
    for (const char *line = data; line < end;) {
        const char *line_end = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
        if (strncasecmp(line, "Content-Length:", 15) == 0) body = strtoull(line + 15, NULL, 10);
        line = line_end + 2;
    }
    return head + body <= length ? head + body : 0;
}

static void answer(peer_t *peer) {
    uv_write_t *request = malloc(sizeof *request);
    uv_buf_t buffer = uv_buf_init((char *)ANSWER, sizeof ANSWER - 1);
    if (request == NULL || uv_write(request, (uv_stream_t *)&peer->tcp, &buffer, 1, written) != 0)
        free(request);
}

static void readable(uv_stream_t *stream, ssize_t count, const uv_buf_t *buffer) {
    peer_t *peer = stream->data;
    if (count < 0 || (count == 0 && peer->length == BUFFER_SIZE)) {
        uv_close((uv_handle_t *)stream, closed);
        return;
    }
    peer->length += (size_t)count;
    size_t length;
    while ((length = request_length(peer->data, peer->length)) > 0) {
        received++;
        answer(peer);
        memmove(peer->data, peer->data + length, peer->length - length);
        peer->length -= length;
    }
}

static void accepted(uv_stream_t *server, int status) {
    if (status != 0) return;
    peer_t *peer = calloc(1, sizeof *peer);
    peer->data = malloc(BUFFER_SIZE);
    uv_tcp_init(server->loop, &peer->tcp);
    peer->tcp.data = peer;
    if (uv_accept(server, (uv_stream_t *)&peer->tcp) == 0)
        uv_read_start((uv_stream_t *)&peer->tcp, buffer_give, readable);
    else
        uv_close((uv_handle_t *)&peer->tcp, closed);
}

static void stopped(uv_signal_t *handle, int number) {
    printf("received=%llu\n", received);
    fflush(stdout);
    uv_stop(handle->loop);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: notify_receiver PORT\n");
        return 2;
    }
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_t server;
    struct sockaddr_in address;
    uv_ip4_addr("127.0.0.1", atoi(argv[1]), &address);
    uv_tcp_init(loop, &server);
    if (uv_tcp_bind(&server, (const struct sockaddr *)&address, 0) != 0 ||
        uv_listen((uv_stream_t *)&server, 128, accepted) != 0) {
        fprintf(stderr, "notify_receiver: cannot listen on port %s\n", argv[1]);
        return 1;
    }
    uv_signal_t term;
    uv_signal_init(loop, &term);
    uv_signal_start(&term, stopped, SIGTERM);
    return uv_run(loop, UV_RUN_DEFAULT);
}
