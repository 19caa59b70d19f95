/* Shared helpers of the unit tests that write through the store (test_store, test_rows,
 * test_payment, test_queue): the temporary database of sqlite_fixtures.h, and a batch written
 * to it by a store of its own. Header-only (static inline functions) so each test binary stays
 * a single translation unit; include it after cmocka.h. */
#ifndef HF_TESTS_STORE_FIXTURES_H
#define HF_TESTS_STORE_FIXTURES_H

#include "sqlite_fixtures.h"
#include "store/store.h"

/* The store's wake-up after each result: these tests wait for nothing but the close. */
static inline void store_fixture_wake(void *context) { (void)context; }

/* Writes batch (as sequence 1) through a store opened on url, and closes the store: closing
 * right after the submit still writes and syncs the batch in flight, and frees it. */
static inline void store_write_batch(const char *url, hf_batch_t *batch) {
    hf_store_t *store = NULL;
    char error[256] = "";
    if (hf_store_open(&store, url, error, sizeof error) != 0) fail_msg("open %s: %s", url, error);
    assert_int_equal(hf_store_start(store, store_fixture_wake, NULL), 0);
    hf_store_submit(store, batch, 1);
    hf_store_close(store);
}

#endif
