#!/usr/bin/env bash
# The pre-queue's opening over HTTP (API.md section 6's opens_at, issue 31): 1,000,000 users
# join a room before its opens_at (45 s after the start, time enough for the fill), then, from
# 0.2 s before opens_at, 1.5 s of polls of that line (25 connections) beside hold-random on
# another event (25 connections); 2 s later the same again on the line now lined up (the
# reference: the same server, the same line, no opening). Polls answered pre_queue while the
# line is drawn count as loadgen's "errors" (it expects waiting): that count tells how long
# the opening answered pre_queue. bench/opening_watch.py polls one ticket from just before
# opens_at until it has its place, which all tickets get at once: the opening's time.
#   bench/prequeue.sh [OUT_DIR]
# Starts its own server on 127.0.0.1:18931 with a fresh data directory and stops it after;
# prints the opening's time and each run's requests/s and latency percentiles.
# Settings (environment): PREQUEUE_TICKETS=1000000, PREQUEUE_LEAD_S (opens_at this long after
# the start: time enough for the fill; 5 s and a second per 25,000 tickets, 45 s for a
# million), PREQUEUE_PORT=18931, PREQUEUE_BINARY=build/holdfast.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
port=${PREQUEUE_PORT:-18931}
tickets=${PREQUEUE_TICKETS:-1000000}
lead_ms=$(awk -v s="${PREQUEUE_LEAD_S:-}" -v n="$tickets" \
    'BEGIN {printf "%d", (s == "" ? 5 + n / 25000 : s) * 1000}')
binary=${PREQUEUE_BINARY:-build/holdfast}
data=$(mktemp -d /var/tmp/hf-prequeue.XXXX)
"$binary" serve --listen 127.0.0.1:"$port" --data "$data" 2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:"$port"/healthz >/dev/null && break; sleep 0.1; done
opens=$(($(date +%s%3N) + lead_ms))
rm -f "$out/tickets"
build/bench/loadgen --port "$port" --workload queue-poll -c 50 -d 0 --warmup 0 --seats 1000 \
    --admit-per-s 0.001 --line "$tickets" --fill-pipeline 32 --tickets "$out/tickets" \
    --opens-at "$opens" >"$out/fill.txt" 2>&1 || true # its final polls meet pre_queue
grep filled "$out/fill.txt" || true
if [ "$(date +%s%3N)" -ge $((opens - 300)) ]; then
    echo "prequeue: the fill ended after opens_at - 0.3 s: raise PREQUEUE_LEAD_S" >&2
    exit 1
fi
python3 bench/opening_watch.py "$port" queue "$(head -1 "$out/tickets")" "$opens" "$tickets" \
    >"$out/opening.txt" 2>&1 &
watcher=$!
build/bench/loadgen --port "$port" --workload hold-random -c 1 -d 0.2 --warmup 0 >/dev/null 2>&1
measure() { # $1: the run's name
    build/bench/loadgen --port "$port" --workload queue-poll --no-create --line "$tickets" \
        --tickets "$out/tickets" -c 25 -d 1.5 --warmup 0 >"$out/$1-poll.txt" 2>&1 &
    local polls=$!
    build/bench/loadgen --port "$port" --workload hold-random --no-create -c 25 -d 1.5 \
        --warmup 0 --ttl 1 >"$out/$1-hold.txt" 2>&1 &
    local holds=$!
    wait $polls $holds || true
    for kind in poll hold; do
        echo "$1 $kind: $(grep -E 'requests/s' "$out/$1-$kind.txt" | head -1)"
        echo "    $(grep -E 'latency ms' "$out/$1-$kind.txt" | head -1)"
        grep -E '^  errors' "$out/$1-$kind.txt" | cut -c1-40 || true
    done
}
while [ "$(date +%s%3N)" -lt $((opens - 200)) ]; do sleep 0.01; done
measure opening
wait $watcher || true
cat "$out/opening.txt"
sleep 2
measure plain
