/* The server's log: one JSON object per line on standard error, {"ts": RFC 3339 UTC with
 * milliseconds, "level": "error" | "warn" | "info" | "debug", "msg": text, and fields}, so
 * that journald, Loki or jq read it without a parser of our own. Every part of the server logs
 * through here (start-up refusals included), so that the format, the level in force and the
 * redaction are decided in one place.
 *
 * Redaction is the last line of defence, applied to the message and every field: the
 * registered secrets (API key, webhook and token secrets), any "Bearer ..." value, any
 * "access_token=..." value of a URL, any JWT (eyJ... in three dotted parts) and any
 * card-like run of 13 to 19 digits (spaces or dashes between them allowed) become
 * "[redacted]". Callers should still not pass secrets; this catches the ones that slip through.
 *
 * Thread-safe: a line is formatted on the caller's stack and written with one call, which the
 * C library locks around. The level and the secrets are set before any thread starts. */
#ifndef HF_LOG_H
#define HF_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hf_log_level {
    HF_LOG_ERROR,
    HF_LOG_WARNING,
    HF_LOG_INFO,
    HF_LOG_DEBUG,
} hf_log_level_t;

/* One line: long enough for a message with a path and an SQLite error plus a few fields, short
 * enough for a stack buffer. A longer line is cut inside a value and still closes as valid JSON
 * (with "truncated": true). Here rather than in lib/limits.h: lib/ stands below the core and
 * includes nothing above it. */
#define HF_LOG_LINE_SIZE_MAX 2048
/* Secrets the logger redacts: the API key, the webhook secret and the token secret, with room
 * to spare for one more. */
#define HF_LOG_SECRETS_MAX 8

/* A structured field: a key and either a text or a number. Write them with the macros. */
typedef struct hf_log_field {
    const char *key;
    const char *text; /* NULL: the number is the value */
    int64_t number;
} hf_log_field_t;

static inline hf_log_field_t hf_log_text(const char *key, const char *value) {
    return (hf_log_field_t){key, value ? value : "", 0};
}
#define HF_LOG_TEXT(key, value) hf_log_text((key), (value))
#define HF_LOG_NUMBER(key, value) ((hf_log_field_t){(key), NULL, (int64_t)(value)})

/* Messages above this level are dropped; HF_LOG_INFO by default. */
void hf_log_level_set(hf_log_level_t level);
/* Whether a message of this level would be written: a caller skips the work of one that
 * would not. */
bool hf_log_enabled(hf_log_level_t level);
/* "error", "warn", "info" or "debug" to its level; false for anything else. */
bool hf_log_level_parse(const char *text, hf_log_level_t *level);
/* Registers a secret to redact from every later line (copied; NULL and "" ignored). */
void hf_log_secret_add(const char *secret);

/* A line whose message is formatted like printf. */
void hf_log(hf_log_level_t level, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* A line with a fixed message and count fields, in order: use HF_LOG_FIELDS. */
void hf_log_fields(hf_log_level_t level, const char *message, size_t count,
                   const hf_log_field_t *fields);
/* HF_LOG_FIELDS(HF_LOG_INFO, "started", HF_LOG_TEXT("listen", address), HF_LOG_NUMBER(...)):
 * at least one field. */
#define HF_LOG_FIELDS(level, message, ...) \
    hf_log_fields((level), (message), \
                  sizeof((hf_log_field_t[]){__VA_ARGS__}) / sizeof(hf_log_field_t), \
                  (hf_log_field_t[]){__VA_ARGS__})

/* Writes text (length bytes) into out (size bytes, NUL-terminated) with every secret, bearer
 * value and card-like number replaced by "[redacted]": what the log does to each value, open
 * for the unit test. Returns the length written. */
size_t hf_log_redact(const char *text, size_t length, char *out, size_t size);

#endif
