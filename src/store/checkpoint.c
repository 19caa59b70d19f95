/* Background WAL checkpoints (see checkpoint.h). */
#include "store/checkpoint.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct hf_checkpointer {
    sqlite3 *writer;             /* borrowed: the store's connection */
    sqlite3 *database;           /* our own connection */
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    bool wanted, stopping;
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
        pthread_mutex_unlock(&checkpointer->mutex);
        int rc = sqlite3_wal_checkpoint_v2(checkpointer->database, "main",
                                           SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            fprintf(stderr, "holdfast: store: background checkpoint failed: %s\n",
                    sqlite3_errmsg(checkpointer->database));
        pthread_mutex_lock(&checkpointer->mutex);
    }
    pthread_mutex_unlock(&checkpointer->mutex);
    return NULL;
}

/* SQLite's WAL hook: runs on the writer's thread after each commit, with the log's size. */
static int on_commit(void *context, sqlite3 *writer, const char *name, int pages) {
    hf_checkpointer_t *checkpointer = context;
    if (pages >= HF_CHECKPOINT_PAGES_MAX) {
        /* The background thread is not keeping up: pay for it here rather than grow. */
        sqlite3_wal_checkpoint_v2(writer, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        return SQLITE_OK;
    }
    if (pages < HF_CHECKPOINT_PAGES) return SQLITE_OK;
    pthread_mutex_lock(&checkpointer->mutex);
    checkpointer->wanted = true;
    pthread_cond_signal(&checkpointer->wake);
    pthread_mutex_unlock(&checkpointer->mutex);
    return SQLITE_OK;
}

hf_checkpointer_t *hf_checkpointer_start(sqlite3 *writer) {
    const char *path = sqlite3_db_filename(writer, "main");
    hf_checkpointer_t *checkpointer = calloc(1, sizeof *checkpointer);
    if (!checkpointer || !path) goto fail;
    checkpointer->writer = writer;
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
    if (checkpointer) sqlite3_close(checkpointer->database);
    free(checkpointer);
    return NULL;
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
    /* Leave a short log behind: the next start reads less. */
    sqlite3_wal_checkpoint_v2(checkpointer->writer, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    pthread_cond_destroy(&checkpointer->wake);
    pthread_mutex_destroy(&checkpointer->mutex);
    free(checkpointer);
}
