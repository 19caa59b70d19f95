#!/usr/bin/env bash
# Installs the Debian packages Holdfast needs, when any is missing. Called by the Makefile;
# safe to run again (it does nothing when all is there).
#   scripts/deps.sh [--check] [--test] [--bench]
#     (none)   what building and running the server needs
#     --test   also what `make test` needs (cmocka, python3, clang for fuzzing, chromium and
#              node for the browser test, prometheus for promtool and a real scrape of /metrics)
#     --bench  also the benchmark tools and the peers they compare with
#     --check  exit 1 when something is missing, install nothing
set -euo pipefail

packages=(build-essential pkg-config libuv1-dev node-llhttp libjansson-dev libsqlite3-dev
          libssl-dev libpq-dev libcurl4-openssl-dev)
test_packages=(libcmocka-dev python3 python3-jwt sqlite3 curl clang libclang-rt-14-dev chromium valgrind
               cppcheck clang-tidy clang-format prometheus postgresql)
bench_packages=(wrk curl python3 redis-server redis-tools postgresql postgresql-contrib gnuplot-nox valgrind)

check=0
want_node=0
for argument in "$@"; do
    case "$argument" in
    --check) check=1 ;;
    --test) packages+=("${test_packages[@]}"); want_node=1 ;;
    --bench) packages+=("${bench_packages[@]}") ;;
    *) echo "usage: scripts/deps.sh [--check] [--test] [--bench]" >&2; exit 2 ;;
    esac
done

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    case "$status" in *"ok installed"*) ;; *) missing+=("$package") ;; esac
done

# node and npm (the browser test) may come from another packaging of Node.js: only when the
# commands are missing are Debian's packages installed.
if [ "$want_node" -eq 1 ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
    missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$check" -eq 1 ]; then
    echo "missing Debian packages: ${missing[*]}" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
