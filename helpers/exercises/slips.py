"""The catalogued mistakes' answers on an exercise's inputs: computed once, kept on the Exercise.

A check compares the student's answer with every mistake's answer on the same inputs. The capstone
has hundreds of mistakes (two slips at once), each a full attention layer, so computing them again
for every wrong answer took tens of seconds; kept, the second wrong answer costs nothing. A grader
calls `warm(ex)` once before it forks a worker per student, so every student finds them made.
"""

from __future__ import annotations

import torch

from . import sandbox
from .exercise import Exercise


def args64(ex: Exercise, k: int) -> tuple:
    """Input k as the reference reads it: a fresh copy, in float64 unless the exercise needs exact inputs."""
    args = ex.cases[k][1]
    return sandbox.clone_args(args) if ex.exact_inputs else sandbox.clone_args(args, torch.float64)


def reference(ex: Exercise, n: int):
    """The reference's answer on input n, read as plain numbers; kept."""
    if (n, "reference") not in ex.answers:
        given = args64(ex, n)
        ex.answers[n, "reference"] = ex.read(ex.reference(*sandbox.clone_args(given)), given)[0]
    return ex.answers[n, "reference"]


def mistake_answer(ex: Exercise, n: int, m: int, given: tuple):
    """The m-th mistake's answer on input n, read like the student's (None where it raises); kept."""
    if (n, m) not in ex.answers:
        try:
            wrong, problem = ex.read(ex.mistakes[m].answer(*sandbox.clone_args(given)), given)
        except Exception:  # a variant that raises on these inputs cannot match an answer
            wrong, problem = None, "raised"
        ex.answers[n, m] = None if problem else wrong
    return ex.answers[n, m]


def mistake_error(ex: Exercise, k: int, m: int) -> BaseException | None:
    """The error the m-th mistake raises on input k as the student got it (None if it raises none); kept."""
    if (k, m, "error") not in ex.answers:
        try:
            ex.mistakes[m].answer(*sandbox.clone_args(ex.cases[k][1]))
            ex.answers[k, m, "error"] = None
        except Exception as theirs:
            ex.answers[k, m, "error"] = theirs
    return ex.answers[k, m, "error"]


def warm(ex: Exercise) -> None:
    """Compute and keep the reference's and every mistake's answers and errors on every input."""
    with torch.no_grad():
        for n in range(len(ex.cases)):
            reference(ex, n)
            given = args64(ex, n)
            for m in range(len(ex.mistakes)):
                mistake_answer(ex, n, m, given)
                mistake_error(ex, n, m)
