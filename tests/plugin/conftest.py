"""Helpers for the plugin's pytester runs: a module of small rewards and graders to name in golden files."""

from __future__ import annotations

import contextlib
import importlib
import textwrap

import hypothesis  # noqa: F401  (see below)
import pytest
import tomlkit  # noqa: F401

# pytester's in-process runs drop every module they import when they end, so anything
# an inner run imports lazily is imported again (and assertion-rewritten) in each run:
# hypothesis' own pytest plugin imports hypothesis in its summary, which costs seconds.
# Importing these here once keeps each inner run fast.
# (The runtime's modules too: a class imported anew by an inner run would not be the class of
# objects made by the rewardkit package's names, which the package caches.)
_PRELOADED = (
    "rewardkit",
    "rewardkit.runtime.define.rewards",
    "rewardkit.runtime.batch.calculate",
    "rewardkit.runtime.run.execution",
    "rewardkit.runtime.run.reward_processes",
    "rewardkit.math",
    "rewardkit.testing.calling",
    "rewardkit.testing.contract",
    # The process pool's multiprocessing modules: a second copy's classes (popen_forkserver's
    # _DupFd) would not pickle as the first copy's, which the pool already holds.
    "multiprocessing.forkserver",
    "multiprocessing.popen_forkserver",
)
for _heavy in _PRELOADED:
    with contextlib.suppress(ImportError):  # a missing part: the inner runs import it themselves
        importlib.import_module(_heavy)

REWARDS_MODULE = textwrap.dedent(
    '''
    """Rewards and graders the golden files in these tests name as ``plugrewards:...``."""
    import asyncio

    from rewardkit import reward


    @reward(name="plug_length_reward")
    def length_reward(final_response: str, max_length: int = 10):
        return {"reward": min(len(final_response), max_length) / max_length, "length": len(final_response)}


    @reward(name="plug_async_echo")
    async def async_echo(final_response: str, answer: str):
        await asyncio.sleep(0)
        return {"reward": 1.0 if final_response.strip() == answer else 0.0, "matched": final_response.strip() == answer}


    @reward(name="plug_broken")
    def broken(final_response: str):
        raise ValueError("cannot grade " + final_response)


    def same_text(given, gold):
        """A pair grader: equal after stripping spaces, with normalized forms and a rule."""
        a, b = given.strip(), gold.strip()
        return {"correct": a == b, "reason": "stripped-text", "detail": {"normalized_answer": a, "normalized_gold": b}}


    def cased_text(given, gold, policy="case-sensitive"):
        """A pair grader with policies of its own and a default one."""
        equal = given.lower() == gold.lower() if policy == "case-insensitive" else given == gold
        return {"correct": equal, "reason": policy}
    '''
)


@pytest.fixture
def plug(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester whose folder holds ``plugrewards.py`` (on ``sys.path``) and an ini file."""
    pytester.makepyfile(plugrewards=REWARDS_MODULE)
    pytester.syspathinsert()
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester
