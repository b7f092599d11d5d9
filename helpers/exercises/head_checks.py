"""Notebooks 05 and 06's exercises: finding the previous-word head, predicting the induction pattern, and
predicting a knock-out. Each exercise's mistakes (wrong variants of the reference
on the same input) come first, then its checks; all run through grading.check.
"""

from __future__ import annotations

import decimal
import fractions

import numpy as np
import torch

from ..analysis.detectors import induction_targets, previous_token_scores
from ..analysis.knockout import forced_accuracy
from ..core.arguments import is_whole_number
from ..core.model import LanguageModel
from ..core.run import Run
from .grading import check
from .verdict import Exercise, Mistake as M, Verdict, as_float64


# --- notebook 05, exercise 1: previous_word_head(attentions) -> (layer, head): its mistakes ----------
def diagonal(a, offset=-1):
    return a.diagonal(offset=offset, dim1=-2, dim2=-1)


def best_head(table: torch.Tensor) -> tuple[int, int]:
    flat = int(table.argmax())
    return flat // table.shape[1], flat % table.shape[1]


def _layer_apart(a, head_by_mean: bool):
    """The layer chosen by its heads' mean score, and then the head by the layers' mean (or within that layer)."""
    table = diagonal(a).mean(-1)
    layer = int(table.mean(1).argmax())
    return layer, int(table.mean(0).argmax() if head_by_mean else table[layer].argmax())


PREVIOUS_WORD_HEAD_MISTAKES = [
    M("that head looks at the word itself (the diagonal, offset=0), not one word to the left (offset=-1).",
      lambda a: best_head(diagonal(a, 0).mean(-1)), code="itself"),
    M("you got L0 H0, the first head: either you looked at the word after (offset=+1), always 0 in a causal model, "
      "or diagonal() took the layers × heads axes (dim1/dim2 left out or set to 0, 1); use diagonal(offset=-1, "
      "dim1=-2, dim2=-1).", lambda a: best_head(diagonal(a, 1).mean(-1)), code="offset_plus_1"),
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
    M("your head is the one found by choosing the layer first by its mean over the heads: the best head may sit in a "
      "layer whose other heads are poor; take the best cell of the whole (layers, heads) table.",
      lambda a: _layer_apart(a, False),
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


PREDICT_INDUCTION_MISTAKES = [
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
      lambda t: induction_prediction(t).T, code="transposed"),
    M("you dropped <bos>: keep one row and one column for every token, <bos> included.",
      lambda t: induction_prediction(t[1:]), code="dropped_bos"),
]


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


# --- the checks · notebook 05, exercise 1: the previous-word head --------------------------------------
def planted_maps(L: int = 3, H: int = 6, T: int = 8) -> torch.Tensor:
    """Random causal maps (L, H, T, T) with one head of each kind planted where every usual slip
    points somewhere else: previous word (2, 1, 0.95 of each row: a measure that adds the diagonal
    rates the heads that mix the previous word and themselves higher), itself (0, 3), two back (1, 4), first token (0, 1),
    heads that look least at the previous word (2, 0) …, one whose largest previous-word weight is 1
    (0, 2), one whose last word looks back fully (1, 0), one spread over all earlier words (2, 2), and
    the best of layer 0 (0, 4). The best cell's row and column are not the best on average (layer 1,
    whose best head is (1, 5), and column 3 are), so choosing the layer apart from the head misses it."""
    g = torch.Generator().manual_seed(5)
    a = (torch.randn(L, H, T, T, generator=g) * 2).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1),
                                                                float("-inf")).softmax(-1)
    eye, prev, back2 = torch.eye(T), torch.diag_embed(torch.ones(T - 1), offset=-1), torch.diag_embed(torch.ones(T - 2), offset=-2)
    first = torch.zeros(T, T)
    first[:, 0] = 1.0
    top = eye * (torch.arange(T) == 0)  # row 0 can only look at itself
    a[2, 1] = 0.95 * prev + 0.05 * first  # not all on the previous word, so previous + itself does not tie it
    a[2, 1, 0] = top[0]  # with the heads that mix the previous word and themselves ((0, 3), (1, 5) …)
    a[0, 3] = 0.8 * eye + 0.2 * prev + 0.2 * top
    a[1, 4] = 0.8 * back2 + 0.2 * prev
    a[1, 4, 1], a[1, 4, 0] = prev[1], top[0]
    a[0, 1] = 0.9 * first + 0.1 * eye  # row 1 looks back at <bos> 0.9: max ≠ mean
    a[1, 4, 1] = 0.6 * prev[1] + 0.4 * eye[1]
    a[2, 3] = 0.5 * eye + 0.5 * first
    a[0, 2, 4], a[1, 0, T - 1] = prev[4], prev[T - 1]  # one query looks back fully: max, the last query only
    a[0, 4] = 0.6 * prev + 0.2 * first + 0.2 * eye  # the best of layer 0
    a[0, 4, 0] = top[0]
    # the best cell's row and column are not the best on average: layer 1 is (its best head is (1, 5)) and
    # column 3 is, so choosing the layer apart from the head gives (1, 5) or (1, 3), not (2, 1)
    a[1, 5], a[1, 3] = 0.8 * prev + 0.2 * eye + 0.2 * top, 0.6 * prev + 0.4 * eye + 0.4 * top
    a[2, 3] = 0.9 * prev + 0.1 * eye + 0.1 * top
    for layer, h in ((2, 0), (2, 4), (0, 5), (2, 5), (1, 1)):  # (1, 1): a fixed 12 decodes the best head there
        a[layer, h] = 0.5 * eye + 0.5 * first
    a[2, 2] = torch.tril(torch.ones(T, T), -1) / torch.arange(T).clamp(min=1)[:, None] + top  # all earlier words
    return a


def read_head(got, args) -> tuple[tuple[int, int] | None, str | None]:
    """(layer, head) as two whole numbers, or what to return instead."""
    if is_whole_number(got):
        return None, ("you returned one number (a flat index?): turn it into (layer, head) with "
                      "divmod(index, n_heads).")
    if isinstance(got, (str, bytes)) or not hasattr(got, "__len__") or len(got) != 2:
        return None, f"expected (layer, head), got {type(got).__name__} {got!r:.40}."
    if not all(is_whole_number(x) for x in got):
        return None, f"expected two whole numbers (layer, head), got {tuple(got)!r:.60}; use int(...) or //."
    return (int(got[0]), int(got[1])), None


def _prev(a: torch.Tensor) -> np.ndarray:
    return np.asarray(previous_token_scores(a.float()))


def _head_is_best(value, expected, args) -> bool:
    prev = _prev(args[0])
    layer, head = value
    return 0 <= layer < prev.shape[0] and 0 <= head < prev.shape[1] and prev[layer, head] >= prev.max() - 0.02


def _head_explain(value, expected, args):
    prev = _prev(args[0])
    L, H = prev.shape
    best = f"the best is L{expected[0]} H{expected[1]} ({prev.max():.2f})"
    layer, head = value
    if not (0 <= layer < L and 0 <= head < H):
        if (layer - 1, head - 1) == tuple(expected):
            return (f"there is no head ({layer}, {head}) in maps of {L} layers × {H} heads: layers and heads count from "
                    f"0 (L0 H0 is the first), so drop the + 1; {best}."), True
        return (f"there is no head ({layer}, {head}) in maps of {L} layers × {H} heads: search the maps your function "
                f"is given, not a fixed head, and take every size from them (a flat index: divmod(index, "
                f"attentions.shape[1]), not a fixed 12); {best}."), True
    return f"L{layer} H{head} puts only {prev[layer, head]:.2f} on the previous word; {best}.", False


def check_previous_word_head(student_fn, attentions) -> Verdict:
    """student_fn(attentions (L, H, T, T)) -> (layer, head). Passes when, on planted maps of another
    size and on the model's maps, it names (within 0.02) the head that looks most at the previous word."""
    maps = torch.as_tensor(attentions).float()
    planted = planted_maps()

    def praise(values):
        (l, h), prev = values[1], _prev(maps)
        return (f"✓ previous-word head: L{l} H{h} puts {prev[l, h]:.2f} on the previous word on average (best "
                f"{prev.max():.2f}); also right on planted maps {list(planted.shape)}.")
    return check(Exercise("previous-word head", [(f"planted maps {list(planted.shape)}", (planted,)),
                                          (f"the model's maps {list(maps.shape)}", (maps,))],
                   lambda a: best_head(diagonal(a).mean(-1)), PREVIOUS_WORD_HEAD_MISTAKES, read=read_head,
                   same=lambda a, b, args: a == b, right=_head_is_best, explain=_head_explain, tensor=False,
                   fixed="your function must search the maps it is given, not return a fixed head.",
                   praise=praise, exact_inputs=True, sizes="L, H = attentions.shape[:2]"), student_fn)


# --- notebook 05, exercise 2: where an induction head looks --------------------------------------
def induction_prediction(tokens) -> np.ndarray:
    """Where an induction head looks (T, T): from each word to the word after its latest
    earlier copy; a word seen for the first time rests on the first token (analysis.detectors' induction
    targets, the pattern notebook 05 scores heads against)."""
    return induction_targets(list(tokens))


def _repeat_tokens() -> list[str]:
    """A second, longer input for the induction check: a word list said three times. Its list is one word
    longer than the notebook's, so the copies lie 8 tokens apart, not 7: an answer that counts back a fixed
    number of tokens read off the notebook's sentence is found here (blind round 6)."""
    words = ["<bos>", "list", ":", "cat", "sun", "cup", "old", "red", "."]
    return words + ["again", ":", "cat", "sun", "cup", "old", "red", "."] + ["again", ":", "cat", "sun"]


def _read_pattern(got, args):
    try:
        value = as_float64(got)
    except (TypeError, ValueError, RuntimeError):
        return None, f"expected a (T, T) array of numbers, got {type(got).__name__}."
    if value.ndim == 2 and not np.isfinite(value).all():
        return None, "your array contains NaN or inf; put 1 where the head looks and 0 elsewhere."
    return value, None


def _targets(a: np.ndarray) -> np.ndarray:
    """The key each row points at (argmax), -1 for a row with no positive number."""
    return np.where(a.max(-1) > 0, a.argmax(-1), -1)


def _same_targets(a, b, args) -> bool:
    """Same shape, and the same key picked (argmax) in every row of a word seen before."""
    tokens = args[0]
    if a.shape != b.shape or a.ndim != 2:
        return False
    if a.shape[0] < len(tokens):  # two answers of the same wrong size: read as the last tokens' (<bos> dropped?)
        tokens = tokens[len(tokens) - a.shape[0]:]
    elif a.shape[0] > len(tokens):
        return bool((_targets(a) == _targets(b)).all())
    rows = [q for q in range(len(tokens)) if tokens[q] in tokens[:q]]
    return bool((_targets(a[rows]) == _targets(b[rows])).all())


def _right_targets(a, b, args) -> bool:
    """Right when every repeated word's top weight sits on the word after its latest earlier copy,
    and on nothing but words after earlier copies (a 1 after every earlier copy is right too)."""
    tokens = args[0]
    if a.shape != b.shape or a.shape != (len(tokens), len(tokens)):
        return False
    for q in [q for q in range(len(tokens)) if tokens[q] in tokens[:q]]:
        top = set(np.flatnonzero(a[q] >= a[q].max() - 1e-9)) if a[q].max() > 0 else set()
        after = {k + 1 for k in range(q) if tokens[k] == tokens[q]}
        if int(b[q].argmax()) not in top or not top <= after:
            return False
    return True


def _pattern_explain(value, expected, args):
    if value.ndim == 1 and value.shape[0] == expected.shape[0]:
        return (f"you returned one key position per query ({value.shape[0]} numbers): return the (T, T) array itself, "
                f"with a 1 at [q, key] in each row."), True
    if value.shape != expected.shape:
        return f"shape {value.shape}, expected {expected.shape} (queries × keys, one row per token).", False
    tokens = args[0]
    rows = [q for q in range(len(tokens)) if tokens[q] in tokens[:q]]
    if rows and all(value[q, 0] > 0 and value[q, int(expected[q].argmax())] >= value[q].max() for q in rows):
        return ("you gave the first token (<bos>) a 1 in the rows of repeated words too: there the 1 goes only after "
                "the earlier copy; <bos> gets it only in the rows of words seen for the first time."), True
    wrong = [q for q in rows if _targets(value[q:q + 1])[0] != expected[q].argmax()]
    ahead = [q for q in wrong if _targets(value[q:q + 1])[0] > q]
    if len(ahead) * 2 > len(wrong):
        return (f"for {len(ahead)} of {len(rows)} repeated words you point at a later word: a word can only look "
                f"back; find its earlier copy (k < q) and take the word after it."), True
    wrong = [tokens[q] for q in wrong]
    return (f"wrong for {len(wrong)} of {len(rows)} repeated words, e.g. '{wrong[0]}'. From a repeated word, look at "
            f"the word after its earlier copy."), False


def check_induction_prediction(student_fn, run: Run) -> Verdict:
    """student_fn(tokens) -> (T, T) predicted pattern; judged on the words that repeat an earlier
    word, on `run`'s tokens and on a longer list, then compared with the model's heads on `run`."""
    tokens = list(run.tokens)

    def praise(values):
        rows = [q for q in range(len(tokens)) if tokens[q] in tokens[:q]]
        right = induction_prediction(tokens)[rows].argmax(-1)
        attn = run.attentions[:, :, rows, right].float().mean(-1)  # (L, H): weight where you predicted
        l, h = np.unravel_index(int(attn.argmax()), attn.shape)
        return (f"✓ induction pattern: right for all {len(rows)} repeated words (and on a second, longer list). "
                f"In the model, L{l} H{h} puts {attn[l, h]:.2f} of its attention exactly there.")
    long = _repeat_tokens()
    return check(Exercise("induction pattern", [(f"{len(tokens)} tokens", (tokens,)), (f"a list of {len(long)} tokens", (long,))],
                   induction_prediction, PREDICT_INDUCTION_MISTAKES, read=_read_pattern, same=_same_targets, right=_right_targets,
                   explain=_pattern_explain, tensor=False, praise=praise, exact_inputs=True,
                   fixed="your function must read the tokens it is given."), student_fn)


# --- notebook 06: predict a knock-out ------------------------------------------------------------
def read_prediction(guess, args=()) -> tuple[float | None, str | None]:
    """A prediction as a fraction 0..1, or one line saying how to write it. A 0-d tensor or array is a number."""
    if isinstance(guess, (torch.Tensor, np.ndarray)) and guess.ndim == 0:
        guess = guess.item()
    if isinstance(guess, str):
        return None, f"write the prediction as a number between 0 and 1 (e.g. 0.5 for 50 %), not the text {guess!r}."
    if isinstance(guess, (fractions.Fraction, decimal.Decimal)):  # Fraction(4, 5) is 0.8
        guess = float(guess)
    if isinstance(guess, bool) or not isinstance(guess, (int, float, np.floating, np.integer)):
        return None, f"expected a number between 0 and 1, got {type(guess).__name__}."
    value = float(guess)
    if not np.isfinite(value):
        return None, f"the prediction is {value}; write a number between 0 and 1."
    if 1 < value <= 100:
        return None, f"{value:g} looks like a percentage; write it as a fraction between 0 and 1 ({value / 100:g})."
    if not 0 <= value <= 1:
        return None, f"{value:g} is not an accuracy; write a number between 0 and 1."
    return value, None


def check_knockout_prediction(predicted, lm: LanguageModel, relation: str, heads, mode: str = "zero",
                              tolerance: float = 0.07) -> float:
    """Measure the accuracy after the knock-out and compare it with the student's prediction (right
    within ±tolerance). Prints one line; returns the measured accuracy (assign it: `measured = ...`)."""
    return knockout_verdict(predicted, lm, relation, heads, mode, tolerance)[1]


def knockout_verdict(predicted, lm: LanguageModel, relation: str, heads, mode: str = "zero",
                     tolerance: float = 0.07) -> tuple[Verdict, float]:
    """check_knockout_prediction's work: prints the line; returns (the Verdict, the measured accuracy)."""
    measured, base = forced_accuracy(lm, relation, heads, mode), forced_accuracy(lm, relation)
    who = " and ".join(f"L{layer} H{head}" for layer, head in heads) or "no head"
    means = (f"Measured: {relation} accuracy {base:.0%} with all heads, {measured:.0%} without {who}: the model still "
             f"gets {measured:.0%} right, so {max(base - measured, 0):.0%} of its {relation} predictions needed {who}.")

    def explain(value, expected, args):
        return f"{knockout_direction(value, base, measured, who)} {means}", True
    slips = [M(f"{m.says} {means}", m.answer, code=m.code) for m in knockout_slips(base, measured, who)]
    verdict = check(Exercise("knock-out prediction", [("the prediction", ())], lambda: measured, slips, read=read_prediction,
                   same=lambda a, b, args: abs(a - b) <= 0.05 + 1e-9, right=lambda a, b, args: abs(a - b) <= tolerance + 1e-9,
                   explain=explain, tensor=False, exact_inputs=True,
                   praise=lambda values: f"✓ good prediction ({values[0]:.0%}). {means}"), predicted, plain_answer_ok=True)
    return verdict, measured
