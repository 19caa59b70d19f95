/* The server's log (lib/log.h): JSON lines, the level in force, redaction. */
#include "lib/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/json.h"

static const char *const LEVEL_NAMES[] = {"error", "warn", "info", "debug"};
#define REDACTED "[redacted]"
/* A card number (PAN) has 13 to 19 digits: a run this long is taken for one. */
#define CARD_DIGITS_MIN 13
/* Room kept at the end of a line for closing it whatever was cut: "\",\"truncated\":true}\n". */
#define LINE_CLOSING_RESERVE 32

static hf_log_level_t level_in_force = HF_LOG_INFO;
static char *secrets[HF_LOG_SECRETS_MAX];
static size_t secret_lengths[HF_LOG_SECRETS_MAX];
static size_t secret_count;

void hf_log_level_set(hf_log_level_t level) { level_in_force = level; }

bool hf_log_enabled(hf_log_level_t level) { return level <= level_in_force; }

bool hf_log_level_parse(const char *text, hf_log_level_t *level) {
    for (int i = 0; i <= HF_LOG_DEBUG; i++)
        if (text && strcmp(text, LEVEL_NAMES[i]) == 0) {
            *level = (hf_log_level_t)i;
            return true;
        }
    return false;
}

void hf_log_secret_add(const char *secret) {
    if (!secret || !*secret || secret_count == HF_LOG_SECRETS_MAX) return;
    secrets[secret_count] = strdup(secret);
    if (!secrets[secret_count]) abort();
    secret_lengths[secret_count++] = strlen(secret);
}

/* ---- redaction ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Length of the secret registered that starts text at i, or 0. */
static size_t secret_at(const char *text, size_t length, size_t i) {
    for (size_t s = 0; s < secret_count; s++)
        if (secret_lengths[s] <= length - i && memcmp(text + i, secrets[s], secret_lengths[s]) == 0)
            return secret_lengths[s];
    return 0;
}

/* "Bearer" and the blanks after it at i: their length, or 0. */
static size_t bearer_at(const char *text, size_t length, size_t i) {
    if (length - i < 7 || strncasecmp(text + i, "bearer", 6) != 0) return 0;
    if (i > 0 && is_letter(text[i - 1])) return 0;
    size_t j = i + 6;
    if (text[j] != ' ' && text[j] != '\t') return 0;
    while (j < length && (text[j] == ' ' || text[j] == '\t')) j++;
    return j - i;
}

/* "access_token=" at i (a stream's credential in a URL, API.md section 1): its length, or
 * 0. */
static size_t access_token_at(const char *text, size_t length, size_t i) {
    static const char name[] = "access_token=";
    size_t name_length = sizeof name - 1;
    if (length - i < name_length || strncasecmp(text + i, name, name_length) != 0) return 0;
    return i > 0 && (is_letter(text[i - 1]) || text[i - 1] == '_') ? 0 : name_length;
}

static bool is_base64url(char c) { return is_letter(c) || is_digit(c) || c == '-' || c == '_'; }

/* The end of a JWT starting at i ("eyJ", the base64url of '{"', then three base64url parts
 * joined by dots: a user or admission token wherever it is quoted), or i when there is none. */
static size_t jwt_end(const char *text, size_t length, size_t i) {
    if (length - i < 3 || memcmp(text + i, "eyJ", 3) != 0 ||
        (i > 0 && (is_base64url(text[i - 1]) || text[i - 1] == '.')))
        return i;
    size_t j = i, dots = 0;
    for (; j < length && (is_base64url(text[j]) || text[j] == '.'); j++) dots += text[j] == '.';
    return dots == 2 ? j : i;
}

/* The end of a card-like number starting at i (digits, single spaces or dashes between them,
 * at least CARD_DIGITS_MIN digits, no letter touching either end), or i when there is none. A
 * run inside a word (a hex id) is not taken: its digits are part of something else. */
static size_t card_end(const char *text, size_t length, size_t i) {
    if (!is_digit(text[i]) || (i > 0 && (is_digit(text[i - 1]) || is_letter(text[i - 1]))))
        return i;
    size_t j = i, digits = 0;
    while (j < length) {
        if (is_digit(text[j])) {
            digits++;
            j++;
            continue;
        }
        if ((text[j] == ' ' || text[j] == '-') && j + 1 < length && is_digit(text[j + 1])) {
            j++;
            continue;
        }
        break;
    }
    if (digits < CARD_DIGITS_MIN || (j < length && is_letter(text[j]))) return i;
    return j;
}

/* The end of a JWT or a card-like number at i, or i: each is replaced by REDACTED alone. */
static size_t jwt_or_card_end(const char *text, size_t length, size_t i) {
    size_t end = jwt_end(text, length, i);
    return end > i ? end : card_end(text, length, i);
}

size_t hf_log_redact(const char *text, size_t length, char *out, size_t size) {
    size_t used = 0;
    for (size_t i = 0; i < length && used + 1 < size;) {
        size_t skip = secret_at(text, length, i), end;
        const char *replacement = REDACTED;
        if (skip == 0 && (skip = bearer_at(text, length, i)) != 0) {
            /* The token runs to the next blank, quote or comma. */
            while (i + skip < length && !strchr(" \t\"',;", text[i + skip])) skip++;
            replacement = "Bearer " REDACTED;
        } else if (skip == 0 && (skip = access_token_at(text, length, i)) != 0) {
            /* The value runs to the next parameter, blank or quote. */
            while (i + skip < length && !strchr(" \t\"'&#,;", text[i + skip])) skip++;
            replacement = "access_token=" REDACTED;
        } else if (skip == 0 && (end = jwt_or_card_end(text, length, i)) > i) {
            skip = end - i;
        }
        if (skip == 0) {
            out[used++] = text[i++];
            continue;
        }
        size_t n = strlen(replacement);
        if (used + n + 1 > size) break;
        memcpy(out + used, replacement, n);
        used += n;
        i += skip;
    }
    out[used] = '\0';
    return used;
}

/* ---- the line ---- */

typedef struct line {
    char data[HF_LOG_LINE_SIZE_MAX];
    size_t length;
    bool full; /* something was cut: nothing more goes in but the closing */
} line_t;

static void put(line_t *line, const char *bytes, size_t count) {
    if (line->full || line->length + count > sizeof line->data - LINE_CLOSING_RESERVE) {
        line->full = true;
        return;
    }
    memcpy(line->data + line->length, bytes, count);
    line->length += count;
}

/* Length of the valid UTF-8 sequence at text (of length bytes), or 0. */
static size_t utf8_length(const unsigned char *text, size_t length) {
    unsigned char c = text[0];
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || n > length) return 0;
    for (size_t k = 1; k < n; k++)
        if ((text[k] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((c == 0xe0 && text[1] < 0xa0) || (c == 0xed && text[1] >= 0xa0))) return 0;
    if (n == 4 && ((c == 0xf0 && text[1] < 0x90) || (c == 0xf4 && text[1] >= 0x90))) return 0;
    return n;
}

/* A JSON string of text: escaped, invalid UTF-8 as U+FFFD, cut (and closed) when full. */
static void put_string(line_t *line, const char *text, size_t length) {
    put(line, "\"", 1);
    const unsigned char *bytes = (const unsigned char *)text;
    for (size_t i = 0; i < length && !line->full;) {
        unsigned char c = bytes[i];
        char escape[8];
        if (c == '"' || c == '\\') {
            escape[0] = '\\', escape[1] = (char)c;
            put(line, escape, 2);
        } else if (c < 0x20 || c == 0x7f) {
            put(line, escape, (size_t)snprintf(escape, sizeof escape, "\\u%04x", c));
        } else if (c < 0x80) {
            put(line, (const char *)&c, 1);
        } else {
            size_t n = utf8_length(bytes + i, length - i);
            if (n == 0) put(line, "\\ufffd", 6);
            else put(line, text + i, n);
            i += n ? n : 1;
            continue;
        }
        i++;
    }
    /* The reserve always has room for the quote that closes the string. */
    line->data[line->length++] = '"';
}

static void put_redacted(line_t *line, const char *text) {
    char clean[HF_LOG_LINE_SIZE_MAX];
    size_t length = hf_log_redact(text, strlen(text), clean, sizeof clean);
    put_string(line, clean, length);
}

static size_t room(const line_t *line) {
    return sizeof line->data - LINE_CLOSING_RESERVE - line->length;
}

/* A field goes in only with room for its whole key and a number (a text may be cut), so that
 * a cut line never ends on a key without its value. */
static void put_field(line_t *line, const hf_log_field_t *field) {
    if (line->full || room(line) < strlen(field->key) * 6 + 32) {
        line->full = true;
        return;
    }
    put(line, ",", 1);
    put_string(line, field->key, strlen(field->key));
    put(line, ":", 1);
    if (field->text) {
        put_redacted(line, field->text);
        return;
    }
    char digits[32];
    int length = snprintf(digits, sizeof digits, "%" PRId64, field->number);
    /* A number as long as a card's is redacted like one, as a string. */
    if (length >= CARD_DIGITS_MIN + (field->number < 0)) put_redacted(line, digits);
    else put(line, digits, (size_t)length);
}

static void line_write(line_t *line) {
    const char *closing = line->full ? ",\"truncated\":true}\n" : "}\n";
    size_t n = strlen(closing);
    memcpy(line->data + line->length, closing, n);
    line->length += n;
    for (size_t done = 0; done < line->length;) {
        ssize_t written = write(STDERR_FILENO, line->data + done, line->length - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return; /* nowhere to say it */
        done += (size_t)written;
    }
}

void hf_log_fields(hf_log_level_t level, const char *message, size_t count,
                   const hf_log_field_t *fields) {
    if (!hf_log_enabled(level)) return;
    line_t line;
    line.length = 0;
    line.full = false;
    char stamp[32];
    hf_format_time(hf_clock_wall_ms(), stamp);
    put(&line, "{\"ts\":", 6);
    put_string(&line, stamp, strlen(stamp));
    put(&line, ",\"level\":", 9);
    put_string(&line, LEVEL_NAMES[level], strlen(LEVEL_NAMES[level]));
    put(&line, ",\"msg\":", 7);
    put_redacted(&line, message);
    for (size_t i = 0; i < count; i++) put_field(&line, &fields[i]);
    line_write(&line);
}

void hf_log(hf_log_level_t level, const char *format, ...) {
    if (!hf_log_enabled(level)) return;
    char text[HF_LOG_LINE_SIZE_MAX];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    hf_log_fields(level, text, 0, NULL);
}
