"""The knock-out figure: next-word probabilities with all heads and with some removed."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..analysis.captions import bars_words
from ..analysis.knockout import check_head_list, head_label, next_word_change
from ..core.model import LanguageModel
from .common import describe, new_axes


def prediction_bars(lm: LanguageModel, sentence: str, heads_knocked=(), top_k: int = 5,
                    mode: str = "zero", ax=None) -> Figure:
    """Grouped bars: the next-word probabilities before and after the knock-out."""
    change = next_word_change(lm, sentence, heads_knocked, mode, top_k)
    return draw_bars(change, sentence, check_head_list(lm, heads_knocked), mode, ax)


def draw_bars(change: dict, sentence: str, heads: list, mode: str, ax=None) -> Figure:
    fig, ax = new_axes(ax, (6, 0.35 * len(change["words"]) + 1.4))
    y = np.arange(len(change["words"]))
    removed = ", ".join(head_label(*h) for h in heads[:6]) + (" ..." if len(heads) > 6 else "") or "nothing"
    ax.barh(y - 0.2, change["before"], height=0.4, color="#0072B2", label="all heads")
    ax.barh(y + 0.2, change["after"], height=0.4, color="#E69F00", label=f"without {removed} ({mode})")
    ax.set_yticks(y, change["words"])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability of the next word")
    ax.set_title(f"{sentence} ...", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=9, ncol=2, frameon=False)  # clear of the bars
    describe(ax, bars_words(change, sentence, removed, mode))
    return fig
