"""pytest plugin for rewardkit."""
