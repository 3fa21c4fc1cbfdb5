"""The language server reaches the checks engine through ``rewardkit.checks`` alone (issue 36)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rewardkit_lsp

LSP = Path(rewardkit_lsp.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def test_the_server_imports_no_module_of_the_checks_but_its_face() -> None:
    inner = {
        f"{path.name}: {module}"
        for path in sorted(LSP.glob("*.py"))
        for module in _imported_modules(path)
        if module.startswith("rewardkit.checks.")
    }
    assert not inner


def test_loading_the_servers_analysis_never_loads_the_cli_module() -> None:
    code = (
        "import sys\n"
        "import rewardkit_lsp.analysis, rewardkit_lsp.workspace_index\n"
        "from rewardkit_lsp.workspace_index import decode_source, is_excluded_by_config\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('rewardkit.checks.'))\n"
        "assert 'rewardkit.checks.command' not in loaded, loaded\n"
        "assert decode_source(b'\\xef\\xbb\\xbfx = 1\\n') == 'x = 1\\n'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
