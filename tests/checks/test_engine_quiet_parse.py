"""The engine parses the code it checks without printing that code's warnings (issue 26 item
18: the edit storm's `1.0if` made `<unknown>:5: SyntaxWarning: invalid decimal literal` appear in
the test command's output; `rewardkit check` and the server would print them too)."""

from __future__ import annotations

import warnings

import pytest

from rewardkit.checks import CheckConfig, check_source

MODULE = """from rewardkit import reward


@reward
def r(final_response: str) -> float:
    return {expression}
"""


@pytest.mark.parametrize(
    "expression",
    [
        "1.0if final_response else 0.0",  # SyntaxWarning: invalid decimal literal
        '1.0 if final_response == "\\d" else 0.0',  # invalid escape (a SyntaxWarning from 3.12)
    ],
)
def test_checking_code_that_warns_warns_nothing(expression: str) -> None:
    source = MODULE.format(expression=expression)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be an error: RK900, or a raise
        assert check_source(source, "m.py", CheckConfig()) == []
