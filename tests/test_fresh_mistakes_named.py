"""Round 3: 40 wrong answers written blind (from the notebooks' exercise cells only, before the
catalogues or the earlier rounds were read), each asserting the mistake its verdict names.

Blind, before the fixes: 29 named right, 1 misnamed (chunk along the words called "compute each size
from the input's shape"), 10 generic ("numbers differ" or a NaN line), 0 passed. Every answer here
is now named: the table's last column is a fragment of the line that names it.
"""

import contextlib
import io
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import helpers as H

ANSWERS = []


def ans(id_, check, desc, keys):
    def deco(fn):
        ANSWERS.append((id_, check, fn, desc, keys))
        return fn
    return deco


def sm(x, dim=-1):
    return x.softmax(dim)


# ---------- 01 attention_weights
@ans("aw1", "check_attention_weights", "÷√(d+1)", ["√d", "scal"])
def _(Q, K):
    return sm(Q @ K.T / math.sqrt(Q.shape[-1] + 1))


@ans("aw2", "check_attention_weights", "normalised by column sums", ["axis", "dim", "column"])
def _(Q, K):
    e = torch.exp(Q @ K.T / math.sqrt(Q.shape[-1]))
    return e / e.sum(0)


@ans("aw3", "check_attention_weights", "sqrt of the scores", ["sqrt", "√", "scal"])
def _(Q, K):
    return sm(torch.sqrt(Q @ K.T))


@ans("aw4", "check_attention_weights", "softmax on the transposed matrix", ["transpos", "axis", "dim"])
def _(Q, K):
    return sm((Q @ K.T / math.sqrt(Q.shape[-1])).T)


@ans("aw5", "check_attention_weights", "two slips: no scaling and softmax over dim 0", ["scal", "axis", "dim", "√d"])
def _(Q, K):
    return sm(Q @ K.T, 0)


@ans("aw6", "check_attention_weights", "K @ Q.T", ["K @ Q", "transpos", "swap", "Q @ K"])
def _(Q, K):
    return sm(K @ Q.T / math.sqrt(Q.shape[-1]))


# ---------- 01 masked_weights
def fut(T, k=1):
    return torch.ones(T, T, dtype=torch.bool).triu(k)


@ans("mw1", "check_masked_weights", "off by one: triu(2)", ["offset", "diagonal", "next word", "one word"])
def _(s):
    return sm(s.masked_fill(fut(s.shape[-1], 2), float("-inf")))


@ans("mw2", "check_masked_weights", "tril(-1): masks the earlier words", ["triangle", "earlier", "tril"])
def _(s):
    T = s.shape[-1]
    return sm(s.masked_fill(torch.ones(T, T, dtype=torch.bool).tril(-1), float("-inf")))


@ans("mw3", "check_masked_weights", "masked_fill with a float mask", ["bool"])
def _(s):
    T = s.shape[-1]
    return sm(s.masked_fill(torch.ones(T, T).triu(1), float("-inf")))


@ans("mw4", "check_masked_weights", "scores multiplied by a lower-triangular 0/1 matrix", ["0 instead", "−∞", "-inf", "multipl"])
def _(s):
    T = s.shape[-1]
    return sm(s * torch.ones(T, T).tril())


@ans("mw5", "check_masked_weights", "two slips: mask right, softmax over dim 0", ["axis", "dim"])
def _(s):
    return sm(s.masked_fill(fut(s.shape[-1]), float("-inf")), 0)


# ---------- 01 weighted_sum
@ans("ws1", "check_weighted_sum", "V.T @ weights.T (result transposed)", ["transpos", "[d × T]", "shape"])
def _(w, V):
    return V.T @ w.T


@ans("ws2", "check_weighted_sum", "weights.T @ V", ["transpos", "weights.T", "column"])
def _(w, V):
    return w.T @ V


@ans("ws3", "check_weighted_sum", "element-wise product then sum", ["element", "@", "matrix product"])
def _(w, V):
    return (w * V).sum(-1)


# ---------- 02 one_head
@ans("oh1", "check_one_head", "X @ W.T (nn.Linear habit)", [".T", "transpos", "nn.Linear"])
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q.T, X @ W_K.T, X @ W_V.T
    return sm(Q @ K.T / math.sqrt(Q.shape[-1])) @ V


@ans("oh2", "check_one_head", "÷√D instead of √d", ["√d", "√D", "width", "head size"])
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return sm(Q @ K.T / math.sqrt(X.shape[-1])) @ V


@ans("oh4", "check_one_head", "two slips: softmax dim 0 then weights.T @ V (= K Qᵀ)", ["swap", "K @ Q", "Q and K", "queries and keys", "axis", "dim"])
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return sm(Q @ K.T / math.sqrt(Q.shape[-1]), 0).T @ V


# ---------- 02 split_heads
@ans("sh1", "check_split_heads", "reshape(n, T, d) without swapping", ["swap", "transpos", "mix", "reshape"])
def _(x, n):
    return x.reshape(n, x.shape[0], -1)


@ans("sh2", "check_split_heads", "view(T, d, n).permute(2,0,1): interleaved features", ["interleav", "every n"])
def _(x, n):
    return x.reshape(x.shape[0], -1, n).permute(2, 0, 1)


@ans("sh3", "check_split_heads", "chunk along the words (dim 0)", ["dim", "words", "chunk"])
def _(x, n):
    return torch.stack(x.chunk(n, dim=0))


# ---------- 03 merge_heads
@ans("mh1", "check_merge_heads", "permute(2,1,0) merge", ["permute", "order", "axes", "transpos"])
def _(z):
    return z.permute(2, 1, 0).reshape(z.shape[1], -1)


@ans("mh2", "check_merge_heads", "view on a non-contiguous tensor", ["contiguous", "reshape"])
def _(z):
    return z.transpose(0, 1).view(z.shape[1], -1)


@ans("mh3", "check_merge_heads", "cat along dim 0 (stacks words)", ["dim", "side by side", "words", "cat"])
def _(z):
    return torch.cat(list(z), dim=0)


# ---------- 03 recombine
@ans("rc1", "check_recombine", "mean×2 over heads", ["mean", "sum", "add"])
def _(z, W_O):
    return (z @ W_O).mean(0) * 2


@ans("rc2", "check_recombine", "sum over the words axis", ["axis", "dim", "words"])
def _(z, W_O):
    return (z @ W_O).sum(1)


@ans("rc3", "check_recombine", "merge without transpose, then flat W_O", ["transpos", "mix", "words", "reshape"])
def _(z, W_O):
    return z.reshape(z.shape[1], -1) @ W_O.reshape(-1, W_O.shape[-1])


# ---------- 03 capstone
class Base(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.size = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def split(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.heads, self.size).transpose(1, 2)

    def attend(self, q, k, v, scale=None, fill=float("-inf"), mask=None):
        T = q.shape[-2]
        s = q @ k.transpose(-2, -1) / (math.sqrt(self.size) if scale is None else scale)
        m = fut(T) if mask is None else mask
        return s.masked_fill(m, fill).softmax(-1) @ v

    def merge(self, y):
        B, H, T, s = y.shape
        return y.transpose(1, 2).reshape(B, T, H * s)


def capstone(id_, desc, keys):
    def deco(fwd):
        cls = type(f"MH_{id_}", (Base,), {"forward": fwd})
        ANSWERS.append((id_, "check_multihead", cls, desc, keys))
        return cls
    return deco


@capstone("cs1", "÷√dim instead of √size", ["√", "size", "scal"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    return self.out(self.merge(self.attend(q, k, v, scale=math.sqrt(x.shape[-1]))))


@capstone("cs2", "chunk on dim 1", ["chunk", "dim"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=1))
    return self.out(self.merge(self.attend(q, k, v)))


@capstone("cs3", "tril as the mask (wrong triangle incl. diagonal)", ["triangle", "tril", "diagonal"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    T = x.shape[1]
    return self.out(self.merge(self.attend(q, k, v, mask=torch.ones(T, T, dtype=torch.bool).tril())))


@capstone("cs4", "output projection without its bias", ["bias"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    return F.linear(self.merge(self.attend(q, k, v)), self.out.weight)


@capstone("cs5", "merge with permute(0,2,3,1): interleaved", ["interleav", "merge", "swap"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    y = self.attend(q, k, v)
    B, H, T, s = y.shape
    return self.out(y.permute(0, 2, 3, 1).reshape(B, T, H * s))


@capstone("cs6", "mask sized from a fixed 4", ["size", "notebook", "T ", "input"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    return self.out(self.merge(self.attend(q, k, v, mask=fut(4))))


@capstone("cs7", "two slips: no scaling and mask filled with 0", ["scal", "0 instead", "−∞", "√"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    return self.out(self.merge(self.attend(q, k, v, scale=1.0, fill=0.0)))


@capstone("cs8", "x @ self.qkv.weight (no .T, no bias)", ["nn.Linear", ".T", "self.qkv(x)", "transpos"])
def _(self, x):
    q, k, v = map(self.split, (x @ self.qkv.weight).chunk(3, dim=-1))
    return self.out(self.merge(self.attend(q, k, v)))


@capstone("cs9", "output bias added per head", ["bias", "per head", "once"])
def _(self, x):
    q, k, v = map(self.split, self.qkv(x).chunk(3, dim=-1))
    y = self.attend(q, k, v)
    W = self.out.weight
    total = 0
    for h in range(self.heads):
        total = total + y[:, h] @ W[:, h * self.size:(h + 1) * self.size].T + self.out.bias
    return total


# ---------- 04
@ans("cc1", "check_concat_shape", "forgets the heads: (T, width // heads)", ["side by side", "heads", "n_heads"])
def _(n_tokens, width, n_heads):
    return (n_tokens, width // n_heads)


@ans("hp1", "check_head_size_and_params", "output bias counted per head", ["output bias", "once", "per head"])
def _(width, n_heads):
    d = width // n_heads
    return d, n_heads * (3 * (width * d + d) + d * width + width)


# ---------- 07
@ans("kv1", "check_kv_cache", "forgets keys AND values (×1)", ["keys and values", "2 ×", "× 2", "both"])
def _(c, n):
    d = c["hidden_size"] // c["num_attention_heads"]
    return c["num_hidden_layers"] * c["num_key_value_heads"] * d * 2 * n


@ans("ga1", "check_grouped_attention", "h % H_kv: interleaved groups", ["%", "neighbour", "//", "repeat_interleave", "group"])
def _(Q, K, V):
    H, T, d = Q.shape
    idx = torch.arange(H) % K.shape[0]
    s = Q @ K[idx].transpose(-2, -1) / math.sqrt(d)
    return s.masked_fill(fut(T), float("-inf")).softmax(-1) @ V[idx]


@ans("ga2", "check_grouped_attention", "mask applied after the softmax", ["after", "before the softmax"])
def _(Q, K, V):
    H, T, d = Q.shape
    g = H // K.shape[0]
    Kr, Vr = K.repeat_interleave(g, 0), V.repeat_interleave(g, 0)
    w = (Q @ Kr.transpose(-2, -1) / math.sqrt(d)).softmax(-1).masked_fill(fut(T), 0.0)
    return w @ Vr

NAMED = {
    "aw1": 'divided by 4.123, not by √d = 4',
    "aw2": 'softmax over the wrong axis',
    "aw3": 'square root of the scores',
    "aw4": 'softmax of the transposed scores',
    "aw5": 'two slips at once: no 1/√d scaling',
    "aw6": 'queries and keys swapped',
    "mw1": 'triu(2)',
    "mw2": 'masked the wrong triangle',
    "mw3": 'the mask must be boolean',
    "mw4": '0 instead of -inf',
    "mw5": 'softmax over the wrong axis',
    "ws1": 'returned the result transposed',
    "ws2": 'weights transposed',
    "ws3": 'multiplied element-wise',
    "oh1": 'X @ W_Q.T (the nn.Linear habit)',
    "oh2": 'divided by √D',
    "oh4": 'queries and keys swapped',
    "sh1": 'heads split in the wrong order',
    "sh2": 'heads interleaved',
    "sh3": 'split the words (dim 0)',
    "mh1": 'permute(2, 1, 0) reverses all three axes',
    "mh2": '.view() cannot read this tensor as it lies in memory (after a transpose',
    "mh3": 'stacked the heads as rows',
    "rc1": '0.6667 (= 2/3) × the right one',
    "rc2": 'summed over the words',
    "rc3": 'concatenated the heads in the wrong order',
    "cs1": 'not by √dim',
    "cs2": 'chunked along the words',
    "cs3": 'wrong triangle and the diagonal',
    "cs4": 'output projection lost its bias',
    "cs5": 'heads interleaved by the merge',
    "cs6": 'the mask has a fixed size',
    "cs7": 'two slips at once: mask filled with 0',
    "cs8": 'a transpose (.T) missing',
    "cs9": 'output bias was added once per head',
    "cc1": "that is one head's output",
    "hp1": 'output bias once per head',
    "kv1": 'a key AND a value',
    "ga1": 'groups repeated instead of interleaved',
    "ga2": 'mask applied after the softmax',
}
GENERIC = ("largest difference", "contains NaN", "your function raised")


def verdict(check: str, answer) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        getattr(H, check)(answer)
    return out.getvalue().strip().splitlines()[-1]


def test_the_table_has_forty_answers_each_with_its_named_mistake():
    assert len(ANSWERS) == 40
    assert sorted(id_ for id_, *_ in ANSWERS) == sorted(NAMED)


@pytest.mark.parametrize("id_, check, answer, desc, keys", ANSWERS, ids=[a[0] for a in ANSWERS])
def test_a_blind_wrong_answer_is_refused_and_named(id_, check, answer, desc, keys):
    line = verdict(check, answer)
    assert line.startswith("✗"), (desc, line)
    assert NAMED[id_] in line, (desc, line)
    assert not any(g in line for g in GENERIC), (desc, line)
