"""`rewardkit serve [NAME=]TARGET ... [--ray]`: serve rewards over HTTP (docs/serve.md).

Exit status: 0 stopped by SIGTERM or Ctrl-C after draining; 2 a usage or configuration error
(a reward that cannot be imported, a bad option, the `serve` extra missing), named on one line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from rewardkit.install import install_command
from rewardkit.serve.config import (
    DEFAULT_CONCURRENCY,
    DEFAULT_DRAIN_TIMEOUT,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_SIZE,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_PORT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_RETRY_AFTER,
    DEFAULT_TIMEOUT,
    RewardSpec,
    ServeConfigError,
    load_config_file,
    merge,
    parse_size,
)

PROG = "rewardkit serve"


def serve_extra_missing() -> str:
    """One line (exit status 2) naming the install command that works for this rewardkit."""
    return f"rewardkit serve needs the serve extra: {install_command('serve')}"


EXIT_USAGE = 2


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ServeConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The `rewardkit serve` argument parser; options left unset take the file's, then the defaults."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve rewards over HTTP: OpenRLHF's POST /get_reward, a JSON API, /health and "
        "Prometheus /metrics; on one machine (uvicorn) or on a Ray cluster (--ray).",
        epilog="Each REWARD is MODULE:ATTRIBUTE, path/to/file.py:ATTRIBUTE or a registry name "
        "(math_reward), optionally NAME=... to serve it under another name.",
    )
    _served_arguments(parser)
    _request_arguments(parser)
    _connection_arguments(parser)
    parser.add_argument(
        "--app-dir", default=None, metavar="DIR", help="import reward modules from DIR (default: .)"
    )
    parser.add_argument(
        "--log-level", default=None, choices=("critical", "error", "warning", "info", "debug")
    )
    _ray_arguments(parser)
    return parser


def _served_arguments(parser: argparse.ArgumentParser) -> None:
    """What is served, and where: the rewards, the settings file, the address, the processes."""
    parser.add_argument(
        "rewards", nargs="*", metavar="REWARD", help="rewards to serve (the first is the default)"
    )
    parser.add_argument(
        "--config", metavar="FILE.toml", help="settings and rewards from a TOML file"
    )
    parser.add_argument(
        "--host", default=None, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    parser.add_argument("--port", type=int, default=None, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--workers", type=int, default=None, metavar="N", help="worker processes (default 1)"
    )


def _request_arguments(parser: argparse.ArgumentParser) -> None:
    """What a request may cost and who may send one: the sample timeout, admission, the token."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"per-sample timeout (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=None,
        metavar="N",
        help=f"samples a worker holds at once; beyond, 503 with Retry-After (default {DEFAULT_MAX_IN_FLIGHT})",
    )
    parser.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        help="require 'Authorization: Bearer <token>' on every route but /health, the token read from "
        "this file's first line (default: $REWARDKIT_SERVE_TOKEN if set, else no token)",
    )


def _connection_arguments(parser: argparse.ArgumentParser) -> None:
    """How connections and bodies are bounded, and how a busy or stopping server answers."""
    parser.add_argument(
        "--read-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"time a client has to send a request's headers, and then its body; beyond, 408 and the "
        f"connection closed (default {DEFAULT_READ_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=None,
        metavar="N",
        help=f"open connections per worker; beyond, idle ones that sent no request are closed, else 503 "
        f"(default {DEFAULT_MAX_CONNECTIONS}, lowered to fit the file-descriptor limit)",
    )
    parser.add_argument(
        "--max-body-size",
        type=_size,
        default=None,
        metavar="SIZE",
        help=f"largest request body, e.g. 32M; beyond, 413 (default {DEFAULT_MAX_BODY_SIZE // 2**20}M)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help=f"samples of one request computed at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--retry-after",
        type=int,
        default=None,
        metavar="SECONDS",
        help=f"Retry-After of a 503 (default {DEFAULT_RETRY_AFTER})",
    )
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"on SIGTERM, how long requests in flight may take to finish (default {DEFAULT_DRAIN_TIMEOUT:g})",
    )


def _ray_arguments(parser: argparse.ArgumentParser) -> None:
    """The Ray Serve deployment (``--ray``): the cluster, replicas and what they are given."""
    ray = parser.add_argument_group("Ray Serve (--ray)")
    ray.add_argument(
        "--ray",
        action="store_true",
        help="deploy on Ray Serve instead of serving from this machine",
    )
    ray.add_argument(
        "--address",
        dest="ray_address",
        default=None,
        help="Ray cluster to join (default: a local one)",
    )
    ray.add_argument("--num-replicas", dest="ray_num_replicas", type=int, default=None, metavar="N")
    ray.add_argument(
        "--min-replicas",
        dest="ray_min_replicas",
        type=int,
        default=None,
        metavar="N",
        help="autoscaling lower bound",
    )
    ray.add_argument(
        "--max-replicas",
        dest="ray_max_replicas",
        type=int,
        default=None,
        metavar="N",
        help="autoscaling upper bound",
    )
    ray.add_argument(
        "--target-ongoing-requests",
        dest="ray_target_ongoing_requests",
        type=float,
        default=None,
        metavar="X",
    )
    ray.add_argument(
        "--max-ongoing-requests",
        dest="ray_max_ongoing_requests",
        type=int,
        default=None,
        metavar="N",
    )
    ray.add_argument(
        "--max-queued-requests", dest="ray_max_queued_requests", type=int, default=None, metavar="N"
    )
    ray.add_argument(
        "--max-replicas-per-node",
        dest="ray_max_replicas_per_node",
        type=int,
        default=None,
        metavar="N",
    )
    ray.add_argument(
        "--num-cpus",
        dest="ray_num_cpus",
        type=float,
        default=None,
        metavar="X",
        help="CPUs per replica",
    )
    ray.add_argument(
        "--forward-env",
        dest="ray_forward_env",
        action="append",
        default=None,
        metavar="NAME",
        help="pass this environment variable on to the replicas (repeatable; e.g. an API key)",
    )
    ray.add_argument(
        "--proxy-location",
        dest="ray_proxy_location",
        default=None,
        choices=("HeadOnly", "EveryNode", "Disabled"),
    )


def _config(args: argparse.Namespace) -> Any:
    file_settings = load_config_file(args.config) if args.config else {}
    overrides = {
        key: value for key, value in vars(args).items() if key not in {"rewards", "config", "ray"}
    }
    return merge(file_settings, overrides, [RewardSpec.parse(text) for text in args.rewards])


def main(argv: Sequence[str] | None = None) -> int:
    """Run `rewardkit serve` with ``argv``; return the exit status."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        config = _config(args)
        if args.ray:
            from rewardkit.serve.ray_serve import serve_on_ray as run
        else:
            from rewardkit.serve.local import serve_locally as run
        run(config)
    except ServeConfigError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as exc:
        if exc.name in {"fastapi", "uvicorn", "ray", "prometheus_client", "starlette", "httpx"}:
            print(serve_extra_missing(), file=sys.stderr)
            return EXIT_USAGE
        raise
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
