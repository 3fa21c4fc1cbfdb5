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

For editors (the language server reaches the checks through this face only, never the CLI's
modules): :func:`filter_diagnostics` (a module's configuration and suppressions applied to
diagnostics found across files), :func:`may_define_rewards`, :func:`fixable`,
:func:`text_edits`, :func:`inserts_placeholder`, :class:`FixUnavailable`, :class:`LibcstMissing`,
:func:`decode_source`, :func:`is_excluded`, :func:`walk_python_files`,
:data:`SKIPPED_DIRECTORIES`, :class:`DuplicateRewardName` and :data:`SHOWN_OTHERS`.

Coordinates: lines 1-based, columns 0-based code points, end exclusive.
"""

from rewardkit._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig as CheckConfig
    from rewardkit.checks.config import ConfigError as ConfigError
    from rewardkit.checks.config import TaskField as TaskField
    from rewardkit.checks.config import find_config_file as find_config_file
    from rewardkit.checks.config import load_config as load_config
    from rewardkit.checks.config import load_config_file as load_config_file
    from rewardkit.checks.engine import ModuleAnalyzer as ModuleAnalyzer
    from rewardkit.checks.engine import analyze_module as analyze_module
    from rewardkit.checks.engine import check_source as check_source
    from rewardkit.checks.engine import duplicate_reward_diagnostics as duplicate_reward_diagnostics
    from rewardkit.checks.engine import filter_diagnostics as filter_diagnostics
    from rewardkit.checks.engine import may_define_rewards as may_define_rewards
    from rewardkit.checks.fixer import FixUnavailable as FixUnavailable
    from rewardkit.checks.fixer import LibcstMissing as LibcstMissing
    from rewardkit.checks.fixer import apply_fix as apply_fix
    from rewardkit.checks.fixer import fix_module as fix_module
    from rewardkit.checks.fixer import fixable as fixable
    from rewardkit.checks.fixer import resolve_fix as resolve_fix
    from rewardkit.checks.fixer import text_edits as text_edits
    from rewardkit.checks.fixes import apply_edits as apply_edits
    from rewardkit.checks.fixes import inserts_placeholder as inserts_placeholder
    from rewardkit.checks.fixes import suppression_fix as suppression_fix
    from rewardkit.checks.model import Diagnostic as Diagnostic
    from rewardkit.checks.model import Fix as Fix
    from rewardkit.checks.model import ModuleAnalysis as ModuleAnalysis
    from rewardkit.checks.model import RewardDefinition as RewardDefinition
    from rewardkit.checks.model import RewardParameter as RewardParameter
    from rewardkit.checks.model import Severity as Severity
    from rewardkit.checks.model import Span as Span
    from rewardkit.checks.model import TextEdit as TextEdit
    from rewardkit.checks.model import Transform as Transform
    from rewardkit.checks.rules import RULES as RULES
    from rewardkit.checks.rules import DuplicateRewardName as DuplicateRewardName
    from rewardkit.checks.rules import Invalid as Invalid
    from rewardkit.checks.rules import Rule as Rule
    from rewardkit.checks.rules import rule_for_code as rule_for_code
    from rewardkit.checks.rules.registration import SHOWN_OTHERS as SHOWN_OTHERS
    from rewardkit.checks.source_files import decode_source as decode_source
    from rewardkit.checks.source_files import is_excluded as is_excluded
    from rewardkit.checks.source_files import walk_python_files as walk_python_files
    from rewardkit.checks.targets import SKIPPED_DIRECTORIES as SKIPPED_DIRECTORIES

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
    "filter_diagnostics": "rewardkit.checks.engine",
    "may_define_rewards": "rewardkit.checks.engine",
    "FixUnavailable": "rewardkit.checks.fixer",
    "LibcstMissing": "rewardkit.checks.fixer",
    "fixable": "rewardkit.checks.fixer",
    "text_edits": "rewardkit.checks.fixer",
    "inserts_placeholder": "rewardkit.checks.fixes",
    "DuplicateRewardName": "rewardkit.checks.rules",
    "SHOWN_OTHERS": "rewardkit.checks.rules.registration",
    "decode_source": "rewardkit.checks.source_files",
    "is_excluded": "rewardkit.checks.source_files",
    "SKIPPED_DIRECTORIES": "rewardkit.checks.targets",
    "walk_python_files": "rewardkit.checks.source_files",
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

__all__ = [*_EXPORTS]
"""Every public name: the keys of the one table above."""
