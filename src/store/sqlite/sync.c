/* Syncing the write-ahead log on threads of its own (see sync.h). */
#include "store/sqlite/sync.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/limits.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "store/backend.h"
#include "store/fault.h"

#define ERROR_SIZE 512
/* More threads than this would only queue flushes behind each other (limits.h says how many
 * the store starts). */
#define SYNCER_THREADS_MAX 8

struct hf_syncer {
    int fd;
    void (*notify)(void *);
    void *context;

    /* Under mutex. written >= claimed >= durable, except that a sync may finish after a
     * later one: durable is the highest sequence any finished sync covered. */
    pthread_mutex_t mutex;
    pthread_cond_t progress; /* durable moved, or a sync failed */
    pthread_cond_t work;     /* written moved past claimed, or stopping */
    uint64_t written, claimed, durable;
    bool failed;
    bool stopping;
    char error[ERROR_SIZE];

    pthread_t threads[SYNCER_THREADS_MAX];
    int thread_count;
};

/* One fdatasync, or the injected failure of the fault seam. Returns 0 or an errno. */
static int sync_log(hf_syncer_t *syncer) {
    hf_store_fault_sync_delay();
    /* Before the fault seam: a sync that is skipped cannot fail (the test of the ceiling
     * build tells the two builds apart by that). */
    if (hf_store_ceiling_skips_sync()) return 0;
    if (hf_store_fault_sync_fails()) return EIO;
    return fdatasync(syncer->fd) == 0 ? 0 : errno;
}

/* One sync of what is written, unless it is covered already; true when it synced, with how
 * long the sync took in *seconds. */
static bool sync_written(hf_syncer_t *syncer, double *seconds) {
    pthread_mutex_lock(&syncer->mutex);
    if (syncer->failed || syncer->written == syncer->claimed) {
        pthread_mutex_unlock(&syncer->mutex);
        return false;
    }
    /* Claimed before the sync starts: every batch written by now is covered by it. */
    uint64_t target = syncer->written;
    syncer->claimed = target;
    pthread_mutex_unlock(&syncer->mutex);
    double start = hf_clock_monotonic_seconds();
    int result = sync_log(syncer);
    *seconds = hf_clock_monotonic_seconds() - start;
    pthread_mutex_lock(&syncer->mutex);
    if (result != 0 && !syncer->failed) {
        syncer->failed = true;
        hf_store_error_write(syncer->error, sizeof syncer->error,
                             "store: fdatasync of the write-ahead log failed: %s",
                             strerror(result));
    } else if (result == 0 && !syncer->failed && target > syncer->durable) {
        syncer->durable = target;
    }
    pthread_cond_broadcast(&syncer->progress);
    pthread_mutex_unlock(&syncer->mutex);
    return true;
}

/* A slow sync is logged after the engine was told, so its replies never wait for the log. */
void hf_syncer_sync(hf_syncer_t *syncer) {
    double seconds = 0;
    if (!sync_written(syncer, &seconds)) return;
    syncer->notify(syncer->context);
    if (seconds * 1000 >= HF_STORE_SLOW_BATCH_MS)
        HF_LOG_FIELDS(HF_LOG_WARNING, "slow batch", HF_LOG_TEXT("stage", "sync"),
                      HF_LOG_NUMBER("duration_ms", seconds * 1000),
                      HF_LOG_NUMBER("threshold_ms", HF_STORE_SLOW_BATCH_MS));
}

/* Waits for something written that no sync has claimed, syncs it, and again. The writer only
 * signals: it never waits for a sync, so the next batch is written while this one syncs. */
static void *sync_thread(void *argument) {
    hf_syncer_t *syncer = argument;
    pthread_setname_np(pthread_self(), "hf-sync"); /* for top -H, perf and gdb */
    pthread_mutex_lock(&syncer->mutex);
    for (;;) {
        while (!syncer->stopping && (syncer->failed || syncer->written == syncer->claimed))
            pthread_cond_wait(&syncer->work, &syncer->mutex);
        if (syncer->stopping) break;
        pthread_mutex_unlock(&syncer->mutex);
        hf_syncer_sync(syncer);
        pthread_mutex_lock(&syncer->mutex);
    }
    pthread_mutex_unlock(&syncer->mutex);
    return NULL;
}

int hf_syncer_start(hf_syncer_t *syncer, int thread_count, char *error, size_t error_size) {
    assert(syncer->thread_count == 0 && thread_count > 0 && thread_count <= SYNCER_THREADS_MAX);
    for (int i = 0; i < thread_count; i++) {
        int rc = pthread_create(&syncer->threads[i], NULL, sync_thread, syncer);
        if (rc != 0) {
            hf_store_error_write(error, error_size, "store: cannot start a syncer thread: %s",
                                 strerror(rc));
            return -1;
        }
        syncer->thread_count++;
    }
    return 0;
}

/* The log's name must survive a crash too: SQLite syncs the directory when it creates a
 * journal under synchronous=FULL, and under NORMAL that is now our job. */
static int sync_directory(const char *path, char *error, size_t error_size) {
    char copy[4096];
    if (strlen(path) >= sizeof copy) {
        hf_store_error_write(error, error_size, "store: path too long: %s", path);
        return -1;
    }
    strcpy(copy, path);
    const char *directory = dirname(copy);
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        hf_store_error_write(error, error_size, "store: cannot sync the directory %s: %s",
                             directory, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

hf_syncer_t *hf_syncer_open(const char *path, void (*notify)(void *), void *context, char *error,
                            size_t error_size) {
    hf_syncer_t *syncer = calloc(1, sizeof *syncer);
    if (!syncer) abort();
    syncer->notify = notify;
    syncer->context = context;
    pthread_mutex_init(&syncer->mutex, NULL);
    pthread_cond_init(&syncer->progress, NULL);
    pthread_cond_init(&syncer->work, NULL);
    /* Any descriptor of the file will do: fdatasync flushes the file, not the descriptor. */
    syncer->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (syncer->fd < 0) {
        hf_store_error_write(error, error_size, "store: cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    if (sync_directory(path, error, error_size) != 0) goto fail;
    return syncer;
fail:
    hf_syncer_close(syncer);
    return NULL;
}

void hf_syncer_written(hf_syncer_t *syncer, uint64_t sequence) {
    pthread_mutex_lock(&syncer->mutex);
    if (sequence > syncer->written) syncer->written = sequence;
    pthread_cond_signal(&syncer->work);
    pthread_mutex_unlock(&syncer->mutex);
}

bool hf_syncer_durable(hf_syncer_t *syncer, uint64_t *sequence, char *error, size_t error_size) {
    pthread_mutex_lock(&syncer->mutex);
    *sequence = syncer->durable;
    bool ok = !syncer->failed;
    if (!ok) hf_store_error_write(error, error_size, "%s", syncer->error);
    pthread_mutex_unlock(&syncer->mutex);
    return ok;
}

void hf_syncer_fail(hf_syncer_t *syncer, const char *error) {
    pthread_mutex_lock(&syncer->mutex);
    if (!syncer->failed) {
        syncer->failed = true;
        hf_store_error_write(syncer->error, sizeof syncer->error, "%s", error);
    }
    pthread_cond_broadcast(&syncer->progress);
    pthread_mutex_unlock(&syncer->mutex);
}

void hf_syncer_wait(hf_syncer_t *syncer) {
    pthread_mutex_lock(&syncer->mutex);
    while (!syncer->failed && syncer->durable < syncer->written)
        pthread_cond_wait(&syncer->progress, &syncer->mutex);
    pthread_mutex_unlock(&syncer->mutex);
}

void hf_syncer_close(hf_syncer_t *syncer) {
    if (syncer == NULL) return;
    pthread_mutex_lock(&syncer->mutex);
    syncer->stopping = true;
    pthread_cond_broadcast(&syncer->work);
    pthread_mutex_unlock(&syncer->mutex);
    for (int i = 0; i < syncer->thread_count; i++) pthread_join(syncer->threads[i], NULL);
    /* A batch written just before the stop may have found every thread busy. No notify:
     * whoever is closing is not waiting for it. */
    if (syncer->fd >= 0) {
        double seconds;
        sync_written(syncer, &seconds);
        close(syncer->fd);
    }
    pthread_cond_destroy(&syncer->progress);
    pthread_cond_destroy(&syncer->work);
    pthread_mutex_destroy(&syncer->mutex);
    free(syncer);
}
