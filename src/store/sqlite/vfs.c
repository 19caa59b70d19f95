/* The store's SQLite VFS (see vfs.h): every method forwards to the default VFS; the log's
 * writes are gathered, and the faulty flavour asks fault.h before writes and syncs. */
#include "store/sqlite/vfs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "lib/limits.h"
#include "lib/log.h"
#include "store/fault.h"

#define VFS_NAME "holdfast"
#define FAULTY_VFS_NAME "holdfast-faulty"

/* A log's gathered writes: bytes [start, start + length) of the file, not yet written. */
typedef struct log_buffer {
    pthread_mutex_t mutex;
    unsigned char *bytes; /* HF_STORE_LOG_BUFFER_SIZE, allocated at the first write */
    size_t length;
    sqlite3_int64 start;
    sqlite3_int64 file_size; /* as this connection last saw or made it */
} log_buffer_t;

/* The file as SQLite sees it: our methods, the real file right behind. */
typedef struct store_file {
    sqlite3_file base;
    sqlite3_file *real;
    bool faulty;
    log_buffer_t *log;           /* NULL unless the file is a write-ahead log */
    struct store_file *next_log; /* in the list of open logs */
} store_file_t;

static sqlite3_vfs *root;

/* Every open log, for the barriers; pending counts the logs whose buffer holds bytes, so a
 * barrier with nothing gathered (a reader's, most of the writer's) takes no lock. */
static pthread_mutex_t logs_mutex = PTHREAD_MUTEX_INITIALIZER;
static store_file_t *logs;
static atomic_int logs_pending;
static atomic_uint_fast64_t log_writes_asked, log_writes_made;

static sqlite3_file *real_file(sqlite3_file *file) { return ((store_file_t *)file)->real; }

/* ---- the log's buffer; callers hold its mutex ---- */

static int log_flush(store_file_t *file) {
    log_buffer_t *log = file->log;
    if (log->length == 0) return SQLITE_OK;
    int rc = file->real->pMethods->xWrite(file->real, log->bytes, (int)log->length, log->start);
    if (rc != SQLITE_OK) return rc;
    atomic_fetch_add_explicit(&log_writes_made, 1, memory_order_relaxed);
    log->length = 0;
    atomic_fetch_sub(&logs_pending, 1);
    return SQLITE_OK;
}

/* Whether the write can join the buffer: it lands inside what is gathered, or right after it,
 * and inside the file as it is (growing the file may fail, and must fail where SQLite sees
 * it). */
static bool log_gathers(const log_buffer_t *log, int amount, sqlite3_int64 offset) {
    sqlite3_int64 end = offset + amount;
    if (end > log->file_size || amount > (int)HF_STORE_LOG_BUFFER_SIZE) return false;
    if (log->length == 0) return true;
    sqlite3_int64 gathered_end = log->start + (sqlite3_int64)log->length;
    if (offset >= log->start && end <= gathered_end) return true;
    return offset == gathered_end && end - log->start <= (sqlite3_int64)HF_STORE_LOG_BUFFER_SIZE;
}

static int log_write(store_file_t *file, const void *buffer, int amount, sqlite3_int64 offset) {
    log_buffer_t *log = file->log;
    atomic_fetch_add_explicit(&log_writes_asked, 1, memory_order_relaxed);
    if (offset == 0) {
        /* The log starts over with its header. Another connection may have truncated it
         * since this one last wrote (an operator's wal_checkpoint(TRUNCATE)): ask the file,
         * once per round of the log, so that growing it again is never gathered. */
        int rc = log_flush(file);
        if (rc == SQLITE_OK) rc = file->real->pMethods->xFileSize(file->real, &log->file_size);
        if (rc != SQLITE_OK) return rc;
    }
    if (!log->bytes) log->bytes = malloc(HF_STORE_LOG_BUFFER_SIZE);
    if (log->bytes && !log_gathers(log, amount, offset)) {
        int rc = log_flush(file);
        if (rc != SQLITE_OK) return rc;
    }
    if (log->bytes && log_gathers(log, amount, offset)) {
        if (log->length == 0) {
            log->start = offset;
            atomic_fetch_add(&logs_pending, 1);
        }
        memcpy(log->bytes + (offset - log->start), buffer, (size_t)amount);
        sqlite3_int64 end = offset + amount - log->start;
        if (end > (sqlite3_int64)log->length) log->length = (size_t)end;
        return SQLITE_OK;
    }
    int rc = file->real->pMethods->xWrite(file->real, buffer, amount, offset);
    if (rc != SQLITE_OK) return rc;
    atomic_fetch_add_explicit(&log_writes_made, 1, memory_order_relaxed);
    if (offset + amount > log->file_size) log->file_size = offset + amount;
    return SQLITE_OK;
}

/* Writes every connection's gathered log bytes: other connections are about to be told of
 * frames. There is no way to report a failure from here, and going on would publish frames
 * that are not in the file: stop first (see vfs.h). */
static void logs_flush_all(void) {
    if (atomic_load(&logs_pending) == 0) return;
    pthread_mutex_lock(&logs_mutex);
    for (store_file_t *file = logs; file; file = file->next_log) {
        pthread_mutex_lock(&file->log->mutex);
        int rc = log_flush(file);
        pthread_mutex_unlock(&file->log->mutex);
        if (rc != SQLITE_OK) {
            hf_log(HF_LOG_ERROR,
                   "store: writing the log failed (%s); stopping before the "
                   "commit is published",
                   sqlite3_errstr(rc));
            abort();
        }
    }
    pthread_mutex_unlock(&logs_mutex);
}

static void logs_add(store_file_t *file) {
    pthread_mutex_lock(&logs_mutex);
    file->next_log = logs;
    logs = file;
    pthread_mutex_unlock(&logs_mutex);
}

static void logs_remove(store_file_t *file) {
    pthread_mutex_lock(&logs_mutex);
    for (store_file_t **link = &logs; *link; link = &(*link)->next_log) {
        if (*link == file) {
            *link = file->next_log;
            break;
        }
    }
    pthread_mutex_unlock(&logs_mutex);
}

/* A log's methods that use its file run under its lock, since a barrier on another thread may
 * be writing its buffer; with flush, once the buffer is written (an error then stands for the
 * method's). Other files need neither. */
static int log_enter(store_file_t *own, bool flush) {
    if (!own->log) return SQLITE_OK;
    pthread_mutex_lock(&own->log->mutex);
    return flush ? log_flush(own) : SQLITE_OK;
}

static void log_leave(store_file_t *own) {
    if (own->log) pthread_mutex_unlock(&own->log->mutex);
}

/* ---- file methods ---- */

static int store_close(sqlite3_file *file) {
    store_file_t *own = (store_file_t *)file;
    int rc = SQLITE_OK;
    if (own->log) {
        logs_remove(own);
        pthread_mutex_lock(&own->log->mutex);
        rc = log_flush(own);
        if (own->log->length > 0) atomic_fetch_sub(&logs_pending, 1); /* lost with the file */
        pthread_mutex_unlock(&own->log->mutex);
        pthread_mutex_destroy(&own->log->mutex);
        free(own->log->bytes);
        free(own->log);
        own->log = NULL;
    }
    int closed = own->real->pMethods ? own->real->pMethods->xClose(own->real) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : closed;
}

static int store_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    store_file_t *own = (store_file_t *)file;
    int rc = log_enter(own, true);
    if (rc == SQLITE_OK) rc = own->real->pMethods->xRead(own->real, buffer, amount, offset);
    log_leave(own);
    return rc;
}

static int store_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    store_file_t *own = (store_file_t *)file;
    if (own->faulty && hf_store_fault_write_fails()) return SQLITE_IOERR_WRITE;
    if (!own->log) return own->real->pMethods->xWrite(own->real, buffer, amount, offset);
    log_enter(own, false);
    int rc = log_write(own, buffer, amount, offset);
    log_leave(own);
    return rc;
}

static int real_truncate(store_file_t *own, sqlite3_int64 size) {
    int rc = own->real->pMethods->xTruncate(own->real, size);
    if (rc == SQLITE_OK && own->log) own->log->file_size = size;
    return rc;
}

static int store_truncate(sqlite3_file *file, sqlite3_int64 size) {
    store_file_t *own = (store_file_t *)file;
    int rc = log_enter(own, true);
    if (rc == SQLITE_OK) rc = real_truncate(own, size);
    log_leave(own);
    return rc;
}

static int store_sync(sqlite3_file *file, int flags) {
    if (((store_file_t *)file)->faulty && hf_store_fault_sync_fails()) return SQLITE_IOERR_FSYNC;
    store_file_t *own = (store_file_t *)file;
    int rc = log_enter(own, true);
    if (rc == SQLITE_OK) rc = own->real->pMethods->xSync(own->real, flags);
    log_leave(own);
    return rc;
}

static int store_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    store_file_t *own = (store_file_t *)file;
    int rc = log_enter(own, true);
    if (rc == SQLITE_OK) rc = own->real->pMethods->xFileSize(own->real, size);
    log_leave(own);
    return rc;
}

static int store_lock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xLock(real, level);
}

static int store_unlock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xUnlock(real, level);
}

static int store_check_reserved_lock(sqlite3_file *file, int *result) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xCheckReservedLock(real, result);
}

static int store_file_control(sqlite3_file *file, int operation, void *argument) {
    store_file_t *own = (store_file_t *)file;
    int rc = log_enter(own, false);
    if (rc == SQLITE_OK) rc = own->real->pMethods->xFileControl(own->real, operation, argument);
    log_leave(own);
    return rc;
}

static int store_sector_size(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSectorSize(real);
}

static int store_device_characteristics(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xDeviceCharacteristics(real);
}

static int store_shm_map(sqlite3_file *file, int page, int page_size, int extend,
                         void volatile **memory) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmMap(real, page, page_size, extend, memory);
}

static int store_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    if (flags & SQLITE_SHM_UNLOCK) logs_flush_all();
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmLock(real, offset, count, flags);
}

static void store_shm_barrier(sqlite3_file *file) {
    logs_flush_all();
    sqlite3_file *real = real_file(file);
    real->pMethods->xShmBarrier(real);
}

static int store_shm_unmap(sqlite3_file *file, int delete_flag) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmUnmap(real, delete_flag);
}

/* Version 2 of the methods: WAL needs the shared-memory calls; memory-mapped I/O (version 3)
 * is left out so that every page write goes through xWrite, to be gathered or failed. */
static const sqlite3_io_methods store_methods = {
    .iVersion = 2,
    .xClose = store_close,
    .xRead = store_read,
    .xWrite = store_write,
    .xTruncate = store_truncate,
    .xSync = store_sync,
    .xFileSize = store_file_size,
    .xLock = store_lock,
    .xUnlock = store_unlock,
    .xCheckReservedLock = store_check_reserved_lock,
    .xFileControl = store_file_control,
    .xSectorSize = store_sector_size,
    .xDeviceCharacteristics = store_device_characteristics,
    .xShmMap = store_shm_map,
    .xShmLock = store_shm_lock,
    .xShmBarrier = store_shm_barrier,
    .xShmUnmap = store_shm_unmap,
};

/* ---- the VFS ---- */

static int log_attach(store_file_t *own) {
    sqlite3_int64 size = 0;
    int rc = own->real->pMethods->xFileSize(own->real, &size);
    if (rc != SQLITE_OK) return rc;
    own->log = calloc(1, sizeof *own->log);
    if (!own->log) return SQLITE_NOMEM;
    pthread_mutex_init(&own->log->mutex, NULL);
    own->log->file_size = size;
    logs_add(own);
    return SQLITE_OK;
}

static int store_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
                      int *out_flags) {
    store_file_t *own = (store_file_t *)file;
    own->real = (sqlite3_file *)(own + 1);
    own->faulty = vfs->pAppData != NULL;
    own->log = NULL;
    own->next_log = NULL;
    memset(own->real, 0, (size_t)root->szOsFile);
    int rc = root->xOpen(root, name, own->real, flags, out_flags);
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL)) {
        rc = log_attach(own);
        if (rc != SQLITE_OK) own->real->pMethods->xClose(own->real);
    }
    /* SQLite calls xClose only when pMethods is set: on failure the real file is closed
     * already, so leave ours unset. */
    own->base.pMethods = rc == SQLITE_OK ? &store_methods : NULL;
    return rc;
}

static int store_delete(sqlite3_vfs *vfs, const char *name, int sync_directory) {
    return root->xDelete(root, name, sync_directory);
}

static int store_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    return root->xAccess(root, name, flags, result);
}

static int store_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return root->xFullPathname(root, name, size, out);
}

static void *store_dl_open(sqlite3_vfs *vfs, const char *name) { return root->xDlOpen(root, name); }

static void store_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    root->xDlError(root, size, message);
}

static void (*store_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return root->xDlSym(root, handle, symbol);
}

static void store_dl_close(sqlite3_vfs *vfs, void *handle) { root->xDlClose(root, handle); }

static int store_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return root->xRandomness(root, size, out);
}

static int store_sleep(sqlite3_vfs *vfs, int microseconds) {
    return root->xSleep(root, microseconds);
}

static int store_current_time(sqlite3_vfs *vfs, double *now) {
    return root->xCurrentTime(root, now);
}

static int store_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return root->xGetLastError ? root->xGetLastError(root, size, out) : 0;
}

static int store_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    return root->xCurrentTimeInt64(root, now);
}

#define STORE_VFS(name, faulty) \
    { \
        .iVersion = 2, .zName = (name), .pAppData = (faulty), .xOpen = store_open, \
        .xDelete = store_delete, .xAccess = store_access, .xFullPathname = store_full_pathname, \
        .xDlOpen = store_dl_open, .xDlError = store_dl_error, .xDlSym = store_dl_sym, \
        .xDlClose = store_dl_close, .xRandomness = store_randomness, .xSleep = store_sleep, \
        .xCurrentTime = store_current_time, .xGetLastError = store_get_last_error, \
        .xCurrentTimeInt64 = store_current_time_int64, \
    }

static char faulty_marker;
static sqlite3_vfs plain_vfs = STORE_VFS(VFS_NAME, NULL);
static sqlite3_vfs faulty_vfs = STORE_VFS(FAULTY_VFS_NAME, &faulty_marker);
static bool registered;

static void register_once(void) {
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    if (!found || found->iVersion < 2) return;
    root = found;
    sqlite3_vfs *flavours[] = {&plain_vfs, &faulty_vfs};
    for (int i = 0; i < 2; i++) {
        flavours[i]->szOsFile = (int)sizeof(store_file_t) + root->szOsFile;
        flavours[i]->mxPathname = root->mxPathname;
        if (sqlite3_vfs_register(flavours[i], 0) != SQLITE_OK) return;
    }
    registered = true;
}

const char *hf_store_vfs(bool faulty, char *error, size_t error_size) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_once);
    if (!registered) {
        if (error && error_size > 0)
            snprintf(error, error_size, "store: cannot build on SQLite's default VFS");
        return NULL;
    }
    return faulty ? FAULTY_VFS_NAME : VFS_NAME;
}

void hf_store_vfs_counts(hf_store_vfs_counts_t *counts) {
    counts->log_writes_asked = atomic_load(&log_writes_asked);
    counts->log_writes_made = atomic_load(&log_writes_made);
}
