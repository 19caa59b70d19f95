/* holdfast backup --data DIR OUT.db (commands.h): a consistent copy of the store while the
 * server runs. SQLite's online backup API copies the pages in steps through a read-only
 * connection that holds one read transaction for the whole copy: in WAL mode the server's
 * commits go on meanwhile, and the copy is the store as of the moment that transaction began
 * (every order acknowledged before then is in it). Holding the one transaction also keeps the
 * backup from restarting when the server writes, which it would under load otherwise. The
 * copy is written to OUT.partial and renamed into place once complete and synced, so OUT is
 * never a half-written file. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "lib/progress.h"

/* Pages copied per step (4 KiB each): small enough for a smooth progress line, large enough
 * that the steps' own cost is nothing. */
#define BACKUP_STEP_PAGES 1024
/* How long a step waits when the destination is busy before trying again. */
#define BACKUP_RETRY_MS 50

static const char USAGE[] =
    "usage: holdfast backup --data DIR OUT.db [--force]\n"
    "       holdfast backup --store sqlite:PATH OUT.db [--force]\n"
    "Copies the store (DIR/holdfast.db) to OUT.db, consistently, while the server runs (or\n"
    "not): the copy is the store as of the backup's start. It is written to OUT.db.partial\n"
    "and renamed when complete; an existing OUT.db is refused unless --force. Progress is\n"
    "shown on a terminal. Restore: stop the server, copy OUT.db to DIR/holdfast.db (removing\n"
    "DIR/holdfast.db-wal and -shm), start it. Check a copy with\n"
    "holdfast check --store sqlite:OUT.db.\n"
    "  --data DIR           the server's data directory\n"
    "  --store sqlite:PATH  the store's file instead [HOLDFAST_STORE]\n"
    "  --force              overwrite OUT.db\n"
    "Exit codes: 0 copied, 1 failure (nothing at OUT.db is changed), 2 usage.\n";

static int fail_sqlite(const char *what, sqlite3 *database) {
    return hf_command_fail(HF_EXIT_FAILURE, "backup", "%s: %s", what,
                           database ? sqlite3_errmsg(database) : "out of memory");
}

/* Copies source's main database into destination in steps, within one read transaction. */
static int copy_pages(sqlite3 *source, sqlite3 *destination) {
    /* The read transaction is begun by the first read, and lasts to the COMMIT. */
    if (sqlite3_exec(source, "BEGIN; SELECT count(*) FROM sqlite_master;", NULL, NULL, NULL) !=
        SQLITE_OK)
        return fail_sqlite("cannot read the store", source);
    sqlite3_backup *backup = sqlite3_backup_init(destination, "main", source, "main");
    if (!backup) return fail_sqlite("cannot start the backup", destination);
    hf_progress_t progress;
    hf_progress_begin(&progress, "backup: pages", isatty(STDERR_FILENO) == 1);
    int rc;
    do {
        rc = sqlite3_backup_step(backup, BACKUP_STEP_PAGES);
        int total = sqlite3_backup_pagecount(backup);
        hf_progress_set(&progress, (uint64_t)(total - sqlite3_backup_remaining(backup)),
                        (uint64_t)total);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(BACKUP_RETRY_MS);
    } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
    hf_progress_end(&progress);
    sqlite3_backup_finish(backup);
    sqlite3_exec(source, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_DONE)
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "copying failed: %s",
                               sqlite3_errstr(rc));
    return HF_EXIT_OK;
}

/* The copy is made a plain file (no -wal beside it) and synced. */
static int copy_settle(sqlite3 *destination) {
    if (sqlite3_exec(destination, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL) != SQLITE_OK)
        return fail_sqlite("cannot finish the copy", destination);
    return HF_EXIT_OK;
}

static void sync_directory_of(const char *path) {
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

static int backup_run(const char *store, const char *out, bool force) {
    struct stat seen;
    if (stat(store, &seen) != 0)
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "no store at %s: %s", store,
                               strerror(errno));
    if (!force && lstat(out, &seen) == 0)
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "%s exists: pass --force to "
                               "overwrite it", out);
    char partial[4200], side[4300];
    snprintf(partial, sizeof partial, "%s.partial", out);
    unlink(partial);
    snprintf(side, sizeof side, "%s-journal", partial);
    unlink(side);
    sqlite3 *source = NULL, *destination = NULL;
    int code = HF_EXIT_FAILURE;
    if (sqlite3_open_v2(store, &source, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        code = fail_sqlite("cannot open the store", source);
    else if (sqlite3_busy_timeout(source, 5000),
             sqlite3_open_v2(partial, &destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             NULL) != SQLITE_OK)
        code = fail_sqlite("cannot create the copy", destination);
    else if ((code = copy_pages(source, destination)) == HF_EXIT_OK)
        code = copy_settle(destination);
    sqlite3_close(source);
    if (sqlite3_close(destination) != SQLITE_OK && code == HF_EXIT_OK)
        code = hf_command_fail(HF_EXIT_FAILURE, "backup", "cannot close the copy");
    if (code != HF_EXIT_OK) {
        unlink(partial);
        return code;
    }
    /* A stale log beside an overwritten OUT would be replayed into the new copy. */
    snprintf(side, sizeof side, "%s-wal", out);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", out);
    unlink(side);
    if (rename(partial, out) != 0) {
        int saved = errno;
        unlink(partial);
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "cannot move the copy to %s: %s", out,
                               strerror(saved));
    }
    sync_directory_of(out);
    printf("backup: %s copied to %s\n", store, out);
    return hf_command_usage("");
}

int hf_command_backup(int argc, char **argv) {
    hf_argument_t options[] = {{"--data", NULL, false, NULL},
                               {"--store", "HOLDFAST_STORE", false, NULL},
                               {"--force", NULL, true, NULL}};
    const char *positional[1];
    static const char *const names[] = {"OUT.db (where to write the copy)"};
    switch (hf_arguments_read("backup", argc, argv, 1, options, 3, positional, 1, names)) {
    case HF_ARGUMENTS_HELP: return hf_command_usage(USAGE);
    case HF_ARGUMENTS_REFUSED: return HF_EXIT_USAGE;
    case HF_ARGUMENTS_OK: break;
    }
    char store[4200];
    int code = hf_command_store_path("backup", options[0].value, options[1].value, store,
                                     sizeof store);
    if (code != HF_EXIT_OK) return code;
    return backup_run(store, positional[0], options[2].value != NULL);
}
