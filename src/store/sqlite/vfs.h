/* The store's SQLite VFS: the default one (unix) with two additions.
 *
 * 1. Writes to the write-ahead log are gathered. SQLite writes every frame of a commit with
 *    two calls (its 24-byte header, then the page), so a batch of eight frames made sixteen
 *    pwrite calls: 29 us on this project's machines, where one call of the same bytes takes
 *    3 us (a system call costs about 2 us on these virtual machines). A connection's writes
 *    to its log stay in a buffer (HF_STORE_LOG_BUFFER_SIZE) while they follow each other and
 *    fall within the file's current size, and reach the file in one call:
 *      - before the same connection reads, syncs, truncates, sizes or closes the log;
 *      - at every shared-memory barrier and every release of a shared-memory lock. SQLite
 *        passes a barrier between writing a commit's frames and publishing them to other
 *        connections (walIndexWriteHdr), so no other connection, process or syncer thread
 *        can look for frames that are still in the buffer; and it releases the log's write
 *        lock before another writer can append, so no stale buffer outlives it.
 *    A write that would grow the file goes through at once, so a full disk is still an error
 *    SQLite sees and answers (SQLITE_FULL); the file's size is asked again whenever the log
 *    starts over at its header, since another connection may have truncated it. A gathered
 *    write that fails at a barrier cannot be reported to SQLite, which would then publish
 *    frames that are not in the file: the process stops there (abort), before anything is
 *    published, and the log SQLite recovers at the next start ends with the last frames that
 *    were written whole.
 * 2. In tests, injected faults (fault.h): the "faulty" flavour asks fault.h before every
 *    write and sync of the connection's files.
 *
 * Threads: any; a log's buffer has its own lock, since a barrier on one connection flushes
 * every connection's log. */
#ifndef HF_STORE_VFS_H
#define HF_STORE_VFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The name of the VFS to open a store connection with (registered on first use), the faulty
 * flavour when faulty is true. NULL with a sentence in error when SQLite has no default VFS
 * to build on. The name is a static string. */
const char *hf_store_vfs(bool faulty, char *error, size_t error_size);

/* Writes to logs since the process started, for tests and profiles: those SQLite asked for,
 * and those that reached a file (gathered or passed through). */
typedef struct hf_store_vfs_counts {
    uint64_t log_writes_asked;
    uint64_t log_writes_made;
} hf_store_vfs_counts_t;

void hf_store_vfs_counts(hf_store_vfs_counts_t *counts);

#endif
