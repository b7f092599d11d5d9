"""The one verdict engine behind every exercise check of notebooks 01-07.

An Exercise holds the inputs to try (two or more sizes), the reference, and a catalogue of
Mistakes: small wrong variants of the reference, each with a stable code and one line saying what
went wrong and what to do. `grade(exercise, fn)` computes the reference first, on private copies,
then runs the student's function on copies of every input in this process (sandbox.py: what it
patches is put back and named, an input it edits in place is named, a loop is stopped at the time
limit; os._exit ends the kernel, as anywhere in Python), reads the answers as plain float64 numbers,
and returns a Verdict (verdict.py) whose line is:
- "✓ …" when the answer is right on every input;
- "✗ …" naming the catalogued mistake it matches (a raised error is matched too: a variant that
  raises the same error names it), else NaN, half precision, the shape, or, last, "numbers differ".
  A mistake is named when it explains the answers on every input, or, said as a possibility with
  the input it matches on, when it contradicts no input the student got right;
- "… not attempted yet" when the function still returns None without printing, or its own stub
  raises NotImplementedError (not when torch raises one for the student's code, as for `d ^ 0.5`).
Expected answers are computed after putting back anything a notebook cell replaced in math, torch,
numpy or helpers (sandbox.py). `check` prints the line.
"""

from __future__ import annotations

import dis
import functools
import inspect
import re

import numpy as np
import torch

from ..core.evaluation import one_thread
from . import diagnosis, sandbox, solutions
from .verdict import _ALL, _HALF, _ISFINITE, _ISNAN  # captured when the checks load
from .verdict import ENGINE_CODES, Exercise, Verdict, close, engine_verdict

NOT_ATTEMPTED = "not attempted yet"


# --- the catalogued mistakes' answers on an exercise's inputs: computed once, kept on the Exercise ------
# A check compares the student's answer with every mistake's answer on the same inputs. The capstone has
# hundreds of mistakes (two slips at once), each a full attention layer: computed again for every wrong
# answer that took tens of seconds; kept, the second wrong answer costs nothing.
def _args64(ex: Exercise, k: int) -> tuple:
    """Input k as the reference reads it: a fresh copy, in float64 unless the exercise needs exact inputs."""
    args = ex.cases[k][1]
    return sandbox.clone_args(args) if ex.exact_inputs else sandbox.clone_args(args, torch.float64)


def _reference(ex: Exercise, n: int):
    """The reference's answer on input n, read as plain numbers; kept."""
    if (n, "reference") not in ex.answers:
        given = _args64(ex, n)
        ex.answers[n, "reference"] = ex.read(ex.reference(*sandbox.clone_args(given)), given)[0]
    return ex.answers[n, "reference"]


def _mistake_answer(ex: Exercise, n: int, m: int, given: tuple):
    """The m-th mistake's answer on input n, read like the student's (None where it raises); kept."""
    if (n, m) not in ex.answers:
        try:
            wrong, problem = ex.read(ex.mistakes[m].answer(*sandbox.clone_args(given)), given)
        except Exception:  # a variant that raises on these inputs cannot match an answer
            wrong, problem = None, "raised"
        ex.answers[n, m] = None if problem else wrong
    return ex.answers[n, m]


def _mistake_error(ex: Exercise, k: int, m: int) -> BaseException | None:
    """The error the m-th mistake raises on input k as the student got it (None if it raises none); kept."""
    if (k, m, "error") not in ex.answers:
        try:
            ex.mistakes[m].answer(*sandbox.clone_args(ex.cases[k][1]))
            ex.answers[k, m, "error"] = None
        except Exception as theirs:
            ex.answers[k, m, "error"] = theirs
    return ex.answers[k, m, "error"]


# --- the verdict --------------------------------------------------------------------------------------


def _fits(ex: Exercise, m: int, k: int, seen: tuple, args64: tuple) -> bool:
    """Does the m-th mistake explain what the student's function did on input k? `seen` is
    ("right", value), ("answer", value) or ("error", exception); a variant that is right there fits
    a right answer, and one that raises the same error fits an error."""
    kind, got = seen
    if kind == "error":
        theirs = _mistake_error(ex, k, m)
        return theirs is not None and type(got) is type(theirs) and str(got) == str(theirs)
    wrong = _mistake_answer(ex, k, m, args64)
    if wrong is None and not (ex.none_is_answer and _mistake_error(ex, k, m) is None):
        return False  # the variant raises here (or gives nothing readable); None itself may be an answer
    if ex.same(got, wrong, args64):
        return True
    expected = ex.answers[k, "reference"]
    return kind == "right" and (ex.right(wrong, expected, args64) if ex.right else ex.same(wrong, expected, args64))


def _named(ex: Exercise, n: int, seen: dict) -> tuple[str, str, bool] | None:
    """(line, mistake code, sure?) of the first catalogued mistake that matches the student's wrong
    answer on input n and explains every other input the function ran on too (÷ d/2 and a fixed 8
    agree when d = 16, not after). Failing that, one that matches on input n and contradicts no input
    the student got right, said as a possibility with the input it matches on and the one it does
    not: two slips at once, or one the catalogue does not know."""
    others = [k for k in seen if k != n]
    fits = []  # tried in the catalogue's order, and the first that explains every input wins: the capstone's
    for m in range(len(ex.mistakes)):  # hundreds of pairs are computed only when no single slip does
        if _fits(ex, m, n, seen[n], _args64(ex, n)):
            if all(_fits(ex, m, k, seen[k], _args64(ex, k)) for k in others):
                return ex.mistakes[m].says, ex.mistakes[m].code, True
            fits.append(m)
    for m in fits:
        if all(seen[k][0] != "right" or _fits(ex, m, k, seen[k], _args64(ex, k)) for k in others):
            wrong_on = [k for k in others if seen[k][0] != "right"]
            if not wrong_on:
                return ex.mistakes[m].says, ex.mistakes[m].code, True
            if ex.tensor and all(_near(ex, m, k, seen[k]) for k in wrong_on):
                return (f"possibly this: {ex.mistakes[m].says.rstrip('.')} — that explains your answer on "
                        f"{ex.cases[n][0]}, but not on {ex.cases[wrong_on[0]][0]}, where something else differs too."), \
                    ex.mistakes[m].code, False
    return None


def _fitted_everywhere(ex: Exercise, seen: dict) -> bool:
    """Does one constant (explain's fitted divisor or factor) reproduce every wrong answer exactly? Then that line
    beats a slip offered as a possibility: ÷ 2√d is ÷ d/2 when d = 16 and not after, and was told "possibly `d ** 1/2`"."""
    wrong = [k for k in seen if seen[k][0] == "answer"]
    return bool(ex.explain and ex.tensor and wrong) and all(
        isinstance(seen[k][1], np.ndarray) and seen[k][1].shape == np.shape(_reference(ex, k))
        and _ALL(_ISFINITE(seen[k][1]))
        and ex.explain(seen[k][1], _reference(ex, k), _args64(ex, k))[2:] in (("fitted_divisor",), ("fitted_factor",))
        for k in wrong)


def _near(ex: Exercise, m: int, k: int, seen: tuple) -> bool:
    """Is the student's answer on input k at least as near the m-th mistake's answer as the right one,
    with its shape? (Else a slip that explains one input only is no diagnosis to offer.)"""
    if seen[0] != "answer":
        return False
    wrong, expected = _mistake_answer(ex, k, m, _args64(ex, k)), _reference(ex, k)
    got = seen[1]
    if not all(isinstance(a, np.ndarray) for a in (wrong, got)) or got.shape != wrong.shape or not got.size:
        return False
    if not isinstance(expected, np.ndarray) or expected.shape != got.shape:
        return True  # the slip's shape, which the right answer does not have
    with np.errstate(invalid="ignore"):
        return bool(np.nanmax(np.abs(got - wrong)) < 0.5 * np.nanmax(np.abs(got - expected)))


Said = tuple  # (line, code, outcome, sure): what a verdict says about a wrong answer
_FIXED_HINT = {"wrong_shape", "numbers_differ", "raised", "fitted_divisor", "fitted_factor"}  # no slip named:
# when such an answer was right on the first input, the verdict adds that something is fixed to its size


def _wrong_answer(ex: Exercise, n: int, got, value, expected, args64: tuple, seen: dict) -> Said:
    """What is wrong with a readable answer that is not right on input n: a catalogued slip that explains
    every input; else what the answer is (its relation to the right one, diagnosis.py); else a slip as a
    possibility; else what property it fails."""
    named = _named(ex, n, seen)
    if ex.tensor and value.size and _ALL(_ISNAN(value)):  # NaN everywhere fits many slips: name one as a possibility
        if named:
            return (f"every number of your answer is NaN; one slip that gives exactly that: {named[0]}"), \
                named[1], "mistake", False
        return ("every number of your answer is NaN: follow one step at a time on a small input and print "
                "where the NaN first appears (a -inf before the softmax, a 0/0, a √ of a negative number?)."), \
            "nan_everywhere", "mistake", True
    if named and named[2]:
        return named[0], named[1], "mistake", True
    if ex.tensor:
        if isinstance(got, torch.Tensor) and not got.dtype.is_floating_point and not got.is_complex() and \
                value.shape == expected.shape and not _ALL(expected == np.round(expected)):
            return (f"your tensor holds whole numbers ({got.dtype}) where the answer has fractions: a .long(), "
                    f".int() or .bool(), or a tensor made with integers, dropped them; keep float32."), \
                "integer_dtype", "mistake", True
        if isinstance(got, torch.Tensor) and got.dtype in _HALF and close(value, expected, 5e-2, 5e-2):
            return (f"computed in half precision ({got.dtype}): the numbers are right to about 3 digits only; "
                    f"keep the inputs' float32 (drop .half() / .bfloat16())."), "half_precision", "mistake", True
        if isinstance(got, (tuple, list)) and len(got) > 1 and value.shape[1:] == expected.shape:
            return (f"returned {len(got)} things (a {type(got).__name__}): return only the result, "
                    f"{list(expected.shape)}."), "returned_several", "mistake", True
        seen_as = diagnosis.describe(value, expected, args64, ex.batch_first)
        if seen_as:
            return seen_as[0], seen_as[1], "mistake", True
    if named and not _fitted_everywhere(ex, seen):
        return named[0], named[1], "mistake", named[2]
    if ex.tensor:
        if not _ALL(_ISFINITE(value)):
            return ("your answer contains NaN or inf (e.g. a softmax over a row that is all -inf, -inf written "
                    "after the softmax, or 0 × inf); check each step on a small input."), "nan_or_inf", "mistake", True
        if value.shape != expected.shape:
            said = ("one number (shape [])" if value.ndim == 0 and expected.ndim else f"wrong shape {list(value.shape)}")
            line = f"{said}, expected {list(expected.shape)}. {ex.shape_hint}".rstrip()
            if value.ndim == 0 and expected.ndim:
                line += " A .sum(), .mean(), .max() or .item() turns a tensor into one number."
            return line, "wrong_shape", "generic", True
    if ex.explain:
        line, named, *code = ex.explain(value, expected, args64)
        code = code[0] if code else ("explained" if named else "numbers_differ")
        if code == "numbers_differ" and ex.tensor:
            line = diagnosis.property_line(value, expected, ex.batch_first)
        return line, code, "mistake" if code != "numbers_differ" else "generic", True
    if ex.tensor:
        return diagnosis.property_line(value, expected, ex.batch_first), "numbers_differ", "generic", True
    return "the answer differs from the right one.", "numbers_differ", "generic", True


def _error_verdict(ex: Exercise, n: int, err: BaseException, label: str, seen: dict) -> Said:
    """The mistake that raises the same error (and fits the other inputs), else a translation."""
    named = _named(ex, n, seen)
    if named:
        return named[0], named[1], "mistake", named[2]
    line, code = diagnosis.translate_error(err, label, ex.sizes)
    return line, code, ENGINE_CODES[code][0], True


def _outcomes(ex: Exercise, fn, seconds: float) -> tuple[list[sandbox.Outcome], str]:
    """The student's function on copies of every input, after the reference (on its own copies) is
    computed; a plain answer needs no run."""
    with torch.no_grad():
        for n in range(len(ex.cases)):
            _reference(ex, n)
    if not callable(fn):
        return [sandbox.Outcome(answer=fn, attempted=fn is not None and fn is not Ellipsis)] * len(ex.cases), ""
    with torch.no_grad():
        return sandbox.run_cases(fn, [sandbox.clone_args(args) for _, args in ex.cases], seconds)


_RAISE = dis.opmap["RAISE_VARARGS"]
_STUB_OPS = {"RESUME", "NOP", "CACHE", "EXTENDED_ARG", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST"}  # `...`, pass,
# a docstring, return None: what a stub's body compiles to on Python 3.10-3.13


def _last_step(fn) -> str | None:
    """For a function that returned None and is not a stub (comments and docstrings count as nothing, read from
    its bytecode): what its return is missing, from its last step. None for a stub. A module: its forward."""
    module = fn if isinstance(fn, type) else type(fn)  # the capstone's class, or a module made from it
    called = module.forward if issubclass(module, torch.nn.Module) else getattr(fn, "__func__", fn)
    code = getattr(called, "__code__", None)
    steps = [i for i in dis.get_instructions(code) if i.opname not in _STUB_OPS] if code is not None else []
    if not steps:
        return None
    if steps[-1].opname in ("STORE_FAST", "STORE_NAME", "STORE_DEREF"):
        name = steps[-1].argval
        return f"its last line stores `{name}`; end it with return and the result (`return {name}`, if {name} is " \
               f"the answer)."
    if steps[-1].opname == "POP_TOP":
        return "write return in front of its last line (the value computed there is dropped)."
    return "end it with return and the result (a function without return hands back None)."


def is_stub(err: BaseException | None, fn) -> bool:
    """NotImplementedError from the student's own stub: with no message, or raised by a `raise` statement
    of the student's code (fn: their function or class). Not one torch raises for their code (`Q @ K.T / d ^ 0.5`: XOR of floats)."""
    if type(err) is not NotImplementedError:
        return False
    if not str(err):
        return True
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    code = tb.tb_frame.f_code
    theirs = {c for f in sandbox.functions(fn) for c in sandbox.code_objects(f.__code__)}
    return code in theirs and 0 <= tb.tb_lasti < len(code.co_code) and code.co_code[tb.tb_lasti] == _RAISE


def _seen(ex: Exercise, outcome: sandbox.Outcome, n: int) -> tuple | None:
    """What the function did on input n, for _fits: ("right"|"answer", value), ("error", exc) or None."""
    if outcome.error is not None:
        return "error", outcome.error
    if outcome.problem or outcome.patched or not outcome.attempted:
        return None
    value, problem = ex.read(outcome.answer, _args64(ex, n))
    if problem:
        return None
    expected = _reference(ex, n)
    right = ex.right(value, expected, _args64(ex, n)) if ex.right else ex.same(value, expected, _args64(ex, n))
    return ("right" if right else "answer"), value


def _put_back(ex: Exercise) -> tuple[Verdict | None, str]:
    """Undo what a notebook cell replaced in math, torch, numpy or helpers before anything is computed:
    (a verdict when something could not be put back, else None; a note naming what was put back)."""
    sandbox.SNAPSHOT.extend()
    before = sandbox.changes(sandbox.SNAPSHOT, cells_only=True)
    lost = sandbox.restore(sandbox.SNAPSHOT, cells_only=True) if before else []
    if lost:
        return engine_verdict(ex.key, "notebook_patched", (
            f"✗ {ex.name}: a cell of this notebook replaced {', '.join(lost)}, which the checks use and cannot "
            f"put back: restart the kernel (Kernel → Restart) and run the cells again without that line.")), ""
    return None, (f" (A cell had replaced {', '.join(before)}; the check put the original back.)" if before else "")


def _problem(ex: Exercise, outcome: sandbox.Outcome, fn, printed: str, source=None) -> Verdict | None:
    """The verdict for an input on which the function gave no answer to read, else None."""
    if outcome.patched:
        n = len(outcome.patched)  # the first five named, and how many more
        names = ", ".join(f"`{name}`" for name in outcome.patched[:5]) + f" and {n - 5} more" * (n > 5)
        what = "Python's builtins" if all(p.startswith("builtins.") for p in outcome.patched) else "the libraries"
        return engine_verdict(ex.key, "patched", f"✗ {ex.name}: your function replaced {names}; the check puts "
                              f"{'them' if n > 1 else 'it'} back and does not accept this answer: compute it "
                              f"with {what} as they are.", printed)
    if not outcome.attempted:
        if callable(fn) and printed:
            return engine_verdict(ex.key, "printed_not_returned", (
                f"✗ {ex.name}: your function printed something but returned None: end it with return (print shows "
                f"a value, return hands it to the check)."), printed)
        module = isinstance(fn, torch.nn.Module) or source is not None  # then its forward is the stub
        what = "forward" if module else "the function"
        last = _last_step(fn if source is None else source)
        if last is not None:
            return engine_verdict(ex.key, "no_return", f"✗ {ex.name}: your {'forward' if module else 'function'} "
                                                       f"computes something but returns None: {last}", printed)
        return engine_verdict(ex.key, "not_attempted", f"… {ex.name}: {NOT_ATTEMPTED} ({what} returned None). "
                                                       f"The notebook goes on with the reference.", printed)
    if outcome.problem:
        return engine_verdict(ex.key, outcome.code or "exited", f"✗ {ex.name}: {outcome.problem}", printed)
    if is_stub(outcome.error, fn if source is None else source):  # the stub nbgrader writes: `raise NotImplementedError()`
        return engine_verdict(ex.key, "not_attempted", f"… {ex.name}: {NOT_ATTEMPTED} (the function raises "
                                                       f"NotImplementedError, the stub). The notebook goes on with "
                                                       f"the reference.", printed)
    return None


def grade(ex: Exercise, fn, plain_answer_ok: bool = False, source=None) -> Verdict:
    """The Verdict on the student's `fn` (or plain answer) on every input of `ex`; `source` is what the
    student wrote when `fn` wraps it (the capstone's class), read for the notebook variables it uses."""
    seconds = float(sandbox.TIME_LIMIT_S)  # read before any student code runs
    stop, note = _put_back(ex)
    if stop is not None:
        return stop
    if not callable(fn) and not plain_answer_ok:
        return engine_verdict(ex.key, "not_a_function", f"✗ {ex.name}: expected a function, got {type(fn).__name__}; "
                                                        f"pass the function itself, not its result.")
    outcomes, printed = _outcomes(ex, fn, seconds)
    if ex.none_is_answer and any(o.attempted and o.error is None and not o.problem for o in outcomes):
        outcomes = [sandbox.Outcome(answer=None, changed=o.changed, changed_values=o.changed_values) if _plain_none(o)
                    else o for o in outcomes]
    values, seen = [], {}
    for n, (label, args) in enumerate(ex.cases):
        outcome, args64 = outcomes[n], _args64(ex, n)
        stopped = _problem(ex, outcome, fn, printed, source)
        if stopped is not None:
            return stopped
        expected = _reference(ex, n)
        if outcome.error is None:
            value, problem = ex.read(outcome.answer, args64)
            if problem:  # a tuple of tensors: the slip 01's checks call returned_several (one code for one slip);
                # a reader may name the code itself, (line, code): 04's float head size is 07's float_size (sweep 31)
                problem, code = problem if isinstance(problem, tuple) else \
                    (problem, "returned_several" if _several(outcome.answer) else "unreadable")
                return engine_verdict(ex.key, code, f"✗ {ex.name}: {problem}{note}", printed)
            if (ex.right(value, expected, args64) if ex.right else ex.same(value, expected, args64)):
                if ex.tensor and _pieces(outcome.answer):
                    return engine_verdict(ex.key, "not_stacked", (
                        f"✗ {ex.name}: the numbers are right, but you returned a {type(outcome.answer).__name__} of "
                        f"{len(outcome.answer)} tensors: torch.stack them into one tensor {list(value.shape)}.{note}"),
                        printed)
                values.append(value)
                seen[n] = ("right", value)
                continue
        seen[n] = _seen(ex, outcome, n)
        for k in range(n + 1, len(outcomes)):  # the other inputs tell apart slips that agree on this one
            other = _seen(ex, outcomes[k], k)
            if other is not None:
                seen[k] = other
        if outcome.error is not None:
            line, code, kind, sure = _error_verdict(ex, n, outcome.error, label, seen)
        else:
            line, code, kind, sure = _wrong_answer(ex, n, outcome.answer, value, expected, args64, seen)
            if ex.show_case:
                line = line.rstrip(".") + f" ({label}: expected {_show(expected)}, got {_show(value)})."
        relation = code in diagnosis.CODES  # what the answer is; a notebook variable read says why, when the
        same_shape = outcome.error is None and getattr(value, "shape", None) == getattr(expected, "shape", None)  # shape broke
        if not sure or relation or code not in _KEEP and code not in {m.code for m in ex.mistakes} or \
                code.endswith(_WRITTEN_IN):  # a number written in: a notebook variable read, when there is one, says why
            told = diagnosis.told(fn if source is None else source, ex.cases[n][1], outcome.error,
                                     None if outcome.error is not None else value, expected, code, ex.sizes,
                                     broken_only=relation and same_shape)
            if told:
                (line, code), kind, sure = told, "mistake", True
        if n == 0 and code in _GENERIC:  # wrong from the first input: does the answer move with the inputs at all?
            fixed = _fixed_answer(ex, outcomes, seen)
            if fixed:  # the evidence first, then what the general line said, then the case shown
                case = f" ({label}: expected {_show(expected)}, got {_show(value)})." if ex.show_case else ""
                rest = line.removesuffix(case).rstrip(".")
                line = f"{fixed[0]} {rest[:1].upper()}{rest[1:]}{case or '.'}"
                code, kind, sure = fixed[1], "mistake", True
        if n > 0 and code in _FIXED_HINT:
            line = line.rstrip(".") + f". It was right on the first input ({ex.cases[0][0]}) but not on {label}"
            fixed = diagnosis.fixed_to_first(ex, n, seen[0][1], None if outcome.error is not None else value,
                                            expected, outcome.error)
            line += f": {ex.fixed}" if fixed else "."
        default = _default_in(fn if source is None else None, len(args), line)
        if default:
            line = line.rstrip(".") + (f". It comes from your default argument {default}, which Python computes once, "
                                       f"when the cell runs, from the notebook's variables: compute it inside the "
                                       f"function, from its inputs.")
        changed = _changed(outcomes)
        if changed:
            line = line.rstrip(".") + f". Also: {changed}"
        return Verdict(ex.key, kind, f"{ex.key}.{code}", f"✗ {ex.name}: {line}{note}", printed, sure)
    changed = _changed(outcomes)
    if changed:
        return engine_verdict(ex.key, "changed_input", f"✗ {ex.name}: the numbers are right, but {changed}{note}",
                              printed)
    line = ex.praise(values) if ex.praise else (
        f"✓ {ex.name}: correct on {len(ex.cases)} inputs of different sizes "
        f"({', '.join(label for label, _ in ex.cases)}).")
    return engine_verdict(ex.key, "right", line + note, printed)


def _default_in(fn, passed: int, line: str) -> str:
    """`d=768` when a number the line names is the value of a default argument the check does not pass (`def
    f(Q, K, d=Q.shape[-1])`: set once, from the notebook's Q, when the cell ran), else ""."""
    fn = getattr(fn, "__func__", fn)
    defaults, code = getattr(fn, "__defaults__", None) or (), getattr(fn, "__code__", None)
    count = code.co_argcount if code is not None else 0
    for at, (name, value) in enumerate(zip(code.co_varnames[count - len(defaults):count] if code else (), defaults)):
        if count - len(defaults) + at < passed:  # given by the check: its default is not used
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value not in (0, 1) and \
                re.search(rf"(?<![\d.]){re.escape(f'{value:g}')}(?![\d.])", line):
            return f"{name}={value:g}"
    return ""


_GENERIC = {"wrong_shape", "numbers_differ"}  # no slip named, so "the same answer on every input" says more


def _fixed_answer(ex: Exercise, outcomes: list, seen: dict) -> tuple[str, str] | None:
    """diagnosis.fixed_answer on every input's answer, when each was read (one may be right: a written-in
    (4, 768) is right on the input of 4 tokens and width 768)."""
    if any(seen.get(k) is None or seen[k][0] == "error" for k in range(len(outcomes))):
        return None
    return diagnosis.fixed_answer([seen[k][1] for k in range(len(outcomes))],
                                  [_reference(ex, k) for k in range(len(outcomes))],
                                  ex.sizes if ex.sizes != Exercise.sizes else None)  # the default names x.shape


def _plain_none(outcome: sandbox.Outcome) -> bool:
    """The function returned None (or `...`) without an error, patch or problem."""
    return not outcome.attempted and outcome.error is None and not outcome.problem and not outcome.patched


def _changed(outcomes: list[sandbox.Outcome]) -> str:
    """The sentence naming what the function changed in place ("" when nothing): in the notebook these
    would be the notebook's own tensors, changed for every later cell."""
    names = list(dict.fromkeys(name for o in outcomes for name in o.changed))
    if not names:
        return ""
    args = [n for n in names if not n.startswith("the notebook's")]
    first = args[0] if args else names[0]
    what = " and ".join(f"`{n}`" if n in args else n for n in names[:3])
    values = [a for o in outcomes for a in o.changed_values]
    if not args:  # only notebook variables: a `global X` rebound, or a notebook tensor edited in place
        bare = first.split("`")[1] if "`" in first else first
        fix = (f"leave {bare} to the notebook and use a local name inside the function (no `global {bare}`, "
               f"no {bare} /= c or {bare}[…] = …)")
    elif not values or any(isinstance(a, torch.Tensor) for a in values):
        fix = f"compute into a new tensor ({first} = {first} / c, not {first} /= c, {first}.div_(c) or {first}[...] = …)"
    else:
        fix = f"work on a copy ({first} = list({first}) or dict({first})) or compute a new value, not .pop/.append/[…] ="
    how = " in place" if args else ""  # a notebook name may have been rebound (`global X`), not edited
    return f"your function changed {what}{how}; {fix}, so the notebook's own stays as it was."


def _several(got) -> bool:
    return isinstance(got, (tuple, list)) and len(got) > 1 and isinstance(got[0], torch.Tensor)


_WRITTEN_IN = ("fixed_head_count", "fixed_head_count_split")  # catalogued, but a notebook global names the cause
_KEEP = {"fitted_divisor", "fitted_factor", "half_precision", "returned_several", "float_size"}  # exact; a global does not beat them


def _pieces(answer) -> bool:
    """A tuple or list of tensors (x.chunk(n) never stacked), where one tensor is asked for."""
    return isinstance(answer, (tuple, list)) and any(isinstance(a, (torch.Tensor, np.ndarray)) for a in answer)


def _show(value) -> str:
    return f"{value:.0%}" if isinstance(value, float) else str(value)


def notebook_check(check_fn):
    """`check_fn` as a notebook calls it (the facade wraps every check with it). A call without the function, or
    with more than it takes (H.check_attention_weights(), H.check_attention_weights(attention_weights, Q)), gets
    one line instead of a TypeError traceback: Python refuses such a call before the check's own first line runs.
    The check runs on one torch thread: its products are tiny, and on a laptop busy with anything else two
    threads wait on each other (the capstone's first check was several times slower on two threads than on one
    beside busy processes)."""
    signature = inspect.signature(check_fn)
    asked = check_fn.__name__.removeprefix("check_")  # the exercise's function, where the check is named after it
    asked = asked if asked in solutions.SOLUTIONS else ""

    @functools.wraps(check_fn)
    def call(*args, **kwargs):
        try:
            signature.bind(*args, **kwargs)
        except TypeError as err:
            print(f"✗ H.{check_fn.__name__}: {err} (Python's words): pass it your function itself, the one the "
                  f"exercise asks for, as the exercise's cell does: H.{check_fn.__name__}(your_function).")
            return None
        given = getattr(args[0] if args else None, "__name__", "")
        if asked and given != asked and given in solutions.SOLUTIONS:  # another exercise's function, e.g. copied
            print(f"✗ H.{check_fn.__name__}: you passed {given}, the function of another exercise: pass {asked}, "
                  f"the one this exercise asks for.")
            return None
        with one_thread():
            return check_fn(*args, **kwargs)
    return call


def check(ex: Exercise, fn, plain_answer_ok: bool = False, source=None) -> Verdict:
    """Print what the student's code printed (truncated), then the verdict line; return the Verdict."""
    verdict = grade(ex, fn, plain_answer_ok, source)
    try:
        if verdict.printed:
            print(verdict.printed, end="" if verdict.printed.endswith("\n") else "\n")
        print(verdict.line)
    except (OSError, ValueError):  # the student's code closed the output (os.close(1)): the verdict stands (sweep 27)
        pass
    return verdict
