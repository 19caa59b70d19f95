/* WAL checkpoints off the commit path. SQLite's automatic checkpoint runs inside the COMMIT
 * that crosses its threshold, so one batch in a thousand paid for copying the whole log back
 * into the database. Here a thread of its own, on a connection of its own, runs PASSIVE
 * checkpoints (which never block the writer) when the log has grown.
 *
 * The log starts over only when a write transaction begins with every frame already copied.
 * Under steady load the writer commits while a background round copies, so that moment never
 * comes by itself: the writer finishes each cycle with a small checkpoint of its own, once a
 * background round has left fewer than HF_CHECKPOINT_FINISH_PAGES uncopied (or the cycle has
 * let the log grow by another threshold). Asking for a round after every commit instead, as
 * this file did before, chased the writer: a round of a few dozen pages and its syncs, 70 to
 * 180 times a second at 50 connections, on the disk the commits wait for.
 *
 * Threads: the WAL hook runs on the store's writer thread; start, counts and stop on the
 * thread that owns the store. */
#ifndef HF_CHECKPOINT_H
#define HF_CHECKPOINT_H

#include <sqlite3.h>

/* Log pages after which a background checkpoint is asked for (about 16 MiB of 4 KiB pages). */
#define HF_CHECKPOINT_PAGES 4000
/* Log pages after which the writer checkpoints itself, whatever the background thread does
 * (about 256 MiB). */
#define HF_CHECKPOINT_PAGES_MAX 65536
/* Uncopied log pages few enough for the writer to copy itself to end a cycle: a few dozen
 * distinct pages and two syncs, 1.3 ms on average on the benchmark machine, about four times
 * a second at full load. */
#define HF_CHECKPOINT_FINISH_PAGES 64

/* What the checkpointer did, for tests and the logs. */
typedef struct hf_checkpointer_counts {
    unsigned long long rounds;        /* background checkpoints */
    unsigned long long writer_rounds; /* the writer's own: ending a cycle, or the hard bound */
    unsigned long long restarts;      /* times the log started over */
    int pages_most;                   /* the largest log seen after a commit, in pages */
} hf_checkpointer_counts_t;

typedef struct hf_checkpointer hf_checkpointer_t;

/* Opens its own connection to the writer's database file and starts the thread. Installs the
 * WAL hook on writer (which turns SQLite's automatic checkpoint off). NULL on failure, after
 * which SQLite's automatic checkpoint stays on. */
hf_checkpointer_t *hf_checkpointer_start(sqlite3 *writer);
/* The same with another threshold than HF_CHECKPOINT_PAGES (tests use a small one). */
hf_checkpointer_t *hf_checkpointer_start_at(sqlite3 *writer, int pages);
/* Copies the counts so far; call while the writer is not committing. */
void hf_checkpointer_counts(hf_checkpointer_t *checkpointer, hf_checkpointer_counts_t *counts);
/* Stops the thread, runs a last full checkpoint that truncates the log, and frees. */
void hf_checkpointer_stop(hf_checkpointer_t *checkpointer);

#endif
