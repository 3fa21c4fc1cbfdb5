"""Speed of the static checks: ``rewardkit check`` against bare ``libcst.parse_module`` and ``fixit lint``.

Generates a corpus of realistic reward modules (several rewards each, helpers, classes; some
modules with no rewards at all) in a temporary directory and prints, measured in this run:

- ``rewardkit check`` over the corpus (in process: the engine; and the CLI as a subprocess),
- bare ``libcst.parse_module`` over the same files, and the ratio (target: at most 3x),
- ``fixit lint`` with its default rules over the same files, and the speed-up (target: at least 5x),
- the incremental path the language server uses: re-analysing a 2,000-line module after a
  one-line edit (p50/p95 over many edits).

Usage: ``python benchmarks/check_speed.py [--modules 500] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField, check_source

HELPERS = '''

def normalize_{n}(text: str) -> str:
    """Lower-case, strip punctuation and articles (SQuAD style)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\\b(a|an|the)\\b", " ", text)
    return " ".join(text.split())


def token_f1_{n}(prediction: str, gold: str) -> tuple[float, float, float]:
    pred_tokens = normalize_{n}(prediction).split()
    gold_tokens = normalize_{n}(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0, 0.0, 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall), precision, recall


class Scorer{n}:
    """A small stateful helper, as real modules have."""

    def __init__(self, weights: dict[str, float] | None = None) -> None:
        self.weights = weights or {{"f1": 1.0, "em": 0.5}}
        self.calls = 0

    def combine(self, scores: dict[str, float]) -> float:
        self.calls += 1
        total = sum(self.weights.get(key, 0.0) * value for key, value in scores.items())
        return min(1.0, max(0.0, total / max(1e-9, sum(self.weights.values()))))
'''

REWARDS = [
    '''

@reward(name="qa_f1_{n}")
def qa_f1_{n}(final_response: str, answer: str, trajectory: list) -> dict:
    """F1 between the final response and the gold answer."""
    f1, precision, recall = token_f1_{n}(final_response, answer)
    em = float(normalize_{n}(final_response) == normalize_{n}(answer))
    return {{"reward": f1, "f1": f1, "em": em, "precision": precision, "recall": recall}}
''',
    """

@reward(name="webshop_{n}")
async def webshop_{n}(final_response: str, context: Context, **data) -> dict:
    env = await context.acquire_resource(
        spec=WEBSHOP_SPEC, id=context.rollout_id, scope="global", backend="local"
    )
    result = await env.step(final_response)
    if result.get("done"):
        return {{"reward": float(result["reward"]), "steps": result["steps"]}}
    return {{"reward": 0.0, "steps": result.get("steps", 0)}}
""",
    """

@reward
def length_penalty_{n}(final_response, answer, length_penalty, max_length):
    f1, _, _ = token_f1_{n}(final_response, answer)
    words = len(final_response.split())
    penalty = length_penalty * max(0, words - max_length) / max(1, max_length)
    score = f1 - penalty
    for marker in ("As an AI", "I cannot"):
        if marker in final_response:
            score -= 0.5
    return max(0.0, score)
""",
    """

class ApiJudge{n}(BaseReward):
    name = "api_judge_{n}"

    def __init__(self) -> None:
        self.scorer = Scorer{n}()

    async def call(self, final_response: str, answer: str) -> float:
        scores = {{"f1": token_f1_{n}(final_response, answer)[0], "em": 0.0}}
        if normalize_{n}(final_response) == normalize_{n}(answer):
            scores["em"] = 1.0
        return self.scorer.combine(scores)
""",
    """

@rk.reward(name="format_{n}")
def format_{n}(final_response, trajectory):
    result = {{"reward": 0.0}}
    result["has_box"] = float("\\\\boxed" in final_response)
    result["turns"] = float(len(trajectory))
    if result["has_box"]:
        result["reward"] = 1.0
    return result
""",
]

BAD_REWARDS = [
    """

@reward
def sloppy_{n}(final_respone, answr):
    if not final_respone:
        return
    return {{"score": token_f1_{n}(final_respone, answr)[0]}}
""",
    """

@reward(name="blocking_{n}")
async def blocking_{n}(final_response, context):
    time.sleep(0.01)
    env = context.acquire_resource("sandbox")
    return 1.0
""",
]

HEADER = '''"""Reward functions for task family {n} (generated for the benchmark)."""

from __future__ import annotations

import re
import string
import time
from collections import Counter

import rewardkit as rk
from rewardkit import BaseReward, Context, reward

WEBSHOP_SPEC = None
'''

PLAIN_HEADER = '''"""Text helpers with no rewards (generated for the benchmark)."""

from __future__ import annotations

import re
import string
from collections import Counter
'''


def generate_module(index: int, rng: random.Random) -> str:
    """One realistic module: helpers and 3-6 rewards (about 1 in 10 has no rewards)."""
    if index % 10 == 9:
        return PLAIN_HEADER + "".join(HELPERS.format(n=f"{index}_{k}") for k in range(3))
    parts = [HEADER.format(n=index), HELPERS.format(n=index)]
    for k in range(rng.randint(3, 6)):
        template = rng.choice(BAD_REWARDS) if rng.random() < 0.1 else rng.choice(REWARDS)
        parts.append(
            template.format(n=f"{index}_{k}")
            .replace(f"token_f1_{index}_{k}", f"token_f1_{index}")
            .replace(f"normalize_{index}_{k}", f"normalize_{index}")
            .replace(f"Scorer{index}_{k}", f"Scorer{index}")
        )
    return "".join(parts)


def write_corpus(directory: Path, modules: int, seed: int = 0) -> list[Path]:
    """Write ``modules`` generated modules and a pyproject declaring their task fields."""
    rng = random.Random(seed)
    (directory / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer", "length_penalty", "max_length"]\n',
        encoding="utf-8",
    )
    package = directory / "rewards"
    package.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(modules):
        path = package / f"task_{index:04d}.py"
        path.write_text(generate_module(index, rng), encoding="utf-8")
        paths.append(path)
    return paths


def _best_of(repeats: int, function) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def measure_incremental(edits: int = 200) -> tuple[float, float, int]:
    """p50/p95 (seconds) of re-analysing a ~2,000-line module after a one-line edit."""
    rng = random.Random(1)
    source = HEADER.format(n=0) + HELPERS.format(n=0)
    k = 0
    while source.count("\n") < 2000:
        source += (
            REWARDS[k % len(REWARDS)]
            .format(n=f"0_{k}")
            .replace("token_f1_0_", "token_f1_0#")
            .replace("#" + str(k), "")
            .replace("normalize_0_" + str(k), "normalize_0")
            .replace("Scorer0_" + str(k), "Scorer0")
        )
        k += 1
    config = CheckConfig(
        task_fields={
            n: TaskField(n, "pyproject") for n in ("answer", "length_penalty", "max_length")
        }
    )
    analyzer = ModuleAnalyzer()
    analyzer.analyze(source, "big.py", config)
    lines = source.split("\n")
    candidates = [i for i, line in enumerate(lines) if line.startswith("    ") and "return" in line]
    timings = []
    for step in range(edits):
        index = rng.choice(candidates)
        lines[index] = lines[index] + f"  # edit {step}"
        text = "\n".join(lines)
        start = time.perf_counter()
        analyzer.analyze(text, "big.py", config)
        timings.append(time.perf_counter() - start)
    timings.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.95) - 1], source.count("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", help="write the corpus here and keep it")
    parser.add_argument("--skip-fixit", action="store_true")
    arguments = parser.parse_args()

    directory = (
        Path(arguments.keep) if arguments.keep else Path(tempfile.mkdtemp(prefix="rk-bench-"))
    )
    try:
        paths = write_corpus(directory, arguments.modules)
        sources = [path.read_text(encoding="utf-8") for path in paths]
        total_lines = sum(source.count("\n") for source in sources)
        print(f"corpus: {len(paths)} modules, {total_lines} lines in {directory}")
        config = CheckConfig(
            task_fields={
                n: TaskField(n, "pyproject") for n in ("answer", "length_penalty", "max_length")
            }
        )

        parse_time = _best_of(arguments.repeats, lambda: [libcst.parse_module(s) for s in sources])
        check_time = _best_of(
            arguments.repeats,
            lambda: [check_source(s, str(p), config) for s, p in zip(sources, paths)],
        )
        found = sum(len(check_source(s, str(p), config)) for s, p in zip(sources, paths))
        print(f"libcst.parse_module (bare):          {parse_time:8.3f} s")
        print(f"rewardkit engine (check_source):     {check_time:8.3f} s   ({found} diagnostics)")
        print(
            f"ratio engine / bare parse:           {check_time / parse_time:8.2f}x   (target <= 3x)"
        )

        command = [sys.executable, "-m", "rewardkit", "check", "rewards"]
        cli_time = _best_of(
            arguments.repeats,
            lambda: subprocess.run(command, cwd=directory, capture_output=True, check=False),
        )
        print(
            f"rewardkit check (CLI subprocess):    {cli_time:8.3f} s   (process start-up included)"
        )
        print(f"ratio CLI / bare parse:              {cli_time / parse_time:8.2f}x")

        if not arguments.skip_fixit:
            fixit = shutil.which("fixit") or str(Path(sys.executable).parent / "fixit")
            fixit_command = [fixit, "lint", "rewards"]
            start = time.perf_counter()
            completed = subprocess.run(
                fixit_command, cwd=directory, capture_output=True, text=True, check=False
            )
            fixit_time = time.perf_counter() - start
            if completed.returncode not in (0, 1):
                print(f"fixit lint failed ({completed.returncode}): {completed.stderr[-500:]}")
            print(f"fixit lint (default rules, CLI):     {fixit_time:8.3f} s")
            print(
                f"speed-up rewardkit CLI vs fixit:     {fixit_time / cli_time:8.1f}x   (target >= 5x)"
            )

        p50, p95, lines = measure_incremental()
        print(
            f"incremental re-analysis, {lines}-line module, one-line edits: "
            f"p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms (LSP budget: p95 <= 50 ms end to end)"
        )
    finally:
        if not arguments.keep:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
