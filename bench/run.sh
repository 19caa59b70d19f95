#!/usr/bin/env bash
# `make bench`: Holdfast and its peers (Redis, PostgreSQL) measured in one run on this machine,
# then docs/BENCHMARKS.md and bench/throughput.svg regenerated from the results.
#
# Every server is started here on 127.0.0.1 with its own port and a data directory under
# /var/tmp (a real disk: fsync costs what it costs), and stopped at the end, also on failure.
#
# Settings (environment):
#   BENCH_SECONDS=3          measured seconds per point (after 0.5 s of warm-up; pgbench runs
#                            longer and the report counts the same window from its log)
#   BENCH_REPS=3             repetitions per point; the report quotes medians
#   BENCH_CONNECTIONS="1 8 50 200"
#   BENCH_HEADLINE=50        connection count of the summary table
#   BENCH_PORT_BASE=18400    Holdfast on BASE, Redis on BASE+1 (no persistence) and BASE+3
#                            (appendfsync always), PostgreSQL on BASE+2
#   BENCH_ONLY="holdfast redis postgres core flash profile ceiling webhook exchange credentials queue dispatch pgstore cluster notify calendar job prequeue allocations waitlist"
#                            parts to run (pgstore: one node on the PostgreSQL store beside one
#                            on SQLite; cluster: several nodes on one PostgreSQL, bench/cluster.sh:
#                            forwarded beside direct requests, 1 to 3 nodes on disjoint events,
#                            takeover after kill -9, SIGSTOP and SIGTERM; postgres is PostgreSQL
#                            alone as a peer, through pgbench; notify: hold-random with outbound
#                            notifications off, on against a receiver answering at once, and on
#                            against a dead receiver). A run of some parts only, none of
#                            holdfast, redis and postgres among them, rewrites only their sections
#                            of docs/BENCHMARKS.md (bench/report.py merges them into it)
#   BENCH_PGSTORE_OTHERS="NAME=BINARY ..."  part pgstore: other builds on PostgreSQL in the
#                            same repetitions, each in a row of its own (a change before and after)
#   BENCH_NO_REPORT=1        keep the results, do not rewrite docs/BENCHMARKS.md
#   BENCH_QUEUE_LINE=1000000 part queue: the waiting users polled (and measured in RSS)
#   BENCH_DRIVERS=100000     part dispatch: the drivers of the fleet
#   BENCH_CALENDAR_RESOURCES=10000  part calendar: the calendar's resources (half of
#                            capacity 1, half of capacity 10)
#   BENCH_CALENDAR_USES=120  part calendar: the 3-night bookings per resource of the read
#                            benchmarks (120: 1.2 million live uses over 10,000 resources)
#   BENCH_JOB_ORDERS=100000  part job: the confirmed orders of the cancelled event
#   BENCH_PREQUEUE_TICKETS=1000000  part prequeue: the tickets joined before opens_at
#   BENCH_ALLOCATION_PAIRS=5 part allocations: plain and 50%-allocated servers, interleaved
#   BENCH_WAITLIST_ENTRIES=100000, BENCH_WAITLIST_LAPSES=10000  part waitlist: the waiting
#                            entries and the holds that lapse at one instant
# Results stay in bench/results/<UTC time>/ (raw outputs, commands, logs).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${BENCH_SECONDS:-3}
reps=${BENCH_REPS:-3}
connections_list=${BENCH_CONNECTIONS:-"1 8 50 200"}
headline=${BENCH_HEADLINE:-50}
port_base=${BENCH_PORT_BASE:-18400}
only=${BENCH_ONLY:-"holdfast redis postgres core flash profile ceiling webhook exchange credentials queue dispatch pgstore cluster notify calendar job prequeue allocations waitlist"}
queue_line=${BENCH_QUEUE_LINE:-1000000}
drivers=${BENCH_DRIVERS:-100000}
calendar_resources=${BENCH_CALENDAR_RESOURCES:-10000}
calendar_uses=${BENCH_CALENDAR_USES:-120}
job_orders=${BENCH_JOB_ORDERS:-100000}
prequeue_tickets=${BENCH_PREQUEUE_TICKETS:-1000000}
allocation_pairs=${BENCH_ALLOCATION_PAIRS:-5}
waitlist_entries=${BENCH_WAITLIST_ENTRIES:-100000}
waitlist_lapses=${BENCH_WAITLIST_LAPSES:-10000}
hf_port=$port_base
redis_port=$((port_base + 1))
pg_port=$((port_base + 2))
redis_always_port=$((port_base + 3))
seats=60000
loadgen=build/bench/loadgen
corebench=build/bench/corebench

ceiling=build/bench/holdfast-ceiling

receiver=build/bench/notify_receiver

for tool in "$loadgen" "$corebench" "$ceiling" "$receiver" build/holdfast; do
    [ -x "$tool" ] || { echo "bench: $tool is missing: run 'make bench'" >&2; exit 1; }
done

results=bench/results/$(date -u +%Y%m%dT%H%M%SZ)
raw=$results/raw
mkdir -p "$raw"
work=$(mktemp -d /var/tmp/holdfast-bench.XXXXXX)
commands=$results/commands.txt
: >"$commands"

hf_pid=""
redis_pids=()
pg_data=""
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_postgres=()
# PostgreSQL refuses to run as root: as root, run it as the postgres user. setpriv execs (no
# intermediate process), so the server is this script's own child and is reaped here.
if [ "$(id -u)" -eq 0 ]; then as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups --); fi
pg_pid=""

log() { printf '%s bench: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# The first command of each kind goes to commands.txt, for the report; with the part it ran
# in ($part, set where a part begins) also to commands-by-part.txt, which a run of some parts
# only quotes in their own sections.
part=""
note_command() {
    grep -qxF -- "$*" "$commands" || printf '%s\n' "$*" >>"$commands"
    if [ -n "$part" ]; then
        grep -qxF -- "$part	$*" "$results/commands-by-part.txt" 2>/dev/null ||
            printf '%s\t%s\n' "$part" "$*" >>"$results/commands-by-part.txt"
    fi
}

hf_data=""
stop_holdfast() {
    if [ -n "$hf_pid" ]; then
        kill -TERM "$hf_pid" 2>/dev/null || true
        wait "$hf_pid" 2>/dev/null || true
        hf_pid=""
    fi
    if [ -n "$hf_data" ]; then rm -rf "$hf_data"; hf_data=""; fi
}
stop_redis() {
    for port in "$redis_port" "$redis_always_port"; do
        redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    done
    for pid in "${redis_pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    redis_pids=()
}
stop_postgres() {
    if [ -n "$pg_pid" ]; then
        kill -INT "$pg_pid" 2>/dev/null || true   # fast shutdown
        wait "$pg_pid" 2>/dev/null || true
        pg_pid=""
    fi
}
cleanup() {
    stop_holdfast
    stop_redis
    stop_postgres
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() { # wait_for DESCRIPTION COMMAND...: up to 15 s
    local description=$1
    shift
    for _ in $(seq 150); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "bench: $description did not come up" >&2
    return 1
}

# start_holdfast [BINARY [DATA_PARENT [CEILING_MODE [SERVE_OPTIONS...]]]]: build/holdfast with
# its data under $work (a real disk) unless told otherwise; the ceiling build takes
# HOLDFAST_CEILING; the options after the third go to `serve` (the webhook part's secret).
start_holdfast() {
    local binary=${1:-build/holdfast} parent=${2:-$work} mode=${3:-}
    shift $(( $# < 3 ? $# : 3 ))
    stop_holdfast
    hf_data=$(mktemp -d "$parent/holdfast-data.XXXXXX")
    HOLDFAST_CEILING=$mode "$binary" serve --listen "127.0.0.1:$hf_port" --data "$hf_data" "$@" \
        2>>"$results/holdfast.log" &
    hf_pid=$!
    wait_for "holdfast" curl -sf "http://127.0.0.1:$hf_port/healthz"
}

# ---- machine and versions ----
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "cores=$(nproc)"
    echo "memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
    echo "kernel=$(uname -sr)"
    echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "disk=$(df -T /var/tmp | awk 'NR == 2 {print $2 " on " $1}')"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "holdfast=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo '+local changes')"
    echo "compiler=$(${CC:-cc} --version | head -1)"
    echo "libuv=$(pkg-config --modversion libuv 2>/dev/null)"
    echo "sqlite=$(pkg-config --modversion sqlite3 2>/dev/null)"
    echo "redis=$(redis-server --version 2>/dev/null | sed 's/.*v=\([^ ]*\).*/\1/')"
    echo "postgres=$("$pg_bin/postgres" --version 2>/dev/null | sed 's/.*) //')"
    echo "wrk=$(dpkg-query -W -f='${Version}' wrk 2>/dev/null)"
    echo "seconds=$seconds"
    echo "reps=$reps"
    echo "connections=$connections_list"
    echo "headline=$headline"
    echo "parts=$only"
    echo "clock_ticks=$(getconf CLK_TCK)"
    # What one fsync costs here: every durable system below waits for it.
    echo "fsync_ms=$(python3 -c '
import os, sys, time
path = sys.argv[1] + "/fsync-probe"
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
samples = []
for i in range(100):
    os.pwrite(fd, b"x" * 4096, (i % 16) * 4096)
    start = time.perf_counter(); os.fsync(fd); samples.append(time.perf_counter() - start)
os.close(fd); os.unlink(path)
samples.sort(); print("%.3f" % (samples[len(samples) // 2] * 1000))' "$work")"
} >"$results/meta.env"
log "results in $results"

# ---- servers ----
# All peers stay up for the whole run, so each repetition can run every system one after
# the other: on a shared machine, noise then falls on all of them alike.
start_redis() { # start_redis MODE PORT
    local mode=$1 port=$2
    mkdir -p "$work/redis-$mode"
    local persistence=(--appendonly no)
    if [ "$mode" = always ]; then persistence=(--appendonly yes --appendfsync always); fi
    note_command "redis-server --port $port --bind 127.0.0.1 --save '' ${persistence[*]}"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$work/redis-$mode" --save '' \
        "${persistence[@]}" --daemonize no --logfile "$PWD/$results/redis-$mode.log" &
    redis_pids+=($!)
    wait_for "redis-server ($mode)" redis-cli -p "$port" ping
}

start_postgres() { # start_postgres [NAME]: a fresh cluster in $work/postgres[-NAME]
    pg_data="$work/postgres${1:+-$1}"
    mkdir -p "$pg_data"
    if [ ${#as_postgres[@]} -gt 0 ]; then chown postgres "$work" "$pg_data"; chmod 755 "$work"; fi
    "${as_postgres[@]}" "$pg_bin/initdb" -D "$pg_data" -U bench --auth=trust -E UTF8 >"$results/postgres-initdb.log" 2>&1
    # Durable defaults (fsync on, synchronous_commit on, full_page_writes on); room for 200
    # clients; the socket in the data directory so nothing outside the temp dir is touched.
    note_command "postgres -p $pg_port -c listen_addresses=127.0.0.1 -c max_connections=250 -c shared_buffers=256MB (fsync and synchronous_commit on, the defaults)"
    "${as_postgres[@]}" "$pg_bin/postgres" -D "$pg_data" -p "$pg_port" -c listen_addresses=127.0.0.1 \
        -k "$pg_data" -c max_connections=250 -c shared_buffers=256MB >"$pg_data/server.log" 2>&1 &
    pg_pid=$!
    wait_for "postgres" "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port"
    "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U bench bench
    "$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U bench -d bench -v ON_ERROR_STOP=1 -f bench/pg/schema.sql >/dev/null
}

# ---- one repetition of one system ----
# CPU time of each of the server's threads so far, in clock ticks, one line "WHEN NAME TICKS"
# per thread (the report divides the difference by the answers: the server's CPU per answer
# moves far less with the machine's noise than requests per second do).
thread_ticks() { # thread_ticks WHEN
    local task
    for task in /proc/"$hf_pid"/task/*; do
        printf '%s %s %s\n' "$1" "$(cat "$task/comm" 2>/dev/null)" \
            "$(awk '{print $14 + $15}' "$task/stat" 2>/dev/null)"
    done
}

loadgen_run() { # loadgen_run NAME WORKLOAD CONNECTIONS PIPELINE REP [loadgen options...]
    local name=$1 workload=$2 connections=$3 pipeline=$4 rep=$5
    shift 5
    local out="$raw/holdfast__${name}__c${connections}__p${pipeline}__r${rep}"
    local command=("$loadgen" --port "$hf_port" --workload "$workload" -c "$connections"
                   -p "$pipeline" -d "$seconds" --seed "$rep" "$@")
    note_command "${command[*]}"
    thread_ticks before >"$out.cpu"
    "${command[@]}" --json "$out.json" >"$out.txt" 2>&1 || log "loadgen $name c$connections p$pipeline rep $rep FAILED (see $out.txt)"
    thread_ticks after >>"$out.cpu"
    log "holdfast $name c=$connections p=$pipeline rep $rep: $(sed -n 2p "$out.txt")"
}

# redis-benchmark counts requests, not seconds: a short probe measures the rate, and each
# repetition then asks for BENCH_SECONDS worth.
declare -A redis_requests
redis_probe() { # redis_probe MODE PORT CONNECTIONS TTL_S
    local mode=$1 port=$2 c=$3 ttl=$4 probe rate n
    redis-cli -p "$port" flushall >/dev/null
    probe=$(redis-benchmark -p "$port" -c "$c" -n $((500 + 100 * c)) -r "$seats" -q \
        SET seat:__rand_int__ user NX EX "$ttl" 2>/dev/null | tr '\r' '\n' |
        sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
    rate=${probe%.*}
    n=$(( ${rate:-10000} * seconds ))
    [ "$n" -ge 2000 ] || n=2000
    redis_requests[$mode/$c/$ttl]=$n
}
redis_run() { # redis_run MODE PORT VARIANT CONNECTIONS TTL_S REP
    local mode=$1 port=$2 variant=$3 c=$4 ttl=$5 rep=$6
    local out="$raw/redis-${mode}__${variant}__c${c}__p1__r${rep}.txt"
    [ -n "${redis_requests[$mode/$c/$ttl]:-}" ] || redis_probe "$mode" "$port" "$c" "$ttl"
    redis-cli -p "$port" flushall >/dev/null
    note_command "redis-benchmark -p $port -c $c -n N -r $seats SET seat:__rand_int__ user NX EX $ttl"
    redis-benchmark -p "$port" -c "$c" -n "${redis_requests[$mode/$c/$ttl]}" -r "$seats" \
        SET seat:__rand_int__ user NX EX "$ttl" 2>&1 | tr '\r' '\n' >"$out"
    echo "keys_after=$(redis-cli -p "$port" dbsize)" >>"$out"
    log "redis $mode $variant c=$c rep $rep: $(grep 'throughput summary' "$out" || echo FAILED)"
}

# The same Redis commands through loadgen, the client Holdfast is measured with: redis-benchmark
# takes about twice loadgen's CPU per request, on the two cores the server also needs.
redis_loadgen_run() { # redis_loadgen_run MODE PORT CONNECTIONS TTL_S REP
    local mode=$1 port=$2 c=$3 ttl=$4 rep=$5
    local out="$raw/loadgen-redis-${mode}__set-nx-ex${ttl}__c${c}__p1__r${rep}"
    local command=("$loadgen" --port "$port" --workload redis-set -c "$c" -d "$seconds"
                   --seed "$rep" --seats "$seats" --ttl "$ttl")
    redis-cli -p "$port" flushall >/dev/null
    note_command "${command[*]}"
    "${command[@]}" --json "$out.json" >"$out.txt" 2>&1 || log "loadgen redis-set $mode c$c rep $rep FAILED (see $out.txt)"
    log "redis $mode through loadgen c=$c rep $rep: $(sed -n 2p "$out.txt")"
}

# pgbench has no warm-up, and its -T counts the time its clients take to connect: 200
# backends took 2.3 s to start here, so a 3 s run measured 0.7 s of a cold server (59
# transactions/s where a 10 s run gives 3,200). So pgbench runs for the connections, a second
# and the measured seconds, and bench/report.py counts, from the per-transaction log, only the
# transactions that end in the BENCH_SECONDS after every client has started plus 0.5 s of
# warm-up, as loadgen does.
pg_seconds() { # pg_seconds CONNECTIONS
    local connect=$(( ($1 * 25 + 999) / 1000 ))
    echo $(( seconds + 1 + (connect < 1 ? 1 : connect) ))
}

pg_run() { # pg_run VARIANT CONNECTIONS REP
    local variant=$1 c=$2 rep=$3
    local threads=$(( c < 2 ? c : 2 )) duration
    duration=$(pg_seconds "$c")
    # Every variant starts from nothing held; the calendar's (part calendar) retry a deadlock
    # of two transactions taking the same nights in another order, as an application would.
    local reset=(-c "UPDATE seats SET status = 'available', user_id = NULL, expires_at = NULL WHERE status <> 'available'"
                 -c "TRUNCATE reservations") retries=()
    case $variant in calendar-*)
        reset=(-c "TRUNCATE cal_uses, cal_holds" -c "UPDATE cal_nights SET free = 10 WHERE free <> 10")
        retries=(--max-tries 10) ;;
    esac
    "$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U bench -d bench -v ON_ERROR_STOP=1 \
        "${reset[@]}" -c "CHECKPOINT" >/dev/null
    local out="$raw/pg__${variant}__c${c}__p1__r${rep}"
    mkdir -p "$out.log"
    note_command "pgbench -h 127.0.0.1 -p $pg_port -U bench -n -M prepared -c $c -j $threads -T $duration ${retries[*]} -f bench/pg/$variant.sql -l bench"
    "$pg_bin/pgbench" -h 127.0.0.1 -p "$pg_port" -U bench -n -M prepared -c "$c" -j "$threads" \
        -T "$duration" "${retries[@]}" -f "bench/pg/$variant.sql" -l --log-prefix="$out.log/tx" bench >"$out.txt" 2>&1 ||
        log "pgbench $variant c$c rep $rep FAILED (see $out.txt)"
    # pgbench's own tps still counts its cold start; the report reads the warm window.
    log "postgres $variant c=$c rep $rep (pgbench's own count): $(grep '^tps' "$out.txt" || echo FAILED)"
}

# ---- the core alone ----
if want core; then
    part=core
    log "core micro-benchmark"
    note_command "$corebench --ops 1000000 --reps $reps"
    "$corebench" --ops 1000000 --reps "$reps" --json "$raw/core.json" >"$raw/core.txt" 2>&1 ||
        log "corebench FAILED (see $raw/core.txt)"
    log "$(tail -1 "$raw/core.txt")"
    note_command "$corebench --only prequeue --ops 1000000"
    "$corebench" --only prequeue --ops 1000000 --json "$raw/prequeue.json" >"$raw/prequeue.txt" \
        2>&1 || log "corebench --only prequeue FAILED (see $raw/prequeue.txt)"
    log "$(tail -1 "$raw/prequeue.txt")"
fi

# ---- instructions per request, by thread (callgrind: exact, unlike the timings) ----
if want profile; then
    part=profile
    log "callgrind profile of hold-random"
    note_command "bench/profile.sh $results/profile  (valgrind --tool=callgrind on build/holdfast; hold-random -c 10 -d 5 after a warm-up)"
    if bench/profile.sh "$results/profile" >"$raw/profile.txt" 2>&1; then
        cp "$results/profile/profile.json" "$raw/profile.json"
        log "$(tail -1 "$raw/profile.txt")"
    else
        log "profile FAILED (see $raw/profile.txt)"
    fi
fi

part=""  # the parts below up to the ceiling run interleaved: their commands name no part
if want redis; then
    start_redis none "$redis_port"
    start_redis always "$redis_always_port"
fi
if want postgres; then start_postgres; fi

# ---- hold a random seat: every system, every connection count, interleaved ----
for c in $connections_list; do
    # A fresh Holdfast per connection count, so earlier points leave no state behind.
    if want holdfast; then start_holdfast; fi
    for rep in $(seq "$reps"); do
        if want holdfast; then
            loadgen_run hold-random hold-random "$c" 1 "$rep" --seats "$seats" --ttl 1
            loadgen_run noop noop "$c" 1 "$rep"
        fi
        if want redis; then
            redis_run none "$redis_port" set-nx-ex1 "$c" 1 "$rep"
            redis_run always "$redis_always_port" set-nx-ex1 "$c" 1 "$rep"
        fi
        if want postgres; then
            pg_run update "$c" "$rep"
            pg_run insert "$c" "$rep"
        fi
    done
    if want holdfast; then stop_holdfast; fi
done

# ---- other points at the headline connection count ----
if want holdfast; then
    start_holdfast
    for rep in $(seq "$reps"); do
        loadgen_run hold-hot hold-hot "$headline" 1 "$rep" --hot-seats 10 --ttl 1
    done
    stop_holdfast
    start_holdfast
    for rep in $(seq "$reps"); do
        loadgen_run hold-random hold-random "$headline" 16 "$rep" --seats "$seats" --ttl 1
        # The floor through wrk, a client that is not ours.
        note_command "wrk -t1 -c$headline -d${seconds}s --latency http://127.0.0.1:$hf_port/healthz"
        wrk -t1 -c"$headline" -d"${seconds}s" --latency "http://127.0.0.1:$hf_port/healthz" \
            >"$raw/wrk__noop__c${headline}__p1__r${rep}.txt" 2>&1 || true
    done
    stop_holdfast
fi
# As issue 3 words the peers' commands: no expiry, so the 60,000 seats fill up and most
# requests then change nothing.
for rep in $(seq "$reps"); do
    if want redis; then
        redis_run none "$redis_port" set-nx-ex600 "$headline" 600 "$rep"
        redis_run always "$redis_always_port" set-nx-ex600 "$headline" 600 "$rep"
        redis_loadgen_run none "$redis_port" "$headline" 1 "$rep"
        redis_loadgen_run always "$redis_always_port" "$headline" 1 "$rep"
    fi
    if want postgres; then
        pg_run update-noexpiry "$headline" "$rep"
        pg_run insert-noexpiry "$headline" "$rep"
    fi
done
if want postgres; then cp "$pg_data/server.log" "$results/postgres.log" 2>/dev/null || true; fi
stop_redis
stop_postgres

# ---- the ceiling: what the durable step costs on this machine ----
# The same server with parts of its store taken out ($ceiling, HOLDFAST_CEILING; nothing it
# answers is durable), the shipped build with its data on tmpfs (fdatasync costs nothing
# there), the shipped build itself and noop, each on a fresh server, one after the other in
# every repetition at the headline connection count: the report divides runs of the same
# minute. A target that even the build without SQL and fdatasync misses, this server cannot
# meet on this machine with any durable step.
if want ceiling; then
    part=ceiling
    shm=/dev/shm
    [ -d "$shm" ] && [ -w "$shm" ] || shm=""
    for rep in $(seq "$reps"); do
        start_holdfast
        loadgen_run ceiling-shipped hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        loadgen_run ceiling-noop noop "$headline" 1 "$rep"
        if [ -n "$shm" ]; then
            start_holdfast build/holdfast "$shm"
            note_command "build/holdfast serve --listen 127.0.0.1:$hf_port --data $shm/holdfast-data.XXXXXX  (data on tmpfs)"
            loadgen_run ceiling-tmpfs hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        fi
        for mode in no-sync no-sql neither; do
            start_holdfast "$ceiling" "$work" "$mode"
            note_command "HOLDFAST_CEILING=$mode $ceiling serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX  (not durable: benchmarks only)"
            loadgen_run "ceiling-$mode" hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        done
        stop_holdfast
    done
fi

# ---- webhooks: each a hold of a free seat, then its signed payment.succeeded ----
# In each repetition at the headline connection count, on fresh servers one after the other
# (both started with a webhook secret): hold-random, then webhook. The report divides the
# committed webhooks/s by hold-random's holds/s of the same repetition (issue 19's goal: at
# least 80%); every committed webhook also made its hold, which that rate does not count.
if want webhook; then
    part=webhook
    webhook_secret=bench-webhook-secret
    for rep in $(seq "$reps"); do
        start_holdfast build/holdfast "$work" "" --webhook-secret "$webhook_secret"
        note_command "build/holdfast serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX --webhook-secret $webhook_secret"
        loadgen_run webhook-hold-random hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        start_holdfast build/holdfast "$work" "" --webhook-secret "$webhook_secret"
        loadgen_run webhook webhook "$headline" 1 "$rep" --seats "$seats" --ttl 1 \
            --webhook-secret "$webhook_secret"
        stop_holdfast
    done
fi

# ---- exchanges: each connection changes its order again and again (API.md section 13) ----
# In each repetition at the headline connection count, on fresh servers one after the other:
# hold-random, then exchange (a purchase, then exchange holds of a random seat, each with
# exchange_for the connection's current order, each committed at once). The report divides
# the exchanges committed per second by hold-random's holds/s of the same repetition (issue
# 30's goal: at least 50%; an exchange is two answers, its hold and its commit, and writes two
# orders).
if want exchange; then
    part=exchange
    for rep in $(seq "$reps"); do
        start_holdfast build/holdfast "$work" ""
        loadgen_run exchange-hold-random hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        start_holdfast build/holdfast "$work" ""
        loadgen_run exchange exchange "$headline" 1 "$rep" --seats "$seats" --ttl 10
        stop_holdfast
    done
fi

# ---- credentials: hold-random with a user token per connection against the API key ----
# In each repetition at the headline connection count, on fresh servers one after the other
# (both with --api-key and --user-token-secret): hold-random with the API key, then with a
# user token per connection (loadgen --user-token-secret: one JWT HS256 per connection, each
# request verified: one HMAC, API.md section 16). The report divides the second's holds/s by
# the first's in each repetition (issue 33's goal: at least 95%).
if want credentials; then
    part=credentials
    credentials_key=bench-api-key-0123456789
    credentials_secret=bench-user-token-secret-0123456789
    for rep in $(seq "$reps"); do
        start_holdfast build/holdfast "$work" "" --api-key "$credentials_key" \
            --user-token-secret "$credentials_secret"
        note_command "build/holdfast serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX --api-key $credentials_key --user-token-secret $credentials_secret"
        loadgen_run credentials-key hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1 \
            --api-key "$credentials_key"
        start_holdfast build/holdfast "$work" "" --api-key "$credentials_key" \
            --user-token-secret "$credentials_secret"
        loadgen_run credentials-token hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1 \
            --api-key "$credentials_key" --user-token-secret "$credentials_secret"
        stop_holdfast
    done
fi

# ---- the waiting room (issue 20) ----
# In each repetition at the headline connection count, on fresh servers: hold-random and noop
# (the run's references), then queue-join (every request a new user joins a room whose
# admit_per_s is 0.001, so the line only grows), then queue-admit (admit_per_s 100, joins and
# polls of the line's front: admissions per 100 ms window). Then one server holds a line of
# BENCH_QUEUE_LINE waiting users: a run of the fill alone (-d 0) times it and reads the
# server's RSS before and after it (--rss-pid), keeping the tickets; each repetition then
# polls random tickets of that line beside noop on the same server.
if want queue; then
    part=queue
    for rep in $(seq "$reps"); do
        start_holdfast
        loadgen_run queue-hold-random hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        loadgen_run queue-noop noop "$headline" 1 "$rep"
        start_holdfast
        loadgen_run queue-join queue-join "$headline" 1 "$rep" --seats 1000 --admit-per-s 0.001
        start_holdfast
        loadgen_run queue-admit queue-admit "$headline" 1 "$rep" --seats 1000 --admit-per-s 100 \
            --join-percent 10
        # The same window counted from the server's tickets (admitted_at: the core's clock at
        # each admission), which no stall of the client can blur.
        admit_out="$raw/holdfast__queue-admit-rows__c${headline}__p1__r${rep}"
        note_command "python3 bench/admissions.py DATA/holdfast.db queue queue-admit.json OUT.json"
        python3 bench/admissions.py "$hf_data/holdfast.db" queue \
            "$raw/holdfast__queue-admit__c${headline}__p1__r${rep}.json" "$admit_out.json" \
            >"$admit_out.txt" 2>&1 || log "admissions rep $rep FAILED (see $admit_out.txt)"
        log "queue-admit rep $rep: $(cat "$admit_out.txt")"
    done
    start_holdfast
    tickets=$work/queue-tickets
    rm -f "$tickets"
    loadgen_run queue-fill queue-poll "$headline" 1 1 -d 0 --warmup 0 --seats 1000 \
        --admit-per-s 0.001 --line "$queue_line" --fill-pipeline 32 --tickets "$tickets" \
        --rss-pid "$hf_pid"
    log "queue fill: $(grep filled "$raw/holdfast__queue-fill__c${headline}__p1__r1.txt" || echo FAILED)"
    for rep in $(seq "$reps"); do
        loadgen_run queue-poll-noop noop "$headline" 1 "$rep"
        loadgen_run queue-poll queue-poll "$headline" 1 "$rep" --no-create --line "$queue_line" \
            --tickets "$tickets"
    done
    stop_holdfast
    rm -f "$tickets"
fi

# ---- dispatch (issue 21) ----
# In each repetition at the headline connection count: hold-random and noop on a fresh server
# (the run's references); then on another fresh server a run of the fill alone puts
# BENCH_DRIVERS drivers of one fleet in a 20 km square, driver-update moves random ones, and
# ride-request creates rides on a tenth of the connections (each offer accepted, a ride left
# searching cancelled) while the others keep moving drivers.
if want dispatch; then
    part=dispatch
    for rep in $(seq "$reps"); do
        start_holdfast
        loadgen_run dispatch-hold-random hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        loadgen_run dispatch-noop noop "$headline" 1 "$rep"
        start_holdfast
        loadgen_run driver-fill driver-update "$headline" 1 "$rep" -d 0 --warmup 0 \
            --drivers "$drivers" --fill-pipeline 32
        loadgen_run driver-update driver-update "$headline" 1 "$rep" --no-create --drivers "$drivers"
        loadgen_run ride-request ride-request "$headline" 1 "$rep" --no-create --drivers "$drivers" \
            --ride-connections $(( (headline + 9) / 10 ))
        stop_holdfast
    done
fi

# ---- flash sale ----
if want flash; then
    part=flash
    for rep in $(seq "$reps"); do
        start_holdfast
        out="$raw/holdfast__flash-sale__c${headline}__p1__r${rep}"
        command=("$loadgen" --port "$hf_port" --workload flash-sale -c "$headline" --seats "$seats"
                 --buyers 2000000 --commit-percent 80 --ttl 1 --seed "$rep" --max-seconds 120)
        note_command "${command[*]}"
        "${command[@]}" --json "$out.json" >"$out.txt" 2>&1 || log "flash-sale rep $rep FAILED (see $out.txt)"
        log "flash-sale rep $rep: $(grep 'sold out' "$out.txt" || true)"
        stop_holdfast
    done
fi

# ---- one node on PostgreSQL beside one node on SQLite (issue 23) ----
# hold-random at the headline connection count; in every repetition a fresh node on SQLite, then
# a fresh node storing in a throwaway PostgreSQL of its own on this machine (scripts/postgres.sh:
# fsync and synchronous_commit on; a new database per repetition), one right after the other:
# the report quotes medians and the ratio of each repetition.
if want pgstore; then
    part=pgstore
    chmod 755 "$work"  # PostgreSQL runs as the postgres user when root
    pgstore_dir="$work/pgstore"
    trap 'scripts/postgres.sh stop "$pgstore_dir" >/dev/null 2>&1 || true; cleanup' EXIT
    pgstore_url=$(scripts/postgres.sh start "$pgstore_dir")
    note_command "scripts/postgres.sh start DIR  (initdb; fsync=on, synchronous_commit=on, max_connections=300; on 127.0.0.1)"
    for rep in $(seq "$reps"); do
        start_holdfast
        loadgen_run pgstore-sqlite hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        "$pg_bin/createdb" -h 127.0.0.1 -p "$(cat "$pgstore_dir/port")" -U holdfast "bench_r$rep"
        start_holdfast build/holdfast "$work" "" --store "${pgstore_url%/*}/bench_r$rep"
        note_command "build/holdfast serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX --store ${pgstore_url%/*}/bench_rN"
        loadgen_run pgstore-postgres hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        # Other builds on PostgreSQL in the same repetition (a change before and after).
        for other in ${BENCH_PGSTORE_OTHERS:-}; do
            "$pg_bin/createdb" -h 127.0.0.1 -p "$(cat "$pgstore_dir/port")" -U holdfast "bench_${other%%=*}_r$rep"
            start_holdfast "${other#*=}" "$work" "" --store "${pgstore_url%/*}/bench_${other%%=*}_r$rep"
            note_command "${other#*=} serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX --store ${pgstore_url%/*}/bench_${other%%=*}_rN"
            loadgen_run "pgstore-postgres-${other%%=*}" hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        done
        stop_holdfast
    done
    cp "$pgstore_dir/server.log" "$results/pgstore-postgres.log" 2>/dev/null || true
    scripts/postgres.sh stop "$pgstore_dir"
    trap cleanup EXIT
fi

# ---- several nodes on one PostgreSQL (issue 23) ----
# bench/cluster.sh with this run's seconds and repetitions: its raw outputs (wrk's, one per
# repetition, and the takeover times) go to raw/cluster/ for the report, its commands here.
if want cluster; then
    part=cluster
    mkdir -p "$raw/cluster"
    note_command "BENCH_SECONDS=$seconds BENCH_REPS=$reps bench/cluster.sh"
    if BENCH_SECONDS=$seconds BENCH_REPS=$reps BENCH_OUT="$raw/cluster" BENCH_PORT=$((port_base + 200)) \
        bench/cluster.sh >"$raw/cluster.txt" 2>&1; then
        log "cluster: $(grep -c . "$raw/cluster/cluster-takeover.txt") takeovers timed"
    else
        log "cluster FAILED (see $raw/cluster.txt)"
    fi
    if [ -f "$raw/cluster/commands.txt" ]; then
        while IFS= read -r line; do note_command "$line"; done <"$raw/cluster/commands.txt"
    fi
fi
# ---- outbound notifications (issue 32) ----
# In each repetition at the headline connection count, on fresh servers one after the other:
# hold-random with notifications off; on, against bench/notify_receiver.c answering every POST
# at once; on, against a port where nothing listens (connections refused). After each "on" run,
# the server's figures (the backlog, attempts, RSS) go to raw/ for the report.
notify_state() { # notify_state NAME REP: the notifications' metrics and the server's RSS
    local out="$raw/holdfast-notify__${1}__c${headline}__p1__r${2}.state"
    curl -s "http://127.0.0.1:$hf_port/metrics" | grep -E '^holdfast_notif' >"$out" || true
    echo "rss_kb $(awk '/^VmRSS/ {print $2}' "/proc/$hf_pid/status")" >>"$out"
}
if want notify; then
    part=notify
    receiver_port=$((port_base + 4))
    dead_port=$((port_base + 5))
    for rep in $(seq "$reps"); do
        start_holdfast build/holdfast "$work" ""
        loadgen_run notify-off hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        "$receiver" "$receiver_port" >"$raw/notify-receiver__r$rep.txt" &
        receiver_pid=$!
        start_holdfast build/holdfast "$work" "" --notify-url "http://127.0.0.1:$receiver_port/hook" \
            --notify-secret bench-notify-secret
        note_command "$receiver $receiver_port; build/holdfast serve --listen 127.0.0.1:$hf_port --data $work/holdfast-data.XXXXXX --notify-url http://127.0.0.1:$receiver_port/hook --notify-secret bench-notify-secret"
        loadgen_run notify-on hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        notify_state notify-on "$rep"
        sleep 2
        notify_state notify-on-after-2s "$rep"
        stop_holdfast
        kill -TERM "$receiver_pid" && wait "$receiver_pid" || true
        start_holdfast build/holdfast "$work" "" --notify-url "http://127.0.0.1:$dead_port/hook" \
            --notify-secret bench-notify-secret
        note_command "build/holdfast serve ... --notify-url http://127.0.0.1:$dead_port/hook (nothing listens)"
        loadgen_run notify-dead hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        notify_state notify-dead "$rep"
        stop_holdfast
    done
fi

# ---- calendars (issue 29) ----
# Holds: in each repetition at the headline connection count, on fresh servers one after the
# other, hold-random (the reference) and calendar-hold (1-5-night spans over the calendar's
# resources, half of capacity 1 and half of 10, ttl 1 s), then the peer: PostgreSQL (its own
# cluster, bench/pg/calendar-schema.sql) holding the same spans with an exclusion constraint
# (capacity 1) and with per-night counters (capacity 10), through pgbench.
# Reads: one server filled with BENCH_CALENDAR_USES 3-night bookings per resource (a run of
# the fill alone, timed, the server's RSS read before and after it; its RSS when empty beside
# it), then per repetition /free and /availability with one client; the server's own times come
# from its /metrics afterwards. Last, the server is stopped and started again on its data
# directory: the time until /healthz answers is the restart's.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
if want calendar; then
    part=calendar
    start_postgres calendar
    "$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U bench -d bench -v ON_ERROR_STOP=1 \
        -f bench/pg/calendar-schema.sql >/dev/null
    note_command "psql -f bench/pg/calendar-schema.sql  (btree_gist; 5,000 resources x 311 nights of counters)"
    calendar_options=(--resources "$calendar_resources" --span-days 300)
    for rep in $(seq "$reps"); do
        start_holdfast
        loadgen_run calendar-hold-random hold-random "$headline" 1 "$rep" --seats "$seats" --ttl 1
        start_holdfast
        loadgen_run calendar-hold calendar-hold "$headline" 1 "$rep" "${calendar_options[@]}" --ttl 1
        stop_holdfast
        pg_run calendar-exclude "$headline" "$rep"
        pg_run calendar-counter "$headline" "$rep"
    done
    cp "$pg_data/server.log" "$results/postgres-calendar.log" 2>/dev/null || true
    stop_postgres

    start_holdfast
    calendar_facts=$raw/calendar-facts.env
    echo "rss_empty_kb=$(rss_kb "$hf_pid")" >"$calendar_facts"
    loadgen_run calendar-fill calendar-free "$headline" 1 1 -d 0 --warmup 0 "${calendar_options[@]}" \
        --fill-uses "$calendar_uses" --fill-pipeline 4 --rss-pid "$hf_pid"
    for rep in $(seq "$reps"); do
        loadgen_run calendar-free calendar-free 1 1 "$rep" --no-create "${calendar_options[@]}"
        loadgen_run calendar-availability calendar-availability 1 1 "$rep" --no-create "${calendar_options[@]}"
    done
    note_command "curl http://127.0.0.1:$hf_port/metrics  (holdfast_http_request_duration_seconds of /free and /availability)"
    curl -sf "http://127.0.0.1:$hf_port/metrics" >"$raw/calendar-metrics.txt" || log "calendar: /metrics FAILED"
    echo "rss_filled_kb=$(rss_kb "$hf_pid")" >>"$calendar_facts"
    # The restart: SIGTERM (the store drains), then the same data directory, bounded to 120 s.
    kill -TERM "$hf_pid" && wait "$hf_pid" 2>/dev/null || true
    note_command "build/holdfast serve --listen 127.0.0.1:$hf_port --data DATA  (again, on the filled data; timed to /healthz 200)"
    restart_start=$(date +%s.%N)
    build/holdfast serve --listen "127.0.0.1:$hf_port" --data "$hf_data" 2>>"$results/holdfast.log" &
    hf_pid=$!
    restarted=""
    # Healthy when /healthz answers and this server is still running a moment later: a server
    # that could not start (the store refused, the port taken) exits, whoever answered.
    for _ in $(seq 6000); do
        kill -0 "$hf_pid" 2>/dev/null || break
        if curl -sf "http://127.0.0.1:$hf_port/healthz" >/dev/null 2>&1; then
            restart_end=$(date +%s.%N)
            sleep 0.3
            kill -0 "$hf_pid" 2>/dev/null && restarted=yes
            break
        fi
        sleep 0.02
    done
    if [ -n "$restarted" ]; then
        echo "restart_s=$(awk -v a="$restart_start" -v b="$restart_end" 'BEGIN {printf "%.3f", b - a}')" >>"$calendar_facts"
        echo "rss_restarted_kb=$(rss_kb "$hf_pid")" >>"$calendar_facts"
    else
        echo "restart_failed=1" >>"$calendar_facts"
        log "calendar: the restart did not answer /healthz (see holdfast.log)"
    fi
    log "calendar: $(tr '\n' ' ' <"$calendar_facts")"
    stop_holdfast
fi
# ---- a cancel job (issue 30): bench/job.py, one run ----
# An event of BENCH_JOB_ORDERS confirmed orders cancelled onto another with room for them all:
# the time from the cancel's answer to the job's done, and hold+release on a third event (one
# client) during the job against the same just before it. Its own server on a free port.
if want job; then
    part=job
    note_command "python3 bench/job.py --binary build/holdfast --orders $job_orders"
    python3 bench/job.py --binary build/holdfast --orders "$job_orders" >"$raw/job.txt" 2>&1 ||
        log "job FAILED (see $raw/job.txt)"
    log "$(grep '^job:' "$raw/job.txt" || echo 'job: no result')"
fi

# ---- the pre-queue's opening over HTTP (issue 31): bench/prequeue.sh, one run ----
# BENCH_PREQUEUE_TICKETS users join a room before its opens_at; the time until the line is
# given out, and polls of the line and hold-random on another event during the opening against
# the same two seconds later (no opening). Its own server on this run's Holdfast port.
if want prequeue; then
    part=prequeue
    note_command "PREQUEUE_TICKETS=$prequeue_tickets PREQUEUE_PORT=$hf_port bench/prequeue.sh OUT  (loadgen queue-poll and hold-random, -c 25 each)"
    PREQUEUE_TICKETS=$prequeue_tickets PREQUEUE_PORT=$hf_port bench/prequeue.sh "$raw/prequeue-http" \
        >"$raw/prequeue-http.txt" 2>&1 || log "prequeue FAILED (see $raw/prequeue-http.txt)"
    log "$(grep '^opening:' "$raw/prequeue-http.txt" || echo 'prequeue: no result')"
    rm -f "$raw/prequeue-http/tickets"
fi

# ---- allocations (issue 31): bench/allocations.sh ----
# Public hold-random at the headline connection count on an event with half of its seats
# allocated against one without, BENCH_ALLOCATION_PAIRS pairs of fresh servers, interleaved.
if want allocations; then
    part=allocations
    note_command "ALLOCATIONS_SECONDS=$seconds ALLOCATIONS_CONNECTIONS=$headline bench/allocations.sh $allocation_pairs"
    ALLOCATIONS_SECONDS=$seconds ALLOCATIONS_CONNECTIONS=$headline ALLOCATIONS_PORT=$hf_port \
        bench/allocations.sh "$allocation_pairs" >"$raw/allocations.txt" 2>&1 ||
        log "allocations FAILED (see $raw/allocations.txt)"
    log "$(grep '^median' "$raw/allocations.txt" || echo 'allocations: no result')"
fi

# ---- the waitlist's herd (issue 31): bench/waitlist.py, one run on a fresh server ----
# A sold-out event with BENCH_WAITLIST_ENTRIES waiting entries, then BENCH_WAITLIST_LAPSES holds
# lapse at one instant: the time until all are offered, and hold-random's rate on another event
# during the offers against the second before.
if want waitlist; then
    part=waitlist
    start_holdfast
    note_command "python3 bench/waitlist.py --port $hf_port --entries $waitlist_entries --lapses $waitlist_lapses --sold $waitlist_lapses  (hold-random beside it: -c 25)"
    python3 bench/waitlist.py --port "$hf_port" --entries "$waitlist_entries" \
        --lapses "$waitlist_lapses" --sold "$waitlist_lapses" >"$raw/waitlist.txt" 2>&1 ||
        log "waitlist FAILED (see $raw/waitlist.txt)"
    log "$(grep '^waitlist:' "$raw/waitlist.txt" || echo 'waitlist: no result')"
    stop_holdfast
fi
part=""

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/meta.env"

if [ -z "${BENCH_NO_REPORT:-}" ]; then
    python3 bench/report.py "$results" docs/BENCHMARKS.md bench/throughput.svg
    log "docs/BENCHMARKS.md (all of it, or the sections of these parts) from $results"
fi
