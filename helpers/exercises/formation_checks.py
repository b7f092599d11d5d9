"""Checks of notebook 08: the formation step read off a score curve, and a knock-out predicted before and
after that step. Both go through the one verdict engine (grading.py); the mistakes are the readings of a
curve students really make (the steepest rise instead of the crossing, one snapshot early, tokens for steps).
"""

from __future__ import annotations

import numpy as np
import torch

from ..analysis.formation import THRESHOLD, first_step_above, formation, shipped_record, steepest_rise
from ..core.arguments import is_whole_number
from .grading import check
from .head_checks import read_prediction
from .verdict import Exercise, Mistake as M, Verdict


def read_step(got, args) -> tuple[int | None, str | None]:
    """The answer as a whole step number (None: the head never formed), or one line saying what to return instead."""
    if got is None:
        return None, None
    if isinstance(got, (float, np.floating)) and not float(got).is_integer():
        return None, f"{got:g} is not a step: return one of the steps in `steps` (a whole number)."
    if not is_whole_number(got) and not (isinstance(got, (float, np.floating)) and float(got).is_integer()):
        return None, f"expected a step number such as 80, got {type(got).__name__} {got!r:.40}."
    return int(got), None


def _index(steps, scores) -> int:
    return int(np.flatnonzero(np.asarray(scores) >= THRESHOLD)[0])


CURVES = (  # (steps, one head's induction score at each, tokens per step): the crossing, the steepest rise,
    # the snapshot before and the peak fall on different steps in at least one curve; the last curve never
    # reaches 0.5 (a head that did not form: the answer is None)
    ([0, 10, 20, 40, 80, 160, 320], [0.05, 0.06, 0.1, 0.3, 0.5, 0.7, 0.9], 2048),
    ([0, 50, 100, 150, 200, 250, 300, 350, 400, 450], [0.02, 0.03, 0.05, 0.2, 0.48, 0.56, 0.9, 0.93, 0.95, 0.94], 1024),
    ([0, 1, 3, 7, 15, 31, 63, 127, 255], [0.1, 0.12, 0.2, 0.6, 0.62, 0.7, 0.74, 0.8, 0.85], 512),
    ([0, 20, 40, 60, 120, 240], [0.03, 0.05, 0.2, 0.41, 0.44, 0.47], 256),
    # a noisy run: 0.5 reached, then a dip below it (the first crossing counts; a search that assumes sorted
    # scores, bisect, finds a later one), and snapshots that start after the crossing (a loop from index 1 misses it)
    ([0, 10, 20, 30, 40, 50, 60], [0.1, 0.55, 0.4, 0.45, 0.52, 0.7, 0.8], 1024),
    ([500, 600, 700, 800], [0.52, 0.61, 0.66, 0.7], 512),
)
NEVER = "the score never reaches 0.5 on this curve, so the head never formed: return None there"


def _or(fallback):
    """The crossing, or `fallback(steps, scores)` on a curve that never reaches 0.5 (what it returns, or raises)."""
    def answer(s, v, t):
        step = first_step_above(s, v, THRESHOLD)
        return fallback(s, v) if step is None else step
    return answer


def _crossed(slip):
    """A misreading of the crossing, and None where the curve never crosses (a loop that finds no crossing
    falls through to the stub's None): the slip says nothing about such a curve."""
    def answer(s, v, t):
        return None if max(v) < THRESHOLD else slip(s, v, t)
    return answer


def _label(s, v) -> str:
    return f"{len(s)} snapshots up to step {s[-1]}" + ("" if max(v) >= THRESHOLD else ", never reaching 0.5")

FORMATION_STEP = Exercise(
    "formation step", [(_label(s, v), (s, v, t)) for s, v, t in CURVES],
    lambda s, v, t: first_step_above(s, v, THRESHOLD), [
        M("that is where the score rises fastest, not where it first reaches 0.5: the head has formed once its "
          "score reaches the threshold.", lambda s, v, t: steepest_rise(s, v), code="steepest_rise"),
        M("that is the last snapshot below 0.5, one too early: return the first step whose score reaches 0.5.",
          _crossed(lambda s, v, t: s[max(_index(s, v) - 1, 0)]), code="snapshot_before"),  # a loop from index 1
        M("that is the snapshot after the first to reach 0.5, one too late: return steps[i] for the first i whose "
          "score is >= 0.5, not steps[i + 1].", _crossed(lambda s, v, t: s[min(_index(s, v) + 1, len(s) - 1)]),
          code="snapshot_after"),
        M("that is the position in the list, not the step: return steps[i], not i.",
          _crossed(lambda s, v, t: _index(s, v)), code="index_not_step"),
        M("that counts tokens, not steps: each step reads tokens_per_step tokens, so return the step itself.",
          _crossed(lambda s, v, t: s[_index(s, v)] * t), code="tokens_not_steps"),
        M("you asked for a score above 0.5; reaching 0.5 counts (>=, not >).",
          lambda s, v, t: first_step_above(s, np.asarray(v) - 1e-9, THRESHOLD), code="strictly_above"),
        M("that is the step of the highest score; the head formed when it first reached 0.5.",
          lambda s, v, t: s[int(np.argmax(v))], code="peak_step"),
        M(f"{NEVER}, not the last step.", _or(lambda s, v: s[-1]), code="never_last_step"),
        M(f"{NEVER}, not -1.", _or(lambda s, v: -1), code="never_minus_one"),
        M(f"{NEVER}, not 0.", _or(lambda s, v: 0), code="never_zero"),
        M(f"{NEVER} (after the loop: return None), not an index into an empty list.",
          _or(lambda s, v: [x for x, y in zip(s, v) if y >= THRESHOLD][0]), code="never_list_index"),
        M(f"{NEVER} (check that any score reaches it first), not an index into an empty array.",
          _or(lambda s, v: s[np.flatnonzero(np.asarray(v) >= THRESHOLD)[0]]), code="never_array_index"),
        M(f"{NEVER}: next(...) with no step raises StopIteration; give it a default, next(..., None).",
          _or(lambda s, v: next(x for x, y in zip(s, v) if y >= THRESHOLD)), code="never_next"),
    ], read=read_step, same=lambda a, b, args: a == b, tensor=False, show_case=True, none_is_answer=True,
    explain=lambda value, expected, args: (_step_property(value, expected, args), False))


def _step_property(value, expected, args) -> str:
    """Which property the returned step fails: not a step of the curve, below 0.5, or not the first to reach it."""
    steps, scores, _ = args
    if value is None:
        return f"you returned None, but the score reaches 0.5 at step {expected}: return the first step whose score is >= 0.5."
    if value not in list(steps):
        return f"{value} is not one of the curve's steps: return a step from `steps`, the first whose score is >= 0.5."
    score = scores[list(steps).index(value)]
    if score < THRESHOLD:
        return f"at your step {value} the score is {score:g}, below 0.5: return the first step whose score is >= 0.5."
    if expected in list(steps) and scores[list(steps).index(expected)] == THRESHOLD and \
            value == next(x for x, y in zip(steps, scores) if y > THRESHOLD):  # the first step above: `score > 0.5`
        return (f"at your step {value} the score is {score:g}, but at step {expected} it is exactly 0.5, which "
                f"reaches 0.5: compare with >=, not >.")
    return (f"at your step {value} the score is {score:g}, but an earlier step, {expected}, already reaches 0.5: return "
            f"the first one.")


def check_formation_step(fn) -> Verdict:
    """Exercise: fn(steps, scores, tokens_per_step) -> the first step whose score reaches 0.5."""
    return check(FORMATION_STEP, fn)


def knockout_moments(record: dict | None = None) -> dict:
    """The two moments the prediction asks about: the last snapshot before the circuit forms (before its
    previous-word head reaches 0.5, or before the induction head when no previous-word head forms) and the
    end, with the list accuracy with every head and without layer 0's previous-word head (shipped record)."""
    record = shipped_record() if record is None else record
    curves, knocked = record["curves"], record["knockouts"]["previous"]
    steps, found = list(curves["steps"]), formation(curves)
    before = steps.index(found["previous_step"] or found["step"]) - 1
    return {"steps": (steps[before], steps[-1]), "head": record["knockouts"]["heads"]["previous"],
            "with": (float(knocked["accuracy"][before]), float(knocked["accuracy"][-1])),
            "without": (float(knocked["accuracy_without"][before]), float(knocked["accuracy_without"][-1]))}


def knockout_slips(m: dict, tolerance: float = 0.07) -> list[M]:
    """The misconceptions a pair of predictions may come from, each as the pair it leads to; a slip whose pair
    lies within `tolerance` of the measured one is dropped (it could not be told from a right answer)."""
    (b0, b1), (w0, w1), who = m["with"], m["without"], f"L{m['head'][0]} H{m['head'][1]}"
    slips = [
        M(f"you predicted that removing {who} changes nothing. The induction head finds its key through what {who} "
          f"wrote: without it, it goes blind.", lambda: (b0, b1), code="no_effect"),
        M("those are the drops, not the accuracies left: the question asks for the list accuracy after the knock-out.",
          lambda: (max(b0 - w0, 0.0), max(b1 - w1, 0.0)), code="drop_not_accuracy"),
        M("before and after swapped: the first number is the step before the circuit forms, the second the end.",
          lambda: (w1, w0), code="swapped"),
    ]
    return [s for s in slips if max(abs(a - b) for a, b in zip(s.answer(), (w0, w1))) > tolerance]


def _which_off(guess: tuple, measured: tuple, tolerance: float) -> str:
    """Which of the two predictions is off, and by how much."""
    off = [f"{'before the circuit forms' if i == 0 else 'at the end'} you predicted {g:.0%}, {abs(g - m) * 100:.0f} points "
           f"{'above' if g > m else 'below'} what was measured" for i, (g, m) in enumerate(zip(guess, measured))
           if abs(g - m) > tolerance + 1e-9]
    return "; ".join(off).capitalize() + f" (more than {tolerance * 100:.0f} points off)." if off else "close, but not close enough."


def read_pair(guess, args=()) -> tuple[tuple | None, str | None]:
    """Two accuracies (before, after), each 0..1, or one line saying how to write them. An array or tensor
    of two numbers is two numbers."""
    if isinstance(guess, (np.ndarray, torch.Tensor)) and guess.ndim == 1:
        guess = list(guess)
    if not isinstance(guess, (tuple, list)) or len(guess) != 2:
        return None, "return two numbers: (accuracy left before the circuit forms, accuracy left at the end), e.g. (0.05, 0.5)."
    values = []
    for g in guess:
        value, problem = read_prediction(g)
        if problem:
            return None, problem
        values.append(value)
    return tuple(values), None


def check_knockout_along(predicted, tolerance: float = 0.07, record: dict | None = None,
                         moments: dict | None = None) -> Verdict:
    """Exercise: predicted() -> (list accuracy without the previous-word head before the circuit forms, at the end),
    right within ±tolerance each, compared with what the training command measured on the snapshots."""
    m = knockout_moments(record) if moments is None else moments  # moments: an earlier version's numbers
    means = (f"Measured without L{m['head'][0]} H{m['head'][1]}: {m['without'][0]:.0%} at step {m['steps'][0]} "
             f"(with every head {m['with'][0]:.0%}), {m['without'][1]:.0%} at step {m['steps'][1]} "
             f"(with every head {m['with'][1]:.0%}).")
    near = lambda a, b, t: all(abs(x - y) <= t + 1e-9 for x, y in zip(a, b))  # noqa: E731
    slips = [M(f"{s.says} {means}", s.answer, code=s.code) for s in knockout_slips(m, tolerance)]
    return check(Exercise("knock-out along training", [("the prediction", ())], lambda: m["without"], slips,
                          read=read_pair, same=lambda a, b, args: near(a, b, 0.03),
                          right=lambda a, b, args: near(a, b, tolerance), tensor=False, exact_inputs=True,
                          explain=lambda v, e, args: (f"{_which_off(v, e, tolerance)} {means}", True),
                          praise=lambda values: f"✓ good prediction. {means}"), predicted, plain_answer_ok=True)
