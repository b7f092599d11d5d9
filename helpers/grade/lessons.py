"""Which lesson a submitted notebook is, and the anatomy of the pristine lessons in notebooks/.

A lesson is known by its `#` title heading ("# 01 · One attention head …"), never by its file name:
a heading that equals a pristine lesson's title, or starts with its number and "·", names it; a
notebook without one is named by the exercise functions it defines, when those belong to one lesson.
A notebook with two lessons' headings (two notebooks merged) or of no lesson is refused in one line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .exercise_cells import GRADED, ExerciseCell, lesson_paths, read_lesson, split

HEADING = re.compile(r"^#\s+(\d\d)\s*·", re.M)  # "# 01 · …": the lesson's number


@dataclass(frozen=True)
class Lesson:
    """A pristine lesson: its number, title, code cells, and which of them are exercises."""

    number: str  # "01"
    title: str  # the first line of its title heading
    path: Path
    cells: tuple[str, ...]  # the source of every code cell, in order
    exercises: tuple[tuple[int, ExerciseCell], ...]  # (index into cells, the exercise's pieces)

    @property
    def names(self) -> tuple[str, ...]:
        """The functions (or class) the student writes, in notebook order."""
        return tuple(ex.name for _, ex in self.exercises)


def _title(cells: list) -> str:
    return next((line for c in cells if c.cell_type == "markdown" for line in c.source.splitlines()
                 if HEADING.match(line)), "")


def read(path: Path) -> Lesson:
    """One pristine notebook taken apart (cells, exercise cells)."""
    nb = read_lesson(path)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    exercises = tuple((i, ex) for i, src in enumerate(code) if (ex := split(src)) is not None)
    title = _title(nb.cells)
    return Lesson(HEADING.match(title).group(1) if title else path.name[:2], title, path, tuple(code), exercises)


@lru_cache(maxsize=1)
def lessons() -> dict[str, Lesson]:
    """The graded lessons (01-08) by number, read once."""
    return {lesson.number: lesson for lesson in map(read, lesson_paths(numbers=GRADED))}


def defined_names(source: str) -> set[str]:
    """The functions and classes a cell defines at its top level (none when it does not parse)."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", source, re.M))  # a broken cell still says what it meant
    return {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


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
    defined = set().union(*(defined_names(c.get("source", "")) for c in cells if c.get("cell_type") == "code"))
    by_names = sorted(n for n, lesson in known.items() if defined & set(lesson.names))
    if len(by_names) == 1:
        return by_names[0]
    if by_names:
        raise ValueError(f"defines exercises of lessons {' and '.join(by_names)}: hand in one notebook per lesson")
    raise ValueError("is no lesson: it has no title heading of notebooks 01-08 and defines none of their exercises")
