#!/usr/bin/env bash
# Public hold-random on an event with half of its seats allocated (API.md section 14) against
# the same event without allocations: allocated seats are a status of their own, so the
# public's checks must cost no more. Interleaved fresh servers, plain then allocated then
# allocated then plain..., so the machine's drift falls on both alike; prints each pair's
# ratio (allocated / plain) of answers per second and of the server's CPU time per answer,
# and their medians. Goal: a median of at least 0.95.
#
# Like for like: in both runs hold-random aims only at the public seats (loadgen --seat-step 2:
# the even seat indexes, 30,000 seats), and the allocated run sets the others aside, every
# second seat of every row. A public hold of an allocated seat would be a 409 that writes
# nothing, and aiming at them would make the allocated run cheaper per answer, whatever the
# allocations cost.
#
#   bench/allocations.sh [PAIRS]
#
# Settings (environment): ALLOCATIONS_CONNECTIONS=50, ALLOCATIONS_SECONDS=3,
# ALLOCATIONS_PORT=18491, ALLOCATIONS_BINARY=build/holdfast. The event has 60,000 seats (60
# rows of 1,000, loadgen's layout); the allocated run sets 30,000 of them aside first (one
# allocation naming the seats of odd index: S-R0-2, S-R0-4, ...).
# Each server keeps its data on /var/tmp (a real disk) and is stopped after its run.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-5}
connections=${ALLOCATIONS_CONNECTIONS:-50}
seconds=${ALLOCATIONS_SECONDS:-3}
port=${ALLOCATIONS_PORT:-18491}
binary=${ALLOCATIONS_BINARY:-build/holdfast}
seats=60000
SETTLE_S=2
loadgen=build/bench/loadgen
[ -x "$loadgen" ] || { echo "allocations: $loadgen is missing: run 'make bench-tools'" >&2; exit 1; }
[ -x "$binary" ] || { echo "allocations: $binary is missing: run 'make'" >&2; exit 1; }

work=$(mktemp -d /var/tmp/holdfast-allocations.XXXXXX)
pid=""
stop() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    pid=""
}
trap 'stop; rm -rf "$work"' EXIT

server_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

# make_event plain|allocated: the event loadgen would make (rows R0..R59 of 1,000 seats in
# section S), made here for both runs so that neither run's CPU counts it; for the allocated
# run, then the seats of odd index set aside (loadgen's seat N is S-R<N / 1000>-<N % 1000 + 1>).
make_event() {
    python3 - "$port" "$seats" "$1" <<'EOF'
import json, sys, urllib.request
port, seats, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def post(path, body):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.status
rows = [{"id": "R%d" % r, "seats": 1000} for r in range(seats // 1000)]
post("/v1/events", {"id": "bench", "hold_ttl_s": 600,
                    "sections": [{"id": "S", "price": 100, "rows": rows}]})
if kind == "plain":
    sys.exit(0)
aside = ["S-R%d-%d" % (n // 1000, n % 1000 + 1) for n in range(1, seats, 2)]
status = post("/v1/events/bench/allocations", {"id": "partner", "seats": aside})
assert status == 201, status
EOF
}

# run plain|allocated: one fresh server, one measured run; prints "ANSWERS_PER_S CPU_US".
run() {
    local data before after
    data=$(mktemp -d "$work/data.XXXXXX")
    "$binary" serve --listen "127.0.0.1:$port" --data "$data" 2>>"$work/server.log" &
    pid=$!
    for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    make_event "$1"
    sleep "$SETTLE_S" # the event's (and allocation's) batches durable before the count starts
    before=$(server_ticks)
    "$loadgen" --port "$port" --workload hold-random -c "$connections" -d "$seconds" \
        --seats "$seats" --seat-step 2 --ttl 1 --no-create --json "$work/run.json" >/dev/null 2>&1
    after=$(server_ticks)
    stop
    rm -rf "$data"
    python3 -c 'import json, os, sys
run = json.load(open(sys.argv[1]))
ticks = int(sys.argv[3]) - int(sys.argv[2])
answers = max(run["answered"], 1)
print("%.0f %.2f %s" % (run["throughput"], ticks * 1e6 / os.sysconf("SC_CLK_TCK") / answers,
                        ",".join("%s:%s" % kv for kv in sorted(run.get("statuses", {}).items()))))' \
        "$work/run.json" "$before" "$after"
}

median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

ratios=()
cpu_ratios=()
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) -eq 1 ]; then
        read -r plain_rate plain_cpu plain_statuses <<<"$(run plain)"
        read -r alloc_rate alloc_cpu alloc_statuses <<<"$(run allocated)"
    else
        read -r alloc_rate alloc_cpu alloc_statuses <<<"$(run allocated)"
        read -r plain_rate plain_cpu plain_statuses <<<"$(run plain)"
    fi
    ratio=$(python3 -c "print('%.3f' % ($alloc_rate / $plain_rate))")
    cpu_ratio=$(python3 -c "print('%.3f' % ($plain_cpu / $alloc_cpu))")
    ratios+=("$ratio")
    cpu_ratios+=("$cpu_ratio")
    echo "pair $pair: plain $plain_rate/s ($plain_cpu us CPU each; $plain_statuses)," \
         "50% allocated $alloc_rate/s ($alloc_cpu us; $alloc_statuses), ratio $ratio (CPU $cpu_ratio)"
done
echo "median ratio (50% allocated / plain) over $pairs pairs: answers/s $(printf '%s\n' "${ratios[@]}" | median), CPU per answer (plain / allocated) $(printf '%s\n' "${cpu_ratios[@]}" | median)"
