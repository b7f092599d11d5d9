"""Messages between the grading processes: a 4-byte length, then one JSON object (never pickle).

The grading process reads a worker's messages (pool.py), and a worker reads those of the process that
runs the student's code (runner.py), always with a size limit; `receive` raises Gone when the other end
closed, and Unreadable (one line) for anything that is not one message of at most `limit` bytes.
"""

from __future__ import annotations

import json
import os
import stat
import struct

HEADER = struct.Struct("<I")


class Gone(EOFError):
    """The other end closed its pipe (its process ended) before a whole message came."""


class Unreadable(ValueError):
    """Bytes that are not one message of the expected size."""


def send(fd: int, data: dict) -> None:
    """One message: its length, then its JSON (written whole: a pipe may take a long one in parts)."""
    body = json.dumps(data).encode()
    view = memoryview(HEADER.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


def _exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise Gone("the other process ended")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def receive(fd: int, limit: int) -> dict:
    """The next message on a blocking pipe, as a dict."""
    size = HEADER.unpack(_exactly(fd, HEADER.size))[0]
    if size > limit:
        raise Unreadable(f"a message of {size:,} bytes, more than {limit:,}")
    try:
        data = json.loads(_exactly(fd, size).decode("utf-8"))
    except (ValueError, RecursionError, MemoryError):
        raise Unreadable("bytes that are not a JSON message") from None
    if not isinstance(data, dict):
        raise Unreadable("a message that is not a JSON object")
    return data


def _open_fds() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def close_other_pipes(keep: set[int]) -> None:
    """Close every pipe and socket but those in `keep` (what a fork or a forkserver start may leave open)."""
    for fd in _open_fds():
        if fd in (0, 1, 2) or fd in keep:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            try:
                os.close(fd)
            except OSError:
                pass
