"""rewardkit: reward functions for LLM RL that are correct before they cost a training run."""

from rewardkit._version import __version__

__all__ = ["__version__"]
