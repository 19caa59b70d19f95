/* Injected storage faults (see fault.h): writes and syncs counted, and failed from the chosen
 * one on. A failure is sticky, like a disk that has gone bad: the store must not be able to
 * "retry its way" past it. */
#include "store/fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"

/* A longer injected delay would only make a test look hung. */
#define SYNC_DELAY_MS_MAX 10000u

typedef struct fault_state {
    uint64_t fail_write; /* 0: never */
    uint64_t fail_sync;
    uint64_t sync_delay_ms; /* 0: none */
    uint64_t fail_batch;    /* 0: none */
    uint64_t pages_max;     /* 0: no limit */
    uint64_t writes;
    /* Counted by SQLite's syncs and by the log syncer's, on the store's threads. */
    atomic_uint_fast64_t syncs;
    atomic_int armed;
} fault_state_t;

static fault_state_t state;

bool hf_store_fault_write_fails(void) {
    return atomic_load(&state.armed) && state.fail_write && ++state.writes >= state.fail_write;
}

void hf_store_fault_sync_delay(void) {
    if (!atomic_load(&state.armed) || state.sync_delay_ms == 0) return;
    struct timespec pause = {(time_t)(state.sync_delay_ms / 1000),
                             (long)(state.sync_delay_ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
}

bool hf_store_fault_sync_fails(void) {
    return atomic_load(&state.armed) && state.fail_sync &&
           atomic_fetch_add(&state.syncs, 1) + 1 >= state.fail_sync;
}

uint64_t hf_store_fault_batch_to_fail(void) { return state.fail_batch; }

uint64_t hf_store_fault_pages_max(void) { return state.pages_max; }

static uint64_t environment_count(const char *name) {
    const char *value = getenv(name);
    return value && *value ? strtoull(value, NULL, 10) : 0;
}

#ifdef HF_STORE_CEILING
/* Read once per store open, before the store's threads exist; only read after that. */
static bool ceiling_no_sync;
static bool ceiling_no_sql;

bool hf_store_ceiling_skips_sync(void) { return ceiling_no_sync; }
bool hf_store_ceiling_skips_sql(void) { return ceiling_no_sql; }

static void ceiling_configure(void) {
    const char *mode = getenv("HOLDFAST_CEILING");
    if (mode == NULL) mode = "";
    ceiling_no_sync = strcmp(mode, "no-sync") == 0 || strcmp(mode, "neither") == 0;
    ceiling_no_sql = strcmp(mode, "no-sql") == 0 || strcmp(mode, "neither") == 0;
    if (*mode != '\0' && !ceiling_no_sync && !ceiling_no_sql)
        hf_log(HF_LOG_WARNING,
               "ceiling build: HOLDFAST_CEILING=%s is not no-sync, no-sql or "
               "neither; the store runs as shipped",
               mode);
    if (ceiling_no_sync || ceiling_no_sql)
        hf_log(HF_LOG_WARNING,
               "ceiling build with HOLDFAST_CEILING=%s: answers are NOT "
               "durable (benchmarks only)",
               mode);
}
#endif

bool hf_store_fault_configure(void) {
#ifdef HF_STORE_CEILING
    ceiling_configure();
#endif
    uint64_t delay_ms = environment_count("HOLDFAST_FAULT_SYNC_DELAY_MS");
    /* The delay needs no VFS: only the log syncer's own fdatasync waits. */
    state.sync_delay_ms = delay_ms < SYNC_DELAY_MS_MAX ? delay_ms : SYNC_DELAY_MS_MAX;
    /* The log syncer asks hf_store_fault_sync_fails whatever flavour the store opened with, so
     * counts and limits are set (or cleared) here every time. */
    state.fail_write = environment_count("HOLDFAST_FAULT_FAIL_WRITE");
    state.fail_sync = environment_count("HOLDFAST_FAULT_FAIL_SYNC");
    state.writes = 0;
    state.fail_batch = environment_count("HOLDFAST_FAULT_FAIL_BATCH");
    state.pages_max = environment_count("HOLDFAST_FAULT_MAX_PAGES");
    atomic_store(&state.syncs, 0);
    atomic_store(&state.armed, 0);
    return state.fail_write || state.fail_sync;
}

bool hf_store_fault_injects_io(void) { return state.fail_write || state.fail_sync; }

void hf_store_fault_arm(void) { atomic_store(&state.armed, 1); }
