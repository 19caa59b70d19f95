#!/usr/bin/env bash
# The bounded reliability runs, as `make reliability-quick` and scripts/test.sh run them: each
# stage prints `N passed, N failed`; this adds them up and exits 1 when anything failed.
#   tests/crash/quick.sh [BUILD_DIR]     (default build; binaries must already be built)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
passed=0 failed=0 failures=()
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

stage() {
    local name=$1 log
    shift
    log=$(mktemp)
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    local line ok bad
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    ok=$(echo "$line" | grep -Eo '^[0-9]+')
    bad=$(echo "$line" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+')
    ok=${ok:-0} bad=${bad:-0}
    if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then bad=1; fi
    passed=$((passed + ok)) failed=$((failed + bad))
    if [ "$bad" -ne 0 ]; then failures+=("$name"); fi
    printf '== %s: %d passed, %d failed (%ds)\n' "$name" "$ok" "$bad" $((SECONDS - start))
    rm -f "$log"
}

stage "crash (5 rounds)" python3 tests/crash/crash_test.py --binary "$build/holdfast" --rounds 5 --max-load-s 0.8
stage "crash, finished holds forgotten (5 rounds)" python3 tests/crash/crash_test.py \
    --binary "$build/holdfast" --rounds 5 --max-load-s 0.8 --finished-holds 0
stage "cancel job, kill -9 in its steps (10,000 orders)" python3 tests/crash/job_crash_test.py \
    --binary "$build/holdfast" --orders 10000 --kills 4
stage "storage faults (asan)" python3 tests/crash/fault_test.py --binary "$build/asan/holdfast"
stage "hostile (release)" python3 tests/hostile/hostile_test.py --binary "$build/holdfast" --quick
stage "hostile (asan)" python3 tests/hostile/hostile_test.py --binary "$build/asan/holdfast" --quick
if [ -x "$build/fuzz/fuzz_core" ]; then
    stage "fuzz (10 s each)" tests/fuzz/run.sh fuzz "${FUZZ_QUICK_SECONDS:-10}" "$build/fuzz" fuzz_core fuzz_routes fuzz_http fuzz_flat_json fuzz_signature fuzz_token fuzz_spans
else
    echo "== fuzz: skipped, $build/fuzz not built (make fuzz-build needs clang and libclang-rt-14-dev)"
fi
stage "valgrind unit tests" tests/crash/valgrind.sh "$build"/release/tests/test_*
if [ -x "$build/tsan/holdfast" ]; then
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" stage "crash (tsan, 5 rounds)" \
        python3 tests/crash/crash_test.py --binary "$build/tsan/holdfast" --rounds 5 --max-load-s 0.8
else
    echo "== tsan: skipped, $build/tsan/holdfast not built (make $build/tsan/holdfast)"
fi
stage "idempotency order (regression)" "$build/asan/tests/idempotency_order"

echo
if [ ${#failures[@]} -gt 0 ]; then echo "failed stages: ${failures[*]}"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
