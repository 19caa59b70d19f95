#!/usr/bin/env python3
"""The layout rules of src/ (docs/DESIGN.md, "Where things go"), checked from the code itself.

- No include cycle: a file x.c and its header x.h are one module; each `#include "..."` of a
  file of src/ is an arrow from its module to the included file's module. The arrows must
  form no circle (a module that reaches itself), so each module can be read, built and
  tested on top of the ones below it. A room's private header (`internal.h`, what the files
  of one folder share) is no module of its own: a file that includes it takes on its
  includes, as if its text were pasted in.
- Rooms stand on the ones below them only: a file of a room includes files of its own room
  and of the rooms ROOMS_BELOW names for it (lib at the bottom, the command line at the top).
  A new room gets its line there.
- No file under src/ over FILE_LINES_MAX lines, no function over FUNCTION_LINES_MAX lines
  (from the line of its opening brace to the line of its closing brace).

Prints each breach and exits 1 when there is one; otherwise prints one line and exits 0.
Usage: scripts/check_layout.py [SRC_DIR]
"""
import os
import re
import sys

FILE_LINES_MAX = 800
FUNCTION_LINES_MAX = 60

# The rooms each room may include besides itself: the order of DESIGN.md's layers.
ROOMS_BELOW = {
    "lib": set(),
    "core": {"lib"},
    "store": {"core", "lib"},
    "net": {"lib"},
    # The engine's plumbing: the core's owner, the request context, replies and errors,
    # idempotency, streams, restore, metrics.
    "engine": {"store", "net", "core", "lib"},
    # Several nodes: units, leases, jobs, forwarding, stood on the engine's request.
    "cluster": {"engine", "store", "net", "core", "lib"},
    # The dispatcher and each domain's handlers, which route through the cluster.
    "api": {"cluster", "engine", "store", "net", "core", "lib"},
    "cmd": {"api", "cluster", "engine", "store", "net", "core", "lib"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# A function definition starts at column 0 with a name followed by "(" and is no
# declaration, initializer or type.
DEFINITION = re.compile(r'^[A-Za-z_][^;=]*\b([A-Za-z_]\w*)\s*\(')
NOT_A_FUNCTION = re.compile(r'^(typedef|struct\s+\w+\s*\{|enum|union|#)')


def source_files(root):
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.join(folder, name)


def module_of(path, root):
    return os.path.splitext(os.path.relpath(path, root))[0]


def includes_of(path, root):
    """The files under root that path includes."""
    found = []
    with open(path, encoding="utf-8", errors="replace") as source:
        for line in source:
            match = INCLUDE.match(line)
            if not match:
                continue
            target = os.path.join(root, match.group(1))
            if not os.path.exists(target):
                target = os.path.join(os.path.dirname(path), match.group(1))
            if os.path.exists(target):
                found.append(os.path.normpath(target))
    return found


def is_private(path):
    return os.path.basename(path) == "internal.h"


def include_graph(root, files):
    """Module -> set of modules it includes (only files under root count); private headers
    are followed through, not counted as modules."""
    graph = {}
    for path in files:
        if is_private(path):
            continue
        module = module_of(path, root)
        arrows = graph.setdefault(module, set())
        pending, seen = includes_of(path, root), set()
        while pending:
            target = pending.pop()
            if target in seen:
                continue
            seen.add(target)
            if is_private(target):
                pending.extend(includes_of(target, root))
                continue
            included = module_of(target, root)
            if included != module:
                arrows.add(included)
    return graph


def find_cycle(graph):
    """One cycle as a list of modules (first repeated at the end), or None."""
    state = {}
    stack = []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def long_functions(path):
    """(name, first line, length) of every function longer than FUNCTION_LINES_MAX."""
    with open(path, encoding="utf-8", errors="replace") as source:
        lines = source.read().split("\n")
    found = []
    name, start, signature_line = None, None, None
    for number, line in enumerate(lines, 1):
        if start is None:
            match = DEFINITION.match(line)
            if match and not NOT_A_FUNCTION.match(line):
                name, signature_line = match.group(1), number
            if name and (line.rstrip().endswith("{") and not line.startswith(" ")):
                start = number
            elif name and line.strip().endswith(";"):
                name = None
            continue
        if line.startswith("}"):
            length = number - start + 1
            if length > FUNCTION_LINES_MAX:
                found.append((name, signature_line, length))
            name, start = None, None
    return found


def room_of(module):
    return module.split(os.sep)[0]


def layering_breaches(graph):
    """Includes that run up (or into a room with no place in ROOMS_BELOW)."""
    found = []
    for module in sorted(graph):
        room = room_of(module)
        if room not in ROOMS_BELOW:
            found.append("room %s/ has no place in check_layout.py's ROOMS_BELOW" % room)
            continue
        for target in sorted(graph[module]):
            other = room_of(target)
            if other != room and other not in ROOMS_BELOW[room]:
                found.append("%s includes %s: %s/ may include only %s"
                             % (module, target, room, ", ".join(sorted(ROOMS_BELOW[room])) or
                                "itself"))
    return sorted(set(found))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "src"
    files = list(source_files(root))
    breaches = []
    graph = include_graph(root, files)
    cycle = find_cycle(graph)
    if cycle:
        breaches.append("include cycle: " + " -> ".join(cycle))
    breaches.extend(layering_breaches(graph))
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as source:
            count = sum(1 for _ in source)
        if count > FILE_LINES_MAX:
            breaches.append("%s: %d lines (at most %d)" % (path, count, FILE_LINES_MAX))
        for name, line, length in long_functions(path):
            breaches.append("%s:%d: %s() is %d lines (at most %d)"
                            % (path, line, name, length, FUNCTION_LINES_MAX))
    for breach in breaches:
        print(breach)
    if breaches:
        print("layout: %d breach(es) of the rules in docs/DESIGN.md" % len(breaches))
        return 1
    print("layout: %d files, no include cycle, no room including one above it, no file over %d"
          " lines, no function over %d"
          % (len(files), FILE_LINES_MAX, FUNCTION_LINES_MAX))
    return 0


if __name__ == "__main__":
    sys.exit(main())
