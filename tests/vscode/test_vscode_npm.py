"""`npm ci && npm run build && npm test` in vscode-extension/: lint, type check and unit tests pass."""

from __future__ import annotations

import re
import subprocess

from vscode_harness import EXTENSION_DIR, run


def test_npm_ci_build_and_test(npm: str, npm_ci: subprocess.CompletedProcess[str]) -> None:
    build = run([npm, "run", "build"], cwd=EXTENSION_DIR, timeout=300)
    bundle = EXTENSION_DIR / "dist" / "extension.js"
    assert bundle.is_file(), f"`npm run build` did not write {bundle}:\n{build.stdout}"

    tested = run([npm, "test"], cwd=EXTENSION_DIR, timeout=600)
    output = tested.stdout + tested.stderr
    # npm test chains lint (eslint), type check (tsc) and node's test runner.
    for step in ("eslint src test", "tsc -p ./ --noEmit", "node --test"):
        assert step in output, f"`npm test` did not run `{step}`:\n{output[-3000:]}"
    counts = {
        key: int(value)
        for key, value in re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", output, re.M)
    }
    assert counts.get("fail") == 0, output[-3000:]
    assert counts.get("cancelled") == 0, output[-3000:]
    # REWARDKIT_TEST_PYTHON points at this interpreter, so the real-process tests run, none skipped.
    assert counts.get("skipped") == 0, output[-3000:]
    assert counts.get("pass", 0) >= 40, f"too few unit tests ran: {counts}"
