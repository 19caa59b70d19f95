"""Outbound notifications (API.md section 15): every audit-history entry is POSTed to
--notify-url, signed as section 7 says, retried with backoff, listed by GET /v1/notifications
and retried by hand; the history is the outbox, so a kill -9 loses none and a takeover goes on
from it. Each test runs a receiver of its own (python's http.server, over http or over https
with an authority made by openssl for the test) that verifies every signature with the section
7 verifier: HMAC-SHA256(secret, t + "." + raw body), |now - t| at most 300 s."""

import hashlib
import hmac
import http.server
import json
import os
import socket
import ssl
import subprocess
import threading
import time

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, fail, get_seat,
                     hold, release, skip, store_url_for, uid, user)

SECRET = "nt_secret_for_the_tests"
SIGNATURE_TOLERANCE_S = 300


def verify(header, body, secret=SECRET):
    """The section 7 verifier, as a receiver writes it for Stripe: t and every v1, one match."""
    if not header:
        return False
    elements = [part.strip().split("=", 1) for part in header.split(",")]
    stamps = [value for name, value in elements if name == "t"]
    signatures = [value for name, value in elements if name == "v1"]
    if len(stamps) != 1 or not signatures:
        return False
    if abs(time.time() - int(stamps[0])) > SIGNATURE_TOLERANCE_S:
        return False
    expected = hmac.new(secret.encode(), stamps[0].encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, value) for value in signatures)


class Receiver:
    """An HTTP(S) receiver on port (a free one when None). mode: "ok" answers 200, "fail" 500,
    "hang" sleeps hang_s before answering. Every request is kept, verified."""

    def __init__(self, port=None, certificate=None, mode="ok", hang_s=0):
        self.port = port or harness.free_port()
        self.mode, self.hang_s = mode, hang_s
        self.received, self.bad_signatures, self.lock = [], 0, threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                signed = verify(self.headers.get("Holdfast-Signature"), body)
                mode = receiver.mode
                if mode == "hang":
                    time.sleep(receiver.hang_s)
                with receiver.lock:
                    if not signed:
                        receiver.bad_signatures += 1
                    elif mode == "ok":
                        receiver.received.append(json.loads(body))
                status = 200 if mode == "ok" and signed else 500
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        if certificate:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*certificate)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, scheme="http"):
        return "%s://127.0.0.1:%d/hook" % (scheme, self.port)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def ids(self):
        with self.lock:
            return [n["id"] for n in self.received]

    def by_unit(self, unit):
        with self.lock:
            return [n for n in self.received if n["unit"] == unit]


def notifying(url, *extra):
    return Server(extra_args=["--notify-url", url, "--notify-secret", SECRET] + list(extra))


def history(client, event_id):
    entries, after = [], 0
    while True:
        page = expect(client.get("/v1/events/%s/history?limit=1000&after=%d" % (event_id, after)),
                      200)
        entries.extend(page["history"])
        if page["next"] is None:
            return entries
        after = page["next"]


def notifications(client, status=None):
    listed, after = [], None
    while True:
        query = "?limit=1000" + ("&status=" + status if status else "")
        query += "&after=" + after if after else ""
        page = expect(client.get("/v1/notifications" + query), 200, what="notifications")
        check_equal(set(page), {"notifications", "next"}, "the members of a page")
        listed.extend(page["notifications"])
        if page["next"] is None:
            return listed
        after = page["next"]


def wait_until(condition, limit_s, what):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    fail("not within %.0f s: %s" % (limit_s, what))


def metric(client, name, labels=""):
    text = client.get("/metrics").body.decode()
    for line in text.splitlines():
        if line.startswith(name + labels + " ") or (not labels and line.startswith(name + " ")):
            return float(line.split()[-1])
    return None


def some_changes(client, event_id):
    """hold, extend, release, commit, cancel, booking: one entry each (and the event's)."""
    u1, u2, u3 = user(), user(), user()
    h1 = hold(client, event_id, u1, ["FLOOR-A-1"])
    expect(client.post("/v1/holds/%s/extend" % h1["reservation_id"],
                       {"user_id": u1, "ttl_s": 900}), 200)
    release(client, h1["reservation_id"], u1)
    h2 = hold(client, event_id, u2, ["FLOOR-A-2"])
    order = commit(client, h2["reservation_id"], u2)
    expect(client.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u2}), 200)
    version = get_seat(client, event_id, "FLOOR-A-3")["version"]
    expect(client.post("/v1/events/%s/bookings" % event_id,
                       {"user_id": u3, "seats": [{"id": "FLOOR-A-3", "version": version}]}), 201)


EXPECTED_TYPES = {"hold": "hold.created", "extend": "hold.extended", "release": "hold.released",
                  "commit": "order.confirmed", "cancel": "order.cancelled",
                  "booking": "order.confirmed", "expiry": "hold.expired"}


def check_all_delivered_once(receiver, client, event_id):
    entries = history(client, event_id)
    unit = "event:" + event_id
    wait_until(lambda: len(receiver.by_unit(unit)) >= len(entries), 20,
               "%d notifications of %s" % (len(entries), event_id))
    time.sleep(0.3)
    told = receiver.by_unit(unit)
    check_equal(sorted(n["seq"] for n in told), [e["seq"] for e in entries],
                "the seqs told of %s, each once" % event_id)
    for notification, entry in zip(sorted(told, key=lambda n: n["seq"]), entries):
        check_equal(notification["data"], entry, "notification %s's data" % notification["id"])
        check_equal(notification["at"], entry["at"], "its at")
        check_equal(notification["type"], EXPECTED_TYPES.get(entry["type"], notification["type"]),
                    "the type of a %s entry" % entry["type"])
        check(notification["id"].startswith("nt_"), "an id nt_...")
    check_equal(receiver.bad_signatures, 0, "requests whose signature did not verify")
    return entries


def test_a_mixed_workload_is_notified_once_each_in_unit_seq_order():
    receiver = Receiver()
    server = notifying(receiver.url()).start()
    c = server.client()
    events = [uid("nt"), uid("nt")]
    for event_id in events:
        create_event(c, event_id, max_seats_per_user=0)
    for event_id in events:
        some_changes(c, event_id)
    for event_id in events:
        entries = check_all_delivered_once(receiver, c, event_id)
        check_equal(len(entries), 7, "entries of %s" % event_id)
    delivered = wait_until(
        lambda: (lambda listed: listed if len(listed) == 14 else None)(
            notifications(c, "delivered")), 10, "14 delivered listed")
    keys = [(n["unit"], n["seq"]) for n in delivered]
    check_equal(keys, sorted(keys), "the listing in (unit, seq) order")
    for n in delivered:
        check_equal((n["status"], n["attempts"], n["last_status"], n["last_error"],
                     n["next_attempt_at"]), ("delivered", 1, 200, None, None), n["id"])
    check_equal(notifications(c, "pending"), [], "nothing pending")
    check_equal(metric(c, "holdfast_notifications", '{status="delivered"}'), 14.0, "metric")
    check_equal(metric(c, "holdfast_notify_attempts_total", '{result="success"}'), 14.0,
                "attempts")
    receiver.stop()


def make_authority(directory):
    """A self-signed authority and a certificate for 127.0.0.1 signed by it, made by openssl."""
    def run(*arguments):
        subprocess.run(["openssl"] + list(arguments), cwd=directory, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=holdfast test authority")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")
    with open(os.path.join(directory, "san.cnf"), "w") as out:
        out.write("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.cnf")
    return (os.path.join(directory, "ca.pem"),
            (os.path.join(directory, "server.pem"), os.path.join(directory, "server.key")))


def test_https_with_a_private_authority():
    directory = harness.make_temp_dir("holdfast-ca-")
    authority, certificate = make_authority(directory)
    receiver = Receiver(certificate=certificate)
    # Without the authority the certificate is refused: nothing is delivered, all pending.
    untrusted = notifying(receiver.url("https")).start()
    c = untrusted.client()
    event_id = uid("nts")
    create_event(c, event_id)
    hold(c, event_id, user(), ["FLOOR-A-1"])
    pending = wait_until(lambda: [n for n in notifications(c, "pending") if n["attempts"] >= 1],
                         10, "a refused attempt")
    check(pending[0]["last_status"] is None and pending[0]["last_error"],
          "no status and a reason: %r" % pending[0])
    check_equal(receiver.ids(), [], "nothing delivered to an unverified receiver")
    untrusted.stop()
    # With --notify-ca, the same outbox is delivered from where it was.
    trusted = Server(data_dir=untrusted.data_dir,
                     extra_args=["--notify-url", receiver.url("https"), "--notify-secret",
                                 SECRET, "--notify-ca", authority]).start()
    c = trusted.client()
    hold(c, event_id, user(), ["FLOOR-A-2"])
    check_all_delivered_once(receiver, c, event_id)
    receiver.stop()


def test_a_receiver_down_for_a_while_gets_everything_when_back():
    port = harness.free_port()
    server = notifying("http://127.0.0.1:%d/hook" % port).start()
    c = server.client()
    event_id = uid("ntd")
    create_event(c, event_id)
    some_changes(c, event_id)
    # Refused connections: retried at 1 s, 2 s, ... so two attempts within about 3 s.
    wait_until(lambda: all(n["attempts"] >= 2 for n in notifications(c, "pending")) and
               len(notifications(c, "pending")) == 7, 15, "seven pending, each tried twice")
    for n in notifications(c, "pending"):
        check(n["last_status"] is None and n["last_error"], "why none came: %r" % n)
        check(n["next_attempt_at"] is not None, "when it is due again")
    failures = metric(c, "holdfast_notify_attempts_total", '{result="failure"}')
    check(failures >= 14, "failed attempts counted: %r" % failures)
    receiver = Receiver(port=port)
    check_all_delivered_once(receiver, c, event_id)
    delivered = wait_until(lambda: (lambda d: d if len(d) == 7 else None)(
        notifications(c, "delivered")), 10, "seven delivered")
    check(all(n["attempts"] >= 3 for n in delivered), "attempts count every try: %r"
          % [n["attempts"] for n in delivered])
    receiver.stop()


def test_a_receiver_answering_500_then_hanging_is_retried():
    receiver = Receiver(mode="fail")
    server = notifying(receiver.url()).start()
    c = server.client()
    event_id = uid("ntf")
    create_event(c, event_id)
    hold(c, event_id, user(), ["FLOOR-A-1"])
    first = wait_until(lambda: [n for n in notifications(c, "pending") if n["attempts"] >= 2],
                       10, "two answers of 500")[0]
    check_equal(first["last_status"], 500, "the receiver's status")
    # A hanging receiver: the attempt ends at 10 s without an answer.
    receiver.mode, receiver.hang_s = "hang", 15
    tried = first["attempts"]
    hung = wait_until(lambda: [n for n in notifications(c, "pending")
                               if n["attempts"] > tried and n["last_status"] is None], 30,
                      "an attempt timed out")[0]
    check("timed out" in hung["last_error"].lower() or "timeout" in hung["last_error"].lower(),
          "the reason: %r" % hung["last_error"])
    receiver.mode = "ok"
    expect(c.post("/v1/notifications/%s/retry" % hung["id"]), 200, what="retry by hand")
    wait_until(lambda: receiver.ids(), 20, "delivered once the receiver answers")
    receiver.stop()


def test_pages_of_notifications_by_status():
    """A status that no entry has gives an empty last page; pages of 1,000 pending ones follow
    next to every one, each once; bad parameters are 400 naming them."""
    port = harness.free_port()
    server = notifying("http://127.0.0.1:%d/hook" % port).start()
    c = server.client()
    event_id = uid("ntp")
    create_event(c, event_id, max_seats_per_user=0, sections=[
        {"id": "FLOOR", "price": 100, "rows": [{"id": "A", "seats": 1000}]}])
    for start in range(1, 1001, 100):
        for number in range(start, start + 100):
            expect(c.post("/v1/events/%s/holds" % event_id,
                          {"user_id": user(), "seats": ["FLOOR-A-%d" % number]}), 201)
    page = expect(c.get("/v1/notifications?status=failed&limit=5"), 200)
    check_equal((page["notifications"], page["next"]), ([], None), "no failed among 1,000")
    listed = notifications(c, "pending")
    check_equal(len(listed), 1000, "every pending one, following next")
    check_equal(len({n["id"] for n in listed}), 1000, "each once")
    expect(c.get("/v1/notifications?status=sent"), 400, "invalid_request", "status")
    expect(c.get("/v1/notifications?after=res_1"), 400, "invalid_request", "after")
    expect(c.get("/v1/notifications?limit=1001"), 400, "invalid_request", "limit")


def test_retry_by_hand():
    receiver = Receiver()
    server = notifying(receiver.url(), "--notify-backlog-max", "1").start()
    c = server.client()
    expect(c.post("/v1/notifications/nt_1_nothing/retry"), 404, "notification_not_found")
    expect(c.post("/v1/notifications/not-an-id/retry"), 404, "notification_not_found")
    event_id = uid("ntr")
    create_event(c, event_id)
    hold(c, event_id, user(), ["FLOOR-A-1"])
    delivered = wait_until(lambda: notifications(c, "delivered"), 10, "the first delivered")[0]
    expect(c.post("/v1/notifications/%s/retry" % delivered["id"]), 409, "already_delivered")
    receiver.stop()
    # A failed one (dropped past the backlog, 2 here) is pending again and delivered.
    receiver = Receiver()
    receiver.mode = "fail"
    server.stop()
    server = Server(data_dir=server.data_dir,
                    extra_args=["--notify-url", receiver.url(), "--notify-secret", SECRET,
                                "--notify-backlog-max", "2"]).start()
    c = server.client()
    for number in (2, 3, 4):
        hold(c, event_id, user(), ["FLOOR-A-%d" % number])
    failed = wait_until(lambda: notifications(c, "failed"), 10, "a dropped one")
    check("backlog" in failed[0]["last_error"], "why: %r" % failed[0]["last_error"])
    receiver.mode = "ok"
    again = expect(c.post("/v1/notifications/%s/retry" % failed[0]["id"]), 200, what="retry")
    check_equal(again["status"], "pending", "pending again")
    wait_until(lambda: failed[0]["id"] in receiver.ids(), 10, "the retried one delivered")
    receiver.stop()


def test_the_backlog_is_bounded():
    port = harness.free_port()
    server = notifying("http://127.0.0.1:%d/hook" % port, "--notify-backlog-max", "5").start()
    c = server.client()
    event_id = uid("ntb")
    create_event(c, event_id, max_seats_per_user=0)
    for number in range(1, 21):
        hold(c, event_id, user(), ["FLOOR-A-%d" % number])
    wait_until(lambda: metric(c, "holdfast_notify_dropped_total") == 15.0, 10,
               "15 dropped (%r)" % metric(c, "holdfast_notify_dropped_total"))
    check_equal(metric(c, "holdfast_notifications", '{status="pending"}'), 5.0, "pending")
    # The metric counts a drop when it is decided; the listing reads the rows, which the
    # writer's next batches bring (a busy machine saw 13 of 15 there just after the metric).
    wait_until(lambda: len(notifications(c, "failed")) >= 15, 10, "the drops written")
    failed = notifications(c, "failed")
    check_equal([n["seq"] for n in failed], list(range(1, 16)), "the oldest were dropped")
    check_equal([n["seq"] for n in notifications(c, "pending")], list(range(16, 21)),
                "the newest wait")
    receiver = Receiver(port=port)
    wait_until(lambda: len(receiver.ids()) == 5, 15, "the five kept delivered")
    receiver.stop()


class Load(threading.Thread):
    """Holds on many seats as fast as one connection goes; remembers the acknowledged ones."""

    def __init__(self, server, event_id):
        super().__init__(daemon=True)
        self.server, self.event_id, self.acknowledged = server, event_id, []

    def run(self):
        try:
            c = self.server.client(client_timeout=5)
            for number in range(1, 400):
                response = c.post("/v1/events/%s/holds" % self.event_id,
                                  {"user_id": user(), "seats": ["FLOOR-A-%d" % number]})
                if response.status == 201:
                    self.acknowledged.append(response.json["reservation_id"])
        except (OSError, harness.TestFailure, ValueError):
            pass


def test_kill_9_under_load_loses_no_notification():
    receiver = Receiver()
    server = notifying(receiver.url()).start()
    c = server.client()
    event_id = uid("ntk")
    create_event(c, event_id, max_seats_per_user=0, sections=[
        {"id": "FLOOR", "price": 100, "rows": [{"id": "A", "seats": 500}]}])
    load = Load(server, event_id)
    load.start()
    time.sleep(1.0)
    server.kill()
    load.join(10)
    check(len(load.acknowledged) > 0, "holds acknowledged before the kill")
    server = Server(data_dir=server.data_dir,
                    extra_args=["--notify-url", receiver.url(), "--notify-secret", SECRET]).start()
    c = server.client()
    entries = history(c, event_id)
    told = {}
    wait_until(lambda: {n["seq"] for n in receiver.by_unit("event:" + event_id)} >=
               {e["seq"] for e in entries}, 30, "every entry told after the restart")
    for n in receiver.by_unit("event:" + event_id):
        told[n["seq"]] = told.get(n["seq"], 0) + 1
    acknowledged = set(load.acknowledged)
    told_holds = {e["reservation_id"] for e in entries if e["seq"] in told}
    check(acknowledged <= told_holds, "every acknowledged hold told")
    duplicates = sum(count - 1 for count in told.values())
    # Only those in flight at the kill, or delivered with their state not yet durable: at
    # most the 16 in flight and the batch or two behind them.
    check(duplicates <= 64, "duplicates: %d" % duplicates)
    receiver.stop()


def test_bad_options_exit_2_with_one_line():
    cases = [(["--notify-url", "ftp://example.com/x", "--notify-secret", SECRET], "notify-url"),
             (["--notify-url", "http://127.0.0.1:9/x"], "notify-secret"),
             (["--notify-url", "http://127.0.0.1:9/x", "--notify-secret", SECRET,
               "--notify-ca", "/nonexistent/ca.pem"], "notify-ca"),
             (["--notify-backlog-max", "many"], "notify-backlog-max")]
    for arguments, named in cases:
        directory = harness.make_temp_dir()
        result = subprocess.run([harness.BINARY, "serve", "--listen", "127.0.0.1:1", "--data",
                                 directory] + arguments, capture_output=True, text=True,
                                timeout=10)
        check_equal(result.returncode, 2, "exit code for %r" % arguments)
        lines = result.stderr.strip().splitlines()
        check_equal(len(lines), 1, "one line for %r: %r" % (arguments, result.stderr))
        check(named in lines[0], "%r names %s" % (lines[0], named))


def test_a_takeover_goes_on_from_the_outbox():
    if harness.STORE_URL is None:
        skip("several nodes need PostgreSQL (--store-url)")
    receiver = Receiver()
    arguments = ["--notify-url", receiver.url(), "--notify-secret", SECRET]
    a = Server(extra_args=["--node-id", "A"] + arguments)
    url = store_url_for(a.data_dir)
    a.extra_args += ["--store", url]
    a.start()
    b = Server(extra_args=["--node-id", "B", "--store", url] + arguments).start()
    client_a = a.client(api_key=None)
    event_id = uid("ntc")
    create_event(client_a, event_id, max_seats_per_user=0)
    for number in range(1, 6):
        hold(client_a, event_id, user(), ["FLOOR-A-%d" % number])
    wait_until(lambda: len(receiver.by_unit("event:" + event_id)) >= 5, 10, "A delivers")
    receiver.mode = "fail"
    for number in range(6, 11):
        hold(client_a, event_id, user(), ["FLOOR-A-%d" % number])
    a.kill()
    receiver.mode = "ok"
    client_b = b.client(api_key=None)
    # B takes the unit over (a request about it does it) and goes on from the outbox.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if client_b.get("/v1/events/%s" % event_id).status == 200:
            break
        time.sleep(0.2)
    hold(client_b, event_id, user(), ["FLOOR-A-11"])
    wait_until(lambda: {n["seq"] for n in receiver.by_unit("event:" + event_id)} >=
               set(range(1, 12)), 20, "every entry told, by A or by B")
    check_equal(receiver.bad_signatures, 0, "bad signatures")
    b.stop()
    receiver.stop()
