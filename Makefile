# Holdfast. `make` builds build/holdfast; `make run` starts it with a demo event; `make test`
# runs the whole suite, `make test-quick` its release part and `make test-one T=FILE[:PATTERN]`
# one unit test (mk/tests.mk). Missing Debian packages are installed by scripts/deps.sh first.

CC ?= cc
LLHTTP_DIR := /usr/share/llhttp
LLHTTP_INCLUDE := /usr/share/include/llhttp
PACKAGES := libuv jansson sqlite3 libcrypto libpq libcurl

BUILD := build
DEPS_STAMP := $(BUILD)/.deps-ok
TEST_DEPS_STAMP := $(BUILD)/.test-deps-ok

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -Isrc -I$(LLHTTP_INCLUDE) $(WARNINGS)
OPT_CFLAGS := -O2
SAN_CFLAGS := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

pkg_cflags = $(shell pkg-config --cflags $(PACKAGES) 2>/dev/null)
pkg_libs = $(shell pkg-config --libs $(PACKAGES) 2>/dev/null) -lpthread -lm

# Each room's sources, its subfolders included (core/dispatch/, store/sqlite/, ...).
sources_under = $(sort $(shell find $(1) -name '*.c' 2>/dev/null))
LIB_SOURCES := $(call sources_under,src/lib)
# The core with the small utilities it stands on: what the unit tests and benchmarks link.
CORE_SOURCES := $(LIB_SOURCES) $(call sources_under,src/core)
STORE_SOURCES := $(call sources_under,src/store)
# Everything of the server but main().
LIBRARY_SOURCES := $(CORE_SOURCES) $(STORE_SOURCES) \
                   $(call sources_under,src/net src/engine src/cluster src/api)
SERVER_SOURCES := $(LIBRARY_SOURCES) $(call sources_under,src/cmd)
LLHTTP_SOURCES := llhttp.c api.c http.c

# Objects of one flavour (release or sanitized) live in their own folder.
objects = $(patsubst src/%.c,$(BUILD)/$(1)/%.o,$(2))
llhttp_objects = $(patsubst %.c,$(BUILD)/$(1)/llhttp/%.o,$(LLHTTP_SOURCES))

RELEASE_OBJECTS := $(call objects,release,$(SERVER_SOURCES)) $(call llhttp_objects,release) \
                   $(BUILD)/release/generated/assets.o
ASAN_OBJECTS := $(call objects,asan,$(SERVER_SOURCES)) $(call llhttp_objects,asan) \
                $(BUILD)/asan/generated/assets.o

# The box-office page (ui/) is embedded into the binary: nothing is read from disk at run time.
UI_FILES := $(sort $(wildcard ui/*.html ui/*.css ui/*.js ui/*.svg ui/*.png ui/*.ico))

.PHONY: all run test test-quick clean deps bench cluster
all: $(BUILD)/holdfast

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh --check >/dev/null 2>&1 || scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

$(TEST_DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh --check --test >/dev/null 2>&1 || scripts/deps.sh --test
	@mkdir -p $(BUILD) && touch $@

deps: $(DEPS_STAMP)

# On a fresh machine the packages are installed while the Makefile is read, before make looks
# at any file: make reads a directory once and keeps what it saw, so llhttp's sources, installed
# by the stamp's rule in the middle of a run, stayed unseen ("No rule to make target").
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(DEPS_STAMP)),)
DEPS_INSTALL_STATUS := $(shell scripts/deps.sh --check >/dev/null 2>&1 || scripts/deps.sh >&2; \
                               echo $$?)
ifneq ($(lastword $(DEPS_INSTALL_STATUS)),0)
$(error scripts/deps.sh could not install the packages the build needs)
endif
endif
endif

$(BUILD)/release/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT_CFLAGS) $(pkg_cflags) -MMD -MP -c $< -o $@

$(BUILD)/asan/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(pkg_cflags) -MMD -MP -c $< -o $@

# llhttp ships as C sources in Debian's node-llhttp: compiled here, never committed. Its own
# warnings are not ours to fix.
$(BUILD)/release/llhttp/%.o: $(LLHTTP_DIR)/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -w -I$(LLHTTP_INCLUDE) -c $< -o $@

$(BUILD)/asan/llhttp/%.o: $(LLHTTP_DIR)/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -w $(SAN_CFLAGS) -I$(LLHTTP_INCLUDE) -c $< -o $@

$(BUILD)/embed: tools/embed.c | $(DEPS_STAMP)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/generated/assets.c: $(BUILD)/embed $(UI_FILES)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ $(UI_FILES)

$(BUILD)/release/generated/assets.o: $(BUILD)/generated/assets.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT_CFLAGS) -c $< -o $@

$(BUILD)/asan/generated/assets.o: $(BUILD)/generated/assets.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -c $< -o $@

$(BUILD)/holdfast: $(RELEASE_OBJECTS)
	$(CC) $(OPT_CFLAGS) -o $@ $^ $(pkg_libs)

$(BUILD)/asan/holdfast: $(ASAN_OBJECTS)
	$(CC) $(SAN_CFLAGS) -o $@ $^ $(pkg_libs)

# ---- tests ----
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
CORE_RELEASE_OBJECTS := $(call objects,release,$(CORE_SOURCES))
CORE_ASAN_OBJECTS := $(call objects,asan,$(CORE_SOURCES))
STORE_RELEASE_OBJECTS := $(call objects,release,$(STORE_SOURCES))
STORE_ASAN_OBJECTS := $(call objects,asan,$(STORE_SOURCES))
# The parts of net/ that are pure functions, tested without a socket.
NET_PURE_SOURCES := src/net/flat_json.c
# The unit tests link these besides the core and the store: the pure parts of net/, the
# engine's table of errors, which names the core's errors in their messages, and the streams'
# replay window (engine/replay.h, pure).
UNIT_EXTRA_SOURCES := $(NET_PURE_SOURCES) src/engine/errors.c src/engine/replay.c
# The admission token (engine/token.h): pure apart from OpenSSL's HMAC.
UNIT_EXTRA_SOURCES += src/engine/token.c
# The hash of a body as a JSON value (engine/body_hash.h, idempotency keys): pure.
UNIT_EXTRA_SOURCES += src/engine/body_hash.c
# A notification's id, type, body and retries (engine/notification.h): pure.
UNIT_EXTRA_SOURCES += src/engine/notification.c
# The decoding of calendars' bodies (api/calendar_decode.h): jansson, the flat reader (a pure
# net/ file) and the core only.
UNIT_EXTRA_SOURCES += src/api/calendar_decode.c
# The HTTP server (net/http.c and the files it is split into): every net/ file but the pure
# ones and the embedded assets, so a new file of the server joins by itself.
NET_HTTP_SOURCES := $(filter-out $(NET_PURE_SOURCES) src/net/assets.c,$(call sources_under,src/net))
# Linked into every unit test: HOLDFAST_TEST_FILTER and HOLDFAST_TEST_SKIP pick cases by name
# (tests/unit/filter.c; `make test-one`, mk/tests.mk).
UNIT_FILTER_SOURCE := tests/unit/filter.c

$(BUILD)/release/tests/%: tests/unit/%.c $(UNIT_FILTER_SOURCE) $(CORE_RELEASE_OBJECTS) \
        $(STORE_RELEASE_OBJECTS) $(call objects,release,$(UNIT_EXTRA_SOURCES)) | $(TEST_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs) -lcmocka

$(BUILD)/asan/tests/%: tests/unit/%.c $(UNIT_FILTER_SOURCE) $(CORE_ASAN_OBJECTS) \
        $(STORE_ASAN_OBJECTS) $(call objects,asan,$(UNIT_EXTRA_SOURCES)) | $(TEST_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs) -lcmocka

# The HTTP layer alone, behind an echo handler (tests/net/test_http.py drives it).
$(BUILD)/asan/tests/echo_server: tests/net/echo_server.c $(call objects,asan,$(NET_HTTP_SOURCES)) \
        $(call objects,asan,$(LIB_SOURCES)) $(call llhttp_objects,asan)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs)

TEST_BINARIES := $(addprefix $(BUILD)/release/tests/,$(UNIT_TESTS)) \
                 $(addprefix $(BUILD)/asan/tests/,$(UNIT_TESTS)) $(BUILD)/asan/tests/echo_server

# The browser test's npm packages (playwright-core; the browser is Debian's chromium).
BROWSER_MODULES := tests/browser/node_modules/.package-lock.json
$(BROWSER_MODULES): tests/browser/package-lock.json | $(TEST_DEPS_STAMP)
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error

test: $(TEST_DEPS_STAMP) $(BUILD)/holdfast $(BUILD)/asan/holdfast $(TEST_BINARIES) $(BROWSER_MODULES) \
      fuzz-build $(BUILD)/tsan/holdfast $(BUILD)/asan/tests/idempotency_order $(BUILD)/bench/loadgen \
      $(BUILD)/bench/holdfast-ceiling
	@scripts/test.sh

# The demo: a fresh server on 127.0.0.1:8080 with its data in ./data and a demo event.
run: $(BUILD)/holdfast
	@scripts/run-demo.sh

# Several nodes: a throwaway PostgreSQL and three nodes on loopback (scripts/cluster.sh), their
# data under $(BUILD)/cluster. The recipe is one plain command, which make runs without a shell
# between: on Ctrl-C the script stops everything and exits 0, and make reports no error.
cluster: export HOLDFAST_BINARY := $(BUILD)/holdfast
cluster: $(BUILD)/holdfast
	@scripts/cluster.sh $(BUILD)/cluster

bench: $(BUILD)/holdfast
	@scripts/deps.sh --bench
	@bench/run.sh

clean:
	rm -rf $(BUILD)

# Further targets (benchmarks, reliability, fuzzing) each live in a file of their own.
-include $(wildcard mk/*.mk)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
