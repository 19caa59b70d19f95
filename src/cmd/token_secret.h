/* The admission tokens' secret (engine/token.h) at start: the bytes of --token-secret when it
 * is given (options.c checked its length), otherwise a random secret made once and kept, so
 * tokens handed out before a restart stay good after it. With the SQLite store it is kept in
 * the data directory, file token_secret: 32 random bytes (OpenSSL's RAND_bytes) as 64 hex
 * digits and a newline, mode 0600, written to a temporary file, synced, renamed into place
 * and the directory synced, so a crash leaves either no file or a whole one.
 *
 * Ownership: the caller owns the secret it is given; nothing is kept here. The secret is
 * never logged. Called once at start, on the main thread, with the data directory locked. */
#ifndef HF_CMD_TOKEN_SECRET_H
#define HF_CMD_TOKEN_SECRET_H

#include <stdbool.h>

#include "engine/token.h"

/* The file's name in the data directory. */
#define HF_TOKEN_SECRET_FILE "token_secret"

/* Fills secret from given (NULL: not given) or from where the generated secret is kept;
 * false after logging why (the kept secret is damaged or cannot be read or written): the
 * server must not start, exit 1. */
bool hf_token_secret_load(const char *given, const char *data_directory,
                          hf_token_secret_t *secret);

#endif
