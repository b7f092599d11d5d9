"""Issue 30's blind set (round 4): student answers to the 15 exercises of notebooks 01-07.

Written from the notebooks alone (their exercise cells, the prose around them and the check calls),
before reading any mistake catalogue or check code. No test functions here: `tools/measure_blind.py`
runs every entry through the real checks and prints the verdicts beside the descriptions.

Each entry (see `add` / `ans`):
    id        short unique name, e.g. "aw03"
    ex        the exercise, named after its check: "attention_weights" … "grouped_attention",
              "multihead" (03's MyMultiHead), "knockout" (06's my_prediction)
    kind      "wrong", "ok" (an unusual but correct answer), or "outside": a slip only in a part of the
              answer that the notebook says its check leaves out (05's induction exercise: "The check
              judges only the repeated words"); reported apart, counted neither wrong nor correct
    desc      what the student did, in plain words (for "wrong": the mistake they made)
    fn        the student's function (a class for "multihead")
    judged    the auditor's reading of the check's verdict as measured when the entry was judged:
              wrong: "named" | "misnamed" | "generic" | "false pass";  ok: "accepted" | "refused";
              outside: "passed" | "flagged"
    seen      sha1[:8] of the verdict line that was judged, so a later run can tell which verdicts
              changed since and need judging again
    other     {sha1[:8]: judgement} for other verdict lines of the same answer that were judged too
              (the committed checks, `git archive HEAD`, before issue 30's work: see tools/measure_blind.py)

Notebook globals. A function typed into a notebook cell reads the notebook's variables as its globals,
so a student who forgets to use an argument silently picks up the notebook's `V`, `T`, `walk` …
Every answer here is defined at module level but runs with the globals of *its own* notebook
(NB01 … NB07 below, built from the notebooks' own cells, with the same sizes: in 01 `T = 4`,
`d = 768`; in 02 `walk.n_heads = 12`, `K`, `V` [4 × 64]; in 03 `W_O` [768 × 768]; in 04 `T = 15`,
`h = 12`, `cfg.d_head = 8`; in 05 `T = 5`, `full`, `run`, `repeat`; in 07 `H` is the helpers module)
and only the imports that notebook has (05 and 06 have no torch; no notebook imports math).
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import types

import numpy as np
import torch
from torch import nn

import helpers as H

MODEL = "classroom"
INF = float("inf")


# ------------------------------------------------------------------ the notebooks' globals
def _ns(**names):
    return {"__builtins__": builtins, "__name__": "__main__", "H": H, **names}


def _nb01():
    walk = H.walkthrough_layer(MODEL, n_heads=1, sentence="I like to draw")
    T, D = walk.residual.shape
    head = walk.head(0)
    draw = len(walk.tokens) - 1
    d = head.Q.shape[-1]
    row = head.weights[draw]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    masked = head.scaled.masked_fill(future, float("-inf"))
    layer = walk.steps()
    return _ns(torch=torch, MODEL=MODEL, walk=walk, T=T, D=D, head=head, draw=draw, d=d, width=768,
               row=row, best=int(row.argmax()), i=walk.tokens.index("I"), future=future, masked=masked,
               layer=layer, z_draw=row @ head.V,
               values={"I": [1.0, 0.0, 2.0], "like": [0.0, 1.0, 0.0], "to": [1.0, 1.0, 1.0], "draw": [0.0, 2.0, -1.0]},
               article={"I": 0.62, "like": 0.12, "to": 0.19, "draw": 0.08})


def _nb02():
    one = H.walkthrough_layer(MODEL, n_heads=1, sentence="I like to draw")
    walk = H.walkthrough_layer(MODEL, n_heads=12, sentence="I like to draw")
    T, D = walk.residual.shape
    draw, i = len(walk.tokens) - 1, walk.tokens.index("I")
    layer = walk.steps()
    h = walk.pick_head(draw, i)
    x_draw = walk.X[draw:draw + 1]
    q_draw = x_draw @ walk.W_Q[h] + walk.b_Q[h]
    K = walk.X @ walk.W_K[h] + walk.b_K[h]  # [4 × 64]
    scores = q_draw @ K.T  # [1 × 4]
    weights = (scores / walk.d_head ** 0.5).softmax(dim=-1)  # [1 × 4]
    V = walk.X @ walk.W_V[h] + walk.b_V[h]  # [4 × 64]
    W_Q_all = walk.W_Q.permute(1, 0, 2).reshape(D, D)
    Q_all = walk.X @ W_Q_all
    return _ns(torch=torch, MODEL=MODEL, one=one, row=one.head(0).weights[-1], walk=walk, T=T, D=D, draw=draw,
               i=i, layer=layer, h=h, x_draw=x_draw, q_draw=q_draw, K=K, scores=scores, weights=weights, V=V,
               z_draw=weights @ V, W_Q_all=W_Q_all, Q_all=Q_all, x=walk.X[draw])


def _nb03():
    walk = H.walkthrough_layer(MODEL, n_heads=12, sentence="I like to draw")
    layer = walk.steps()
    draw, i = len(walk.tokens) - 1, walk.tokens.index("I")
    h = walk.pick_head(draw, i)
    W_O = H.recombination_matrix(walk.W_O)  # [768 × 768]
    return _ns(torch=torch, nn=nn, MODEL=MODEL, walk=walk, layer=layer, draw=draw, i=i, h=h,
               z_draw=layer.z[h, draw], W_O=W_O, block=walk.W_O[h], heads=12)


def _nb04():
    lm = H.pick_model(MODEL)
    sentence = H.SENTENCE
    T = len(H.load_variant(4).tokenizer.tokens(sentence))  # 15
    return _ns(torch=torch, MODEL=MODEL, lm=lm, cfg=lm.config, h=12, sentence=sentence, T=T)


def _nb05():
    lm = H.pick_model(MODEL)
    run = H.run_sentence(lm, "I like to draw")
    SENTENCE = ("I like to draw my picture . the cat near these big dogs is tired . "
                "the girl sat on the mat because she was tired . the boy eats the red apple . "
                "list : red mat old fox . again : red mat old fox .")
    full = H.run_sentence(lm, SENTENCE)
    LIST = "list : red mat old fox . again : red mat old fox ."
    repeat = H.run_sentence(lm, LIST)
    return _ns(np=np, MODEL=MODEL, lm=lm, cfg=lm.config, run=run, T=len(run.tokens), layer=3, head=5,
               SENTENCE=SENTENCE, full=full, classroom=lm, LIST=LIST, repeat=repeat)


NB01, NB02, NB03, NB04, NB05 = _nb01(), _nb02(), _nb03(), _nb04(), _nb05()
NB06 = _ns(np=np, MODEL=MODEL)
NB07 = _ns(torch=torch, MODEL=MODEL)

NOTEBOOK = {"attention_weights": NB01, "masked_weights": NB01, "weighted_sum": NB01,
            "one_head": NB02, "split_heads": NB02,
            "merge_heads": NB03, "recombine": NB03, "multihead": NB03,
            "concat_shape": NB04, "head_size_and_params": NB04,
            "previous_word_head": NB05, "predict_induction": NB05,
            "knockout": NB06, "kv_cache": NB07, "grouped_attention": NB07}
NAME = {"attention_weights": "attention_weights", "masked_weights": "masked_weights",
        "weighted_sum": "weighted_sum", "one_head": "one_head", "split_heads": "split_heads",
        "merge_heads": "merge_heads", "recombine": "recombine", "multihead": "MyMultiHead",
        "concat_shape": "concat_shape", "head_size_and_params": "head_size_and_params",
        "previous_word_head": "previous_word_head", "predict_induction": "predict_induction",
        "knockout": "my_prediction", "kv_cache": "kv_cache_bytes", "grouped_attention": "grouped_attention"}
EXERCISES = list(NOTEBOOK)


def _rebind(f, ns, name):
    g = types.FunctionType(f.__code__, ns, name, f.__defaults__, f.__closure__)
    g.__kwdefaults__, g.__doc__, g.__qualname__ = f.__kwdefaults__, f.__doc__, name
    return g


def in_notebook(obj, ex):
    """The answer as its notebook would hold it: the notebook's globals, the exercise's name."""
    ns, name = NOTEBOOK[ex], NAME[ex]
    if isinstance(obj, type):
        for key, value in list(vars(obj).items()):
            if inspect.isfunction(value):
                setattr(obj, key, _rebind(value, ns, f"{name}.{key}"))
        obj.__name__ = obj.__qualname__ = name
        obj.__module__ = "__main__"
        return obj
    return _rebind(obj, ns, name)


A = []  # dicts: id, ex, kind, desc, fn, judged, seen, other


def add(id, ex, kind, desc, fn, judged="?", seen="", other=None):
    assert ex in NOTEBOOK and kind in ("wrong", "ok", "outside") and all(a["id"] != id for a in A), id
    A.append(dict(id=id, ex=ex, kind=kind, desc=desc, fn=in_notebook(fn, ex), judged=judged, seen=seen,
                  other=dict(other or {})))


def ans(id, ex, kind, desc, judged="?", seen="", other=None):
    """Decorator form of `add` for answers longer than a lambda."""
    def wrap(fn):
        add(id, ex, kind, desc, fn, judged, seen, other)
        return fn
    return wrap


def line_hash(line: str) -> str:
    return hashlib.sha1(line.encode()).hexdigest()[:8]


# ================================================================== 01 · attention_weights(Q, K)
E = "attention_weights"
add("aw01", E, "wrong", "forgot to divide by √d", lambda Q, K: (Q @ K.T).softmax(dim=-1), judged="named", seen="0553f71f")
add("aw02", E, "wrong", "divided by d instead of √d",
    lambda Q, K: (Q @ K.T / Q.shape[-1]).softmax(dim=-1), judged="named", seen="f711b62e")
add("aw03", E, "wrong", "took d as Q.shape[0] (the number of words) instead of the query length",
    lambda Q, K: (Q @ K.T / Q.shape[0] ** 0.5).softmax(dim=-1), judged="named", seen="d9178370")
add("aw04", E, "wrong", "softmax over dim 0 (the queries) instead of the keys",
    lambda Q, K: (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=0), judged="named", seen="e9273235")
add("aw05", E, "wrong", "wrote K @ Q.T: rows are keys, not queries",
    lambda Q, K: (K @ Q.T / Q.shape[-1] ** 0.5).softmax(dim=-1), judged="named", seen="526a73ca")
add("aw06", E, "wrong", "forgot the transpose: Q @ K",
    lambda Q, K: (Q @ K / Q.shape[-1] ** 0.5).softmax(dim=-1), judged="named", seen="468b53a4")


@ans("aw07", E, "wrong", "used the notebook's d (768, from section 3) instead of the length of these queries", judged="named", seen="43ea82ee")
def _(Q, K):
    scores = Q @ K.T / d ** 0.5  # noqa: F821 (the notebook's d)
    return scores.softmax(dim=-1)


add("aw08", E, "wrong", "multiplied by √d instead of dividing",
    lambda Q, K: (Q @ K.T * Q.shape[-1] ** 0.5).softmax(dim=-1), judged="named", seen="9e418c1e")
add("aw09", E, "wrong", "forgot the softmax: returns the scaled scores",
    lambda Q, K: Q @ K.T / Q.shape[-1] ** 0.5, judged="named", seen="22f933a7")
add("aw10", E, "wrong", "softmax first, divided by √d afterwards",
    lambda Q, K: (Q @ K.T).softmax(dim=-1) / Q.shape[-1] ** 0.5, judged="named", seen="6e46f334")


@ans("aw11", E, "wrong", "hand-written softmax that divides by the sum of the whole table, not of each row", judged="named", seen="420f0977")
def _(Q, K):
    scores = Q @ K.T / Q.shape[-1] ** 0.5
    e = torch.exp(scores)
    return e / e.sum()


add("aw12", E, "wrong", "two slips: no ÷ √d and softmax over dim 0", lambda Q, K: (Q @ K.T).softmax(dim=0), judged="named", seen="e67ff2c9")


@ans("aw13", E, "wrong", "used the notebook's keys head.K instead of the argument K", judged="misnamed", seen="6b9a8c38")
def _(Q, K):
    d = Q.shape[-1]
    return (Q @ head.K.T / d ** 0.5).softmax(dim=-1)  # noqa: F821


add("aw14", E, "wrong", "sigmoid instead of softmax", lambda Q, K: torch.sigmoid(Q @ K.T / Q.shape[-1] ** 0.5), judged="named", seen="c0023950")


@ans("aw15", E, "wrong", "added the causal mask although the exercise says no mask yet", judged="named", seen="a9fb7c71")
def _(Q, K):
    T, d = Q.shape
    scores = Q @ K.T / d ** 0.5
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(dim=-1)


add("aw16", E, "wrong", "two slips: K @ Q.T and ÷ d instead of √d",
    lambda Q, K: (K @ Q.T / Q.shape[-1]).softmax(dim=-1), judged="generic", seen="fff79c22")
add("aw17", E, "wrong", "log_softmax instead of softmax",
    lambda Q, K: (Q @ K.T / Q.shape[-1] ** 0.5).log_softmax(dim=-1), judged="named", seen="fe40969c")
add("aw18", E, "wrong", "multiplied Q and K number by number and summed: one score per word, not a table",
    lambda Q, K: ((Q * K).sum(-1) / Q.shape[-1] ** 0.5).softmax(dim=-1), judged="generic", seen="bd6e308f")
add("aw19", E, "wrong", "typed √768 ≈ 27.7 as a constant from the prose",
    lambda Q, K: (Q @ K.T / 27.7).softmax(dim=-1), judged="named", seen="43ea82ee")


@ans("aw20", E, "wrong", "torch.sqrt of a plain int (the length), which raises", judged="generic", seen="3e26c2d3")
def _(Q, K):
    d = Q.shape[-1]
    return (Q @ K.T / torch.sqrt(d)).softmax(dim=-1)


@ans("aw21", E, "wrong", "used the notebook's T (4) as the length to scale by", judged="named", seen="a7068c7b")
def _(Q, K):
    return (Q @ K.T / T ** 0.5).softmax(dim=-1)  # noqa: F821


add("aw-ok1", E, "ok", "einsum for the scores",
    lambda Q, K: (torch.einsum("id,jd->ij", Q, K) / Q.shape[-1] ** 0.5).softmax(dim=-1), judged="accepted", seen="a59f8c9b")


@ans("aw-ok2", E, "ok", "numpy inside (stable softmax), back to a tensor at the end", judged="accepted", seen="a59f8c9b")
def _(Q, K):
    import numpy as np
    q, k = Q.numpy(), K.numpy()
    s = q @ k.T / np.sqrt(q.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return torch.tensor(e / e.sum(axis=1, keepdims=True))


@ans("aw-ok3", E, "ok", "plain Python loops with math.exp", judged="accepted", seen="a59f8c9b")
def _(Q, K):
    import math
    d = len(Q[0])
    out = []
    for q in Q.tolist():
        s = [sum(a * b for a, b in zip(q, k)) / math.sqrt(d) for k in K.tolist()]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        out.append([x / sum(e) for x in e])
    return torch.tensor(out)


@ans("aw-ok4", E, "ok", "computed in float64 (returns a float64 tensor)", judged="accepted", seen="a59f8c9b")
def _(Q, K):
    import math
    Q, K = Q.double(), K.double()
    return (Q @ K.T / math.sqrt(Q.shape[-1])).softmax(dim=-1)


add("aw-ok5", E, "ok", "K @ Q.T with softmax over dim 0, transposed back: the two transposes cancel",
    lambda Q, K: (K @ Q.T / Q.shape[-1] ** 0.5).softmax(dim=0).T, judged="accepted", seen="a59f8c9b")
add("aw-ok6", E, "ok", "scaled_dot_product_attention with the identity as values gives the weights",
    lambda Q, K: torch.nn.functional.scaled_dot_product_attention(Q, K, torch.eye(K.shape[0])), judged="accepted", seen="a59f8c9b")
add("aw-ok7", E, "ok", "torch.softmax, K.transpose(0, 1) and × d ** -0.5",
    lambda Q, K: torch.softmax(Q @ K.transpose(0, 1) * Q.shape[1] ** -0.5, dim=1), judged="accepted", seen="a59f8c9b")
add("aw-ok8", E, "ok", "F.softmax without dim (PyTorch picks dim 1 for a 2-D table, with a warning)",
    lambda Q, K: torch.nn.functional.softmax(Q @ K.T / Q.shape[-1] ** 0.5), judged="accepted", seen="a59f8c9b")


# ================================================================== 01 · masked_weights(scores)
E = "masked_weights"


def _future(n):
    return torch.ones(n, n, dtype=torch.bool).triu(1)


add("mw01", E, "wrong", "forgot the mask: softmax only", lambda scores: scores.softmax(dim=-1), judged="named", seen="5bd5d911")


@ans("mw02", E, "wrong", "masked with 0 instead of -inf", judged="named", seen="10cc2e24")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), 0).softmax(dim=-1)


@ans("mw03", E, "wrong", "masked with -10 instead of -inf (thought -10 is small enough)", judged="generic", seen="af63e530")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -10).softmax(dim=-1)


@ans("mw04", E, "wrong", "softmax first, then set the later words to 0", judged="named", seen="94ef6d97")
def _(scores):
    T = scores.shape[-1]
    return scores.softmax(dim=-1).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), 0)


@ans("mw05", E, "wrong", "softmax first, then wrote -inf on the later words", judged="generic", seen="24ff821d", other={"b1d17bdb": "generic"})
def _(scores):
    T = scores.shape[-1]
    return scores.softmax(dim=-1).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))


@ans("mw06", E, "wrong", "wrong triangle: tril(-1) hides the earlier words", judged="named", seen="888ed437")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).tril(-1), float("-inf")).softmax(dim=-1)


@ans("mw07", E, "wrong", "triu(0): masked the diagonal too", judged="named", seen="a1507943")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(0), float("-inf")).softmax(dim=-1)


@ans("mw08", E, "wrong", "mask sized with the notebook's T (4), not the size of these scores", judged="named", seen="d39b2386")
def _(scores):
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # noqa: F821 (the notebook's T = 4)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


@ans("mw09", E, "wrong", "softmax over dim 0 after the mask", judged="named", seen="7909f6ff")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(dim=0)


@ans("mw10", E, "wrong", "forgot dtype=torch.bool: a float mask, which masked_fill refuses", judged="named", seen="eab79aa5")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T).triu(1), float("-inf")).softmax(dim=-1)


@ans("mw11", E, "wrong", "forgot the softmax: returns the masked scores", judged="named", seen="5711bbdd")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))


@ans("mw12", E, "wrong", "multiplied the scores by a lower-triangular 0/1 matrix (later words get score 0)", judged="named", seen="10cc2e24")
def _(scores):
    T = scores.shape[-1]
    return (scores * torch.ones(T, T).tril()).softmax(dim=-1)


add("mw13", E, "wrong", "torch.tril(scores): thought it hides the later words (it sets them to 0)",
    lambda scores: torch.tril(scores).softmax(dim=-1), judged="named", seen="10cc2e24")


@ans("mw14", E, "wrong", "divided the (already scaled) scores by √T again", judged="generic", seen="6f3518f9")
def _(scores):
    T = scores.shape[-1]
    return (scores / T ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(dim=-1)


@ans("mw15", E, "wrong", "two slips: 0 instead of -inf and softmax over dim 0", judged="generic", seen="99cd3e62")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), 0).softmax(dim=0)


@ans("mw16", E, "wrong", "put -inf where tril() is True: hid the words that may be seen", judged="named", seen="76229bd4")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")).softmax(dim=-1)


@ans("mw17", E, "wrong", "two slips: wrong triangle (tril(-1)) and 0 instead of -inf", judged="generic", seen="15ce075b")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).tril(-1), 0).softmax(dim=-1)


@ans("mw18", E, "wrong", "float('inf') without the minus sign", judged="generic", seen="24ff821d", other={"b1d17bdb": "generic"})
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("inf")).softmax(dim=-1)


@ans("mw19", E, "wrong", "used the notebook's `future` mask (4 × 4, from the cell after) instead of one of this size", judged="named", seen="d39b2386")
def _(scores):
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)  # noqa: F821


@ans("mw20", E, "wrong", "masked with -1 (a 'negative' score) instead of -inf", judged="named", seen="b1403fe5")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -1.0).softmax(dim=-1)


@ans("mw-ok1", E, "ok", "tril of allowed positions, masked_fill where NOT allowed", judged="accepted", seen="b57ee29e")
def _(scores):
    T = scores.shape[-1]
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)


@ans("mw-ok2", E, "ok", "-1e9 instead of -inf", judged="accepted", seen="b57ee29e")
def _(scores):
    T = scores.shape[-1]
    return scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -1e9).softmax(dim=-1)


@ans("mw-ok3", E, "ok", "adds a matrix of -inf above the diagonal", judged="accepted", seen="b57ee29e")
def _(scores):
    T = scores.shape[-1]
    return (scores + torch.full((T, T), float("-inf")).triu(1)).softmax(dim=-1)


@ans("mw-ok4", E, "ok", "loop over rows: softmax of the visible part, zeros after it", judged="accepted", seen="b57ee29e")
def _(scores):
    T = scores.shape[-1]
    out = torch.zeros_like(scores)
    for i in range(T):
        out[i, :i + 1] = scores[i, :i + 1].softmax(dim=-1)
    return out


@ans("mw-ok5", E, "ok", "torch.where with a tril mask", judged="accepted", seen="b57ee29e")
def _(scores):
    T = scores.shape[0]
    keep = torch.tril(torch.ones(T, T)).bool()
    return torch.softmax(torch.where(keep, scores, torch.tensor(float("-inf"))), dim=1)


@ans("mw-ok6", E, "ok", "clone, then in-place masked_fill_", judged="accepted", seen="b57ee29e")
def _(scores):
    s = scores.clone()
    s.masked_fill_(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1)


@ans("mw-ok7", E, "ok", "numpy: np.triu_indices and -np.inf, softmax by hand, back to a tensor", judged="accepted", seen="b57ee29e")
def _(scores):
    import numpy as np
    s = scores.numpy().copy()
    s[np.triu_indices(s.shape[0], k=1)] = -np.inf
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=1, keepdims=True))


# ================================================================== 01 · weighted_sum(weights, V)
E = "weighted_sum"
add("ws01", E, "wrong", "V @ weights (the order swapped)", lambda weights, V: V @ weights, judged="named", seen="94516f0e")
add("ws02", E, "wrong", "weights.T @ V (the columns of the map instead of its rows)", lambda weights, V: weights.T @ V, judged="named", seen="2336a331")
add("ws03", E, "wrong", "weights * V: number-by-number product instead of a matrix product",
    lambda weights, V: weights * V, judged="named", seen="baa322cf")
add("ws04", E, "wrong", "used the notebook's head.V instead of the argument V",
    lambda weights, V: weights @ head.V, judged="misnamed", seen="4ca7e06e")  # noqa: F821
add("ws05", E, "wrong", "summed the result over the words: one vector instead of one per word",
    lambda weights, V: (weights @ V).sum(dim=0), judged="named", seen="83b0a0f4")
add("ws06", E, "wrong", "divided by the number of words (an average on top of the weights)",
    lambda weights, V: weights @ V / V.shape[0], judged="named", seen="7d313b51")
add("ws07", E, "wrong", "weights.sum(-1, keepdim=True) * V: the weights of a row add to 1, so this returns V",
    lambda weights, V: weights.sum(-1, keepdim=True) * V, judged="named", seen="d9ac446b")
add("ws08", E, "wrong", "put the weights through a softmax again", lambda weights, V: weights.softmax(dim=-1) @ V, judged="named", seen="735296ea")


@ans("ws09", E, "wrong", "loop over the keys with range(T - 1): the last word is never added", judged="named", seen="2e2c238d")
def _(weights, V):
    T = weights.shape[0]
    out = torch.zeros(T, V.shape[1])
    for i in range(T):
        for j in range(T - 1):
            out[i] += weights[i, j] * V[j]
    return out


@ans("ws10", E, "wrong", "loop over the notebook's T (4) rows: rows after the fourth stay 0", judged="generic", seen="dd117c41")
def _(weights, V):
    out = torch.zeros(weights.shape[0], V.shape[1])
    for i in range(T):  # noqa: F821 (the notebook's T = 4)
        out[i] = weights[i] @ V
    return out


add("ws11", E, "wrong", "V.T @ weights: a [d × T] result", lambda weights, V: V.T @ weights, judged="generic", seen="fee73f9e")
add("ws12", E, "wrong", "weights @ V.T", lambda weights, V: weights @ V.T, judged="named", seen="ebc36934")


@ans("ws13", E, "wrong", "1-based loop range(1, T + 1)", judged="generic", seen="1dcc02c5")
def _(weights, V):
    T = weights.shape[0]
    out = torch.zeros(T, V.shape[1])
    for i in range(1, T + 1):
        out[i - 1] = sum(weights[i, j] * V[j] for j in range(T))
    return out


add("ws14", E, "wrong", "einsum 'ij,id->jd' (summed over the queries)",
    lambda weights, V: torch.einsum("ij,id->jd", weights, V), judged="named", seen="2336a331")
add("ws15", E, "wrong", "two slips: weights.T and divided by the number of words",
    lambda weights, V: weights.T @ V / V.shape[0], judged="generic", seen="6d0a21a0")
add("ws16", E, "wrong", "used the notebook's `row` (draw's weights) instead of the argument weights",
    lambda weights, V: row @ V, judged="misnamed", seen="f8b30e85")  # noqa: F821
add("ws17", E, "wrong", "only the last word's update (weights[-1] @ V), like the draw example",
    lambda weights, V: weights[-1] @ V, judged="generic", seen="448015e0")


@ans("ws18", E, "wrong", "loop with the indices swapped: out[i] += weights[j, i] * V[j]", judged="named", seen="2336a331")
def _(weights, V):
    out = torch.zeros(weights.shape[0], V.shape[1])
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            out[i] += weights[j, i] * V[j]
    return out


add("ws-ok1", E, "ok", "einsum 'ij,jd->id'", lambda weights, V: torch.einsum("ij,jd->id", weights, V), judged="accepted", seen="324e909f")


@ans("ws-ok2", E, "ok", "double loop, Σⱼ weights[i, j] · V[j] as the prose writes it", judged="accepted", seen="324e909f")
def _(weights, V):
    out = torch.zeros(weights.shape[0], V.shape[1])
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            out[i] += weights[i, j] * V[j]
    return out


add("ws-ok3", E, "ok", "broadcast and sum: (weights[:, :, None] * V[None]).sum(1)",
    lambda weights, V: (weights[:, :, None] * V[None]).sum(1), judged="accepted", seen="324e909f")
add("ws-ok4", E, "ok", "(V.T @ weights.T).T", lambda weights, V: (V.T @ weights.T).T, judged="accepted", seen="324e909f")
add("ws-ok5", E, "ok", "float64 (returns a float64 tensor)", lambda weights, V: weights.double() @ V.double(), judged="accepted", seen="324e909f")
add("ws-ok6", E, "ok", "numpy matmul, back to a tensor", lambda weights, V: torch.tensor(weights.numpy() @ V.numpy()), judged="accepted", seen="324e909f")
add("ws-ok7", E, "ok", "torch.mm", lambda weights, V: torch.mm(weights, V), judged="accepted", seen="324e909f")


# ================================================================== 02 · one_head(X, W_Q, W_K, W_V)
E = "one_head"


def _head(scale=None, order="QKV", dim=-1, ret="z", bias=False):
    def one_head(X, W_Q, W_K, W_V):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        if order == "QVK":
            K, V = V, K
        d = Q.shape[-1]
        s = {None: d ** 0.5, "none": 1, "D": X.shape[-1] ** 0.5, "T": X.shape[0] ** 0.5, "d": d}[scale]
        w = (Q @ K.T / s).softmax(dim=dim)
        return w @ V
    return one_head


add("oh01", E, "wrong", "forgot to divide by √d", _head(scale="none"), judged="named", seen="574d3b39")
add("oh02", E, "wrong", "divided by √D (the width of X) instead of √d", _head(scale="D"), judged="named", seen="31f82f2d")


@ans("oh03", E, "wrong", "forgot to compute V: the notebook's V [4 × 64] is used", judged="misnamed", seen="ab907524")
def _(X, W_Q, W_K, W_V):
    Q, K = X @ W_Q, X @ W_K
    d = Q.shape[-1]
    weights = (Q @ K.T / d ** 0.5).softmax(dim=-1)
    return weights @ V  # noqa: F821


@ans("oh04", E, "wrong", "forgot to compute K: the notebook's K [4 × 64] is used", judged="misnamed", seen="e5168a0e")
def _(X, W_Q, W_K, W_V):
    Q, V = X @ W_Q, X @ W_V
    d = Q.shape[-1]
    weights = (Q @ K.T / d ** 0.5).softmax(dim=-1)  # noqa: F821
    return weights @ V


@ans("oh05", E, "wrong", "returned the weights instead of the updates", judged="named", seen="07204476")
def _(X, W_Q, W_K, W_V):
    Q, K = X @ W_Q, X @ W_K
    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)


add("oh06", E, "wrong", "softmax over dim 0", _head(dim=0), judged="named", seen="77a95561")
add("oh07", E, "wrong", "W_K and W_V swapped (keys made with W_V, values with W_K)", _head(order="QVK"), judged="generic", seen="a07a669e")


@ans("oh08", E, "wrong", "used W_Q for the queries, keys and values", judged="generic", seen="46249747")
def _(X, W_Q, W_K, W_V):
    Q = K = V = X @ W_Q
    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1) @ V


@ans("oh09", E, "wrong", "added the causal mask although this exercise has none", judged="named", seen="09426a4f")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    T, d = Q.shape
    s = (Q @ K.T / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(dim=-1) @ V


@ans("oh10", E, "wrong", "W_Q @ X (matrix first)", judged="named", seen="29ea184e")
def _(X, W_Q, W_K, W_V):
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1) @ V


add("oh11", E, "wrong", "divided by √T (the number of words)", _head(scale="T"), judged="named", seen="42f745bd")


@ans("oh12", E, "wrong", "divided by √walk.d_head (the notebook's 64, so always 8)", judged="named", seen="668ee74a")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (Q @ K.T / walk.d_head ** 0.5).softmax(dim=-1) @ V  # noqa: F821


add("oh13", E, "wrong", "divided by d instead of √d", _head(scale="d"), judged="named", seen="ef771734")


@ans("oh14", E, "wrong", "two slips: no ÷ √d and W_K / W_V swapped", judged="generic", seen="c41c318e")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_V, X @ W_K
    return (Q @ K.T).softmax(dim=-1) @ V


@ans("oh15", E, "wrong", "added the notebook's biases walk.b_Q[h], walk.b_K[h], walk.b_V[h]", judged="named", seen="f8d7557e")
def _(X, W_Q, W_K, W_V):
    Q = X @ W_Q + walk.b_Q[h]  # noqa: F821
    K = X @ W_K + walk.b_K[h]  # noqa: F821
    V = X @ W_V + walk.b_V[h]  # noqa: F821
    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1) @ V


@ans("oh16", E, "wrong", "K @ Q.T: the map with rows as keys", judged="named", seen="4688cbf3")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (K @ Q.T / Q.shape[-1] ** 0.5).softmax(dim=-1) @ V


@ans("oh17", E, "wrong", "forgot the softmax: the scaled scores used as weights", judged="named", seen="304521c6")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (Q @ K.T / Q.shape[-1] ** 0.5) @ V


@ans("oh18", E, "wrong", "two slips: ÷ √D and softmax over dim 0", judged="generic", seen="d0dc49fa")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (Q @ K.T / X.shape[1] ** 0.5).softmax(dim=0) @ V


@ans("oh19", E, "wrong", "named the weights `w` but returned `weights @ V`: the notebook's weights [1 × 4]", judged="misnamed", seen="9b839613")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    w = (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)  # noqa: F841
    return weights @ V  # noqa: F821


@ans("oh20", E, "wrong", "head size taken from W_Q.shape[0] (the rows: D) instead of its columns", judged="named", seen="31f82f2d")
def _(X, W_Q, W_K, W_V):
    d = W_Q.shape[0]
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (Q @ K.T / d ** 0.5).softmax(dim=-1) @ V


@ans("oh-ok1", E, "ok", "einsum throughout", judged="accepted", seen="67629c1b")
def _(X, W_Q, W_K, W_V):
    Q, K, V = (torch.einsum("tD,Dd->td", X, W) for W in (W_Q, W_K, W_V))
    w = torch.einsum("id,jd->ij", Q, K) / Q.shape[-1] ** 0.5
    return torch.einsum("ij,jd->id", w.softmax(-1), V)


@ans("oh-ok2", E, "ok", "float64 throughout (returns float64)", judged="accepted", seen="67629c1b")
def _(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = X.double(), W_Q.double(), W_K.double(), W_V.double()
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return (Q @ K.T / W_K.shape[1] ** 0.5).softmax(dim=1) @ V


@ans("oh-ok3", E, "ok", "scaled_dot_product_attention on a batch of one (no mask by default)", judged="accepted", seen="67629c1b")
def _(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return torch.nn.functional.scaled_dot_product_attention(Q[None], K[None], V[None])[0]


@ans("oh-ok4", E, "ok", "scales Q and K by d ** -0.25 each", judged="accepted", seen="67629c1b")
def _(X, W_Q, W_K, W_V):
    d = W_Q.shape[1]
    Q, K, V = X @ W_Q * d ** -0.25, X @ W_K * d ** -0.25, X @ W_V
    return torch.softmax(Q @ K.T, dim=-1) @ V


@ans("oh-ok5", E, "ok", "one word at a time in a loop, stacked", judged="accepted", seen="67629c1b")
def _(X, W_Q, W_K, W_V):
    K, V = X @ W_K, X @ W_V
    rows = []
    for x in X:
        q = x @ W_Q
        w = (K @ q / len(q) ** 0.5).softmax(0)
        rows.append(w @ V)
    return torch.stack(rows)


# ================================================================== 02 · split_heads(x, n_heads)
E = "split_heads"


@ans("sh01", E, "wrong", "plain reshape to [n_heads × T × d] (mixes up the words)", judged="named", seen="d5d4c514")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(n_heads, T, D // n_heads)


@ans("sh02", E, "wrong", "reshape to [T × n_heads × d] but forgot to swap the first two axes", judged="named", seen="03d0b26e")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(T, n_heads, D // n_heads)


add("sh03", E, "wrong", "x.chunk(n_heads, dim=-1): a tuple of per-head tensors, never stacked",
    lambda x, n_heads: x.chunk(n_heads, dim=-1), judged="named", seen="c9decd18", other={"1696002e": "false pass"})


@ans("sh04", E, "wrong", "a list of column slices, never stacked", judged="named", seen="4780479f", other={"1696002e": "false pass"})
def _(x, n_heads):
    d = x.shape[1] // n_heads
    return [x[:, h * d:(h + 1) * d] for h in range(n_heads)]


@ans("sh05", E, "wrong", "used the notebook's walk.n_heads (12) instead of the argument n_heads", judged="generic", seen="1cf4150c")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(T, walk.n_heads, D // walk.n_heads).transpose(0, 1)  # noqa: F821


@ans("sh06", E, "wrong", "off-by-one slice h·d … (h+1)·d − 1 taken literally: each head gets d − 1 numbers", judged="generic", seen="575a26d1")
def _(x, n_heads):
    d = x.shape[1] // n_heads
    return torch.stack([x[:, h * d:(h + 1) * d - 1] for h in range(n_heads)])


@ans("sh07", E, "wrong", "reshape to [T × d × n_heads] then permute: head h gets every n_heads-th feature", judged="named", seen="d29b94ff")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(T, D // n_heads, n_heads).permute(2, 0, 1)


@ans("sh08", E, "wrong", "swapped axes 1 and 2 instead of 0 and 1 after the reshape", judged="generic", seen="235f0a1c")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(T, n_heads, D // n_heads).transpose(1, 2)


@ans("sh09", E, "wrong", "x.T.reshape(n_heads, T, d)", judged="generic", seen="82ba2470")
def _(x, n_heads):
    T, D = x.shape
    return x.T.reshape(n_heads, T, D // n_heads)


@ans("sh10", E, "wrong", ".T on the 3-D reshape (reverses every axis)", judged="named", seen="ab631bb5")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(T, n_heads, D // n_heads).T


@ans("sh11", E, "wrong", "1-based heads: slices for h in range(1, n_heads + 1)", judged="generic", seen="502785f0")
def _(x, n_heads):
    d = x.shape[1] // n_heads
    return torch.stack([x[:, h * d:(h + 1) * d] for h in range(1, n_heads + 1)])


add("sh12", E, "wrong", "x.split(n_heads, dim=-1) (pieces OF n_heads numbers, not n_heads pieces), stacked",
    lambda x, n_heads: torch.stack(x.split(n_heads, dim=-1)), judged="named", seen="97cdb9ac")
add("sh13", E, "wrong", "torch.cat of the chunks instead of torch.stack: [n_heads·T × d]",
    lambda x, n_heads: torch.cat(x.chunk(n_heads, dim=-1)), judged="generic", seen="eac22172")


@ans("sh14", E, "wrong", "two slips: the notebook's walk.n_heads and a plain reshape", judged="generic", seen="1cf4150c")
def _(x, n_heads):
    T, D = x.shape
    return x.reshape(walk.n_heads, T, D // walk.n_heads)  # noqa: F821


@ans("sh15", E, "wrong", "head size from the notebook: walk.d_head (64)", judged="named", seen="73b25dcf")
def _(x, n_heads):
    T = x.shape[0]
    return x.reshape(T, n_heads, walk.d_head).transpose(0, 1)  # noqa: F821


add("sh16", E, "wrong", "chunked along the words (dim 0) instead of the features",
    lambda x, n_heads: torch.stack(x.chunk(n_heads, dim=0)), judged="named", seen="0e5c3ee0")


@ans("sh17", E, "wrong", "head size from x.shape[0] (the number of words) instead of the width", judged="generic", seen="7b79e5f3")
def _(x, n_heads):
    T = x.shape[0]
    d = x.shape[0] // n_heads
    return x.reshape(T, n_heads, d).transpose(0, 1)


@ans("sh18", E, "wrong", "a Python loop that fills a [n_heads × T × d] tensor, with h and t swapped in the slice", judged="named", seen="d5d4c514")
def _(x, n_heads):
    T, D = x.shape
    d = D // n_heads
    out = torch.zeros(n_heads, T, d)
    for h in range(n_heads):
        for t in range(T):
            out[h, t] = x.reshape(-1)[(h * T + t) * d:(h * T + t + 1) * d]
    return out


add("sh-ok1", E, "ok", "torch.stack(x.chunk(n_heads, dim=-1))", lambda x, n_heads: torch.stack(x.chunk(n_heads, dim=-1)), judged="accepted", seen="1696002e")


@ans("sh-ok2", E, "ok", "stack of column slices", judged="accepted", seen="1696002e")
def _(x, n_heads):
    d = x.shape[1] // n_heads
    return torch.stack([x[:, h * d:(h + 1) * d] for h in range(n_heads)])


add("sh-ok3", E, "ok", "view(T, n, -1).permute(1, 0, 2)",
    lambda x, n_heads: x.view(x.shape[0], n_heads, -1).permute(1, 0, 2), judged="accepted", seen="1696002e")


@ans("sh-ok4", E, "ok", "x.T.reshape(n, d, T).transpose(1, 2): grouping the transposed rows", judged="accepted", seen="1696002e")
def _(x, n_heads):
    T, D = x.shape
    return x.T.reshape(n_heads, D // n_heads, T).transpose(1, 2)


add("sh-ok5", E, "ok", "unflatten the features, then movedim",
    lambda x, n_heads: x.unflatten(-1, (n_heads, -1)).movedim(1, 0), judged="accepted", seen="1696002e")


@ans("sh-ok6", E, "ok", "float64 loop filling a zeros tensor (returns float64)", judged="accepted", seen="1696002e")
def _(x, n_heads):
    T, D = x.shape
    d = D // n_heads
    out = torch.zeros(n_heads, T, d, dtype=torch.float64)
    for h in range(n_heads):
        out[h] = x[:, h * d:(h + 1) * d]
    return out


# ================================================================== 03 · merge_heads(z)
E = "merge_heads"


@ans("mh01", E, "wrong", "plain reshape to [T × n_heads·d] (mixes up the words)", judged="named", seen="1334c0cf")
def _(z):
    n, T, d = z.shape
    return z.reshape(T, n * d)


add("mh02", E, "wrong", "torch.cat(list(z), dim=0): heads stacked under each other", lambda z: torch.cat(list(z), dim=0), judged="named", seen="ed3aa743")
add("mh03", E, "wrong", "transpose(0, 1) but forgot the reshape", lambda z: z.transpose(0, 1), judged="named", seen="e1c89371")


@ans("mh04", E, "wrong", "transpose(1, 2) then reshape", judged="named", seen="3d5b2704")
def _(z):
    n, T, d = z.shape
    return z.transpose(1, 2).reshape(T, n * d)


add("mh05", E, "wrong", "added the heads up (z.sum(0)) instead of putting them side by side", lambda z: z.sum(dim=0), judged="named", seen="9fb954d0")
add("mh06", E, "wrong", "averaged the heads (z.mean(0))", lambda z: z.mean(dim=0), judged="named", seen="9bf67df7")


@ans("mh07", E, "wrong", "width from the notebook: walk.n_heads * walk.d_head (768)", judged="named", seen="7b60bdc9")
def _(z):
    return z.transpose(0, 1).reshape(z.shape[1], walk.n_heads * walk.d_head)  # noqa: F821


@ans("mh08", E, "wrong", "permute(1, 2, 0) then reshape: features interleaved head by head", judged="named", seen="8ebce73c")
def _(z):
    n, T, d = z.shape
    return z.permute(1, 2, 0).reshape(T, n * d)


@ans("mh09", E, "wrong", "1-based loop range(1, n): head 0 left out", judged="generic", seen="4a256eb6")
def _(z):
    return torch.cat([z[h] for h in range(1, z.shape[0])], dim=-1)


add("mh10", E, "wrong", ".T on the 3-D z, then reshape", lambda z: z.T.reshape(z.shape[1], -1), judged="named", seen="53f1ab2e")
add("mh11", E, "wrong", "torch.stack(list(z), dim=1): [T × n × d], never flattened",
    lambda z: torch.stack(list(z), dim=1), judged="named", seen="e1c89371")


@ans("mh12", E, "wrong", "two slips: head 0 left out (range(1, n)) and concatenated along dim 0", judged="generic", seen="d7933366")
def _(z):
    return torch.cat([z[h] for h in range(1, z.shape[0])], dim=0)


@ans("mh13", E, "wrong", "number of words from the notebook's sentence (len(walk.tokens) = 4)", judged="generic", seen="8ccc067f")
def _(z):
    return z.transpose(0, 1).reshape(len(walk.tokens), -1)  # noqa: F821


@ans("mh14", E, "wrong", "transpose(0, 2) then reshape", judged="named", seen="53f1ab2e")
def _(z):
    return z.transpose(0, 2).reshape(z.shape[1], -1)


add("mh15", E, "wrong", "z.flatten(0, 1): [n·T × d]", lambda z: z.flatten(0, 1), judged="named", seen="ed3aa743")


@ans("mh16", E, "wrong", "heads in reverse order (looped from the last head down)", judged="named", seen="c96b6951")
def _(z):
    return torch.cat([z[h] for h in range(z.shape[0] - 1, -1, -1)], dim=-1)


add("mh-ok1", E, "ok", "torch.cat(list(z), dim=-1)", lambda z: torch.cat(list(z), dim=-1), judged="accepted", seen="d3d43e3d")
add("mh-ok2", E, "ok", "permute(1, 0, 2).flatten(1)", lambda z: z.permute(1, 0, 2).flatten(1), judged="accepted", seen="d3d43e3d")
add("mh-ok3", E, "ok", "torch.hstack(tuple(z))", lambda z: torch.hstack(tuple(z)), judged="accepted", seen="d3d43e3d")
add("mh-ok4", E, "ok", "einsum 'htd->thd' then reshape", lambda z: torch.einsum("htd->thd", z).reshape(z.shape[1], -1), judged="accepted", seen="d3d43e3d")


@ans("mh-ok5", E, "ok", "loop filling a zeros tensor block by block", judged="accepted", seen="d3d43e3d")
def _(z):
    n, T, d = z.shape
    out = torch.zeros(T, n * d)
    for h in range(n):
        out[:, h * d:(h + 1) * d] = z[h]
    return out


@ans("mh-ok6", E, "ok", "numpy concatenate, back to a tensor", judged="accepted", seen="d3d43e3d")
def _(z):
    import numpy as np
    return torch.from_numpy(np.concatenate(list(z.numpy()), axis=1))


# ================================================================== 03 · recombine(z, W_O)
E = "recombine"
add("rc01", E, "wrong", "averaged the heads instead of adding them", lambda z, W_O: (z @ W_O).mean(dim=0), judged="named", seen="d0fe92cc")
add("rc02", E, "wrong", "forgot to add the heads up: returns [n_heads × T × D]", lambda z, W_O: z @ W_O, judged="named", seen="f7ee3757")
add("rc03", E, "wrong", "used the notebook's walk.W_O (12 × 64 × 768) instead of the argument W_O",
    lambda z, W_O: (z @ walk.W_O).sum(dim=0), judged="named", seen="eb4c457d")  # noqa: F821


@ans("rc04", E, "wrong", "merged the heads with a plain reshape, then one product with the stacked W_O", judged="named", seen="a3217fcf")
def _(z, W_O):
    n, T, d = z.shape
    return z.reshape(T, n * d) @ W_O.reshape(n * d, -1)


add("rc05", E, "wrong", "added the heads first and the blocks first, then one product",
    lambda z, W_O: z.sum(0) @ W_O.sum(0), judged="named", seen="76b26299")
add("rc06", E, "wrong", "summed over dim 1 (the words) instead of the heads", lambda z, W_O: (z @ W_O).sum(dim=1), judged="named", seen="fb20098c")
add("rc07", E, "wrong", "W_O @ z (the order swapped)", lambda z, W_O: (W_O @ z).sum(dim=0), judged="named", seen="6093fc71")
add("rc08", E, "wrong", "transposed each block: z @ W_O.transpose(1, 2)",
    lambda z, W_O: (z @ W_O.transpose(1, 2)).sum(dim=0), judged="named", seen="67b03e5a")


@ans("rc09", E, "wrong", "stacked W_O with transpose(0, 1) before the reshape: the blocks' rows interleaved", judged="named", seen="e3f5083c")
def _(z, W_O):
    n, T, d = z.shape
    return torch.cat(list(z), dim=-1) @ W_O.transpose(0, 1).reshape(n * d, -1)


@ans("rc10", E, "wrong", "loop range(n - 1): the last head is left out", judged="named", seen="6a61157a")
def _(z, W_O):
    out = 0
    for h in range(z.shape[0] - 1):
        out = out + z[h] @ W_O[h]
    return out


@ans("rc11", E, "wrong", "loop that overwrites instead of adding: only the last head is kept", judged="named", seen="5946ac33")
def _(z, W_O):
    for h in range(z.shape[0]):
        out = z[h] @ W_O[h]
    return out


add("rc12", E, "wrong", "only head 0", lambda z, W_O: z[0] @ W_O[0], judged="named", seen="8206352b")


@ans("rc13", E, "wrong", "two slips: 1-based loop range(1, n) and divided by n at the end", judged="generic", seen="9927edb7")
def _(z, W_O):
    n = z.shape[0]
    out = 0
    for h in range(1, n):
        out = out + z[h] @ W_O[h]
    return out / n


add("rc14", E, "wrong", "einsum 'htd,hdD->hD' (summed over the words, kept the heads)",
    lambda z, W_O: torch.einsum("htd,hdD->hD", z, W_O), judged="named", seen="fb20098c")


@ans("rc15", E, "wrong", "concatenated the heads along dim 0 before the product", judged="misnamed", seen="fbcc45f7")
def _(z, W_O):
    n, T, d = z.shape
    return torch.cat(list(z), dim=0) @ W_O.reshape(n * d, -1)


@ans("rc16", E, "wrong", "number of words from the notebook (len(walk.tokens) = 4) in the merge", judged="named", seen="245d2d6a")
def _(z, W_O):
    n, T, d = z.shape
    return z.transpose(0, 1).reshape(len(walk.tokens), n * d) @ W_O.reshape(n * d, -1)  # noqa: F821


add("rc-ok1", E, "ok", "einsum 'htd,hdD->tD'", lambda z, W_O: torch.einsum("htd,hdD->tD", z, W_O), judged="accepted", seen="fdd57e8f")


@ans("rc-ok2", E, "ok", "merge, then one product with the blocks stacked: W_O.reshape(n·d, D)", judged="accepted", seen="fdd57e8f")
def _(z, W_O):
    n, T, d = z.shape
    return z.transpose(0, 1).reshape(T, n * d) @ W_O.reshape(n * d, W_O.shape[-1])


@ans("rc-ok3", E, "ok", "loop adding each head's decompressed update", judged="accepted", seen="fdd57e8f")
def _(z, W_O):
    total = torch.zeros(z.shape[1], W_O.shape[2])
    for h in range(z.shape[0]):
        total += z[h] @ W_O[h]
    return total


add("rc-ok4", E, "ok", "torch.bmm then sum", lambda z, W_O: torch.bmm(z, W_O).sum(0), judged="accepted", seen="fdd57e8f")
add("rc-ok5", E, "ok", "H.recombination_matrix(W_O) from the notebook's helpers on the concatenation",
    lambda z, W_O: torch.cat(list(z), dim=-1) @ H.recombination_matrix(W_O), judged="accepted", seen="fdd57e8f")
add("rc-ok6", E, "ok", "float64 (returns float64)", lambda z, W_O: (z.double() @ W_O.double()).sum(0), judged="accepted", seen="fdd57e8f")


# ================================================================== 03 · MyMultiHead (capstone)
E = "multihead"


def _mh(**o):
    """A student's MyMultiHead following the exercise's seven steps, with the slips in `o`."""
    class MyMultiHead(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.size = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.out = nn.Linear(dim, dim)

        def forward(self, x):
            B, T, D = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=o.get("chunk_dim", -1))
            if o.get("order") == "kqv":
                q, k = k, q
            if o.get("order") == "qvk":
                k, v = v, k
            split = o.get("split", "ok")
            if split == "ok":
                q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
            elif split == "no_transpose":
                q, k, v = (t.view(B, T, self.heads, self.size) for t in (q, k, v))
            elif split == "heads_first":
                q, k, v = (t.reshape(B, self.heads, T, self.size) for t in (q, k, v))
            elif split == "size_heads":
                q, k, v = (t.reshape(B, T, self.size, self.heads).transpose(1, 3).transpose(2, 3)
                           for t in (q, k, v))
            scale = {"size": self.size ** 0.5, "dim": D ** 0.5, "none": 1.0, "heads": self.heads ** 0.5}[
                o.get("scale", "size")]
            scores = q @ k.transpose(-2, -1) / scale
            mask = o.get("mask", "-inf")
            n = {"batch": B, "four": 4}.get(o.get("mask_size"), T)
            future = torch.ones(n, n, dtype=torch.bool).triu(0 if mask == "diag" else 1)
            if mask == "inverted":
                future = torch.ones(n, n, dtype=torch.bool).tril()
            fill = {"-inf": float("-inf"), "diag": float("-inf"), "inverted": float("-inf"), "0": 0.0, "-10": -10.0}
            if mask in fill:
                scores = scores.masked_fill(future, fill[mask])
            weights = scores.softmax(dim=o.get("softmax_dim", -1))
            if mask == "after":
                weights = weights.masked_fill(future, 0.0)
            if mask == "after_inf":
                weights = weights.masked_fill(future, float("-inf"))
            y = weights @ v
            if o.get("merge", "ok") == "ok":
                y = y.transpose(1, 2).reshape(B, T, D)
            else:
                y = y.reshape(B, T, D)
            outs = o.get("out", 1)
            for _ in range(outs):
                y = self.out(y)
            if o.get("residual"):
                y = x + y
            return y
    return MyMultiHead


add("mm01", E, "wrong", "forgot the causal mask", _mh(mask="none"), judged="named", seen="3ea86a39")
add("mm02", E, "wrong", "forgot to divide by √size", _mh(scale="none"), judged="named", seen="e15f4c73")
add("mm03", E, "wrong", "divided by √dim (√768) instead of √size", _mh(scale="dim"), judged="named", seen="ff416ed4")
add("mm04", E, "wrong", "masked with 0 instead of -inf", _mh(mask="0"), judged="named", seen="1149f773")
add("mm05", E, "wrong", "masked with -10 instead of -inf", _mh(mask="-10"), judged="generic", seen="083a5b71")


class _MMt12(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.size = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.size).transpose(1, 2)
        k = k.view(B, T, self.heads, self.size).transpose(1, 2)
        v = v.view(B, T, self.heads, self.size).transpose(1, 2)
        scores = q @ k.transpose(1, 2) / self.size ** 0.5  # "swap axes 1 and 2", as in step 2
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))


add("mm06", E, "wrong", "k.transpose(1, 2) instead of (-2, -1) for kᵀ (swapped heads and words)", _MMt12, judged="misnamed", seen="30aa640f")


class _MMdotT(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.T / self.size ** 0.5  # .T on a 4-D tensor
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))


add("mm07", E, "wrong", "q @ k.T on 4-D tensors (.T reverses every axis)", _MMdotT, judged="misnamed", seen="30aa640f")
add("mm08", E, "wrong", "merged with a plain reshape, without swapping axes 1 and 2 back", _mh(merge="plain"), judged="named", seen="3f988121")
add("mm09", E, "wrong", "forgot the output projection self.out", _mh(out=0), judged="named", seen="15a9ed95")
add("mm10", E, "wrong", "applied the output projection twice", _mh(out=2), judged="generic", seen="c327a0df")
add("mm11", E, "wrong", "added the residual x + … (the exercise's layer returns the update only)", _mh(residual=True), judged="generic", seen="1feb4ab2")


class _MMnbWO(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / self.size ** 0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return y @ W_O  # noqa: F821 (the notebook's 768 × 768 recombination, not self.out)


add("mm12", E, "wrong", "recombined with the notebook's W_O [768 × 768] instead of self.out", _MMnbWO, judged="named", seen="069e0b28")
add("mm13", E, "wrong", "mask hard-coded for 4 words ('I like to draw')", _mh(mask_size="four"), judged="named", seen="dfbfeb15")
add("mm14", E, "wrong", "mask sized from x.shape[0] (the batch) instead of T", _mh(mask_size="batch"), judged="misnamed", seen="4d39dc8b", other={"c4ff69fb": "misnamed"})
add("mm15", E, "wrong", "split into [B, T, heads, size] but forgot to swap axes 1 and 2", _mh(split="no_transpose"), judged="misnamed", seen="711d88a1")
add("mm16", E, "wrong", "split with a plain reshape to [B, heads, T, size]", _mh(split="heads_first"), judged="named", seen="eb64b2a2")
add("mm17", E, "wrong", "unpacked the chunks as k, q, v (queries and keys swapped)", _mh(order="kqv"), judged="named", seen="9d79e3fa")
add("mm18", E, "wrong", "unpacked the chunks as q, v, k (keys and values swapped)", _mh(order="qvk"), judged="named", seen="70d77846")
add("mm19", E, "wrong", "softmax over dim -2 (the queries)", _mh(softmax_dim=-2), judged="named", seen="9c9a6a21")
add("mm20", E, "wrong", "softmax first, then zeros on the later words", _mh(mask="after"), judged="named", seen="2608fc7d")
add("mm21", E, "wrong", "triu(0): masked the diagonal too", _mh(mask="diag"), judged="named", seen="35553ba3")


class _MMwalk(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        n = walk.n_heads  # noqa: F821 (the notebook's 12, not self.heads)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, n, D // n).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (D // n) ** 0.5
        weights = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))


add("mm22", E, "wrong", "the notebook's walk.n_heads (12) instead of self.heads (right only because the check uses 12)",
    _MMwalk, judged="false pass", seen="ca120f37")
add("mm23", E, "wrong", "two slips: no ÷ √size and no output projection", _mh(scale="none", out=0), judged="named", seen="05dd0abf")
add("mm24", E, "wrong", "two slips: plain reshape for the merge and the residual added", _mh(merge="plain", residual=True), judged="generic", seen="682b19b1")


class _MMfloatmask(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / self.size ** 0.5
        future = torch.triu(torch.ones(T, T), diagonal=1)  # float, not bool
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))


add("mm25", E, "wrong", "a float mask (torch.triu of ones, no dtype=bool): masked_fill refuses it", _MMfloatmask, judged="named", seen="0eae311e")
add("mm26", E, "wrong", "-inf where tril() is True: hid the words that may be seen", _mh(mask="inverted"), judged="named", seen="fe6aa2aa")
add("mm27", E, "wrong", "divided by √heads instead of √size", _mh(scale="heads"), judged="generic", seen="c10e8ac9")
add("mm28", E, "wrong", "chunk(3, dim=1): cut along the words instead of the features", _mh(chunk_dim=1), judged="named", seen="88f412bf")
add("mm29", E, "wrong", "split as [B, T, size, heads] (the two inner sizes in the wrong order)", _mh(split="size_heads"), judged="named", seen="4f0150c6")
add("mm30", E, "wrong", "softmax first, then -inf on the later words", _mh(mask="after_inf"), judged="generic", seen="2bf6b5e9", other={"24fa8425": "generic"})
add("mm31", E, "wrong", "two slips: ÷ √dim and the mask sized from the batch axis", _mh(scale="dim", mask_size="batch"), judged="named", seen="9051cd0f", other={"a85740e7": "named"})


class _MMnobias(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        qkv = x @ self.qkv.weight.T  # wrote the projection by hand and forgot the bias
        q, k, v = qkv.chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / self.size ** 0.5
        weights = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
        return self.out((weights @ v).transpose(1, 2).reshape(B, T, D))


add("mm32", E, "wrong", "wrote the fused projection by hand (x @ qkv.weight.T) and forgot its bias", _MMnobias, judged="named", seen="fb2378a6")


class _MMloop(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        outs = []
        for hd in range(self.heads):
            sl = slice(hd * self.size, (hd + 1) * self.size)
            s = q[..., sl] @ k[..., sl].transpose(-2, -1) / self.size ** 0.5
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            outs.append(s.softmax(-1) @ v[..., sl])
        return self.out(torch.cat(outs, dim=-1))


add("mm-ok1", E, "ok", "a loop over the heads with slices of 64 features, concatenated", _MMloop, judged="accepted", seen="ca120f37")


class _MMsdpa(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, D))


add("mm-ok2", E, "ok", "scaled_dot_product_attention(…, is_causal=True)", _MMsdpa, judged="accepted", seen="ca120f37")


class _MMeinsum(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.reshape(B, T, self.heads, self.size) for t in self.qkv(x).chunk(3, dim=-1))
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.size ** 0.5
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v)
        return self.out(y.reshape(B, T, D))


add("mm-ok3", E, "ok", "einsum for the scores and the sum, no transposes at all", _MMeinsum, judged="accepted", seen="ca120f37")


class _MMdouble(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.double().view(B, T, self.heads, self.size).permute(0, 2, 1, 3) for t in self.qkv(x).chunk(3, -1))
        s = q @ k.mT / self.size ** 0.5
        s = s + torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
        y = (s.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.out(y.float())


add("mm-ok4", E, "ok", "float64 in the middle, permute and k.mT, an additive -inf mask", _MMdouble, judged="accepted", seen="ca120f37")


class _MMbig(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(2, 3) * self.size ** -0.5
        keep = torch.tril(torch.ones(T, T)) == 1
        s = s.masked_fill(~keep, -1e9)
        y = (s.softmax(dim=3) @ v).transpose(1, 2).contiguous().view(B, T, D)
        return self.out(y)


add("mm-ok5", E, "ok", "split(D) instead of chunk, transpose(2, 3) for kᵀ, -1e9 and a tril mask", _MMbig, judged="accepted", seen="ca120f37")


class _MMmanual(_MMt12):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (x @ self.qkv.weight.T + self.qkv.bias).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, self.size).transpose(1, 2) for t in (q, k, v))
        s = (q @ k.transpose(-2, -1)) / torch.tensor(float(self.size)).sqrt()
        w = torch.where(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"), s).softmax(-1)
        y = (w @ v).transpose(1, 2).reshape(B, T, D)
        return y @ self.out.weight.T + self.out.bias


add("mm-ok6", E, "ok", "both linear layers written by hand with their weights and biases, torch.where mask", _MMmanual, judged="accepted", seen="ca120f37")


# ================================================================== 04 · concat_shape(n_tokens, width, n_heads)
E = "concat_shape"
add("cs01", E, "wrong", "one head's output: (n_tokens, width // n_heads)",
    lambda n_tokens, width, n_heads: (n_tokens, width // n_heads), judged="named", seen="da015f7f")
add("cs02", E, "wrong", "the stacked heads: (n_heads, n_tokens, width // n_heads)",
    lambda n_tokens, width, n_heads: (n_heads, n_tokens, width // n_heads), judged="named", seen="f540d6ed")
add("cs03", E, "wrong", "rows and columns swapped: (width, n_tokens)", lambda n_tokens, width, n_heads: (width, n_tokens), judged="named", seen="95554783")
add("cs04", E, "wrong", "heads stacked under each other: (n_tokens · n_heads, width // n_heads)",
    lambda n_tokens, width, n_heads: (n_tokens * n_heads, width // n_heads), judged="named", seen="4683e69f")
add("cs05", E, "wrong", "used the notebook's T (15) instead of n_tokens",
    lambda n_tokens, width, n_heads: (T, width), judged="generic", seen="6f6d495e")  # noqa: F821
add("cs06", E, "wrong", "added 1 for <bos>: (n_tokens + 1, width)", lambda n_tokens, width, n_heads: (n_tokens + 1, width), judged="named", seen="61f78583")
add("cs07", E, "wrong", "every head as wide as the model: (n_tokens, n_heads · width)",
    lambda n_tokens, width, n_heads: (n_tokens, n_heads * width), judged="named", seen="a9fbf63d")
add("cs08", E, "wrong", "the shape of a map: (n_tokens, n_tokens)", lambda n_tokens, width, n_heads: (n_tokens, n_tokens), judged="named", seen="e9c66232")
add("cs09", E, "wrong", "used the notebook's cfg.n_embd (96) instead of width",
    lambda n_tokens, width, n_heads: (n_tokens, cfg.n_embd), judged="named", seen="a18a30ff")  # noqa: F821
add("cs10", E, "wrong", "used H.WIDTH (96) instead of width", lambda n_tokens, width, n_heads: (n_tokens, H.WIDTH), judged="named", seen="a18a30ff")


@ans("cs11", E, "wrong", "printed the shape instead of returning it", judged="named", seen="180e7d6b")
def _(n_tokens, width, n_heads):
    print((n_tokens, width))


add("cs12", E, "wrong", "two slips: + 1 for <bos> and one head's width",
    lambda n_tokens, width, n_heads: (n_tokens + 1, width // n_heads), judged="generic", seen="cedfb0d0")
add("cs13", E, "wrong", "subtracted 1 for <bos>: (n_tokens - 1, width)",
    lambda n_tokens, width, n_heads: (n_tokens - 1, width), judged="named", seen="abe452ee")
add("cs14", E, "wrong", "two slips: transposed and one head's width: (width // n_heads, n_tokens)",
    lambda n_tokens, width, n_heads: (width // n_heads, n_tokens), judged="generic", seen="5ea31296")
add("cs15", E, "wrong", "used the notebook's h (12) as the number of heads in (n_tokens, h · d) with d from n_heads",
    lambda n_tokens, width, n_heads: (n_tokens, h * (width // n_heads)), judged="named", seen="dda8f7f3")  # noqa: F821

add("cs-ok1", E, "ok", "(n_tokens, width): the concatenation is as wide as the model",
    lambda n_tokens, width, n_heads: (n_tokens, width), judged="accepted", seen="1a577bc7")
add("cs-ok2", E, "ok", "a list [rows, columns] instead of a tuple",
    lambda n_tokens, width, n_heads: [n_tokens, n_heads * (width // n_heads)], judged="accepted", seen="1a577bc7")
add("cs-ok3", E, "ok", "torch.Size((n_tokens, width))", lambda n_tokens, width, n_heads: torch.Size((n_tokens, width)), judged="accepted", seen="1a577bc7")
add("cs-ok4", E, "ok", "columns as width / n_heads * n_heads (a float of the right value)",
    lambda n_tokens, width, n_heads: (n_tokens, width / n_heads * n_heads), judged="refused", seen="1f980a01")
add("cs-ok5", E, "ok", "asks torch: the shape of a real concatenation of zeros",
    lambda n_tokens, width, n_heads: tuple(torch.cat([torch.zeros(n_tokens, width // n_heads)] * n_heads, -1).shape), judged="accepted", seen="1a577bc7")


# ================================================================== 04 · head_size_and_params(width, n_heads)
E = "head_size_and_params"


def _hp(qkv_w="wd", qkv_b="d", wo="dw", out_bias="layer", times=True, d_from=None):
    def head_size_and_params(width, n_heads):
        d = width // n_heads
        w_qkv = {"wd": width * d, "ww": width * width}[qkv_w]
        b_qkv = {"d": d, "0": 0, "w": width}[qkv_b]
        w_o = {"dw": d * width, "ww": width * width, "0": 0, "dd": d * d}[wo]
        per_head = 3 * (w_qkv + b_qkv) + w_o + (width if out_bias == "head" else 0)
        total = (n_heads if times else 1) * per_head + (width if out_bias == "layer" else 0)
        return d, total
    return head_size_and_params


add("hp01", E, "wrong", "left out every bias (counted only the four matrices)", _hp(qkv_b="0", out_bias="none"), judged="named", seen="16e4f398")
add("hp02", E, "wrong", "forgot the output bias", _hp(out_bias="none"), judged="named", seen="1eaf204e")
add("hp03", E, "wrong", "counted W_O as [width × width] per head", _hp(wo="ww"), judged="generic", seen="5dd3ec53")
add("hp04", E, "wrong", "forgot W_O", _hp(wo="0"), judged="generic", seen="ba8c99a5")
add("hp05", E, "wrong", "counted one head only (no × n_heads)", _hp(times=False), judged="named", seen="605fefc3")
add("hp06", E, "wrong", "gave every head its own output bias", _hp(out_bias="head"), judged="named", seen="2a9ea7a9")
add("hp07", E, "wrong", "returned (params, head size): the order swapped",
    lambda width, n_heads: (4 * width * width + 4 * width, width // n_heads), judged="named", seen="7e17b591")
add("hp08", E, "wrong", "a bias of width numbers for each of Q, K, V per head", _hp(qkv_b="w"), judged="generic", seen="b48bf0ae")
add("hp09", E, "wrong", "used H.WIDTH (96) instead of width",
    lambda width, n_heads: (H.WIDTH // n_heads, 4 * H.WIDTH ** 2 + 4 * H.WIDTH), judged="named", seen="b7e41eb4")


@ans("hp10", E, "wrong", "head size from the notebook's cfg.d_head (8)", judged="generic", seen="0d327f44")
def _(width, n_heads):
    d = cfg.d_head  # noqa: F821
    return d, n_heads * (3 * (width * d + d) + d * width) + width


add("hp11", E, "wrong", "two slips: no output bias and W_O as [width × width] per head", _hp(wo="ww", out_bias="none"), judged="generic", seen="63209a7f")
add("hp12", E, "wrong", "every head's Q, K, V matrices [width × width]", _hp(qkv_w="ww"), judged="generic", seen="171a8f71")


@ans("hp13", E, "wrong", "forgot the 3 (counted one of Q, K, V per head)", judged="generic", seen="38ac6821")
def _(width, n_heads):
    d = width // n_heads
    return d, n_heads * ((width * d + d) + d * width) + width


add("hp14", E, "wrong", "returned only the parameter count, not (head size, count)",
    lambda width, n_heads: 4 * width * width + 4 * width, judged="named", seen="bf0e56b0")


@ans("hp15", E, "wrong", "used the notebook's h (12) instead of n_heads", judged="generic", seen="dff61122")
def _(width, n_heads):
    d = width // h  # noqa: F821
    return d, h * (3 * (width * d + d) + d * width) + width  # noqa: F821


add("hp16", E, "wrong", "counted W_O as [d × d] per head", _hp(wo="dd"), judged="generic", seen="648b06df")
add("hp17", E, "wrong", "two slips: W_O as [d × d] per head and no output bias", _hp(wo="dd", out_bias="none"), judged="generic", seen="125f8194")
add("hp18", E, "wrong", "formula 4·width² + 4 with the bias term as 4 numbers",
    lambda width, n_heads: (width // n_heads, 4 * width ** 2 + 4), judged="generic", seen="6d33c662")

add("hp-ok1", E, "ok", "the closed form (d, 4·width² + 4·width)",
    lambda width, n_heads: (width // n_heads, 4 * width ** 2 + 4 * width), judged="accepted", seen="88cbfb57")


@ans("hp-ok2", E, "ok", "a loop adding up every head's parts, then the output bias", judged="accepted", seen="88cbfb57")
def _(width, n_heads):
    d = width // n_heads
    total = 0
    for _ in range(n_heads):
        for _matrix in ("query", "key", "value"):
            total += width * d + d
        total += d * width
    return d, total + width


add("hp-ok3", E, "ok", "int(width / n_heads) as the head size",
    lambda width, n_heads: (int(width / n_heads), 4 * width * (width + 1)), judged="accepted", seen="88cbfb57")
add("hp-ok4", E, "ok", "a float head size width / n_heads (right value, float type)",
    lambda width, n_heads: (width / n_heads, n_heads * (3 * (width * (width / n_heads) + width / n_heads)
                                                        + width / n_heads * width) + width), judged="refused", seen="186f6612")
add("hp-ok5", E, "ok", "H.attention_param_count from the helpers", lambda width, n_heads:
    (width // n_heads, H.attention_param_count(width, n_heads)), judged="accepted", seen="88cbfb57")


@ans("hp-ok6", E, "ok", "counted the parameters of a real torch layer: nn.Linear(width, 3·width) + nn.Linear(width, width)", judged="accepted", seen="88cbfb57")
def _(width, n_heads):
    layers = [torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)]
    return width // n_heads, sum(p.numel() for layer in layers for p in layer.parameters())


# ================================================================== 05 · previous_word_head(attentions)
E = "previous_word_head"


@ans("pw01", E, "wrong", "offset 0: the diagonal (the word itself) instead of the word before", judged="named", seen="bcdba0ae")
def _(attentions):
    score = attentions.diagonal(offset=0, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw02", E, "wrong", "offset +1 (above the diagonal: the next word, which the mask hides)", judged="named", seen="03734779")
def _(attentions):
    score = attentions.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw03", E, "wrong", "chose the best layer and the best head separately (mean over heads, mean over layers)", judged="false pass", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    return int(score.mean(1).argmax()), int(score.mean(0).argmax())


@ans("pw04", E, "wrong", "decoded the flat index with the number of layers", judged="named", seen="bcd95992")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[0], best % score.shape[0]


@ans("pw05", E, "wrong", "divmod by a hard-coded 12 (the model's head count)", judged="misnamed", seen="bc366a33")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    return divmod(int(score.argmax()), 12)


@ans("pw06", E, "wrong", "returned the flat index of argmax, not (layer, head)", judged="named", seen="41da9038")
def _(attentions):
    return int(attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).argmax())


@ans("pw07", E, "wrong", "1-based layer and head (L1 H1 is the first head)", judged="misnamed", seen="7a1bc707", other={"9a44c36d": "misnamed"})
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1] + 1, best % score.shape[1] + 1


@ans("pw08", E, "wrong", "returned (head, layer): the order swapped", judged="named", seen="1b45b28b")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best % score.shape[1], best // score.shape[1]


@ans("pw09", E, "wrong", "argmin instead of argmax", judged="named", seen="634c399d")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmin())
    return best // score.shape[1], best % score.shape[1]


@ans("pw10", E, "wrong", "scored the first column (attention on <bos>) instead of the word before", judged="named", seen="842d5dd4")
def _(attentions):
    score = attentions[..., 1:, 0].mean(-1)
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw11", E, "wrong", "diagonal(offset=-1) without dim1/dim2: takes the diagonal of the layers × heads axes", judged="misnamed", seen="03734779")
def _(attentions):
    score = attentions.diagonal(offset=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw12", E, "wrong", "summed everything below the diagonal, not only the word just before", judged="named", seen="aa0cd2f7")
def _(attentions):
    T = attentions.shape[-1]
    below = np.tril(np.ones((T, T)), -1)
    score = (attentions.numpy() * below).sum((-2, -1))
    l, h = np.unravel_index(score.argmax(), score.shape)
    return int(l), int(h)


@ans("pw13", E, "wrong", "used the notebook's full.attentions instead of the argument", judged="named", seen="db3faaed")
def _(attentions):
    score = full.attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)  # noqa: F821
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw14", E, "wrong", "used the notebook's run.attentions ('I like to draw') instead of the argument", judged="named", seen="db3faaed")
def _(attentions):
    score = run.attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)  # noqa: F821
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw15", E, "wrong", "max over the queries instead of the mean", judged="named", seen="c39e3c2b")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).max(-1).values
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw16", E, "wrong", "best layer first (mean over its heads), then the best head in that layer", judged="false pass", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    l = int(score.mean(1).argmax())
    return l, int(score[l].argmax())


@ans("pw17", E, "wrong", "dim1 and dim2 swapped: diagonal(-1, dim1=-1, dim2=-2) is above the diagonal", judged="named", seen="03734779")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-1, dim2=-2).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1], best % score.shape[1]


@ans("pw18", E, "wrong", "two slips: offset 0 and 1-based layer and head", judged="misnamed", seen="c38f1cd5", other={"16f71ef8": "misnamed"})
def _(attentions):
    score = attentions.diagonal(offset=0, dim1=-2, dim2=-1).mean(-1)
    best = int(score.argmax())
    return best // score.shape[1] + 1, best % score.shape[1] + 1


@ans("pw19", E, "wrong", "best layer and best head separately, by their max instead of the mean", judged="false pass", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    return int(score.max(1).values.argmax()), int(score.max(0).values.argmax())


@ans("pw20", E, "wrong", "np.unravel_index with a hard-coded (12, 12)", judged="misnamed", seen="bc366a33")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    l, h = np.unravel_index(int(score.argmax()), (12, 12))
    return int(l), int(h)


@ans("pw-ok1", E, "ok", "np.unravel_index on the score table", judged="accepted", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).numpy()
    l, h = np.unravel_index(score.argmax(), score.shape)
    return int(l), int(h)


@ans("pw-ok2", E, "ok", "plain loops over layers, heads and queries", judged="accepted", seen="e79de8e9")
def _(attentions):
    L, Hn, T, _ = attentions.shape
    best, where = -1.0, None
    for l in range(L):
        for h in range(Hn):
            s = sum(float(attentions[l, h, t, t - 1]) for t in range(1, T)) / (T - 1)
            if s > best:
                best, where = s, (l, h)
    return where


@ans("pw-ok3", E, "ok", "the sum below the diagonal instead of the mean (same ranking), divmod", judged="accepted", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1)
    return divmod(int(score.argmax()), score.shape[1])


@ans("pw-ok4", E, "ok", "best layer by its best head's score, then that head (the global best)", judged="accepted", seen="e79de8e9")
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    l = int(score.max(1).values.argmax())
    return l, int(score[l].argmax())


add("pw-ok5", E, "ok", "H.previous_token_scores and H.ranked_heads from the notebook",
    lambda attentions: H.ranked_heads(H.previous_token_scores(attentions), k=1)[0][0], judged="accepted", seen="e79de8e9")


@ans("pw-ok6", E, "ok", "numpy float64, index arrays for the cells below the diagonal", judged="accepted", seen="e79de8e9")
def _(attentions):
    a = attentions.numpy().astype(np.float64)
    T = a.shape[-1]
    score = a[..., np.arange(1, T), np.arange(T - 1)].mean(-1)
    l, h = np.argwhere(score == score.max())[0]
    return int(l), int(h)


add("pw21", E, "wrong", "divmod() on the tensor argmax (divmod does not take a tensor)",
    lambda attentions: divmod(attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).argmax(), attentions.shape[1]), judged="generic", seen="d7c4f5d4")


@ans("pw-ok7", E, "ok", "returns the layer and head as 0-d tensors (// and % on the tensor argmax), not ints", judged="refused", seen="52348a26", other={"e79de8e9": "accepted"})
def _(attentions):
    score = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)
    best = score.argmax()
    return best // score.shape[1], best % score.shape[1]


# ================================================================== 05 · predict_induction(tokens)
E = "predict_induction"


def _pi(shift=1, which="last", fallback=0, include_self=False, bos_every_row=False, transposed=False):
    def predict_induction(tokens):
        T = len(tokens)
        p = np.zeros((T, T))
        for q in range(T):
            earlier = [k for k in range(q + 1 if include_self else q) if tokens[k] == tokens[q]]
            if earlier:
                k = earlier[-1] if which == "last" else earlier[0]
                if which == "all":
                    for k in earlier:
                        if k + shift < T:
                            p[q, k + shift] = 1
                elif k + shift < T:
                    p[q, k + shift] = 1
            elif fallback is not None:
                p[q, q if fallback == "self" else fallback] = 1
            if bos_every_row:
                p[q, 0] = 1
        return p.T if transposed else p
    return predict_induction


add("pi01", E, "wrong", "put the 1 on the earlier copy itself, not the word after it", _pi(shift=0), judged="named", seen="c08f1e93")
add("pi02", E, "wrong", "used the first copy (tokens.index) instead of the latest one", _pi(which="first"), judged="named", seen="e6913e55")
add("pi03", E, "wrong", "the word before the earlier copy", _pi(shift=-1), judged="named", seen="29bcbff7")
add("pi04", E, "outside", "no 1 at all for a word seen for the first time", _pi(fallback=None), judged="passed", seen="38ec3723")
add("pi05", E, "outside", "a first-time word gets its 1 on itself", _pi(fallback="self"), judged="passed", seen="38ec3723")
add("pi06", E, "wrong", "gave <bos> a 1 in every row, besides the induction 1", _pi(bos_every_row=True), judged="generic", seen="01ad1bd8")
add("pi07", E, "wrong", "a 1 after every earlier copy, not only the latest", _pi(which="all"), judged="false pass", seen="38ec3723")
add("pi08", E, "wrong", "searched up to and including the query itself (range(q + 1)): points at the next word",
    _pi(include_self=True), judged="named", seen="72583aa9")


@ans("pi09", E, "wrong", "array sized with the notebook's T (5) instead of len(tokens)", judged="generic", seen="36cfc4be")
def _(tokens):
    p = np.zeros((T, T))  # noqa: F821 (the notebook's T = 5)
    for q in range(len(tokens)):
        earlier = [k for k in range(q) if tokens[k] == tokens[q]]
        p[q, earlier[-1] + 1 if earlier else 0] = 1
    return p


@ans("pi10", E, "wrong", "used the notebook's repeat.tokens instead of the argument tokens", judged="named", seen="cb9f8923")
def _(tokens):
    words = repeat.tokens  # noqa: F821
    T = len(words)
    p = np.zeros((T, T))
    for q in range(T):
        earlier = [k for k in range(q) if words[k] == words[q]]
        p[q, earlier[-1] + 1 if earlier else 0] = 1
    return p


add("pi11", E, "wrong", "transposed: columns are the queries", _pi(transposed=True), judged="named", seen="8c36822b")
add("pi12", E, "wrong", "two words after the earlier copy (+2)", _pi(shift=2), judged="named", seen="354b48cf")
add("pi13", E, "outside", "a first-time word's 1 on position 1 (the first real word) instead of position 0", _pi(fallback=1), judged="passed", seen="38ec3723")
add("pi14", E, "wrong", "two slips: on the earlier copy itself and nothing for first-time words",
    _pi(shift=0, fallback=None), judged="named", seen="c08f1e93")


@ans("pi15", E, "wrong", "returned the list of key positions, not a (T, T) array", judged="generic", seen="f908de70")
def _(tokens):
    keys = []
    for q in range(len(tokens)):
        earlier = [k for k in range(q) if tokens[k] == tokens[q]]
        keys.append(earlier[-1] + 1 if earlier else 0)
    return keys


add("pi16", E, "wrong", "two slips: the first copy and transposed", _pi(which="first", transposed=True), judged="misnamed", seen="25b2e212", other={"17d757a2": "misnamed"})


@ans("pi17", E, "wrong", "compared each word with the word before it instead of with every earlier word", judged="generic", seen="01ad1bd8")
def _(tokens):
    T = len(tokens)
    p = np.zeros((T, T))
    for q in range(T):
        p[q, q + 1 if 0 < q < T - 1 and tokens[q - 1] == tokens[q] else 0] = 1
    return p


@ans("pi-ok1", E, "ok", "a dict of each word's latest position, one pass", judged="accepted", seen="38ec3723")
def _(tokens):
    T = len(tokens)
    p = np.zeros((T, T))
    last = {}
    for q, w in enumerate(tokens):
        p[q, last[w] + 1 if w in last else 0] = 1
        last[w] = q
    return p


@ans("pi-ok2", E, "ok", "plain lists of ints, searching backwards", judged="accepted", seen="38ec3723")
def _(tokens):
    T = len(tokens)
    p = [[0] * T for _ in range(T)]
    for q in range(T):
        k = q - 1
        while k >= 0 and tokens[k] != tokens[q]:
            k -= 1
        p[q][k + 1 if k >= 0 else 0] = 1
    return p


@ans("pi-ok3", E, "ok", "numpy boolean table of equal earlier words, last match per row", judged="accepted", seen="38ec3723")
def _(tokens):
    t = np.array(tokens)
    T = len(t)
    same = (t[:, None] == t[None, :]) & np.tri(T, k=-1, dtype=bool)
    p = np.zeros((T, T), dtype=np.float64)
    for q in range(T):
        ks = np.flatnonzero(same[q])
        p[q, ks[-1] + 1 if len(ks) else 0] = 1.0
    return p


@ans("pi-ok4", E, "ok", "rfind-style search with tokens[:q][::-1].index", judged="accepted", seen="38ec3723")
def _(tokens):
    T = len(tokens)
    out = np.zeros((T, T), dtype=int)
    for q in range(T):
        before = tokens[:q]
        if tokens[q] in before:
            out[q, q - before[::-1].index(tokens[q])] = 1  # q - 1 - j is the copy; +1 is the word after
        else:
            out[q, 0] = 1
    return out


# ================================================================== 06 · my_prediction()
E = "knockout"
add("ko01", E, "wrong", "wrote a percentage (80) instead of a fraction", lambda: 80, judged="named", seen="6573ac43")
add("ko02", E, "wrong", "wrote it as text '80%'", lambda: "80%", judged="named", seen="0046e5ac")
add("ko03", E, "wrong", "wrote the fraction as text '0.8'", lambda: "0.8", judged="named", seen="32b1a209")
add("ko04", E, "wrong", "predicted the drop (0.16) instead of the accuracy that remains", lambda: 0.16, judged="named", seen="67c276d7")


@ans("ko05", E, "wrong", "printed the guess instead of returning it", judged="named", seen="983c778f")
def _():
    print(0.8)


add("ko06", E, "wrong", "gave the function a parameter it is never called with", lambda model: 0.8, judged="generic", seen="16f51a8d")
add("ko07", E, "wrong", "returned both numbers (with, without L0 H9)", lambda: (1.0, 0.8), judged="named", seen="8efad05d")
add("ko08", E, "wrong", "a list [0.8]", lambda: [0.8], judged="named", seen="810b37f1")
add("ko09", E, "wrong", "the drop as a percentage (16)", lambda: 16, judged="named", seen="43e1b765")

add("ko-ok1", E, "ok", "0.85", lambda: 0.85, judged="accepted", seen="868c1233")
add("ko-ok2", E, "ok", "4 / 5 written as a division", lambda: 4 / 5, judged="accepted", seen="c42964b1")
add("ko-ok3", E, "ok", "a numpy float64", lambda: np.float64(0.8), judged="refused", seen="ccc7da7e", other={"c42964b1": "accepted"})
add("ko10", E, "wrong", "predicted 0.3: expected L0 H9 to matter far more than it does", lambda: 0.3, judged="named", seen="ef45995c")


# ================================================================== 07 · kv_cache_bytes(config, n_tokens)
E = "kv_cache"


def _kv(kv="kv", two=2, bytes_=2, layers=True, tokens=True, head="attn", divide=1, minus=0):
    def kv_cache_bytes(config, n_tokens):
        L = config["num_hidden_layers"] if layers else 1
        heads = {"kv": config["num_key_value_heads"], "attn": config["num_attention_heads"]}[kv]
        d = config["hidden_size"] // {"attn": config["num_attention_heads"], "kv": config["num_key_value_heads"]}[head]
        n = (n_tokens - minus) if tokens else 1
        return two * L * heads * d * bytes_ * n // divide
    return kv_cache_bytes


add("kv01", E, "wrong", "forgot the 2 for a key AND a value", _kv(two=1), judged="named", seen="d412a059")
add("kv02", E, "wrong", "forgot the 2 bytes per number", _kv(bytes_=1), judged="named", seen="d412a059")
add("kv03", E, "wrong", "num_attention_heads instead of num_key_value_heads", _kv(kv="attn"), judged="named", seen="76dccb14")
add("kv04", E, "wrong", "bytes per token only: forgot to multiply by n_tokens", _kv(tokens=False), judged="named", seen="a6de045c")
add("kv05", E, "wrong", "forgot the layers", _kv(layers=False), judged="named", seen="4f3513f2")
add("kv06", E, "wrong", "head size as hidden_size // num_key_value_heads", _kv(head="kv"), judged="named", seen="76dccb14")


@ans("kv07", E, "wrong", "hidden_size in place of key/value heads × head size (every head's keys)", judged="named", seen="76dccb14")
def _(config, n_tokens):
    return 2 * config["num_hidden_layers"] * config["hidden_size"] * 2 * n_tokens


add("kv08", E, "wrong", "4 bytes per number (32-bit) instead of 2", _kv(bytes_=4), judged="named", seen="55da5365")
add("kv09", E, "wrong", "returned KiB (divided by 1024)", _kv(divide=1024), judged="named", seen="89563c87")
add("kv10", E, "wrong", "16 per number: bits instead of bytes", _kv(bytes_=16), judged="named", seen="00317097")


@ans("kv11", E, "wrong", "hard-coded the 8,000 tokens of the table instead of n_tokens", judged="named", seen="d2915ace")
def _(config, n_tokens):
    d = config["hidden_size"] // config["num_attention_heads"]
    return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * d * 2 * 8000


add("kv12", E, "wrong", "two slips: attention heads for key/value heads and no 2 for K and V", _kv(kv="attn", two=1), judged="misnamed", seen="4c1342e1", other={"b3781ac1": "misnamed"})


@ans("kv13", E, "wrong", "config.num_hidden_layers (attribute) on a dict", judged="generic", seen="318d37f4")
def _(config, n_tokens):
    d = config.hidden_size // config.num_attention_heads
    return 2 * config.num_hidden_layers * config.num_key_value_heads * d * 2 * n_tokens


add("kv14", E, "wrong", "n_tokens - 1 (thought the newest token is not cached)", _kv(minus=1), judged="generic", seen="76453d81")
add("kv15", E, "wrong", "two slips: no layers and no bytes per number", _kv(layers=False, bytes_=1), judged="generic", seen="76453d81")


@ans("kv16", E, "wrong", "hard-coded GPT-2 small's numbers (12 layers, 12 heads of 64)", judged="generic", seen="76453d81")
def _(config, n_tokens):
    return 2 * 12 * 12 * 64 * 2 * n_tokens


add("kv-ok1", E, "ok", "a float head size hidden_size / num_attention_heads (product is a float of the right value)",
    lambda config, n_tokens: 2 * config["num_hidden_layers"] * config["num_key_value_heads"]
    * (config["hidden_size"] / config["num_attention_heads"]) * 2 * n_tokens, judged="accepted", seen="a25bcfa1")


@ans("kv-ok2", E, "ok", "math.prod of the factors", judged="accepted", seen="a25bcfa1")
def _(config, n_tokens):
    import math
    head = config["hidden_size"] // config["num_attention_heads"]
    return math.prod([2, config["num_hidden_layers"], config["num_key_value_heads"], head, 2, n_tokens])


@ans("kv-ok3", E, "ok", "bytes per token first, then × n_tokens, with named parts", judged="accepted", seen="a25bcfa1")
def _(config, n_tokens):
    per_token = 4 * config["num_hidden_layers"] * config["num_key_value_heads"] * (
        config["hidden_size"] // config["num_attention_heads"])
    return per_token * n_tokens


add("kv-ok4", E, "ok", "int() around a float computation",
    lambda config, n_tokens: int(4.0 * config["num_hidden_layers"] * config["num_key_value_heads"]
                                 * config["hidden_size"] / config["num_attention_heads"] * n_tokens), judged="accepted", seen="a25bcfa1")


# ================================================================== 07 · grouped_attention(Q, K, V)
E = "grouped_attention"


def _ga(expand="interleave", scale=True, mask="-inf", dim=-1):
    def grouped_attention(Q, K, V):
        Hq, T, d = Q.shape
        g = Hq // K.shape[0]
        if expand == "interleave":
            K, V = K.repeat_interleave(g, dim=0), V.repeat_interleave(g, dim=0)
        elif expand == "repeat":
            K, V = K.repeat(g, 1, 1), V.repeat(g, 1, 1)
        elif expand == "by_kv":
            K, V = K.repeat_interleave(K.shape[0], dim=0), V.repeat_interleave(V.shape[0], dim=0)
        elif expand == "first":
            K, V = K[0], V[0]
        elif expand == "mean":
            K, V = K.mean(0), V.mean(0)
        s = Q @ K.transpose(-2, -1)
        if scale:
            s = s / d ** 0.5
        fill = {"-inf": float("-inf"), "diag": float("-inf"), "0": 0.0}
        if mask in fill:
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(0 if mask == "diag" else 1), fill[mask])
        return s.softmax(dim=dim) @ V
    return grouped_attention


add("ga01", E, "wrong", ".repeat instead of repeat_interleave (query head h reads key/value head h % H_kv)",
    _ga(expand="repeat"), judged="named", seen="ae19c5fc")
add("ga02", E, "wrong", "repeat_interleave by the number of key/value heads instead of the group size", _ga(expand="by_kv"), judged="misnamed", seen="4851ff4f")
add("ga03", E, "wrong", "every query head reads key/value head 0", _ga(expand="first"), judged="generic", seen="746472c8")
add("ga04", E, "wrong", "averaged the key/value heads into one", _ga(expand="mean"), judged="generic", seen="bf248696")
add("ga05", E, "wrong", "forgot the causal mask", _ga(mask="none"), judged="named", seen="c1a48701")
add("ga06", E, "wrong", "forgot to divide by √d", _ga(scale=False), judged="named", seen="0f66a274")


@ans("ga07", E, "wrong", "g = H // K.shape[0] with the prose's H (H is the helpers module in the notebook)", judged="named", seen="0b068550", other={"351008fc": "generic"})
def _(Q, K, V):
    T, d = Q.shape[1], Q.shape[2]
    g = H // K.shape[0]
    K, V = K.repeat_interleave(g, dim=0), V.repeat_interleave(g, dim=0)
    s = (Q @ K.transpose(-2, -1) / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ V


@ans("ga08", E, "wrong", "loop: query head h reads K[h // H_kv] (divided by the number of kv heads, not the group size)", judged="named", seen="2bc3fd0d")
def _(Q, K, V):
    Hq, T, d = Q.shape
    outs = []
    for h in range(Hq):
        kv = h // K.shape[0]
        s = (Q[h] @ K[kv].T / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        outs.append(s.softmax(-1) @ V[kv])
    return torch.stack(outs)


@ans("ga09", E, "wrong", "loop: query head h reads K[h % H_kv]", judged="named", seen="ae19c5fc")
def _(Q, K, V):
    Hq, T, d = Q.shape
    outs = []
    for h in range(Hq):
        kv = h % K.shape[0]
        s = (Q[h] @ K[kv].T / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        outs.append(s.softmax(-1) @ V[kv])
    return torch.stack(outs)


add("ga10", E, "wrong", "masked with 0 instead of -inf", _ga(mask="0"), judged="named", seen="96c61b1f")


@ans("ga11", E, "wrong", "K.T on the 3-D keys (reverses every axis)", judged="misnamed", seen="44d9435e")
def _(Q, K, V):
    Hq, T, d = Q.shape
    g = Hq // K.shape[0]
    K, V = K.repeat_interleave(g, 0), V.repeat_interleave(g, 0)
    s = (Q @ K.T / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ V


add("ga12", E, "wrong", "softmax over dim 1 (the queries of a [H × T × T] table)", _ga(dim=1), judged="named", seen="ef0b2d47")


@ans("ga13", E, "wrong", "grouped the query heads as Q.view(g, H_kv, T, d): head h reads kv head h % H_kv", judged="named", seen="ae19c5fc")
def _(Q, K, V):
    Hq, T, d = Q.shape
    Hkv = K.shape[0]
    q = Q.view(Hq // Hkv, Hkv, T, d)
    s = (q @ K.transpose(-2, -1) / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return (s.softmax(-1) @ V).reshape(Hq, T, d)


add("ga14", E, "wrong", "two slips: no ÷ √d and .repeat instead of repeat_interleave", _ga(expand="repeat", scale=False), judged="generic", seen="3c9edab2")
add("ga15", E, "wrong", "triu(0): masked the diagonal too", _ga(mask="diag"), judged="named", seen="763c7d57")


@ans("ga16", E, "wrong", "divided by √T instead of √d", judged="generic", seen="76a49700")
def _(Q, K, V):
    Hq, T, d = Q.shape
    g = Hq // K.shape[0]
    K, V = K.repeat_interleave(g, 0), V.repeat_interleave(g, 0)
    s = (Q @ K.transpose(-2, -1) / T ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ V


@ans("ga17", E, "wrong", "averaged the outputs of each group: returns [H_kv × T × d]", judged="generic", seen="a3d627d5")
def _(Q, K, V):
    Hq, T, d = Q.shape
    Hkv = K.shape[0]
    q = Q.view(Hkv, Hq // Hkv, T, d)
    s = (q @ K[:, None].transpose(-2, -1) / d ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1),
                                                                  float("-inf"))
    return (s.softmax(-1) @ V[:, None]).mean(1)


@ans("ga18", E, "wrong", "two slips: every query head reads kv head 0 and no mask", judged="generic", seen="0d66b38b")
def _(Q, K, V):
    d = Q.shape[-1]
    return (Q @ K[0].T / d ** 0.5).softmax(-1) @ V[0]


add("ga-ok1", E, "ok", "the solution's steps (repeat_interleave by H // H_kv)", _ga(), judged="accepted", seen="c675de38")


@ans("ga-ok2", E, "ok", "index with torch.arange(H) // group", judged="accepted", seen="c675de38")
def _(Q, K, V):
    Hq, T, d = Q.shape
    idx = torch.arange(Hq) // (Hq // K.shape[0])
    s = Q @ K[idx].transpose(1, 2) / d ** 0.5  # transpose(1, 2) is the last two axes of a 3-D tensor
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ V[idx]


@ans("ga-ok3", E, "ok", "a loop over the query heads, 2-D attention per head", judged="accepted", seen="c675de38")
def _(Q, K, V):
    Hq, T, d = Q.shape
    g = Hq // K.shape[0]
    outs = []
    for h in range(Hq):
        s = Q[h] @ K[h // g].T / d ** 0.5
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        outs.append(torch.softmax(s, -1) @ V[h // g])
    return torch.stack(outs)


@ans("ga-ok4", E, "ok", "groups kept as an axis: Q.view(H_kv, g, T, d), einsum, no copies of K and V", judged="accepted", seen="c675de38")
def _(Q, K, V):
    Hq, T, d = Q.shape
    Hkv = K.shape[0]
    q = Q.view(Hkv, Hq // Hkv, T, d)
    s = torch.einsum("kgtd,ksd->kgts", q, K) / d ** 0.5
    s = s + torch.full((T, T), float("-inf")).triu(1)
    return torch.einsum("kgts,ksd->kgtd", s.softmax(-1), V).reshape(Hq, T, d)


@ans("ga-ok5", E, "ok", "expand + reshape, then scaled_dot_product_attention(is_causal=True)", judged="accepted", seen="c675de38")
def _(Q, K, V):
    Hq, T, d = Q.shape
    Hkv = K.shape[0]
    K = K[:, None].expand(Hkv, Hq // Hkv, T, d).reshape(Hq, T, d)
    V = V[:, None].expand(Hkv, Hq // Hkv, T, d).reshape(Hq, T, d)
    return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)


@ans("ga-ok6", E, "ok", "float64 throughout, -1e9 mask (returns float64)", judged="accepted", seen="c675de38")
def _(Q, K, V):
    Q, K, V = Q.double(), K.double(), V.double()
    Hq, T, d = Q.shape
    g = Hq // K.shape[0]
    s = Q @ K.repeat_interleave(g, 0).mT / d ** 0.5
    s = s.masked_fill(torch.ones(T, T).triu(1).bool(), -1e9)
    return s.softmax(-1) @ V.repeat_interleave(g, 0)


@ans("ga-ok7", E, "ok", "names the head count `H` locally (shadowing the helpers inside the function)", judged="accepted", seen="c675de38")
def _(Q, K, V):
    H, T, d = Q.shape
    group = H // K.shape[0]
    K, V = K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return (Q @ K.transpose(-2, -1) / d ** 0.5).masked_fill(future, float("-inf")).softmax(dim=-1) @ V


# ================================================================== the expected verdicts (issue 30's audit)
# Each wrong answer's expected verdict, judged by reading its line after the round-4 work: the code a named
# answer must get ("code#hash" where several lines share a code), "generic" for an honest unnamed line. These
# were judged on this very set, after tuning the checks on it: from here on it is no longer a blind set.
AUDITED = {  # entries written as wrong that the audit found right
    "pw19": "the layer with the largest max over its heads holds the table's largest cell, and so does the head "
            "with the largest max over the layers: the two maxima always meet at the best cell",
    "pi07": "notebook 05 asks for 'the word that came after the earlier copy' without saying which copy when "
            "there are several; the check accepts a 1 after every earlier copy on purpose (_right_targets)",
}
EXPECTED = {
    'aw01': 'attention_weights.no_scale',
    'aw02': 'attention_weights.divided_by_d',
    'aw03': 'attention_weights.sqrt_of_T',
    'aw04': 'attention_weights.softmax_axis',
    'aw05': 'attention_weights.queries_keys_swapped',
    'aw06': 'attention_weights.no_transpose',
    'aw07': 'attention_weights.fixed_divisor_sqrt768',
    'aw08': 'attention_weights.times_sqrt_d',
    'aw09': 'attention_weights.no_softmax',
    'aw10': 'attention_weights.scaled_after_softmax',
    'aw11': 'attention_weights.softmax_whole_matrix',
    'aw12': 'attention_weights.two_slips.no_scale+softmax_axis',
    'aw13': 'attention_weights.notebook_global',
    'aw14': 'attention_weights.sigmoid',
    'aw15': 'attention_weights.masked_future',
    'aw16': 'attention_weights.two_slips.queries_keys_swapped+divided_by_d',
    'aw17': 'attention_weights.log_softmax',
    'aw18': 'attention_weights.one_score_per_word',
    'aw19': 'attention_weights.fixed_divisor_sqrt768',
    'aw20': 'attention_weights.error.torch_fn_on_number',
    'aw21': 'attention_weights.fitted_divisor',
    'mw01': 'masked_weights.no_mask',
    'mw02': 'masked_weights.fill_zero',
    'mw03': 'masked_weights.fill_minus_10',
    'mw04': 'masked_weights.masked_after_softmax',
    'mw05': 'masked_weights.minus_inf_after_softmax',
    'mw06': 'masked_weights.wrong_triangle',
    'mw07': 'masked_weights.masked_diagonal',
    'mw08': 'masked_weights.fixed_mask_size',
    'mw09': 'masked_weights.softmax_axis',
    'mw10': 'masked_weights.error.mask_not_bool',
    'mw11': 'masked_weights.no_softmax',
    'mw12': 'masked_weights.fill_zero',
    'mw13': 'masked_weights.fill_zero',
    'mw14': 'masked_weights.scaled_again',
    'mw15': 'masked_weights.two_slips.fill_zero+softmax_axis',
    'mw16': 'masked_weights.where_swapped',
    'mw17': 'masked_weights.two_slips.wrong_triangle+fill_zero',
    'mw18': 'masked_weights.plus_inf',
    'mw19': 'masked_weights.fixed_mask_size',
    'mw20': 'masked_weights.fill_minus_one',
    'ws01': 'weighted_sum.values_first',
    'ws02': 'weighted_sum.weights_transposed',
    'ws03': 'weighted_sum.elementwise',
    'ws04': 'weighted_sum.notebook_global',
    'ws05': 'weighted_sum.summed_over_words',
    'ws06': 'weighted_sum.divided_by_T',
    'ws07': 'weighted_sum.returned_values',
    'ws08': 'weighted_sum.softmax_again',
    'ws09': 'weighted_sum.loop_stops_early',
    'ws10': 'weighted_sum.notebook_global',
    'ws11': 'weighted_sum.values_transposed_first',
    'ws12': 'weighted_sum.values_transposed',
    'ws13': 'weighted_sum.loop_1_to_T',
    'ws14': 'weighted_sum.weights_transposed',
    'ws15': 'weighted_sum.two_slips.weights_transposed+divided_by_T',
    'ws16': 'weighted_sum.notebook_global',
    'ws17': 'weighted_sum.one_word_only',
    'ws18': 'weighted_sum.weights_transposed',
    'oh01': 'one_head.no_scale',
    'oh02': 'one_head.sqrt_of_width',
    'oh03': 'one_head.notebook_global',
    'oh04': 'one_head.notebook_global',
    'oh05': 'one_head.returned_weights',
    'oh06': 'one_head.softmax_axis',
    'oh07': 'one_head.keys_values_swapped',
    'oh08': 'one_head.all_from_wq',
    'oh09': 'one_head.masked_future',
    'oh10': 'one_head.weights_first',
    'oh11': 'one_head.sqrt_of_T',
    'oh12': 'one_head.fixed_divisor_8',
    'oh13': 'one_head.divided_by_d',
    'oh14': 'one_head.two_slips.no_scale+keys_values_swapped',
    'oh15': 'one_head.notebook_global',
    'oh16': 'one_head.queries_keys_swapped',
    'oh17': 'one_head.no_softmax',
    'oh18': 'one_head.two_slips.sqrt_of_width+softmax_axis',
    'oh19': 'one_head.notebook_global',
    'oh20': 'one_head.sqrt_of_width',
    'sh01': 'split_heads.reshape_without_transpose',
    'sh02': 'split_heads.head_axis_not_first',
    'sh03': 'split_heads.not_stacked',
    'sh04': 'split_heads.not_stacked',
    'sh05': 'split_heads.notebook_global',
    'sh06': 'split_heads.slice_one_short',
    'sh07': 'split_heads.interleaved',
    'sh08': 'split_heads.axes_1_2_swapped',
    'sh09': 'split_heads.transposed_then_reshaped',
    'sh10': 'split_heads.axes_0_2_swapped',
    'sh11': 'split_heads.heads_from_1',
    'sh12': 'split_heads.count_and_size_swapped',
    'sh13': 'split_heads.cat_not_stack',
    'sh14': 'split_heads.notebook_global',
    'sh15': 'split_heads.notebook_global',
    'sh16': 'split_heads.split_words',
    'sh17': 'split_heads.size_from_words',
    'sh18': 'split_heads.reshape_without_transpose',
    'mh01': 'merge_heads.reshape_without_transpose',
    'mh02': 'merge_heads.stacked_as_rows',
    'mh03': 'merge_heads.not_flattened',
    'mh04': 'merge_heads.transpose_1_2',
    'mh05': 'merge_heads.summed_heads',
    'mh06': 'merge_heads.averaged_heads',
    'mh07': 'merge_heads.error.reshape_size',
    'mh08': 'merge_heads.interleaved',
    'mh09': 'merge_heads.head_0_left_out',
    'mh10': 'merge_heads.permute_210',
    'mh11': 'merge_heads.not_flattened',
    'mh12': 'merge_heads.two_slips.head_0_left_out+stacked_as_rows',
    'mh13': 'merge_heads.notebook_global',
    'mh14': 'merge_heads.permute_210',
    'mh15': 'merge_heads.stacked_as_rows',
    'mh16': 'merge_heads.reverse_order',
    'rc01': 'recombine.averaged_heads',
    'rc02': 'recombine.not_summed',
    'rc03': 'recombine.notebook_global',
    'rc04': 'recombine.merge_without_transpose',
    'rc05': 'recombine.summed_before_projection',
    'rc06': 'recombine.summed_over_words',
    'rc07': 'recombine.w_o_first',
    'rc08': 'recombine.blocks_transposed',
    'rc09': 'recombine.blocks_interleaved',
    'rc10': 'recombine.loop_skips_last',
    'rc11': 'recombine.loop_overwrites',
    'rc12': 'recombine.head_0_only',
    'rc13': 'recombine.two_slips.loop_from_1+averaged',
    'rc14': 'recombine.summed_over_words',
    'rc15': 'recombine.cat_along_words',
    'rc16': 'recombine.error.reshape_size',
    'mm01': 'multihead_capstone.no_mask',
    'mm02': 'multihead_capstone.no_scale',
    'mm03': 'multihead_capstone.sqrt_of_dim',
    'mm04': 'multihead_capstone.fill_zero',
    'mm05': 'multihead_capstone.fill_minus_10',
    'mm06': 'multihead_capstone.error.size_mismatch',
    'mm07': 'multihead_capstone.error.size_mismatch',
    'mm08': 'multihead_capstone.merge_without_transpose',
    'mm09': 'multihead_capstone.no_output_projection',
    'mm10': 'multihead_capstone.output_projection_twice',
    'mm11': 'multihead_capstone.residual_added',
    'mm12': 'multihead_capstone.no_out_bias',
    'mm13': 'multihead_capstone.fixed_mask_size',
    'mm14': 'multihead_capstone.mask_from_batch',
    'mm15': 'multihead_capstone.error.size_mismatch',
    'mm16': 'multihead_capstone.split_without_transpose',
    'mm17': 'multihead_capstone.order_kqv',
    'mm18': 'multihead_capstone.order_qvk',
    'mm19': 'multihead_capstone.softmax_axis',
    'mm20': 'multihead_capstone.masked_after_softmax',
    'mm21': 'multihead_capstone.masked_diagonal',
    'mm22': 'multihead_capstone.notebook_global',
    'mm23': 'multihead_capstone.two_slips.no_output_projection+no_scale',
    'mm24': 'multihead_capstone.two_slips.merge_without_transpose+residual_added',
    'mm25': 'multihead_capstone.error.mask_not_bool',
    'mm26': 'multihead_capstone.tril_mask',
    'mm27': 'multihead_capstone.sqrt_of_heads',
    'mm28': 'multihead_capstone.chunked_words',
    'mm29': 'multihead_capstone.split_interleaved',
    'mm30': 'multihead_capstone.minus_inf_after_softmax',
    'mm31': 'multihead_capstone.two_slips.sqrt_of_dim+mask_from_batch',
    'mm32': 'multihead_capstone.no_qkv_bias',
    'cs01': 'concat_shape.one_head',
    'cs02': 'concat_shape.stacked_heads_first',
    'cs03': 'concat_shape.rows_columns_swapped',
    'cs04': 'concat_shape.heads_as_rows',
    'cs05': 'concat_shape.notebook_global',
    'cs06': 'concat_shape.token_too_many',
    'cs07': 'concat_shape.width_times_heads',
    'cs08': 'concat_shape.attention_map',
    'cs09': 'concat_shape.notebook_global',
    'cs10': 'concat_shape.numbers_differ',
    'cs11': 'concat_shape.printed_not_returned',
    'cs12': 'concat_shape.two_slips.token_too_many+one_head',
    'cs13': 'concat_shape.token_too_few',
    'cs14': 'concat_shape.two_slips.rows_columns_swapped+one_head',
    'cs15': 'concat_shape.notebook_global',
    'hp01': 'head_size_and_params.no_biases',
    'hp02': 'head_size_and_params.no_output_bias',
    'hp03': 'head_size_and_params.w_o_full_per_head',
    'hp04': 'head_size_and_params.no_w_o_weights',
    'hp05': 'head_size_and_params.one_head_share_plus_bias',
    'hp06': 'head_size_and_params.output_bias_per_head',
    'hp07': 'head_size_and_params.wrong_order',
    'hp08': 'head_size_and_params.qkv_bias_width_per_head',
    'hp09': 'head_size_and_params.numbers_differ',
    'hp10': 'head_size_and_params.notebook_global',
    'hp11': 'head_size_and_params.two_slips.w_o_full_per_head+no_output_bias',
    'hp12': 'head_size_and_params.qkv_full_per_head',
    'hp13': 'head_size_and_params.forgot_three',
    'hp14': 'head_size_and_params.unreadable',
    'hp15': 'head_size_and_params.notebook_global',
    'hp16': 'head_size_and_params.w_o_as_d_by_d',
    'hp17': 'head_size_and_params.two_slips.w_o_as_d_by_d+no_output_bias',
    'hp18': 'head_size_and_params.four_biases',
    'pw01': 'previous_word_head.itself',
    'pw02': 'previous_word_head.offset_plus_1',
    'pw03': 'previous_word_head.layer_and_head_apart',
    'pw04': 'previous_word_head.divmod_by_layers',
    'pw05': 'previous_word_head.divmod_by_fixed_12',
    'pw06': 'previous_word_head.unreadable',
    'pw07': 'previous_word_head.explained#22b13251',  # issue 51: the planted best head puts 0.96, not 1.00
    'pw08': 'previous_word_head.layer_head_swapped',
    'pw09': 'previous_word_head.argmin',
    'pw10': 'previous_word_head.first_token',
    'pw11': 'previous_word_head.offset_plus_1',
    'pw12': 'previous_word_head.all_earlier',
    'pw13': 'previous_word_head.notebook_global',
    'pw14': 'previous_word_head.notebook_global',
    'pw15': 'previous_word_head.max_not_mean',
    'pw16': 'previous_word_head.layer_by_mean_first',
    'pw17': 'previous_word_head.offset_plus_1',
    'pw18': 'generic',
    'pw19': 'right',
    'pw20': 'previous_word_head.divmod_by_fixed_12',
    'pw21': 'previous_word_head.error.divmod_tensor',
    'pi01': 'induction_pattern.duplicate_token',
    'pi02': 'induction_pattern.first_copy',
    'pi03': 'induction_pattern.before_copy',
    'pi06': 'induction_pattern.explained#12038b1b',
    'pi07': 'right',
    'pi08': 'induction_pattern.explained#72583aa9',
    'pi09': 'induction_pattern.notebook_global',
    'pi10': 'induction_pattern.notebook_global',
    'pi11': 'induction_pattern.transposed',
    'pi12': 'induction_pattern.two_past_copy',
    'pi14': 'induction_pattern.duplicate_token',
    'pi15': 'induction_pattern.explained#4ef67ecf',
    'pi16': 'generic',
    'pi17': 'generic',
    'ko01': 'knock_out_prediction.unreadable',
    'ko02': 'knock_out_prediction.unreadable',
    'ko03': 'knock_out_prediction.unreadable',
    'ko04': 'knock_out_prediction.drop_not_accuracy',
    'ko05': 'knock_out_prediction.printed_not_returned',
    'ko06': 'knock_out_prediction.error.extra_parameter',
    'ko07': 'knock_out_prediction.unreadable',
    'ko08': 'knock_out_prediction.unreadable',
    'ko09': 'knock_out_prediction.unreadable',
    'ko10': 'knock_out_prediction.explained#ef45995c',
    'kv01': 'kv_cache_bytes.missing_factor_2',
    'kv02': 'kv_cache_bytes.missing_factor_2',
    'kv03': 'kv_cache_bytes.full_multi_head',
    'kv04': 'kv_cache_bytes.one_token',
    'kv05': 'kv_cache_bytes.one_layer',
    'kv06': 'kv_cache_bytes.full_multi_head',
    'kv07': 'kv_cache_bytes.full_multi_head',
    'kv08': 'kv_cache_bytes.float32',
    'kv09': 'kv_cache_bytes.kib',
    'kv10': 'kv_cache_bytes.bits',
    'kv11': 'kv_cache_bytes.numbers_differ',
    'kv12': 'kv_cache_bytes.two_slips.full_multi_head+missing_factor_2',
    'kv13': 'kv_cache_bytes.error.dict_attribute',
    'kv14': 'kv_cache_bytes.one_token_short',
    'kv15': 'kv_cache_bytes.two_slips.one_layer+no_bytes',
    'kv16': 'kv_cache_bytes.gpt2_numbers',
    'ga01': 'grouped_attention.repeat_not_interleave',
    'ga02': 'grouped_attention.repeat_by_kv_heads',
    'ga03': 'grouped_attention.all_read_head_0',
    'ga04': 'grouped_attention.kv_heads_averaged',
    'ga05': 'grouped_attention.no_mask',
    'ga06': 'grouped_attention.no_scale',
    'ga07': 'grouped_attention.error.helpers_module',
    'ga08': 'grouped_attention.wrong_group_index',
    'ga09': 'grouped_attention.repeat_not_interleave',
    'ga10': 'grouped_attention.fill_zero',
    'ga11': 'grouped_attention.error.size_mismatch',
    'ga12': 'grouped_attention.softmax_axis',
    'ga13': 'grouped_attention.repeat_not_interleave',
    'ga14': 'grouped_attention.two_slips.no_scale+repeat_not_interleave',
    'ga15': 'grouped_attention.masked_diagonal',
    'ga16': 'grouped_attention.sqrt_of_T',
    'ga17': 'grouped_attention.group_outputs_averaged',
    'ga18': 'grouped_attention.two_slips.all_read_head_0+no_mask',
}
RULED = {  # answers whose class a later issue changed: id -> (kind, expected verdict, the ruling)
    "kv-ok1": ("wrong", "kv_cache_bytes.float_size", "issue 51: a float size is refused wherever the notebook asks "
                                                     "for a whole number (07.1 like 04), with its own line"),
}
for _entry in A:
    _entry["expect"] = EXPECTED.get(_entry["id"], "")
    if _entry["id"] in RULED:
        _entry["kind"], _entry["expect"] = RULED[_entry["id"]][:2]
