"""Live updates (API.md section 5): GET /v1/events/{e}/stream is text/event-stream; a snapshot
(the event summary), then seat and pool changes in the order they became durable; keepalives;
slow readers are cut off without costing the server memory or other clients' time."""

import json
import socket
import threading
import time

import harness
from harness import (Server, _context, check, check_equal, commit, create_event, expect, fail,
                     get_event, hold, post_hold, release, run_threads, timeout, uid, user)

WEIGHT = 4.0

SMALL = [{"id": "S", "price": 100, "rows": [{"id": "R", "seats": 6}]}]
GA = [{"id": "GA", "capacity": 5, "price": 10}]


class Stream:
    """One Server-Sent Events connection on a raw socket."""

    def __init__(self, port, path, headers=None, rcvbuf=None, client_timeout=10.0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout(client_timeout))
        self.sock.connect(("127.0.0.1", port))
        self.path = path
        _context()["clients"].append(self)
        lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1", "Accept: text/event-stream"]
        for name, value in (headers or {}).items():
            lines.append("%s: %s" % (name, value))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        self.raw = b""          # bytes received, not yet framed
        self.text = b""         # body bytes (de-chunked), not yet split into events
        self.status = None
        self.headers = {}
        self.chunked = False
        self.eof = False
        self.body_bytes = 0
        self.event_id = None

    # -- bytes --

    def _recv(self, wait_s):
        """Receives once; False on timeout. Sets eof on close or reset."""
        if self.eof:
            return False
        self.sock.settimeout(max(0.01, wait_s))
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.eof = True
            return False
        if not chunk:
            self.eof = True
            return False
        self.raw += chunk
        self._frame()
        return True

    def _frame(self):
        if self.status is None:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.raw[:end].decode("latin-1").split("\r\n")
            self.raw = self.raw[end + 4:]
            self.status = int(head[0].split(" ")[1])
            for line in head[1:]:
                name, _, value = line.partition(":")
                self.headers[name.strip().lower()] = value.strip()
            self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
            harness.record_exchange("GET", self.path, self.status, dict(self.headers), None,
                                    streamed=True)
        if not self.chunked:
            self.body_bytes += len(self.raw)
            self.text += self.raw
            self.raw = b""
            return
        while True:
            end = self.raw.find(b"\r\n")
            if end < 0:
                return
            size = int(self.raw[:end].split(b";")[0], 16)
            if size == 0:
                self.raw = b""
                return
            if len(self.raw) < end + 2 + size + 2:
                return
            piece = self.raw[end + 2:end + 2 + size]
            self.body_bytes += len(piece)
            self.text += piece
            self.raw = self.raw[end + 2 + size + 2:]

    def read_head(self, wait_s=10.0):
        deadline = time.monotonic() + timeout(wait_s)
        while self.status is None and time.monotonic() < deadline and not self.eof:
            self._recv(deadline - time.monotonic())
        check(self.status is not None, "no response head (eof %s, %r)" % (self.eof, self.raw[:200]))
        return self.status

    def body_to_end(self, wait_s=10.0):
        """Everything until the server closes (for error answers)."""
        deadline = time.monotonic() + timeout(wait_s)
        length = None
        while time.monotonic() < deadline and not self.eof:
            if self.status is not None and length is None and "content-length" in self.headers:
                length = int(self.headers["content-length"])
            if length is not None and len(self.text) >= length:
                break
            self._recv(deadline - time.monotonic())
        return self.text

    # -- events --

    def _split(self):
        normalized = self.text.replace(b"\r\n", b"\n")
        index = normalized.find(b"\n\n")
        if index < 0:
            return None
        block = normalized[:index].decode("utf-8")
        self.text = normalized[index + 2:]
        event, data, comments, event_id = "message", [], [], None
        for line in block.split("\n"):
            if line.startswith(":"):
                comments.append(line[1:].strip())
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                event_id = value
        if not data and comments:
            return ("comment", " ".join(comments))
        self.event_id = event_id    # the id line of the event just returned (None: none)
        harness.record_stream_event(self.path, event, "\n".join(data))
        return (event, "\n".join(data))

    def next(self, wait_s=10.0, comments=False, scaled=True):
        """The next event as (name, data text), or None at the deadline or on close. scaled
        False: wait_s is a duration the contract fixes, not stretched for slow builds."""
        deadline = time.monotonic() + (timeout(wait_s) if scaled else wait_s)
        while True:
            item = self._split()
            while item is not None:
                if comments or item[0] != "comment":
                    return item
                item = self._split()
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof:
                return None
            self._recv(remaining)

    def next_json(self, wait_s=10.0, scaled=True):
        item = self.next(wait_s, scaled=scaled)
        check(item is not None, "no event within %.1f s (eof %s)" % (
            timeout(wait_s) if scaled else wait_s, self.eof))
        try:
            return item[0], json.loads(item[1])
        except ValueError:
            fail("event %s data is not JSON: %r" % (item[0], item[1][:300]))

    def open(self, wait_s=10.0):
        """Reads the head and the snapshot; returns the snapshot document."""
        status = self.read_head(wait_s)
        check_equal(status, 200, "stream status")
        content_type = self.headers.get("content-type", "")
        check_equal(content_type.split(";")[0].strip().lower(), "text/event-stream",
                    "stream Content-Type")
        name, data = self.next_json(wait_s)
        check_equal(name, "snapshot", "first event")
        return data

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _adopt(parent):
    """Lets a thread register its clients with the test that started it (as run_threads)."""
    harness._local.ctx = parent


def _stream(server, event_id, **kwargs):
    return Stream(server.port, "/v1/events/%s/stream" % event_id, **kwargs)


def _seat(seat_id, status, version):
    return ("seat", {"id": seat_id, "status": status, "version": version})


def _pool(pool_id, available, held, sold):
    return ("pool", {"id": pool_id, "available": available, "held": held, "sold": sold})


def _expect_group(stream, group, what, wait_s=10.0, scaled=True):
    """Reads len(group) events and compares them with the group; the order within one change
    (one request) is free, the order of changes is not."""
    got = []
    for _ in group:
        item = stream.next(wait_s, scaled=scaled)
        if item is None:
            fail("%s: expected %s, got only %s, then nothing within %.1f s (eof %s)" % (
                what, group, got, timeout(wait_s) if scaled else wait_s, stream.eof))
        try:
            got.append((item[0], json.loads(item[1])))
        except ValueError:
            fail("%s: event %s data is not JSON: %r" % (what, item[0], item[1][:300]))
    key = lambda item: json.dumps(item, sort_keys=True)  # noqa: E731
    check_equal(sorted(got, key=key), sorted(group, key=key), what)


def _expect_quiet(stream, wait_s, what):
    item = stream.next(wait_s)
    check(item is None, "%s: unexpected event %r" % (what, item))


# ---------------------------------------------------------------------------------------------


def test_snapshot_is_the_summary(server):
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL, pools=GA)
    hold(c, event_id, user(), ["S-R-2"], {"GA": 1})
    stream = _stream(server, event_id)
    snapshot = stream.open()
    check_equal(snapshot, get_event(c, event_id), "snapshot = GET /v1/events/{e}")
    check_equal(snapshot["counts"], {"available": 5, "held": 1, "sold": 0}, "snapshot counts")
    # Only changes after the snapshot follow.
    hold(c, event_id, user(), ["S-R-3"])
    _expect_group(stream, [_seat("S-R-3", "held", 2)], "the next change")
    _expect_quiet(stream, 0.3, "nothing else")


def test_unknown_event(server):
    stream = _stream(server, uid("none"))
    check_equal(stream.read_head(), 404, "status of a stream of an unknown event")
    body = stream.body_to_end()
    try:
        document = json.loads(body.decode("utf-8"))
    except ValueError:
        document = None
    check(isinstance(document, dict), "404 body is JSON: %r" % body[:300])
    check_equal(document.get("error", {}).get("code"), "event_not_found", "error code")
    check_equal(stream.headers.get("content-type", "").split(";")[0], "application/json",
                "Content-Type of the 404")


def test_scripted_sequence_on_two_streams(server):
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL, pools=GA)
    other_id = uid("st")
    create_event(c, other_id, sections=SMALL, pools=GA)
    streams = [_stream(server, event_id), _stream(server, event_id)]
    for stream in streams:
        stream.open()
    elsewhere = _stream(server, other_id)
    elsewhere.open()
    u1, u2, u3, u4 = user(), user(), user(), user()
    steps = []
    h1 = hold(c, event_id, u1, ["S-R-1", "S-R-2"], {"GA": 2})
    steps.append(("hold 2 seats + 2 units", [
        _seat("S-R-1", "held", 2), _seat("S-R-2", "held", 2), _pool("GA", 3, 2, 0)]))
    h2 = hold(c, event_id, u2, ["S-R-3"])
    steps.append(("hold of another seat", [_seat("S-R-3", "held", 2)]))
    order = commit(c, h1["reservation_id"], u1)
    steps.append(("commit", [
        _seat("S-R-1", "sold", 3), _seat("S-R-2", "sold", 3), _pool("GA", 3, 0, 2)]))
    release(c, h2["reservation_id"], u2)
    steps.append(("release of the other hold", [_seat("S-R-3", "available", 3)]))
    expect(c.post("/v1/orders/%s/cancel" % order["order_id"], {"user_id": u1}), 200)
    steps.append(("cancel", [
        _seat("S-R-1", "available", 4), _seat("S-R-2", "available", 4), _pool("GA", 5, 0, 0)]))
    booked = expect(c.post("/v1/events/%s/bookings" % event_id, {
        "user_id": u4, "seats": [{"id": "S-R-6", "version": 1}], "pools": {"GA": 1}}), 201)
    check_equal(booked["seats"], ["S-R-6"], "booking")
    steps.append(("booking", [_seat("S-R-6", "sold", 2), _pool("GA", 4, 0, 1)]))
    # A failed request changes nothing, so it shows nothing.
    expect(post_hold(c, event_id, user(), ["S-R-6"]), 409, "seats_unavailable")
    for index, stream in enumerate(streams):
        for what, group in steps:
            _expect_group(stream, group, "stream %d: %s" % (index + 1, what))
    # Just after a keepalive, so that no keepalive (nor any request) wakes the server up while
    # the hold below lapses: its expiry must come from the server's own timer.
    keepalive = streams[0].next(wait_s=12.0, comments=True, scaled=False)
    check_equal(keepalive, ("comment", "keepalive"), "a keepalive before the expiry step")
    h3 = hold(c, event_id, u3, ["S-R-4"], {"GA": 1}, ttl_s=1)
    held_at = time.monotonic()
    c.close()   # no other traffic from here on
    expiry = [_seat("S-R-4", "available", 3), _pool("GA", 4, 0, 1)]
    for index, stream in enumerate(streams):
        _expect_group(stream, [_seat("S-R-4", "held", 2), _pool("GA", 3, 1, 1)],
                      "stream %d: hold with ttl 1 s" % (index + 1))
        # Expired at 1 s; "promptly": within 3 s of the answer, not stretched for slow builds.
        _expect_group(stream, expiry, "stream %d: expiry without traffic, within 3 s"
                      % (index + 1), wait_s=max(0.1, held_at + 3.0 - time.monotonic()),
                      scaled=False)
        if index == 0:
            print("    # expiry events %.2f s after the hold's answer" %
                  (time.monotonic() - held_at))
    for index, stream in enumerate(streams):
        _expect_quiet(stream, 0.5, "stream %d after the script" % (index + 1))
    _expect_quiet(elsewhere, 0.1, "the stream of another event")
    c = server.client()
    check_equal(get_event(c, event_id)["counts"], {"available": 5, "held": 0, "sold": 1},
                "counts at the end")
    check(0 < h3["expires_in_ms"] <= 1000, "ttl 1 s: expires_in_ms %r" % h3["expires_in_ms"])


test_scripted_sequence_on_two_streams.weight = 3.0


def test_best_available_changes_streamed(server):
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL)
    stream = _stream(server, event_id)
    stream.open()
    h = expect(post_hold(c, event_id, user(), best_available={"count": 2}), 201)
    check_equal(sorted(h["seats"]), ["S-R-3", "S-R-4"], "best pair of a 6-seat row")
    _expect_group(stream, [_seat("S-R-3", "held", 2), _seat("S-R-4", "held", 2)],
                  "best_available hold")


def test_many_changes_in_order(server):
    """Many small changes from several clients at once: every stream sees each seat's versions
    in increasing order with no gap, and all streams see the same sequence."""
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=[{"id": "S", "price": 1, "rows": [
        {"id": "R", "seats": 40}]}])
    streams = [_stream(server, event_id) for _ in range(3)]
    for stream in streams:
        stream.open()
    workers = 8
    rounds = 15

    def work(index):
        client = server.client()
        owner = user()
        seats = ["S-R-%d" % (index * 5 + n) for n in range(1, 6)]
        for _ in range(rounds):
            h = hold(client, event_id, owner, seats)
            release(client, h["reservation_id"], owner)

    run_threads(workers, lambda index, barrier: work(index))
    total = workers * rounds * 5 * 2
    sequences = []
    for index, stream in enumerate(streams):
        seen = []
        for _ in range(total):
            name, data = stream.next_json()
            check_equal(name, "seat", "stream %d: event kind" % (index + 1))
            seen.append((data["id"], data["status"], data["version"]))
        versions = {}
        for seat_id, status, version in seen:
            previous = versions.get(seat_id, 1)
            check_equal(version, previous + 1, "stream %d: next version of %s" % (index + 1,
                                                                                   seat_id))
            check_equal(status, "held" if version % 2 == 0 else "available",
                        "stream %d: status of %s at version %d" % (index + 1, seat_id, version))
            versions[seat_id] = version
        check_equal(len(versions), workers * 5, "stream %d: seats seen" % (index + 1))
        sequences.append(seen)
        _expect_quiet(stream, 0.2, "stream %d after the changes" % (index + 1))
    check(sequences[0] == sequences[1] == sequences[2], "the streams saw the same sequence")


def test_keepalive(server):
    """`: keepalive` at least every 15 s: the first within 15 s of the snapshot, the next within
    15 s of the first (a fixed duration of the contract, not stretched for slow builds)."""
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL)
    stream = _stream(server, event_id)
    stream.open()
    started = time.monotonic()
    for which in ("first", "second"):
        item = stream.next(wait_s=15.5, comments=True, scaled=False)
        elapsed = time.monotonic() - started
        print("    # %s keepalive after %.1f s" % (which, elapsed))
        check(item is not None, "no %s keepalive within 15 s (eof %s)" % (which, stream.eof))
        check_equal(item, ("comment", "keepalive"), "the %s keepalive comment" % which)
        started = time.monotonic()


test_keepalive.weight = 3.0


def test_api_key():
    key = "stream-key-" + uid("k")
    server = Server(api_key=key).start()
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL)
    path = "/v1/events/%s/stream" % event_id
    bare = Stream(server.port, path)
    check_equal(bare.read_head(), 401, "stream without a key")
    body = bare.body_to_end()
    check(b"unauthorized" in body, "401 body names unauthorized: %r" % body[:200])
    wrong = Stream(server.port, path + "?access_token=nope")
    check_equal(wrong.read_head(), 401, "stream with a wrong access_token")
    by_query = Stream(server.port, path + "?access_token=" + key)
    snapshot = by_query.open()
    check_equal(snapshot["id"], event_id, "snapshot with access_token")
    by_header = Stream(server.port, path, headers={"Authorization": "Bearer " + key})
    by_header.open()
    # The query key is for streams only.
    plain = server.client(api_key=None)
    expect(plain.get("/v1/events/%s?access_token=%s" % (event_id, key)), 401, "unauthorized",
           what="access_token on a non-stream route")
    hold(c, event_id, user(), ["S-R-1"])
    for stream in (by_query, by_header):
        _expect_group(stream, [_seat("S-R-1", "held", 2)], "a change on an authorized stream")
    server.stop()


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class BoundedQuarantineServer(Server):
    """For a memory measurement: under AddressSanitizer, freed memory sits in a quarantine of
    256 MiB by default, which would count as growth; cap it for this server only."""

    def _spawn(self, environment):
        environment = dict(environment)
        extra = "quarantine_size_mb=4:thread_local_quarantine_size_kb=64"
        previous = environment.get("ASAN_OPTIONS")
        environment["ASAN_OPTIONS"] = previous + ":" + extra if previous else extra
        return Server._spawn(self, environment)


SLOW_READERS = 20


def test_slow_reader_is_cut_off():
    """SLOW_READERS streams with a tiny receive buffer that are never read while about 10 MB of
    changes are published: each is disconnected; memory stays bounded (if the server buffered
    all for each slow reader, it would grow by about SLOW_READERS x 7 MB); a fast reader gets
    everything; other clients' requests succeed."""
    server = BoundedQuarantineServer().start()
    c = server.client()
    event_id = uid("slow")
    rows = 40
    create_event(c, event_id, sections=[{"id": "S", "price": 1, "rows": [
        {"id": "R%d" % r, "seats": 100} for r in range(1, rows + 1)]}], max_seats_per_hold=50)
    slow_readers = [_stream(server, event_id, rcvbuf=4096) for _ in range(SLOW_READERS)]
    fast = _stream(server, event_id)
    fast.open()
    fast_state = {"stop": False, "error": None}

    def read_fast():
        try:
            while not fast_state["stop"] and not fast.eof:
                fast._recv(0.2)
        except Exception as error:  # noqa: B902 (reported below)
            fast_state["error"] = error

    reader = threading.Thread(target=read_fast, daemon=True)
    reader.start()
    time.sleep(0.2)
    rss_before = _rss_kib(server.process.pid)
    workers = 8
    pairs = 3000
    per_worker = pairs // workers
    seats_per_hold = 25
    parent = _context()
    failures = []
    probe_times = []
    done = threading.Event()

    def work(index):
        _adopt(parent)
        client = server.client()
        owner = user()
        for i in range(per_worker):
            row = 1 + (index * 5 + i % 5)
            seats = ["S-R%d-%d" % (row, n) for n in range(1, seats_per_hold + 1)]
            response = post_hold(client, event_id, owner, seats)
            if response.status != 201:
                failures.append(("hold", response.status, response.body[:200]))
                return
            response = client.post("/v1/holds/%s/release" % response.json["reservation_id"],
                                   {"user_id": owner})
            if response.status != 200:
                failures.append(("release", response.status, response.body[:200]))
                return

    def probe():
        _adopt(parent)
        client = server.client()
        while not done.is_set():
            started = time.monotonic()
            response = client.get("/v1/events/%s" % event_id)
            probe_times.append(time.monotonic() - started)
            if response.status != 200:
                failures.append(("probe", response.status, response.body[:200]))
                return
            time.sleep(0.02)

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(workers)]
    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout(120))
    done.set()
    prober.join(timeout(10))
    churn_s = time.monotonic() - started
    check(not any(t.is_alive() for t in threads), "workers still running")
    check_equal(failures, [], "requests that failed during the churn")
    rss_after = _rss_kib(server.process.pid)
    changes = workers * per_worker * seats_per_hold * 2
    print("    # %d holds+releases (%d seat changes) in %.1f s; probe: %d requests, max %.1f ms,"
          " mean %.1f ms; VmRSS %d -> %d KiB" % (
              workers * per_worker, changes, churn_s, len(probe_times),
              1000 * max(probe_times or [0]), 1000 * sum(probe_times) / max(1, len(probe_times)),
              rss_before, rss_after))
    check(len(probe_times) > 0, "the probe ran")
    check(rss_after - rss_before < 64 * 1024,
          "VmRSS grew by %d KiB (%d -> %d) with %d slow readers" % (
              rss_after - rss_before, rss_before, rss_after, SLOW_READERS))
    # The fast reader got every change.
    deadline = time.monotonic() + timeout(20)
    while time.monotonic() < deadline:
        if fast.text.count(b"event: seat") >= changes or fast.eof:
            break
        time.sleep(0.1)
    fast_state["stop"] = True
    reader.join(timeout(5))
    check(fast_state["error"] is None, "fast reader error %r" % fast_state["error"])
    check(not fast.eof, "the fast reader was disconnected")
    check_equal(fast.text.count(b"event: seat"), changes, "seat events of the fast reader")
    # The slow readers: what the server had buffered, then the end of the connection.
    deadline = time.monotonic() + timeout(30)
    for index, slow in enumerate(slow_readers):
        while not slow.eof and time.monotonic() < deadline:
            slow._recv(deadline - time.monotonic())
        if index == 0:
            print("    # a slow reader got %d body bytes of %d, eof %s" % (
                slow.body_bytes, fast.body_bytes, slow.eof))
        check_equal(slow.status, 200, "slow reader %d: the stream had started" % index)
        check(slow.eof, "slow reader %d was never disconnected (got %d of %d bytes)" % (
            index, slow.body_bytes, fast.body_bytes))
        check(slow.body_bytes < fast.body_bytes, "slow reader %d got everything (%d bytes)"
              % (index, slow.body_bytes))
    # The server is healthy afterwards. A new connection: c has been idle through the churn,
    # which on a loaded machine can outlast the server's idle timeout (HF_HTTP_IDLE_TIMEOUT_MS),
    # and a closed idle connection is the server doing its job.
    check_equal(get_event(server.client(), event_id)["counts"],
                {"available": rows * 100, "held": 0, "sold": 0}, "counts after the churn")
    server.stop()


test_slow_reader_is_cut_off.weight = 5.0


def test_sigterm_with_open_streams():
    server = Server().start()
    c = server.client()
    event_id = uid("st")
    create_event(c, event_id, sections=SMALL)
    streams = [_stream(server, event_id) for _ in range(3)]
    for stream in streams:
        stream.open()
    hold(c, event_id, user(), ["S-R-1"])
    _expect_group(streams[0], [_seat("S-R-1", "held", 2)], "before the stop")
    half_open = _stream(server, event_id)     # request sent, answer never read
    started = time.monotonic()
    code = server.stop()
    print("    # stopped in %.2f s with 4 open streams" % (time.monotonic() - started))
    check_equal(code, 0, "exit code")
    for index, stream in enumerate(streams):
        deadline = time.monotonic() + timeout(5)
        while not stream.eof and time.monotonic() < deadline:
            stream._recv(deadline - time.monotonic())
        check(stream.eof, "stream %d closed by the stop" % (index + 1))
    half_open.close()


# ---- ids and resuming with Last-Event-ID --------------------------------------------------

WINDOW = 10000      # changes of one event a reconnect can be given again (API.md section 5)
WINDOWS = 64        # events with a window at once (HF_STREAM_REPLAY_EVENTS_MAX)


def _resume(server, event_id, last_id, **kwargs):
    """A stream that reconnects with Last-Event-ID last_id (a string, sent as it is)."""
    return _stream(server, event_id, headers={"Last-Event-ID": last_id}, **kwargs)


def _with_id(stream, what, wait_s=10.0):
    """The next event as (id, name, data): it must carry a decimal id."""
    item = stream.next(wait_s)
    check(item is not None, "%s: no event within %.1f s (eof %s)" % (what, timeout(wait_s),
                                                                     stream.eof))
    event_id = stream.event_id
    check(event_id is not None and event_id.isdigit(), "%s: %s event with id %r" % (
        what, item[0], event_id))
    check(int(event_id) < 2 ** 63, "%s: id %s passes int64" % (what, event_id))
    try:
        data = json.loads(item[1])
    except ValueError:
        fail("%s: event %s data is not JSON: %r" % (what, item[0], item[1][:300]))
    return int(event_id), item[0], data


def _open_with_id(stream, what):
    """Head and snapshot of a stream; returns (snapshot id, snapshot)."""
    check_equal(stream.read_head(), 200, "%s: status" % what)
    event_id, name, data = _with_id(stream, what)
    check_equal(name, "snapshot", "%s: first event" % what)
    return event_id, data


def _changes(stream, count, what):
    return [_with_id(stream, "%s, event %d of %d" % (what, index + 1, count))
            for index in range(count)]


def _check_increasing(ids, after, what):
    previous = after
    for event_id in ids:
        check(event_id > previous, "%s: id %d after %d" % (what, event_id, previous))
        previous = event_id


def test_every_event_has_an_increasing_id(server):
    c = server.client()
    event_id = uid("sid")
    create_event(c, event_id, sections=SMALL, pools=GA)
    first = _stream(server, event_id)
    snapshot_id, _ = _open_with_id(first, "first stream")
    u = user()
    h = hold(c, event_id, u, ["S-R-1", "S-R-2"], {"GA": 2})
    commit(c, h["reservation_id"], u)
    h2 = hold(c, event_id, u, ["S-R-3"])
    release(c, h2["reservation_id"], u)
    seen = _changes(first, 3 + 3 + 1 + 1, "first stream")
    _check_increasing([event_id for event_id, _, _ in seen], snapshot_id, "first stream")
    check_equal(sorted(name for _, name, _ in seen), ["pool"] * 2 + ["seat"] * 6, "kinds")
    # A snapshot carries the id of the newest change it shows.
    second = _stream(server, event_id)
    second_id, snapshot = _open_with_id(second, "second stream")
    check_equal(second_id, seen[-1][0], "snapshot id = id of the last change before it")
    check_equal(snapshot["counts"], {"available": 4, "held": 0, "sold": 2}, "second snapshot")
    hold(c, event_id, u, ["S-R-4"])
    for stream, what in ((first, "first stream"), (second, "second stream")):
        live_id, name, data = _with_id(stream, what + ", live")
        check_equal((name, data), _seat("S-R-4", "held", 2), what + ": live change")
        check(live_id > second_id, "%s: live id %d after %d" % (what, live_id, second_id))


def test_reconnect_replays_missed_changes(server):
    """Changes made while a client was away (nobody else subscribed either) come back in order
    with the ids the connected stream gave them, then the live ones, with no gap and no
    duplicate."""
    c = server.client()
    event_id = uid("sre")
    create_event(c, event_id, sections=SMALL, pools=GA)
    watcher = _stream(server, event_id)
    watcher_id, _ = _open_with_id(watcher, "watcher")
    away = _stream(server, event_id)
    away_id, _ = _open_with_id(away, "client")
    check_equal(away_id, watcher_id, "two snapshots of the same state")
    u1, u2 = user(), user()
    h1 = hold(c, event_id, u1, ["S-R-1"])
    before = _with_id(away, "client before leaving")
    check_equal(before[1:], _seat("S-R-1", "held", 2), "client's last change")
    check_equal(_with_id(watcher, "watcher"), before, "the watcher saw the same")
    away.close()
    watcher.close()   # nobody subscribed while the changes are made
    time.sleep(0.2)
    h2 = hold(c, event_id, u2, ["S-R-2", "S-R-3"], {"GA": 2})
    commit(c, h1["reservation_id"], u1)
    release(c, h2["reservation_id"], u2)
    missed = [
        [_seat("S-R-2", "held", 2), _seat("S-R-3", "held", 2), _pool("GA", 3, 2, 0)],
        [_seat("S-R-1", "sold", 3)],
        [_seat("S-R-2", "available", 3), _seat("S-R-3", "available", 3), _pool("GA", 5, 0, 0)]]
    back = _resume(server, event_id, str(before[0]))
    check_equal(back.read_head(), 200, "status of the reconnect")
    check_equal(back.headers.get("content-type", "").split(";")[0], "text/event-stream",
                "Content-Type of the reconnect")
    replayed = _changes(back, sum(len(group) for group in missed), "replay")
    check_equal([event_id for event_id, _, _ in replayed],
                list(range(before[0] + 1, before[0] + 1 + len(replayed))),
                "replayed ids: every change after the client's, one by one")
    at = 0
    for index, group in enumerate(missed):
        # Within one request the order is free, the order of requests is not.
        got = [(name, data) for _, name, data in replayed[at:at + len(group)]]
        key = lambda item: json.dumps(item, sort_keys=True)  # noqa: E731
        check_equal(sorted(got, key=key), sorted(group, key=key), "replayed change %d" % index)
        at += len(group)
    # Then the live changes, right after the replayed ones.
    hold(c, event_id, u1, ["S-R-6"])
    live = _with_id(back, "live after the replay")
    check_equal(live, (replayed[-1][0] + 1,) + _seat("S-R-6", "held", 2), "first live change")
    _expect_quiet(back, 0.3, "after the live change")
    # A client that missed nothing gets no snapshot: the next change comes first.
    current = _resume(server, event_id, str(live[0]))
    check_equal(current.read_head(), 200, "status of an up-to-date reconnect")
    release(c, hold(c, event_id, u2, ["S-R-5"])["reservation_id"], u2)
    check_equal(_with_id(current, "up to date"), (live[0] + 1,) + _seat("S-R-5", "held", 2),
                "up-to-date reconnect: the next change first")
    check_equal(_with_id(current, "up to date"),
                (live[0] + 2,) + _seat("S-R-5", "available", 3), "and the one after")
    check_equal(_with_id(back, "replayed stream")[0], live[0] + 1, "the other stream too")


def _read_events(stream, count, wait_s=20.0):
    """count events read in one pass (a replay of thousands would make next() quadratic), as
    (id, name, data text); fewer when the stream stops."""
    deadline = time.monotonic() + timeout(wait_s)
    while stream.text.count(b"\n\n") < count and time.monotonic() < deadline and not stream.eof:
        stream._recv(deadline - time.monotonic())
    blocks = stream.text.split(b"\n\n")
    stream.text = b"\n\n".join(blocks[count:])
    events = []
    for block in blocks[:count]:
        fields = {}
        for line in block.decode("utf-8").split("\n"):
            name, _, value = line.partition(": ")
            fields[name] = value
        if "id" in fields:
            events.append((int(fields["id"]), fields.get("event"), fields.get("data")))
    return events


def test_id_older_than_the_window_gets_a_snapshot(server):
    seats = 1000
    c = server.client()
    event_id = uid("sold")
    create_event(c, event_id, sections=[{"id": "S", "price": 1, "rows": [
        {"id": "R", "seats": seats}]}], max_seats_per_hold=seats, max_seats_per_user=0)
    first = _stream(server, event_id)
    start_id, _ = _open_with_id(first, "first stream")
    first.close()     # the window keeps the changes with nobody subscribed
    u = user()
    rounds = 6        # each a hold of every seat and its release: 12,000 changes
    for _ in range(rounds):
        h = hold(c, event_id, u, best_available={"count": seats})
        release(c, h["reservation_id"], u)
    total = rounds * 2 * seats
    last_id = start_id + total
    oldest_kept = last_id - WINDOW    # a client with this id can be given the whole window
    for too_old in (start_id, oldest_kept - 1):
        stream = _resume(server, event_id, str(too_old))
        snapshot_id, snapshot = _open_with_id(stream, "Last-Event-ID %d" % too_old)
        check_equal(snapshot_id, last_id, "a fresh snapshot's id")
        check_equal(snapshot["counts"], {"available": seats, "held": 0, "sold": 0},
                    "the snapshot's counts")
        stream.close()
    stream = _resume(server, event_id, str(oldest_kept))
    check_equal(stream.read_head(), 200, "status of a reconnect at the window's oldest")
    events = _read_events(stream, WINDOW)
    check_equal(len(events), WINDOW, "changes replayed")
    check_equal([event_id for event_id, _, _ in events], list(range(oldest_kept + 1, last_id + 1)),
                "ids replayed")
    check(all(name == "seat" for _, name, _ in events), "only seat changes")
    # The window holds the last 5 rounds: versions 4 to 13 of every seat, in order (a seat
    # starts at version 1, and round k holds it at version 2k and releases it at 2k + 1).
    versions = {}
    for _, _, data in events:
        change = json.loads(data)
        expected = versions.get(change["id"], 3) + 1
        check_equal(change["version"], expected, "version of %s" % change["id"])
        check_equal(change["status"], "held" if expected % 2 == 0 else "available",
                    "status of %s at version %d" % (change["id"], expected))
        versions[change["id"]] = expected
    check_equal(len(versions), seats, "seats replayed")
    check_equal(set(versions.values()), {2 * rounds + 1}, "last versions")


test_id_older_than_the_window_gets_a_snapshot.weight = 2.0


def test_garbage_and_future_ids_get_a_snapshot(server):
    c = server.client()
    event_id = uid("sga")
    create_event(c, event_id, sections=SMALL)
    stream = _stream(server, event_id)
    snapshot_id, _ = _open_with_id(stream, "stream")
    hold(c, event_id, user(), ["S-R-1"])
    last_id = _with_id(stream, "stream")[0]
    check_equal(last_id, snapshot_id + 1, "the change after the snapshot")
    values = ["", "abc", "-1", "0", "1e3", "0x10", "%d.0" % last_id, "%dx" % last_id,
              str(last_id + 1), str(last_id + 1000), str(last_id + 2 ** 20), str(2 ** 63),
              "9" * 30, str(snapshot_id - 1)]
    for value in values:
        other = _resume(server, event_id, value)
        other_id, snapshot = _open_with_id(other, "Last-Event-ID %r" % value)
        check_equal(other_id, last_id, "Last-Event-ID %r: the snapshot's id" % value)
        check_equal(snapshot["counts"]["held"], 1, "Last-Event-ID %r: the snapshot" % value)
        other.close()


def test_id_of_an_earlier_run_gets_a_snapshot():
    server = Server().start()
    c = server.client()
    event_id = uid("srun")
    create_event(c, event_id, sections=SMALL)
    stream = _stream(server, event_id)
    first_snapshot, _ = _open_with_id(stream, "first run")
    u = user()
    h = hold(c, event_id, u, ["S-R-1"])
    first_run_id = _with_id(stream, "first run")[0]
    check_equal(server.stop(), 0, "exit code")
    server = server.restart()
    c = server.client()
    stream = _stream(server, event_id)
    second_snapshot, _ = _open_with_id(stream, "second run")
    check(second_snapshot > first_run_id, "second run's snapshot id %d after the first run's %d"
          % (second_snapshot, first_run_id))
    # More changes than the first run made: a per-run counter would now reach its ids.
    release(c, h["reservation_id"], u)
    for seat in ("S-R-2", "S-R-3", "S-R-4"):
        hold(c, event_id, u, [seat])
    second_run = _changes(stream, 4, "second run")
    for value in (first_snapshot, first_run_id):
        late = _resume(server, event_id, str(value))
        late_id, snapshot = _open_with_id(late, "Last-Event-ID %d of the first run" % value)
        check_equal(late_id, second_run[-1][0], "snapshot id")
        check_equal(snapshot["counts"], {"available": 3, "held": 3, "sold": 0}, "snapshot")
        late.close()
    # And an id of this run still resumes.
    resumed = _resume(server, event_id, str(second_snapshot))
    check_equal(resumed.read_head(), 200, "status")
    check_equal(_changes(resumed, 4, "resumed in the second run"), second_run, "replay")
    server.stop()


def test_least_recently_subscribed_window_is_dropped(fresh):
    c = fresh.client()
    events = [uid("slru") for _ in range(WINDOWS + 1)]
    positions = []
    for event_id in events:
        create_event(c, event_id, sections=SMALL)
        stream = _stream(fresh, event_id)
        positions.append(_open_with_id(stream, event_id)[0])
        stream.close()
        if event_id == events[-2]:
            time.sleep(0.2)   # every earlier stream is seen closed
    # The last subscription took the window of the first event; the second's is kept.
    kept = _resume(fresh, events[1], str(positions[1]))
    check_equal(kept.read_head(), 200, "status")
    hold(c, events[1], user(), ["S-R-1"])
    check_equal(_with_id(kept, "second event")[1:], _seat("S-R-1", "held", 2),
                "the second event resumes: its change, no snapshot")
    dropped = _resume(fresh, events[0], str(positions[0]))
    check_equal(_open_with_id(dropped, "first event")[0] > positions[0], True,
                "the first event's window was dropped: a snapshot in a new epoch")


class SlowSyncServer(Server):
    """Every sync of the store's log waits SYNC_DELAY_MS: a change stays in flight (applied,
    not yet durable) long enough for clients to connect meanwhile."""

    SYNC_DELAY_MS = 600

    def _spawn(self, environment):
        environment = dict(environment)
        environment["HOLDFAST_FAULT_SYNC_DELAY_MS"] = str(self.SYNC_DELAY_MS)
        return Server._spawn(self, environment)


def test_change_in_flight_at_connect_comes_once():
    """A change applied but not yet durable when a client connects: a fresh snapshot shows it
    (and carries its id), so it is not sent again; a resumed client gets it live, after the
    replay."""
    server = SlowSyncServer().start()
    c = server.client()
    event_id = uid("sfl")
    create_event(c, event_id, sections=SMALL)
    watcher = _stream(server, event_id)
    _open_with_id(watcher, "watcher")
    u = user()
    hold(c, event_id, u, ["S-R-1"])
    first_id = _with_id(watcher, "watcher")[0]
    parent = _context()
    answers = []

    def hold_in_flight():
        _adopt(parent)
        answers.append(post_hold(server.client(), event_id, u, ["S-R-2"]).status)

    thread = threading.Thread(target=hold_in_flight, daemon=True)
    thread.start()
    time.sleep(0.2)     # applied at once, durable only after the slow sync
    fresh = _stream(server, event_id)
    resumed = _resume(server, event_id, str(first_id))
    thread.join(timeout(10))
    check_equal(answers, [201], "the hold in flight")
    fresh_id, snapshot = _open_with_id(fresh, "fresh client")
    check_equal(fresh_id, first_id + 1, "the snapshot's id: the change in flight")
    check_equal(snapshot["counts"]["held"], 2, "the snapshot shows the change in flight")
    check_equal(resumed.read_head(), 200, "status of the resumed client")
    hold(c, event_id, u, ["S-R-3"])
    check_equal(_with_id(fresh, "fresh client"), (first_id + 2,) + _seat("S-R-3", "held", 2),
                "fresh client: the next change only")
    for stream, what in ((resumed, "resumed client"), (watcher, "watcher")):
        check_equal(_with_id(stream, what), (first_id + 1,) + _seat("S-R-2", "held", 2),
                    what + ": the change in flight, live")
        check_equal(_with_id(stream, what), (first_id + 2,) + _seat("S-R-3", "held", 2),
                    what + ": then the next")
    server.stop()
