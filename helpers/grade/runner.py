"""The process that runs a student's code, and the worker's end of it: one runner per notebook (a fresh one
after a runner that stopped answering), started by the grading worker (worker.py), which itself never runs
any. On Linux the worker forks it (the worker was itself forked from the forkserver, where fork is safe);
elsewhere (macOS) it is a fresh interpreter started by exec, which prepares the lesson itself, as forking
a process that has loaded torch is not safe there. Both run the same code from `serve` on. It holds no
pipe to the grading process, only two to its worker, so whatever the student's code does (write a forged
record, patch the check, end the process) it can only speak to the worker, which reads what it says as
plain data (wire.py) and checks a ✓ again itself.

The runner's life: close every pipe but its two and give up every capability (it cannot open its
worker's pipes through /proc, nor ptrace it), then answer the worker. Asked to check exercise i, it runs
the student's definitions in that exercise's pristine namespace and the pristine check, as the notebook
would, and sends the verdict (the named mistake, what the function printed). Asked for a call, it runs
the student's function (or class, or a module that class built) on the worker's inputs and sends the
answer as data.

In the worker, any verdict but "right" is kept as it is: a submission that lies there only loses its own
points. A "right" is checked again where none of the student's code ever ran: the same check, with the
student's function replaced by a stand-in that hands each input to the runner and reads the answer back
as plain data (at most MAX_ANSWER bytes). So a forged message, a patched check or a function that
misbehaves only in the runner gets no ✓: the check that counts reads answers, never the student's objects.
"""

from __future__ import annotations

import __future__
import ast
import contextlib
import errno
import io
import linecache
import os
import signal
import subprocess
import sys
import time

import torch

from ..exercises import sandbox
from ..exercises.verdict import Verdict
from . import preload
from .confine import give_up_privileges
from .definitions import Taken
from .wire import Gone, Opaque, Unreadable, close_other_pipes, decode, encode, receive, send

MAX_REQUEST = 1 << 28  # bytes of one call from the worker (its inputs: 05's attentions are ~8 MB as text)
MAX_NUMBERS = 1 << 26  # numbers in one call from the worker (the capstone's weights are 2.4 million)
MAX_ANSWER = 8 << 20  # bytes of one message from the runner (a verdict, or one answer as data)
CLOSED_PIPES = 117  # a runner's exit status when its own pipes were closed under it (os.closerange in a
# function); not 3, which a student's os._exit(3) gives
STALE_MESSAGES = 64  # verdicts on other exercises skipped before the runner counts as broken (forked copies)
# Where fork is not safe once torch is loaded (macOS): workers spawned (pool.py), runners started by exec.
# HELPERS_GRADE_START=spawn takes that way on Linux too, so the tests run it.
SPAWN = not sys.platform.startswith("linux") or os.environ.get("HELPERS_GRADE_START") == "spawn"
BOOT = ("import sys; sys.path[:] = sys.argv[3:]; from helpers.grade.runner import boot; "
        "boot(int(sys.argv[1]), int(sys.argv[2]))")


def raised(ex, why: str) -> dict:
    """A verdict of outcome "raised" as plain fields, its line saying why."""
    return {"outcome": "raised", "code": f"{ex.key}.raised", "line": f"✗ {ex.title}: {why}"}


# --- in the runner ---------------------------------------------------------------------------------------
def check(prepared, i: int, taken) -> tuple[dict, dict]:
    """Run the student's definitions in exercise i's namespace, then the pristine check on them:
    (the verdict as plain fields, the namespace)."""
    ex = prepared.lesson.exercises[i][1]
    namespace = dict(prepared.namespaces[i])
    flags = __future__.annotations.compiler_flag  # annotations stay text: nothing of theirs is evaluated
    label = f"<{ex.name}>"
    # its source where inspect looks, as IPython keeps a cell's: torch.jit.script(f) reads it (sweep 27)
    linecache.cache[label] = (len(taken.code), None, taken.code.splitlines(True), label)
    try:
        exec(compile(taken.code, label, "exec", flags=flags, dont_inherit=True), namespace)
    except ModuleNotFoundError as err:  # installed on the student's laptop, not where the class is graded
        return raised(ex, f"the exercise's cell imports {str(err.name)[:80]}, which is not installed where the class "
                          f"is graded (nor is a module of your own, such as a file %%writefile wrote: only the notebook is "
                          f"handed in): use torch's own operations, as the lesson does"), namespace
    except Exception as err:  # a class whose base is wrong, a name a default value reads
        return raised(ex, f"the definitions raised {type(err).__name__}: {str(err)[:200]}"), namespace
    try:
        verdict = eval(ex.test, namespace)
    except Exception as err:  # the check itself could not read what it was given
        if hidden := _hidden(ex, prepared.namespaces[i], namespace):  # (it read "the check could not grade it
            # (AttributeError …)"; sweep 30, WEAK-6)
            why = f"{hidden}, so the check could not run ({type(err).__name__}): give yours another name"
            return raised(ex, why), namespace
        return raised(ex, f"the check could not grade it ({type(err).__name__}: {str(err)[:200]})"), namespace
    if not isinstance(verdict, Verdict) and (hidden := _hidden(ex, prepared.namespaces[i], namespace)):
        line = f"✗ {ex.title}: {hidden}, so the lesson's check did not run: give yours another name."
        return {"outcome": "patched", "code": f"{ex.key}.patched", "line": line}, namespace  # (sweep 30, WEAK-7)
    if not isinstance(verdict, Verdict):  # a line that ran with the cell (a default value) replaced the check
        return {"outcome": "patched", "code": f"{ex.key}.patched", "line": (
            f"✗ {ex.title}: the check gave back {type(verdict).__name__[:40]}, not a verdict: a line of the exercise's "
            f"cell that runs when the cell runs (a default value, a decorator) replaced it; define your function "
            f"only, and compute with the libraries as they are.")}, namespace
    return {"outcome": verdict.outcome, "code": verdict.code, "line": verdict.line, "printed": verdict.printed,
            "sure": verdict.sure}, namespace


def _hidden(ex, setup: dict, namespace: dict) -> str:
    """"your notebook sets H, …" when a name the check reads (H, helpers) is not what the lesson's setup made it:
    set by the exercise's cell, or by a cell above (then the setup holds the student's H too); else ""."""
    helpers = sys.modules.get("helpers")  # what `import helpers as H` gives (imported already: this is in it)
    hidden = sorted(n for n in _names_read(ex.test) - {ex.name} if (n in setup and namespace.get(n) is not setup[n])
                    or (n == "H" and namespace.get(n) is not helpers))
    return (f"your notebook sets {', '.join(hidden)}, a name the lesson's check uses (`import helpers as H`)"
            if hidden else "")


def _names_read(test: str) -> set[str]:
    """The names a check's line reads (`H.check_attention_weights(attention_weights)`: H, attention_weights)."""
    try:
        return {n.id for n in ast.walk(ast.parse(test, mode="eval")) if isinstance(n, ast.Name)}
    except SyntaxError:
        return set()


def serve(prepared, taken: list, inbox: int, outbox: int) -> None:
    """Answer the worker until it closes the pipe: a check (the verdict and what the student defined), or a
    call of what the last checked exercise defined."""
    defined, handles = None, {}
    while True:
        request = receive(inbox, MAX_REQUEST)  # the worker's: it ends the loop by closing the pipe (Gone)
        if "check" in request:
            i = int(request["check"])
            verdict, namespace = check(prepared, i, taken[i])
            if verdict["outcome"] == "too_slow" and _has_children():  # 400 forks read "an endless loop?" (sweep 30)
                verdict["line"] = (f"✗ {prepared.lesson.exercises[i][1].title}: your function started processes "
                                   f"(os.fork, subprocess or multiprocessing) and was stopped at the time limit: "
                                   f"compute the answer in the function itself.")
            defined, handles = namespace.get(prepared.lesson.exercises[i][1].name), {}
            said = {"callable": True} if callable(defined) else {"value": _encoded(defined)}
            send(outbox, dict(verdict, kind="verdict", check=i, defined=said))
        else:
            send(outbox, answer(request, defined, handles))


def _has_children() -> bool:
    """Did the student's code start a process here (a runner starts none of its own)? Standard POSIX, no /proc."""
    try:
        os.waitpid(-1, os.WNOHANG)  # (0, 0) while they run; one that ended is reaped
    except ChildProcessError:
        return False
    return True


def life(inbox: int, outbox: int, ready, closes: tuple[int, ...] = ()) -> None:
    """A runner's whole life: its two pipes only (`closes`: the worker's own, closed first), no capability,
    then `serve`; never returns. `ready()`: (the prepared lesson, the definitions taken)."""
    try:
        for fd in closes:
            os.close(fd)
        close_other_pipes({inbox, outbox})
        prepared, taken = ready()
        give_up_privileges()
        serve(prepared, taken, inbox, outbox)
    except OSError as err:  # EBADF: the student's code closed the pipes it answers through
        os._exit(CLOSED_PIPES if err.errno == errno.EBADF else 0)
    except BaseException:
        pass
    finally:
        os._exit(0)


def boot(inbox: int, outbox: int) -> None:
    """A runner started by exec: the worker's first message names the lesson, the definitions taken and the
    check's time limit, and the lesson is prepared here."""
    def ready():
        first = receive(inbox, MAX_REQUEST)
        torch.set_num_threads(1)
        sandbox.TIME_LIMIT_S = float(first["limit_s"])
        return preload.prepared(str(first["lesson"])), [Taken(str(n), c, str(p)) for n, c, p in first["taken"]]

    life(inbox, outbox, ready)


def _encoded(value):
    """The value as data; a value that cannot be written (too deep, a tensor that will not copy) as opaque."""
    try:
        return encode(value)
    except Exception as err:  # whatever the student's object raises while it is read
        return {"opaque": str(err)[:60]}


def answer(request: dict, defined, handles: dict) -> dict:
    """One call: the student's object (or a module it built) on the worker's inputs; the answer as data."""
    target = defined if request.get("target") == "defined" else handles.get(request.get("target"))
    try:
        with torch.no_grad():
            if request.get("weights") is not None:  # the check's weights, loaded into the module's linear layers
                for name, state in decode(request["weights"], MAX_NUMBERS).items():
                    getattr(target, name).load_state_dict(state)
            if isinstance(target, torch.nn.Module):
                target.train(bool(request.get("training")))
            args, kwargs = decode(request.get("args"), MAX_NUMBERS), decode(request.get("kwargs"))
            got = target(*args, **kwargs)
    except BaseException as err:  # exit(), the student's bug, a time-limit alarm: an error as data
        return {"kind": "answer", "raised": type(err).__name__[:60], "message": str(err)[:500]}
    if isinstance(got, torch.nn.Module):  # a module the student's class built: the worker gets a stand-in
        handles[len(handles) + 1] = got
        linears = {name: [m.in_features, m.out_features, m.bias is not None]
                   for name, m in list(got.named_children())[:20] if isinstance(m, torch.nn.Linear)}
        return {"kind": "answer", "module": len(handles), "linears": linears}
    return {"kind": "answer", "answer": _encoded(got)}


# --- in the worker ---------------------------------------------------------------------------------------
class Lost(Exception):
    """The runner cannot answer any more (it ended, or an answer was cut off by the time limit)."""


class Runner:
    """The worker's end of a runner: checks and calls sent as data, verdicts and answers read back as data."""

    def __init__(self, number: str, taken: list, closes: list[int], prepared=None):
        """Start a runner for lesson `number` and this notebook's definitions (`taken`, one per exercise).
        `closes`: the worker's descriptors it must not hold (its pipe to the grading process). `prepared`: the
        lesson prepared in the worker, which a forked runner shares (one started by exec prepares its own)."""
        to_r, self.to = os.pipe()
        self.back, from_w = os.pipe()
        self.broken = False  # True: it stopped answering in step (a fresh one is needed)
        self.process, self.status = None, None  # status: its exit status, once it ended and was reaped
        if SPAWN:  # only the two pipes are passed (close_fds); the worker's pipe stays behind
            self.process = subprocess.Popen([sys.executable, "-c", BOOT, str(to_r), str(from_w), *sys.path],
                                            pass_fds=(to_r, from_w), stdin=subprocess.DEVNULL)
            self.pid = self.process.pid
            os.close(to_r)
            os.close(from_w)
            send(self.to, {"lesson": number, "limit_s": sandbox.TIME_LIMIT_S,
                           "taken": [[t.name, t.code, t.problem] for t in taken]})
            return
        self.pid = os.fork()
        if self.pid == 0:
            life(to_r, from_w, lambda: (prepared, taken), (*closes, self.to, self.back))
        os.close(to_r)
        os.close(from_w)

    def verdict(self, i: int) -> dict:
        """The runner's verdict on exercise i; Gone when it ended before sending one (or cannot be written to)."""
        self.broken = True
        try:
            send(self.to, {"check": i})
        except OSError:
            raise Gone("the runner ended") from None
        for _ in range(STALE_MESSAGES + 1):
            said = receive(self.back, MAX_ANSWER)
            if said.get("kind") != "verdict":
                raise Unreadable("a message that is not the verdict asked for")
            if said.get("check", i) == i:  # (one without the index is read, and a right one checked, as any)
                self.broken = False
                return said
            # a verdict on another exercise: sent late by a copy of the runner the student's code forked
        raise Unreadable(f"{STALE_MESSAGES + 1} verdicts on other exercises")

    def call(self, target, args: tuple, kwargs: dict, weights=None, training: bool = False):
        """target(*args, **kwargs) in the runner; its answer as a value (or an error raised here)."""
        if self.broken:
            raise Lost("the process running your function stopped answering (an earlier call left it mid-message)")
        self.broken = True  # until the whole answer is read: an alarm in between leaves the pipe mid-message
        request = {"target": target, "args": encode(args), "kwargs": encode(kwargs),
                   "weights": None if weights is None else encode(weights), "training": training}
        try:
            send(self.to, request)
            reply = receive(self.back, MAX_ANSWER)
            if reply.get("kind") != "answer":
                raise Unreadable("a message that is not the answer asked for")
        except (Gone, Unreadable, OSError) as err:
            raise Lost(f"the process running your function stopped answering ({err})") from None
        self.broken = False
        if "module" in reply:
            return RemoteModule(self, reply)
        if "raised" in reply:
            name, message = str(reply.get("raised"))[:60], str(reply.get("message"))[:500]
            raise RuntimeError(message if name == "RuntimeError" else f"{name}: {message}")  # not "RuntimeError: Ru…"
        return decode(reply.get("answer"))

    def closed_its_pipes(self, wait_s: float = 2.0) -> bool:
        """Did the runner, which stopped answering, end because its pipes were closed under it? It is given
        `wait_s` to end (it exits as soon as a write fails) and reaped."""
        deadline = time.monotonic() + wait_s
        while self.status is None and time.monotonic() < deadline:
            if self.process is not None:
                self.status = self.process.poll()
            else:
                with contextlib.suppress(ChildProcessError):
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                    self.status = os.waitstatus_to_exitcode(status) if pid else None
            if self.status is None:
                time.sleep(0.02)
        return self.status == CLOSED_PIPES

    def stop(self) -> None:
        for fd in (self.to, self.back):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.status is not None:  # reaped already: its pid may be another process's by now
            return
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


class RemoteFunction:
    """Stands for the student's function or class in the worker's check: a call runs it in the runner."""

    def __init__(self, runner_: Runner):
        self.runner = runner_

    def __call__(self, *args, **kwargs):
        return self.runner.call("defined", args, kwargs)


class RemoteModule(torch.nn.Module):
    """Stands for a module the student's class built in the runner: its linear layers, of the sizes the
    runner reported (the check fills them with the trained weights), and a forward that runs the student's
    forward in the runner with those weights."""

    def __init__(self, runner_: Runner, reply: dict):
        super().__init__()
        self.runner, self.handle, self.sent = runner_, reply.get("module"), False
        linears = reply.get("linears") if isinstance(reply.get("linears"), dict) else {}
        for name, sizes in list(linears.items())[:20]:
            if _linear(name, sizes):
                setattr(self, name, torch.nn.Linear(sizes[0], sizes[1], bias=sizes[2]))

    def forward(self, *args, **kwargs):
        weights = None if self.sent else {name: dict(m.state_dict()) for name, m in self.named_children()}
        self.sent = True
        return self.runner.call(self.handle, args, kwargs, weights, self.training)


def _linear(name, sizes) -> bool:
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_") \
        and not hasattr(torch.nn.Module, name) and isinstance(sizes, list) and len(sizes) == 3 \
        and all(type(s) is int and 0 < s <= 1 << 16 for s in sizes[:2]) and isinstance(sizes[2], bool)


NOTHING, UNREADABLE = "nothing", "unreadable"  # what a stand-in is when no definition came, or not one to read


def stand_in(runner_: Runner, defined) -> object:
    """What the worker's check is given in place of the student's definition."""
    if isinstance(defined, dict) and defined.get("callable") is True:
        return RemoteFunction(runner_)
    try:
        return decode(defined.get("value")) if isinstance(defined, dict) and "value" in defined else Opaque(NOTHING)
    except Unreadable:
        return Opaque(UNREADABLE)


def check_here(prepared, i: int, stand) -> object:
    """The pristine check of exercise i, run in the worker on the stand-in; its Verdict (or None when it raised)."""
    ex = prepared.lesson.exercises[i][1]
    namespace = dict(prepared.namespaces[i])
    namespace[ex.name] = stand
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return eval(ex.test, namespace)
    except Exception:
        return None


def grade(prepared, i: int, runner_: Runner, as_record) -> dict:
    """Exercise i's record: the runner's verdict, or, when it says right and the worker's check does not,
    the worker's. `as_record(ex, fields)` reads the runner's fields as a plain record. Gone when the runner
    ended before its verdict and how is not known (the grader then says the submission ended its process)."""
    ex = prepared.lesson.exercises[i][1]
    try:
        said = runner_.verdict(i)
    except Gone:
        if runner_.closed_its_pipes():
            return as_record(ex, {"outcome": "stopped", "code": f"{ex.key}.exited", "line": (
                f"✗ {ex.title}: your function closed files it did not open (os.close or os.closerange), among them "
                f"the pipe its answer goes back through, so no answer arrived: close only the files your own code "
                f"opened.")})
        if runner_.status is None:  # still running, or not ours to reap: the grader says what ended
            raise
        if runner_.status == -signal.SIGKILL:  # its sender cannot be told, and a kill of the whole group reaches
            # this process or the worker first by chance: both say one line, and the notebook is graded again
            line = f"✗ {ex.title}: not graded: {killed_by('SIGKILL')}, during this exercise."
            return dict(as_record(ex, {"outcome": "stopped", "code": f"{ex.key}.exited", "line": line}), again=True)
        return as_record(ex, {"outcome": "stopped", "code": f"{ex.key}.exited",
                              "line": f"✗ {ex.title}: {how_it_ended(runner_.status)}"})
    except Unreadable as err:  # (the runner stays marked broken: the next exercise gets a fresh one)
        return as_record(ex, _wrote_into_pipe(ex, f"its process sent {err}"))
    record = as_record(ex, said)
    if record["outcome"] == "patched":  # what it replaced may stay replaced there: the next exercise gets a fresh one
        runner_.broken = True
    if record["outcome"] != "right":
        return record
    stand = stand_in(runner_, said.get("defined"))
    if isinstance(stand, Opaque) and stand.kind in (NOTHING, UNREADABLE):  # "right" with no definition a runner
        runner_.broken = True  # sends ({"callable": True} or {"value": …}): only a record the submission wrote
        return as_record(ex, _wrote_into_pipe(ex, "a verdict of right came without an answer to check again"))
    here = check_here(prepared, i, stand)
    if here is not None and here.outcome == "right":
        return record
    runner_.broken = True  # what it sends next may be out of step: the next exercise gets a fresh runner
    return as_record(ex, unconfirmed(ex, here, record))


def killed_by(name: str) -> str:
    """What a grading process killed by a signal is told (the worker's or its runner's: the same words)."""
    return (f"its grading process was killed by {name} (by the submission, by the machine when its memory ran out, "
            f"or by someone outside the grader; the same command grades it again)")


CRASHES = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT"}


def how_it_ended(status: int) -> str:
    """What the runner's exit status says of how the student's code ended it (sweep 27 E21: the line named
    every possible cause at once)."""
    if status >= 0:
        return (f"your function ended the process it ran in before it answered (exit status {status}: os._exit, or "
                f"a builtin such as len replaced, which the runner answers with): return the answer instead.")
    name = signal.Signals(-status).name if -status in set(signal.Signals) else f"signal {-status}"
    why = ("a crash in compiled code (torch, numpy or ctypes), or memory running out" if name in CRASHES else
           "its CPU-time limit" if name == "SIGXCPU" else "a signal the submission sent (os.kill)")
    return (f"the process running your function was ended by {name} before it answered ({why}): run it in the "
            f"notebook on a fresh kernel; it should return its answer without ending Python.")


def _wrote_into_pipe(ex, what: str) -> dict:
    return {"outcome": "stopped", "code": f"{ex.key}.exited", "line": (
        f"✗ {ex.title}: not graded: the submission wrote into the grader's pipe, or replaced a builtin such as len "
        f"or isinstance that the runner answers with ({what}): write only to files your own code opened.")}


def unconfirmed(ex, here, record: dict) -> dict:
    """The worker's verdict on an answer the runner called right (what it printed is the runner's)."""
    why = ("The check run in the submission's own process said right; run again where none of its code runs, on "
           "the answers it gave, it does not: the submission changed the check or what the grader reads, or its "
           "function does not give the same answer twice.")
    # a second call that raised: the first call's leftovers (threads still running), not a forgery (sweep 30)
    if here is not None and (here.outcome == "raised" or ".error." in f".{here.code}") and \
            not here.code.endswith(".runner_lost"):  # (a runner that stopped answering may well be a forgery)
        why = ("Its first run, in the check of its own process, answered right; called again for the check that "
               "confirms it, it raised: a function must give its answer every time it is called.")
    if here is None:
        return dict(raised(ex, f"not confirmed. {why}"), printed=record.get("printed", ""))
    return {"outcome": here.outcome, "code": here.code, "line": f"{here.line.rstrip()} ({why})",
            "printed": record.get("printed", ""), "sure": here.sure}
