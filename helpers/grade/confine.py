"""Taking away what a grading worker may reach, in the forked worker before any student code runs.

Everywhere (Linux, macOS): its own empty working directory, an environment with nothing of the
teacher's (HOME and TMPDIR point at that directory), stdin closed, stdout and stderr thrown away,
and resource limits on address space, CPU time, file size and core dumps.
On Linux, when the kernel lets an unprivileged user namespace be made (libc `unshare`): no network
(a network namespace of its own, where even loopback is down), a mount namespace in which the
folders of the submissions, the output folder and $HOME are covered by an empty tmpfs, then every folder
but the system's (SYSTEM), Python's own files and the project's helpers, notebooks and data, and every
other mount is read-only (the project, its virtualenv, the interpreter's files, /etc), with empty
/tmp, /var/tmp and /dev/shm of its own, and a PID namespace whose processes all die with it. A worker
and its namespace are killed when their parent ends (PR_SET_PDEATHSIG), so a grader killed with -9
leaves no student code running.
`confine` returns the protections that hold, one short phrase each, so the grader can say them.

Two more, made by the grading process around a worker:
- a pids cgroup per worker, where the kernel lets the grader make one (cgroup v1's pids hierarchy, or
  v2 with the pids controller): a limit on its processes and threads that binds root too, which
  RLIMIT_NPROC does not. Elsewhere it is left out, and the protections say so by not naming it.
- `--sandbox bwrap`: the grader's forkserver, and so every worker forked from it, runs inside
  bubblewrap (Debian's `bubblewrap`, the sandbox Flatpak uses): a read-only view of the whole file
  system, its own empty /tmp, /var/tmp and /run, empty folders over the submissions, the output folder
  and $HOME (Python's own files put back, read-only), no network and its own IPC; each worker then
  confines itself as without it. Its PID namespace is left out: the grader stops its workers by the
  process ids the server reports.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 3, 4, 38
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1 << 10, 1 << 11, 1 << 21, 1 << 24
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
              "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}
PR_SET_PDEATHSIG = 1
PROJECT = Path(__file__).resolve().parent.parent.parent
PROJECT_PARTS = [PROJECT / part for part in ("helpers", "notebooks", "data")]  # all a worker reads of the project
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # each worker gets empty ones of its own
# The system's folders a worker reads (shared libraries, /etc, the kernel's files); with Python's own files, the
# project's PROJECT_PARTS and its working folder, all it sees: every other folder (a teacher's other classes and
# grades, wherever they are kept) is hidden under an empty tmpfs
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev")
SCRATCH_BYTES = 64 << 20
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


@dataclass(frozen=True)
class Limits:
    """What one submission may use."""

    exercise_s: float = 10.0  # the check's time limit for the student's function (sandbox.TIME_LIMIT_S)
    memory_bytes: int = 2 << 30  # address space on top of what the worker starts with (the lesson's setup)
    file_bytes: int = 16 << 20  # the largest file it may write (in its own folder)
    processes: int = 256  # more processes than the machine's user had when the worker started
    notebook_s: float = 300.0  # the wall time of one submission, all its exercises together

    @property
    def exercise_wall_s(self) -> float:
        """The wall time the grader gives one exercise before it stops the worker (the check builds, runs, compares)."""
        return 3 * self.exercise_s + 20


# Looked up once, as the module loads (in the forkserver): find_library runs a program, and a process made
# in a worker's new PID namespace would become its first process and, ending, leave it unable to fork.
LIBC_NAME = ctypes.util.find_library("c") if sys.platform.startswith("linux") else None


def libc():
    """The C library (Linux), else None."""
    return ctypes.CDLL(LIBC_NAME, use_errno=True) if LIBC_NAME else None


def _mount(libc, source: str, target: str, kind: str | None, flags: int, data: str | None = None) -> bool:
    args = [s.encode() if s is not None else None for s in (source, target, kind, data)]
    return libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), args[3]) == 0


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _unshare():
    """New user, mount, network and PID namespaces (Linux); libc when made, else None."""
    lib = libc()
    if lib is None or lib.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID) != 0:
        return None
    return lib


def _namespaces(libc, ids: tuple[int, int], workdir: Path, hidden: list[Path], protections: list[str]) -> None:
    """Inside the new namespaces: map our user (ids: read before, the new namespace has none yet), hide the
    folders, make the project read-only."""
    uid, gid = ids
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    protections.append("no network (own network namespace)")
    if not _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE):
        return
    keep = [workdir, *PROJECT_PARTS] + python_files()
    for folder in hidden:  # first: a class kept inside a kept folder (the project's notebooks/) is hidden too
        if folder.is_dir() and _cover(libc, folder, keep):
            but = [str(k.relative_to(folder)) for k in PROJECT_PARTS if _inside(k, folder)]
            protections.append(f"hidden: {folder}" + (f" but its {', '.join(but)} and Python's own files" if but else
                                                      " (Python's own files in it stay readable)"
                                                      if any(_inside(k, folder) for k in keep) else ""))
    # a scratch folder gets an empty one of its own below (_own_scratch), unless the project is in it (cloned into
    # /tmp): then the rest of it is hidden here like any other folder, not left whole (last lesson's grades beside it)
    scratch = [Path(p) for p in SCRATCH if not any(_inside(k, Path(p).resolve()) for k in keep if k != workdir)]
    if _cover(libc, Path("/"), keep + [Path(p) for p in SYSTEM] + scratch):
        protections.append("hidden: every other folder (seen: the system's, Python's own files, the project's "
                           "helpers, notebooks and data)")
    refused = _read_only_everywhere(libc)
    protections.append("read-only: the whole file system" if not refused else
                       f"read-only: the file system but {', '.join(refused[:3])}{' …' if len(refused) > 3 else ''}")
    _own_scratch(libc, workdir, keep, protections)
    if not _writable(workdir):  # not under an own /tmp: its folder gets a tmpfs of its own
        _mount(libc, "tmpfs", str(workdir), "tmpfs", MS_NOSUID | MS_NODEV, f"size={SCRATCH_BYTES},mode=700")
        os.chdir(workdir)


def _read_only_everywhere(libc) -> list[str]:
    """Every mount of the worker's namespace made read-only, as bubblewrap's `--ro-bind / /` does: the project,
    the virtualenv, the interpreter's own files (pyenv under $HOME), /etc. Returns the mount points that refused
    (outside /proc, /sys and /dev). A user namespace may not drop a mount's nosuid, nodev, noexec or atime
    flags, so each is remounted with its own."""
    refused = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        fields = line.split()
        if len(fields) < 6 or "ro" in fields[5].split(","):
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])  # \040 is a space
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | sum(KEPT_FLAGS.get(o, 0) for o in fields[5].split(","))
        if not _mount(libc, "none", point, None, flags) and not point.startswith(("/proc", "/sys", "/dev")) and \
                os.path.exists(point):  # (a mount under a folder hidden since is out of reach already)
            refused.append(point)
    return refused


def _writable(folder: Path) -> bool:
    try:
        with open(folder / ".w", "w"):
            pass
        os.remove(folder / ".w")
        return True
    except OSError:
        return False


def _own_scratch(libc, workdir: Path, keep: list[Path], protections: list[str]) -> None:
    """An empty tmpfs of its own over /tmp, /var/tmp and /dev/shm (nothing it writes there reaches the
    machine's), and its working folder made again inside it, at the same path."""
    for scratch in map(Path, SCRATCH):
        if scratch.is_dir() and not scratch.is_symlink() and \
                not any(_inside(k, scratch.resolve()) for k in keep if k != workdir) and \
                _mount(libc, "tmpfs", str(scratch), "tmpfs", MS_NOSUID | MS_NODEV, f"size={SCRATCH_BYTES},mode=1777"):
            protections.append(f"own empty {scratch}")
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)


def python_files() -> list[Path]:
    """Where this Python's own files are (standard library, site-packages, the interpreter): never hidden,
    even when they live in a hidden folder such as $HOME (pyenv, conda in the home folder)."""
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable),
              os.path.dirname(os.path.realpath(sys.executable))]
    places += [p for name in ("stdlib", "platstdlib", "purelib", "platlib") if (p := sysconfig.get_paths().get(name))]
    # sys.path[0] is the folder the grader was started from (python -m; a worker inherits its parent's sys.path):
    # nothing Python needs, and it may hold the class, its zip or last lesson's grades, so it is not kept (else
    # it, and /tmp around it, stay readable to a submission)
    places += [p for p in sys.path[1:] if p and os.path.isdir(p)]
    shared = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
    places += [shared] * os.path.isfile(shared)  # libpython, which a runner started by exec loads (pyenv's lib/)
    # the project folder is on sys.path when the grader is run from it: of it a worker needs only PROJECT_PARTS
    return [p for p in dict.fromkeys(Path(p).resolve() for p in places) if p != PROJECT]


def _cover(libc, folder: Path, keep: list[Path], depth: int = 0) -> bool:
    """Hide `folder` under an empty tmpfs; when a kept path is inside it, hide each of its entries that holds
    none instead (folders under a tmpfs, files under /dev/null), so the kept paths stay as they are."""
    if not any(_inside(k, folder) for k in keep):
        return _mount(libc, "tmpfs", str(folder), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=700")
    if folder in keep or depth > 12:
        return False
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    hid = False
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir():
            hid = _cover(libc, entry, keep, depth + 1) or hid
        elif entry.is_file() and entry not in keep:
            hid = _mount(libc, "/dev/null", str(entry), None, MS_BIND) or hid
    return hid


def own_processes(proc: Path = Path("/proc")) -> int | None:
    """How many processes this user has now, so the limit leaves room for the runner and the checks' forks
    (RLIMIT_NPROC counts all of the user's processes: a Mac's desktop alone runs hundreds). From /proc, else
    from `ps` (never where /proc is: the worker may have unshared its PID namespace, and a first child that
    ends takes the namespace with it); None when neither answers (then no limit is set)."""
    try:
        return sum(1 for p in proc.iterdir() if p.name.isdigit() and _owner(p) == os.getuid())
    except OSError:  # no /proc here
        pass
    try:
        listed = subprocess.run(["ps", "-A", "-o", "uid="], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    uids = listed.split()
    return uids.count(str(os.getuid())) if uids else None


def _owner(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:  # a process that ended while it was counted
        return None


def _limits(limits: Limits, cpu_s: int, protections: list[str]) -> None:
    mapped, running = _mapped_bytes(), own_processes()
    processes = None if running is None else running + limits.processes
    for name, value, what in ((resource.RLIMIT_AS, mapped + limits.memory_bytes, "memory"),
                              (resource.RLIMIT_CPU, cpu_s, "CPU time"),
                              (resource.RLIMIT_FSIZE, limits.file_bytes, "file size"),
                              (resource.RLIMIT_CORE, 0, "no core dumps"),
                              (resource.RLIMIT_NPROC, processes, "processes")):
        if value is None:
            continue
        try:
            resource.setrlimit(name, (value, value))
            protections.append(f"limit: {what}")
        except (ValueError, OSError):
            pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size limit fails (EFBIG) instead of killing


def _mapped_bytes() -> int:
    """The worker's address space now (Linux /proc; elsewhere a guess from its resident size)."""
    try:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmSize:"))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 * 4


def _plain_process(workdir: Path) -> None:
    """Its own folder, an environment with nothing of the teacher's, no terminal."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.makedirs(workdir, exist_ok=True)  # (under bubblewrap a folder made after the server started is not there)
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update(HOME=str(workdir), TMPDIR=str(workdir), PATH="/usr/bin:/bin", LANG="C.UTF-8",
                      MPLBACKEND="Agg", OMP_NUM_THREADS="1", TQDM_DISABLE="1")


def own_proc() -> bool:
    """In the first process of the worker's PID namespace: a /proc of that namespace over the machine's, so
    the worker and its runner see no process but their own (not the grader's, the server's or another
    worker's, whose pipes /proc/PID/fd would reopen). False where the kernel refuses (some containers)."""
    lib = libc()
    return lib is not None and _mount(lib, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def die_with_parent() -> None:
    """Be killed when the process that started this one ends (Linux): a worker when the forkserver ends, which
    it does when the grader ends, even by kill -9; the first process of the worker's PID namespace when the
    worker does (the namespace's processes then end with it)."""
    lib = libc()
    parent = os.getppid()
    if lib is not None:
        lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent ended before the line above
            os._exit(1)


def give_up_privileges() -> None:
    """In a runner: no capability left, and none regained by exec (no_new_privs): with its worker not dumpable,
    /proc/PID/fd, /proc/PID/mem and ptrace of the worker are refused, root included."""
    lib = libc()
    if lib is None:
        return
    lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    lib.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)())  # _LINUX_CAPABILITY_VERSION_3, all zero


def confine(workdir: Path, hidden: list[Path], limits: Limits, cpu_s: int) -> tuple[list[str], bool]:
    """Take away what the worker may reach; (the protections that hold, whether a PID namespace was made:
    then the caller forks once more, and that child is the namespace's first process)."""
    protections = ["own empty folder", "scrubbed environment", "stdin closed, output thrown away"]
    _plain_process(workdir)
    ids = os.getuid(), os.getgid()
    libc = _unshare()
    if libc is not None:
        try:
            _namespaces(libc, ids, workdir, hidden, protections)
        except OSError:
            pass  # a kernel that refuses one step: the protections list says what holds
        protections.append("own PID namespace (its processes end with it)")
    _limits(limits, cpu_s, protections)
    return protections, libc is not None


# --- a pids cgroup per worker (made, entered and removed by the grading process) ---------------------
def _pids_root() -> Path | None:
    for root in CGROUP_ROOTS:
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


def make_cgroup(name: str, max_tasks: int) -> Path | None:
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
        remove_cgroup(folder)
        return None


def enter_cgroup(folder: Path | None, pid: int) -> None:
    """Move a process (the worker, before it starts anything) into the cgroup; the grader does this, since a
    worker may not write the cgroup files (bubblewrap's read-only /sys)."""
    if folder is not None:
        try:
            (folder / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass


def in_cgroup(folder: str | None, wait_s: float = 2.0) -> bool:
    """In the worker: wait until the grader has moved it into its cgroup; False when it does not come."""
    end = time.monotonic() + wait_s
    while folder is not None and time.monotonic() < end:
        if f"/{Path(folder).name}\n" in _read(Path("/proc/self/cgroup")):
            return True
        time.sleep(0.005)
    return False


def remove_cgroup(folder: Path | None, wait_s: float = 10.0) -> None:
    """Kill what is left in a cgroup, then remove it once the kernel has reaped it. What can be left: a process
    the student's code started in a session of its own (outside the worker's group), or a worker the grader
    was starting when Ctrl-C came; a killed process the size of the lessons' setups may take a second or
    more to end on a busy machine."""
    end = time.monotonic() + wait_s
    while folder is not None:
        for pid in _read(folder / "cgroup.procs").split():  # only our processes are in it
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= end:
                return
            time.sleep(0.05)


def pool_cgroups(pool: str) -> list[Path]:
    """The cgroups made for a pool's workers (named POOL-w-...), also one whose worker never got registered."""
    root = _pids_root()
    return sorted(root.glob(f"{pool}-*")) if root is not None else []


# --- --sandbox bwrap: the forkserver inside bubblewrap -------------------------------------------------
def choose(asked: str) -> str:
    """The sandbox to use for --sandbox auto|bwrap|none; a one-line ValueError when bwrap is asked for and missing."""
    available = shutil.which("bwrap") is not None
    if asked == "bwrap" and not available:
        raise ValueError("--sandbox bwrap: bubblewrap is not installed (Debian/Ubuntu: `apt-get install bubblewrap`); "
                         "or pass --sandbox none to use the grader's own confinement.")
    if asked == "auto":
        return "bwrap" if available and sys.platform.startswith("linux") else "none"
    return asked


def arguments(root: Path, hidden: list[Path]) -> list[str]:
    """bwrap's arguments: read-only everything, empty scratch and hidden folders, Python's files put back."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc"]  # /proc: each worker maps its own user
    for folder in ("/tmp", "/var/tmp", "/run"):
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            args += ["--tmpfs", folder]
    args += [a for folder in hidden if Path(folder).is_dir() for a in ("--tmpfs", str(folder))]
    covered = [Path(f) for f in ("/tmp", "/var/tmp", "/run", *map(str, hidden))]
    back = [p for p in python_files() + PROJECT_PARTS if any(p == c or c in p.parents for c in covered)]
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
