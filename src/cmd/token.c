/* holdfast token mint --user U --ttl S (API.md section 16): a user token for the platform's
 * scripts and for tests, signed with the user token secret the server is given
 * (--user-token-secret or HOLDFAST_USER_TOKEN_SECRET), valid from now for S seconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/commands.h"
#include "engine/token.h"

#define TOKEN_USAGE \
    "usage: holdfast token mint --user U --ttl S [--user-token-secret S]\n" \
    "Prints a user token (JWT HS256, API.md section 16) for user U, valid S seconds (1 to\n" \
    "86400) from now, signed with the secret the server is given: --user-token-secret S, or\n" \
    "the environment variable HOLDFAST_USER_TOKEN_SECRET (16 to 1024 bytes). The token\n" \
    "acts as U on the buyer's routes: pass it as Authorization: Bearer TOKEN.\n" \
    "Exit codes: 0 printed, 1 failure, 2 usage.\n"

/* S of --ttl: whole seconds, 1 to HF_USER_TOKEN_LIFETIME_S_MAX; -1 otherwise. */
static long ttl_read(const char *text) {
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end || value < 1 || value > HF_USER_TOKEN_LIFETIME_S_MAX) return -1;
    return value;
}

/* Checks the options read; HF_EXIT_OK, or HF_EXIT_USAGE after saying which is wrong. */
static int mint_options_check(const hf_argument_t *options, long *ttl_s, size_t *secret_size) {
    const char *user = options[0].value, *ttl = options[1].value, *secret = options[2].value;
    if (!user || !*user || strlen(user) > HF_USER_ID_SIZE_MAX)
        return hf_command_fail(HF_EXIT_USAGE, "token mint", "--user: a user id of 1 to %d bytes",
                               HF_USER_ID_SIZE_MAX);
    *ttl_s = ttl ? ttl_read(ttl) : -1;
    if (*ttl_s < 0)
        return hf_command_fail(HF_EXIT_USAGE, "token mint", "--ttl: whole seconds, 1 to %d",
                               HF_USER_TOKEN_LIFETIME_S_MAX);
    *secret_size = secret ? strlen(secret) : 0;
    if (*secret_size < HF_TOKEN_SECRET_SIZE_MIN || *secret_size > HF_TOKEN_SECRET_SIZE_MAX)
        return hf_command_fail(HF_EXIT_USAGE, "token mint",
                               "--user-token-secret (or HOLDFAST_USER_TOKEN_SECRET): %d to %d "
                               "bytes are needed, %zu given",
                               HF_TOKEN_SECRET_SIZE_MIN, HF_TOKEN_SECRET_SIZE_MAX, *secret_size);
    return HF_EXIT_OK;
}

static int mint(int argc, char **argv) {
    hf_argument_t options[] = {{"--user", NULL, false, NULL},
                               {"--ttl", NULL, false, NULL},
                               {"--user-token-secret", "HOLDFAST_USER_TOKEN_SECRET", false, NULL}};
    switch (hf_arguments_read("token mint", argc, argv, 2, options, 3, NULL, 0, NULL)) {
    case HF_ARGUMENTS_HELP: return hf_command_usage(TOKEN_USAGE);
    case HF_ARGUMENTS_REFUSED: return HF_EXIT_USAGE;
    case HF_ARGUMENTS_OK: break;
    }
    long ttl_s = 0;
    size_t secret_size = 0;
    int refused = mint_options_check(options, &ttl_s, &secret_size);
    if (refused) return refused;
    static hf_token_secret_t secret;
    memcpy(secret.bytes, options[2].value, secret_size);
    secret.size = secret_size;
    int64_t now_s = (int64_t)time(NULL);
    char token[HF_USER_TOKEN_SIZE_MAX + 1];
    if (!hf_user_token_sign(&secret, options[0].value, now_s, now_s + ttl_s, token, sizeof token))
        return hf_command_fail(HF_EXIT_USAGE, "token mint", "--user: not a user id of UTF-8");
    printf("%s\n", token);
    return fflush(stdout) == 0 && !ferror(stdout) ? HF_EXIT_OK : HF_EXIT_FAILURE;
}

int hf_command_token(int argc, char **argv) {
    const char *action = argc > 1 ? argv[1] : NULL;
    if (action && (strcmp(action, "--help") == 0 || strcmp(action, "-h") == 0))
        return hf_command_usage(TOKEN_USAGE);
    if (!action || strcmp(action, "mint") != 0)
        return hf_command_fail(HF_EXIT_USAGE, "token", "%s (the action is mint --user U --ttl S)",
                               action ? "unknown action" : "no action given");
    return mint(argc, argv);
}
