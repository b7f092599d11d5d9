"""The numbers notebook 03's sentences quote, measured on the shipped walkthrough model (tests/claims.py).

"walkthrough-12" (12 heads of 64) reads "I like to draw" as trained; H.head_scaling gives each head's
update length, its block's factor and the row it makes, for draw.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch

import helpers as H
from claims import Claim

NOTEBOOK = "03"


@lru_cache(maxsize=None)
def layer():
    return H.walkthrough_layer("classroom", n_heads=12, sentence="I like to draw").steps()


@lru_cache(maxsize=None)
def scaling() -> dict:
    return {k: v.tolist() for k, v in H.head_scaling(layer(), 3).items()}


def gain(head: int) -> list[float]:
    """How much head `head`'s block lengthens its update, word by word."""
    return (layer().per_head[head].norm(dim=-1) / layer().z[head].norm(dim=-1)).tolist()


def argmax(values):
    return max(range(len(values)), key=values.__getitem__)


def argmin(values):
    return min(range(len(values)), key=values.__getitem__)


def stretched() -> list[float]:
    scale = scaling()["scale"]
    most, least = argmax(scale), argmin(scale)
    return [most, most, scale[most], least, least, scale[least]]


def rows_sentence() -> list[float]:
    s = scaling()
    long, short = argmax(s["contribution"]), argmin(s["contribution"])
    ratio = lambda k: s[k][long] / s[k][short]
    return [long, s["contribution"][long], ratio("contribution"), short, s["contribution"][short],
            ratio("update"), s["update"][long], s["update"][short], ratio("scale"), s["scale"][long], s["scale"][short]]


def lengths() -> list[float]:
    after = layer().out.norm(dim=-1)
    return [float(after.min()), float(after.max())]


def ratio_sentence() -> list[float]:
    ratio = layer().update.norm(dim=-1) / layer().residual.norm(dim=-1)
    return [768, math.sqrt(768), float(ratio.min()), float(ratio.max())]


def cosine_floor() -> list[float]:
    cosine = torch.nn.functional.cosine_similarity(layer().out, layer().update, dim=-1)
    return [math.floor(float(cosine.min()) * 1000) / 1000]


CLAIMS = [
    Claim(r"To \*\*concatenate\*\* them", lambda: [layer().z.shape[0], layer().z.shape[-1], layer().concat.shape[-1]], tol=0),
    # Going further
    Claim(r"So for \*draw\* the blocks do weigh the heads", stretched, tol=0.005),
    Claim(r"The longest row", rows_sentence, tol=0.05),
    Claim(r"a factor is not the head's fixed weight", lambda: [5, gain(5)[3], gain(5)[1]], tol=0.005),
    Claim(r"Read each block as", lambda: [int(torch.linalg.matrix_rank(H.walkthrough_layer(
        "classroom", n_heads=12).W_O[5]))], tol=0),
    Claim(r"Every length jumps from about 1", lengths, tol=0.5),
    Claim(r"so it is .* times as long as the embedding it joins", ratio_sentence, tol=0.5),
    Claim(r"every row's direction is the update's", cosine_floor, tol=0.0001),
]
