"""Parameter rules (RK101-RK104): every parameter must be a field something fills, spelled right."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from rewardkit.checks.facts import RewardFacts
from rewardkit.checks.fix_safety import Role, field_role
from rewardkit.checks.fixes import RENAME, rename_fix
from rewardkit.checks.frameworks import (
    ADAPTER_FIELDS,
    ADAPTER_NAMES,
    ADAPTER_NATIVE_NAMES,
    FRAMEWORK_NAMES,
)
from rewardkit.checks.model import Diagnostic, Fix, RewardParameter, Severity
from rewardkit.checks.rules.base import Invalid, Rule, Valid, reward_data
from rewardkit.runtime.define.fields import PREDEFINED_FIELDS

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig


NOT_MISSPELLINGS = frozenset({"content", "contents", "contexts", "trajectories", "identity"})
"""Real words within one edit of a predefined field: never reported as its misspelling."""


def edit_distance(first: str, second: str) -> int:
    """Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps)."""
    previous_previous: list[int] = []
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i] + [0] * len(second)
        for j, b in enumerate(second, start=1):
            cost = 0 if a == b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        previous_previous, previous = previous, current
    return previous[-1]


def misspelled_field(name: str, config: CheckConfig) -> str | None:
    """The predefined (or injected) field ``name`` is a small misspelling of, if any (a common
    dataset column, such as ``prompts`` beside the predefined ``prompt``, is none)."""
    if name in config.field_names or name in NOT_MISSPELLINGS or len(name) < 4:
        return None
    if name.casefold() in COMMON_DATASET_COLUMNS:
        return None
    return _closest_spelling(name, tuple(config.injected_fields))


@functools.lru_cache(maxsize=4096)
def _closest_spelling(name: str, injected: tuple[str, ...]) -> str | None:
    """The predefined or injected field one or two edits from ``name`` (memoised: the same
    parameter names come back in every reward of a module)."""
    best: tuple[int, str] | None = None
    for candidate in (*PREDEFINED_FIELDS, *injected):
        if len(candidate) < 4:
            continue
        limit = 1 if len(candidate) <= 7 else 2
        if abs(len(candidate) - len(name)) > limit:
            continue
        distance = edit_distance(name, candidate)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "final_response": (
        "response",
        "prediction",
        "pred",
        "output",
        "model_output",
        "generation",
        "final_answer",
        "solution_str",
    ),
    "trajectory": ("messages", "history", "conversation", "chat", "turns"),
    "answer": ("ground_truth", "gold", "gold_answer", "reference", "target", "expected"),
}
"""What other frameworks call a field (verl's ``solution_str``/``ground_truth``...): the
did-you-mean of a parameter spelled nothing like it. (``completion`` is a predefined field
itself: the completion's messages.)"""


MODEL_OUTPUT_NAMES: dict[str, str] = {
    "prediction": "AgentFly's older name for the model's answer",
    "solution_str": "verl's name for the model's answer",
}
"""Names other frameworks give the model's output, which no dataset provides and nothing injects
here: reported even when no task field is declared."""


OUTPUT_FIELD = "final_response"
"""The field that receives the model's output (what verl's ``solution_str`` is here)."""


def misspelled_output_name(name: str) -> str | None:
    """The other framework's name for the model's output (:data:`MODEL_OUTPUT_NAMES`) that
    ``name`` is one or two edits from (``solution_sr``, ``soluton_str``), if any."""
    for known in MODEL_OUTPUT_NAMES:
        if name != known and edit_distance(name, known) <= (1 if len(known) <= 10 else 2):
            return known
    return None


def _role_kept(name: str, suggestion: str | None, config: CheckConfig) -> tuple[str | None, str]:
    """(the did-you-mean, a note) for a parameter that misspells another framework's name for
    the model's output: never a field that receives something else (verl's ``solution_sr``
    renamed to the gold column ``solution`` would compare the gold with itself), but
    :data:`OUTPUT_FIELD`, which receives what the name meant."""
    meant = misspelled_output_name(name)
    if meant is None or (suggestion is not None and field_role(suggestion) is Role.OUTPUT):
        return suggestion, ""
    note = (
        f" (`{name}` looks like `{meant}`, {MODEL_OUTPUT_NAMES[meant]}: here it is "
        f"`{OUTPUT_FIELD}`)"
    )
    return (OUTPUT_FIELD if OUTPUT_FIELD in config.field_names else None), note


COMMON_DATASET_COLUMNS = frozenset(
    {
        "answer",
        "answers",
        "solution",
        "solutions",
        "ground_truth",
        "ground_truths",
        "gold",
        "golds",
        "gold_answer",
        "gold_answers",
        "golden_answer",
        "golden_answers",
        "label",
        "labels",
        "question",
        "questions",
        "problem",
        "problems",
        "prompt",
        "prompts",
        "target",
        "targets",
        "reference",
        "references",
        "expected",
        "expected_answer",
        "expected_output",
        "final_answer",
        "final_answers",
        "query",
        "queries",
        "test_case",
        "test_cases",
        "tests",
        "input_output",
        "data_source",
        "data_sources",
        "extra_info",
        "extra_infos",
        "reward_model",
        "choice",
        "choices",
        "instruction",
        "instructions",
        "level",
        "subject",
        "task_id",
        "unique_id",
    }
)
"""Columns of the datasets reward code meets most (GSM8K, MATH, open-r1's, verl's parquet files,
Search-R1's ``golden_answers``, TRL's examples...): never reported as a misspelling."""

MISSPELLABLE_COLUMNS = (
    "answer",
    "solution",
    "ground_truth",
    "gold",
    "gold_answer",
    "label",
    "question",
    "problem",
    "prompt",
    "target",
    "reference",
    "expected",
    "expected_answer",
    "final_answer",
    "query",
    "test_cases",
    "data_source",
    "extra_info",
    "instruction",
)
"""The columns a parameter is compared with when no task field is declared (zero-config RK101):
a name one edit from one of them (two for names over eight characters; for four-letter
``gold`` only a swap of adjacent letters) that is no column itself is a typo."""

NOT_COLUMN_MISSPELLINGS = frozenset({"preference", "preferences", "problemo"})
"""Real words within reach of a common column, never reported as its misspelling."""


def misspelled_column(name: str) -> str | None:
    """The common dataset column ``name`` is a typo of (``answr`` -> ``answer``), if any: what
    RK101 reports when no task field is declared (the runtime raises ``MissingFieldError`` for
    such a name unless the dataset really has it)."""
    folded = name.casefold()
    if folded in COMMON_DATASET_COLUMNS or folded in NOT_COLUMN_MISSPELLINGS or len(name) < 4:
        return None
    return _closest_column(name)


@functools.lru_cache(maxsize=4096)
def _closest_column(name: str) -> str | None:
    best: tuple[int, str] | None = None
    for column in MISSPELLABLE_COLUMNS:
        limit = 2 if len(column) > 8 else 1
        if abs(len(column) - len(name)) > limit:
            continue
        if len(column) <= 4 and sorted(column) != sorted(name):
            continue  # short words: only a swap (`glod`), never `goal` or `bold`
        distance = edit_distance(name, column)
        if 0 < distance <= limit and (best is None or distance < best[0]):
            best = (distance, column)
    return best[1] if best else None


def closest_field(name: str, config: CheckConfig) -> str | None:
    """The known field most similar to ``name`` (for did-you-mean), if any is close enough."""
    known = config.field_names
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    if matches:
        return matches[0]
    return next(
        (field for field, aliases in FIELD_ALIASES.items() if name in aliases and field in known),
        None,
    )


def _fillable(reward: RewardFacts) -> Iterator[RewardParameter]:
    """Parameters a field could fill (no ``*args``/``**kwargs``, none the decorator itself fills)."""
    own = dict(reward.definition.own_fields)
    for parameter, _ in reward.parameters:
        if parameter.kind not in ("var_positional", "var_keyword") and parameter.name not in own:
            yield parameter


def is_context_annotation(annotation: str | None) -> bool:
    """Whether an annotation names `Context` (`Context`, `rewardkit.Context`, `"Context"`)."""
    return (annotation or "").split(".")[-1].strip("'\"") == "Context"


def _predefined_misspelling(parameter: RewardParameter, config: CheckConfig) -> str | None:
    """The predefined field a parameter was meant to be (RK102): a near spelling, or ``context``
    for any parameter annotated ``Context`` (fields are passed by name, never by type)."""
    if is_context_annotation(parameter.annotation) and parameter.name not in config.field_names:
        return "context"
    return misspelled_field(parameter.name, config)


def _adapter_known(facts: RewardFacts) -> frozenset[str] | None:
    """The fields the adapters a function is passed to fill beside the predefined and task
    fields (``None``: a ``field_map`` the analysis cannot read, which may fill any)."""
    known: set[str] = set()
    for use in facts.adapters:
        if use.mapped is None:
            return None
        known.update(ADAPTER_FIELDS[use.adapter], use.mapped)
    return frozenset(known)


def _framework_name(facts: RewardFacts, name: str) -> tuple[str, str | None] | None:
    """(why, suggestion) when ``name`` is the framework's own argument, which the adapter the
    function is passed to never passes under that name (TRL's ``completions``, verl's
    ``ground_truth``) and its ``field_map`` does not map."""
    for use in facts.adapters:
        natives = ADAPTER_NATIVE_NAMES[use.adapter]
        if name in natives and name not in use.unmapped:
            framework, adapter = FRAMEWORK_NAMES[use.adapter], ADAPTER_NAMES[use.adapter]
            suggestion, note = natives[name]
            why = (
                f"`{name}` is {framework}'s own argument, which `{adapter}` "
                "never passes: it calls the function once per sample with rewardkit's fields, "
                f"so this parameter receives nothing ({note})"
            )
            return why, suggestion
    return None


def _unfilled(
    rule: type[Rule], facts: RewardFacts, config: CheckConfig, *, with_default: bool
) -> Iterator[Diagnostic]:
    """RK101 (``with_default=False``) and RK104: parameters no field fills, with a did-you-mean.

    Without declared task fields any name could be one: then only :data:`MODEL_OUTPUT_NAMES`,
    typos of common dataset columns (:func:`misspelled_column`) and, in a function passed to an
    adapter, the framework's own argument names the adapter does not pass."""
    zero_config = not config.has_task_fields
    adapter_known = _adapter_known(facts) if facts.adapters else frozenset()
    known = config.field_names
    for parameter in _fillable(facts):
        name = parameter.name
        if (
            parameter.has_default != with_default
            or name in known
            or adapter_known is None
            or name in adapter_known
        ):
            continue
        native = _framework_name(facts, name)
        if native is None and _predefined_misspelling(parameter, config):
            continue  # RK102's
        column = misspelled_column(name) if zero_config and native is None else None
        if zero_config and native is None and column is None and name not in MODEL_OUTPUT_NAMES:
            continue
        if native is not None:
            message, suggestion = native
        elif column is not None:
            suggestion = column
            message = (
                f"`{name}` looks like a misspelling of `{column}`, a common dataset column: no "
                "predefined or injected field fills it, and unless the dataset has a column "
                f"`{name}` the runtime raises MissingFieldError"
            )
        else:
            suggestion = closest_field(name, config)
            message = f"`{name}` is not a field: no predefined, injected or task field fills it"
        if with_default and native is None:
            message = f"no field fills `{name}`: it is always its default"
        if native is None:
            suggestion, note = _role_kept(name, suggestion, config)
            message += note
        if name in MODEL_OUTPUT_NAMES and native is None:
            message += f" (`{name}` is {MODEL_OUTPUT_NAMES[name]})"
        guessed = zero_config and column is not None
        yield _unfilled_diagnostic(
            rule, facts, parameter, message, suggestion, guessed, native is not None
        )


def _unfilled_diagnostic(
    rule: type[Rule],
    facts: RewardFacts,
    parameter: RewardParameter,
    message: str,
    suggestion: str | None,
    guessed_column: bool,
    native: bool,
) -> Diagnostic:
    """RK101/RK104's diagnostic: the message, the did-you-mean and its rename fix."""
    name = parameter.name
    fixes: list[Fix] = []
    if suggestion:
        message += f"; did you mean `{suggestion}`?"
        fixes.append(rename_fix(facts, name, suggestion, meant=misspelled_output_name(name)))
    elif not native:
        message += " (if the dataset has it, add it to `task_fields` in [tool.rewardkit])"
    if guessed_column:
        message += " (declare the dataset's columns in `task_fields` to check them exactly)"
    return rule.diagnostic(
        parameter.span,
        message,
        fixes=fixes,
        data=reward_data(facts, parameter=name, suggestion=suggestion),
    )


class UnknownField(Rule):
    """A parameter without a default that no field fills: the runtime raises ``MissingFieldError``
    (or, where fields are filtered, the reward never runs). Reported when task fields are declared
    (``task_fields`` or ``task_schema``). Without them any name could be a task field, except
    the names other frameworks give the model's output, which no dataset provides
    (``prediction``, AgentFly's older name for ``final_response``, and verl's ``solution_str``),
    and a name one or two edits from a common dataset column (``answr``, ``solutoin``,
    ``groundtruth``) that is no common column itself (``answers`` and ``labels`` are)."""

    code = "RK101"
    severity = Severity.ERROR
    TRANSFORM = RENAME
    summary = "unknown field: a parameter no predefined, injected or task field fills"
    EXAMPLE_TASK_FIELDS = ("answer",)
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
        "    return float(final_response == answer)\n",
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, **extra):\n"
        "    return float(final_response == extra.get('answer'))\n",
        Valid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, gold):\n"
            "    return float(final_response == gold)\n",
            task_fields=(),
        ),
        Valid(
            "from rewardkit import reward\n\n@reward\ndef any_of(final_response, answers):\n"
            "    return float(final_response in answers)\n",
            task_fields=(),
        ),
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef qa(final_response: str, answr: str):\n"
            "    return float(final_response == answr)\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef qa(final_response: str, answer: str):\n"
            "    return float(final_response == answer)\n",
            task_fields=(),
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answr):\n"
            "    return float(final_response == answr)\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
            "    return float(final_response == answer)\n",
        ),
        Invalid(
            "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
            "def exact(prediction, answer):\n    return float(prediction == answer)\n",
            4,
            "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
            "def exact(final_response, answer):\n    return float(final_response == answer)\n",
            task_fields=(),
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        return _unfilled(type(self), facts, config, with_default=False)


class MisspelledPredefinedField(Rule):
    """A parameter one or two edits away from a predefined field (``final_respone``,
    ``trajectroy``), or annotated ``Context`` under another name than ``context``: it receives
    nothing (fields are passed by name). Reported whatever the configuration."""

    code = "RK102"
    severity = Severity.ERROR
    TRANSFORM = RENAME
    summary = "misspelled predefined field (`final_respone`, `trajectroy`, `ctx: Context`)"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef length(final_response, trajectory):\n"
        "    return len(trajectory) / 10\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef short(final_respone):\n"
            "    return 1.0 if len(final_respone) < 100 else 0.0\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef short(final_response):\n"
            "    return 1.0 if len(final_response) < 100 else 0.0\n",
        ),
        Invalid(
            "import rewardkit as rk\n\n@rk.reward(name='turns')\nasync def turns(trajectroy=None):\n"
            "    return float(len(trajectroy or []))\n",
            4,
            "import rewardkit as rk\n\n@rk.reward(name='turns')\nasync def turns(trajectory=None):\n"
            "    return float(len(trajectory or []))\n",
        ),
        Invalid(
            "from rewardkit import Context, reward\n\n@reward\n"
            "async def judged(final_response, ctx: Context):\n"
            "    judge = await ctx.acquire_resource('judge')\n"
            "    return await judge.score(final_response)\n",
            4,
            "from rewardkit import Context, reward\n\n@reward\n"
            "async def judged(final_response, context: Context):\n"
            "    judge = await context.acquire_resource('judge')\n"
            "    return await judge.score(final_response)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        for parameter in _fillable(facts):
            name, span = parameter.name, parameter.span
            suggestion = _predefined_misspelling(parameter, config)
            if suggestion is None or _framework_name(facts, name) is not None:
                continue  # a framework's own argument (TRL's `completions`) is RK101's
            if suggestion == "context" and is_context_annotation(parameter.annotation):
                message = (
                    f"`{name}` is annotated `Context`, but fields are passed by name: only a "
                    "parameter called `context` receives it"
                )
            else:
                message = (
                    f"`{name}` looks like a misspelling of the predefined field `{suggestion}`; "
                    "as spelled it receives nothing"
                )
            yield self.diagnostic(
                span,
                message,
                fixes=[rename_fix(facts, name, suggestion)],
                data=reward_data(facts, parameter=name, suggestion=suggestion),
            )


class PositionalOnlyParameter(Rule):
    """Rewards are called with keywords only: positional-only parameters and ``*args`` never
    receive a field."""

    code = "RK103"
    severity = Severity.ERROR
    summary = "positional-only parameters or `*args`"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, *, answer=''):\n"
        "    return float(final_response == answer)\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, /, answer):\n"
            "    return float(final_response == answer)\n",
            4,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response,\n"
            "          *answers):\n    return float(final_response in answers)\n",
            5,
        ),
    )

    NEVER_FILLED: ClassVar[dict[str, str]] = {
        "positional_only": "`{name}` is positional-only, but rewards are called with keywords "
        "only: it never receives a field",
        "var_positional": "`*{name}` never receives anything: rewards are called with keywords "
        "only (use `**kwargs` to accept extra fields)",
    }
    """What each kind of parameter a keyword call never fills is told."""

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        for parameter, _ in facts.parameters:
            message = self.NEVER_FILLED.get(parameter.kind)
            if message is not None:
                yield self.diagnostic(
                    parameter.span,
                    message.format(name=parameter.name),
                    data=reward_data(facts, parameter=parameter.name),
                )


class DefaultNeverFilled(Rule):
    """A parameter with a default that no field can fill always gets its default: usually a
    misnamed task field. Reported when task fields are declared, and for the model-output names
    of other frameworks (``prediction=""``) whatever the configuration."""

    code = "RK104"
    severity = Severity.WARNING
    TRANSFORM = RENAME
    summary = "a parameter with a default that no field can fill (it is always the default)"
    EXAMPLE_TASK_FIELDS = ("answer", "max_length")
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef short(final_response, max_length=100):\n"
        "    return float(len(final_response) <= max_length)\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef short(final_response, max_len=100):\n"
            "    return float(len(final_response) <= max_len)\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef short(final_response, max_length=100):\n"
            "    return float(len(final_response) <= max_length)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        return _unfilled(type(self), facts, config, with_default=True)
