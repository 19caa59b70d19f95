"""GET /metrics (API.md section 9): Prometheus's text format 0.0.4 without the API key, every
family with HELP and TYPE, counts that move with the requests that move them, no id in any
label, the output accepted by `promtool check metrics`, and a real Prometheus scraping the
server on loopback and answering queries about it. promtool and prometheus come from Debian's
package `prometheus` (scripts/deps.sh --test): when they are missing the tests fail."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request

import harness
from harness import (Server, check, check_equal, commit, create_event, expect, fail, hold,
                     release, uid, user)

API_KEY = "metrics-test-key"
SECRET = "whsec_metrics_secret"
SERVER_OPTIONS = {"api_key": API_KEY, "extra_args": ["--webhook-secret", SECRET]}
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
HOLDS = "/v1/events/{event}/holds"

# Every family of API.md section 9 built so far, with its type; and those an operator gets
# besides.
FAMILIES = {
    "holdfast_http_requests_total": "counter",
    "holdfast_http_request_duration_seconds": "histogram",
    "holdfast_holds_active": "gauge",
    "holdfast_seats": "gauge",
    "holdfast_store_batch_size": "histogram",
    "holdfast_store_commit_duration_seconds": "histogram",
    "holdfast_connections": "gauge",
    "holdfast_webhooks_total": "counter",
    "holdfast_refunds": "gauge",
    "holdfast_build_info": "gauge",
    "holdfast_start_time_seconds": "gauge",
    "holdfast_replies_waiting": "gauge",
    "holdfast_store_batches_total": "counter",
    "holdfast_store_mutations_total": "counter",
    "holdfast_store_failures_total": "counter",
    "holdfast_store_failed": "gauge",
    "holdfast_store_open_batch_mutations": "gauge",
    "holdfast_events": "gauge",
    "holdfast_pool_units": "gauge",
}
# Families that appear once their part is in use (API.md section 9): the waiting room's, and
# dispatch's.
FAMILIES_IN_USE = {
    "holdfast_queue_waiting": "gauge",
    "holdfast_queue_admissions_total": "counter",
}
DISPATCH_FAMILIES = {
    "holdfast_rides": "gauge",
    "holdfast_offers_total": "counter",
    "holdfast_drivers": "gauge",
}

# The only labels any family may carry, and what their values may be.
LABEL_VALUES = {
    "route": re.compile(r"^(other|/[A-Za-z0-9_./{}]*)$"),
    "method": re.compile(r"^(other|GET|POST|PUT|PATCH|DELETE)$"),
    "status": re.compile(r"^(other|[2-5][0-9][0-9]|available|held|sold|pending|completed|"
                         r"searching|offered|assigned|cancelled|unavailable|delivered|failed|"
                         r"running|done)$"),
    "outcome": re.compile(r"^(accepted|declined|expired)$"),
    "le": re.compile(r"^(\+Inf|[0-9.e+-]+)$"),
    "result": re.compile(r"^(committed|refund_required|recorded|repeat|invalid_signature|"
                         r"invalid|ok|unavailable|success|failure)$"),
    "version": re.compile(r"^[0-9A-Za-z.+-]+$"),
    # holdfast_auth_refusals_total (API.md section 16): bounded words, never a token.
    "reason": re.compile(r"^(missing|wrong_key|forbidden|malformed|alg_not_allowed|"
                         r"bad_signature|missing_claim|expired|not_yet_valid|"
                         r"lifetime_too_long)$"),
}

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


class Scrape:
    """One scrape parsed: samples by (name, sorted labels), and each family's HELP and TYPE."""

    def __init__(self, text):
        self.text = text
        self.samples = {}
        self.types = {}
        self.helps = {}
        for number, line in enumerate(text.split("\n"), 1):
            if not line:
                continue
            if line.startswith("# HELP "):
                name, _, help_text = line[7:].partition(" ")
                self.helps[name] = help_text
                continue
            if line.startswith("# TYPE "):
                name, _, kind = line[7:].partition(" ")
                check(name not in self.types, "line %d: a second TYPE of %s" % (number, name))
                self.types[name] = kind
                continue
            match = SAMPLE_RE.match(line)
            check(match is not None, "line %d is no sample: %r" % (number, line))
            labels = {}
            text_labels = match.group(3) or ""
            position = 0
            while position < len(text_labels):
                label = LABEL_RE.match(text_labels, position)
                check(label is not None, "line %d: labels %r" % (number, text_labels))
                labels[label.group(1)] = label.group(2)
                position = label.end()
            key = (match.group(1), tuple(sorted(labels.items())))
            check(key not in self.samples, "line %d: sample repeated: %r" % (number, line))
            self.samples[key] = float(match.group(4))

    def value(self, name, **labels):
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def labelled(self, name):
        """Every sample of name as (labels dict, value)."""
        return [(dict(labels), value) for (sample, labels), value in self.samples.items()
                if sample == name]


def scrape(server, api_key=None):
    c = server.client(api_key=api_key)
    response = c.get("/metrics")
    check_equal(response.status, 200, "GET /metrics status")
    check_equal(response.header("content-type"), CONTENT_TYPE, "GET /metrics Content-Type")
    return Scrape(response.body.decode("utf-8"))


def promtool():
    path = shutil.which("promtool")
    if path is None:
        fail("promtool is missing: scripts/deps.sh --test installs Debian's prometheus package")
    return path


def promtool_check(text):
    """`promtool check metrics` reads the exposition on its standard input; any line it prints
    is a complaint (a lint problem or a parse error), and so is a non-zero exit."""
    result = subprocess.run([promtool(), "check", "metrics"], input=text.encode(),
                            capture_output=True, timeout=harness.timeout(20))
    complaints = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
    check(result.returncode == 0 and not complaints,
          "promtool check metrics (exit %d): %s" % (result.returncode, complaints))


def small_event(c, seats=10):
    event_id = uid("met")
    create_event(c, event_id, sections=[{"id": "F", "price": 100,
                                         "rows": [{"id": "A", "seats": seats}]}],
                 pools=[{"id": "GA", "capacity": 5, "price": 10}])
    return event_id


# ---------------------------------------------------------------------------------------------
# One shared server (with an API key)


def test_every_family_without_the_key_and_promtool_accepts_it(server):
    c = server.client()
    event_id = small_event(c)
    hold(c, event_id, user(), seats=["F-A-1"])
    for api_key in (None, "wrong-key"):
        metrics = scrape(server, api_key=api_key)
        for name, kind in FAMILIES.items():
            check_equal(metrics.types.get(name), kind, "TYPE of %s" % name)
            check(metrics.helps.get(name), "HELP of %s" % name)
        for name in metrics.types:
            check(name in metrics.helps, "%s has a TYPE and no HELP" % name)
        for (name, _labels) in metrics.samples:
            family = re.sub(r"_(bucket|sum|count)$", "", name)
            check(family in metrics.types or name in metrics.types,
                  "sample %s belongs to no family with a TYPE" % name)
        promtool_check(metrics.text)
    check_equal(metrics.value("holdfast_build_info", version=metrics.labelled(
        "holdfast_build_info")[0][0]["version"]), 1.0, "holdfast_build_info")
    started = metrics.value("holdfast_start_time_seconds")
    check(abs(started - time.time()) < 3600, "holdfast_start_time_seconds %s is now" % started)
    check(metrics.value("holdfast_connections") >= 1, "the scraping connection is counted")
    # The rest of /v1/ still wants the key.
    expect(server.client(api_key=None).get("/v1/events"), 401, "unauthorized")


def test_head_answers_the_head_alone(server):
    c = server.client(api_key=None)
    get = c.get("/metrics")
    head = c.request("HEAD", "/metrics")
    check_equal(head.status, 200, "HEAD /metrics status")
    check_equal(head.header("content-type"), CONTENT_TYPE, "HEAD /metrics Content-Type")
    check_equal(head.body, b"", "HEAD /metrics body")
    # The length of the body a GET gets, give or take what changed in between: the HEAD's own
    # count, and sums of seconds written in fewer digits (0.00999 + 0.00001 is 0.01).
    length = int(head.header("content-length"))
    check(len(get.body) > 0 and abs(length - len(get.body)) <= 256,
          "HEAD's Content-Length %d, a GET's body %d bytes" % (length, len(get.body)))


def test_a_hold_moves_its_counts(server):
    c = server.client()
    event_id = small_event(c, seats=10)
    before = scrape(server)
    holder = user()
    hold_id = hold(c, event_id, holder, seats=["F-A-1", "F-A-2"])["reservation_id"]
    hold(c, event_id, user(), pools={"GA": 2})
    expect(c.get("/v1/no-such-route"), 404, "not_found")
    expect(server.client(api_key=None).post("/v1/events/%s/holds" % event_id,
                                            {"user_id": user(), "seats": ["F-A-3"]}),
           401, "unauthorized")
    after = scrape(server)
    route = {"route": HOLDS, "method": "POST"}
    check_equal(after.value("holdfast_http_requests_total", status="201", **route) -
                before.value("holdfast_http_requests_total", status="201", **route), 2.0,
                "holds answered 201 since the last scrape")
    check_equal(after.value("holdfast_http_requests_total", status="401", **route) -
                before.value("holdfast_http_requests_total", status="401", **route), 1.0,
                "holds answered 401 since the last scrape")
    check_equal(after.value("holdfast_http_requests_total", route="other", method="other",
                            status="404") -
                before.value("holdfast_http_requests_total", route="other", method="other",
                             status="404"), 1.0, "404s since the last scrape")
    durations = "holdfast_http_request_duration_seconds_count"
    check_equal(after.value(durations, **route) - before.value(durations, **route), 3.0,
                "holds timed since the last scrape")
    check_equal(after.value("holdfast_http_request_duration_seconds_bucket", le="+Inf", **route),
                after.value(durations, **route), "the +Inf bucket counts every hold")
    check(after.value("holdfast_http_request_duration_seconds_sum", **route) >
          before.value("holdfast_http_request_duration_seconds_sum", **route),
          "the holds' time adds up")
    check_equal(after.value("holdfast_holds_active") - before.value("holdfast_holds_active"),
                2.0, "active holds")
    for status, moved in (("held", 2.0), ("available", -2.0), ("sold", 0.0)):
        check_equal(after.value("holdfast_seats", status=status) -
                    before.value("holdfast_seats", status=status), moved, "%s seats" % status)
    check_equal(after.value("holdfast_pool_units", status="held") -
                before.value("holdfast_pool_units", status="held"), 2.0, "held pool units")
    check(after.value("holdfast_store_batches_total") >
          before.value("holdfast_store_batches_total"), "batches were written")
    check(after.value("holdfast_store_batch_size_count") >
          before.value("holdfast_store_batch_size_count"), "batch sizes recorded")
    check(after.value("holdfast_store_commit_duration_seconds_count") >
          before.value("holdfast_store_commit_duration_seconds_count"), "commits timed")
    release(c, hold_id, holder)
    released = scrape(server)
    check_equal(released.value("holdfast_holds_active"),
                after.value("holdfast_holds_active") - 1, "active holds after a release")
    check_equal(released.value("holdfast_seats", status="held"),
                after.value("holdfast_seats", status="held") - 2, "held seats after a release")


def test_histograms_are_cumulative(server):
    metrics = scrape(server)
    for family in ("holdfast_http_request_duration_seconds", "holdfast_store_batch_size",
                   "holdfast_store_commit_duration_seconds"):
        series = {}
        for labels, value in metrics.labelled(family + "_bucket"):
            bound = labels.pop("le")
            series.setdefault(tuple(sorted(labels.items())), []).append(
                (float("inf") if bound == "+Inf" else float(bound), value))
        check(series, "%s has buckets" % family)
        for labels, buckets in series.items():
            buckets.sort()
            counts = [count for _, count in buckets]
            check(counts == sorted(counts), "%s%s buckets do not decrease" % (family, labels))
            check_equal(buckets[-1][0], float("inf"), "%s%s ends with +Inf" % (family, labels))
            check_equal(counts[-1], metrics.value(family + "_count", **dict(labels)),
                        "%s%s: +Inf is the count" % (family, labels))


def test_no_id_in_any_label(server):
    c = server.client()
    event_id = small_event(c)
    u = user()
    hold_id = hold(c, event_id, u, seats=["F-A-5"])["reservation_id"]
    order = commit(c, hold_id, u, payment_ref="pi_x")
    expect(c.get("/v1/orders/%s" % order["order_id"]), 200)
    expect(c.get("/v1/holds/%s" % hold_id), 200)
    expect(c.get("/v1/events/%s/seats/F-A-5" % event_id), 200)
    expect(c.get("/v1/users/%s/orders" % u), 200)
    metrics = scrape(server)
    forbidden = [event_id, u, hold_id, order["order_id"], "F-A-5", "pi_x"]
    for (name, labels) in metrics.samples:
        for label, value in labels:
            check(label in LABEL_VALUES, "%s has the label %s" % (name, label))
            check(LABEL_VALUES[label].match(value), "%s{%s=%r}" % (name, label, value))
            for secret in forbidden:
                check(secret not in value, "%s{%s=%r} carries an id" % (name, label, value))
    for secret in forbidden:
        check(secret not in metrics.text, "the scrape carries the id %s" % secret)
    order_route = {"route": "/v1/orders/{order}", "method": "GET", "status": "200"}
    check(metrics.value("holdfast_http_requests_total", **order_route) >= 1,
          "an order's read counts under its pattern")


# ---------------------------------------------------------------------------------------------
# Webhooks and refunds, the store's failure


def test_webhooks_and_refunds_are_counted():
    import test_payments as payments
    server = Server(extra_args=["--webhook-secret", payments.SECRET]).start()
    c = server.client()
    event_id = small_event(c)
    u = user()
    hold_id = hold(c, event_id, u, seats=["F-A-1"])["reservation_id"]
    body = payments.delivery("pi_m1", hold_id, 100)
    expect(payments.deliver(c, body, signed="t=1,v1=00"), 401, "invalid_signature")
    expect(payments.deliver(c, b"{}"), 400)
    check_equal(expect(payments.deliver(c, body), 200)["result"], "committed", "delivery")
    expect(payments.deliver(c, body), 200)
    failed = payments.delivery("pi_m2", hold_id, 100, kind="payment.failed")
    check_equal(expect(payments.deliver(c, failed), 200)["result"], "recorded", "failure")
    refund = expect(payments.deliver(c, payments.delivery("pi_m3", "res_unknown", 100)), 200)
    check_equal(refund["result"], "refund_required", "delivery for no hold")
    metrics = scrape(server)
    for result, count in (("committed", 1), ("refund_required", 1), ("recorded", 1),
                          ("repeat", 1), ("invalid_signature", 1), ("invalid", 1)):
        check_equal(metrics.value("holdfast_webhooks_total", result=result), float(count),
                    "webhooks_total{result=%s}" % result)
    check_equal(metrics.value("holdfast_refunds", status="pending"), 1.0, "pending refunds")
    check_equal(metrics.value("holdfast_refunds", status="completed"), 0.0, "completed")
    expect(c.post("/v1/refunds/%s/complete" % refund["refund_id"]), 200)
    metrics = scrape(server)
    check_equal(metrics.value("holdfast_refunds", status="pending"), 0.0, "pending refunds")
    check_equal(metrics.value("holdfast_refunds", status="completed"), 1.0, "completed")
    promtool_check(metrics.text)
    # Completed refunds are counted again at start, from the store.
    server.stop()
    server = Server(data_dir=server.data_dir,
                    extra_args=["--webhook-secret", payments.SECRET]).start()
    metrics = scrape(server)
    check_equal(metrics.value("holdfast_refunds", status="completed"), 1.0, "after a restart")
    check_equal(metrics.value("holdfast_holds_active"), 0.0, "no hold active after a restart")
    check_equal(metrics.value("holdfast_seats", status="sold"), 1.0, "sold seats after a restart")
    server.stop()


def test_waiting_rooms_are_counted_by_event():
    """holdfast_queue_waiting{event} and holdfast_queue_admissions_total{event}: one sample per
    event with a room, none for an event without (no family at all before the first room)."""
    import test_queue as queue
    server = Server(**queue.SERVER_OPTIONS).start()
    c = server.client()
    plain = small_event(c)
    metrics = scrape(server)
    check("holdfast_queue_waiting" not in metrics.text, "no room, no queue family")
    # One admission every 1,000 s: the first joiner is let in at once, the rest wait.
    event_id = queue.room_event(c, admit_per_s=0.001)
    tickets = [queue.join(c, event_id, user())["ticket"] for _ in range(4)]
    deadline = time.time() + 10
    while True:
        statuses = [queue.poll(c, event_id, t)["status"] for t in tickets]
        if statuses.count("admitted") == 1 or time.time() > deadline:
            break
        time.sleep(0.1)
    check_equal(statuses.count("admitted"), 1, "admitted at once: %r" % statuses)
    metrics = scrape(server)
    for name, kind in FAMILIES_IN_USE.items():
        check("# TYPE %s %s\n" % (name, kind) in metrics.text, "TYPE of %s" % name)
        check("# HELP %s " % name in metrics.text, "HELP of %s" % name)
    check_equal(metrics.value("holdfast_queue_waiting", event=event_id), 3.0, "waiting")
    check_equal(metrics.value("holdfast_queue_admissions_total", event=event_id), 1.0,
                "admissions")
    check(plain not in metrics.text, "an event without a room has no queue sample")
    queue.complete(c, event_id, tickets[1])
    metrics = scrape(server)
    check_equal(metrics.value("holdfast_queue_waiting", event=event_id), 2.0,
                "waiting after a waiting ticket completed")
    promtool_check(metrics.text)
    server.stop()


def dispatch_counts(metrics):
    """The dispatch families as three dicts: rides and drivers by status, offers by outcome."""
    return ({labels["status"]: value for labels, value in metrics.labelled("holdfast_rides")},
            {labels["status"]: value for labels, value in metrics.labelled("holdfast_drivers")},
            {labels["outcome"]: value
             for labels, value in metrics.labelled("holdfast_offers_total")})


def test_dispatch_is_counted():
    """holdfast_rides{status}, holdfast_offers_total{outcome} and holdfast_drivers{status}: no
    family before a fleet exists; every status and outcome written, 0 included; each count moved
    by the change that moves it (an offer, a decline, a lapse, an accept, a cancel, a driver
    unavailable); the statuses the same after a restart, the offers counted again from 0."""
    import test_dispatch as dispatch
    server = Server().start()
    c = server.client()
    metrics = scrape(server)
    for name in DISPATCH_FAMILIES:
        check(name not in metrics.text, "no fleet, no %s" % name)
    fleet = uid("f")
    # d0 nearest, then d1, d2; d3 unavailable.
    for number in range(3):
        dispatch.put_driver(c, fleet, "d%d" % number, lat=dispatch.LAT + number * dispatch.STEP)
    dispatch.put_driver(c, fleet, "d3", available=False)
    metrics = scrape(server)
    for name, kind in DISPATCH_FAMILIES.items():
        check("# TYPE %s %s\n" % (name, kind) in metrics.text, "TYPE of %s" % name)
        check("# HELP %s " % name in metrics.text, "HELP of %s" % name)
    rides, drivers, offers = dispatch_counts(metrics)
    check_equal(rides, {"searching": 0, "offered": 0, "assigned": 0, "cancelled": 0,
                        "completed": 0}, "rides")
    check_equal(drivers, {"available": 3, "offered": 0, "assigned": 0, "unavailable": 1},
                "drivers")
    check_equal(offers, {"accepted": 0, "declined": 0, "expired": 0}, "offers")
    # r1 to d0, who declines: to d1, who accepts. r2 to d0 (0.5 s): it lapses, to d2, who lets
    # it lapse too: searching (d3 is unavailable, d1 assigned). r3: searching at once.
    # r1 to d0, who declines: to d1, who accepts.
    r1 = dispatch.create_ride(c, fleet)
    check_equal(dispatch.offered_to(r1), "d0", "r1 offered to the nearest")
    dispatch.decline(c, r1["ride_id"], "d0")
    dispatch.accept(c, r1["ride_id"], "d1")
    # r2 lives 0.5 s an offer: to d0, then d2, each lapsing; then searching (d1 is assigned,
    # d3 unavailable).
    r2 = dispatch.create_ride(c, fleet, offer_ttl_s=0.5)
    check_equal(dispatch.offered_to(r2), "d0", "r2 offered to d0")
    expect_dispatch(server, {"searching": 0, "offered": 1, "assigned": 1, "cancelled": 0,
                              "completed": 0},
                    {"available": 1, "offered": 1, "assigned": 1, "unavailable": 1},
                    {"accepted": 1, "declined": 1, "expired": 0}, "while r2 is offered")
    wait_searching(c, r2["ride_id"])
    expect_dispatch(server, {"searching": 1, "offered": 0, "assigned": 1, "cancelled": 0,
                              "completed": 0},
                    {"available": 2, "offered": 0, "assigned": 1, "unavailable": 1},
                    {"accepted": 1, "declined": 1, "expired": 2}, "after r2 lapsed twice")
    # r3 goes to d0 (15 s) and is cancelled; then r1 is cancelled, which frees d1, who is
    # offered r2 at once and lets it lapse.
    r3 = dispatch.create_ride(c, fleet)
    check_equal(dispatch.offered_to(r3), "d0", "r3 offered to d0")
    expect_dispatch(server, {"searching": 1, "offered": 1, "assigned": 1, "cancelled": 0,
                              "completed": 0},
                    {"available": 1, "offered": 1, "assigned": 1, "unavailable": 1},
                    {"accepted": 1, "declined": 1, "expired": 2}, "while r3 is offered")
    check_equal(expect(c.post("/v1/rides/%s/cancel" % r3["ride_id"]), 200)["status"],
                "cancelled", "r3 cancelled")
    check_equal(expect(c.post("/v1/rides/%s/cancel" % r1["ride_id"]), 200)["status"],
                "cancelled", "r1 cancelled")
    wait_searching(c, r2["ride_id"])
    # r4 to d0, accepted; d2 says it is unavailable.
    r4 = dispatch.create_ride(c, fleet)
    dispatch.accept(c, r4["ride_id"], "d0")
    dispatch.put_driver(c, fleet, "d2", lat=dispatch.LAT + 2 * dispatch.STEP, available=False)
    rides = {"searching": 1, "offered": 0, "assigned": 1, "cancelled": 2, "completed": 0}
    drivers = {"available": 1, "offered": 0, "assigned": 1, "unavailable": 2}
    expect_dispatch(server, rides, drivers, {"accepted": 2, "declined": 1, "expired": 3},
                    "at the end")
    promtool_check(scrape(server).text)
    # Drivers' rows are written once a second (soft state): let d2's be.
    time.sleep(1.5)
    server.stop()
    server = server.restart()
    expect_dispatch(server, rides, drivers, {"accepted": 0, "declined": 0, "expired": 0},
                    "after a restart")
    server.stop()


def expect_dispatch(server, rides, drivers, offers, when):
    got_rides, got_drivers, got_offers = dispatch_counts(scrape(server))
    check_equal(got_rides, rides, "holdfast_rides " + when)
    check_equal(got_drivers, drivers, "holdfast_drivers " + when)
    check_equal(got_offers, offers, "holdfast_offers_total " + when)


def wait_searching(c, ride_id):
    import test_dispatch as dispatch
    deadline = time.time() + 10
    while dispatch.get_ride(c, ride_id)["status"] != "searching" and time.time() < deadline:
        time.sleep(0.05)
    check_equal(dispatch.get_ride(c, ride_id)["status"], "searching", ride_id + " searching")


class FaultServer(Server):
    """The store's third batch of this run fails (HOLDFAST_FAULT_FAIL_BATCH)."""

    def _spawn(self, environment):
        environment = dict(environment)
        environment["HOLDFAST_FAULT_FAIL_BATCH"] = "3"
        return Server._spawn(self, environment)


def test_a_failed_store_shows_in_the_metrics():
    server = FaultServer().start()
    c = server.client()
    event_id = small_event(c, seats=20)
    failed = False
    for n in range(1, 20):   # one request at a time: one batch each
        response = c.post("/v1/events/%s/holds" % event_id,
                          {"user_id": user(), "seats": ["F-A-%d" % n]})
        if response.status != 201:
            expect(response, 503, "unavailable")
            failed = True
            break
    check(failed, "a batch failed")
    metrics = scrape(server)
    # On PostgreSQL the node rebuilds its memory from the store and serves on (docs/API.md,
    # "Several nodes"): the failure is counted, and the store is not failed for good.
    check_equal(metrics.value("holdfast_store_failed"),
                0.0 if harness.STORE_URL is not None else 1.0, "holdfast_store_failed")
    check_equal(metrics.value("holdfast_store_failures_total"), 1.0, "store failures")
    check(metrics.value("holdfast_http_requests_total", route=HOLDS, method="POST",
                        status="503") >= 1, "the refused hold is counted as 503")
    promtool_check(metrics.text)
    server.stop(expect_code=None)


# ---------------------------------------------------------------------------------------------
# A real Prometheus


PROMETHEUS_READY_S = 15.0
SCRAPE_WAIT_S = 12.0


def prometheus_query(port, query):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": query}))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as answer:
        document = json.loads(answer.read().decode("utf-8"))
    check_equal(document.get("status"), "success", "Prometheus's answer to %s" % query)
    return document["data"]["result"]


def start_prometheus(target_port, directory):
    binary = shutil.which("prometheus")
    if binary is None:
        fail("prometheus is missing: scripts/deps.sh --test installs Debian's prometheus package")
    config = os.path.join(directory, "prometheus.yml")
    with open(config, "w") as out:
        out.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                  "scrape_configs:\n  - job_name: holdfast\n    static_configs:\n"
                  "      - targets: ['127.0.0.1:%d']\n" % target_port)
    port = harness.free_port()
    log = open(os.path.join(directory, "prometheus.log"), "wb")
    process = subprocess.Popen(
        [binary, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(directory, "tsdb"),
         "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()
    return process, port


def test_a_real_prometheus_scrapes_it():
    server = Server(api_key=API_KEY).start()
    c = server.client()
    event_id = small_event(c)
    for n in (1, 2, 3):
        hold(c, event_id, user(), seats=["F-A-%d" % n])
    directory = harness.make_temp_dir(prefix="holdfast-prometheus-")
    process, port = start_prometheus(server.port, directory)
    try:
        deadline = time.monotonic() + harness.timeout(PROMETHEUS_READY_S)
        up = held = None
        while time.monotonic() < deadline:
            check(process.poll() is None, "prometheus exited with %s: %s" % (
                process.returncode, open(os.path.join(directory, "prometheus.log")).read()[-2000:]))
            try:
                up = prometheus_query(port, 'up{job="holdfast"}')
                held = prometheus_query(port, "holdfast_holds_active")
            except OSError:
                time.sleep(0.25)   # not listening yet
                continue
            if up and held and up[0]["value"][1] == "1":
                break
            time.sleep(0.25)
        check(up, "Prometheus never scraped the server (up{job=\"holdfast\"} is empty)")
        check_equal(up[0]["value"][1], "1", "up{job=\"holdfast\"}: the scrape succeeded")
        check_equal(up[0]["metric"].get("instance"), "127.0.0.1:%d" % server.port, "instance")
        check(held, "holdfast_holds_active is not in Prometheus")
        check_equal(held[0]["value"][1], "3", "holdfast_holds_active as Prometheus has it")
        # A histogram Prometheus has ingested answers a quantile.
        deadline = time.monotonic() + harness.timeout(SCRAPE_WAIT_S)
        while True:
            rate = prometheus_query(port, 'holdfast_http_requests_total{route="%s",status="201"}'
                                    % HOLDS)
            if rate or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        check(rate, "holdfast_http_requests_total of the holds' route is not in Prometheus")
        check_equal(rate[0]["value"][1], "3", "holds answered 201, as Prometheus has it")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    server.stop()
