"""Diagnosis by what the answer is (issue 51 §1): relations to the right answer that hold for any mistake
of a kind, each named with what was seen; the last resort says which property failed. The answers here
are written to be outside the catalogue (odd constants, odd permutations), so only a relation names them."""

import math

import pytest
import torch

import helpers as H
from helpers.exercises import diagnosis
from helpers.exercises import solutions as S


def weights(Q, K):
    return (Q @ K.T / math.sqrt(Q.shape[-1])).softmax(-1)


CASES = [
    (H.check_one_head, lambda X, a, b, c: S.one_head(X, a, b, c).T.contiguous(), "one_head.axes_permuted",
     "transposed"),
    (H.check_grouped_attention, lambda Q, K, V: S.grouped_attention(Q, K, V).permute(1, 0, 2), "axes_permuted",
     "axes in another order"),
    (H.check_grouped_attention, lambda Q, K, V: S.grouped_attention(Q, K, V).mean(0), "grouped_attention.reduced",
     "averaged over axis 0"),
    (H.check_recombine, lambda z, W: (z @ W).sum(0) - 0.37, "recombine.constant_offset", "− 0.37"),
    (H.check_masked_weights, lambda s: s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), -3.0).softmax(-1),
     "masked_weights.mask_pattern", "not 0 above the diagonal"),
    (H.check_grouped_attention, lambda Q, K, V: S.grouped_attention(Q, K.flip(0), V.flip(0)),
     "grouped_attention.head_blocks", "are right"),
    (H.check_grouped_attention, lambda Q, K, V: S.grouped_attention(Q[:1].expand_as(Q), K[:1].expand_as(K),
                                                                    V[:1].expand_as(V)),
     "grouped_attention.heads_equal", "every head of your answer is the same"),
]


@pytest.mark.parametrize("check, answer, code, words", CASES, ids=[c[2] for c in CASES])
def test_a_relation_to_the_right_answer_is_named_with_what_was_seen(check, answer, code, words):
    got = check(answer)
    assert got.code.endswith(code) and words in got.line and not got, got.line


def test_the_right_numbers_in_another_layout_and_a_slice_of_the_answer_are_named():
    right = torch.randn(4, 6, 5).double().numpy()  # (H, T, d)
    merged = right.transpose(1, 0, 2).reshape(6, 20)
    line, code = diagnosis.describe(right.transpose(2, 1, 0).reshape(6, 20), merged, (right,))
    assert code == "wrong_layout" and "exactly the right numbers" in line
    line, code = diagnosis.describe(right[2], right, ())
    assert code == "part_of_answer" and "index 2 of axis 0" in line


def test_weights_normalised_over_the_columns_are_told_so_with_a_row_that_fails():
    value = torch.rand(4, 4).softmax(0).double().numpy()
    expected = torch.rand(4, 4).softmax(-1).double().numpy()
    line, code = diagnosis.describe(value, expected, ())
    assert code == "normalised_wrong_axis" and "sum to 1 over axis -2" in line and "row [" in line


def test_nan_is_placed_and_a_row_of_nan_is_read_as_a_row_of_minus_inf():
    scores = torch.randn(5, 5).double()
    expected = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf")).softmax(-1).numpy()
    value = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(0), float("-inf")).softmax(-1).numpy()
    line, code = diagnosis.describe(value, expected, ())
    assert code == "nan_or_inf" and "the first at [0, 0]" in line and "row 0 is NaN throughout" in line


def test_the_last_resort_says_which_property_failed_never_only_numbers_differ():
    expected = torch.rand(5, 5).softmax(-1).double().numpy()
    value = expected.copy()
    value[3] *= 1.7
    assert diagnosis.property_line(value, expected).startswith("row 3 of your weights sums to 1.7")
    value = expected.copy()
    value[1, 2] = -0.3
    assert "negative numbers (-0.3 at [1, 2])" in diagnosis.property_line(value, expected)
    plain = torch.randn(4, 3).double().numpy()
    value = plain.copy()
    value[2] += 1.0
    value[2, 0] += 0.5
    assert "rows 0–1 and 3 are right, row 2 is not" in diagnosis.property_line(value, plain)


def test_a_kv_answer_off_by_a_ratio_of_config_numbers_on_every_model_names_the_numbers():
    heads_for_layers = lambda c, n: 4 * c["num_attention_heads"] * c["num_key_value_heads"] * (  # noqa: E731
        c["hidden_size"] // c["num_attention_heads"]) * n
    got = H.check_kv_cache(heads_for_layers)
    assert got.code == "kv_cache_bytes.heads_for_layers" and "num_attention_heads where num_hidden_layers" in got.line
    window = lambda c, n: 4 * c["num_hidden_layers"] * c["num_key_value_heads"] * (  # noqa: E731
        c["hidden_size"] // c["num_attention_heads"]) * min(n, 4096)  # 4096/8000 is hidden_size/n_tokens on one model only
    got = H.check_kv_cache(window)
    assert got.code == "kv_cache_bytes.numbers_differ" and "0.512 × the right one" in got.line


def test_a_float_index_is_told_to_use_whole_number_division():
    def float_index(Q, K, V):
        group = Q.shape[0] / K.shape[0]
        return S.grouped_attention(Q, torch.stack([K[h / group] for h in range(Q.shape[0])]), V)
    got = H.check_grouped_attention(float_index)
    assert got.code == "grouped_attention.error.float_index" and "h // group" in got.line


def test_a_misread_crossing_is_named_though_the_function_returns_none_where_nothing_crosses():
    def index(steps, scores, tokens_per_step):
        for i, score in enumerate(scores):
            if score >= 0.5:
                return i
    assert H.check_formation_step(index).code == "formation_step.index_not_step"


def test_a_list_changed_in_place_is_told_to_work_on_a_copy():
    def pops(steps, scores, tokens_per_step):
        while scores and scores[0] < 0.5:
            steps.pop(0)
            scores.pop(0)
        return steps[0] if steps else None
    got = H.check_formation_step(pops)
    assert got.code == "formation_step.changed_input" and "work on a copy" in got.line and "tensor" not in got.line


def test_the_formation_line_says_what_is_wrong_with_the_step_and_the_knockout_line_which_number():
    def rounded(steps, scores, tokens_per_step):
        for step, score in zip(steps, scores):
            if round(score, 1) >= 0.5:
                return step
    assert "the score is 0.48, below 0.5" in H.check_formation_step(rounded).line
    before, after = S.my_knockout_prediction()
    off = after + 0.4 if after < 0.5 else after - 0.4  # 0.4 off at the end, still an accuracy
    got = H.check_knockout_along(lambda: (before, off))
    assert "At the end you predicted" in got.line and "before formation" not in got.line


def test_a_size_written_as_a_number_in_the_function_is_named():
    """`x.view(T, 12, D // 12)`, the notebook's 12 heads, got "wrong shape [12, 5, 1], expected [3, 5, 4]"."""
    def split_heads(x, n_heads):
        T, D = x.shape
        return x.view(T, 12, D // 12).transpose(0, 1)

    said = H.check_split_heads(split_heads)
    assert said.code == "split_heads.written_number", said.line
    assert "[12, 5, 1], not [3, 5, 4], and its size 12 is a number written in your function" in said.line
    assert diagnosis.written_numbers(split_heads) == {12}  # the 0 and 1 of transpose(0, 1) are axes, not sizes

    def grouped(Q, K, V):  # a right answer that writes a number is not accused of it
        return S.grouped_attention(Q, K, V) * 7 / 7

    assert H.check_grouped_attention(grouped).passed


def test_a_strict_comparison_that_skips_a_score_of_exactly_one_half_is_told_to_use_ge():
    """`s > 0.5` with next() and no default: not the catalogued slip alone, so the line said only "an earlier step
    already reaches 0.5"; that step's score is exactly 0.5, and the line now says so."""
    def strict(steps, scores, tokens_per_step):
        i = next(i for i, s in enumerate(scores) if s > 0.5)
        return steps[i]
    assert "at step 80 it is exactly 0.5, which reaches 0.5: compare with >=, not >" in H.check_formation_step(strict).line
