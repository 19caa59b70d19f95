#!/usr/bin/env bash
# Runs each unit-test binary under valgrind's memcheck: any error or leak fails it.
#   tests/crash/valgrind.sh build/release/tests/test_core_holds ...
# One line per binary, then `N passed, N failed`. The simulation runs fewer operations under
# valgrind (HF_SIM_OPERATIONS=2000 and HF_SIM_WINDOW_OPERATIONS=1000 for its run across the
# deliveries' 7-day window, HF_SIM_DISPATCH_OPERATIONS=5000 for dispatch's, unless set), and
# test_vfs skips its reader thread (HF_VFS_ROUNDS=0: one thread runs at a time under
# valgrind), to stay within a few minutes.
set -uo pipefail
# The simulation runs whole under ASan and in release (scripts/test.sh): here its every kind of
# operation once more, for what valgrind alone sees (reads of uninitialised memory).
export HF_SIM_OPERATIONS="${HF_SIM_OPERATIONS:-2000}"
export HF_SIM_WINDOW_OPERATIONS="${HF_SIM_WINDOW_OPERATIONS:-1000}"
export HF_SIM_DISPATCH_OPERATIONS="${HF_SIM_DISPATCH_OPERATIONS:-5000}"
export HF_VFS_ROUNDS="${HF_VFS_ROUNDS:-0}"
# The randomized comparisons of test_json (the number formatter against snprintf),
# test_flat_json (the flat reader against jansson) and test_dispatch (the grid's search against
# a scan of every driver): a tenth of their rounds.
export HF_TEST_ROUNDS="${HF_TEST_ROUNDS:-20000}"
# Two binaries at once (HF_VALGRIND_JOBS): each runs on one core, and the suite's other stages
# run one after another, so the machine's two cores are otherwise idle here.
jobs="${HF_VALGRIND_JOBS:-2}"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

run_one() {
    local binary=$1 results=$2 name log start status seconds
    name=$(basename "$binary")
    log="$results/$name.log"
    start=$(date +%s)
    valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-origins=yes \
        "$binary" >"$log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    if [ $status -eq 0 ]; then
        echo "ok valgrind $name ${seconds}s" >"$results/$name.ok"
    else
        { echo "FAIL valgrind $name (exit $status)"
          grep -E '==[0-9]+==|FAILED|ERROR' "$log" | head -40; } >"$results/$name.failed"
    fi
}
export -f run_one

# The slowest first (test_simulation alone takes about as long as half the others together):
# started last, it would run on one core while the other sits idle.
SLOW_FIRST="test_simulation test_json test_dispatch test_prequeue"
{
for binary in "$@"; do
    case "$binary" in *.d) continue ;; esac
    case " $SLOW_FIRST " in *" $(basename "$binary") "*) printf '%s\0' "$binary" ;; esac
done
for binary in "$@"; do
    case "$binary" in *.d) continue ;; esac
    case " $SLOW_FIRST " in *" $(basename "$binary") "*) ;; *) printf '%s\0' "$binary" ;; esac
done
} | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1" "$2"' _ {} "$results"

passed=0 failed=0
for binary in "$@"; do
    case "$binary" in *.d) continue ;; esac
    name=$(basename "$binary")
    if [ -f "$results/$name.ok" ]; then
        passed=$((passed + 1))
        cat "$results/$name.ok"
    else
        failed=$((failed + 1))
        if [ -f "$results/$name.failed" ]; then cat "$results/$name.failed"
        else echo "FAIL valgrind $name (did not run)"; fi
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
