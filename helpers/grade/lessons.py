"""The pristine lessons in notebooks/, taken apart for a grader: their exercise cells, which lesson a
submitted notebook is, and each lesson's own setup.

A lesson's exercise cell holds (maybe) lines that make the check's inputs, the stub `def name(...)`
and the check call `H.check_name(name, ...)`. Graders want these apart: the student edits only the
function's body; the inputs and the check are the teacher's. The answer is the stub with the body of
the reference solution (helpers/exercises/solutions.py) between a grader's two marker lines.

A lesson is known by its `#` title heading ("# 01 · One attention head …"), never by its file name:
a heading that equals a pristine lesson's title, or starts with its number and "·", names it; a
notebook without one is named by the exercise functions it defines, when those belong to one lesson.
A notebook with two lessons' headings (two notebooks merged) or of no lesson is refused in one line.

A lesson's setup runs once, from the PRISTINE notebook: its code cells in order in one namespace, as
in a kernel, up to the last exercise (IPython magics left out, figures closed, printing hidden). At
each exercise cell the lines that make the check's inputs run, then the namespace is kept (a shallow
copy) before the stub is defined: a worker starts each exercise from that copy with the student's
definitions added. Nothing here comes from a submission, so a student cannot change the setup.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from unittest import mock

import matplotlib
from IPython.core.inputtransformer2 import TransformerManager

from ..exercises import catalogue, solutions

NOTEBOOKS = Path(__file__).resolve().parent.parent.parent / "notebooks"  # the pristine lessons
LESSONS = ("01", "02", "03", "04", "05", "06", "07")  # exported for nbgrader and otter-grader
GRADED = LESSONS + ("08",)  # graded by `python -m helpers.grade`
# A check that returns a number (the measured accuracy) has a twin returning (Verdict, number).
VERDICT_OF = {"check_knockout_prediction": "knockout_verdict"}
HEADING = re.compile(r"^#\s+(\d\d)\s*·", re.M)  # "# 01 · …": the lesson's number
SETUP_FAILED = "failed in the grader"  # in the line of a lesson whose setup failed (preload.py): the grader's fault


@dataclass(frozen=True)
class ExerciseCell:
    """One exercise of a lesson, in the pieces a grader places in cells of its own."""

    name: str  # the function or class the student writes ("attention_weights", "MyMultiHead")
    key: str  # the catalogue's exercise key, which the verdict's code starts with
    title: str  # the name the verdict line starts with ("attention weights")
    inputs: str  # code above the def that makes the check's inputs ("" when none)
    head: str  # the stub down to its body: def line, docstring, the hint comments
    body: str  # the reference solution's body (without its docstring), indented as in the stub
    tail: str  # the stub after that body (nothing, unless the body is a method of a class)
    test: str  # the verdict expression: `H.check_…(…)`, or the twin's `H.knockout_verdict(…)[0]`
    check: str  # the check the lesson's cell calls ("check_attention_weights")
    reads: tuple[str, ...]  # notebook names the check reads (H, the function, the inputs)

    @property
    def comments_only(self) -> bool:
        """True when the lines above the def are only comments (they can stay in the student's cell)."""
        return all(not line.strip() or line.lstrip().startswith("#") for line in self.inputs.splitlines())

    @property
    def indent(self) -> str:
        """The indentation of the function's body."""
        return self.body[: len(self.body) - len(self.body.lstrip())]

    def with_body(self, body: str) -> str:
        """The stub with `body` (indented like the stub's) in place of the student's part."""
        return "\n".join([self.head, body] + ([self.tail] if self.tail else []))

    def answer(self, begin: str, end: str) -> str:
        """The stub with the reference body between a grader's marker lines (`### BEGIN SOLUTION` …)."""
        return self.with_body(f"{self.indent}{begin}\n{self.body}\n{self.indent}{end}")

    def answer_cell(self, begin: str, end: str) -> str:
        """The student's cell: the answer, below the lines above the def when those are only comments."""
        answer = self.answer(begin, end)
        return f"{self.inputs}\n{answer}" if self.comments_only and self.inputs else answer


def lesson_paths(folder: Path = NOTEBOOKS, numbers: tuple[str, ...] = LESSONS) -> list[Path]:
    """The pristine notebooks of these lessons (01-07), in order; a one-line FileNotFoundError when one is missing."""
    paths = []
    for number in numbers:
        found = sorted(Path(folder).glob(f"{number}_*.ipynb"))
        if not found:
            raise FileNotFoundError(f"No lesson {number}_*.ipynb in {folder}: the grader reads every lesson's "
                                    f"pristine notebook there; restore it with `git checkout -- notebooks` (or a "
                                    f"fresh copy of the project), and `python -m helpers.doctor` lists what else "
                                    f"is missing.")
        paths.append(found[0])
    return paths


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _is_ellipsis(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and statement.value.value is Ellipsis


def _stub_function(node: ast.stmt) -> ast.FunctionDef:
    """The function whose body the student writes: the def itself, or the class's method left as `...`."""
    if isinstance(node, ast.FunctionDef):
        return node
    for method in node.body:
        if isinstance(method, ast.FunctionDef) and _is_ellipsis(method.body[-1]):
            return method
    raise ValueError(f"the exercise class {node.name} has no method left as `...` for the student to write")


def _body_start(fn: ast.FunctionDef) -> int:
    """The line (0-based) where the function's body starts after its docstring."""
    body = fn.body
    return body[0].end_lineno if _is_docstring(body[0]) and len(body) > 1 else body[0].lineno - 1


def _stub_start(fn: ast.FunctionDef) -> int:
    """The line (0-based) of the stub's first statement after its docstring: hint comments stay above it."""
    body = fn.body
    return (body[1] if _is_docstring(body[0]) and len(body) > 1 else body[0]).lineno - 1


def _solution_body(name: str, method: str) -> str:
    """The reference's lines after the docstring of `method` (the function itself, or a method of the class)."""
    text = solutions.source(name)
    tree = ast.parse(text).body[0]
    fn = tree if isinstance(tree, ast.FunctionDef) else next(m for m in tree.body if getattr(m, "name", "") == method)
    return "\n".join(text.splitlines()[_body_start(fn):fn.end_lineno])


def _check_call(statements: list[ast.stmt], name: str) -> ast.Call:
    calls = [n for s in statements for n in ast.walk(s)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
             and n.func.value.id == "H" and n.func.attr.startswith("check_")]
    if len(calls) != 1:
        raise ValueError(f"the exercise cell of {name} must end with one H.check_…(…) call; it has {len(calls)}")
    return calls[0]


def _test(call: ast.Call, source: str) -> str:
    """The expression whose value is the check's Verdict (a check returning a number: its twin's [0])."""
    text = ast.get_source_segment(source, call)
    twin = VERDICT_OF.get(call.func.attr)
    return text.replace(f"H.{call.func.attr}(", f"H.{twin}(", 1) + "[0]" if twin else text


def split(source: str) -> ExerciseCell | None:
    """The exercise in one code cell's source, or None when the cell holds none."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # a cell with an IPython magic (%matplotlib inline) holds no exercise
        return None
    found = [i for i, n in enumerate(body)
             if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in solutions.SOLUTIONS]
    if not found:
        return None
    node, lines = body[found[0]], source.splitlines()
    fn, call = _stub_function(node), _check_call(body[found[0] + 1:], node.name)
    entry = next(e for e in catalogue.entries() if e.check == call.func.attr)
    return ExerciseCell(
        name=node.name, key=entry.key, title=entry.title,
        inputs="\n".join(lines[:node.lineno - 1]).strip("\n"),
        head="\n".join(lines[node.lineno - 1:_stub_start(fn)]).rstrip("\n"),
        body=_solution_body(node.name, fn.name), tail="\n".join(lines[fn.end_lineno:node.end_lineno]),
        test=_test(call, source), check=call.func.attr, reads=tuple(dict.fromkeys(n.id for n in ast.walk(call) if isinstance(n, ast.Name))))


def split_in(path: Path, source: str) -> ExerciseCell | None:
    """split(source) of a cell of the lesson at `path`; a lesson edited by hand fails in one line that names
    the notebook and how to get it back."""
    try:
        return split(source)
    except ValueError as err:
        name = Path(path).name
        raise ValueError(f"In the lesson notebooks/{name}, {err}: restore it with `git checkout -- notebooks/{name}`.") \
            from None


def is_navigation(cell: dict) -> bool:
    """The generated links to the other lessons (tools/make_nav.py), which an assignment folder lacks."""
    return cell["cell_type"] == "markdown" and cell["source"].startswith("<!--NAVIGATION-->")


def read_lesson(path: Path) -> dict:
    """A pristine lesson notebook (nbformat 4) as plain JSON, each cell's source one string; a one-line
    ValueError when it cannot be read. The standard library's json, not nbformat: importing nbformat costs
    about a second (its schema checker compiles a grammar), paid again by every spawned worker and runner."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        if nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
            raise ValueError("not an nbformat 4 notebook")
        for cell in nb["cells"]:
            if isinstance(cell["source"], list):
                cell["source"] = "".join(cell["source"])
            if not isinstance(cell["source"], str) or not isinstance(cell["cell_type"], str):
                raise ValueError("a cell without its source or type")
    except Exception as err:  # a damaged file: OSError, JSON, a missing key
        raise ValueError(f"Cannot read the lesson {path}: {type(err).__name__}; restore it with `git checkout -- "
                         f"notebooks/{Path(path).name}` (or a fresh copy of the project).") from None
    return nb


# --- which lesson ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lesson:
    """A pristine lesson: its number, code cells, and which of them are exercises."""

    number: str  # "01", from its title heading
    path: Path
    cells: tuple[str, ...]  # the source of every code cell, in order
    exercises: tuple[tuple[int, ExerciseCell], ...]  # (index into cells, the exercise's pieces)

    @property
    def names(self) -> tuple[str, ...]:
        """The functions (or class) the student writes, in notebook order."""
        return tuple(ex.name for _, ex in self.exercises)


def read(path: Path) -> Lesson:
    """One pristine notebook taken apart (cells, exercise cells)."""
    nb = read_lesson(path)
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    exercises = tuple((i, ex) for i, src in enumerate(code) if (ex := split_in(path, src)) is not None)
    numbers = (m.group(1) for c in nb["cells"] if c["cell_type"] == "markdown" and (m := HEADING.search(c["source"])))
    return Lesson(next(numbers, path.name[:2]), path, tuple(code), exercises)


@lru_cache(maxsize=1)
def lessons() -> dict[str, Lesson]:
    """The graded lessons (01-08) by number, read once."""
    return {lesson.number: lesson for lesson in map(read, lesson_paths(numbers=GRADED))}


@lru_cache(maxsize=256)  # each cell is read for every exercise: parsed once (the nodes are never changed)
def cell_statements(source: str) -> tuple[ast.stmt, ...] | None:
    """A cell's top-level statements as the kernel reads them; None when it does not parse."""
    try:
        return tuple(ast.parse(plain_python(source)).body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def defined_names(source: str) -> frozenset[str]:
    """The functions and classes a cell defines at its top level (none when it does not parse)."""
    body = cell_statements(source)
    if body is None:
        # a broken cell still says what it meant, read without the invisible characters (format characters: a
        # BOM or a zero-width space pasted before `def`) that may be what broke it
        shown = "".join(c for c in source if unicodedata.category(c) != "Cf")
        return frozenset(re.findall(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", shown, re.M))
    return frozenset(n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def which_lesson(cells: list[dict], known: dict[str, Lesson]) -> str:
    """The number of the lesson these cells are, from their title heading, else their exercise functions;
    a one-line ValueError for a notebook of no lesson or of two."""
    numbers = sorted({m.group(1) for c in cells if c.get("cell_type") == "markdown"
                      for m in HEADING.finditer(c.get("source", "")) if m.group(1) in known})
    if len(numbers) > 1:
        raise ValueError(f"holds the headings of lessons {' and '.join(numbers)} (notebooks merged?): "
                         f"hand in one notebook per lesson")
    if numbers:
        return numbers[0]
    code = [c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    defined = set().union(*map(defined_names, code))
    by_names = sorted(n for n, lesson in known.items() if defined & set(lesson.names))
    if len(by_names) > 1:  # an earlier lesson's function the notebook's own code calls is a helper reused (01's
        # attention_weights in 02's one_head), not that lesson's exercise (its title edited: refused whole, sweep 31)
        own = sorted(n for n, lesson in known.items() if (defined - _used(code)) & set(lesson.names))
        by_names = own if len(own) == 1 else by_names
    if len(by_names) == 1:
        return by_names[0]
    if by_names:
        raise ValueError(f"defines exercises of lessons {' and '.join(by_names)}: hand in one notebook per lesson")
    raise ValueError("is no lesson: it has no title heading of notebooks 01-08 and defines none of their exercises")


def other_exercises(cells: list[dict], number: str, known: dict[str, Lesson]) -> str:
    """"" or one line when a notebook of lesson `number` (by its heading) also defines another lesson's
    exercises (cells pasted from it): those are not graded here, and the row says so. One its code calls is a
    helper the student reused (lesson 01's attention_weights in 02's one_head), not said."""
    code = [c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    defined = set().union(*map(defined_names, code)) - _used(code)
    own = set(known[number].names)
    found = {n: sorted(defined & set(lesson.names) - own) for n, lesson in known.items() if n != number}
    found = {n: names for n, names in found.items() if names}
    if not found:
        return ""
    said = "; ".join(f"{', '.join(names)} (lesson {n})" for n, names in sorted(found.items()))
    return (f"also defines {said}, which are graded only in their own lesson's notebook: hand that lesson in "
            f"as its own notebook")


def _used(sources: list[str]) -> set[str]:
    """The names these cells read (a function called, a value used), from the cells that parse."""
    used = set()
    for source in sources:
        try:
            tree = ast.parse(plain_python(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        checked = {id(a) for call in ast.walk(tree) if isinstance(call, ast.Call) and
                   getattr(call.func, "attr", getattr(call.func, "id", "")).startswith("check_") for a in call.args}
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and id(n) not in checked}  # a check call pasted with its lesson's cell is not a use
    return used


# --- a lesson's setup -----------------------------------------------------------------------------------
@dataclass
class Prepared:
    """A lesson after its setup: one namespace per exercise, in the lesson's order."""

    lesson: Lesson
    namespaces: list[dict]


# what IPython's reader changes: magics, shell lines, help (`obj?`), pasted prompts (`>>>`, `In [1]:`, `...:`)
IPYTHON_SYNTAX = re.compile(r"[%!?]|>>>|^\s*(?:In \[|\.\.\.)", re.M)
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}  # cell magics whose body the kernel runs as Python
IPYTHON = TransformerManager()  # the kernel's own reader of magics and shell lines; it keeps no state between cells


@lru_cache(maxsize=256)  # each cell is read for every exercise: once is enough (a 5 MB cell took 3 s a read)
def plain_python(source: str) -> str:
    """A cell as Python, read by IPython's own transformer (the kernel's): a line magic, a shell line or
    `obj?` that is a whole statement becomes `pass`; one that gives a value (`t = %timeit -o f()`,
    `gpu = !nvidia-smi`) becomes a call, which the grader leaves out. A cell magic whose body is Python
    (%%time, %%capture) keeps its body; any other (%%writefile, %%bash) is no Python: the cell reads as blank.
    Line numbers stay those the student sees."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = (lines[0].lstrip()[2:].split() or [""])[0]
        if magic not in PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
        lines = [""] + lines[1:]
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))  # IPython drops leading blank lines
    indented = lead < len(lines) and lines[lead][:1].isspace()  # IPython dedents a cell whose first line is indented
    if not indented and not IPYTHON_SYNTAX.search(source):  # plain Python: IPython would change nothing, and it
        return "\n".join(lines)                              # took 30 s over a 5 MB cell (sweep 27)
    try:
        text = "\n" * lead + IPYTHON.transform_cell("\n".join(lines[lead:]))
    except Exception:  # IPython cannot read it either: the line-by-line reading, and Python's parser says why
        text = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
    return "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith("get_ipython().")
                     else line for line in text.splitlines())


def _run(source: str, namespace: dict, label: str) -> None:
    if source.strip():
        exec(compile(plain_python(source), label, "exec"), namespace)


def _stub_only(source: str, name: str) -> str:
    """An exercise cell from its stub `def name` on, without the statements that call a check (`H.check_…`)."""
    body = ast.parse(plain_python(source)).body
    start = next(i for i, s in enumerate(body) if getattr(s, "name", None) == name)
    return ast.unparse([s for s in body[start:] if "H.check_" not in ast.unparse(s)])


def prepare(lesson: Lesson) -> Prepared:
    """Run the lesson's setup (every code cell up to the last exercise) and keep each exercise's namespace."""
    matplotlib.use("Agg")  # no window: the figures of the setup are made and closed
    import matplotlib.pyplot as plt
    namespace: dict = {"__name__": "__main__"}
    kept, last = [], lesson.exercises[-1][0] if lesson.exercises else -1
    exercise_at = dict(lesson.exercises)
    hide = io.StringIO()
    with contextlib.redirect_stdout(hide), contextlib.redirect_stderr(hide), \
            mock.patch.dict(os.environ, TQDM_DISABLE="1"):  # the setup's progress bars off
        for i, source in enumerate(lesson.cells[:last + 1]):
            label = f"{lesson.path.name} cell {i}"
            if i in exercise_at:
                _run(exercise_at[i].inputs, namespace, label)
                kept.append(dict(namespace))
                source = _stub_only(source, exercise_at[i].name)  # the stub stays defined, as in the notebook
            _run(source, namespace, label)
            plt.close("all")
            hide.seek(0)
            hide.truncate()
    return Prepared(lesson, kept)

