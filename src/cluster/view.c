/* The nodes and leases at one listing (view.h). */
#include "cluster/view.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

static int view_add_node(void *context, const hf_stored_node_t *node) {
    hf_cluster_view_t *view = context;
    if (view->node_count == view->node_capacity) {
        view->node_capacity = view->node_capacity ? 2 * view->node_capacity : 8;
        view->nodes = realloc(view->nodes, view->node_capacity * sizeof *view->nodes);
        if (!view->nodes) abort();
    }
    hf_cluster_view_node_t *item = &view->nodes[view->node_count++];
    snprintf(item->node_id, sizeof item->node_id, "%s", node->node_id);
    snprintf(item->address, sizeof item->address, "%s", node->address ? node->address : "");
    item->heartbeat_at_ms = node->heartbeat_at_ms;
    item->units = 0;
    return 0;
}

static int view_add_lease(void *context, const hf_stored_lease_t *lease) {
    hf_cluster_view_t *view = context;
    if (view->lease_count == view->lease_capacity) {
        view->lease_capacity = view->lease_capacity ? 2 * view->lease_capacity : 64;
        view->leases = realloc(view->leases, view->lease_capacity * sizeof *view->leases);
        if (!view->leases) abort();
    }
    hf_cluster_view_lease_t *item = &view->leases[view->lease_count++];
    snprintf(item->unit, sizeof item->unit, "%s", lease->unit);
    snprintf(item->node_id, sizeof item->node_id, "%s", lease->node_id);
    item->live = lease->live;
    /* /v1/cluster's units are events and fleets (the contract's): not the records of no unit. */
    bool counted = lease->live && strcmp(lease->unit, HF_STORE_UNIT_NONE) != 0;
    for (size_t i = 0; counted && i < view->node_count; i++)
        if (strcmp(view->nodes[i].node_id, lease->node_id) == 0) view->nodes[i].units++;
    return 0;
}

int hf_cluster_view_list(hf_store_t *store, hf_cluster_view_t *view, char *error,
                         size_t error_size) {
    view->node_count = view->lease_count = 0;
    return hf_store_lease_list(store, view_add_node, view_add_lease, view, error, error_size);
}

void hf_cluster_view_free(hf_cluster_view_t *view) {
    free(view->nodes);
    free(view->leases);
    memset(view, 0, sizeof *view);
}

const hf_cluster_view_lease_t *hf_cluster_view_lease(const hf_cluster_view_t *view,
                                                     const char *unit) {
    for (size_t i = 0; i < view->lease_count; i++)
        if (strcmp(view->leases[i].unit, unit) == 0) return &view->leases[i];
    return NULL;
}

const hf_cluster_view_node_t *hf_cluster_view_node(const hf_cluster_view_t *view,
                                                   const char *node_id) {
    for (size_t i = 0; i < view->node_count; i++)
        if (strcmp(view->nodes[i].node_id, node_id) == 0) return &view->nodes[i];
    return NULL;
}

/* A node that takes longer than this to accept a connection is taken for gone. */
#define PROBE_MS 300

bool hf_cluster_address_answers(const char *address) {
    char host[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    int consumed = 0;
    if (sscanf(address, "http://%256[^:/]:%n", host, &consumed) != 1 || consumed == 0) return true;
    char *end = NULL;
    long port = strtol(address + consumed, &end, 10);
    if (end == address + consumed || port <= 0 || port > 65535) return true;
    if (strcmp(host, "localhost") == 0) snprintf(host, sizeof host, "127.0.0.1");
    struct sockaddr_in target;
    if (uv_ip4_addr(host, (int)port, &target) != 0) return true; /* unknown: assume alive */
    int socket_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (socket_fd < 0) return true;
    bool answers = connect(socket_fd, (struct sockaddr *)&target, sizeof target) == 0;
    if (!answers && errno == EINPROGRESS) {
        struct pollfd wait = {socket_fd, POLLOUT, 0};
        int error = 0;
        socklen_t length = sizeof error;
        answers = poll(&wait, 1, PROBE_MS) == 1 &&
                  getsockopt(socket_fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    close(socket_fd);
    return answers;
}
