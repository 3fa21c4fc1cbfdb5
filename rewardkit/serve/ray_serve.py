"""`rewardkit serve --ray`: the same app as replicas of a Ray Serve deployment.

Each replica builds the app (``ServeApp``) from the configuration, so the routes, limits and
schemas are those of the one-machine server; Ray Serve adds replicas on any node of the cluster
(a fixed number, or autoscaling between bounds), its HTTP proxy in front of them, its own bound
on queued requests (503 beyond ``max_queued_requests``) and the replacement of dead replicas.
The command connects to an existing cluster (``--address``) or starts a local Ray, deploys, and
on SIGTERM or Ctrl-C deletes its application (replicas finish the requests they hold) and exits.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import ray
from ray import serve

from rewardkit.serve.config import ServeConfig
from rewardkit.serve.local import CONFIG_ENV, app_from_environment


@serve.ingress(app_from_environment)
class RewardDeployment:
    """One replica: the `rewardkit serve` app, built in the replica by ``app_from_environment``
    from the configuration in its ``REWARDKIT_SERVE_CONFIG`` (set by ``deployment_options``)."""


def deployment_options(config: ServeConfig) -> dict[str, Any]:
    """Ray Serve's options for the deployment of ``config``: replicas (fixed or autoscaling),
    Ray's bounds on requests, CPUs per replica, and the configuration each replica builds from."""
    options = config.ray
    env_vars = {name: os.environ[name] for name in options.forward_env if name in os.environ}
    env_vars[CONFIG_ENV] = config.to_json()
    if os.environ.get("PYTHONPATH"):  # replicas import reward modules from where this process does
        env_vars["PYTHONPATH"] = os.environ["PYTHONPATH"]
    settings: dict[str, Any] = {
        "name": "RewardDeployment",
        "max_ongoing_requests": options.max_ongoing_requests,
        "max_queued_requests": options.max_queued_requests,
        "ray_actor_options": {"num_cpus": options.num_cpus, "runtime_env": {"env_vars": env_vars}},
        # A stopping replica lets the requests it holds finish: up to one sample's timeout.
        "graceful_shutdown_timeout_s": config.timeout + 5.0,
    }
    if options.max_replicas_per_node is not None:
        settings["max_replicas_per_node"] = options.max_replicas_per_node
    if options.autoscaling:
        low = options.min_replicas if options.min_replicas is not None else 1
        high = options.max_replicas if options.max_replicas is not None else max(low, 1)
        settings["autoscaling_config"] = {
            "min_replicas": low,
            "max_replicas": high,
            "target_ongoing_requests": options.target_ongoing_requests,
        }
    else:
        settings["num_replicas"] = options.num_replicas or 1
    return settings


def build_application(config: ServeConfig) -> Any:
    """The Ray Serve application of ``config`` (bound, not yet deployed)."""
    return serve.deployment(RewardDeployment).options(**deployment_options(config)).bind()


SPREAD_ENV = {
    "RAY_SERVE_PROXY_PREFER_LOCAL_NODE_ROUTING": "0",
    "RAY_SERVE_PROXY_PREFER_LOCAL_AZ_ROUTING": "0",
}
"""Ray Serve's proxy sends a request to a replica on its own node while that one has room; rewards
are CPU work whose requests are small, so every replica, on any node, should get its share."""


def deploy(config: ServeConfig) -> str:
    """Connect to Ray (``config.ray.address``, or a new local instance), start Serve (its proxy on
    ``config.host``/``config.port``) unless it runs already, deploy, and return the URL."""
    if not ray.is_initialized():
        ray.init(
            address=config.ray.address, runtime_env={"env_vars": SPREAD_ENV}, log_to_driver=False
        )
    serve.start(
        http_options={
            "host": config.host,
            "port": config.port,
            "location": config.ray.proxy_location,
        }
    )
    serve.run(
        build_application(config), name=config.ray.app_name, route_prefix=config.ray.route_prefix
    )
    prefix = config.ray.route_prefix.rstrip("/")
    return f"http://{config.host}:{config.port}{prefix}"


def undeploy(config: ServeConfig) -> None:
    """Delete the application (its replicas finish the requests they hold first); stop Serve too
    when no other application is left on it."""
    serve.delete(config.ray.app_name)
    if not serve.status().applications:
        serve.shutdown()


def serve_on_ray(config: ServeConfig) -> None:
    """Deploy ``config`` on Ray and serve until SIGTERM or Ctrl-C, then remove the application."""
    from rewardkit.serve.local import warn_if_open
    from rewardkit.serve.service import RewardService

    RewardService(config)  # import and check every reward here before any replica starts
    warn_if_open(config)
    url = deploy(config)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):  # after ray.init, which installs its own
        signal.signal(signum, lambda *_: stop.set())
    print(f"rewardkit serve: {len(config.rewards)} reward(s) on Ray Serve at {url}", flush=True)
    try:
        stop.wait()
    finally:
        undeploy(config)
        ray.shutdown()
