#!/usr/bin/env python3
"""Runs a command and fails unless it exits with the expected status and
prints exactly the expected lines on stdout: the tests of
scripts/check-includes.py on the fixture tree.

usage: expect.py STATUS [--line TEXT]... -- COMMAND [ARG]...
"""
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    status, expected = int(options[0]), []
    rest = options[1:]
    while rest:
        if rest[0] != "--line" or len(rest) < 2:
            print(__doc__, file=sys.stderr)
            return 2
        expected.append(rest[1])
        rest = rest[2:]

    result = subprocess.run(command, capture_output=True, text=True)
    lines = result.stdout.splitlines()
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    ok = True
    if result.returncode != status:
        print(f"expect: exit status {result.returncode}, expected {status}", file=sys.stderr)
        ok = False
    if lines != expected:
        print("expect: stdout differs; expected:\n" + "\n".join(expected), file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
