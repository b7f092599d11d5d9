"""A submission cannot forge its own row (issue 53): its code runs in a runner process that holds no pipe to
the grader, and a ✓ counts only when the worker's own run of the check, on the runner's answers read back as
plain data, agrees. Each hostile function below is wrong (it returns zeros, or ends its process) and tries to
be graded ✓ anyway: by writing a forged "right" verdict and forged grader records into every descriptor it
has (then ending its process, or returning), by patching the check's comparisons, or by reopening another
process's pipes through /proc. Lesson 01 only; one class run per way a runner starts: forked from its
worker, and macOS's way: the worker spawned and the runner started by exec (HELPERS_GRADE_START=spawn)."""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.grade.confine import PR_GET_DUMPABLE, PR_SET_DUMPABLE, give_up_privileges, libc
from helpers.grade.lessons import lessons
from helpers.grade.synthetic import notebook

ROOT = Path(__file__).resolve().parent.parent
HEAD = "def attention_weights(Q, K):\n    import os, sys, struct, json, torch\n"
WRONG = "    return torch.zeros(Q.shape[0], K.shape[0])\n"
RIGHT = "    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)\n"
VERDICT = ("    forged = [{'kind': 'verdict', 'outcome': 'right', 'code': 'attention_weights.right', 'line': '✓ forged',\n"
           "               'printed': '', 'sure': True, 'defined': {'callable': True}}]\n")  # as a runner sends it
RECORDS = ("    forged = [{'kind': 'record', 'index': i, 'exercise': n, 'key': n, 'outcome': 'right', 'code': n + '.right',\n"
           "               'line': '✓ forged', 'printed': '', 'sure': True}\n"
           "              for i, n in enumerate(['attention_weights', 'masked_weights', 'weighted_sum'])]\n"
           "    forged.append({'kind': 'end'})\n")  # every record of the notebook and the end, as a worker sends them
WRITE = ("    for message in forged:\n        b = json.dumps(message).encode()\n        for fd in range(3, 1024):\n"
         "            try:\n                os.write(fd, struct.pack('<I', len(b)) + b)\n"
         "            except OSError:\n                pass\n")
PATCH = (  # every Exercise the checks hold now calls any answer the same as the reference, and right
    "    for module in list(sys.modules.values()):\n"
    "        if getattr(module, '__name__', '').startswith('helpers'):\n"
    "            for value in list(vars(module).values()):\n"
    "                if type(value).__name__ == 'Exercise':\n"
    "                    value.same = value.right = lambda *args: True\n")
REACH = (  # every other process's descriptors it can see, opened for writing (a pipe's read end included)
    "    opened = 0\n"
    "    for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
    "        try:\n            fds = os.listdir('/proc/' + pid + '/fd')\n        except OSError:\n            continue\n"
    "        for n in fds:\n"
    "            try:\n                os.close(os.open('/proc/' + pid + '/fd/' + n, os.O_WRONLY | os.O_NONBLOCK))\n"
    "                opened += 1\n            except OSError:\n                pass\n"
    "    print('OPENED', opened)\n")
HOSTILE = {
    "records-and-exit": HEAD + RECORDS + WRITE + "    os._exit(0)\n",
    "verdict-and-exit": HEAD + VERDICT + WRITE + "    os._exit(0)\n",
    "verdict-and-return": HEAD + VERDICT + WRITE + WRONG,
    "exits-3": HEAD + "    os._exit(3)\n",
    "segfaults": HEAD + "    import signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
    "bare-verdict": HEAD + VERDICT.replace("{'callable': True}", "True") + WRITE + WRONG,  # no answer in it
    "patch-the-check": HEAD + PATCH + WRONG,
    "patch-when-defined": (  # a default value runs with the cell: every check_* of helpers then returns True
        "def attention_weights(Q, K, _=[setattr(m, a, lambda *x, **k: True) for m in list(__import__('sys').modules"
        ".values()) if getattr(m, '__name__', '').startswith('helpers') for a in dir(m) if a.startswith('check_')]):\n"
        "    import torch\n" + WRONG),
    "reach-through-proc": HEAD + REACH + RIGHT,
    "closes-its-pipes": HEAD + "    os.closerange(0, 1024)\n" + RIGHT,
    "own-H": "class H:\n    pass\n" + HEAD + RIGHT,  # hides `import helpers as H`, in Jupyter too
    "fake-H-above": HEAD + WRONG,  # with ABOVE's cell
    "forks-and-waits": HEAD + "    import time\n    for _ in range(3):\n        if os.fork() == 0:\n"
                              "            time.sleep(30)\n            os._exit(0)\n    os.wait()\n" + RIGHT,
    "leaves-threads": HEAD + "    import threading, time\n    for _ in range(100):\n"
                             "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n" + RIGHT,
}
ABOVE = {  # a cell above the exercise: an H of the student's whose check prints a tick and returns None
    "fake-H-above": "class H:\n    @staticmethod\n    def check_attention_weights(f):\n        print('✓')\n"}
ALL_RIGHT = {"attention_weights": "right", "masked_weights": "right", "weighted_sum": "right"}


def _lesson01(cell: str | None, above: str | None = None) -> dict:
    nb = notebook(lessons()["01"].path, ALL_RIGHT)
    at = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("exercise") == "attention_weights")
    if cell is not None:
        nb["cells"][at]["source"] = cell
    if above is not None:
        nb["cells"].insert(at, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                "source": above})
    return nb


def _grade(folder: Path, out: Path, workers: int, start: str) -> subprocess.CompletedProcess:
    # a teacher's shell sets no thread counts (conftest does): the grader must make its workers single-threaded
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["HELPERS_GRADE_START"] = start
    return subprocess.run([sys.executable, "-m", "helpers.grade", str(folder), "--out", str(out), "--workers",
                           str(workers)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


# macOS's way costs a fresh interpreter per worker and runner (~50 s here): the full suite runs it, not the quick tier
WAYS = ["forkserver", pytest.param("spawn", marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=WAYS)
def graded(tmp_path_factory, request):
    base = tmp_path_factory.mktemp("forgery")
    folder, out = base / "class", base / "out"
    folder.mkdir()
    for name, cell in [("honest", None)] + list(HOSTILE.items()):
        (folder / f"{name}_01.ipynb").write_text(json.dumps(_lesson01(cell, ABOVE.get(name))), encoding="utf-8")
    done = _grade(folder, out, 2, request.param)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").read_text(encoding="utf-8-sig").splitlines())}
    verdicts = {s["student"]: s["verdicts"] for s in json.loads((out / "verdicts.json").read_text())["students"]}
    return rows, verdicts, json.loads((out / "verdicts.json").read_text())["protections"]


def _cells(graded, student: str) -> tuple[str, ...]:
    return tuple(graded[0][student][f"01 {n}"] for n in ALL_RIGHT)


def _first(graded, student: str) -> dict:
    return graded[1][student][0]


def _runner_was_fooled(verdict: dict) -> bool:
    """The runner sent "right" and the worker's own check said otherwise (runner.unconfirmed's sentence)."""
    return "said right" in verdict["line"]


def test_an_honest_notebook_is_right(graded):
    assert _cells(graded, "honest") == ("✓", "✓", "✓")


def test_forged_grader_records_then_exit_are_not_right(graded):
    """The grader's protocol copied whole (every record right, then the end) and the process ended: the
    records go to the worker, which reads its runner's messages, never the grader's."""
    assert _cells(graded, "records-and-exit")[0] != "✓" and _cells(graded, "records-and-exit")[1:] == ("✓", "✓")
    assert not [v for v in graded[1]["records-and-exit"] if "forged" in v["line"]]  # (the code itself holds the word)


def test_a_forged_verdict_then_exit_is_not_right(graded):
    assert _cells(graded, "verdict-and-exit")[0] != "✓"
    assert _runner_was_fooled(_first(graded, "verdict-and-exit")), _first(graded, "verdict-and-exit")["line"]


def test_a_forged_verdict_from_a_wrong_function_is_not_right(graded):
    assert _cells(graded, "verdict-and-return")[0] != "✓"
    assert _runner_was_fooled(_first(graded, "verdict-and-return")), _first(graded, "verdict-and-return")["line"]


def test_a_forged_verdict_without_an_answer_is_said_to_be_written_into_the_pipe(graded):
    """It read "expected a function, got Opaque; pass the function itself, not its result"."""
    line = _first(graded, "bare-verdict")["line"]
    assert _cells(graded, "bare-verdict")[0] != "✓" and "wrote into the grader's pipe" in line and "Opaque" not in line


def test_a_check_replaced_when_the_cell_runs_is_named_and_costs_that_exercise_only(graded):
    """It read "the submission ended the grading process (os._exit, a crash, …)": nothing had ended."""
    line = _first(graded, "patch-when-defined")["line"]
    assert _cells(graded, "patch-when-defined") == ("patched", "✓", "✓") and "gave back bool, not a verdict" in line


def test_a_forgers_other_exercises_are_graded_as_they_are(graded):
    """After a forgery the next exercise gets a fresh runner: the forger's right answers stay right."""
    for student in ("verdict-and-exit", "verdict-and-return", "bare-verdict"):
        assert _cells(graded, student)[1:] == ("✓", "✓")
        assert not [v for v in graded[1][student] if "forged" in v["line"]]


def test_a_function_that_closes_its_pipes_is_told_so_and_the_next_exercises_are_graded(graded):
    """os.closerange(0, 1024) then the right answer was told it "ended the grading process (os._exit, a crash,
    the memory limit…)" (sweep 13, h20): it ended nothing; it closed the pipe its answer goes back through."""
    assert _cells(graded, "closes-its-pipes")[1:] == ("✓", "✓")
    assert _first(graded, "closes-its-pipes")["line"] == (
        "✗ attention weights: your function closed files it did not open (os.close or os.closerange), among them "
        "the pipe its answer goes back through, so no answer arrived: close only the files your own code opened.")


def test_a_name_of_the_students_that_hides_the_checks_H_is_named(graded):
    """`class H` in a cell: the check call failed, in Jupyter too, and the line read "the check could not grade it
    (AttributeError …)", naming nothing the student did (sweep 30, WEAK-6)."""
    assert _first(graded, "own-H")["line"].startswith("✗ attention weights: your notebook sets H, a name the lesson's "
                                                     "check uses")


def test_an_H_of_the_students_in_a_cell_above_is_named_not_a_default_value(graded):
    """A `class H` above whose check prints ✓ and returns None read "a line of the exercise's cell … (a default
    value, a decorator) replaced it", a place the student never wrote in (sweep 30, WEAK-7)."""
    first = _first(graded, "fake-H-above")
    assert first["outcome"] == "patched" and "default value" not in first["line"], first["line"]
    assert first["line"].startswith("✗ attention weights: your notebook sets H, a name the lesson's check uses")
    assert all("your notebook sets H," in v["line"] for v in graded[1]["fake-H-above"])  # (no check_masked_weights)


def test_a_function_stopped_while_its_own_processes_run_is_told_so_not_asked_about_a_loop(graded):
    """Processes started, then waited for (sweep 30 started 400): "ran for more than 3 s (an endless loop?)" (WEAK-11)."""
    first = _first(graded, "forks-and-waits")
    assert first["outcome"] == "too_slow" and "your function started processes (os.fork" in first["line"], first
    assert "endless loop" not in first["line"] and _cells(graded, "forks-and-waits")[1:] == ("✓", "✓")


def test_a_function_that_leaves_threads_running_is_told_so_not_suspected_of_forgery(graded):
    """50 sleeping threads per call: the confirming call found no thread left to start under the 256 limit and read
    "RuntimeError: RuntimeError: can't start new thread … the submission changed the check …" (sweep 30, BAD-6)."""
    if not any("at most 256 processes and threads" in p for p in graded[2]):
        pytest.skip("no limit on threads binds here: the answer is right")
    line = _first(graded, "leaves-threads")["line"]
    assert "starts threads that are still running when it returns" in line and "RuntimeError: RuntimeError" not in line
    assert "changed the check" not in line and _cells(graded, "leaves-threads")[1:] == ("✓", "✓")


def test_a_function_that_ends_its_process_is_told_how_it_ended_and_the_next_exercises_are_graded(graded):
    """os._exit(3) read "the submission ended the grading process (os._exit, a crash, the memory limit, more
    output…)": every cause at once (sweep 27, E21). The runner's exit status says which: the exit status, or the
    signal. (os._exit(3) was also the status a runner gave for pipes closed under it, so it read "closed files".)"""
    for student, said in (("exits-3", "(exit status 3: os._exit"), ("segfaults", "ended by SIGSEGV before it answered")):
        assert _cells(graded, student)[1:] == ("✓", "✓")
        assert said in _first(graded, student)["line"] and "closed files" not in _first(graded, student)["line"]


def test_a_patched_check_gives_no_right(graded):
    first = _first(graded, "patch-the-check")
    assert _cells(graded, "patch-the-check")[0] != "✓"
    assert _runner_was_fooled(first), first["line"]  # the patch fooled the check in the runner, not the worker's
    assert first["code"] == "attention_weights.numbers_differ"  # the worker's check, on the zeros it got back


def test_no_other_process_can_be_reopened_through_proc(graded):
    assert set(_first(graded, "reach-through-proc")["printed"].splitlines()) == {"OPENED 0"}  # (called twice)
    assert _cells(graded, "reach-through-proc") == ("✓", "✓", "✓")


def test_the_protections_say_where_the_students_code_runs(graded):
    assert any("runs in a process of its own" in p for p in graded[2]), graded[2]


def test_both_ways_confine_the_worker_in_its_own_namespaces(graded):
    # a spawned worker that imported torch with its thread pool could not unshare: it ran with none of these
    assert "no network (own network namespace)" in graded[2], graded[2]
    assert any(p.startswith("read-only: ") for p in graded[2]), graded[2]


@pytest.mark.parametrize("start", WAYS)
def test_a_runner_holds_no_pipe_to_the_grader(tmp_path, start):
    """In the runner, every pipe left is one of its own two (the worker's pipe to the grader is closed)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the probe reads /proc/self/fd")
    probe = (HEAD + "    seen = []\n    for n in os.listdir('/proc/self/fd'):\n        try:\n"
                    "            seen.append(os.readlink('/proc/self/fd/' + n))\n        except OSError:\n"
                    "            pass\n    print(sorted(t for t in seen if t.startswith(('pipe:', 'socket:'))))\n"
                    "    print(open('/proc/self/cmdline').read().replace(chr(0), ' '))\n" + RIGHT)
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "probe_01.ipynb").write_text(json.dumps(_lesson01(probe)), encoding="utf-8")
    done = _grade(tmp_path / "class", tmp_path / "out", 1, start)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = json.loads((tmp_path / "out" / "verdicts.json").read_text())["students"][0]["verdicts"][0]["printed"]
    pipes = ast.literal_eval(printed.splitlines()[0])  # the probe's list of 'pipe:[inode]' strings
    assert len(pipes) == 2 and all(p.startswith("pipe:") for p in pipes), pipes
    started_by_exec = "from helpers.grade.runner import boot" in printed.splitlines()[1]
    assert started_by_exec == (start == "spawn"), printed  # the way asked for is the way that ran


def _reopen_from_child(fd: int, give_up: bool) -> bool:
    """Can a forked child open this process's descriptor `fd` for writing through /proc?"""
    pid = os.fork()
    if pid == 0:
        try:
            if give_up:
                give_up_privileges()
            os.close(os.open(f"/proc/{os.getppid()}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK))
            os._exit(1)
        except BaseException:
            os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 1


def test_where_proc_is_the_machines_a_runner_still_cannot_reopen_its_workers_pipe():
    """The defence that holds without a /proc of its own (a container that refuses the mount): the worker is
    not dumpable and the runner gives up every capability, so /proc/WORKER/fd is refused, root included."""
    lib = libc()
    if lib is None:
        pytest.skip("Linux only")
    r, w = os.pipe()
    was = lib.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    try:
        lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        assert not _reopen_from_child(w, give_up=True)
        if os.getuid() == 0:  # the control: root with its capabilities opens it, which is why the runner gives them up
            assert _reopen_from_child(w, give_up=False)
    finally:
        lib.prctl(PR_SET_DUMPABLE, was, 0, 0, 0)
        os.close(r)
        os.close(w)
