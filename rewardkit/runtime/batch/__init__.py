"""Pulling a batch through the runner: ``calculate_reward(s)``, group rewards over their groups,
and batch metrics. Imports ``run`` and ``define``, nothing above."""
