"""Reading a small file a user names (a token, a metadata file) without trusting what it is.

``Path.read_text`` blocks forever on a FIFO and reads ``/dev/zero`` until the memory is gone:
this opens without blocking, requires a regular file and reads at most ``limit`` bytes.
"""

from __future__ import annotations

import os
import stat

__all__ = ["FileTooLargeError", "NotRegularFileError", "read_regular_file"]


class NotRegularFileError(OSError):
    """The path names a FIFO, a device, a socket or a directory, not a regular file."""


class FileTooLargeError(OSError):
    """The file holds more than the reader's bound."""


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; ``NotRegularFileError``
    or ``FileTooLargeError`` otherwise (their message names no path: the caller says which file) (and the ``OSError`` of a file that cannot be opened)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotRegularFileError("not a regular file (a FIFO, a device or a directory)")
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise FileTooLargeError(f"larger than {limit} bytes")
    return data
