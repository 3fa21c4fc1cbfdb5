"""Tests of rewardkit.testing: strategies, the reward contract, the hack search."""
