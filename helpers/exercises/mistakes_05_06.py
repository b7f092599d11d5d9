"""The mistake catalogues of notebooks 05 and 06: a detector, finding a head, predicting a pattern,
and predicting a knock-out. Each slip is a wrong variant of the reference on the same input."""

from __future__ import annotations

import numpy as np
import torch

from ..analysis.detectors import induction_targets
from .grading import Mistake as M


# --- the previous-token detector: my_previous_token_scores(attn (L, H, T, T)) -> (L, H) --------------
def diagonal(a, offset=-1):
    return a.diagonal(offset=offset, dim1=-2, dim2=-1)


DETECTOR = [
    M("you looked at the token after (offset=+1); in a causal model that weight is always 0: use offset=-1.",
      lambda a: diagonal(a, 1).mean(-1), code="offset_plus_1"),
    M("you scored each token's attention to itself (t, t) instead of to t - 1: use diagonal(offset=-1).",
      lambda a: diagonal(a, 0).mean(-1), code="offset_0"),
    M("you looked two tokens back (offset=-2): the previous token is offset=-1.", lambda a: diagonal(a, -2).mean(-1),
      code="offset_minus_2"),
    M("you summed over the queries instead of averaging (a score should lie in 0..1): use .mean(-1).",
      lambda a: diagonal(a).sum(-1), code="summed"),
    M("you divided by T, counting the first token, which has no previous token: average over the T - 1 others.",
      lambda a: diagonal(a).sum(-1) / a.shape[-1], code="divided_by_T"),
    M("you took the largest weight instead of the mean over the queries.", lambda a: diagonal(a).amax(-1),
      code="max_not_mean"),
    M("you averaged all the weight on earlier tokens, not only on the one just before: use diagonal(offset=-1).",
      lambda a: a.tril(-1).sum((-2, -1)) / (a.shape[-1] - 1), code="all_earlier"),
    M("the axes are swapped: return (layer, head), not (head, layer).", lambda a: diagonal(a).mean(-1).T,
      code="axes_swapped"),
    M("diagonal() took the layer and head axes: pass dim1=-2, dim2=-1 (queries and keys).",
      lambda a: a.diagonal(offset=-1).mean(-1), code="diagonal_wrong_dims"),
    M("you averaged over the keys' column 0 (the first token), not over the previous token.",
      lambda a: a[..., 1:, 0].mean(-1), code="first_column"),
]


# --- notebook 05, exercise 1: previous_word_head(attentions) -> (layer, head) ------------------------
def best_head(table: torch.Tensor) -> tuple[int, int]:
    flat = int(table.argmax())
    return flat // table.shape[1], flat % table.shape[1]


def _layer_apart(a, head_by_mean: bool):
    """The layer chosen by its heads' mean score, and then the head by the layers' mean (or within that layer)."""
    table = diagonal(a).mean(-1)
    layer = int(table.mean(1).argmax())
    return layer, int(table.mean(0).argmax() if head_by_mean else table[layer].argmax())


PREVIOUS_WORD_HEAD = [
    M("that head looks at the word itself (the diagonal, offset=0), not one word to the left (offset=-1).",
      lambda a: best_head(diagonal(a, 0).mean(-1)), code="itself"),
    M("you got L0 H0, the first head: either you looked at the word after (offset=+1), always 0 in a causal model, "
      "or diagonal() took the layers × heads axes (no dim1/dim2); use diagonal(offset=-1, dim1=-2, dim2=-1).", lambda a: best_head(diagonal(a, 1).mean(-1)), code="offset_plus_1"),
    M("that head looks two words back (offset=-2): the previous word is offset=-1.", lambda a: best_head(diagonal(a, -2).mean(-1)),
      code="two_back"),
    M("you took each head's largest previous-word weight, not its mean: one query is enough for max (the first "
      "word always looks back at <bos>); average over the queries, .mean(-1).", lambda a: best_head(diagonal(a).amax(-1)),
      code="max_not_mean"),
    M("you judged each head by the last word only: average the previous-word weight over every query, "
      "diagonal(offset=-1).mean(-1).", lambda a: best_head(a[..., -1, -2]), code="last_word_only"),
    M("you added up the weight on every earlier word, not only on the one just before: use diagonal(offset=-1).",
      lambda a: best_head(a.tril(-1).sum((-2, -1))), code="all_earlier"),
    M("you searched layer 0 only: rank the heads of every layer, the whole (layers, heads) table.",
      lambda a: (0, int(diagonal(a[0]).mean(-1).argmax())), code="layer_0_only"),
    M("that head rests on the first token (a bright first column), not on the previous word.",
      lambda a: best_head(a[..., 0].mean(-1)), code="first_token"),
    M("you swapped layer and head: rows are layers, columns heads; return (layer, head).",
      lambda a: best_head(diagonal(a).mean(-1))[::-1], code="layer_head_swapped"),
    M("you decoded the flat index with the number of layers: use divmod(index, n_heads) (heads per layer).",
      lambda a: divmod(int(diagonal(a).mean(-1).argmax()), a.shape[0]), code="divmod_by_layers"),
    M("you decoded the flat index with a fixed 12 heads per layer (the model's): these maps have attentions.shape[1] "
      "heads, so use divmod(index, attentions.shape[1]).", lambda a: divmod(int(diagonal(a).mean(-1).argmax()), 12),
      code="divmod_by_fixed_12"),
    M("you took the head that looks *least* at the previous word (argmin): use argmax.",
      lambda a: best_head(-diagonal(a).mean(-1)), code="argmin"),
    M("you chose the best layer and the best head separately (a layer's mean over its heads, a head's mean over the "
      "layers): the best head is the best cell of the (layers, heads) table, best = score.argmax(), then "
      "divmod(int(best), n_heads).", lambda a: _layer_apart(a, True), code="layer_and_head_apart"),
    M("you chose the layer first by its mean over the heads: the best head may sit in a layer whose other heads are "
      "poor; take the best cell of the whole (layers, heads) table.", lambda a: _layer_apart(a, False),
      code="layer_by_mean_first"),
]


# --- notebook 05, exercise 2: predict_induction(tokens) -> (T, T) pattern ------------------------------
def pattern(tokens, key) -> np.ndarray:
    """(T, T) with a 1 at key(q, copies) for every word seen before (copies: its earlier positions)."""
    T = len(tokens)
    out = np.zeros((T, T))
    for q in range(T):
        copies = [k for k in range(q) if tokens[k] == tokens[q]]
        if copies:
            out[q, min(max(key(q, copies), 0), T - 1)] = 1.0
    return out


PREDICT_INDUCTION = [
    M("you point at the earlier copy itself (a duplicate-token head); an induction head looks one word further, "
      "at what came next last time.", lambda t: pattern(t, lambda q, c: c[-1]), code="duplicate_token"),
    M("that is the previous word; look for the earlier copy instead, and then one word further.",
      lambda t: pattern(t, lambda q, c: q - 1), code="previous_word"),
    M("that is the word itself (the diagonal); look after its earlier copy.", lambda t: pattern(t, lambda q, c: q),
      code="itself"),
    M("you used the word after the *first* copy; use the latest earlier copy.", lambda t: pattern(t, lambda q, c: c[0] + 1),
      code="first_copy"),
    M("you point at the word before the earlier copy; an induction head looks at the word just after it (copy + 1).",
      lambda t: pattern(t, lambda q, c: c[-1] - 1), code="before_copy"),
    M("you put no 1 in the rows of the repeated words: from each, mark the word after its earlier copy.",
      lambda t: np.zeros((len(t), len(t))), code="no_marks"),
    M("you went two words past the earlier copy: the induction head looks at the word just after it (copy + 1).",
      lambda t: pattern(t, lambda q, c: c[-1] + 2), code="two_past_copy"),
    M("you point at the next word (q + 1): a word cannot look ahead; search its earlier copies (k < q) and take "
      "the word after the latest.", lambda t: pattern(t, lambda q, c: q + 1), code="next_word"),
    M("rows and columns swapped: row q is the query, so put the 1 at pattern[q][key], not pattern[key][q].",
      lambda t: induction_pattern(t).T, code="transposed"),
    M("you dropped <bos>: keep one row and one column for every token, <bos> included.",
      lambda t: induction_pattern(t[1:]), code="dropped_bos"),
]


def induction_pattern(tokens) -> np.ndarray:
    """The reference: analysis.detectors' induction targets, the pattern notebook 05 scores heads against."""
    return induction_targets(list(tokens))


# --- notebook 06: predicting a knock-out -------------------------------------------------------------
def knockout_slips(base: float, measured: float, who: str) -> list[M]:
    """The misconceptions a prediction may come from, each as the number it leads to."""
    return [
        M(f"you predicted no effect: {who} never looks at the earlier copy, yet the induction heads read what it "
          f"writes, so removing it costs accuracy.", lambda: base, code="no_effect"),
        M(f"that is the drop ({base - measured:.0%} points), not the accuracy that is left: the question asks for the "
          f"accuracy after the knock-out.", lambda: base - measured, code="drop_not_accuracy"),
        M("you predicted that the task breaks completely: that is what removing the induction heads themselves does; "
          f"{who} is one helper of theirs.", lambda: 0.0, code="breaks_completely"),
    ]


def knockout_direction(value: float, base: float, measured: float, who: str) -> str:
    """A last-resort diagnosis by direction: the effect over- or underestimated."""
    if value > measured:
        return (f"you expected {who} to matter less than it does: without it {measured:.0%} is left, not "
                f"{value:.0%}.")
    return f"you expected {who} to matter more than it does: {measured:.0%} is left, not {value:.0%}."
