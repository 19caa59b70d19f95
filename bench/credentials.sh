#!/usr/bin/env bash
# hold-random with a user token per connection against the API key (API.md section 16): the
# cost of verifying a JWT (one HMAC-SHA256, a JSON parse) on every request. Interleaved fresh
# servers, key then token then token then key..., so the machine's drift falls on both alike;
# prints each pair's ratio (token / key) of answers per second and of the server's CPU time per
# answer (which moves far less with the machine's noise), and their medians. Goal: a
# median of at least 0.95.
#
#   bench/credentials.sh [PAIRS]
#
# Settings (environment): CREDENTIALS_CONNECTIONS=50, CREDENTIALS_SECONDS=3,
# CREDENTIALS_PORT=18490, CREDENTIALS_BINARY=build/holdfast. Each server runs with --api-key and --user-token-secret, its data on
# /var/tmp (a real disk), and is stopped after its run.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-5}
connections=${CREDENTIALS_CONNECTIONS:-50}
seconds=${CREDENTIALS_SECONDS:-3}
port=${CREDENTIALS_PORT:-18490}
binary=${CREDENTIALS_BINARY:-build/holdfast}
key=bench-api-key-0123456789
secret=bench-user-token-secret-0123456789
loadgen=build/bench/loadgen
[ -x "$loadgen" ] || { echo "credentials: $loadgen is missing: run 'make bench-tools'" >&2; exit 1; }
[ -x "$binary" ] || { echo "credentials: $binary is missing: run 'make'" >&2; exit 1; }

work=$(mktemp -d /var/tmp/holdfast-credentials.XXXXXX)
pid=""
stop() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    pid=""
}
trap 'stop; rm -rf "$work"' EXIT

# The server's CPU time so far (user + system, every thread), in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

# run key|token: one fresh server, one measured run; prints "ANSWERS_PER_S CPU_US_PER_ANSWER"
# (the CPU counted over the whole run, warm-up included, divided by every answer).
run() {
    local data before after extra=()
    data=$(mktemp -d "$work/data.XXXXXX")
    "$binary" serve --listen "127.0.0.1:$port" --data "$data" --api-key "$key" \
        --user-token-secret "$secret" 2>>"$work/server.log" &
    pid=$!
    for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    [ "$1" = token ] && extra=(--user-token-secret "$secret")
    before=$(server_ticks)
    "$loadgen" --port "$port" --workload hold-random -c "$connections" -d "$seconds" \
        --seats 60000 --ttl 1 --api-key "$key" "${extra[@]}" --json "$work/run.json" >/dev/null 2>&1
    after=$(server_ticks)
    stop
    rm -rf "$data"
    python3 -c 'import json, os, sys
run = json.load(open(sys.argv[1]))
statuses = run.get("statuses", {})
refused = sum(int(n) for s, n in statuses.items() if s in ("401", "403"))
if refused:
    sys.exit("credentials: %d answers refused the credential" % refused)
ticks = int(sys.argv[3]) - int(sys.argv[2])
answers = max(run["answered"], 1)
print("%.0f %.2f" % (run["throughput"], ticks * 1e6 / os.sysconf("SC_CLK_TCK") / answers))' \
        "$work/run.json" "$before" "$after"
}

median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

ratios=()
cpu_ratios=()
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) -eq 1 ]; then read -r key_rate key_cpu <<<"$(run key)"; read -r token_rate token_cpu <<<"$(run token)"
    else read -r token_rate token_cpu <<<"$(run token)"; read -r key_rate key_cpu <<<"$(run key)"; fi
    ratio=$(python3 -c "print('%.3f' % ($token_rate / $key_rate))")
    cpu_ratio=$(python3 -c "print('%.3f' % ($key_cpu / $token_cpu))")
    ratios+=("$ratio")
    cpu_ratios+=("$cpu_ratio")
    echo "pair $pair: API key $key_rate/s ($key_cpu us CPU each), user token $token_rate/s ($token_cpu us), ratio $ratio (CPU $cpu_ratio)"
done
echo "median ratio (user token / API key) over $pairs pairs: answers/s $(printf '%s\n' "${ratios[@]}" | median), CPU per answer (key / token) $(printf '%s\n' "${cpu_ratios[@]}" | median)"
