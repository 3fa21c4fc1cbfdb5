"""Reading Python files as the checks do: the files under a directory, their bytes decoded as
Python decodes them, and whether the configuration's ``exclude`` patterns leave one out
(``rewardkit check`` and the language server's workspace scan share all three, so a file the
CLI skips the editor skips too)."""

from __future__ import annotations

import contextlib
import fnmatch
import io
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING

from rewardkit.checks.targets import walk

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig

walk_python_files = walk
"""The Python files under a directory, as ``rewardkit check DIRECTORY`` finds them."""


def is_excluded(path: str, config: CheckConfig) -> bool:
    """Whether the configuration's `exclude` patterns leave ``path`` out (the CLI and the server's workspace scan)."""
    if not config.exclude:
        return False
    root = config.root
    candidates = [Path(path).as_posix()]
    if root is not None:
        with contextlib.suppress(ValueError):
            candidates.append(Path(path).resolve().relative_to(root.resolve()).as_posix())
    for pattern in config.exclude:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(
                candidate, pattern.rstrip("/") + "/*"
            ):
                return True
            if any(fnmatch.fnmatch(part, pattern.rstrip("/")) for part in Path(candidate).parts):
                return True
    return False


def decode_source(data: bytes) -> str:
    """Decode a Python file as Python does (BOM, PEP 263 cookie, default UTF-8).

    Raises ``UnicodeDecodeError`` or ``SyntaxError`` (unknown encoding) with the details.
    """
    return decode_python(data)[0]


def decode_python(data: bytes) -> tuple[str, str]:
    """(text, encoding) of a Python file's bytes; the encoding is ``utf-8-sig`` for a UTF-8 file
    with a BOM (the text is without it), so encoding the text with it gives the file back."""
    head = data[:400].split(b"\n", 2)
    if b"coding" in head[0] or (len(head) > 1 and b"coding" in head[1]):
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    else:  # no PEP 263 cookie in the first two lines: UTF-8, with or without a BOM
        encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    text = data.decode(encoding)
    return (text[1:] if text.startswith("\ufeff") else text), encoding
