/* Durability of the write-ahead log, apart from writing it. The store thread commits each
 * batch with synchronous=NORMAL, so COMMIT only writes the log; the syncer makes it durable
 * with fdatasync on threads of its own. The store thread can then write batch N+1 while batch
 * N is being synced, and several syncs can be in flight at once: on this kind of disk two
 * overlapping flushes finish sooner than two in a row. A sync covers every batch written
 * before it started, so the durable sequence is the highest one a finished sync covered.
 *
 * A failed sync is final: after a failed fsync the kernel may have dropped the dirty pages,
 * so what the process reads back no longer tells what is on the disk. From then on nothing
 * more becomes durable.
 *
 * Threads: hf_syncer_written and hf_syncer_wait are called from the store thread,
 * hf_syncer_durable from any thread; notify runs on a syncer thread and must only wake
 * someone up. */
#ifndef HF_STORE_SYNC_H
#define HF_STORE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Syncs in flight at once. Two overlap the disk's flushes; more gave nothing measurable on
 * two cores and would only take CPU from the event loop. */
#define HF_SYNCER_THREADS 2

typedef struct hf_syncer hf_syncer_t;

/* Opens the log at path (creating it empty if SQLite has not yet) and makes its directory
 * entry durable, then starts the threads. notify(context) runs after every sync. Returns
 * NULL with a sentence in error on failure. */
hf_syncer_t *hf_syncer_start(const char *path, void (*notify)(void *), void *context,
                             char *error, size_t error_size);
/* Every batch up to sequence is written to the log: sync it. Sequences only grow. */
void hf_syncer_written(hf_syncer_t *syncer, uint64_t sequence);
/* The highest sequence known durable. Returns false once a sync has failed (error then holds
 * the reason); the sequence then stays where it was before the failure. */
bool hf_syncer_durable(hf_syncer_t *syncer, uint64_t *sequence, char *error,
                       size_t error_size);
/* Records a failed sync made elsewhere (SQLite's own): from now on nothing is durable. */
void hf_syncer_fail(hf_syncer_t *syncer, const char *error);
/* Blocks until everything written is durable or a sync has failed. */
void hf_syncer_wait(hf_syncer_t *syncer);
/* Syncs what is written, stops the threads, closes the log. NULL is accepted. */
void hf_syncer_stop(hf_syncer_t *syncer);

#endif
