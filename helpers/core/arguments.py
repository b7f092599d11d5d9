"""One check for every whole-number argument: layer, head, head count, size, index.

A notebook hands us numbers of many types: 4, numpy's np.int64(4) from an array, a
0-d tensor from .argmax(). All mean "4" and are accepted alike. 12.0, True, "4" and
out-of-range numbers are refused with one line naming the argument, the value and what
would work, so a student sees what to type instead of a traceback from deep inside.
"""

from __future__ import annotations

import operator


def is_whole_number(value) -> bool:
    """True for a whole number of any integer type; False for floats (12.0 too), bools, text."""
    if isinstance(value, bool) or "bool" in str(getattr(value, "dtype", "")):
        return False  # True is an int to Python, but never a head count a student meant
    if getattr(value, "ndim", 0) != 0:
        return False  # a one-element array or tensor still holds a list, not a number
    try:
        operator.index(value)  # what int, numpy and torch integers share, and floats lack
    except TypeError:
        return False
    return True


def whole_number(value, name: str, low: int | None = None, high: int | None = None,
                 valid: str | None = None, example: str | None = None) -> int:
    """`value` as a plain int in low..high (either end may be open), or a one-line ValueError.

    `valid` is how the message states the allowed values in the caller's words, e.g.
    "this model has layers 0..11"; by default it is built from low and high.
    `example` is added as ", e.g. {example}".
    """
    rule = valid or _default_rule(low, high)
    tail = f"{rule}, e.g. {example}." if example else f"{rule}."
    if not is_whole_number(value):
        raise ValueError(f"{name}={value!r} is not a whole number; {tail}")
    number = operator.index(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name}={number} is out of range; {tail}")
    return number


def _default_rule(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"use a whole number from {low} to {high}" if high >= low else "there is nothing to choose from"
    if low == 1:
        return "it must be a positive whole number"
    if low is not None:
        return f"it must be a whole number of at least {low}"
    if high is not None:
        return f"it must be a whole number of at most {high}"
    return "use a whole number such as 0, 1 or 2"


def of_type(value, name: str, types: type | tuple[type, ...], what: str) -> object:
    """`value` when it is one of `types`, else a one-line TypeError naming the argument, what it got and
    what to pass (`what`, e.g. "what H.one_head_animation() returns")."""
    if not isinstance(value, types):
        raise TypeError(f"{name} is a {type(value).__name__}; pass {what}.")
    return value
