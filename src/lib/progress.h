/* Progress of a long job (loading a large store, a backup, a check) on a terminal: one line on
 * standard error, rewritten in place ("\r") at most every HF_PROGRESS_INTERVAL_MS, shown only
 * once the job has run for HF_PROGRESS_DELAY_MS (a quick job prints nothing) and erased at
 * the end. When standard error is no terminal (a log file, journald) nothing is printed: the
 * caller passes enabled = isatty(2). */
#ifndef HF_PROGRESS_H
#define HF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* A human notices a wait after about half a second, and a line redrawn more often than ten
 * times a second is only flicker. The variable HOLDFAST_PROGRESS_DELAY_MS (milliseconds, 0 to
 * 60000) replaces the delay: 0 shows the progress of every job, which is how the tests see it
 * without a store large enough to be slow on any machine. */
#define HF_PROGRESS_DELAY_MS 500
#define HF_PROGRESS_INTERVAL_MS 100

typedef struct hf_progress {
    const char *what; /* "loading the store" */
    bool enabled;
    bool shown; /* a line is on the terminal, to erase at the end */
    uint64_t done;
    uint64_t total; /* 0: unknown, no percentage */
    double started_s;
    double shown_s;
    double delay_s; /* HF_PROGRESS_DELAY_MS, or HOLDFAST_PROGRESS_DELAY_MS */
} hf_progress_t;

void hf_progress_begin(hf_progress_t *progress, const char *what, bool enabled);
void hf_progress_total(hf_progress_t *progress, uint64_t total);
/* count more units done; cheap enough to call per row (the clock is read every 1024). */
void hf_progress_add(hf_progress_t *progress, uint64_t count);
/* Sets the units done (a backup's pages). */
void hf_progress_set(hf_progress_t *progress, uint64_t done, uint64_t total);
void hf_progress_end(hf_progress_t *progress);

#endif
