"""What the grading processes hand each other, as data (never pickle): messages, each a 4-byte length
then one JSON object, and in them values (numbers, strings, lists, tuples, dicts and tensors).

The grading process reads a worker's messages (pool.py), and a worker reads those of the process that
runs the student's code (runner.py), always with a size limit: `receive` raises Gone when the other end
closed, and Unreadable (one line) for anything that is not one message of at most `limit` bytes.

`encode` turns a value into JSON-ready data with a tag per container; `decode` reads such data back and
raises Unreadable, with one line, on anything else (an unknown tag, a tensor whose bytes do not fit its
shape, nesting deeper than MAX_DEPTH, more than MAX_ITEMS values). A value of another kind (an object, a
function) is encoded as {"opaque": its type's name}, which decodes to an Opaque that no check accepts.
"""

from __future__ import annotations

import base64
import decimal
import fractions
import json
import math
import os
import stat
import struct

import numpy as np
import torch

HEADER = struct.Struct("<I")
MAX_DEPTH = 20
MAX_ITEMS = 2_000_000  # numbers and values in one decoded value, all containers together
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint8, torch.bool)}


class Unreadable(ValueError):
    """Bytes that are not one message of the expected size, or data that is not a value written by `encode`
    (or too large, too deep)."""


class Opaque:
    """Stands for a value that cannot travel as data (an object, a function): no check reads it as an answer."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind} (not plain data)>"


def encode(value, depth: int = 0):
    """`value` as JSON-ready data; containers and tensors tagged, anything else {"opaque": type name}."""
    if depth > MAX_DEPTH:
        raise Unreadable(f"a value nested more than {MAX_DEPTH} deep")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value if not isinstance(value, float) or math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic):
        return encode(value.item(), depth)
    if isinstance(value, (fractions.Fraction, decimal.Decimal)):  # a number all the same (4/5 for a prediction)
        return encode(float(value), depth)
    if isinstance(value, np.ndarray):
        # a C-ordered copy that keeps a 0-dim array 0-dim (np.ascontiguousarray makes np.array(0.78) shape (1,))
        return {"ndarray": encode(torch.from_numpy(np.array(value, order="C", copy=True)), depth + 1)} \
            if value.dtype.kind in "biuf" else {"opaque": "numpy array of " + str(value.dtype)}
    if isinstance(value, torch.Tensor):
        return _tensor(value)
    if isinstance(value, (list, tuple)):
        return {"tuple" if isinstance(value, tuple) else "list": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    return {"opaque": type(value).__name__[:60]}


def _tensor(t: torch.Tensor) -> dict:
    kind = str(t.dtype).removeprefix("torch.")
    if kind not in DTYPES:
        return {"opaque": f"tensor of {kind}"}
    t = t.detach().cpu().contiguous()
    raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
    return {"tensor": kind, "shape": list(t.shape), "data": base64.b64encode(raw).decode("ascii")}


def decode(data, limit: int = MAX_ITEMS):
    """The value `encode` wrote, of at most `limit` numbers and values; Unreadable (one line) for anything else."""
    return _decode(data, [0, limit], 0)


def _decode(data, count: list, depth: int):
    count[0] += 1
    if count[0] > count[1] or depth > MAX_DEPTH:
        raise Unreadable("a value too large or nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not isinstance(data, dict) or len(data) != (3 if "tensor" in data else 1):
        raise Unreadable(f"data of an unexpected kind ({type(data).__name__})")
    tag, body = next(iter(data.items()))
    if tag in ("list", "tuple") and isinstance(body, list):
        items = [_decode(v, count, depth + 1) for v in body]
        return items if tag == "list" else tuple(items)
    if tag == "dict" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        pairs = [(_decode(k, count, depth + 1), _decode(v, count, depth + 1)) for k, v in body]
        if not all(isinstance(k, (str, int, float, bool, tuple)) or k is None for k, _ in pairs):
            raise Unreadable("a dict key that is not a plain value")
        return dict(pairs)
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "ndarray":
        inner = _decode(body, count, depth + 1)
        if not isinstance(inner, torch.Tensor):
            raise Unreadable("an array that is not a tensor's numbers")
        return inner.numpy()
    if tag == "opaque" and isinstance(body, str):
        return Opaque(body[:60])
    if tag == "tensor":
        return _read_tensor(data, count)
    raise Unreadable(f"an unknown tag ({str(tag)[:20]})")


def _read_tensor(data: dict, count: list) -> torch.Tensor:
    kind, shape, text = data.get("tensor"), data.get("shape"), data.get("data")
    if kind not in DTYPES or not isinstance(shape, list) or not all(isinstance(s, int) and 0 <= s for s in shape) \
            or not isinstance(text, str) or len(shape) > 16:
        raise Unreadable("a tensor without a known dtype, a shape or its bytes")
    dtype, numel = DTYPES[kind], math.prod(shape)
    count[0] += numel
    if count[0] > count[1]:
        raise Unreadable("a tensor of more numbers than an answer may hold")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:
        raise Unreadable("a tensor whose bytes are not base64") from None
    stored = torch.int16 if dtype == torch.bfloat16 else dtype
    if len(raw) != numel * stored.itemsize:
        raise Unreadable(f"a tensor of {len(raw)} bytes, which does not fit its shape {shape}")
    flat = torch.frombuffer(bytearray(raw), dtype=stored) if raw else torch.empty(0, dtype=stored)
    flat = flat.view(torch.bfloat16) if dtype == torch.bfloat16 else flat
    return flat.reshape(shape)

class Gone(EOFError):
    """The other end closed its pipe (its process ended) before a whole message came."""


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
        data = parse(_exactly(fd, size))
    except (ValueError, RecursionError, MemoryError):
        raise Unreadable("bytes that are not a JSON message") from None
    if not isinstance(data, dict):
        raise Unreadable("a message that is not a JSON object")
    return data


def parse(body: bytes):
    """A message's body as data (ValueError, RecursionError or MemoryError when it is not JSON)."""
    return whole_characters(json.loads(body.decode("utf-8")))


def whole_characters(value):
    """`value` with each lone surrogate ("\\ud800" is valid JSON, and a cell may hold one) as U+FFFD: such a
    string cannot be written as UTF-8, so one student's cell would stop the class when results are written."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {whole_characters(k): whole_characters(v) for k, v in value.items()}
    return value


def close_other_pipes(keep: set[int]) -> None:
    """Close every pipe and socket but those in `keep` (what a fork or a forkserver start may leave open)."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 256))
    for fd in fds:
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
