/* holdfast backup --data DIR OUT.db (commands.h): a consistent copy of the store while the
 * server runs. SQLite's online backup API copies the pages in steps through a read-only
 * connection that holds one read transaction for the whole copy: in WAL mode the server's
 * commits go on meanwhile, and the copy is the store as of the moment that transaction began
 * (every order acknowledged before then is in it). Holding the one transaction also keeps the
 * backup from restarting when the server writes, which it would under load otherwise. The
 * copy is written to OUT.partial and renamed into place once complete and synced, so OUT is
 * never a half-written file. With --data, the admission tokens' secret (DIR/token_secret, when
 * the server made one) is copied the same way to OUT.token_secret: a store restored without
 * it would have the server make a new secret, and refuse every token handed out before. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cmd/commands.h"
#include "cmd/token_secret.h"
#include "lib/progress.h"

/* Pages copied per step (4 KiB each): small enough for a smooth progress line, large enough
 * that the steps' own cost is nothing. */
#define BACKUP_STEP_PAGES 1024
/* How long a step waits when the destination is busy before trying again. */
#define BACKUP_RETRY_MS 50
/* The token secret's file is 65 bytes (cmd/token_secret.h): one far larger is not ours. */
#define BACKUP_SECRET_SIZE_MAX 4096

static const char USAGE[] =
    "usage: holdfast backup --data DIR OUT.db [--force]\n"
    "       holdfast backup --store sqlite:PATH OUT.db [--force]\n"
    "Copies the store (DIR/holdfast.db) to OUT.db, consistently, while the server runs (or\n"
    "not): the copy is the store as of the backup's start. With --data, the admission\n"
    "tokens' secret DIR/token_secret (when there is one) is copied to OUT.db.token_secret\n"
    "(mode 0600): without it a restored server refuses every admitted user's token. Each is\n"
    "written to a .partial file and renamed when complete; an existing OUT.db or\n"
    "OUT.db.token_secret is refused unless --force. Progress is shown on a terminal.\n"
    "Restore: stop the server, copy OUT.db to DIR/holdfast.db (removing DIR/holdfast.db-wal\n"
    "and -shm) and OUT.db.token_secret to DIR/token_secret, start it. Check a copy with\n"
    "holdfast check --store sqlite:OUT.db.\n"
    "  --data DIR           the server's data directory\n"
    "  --store sqlite:PATH  the store's file instead [HOLDFAST_STORE]\n"
    "  --force              overwrite OUT.db\n"
    "Exit codes: 0 copied, 1 failure (nothing at OUT.db or OUT.db.token_secret is\n"
    "changed), 2 usage.\n";

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
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "copying failed: %s", sqlite3_errstr(rc));
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

/* The admission tokens' secret at path (none: "" or no file) copied to partial as the server
 * keeps it: mode 0600, synced; *copied says whether there was one. 0, or the exit code. */
static int secret_copy(const char *path, const char *partial, bool *copied) {
    *copied = false;
    if (!*path) return HF_EXIT_OK;
    int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0 && errno == ENOENT) return HF_EXIT_OK;
    struct stat status;
    if (in < 0 || fstat(in, &status) != 0 || !S_ISREG(status.st_mode)) {
        int saved = in < 0 ? errno : EINVAL;
        if (in >= 0) close(in);
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "cannot read the token secret %s: %s",
                               path, strerror(saved));
    }
    char text[BACKUP_SECRET_SIZE_MAX + 1];
    ssize_t length = read(in, text, sizeof text);
    close(in);
    bool written = false;
    if (length >= 0 && length <= BACKUP_SECRET_SIZE_MAX) {
        int out = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        written = out >= 0 && fchmod(out, 0600) == 0 &&
                  write(out, text, (size_t)length) == length && fsync(out) == 0;
        if (out >= 0 && close(out) != 0) written = false;
    }
    OPENSSL_cleanse(text, sizeof text);
    if (!written)
        return hf_command_fail(HF_EXIT_FAILURE, "backup",
                               "cannot copy the token secret %s to "
                               "%s",
                               path, partial);
    *copied = true;
    return HF_EXIT_OK;
}

/* Where a backup writes: OUT and its partial file, and the secret's beside it. */
typedef struct outputs {
    const char *out;
    char partial[4200], secret[4200], secret_partial[4300];
    bool secret_copied;
} outputs_t;

static void outputs_discard(const outputs_t *outputs) {
    unlink(outputs->partial);
    unlink(outputs->secret_partial);
}

/* The store's copy into outputs->partial: 0, or the exit code after saying why. */
static int store_copy(const char *store, const outputs_t *outputs) {
    sqlite3 *source = NULL, *destination = NULL;
    int code = HF_EXIT_FAILURE;
    if (sqlite3_open_v2(store, &source, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        code = fail_sqlite("cannot open the store", source);
    else if (sqlite3_busy_timeout(source, 5000),
             sqlite3_open_v2(outputs->partial, &destination,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        code = fail_sqlite("cannot create the copy", destination);
    else if ((code = copy_pages(source, destination)) == HF_EXIT_OK)
        code = copy_settle(destination);
    sqlite3_close(source);
    if (sqlite3_close(destination) != SQLITE_OK && code == HF_EXIT_OK)
        code = hf_command_fail(HF_EXIT_FAILURE, "backup", "cannot close the copy");
    return code;
}

/* The partial files renamed into place, the secret's first (a copy's secret never belongs to
 * another copy); with no secret copied, an older backup's secret at OUT.token_secret goes. */
static int outputs_settle(const outputs_t *outputs) {
    char side[4300];
    /* A stale log beside an overwritten OUT would be replayed into the new copy. */
    snprintf(side, sizeof side, "%s-wal", outputs->out);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", outputs->out);
    unlink(side);
    if (!outputs->secret_copied) unlink(outputs->secret);
    const char *failed = NULL;
    if (outputs->secret_copied && rename(outputs->secret_partial, outputs->secret) != 0)
        failed = outputs->secret;
    else if (rename(outputs->partial, outputs->out) != 0) failed = outputs->out;
    if (failed) {
        int saved = errno;
        outputs_discard(outputs);
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "cannot move the copy to %s: %s", failed,
                               strerror(saved));
    }
    sync_directory_of(outputs->out);
    return HF_EXIT_OK;
}

static int backup_run(const char *store, const char *data, const char *out, bool force) {
    struct stat seen;
    if (stat(store, &seen) != 0)
        return hf_command_fail(HF_EXIT_FAILURE, "backup", "no store at %s: %s", store,
                               strerror(errno));
    outputs_t outputs = {.out = out};
    snprintf(outputs.partial, sizeof outputs.partial, "%s.partial", out);
    snprintf(outputs.secret, sizeof outputs.secret, "%s.%s", out, HF_TOKEN_SECRET_FILE);
    snprintf(outputs.secret_partial, sizeof outputs.secret_partial, "%s.partial", outputs.secret);
    if (!force && (lstat(out, &seen) == 0 || lstat(outputs.secret, &seen) == 0))
        return hf_command_fail(HF_EXIT_FAILURE, "backup",
                               "%s exists: pass --force to "
                               "overwrite it",
                               lstat(out, &seen) == 0 ? out : outputs.secret);
    char side[4300];
    snprintf(side, sizeof side, "%s-journal", outputs.partial);
    unlink(side);
    outputs_discard(&outputs);
    char secret[4100] = "";
    if (data) snprintf(secret, sizeof secret, "%s/%s", data, HF_TOKEN_SECRET_FILE);
    int code = secret_copy(secret, outputs.secret_partial, &outputs.secret_copied);
    if (code == HF_EXIT_OK) code = store_copy(store, &outputs);
    if (code == HF_EXIT_OK) code = outputs_settle(&outputs);
    if (code != HF_EXIT_OK) {
        outputs_discard(&outputs);
        return code;
    }
    printf("backup: %s copied to %s\n", store, out);
    if (outputs.secret_copied) printf("backup: %s copied to %s\n", secret, outputs.secret);
    else if (!data)
        printf("backup: no --data given, so no token_secret copied (copy DIR/token_secret "
               "beside the store yourself, or admitted users' tokens are refused after a "
               "restore)\n");
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
    return backup_run(store, options[0].value, positional[0], options[2].value != NULL);
}
