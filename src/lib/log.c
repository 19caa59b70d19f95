/* The server's log (lib/log.h). */
#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "lib/clock.h"
#include "lib/json.h"

static const char *const LEVEL_NAMES[] = {"error", "warning", "info"};

void hf_log(hf_log_level_t level, const char *format, ...) {
    char text[HF_LOG_LINE_SIZE_MAX];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    char stamp[32];
    hf_format_time(hf_clock_wall_ms(), stamp);
    fprintf(stderr, "%s holdfast %s: %s\n", stamp, LEVEL_NAMES[level], text);
}
