"""The commands beside serve (docs/OPERATIONS.md): event create and show and orders export
through a running server, backup of a live store, check of a stored state. Each has --help
(stdout, exit 0); usage errors exit 2 with one line on stderr; failures exit 1 saying why."""

import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import threading
import time

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, free_port, hold,
                     make_temp_dir, timeout, uid, user)

API_KEY = "cli-test-key"


def run(arguments, environment=None, stdin=None):
    """(exit code, stdout, stderr) of the binary, HOLDFAST_* variables cleared."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    env.update(environment or {})
    try:
        done = subprocess.run([harness.BINARY] + arguments, input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              timeout=timeout(60))
    except subprocess.TimeoutExpired:
        harness.fail("holdfast %s: did not exit" % " ".join(arguments))
    return (done.returncode, done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"))


def client_environment(server, api_key=API_KEY):
    environment = {"HOLDFAST_SERVER": "http://127.0.0.1:%d" % server.port}
    if api_key:
        environment["HOLDFAST_API_KEY"] = api_key
    return environment


def failed(arguments, code, says, environment=None):
    """Exit code, nothing on stdout, one line on stderr containing each text of says."""
    label = "holdfast %s" % " ".join(arguments)
    got, out, err = run(arguments, environment)
    check_equal(got, code, "%s: exit code (stderr %r)" % (label, err))
    check_equal(out, "", "%s: stdout" % label)
    lines = err.splitlines()
    check(len(lines) == 1 and lines[0].startswith("holdfast: "),
          "%s: one line beginning holdfast:, got %r" % (label, err))
    for text in says:
        check(text in lines[0], "%s: %r does not say %r" % (label, lines[0], text))
    return lines[0]


# ---- help and usage ----

def test_help_of_each_command():
    for arguments, first in ((["event", "--help"], "usage: holdfast event create"),
                             (["event", "create", "--help"], "usage: holdfast event create"),
                             (["event", "show", "x", "--help"], "usage: holdfast event create"),
                             (["orders", "--help"], "usage: holdfast orders export"),
                             (["orders", "export", "-h"], "usage: holdfast orders export"),
                             (["backup", "--help"], "usage: holdfast backup --data DIR OUT.db"),
                             (["check", "--help"], "usage: holdfast check --data DIR")):
        code, out, err = run(arguments)
        label = "holdfast %s" % " ".join(arguments)
        check_equal((code, err), (0, ""), "%s: exit code and stderr" % label)
        check(out.startswith(first), "%s: usage %r" % (label, out[:100]))
        check("Exit codes: 0" in out and "2 usage" in out, "%s: exit codes documented" % label)
    code, out, err = run(["--help"])
    for text in ("holdfast event create", "holdfast orders export", "holdfast backup",
                 "holdfast check", "Exit codes: 0", "1 failure", "2 a refused option"):
        check(text in out, "holdfast --help does not say %r" % text)


def test_usage_errors_exit_2():
    failed(["event"], 2, ["event", "no action"])
    failed(["event", "delete", "x"], 2, ["unknown action", "create", "show"])
    failed(["event", "create"], 2, ["FILE.json", "missing"])
    failed(["event", "show", "a", "b"], 2, ["unexpected argument", '"b"'])
    failed(["event", "show", "a", "--nope"], 2, ["unknown option --nope"])
    failed(["event", "show", "a", "--server"], 2, ["--server needs a value"])
    failed(["orders"], 2, ["orders", "no action"])
    failed(["orders", "export"], 2, ["--event is missing"])
    failed(["orders", "export", "--event"], 2, ["--event needs a value"])
    failed(["orders", "export", "--event", "a", "--event=b"], 2, ["--event is given twice"])
    failed(["backup"], 2, ["OUT.db", "missing"])
    failed(["backup", "out.db"], 2, ["--data is missing"])
    failed(["backup", "--force=yes", "--data", "d", "out.db"], 2, ["--force takes no value"])
    failed(["check"], 2, ["--data is missing"])
    failed(["check", "--store", "postgres://x"], 2, ["--store", "sqlite:PATH"])
    failed(["check", "--data", "d", "extra"], 2, ["unexpected argument"])


# ---- through a server ----

def test_event_create_and_show():
    server = Server(api_key=API_KEY).start()
    directory = make_temp_dir()
    event_id = uid("cli")
    definition = {"id": event_id, "name": "CLI night",
                  "sections": [{"id": "F", "price": 100, "rows": [{"id": "A", "seats": 3}]}]}
    path = os.path.join(directory, "event.json")
    with open(path, "w") as f:
        json.dump(definition, f)
    environment = client_environment(server)
    code, out, err = run(["event", "create", path], environment)
    check_equal((code, err), (0, ""), "event create: exit code and stderr")
    created = json.loads(out)
    check_equal((created["id"], created["name"]), (event_id, "CLI night"), "the created event")
    check_equal(server.client().get("/v1/events/" + event_id).json, created,
                "the server has the event the command printed")
    failed(["event", "create", path], 1, ["event_exists", "409"], environment)
    code, out, err = run(["event", "show", event_id], environment)
    check_equal((code, err), (0, ""), "event show: exit code and stderr")
    check_equal(json.loads(out), server.client().get("/v1/events/" + event_id).json,
                "event show prints GET /v1/events/ID")
    failed(["event", "show", "no_such"], 1, ["event_not_found", "404"], environment)
    failed(["event", "show", event_id], 1, ["unauthorized", "401"],
           client_environment(server, api_key=None))
    second = dict(definition, id=uid("stdin"))
    code, out, err = run(["event", "create", "-"], environment, json.dumps(second).encode())
    check_equal((code, json.loads(out)["id"]), (0, second["id"]), "event create - (stdin)")
    failed(["event", "create", os.path.join(directory, "missing.json")], 1,
           ["cannot read", "missing.json"], environment)
    # --server wins over HOLDFAST_SERVER.
    dead = "http://127.0.0.1:%d" % free_port()
    failed(["event", "show", event_id, "--server", dead], 1, ["cannot reach the server", dead],
           environment)
    failed(["event", "show", event_id, "--server", "https://x"], 2, ["--server", "http://"],
           environment)
    server.stop()


def booking(c, event_id, user_id, payment_ref, pools=None, seats=None):
    body = {"user_id": user_id, "payment_ref": payment_ref}
    if pools:
        body["pools"] = pools
    if seats:
        body["seats"] = seats
    return expect(c.post("/v1/events/%s/bookings" % event_id, body), 201, what="booking")


def csv_expected(orders):
    rows = ["order_id,event,user_id,reservation_id,status,created_at,total,currency,payment_ref,"
            "seats,pools"]

    def field(value):
        text = "" if value is None else str(value)
        if any(c in text for c in ',"\r\n'):
            return '"' + text.replace('"', '""') + '"'
        return text

    for order in orders:
        values = [order[k] for k in ("order_id", "event", "user_id", "reservation_id", "status",
                                     "created_at", "total", "currency", "payment_ref")]
        values.append(" ".join(order["seats"]))
        values.append(" ".join("%s:%d" % item for item in order["pools"].items()))
        rows.append(",".join(field(v) for v in values))
    return "".join(row + "\r\n" for row in rows)


def test_orders_export_exact_csv():
    server = Server(api_key=API_KEY).start()
    c = server.client()
    event_id = uid("csv")
    create_event(c, event_id, sections=[{"id": "F", "price": 100,
                                         "rows": [{"id": "A", "seats": 6}]}],
                 pools=[{"id": "GA", "capacity": 10, "price": 7}])
    first = user()
    h = hold(c, event_id, first, ["F-A-1", "F-A-2"], pools={"GA": 2})
    commit(c, h["reservation_id"], first, payment_ref='pi_"quoted", with comma')
    booking(c, event_id, 'u,"odd"\nname', "pi_2", seats=[{"id": "F-A-3", "version": 1}])
    third = booking(c, event_id, user(), "pi_3", pools={"GA": 1})
    expect(c.post("/v1/orders/%s/cancel" % third["order_id"], {"user_id": third["user_id"]}),
           200)
    orders = c.get("/v1/events/%s/orders" % event_id).json["orders"]
    check_equal(len(orders), 3, "orders made")
    code, out, err = run(["orders", "export", "--event", event_id], client_environment(server))
    check_equal((code, err), (0, ""), "orders export: exit code and stderr")
    check_equal(out, csv_expected(orders), "the CSV")
    parsed = list(csv.reader(io.StringIO(out, newline="")))
    check_equal([row[2] for row in parsed[1:]], [o["user_id"] for o in orders],
                "user ids read back by a CSV reader")
    failed(["orders", "export", "--event", "no_such"], 1, ["event_not_found"],
           client_environment(server))
    server.stop()


def test_orders_export_pages():
    """More orders than one page (1,000): every one exported, oldest first."""
    server = Server().start()
    c = server.client()
    event_id = uid("pages")
    create_event(c, event_id, sections=None, pools=[{"id": "GA", "capacity": 1100, "price": 5}])
    made = [booking(c, event_id, "u%d" % i, "pi_%d" % i, pools={"GA": 1})["order_id"]
            for i in range(1003)]
    code, out, err = run(["orders", "export", "--event", event_id],
                         client_environment(server, api_key=None))
    check_equal((code, err), (0, ""), "orders export: exit code and stderr")
    rows = list(csv.reader(io.StringIO(out, newline="")))
    check_equal([row[0] for row in rows[1:]], made, "every order, in order")
    server.stop()


# ---- backup and check ----

def orders_in(path):
    database = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return {row[0] for row in database.execute("SELECT id FROM orders")}
    finally:
        database.close()


def test_backup_while_writing():
    """A backup taken while orders are being made: the copy checks clean and holds every order
    acknowledged before the backup began."""
    harness.skip_on_postgres("holdfast backup and check read the SQLite file (holdfast.db)")
    server = Server().start()
    setup = server.client()
    event_id = uid("bk")
    create_event(setup, event_id, sections=None, pools=[{"id": "GA", "capacity": 100000,
                                                         "price": 5}])
    acknowledged = []          # (time acknowledged, order id)
    stop = threading.Event()
    errors = []

    def writer():
        c = server.client()
        i = 0
        try:
            while not stop.is_set():
                order = booking(c, event_id, "w%d" % i, "pi", pools={"GA": 1})
                acknowledged.append((time.monotonic(), order["order_id"]))
                i += 1
        except Exception as error:   # reported below
            errors.append(error)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        time.sleep(0.5)
        out = os.path.join(make_temp_dir(), "copy.db")
        started = time.monotonic()
        code, stdout, err = run(["backup", "--data", server.data_dir, out])
        time.sleep(0.2)
    finally:
        stop.set()
        thread.join(timeout(30))
    check(not errors, "the writer failed: %r" % errors)
    check_equal((code, err), (0, ""), "backup: exit code and stderr")
    check("copied to" in stdout, "backup says what it did: %r" % stdout)
    before = {order for moment, order in acknowledged if moment < started}
    check(len(before) > 10, "orders were being made during the backup (%d)" % len(before))
    missing = before - orders_in(out)
    check(not missing, "%d acknowledged orders missing from the copy" % len(missing))
    check(not os.path.exists(out + ".partial"), "the partial file is gone")
    code, stdout, err = run(["check", "--store", "sqlite:" + out])
    check_equal((code, err), (0, ""), "check of the copy: exit code and stderr")
    check("every invariant holds" in stdout, "check's verdict: %r" % stdout)
    failed(["backup", "--data", server.data_dir, out], 1, ["exists", "--force"])
    code, stdout, err = run(["backup", "--data", server.data_dir, out, "--force"])
    check_equal((code, err), (0, ""), "backup --force over the copy")
    check(len(orders_in(out)) >= len(acknowledged), "the second copy has every order")
    server.stop()
    # The copy restores: a server started on it serves the same orders.
    data = make_temp_dir()
    shutil.copy(out, os.path.join(data, "holdfast.db"))
    restored = Server(data_dir=data).start()
    listed = restored.client().get("/v1/events/%s/orders?limit=1" % event_id)
    expect(listed, 200, what="orders on the restored copy")
    check_equal(listed.json["orders"][0]["order_id"], acknowledged[0][1], "the first order")
    restored.stop()
    failed(["backup", "--data", make_temp_dir(), out + "2"], 1, ["no store at"])


def stored_server():
    """A stopped server's data directory with a few orders, holds and a cancellation."""
    server = Server().start()
    c = server.client()
    event_id = uid("chk")
    create_event(c, event_id)
    buyer = user()
    h = hold(c, event_id, buyer, ["FLOOR-A-1", "FLOOR-A-2"], pools={"GA": 1})
    commit(c, h["reservation_id"], buyer)
    hold(c, event_id, user(), ["FLOOR-A-3"])
    other = booking(c, event_id, user(), "pi", seats=[{"id": "FLOOR-B-1", "version": 1}])
    expect(c.post("/v1/orders/%s/cancel" % other["order_id"], {"user_id": other["user_id"]}),
           200)
    return server


def broken_copy(data_dir, statements):
    path = os.path.join(make_temp_dir(), "broken.db")
    shutil.copy(os.path.join(data_dir, "holdfast.db"), path)
    database = sqlite3.connect(path)
    database.executescript(statements)
    database.commit()
    database.close()
    return path


def test_check_good_and_broken():
    harness.skip_on_postgres("holdfast backup and check read the SQLite file (holdfast.db)")
    server = stored_server()
    failed(["check", "--data", server.data_dir], 1, ["a server is running", "holdfast backup"])
    server.stop()
    code, out, err = run(["check", "--data", server.data_dir])
    check_equal((code, err), (0, ""), "check of a good store: exit code and stderr")
    check("every invariant holds" in out and "1 events, 2 holds, 2 orders" in out,
          "check's verdict: %r" % out)
    broken = {
        "seat_sold_once": "DROP INDEX order_items_one_sale;"
                          "INSERT INTO order_items(order_id, event_id, seat_id, quantity, active)"
                          " SELECT order_id, event_id, seat_id, quantity, active FROM order_items"
                          " WHERE seat_id IS NOT NULL AND active = 1 LIMIT 1;",
        "orders_have_holds": "DELETE FROM holds WHERE status = 'confirmed';",
        "order_items_have_orders": "INSERT INTO order_items(order_id, event_id, seat_id,"
                                   " quantity) VALUES ('ord_gone', 'x', NULL, 1);",
        "refunds_have_orders": "UPDATE refunds SET order_id = 'ord_gone'"
                               " WHERE order_id IS NOT NULL;",
        "deliveries_point_at_rows": "INSERT INTO deliveries(payment_intent_id, type, amount,"
                                    " result, late, refund_id, received_at) VALUES ('pi_x',"
                                    " 'payment.succeeded', 5, 'refund_required', 0, 'ref_gone',"
                                    " 1);",
        "schema_version": "UPDATE meta SET value = '99' WHERE key = 'schema_version';",
        "known_statuses": "UPDATE orders SET status = 'maybe' WHERE rowid = 1;",
        "core": "UPDATE holds SET items = json_set(items, '$.seats[0]', 'FLOOR-Z-99')"
                " WHERE status = 'held';",
    }
    for name, statements in broken.items():
        path = broken_copy(server.data_dir, statements)
        line = failed(["check", "--store", "sqlite:" + path], 1, ["broken invariant " + name])
        check(line.startswith("holdfast: check: broken invariant %s: " % name),
              "the first broken invariant is named first: %r" % line)
    failed(["check", "--data", make_temp_dir()], 1, ["no store at"])


# ---- the service unit ----

UNIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib",
                    "holdfast.service")


def test_service_unit():
    """contrib/holdfast.service: Type=notify, restarts on failure, a user of its own, the
    hardening options, and `systemd-analyze verify` clean where systemd-analyze exists (the
    ExecStart pointed at the binary under test)."""
    with open(UNIT) as f:
        text = f.read()
    for line in ("Type=notify", "Restart=on-failure", "User=holdfast", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "ReadWritePaths=/var/lib/holdfast", "PrivateTmp=yes",
                 "ProtectHome=yes", "LimitNOFILE="):
        check(("\n" + line) in text, "the unit lacks %s" % line)
    start = [l for l in text.splitlines() if l.startswith("ExecStart=")]
    check(len(start) == 1, "one ExecStart")
    arguments = start[0].split("=", 1)[1].split()[1:]
    check_equal(arguments[0], "serve", "ExecStart runs serve")
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("note: systemd-analyze not found, the unit was not verified", flush=True)
        return
    directory = make_temp_dir()
    path = os.path.join(directory, "holdfast.service")
    with open(path, "w") as f:
        f.write(text.replace("/usr/local/bin/holdfast", os.path.abspath(harness.BINARY)))
    done = subprocess.run([analyze, "verify", path], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout(60))
    output = done.stdout.decode("utf-8", "replace")
    check(done.returncode == 0 and "holdfast.service" not in output,
          "systemd-analyze verify: %d %s" % (done.returncode, output))


# ---- progress ----

GROWN_HOLDS = 30000


def _grown_store():
    """A stopped server's data directory grown by GROWN_HOLDS released holds (written with
    SQL), so that loading it passes many of the progress line's steps (one per 1,024 rows)."""
    server = stored_server()
    server.stop()
    database = sqlite3.connect(os.path.join(server.data_dir, "holdfast.db"))
    database.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
        " INSERT INTO holds(id, event_id, user_id, status, items, total, created_at,"
        " expires_at) SELECT 'res_grown' || i, event_id, 'g' || i, 'released', items, total,"
        " created_at + i, expires_at + i FROM holds, n WHERE holds.status = 'held'" % GROWN_HOLDS)
    database.commit()
    database.close()
    return server.data_dir


def _on_terminal(arguments, seconds, until=None):
    """Runs the binary with standard error on a pseudo-terminal, SIGINT once the terminal
    showed until (or after seconds) if still running; (exit code, what the terminal showed)."""
    import pty
    import select
    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    # Shown from the first step: a store slow to load on every machine would make a slow test.
    env["HOLDFAST_PROGRESS_DELAY_MS"] = "0"
    process = subprocess.Popen([harness.BINARY] + arguments, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=secondary, env=env)
    os.close(secondary)
    shown = b""
    deadline = time.monotonic() + timeout(seconds)
    try:
        # Read until the child's side closes (EIO or end of file), whenever that is.
        while True:
            seen = until is not None and until.encode() in shown
            if (seen or time.monotonic() > deadline) and process.poll() is None:
                process.send_signal(2)
                deadline, until = time.monotonic() + timeout(15), None
            ready, _, _ = select.select([primary], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if process.poll() is None:
            process.kill()
        code = process.wait(timeout(15))
        os.close(primary)
    return code, shown.decode("utf-8", "replace")


def test_progress_on_a_terminal():
    """Long jobs show their progress on a terminal (check, serve's load at start, backup),
    rewritten in place and erased; nothing of it when standard error is not a terminal."""
    harness.skip_on_postgres("holdfast backup and check read the SQLite file (holdfast.db)")
    data = _grown_store()
    code, shown = _on_terminal(["check", "--data", data], 60)
    # The stored server's 2 holds, 2 orders and the refund its paid booking's cancel owes.
    total = GROWN_HOLDS + 5
    check(code == 0 and re.search(r"\rcheck: loading: \d+ of %d \(\d+%%\)\x1b\[K" % total, shown)
          and shown.rfind("\r\x1b[K") > shown.rfind("check: loading"),
          "check's progress on a terminal (exit %s): %r" % (code, shown[-500:]))
    code, out, err = run(["check", "--data", data], {"HOLDFAST_PROGRESS_DELAY_MS": "0"})
    check_equal((code, err), (0, ""), "check without a terminal: exit code, nothing on stderr")
    port = free_port()
    code, shown = _on_terminal(["serve", "--listen", "127.0.0.1:%d" % port, "--data", data], 30,
                               until='"msg":"started"')
    check_equal(code, 0, "serve's exit code after SIGINT")
    check("\rloading the store: " in shown and "\r\x1b[K" in shown,
          "serve's loading progress on a terminal, then erased: %r" % shown[:500])
    check('"msg":"started"' in shown, "the server started after loading: %r" % shown[-500:])
    out = os.path.join(make_temp_dir(), "copy.db")
    code, shown = _on_terminal(["backup", "--data", data, out], 60)
    check(code == 0 and re.search(r"\rbackup: pages: \d+ of \d+ \(\d+%\)\x1b\[K", shown) and
          shown.rstrip("\r\n").endswith("\r\x1b[K"), "backup's progress on a terminal: %r" % shown)


def test_check_store_with_payments():
    """A store with payment deliveries of each result and refunds checks clean (no invariant
    mistakes a refund for an unknown hold, or a failed payment, for a broken row)."""
    harness.skip_on_postgres("holdfast backup and check read the SQLite file (holdfast.db)")
    import test_payments as payments
    server = Server(extra_args=["--webhook-secret", payments.SECRET]).start()
    c = server.client()
    event_id = payments.small_event(c)
    paid = hold(c, event_id, user(), ["F-A-1"])
    unpaid = hold(c, event_id, user(), ["F-A-2"])
    results = [payments.deliver(c, payments.delivery(uid("pi"), reservation, amount, kind)).json
               for reservation, amount, kind in (
                   (paid["reservation_id"], payments.SEAT_PRICE, "payment.succeeded"),
                   ("res_unknown", 9, "payment.succeeded"),
                   (unpaid["reservation_id"], 1, "payment.succeeded"),
                   (unpaid["reservation_id"], 1, "payment.failed"))]
    check_equal([r["result"] for r in results],
                ["committed", "refund_required", "refund_required", "recorded"],
                "the deliveries' results")
    server.stop()
    code, out, err = run(["check", "--data", server.data_dir])
    check_equal((code, err), (0, ""), "check of a store with payments: exit code and stderr")
    check("1 orders, 2 refunds" in out, "check's counts: %r" % out)
