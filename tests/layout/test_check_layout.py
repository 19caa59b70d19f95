#!/usr/bin/env python3
"""scripts/check_layout.py must fail on each breach it is there to catch, and pass a clean
tree: small trees are written into a temporary folder and checked.

    python3 tests/layout/test_check_layout.py      (ends with "N passed, N failed")"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_layout.py")


def check(files):
    """Writes files {path: text} under a fresh src/ and runs the check; (exit code, output)."""
    with tempfile.TemporaryDirectory() as folder:
        for path, text in files.items():
            full = os.path.join(folder, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as out:
                out.write(text)
        done = subprocess.run([sys.executable, SCRIPT, os.path.join(folder, "src")],
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout


def function(name, lines):
    return "int %s(void) {\n%s    return 0;\n}\n" % (name, "    (void)0;\n" * (lines - 3))


CLEAN = {
    "src/core/a.h": "int a(void);\n",
    "src/core/a.c": '#include "core/a.h"\n#include "core/b.h"\n#include "lib/c.h"\n' + function("a", 60),
    "src/core/b.h": "int b(void);\n",
    "src/core/b.c": '#include "core/b.h"\n' + function("b", 10),
    # A room's private header includes the room's public one: read through, no cycle.
    "src/core/internal.h": '#include "core/b.h"\n',
    "src/core/more.c": '#include "core/internal.h"\n' + function("more", 5),
    "src/lib/c.h": "int c(void);\n",
}


def test_clean_tree_passes():
    code, output = check(CLEAN)
    assert code == 0, output
    assert "no include cycle" in output, output


def test_cycle_through_headers_fails():
    files = dict(CLEAN)
    files["src/core/b.c"] = '#include "core/b.h"\n#include "core/a.h"\n' + function("b", 10)
    code, output = check(files)
    assert code == 1, output
    assert "include cycle: core/a -> core/b -> core/a" in output, output


def test_cycle_through_a_private_header_fails():
    files = dict(CLEAN)
    files["src/core/internal.h"] = '#include "core/b.h"\n#include "core/a.h"\n'
    files["src/core/b.c"] = '#include "core/internal.h"\n' + function("b", 10)
    code, output = check(files)
    assert code == 1, output
    assert "include cycle" in output, output


def test_room_including_one_above_fails():
    files = dict(CLEAN)
    files["src/lib/c.c"] = '#include "lib/c.h"\n#include "core/b.h"\n' + function("c", 5)
    code, output = check(files)
    assert code == 1, output
    assert "lib/c includes core/b" in output, output


def test_room_without_a_place_fails():
    files = dict(CLEAN)
    files["src/queue/q.c"] = '#include "core/a.h"\n' + function("q", 5)
    code, output = check(files)
    assert code == 1, output
    assert "room queue/ has no place" in output, output


# The engine's rooms (docs/DESIGN.md): engine/ under cluster/ under api/. The engine reaches
# the rooms above it only through what cmd/main.c hands it (engine/units.h), never an include.
ROOMS = {
    "src/engine/context.h": "int context(void);\n",
    "src/cluster/cluster.h": '#include "engine/context.h"\n',
    "src/api/routes.c": '#include "cluster/cluster.h"\n#include "engine/context.h"\n' +
                        function("dispatch", 5),
    "src/cmd/main.c": '#include "api/routes.h"\n#include "cluster/cluster.h"\n' +
                      function("main", 5),
    "src/api/routes.h": "void dispatch(void);\n",
}


def test_engine_rooms_in_order_pass():
    code, output = check(dict(CLEAN, **ROOMS))
    assert code == 0, output


def test_cluster_including_the_dispatcher_fails():
    files = dict(CLEAN, **ROOMS)
    files["src/cluster/cluster.c"] = '#include "api/routes.h"\n' + function("route", 5)
    code, output = check(files)
    assert code == 1, output
    assert "cluster/cluster includes api/routes" in output, output


def test_engine_including_the_cluster_fails():
    files = dict(CLEAN, **ROOMS)
    files["src/engine/engine.c"] = '#include "cluster/cluster.h"\n' + function("run", 5)
    code, output = check(files)
    assert code == 1, output
    assert "engine/engine includes cluster/cluster" in output, output


def test_long_function_fails():
    files = dict(CLEAN)
    files["src/core/a.c"] = '#include "core/a.h"\n' + function("a", 61)
    code, output = check(files)
    assert code == 1, output
    assert "a() is 61 lines" in output, output


def test_long_file_fails():
    files = dict(CLEAN)
    files["src/core/long.c"] = "".join("int x%d;\n" % i for i in range(801))
    code, output = check(files)
    assert code == 1, output
    assert "long.c: 801 lines" in output, output


def main():
    tests = [value for name, value in sorted(globals().items()) if name.startswith("test_")]
    passed = failed = 0
    for test in tests:
        try:
            test()
            print("ok", test.__name__)
            passed += 1
        except AssertionError as error:
            print("FAIL", test.__name__, error)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
