#!/usr/bin/env bash
# Several nodes on one PostgreSQL (docs/API.md "Several nodes"), measured on 127.0.0.1 with wrk:
#   1. the cost of a forwarded request beside a direct one (GET of an event, a hold of one unit
#      of a pool), 16 and 32 connections;
#   2. holds/s of 1, 2 and 3 nodes on disjoint events (one wrk per node, at once);
#   3. takeover: seconds from kill -9, SIGSTOP or SIGTERM of the owner until the other node
#      answers about the unit (Holdfast-Node of the other), BENCH_REPS times each.
#   bench/cluster.sh            (BENCH_SECONDS per point, default 5; BENCH_REPS, default 3)
# Starts its own PostgreSQL (scripts/postgres.sh) and servers and stops them. On a 2-core
# machine the nodes, wrk and PostgreSQL share the cores: see the report's caveat.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${BENCH_SECONDS:-5}
reps=${BENCH_REPS:-3}
binary=${HOLDFAST_BINARY:-build/holdfast}
work=$(mktemp -d /tmp/holdfast-bench-cluster-XXXXXX)
chmod 755 "$work" # PostgreSQL runs as its own user when this runs as root
url=$(scripts/postgres.sh start "$work/pg")
pids=()
base=${BENCH_PORT:-18600}

cleanup() {
    for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -9 "$pid" 2>/dev/null || true; done
    scripts/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

database() { # a fresh database's URL
    local name="b$RANDOM$RANDOM"
    psql "$url" -qc "CREATE DATABASE $name" >/dev/null
    echo "${url%/*}/$name"
}
node() { # node NAME PORT DB_URL: starts it, prints its pid
    mkdir -p "$work/$1-$2"
    "$binary" serve --listen "127.0.0.1:$2" --data "$work/$1-$2" --store "$3" --node-id "$1" \
        >/dev/null 2>>"$work/$1.log" &
    echo $!
}
ready() { for _ in $(seq 1 100); do curl -sf "localhost:$1/healthz" >/dev/null && return; sleep 0.05; done; }
event() { # event PORT ID: an event with a large pool
    curl -s -o /dev/null -X POST "localhost:$1/v1/events" -H "Content-Type: application/json" -d "{\"id\": \"$2\", \"name\": \"B\",
        \"currency\": \"USD\", \"max_seats_per_user\": 0, \"sections\": [{\"id\": \"S\",
        \"price\": 1, \"rows\": [{\"id\": \"A\", \"seats\": 1}]}], \"pools\": [{\"id\": \"GA\",
        \"capacity\": 100000000, \"price\": 1}]}"
}
hold_script() { # a wrk script holding one unit of event $1's pool per request
    cat >"$work/hold-$1.lua" <<EOF
request = function()
  local body = '{"user_id":"u' .. math.random(1, 2000000000) .. '","pools":{"GA":1}}'
  return wrk.format("POST", "/v1/events/$1/holds", {["Content-Type"]="application/json"}, body)
end
EOF
    echo "$work/hold-$1.lua"
}
wrk_line() { # wrk_line LABEL wrk-args...: "LABEL req/s p50 p99"
    local label=$1; shift
    wrk -t1 --latency "$@" | awk -v label="$label" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2}
        /^ +99%/ {p99=$2} END {printf "%-34s %10s req/s  p50 %8s  p99 %8s\n", label, rps, p50, p99}'
}

echo "== forwarded beside direct (B forwards to A, the owner)"
db=$(database)
a=$(node A $base "$db"); pids+=("$a"); ready $base
b=$(node B $((base + 1)) "$db"); pids+=("$b"); ready $((base + 1))
event $base f1
script=$(hold_script f1)
for c in 16 32; do
    wrk_line "GET event, direct, $c conn" -c$c -d${seconds}s "http://127.0.0.1:$base/v1/events/f1"
    wrk_line "GET event, forwarded, $c conn" -c$c -d${seconds}s "http://127.0.0.1:$((base + 1))/v1/events/f1"
    wrk_line "hold, direct, $c conn" -c$c -d${seconds}s -s "$script" "http://127.0.0.1:$base"
    wrk_line "hold, forwarded, $c conn" -c$c -d${seconds}s -s "$script" "http://127.0.0.1:$((base + 1))"
done
kill -9 "$a" "$b"; pids=()

echo "== nodes on disjoint events (holds, 32 connections per node, all at once)"
for count in 1 2 3; do
    db=$(database)
    ports=()
    for index in $(seq 0 $((count - 1))); do
        port=$((base + 10 + index)); ports+=("$port")
        pid=$(node "N$index" "$port" "$db"); pids+=("$pid"); ready "$port"
        event "$port" "d$index"
    done
    total=0
    loads=()
    for index in $(seq 0 $((count - 1))); do
        wrk -t1 -c32 -d${seconds}s -s "$(hold_script "d$index")" "http://127.0.0.1:${ports[$index]}" \
            >"$work/disjoint-$index.txt" &
        loads+=("$!")
    done
    wait "${loads[@]}"
    for index in $(seq 0 $((count - 1))); do
        rps=$(awk '/Requests\/sec/ {print $2}' "$work/disjoint-$index.txt")
        total=$(echo "$total + ${rps:-0}" | bc)
    done
    printf "%d node(s): %10.0f holds/s in all\n" "$count" "$total"
    kill -9 "${pids[@]}"; pids=()
done

echo "== takeover (seconds until the other node answers about the unit)"
for signal in KILL STOP TERM; do
    for rep in $(seq 1 "$reps"); do
        db=$(database)
        a=$(node A $((base + 20)) "$db"); pids+=("$a"); ready $((base + 20))
        b=$(node B $((base + 21)) "$db"); pids+=("$b"); ready $((base + 21))
        event $((base + 20)) t1
        curl -s -o /dev/null "localhost:$((base + 21))/v1/events/t1"
        sleep 0.$((RANDOM % 10))
        start=$(date +%s.%N)
        kill -"$signal" "$a"
        while [ "$(curl -s -m 1 -o /dev/null -D - "localhost:$((base + 21))/v1/events/t1" |
                   tr -d '\r' | awk 'tolower($1) == "holdfast-node:" {print $2}')" != B ]; do
            sleep 0.05
        done
        printf "takeover after SIG%s: %.2f s\n" "$signal" "$(echo "$(date +%s.%N) - $start" | bc)"
        kill -CONT "$a" 2>/dev/null || true
        kill -9 "$a" "$b" 2>/dev/null || true
        wait "$a" "$b" 2>/dev/null || true
        pids=()
    done
done
