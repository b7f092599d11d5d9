"""`--sandbox bwrap`: the grader's forkserver, and so every worker forked from it, runs inside bubblewrap
(Debian's `bubblewrap`, the sandbox Flatpak uses) instead of relying on the in-house confinement alone.

bubblewrap gives the server a read-only view of the whole file system, its own empty /tmp, /var/tmp
and /run, empty folders over the submissions, the output folder and $HOME (Python's own files put back,
read-only), no network and its own IPC; each worker then confines itself as without it (confine.py).
The PID namespace is left out: the grader stops its workers by the process ids the server reports.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from .confine import python_files


def available() -> bool:
    return shutil.which("bwrap") is not None


def choose(asked: str) -> str:
    """The sandbox to use for --sandbox auto|bwrap|none; a one-line ValueError when bwrap is asked for and missing."""
    if asked == "bwrap" and not available():
        raise ValueError("--sandbox bwrap: bubblewrap is not installed (Debian/Ubuntu: `apt-get install bubblewrap`); "
                         "or pass --sandbox none to use the grader's own confinement.")
    if asked == "auto":
        return "bwrap" if available() and sys.platform.startswith("linux") else "none"
    return asked


def arguments(root: Path, hidden: list[Path]) -> list[str]:
    """bwrap's arguments: read-only everything, empty scratch and hidden folders, Python's files put back."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc"]  # /proc: each worker maps its own user
    for folder in ("/tmp", "/var/tmp", "/run"):
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            args += ["--tmpfs", folder]
    args += [a for folder in hidden if Path(folder).is_dir() for a in ("--tmpfs", str(folder))]
    covered = [Path(f) for f in ("/tmp", "/var/tmp", "/run", *map(str, hidden))]
    back = [p for p in python_files() if any(p == c or c in p.parents for c in covered)]
    args += [a for p in back for a in ("--ro-bind", str(p), str(p))]
    args += ["--bind", str(root), str(root)]  # the workers' own folders
    return args + ["--unshare-user", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                   "--die-with-parent"]


def launcher(root: Path, hidden: list[Path]) -> str:
    """A script that runs Python inside bubblewrap (multiprocessing starts its server with it)."""
    script = root / "python-in-bwrap"
    command = [shutil.which("bwrap") or "bwrap", *arguments(root, hidden), "--", sys.executable]
    script.write_text("#!/bin/sh\nexec " + " ".join(map(shlex.quote, command)) + ' "$@"\n')
    script.chmod(0o755)
    return str(script)
