/* A job's progress on a terminal (lib/progress.h). */
#include "lib/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"

void hf_progress_begin(hf_progress_t *progress, const char *what, bool enabled) {
    memset(progress, 0, sizeof *progress);
    progress->what = what;
    progress->enabled = enabled;
    progress->started_s = hf_clock_monotonic_seconds();
    progress->delay_s = HF_PROGRESS_DELAY_MS / 1000.0;
    const char *text = enabled ? getenv("HOLDFAST_PROGRESS_DELAY_MS") : NULL;
    char *end = NULL;
    long delay_ms = text && *text ? strtol(text, &end, 10) : -1;
    if (end && *end == '\0' && delay_ms >= 0 && delay_ms <= 60000)
        progress->delay_s = (double)delay_ms / 1000.0;
}

void hf_progress_total(hf_progress_t *progress, uint64_t total) { progress->total = total; }

static void show(hf_progress_t *progress) {
    double now = hf_clock_monotonic_seconds();
    if (now - progress->started_s < progress->delay_s ||
        now - progress->shown_s < HF_PROGRESS_INTERVAL_MS / 1000.0)
        return;
    progress->shown_s = now;
    progress->shown = true;
    char line[160];
    int length;
    if (progress->total > 0)
        length = snprintf(line, sizeof line, "\r%s: %" PRIu64 " of %" PRIu64 " (%d%%)\033[K",
                          progress->what, progress->done, progress->total,
                          (int)(progress->done * 100 / progress->total));
    else
        length = snprintf(line, sizeof line, "\r%s: %" PRIu64 "\033[K", progress->what,
                          progress->done);
    if (length > 0 && write(STDERR_FILENO, line, (size_t)length) < 0) progress->enabled = false;
}

void hf_progress_add(hf_progress_t *progress, uint64_t count) {
    uint64_t before = progress->done;
    progress->done += count;
    if (progress->enabled && (before >> 10) != (progress->done >> 10)) show(progress);
}

void hf_progress_set(hf_progress_t *progress, uint64_t done, uint64_t total) {
    progress->done = done;
    progress->total = total;
    if (progress->enabled) show(progress);
}

void hf_progress_end(hf_progress_t *progress) {
    if (!progress->shown) return;
    static const char erase[] = "\r\033[K";
    if (write(STDERR_FILENO, erase, sizeof erase - 1) < 0) {
        /* The terminal is gone: nothing to erase. */
    }
    progress->shown = false;
}
