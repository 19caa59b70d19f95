# Benchmarks (`make bench`, see bench/README.md): the HTTP load generator and the core
# micro-benchmark. Both are release builds, like the server they measure.
BENCH_CFLAGS := $(BASE_CFLAGS) $(OPT_CFLAGS)

$(BUILD)/bench/loadgen: bench/loadgen.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(pkg_cflags) -o $@ $< $(pkg_libs)

$(BUILD)/bench/corebench: bench/corebench.c $(CORE_RELEASE_OBJECTS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(pkg_cflags) -o $@ $^ $(pkg_libs)

.PHONY: bench-tools
bench-tools: $(BUILD)/bench/loadgen $(BUILD)/bench/corebench

bench: bench-tools

# Instructions per hold answer, by thread, under callgrind: exact where timings are noisy.
.PHONY: bench-profile
bench-profile: $(BUILD)/holdfast $(BUILD)/bench/loadgen
	bench/profile.sh bench/results/profile-$$(date -u +%Y%m%dT%H%M%SZ)
