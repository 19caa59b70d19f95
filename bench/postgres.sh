#!/usr/bin/env bash
# One node on PostgreSQL beside one node on SQLite (issue 23): hold-random at 50 connections
# (loadgen), the two servers measured in turns in the same run, REPS times each.
#   bench/postgres.sh [SECONDS] [CONNECTIONS] [REPS]
# With OTHERS="NAME=BINARY ...", a node per other build runs on PostgreSQL too (a database of
# its own each), measured in the same turns as "postgres-NAME": a change to the PostgreSQL
# store before and after, in the same run.
# Starts a throwaway PostgreSQL (scripts/postgres.sh: fsync and synchronous_commit on) and two
# servers with fresh data directories; prints one line per measurement and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
connections=${2:-50}
reps=${3:-3}
work=$(mktemp -d /tmp/holdfast-bench-pg-XXXXXX)
chmod 755 "$work"  # PostgreSQL runs as the postgres user when root
pids=()
declare -A binaries=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    scripts/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap "exit 1" INT TERM  # the EXIT trap then stops the servers and PostgreSQL
url=$(scripts/postgres.sh start "$work/pg")
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start() {  # name port store-args...
    local name=$1 port=$2 binary=${binaries[$1]:-build/holdfast}
    shift 2
    mkdir -p "$work/$name"
    "$binary" serve --listen "127.0.0.1:$port" --data "$work/$name" "$@" 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return; sleep 0.1; done
    echo "$name did not start" >&2; cat "$work/$name.log" >&2; exit 1
}
sqlite_port=$(free_port); start sqlite "$sqlite_port"
pg_port=$(free_port); start postgres "$pg_port" --store "$url"
names=(sqlite postgres)
declare -A ports=([sqlite]=$sqlite_port [postgres]=$pg_port)
psql=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/psql
for other in ${OTHERS:-}; do
    name=postgres-${other%%=*}
    binaries[$name]=${other#*=}
    "$psql" "$url" -q -c "CREATE DATABASE \"${other%%=*}\""
    ports[$name]=$(free_port); start "$name" "${ports[$name]}" --store "${url%/*}/${other%%=*}"
    names+=("$name")
done
echo "hold-random, $connections connections, $seconds s each, $reps reps; postgres $url"
for rep in $(seq "$reps"); do
    for name in "${names[@]}"; do
        port=${ports[$name]}
        create=(); [ "$rep" -gt 1 ] && create=(--no-create)
        build/bench/loadgen --port "$port" --workload hold-random -c "$connections" \
            -d "$seconds" --seed "$rep" "${create[@]}" --json "$work/$name-$rep.json" >/dev/null
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print("%-15s rep %s: %s" % (sys.argv[2], sys.argv[3], json.dumps(r)))' \
            "$work/$name-$rep.json" "$name" "$rep"
    done
done
