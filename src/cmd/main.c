/* holdfast serve --listen HOST:PORT --data DIR [options]: the command line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/limits.h"
#include "engine/engine.h"
#include "lib/log.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: holdfast serve --listen HOST:PORT --data DIR [options]\n"
            "  --api-key KEY         require Authorization: Bearer KEY on /v1/ [HOLDFAST_API_KEY]\n"
            "  --token-secret S      admission token secret [HOLDFAST_TOKEN_SECRET]\n"
            "  --webhook-secret S    payment webhook secret [HOLDFAST_WEBHOOK_SECRET]\n"
            "  --store URL           sqlite:PATH (default sqlite:DIR/holdfast.db) [HOLDFAST_STORE]\n"
            "  --finished-holds N    released and expired holds kept in memory, older ones are\n"
            "                        read back from the store (default %u) [HOLDFAST_FINISHED_HOLDS]\n"
            "  --demo                create the demo event when missing\n", HF_FINISHED_HOLDS_MAX);
}

typedef struct arguments {
    const char *listen, *data, *api_key, *token_secret, *webhook_secret, *store;
    const char *finished_holds;
    int demo;
} arguments_t;

static const char *environment(const char *name) {
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

static int parse_arguments(int argc, char **argv, arguments_t *arguments) {
    *arguments = (arguments_t){.api_key = environment("HOLDFAST_API_KEY"),
                               .token_secret = environment("HOLDFAST_TOKEN_SECRET"),
                               .webhook_secret = environment("HOLDFAST_WEBHOOK_SECRET"),
                               .store = environment("HOLDFAST_STORE"),
                               .finished_holds = environment("HOLDFAST_FINISHED_HOLDS")};
    if (argc < 2 || strcmp(argv[1], "serve") != 0) return -1;
    for (int i = 2; i < argc; i++) {
        const char **target = NULL;
        if (strcmp(argv[i], "--listen") == 0) target = &arguments->listen;
        else if (strcmp(argv[i], "--data") == 0) target = &arguments->data;
        else if (strcmp(argv[i], "--api-key") == 0) target = &arguments->api_key;
        else if (strcmp(argv[i], "--token-secret") == 0) target = &arguments->token_secret;
        else if (strcmp(argv[i], "--webhook-secret") == 0) target = &arguments->webhook_secret;
        else if (strcmp(argv[i], "--store") == 0) target = &arguments->store;
        else if (strcmp(argv[i], "--finished-holds") == 0) target = &arguments->finished_holds;
        else if (strcmp(argv[i], "--demo") == 0) { arguments->demo = 1; continue; }
        else return -1;
        if (i + 1 >= argc) return -1;
        *target = argv[++i];
    }
    return arguments->listen && arguments->data ? 0 : -1;
}

/* A count of at most HF_FINISHED_HOLDS_LIMIT; NULL means the default. */
static int parse_finished_holds(const char *text, uint32_t *count) {
    *count = HF_FINISHED_HOLDS_MAX;
    if (!text) return 0;
    char *rest;
    errno = 0;
    unsigned long long value = strtoull(text, &rest, 10);
    if (errno || rest == text || *rest || text[0] == '-' || value > HF_FINISHED_HOLDS_LIMIT) {
        fprintf(stderr, "holdfast: --finished-holds wants a count from 0 to %u, not \"%s\"\n",
                HF_FINISHED_HOLDS_LIMIT, text);
        return -1;
    }
    *count = (uint32_t)value;
    return 0;
}

/* HOST:PORT, with [::1]:PORT for IPv6. */
static int split_listen(const char *listen, char *host, size_t host_size, int *port) {
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen) return -1;
    const char *start = listen, *end = colon;
    if (*start == '[' && end[-1] == ']') { start++; end--; }
    if ((size_t)(end - start) >= host_size) return -1;
    memcpy(host, start, (size_t)(end - start));
    host[end - start] = '\0';
    char *rest;
    long value = strtol(colon + 1, &rest, 10);
    if (*rest || value < 0 || value > 65535) return -1;
    *port = (int)value;
    return 0;
}

/* One server per data directory: an exclusive lock held for the life of the process. */
static int lock_data_directory(const char *directory) {
    if (mkdir(directory, 0755) != 0 && errno != EEXIST) {
        hf_log(HF_LOG_ERROR, "cannot create the data directory %s: %s", directory, strerror(errno));
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/holdfast.lock", directory);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        hf_log(HF_LOG_ERROR, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        hf_log(HF_LOG_ERROR, "the data directory %s is in use by another holdfast server (lock %s); "
               "stop it first", directory, path);
        close(fd);
        return -1;
    }
    char pid[32];
    int length = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || write(fd, pid, (size_t)length) != length) {
        /* The pid is only a courtesy to operators; the lock is what matters. */
    }
    return fd;
}

/* Each connection is a descriptor: ask for as many as the hard limit allows. */
static void raise_descriptor_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
}

int main(int argc, char **argv) {
    arguments_t arguments;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    char host[256];
    int port;
    uint32_t finished_holds;
    if (parse_arguments(argc, argv, &arguments) != 0 ||
        split_listen(arguments.listen, host, sizeof host, &port) != 0) {
        usage(stderr);
        return 2;
    }
    if (parse_finished_holds(arguments.finished_holds, &finished_holds) != 0) return 2;
    int lock = lock_data_directory(arguments.data);
    if (lock < 0) return 1;
    char store[4200];
    if (arguments.store) snprintf(store, sizeof store, "%s", arguments.store);
    else snprintf(store, sizeof store, "sqlite:%s/holdfast.db", arguments.data);
    raise_descriptor_limit();
    signal(SIGPIPE, SIG_IGN);
    hf_engine_options_t options = {.host = host, .port = port, .data_directory = arguments.data,
                                   .store_url = store, .api_key = arguments.api_key,
                                   .demo = arguments.demo != 0,
                                   .finished_holds_max = finished_holds};
    hf_engine_t *engine = hf_engine_create(uv_default_loop(), &options);
    if (!engine) return 1;
    int code = hf_engine_run(engine);
    hf_engine_destroy(engine);
    uv_loop_close(uv_default_loop());
    close(lock);
    return code;
}
