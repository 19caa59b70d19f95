/* The admission tokens' secret at start (token_secret.h). */
#include "cmd/token_secret.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "store/backend.h"
#include "store/store.h"

/* 64 hex digits and a newline. */
#define FILE_TEXT_SIZE (2 * HF_TOKEN_SECRET_SIZE + 1)
/* The data directory is at most HF_COMMAND_DATA_SIZE_MAX (4,000) bytes, and the names added
 * to it are short. */
#define PATH_SIZE_MAX 4096

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Exactly what secret_create writes: 64 lower-case hex digits, then a newline or nothing. */
static bool text_decode(const char *text, size_t length, hf_token_secret_t *secret) {
    if (length == FILE_TEXT_SIZE && text[length - 1] == '\n') length--;
    if (length != 2 * HF_TOKEN_SECRET_SIZE) return false;
    for (size_t i = 0; i < HF_TOKEN_SECRET_SIZE; i++) {
        int high = hex_value(text[2 * i]), low = hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        secret->bytes[i] = (unsigned char)(high << 4 | low);
    }
    secret->size = HF_TOKEN_SECRET_SIZE;
    return true;
}

/* 1: read; 0: there is no file; -1: it cannot be read or is damaged (logged). */
static int secret_read(const char *path, hf_token_secret_t *secret) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) return 0;
    if (fd < 0) {
        hf_log(HF_LOG_ERROR, "cannot open the token secret %s: %s", path, strerror(errno));
        return -1;
    }
    char text[FILE_TEXT_SIZE + 1];
    ssize_t length = read(fd, text, sizeof text);
    struct stat status;
    bool regular = fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
    close(fd);
    bool read_ok = length >= 0 && regular && text_decode(text, (size_t)length, secret);
    OPENSSL_cleanse(text, sizeof text);
    if (!read_ok) {
        hf_log(HF_LOG_ERROR,
               "the token secret %s is damaged (expected 64 hex digits): restore "
               "it, or delete it to make a new secret (admission tokens already handed out "
               "will then be refused)",
               path);
        return -1;
    }
    if (status.st_mode & 077)
        hf_log(HF_LOG_WARNING, "the token secret %s can be read by other users: chmod 600 it",
               path);
    return 1;
}

/* fsync of the directory, so a rename in it is durable. */
static bool directory_sync(const char *directory) {
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool synced = fd >= 0 && fsync(fd) == 0;
    if (fd >= 0) close(fd);
    return synced;
}

/* Writes all of text to a new file at path, mode 0600, and syncs it. */
static bool file_write(const char *path, const char *text, size_t length) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    /* A temporary file left by a crash may have had another mode. */
    bool written = fchmod(fd, 0600) == 0 && write(fd, text, length) == (ssize_t)length &&
                   fsync(fd) == 0;
    return close(fd) == 0 && written;
}

/* Makes a random secret and keeps it at path, atomically. */
static bool secret_create(const char *directory, const char *path, hf_token_secret_t *secret) {
    char temporary[PATH_SIZE_MAX + 8], text[FILE_TEXT_SIZE + 1];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    if (RAND_bytes(secret->bytes, HF_TOKEN_SECRET_SIZE) != 1) {
        hf_log(HF_LOG_ERROR, "cannot make a token secret: OpenSSL has no random bytes");
        return false;
    }
    secret->size = HF_TOKEN_SECRET_SIZE;
    for (size_t i = 0; i < HF_TOKEN_SECRET_SIZE; i++)
        snprintf(text + 2 * i, 3, "%02x", secret->bytes[i]);
    text[FILE_TEXT_SIZE - 1] = '\n';
    bool kept = file_write(temporary, text, FILE_TEXT_SIZE) && rename(temporary, path) == 0 &&
                directory_sync(directory);
    OPENSSL_cleanse(text, sizeof text);
    if (!kept) {
        hf_log(HF_LOG_ERROR, "cannot keep the token secret in %s: %s", path, strerror(errno));
        unlink(temporary);
        return false;
    }
    hf_log(HF_LOG_INFO, "made a token secret, kept in %s", path);
    return true;
}

/* The secret kept by a store that keeps settings: 1 (read or made), 0 (the store keeps none),
 * -1 (logged). A random proposal is made each time; the first one kept wins. */
static int secret_in_store(const char *store_url, hf_token_secret_t *secret) {
    char error[512] = "", proposed[FILE_TEXT_SIZE], value[FILE_TEXT_SIZE + 1];
    unsigned char bytes[HF_TOKEN_SECRET_SIZE];
    hf_store_t *store = NULL;
    bool kept = false;
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        hf_log(HF_LOG_ERROR, "cannot make a token secret: OpenSSL has no random bytes");
        return -1;
    }
    for (size_t i = 0; i < sizeof bytes; i++) snprintf(proposed + 2 * i, 3, "%02x", bytes[i]);
    int rc = hf_store_open(&store, store_url, error, sizeof error);
    if (rc == 0)
        rc = hf_store_setting_claim(store, HF_TOKEN_SECRET_FILE, proposed, value, sizeof value,
                                    &kept, error, sizeof error);
    hf_store_close(store);
    OPENSSL_cleanse(bytes, sizeof bytes);
    OPENSSL_cleanse(proposed, sizeof proposed);
    if (rc != 0) {
        hf_log(HF_LOG_ERROR, "cannot read the token secret from the store: %s", error);
        return -1;
    }
    bool decoded = kept && text_decode(value, strlen(value), secret);
    OPENSSL_cleanse(value, sizeof value);
    if (kept && !decoded) {
        hf_log(HF_LOG_ERROR, "the token secret kept in the store is damaged (expected 64 hex "
                             "digits)");
        return -1;
    }
    return kept ? 1 : 0;
}

/* Whether the store's backend keeps settings (PostgreSQL's does; SQLite's leaves
 * setting_claim NULL): only then is the store opened here, so a SQLite store is opened once,
 * by the engine. */
static bool store_keeps_settings(const char *store_url) {
    if (store_url == NULL) return false;
    const hf_store_backend_t *backend = hf_store_backend_find(store_url, NULL, 0);
    return backend != NULL && backend->setting_claim != NULL;
}

/* Where the generated secret is kept: the store when it keeps settings, else the data
 * directory. */
static bool secret_kept(const char *data_directory, const char *store_url,
                        hf_token_secret_t *secret) {
    int in_store = store_keeps_settings(store_url) ? secret_in_store(store_url, secret) : 0;
    if (in_store != 0) return in_store > 0;
    char path[PATH_SIZE_MAX];
    snprintf(path, sizeof path, "%s/%s", data_directory, HF_TOKEN_SECRET_FILE);
    int found = secret_read(path, secret);
    if (found != 0) return found > 0;
    return secret_create(data_directory, path, secret);
}

bool hf_token_secret_load(const char *given, const char *data_directory, const char *store_url,
                          hf_token_secret_t *secret) {
    memset(secret, 0, sizeof *secret);
    if (!given) return secret_kept(data_directory, store_url, secret);
    size_t length = strlen(given);
    if (length < HF_TOKEN_SECRET_SIZE_MIN || length > HF_TOKEN_SECRET_SIZE_MAX) {
        /* options.c refuses such a secret first; this guards other callers. */
        hf_log(HF_LOG_ERROR, "the token secret must be %d to %d bytes long",
               HF_TOKEN_SECRET_SIZE_MIN, HF_TOKEN_SECRET_SIZE_MAX);
        return false;
    }
    memcpy(secret->bytes, given, length);
    secret->size = length;
    return true;
}
