/* Storage fault injection for tests: a thin SQLite VFS over the default one that fails the
 * N-th write or fsync on purpose, as a dying disk would. Driven by environment variables read
 * when the store opens; without them nothing is installed and SQLite runs on its own VFS.
 *
 *   HOLDFAST_FAULT_FAIL_WRITE=N   the N-th xWrite after the store starts, and every one
 *                                 after it, fails with SQLITE_IOERR_WRITE
 *   HOLDFAST_FAULT_FAIL_SYNC=N    the same for xSync (SQLITE_IOERR_FSYNC)
 *   HOLDFAST_FAULT_SYNC_DELAY_MS=N  the log syncer waits N ms (at most 10,000) before each
 *                                 fdatasync: a slow disk, so that tests can act while a batch
 *                                 is written and not yet durable
 *
 * Counting starts at hf_store_start, so opening and loading never trip a fault and N counts
 * the writes of batches only. Threads: configured before the store's threads exist; writes are
 * counted by the writer thread alone, syncs by any thread. */
#ifndef HF_STORE_FAULT_H
#define HF_STORE_FAULT_H

#include <stdbool.h>
#include <stddef.h>

/* Name of the fault VFS to open the database with, or NULL when no fault is asked for. On a
 * registration failure returns NULL with a sentence in error (error[0] != 0). */
const char *hf_store_fault_vfs(char *error, size_t error_size);
/* From now on writes and syncs are counted. */
void hf_store_fault_arm(void);
/* Counts one sync and tells whether it must fail (HOLDFAST_FAULT_FAIL_SYNC). The log
 * syncer's own fdatasync calls go through here, since they bypass SQLite's VFS. Safe from any
 * thread. */
bool hf_store_fault_sync_fails(void);
/* Sleeps HOLDFAST_FAULT_SYNC_DELAY_MS once counting started; returns at once without it. */
void hf_store_fault_sync_delay(void);

#endif
