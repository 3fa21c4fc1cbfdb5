"""Which fixes keep what a reward means: the safe ones are applied by ``rewardkit check --fix``
and the editor's fix-all, the unsafe ones only on request (``--unsafe-fixes``, or one quick fix
the user picks).

A fix is unsafe when it may change what the reward computes rather than only repair it:

- a rename that makes the reward read another kind of input than the parameter meant: verl's
  ``solution_str`` (the model's response) renamed to open-r1's ``solution`` (the gold column)
  makes the reward compare the gold with itself, and every sample scores 1.0;
- a rename to a name the function already uses (two variables would become one): never
  applied, only shown; a rename of a name the function uses by its text (``locals()``,
  ``eval("answr")``, a call of itself with ``answr=``, ``f"{answr=}"``), which the rename
  cannot reach;
- a value the fix has to guess (a ``reward`` key valued from an entry whose key does not say it
  is the score, or a placeholder ``0.0``), a copy that may differ from the score returned (an
  expression evaluated twice, a name bound by ``:=`` in the dict, a dict changed before its
  ``return``), or a conversion that changes the number
  (``int(x)`` truncates, ``float(x)`` does not);
- a change of the calling convention (``def`` to ``async def``).

This module only classifies, from the names and :mod:`ast` facts the rules already hold; whether
a fix applied to a module still parses and re-checks without a new finding is verified when it
is applied (:mod:`rewardkit.checks.fixer`).
"""

from __future__ import annotations

import ast
import enum
import re

from rewardkit.runtime.define.return_keys import dotted_name

OUTPUT_WORDS = frozenset(
    {
        "response",
        "responses",
        "completion",
        "completions",
        "prediction",
        "predictions",
        "pred",
        "preds",
        "output",
        "outputs",
        "generation",
        "generations",
        "generated",
        "trajectory",
        "trajectories",
        "model",
        "predicted",
    }
)
"""Words that mark the model's output (AgentFly's ``final_response`` and ``trajectory``, TRL's
``completion(s)``, ``prediction``, ``response``, ``output``, ``model_answer``...)."""

REFERENCE_QUALIFIERS = frozenset(
    {
        "gold",
        "golden",
        "ground",
        "truth",
        "gt",
        "reference",
        "references",
        "ref",
        "refs",
        "expected",
        "target",
        "targets",
        "label",
        "labels",
    }
)
"""Words that make any name a gold or reference value (``ground_truth``, ``gold_answer``,
``expected_output``, ``reference_response``), whatever else it says."""

REFERENCE_WORDS = frozenset({"answer", "answers", "solution", "solutions"})
"""Words of the columns datasets give the gold in (GSM8K's ``answer``, open-r1's and TRL's
``solution``), when no word marks the name as the model's output."""

INPUT_WORDS = frozenset(
    {"prompt", "prompts", "question", "questions", "problem", "problems", "query", "input"}
)
"""Words of the task's input (the prompt), which is neither the output nor the gold."""


class Role(enum.Enum):
    """What a reward parameter's name says it receives."""

    OUTPUT = "the model's output"
    REFERENCE = "the gold or reference answer"
    INPUT = "the task's input"
    OTHER = "something else"


def field_role(name: str) -> Role:
    """The kind of input a parameter name marks.

    verl's convention first: a ``*_str`` name is the model's output (``solution_str``,
    ``response_str``) unless it names the prompt or a reference (``prompt_str``,
    ``ground_truth_str``)."""
    words = [word for word in name.lower().strip("_").split("_") if word]
    if any(word in REFERENCE_QUALIFIERS for word in words):
        return Role.REFERENCE
    if len(words) > 1 and words[-1] == "str":
        stem = words[:-1]
        return Role.INPUT if any(word in INPUT_WORDS for word in stem) else Role.OUTPUT
    if any(word in OUTPUT_WORDS for word in words):
        return Role.OUTPUT
    if any(word in REFERENCE_WORDS for word in words):
        return Role.REFERENCE
    if any(word in INPUT_WORDS for word in words):
        return Role.INPUT
    return Role.OTHER


def rename_risk(parameter: str, suggestion: str) -> str | None:
    """Why renaming ``parameter`` to ``suggestion`` may change what the reward means (``None``:
    safe).

    A name that says what it receives (the model's output, the gold, the prompt) keeps that
    role; a name that says nothing (a misspelling such as ``answr``) may take any."""
    before, after = field_role(parameter), field_role(suggestion)
    if before is not Role.OTHER and after is not before:
        return (
            f"`{parameter}` names {before.value} but `{suggestion}` receives {after.value}: "
            "the reward would read another input than it was written for"
        )
    return None


DYNAMIC_CALLS = frozenset(
    {"locals", "vars", "dir", "eval", "exec", "sys._getframe", "inspect.currentframe"}
)
"""Calls that read a function's local names by their text: a renamed parameter breaks them."""


def dynamic_use(function: ast.AST, function_text: str, name: str) -> str | None:
    """How a function uses the parameter ``name`` by its text, which a rename would break or
    change (``None``: it does not): ``locals()``/``vars()``/``eval``/``exec``, the name in a
    string (``locals()["answr"]``), a call of the function itself with ``name=`` or an
    f-string ``{name=}`` (whose output shows the name)."""
    own = getattr(function, "name", None)
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            called = dotted_name(node.func) or ""
            if called in DYNAMIC_CALLS and (called not in ("vars", "dir") or not node.args):
                return (
                    f"the function calls `{called}()`, which finds the parameter by its name: "
                    "renamed, it is no longer found"
                )
            callee = called.rpartition(".")[2]
            if callee == own and any(keyword.arg == name for keyword in node.keywords):
                return f"the function calls itself with `{name}=`: renamed, that call fails"
        elif isinstance(node, (ast.Nonlocal, ast.Global)) and name in node.names:
            keyword = "nonlocal" if isinstance(node, ast.Nonlocal) else "global"
            return f"a nested scope declares `{keyword} {name}`: renamed, it binds nothing"
        elif isinstance(node, ast.Constant) and node.value == name:
            return f"the string {node.value!r} names the parameter: renamed, it names nothing"
    if re.search(r"\{\s*" + re.escape(name) + r"\s*=(?!=)", function_text):
        return f"`{{{name}=}}` in an f-string prints the name: renamed, the text changes"
    return None


BOOLEAN_CALLS = frozenset({"bool", "isinstance", "issubclass", "callable", "hasattr", "any", "all"})
BOOLEAN_METHODS = frozenset(
    {
        "startswith",
        "endswith",
        "isdigit",
        "isdecimal",
        "isnumeric",
        "isalpha",
        "isalnum",
        "isspace",
        "islower",
        "isupper",
        "istitle",
        "isidentifier",
        "issubset",
        "issuperset",
        "isdisjoint",
    }
)


def is_boolean(node: ast.AST) -> bool:
    """Whether an expression certainly evaluates to a ``bool`` (a comparison, ``not``, ``and``/
    ``or`` of such, ``bool(...)``, ``isinstance(...)``, ``s.startswith(...)``...)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.BoolOp):
        return all(is_boolean(value) for value in node.values)
    if isinstance(node, ast.Call):
        called = dotted_name(node.func) or ""
        if called in BOOLEAN_CALLS:
            return True
        return isinstance(node.func, ast.Attribute) and node.func.attr in BOOLEAN_METHODS
    return False


def conversion_risk(function: str, argument: ast.expr) -> str | None:
    """Why replacing ``int(x)``/``bool(x)`` by ``float(x)`` may change the value (``None``:
    ``x`` is a ``bool``, so both give 0 or 1)."""
    if is_boolean(argument):
        return None
    if function == "int":
        return "`int(x)` truncates and `float(x)` does not: a fractional `x` gives another value"
    return "`bool(x)` is 0 or 1 but `float(x)` is `x` itself: a value other than 0 or 1 changes"
