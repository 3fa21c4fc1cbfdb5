"""Speed of the static checks against the parser's floor and against ruff, measured in the same run.

Prints one row per figure of issue 16 (engine and CLI), each with its floor or peer and target:

1. ``rewardkit check`` on a 150-line module, cold (``--no-cache``), against the import-and-parse
   floor ``python -c "import libcst; libcst.parse_module(...)"`` (target <= 1.3x);
2. the same module unchanged since the last run (the cache answers) against ``ruff check`` with
   its cache (target <= 3x);
3. 1,600 modules, cold, against one bare ``libcst.parse_module`` of them all in this process
   (target <= 1.0x);
4. the engine's first analysis of a 2,000-line module with 100 rewards (what the language server
   runs before its first diagnostics) against one ``libcst.parse_module`` of it (target <= 1.2x);
5. ``rewardkit check --fix`` on the 1,600 modules (each run on a fresh copy: about one reward in
   ten has findings, most with a fix, each a libcst transformation verified by a re-check)
   against the same ``libcst.parse_module`` of every file (target <= 1.0x: fixing costs less
   than the parse a libcst-based checker pays before it finds anything);
6. ``rewardkit check`` in each output format (JSON, SARIF, text) on 1,600 modules that all have
   findings (one reward with findings in every module, most with a fix: JSON shows each fix's
   text edits) against one ``libcst.parse_module`` of each of them (target <= 0.5x);

and, for information, CPython's own parser on the same inputs and the incremental re-analysis
after one-line edits.

Rows 1 and 2 start Python processes. They run rewardkit as a user has it: copied into a fresh
virtual environment's site-packages and byte-compiled, as ``pip install`` does, with the console
script pip writes (pre-commit installs hooks the same way). The shared development venv imports
rewardkit through setuptools' editable finder, which adds tens of milliseconds to *every* Python
start (it imports pathlib, fnmatch, urllib...): those figures are printed too. The libcst floor
runs with the same interpreter and finds libcst on ``PYTHONPATH`` (the dev venv's site-packages),
as does rewardkit. The process figures are measured in rounds, each command once per round, so
that all meet the same moments of load on a busy machine; every figure is the best of its runs.
The engine's figures (row 4, and the re-analysis after an edit) are measured in a process that
imports the engine only, as the language server does. The load average is printed before and
after.

Usage: ``python benchmarks/check_speed.py [--files 1600] [--repeats 15] [--keep DIR]
[--rows single,editor,many,formats]`` (``--rows formats``: row 6 alone).
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import rewardkit
from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField

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
    f1, precision, recall = token_f1_{m}(final_response, answer)
    em = float(normalize_{m}(final_response) == normalize_{m}(answer))
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
    f1, _, _ = token_f1_{m}(final_response, answer)
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
        self.scorer = Scorer{m}()

    async def call(self, final_response: str, answer: str) -> float:
        scores = {{"f1": token_f1_{m}(final_response, answer)[0], "em": 0.0}}
        if normalize_{m}(final_response) == normalize_{m}(answer):
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
    return {{"score": token_f1_{m}(final_respone, answr)[0]}}
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

TASK_FIELDS = ("answer", "length_penalty", "max_length")
PYPROJECT = '[tool.rewardkit]\ntask_fields = ["answer", "length_penalty", "max_length"]\n'


def generate_module(index: int, rng: random.Random, rewards: int | None = None) -> str:
    """One realistic module: helpers and 3-6 rewards (about 1 in 10 has no rewards)."""
    if rewards is None and index % 10 == 9:
        return PLAIN_HEADER + "".join(HELPERS.format(n=f"{index}_{k}") for k in range(3))
    parts = [HEADER.format(n=index), HELPERS.format(n=index)]
    for k in range(rewards if rewards is not None else rng.randint(3, 6)):
        template = rng.choice(BAD_REWARDS) if rng.random() < 0.1 else rng.choice(REWARDS)
        parts.append(template.format(n=f"{index}_{k}", m=index))
    return "".join(parts)


def findings_module(index: int, rng: random.Random) -> str:
    """A module with findings: helpers, one of :data:`BAD_REWARDS`, then 2-5 rewards."""
    parts = [HEADER.format(n=index), HELPERS.format(n=index)]
    parts.append(BAD_REWARDS[index % len(BAD_REWARDS)].format(n=f"{index}_0", m=index))
    for k in range(1, rng.randint(3, 6)):
        parts.append(rng.choice(REWARDS).format(n=f"{index}_{k}", m=index))
    return "".join(parts)


def module_of_lines(lines: int, seed: int = 0) -> str:
    """A module of about ``lines`` lines: helpers, then rewards until it is long enough."""
    rng = random.Random(seed)
    text = HEADER.format(n=0) + HELPERS.format(n=0)
    k = 0
    while text.count("\n") < lines:
        text += rng.choice(REWARDS).format(n=f"0_{k}", m=0)
        k += 1
    return text


EXTRA_HELPER = '''

def overlap_{index}(first: str, second: str) -> float:
    """Share of the words of ``second`` that ``first`` contains."""
    words = set(normalise_{index}(first).split())
    expected = normalise_{index}(second).split()
    if not expected:
        return 0.0
    hits = sum(1 for word in expected if word in words)
    return hits / len(expected)
'''


def editor_module(rewards: int = 100) -> str:
    """The language server benchmark's module (``benchmarks/lsp_latency.py``: a function reward,
    a class reward and a helper per block), with one more helper per block, holding ``rewards``
    rewards in about 2,000 lines."""
    from lsp_latency import HEADER as EDITOR_HEADER
    from lsp_latency import REWARD_TEMPLATE

    per_block = REWARD_TEMPLATE.count("@reward(") + REWARD_TEMPLATE.count("(BaseReward)")
    blocks = [
        REWARD_TEMPLATE.format(index=i, digit=i % 10) + EXTRA_HELPER.format(index=i)
        for i in range(rewards // per_block)
    ]
    return EDITOR_HEADER + "".join(blocks)


def write_corpus(
    directory: Path,
    modules: int,
    seed: int = 0,
    generate: Callable[[int, random.Random], str] = generate_module,
) -> list[Path]:
    """Write ``modules`` modules made by ``generate`` and a pyproject declaring their task
    fields."""
    rng = random.Random(seed)
    (directory / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    package = directory / "rewards"
    package.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(modules):
        path = package / f"task_{index:04d}.py"
        path.write_text(generate(index, rng), encoding="utf-8")
        paths.append(path)
    return paths


# -- measuring ---------------------------------------------------------------------------------


def best_of(repeats: int, function: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs, in seconds (the least disturbed by other work)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def best_process(repeats: int, command: Sequence[str], **kwargs: object) -> float:
    """The fastest of ``repeats`` runs of a process, in seconds."""

    def run() -> None:
        subprocess.run(command, capture_output=True, check=False, **kwargs)  # type: ignore[call-overload]

    return best_of(repeats, run)


def best_processes(
    repeats: int, commands: dict[str, tuple[Sequence[str], dict[str, object]]]
) -> dict[str, float]:
    """The fastest run of each command, the commands taking turns (A, B, C, A, B, C...): on a
    busy machine every one of them meets the same moments of load."""
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeats):
        for name, (command, options) in commands.items():
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=False, **options)  # type: ignore[call-overload]
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def install_like_pip(directory: Path) -> tuple[Path, Path]:
    """A fresh virtual environment with rewardkit copied into its site-packages and byte-compiled
    (what ``pip install`` of the wheel leaves), and the console script pip writes.

    Returns (its python, its ``rewardkit`` script)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(directory)], check=True)
    python = directory / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = Path(purelib) / "rewardkit"
    shutil.copytree(
        Path(rewardkit.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [str(python), "-m", "compileall", "-q", str(target)],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    script = directory / "bin" / "rewardkit"
    script.write_text(
        f"#!{python}\nimport sys\nfrom rewardkit.cli import main\n"
        "if __name__ == '__main__':\n    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
        "    sys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return python, script


def parse_each(parse: Callable[[str], object], sources: Sequence[str]) -> None:
    """Parse every source, keeping no tree (a floor that does not pay for holding them all)."""
    for source in sources:
        parse(source)


def row(name: str, figure: float, peer_name: str, peer: float, target: float | None) -> bool:
    """Print one row; returns whether it meets its target (rows without one count as met)."""
    ratio = figure / peer
    verdict = (
        ""
        if target is None
        else (f"target <= {target:g}x: " + ("met" if ratio <= target else "NOT MET"))
    )
    print(
        f"{name:<46} {figure * 1000:9.1f} ms | {peer_name:<40} {peer * 1000:9.1f} ms | "
        f"{ratio:6.2f}x  {verdict}"
    )
    return target is None or ratio <= target


def engine_rows() -> dict[str, object]:
    """The engine's figures on the editor module, measured in this (engine-only) process."""
    source = editor_module(100)
    config = CheckConfig(task_fields={name: TaskField(name, "pyproject") for name in TASK_FIELDS})
    analysis = ModuleAnalyzer().analyze(source, "big.py", config)
    first = best_of(7, lambda: ModuleAnalyzer().analyze(source, "big.py", config))
    parsed = best_of(7, lambda: ast.parse(source))
    analyzer = ModuleAnalyzer()
    analyzer.analyze(source, "big.py", config)
    rng = random.Random(1)
    text_lines = source.split("\n")
    candidates = [
        i for i, line in enumerate(text_lines) if line.startswith("    ") and "return" in line
    ]
    timings = []
    for step in range(200):
        index = rng.choice(candidates)
        text_lines[index] += f"  # edit {step}"
        edited = "\n".join(text_lines)
        start = time.perf_counter()
        analyzer.analyze(edited, "big.py", config)
        timings.append(time.perf_counter() - start)
    timings.sort()
    return {
        "rewards": len(analysis.rewards),
        "first": first,
        "ast": parsed,
        "edits": [statistics.median(timings), timings[189], timings[-1]],
    }


def best_fix_run(
    repeats: int, script: Path, corpus: Path, workdir: Path, env: dict[str, str]
) -> tuple[float, str]:
    """The fastest of ``repeats`` runs of ``rewardkit check --fix --no-cache`` over ``corpus``,
    each on a fresh copy of it (copying is not timed), and the fix summary line it printed."""
    best, summary = float("inf"), ""
    for attempt in range(repeats):
        copy = workdir / f"fixing-{attempt}"
        shutil.copytree(corpus, copy)
        start = time.perf_counter()
        completed = subprocess.run(
            [str(script), "check", "--fix", "--no-cache", "rewards"],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        best = min(best, time.perf_counter() - start)
        lines = completed.stdout.splitlines()
        if completed.returncode not in (0, 1) or not lines:
            raise RuntimeError(f"rewardkit check --fix failed:\n{completed.stderr[-2000:]}")
        summary = lines[0]
        shutil.rmtree(copy)
    return best, summary


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def single_module_rows(
    workdir: Path, python: Path, script: Path, installed_env: dict[str, str], repeats: int
) -> bool:
    """Rows 1 and 2: one 150-line module, the installed command against its floor and ruff."""
    dev_env = {**os.environ, "PYTHONPYCACHEPREFIX": str(workdir / "pycache")}
    dev_env.pop("PYTHONDONTWRITEBYTECODE", None)  # the worktree gets byte code, as installs do
    single = workdir / "single"
    single.mkdir()
    (single / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    module = single / "rewards.py"
    module.write_text(module_of_lines(150), encoding="utf-8")
    lines = module.read_text(encoding="utf-8").count("\n")
    floor_code = "import libcst, sys; libcst.parse_module(open(sys.argv[1]).read())"
    ast_floor_code = "import ast, sys; ast.parse(open(sys.argv[1]).read())"
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    dev_python = sys.executable
    dev_command = [dev_python, "-m", "rewardkit", "check"]
    installed = {"cwd": single, "env": installed_env}
    dev = {"cwd": single, "env": dev_env}
    for warm_up in (
        [str(script), "check", "rewards.py"],
        [*dev_command, "rewards.py"],
        [ruff, "check", "rewards.py"],
    ):  # the caches of the "unchanged" rows, and byte code for the dev venv's modules
        subprocess.run(warm_up, capture_output=True, check=False, cwd=single, env=dev_env)
    subprocess.run(
        [str(script), "check", "rewards.py"], capture_output=True, check=False, **installed
    )  # type: ignore[arg-type]
    print(f"\n{lines}-line module, {repeats} rounds, every command once per round, best run:")
    times = best_processes(
        repeats,
        {
            "floor": ([str(python), "-c", floor_code, str(module)], installed),
            "cold": ([str(script), "check", "--no-cache", "rewards.py"], installed),
            "warm": ([str(script), "check", "rewards.py"], installed),
            "ruff": ([ruff, "check", "rewards.py"], {"cwd": single}),
            "bare": ([str(python), "-c", "pass"], installed),
            "ast": ([str(python), "-c", ast_floor_code, str(module)], installed),
            "dev floor": ([dev_python, "-c", floor_code, str(module)], dev),
            "dev cold": ([*dev_command, "--no-cache", "rewards.py"], dev),
            "dev warm": ([*dev_command, "rewards.py"], dev),
            "dev bare": ([dev_python, "-c", "pass"], dev),
        },
    )
    met = row(
        "rewardkit check, cold (installed)",
        times["cold"],
        "import libcst + parse (same python)",
        times["floor"],
        1.3,
    )
    met &= row(
        "rewardkit check, unchanged (installed)",
        times["warm"],
        "ruff check, unchanged (its cache)",
        times["ruff"],
        3.0,
    )
    for name, figure, peer_name, peer in (
        ("  (for information) python -c pass", "bare", "ruff check, unchanged", "ruff"),
        ("  (for information) import ast + parse", "ast", "import libcst + parse", "floor"),
    ):
        row(name, times[figure], peer_name, times[peer], None)
    print("the same in the shared dev venv (setuptools' editable finder runs at every start):")
    for name, figure, peer_name, peer in (
        (
            "  rewardkit check, cold (dev venv)",
            "dev cold",
            "import libcst + parse (dev venv)",
            "dev floor",
        ),
        ("  rewardkit check, unchanged (dev venv)", "dev warm", "ruff check, unchanged", "ruff"),
        ("  python -c pass (dev venv)", "dev bare", "ruff check, unchanged", "ruff"),
    ):
        row(name, times[figure], peer_name, times[peer], None)
    return met


def editor_module_rows() -> bool:
    """Row 4: the language server's first analysis of a 2,000-line module, in a process of its
    own that imports the engine only (as the server does: a process that has imported libcst
    pays for its objects at every garbage collection)."""
    import libcst  # only in this process: the engine's process never imports it

    source = editor_module(100)
    engine = json.loads(
        subprocess.run(
            [sys.executable, __file__, "--engine-rows"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    print(f"\n{source.count(chr(10)):,}-line module, {engine['rewards']} rewards, 7 runs each:")
    parse_one = best_of(7, lambda: libcst.parse_module(source))
    met = row(
        "first analysis (ModuleAnalyzer().analyze)",
        engine["first"],
        "libcst.parse_module of it",
        parse_one,
        1.2,
    )
    row(
        "  (for information) ast.parse of it",
        engine["ast"],
        "libcst.parse_module of it",
        parse_one,
        None,
    )
    p50, p95, worst = engine["edits"]
    print(
        f"  (for information) re-analysis after a one-line edit (200 edits): p50 "
        f"{p50 * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms, max {worst * 1000:.2f} ms"
    )
    gc.collect()
    return met


def corpus_and_floor(
    directory: Path, files: int, generate: Callable[[int, random.Random], str]
) -> tuple[Path, list[str], float]:
    """A corpus of ``files`` modules made by ``generate`` in ``directory``, their texts, and
    the floor: the best time of one ``libcst.parse_module`` of each."""
    import libcst

    directory.mkdir()
    sources = [
        path.read_text(encoding="utf-8")
        for path in write_corpus(directory, files, generate=generate)
    ]
    return directory, sources, best_of(2, lambda: parse_each(libcst.parse_module, sources))


def many_modules_rows(
    workdir: Path, script: Path, installed_env: dict[str, str], files: int
) -> bool:
    """Rows 3 and 5: many modules, cold, checked, then fixed."""
    corpus, sources, parse_all = corpus_and_floor(workdir / "corpus", files, generate_module)
    total_lines = sum(source.count("\n") for source in sources)
    print(f"\n{len(sources):,} modules, {total_lines:,} lines:")
    many = best_process(
        3, [str(script), "check", "--no-cache", "rewards"], cwd=corpus, env=installed_env
    )
    met = row(
        "rewardkit check, cold (2 cores)", many, "libcst.parse_module of every file", parse_all, 1.0
    )
    ast_all = best_of(2, lambda: parse_each(ast.parse, sources))
    row(
        "  (for information) ast.parse of every file",
        ast_all,
        "libcst.parse_module of every file",
        parse_all,
        None,
    )
    fixing, summary = best_fix_run(3, script, corpus, workdir, installed_env)
    met &= row(
        "rewardkit check --fix, cold (2 cores)",
        fixing,
        "libcst.parse_module of every file",
        parse_all,
        1.0,
    )
    print(f"  ({summary})")
    return met


def output_format_rows(
    workdir: Path, script: Path, installed_env: dict[str, str], files: int
) -> bool:
    """Row 6: modules that all have findings, in every output format."""
    findings, sources, parse_found = corpus_and_floor(workdir / "findings", files, findings_module)
    print(f"\n{len(sources):,} modules, every one with findings:")
    formats = ("json", "sarif", "text")
    reports = best_processes(
        3,
        {
            name: (
                [str(script), "check", "--no-cache", "--format", name, "rewards"],
                {"cwd": findings, "env": installed_env},
            )
            for name in formats
        },
    )
    met = True
    for name in formats:
        met &= row(
            f"rewardkit check --format {name} (2 cores)",
            reports[name],
            "libcst.parse_module of every file",
            parse_found,
            0.5,
        )
    return met


ROWS = ("single", "editor", "many", "formats")
"""Groups of rows: 1-2 (one module), 4 (the editor's module), 3 and 5 (many modules), 6 (every
output format on modules with findings)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1600)
    parser.add_argument("--repeats", type=int, default=15, help="runs per process figure")
    parser.add_argument("--keep", help="write the corpus here and keep it")
    parser.add_argument(
        "--rows", default=",".join(ROWS), help=f"comma-separated groups of rows ({', '.join(ROWS)})"
    )
    parser.add_argument("--engine-rows", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.engine_rows:
        print(json.dumps(engine_rows()))
        return 0
    rows = set(arguments.rows.split(","))
    workdir = Path(arguments.keep) if arguments.keep else Path(tempfile.mkdtemp(prefix="rk-speed-"))
    workdir.mkdir(parents=True, exist_ok=True)
    met = True
    try:
        print(f"before: {load()}")
        python, script = install_like_pip(workdir / "venv")
        dev_site = sysconfig.get_paths()["purelib"]
        installed_env = {**os.environ, "PYTHONPATH": dev_site}  # libcst for the floor; no worktree
        installed_env.pop("PYTHONDONTWRITEBYTECODE", None)
        if "single" in rows:
            met &= single_module_rows(workdir, python, script, installed_env, arguments.repeats)
        if "editor" in rows:
            met &= editor_module_rows()
        if "many" in rows:
            met &= many_modules_rows(workdir, script, installed_env, arguments.files)
        if "formats" in rows:
            met &= output_format_rows(workdir, script, installed_env, arguments.files)
        print(f"\nafter: {load()}")
        print("every target met" if met else "SOME TARGET NOT MET")
    finally:
        if not arguments.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
