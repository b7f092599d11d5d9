"""A wrong answer that does not move with its inputs is named as written in (sweep 16, W01 and F02):
the same answer on every input, or one number of a tuple that stays put where the right one changes."""

import torch

import helpers as H


def test_a_whole_answer_written_in_is_named(capsys):
    verdict = H.check_concat_shape(lambda n_tokens, width, n_heads: (4, 768))  # the notebook's example
    assert verdict.code == "concat_shape.same_for_every_input"
    assert "(4, 768) on all 4 inputs" in verdict.line and "from the arguments" in verdict.line


def test_one_number_written_in_is_named_by_its_place(capsys):
    def head_size_and_params(width, n_heads):
        d = 64  # GPT-2's head size, written in
        return d, 4 * width * width + 4 * width + (d - width // n_heads) * width
    verdict = H.check_head_size_and_params(head_size_and_params)
    assert verdict.code == "head_size_and_params.number_written_in"
    assert "the first number is 64 on all 5 inputs" in verdict.line


def test_a_fixed_tensor_is_named_and_two_inputs_read_as_both(capsys):
    verdict = H.check_attention_weights(lambda Q, K: torch.full((4, 4), 0.25))
    assert verdict.code == "attention_weights.same_for_every_input"
    assert "the same [4, 4] numbers on both inputs" in verdict.line


def test_an_answer_that_moves_with_its_inputs_is_not_called_written_in(capsys):
    verdict = H.check_concat_shape(lambda n_tokens, width, n_heads: (n_tokens, width + 1))
    assert verdict.outcome != "right"
    assert verdict.code.split(".")[-1] not in {"same_for_every_input", "number_written_in"}
    verdict = H.check_head_size_and_params(lambda width, n_heads: (width // n_heads, 4 * width * width + 5))
    assert verdict.code.split(".")[-1] not in {"same_for_every_input", "number_written_in"}


def test_a_zero_that_a_formula_gives_everywhere_is_not_called_written_in(capsys):
    # n_heads // width is 0 on every input: a division the wrong way round, not a number written in
    verdict = H.check_head_size_and_params(lambda width, n_heads: (n_heads // width, 4 * width * width + 4 * width))
    assert verdict.outcome != "right"
    assert verdict.code.split(".")[-1] not in {"same_for_every_input", "number_written_in"}


def test_a_default_argument_computed_from_the_notebook_is_named(capsys):
    """`def attention_weights(Q, K, d=Q.shape[-1])` takes the notebook's d once (sweep 19, r2_default_from_notebook_Q);
    a default the check passes is not blamed (split_heads(x, n_heads=12) with 12 written in its body)."""
    Q = torch.zeros(4, 768)

    def attention_weights(Q, K, d=Q.shape[-1]):
        return (Q @ K.T / d ** 0.5).softmax(-1)

    assert "It comes from your default argument d=768, which Python computes once" in \
        H.check_attention_weights(attention_weights).line

    def split_heads(x, n_heads=12):
        return x.reshape(x.shape[0], 12, -1).transpose(0, 1)

    assert "default argument" not in H.check_split_heads(split_heads).line
