"""``rewardkit check [PATHS...]``: check reward modules from pre-commit, CI or a terminal.

Exit status: 0 when nothing of error severity was found (warnings and notes allowed), 1 when an
error-severity diagnostic is reported, 2 for usage errors, an invalid configuration, a path or
file that cannot be checked, or an internal error (docs/checks.md lists each case).

This module is the light front: when the files, their configuration and the command line are
those of a run the cache holds (:mod:`rewardkit.checks.run_cache`), the stored report is printed
without importing the parser, the rules or argparse. Everything else is
:mod:`rewardkit.checks.command`.
"""

from __future__ import annotations

import sys

from rewardkit.checks import run_cache
from rewardkit.checks.command_line import run_key, simple_command_line
from rewardkit.checks.targets import find_targets

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime import: the cached fast path stays light
    from collections.abc import Sequence


def _cached_run(argv: Sequence[str]) -> int | None:
    """Print the stored report of an identical earlier run and return its exit status; ``None``
    when there is none (or the command line is not one the cache answers)."""
    command = simple_command_line(argv)
    if command is None:
        return None
    targets, problems = find_targets(command.paths)
    if problems:
        return None
    stored = run_cache.load_run(run_cache.cache_root(), run_key(command, targets), targets)
    if stored is None:
        return None
    status, output = stored
    sys.stdout.write(output)
    return status


def main(argv: list[str]) -> int:
    """Run ``rewardkit check`` with ``argv`` (without the subcommand); return the exit status."""
    cached = _cached_run(argv)
    if cached is not None:
        return cached
    from rewardkit.checks.command import run_command

    return run_command(argv)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
