"""The process that runs a student's code: one per notebook (a fresh one after a runner that stopped
answering), forked by the grading worker (worker.py), which itself never runs any. It holds no pipe to the
grading process, only two to its worker, so whatever the student's code does (write a forged record, patch
the check, end the process) it can only speak to the worker, which reads what it says as plain data
(plain.py) and checks a ✓ again itself (confirm.py).

Its life: close every pipe but its two and give up every capability (it cannot open its worker's pipes
through /proc, nor ptrace it), then answer the worker. Asked to check exercise i, it runs the student's
definitions in that exercise's pristine namespace and the pristine check, as the notebook would, and sends
the verdict (the named mistake, what the function printed). Asked for a call, it runs the student's
function (or class, or a module that class built) on the worker's inputs, for the worker's own run of the
check, and sends the answer as data.
"""

from __future__ import annotations

import __future__
import ctypes
import os

import torch

from . import plain
from .confine import libc
from .messages import close_other_pipes, receive, send

MAX_REQUEST = 1 << 28  # bytes of one call from the worker (its inputs: 05's attentions are ~8 MB as text)
MAX_NUMBERS = 1 << 26  # numbers in one call from the worker (the capstone's weights are 2.4 million)
PR_SET_NO_NEW_PRIVS = 38


def start(prepared, taken: list, closes: list[int]) -> tuple[int, int, int]:
    """Fork a runner for this notebook's definitions (`taken`, one per exercise); (its pid, the pipe to it,
    the pipe from it). `closes`: the worker's descriptors it must not hold (its pipe to the grading process)."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in closes + [to_w, from_r]:
                os.close(fd)
            close_other_pipes({to_r, from_w})
            give_up_privileges()
            serve(prepared, taken, to_r, from_w)
        except BaseException:
            pass
        finally:
            os._exit(0)
    os.close(to_r)
    os.close(from_w)
    return pid, to_w, from_r


def give_up_privileges() -> None:
    """No capability left, and none regained by exec (no_new_privs): with its worker not dumpable, /proc/PID/fd,
    /proc/PID/mem and ptrace of the worker are refused, root included."""
    lib = libc()
    if lib is None:
        return
    lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    lib.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)())  # _LINUX_CAPABILITY_VERSION_3, all zero


def check(prepared, i: int, taken) -> tuple[dict, dict]:
    """Run the student's definitions in exercise i's namespace, then the pristine check on them:
    (the verdict as plain fields, the namespace)."""
    ex = prepared.lesson.exercises[i][1]
    namespace = dict(prepared.namespaces[i])
    flags = __future__.annotations.compiler_flag  # annotations stay text: nothing of theirs is evaluated
    try:
        exec(compile(taken.code, f"<{ex.name}>", "exec", flags=flags, dont_inherit=True), namespace)
    except Exception as err:  # an import that fails, a class whose base is wrong
        return {"outcome": "raised", "code": f"{ex.key}.raised",
                "line": f"✗ {ex.title}: the definitions raised {type(err).__name__}: {str(err)[:200]}"}, namespace
    try:
        verdict = eval(ex.test, namespace)
    except Exception as err:  # the check itself could not read what it was given
        return {"outcome": "raised", "code": f"{ex.key}.raised",
                "line": f"✗ {ex.title}: the check could not grade it ({type(err).__name__}: {str(err)[:200]})"}, namespace
    return {"outcome": verdict.outcome, "code": verdict.code, "line": verdict.line, "printed": verdict.printed,
            "sure": verdict.sure}, namespace


def serve(prepared, taken: list, inbox: int, outbox: int) -> None:
    """Answer the worker until it closes the pipe: a check (the verdict and what the student defined), or a
    call of what the last checked exercise defined."""
    defined, handles = None, {}
    while True:
        request = receive(inbox, MAX_REQUEST)  # the worker's: it ends the loop by closing the pipe (Gone)
        if "check" in request:
            i = int(request["check"])
            verdict, namespace = check(prepared, i, taken[i])
            defined, handles = namespace.get(prepared.lesson.exercises[i][1].name), {}
            said = {"callable": True} if callable(defined) else {"value": _encoded(defined)}
            send(outbox, dict(verdict, kind="verdict", defined=said))
        else:
            send(outbox, answer(request, defined, handles))


def _encoded(value):
    """The value as data; a value that cannot be written (too deep, a tensor that will not copy) as opaque."""
    try:
        return plain.encode(value)
    except Exception as err:  # whatever the student's object raises while it is read
        return {"opaque": str(err)[:60]}


def answer(request: dict, defined, handles: dict) -> dict:
    """One call: the student's object (or a module it built) on the worker's inputs; the answer as data."""
    target = defined if request.get("target") == "defined" else handles.get(request.get("target"))
    try:
        with torch.no_grad():
            if request.get("weights") is not None:  # the check's weights, loaded into the module's linear layers
                for name, state in plain.decode(request["weights"], MAX_NUMBERS).items():
                    getattr(target, name).load_state_dict(state)
            if isinstance(target, torch.nn.Module):
                target.train(bool(request.get("training")))
            args, kwargs = plain.decode(request.get("args"), MAX_NUMBERS), plain.decode(request.get("kwargs"))
            got = target(*args, **kwargs)
    except BaseException as err:  # exit(), the student's bug, a time-limit alarm: an error as data
        return {"kind": "answer", "raised": type(err).__name__[:60], "message": str(err)[:500]}
    if isinstance(got, torch.nn.Module):  # a module the student's class built: the worker gets a stand-in
        handles[len(handles) + 1] = got
        linears = {name: [m.in_features, m.out_features, m.bias is not None]
                   for name, m in list(got.named_children())[:20] if isinstance(m, torch.nn.Linear)}
        return {"kind": "answer", "module": len(handles), "linears": linears}
    return {"kind": "answer", "answer": _encoded(got)}
