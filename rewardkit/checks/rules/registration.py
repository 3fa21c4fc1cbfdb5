"""Registration rules (RK401, RK402): every reward registers once, under a name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from rewardkit.checks.discovery import ClassFacts
from rewardkit.checks.model import Diagnostic, RewardDefinition, Severity
from rewardkit.checks.rules.base import Invalid, Rule

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig


SHOWN_OTHERS = 3
"""RK401 names this many other definitions of a name and counts the rest (6,000 modules sharing
a name would otherwise print 6,000 x 6,000 places)."""


class DuplicateRewardName(Rule):
    """Two rewards registered under the same name: the second replaces (or clashes with) the
    first. Reported at both definitions, in one module or across the checked files, naming up to
    three other definitions and counting the rest. Names are compared ignoring case, as the
    registry does."""

    code = "RK401"
    severity = Severity.ERROR
    summary = "two rewards with the same name in the checked files"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef a(final_response):\n    return 1.0\n\n"
        "@reward(name='b')\ndef a_again(final_response):\n    return 0.0\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef a(final_response):\n    return 1.0\n\n"
            "@reward(name='a')\ndef a_again(final_response):\n    return 0.0\n",
            4,
        ),
    )

    @classmethod
    def duplicates(
        cls, definitions: Sequence[tuple[str | None, RewardDefinition]]
    ) -> list[tuple[int, Diagnostic]]:
        """RK401 for each (path, definition) whose name another definition also has: (index,
        diagnostic). Each names the first :data:`SHOWN_OTHERS` other definitions (in the order
        given) and counts the rest: linear in time, memory and output however many share a name."""
        by_name: dict[str, list[int]] = {}
        for index, (_, definition) in enumerate(definitions):
            if definition.name:
                by_name.setdefault(definition.name.casefold(), []).append(index)
        found = []
        for indices in by_name.values():
            if len(indices) < 2:
                continue
            head = indices[: SHOWN_OTHERS + 1]
            for index in indices:
                others = [definitions[other] for other in head if other != index]
                found.append(
                    (
                        index,
                        cls.finding(definitions[index], others[:SHOWN_OTHERS], len(indices) - 1),
                    )
                )
        return found

    @classmethod
    def finding(
        cls,
        located: tuple[str | None, RewardDefinition],
        others: Sequence[tuple[str | None, RewardDefinition]],
        count: int,
    ) -> Diagnostic:
        """RK401 at ``located`` (path, definition), naming ``others`` (the first few other
        definitions of its name) among ``count`` in all; the language server builds the same."""
        path, definition = located
        name = definition.name
        places = []
        for other_path, other_definition in others:
            line = other_definition.span.line
            where = f"line {line}" if other_path == path else f"{other_path}:{line}"
            if other_definition.name != name:
                where += f" (as {other_definition.name!r})"
            places.append(where)
        listed = ", ".join(places)
        more = count - len(places)
        if more > 0:
            listed += f" and {more:,} other definition{'s' * (more != 1)}"
        return cls.diagnostic(
            definition.span,
            f"reward name {name!r} is also defined at {listed}",
            data={"reward": name, "others": places, "count": count},
        )


class IncompleteBaseReward(Rule):
    """A ``BaseReward`` subclass needs a ``name`` (AgentFly registers by it) and a
    ``call(self, ...)`` method (without one it is never registered). A class with neither is an
    intermediate base and is left alone, as are classes named like one (``...Base``, ``Base...``,
    ``Abstract...``, ``...Mixin``), which often hold the shared ``call`` their subclasses name."""

    code = "RK402"
    severity = Severity.ERROR
    summary = "a `BaseReward` subclass without `name` or without `call`"
    VALID = (
        "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n    name = 'api'\n\n"
        "    async def call(self, final_response):\n        return 1.0\n",
        "from rewardkit import BaseReward\n\nclass Shared(BaseReward):\n"
        "    def normalize(self, text):\n        return text.strip()\n",
        "from rewardkit import BaseReward\n\nclass JudgeBase(BaseReward):\n"
        "    rubric = 'default'\n\n    async def call(self, final_response):\n"
        "        return float(self.rubric in final_response)\n\n"
        "class StrictJudge(JudgeBase):\n    name = 'strict_judge'\n    rubric = 'strict'\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n\n"
            "    async def call(self, final_response):\n        return 1.0\n",
            3,
        ),
        Invalid(
            "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n    name = 'api'\n\n"
            "    async def score(self, final_response):\n        return 1.0\n",
            3,
        ),
    )

    def check_class(self, facts: ClassFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        class_name = facts.node.name
        if facts.call is None and not facts.has_name:
            return  # neither: an intermediate base with shared helpers, which the runtime skips
        named_like_a_base = class_name.startswith(("Base", "Abstract")) or class_name.endswith(
            ("Base", "Mixin")
        )
        if named_like_a_base:
            return  # shared logic (maybe a `call`) that subclasses name
        if facts.call is None:
            yield self.diagnostic(
                facts.span,
                f"`{class_name}` subclasses BaseReward but defines no `call(self, ...)`: "
                "it is never registered",
                data={"reward": facts.name, "missing": "call"},
            )
        if not facts.has_name:
            yield self.diagnostic(
                facts.span,
                f"`{class_name}` subclasses BaseReward but sets no `name`: set "
                f"`name = {class_name.lower()!r}` (AgentFly registers rewards by it)",
                data={"reward": facts.name, "missing": "name"},
            )
