"""Messages between the protocol process and the analysis process: length-prefixed pickles.

Both ends are this package, started by the server itself, so pickle is safe here; nothing read
from the client is unpickled.
"""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any

_LENGTH = struct.Struct("!Q")


def write_message(stream: IO[bytes], message: Any) -> None:
    """Write one message and flush it."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """Read one message; raise ``EOFError`` when the stream ends."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError
    (length,) = _LENGTH.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError
    return pickle.loads(data)
