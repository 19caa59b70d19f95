# Reliability: crash harness, storage faults, fuzzing, hostile input, sanitizers and static
# analysis (docs/RELIABILITY.md). Included by the Makefile, which defines BUILD, BASE_CFLAGS,
# SAN_CFLAGS, pkg_cflags, pkg_libs, CORE_SOURCES, LIBRARY_SOURCES, SERVER_SOURCES, LLHTTP_DIR and LLHTTP_INCLUDE.
#
#   make crash-test        kill -9 under load, 25 rounds (CRASH_ROUNDS=N, CRASH_SEED=N)
#   make fault-test        storage faults: failed batch, write, fsync, full database and disk
#   make hostile-test      malformed HTTP, slow clients, the connection cap, RSS bound
#   make fuzz              every libFuzzer target for FUZZ_SECONDS (default 300) each
#   make fuzz-regression   every target over its corpus and saved crashes, once (no fuzzing)
#   make tsan-test         ThreadSanitizer build of the server under the crash and fault tests
#   make valgrind-test     the unit tests under valgrind (memcheck, no leaks, no errors)
#   make lint              the layout and openapi limits checks, cppcheck and clang-tidy
#   make idempotency-order-test  regression test of a defect in src/engine/idempotency.c
#   make reliability-quick the bounded versions, as scripts/test.sh runs them (~2 minutes)

.PHONY: crash-test fault-test hostile-test fuzz fuzz-build fuzz-regression fuzz-quick \
        tsan-test valgrind-test lint layout-check openapi-limits-check cppcheck clang-tidy \
        reliability-quick idempotency-order-test

CRASH_ROUNDS ?= 25
CRASH_SEED ?=
FUZZ_SECONDS ?= 300
FUZZ_QUICK_SECONDS ?= 10
RELIABILITY_BINARY ?= $(BUILD)/holdfast

crash-test: $(BUILD)/holdfast
	python3 tests/crash/crash_test.py --binary $(RELIABILITY_BINARY) --rounds $(CRASH_ROUNDS) \
	    $(if $(CRASH_SEED),--seed $(CRASH_SEED))

fault-test: $(BUILD)/holdfast
	python3 tests/crash/fault_test.py --binary $(RELIABILITY_BINARY)

hostile-test: $(BUILD)/holdfast
	python3 tests/hostile/hostile_test.py --binary $(RELIABILITY_BINARY)

# ---- fuzzing (clang with libFuzzer: Debian's clang and libclang-rt-14-dev) ----

FUZZ_CC ?= clang
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_TARGETS := fuzz_core fuzz_routes fuzz_http fuzz_flat_json fuzz_signature
# The admission token's verifier (engine/token.c).
FUZZ_TARGETS += fuzz_token
# The span texts of calendars (lib/spans.c).
FUZZ_TARGETS += fuzz_spans
FUZZ_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -I$(LLHTTP_INCLUDE) $(FUZZ_SANITIZE) \
               -fsanitize=fuzzer-no-link -Wall -Wextra -Wno-unused-parameter
# Everything of the server but main(): the targets drive the layers in-process.
FUZZ_LIB_SOURCES := $(LIBRARY_SOURCES)
FUZZ_LIB_OBJECTS := $(patsubst src/%.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SOURCES)) \
                    $(patsubst %.c,$(FUZZ_BUILD)/obj/llhttp/%.o,$(LLHTTP_SOURCES)) \
                    $(if $(wildcard src/net/assets.h),$(FUZZ_BUILD)/obj/generated/assets.o)

$(FUZZ_BUILD)/obj/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(pkg_cflags) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/obj/llhttp/%.o: $(LLHTTP_DIR)/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O1 -w $(FUZZ_SANITIZE) -fsanitize=fuzzer-no-link \
	    -I$(LLHTTP_INCLUDE) -c $< -o $@

$(FUZZ_BUILD)/obj/generated/assets.o: $(BUILD)/generated/assets.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_LIB_OBJECTS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(pkg_cflags) -fsanitize=fuzzer -o $@ $^ $(pkg_libs)

fuzz-build: $(addprefix $(FUZZ_BUILD)/,$(FUZZ_TARGETS))

# Reached only through the pattern rule above: without this make deletes them after each link.
.SECONDARY: $(FUZZ_LIB_OBJECTS)

# Each target fuzzes for FUZZ_SECONDS, growing its corpus in build/fuzz/corpus/NAME (seeded from
# tests/fuzz/corpus/NAME); crashes land in build/fuzz/artifacts/ and fail the target.
fuzz: fuzz-build
	@tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_BUILD) $(FUZZ_TARGETS)

fuzz-quick: fuzz-build
	@tests/fuzz/run.sh fuzz $(FUZZ_QUICK_SECONDS) $(FUZZ_BUILD) $(FUZZ_TARGETS)

fuzz-regression: fuzz-build
	@tests/fuzz/run.sh regression 0 $(FUZZ_BUILD) $(FUZZ_TARGETS)

# ---- ThreadSanitizer: the threaded parts (engine loop + store thread) ----

TSAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
TSAN_OBJECTS := $(patsubst src/%.c,$(BUILD)/tsan/%.o,$(SERVER_SOURCES)) \
                $(patsubst %.c,$(BUILD)/tsan/llhttp/%.o,$(LLHTTP_SOURCES)) \
                $(if $(wildcard src/net/assets.h),$(BUILD)/tsan/generated/assets.o)

$(BUILD)/tsan/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(TSAN_CFLAGS) $(pkg_cflags) -MMD -MP -c $< -o $@

$(BUILD)/tsan/llhttp/%.o: $(LLHTTP_DIR)/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -w $(TSAN_CFLAGS) -I$(LLHTTP_INCLUDE) -c $< -o $@

$(BUILD)/tsan/generated/assets.o: $(BUILD)/generated/assets.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(TSAN_CFLAGS) -c $< -o $@

$(BUILD)/tsan/holdfast: $(TSAN_OBJECTS)
	$(CC) $(TSAN_CFLAGS) -o $@ $^ $(pkg_libs)

# halt_on_error: a race fails the server, which the tests then see as a crash or a bad exit.
tsan-test: $(BUILD)/tsan/holdfast
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" python3 tests/crash/crash_test.py \
	    --binary $(BUILD)/tsan/holdfast --rounds 5
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" python3 tests/crash/fault_test.py \
	    --binary $(BUILD)/tsan/holdfast

# ---- valgrind on the unit tests (release build: valgrind and ASan do not mix) ----

valgrind-test: $(addprefix $(BUILD)/release/tests/,$(UNIT_TESTS))
	@tests/crash/valgrind.sh $^

# ---- regression tests of defects found here in code owned elsewhere (docs/RELIABILITY.md) ----

# idempotency.o also answers requests with a key: the replies and the record of a kept answer
# in the open batch come with it, and those lean on every module they use, so the test links
# the whole server but main(), as the fuzz targets do.
$(BUILD)/asan/tests/idempotency_order: tests/crash/idempotency_order.c \
        $(filter-out $(BUILD)/asan/cmd/%,$(ASAN_OBJECTS))
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs)

idempotency-order-test: $(BUILD)/asan/tests/idempotency_order
	$(BUILD)/asan/tests/idempotency_order

# ---- static analysis ----

LINT_SOURCES = $(filter-out src/net/assets.c,$(SERVER_SOURCES)) $(wildcard tests/fuzz/*.c tests/crash/*.c)

cppcheck:
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,style,portability,performance \
	    --inline-suppr --suppressions-list=cppcheck-suppressions.txt \
	    -D_GNU_SOURCE -Isrc -I$(LLHTTP_INCLUDE) $(LINT_SOURCES)

clang-tidy: $(DEPS_STAMP)
	clang-tidy --quiet --warnings-as-errors='*' $(LINT_SOURCES) -- \
	    -std=c11 -D_GNU_SOURCE -Isrc -I$(LLHTTP_INCLUDE) $(pkg_cflags)

# The layout rules of docs/DESIGN.md: no include cycle among src/'s modules, no file over 800
# lines, no function over 60.
layout-check:
	python3 scripts/check_layout.py src

# docs/openapi.yaml's bounds against src/lib/limits.h (scripts/check_openapi_limits.py).
openapi-limits-check:
	python3 scripts/check_openapi_limits.py

lint: layout-check openapi-limits-check cppcheck clang-tidy

# ---- the bounded run for make test ----
# The same commands scripts/test.sh runs (docs/RELIABILITY.md), as one target to try them alone.
reliability-quick: $(BUILD)/holdfast $(BUILD)/asan/holdfast fuzz-build $(BUILD)/tsan/holdfast \
        $(BUILD)/asan/tests/idempotency_order $(addprefix $(BUILD)/release/tests/,$(UNIT_TESTS))
	@tests/crash/quick.sh $(BUILD)

