"""Command line of the language server: ``rewardkit lsp`` and ``python -m rewardkit_lsp``.

Start-up order matters for the editor's first answer: this process imports pygls and lsprotocol
and answers ``initialize``; the checks engine is imported after that, on a thread
(:mod:`rewardkit_lsp.engine_host`). Nothing here imports them before the arguments are
known, so ``--help`` and ``--version`` are instant and a missing ``lsp`` extra is one clear line.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys

NEEDED = ("pygls", "lsprotocol")


def _host_port(value: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` (``PORT`` alone means localhost) for ``--tcp``."""
    host, _, port = value.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--tcp {value!r}: expected HOST:PORT, e.g. 127.0.0.1:2087"
        ) from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"--tcp {value!r}: port must be in 1..65535")
    return host or "127.0.0.1", number


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardkit lsp",
        description="Language server for reward modules: rewardkit's checks as you type, "
        "quick fixes, hover and completion of fields. Speaks LSP over stdio by default.",
    )
    parser.add_argument("--stdio", action="store_true", help="use stdin/stdout (the default)")
    parser.add_argument(
        "--tcp", metavar="HOST:PORT", type=_host_port, help="listen on a TCP socket (for debugging)"
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the server's own log on stderr (default WARNING)",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def lsp_extra_missing() -> bool:
    """Whether pygls or lsprotocol cannot be found (without importing them: that takes a while)."""
    for name in NEEDED:
        try:
            if importlib.util.find_spec(name) is None:
                return True
        except (ImportError, ValueError):
            return True
    return False


def _missing_extra() -> int:
    """Say in one line that the ``lsp`` extra is needed; exit status 2."""
    from rewardkit.cli import lsp_extra_missing

    print(lsp_extra_missing(), file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    """Run the server until the client exits; return the process exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse exits on --help and on usage errors
        return int(stop.code or 0)
    if args.version:
        from rewardkit_lsp.version import rewardkit_version

        print(f"rewardkit-lsp {rewardkit_version()}")
        return 0
    if lsp_extra_missing():
        return _missing_extra()
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        from rewardkit_lsp.handlers import create_server
    except ImportError:
        return _missing_extra()
    server = create_server()
    if args.tcp is not None:
        host, port = args.tcp
        return server.start_tcp(host, port)
    return server.start_io()
