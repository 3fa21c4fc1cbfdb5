"""The reward runtime in layers, bottom to top, none importing a layer above it:
``define`` (a reward and what it returns), ``run`` (one call: threads, processes, timeouts),
``batch`` (pulling a batch of samples or groups through the runner). Public names are
re-exported by the ``rewardkit`` face; docs/architecture.md has the layer table."""
