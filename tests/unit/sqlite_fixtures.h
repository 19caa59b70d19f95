/* Shared helpers of the unit tests that open SQLite databases (test_vfs, test_checkpoint,
 * test_history) or the store on one (test_store, test_rows, test_payment, test_queue): a
 * database in a temporary directory of its own, with the store's URL for it; a statement that
 * must succeed, a number read back, a connection opened on a given VFS.
 * Header-only (static inline functions) so each test binary stays a single translation unit;
 * include it after cmocka.h. */
#ifndef HF_TESTS_SQLITE_FIXTURES_H
#define HF_TESTS_SQLITE_FIXTURES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sqlite3.h>

/* A database file in a directory of its own under /tmp, removed with its log and index. */
typedef struct temporary_database {
    char directory[64];
    char path[128];
    char url[160]; /* sqlite:PATH, what hf_store_open takes */
} temporary_database_t;

/* Makes /tmp/holdfast-NAME-XXXXXX and sets path to test.db in it; false if mkdtemp failed. */
static inline bool temporary_database_make(temporary_database_t *database, const char *name) {
    snprintf(database->directory, sizeof database->directory, "/tmp/holdfast-%s-XXXXXX", name);
    if (mkdtemp(database->directory) == NULL) return false;
    snprintf(database->path, sizeof database->path, "%s/test.db", database->directory);
    snprintf(database->url, sizeof database->url, "sqlite:%s", database->path);
    return true;
}

/* Removes the database, its -wal, -shm and -journal files and the directory (connections
 * closed). */
static inline void temporary_database_remove(const temporary_database_t *database) {
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    char file[200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(file, sizeof file, "%s%s", database->path, suffixes[i]);
        unlink(file);
    }
    rmdir(database->directory);
}

/* Runs sql (one or more statements) and fails the test with SQLite's message if it fails. */
static inline void exec_ok(sqlite3 *database, const char *sql) {
    char *message = NULL;
    int rc = sqlite3_exec(database, sql, NULL, NULL, &message);
    if (rc != SQLITE_OK) fail_msg("%s: %s", sql, message ? message : sqlite3_errstr(rc));
}

/* The first column of the first row of sql, which must return a row. */
static inline long long query_number(sqlite3 *database, const char *sql) {
    sqlite3_stmt *statement = NULL;
    assert_int_equal(sqlite3_prepare_v2(database, sql, -1, &statement, NULL), SQLITE_OK);
    int rc = sqlite3_step(statement);
    if (rc != SQLITE_ROW) fail_msg("%s: %s", sql, sqlite3_errmsg(database));
    long long value = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    return value;
}

/* Opens (creating) path on vfs (NULL: SQLite's default) with a 5 s busy timeout. */
static inline sqlite3 *open_with(const char *path, const char *vfs) {
    sqlite3 *database = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &database, flags, vfs) != SQLITE_OK)
        fail_msg("open %s: %s", path, database ? sqlite3_errmsg(database) : "no memory");
    sqlite3_busy_timeout(database, 5000);
    return database;
}

#endif
