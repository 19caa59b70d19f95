"""The waiting room's pre-queue (API.md section 6's opens_at): joins and polls before the opening
answer pre_queue with opens_at and no position, one ticket per user before and after, the
opening gives every pre-queue ticket a distinct place (not simply join order) and later joins go
behind in arrival order, admissions start at the opening, opens_at in the event's settings and
its PATCH rules, bad values refused, and kill -9 right after opens_at brings the same places
back (and a restart before it opens the same way)."""

import datetime
import time

from harness import Server, check, check_equal, create_event, expect, uid

SECRET = "prequeue-test-secret-0123456789abcdef"
SERVER_OPTIONS = {"extra_args": ["--token-secret", SECRET]}
WEIGHT = 2.0


def rfc3339(seconds_from_now):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
        seconds=seconds_from_now)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def room_event(c, opens_in_s, **room):
    event_id = uid("pre")
    settings = {"enabled": True, "opens_at": rfc3339(opens_in_s)}
    settings.update(room)
    create_event(c, event_id, sections=[{"id": "F", "price": 100,
                                         "rows": [{"id": "A", "seats": 50}]}],
                 waiting_room=settings)
    return event_id, settings["opens_at"]


def join(c, event_id, user_id, status):
    return expect(c.post("/v1/events/%s/queue" % event_id, {"user_id": user_id}), status,
                  what="join %s" % user_id)


def poll(c, event_id, ticket):
    return expect(c.get("/v1/events/%s/queue/%s" % (event_id, ticket)), 200, what="poll")


def patch_room(c, event_id, opens_at):
    return c.request("PATCH", "/v1/events/%s" % event_id, {"waiting_room": {"opens_at": opens_at}})


def wait_opened(c, event_id, ticket, limit_s=10.0):
    deadline = time.monotonic() + limit_s
    while True:
        answer = poll(c, event_id, ticket)
        if answer["status"] != "pre_queue":
            return answer
        check(time.monotonic() < deadline, "the room opened")
        time.sleep(0.05)


def test_pre_queue_answers_and_one_ticket_per_user(server):
    c = server.client()
    event_id, opens_at = room_event(c, 30)
    event = expect(c.get("/v1/events/%s" % event_id), 200, what="event")
    check_equal(event["waiting_room"]["opens_at"], opens_at, "opens_at rendered")
    check("shuffle_seed" not in event["waiting_room"], "the seed is never shown")
    first = join(c, event_id, "u1", 201)
    check_equal(set(first), {"ticket", "status", "opens_at"}, "a pre-queue join's members")
    check_equal(first["status"], "pre_queue", "status before opens_at")
    check_equal(first["opens_at"], opens_at, "the join's opens_at")
    check(first["ticket"].startswith("q_"), "a ticket id")
    check_equal(join(c, event_id, "u1", 200), first, "joining again: the same ticket")
    check_equal(poll(c, event_id, first["ticket"]), first, "a poll before opens_at")
    # Holds still need an admission: nobody is admitted before the opening.
    response = c.post("/v1/events/%s/holds" % event_id, {"user_id": "u1", "seats": ["F-A-1"]})
    check_equal(response.status, 403, "a hold before the opening")


def test_bad_opens_at_and_patch_rules(server):
    c = server.client()
    for bad in ["tomorrow", 12, "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                "1969-12-31T23:59:59Z", "2026-01-01T00:00:00"]:
        response = c.post("/v1/events", {"id": uid("bad"), "pools": [
            {"id": "ga", "capacity": 5, "price": 1}],
            "waiting_room": {"enabled": True, "opens_at": bad}})
        check_equal(response.status, 400, "opens_at %r" % (bad,))
        check_equal(response.json["error"]["field"], "waiting_room.opens_at", "the field named")
    event_id, _ = room_event(c, 30)
    later = rfc3339(60)
    moved = expect(patch_room(c, event_id, later), 200, what="opens_at moved before the opening")
    check_equal(moved["waiting_room"]["opens_at"], later, "the new opens_at")
    response = patch_room(c, event_id, rfc3339(-5))
    check_equal(response.status, 400, "opens_at moved into the past")
    # An offset is read as the instant it names.
    event_id = uid("offset")
    create_event(c, event_id, pools=[{"id": "ga", "capacity": 5, "price": 1}],
                 waiting_room={"enabled": True, "opens_at": "2030-06-01T12:00:00.5+02:00"})
    event = expect(c.get("/v1/events/%s" % event_id), 200, what="event")
    check_equal(event["waiting_room"]["opens_at"], "2030-06-01T10:00:00.500Z", "UTC instant")
    # Once a room has opened with a line, opens_at stays.
    opened, _ = room_event(c, 0.3)
    ticket = join(c, opened, "x", 201)["ticket"]
    wait_opened(c, opened, ticket)
    response = patch_room(c, opened, rfc3339(60))
    check_equal(response.status, 400, "opens_at after the opening")


def shuffled_room(c, users, opens_in_s=1.0):
    event_id, _ = room_event(c, opens_in_s, admit_per_s=0.001)
    tickets = [join(c, event_id, "u%03d" % i, 201)["ticket"] for i in range(users)]
    return event_id, tickets


def test_opening_shuffles_then_fifo(server):
    c = server.client()
    event_id, tickets = shuffled_room(c, 60)
    wait_opened(c, event_id, tickets[0])
    answers = [poll(c, event_id, t) for t in tickets]
    admitted = [a for a in answers if a["status"] == "admitted"]
    check_equal(len(admitted), 1, "one admitted at the opening (the bucket's one unit)")
    positions = [a["position"] for a in answers if a["status"] == "waiting"]
    check_equal(sorted(positions), list(range(1, 60)), "distinct places 1..n")
    check(positions != sorted(positions), "places are not join order (1 in 59! by chance)")
    check_equal(join(c, event_id, "u007", 200)["ticket"], tickets[7], "one ticket after too")
    late = [join(c, event_id, "late%d" % i, 201) for i in range(5)]
    check_equal([a["position"] for a in late], [60, 61, 62, 63, 64], "FIFO behind them")


def test_kill9_after_opening_keeps_places():
    server = Server(extra_args=["--token-secret", SECRET]).start()
    c = server.client()
    event_id, tickets = shuffled_room(c, 40, opens_in_s=1.0)
    wait_opened(c, event_id, tickets[0])
    before = {t: poll(c, event_id, t) for t in tickets}
    server.kill()
    server = server.restart()
    c = server.client()
    for ticket, answer in before.items():
        after = wait_opened(c, event_id, ticket)
        if answer["status"] == "waiting":
            check_equal(after["status"], "waiting", "status after kill -9")
            check_equal(after["position"], answer["position"], "place after kill -9")
        else:
            check_equal(after, answer, "ticket after kill -9")
    # Stopped before the opening: the restart opens it with the seed it was given.
    opens_at = time.monotonic() + 1.5
    early, early_tickets = shuffled_room(c, 30, opens_in_s=1.5)
    server.kill()
    server = server.restart()
    c = server.client()
    if time.monotonic() < opens_at - 0.3:  # a slow start (PostgreSQL's lease) may be past it
        check_equal(poll(c, early, early_tickets[0])["status"], "pre_queue", "after a restart")
    wait_opened(c, early, early_tickets[0])
    places = {t: poll(c, early, t) for t in early_tickets}
    server.kill()
    server = server.restart()
    c = server.client()
    for ticket, answer in places.items():
        check_equal(wait_opened(c, early, ticket), answer, "the same place again")
    server.stop()
