"""Framework rules (RK501-RK503): where a function runs, what the framework passes it, what it
accepts back.

RK501 applies to rewards and to framework functions alike; RK502 and RK503 to framework
functions (``[tool.rewardkit] framework_rewards``), which are not rewards: TRL and verl call them
directly. The facts about each framework are in :mod:`rewardkit.checks.frameworks`.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from rewardkit.checks.facts import CallFact, RewardFacts
from rewardkit.checks.frameworks import (
    ADAPTER_NAMES,
    SIGNAL_TIMEOUTS,
    TRL_ALWAYS_PASSED,
    TRL_NEVER_PASSED,
    TRL_OPTIONAL,
    VERL_BATCHED,
    VERL_NEVER_PASSED,
    VERL_PER_SAMPLE,
    SignalTimeout,
    uses_signals,
)
from rewardkit.checks.model import Diagnostic, RewardParameter, Severity, Span
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.checks.rules.fields import edit_distance, misspelled_column
from rewardkit.checks.rules.returns import always_leaves
from rewardkit.runtime.define.return_keys import dotted_name

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig

PROCESS_MODE = (
    'run it in a process: `@reward(execution="process")` (or `execution="process"` in '
    "`calculate_rewards`, `to_trl`, `to_verl`, `to_openrlhf`)"
)
"""The execution mode that runs a sync reward on a worker process's main thread, killed on timeout."""


def _thread_of_reward(facts: RewardFacts) -> str | None:
    """Where a reward certainly or usually runs in a thread other than the main one (``None``:
    not known to, or in a process of its own)."""
    if facts.in_process or any(use.process for use in facts.adapters):
        return None
    if facts.definition.is_async:
        if any(use.adapter == "trl" for use in facts.adapters):
            return "TRL awaits async reward functions on its own event-loop thread"
        return None
    for use in facts.adapters:
        if use.timeout:
            return f"`{ADAPTER_NAMES[use.adapter]}(..., timeout=...)` runs it in a thread"
        if use.adapter == "verl":
            return "verl's reward loop calls `to_verl`'s function from a thread pool"
    if facts.runtime != "rewardkit" or facts.by_adapter:
        return None  # AgentFly's runtime calls sync rewards inline; a plain function given
        # only to adapters without a timeout runs where the framework calls it
    return "`calculate_rewards` and adapters given a `timeout` run sync rewards in threads"


def _thread_of_framework_function(facts: RewardFacts) -> str | None:
    if facts.framework == "verl" and not facts.definition.is_async:
        return "verl's reward loop runs a sync `compute_score` in a thread pool (`run_in_executor`)"
    if facts.framework == "trl" and facts.definition.is_async:
        return "TRL awaits async reward functions on its own event-loop thread"
    return None  # TRL calls sync reward functions on the trainer's main thread


def _signal_calls(facts: RewardFacts) -> Iterator[tuple[ast.expr, str, SignalTimeout]]:
    """(node, name as written, what it does) of each call in the function's own body (and its
    decorators) that needs the main thread."""
    for decorator in facts.function.decorator_list:
        if isinstance(decorator, ast.Call):
            written = dotted_name(decorator.func)
            timeout = SIGNAL_TIMEOUTS.get(facts.context.qualify(written)) if written else None
            if timeout is not None and written and uses_signals(decorator, timeout):
                yield decorator, written, timeout
    helpers = dict(facts.context.signal_helpers)
    call: CallFact
    for call in facts.calls:
        if call.nested or call.qualified is None or call.dotted is None:
            continue
        timeout = SIGNAL_TIMEOUTS.get(call.qualified)
        if timeout is not None and uses_signals(call.node, timeout):
            yield call.node, call.dotted, timeout
        elif call.dotted in helpers and call.dotted != facts.definition.function_name:
            grader = helpers[call.dotted]
            reached = SIGNAL_TIMEOUTS[grader]
            yield (
                call.node,
                call.dotted,
                replace(reached, how=f"it calls `{grader}`: {reached.how}"),
            )


class SignalTimeoutInThread(Rule):
    """Signal-based timeouts need the main thread: math-verify's ``parse``/``verify`` with their
    default timeouts (``signal.alarm``), ``timeout_decorator``, ``stopit.SignalTimeout``,
    ``signal.signal`` itself. Where the function runs in a thread (a sync rewardkit reward under
    ``calculate_rewards`` or an adapter's ``timeout``; verl's reward loop; TRL's async reward
    functions) every call raises ``ValueError`` and every sample scores as a failure, while the
    same reward passes its tests when called directly. Calls are followed into the module's
    functions, read with the imports inside them (``def is_equiv(a, b): from math_verify import
    verify``). Run it with ``execution="process"``, or
    turn the signal off (``parsing_timeout=None``, ``timeout_seconds=None``) and bound the time
    another way. Rewards under AgentFly's runtime, which calls them inline, are left alone."""

    code = "RK501"
    severity = Severity.ERROR
    summary = "a signal-based timeout (math-verify's defaults) in a function that runs in a thread"
    EXAMPLE_FRAMEWORK_REWARDS = (("verl", "compute_score"),)
    VALID = (
        "from math_verify import parse, verify\nfrom rewardkit import reward\n\n"
        '@reward(execution="process")\ndef accuracy(final_response, answer):\n'
        "    return float(verify(parse(answer), parse(final_response)))\n",
        "from math_verify import parse, verify\nfrom rewardkit import reward\n\n"
        "@reward\ndef accuracy(final_response, answer):\n"
        "    gold = parse(answer, parsing_timeout=None)\n"
        "    return float(verify(gold, parse(final_response, parsing_timeout=None), "
        "timeout_seconds=None))\n",
    )
    INVALID = (
        Invalid(
            "from math_verify import parse, verify\nfrom rewardkit import reward\n\n"
            "@reward\ndef accuracy(final_response, answer):\n"
            "    return float(verify(parse(answer), parse(final_response)))\n",
            6,
        ),
        Invalid(
            "from math_verify import parse, verify\nfrom rewardkit import reward\n\n"
            "def is_equiv(response, gold):\n    return verify(parse(gold), parse(response))\n\n"
            "@reward\ndef accuracy(final_response, answer):\n"
            "    return float(is_equiv(final_response, answer))\n",
            9,
        ),
        Invalid(
            "from rewardkit import reward\n\ndef is_equiv(response, gold):\n"
            "    from math_verify import parse, verify\n\n"
            "    return verify(parse(gold), parse(response))\n\n"
            "@reward\ndef accuracy(final_response, answer):\n"
            "    return float(is_equiv(final_response, answer))\n",
            10,
        ),
        Invalid(
            "import math_verify\n\ndef compute_score(data_source, solution_str, ground_truth, "
            "extra_info=None):\n"
            "    gold = math_verify.parse(ground_truth, parsing_timeout=None)\n"
            "    answer = math_verify.parse(solution_str, parsing_timeout=None)\n"
            "    return float(math_verify.verify(gold, answer))\n",
            6,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        where = _thread_of_reward(facts)
        if where is not None:
            yield from self._report(facts, where, PROCESS_MODE)

    def check_framework(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        where = _thread_of_framework_function(facts)
        if where is not None:
            adapter = "to_verl" if facts.framework == "verl" else "to_trl"
            port = f'port it to `@reward(execution="process")` and `{adapter}`'
            yield from self._report(facts, where, port)

    def _report(self, facts: RewardFacts, where: str, process: str) -> Iterator[Diagnostic]:
        for node, written, timeout in _signal_calls(facts):
            remedy = process
            if timeout.remedy:
                remedy += f", or pass {timeout.remedy} and bound the time another way"
            yield self.diagnostic(
                facts.positions.span(node),
                f"`{written}`: {timeout.how}, which works only on the main thread, and {where}: "
                f"there it raises ValueError on every sample; {remedy}",
                data=reward_data(facts, call=written),
            )


# ----------------------------------------------------------------------------- RK502

FRAMEWORK_EXAMPLES = (("trl", "accuracy"), ("verl", "compute_score"))
"""The ``framework_rewards`` the examples of RK502 and RK503 are checked under."""
TRL_ACCURACY = (
    "def accuracy(completions, solution, **kwargs):\n"
    "    return [float(c[0]['content'] == s) for c, s in zip(completions, solution)]\n"
)
VERL_SCORE = (
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
    "    return float(solution_str.strip() == ground_truth)\n"
)


def _names(facts: RewardFacts) -> tuple[set[str], bool]:
    """(declared parameter names, whether ``**kwargs`` takes the rest)."""
    names = {p.name for p, _ in facts.parameters}
    return names, any(p.kind == "var_keyword" for p, _ in facts.parameters)


def _near(name: str, expected: tuple[str, ...]) -> str | None:
    """The expected argument ``name`` is a typo of (one edit, two for long names)."""
    for candidate in expected:
        limit = 2 if len(candidate) > 8 else 1
        if name != candidate and edit_distance(name, candidate) <= limit:
            return candidate
    return None


class FrameworkArguments(Rule):
    """A framework function must accept what its framework passes, by the names it passes them.
    TRL calls ``f(prompts=..., completions=..., completion_ids=..., trainer_state=...,
    log_extra=..., log_metric=..., **columns)``: without ``**kwargs`` that is a ``TypeError`` on
    the first batch, ``prompt``/``completion`` are never passed (TRL drops those columns), and
    any other parameter is a dataset column: one that is not a declared task field, or (with
    none declared) a misspelling of a usual column (``solutoin``), gets nothing.
    verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=...,
    extra_info=...)`` (its ``prime`` manager positionally, in that order; the ``batch`` manager
    with ``data_sources``, ``solution_strs``...): a missing ``extra_info`` or a ``response``
    parameter fails every sample. Checked for the functions ``framework_rewards`` names."""

    code = "RK502"
    severity = Severity.ERROR
    summary = "a framework function that does not take what TRL or verl passes"
    EXAMPLE_FRAMEWORK_REWARDS = FRAMEWORK_EXAMPLES
    VALID = (TRL_ACCURACY, VERL_SCORE)
    INVALID = (
        Invalid(
            "def accuracy(completions, solution):\n"
            "    return [float(c[0]['content'] == s) for c, s in zip(completions, solution)]\n",
            1,
        ),
        Invalid(
            "def accuracy(completion, solution, **kwargs):\n"
            "    return [float(completion == s) for s in solution]\n",
            1,
        ),
        Invalid(
            "def accuracy(completions, solutoin, **kwargs):\n"
            "    return [float(c[0]['content'] == s) for c, s in zip(completions, solutoin)]\n",
            1,
            task_fields=("solution",),
        ),
        Invalid(
            "def compute_score(data_source, solution_str, ground_truth):\n"
            "    return float(solution_str.strip() == ground_truth)\n",
            1,
        ),
        Invalid(
            "def compute_score(solution_str, ground_truth, data_source=None, extra_info=None):\n"
            "    return float(solution_str.strip() == ground_truth)\n",
            1,
        ),
    )

    def check_framework(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.framework == "trl":
            yield from self._check(facts, "TRL", TRL_ALWAYS_PASSED, TRL_NEVER_PASSED)
            yield from self._columns(facts, config)
            return
        names, _ = _names(facts)
        batched = bool(names & set(VERL_BATCHED))
        expected = VERL_BATCHED if batched else VERL_PER_SAMPLE
        yield from self._check(facts, "verl", expected, VERL_NEVER_PASSED)
        if not batched:
            yield from self._prime_order(facts)

    def _check(
        self,
        facts: RewardFacts,
        framework: str,
        expected: tuple[str, ...],
        never: dict[str, str],
    ) -> Iterator[Diagnostic]:
        names, takes_rest = _names(facts)
        function = facts.definition.function_name
        missing = [name for name in expected if name not in names]
        if missing and not takes_rest:
            passed = ", ".join(f"`{name}=`" for name in expected)
            extra = " and every dataset column" if framework == "TRL" else ""
            yield self.diagnostic(
                facts.definition.span,
                f"{framework} calls `{function}` with {passed}{extra} as keywords, and "
                f"`{function}` takes no `{missing[0]}` (TypeError on every call): add it, or "
                "`**kwargs`",
                data=reward_data(facts, missing=missing),
            )
        for parameter, _ in facts.parameters:
            message = self._parameter_problem(parameter, framework, expected, never)
            if message is not None:
                yield self.diagnostic(
                    parameter.span, message, data=reward_data(facts, parameter=parameter.name)
                )

    def _columns(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        """TRL passes the dataset's columns by their names: a parameter that is no column (a
        misspelled ``solutoin``) receives nothing (issue 37)."""
        declared = set(config.task_fields)
        for parameter, _ in facts.parameters:
            name = parameter.name
            if parameter.kind not in ("positional_or_keyword", "keyword_only") or name in declared:
                continue
            if name in TRL_ALWAYS_PASSED or name in TRL_OPTIONAL or name in TRL_NEVER_PASSED:
                continue
            if _near(name, TRL_ALWAYS_PASSED) is not None:
                continue  # reported above as a misspelled keyword
            outcome = (
                "it is always its default" if parameter.has_default else "TypeError on every call"
            )
            if declared:
                close = difflib.get_close_matches(name, sorted(declared), n=1, cutoff=0.75)
                suggestion = close[0] if close else None
                if parameter.has_default and suggestion is None:
                    continue  # an option the function is configured with (`functools.partial`)
                shown = sorted(declared)
                known = ", ".join(f"`{column}`" for column in shown[:6])
                known += ", ..." if len(shown) > 6 else ""
                why = f"no declared column ({known}) is named `{name}` ({outcome})"
            else:
                suggestion = misspelled_column(name)
                if suggestion is None:
                    continue  # any other name may be a column: declare them to check it
                why = (
                    f"`{name}` is a misspelling of the usual column `{suggestion}` ({outcome} "
                    "unless the dataset has such a column)"
                )
            hint = f": did you mean `{suggestion}`?" if suggestion else ""
            yield self.diagnostic(
                parameter.span,
                f"TRL passes each dataset column by its name, and {why}{hint}",
                data=reward_data(facts, parameter=name, suggestion=suggestion),
            )

    @staticmethod
    def _parameter_problem(
        parameter: RewardParameter, framework: str, expected: tuple[str, ...], never: dict[str, str]
    ) -> str | None:
        name = parameter.name
        if parameter.kind == "positional_only":
            return f"`{name}` is positional-only, but {framework} passes arguments by keyword"
        if parameter.kind in ("var_positional", "var_keyword") or name in expected:
            return None
        instead = never.get(name) or _near(name, expected)
        if instead is None:
            return None
        outcome = "it is always its default" if parameter.has_default else "TypeError on every call"
        return f"{framework} never passes `{name}` ({outcome}): it passes `{instead}`"

    def _prime_order(self, facts: RewardFacts) -> Iterator[Diagnostic]:
        positional = [
            p.name
            for p, _ in facts.parameters
            if p.kind in ("positional_only", "positional_or_keyword")
        ][: len(VERL_PER_SAMPLE)]
        if sorted(positional) == sorted(VERL_PER_SAMPLE) and tuple(positional) != VERL_PER_SAMPLE:
            yield self.diagnostic(
                facts.definition.parameters_span,
                "verl's `prime` manager passes these positionally, in the order "
                f"{', '.join(VERL_PER_SAMPLE)}: declared in another order they receive each "
                "other's values",
                data=reward_data(facts, order=positional),
            )


# ----------------------------------------------------------------------------- RK503

_NUMBER_CALLS = frozenset(
    {"float", "int", "bool", "len", "abs", "math.sqrt", "math.exp", "math.log"}
)
_CONTAINERS = {
    ast.Tuple: "a tuple",
    ast.Set: "a set",
    ast.SetComp: "a set",
    ast.GeneratorExp: "a generator",
    ast.Dict: "a dict",
    ast.DictComp: "a dict",
    ast.JoinedStr: "a string",
    ast.List: "a list",
    ast.ListComp: "a list",
}


def _is_number(facts: RewardFacts, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` certainly evaluates to a number (never a list: ``[0.0] * n`` is not)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, str)
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_number(facts, node.operand, seen)
    if isinstance(node, ast.BinOp):
        return _is_number(facts, node.left, seen) and _is_number(facts, node.right, seen)
    if isinstance(node, ast.IfExp):
        return _is_number(facts, node.body, seen) and _is_number(facts, node.orelse, seen)
    if isinstance(node, ast.Call):
        called = dotted_name(node.func)
        local = {p.name for p, _ in facts.parameters} | set(facts.bindings)
        if called is None or called in local:
            return False
        qualified = facts.context.qualify(called)
        one_argument = len(node.args) == 1 and not node.keywords  # `sum(lists, [])` is a list
        return qualified in _NUMBER_CALLS or (qualified in ("sum", "round") and one_argument)
    if isinstance(node, ast.Name) and node.id not in seen:
        values = facts.bindings.get(node.id)
        return bool(values) and all(
            v is not None and _is_number(facts, v, seen | {node.id}) for v in values
        )
    return False


def _returned_kind(facts: RewardFacts, value: ast.expr | None) -> str | None:
    """What a return certainly gives: ``None``, a number, a string or a kind of container."""
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return "None"
    if isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)):
        return "a string"
    if _is_number(facts, value):
        return "a number"
    return _CONTAINERS.get(type(value))


def _trl_problem(facts: RewardFacts, value: ast.expr | None, kind: str | None) -> str | None:
    if kind in ("a list",) and isinstance(value, ast.List):
        if value.elts and not any(isinstance(e, ast.Starred) for e in value.elts):
            return f"a list of {len(value.elts)} fixed element(s)"
        return None
    if kind in (None, "a list", "a tuple"):
        return None
    return kind


def _verl_problem(
    kind: str | None, value: ast.expr | None, facts: RewardFacts, batched: bool
) -> str | None:
    if batched:
        return None if kind in (None, "a list", "a tuple") else kind
    if kind == "a dict":
        keys, _ = facts.dict_keys(value)
        if keys is not None and "score" not in keys:
            return "a dict without a `score` key"
        return None
    if kind in (None, "a number"):
        return None
    return kind


class FrameworkReturn(Rule):
    """A framework function must return what its framework reads. TRL wants one reward per
    completion, a list (``None`` in it for "not applicable"): a number, a dict, a generator or
    ``None`` fails the batch, and a list of fixed length fails when the batch is larger. verl
    wants a number or a dict with ``score`` (the ``batch`` manager a list of them): ``None``, a
    string, a tuple or a dict without ``score`` fail every sample. A path that returns nothing
    returns ``None``. Checked for the functions ``framework_rewards`` names."""

    code = "RK503"
    severity = Severity.ERROR
    summary = "a framework function whose return TRL or verl cannot read"
    EXAMPLE_FRAMEWORK_REWARDS = FRAMEWORK_EXAMPLES
    VALID = (
        TRL_ACCURACY,
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    ok = solution_str.strip() == ground_truth\n"
        "    return {'score': float(ok), 'acc': ok}\n",
    )
    INVALID = (
        Invalid(
            "def accuracy(completions, solution, **kwargs):\n"
            "    return float(completions[0][0]['content'] == solution[0])\n",
            2,
        ),
        Invalid(
            "def accuracy(completions, solution, **kwargs):\n"
            "    return (float(c[0]['content'] == s) for c, s in zip(completions, solution))\n",
            2,
        ),
        Invalid(
            "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
            "    ok = solution_str.strip() == ground_truth\n"
            "    return {'reward': float(ok), 'acc': ok}\n",
            3,
        ),
        Invalid(
            "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
            "    if solution_str:\n"
            "        return float(solution_str.strip() == ground_truth)\n",
            2,
        ),
    )

    def check_framework(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        framework = "TRL" if facts.framework == "trl" else "verl"
        batched = facts.framework == "verl" and bool(
            {p.name for p, _ in facts.parameters} & set(VERL_BATCHED)
        )
        wants = {
            "TRL": "a list with one reward per completion",
            "verl": "a list with one result per sample"
            if batched
            else "a number or a dict with `score`",
        }[framework]
        if facts.is_generator:
            yield self.diagnostic(
                facts.definition.span,
                f"`{facts.definition.function_name}` is a generator: {framework} wants {wants}",
                data=reward_data(facts, returned="a generator"),
            )
            return
        for returned in facts.returns:
            value = returned.node.value
            kind = _returned_kind(facts, value)
            if framework == "TRL":
                problem = _trl_problem(facts, value, kind)
            else:
                problem = _verl_problem(kind, value, facts, batched)
            if problem is not None:
                yield self.diagnostic(
                    returned.span,
                    f"returns {problem}: {framework} wants {wants}",
                    data=reward_data(facts, returned=problem),
                )
        body = facts.function.body
        if body and not always_leaves(body):
            last = body[-1]
            line, column = facts.positions.start(last)
            yield self.diagnostic(
                Span(line, column, line, column + 1),
                f"`{facts.definition.function_name}` can reach the end of its body and return "
                f"`None`: {framework} wants {wants}",
                data=reward_data(facts, returned="None"),
            )
