"""The command line (API.md section 0): `holdfast --version` and `holdfast serve --help` print to
standard output and exit 0; options are written `--name value` or `--name=value`, each also read
from its environment variable, the command line winning; a refused option or value exits 2 with
exactly one line on standard error that names it, and nothing on standard output. The
commands through a server take --server HOST:PORT as http://; backup keeps the token secret;
a start that cannot listen creates nothing."""

import json
import os
import re
import shutil
import socket
import subprocess
import time
import uuid

import harness
from harness import Server, check, check_equal, expect, free_port, make_temp_dir, timeout

VERSION_RE = re.compile(r"^holdfast \d+\.\d+\.\d+\n$")
# HF_CORS_ORIGINS_MAX (src/lib/limits.h).
CORS_ORIGINS_MAX = 16


def _environment(extra=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("HOLDFAST_")}
    environment.update(extra or {})
    return environment


def _run(arguments, environment=None):
    """Runs the binary to its end; (exit code, stdout, stderr)."""
    label = "holdfast %s" % " ".join(arguments)
    try:
        done = subprocess.run([harness.BINARY] + arguments, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=_environment(environment), timeout=timeout(10))
    except subprocess.TimeoutExpired:
        harness.fail("%s: did not exit within %.0f s" % (label, timeout(10)))
    return (done.returncode, done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"))


def _serve(*options):
    """serve with a fresh port and a data directory that must not be created by a refusal."""
    data = os.path.join(make_temp_dir(), "data")
    return ["serve", "--listen", "127.0.0.1:%d" % free_port(), "--data", data] + list(options)


def _refused(arguments, names, environment=None, also=()):
    """Exit 2, nothing on stdout, one line on stderr beginning "holdfast: " that contains each
    of names (the option or variable refused) and each text of also (what is wrong)."""
    label = "holdfast %s%s" % (" ".join(arguments), " with %s" % environment if environment
                               else "")
    code, out, err = _run(arguments, environment)
    check_equal(code, 2, "%s: exit code (stderr %r)" % (label, err))
    check_equal(out, "", "%s: standard output" % label)
    lines = err.splitlines()
    check(len(lines) == 1 and err.endswith("\n"),
          "%s: expected one line on standard error, got %r" % (label, err))
    check(lines[0].startswith("holdfast: "), "%s: %r does not begin with holdfast:" % (
        label, lines[0]))
    for text in ([names] if isinstance(names, str) else names) + list(also):
        check(text in lines[0], "%s: %r does not say %r" % (label, lines[0], text))
    for argument in arguments:
        if argument.endswith("/data"):
            check(not os.path.exists(argument), "%s: the data directory was created" % label)
    return lines[0]


class _Server(Server):
    """A server started with exactly the given options and environment variables."""

    def __init__(self, options, environment=None):
        super().__init__()
        self.options = options
        self.environment = environment or {}

    def command(self):
        return [self.binary] + [option.format(port=self.port, data=self.data_dir)
                                for option in self.options]

    def _spawn(self, environment):
        environment = dict(environment)
        environment.update(self.environment)
        super()._spawn(environment)


def _status(server, api_key):
    client = server.client(api_key=api_key)
    status = client.get("/v1/events").status
    client.close()
    return status


# ---- what exits 0 ----

def test_version():
    code, out, err = _run(["--version"])
    check_equal((code, err), (0, ""), "holdfast --version: exit code and stderr")
    check(VERSION_RE.match(out), "holdfast --version printed %r" % out)


def test_help():
    for arguments in (["serve", "--help"], ["--help"], ["-h"], ["serve", "-h"],
                      ["serve", "--listen", "127.0.0.1:1", "--help"]):
        code, out, err = _run(arguments)
        label = "holdfast %s" % " ".join(arguments)
        check_equal((code, err), (0, ""), "%s: exit code and stderr" % label)
        check(out.startswith("usage: holdfast serve --listen HOST:PORT --data DIR"),
              "%s: the usage on stdout, got %r" % (label, out[:200]))
        for option in ("--listen", "--data", "--api-key", "--token-secret", "--webhook-secret",
                       "--store", "--finished-holds", "--cors-origin", "HOLDFAST_CORS_ORIGINS",
                       "--version"):
            check(option in out, "%s: the usage does not list %s" % (label, option))


# ---- refusals: exit 2, one line naming what is refused ----

def test_refused_commands():
    _refused([], "no command", also=["serve", "--version", "--help"])
    _refused(["nope"], '"nope"', also=["unknown command", "serve", "--version", "--help"])
    _refused(["--nope"], '"--nope"', also=["unknown command", "serve"])


def test_refused_listen():
    data = os.path.join(make_temp_dir(), "data")
    _refused(["serve", "--data", data], "--listen", also=["missing"])
    _refused(["serve", "--listen", "nope", "--data", data], "--listen",
             also=['"nope"', "HOST:PORT"])
    _refused(["serve", "--listen", "127.0.0.1:70000", "--data", data], "--listen",
             also=["70000", "out of range", "1 to 65535"])
    # 0 would pick a port at random, one no client could know.
    _refused(["serve", "--listen", "127.0.0.1:0", "--data", data], "--listen",
             also=["port 0", "out of range"])
    for value in ("127.0.0.1:", ":8080", "127.0.0.1:80x", "127.0.0.1:-1", "[::1:80",
                  "a b:80", "127.0.0.1:+80"):
        _refused(["serve", "--listen", value, "--data", data], "--listen", also=["HOST:PORT"])
    _refused(["serve", "--listen=127.0.0.1:99999999999999999999", "--data", data], "--listen",
             also=["out of range"])


def test_refused_data():
    _refused(["serve", "--listen", "127.0.0.1:%d" % free_port()], "--data",
             also=["missing", "directory"])
    _refused(["serve", "--listen", "127.0.0.1:%d" % free_port(), "--data", "x" * 5000],
             "--data", also=["longer"])


def test_refused_unknown_option():
    _refused(_serve("--nope"), "--nope", also=["unknown option", "serve --help"])
    _refused(_serve("--nope=1"), "--nope", also=["unknown option"])
    _refused(_serve("stray"), '"stray"', also=["unexpected argument"])
    _refused(_serve("--demo=yes"), "--demo", also=["no value"])


def test_refused_missing_value():
    for option in ("--api-key", "--token-secret", "--webhook-secret", "--store",
                   "--finished-holds", "--cors-origin"):
        _refused(_serve(option), option, also=["needs a value"])
        _refused(_serve(option + "="), option, also=["needs a value"])
        _refused(_serve(option, ""), option, also=["needs a value"])
    # A value that looks like the next option is a forgotten value, not a key.
    data = os.path.join(make_temp_dir(), "data")
    _refused(["serve", "--api-key", "--listen", "127.0.0.1:1", "--data", data], "--api-key",
             also=["needs a value"])
    _refused(["serve", "--listen"], "--listen", also=["needs a value"])


def test_refused_twice_and_control_characters():
    _refused(_serve("--store", "sqlite:/tmp/a.db", "--store=sqlite:/tmp/b.db"), "--store",
             also=["twice"])
    _refused(_serve("--api-key", "a\nb"), "--api-key", also=["control character"])
    _refused(_serve(), "HOLDFAST_WEBHOOK_SECRET", environment={"HOLDFAST_WEBHOOK_SECRET": "a\tb"},
             also=["control character"])


def test_refused_finished_holds():
    _refused(_serve("--finished-holds", "abc"), "--finished-holds",
             also=['"abc"', "0 to 10000000"])
    _refused(_serve("--finished-holds=10000001"), "--finished-holds", also=["0 to 10000000"])
    _refused(_serve(), "HOLDFAST_FINISHED_HOLDS", environment={"HOLDFAST_FINISHED_HOLDS": "-1"},
             also=['"-1"'])


def test_refused_store():
    _refused(_serve("--store", "nope"), "--store", also=['"nope"', "sqlite:PATH"])
    _refused(_serve("--store", "sqlite:"), "--store", also=["sqlite:PATH"])
    _refused(_serve(), "HOLDFAST_STORE", environment={"HOLDFAST_STORE": "mysql://x"},
             also=["mysql://x"])


def test_refused_token_secret():
    """A token secret shorter than 16 bytes could be guessed from one token; one longer than
    1,024 bytes is a mistake (a file pasted whole): both refused, and the secret never quoted."""
    line = _refused(_serve("--token-secret", "fifteen-bytes!!"), "--token-secret",
                    also=["15 bytes", "16"])
    check("fifteen" not in line, "the refusal quotes the secret: %r" % line)
    _refused(_serve("--token-secret=short"), "--token-secret", also=["5 bytes", "16"])
    _refused(_serve(), "HOLDFAST_TOKEN_SECRET", environment={"HOLDFAST_TOKEN_SECRET": "x" * 15},
             also=["15 bytes"])
    line = _refused(_serve("--token-secret", "k" * 1025), "--token-secret",
                    also=["1025 bytes", "1024"])
    check("kkkk" not in line, "the refusal quotes the secret: %r" % line)
    _refused(_serve(), "HOLDFAST_TOKEN_SECRET",
             environment={"HOLDFAST_TOKEN_SECRET": "k" * 1025}, also=["1025 bytes"])


def _admission_token(c, event_id, user_id):
    """Joins the event's room and polls until admitted; the admission token."""
    answer = expect(c.post("/v1/events/%s/queue" % event_id, {"user_id": user_id}), 201)
    deadline = time.monotonic() + timeout(10)
    while answer["status"] != "admitted":
        check(time.monotonic() < deadline, "%s not admitted: %r" % (user_id, answer))
        time.sleep(0.05)
        answer = expect(c.get("/v1/events/%s/queue/%s" % (event_id, answer["ticket"])), 200)
    return answer["admission_token"]


def test_long_token_secret_signs_admissions():
    """API.md section 0: a secret from `openssl rand -base64 64` (88 bytes) is taken as it is,
    and so is one of 1,024 bytes: tokens signed with it admit holds, also after a restart with
    the same secret (HMAC hashes a key longer than its block; the server must not refuse it)."""
    made = subprocess.run(["openssl", "rand", "-base64", "64"], capture_output=True, text=True,
                          check=True)
    secret = made.stdout.replace("\n", "")
    check_equal(len(secret), 88, "openssl rand -base64 64 gives 88 bytes")
    for given in (secret, "s" * 1024):
        server = Server(extra_args=["--token-secret", given]).start()
        c = server.client()
        event_id = "cli_" + uuid.uuid4().hex[:12]
        expect(c.post("/v1/events", {"id": event_id, "sections": [
            {"id": "F", "price": 1, "rows": [{"id": "A", "seats": 4}]}],
            "waiting_room": {"enabled": True, "admit_per_s": 1000}}), 201)
        token = _admission_token(c, event_id, "u1")
        expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": "u1", "seats": ["F-A-1"],
                                                        "admission_token": token}), 201,
               what="a hold admitted by a token of a %d-byte secret" % len(given))
        expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": "u1", "seats": ["F-A-2"],
                                                        "admission_token": token + "x"}), 403,
               "admission_invalid", what="a token altered")
        c.close()
        server.stop()
        again = server.restart()
        c = again.client()
        expect(c.post("/v1/events/%s/holds" % event_id, {"user_id": "u1", "seats": ["F-A-3"],
                                                        "admission_token": token}), 201,
               what="the same token after a restart with the same %d-byte secret" % len(given))
        c.close()
        again.stop()


def test_refused_cors_origin():
    cases = [
        ("*", "not accepted"),
        ("ftp://tickets.example.com", "http or https"),
        ("https://tickets.example.com/", "no trailing slash"),
        ("https://tickets.example.com/box", "no path"),
        ("tickets.example.com", "scheme://host"),
        ("https://", "scheme://host"),
        ("https://Tickets.example.com", "lower case"),
        ("https://tickets.example.com:443", "default port"),
        ("http://tickets.example.com:80", "default port"),
        ("https://tickets.example.com:0", "1 to 65535"),
        ("https://tickets.example.com:65536", "1 to 65535"),
        ("https://user@tickets.example.com", "scheme://host"),
        ("https://tickets.example.com?x=1", "scheme://host"),
        ("http://[::1", "scheme://host"),
    ]
    for value, reason in cases:
        _refused(_serve("--cors-origin", value), "--cors-origin", also=['"%s"' % value, reason])
        _refused(_serve("--cors-origin=https://ok.example", "--cors-origin=" + value),
                 "--cors-origin", also=[reason])
    many = []
    for number in range(CORS_ORIGINS_MAX + 1):
        many += ["--cors-origin", "https://app%d.example" % number]
    _refused(_serve(*many), "--cors-origin", also=["more than 16"])


def test_refused_cors_origins_environment():
    name = "HOLDFAST_CORS_ORIGINS"
    for value, reason in (("*", "not accepted"),
                          ("https://a.example,https://b.example/", "no trailing slash"),
                          ("https://a.example,,https://b.example", "empty origin"),
                          ("https://a.example, ", "empty origin"),
                          (",".join("https://app%d.example" % n for n in range(17)),
                           "more than 16")):
        _refused(_serve(), name, environment={name: value}, also=[reason])


# ---- what starts ----

def test_equals_form_starts():
    """--name=value for every option with a value; the key is in force."""
    server = _Server(["serve", "--listen=127.0.0.1:{port}", "--data={data}", "--api-key=k=1",
                      "--token-secret=sixteen-byte-key", "--webhook-secret=w",
                      "--store=sqlite:{data}/other.db", "--finished-holds=5",
                      "--cors-origin=https://tickets.example.com"]).start()
    check_equal(_status(server, None), 401, "GET /v1/events without the key")
    check_equal(_status(server, "k=1"), 200, "GET /v1/events with the key given as --api-key=k=1")
    check(os.path.exists(os.path.join(server.data_dir, "other.db")),
          "--store=sqlite:DIR/other.db was not used")
    server.stop()
    check_equal(server.stdout_text(), "", "the server's standard output")


def test_flag_wins_over_environment():
    server = _Server(["serve", "--listen", "127.0.0.1:{port}", "--data", "{data}",
                      "--api-key", "from-flag"],
                     {"HOLDFAST_API_KEY": "from-environment"}).start()
    check_equal(_status(server, "from-flag"), 200, "the key of --api-key")
    check_equal(_status(server, "from-environment"), 401, "the key of HOLDFAST_API_KEY")
    server.stop()
    server = _Server(["serve", "--listen", "127.0.0.1:{port}", "--data", "{data}"],
                     {"HOLDFAST_API_KEY": "from-environment"}).start()
    check_equal(_status(server, "from-environment"), 200, "HOLDFAST_API_KEY alone")
    check_equal(_status(server, None), 401, "no key, HOLDFAST_API_KEY set")
    server.stop()


def test_flag_overrides_a_bad_environment_value():
    """Only the value in force is checked: the command line's."""
    server = _Server(["serve", "--listen", "127.0.0.1:{port}", "--data", "{data}",
                      "--finished-holds", "7", "--cors-origin", "https://tickets.example.com"],
                     {"HOLDFAST_FINISHED_HOLDS": "abc", "HOLDFAST_CORS_ORIGINS": "*"}).start()
    server.stop()


def test_cors_origins_start():
    server = _Server(["serve", "--listen", "127.0.0.1:{port}", "--data", "{data}",
                      "--cors-origin", "https://tickets.example.com",
                      "--cors-origin=http://localhost:3000", "--cors-origin", "http://[::1]:8080",
                      "--cors-origin", "https://tickets.example.com"]).start()
    server.stop()
    origins = ",".join(["https://box-office.example", " http://127.0.0.1:5173 "] +
                       ["https://app%d.example" % n for n in range(14)])
    server = _Server(["serve", "--listen", "127.0.0.1:{port}", "--data", "{data}"],
                     {"HOLDFAST_CORS_ORIGINS": origins}).start()
    server.stop()


# ---- the admission tokens' secret (API.md sections 0 and 6) ----

def _token_secret_file(data_dir):
    return os.path.join(data_dir, "token_secret")


def test_token_secret_made_once_and_kept():
    """Without --token-secret, the first start makes DATA/token_secret (64 hex digits, mode
    0600) and every later start reads the same one back; a given secret makes no file."""
    harness.skip_on_postgres("with the PostgreSQL store the secret is kept in PostgreSQL (test_postgres.py)")
    server = Server().start()
    path = _token_secret_file(server.data_dir)
    check(os.path.exists(path), "no token_secret in the data directory after the first start")
    mode = os.stat(path).st_mode & 0o777
    check_equal(oct(mode), oct(0o600), "the token_secret file's mode")
    with open(path) as kept:
        first = kept.read()
    check(re.fullmatch(r"[0-9a-f]{64}\n", first) is not None,
          "token_secret is not 64 hex digits and a newline: %d bytes" % len(first))
    check(first[:64] not in server.stderr_text(), "the secret was logged")
    server.stop()
    again = server.restart()
    again.stop()
    with open(path) as kept:
        check_equal(kept.read(), first, "token_secret after a restart")
    check_equal(oct(os.stat(path).st_mode & 0o777), oct(0o600), "the mode after a restart")
    check_equal(sorted(n for n in os.listdir(server.data_dir) if n.startswith("token_secret")),
                ["token_secret"], "files named token_secret* (no temporary file left)")
    # Another data directory gets another random secret.
    other = Server().start()
    other.stop()
    with open(_token_secret_file(other.data_dir)) as kept:
        check(kept.read() != first, "two data directories made the same secret")
    # A given secret is used as it is: no file is made.
    given = Server(extra_args=["--token-secret", "a secret of at least 16 bytes"]).start()
    given.stop()
    check(not os.path.exists(_token_secret_file(given.data_dir)),
          "token_secret was made although --token-secret was given")


def test_token_secret_damaged_refuses_to_start():
    """A damaged token_secret is not silently replaced (tokens handed out would all fail):
    the server refuses to start, exit 1, with a message naming the file."""
    harness.skip_on_postgres("with the PostgreSQL store the secret is kept in PostgreSQL (test_postgres.py)")
    server = Server().start()
    server.stop()
    path = _token_secret_file(server.data_dir)
    for damaged in ("", "abc\n", "g" * 64 + "\n", "A" * 64 + "\n", "0" * 64 + "\n\n",
                    "0" * 66 + "\n"):
        with open(path, "w") as kept:
            kept.write(damaged)
        broken = Server(data_dir=server.data_dir).start(wait=False)
        code = broken.wait_exit(10)
        if code is None:
            broken.kill()
        check_equal(code, 1, "exit code with token_secret %r" % damaged)
        check("token_secret" in broken.stderr_text() and "damaged" in broken.stderr_text(),
              "the message does not name the damaged file: %r" % broken.stderr_text()[-400:])
    # Deleted, a new one is made and the server starts.
    os.remove(path)
    again = Server(data_dir=server.data_dir).start()
    again.stop()
    check(os.path.exists(path), "token_secret was not made again after being deleted")


# ---- the commands through a server, backup, and a start that cannot listen (issue 27) ----

def _queue_admitted(client, event_id, user_id):
    """The admission token of user_id in event_id's room (admitted at once: 1000/s)."""
    answer = harness.expect(client.post("/v1/events/%s/queue" % event_id, {"user_id": user_id}),
                            201)
    deadline = time.monotonic() + timeout(10)
    while answer["status"] != "admitted":
        check(time.monotonic() < deadline, "not admitted: %r" % answer)
        time.sleep(0.05)
        answer = harness.expect(client.get("/v1/events/%s/queue/%s" % (event_id,
                                                                        answer["ticket"])), 200)
    return answer["admission_token"]


def test_server_without_a_scheme_is_http():
    """--server HOST:PORT is taken as http://HOST:PORT (it exited 1 and blamed https); a
    --server that cannot be one (another scheme, a bad port) is a usage error: exit 2, one
    line naming --server; an unreachable server is a failure, exit 1."""
    server = Server().start()
    c = server.client()
    event_id = harness.uid("cli")
    harness.create_event(c, event_id)
    expected = c.get("/v1/events/" + event_id).json
    for given in ("localhost:%d" % server.port, "127.0.0.1:%d" % server.port,
                  "http://127.0.0.1:%d" % server.port):
        code, out, err = _run(["event", "show", event_id, "--server", given])
        check_equal((code, err), (0, ""), "event show --server %s: exit code and stderr" % given)
        check_equal(json.loads(out), expected, "event show --server %s" % given)
    code, out, err = _run(["orders", "export", "--event", event_id],
                          {"HOLDFAST_SERVER": "127.0.0.1:%d" % server.port})
    check_equal((code, err), (0, ""), "orders export with HOLDFAST_SERVER HOST:PORT")
    check(out.startswith("order_id,"), "the CSV's header: %r" % out[:80])
    for given, says in (("https://127.0.0.1:%d" % server.port, "only http://"),
                        ("ftp://x", "only http://"), ("localhost:99999", "1 to 65535"),
                        ("localhost:0", "1 to 65535"), ("localhost:", "HOST:PORT"),
                        (":%d" % server.port, "HOST:PORT")):
        _refused(["event", "show", event_id, "--server", given], "--server", also=[says])
        _refused(["orders", "export", "--event", event_id], "--server", also=[says],
                 environment={"HOLDFAST_SERVER": given})
    code, out, err = _run(["event", "show", event_id, "--server", "127.0.0.1:%d" % free_port()])
    check_equal(code, 1, "an unreachable server: exit code (stderr %r)" % err)
    check("cannot reach the server" in err, "says why: %r" % err)
    server.stop()
    for arguments in (["--help"], ["event", "--help"], ["orders", "--help"]):
        code, out, err = _run(arguments)
        check("[http://]HOST:PORT" in out and "http:// when no scheme is given" in out,
              "holdfast %s says a --server without a scheme is http://" % " ".join(arguments))


def test_backup_keeps_the_token_secret():
    """holdfast backup --data DIR OUT.db copies DIR/token_secret to OUT.db.token_secret
    (mode 0600, the same bytes): a server restored from both takes the tokens admitted users
    had (restored without it, it made a new secret and refused every one)."""
    harness.skip_on_postgres("holdfast backup reads the SQLite file; PostgreSQL keeps the secret")
    server = Server().start()
    c = server.client()
    event_id = harness.uid("room")
    harness.create_event(c, event_id, waiting_room={"enabled": True, "admit_per_s": 1000})
    token = _queue_admitted(c, event_id, "alice")
    out = os.path.join(make_temp_dir(), "copy.db")
    code, stdout, err = _run(["backup", "--data", server.data_dir, out])
    check_equal((code, err), (0, ""), "backup: exit code and stderr")
    secret = out + ".token_secret"
    check(os.path.exists(secret), "no %s after the backup: %r" % (secret, stdout))
    check("token_secret copied to " + secret in stdout, "backup says so: %r" % stdout)
    check_equal(oct(os.stat(secret).st_mode & 0o777), oct(0o600), "the copy's mode")
    with open(_token_secret_file(server.data_dir)) as kept, open(secret) as copied:
        check_equal(copied.read(), kept.read(), "the copied secret")
    check(not os.path.exists(secret + ".partial"), "the partial file is gone")
    code, stdout, err = _run(["backup", "--data", server.data_dir, out])
    check_equal(code, 1, "a second backup to the same OUT without --force")
    code, stdout, err = _run(["backup", "--data", server.data_dir, out, "--force"])
    check_equal((code, err), (0, ""), "backup --force")
    server.stop()
    data = make_temp_dir()
    shutil.copy(out, os.path.join(data, "holdfast.db"))
    shutil.copy(secret, _token_secret_file(data))
    os.chmod(_token_secret_file(data), 0o600)
    restored = Server(data_dir=data).start()
    response = restored.client().post("/v1/events/%s/holds" % event_id, {
        "user_id": "alice", "seats": ["FLOOR-A-1"], "admission_token": token})
    harness.expect(response, 201, what="a hold with the token admitted before the backup")
    restored.stop()
    # Without --data there is no data directory to take the secret from: the command says so.
    alone = os.path.join(make_temp_dir(), "alone.db")
    code, stdout, err = _run(["backup", "--store", "sqlite:" + os.path.join(data, "holdfast.db"),
                              alone])
    check_equal((code, err), (0, ""), "backup --store: exit code and stderr")
    check("no token_secret copied" in stdout and not os.path.exists(alone + ".token_secret"),
          "backup --store copies no secret, and says so: %r" % stdout)


def test_a_start_that_cannot_listen_creates_nothing():
    """A port in use: serve exits 1 saying so, and the data directory that did not exist
    still does not (no store, no lock, no secret): the address is bound first."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    data = os.path.join(make_temp_dir(), "data")
    try:
        code, out, err = _run(["serve", "--listen", "127.0.0.1:%d" % port, "--data", data])
    finally:
        taken.close()
    check_equal(code, 1, "serve on a port in use: exit code (stderr %r)" % err[-300:])
    check("in use" in err, "the log says the address is in use: %r" % err[-300:])
    check(not os.path.exists(data), "the data directory was created: %r" % (
        os.listdir(data) if os.path.isdir(data) else data))
