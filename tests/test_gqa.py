"""Shared keys and values (grouped-query attention) in the classroom GPT, against independent oracles.

The layer's output and maps must equal torch's own `scaled_dot_product_attention(..., enable_gqa=True)`
and a written-out `repeat_interleave` version; bad `n_kv_head` settings get one line naming the fix; and
every shipped model (none sets n_kv_head) must read and compute exactly as the plain multi-head code did.
"""

import math

import pytest
import torch
from torch.nn import functional as F

from helpers.core.catalog import load_model, manifest
from helpers.core.model import GPT, GPTConfig, SelfAttention, head_weights
from helpers.core.weights import checked_config, read_model, save_model


def _layer(n_head=12, n_kv_head=3, n_embd=96, seed=0):
    torch.manual_seed(seed)
    attn = SelfAttention(GPTConfig(vocab_size=10, n_head=n_head, n_kv_head=n_kv_head, n_embd=n_embd)).eval()
    for p in attn.parameters():  # non-zero biases too, so a bias sliced from the wrong head shows
        torch.nn.init.normal_(p, std=0.3)
    return attn.double()  # float64: agreement to 1e-6 then says the maths is the same, not the rounding


def _qkv(attn, x, n_head, n_kv_head):
    """q (B, H, T, d) and k, v (B, H_kv, T, d), sliced from the fused projection by hand."""
    B, T, D = x.shape
    d = D // n_head
    out = x @ attn.c_attn.weight.T + attn.c_attn.bias  # (B, T, D + 2·H_kv·d)
    q, k, v = out[..., :D], out[..., D:D + n_kv_head * d], out[..., D + n_kv_head * d:]
    heads = lambda t, h: t.reshape(B, T, h, d).transpose(1, 2)
    return heads(q, n_head), heads(k, n_kv_head), heads(v, n_kv_head)


@pytest.mark.parametrize("n_head,n_kv_head,n_embd", [(12, 1, 96), (12, 2, 96), (12, 3, 96), (12, 4, 96),
                                                     (12, 6, 96), (12, 12, 96), (4, 2, 32), (6, 3, 48)])
def test_layer_equals_torch_sdpa_with_enable_gqa(n_head, n_kv_head, n_embd):
    attn = _layer(n_head, n_kv_head, n_embd)
    x = torch.randn(2, 7, n_embd, dtype=torch.float64)
    with torch.no_grad():
        update, weights, heads = attn(x)
        q, k, v = _qkv(attn, x, n_head, n_kv_head)
        oracle = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # (B, H, T, d)
        merged = oracle.transpose(1, 2).reshape(2, 7, n_embd)
        expected = merged @ attn.c_proj.weight.T + attn.c_proj.bias
    assert torch.allclose(heads, oracle, atol=1e-6)
    assert torch.allclose(update, expected, atol=1e-6)
    assert weights.shape == (2, n_head, 7, 7)


@pytest.mark.parametrize("n_kv_head", [1, 2, 3, 4, 6, 12])
def test_maps_equal_a_written_out_repeat_interleave_version(n_kv_head):
    attn = _layer(12, n_kv_head)
    x = torch.randn(1, 9, 96, dtype=torch.float64)
    with torch.no_grad():
        _, weights, heads = attn(x)
        q, k, v = _qkv(attn, x, 12, n_kv_head)
        g = 12 // n_kv_head
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)  # heads 0..g-1 read kv head 0
        scores = q @ k.transpose(-2, -1) / math.sqrt(8)
        future = torch.ones(9, 9, dtype=torch.bool).triu(1)
        maps = scores.masked_fill(future, float("-inf")).softmax(-1)
    assert torch.allclose(weights, maps, atol=1e-6)
    assert torch.allclose(heads, maps @ v, atol=1e-6)


def test_query_heads_of_one_group_read_the_same_keys_and_values():
    """head_weights gives each query head its group's W_K / W_V: interleaved groups, not repeated blocks."""
    model = GPT(GPTConfig(vocab_size=10, n_layer=1, n_head=12, n_kv_head=3, n_embd=96))
    w = head_weights(model, 0)
    assert w["W_K"].shape == w["W_Q"].shape == (12, 96, 8)
    for h in range(12):
        assert torch.equal(w["W_K"][h], w["W_K"][4 * (h // 4)]) and torch.equal(w["W_V"][h], w["W_V"][4 * (h // 4)])
    assert not torch.equal(w["W_K"][0], w["W_K"][4]) and not torch.equal(w["W_Q"][0], w["W_Q"][1])


def test_parameter_count_shrinks_only_in_the_keys_and_values():
    full = SelfAttention(GPTConfig(vocab_size=10, n_head=12, n_embd=96))
    shared = SelfAttention(GPTConfig(vocab_size=10, n_head=12, n_kv_head=3, n_embd=96))
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(full) - count(shared) == 2 * (96 * 96 + 96) - 2 * (96 * 24 + 24)


@pytest.mark.parametrize("value,words", [(5, "does not divide n_head=12"), (0, "out of range"),
                                         (24, "out of range"), (2.0, "not a whole number"),
                                         (1.5, "not a whole number"), (True, "not a whole number"),
                                         ("4", "not a whole number")])
def test_bad_settings_get_one_line_naming_the_fix(value, words):
    with pytest.raises(ValueError) as err:
        checked_config(vocab_size=10, n_head=12, n_embd=96, n_kv_head=value)
    message = str(err.value)
    assert words in message and "\n" not in message
    assert "n_kv_head" in message and ("divisor" in message or "1..n_head=12" in message)


def test_default_is_multi_head_and_leaves_saved_configs_unchanged():
    cfg = GPTConfig(vocab_size=10, n_head=12, n_embd=96)
    assert cfg.n_kv_head == 12 and cfg.group_size == 1 and "n_kv_head" not in cfg.to_dict()
    shared = GPTConfig(vocab_size=10, n_head=12, n_embd=96, n_kv_head=4)
    assert shared.group_size == 3 and shared.to_dict()["n_kv_head"] == 4
    assert GPTConfig(**shared.to_dict()) == shared


def test_a_grouped_model_saves_and_loads_with_its_setting(tmp_path):
    torch.manual_seed(1)
    model = GPT(GPTConfig(vocab_size=12, n_layer=1, n_head=4, n_kv_head=2, n_embd=16)).eval()
    digest = save_model(model, tmp_path / "m.safetensors", [f"w{i}" for i in range(12)])
    loaded, _, _ = read_model(tmp_path / "m.safetensors", digest)
    assert loaded.config.n_kv_head == 2
    ids = torch.tensor([[1, 2, 3, 4]])
    assert torch.allclose(loaded(ids).logits, model.half().float()(ids).logits, atol=1e-5)


def _old_attention(attn, x):
    """The multi-head code before n_kv_head existed: Q, K, V as three equal thirds of c_attn."""
    B, T, D = x.shape
    H = attn.n_head
    q, k, v = attn.c_attn(x).split(D, dim=-1)
    q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
    weights = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
    return attn.c_proj((weights @ v).transpose(1, 2).reshape(B, T, D)), weights


@pytest.mark.parametrize("name", [n for n, e in sorted(manifest().items()) if "n_kv_head" not in e["config"]])
def test_every_shipped_model_reads_and_computes_as_before(name):
    lm = load_model(name)
    assert lm.config.n_kv_head == lm.config.n_head and "n_kv_head" not in manifest()[name]["config"]
    torch.manual_seed(0)
    x = torch.randn(1, 6, lm.config.n_embd)
    with torch.no_grad():
        for block in lm.model.h:
            update, weights, _ = block.attn(x)
            old_update, old_weights = _old_attention(block.attn, x)
            assert torch.equal(weights, old_weights) and torch.equal(update, old_update)
        w = head_weights(lm.model, 0)
        D = lm.config.n_embd
        W = lm.model.h[0].attn.c_attn.weight.T
        assert torch.equal(w["W_K"], W[:, D:2 * D].reshape(D, lm.config.n_head, -1).permute(1, 0, 2))
