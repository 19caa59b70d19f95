/* The fault-injecting VFS (see fault.h). Every method forwards to the default VFS; only xWrite
 * and xSync count their calls and fail from the chosen one on. A failure is sticky, like a
 * disk that has gone bad: the store must not be able to "retry its way" past it. */
#include "store/fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#define FAULT_VFS_NAME "holdfast-fault"
/* A longer injected delay would only make a test look hung. */
#define SYNC_DELAY_MS_MAX 10000u

typedef struct fault_state {
    uint64_t fail_write;   /* 0: never */
    uint64_t fail_sync;
    uint64_t sync_delay_ms;    /* 0: none */
    uint64_t writes;
    /* Counted by SQLite's syncs and by the log syncer's, on the store's threads. */
    atomic_uint_fast64_t syncs;
    atomic_int armed;
    sqlite3_vfs *root;
} fault_state_t;

static fault_state_t state;

/* The file as SQLite sees it: our methods, then the real file right behind. */
typedef struct fault_file {
    sqlite3_file base;
    sqlite3_file *real;
} fault_file_t;

static sqlite3_file *real_file(sqlite3_file *file) { return ((fault_file_t *)file)->real; }

static int fault_close(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xRead(real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *file, const void *buffer, int amount,
                       sqlite3_int64 offset) {
    if (state.armed && state.fail_write && ++state.writes >= state.fail_write)
        return SQLITE_IOERR_WRITE;
    sqlite3_file *real = real_file(file);
    return real->pMethods->xWrite(real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xTruncate(real, size);
}

void hf_store_fault_sync_delay(void) {
    if (!atomic_load(&state.armed) || state.sync_delay_ms == 0) return;
    struct timespec pause = {(time_t)(state.sync_delay_ms / 1000),
                             (long)(state.sync_delay_ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
}

bool hf_store_fault_sync_fails(void) {
    return atomic_load(&state.armed) && state.fail_sync &&
           atomic_fetch_add(&state.syncs, 1) + 1 >= state.fail_sync;
}

static int fault_sync(sqlite3_file *file, int flags) {
    if (hf_store_fault_sync_fails()) return SQLITE_IOERR_FSYNC;
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSync(real, flags);
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileSize(real, size);
}

static int fault_lock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xLock(real, level);
}

static int fault_unlock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xUnlock(real, level);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *result) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xCheckReservedLock(real, result);
}

static int fault_file_control(sqlite3_file *file, int operation, void *argument) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileControl(real, operation, argument);
}

static int fault_sector_size(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSectorSize(real);
}

static int fault_device_characteristics(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xDeviceCharacteristics(real);
}

static int fault_shm_map(sqlite3_file *file, int page, int page_size, int extend,
                         void volatile **memory) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmMap(real, page, page_size, extend, memory);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmLock(real, offset, count, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    real->pMethods->xShmBarrier(real);
}

static int fault_shm_unmap(sqlite3_file *file, int delete_flag) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmUnmap(real, delete_flag);
}

/* Version 2 of the methods: WAL needs the shared-memory calls; memory-mapped I/O (version 3)
 * is left out so every page write goes through xWrite and can be failed. */
static const sqlite3_io_methods fault_methods = {
    .iVersion = 2,
    .xClose = fault_close,
    .xRead = fault_read,
    .xWrite = fault_write,
    .xTruncate = fault_truncate,
    .xSync = fault_sync,
    .xFileSize = fault_file_size,
    .xLock = fault_lock,
    .xUnlock = fault_unlock,
    .xCheckReservedLock = fault_check_reserved_lock,
    .xFileControl = fault_file_control,
    .xSectorSize = fault_sector_size,
    .xDeviceCharacteristics = fault_device_characteristics,
    .xShmMap = fault_shm_map,
    .xShmLock = fault_shm_lock,
    .xShmBarrier = fault_shm_barrier,
    .xShmUnmap = fault_shm_unmap,
};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
                      int *out_flags) {
    fault_file_t *fault = (fault_file_t *)file;
    fault->real = (sqlite3_file *)(fault + 1);
    memset(fault->real, 0, (size_t)state.root->szOsFile);
    int rc = state.root->xOpen(state.root, name, fault->real, flags, out_flags);
    /* SQLite calls xClose only when pMethods is set: on failure the real file is closed by
     * the root VFS itself, so leave ours unset. */
    fault->base.pMethods = rc == SQLITE_OK ? &fault_methods : NULL;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_directory) {
    return state.root->xDelete(state.root, name, sync_directory);
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    return state.root->xAccess(state.root, name, flags, result);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return state.root->xFullPathname(state.root, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    return state.root->xDlOpen(state.root, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    state.root->xDlError(state.root, size, message);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return state.root->xDlSym(state.root, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    state.root->xDlClose(state.root, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return state.root->xRandomness(state.root, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    return state.root->xSleep(state.root, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *now) {
    return state.root->xCurrentTime(state.root, now);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return state.root->xGetLastError ? state.root->xGetLastError(state.root, size, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    return state.root->xCurrentTimeInt64(state.root, now);
}

static sqlite3_vfs fault_vfs = {
    .iVersion = 2,
    .mxPathname = 0, /* set from the root at registration */
    .zName = FAULT_VFS_NAME,
    .xOpen = fault_open,
    .xDelete = fault_delete,
    .xAccess = fault_access,
    .xFullPathname = fault_full_pathname,
    .xDlOpen = fault_dl_open,
    .xDlError = fault_dl_error,
    .xDlSym = fault_dl_sym,
    .xDlClose = fault_dl_close,
    .xRandomness = fault_randomness,
    .xSleep = fault_sleep,
    .xCurrentTime = fault_current_time,
    .xGetLastError = fault_get_last_error,
    .xCurrentTimeInt64 = fault_current_time_int64,
};

static uint64_t environment_count(const char *name) {
    const char *value = getenv(name);
    return value && *value ? strtoull(value, NULL, 10) : 0;
}

const char *hf_store_fault_vfs(char *error, size_t error_size) {
    char ignored[8];
    if (error == NULL || error_size == 0) {
        error = ignored;
        error_size = sizeof ignored;
    }
    error[0] = '\0';
    uint64_t fail_write = environment_count("HOLDFAST_FAULT_FAIL_WRITE");
    uint64_t fail_sync = environment_count("HOLDFAST_FAULT_FAIL_SYNC");
    uint64_t delay_ms = environment_count("HOLDFAST_FAULT_SYNC_DELAY_MS");
    /* The delay needs no VFS: only the log syncer's own fdatasync waits. */
    state.sync_delay_ms = delay_ms < SYNC_DELAY_MS_MAX ? delay_ms : SYNC_DELAY_MS_MAX;
    if (!fail_write && !fail_sync) {
        /* A store opened without faults after one with them (unit tests) must not inherit
         * them: the log syncer asks hf_store_fault_sync_fails whatever VFS is in use. */
        state.fail_write = state.fail_sync = 0;
        return NULL;
    }
    if (!state.root) {
        sqlite3_vfs *root = sqlite3_vfs_find(NULL);
        if (!root || root->iVersion < 2) {
            snprintf(error, error_size, "store: no default SQLite VFS to inject faults into");
            return NULL;
        }
        state.root = root;
        fault_vfs.szOsFile = (int)sizeof(fault_file_t) + root->szOsFile;
        fault_vfs.mxPathname = root->mxPathname;
        if (sqlite3_vfs_register(&fault_vfs, 0) != SQLITE_OK) {
            snprintf(error, error_size, "store: cannot register the fault VFS");
            state.root = NULL;
            return NULL;
        }
    }
    state.fail_write = fail_write;
    state.fail_sync = fail_sync;
    state.writes = 0;
    atomic_store(&state.syncs, 0);
    atomic_store(&state.armed, 0);
    return FAULT_VFS_NAME;
}

void hf_store_fault_arm(void) { atomic_store(&state.armed, 1); }
