"""Commands (``workspace/executeCommand``) and code action kinds the server offers."""

SELECT_RANGE_COMMAND = "rewardkit.selectRange"
"""Run after a fix that inserts a placeholder: the client selects it for editing."""

QUICK_FIX = "quickfix"
FIX_ALL = "source.fixAll.rewardkit"
"""The kind of the fix-all action (safe fixes only): what VS Code's ``editor.codeActionsOnSave``
runs for ``source.fixAll`` or ``source.fixAll.rewardkit``."""
