"""What the RL frameworks pass to reward functions and accept back, and where they run them.

The facts the framework rules (RK5xx) check, taken from the frameworks' own code (TRL 1.x
``GRPOTrainer._calculate_rewards``; verl 0.9's reward managers and reward loop) and from
rewardkit's adapters. Two kinds of functions are checked against them:

- *framework functions*, written for a framework and not ported yet, named in ``[tool.rewardkit]``
  ``framework_rewards`` (``trl = ["accuracy_reward"]``, ``verl = ["compute_score"]``);
- plain functions passed to ``to_trl``/``to_verl``/``to_openrlhf`` in the module: the adapter calls
  them as rewards (with rewardkit's fields), so they are checked as rewards, knowing the adapter.

:mod:`rewardkit.checks.uses` reads a module's calls of adapters and of these timeouts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

Framework = Literal["trl", "verl"]
Adapter = Literal["trl", "verl", "openrlhf"]
FRAMEWORKS: tuple[Framework, ...] = ("trl", "verl")

TRL_ALWAYS_PASSED = (
    "prompts",
    "completions",
    "completion_ids",
    "trainer_state",
    "log_extra",
    "log_metric",
)
"""Keywords TRL's ``GRPOTrainer`` passes to every reward function, beside each dataset column
(except ``prompt``, ``completion`` and ``completion_ids``) and ``environments`` when set."""

TRL_OPTIONAL = ("environments",)
"""Keywords TRL passes only in some runs (``environments`` when the trainer has them)."""

TRL_NEVER_PASSED: dict[str, str] = {
    "prompt": "prompts",
    "completion": "completions",
    "final_response": "completions",
    "response": "completions",
    "responses": "completions",
    "solution_str": "completions",
    "trajectory": "completions",
}
"""Names TRL never passes (it drops the ``prompt`` and ``completion`` columns and passes lists
under plural names), with what it passes instead."""

VERL_PER_SAMPLE = ("data_source", "solution_str", "ground_truth", "extra_info")
"""verl's per-sample call: by keyword (``naive``, ``dapo``, the reward loop), positionally in this
order (``prime``)."""
VERL_BATCHED = ("data_sources", "solution_strs", "ground_truths", "extra_infos")
"""verl's ``batch`` manager's call (keywords)."""

VERL_NEVER_PASSED: dict[str, str] = {
    "response": "solution_str",
    "completion": "solution_str",
    "prediction": "solution_str",
    "final_response": "solution_str",
    "solution": "ground_truth",
    "answer": "ground_truth",
    "gold": "ground_truth",
    "gt": "ground_truth",
    "prompt": "extra_info",
}
"""Names verl never passes, with what it passes instead (``extra_info`` holds dataset extras)."""

ADAPTER_FUNCTIONS: dict[str, Adapter] = {
    f"{module}.to_{adapter}": adapter  # type: ignore[misc]
    for adapter in ("trl", "verl", "openrlhf")
    for module in ("rewardkit", "rewardkit.adapters", f"rewardkit.adapters.{adapter}")
}
"""rewardkit's adapter factories, by qualified name."""

CALCULATE_FUNCTIONS = frozenset(
    {"rewardkit.calculate_rewards", "rewardkit.runtime.batch.calculate.calculate_rewards"}
)
"""``calculate_rewards`` by its qualified names (its ``execution=`` decides process mode too)."""

ADAPTER_FIELDS: dict[Adapter, tuple[str, ...]] = {
    "trl": ("trainer_state", "environment"),
    "verl": ("answer", "data_source"),
    "openrlhf": ("answer",),
}
"""Fields an adapter fills beside the predefined ones and the task's (dataset columns, verl's
``extra_info`` keys): a reward passed to it may declare them."""

ADAPTER_NATIVE_NAMES: dict[Adapter, dict[str, tuple[str | None, str]]] = {
    "trl": {
        "completions": ("final_response", "this completion's text is `final_response`"),
        "completion": ("final_response", "this completion's text is `final_response`"),
        "prompts": (None, "the prompt's messages begin `trajectory`"),
        "completion_ids": (None, "the adapter passes no token ids"),
    },
    "verl": {
        "solution_str": ("final_response", "verl's `solution_str` arrives as `final_response`"),
        "ground_truth": ("answer", "verl's `ground_truth` arrives as `answer`"),
        "solution_strs": (
            "final_response",
            "one sample's `solution_str` arrives as `final_response`",
        ),
        "ground_truths": ("answer", "one sample's `ground_truth` arrives as `answer`"),
        "data_sources": ("data_source", "one sample's data source arrives as `data_source`"),
    },
    "openrlhf": {
        "queries": ("final_response", "the response part of the query arrives as `final_response`"),
        "prompts": (None, "the prompt's messages begin `trajectory`"),
        "labels": ("answer", "the label arrives as `answer`"),
    },
}
"""The framework's own argument names, which its adapter passes under rewardkit's names (or not
at all), with the field to use instead and a note: a reward declaring one receives nothing
unless ``field_map`` maps it."""

ADAPTER_NAMES = {"trl": "to_trl", "verl": "to_verl", "openrlhf": "to_openrlhf"}
FRAMEWORK_NAMES = {"trl": "TRL", "verl": "verl", "openrlhf": "OpenRLHF"}

MENTIONS_ADAPTER = re.compile(r"\bto_(?:trl|verl|openrlhf)\b")


@dataclass(frozen=True)
class AdapterUse:
    """A function passed to an adapter in the module, with what the call says about how it runs."""

    adapter: Adapter
    timeout: bool = False
    """``timeout=`` given (not a literal ``None``): sync rewards then run in threads."""
    process: bool = False
    """``execution="process"``: each worker process runs the reward on its main thread."""
    mapped: tuple[str, ...] | None = ()
    """The reward fields a literal ``field_map`` fills; ``None`` when it is not a literal."""
    unmapped: tuple[str, ...] = ()
    """The framework names a literal ``field_map`` maps to something."""
    group_size: bool = False
    """``group_size=`` given (not a literal ``None``): TRL's groups are runs of that length."""
    called: bool = False
    """The module calls what the adapter returns itself (``to_trl(f)(...)``, or ``s =
    to_trl(f)`` then ``s(...)``): those calls come from no trainer."""


@dataclass(frozen=True)
class AdapterCall:
    """A call that may be an adapter's, before the module's imports say whose it is."""

    callee: str
    target: str
    use: AdapterUse
    assigned: str | None = None
    """The name a plain ``name = to_trl(f)`` binds the adapted function to."""


def mark_called(calls: Iterable[AdapterCall], source: str) -> list[AdapterCall]:
    """``calls`` with ``use.called`` set where the module calls the adapted function by the
    name it was assigned to (a text search over ``source``: ``scorer(`` anywhere)."""
    marked = []
    for call in calls:
        name = call.assigned
        if name and not call.use.called and re.search(rf"\b{re.escape(name)}\s*\(", source):
            call = AdapterCall(call.callee, call.target, replace(call.use, called=True), name)
        marked.append(call)
    return marked


def resolve_adapter_uses(
    calls: Iterable[AdapterCall], qualify: Callable[[str], str]
) -> tuple[tuple[str, AdapterUse], ...]:
    """(function name, use) of the calls that are rewardkit's adapters (``qualify``: the
    module's :meth:`ImportContext.qualify`)."""
    resolved = []
    for call in calls:
        adapter = ADAPTER_FUNCTIONS.get(qualify(call.callee))
        if adapter == call.use.adapter:
            resolved.append((call.target, call.use))
    return tuple(resolved)


def uses_of(name: str, uses: Iterable[tuple[str, AdapterUse]]) -> Iterator[AdapterUse]:
    """The adapter uses of the function ``name``."""
    return (use for target, use in uses if target == name)


# ----------------------------------------------------------------------- signal-based timeouts


@dataclass(frozen=True)
class SignalTimeout:
    """A call that times out (or handles a signal) with ``signal``, which only the main thread
    may do: ``math_verify.parse`` raises ``ValueError`` in any other thread."""

    how: str
    """What it does, for the message (``its default parsing_timeout=5 uses signal.alarm``)."""
    argument: str | None = None
    """The argument that decides (a timeout, or a ``use_signals`` flag)."""
    position: int | None = None
    """Its position when passed positionally."""
    signals_when: Literal["always", "timeout", "flag_default_on", "flag_on"] = "always"
    """``timeout``: unless the argument is a literal ``None`` or ``<= 0``; ``flag_default_on``:
    unless it is a literal false; ``flag_on``: only when it is a literal true."""
    remedy: str = ""
    """The spelling that avoids the signal, for the message."""


_MATH_VERIFY_PARSE = SignalTimeout(
    "its `parsing_timeout` (5 s by default) uses `signal.alarm`",
    "parsing_timeout",
    4,
    "timeout",
    "`parsing_timeout=None`",
)
_MATH_VERIFY_VERIFY = SignalTimeout(
    "its `timeout_seconds` (5 s by default) uses `signal.alarm`",
    "timeout_seconds",
    6,
    "timeout",
    "`timeout_seconds=None`",
)
_MATH_METRIC = SignalTimeout("the scorer it builds times out with `signal.alarm` (2 s, fixed)")
_TIMEOUT_DECORATOR = SignalTimeout(
    "it times out with `signal.alarm` unless `use_signals=False`",
    "use_signals",
    1,
    "flag_default_on",
    "`use_signals=False`",
)
_SIGNAL_MODULE = SignalTimeout(
    "it installs a signal handler or alarm, which only the main thread may"
)
_ALWAYS_SIGNALS = SignalTimeout("it times out with `signal.alarm`")

SIGNAL_TIMEOUTS: dict[str, SignalTimeout] = {
    "math_verify.parse": _MATH_VERIFY_PARSE,
    "math_verify.parser.parse": _MATH_VERIFY_PARSE,
    "math_verify.verify": _MATH_VERIFY_VERIFY,
    "math_verify.grader.verify": _MATH_VERIFY_VERIFY,
    "math_verify.math_metric": _MATH_METRIC,
    "math_verify.metric.math_metric": _MATH_METRIC,
    "signal.signal": _SIGNAL_MODULE,
    "signal.alarm": _SIGNAL_MODULE,
    "signal.setitimer": _SIGNAL_MODULE,
    "timeout_decorator.timeout": _TIMEOUT_DECORATOR,
    "timeout_decorator.timeout_decorator.timeout": _TIMEOUT_DECORATOR,
    "wrapt_timeout_decorator.timeout": _TIMEOUT_DECORATOR,
    "verl.utils.py_functional.timeout_limit": SignalTimeout(
        "`use_signals=True` makes it time out with `signal.setitimer`",
        "use_signals",
        1,
        "flag_on",
        "the default `use_signals=False`",
    ),
    "stopit.SignalTimeout": _ALWAYS_SIGNALS,
    "stopit.signal_timeoutable": _ALWAYS_SIGNALS,
    "interruptingcow.timeout": _ALWAYS_SIGNALS,
}
"""Calls that need the main thread, by qualified name: math-verify's graders with their default
timeouts (what most TRL and open-r1 rewards call), the decorators of ``timeout_decorator`` and
``wrapt_timeout_decorator`` (signals by default), verl's ``timeout_limit(use_signals=True)``,
``stopit``'s and ``interruptingcow``'s signal timeouts, and ``signal`` itself."""

MENTIONS_SIGNALS = re.compile(
    r"math_verify|signal|timeout_decorator|timeout_limit|stopit|interruptingcow"
)
"""Text a module that can call one of :data:`SIGNAL_TIMEOUTS` contains."""


def _literal(node: ast.expr | None) -> tuple[bool, object]:
    """(whether ``node`` is a literal, its value); ``-5`` counts."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
    ):
        return True, -node.operand.value
    return False, None


def uses_signals(call: ast.Call, timeout: SignalTimeout) -> bool:
    """Whether this call of ``timeout``'s function certainly uses signals: its deciding argument
    is absent (the default) or a literal that keeps them on. A value the analysis cannot read
    (``parsing_timeout=limit``) is given the benefit of the doubt."""
    if timeout.signals_when == "always" or timeout.argument is None:
        return True
    node: ast.expr | None = None
    given = False
    for keyword in call.keywords:
        if keyword.arg == timeout.argument:
            node, given = keyword.value, True
        elif keyword.arg is None:
            return False  # `**options` may set it
    if not given and timeout.position is not None:
        if any(isinstance(a, ast.Starred) for a in call.args[: timeout.position + 1]):
            return False
        if len(call.args) > timeout.position:
            node, given = call.args[timeout.position], True
    if not given:
        return timeout.signals_when != "flag_on"
    is_literal, value = _literal(node)
    if not is_literal:
        return False
    if timeout.signals_when == "timeout":
        return value is not None and not (isinstance(value, (int, float)) and value <= 0)
    if timeout.signals_when == "flag_default_on":
        return bool(value)
    return value is True


SIGNAL_LEAVES: dict[str, tuple[str, ...]] = {}
for _qualified in SIGNAL_TIMEOUTS:
    SIGNAL_LEAVES.setdefault(_qualified.rsplit(".", 1)[-1], ())
    SIGNAL_LEAVES[_qualified.rsplit(".", 1)[-1]] += (_qualified,)
del _qualified

HelperInfo = tuple[str, tuple[tuple[str, frozenset[str]], ...], frozenset[str]]
"""A module-level function: (name, (call as written, the graders it signals as once qualified)
for each call that may need the main thread, the plain names it calls)."""


def resolve_signal_helpers(
    infos: Iterable[HelperInfo], qualify: Callable[[str], str]
) -> tuple[tuple[str, str], ...]:
    """(helper name, the grader it reaches) of the module's functions that call a signal-based
    timeout, directly or through one another."""
    reached: dict[str, str] = {}
    calls: dict[str, frozenset[str]] = {}
    for name, candidates, called in infos:
        calls[name] = called
        for written, signalling in candidates:
            qualified = qualify(written)
            if qualified in signalling:
                reached.setdefault(name, qualified)
                break
    changed = True
    while changed:  # through helpers of helpers
        changed = False
        for name, called in calls.items():
            if name not in reached:
                via = next((reached[c] for c in sorted(called) if c in reached), None)
                if via is not None:
                    reached[name] = via
                    changed = True
    return tuple(sorted(reached.items()))
