"""An exercise as data: the inputs a check tries, the reference, and the catalogue of mistakes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .answers import read_tensor, same_tensor


@dataclass(frozen=True)
class Mistake:
    """A wrong variant of the reference (same arguments; it may raise) and the line that names it."""

    says: str
    answer: Callable
    code: str = ""  # stable and readable ("sqrt_of_T"): the verdict's code is "<exercise key>.<code>"


@dataclass
class Exercise:
    """What a check needs: the inputs to try, the reference, the mistakes, and how to read answers."""

    name: str
    cases: Sequence[tuple[str, tuple]]  # (label such as "Q, K [5 × 16]", the student's arguments)
    reference: Callable
    mistakes: Sequence[Mistake] = ()
    read: Callable = read_tensor  # (raw answer, args) -> (value, None) or (None, what is wrong)
    same: Callable = same_tensor  # (value, value, args) -> bool
    right: Callable | None = None  # (value, expected value, args) -> bool, when more than one answer is right
    explain: Callable | None = None  # (value, expected, args) -> (last-resort line, is it a named diagnosis?)
    fixed: str = ("something is fixed to the first input's size; compute it from the input's shape.")
    praise: Callable | None = None  # (the student's values, one per input) -> the ✓ line
    show_case: bool = False  # add "(input: expected …, got …)" to a wrong answer (small answers only)
    answers: dict = field(default_factory=dict, repr=False)  # (input, mistake) -> its read answer, made once
    shape_hint: str = ""
    sizes: str = "e.g. T = x.shape[0]"  # how this exercise's function reads its sizes from its inputs
    exact_inputs: bool = False  # True: the reference and mistakes see the student's dtype, not float64
    tensor: bool = field(default=True)  # the answer is numbers to compare (NaN, half precision, shape)
    none_is_answer: bool = False  # None is a right answer on some input (a head that never formed): the stub
    # is a function that returns None on every input
    key: str = ""  # the exercise's stable code ("attention_weights"); default: its name in snake_case

    def __post_init__(self):
        if not self.key:
            self.key = re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")
