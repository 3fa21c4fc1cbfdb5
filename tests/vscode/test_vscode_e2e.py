"""End to end in a real VS Code workbench: code-server with the packaged extension installed,
driven in Debian's headless Chromium.

A person opens a reward module with a misspelled field, sees the error squiggle, reads the
Problems panel, applies the quick fix and sees the error go; another has no rewardkit in the
chosen environment and is told the exact command that fixes it. Screenshots are saved in
`test-artifacts/vscode/`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from vscode_harness import run_install_script, tool_env

if TYPE_CHECKING:
    from vscode_workbench import CodeServer, Workbench

pytestmark = pytest.mark.slow

REWARD_MODULE = '''\
from rewardkit import reward


@reward(name="exact_match")
def exact_match(final_respone: str, answer: str) -> float:
    """1.0 when the model's final answer equals the gold answer."""
    return float(final_respone.strip() == answer.strip())
'''

PYPROJECT = """\
[project]
name = "my-rewards"
version = "0.1.0"

[tool.rewardkit]
task_fields = ["answer"]
"""

RK102_MESSAGE = "`final_respone` looks like a misspelling of the predefined field `final_response`"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project with `[tool.rewardkit]` and a reward module that misspells `final_response`."""
    root = tmp_path / "my-rewards"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "rewards.py").write_text(REWARD_MODULE)
    return root


OpenWorkbench = Callable[..., tuple["CodeServer", "Workbench"]]
"""`(workspace, settings, *other_vsix)` -> the code-server and its workbench page."""


@pytest.fixture
def workbench_factory(
    code_server: Path,
    chromium: Path,
    vsix: Path,
    tmp_path: Path,
    artifacts: Path,
    request: pytest.FixtureRequest,
) -> Iterator[OpenWorkbench]:
    """Open `workspace` in code-server (the packaged extension installed, user `settings`) in
    Chromium; everything is closed after the test, and the logs saved if it failed."""
    from vscode_workbench import CodeServer, Workbench, chromium_page

    servers: list[CodeServer] = []
    benches: list[Workbench] = []
    with ExitStack() as cleanup:

        def open_workbench(
            workspace: Path, settings: dict[str, object], *other_vsix: Path
        ) -> tuple[CodeServer, Workbench]:
            server = CodeServer(
                executable=code_server,
                home=tmp_path / f"code-server-{len(servers)}",
                env_path=tool_env()["PATH"],
                log_path=artifacts / f"{request.node.name}-code-server.log",
            )
            server.user_settings.update(settings)
            servers.append(server)
            server.install_extensions(vsix, *other_vsix)
            assert "rewardkit.rewardkit@0.1.0" in server.list_extensions()
            url = server.start(workspace)
            cleanup.callback(server.stop)
            page = cleanup.enter_context(chromium_page(chromium))
            page.goto(url)
            bench = Workbench(page)
            benches.append(bench)
            bench.wait_until_loaded()
            return server, bench

        yield open_workbench
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            for bench in benches:
                bench.page.screenshot(path=str(artifacts / f"{request.node.name}-failure.png"))
            for server in servers:
                (artifacts / f"{request.node.name}-logs.txt").write_text(
                    server.extension_host_logs()
                )


def editor_text(bench: Workbench) -> str:
    """The visible text of the active editor (Monaco renders spaces as no-break spaces)."""
    page = bench.page
    return (
        page.locator(".editor-instance .monaco-editor .view-lines")
        .first.inner_text()
        .replace("\xa0", " ")
    )


def test_install_script_is_idempotent(code_server: Path) -> None:
    again = run_install_script(timeout=120)
    assert again.returncode == 0, again.stderr
    assert Path(again.stdout.strip().splitlines()[-1]) == code_server
    assert "already installed" in again.stderr


def test_misspelled_field_squiggle_problem_and_quick_fix(
    workspace: Path, workbench_factory: OpenWorkbench, artifacts: Path
) -> None:
    server, bench = workbench_factory(workspace, {"rewardkit.interpreter": [sys.executable]})
    page = bench.page

    bench.open_file("rewards.py")
    squiggle = page.locator(".monaco-editor .squiggly-error")
    squiggle.first.wait_for(timeout=60_000)
    assert bench.status_item("rewardkit").locator(".codicon-check").count() == 1, (
        "status bar shows the server running"
    )

    problems = bench.problems()
    marker_rows = [row for row in problems if "RK102" in row]
    assert len(marker_rows) == 1, f"Problems panel rows: {problems}"
    assert RK102_MESSAGE in marker_rows[0]
    assert "Ln 5" in marker_rows[0], marker_rows[0]

    # Click an empty line (the panel loses focus), then rest the mouse on the squiggle: the
    # hover shows the message a person reads. This is the README's screenshot.
    page.locator(".editor-instance .monaco-editor .view-lines").first.click(
        position={"x": 300, "y": 150}
    )
    box = squiggle.first.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.locator(".monaco-hover-content", has_text="RK102").first.wait_for()
    bench.settled_screenshot(artifacts / "vscode-diagnostic.png")

    # Move the cursor onto the error (F8), close the peek and open the quick fixes (Ctrl+.).
    page.keyboard.press("Escape")
    page.keyboard.press("F8")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+.")
    fix = page.locator(
        ".action-widget .monaco-list-row.focused",
        has_text="Rename `final_respone` to `final_response`",
    )
    fix.first.wait_for()
    bench.settled_screenshot(artifacts / "vscode-quick-fix.png")
    page.keyboard.press("Enter")

    squiggle.first.wait_for(state="detached", timeout=30_000)
    page.locator(".markers-panel", has_text="No problems have been detected").wait_for()
    text = editor_text(bench)
    assert "def exact_match(final_response: str, answer: str)" in text
    assert "return float(final_response.strip() == answer.strip())" in text
    assert "final_respone" not in text
    bench.settled_screenshot(artifacts / "vscode-fixed.png")
    assert server.process is not None
    assert server.process.poll() is None, "code-server is still up"


def test_python_extension_interpreter_install_fix_and_restarts(
    workspace: Path,
    workbench_factory: OpenWorkbench,
    fake_python_extension_vsix: Path,
    artifacts: Path,
    tmp_path: Path,
) -> None:
    """No rewardkit.interpreter: the Python extension's selected interpreter is used; it lacks
    rewardkit, so the exact fix is offered; selecting another interpreter restarts the server;
    the setting, once written, takes precedence and restarts it again."""
    bare = tmp_path / "bare-env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120
    )
    bare_python = bare / "bin" / "python"
    (workspace / ".fake-python.json").write_text(
        json.dumps({"interpreters": [str(bare_python), sys.executable]})
    )
    server, bench = workbench_factory(workspace, {}, fake_python_extension_vsix)
    page = bench.page
    status = bench.status_item("rewardkit")

    toast = page.locator(
        ".notifications-toasts .notification-toast", has_text="rewardkit is not installed"
    )
    toast.first.wait_for(timeout=60_000)
    message = " ".join(toast.first.inner_text().split())
    assert f'{bare_python} -m pip install "rewardkit[lsp]"' in message
    assert toast.first.locator(".monaco-button", has_text="Install rewardkit[lsp]").count() == 1
    assert status.locator(".codicon-error").count() == 1
    assert f"Interpreter: {bare_python} (selected in the Python extension)" in server.output_log()
    bench.settled_screenshot(artifacts / "vscode-install-notification.png")

    # "Install rewardkit[lsp]" runs the exact command in a terminal; this bare environment has
    # no pip, so the terminal stays open showing why.
    toast.first.locator(".monaco-button", has_text="Install rewardkit[lsp]").click()
    terminal = page.locator(".terminal-wrapper .xterm-rows").first
    terminal.wait_for(timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.xterm-rows')].some(e => e.textContent.replace(/\\s/g, '').includes('Nomodulenamedpip'))",
        timeout=30_000,
    )
    # Rows wrap anywhere in the long path: compare without whitespace.
    terminal_text = "".join(terminal.inner_text().split())
    assert f'{bare_python}-mpipinstall"rewardkit[lsp]"' in terminal_text, terminal_text
    assert "Nomodulenamedpip" in terminal_text, terminal_text
    assert page.locator(".part.panel", has_text="rewardkit: install").count() >= 1
    bench.settled_screenshot(artifacts / "vscode-install-terminal.png")

    # Select the environment that has rewardkit in the Python extension: the server restarts.
    bench.run_command("Fake Python: Select Next Interpreter")
    status.locator(".codicon-check").wait_for(timeout=60_000)
    assert (
        f"Interpreter: {sys.executable} (selected in the Python extension)" in server.output_log()
    )

    # The rewardkit.interpreter setting wins over the Python extension, and restarts the server.
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text(
        json.dumps({"rewardkit.interpreter": [str(bare_python)]})
    )
    status.locator(".codicon-error").wait_for(timeout=60_000)
    assert (
        f"Interpreter: {bare_python} (from the rewardkit.interpreter setting)"
        in server.output_log()
    )


FIX_ALL_MODULE = '''\
from rewardkit import reward


@reward(name="gsm8k")
def gsm8k(solution_str: str, final_respone: str, answer: str) -> dict:
    # verl's response parameter next to a gold column named `solution`
    correct = float(final_respone == answer)
    return {
        "score": correct,
        "length": len(solution_str),
    }
'''


def test_fix_all_on_save_applies_the_safe_fixes_as_the_cli_does(
    tmp_path: Path, workbench_factory: OpenWorkbench, artifacts: Path
) -> None:
    """`editor.codeActionsOnSave` runs `source.fixAll.rewardkit` on Ctrl+S: the misspelled field
    is renamed and the `reward` key added; verl's `solution_str` is not renamed to the gold
    column `solution` (an unsafe fix); the saved file is what `rewardkit check --fix` writes."""
    workspace = tmp_path / "fix-all"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer", "solution"]\n'
    )
    module = workspace / "rewards.py"
    module.write_text(FIX_ALL_MODULE)
    settings = {
        "rewardkit.interpreter": [sys.executable],
        "[python]": {"editor.codeActionsOnSave": {"source.fixAll.rewardkit": "explicit"}},
    }
    _, bench = workbench_factory(workspace, settings)
    page = bench.page
    bench.open_file("rewards.py")
    page.locator(".monaco-editor .squiggly-error").first.wait_for(timeout=60_000)

    # A change (a blank line at the end), then an explicit save.
    page.locator(".editor-instance .monaco-editor .view-lines").first.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+s")
    edited = FIX_ALL_MODULE + "\n"
    expected = subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", "--fix", "-", "--stdin-filename", "rewards.py"],
        cwd=workspace, input=edited, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    assert "def gsm8k(solution_str: str, final_response: str, answer: str)" in expected
    assert "correct = float(final_response == answer)" in expected
    assert '"score": correct,\n        "reward": correct,' in expected  # a name: safe to copy
    page.wait_for_function(
        "() => !document.querySelector('.tabs-container .tab.dirty')", timeout=60_000
    )
    deadline = time.monotonic() + 60
    while module.read_text() != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    assert module.read_text() == expected
    assert "solution_str" in editor_text(bench)
    bench.settled_screenshot(artifacts / "vscode-fix-all-on-save.png")
