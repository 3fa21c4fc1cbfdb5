"""Execution rules (RK504, RK505): how the module runs its rewards, read from how it is laid out
and how it adapts them: process mode from a script (whose rewards live in ``__main__``), and a
TRL group reward called where no trainer tells its group size.

The facts come from :mod:`rewardkit.checks.uses` (``ImportContext.script``, ``AdapterUse``) and
:class:`~rewardkit.checks.discovery.GroupRewardFacts`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rewardkit.checks.frameworks import ADAPTER_NAMES, AdapterUse
from rewardkit.checks.model import Diagnostic, Severity, Span
from rewardkit.checks.rules.base import Invalid, Rule, reward_data

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig
    from rewardkit.checks.discovery import GroupRewardFacts
    from rewardkit.checks.facts import RewardFacts
    from rewardkit.checks.positions import NodePositions
    from rewardkit.checks.scopes import FunctionNode

_SCRIPT_REWARD = (
    "from rewardkit import reward\nfrom rewardkit.adapters import to_trl\nfrom trl import GRPOTrainer\n\n"
    '@reward(execution="process")\ndef accuracy(final_response, answer):\n'
    "    return float(final_response.strip() == answer)\n\n"
    'trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=[to_trl(accuracy)])\n'
    "trainer.train()\n"
)


_GROUP = (
    "from rewardkit import group_reward\nfrom rewardkit.adapters import to_trl\n\n"
    "@group_reward\ndef shortest(final_response):\n"
    "    shortest = min(len(r) for r in final_response)\n"
    "    return [float(len(r) == shortest) for r in final_response]\n\n"
)


def _execution_keyword(function: FunctionNode) -> ast.keyword | None:
    """The decorator's ``execution=`` keyword, where the reward asks for process mode."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "execution":
                    return keyword
    return None


def _process_place(
    function: FunctionNode,
    in_process: bool,
    adapters: tuple[AdapterUse, ...],
    name_span: Span,
    positions: NodePositions,
    calculated: tuple[str, ...] = (),
) -> tuple[Span, str] | None:
    """(where, how) the module asks for process mode for this function, if it does
    (``calculated``: the names it passes to ``calculate_rewards(..., execution="process")``)."""
    keyword = _execution_keyword(function) if in_process else None
    if keyword is not None:
        return positions.span(keyword), '`execution="process"`'
    if in_process:
        return name_span, '`execution = "process"`'
    adapter = next((use.adapter for use in adapters if use.process), None)
    if adapter is not None:
        return name_span, f'`{ADAPTER_NAMES[adapter]}({function.name}, execution="process")`'
    if function.name in calculated:
        return name_span, f'`calculate_rewards({function.name}, ..., execution="process")`'
    return None


class ProcessModeInScript(Rule):
    """Process mode (``execution="process"``) runs a reward in worker processes, which import it
    by its module and never import ``__main__`` (that would run the script's top level again in
    every worker: model loading, ``trainer.train()``); asked for by the decorator, an adapter's
    or ``calculate_rewards``' ``execution=``. A reward defined in a module run as a
    script (an ``if __name__ == "__main__":`` block, a ``#!`` line, or a flat training script's
    ``trainer.train()`` at its top level) lives in ``__main__``: rewardkit refuses to run it
    (``RewardLoadError`` when the adapter is built or the batch starts), minutes into a run,
    after the model has loaded. Move the reward to a module next to the script and import it
    from there (or run it with ``execution="thread"``)."""

    code = "RK504"
    severity = Severity.ERROR
    summary = "process mode for a reward defined in a script run directly (its rewards live in `__main__`)"
    VALID = (
        "from rewardkit import reward\n\n"
        '@reward(execution="process")\ndef accuracy(final_response, answer):\n'
        "    return float(final_response.strip() == answer)\n",
        "from rewardkit import reward\nfrom rewardkit.adapters import to_trl\n\n"
        "@reward\ndef accuracy(final_response, answer):\n"
        "    return float(final_response.strip() == answer)\n\n"
        'if __name__ == "__main__":\n    print(to_trl(accuracy)(prompts=["q"], completions=["4"], answer=["4"]))\n',
    )
    INVALID = (
        Invalid(_SCRIPT_REWARD, 5),
        Invalid(
            "from rewardkit import reward\nfrom rewardkit.adapters import to_trl\n\n"
            "@reward\ndef accuracy(final_response, answer):\n"
            "    return float(final_response.strip() == answer)\n\n"
            'if __name__ == "__main__":\n'
            '    scorer = to_trl(accuracy, execution="process")\n',
            5,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        script = facts.context.script
        if script is None or not facts.definition.module_level:
            return
        place = _process_place(
            facts.function,
            facts.in_process,
            facts.adapters,
            facts.definition.span,
            facts.positions,
            facts.context.calculated_in_process,
        )
        if place is not None:
            yield self._diagnostic(
                place, facts.definition.function_name, script, reward_data(facts)
            )

    def check_group(self, facts: GroupRewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        script = facts.context.script
        if script is None:
            return
        place = _process_place(
            facts.function,
            facts.in_process,
            facts.adapters,
            facts.span,
            facts.positions,
            facts.context.calculated_in_process,
        )
        if place is not None:
            data = {"reward": facts.function.name}
            yield self._diagnostic(place, facts.function.name, script, data)

    @classmethod
    def _diagnostic(
        cls, place: tuple[Span, str], name: str, script: str, data: dict[str, object]
    ) -> Diagnostic:
        span, how = place
        return cls.diagnostic(
            span,
            f"{how} runs `{name}` in worker processes, but this module is run as a script "
            f"({script}), so `{name}` is defined in `__main__`, which a worker never imports: "
            "rewardkit refuses it (RewardLoadError when the adapter is built or the batch "
            "starts); move the reward to a module next to the script and import it from there",
            data={**data, "script": script},
        )


class TrlGroupWithoutSize(Rule):
    """``to_trl`` of a group reward (``@group_reward``, grouped per prompt) needs each call's
    group size: ``group_size=``, else the calling trainer's ``num_generations`` (TRL's
    ``GRPOTrainer`` and ``RLOOTrainer`` tell the adapter), else the one size the prompts allow.
    A call from anything else (the module calling the adapted function itself: an evaluation
    loop, a custom trainer, a test) whose prompts leave a choice (a prompt the dataset repeats,
    whose groups sit side by side; interleaved prompts) is refused. Reported where the module
    calls ``to_trl(f)`` without ``group_size`` itself; pass ``group_size=`` your
    ``GRPOConfig.num_generations``. A reward declared ``over="batch"`` is scored over the whole
    call and needs none."""

    code = "RK505"
    severity = Severity.WARNING
    summary = "a TRL group reward called outside TRL's trainers without `group_size`"
    VALID = (
        _GROUP + "reward_funcs = [to_trl(shortest)]  # GRPOTrainer tells the group size\n",
        _GROUP
        + "scorer = to_trl(shortest, group_size=4)\n"
        + 'print(scorer(prompts=["q"] * 4, completions=["a", "bb", "c", "dd"]))\n',
        _GROUP.replace("@group_reward", '@group_reward(over="batch")')
        + 'print(to_trl(shortest)(prompts=["q"] * 4, completions=["a", "bb", "c", "dd"]))\n',
    )
    INVALID = (
        Invalid(
            _GROUP
            + "scorer = to_trl(shortest)\n"
            + 'print(scorer(prompts=["q"] * 4, completions=["a", "bb", "c", "dd"]))\n',
            5,
        ),
    )

    def check_group(self, facts: GroupRewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.over != "group":
            return  # "batch", or not a literal: nothing to guess, or nothing known
        if any(
            use.adapter == "trl" and use.called and not use.group_size for use in facts.adapters
        ):
            name = facts.function.name
            yield self.diagnostic(
                facts.span,
                f"this module calls `to_trl({name})` itself, without `group_size`: only TRL's "
                "GRPOTrainer and RLOOTrainer tell the adapter their num_generations, so a call "
                "whose prompts leave a choice (a prompt repeated side by side, interleaved "
                "prompts) is refused; pass `group_size=` your `GRPOConfig.num_generations`",
                data={"reward": name},
            )
