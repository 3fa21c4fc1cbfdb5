"""An edit storm: hypothesis-generated edits sent as fast as possible; the server stays up and ends
with exactly the diagnostics the engine (``rewardkit check``) gives for the final text."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_engine_view import expected_shapes, published_shapes
from lsp_harness import change_document, initialize, open_document, wait_for_version
from lsprotocol import types
from pytest_lsp import LanguageClient

SEED = """from rewardkit import BaseReward, Context, reward


@reward(name="qa")
def qa_reward(final_response: str, answer: str) -> dict:
    score = float(final_response.strip() == answer)
    return {"reward": score, "exact": score == 1.0}


@reward
async def env_reward(final_response: str, context: Context) -> float:
    env = await context.acquire_resource("env")
    return 1.0 if env else 0.0


class LengthReward(BaseReward):
    name = "length"

    def call(self, final_response: str) -> float:
        return min(len(final_response) / 100, 1.0)
"""

SNIPPETS = [
    "(",
    ")",
    ":",
    ",",
    "\n",
    "\r\n",
    "    ",
    "\t",
    "answr",
    "final_respone",
    "trajectory",
    "return ",
    'return "x"',
    "return None",
    "await ",
    "def f(",
    "@reward\n",
    "async ",
    '"🎯"',
    "é",
    "{",
    "}",
    "\x0c",
    "\u2028",
    "#",
    '"""',
    "*args",
    "/, ",
    "= 1",
    "context.acquire_resource('x')",
]

edit = st.tuples(
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=12),
    st.one_of(
        st.sampled_from(SNIPPETS), st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
    ),
)

_counter = itertools.count()


def _apply(text: str, change: tuple[float, int, str]) -> str:
    where, removed, inserted = change
    start = int(where * len(text))
    return text[:start] + inserted + text[start + removed :]


@settings(
    max_examples=75,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(changes=st.lists(edit, min_size=1, max_size=25))
async def test_edit_storm_ends_with_the_engines_diagnostics(
    client: LanguageClient, project: Path, changes: list[tuple[float, int, str]]
):
    if client.capabilities is None:
        await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    path = project / f"storm_{next(_counter)}.py"
    uri = open_document(client, path, SEED)
    text = SEED
    for version, change in enumerate(changes, start=2):
        text = _apply(text, change)
        change_document(client, uri, version, text)

    diagnostics = await wait_for_version(client, uri, len(changes) + 1)
    assert published_shapes(diagnostics) == expected_shapes(text, path)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
