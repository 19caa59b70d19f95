#!/usr/bin/env bash
# Two builds of the server against each other on one workload: interleaved fresh servers, old
# then new then new then old..., so the machine's drift falls on both alike; prints each pair's
# ratio (new / old) and their median. This is how a change is shown not to slow the hot path
# (a median ratio of at least 0.97 over at least 5 pairs).
#
#   bench/compare.sh OLD_BINARY NEW_BINARY [PAIRS]
#
# Settings (environment): COMPARE_WORKLOAD=hold-random, COMPARE_CONNECTIONS=50,
# COMPARE_SECONDS=3, COMPARE_PORT=18480, COMPARE_ARGS="--seats 60000 --ttl 1" (loadgen's).
# Each server has its data on /var/tmp (a real disk) and is stopped after its run.
set -euo pipefail
cd "$(dirname "$0")/.."

old=${1:?usage: bench/compare.sh OLD_BINARY NEW_BINARY [PAIRS]}
new=${2:?usage: bench/compare.sh OLD_BINARY NEW_BINARY [PAIRS]}
pairs=${3:-5}
workload=${COMPARE_WORKLOAD:-hold-random}
connections=${COMPARE_CONNECTIONS:-50}
seconds=${COMPARE_SECONDS:-3}
port=${COMPARE_PORT:-18480}
read -r -a loadgen_args <<<"${COMPARE_ARGS:---seats 60000 --ttl 1}"
loadgen=build/bench/loadgen
[ -x "$loadgen" ] || { echo "compare: $loadgen is missing: run 'make bench-tools'" >&2; exit 1; }

work=$(mktemp -d /var/tmp/holdfast-compare.XXXXXX)
pid=""
stop() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    pid=""
}
trap 'stop; rm -rf "$work"' EXIT

# run BINARY: one fresh server, one measured run; prints the answers per second.
run() {
    local data
    data=$(mktemp -d "$work/data.XXXXXX")
    "$1" serve --listen "127.0.0.1:$port" --data "$data" 2>>"$work/server.log" &
    pid=$!
    for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    "$loadgen" --port "$port" --workload "$workload" -c "$connections" -d "$seconds" \
        "${loadgen_args[@]}" --json "$work/run.json" >/dev/null 2>&1
    stop
    rm -rf "$data"
    python3 -c 'import json, sys; print("%.0f" % json.load(open(sys.argv[1]))["throughput"])' \
        "$work/run.json"
}

ratios=()
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) -eq 1 ]; then
        old_rate=$(run "$old"); new_rate=$(run "$new")
    else
        new_rate=$(run "$new"); old_rate=$(run "$old")
    fi
    ratio=$(python3 -c "print('%.3f' % ($new_rate / $old_rate))")
    ratios+=("$ratio")
    echo "pair $pair: old $old_rate/s, new $new_rate/s, new/old $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR] = $1} END {
    m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "median new/old over %d pairs: %.3f (%s c=%s, %s s each)\n", NR, m, "'"$workload"'", "'"$connections"'", "'"$seconds"'"
}'
