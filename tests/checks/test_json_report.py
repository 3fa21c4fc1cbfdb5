"""``--format json`` is written directly (its largest serial cost was ``json``'s encoder walking
thousands of small dicts): the text is exactly what ``json.dumps(indent=2)`` gives of
:func:`diagnostic_to_json`'s dicts, whatever the strings and ``data`` hold."""

from __future__ import annotations

import json
from decimal import Decimal

from rewardkit.checks import CheckConfig, TaskField, analyze_module
from rewardkit.checks.fixer import resolve_fixes
from rewardkit.checks.model import Diagnostic, Fix, Severity, Span, TextEdit
from rewardkit.checks.output import FileResult, diagnostic_to_json, render_json


def _reference(results: list[FileResult]) -> str:
    items = [diagnostic_to_json(r.path, d) for r in results for d in r.diagnostics]
    return json.dumps(items, indent=2, ensure_ascii=False, default=str) + "\n"


def test_odd_strings_and_data_are_written_as_json_dumps_writes_them() -> None:
    edit = TextEdit(1, 0, 2, 3, 'é "quoted" \\ \n\t\x00 \u2028 😀')
    fixes = (
        Fix("Rename `a` to `é`", (edit, edit), selection=Span(1, 2, 1, 5)),
        Fix("no edits", (), applicability="display"),
    )
    data = {
        "reward": "naïve",
        "others": [["a.py", 3], {"nested": [1.5, True, None, {}], "empty": []}],
        "count": 10**20,
        "odd": Decimal("1.5"),  # not JSON: written with str(), as json.dumps' default
        7: "int key",
    }
    diagnostics = (
        Diagnostic("RK101", Severity.ERROR, 'a "message"\n', 1, 0, 1, 5, fixes, data),
        Diagnostic("RK204", Severity.WARNING, "no data", 3, 4, 3, 9),
        Diagnostic("RK902", Severity.INFO, "empty data", 1, 0, 1, 0, (), {}),
    )
    results = [FileResult("dir/é.py", diagnostics), FileResult("empty.py", ())]
    assert render_json(results) == _reference(results)
    assert render_json([]) == _reference([]) == "[]\n"


def test_a_module_s_report_with_resolved_fixes_is_json_dumps_text() -> None:
    source = (
        "from rewardkit import reward\n\n\n@reward\ndef r(final_respone, answr):\n"
        "    if not answr:\n        return\n    return {'score': float(final_respone == answr)}\n"
    )
    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    diagnostics = resolve_fixes(source, analyze_module(source, "r.py", config).diagnostics)
    assert any(fix.edits for d in diagnostics for fix in d.fixes)
    results = [FileResult("r.py", tuple(diagnostics))]
    assert render_json(results) == _reference(results)
