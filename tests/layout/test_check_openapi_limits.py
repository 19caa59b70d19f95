#!/usr/bin/env python3
"""scripts/check_openapi_limits.py must pass the tree as it is and fail on each kind of drift
it is there to catch: copies of src/lib/limits.h and docs/openapi.yaml are changed in a
temporary folder and checked.

    python3 tests/layout/test_check_openapi_limits.py      (ends with "N passed, N failed")"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_openapi_limits.py")
LIMITS = os.path.join(ROOT, "src", "lib", "limits.h")
OPENAPI = os.path.join(ROOT, "docs", "openapi.yaml")


def read(path):
    with open(path) as source:
        return source.read()


def replaced(text, old, new):
    assert text.count(old) == 1, "the copy has %d of %r" % (text.count(old), old)
    return text.replace(old, new)


def check(limits=None, openapi=None):
    """Runs the check on copies (the real text when None); (exit code, output)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, text, real in (("limits.h", limits, LIMITS), ("openapi.yaml", openapi, OPENAPI)):
            path = os.path.join(folder, name)
            with open(path, "w") as out:
                out.write(read(real) if text is None else text)
            paths.append(path)
        done = subprocess.run([sys.executable, SCRIPT, "--limits", paths[0], "--openapi", paths[1]],
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout


def test_the_tree_passes():
    code, output = check()
    assert code == 0, output
    assert "bounds match" in output, output


def test_a_changed_limit_fails():
    limits = replaced(read(LIMITS), "#define HF_QUEUE_ADMIT_PER_S_MAX 1000000.0",
                      "#define HF_QUEUE_ADMIT_PER_S_MAX 2000000.0")
    code, output = check(limits=limits)
    assert code == 1, output
    assert "WaitingRoomSettings/properties/admit_per_s: maximum is 1000000" in output, output
    assert "HF_QUEUE_ADMIT_PER_S_MAX" in output, output


def test_a_limit_used_through_another_fails():
    # HF_SEAT_ID_SIZE_MAX is 2 * HF_ID_SIZE_MAX + 9: the id's own bound moves both.
    limits = replaced(read(LIMITS), "#define HF_ID_SIZE_MAX 64", "#define HF_ID_SIZE_MAX 32")
    code, output = check(limits=limits)
    assert code == 1, output
    assert "components/schemas/Id: pattern is" in output, output
    assert "components/schemas/SeatId: maxLength is 137" in output, output


def test_a_changed_bound_fails():
    head = "    UserId:\n      description: Any string of 1 to 128 bytes.\n      type: string\n"
    openapi = replaced(read(OPENAPI), head + "      minLength: 1\n      maxLength: 128\n",
                       head + "      minLength: 1\n      maxLength: 256\n")
    code, output = check(openapi=openapi)
    assert code == 1, output
    assert "UserId: maxLength is 256, but limits.h's HF_USER_ID_SIZE_MAX is 128" in output, output


def test_a_missing_bound_fails():
    text = read(OPENAPI)
    start = text.index("        token_ttl_s:\n          description: Seconds;")
    openapi = text[:start] + text[start:].replace("          maximum: 2592000\n", "", 1)
    code, output = check(openapi=openapi)
    assert code == 1, output
    assert "token_ttl_s: has no maximum" in output, output


def test_a_missing_schema_fails():
    openapi = replaced(read(OPENAPI), "    BestAvailable:\n", "    BestSeats:\n")
    code, output = check(openapi=openapi)
    assert code == 1, output
    assert "BestAvailable/properties/count: not in" in output, output


def test_a_missing_limit_fails():
    limits = replaced(read(LIMITS), "#define HF_STAFF_PAGE_MAX ", "#define HF_STAFF_PAGES_MAX ")
    code, output = check(limits=limits)
    assert code == 1, output
    assert "HF_STAFF_PAGE_MAX is not defined in limits.h" in output, output


def main():
    tests = [(name, value) for name, value in sorted(globals().items())
             if name.startswith("test_") and callable(value)]
    passed = failed = 0
    for name, test in tests:
        try:
            test()
        except AssertionError as error:
            failed += 1
            print("FAIL %s: %s" % (name, error))
        else:
            passed += 1
            print("ok %s" % name)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
