"""Writing files so they appear whole or not at all, and never deleting what we did not create.

    atomic_write(path, lambda tmp: ...)          # one file: written to a temporary beside it, then renamed
    with staged_files(folder) as staging:        # several files that appear together or not at all
        (staging / "a.png").write_bytes(...)     # every visible entry is renamed into `folder` at the end

Temporaries live in the target's own folder because a rename is only atomic within one file
system. On any error (KeyboardInterrupt included) we remove only our own temporaries and the
folders we created, and those only when they are empty: a file someone else put there stays.
A writer killed outright (kill -9, a power cut) cannot tidy up, so every temporary carries its
process id (".NAME.<pid>-xxxxxxxx.tmp", ".staging-<pid>-xxxxxxxx") and the next write in that
folder, or `finish_interrupted`, removes those whose process is gone. A set whose every file was
staged (its ".ready" list written) is finished instead: a model and its manifest line appear
both or neither, even when the kill falls between the two renames.
Errors are one line that names the file and the fix. Standard library only (no torch).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write", "default_mode", "file_error", "finish_interrupted", "refuse_read_only", "staged_files"]

READY = ".ready"  # written into a staging folder once every file of its set is there: from then on the set is whole
# What our writers leave behind when killed: a staging folder or a temporary file, each naming its process.
OURS = re.compile(r"^\.(?:staging-(?P<staging>\d+)-[a-z0-9_]{8}|.+\.(?P<tmp>\d+)-[a-z0-9_]{8}\.tmp)$")


def default_mode() -> int:
    """The mode open() gives a new file (0o666 minus the umask); mkstemp would make it owner-only."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def refuse_read_only(target: Path) -> None:
    """A rename replaces even a read-only file, so ask first. Mode bits, not os.access: root passes that."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return  # missing (or unreadable name): nothing to protect, the write itself will say what is wrong
    if stat.S_ISREG(mode) and not mode & stat.S_IWUSR:
        raise PermissionError(f"Cannot replace {target}: the file is read-only; make it writable (chmod u+w) "
                              f"or choose another name.")


def file_error(err: BaseException, target: Path, done: list[str] | None = None, total: int = 1) -> BaseException:
    """One line naming the file and the fix for the OSError behind `err` (matplotlib's writers hide a
    full disk under follow-on errors, so look underneath); any other error is returned as it is.
    `done`: the files already renamed into place when a set of `total` failed part-way."""
    cause = err
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__context__ or cause.__cause__
    if cause is None:
        return err
    target = Path(target)
    code, reason = cause.errno, cause.strerror or str(cause)
    if done:
        written = f"{len(done)} of {total} files were replaced ({', '.join(done)}); the others were left as they were."
    else:
        written = "Nothing was changed there."
    if code == errno.ENAMETOOLONG:
        short = target.name if len(target.name) <= 40 else target.name[:37] + "..."
        return OSError(code, f"The file name {short} ({len(target.name)} characters) is too long for the file "
                             f"system in {target.parent}; choose a shorter name. {written}")
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermissionError(code, f"Cannot write {target}: permission denied ({reason}); make {target.parent} "
                                     f"writable or choose another folder. {written}")
    if code in (errno.ENOSPC, errno.EDQUOT, None):
        fix = "free some disk space or pass folder= another directory"
    else:
        fix = "pass folder= another directory"
    return OSError(code, f"Could not write {target.name} into {target.parent} ({reason}); {fix}. {written}")


def _make_folders(folder: Path) -> list[Path]:
    """mkdir -p that remembers which folders it made (outermost first), so a failure can undo only those."""
    missing = []
    for path in [folder, *folder.parents]:
        if path.is_dir():
            break
        if path.exists() or path.is_symlink():  # a file (or a dangling link) where a folder must be
            raise NotADirectoryError(errno.ENOTDIR, f"Cannot write into {folder}: {path} is a file, not a folder; "
                                                    f"choose a folder that is not inside a file.")
        missing.append(path)
    created = []
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue  # someone else made it meanwhile: theirs, not ours
        except OSError as err:
            _remove_if_empty(created)
            raise file_error(err, path) from None
        created.append(path)
    return created


def _remove_if_empty(created: list[Path]) -> None:
    """Undo _make_folders, innermost first, stopping at the first folder someone put something in."""
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:
            return


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs on this machine. On Windows we cannot ask without ending it
    (os.kill there terminates), so every process counts as alive and nothing is cleaned."""
    if os.name == "nt" or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive, and not ours to judge
    return True


def finish_interrupted(folder: str | Path) -> list[str]:
    """Tidy what a killed writer left in `folder`: a staged set whose .ready list was written is
    published, as it was about to be, unless a file it had already put in place was changed since
    (then the set is dropped); any other staging folder or temporary of ours whose process is gone
    is removed. Entries of running processes and anything not named as ours stay. Returns the names
    tidied; a failure leaves that entry as it was (the next write reports what is wrong)."""
    folder = Path(folder)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    tidied = []
    for name in names:
        found = OURS.match(name)
        if not found or _alive(int(found["staging"] or found["tmp"])):
            continue
        path = folder / name
        try:
            if found["staging"] is None:
                os.remove(path)
            elif path.is_dir() and not path.is_symlink():
                if _still_whole(path, folder):
                    _publish(path, folder)
                shutil.rmtree(path)
        except OSError:
            continue
        tidied.append(name)
    return tidied


def _mark_ready(staging: Path) -> None:
    """Write the .ready list: every entry to publish, with what identifies it once renamed (inode, size, mtime)."""
    entries = {p.name: _identity(p) for p in staging.iterdir() if not p.name.startswith(".")}
    (staging / ".ready.part").write_text(json.dumps(entries))
    os.replace(staging / ".ready.part", staging / READY)


def _identity(path: Path) -> list[int]:
    """What a rename keeps and a restored or rewritten file changes: inode, and a file's size and mtime."""
    info = os.lstat(path)
    return [info.st_ino, 0, 0] if stat.S_ISDIR(info.st_mode) else [info.st_ino, info.st_size, info.st_mtime_ns]


def _still_whole(staging: Path, folder: Path) -> bool:
    """True when a killed writer's set was wholly staged and what it had already renamed is untouched."""
    try:
        entries = json.loads((staging / READY).read_text())
    except (OSError, ValueError):
        return False  # killed before the set was whole: drop it
    for name, identity in entries.items():
        if not (staging / name).exists() and (not (folder / name).exists() or _identity(folder / name) != identity):
            return False
    return True


def atomic_write(path: str | Path, write: Callable[[str], object], mode: int | None = None) -> None:
    """Call write(tmp_path), then move the finished file onto `path` in one rename.
    mode: the finished file's mode (default: as open() would make it)."""
    path = Path(path)
    refuse_read_only(path)
    created = _make_folders(path.parent)
    finish_interrupted(path.parent)
    tmp = None
    try:
        # A short prefix: a long but legal name must not fail only because of the temporary's name.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.{os.getpid()}-", suffix=".tmp")
        os.close(fd)
        write(tmp)
        os.chmod(tmp, default_mode() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException as err:
        if tmp is not None and os.path.exists(tmp):
            os.remove(tmp)  # ours: mkstemp made it
        _remove_if_empty(created)
        if isinstance(err, OSError):
            raise file_error(err, path) from None
        raise


@contextmanager
def staged_files(folder: str | Path) -> Iterator[Path]:
    """Yield a private staging folder inside `folder` (created if needed). When the block succeeds,
    every visible entry in it is renamed into `folder`, replacing an older file or folder of the
    same name; hidden entries (".name") are scratch and never published. On any error nothing is
    published, the staging folder is removed (it is ours alone) and so are the folders made here,
    but only if they are empty. Errors raised inside the block pass through as they are: the
    caller knows which file it was writing (file_error words them). Once the block has finished,
    a Ctrl-C cannot split the set: the renames are completed, then the interrupt goes on."""
    folder = Path(folder)
    created = _make_folders(folder)
    finish_interrupted(folder)
    try:
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=f".staging-{os.getpid()}-"))
    except OSError as err:
        _remove_if_empty(created)
        raise file_error(err, folder / ".staging") from None
    try:
        yield staging
        _mark_ready(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_if_empty(created)
        raise
    try:
        _publish(staging, folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except BaseException:  # stopped between two renames: the set is whole, so finish it first
        _publish(staging, folder)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(staging, ignore_errors=True)  # what is left: scratch and the older copies we replaced


def _publish(staging: Path, folder: Path) -> None:
    """Rename every visible entry of staging into folder, after checking that none would overwrite a read-only file."""
    entries = sorted(p for p in staging.iterdir() if not p.name.startswith("."))
    for entry in entries:
        refuse_read_only(folder / entry.name)  # before anything moves: all files or none
    done: list[str] = []
    for entry in entries:
        target = folder / entry.name
        try:
            if entry.is_dir() and target.is_dir() and not target.is_symlink():
                # A folder cannot be renamed over a full one: the older copy (our earlier output)
                # moves into staging first and goes with it, so no stale frame stays behind.
                os.replace(target, staging / f".older-{entry.name}")
            os.replace(entry, target)
        except OSError as err:
            raise file_error(err, target, done, len(entries)) from None
        done.append(entry.name)
