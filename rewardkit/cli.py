"""The ``rewardkit`` command line: a thin dispatcher to each subcommand's own module.

Subcommand modules are imported only when used, so ``rewardkit --version`` stays
fast and ``rewardkit lsp`` is the only one that needs the ``lsp`` extra.
Each module exposes ``main(argv: list[str]) -> int``.
"""

from __future__ import annotations

import importlib
import sys

from rewardkit._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: `rewardkit check` answers from its cache at once
    from collections.abc import Sequence

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("rewardkit.evaluation.cli", "grade model responses (e.g. `rewardkit eval math`)"),
    "check": ("rewardkit.checks.cli", "check reward modules statically (pre-commit, CI)"),
    "lsp": ("rewardkit_lsp.cli", "start the language server (needs the lsp extra)"),
    "serve": ("rewardkit.serve.cli", "serve rewards over HTTP (needs the serve extra)"),
}


def lsp_extra_missing() -> str:
    """One line, exit status 2 (``rewardkit_lsp.cli`` says the same when pygls or lsprotocol is
    missing), with the install command that works for this rewardkit (it is not on PyPI)."""
    from rewardkit.install import install_command  # only on this error: start-up stays light

    return f"rewardkit lsp: the language server needs the lsp extra: {install_command('lsp')}"


USAGE = "usage: rewardkit [--version] [--help] {" + ",".join(SUBCOMMANDS) + "} ..."


def _help() -> str:
    lines = [USAGE, "", "Reward functions that are correct before they cost a training run.", ""]
    lines.append("subcommands:")
    for name, (_, text) in SUBCOMMANDS.items():
        lines.append(f"  {name:<8}{text}")
    lines += [
        "",
        "options:",
        "  --version   print the version and exit",
        "  -h, --help  show this help",
    ]
    return "\n".join(lines)


def _unknown(command: str) -> str:
    """What is wrong with ``command``, with the nearest subcommand or option if one is close."""
    import difflib

    if command.startswith("-"):
        what, known = "option", ["--version", "--help"]
    else:
        what, known = "subcommand", list(SUBCOMMANDS)
    close = difflib.get_close_matches(command, known, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else f" (choose from {', '.join(known)})"
    return f"unknown {what} '{command}'{hint}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(_help())
        return 0 if args else 2
    if args[0] == "--version":
        print(f"rewardkit {__version__}")
        return 0
    command = args[0]
    if command not in SUBCOMMANDS:
        print(USAGE, file=sys.stderr)
        print(f"rewardkit: error: {_unknown(command)}", file=sys.stderr)
        return 2
    module_name, _ = SUBCOMMANDS[command]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if command == "lsp":  # the server's package itself is missing: the extra was not installed
            print(lsp_extra_missing(), file=sys.stderr)
        else:
            print(f"rewardkit {command}: cannot load {module_name}: {exc}", file=sys.stderr)
        return 2
    return int(module.main(args[1:]))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
