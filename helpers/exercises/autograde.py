"""An exercise check as an autograder's test: nbgrader and otter-grader count a test that raises as failed.

    H.assert_passed(H.check_attention_weights(attention_weights))

The test reads the check's Verdict (never its printed text) and raises AssertionError carrying the
verdict's line, so the grader's feedback names the mistake and its fix.
"""

from __future__ import annotations

from .verdict import Verdict


def assert_passed(verdict: Verdict) -> Verdict:
    """Return the verdict when the check passed; else raise AssertionError with its line."""
    if not isinstance(verdict, Verdict):
        raise ValueError(f"assert_passed needs the Verdict a check returns, got {type(verdict).__name__}: "
                         f"pass it the result of H.check_…(…).")
    if not verdict.passed:
        raise AssertionError(verdict.line)
    return verdict
