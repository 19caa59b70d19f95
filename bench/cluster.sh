#!/usr/bin/env bash
# Several nodes on one PostgreSQL (docs/API.md "Several nodes"), measured on 127.0.0.1 with wrk:
#   1. the cost of a forwarded request beside a direct one (GET of an event, a hold of one unit
#      of a pool), 16 and 32 connections, direct and forwarded one right after the other on
#      the same two nodes (fresh ones in each repetition);
#   2. holds/s of 1, 2 and 3 nodes on disjoint events (one wrk per node, at once);
#   3. takeover: seconds from kill -9, SIGSTOP or SIGTERM of the owner until the other node
#      answers about the unit (Holdfast-Node of the other).
#   bench/cluster.sh            (BENCH_SECONDS per point, default 5; BENCH_REPS, default 3)
# Each of the three is repeated BENCH_REPS times. With BENCH_OUT=DIR the raw results stay in
# DIR for bench/report.py (bench/run.sh's part `cluster` sets it): every wrk output as
# cluster__VARIANT__cC__p1__rREP.txt, the takeovers as cluster-takeover.txt (one line
# "signal=KILL rep=1 seconds=5.21 node=B" each; seconds=none when none came within 30 s) and
# the commands as commands.txt. Starts its own PostgreSQL (scripts/postgres.sh) and servers and
# stops them. On a 2-core machine the nodes, wrk and PostgreSQL share the cores: see the
# report's caveat.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${BENCH_SECONDS:-5}
reps=${BENCH_REPS:-3}
binary=${HOLDFAST_BINARY:-build/holdfast}
work=$(mktemp -d /tmp/holdfast-bench-cluster-XXXXXX)
chmod 755 "$work" # PostgreSQL runs as its own user when this runs as root
out=${BENCH_OUT:-$work/out}
mkdir -p "$out"
: >"$out/cluster-takeover.txt"
: >"$out/commands.txt"
url=$(scripts/postgres.sh start "$work/pg")
pids=()
base=${BENCH_PORT:-18600}
# A takeover not seen within this many seconds is recorded as none (the goal is under 10 s).
takeover_limit_s=30

cleanup() {
    for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -9 "$pid" 2>/dev/null || true; done
    scripts/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note_command() { grep -qxF -- "$*" "$out/commands.txt" || printf '%s\n' "$*" >>"$out/commands.txt"; }
database() { # a fresh database's URL
    local name="b$RANDOM$RANDOM"
    psql "$url" -qc "CREATE DATABASE $name" >/dev/null
    echo "${url%/*}/$name"
}
node() { # node NAME PORT DB_URL: starts it, prints its pid
    mkdir -p "$work/$1-$2"
    note_command "$binary serve --listen 127.0.0.1:PORT --data DIR --store postgres://.../DATABASE --node-id NAME  (one database per repetition)"
    "$binary" serve --listen "127.0.0.1:$2" --data "$work/$1-$2" --store "$3" --node-id "$1" \
        >/dev/null 2>>"$work/$1.log" &
    echo $!
}
ready() { for _ in $(seq 1 100); do curl -sf "localhost:$1/healthz" >/dev/null && return; sleep 0.05; done; }
stop_nodes() { # kill -9 every node started (a clean stop would hand leases back: not measured)
    for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -9 "$pid" 2>/dev/null || true; done
    # The nodes are not this shell's children (started in $(...)): wait until they are gone,
    # so the next repetition finds its ports free (a zombie nobody reaps counts as gone at 2 s).
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    done
    pids=()
}
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
# wrk_run FILE LABEL wrk-args...: runs wrk into FILE, prints "LABEL req/s p50 p99"
wrk_run() {
    local file=$1 label=$2
    shift 2
    local shown="wrk -t1 --latency $*"
    note_command "${shown//$work\//}"
    wrk -t1 --latency "$@" >"$file" 2>&1 || true
    awk -v label="$label" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
        END {printf "%-34s %10s req/s  p50 %8s  p99 %8s\n", label, rps, p50, p99}' "$file"
}

echo "== forwarded beside direct (B forwards to A, the owner)"
for rep in $(seq 1 "$reps"); do
    db=$(database)
    a=$(node A $base "$db"); pids+=("$a"); ready $base
    b=$(node B $((base + 1)) "$db"); pids+=("$b"); ready $((base + 1))
    event $base f1
    script=$(hold_script f1)
    for c in 16 32; do
        for route in direct forwarded; do
            port=$base
            if [ "$route" = forwarded ]; then port=$((base + 1)); fi
            wrk_run "$out/cluster__get-${route}__c${c}__p1__r$rep.txt" "GET event, $route, $c conn, rep $rep" \
                -c$c -d${seconds}s "http://127.0.0.1:$port/v1/events/f1"
        done
        for route in direct forwarded; do
            port=$base
            if [ "$route" = forwarded ]; then port=$((base + 1)); fi
            wrk_run "$out/cluster__hold-${route}__c${c}__p1__r$rep.txt" "hold, $route, $c conn, rep $rep" \
                -c$c -d${seconds}s -s "$script" "http://127.0.0.1:$port"
        done
    done
    stop_nodes
done

echo "== nodes on disjoint events (holds, 32 connections per node, all at once)"
for rep in $(seq 1 "$reps"); do
    for count in 1 2 3; do
        db=$(database)
        ports=()
        for index in $(seq 0 $((count - 1))); do
            port=$((base + 10 + index)); ports+=("$port")
            pid=$(node "N$index" "$port" "$db"); pids+=("$pid"); ready "$port"
            event "$port" "d$index"
        done
        loads=()
        for index in $(seq 0 $((count - 1))); do
            note_command "wrk -t1 --latency -c32 -d${seconds}s -s hold-dN.lua http://127.0.0.1:PORT  (one per node, all at once)"
            wrk -t1 --latency -c32 -d${seconds}s -s "$(hold_script "d$index")" "http://127.0.0.1:${ports[$index]}" \
                >"$out/cluster__disjoint-n$count-node${index}__c32__p1__r$rep.txt" 2>&1 &
            loads+=("$!")
        done
        wait "${loads[@]}" || true
        total=0
        for index in $(seq 0 $((count - 1))); do
            rps=$(awk '/Requests\/sec/ {print $2}' "$out/cluster__disjoint-n$count-node${index}__c32__p1__r$rep.txt")
            total=$(echo "$total + ${rps:-0}" | bc)
        done
        printf "%d node(s), rep %d: %10.0f holds/s in all\n" "$count" "$rep" "$total"
        stop_nodes
    done
done

echo "== takeover (seconds until the other node answers about the unit)"
note_command "kill -KILL|-STOP|-TERM A; curl -s -m 1 -D - http://127.0.0.1:B/v1/events/t1 every 50 ms until Holdfast-Node: B"
for signal in KILL STOP TERM; do
    for rep in $(seq 1 "$reps"); do
        db=$(database)
        a=$(node A $((base + 20)) "$db"); pids+=("$a"); ready $((base + 20))
        b=$(node B $((base + 21)) "$db"); pids+=("$b"); ready $((base + 21))
        event $((base + 20)) t1
        curl -s -o /dev/null "localhost:$((base + 21))/v1/events/t1"
        # A random phase against the owner's renewal, once a second.
        sleep 0.$((RANDOM % 10))
        start=$(date +%s.%N)
        kill -"$signal" "$a"
        took=none
        while :; do
            answered=$(curl -s -m 1 -o /dev/null -D - "localhost:$((base + 21))/v1/events/t1" |
                       tr -d '\r' | awk 'tolower($1) == "holdfast-node:" {print $2}' || true)
            elapsed=$(echo "$(date +%s.%N) - $start" | bc)
            if [ "$answered" = B ]; then took=$(printf '%.3f' "$elapsed"); break; fi
            if [ "$(echo "$elapsed > $takeover_limit_s" | bc)" = 1 ]; then break; fi
            sleep 0.05
        done
        echo "signal=$signal rep=$rep seconds=$took node=${answered:-none}" >>"$out/cluster-takeover.txt"
        printf "takeover after SIG%s, rep %d: %s s\n" "$signal" "$rep" "$took"
        stop_nodes
    done
done
