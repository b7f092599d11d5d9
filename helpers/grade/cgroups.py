"""A pids cgroup per worker, where the kernel lets the grader make one (cgroup v1's pids hierarchy, or v2
with the pids controller): a limit on a worker's processes and threads that binds root too, which the
process limit (RLIMIT_NPROC) does not. Elsewhere (no cgroup file system we may write) it is left out,
and the protections say so by not naming it."""

from __future__ import annotations

import os
import time
from pathlib import Path

ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


def _pids_root() -> Path | None:
    for root in ROOTS:
        v1 = (root / "pids.max").exists() or root.name == "pids"
        v2 = "pids" in _read(root / "cgroup.subtree_control").split()
        if (root / "cgroup.procs").exists() and (v1 or v2):
            return root
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def make(name: str, max_tasks: int) -> Path | None:
    """A new cgroup of at most `max_tasks` processes and threads, or None where none can be made."""
    root = _pids_root()
    if root is None:
        return None
    folder = root / name
    try:
        folder.mkdir()
        (folder / "pids.max").write_text(str(max_tasks))
        return folder
    except OSError:
        remove(folder)
        return None


def enter(folder: Path | None, pid: int) -> None:
    """Move a process (the worker, before it starts anything) into the cgroup; the grader does this, since a
    worker may not write the cgroup files (bubblewrap's read-only /sys)."""
    if folder is not None:
        try:
            (folder / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass


def inside(folder: str | None, wait_s: float = 2.0) -> bool:
    """In the worker: wait until the grader has moved it into its cgroup; False when it does not come."""
    end = time.monotonic() + wait_s
    while folder is not None and time.monotonic() < end:
        if f"/{Path(folder).name}\n" in _read(Path("/proc/self/cgroup")):
            return True
        time.sleep(0.005)
    return False


def remove(folder: Path | None, tries: int = 100) -> None:
    """Remove a cgroup once its processes are gone (a killed process leaves it a moment later; a worker and its
    runner, each the size of the lessons' setups, may take a second or more to end on a busy machine)."""
    for _ in range(tries if folder is not None else 0):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
