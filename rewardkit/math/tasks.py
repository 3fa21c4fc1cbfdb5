"""The tasks the symbolic sandbox's workers run, importable without sympy.

Tasks are pickled by reference (module and name): the calling process schedules them without
importing sympy, and the fork server imports this module and ``symbolic`` once, before forking
workers. Neither ``sandbox`` (the parent's side) nor ``sandbox_server`` (the processes' side)
needs the other's module for this, so the two stay one-way: ``sandbox`` -> ``sandbox_server``.
"""

from __future__ import annotations

from rewardkit.math.comparison import Outcome


def symbolic_task(answer: str, gold: str, policy: str, tolerance: float) -> Outcome:
    """Compare two normalized answers with sympy (``symbolic.symbolic_compare``), in a worker."""
    from rewardkit.math.symbolic import symbolic_compare

    return symbolic_compare(answer, gold, policy, tolerance)
