"""Claims: the numbers a notebook's sentences quote, checked by value, not by wording.

Each notebook has a table `tests/claims_NN.py` (the guide, docs/teaching.md: `claims_guide.py`) with `CLAIMS = [Claim(...), ...]`. A claim names
- `anchor`: a few words (a case-insensitive regular expression) that find its sentence in the notebook's
  markdown; exactly one sentence may match;
- `measure`: a function returning the numbers that sentence writes, in the order it writes them, as it
  writes them (a share of 0.905 written "91 %" is measured as 90.5, with `tol` 0.5);
- `tol`: how far a written number may be from the measured one (0.5 = "the rounding of a whole number").

tests/test_claims.py checks every claim: the measured numbers must appear, in order, among the numbers of the
sentence (other numbers may stand between them). A teacher who rewords a sentence and keeps its anchor words
and numbers passes; one who changes a number gets one line naming the sentence, the numbers written and the
numbers measured. Sentence splitting and number reading are below, in one place.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?")  # 45,056 · 0.62 · −0.14 · 12 (not the 3 of "L0H3")


@dataclass(frozen=True)
class Claim:
    anchor: str
    measure: Callable[[], Sequence[float]]
    tol: float = 0.5


def notebook_path(notebook: str) -> Path:
    return next((ROOT / "notebooks").glob(f"{notebook}_*.ipynb"))


def markdown(notebook: str) -> str:
    """The notebook's markdown cells, in order, HTML comments kept out of the way; "guide" is the teacher's
    guide, docs/teaching.md."""
    if notebook == "guide":
        text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    else:
        cells = json.loads(notebook_path(notebook).read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"<!--.*?-->", " ", text, flags=re.S)


def sentences(text: str) -> list[str]:
    """Sentences of markdown text: paragraphs, list items and table rows split at . ! ? (and a closing ** " or )
    after it) followed by a capital, a digit or a quote; whitespace flattened."""
    out = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+\.|\|)\s)", text):
        flat = " ".join(block.split())
        out += [s for s in re.split(r"(?:(?<=[.!?])|(?<=[.!?]\*\*)|(?<=[.!?][\"”)]))\s+(?=[A-Z0-9“\"(*_`$])", flat)
                if s.strip()]
    return out


def numbers(sentence: str) -> list[float]:
    """Every number written in a sentence, in order ("45,056" → 45056, "−0.14" → -0.14)."""
    return [float(m.replace(",", "").replace("−", "-")) for m in NUMBER.findall(sentence)]


def find_sentence(notebook: str, anchor: str, text: str | None = None) -> str:
    text = markdown(notebook) if text is None else text
    found = [s for s in sentences(text) if re.search(anchor, s, re.I)]
    if len(found) != 1:
        raise AssertionError(f"{notebook}: the claim anchored on {anchor!r} matches {len(found)} sentences"
                             f"{': ' + ' | '.join(s[:80] for s in found) if found else ''}; "
                             f"make the anchor match exactly one sentence (in tests/claims_{notebook}.py).")
    return found[0]


def in_order(measured: Sequence[float], written: Sequence[float], tol: float) -> bool:
    """Do the measured numbers appear among the written ones, in order, each within tol?"""
    i = 0
    for value in written:
        if i < len(measured) and abs(value - measured[i]) <= tol + 1e-9:
            i += 1
    return i == len(measured)


def check(notebook: str, claim: Claim, text: str | None = None) -> None:
    """One claim: raises AssertionError with one line naming the sentence, the numbers written and measured.
    text replaces the notebook's markdown (a test rewording a sentence)."""
    sentence = find_sentence(notebook, claim.anchor, text)
    measured = [float(v) for v in claim.measure()]
    written = numbers(sentence)
    if not in_order(measured, written, claim.tol):
        shown = ", ".join(f"{v:g}" for v in measured)
        raise AssertionError(f"{notebook}: “{sentence}” writes {', '.join(f'{v:g}' for v in written) or 'no number'};"
                             f" measured {shown} (tolerance {claim.tol:g}).")
