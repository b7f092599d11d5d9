"""The numbers notebook 01's sentences quote, measured on the shipped walkthrough models (tests/claims.py).

The one head of 768 ("walkthrough-1") reads "I like to draw" as it was trained (no start token); the
Going further sections quote the same head with a start token, the update's length and the 12-layer model.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache

import torch

import helpers as H
from claims import Claim, notebook_path
from helpers.analysis.recombination import update_ratios

NOTEBOOK = "01"


@lru_cache(maxsize=None)
def one(bos: bool | None = None):
    return H.walkthrough_layer("classroom", n_heads=1, sentence="I like to draw", bos=bos)


def draw_row(bos: bool | None = None) -> dict[str, float]:
    """draw's attention weights in the one head, by token."""
    walk = one(bos)
    return dict(zip(walk.tokens, walk.head(0).weights[-1].tolist()))


def article_weights() -> list[float]:
    """The article's weights as the hand-worked cell writes them (the prose must quote the same ones)."""
    cells = json.loads(notebook_path(NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if c.get("id") == "hand-code")
    assign = next(n for n in ast.parse(source).body if isinstance(n, ast.Assign) and n.targets[0].id == "article")
    return list(ast.literal_eval(assign.value).values())


@lru_cache(maxsize=None)
def lengths() -> dict[str, float]:
    walk = one()
    layer, draw = walk.steps(), len(walk.tokens) - 1
    return {"ratio": float(layer.update[draw].norm() / walk.residual[draw].norm()),
            "cosine": float(torch.nn.functional.cosine_similarity(layer.out[draw], layer.update[draw], dim=0))}


@lru_cache(maxsize=None)
def stream() -> dict[str, float]:
    """The 12-layer classroom model: each attention update over the stream it joins, from layer 1 on."""
    lm = H.load_model("classroom")
    sentence, stories = update_ratios(lm, "I like to draw")[1:], update_ratios(lm)
    later = stories[1:]
    layers = sorted({int(i) + 1 for i in torch.nonzero(torch.as_tensor(later >= 1))[:, 0]})
    return {"sentence max": float(sentence.max()), "stories": stories.shape[1] // 64, "long": int((later >= 1).sum()),
            "updates": later.size, "layers": layers, "max": float(later.max())}


def width() -> float:
    return float(one().d_model)


CLAIMS = [
    Claim(r"Why divide by √", lambda: [width(), width() ** 0.5], tol=0.05),
    Claim(r"^This head gives \*I\*", lambda: [draw_row()["I"], draw_row()["like"]], tol=0.005),
    Claim(r"First by hand, with the article's weights", article_weights, tol=0.0),
    Claim(r"The one head gives \*I\*, the word that decides", lambda: [draw_row()["I"]], tol=0.005),
    # Going further
    Claim(r"Add `bos=True`", lambda: [draw_row(True)[w] for w in ("I", "<bos>", "like")], tol=0.005),
    Claim(r"LayerNorm first rescales every row to a length of about", lambda: [width(), width() ** 0.5], tol=0.05),
    Claim(r"the direction of a sum follows its longer part", lambda: [lengths()["ratio"]], tol=0.5),
    Claim(r"the direction of a sum follows its longer part", lambda: [lengths()["cosine"]], tol=0.0005),
    Claim(r"each attention update from layer 1 on is shorter", lambda: [stream()["sentence max"]], tol=0.005),
    Claim(r"that holds for all but", lambda: [stream()["stories"], stream()["long"], stream()["updates"],
                                             *stream()["layers"], stream()["max"]], tol=0.005),
    Claim(r"storing twelve of those would take",
          lambda: [12 * 768 * 768, 12 * 2 * 768 * H.load_model("walkthrough-12").config.d_head], tol=0),
]
