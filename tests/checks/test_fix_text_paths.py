"""Fixes applied as plain text give the very text their libcst transformation gives (issue 36
item 5: a check's fix edits cost no libcst parse where that is exact), and a file's fixes share
one libcst parse of each statement.

Each fix below is applied both ways, through :func:`text_replacements` (the plain-text path,
``None`` when it is not certain) and through :func:`transforms.apply_transform` (libcst), and
the texts compared; where the text path declines, the fix still resolves through libcst. The
cases are the ones where a rename by text could differ from libcst's scope analysis (shadowing
in nested scopes, ``global``/``nonlocal``, ``del``, captures, f-strings, attributes and keywords
of the same name), nodes in parentheses of their own, line endings and non-ASCII text; then the
rules' examples and generated reward modules.
"""

from __future__ import annotations

import sys

import libcst
import pytest
from hypothesis import HealthCheck, given, seed, settings

import rewardkit.checks.transforms as transforms
from rewardkit.checks import RULES, CheckConfig, TaskField, analyze_module, resolve_fix
from rewardkit.checks.fix_source import FixSource
from rewardkit.checks.fixer import resolve_fixes
from rewardkit.checks.fixes import ADD_REWARD_KEY, TRANSFORM_KINDS
from rewardkit.checks.model import Fix
from rewardkit.checks.text_transforms import text_replacements

from .fix_programs import reward_modules

HEAD = "from rewardkit import reward\n\n\n@reward\ndef r(final_response, answr):\n"
CONFIG = CheckConfig(
    task_fields={name: TaskField(name, "pyproject") for name in ("answer", "solution")}
)


def _fixes(source: str, config: CheckConfig = CONFIG) -> list[Fix]:
    analysis = analyze_module(source, "m.py", config)
    return [
        fix
        for diagnostic in analysis.diagnostics
        for fix in diagnostic.fixes
        if fix.transform is not None and fix.applicability != "display"
    ]


def _both_ways(source: str, fix: Fix) -> tuple[str | None, str | None]:
    """(the text path's result or ``None``, libcst's result or ``None`` when it refuses)."""
    assert fix.transform is not None
    file = FixSource(source)
    replacements = text_replacements(file, fix.transform)
    by_text = file.replaced(replacements) if replacements is not None else None
    try:
        by_libcst = transforms.apply_transform(source, fix.transform)[0]
    except transforms.TransformError:
        by_libcst = None
    return by_text, by_libcst


def _same_both_ways(source: str, config: CheckConfig = CONFIG) -> list[bool]:
    """Assert each fix's text path agrees with libcst; which fixes took the text path."""
    taken = []
    for fix in _fixes(source, config):
        by_text, by_libcst = _both_ways(source, fix)
        if by_text is not None:
            assert by_text == by_libcst, f"{fix.title}:\n{source}"
        taken.append(by_text is not None)
    return taken


FSTRING_TEXT = sys.version_info >= (3, 12)

RENAMES = [
    # (body of `r(final_response, answr)`, whether the text path renames it)
    ("    return float(final_response == answr)\n", True),
    ("    return float(answr == final_response and answr != '')\n", True),
    ("    def inner():\n        return answr\n    return float(inner() == final_response)\n", True),
    ("    def inner(answr):\n        return answr\n    return float(inner(answr) == 1)\n", False),
    ("    return float(final_response in [c for c in answr])\n", True),
    ("    return float(any(answr for answr in final_response))\n", False),
    ("    f = lambda: answr\n    return float(f() == final_response)\n", True),
    ("    f = lambda answr: answr\n    return float(f(1) == final_response)\n", False),
    ("    class C:\n        x = answr\n    return float(C.x == final_response)\n", True),
    ("    class C:\n        answr = 1\n    return float(C.answr == final_response)\n", False),
    (
        "    def inner():\n        nonlocal answr\n        answr = 1\n"
        "    inner()\n    return float(answr == final_response)\n",
        False,
    ),
    ("    answr = answr.strip()\n    return float(answr == final_response)\n", False),
    ("    x = answr\n    del answr\n    return float(x == final_response)\n", False),
    (
        "    try:\n        x = int(answr)\n    except ValueError as answr:\n        x = 0\n"
        "    return float(x)\n",
        False,
    ),
    (
        "    match final_response:\n        case [answr]:\n            pass\n"
        "    return float(answr == final_response)\n",
        False,
    ),
    ("    return float(f'{answr}' == final_response)\n", FSTRING_TEXT),
    ("    return float(f'{answr=}' == final_response)\n", FSTRING_TEXT),
    ("    return float(final_response.answr == call(answr=answr))\n", True),
    ("    return float(final_response.answer == call(answer=answr))\n", True),
    (
        "    @decorate(answr)\n    def inner(x=answr, *, y: answr = 1):\n        return x\n"
        "    return float(inner() == final_response)\n",
        True,
    ),
    ("    def inner(answer=1):\n        pass\n    return float(inner() == answr)\n", False),
    ("    class answer:\n        pass\n    return float(answr)\n", False),
    ("    x: 'answr' = 1\n    return float(x == answr)\n", True),
    ("    s = 'é' + answr  # é\n    return float(s == final_response)\n", True),
    ("    import answr\n    return float(answr == final_response)\n", False),
    ("    import answer\n    return float(answr)\n", False),
    ("    def inner():\n        from m import answer\n    return float(answr)\n", False),
    ("    from m import answer as other\n    return float(other == answr)\n", True),
    ("    return float((answr := final_response) == '')\n", False),
    (
        "    async def inner():\n        return [await answr for _ in final_response]\n"
        "    return float(answr == final_response)\n",
        True,
    ),
    ("    global answr\n    return 1.0\n", False),
]


@pytest.mark.parametrize(("body", "by_text"), RENAMES)
def test_a_rename_by_text_is_libcst_s_rename(body: str, by_text: bool) -> None:
    taken = _same_both_ways(HEAD + body)
    assert taken
    assert all(path == by_text for path in taken), taken


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_renames_keep_any_line_ending(newline: str) -> None:
    source = (HEAD + "    x = answr\n    return float(x == answr)\n").replace("\n", newline)
    assert _same_both_ways(source) == [True]


def test_a_rename_in_parameters_that_shadow_outside_the_function_by_text() -> None:
    """Defaults and annotations of the function itself are read outside it: never renamed."""
    source = HEAD.replace("answr):", "answr, y=answr, z: answer = 0):") + "    return answr\n"
    assert _same_both_ways(source) == [True]


AWAITS = [
    # (statement in an async reward, whether the text path inserts the `await`)
    ("    env = context.acquire_resource('a')\n", True),
    ("    env = (context.acquire_resource('a'))\n", False),
    ("    env = print(context.acquire_resource('a'))\n", False),
    ("    x = 1; y = (context.acquire_resource('a'))\n", False),
    ("    context.acquire_resource('a')\n", True),
    ("    x = 1; context.acquire_resource('a')\n", True),
    ("    (\n        context.acquire_resource('a')\n    )\n", False),
    ("    env = context.acquire_resource('a').step()\n", True),
    ("    env = context.acquire_resource(\n        'a'\n    )\n", True),
    ("    x = 1 + context.acquire_resource('a')\n", True),
    ("    x = -context.acquire_resource('a')\n", True),
    ("    if context.acquire_resource('a'):\n        pass\n", True),
    ("    x = f\"{context.acquire_resource('a')}\"\n", True),
    ('    x = f"""  {1}\n  {context.acquire_resource(\'a\')}"""\n', True),
]


@pytest.mark.parametrize(("statement", "by_text"), AWAITS)
def test_an_await_by_text_is_libcst_s_await(statement: str, by_text: bool) -> None:
    source = (
        "from rewardkit import reward, Context\n\n\n@reward\n"
        f"async def r(final_response, context: Context):\n{statement}    return 1.0\n"
    )
    assert _same_both_ways(source) == [by_text]


def _rule_examples() -> list[tuple[str, CheckConfig]]:
    return [
        (example.code, rule.example_config(example))
        for rule in RULES
        if rule.TRANSFORM is not None
        for example in rule.INVALID
    ]


@pytest.mark.parametrize(("code", "config"), _rule_examples())
def test_the_rules_examples_give_libcst_s_text(code: str, config: CheckConfig) -> None:
    _same_both_ways(code, config)


def test_every_fix_but_the_reward_key_goes_by_text_in_the_rules_examples() -> None:
    by_text = {
        fix.transform.kind
        for code, config in _rule_examples()
        for fix in _fixes(code, config)
        if fix.transform is not None
        and text_replacements(FixSource(code), fix.transform) is not None
    }
    assert by_text == set(TRANSFORM_KINDS) - {ADD_REWARD_KEY}


@seed(36)
@settings(
    max_examples=4,
    deadline=None,
    database=None,
    phases=["generate"],
    suppress_health_check=list(HealthCheck),
)
@given(modules=reward_modules(rewards=10, examples=6))
def test_generated_modules_give_libcst_s_text(modules: dict[str, str]) -> None:
    for source in modules.values():
        _same_both_ways(source)


def test_edits_by_text_are_the_diff_s_edits() -> None:
    """The edits of a plain-text fix are computed per line, as the diff gives them; a changed
    line that is also a line elsewhere (the diff could pair it otherwise) takes the diff."""
    copied = HEAD + "    x = normalize(answr)\n    return float(x == final_response)\n"
    copied = copied.replace("@reward", "def g(answer):\n    x = normalize(answer)\n\n\n@reward")
    for source in (HEAD + "    return float(final_response == answr + answr)\n", copied):
        file = FixSource(source)
        [fix] = _fixes(source)
        assert fix.transform is not None
        replacements = text_replacements(file, fix.transform)
        assert replacements is not None
        statement = file.statement(fix.transform.span.line)
        assert statement is not None
        by_lines = file.line_edits(file.replaced(replacements), *statement)
        assert (by_lines is None) == (source is copied)
        resolved = resolve_fix(source, fix)
        assert resolved.edits == file.text_edits(file.replaced(replacements))
        if by_lines is not None:
            assert by_lines == resolved.edits


def test_a_file_s_fixes_parse_each_statement_once_with_libcst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[str] = []
    parse = libcst.parse_module

    def counting(text: str, *args: object, **kwargs: object) -> libcst.Module:
        parsed.append(text)
        return parse(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(transforms.cst, "parse_module", counting)
    renames_only = HEAD.replace("final_response", "final_respone") + "    return float(answr)\n"
    diagnostics = analyze_module(renames_only, "m.py", CONFIG).diagnostics
    assert all(fix.edits for d in resolve_fixes(renames_only, diagnostics) for fix in d.fixes)
    assert parsed == []  # two renames: no libcst parse at all
    keys = (
        HEAD
        + "    if answr:\n        return {'score': 1.0, 'n': 1}\n"
        + "    return {'score': 0.0, 'n': 0}\n"
    )
    diagnostics = analyze_module(keys, "m.py", CONFIG).diagnostics
    resolved = resolve_fixes(keys, diagnostics)
    assert sum(1 for d in resolved for fix in d.fixes if fix.edits) == 3
    assert len(parsed) == 2  # the two returns, each parsed alone; the rename by text
