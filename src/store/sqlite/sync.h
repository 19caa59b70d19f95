/* Durability of the write-ahead log, apart from writing it. The store commits each batch with
 * synchronous=NORMAL, so COMMIT only writes the log; the syncer makes it durable with
 * fdatasync on threads of its own (hf_syncer_start): the store's writer reports each committed
 * batch (hf_syncer_written) and goes on to the next one at once, while a syncer thread claims
 * everything written so far and syncs it. Up to HF_STORE_SYNCERS syncs are in flight (on this
 * kind of disk two overlapping flushes finish sooner than two in a row), and a batch written
 * during a sync is covered by the next one, so one fdatasync often makes several batches
 * durable. A sync covers every batch written before it started, so the durable sequence is the
 * highest one a finished sync covered.
 *
 * A failed sync is final: after a failed fsync the kernel may have dropped the dirty pages,
 * so what the process reads back no longer tells what is on the disk. From then on nothing
 * more becomes durable.
 *
 * Threads: every function may be called from any thread; notify runs on the thread that
 * synced and must only wake someone up. */
#ifndef HF_STORE_SYNC_H
#define HF_STORE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hf_syncer hf_syncer_t;

/* Opens the log at path (creating it empty if SQLite has not yet) and makes its directory
 * entry durable. notify(context) runs after every sync. Returns NULL with a sentence in error
 * on failure. */
hf_syncer_t *hf_syncer_open(const char *path, void (*notify)(void *), void *context, char *error,
                            size_t error_size);
/* Starts thread_count threads (named hf-sync) that sync whenever something written is not yet
 * claimed by a sync. Without them (unit tests), syncs happen only through hf_syncer_sync.
 * Returns 0, or -1 with a sentence in error. */
int hf_syncer_start(hf_syncer_t *syncer, int thread_count, char *error, size_t error_size);
/* Every batch up to sequence is written to the log; wakes a syncer thread. Sequences only
 * grow. */
void hf_syncer_written(hf_syncer_t *syncer, uint64_t sequence);
/* Makes what is written durable with one fdatasync on the calling thread, then notifies.
 * Returns at once when a sync that started after the last write already covers it, or when a
 * sync has failed. The syncer threads run this; tests call it to sync at a chosen moment. */
void hf_syncer_sync(hf_syncer_t *syncer);
/* The highest sequence known durable. Returns false once a sync has failed (error then holds
 * the reason); the sequence then stays where it was before the failure. */
bool hf_syncer_durable(hf_syncer_t *syncer, uint64_t *sequence, char *error, size_t error_size);
/* Records a failed sync made elsewhere (SQLite's own): from now on nothing is durable. */
void hf_syncer_fail(hf_syncer_t *syncer, const char *error);
/* Blocks until everything written is durable or a sync has failed. Someone must be syncing:
 * the syncer threads, once started, sync whatever is written. */
void hf_syncer_wait(hf_syncer_t *syncer);
/* Stops the syncer threads, syncs what is still written and not covered (on the calling
 * thread), closes the log. No other call may be in progress. NULL is accepted. */
void hf_syncer_close(hf_syncer_t *syncer);

#endif
