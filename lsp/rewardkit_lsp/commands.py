"""Commands the server offers to the client (``workspace/executeCommand``)."""

SELECT_RANGE_COMMAND = "rewardkit.selectRange"
"""Run after a fix that inserts a placeholder: the client selects it for editing."""
