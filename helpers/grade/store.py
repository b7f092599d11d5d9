"""The results kept as each notebook is graded: one JSON file per notebook in OUT/.grading/, written
atomically (a temporary file, then os.replace), so an interrupted class keeps what was graded and a
rerun grades only what is missing. A notebook is known by where it came from and a hash of its bytes:
a file handed in again with other contents is graded again. `--again` removes them all first."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

FOLDER = ".grading"
VERSION = 1  # results of another layout are graded again


def key(source: str, data: bytes) -> str:
    """The name a notebook's result is kept under."""
    digest = hashlib.sha256(data).hexdigest()
    return hashlib.sha256(f"{VERSION}\0{source}\0{digest}".encode("utf-8", "replace")).hexdigest()[:40]


def folder(out: Path) -> Path:
    """OUT/.grading, made now: a one-line ValueError when OUT cannot hold it (a file, read-only, full)."""
    where = Path(out) / FOLDER
    try:
        where.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=where, prefix=".probe-", delete=True)
        probe.close()
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write there ({err.strerror or type(err).__name__}); "
                         f"pass a folder you can write to.") from None
    return where


def load(where: Path, name: str) -> dict | None:
    """A kept result, or None when there is none (or it cannot be read: then it is graded again)."""
    try:
        data = json.loads((where / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def save(where: Path, name: str, result: dict) -> None:
    """Keep one result: all of it or nothing, whatever stops the process."""
    fd, temporary = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(dict(result, version=VERSION), f, ensure_ascii=False)
        os.replace(temporary, where / f"{name}.json")
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def clear(where: Path) -> None:
    """--again: forget every kept result."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True, exist_ok=True)


def leftovers(where: Path) -> None:
    """Remove temporary files a killed run left."""
    for path in where.glob(".tmp-*"):
        path.unlink(missing_ok=True)
