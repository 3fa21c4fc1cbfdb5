"""The ``field_map`` that would give a reward a field its adapter's framework inputs do not supply.

A reward that requires ``answer`` under TRL with the usual ``solution`` column, or written with
verl's own names (``solution_str``, ``ground_truth``), fails on its first sample with a
``MissingFieldError``. The runtime's message lists the fields; the adapter knows which framework
input holds the missing one and adds the mapping that fixes it, spelled for its own ``to_*``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rewardkit.runtime.define.errors import MissingFieldError
from rewardkit.runtime.define.fields import PREDEFINED_FIELDS

ANSWER_NAMES = frozenset(
    {
        "answer",
        "answers",
        "solution",
        "ground_truth",
        "label",
        "labels",
        "reference",
        "gold",
        "gold_answer",
        "target",
        "expected",
        "expected_answer",
    }
)
"""Names datasets and rewards give the reference answer: a missing one is looked for among them."""

RESPONSE_NAMES = frozenset(
    {
        "solution_str",
        "response",
        "output",
        "prediction",
        "generated_text",
        "model_output",
        "completion_text",
    }
)
"""Names rewards give the model's response (verl's ``solution_str`` first): mapped from the response."""


def field_map_for(
    missing: Sequence[str],
    available: Iterable[str],
    *,
    renamed: Mapping[str, str],
    field_map: Mapping[str, str | None],
    taken: Iterable[str],
    context: Iterable[str] = (),
) -> dict[str, str]:
    """The ``field_map`` entries (framework input -> reward field) that supply ``missing`` fields.

    ``renamed``: framework inputs the adapter feeds to another field by default (verl's
    ``ground_truth`` -> ``answer``); ``field_map``: the adapter's own; ``taken``: the reward's
    parameters (an input feeding one of them is not free); ``context``: fields that are no task
    input (TRL's ``trainer_state``). A missing field no input clearly holds is left out."""
    taken, context = set(taken), set(context)
    sources = {
        target: source for source, target in {**renamed, **field_map}.items() if target is not None
    }
    free = [
        (sources.get(name, name), name)
        for name in sorted(available)
        if name not in PREDEFINED_FIELDS and name not in context and name not in taken
    ]
    response = next(
        (source for source, target in renamed.items() if target == "final_response"), None
    )
    mapping: dict[str, str] = {}
    for name in missing:
        if name in renamed and name not in field_map:  # written with the framework's own name
            mapping[name] = name
        elif name in RESPONSE_NAMES and response is not None and response not in field_map:
            mapping[response] = name
        else:
            unused = [(source, target) for source, target in free if source not in mapping]
            answers = [
                item for item in unused if item[0] in ANSWER_NAMES or item[1] in ANSWER_NAMES
            ]
            choice = answers if name in ANSWER_NAMES and answers else unused
            if len(choice) == 1:
                mapping[choice[0][0]] = name
    return mapping


def with_field_map_hint(
    error: MissingFieldError, *, factory: str, framework: str, mapping: Mapping[str, str]
) -> MissingFieldError:
    """``error`` with the ``field_map`` advice of the adapter built by ``factory`` appended."""
    if not mapping:
        return error
    inputs = ", ".join(f"{source!r} as {target!r}" for source, target in mapping.items())
    message = (
        f"{error}. Under {framework}, map the input that holds it ({inputs}): "
        f"{factory}(..., field_map={dict(mapping)!r})"
    )
    return MissingFieldError(
        message,
        reward_name=error.reward_name,
        parameter=error.parameter,
        available=error.available,
        suggestion=error.suggestion,
    )
