"""Lessons 01-07 as nbgrader source assignments: `python -m helpers.grade --nbgrader SOURCE_FOLDER`.

Each lesson becomes SOURCE_FOLDER/<lesson>/<lesson>.ipynb, one assignment per lesson (SOURCE_FOLDER
is the `source/` folder of an nbgrader course). Every cell of the lesson is locked, so nbgrader's
autograde puts the teacher's copy back over whatever a student changed; an exercise becomes
- a locked cell with the check's inputs, when the lesson makes them in the exercise cell;
- the student's answer cell: the stub, with the reference body between `### BEGIN SOLUTION` and
  `### END SOLUTION` (generate_assignment leaves `raise NotImplementedError()`, or the lesson's `...`
  with the nbgrader_config.py of docs/teaching.md);
- a locked autograded test cell worth the exercise's points: `H.assert_passed(H.check_…(…))`, which
  raises AssertionError carrying the verdict's line (the named mistake and its fix).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from ..core.files import atomic_write
from .lessons import NOTEBOOKS, ExerciseCell, is_navigation, lesson_paths, read_lesson, split_in

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _meta(grade_id: str, solution: bool = False, points: float | None = None) -> dict:
    """nbgrader's cell metadata (schema 3): an answer cell, a test cell (with points) or a locked cell."""
    meta = {"grade": points is not None, "grade_id": grade_id, "locked": not solution, "schema_version": 3,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(source: str, grade_id: str, **kind) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, metadata=_meta(grade_id, **kind))
    cell.id = grade_id  # a stable id: writing twice gives the same file
    return cell


def graded_cells(ex: ExerciseCell, points: float) -> list[nbformat.NotebookNode]:
    """The cells one exercise becomes: its inputs (locked), the answer, the autograded test."""
    inputs = [] if ex.comments_only else [_code(ex.inputs, f"{ex.key}_inputs")]
    return inputs + [_code(ex.answer_cell(BEGIN, END), ex.key, solution=True),
                     _code(f"H.assert_passed({ex.test})", f"test_{ex.key}", points=points)]


def _locked(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A lesson cell that nbgrader keeps as the teacher wrote it."""
    cell.metadata.update(_meta(cell.id))
    return cell


def converted(path: Path, points: dict[str, float] | None, exercise, other) -> nbformat.NotebookNode:
    """One lesson notebook for a grader: each exercise cell as the cells `exercise(ex, points)` makes, each
    other cell (a copy with a stable id) as `other(cell)` makes it; the links to the other lessons left out."""
    lesson = nbformat.from_dict(read_lesson(path))
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(lesson.metadata))
    for number, cell in enumerate(lesson.cells):
        ex = split_in(path, cell.source) if cell.cell_type == "code" else None
        if ex is not None:
            nb.cells += exercise(ex, points_of(points, path, ex))
        elif not is_navigation(cell):
            cell = copy.deepcopy(cell)
            cell.id = f"lesson_cell_{number}"  # a stable id: writing twice gives the same file
            nb.cells.append(other(cell))
    return nb


def assignment(path: Path, points: dict[str, float] | None = None) -> nbformat.NotebookNode:
    """One lesson notebook as an nbgrader source notebook."""
    return converted(path, points, graded_cells, _locked)


def column(path: Path, ex: ExerciseCell) -> str:
    """The exercise's column in grades.csv ("01 attention_weights"), which --points files name."""
    return f"{path.name[:2]} {ex.name}"


def points_of(points: dict[str, float] | None, path: Path, ex: ExerciseCell) -> float:
    return (points or {}).get(column(path, ex), 1)


def check_points(points: dict[str, float] | None, columns: list[str]) -> None:
    """A one-line ValueError for points given to an exercise no lesson has, or not a number ≥ 0."""
    unknown = sorted(set(points or {}) - set(columns))
    if unknown:
        raise ValueError(f"Points for {', '.join(unknown)}, which no lesson has: use the columns of grades.csv "
                         f"({', '.join(columns)}).")
    bad = [k for k, v in (points or {}).items() if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0]
    if bad:
        raise ValueError(f"Points for {', '.join(bad)} must be numbers ≥ 0, e.g. 1 or 2.5.")


def exercise_columns(notebooks: Path = NOTEBOOKS) -> list[str]:
    """Every exercise of lessons 01-07 as its grades.csv column, in order."""
    return [column(path, ex) for path in lesson_paths(notebooks) for cell in read_lesson(path)["cells"]
            if cell["cell_type"] == "code" and (ex := split_in(path, cell["source"]))]


def write_source(folder: str | Path, points: dict[str, float] | None = None,
                 notebooks: Path = NOTEBOOKS, overwrite: bool = False) -> list[Path]:
    """Write lessons 01-07 as nbgrader source assignments under `folder`; return the notebooks' paths.
    `points`: grades.csv column ("01 attention_weights") -> points, as results.read_points reads a
    --points file (default 1 each)."""
    return write_lessons(folder, points, notebooks, assignment, overwrite)


def write_lessons(folder: str | Path, points: dict[str, float] | None, notebooks: Path, make,
                  overwrite: bool = False) -> list[Path]:
    """Each lesson as `make(path, points)` builds it, written to folder/<lesson>/<lesson>.ipynb (nbgrader's
    and otter's layout); the points are checked against the lessons' exercises first. A lesson already there
    that differs (the teacher edited it) is written over only with `overwrite`."""
    check_points(points, exercise_columns(notebooks))
    handed_in = sorted(p.name for p in Path(folder).glob("*.*") if p.suffix.lower() in (".ipynb", ".zip")) \
        if Path(folder).is_dir() else []
    if handed_in:  # a class's folder: the grader would later read the exported lessons there as submissions
        raise ValueError(f"{folder} holds notebooks or archives ({handed_in[0]}{' …' if len(handed_in) > 1 else ''}), "
                         f"a class's submissions?: export the lessons into a folder of their own.")
    lessons = [(Path(folder) / path.stem / path.name, make(path, points)) for path in lesson_paths(notebooks)]
    edited = [target for target, nb in lessons if target.is_file() and _differs(target, nb)]
    if edited and not overwrite:  # a teacher's edits to an exported lesson are not written over without a word
        raise ValueError(f"{edited[0]} exists and differs from the lesson (edited there?): move it away, or pass "
                         f"--again to write the lessons over it.")
    for target, nb in lessons:
        atomic_write(target, lambda tmp, nb=nb: nbformat.write(nb, tmp))
    return [target for target, _ in lessons]


def _differs(target: Path, nb) -> bool:
    try:
        return target.read_text(encoding="utf-8") != nbformat.writes(nb) + "\n"
    except (OSError, UnicodeDecodeError):
        return True
