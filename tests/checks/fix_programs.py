"""Reward modules to fix, and the judge of what fixing them did (issue 33.4's property).

:func:`reward_modules` is a hypothesis strategy of modules made of the patterns that broke
safe fixes (a dict changed between its display and its ``return``, a ``:=`` in an entry, a
value that runs a judge, a property or ``__getitem__``, a local named ``math``, a misspelled
parameter read through ``locals()``, ``eval``, ``vars()``, a keyword self-call or ``f"{x=}"``),
mutated, and of the rule examples (:data:`rewardkit.checks.rules.RULES`) with misspelled
parameters. :func:`check_fixes` writes them to a directory, runs ``rewardkit check --fix`` on
it (the real CLI, in a subprocess), runs every reward before and after on sample inputs and
returns what a safe fix changed that it must not have. Shared by ``test_fix_property.py``
(a fixed seed, in CI) and ``benchmarks/fix_safety.py`` (longer runs).
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import gc
import inspect
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from rewardkit.checks.fixes import SCORE_KEYS
from rewardkit.checks.rules import RULES
from rewardkit.runtime.define import registry

CONFIG = '[tool.rewardkit]\ntask_fields = ["answer", "solution", "question"]\n'
"""The project's configuration: GSM8K's `answer` and open-r1's gold column `solution` declared."""

SAMPLES: tuple[tuple[str, str], ...] = (("4", "4"), (" 4 ", "5"), ("", ""), ("#### 7", "7"))
"""(the model's output, the gold) each reward is called with, in this order."""

HELPERS = '''import math

from rewardkit import reward

CALLS = []


class _Judge:
    """Every read counts, and gives another value: run twice, it shows."""

    @property
    def verdict(self):
        CALLS.append("verdict")
        return len(CALLS) / 10

    def judge(self, text):
        CALLS.append("judge")
        return len(CALLS) / 10

    def __getitem__(self, key):
        CALLS.append("item")
        return len(CALLS) / 10


JUDGE = TABLE = MATH = _Judge()


def judge(text):
    CALLS.append("judge")
    return len(CALLS) / 10
'''

OUTPUT_NAMES = ("final_response", "final_respone", "final_reponse", "solution_sr", "soluton_str")
GOLD_NAMES = ("answer", "answr", "anwser")
SETUPS = ("float(OUT == GOLD)", "judge(OUT)", "len(OUT) / 10", "JUDGE.verdict", "0.5")
SCORE_ENTRY_KEYS = ("score", "acc", "f1", "accuracy", "value", "quality", "n")
VALUES = (
    "s",
    "0.5",
    "-1",
    "float(OUT == GOLD)",
    "judge(OUT)",
    "JUDGE.verdict",
    "TABLE[OUT]",
    "s * 1",
    "(t := judge(OUT))",
    "math.judge(OUT)",
    "len(OUT)",
)
EXTRAS = (
    '"n": len(OUT)',
    '"label": "x"',
    '"calls": tuple(CALLS)',
    '"acc": (s := judge(GOLD))',
    '"seen": locals()["GOLD"]',
    '"seen": eval("GOLD")',
    '"seen": vars()["GOLD"]',
    '"seen": f"{GOLD=}"',
    '"seen": f"{GOLD!r}"',
    '"closure": (lambda: GOLD)()',
    '"own": [GOLD for GOLD in ("z",)][0]',
    '"text": "GOLD"',
)
MUTATIONS = (
    'result["KEY"] = float(OUT == GOLD)',
    'result["KEY"] = judge(GOLD)',
    "result.update(n=2)",
    'result["n"] = 0',
    "result.pop('label', None)",
    "alias = result",
    "pass",
)
PRELUDES = (
    "",
    "def strip():\n    nonlocal GOLD\n    GOLD = GOLD.strip()\nstrip()",
    "GOLD = GOLD.strip()",
    "OUT = [OUT for OUT in (OUT,)][0]",
)
"""Statements before the return: the parameter rebound, here or through `nonlocal`."""
NUMBERS = ("1", "0", "int(OUT == GOLD)", "len(OUT)", "int(len(OUT) / 3)", "bool(OUT)", "s")


@dataclass(frozen=True)
class Reward:
    """One generated reward function, and what its parameters receive."""

    name: str
    source: str
    parameters: tuple[str, ...]


def _with_names(text: str, output: str, gold: str) -> str:
    return text.replace("OUT", output).replace("GOLD", gold)


@st.composite
def _dict_body(draw: st.DrawFn, output: str, gold: str) -> str:
    """Statements that return a dict: a display, a local dict changed or not, or ``dict()``."""
    key = draw(st.sampled_from(SCORE_ENTRY_KEYS))
    value = draw(st.sampled_from(VALUES))
    extras = draw(
        st.lists(st.sampled_from(EXTRAS), max_size=3, unique_by=lambda e: e.partition(":")[0])
    )
    entries = draw(st.permutations([f'"{key}": {value}', *extras]))
    lines = []
    if "math." in value:
        lines.append("math = MATH")
    shape = draw(st.sampled_from(("display", "local", "call")))
    keys = [entry.partition(":")[0] for entry in entries]
    if shape == "call" and len(set(keys)) == len(keys):  # a repeated keyword does not compile
        keywords = (re.sub(r'^"(\w+)": ', r"\1=", entry) for entry in entries)
        lines.append(f"return dict({', '.join(keywords)})")
    elif shape == "local":
        lines.append(f"result = {{{', '.join(entries)}}}")
        for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=2)):
            lines.append(mutation.replace("KEY", key))
        lines.append("return result")
    else:
        lines.append(f"return {{{', '.join(entries)}}}")
    return "\n".join(_with_names(line, output, gold) for line in lines)


@st.composite
def generated_reward(draw: st.DrawFn, name: str) -> Reward:
    """A reward with possibly misspelled parameters returning a dict or a number."""
    output = draw(st.sampled_from(OUTPUT_NAMES))
    gold = draw(st.sampled_from(GOLD_NAMES))
    setup = _with_names(f"s = {draw(st.sampled_from(SETUPS))}", output, gold)
    parameters = [output, gold]
    lines = [setup]
    prelude = draw(st.sampled_from(PRELUDES))
    if prelude:
        lines.extend(_with_names(prelude, output, gold).split("\n"))
    if draw(st.booleans()):
        body = draw(_dict_body(output, gold))
    else:
        body = "return " + _with_names(draw(st.sampled_from(NUMBERS)), output, gold)
        if draw(st.booleans()):  # a keyword self-call
            parameters.append("depth=1")
            lines.append(
                f"if depth:\n    return {name}({output}={output}.strip(), {gold}={gold}, "
                "depth=0).reward"
            )
    lines.extend(body.split("\n"))
    text = "\n".join("    " + line.replace("\n", "\n    ") for line in lines)
    source = f"@reward\ndef {name}({', '.join(parameters)}):\n{text}\n"
    return Reward(name, source, (output, gold))


def _rule_examples() -> list[str]:
    """The rule examples that define rewards and run without anything but rewardkit (no
    subprocess, clock, random draw or math-verify)."""
    examples = []
    for rule in RULES:
        for example in (*rule.VALID, *rule.INVALID):
            code = example if isinstance(example, str) else example.code
            code = code.replace("from agentfly.rewards import", "from rewardkit import")
            imports = set(re.findall(r"^(?:from|import) ([\w.]+)", code, re.MULTILINE))
            if "@" in code and imports <= {"rewardkit", "asyncio"}:
                examples.append(code)
    return examples


RULE_EXAMPLES = tuple(_rule_examples())
EXAMPLE_MISSPELLINGS = (
    ("final_response", "final_respone"),
    ("answer", "answr"),
    ("prediction", "predicton"),
    ("'score'", "'acc'"),
)


@st.composite
def mutated_example(draw: st.DrawFn) -> str:
    """A rule example with some of its names misspelled (whole words)."""
    code = draw(st.sampled_from(RULE_EXAMPLES))
    for before, after in draw(st.lists(st.sampled_from(EXAMPLE_MISSPELLINGS), unique=True)):
        code = re.sub(rf"\b{re.escape(before)}(?!\w)", after, code)
    return code


@st.composite
def reward_modules(draw: st.DrawFn, rewards: int = 12, examples: int = 6) -> dict[str, str]:
    """File name -> text: one module of generated rewards, and mutated rule examples."""
    generated = [draw(generated_reward(f"r{index}")) for index in range(rewards)]
    modules = {"generated.py": HELPERS + "\n\n" + "\n\n".join(r.source for r in generated)}
    for index in range(examples):
        modules[f"example_{index}.py"] = draw(mutated_example())
    return modules


# -- running them ---------------------------------------------------------------------------------


Outcome = tuple[str, Any]
"""("value", what the function returned) or ("raise", the exception's type name)."""

_MISSING = object()


def _arguments(
    function: Callable[..., Any], sample: tuple[str, str]
) -> tuple[list[Any], dict[str, Any]]:
    """Arguments for every parameter a field fills (or would, spelled right): the output first,
    then the gold, ``None`` for a context and a list for a trajectory, positionally or by name
    for a keyword-only one; and with ``**kwargs``, the fields no parameter takes, by name (as
    rewardkit passes them). A parameter with a default that names no field keeps it."""
    values: list[Any] = []
    keywords: dict[str, Any] = {}
    parameters = inspect.signature(function).parameters
    for index, parameter in enumerate(parameters.values()):
        if parameter.kind is parameter.VAR_KEYWORD:
            keywords.update((k, v) for k, v in _fields(sample).items() if k not in parameters)
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            continue
        optional = parameter.default is not inspect.Parameter.empty
        if optional and not difflib.get_close_matches(parameter.name, FIELDS, cutoff=0.75):
            continue  # not a field rewardkit fills (`depth=1`, `method="strict"`)
        name = parameter.name.lower()
        if "ctx" in name or "context" in name:
            value: Any = None
        elif "traj" in name or "message" in name:
            value = []
        else:
            value = sample[0] if index == 0 else sample[1]
        if parameter.kind is parameter.KEYWORD_ONLY:
            keywords[parameter.name] = value
        else:
            values.append(value)
    return values, keywords


FIELDS = ("final_response", "answer", "solution", "question")
"""The fields a reward is called with through rewardkit: the output, then the gold three times
(`answer`, `solution`, `question`), as a dataset with those columns gives them."""


def _fields(sample: tuple[str, str]) -> dict[str, str]:
    return dict(zip(FIELDS, (sample[0], sample[1], sample[1], sample[1])))


def _call(function: Callable[..., Any], sample: tuple[str, str], by_field: bool) -> Outcome:
    try:
        if by_field:
            result = function(**_fields(sample))
        else:
            arguments, keywords = _arguments(function, sample)
            result = function(*arguments, **keywords)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
    except Exception as error:
        return ("raise", type(error).__name__)
    if inspect.iscoroutine(result):  # an un-awaited coroutine: broken before any fix
        result.close()
        return ("raise", "coroutine")
    return ("value", getattr(result, "reward", result) if by_field else result)


@contextmanager
def isolated_registry() -> Iterator[None]:
    """Rewards registered inside are forgotten after (generated modules reuse the rule
    examples' names, which rewardkit refuses across modules), and those before are kept."""
    saved = dict(registry._registry)
    registry._registry.clear()
    try:
        yield
    finally:
        registry._registry.clear()
        registry._registry.update(saved)


def run_module(path: Path, *, by_field: bool = False) -> dict[str, list[Outcome]] | None:
    """Each top-level reward of the module at ``path`` called on every sample, each in a fresh
    namespace of its own (its judge counts start from nothing, whatever the others did):
    undecorated with positional arguments, or (``by_field``) as rewardkit calls it, with the
    fields by name (the outcome is then its ``reward``). ``None`` when the module does not even
    run."""
    source = path.read_text(encoding="utf-8")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError:
        return None
    outcomes: dict[str, list[Outcome]] = {}
    with isolated_registry(), warnings.catch_warnings():  # and an un-awaited coroutine
        warnings.simplefilter("ignore", RuntimeWarning)
        for node in ast.parse(source).body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not (
                node.decorator_list
            ):
                continue
            namespace: dict[str, Any] = {"__name__": f"fix_property_{path.stem}"}
            try:
                exec(code, namespace)
            except Exception:
                return None
            decorated = namespace.get(node.name)
            function = decorated if by_field else getattr(decorated, "__wrapped__", None)
            if callable(function):
                outcomes[node.name] = [_call(function, sample, by_field) for sample in SAMPLES]
        gc.collect()
    return outcomes


def meant_score(before: Outcome) -> Any:
    """The score a reward that gave ``before`` (called undecorated) evidently meant: its number,
    its dict's ``reward``, else the first entry of :data:`~rewardkit.checks.fixes.SCORE_KEYS`;
    ``_MISSING`` when it did not say."""
    kind, value = before
    if kind != "value":
        return _MISSING
    if isinstance(value, dict):
        if "reward" in value:
            return value["reward"]
        return next((value[key] for key in SCORE_KEYS if key in value), _MISSING)
    return value


def judge_scored(before: Outcome, scored: Outcome) -> str | None:
    """What is wrong with the ``reward`` rewardkit reads from a fixed reward (``scored``), for
    one that gave ``before`` undecorated: a score other than the one meant (``None``: right,
    or rewardkit still fails loudly)."""
    if scored[0] == "raise" or before == ("raise", "coroutine"):
        return None
    meant = meant_score(before)
    if meant is None:  # rewardkit decides what None scores (`none_as_zero`), not a fix
        return None
    if meant is _MISSING:
        return f"rewardkit reads {scored[1]!r}, but the reward never said what its score was"
    if not _same_number(meant, scored[1]) and meant != scored[1]:
        return f"rewardkit reads {scored[1]!r}, the score meant was {meant!r}"
    return None


def _same_number(before: Any, after: Any) -> bool:
    numbers = (int, float)
    return isinstance(before, numbers) and isinstance(after, numbers) and before == after


def judge_change(before: Outcome, after: Outcome) -> str | None:
    """What is wrong with ``after`` as a safe fix's result of a reward that gave ``before``
    (``None``: nothing). Allowed: the same outcome, the same number as a float, the same dict
    with a ``reward`` that is the score it carried (the first of
    :data:`~rewardkit.checks.fixes.SCORE_KEYS`), and anything for a reward that returned an
    un-awaited coroutine."""
    if before == after or before == ("raise", "coroutine"):
        return None
    (kind, value), (new_kind, new_value) = before, after
    if kind == "raise":
        return f"raised {value} before the fix, {new_value if new_kind == 'raise' else 'not'} after"
    if new_kind == "raise":
        return f"a new exception: {new_value}"
    if _same_number(value, new_value):
        return None
    if isinstance(value, dict) and isinstance(new_value, dict) and "reward" not in value:
        rest = {key: item for key, item in new_value.items() if key != "reward"}
        if rest != value:
            return f"the other entries changed: {value!r} -> {rest!r}"
        meant = next((value[key] for key in SCORE_KEYS if key in value), _MISSING)
        if meant is _MISSING:
            return f"`reward` {new_value.get('reward')!r} is a guess: no entry was the score"
        if new_value.get("reward") != meant:
            return f"`reward` is {new_value.get('reward')!r}, the score was {meant!r}"
        return None
    return f"returned {value!r} before the fix, {new_value!r} after"


@dataclass
class Finding:
    """A safe fix that changed what a reward computes."""

    module: str
    reward: str
    sample: tuple[str, str] | None
    problem: str
    before: str
    after: str

    def __str__(self) -> str:
        return (
            f"{self.module}:{self.reward} on {self.sample!r}: {self.problem}\n"
            f"--- before\n{self.before}\n--- after\n{self.after}"
        )


def run_fix(directory: Path, source_tree: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``rewardkit check --fix`` on ``directory`` in a fresh process (``source_tree``: the
    rewardkit checkout to run instead of the installed one, e.g. an older commit's)."""
    environment = dict(os.environ)
    if source_tree is not None:
        environment["PYTHONPATH"] = str(source_tree)
    return subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", "--no-cache", "--fix", "."],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )


def check_fixes(
    directory: Path,
    modules: dict[str, str],
    *,
    twice: bool = True,
    source_tree: Path | None = None,
) -> list[Finding]:
    """Write ``modules`` to ``directory``, fix them with the CLI and judge every reward; with
    ``twice``, a second ``--fix`` must change nothing. Raises ``AssertionError`` when the CLI
    fails (a traceback, exit 2)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    for name, text in modules.items():
        (directory / name).write_text(text, encoding="utf-8")
    before = {name: run_module(directory / name) for name in modules}
    fixed = run_fix(directory, source_tree)
    assert fixed.returncode in (0, 1), fixed.stdout + fixed.stderr
    findings: list[Finding] = []
    for name, text in modules.items():
        after_text = (directory / name).read_text(encoding="utf-8")
        if after_text == text:
            continue
        findings.extend(_judge_module(directory / name, text, after_text, before[name]))
    if twice:
        snapshot = {name: (directory / name).read_bytes() for name in modules}
        again = run_fix(directory, source_tree)
        assert again.returncode in (0, 1), again.stdout + again.stderr
        for name, data in snapshot.items():
            if (directory / name).read_bytes() != data:
                text = (directory / name).read_text(encoding="utf-8")
                findings.append(Finding(name, "*", None, "a second --fix changed it", "", text))
    return findings


def _judge_module(
    path: Path, text: str, after_text: str, before: dict[str, list[Outcome]] | None
) -> list[Finding]:
    after, scored = run_module(path), run_module(path, by_field=True)
    if before is None:
        return []
    if after is None or scored is None:
        return [Finding(path.name, "*", None, "the fixed module fails to run", text, after_text)]
    findings = []
    old, new = _definitions(text), _definitions(after_text)
    for reward, outcomes in before.items():
        paired = zip(SAMPLES, outcomes, after.get(reward, []), scored.get(reward, []))
        for sample, was, now, read in paired:
            problem = judge_change(was, now)
            if problem is None and old.get(reward) != new.get(reward):  # a fixed reward
                problem = judge_scored(was, read)
            if problem is not None:
                findings.append(Finding(path.name, reward, sample, problem, text, after_text))
                break
    return findings


def _definitions(source: str) -> dict[str, str]:
    """The text of each top-level function of a module, by name."""
    return {
        node.name: ast.get_source_segment(source, node) or ""
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def report(findings: Sequence[Finding]) -> str:
    """The findings, for an assertion message or the benchmark's output."""
    return "\n\n".join(str(finding) for finding in findings[:5])
