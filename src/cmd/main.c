/* holdfast serve --listen HOST:PORT --data DIR [options]: the process. The options are read and
 * checked in options.c; here the listening address is bound, then the data directory is made
 * and locked, and the engine runs. The other commands each live in a file of their own
 * (commands.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/history.h"
#include "api/routes.h"
#include "cluster/cluster.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/token_secret.h"
#include "cmd/version.h"
#include "engine/engine.h"
#include "lib/log.h"
#include "net/http.h"

/* One server per data directory: an exclusive lock held for the life of the process. */
static int lock_data_directory(const char *directory) {
    if (mkdir(directory, 0755) != 0 && errno != EEXIST) {
        HF_LOG_FIELDS(HF_LOG_ERROR, "start refused: cannot create the data directory",
                      HF_LOG_TEXT("data", directory), HF_LOG_TEXT("error", strerror(errno)));
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/holdfast.lock", directory);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        HF_LOG_FIELDS(HF_LOG_ERROR, "start refused: cannot open the lock file",
                      HF_LOG_TEXT("path", path), HF_LOG_TEXT("error", strerror(errno)));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        hf_log(HF_LOG_ERROR,
               "start refused: the data directory %s is in use by another holdfast "
               "server (lock %s); stop it first",
               directory, path);
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

/* The bytes of --user-token-secret (options.c checked their length), empty when none. Static:
 * the engine keeps a pointer to it for its whole life. */
static const hf_token_secret_t *user_token_secret(const hf_command_line_t *line) {
    static hf_token_secret_t secret;
    secret.size = line->user_token_secret ? strlen(line->user_token_secret) : 0;
    memcpy(secret.bytes, line->user_token_secret ? line->user_token_secret : "", secret.size);
    return &secret;
}

/* The level in force, and every secret the log must never show. */
static void log_setup(const hf_command_line_t *line) {
    hf_log_level_set(line->log_level);
    hf_log_secret_add(line->api_key);
    hf_log_secret_add(line->token_secret);
    hf_log_secret_add(line->user_token_secret);
    hf_log_secret_add(line->webhook_secret);
    hf_log_secret_add(line->notify_secret);
}

/* The notifications' options (API.md section 15), with the history's entries as their data. */
static hf_outbox_config_t notify_config(const hf_command_line_t *line) {
    return (hf_outbox_config_t){.url = line->notify_url,
                                .secret = line->notify_secret,
                                .ca_file = line->notify_ca,
                                .backlog_max = line->notify_backlog_max,
                                .entry_write = hf_history_entry_write};
}

/* Runs the server until a signal stops it; the process's exit code. */
static int serve(const hf_command_line_t *line) {
    log_setup(line);
    /* The address first: a start that cannot listen (a port in use) creates nothing, neither
     * the data directory nor the store nor the secret. */
    int bound_socket;
    char error[256];
    if (hf_http_bind(uv_default_loop(), line->host, line->port, &bound_socket, error,
                     sizeof error) != 0) {
        HF_LOG_FIELDS(HF_LOG_ERROR, "start refused: cannot listen", HF_LOG_TEXT("error", error));
        return 1;
    }
    int lock = lock_data_directory(line->data_directory);
    /* Static: the engine keeps a pointer to it for its whole life. */
    static hf_token_secret_t token_secret;
    if (lock < 0 || !hf_token_secret_load(line->token_secret, line->data_directory, line->store_url,
                                          &token_secret)) {
        close(bound_socket);
        if (lock >= 0) close(lock);
        return 1;
    }
    raise_descriptor_limit();
    signal(SIGPIPE, SIG_IGN);
    hf_engine_options_t options = {.host = line->host,
                                   .port = line->port,
                                   .store_url = line->store_url,
                                   .api_key = line->api_key,
                                   .webhook_secret = line->webhook_secret,
                                   .demo = line->demo,
                                   .finished_holds_max = line->finished_holds_max,
                                   .finished_rides_max = line->finished_rides_max,
                                   .cors_origins = line->cors_origins,
                                   .cors_origin_count = line->cors_origin_count,
                                   .version = HF_VERSION,
                                   .access_log = line->access_log,
                                   .progress = isatty(STDERR_FILENO) == 1,
                                   .token_secret = &token_secret,
                                   .user_token_secret = user_token_secret(line),
                                   .node_id = line->node_id,
                                   .advertise = line->advertise,
                                   .bound = true,
                                   .bound_socket = bound_socket,
                                   /* The rooms above the engine (engine.h). */
                                   .dispatch = hf_routes_dispatch,
                                   .resume = hf_routes_resume,
                                   .routes = hf_routes_known,
                                   .units = &hf_cluster_units,
                                   .notify = notify_config(line)};
    hf_engine_t *engine = hf_engine_create(uv_default_loop(), &options);
    if (!engine) {
        hf_log(HF_LOG_ERROR, "start refused");
        close(lock);
        return 1;
    }
    int code = hf_engine_run(engine);
    hf_engine_destroy(engine);
    uv_loop_close(uv_default_loop());
    close(lock);
    return code;
}

/* What is printed on standard output must get there: `holdfast --version > /dev/full` fails. */
static int printed(void) { return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1; }

int main(int argc, char **argv) {
    /* Static: the origins' copies make it a few kilobytes. */
    static hf_command_line_t line;
    int code;
    if (hf_command_run(argc, argv, &code)) return code;
    switch (hf_command_line_parse(argc, argv, &line)) {
    case HF_COMMAND_VERSION: printf("holdfast %s\n", HF_VERSION); return printed();
    case HF_COMMAND_HELP: hf_command_line_usage(stdout); return printed();
    case HF_COMMAND_REFUSED: return 2;
    case HF_COMMAND_SERVE: break;
    }
    return serve(&line);
}
