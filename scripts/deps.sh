#!/usr/bin/env bash
# Installs the Debian packages Holdfast needs to build, test and run, when any is missing.
# Called by the Makefile; safe to run again (it does nothing when all is there).
#   scripts/deps.sh          install what is missing
#   scripts/deps.sh --check  exit 1 when something is missing, install nothing
#   scripts/deps.sh --bench  also the benchmark tools (wrk)
set -euo pipefail

packages=(build-essential pkg-config libuv1-dev node-llhttp libjansson-dev libsqlite3-dev
          libssl-dev libpq-dev libcmocka-dev python3 sqlite3 curl)
if [ "${1:-}" = "--bench" ]; then packages+=(wrk); fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    case "$status" in *"ok installed"*) ;; *) missing+=("$package") ;; esac
done
# clang and its sanitizer runtime are optional: gcc's sanitizers are used when clang is absent.

if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "${1:-}" = "--check" ]; then
    echo "missing Debian packages: ${missing[*]}" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
