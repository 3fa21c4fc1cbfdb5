"""Turning what a framework hands a reward function into rewardkit's predefined fields.

Frameworks pass text (verl's ``solution_str``, OpenRLHF's query), plain completions or chat
messages (TRL); a reward wants ``final_response`` (the last assistant text) and
``trajectory`` (the messages, oldest first). Pure functions, no framework imports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

COMMON_STOP_STRINGS: Final[tuple[str, ...]] = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<|end|>",
    "<｜end▁of▁sentence｜>",
    "</s>",
)
"""End-of-turn markers that OpenRLHF leaves in the query (it decodes with
``skip_special_tokens=False``): Qwen/ChatML, Llama 3, Gemma, Phi, DeepSeek, Llama 2/Mistral."""


class AdapterInputError(ValueError):
    """A framework handed the adapter something it cannot map to fields (names the argument)."""


def message_text(content: Any) -> str:
    """The text of a chat message's ``content``: a string, ``None`` (a tool-call-only message)
    or a list of content parts (``{"type": "text", "text": ...}``, as multimodal chats use)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text":
                texts.append(str(part.get("text", "")))
        return "".join(texts)
    return str(content)


def last_assistant_text(messages: Sequence[Mapping[str, Any]], *, where: str) -> str:
    """The text of the last ``assistant`` message (TRL's conversational completion may hold tool
    calls and tool results before the final answer). No assistant message yields ``""``."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise AdapterInputError(
            f"{where}: expected a list of chat messages, got {type(messages).__name__}"
        )
    for message in reversed(messages):
        if not isinstance(message, Mapping):
            raise AdapterInputError(
                f"{where}: expected chat messages (dicts with 'role' and 'content'), got {message!r}"
            )
        if message.get("role") == "assistant":
            return message_text(message.get("content"))
    return ""


def as_messages(value: Any, role: str) -> list[dict[str, Any]]:
    """Chat messages from a conversational value (copied) or one message from plain text."""
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    return [dict(message) for message in value]


def strip_stop_strings(text: str, stop_strings: Sequence[str]) -> str:
    """``text`` without trailing end-of-turn markers and the whitespace around them."""
    stripped = text.rstrip()
    changed = True
    while changed and stop_strings:
        changed = False
        for marker in stop_strings:
            if marker and stripped.endswith(marker):
                stripped = stripped[: -len(marker)].rstrip()
                changed = True
    return stripped


def response_from_query(query: str, prompt: str, *, where: str) -> str:
    """The response part of OpenRLHF's query (prompt followed by response).

    The query is re-decoded from tokens, so the prompt usually starts it but a tokenizer may
    add a BOS text in front: the response is what follows the prompt's last occurrence.
    """
    if not isinstance(query, str) or not isinstance(prompt, str):
        raise AdapterInputError(
            f"{where}: expected strings, got query {type(query).__name__} and prompt {type(prompt).__name__}"
        )
    if query.startswith(prompt):
        return query[len(prompt) :]
    position = query.rfind(prompt) if prompt else -1
    if position < 0:
        raise AdapterInputError(
            f"{where}: the query does not contain its prompt, so the response cannot be split off "
            f"(prompt starts {prompt[:40]!r}, query starts {query[:40]!r})"
        )
    return query[position + len(prompt) :]


def decode_label(label: Any) -> dict[str, Any] | None:
    """The fields an OpenRLHF label holds when it holds several: a mapping, or a JSON object in a
    string. ``None`` when the label is a single value (it then becomes one field)."""
    if isinstance(label, Mapping):
        return dict(label)
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            decoded = json.loads(label)
        except json.JSONDecodeError:
            return None
        if isinstance(decoded, dict):
            return decoded
    return None


def prompt_text(prompt: Any) -> str:
    """The ``prompt`` field from a framework's prompt: a text prompt as is, a chat prompt's last
    ``user`` message (the question; the system prompt and earlier turns stay in ``trajectory``)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        for message in reversed(prompt):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return message_text(message.get("content"))
        return ""
    raise AdapterInputError(f"a prompt must be text or chat messages, got {type(prompt).__name__}")


CHAT_TURN_FORMATS: Final[tuple[tuple[str, str, str], ...]] = (
    ("<|im_start|>", "\n", "<|im_end|>"),  # ChatML (Qwen)
    ("<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>"),  # Llama 3
)
"""(turn start, end of the role name, turn end) of the chat templates whose rendered text
``chat_turns`` splits back into messages."""

BEGIN_OF_TEXT: Final[frozenset[str]] = frozenset(
    {"<|begin_of_text|>", "<s>", "<bos>", "<|endoftext|>"}
)
"""Begin-of-text markers a rendered prompt may start with (not a message)."""


def chat_turns(text: str, first_role: str = "assistant") -> list[dict[str, Any]]:
    """The messages in a rendered multi-turn text (OpenRLHF's agent responses: the model's turns
    with the environment's turns rendered between them by the chat template).

    Text before the first turn marker is a message of ``first_role`` (the model's first turn,
    which the prompt's generation prompt opened); each marked turn is a message of its role. A
    text without markers of a known template (ChatML, Llama 3) is one ``first_role`` message.
    """
    for start, role_end, end in CHAT_TURN_FORMATS:
        if start not in text:
            continue
        head, *turns = text.split(start)
        messages: list[dict[str, Any]] = []
        head = strip_stop_strings(head, (end,)).strip()
        if head and head not in BEGIN_OF_TEXT:
            messages.append({"role": first_role, "content": head})
        for turn in turns:
            role, separator, content = turn.partition(role_end)
            if not separator:
                role, _, content = turn.partition("\n")
            content = content.split(end, 1)[0].strip("\n")
            if role.strip() or content:
                messages.append({"role": role.strip() or first_role, "content": content})
        return messages
    return [{"role": first_role, "content": text}]
