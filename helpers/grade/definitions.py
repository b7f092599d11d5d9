"""What the grader takes from a student's notebook, inside the worker that grades it (never in the grading
process): its cells, then for each exercise plain definitions, nothing that runs.

Reading the bytes: any failure is one line that says what was wrong and the fix: not JSON (truncated),
nested past what a parser can follow, no cells, an nbformat other than 4 (the number 4 written as text
is read), too many cells. JSON in UTF-8 (with or without a BOM), UTF-16 or UTF-32 is read. Only the
cells' types, sources and metadata are kept; outputs are dropped as the file is read.

For the exercise `name` the grader takes the LAST code cell that defines `name` at its top level (as
running the notebook top to bottom would leave it), its IPython magics and shell lines (`%%time`, `!pip`)
read as blank lines. From the code cells above it, only (and the constants described below):
- `import …` and `from … import …` lines (the first cell's `import math` is where a notebook keeps it);
- function definitions (`def`) whose default values are constants or simple expressions, with no decorator but
  @torch.no_grad(), @torch.inference_mode(), @staticmethod, @classmethod, @property, a library's
  (LIBRARY_DECORATORS: @dataclass, @lru_cache(maxsize=None), … with constant arguments) or a function of the
  student's taken above (`@logged`, which runs as the helper is defined, in the runner);
- class definitions (`class X(nn.Module):`, `@dataclass class Shapes:`) whose body holds only such functions,
  constants and annotations (`T: int`);
each in a `try`, so one that fails here (`import seaborn`) costs only its names. From that cell, the same,
and assignments to names (`POWER, AXIS = 0.5, -1`, `SCALE: float = 0.125`) of a constant or of a simple
expression: names, attributes, arithmetic, lists, dicts and comprehensions of these (`SIZES = [768 // h for h in
HEADS]`), and calls of SIMPLE_CALLS (float, int, range, len, …), math.*, torch.device and torch.cuda.is_available, the library calls
of LIBRARY_CALLS (`HeadInfo = namedtuple("HeadInfo", "size params")`, `torch.finfo(…)`, `np.dtype(…)`,
`logging.getLogger(…)`), and `a if c else b`
(`NEG = -float("inf")`, `SCALE = 1 / math.sqrt(64)`, `softmax = torch.softmax`, `device = torch.device("cpu")`),
or a lambda whose default values are such (`sm = lambda x: x.softmax(-1)`: its body runs only when called).
Such a constant of a cell above is taken too, but never one whose name the lesson's own cells set (the
check reads theirs from the pristine lesson), and a later line the grader leaves out that sets it again
removes it, as in the notebook.
Everything else (the check call, prints, other top-level code) is left out, and so are the cells'
outputs, so no code of the student runs until the check calls the function; a name the function uses
that only a left-out line sets (a call, an `if` block, a decorated helper) is named in the verdict, and
`del NAME` removes what was taken, as in the notebook. The exercise's own statement is taken as written,
also where it runs code as it is defined (a decorator, a default value, a base class with __init_subclass__,
`name = partial(f, …)`, `name = my_function`): it runs in the runner, where the student's code runs anyway,
as the notebook ran it. It is refused in one line when what it reads then is set by no line the grader
takes (nor the lesson), when it sets `name` to what calling it returned, or when it is written indented
(inside a `try:` or an `if`), which Jupyter runs but the grader does not look into.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache

from .lessons import cell_statements, defined_names, plain_python

MAX_CELLS = 20_000
ALLOWED_DECORATORS = {"torch.no_grad()", "torch.inference_mode()", "torch.no_grad", "torch.inference_mode",
                      "staticmethod", "classmethod", "property"}  # torch takes both forms
BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)  # statements holding statements
SIMPLE_CALLS = {"float", "int", "abs", "round", "min", "max", "range", "len", "enumerate", "zip", "sum", "sorted",
                "reversed", "list", "tuple", "dict", "set", "str", "bool"}  # builtins a simple assignment may call (and math.*)
TORCH_CALLS = {"torch.device", "torch.cuda.is_available", "torch.backends.mps.is_available"}  # `device = …` lines
# library calls and decorators that run no code of the student's: `HeadInfo = namedtuple(…)`, `@dataclass` helpers
LIBRARY_CALLS = {"namedtuple", "collections.namedtuple", "NamedTuple", "typing.NamedTuple", "torch.finfo",
                 "torch.iinfo", "logging.getLogger",  # and numpy's number types and their sizes (sweep 26)
                 *(f"{np}.{call}" for np in ("np", "numpy") for call in ("dtype", "finfo", "iinfo", "float16",
                                                                        "float32", "float64", "int32", "int64")),
                 # a softmax made once, a -inf or a mask built above the def, as PyTorch tutorials write them: the
                 # notebook's check said ✓ and the grader "a line it does not run" (sweep 31)
                 "partial", "functools.partial", "nn.Softmax", "torch.nn.Softmax",
                 *(f"torch.{call}" for call in ("tensor", "ones", "zeros", "full", "arange", "eye", "triu", "tril"))}
TENSOR_METHODS = {"triu", "tril", "bool", "float", "double", "to", "unsqueeze", "t"}  # on such a tensor: `.triu(1)`
LIBRARY_DECORATORS = {"dataclass", "dataclasses.dataclass", "cache", "functools.cache", "lru_cache",
                      "functools.lru_cache", "cached_property", "functools.cached_property"}
LIBRARY_MODULES = ("math", "torch", "collections", "typing", "dataclasses", "functools", "numpy",
                   "logging")  # whose names stay theirs (numpy as np too)
_SIMPLE_NODES = (ast.Constant, ast.Name, ast.Attribute, ast.UnaryOp, ast.BinOp, ast.Tuple, ast.Call, ast.IfExp,
                 ast.keyword, ast.Compare, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.BoolOp,
                 ast.boolop, ast.List, ast.Set, ast.Dict,  # and comprehensions (`[2 ** i for i in range(4)]`, sweep 26)
                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension)


@dataclass(frozen=True)
class Taken:
    """What was taken for one exercise: the code to run (or None) and, when refused, why."""

    name: str
    code: str | None  # the definitions to run before the check; None: nothing to grade
    problem: str = ""  # one line when the definition was refused or does not parse
    cell: str = ""  # the student's whole cell, shown in the report (never run)
    left_out: dict[str, str] | None = None  # a name set only by a line left out -> that line (for the verdict)
    shown: str = ""  # what is taken from the exercise's own cell (the report shows it; `code` adds the cells above)
    imports: dict[str, str] | None = None  # a name an import of a cell above sets -> that line (it may fail here)
    below: frozenset = frozenset()  # functions, classes and imports only a cell below the exercise's sets
    runs: tuple = ()  # `%run FILE` lines of the cells above: names they set exist in Jupyter, not here
    earlier: bool = False  # a cell above also defines the exercise (the one graded is the last, as Jupyter runs)
    similar: tuple = ()  # functions named like the exercise (attention_weights2): the check never calls them
    in_text: str = ""  # "Markdown" or "Raw": a cell Jupyter does not run also defines the exercise (pasted there)


def _constant(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _library_decorator(node: ast.expr, bound: frozenset) -> bool:
    """@torch.no_grad() and a few like it, or a library's (@dataclass, @lru_cache(maxsize=None)) not rebound by
    the student's cells, with constant arguments."""
    if ast.unparse(node) in ALLOWED_DECORATORS:
        return True
    call = node if isinstance(node, ast.Call) else None
    name = ast.unparse(call.func if call else node)
    return name in LIBRARY_DECORATORS and name.split(".")[0] not in bound and (call is None or all(
        _constant(a) for a in [*call.args, *[k.value for k in call.keywords]]))


def _plain_function(node: ast.AST, bound: frozenset = frozenset(), skip: list | tuple = ()) -> bool:
    args = node.args
    defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
    return all(d in skip or _library_decorator(d, bound) for d in getattr(node, "decorator_list", [])) and \
        all(_constant(d) or _simple(d, bound) for d in defaults)  # fill=float("-inf") runs none of the student's code


def _own_decorated(node: ast.stmt, bound: frozenset, functions: set[str]) -> bool:
    """A helper decorated with a function of the student's taken above (`@logged def root(d)`): the decorator runs
    as the helper is defined, in the runner, where the student's code runs anyway, as the notebook ran it (it was
    left out, and a right answer using the helper was refused; sweep 30, BAD-5)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.decorator_list:
        return False
    own = [d for d in node.decorator_list if isinstance(d, ast.Name) and d.id in functions]
    return bool(own) and _plain_function(node, bound, skip=own)


def _dotted(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) or isinstance(node, ast.Attribute) and _dotted(node.value)


def _plain_class(node: ast.ClassDef, bound: frozenset = frozenset()) -> bool:
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                         or isinstance(s, ast.Pass))]  # a docstring, `...` or `pass` runs nothing
    return all(_library_decorator(d, bound) for d in node.decorator_list) and not node.keywords and \
        all(map(_dotted, node.bases)) and all(_plain(s, bound) for s in body)


def _simple(node: ast.expr, bound: frozenset) -> bool:
    """An expression that runs none of the student's code: names, attributes, arithmetic, displays and
    comprehensions of these, and calls of the builtins in SIMPLE_CALLS or of math.* (with `float` or `math`
    not rebound by the student's cells)."""
    for sub in ast.walk(node):
        if not isinstance(sub, _SIMPLE_NODES):
            return False
        if isinstance(sub, ast.Call):
            f = sub.func
            builtin = isinstance(f, ast.Name) and f.id in SIMPLE_CALLS and f.id not in bound
            of_math = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math" \
                and "math" not in bound
            of_torch = ast.unparse(f) in TORCH_CALLS and "torch" not in bound
            library = (ast.unparse(f) in LIBRARY_CALLS and ast.unparse(f).split(".")[0] not in bound or
                       isinstance(f, ast.Attribute) and f.attr in TENSOR_METHODS and isinstance(f.value, ast.Call)) \
                and all(_constant(k.value) or _torch_type(k.value, bound) for k in sub.keywords)  # dtype=torch.bool
            if not (builtin or of_math or of_torch or library) or sub.keywords and not library:
                return False
    return True


def _torch_type(node: ast.expr, bound: frozenset) -> bool:
    """torch.bool, torch.float32: a keyword's value that runs nothing."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch" and \
        "torch" not in bound


def _plain(node: ast.stmt, bound: frozenset = frozenset()) -> bool:
    """A statement that runs none of the student's code when it is executed (`bound`: the names the student's
    cells set, other than by `import math`)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True  # an installed module's code, never the student's (`from math import *` too)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _plain_function(node, bound)
    if isinstance(node, ast.ClassDef):
        return _plain_class(node, bound)
    if isinstance(node, ast.AnnAssign):  # `POWER: float = 0.5`, a dataclass's `size: int` (annotations stay text)
        return isinstance(node.target, ast.Name) and node.simple and \
            (node.value is None or _constant(node.value) or _simple(node.value, bound))
    if isinstance(node, ast.Assign):  # `EPS = 1e-9`, `POWER, AXIS = 0.5, -1`, `sm = lambda x: x.softmax(-1)`
        return all(isinstance(t, ast.Name) or isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts)
                   for t in node.targets) and (_constant(node.value) or _simple(node.value, bound) or
                                               isinstance(node.value, ast.Lambda) and _plain_function(node.value, bound))
    return False


@lru_cache(maxsize=4096)  # asked of each statement many times: a walk of a 2.5-million-item list took seconds
def _sets(node: ast.stmt) -> frozenset[str]:
    """The names a top-level statement sets."""
    return frozenset(_sets_of(node))


def _sets_of(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, BLOCKS):  # `if True:\n    POWER = 0.5`: what any branch sets, as a left-out line
        inner = [n for field in ("body", "orelse", "finalbody") for n in getattr(node, field, [])]
        inner += [n for handler in getattr(node, "handlers", []) for n in handler.body]
        loop = {t.id for t in ast.walk(node.target) if isinstance(t, ast.Name)} if hasattr(node, "target") else set()
        return loop | {name for n in inner for name in _sets(n)}
    setters = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)  # `(power := 0.5)` sets power
    return {t.id for n in ast.walk(node) if isinstance(n, setters)
            for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
            for t in ast.walk(target) if isinstance(t, ast.Name)}  # `a, b = …` sets both


def _bound(body: list[ast.stmt]) -> frozenset:
    """The names these statements set, but `math` and `torch` when `import math`/`import torch` sets them (a
    call of math.* or of TORCH_CALLS stays simple)."""
    names = set()
    for node in body:
        plain = {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in LIBRARY_MODULES and
                 a.asname in (None, a.name.split(".")[-1], "np" if a.name == "numpy" else None,
                              "F" if a.name == "torch.nn.functional" else None)} if isinstance(node, ast.Import) else set()
        if isinstance(node, ast.ImportFrom) and str(node.module).split(".")[0] in LIBRARY_MODULES:
            plain = {a.name for a in node.names if a.asname in (None, a.name)}  # `from dataclasses import dataclass`
        names |= _sets(node) - plain
    return frozenset(names)


def _kept(above: list[ast.stmt], body: list[ast.stmt], lesson_names: frozenset | None = None,
          exercise: ast.stmt | None = None) -> tuple[list[ast.stmt], dict[str, str]]:
    """(the statements to run, in order; each name that only a left-out assignment sets -> that line). From the
    cells above: imports, plain definitions and, given `lesson_names`, simple constants of names the lesson
    does not set; from the exercise's cell: simple assignments too. An expression is kept only when every name
    it reads is set before it. A name a left-out line sets again loses its earlier value, as in the notebook.
    `exercise`: the statement that defines the exercise, kept whatever it runs as it is defined (a decorator,
    a default value, `name = partial(…)`) when every name it reads then is set before it."""
    bound, available, kept, left_out = _bound(above + body), set(dir(builtins)), [], {}
    hooks: set[str] = set()  # classes with __init_subclass__: subclassing one runs the student's code
    functions: set[str] = set()  # the student's own functions taken so far: a helper may be decorated with one
    in_body = {id(n) for n in body}
    for node in above + body:
        if node is exercise and not _missing_now(node, available, lesson_names, left_out):
            kept.append(node)
            available |= _sets(node)
            left_out.pop(exercise_name(node), None)
            continue
        reads = _reads(node)
        subclasses_a_hook = isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in hooks
                                                                   for b in node.bases)
        fits = isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
            or id(node) in in_body or lesson_names is not None and isinstance(node, (ast.Assign, ast.AnnAssign)) \
            and not _sets(node) & lesson_names  # `device = "cpu"` above; never a name the lesson's cells set
        if fits and (_plain(node, bound) or _own_decorated(node, bound, functions)) and reads <= available \
                and not subclasses_a_hook:
            kept.append(node)
            available |= _sets(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.add(node.name)
            for name in _sets(node):
                left_out.pop(name, None)
            if isinstance(node, ast.ClassDef) and any(getattr(f, "name", "") == "__init_subclass__" for f in node.body):
                hooks.add(node.name)
        elif isinstance(node, ast.Delete):  # `del POWER`: gone here as in the notebook, and not a line to name
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            kept = [k for k in kept if not (_sets(k) & names)]
            available -= names
            for name in names:
                left_out.pop(name, None)
        else:  # left out (a decorated def, an `if` block, a call): a name it sets loses its earlier value,
            names = _sets(node)  # a def's too (`norm = 8` after `def norm`), as in the notebook
            kept = [k for k in kept if not _sets(k) & names]
            available -= names
            left_out.update({name: _one_line(node) for name in names})
    return kept, left_out


@lru_cache(maxsize=4096)
def _reads(node: ast.stmt) -> frozenset[str]:
    """The names a statement reads as it runs: an assignment's value, a definition's default values."""
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or isinstance(value, ast.Lambda):
        args = (value or node).args  # a function's body runs only when called: its defaults run now
        values = args.defaults + [d for d in args.kw_defaults if d is not None]
        values += [d for d in getattr(node, "decorator_list", []) if ast.unparse(d) not in ALLOWED_DECORATORS]
    elif isinstance(node, ast.ClassDef):
        values = [d for d in node.decorator_list if ast.unparse(d) not in ALLOWED_DECORATORS]
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        values = [node.value] if node.value is not None else []
    else:
        values = []
    return frozenset(_names(*values))


def _reads_now(node: ast.stmt) -> set[str]:
    """The names the exercise's own statement reads as it is run: decorators, default values, base classes
    and a class's body outside its methods, or the value assigned (a lambda's body runs only when called)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        if node.value is None:  # `T: int` in a class body: an annotation, kept as text
            return set()
        return _defaults_read(node.value.args) if isinstance(node.value, ast.Lambda) else _names(node.value)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _names(*node.decorator_list) | _defaults_read(node.args)
    if isinstance(node, ast.ClassDef):
        names = _names(*node.decorator_list, *node.bases, *[k.value for k in node.keywords])
        for inner in node.body:  # methods run when called (their decorators and defaults now); annotations are text
            names |= _reads_now(inner) if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.AnnAssign)) \
                else _names(inner)
        return names - {name for inner in node.body for name in _sets(inner)}  # `x = 1` then `y = x` in the body
    return set()


def _missing_now(node: ast.stmt, available: set[str], lesson_names: frozenset | None, left_out: dict) -> list[str]:
    """The names the exercise's statement reads as it runs that will not be set when it runs: set only by a
    line left out, or (given the lesson's names, which its pristine setup sets) set by no line at all."""
    unknown = _reads_now(node) - available - (lesson_names or frozenset())
    return sorted(n for n in unknown if n in left_out or lesson_names is not None)


def _defaults_read(args: ast.arguments) -> set[str]:
    return _names(*args.defaults, *[d for d in args.kw_defaults if d is not None])


def _names(*nodes: ast.AST) -> set[str]:
    """The names these expressions read, less what they bind themselves (a lambda's arguments, a
    comprehension's variables)."""
    loaded, bound = set(), set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                (loaded if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
            elif isinstance(sub, ast.arg):
                bound.add(sub.arg)
    return loaded - bound


def exercise_name(node: ast.stmt) -> str:
    """The name a defining statement sets: `def f`, `class F`, `f = …` or `f: T = …`."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    target = node.targets[-1] if isinstance(node, ast.Assign) else node.target
    return target.id if isinstance(target, ast.Name) else ""


def _defining(node: ast.stmt, name: str) -> bool:
    """A top-level statement that makes `name` the exercise: its def or class, or `name = …` (one target)."""
    if _defines(node, name):
        return True
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
        and node.value is not None


def _definition_problem(name: str, node: ast.stmt, left_out: dict[str, str], available: set[str],
                        lesson_names: frozenset | None = None) -> str:
    """One line when the exercise's statement reads, as it runs, a name the grader does not take
    (`def f(Q, K, p=POWER)` with POWER set by a line left out): in the notebook it ran, here it cannot."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) and \
            isinstance(node.value.func, ast.Name) and node.value.func.id == name:
        return (f"`{_one_line(node)}` sets {name} to what calling it returned, so in the notebook {name} is no "
                f"longer your function: give the result another name")
    missing = _missing_now(node, available, lesson_names, left_out)
    if not missing:
        return ""
    n = missing[0]
    where = f"only `{left_out[n]}` sets, a line the grader does not run" if n in left_out else "no cell sets"
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and not isinstance(node.value, ast.Lambda):
        return (f"`{_one_line(node)}` reads {n}, which {where} (the grader takes imports, plain definitions and "
                f"simple constants from your cells): define {n} with def, or write {name} with def")
    if n in _names(*getattr(node, "decorator_list", [])):
        return (f"the decorator of {name} reads {n}, which {where} (the grader takes imports, plain definitions and "
                f"simple constants from your cells): define {n} with a plain def, or remove the decorator")
    return (f"a default value of {name} reads {n}, which {where} (the grader takes imports, plain definitions and "
            f"simple constants from your cells): write the value itself as the default, or set {n} inside the "
            f"function")


def _indented(sources: list[str], name: str) -> bool:
    """Whether a cell defines `name` indented (inside an if, a try or a class) rather than at its top level."""
    pattern = re.compile(rf"^[ \t]+(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(name)}\b", re.M)
    return any(pattern.search(s) for s in sources)


@lru_cache(maxsize=16)  # once per lesson in a worker's life, not once per notebook
def lesson_names(sources: tuple[str, ...]) -> frozenset:
    """Every name the lesson's own code cells set at their top level (its setup, its exercises' functions)."""
    return frozenset(name for source in sources for node in _statements(source) for name in _sets(node))


def _one_line(node: ast.stmt) -> str:
    """A statement as the verdict quotes it: on one line, at most 80 characters."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:79] + "…"


def _statements(source: str) -> tuple[ast.stmt, ...]:
    """A cell's top-level statements; none for a cell that does not parse (it is left out, as Jupyter would fail it)."""
    return cell_statements(source) or ()


def _defines(node: ast.stmt, name: str) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name


def _syntax_line(err: Exception, ran: tuple[int, int] | None = None) -> str:
    """A cell that does not parse, in words: where, Python's message, and the fix where it is not obvious.
    `ran`: the Python the notebook last ran with (python_that_ran), said when it is newer than this one."""
    line = f" on line {err.lineno}" if getattr(err, "lineno", None) else ""
    message = getattr(err, "msg", str(err))
    said = f"{type(err).__name__}{line} ({message}"
    if "escape" in message and "unicode" in message:  # "C:\Users" in a docstring: \U starts an escape
        return f"{said}): a backslash in a string starts an escape; write that string as r\"…\" or with /"
    text = getattr(err, "text", None) or ""
    if message.startswith("f-string") or re.match(r"\s*(async\s+def|def|class)\s+\w+\s*\[|\s*type\s+\w+", text):
        # an f-string with nested quotes or `def f[T]` parses from Python 3.12 on: say which Python read it
        here = f"{sys.version_info.major}.{sys.version_info.minor}"
        said += f"; read by Python {here}, which grades the class)"
        if ran is not None and ran > sys.version_info[:2]:  # most likely right there: what the teacher can do
            said += (f"; this notebook last ran Python {ran[0]}.{ran[1]}, whose syntax may be newer: grade the class "
                     f"with Python {ran[0]}.{ran[1]} or newer, or write the line so that Python {here} reads it too")
        elif ran is None and sys.version_info[:2] < (3, 12):  # Colab saves no version, and runs 3.12
            said += (f"; if the notebook ran on Python 3.12 or newer (Colab does), that syntax is valid there: grade "
                     f"the class with Python 3.12, or write the line so that Python {here} reads it too (in an "
                     f"f-string, other quotes inside the braces)")
        return said
    return said + ")"


def python_that_ran(data: bytes) -> tuple[int, int] | None:
    """(major, minor) of the Python a notebook was last run with, from its language_info; None if unsaid."""
    found = re.search(rb'"language_info"\s*:\s*\{[^}]{0,2000}?"version"\s*:\s*"(\d+)\.(\d+)', data[:2_000_000])
    return (int(found[1]), int(found[2])) if found else None


def take(cells: list[dict], name: str, lesson_names: frozenset | None = None,
         ran: tuple[int, int] | None = None, check: str = "") -> Taken:
    """The definitions to grade for exercise `name` from a notebook's cells (see the module's rules).
    `lesson_names`: what the pristine lesson's cells set (lesson_names()); a simple constant of a cell above
    is taken only when given, and only for a name the lesson does not set. `ran`: see _syntax_line.
    `check`: the function the lesson's check call calls (check_attention_weights): a function of the notebook
    that the student passes to it (`H.check_attention_weights(attn_weights)`) is their answer under another name."""
    sources = [c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    defined = [defined_names(source) for source in sources]  # each cell parsed once for what it defines
    passed = [a.id for source in sources if check and check in source for n in _statements(source)
              for c in ast.walk(n) if isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == check
              for a in c.args[:1] if isinstance(a, ast.Name) and a.id != name and any(a.id in d for d in defined)]
    others = sorted({n for names in defined for n in names if n != name})
    close = difflib.get_close_matches(name, others, n=3, cutoff=0.85)  # attention_weight, atention_weights (sweep 27)
    similar = tuple(dict.fromkeys(passed + [n for n in others if name in n] + close))[:3]
    found_at = [i for i, (s, names) in enumerate(zip(sources, defined)) if name in names or
                re.search(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=(?!=)", s, re.M) and
                any(_defining(n, name) for n in _statements(s))]  # `name = lambda …`, `name = partial(…)`
    kinds = [c.get("cell_type") for c in cells if c.get("cell_type") in ("markdown", "raw")
             and re.search(rf"^\s*def {re.escape(name)}\s*\(", c.get("source", ""), re.M)]
    if not found_at:
        imported = [_one_line(n) for source in sources for n in _statements(source)
                    if isinstance(n, ast.ImportFrom) and any((a.asname or a.name) == name for a in n.names)]
        if imported:  # `%%writefile my_attention.py` above, then `from my_attention import attention_weights`
            return Taken(name, None, f"{name} is imported (`{imported[-1]}`), not defined in a cell: only the "
                                     f"notebook is graded, without your own files (such as one %%writefile wrote); "
                                     f"define {name} in a cell of the notebook")
        if kinds:  # the answer is there, but Jupyter never runs it
            return Taken(name, None, f"the definition of {name} is in a {kinds[-1].title()} cell, which Jupyter "
                                     f"does not run: make it a Code cell again (select it, press Esc, then Y) and run it")
        if _indented(sources, name):  # `try:\n    def f(…)` runs in Jupyter: "not attempted" would be wrong
            return Taken(name, None, f"{name} is defined indented (inside a block such as `try:` or `if`, or a "
                                     f"class), not at the top of its cell; the grader takes top-level definitions: "
                                     f"move `def {name}(…)` to the cell's first column")
        return Taken(name, None, similar=similar)
    # the definition the check call saw in a run from the top: the last one at or above the last check call (a
    # scratch cell below it was graded, sweep 31), else the last; the cells between it and its check call ran
    # before the check too (a helper defined there: "only a cell below defines it", sweep 31)
    # (unless that one is the lesson's stub and the answer was written in a cell below: that one, as before)
    calls = [i for i, source in enumerate(sources) if check and check in source and _calls(source, check)]
    seen = next((i for i in reversed(found_at) if calls and i <= calls[-1]), found_at[-1])
    at = 1 + (found_at[-1] if _stub(sources[seen], name) else seen)
    after = next((i + 1 for i in calls if i + 1 >= at), at)  # the cells below the exercise's: sources[after:]
    cell = sources[at - 1]
    above = [n for source in sources[:at - 1] + sources[at:after] for n in _statements(source)]
    try:
        body = ast.parse(plain_python(cell)).body  # a cell with `%%time` or `!pip` on top runs in Jupyter too
    except (RecursionError, MemoryError) as err:  # nesting past what Python's parser can follow
        return Taken(name, None, f"the cell defining {name} cannot be parsed ({type(err).__name__}: nested too "
                                 f"deeply for Python's parser)", cell)
    except (SyntaxError, ValueError) as err:
        return Taken(name, None, f"the cell defining {name} does not run: {_syntax_line(err, ran)}", cell)
    exercise = [n for n in body if _defining(n, name)][-1]
    kept, left_out = _kept(above, body, lesson_names, exercise)  # as the notebook ran them, top to bottom
    available = set(dir(builtins)) | {s for n in kept if n is not exercise for s in _sets(n)}
    problem = _definition_problem(name, exercise, left_out, available, lesson_names)
    if problem:
        return Taken(name, None, problem, cell)
    from_above = {id(n) for n in above}
    own = ast.unparse(ast.Module(body=[n for n in kept if id(n) not in from_above], type_ignores=[]))
    imports = {s: _one_line(n) for n in kept if id(n) in from_above and isinstance(n, (ast.Import, ast.ImportFrom))
               for s in _sets(n)}
    future = [n for n in kept if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    kept = future + [_forgiving(n) if id(n) in from_above else n for n in kept if n not in future]  # Python wants
    # `from __future__ import …` first in the code run; in Jupyter it may open any cell
    imported_below = {s for source in sources[after:] for n in _statements(source)
                      if isinstance(n, (ast.Import, ast.ImportFrom)) for s in _sets(n)}  # `import math` too late
    below = frozenset({n for names in defined[after:] for n in names} | imported_below) - {s for n in kept for s in _sets(n)}
    runs = tuple(m.strip() for source in sources[:at - 1] for m in re.findall(r"^[ \t]*(%run[ \t]+\S.*)$", source, re.M))
    return Taken(name, ast.unparse(ast.Module(body=kept, type_ignores=[])), "", cell, left_out, own, imports, below,
                 runs[:3], found_at[0] < at - 1, similar, kinds[-1].title() if kinds else "")


def _stub(source: str, name: str) -> bool:
    """Does this cell define `name` as the lesson's stub does (a docstring, then `...`, `pass` or `return None`)?"""
    for node in _statements(source):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return all(isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) or
                       isinstance(s, ast.Return) and (s.value is None or _constant(s.value) and
                                                      ast.literal_eval(s.value) is None) for s in node.body)
    return False


def _calls(source: str, check: str) -> bool:
    """Does this cell call the lesson's check (`H.check_attention_weights(…)`)?"""
    return any(isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) == check
               for n in _statements(source) for c in ast.walk(n))


def _forgiving(node: ast.stmt) -> ast.stmt:
    """A cell above's import or definition that may fail here and not on the student's laptop (`import seaborn`,
    a class built on it): its failure costs only the names it sets, not every exercise."""
    handler = ast.ExceptHandler(type=ast.Name("Exception", ast.Load()), name=None, body=[ast.Pass()])
    return ast.Try(body=[node], handlers=[handler], orelse=[], finalbody=[])


# --- reading a notebook's bytes ---------------------------------------------------------------------------

def _nbformat(nb: dict) -> int | None:
    """The notebook's major version, read as a number also when it is written as text ("4")."""
    try:
        value = float(str(nb.get("nbformat")).strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def _parsed(data: bytes) -> tuple[object, str]:
    try:
        return json.loads(data), ""  # json finds UTF-8, UTF-8 with a BOM, UTF-16 and UTF-32 by itself
    except RecursionError:
        return None, "is nested too deeply to read (JSON past Python's recursion limit); hand in the lesson's .ipynb"
    except MemoryError:
        return None, "is too large to read in the worker's memory; hand in the lesson's .ipynb without outputs"
    except (UnicodeDecodeError, ValueError):
        if re.search(rb"^<<<<<<< |^>>>>>>> ", data, re.M):  # git's markers: Jupyter cannot open it either
            return None, ("holds git's merge-conflict markers (<<<<<<<, =======, >>>>>>>), so it is no longer JSON: "
                          "hand in the version from before the merge, or keep one side in a text editor")
        head = data[:2000].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
        if head.startswith((b"<!doctype html", b"<html")):  # a notebook exported, or viewed and saved, as a page
            return None, ("is a web page (an HTML export of the notebook) renamed .ipynb, not the notebook: hand in "
                          "the .ipynb itself (in Jupyter: File → Download)")
        if re.search(rb"^# (?:%%|in\[|---\s*$)|^#!.*python|^(?:import|from) \w+", head, re.M):  # jupytext, nbconvert
            return None, ("is a Python script (.py, from 'Download as Python' or jupytext) renamed .ipynb, not the "
                          "notebook: hand in the .ipynb itself (in Jupyter: File → Download)")
        try:  # whole JSON in another encoding: Jupyter will not open it either, and "save it again" cannot help
            json.loads(data.decode("cp1252"))
            return None, ("is not UTF-8 text (it reads as Windows-1252, which Jupyter does not open): open it in a "
                          "text editor, save it with the UTF-8 encoding, and hand it in again")
        except (UnicodeDecodeError, ValueError, RecursionError):
            pass
        return None, "is not a notebook (not JSON: truncated or damaged); open it in Jupyter and save it again"


def _cell(cell: dict) -> dict:
    source = cell.get("source", "")
    source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    return {"cell_type": str(cell.get("cell_type", "")), "source": source, "metadata": meta}


def cells_of(data: bytes) -> tuple[list[dict] | None, str]:
    """(the cells: type, source, metadata; or None and one line saying why the notebook cannot be read)."""
    nb, problem = _parsed(data)
    if problem:
        return None, problem
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", nb.get("worksheets")), list):
        return None, "is JSON but not a notebook (no cells); hand in the lesson's .ipynb file"
    major = _nbformat(nb)
    if major != 4:
        shown = major if major is not None else repr(nb.get("nbformat"))[:40]
        return None, (f"is a notebook of nbformat {shown} (this grader reads nbformat 4); open it in Jupyter "
                      f"(version 4 or later) and save it again")
    if not isinstance(nb.get("cells"), list):
        return None, "is JSON but not a notebook (no cells); hand in the lesson's .ipynb file"
    if len(nb["cells"]) > MAX_CELLS:
        return None, f"has {len(nb['cells'])} cells, more than {MAX_CELLS}; hand in the lesson's notebook"
    return [_cell(c) for c in nb["cells"] if isinstance(c, dict)], ""
