/* Runs some of a unit-test binary's cases, by name: HOLDFAST_TEST_FILTER=PATTERN runs only the
 * cases whose name matches PATTERN, HOLDFAST_TEST_SKIP=PATTERN skips those that match (cmocka's
 * globs: '*' any run of characters, '?' one), e.g.
 *     HOLDFAST_TEST_FILTER='test_hold_*' build/release/tests/test_core
 * `make test-one T=FILE[:PATTERN]` sets the first (README.md, "Tests").
 *
 * The Makefile links this file into every binary of tests/unit, and it applies the patterns
 * before main() runs, so no test's main() has to call anything: a new test file is covered by
 * itself. cmocka keeps the pointer it is given and reads the pattern when a group runs;
 * getenv's string lives as long as the process. Neither set: every case runs, as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

__attribute__((constructor)) static void apply_filters(void) {
    const char *filter = getenv("HOLDFAST_TEST_FILTER");
    const char *skip = getenv("HOLDFAST_TEST_SKIP");
    if (filter != NULL && filter[0] != '\0') cmocka_set_test_filter(filter);
    if (skip != NULL && skip[0] != '\0') cmocka_set_skip_filter(skip);
}
