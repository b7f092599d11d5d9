"""Writing files so they appear whole or not at all, and never deleting what we did not create.

    atomic_write(path, lambda tmp: ...)       # one file: written to a temporary beside it, then os.replace
    with staged_files(folder) as staging:     # a set (a figure's formats, a deck): renamed in when all are written
    with staged_pair(folder) as staging:      # a model and its manifest line: both or neither, even after kill -9

Temporaries live in the target's own folder because a rename is only atomic within one file system.
On an error we remove our temporary and the folders we created, those only when empty: a file
someone else put there stays. Errors are one line that names the file and the fix.
Only the model-and-manifest pair survives a kill between its two renames: its staging folder is
renamed to ".pair-<pid>-xxxxxxxx.whole" once both files are in it, and finish_interrupted (run by
every manifest read) renames what is left into place. Standard library only (no torch).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_write", "default_mode", "file_error", "finish_interrupted", "refuse_read_only", "staged_files",
           "staged_pair"]

WHOLE = ".whole"  # the suffix a pair's staging folder gets once both files are in it
PAIR = re.compile(r"^\.pair-(?P<pid>\d+)-[a-z0-9_]{8}(?P<whole>\.whole)?$")  # staged_pair's folders


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


def atomic_write(path: str | Path, write: Callable[[str], object], mode: int | None = None) -> None:
    """Call write(tmp_path), then move the finished file onto `path` with os.replace.
    mode: the finished file's mode (default: as open() would make it)."""
    path = Path(path)
    refuse_read_only(path)
    created = _make_folders(path.parent)
    tmp = None
    try:
        # A short prefix: a long but legal name must not fail only because of the temporary's name.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
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
    published, and the staging folder and the folders made here (if empty) are removed. Errors
    raised inside the block pass through as they are: the caller knows which file it was writing."""
    with _staging(Path(folder), ".staging-") as staging:
        yield staging
    try:
        _publish(staging, Path(folder))
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # what is left: scratch and the older copies we replaced


@contextmanager
def staged_pair(folder: str | Path) -> Iterator[Path]:
    """staged_files for a model and its manifest line, which must never be seen apart: once the block
    has written both, the staging folder is renamed to NAME.whole, and if this process dies between the
    two renames that follow, the next finish_interrupted (every manifest read) completes them."""
    folder = Path(folder)
    finish_interrupted(folder)
    with _staging(folder, f".pair-{os.getpid()}-") as staging:
        yield staging
    whole = staging.with_name(staging.name + WHOLE)
    os.replace(staging, whole)
    try:
        _publish(whole, folder)
    except OSError:
        shutil.rmtree(whole, ignore_errors=True)
        raise
    # a Ctrl-C between the two renames leaves NAME.whole for finish_interrupted to complete
    shutil.rmtree(whole, ignore_errors=True)


@contextmanager
def _staging(folder: Path, prefix: str) -> Iterator[Path]:
    """A fresh hidden folder in `folder`, removed with the folders made for it when the block fails."""
    created = _make_folders(folder)
    try:
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=prefix))
    except OSError as err:
        _remove_if_empty(created)
        raise file_error(err, folder / ".staging") from None
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_if_empty(created)
        raise


def _publish(staging: Path, folder: Path) -> None:
    """Rename every visible entry of staging into folder, after checking that none would overwrite a
    read-only file. An entry already gone was published by another process finishing the same pair."""
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
        except FileNotFoundError:
            if entry.exists():
                raise file_error(FileNotFoundError(errno.ENOENT, "No such file or directory"), target, done,
                                 len(entries)) from None
        except OSError as err:
            raise file_error(err, target, done, len(entries)) from None
        done.append(entry.name)


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs on this machine. On Windows we cannot ask without ending it
    (os.kill there terminates), so every process counts as alive and its staging folder stays."""
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
    """Tidy what a killed staged_pair left in `folder`: a pair whose staging folder was marked whole
    is renamed into place, as it was about to be; an unfinished one of a process that is gone is
    removed. Anything else stays. Returns the names tidied; a failure leaves that entry as it was
    (the next write reports what is wrong)."""
    folder = Path(folder)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    tidied = []
    for name in names:
        found = PAIR.match(name)
        if not found or not (found["whole"] or not _alive(int(found["pid"]))):
            continue
        try:
            if found["whole"]:
                _publish(folder / name, folder)
            shutil.rmtree(folder / name)
        except OSError:
            continue
        tidied.append(name)
    return tidied
