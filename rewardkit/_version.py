"""The package version, read by setuptools and ``rewardkit --version``."""

__version__ = "0.1.0"
