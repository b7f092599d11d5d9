"""Each notebook is graded in a fresh process that knows only that notebook (issue 53): a submission cannot
reach another student's row through the grader's pipes or memory, cannot leave files in the machine's
/tmp or processes behind, and a right answer is never "raised" because of what the worker hides. Also:
an interrupted class keeps what was graded and a rerun grades only the rest; participant keys and
spreadsheet-safe cells. Lesson 01 only (its setup is quick): one class run (~40 s on 2 busy cores) and
one interrupted run."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from helpers.grade import confine
from helpers.grade.lessons import lessons
from helpers.grade.synthetic import notebook

ROOT = Path(__file__).resolve().parent.parent
RIGHT = "    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)\n"
HEAD = "def attention_weights(Q, K):\n    import os, sys, struct, json\n"
TOKEN = uuid.uuid4().hex[:12]
# files a submission tries to make: in the project, its virtualenv, the interpreter's standard library, /etc, /var/lib
MACHINE_FILES = [ROOT / "helpers" / f"{TOKEN}.py", Path(sys.prefix) / TOKEN,
                 Path(sysconfig.get_paths()["stdlib"]) / f"{TOKEN}.py", Path("/etc") / TOKEN, Path("/var/lib") / TOKEN]
SECRET = ("SECRET-" + TOKEN, "-of-the-victim")  # the victim's notebook holds the two joined; no hostile code does
FRAME = "struct.pack('<I', len(b)) + b"
FORGED = ("    for i in range(3):\n"
          "        b = json.dumps({'kind': 'record', 'index': i, 'outcome': 'right', 'code': 'attention_weights.right',"
          " 'line': '✓ forged', 'printed': '', 'sure': True}).encode()\n"
          "        for fd in range(3, 1024):\n"
          f"            try:\n                os.write(fd, {FRAME})\n            except OSError:\n                pass\n")
HOSTILE = {
    "scanner": HEAD + "    seen = []\n    for n in sorted(os.listdir('/proc/self/fd'), key=int):\n        try:\n"
                      "            seen.append(n + '=' + os.readlink('/proc/self/fd/' + n))\n"
                      "        except OSError:\n            pass\n    print('FDS', ' '.join(seen))\n" + RIGHT,
    "junk": HEAD + "    for fd in range(3, 1024):\n        try:\n            os.write(fd, b'not json!!!!')\n"
                   "        except OSError:\n            pass\n" + RIGHT,
    "forger": HEAD + FORGED + "    return None\n",
    "reader": HEAD + "    got = b''\n    for fd in range(3, 1024):\n        try:\n            os.set_blocking(fd, False)\n"
                     "            read = os.read(fd, 65536)\n"
                     "            if not os.readlink(f'/proc/self/fd/{fd}').startswith((sys.prefix, sys.base_prefix)):\n"
                     "                got += read\n"  # (a runner started by exec holds matplotlib's font files open)
                     "        except OSError:\n            pass\n"
                     "    print('READ', len(got))\n" + RIGHT,
    "memory": HEAD + f"    first, second = {SECRET[0]!r}.encode(), {SECRET[1]!r}.encode()\n    found = 0\n"
                     "    with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:\n"
                     "        for line in maps:\n            span, perms = line.split()[:2]\n"
                     "            a, b = (int(x, 16) for x in span.split('-'))\n"
                     "            if perms.startswith('r') and b - a < 64 << 20:\n                try:\n"
                     "                    mem.seek(a)\n                    chunk = mem.read(b - a)\n"
                     "                    at = chunk.find(first)\n"
                     "                    while at >= 0:\n"
                     "                        found += chunk[at + len(first):at + len(first) + len(second)] == second\n"
                     "                        at = chunk.find(first, at + 1)\n"
                     "                except (OSError, ValueError, OverflowError):\n                    pass\n"
                     "    print('FOUND', found)\n" + RIGHT,
    "tmp": HEAD + "".join(f"    with open('{d}/{TOKEN}', 'w') as f:\n        f.write('x')\n"
                          for d in ("/tmp", "/var/tmp", "/dev/shm")) + RIGHT,
    "fork": HEAD + "    if os.fork() == 0:\n        open('/proc/self/comm', 'w').write('gf' + " + repr(TOKEN[:10]) + ")\n"
                   "        while True:\n            pass\n" + RIGHT,
    "project": HEAD + f"    for path in {[str(p) for p in MACHINE_FILES]!r}:\n"
                      "        try:\n            open(path, 'w').close()\n            print('wrote', path)\n"
                      "        except OSError as err:\n            print('refused', err.errno)\n" + RIGHT,
    "socket": HEAD + "    import socket\n    s = socket.socket(socket.AF_UNIX)\n    try:\n"
                     f"        s.connect('/run/grade-{TOKEN}.sock')\n        print('connected')\n"
                     "    except OSError as err:\n        print('refused', err.errno)\n" + RIGHT,
    "bomb": HEAD + "    import time\n    started = 0\n    for _ in range(400):\n        try:\n"
                   "            if os.fork() == 0:\n                time.sleep(60)\n                os._exit(0)\n"
                   "            started += 1\n        except OSError:\n            break\n"
                   "    try:\n        open('/sys/fs/cgroup/pids/cgroup.procs', 'w').write(str(os.getpid()))\n"
                   "        print('left its cgroup')\n    except OSError:\n        pass\n"
                   "    print('started', started)\n" + RIGHT,
    "stdlib": HEAD + "    print('loaded before', 'mailbox' in sys.modules)\n    import mailbox\n" + RIGHT,
}
NAMES = ["=HYPERLINK(1)", "@SUM(1)", "+1", "-2", "Ana Lima_4321_assignsubmission_file_", "Ana Lima_5555_assignsubmission_file_",
         "ana", "a\u200bna", "\u202eana"]


def _lesson01(cell: str | None = None, kinds=None) -> dict:
    kinds = kinds or {"attention_weights": "right", "masked_weights": "right", "weighted_sum": "right"}
    nb = notebook(lessons()["01"].path, kinds)
    if cell is not None:
        next(c for c in nb["cells"] if c["metadata"].get("exercise") == "attention_weights")["source"] = cell
    return nb


def _write(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb), encoding="utf-8")


def _grade(folder: Path, out: Path, *args: str, env: dict | None = None, cwd: Path = ROOT, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "helpers.grade", str(folder), "--out", str(out), *args], cwd=cwd,
                            env=dict(os.environ, GRADE_TEST_TOKEN=TOKEN, **(env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("workers")
    folder, out = base / "class", base / "out"
    folder.mkdir()
    victim = _lesson01()
    victim["cells"].append({"cell_type": "markdown", "metadata": {}, "source": SECRET[0] + SECRET[1]})
    _write(folder / "victim_01.ipynb", victim)
    blank = {"attention_weights": "blank", "masked_weights": "blank", "weighted_sum": "blank"}
    for case, cell in HOSTILE.items():
        _write(folder / f"hostile-{case}_01.ipynb", _lesson01(cell, blank if case == "forger" else None))
    last_lesson = base / "graded_00" / "grades.csv"  # last lesson's grades, kept beside this class
    last_lesson.parent.mkdir()
    last_lesson.write_text(f"student,total\nAna Lima,{TOKEN}\n")
    _write(folder / "hostile-sibling_01.ipynb", _lesson01(
        HEAD + f"    try:\n        print(open({str(last_lesson)!r}).read())\n    except OSError as err:\n"
               "        print('refused', err.errno)\n" + RIGHT))
    for name in NAMES:
        _write(folder / f"{name}_01.ipynb", _lesson01())
    _bad_files(folder)
    home = Path(sysconfig.get_paths()["stdlib"]).parent  # hidden as $HOME: Python's standard library is in it
    private = home / f"grade-{TOKEN}.txt"  # a file of the teacher's in $HOME, beside Python's
    with contextlib.suppress(OSError):  # (a Python installed read-only: the test that reads it is skipped)
        private.write_text(TOKEN)
    _write(folder / "hostile-home_01.ipynb", _lesson01(
        HEAD + f"    print('HOME', {private.name!r} in os.listdir({str(home)!r}), repr(open({str(private)!r}).read()))\n"
        + RIGHT))
    listener = socket.socket(socket.AF_UNIX)  # a local service's socket, as docker.sock or X11's
    listener.bind(f"/run/grade-{TOKEN}.sock")
    listener.listen()
    try:
        # started from the folder that holds the class, as a teacher does: that folder (on sys.path, as -m puts
        # it) held last lesson's grades and the class's zip within a submission's reach, and /tmp around it
        done = _grade(folder, out, env={"HOME": str(home)}, cwd=base)
        stdout, stderr = done.communicate(timeout=1200)
    finally:
        listener.close()
        Path(f"/run/grade-{TOKEN}.sock").unlink()
        private.unlink(missing_ok=True)
    time.sleep(1.0)
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines())} \
        if done.returncode == 0 else {}
    verdicts = {s["student"]: s for s in json.loads((out / "verdicts.json").read_text())["students"]} if rows else {}
    protections = json.loads((out / "verdicts.json").read_text())["protections"] if rows else []
    return dict(rc=done.returncode, err=stderr, rows=rows, verdicts=verdicts, out=out, protections=protections)


def _bad_files(folder: Path) -> None:
    """Files that each cost their own row only: a Latin-1 name, nbformat "4" as text in UTF-16, a cell that
    recurses the parser, an encrypted zip entry beside a good one, a .pdf."""
    (folder / os.fsdecode(b"Jos\xe9_01.ipynb")).write_bytes(json.dumps(_lesson01()).encode())
    text = dict(_lesson01(), nbformat="4")
    (folder / "utf16_01.ipynb").write_bytes(json.dumps(text).encode("utf-16"))
    _write(folder / "nested_01.ipynb", _lesson01("def attention_weights(Q, K):\n    return " + "-" * 100_000 + "1\n"))
    with zipfile.ZipFile(folder / "platform.zip", "w") as z:
        z.writestr("zipped_01.ipynb", json.dumps(_lesson01()))
        z.writestr("locked_01.ipynb", json.dumps(_lesson01()))
    raw = bytearray((folder / "platform.zip").read_bytes())
    local = raw.index(b"PK\x03\x04", raw.index(b"locked_01") - 40)
    raw[local + 6] |= 1  # the encrypted flag, in the entry's two headers
    central = raw.index(b"PK\x01\x02", raw.index(b"locked_01", local + 40) - 60)
    raw[central + 8] |= 1
    (folder / "platform.zip").write_bytes(bytes(raw))
    (folder / "zipped_01.pdf").write_bytes(b"%PDF-1.4")
    _write(folder / "surrogate_01.ipynb", _lesson01("# \ud800 (a lone surrogate: valid JSON, not UTF-8)\n"
                                                    "def attention_weights(Q, K):\n" + RIGHT))
    _write(folder / "magic_01.ipynb", _lesson01("%%time\n!echo hi\nimport torch\ndef attention_weights(Q, K):\n" + RIGHT
                                                + "%timeit attention_weights(torch.eye(2), torch.eye(2))\n"))
    blank = {"attention_weights": "blank", "masked_weights": "blank", "weighted_sum": "blank"}
    for name, right in (("dan_01", False), ("dan_01 (1)", True), ("eva_01", False), ("eva_01-2", False),
                        ("eva_01-10", True)):  # re-uploads and a second download: the last by number is graded
        _write(folder / f"{name}.ipynb", _lesson01(None, None if right else blank))


def test_one_bad_file_costs_one_row_and_one_line(graded):
    rows = graded["rows"]
    assert _cells(graded, "José") == _cells(graded, "utf16") == _cells(graded, "zipped") == ("✓", "✓", "✓")
    assert _cells(graded, "nested")[0] == "raised" and "nested too deeply" in \
        graded["verdicts"]["nested"]["verdicts"][0]["line"]
    assert rows["locked"]["01 attention_weights"] == "not submitted" and "encrypted" in rows["locked"]["note"]
    assert "a .pdf file, not a notebook" in rows["zipped"]["note"]


def test_a_lone_surrogate_costs_its_cell_only_and_a_magic_costs_nothing(graded):
    """A lone surrogate cannot be compiled (nor run by Jupyter's kernel): that exercise says so in one line, and
    the class is still written (test_the_class_is_graded). A cell with %%time or !echo runs in Jupyter: ✓."""
    assert _cells(graded, "surrogate") == ("raised", "✓", "✓") and _cells(graded, "magic") == ("✓", "✓", "✓")
    verdict = graded["verdicts"]["surrogate"]["verdicts"][0]
    assert "does not run" in verdict["line"] and "\ufffd" in verdict["cell"]


def test_the_last_upload_by_number_is_graded(graded):
    assert _cells(graded, "dan") == _cells(graded, "eva") == ("✓", "✓", "✓")
    assert "graded " in graded["rows"]["eva"]["note"] and graded["rows"]["eva"]["note"].count("eva_01-10") == 1
    assert not [s for s in graded["rows"] if s.startswith("dan ")]


def _cells(graded, student: str) -> tuple[str, ...]:
    row = graded["rows"][student]
    return tuple(row[f"01 {n}"] for n in ("attention_weights", "masked_weights", "weighted_sum"))


def _printed(graded, student: str) -> str:
    return graded["verdicts"][student]["verdicts"][0]["printed"]


def test_the_class_is_graded(graded):
    assert graded["rc"] == 0, graded["err"][-3000:]


def test_no_submission_changes_another_row_through_the_pipes(graded):
    assert _cells(graded, "victim") == ("✓", "✓", "✓")
    for name in NAMES[:4]:
        assert _cells(graded, "'" + name) == ("✓", "✓", "✓")


def test_a_worker_holds_no_descriptor_but_its_own_pipe(graded):
    """The student's code sees no pipe or socket but its own: on Linux its runner's two, to and from its worker
    (the worker's pipe to the grader is closed there); elsewhere its worker's one."""
    fds = dict(item.split("=", 1) for item in _printed(graded, "hostile-scanner").splitlines()[0].split()[1:])
    pipes = [t for t in fds.values() if t.startswith(("pipe:", "socket:"))]
    own = 2 if sys.platform.startswith("linux") else 1
    assert pipes and len(pipes) == own and all(p.startswith("pipe:") for p in pipes), fds
    assert _cells(graded, "hostile-scanner") == ("✓", "✓", "✓")


def test_bytes_that_are_not_a_message_mark_only_that_submission(graded):
    """Junk written into every descriptor costs the exercise that wrote it; the notebook's others are graded."""
    assert _cells(graded, "hostile-junk") == ("raised", "✓", "✓")
    line = graded["verdicts"]["hostile-junk"]["verdicts"][0]["line"]
    assert "wrote into the grader's pipe" in line and "\n" not in line


def test_forged_records_are_never_right(graded):
    """Records forged for every exercise (two of them left blank): none is right (tests/test_grade_forgery.py
    forges more)."""
    assert _cells(graded, "hostile-forger") == ("raised", "not attempted", "not attempted")


def test_a_worker_reads_nothing_of_another(graded):
    assert set(_printed(graded, "hostile-reader").splitlines()) == {"READ 0"}


def test_a_worker_holds_no_other_notebook_in_its_memory(graded):
    assert set(_printed(graded, "hostile-memory").splitlines()) == {"FOUND 0"}


def test_nothing_is_written_into_the_machines_scratch_folders(graded):
    # a project cloned into /tmp keeps /tmp visible to the worker (it must read the project), read-only: writing
    # there raises, and nothing reaches it; the others are its own empty folders, where writing works
    scratch = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if Path(d).resolve() not in ROOT.resolve().parents]
    assert _cells(graded, "hostile-tmp") == ("✓" if "/tmp" in scratch else "raised", "✓", "✓")
    assert not [d for d in scratch if (Path(d) / TOKEN).exists()]
    protections = json.loads((graded["out"] / "verdicts.json").read_text())["protections"]
    if "no network (own network namespace)" in protections:  # the namespaces held: the report names each own folder
        assert {p.removeprefix("own empty ") for p in protections if p.startswith("own empty /")} == set(scratch)


def test_a_local_services_socket_is_out_of_reach(graded):
    assert set(_printed(graded, "hostile-socket").splitlines()) == {"refused 2"}  # ENOENT: /run is empty there
    assert _cells(graded, "hostile-socket") == ("✓", "✓", "✓")


def test_a_fork_bomb_is_held_to_the_process_limit_even_as_root(graded):
    protections = json.loads((graded["out"] / "verdicts.json").read_text())["protections"]
    if not any("pids cgroup" in p for p in protections):
        pytest.skip("no pids cgroup can be made here: the process limit is RLIMIT_NPROC alone (not for root)")
    printed = _printed(graded, "hostile-bomb").splitlines()
    # only its "started N" lines are counted (one per input): a full run at load 9 printed another line as well,
    # whose second word was "ignored" (Python's "Exception ignored in: …" reads so; not reproduced since)
    started = [int(line.split()[1]) for line in printed if line.startswith("started ")]
    assert "left its cgroup" not in printed and all(n < 256 for n in started), printed
    assert _cells(graded, "victim") == ("✓", "✓", "✓")


def test_the_process_limit_leaves_room_for_the_users_processes_where_there_is_no_proc(tmp_path):
    """RLIMIT_NPROC counts every process of the user (a Mac's desktop runs hundreds): without /proc they are
    counted by `ps`, so the worker can still start its runner."""
    if not Path("/proc/self").exists() or not shutil.which("ps"):
        pytest.skip("needs /proc and ps to compare")
    from_proc, from_ps = confine.own_processes(), confine.own_processes(tmp_path / "no-proc")
    assert from_ps is not None and from_ps > 0 and abs(from_ps - from_proc) <= 3, (from_ps, from_proc)


def test_the_folders_beside_the_class_are_hidden(graded):
    """Last lesson's grades kept beside this class's folder were read and quoted in a verdict."""
    assert _printed(graded, "hostile-sibling").splitlines()[0] == "refused 2"  # ENOENT: an empty folder there
    assert _cells(graded, "hostile-sibling") == ("✓", "✓", "✓")


def test_a_class_kept_in_the_project_cannot_read_the_projects_other_folders(tmp_path):
    """A class folder inside the project left the project's other folders readable: another class, an older --out."""
    folder, other = ROOT / f".class-{TOKEN}", ROOT / f".grades-{TOKEN}"  # (dot names: no test lists them)
    probe = HEAD + "".join(f"    try:\n        print('read', repr(open({str(path)!r}).read()))\n    except OSError as err:\n"
                           f"        print('refused', err.errno)\n"
                           for path in (other / "grades.csv", ROOT / "README.md")) + RIGHT
    try:
        folder.mkdir()
        other.mkdir()
        (other / "grades.csv").write_text(f"student,total\nAna Lima,{TOKEN}\n")
        _write(folder / "ana_01.ipynb", _lesson01(probe))
        done = _grade(folder, tmp_path / "out", "--workers", "1")
        _, err = done.communicate(timeout=300)
        verdicts = json.loads((tmp_path / "out" / "verdicts.json").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)
    assert done.returncode == 0, err[-3000:]
    if not any(p.startswith("hidden: ") for p in verdicts["protections"]):
        pytest.skip("this machine gives a worker no namespaces to hide folders in")
    student = verdicts["students"][0]
    assert student["verdicts"][0]["printed"].splitlines()[:2] == ["refused 2", "read ''"]  # gone; the README empty
    assert [v["line"][0] for v in student["verdicts"]] == ["✓", "✓", "✓"]  # helpers, notebooks and data still read
    assert f"hidden: {ROOT} but its helpers, notebooks, data and Python's own files" in verdicts["protections"]


def test_last_lessons_class_beside_this_lessons_folder_is_out_of_reach():
    """course/lesson01/{graded/} beside course/lesson02/, outside $HOME and /tmp (here beside the project): a
    lesson-02 submission read last lesson's grades (sweep 24). Now every folder but the system's, Python's own
    and the project's helpers, notebooks and data is hidden."""
    course = ROOT.parent / f".course-{TOKEN}"  # (a dot name, removed below)
    if not os.access(ROOT.parent, os.W_OK):
        pytest.skip(f"{ROOT.parent} cannot be written here")
    grades = course / "lesson01" / "graded" / "grades.csv"
    probe = HEAD + (f"    try:\n        print('read', repr(open({str(grades)!r}).read()))\n"
                    f"    except OSError as err:\n        print('refused', err.errno)\n") + RIGHT
    try:
        grades.parent.mkdir(parents=True)
        grades.write_text(f"student,total\nAna Lima,{TOKEN}\n")
        (course / "lesson02" / "class").mkdir(parents=True)
        _write(course / "lesson02" / "class" / "bob_01.ipynb", _lesson01(probe))
        done = _grade(course / "lesson02" / "class", course / "lesson02" / "graded", "--workers", "1")
        _, err = done.communicate(timeout=300)
        verdicts = json.loads((course / "lesson02" / "graded" / "verdicts.json").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(course, ignore_errors=True)
    assert done.returncode == 0, err[-3000:]
    if not any(p.startswith("hidden: ") for p in verdicts["protections"]):
        pytest.skip("this machine gives a worker no namespaces to hide folders in")
    student = verdicts["students"][0]
    assert student["verdicts"][0]["printed"].splitlines()[0] == "refused 2"  # ENOENT: an empty folder there
    assert [v["line"][0] for v in student["verdicts"]] == ["✓", "✓", "✓"]
    assert any(p.startswith("hidden: every other folder") for p in verdicts["protections"])


def test_the_machines_files_are_read_only_to_a_worker(graded):
    """Not only the project and its virtualenv: the interpreter's standard library (pyenv keeps it under $HOME; a
    sitecustomize.py there would run in the teacher's next Python), /etc and /var/lib could be written before."""
    made = [p for p in MACHINE_FILES if p.exists()]
    for p in made:
        p.unlink()
    assert made == [] and "wrote" not in _printed(graded, "hostile-project")
    printed = _printed(graded, "hostile-project").splitlines()  # (the check calls the function once per input)
    assert set(printed) <= {"refused 30", "refused 2"} and len(printed) % len(MACHINE_FILES) == 0  # EROFS, or hidden
    assert printed[:4] == ["refused 30"] * 4  # the project, the interpreter's files and /etc are seen, read-only
    assert "read-only: the whole file system" in graded["protections"]


def test_no_process_a_submission_started_outlives_its_worker(graded):
    names = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            names.append(comm.read_text().strip())
        except OSError:
            pass
    assert "gf" + TOKEN[:10] not in [n[:12] for n in names]


def test_a_right_answer_that_imports_the_standard_library_is_right_when_home_holds_it(graded):
    assert _printed(graded, "hostile-stdlib").splitlines()[0] == "loaded before False"  # (the check calls it twice)
    assert _cells(graded, "hostile-stdlib") == ("✓", "✓", "✓")


def test_a_file_in_home_beside_pythons_own_shows_its_name_and_reads_as_empty(graded):
    """The guide says so: around Python's own files $HOME is covered entry by entry (sweep 28, F02 saw the names)."""
    if not any(p.startswith("hidden: ") for p in graded["protections"]) or "HOME" not in _printed(graded, "hostile-home"):
        pytest.skip("this machine gives a worker no namespaces to hide folders in, or $HOME here is read-only")
    assert _printed(graded, "hostile-home").splitlines()[0] == "HOME True ''"
    assert _cells(graded, "hostile-home") == ("✓", "✓", "✓")


def test_python_s_shared_library_stays_readable_for_a_runner_started_by_exec():
    # pyenv's libpython lies in lib/ beside the standard library; with $HOME there hidden, a runner started by
    # exec (macOS's way, HELPERS_GRADE_START=spawn here) could not start, and every right answer was "stopped"
    shared = Path(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("INSTSONAME") or "")
    if not shared.is_file():
        pytest.skip("this Python has no shared libpython")
    assert shared.resolve() in confine.python_files()


def test_cells_that_start_like_a_formula_are_text(graded):
    text = (graded["out"] / "grades.csv").read_bytes().decode("utf-8-sig")
    for name in NAMES[:4]:
        assert f"\r\n'{name}," in text or f"\r\n\"'{name}\"," in text


def test_two_participants_of_one_name_are_two_rows(graded):
    assert _cells(graded, "Ana Lima (4321)") == _cells(graded, "Ana Lima (5555)") == ("✓", "✓", "✓")


def test_invisible_characters_never_merge_or_hide_a_student(graded):
    rows = graded["rows"]
    assert {"ana", "ana (2)", "ana (3)"} <= set(rows)
    assert not [s for s in rows if any(c in s for c in "\u200b\u202e")]
    assert "U+200B" in rows["ana (2)"]["note"] and "U+202E" in rows["ana (3)"]["note"]


def _ours() -> list[int]:
    """Processes that carry this test's token in their environment (the grader, its server, its workers)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"GRADE_TEST_TOKEN={TOKEN}".encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            pass
    return found


ENDLESS = "def attention_weights(Q, K):\n    open('/proc/self/comm', 'w').write('endless')\n    while True:\n        pass\n"


def _comms(pids: list[int]) -> list[str]:
    names = []
    for pid in pids:
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            pass
    return names


@pytest.mark.slow  # a grader started and killed
def test_a_grader_killed_with_minus_9_leaves_no_student_code_running(tmp_path):
    """Its workers die with the forkserver, which ends with the grader: an endless function used to burn a core
    until its CPU limit (10 minutes and more)."""
    folder = tmp_path / "class"
    folder.mkdir()
    _write(folder / "endless_01.ipynb", _lesson01(ENDLESS))
    run = _grade(folder, tmp_path / "out", "--workers", "1", "--timeout", "120")
    deadline = time.monotonic() + 120
    while "endless" not in _comms(_ours()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "endless" in _comms(_ours()), "the student's function never started"
    run.kill()  # kill -9: the grader cannot clean up
    run.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while _ours() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _ours()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], _comms(left)


SLOW_RIGHT_ANSWER = '''def attention_weights(Q, K):
    import time
    time.sleep(0.4)  # a right answer that takes its time
    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)
'''


@pytest.mark.slow  # a class graded twice, interrupted between
@pytest.mark.parametrize("how", ["Ctrl-C", "SIGTERM"])  # SIGTERM: `kill PID`, or a scheduler's time limit
def test_ctrl_c_keeps_what_was_graded_and_a_rerun_grades_only_the_rest(tmp_path, how):
    folder, out = tmp_path / "class", tmp_path / "out"
    # a short scratch folder: the forkserver's socket lives in it, and a Unix socket's path has at most 107 bytes
    # (pytest's tmp_path under xdist is longer than that allows)
    scratch = Path(tempfile.mkdtemp(prefix="hg", dir="/tmp" if os.path.isdir("/tmp") else None))
    folder.mkdir()
    # the four after the first two take a second or more each, so the stop lands midway however busy the machine
    for i in range(6):
        _write(folder / f"s{i}_01.ipynb", _lesson01(None if i < 2 else SLOW_RIGHT_ANSWER))
    run = _grade(folder, out, "--workers", "1", env={"TMPDIR": str(scratch)}, start_new_session=True)
    kept = out / ".grading"
    while run.poll() is None and len(list(kept.glob("*.json"))) < 2:
        time.sleep(0.2)
    roots = [p.name for p in scratch.glob("helpers-grade-*")]  # this run's pool: its workers' cgroups carry the name
    if how == "Ctrl-C":
        os.killpg(run.pid, signal.SIGINT)  # as Ctrl-C at a terminal: the whole foreground group
    else:
        os.kill(run.pid, signal.SIGTERM)  # the grader alone: its workers are in sessions of their own
    stdout, stderr = run.communicate(timeout=120)
    first = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in kept.glob("*.json")}
    assert run.returncode == (130 if how == "Ctrl-C" else 143), stderr[-2000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"✗ Stopped ({how})") and "Traceback" not in stderr, stderr[-2000:]
    assert 2 <= len(first) < 6 and not (out / "grades.csv").exists()
    time.sleep(1.0)
    assert _ours() == [] and list(scratch.iterdir()) == []  # no worker, server or temporary folder left
    assert roots and not [c for c in Path("/sys/fs/cgroup/pids").glob("helpers-grade-*")
                          if any(c.name.startswith(root) for root in roots)]  # nor a worker's cgroup of this run
    again = _grade(folder, out)
    stdout, stderr = again.communicate(timeout=600)
    assert again.returncode == 0, stderr[-2000:]
    assert f"kept {len(first)} results from an earlier run" in stderr
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in kept.glob("*.json") if p.name in first} == first
    assert len([p for p in kept.glob("*.json") if p.name != "class.json"]) == 6  # class.json: the class OUT holds
    rows = list(csv.DictReader((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert len(rows) == 6 and all(r["01 attention_weights"] == "✓" for r in rows)


@pytest.mark.slow  # a class graded twice
@pytest.mark.parametrize("kill", ["os.killpg(0, signal.SIGKILL)", "os.kill(os.getpid(), signal.SIGKILL)"])
def test_a_worker_killed_by_a_signal_is_said_and_graded_again_by_the_same_command(tmp_path, kill):
    """A worker killed from outside (kill -9) left "not submitted", blamed the submission, and the result was kept,
    so the same command said "nothing new to grade" (sweep 21, X05). Who sent a signal cannot be told: the line
    names each possible sender and the result is not kept. Here the submission kills its own process group, or
    only the process it runs in: a group kill that reached that process first was said another way and kept."""
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    _write(folder / "ana_01.ipynb", _lesson01())
    _write(folder / "kim_01.ipynb", _lesson01(HEAD + f"    import signal\n    {kill}\n" + RIGHT))
    for run in (1, 2):
        done = _grade(folder, out, "--workers", "1")
        stdout, stderr = done.communicate(timeout=600)
        assert done.returncode == 0, stderr[-2000:]
        kim = next(s for s in json.loads((out / "verdicts.json").read_text())["students"] if s["student"] == "kim")
        assert "its grading process was killed by SIGKILL (by the submission, by the machine" in \
            kim["verdicts"][0]["line"] + " ".join(kim["notes"])
        assert "not kept: 1 notebook whose grading process ended part-way (kim_01.ipynb)" in stderr, stderr
    assert "kept 1 result from an earlier run" in stderr  # ana's; kim's was graded again
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines())}
    assert rows["ana"]["01 attention_weights"] == "✓" and rows["kim"]["01 attention_weights"] != "✓"


def test_the_folder_a_killed_grader_left_is_removed_by_the_next_one(tmp_path):
    """kill -9 runs no cleanup: /tmp/helpers-grade-* stayed for ever."""
    import subprocess
    from helpers.grade.pool import remove_abandoned
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "helpers-grade-old").mkdir()
    (tmp_path / "helpers-grade-old" / "grader.pid").write_text(str(dead.pid))
    (tmp_path / "helpers-grade-live").mkdir()
    (tmp_path / "helpers-grade-live" / "grader.pid").write_text(str(os.getpid()))
    (tmp_path / "helpers-grade-unknown").mkdir()  # no pid file: not judged
    remove_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["helpers-grade-live", "helpers-grade-unknown"]


def test_ctrl_c_is_ignored_only_while_the_forkserver_starts_and_obeyed_once_a_worker_is_known(monkeypatch):
    """Ctrl-C was set to be ignored around every worker's start; one pressed while the server forked a worker was
    lost (sweep 28, E01), and so was one pressed while the server preloaded torch and the lessons, seconds before
    it forked the first worker (sweep 30, BAD-1). Only the exec of the server, a new Python in the terminal's
    process group, needs it ignored; a Ctrl-C during a start is obeyed once the worker is known (so it is stopped)."""
    import multiprocessing.forkserver

    from helpers.grade import pool
    servers, seen = [], []

    class Started:
        pid = 0

        def __init__(self, **kwargs):
            pass

        def start(self):
            seen.append(signal.getsignal(signal.SIGINT))
            if len(seen) == 3:
                os.kill(os.getpid(), signal.SIGINT)  # pressed while multiprocessing starts the third worker

    class Context:
        Pipe, Process = staticmethod(multiprocessing.Pipe), Started

        def get_start_method(self):
            return "forkserver"

    monkeypatch.setattr(pool, "SPAWN", False)
    monkeypatch.setattr(pool, "make_cgroup", lambda *args: None)
    monkeypatch.setattr(pool, "enter_cgroup", lambda *args: None)
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running",
                        lambda: servers.append(signal.getsignal(signal.SIGINT)))
    grader = pool.Grader(confine.Limits(), 1, [], [])
    grader.ctx = Context()
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a test process of an
    # xdist run was once found with SIG_IGN here)
    try:
        for _ in range(2):
            grader.start(pool.Job("ana_01.ipynb", b"{}"), 0)
        with pytest.raises(KeyboardInterrupt):
            grader.start(pool.Job("bo_01.ipynb", b"{}"), 0)
        assert len(grader.running) == 3  # the third worker is known, so closing the grader stops it
    finally:
        for fd in grader.running:
            os.close(fd)
        shutil.rmtree(grader.root, ignore_errors=True)
        after = signal.signal(signal.SIGINT, before)
    assert servers == [signal.SIG_IGN]  # the server's Python starts with Ctrl-C ignored, once
    assert len(seen) == 3 and not {signal.SIG_IGN, signal.SIG_DFL} & set(seen)  # noted, never ignored
    assert after is signal.default_int_handler  # put back as it was


@pytest.mark.slow  # a class graded until the stop
def test_ctrl_c_while_the_forkserver_preloads_stops_the_grading(tmp_path):
    """A Ctrl-C that came while the forkserver imported torch and the lessons (seconds, before the first worker)
    was ignored: the class was graded to the end and the exit status was 0 (sweep 30, BAD-1)."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("finds the forkserver through /proc (Linux)")
    folder, out = tmp_path / "class", tmp_path / "out"
    scratch = Path(tempfile.mkdtemp(prefix="hg", dir="/tmp" if os.path.isdir("/tmp") else None))
    folder.mkdir()
    for i in range(3):
        _write(folder / f"s{i}_01.ipynb", _lesson01())
    run = _grade(folder, out, "--workers", "1", env={"TMPDIR": str(scratch)}, start_new_session=True)

    def server_preloading() -> bool:  # the grader's forkserver runs and has forked no worker yet
        children = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        with contextlib.suppress(OSError):
            return any(b"forkserver" in (Path("/proc") / str(pid) / "cmdline").read_bytes() and not children.get(pid)
                       for pid in children.get(run.pid, []))
        return False

    deadline = time.monotonic() + 120
    while run.poll() is None and not server_preloading() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert run.poll() is None, "the grader ended before its forkserver was seen"
    os.killpg(run.pid, signal.SIGINT)  # as Ctrl-C at a terminal: the whole foreground group
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr[-2000:]
    assert stderr.strip().splitlines()[-1].startswith("✗ Stopped (Ctrl-C)") and "Traceback" not in stderr
    assert not (out / "grades.csv").exists()
    time.sleep(1.0)
    assert _ours() == [] and list(scratch.iterdir()) == []


def test_a_worker_killed_after_it_said_its_runner_was_killed_blames_no_next_exercise():
    """A submission that kills its runner's group: the worker sent that exercise's record ("killed … the same
    command grades it again"), then died of the same kill, and the next exercise, never run, was marked "killed
    during this exercise" (sweep 31, BAD-7: 4 gradings in 49). Now the next exercise is run by a fresh worker."""
    from helpers.grade import pool
    grader = pool.Grader(confine.Limits(), 1, [], [])
    try:
        for said, restart, records in ((True, 1, 0), (False, 2, 1)):
            job = pool.Job("kim_01.ipynb", b"{}")
            job.lesson = "01"
            run = pool._Running(job, None, -1, 1, grader.root, 0.0, 0.0, said=True, runner_killed=said)
            assert grader.after(run, False, signal.SIGKILL) == restart and len(job.records) == records
            assert job.retry is not said  # (set when that record came, not here)
    finally:
        shutil.rmtree(grader.root, ignore_errors=True)
