#!/usr/bin/env bash
# Holds per second with wrk: 50 connections, random single-seat holds on a 60,000-seat event.
#   bench/hold-random.sh [SECONDS] [CONNECTIONS] [TTL_S]
# Starts its own server on 127.0.0.1:18080 with a fresh data directory and stops it after.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
connections=${2:-50}
ttl=${3:-1}
port=18080
data=$(mktemp -d)
build/holdfast serve --listen 127.0.0.1:$port --data "$data" 2>"$data/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 0.1; done
rows=$(python3 -c 'import json; print(json.dumps([{"id": "R%d" % r, "seats": 1000} for r in range(60)]))')
curl -sf -X POST http://127.0.0.1:$port/v1/events -H 'Content-Type: application/json' \
    -d "{\"id\":\"bench\",\"hold_ttl_s\":600,\"sections\":[{\"id\":\"S\",\"price\":100,\"rows\":$rows}]}" >/dev/null
wrk -t2 -c"$connections" -d"${seconds}s" -s bench/hold_random.lua http://127.0.0.1:$port -- "$ttl"
echo "server RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$server/status)"
