/* WAL checkpoints off the commit path. SQLite's automatic checkpoint runs inside the COMMIT
 * that crosses its threshold, so one batch in a thousand paid for copying the whole log back
 * into the database. Here a thread of its own, on a connection of its own, runs PASSIVE
 * checkpoints (which never block the writer) when the log has grown; the writer checkpoints
 * itself only when the log grows past a hard bound, so the file cannot grow without limit.
 *
 * Threads: hf_checkpointer_request is called on the store's writer thread (from SQLite's WAL
 * hook); start and stop on the thread that owns the store. */
#ifndef HF_CHECKPOINT_H
#define HF_CHECKPOINT_H

#include <sqlite3.h>

/* Log pages after which a background checkpoint is asked for (about 16 MiB of 4 KiB pages). */
#define HF_CHECKPOINT_PAGES 4000
/* Log pages after which the writer checkpoints itself, whatever the background thread does
 * (about 256 MiB). */
#define HF_CHECKPOINT_PAGES_MAX 65536

typedef struct hf_checkpointer hf_checkpointer_t;

/* Opens its own connection to the writer's database file and starts the thread. Installs the
 * WAL hook on writer (which turns SQLite's automatic checkpoint off). NULL on failure, after
 * which SQLite's automatic checkpoint stays on. */
hf_checkpointer_t *hf_checkpointer_start(sqlite3 *writer);
/* Stops the thread, runs a last full checkpoint that truncates the log, and frees. */
void hf_checkpointer_stop(hf_checkpointer_t *checkpointer);

#endif
