/* The command line of `holdfast` (API.md section 0): the command, the options written
 * `--name value` or `--name=value`, and the environment variables they fall back on. Every
 * value is checked here, before anything starts, so that a refused one exits 2 with one line
 * on standard error naming it; what only the start can tell (the data directory in use, a
 * host name that does not resolve) is refused later, through the log, with exit 1. */
#ifndef HF_CMD_OPTIONS_H
#define HF_CMD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/limits.h"
#include "lib/log.h"

/* A host name is at most 253 bytes (DNS); an IPv6 literal is far shorter. */
#define HF_COMMAND_HOST_SIZE_MAX 253
/* --data: the lock file's and the store's paths are made by appending to it. */
#define HF_COMMAND_DATA_SIZE_MAX 4000
/* The store URL: --store, or sqlite:DATA/holdfast.db made from --data. */
#define HF_COMMAND_STORE_SIZE_MAX (HF_COMMAND_DATA_SIZE_MAX + 64)

typedef enum hf_command {
    HF_COMMAND_SERVE,   /* the options are complete and checked */
    HF_COMMAND_VERSION, /* --version */
    HF_COMMAND_HELP,    /* --help or -h */
    HF_COMMAND_REFUSED, /* the line on standard error says why: exit 2 */
} hf_command_t;

typedef struct hf_command_line {
    char host[HF_COMMAND_HOST_SIZE_MAX + 1];
    int port;
    const char *data_directory;
    char store_url[HF_COMMAND_STORE_SIZE_MAX + 1];
    const char *api_key; /* NULL: no authentication */
    const char *token_secret;
    const char *user_token_secret; /* --user-token-secret; NULL: no user tokens */
    const char *webhook_secret;
    /* --notify-url (NULL: none sent), --notify-secret, --notify-ca, --notify-backlog-max. */
    const char *notify_url, *notify_secret, *notify_ca;
    uint32_t notify_backlog_max;
    uint32_t finished_holds_max;
    uint32_t finished_rides_max; /* --finished-rides */
    bool demo;
    hf_log_level_t log_level; /* --log-level, HF_LOG_INFO by default */
    bool access_log;          /* --access-log: one line per request */
    /* --node-id and --advertise (API.md section 11), defaults filled in. */
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    char advertise[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    /* Copies of the origins (an environment variable is split at its commas), and the list
     * the engine is given, pointing into them. */
    char cors_origin_text[HF_CORS_ORIGINS_MAX][HF_CORS_ORIGIN_SIZE_MAX + 1];
    const char *cors_origins[HF_CORS_ORIGINS_MAX];
    uint32_t cors_origin_count;
} hf_command_line_t;

/* Reads argv and the environment into line. HF_COMMAND_REFUSED after writing one line to
 * standard error; line is complete only for HF_COMMAND_SERVE. */
hf_command_t hf_command_line_parse(int argc, char **argv, hf_command_line_t *line);

/* The usage text of `holdfast serve --help`. */
void hf_command_line_usage(FILE *out);

#endif
