"""Fixes over the real protocol: each quick fix and the ``source.fixAll.rewardkit`` action give
the same bytes as ``rewardkit check --fix``; fix-all applies safe fixes only; an unsafe fix says
so; quick fixes are resolved on request, and libcst is loaded only then."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import (
    apply_lsp_edits,
    edits_of,
    initialize,
    open_document,
    push_capabilities,
    wait_for_version,
)
from lsprotocol import types
from pytest_lsp import LanguageClient
from raw_wire import RawServer, frame

GOLDEN = Path(__file__).parents[1] / "checks" / "fix_golden"
GOLDEN_NAMES = sorted(path.name for path in (GOLDEN / "before").glob("*.py"))
FIX_ALL = "source.fixAll.rewardkit"


def resolving_capabilities(*, disabled: bool = True) -> types.ClientCapabilities:
    """A client that lists code actions without edits and resolves the one applied (as VS Code
    does), and shows disabled actions greyed out."""
    capabilities = push_capabilities()
    assert capabilities.text_document is not None
    code_action = capabilities.text_document.code_action
    assert code_action is not None
    code_action.data_support = True
    code_action.resolve_support = types.ClientCodeActionResolveOptions(properties=["edit"])
    code_action.disabled_support = disabled
    assert code_action.code_action_literal_support is not None
    code_action.code_action_literal_support.code_action_kind.value_set = [
        types.CodeActionKind.QuickFix,
        types.CodeActionKind.SourceFixAll,
    ]
    return capabilities


def cli_fix(text: str, project: Path, name: str, *options: str) -> str:
    """What ``rewardkit check --fix`` makes of ``text`` (read as ``project/name`` from stdin)."""
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "rewardkit",
            "check",
            "--fix",
            *options,
            "-",
            "--stdin-filename",
            name,
        ],
        cwd=project,
        input=text.encode(),
        capture_output=True,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr.decode()
    return completed.stdout.decode()


async def _actions(
    client: LanguageClient, uri: str, line: int, only: list[str] | None = None
) -> list[types.CodeAction]:
    position = types.Position(line=line, character=0)
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=position, end=types.Position(line=line, character=200)),
            context=types.CodeActionContext(diagnostics=[], only=list(only) if only else None),
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]


async def _applied(client: LanguageClient, uri: str, text: str, action: types.CodeAction) -> str:
    if action.edit is None:
        assert action.data is not None, action
        action = await client.code_action_resolve_async(action)
    return apply_lsp_edits(text, edits_of(action, uri))


SINGLE_FIXES = {
    "rename": (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response, answr):  # gold\n"
        "    def inner(answr):\n        return answr\n    return float(inner(final_response) == answr)\n",
        (),
    ),
    "context": (
        "from rewardkit import Context, reward\n\n@reward\n"
        "async def judged(final_response, ctx: Context):\n"
        "    judge = await ctx.acquire_resource('judge')\n    return await judge.score(final_response)\n",
        (),
    ),
    "reward_key": (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
        "    f1 = float(final_response == answer)\n    return {\n        # token F1\n"
        "        'f1': f1,\n        'length': len(final_response),\n    }\n",
        (),
    ),
    "await": (
        "from rewardkit import reward\n\n@reward\nasync def env(final_response, context):\n"
        "    return context.acquire_resource('x').score\n",
        (),
    ),
    "float": (
        "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
        "def exact(final_response, answer):\n    return int(final_response == answer)\n",
        (),
    ),
    "unsafe_rename": (
        "from rewardkit import reward\n\n@reward\ndef acc(solution_str, answer):\n"
        "    return float(solution_str == answer)\n",
        ("--unsafe-fixes",),
    ),
    "placeholder": (
        "from rewardkit import reward\n\n@reward\ndef tag(final_response):\n"
        "    return {'label': final_response[:3]}\n",
        ("--unsafe-fixes",),
    ),
}


@pytest.fixture
def open_r1_project(tmp_path: Path) -> Path:
    shutil.copy(GOLDEN / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize("name", sorted(SINGLE_FIXES))
async def test_each_quick_fix_gives_the_bytes_rewardkit_check_fix_gives(
    client: LanguageClient, open_r1_project: Path, name: str
):
    text, options = SINGLE_FIXES[name]
    await initialize(
        client,
        open_r1_project,
        capabilities=resolving_capabilities(),
        options={"rewardkit": {"debounceMs": 0}},
    )
    uri = open_document(client, open_r1_project / f"{name}.py", text)
    [diagnostic] = await wait_for_version(client, uri, 1)
    actions = await _actions(client, uri, diagnostic.range.start.line)
    [fix] = [
        a
        for a in actions
        if a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Suppress")
    ]
    if name != "placeholder":  # listed without its edit: libcst runs when it is applied
        assert fix.edit is None
    fixed = await _applied(client, uri, text, fix)
    assert fixed != text
    assert fixed == cli_fix(text, open_r1_project, f"{name}.py", *options)
    assert ("unsafe" in fix.title) is bool(options)
    assert bool(fix.is_preferred) is not options


@pytest.mark.parametrize("name", GOLDEN_NAMES)
@pytest.mark.parametrize("resolving", [True, False])
async def test_fix_all_applies_the_safe_fixes_as_rewardkit_check_fix_does(
    client: LanguageClient, open_r1_project: Path, name: str, resolving: bool
):
    capabilities = resolving_capabilities() if resolving else push_capabilities()
    await initialize(client, open_r1_project, capabilities=capabilities)
    text = (GOLDEN / "before" / name).read_text(encoding="utf-8")
    uri = open_document(client, open_r1_project / name, text)
    await wait_for_version(client, uri, 1)
    [action] = await _actions(client, uri, 0, only=["source.fixAll"])
    assert (action.kind, action.title) == (FIX_ALL, "rewardkit: fix all safe fixes")
    assert (action.edit is None) is resolving
    fixed = await _applied(client, uri, text, action)
    assert fixed == (GOLDEN / "fixed" / name).read_text(encoding="utf-8")
    assert fixed == cli_fix(text, open_r1_project, name)
    quick_only = await _actions(client, uri, 0, only=[types.CodeActionKind.QuickFix])
    assert all(a.kind == types.CodeActionKind.QuickFix for a in quick_only)


async def test_fix_all_leaves_unsafe_fixes_and_the_editor_shows_why(
    client: LanguageClient, open_r1_project: Path
):
    await initialize(client, open_r1_project, capabilities=resolving_capabilities())
    text = (GOLDEN / "before" / "verl_gsm8k.py").read_text(encoding="utf-8")
    uri = open_document(client, open_r1_project / "verl_gsm8k.py", text)
    await wait_for_version(client, uri, 1)
    line = next(i for i, t in enumerate(text.splitlines()) if t.startswith("def gsm8k_strict"))
    by_title = {a.title: a for a in await _actions(client, uri, line)}
    unsafe = by_title[
        "Rename `solution_str` to `solution` (unsafe: `solution_str` names the model's output "
        "but `solution` receives the gold or reference answer: the reward would read another "
        "input than it was written for)"
    ]
    assert not unsafe.is_preferred
    assert "def gsm8k_strict(solution, ground_truth," in await _applied(client, uri, text, unsafe)
    display = by_title["Rename `ground_truth` to `answer`"]
    assert display.disabled is not None
    assert "already a name" in display.disabled.reason
    assert display.edit is None
    assert display.data is None
    [fix_all] = await _actions(client, uri, 0, only=[FIX_ALL])
    fixed = await _applied(client, uri, text, fix_all)
    assert "def gsm8k_strict(solution_str, ground_truth," in fixed


async def test_without_disabled_support_a_display_fix_is_not_offered(
    client: LanguageClient, open_r1_project: Path
):
    await initialize(client, open_r1_project, capabilities=resolving_capabilities(disabled=False))
    text = (GOLDEN / "before" / "verl_gsm8k.py").read_text(encoding="utf-8")
    uri = open_document(client, open_r1_project / "verl_gsm8k.py", text)
    await wait_for_version(client, uri, 1)
    line = next(i for i, t in enumerate(text.splitlines()) if t.startswith("def gsm8k_strict"))
    titles = [a.title for a in await _actions(client, uri, line)]
    assert "Rename `ground_truth` to `answer`" not in titles
    assert any(title.startswith("Rename `solution_str`") for title in titles)


# -- libcst stays out of the server until a fix is applied ---------------------------------------

REPORTING_SERVER = [
    sys.executable,
    "-c",
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('LIBCST' if 'libcst' in sys.modules else 'NO-LIBCST', "
    "file=sys.stderr, flush=True))\n"
    "sys.argv = ['rewardkit_lsp']\n"
    "runpy.run_module('rewardkit_lsp', run_name='__main__')\n",
]
RESOLVING = {
    "textDocument": {
        "codeAction": {
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit"]},
            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}},
        },
        "publishDiagnostics": {"versionSupport": True},
    }
}


@pytest.mark.parametrize("resolve", [False, True])
def test_diagnostics_and_listed_fixes_never_import_libcst(open_r1_project: Path, resolve: bool):
    server = RawServer(REPORTING_SERVER)
    try:
        server.initialize(open_r1_project, RESOLVING)
        text = (GOLDEN / "before" / "verl_gsm8k.py").read_text(encoding="utf-8")
        uri = (open_r1_project / "verl_gsm8k.py").as_uri()
        item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        server.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": item},
                }
            )
        )
        published = server.notification("textDocument/publishDiagnostics")
        assert published["params"]["diagnostics"]
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}}
        server.send(
            server.request(
                2,
                "textDocument/codeAction",
                {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}},
            )
        )
        actions = server.answer_to(2)["result"]
        lazy = [a for a in actions if "data" in a]
        assert lazy
        assert all("edit" not in a for a in lazy)
        assert any(a["kind"] == FIX_ALL for a in lazy)
        if resolve:
            server.send(server.request(3, "codeAction/resolve", lazy[0]))
            assert server.answer_to(3)["result"]["edit"]["documentChanges"]
        server.send(server.request(4, "shutdown", None))
        server.answer_to(4)
        server.send(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        report = server.stderr_text().strip().splitlines()[-1]
    finally:
        server.close()
    assert report == ("LIBCST" if resolve else "NO-LIBCST"), json.dumps(server.log)[-2000:]
