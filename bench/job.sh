#!/bin/sh
# A cancel job of 100,000 orders onto another event: time to done, and holds' latency on a third
# event during the job against the same without one (bench/job.py says how).
set -e
cd "$(dirname "$0")/.."
exec python3 bench/job.py --binary "${1:-build/holdfast}" --orders "${ORDERS:-100000}"
