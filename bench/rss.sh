#!/usr/bin/env bash
# Memory against holds made: the server's resident set before and after SECONDS of
# hold-random (holds that lapse after 1 s, so the store keeps writing and finished holds pile
# up). A server whose memory is bounded ends where it started, give or take its users.
#
#   bench/rss.sh [SECONDS] [BINARY] [loadgen options...]
#   bench/rss.sh 45 build/holdfast --users 1000     # few users: only the holds can grow
#
# Starts its own server on 127.0.0.1:${RSS_PORT:-18494} with a fresh data directory under
# /var/tmp, and stops it at the end. Prints one line: RSS before and after, holds made.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-45}
binary=${2:-build/holdfast}
shift $(( $# >= 2 ? 2 : $# ))
port=${RSS_PORT:-18494}
loadgen=build/bench/loadgen
[ -x "$loadgen" ] && [ -x "$binary" ] || { echo "rss: run 'make bench-tools' first" >&2; exit 1; }

data=$(mktemp -d /var/tmp/holdfast-rss.XXXXXX)
"$binary" serve --listen "127.0.0.1:$port" --data "$data" >"$data.log" 2>&1 &
server=$!
cleanup() {
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$data" "$data.log"
}
trap cleanup EXIT
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    sleep 0.1
done

rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
# One second first: the event, the maps and SQLite's cache reach their working size.
"$loadgen" --port "$port" --workload hold-random -c 50 -d 1 "$@" >/dev/null
before=$(rss)
out=$("$loadgen" --port "$port" --workload hold-random -c 50 -d "$seconds" --no-create "$@")
after=$(rss)
holds=$(printf '%s\n' "$out" | sed -n 's/.*201: \([0-9]*\).*/\1/p')
rate=$(printf '%s\n' "$out" | awk '/requests\/s/ {print $1}')
echo "rss: $binary: ${before} kB before, ${after} kB after ${seconds} s of hold-random" \
     "(${holds} holds made, ${rate} requests/s)"
