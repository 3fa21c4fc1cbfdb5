"""Defining a reward: errors, fields, results, the registry, the decorators, result schemas and
the execution options a definition validates. Imports nothing of rewardkit above it."""
