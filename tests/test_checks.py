"""Each exercise check passes the reference and rejects known wrong answers with the promised message."""

import math

import pytest
import torch

from helpers import attention as A
from helpers import checks as C


def sdpa(Q, K, dim=-1, scaled=True):
    scores = Q @ K.T
    return (scores / math.sqrt(Q.shape[-1]) if scaled else scores).softmax(dim)


REFERENCES = {
    C.check_attention_weights: lambda Q, K: A.softmax_over_keys(A.scale(A.raw_scores(Q, K), Q.shape[-1])),
    C.check_weighted_sum: A.weighted_sum,
    C.check_one_head: lambda X, a, b, c: A.single_head(X, a, b, c).z,
    C.check_split_heads: A.split_heads,
    C.check_merge_heads: A.merge_heads,
    C.check_recombine: lambda z, W_O: (z @ W_O).sum(0),
}

WRONG = [
    (C.check_attention_weights, lambda Q, K: sdpa(Q, K, scaled=False), "forgot the 1/√d scaling"),
    (C.check_attention_weights, lambda Q, K: sdpa(Q, K, dim=0), "softmax over the wrong axis"),
    (C.check_attention_weights, lambda Q, K: sdpa(K, Q), "queries and keys swapped"),
    (C.check_attention_weights, lambda Q, K: Q @ K.T, "raw scores"),
    (C.check_attention_weights, lambda Q, K: Q, "wrong shape"),
    (C.check_weighted_sum, lambda w, V: w.T @ V, "transposed"),
    (C.check_weighted_sum, lambda w, V: V.mean(0, keepdim=True).expand_as(V), "averaged"),
    (C.check_one_head, lambda X, a, b, c: ((X @ a) @ (X @ b).T).softmax(-1) @ (X @ c), "forgot the 1/√d scaling"),
    (C.check_one_head, lambda X, a, b, c: sdpa(X @ a, X @ b, dim=0) @ (X @ c), "softmax over the wrong axis"),
    (C.check_one_head, lambda X, a, b, c: sdpa(X @ b, X @ a) @ (X @ c), "queries and keys swapped"),
    (C.check_one_head, lambda X, a, b, c: sdpa(X @ a, X @ b), "returned the attention weights"),
    (C.check_split_heads, lambda x, n: x.reshape(n, x.shape[0], -1), "heads split in the wrong order"),
    (C.check_split_heads, lambda x, n: x.reshape(x.shape[0], -1, n).permute(2, 0, 1), "heads split in the wrong order"),
    (C.check_split_heads, lambda x, n: x.reshape(x.shape[0], n, -1), "move the head axis first"),
    (C.check_merge_heads, lambda z: z.reshape(z.shape[1], -1), "heads merged in the wrong order"),
    (C.check_merge_heads, lambda z: z.permute(1, 2, 0).reshape(z.shape[1], -1), "heads merged in the wrong order"),
    (C.check_merge_heads, lambda z: z.sum(0), "added the heads"),
    (C.check_recombine, lambda z, W: z @ W, "add them up over the heads"),
    (C.check_recombine, lambda z, W: z[0] @ W[0], "used only head 0"),
    (C.check_recombine, lambda z, W: (z @ W.flip(0)).sum(0), "wrong blocks"),
]


@pytest.mark.parametrize("check", list(REFERENCES), ids=lambda c: c.__name__)
def test_reference_passes(check, capsys):
    assert check(REFERENCES[check]) is True
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize("check, wrong, message", WRONG, ids=[f"{c.__name__}-{m}" for c, _, m in WRONG])
def test_known_mistake_is_named(check, wrong, message, capsys):
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and message in out and out.count("\n") == 1


@pytest.mark.parametrize("check", list(REFERENCES), ids=lambda c: c.__name__)
def test_unattempted_crashing_and_odd_answers_never_raise(check, capsys):
    def unattempted(*args):
        ...

    def crashes(*args):
        raise IndexError("list index out of range")

    assert check(unattempted) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert check(crashes) is False
    assert "raised IndexError: list index out of range" in capsys.readouterr().out
    assert check(lambda *args: "a string") is False
    assert check(lambda *args: torch.zeros(1)) is False
    assert "wrong shape" in capsys.readouterr().out.splitlines()[-1]
    assert check("not a function") is False


def test_right_shape_wrong_numbers_reports_the_difference(capsys):
    assert C.check_weighted_sum(lambda w, V: w @ V + 1) is False
    assert "largest difference 1" in capsys.readouterr().out
