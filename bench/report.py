#!/usr/bin/env python3
"""Turns one run of bench/run.sh into docs/BENCHMARKS.md and a throughput chart.

    python3 bench/report.py RESULTS_DIR MARKDOWN_OUT SVG_OUT

RESULTS_DIR holds meta.env, commands.txt and raw/ (one file per repetition, named
SYSTEM__VARIANT__cCONNECTIONS__pPIPELINE__rREP.EXT; the cluster part's under raw/cluster/, as
bench/cluster.sh writes them). Every figure quoted is the median of the repetitions, metric by
metric. Standard library only (and gnuplot for the chart).

A run of some parts only (meta.env's `parts`, bench/run.sh's BENCH_ONLY), none of holdfast,
redis and postgres among them, rewrites only those parts' sections of an existing MARKDOWN_OUT
(PART_SECTIONS), each followed by a note of the run it comes from and its commands
(commands-by-part.txt), and leaves the rest of the file and SVG_OUT as they were; any other
run writes both whole.
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

NAME = re.compile(r"^(?P<system>[a-z0-9-]+)__(?P<variant>[a-z0-9-]+)__c(?P<c>\d+)__p(?P<p>\d+)__r(?P<r>\d+)\.(?P<ext>json|txt)$")


def read_meta(path):
    meta = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            if "=" in line:
                key, value = line.rstrip("\n").split("=", 1)
                meta[key] = value
    return meta


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    rank = max(1, int(round(p / 100.0 * len(sorted_values))))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def parse_redis(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"throughput summary: ([0-9.]+) requests per second", text)
    if not m:
        return None
    run = {"throughput": float(m.group(1))}
    m = re.search(r"latency summary \(msec\):\s+avg\s+min\s+p50\s+p95\s+p99\s+max\s+"
                  r"([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", text)
    if m:
        run.update(mean_ms=float(m.group(1)), p50_ms=float(m.group(3)), p99_ms=float(m.group(5)),
                   max_ms=float(m.group(6)))
    # The percentile distribution: the first line at or past 99.9% bounds p99.9 from above.
    section = text.split("Latency by percentile distribution:")[-1].split("Cumulative distribution")[0]
    for pct, ms in re.findall(r"^([0-9.]+)% <= ([0-9.]+) milliseconds", section, re.M):
        if float(pct) >= 99.9:
            run["p999_ms"] = float(ms)
            break
    m = re.search(r"keys_after=(\d+)", text)
    if m:
        run["keys_after"] = int(m.group(1))
    m = re.search(r"(\d+) requests completed in ([0-9.]+) seconds", text)
    if m:
        run["requests"] = int(m.group(1))
    return run


# pgbench's -T counts the time its clients take to connect, and it has no warm-up: bench/run.sh
# runs it longer, and only the transactions that end in the measured window count. The window
# opens WARMUP_S after the last client's first transaction began, as loadgen measures after
# its connections are up and warm, and lasts the run's measured seconds.
WARMUP_S = 0.5


def pgbench_transactions(path):
    """[(client, start_s, end_s, latency_ms)] from pgbench's per-transaction log (-l): each
    line is "client transaction latency_us script epoch_s epoch_us ..."."""
    transactions = []
    for log in glob.glob(path[:-4] + ".log/tx*"):
        for line in open(log, encoding="utf-8", errors="replace"):
            fields = line.split()
            if len(fields) < 6 or not all(f.isdigit() for f in fields[:6]):
                continue
            end_s = int(fields[4]) + int(fields[5]) / 1e6
            latency_us = int(fields[2])
            transactions.append((int(fields[0]), end_s - latency_us / 1e6, end_s,
                                 latency_us / 1000.0))
    return transactions


def parse_pgbench(path, seconds):
    text = open(path, encoding="utf-8", errors="replace").read()
    if not re.search(r"^tps = ([0-9.]+)", text, re.M):
        return None
    m = re.search(r"number of failed transactions: (\d+)", text)
    run = {"failed": int(m.group(1)) if m else 0}
    transactions = pgbench_transactions(path)
    if not transactions:
        return None
    first_start = {}
    for client, start_s, _, _ in transactions:
        first_start[client] = min(start_s, first_start.get(client, start_s))
    window_start = max(first_start.values()) + WARMUP_S
    last_end = max(end_s for _, _, end_s, _ in transactions)
    window_end = min(window_start + seconds, last_end)
    if window_end - window_start < seconds / 2:
        return None  # too short a steady run to quote
    latencies = sorted(latency for _, _, end_s, latency in transactions
                       if window_start <= end_s < window_end)
    run.update(throughput=len(latencies) / (window_end - window_start),
               window_s=window_end - window_start, p50_ms=percentile(latencies, 50),
               p99_ms=percentile(latencies, 99), p999_ms=percentile(latencies, 99.9),
               max_ms=latencies[-1] if latencies else None,
               mean_ms=sum(latencies) / len(latencies) if latencies else None)
    return run


def to_ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse_wrk(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"Requests/sec:\s+([0-9.]+)", text)
    if not m:
        return None
    run = {"throughput": float(m.group(1))}
    for pct, value, unit in re.findall(r"^\s+(50|99)%\s+([0-9.]+)(us|ms|s)$", text, re.M):
        run["p%s_ms" % pct] = to_ms(value, unit)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    run["errors"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    run["transport_errors"] = sum(int(v) for v in m.groups()) if m else 0
    return run


def load_runs(raw, seconds):
    """{(system, variant, connections, pipeline): [run, ...]}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(raw, "*"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        system, variant, ext = m.group("system"), m.group("variant"), m.group("ext")
        run = None
        if (system == "holdfast" or system.startswith("loadgen-")) and ext == "json":
            try:
                run = json.load(open(path, encoding="utf-8"))
            except ValueError:
                run = None
        elif system.startswith("redis-") and ext == "txt":
            run = parse_redis(path)
        elif system == "pg" and ext == "txt":
            run = parse_pgbench(path, seconds)
        elif system == "wrk" and ext == "txt":
            run = parse_wrk(path)
        else:
            continue
        key = (system, variant, int(m.group("c")), int(m.group("p")))
        if run is not None:
            run["rep"] = int(m.group("r"))
        runs.setdefault(key, []).append(run)
    return runs


# The server's threads by the name they give themselves; the loop thread carries the
# binary's name, and any other thread of that name (none today) counts with it.
THREAD_ROLES = [("holdfast", "loop"), ("hf-store", "writer"), ("hf-sync", "syncers"),
                ("hf-checkpoint", "checkpoint")]
ROLE_OF_THREAD = dict(THREAD_ROLES)


def load_thread_cpu(raw, clock_ticks):
    """{(variant, connections, pipeline): [{role: microseconds per answer, "all": ...}, ...]}
    from the .cpu files bench/run.sh writes around each loadgen run: CPU ticks of each server
    thread before and after, divided by the answers of the whole run."""
    cpu = {}
    for path in sorted(glob.glob(os.path.join(raw, "holdfast__*.cpu"))):
        m = re.match(r"^holdfast__(?P<variant>[a-z0-9-]+)__c(?P<c>\d+)__p(?P<p>\d+)__r\d+\.cpu$",
                     os.path.basename(path))
        answers = (read_json(path[:-len(".cpu")] + ".json") or {}).get("answered")
        if not m or not answers:
            continue
        ticks = {"before": {}, "after": {}}
        for line in open(path, encoding="utf-8"):
            parts = line.split()
            if len(parts) == 3 and parts[0] in ticks and parts[2].isdigit():
                role = ROLE_OF_THREAD.get(parts[1], "other")
                ticks[parts[0]][role] = ticks[parts[0]].get(role, 0) + int(parts[2])
        per_answer = {role: (ticks["after"].get(role, 0) - ticks["before"].get(role, 0))
                      / clock_ticks * 1e6 / answers for role in ticks["after"]}
        per_answer["all"] = sum(per_answer.values())
        key = (m.group("variant"), int(m.group("c")), int(m.group("p")))
        cpu.setdefault(key, []).append(per_answer)
    return cpu


def median_role(runs, role):
    """The median over repetitions of one thread's CPU per answer; None without runs."""
    values = sorted(run.get(role, 0.0) for run in runs)
    return values[len(values) // 2] if values else None


def ratios_by_rep(runs_a, runs_b, metric_a="throughput"):
    """a's metric_a / b's throughput for each repetition both ran: the systems of one
    repetition ran one right after the other, so drift of the machine between repetitions
    cancels out of these."""
    b_by_rep = {r["rep"]: r.get("throughput") for r in runs_b if r}
    return sorted(r[metric_a] / b_by_rep[r["rep"]] for r in runs_a
                  if r and r.get(metric_a) and b_by_rep.get(r["rep"]))


def median_of(runs, metric):
    values = [r[metric] for r in runs if r and r.get(metric) is not None]
    return statistics.median(values) if values else None


def summary(runs):
    good = [r for r in runs if r]
    out = {"reps": len(runs), "good": len(good)}
    for metric in ("throughput", "p50_ms", "p99_ms", "p999_ms", "max_ms"):
        out[metric] = median_of(good, metric)
    return out


def fmt_rate(value):
    return "-" if value is None else "{:,.0f}".format(value)


def fmt_ms(value):
    if value is None:
        return "-"
    return "%.2f" % value if value < 10 else "%.1f" % value if value < 100 else "%.0f" % value


def fmt_ratio(a, b):
    if a is None or not b:
        return "-"
    return "%.2fx" % (a / b)


SERIES = [
    # key, label, durability
    (("holdfast", "hold-random", 1), "Holdfast hold-random", "SQLite WAL, group commit, log fdatasynced before every answer"),
    (("redis-none", "set-nx-ex1", 1), "Redis SET NX EX", "none"),
    (("redis-always", "set-nx-ex1", 1), "Redis SET NX EX", "AOF, appendfsync always"),
    (("pg", "update", 1), "PostgreSQL UPDATE ... WHERE available", "WAL, synchronous_commit on"),
    (("pg", "insert", 1), "PostgreSQL INSERT ... ON CONFLICT", "WAL, synchronous_commit on"),
    (("holdfast", "noop", 1), "Holdfast noop (GET /healthz)", "nothing written"),
]


# The ceiling part of bench/run.sh: fresh servers one after the other in each repetition at
# the headline connection count (variant, label, what an answer waits for).
CEILING = [
    ("ceiling-shipped", "Holdfast as shipped", "the batch's SQL in the log, fdatasynced"),
    ("ceiling-tmpfs", "as shipped, data on tmpfs", "the SQL in memory: fdatasync costs nothing"),
    ("ceiling-no-sync", "ceiling build, no fdatasync", "the SQL written, never synced"),
    ("ceiling-no-sql", "ceiling build, no SQL", "an fdatasync of a log that does not change"),
    ("ceiling-neither", "ceiling build, neither", "nothing: the server without its durable step"),
    ("ceiling-noop", "noop (GET /healthz)", "nothing"),
]


def ceiling_ratio(runs, variant, other, headline):
    """The median over repetitions of variant / other, both from the ceiling part (same
    repetition, minutes apart at most); None when either is missing."""
    values = ratios_by_rep(runs.get(("holdfast", variant, headline, 1), []),
                           runs.get(("holdfast", other, headline, 1), []))
    return statistics.median(values) if values else None


def read_json(path):
    """The parsed file, or None when it is missing or unreadable (that part did not run)."""
    if not os.path.exists(path):
        return None
    try:
        return json.load(open(path, encoding="utf-8"))
    except ValueError:
        return None


def ceiling_section(w, runs, thread_cpu, headline, peers):
    """What the durable step costs: the ceiling part's builds side by side, each against the
    shipped build and noop of its own repetition, and against the peers' medians of the run."""
    if not runs.get(("holdfast", "ceiling-neither", headline, 1)):
        return
    w("## The ceiling: the same server without its durable step")
    w("")
    w("Each repetition runs these one after the other, each on a fresh server, at %d"
      " connections: the shipped build, noop, the shipped build with its data on tmpfs, and the"
      " ceiling build (build/bench/holdfast-ceiling: the same code, whose store skips its SQL, its"
      " fdatasync or both when `HOLDFAST_CEILING` says so; `make` never builds it). Nothing the"
      " ceiling build answers is durable: it shows what durability costs on this machine, and"
      " so which targets this server could not meet with any durable step. *Same repetition* columns divide"
      " runs of the same minute; the peers' columns divide by the peers' medians above." % headline)
    w("")
    names = list(peers)
    w("| build | an answer waits for | holds/s | p50 ms | p99 ms | server CPU us per answer"
      " | / shipped, same repetition | / noop, same repetition | " +
      " | ".join("/ %s" % name for name in names) + " |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " |")
    for variant, label, waits in CEILING:
        s = summary(runs.get(("holdfast", variant, headline, 1), []))
        if not s["good"]:
            continue
        cpu = median_role(thread_cpu.get((variant, headline, 1), []), "all")
        shipped = ceiling_ratio(runs, variant, "ceiling-shipped", headline)
        noop = ceiling_ratio(runs, variant, "ceiling-noop", headline)
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, waits, fmt_rate(s["throughput"]), fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"]),
            "-" if cpu is None else "%.1f" % cpu,
            "-" if shipped is None else "%.2fx" % shipped,
            "-" if noop is None else "%.0f%%" % (100 * noop),
            " | ".join(fmt_ratio(s["throughput"], peers[name]) for name in names)))
    w("")


def credentials_section(w, runs, thread_cpu, headline):
    """Credentials (issue 33): hold-random with a user token per connection, against the API key."""
    key = [r for r in runs.get(("holdfast", "credentials-key", headline, 1), []) if r]
    token = [r for r in runs.get(("holdfast", "credentials-token", headline, 1), []) if r]
    w("## User tokens against the API key")
    w("")
    if not key or not token:
        w("Not run.")
        w("")
        return
    w("hold-random at %d connections (60,000 seats, ttl 1 s) on a server with `--api-key` and"
      " `--user-token-secret`: once with the API key, once with a user token per connection"
      " (a JWT HS256 minted by loadgen for user cN, every request verified: the algorithm, one"
      " HMAC-SHA256, the claims; the hold names the token's user). Each repetition runs the key"
      " then the token, each on a fresh server; the ratio is the median of the per-repetition"
      " ratios (goal: at least 95%%). Server CPU per answer (all threads) moves far less with"
      " the machine's noise than the rates do." % headline)
    w("")
    values = ratios_by_rep(token, key)
    cpu = [median_role(thread_cpu.get((variant, headline, 1), []), "all")
           for variant in ("credentials-key", "credentials-token")]
    with_key, with_token = summary(key), summary(token)
    w("| credential | holds/s | p50 ms | p99 ms | server CPU us per answer |")
    w("| --- | ---: | ---: | ---: | ---: |")
    for label, s, c in (("API key", with_key, cpu[0]), ("user token", with_token, cpu[1])):
        w("| %s | %s | %s | %s | %s |" % (label, fmt_rate(s["throughput"]), fmt_ms(s["p50_ms"]),
                                          fmt_ms(s["p99_ms"]), "-" if c is None else "%.1f" % c))
    w("")
    w("User token / API key, holds/s: **%s** (each repetition: %s)." % (
        "-" if not values else "%.0f%%" % (100 * statistics.median(values)),
        ", ".join("%.0f%%" % (100 * v) for v in values) or "-"))
    w("")


def beside_hold_random(runs, headline, part, key):
    """Per repetition, the part's rate (its summary's key) / hold-random's holds/s, both run by
    that part (`PART` and `PART-hold-random`, fresh servers one after the other)."""
    return ratios_by_rep(runs.get(("holdfast", part, headline, 1), []),
                         runs.get(("holdfast", part + "-hold-random", headline, 1), []), key)


def webhook_ratio(runs, headline):
    """The median over repetitions of committed webhooks/s / hold-random's holds/s, both from
    the webhook part (fresh servers one after the other in each repetition); None without."""
    values = beside_hold_random(runs, headline, "webhook", "webhooks_per_s")
    return statistics.median(values) if values else None


def webhook_section(w, runs, thread_cpu, headline):
    """Payment webhooks (issue 19): each a hold, then its signed payment.succeeded."""
    webhook = [r for r in runs.get(("holdfast", "webhook", headline, 1), []) if r]
    holds = summary(runs.get(("holdfast", "webhook-hold-random", headline, 1), []))
    w("## Payment webhooks")
    w("")
    if not webhook:
        w("Not run.")
        w("")
        return
    w("Each of %d connections holds a random seat not yet sold (60,000 seats, ttl 1 s) and then"
      " sends the `payment.succeeded` webhook for that hold with its total, signed with"
      " HMAC-SHA256 (`Holdfast-Signature`), as a payment provider would. Counted: webhooks answered"
      " `{\"result\": \"committed\", ...}` per second; each of them also cost its hold, which"
      " that rate leaves out (the server answers two requests per webhook). hold-random's holds/s"
      " are its answers, 201 or 409, as everywhere in this file. Each repetition runs"
      " hold-random then webhook, each on a fresh server; the ratio is the median of the"
      " per-repetition ratios (goal: at least 80%%). Server CPU per answer (all threads, the"
      " whole run's answers: in the webhook run half are holds and half webhooks) moves far"
      " less with the machine's noise than the rates do." % headline)
    w("")
    ratio = webhook_ratio(runs, headline)
    values = beside_hold_random(runs, headline, "webhook", "webhooks_per_s")
    w("| committed webhooks/s | / hold-random holds/s, same repetition | each repetition |"
      " hold-random holds/s | webhook p50 ms | webhook p99 ms | hold p50 / p99 ms |"
      " server CPU us per answer, webhook / hold-random | other results | errors |")
    w("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu = [median_role(thread_cpu.get((variant, headline, 1), []), "all")
           for variant in ("webhook", "webhook-hold-random")]
    w("| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %d | %d |" % (
        fmt_rate(median_of(webhook, "webhooks_per_s")),
        "-" if ratio is None else "%.0f%%" % (100 * ratio),
        ", ".join("%.0f%%" % (100 * v) for v in values) or "-",
        fmt_rate(holds["throughput"]),
        fmt_ms(median_of(webhook, "webhook_p50_ms")), fmt_ms(median_of(webhook, "webhook_p99_ms")),
        fmt_ms(median_of(webhook, "hold_p50_ms")), fmt_ms(median_of(webhook, "hold_p99_ms")),
        *("-" if value is None else "%.1f" % value for value in cpu),
        sum(r.get("webhooks_other", 0) for r in webhook),
        sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in webhook)))
    w("")


def exchange_ratio(runs, headline):
    """The median over repetitions of exchanges committed/s / hold-random's holds/s, both from
    the exchange part (fresh servers one after the other in each repetition); None without."""
    values = beside_hold_random(runs, headline, "exchange", "exchanges_per_s")
    return statistics.median(values) if values else None


def exchange_section(w, runs, thread_cpu, headline):
    """Exchanges (issue 30): a connection's order replaced again and again."""
    exchange = [r for r in runs.get(("holdfast", "exchange", headline, 1), []) if r]
    holds = summary(runs.get(("holdfast", "exchange-hold-random", headline, 1), []))
    w("## Exchanges")
    w("")
    if not exchange:
        w("Not run.")
        w("")
        return
    w("Each of %d connections buys a random seat (60,000 seats of one price) and then changes that"
      " order again and again (API.md section 13): an exchange hold of another random seat with"
      " `exchange_for` its current order (ttl 10 s), then that hold's commit, which makes the old"
      " order `exchanged` and the new one `confirmed` in one durable step; the next exchange"
      " replaces the new order. Counted: exchange commits answered 200 per second; each also cost"
      " its hold, which that rate leaves out (two answers per exchange, each waiting for its own"
      " durable step, so a connection makes at most half as many exchanges as holds at the same"
      " latency). hold-random's holds/s are its answers, 201 or 409. Each repetition runs"
      " hold-random then exchange, each on a fresh server; the ratio is the median of the"
      " per-repetition ratios (goal: at least 50%%)." % headline)
    w("")
    ratio = exchange_ratio(runs, headline)
    values = beside_hold_random(runs, headline, "exchange", "exchanges_per_s")
    w("| exchanges committed/s | / hold-random holds/s, same repetition | each repetition |"
      " hold-random holds/s | commit p50 ms | commit p99 ms | hold p50 / p99 ms |"
      " server CPU us per answer, exchange / hold-random | errors |")
    w("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu = [median_role(thread_cpu.get((variant, headline, 1), []), "all")
           for variant in ("exchange", "exchange-hold-random")]
    w("| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %d |" % (
        fmt_rate(median_of(exchange, "exchanges_per_s")),
        "-" if ratio is None else "%.0f%%" % (100 * ratio),
        ", ".join("%.0f%%" % (100 * v) for v in values) or "-",
        fmt_rate(holds["throughput"]),
        fmt_ms(median_of(exchange, "commit_p50_ms")), fmt_ms(median_of(exchange, "commit_p99_ms")),
        fmt_ms(median_of(exchange, "hold_p50_ms")), fmt_ms(median_of(exchange, "hold_p99_ms")),
        *("-" if value is None else "%.1f" % value for value in cpu),
        sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in exchange)))
    w("")


# ---- the waiting room (issue 20) and dispatch (issue 21) ----

def same_rep_ratio(runs, variant, reference, headline, metric="throughput"):
    """(median, [each repetition]) of variant's metric / reference's throughput, both of the
    same repetition at the headline connection count; (None, []) without both."""
    values = ratios_by_rep(runs.get(("holdfast", variant, headline, 1), []),
                           runs.get(("holdfast", reference, headline, 1), []), metric)
    return (statistics.median(values) if values else None), values


def queue_fill(runs, headline):
    """The run of the fill alone that made the line queue-poll polls (its JSON), or None."""
    fills = [r for r in runs.get(("holdfast", "queue-fill", headline, 1), []) if r and r.get("filled")]
    return fills[0] if fills else None


def rss_growth_mb(fill):
    if not fill or not fill.get("rss_after_kb") or not fill.get("rss_before_kb"):
        return None
    return (fill["rss_after_kb"] - fill["rss_before_kb"]) / 1024.0


def fmt_percent(value):
    return "-" if value is None else "%.0f%%" % (100 * value)


def ratio_row(w, runs, thread_cpu, headline, variant, label, reference, goal):
    """One row of a rate beside its reference of the same repetitions."""
    s = summary(runs.get(("holdfast", variant, headline, 1), []))
    if not s["good"]:
        return
    ratio, values = same_rep_ratio(runs, variant, reference, headline) if reference else (None, [])
    cpu = median_role(thread_cpu.get((variant, headline, 1), []), "all")
    w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, fmt_rate(s["throughput"]), fmt_percent(ratio),
        ", ".join(fmt_percent(v) for v in values) or "-", goal or "-",
        fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"]), "-" if cpu is None else "%.1f" % cpu))


def notify_states(raw, name):
    """The server's figures after each repetition of name (bench/run.sh's notify_state):
    [{metric line's name and labels: value}, ...] in repetition order."""
    states = []
    for path in sorted(glob.glob(os.path.join(raw, "holdfast-notify__%s__*.state" % name))):
        figures = {}
        for line in open(path, encoding="utf-8"):
            parts = line.split()
            if len(parts) == 2:
                try:
                    figures[parts[0]] = float(parts[1])
                except ValueError:
                    pass
        states.append(figures)
    return states


def notify_figure(states, key):
    values = [s[key] for s in states if key in s]
    return statistics.median(values) if values else None


def notify_section(w, runs, thread_cpu, headline, raw):
    """Outbound notifications (issue 32): hold-random with them off, on against a receiver that
    answers at once, on against a dead one."""
    w("## Outbound notifications")
    w("")
    if not runs.get(("holdfast", "notify-off", headline, 1)):
        w("Not run.")
        w("")
        return
    w("At %d connections, in each repetition on fresh servers one after the other: hold-random"
      " (`--ttl 1`: each hold is told twice, made and expired) with notifications off; on"
      " (`--notify-url`), against a receiver answering every POST 204 at once"
      " (bench/notify_receiver.c, one libuv loop); on, against a port where nothing listens"
      " (every attempt refused). The ratios are holds/s against the same repetition's off run."
      % headline)
    w("")
    w("| workload | holds/s | / off, same repetition | each repetition | goal | p50 ms | p99 ms |"
      " server CPU us per answer |")
    w("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    ratio_row(w, runs, thread_cpu, headline, "notify-off", "off (reference)", None, None)
    ratio_row(w, runs, thread_cpu, headline, "notify-on", "on, receiver answering",
              "notify-off", ">= 90%")
    ratio_row(w, runs, thread_cpu, headline, "notify-dead", "on, receiver dead",
              "notify-off", ">= 95%")
    w("")
    rows = [("on, at the end of the run", notify_states(raw, "notify-on")),
            ("on, 2 s later", notify_states(raw, "notify-on-after-2s")),
            ("dead, at the end of the run", notify_states(raw, "notify-dead"))]
    w("Reading it: with the receiver dead, requests pay only for the entries' delivery state"
      " (the window is full, its attempts back off) and the backlog grows in the store, memory"
      " flat. With a receiver answering, the loop thread delivers as fast as the sale makes"
      " entries (two per hold here: made, then expired a second later), and each delivery costs"
      " the loop more than a hold's answer does: libcurl's request and answer, their system"
      " calls, the entry read back and signed. On this 2-core machine the receiver and the load"
      " generator run on the same cores, so the sale's rate falls while the backlog stays near"
      " zero. The per-answer CPU column shows the cost. Moving the HTTP client to a thread of its"
      " own (its own libuv loop, the window staying on the engine's) is the way to the goal.")
    w("")
    w("The server's figures (medians over the repetitions): the backlog is"
      " `holdfast_notifications{status=\"pending\"}`; memory stays bounded because at most"
      " 1,024 notifications are held, the rest wait in the store.")
    w("")
    w("| when | pending | delivered | attempts ok | attempts failed | dropped | RSS MB |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, states in rows:
        rss = notify_figure(states, "rss_kb")
        w("| %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt_rate(notify_figure(states, 'holdfast_notifications{status="pending"}')),
            fmt_rate(notify_figure(states, 'holdfast_notifications{status="delivered"}')),
            fmt_rate(notify_figure(states, 'holdfast_notify_attempts_total{result="success"}')),
            fmt_rate(notify_figure(states, 'holdfast_notify_attempts_total{result="failure"}')),
            fmt_rate(notify_figure(states, "holdfast_notify_dropped_total")),
            "-" if rss is None else "%.1f" % (rss / 1024.0)))
    w("")


def queue_section(w, runs, thread_cpu, headline):
    """The waiting room: joins and polls beside hold-random and noop of the same repetitions,
    the line of a million in memory, and how smoothly admissions come."""
    w("## Waiting room")
    w("")
    fill = queue_fill(runs, headline)
    if not runs.get(("holdfast", "queue-join", headline, 1)) and not fill:
        w("Not run.")
        w("")
        return
    line = fill.get("filled") if fill else None
    w("At %d connections, in each repetition: hold-random then noop on a fresh server (the"
      " references), then `queue-join` on a fresh server (each request a new user joins an event"
      " whose room admits 0.001 users a second, so the line only grows; answered only once the"
      " ticket is durable). `queue-poll` polls tickets drawn at random from a line of %s waiting"
      " users (a GET of a ticket the server gave; a poll touches no storage), beside noop on"
      " the same server in each repetition. Ratios are the medians of the per-repetition"
      " ratios; server CPU per answer counts every thread over the whole run."
      % (headline, fmt_rate(line) if line else "-"))
    w("")
    w("| workload | requests/s | / reference, same repetition | each repetition | goal |"
      " p50 ms | p99 ms | server CPU us per answer |")
    w("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    ratio_row(w, runs, thread_cpu, headline, "queue-hold-random", "hold-random (reference)", None, None)
    ratio_row(w, runs, thread_cpu, headline, "queue-noop", "noop (reference)", None, None)
    ratio_row(w, runs, thread_cpu, headline, "queue-join", "queue-join / hold-random",
              "queue-hold-random", ">= 80%")
    ratio_row(w, runs, thread_cpu, headline, "queue-poll-noop",
              "noop, %s waiting (reference)" % (fmt_rate(line) if line else "-"), None, None)
    ratio_row(w, runs, thread_cpu, headline, "queue-poll",
              "queue-poll, %s waiting / noop" % (fmt_rate(line) if line else "-"),
              "queue-poll-noop", ">= 70%")
    w("")
    if fill:
        growth = rss_growth_mb(fill)
        w("The line of %s: filled by one run of joins alone (`-d 0`, %d connections, 32 in flight"
          " on each), each join a new user, durable before its answer. The server's resident set"
          " (VmRSS) is read just before the first join, on a server that holds only the room's"
          " event, and just after the last answer (goal: under 256 MB more)."
          % (fmt_rate(line), headline))
        w("")
        w("| waiting users | fill s | joins/s while filling | RSS before MB | RSS after MB |"
          " more MB | bytes per waiting user | goal | met |")
        w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | :---: |")
        w("| %s | %.1f | %s | %s | %s | %s | %s | < 256 MB more | %s |" % (
            fmt_rate(line), fill.get("fill_s", 0), fmt_rate(fill.get("fill_per_s")),
            "-" if not fill.get("rss_before_kb") else "%.0f" % (fill["rss_before_kb"] / 1024.0),
            "-" if not fill.get("rss_after_kb") else "%.0f" % (fill["rss_after_kb"] / 1024.0),
            "-" if growth is None else "%.0f" % growth,
            "-" if growth is None or not line else "%.0f" % (growth * 1048576.0 / line),
            "-" if growth is None else ("yes" if growth < 256 else "**no**")))
        w("")
    admit = [r for r in runs.get(("holdfast", "queue-admit", headline, 1), []) if r]
    rows = {r["rep"]: r for r in runs.get(("holdfast", "queue-admit-rows", headline, 1), []) if r}
    if admit:
        per_s = admit[0].get("admit_per_s") or 0
        w("Admission under load: a room admitting %g users a second, on a fresh server per"
          " repetition; 10%% of the requests are joins of new users, the rest poll the first 64"
          " tickets of the line not yet seen admitted, in turn. Admissions are counted per 100 ms"
          " window of the measured seconds, twice: *seen by polls* dates each by the first poll"
          " that answered `admitted` (within the milliseconds of its column: the time since that"
          " ticket last answered `waiting`, which a stalled client stretches), and *server's rows*"
          " by its ticket's `admitted_at`, the core's clock at the admission (bench/admissions.py"
          " reads them from the server's database). A smooth room admits %g in each window, and"
          " never more than max(1, %g / 10) = %g at one instant."
          % (per_s, per_s / 10.0, per_s, max(1, per_s / 10.0)))
        w("")
        w("| repetition | seen by polls: per s | per 100 ms: median / min / max | seen within,"
          " p50 / p99 ms | server's rows: per s | per 100 ms: median / min / max | most at one"
          " instant | joins/s | polls/s |")
        w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in sorted(admit, key=lambda r: r["rep"]):
            seconds = r.get("seconds") or 1
            row = rows.get(r["rep"])
            w("| %d | %.1f | %d / %d / %d | %s / %s | %s | %s | %s | %s | %s |" % (
                r["rep"], r.get("admissions_per_s", 0), r.get("window_median", 0),
                r.get("window_min", 0), r.get("window_max", 0),
                fmt_ms(r.get("seen_p50_ms")), fmt_ms(r.get("seen_p99_ms")),
                "-" if not row else "%.1f" % row.get("admissions_per_s", 0),
                "-" if not row else "%g / %d / %d" % (row.get("window_median", 0),
                                                      row.get("window_min", 0), row.get("window_max", 0)),
                "-" if not row else "%d" % row.get("instant_max", 0),
                fmt_rate(r.get("joins_new", 0) / seconds),
                fmt_rate((r.get("polls_waiting", 0) + r.get("polls_admitted", 0)) / seconds)))
        w("")


def dispatch_section(w, runs, thread_cpu, headline):
    """Dispatch: driver updates beside noop of the same repetitions, and rides requested while
    updates run, with the time from a ride's creation to its offer."""
    w("## Dispatch")
    w("")
    updates = runs.get(("holdfast", "driver-update", headline, 1), [])
    if not updates:
        w("Not run.")
        w("")
        return
    fills = [r for r in runs.get(("holdfast", "driver-fill", headline, 1), []) if r and r.get("filled")]
    drivers = fills[0]["filled"] if fills else None
    w("At %d connections, in each repetition: hold-random then noop on a fresh server (the"
      " references); then, on another fresh server, a run of the fill alone puts %s drivers of"
      " one fleet at random places of a 20 km square (Manhattan's latitude; %s drivers/s, median),"
      " `driver-update` moves random drivers to random places of it (`PUT`, available, the"
      " hottest write: applied in memory, stored in the background), and `ride-request` creates"
      " rides at random places (radius 3,000 m) on a tenth of the connections while the others"
      " keep moving drivers. Each offered ride is accepted for its driver (who is then busy until"
      " an update makes it available again); a ride left searching is cancelled."
      % (headline, fmt_rate(drivers), fmt_rate(median_of(fills, "fill_per_s"))))
    w("")
    w("| workload | requests/s | / reference, same repetition | each repetition | goal |"
      " p50 ms | p99 ms | server CPU us per answer |")
    w("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: |")
    ratio_row(w, runs, thread_cpu, headline, "dispatch-hold-random", "hold-random (reference)", None, None)
    ratio_row(w, runs, thread_cpu, headline, "dispatch-noop", "noop (reference)", None, None)
    ratio_row(w, runs, thread_cpu, headline, "driver-update",
              "driver-update, %s drivers / noop" % fmt_rate(drivers), "dispatch-noop", ">= 80%")
    w("")
    rides = [r for r in runs.get(("holdfast", "ride-request", headline, 1), []) if r]
    if rides:
        w("Rides while drivers move (%d connections request rides, %d move drivers). *Created to"
          " offer made* is the ride's `POST` latency: the server creates the ride and makes its"
          " offer to the best free driver in one step, and answers 201 with that offer once both"
          " are durable, so the time from the request leaving the client to the offer in its"
          " hands bounds the time from creation to offer from above. Only rides answered"
          " `offered` count in it; rides left `searching` are counted apart."
          % (rides[0].get("ride_connections", 0), headline - rides[0].get("ride_connections", 0)))
        w("")
        w("| rides offered/s | rides searching per run | created to offer made, p50 ms | p99 ms |"
          " accept p50 / p99 ms | accepts refused | driver updates/s meanwhile | update p50 / p99 ms |")
        w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        w("| %s | %s | %s | %s | %s / %s | %s | %s | %s / %s |" % (
            fmt_rate(median_of(rides, "rides_per_s")), fmt_rate(median_of(rides, "rides_searching")),
            fmt_ms(median_of(rides, "ride_p50_ms")), fmt_ms(median_of(rides, "ride_p99_ms")),
            fmt_ms(median_of(rides, "accept_p50_ms")), fmt_ms(median_of(rides, "accept_p99_ms")),
            fmt_rate(median_of(rides, "accepts_refused")), fmt_rate(median_of(rides, "updates_per_s")),
            fmt_ms(median_of(rides, "update_p50_ms")), fmt_ms(median_of(rides, "update_p99_ms"))))
        w("")


def rooms_targets(target, runs, headline, core=None):
    """The targets of issues 20 and 21, in the targets table (core: corebench's JSON)."""
    join, _ = same_rep_ratio(runs, "queue-join", "queue-hold-random", headline)
    target("queue-join: joins/s >= 80%% of hold-random's holds/s (%d connections)" % headline,
           join, 0.8, fmt_percent(join))
    fill = queue_fill(runs, headline)
    line = fmt_rate(fill.get("filled")) if fill else "-"
    poll, _ = same_rep_ratio(runs, "queue-poll", "queue-poll-noop", headline)
    target("queue-poll: polls/s with %s waiting >= 70%% of noop" % line, poll, 0.7, fmt_percent(poll))
    growth = rss_growth_mb(fill)
    target("queue: server RSS with %s waiting < 256 MB more than empty" % line,
           None if growth is None else 256 - growth, 1e-9,
           "-" if growth is None else "+%.0f MB" % growth)
    rows = [r for r in runs.get(("holdfast", "queue-admit-rows", headline, 1), []) if r]
    if rows:
        # Met when every repetition's rate is within 5% of admit_per_s and no instant admitted
        # more than max(1, admit_per_s / 10), by the server's own rows.
        smooth = all(r.get("admit_per_s") and
                     abs(r["admissions_per_s"] / r["admit_per_s"] - 1) <= 0.05 and
                     r.get("instant_max", 0) <= max(1, r["admit_per_s"] / 10.0) for r in rows)
        target("queue-admit: admissions/s within 5%% of admit_per_s (%g), at most %g at one instant"
               % (rows[0].get("admit_per_s") or 0, max(1, (rows[0].get("admit_per_s") or 0) / 10.0)),
               1 if smooth else 0, 1, "%s/s, %d at most" % (
                   ", ".join("%.1f" % r["admissions_per_s"] for r in rows),
                   max(r.get("instant_max", 0) for r in rows)))
    update, _ = same_rep_ratio(runs, "driver-update", "dispatch-noop", headline)
    target("driver-update: updates/s over 100,000 drivers >= 80% of noop", update, 0.8,
           fmt_percent(update))
    if core and core.get("dispatch_search_us"):
        target("core: dispatch's candidate search among 100,000 drivers < 10 us",
               10 - core["dispatch_search_us"], 1e-9, "%.2f us" % core["dispatch_search_us"])
def won_per_s(run):
    """Holds won (201) per second: the run's answers per second times the share of 201s."""
    statuses = run.get("statuses") or {}
    total = sum(statuses.values())
    return run["throughput"] * statuses.get("201", 0) / total if total else None


def pgstore_section(w, runs, thread_cpu, headline):
    """One node on PostgreSQL beside one node on SQLite (issue 23; the pgstore part)."""
    postgres = [r for r in runs.get(("holdfast", "pgstore-postgres", headline, 1), []) if r]
    sqlite = [r for r in runs.get(("holdfast", "pgstore-sqlite", headline, 1), []) if r]
    w("## One node on PostgreSQL beside one node on SQLite")
    w("")
    if not postgres or not sqlite:
        w("Not run (`BENCH_ONLY=pgstore`).")
        w("")
        return
    w("hold-random (a random seat of 60,000, 1 s holds) at %d connections; in each repetition a"
      " fresh node on SQLite (its file on this disk, the write-ahead log fdatasynced), then a fresh"
      " node with `--store postgres://...` on a throwaway PostgreSQL of its own on the same machine"
      " (scripts/postgres.sh: fsync and synchronous_commit on, a new database per repetition),"
      " one right after the other. A batch on PostgreSQL is one transaction sent in libpq's"
      " pipeline mode (one round trip) and acknowledged when its COMMIT returns, so each group"
      " commit waits for PostgreSQL's own WAL flush plus the round trip, and PostgreSQL's"
      " backend takes CPU from the same two cores as the node and the load generator. Up to"
      " HF_STORE_BATCHES_OVERLAP_MAX batches are in flight (docs/DESIGN.md, \"Batches that"
      " overlap\"): the next one is sent before the last one's COMMIT has answered, which hides"
      " the round trip and the node's own turn, not the WAL flush, which one session still"
      " does one batch at a time. Other builds given in BENCH_PGSTORE_OTHERS (a change before"
      " and after) run on PostgreSQL in the same repetitions, each with a database of its own."
      " Medians over repetitions; the ratio is the median of the ratios of each repetition."
      % headline)
    w("")
    w("| store | answers/s | holds won/s | p50 ms | p99 ms | server CPU us per answer | errors |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, variant, group in (("SQLite", "pgstore-sqlite", sqlite),
                                  ("PostgreSQL", "pgstore-postgres", postgres)):
        cpu = median_role(thread_cpu.get((variant, headline, 1), []), "all")
        w("| %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt_rate(median_of(group, "throughput")),
            fmt_rate(statistics.median([v for v in map(won_per_s, group) if v is not None])
                     if any(won_per_s(r) is not None for r in group) else None),
            fmt_ms(median_of(group, "p50_ms")), fmt_ms(median_of(group, "p99_ms")),
            "-" if cpu is None else "%.1f" % cpu,
            sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in group)))
    # Holds won, not answers: a 409 (the seat is taken) costs the node far less than a win, and
    # the faster node meets more taken seats.
    won_by_rep = {r["rep"]: won_per_s(r) for r in sqlite}
    ratios = sorted(won_per_s(r) / won_by_rep[r["rep"]] for r in postgres
                    if won_per_s(r) and won_by_rep.get(r["rep"]))
    others = sorted({variant[len("pgstore-postgres-"):] for (system, variant, c, p) in runs
                     if system == "holdfast" and variant.startswith("pgstore-postgres-")
                     and c == headline and p == 1})
    for name in others:
        variant = "pgstore-postgres-" + name
        group = [r for r in runs.get(("holdfast", variant, headline, 1), []) if r]
        cpu = median_role(thread_cpu.get((variant, headline, 1), []), "all")
        won = [v for v in map(won_per_s, group) if v is not None]
        w("| PostgreSQL, build %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt_rate(median_of(group, "throughput")),
            fmt_rate(statistics.median(won) if won else None),
            fmt_ms(median_of(group, "p50_ms")), fmt_ms(median_of(group, "p99_ms")),
            "-" if cpu is None else "%.1f" % cpu,
            sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in group)))
    w("")
    w("PostgreSQL / SQLite holds won/s, same repetition: %s (each repetition: %s). Server CPU"
      " counts the node's own threads only, not PostgreSQL's backends." % (
          "-" if not ratios else "%.2fx" % statistics.median(ratios),
          ", ".join("%.2f" % r for r in ratios) or "-"))
    for name in others:
        group = [r for r in runs.get(("holdfast", "pgstore-postgres-" + name, headline, 1), [])
                 if r]
        other_ratios = sorted(won_per_s(r) / won_by_rep[r["rep"]] for r in group
                              if won_per_s(r) and won_by_rep.get(r["rep"]))
        this_by_rep = {r["rep"]: won_per_s(r) for r in postgres}
        against = sorted(this_by_rep[r["rep"]] / won_per_s(r) for r in group
                         if won_per_s(r) and this_by_rep.get(r["rep"]))
        w("Build %s (BENCH_PGSTORE_OTHERS) / SQLite, same repetition: %s (each repetition: %s);"
          " this build / build %s on PostgreSQL, same repetition: %s (each repetition: %s)."
          % (name, "-" if not other_ratios else "%.2fx" % statistics.median(other_ratios),
             ", ".join("%.2f" % r for r in other_ratios) or "-", name,
             "-" if not against else "%.2fx" % statistics.median(against),
             ", ".join("%.2f" % r for r in against) or "-"))
    w("")



# ---- calendars (issue 29; the calendar part) ----

def read_env(path):
    """KEY=VALUE lines (bench/run.sh's calendar-facts.env) as floats; {} when missing."""
    facts = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            key, _, value = line.strip().partition("=")
            try:
                facts[key] = float(value)
            except ValueError:
                pass
    return facts


def route_durations(metrics_text, suffix):
    """The server's own times of the GET route of a calendar ending in SUFFIX, from its
    /metrics: (count, [(upper bound s, cumulative count)]), or None when it has none."""
    buckets, count = [], None
    pattern = re.compile(r'^holdfast_http_request_duration_seconds_(bucket|count)\{(.*)\} (\S+)$')
    for line in metrics_text.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        route = labels.get("route", "")
        if "calendars" not in route or not route.endswith(suffix) or labels.get("method", "GET") != "GET":
            continue
        if m.group(1) == "count":
            count = float(m.group(3))
        elif labels.get("le") not in (None, "+Inf"):
            buckets.append((float(labels["le"]), float(m.group(3))))
    return (count, sorted(buckets)) if count else None


def server_share_within(durations, bound_s):
    """The share of the route's answers the server gave within bound_s (a bucket's bound)."""
    if not durations:
        return None
    count, buckets = durations
    within = [cumulative for upper, cumulative in buckets if abs(upper - bound_s) < 1e-12]
    return within[0] / count if within else None


def server_p99_bound(durations):
    """The least bucket bound, in seconds, under which 99% of the route's answers fall."""
    if not durations:
        return None
    count, buckets = durations
    for upper, cumulative in buckets:
        if cumulative >= 0.99 * count:
            return upper
    return None


def fmt_us(seconds):
    return "-" if seconds is None else "%g us" % (seconds * 1e6) if seconds < 1e-3 else "%g ms" % (seconds * 1e3)


def calendar_section(w, runs, thread_cpu, headline, raw):
    """Calendars: holds beside hold-random and beside PostgreSQL's two usual forms, then /free
    and /availability over a year of bookings, memory and a restart."""
    w("## Calendars")
    w("")
    holds = [r for r in runs.get(("holdfast", "calendar-hold", headline, 1), []) if r]
    if not holds:
        w("Not run (`BENCH_ONLY=calendar`).")
        w("")
        return
    resources = holds[0].get("resources", 10000)
    w("Durable holds on a night calendar of %s resources (half of capacity 1, half of capacity"
      " 10), each a random resource for a random 1-5-night span starting 1 to %s days ahead, ttl"
      " 1 s so that they lapse, at %d connections: in each repetition hold-random (the"
      " reference) and `calendar-hold` on fresh servers, then PostgreSQL doing the same holds as"
      " its users do today (bench/pg/calendar-*.sql, its own cluster, fsync and"
      " synchronous_commit on): capacity 1 as a row per use under `EXCLUDE USING gist (resource"
      " WITH =, span WITH &&)` (btree_gist; a lapsed overlapping use deleted first, then `INSERT"
      " ... ON CONFLICT DO NOTHING`), capacity 10 as per-night counter rows taken `WHERE free >="
      " 1` in one transaction with the hold's row (the resource's lapsed holds give their nights"
      " back first; a span not wholly free rolls back). Each PostgreSQL form gets its half of the"
      " resources (5,000) and the whole load. Rates are attempts answered per second (a hold won"
      " or refused; a pgbench transaction), medians over repetitions; the ratios divide the same"
      " repetition."
      % (fmt_rate(resources), holds[0].get("span_days", 300), headline))
    w("")
    w("| system | attempts/s | holds won/s | / hold-random | each repetition | goal | p50 ms | p99 ms |")
    w("| --- | ---: | ---: | ---: | --- | --- | ---: | ---: |")
    reference = runs.get(("holdfast", "calendar-hold-random", headline, 1), [])
    ratio, values = same_rep_ratio(runs, "calendar-hold", "calendar-hold-random", headline)
    for label, group, shown in (("Holdfast hold-random (reference)", reference, False),
                                ("Holdfast calendar-hold", holds, True)):
        s = summary(group)
        won = [v for v in map(won_per_s, [r for r in group if r]) if v is not None]
        w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt_rate(s["throughput"]), fmt_rate(statistics.median(won) if won else None),
            fmt_percent(ratio) if shown else "-",
            ", ".join(fmt_percent(v) for v in values) if shown else "-", ">= 80%" if shown else "-",
            fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"])))
    for variant, label in (("calendar-exclude", "PostgreSQL, capacity 1: EXCLUDE USING gist"),
                           ("calendar-counter", "PostgreSQL, capacity 10: per-night counters")):
        s = summary(runs.get(("pg", variant, headline, 1), []))
        w("| %s | %s | - | - | - | - | %s | %s |" % (label, fmt_rate(s["throughput"]),
                                                     fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"])))
    w("")
    w("| Holdfast calendar-hold / PostgreSQL, same repetition | median | each repetition | goal | met |")
    w("| --- | ---: | --- | --- | --- |")
    for variant, label in (("calendar-exclude", "against EXCLUDE USING gist (capacity 1)"),
                           ("calendar-counter", "against per-night counters (capacity 10)")):
        peer = ratios_by_rep(holds, runs.get(("pg", variant, headline, 1), []))
        median = statistics.median(peer) if peer else None
        w("| %s | %s | %s | >= 3x | %s |" % (
            label, "-" if median is None else "%.1fx" % median,
            ", ".join("%.1fx" % v for v in peer) or "-",
            "-" if median is None else "yes" if median >= 3 else "no"))
    w("")
    fills = [r for r in runs.get(("holdfast", "calendar-fill", headline, 1), []) if r and r.get("filled")]
    fill = fills[0] if fills else None
    if not fill:
        return
    facts = read_env(os.path.join(raw, "calendar-facts.env"))
    metrics_path = os.path.join(raw, "calendar-metrics.txt")
    metrics = open(metrics_path, encoding="utf-8").read() if os.path.exists(metrics_path) else ""
    uses = fill.get("fill_uses", 0) * fill.get("resources", resources)
    w("Reads over a year of bookings: one server filled with %s back-to-back 3-night uses per"
      " resource from tomorrow (%s live uses in %s bookings of 10 items, sent %d"
      " connections x 4 in flight: %s s, %s bookings/s), then, in each repetition, with one"
      " client: `GET /free` for a random 3-night span, quantity 1, over all %s resources, and"
      " `GET /availability` of a random resource over the next 365 days. Client times are"
      " loadgen's (medians over repetitions); the server's come from its"
      " `holdfast_http_request_duration_seconds` histogram (its lowest bound is 100 us), read"
      " from /metrics after the runs."
      % (fmt_rate(fill.get("fill_uses")), fmt_rate(uses), fmt_rate(fill.get("filled")), headline,
         "%.1f" % fill.get("fill_s", 0), fmt_rate(fill.get("fill_per_s")), fmt_rate(resources)))
    w("")
    w("| read | requests/s | client p50 ms | client p99 ms | server: answered within 100 us |"
      " server p99 under | goal | met |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    free = summary(runs.get(("holdfast", "calendar-free", 1, 1), []))
    free_server = route_durations(metrics, "/free")
    w("| /free, 3 nights, %s resources | %s | %s | %s | %s | %s | client p99 < 5 ms | %s |" % (
        fmt_rate(resources), fmt_rate(free["throughput"]), fmt_ms(free["p50_ms"]),
        fmt_ms(free["p99_ms"]), fmt_percent(server_share_within(free_server, 1e-4)),
        fmt_us(server_p99_bound(free_server)),
        "-" if free["p99_ms"] is None else "yes" if free["p99_ms"] < 5 else "no"))
    availability = summary(runs.get(("holdfast", "calendar-availability", 1, 1), []))
    availability_server = route_durations(metrics, "/availability")
    share = server_share_within(availability_server, 1e-4)
    w("| /availability, one resource, 365 days | %s | %s | %s | %s | %s | server p99 < 100 us | %s |" % (
        fmt_rate(availability["throughput"]), fmt_ms(availability["p50_ms"]),
        fmt_ms(availability["p99_ms"]), fmt_percent(share), fmt_us(server_p99_bound(availability_server)),
        "-" if share is None else "yes" if share >= 0.99 else "no"))
    w("")
    empty, filled = facts.get("rss_empty_kb"), fill.get("rss_after_kb")
    growth = (filled - empty) / 1024.0 if empty and filled else None
    restart = facts.get("restart_s")
    w("| memory and restart | value | goal | met |")
    w("| --- | ---: | --- | --- |")
    w("| server RSS, empty | %s MB | - | - |" % ("-" if not empty else "%.0f" % (empty / 1024.0)))
    w("| server RSS, the calendar made, before the bookings | %s MB | - | - |" % (
        "-" if not fill.get("rss_before_kb") else "%.0f" % (fill["rss_before_kb"] / 1024.0)))
    w("| server RSS with %s live uses | %s MB | - | - |" % (
        fmt_rate(uses), "-" if not filled else "%.0f" % (filled / 1024.0)))
    w("| growth over the empty server | %s | < 512 MB | %s |" % (
        "-" if growth is None else "+%.0f MB" % growth,
        "-" if growth is None else "yes" if growth < 512 else "no"))
    failed = facts.get("restart_failed")
    w("| restart on that data directory, to /healthz 200 | %s | < 10 s | %s |" % (
        "did not start (see holdfast.log)" if failed else "-" if restart is None else "%.2f s" % restart,
        "no" if failed else "-" if restart is None else "yes" if restart < 10 else "no"))
    if facts.get("rss_restarted_kb"):
        w("| server RSS after the restart | %.0f MB | - | - |" % (facts["rss_restarted_kb"] / 1024.0))
    w("")


# ---- several nodes on one PostgreSQL (issue 23; the cluster part, bench/cluster.sh) ----

CLUSTER_NAME = re.compile(r"^cluster__(?P<variant>[a-z0-9-]+)__c(?P<c>\d+)__p1__r(?P<r>\d+)\.txt$")
# The goal for a takeover (issue 23): another node serves the unit within this many seconds.
TAKEOVER_GOAL_S = 10.0
TAKEOVER_SIGNALS = [
    ("KILL", "kill -9 (a crash)", "the lease lapses: up to 5 s after the last renewal, and the"
     " other node takes it on its next request"),
    ("STOP", "SIGSTOP (a pause: the process is alive, its connections open)",
     "the same, and the paused owner's database session is ended"),
    ("TERM", "SIGTERM (a clean stop)", "the node hands its leases back as it exits"),
]


def load_cluster(directory):
    """bench/cluster.sh's raw results in DIRECTORY: ({(variant, connections): [wrk run with
    "rep"]}, {signal: [(rep, seconds or None)]}); both empty when the part did not run."""
    wrk = {}
    for path in sorted(glob.glob(os.path.join(directory, "cluster__*.txt"))):
        m = CLUSTER_NAME.match(os.path.basename(path))
        if not m:
            continue
        run = parse_wrk(path)
        if run is not None:
            run["rep"] = int(m.group("r"))
        wrk.setdefault((m.group("variant"), int(m.group("c"))), []).append(run)
    takeovers = {}
    path = os.path.join(directory, "cluster-takeover.txt")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "signal" not in fields or "rep" not in fields:
                continue
            try:
                seconds = float(fields.get("seconds", "none"))
            except ValueError:
                seconds = None  # none within bench/cluster.sh's limit
            takeovers.setdefault(fields["signal"], []).append((int(fields["rep"]), seconds))
    return wrk, takeovers


def disjoint_totals(wrk, nodes):
    """{rep: holds/s of every node together} for the run of NODES nodes on disjoint events; a
    repetition where a node's wrk failed is left out."""
    by_rep = {}
    for index in range(nodes):
        for run in wrk.get(("disjoint-n%d-node%d" % (nodes, index), 32), []):
            if run:
                by_rep.setdefault(run["rep"], []).append(run["throughput"])
    return {rep: sum(values) for rep, values in by_rep.items() if len(values) == nodes}


def fmt_seconds(value):
    return "none in 30 s" if value is None else "%.1f" % value


def cluster_targets(target, takeovers):
    """Issue 23's takeover goal in the targets table: the slowest takeover of each signal (a
    takeover not seen at all counts as missed); nothing when the part did not run."""
    for signal, _, _ in TAKEOVER_SIGNALS:
        times = [t for _, t in takeovers.get(signal, [])]
        if not times:
            continue
        slowest = None if None in times else max(times)
        target("cluster: another node serves the unit within %.0f s of %s to its owner"
               % (TAKEOVER_GOAL_S, "kill -9" if signal == "KILL" else "SIG" + signal),
               -1.0 if slowest is None else TAKEOVER_GOAL_S - slowest, 1e-9,
               "none in 30 s" if slowest is None else "at most %.1f s" % slowest)


def cluster_section(w, wrk, takeovers, meta):
    """Several nodes on one PostgreSQL: a forwarded request against a direct one, 1 to 3 nodes on
    disjoint events, takeover times."""
    w("## Several nodes on PostgreSQL")
    w("")
    if not wrk and not takeovers:
        w("Not run (`BENCH_ONLY=cluster`).")
        w("")
        return
    w("Nodes of one cluster (`--store postgres://...` and `--node-id` given to each) on a throwaway"
      " PostgreSQL of their own on this machine (scripts/postgres.sh: fsync and synchronous_commit"
      " on), driven by wrk (`-t1`, no warm-up), %s s per point; every part is repeated %s times"
      " on fresh nodes and a fresh database, and the figures are medians of the repetitions"
      " (ratios: the median of each repetition's ratio). Command: `BENCH_SECONDS=%s BENCH_REPS=%s"
      " bench/cluster.sh` (part `cluster` of bench/run.sh). Machine: %s, %s cores, %s, %s;"
      " PostgreSQL %s." % (
          meta.get("seconds", "?"), meta.get("reps", "?"), meta.get("seconds", "?"),
          meta.get("reps", "?"), meta.get("cpu", "?"), meta.get("cores", "?"),
          meta.get("memory", "?"), meta.get("disk", "?"), meta.get("postgres", "?")))
    w("")
    # (a) forwarding
    w("**A forwarded request beside a direct one.** Node A owns the event; the same load goes"
      " to A (direct) and then to B, which forwards each request to A over its keep-alive pool"
      " and relays the answer (forwarded), one right after the other in each repetition. *GET"
      " event* reads the event (memory only, no store); *hold* is a `POST .../holds` of one"
      " unit of a large pool by a random user, answered once its batch has committed in"
      " PostgreSQL.")
    w("")
    w("| request | connections | direct answers/s | forwarded answers/s | forwarded / direct,"
      " same repetition | each repetition | direct p50 / p99 ms | forwarded p50 / p99 ms |"
      " errors |")
    w("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for request, label in (("get", "GET event"), ("hold", "hold")):
        for c in sorted({c for (variant, c) in wrk if variant == request + "-direct"}):
            direct = [r for r in wrk.get((request + "-direct", c), []) if r]
            forwarded = [r for r in wrk.get((request + "-forwarded", c), []) if r]
            values = ratios_by_rep(forwarded, direct)
            w("| %s | %d | %s | %s | %s | %s | %s / %s | %s / %s | %d |" % (
                label, c, fmt_rate(median_of(direct, "throughput")),
                fmt_rate(median_of(forwarded, "throughput")),
                "-" if not values else "%.2fx" % statistics.median(values),
                ", ".join("%.2f" % v for v in values) or "-",
                fmt_ms(median_of(direct, "p50_ms")), fmt_ms(median_of(direct, "p99_ms")),
                fmt_ms(median_of(forwarded, "p50_ms")), fmt_ms(median_of(forwarded, "p99_ms")),
                sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in direct + forwarded)))
    w("")
    # (b) disjoint events
    totals = {nodes: disjoint_totals(wrk, nodes) for nodes in (1, 2, 3)}
    if any(totals.values()):
        w("**1, 2 and 3 nodes on disjoint events.** Each node creates and so owns an event of its"
          " own, and one wrk per node (32 connections) holds units of that event, all at once: no"
          " request is forwarded, every hold is a commit in the one PostgreSQL.")
        w("")
        w("| nodes | holds/s, all nodes | each repetition | per node | / 1 node, same repetition |"
          " p50 / p99 ms | errors |")
        w("| ---: | ---: | --- | ---: | ---: | ---: | ---: |")
        for nodes in (1, 2, 3):
            by_rep = totals[nodes]
            if not by_rep:
                continue
            runs = [r for index in range(nodes)
                    for r in wrk.get(("disjoint-n%d-node%d" % (nodes, index), 32), []) if r]
            one = totals[1]
            ratios = sorted(by_rep[rep] / one[rep] for rep in by_rep if one.get(rep))
            total = statistics.median(by_rep.values())
            w("| %d | %s | %s | %s | %s | %s / %s | %d |" % (
                nodes, fmt_rate(total), ", ".join(fmt_rate(by_rep[rep]) for rep in sorted(by_rep)),
                fmt_rate(total / nodes), "-" if not ratios else "%.2fx" % statistics.median(ratios),
                fmt_ms(median_of(runs, "p50_ms")), fmt_ms(median_of(runs, "p99_ms")),
                sum(r.get("errors", 0) + r.get("transport_errors", 0) for r in runs)))
        w("")
        w("This measures sharing, not scaling: on this %s-core machine every node, PostgreSQL"
          " (its backends and its WAL flush) and the load generators share the same cores, so a"
          " second node takes CPU from the first. With a machine per node, the limit would be"
          " PostgreSQL's commit rate: every node's holds are written in its batches, each a"
          " transaction committed (and its WAL flushed) in that one PostgreSQL, while the nodes"
          " add no work to one another."
          % meta.get("cores", "?"))
        w("")
    # (c) takeover
    if takeovers:
        w("**Takeover.** Nodes A and B; A creates the event (and owns it), B has answered about it"
          " once (forwarded). After a random fraction of a second (against the owner's renewal,"
          " once a second), A gets the signal, and B is asked about the event every 50 ms"
          " (`curl -m 1`) until an answer carries `Holdfast-Node: B`: the time from the signal to"
          " that answer. The lease is 5 s, renewed every second; goal: under %.0f s."
          % TAKEOVER_GOAL_S)
        w("")
        w("| signal to the owner | the other node waits for | median s | range s | each repetition |"
          " goal | met |")
        w("| --- | --- | ---: | ---: | --- | --- | :---: |")
        for signal, label, waits in TAKEOVER_SIGNALS:
            times = [t for _, t in sorted(takeovers.get(signal, []))]
            if not times:
                continue
            seen = sorted(t for t in times if t is not None)
            met = len(seen) == len(times) and seen[-1] < TAKEOVER_GOAL_S
            w("| %s | %s | %s | %s | %s | < %.0f s | %s |" % (
                label, waits, fmt_seconds(statistics.median(seen)) if seen else "-",
                "%.1f-%.1f" % (seen[0], seen[-1]) if seen else "-",
                ", ".join(fmt_seconds(t) for t in times), TAKEOVER_GOAL_S,
                "yes" if met else "**no**"))
        w("")


# ---- the cancel job (issue 30), the pre-queue's opening over HTTP, allocations and the
# waitlist (issue 31): parts job, prequeue, allocations, waitlist, one text output each ----

NUMBER = r"([0-9.]+|nan)"
JOB_DONE = re.compile(r"^job: (\d+) orders, (\d+) offered, done in ([0-9.]+) s$", re.M)
JOB_HOLDS = re.compile(r"^hold\+release on a third event: without a job p50 %s ms p99 %s ms \((\d+)\);"
                       r" during the job p50 %s ms p99 %s ms \((\d+)\)$" % ((NUMBER,) * 2 + (NUMBER,) * 2), re.M)
OPENING = re.compile(r"^opening: (\d+) tickets placed in (-?\d+) ms after opens_at \((\d+) polls,"
                     r" the one before at (-?\d+) ms", re.M)
PREQUEUE_RUN = re.compile(r"^(opening|plain) (poll|hold): +([0-9.]+) requests/s \((\d+) answers\)\n"
                          r" *latency ms: p50 ([0-9.]+) +p99 ([0-9.]+)", re.M)
PREQUEUE_ERRORS = re.compile(r"^(opening|plain) (poll|hold): .*\n.*\n  errors: (\d+)", re.M)
ALLOCATION_PAIR = re.compile(r"^pair (\d+): plain ([0-9.]+)/s \(([0-9.]+) us CPU each; ([^)]*)\), 50%"
                             r" allocated ([0-9.]+)/s \(([0-9.]+) us; ([^)]*)\), ratio ([0-9.]+)"
                             r" \(CPU ([0-9.]+)\)$", re.M)
ALLOCATION_MEDIAN = re.compile(r"^median ratio \(50% allocated / plain\) over (\d+) pairs: answers/s"
                               r" ([0-9.]+), CPU per answer \(plain / allocated\) ([0-9.]+)$", re.M)
WAITLIST_OFFERED = re.compile(r"^waitlist: (\d+) entries, (\d+) holds lapsed at once \(expires_at spread"
                              r" (\d+) ms\), all \d+ offered in (-?\d+) ms \(durable by (-?\d+) ms; (\d+)"
                              r" polls after the lapse, the one before at (-?\d+) ms\)$", re.M)
WAITLIST_RATE = re.compile(r"^hold-random on another event: before the lapse ([0-9]+|-) answers/s,"
                           r" during the offers ([0-9]+|-) answers/s", re.M)
JOB_GOAL_S, PREQUEUE_GOAL_MS, P99_GOAL_RATIO = 30.0, 2000.0, 2.0
ALLOCATIONS_GOAL, WAITLIST_GOAL_MS = 0.95, 1000.0


def read_text(path):
    return open(path, encoding="utf-8").read() if os.path.exists(path) else ""


def parse_job(text):
    """bench/job.py's two lines as a dict, or None when the job's line is missing."""
    done, holds = JOB_DONE.search(text), JOB_HOLDS.search(text)
    if not done:
        return None
    job = {"orders": int(done.group(1)), "offered": int(done.group(2)), "done_s": float(done.group(3))}
    if holds:
        for i, key in enumerate(("quiet_p50_ms", "quiet_p99_ms", "quiet_n", "busy_p50_ms", "busy_p99_ms", "busy_n")):
            job[key] = float(holds.group(i + 1))
    return job


def parse_prequeue_http(text):
    """bench/prequeue.sh's output: the opening's line and its four runs ("opening poll", ...:
    requests/s, p50, p99, errors), or None without the opening's line."""
    opening = OPENING.search(text)
    if not opening:
        return None
    runs = {}
    for m in PREQUEUE_RUN.finditer(text):
        runs["%s %s" % (m.group(1), m.group(2))] = {
            "rate": float(m.group(3)), "answers": int(m.group(4)), "p50_ms": float(m.group(5)),
            "p99_ms": float(m.group(6)), "errors": 0}
    for m in PREQUEUE_ERRORS.finditer(text):
        runs.setdefault("%s %s" % (m.group(1), m.group(2)), {})["errors"] = int(m.group(3))
    return {"tickets": int(opening.group(1)), "opening_ms": float(opening.group(2)),
            "polls": int(opening.group(3)), "before_ms": float(opening.group(4)), "runs": runs}


def parse_allocations(text):
    """bench/allocations.sh's pair lines and median line, or None without the median."""
    median = ALLOCATION_MEDIAN.search(text)
    if not median:
        return None
    pairs = [{"plain": float(m.group(2)), "plain_cpu_us": float(m.group(3)), "plain_statuses": m.group(4),
              "allocated": float(m.group(5)), "allocated_cpu_us": float(m.group(6)),
              "allocated_statuses": m.group(7), "ratio": float(m.group(8)), "cpu_ratio": float(m.group(9))}
             for m in ALLOCATION_PAIR.finditer(text)]
    return {"pairs": pairs, "count": int(median.group(1)), "ratio": float(median.group(2)),
            "cpu_ratio": float(median.group(3))}


def parse_waitlist(text):
    """bench/waitlist.py's two lines as a dict, or None without the offers' line."""
    offered, rates = WAITLIST_OFFERED.search(text), WAITLIST_RATE.search(text)
    if not offered:
        return None
    figures = dict(zip(("entries", "lapses", "spread_ms", "offered_ms", "durable_ms", "polls", "before_ms"),
                       (int(v) for v in offered.groups())))
    figures["rate_before"] = figures["rate_during"] = None
    if rates:
        figures["rate_before"] = None if rates.group(1) == "-" else float(rates.group(1))
        figures["rate_during"] = None if rates.group(2) == "-" else float(rates.group(2))
    figures["ended_early"] = "ended before the last offer" in text
    return figures


def met(ok):
    return "-" if ok is None else "yes" if ok else "**no**"


PART_COMMAND = "Command (part of `make bench`"  # a section that shows its own (merge)


def part_command(w, commands, fallback):
    """The part's commands as run (commands-by-part.txt), else the usual one."""
    w(PART_COMMAND + "; alone: `BENCH_ONLY=%s bench/run.sh`):" % fallback[0])
    w("")
    w("```")
    for command in general_commands(commands) or [fallback[1]]:
        w(command)
    w("```")
    w("")


def job_section(w, raw, commands):
    w("## A cancel job onto another event")
    w("")
    job = parse_job(read_text(os.path.join(raw, "job.txt")))
    if not job:
        w("Not run (`BENCH_ONLY=job`).")
        w("")
        return
    w("API.md section 13 (issue 30): an event of %s confirmed pool orders (booked beforehand,"
      " pipelined) is cancelled onto another event with room for them all; the job walks the"
      " orders in steps of at most 1,000 orders and 64 records (one per loop turn), and offers"
      " each an exchange hold on the other event. The time"
      " runs from the cancel's answer to the job's `done` (`GET /v1/jobs/{id}` polled every"
      " 10 ms). Meanwhile one client (Python, one request at a time) holds and releases a seat"
      " on a third event; its latency during the job is set against the same client's in the"
      " 3 s just before the cancel. One run, on its own fresh server." % fmt_rate(job["orders"]))
    w("")
    ratio = job["busy_p99_ms"] / job["quiet_p99_ms"] if job.get("quiet_p99_ms") else None
    w("| figure | measured | goal | met |")
    w("| --- | ---: | --- | --- |")
    w("| the job: %s orders, %s offered, time to `done` | %.2f s | < %.0f s | %s |" % (
        fmt_rate(job["orders"]), fmt_rate(job["offered"]), job["done_s"], JOB_GOAL_S,
        met(job["done_s"] < JOB_GOAL_S)))
    if "quiet_p99_ms" in job:
        w("| hold+release on a third event, without a job: p50 / p99 ms (%d) | %s / %s | - | - |" % (
            job["quiet_n"], fmt_ms(job["quiet_p50_ms"]), fmt_ms(job["quiet_p99_ms"])))
        w("| the same during the job: p50 / p99 ms (%d) | %s / %s | - | - |" % (
            job["busy_n"], fmt_ms(job["busy_p50_ms"]), fmt_ms(job["busy_p99_ms"])))
        w("| p99 during the job / without | %s | <= %.0fx | %s |" % (
            "-" if ratio is None else "%.1fx" % ratio, P99_GOAL_RATIO,
            met(None if ratio is None else ratio <= P99_GOAL_RATIO)))
    w("")
    if job.get("busy_n", 0) < 100:
        w("The client made %d holds during the job: its p99 is that of a few samples." % job.get("busy_n", 0))
        w("")
    part_command(w, commands, ("job", "python3 bench/job.py --binary build/holdfast --orders 100000"))


def prequeue_http_section(w, raw, commands):
    w("## The pre-queue's opening over HTTP")
    w("")
    prequeue = parse_prequeue_http(read_text(os.path.join(raw, "prequeue-http.txt")))
    if not prequeue:
        w("Not run (`BENCH_ONLY=prequeue`).")
        w("")
        return
    w("API.md section 6's `opens_at` (issue 31), on the server (the core's own figures are in"
      " *The core alone*): %s users join a room before its `opens_at`; from 0.2 s before it,"
      " 1.5 s of polls of random tickets of that line (25 connections, loadgen queue-poll) beside"
      " hold-random on another event (25 connections); 2 s later the same again on the line now"
      " drawn (the reference: same server, same line, no opening). A watcher polls one"
      " pre-queue ticket from just before `opens_at` (1 ms apart) until it has its place; every"
      " ticket gets its place in the same instant (a pre-queue ticket answers `pre_queue` until"
      " the whole line is drawn), so that is the time until every ticket has its place. Polls"
      " answered `pre_queue` count as errors of the opening's poll run (those of its 0.2 s"
      " before `opens_at` included). One run." % fmt_rate(prequeue["tickets"]))
    w("")
    w("| figure | measured | goal | met |")
    w("| --- | ---: | --- | --- |")
    opening = prequeue["opening_ms"]
    w("| every ticket placed, after `opens_at` (the poll before: %.0f ms) | %.0f ms | < %.0f s | %s |" % (
        prequeue["before_ms"], opening, PREQUEUE_GOAL_MS / 1000, met(opening < PREQUEUE_GOAL_MS)))
    runs = prequeue["runs"]
    for kind, label in (("poll", "polls of the line"), ("hold", "hold-random on another event")):
        during, plain = runs.get("opening " + kind), runs.get("plain " + kind)
        if not during or not plain or "p99_ms" not in during or "p99_ms" not in plain:
            continue
        ratio = during["p99_ms"] / plain["p99_ms"] if plain["p99_ms"] else None
        w("| %s: p99 during the opening / without (%s / %s ms) | %s | <= %.0fx | %s |" % (
            label, fmt_ms(during["p99_ms"]), fmt_ms(plain["p99_ms"]),
            "-" if ratio is None else "%.1fx" % ratio, P99_GOAL_RATIO,
            met(None if ratio is None else ratio <= P99_GOAL_RATIO)))
    w("")
    w("| run | requests/s | p50 ms | p99 ms | errors |")
    w("| --- | ---: | ---: | ---: | ---: |")
    for name in ("opening poll", "opening hold", "plain poll", "plain hold"):
        run = runs.get(name)
        if run and "rate" in run:
            w("| %s | %s | %s | %s | %s |" % (name, fmt_rate(run["rate"]), fmt_ms(run["p50_ms"]),
                                              fmt_ms(run["p99_ms"]), fmt_rate(run["errors"])))
    w("")
    part_command(w, commands, ("prequeue", "bench/prequeue.sh OUT"))


def allocations_section(w, raw, commands):
    w("## Public holds beside allocations")
    w("")
    allocations = parse_allocations(read_text(os.path.join(raw, "allocations.txt")))
    if not allocations:
        w("Not run (`BENCH_ONLY=allocations`).")
        w("")
        return
    w("API.md section 14 (issue 31): public hold-random on an event of 60,000 seats with every"
      " second seat of every row set aside in one allocation (30,000 seats) against the same"
      " event without; in both runs loadgen aims only at the public seats (`--seat-step 2`),"
      " so both do the same work and only the allocation's presence differs (a hold of an"
      " allocated seat would be a 409 that writes nothing: cheaper, whatever allocations"
      " cost). %d pairs of fresh servers, interleaved (plain first in odd pairs), so the"
      " machine's drift falls on both; each server's CPU is counted over its loadgen run"
      " alone (the event and the allocation made 2 s before). The ratios are the allocated"
      " run's over the plain one's: answers/s, and server CPU per answer (plain / allocated:"
      " below 1 costs more with allocations); the figure is their median." % allocations["count"])
    w("")
    w("| figure | measured | goal | met |")
    w("| --- | ---: | --- | --- |")
    w("| answers/s, 50%% allocated / plain (median of %d pairs) | %.0f%% | >= %.0f%% | %s |" % (
        allocations["count"], 100 * allocations["ratio"], 100 * ALLOCATIONS_GOAL,
        met(allocations["ratio"] >= ALLOCATIONS_GOAL)))
    w("| server CPU per answer, plain / 50%% allocated (median) | %.0f%% | - | - |" % (
        100 * allocations["cpu_ratio"]))
    w("")
    if allocations["pairs"]:
        w("| pair | plain answers/s | us CPU each | statuses | allocated answers/s | us CPU each |"
          " statuses | ratio | CPU ratio |")
        w("| ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |")
        for i, pair in enumerate(allocations["pairs"], 1):
            w("| %d | %s | %.1f | %s | %s | %.1f | %s | %.2f | %.2f |" % (
                i, fmt_rate(pair["plain"]), pair["plain_cpu_us"], pair["plain_statuses"],
                fmt_rate(pair["allocated"]), pair["allocated_cpu_us"], pair["allocated_statuses"],
                pair["ratio"], pair["cpu_ratio"]))
        w("")
    part_command(w, commands, ("allocations", "bench/allocations.sh 5"))


def waitlist_section(w, raw, commands):
    w("## A waitlist when holds lapse together")
    w("")
    figures = parse_waitlist(read_text(os.path.join(raw, "waitlist.txt")))
    if not figures:
        w("Not run (`BENCH_ONLY=waitlist`).")
        w("")
        return
    w("API.md section 14 (issue 31): a sold-out event (every seat sold or held) with %s waiting"
      " entries (quantity 1, distinct users), then %s single-seat holds lapse at one instant:"
      " they were made with a `ttl_s` aimed at one instant and extended to a later common one"
      " while the entries joined; the spread of their `expires_at` is the server's `now` against"
      " the client's send time (%d ms here), and the time counts from the earliest. *Offered*:"
      " the first `/metrics` answer whose `holdfast_waitlist{status=\"offered\"}` counts them all"
      " (polled back to back; %d polls after the lapse, the one before it answered at %d ms);"
      " *durable*: a write sent right after that is answered (batches become durable in order)."
      " Hold-random on another event (loadgen, 25 connections) runs throughout; its answers/s"
      " come from the server's `holdfast_http_requests_total` of the holds route, in the second"
      " before the lapse and from the last answer before it to the offers' count. One run, on a"
      " fresh server." % (fmt_rate(figures["entries"]), fmt_rate(figures["lapses"]),
                          figures["spread_ms"], figures["polls"], figures["before_ms"]))
    w("")
    before, during = figures["rate_before"], figures["rate_during"]
    w("| figure | measured | goal | met |")
    w("| --- | ---: | --- | --- |")
    w("| all %s offered, after the lapse | %d ms | < %.0f s | %s |" % (
        fmt_rate(figures["lapses"]), figures["offered_ms"], WAITLIST_GOAL_MS / 1000,
        met(figures["offered_ms"] < WAITLIST_GOAL_MS)))
    w("| ... and durable | %d ms | < %.0f s | %s |" % (
        figures["durable_ms"], WAITLIST_GOAL_MS / 1000, met(figures["durable_ms"] < WAITLIST_GOAL_MS)))
    w("| hold-random on another event: answers/s before the lapse / during the offers | %s / %s%s | - | - |" % (
        fmt_rate(before), fmt_rate(during),
        "" if not before or during is None else " (%.0f%%)" % (100 * during / before)))
    w("")
    if figures["ended_early"]:
        w("Hold-random ended before the last offer: its rate during the offers is partly idle.")
        w("")
    part_command(w, commands, ("waitlist", "python3 bench/waitlist.py --binary build/holdfast"))


def fair_demand_targets(target, raw):
    """Issues 30 and 31's goals of these parts in the targets table (nothing when not run)."""
    job = parse_job(read_text(os.path.join(raw, "job.txt")))
    if job:
        target("job: a cancel of %s orders onto another event done in < 30 s" % fmt_rate(job["orders"]),
               JOB_GOAL_S - job["done_s"], 1e-9, "%.2f s" % job["done_s"])
    prequeue = parse_prequeue_http(read_text(os.path.join(raw, "prequeue-http.txt")))
    if prequeue:
        target("prequeue (HTTP): %s pre-queue tickets placed < 2 s after opens_at" % fmt_rate(prequeue["tickets"]),
               PREQUEUE_GOAL_MS - prequeue["opening_ms"], 1e-9, "%.0f ms" % prequeue["opening_ms"])
    allocations = parse_allocations(read_text(os.path.join(raw, "allocations.txt")))
    if allocations:
        target("allocations: public hold-random with 50% allocated >= 95% of without",
               allocations["ratio"], ALLOCATIONS_GOAL, "%.0f%%" % (100 * allocations["ratio"]))
    waitlist = parse_waitlist(read_text(os.path.join(raw, "waitlist.txt")))
    if waitlist:
        # Judged by the durable time: an offer a restart could take back is not yet given.
        target("waitlist: %s lapses onto %s entries all offered (durably) < 1 s" % (
            fmt_rate(waitlist["lapses"]), fmt_rate(waitlist["entries"])),
            WAITLIST_GOAL_MS - waitlist["durable_ms"], 1e-9, "%d ms" % waitlist["durable_ms"])


def prequeue_paragraph(w, prequeue):
    """The waiting room's opening (corebench --only prequeue), in the core's section."""
    ratio = prequeue["poll_p99_us"] / max(prequeue["plain_poll_p99_us"], 1)
    w("The pre-queue's opening (API.md section 6's `opens_at`): %s tickets joined before"
      " `opens_at` get their places in %s loop turns (touching the opening's memory, the"
      " shuffle, the copy into the line: %.1f ms of the loop's time in all, the longest turn's"
      " slice %.2f ms). On the server a turn waits 1 ms for the next slice, so every place is"
      " given about %.0f ms after `opens_at` (goal: under 2 s). During it, 50 polls of the line"
      " and 50 hold+release on another event per turn, each timed from its turn's start in the"
      " thread's own time: p99 %s µs and %s µs, against %s µs and %s µs for the same line"
      " without an opening (%.1fx; goal: at most 2x)." % (
          "{:,}".format(prequeue["tickets"]), prequeue["turns"], prequeue["slices_ms"],
          prequeue["slice_max_ms"], prequeue["turns"] + prequeue["slices_ms"],
          "{:,.0f}".format(prequeue["poll_p99_us"]), "{:,.0f}".format(prequeue["hold_p99_us"]),
          "{:,.0f}".format(prequeue["plain_poll_p99_us"]),
          "{:,.0f}".format(prequeue["plain_hold_p99_us"]), ratio))
    w("")


def render(results, markdown_path, svg_path):
    """The whole of BENCHMARKS.md from one run, as a list of lines; the chart is written to
    svg_path (none when svg_path is None)."""
    meta = read_meta(os.path.join(results, "meta.env"))
    commands = open(os.path.join(results, "commands.txt"), encoding="utf-8").read().splitlines() \
        if os.path.exists(os.path.join(results, "commands.txt")) else []
    runs = load_runs(os.path.join(results, "raw"), float(meta.get("seconds", "3")))
    headline = int(meta.get("headline", "50"))
    connections = [int(c) for c in meta.get("connections", "1 8 50 200").split()]

    def point(system, variant, c, p=1):
        return summary(runs.get((system, variant, c, p), []))

    core = read_json(os.path.join(results, "raw", "core.json"))
    prequeue = read_json(os.path.join(results, "raw", "prequeue.json"))
    profile = read_json(os.path.join(results, "raw", "profile.json"))

    out = []
    w = out.append
    w("# Benchmarks")
    w("")
    w("Generated by `make bench` (bench/run.sh, then bench/report.py) on %s. Do not edit by hand:"
      % meta.get("date", "?"))
    w("run `make bench` again. Every figure is the median of %s repetitions of %s s each (metric by"
      % (meta.get("reps", "?"), meta.get("seconds", "?")))
    w("metric); all servers ran on this machine in the same run, on 127.0.0.1, with the clients")
    w("on the same machine. How to run the pieces alone: bench/README.md.")
    w("")

    # ---- headline ----
    w("## Hold a random seat, %d connections" % headline)
    w("")
    w("A hold is one random seat of 60,000, for a random user of 1,000,000, that lapses after 1 s"
      " so seats keep coming back and a steady share of requests really writes.")
    w("Holdfast answers only once the hold is on disk (group commit: one SQLite transaction per"
      " batch; one thread writes the batches while two others fdatasync the log, and an answer"
      " waits for a sync that started after its batch's commit).")
    w("")
    w("| system | durability | holds/s | p50 ms | p99 ms | p99.9 ms | Holdfast / this |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    hf = point("holdfast", "hold-random", headline)
    for (system, variant, p), label, durability in SERIES:
        s = point(system, variant, headline, p)
        ratio = "-" if (system, variant) == ("holdfast", "hold-random") else fmt_ratio(hf["throughput"], s["throughput"])
        w("| %s | %s | %s | %s | %s | %s | %s |" % (label, durability, fmt_rate(s["throughput"]),
          fmt_ms(s["p50_ms"]), fmt_ms(s["p99_ms"]), fmt_ms(s["p999_ms"]), ratio))
    w("")
    w("Other points of the same run at %d connections:" % headline)
    w("")
    w("| what | requests/s | p50 ms | p99 ms | p99.9 ms | note |")
    w("| --- | ---: | ---: | ---: | ---: | --- |")
    extra = [
        (("holdfast", "hold-random", headline, 16), "Holdfast hold-random, pipeline depth 16", ""),
        (("holdfast", "hold-hot", headline, 1), "Holdfast hold-hot (10 seats; a winner releases at once)", "hot"),
        (("wrk", "noop", headline, 1), "Holdfast noop through wrk (-t1)", "cross-check of the client"),
        (("loadgen-redis-none", "set-nx-ex1", headline, 1),
         "Redis SET NX EX 1, no persistence, through loadgen", "same client"),
        (("loadgen-redis-always", "set-nx-ex1", headline, 1),
         "Redis SET NX EX 1, appendfsync always, through loadgen", "same client"),
        (("redis-none", "set-nx-ex600", headline, 1), "Redis SET NX EX 600, no persistence", "issue's wording"),
        (("redis-always", "set-nx-ex600", headline, 1), "Redis SET NX EX 600, appendfsync always", "issue's wording"),
        (("pg", "update-noexpiry", headline, 1), "PostgreSQL UPDATE ... WHERE status='available'", "issue's wording"),
        (("pg", "insert-noexpiry", headline, 1), "PostgreSQL INSERT ... ON CONFLICT DO NOTHING", "issue's wording"),
    ]
    for key, label, note in extra:
        s = summary(runs.get(key, []))
        if not s["good"]:
            continue
        if note == "hot":
            won = median_of(runs[key], "holds_won")
            lost = median_of(runs[key], "holds_lost")
            note = "holds won %s, lost %s per run" % (fmt_rate(won), fmt_rate(lost))
        elif note == "same client":
            note = ("the client Holdfast is measured with; Holdfast / this: %s"
                    % fmt_ratio(hf["throughput"], s["throughput"]))
        elif note == "issue's wording":
            note = "no expiry: the 60,000 seats fill up, then every request is a no-op conflict"
        w("| %s | %s | %s | %s | %s | %s |" % (label, fmt_rate(s["throughput"]), fmt_ms(s["p50_ms"]),
          fmt_ms(s["p99_ms"]), fmt_ms(s["p999_ms"]), note))
    w("")

    # ---- targets ----
    w("## Targets of issue 3")
    w("")
    w("Goals, not assertions: nothing fails when one is missed. *Measured* divides the medians;"
      " *each repetition* gives the lowest and the highest ratio within one repetition, where"
      " Holdfast and the peer ran one right after the other.")
    w("")
    neither = point("holdfast", "ceiling-neither", headline)["throughput"]
    if neither is not None:
        w("*Without durability* is the same ratio for the ceiling build with neither SQL nor"
          " fdatasync (below): what the server reaches on this machine with no durable step at"
          " all. A target it misses, this server cannot meet with any durable step; one it barely"
          " meets leaves the durable step no room.")
        w("")
    w("| target | measured | each repetition | met | without durability |")
    w("| --- | --- | --- | :---: | --- |")

    def target(label, value, goal, shown, spread="-", ceiling="-"):
        met = "-" if value is None else ("yes" if value >= goal else "**no**")
        w("| %s | %s | %s | %s | %s |" % (label, shown, spread, met, ceiling))

    def ratio_of(a, b):
        return None if a is None or not b else a / b

    hf_runs = runs.get(("holdfast", "hold-random", headline, 1), [])

    def spread_of(peer_keys, percent=False):
        """The lowest and highest per-repetition ratio against the best peer of each
        repetition (for PostgreSQL, the faster form of that repetition)."""
        best = {}
        for key in peer_keys:
            for r in runs.get(key, []):
                if r and r.get("throughput"):
                    best[r["rep"]] = max(best.get(r["rep"], 0), r["throughput"])
        values = ratios_by_rep(hf_runs, [{"rep": k, "throughput": v} for k, v in best.items()])
        if not values:
            return "-"
        if percent:
            return "%.0f%%-%.0f%%" % (100 * values[0], 100 * values[-1])
        return "%.2fx-%.2fx" % (values[0], values[-1])

    r_none = ratio_of(hf["throughput"], point("redis-none", "set-nx-ex1", headline)["throughput"])
    r_always = ratio_of(hf["throughput"], point("redis-always", "set-nx-ex1", headline)["throughput"])
    pg_best = max([t for t in (point("pg", "update", headline)["throughput"],
                               point("pg", "insert", headline)["throughput"]) if t] or [0]) or None
    r_pg = ratio_of(hf["throughput"], pg_best)
    noop = point("holdfast", "noop", headline)
    r_noop = ratio_of(hf["throughput"], noop["throughput"])
    redis_none = point("redis-none", "set-nx-ex1", headline)["throughput"]
    redis_always = point("redis-always", "set-nx-ex1", headline)["throughput"]
    target("hold-random >= 1.0x Redis without persistence (%d connections)" % headline, r_none, 1.0,
           "-" if r_none is None else "%.2fx" % r_none,
           spread_of([("redis-none", "set-nx-ex1", headline, 1)]), fmt_ratio(neither, redis_none))
    target("hold-random >= 1.5x Redis appendfsync always", r_always, 1.5,
           "-" if r_always is None else "%.2fx" % r_always,
           spread_of([("redis-always", "set-nx-ex1", headline, 1)]), fmt_ratio(neither, redis_always))
    target("hold-random >= 10x PostgreSQL (the faster of the two SQL forms)", r_pg, 10.0,
           "-" if r_pg is None else "%.1fx" % r_pg,
           spread_of([("pg", "update", headline, 1), ("pg", "insert", headline, 1)]),
           fmt_ratio(neither, pg_best))
    neither_noop = ceiling_ratio(runs, "ceiling-neither", "ceiling-noop", headline)
    target("hold-random >= 70% of noop", r_noop, 0.7, "-" if r_noop is None else "%.0f%%" % (100 * r_noop),
           spread_of([("holdfast", "noop", headline, 1)], percent=True),
           "-" if neither_noop is None else "%.0f%%" % (100 * neither_noop))
    core_rate = core.get("hold_release_per_s") if core else None
    target("core >= 5,000,000 hold+release/s on one core", core_rate, 5e6,
           "-" if core_rate is None else "{:,.0f}/s".format(core_rate))
    flash = runs.get(("holdfast", "flash-sale", headline, 1), [])
    flash_ok = bool(flash) and all(r and r.get("ok") and r.get("sold_out") and r.get("double_sales") == 0
                                   and r.get("lost_orders") == 0 and r.get("errors") == 0 for r in flash)
    w("| flash-sale: sold out, zero errors, zero double sales, zero lost orders | %s | - | %s |"
      % ("%d of %d runs clean" % (sum(1 for r in flash if r and r.get("ok")), len(flash)) if flash else "-",
         "-" if not flash else ("yes" if flash_ok else "**no**")))
    r_webhook = webhook_ratio(runs, headline)
    target("webhook: committed webhooks/s >= 80%% of hold-random's holds/s (%d connections)" % headline,
           r_webhook, 0.8, "-" if r_webhook is None else "%.0f%%" % (100 * r_webhook))
    r_exchange = exchange_ratio(runs, headline)
    target("exchange: exchanges committed/s >= 50%% of hold-random's holds/s (%d connections)" % headline,
           r_exchange, 0.5, "-" if r_exchange is None else "%.0f%%" % (100 * r_exchange))
    rooms_targets(target, runs, headline, core)
    cluster_targets(target, load_cluster(os.path.join(results, "raw", "cluster"))[1])
    fair_demand_targets(target, os.path.join(results, "raw"))
    w("")
    w("Why the missed targets are missed, what bounds each one on this machine (measured with "
      "the store or the disk taken out), and what reaching them would take: "
      "[PERFORMANCE.md](PERFORMANCE.md).")
    w("")

    # ---- ceiling ----
    clock_ticks = int(meta.get("clock_ticks", "100"))
    thread_cpu = load_thread_cpu(os.path.join(results, "raw"), clock_ticks)
    ceiling_section(w, runs, thread_cpu, headline, {
        "Redis none": redis_none, "Redis always": redis_always, "PostgreSQL": pg_best})

    # ---- sweep ----
    w("## Throughput against connections")
    w("")
    w("Requests per second (medians); in brackets the p99 latency in ms.")
    w("")
    labels = ["%s%s" % (label, "" if durability in ("nothing written",) else " (%s)" % durability.split(",")[0])
              for _, label, durability in SERIES]
    w("| connections | " + " | ".join(labels) + " |")
    w("| ---: | " + " | ".join("---:" for _ in SERIES) + " |")
    for c in connections:
        cells = []
        for (system, variant, p), _, _ in SERIES:
            s = point(system, variant, c, p)
            cells.append("-" if s["throughput"] is None else "%s (%s)" % (fmt_rate(s["throughput"]), fmt_ms(s["p99_ms"])))
        w("| %d | %s |" % (c, " | ".join(cells)))
    w("")
    w("Holdfast hold-random divided by each peer:")
    w("")
    w("| connections | / Redis none | / Redis always | / PostgreSQL UPDATE | / PostgreSQL INSERT | / Holdfast noop |")
    w("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in connections:
        h = point("holdfast", "hold-random", c)["throughput"]
        w("| %d | %s | %s | %s | %s | %s |" % (c,
          fmt_ratio(h, point("redis-none", "set-nx-ex1", c)["throughput"]),
          fmt_ratio(h, point("redis-always", "set-nx-ex1", c)["throughput"]),
          fmt_ratio(h, point("pg", "update", c)["throughput"]),
          fmt_ratio(h, point("pg", "insert", c)["throughput"]),
          fmt_ratio(h, point("holdfast", "noop", c)["throughput"])))
    w("")

    # ---- chart ----
    chart_text = make_chart(SERIES, connections, point, svg_path, markdown_path) if svg_path else None
    if chart_text is not None:
        w("![throughput against connections](%s)" % os.path.relpath(svg_path, os.path.dirname(markdown_path) or "."))
        w("")
        w("The same chart as text (log-log):")
        w("")
        w("```")
        out.extend(chart_text.rstrip("\n").splitlines())
        w("```")
        w("")

    # ---- CPU per answer ----
    if thread_cpu:
        w("## Server CPU per answer")
        w("")
        w("Microseconds of CPU (user and system) each server thread spent per answer over a whole"
          " hold-random run, warm-up included (from /proc/PID/task/*/stat before and after; medians"
          " of the repetitions). On a machine shared with the client, this moves far less from run"
          " to run than requests per second do, so it shows a change to the server where the"
          " throughput is noise. Resolution: one clock tick (%s ms) per thread and run."
          % (1000 // clock_ticks))
        w("")
        roles = [role for _, role in THREAD_ROLES]
        w("| connections | " + " | ".join(roles) + " | all | noop, all |")
        w("| ---: | " + " | ".join("---:" for _ in roles) + " | ---: | ---: |")
        for c in connections:
            reps = thread_cpu.get(("hold-random", c, 1), [])
            if not reps:
                continue
            noop = median_role(thread_cpu.get(("noop", c, 1), []), "all")
            cells = ["%.1f" % median_role(reps, role) for role in roles + ["all"]]
            w("| %d | %s | %s |" % (c, " | ".join(cells), "-" if noop is None else "%.1f" % noop))
        w("")

    # ---- flash sale ----
    w("## Flash sale")
    w("")
    w("2,000,000 buyers (at most) for 60,000 seats over %d connections: each buyer holds 1-4 seats" % headline)
    w("picked among those not yet seen sold (what a seat map shows, held seats included, so buyers")
    w("collide), 80% commit at once, 20% abandon and their hold lapses after 1 s. The run ends when")
    w("every seat is sold; then the client reads every seat page and every acknowledged order")
    w("back through the API.")
    w("")
    if flash:
        w("| run | sold out in s | buyers served | buyers/s | holds won / lost | orders | seats verified sold | double sales | lost orders | errors | hold p99 ms | commit p99 ms |")
        w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for i, r in enumerate(flash, 1):
            if not r:
                w("| %d | failed | | | | | | | | | | |" % i)
                continue
            w("| %d | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s |" % (
                i, "%.2f" % r["sell_out_s"] if r.get("sold_out") else "**not sold out**",
                fmt_rate(r.get("buyers_served")), fmt_rate(r.get("buyers_per_s")),
                fmt_rate(r.get("holds_won")), fmt_rate(r.get("holds_lost")), fmt_rate(r.get("orders")),
                fmt_rate(r.get("verified_sold")), r.get("double_sales"), r.get("lost_orders"),
                r.get("errors"), fmt_ms(r.get("hold_p99_ms")), fmt_ms(r.get("commit_p99_ms"))))
        w("")
    else:
        w("Not run.")
        w("")

    webhook_section(w, runs, thread_cpu, headline)
    exchange_section(w, runs, thread_cpu, headline)
    credentials_section(w, runs, thread_cpu, headline)
    queue_section(w, runs, thread_cpu, headline)
    dispatch_section(w, runs, thread_cpu, headline)
    calendar_section(w, runs, thread_cpu, headline, os.path.join(results, "raw"))
    pgstore_section(w, runs, thread_cpu, headline)
    cluster_section(w, *load_cluster(os.path.join(results, "raw", "cluster")), meta)
    notify_section(w, runs, thread_cpu, headline, os.path.join(results, "raw"))
    by_part = read_commands_by_part(results)
    raw = os.path.join(results, "raw")
    job_section(w, raw, by_part.get("job"))
    prequeue_http_section(w, raw, by_part.get("prequeue"))
    allocations_section(w, raw, by_part.get("allocations"))
    waitlist_section(w, raw, by_part.get("waitlist"))

    # ---- core ----
    w("## The core alone")
    w("")
    if core:
        w("bench/corebench drives src/core through its public API on one thread, no network and no"
          " store (the mutation sink only counts records): %s operations per repetition, median of %s."
          % ("{:,}".format(core["ops"]), core["reps"]))
        w("")
        w("| operation | per second |")
        w("| --- | ---: |")
        w("| hold + release (random seat of 60,000, random user of 1,000,000) | %s |" % fmt_rate(core["hold_release_per_s"]))
        w("| hold + commit (each seat of a %s-seat event sold once) | %s |" % ("{:,}".format(core["ops"]), fmt_rate(core["hold_commit_per_s"])))
        w("")
        if "best_available_us" in core:
            w("best_available on a nearly sold-out 100,000-seat event (100 rows of 1,000; one seat in 50"
              " left in every row, one adjacent pair left in the last row; a pick of 2 must find that"
              " pair): the first pick reads every row and took %.0f µs; the following picks, which"
              " skip rows by their available count and free-run bound, took %.1f µs each (mean of"
              " 9,999)." % (core["best_available_first_us"], core["best_available_us"]))
            w("")
        if core.get("dispatch_search_us"):
            w("Dispatch's candidate search (`hf_dispatch_candidate`: the grid's ring search, issue"
              " 21) among 100,000 drivers of one fleet spread over a 30 km square around Times"
              " Square, for rides of the default 3 km radius at random points of it: %.2f µs per"
              " search with every driver free (goal: under 10 µs), %.2f µs with nine in ten busy"
              " (off the grid, so the ring search goes further)." % (
                  core["dispatch_search_us"], core.get("dispatch_search_busy_us", 0)))
            w("")
        if prequeue:
            prequeue_paragraph(w, prequeue)
    else:
        w("Not run.")
        w("")

    # ---- callgrind ----
    w("## Where the instructions go (callgrind)")
    w("")
    if profile:
        per = profile["per_answer"]
        w("Timings on this machine move by 10-20%% from run to run; instruction counts do not. "
          "bench/profile.sh runs the server under `valgrind --tool=callgrind --separate-threads=yes`, "
          "warms it up, then counts %s seconds of hold-random at %d connections (%s answers: %s). "
          "Only user-space instructions are counted: the system calls (socket reads and writes, "
          "fdatasync) are not, and they are most of the syncer threads', much of the writer's and half of the loop "
          "thread's time (perf)." % (profile.get("seconds"), profile.get("connections", 10),
                                      "{:,}".format(profile["answers"]),
                                      ", ".join("%s %s" % (k, "{:,}".format(v)) for k, v in
                                                sorted(profile.get("statuses", {}).items()))))
        w("")
        w("| thread | instructions per answer |")
        w("| --- | ---: |")
        names = {"loop": "loop (HTTP, JSON, core, answers)", "store": "hf-store (SQLite writes into the log)",
                 "syncer": "hf-sync (fdatasync of the log)", "checkpoint": "hf-checkpoint"}
        for role in ("loop", "store", "syncer", "checkpoint", "other"):
            if role in per:
                w("| %s | %s |" % (names.get(role, role), "{:,}".format(per[role])))
        w("")
        if profile.get("loop_top"):
            w("The loop thread's own instructions per answer, by function (a library without symbols "
              "is counted as one):")
            w("")
            w("| function | per answer |")
            w("| --- | ---: |")
            for entry in profile["loop_top"]:
                w("| `%s` | %s |" % (entry["function"], "{:,}".format(entry["per_answer"])))
            w("")
    else:
        w("Not run.")
        w("")

    # ---- machine and commands ----
    w("## Machine and versions")
    w("")
    for key, label in (("cpu", "CPU"), ("cores", "cores"), ("memory", "memory"), ("os", "OS"),
                       ("kernel", "kernel"), ("disk", "disk (data directories)"),
                       ("fsync_ms", "one 4 KiB write + fsync, median ms"),
                       ("holdfast", "Holdfast commit"), ("compiler", "compiler"), ("libuv", "libuv"),
                       ("sqlite", "SQLite"), ("redis", "Redis"), ("postgres", "PostgreSQL"),
                       ("wrk", "wrk"), ("load_start", "load average at start"),
                       ("load_end", "load average at end")):
        if key in meta:
            w("- %s: %s" % (label, meta[key]))
    w("")
    w("The machine was shared with other work during the run (see the load averages): absolute"
      " numbers move from run to run; the ratios, measured minutes apart on the same machine,"
      " are the figures to read.")
    w("")
    w("## Commands")
    w("")
    w("Every server was started by bench/run.sh on 127.0.0.1 with a fresh data directory under"
      " /var/tmp (Holdfast: a fresh server per hold-random point, per flash-sale run, per run"
      " of the ceiling part, whose tmpfs variant keeps its data under /dev/shm, and per run of"
      " the webhook part; the queue and dispatch parts as their sections say).")
    w("PostgreSQL's schema and scripts are in bench/pg/.")
    w("")
    w("`C` is each connection count of the sweep (%s), `REP` the repetition (1 to %s);"
      " redis-benchmark's `N` is the rate of a short probe run times %s s."
      % (", ".join(str(c) for c in connections), meta.get("reps", "?"), meta.get("seconds", "?")))
    w("")
    w("```")
    out.extend(collapse_commands(commands, connections))
    w("```")
    w("")
    w("## How to read these numbers")
    w("")
    w("- Clients are closed-loop: each connection sends its next request when the previous answer"
      " arrives (loadgen, redis-benchmark and pgbench alike), so throughput and latency are those"
      " of a saturated server at that many connections.")
    w("- The client shares the machine's cores with the server, as the peers' own clients do.")
    w("- Every system is measured warm over the same window: loadgen counts %s s after its"
      " connections are up and 0.5 s of warm-up. pgbench's `-T` also counts the time its clients"
      " take to connect (2.3 s for 200 PostgreSQL backends on this machine), so it runs longer"
      " (`-T` above) and the figures here count, from its per-transaction log, only the"
      " transactions that end in the %s s that start 0.5 s after its last client began."
      " redis-benchmark connects in milliseconds and has no warm-up." % (meta.get("seconds", "?"),
                                                                          meta.get("seconds", "?")))
    w("- Holds lapse after 1 s for every system (Redis `EX 1`, PostgreSQL's `expires_at` test),"
      " so every system keeps doing the same work: issue 3's wording (`EX 600`, `status='available'`,"
      " `DO NOTHING`) fills the 60,000 seats in a second or two, after which every request is a"
      " conflict that writes nothing (Redis does not log a SET NX that fails; PostgreSQL does not"
      " flush WAL for an UPDATE of no row). Those forms are measured too, in the second table.")
    w("- Redis's figures in the first tables come from redis-benchmark, as issue 3 words it."
      " redis-benchmark spends about twice loadgen's CPU per request (25.6 against 11.8 us in"
      " docs/PERFORMANCE.md, session 9) and fills one core at 50 connections, so on two shared"
      " cores it bounds Redis's figure. The rows *through loadgen* send the same SET NX EX with"
      " the client Holdfast is measured with: that is the like-for-like comparison.")
    w("- redis-benchmark reports p99.9 only as a step of its distribution: the figure is the first"
      " step at or above 99.9%, an upper bound.")
    w("")
    return out


# ---- a run of some parts only: their sections merged into the existing file ----

# Every part of bench/run.sh, and the sections of BENCHMARKS.md each one writes by itself. The
# parts left out (holdfast, redis, postgres) write the headline, targets, sweep, chart and CPU
# tables together: a run that has any of them renders the whole file.
ALL_PARTS = ["holdfast", "redis", "postgres", "core", "flash", "profile", "ceiling", "webhook",
             "exchange", "credentials", "queue", "dispatch", "pgstore", "cluster", "notify", "calendar",
             "job", "prequeue", "allocations", "waitlist"]
PART_SECTIONS = {
    "core": "## The core alone",
    "flash": "## Flash sale",
    "profile": "## Where the instructions go (callgrind)",
    "ceiling": "## The ceiling: the same server without its durable step",
    "webhook": "## Payment webhooks",
    "exchange": "## Exchanges",
    "credentials": "## User tokens against the API key",
    "queue": "## Waiting room",
    "dispatch": "## Dispatch",
    "pgstore": "## One node on PostgreSQL beside one node on SQLite",
    "cluster": "## Several nodes on PostgreSQL",
    "notify": "## Outbound notifications",
    "calendar": "## Calendars",
    "job": "## A cancel job onto another event",
    "prequeue": "## The pre-queue's opening over HTTP",
    "allocations": "## Public holds beside allocations",
    "waitlist": "## A waitlist when holds lapse together",
}


def merge_parts(meta):
    """The parts whose sections alone a run rewrites, or None when it renders the whole file:
    meta's `parts` (bench/run.sh's BENCH_ONLY) is not every part, and each of them has
    sections of its own."""
    parts = meta.get("parts", "").split()
    if not parts or set(ALL_PARTS) <= set(parts) or not all(p in PART_SECTIONS for p in parts):
        return None
    return parts


def split_sections(lines):
    """[(heading or None, [lines])]: the text before the first "## " heading, then one entry
    per heading (a "## " inside a code block is not a heading)."""
    sections, fenced = [(None, [])], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line, []))
        sections[-1][1].append(line)
    return sections


def general_commands(commands):
    """The commands of one part with what changes from run to run named instead (the seed
    REP, the temporary directory, a throwaway PostgreSQL's port), each shape once."""
    shown = []
    for command in commands or []:
        command = re.sub(r"--seed \d+", "--seed REP", command)
        command = re.sub(r"(holdfast-bench\.)\w{6}", r"\1XXXXXX", command)
        command = re.sub(r"(postgres://[^@/\s]+@127\.0\.0\.1:)\d+", r"\1PORT", command)
        if command not in shown:
            shown.append(command)
    return shown


def partial_note(meta, part, commands, shown=False):
    """Where a merged section comes from: a run of some parts only, not the run the rest of the
    file comes from, with its part's commands (unless the section shows them: shown) and a word
    on the machine's load."""
    cores = float(meta.get("cores", "0") or 0)
    loads = [float(v) for key in ("load_start", "load_end") for v in meta.get(key, "").split()[:1]]
    busy = cores and any(load > 0.5 * cores for load in loads)
    lines = ["*This section comes from a run of `BENCH_ONLY=\"%s\" bench/run.sh` alone on %s at"
             " %s (%s repetitions of %s s; load average %s at the start, %s at the end, on %s"
             " cores), not from the run the rest of this file comes from.%s Its commands:*" % (
                 meta.get("parts", "?"), meta.get("date", "?"), meta.get("holdfast", "?"),
                 meta.get("reps", "?"), meta.get("seconds", "?"),
                 meta.get("load_start", "?").split(" ")[0], meta.get("load_end", "?").split(" ")[0],
                 meta.get("cores", "?"),
                 " The machine was shared with other work during this run (builds and tests run"
                 " beside it; see the load averages): absolute figures are lower and noisier than"
                 " on a quiet machine; the ratios within a repetition hold better." if busy else ""),
             ""]
    if shown:
        lines[0] = lines[0].replace(" Its commands:*", " Its commands are above.*")
        return lines
    lines.append("```")
    lines.extend(general_commands(commands) or ["(not recorded)"])
    lines.append("```")
    lines.append("")
    return lines


def merge(existing_lines, rendered_lines, parts, meta, commands_by_part):
    """existing_lines with the sections of PARTS replaced by those of rendered_lines (each
    followed by partial_note); a section the file lacks goes after the nearest section that
    precedes it in a full rendering, or before "## Machine and versions"."""
    old = split_sections(existing_lines)
    new = split_sections(rendered_lines)
    new_order = [heading for heading, _ in new]
    for part in parts:
        heading = PART_SECTIONS[part]
        body = next((lines for h, lines in new if h == heading), None)
        if body is None:
            continue
        while body and body[-1] == "":
            body = body[:-1]
        shown = any(line.startswith(PART_COMMAND) for line in body)
        body = body + [""] + partial_note(meta, part, commands_by_part.get(part), shown)
        headings = [h for h, _ in old]
        if heading in headings:
            old[headings.index(heading)] = (heading, body)
            continue
        at = None
        for before in reversed(new_order[:new_order.index(heading)]):
            if before in headings:
                at = headings.index(before) + 1
                break
        if at is None:
            at = headings.index("## Machine and versions") if "## Machine and versions" in headings \
                else len(old)
        old.insert(at, (heading, body))
    return [line for _, lines in old for line in lines]


def read_commands_by_part(results):
    """{part: [command, ...]} from bench/run.sh's commands-by-part.txt (part TAB command)."""
    by_part = {}
    path = os.path.join(results, "commands-by-part.txt")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            part, _, command = line.rstrip("\n").partition("\t")
            if command:
                by_part.setdefault(part, []).append(command)
    return by_part


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    results, markdown_path, svg_path = sys.argv[1:]
    meta = read_meta(os.path.join(results, "meta.env"))
    parts = merge_parts(meta)
    if parts and os.path.exists(markdown_path):
        existing = open(markdown_path, encoding="utf-8").read().split("\n")
        out = merge(existing, render(results, markdown_path, None), parts, meta,
                    read_commands_by_part(results))
        print("report: parts %s only: their sections of %s rewritten, the rest and %s kept"
              % (" ".join(parts), markdown_path, svg_path), file=sys.stderr)
    else:
        out = render(results, markdown_path, svg_path)
    with open(markdown_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


def collapse_commands(commands, connections):
    """One line per command shape: seeds become REP; a command run at several connection
    counts shows C (and pgbench's -j, min(C,2))."""
    shapes, counts = [], {}
    for command in commands:
        command = re.sub(r"--seed \d+", "--seed REP", command)
        m = re.search(r"(?:^|\s)-c (\d+)\s", command)
        shape = command
        if m:
            shape = re.sub(r"((?:^|\s)-c )\d+(\s)", r"\1C\2", command, count=1)
            shape = re.sub(r" -j \d+", " -j min(C,2)", shape)
        if shape not in counts:
            shapes.append((shape, command))
            counts[shape] = set()
        if m:
            counts[shape].add(m.group(1))
    return [shape if len(counts[shape]) > 1 else command for shape, command in shapes]


def make_chart(series, connections, point, svg_path, markdown_path):
    if not shutil.which("gnuplot"):
        return None
    data_lines = []
    for index, ((system, variant, p), label, durability) in enumerate(series):
        data_lines.append("# %s" % label)
        for c in connections:
            t = point(system, variant, c, p)["throughput"]
            if t:
                data_lines.append("%d %f" % (c, t))
        data_lines.append("")
        data_lines.append("")
    data = "\n".join(data_lines)
    titles = []
    for (system, variant, p), label, durability in series:
        if system == "redis-none":
            titles.append("Redis (no persistence)")
        elif system == "redis-always":
            titles.append("Redis (appendfsync always)")
        elif variant == "hold-random":
            titles.append("Holdfast hold-random (durable)")
        elif variant == "noop":
            titles.append("Holdfast noop")
        elif variant == "update":
            titles.append("PostgreSQL UPDATE")
        else:
            titles.append("PostgreSQL INSERT ON CONFLICT")
    xtics = "(" + ", ".join('"%d" %d' % (c, c) for c in connections) + ")"
    plots = ", ".join("$data index %d using 1:2 with linespoints title '%s'" % (i, t) for i, t in enumerate(titles))

    def script(terminal, output):
        return "\n".join([
            "$data << EOD", data, "EOD",
            terminal,
            "set output '%s'" % output if output else "",
            "set logscale xy",
            "set xtics %s" % xtics,
            "set xlabel 'connections'",
            "set ylabel 'requests per second'",
            "set key outside right",
            "set grid",
            "plot " + plots,
        ]) + "\n"

    try:
        subprocess.run(["gnuplot"], input=script("set terminal svg size 900,500 dynamic", svg_path),
                       text=True, check=True, capture_output=True)
        text = subprocess.run(["gnuplot"], input=script("set terminal dumb size 110,32", None),
                              text=True, check=True, capture_output=True).stdout
    except (subprocess.CalledProcessError, OSError) as error:
        print("report: gnuplot failed: %s" % error, file=sys.stderr)
        return None
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


if __name__ == "__main__":
    main()
