# The developer's shortcuts between one case and `make test` (README.md, "Tests"). Included by
# the Makefile, which defines BUILD, UNIT_TESTS and TEST_DEPS_STAMP.
#
#   make test-one T=FILE[:PATTERN]  one unit-test binary, or the cases of it that PATTERN names
#   make test-quick                 the release unit tests and black-box suite (a few minutes)
#
# T's FILE is a file of tests/unit without "test_" and ".c" (T=core is tests/unit/test_core.c;
# a "/" stands for "_", so T=core/hold is tests/unit/test_core_hold.c); PATTERN is a cmocka glob
# over the names of its cases ('*' any run of characters, '?' one), as HOLDFAST_TEST_FILTER
# takes it (tests/unit/filter.c): T=core:test_hold_expiry, T='core:test_hold_*'. Without it
# every case of the file runs. SAN=1 runs the ASan+UBSan build instead of the release one.
# A PATTERN that names no case fails, so a typo is not taken for a pass.

.PHONY: test-one test-quick

TEST_ONE_HEAD := $(firstword $(subst :, ,$(T)))
TEST_ONE_FILE := $(subst /,_,$(patsubst test_%,%,$(TEST_ONE_HEAD)))
TEST_ONE_PATTERN := $(if $(findstring :,$(T)),$(patsubst $(TEST_ONE_HEAD):%,%,$(T)))
TEST_ONE_FLAVOUR := $(if $(filter 1,$(SAN)),asan,release)
TEST_ONE_BINARY := $(BUILD)/$(TEST_ONE_FLAVOUR)/tests/test_$(TEST_ONE_FILE)

# Checked when the goal is named, before anything is built: the message lists the files.
ifneq ($(filter test-one,$(MAKECMDGOALS)),)
ifeq ($(filter test_$(TEST_ONE_FILE),$(UNIT_TESTS)),)
$(error T=$(T): no tests/unit/test_$(TEST_ONE_FILE).c. T is FILE[:PATTERN], FILE one of: \
        $(patsubst test_%,%,$(UNIT_TESTS)))
endif
endif

# The sanitizers' settings are scripts/test.sh's; the binary's status is kept across the pipe.
test-one: $(TEST_ONE_BINARY)
	@log=$$(mktemp); \
	{ ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:halt_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  HOLDFAST_TEST_FILTER='$(TEST_ONE_PATTERN)' $(TEST_ONE_BINARY); echo $$? >$$log.status; } \
	    2>&1 | tee $$log; \
	status=$$(cat $$log.status); \
	if [ "$$status" -eq 0 ] && grep -q '^\[==========\] 0 test(s) run' $$log; then \
	    echo "test-one: no case of $(TEST_ONE_BINARY) matches '$(TEST_ONE_PATTERN)'" >&2; \
	    status=1; \
	fi; \
	rm -f $$log $$log.status; exit $$status

# The layout check, every unit test and the black-box suite, release builds only: no
# sanitizers, no PostgreSQL, browser, contract, benchmark or reliability stages (make test).
test-quick: $(TEST_DEPS_STAMP) $(BUILD)/holdfast $(addprefix $(BUILD)/release/tests/,$(UNIT_TESTS))
	@scripts/test.sh --quick
