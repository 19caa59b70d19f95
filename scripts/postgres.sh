#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and demos (API.md section 11):
#   scripts/postgres.sh start DIR   initdb in DIR (when missing) and start it on a free port of
#                                   127.0.0.1 only; prints the URL (postgres://...) on stdout
#   scripts/postgres.sh url DIR     prints the URL of the server started in DIR
#   scripts/postgres.sh stop DIR    stops it (fast shutdown); DIR is left for the caller
# Durable settings (fsync on, synchronous_commit on: the defaults, said again here) so what a
# test checks is what production would do. PostgreSQL refuses to run as root: as root the server
# runs as the postgres user (setpriv, as bench/run.sh does), and DIR is given to that user.
set -euo pipefail

command=${1:-}
dir=${2:-}
if [ -z "$command" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop|url DIR" >&2
    exit 2
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$pg_bin" ]; then
    echo "$0: PostgreSQL's server is not installed (scripts/deps.sh --test installs it)" >&2
    exit 1
fi
as_postgres=()
if [ "$(id -u)" -eq 0 ]; then as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups --); fi
data="$dir/data"
user=holdfast

url_print() {
    echo "postgres://$user@127.0.0.1:$(cat "$dir/port")/holdfast"
}

# A port nobody listens on now; the server binds it a moment later (a race another process
# could win, in which case start fails and says so).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case "$command" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    data="$dir/data"
    if [ ${#as_postgres[@]} -gt 0 ]; then chown postgres "$dir"; chmod 755 "$dir"; fi
    if [ ! -f "$data/PG_VERSION" ]; then
        "${as_postgres[@]}" "$pg_bin/initdb" -D "$data" -U "$user" --auth=trust -E UTF8 \
            >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # A restart keeps its port, so the URL handed out before stays right (a server of the
    # fault tests reconnects to it by itself).
    if [ -f "$dir/port" ]; then port=$(cat "$dir/port"); else port=$(free_port); fi
    echo "$port" >"$dir/port"
    "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 \
        -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c fsync=on -c synchronous_commit=on -c max_connections=300" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    "$pg_bin/psql" -q -h 127.0.0.1 -p "$port" -U "$user" -d postgres \
        -c "SELECT 1 FROM pg_database WHERE datname = 'holdfast'" -tA | grep -q 1 ||
        "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" holdfast
    url_print
    ;;
url)
    url_print
    ;;
stop)
    if [ -f "$data/postmaster.pid" ]; then
        "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    fi
    ;;
*)
    echo "usage: $0 start|stop|url DIR" >&2
    exit 2
    ;;
esac
