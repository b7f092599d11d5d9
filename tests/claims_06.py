"""Notebook 06's claims (tests/claims.py): its list heads measured with and without the list game's markers."""

from __future__ import annotations

import functools

import numpy as np

from claims import Claim
from helpers.analysis.relations import head_types
from helpers.analysis.repeats import marker_table, repeat_accuracy
from helpers.core.catalog import load_model

NOTEBOOK = "06"


@functools.lru_cache(maxsize=1)
def list_heads() -> dict:
    """{head: (with markers, without)} for every head typed induction, as section 4 types them."""
    lm = load_model("classroom")
    types, _ = head_types(lm)
    return marker_table(lm, [(int(l), int(h)) for l, h in zip(*np.nonzero(types == "induction"))])


def ranges() -> list[float]:
    """How many heads, their lowest and highest score without the markers, then with them."""
    with_markers, without = zip(*list_heads().values())
    return [len(without), min(without), max(without), min(with_markers), max(with_markers)]


def accuracies() -> list[float]:
    """The second copy said right, in %, without the markers then with them."""
    lm = load_model("classroom")
    return [100 * repeat_accuracy(lm, False), 100 * repeat_accuracy(lm, True)]


CLAIMS = [
    Claim(anchor=r"same words said twice inside a story but no", measure=ranges, tol=0.005),
    Claim(anchor=r"Without the markers the model says the second copy right", measure=accuracies, tol=0.5),
]
