"""Checks of notebooks 05 and 06: find a head in the grid, predict a pattern, a detector, a knock-out."""

from __future__ import annotations

import numpy as np
import torch

from ..analysis.detectors import first_token_scores, previous_token_scores
from ..analysis.knockout import forced_accuracy
from ..core.attention import mask_future
from ..core.model import LanguageModel
from ..core.run import Run
from .grading import NOT_ATTEMPTED, Case, call_student, check_cases


def _detector_case(L: int, H: int, T: int, seed: int) -> Case:
    g = torch.Generator().manual_seed(seed)
    attn = mask_future(torch.randn(L, H, T, T, generator=g)).softmax(-1)  # (L, H, T, T) causal maps
    attn[L - 1, H - 1] = torch.diag_embed(torch.ones(T - 1), offset=-1)[:T, :T] + torch.eye(T) * (torch.arange(T) == 0)
    diag = attn.diagonal(offset=-1, dim1=-2, dim2=-1)  # (L, H, T-1)
    expected = torch.as_tensor(previous_token_scores(attn)).float()
    return Case((attn,), expected, {
        "you looked at the token after (t + 1); in a causal model that weight is always 0.":
            attn.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1),
        "you scored each token's attention to itself (t, t) instead of to t - 1.": attn.diagonal(dim1=-2, dim2=-1).mean(-1),
        "you summed over the queries instead of averaging (a score should lie in 0..1).": diag.sum(-1),
        "you divided by T, counting the first token, which has no previous token.": diag.sum(-1) / T,
        "you took the largest weight instead of the mean over the queries.": diag.amax(-1),
        "the axes are swapped: return (layer, head), not (head, layer).": expected.T,
    }, label=f"attn [{L} × {H} × {T} × {T}]")


def check_previous_token_detector(student_fn) -> None:
    """student_fn(attn (L, H, T, T)) -> (L, H): mean attention from each token to the one before it."""
    check_cases("previous-token detector", student_fn, [_detector_case(3, 4, 9, 7), _detector_case(2, 3, 6, 17)],
                shape_hint="Average attn[l, h, t, t - 1] over t = 1 .. T-1 for each (layer, head).")


def read_prediction(guess) -> tuple[float | None, str | None]:
    """A prediction as a fraction 0..1, or one line saying how to write it."""
    if isinstance(guess, str):
        return None, f"write the prediction as a number between 0 and 1 (e.g. 0.5 for 50 %), not the text {guess!r}."
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
                              tolerance: float = 0.15) -> float:
    """Measure the accuracy after the knock-out and compare it with the student's prediction.
    Prints one line; returns the measured accuracy (assign it: `measured = ...`)."""
    guess, problem = call_student("knock-out prediction", predicted, plain_answer_ok=True)
    measured = forced_accuracy(lm, relation, heads, mode)
    base = forced_accuracy(lm, relation)
    line = f"{relation} accuracy: {base:.0%} with all heads, {measured:.0%} without {len(heads)} head(s)"
    value, bad = (None, None) if problem else read_prediction(guess)
    if problem:  # the measured number would give the answer away before a prediction
        print(problem)
    elif bad:
        print(f"✗ knock-out prediction: {bad} Measured: {line}.")
    elif abs(value - measured) <= tolerance:
        print(f"✓ good prediction ({value:.0%}). Measured: {line}.")
    else:
        print(f"✗ you predicted {value:.0%}. Measured: {line}. What else do these heads feed?")
    return measured


# --- notebook 05's exercises: find heads in the grid -------------------------------------
def induction_prediction(tokens) -> np.ndarray:
    """Where an induction head looks (T, T): from each word to the word after its latest
    earlier copy; a word seen for the first time rests on the first token."""
    T = len(tokens)
    pattern = np.zeros((T, T))
    for q, word in enumerate(tokens):
        copies = [k for k in range(q) if tokens[k] == word]
        pattern[q, copies[-1] + 1 if copies else 0] = 1.0
    return pattern


def _planted_maps(L: int = 2, H: int = 3, T: int = 7, at: tuple[int, int] = (1, 0)) -> torch.Tensor:
    """Random causal maps (L, H, T, T) with one sharp previous-word head at `at`: a second input
    of another size, so an answer fixed to the first one is caught."""
    g = torch.Generator().manual_seed(5)
    a = (torch.randn(L, H, T, T, generator=g) * 2).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1),
                                                                float("-inf")).softmax(-1)
    a[at] = torch.diag_embed(torch.ones(T - 1), offset=-1) + torch.eye(T) * (torch.arange(T) == 0)
    return a


def _judge_head(got, a: torch.Tensor) -> tuple[bool, str]:
    """(passed, line) for an answer (layer, head) on the maps a (L, H, T, T)."""

    L, H = a.shape[:2]
    if isinstance(got, (str, bytes)) or not hasattr(got, "__len__") or len(got) != 2:
        return False, f"✗ previous-word head: expected (layer, head), got {type(got).__name__} {got!r:.40}."
    try:
        layer, head = (int(x) for x in got)
    except (TypeError, ValueError, RuntimeError):
        return False, f"✗ previous-word head: expected two whole numbers (layer, head), got {got!r:.40}."
    if not (0 <= layer < L and 0 <= head < H):
        return False, f"✗ previous-word head: there is no head ({layer}, {head}); layers 0..{L - 1}, heads 0..{H - 1}."
    prev = previous_token_scores(a)  # (L, H): mean weight on the word just before
    best = np.unravel_index(prev.argmax(), prev.shape)
    said = f"L{layer} H{head} puts {prev[layer, head]:.2f} on the previous word on average"
    if prev[layer, head] >= prev.max() - 0.02:
        return True, f"✓ previous-word head: {said} (best L{best[0]} H{best[1]}: {prev.max():.2f})"
    itself = a.diagonal(dim1=-2, dim2=-1).mean(-1).numpy()  # (L, H): weight on the word itself
    hints = {_top(itself): "that head looks at the word itself (the diagonal), not one word to the left.",
             _top(first_token_scores(a)): "that head rests on the first token (a bright first column).",
             _top(a.diagonal(offset=-2, dim1=-2, dim2=-1).mean(-1).numpy()): "that head looks two words back.",
             (int(best[1]), int(best[0])): "you swapped layer and head: rows are layers, columns heads."}
    hint = hints.get((layer, head), "look for a bright line just below the diagonal.")
    return False, f"✗ previous-word head: {said}; {hint} The best is L{best[0]} H{best[1]} ({prev.max():.2f})."


def check_previous_word_head(student_fn, attentions) -> None:
    """student_fn(attentions (L, H, T, T)) -> (layer, head). Passes when, on the model's maps and on
    planted maps of another size, it names (within 0.02) the head that looks most at the previous word."""
    maps = [torch.as_tensor(attentions).float(), _planted_maps()]
    lines = []
    for n, a in enumerate(maps):
        with torch.no_grad():
            got, problem = call_student("previous-word head", student_fn, a.clone())
        ok, line = (False, problem) if problem else _judge_head(got, a)
        if not ok:
            if n and NOT_ATTEMPTED not in line:
                line += (f" (on a second set of maps, {list(a.shape)}; your function must search the maps "
                         f"it is given, not return a fixed head)")
            return _say(line)
        lines.append(line)
    _say(f"{lines[0]}; also right on a second set of maps {list(maps[1].shape)}.")


def _repeat_tokens() -> list[str]:
    """A second, longer input for the induction check: a word list said three times."""
    words = ["<bos>", "list", ":", "cat", "sun", "cup", "old", "."]
    return words + ["again", ":", "cat", "sun", "cup", "old", "."] + ["again", ":", "cat", "sun"]


def _judge_pattern(got, tokens: list[str]) -> tuple[str | None, list[int], np.ndarray]:
    """(None or what is wrong, rows of the repeated words, the right key per such row)."""
    want = induction_prediction(tokens)
    rows = [q for q in range(len(tokens)) if tokens[q] in tokens[:q]]  # words seen before
    right = want[rows].argmax(-1)
    try:
        got = np.asarray(got.detach() if isinstance(got, torch.Tensor) else got, dtype=float)
    except (TypeError, ValueError):
        return f"expected a (T, T) array of numbers, got {type(got).__name__}.", rows, right
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape} (queries × keys).", rows, right
    if not np.isfinite(got).all():
        return "your array contains NaN or inf; put 1 where the head looks and 0 elsewhere.", rows, right
    picked = got[rows].argmax(-1)
    if (picked == right).all():
        return None, rows, right
    if (picked == right - 1).all():
        return ("you point at the earlier copy itself (a duplicate-token head); an induction head looks one "
                "word further, at what came next last time."), rows, right
    if (picked == np.array(rows) - 1).all():
        return "that is the previous word; look for the earlier copy instead.", rows, right
    if (picked == np.array(rows)).all():
        return "that is the word itself (the diagonal); look after its earlier copy.", rows, right
    first = [next(k for k in range(q) if tokens[k] == tokens[q]) + 1 for q in rows]
    if (picked == np.array(first)).all():
        return "you used the word after the *first* copy; use the latest earlier copy.", rows, right
    wrong = [tokens[q] for q, p, r in zip(rows, picked, right) if p != r]
    return (f"wrong for {len(wrong)} of {len(rows)} repeated words, e.g. '{wrong[0]}'. From a repeated word, "
            f"look at the word after its earlier copy."), rows, right


def check_induction_prediction(student_fn, run: Run) -> None:
    """student_fn(tokens) -> (T, T) predicted pattern; judged on the words that repeat an earlier
    word, on `run`'s tokens and on a longer list, then compared with the model's heads on `run`."""
    for n, tokens in enumerate([list(run.tokens), _repeat_tokens()]):
        got, problem = call_student("induction pattern", student_fn, list(tokens))
        if problem:
            return _say(problem)
        wrong, rows, right = _judge_pattern(got, tokens)
        if wrong:
            where = f" (on a second input of {len(tokens)} tokens)" if n else ""
            return _say(f"✗ induction pattern{where}: {wrong}")
        if n == 0:
            attn = run.attentions[:, :, rows, right].float().mean(-1)  # (L, H): weight where you predicted
            l, h = np.unravel_index(int(attn.argmax()), attn.shape)
            found = f"In the model, L{l} H{h} puts {attn[l, h]:.2f} of its attention exactly there."
            count = len(rows)
    _say(f"✓ induction pattern: right for all {count} repeated words (and on a second, longer list). {found}")


def _top(table: np.ndarray) -> tuple[int, int]:
    """(layer, head) of the largest entry of a (L, H) table."""
    l, h = np.unravel_index(int(np.argmax(table)), table.shape)
    return int(l), int(h)


def _say(line: str) -> None:
    print(line)
