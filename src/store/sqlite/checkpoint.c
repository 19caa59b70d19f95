/* Background WAL checkpoints (see checkpoint.h). */
#include "store/sqlite/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"

struct hf_checkpointer {
    sqlite3 *writer;   /* borrowed: the store's connection */
    sqlite3 *database; /* our own connection */
    int database_file; /* the database file, to flush what a round copied; -1 if none */
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    bool wanted, stopping;
    bool running;                  /* a background round asked for and not yet done */
    int copied;                    /* log frames copied when the last background round ended */
    unsigned long long log_number; /* counts the log's restarts: a round's copied is for its log */
    /* The writer's thread alone: */
    int threshold;  /* log pages at which a cycle begins */
    int cycle_end;  /* log pages at which the writer ends the cycle whatever is left */
    int last_pages; /* the log after the last commit: a smaller one is a new log */
    bool cycle;     /* rounds are wanted until the log starts over */
    hf_checkpointer_counts_t counts; /* rounds under the mutex, the rest the writer's */
};

static void *checkpoint_thread(void *argument) {
    hf_checkpointer_t *checkpointer = argument;
    pthread_setname_np(pthread_self(), "hf-checkpoint"); /* for top -H, perf and gdb */
    pthread_mutex_lock(&checkpointer->mutex);
    for (;;) {
        while (!checkpointer->wanted && !checkpointer->stopping)
            pthread_cond_wait(&checkpointer->wake, &checkpointer->mutex);
        if (checkpointer->stopping) break;
        checkpointer->wanted = false;
        unsigned long long log_number = checkpointer->log_number;
        pthread_mutex_unlock(&checkpointer->mutex);
        int copied = 0;
        int rc = sqlite3_wal_checkpoint_v2(checkpointer->database, "main",
                                           SQLITE_CHECKPOINT_PASSIVE, NULL, &copied);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            hf_log(HF_LOG_WARNING, "store: background checkpoint failed: %s",
                   sqlite3_errmsg(checkpointer->database));
        /* SQLite syncs the database file only after a round that reached the end of the log,
         * which under load none does: the pages a round copied would wait, dirty, for the
         * writer's checkpoint that ends the cycle, whose sync then flushed them all (3.8-4.8
         * ms on average, up to 8.6, against 1.3 with this). Durability does not depend on
         * this sync (the log keeps the frames until a synced checkpoint lets it start over);
         * it only moves the flush off the writer. */
        if (copied > 0 && checkpointer->database_file >= 0 &&
            fdatasync(checkpointer->database_file) != 0)
            hf_log(HF_LOG_WARNING,
                   "store: background checkpoint: fdatasync of the database file: %s",
                   strerror(errno));
        pthread_mutex_lock(&checkpointer->mutex);
        if (log_number == checkpointer->log_number) checkpointer->copied = copied > 0 ? copied : 0;
        checkpointer->running = false;
        checkpointer->counts.rounds++;
    }
    pthread_mutex_unlock(&checkpointer->mutex);
    return NULL;
}

/* A checkpoint on the writer's own connection, right after its commit: nothing writes while
 * it copies, so it copies every frame, and the next transaction starts the log over. */
static void writer_checkpoint(hf_checkpointer_t *checkpointer, sqlite3 *writer, const char *name) {
    sqlite3_wal_checkpoint_v2(writer, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    checkpointer->counts.writer_rounds++;
    checkpointer->cycle = false;
}

/* Notes a log that started over since the last commit. */
static void note_log_size(hf_checkpointer_t *checkpointer, int pages) {
    if (pages < checkpointer->last_pages) {
        checkpointer->counts.restarts++;
        checkpointer->cycle = false;
        pthread_mutex_lock(&checkpointer->mutex);
        checkpointer->log_number++;
        checkpointer->copied = 0; /* frame numbers of the old log */
        pthread_mutex_unlock(&checkpointer->mutex);
    }
    checkpointer->last_pages = pages;
    if (pages > checkpointer->counts.pages_most) checkpointer->counts.pages_most = pages;
}

/* SQLite's WAL hook: runs on the writer's thread after each commit, with the log's size. */
static int on_commit(void *context, sqlite3 *writer, const char *name, int pages) {
    hf_checkpointer_t *checkpointer = context;
    note_log_size(checkpointer, pages);
    if (pages >= HF_CHECKPOINT_PAGES_MAX) {
        /* The background thread is not keeping up: pay for it here rather than grow. */
        writer_checkpoint(checkpointer, writer, name);
        return SQLITE_OK;
    }
    if (!checkpointer->cycle && pages >= checkpointer->threshold) {
        checkpointer->cycle = true;
        checkpointer->cycle_end = pages + checkpointer->threshold;
    }
    if (!checkpointer->cycle) return SQLITE_OK;
    pthread_mutex_lock(&checkpointer->mutex);
    bool idle = !checkpointer->running;
    bool finish = idle && (pages - checkpointer->copied <= HF_CHECKPOINT_FINISH_PAGES ||
                           pages >= checkpointer->cycle_end);
    if (idle && !finish) {
        checkpointer->running = checkpointer->wanted = true;
        pthread_cond_signal(&checkpointer->wake);
    }
    pthread_mutex_unlock(&checkpointer->mutex);
    if (finish) writer_checkpoint(checkpointer, writer, name);
    return SQLITE_OK;
}

hf_checkpointer_t *hf_checkpointer_start(sqlite3 *writer) {
    return hf_checkpointer_start_at(writer, HF_CHECKPOINT_PAGES);
}

hf_checkpointer_t *hf_checkpointer_start_at(sqlite3 *writer, int pages) {
    const char *path = sqlite3_db_filename(writer, "main");
    hf_checkpointer_t *checkpointer = calloc(1, sizeof *checkpointer);
    if (!checkpointer) return NULL;
    checkpointer->database_file = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (!path) goto fail;
    checkpointer->writer = writer;
    checkpointer->threshold = pages;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &checkpointer->database, flags, NULL) != SQLITE_OK) goto fail;
    sqlite3_busy_timeout(checkpointer->database, 1000);
    sqlite3_exec(checkpointer->database, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    pthread_mutex_init(&checkpointer->mutex, NULL);
    pthread_cond_init(&checkpointer->wake, NULL);
    if (pthread_create(&checkpointer->thread, NULL, checkpoint_thread, checkpointer) != 0) {
        pthread_cond_destroy(&checkpointer->wake);
        pthread_mutex_destroy(&checkpointer->mutex);
        goto fail;
    }
    sqlite3_wal_hook(writer, on_commit, checkpointer);
    return checkpointer;
fail:
    if (checkpointer) {
        sqlite3_close(checkpointer->database);
        if (checkpointer->database_file >= 0) close(checkpointer->database_file);
    }
    free(checkpointer);
    return NULL;
}

void hf_checkpointer_counts(hf_checkpointer_t *checkpointer, hf_checkpointer_counts_t *counts) {
    pthread_mutex_lock(&checkpointer->mutex);
    *counts = checkpointer->counts;
    pthread_mutex_unlock(&checkpointer->mutex);
}

void hf_checkpointer_stop(hf_checkpointer_t *checkpointer) {
    if (!checkpointer) return;
    sqlite3_wal_hook(checkpointer->writer, NULL, NULL);
    pthread_mutex_lock(&checkpointer->mutex);
    checkpointer->stopping = true;
    pthread_cond_signal(&checkpointer->wake);
    pthread_mutex_unlock(&checkpointer->mutex);
    pthread_join(checkpointer->thread, NULL);
    sqlite3_close(checkpointer->database);
    if (checkpointer->database_file >= 0) close(checkpointer->database_file);
    /* Leave a short log behind: the next start reads less. */
    sqlite3_wal_checkpoint_v2(checkpointer->writer, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    pthread_cond_destroy(&checkpointer->wake);
    pthread_mutex_destroy(&checkpointer->mutex);
    free(checkpointer);
}
