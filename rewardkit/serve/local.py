"""`rewardkit serve` on one machine: uvicorn, in this process or in ``--workers N`` processes.

The rewards are imported here first, so that a bad target fails at once with its message rather
than in every worker. With several workers, uvicorn's supervisor starts them (each imports the
rewards itself, from the configuration passed in ``REWARDKIT_SERVE_CONFIG``), replaces one that
dies (a ``kill -9``, an out-of-memory kill) and, on SIGTERM or Ctrl-C, stops accepting
connections, lets every worker finish the requests it holds (up to ``drain_timeout``), then exits.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
from typing import Any

from rewardkit.serve.config import ServeConfig

CONFIG_ENV = "REWARDKIT_SERVE_CONFIG"
"""The JSON ``ServeConfig`` a worker process reads (``app_from_environment``)."""


def app_from_environment() -> Any:
    """The app of one worker process (uvicorn's factory) or Ray Serve replica (the ingress
    builder), built from ``REWARDKIT_SERVE_CONFIG``."""
    from rewardkit.serve.app import create_app

    text = os.environ.get(CONFIG_ENV)
    if not text:
        raise RuntimeError(
            f"{CONFIG_ENV} is not set: this factory is for `rewardkit serve` workers"
        )
    return create_app(ServeConfig.from_json(text), worker_id=_worker_id())


def _worker_id() -> str | None:
    """``<Ray node id>/<pid>`` in a Ray Serve replica (where a host name says nothing), else ``None``."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return f"{ray.get_runtime_context().get_node_id()}/{os.getpid()}"


def _uvicorn_options(config: ServeConfig) -> dict[str, Any]:
    return {
        "host": config.host,
        "port": config.port,
        "log_level": config.log_level,
        "timeout_graceful_shutdown": config.drain_timeout,
        # Reward servers sit behind trainers on the same network; keep-alive connections are reused.
        "timeout_keep_alive": 30,
        "access_log": config.log_level == "debug",
        # uvicorn's protocol with a deadline for request headers and a cap on connections
        "http": "rewardkit.serve.connections:GuardedHttpProtocol",
    }


def warn_if_open(config: ServeConfig) -> None:
    """One line on stderr when the server listens beyond this machine without a token."""
    from rewardkit.serve.auth import TOKEN_ENV, is_loopback

    if config.token is None and not is_loopback(config.host):
        print(
            f"rewardkit serve: warning: listening on {config.host} without a token: anyone who can reach "
            f"port {config.port} can score with (and load) this server; set {TOKEN_ENV} or --token-file",
            file=sys.stderr,
            flush=True,
        )


def _stop_quietly() -> None:
    """After a drained shutdown uvicorn re-raises the signal that stopped it, to the handler it
    found: with this one, a stop by SIGTERM or Ctrl-C ends in exit status 0, as uvicorn's
    supervisor of ``--workers`` does."""
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: None)


def serve_locally(config: ServeConfig) -> None:
    """Serve ``config`` with uvicorn until SIGTERM or Ctrl-C (then drain and return)."""
    import uvicorn

    from rewardkit.serve.connections import raise_descriptor_limit
    from rewardkit.serve.service import RewardService

    raise_descriptor_limit()  # workers inherit it
    warn_if_open(config)

    if config.workers == 1:
        from rewardkit.serve.app import create_app

        app = create_app(config)  # imports and checks every reward
        _stop_quietly()  # uvicorn installs its own handlers at once: nothing to stop comes in between
        uvicorn.run(app, **_uvicorn_options(config))
        return
    RewardService(config)  # import and check every reward here, once, before any worker starts
    from rewardkit.serve.metrics import MULTIPROC_ENV

    metrics_dir = tempfile.mkdtemp(prefix="rewardkit-serve-metrics-")
    os.environ[MULTIPROC_ENV] = metrics_dir
    os.environ[CONFIG_ENV] = config.to_json()
    try:
        uvicorn.run(
            "rewardkit.serve.local:app_from_environment",
            factory=True,
            workers=config.workers,
            **_uvicorn_options(config),
        )
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
