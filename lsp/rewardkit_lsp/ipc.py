"""Messages between the protocol process and the analysis process: length-prefixed pickles.

Both ends are this package, started by the server itself, so pickle is safe here; nothing read
from the client is unpickled. :class:`MessageBuffer` parses a stream incrementally (for readers
driven by ``select`` or an event loop); :func:`read_message` reads one from a blocking stream.
"""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any

_LENGTH = struct.Struct("!Q")


def encode_message(message: Any) -> bytes:
    """One message as bytes: its length, then its pickle."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def write_message(stream: IO[bytes], message: Any) -> None:
    """Write one message and flush it."""
    stream.write(encode_message(message))
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """Read one message from a blocking stream; raise ``EOFError`` when the stream ends."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError
    (length,) = _LENGTH.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError
    return pickle.loads(data)


class MessageBuffer:
    """Bytes in, complete messages out."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._buffer
        buffer += data
        messages = []
        start = 0
        while len(buffer) - start >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer, start)
            end = start + _LENGTH.size + length
            if len(buffer) < end:
                break
            messages.append(pickle.loads(memoryview(buffer)[start + _LENGTH.size : end]))
            start = end
        if start:
            del buffer[:start]
        return messages
