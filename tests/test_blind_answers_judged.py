"""Issue 22's blind audit: wrong and unusual correct answers to every exercise of notebooks 01-06,
written from the notebooks' exercise cells alone, before reading the mistake catalogue (phase 1,
table in the closing note). Each wrong answer must get ✗ with the words of its own diagnosis;
each correct one ✓; a "refused" answer is an honest value in a form the check asks the student to
change (a float head size, a prediction written as text) and must say so.
"""

import contextlib
import io
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import helpers as H
from helpers.exercises import head_checks

T = 4  # the notebook's global T (01: "I like to draw"), which a student's mask may lean on
SM = torch.softmax
A = []  # (exercise, kind, description, answer, words the verdict must contain)


def add(ex, kind, desc, fn, words=""):
    A.append((ex, kind, desc, fn, words))


# ---------------------------------------------------------------- 01 attention_weights(Q, K)
E = "attention_weights"
add(E, "wrong", "no scaling", lambda Q, K: SM(Q @ K.T, -1), "forgot the 1/√d scaling")
add(E, "wrong", "÷ d instead of ÷ √d", lambda Q, K: SM(Q @ K.T / Q.shape[-1], -1), "divided by d instead of √d")
add(E, "wrong", "÷ √T (Q.shape[0])", lambda Q, K: SM(Q @ K.T / Q.shape[0] ** 0.5, -1), "divided by √T")
add(E, "wrong", "softmax over dim 0", lambda Q, K: SM(Q @ K.T / Q.shape[-1] ** 0.5, 0), "softmax over the wrong axis")
add(E, "wrong", "× √d instead of ÷", lambda Q, K: SM(Q @ K.T * Q.shape[-1] ** 0.5, -1), "multiplied by √d")
add(E, "wrong", "no softmax", lambda Q, K: Q @ K.T / Q.shape[-1] ** 0.5, "these are the scaled scores before the softmax")
add(E, "wrong", "÷ 27.7 copied from the notebook", lambda Q, K: SM(Q @ K.T / 27.7, -1), "divided by a fixed √768, the notebook's size, not this input's")
add(E, "wrong", "K @ Q.T (scores transposed)", lambda Q, K: SM(K @ Q.T / K.shape[-1] ** 0.5, -1), "queries and keys swapped")
add(E, "wrong", "log_softmax", lambda Q, K: F.log_softmax(Q @ K.T / Q.shape[-1] ** 0.5, -1), "used log_softmax")
add(E, "wrong", "softmax over the whole matrix", lambda Q, K: SM((Q @ K.T / Q.shape[-1] ** 0.5).flatten(), 0).reshape(Q.shape[0], -1), "softmax over the whole matrix")
add(E, "wrong", "scaled twice", lambda Q, K: SM(Q @ K.T / Q.shape[-1] ** 0.5 / Q.shape[-1] ** 0.5, -1), "divided by d instead of √d")
add(E, "wrong", "d**1/2 precedence (= ÷ d/2)", lambda Q, K: SM(Q @ K.T / (Q.shape[-1] ** 1 / 2), -1), "d ** 1/2 is (d ** 1) / 2")
add(E, "wrong", "scale after the softmax", lambda Q, K: SM(Q @ K.T, -1) / Q.shape[-1] ** 0.5, "scaled after the softmax")
add(E, "wrong", "print instead of return", lambda Q, K: print(SM(Q @ K.T / Q.shape[-1] ** 0.5, -1)), "your function printed something but returned None")
add(E, "wrong", "numpy softmax without axis", lambda Q, K: (lambda s: np.exp(s) / np.exp(s).sum())((Q @ K.T).numpy() / Q.shape[-1] ** 0.5), "softmax over the whole matrix")
add(E, "wrong", "returns (scores, weights)", lambda Q, K: (Q @ K.T, SM(Q @ K.T / Q.shape[-1] ** 0.5, -1)), "returned 2 things (a tuple)")
add(E, "wrong", "Q.T @ K ([d × d])", lambda Q, K: SM(Q.T @ K / Q.shape[-1] ** 0.5, -1), "Q.T @ K gives [d × d]")
add(E, "ok", "einsum", lambda Q, K: torch.einsum("td,sd->ts", Q, K).div(math.sqrt(Q.size(1))).softmax(dim=1))
add(E, "ok", "float64 computation", lambda Q, K: SM(Q.double() @ K.double().T / math.sqrt(Q.shape[1]), -1))
add(E, "ok", "numpy array returned", lambda Q, K: (lambda s: np.exp(s - s.max(1, keepdims=True)) / np.exp(s - s.max(1, keepdims=True)).sum(1, keepdims=True))(Q.numpy() @ K.numpy().T / np.sqrt(Q.shape[-1])))
add(E, "ok", "q and k each scaled by d^-1/4", lambda Q, K: F.softmax((Q * Q.shape[-1] ** -0.25) @ (K * K.shape[-1] ** -0.25).transpose(0, 1), dim=-1))


def _aw_loop(Q, K):
    rows = []
    for q in Q:
        s = torch.tensor([float(q @ k) for k in K]) / len(q) ** 0.5
        e = s.exp()
        rows.append(e / e.sum())
    return torch.stack(rows)


add(E, "ok", "python loop with exp/sum", _aw_loop)
add(E, "ok", "requires grad (Q cloned with grad)", lambda Q, K: SM(Q.clone().requires_grad_() @ K.T / Q.shape[-1] ** 0.5, -1))

# ---------------------------------------------------------------- 01 masked_weights(scores)
E = "masked_weights"


def _later(n):
    return torch.ones(n, n, dtype=torch.bool).triu(1)


add(E, "wrong", "no mask", lambda s: SM(s, -1), "no mask")
add(E, "wrong", "0 instead of −∞", lambda s: SM(s.masked_fill(_later(s.shape[-1]), 0.0), -1), "filled the future with 0 instead of -inf")
add(E, "wrong", "mask after the softmax", lambda s: SM(s, -1).masked_fill(_later(s.shape[-1]), 0.0), "masked after the softmax")
add(E, "wrong", "wrong triangle (tril(-1))", lambda s: SM(s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril(-1), float("-inf")), -1), "masked the wrong triangle")
add(E, "wrong", "diagonal masked too (triu(0))", lambda s: SM(s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(0), float("-inf")), -1), "masked the diagonal too")
add(E, "wrong", "mask sized from the notebook's T", lambda s: SM(s.masked_fill(_later(T), float("-inf")), -1), "the size of the notebook's sentence")
add(E, "wrong", "float mask in masked_fill", lambda s: SM(s.masked_fill(torch.ones(s.shape[-1], s.shape[-1]).triu(1), float("-inf")), -1), "the mask must be boolean")
add(E, "wrong", "softmax over dim 0", lambda s: SM(s.masked_fill(_later(s.shape[-1]), float("-inf")), 0), "softmax over the wrong axis")
add(E, "wrong", "scores.tril() (upper set to 0)", lambda s: SM(s.tril(), -1), "filled the future with 0 instead of -inf")
add(E, "wrong", "torch.where with the mask inverted", lambda s: SM(torch.where(_later(s.shape[-1]), s, torch.tensor(float("-inf"))), -1), "kept the later ones, as a .tril() mask, an inverted (~) mask or torch.where(mask, scores, -inf) does")
add(E, "wrong", "masked scores returned (no softmax)", lambda s: s.masked_fill(_later(s.shape[-1]), float("-inf")), "returned the masked scores")
add(E, "wrong", "offset triu(2): one later word visible", lambda s: SM(s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(2), float("-inf")), -1), "masked only from two words ahead")
add(E, "wrong", "upper × 0 after exp, no renormalising", lambda s: s.exp().tril() / s.exp().sum(-1, keepdim=True), "masked after the softmax")
add(E, "wrong", "log_softmax after the mask", lambda s: F.log_softmax(s.masked_fill(_later(s.shape[-1]), float("-inf")), -1), "used log_softmax")
add(E, "ok", "−1e9 instead of −∞", lambda s: SM(s.masked_fill(_later(s.shape[-1]), -1e9), -1))
add(E, "ok", "tril ones == 0", lambda s: F.softmax(s.masked_fill(torch.tril(torch.ones_like(s)) == 0, float("-inf")), dim=-1))
add(E, "ok", "softmax, zero, renormalise", lambda s: (lambda w: w / w.sum(-1, keepdim=True))(SM(s, -1).tril()))


def _mw_loop(scores):
    out = torch.zeros_like(scores, dtype=torch.float64)
    for i in range(scores.shape[0]):
        row = scores[i, : i + 1].double()
        out[i, : i + 1] = torch.softmax(row, 0)
    return out


add(E, "ok", "row loop in float64", _mw_loop)
add(E, "ok", "numpy with np.triu", lambda s: (lambda m: np.exp(m - m.max(1, keepdims=True)) / np.exp(m - m.max(1, keepdims=True)).sum(1, keepdims=True))(np.where(np.triu(np.ones(s.shape), 1) > 0, -np.inf, s.numpy())))

# ---------------------------------------------------------------- 01 weighted_sum(weights, V)
E = "weighted_sum"


def _ws_overwrite(w, V):
    out = torch.zeros(w.shape[0], V.shape[1])
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            out[i] = w[i, j] * V[j]
    return out


def _ws_offbyone(w, V):
    out = torch.zeros(w.shape[0], V.shape[1])
    for i in range(w.shape[0]):
        for j in range(w.shape[1] - 1):
            out[i] += w[i, j] * V[j]
    return out


add(E, "wrong", "V @ weights", lambda w, V: V @ w, "V @ weights")
add(E, "wrong", "weights.T @ V", lambda w, V: w.T @ V, "used the weights transposed")
add(E, "wrong", "element-wise weights * V", lambda w, V: w * V, "multiplied element-wise")
add(E, "wrong", "(weights @ V).sum(0)", lambda w, V: (w @ V).sum(0), "summed over the words")
add(E, "wrong", "V.T @ weights.T (transposed result)", lambda w, V: V.T @ w.T, "returned the result transposed")
add(E, "wrong", "loop overwrites instead of adds", _ws_overwrite, "a loop that overwrites instead of adds")
add(E, "wrong", "loop range(T-1) off by one", _ws_offbyone, "the loop stops one word early")
add(E, "wrong", "weights @ V.T", lambda w, V: w @ V.T, "V.T: V is [T × d] already")
add(E, "wrong", "sum over the wrong axis", lambda w, V: (w[:, :, None] * V[None]).sum(0), "summed over the queries")
add(E, "wrong", "softmax applied again", lambda w, V: SM(w, -1) @ V, "applied the softmax again")
add(E, "wrong", "einsum 'ij,ik->jk'", lambda w, V: torch.einsum("ij,ik->jk", w, V), "used the weights transposed")
add(E, "ok", "einsum 'ij,jd->id'", lambda w, V: torch.einsum("ij,jd->id", w, V))
add(E, "ok", "broadcast and sum over keys", lambda w, V: (w.unsqueeze(-1) * V.unsqueeze(0)).sum(1))
add(E, "ok", "(V.T @ weights.T).T", lambda w, V: (V.T @ w.T).T)
add(E, "ok", "numpy matmul", lambda w, V: np.asarray(w) @ np.asarray(V))
add(E, "ok", "accumulating loop in float64", lambda w, V: sum(w[:, j:j + 1].double() * V[j].double() for j in range(V.shape[0])))

# ---------------------------------------------------------------- 02 one_head(X, W_Q, W_K, W_V)
E = "one_head"


def _oh(X, WQ, WK, WV, *, d=None, dim=-1, kw=None, vw=None, mask=False, weights=False, nosm=False):
    Q, K, V = X @ WQ, X @ (WK if kw is None else kw), X @ (WV if vw is None else vw)
    s = Q @ K.T / math.sqrt(WQ.shape[1] if d is None else d)
    if mask:
        s = s.masked_fill(_later(s.shape[0]), float("-inf"))
    w = s if nosm else SM(s, dim)
    return w if weights else w @ V


add(E, "wrong", "no scaling", lambda X, Q, K, V: _oh(X, Q, K, V, d=1), "forgot the 1/√d scaling")
add(E, "wrong", "÷ √D (X.shape[1])", lambda X, Q, K, V: _oh(X, Q, K, V, d=X.shape[1]), "divided by √D")
add(E, "wrong", "d = W_Q.shape[0] (= D)", lambda X, Q, K, V: _oh(X, Q, K, V, d=Q.shape[0]), "divided by √D")
add(E, "wrong", "÷ √T", lambda X, Q, K, V: _oh(X, Q, K, V, d=X.shape[0]), "divided by √T")
add(E, "wrong", "keys made with W_Q", lambda X, Q, K, V: _oh(X, Q, K, V, kw=Q), "made the keys with W_Q")
add(E, "wrong", "values made with W_K", lambda X, Q, K, V: _oh(X, Q, K, V, vw=K), "made the values with W_K")
add(E, "wrong", "W_Q @ X (nn.Linear habit)", lambda X, Q, K, V: SM((Q @ X) @ (K @ X).T / math.sqrt(Q.shape[1]), -1) @ (V @ X), "W_Q @ X")
add(E, "wrong", "X @ W_Q.T (nn.Linear habit)", lambda X, Q, K, V: SM((X @ Q.T) @ (X @ K.T).T / math.sqrt(Q.shape[1]), -1) @ (X @ V.T), "X @ W_Q.T")
add(E, "wrong", "softmax over dim 0", lambda X, Q, K, V: _oh(X, Q, K, V, dim=0), "softmax over the wrong axis")
add(E, "wrong", "÷ 8 hard-coded (√64)", lambda X, Q, K, V: _oh(X, Q, K, V, d=64), "divided by a fixed 8")
add(E, "wrong", "returns the weights", lambda X, Q, K, V: _oh(X, Q, K, V, weights=True), "returned the attention weights")
add(E, "wrong", "q/k swapped (K @ Q.T)", lambda X, Q, K, V: SM((X @ K) @ (X @ Q).T / math.sqrt(Q.shape[1]), -1) @ (X @ V), "queries and keys swapped")
add(E, "wrong", "causal mask added (not asked)", lambda X, Q, K, V: _oh(X, Q, K, V, mask=True), "masked the future")
add(E, "wrong", "values = X (no W_V)", lambda X, Q, K, V: SM((X @ Q) @ (X @ K).T / math.sqrt(Q.shape[1]), -1) @ X, "used the embeddings X as the values")
add(E, "wrong", "no softmax", lambda X, Q, K, V: _oh(X, Q, K, V, nosm=True), "no softmax")
add(E, "ok", "einsum", lambda X, Q, K, V: torch.einsum("ts,sd->td", torch.einsum("td,sd->ts", X @ Q, X @ K).div(Q.shape[-1] ** 0.5).softmax(-1), X @ V))
add(E, "ok", "F.scaled_dot_product_attention", lambda X, Q, K, V: F.scaled_dot_product_attention((X @ Q)[None], (X @ K)[None], (X @ V)[None])[0])
add(E, "ok", "F.linear(X, W.T)", lambda X, Q, K, V: F.softmax(F.linear(X, Q.T) @ F.linear(X, K.T).mT / math.sqrt(K.size(-1)), dim=-1) @ F.linear(X, V.T))
add(E, "ok", "float64", lambda X, Q, K, V: _oh(X.double(), Q.double(), K.double(), V.double()))
add(E, "ok", "numpy", lambda X, Q, K, V: (lambda q, k, v: (lambda s: (np.exp(s - s.max(1, keepdims=True)) / np.exp(s - s.max(1, keepdims=True)).sum(1, keepdims=True)) @ v)(q @ k.T / np.sqrt(q.shape[1])))(X.numpy() @ Q.numpy(), X.numpy() @ K.numpy(), X.numpy() @ V.numpy()))

# ---------------------------------------------------------------- 02 split_heads(x, n_heads)
E = "split_heads"


def _sh_list(x, n):
    return list(torch.split(x, x.shape[1] // n, dim=1))


def _sh_loop(x, n):
    d = x.shape[1] // n
    out = torch.empty(n, x.shape[0], d, dtype=x.dtype)
    for h in range(n):
        out[h] = x[:, h * d:(h + 1) * d]
    return out


add(E, "wrong", "plain reshape(n, T, d)", lambda x, n: x.reshape(n, x.shape[0], -1), "heads split in the wrong order")
add(E, "wrong", "view(T, n, d), no swap", lambda x, n: x.view(x.shape[0], n, -1), "forgot to move the head axis first")
add(E, "wrong", "interleaved: reshape(T, d, n).permute(2, 0, 1)", lambda x, n: x.reshape(x.shape[0], -1, n).permute(2, 0, 1), "heads interleaved")
add(E, "wrong", "per head transposed [n, d, T]", lambda x, n: x.reshape(x.shape[0], n, -1).permute(1, 2, 0), "each head's block came out transposed")
add(E, "wrong", "hard-coded d = 64", lambda x, n: x.reshape(x.shape[0], -1, 64).transpose(0, 1), "compute each size from the input's shape")
add(E, "wrong", "chunk over words (dim 0)", lambda x, n: torch.stack(x.chunk(n, dim=0)), "split the words")
add(E, "wrong", "transpose(0, 2) instead of (0, 1)", lambda x, n: x.reshape(x.shape[0], n, -1).transpose(0, 2), "swapped axes 0 and 2, giving")
add(E, "refused", "list of chunks (values right, not stacked)", _sh_list, "the numbers are right, but you returned a list of")
add(E, "wrong", "heads in reverse order", lambda x, n: x.reshape(x.shape[0], n, -1).flip(1).transpose(0, 1), "the heads came out in reverse order")
add(E, "wrong", "d = D / n (float) in reshape", lambda x, n: x.reshape(x.shape[0], n, x.shape[1] / n).transpose(0, 1), "a size is a float")
add(E, "ok", "stack of split(d, dim=1)", lambda x, n: torch.stack(x.split(x.shape[1] // n, dim=1)))
add(E, "ok", "loop into empty tensor", _sh_loop)
add(E, "ok", "unflatten + movedim", lambda x, n: x.unflatten(1, (n, -1)).movedim(1, 0))
add(E, "ok", "x.T.reshape(n, d, T).transpose(1, 2)", lambda x, n: x.T.reshape(n, -1, x.shape[0]).transpose(1, 2))
add(E, "ok", "numpy", lambda x, n: np.asarray(x).reshape(x.shape[0], n, -1).transpose(1, 0, 2))

# ---------------------------------------------------------------- 03 merge_heads(z)
E = "merge_heads"
add(E, "wrong", "plain reshape(T, H*d)", lambda z: z.reshape(z.shape[1], -1), "heads merged in the wrong order")
add(E, "wrong", "transpose then view (non-contiguous)", lambda z: z.transpose(0, 1).view(z.shape[1], -1), ".view() cannot read this tensor as it lies in memory (after a transpose")
add(E, "wrong", "cat along dim 0 ([H·T, d])", lambda z: torch.cat(list(z), dim=0), "stacked the heads as rows")
add(E, "wrong", "interleaved: permute(1, 2, 0)", lambda z: z.permute(1, 2, 0).reshape(z.shape[1], -1), "heads interleaved")
add(E, "wrong", "sum over heads", lambda z: z.sum(0), "added the heads instead of putting them side by side")
add(E, "wrong", "mean over heads", lambda z: z.mean(0), "averaged the heads instead of putting them side by side")
add(E, "wrong", "heads in reverse order", lambda z: torch.cat(list(z.flip(0)), dim=1), "the heads came out in reverse order")
add(E, "wrong", "transpose(1, 2) then reshape", lambda z: z.transpose(1, 2).reshape(z.shape[1], -1), "swapped the wrong axes")
add(E, "wrong", "reshape(-1, T).T", lambda z: z.reshape(-1, z.shape[1]).T, "z.reshape(H·d, T)")
add(E, "ok", "torch.cat(list(z), dim=1)", lambda z: torch.cat(list(z), dim=1))
add(E, "ok", "permute(1, 0, 2).contiguous().view", lambda z: z.permute(1, 0, 2).contiguous().view(z.shape[1], -1))
add(E, "ok", "numpy concatenate", lambda z: np.concatenate([np.asarray(h) for h in z], axis=1))
add(E, "ok", "hstack", lambda z: torch.hstack(tuple(z)))
add(E, "ok", "movedim + flatten", lambda z: z.movedim(0, 1).flatten(1))

# ---------------------------------------------------------------- 03 recombine(z, W_O)
E = "recombine"


def _rc_overwrite(z, W):
    for h in range(z.shape[0]):
        out = z[h] @ W[h]
    return out


def _rc_forgot_one(z, W):
    out = 0
    for h in range(z.shape[0] - 1):
        out = out + z[h] @ W[h]
    return out


add(E, "wrong", "sum over the words axis", lambda z, W: (z @ W).sum(1), "summed over the words")
add(E, "wrong", "mean over heads", lambda z, W: (z @ W).mean(0), "averaged the heads instead of adding them")
add(E, "wrong", "loop overwrites", _rc_overwrite, "a loop that overwrites instead of adds")
add(E, "wrong", "no sum ([H, T, D])", lambda z, W: z @ W, "returned each head's decompressed update separately")
add(E, "wrong", "plain reshape merge then @ stacked W_O", lambda z, W: z.reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), "concatenated the heads in the wrong order")
add(E, "wrong", "W_O transposed per head", lambda z, W: (z @ W.transpose(1, 2)).sum(0), "W_O[h] is [d × D] already")
add(E, "wrong", "interleaved concat @ stacked W_O", lambda z, W: z.permute(1, 2, 0).reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), "merged the heads interleaved")
add(E, "wrong", "only the last head", lambda z, W: z[-1] @ W[-1], "a loop that overwrites instead of adds")
add(E, "wrong", "loop forgets the last head", _rc_forgot_one, "the loop leaves out the last head")
add(E, "wrong", "W_O @ z habit", lambda z, W: (W @ z).sum(0), "W_O @ z")
add(E, "wrong", "every head through head 0's block", lambda z, W: (z @ W[0]).sum(0), "every head went through W_O[0]")
add(E, "ok", "einsum", lambda z, W: torch.einsum("htd,hdD->tD", z, W))
add(E, "ok", "accumulating loop", lambda z, W: sum(z[h] @ W[h] for h in range(z.shape[0])))
add(E, "ok", "concat then stacked matmul", lambda z, W: torch.cat(list(z), 1) @ W.reshape(-1, W.shape[-1]))
add(E, "ok", "bmm then sum", lambda z, W: torch.bmm(z, W).sum(dim=0))
add(E, "ok", "float64 numpy", lambda z, W: np.einsum("htd,hde->te", np.asarray(z, dtype=np.float64), np.asarray(W, dtype=np.float64)))

# ---------------------------------------------------------------- 04 concat_shape(n_tokens, width, n_heads)
E = "concat_shape"
add(E, "wrong", "(T, width // heads): one head", lambda t, w, h: (t, w // h), "that is one head's output")
add(E, "wrong", "(heads, T, d): stacked", lambda t, w, h: (h, t, w // h), "that keeps a heads axis")
add(E, "wrong", "(width, T): swapped", lambda t, w, h: (w, t), "rows and columns swapped")
add(E, "wrong", "(T, width * heads)", lambda t, w, h: (t, w * h), "each head's output is width // heads long, so the heads")
add(E, "wrong", "(T + 1, width): <bos> added", lambda t, w, h: (t + 1, w), "counted one token too many")
add(E, "wrong", "print instead of return", lambda t, w, h: print((t, w)), "your function printed something but returned None")
add(E, "wrong", "(heads, d)", lambda t, w, h: (h, w // h), "(heads, head size) leaves out the tokens")
add(E, "wrong", "T × width (a number)", lambda t, w, h: t * w, "expected a tuple of whole numbers such as")
add(E, "wrong", "(T, T): the map", lambda t, w, h: (t, t), "that is the shape of one head's attention map")
add(E, "wrong", "(T - 1, width): <bos> dropped", lambda t, w, h: (t - 1, w), "counted one token too few")
add(E, "ok", "list", lambda t, w, h: [t, w])
add(E, "ok", "torch.Size from a tensor", lambda t, w, h: torch.zeros(t, w).shape)
add(E, "ok", "(T, heads * (width // heads))", lambda t, w, h: (t, h * (w // h)))
add(E, "ok", "numpy ints", lambda t, w, h: (np.int64(t), np.int64(w)))

# ---------------------------------------------------------------- 04 head_size_and_params(width, n_heads)
E = "head_size_and_params"


def _params_loop(w, h):
    d = w // h
    total = 0
    for _ in range(h):
        total += 3 * (w * d + d) + d * w
    return d, total + w


add(E, "wrong", "no biases (4 w²)", lambda w, h: (w // h, 4 * w * w), "you left out the biases")
add(E, "wrong", "output bias per head", lambda w, h: (w // h, 4 * w * w + 3 * w + h * w), "you added the output bias once per head")
add(E, "wrong", "no W_O", lambda w, h: (w // h, 3 * w * w + 3 * w), "you left out the output projection W_O")
add(E, "wrong", "no output bias", lambda w, h: (w // h, 4 * w * w + 3 * w), "you left out the output bias")
add(E, "wrong", "× n_heads", lambda w, h: (w // h, h * (4 * w * w + 4 * w)), "you multiplied a full-width layer by the heads")
add(E, "wrong", "d² per matrix", lambda w, h: (w // h, h * (4 * (w // h) ** 2 + 3 * (w // h)) + w), "you counted every matrix of a head as [d × d]")
add(E, "wrong", "(params, size) swapped", lambda w, h: (4 * w * w + 4 * w, w // h), "the two numbers are in the wrong order")
add(E, "wrong", "head size width * n_heads", lambda w, h: (w * h, 4 * w * w + 4 * w), "width × heads is not the head size")
add(E, "wrong", "one bias only (4w² + w)", lambda w, h: (w // h, 4 * w * w + w), "you counted only the output bias")
add(E, "wrong", "only the parameter count returned", lambda w, h: 4 * w * w + 4 * w, "expected a tuple of whole numbers such as")
add(E, "ok", "loop over heads", _params_loop)
add(E, "ok", "count nn.Linear parameters", lambda w, h: (w // h, sum(p.numel() for m in (torch.nn.Linear(w, 3 * w), torch.nn.Linear(w, w)) for p in m.parameters())))
add(E, "ok", "list and numpy ints", lambda w, h: [np.int64(w // h), np.int64(4 * w * w + 4 * w)])
add(E, "refused", "float head size 24.0", lambda w, h: (w / h, 4 * w * (w + 1)), "holds a float")

# ---------------------------------------------------------------- 05 previous_word_head(attentions)
E = "previous_word_head"


def _pw(att, score=None, flat=False, swap=False, arg=torch.argmax, divisor=None):
    s = att.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1) if score is None else score(att)
    i = int(arg(s))
    if flat:
        return i
    L, H = s.shape
    l, h = divmod(i, H if divisor is None else L)
    return (h, l) if swap else (l, h)


add(E, "wrong", "offset 0 (the word itself)", lambda a: _pw(a, lambda a: a.diagonal(0, -2, -1).mean(-1)), "that head looks at the word itself")
add(E, "wrong", "offset +1 (later word)", lambda a: _pw(a, lambda a: a.diagonal(1, -2, -1).mean(-1)), "you looked at the word after")
add(E, "wrong", "flat index returned", lambda a: _pw(a, flat=True), "you returned one number")
add(E, "wrong", "divmod by the number of layers", lambda a: _pw(a, divisor=True), "you decoded the flat index with the number of layers")
add(E, "wrong", "(head, layer) swapped", lambda a: _pw(a, swap=True), "you swapped layer and head")
add(E, "wrong", "max instead of mean", lambda a: _pw(a, lambda a: a.diagonal(-1, -2, -1).amax(-1)), "you took each head's largest previous-word weight, not its")
add(E, "wrong", "argmin", lambda a: _pw(a, arg=torch.argmin), "you took the head that looks *least* at the previous word")
add(E, "wrong", "dim1/dim2 swapped (next word)", lambda a: _pw(a, lambda a: a.diagonal(-1, -1, -2).mean(-1)), "you looked at the word after")
add(E, "wrong", "only the last query", lambda a: _pw(a, lambda a: a[..., -1, -2]), "you judged each head by the last word only")
add(E, "wrong", "layer 0 only", lambda a: (0, int(a[0].diagonal(-1, -2, -1).mean(-1).argmax())), "you searched layer 0 only")
add(E, "wrong", "whole lower triangle", lambda a: _pw(a, lambda a: a.tril(-1).sum((-2, -1))), "you added up the weight on every earlier word, not only on")
add(E, "ok", "sum instead of mean", lambda a: _pw(a, lambda a: a.diagonal(-1, -2, -1).sum(-1)))
add(E, "ok", "numpy unravel_index", lambda a: tuple(int(i) for i in np.unravel_index(np.argmax(np.asarray(a).diagonal(-1, -2, -1).mean(-1)), a.shape[:2])))
add(E, "ok", "python loops", lambda a: max(((l, h) for l in range(a.shape[0]) for h in range(a.shape[1])), key=lambda lh: sum(float(a[lh][t, t - 1]) for t in range(1, a.shape[-1]))))
add(E, "ok", "tensor indices returned", lambda a: torch.unravel_index(a.diagonal(-1, -2, -1).mean(-1).argmax(), a.shape[:2]))


# ---------------------------------------------------------------- 05 predict_induction(tokens)
E = "predict_induction"


def _ind(tokens, shift=1, transpose=False, include_self=False, first=True):
    n = len(tokens)
    P = np.zeros((n, n))
    for t, tok in enumerate(tokens):
        earlier = [s for s in range(t + (1 if include_self else 0)) if tokens[s] == tok]
        if earlier and 0 <= earlier[-1] + shift < n:
            P[t, earlier[-1] + shift] = 1
        elif first:
            P[t, 0] = 1
    return P.T if transpose else P


def _ind_prev(tokens):
    n = len(tokens)
    P = np.zeros((n, n))
    for t in range(n):
        P[t, max(t - 1, 0)] = 1
    return P


def _ind_next(tokens):
    n = len(tokens)
    P = np.zeros((n, n))
    for t in range(n):
        P[t, min(t + 1, n - 1)] = 1
    return P


def _ind_all(tokens):  # every earlier copy's successor, spread evenly
    n = len(tokens)
    P = np.zeros((n, n))
    for t, tok in enumerate(tokens):
        hits = [s + 1 for s in range(t) if tokens[s] == tok]
        if hits:
            P[t, hits] = 1 / len(hits)
        else:
            P[t, 0] = 1
    return P


add(E, "wrong", "the earlier copy itself", lambda tk: _ind(tk, shift=0), "you point at the earlier copy itself")
add(E, "wrong", "the word before the earlier copy", lambda tk: _ind(tk, shift=-1), "you point at the word before the earlier copy")
add(E, "wrong", "two after the earlier copy", lambda tk: _ind(tk, shift=2), "you went two words past the earlier copy")
add(E, "wrong", "rows and columns swapped", lambda tk: _ind(tk, transpose=True), "rows and columns swapped")
add(E, "wrong", "previous word (t - 1)", _ind_prev, "that is the previous word")
add(E, "wrong", "the query itself counted as its copy", lambda tk: _ind(tk, include_self=True), "for 5 of 6 repeated words you point at a later word")
add(E, "wrong", "nothing predicted for repeats", lambda tk: np.zeros((len(tk), len(tk))), "you put no 1 in the rows of the repeated words")
add(E, "wrong", "next word (t + 1)", _ind_next, "you point at the next word")
add(E, "wrong", "(T-1, T-1): <bos> dropped", lambda tk: _ind(tk)[1:, 1:], "you dropped <bos>")
add(E, "ok", "first-time words left empty", lambda tk: _ind(tk, first=False))
add(E, "ok", "list of lists", lambda tk: _ind(tk).tolist())
add(E, "ok", "torch tensor", lambda tk: torch.tensor(_ind(tk)))
add(E, "ok", "every earlier copy, spread", _ind_all)

# ---------------------------------------------------------------- 06 knockout prediction
E = "knockout"
for value, desc, words in [
        (0.99, "0.99: barely matters", "you predicted no effect"),
        (0.95, "0.95", "you predicted no effect"),
        (1.0, "1.0: no effect", "you predicted no effect"),
        (0.0, "0.0: everything breaks", "you predicted that the task breaks completely"),
        (0.3, "0.3", "matter more than it does"),
        (84, "84 (a percentage)", "84 looks like a percentage"),
        (-0.1, "-0.1", "-0.1 is not an accuracy"),
        (0.6, "0.6", "matter more than it does"),
]:
    add(E, "wrong", desc, (lambda v: lambda: v)(value), words)
add(E, "refused", "0.84 as a string", lambda: "0.84", "write the prediction as a number between 0 and 1")
add(E, "ok", "0.8", lambda: 0.8)
add(E, "ok", "np.float64(0.85)", lambda: np.float64(0.85))

# ---------------------------------------------------------------- 03 capstone MyMultiHead.forward
E = "multihead"


def _mh_class(**opt):
    class Student(torch.nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.out = torch.nn.Linear(dim, dim)

        def forward(self, x):
            B, Tn, C = x.shape
            h, s = self.heads, self.size
            if opt.get("no_proj"):
                q = k = v = x
            else:
                q, k, v = self.qkv(x).chunk(3, dim=-1)
            if opt.get("order"):
                k, q, v = q, k, v
            if opt.get("kqv"):
                q, k, v = v, q, k
            if opt.get("split") == "view":
                q, k, v = (t.reshape(B, h, Tn, s) for t in (q, k, v))
            elif opt.get("split") == "interleave":
                q, k, v = (t.reshape(B, Tn, s, h).permute(0, 3, 1, 2) for t in (q, k, v))
            else:
                q, k, v = (t.reshape(B, Tn, h, s).transpose(1, 2) for t in (q, k, v))
            scale = opt.get("scale", s ** 0.5)
            att = q @ k.transpose(-2, -1) / scale
            n = T if opt.get("global_T") else Tn
            later = torch.ones(n, n, dtype=torch.bool).triu(opt.get("offset", 1))
            if opt.get("tril"):
                later = torch.ones(n, n, dtype=torch.bool).tril(-1)
            fill = opt.get("fill", float("-inf"))
            if not opt.get("no_mask") and not opt.get("mask_after"):
                att = att.masked_fill(later, fill)
            att = att.softmax(dim=opt.get("dim", -1))
            if opt.get("mask_after"):
                att = att.masked_fill(later, 0.0)
            y = att @ v
            if opt.get("merge") == "plain":
                y = y.reshape(B, Tn, C)
            elif opt.get("merge") == "view":
                y = y.transpose(1, 2).view(B, Tn, C)
            else:
                y = y.transpose(1, 2).reshape(B, Tn, C)
            if opt.get("no_out"):
                return y
            return self.out(y)

    return Student


def _mh_ok(kind):
    class Student(torch.nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.out = torch.nn.Linear(dim, dim)

        def forward(self, x):
            B, Tn, C = x.shape
            h, s = self.heads, self.size
            if kind == "sdpa":
                q, k, v = (t.view(B, Tn, h, s).transpose(1, 2) for t in self.qkv(x).chunk(3, -1))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                return self.out(y.transpose(1, 2).reshape(B, Tn, C))
            if kind == "einsum":
                q, k, v = self.qkv(x).unflatten(-1, (3, h, s)).unbind(2)  # [B, T, h, s]
                att = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(s)
                att = att.masked_fill(torch.tril(torch.ones(Tn, Tn)) == 0, -1e9).softmax(-1)
                return self.out(torch.einsum("bhts,bshd->bthd", att, v).flatten(2))
            if kind == "loop":
                q, k, v = self.qkv(x).split(C, dim=2)
                outs = []
                for i in range(h):
                    sl = slice(i * s, (i + 1) * s)
                    a = q[..., sl] @ k[..., sl].transpose(1, 2) * s ** -0.5
                    a = a + torch.full((Tn, Tn), float("-inf")).triu(1)
                    outs.append(a.softmax(-1) @ v[..., sl])
                return self.out(torch.cat(outs, -1))
            if kind == "float64":
                x64 = x.double()
                qkv = F.linear(x64, self.qkv.weight.double(), self.qkv.bias.double())
                q, k, v = (t.reshape(B, Tn, h, s).permute(0, 2, 1, 3) for t in qkv.chunk(3, -1))
                att = (q @ k.mT / s ** 0.5).masked_fill(torch.ones(Tn, Tn, dtype=torch.bool).triu(1), float("-inf"))
                y = (att.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(B, Tn, C)
                return F.linear(y, self.out.weight.double(), self.out.bias.double())
            if kind == "perbatch":
                rows = []
                for b in range(B):
                    q, k, v = (t.reshape(Tn, h, s).transpose(0, 1) for t in self.qkv(x[b]).chunk(3, -1))
                    att = torch.where(torch.ones(Tn, Tn, dtype=torch.bool).tril(), q @ k.transpose(1, 2) / math.sqrt(s), float("-inf"))
                    rows.append(self.out((att.softmax(-1) @ v).transpose(0, 1).reshape(Tn, C)))
                return torch.stack(rows)
            raise ValueError(kind)

    return Student


for desc, opt, expect in [
    ("mask filled with 0", dict(fill=0.0), "mask filled with 0 instead of -inf"),
    ("wrong triangle (tril(-1))", dict(tril=True), "masked the wrong triangle"),
    ("mask after the softmax", dict(mask_after=True), "mask applied after the softmax"),
    ("merge without transposing back", dict(merge="plain"), "heads merged without transposing back"),
    ("q and k swapped in chunk", dict(order=True), "q, k, v taken in the wrong order"),
    ("q, k, v rotated (v first)", dict(kqv=True), "q, k, v taken in the wrong order"),
    ("interleaved split", dict(split="interleave"), "heads interleaved by the split"),
    ("split by view(B, h, T, s), no swap", dict(split="view"), "heads split without the transpose"),
    ("no scaling", dict(scale=1.0), "forgot the scale"),
    ("÷ √dim (768)", dict(scale=768 ** 0.5), "not by √dim"),
    ("no output projection", dict(no_out=True), "no output projection"),
    ("no mask", dict(no_mask=True), "no mask"),
    ("softmax over dim -2", dict(dim=-2), "softmax over the wrong axis"),
    ("mask sized from the notebook's T", dict(global_T=True), "the mask has a fixed size"),
    ("diagonal masked too", dict(offset=0), "masked the diagonal too"),
    ("no qkv projection (q = k = v = x)", dict(no_proj=True), "q, k and v are x itself"),
    ("merge with .view (non-contiguous)", dict(merge="view"), ".view() cannot read this tensor as it lies in memory (after a transpose"),
]:
    add(E, "wrong", desc, _mh_class(**opt), expect)
for kind in ("sdpa", "einsum", "loop", "float64", "perbatch"):
    add(E, "ok", kind, _mh_ok(kind))

# ---------------------------------------------------------------- a second round, written after reading the catalogue
# (not blind: answers meant to fall outside it; the plausible ones were then catalogued)
add("masked_weights", "wrong", "0/1 float mask added to the scores", lambda s: SM(s + torch.ones_like(s).triu(1), -1), "added a 0/1 mask")
add("masked_weights", "wrong", "~tril(1) mask (= triu(2))", lambda s: SM(s.masked_fill(~torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril(1), float("-inf")), -1), "masked only from two words ahead")
add("attention_weights", "wrong", "d = K.shape[0]", lambda Q, K: SM(Q @ K.T / math.sqrt(K.shape[0]), -1), "divided by √T")
add("weighted_sum", "wrong", "(weights @ V) / T: a 'weighted average'", lambda w, V: (w @ V) / w.shape[0], "divided by T")
add("one_head", "wrong", "values made with W_Q", lambda X, Q, K, V: SM((X @ Q) @ (X @ K).T / math.sqrt(Q.shape[1]), -1) @ (X @ Q), "made the values with W_Q")
add("one_head", "wrong", "returns the raw scores", lambda X, Q, K, V: (X @ Q) @ (X @ K).T, "returned the raw scores")
add("merge_heads", "wrong", "stack(dim=-1).flatten(1)", lambda z: torch.stack(list(z), dim=-1).flatten(1), "heads interleaved")
add("recombine", "wrong", "z.sum(0) @ W_O[0]", lambda z, W: z.sum(0) @ W[0], "every head went through W_O[0]")
add("head_size_and_params", "wrong", "Q, K, V biases of one head only", lambda w, h: (w // h, 4 * w * w + 3 * (w // h) + w), "biases of one head only")
add("multihead", "wrong", "mask filled with -1", _mh_class(fill=-1.0), "mask filled with -1")
add("multihead", "wrong", "softmax over the heads (dim=1)", _mh_class(dim=1), "softmax over the heads")
add("knockout", "wrong", "0.16: the drop", lambda: 0.16, "that is the drop")
add("attention_weights", "ok", "F.softmax(dim=1)", lambda Q, K: F.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), 1))
add("masked_weights", "ok", "masked softmax, then .tril() (changes nothing)", lambda s: SM(s.masked_fill(_later(s.shape[-1]), float("-inf")), -1).tril())
add("previous_word_head", "ok", "median over the queries instead of the mean", lambda a: _pw(a, lambda a: a.diagonal(-1, -2, -1).median(-1).values))
# slips once left to the generic verdict, named since the third blind round (diagnosis.py, two slips at once)
add("attention_weights", "wrong", "÷ √(d + 1)", lambda Q, K: SM(Q @ K.T / math.sqrt(Q.shape[-1] + 1), -1),
    "divided by 4.123, not by √d = 4")
add("recombine", "wrong", "(bmm).mean(0) * 2", lambda z, W: torch.bmm(z, W).mean(0) * 2, "0.6667 (= 2/3) × the right one")
add("multihead", "wrong", "two slips: ÷ √768 and no mask", _mh_class(scale=768 ** 0.5, no_mask=True),
    "two slips at once: no mask")


SENTENCE = ("I like to draw my picture . the cat near these big dogs is tired . "
            "the girl sat on the mat because she was tired . the boy eats the red apple . "
            "list : red mat old fox . again : red mat old fox .")


@pytest.fixture(scope="module")
def runs():
    lm = H.load_model("classroom")
    return lm, H.run_sentence(lm, SENTENCE), H.run_sentence(lm, "list : red mat old fox . again : red mat old fox .")


@pytest.fixture(scope="module")
def measured(runs):
    lm = runs[0]
    return H.forced_accuracy(lm, "induction"), H.forced_accuracy(lm, "induction", [(0, 9)])


@pytest.fixture(autouse=True)
def _measured_once(measured, monkeypatch):
    base, without = measured
    monkeypatch.setattr(head_checks, "forced_accuracy", lambda lm, rel, heads=(), mode="zero": without if heads else base)


def verdict(ex, fn, runs) -> str:
    """The check's last printed line (the first lines echo what the answer printed)."""
    lm, full, repeat = runs
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if ex == "previous_word_head":
            H.check_previous_word_head(fn, full.attentions)
        elif ex == "predict_induction":
            H.check_induction_prediction(fn, repeat)
        elif ex == "knockout":
            H.check_knockout_prediction(fn, lm, "induction", [(0, 9)])
        elif ex == "multihead":
            H.check_multihead(fn)
        else:
            getattr(H, "check_" + ex)(fn)
    return out.getvalue().strip().splitlines()[-1]


UNNAMED = ("numbers differ", "your function raised", "wrong shape", "wrong for ", "not attempted", "puts only")
WRONG = [row for row in A if row[1] == "wrong"]
OTHER = [row for row in A if row[1] != "wrong"]


@pytest.mark.parametrize("ex, kind, desc, fn, words", WRONG, ids=[f"{r[0]}-{r[2]}" for r in WRONG])
def test_a_blind_wrong_answer_gets_its_own_diagnosis(ex, kind, desc, fn, words, runs):
    line = verdict(ex, fn, runs)
    assert line.startswith("✗") and words in line and not any(u in line for u in UNNAMED), line


@pytest.mark.parametrize("ex, kind, desc, fn, words", OTHER, ids=[f"{r[0]}-{r[2]}" for r in OTHER])
def test_a_correct_refused_or_generic_answer_gets_its_verdict(ex, kind, desc, fn, words, runs):
    line = verdict(ex, fn, runs)
    assert line.startswith("✓") if kind == "ok" else (line.startswith("✗") and words in line), line
    if kind == "generic":
        assert line.split(": ", 1)[1].startswith("right shape but the numbers differ"), line


def test_the_table_is_as_large_as_the_audit_asked():
    exercises = {row[0] for row in A}
    assert len(exercises) == 13 and len(WRONG) >= 80 and sum(r[1] == "ok" for r in A) >= 20
    assert all(sum(r[0] == ex and r[1] == "wrong" for r in A) >= 5 for ex in exercises)
    assert sum(r[0] == "multihead" and r[1] == "wrong" for r in A) >= 10
