#!/usr/bin/env bash
# Instructions per request, by thread, counted by callgrind: unlike requests per second on a
# small shared machine, the count is the same from one run to the next, so a change to the hot
# path can be judged by a few percent. Used by bench/run.sh (part "profile") and alone:
#
#   bench/profile.sh OUT_DIR        (build/holdfast and build/bench/loadgen must exist)
#
# The server runs under valgrind --tool=callgrind; loadgen warms it up (the event, the maps),
# the counters are zeroed, PROFILE_SECONDS of hold-random at 10 connections are counted, and the
# counters are dumped. Writes OUT_DIR/profile.json (instructions per answer for each thread,
# the loop thread's top functions) and keeps the raw callgrind files there.
#
# Settings: PROFILE_SECONDS (5), PROFILE_PORT (18480), PROFILE_WORKLOAD (hold-random; webhook
# starts the server with a webhook secret and signs with it, so the writer's cost of a committed
# payment can be counted), PROFILE_TOP (15: the functions listed for each thread).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/profile.sh OUT_DIR}
seconds=${PROFILE_SECONDS:-5}
port=${PROFILE_PORT:-18480}
workload=${PROFILE_WORKLOAD:-hold-random}
serve_args=() loadgen_args=()
if [ "$workload" = webhook ]; then
    serve_args=(--webhook-secret profile-webhook-secret)
    loadgen_args=(--webhook-secret profile-webhook-secret --seats 60000 --ttl 1)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
data=$(mktemp -d /var/tmp/holdfast-profile.XXXXXX)
server_pid=""

cleanup() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$data"
}
trap cleanup EXIT

command -v valgrind >/dev/null || { echo "profile: valgrind is missing" >&2; exit 1; }
valgrind --tool=callgrind --separate-threads=yes --dump-instr=no --compress-strings=no \
    --callgrind-out-file="$out/callgrind.out.%p" \
    build/holdfast serve --listen "127.0.0.1:$port" --data "$data" ${serve_args[@]+"${serve_args[@]}"} >"$out/server.log" 2>&1 &
server_pid=$!

# Under callgrind the server starts some fifty times slower than usual.
for _ in $(seq 1 600); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
    kill -0 "$server_pid" 2>/dev/null || { echo "profile: the server died" >&2; cat "$out/server.log" >&2; exit 1; }
    sleep 0.1
done

build/bench/loadgen --port "$port" --workload "$workload" -c 10 -d 2 --warmup 0 \
    ${loadgen_args[@]+"${loadgen_args[@]}"} >"$out/warmup.txt" 2>&1
callgrind_control -z "$server_pid" >/dev/null
build/bench/loadgen --port "$port" --workload "$workload" -c 10 -d "$seconds" --warmup 0 \
    ${loadgen_args[@]+"${loadgen_args[@]}"} --no-create --json "$out/measured.json" >"$out/measured.txt" 2>&1
callgrind_control -d "$server_pid" >/dev/null
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""

python3 - "$out" <<'EOF'
"""Turns the dump taken after the measured run into profile.json."""
import glob
import json
import os
import re
import sys

out = sys.argv[1]
measured = json.load(open(os.path.join(out, "measured.json")))
answers = measured["requests"]
# callgrind_control -d writes NAME.PID.1-TT, one file per thread TT; the files without ".1"
# are the final dump at exit and are not read.
dumps = sorted(glob.glob(os.path.join(out, "callgrind.out.*.1-*")))
# The store's writer (store_writer) writes the batches, its syncer threads (sync_thread) sync
# the log. Older builds: workers that wrote and then synced (store_worker), or a writer thread
# named store_thread.
roles = [("store_writer", "store"), ("store_worker", "store"), ("store_thread", "store"),
         ("sync_thread", "syncer"), ("checkpoint_thread", "checkpoint"), ("uv_run", "loop")]
threads = {}
loop_file = None
store_file = None
top_count = int(os.environ.get("PROFILE_TOP", "15"))
for path in dumps:
    text = open(path, errors="replace").read()
    total = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if not total:
        continue
    role = next((name for marker, name in roles if marker in text), "other")
    threads[role] = threads.get(role, 0) + int(total.group(1))
    if role == "loop":
        loop_file = path
    if role == "store":
        store_file = path

def self_costs(path):
    """Self cost per function of one callgrind file (written with --compress-strings=no):
    cost lines belong to the last fn=, except the line after calls=, which is the inclusive
    cost of that call. Functions of a library without symbols are named after the library."""
    costs, obj, function, skip_next = {}, "", "", False
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            obj = os.path.basename(line[3:].strip())
        elif line.startswith("fn="):
            name = line[3:].strip()
            function = name if not name.startswith("0x") else "(%s)" % obj
        elif line.startswith("calls="):
            skip_next = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if skip_next:
                skip_next = False
                continue
            parts = line.split()
            if len(parts) >= 2:
                costs[function] = costs.get(function, 0) + int(parts[1])
    return costs

def top_of(path):
    """The thread's costliest functions by self cost, per answer."""
    if not path:
        return []
    costs = self_costs(path)
    return [{"function": name, "per_answer": round(instructions / answers)}
            for name, instructions in sorted(costs.items(), key=lambda item: -item[1])[:top_count]]

top = top_of(loop_file)
store_top = top_of(store_file)

profile = {"answers": answers, "connections": 10, "seconds": measured.get("seconds"),
           "statuses": measured.get("statuses"),
           "per_answer": {role: round(total / answers) for role, total in sorted(threads.items())},
           "workload": os.environ.get("PROFILE_WORKLOAD", "hold-random"),
           "loop_top": top, "store_top": store_top}
json.dump(profile, open(os.path.join(out, "profile.json"), "w"), indent=1)
print("profile: %d answers; instructions per answer: %s" % (
    answers, ", ".join("%s %d" % item for item in profile["per_answer"].items())))
EOF
