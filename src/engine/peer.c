/* Whether a peer's advertised URL accepts connections (peer.h). */
#include "engine/peer.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "core/limits.h"

bool hf_peer_address_answers(const char *address) {
    char host[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    const char *start = strncmp(address, "http://", 7) == 0 ? address + 7 : NULL;
    const char *colon = start ? strchr(start, ':') : NULL;
    if (!colon || (size_t)(colon - start) >= sizeof host) return true;
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end != '\0' && *end != '/') || port <= 0 || port > 65535)
        return true;
    snprintf(host, sizeof host, "%.*s", (int)(colon - start), start);
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
        answers = poll(&wait, 1, HF_PEER_PROBE_MS) == 1 &&
                  getsockopt(socket_fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
                  error == 0;
    }
    close(socket_fd);
    return answers;
}
