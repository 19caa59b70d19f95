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
        event, data, comments = "message", [], []
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
        if not data and comments:
            return ("comment", " ".join(comments))
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
    # The server is healthy afterwards.
    check_equal(get_event(c, event_id)["counts"], {"available": rows * 100, "held": 0, "sold": 0},
                "counts after the churn")
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
