"""The add-``reward``-key fix of RK201: the closest numeric value, else a placeholder to select;
safe only when the key it takes the value from says it is the score."""

from __future__ import annotations

import pytest

from rewardkit.checks import ModuleAnalyzer, apply_edits, check_source, resolve_fix

HEADER = (
    "import math\nimport numpy as np\nfrom rewardkit import reward\n\n@reward\n"
    "def qa(final_response, answer):\n"
)


def _fix(body: str):
    source = HEADER + body
    [diagnostic] = [d for d in check_source(source) if d.code == "RK201"]
    [fix] = diagnostic.fixes
    return source, fix


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # The key says it is the score, whatever its value's type.
        ('    f1 = helper(final_response)\n    return {"score": f1}\n', "f1"),
        # Numeric values, wherever they are in the dict.
        (
            '    return {"label": final_response.strip(), "n": len(final_response)}\n',
            "len(final_response)",
        ),
        ('    ok = final_response == answer\n    return {"label": "x", "ok": ok}\n', "ok"),
        ('    s = 0.0\n    s += 1\n    return {"label": "x", "s": s}\n', "s"),
        ('    return {"label": "x", "v": math.exp(1)}\n', "math.exp(1)"),
        ('    return {"label": "x", "v": np.mean([1])}\n', "np.mean([1])"),
        ('    return {"label": "x", "v": 1 if answer else 0}\n', "1 if answer else 0"),
        ('    return {"label": "x", "v": 2 * len(answer)}\n', "2 * len(answer)"),
        (
            '    return {"label": "x", "v": float(answer == final_response)}\n',
            "float(answer == final_response)",
        ),
        ("    return dict(label='x', n=-1)\n", "-1"),
        # A numeric value under a score-like key beats an earlier numeric one.
        ('    return {"n": len(answer), "accuracy": 0.5}\n', "0.5"),
    ],
)
def test_the_closest_numeric_value_is_used(body: str, expected: str) -> None:
    source, fix = _fix(body)
    assert fix.title == f"Add a `reward` key with `{expected}`"
    resolved = resolve_fix(source, fix)
    assert resolved.selection is None
    fixed = apply_edits(source, resolved.edits)
    entry = f"reward={expected}" if "dict(" in body else f'"reward": {expected}'
    assert entry in fixed
    assert [d.code for d in check_source(fixed)] == []


@pytest.mark.parametrize(
    "body",
    [
        '    return {"label": final_response.strip()}\n',  # a string method: not a number
        '    s = "a"\n    s += "b"\n    return {"label": "x", "s": s}\n',  # a string built up
        '    return {"label": "x", "v": "a" + answer}\n',
        '    a, b = split(final_response)\n    return {"label": a, "other": b}\n',  # unknown
        '    return {"done": True, "label": None}\n',  # constants are not scores
        "    r = {}\n    r['x'] = len(answer)\n    return r\n",  # the literal is empty
        "    return dict(label='x')\n",
        "    return {}\n",
    ],
)
def test_otherwise_a_placeholder_is_inserted_and_selected(body: str) -> None:
    source, fix = _fix(body)
    assert fix.title == "Add a `reward` key (placeholder 0.0)"
    assert not fix.safe  # every sample would score 0.0: never applied by --fix or fix-all
    resolved = resolve_fix(source, fix)
    fixed = apply_edits(source, resolved.edits)
    selection = resolved.selection
    assert selection is not None
    assert selection.line == selection.end_line
    line = fixed.splitlines()[selection.line - 1]
    assert line[selection.column : selection.end_column] == "0.0"
    assert line[: selection.column].rstrip().endswith(('"reward":', "reward=", "'reward':"))
    assert [d.code for d in check_source(fixed)] == []


def test_the_selection_moves_with_the_definition() -> None:
    """A cached definition placed further down carries its selection along."""
    source = HEADER + '    return {"label": final_response.strip()}\n'
    analyzer = ModuleAnalyzer()
    [before] = analyzer.analyze(source).diagnostics
    moved_source = "\n\n\n" + source
    [after] = analyzer.analyze(moved_source).diagnostics
    assert (
        analyzer.last_reparsed == 1
    )  # only the import chunk changed; the reward came from the cache
    fix, moved = resolve_fix(source, before.fixes[0]), resolve_fix(moved_source, after.fixes[0])
    assert fix.selection is not None
    assert moved.selection is not None
    assert moved.selection.line == fix.selection.line + 3
    line = apply_edits(moved_source, moved.edits).splitlines()[moved.selection.line - 1]
    assert line[moved.selection.column : moved.selection.end_column] == "0.0"


@pytest.mark.parametrize(
    ("body", "safe"),
    [
        ('    f1 = helper(final_response)\n    return {"score": f1}\n', True),
        ('    return {"n": len(answer), "accuracy": 0.5}\n', True),
        ('    ok = final_response == answer\n    return {"label": "x", "ok": ok}\n', False),
        ('    return {"label": "x", "n": len(final_response)}\n', False),
        ("    return dict(label='x', n=-1)\n", False),
        # two entries could each be the score: which one is a guess
        ('    f1 = helper(final_response)\n    return {"acc": judge(f1), "f1": 0.5}\n', False),
        ("    return dict(score=0.5, accuracy=1.0)\n", False),
    ],
)
def test_a_value_is_safe_only_from_a_key_that_names_the_score(body: str, safe: bool) -> None:
    _, fix = _fix(body)
    assert fix.safe is safe
    assert (fix.unsafe_reason is None) is safe
