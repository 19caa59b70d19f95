#!/usr/bin/env bash
# Two builds of the server against each other on one workload: interleaved fresh servers, old
# then new then new then old..., so the machine's drift falls on both alike; prints each pair's
# ratio (new / old) of answers per second and of the server's CPU time per answer (which moves
# far less with the machine's noise), and their medians. This is how a change is shown not to
# slow the hot path (a median ratio of at least 0.97 over at least 5 pairs).
#
#   bench/compare.sh OLD_BINARY NEW_BINARY [PAIRS]
#
# Settings (environment): COMPARE_WORKLOAD=hold-random, COMPARE_CONNECTIONS=50,
# COMPARE_SECONDS=3, COMPARE_PORT=18480, COMPARE_ARGS="--seats 60000 --ttl 1" (loadgen's),
# COMPARE_SERVE_ARGS="" (the servers'). COMPARE_WORKLOAD=webhook starts both servers with a
# webhook secret and has loadgen sign with it; its rate is then the committed webhooks per
# second and its CPU the server's per committed webhook (its hold included), as bench/run.sh's
# part webhook counts them. Each server has its data on /var/tmp (a real disk) and is stopped
# after its run.
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
read -r -a serve_args <<<"${COMPARE_SERVE_ARGS:-}"
if [ "$workload" = webhook ]; then
    serve_args+=(--webhook-secret compare-webhook-secret)
    loadgen_args+=(--webhook-secret compare-webhook-secret)
fi
loadgen=build/bench/loadgen
[ -x "$loadgen" ] || { echo "compare: $loadgen is missing: run 'make bench-tools'" >&2; exit 1; }

work=$(mktemp -d /var/tmp/holdfast-compare.XXXXXX)
pid=""
stop() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    pid=""
}
trap 'stop; rm -rf "$work"' EXIT

# The server's CPU time so far (user + system, every thread), in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

# run BINARY: one fresh server, one measured run; prints "ANSWERS_PER_S CPU_US_PER_ANSWER"
# (the CPU counted over the whole run, warm-up included, divided by every answer; for webhook,
# committed webhooks per second and the CPU divided by the committed webhooks).
run() {
    local data before after
    data=$(mktemp -d "$work/data.XXXXXX")
    "$1" serve --listen "127.0.0.1:$port" --data "$data" ${serve_args[@]+"${serve_args[@]}"} \
        2>>"$work/server.log" &
    pid=$!
    for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    before=$(server_ticks)
    "$loadgen" --port "$port" --workload "$workload" -c "$connections" -d "$seconds" \
        "${loadgen_args[@]}" --json "$work/run.json" >/dev/null 2>&1
    after=$(server_ticks)
    stop
    rm -rf "$data"
    python3 -c 'import json, sys, os
run = json.load(open(sys.argv[1]))
ticks = int(sys.argv[3]) - int(sys.argv[2])
webhooks = "webhooks_per_s" in run
# The committed webhooks are counted in the measured window only: scaled to the whole run.
answers = max(run["webhooks_committed"] * run["answered"] / max(run["requests"], 1)
              if webhooks else run["answered"], 1)
rate = run["webhooks_per_s"] if webhooks else run["throughput"]
print("%.0f %.2f" % (rate, ticks * 1e6 / os.sysconf("SC_CLK_TCK") / answers))' \
        "$work/run.json" "$before" "$after"
}

median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

rates=() costs=()
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) -eq 1 ]; then
        read -r old_rate old_cpu <<<"$(run "$old")"; read -r new_rate new_cpu <<<"$(run "$new")"
    else
        read -r new_rate new_cpu <<<"$(run "$new")"; read -r old_rate old_cpu <<<"$(run "$old")"
    fi
    rate=$(python3 -c "print('%.3f' % ($new_rate / $old_rate))")
    # Less CPU per answer is better: the ratio is old over new, so above 1 means faster too.
    cost=$(python3 -c "print('%.3f' % ($old_cpu / $new_cpu))")
    rates+=("$rate") costs+=("$cost")
    echo "pair $pair: old $old_rate/s ${old_cpu} us CPU/answer, new $new_rate/s ${new_cpu} us CPU/answer;" \
         "rate new/old $rate, CPU per answer old/new $cost"
done
echo "median over $pairs pairs ($workload c=$connections, $seconds s each):" \
     "rate new/old $(printf '%s\n' "${rates[@]}" | median)," \
     "CPU per answer old/new $(printf '%s\n' "${costs[@]}" | median)"
