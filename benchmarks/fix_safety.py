"""The fix-safety property of ``rewardkit check --fix`` (issue 33.4), run long: many generated
reward modules, each fixed by the real CLI on files and run on sample inputs before and after.

A safe fix must leave a reward unchanged or make it return what its author evidently meant (the
score its dict carried), never a constant, a stale value or a new exception, and a second
``--fix`` must change nothing. The modules are those of ``tests/checks/fix_programs.py`` (the
patterns that once broke safe fixes, mutated, and the rule examples with misspelled names);
``tests/checks/test_fix_property.py`` runs a few of them on a fixed seed in CI.

``--against DIR`` also runs an older rewardkit source tree (e.g. ``git archive COMMIT rewardkit
| tar -x -C DIR``) on the same modules, for comparison: the property should find its defects.

Prints, per rewardkit: modules and rewards checked, the rewards a fix changed wrongly, and the
first findings. Exit status 1 when the current rewardkit has a finding.

Usage: ``python benchmarks/fix_safety.py [--examples 200] [--seed N] [--against DIR]``
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from checks.fix_programs import Finding, check_fixes, reward_modules


def run(
    examples: int, chosen_seed: int, source_tree: Path | None, work: Path
) -> tuple[list[Finding], int]:
    """Every finding of ``examples`` generated module sets, fixed by the rewardkit at
    ``source_tree`` (``None``: the installed one), and how many sets had one."""
    findings: list[Finding] = []
    counter = [0]
    failing = [0]

    @seed(chosen_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=["generate"],
        suppress_health_check=list(HealthCheck),
    )
    @given(modules=reward_modules(rewards=12, examples=6))
    def one(modules: dict[str, str]) -> None:
        counter[0] += 1
        directory = work / f"{counter[0]}"
        shutil.rmtree(directory, ignore_errors=True)
        found = check_fixes(directory, modules, source_tree=source_tree)
        findings.extend(found)
        failing[0] += bool(found)
        shutil.rmtree(directory, ignore_errors=True)

    one()
    return findings, failing[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="module sets to generate")
    parser.add_argument("--seed", type=int, default=None, help="default: a random one")
    parser.add_argument("--against", type=Path, default=None, help="an older source tree")
    arguments = parser.parse_args()
    chosen_seed = arguments.seed if arguments.seed is not None else random.randrange(2**32)
    print(
        f"seed {chosen_seed}, {arguments.examples} module sets of 12 generated rewards and 6 "
        "mutated rule examples"
    )
    status = 0
    trees: list[tuple[str, Path | None]] = [("this rewardkit", None)]
    if arguments.against is not None:
        trees.append((f"rewardkit at {arguments.against}", arguments.against))
    with tempfile.TemporaryDirectory(prefix="fix_safety_") as work:
        for label, tree in trees:
            started = time.perf_counter()
            findings, failing = run(arguments.examples, chosen_seed, tree, Path(work))
            elapsed = time.perf_counter() - started
            print(
                f"{label}: {len(findings)} rewards changed wrongly by a safe fix, in {failing} "
                f"of {arguments.examples} module sets ({elapsed:.0f} s)"
            )
            for finding in findings[:8]:
                print(f"  {finding.module}:{finding.reward} {finding.sample!r}: {finding.problem}")
            if tree is None and findings:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
