#!/usr/bin/env bash
# Runs libFuzzer targets.
#   tests/fuzz/run.sh fuzz SECONDS BUILD_DIR TARGET...        fuzz each target for SECONDS
#   tests/fuzz/run.sh regression 0 BUILD_DIR TARGET...        run each target once over its seed
#                                                             corpus and saved crash inputs
# Seeds: tests/fuzz/corpus/NAME/ (checked in). Regression inputs: tests/fuzz/regressions/NAME/
# (every crash, hang or sanitizer report ever found, kept after its fix). The growing corpus
# lives in BUILD_DIR/corpus/NAME, crashes in BUILD_DIR/artifacts/. One line per target, then
# `N passed, N failed`; exit 1 when any target failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=$1 seconds=$2 build=$3
shift 3
passed=0 failed=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for name in "$@"; do
    binary=$build/$name
    seeds=tests/fuzz/corpus/${name#fuzz_}
    regressions=tests/fuzz/regressions/${name#fuzz_}
    corpus=$build/corpus/${name#fuzz_}
    artifacts=$build/artifacts/$name/
    mkdir -p "$corpus" "$artifacts" "$seeds" "$regressions"
    log=$build/$name.log
    # The HTTP target holds sockets; a few megabytes of input are plenty for every target.
    options=(-max_len=65536 -timeout=10 -rss_limit_mb=2560 -print_final_stats=1)
    if [ -f "tests/fuzz/$name.dict" ]; then options+=(-dict="tests/fuzz/$name.dict"); fi
    if [ "$mode" = regression ]; then
        inputs=$(find "$seeds" "$regressions" -type f | wc -l)
        "$binary" "${options[@]}" -runs=0 -artifact_prefix="$artifacts" "$seeds" "$regressions" \
            >"$log" 2>&1
        status=$?
        what="$inputs inputs"
    else
        "$binary" "${options[@]}" -max_total_time="$seconds" -artifact_prefix="$artifacts" \
            "$corpus" "$seeds" "$regressions" >"$log" 2>&1
        status=$?
        runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$')
        what="${runs:-?} runs in ${seconds}s, corpus $(find "$corpus" -type f | wc -l)"
    fi
    if [ $status -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok $name ($what)"
    else
        failed=$((failed + 1))
        echo "FAIL $name (exit $status): see $log"
        grep -E 'ERROR|SUMMARY|fuzz_|Test unit written' "$log" | head -20
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
