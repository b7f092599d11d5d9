"""MultiHead from scratch against two independent implementations, and its shapes and errors."""

import pytest
import torch
from torch.nn import functional as F

from helpers.core import attention as A
from helpers.core.multihead import MultiHead


def test_same_shape_in_same_shape_out_as_in_notebook_03():
    torch.manual_seed(0)
    layer = MultiHead(dim=64, heads=8)
    assert layer.head_size == 8
    assert layer(torch.rand(2, 10, 64)).shape == (2, 10, 64)
    assert layer.attention(torch.rand(2, 10, 64)).shape == (2, 8, 10, 10)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dim, heads", [(64, 8), (12, 3), (16, 1)])
def test_equals_torch_multihead_attention(dim, heads, causal):
    torch.manual_seed(dim + heads)
    ours = MultiHead(dim, heads, causal=causal, qkv_bias=True)
    ref = torch.nn.MultiheadAttention(dim, heads, bias=True, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(ours.qkv.weight)  # [W_Q; W_K; W_V] stacked by rows in both
        ref.in_proj_bias.copy_(ours.qkv.bias)
        ref.out_proj.weight.copy_(ours.out.weight)
        ref.out_proj.bias.copy_(ours.out.bias)
    x = torch.randn(3, 7, dim)
    mask = torch.ones(7, 7, dtype=torch.bool).triu(1) if causal else None  # True: a later word
    expected, maps = ref(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
    with torch.no_grad():
        assert torch.allclose(ours(x), expected, atol=1e-5)
        assert torch.allclose(ours.attention(x), maps, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_equals_scaled_dot_product_attention(causal):
    torch.manual_seed(1)
    ours = MultiHead(32, 4, causal=causal)
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        q, k, v = (ours.split(t) for t in ours.qkv(x).chunk(3, dim=-1))
        expected = ours.out(ours.merge(F.scaled_dot_product_attention(q, k, v, is_causal=causal)))
        assert torch.allclose(ours(x), expected, atol=1e-5)


def test_matches_the_step_by_step_helpers():
    torch.manual_seed(2)
    ours = MultiHead(12, 3, causal=True)
    x = torch.randn(1, 5, 12)
    W_q, W_k, W_v = ours.qkv.weight.detach().chunk(3, dim=0)  # each (D_out, D_in)
    per_head = lambda W: W.T.reshape(12, 3, 4).permute(1, 0, 2)  # (D, D) -> (H, D, d)
    steps = A.multi_head(x[0], per_head(W_q), per_head(W_k), per_head(W_v),
                         ours.out.weight.detach().T.reshape(3, 4, 12), b_O=ours.out.bias.detach(), causal=True)
    with torch.no_grad():
        assert torch.allclose(ours(x)[0], steps.update, atol=1e-5)


@pytest.mark.parametrize("dim, heads", [(64, 7), (64, 0), (64, -8), (0, 1)])
def test_bad_arguments_give_one_line_errors(dim, heads):
    with pytest.raises(ValueError) as err:
        MultiHead(dim, heads)
    assert "\n" not in str(err.value)


def test_wrong_input_shape_is_reported():
    layer = MultiHead(16, 4)
    for bad in (torch.rand(2, 5, 15), torch.rand(5, 16)):
        with pytest.raises(ValueError, match=r"expects input \[batch, tokens, 16\]"):
            layer(bad)
