/* Growable buffer (see buffer.h). */
#include "lib/buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hf_buffer_init(hf_buffer_t *buffer) { memset(buffer, 0, sizeof *buffer); }

void hf_buffer_free(hf_buffer_t *buffer) {
    free(buffer->data);
    memset(buffer, 0, sizeof *buffer);
}

void hf_buffer_reset(hf_buffer_t *buffer) {
    buffer->length = 0;
    if (buffer->data) buffer->data[0] = '\0';
}

void hf_buffer_grow(hf_buffer_t *buffer, size_t needed) {
    if (needed <= buffer->capacity) return;
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity < needed) capacity *= 2;
    char *data = realloc(buffer->data, capacity);
    if (!data) abort(); /* see buffer.h: out of memory is not recoverable here */
    buffer->data = data;
    buffer->capacity = capacity;
}

void hf_buffer_append_string(hf_buffer_t *buffer, const char *text) {
    hf_buffer_append(buffer, text, strlen(text));
}

void hf_buffer_printf(hf_buffer_t *buffer, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    va_list copy;
    va_copy(copy, arguments);
    int length = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (length > 0) {
        hf_buffer_reserve(buffer, (size_t)length);
        vsnprintf(buffer->data + buffer->length, (size_t)length + 1, format, arguments);
        buffer->length += (size_t)length;
    }
    va_end(arguments);
}
