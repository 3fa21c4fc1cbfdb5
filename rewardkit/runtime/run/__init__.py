"""Running one call of a reward: the sample runner, its thread pool and worker processes,
timeouts, and ``Context``. Imports ``define`` and nothing above it."""
