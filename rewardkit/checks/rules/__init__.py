"""The rules: one small class per code, whose VALID/INVALID examples are its documentation and tests.

One module per rule family: :mod:`~rewardkit.checks.rules.fields` (RK1xx, parameters),
:mod:`~rewardkit.checks.rules.returns` (RK2xx; RK206, a return that can give ``None``, in
:mod:`~rewardkit.checks.rules.none_returns`), :mod:`~rewardkit.checks.rules.coroutines`
(RK3xx), :mod:`~rewardkit.checks.rules.registration` (RK4xx),
:mod:`~rewardkit.checks.rules.frameworks` (RK501-RK503, where a function runs and framework
functions), :mod:`~rewardkit.checks.rules.execution` (RK504-RK505, process mode and TRL groups),
:mod:`~rewardkit.checks.rules.model_code` (RK506, the model's text run outside a sandbox) and
:mod:`~rewardkit.checks.rules.syntax` (RK9xx, notes about the module itself). Rules read the
facts :mod:`rewardkit.checks.discovery` collected in its single walk of each reward; they never
walk the tree themselves. Codes are part of the public contract (:mod:`rewardkit.checks.codes`).
"""

from __future__ import annotations

from rewardkit.checks.codes import unknown_code_prefixes
from rewardkit.checks.rules.base import Invalid, Rule, Valid
from rewardkit.checks.rules.coroutines import (
    BlockingCallInAsyncReward,
    CoroutineInSyncReward,
    UnawaitedCoroutine,
)
from rewardkit.checks.rules.execution import ProcessModeInScript, TrlGroupWithoutSize
from rewardkit.checks.rules.fields import (
    DefaultNeverFilled,
    MisspelledPredefinedField,
    PositionalOnlyParameter,
    UnknownField,
)
from rewardkit.checks.rules.frameworks import (
    FrameworkArguments,
    FrameworkReturn,
    SignalTimeoutInThread,
)
from rewardkit.checks.rules.model_code import ModelTextExecuted
from rewardkit.checks.rules.none_returns import ReturnsMaybeNone
from rewardkit.checks.rules.registration import DuplicateRewardName, IncompleteBaseReward
from rewardkit.checks.rules.returns import (
    InconsistentExtras,
    IntOrBoolReturn,
    MissingRewardKey,
    NonNumericReturn,
    ReturnsNothing,
)
from rewardkit.checks.rules.syntax import FileTooLarge, NestingTooDeep, SyntaxErrorRule

RULES: tuple[type[Rule], ...] = (
    UnknownField,
    MisspelledPredefinedField,
    PositionalOnlyParameter,
    DefaultNeverFilled,
    MissingRewardKey,
    NonNumericReturn,
    ReturnsNothing,
    InconsistentExtras,
    IntOrBoolReturn,
    ReturnsMaybeNone,
    UnawaitedCoroutine,
    CoroutineInSyncReward,
    BlockingCallInAsyncReward,
    DuplicateRewardName,
    IncompleteBaseReward,
    SignalTimeoutInThread,
    FrameworkArguments,
    FrameworkReturn,
    ProcessModeInScript,
    TrlGroupWithoutSize,
    ModelTextExecuted,
    SyntaxErrorRule,
    NestingTooDeep,
    FileTooLarge,
)
"""Every rule, in code order (a test keeps it equal to :data:`rewardkit.checks.codes.RULE_CODES`)."""

_BY_CODE = {rule.code: rule for rule in RULES}

UnawaitedContextCall = UnawaitedCoroutine
"""RK301's former name (it covered ``context``'s methods only)."""
SyncContextCall = CoroutineInSyncReward
"""RK302's former name."""


def rule_for_code(code: str) -> type[Rule]:
    """The rule class of a code (``KeyError`` for an unknown code)."""
    return _BY_CODE[code]


__all__ = [
    "RULES",
    "BlockingCallInAsyncReward",
    "CoroutineInSyncReward",
    "DefaultNeverFilled",
    "DuplicateRewardName",
    "FileTooLarge",
    "FrameworkArguments",
    "FrameworkReturn",
    "IncompleteBaseReward",
    "InconsistentExtras",
    "IntOrBoolReturn",
    "Invalid",
    "MissingRewardKey",
    "MisspelledPredefinedField",
    "ModelTextExecuted",
    "NestingTooDeep",
    "NonNumericReturn",
    "PositionalOnlyParameter",
    "ProcessModeInScript",
    "ReturnsMaybeNone",
    "ReturnsNothing",
    "Rule",
    "SignalTimeoutInThread",
    "SyncContextCall",
    "SyntaxErrorRule",
    "TrlGroupWithoutSize",
    "UnawaitedContextCall",
    "UnawaitedCoroutine",
    "UnknownField",
    "Valid",
    "rule_for_code",
    "unknown_code_prefixes",
]
