"""Notebook 03's capstone: the student writes the whole multi-head layer as one class.

`check_multihead(MyMultiHead)` builds MyMultiHead(768, 12), loads the trained weights of
walkthrough-12's attention layer into its `qkv` and `out`, and compares its output with the
model's own layer (in float64) on "I like to draw" ([1, 4, 768]) and on a batch of two sentences
([2, 6, 768]). Each usual slip is `forward` below with one switch flipped; the verdict names it.
"""

from __future__ import annotations

import copy
import itertools
import math
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from ..core.catalog import load_model
from . import sandbox
from .grading import check
from .verdict import Exercise, Mistake, Verdict, engine_verdict

MODEL = "walkthrough-12"
SENTENCE = "I like to draw"
BATCH = ("she likes to paint her picture", "tom likes to draw his picture")
DIM, HEADS = 768, 12
OTHER_HEADS = 6  # the same weights cut into 6 heads of 128: a head count taken from elsewhere shows
NAME = "MultiHead capstone"


@lru_cache(maxsize=1)
def _layer_and_inputs() -> tuple[nn.Module, list[torch.Tensor]]:
    """The trained attention layer and its normalised inputs (B, T, 768) for the two cases."""
    lm = load_model(MODEL)
    with torch.no_grad():  # what layer 0's heads read: the one forward pass keeps it
        inputs = [lm.model(torch.tensor([lm.tokenizer.encode(s, bos=False) for s in batch]), keep=True)
                  .attention_inputs[:, 0] for batch in ((SENTENCE,), BATCH)]
    return lm.model.h[0].attn, inputs


def forward(x: torch.Tensor, qkv: nn.Linear, out: nn.Linear, heads: int = HEADS, order: str = "qkv",
            split: str = "transpose", merge: str = "transpose", scale: str = "sqrt_size", mask: str = "-inf",
            axis: int = -1, project: int = 1, qkv_bias: bool = True, mask_size: int | None = None,
            chunk_dim: int = -1, project_in: bool = True, out_bias: str = "once", residual: bool = False,
            swapped: bool = False, fixed: int | None = None) -> torch.Tensor:
    """The layer with switches, so each usual mistake gives its own wrong answer to recognise."""
    B, T, D = x.shape
    asked = D // heads  # the head size the arguments ask for (self.size)
    heads = fixed or heads  # `view(B, T, 12, 64)` written in: right for 12 heads only
    heads = D // heads if swapped else heads  # 64 heads of 12 where 12 heads of 64 are asked for
    size = D // heads
    fused = F.linear(x, qkv.weight, qkv.bias if qkv_bias else None)
    first, second, third = fused.chunk(3, dim=chunk_dim) if project_in else (x, x, x)
    parts = {"q": first, "k": second, "v": third}
    q, k, v = (parts[c] for c in order)
    cut = {"transpose": lambda t: t.reshape(B, T, heads, size).transpose(1, 2),
           "reshape": lambda t: t.reshape(B, heads, T, size),  # the words get mixed
           "interleave": lambda t: t.reshape(B, T, size, heads).permute(0, 3, 1, 2)}[split]
    q, k, v = cut(q), cut(k), cut(v)  # (B, heads, T, size)
    divide = {"sqrt_size": math.sqrt(size), "sqrt_dim": math.sqrt(D), "size": size, "one": 1.0, "sqrt_heads": math.sqrt(heads),
              "heads": heads, "sqrt_asked": math.sqrt(asked)}
    scores = q @ k.transpose(-2, -1) / (divide[scale] if isinstance(scale, str) else scale)
    n = T if mask_size is None else (B if mask_size == "batch" else mask_size)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    if mask in ("-inf", "0", "-1", "-10", "below", "diagonal", "diagonal_big", "tril"):
        where = {"below": future.T, "diagonal": torch.ones(n, n, dtype=torch.bool).triu(0),
                 "diagonal_big": torch.ones(n, n, dtype=torch.bool).triu(0),
                 "tril": torch.ones(n, n, dtype=torch.bool).tril(0)}
        fill = {"0": 0.0, "-1": -1.0, "-10": -10.0, "diagonal_big": -1e9}.get(mask, -math.inf)  # -1e9: a common -inf
        scores = scores.masked_fill(where.get(mask, future), fill)
    weights = scores.softmax(dim=axis)
    if mask in ("after", "after_inf"):
        weights = weights.masked_fill(future, 0.0 if mask == "after" else -math.inf)
    y = weights @ v  # (B, heads, T, size)
    y = {"transpose": lambda: y.transpose(1, 2).reshape(B, T, D), "reshape": lambda: y.reshape(B, T, D),
         "interleave": lambda: y.permute(0, 2, 3, 1).reshape(B, T, D)}[merge]()
    bias = {"once": 1.0, "none": 0.0, "per_head": heads}.get(out_bias, out_bias)
    for _ in range(project):
        y = F.linear(y, out.weight) + bias * out.bias
    return x + y if residual else y


def _chunked_words(x: torch.Tensor, qkv: nn.Linear, sizes_from_x: bool, heads: int = HEADS) -> torch.Tensor:
    """chunk(3, dim=1) and then the split: raises the reshape error such an answer raises."""
    B, T, D = x.shape
    first = F.linear(x, qkv.weight, qkv.bias).chunk(3, dim=1)[0]
    return first.reshape(B, T if sizes_from_x else first.shape[1], heads, D // heads)


SLIPS = [  # (switches, what went wrong and the fix, its stable code)
    (dict(split="reshape"), "heads split without the transpose: view(B, T, heads, size) and then .transpose(1, 2); "
                            "a plain reshape to (B, heads, T, size) mixes the words.", "split_without_transpose"),
    (dict(split="interleave"), "heads interleaved by the split: each head takes a contiguous block of size features; "
                               "view(B, T, heads, size), not (B, T, size, heads).", "split_interleaved"),
    (dict(merge="reshape"), "heads merged without transposing back: y.transpose(1, 2) to (B, T, heads, size) before "
                            ".reshape(B, T, dim), or the words get mixed.", "merge_without_transpose"),
    (dict(merge="interleave"), "heads interleaved by the merge: transpose(1, 2) then reshape(B, T, dim) keeps each "
                               "head's features together.", "merge_interleaved"),
    (dict(project=0), "no output projection: pass the merged heads through self.out (the recombination).",
     "no_output_projection"),
    (dict(mask="none"), "no mask: fill the scores above the diagonal with -inf before the softmax (the model reads left "
                        "to right).", "no_mask"),
    (dict(mask="0"), "mask filled with 0 instead of -inf: e⁰ = 1, so later words still get weight; use float('-inf').",
     "fill_zero"),
    (dict(mask="below"), "masked the wrong triangle: hide the later words (above the diagonal, .triu(1)), not the "
                         "earlier ones.", "wrong_triangle"),
    (dict(mask="diagonal"), "masked the diagonal too: a word may look at itself; use .triu(1), not .triu(0).",
     "masked_diagonal"),
    (dict(mask="diagonal_big"), "masked the diagonal too (.triu(0)): a word may look at itself, and the first "
                                "word, with nothing left, spreads its weight evenly; use .triu(1).",
     "masked_diagonal_filled_finite"),
    (dict(mask="after"), "mask applied after the softmax: the rows no longer sum to 1; put -inf in the scores, then "
                         "take the softmax.", "masked_after_softmax"),
    (dict(scale="sqrt_dim"), "wrong scale: divide by √size (√64 = 8), not by √dim (√768).", "sqrt_of_dim"),
    (dict(scale="size"), "wrong scale: divide by √size (= 8), not by size (64) (or by √size twice).", "divided_by_size"),
    (dict(scale="one"), "forgot the scale: divide the scores by √size (= 8).", "no_scale"),
    (dict(axis=-2), "softmax over the wrong axis: use dim=-1 (over the keys).", "softmax_axis"),
    (dict(axis=1), "softmax over the heads (dim=1): use dim=-1, over the keys of each query.", "softmax_over_heads"),
    (dict(mask="-1"), "mask filled with -1, not -inf: e⁻¹ > 0, so later words still get weight; use float('-inf').",
     "fill_minus_one"),
    (dict(mask="-10"), "mask filled with -10, not -inf: e^-10 is small but not 0, so a masked score still gets some "
                       "weight; use float('-inf').", "fill_minus_10"),
    (dict(mask="after_inf"), "wrote -inf after the softmax: put -inf in the scores first, then take the softmax (-inf "
                             "in the weights gives -inf and NaN in the output).", "minus_inf_after_softmax"),
    (dict(scale="sqrt_heads"), "wrong scale: divide by √size (√64 = 8), not by √heads.", "sqrt_of_heads"),
    (dict(scale="heads"), "wrong scale: divide by √size (√64 = 8), not by the number of heads.", "divided_by_heads"),
    (dict(swapped=True, scale="sqrt_heads"), "head count and head size swapped: MyMultiHead(768, 12) has 12 heads "
     "of 768 // 12 = 64 numbers, not 64 heads of 12; size = dim // n_heads (your scale, √64, then fits).",
     "heads_size_swapped_own_scale"),
    (dict(fixed=HEADS), f"the head count is written in ({HEADS} heads): MyMultiHead(768, 6) must make 6 heads of "
                        f"128; take both from the arguments, self.heads = n_heads and self.size = dim // n_heads.",
     "fixed_head_count"),
    (dict(fixed=HEADS, scale="sqrt_asked"), f"the head count is written in ({HEADS} heads of 64, while the scale "
                                            f"reads self.size): MyMultiHead(768, 6) must make 6 heads of 128; take "
                                            f"the split from self.heads and self.size too.", "fixed_head_count_split"),
    (dict(swapped=True), "head count and head size swapped: MyMultiHead(768, 12) has 12 heads of 768 // 12 = 64 "
                         "numbers, not 64 heads of 12; size = dim // n_heads.", "heads_size_swapped"),
    (dict(project=2), "applied the output projection twice: self.out once, after the merge.", "output_projection_twice"),
    (dict(residual=True), "added the residual x + …: this layer returns the update only (the block adds x outside).",
     "residual_added"),
    (dict(qkv_bias=False), "left out the bias of the fused projection: call self.qkv(x), which adds it.",
     "no_qkv_bias"),
    (dict(mask_size=4), "the mask has a fixed size (4, the first sentence): build it from x, B, T, D = x.shape.",
     "fixed_mask_size"),
    (dict(mask_size="batch"), "the mask was sized from x.shape[0], the batch: it is T × T, T = x.shape[1] (the tokens).",
     "mask_from_batch"),
    (dict(project_in=False), "q, k and v are x itself: make them with the fused projection, "
                             "q, k, v = self.qkv(x).chunk(3, dim=-1).", "no_qkv_projection"),
    (dict(chunk_dim=1), "chunked along the words: q, k, v = self.qkv(x).chunk(3, dim=-1) (the features).",
     "chunked_words"),
    (dict(mask="tril"), "masked the wrong triangle and the diagonal (.tril()): the last word has nothing left to look "
                        "at (NaN); hide only the later words, torch.ones(T, T, dtype=torch.bool).triu(1).",
     "tril_mask"),
    (dict(out_bias="none"), "the output projection lost its bias: call self.out(...), which adds b_O.", "no_out_bias"),
    (dict(out_bias="per_head"), "the output bias was added once per head: W_O's blocks are summed over the "
                           "heads, then b_O is added once; self.out(merged) does both.", "out_bias_per_head"),
]
CHUNKED = "chunked along the words: q, k, v = self.qkv(x).chunk(3, dim=-1) splits the features, not the tokens."
CHUNKED_CODES = ((True, "chunked_words_reshape_x"), (False, "chunked_words_reshape_chunk"))  # (sizes from x?, code)


def _two_slips(slips: list) -> list:
    """Every pair of switches that touch different steps: two slips at once, named together."""
    both = "two slips at once:"
    return [({**a, **b}, f"{both} {sa.rstrip('.')}; and {sb[0].lower() + sb[1:]}", f"two_slips.{ca}+{cb}")
            for (a, sa, ca), (b, sb, cb) in itertools.combinations(slips, 2) if not set(a) & set(b)]
ORDERS = [(order, f"q, k, v taken in the wrong order ({', '.join(order)}): self.qkv(x).chunk(3, dim=-1) gives q, "
                  f"then k, then v.", f"order_{order}") for order in map("".join, itertools.permutations("qkv"))
          if order != "qkv"]
ORDERS += [("qqv", "keys made from the queries' third: k is the second chunk of self.qkv(x).", "keys_from_queries"),
           ("qkk", "values made from the keys' third: v is the third chunk of self.qkv(x).", "values_from_keys")]


def _singles() -> list:
    """(switches, line, code) of every single slip made by `forward`'s switches."""
    return [(dict(order=o), says, code) for o, says, code in ORDERS] + SLIPS


def slip_lines() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(code, line) of the single slips and of the pairs, in the order the check tries them; needs no model."""
    one = [(code, says) for _, says, code in _singles()] + [(code, CHUNKED) for _, code in CHUNKED_CODES]
    return one, [(code, says) for _, says, code in _two_slips(_singles())]


@lru_cache(maxsize=1)
def exercise() -> Exercise:
    """The capstone as an Exercise: the model's own layer in float64 is the reference."""
    attn, inputs = _layer_and_inputs()
    layer64 = copy.deepcopy(attn).double().eval()
    qkv, out = layer64.c_attn, layer64.c_proj
    slips = _singles()
    slips += _two_slips(slips)
    mistakes = [Mistake(says, lambda x, h, kw=kw: forward(x.double(), qkv, out, heads=h, **kw), code=code)
                for kw, says, code in slips]
    mistakes[len(ORDERS) + len(SLIPS):len(ORDERS) + len(SLIPS)] = [
        Mistake(CHUNKED, lambda x, h, f=f: _chunked_words(x.double(), qkv, f, h), code=code) for f, code in CHUNKED_CODES]
    labels = (f"'{SENTENCE}' [1 × 4 × 768]", "two sentences [2 × 6 × 768]",
              f"'{SENTENCE}' with MyMultiHead(768, {OTHER_HEADS})")
    cases = [(x, HEADS) for x in inputs] + [(inputs[0], OTHER_HEADS)]

    def reference(x, h):
        return layer64(x.double())[0] if h == HEADS else forward(x.double(), qkv, out, heads=h)
    return Exercise(NAME, list(zip(labels, cases)), reference, mistakes,
                    shape_hint="Same shape in, same shape out: [batch, tokens, 768].", sizes="B, T, D = x.shape",
                    batch_first=True)


def _load(student_cls, attn: nn.Module, heads: int = HEADS) -> tuple[nn.Module | None, tuple | None]:
    """Build the student's module and load the trained weights; (module, None) or (None, (code, line))."""
    if isinstance(student_cls, nn.Module):
        return None, ("module_not_class", f"✗ {NAME}: pass the class itself (e.g. MyMultiHead), not a module built from it.")
    if not callable(student_cls):
        return None, ("not_a_class", f"✗ {NAME}: expected the class MyMultiHead, got {type(student_cls).__name__}.")
    made = sandbox.run_student(student_cls, (DIM, heads), sandbox.Echo(), float(sandbox.TIME_LIMIT_S))
    if made.problem or made.error is not None:
        why = made.problem or f"building MyMultiHead(768, {heads}) raised {type(made.error).__name__}: {made.error}"
        if "before Module.__init__() call" in why:  # torch's words for a missing super().__init__()
            why += ": call super().__init__() on the first line of __init__, before any self.layer = …"
        return None, ("build_failed", f"✗ {NAME}: {why}")
    layer = made.answer
    for part, source in (("qkv", attn.c_attn), ("out", attn.c_proj)):
        mine = getattr(layer, part, None)
        if not isinstance(mine, nn.Linear) or mine.weight.shape != source.weight.shape or mine.bias is None:
            want = "nn.Linear(dim, 3 * dim)" if part == "qkv" else "nn.Linear(dim, dim)"
            deeper = [n for n, m in layer.named_modules() if n.endswith("." + part)] if isinstance(layer, nn.Module) else []
            linears = [n for n, m in layer.named_modules() if isinstance(m, nn.Linear)] if isinstance(layer, nn.Module) else []
            got = (f"nothing there, but {deeper[0]} holds one: put it on MyMultiHead itself" if mine is None and deeper
                   else type(mine).__name__ if mine is not None
                   else f"no {part}, but Linear layers named {', '.join(linears[:4])}{' …' * (len(linears) > 4)}: the "
                        f"trained weights come as one fused layer, so make {part} that one layer" if linears
                   else "nothing")
            return None, ("missing_linear", f"✗ {NAME}: the model's weights need self.{part} = {want} with a bias; "
                                            f"got {got}.")
        with torch.no_grad():
            mine.load_state_dict(source.state_dict())
    return (layer.eval() if isinstance(layer, nn.Module) else layer), None


class _Both(nn.Module):
    """The student's layer built twice, with 12 heads and with 6 (same weights): forward(x, heads)."""

    def __init__(self, layers: dict):
        super().__init__()
        self.layers = layers

    def forward(self, x, heads):
        return self.layers[int(heads)](x)


def check_multihead(student_cls) -> Verdict:
    """Load walkthrough-12's weights into student_cls(768, 12) and student_cls(768, 6), and compare with
    the model's layer (and the same weights cut into 6 heads of 128)."""
    attn, _ = _layer_and_inputs()
    layers = {}
    for heads in (HEADS, OTHER_HEADS):
        layer, problem = _load(student_cls, attn, heads)
        if problem:
            verdict = engine_verdict(exercise().key, problem[0], problem[1])
            print(verdict.line)
            return verdict
        layers[heads] = layer
    if _random(layers[HEADS], _layer_and_inputs()[1][0]):
        verdict = engine_verdict(exercise().key, "random_output", (
            f"✗ {NAME}: your layer gives two different outputs for one input (in .eval() mode): something random "
            f"runs in forward, such as F.dropout with its default training=True; drop it (or pass "
            f"training=self.training)."))
        print(verdict.line)
        return verdict
    return check(exercise(), _Both(layers), source=student_cls)


def _random(layer, x: torch.Tensor) -> bool:
    """Two calls on one input give two outputs (dropout left on): no fixed answer can be compared."""
    runs = [sandbox.run_student(layer, (x.clone(),), sandbox.Echo(), float(sandbox.TIME_LIMIT_S)) for _ in range(2)]
    a, b = (run.answer for run in runs)
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and \
        not torch.allclose(a.detach(), b.detach(), rtol=0, atol=0, equal_nan=True)  # NaN where NaN: a mask's slip
