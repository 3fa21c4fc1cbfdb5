"""Rewrite tests/slow_tests.txt from the output of ``pytest --durations=0`` runs (see that file):
a test is slow when it was in any of them (a session fixture's cost lands on the first test that
uses it, which differs between a full run and a ``-m "not slow"`` one)."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

LIST = Path(__file__).with_name("slow_tests.txt")
THRESHOLD = 0.3
"""Seconds (setup, call and teardown together) from which a test is slow."""
ROW = re.compile(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def slow_tests(durations_log: str) -> list[str]:
    """The node ids whose phases add up to :data:`THRESHOLD` seconds or more."""
    seconds: Counter[str] = Counter()
    for line in durations_log.splitlines():
        if match := ROW.match(line):
            seconds[match.group(2)] += float(match.group(1))
    return sorted(test for test, total in seconds.items() if total >= THRESHOLD)


def main(argv: list[str]) -> int:
    if not argv:
        print(
            "usage: python tests/slow_tests.py DURATIONS_LOG [DURATIONS_LOG ...]", file=sys.stderr
        )
        return 2
    lines = LIST.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    found = {line for line in lines if line and "::" not in line and not line.startswith("#")}
    # (whole files, listed by hand: every test in them is slow)
    for log in argv:
        found.update(slow_tests(Path(log).read_text(encoding="utf-8", errors="replace")))
    tests = sorted(found)
    LIST.write_text("\n".join([*header, *tests]) + "\n", encoding="utf-8")
    print(f"{len(tests)} slow tests written to {LIST}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
