/* Storage faults for tests, and the ceiling build's switch: every environment variable of the
 * store is read here, once, when a store opens (hf_store_fault_configure); without them nothing
 * is injected and SQLite runs on its own VFS.
 *
 *   HOLDFAST_FAULT_FAIL_BATCH=N   the N-th batch the store writes fails after its writes and
 *                                 before its commit, as a full disk would, and is rolled back
 *                                 (the store pipeline asks hf_store_fault_batch_to_fail)
 *   HOLDFAST_FAULT_FAIL_WRITE=N   the N-th xWrite after the store starts, and every one
 *                                 after it, fails with SQLITE_IOERR_WRITE (the store's VFS,
 *                                 vfs.h, in its faulty flavour, as a dying disk would)
 *   HOLDFAST_FAULT_FAIL_SYNC=N    the same for xSync (SQLITE_IOERR_FSYNC), and for the log
 *                                 syncer's own fdatasync
 *   HOLDFAST_FAULT_SYNC_DELAY_MS=N  the log syncer waits N ms (at most 10,000) before each
 *                                 fdatasync: a slow disk, so that tests can act while a batch
 *                                 is written and not yet durable
 *   HOLDFAST_FAULT_MAX_PAGES=N    the database may not grow past N pages: a full disk
 *                                 (SQLITE_FULL) at the write that needs one more
 *   HOLDFAST_CEILING=no-sync|no-sql|neither  read only by the ceiling build (below)
 *
 * Counting of writes and syncs starts at hf_store_start, so opening and loading never trip a
 * fault and N counts the writes of batches only. Threads: configured before the store's
 * threads exist; writes are counted by the writer thread alone, syncs by any thread. */
#ifndef HF_STORE_FAULT_H
#define HF_STORE_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads the variables above; called when a store opens. True when writes or syncs are to
 * fail: the store then opens its connection through the faulty flavour of its VFS (vfs.h),
 * whose writes and syncs ask hf_store_fault_write_fails and hf_store_fault_sync_fails. A store
 * opened without faults after one with them (unit tests) inherits none. */
bool hf_store_fault_configure(void);
/* True when the last hf_store_fault_configure asked for failing writes or syncs: the store's
 * connection must then go through the faulty flavour of its VFS. */
bool hf_store_fault_injects_io(void);
/* From now on writes and syncs are counted. */
void hf_store_fault_arm(void);
/* Counts one write and tells whether it must fail (HOLDFAST_FAULT_FAIL_WRITE). Called by the
 * writer thread alone (and by the thread that loads before it starts). */
bool hf_store_fault_write_fails(void);
/* Counts one sync and tells whether it must fail (HOLDFAST_FAULT_FAIL_SYNC). The log
 * syncer's own fdatasync calls go through here, since they bypass SQLite's VFS. Safe from any
 * thread. */
bool hf_store_fault_sync_fails(void);
/* Sleeps HOLDFAST_FAULT_SYNC_DELAY_MS once counting started; returns at once without it. */
void hf_store_fault_sync_delay(void);
/* HOLDFAST_FAULT_FAIL_BATCH: the number (from 1) of the batch that must fail, 0 for none. */
uint64_t hf_store_fault_batch_to_fail(void);
/* HOLDFAST_FAULT_MAX_PAGES: the most pages the database may have, 0 for no limit. */
uint64_t hf_store_fault_pages_max(void);

/* The ceiling build, for `make bench` only (build/bench/holdfast-ceiling, whose store is
 * compiled with HF_STORE_CEILING): HOLDFAST_CEILING=no-sync skips the log's fdatasync,
 * no-sql skips each batch's SQL transaction, neither skips both. The benchmark then shows
 * what the durable step costs on the machine it runs on, against the same server. Nothing
 * that build acknowledges is durable. In every other build both are constant false, the
 * variable is never read and the code that skips is compiled out. Configured by
 * hf_store_fault_configure. */
#ifdef HF_STORE_CEILING
bool hf_store_ceiling_skips_sync(void);
bool hf_store_ceiling_skips_sql(void);
#else
static inline bool hf_store_ceiling_skips_sync(void) { return false; }
static inline bool hf_store_ceiling_skips_sql(void) { return false; }
#endif

#endif
