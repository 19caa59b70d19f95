#!/usr/bin/env bash
# `make run`: the server on 127.0.0.1:8080, its SQLite store in ./data, with a demo event
# ("demo": two sections and a general-admission pool) created on first start. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "holdfast: http://127.0.0.1:8080  (try: curl http://127.0.0.1:8080/v1/events/demo)"
exec build/holdfast serve --listen 127.0.0.1:8080 --data ./data --demo
