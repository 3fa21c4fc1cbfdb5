"""Rewards over HTTP: `rewardkit serve` (one machine or Ray Serve) and the ``RemoteReward`` client.

The server needs the ``serve`` extra (FastAPI, uvicorn, Prometheus client, Ray Serve); the
client needs only ``httpx`` (the ``client`` extra). Names are imported on first use.
See docs/serve.md.
"""

from __future__ import annotations

from rewardkit._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewardkit.serve.app import create_app as create_app
    from rewardkit.serve.client import RemoteReward as RemoteReward
    from rewardkit.serve.client import RemoteRewardError as RemoteRewardError
    from rewardkit.serve.config import RayOptions as RayOptions
    from rewardkit.serve.config import RewardSpec as RewardSpec
    from rewardkit.serve.config import ServeConfig as ServeConfig
    from rewardkit.serve.config import ServeConfigError as ServeConfigError
    from rewardkit.serve.outcomes import FailureKind as FailureKind
    from rewardkit.serve.outcomes import RemoteSampleError as RemoteSampleError
    from rewardkit.serve.outcomes import SampleFailure as SampleFailure
    from rewardkit.serve.outcomes import SampleOutcome as SampleOutcome

_EXPORTS = {
    "create_app": "rewardkit.serve.app",
    "RemoteReward": "rewardkit.serve.client",
    "RemoteRewardError": "rewardkit.serve.client",
    "RayOptions": "rewardkit.serve.config",
    "RewardSpec": "rewardkit.serve.config",
    "ServeConfig": "rewardkit.serve.config",
    "ServeConfigError": "rewardkit.serve.config",
    "FailureKind": "rewardkit.serve.outcomes",
    "RemoteSampleError": "rewardkit.serve.outcomes",
    "SampleFailure": "rewardkit.serve.outcomes",
    "SampleOutcome": "rewardkit.serve.outcomes",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [*_EXPORTS]
"""Every public name: the keys of the one table above."""
