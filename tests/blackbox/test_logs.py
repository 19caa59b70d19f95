"""The log (docs/OPERATIONS.md): one JSON object per line on standard error with ts, level and
msg; start, stop, refused starts, refused webhooks and slow batches logged; nothing per request
at info, one line per request with --access-log; secrets, tokens and card-like numbers never in
a line; readiness sent to systemd's NOTIFY_SOCKET (READY=1, then STOPPING=1)."""

import hashlib
import hmac
import json
import os
import re
import signal
import socket
import time
import uuid

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, hold,
                     make_temp_dir, timeout, uid, user)
from test_cli import _refused, _run, _serve

API_KEY = "key-7c1f9a-secret-API"
WEBHOOK_SECRET = "whsec-44e0b2-WEBHOOK"
TOKEN_SECRET = "tok-9d3e55-SECRET"
CARD = "4242424242424242"
CARD_SPACED = "4000 0566 5566 5556"
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class QuietServer(Server):
    """A server whose standard error holds only what the process wrote (the harness's own
    header line would quote the command, secrets included), and with extra environment."""

    def __init__(self, environment=None, **kwargs):
        super().__init__(**kwargs)
        self.environment = environment or {}

    def _spawn(self, environment):
        environment = dict(environment)
        environment.update(self.environment)
        self.process = None
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.process = harness.subprocess.Popen(
                self.command(), stdin=harness.subprocess.DEVNULL, stdout=out, stderr=err,
                env=environment, start_new_session=True)


def log_lines(text, what="the log"):
    """Every line parsed: a JSON object with ts (RFC 3339 UTC ms), level and msg."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            document = json.loads(line)
        except ValueError:
            harness.fail("%s line %d is not JSON: %r" % (what, number, line[:300]))
        check(isinstance(document, dict), "%s line %d is not an object: %r" % (what, number, line))
        check(TS_RE.match(str(document.get("ts"))), "%s line %d: ts %r" % (
            what, number, document.get("ts")))
        check(document.get("level") in ("error", "warn", "info", "debug"),
              "%s line %d: level %r" % (what, number, document.get("level")))
        check(isinstance(document.get("msg"), str) and document["msg"],
              "%s line %d: msg %r" % (what, number, document.get("msg")))
        lines.append(document)
    return lines


def bad_signature(body):
    t = int(time.time())
    wrong = hmac.new(b"not-the-secret", ("%d." % t).encode() + body, hashlib.sha256).hexdigest()
    return "t=%d,v1=%s" % (t, wrong)


def test_secrets_never_logged():
    """A server with every secret, the access log and debug: requests carry the API key (header
    and ?access_token=), the token secret, card-like numbers in payment_ref and user_id, and a
    webhook with a bad signature. None of them appears anywhere on standard error."""
    server = QuietServer(api_key=API_KEY, extra_args=[
        "--webhook-secret", WEBHOOK_SECRET, "--token-secret", TOKEN_SECRET, "--access-log",
        "--log-level", "debug"]).start()
    c = server.client()
    event_id = uid("logs")
    create_event(c, event_id)
    buyer = user()
    h = hold(c, event_id, buyer, ["FLOOR-A-1"])
    commit(c, h["reservation_id"], buyer, payment_ref=CARD)
    h2 = hold(c, event_id, "card " + CARD_SPACED, ["FLOOR-A-2"])
    commit(c, h2["reservation_id"], "card " + CARD_SPACED, payment_ref="pi " + CARD_SPACED)
    expect(c.get("/v1/events/%s?access_token=%s" % (event_id, API_KEY)), 200)
    expect(c.get("/v1/events/%s" % event_id,
                 headers={"X-Token": TOKEN_SECRET, "Authorization": "Bearer " + API_KEY}), 200)
    body = json.dumps({"id": "evt_1", "type": "payment.succeeded", "payment_intent_id": CARD,
                       "reservation_id": h["reservation_id"], "amount": 1}).encode()
    expect(c.post("/v1/webhooks/payments", raw=body,
                  headers={"Holdfast-Signature": bad_signature(body)}), 401, "invalid_signature")
    expect(c.get("/v1/events", headers={"Authorization": "Bearer " + WEBHOOK_SECRET}), 401,
           "unauthorized")
    server.stop()
    text = server.stderr_text()
    for secret in (API_KEY, WEBHOOK_SECRET, TOKEN_SECRET, CARD, CARD_SPACED,
                   CARD_SPACED.replace(" ", "")):
        check(secret not in text, "%r is in the log:\n%s" % (secret, harness.short(text, 3000)))
    lines = log_lines(text)
    requests = [line for line in lines if line["msg"] == "request"]
    check(len(requests) >= 9, "expected a line per request, got %d:\n%s" % (
        len(requests), harness.short(text, 3000)))
    for line in requests:
        for field in ("method", "path", "status", "duration_us", "bytes"):
            check(field in line, "access line without %s: %r" % (field, line))
        check("?" not in line["path"], "a query string was logged: %r" % line)
    check({"GET", "POST"} <= {line["method"] for line in requests}, "methods %r" % requests)
    check(any(line["status"] == 401 for line in requests), "the 401s are logged")
    refused = [line for line in lines if line["msg"].startswith("webhook refused")]
    check(len(refused) == 1 and refused[0]["level"] == "warn" and refused[0].get("reason"),
          "one warning for the refused webhook, got %r" % refused)
    started = [line for line in lines if line["msg"] == "started"]
    check(len(started) == 1, "one start line, got %r" % started)
    check_equal(started[0].get("listen"), "127.0.0.1:%d" % server.port, "the start's listen")
    scheme = "postgres" if harness.STORE_URL else "sqlite:"
    check(started[0].get("store", "").startswith(scheme) and started[0].get("version"),
          "the start names the store and version: %r" % started[0])
    check(any(line["msg"] == "stopped cleanly" for line in lines), "the stop is logged")
    loaded = [line for line in lines if line["msg"] == "store loaded"]
    check(len(loaded) == 1 and loaded[0].get("rows") == 0 and "duration_ms" in loaded[0],
          "the load of the empty store is logged: %r" % loaded)


def test_info_logs_no_request():
    """At the default level a request writes no line; the start and stop do."""
    server = QuietServer().start()
    c = server.client()
    create_event(c)
    for _ in range(20):
        expect(c.get("/v1/events"), 200)
    server.stop()
    lines = log_lines(server.stderr_text())
    check(not any(line["msg"] == "request" for line in lines), "a request line at info")
    check(not any(line["level"] == "debug" for line in lines), "a debug line at info")
    check([line["msg"] for line in lines if line["level"] == "info"][-2:] ==
          ["stopping: finishing in-flight work", "stopped cleanly"],
          "the stop's lines, got %r" % lines)
    check(any(line["level"] == "warn" and "no API key" in line["msg"] for line in lines),
          "the warning about the missing key")


def test_level_error_keeps_only_errors():
    server = QuietServer(environment={"HOLDFAST_LOG_LEVEL": "error"}).start()
    expect(server.client().get("/v1/events"), 200)
    server.stop()
    check_equal(server.stderr_text(), "", "the log at level error after a clean run")


def test_refused_start_logged():
    """A second server on the same data directory: exit 1, an error line saying why."""
    first = QuietServer().start()
    second = QuietServer(data_dir=first.data_dir)
    second.start(wait=False)
    code = second.wait_exit(10)
    check_equal(code, 1, "the second server's exit code")
    lines = log_lines(second.stderr_text())
    check(any(line["level"] == "error" and "start refused" in line["msg"] and
              "in use" in line["msg"] for line in lines),
          "the refusal is logged: %r" % lines)
    first.stop()


def test_slow_batch_logged():
    """A sync slower than the threshold (1 s) is logged as a slow batch."""
    server = QuietServer(environment={"HOLDFAST_FAULT_SYNC_DELAY_MS": "1200"}).start()
    create_event(server.client(client_timeout=30))
    server.stop()
    lines = log_lines(server.stderr_text())
    slow = [line for line in lines if line["msg"] == "slow batch"]
    # On PostgreSQL the COMMIT is the sync: the slow stage is the commit.
    stage = "commit" if harness.STORE_URL else "sync"
    check(slow and slow[0]["level"] == "warn" and slow[0].get("stage") == stage and
          slow[0].get("duration_ms", 0) >= 1000, "a slow batch line, got %r" % lines)


def test_log_options_refused():
    _refused(_serve("--log-level", "verbose"), "--log-level", also=["verbose", "debug"])
    _refused(_serve("--log-level"), "--log-level", also=["needs a value"])
    _refused(_serve(), "HOLDFAST_LOG_LEVEL", environment={"HOLDFAST_LOG_LEVEL": "WARN"})
    _refused(_serve(), "HOLDFAST_ACCESS_LOG", environment={"HOLDFAST_ACCESS_LOG": "maybe"})
    _refused(_serve("--access-log=1"), "--access-log", also=["takes no value"])
    code, out, err = _run(["serve", "--help"])
    check(code == 0 and "--log-level" in out and "--access-log" in out, "serve --help lists them")


def _notify_socket(abstract):
    """A datagram socket of the test's own, and the NOTIFY_SOCKET value naming it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = "holdfast-test-%s" % uuid.uuid4().hex
        listener.bind("\0" + name)
        value = "@" + name
    else:
        value = os.path.join(make_temp_dir(), "notify")
        listener.bind(value)
    listener.settimeout(timeout(10))
    return listener, value


def _notify_round(abstract):
    listener, value = _notify_socket(abstract)
    try:
        server = QuietServer(environment={"NOTIFY_SOCKET": value})
        server.start(wait=False)
        message = listener.recv(4096)
        check_equal(message, b"READY=1", "the first notification")
        # Ready means serving: the health check answers at once.
        expect(server.client().get("/healthz"), 200, what="healthz once READY=1 arrived")
        server.send_signal(signal.SIGTERM)
        check_equal(listener.recv(4096), b"STOPPING=1", "the notification at SIGTERM")
        check_equal(server.wait_exit(15), 0, "exit code after SIGTERM")
    finally:
        listener.close()


def test_notify_ready_and_stopping_abstract():
    _notify_round(abstract=True)


def test_notify_ready_and_stopping_path():
    _notify_round(abstract=False)
