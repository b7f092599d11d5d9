"""Notebook 03's capstone: the student writes the whole multi-head layer as one class.

`check_multihead(MyMultiHead)` builds MyMultiHead(768, 12), loads the trained weights of
walkthrough-12's attention layer into its `qkv` and `out`, and compares its output with the
model's own layer on "I like to draw" ([1, 4, 768]) and on a batch of two sentences ([2, 6, 768]).
It prints one line: ✓, "not attempted", or the mistake it recognises (reshape without
transpose, no output projection, no mask, wrong scale …).
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
from torch import nn

from ..core.attention import mask_future
from ..core.catalog import load_model
from .grading import Case, call_student, check_cases

MODEL = "walkthrough-12"
SENTENCE = "I like to draw"
BATCH = ("she likes to paint her picture", "tom likes to draw his picture")
DIM, HEADS = 768, 12


@lru_cache(maxsize=1)
def _layer_and_inputs() -> tuple[nn.Module, list[torch.Tensor]]:
    """The trained attention layer and its normalised inputs (B, T, 768) for the two cases."""
    lm = load_model(MODEL)
    block = lm.model.h[0]
    with torch.no_grad():
        inputs = [block.ln_1(lm.model.embed(torch.tensor([lm.tokenizer.encode(s, bos=False) for s in batch])))
                  for batch in ((SENTENCE,), BATCH)]
    return block.attn, inputs


def reference(x: torch.Tensor, qkv: nn.Linear, out: nn.Linear, heads: int = HEADS, transpose: bool = True,
              project: bool = True, mask: bool = True, scale: float | None = None, axis: int = -1,
              swap_qk: bool = False) -> torch.Tensor:
    """The layer with switches, so each usual mistake gives its own wrong answer to recognise."""
    B, T, D = x.shape
    size = D // heads
    q, k, v = qkv(x).chunk(3, dim=-1)
    if swap_qk:
        q, k = k, q
    split = (lambda t: t.view(B, T, heads, size).transpose(1, 2)) if transpose else \
        (lambda t: t.reshape(B, heads, T, size))  # without the transpose, the words get mixed
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(-2, -1) / (math.sqrt(size) if scale is None else scale)
    weights = (mask_future(scores) if mask else scores).softmax(dim=axis)
    y = weights @ v
    y = y.transpose(1, 2).reshape(B, T, D) if transpose else y.reshape(B, T, D)
    return out(y) if project else y


def _cases(attn: nn.Module, inputs: list[torch.Tensor]) -> list[Case]:
    qkv, out = attn.c_attn, attn.c_proj
    cases = []
    for x, label in zip(inputs, (f"'{SENTENCE}' [1 × 4 × 768]", "two sentences [2 × 6 × 768]")):
        with torch.no_grad():
            expected = attn(x)[0]  # the model's own layer: an independent reference
            wrong = lambda **kw: reference(x, qkv, out, **kw)  # noqa: E731
            mistakes = {
                "reshape without transpose: view(B, T, heads, size) and then .transpose(1, 2); a plain "
                "reshape to (B, heads, T, size) mixes the words.": wrong(transpose=False),
                "no output projection: pass the merged heads through self.out (the recombination).": wrong(project=False),
                "no mask: fill the scores above the diagonal with -inf before the softmax (the model reads left "
                "to right).": wrong(mask=False),
                "wrong scale: divide by √head_size (√64 = 8), not by √dim (√768).": wrong(scale=math.sqrt(DIM)),
                "wrong scale: divide by √head_size (= 8), not by head_size (64).": wrong(scale=64.0),
                "forgot the scale: divide the scores by √head_size (= 8).": wrong(scale=1.0),
                "softmax over the wrong axis: use dim=-1 (over the keys).": wrong(axis=-2),
                "queries and keys swapped: scores = q @ k.transpose(-2, -1).": wrong(swap_qk=True),
            }
        cases.append(Case((x,), expected, mistakes, label=label))
    return cases


def _load(student_cls, attn: nn.Module):
    """Build the student's module and load the trained weights; (module, None) or (None, message)."""
    name = "MultiHead capstone"
    if isinstance(student_cls, nn.Module):
        return None, f"✗ {name}: pass the class itself (e.g. MyMultiHead), not a module built from it."
    layer, problem = call_student(name, student_cls, DIM, HEADS)
    if problem:
        return None, problem
    for part, source in (("qkv", attn.c_attn), ("out", attn.c_proj)):
        mine = getattr(layer, part, None)
        if not isinstance(mine, nn.Linear) or mine.weight.shape != source.weight.shape or mine.bias is None:
            want = "nn.Linear(dim, 3 * dim)" if part == "qkv" else "nn.Linear(dim, dim)"
            return None, (f"✗ {name}: the model's weights need self.{part} = {want} with a bias; "
                          f"got {type(mine).__name__ if mine is not None else 'nothing'}.")
        with torch.no_grad():
            mine.load_state_dict(source.state_dict())
    return layer.eval(), None


def check_multihead(student_cls) -> None:
    """Load walkthrough-12's weights into student_cls(768, 12) and compare with the model's layer."""
    attn, inputs = _layer_and_inputs()
    layer, problem = _load(student_cls, attn)
    if problem:
        print(problem)
        return
    check_cases("MultiHead capstone", layer, _cases(attn, inputs),
                "Same shape in, same shape out: [batch, tokens, 768].")
