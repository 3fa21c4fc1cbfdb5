"""Static checks of reward modules on CPython's `ast`: pure functions from source text to diagnostics.

The engine has no LSP types and prints nothing; ``rewardkit check`` (:mod:`rewardkit.checks.cli`)
and the language server (``rewardkit_lsp``) are thin adapters over it.

Public API (stable):

- :func:`check_source` ``(source, path, config) -> list[Diagnostic]``: stateless, one module.
- :class:`ModuleAnalyzer` ``().analyze(source, path, config) -> ModuleAnalysis``: the same results,
  caching work per top-level definition so re-analysing an edited module only re-parses what changed.
- :func:`load_config` ``(path) -> CheckConfig``: ``[tool.rewardkit]`` of the nearest ``pyproject.toml``.
- :func:`suppression_fix` ``(diagnostic, source) -> Fix``: adds ``# rewardkit: ignore[CODE]``.
- :func:`apply_edits` ``(source, edits) -> str``: applies a fix's edits (tests, editors without LSP).
- :data:`RULES`: the rule classes (code, severity, summary, VALID/INVALID examples).

Coordinates: lines 1-based, columns 0-based code points, end exclusive.
"""

from rewardkit.checks.config import (
    CheckConfig,
    ConfigError,
    TaskField,
    find_config_file,
    load_config,
    load_config_file,
)
from rewardkit.checks.engine import ModuleAnalyzer, check_source, duplicate_reward_diagnostics
from rewardkit.checks.fixes import apply_edits, suppression_fix
from rewardkit.checks.model import (
    Diagnostic,
    Fix,
    ModuleAnalysis,
    RewardDefinition,
    RewardParameter,
    Severity,
    Span,
    TextEdit,
)
from rewardkit.checks.rules import RULES, Invalid, Rule, rule_for_code

__all__ = [
    "RULES",
    "CheckConfig",
    "ConfigError",
    "Diagnostic",
    "Fix",
    "Invalid",
    "ModuleAnalysis",
    "ModuleAnalyzer",
    "RewardDefinition",
    "RewardParameter",
    "Rule",
    "Severity",
    "Span",
    "TaskField",
    "TextEdit",
    "apply_edits",
    "check_source",
    "duplicate_reward_diagnostics",
    "find_config_file",
    "load_config",
    "load_config_file",
    "rule_for_code",
    "suppression_fix",
]
