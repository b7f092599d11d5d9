"""The numbers notebook 06's sentences quote, each measured on the shipped classroom model (tests/claims.py
explains the table). Head names ("L9 H6") are not numbers to claims.py; test_prose_06.py and
test_head_analysis.py check which heads a sentence names.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import torch

import helpers as H
from claims import Claim
from helpers.analysis.knockout import LOW_SCORE, next_word_change
from helpers.analysis.relations import LEVEL, RESAMPLES, TYPE_THRESHOLD, GRAMMAR, relation_pairs
from helpers.analysis.repeats import marker_table, repeat_accuracy

NOTEBOOK = "06"


@cache
def model():
    return H.load_model("classroom")


@cache
def scored():
    """The 64 held-out stories and every attention map (stories, layers, heads, queries, keys)."""
    return H.scored_stories(model())


@cache
def tables():
    return H.relation_scores(model())


@cache
def beyond():
    return H.relation_scores(model(), beyond_previous=True)


@cache
def report() -> dict:
    return {row["relation"]: row for row in H.relation_report(model())}


@cache
def types():
    return H.head_types(model())[0]


def counts() -> dict:
    return H.type_counts(types())


@cache
def margins() -> dict:
    return {row["head"]: row for row in H.grammar_margins(model())}


def top_induction(k: int = 4) -> list:
    return [head for head, _ in H.ranked_heads(tables(), "induction", k=k)]


@cache
def layer0() -> dict:
    """Section 8's circuit: each layer-0 head removed alone, {head: accuracy, readers' score}."""
    return {row["head"][1]: row for row in H.layer_knockouts(model(), "induction", readers=top_induction(), layer=0)}


def knockout() -> dict:
    return H.knockout_summary(model(), "induction", tables()["induction"], k=4)


def attention_on(relation: str, layer: int, head: int) -> torch.Tensor:
    """One head's weight on the true key of every pair of a relation in the held-out stories."""
    stories, attn = scored()
    b, q, k = (torch.tensor(c) for c in zip(*relation_pairs(stories, relation)))
    return attn[b, layer, head, q, k]


# --- section 1-3 -------------------------------------------------------------------------------------------
def heads() -> list[float]:
    cfg = model().config
    return [cfg.n_layer * cfg.n_head]


def earlier_words() -> list[float]:
    """How many earlier words a query of a held-out story has on average (the even spread's 'about 30')."""
    stories, _ = scored()
    return [np.mean([q for s in stories for q in range(1, len(s.tokens))])]


def even_spread() -> list[float]:
    return [1 / earlier_words()[0]]


def n_stories() -> list[float]:
    return [len(scored()[0])]


# --- section 4: position first ----------------------------------------------------------------------------
def previous_score() -> list[float]:
    return [report()["previous"]["score"]]


def fixed_offsets() -> list[float]:
    """Beyond the previous word, how far back object and subject keys sit."""
    return [report()["object"]["offset"], report()["subject"]["offset"]]


def object_baseline() -> list[float]:
    return [report()["object"]["baseline"]]


def subject_baseline() -> list[float]:
    return [report()["subject"]["baseline"]]


def baselines_and_best() -> list[float]:
    rows = [report()[r] for r in ("agreement", "pronoun", "induction")]
    return [r["baseline"] for r in rows] + [r["score"] for r in rows]


def mostly_previous() -> list[float]:
    """Share of words (in %) at which L0 H9 puts more than half of its attention on the previous word."""
    return [100 * float((attention_on("previous", 0, 9) > 0.5).float().mean())]


def determiner_score() -> list[float]:
    return [tables()["determiner"][0, 9]]


def l6_h0_on_pronouns() -> list[float]:
    return [beyond()["pronoun"][6, 0], report()["pronoun"]["baseline"]]


def resting_best() -> list[float]:
    return [report()["resting"]["score"]]


def threshold() -> list[float]:
    return [TYPE_THRESHOLD]


def l0_h5() -> list[float]:
    return [tables()["previous"][0, 5]]


def positional() -> list[float]:
    c = counts()
    return [c["offset"], c["resting"], c["previous"] + c["offset"] + c["resting"]]


def grammar_counts() -> list[float]:
    c = counts()
    return [sum(c.get(r, 0) for r in GRAMMAR), c["agreement"], c["pronoun"], c["induction"]]


def untyped() -> list[float]:
    return [counts()["none"], types().size]


def summary_counts() -> list[float]:
    c = counts()
    return [types().size, c["previous"] + c["offset"] + c["resting"], grammar_counts()[0], c["none"]]


def clear_of_noise() -> list[float]:
    rows = margins().values()
    return [sum(r["clear"] for r in rows), len(rows)]


def clear_and_unclear() -> list[float]:
    rows = margins().values()
    return [sum(r["clear"] for r in rows), sum(not r["clear"] for r in rows)]


def margin_range(relation: str) -> list[float]:
    found = [r["margin"] for r in margins().values() if r["clear"] and r["relation"] == relation]
    return [len(found), min(found), max(found)]


def within_noise(head: tuple[int, int]) -> list[float]:
    r = margins()[head]
    return [r["margin"], r["pairs"], r["low"], r["high"]]


def offset_heads() -> np.ndarray:
    return types() == "offset"


def object_or_subject_heads() -> list[float]:
    """Offset heads scoring at least the type threshold on objects or subjects, and all offset heads."""
    b = beyond()
    high = offset_heads() & (np.maximum(b["object"], b["subject"]) >= TYPE_THRESHOLD)
    return [int(high.sum()), int(offset_heads().sum())]


def l6_h11() -> list[float]:
    return [beyond()["agreement"][6, 11], report()["agreement"]["offset"]]


def two_and_three_back() -> list[float]:
    back = H.back_scores(model(), (2, 3))
    return [float((back[2] + back[3])[offset_heads()].max())]


# --- section 5: list heads ---------------------------------------------------------------------------------
@cache
def list_heads() -> dict:
    """{head: (with markers, without)} for every head typed induction, as section 4 types them."""
    return marker_table(model(), [(int(l), int(h)) for l, h in zip(*np.nonzero(types() == "induction"))])


def without_markers() -> list[float]:
    with_markers, without = zip(*list_heads().values())
    return [len(without), min(without), max(without)]


def with_markers() -> list[float]:
    with_markers, _ = zip(*list_heads().values())
    return [min(with_markers), max(with_markers)]


def accuracies() -> list[float]:
    """The second copy said right, in %, without the markers then with them."""
    return [100 * repeat_accuracy(model(), False), 100 * repeat_accuracy(model(), True)]


# --- section 6: knock-outs ---------------------------------------------------------------------------------
def best_four_removed() -> list[float]:
    return [len(top_induction()), 100 * knockout()["best 4 removed"]]


def control() -> list[float]:
    return [4, LOW_SCORE]


def shared_jobs() -> list[float]:
    out = []
    for relation in ("agreement", "pronoun"):
        best = [head for head, _ in H.ranked_heads(tables(), relation, k=4)]
        out.append(100 * H.forced_accuracy(model(), relation, best))
    return out


@cache
def fox() -> tuple[float, float, float]:
    """P("fox") with all heads, P("fox") and P("horse") without the 4 best induction heads."""
    change = next_word_change(model(), H.KNOCKOUT_SENTENCE, top_induction())
    words = change["words"]
    return (float(change["before"][words.index("fox")]), float(change["after"][words.index("fox")]),
            float(change["after"][words.index("horse")]))


# --- section 8: the exercise and the circuit ----------------------------------------------------------------
def l0_h9_on_the_copy() -> list[float]:
    return [float(attention_on("induction", 0, 9).max())]


def readers_all() -> list[float]:
    return [H.readers_score(model(), "induction", top_induction())]


def l0_costs() -> list[float]:
    return [100 * H.forced_accuracy(model(), "induction"), 100 * layer0()[9]["accuracy"], 100 * layer0()[7]["accuracy"]]


def readers_without_l0_h9() -> list[float]:
    return readers_all() + [layer0()[9]["readers"]]


def readers_without_others() -> list[float]:
    others = [row["readers"] for head, row in layer0().items() if head != 9]
    return [min(others), max(others), layer0()[7]["readers"]]


def reader_layers() -> list[float]:
    layers = [layer for layer, _ in top_induction()]
    return [min(layers), max(layers)]


CLAIMS = [
    Claim(r"Notebook 05 showed all", heads, 0),
    Claim(r"sort the 144 heads", heads, 0),
    Claim(r"spreads its attention evenly over about", earlier_words, 2.5),
    Claim(r"spreads its attention evenly over about", even_spread, 0.005),
    Claim(r"First we run all", n_stories, 0),
    Claim(r"puts on average .* on the word just before", previous_score, 0.005),
    Claim(r"\(2 for objects, 3 for subjects\)", fixed_offsets, 0),
    Claim(r"So the baseline is", object_baseline, 0.005),
    Claim(r"So the baseline is", subject_baseline, 0.005),
    Claim(r"The baselines score only", baselines_and_best, 0.005),
    Claim(r"more than half of its attention on the previous word at", mostly_previous, 0.5),
    Claim(r"even higher for determiners", determiner_score, 0.005),
    Claim(r"On pronouns L6 H0 scores", l6_h0_on_pronouns, 0.005),
    Claim(r"puts at least .* of its attention on the previous word", threshold, 0),
    Claim(r"the relation it scores best on beyond the previous word", threshold, 0),
    Claim(r"otherwise \*\*offset\*\* if it reaches", threshold, 0),
    Claim(r"L0 H5 at just over", l0_h5, 0.05),
    Claim(r"that makes .* heads whose pattern position explains", positional, 0),
    Claim(r"heads have a grammar job that position cannot explain:", grammar_counts, 0),
    Claim(r"The other .* of the .* heads get no type", untyped, 0),
    Claim(r"follow position, \d+ have a grammar job that position cannot explain, and", lambda: summary_counts()[1:], 0),
    Claim(r"grammar heads, the lead over the baseline", clear_of_noise, 0),
    Claim(r"beat the baseline on these", n_stories, 0),
    Claim(r"a 95 % interval for the margin", lambda: [100 * LEVEL], 0),
    Claim(r"resamplings of the relation's pairs", lambda: [RESAMPLES], 0),
    Claim(r"The middle .* of those margins", lambda: [100 * LEVEL], 0),
    Claim(r"induction heads, by", lambda: margin_range("induction"), 0.005),
    Claim(r"agreement heads, by", lambda: margin_range("agreement"), 0.005),
    Claim(r"the pronoun head L6 H0, by", lambda: [margins()[(6, 0)]["margin"]], 0.005),
    Claim(r"L6 H10 leads by", lambda: within_noise((6, 10)), 0.005),
    Claim(r"L10 H0 leads by", lambda: within_noise((10, 0)), 0.005),
    Claim(r"So count .* heads with a grammar job", clear_and_unclear, 0),
    Claim(r"offset heads are object and subject heads", object_or_subject_heads, 0),
    Claim(r"The last is L6 H11", l6_h11, 0.005),
    Claim(r"none of the .* gives a quarter", lambda: [offset_heads().sum()], 0),
    Claim(r"To the two words together", two_and_three_back, 0.005),
    Claim(r"So they look there at objects and subjects", lambda: object_or_subject_heads() + threshold(), 0),
    Claim(r"There the .* induction heads put only", without_markers, 0.005),
    Claim(r"With the markers they put", with_markers, 0.005),
    Claim(r"Without the markers the model says the second copy right", accuracies, 0.5),
    Claim(r"We draw .* heads at random among those scoring below", control, 0),
    Claim(r"the model says the second copy of a list right only", best_four_removed, 0.5),
    Claim(r"keep more than .* without their best four", shared_jobs, 0.5),
    Claim(r"the model is sure the next word is", lambda: [fox()[0]], 0.005),
    Claim(r"\"fox\" falls to about", lambda: [fox()[1]], 0.005),
    Claim(r"The model then puts", lambda: [fox()[2]], 0.005),
    Claim(r"it puts at most", l0_h9_on_the_copy, 0.0005),
    Claim(r"their mean induction score", readers_all, 0.005),
    Claim(r"drops from .* %, and without L0 H7", l0_costs, 0.5),
    Claim(r"their score falls from", readers_without_l0_h9, 0.005),
    Claim(r"Without any other layer-0 head it stays between", readers_without_others, 0.005),
    Claim(r"The induction heads in layers", reader_layers, 0),
    Claim(r"without it they still find the right word", lambda: [layer0()[7]["readers"]], 0.005),
    Claim(r"The best resting head", resting_best, 0.005),
    Claim(r"Without L0 H9 the list drops to", lambda: [100 * layer0()[9]["accuracy"]], 0.5),
]
