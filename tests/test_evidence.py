"""Evidence before a sentence (issue 51 §2): "fixed to the first input" only when a number of the first
input explains the later answer; "not attempted" only for the student's own stub; a float refused where a
whole number is asked for, a 0-d tensor and an array of two numbers read as numbers; the inputs hold the
distractors their exercises invite; a Verdict is truthy only when it passed."""

import numpy as np
import pytest
import torch

import helpers as H
from helpers.exercises import formation_checks, head_checks
from helpers.exercises import solutions as S

FIXED = "something is fixed to the first input's size"


def test_a_divisor_of_the_first_inputs_size_is_called_fixed():
    got = H.check_attention_weights(lambda Q, K: (Q @ K.T / 4).softmax(-1))  # √16: the first input's d
    assert "divided by 4" in got.line and FIXED in got.line


def test_a_slip_harmless_on_the_first_input_is_not_called_fixed():
    def extra_on_the_second(Q, K):
        bump = 0 if Q.shape[0] == 5 else 1  # no number of the first input in the answer
        return (Q @ K.T / Q.shape[-1] ** 0.5 + bump * torch.eye(Q.shape[0])).softmax(-1)
    got = H.check_attention_weights(extra_on_the_second)
    assert "It was right on the first input" in got.line and FIXED not in got.line and "fixed" not in got.line


def test_kv_heads_for_layers_is_not_a_fixed_number_but_32_layers_is():
    """Mistral 7B and Qwen2-7B have as many layers as heads: using the heads for the layers is right on both."""
    heads_for_layers = lambda c, n: 4 * c["num_attention_heads"] * c["num_key_value_heads"] * (  # noqa: E731
        c["hidden_size"] // c["num_attention_heads"]) * n
    assert "fixed" not in H.check_kv_cache(heads_for_layers).line
    typed_32 = lambda c, n: 4 * 32 * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * n  # noqa
    assert "fixed to the first model" in H.check_kv_cache(typed_32).line
    assert "fixed to the first model" in H.check_kv_cache(lambda c, n: 1048576000).line  # the first answer, always


def test_a_rounding_no_score_of_the_first_curve_straddles_is_not_called_fixed():
    def rounded(steps, scores, tokens_per_step):
        for step, score in zip(steps, scores):
            if round(score, 1) >= 0.5:
                return step
    got = H.check_formation_step(rounded)
    assert not got and "fixed" not in got.line


# --- not attempted --------------------------------------------------------------------------------------
def test_xor_for_a_power_is_a_python_slip_not_the_stub():
    def xor(Q, K):
        return (Q @ K.T / torch.tensor(float(Q.shape[-1])) ^ 0.5).softmax(-1)  # torch: NotImplementedError
    got = H.check_attention_weights(xor)
    assert got.code == "attention_weights.error.xor_not_power" and "** 0.5" in got.line
    got = H.check_attention_weights(lambda Q, K: (Q @ K.T / Q.shape[-1] ^ 0.5).softmax(-1))  # Python: TypeError
    assert got.code == "attention_weights.error.xor_not_power"


@pytest.mark.parametrize("body", ["raise NotImplementedError", "raise NotImplementedError()",
                                  "raise NotImplementedError('write the scores first')"])
def test_the_students_own_stub_is_not_attempted(body):
    cell = {}
    exec(f"def attention_weights(Q, K):\n    {body}\n", cell)
    assert H.check_attention_weights(cell["attention_weights"]).outcome == "not_attempted"


def test_a_not_implemented_error_raised_deeper_down_with_a_message_is_not_the_stub():
    def helper():
        raise NotImplementedError("a helper of mine")
    got = H.check_attention_weights(lambda Q, K: helper())
    assert got.outcome == "raised" and "a helper of mine" in got.line


# --- numbers of another type ----------------------------------------------------------------------------
def test_a_0d_tensor_is_a_number_and_an_array_of_two_numbers_is_two_numbers():
    assert head_checks.read_prediction(torch.tensor(0.25)) == (0.25, None)
    assert head_checks.read_prediction(np.array(0.5)) == (0.5, None)
    want = S.my_knockout_prediction()
    for answer in (np.array(want), torch.tensor(want, dtype=torch.float64), [torch.tensor(w) for w in want]):
        got = H.check_knockout_along(lambda a=answer: a)
        assert got.passed, got.line


# --- distractors --------------------------------------------------------------------------------------
def test_a_measure_that_adds_the_diagonal_does_not_find_the_previous_word_head():
    maps = head_checks.planted_maps()

    def with_itself(attentions):
        a = attentions.float()
        score = a.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) + a.diagonal(dim1=-2, dim2=-1)[..., 1:].sum(-1)
        best = int(score.flatten().argmax())
        return divmod(best, a.shape[1])
    assert with_itself(maps) != (2, 1) and S.previous_word_head(maps) == (2, 1)
    assert not H.check_previous_word_head(with_itself, maps)


def test_a_curve_that_never_forms_wants_none_and_names_what_was_returned_instead():
    assert any(max(v) < 0.5 for _, v, _ in formation_checks.CURVES)
    assert H.check_formation_step(S.formation_step).passed

    def last_step(steps, scores, tokens_per_step):
        for step, score in zip(steps, scores):
            if score >= 0.5:
                return step
        return steps[-1]

    def first_of_list(steps, scores, tokens_per_step):
        return [step for step, score in zip(steps, scores) if score >= 0.5][0]
    assert H.check_formation_step(last_step).code == "formation_step.never_last_step"
    assert H.check_formation_step(first_of_list).code == "formation_step.never_list_index"
    assert H.check_formation_step(lambda s, v, t: None).outcome == "not_attempted"  # None everywhere: the stub


# --- a verdict in an if ---------------------------------------------------------------------------------
def test_a_verdict_is_true_only_when_it_passed():
    assert H.check_attention_weights(S.attention_weights)
    assert not H.check_attention_weights(lambda Q, K: (Q @ K.T).softmax(-1))
    assert not H.check_attention_weights(lambda Q, K: None)
