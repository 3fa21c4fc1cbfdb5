"""Quick fixes (each applied and re-checked), hover and completion over the real protocol."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_engine_view import expected_shapes, published_shapes
from lsp_harness import (
    apply_lsp_edits,
    change_document,
    edits_of,
    initialize,
    open_document,
    push_capabilities,
    wait_for_version,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from rewardkit.runtime.define.fields import PREDEFINED_FIELDS

MODULES = {
    "misspelled_fields": """from rewardkit import reward


@reward(name="qa")
def qa_reward(final_respone: str, answr: str) -> float:
    return 1.0
""",
    "dict_without_reward_key": """from rewardkit import reward


@reward
def scored(final_response: str) -> dict:
    score = 0.5 if final_response else 0.0
    return {"score": score, "length": len(final_response)}
""",
    "dict_without_any_number": """from rewardkit import reward


@reward
def labelled(final_response: str) -> dict:
    return {"label": "done", "size": "long"}
""",
    "missing_await": """from rewardkit import Context, reward


@reward
async def uses_env(final_response: str, context: Context) -> float:
    env = context.acquire_resource("env")
    return 1.0 if env else 0.0
""",
}


async def _actions(
    client: LanguageClient, uri: str, diagnostic: types.Diagnostic
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [
        a
        for a in result or []
        if isinstance(a, types.CodeAction)
        and [(d.code, d.range) for d in a.diagnostics or []]
        == [(diagnostic.code, diagnostic.range)]
    ]


@pytest.mark.parametrize("name", sorted(MODULES))
async def test_every_quick_fix_applies_and_rechecks_clean(
    client: LanguageClient, project: Path, name: str
):
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    path = project / f"{name}.py"
    text = MODULES[name]
    uri = open_document(client, path, text)
    diagnostics = await wait_for_version(client, uri, 1)
    assert diagnostics, f"{name} should have diagnostics"

    version = 1
    applied = 0
    for diagnostic in diagnostics:
        actions = await _actions(client, uri, diagnostic)
        suppressions = [
            a
            for a in actions
            if any("# rewardkit: ignore[" in e.new_text for e in edits_of(a, uri))
        ]
        assert len(suppressions) == 1, [a.title for a in actions]
        for action in actions:
            assert action.kind == types.CodeActionKind.QuickFix
            fixed = apply_lsp_edits(text, edits_of(action, uri))
            version += 1
            change_document(client, uri, version, fixed)
            after = await wait_for_version(client, uri, version)
            assert published_shapes(after) == expected_shapes(fixed, path)
            same_place = [
                d
                for d in after
                if d.code == diagnostic.code and d.range.start.line == diagnostic.range.start.line
            ]
            assert same_place == [], f"{action.title!r} left {diagnostic.code}:\n{fixed}"
            applied += 1
            version += 1
            change_document(client, uri, version, text)  # back to the original for the next action
            await wait_for_version(client, uri, version)
    assert (
        applied >= 2 * len(diagnostics) - 1
    )  # a real fix for (almost) every one, plus suppression


async def test_rename_fix_is_preferred_and_uses_the_suggestion(
    client: LanguageClient, project: Path
):
    await initialize(client, project)
    text = MODULES["misspelled_fields"]
    uri = open_document(client, project / "qa.py", text)
    diagnostics = {str(d.code): d for d in await wait_for_version(client, uri, 1)}
    actions = await _actions(client, uri, diagnostics["RK101"])
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1
    assert "answer" in preferred[0].title
    assert "def qa_reward(final_respone: str, answer: str)" in apply_lsp_edits(
        text, edits_of(preferred[0], uri)
    )


async def test_placeholder_fix_selects_the_placeholder(client: LanguageClient, project: Path):
    await initialize(client, project)
    text = MODULES["dict_without_any_number"]
    uri = open_document(client, project / "labelled.py", text)
    (diagnostic,) = await wait_for_version(client, uri, 1)
    (fix,) = [a for a in await _actions(client, uri, diagnostic) if "reward" in a.title]
    assert fix.command is not None
    fixed = apply_lsp_edits(text, edits_of(fix, uri))

    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=fix.command.command, arguments=fix.command.arguments)
    )
    (shown,) = client.shown_documents
    assert shown.uri == uri
    assert shown.selection is not None
    selected = fixed.splitlines()[shown.selection.start.line][
        shown.selection.start.character : shown.selection.end.character
    ]
    assert selected == "0.0"
    assert '"reward": 0.0' in fixed


async def test_hover_tells_where_a_parameter_comes_from(client: LanguageClient, tmp_path: Path):
    (tmp_path / "train.jsonl").write_text('{"question": "2+2?", "answer": "4"}\n', encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["question"]\ntask_schema = "train.jsonl"\n',
        encoding="utf-8",
    )
    text = """from rewardkit import reward


@reward
def qa(final_response: str, answer: str, question: str, unused: int = 3) -> float:
    return float(final_response == answer)
"""
    await initialize(client, tmp_path)
    uri = open_document(client, tmp_path / "qa.py", text)
    await wait_for_version(client, uri, 1)
    line = 4

    async def hover_text(word: str) -> str:
        column = text.splitlines()[line].index(word) + 1
        result = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=column),
            )
        )
        assert result is not None, word
        assert isinstance(result.contents, types.MarkupContent)
        return result.contents.value

    assert PREDEFINED_FIELDS["final_response"] in await hover_text("final_response")
    answer = await hover_text("answer")
    assert "dataset" in answer
    assert "train.jsonl" in answer
    assert '"4"' in answer
    question = await hover_text("question")
    assert "pyproject.toml" in question
    assert "2+2?" in question
    assert "default" in await hover_text("unused")

    nothing = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=5, character=8),
        )
    )
    assert nothing is None


async def test_completion_offers_the_fields_not_yet_declared(client: LanguageClient, project: Path):
    text = """from rewardkit import reward


@reward
def qa(final_response: str, ) -> float:
    return 1.0
"""
    await initialize(client, project)
    uri = open_document(client, project / "qa.py", text)
    await wait_for_version(client, uri, 1)
    column = text.splitlines()[4].index(", )") + 2
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=column),
        )
    )
    assert isinstance(result, types.CompletionList)
    labels = {item.label for item in result.items}
    assert {"answer", "question", "trajectory", "context", "id"} <= labels
    assert "final_response" not in labels

    outside = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=5, character=4),
        )
    )
    assert outside is None or not getattr(outside, "items", outside)


async def test_hover_falls_back_to_the_last_version_that_parsed(
    client: LanguageClient, project: Path
):
    text = MODULES["misspelled_fields"].replace("answr", "answer")
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    uri = open_document(client, project / "qa.py", text)
    await wait_for_version(client, uri, 1)
    change_document(client, uri, 2, text + "\ndef half_typed(:\n")
    assert [d.code for d in await wait_for_version(client, uri, 2)] == ["RK900"]

    column = text.splitlines()[4].index("answer") + 1
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=column),
        )
    )
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert "task field" in result.contents.value


async def _hover_text(client: LanguageClient, uri: str, line: int, column: int) -> str | None:
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=column),
        )
    )
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def test_placeholder_selection_is_in_utf16_units_of_the_fixed_line(
    client: LanguageClient, project: Path
):
    text = 'from rewardkit import reward\n\n\n@reward\ndef tagged(final_response: str) -> dict:\n    tag = "😀"; return {"label": tag}\n'
    await initialize(client, project)
    uri = open_document(client, project / "tagged.py", text)
    (diagnostic,) = await wait_for_version(client, uri, 1)
    (fix,) = [a for a in await _actions(client, uri, diagnostic) if "reward" in a.title]
    assert fix.command is not None
    _, selection = fix.command.arguments
    fixed_line = apply_lsp_edits(text, edits_of(fix, uri)).splitlines()[5]
    units = fixed_line.encode("utf-16-le")
    start, end = selection["start"]["character"], selection["end"]["character"]
    assert units[2 * start : 2 * end].decode("utf-16-le") == "0.0"


async def test_hover_and_completion_work_in_definitions_that_parse_while_another_does_not(
    client: LanguageClient, project: Path
):
    """No earlier version parsed: the engine still has the rewards of the intact definitions."""
    text = """from rewardkit import reward


@reward
def qa(final_response: str, answer: str, ) -> float:
    return float(final_response == answer)


@reward
def typing_now(final_response: str) -> float:
    return max(0.0, len(final_response
"""
    await initialize(client, project, options={"rewardkit": {"taskFields": ["extra_field"]}})
    uri = open_document(client, project / "qa.py", text)
    assert [d.code for d in await wait_for_version(client, uri, 1)] == ["RK900"]
    line = text.splitlines()[4]
    answer = await _hover_text(client, uri, 4, line.index("answer") + 1)
    assert answer is not None
    assert "task field declared in `task_fields`" in answer
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=line.index(", )") + 2),
        )
    )
    assert isinstance(result, types.CompletionList)
    labels = {item.label: item for item in result.items}
    assert {"trajectory", "question", "extra_field"} <= set(labels)
    assert "answer" not in labels
    extra = labels["extra_field"].documentation
    assert isinstance(extra, types.MarkupContent)
    assert extra.value == "task field declared in the editor settings (rewardkit.taskFields)"


async def test_hover_stays_on_when_diagnostics_are_disabled(client: LanguageClient, project: Path):
    text = MODULES["misspelled_fields"]
    await initialize(client, project, options={"rewardkit": {"enable": False}})
    uri = open_document(client, project / "qa.py", text)
    assert await wait_for_version(client, uri, 1) == []
    line = text.splitlines()[4]
    hover = await _hover_text(client, uri, 4, line.index("answr") + 1)
    assert hover is not None
    assert "nothing fills it" in hover


MISSPELLED = """from rewardkit import reward


@reward
def qa(final_respone: str, answr: str) -> float:
    return 1.0
"""


async def _hover_on(client: LanguageClient, uri: str, text: str, word: str) -> types.Hover:
    line = next(i for i, line in enumerate(text.splitlines()) if word in line)
    result = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=text.splitlines()[line].index(word) + 2),
        )
    )
    assert result is not None, word
    return result


async def test_hover_on_a_misspelled_parameter_gives_the_diagnostics_did_you_mean(
    client: LanguageClient, project: Path
):
    await initialize(client, project)
    uri = open_document(client, project / "qa.py", MISSPELLED)
    diagnostics = {str(d.code): d for d in await wait_for_version(client, uri, 1)}
    for word, code, suggestion in (
        ("final_respone", "RK102", "final_response"),
        ("answr", "RK101", "answer"),
    ):
        hover = await _hover_on(client, uri, MISSPELLED, word)
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.Markdown
        text = hover.contents.value
        assert f"did you mean `{suggestion}`?" in text
        assert diagnostics[code].message in text  # the diagnostic's own words
        assert diagnostics[code].data["suggestion"] == suggestion


NAMED = """from rewardkit import BaseReward, reward


@reward
def qa(final_response: str) -> float:
    return 1.0


@reward(name="exact_match")
async def em(response_text: str) -> float:
    return 1.0


class Gsm8k(BaseReward):
    name = "gsm8k"

    def call(self, trajectory_text: str) -> float:
        return 1.0
"""


async def test_hover_names_the_reward_once(client: LanguageClient, project: Path):
    """The header says the reward's name once, and where it is defined only when that differs
    (issue 37.10: it was "reward `qa` (qa)")."""
    await initialize(client, project)
    uri = open_document(client, project / "named.py", NAMED)
    await wait_for_version(client, uri, 1)
    headers = {}
    for word in ("final_response", "response_text", "trajectory_text"):
        hover = await _hover_on(client, uri, NAMED, word)
        assert isinstance(hover.contents, types.MarkupContent)
        headers[word] = hover.contents.value.split("\n\n", 1)[0]
    assert headers == {
        "final_response": "**`final_response`**: parameter of reward `qa`",
        "response_text": "**`response_text`**: parameter of async reward `exact_match` (`em`)",
        "trajectory_text": "**`trajectory_text`**: parameter of reward `gsm8k` (`Gsm8k.call`)",
    }


async def test_a_plaintext_only_client_gets_plain_text(client: LanguageClient, project: Path):
    capabilities = push_capabilities(hover_formats=["plaintext"])
    assert capabilities.text_document is not None
    assert capabilities.text_document.completion is not None
    capabilities.text_document.completion.completion_item = types.ClientCompletionItemOptions(
        documentation_format=[types.MarkupKind.PlainText]
    )
    await initialize(client, project, capabilities=capabilities)
    uri = open_document(client, project / "qa.py", MISSPELLED)
    await wait_for_version(client, uri, 1)
    for word in ("final_respone", "answr"):
        hover = await _hover_on(client, uri, MISSPELLED, word)
        assert isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.kind == types.MarkupKind.PlainText
        assert "**" not in hover.contents.value
        assert "`" not in hover.contents.value
        assert "did you mean" in hover.contents.value

    completions = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=4, character=MISSPELLED.splitlines()[4].index(")")),
        )
    )
    assert isinstance(completions, types.CompletionList)
    documentation = [item.documentation for item in completions.items]
    assert documentation
    for doc in documentation:
        assert isinstance(doc, types.MarkupContent)
        assert doc.kind == types.MarkupKind.PlainText
        assert "`" not in doc.value


async def test_a_client_preferring_plaintext_gets_plain_text(client: LanguageClient, project: Path):
    await initialize(
        client, project, capabilities=push_capabilities(hover_formats=["plaintext", "markdown"])
    )
    uri = open_document(client, project / "qa.py", MISSPELLED)
    await wait_for_version(client, uri, 1)
    hover = await _hover_on(client, uri, MISSPELLED, "answr")
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.PlainText
