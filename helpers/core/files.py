"""Writing files so they appear whole or not at all, and never deleting what we did not create.

    atomic_write(path, lambda tmp: ...)       # one file: written to a temporary beside it, then os.replace
    write_set({path: data, ...})              # several: every temporary written before the first is moved
    with staged_pair(folder) as staging:      # a model and its manifest line: both or neither, even after kill -9

Temporaries live in the target's own folder because a rename is only atomic within one file system.
On an error we remove our temporary and the folders we created, those only when empty: a file
someone else put there stays. Errors are one line that names the file and the fix.
A pair's staging folder is renamed to ".pair-<pid>-xxxxxxxx.whole" once both files are in it, and
finish_interrupted (run by every manifest read) renames what a kill left there into place.
Standard library only (no torch), so the doctor checks files with sha256 from here without loading torch.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path

__all__ = ["atomic_write", "default_mode", "file_error", "finish_interrupted", "refuse_read_only", "sha256",
           "staged_pair", "write_set"]

WHOLE = ".whole"  # the suffix a pair's staging folder gets once both files are in it
PAIR = re.compile(r"^\.pair-(?P<pid>\d+)-[a-z0-9_]{8}(?P<whole>\.whole)?$")  # staged_pair's folders


def default_mode() -> int:
    """The mode open() gives a new file (0o666 minus the umask); mkstemp would make it owner-only."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def sha256(path: str | Path) -> str:
    """The file's sha256, read in 1 MiB chunks (a 548 MB GPT-2 file never sits in memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def text_sha256(path: str | Path) -> str:
    """The sha256 of a text file with Windows line endings read as "\\n": Git for Windows checks text out with
    them (core.autocrlf), and a browser runs a script the same either way."""
    return hashlib.sha256(Path(path).read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def recorded_sums(path: str | Path) -> dict[str, str]:
    """{file name: sha256} from a file in sha256sum's format ({} when it cannot be read)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    return {parts[1].lstrip("*"): parts[0] for line in lines if len(parts := line.split()) == 2}


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
    `done`: the files already renamed into place when a set of `total` failed part-way. An error this
    function made already (a folder that could not be made, found while writing a file in it) passes as it is."""
    if getattr(err, "explained", False):
        return err
    explained = _explain(err, Path(target), done, total)
    if explained is not err:
        explained.explained = True
    return explained


def _explain(err: BaseException, target: Path, done: list[str] | None, total: int) -> BaseException:
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
    """mkdir -p; returns the folders it made, innermost first, so a failure can remove only those."""
    missing = list(takewhile(lambda path: not path.is_dir(), [folder, *folder.parents]))
    for path in missing:
        if path.exists() or path.is_symlink():  # a file (or a dangling link) where a folder must be
            raise NotADirectoryError(errno.ENOTDIR, f"Cannot write into {folder}: {path} is a file, not a folder; "
                                                    f"choose a folder that is not inside a file.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _remove_if_empty(missing)
        raise file_error(err, missing[-1] if missing else folder) from None  # its parent is the one to fix
    return missing


def _remove_if_empty(made: list[Path]) -> None:
    """Undo _make_folders, innermost first, stopping at the first folder someone put something in."""
    for path in made:
        try:
            path.rmdir()
        except OSError:
            return


def atomic_write(path: str | Path, write: Callable[[str], object], mode: int | None = None) -> None:
    """Call write(tmp_path), then move the finished file onto `path` with os.replace.
    mode: the finished file's mode (default: as open() would make it). An OSError with an errno
    becomes file_error's one line; one without is already a message of ours and passes as it is."""
    path = Path(path)
    refuse_read_only(path)
    made = _make_folders(path.parent)
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
        _remove_if_empty(made)
        if isinstance(err, OSError) and err.errno is not None:  # without one it is already our one line
            raise file_error(err, path) from None
        raise


def _write_temporary(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_set(files: dict[Path, bytes], mode: int | None = None) -> None:
    """Write several files that belong together (a class's grades and its report, a figure's PNG, SVG and
    PDF): each to a temporary beside it first, and only when all are written, each moved into place. So a
    full disk part-way changes nothing; read-only targets are refused before the first byte is written."""
    for target in files:
        refuse_read_only(Path(target))
    made: list[Path] = []
    staged: list[tuple[str, Path]] = []
    target = Path(next(iter(files), "."))  # the file being written, which an error names
    try:
        for target, data in files.items():
            target = Path(target)
            made += _make_folders(target.parent)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:40]}.", suffix=".tmp")
            staged.append((tmp, target))
            _write_temporary(fd, data)
            os.chmod(tmp, default_mode() if mode is None else mode)
    except BaseException as err:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.remove(tmp)  # ours: mkstemp made it
        _remove_if_empty(made)
        if isinstance(err, OSError) and err.errno is not None:
            raise file_error(err, target) from None
        raise
    done: list[str] = []
    for n, (tmp, target) in enumerate(staged):
        try:
            os.replace(tmp, target)  # a rename: no disk space needed
        except OSError as err:
            for left, _ in staged[n:]:
                if os.path.exists(left):
                    os.remove(left)
            raise file_error(err, target, done, len(staged)) from None
        done.append(target.name)


@contextmanager
def staged_pair(folder: str | Path) -> Iterator[Path]:
    """Yield a hidden staging folder in `folder` for a model and its manifest line, which must never be
    seen apart. When the block has written both, the staging folder is renamed to NAME.whole and both
    are renamed into `folder`; if this process dies between those renames, the next finish_interrupted
    (every manifest read) completes them. On an error in the block nothing is published."""
    folder = Path(folder)
    finish_interrupted(folder)
    made = _make_folders(folder)
    staging = None
    try:
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=f".pair-{os.getpid()}-"))
        yield staging
        whole = staging.with_name(staging.name + WHOLE)
        os.replace(staging, whole)
    except BaseException as err:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        _remove_if_empty(made)
        if staging is None and isinstance(err, OSError):
            raise file_error(err, folder / ".staging") from None
        raise
    try:
        _publish(whole, folder)
    except OSError:
        shutil.rmtree(whole, ignore_errors=True)
        raise
    # a Ctrl-C between the two renames leaves NAME.whole for finish_interrupted to complete
    shutil.rmtree(whole, ignore_errors=True)


def _publish(whole: Path, folder: Path) -> None:
    """Rename the files of a whole pair into `folder`, none if one would replace a read-only file.
    A file already gone was published by another process finishing the same pair."""
    names = sorted(name for name in os.listdir(whole) if not name.startswith("."))  # hidden: scratch
    for name in names:
        refuse_read_only(folder / name)  # before anything moves: both files or neither
    done: list[str] = []
    for name in names:
        try:
            os.replace(whole / name, folder / name)
        except OSError as err:
            if not (isinstance(err, FileNotFoundError) and not (whole / name).exists()):
                raise file_error(err, folder / name, done, len(names)) from None
        done.append(name)


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
    """Tidy what a killed staged_pair left in `folder`: a pair marked whole is renamed into place, as it
    was about to be; an unfinished one of a process that is gone is removed. Anything else stays.
    Returns the names tidied; a failure leaves that entry as it was (the next write reports it)."""
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
