#!/usr/bin/env python3
"""The waitlist's herd (API.md section 14, issue 31): a sold-out event (every seat sold or
held) with --entries waiting entries (quantity 1, distinct users), then --lapses single-seat
holds lapse at the same instant. Prints the time from that instant until every one of them is
`offered` (the server's /metrics, holdfast_waitlist{status="offered"}), and until a write sent
then is answered (so the offers' step is durable too: batches are made durable in order), and
hold-random's answers/s on another event (loadgen, beside it) in the second before the lapse
against the window of the offers, both counted from the server's
holdfast_http_requests_total of the holds route.

    python3 bench/waitlist.py --binary build/holdfast [--entries 100000] [--lapses 10000]
    python3 bench/waitlist.py --port 18400             # a server already running, fresh

The same instant: a hold's expires_at moves only later (extend), so the holds are made with a
ttl_s aimed at one instant T (ttl = T - now when each is sent), and while the entries join,
every hold is extended to a later common T whenever T comes close. What is left is the spread
of the server's `now` against the client's send time (printed); the lapse instant counted from
is the earliest expires_at, so that spread is inside the figure.

Settings beside the options: WAITLIST_ENTRIES, WAITLIST_LAPSES, WAITLIST_SOLD (the environment
gives the defaults of the options of the same name)."""

import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "hostile"))
import hflib  # noqa: E402
from pipelined import Pipe, pipelined  # noqa: E402  (bench/pipelined.py)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EVENT = "wl"
ROW_SEATS = 1000  # seats per row of the waitlist's event
HOLD_ITEMS_MAX = 1000  # src/lib/limits.h HF_HOLD_ITEMS_MAX: the sold seats' holds' size
# The holds are first aimed at HOLDS_AHEAD_S plus their count at HOLDS_RATE_FLOOR a second
# (the slowest a pipelined client has made them on a busy machine, with room to spare); later
# moves aim past the joins left at the rates seen times SLACK.
HOLDS_AHEAD_S = 3.0
HOLDS_RATE_FLOOR = 500.0
SLACK = 1.5
# Connections and requests in flight of the holds and their moves: few, so that each waits
# little in the server's queue and their expires_at land close to the instant aimed at.
ALIGNED = (2, 4)
POLL_BEFORE_MS = 10  # /metrics polled this often before the lapse (back to back after it)
LOAD_LEAD_S = 1.5  # hold-random starts this long before its reference window (connected, warm)
LOAD_AFTER_S = 3.0  # hold-random keeps running this long after the lapse
WAIT_OFFERED_S = 60.0  # the longest this waits for every offer before calling the run failed
REQUESTS = re.compile(r'^holdfast_http_requests_total\{(.*)\} (\S+)$', re.M)
LABEL = re.compile(r'(\w+)="([^"]*)"')
OFFERED = re.compile(r'^holdfast_waitlist\{status="offered"\} (\S+)$', re.M)


def expect(answers, statuses, what):
    bad = [a for a in answers if a[0] not in statuses]
    if bad:
        raise RuntimeError("waitlist: %d of %d %s answered otherwise, first %r" % (
            len(bad), len(answers), what, bad[0]))


def epoch_ms(iso):
    moment = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ")
    return int(moment.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)


def now_ms():
    return time.time() * 1000.0


def seat(index):
    return "S-R%d-%d" % (index // ROW_SEATS, index % ROW_SEATS + 1)


def make_event(port, seats):
    rows = [{"id": "R%d" % r, "seats": min(ROW_SEATS, seats - r * ROW_SEATS)}
            for r in range((seats + ROW_SEATS - 1) // ROW_SEATS)]
    status, answer = hflib.request(port, "POST", "/v1/events", {
        "id": EVENT, "hold_ttl_s": 600, "max_hold_s": 3600, "max_seats_per_hold": HOLD_ITEMS_MAX,
        "sections": [{"id": "S", "price": 100, "rows": rows}],
        "waitlist": {"enabled": True, "offer_ttl_s": 600}}, timeout=120)
    if status != 201:
        raise RuntimeError("waitlist: the event answered %s %r" % (status, answer))


def sell(port, first, count):
    """Seats first.. first+count-1 sold: holds of up to HOLD_ITEMS_MAX seats, committed."""
    for start in range(first, first + count, HOLD_ITEMS_MAX):
        seats = [seat(i) for i in range(start, min(start + HOLD_ITEMS_MAX, first + count))]
        user = "s%d" % start
        status, hold = hflib.request(port, "POST", "/v1/events/%s/holds" % EVENT,
                                     {"user_id": user, "seats": seats}, timeout=120)
        if status != 201:
            raise RuntimeError("waitlist: selling answered %s %r" % (status, hold))
        status, order = hflib.request(port, "POST", "/v1/holds/%s/commit" % hold["reservation_id"],
                                      {"user_id": user, "payment_ref": "pi_%d" % start}, timeout=120)
        if status != 200:
            raise RuntimeError("waitlist: a commit answered %s %r" % (status, order))


def ttl_to(instant_ms):
    return round(max(instant_ms - now_ms(), 1.0) / 1000.0, 3)


def hold_all(port, lapses, instant_ms):
    """The single-seat holds, all aimed at instant_ms: their ids and expires_at (epoch ms)."""
    answers = pipelined(port, lambda i: ("POST", "/v1/events/%s/holds" % EVENT, {
        "user_id": "h%d" % i, "seats": [seat(i)], "ttl_s": ttl_to(instant_ms)}), lapses, *ALIGNED)
    expect(answers, (201,), "holds")
    return [a[1]["reservation_id"] for a in answers], [epoch_ms(a[1]["expires_at"]) for a in answers]


def extend_all(port, holds, instant_ms):
    answers = pipelined(port, lambda i: ("POST", "/v1/holds/%s/extend" % holds[i], {
        "user_id": "h%d" % i, "ttl_s": ttl_to(instant_ms)}), len(holds), *ALIGNED)
    expect(answers, (200,), "extensions")
    return [epoch_ms(a[1]["expires_at"]) for a in answers]


def join_all(port, entries, holds, expiry, hold_rate):
    """The entries join in chunks; before each, the holds are moved on when their common
    expiry would come before the next chunk is in (at the rates seen so far, with room to
    spare), to an instant just past the joins left. Returns the holds' expires_at after the
    last move and the users by the position each joined at (the connections interleave, so
    that is not user order)."""
    chunk, by_position, joined_s = 5000, {}, 0.0
    extend_s = len(holds) / hold_rate * SLACK
    for start in range(0, entries, chunk):
        join_rate = start / joined_s if joined_s > 0 else hold_rate
        count = min(chunk, entries - start)
        if min(expiry) - now_ms() < (count / join_rate * SLACK + extend_s + 1.0) * 1000:
            left_s = (entries - start) / join_rate * SLACK
            expiry = extend_all(port, holds, max(max(expiry), now_ms()) + (extend_s + left_s + 2.0) * 1000)
        began = time.monotonic()
        answers = pipelined(port, lambda i: ("POST", "/v1/events/%s/waitlist" % EVENT, {
            "user_id": "w%d" % (start + i), "quantity": 1}), count, connections=4, depth=32)
        joined_s += time.monotonic() - began
        expect(answers, (201,), "joins")
        for i, (_, entry) in enumerate(answers):
            if entry.get("status") != "waiting":
                raise RuntimeError("waitlist: an entry joined as %r" % (entry,))
            by_position[entry["position"]] = "w%d" % (start + i)
    if sorted(by_position) != list(range(1, entries + 1)):
        raise RuntimeError("waitlist: the joins' positions are not 1 to %d" % entries)
    if min(expiry) <= now_ms() + 500:
        raise RuntimeError("waitlist: the holds lapse before the measure can start (a slow machine?)")
    return expiry, by_position


def sample(pipe):
    """(client time ms of the answer, offered entries, POST /v1/events/{event}/holds answered
    so far)."""
    _, text = pipe.send([("GET", "/metrics", None)])[0]
    at = now_ms()
    text = text.decode() if isinstance(text, bytes) else str(text)
    offered = OFFERED.search(text)
    holds = sum(float(value) for labels, value in REQUESTS.findall(text)
                if dict(LABEL.findall(labels)).get("route") == "/v1/events/{event}/holds"
                and dict(LABEL.findall(labels)).get("method") == "POST")
    return at, int(float(offered.group(1))) if offered else 0, holds


def rate(first, last):
    """hold-random's answers/s between two samples, or None when they coincide."""
    seconds = (last[0] - first[0]) / 1000.0
    return (last[2] - first[2]) / seconds if seconds > 0 else None


def poll_through(pipe, first, lapses, before_s):
    """/metrics every POLL_BEFORE_MS from before_s before the lapse, back to back from it until
    every offer is counted, then one write: (the samples, when the write was answered)."""
    samples = []
    while now_ms() < first - before_s * 1000:
        time.sleep(0.005)
    while now_ms() < first:
        samples.append(sample(pipe))
        time.sleep(POLL_BEFORE_MS / 1000.0)
    deadline = first + WAIT_OFFERED_S * 1000
    samples.append(sample(pipe))
    while samples[-1][1] < lapses and now_ms() < deadline:
        samples.append(sample(pipe))
    if samples[-1][1] < lapses:
        raise RuntimeError("waitlist: %d of %d offered after %.0f s" % (samples[-1][1], lapses, WAIT_OFFERED_S))
    status, _ = pipe.send([("POST", "/v1/events/%s/waitlist" % EVENT, {"user_id": "probe", "quantity": 1})])[0]
    if status != 201:
        raise RuntimeError("waitlist: the write after the offers answered %s" % status)
    return samples, now_ms()


def measure(port, lapses, expiry, loadgen, hold_connections, before_s):
    """The lapse with hold-random running on event `bench` from LOAD_LEAD_S before the
    reference window: the figures as a dict. The window of the offers runs from the last
    /metrics answer before the lapse to the first that counts every offer."""
    first, last = min(expiry), max(expiry)
    while now_ms() < first - (before_s + LOAD_LEAD_S) * 1000:
        time.sleep(0.05)
    generator = subprocess.Popen([loadgen, "--port", str(port), "--workload", "hold-random", "--no-create",
                                  "-c", str(hold_connections), "-d", "%.1f" % (before_s + LOAD_LEAD_S + LOAD_AFTER_S),
                                  "--warmup", "0", "--ttl", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    pipe = Pipe(port)
    try:
        samples, durable_ms = poll_through(pipe, first, lapses, before_s)
    finally:
        pipe.close()
        output = generator.communicate()[0].decode(errors="replace")
    before = [s for s in samples if s[0] < first]
    if len(before) < 2:
        raise RuntimeError("waitlist: no /metrics answered before the lapse")
    offered, seen = samples[-1], samples[-2]
    return {"offered_ms": offered[0] - first, "seen_before_ms": seen[0] - first,
            "durable_ms": durable_ms - first, "spread_ms": last - first,
            "polls": len(samples) - len(before), "rate_before": rate(before[0], before[-1]),
            "rate_during": rate(before[-1], offered),
            "loadgen": next((line.strip() for line in output.splitlines() if "requests/s" in line), ""),
            "loadgen_ended_early": durable_ms > first + LOAD_AFTER_S * 1000}


def check_offers(port, lapses, by_position):
    """The oldest offered entries are the first by position, and the first entry still
    waiting is the one that joined right after the last offered one."""
    _, page = hflib.request(port, "GET", "/v1/events/%s/waitlist?status=offered&limit=100" % EVENT)
    users = [entry.get("user_id") for entry in page.get("entries", [])]
    wanted = [by_position[p] for p in range(1, min(lapses, 100) + 1)]
    if users != wanted:
        raise RuntimeError("waitlist: the offered entries %r are not the first ones %r" % (users[:3], wanted[:3]))
    if len(by_position) > lapses:
        _, page = hflib.request(port, "GET", "/v1/events/%s/waitlist?status=waiting&limit=1" % EVENT)
        first = page["entries"][0]["user_id"] if page.get("entries") else None
        if first != by_position[lapses + 1]:
            raise RuntimeError("waitlist: the first entry still waiting is %r, not %s" % (
                first, by_position[lapses + 1]))


def run(port, arguments):
    seats = arguments.lapses + arguments.sold
    started = time.monotonic()
    make_event(port, seats)
    subprocess.run([arguments.loadgen, "--port", str(port), "--workload", "hold-random", "-c", "1",
                    "-d", "0.2", "--warmup", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    sell(port, arguments.lapses, arguments.sold)
    began = time.monotonic()
    holds, expiry = hold_all(port, arguments.lapses,
                             now_ms() + (HOLDS_AHEAD_S + arguments.lapses / HOLDS_RATE_FLOOR) * 1000)
    hold_rate = arguments.lapses / max(time.monotonic() - began, 1e-3)
    if min(expiry) <= now_ms() + 1000:
        raise RuntimeError("waitlist: the holds were made slower than %.0f/s" % HOLDS_RATE_FLOOR)
    expiry, by_position = join_all(port, arguments.entries, holds, expiry, hold_rate)
    print("# %d seats (%d sold, %d held), %d entries joined in %.1f s" % (
        seats, arguments.sold, arguments.lapses, arguments.entries, time.monotonic() - started), flush=True)
    figures = measure(port, arguments.lapses, expiry, arguments.loadgen, arguments.hold_connections,
                      arguments.before_s)
    check_offers(port, arguments.lapses, by_position)
    print("waitlist: %d entries, %d holds lapsed at once (expires_at spread %d ms), all %d offered"
          " in %.0f ms (durable by %.0f ms; %d polls after the lapse, the one before at %.0f ms)" % (
              arguments.entries, arguments.lapses, figures["spread_ms"], arguments.lapses,
              figures["offered_ms"], figures["durable_ms"], figures["polls"], figures["seen_before_ms"]))
    before, during = figures["rate_before"], figures["rate_during"]
    print("hold-random on another event: before the lapse %s answers/s, during the offers %s answers/s"
          " (%s)%s" % ("-" if before is None else "%.0f" % before, "-" if during is None else "%.0f" % during,
                       "-" if not before or during is None else "%.0f%%" % (100 * during / before),
                       "; hold-random ended before the last offer" if figures["loadgen_ended_early"] else ""))
    print("# loadgen beside it: %s" % figures["loadgen"])


def environment_int(name, default):
    return int(os.environ.get(name, default))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", help="start this server (a fresh data directory under --data-parent)")
    parser.add_argument("--port", type=int, help="or use the server already listening here")
    parser.add_argument("--data-parent", default="/var/tmp")
    parser.add_argument("--loadgen", default=os.path.join(ROOT, "build/bench/loadgen"))
    parser.add_argument("--entries", type=int, default=environment_int("WAITLIST_ENTRIES", 100000))
    parser.add_argument("--lapses", type=int, default=environment_int("WAITLIST_LAPSES", 10000))
    parser.add_argument("--sold", type=int, default=environment_int("WAITLIST_SOLD", 10000))
    parser.add_argument("--hold-connections", type=int, default=25)
    parser.add_argument("--before-s", type=float, default=1.0,
                        help="hold-random's reference window before the lapse")
    arguments = parser.parse_args()
    if (arguments.binary is None) == (arguments.port is None):
        parser.error("give --binary or --port")
    if arguments.lapses < 1 or arguments.entries < arguments.lapses or arguments.sold < 0:
        parser.error("want 1 <= --lapses <= --entries and --sold >= 0")
    if arguments.port is not None:
        run(arguments.port, arguments)
        return
    server = hflib.Server(arguments.binary, data_dir=tempfile.mkdtemp(prefix="hf-waitlist-",
                                                                      dir=arguments.data_parent))
    try:
        server.start()
        run(server.port, arguments)
        server.stop()
    finally:
        server.own_dir = True  # the data directory goes with it
        server.cleanup()


if __name__ == "__main__":
    main()
