#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and demos (API.md section 11):
#   scripts/postgres.sh start DIR   initdb in DIR (when missing) and start it on a free port of
#                                   127.0.0.1 only; prints the URL (postgres://...) on stdout
#   scripts/postgres.sh url DIR     prints the URL of the server started in DIR
#   scripts/postgres.sh stop DIR    stops it (fast shutdown); DIR is left for the caller
#   scripts/postgres.sh start-pair DIR   a primary in DIR/primary and a synchronous standby in
#                                   DIR/standby (pg_basebackup -R: streaming replication,
#                                   synchronous_standby_names='standby', synchronous_commit on,
#                                   so a COMMIT returns only once the standby has flushed it);
#                                   prints the multi-host URL (both servers,
#                                   target_session_attrs=read-write)
#   scripts/postgres.sh promote DIR  promotes DIR/standby (pg_ctl promote, waits until it
#                                   accepts writes)
#   scripts/postgres.sh stop-pair DIR    stops both (whichever still run)
# Durable settings (fsync on, synchronous_commit on: the defaults, said again here) so what a
# test checks is what production would do. PostgreSQL refuses to run as root: as root the server
# runs as the postgres user (setpriv, as bench/run.sh does), and DIR is given to that user.
set -euo pipefail

command=${1:-}
dir=${2:-}
if [ -z "$command" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop|url|start-pair|promote|stop-pair DIR" >&2
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

# A server of the pair: its data directory and its port, started with the given settings.
pair_server_start() {
    local name=$1 port=$2
    shift 2
    "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$dir/$name/data" -l "$dir/$name/server.log" -w -t 30 \
        -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/$name -c fsync=on -c synchronous_commit=on -c max_connections=300 $*" \
        start >/dev/null || { cat "$dir/$name/server.log" >&2; exit 1; }
}

pair_url_print() {
    echo "postgres://$user@127.0.0.1:$(cat "$dir/primary/port"),127.0.0.1:$(cat "$dir/standby/port")/holdfast?target_session_attrs=read-write"
}

case "$command" in
start-pair)
    mkdir -p "$dir/primary" "$dir/standby"
    dir=$(cd "$dir" && pwd)
    if [ ${#as_postgres[@]} -gt 0 ]; then
        chown postgres "$dir" "$dir/primary" "$dir/standby"
        chmod 755 "$dir" "$dir/primary" "$dir/standby"
    fi
    free_port >"$dir/primary/port"
    free_port >"$dir/standby/port"
    primary_port=$(cat "$dir/primary/port")
    standby_port=$(cat "$dir/standby/port")
    "${as_postgres[@]}" "$pg_bin/initdb" -D "$dir/primary/data" -U "$user" --auth=trust -E UTF8 \
        >"$dir/primary/initdb.log" 2>&1 || { cat "$dir/primary/initdb.log" >&2; exit 1; }
    # Replication connections from loopback are trusted as every other one is (initdb's
    # --auth=trust writes that line for replication too).
    pair_server_start primary "$primary_port" "-c wal_level=replica -c max_wal_senders=5" \
        "-c synchronous_standby_names=standby"
    # The standby's copy, with primary_conninfo naming it "standby" (application_name), which
    # synchronous_standby_names waits for.
    "${as_postgres[@]}" "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U "$user" \
        -D "$dir/standby/data" -R -X stream -c fast \
        -d "host=127.0.0.1 port=$primary_port user=$user application_name=standby" \
        >"$dir/standby/basebackup.log" 2>&1 || { cat "$dir/standby/basebackup.log" >&2; exit 1; }
    pair_server_start standby "$standby_port" "-c hot_standby=on"
    # Until the standby streams, every COMMIT on the primary would wait for it.
    for _ in $(seq 1 100); do
        state=$("$pg_bin/psql" -h 127.0.0.1 -p "$primary_port" -U "$user" -d postgres -tA \
            -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")
        [ "$state" = "sync" ] && break
        sleep 0.1
    done
    [ "$state" = "sync" ] || { echo "$0: the standby is not synchronous ($state)" >&2; exit 1; }
    "$pg_bin/createdb" -h 127.0.0.1 -p "$primary_port" -U "$user" holdfast
    pair_url_print
    ;;
promote)
    dir=$(cd "$dir" && pwd)
    "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$dir/standby/data" -w -t 30 promote >/dev/null
    ;;
stop-pair)
    for name in primary standby; do
        if [ -f "$dir/$name/data/postmaster.pid" ]; then
            "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$dir/$name/data" -m immediate -w stop \
                >/dev/null 2>&1 || true
        fi
    done
    ;;
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
    echo "usage: $0 start|stop|url|start-pair|promote|stop-pair DIR" >&2
    exit 2
    ;;
esac
