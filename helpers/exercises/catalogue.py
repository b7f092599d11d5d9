"""Every exercise of notebooks 01-08 and the capstone, with the stable code of each catalogued mistake.

A verdict's code is "<exercise key>.<mistake code>" (attention_weights.sqrt_of_T): the code names
the mistake, not its wording, so rewording a line keeps its code. This registry needs no model:
checks that build their Exercise from model data (the previous-word head, the induction pattern,
the knock-out, the capstone) are registered here with their static mistake lists.
tools/make_mistakes_doc.py writes docs/mistakes.md from it; tests/test_mistake_codes.py checks both
(its rules for codes: snake_case, each used once).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import attention_checks as A
from . import capstone, formation_checks, head_checks, headcount_checks, kv_checks
from . import multihead_checks as MH
from .verdict import ENGINE_CODES, Exercise, Mistake

EXAMPLE_KNOCKOUT = (0.90, 0.60, "L0 H9")  # (accuracy with all heads, without, the heads): numbers for the doc only


@dataclass(frozen=True)
class Entry:
    """One exercise: where it is, how its verdict line starts, and its mistakes as (code, line)."""

    notebook: str  # "01"
    key: str  # "attention_weights"
    title: str  # the name the verdict line starts with ("attention weights")
    check: str  # the check a notebook calls ("check_attention_weights")
    mistakes: tuple[tuple[str, str], ...]  # (code, the line it prints), in the order the check tries them
    pairs: tuple[tuple[str, str], ...] = ()  # two slips at once, each line the two single lines joined
    note: str = ""  # what the doc should say about the lines (example numbers, no notebook …)


def _entry(notebook: str, check: str, name: str, mistakes, pairs=(), note: str = "") -> Entry:
    """An exercise's entry: its key is the one the engine gives an Exercise of this name."""
    lines = tuple((m.code, m.says) if isinstance(m, Mistake) else m for m in mistakes)
    return Entry(notebook, Exercise(name, (), None).key, name, check, lines, tuple(pairs), note)


def _static(notebook: str, check: str, ex: Exercise) -> Entry:
    return _entry(notebook, check, ex.name, ex.mistakes)


def _knockout() -> Entry:
    base, measured, who = EXAMPLE_KNOCKOUT
    note = (f"The numbers are an example ({base:.0%} with all heads, {measured:.0%} without {who}); the check fills "
            f"in the measured ones and adds a line on what was measured.")
    return _entry("06", "check_knockout_prediction", "knock-out prediction", head_checks.knockout_slips(base, measured, who),
                  note=note)


def _knockout_along() -> Entry:
    example = {"steps": (552, 1953), "head": (0, 0), "with": (0.08, 1.0), "without": (0.04, 0.01)}
    return _entry("08", "check_knockout_along", "knock-out along training",
                  formation_checks.knockout_slips(example, tolerance=0),  # every code the check can name
                  note="The numbers are an example; the check fills in those measured on the shipped snapshots.")


def entries() -> list[Entry]:
    """Every exercise, in the order of the notebooks."""
    return [
        _static("01", "check_attention_weights", A.ATTENTION_WEIGHTS),
        _static("01", "check_masked_weights", A.MASKED_WEIGHTS),
        _static("01", "check_weighted_sum", A.WEIGHTED_SUM),
        _static("02", "check_one_head", MH.ONE_HEAD),
        _static("02", "check_split_heads", MH.SPLIT_HEADS),
        _static("03", "check_merge_heads", MH.MERGE_HEADS),
        _static("03", "check_recombine", MH.RECOMBINE),
        _entry("03", "check_multihead", capstone.NAME, *capstone.slip_lines(),
               note="The class MyMultiHead, loaded with walkthrough-12's trained weights."),
        _static("04", "check_head_size_and_params", headcount_checks.HEAD_SIZE_AND_PARAMS),
        _static("04", "check_concat_shape", headcount_checks.CONCAT_SHAPE),
        _entry("05", "check_previous_word_head", "previous-word head", head_checks.PREVIOUS_WORD_HEAD_MISTAKES),
        _entry("05", "check_induction_prediction", "induction pattern", head_checks.PREDICT_INDUCTION_MISTAKES),
        _knockout(),
        _static("07", "check_kv_cache", kv_checks.KV_CACHE),
        _static("07", "check_grouped_attention", kv_checks.GROUPED_ATTENTION),
        _static("08", "check_formation_step", formation_checks.FORMATION_STEP),
        _knockout_along(),
    ]


def engine_codes() -> dict[str, tuple[str, str]]:
    """code -> (outcome, what it means) for what any exercise can get (right, not_attempted, raised …)."""
    return dict(ENGINE_CODES)
