/* Forwarding (forward.h): the HTTP/1.1 client (net/client.h) on libuv's connections, one
 * request at a time per keep-alive connection, a bounded pool of them per peer. */
#include "cluster/forward.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/limits.h"
#include "lib/buffer.h"
#include "lib/log.h"
#include "net/client.h"

/* The headers of an owner's answer that are relayed besides its body and Content-Type (the
 * API's own; CORS's and Vary are the receiving node's to write, as for any answer). */
static const char *const RELAYED[] = {"Holdfast-Node", "Allow",       "WWW-Authenticate",
                                      "Location",      "Retry-After", "Idempotent-Replayed"};
#define RELAYED_COUNT (sizeof RELAYED / sizeof RELAYED[0])
/* The content types the API answers with other than JSON, as static strings (http.h). */
static const char *const CONTENT_TYPES[] = {"text/event-stream", "text/html; charset=utf-8",
                                            "text/plain; version=0.0.4; charset=utf-8"};
/* A relayed header's value is at most this long (longer ones are cut: net/client.h). */
#define HEADER_TEXT_MAX HF_CLIENT_HEADER_TEXT_MAX
/* The request headers a forward writes itself, or that concern one connection only. */
static const char *const HOP_HEADERS[] = {
    "Host",       "Connection", "Content-Length", "Transfer-Encoding",
    "Keep-Alive", "Expect",     HF_FORWARD_HEADER};

typedef struct peer peer_t;

typedef struct peer_link {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    uv_timer_t timer;
    hf_client_parser_t answer; /* the answer in flight's reading */
    peer_t *peer;
    hf_forward_t *forward;
    struct peer_link *next_idle;
    struct peer_link *next_all, *previous_all; /* the forwarder's list of open links */
    int open_handles;                          /* tcp and timer: freed when both closed */
    bool connected, busy, closing;
    hf_http_server_t *server; /* the answer in flight's */
    hf_http_deferred_t deferred;
    /* An internal call's (forward.h: hf_forward_call) instead of a relayed answer: told the
     * answer or the failure, never both. NULL for a relay. */
    hf_forward_done_fn done;
    void *done_state;
    hf_buffer_t out;
    const char *content_type; /* static; NULL: JSON */
    uint32_t relayed_count;
    const char *relayed_names[RELAYED_COUNT];
    char relayed_values[RELAYED_COUNT][HEADER_TEXT_MAX + 1];
} peer_link_t;

struct peer {
    char address[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    char host_header[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    struct sockaddr_storage socket_address;
    peer_link_t *idle;
    uint32_t links;
};

struct hf_forward {
    uv_loop_t *loop;
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    peer_t peers[HF_FORWARD_PEERS_MAX];
    uint32_t peer_count;
    hf_forward_counts_t counts;
    uint32_t calls;   /* internal calls in flight (at most HF_CLUSTER_CALLS_MAX) */
    peer_link_t *all; /* every link not yet closing */
    bool closing;
    char read_buffer[64 * 1024];
};

/* ---- peers ---- */

/* http://HOST:PORT, HOST numeric or localhost (forward.h's choice). */
static bool address_parse(const char *address, peer_t *peer) {
    if (strncmp(address, "http://", 7) != 0) return false;
    const char *host = address + 7;
    const char *colon = strrchr(host, ':');
    if (!colon || colon == host) return false;
    char name[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    size_t length = (size_t)(colon - host);
    if (length >= sizeof name) return false;
    memcpy(name, host, length);
    name[length] = '\0';
    char *port_end = NULL;
    long port = strtol(colon + 1, &port_end, 10);
    if (port <= 0 || port > 65535 || (*port_end != '\0' && *port_end != '/')) return false;
    snprintf(peer->host_header, sizeof peer->host_header, "%s", host);
    char *slash = strchr(peer->host_header, '/');
    if (slash) *slash = '\0';
    if (strcmp(name, "localhost") == 0) snprintf(name, sizeof name, "127.0.0.1");
    if (name[0] == '[') { /* [v6]:port */
        memmove(name, name + 1, strlen(name));
        char *end = strchr(name, ']');
        if (end) *end = '\0';
        return uv_ip6_addr(name, (int)port, (struct sockaddr_in6 *)&peer->socket_address) == 0;
    }
    return uv_ip4_addr(name, (int)port, (struct sockaddr_in *)&peer->socket_address) == 0;
}

static peer_t *peer_find(hf_forward_t *forward, const char *address) {
    for (uint32_t i = 0; i < forward->peer_count; i++)
        if (strcmp(forward->peers[i].address, address) == 0) return &forward->peers[i];
    if (forward->peer_count == HF_FORWARD_PEERS_MAX ||
        strlen(address) > HF_CLUSTER_ADDRESS_SIZE_MAX)
        return NULL;
    peer_t *peer = &forward->peers[forward->peer_count];
    memset(peer, 0, sizeof *peer);
    if (!address_parse(address, peer)) return NULL;
    snprintf(peer->address, sizeof peer->address, "%s", address);
    forward->peer_count++;
    return peer;
}

/* ---- a link's end ---- */

static void on_handle_closed(uv_handle_t *handle) {
    peer_link_t *link = handle->data;
    if (--link->open_handles > 0) return;
    hf_buffer_free(&link->out);
    hf_client_parser_free(&link->answer);
    free(link);
}

static void idle_remove(peer_link_t *link) {
    for (peer_link_t **at = &link->peer->idle; *at; at = &(*at)->next_idle)
        if (*at == link) {
            *at = link->next_idle;
            return;
        }
}

static void link_close(peer_link_t *link) {
    if (link->closing) return;
    link->closing = true;
    idle_remove(link);
    if (link->previous_all) link->previous_all->next_all = link->next_all;
    else link->forward->all = link->next_all;
    if (link->next_all) link->next_all->previous_all = link->previous_all;
    link->peer->links--;
    uv_close((uv_handle_t *)&link->tcp, on_handle_closed);
    uv_close((uv_handle_t *)&link->timer, on_handle_closed);
}

/* An internal call's end: its callback told the answer's status (0: none came) and body. The
 * callback may make another call (the link is not idle yet, so it takes another one). */
static void call_end(peer_link_t *link, int status) {
    hf_forward_done_fn done = link->done;
    void *state = link->done_state;
    link->done = NULL;
    link->forward->calls--;
    const char *body = status ? link->answer.body.data : NULL;
    done(state, status, body ? body : "", status ? link->answer.body.length : 0);
}

/* The answer in flight gets 503: the peer failed before answering whole. */
static void link_fail(peer_link_t *link, const char *why) {
    if (link->busy && link->done) {
        link->busy = false;
        call_end(link, 0);
        hf_log(HF_LOG_WARNING, "call to %s failed: %s", link->peer->address, why);
    } else if (link->busy) {
        link->busy = false;
        link->forward->counts.unavailable++;
        hf_http_response_t *response = hf_http_deferred_response(link->server, link->deferred);
        if (response) {
            hf_http_error(response, 503, "unavailable",
                          "the node owning this unit did not answer; the outcome is unknown, "
                          "retry with the same Idempotency-Key",
                          NULL);
            response->content_type = NULL;
            hf_http_deferred_finish(link->server, link->deferred);
        }
        hf_log(HF_LOG_WARNING, "forward to %s failed: %s", link->peer->address, why);
    }
    link_close(link);
}

/* The owner's whole answer, relayed into the deferred one. */
static void link_relay(peer_link_t *link) {
    link->busy = false;
    if (link->done) {
        call_end(link, hf_client_parser_status(&link->answer));
        return;
    }
    link->forward->counts.ok++;
    hf_http_response_t *response = hf_http_deferred_response(link->server, link->deferred);
    if (!response) return;
    response->status = hf_client_parser_status(&link->answer);
    hf_buffer_reset(&response->body);
    hf_buffer_append(&response->body, link->answer.body.data, link->answer.body.length);
    response->content_type = link->content_type;
    for (uint32_t i = 0; i < link->relayed_count; i++) {
        if (response->header_count >= HF_HTTP_RESPONSE_HEADERS_MAX) break;
        const char *value = hf_http_response_keep(response, link->relayed_values[i],
                                                  strlen(link->relayed_values[i]));
        if (value) hf_http_response_header_add(response, link->relayed_names[i], value, false);
    }
    hf_http_deferred_finish(link->server, link->deferred);
}

/* ---- reading the answer ---- */

/* The answer's headers (net/client.h hands them over): its content type, and those relayed. */
static void header_take(void *owner, const char *name, const char *value) {
    peer_link_t *link = owner;
    if (link->done) return; /* a call reads the status and body only */
    if (strcasecmp(name, "Content-Type") == 0) {
        link->content_type = NULL;
        for (size_t i = 0; i < sizeof CONTENT_TYPES / sizeof CONTENT_TYPES[0]; i++)
            if (strcasecmp(value, CONTENT_TYPES[i]) == 0) link->content_type = CONTENT_TYPES[i];
        return;
    }
    for (size_t i = 0; i < RELAYED_COUNT; i++)
        if (strcasecmp(name, RELAYED[i]) == 0 && link->relayed_count < RELAYED_COUNT) {
            link->relayed_names[link->relayed_count] = RELAYED[i];
            snprintf(link->relayed_values[link->relayed_count++], HEADER_TEXT_MAX + 1, "%s", value);
        }
}

/* ---- I/O ---- */

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    (void)suggested;
    peer_link_t *link = handle->data;
    *buffer = uv_buf_init(link->forward->read_buffer, sizeof link->forward->read_buffer);
}

static void on_read(uv_stream_t *stream, ssize_t count, const uv_buf_t *buffer) {
    peer_link_t *link = stream->data;
    if (count == 0 || link->closing) return;
    if (count < 0) {
        link_fail(link, count == UV_EOF ? "connection closed" : uv_strerror((int)count));
        return;
    }
    if (!link->busy) { /* bytes nobody asked for: the connection is not to be trusted */
        link_close(link);
        return;
    }
    hf_client_read_t read = hf_client_parser_feed(&link->answer, buffer->base, (size_t)count);
    if (read == HF_CLIENT_COMPLETE) {
        bool keep = hf_client_parser_keep_alive(&link->answer);
        uv_timer_stop(&link->timer);
        link_relay(link);
        if (!keep || link->forward->closing) {
            link_close(link);
            return;
        }
        link->next_idle = link->peer->idle;
        link->peer->idle = link;
        return;
    }
    if (read == HF_CLIENT_FAILED) link_fail(link, hf_client_parser_error(&link->answer));
}

static void on_timeout(uv_timer_t *timer) { link_fail(timer->data, "no answer in time"); }

static void on_write(uv_write_t *request, int status) {
    peer_link_t *link = request->data;
    if (status < 0 && !link->closing) link_fail(link, uv_strerror(status));
}

static void link_write(peer_link_t *link) {
    uv_buf_t buffer = uv_buf_init(link->out.data, (unsigned)link->out.length);
    link->write.data = link;
    int rc = uv_write(&link->write, (uv_stream_t *)&link->tcp, &buffer, 1, on_write);
    if (rc < 0) link_fail(link, uv_strerror(rc));
}

static void on_connect(uv_connect_t *request, int status) {
    peer_link_t *link = request->data;
    if (link->closing) return;
    if (status < 0) {
        link_fail(link, uv_strerror(status));
        return;
    }
    link->connected = true;
    uv_tcp_nodelay(&link->tcp, 1);
    uv_read_start((uv_stream_t *)&link->tcp, on_alloc, on_read);
    link_write(link);
}

static peer_link_t *link_open(hf_forward_t *forward, peer_t *peer) {
    peer_link_t *link = calloc(1, sizeof *link);
    if (!link) abort();
    link->peer = peer;
    link->forward = forward;
    uv_tcp_init(forward->loop, &link->tcp);
    uv_timer_init(forward->loop, &link->timer);
    link->tcp.data = link->timer.data = link->connect.data = link;
    link->open_handles = 2;
    link->next_all = forward->all;
    if (forward->all) forward->all->previous_all = link;
    forward->all = link;
    hf_client_parser_init(&link->answer, HF_FORWARD_BODY_MAX, header_take, link);
    peer->links++;
    int rc = uv_tcp_connect(&link->connect, &link->tcp,
                            (const struct sockaddr *)&peer->socket_address, on_connect);
    if (rc < 0) {
        link_close(link);
        return NULL;
    }
    return link;
}

/* The request as the owner gets it: the same method, target, headers and body, and the
 * header that says it was forwarded. HEAD goes as GET: the receiving server drops the body. */
static void request_write(hf_forward_t *forward, peer_link_t *link,
                          const hf_http_request_t *request) {
    hf_buffer_t *out = &link->out;
    const char *method = strcmp(request->method, "HEAD") == 0 ? "GET" : request->method;
    hf_client_request_begin(out, method, request->path, request->query, link->peer->host_header);
    for (size_t i = 0; i < request->header_count; i++) {
        const hf_http_header_t *header = &request->headers[i];
        bool hop = false;
        for (size_t j = 0; j < sizeof HOP_HEADERS / sizeof HOP_HEADERS[0] && !hop; j++)
            hop = strlen(HOP_HEADERS[j]) == header->name_length &&
                  strncasecmp(HOP_HEADERS[j], header->name, header->name_length) == 0;
        if (hop) continue;
        hf_client_request_header(out, header->name, header->name_length, header->value,
                                 header->value_length);
    }
    hf_client_request_header(out, HF_FORWARD_HEADER, strlen(HF_FORWARD_HEADER), forward->node_id,
                             strlen(forward->node_id));
    hf_client_request_end(out, request->body ? request->body : "", request->body_length);
}

/* A link to the peer at address, idle or new, made busy; NULL when there is none to have. */
static peer_link_t *link_take(hf_forward_t *forward, const char *address) {
    peer_t *peer = peer_find(forward, address);
    if (!peer || forward->closing) return NULL;
    peer_link_t *link = peer->idle;
    if (link) {
        peer->idle = link->next_idle;
    } else {
        if (peer->links >= HF_FORWARD_CONNECTIONS_MAX) return NULL;
        link = link_open(forward, peer);
        if (!link) return NULL;
    }
    link->next_idle = NULL;
    link->busy = true;
    link->done = NULL;
    link->content_type = NULL;
    link->relayed_count = 0;
    hf_client_parser_reset(&link->answer);
    return link;
}

static void link_send(peer_link_t *link, uint32_t timeout_ms) {
    uv_timer_start(&link->timer, on_timeout, timeout_ms, 0);
    if (link->connected) link_write(link);
}

bool hf_forward_send(hf_forward_t *forward, hf_http_server_t *server, hf_http_deferred_t deferred,
                     const char *address, const hf_http_request_t *request) {
    peer_link_t *link = link_take(forward, address);
    if (!link) return false;
    link->server = server;
    link->deferred = deferred;
    request_write(forward, link, request);
    link_send(link, HF_FORWARD_TIMEOUT_MS);
    return true;
}

bool hf_forward_call(hf_forward_t *forward, const char *address, const hf_forward_call_t *call,
                     hf_forward_done_fn done, void *state) {
    if (forward->calls >= HF_CLUSTER_CALLS_MAX) return false;
    peer_link_t *link = link_take(forward, address);
    if (!link) return false;
    forward->calls++;
    link->done = done;
    link->done_state = state;
    hf_buffer_t *out = &link->out;
    hf_client_request_begin(out, call->method, call->path, "", link->peer->host_header);
    if (call->api_key && call->api_key[0]) {
        hf_buffer_t value = {0};
        hf_buffer_append(&value, "Bearer ", 7);
        hf_buffer_append(&value, call->api_key, strlen(call->api_key));
        hf_client_request_header(out, "Authorization", 13, value.data, value.length);
        hf_buffer_free(&value);
    }
    if (call->body_length)
        hf_client_request_header(out, "Content-Type", 12, "application/json", 16);
    hf_client_request_end(out, call->body ? call->body : "", call->body_length);
    link_send(link, HF_CLUSTER_CALL_TIMEOUT_MS);
    return true;
}

hf_forward_t *hf_forward_create(uv_loop_t *loop, const char *node_id) {
    hf_forward_t *forward = calloc(1, sizeof *forward);
    if (!forward) abort();
    forward->loop = loop;
    snprintf(forward->node_id, sizeof forward->node_id, "%s", node_id);
    return forward;
}

/* Busy links are closed with their answers failed; links free themselves as their handles
 * close, before uv_run returns; hf_forward_free then frees the forwarder. */
void hf_forward_close(hf_forward_t *forward) {
    if (!forward) return;
    forward->closing = true;
    while (forward->all) link_fail(forward->all, "the node is stopping");
}

void hf_forward_free(hf_forward_t *forward) { free(forward); }

hf_forward_counts_t hf_forward_counts(const hf_forward_t *forward) {
    return forward ? forward->counts : (hf_forward_counts_t){0, 0};
}
