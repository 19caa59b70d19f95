#!/usr/bin/env python3
"""Admissions of a waiting room as the server recorded them, in loadgen's measured window.

    python3 bench/admissions.py DATABASE EVENT LOADGEN_JSON OUT_JSON

DATABASE is the server's SQLite file (DATA/holdfast.db), read while the server runs (WAL lets
a reader in); LOADGEN_JSON is queue-admit's summary, whose measure_start_unix_ms and
measure_end_unix_ms give the window on the wall clock. The tickets' admitted_at is the core's
clock at the admission itself (milliseconds), so unlike the polls it does not depend on how
soon the client looked. Writes one JSON object: the admissions in the window, per second, per
100 ms window (median, min, max) and the most admitted at one same millisecond (API.md
section 6: at most max(1, admit_per_s / 10) at one instant). Standard library only.
"""
import json
import sqlite3
import statistics
import sys

WINDOW_MS = 100


def admissions(database, event, start_ms, end_ms):
    """The admission instants (ms) of EVENT's tickets in [start_ms, end_ms), sorted."""
    connection = sqlite3.connect("file:%s?mode=ro" % database, uri=True, timeout=10)
    try:
        rows = connection.execute(
            "SELECT admitted_at FROM tickets WHERE event_id = ? AND admitted_at >= ?"
            " AND admitted_at < ? ORDER BY admitted_at", (event, start_ms, end_ms)).fetchall()
    finally:
        connection.close()
    return [row[0] for row in rows]


def summarize(instants, start_ms, end_ms):
    """Counts per whole WINDOW_MS window of [start_ms, end_ms) and at one same millisecond."""
    windows = int((end_ms - start_ms) // WINDOW_MS)
    counts = [0] * windows
    same = {}
    for at in instants:
        index = int((at - start_ms) // WINDOW_MS)
        if 0 <= index < windows:
            counts[index] += 1
        same[at] = same.get(at, 0) + 1
    seconds = (end_ms - start_ms) / 1000.0
    return {"admissions": len(instants), "seconds": seconds,
            "admissions_per_s": len(instants) / seconds if seconds > 0 else 0,
            "window_ms": WINDOW_MS, "windows": windows,
            "window_median": statistics.median(counts) if counts else 0,
            "window_min": min(counts) if counts else 0, "window_max": max(counts) if counts else 0,
            "instant_max": max(same.values()) if same else 0}


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    database, event, loadgen_json, out = sys.argv[1:]
    run = json.load(open(loadgen_json, encoding="utf-8"))
    start_ms, end_ms = run["measure_start_unix_ms"], run["measure_end_unix_ms"]
    result = summarize(admissions(database, event, start_ms, end_ms), start_ms, end_ms)
    result["admit_per_s"] = run.get("admit_per_s")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    print("admissions recorded by the server: %d (%.1f/s); per %d ms window: median %s, min %d,"
          " max %d; at one instant at most %d" % (
              result["admissions"], result["admissions_per_s"], WINDOW_MS, result["window_median"],
              result["window_min"], result["window_max"], result["instant_max"]))


if __name__ == "__main__":
    main()
