"""The PostgreSQL store seen from outside (docs/API.md "The PostgreSQL store"): its tables hold
what SQLite's hold, as psql shows them, and the generated token secret is kept in PostgreSQL,
not in the data directory. Run on PostgreSQL only (run.py --store-url); skipped otherwise."""

import json
import os
import re

import harness
from harness import Server, check, check_equal, commit, create_event, expect, hold, user


def _postgres_only():
    if harness.STORE_URL is None:
        harness.skip("PostgreSQL only: run with --store-url")


def test_tables_hold_what_the_answers_say():
    """A hold committed and another released: psql reads the same rows, statuses, JSON lines,
    history numbering and seat_state that SQLite's tables would show."""
    _postgres_only()
    server = Server().start()
    c = server.client()
    event_id = create_event(c)["id"]
    buyer, other = user(), user()
    sold = hold(c, event_id, buyer, seats=["FLOOR-A-1", "FLOOR-A-2"])
    order = commit(c, sold["reservation_id"], buyer)
    released = hold(c, event_id, other, seats=["FLOOR-A-3"])
    expect(c.post("/v1/holds/%s/release" % released["reservation_id"], {"user_id": other}), 200)
    rows = harness.postgres_rows(
        server.data_dir, "SELECT id, status, items, order_id FROM holds WHERE event_id = '%s'"
        " ORDER BY seq" % event_id)
    check_equal([(r[0], r[1], r[3]) for r in rows],
                [(sold["reservation_id"], "confirmed", order["order_id"]),
                 (released["reservation_id"], "released", None)], "holds rows")
    check_equal(json.loads(rows[0][2]), {"seats": ["FLOOR-A-1", "FLOOR-A-2"], "pools": {}},
                "items JSON (store/rows.h, as in SQLite)")
    orders = harness.postgres_rows(
        server.data_dir, "SELECT id, reservation_id, status FROM orders WHERE event_id = '%s'"
        % event_id)
    check_equal(orders, [[order["order_id"], sold["reservation_id"], "confirmed"]], "orders")
    sold_seats = harness.postgres_rows(
        server.data_dir, "SELECT seat_id, status, owner FROM seat_state WHERE event_id = '%s'"
        " ORDER BY seat_id" % event_id)
    check_equal(sold_seats, [["FLOOR-A-1", "sold", order["order_id"]],
                             ["FLOOR-A-2", "sold", order["order_id"]]], "seat_state")
    history = harness.postgres_rows(
        server.data_dir, "SELECT seq, type FROM history WHERE event_id = '%s' ORDER BY seq"
        % event_id)
    check_equal(history, [["1", "hold"], ["2", "commit"], ["3", "hold"], ["4", "release"]],
                "history numbering")
    check_equal(harness.postgres_rows(server.data_dir,
                                      "SELECT value FROM meta WHERE key = 'schema_version'"),
                [["13"]], "schema version (SQLite's number for the same tables)")
    server.stop()


def test_token_secret_kept_in_postgres():
    """Without --token-secret the secret is made once and kept in PostgreSQL (meta), the same
    after a restart, and no file is written in the data directory."""
    _postgres_only()
    server = Server().start()
    kept = harness.postgres_rows(server.data_dir,
                                 "SELECT value FROM meta WHERE key = 'token_secret'")
    check(len(kept) == 1 and re.fullmatch(r"[0-9a-f]{64}", kept[0][0] or ""),
          "a 64-hex-digit secret in meta, got %r" % kept)
    check(not os.path.exists(os.path.join(server.data_dir, "token_secret")),
          "no token_secret file in the data directory")
    server.stop()
    server.start()
    again = harness.postgres_rows(server.data_dir,
                                  "SELECT value FROM meta WHERE key = 'token_secret'")
    check_equal(again, kept, "the secret after a restart")
    check(kept[0][0] not in server.stderr_text(), "the secret is never logged")
    server.stop()
