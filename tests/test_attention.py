"""The step-by-step attention math: each step, the drivers, the model oracle, bad input."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.core import attention as A
from helpers.core.model import GPT, GPTConfig, head_weights


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def per_head(H, D, d, seed=0):
    return dict(W_Q=rand(H, D, d, seed=seed), W_K=rand(H, D, d, seed=seed + 1), W_V=rand(H, D, d, seed=seed + 2),
                W_O=rand(H, d, D, seed=seed + 3))


def test_single_head_steps_follow_the_formula():
    X, W_Q, W_K, W_V = rand(5, 12), rand(12, 4, seed=1), rand(12, 4, seed=2), rand(12, 4, seed=3)
    s = A.single_head(X, W_Q, W_K, W_V)
    assert torch.allclose(s.scores, (X @ W_Q) @ (X @ W_K).T)
    assert torch.allclose(s.scaled, s.scores / 2.0)  # √4
    assert torch.equal(s.masked, s.scaled)
    assert torch.allclose(s.weights, s.scaled.softmax(-1))
    assert torch.allclose(s.z, s.weights @ (X @ W_V))
    assert s.z.shape == (5, 4) and s.weights.shape == (5, 5)


def test_biases_are_added_to_the_projections():
    X, W = rand(3, 6), rand(6, 2, seed=1)
    b = torch.tensor([1.0, -2.0])
    assert torch.allclose(A.project(X, W, b), X @ W + b)


def test_causal_mask_and_masked_softmax():
    s = A.single_head(rand(4, 8), rand(8, 2, seed=1), rand(8, 2, seed=2), rand(8, 2, seed=3), causal=True)
    assert torch.all(s.weights.triu(1) == 0)
    assert s.weights[0, 0] == 1.0  # the first word can only look at itself


def test_split_and_merge_are_inverse_and_keep_blocks_contiguous():
    x = torch.arange(24.0).reshape(2, 12)  # 2 words, 12 features
    heads = A.split_heads(x, 3)
    assert heads.shape == (3, 2, 4)
    assert torch.equal(heads[1, 0], torch.tensor([4.0, 5, 6, 7]))  # head 1 = features 4..7
    assert torch.equal(A.merge_heads(heads), x)
    assert A.split_heads(rand(2, 5, 12), 4).shape == (2, 4, 5, 3)  # batch dimensions pass through


def test_parameter_counts_of_the_walkthrough_layer():
    # numbers notebook 03 states
    assert A.attention_param_count(768, 12) == 2_362_368
    assert A.attention_param_count(768, 1) == A.attention_param_count(768, 12)
    parts = A.attention_param_breakdown(768, 12)
    assert parts["W_Q, W_K, W_V"] == 3 * 12 * 768 * 64 == 3 * 768 * 768 == 1_769_472
    assert parts["recombination W_O"] == 768 * 768 == 589_824
    assert parts["b_Q, b_K, b_V"] == 2_304 and parts["b_O"] == 768
    assert A.attention_param_count(768, 12, bias=False) == 4 * 768 * 768
    model = GPT(GPTConfig(vocab_size=10, n_layer=1, n_head=12, n_embd=768, mlp=False))
    assert sum(p.numel() for p in model.h[0].attn.parameters()) == A.attention_param_count(768, 12)


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_multi_head_matches_the_model_layer(n_heads):
    torch.manual_seed(n_heads)
    model = GPT(GPTConfig(vocab_size=20, n_ctx=16, n_layer=1, n_head=n_heads, n_embd=16, mlp=False)).eval()
    for p in model.parameters():
        p.data.normal_(0, 0.3)  # non-zero biases and a non-uniform attention
    ids = torch.tensor([[3, 1, 4, 1, 5, 9]])
    with torch.no_grad():
        e = model.embed(ids)
        x = model.h[0].ln_1(e)
        update, maps, _ = model.h[0].attn(x)
        out = model.h[0](e)[0]
        steps = A.multi_head_from(x[0], head_weights(model, 0), causal=True, residual=e[0])
    assert torch.allclose(steps.weights, maps[0], atol=1e-6)
    assert torch.allclose(steps.update, update[0], atol=1e-5)
    assert torch.allclose(steps.out, out[0], atol=1e-5)
    w = head_weights(model, 0)
    for h in range(n_heads):
        one = A.single_head(x[0], w["W_Q"][h], w["W_K"][h], w["W_V"][h], w["b_Q"][h], w["b_K"][h], w["b_V"][h],
                            causal=True)
        assert torch.allclose(one.z, steps.z[h], atol=1e-6)


def test_recombination_is_the_sum_of_decompressions():
    w = per_head(12, 48, 4)
    s = A.multi_head(rand(5, 48, seed=9), **w)
    assert s.concat.shape == (5, 48) and s.recombination.shape == (48, 48)
    assert torch.allclose(s.concat @ s.recombination, s.per_head.sum(0), atol=1e-4)
    assert torch.allclose(s.z[3] @ w["W_O"][3], s.per_head[3])
    assert torch.allclose(s.out, s.X + s.update)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 7), H=st.integers(1, 5), d=st.integers(1, 6), causal=st.booleans(),
       seed=st.integers(0, 10_000))
def test_property_rows_sum_to_one_and_mask_zeroes_the_future(T, H, d, causal, seed):
    D = H * d
    s = A.multi_head(rand(T, D, seed=seed), **per_head(H, D, d, seed=seed + 1), causal=causal)
    assert torch.allclose(s.weights.sum(-1), torch.ones(H, T), atol=1e-5)
    assert torch.all(s.weights >= 0)
    if causal:
        assert torch.all(s.weights.triu(1) == 0)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 6), H=st.integers(1, 6), d=st.integers(1, 8), D=st.integers(1, 20),
       seed=st.integers(0, 10_000))
def test_property_concat_times_recombination_equals_sum_of_decompressions(T, H, d, D, seed):
    z, W_O = rand(H, T, d, seed=seed), rand(H, d, D, seed=seed + 1)
    fused = A.merge_heads(z) @ A.recombination_matrix(W_O)
    summed = sum(z[h] @ W_O[h] for h in range(H))
    assert torch.allclose(fused, summed, atol=1e-4 * math.sqrt(H * d))


@pytest.mark.parametrize("d_model, n_heads, word", [(768, 7, "n_heads=7"), (64, 0, "n_heads=0"),
                                                     (64, -2, "n_heads=-2"), (64, 2.5, "n_heads=2.5"),
                                                     (0, 1, "d_model=0")])
def test_bad_head_counts_give_one_line_errors(d_model, n_heads, word):
    with pytest.raises(ValueError) as err:
        A.check_heads(d_model, n_heads)
    assert word in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError):
        A.split_heads(rand(2, 64), n_heads) if d_model == 64 else A.attention_param_count(d_model, n_heads)


def test_mismatched_shapes_give_one_line_errors():
    w = per_head(2, 8, 4)
    cases = [
        lambda: A.multi_head(rand(3, 9), **w),  # X has the wrong width
        lambda: A.multi_head(rand(3, 8), **{**w, "W_O": rand(2, 8, 4)}),  # W_O transposed
        lambda: A.multi_head(rand(3, 8), **{**w, "W_K": rand(3, 8, 4)}),  # a different head count
        lambda: A.multi_head(rand(3, 8), **w, residual=rand(4, 8)),
        lambda: A.single_head(rand(3, 8), rand(8, 4), rand(8, 4), rand(7, 4)),
        lambda: A.single_head(rand(3, 8), w["W_Q"], w["W_K"], w["W_V"]),  # all heads passed to single_head
        lambda: A.raw_scores(rand(3, 4), rand(3, 5)),
        lambda: A.merge_heads(rand(3, 4)),
    ]
    for case in cases:
        with pytest.raises(ValueError) as err:
            case()
        assert "\n" not in str(err.value)
