#!/usr/bin/env bash
# A local cluster to try (API.md section 11): a throwaway PostgreSQL (scripts/postgres.sh) and
# three nodes on loopback, A, B and C, on ports 8081, 8082 and 8083 (or from BASE_PORT), each
# with a data directory under DIR (default build/cluster: under build/, which git ignores, so
# the checkout stays clean). Prints their addresses; Ctrl-C (SIGINT to the whole process group,
# make's included) or SIGTERM stops the nodes (SIGTERM: they hand their leases back) and then
# PostgreSQL, and exits 0: an asked-for stop is no failure, so make reports no error.
#   scripts/cluster.sh [DIR]        (make cluster; the binary is HOLDFAST_BINARY, default
#                                    build/holdfast)
# The box-office page works against any node: http://127.0.0.1:8081/ , :8082/ , :8083/ .
set -euo pipefail

cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-build/cluster}")
base_port=${BASE_PORT:-8081}
binary=${HOLDFAST_BINARY:-build/holdfast}
pids=()
stopped=false

stop_all() {
    "$stopped" && return 0
    stopped=true
    # A second Ctrl-C while stopping must not cut the stop short and leave PostgreSQL running.
    trap '' INT TERM
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    scripts/postgres.sh stop "$dir/pg" >/dev/null 2>&1 || true
    echo "stopped"
}
# A signal is the way this script is meant to end: stop everything, exit 0. Any other exit
# (a failed start) stops what was started and keeps its status.
trap 'stop_all; exit 0' INT TERM
trap 'status=$?; stop_all; exit "$status"' EXIT

mkdir -p "$dir"
url=$(scripts/postgres.sh start "$dir/pg")

# Each node lists the others' pages as origins: an event's live stream is served by its owner
# (a 307 from the others), which the page's EventSource follows across origins.
origins="http://127.0.0.1:$base_port,http://127.0.0.1:$((base_port + 1)),http://127.0.0.1:$((base_port + 2))"
index=0
for name in A B C; do
    port=$((base_port + index))
    mkdir -p "$dir/$name"
    HOLDFAST_CORS_ORIGINS=$origins "$binary" serve --listen "127.0.0.1:$port" --data "$dir/$name" \
        --store "$url" --node-id "$name" 2>>"$dir/$name.log" &
    pids+=("$!")
    index=$((index + 1))
done
for index in 0 1 2; do
    port=$((base_port + index))
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
        sleep 0.1
    done
done
# The demo event, created through node A (which then owns it), as `make run` makes it.
rows() { local out="" i; for i in $(seq 0 $(($1 - 1))); do
    out+="${out:+,}{\"id\": \"$(printf "\\x$(printf %x $((65 + i)))")\", \"seats\": $2}"; done; echo "$out"; }
curl -s -o /dev/null -X POST "http://127.0.0.1:$base_port/v1/events" \
    -H 'Content-Type: application/json' -H 'Idempotency-Key: cluster-demo' \
    -d "{\"id\": \"demo\", \"name\": \"Holdfast demo night\", \"currency\": \"USD\",
         \"hold_ttl_s\": 600, \"max_hold_s\": 1800, \"max_seats_per_user\": 8,
         \"max_seats_per_hold\": 10,
         \"sections\": [{\"id\": \"FLOOR\", \"price\": 45000, \"rows\": [$(rows 6 20)]},
                        {\"id\": \"BALCONY\", \"price\": 12000, \"rows\": [$(rows 4 24)]}],
         \"pools\": [{\"id\": \"GA\", \"capacity\": 500, \"price\": 9900}]}" || true
echo "PostgreSQL: $url"
index=0
for name in A B C; do
    echo "node $name: http://127.0.0.1:$((base_port + index))/   (log: $dir/$name.log)"
    index=$((index + 1))
done
echo "GET /v1/cluster on any node shows who owns what; Ctrl-C stops everything."
# Until a signal (its trap ends the script) or until every node has exited by itself.
wait
