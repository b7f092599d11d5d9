"""Checks that a student's code cannot fool or break (issue 22): the comparison ignores whatever the
student's function changes while it runs, floods of prints are cut, Stop is a ✗, and the time limit
cannot be swallowed by `except Exception`."""

import math
import time

import numpy as np
import pytest
import torch

import helpers as H
from helpers.exercises import grading, sandbox, verdict
from helpers.exercises import solutions as S


def one_line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out


def test_replacing_allclose_during_the_call_changes_nothing(monkeypatch, capsys):
    def cheat(Q, K):
        monkeypatch.setattr(torch, "allclose", lambda *a, **k: True)
        monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
        monkeypatch.setattr(np, "isclose", lambda *a, **k: np.ones(1, dtype=bool))
        return torch.zeros(Q.shape[0], K.shape[0])
    H.check_attention_weights(cheat)
    assert one_line(capsys).startswith("✗")


def test_changing_the_tolerance_during_the_call_changes_nothing(monkeypatch, capsys):
    def cheat(Q, K):
        monkeypatch.setattr(verdict, "ATOL", 1e9)
        monkeypatch.setattr(verdict, "RTOL", 1e9)
        return (Q @ K.T).softmax(-1)  # no scaling: wrong
    H.check_attention_weights(cheat)
    assert "forgot the 1/√d scaling" in one_line(capsys)


class Always(torch.Tensor):
    """A tensor that claims to equal everything."""

    def __eq__(self, other):
        return True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal, torch.Tensor.allclose, torch.isclose):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_subclass_with_its_own_eq_and_torch_function_is_judged_on_its_numbers(capsys):
    H.check_attention_weights(lambda Q, K: torch.zeros(Q.shape[0], K.shape[0]).as_subclass(Always))
    assert one_line(capsys).startswith("✗")
    H.check_attention_weights(lambda Q, K: S.attention_weights(Q, K).as_subclass(Always))
    assert one_line(capsys).startswith("✓")


def test_megabytes_of_prints_are_cut_to_a_short_echo(capsys):
    def chatty(Q, K):
        for _ in range(2000):
            print("x" * 1000)
        return S.attention_weights(Q, K)
    H.check_attention_weights(chatty)
    out = capsys.readouterr().out
    assert len(out) < sandbox.ECHO_LIMIT + 500 and "more characters; not shown" in out
    assert out.splitlines()[-1].startswith("✓")


@pytest.mark.parametrize("check", [H.check_attention_weights, H.check_concat_shape])
def test_keyboard_interrupt_is_a_cross_saying_stopped(check, capsys):
    def stopped(*args):
        raise KeyboardInterrupt
    check(stopped)
    out = one_line(capsys)
    assert out.startswith("✗") and "stopped" in out


def test_the_time_limit_cannot_be_swallowed(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)

    def stubborn(Q, K):
        while True:
            try:
                while True:
                    pass
            except Exception:  # the student's catch-all
                pass

    H.check_attention_weights(stubborn)
    assert "ran for more than 0.3 s" in one_line(capsys)

    def swallow_and_return(Q, K):
        try:
            while True:
                pass
        except BaseException:  # even this: the check still says it was too slow
            return S.attention_weights(Q, K)
    H.check_attention_weights(swallow_and_return)
    assert "ran for more than 0.3 s" in one_line(capsys)
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 10.0)  # the usual limit: a busy machine may need more than 0.3 s
    H.check_attention_weights(S.attention_weights)  # the timer is gone afterwards
    assert one_line(capsys).startswith("✓")


def test_time_that_runs_out_between_two_inputs_is_called_too_slow_not_an_exit(monkeypatch, capsys):
    """Seen once on a busy machine: the limit passed after one input had returned and before the next began,
    and the child stopped without a word, so the check told a correct function it had ended its process."""
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 0.3)
    changes = sandbox.changes

    def slow_changes(before, **options):  # the child's look for patches after an input takes the rest of the time
        if options:  # not the child's call
            return changes(before, **options)
        time.sleep(0.35)
        return changes(before)
    monkeypatch.setattr(sandbox, "changes", slow_changes)
    H.check_attention_weights(S.attention_weights)
    line = one_line(capsys)
    assert "ran for more than 0.3 s" in line and "ended the Python process" not in line


def test_a_function_wrong_at_once_then_endless_is_stopped_within_one_limit(monkeypatch):
    """All inputs of a check share one time limit: a function wrong on the first input and endless on the
    second is stopped once, and the inputs after the loop never run."""
    monkeypatch.setattr(sandbox, "TIME_LIMIT_S", 2.0)  # (0.3 s ran out before the second input on a loaded machine)
    doubling = grading.Exercise("doubling", [(f"x [{n}]", (torch.ones(n),)) for n in range(2, 8)], lambda x: 2 * x)

    calls = []

    def wrong_then_endless(x):
        calls.append(len(x))
        while len(x) > 2:
            pass
        return 3 * x

    verdict = grading.grade(doubling, wrong_then_endless)
    assert not verdict.passed and verdict.line.startswith("✗")  # judged on the inputs it answered
    assert calls == [2, 3]  # stopped in the second input; the four after it never ran


def test_a_half_precision_answer_gets_a_hint_not_numbers_differ(capsys):
    H.check_attention_weights(lambda Q, K: S.attention_weights(Q.half(), K.half()))
    assert "half precision" in one_line(capsys)
    H.check_attention_weights(lambda Q, K: S.attention_weights(Q.bfloat16(), K.bfloat16()))
    assert "half precision" in one_line(capsys)


def test_a_student_who_mutates_the_inputs_changes_nothing_for_the_reference_and_is_told(capsys):
    def mutate(Q, K):
        out = S.attention_weights(Q, K)
        Q.zero_()
        K.fill_(math.nan)
        return out
    H.check_attention_weights(mutate)
    line = one_line(capsys)
    assert line.startswith("✗ attention weights: the numbers are right, but your function changed `Q` and `K`"), line
    H.check_attention_weights(S.attention_weights)  # the check's own inputs are as they were
    assert one_line(capsys).startswith("✓")


def test_the_first_input_tells_sqrt_t_from_sqrt_d():
    from helpers.exercises import attention_checks as C, multihead_checks as MH
    for label, (Q, K) in C.ATTENTION_WEIGHTS.cases:
        assert Q.shape[0] != Q.shape[1] and Q.shape[1] not in (4, 64, 768)
    for label, (X, W_Q, *_) in MH.ONE_HEAD.cases:
        assert len({X.shape[0], X.shape[1], W_Q.shape[1]}) == 3


@pytest.mark.parametrize("name", ["ATTENTION_WEIGHTS", "MASKED_WEIGHTS", "WEIGHTED_SUM", "ONE_HEAD", "SPLIT_HEADS",
                                  "MERGE_HEADS", "RECOMBINE"])
def test_every_catalogued_mistake_is_wrong_on_every_input(name):
    """A mistake that equals the reference on an input would be passed there, or misnamed."""
    from helpers.exercises import attention_checks as C, multihead_checks as MH
    ex = getattr(C, name, None) or getattr(MH, name)
    for label, args in ex.cases:
        args64 = sandbox.clone_args(args, torch.float64)
        expected, _ = ex.read(ex.reference(*args64), args64)
        for m in ex.mistakes:
            try:
                wrong, problem = ex.read(m.answer(*sandbox.clone_args(args64)), args64)
            except Exception:
                continue
            assert problem or not grading.close(wrong, expected), (label, m.says)
