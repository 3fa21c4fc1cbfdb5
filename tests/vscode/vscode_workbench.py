"""A real VS Code workbench for tests: code-server on loopback, driven in Chromium by playwright.

`CodeServer` installs a `.vsix` into fresh user-data and extension dirs and serves a workspace;
`Workbench` wraps the page with the few gestures the tests need (quick open, the Problems
panel, quick fixes), each waiting on what a person would wait for on screen.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from headless_chromium import CHROMIUM_ARGS
from playwright.sync_api import Page, sync_playwright

USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "chat.commandCenter.enabled": False,
    "chat.disableAIFeatures": True,
    "window.commandCenter": False,
    "editor.minimap.enabled": False,
    "editor.fontSize": 15,
    "workbench.colorTheme": "Default Dark Modern",
    "files.autoSave": "off",
    "editor.cursorBlinking": "solid",
    # The DOM renderer keeps the terminal's text readable by the tests.
    "terminal.integrated.gpuAcceleration": "off",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class CodeServer:
    """code-server with its own user-data, extension and XDG dirs under ``home``."""

    executable: Path
    home: Path
    env_path: str
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    port: int = 0
    user_settings: dict[str, object] = field(default_factory=lambda: dict(USER_SETTINGS))

    @property
    def user_data_dir(self) -> Path:
        return self.home / "user-data"

    @property
    def extensions_dir(self) -> Path:
        return self.home / "extensions"

    def env(self) -> dict[str, str]:
        # A user's editor: no VS Code variables of an outer editor, and no PYTHONPATH/PYTHONHOME
        # (a test run's could make a bare interpreter import rewardkit from the checkout).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VSCODE_", "ELECTRON_")) and k not in ("PYTHONPATH", "PYTHONHOME")
        }
        env.update(
            PATH=self.env_path,
            HOME=str(self.home / "home"),
            XDG_CONFIG_HOME=str(self.home / "config"),
            XDG_DATA_HOME=str(self.home / "data"),
            XDG_CACHE_HOME=str(self.home / "cache"),
        )
        return env

    def _cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.executable), "--user-data-dir", str(self.user_data_dir), "--extensions-dir", str(self.extensions_dir), *args],
            env=self.env(), capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip

    def install_extensions(self, *vsix: Path) -> str:
        """Install each ``.vsix`` offline; return the CLI's output (raises if it failed)."""
        for sub in ("home", "config", "data", "cache"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        settings = self.user_data_dir / "User" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(self.user_settings, indent=2))
        arguments = [argument for path in vsix for argument in ("--install-extension", str(path))]
        done = self._cli(*arguments, "--force")
        output = done.stdout + done.stderr
        if done.returncode != 0:
            raise RuntimeError(
                f"code-server {' '.join(arguments)} exited {done.returncode}:\n{output}"
            )
        return output

    def list_extensions(self) -> list[str]:
        return self._cli("--list-extensions", "--show-versions").stdout.split()

    def start(self, workspace: Path) -> str:
        """Serve ``workspace`` on a free loopback port; return the URL that opens it."""
        self.port = free_port()
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(self.executable), "--bind-addr", f"127.0.0.1:{self.port}", "--auth", "none",
                "--user-data-dir", str(self.user_data_dir), "--extensions-dir", str(self.extensions_dir),
                "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
                "--disable-getting-started-override", str(workspace),
            ],
            env=self.env(), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"code-server exited with {self.process.returncode}:\n{self.log_path.read_text()}"
                )
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/healthz", timeout=2
                ) as answer:
                    if answer.status == 200:
                        return f"http://127.0.0.1:{self.port}/?folder={workspace}"
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(
            f"code-server did not answer on port {self.port} within 60 s:\n{self.log_path.read_text()}"
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)

    def output_log(self, extension: str = "rewardkit.rewardkit") -> str:
        """The text of an extension's log output channel (what "Show Output" shows)."""
        logs = sorted((self.user_data_dir / "logs").glob(f"*/exthost*/{extension}/*.log"))
        return "\n".join(log.read_text(errors="replace") for log in logs)

    def extension_host_logs(self) -> str:
        """The extension host's and the rewardkit output channel's logs, for failure messages."""
        texts = []
        for log in sorted((self.user_data_dir / "logs").rglob("*.log")):
            if (
                "exthost" in log.name
                or "rewardkit" in log.name.lower()
                or "remoteagent" in log.name
            ):
                texts.append(
                    f"--- {log.relative_to(self.user_data_dir)}\n{log.read_text(errors='replace')[-4000:]}"
                )
        return "\n".join(texts)


@contextmanager
def chromium_page(executable: Path, *, width: int = 1280, height: int = 800) -> Iterator[Page]:
    """A page in Debian's headless Chromium (no browser download)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            browser.close()


class Workbench:
    """Gestures on a loaded VS Code workbench page."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def wait_until_loaded(self) -> None:
        self.page.wait_for_selector(".monaco-workbench .part.statusbar", timeout=90_000)
        self.page.wait_for_selector(
            ".explorer-folders-view, .monaco-workbench .part.sidebar", timeout=60_000
        )

    def run_command(self, title: str) -> None:
        """Run a command by its title through the command palette (F1)."""
        self.page.keyboard.press("F1")
        box = self.page.locator(".quick-input-widget input")
        box.wait_for(state="visible")
        box.fill(f">{title}")
        self.page.locator(".quick-input-list .monaco-list-row", has_text=title).first.wait_for()
        self.page.keyboard.press("Enter")

    def open_file(self, name: str) -> None:
        """Open ``name`` through quick open (Ctrl+P), as a person would."""
        self.page.keyboard.press("Control+p")
        box = self.page.locator(".quick-input-widget input")
        box.wait_for(state="visible")
        box.fill(name)
        self.page.locator(".quick-input-list .monaco-list-row", has_text=name).first.wait_for()
        self.page.keyboard.press("Enter")
        self.page.locator(f'.tabs-container .tab[data-resource-name="{name}"]').wait_for()
        self.page.locator(".editor-instance .monaco-editor .view-lines").first.wait_for()

    def status_item(self, text: str):
        return self.page.locator(".part.statusbar .statusbar-item", has_text=text)

    def problems(self) -> list[str]:
        """Open the Problems panel (Ctrl+Shift+M) and return the text of each marker row."""
        panel = self.page.locator(".markers-panel")
        if not panel.is_visible():
            self.page.keyboard.press("Control+Shift+M")
            panel.wait_for(state="visible")
        rows = self.page.locator(".markers-panel .monaco-tl-row")
        return [row.inner_text() for row in rows.all()]

    def settled_screenshot(self, path: Path, attempts: int = 20) -> None:
        """Save a screenshot once two consecutive ones are identical: hovers and toasts fade in,
        and a picture taken mid-animation is blurry. Needs a non-blinking cursor (USER_SETTINGS)."""
        previous = self.page.screenshot()
        for _ in range(attempts):
            self.page.wait_for_timeout(200)
            current = self.page.screenshot()
            if current == previous:
                break
            previous = current
        path.write_bytes(previous)
