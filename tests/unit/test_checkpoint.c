/* Unit tests of store/sqlite/checkpoint.c, the background checkpointer. The log starts over only when
 * a write transaction begins with every frame copied, which never happens by itself while the
 * writer commits without pause; the checkpointer must still make it start over once per cycle,
 * keep it near its threshold, and spend a few background rounds on a cycle, not one a commit.
 * The writer goes through the store's VFS. Each commit syncs the log, as the store's syncer
 * does before an answer, so commits come at the pace of the disk, as in the server, whatever
 * the machine's speed; the test's threshold is small so a cycle takes a hundred commits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sqlite_fixtures.h"

#include "store/sqlite/checkpoint.h"
#include "store/sqlite/vfs.h"

/* Log pages at which the test's checkpointer begins a cycle. */
#define TEST_THRESHOLD 200
/* Commits of the steady-load test, each of two rows of most of a page: about 15 cycles. */
#define TEST_COMMITS 1500

typedef struct fixture {
    temporary_database_t database;
    sqlite3 *writer;
} fixture_t;

static int fixture_setup(void **state) {
    fixture_t *fixture = calloc(1, sizeof *fixture);
    if (!temporary_database_make(&fixture->database, "checkpoint")) return -1;
    char error[256] = "";
    const char *vfs = hf_store_vfs(false, error, sizeof error);
    if (vfs == NULL) fail_msg("%s", error);
    fixture->writer = open_with(fixture->database.path, vfs);
    exec_ok(fixture->writer, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                             "CREATE TABLE rows(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)");
    *state = fixture;
    return 0;
}

static int fixture_teardown(void **state) {
    fixture_t *fixture = *state;
    if (fixture->writer) sqlite3_close(fixture->writer);
    temporary_database_remove(&fixture->database);
    free(fixture);
    return 0;
}

/* One transaction of two rows of 3,000 bytes: a little more than two log frames. */
static void commit_two_rows(sqlite3 *writer) {
    exec_ok(writer, "BEGIN IMMEDIATE;"
                    "INSERT INTO rows(payload) VALUES(randomblob(3000));"
                    "INSERT INTO rows(payload) VALUES(randomblob(3000));"
                    "COMMIT");
}

/* Commits back to back, as the store's writer does under load. */
static void test_log_starts_over_under_steady_commits(void **state) {
    fixture_t *fixture = *state;
    hf_checkpointer_t *checkpointer = hf_checkpointer_start_at(fixture->writer, TEST_THRESHOLD);
    assert_non_null(checkpointer);
    for (int i = 0; i < TEST_COMMITS; i++) commit_two_rows(fixture->writer);
    hf_checkpointer_counts_t counts;
    hf_checkpointer_counts(checkpointer, &counts);
    hf_checkpointer_stop(checkpointer);
    print_message("rounds %llu, writer rounds %llu, restarts %llu, largest log %d pages\n",
                  counts.rounds, counts.writer_rounds, counts.restarts, counts.pages_most);
    /* About 3,000 frames over cycles of 200 to 400: at least 7 restarts, whatever the timing. */
    assert_true(counts.restarts >= 7);
    /* A cycle ends once the log has grown another threshold and no round runs: at most two
     * thresholds and what the writer commits during one round (a few syncs, so a few commits).
     * Without the cycles the log kept every frame: over 6,000 pages here. */
    assert_true(counts.pages_most <= 3 * TEST_THRESHOLD);
    /* A round is asked for only while more than HF_CHECKPOINT_FINISH_PAGES are uncopied, so
     * a cycle of at most two thresholds has at most 2 * 200 / 64 + 1 of them. */
    assert_true(counts.rounds <= 8 * (counts.restarts + 1));
    /* The log starts over only after a checkpoint copied every frame: most often the writer's
     * own at a cycle's end, but on a loaded machine a background round can copy everything
     * between two slow commits too (the clean clone's run: 25 writer rounds, 26 restarts). */
    assert_true(counts.writer_rounds > 0);
    assert_true(counts.restarts <= counts.writer_rounds + counts.rounds);
    /* Every commit is in the database once the log is gone. */
    sqlite3 *reader = open_with(fixture->database.path, NULL);
    assert_int_equal(query_number(reader, "SELECT count(*) FROM rows"), 2 * TEST_COMMITS);
    sqlite3_close(reader);
}

/* Commits too few to reach the threshold: no checkpoint at all, and the log keeps them. */
static void test_no_rounds_below_the_threshold(void **state) {
    fixture_t *fixture = *state;
    hf_checkpointer_t *checkpointer = hf_checkpointer_start_at(fixture->writer, TEST_THRESHOLD);
    assert_non_null(checkpointer);
    for (int i = 0; i < 40; i++) commit_two_rows(fixture->writer);
    hf_checkpointer_counts_t counts;
    hf_checkpointer_counts(checkpointer, &counts);
    assert_int_equal(counts.rounds, 0);
    assert_int_equal(counts.writer_rounds, 0);
    assert_int_equal(counts.restarts, 0);
    assert_true(counts.pages_most >= 80 && counts.pages_most < TEST_THRESHOLD);
    hf_checkpointer_stop(checkpointer);
}

int main(void) {
#define CHECKPOINT_TEST(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        CHECKPOINT_TEST(test_log_starts_over_under_steady_commits),
        CHECKPOINT_TEST(test_no_rounds_below_the_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
