#!/usr/bin/env bash
# Runs each unit-test binary under valgrind's memcheck: any error or leak fails it.
#   tests/crash/valgrind.sh build/release/tests/test_core ...
# One line per binary, then `N passed, N failed`. The simulation runs fewer operations under
# valgrind (HF_SIM_OPERATIONS=5000 and HF_SIM_WINDOW_OPERATIONS=1000 for its run across the
# deliveries' 7-day window, HF_SIM_DISPATCH_OPERATIONS=5000 for dispatch's, unless set), and
# test_vfs skips its reader thread (HF_VFS_ROUNDS=0: one thread runs at a time under
# valgrind), to stay within a few minutes.
set -uo pipefail
export HF_SIM_OPERATIONS="${HF_SIM_OPERATIONS:-5000}"
export HF_SIM_WINDOW_OPERATIONS="${HF_SIM_WINDOW_OPERATIONS:-1000}"
export HF_SIM_DISPATCH_OPERATIONS="${HF_SIM_DISPATCH_OPERATIONS:-5000}"
export HF_VFS_ROUNDS="${HF_VFS_ROUNDS:-0}"
passed=0 failed=0
for binary in "$@"; do
    case "$binary" in *.d) continue ;; esac
    log=$(mktemp)
    start=$(date +%s)
    valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-origins=yes \
        "$binary" >"$log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    if [ $status -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok valgrind $(basename "$binary") ${seconds}s"
    else
        failed=$((failed + 1))
        echo "FAIL valgrind $(basename "$binary") (exit $status)"
        grep -E '==[0-9]+==|FAILED|ERROR' "$log" | head -40
    fi
    rm -f "$log"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
