/* A growable byte buffer: what every answer, record and log line is written into. */
#ifndef HF_BUFFER_H
#define HF_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct hf_buffer {
    char *data; /* owned; NUL-terminated whenever length < capacity */
    size_t length;
    size_t capacity;
} hf_buffer_t;

/* A zeroed hf_buffer_t is a valid empty buffer. Allocation failure aborts: the server cannot
 * answer anything sensible without memory, and every buffer it builds is bounded by limits.h. */
void hf_buffer_init(hf_buffer_t *buffer);
void hf_buffer_free(hf_buffer_t *buffer);
void hf_buffer_reset(hf_buffer_t *buffer); /* length 0, keeps the memory */
/* Makes room for at least needed bytes in all (the slow path of hf_buffer_reserve). */
void hf_buffer_grow(hf_buffer_t *buffer, size_t needed);

/* The appends run for every byte of every answer, so their common case is inline: a length
 * check and a copy, with the growth out of line. */
static inline void hf_buffer_reserve(hf_buffer_t *buffer, size_t extra) {
    size_t needed = buffer->length + extra + 1; /* room for the terminating NUL */
    if (needed > buffer->capacity) hf_buffer_grow(buffer, needed);
}

static inline void hf_buffer_append(hf_buffer_t *buffer, const void *data, size_t length) {
    hf_buffer_reserve(buffer, length);
    if (length) memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    buffer->data[buffer->length] = '\0';
}

static inline void hf_buffer_append_char(hf_buffer_t *buffer, char c) {
    hf_buffer_reserve(buffer, 1);
    buffer->data[buffer->length++] = c;
    buffer->data[buffer->length] = '\0';
}

/* Writes value in decimal at out (room for 10 digits); returns the digits written. snprintf
 * was a third of a hold's cost: seat ids are formatted for every seat change. */
static inline size_t hf_decimal_write(char *out, uint32_t value) {
    char digits[10];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < count; i++) out[i] = digits[count - 1 - i];
    return count;
}

void hf_buffer_append_string(hf_buffer_t *buffer, const char *text);
/* Appends a string literal: its length is known at compile time, so the copy is inline. */
#define HF_BUFFER_APPEND_LITERAL(buffer, literal) \
    hf_buffer_append((buffer), "" literal, sizeof(literal) - 1)
void hf_buffer_printf(hf_buffer_t *buffer, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif
