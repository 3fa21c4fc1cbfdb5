"""LSP base-protocol framing that survives bad frames: ``Content-Length`` headers, then JSON bodies.

pygls' own reader trusts every frame: ``Content-Length: 100000000000`` makes it allocate until a
``MemoryError``, and a frame whose length counts characters instead of bytes, LF-only line ends or
a lower-case header leave it waiting for bytes that never come. :class:`FrameParser` is a pure,
incremental parser (bytes in, messages and problems out) that

- accepts header names in any case, ``\\n`` or ``\\r\\n`` line ends and extra headers;
- refuses frames larger than ``max_frame`` bytes without buffering them;
- treats bytes before a header as garbage and resynchronises at the next ``Content-Length``;
- recovers a message whose length was counted in characters (the rest of its body follows the
  declared length) or declared too long (the next header is inside the declared length).

A JSON body never holds a raw line break inside a string, so a header found in the stream is a
real header, never part of a message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest body accepted (64 MiB: a document at the default ``maxFileSize`` is at most ~6 MB of JSON)."""
MAX_GARBAGE_BYTES = 64 * 1024
"""Garbage without any header kept at most this long (its tail may hold the start of one)."""

_HEADER_LINE = rb"[A-Za-z][A-Za-z0-9_-]{0,64}[ \t]{0,16}:[^\r\n]{0,512}\r?\n"
_HEADER = re.compile(
    rb"(?:" + _HEADER_LINE + rb")*?"
    rb"content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?\n"
    rb"(?:" + _HEADER_LINE + rb")*"
    rb"\r?\n",
    re.IGNORECASE,
)
_LENGTH_NAMES = (b"Content-Length", b"content-length")
"""Spellings found with ``bytes.find`` (C speed over a large body); any other case is found by
:data:`_LENGTH_MENTION`, only when a header line is all there is to search."""
_LENGTH_MENTION = re.compile(rb"content-length", re.IGNORECASE)
_LENGTH_LINE = re.compile(rb"content-length[ \t]*:[ \t]*\d{1,20}[ \t]*\r?\n", re.IGNORECASE)
_HEADER_LINES = re.compile(rb"\s*(?:" + _HEADER_LINE + rb")*")
"""What may lie between a message and the ``Content-Length`` line of the next frame."""
_DECODER = json.JSONDecoder()
_HEADER_LINE_ALONE = re.compile(_HEADER_LINE)
_HEADER_WINDOW = 1024
"""A header block ends within this many bytes of its ``Content-Length``."""


def _block_start(buffer: bytearray, at: int) -> int:
    """Where the header block holding the ``Content-Length`` at ``at`` begins (other headers first)."""
    begin = at
    for _ in range(8):
        if begin == 0 or buffer[begin - 1] != 0x0A:
            break
        previous = buffer.rfind(b"\n", 0, begin - 1) + 1
        if begin - previous > 256 or not _HEADER_LINE_ALONE.fullmatch(buffer, previous, begin):
            break
        begin = previous
    return begin


class _LengthNames:
    """Successive places where ``Content-Length`` (any case) begins, from a start offset.

    The usual spellings are found with ``bytes.find`` (C speed over a large body); other cases
    are searched for in the first 4 KiB only (where a header follows garbage or a short body).
    """

    def __init__(self, buffer: bytearray, start: int) -> None:
        self.buffer = buffer
        self.window_end = start + 4096
        self.next = [buffer.find(name, start) for name in _LENGTH_NAMES]
        self.next.append(self._other_case(start))

    def _other_case(self, start: int) -> int:
        mention = _LENGTH_MENTION.search(self.buffer, start, self.window_end)
        return mention.start() if mention is not None else -1

    def first(self) -> int:
        found = [at for at in self.next if at >= 0]
        return min(found) if found else -1

    def skip(self, at: int) -> None:
        """Look past ``at`` (it was not a header)."""
        for index, position in enumerate(self.next):
            if position == at:
                self.next[index] = (
                    self.buffer.find(_LENGTH_NAMES[index], at + 1)
                    if index < len(_LENGTH_NAMES)
                    else self._other_case(at + 1)
                )


def find_header(buffer: bytearray, start: int = 0) -> tuple[re.Match[bytes] | None, int | None]:
    """The first complete header block from ``start``, or where an incomplete one may be arriving.

    Returns ``(match, None)``, ``(None, position)`` while a header starting at ``position`` is
    still incomplete, or ``(None, None)``. Only a literal ``Content-Length`` is searched for, then
    the header is matched at that place: garbage costs linear time.
    """
    names = _LengthNames(buffer, start)
    while True:
        at = names.first()
        if at < 0:
            return None, None
        if _LENGTH_LINE.match(buffer, at) is None and len(buffer) - at > 64:
            names.skip(at)  # not a header line (text about headers, say)
            continue
        begin = _block_start(buffer, at)
        match = _HEADER.match(buffer, begin)
        if match is not None:
            return match, None
        window = at + _HEADER_WINDOW
        ended = buffer.find(b"\n\n", at, window) >= 0 or buffer.find(b"\r\n\r\n", at, window) >= 0
        if not ended and len(buffer) < window:
            return None, begin
        names.skip(at)


@dataclass(frozen=True)
class FrameProblem:
    """Something wrong in the byte stream: said in the server's log, answered when it can be."""

    message: str
    parse_error: bool = False
    """True when a whole frame was unusable JSON: JSON-RPC answers it with -32700 and id null."""


def _decode_json(body: bytes) -> tuple[Any, int] | None:
    """The JSON value at the start of ``body`` and the byte offset where it ends, if it parses."""
    try:
        text = body.decode("utf-8")
        value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    rest = len(text) - end
    if not text[end:].strip(" \t\r\n"):  # only JSON whitespace after it: no bytes to count
        return value, len(body) - rest
    return value, len(text[:end].encode("utf-8"))


class FrameParser:
    """Turns chunks of the byte stream into parsed JSON messages (and problems), in order."""

    def __init__(self, max_frame: int = MAX_FRAME_BYTES) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._expected: int | None = None
        """Declared body length once a header was read, until the body is complete."""
        self._broken: bytes | None = None
        """A body that did not parse: the bytes after it may complete it (length counted in characters)."""
        self._refused = False
        """A refused frame's body may follow: its bytes are skipped without another parse error."""
        self._searched = 0
        """How much of the buffer was already searched for a header while waiting for a body."""

    def feed(self, data: bytes) -> list[Any | FrameProblem]:
        """Parse ``data`` (any chunk of the stream); return the complete messages and problems."""
        self._buffer += data
        out: list[Any | FrameProblem] = []
        while self._step(out):
            pass
        return out

    def _step(self, out: list[Any | FrameProblem]) -> bool:
        """Make one unit of progress; False when more bytes are needed."""
        buffer = self._buffer
        if self._expected is not None:
            return self._read_body(out)
        if self._broken is not None and self._complete_broken(out):
            return True
        match, arriving = find_header(buffer)
        if match is None:
            limit = arriving if arriving is not None else len(buffer) - 1024
            if self._broken is None and limit > MAX_GARBAGE_BYTES:
                if not self._refused:
                    out.append(FrameProblem(f"skipped {limit} bytes without a header"))
                self._refused = True
                del buffer[:limit]
            return False
        if match.start():
            self._garbage(bytes(buffer[: match.start()]), out)
        length = int(match.group(1))
        del buffer[: match.end()]
        self._refused = False
        if length > self.max_frame:
            out.append(
                FrameProblem(
                    f"a frame of {length} bytes exceeds the limit of {self.max_frame} bytes: "
                    "skipped up to the next header",
                    parse_error=True,
                )
            )
            self._refused = True
            return True
        self._expected = length
        self._searched = 0
        return True

    def _read_body(self, out: list[Any | FrameProblem]) -> bool:
        buffer = self._buffer
        expected = self._expected
        assert expected is not None
        if len(buffer) < expected:
            return self._too_long(out)
        body = bytes(buffer[:expected])
        del buffer[:expected]
        self._expected = None
        parsed = _decode_json(body)
        if parsed is not None and not body[parsed[1] :].strip():
            out.append(parsed[0])
            return True
        if parsed is not None:  # declared too long: a value, then the next frame's bytes
            out.append(parsed[0])
            out.append(
                FrameProblem(f"a frame declared {expected} bytes but its message is {parsed[1]}")
            )
            self._buffer[:0] = body[parsed[1] :]
            return True
        self._broken = body  # maybe the length counted characters: the rest of it follows
        return True

    def _too_long(self, out: list[Any | FrameProblem]) -> bool:
        """Waiting for a body: if another header already arrived inside it, the length was wrong.

        Only bytes not searched before are searched (a large body arrives in many chunks).
        """
        buffer = self._buffer
        header, arriving = find_header(buffer, self._searched)
        if header is None:
            self._searched = arriving if arriving is not None else max(0, len(buffer) - 16)
            return False
        at = header.start()
        parsed = _decode_json(bytes(buffer[:at]))
        self._expected = None
        if parsed is not None and _HEADER_LINES.fullmatch(buffer, parsed[1], at):
            out.append(parsed[0])
            out.append(
                FrameProblem(f"a frame declared more bytes than its message ({parsed[1]} bytes)")
            )
            del buffer[: parsed[1]]
        else:
            out.append(
                FrameProblem("an incomplete frame was cut by the next header", parse_error=True)
            )
            del buffer[:at]
        return True

    def _complete_broken(self, out: list[Any | FrameProblem]) -> bool:
        """Try the broken body plus what followed it up to the next header (or all of it so far)."""
        broken = self._broken
        assert broken is not None
        header, _ = find_header(self._buffer)
        end = header.start() if header is not None else len(self._buffer)
        parsed = _decode_json(broken + bytes(self._buffer[:end]))
        if parsed is not None:
            used = parsed[1] - len(broken)
            if not self._buffer[used:end].strip():
                out.append(parsed[0])
                out.append(
                    FrameProblem(
                        f"a frame declared {len(broken)} bytes but its message is {parsed[1]} "
                        "(a length in characters?): read the whole message"
                    )
                )
                del self._buffer[:end]
                self._broken = None
                return True
        if header is None and len(broken) + end <= self.max_frame:
            return False  # the rest may still come
        self._broken = None
        self._garbage(broken + bytes(self._buffer[:end]), out)
        del self._buffer[:end]
        return True

    def _garbage(self, data: bytes, out: list[Any | FrameProblem]) -> None:
        if self._broken is not None:
            data, self._broken = self._broken + data, None
        if data.strip():
            preview = data[:60].decode("utf-8", "replace")
            out.append(
                FrameProblem(
                    f"skipped {len(data)} bytes that are not a well-formed frame ({preview!r}...)",
                    parse_error=not self._refused and data.lstrip()[:1] in (b"{", b"["),
                )
            )
        self._refused = False


def encode_frame(message: dict[str, Any]) -> bytes:
    """One message as a frame: ``Content-Length`` in bytes, then the JSON body."""
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
