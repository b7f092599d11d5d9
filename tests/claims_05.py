"""The numbers notebook 05's sentences quote, each measured on the shipped models (tests/claims.py explains the table).

Head names ("L9 H6") are not numbers to claims.py; the tests in test_prose_04_05.py check which head a sentence names.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

import helpers as H
from claims import Claim
from claims_04 import list_head_markers
from helpers.analysis.detectors import PUBLISHED_GPT2_HEADS
from helpers.analysis.relations import TYPE_THRESHOLD, offset_baseline, relation_pairs, scored_stories
from helpers.core.evaluation import held_out_stories
from helpers.core.model import GPTConfig
from helpers.train import RECIPES

NOTEBOOK = "05"
SENTENCE = ("I like to draw my picture . the cat near these big dogs is tired . "  # section 4
            "the girl sat on the mat because she was tired . the boy eats the red apple . "
            "list : red mat old fox . again : red mat old fox .")
LIST = "list : red mat old fox . again : red mat old fox ."  # Exercise 10
SHORT = "the cat near these big dogs is tired"  # section 8


@cache
def model(name: str = "classroom"):
    return H.load_model(name)


@cache
def run(sentence: str):
    return H.run_sentence(model(), sentence)


@cache
def tables():
    return H.relation_scores(model())


@cache
def types_and_best():
    return H.head_types(model())


def sizes() -> list[float]:
    """The classroom model's layers, heads, GPT-2 small's width over its width, its width (the bridge of the title cell)."""
    cfg = model().config
    return [cfg.n_layer, cfg.n_head, GPTConfig(vocab_size=1).n_embd / cfg.n_embd, cfg.n_embd]


def resting(sentence: str) -> int:
    """Heads that put more than half of their attention on <bos> (section 3's printout)."""
    return int((H.first_token_scores(run(sentence).attentions) > 0.5).sum())


def cell_pixels() -> float:
    """Width of one cell of the 49-word grid on screen (the inline backend draws at 100 dpi)."""
    full = run(SENTENCE)
    fig = H.plot_all_heads(full.attentions, full.tokens)
    fig.set_dpi(100)
    FigureCanvasAgg(fig).draw()
    return fig.axes[0].get_window_extent().width / 12


def offsets() -> list[float]:
    """Beyond the previous word, how far back object keys and subject keys sit (one distance each)."""
    stories = held_out_stories(300)
    return [d for r in ("object", "subject")
            for d in sorted({q - k for _, q, k in relation_pairs(stories, r, beyond_previous=True)})]


def pronoun_head() -> list[float]:
    """The best pronoun head's pronoun score and its (higher) agreement score."""
    (layer, head), score = H.ranked_heads(tables(), "pronoun", k=1)[0]
    return [score, tables()["agreement"][layer, head]]


def offset_head() -> list[float]:
    """L0 H8's score on subject keys beyond the previous word, and the best fixed offset with its score."""
    _, best = types_and_best()
    stories, _ = scored_stories(model())
    offset, baseline = offset_baseline(stories, "subject", beyond_previous=True)
    return [best[0, 8], offset, baseline]


def most_resting_on_short() -> list[float]:
    """The most resting head's share on <bos> in section 8's short sentence, and what it leaves for the words."""
    share = float(H.first_token_scores(run(SHORT).attentions).max())
    return [share, 1 - share]


def list_head() -> tuple[np.ndarray, list[int], float]:
    """The best-matching head's map on the list, the repeated rows, and its mean weight where the prediction says."""
    repeat = run(LIST)
    table, rows = H.induction_match(repeat.attentions, repeat.tokens)
    (layer, head), score = H.ranked_heads(table, k=1)[0]
    return repeat.attentions[layer, head].numpy(), rows, score


def first_four_rows() -> list[float]:
    """The least weight the best list head puts on the word after the earlier copy, from ':', 'red', 'mat', 'old'."""
    m, rows, _ = list_head()
    predicted = H.induction_prediction(run(LIST).tokens)
    return [min(m[q, predicted[q].argmax()] for q in rows[:4])]


CLAIMS = [
    Claim(anchor=r"See every attention head of a 12-layer", measure=lambda: sizes()[:2], tol=0),
    Claim(anchor=r"a head worked with 64 numbers",
          measure=lambda: [model("walkthrough-12").config.d_head, model("walkthrough-12").config.n_embd,
                           model("walkthrough-12").config.n_head], tol=0),
    Claim(anchor=r"has GPT-2 small's layout", measure=sizes, tol=0),
    Claim(anchor=r"So each head works with",
          measure=lambda: [model().config.n_embd, model().config.n_head, model().config.d_head], tol=0),
    Claim(anchor=r"That makes 144 heads", measure=lambda: [model().config.n_layer * model().config.n_head], tol=0),
    Claim(anchor=r"of the 144 heads put more than half", measure=lambda: [resting("I like to draw"), 144], tol=0),
    Claim(anchor=r"The classroom language has \d+ relations", measure=lambda: [len(H.RELATIONS)], tol=0),
    Claim(anchor=r"each cell is too small", measure=lambda: [len(run(SENTENCE).tokens)], tol=0),
    Claim(anchor=r"heads do so on the full stops",
          measure=lambda: [int((H.word_scores(run(SENTENCE).attentions, run(SENTENCE).tokens, ".") > 0.5).sum())], tol=0),
    Claim(anchor=r"A cell of this grid is about", measure=lambda: [cell_pixels()], tol=10),
    Claim(anchor=r"a head whose best score reaches", measure=lambda: [TYPE_THRESHOLD], tol=0),
    Claim(anchor=r"it scores at least [\d.]+ on that relation", measure=lambda: [TYPE_THRESHOLD], tol=0),
    Claim(anchor=r"always sit 2 and 3 words back", measure=lambda: [TYPE_THRESHOLD, *offsets()], tol=0),
    Claim(anchor=r"is the best pronoun head printed above", measure=pronoun_head, tol=0.005),
    Claim(anchor=r"L0 H8, for example", measure=offset_head, tol=0.005),
    Claim(anchor=r"A head that puts [\d.]+ of its attention on `<bos>`", measure=most_resting_on_short, tol=0.005),
    Claim(anchor=r"steps of relay games alone", measure=lambda: [RECIPES["classroom"].relay_steps], tol=0),
    Claim(anchor=r"clear previous-token heads",
          measure=lambda: [float(f"{layer}.{head}") for layer, head in sorted(PUBLISHED_GPT2_HEADS["previous"])], tol=0),
    Claim(anchor=r"or more on the word after the earlier copy", measure=first_four_rows, tol=0.01),
    Claim(anchor=r"it averages [\d.]+ over the repeated words", measure=lambda: [list_head()[2]], tol=0.005),
]


CLAIMS.append(Claim(r"puts [\d.]+ on\s+the right word in a list game", lambda: list_head_markers("classroom"),
                    tol=0.005))
