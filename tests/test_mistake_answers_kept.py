"""The mistakes' answers are computed once per exercise and kept (exercises/grading.py): grading a wrong
answer or a raised error again runs no mistake again; nbgrader's stub counts as not attempted."""

from __future__ import annotations

import torch

from helpers.exercises import grading
from helpers.exercises.verdict import Exercise, Mistake

def _exercise(calls: list) -> Exercise:
    def counted(fn):
        def answer(*args):
            calls.append(1)
            return fn(*args)
        return answer
    mistakes = [Mistake("you doubled it.", counted(lambda x: 2 * x), code="doubled"),
                Mistake("you indexed past the end.", counted(lambda x: x[x.shape[0] + 5]), code="past_end")]
    return Exercise("twice", [("x [3]", (torch.arange(3.0),)), ("x [5]", (torch.arange(5.0),))],
                    lambda x: x + 1, mistakes)

def test_each_mistake_runs_once_per_input():
    calls: list = []
    ex = _exercise(calls)
    for _ in range(3):
        assert grading.grade(ex, lambda x: x[x.shape[0] + 5]).code == "twice.past_end"
    assert len(calls) <= 2 * 2 * 2

def test_the_nbgrader_stub_is_not_attempted_and_another_error_is_not():
    ex = _exercise([])

    def stub(x):
        raise NotImplementedError()

    class Mine(NotImplementedError):
        pass

    def own(x):
        raise Mine("half done")

    assert grading.grade(ex, stub).outcome == "not_attempted"
    assert grading.grade(ex, own).outcome == "raised"  # only the stub's own type, not a subclass
