"""The class at a glance, for the start of the next lesson: per exercise, how many students were right,
made a named mistake, got a generic or raised answer, or did not attempt it (one bar each), with the
most common mistake's code written beside its bar."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .common import new_axes
from .slide import SIZES, legible_ticks

# Okabe-Ito colours: told apart with every common colour-vision deficiency.
PARTS = (("right", "#009E73"), ("named mistake", "#D55E00"), ("generic", "#E69F00"),
         ("raised / too slow", "#CC79A7"), ("not attempted", "#BBBBBB"))


def _parts(ex: dict) -> list[int]:
    named = sum(m["count"] for m in ex["mistakes"])
    generic = sum(g["count"] for g in ex["generic"])
    raised = sum(g["count"] for g in ex["raised"]) + ex["too_slow"]
    return [ex["right"], named, generic, raised, len(ex["not_attempted"])]


def plot_class_mistakes(facts: dict, ax: Axes | None = None) -> Figure:
    """Stacked bars, one per exercise (first at the top): what the students who handed it in got."""
    exercises = facts["exercises"]
    if not exercises:
        raise ValueError("no exercise was graded: pass submissions of lessons 01-07 to python -m helpers.grade.")
    fig, ax = new_axes(ax, SIZES["16:9"])
    labels = [ex["column"] for ex in exercises]
    y = list(range(len(exercises)))[::-1]
    left = [0] * len(exercises)
    for k, (name, colour) in enumerate(PARTS):
        widths = [_parts(ex)[k] for ex in exercises]
        ax.barh(y, widths, left=left, color=colour, edgecolor="white", height=0.75, label=name)
        left = [a + b for a, b in zip(left, widths)]
    most = max(left) or 1
    for yi, ex, end in zip(y, exercises, left):
        if ex["mistakes"]:
            top = ex["mistakes"][0]
            ax.text(end + most * 0.01, yi, f"{top['code']} × {top['count']}", va="center", fontsize=14)
    ax.set_yticks(y, labels, fontsize=14)
    ax.set_xlim(0, most * 1.5)  # room for the longest code beside its bar
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"students ({facts['students']} in the class); beside each bar its most common named mistake",
                  fontsize=14)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=len(PARTS), fontsize=14,
               frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    legible_ticks(fig)
    return fig
