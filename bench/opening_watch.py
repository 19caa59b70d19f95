#!/usr/bin/env python3
"""The pre-queue's opening as a client sees it (bench/prequeue.sh): one pre-queue ticket polled
from just before opens_at until it answers anything but `pre_queue`. The line is given out all
at once (a pre-queue ticket answers `pre_queue` until every ticket has its place: src/core/
queue.c, hf_core_ticket_pre_queue), so that instant is when every ticket has its place.

    python3 bench/opening_watch.py PORT EVENT TICKET OPENS_AT_MS TICKETS

Prints "opening: N tickets placed in X ms after opens_at (P polls, the one before at Y ms;
STATUS)"; exits 1 when the ticket is still pre_queue a minute after opens_at."""

import http.client
import json
import sys
import time

START_BEFORE_MS = 50  # polling starts this long before opens_at
POLL_GAP_S = 0.001  # between polls: the resolution, without taking a core from the server
GIVE_UP_MS = 60000  # after opens_at


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    port, event, ticket = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    opens_at, count = int(sys.argv[4]), int(sys.argv[5])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.time() * 1000 < opens_at - START_BEFORE_MS:
        time.sleep(0.005)
    polls, last = 0, None
    while time.time() * 1000 < opens_at + GIVE_UP_MS:
        connection.request("GET", "/v1/events/%s/queue/%s" % (event, ticket))
        answer = json.loads(connection.getresponse().read())
        at = time.time() * 1000
        polls += 1
        if answer.get("status") != "pre_queue":
            print("opening: %d tickets placed in %.0f ms after opens_at (%d polls, the one before"
                  " at %.0f ms; %s)" % (count, at - opens_at, polls,
                                        (at if last is None else last) - opens_at, answer.get("status")))
            return 0
        last = at
        time.sleep(POLL_GAP_S)
    print("opening: still pre_queue %d ms after opens_at" % GIVE_UP_MS)
    return 1


if __name__ == "__main__":
    sys.exit(main())
