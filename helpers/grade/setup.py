"""A lesson's own setup, run once from the PRISTINE notebook: the state each exercise's check starts from.

The code cells of notebooks/0N_*.ipynb run in order in one namespace, as in a kernel, up to the last
exercise (IPython magics such as `%matplotlib inline` left out, figures closed, printing hidden). At
each exercise cell the lines that make the check's inputs run, then the namespace is kept (a shallow
copy) before the stub is defined: a worker starts each exercise from that copy with the student's
definitions added. Nothing here comes from a submission, so a student cannot change the setup.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import time
from dataclasses import dataclass

import matplotlib

from .lessons import Lesson


@dataclass
class Prepared:
    """A lesson after its setup: one namespace per exercise, in the lesson's order."""

    lesson: Lesson
    namespaces: list[dict]
    seconds: float = 0.0


def _plain_python(source: str) -> str:
    """A cell without its IPython magics and shell lines (a kernel turns them into calls)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def _run(source: str, namespace: dict, label: str) -> None:
    if source.strip():
        exec(compile(_plain_python(source), label, "exec"), namespace)


def _stub_only(source: str, name: str) -> str:
    """An exercise cell from its stub `def name` on, without the statements that call a check (`H.check_…`)."""
    body = ast.parse(_plain_python(source)).body
    start = next(i for i, s in enumerate(body) if getattr(s, "name", None) == name)
    return ast.unparse([s for s in body[start:] if "H.check_" not in ast.unparse(s)])


def prepare(lesson: Lesson) -> Prepared:
    """Run the lesson's setup (every code cell up to the last exercise) and keep each exercise's namespace."""
    started = time.perf_counter()
    matplotlib.use("Agg")  # no window: the figures of the setup are made and closed
    import matplotlib.pyplot as plt
    namespace: dict = {"__name__": "__main__"}
    kept, last = [], lesson.exercises[-1][0] if lesson.exercises else -1
    exercise_at = dict(lesson.exercises)
    hide = io.StringIO()
    with contextlib.redirect_stdout(hide), contextlib.redirect_stderr(hide), _quiet_env():
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
    return Prepared(lesson, kept, time.perf_counter() - started)


@contextlib.contextmanager
def _quiet_env():
    """Progress bars of the setup (tqdm) off while it runs."""
    before = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = before
