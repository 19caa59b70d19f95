/* The server's log: one line on standard error per message, with the time, the level and the
 * text. Every part of the server logs through here (start-up refusals included), so that the
 * format and the destination are decided in one place. Thread-safe: a line is written with one
 * call, and the C library locks the stream around it. */
#ifndef HF_LOG_H
#define HF_LOG_H

typedef enum hf_log_level {
    HF_LOG_ERROR,
    HF_LOG_WARNING,
    HF_LOG_INFO,
} hf_log_level_t;

/* One line's text: long enough for any message with a path and an SQLite error, short enough
 * for a stack buffer. Here rather than in core/limits.h: lib/ stands below the core and
 * includes nothing above it. */
#define HF_LOG_LINE_SIZE_MAX 1024

/* Writes "TIME holdfast LEVEL: TEXT". The text is formatted like printf and cut at
 * HF_LOG_LINE_SIZE_MAX bytes. */
void hf_log(hf_log_level_t level, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
