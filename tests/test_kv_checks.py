"""Notebook 07's exercise checks: the references pass, unusual right answers pass, and every likely
wrong answer is named with its fix (each a wrong variant run on the same inputs)."""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import helpers as H
from helpers.exercises import solutions


def verdict(check, fn, capsys) -> str:
    check(fn)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# --- (a) the KV cache ----------------------------------------------------------------------------------------
def _layers(c):
    return c["num_hidden_layers"]


def _d(c):
    return c["hidden_size"] // c["num_attention_heads"]


def test_kv_cache_reference_and_stub(capsys):
    assert verdict(H.check_kv_cache, solutions.kv_cache_bytes, capsys).startswith("✓ kv_cache_bytes: correct on 3")
    assert "not attempted" in verdict(H.check_kv_cache, lambda config, n_tokens: None, capsys)


@pytest.mark.parametrize("fn", [
    lambda c, n: torch.tensor(4 * n * _layers(c) * c["num_key_value_heads"] * _d(c)),  # a 0-d tensor
    lambda c, n: np.int64(4 * n * _layers(c) * c["num_key_value_heads"] * _d(c)),  # a numpy integer
    lambda c, n: sum(2 * 2 * c["num_key_value_heads"] * _d(c) for _ in range(_layers(c))) * n,  # layer by layer
    lambda c, n: n * 4 * _layers(c) * c["hidden_size"] * c["num_key_value_heads"] // c["num_attention_heads"],
])
def test_kv_cache_accepts_unusual_right_answers(fn, capsys):
    assert verdict(H.check_kv_cache, fn, capsys).startswith("✓")


@pytest.mark.parametrize("fn", [
    lambda c, n: float(2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n),  # a float of bytes
    lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * (c["hidden_size"] / c["num_attention_heads"]) * 2 * n,
    lambda c, n: torch.tensor(4.0 * n * _layers(c) * c["num_key_value_heads"] * _d(c)),  # a 0-d float tensor
])
def test_kv_cache_refuses_a_float_of_the_right_value_as_notebook_04_does(fn):
    got = H.check_kv_cache(fn)
    assert got.code == "kv_cache_bytes.float_size" and "only its type is not" in got.line and "//" in got.line
    assert not got


@pytest.mark.parametrize("fn,words", [
    (lambda c, n: 2 * _layers(c) * c["num_attention_heads"] * _d(c) * 2 * n, "full multi-head attention"),
    (lambda c, n: _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n, "a key AND a value"),
    (lambda c, n: 2 * c["num_key_value_heads"] * _d(c) * 2 * n, "one layer's cache"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * c["hidden_size"] * 2 * n, "hidden_size as the head size"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 4 * n, "32-bit numbers"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * n, "takes 2 bytes"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 16 * n, "counts bits"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2, "cache of one token"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n / 1024, "in KiB"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n / 2 ** 30, "in GiB"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n / 1e9, "in GB"),
    (lambda c, n: 3 * _layers(c) * c["num_key_value_heads"] * _d(c) * 2 * n, "also counts queries"),
    (lambda c, n: 2 * _layers(c) * c["num_key_value_heads"] * 2 * n, "left out the head size"),
])
def test_kv_cache_names_each_likely_mistake(fn, words, capsys):
    line = verdict(H.check_kv_cache, fn, capsys)
    assert line.startswith("✗ kv_cache_bytes: ") and words in line, line


def test_kv_cache_catches_a_number_tuned_to_the_first_model(capsys):
    line = verdict(H.check_kv_cache, lambda c, n: 2 * 32 * 8 * 128 * 2 * 8000, capsys)
    assert "right on the first input" in line and "read every size from config" in line
    assert "expected one number of bytes" in verdict(H.check_kv_cache, lambda c, n: "1 GiB", capsys)


# --- (b) grouped attention ------------------------------------------------------------------------------------
def _mask(T):
    return torch.ones(T, T, dtype=torch.bool).triu(1)


def _weights(Q, K, scale=None, mask=True, dim=-1):
    T, d = Q.shape[-2:]
    s = Q @ K.transpose(-2, -1) * (d ** -0.5 if scale is None else scale)
    return (s.masked_fill(_mask(T), float("-inf")) if mask else s).softmax(dim)


def _ri(t, Q):
    return t.repeat_interleave(Q.shape[0] // t.shape[0], 0)


def test_grouped_reference_and_stub(capsys):
    assert verdict(H.check_grouped_attention, solutions.grouped_attention, capsys).startswith(
        "✓ grouped_attention: correct on 2")
    assert "not attempted" in verdict(H.check_grouped_attention, lambda Q, K, V: None, capsys)


def _by_groups(Q, K, V):
    """Queries reshaped into (H_kv, g, T, d) groups: each group's keys broadcast over its queries."""
    Hkv, (H, T, d) = K.shape[0], Q.shape
    q = Q.reshape(Hkv, H // Hkv, T, d)
    w = (q @ K[:, None].transpose(-2, -1) / math.sqrt(d)).masked_fill(_mask(T), float("-inf")).softmax(-1)
    return (w @ V[:, None]).reshape(H, T, d)


def _loop(Q, K, V):
    g = Q.shape[0] // K.shape[0]
    heads = []
    for h in range(Q.shape[0]):
        k, v = K[h // g], V[h // g]
        heads.append(_weights(Q[h], k) @ v)
    return torch.stack(heads)


@pytest.mark.parametrize("fn", [
    lambda Q, K, V: F.scaled_dot_product_attention(Q[None], K[None], V[None], is_causal=True, enable_gqa=True)[0],
    _by_groups,
    _loop,
    lambda Q, K, V: solutions.grouped_attention(Q.double(), K.double(), V.double()),  # in float64
    lambda Q, K, V: (_weights(Q, K[:, None].expand(-1, Q.shape[0] // K.shape[0], -1, -1).reshape(Q.shape[0], *K.shape[1:]))
                     @ _ri(V, Q)),  # expand + reshape instead of repeat_interleave
    lambda Q, K, V: _weights(Q, _ri(K, Q)).tolist() and (_weights(Q, _ri(K, Q)) @ _ri(V, Q)).tolist(),  # nested lists
])
def test_grouped_accepts_unusual_right_answers(fn, capsys):
    assert verdict(H.check_grouped_attention, fn, capsys).startswith("✓")


@pytest.mark.parametrize("fn,words", [
    (lambda Q, K, V: _weights(Q, K.repeat(Q.shape[0] // K.shape[0], 1, 1)) @ V.repeat(Q.shape[0] // K.shape[0], 1, 1),
     "repeated instead of interleaved"),
    (lambda Q, K, V: _weights(Q[::Q.shape[0] // K.shape[0]].repeat_interleave(Q.shape[0] // K.shape[0], 0), _ri(K, Q))
     @ _ri(V, Q), "queries were shared instead of the keys"),
    (lambda Q, K, V: _weights(Q.reshape(K.shape[0], -1, *Q.shape[1:]).mean(1), K) @ V, "queries of each group were averaged"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q), mask=False) @ _ri(V, Q), "no causal mask"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q), scale=1.0) @ _ri(V, Q), "forgot the 1/√d scaling"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q), scale=1 / Q.shape[-1]) @ _ri(V, Q), "divided by d instead of √d"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q), scale=(Q.shape[0] * Q.shape[-1]) ** -0.5) @ _ri(V, Q), "whole width"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q), dim=-2) @ _ri(V, Q), "wrong axis"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q)) @ _ri(K, Q), "applied to the keys"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q)), "that is the attention weights"),
    (lambda Q, K, V: _weights(Q, _ri(K, Q)) @ V.repeat(Q.shape[0] // K.shape[0], 1, 1), "values repeated"),
    (lambda Q, K, V: _weights(Q, K) @ V, "fewer heads than the queries"),  # raises: named by the same error
    (lambda Q, K, V: _weights(Q, K[torch.arange(Q.shape[0]) // K.shape[0]]) @ V[torch.arange(Q.shape[0]) // K.shape[0]],
     "h // n_kv_heads"),  # raises IndexError on 12 / 3
])
def test_grouped_names_each_likely_mistake(fn, words, capsys):
    line = verdict(H.check_grouped_attention, fn, capsys)
    assert line.startswith("✗ grouped_attention: ") and words in line, line


def test_grouped_mask_that_hides_the_diagonal_is_named(capsys):
    def diagonal_hidden(Q, K, V):
        T, d = Q.shape[-2:]
        s = (Q @ _ri(K, Q).transpose(-2, -1) / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(0), float("-inf"))
        return s.softmax(-1) @ _ri(V, Q)
    assert "also hid the diagonal" in verdict(H.check_grouped_attention, diagonal_hidden, capsys)


def test_grouped_catches_a_group_size_fixed_to_the_first_input(capsys):
    line = verdict(H.check_grouped_attention,
                   lambda Q, K, V: _weights(Q, K.repeat_interleave(4, 0)) @ V.repeat_interleave(4, 0), capsys)
    assert line.startswith("✗") and "take each size from this input's shape" in line


def test_groups_tiled_and_no_mask_are_named_as_the_two_slips():
    """torch.tile (as .repeat) with no mask was a generic wrong answer (sweep 30)."""
    def tiled(Q, K, V):
        group = Q.shape[0] // K.shape[0]
        K, V = torch.tile(K, (group, 1, 1)), torch.tile(V, (group, 1, 1))
        return (Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5).softmax(-1) @ V
    assert H.check_grouped_attention(tiled).code == "grouped_attention.two_slips.repeat_not_interleave+no_mask"


def test_an_answer_one_token_off_is_not_called_1_times_the_right_one():
    """n_tokens + 1 read "your answer is 1 × the right one", as if right (sweep 31, WEAK-3)."""
    def one_more(config, n_tokens):
        size = config["hidden_size"] // config["num_attention_heads"]
        return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * size * 2 * (n_tokens + 1)
    line = H.check_kv_cache(one_more).line
    assert "1 × the right one" not in line and "(the bytes of 1 token too many: count n_tokens exactly)" in line, line
