"""One reference solution per notebook exercise, in one place.

    H.solution("attention_weights")   # prints the solution of notebook 01's exercise 1

Each solution has the name of the function (or class) the exercise asks for, and uses only
what its notebook's setup cell imports (torch and nn in 01-03; plain Python and the tensor it
is given in 04-06), so it can be pasted into the exercise cell as it is. The tests paste every solution into its notebook, run it, and require every
check to say ✓.
"""

from __future__ import annotations

import inspect

import torch
from torch import nn


# --- notebook 01 -----------------------------------------------------------------------------------
def attention_weights(Q, K):
    """Q, K: [T × d] -> weights [T × T], rows are queries and each row sums to 1."""
    d = Q.shape[-1]
    scores = Q @ K.T / d ** 0.5  # [T × T], scaled by √d
    return scores.softmax(dim=-1)  # over the keys


def masked_weights(scores):
    """scores [T × T] (scaled) -> weights [T × T]: no word looks at a later word."""
    T = scores.shape[-1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # True above the diagonal
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


def weighted_sum(weights, V):
    """weights [T × T] (rows are queries), V [T × d] -> updates [T × d]."""
    return weights @ V


# --- notebook 02 -----------------------------------------------------------------------------------
def one_head(X, W_Q, W_K, W_V):
    """X [T × D], W_Q/W_K/W_V [D × d] -> updates [T × d]."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # [T × d] each
    d = Q.shape[-1]
    weights = (Q @ K.T / d ** 0.5).softmax(dim=-1)  # [T × T]
    return weights @ V


def split_heads(x, n_heads):
    """x [T × D] -> [n_heads × T × D // n_heads]."""
    T, D = x.shape
    return x.reshape(T, n_heads, D // n_heads).transpose(0, 1)


# --- notebook 03 -----------------------------------------------------------------------------------
def merge_heads(z):
    """z [n_heads × T × d] -> [T × n_heads * d]."""
    n_heads, T, d = z.shape
    return z.transpose(0, 1).reshape(T, n_heads * d)


def recombine(z, W_O):
    """z [n_heads × T × d], W_O [n_heads × d × D] -> [T × D]."""
    return (z @ W_O).sum(dim=0)  # each head through its own block, then added


class MyMultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.size = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)  # W_Q | W_K | W_V of every head, with their biases
        self.out = nn.Linear(dim, dim)  # the recombination W_O and b_O

    def forward(self, x):
        """x [B, T, dim] -> [B, T, dim]: causal multi-head self-attention."""
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # 3 × [B, T, D]
        split = lambda t: t.view(B, T, self.heads, self.size).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)  # [B, heads, T, size]
        scores = q @ k.transpose(-2, -1) / self.size ** 0.5  # [B, heads, T, T]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, D)  # heads side by side
        return self.out(y)


# --- notebook 04 -----------------------------------------------------------------------------------
def head_size_and_params(width, n_heads):
    """Return (head size, parameters of one attention layer)."""
    d = width // n_heads
    per_head = 3 * (width * d + d) + d * width  # Q, K, V with biases, and the head's rows of W_O
    return d, n_heads * per_head + width  # + the output bias


def concat_shape(n_tokens, width, n_heads):
    """Return (rows, columns) of the concatenated head outputs."""
    return (n_tokens, n_heads * (width // n_heads))


# --- notebooks 05 and 06 ---------------------------------------------------------------------------
def previous_word_head(attentions):
    """attentions (layers, heads, T, T) -> (layer, head) of the head that looks most at the previous word."""
    below = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)  # (layers, heads)
    best = int(below.argmax())
    return best // below.shape[1], best % below.shape[1]


def predict_induction(tokens):
    """tokens (T words) -> (T, T) array: 1 where an induction head looks from each query."""
    T = len(tokens)
    pattern = [[0.0] * T for _ in range(T)]  # plain lists: notebook 05 does not import torch
    for q in range(T):
        earlier = [k for k in range(q) if tokens[k] == tokens[q]]
        pattern[q][earlier[-1] + 1 if earlier else 0] = 1.0
    return pattern


def my_prediction():
    """Induction accuracy (0..1) after removing the previous-word head L0 H9: the measured answer."""
    return 0.8


# --- notebook 07 -----------------------------------------------------------------------------------
def kv_cache_bytes(config, n_tokens):
    """Bytes of keys and values kept for n_tokens tokens (16-bit numbers: 2 bytes each)."""
    layers = config["num_hidden_layers"]
    kv_heads = config["num_key_value_heads"]
    head_size = config["hidden_size"] // config["num_attention_heads"]
    return 2 * layers * kv_heads * head_size * 2 * n_tokens  # a key and a value, per layer and kv head


def grouped_attention(Q, K, V):
    """Q [H × T × d], K and V [H_kv × T × d] -> [H × T × d]: neighbouring query heads share a key/value head."""
    H, T, d = Q.shape
    group = H // K.shape[0]  # query heads per key/value head
    K, V = K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0)  # [H × T × d]
    scores = Q @ K.transpose(-2, -1) / d ** 0.5  # [H × T × T]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ V


# --- notebook 08 -----------------------------------------------------------------------------------
def formation_step(steps, scores, tokens_per_step):
    """The first step whose score reaches 0.5 (tokens_per_step is not needed: the answer is a step)."""
    for step, score in zip(steps, scores):
        if score >= 0.5:
            return step
    return None


def my_knockout_prediction():
    """Lists said again without L0 H0 at step 552 and at step 1953: the measured answer, rounded."""
    return 0.04, 0.01


SOLUTIONS = {name: obj for name, obj in list(globals().items())
             if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
             and obj.__module__ == __name__}


def solution(name: str) -> None:
    """Print the reference solution of the exercise that asks for `name`."""
    print(source(name))


def source(name: str) -> str:
    """The solution's code as text (the tests paste it into the notebook)."""
    if name not in SOLUTIONS:
        raise ValueError(f"No exercise asks for {name!r}; choose one of {', '.join(sorted(SOLUTIONS))}.")
    return inspect.getsource(SOLUTIONS[name])
