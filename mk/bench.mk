# Benchmarks (`make bench`, see bench/README.md): the HTTP load generator and the core
# micro-benchmark. Both are release builds, like the server they measure.
BENCH_CFLAGS := $(BASE_CFLAGS) $(OPT_CFLAGS)

$(BUILD)/bench/loadgen: bench/loadgen.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(pkg_cflags) -o $@ $< $(pkg_libs)

# The notify part's receiver: answers every POST at once (bench/run.sh).
$(BUILD)/bench/notify_receiver: bench/notify_receiver.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(pkg_cflags) -o $@ $< $(pkg_libs)

$(BUILD)/bench/corebench: bench/corebench.c $(CORE_RELEASE_OBJECTS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs)

# The ceiling build: the same server, whose store skips its SQL, its fdatasync or both when
# HOLDFAST_CEILING says so (src/store/fault.h), to show what the durable step costs on the
# machine `make bench` runs on. Only the three store files that hold the switch are compiled
# again; `make` never builds it, and build/holdfast has no such switch.
CEILING_STORE_SOURCES := src/store/fault.c src/store/sqlite/sqlite.c src/store/sqlite/sync.c
CEILING_OBJECTS := $(filter-out $(call objects,release,$(CEILING_STORE_SOURCES)),$(RELEASE_OBJECTS)) \
                   $(call objects,ceiling,$(CEILING_STORE_SOURCES))

$(BUILD)/ceiling/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT_CFLAGS) -DHF_STORE_CEILING $(pkg_cflags) -MMD -MP -c $< -o $@

$(BUILD)/bench/holdfast-ceiling: $(CEILING_OBJECTS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT_CFLAGS) -o $@ $^ $(pkg_libs)

.PHONY: bench-tools
bench-tools: $(BUILD)/bench/loadgen $(BUILD)/bench/corebench $(BUILD)/bench/holdfast-ceiling \
             $(BUILD)/bench/notify_receiver

bench: bench-tools

# Instructions per hold answer, by thread, under callgrind: exact where timings are noisy.
.PHONY: bench-profile
bench-profile: $(BUILD)/holdfast $(BUILD)/bench/loadgen
	bench/profile.sh bench/results/profile-$$(date -u +%Y%m%dT%H%M%SZ)
