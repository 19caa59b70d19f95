#!/usr/bin/env python3
"""The bounds that docs/openapi.yaml states must be the limits the server keeps: each bound
listed in BOUNDS below (a place in the description, a keyword, and the limit of
src/lib/limits.h it states) is read from both files and compared, so neither can change
without the other. A bound missing from the description, a limit missing from the header or
two values that differ fail the check.

    python3 scripts/check_openapi_limits.py [--limits src/lib/limits.h]
                                            [--openapi docs/openapi.yaml]

Prints one line per difference, then a summary; exit 0 when every bound matches, 1 otherwise,
2 when a file cannot be read. Part of make lint and make test (scripts/test.sh)."""

import argparse
import ast
import operator
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Limits the server takes from C itself rather than from limits.h.
BUILTIN = {"UINT32_MAX": 4294967295}

S = "components/schemas/"
EVENT = S + "EventCreate/properties/"
ROOM = S + "WaitingRoomSettings/properties/"
SEATS_LIMIT = "paths//v1/events/{event}/seats/get/parameters/name=limit/schema"
REFUNDS_LIMIT = "paths//v1/refunds/get/parameters/name=limit/schema"
PAGE_LIMIT = "components/parameters/PageLimit/schema"
CALENDAR = S + "CalendarCreate/properties/"
RESOURCE = S + "ResourceDefinition/properties/"
SLOTS_LIMIT = "paths//v1/calendars/{calendar}/slots/get/parameters/name=limit/schema"
ID_PATTERN = "^[A-Za-z0-9_.]{1,%(HF_ID_SIZE_MAX)d}$"

# (where in the description, its keyword, the limit: an expression over limits.h's names, or
# for a pattern the text it must be with the limits put in). Where: keys from the top of the
# document, "/"-separated; "name=limit" picks the element of a list whose name is limit.
BOUNDS = [
    # Identifiers (API.md section 1).
    (S + "Id", "pattern", ID_PATTERN),
    (S + "SeatId", "maxLength", "HF_SEAT_ID_SIZE_MAX"),
    (S + "SeatId", "pattern",
     "^[A-Za-z0-9_.]{1,%(HF_ID_SIZE_MAX)d}-[A-Za-z0-9_.]{1,%(HF_ID_SIZE_MAX)d}-[1-9][0-9]*$"),
    (S + "UserId", "maxLength", "HF_USER_ID_SIZE_MAX"),
    (S + "PaymentRef", "maxLength", "HF_PAYMENT_REF_SIZE_MAX"),
    (S + "Seconds", "maximum", "HF_HOLD_TTL_MS_MAX / 1000"),
    ("components/parameters/IdempotencyKey/schema", "maxLength", "HF_IDEMPOTENCY_KEY_SIZE_MAX"),
    # An event (section 2).
    (EVENT + "name", "maxLength", "HF_NAME_SIZE_MAX"),
    (EVENT + "max_seats_per_user", "maximum", "UINT32_MAX"),
    (EVENT + "max_seats_per_hold", "maximum", "HF_HOLD_ITEMS_MAX"),
    (EVENT + "sections", "maxItems", "HF_EVENT_SECTIONS_MAX"),
    (EVENT + "pools", "maxItems", "HF_EVENT_POOLS_MAX"),
    (S + "SectionCreate/properties/price", "maximum", "HF_PRICE_MAX"),
    (S + "SectionCreate/properties/rows", "maxItems", "HF_SECTION_ROWS_MAX"),
    (S + "Row/properties/seats", "maximum", "HF_EVENT_SEATS_MAX"),
    (S + "PoolCreate/properties/capacity", "maximum", "HF_POOL_CAPACITY_MAX"),
    (S + "PoolCreate/properties/price", "maximum", "HF_PRICE_MAX"),
    (S + "EventSummary/properties/max_seats_per_hold", "maximum", "HF_HOLD_ITEMS_MAX"),
    # The waiting room (section 6).
    (ROOM + "admit_per_s", "minimum", "HF_QUEUE_ADMIT_PER_S_MIN"),
    (ROOM + "admit_per_s", "maximum", "HF_QUEUE_ADMIT_PER_S_MAX"),
    (ROOM + "admit_per_s", "default", "HF_QUEUE_ADMIT_PER_S_DEFAULT"),
    (ROOM + "token_ttl_s", "maximum", "HF_QUEUE_TOKEN_TTL_S_MAX"),
    (ROOM + "token_ttl_s", "default", "HF_QUEUE_TOKEN_TTL_S_DEFAULT"),
    (ROOM + "max_active", "maximum", "UINT32_MAX"),
    (ROOM + "abandon_after_s", "maximum", "HF_HOLD_TTL_MS_MAX / 1000"),
    (ROOM + "abandon_after_s", "default", "HF_QUEUE_ABANDON_AFTER_MS_DEFAULT / 1000"),
    (ROOM + "max_waiting", "maximum", "HF_QUEUE_WAITING_LIMIT"),
    (ROOM + "max_waiting", "default", "HF_QUEUE_WAITING_DEFAULT"),
    # Holds and bookings (sections 3 and 4).
    (S + "HoldCreate/properties/seats", "maxItems", "HF_HOLD_ITEMS_MAX"),
    (S + "BookingCreate/properties/seats", "maxItems", "HF_HOLD_ITEMS_MAX"),
    (S + "PoolQuantities", "maxProperties", "HF_HOLD_ITEMS_MAX"),
    (S + "PoolQuantities/additionalProperties", "maximum", "HF_HOLD_ITEMS_MAX"),
    (S + "BestAvailable/properties/count", "maximum", "HF_HOLD_ITEMS_MAX"),
    # Pages (section 1): the seat list's, the staff lists' and the history's, the refunds'.
    (SEATS_LIMIT, "maximum", "HF_SEATS_PAGE_MAX"),
    (SEATS_LIMIT, "default", "HF_SEATS_PAGE_DEFAULT"),
    (PAGE_LIMIT, "maximum", "HF_STAFF_PAGE_MAX"),
    (PAGE_LIMIT, "default", "HF_STAFF_PAGE_DEFAULT"),
    (PAGE_LIMIT, "maximum", "HF_HISTORY_PAGE_MAX"),
    (PAGE_LIMIT, "default", "HF_HISTORY_PAGE_DEFAULT"),
    (REFUNDS_LIMIT, "maximum", "HF_REFUNDS_PAGE_MAX"),
    (REFUNDS_LIMIT, "default", "HF_REFUNDS_PAGE_DEFAULT"),
    # Payment webhooks (section 7).
    (S + "PaymentDelivery/properties/id", "maxLength", "HF_WEBHOOK_EVENT_ID_SIZE_MAX"),
    (S + "PaymentDelivery/properties/payment_intent_id", "maxLength", "HF_PAYMENT_REF_SIZE_MAX"),
    (S + "PaymentDelivery/properties/reservation_id", "maxLength", "HF_PAYMENT_REF_SIZE_MAX"),
    ("paths//v1/webhooks/payments/post/parameters/name=Holdfast-Signature/schema", "maxLength",
     "HF_SIGNATURE_HEADER_SIZE_MAX"),
    # Calendars (section 12).
    (CALENDAR + "horizon_days", "maximum", "HF_CALENDAR_HORIZON_DAYS_MAX"),
    (CALENDAR + "max_items_per_hold", "maximum", "HF_CALENDAR_HOLD_ITEMS_MAX"),
    (CALENDAR + "max_uses_per_user", "maximum", "UINT32_MAX"),
    (CALENDAR + "resources", "maxItems", "HF_CALENDAR_RESOURCES_MAX"),
    (CALENDAR + "name", "maxLength", "HF_NAME_SIZE_MAX"),
    (S + "ResourcesAdd/properties/resources", "maxItems", "HF_CALENDAR_RESOURCES_MAX"),
    (RESOURCE + "capacity", "maximum", "HF_RESOURCE_CAPACITY_MAX"),
    (RESOURCE + "price", "maximum", "HF_PRICE_MAX"),
    (RESOURCE + "buffer_before_min", "maximum", "HF_RESOURCE_BUFFER_MIN_MAX"),
    (RESOURCE + "buffer_after_min", "maximum", "HF_RESOURCE_BUFFER_MIN_MAX"),
    (S + "CalendarItems", "maxItems", "HF_CALENDAR_HOLD_ITEMS_MAX"),
    (S + "Slots/properties/slots", "maxItems", "HF_CALENDAR_SLOTS_PAGE_MAX"),
    (SLOTS_LIMIT, "maximum", "HF_CALENDAR_SLOTS_PAGE_MAX"),
    (SLOTS_LIMIT, "default", "HF_CALENDAR_SLOTS_PAGE_DEFAULT"),
    ("paths//v1/calendars/{calendar}/free/get/parameters/name=resource/schema", "maxItems",
     "HF_CALENDAR_QUERY_RESOURCES_MAX"),
    ("paths//v1/calendars/{calendar}/slots/get/parameters/name=resource/schema", "maxItems",
     "HF_CALENDAR_QUERY_RESOURCES_MAX"),
    (S + "UnavailableSpans", "maxItems", "HF_CALENDAR_CONFLICTS_MAX"),
    # Dispatch (section 8).
    (S + "RideCreate/properties/radius_m", "maximum", "HF_DISPATCH_RADIUS_M_MAX"),
    (S + "RideCreate/properties/radius_m", "default", "HF_DISPATCH_RADIUS_M_DEFAULT"),
    (S + "RideCreate/properties/offer_ttl_s", "maximum", "HF_DISPATCH_OFFER_TTL_MS_MAX / 1000"),
    (S + "RideCreate/properties/offer_ttl_s", "default",
     "HF_DISPATCH_OFFER_TTL_MS_DEFAULT / 1000"),
    (S + "Ride/properties/radius_m", "maximum", "HF_DISPATCH_RADIUS_M_MAX"),
    (S + "Ride/properties/offer_ttl_s", "maximum", "HF_DISPATCH_OFFER_TTL_MS_MAX / 1000"),
]

DEFINE_RE = re.compile(r"^\s*#\s*define\s+(HF_\w+)\s+(.+?)\s*(?:/\*.*)?$")
# C's integer suffixes (1000u, 30LL) and a float's (1.0f) are no part of the value.
SUFFIX_RE = re.compile(r"(?<=[0-9.])(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?|[fF])\b")

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


class Unreadable(Exception):
    pass


def read_defines(path):
    """Every #define HF_... of the header whose value is one line: {name: text}."""
    defines = {}
    with open(path) as header:
        for line in header:
            match = DEFINE_RE.match(line)
            if match and not match.group(2).endswith("\\"):
                defines[match.group(1)] = SUFFIX_RE.sub("", match.group(2))
    return defines


def evaluate(text, defines, depth=0):
    """The value of a C constant expression of numbers, names, + - * / and parentheses; / of
    two integers divides exactly or fails (a bound is never a rounded quotient)."""
    if depth > 16:
        raise Unreadable("%s: nested too deep" % text)

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in BUILTIN:
                return BUILTIN[node.id]
            if node.id not in defines:
                raise Unreadable("%s is not defined in limits.h" % node.id)
            return evaluate(defines[node.id], defines, depth + 1)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = value(node.left), value(node.right)
            if isinstance(left, int) and isinstance(right, int):
                if left % right:
                    raise Unreadable("%s: %d / %d is not whole" % (text, left, right))
                return left // right
            return left / right
        raise Unreadable("%s: not a constant expression this check reads" % text)

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise Unreadable("%s: not a constant expression this check reads" % text)
    return value(tree)


def find(document, where):
    """The node at where, or None when a step names nothing."""
    node = document
    steps = where.split("/")
    index = 0
    while index < len(steps):
        step = steps[index]
        if step == "paths":
            # A path's own "/" are part of its key: "paths//v1/refunds/get" -> "/v1/refunds".
            node = node.get("paths") if isinstance(node, dict) else None
            rest = steps[index + 1:]
            for end in range(len(rest), 0, -1):
                key = "/".join(rest[:end])
                if isinstance(node, dict) and key in node:
                    node, index = node[key], index + 1 + end
                    break
            else:
                return None
            continue
        if "=" in step and isinstance(node, list):
            name, wanted = step.split("=", 1)
            node = next((item for item in node if isinstance(item, dict) and
                         item.get(name) == wanted), None)
        elif isinstance(node, dict):
            node = node.get(step)
        else:
            return None
        if node is None:
            return None
        index += 1
    return node


def check(limits_path, openapi_path):
    """The differences, as lines; [] when every bound matches."""
    defines = read_defines(limits_path)
    with open(openapi_path) as description:
        document = yaml.safe_load(description)
    problems = []
    for where, keyword, limit in BOUNDS:
        node = find(document, where)
        if not isinstance(node, dict):
            problems.append("%s: not in %s" % (where, openapi_path))
            continue
        if keyword not in node:
            problems.append("%s: has no %s (limits.h: %s)" % (where, keyword, limit))
            continue
        stated = node[keyword]
        try:
            if keyword == "pattern":
                names = {name: int(evaluate(name, defines)) for name in
                         re.findall(r"%\((\w+)\)", limit)}
                expected = limit % names
            else:
                expected = evaluate(limit, defines)
        except Unreadable as error:
            problems.append("%s: %s" % (where, error))
            continue
        same = stated == expected if keyword == "pattern" else (
            isinstance(stated, (int, float)) and not isinstance(stated, bool) and
            float(stated) == float(expected))
        if not same:
            problems.append("%s: %s is %r, but limits.h's %s is %r" % (
                where, keyword, stated, limit, expected))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limits", default=os.path.join(ROOT, "src", "lib", "limits.h"))
    parser.add_argument("--openapi", default=os.path.join(ROOT, "docs", "openapi.yaml"))
    arguments = parser.parse_args()
    try:
        problems = check(arguments.limits, arguments.openapi)
    except (OSError, yaml.YAMLError) as error:
        print("openapi limits: %s" % error)
        return 2
    for problem in problems:
        print("openapi limits: %s" % problem)
    if problems:
        print("openapi limits: %d of %d bounds differ from src/lib/limits.h" % (
            len(problems), len(BOUNDS)))
        return 1
    print("openapi limits: %d bounds match src/lib/limits.h" % len(BOUNDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
