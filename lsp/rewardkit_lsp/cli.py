"""Command line of the language server: ``rewardkit lsp`` and ``python -m rewardkit_lsp``."""

from __future__ import annotations

import argparse
import logging
import sys

from rewardkit._version import __version__


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


def main(argv: list[str]) -> int:
    """Run the server until the client exits; return the process exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse exits on --help and on usage errors
        return int(stop.code or 0)
    if args.version:
        print(f"rewardkit-lsp {__version__}")
        return 0
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="%(levelname)s %(name)s: %(message)s"
    )
    from rewardkit_lsp.server import create_server

    server = create_server()
    if args.tcp is not None:
        host, port = args.tcp
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0
