"""A function with work in it but no return is told so, not counted as "not attempted" (sweep 17: oh_w7,
x_oh_noret, x_mh_noret, x_cs_noret); a stub (docstring, comment, `...`, pass) still is."""

import pytest

import helpers as H


def merge_heads_stored(z):
    merged = z.transpose(0, 1).reshape(z.shape[1], -1)  # noqa: F841 (the slip: no return)


def merge_heads_dropped(z):
    z.transpose(0, 1).reshape(z.shape[1], -1)


def merge_heads_loop(z):
    parts = []
    for head in z:
        parts.append(head)


def stub_dots(z):
    """z [n_heads × T × d] -> [T × n_heads * d]."""
    # your code here
    ...


def stub_pass(z):
    pass


def stub_return_none(z):
    return None


@pytest.mark.parametrize("fn, words", [
    (merge_heads_stored, "its last line stores `merged`; end it with return and the result"),
    (merge_heads_dropped, "write return in front of its last line"),
    (merge_heads_loop, "end it with return and the result"),
])
def test_work_without_return_is_a_mistake_that_names_the_missing_return(fn, words, capsys):
    verdict = H.check_merge_heads(fn)
    assert verdict.outcome == "mistake" and verdict.code == "merge_heads.no_return"
    assert "returns None" in verdict.line and words in verdict.line


@pytest.mark.parametrize("fn", [stub_dots, stub_pass, stub_return_none])
def test_a_stub_is_still_not_attempted(fn, capsys):
    assert H.check_merge_heads(fn).outcome == "not_attempted"


def test_a_capstone_forward_with_work_but_no_return_is_told(capsys):
    import torch

    class MyMultiHead(torch.nn.Module):
        def __init__(self, dim, n_heads):
            super().__init__()
            self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)  # noqa: F841 (stopped here)

    verdict = H.check_multihead(MyMultiHead)
    assert verdict.code == "multihead_capstone.no_return", verdict.line
    assert "your forward computes something" in verdict.line
    assert "its last line stores `v`" in verdict.line


def test_a_check_called_without_the_function_or_with_more_is_one_line(capsys):
    """H.check_attention_weights() and H.check_attention_weights(attention_weights, Q) raised a TypeError traceback
    in the notebook (sweep 20, 01aw_no_arg, 01aw_extra_arg, 07kv_no_arg)."""
    assert H.check_attention_weights() is None
    line = capsys.readouterr().out.strip()
    assert line.startswith("✗ H.check_attention_weights: missing a required argument") and "\n" not in line
    assert H.check_kv_cache(stub_dots, 3) is None
    assert "too many positional arguments" in capsys.readouterr().out
    assert H.check_merge_heads(stub_dots).outcome == "not_attempted"  # a right call goes through


def test_input_in_the_students_function_is_named_at_once_not_waited_on(capsys):
    """input() waited for typing until the 10 s limit: "an endless loop?" (sweep 20, 01aw_input)."""
    import builtins

    before = builtins.input

    def attention_weights(Q, K):
        input("scale? ")
        return (Q @ K.T).softmax(-1)

    verdict = H.check_attention_weights(attention_weights)
    assert verdict.code == "attention_weights.error.input_called" and builtins.input is before


def test_another_exercises_function_passed_to_a_check_is_named(capsys):
    """A right attention_weights passed to check_weighted_sum got "V.T: V is [T × d] already" (sweep 20, 01ws_wrong_ex_fn)."""
    def attention_weights(Q, K):
        return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)

    assert H.check_weighted_sum(attention_weights) is None
    assert capsys.readouterr().out.strip() == ("✗ H.check_weighted_sum: you passed attention_weights, the function of "
                                               "another exercise: pass weighted_sum, the one this exercise asks for.")
    assert H.check_attention_weights(attention_weights).outcome == "right"
