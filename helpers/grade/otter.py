"""Lessons 01-07 in otter-grader's notebook format: `python -m helpers.grade --otter FOLDER`.

Each lesson becomes FOLDER/<lesson>/<lesson>.ipynb, a master notebook for `otter assign`. An exercise
becomes a question (its points from the exercise) holding the stub with the reference body between
`# BEGIN SOLUTION` and `# END SOLUTION` (otter assign leaves `...`, the lesson's own stub), and one
exception-based test (`ok_format: false`) that raises AssertionError carrying the verdict's line.
Otter has no locked cells: the student's copy of the other cells is what `otter run` executes.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from .lessons import NOTEBOOKS, ExerciseCell
from .nbgrader import converted, write_lessons

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
CONFIG = """# ASSIGNMENT CONFIG
name: {name}
init_cell: true
check_all_cell: false
export_cell: false
run_tests: true
generate: true
tests:
  ok_format: false"""


def _raw(source: str, cell_id: str, new=nbformat.v4.new_raw_cell) -> nbformat.NotebookNode:
    cell = new(source)
    cell.id = cell_id  # stable ids: writing twice gives the same file
    return cell


def _code(source: str, cell_id: str) -> nbformat.NotebookNode:
    return _raw(source, cell_id, nbformat.v4.new_code_cell)


def test_source(ex: ExerciseCell) -> str:
    """The question's exception-based test: its arguments are the notebook names the check reads."""
    return f"def test_{ex.key}({', '.join(ex.reads)}):\n    H.assert_passed({ex.test})"


def question_cells(ex: ExerciseCell, points: float) -> list[nbformat.NotebookNode]:
    """The cells one exercise becomes: its inputs, then the question with its solution and test."""
    cells = [] if ex.comments_only else [_code(ex.inputs, f"{ex.key}_inputs")]
    return cells + [_raw(f"# BEGIN QUESTION\nname: {ex.key}\npoints: {points:g}", f"{ex.key}_question"),
                    _raw("# BEGIN SOLUTION", f"{ex.key}_begin_solution"), _code(ex.answer_cell(BEGIN, END), ex.key),
                    _raw("# END SOLUTION", f"{ex.key}_end_solution"), _raw("# BEGIN TESTS", f"{ex.key}_begin_tests"),
                    _code(test_source(ex), f"test_{ex.key}"), _raw("# END TESTS", f"{ex.key}_end_tests"),
                    _raw("# END QUESTION", f"{ex.key}_end_question")]


def assignment(path: Path, points: dict[str, float] | None = None) -> nbformat.NotebookNode:
    """One lesson notebook as an otter-grader master notebook."""
    nb = converted(path, points, question_cells, lambda cell: cell)
    nb.cells.insert(0, _raw(CONFIG.format(name=path.stem), "assignment_config"))
    return nb


def write_source(folder: str | Path, points: dict[str, float] | None = None,
                 notebooks: Path = NOTEBOOKS, overwrite: bool = False) -> list[Path]:
    """Write lessons 01-07 as otter master notebooks under `folder`; return the notebooks' paths.
    `points`: grades.csv column ("01 attention_weights") -> points (default 1 each)."""
    return write_lessons(folder, points, notebooks, assignment, overwrite)
