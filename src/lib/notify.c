/* sd_notify's datagram (lib/notify.h). */
#include "lib/notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"

void hf_notify(const char *state) {
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path) return;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || length >= sizeof address.sun_path) {
        HF_LOG_FIELDS(HF_LOG_WARNING, "NOTIFY_SOCKET is not a socket path or @name",
                      HF_LOG_TEXT("notify_socket", path));
        return;
    }
    memcpy(address.sun_path, path, length);
    /* An abstract socket's name begins with a NUL byte and is not NUL-terminated: its length
     * is the address's. */
    if (path[0] == '@') address.sun_path[0] = '\0';
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length +
                                 (path[0] == '/' ? 1 : 0));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ssize_t sent = fd < 0 ? -1
                          : sendto(fd, state, strlen(state), MSG_NOSIGNAL,
                                   (const struct sockaddr *)&address, size);
    int error = errno;
    if (fd >= 0) close(fd);
    if (sent < 0)
        HF_LOG_FIELDS(HF_LOG_DEBUG, "cannot notify the service manager",
                      HF_LOG_TEXT("state", state), HF_LOG_TEXT("error", strerror(error)));
    else HF_LOG_FIELDS(HF_LOG_DEBUG, "notified the service manager", HF_LOG_TEXT("state", state));
}
