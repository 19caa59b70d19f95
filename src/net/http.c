/* HTTP/1.1 server on libuv and llhttp (see http.h): listening, accepting, and what the server
 * does to all its connections at once (release, fail pending, stop, close).
 *
 * A connection parses requests as bytes arrive and calls the handler as each request completes.
 * The handler's response joins the connection's queue with the store sequence it depends on.
 * The queue leaves in order: its head responses whose sequence is released are serialized into
 * one output buffer and sent with one write, so a pipelining client costs one write per batch. */
#include "net/http.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/limits.h"
#include "net/internal.h"

#define LISTEN_BACKLOG 1024

/* ---- accepting ---- */

static void free_handle(uv_handle_t *handle) { free(handle); }

/* Over the connection limit: accepted and closed at once, so the listen queue does not back up
 * silently and the client learns immediately. */
static void connection_refuse(hf_http_server_t *server) {
    uv_tcp_t *tcp = malloc(sizeof *tcp);
    if (!tcp) abort(); /* an unaccepted connection would stall the listener for good */
    uv_tcp_init(server->loop, tcp);
    uv_accept((uv_stream_t *)&server->listener, (uv_stream_t *)tcp);
    uv_close((uv_handle_t *)tcp, free_handle);
}

static void on_connection(uv_stream_t *listener, int status) {
    hf_http_server_t *server = listener->data;
    if (status < 0 || server->closed) return;
    if (server->connection_count >= HF_HTTP_CONNECTIONS_MAX) {
        connection_refuse(server);
        return;
    }
    connection_t *connection = calloc(1, sizeof *connection);
    if (!connection) abort(); /* as hf_buffer: no sensible answer without memory */
    connection->server = server;
    list_init(&connection->list_link);
    list_push_back(&server->connections, &connection->all_link);
    server->connection_count++;
    uv_tcp_init(server->loop, &connection->tcp);
    connection->tcp.data = connection;
    connection_parser_init(connection);
    if (uv_accept(listener, (uv_stream_t *)&connection->tcp) < 0) {
        connection_close(connection);
        return;
    }
    /* Answers are whole and written at once: Nagle's delay would only add latency. */
    uv_tcp_nodelay(&connection->tcp, 1);
    connection_settle(connection);
}

/* ---- the server ---- */

static int address_resolve(uv_loop_t *loop, const char *host, int port,
                           struct sockaddr_storage *address) {
    if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)address) == 0) return 0;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)address) == 0) return 0;
    /* A host name: resolved once, synchronously, since nothing else runs before start. */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    uv_getaddrinfo_t request;
    int result = uv_getaddrinfo(loop, &request, NULL, host, NULL, &hints);
    if (result < 0) return result;
    memcpy(address, request.addrinfo->ai_addr, request.addrinfo->ai_addrlen);
    uv_freeaddrinfo(request.addrinfo);
    if (address->ss_family == AF_INET)
        ((struct sockaddr_in *)address)->sin_port = htons((uint16_t)port);
    else ((struct sockaddr_in6 *)address)->sin6_port = htons((uint16_t)port);
    return 0;
}

static void on_listener_closed_after_failure(uv_handle_t *handle) { free(handle->data); }

int hf_http_bind(uv_loop_t *loop, const char *host, int port, int *bound_socket, char *error,
                 size_t error_size) {
    if (!host) host = "127.0.0.1";
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    int result = address_resolve(loop, host, port, &address);
    if (result < 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", host, uv_strerror(result));
        return result;
    }
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    socklen_t length = address.ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                                    : sizeof(struct sockaddr_in6);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, (const struct sockaddr *)&address, length) != 0) {
        result = -errno;
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "cannot listen on %s port %d: %s", host, port,
                 uv_strerror(result));
        return result;
    }
    *bound_socket = fd;
    return 0;
}

/* The listener on the socket config->bound names, or on one bound here. */
static int listener_open(uv_tcp_t *listener, const hf_http_config_t *config,
                         const struct sockaddr_storage *address) {
    if (!config->bound) return uv_tcp_bind(listener, (const struct sockaddr *)address, 0);
    int result = uv_tcp_open(listener, config->bound_socket);
    if (result < 0) close(config->bound_socket);
    return result;
}

int hf_http_server_start(hf_http_server_t **out, uv_loop_t *loop, const hf_http_config_t *config,
                         char *error, size_t error_size) {
    *out = NULL;
    /* libuv writes with write(2): a peer gone between two writes would raise SIGPIPE and kill
     * the process, where the write error alone closes the one connection. */
    signal(SIGPIPE, SIG_IGN);
    const char *host = config->host ? config->host : "127.0.0.1";
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    int result = config->bound ? 0 : address_resolve(loop, host, config->port, &address);
    if (result < 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", host, uv_strerror(result));
        return result;
    }
    hf_http_server_t *server = calloc(1, sizeof *server);
    if (!server) abort();
    server->loop = loop;
    server->handler = config->handler;
    server->context = config->context;
    server->access_log = config->access_log;
    server->answered = config->answered;
    list_init(&server->connections);
    list_init(&server->waiting);
    list_init(&server->idle);
    list_init(&server->head);
    list_init(&server->body);
    list_init(&server->linger);
    uv_tcp_init(loop, &server->listener);
    server->listener.data = server;
    result = listener_open(&server->listener, config, &address);
    if (result == 0)
        result = uv_listen((uv_stream_t *)&server->listener, LISTEN_BACKLOG, on_connection);
    if (result < 0) goto fail;
    uv_timer_init(loop, &server->timer);
    server->timer.data = server;
    server->listening = true;
    *out = server;
    return 0;
fail:
    snprintf(error, error_size, "cannot listen on %s port %d: %s", host, config->port,
             uv_strerror(result));
    /* The handle exists: the server is freed when the loop has closed it. */
    uv_close((uv_handle_t *)&server->listener, on_listener_closed_after_failure);
    return result;
}

void hf_http_server_release(hf_http_server_t *server, uint64_t durable_sequence) {
    if (durable_sequence <= server->released_sequence) return;
    server->released_sequence = durable_sequence;
    /* Settling files each connection again: into waiting if its next answer still waits. */
    link_t visit;
    list_take_all(&visit, &server->waiting);
    while (!list_empty(&visit)) {
        connection_t *connection = CONTAINER_OF(visit.next, connection_t, list_link);
        list_remove(&connection->list_link);
        connection->list = LIST_NONE;
        connection_settle(connection);
    }
}

/* A stream whose first response cannot be acknowledged ends with the 503 and sends nothing. */
static void stream_fail(connection_t *connection, queued_response_t *entry) {
    entry->stream = false;
    entry->response.close = true;
    connection->stream.ending = true;
    hf_buffer_free(&connection->stream.unsent);
}

/* A 503 in place of an answer keeps only the headers that hold for any answer (CORS's). */
static void headers_keep_every_answer(hf_http_response_t *response) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < response->header_count; i++)
        if (response->headers[i].every_answer) response->headers[kept++] = response->headers[i];
    response->header_count = kept;
}

/* Turns the answers of one connection that wait past durable_sequence into 503s. */
static void connection_fail_pending(connection_t *connection, uint64_t durable_sequence) {
    for (queued_response_t *entry = connection->queue_head; entry; entry = entry->next) {
        hf_http_response_t *response = &entry->response;
        if (entry->interim || entry->deferred || response->durable_sequence <= durable_sequence)
            continue;
        connection->queued_bytes -= response->body.length;
        hf_http_error(response, 503, "unavailable", "the store failed; nothing was acknowledged",
                      NULL);
        response->content_type = NULL;
        response->durable_sequence = 0;
        headers_keep_every_answer(response);
        entry->stream_head = false;
        connection->queued_bytes += response->body.length;
        if (entry->stream) stream_fail(connection, entry);
    }
}

void hf_http_server_fail_pending(hf_http_server_t *server, uint64_t durable_sequence) {
    /* Rare (the store failed), so every connection is visited: an answer waiting behind a
     * write in flight is not in the waiting list. */
    for (link_t *link = server->connections.next; link != &server->connections;) {
        connection_t *connection = CONTAINER_OF(link, connection_t, all_link);
        link = link->next;
        if (connection->closing || !connection->queue_head) continue;
        connection_fail_pending(connection, durable_sequence);
        connection_settle(connection);
    }
}

void hf_http_server_stop_accepting(hf_http_server_t *server) {
    if (server->listening) {
        uv_close((uv_handle_t *)&server->listener, NULL);
        server->listening = false;
    }
    for (link_t *link = server->connections.next; link != &server->connections;) {
        connection_t *connection = CONTAINER_OF(link, connection_t, all_link);
        link = link->next;
        if (connection->closing || connection->lingering) continue;
        /* An open stream would keep the server from draining: it ends after its data. */
        if (connection->stream.open) {
            hf_http_stream_close(&connection->stream);
            continue;
        }
        connection->input_done = true;
        hf_buffer_free(&connection->held_input);
        /* Idle, or in the middle of a request that will now never be read: nothing is owed. */
        if (connection_pending(connection) == 0 && !connection->parsing)
            connection_close(connection);
        else connection_settle(connection);
    }
}

size_t hf_http_server_pending(const hf_http_server_t *server) { return server->pending_count; }

size_t hf_http_server_connections(const hf_http_server_t *server) {
    return server->connection_count;
}

void hf_http_server_close(hf_http_server_t *server) {
    if (server->listening) {
        uv_close((uv_handle_t *)&server->listener, NULL);
        server->listening = false;
    }
    if (!server->closed) uv_close((uv_handle_t *)&server->timer, NULL);
    server->closed = true;
    for (link_t *link = server->connections.next; link != &server->connections; link = link->next)
        connection_close(CONTAINER_OF(link, connection_t, all_link));
}

void hf_http_server_free(hf_http_server_t *server) {
    if (!server) return;
    assert(list_empty(&server->connections) && "hf_http_server_free before the loop ended");
    free(server);
}
