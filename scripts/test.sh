#!/usr/bin/env bash
# The whole suite, as `make test` runs it: unit tests and the core simulation (release and
# ASan+UBSan builds), the HTTP layer's tests, the black-box tests of the real binary
# (release and ASan+UBSan), the browser tests, the OpenAPI lint and the contract test (the
# release run's answers against docs/openapi.yaml), the benchmark tools' tests and the bounded
# reliability rounds. Ends with one line "N passed, N failed" for CI.
#
# --quick (make test-quick): the layout check, the release unit tests and the release black-box
# suite only, a few minutes; no sanitizers, PostgreSQL, browser, contract or reliability stages.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=false
if [ "${1:-}" = --quick ]; then quick=true; fi

passed=0
failed=0
failures=()
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# Adds a stage's counts; a stage that printed no count but failed counts as one failure. The
# stages run one after another, so a stage's time is the time since the last one recorded:
# the suite must stay under 20 minutes, and this shows where they go.
stage_start=$SECONDS
record() {
    local name=$1 status=$2 stage_passed=$3 stage_failed=$4
    if [ "$status" -ne 0 ] && [ "$stage_failed" -eq 0 ]; then stage_failed=1; fi
    passed=$((passed + stage_passed))
    failed=$((failed + stage_failed))
    if [ "$stage_failed" -ne 0 ]; then failures+=("$name"); fi
    printf '== %s: %d passed, %d failed (%ds)\n' "$name" "$stage_passed" "$stage_failed" \
        $((SECONDS - stage_start))
    stage_start=$SECONDS
}

run_cmocka() {
    local name=$1 binary=$2 log
    log=$(mktemp)
    "$binary" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    local ok bad
    ok=$(grep -Eo '\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    bad=$(grep -Eo '\[  FAILED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    rm -f "$log"
    record "$name" "$status" "${ok:-0}" "${bad:-0}"
}

# Any command whose output ends with "N passed, N failed".
run_stage() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    local line ok bad
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    ok=$(echo "$line" | grep -Eo '^[0-9]+')
    bad=$(echo "$line" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+')
    rm -f "$log"
    record "$name" "$status" "${ok:-0}" "${bad:-0}"
}

# node's test runner ends with "# pass N" and "# fail N".
run_node() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    node --test "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    local ok bad
    ok=$(grep -Eo '^# pass [0-9]+' "$log" | grep -Eo '[0-9]+' | tail -1)
    bad=$(grep -Eo '^# fail [0-9]+' "$log" | grep -Eo '[0-9]+' | tail -1)
    rm -f "$log"
    record "$name" "$status" "${ok:-0}" "${bad:-0}"
}

# A check that prints no count: one pass or one failure, by its exit status.
run_check() {
    local name=$1
    shift
    "$@"
    local status=$?
    if [ "$status" -eq 0 ]; then record "$name" 0 1 0; else record "$name" "$status" 0 1; fi
}

# The layout rules of docs/DESIGN.md (no include cycle, no file over 800 lines, no function
# over 60), also part of make lint.
run_check "layout" python3 scripts/check_layout.py src
run_stage "layout check's own tests" python3 tests/layout/test_check_layout.py

# The full suite runs the unit tests under ASan here, and the release binaries once more under
# valgrind (the reliability stage, tests/crash/valgrind.sh): a release run of its own would run
# the same tests a third time. The quick suite has only the release run.
flavours=asan
if $quick; then flavours=release; fi
for flavour in $flavours; do
    for binary in build/$flavour/tests/test_*; do
        case "$binary" in *.d) continue ;; esac
        [ -x "$binary" ] || continue
        run_cmocka "unit $flavour $(basename "$binary")" "$binary"
    done
done

# The end of the suite: the failed stages named, the whole time, and the counts.
finish() {
    echo
    if [ ${#failures[@]} -gt 0 ]; then
        echo "failed stages: ${failures[*]}"
    fi
    echo "(the whole suite: ${SECONDS}s)"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

if $quick; then
    run_stage "black-box release" python3 tests/blackbox/run.py --binary build/holdfast
    finish
    exit
fi

run_stage "http layer (asan)" python3 tests/net/test_http.py --binary build/asan/tests/echo_server
# The black-box suite includes GET /metrics (test_metrics.py): promtool lints the output and a
# real Prometheus scrapes the server, both from Debian's prometheus (scripts/deps.sh --test).
command -v promtool >/dev/null && command -v prometheus >/dev/null ||
    echo "test: promtool or prometheus is missing: the metrics tests will fail" >&2
# The release run also records every exchange for the contract test below (tests/contract).
CONTRACT_RECORD=build/contract/exchanges.jsonl
mkdir -p build/contract && rm -f "$CONTRACT_RECORD"
HOLDFAST_CONTRACT_RECORD="$PWD/$CONTRACT_RECORD" \
    run_stage "black-box release" python3 tests/blackbox/run.py --binary build/holdfast
run_stage "black-box asan" python3 tests/blackbox/run.py --binary build/asan/holdfast
# Two files at once (node's default on two cores is one): each page's test waits on its server's
# stream and the page's countdowns more than it computes (202 s one at a time, 164 s three at a
# time under a load of 10).
HOLDFAST_BINARY=build/holdfast run_node "browser" --test-concurrency=2 tests/browser/
# docs/openapi.yaml: Redocly's lint (recommended-strict), the contract checker's own tests, then
# the release run's recorded answers checked against the description.
run_check "openapi lint" env REDOCLY_TELEMETRY=off \
    tests/contract/node_modules/.bin/redocly lint --config tests/contract/redocly.yaml docs/openapi.yaml
# Its bounds against src/lib/limits.h (the check's own tests first), so neither drifts.
run_stage "openapi limits check's own tests" python3 tests/layout/test_check_openapi_limits.py
run_check "openapi limits" python3 scripts/check_openapi_limits.py
run_node "contract checker" tests/contract/
run_check "contract (black-box answers vs docs/openapi.yaml)" \
    node tests/contract/check.mjs "$CONTRACT_RECORD"
# The benchmark's own measuring: pgbench's warm window, loadgen's Redis protocol, the ceiling
# build's switch (and its absence from build/holdfast).
run_stage "bench tools" python3 tests/bench/test_bench_tools.py --loadgen build/bench/loadgen \
    --server build/holdfast --ceiling build/bench/holdfast-ceiling
# The PostgreSQL store (API.md section 11): a throwaway PostgreSQL (scripts/postgres.sh, fsync
# and synchronous_commit on), the backend's fencing tests against it, the whole black-box suite
# with a database per server (release; the SQLite-only tests say so and are skipped; under ASan
# the part that reaches PostgreSQL's own code),
# kill -9 rounds, and the storage faults that apply (with PostgreSQL itself stopped under load).
pg_dir=$(mktemp -d /tmp/holdfast-test-pg-XXXXXX)
if pg_url=$(scripts/postgres.sh start "$pg_dir"); then
    for flavour in release asan; do
        HOLDFAST_TEST_POSTGRES_URL=$pg_url run_cmocka "postgres unit $flavour test_postgres" \
            "build/$flavour/tests/test_postgres"
    done
    run_stage "black-box release on PostgreSQL" python3 tests/blackbox/run.py \
        --binary build/holdfast --store-url "$pg_url"
    # Under ASan on PostgreSQL: the tests of several nodes, of the store's tables, and of the
    # domains with rows of their own (payments, dispatch, the waiting room); the rest of the
    # suite under ASan runs on SQLite above, with the same engine and core.
    run_stage "black-box asan on PostgreSQL (cluster, store, payments, dispatch, queue)" \
        python3 tests/blackbox/run.py --binary build/asan/holdfast --store-url "$pg_url" \
        -k cluster. -k postgres. -k payments. -k dispatch. -k queue.
    run_stage "crash on PostgreSQL (5 rounds)" python3 tests/crash/crash_test.py \
        --binary build/holdfast --rounds 5 --max-load-s 0.8 --store-url "$pg_url"
    run_stage "crash on PostgreSQL, finished holds forgotten (5 rounds)" \
        python3 tests/crash/crash_test.py --binary build/holdfast --rounds 5 --max-load-s 0.8 \
        --finished-holds 0 --store-url "$pg_url"
    # Last: it stops and starts this PostgreSQL (postgres_down).
    run_stage "storage faults on PostgreSQL (asan)" python3 tests/crash/fault_test.py \
        --binary build/asan/holdfast --store-url "$pg_url" --postgres-dir "$pg_dir"
    scripts/postgres.sh stop "$pg_dir"
else
    record "postgres start" 1 0 1
fi
rm -rf "$pg_dir"
# Replication: a primary and a synchronous standby of its own (scripts/postgres.sh start-pair),
# the primary killed under load and the standby promoted; the node finds it by itself.
run_stage "replication failover on PostgreSQL" python3 tests/crash/replication_test.py \
    --binary build/holdfast
# Reliability (docs/RELIABILITY.md): kill -9 rounds, storage faults, hostile input, a short
# fuzz of every target, the unit tests under valgrind, the crash rounds under TSan.
run_stage "reliability (bounded)" tests/crash/quick.sh build
finish
