"""Static checks of reward modules on CPython's `ast`: pure functions from source text to diagnostics.

The engine has no LSP types and prints nothing; ``rewardkit check`` (:mod:`rewardkit.checks.cli`)
and the language server (``rewardkit_lsp``) are thin adapters over it.

Public API (stable):

- :func:`check_source` ``(source, path, config) -> list[Diagnostic]``: stateless, one module
  (:func:`analyze_module` gives its whole :class:`ModuleAnalysis`, rewards included).
- :class:`ModuleAnalyzer` ``().analyze(source, path, config) -> ModuleAnalysis``: the same results,
  caching work per top-level definition so re-analysing an edited module only re-parses what changed.
- :func:`load_config` ``(path) -> CheckConfig``: ``[tool.rewardkit]`` of the nearest ``pyproject.toml``.
- :func:`suppression_fix` ``(diagnostic, source) -> Fix``: adds ``# rewardkit: ignore[CODE]``.
- :func:`apply_edits` ``(source, edits) -> str``: applies text edits (tests, editors without LSP).
- :func:`apply_fix` ``(source, fix) -> str`` and :func:`resolve_fix` ``(source, fix) -> Fix`` (the
  fix with its text edits): a rule's fix is a libcst transformation, run only when asked for
  (libcst comes with the ``fix`` extra); :func:`fix_module` applies every safe fix of a module,
  verified, as ``rewardkit check --fix`` and the editor's fix-all do.
- :data:`RULES`: the rule classes (code, severity, summary, VALID/INVALID examples).

Coordinates: lines 1-based, columns 0-based code points, end exclusive.
"""

from rewardkit._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewardkit.checks.config import (
        CheckConfig,
        ConfigError,
        TaskField,
        find_config_file,
        load_config,
        load_config_file,
    )
    from rewardkit.checks.engine import (
        ModuleAnalyzer,
        analyze_module,
        check_source,
        duplicate_reward_diagnostics,
    )
    from rewardkit.checks.fixer import apply_fix, fix_module, resolve_fix
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
        Transform,
    )
    from rewardkit.checks.rules import RULES, Invalid, Rule, rule_for_code

_EXPORTS = {
    "CheckConfig": "rewardkit.checks.config",
    "ConfigError": "rewardkit.checks.config",
    "TaskField": "rewardkit.checks.config",
    "find_config_file": "rewardkit.checks.config",
    "load_config": "rewardkit.checks.config",
    "load_config_file": "rewardkit.checks.config",
    "ModuleAnalyzer": "rewardkit.checks.engine",
    "analyze_module": "rewardkit.checks.engine",
    "check_source": "rewardkit.checks.engine",
    "duplicate_reward_diagnostics": "rewardkit.checks.engine",
    "apply_edits": "rewardkit.checks.fixes",
    "apply_fix": "rewardkit.checks.fixer",
    "fix_module": "rewardkit.checks.fixer",
    "resolve_fix": "rewardkit.checks.fixer",
    "suppression_fix": "rewardkit.checks.fixes",
    "Diagnostic": "rewardkit.checks.model",
    "Fix": "rewardkit.checks.model",
    "ModuleAnalysis": "rewardkit.checks.model",
    "RewardDefinition": "rewardkit.checks.model",
    "RewardParameter": "rewardkit.checks.model",
    "Severity": "rewardkit.checks.model",
    "Span": "rewardkit.checks.model",
    "TextEdit": "rewardkit.checks.model",
    "Transform": "rewardkit.checks.model",
    "RULES": "rewardkit.checks.rules",
    "Invalid": "rewardkit.checks.rules",
    "Rule": "rewardkit.checks.rules",
    "rule_for_code": "rewardkit.checks.rules",
}
"""Public name -> its module, imported on first use: ``rewardkit check`` answers from its cache
without loading the engine."""

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

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
    "Transform",
    "analyze_module",
    "apply_edits",
    "apply_fix",
    "check_source",
    "duplicate_reward_diagnostics",
    "find_config_file",
    "fix_module",
    "load_config",
    "load_config_file",
    "resolve_fix",
    "rule_for_code",
    "suppression_fix",
]
