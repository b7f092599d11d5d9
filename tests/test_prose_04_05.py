"""The sentences of notebooks 04 and 05 that state a result, each asserted on the shipped models.

Each test names the notebook cell or section it backs. What the notebooks print (and must not print)
is checked on their executed outputs in test_notebooks.py.
"""

from collections import Counter

import numpy as np
import pytest

import helpers as H
from helpers.core.catalog import manifest

pytestmark = pytest.mark.skipif("classroom" not in manifest(), reason="data/models.json lists no classroom model")

SENTENCE = ("I like to draw my picture . the cat near these big dogs is tired . "  # notebook 05, section 4
            "the girl sat on the mat because she was tired . the boy eats the red apple . "
            "list : red mat old fox . again : red mat old fox .")
LIST = "list : red mat old fox . again : red mat old fox ."  # notebook 05, Exercise 10
SHORT = "the cat near these big dogs is tired"  # notebook 05, section 8


@pytest.fixture(scope="module")
def lm():
    return H.load_model("classroom")


@pytest.fixture(scope="module")
def full(lm):
    return H.run_sentence(lm, SENTENCE)


@pytest.fixture(scope="module")
def tables(lm):
    return H.relation_scores(lm)


def bar_keys(attn: np.ndarray, rows: int = 3, weight: float = 0.5) -> list[int]:
    """The keys of a (T, T) map's short vertical bars: `rows` or more queries in a row that each put
    at least `weight` on the same earlier key (not themselves). One entry per bar."""
    top, share = attn.argmax(-1), attn.max(-1)
    keys, run = [], 1
    for q in range(1, len(attn)):
        same = top[q] == top[q - 1] != q and min(share[q], share[q - 1]) >= weight
        run = run + 1 if same else 1
        if run == rows:
            keys.append(int(top[q]))
    return keys


# --- 05 §4: what the 49-word grid shows (its numbers are claims in claims_05.py) ------------------
def test_05_the_grid_shows_bars_mostly_on_full_stops_and_lines_along_the_diagonal(full):
    """05 §4: short vertical bars, "More of the bars sit on a full stop than on any other word", thin
    lines along the diagonal; "the induction stripe of the list is only four words long"."""
    a = full.attentions.numpy()  # (L, H, T, T)
    tokens = full.tokens
    keys = Counter(tokens[k] for layer in a for attn in layer for k in bar_keys(attn))
    assert keys.most_common(1)[0][0] == "." and keys["."] > 1.5 * max(n for w, n in keys.items() if w != ".")
    heads_with_bars = sum(bool(bar_keys(attn)) for layer in a for attn in layer)
    assert heads_with_bars >= 72, heads_with_bars  # at least half of the cells show one
    T = len(tokens)
    near = sum(a[:, :, q, max(0, q - 2):q + 1].sum(-1) for q in range(1, T)) / (T - 1)  # (L, H)
    assert (near > 0.5).sum() >= 20  # heads that keep most of their weight within two words of the diagonal
    layer, head = 9, 6  # the best induction head (section 6)
    second = tokens.index("again") + 1  # the ":" after "again", then the second copy of the list
    predicted = H.induction_prediction(tokens)
    stripe = [q for q in range(second, T) if a[layer, head, q, predicted[q].argmax()] > 0.5]
    assert [tokens[q] for q in stripe] == [":", "red", "mat", "old"]


def test_05_the_long_sentence_rests_on_bos_far_less_than_the_short_one(lm, full):
    """05 §4: "The first column is much darker than for 'I like to draw'"; "No head puts more than half of its
    weight on <bos> here" (the counts 41 and 14 the sentences write are claims)."""
    short = H.first_token_scores(H.run_sentence(lm, "I like to draw").attentions)
    assert (short > 0.5).sum() >= 30 and (H.first_token_scores(full.attentions) > 0.5).sum() == 0


def test_05_bos_of_the_relations_is_what_the_score_table_calls_resting():
    """05 §4: `H.RELATIONS` prints `bos`; the score table of §5 (and 06) scores it as "resting"."""
    assert "bos" in H.RELATIONS and "resting" not in H.RELATIONS
    assert "resting" in H.SCORED_RELATIONS and "bos" not in H.SCORED_RELATIONS


def test_05_list_heads_need_the_again_marker(lm):
    """05 §4: "This model's induction heads are list heads: heads that copy a list after its `again :` marker.
    The same words repeated without the markers draw much less of their attention." Every head typed
    induction puts under half as much weight where the prediction says when the markers are gone, and
    none keeps more than 0.3."""
    types, _ = H.head_types(lm)
    heads = list(zip(*np.nonzero(types == "induction")))
    marked = H.run_sentence(lm, LIST)
    bare = H.run_sentence(lm, LIST.replace("list : ", "").replace("again : ", ""))  # the same words, no markers
    with_markers = np.asarray(H.induction_match(marked.attentions, marked.tokens)[0])
    without = np.asarray(H.induction_match(bare.attentions, bare.tokens)[0])
    assert len(heads) >= 4
    for layer, head in heads:
        assert without[layer, head] < 0.5 * with_markers[layer, head] and without[layer, head] < 0.3, (layer, head)


def test_05_the_best_pronoun_head_is_the_one_the_sentence_names(tables):
    """05 §5: "L9 H8 is the best pronoun head printed above (…), but its agreement score is higher (…)"
    (the scores are claims; its label, "agreement", is test_prose_06's test_05_grid_labels_agree_with_06)."""
    assert H.ranked_heads(tables, "pronoun", k=1)[0][0] == (9, 8)
    assert tables["agreement"][9, 8] > tables["pronoun"][9, 8]


# --- 05 §6: the token-link view on the list part ----------------------------------------------
def test_05_the_token_links_of_the_list_part_fit_a_screen_and_keep_the_query_whole(full, tables):
    """05 §6: the line view draws the list part only; the second 'red' keeps all its weight in it, and
    "From the second red the head looks at mat, the word that followed the first red"."""
    (layer, head), _ = H.ranked_heads(tables, "induction", k=1)[0]
    tokens, maps = full.tokens, full.attentions[layer, head]
    second_red = len(tokens) - 1 - tokens[::-1].index("red")
    start = tokens.index("list")
    assert float(maps[second_red, start:].sum()) >= 0.995 and tokens[int(maps[second_red].argmax())] == "mat"
    fig = H.plot_token_links(maps[start:, start:], tokens[start:], query=second_red - start)
    width, height = fig.get_size_inches() * 100  # pixels at the inline backend's 100 dpi
    assert height <= 700 and width <= 500, (width, height)


# --- 05 §8: the generic detectors, and rescaling ----------------------------------------------
def test_05_generic_detectors_find_no_duplicate_or_induction_head_on_the_classroom_model(lm, tables):
    """05 §8 (and 06 §7): on random tokens said twice the first-token detector finds a resting head, but
    the best duplicate and induction heads score under 0.1; the score table on the classroom language
    finds the induction heads (L9 H6, 0.96)."""
    generic = H.generic_scores(lm, length=min(20, (lm.config.n_ctx - 1) // 2))  # as notebook 05 calls it
    assert generic["first"].max() >= 0.9
    assert generic["duplicate"].max() < 0.1 and generic["induction"].max() < 0.1
    (layer, head), score = H.ranked_heads(tables, "induction", k=1)[0]
    assert (layer, head) == (9, 6) and score >= 0.9 and generic["induction"][layer, head] < 0.1


def test_05_rescaling_draws_a_resting_heads_small_remainder_at_full_brightness(lm):
    """05 §8: "rescaled to 1 that remainder is drawn as brightly as a head that really looks there" (the 0.98
    and 0.02 the sentence writes are claims)."""
    run = H.run_sentence(lm, SHORT)
    first = H.first_token_scores(run.attentions)  # (L, H)
    layer, head = np.unravel_index(first.argmax(), first.shape)
    raw = run.attentions[layer, head, 2:, 1:].numpy()  # rows after the first word, <bos> left out
    hidden = np.asarray(H.drop_first_token(run.attentions, mode="renormalise"))[layer, head, 2:, 1:]
    assert raw.max(-1).mean() < 0.03 and np.nanmax(hidden, -1).mean() >= 0.5


# --- 05 §9-10: the exercises ------------------------------------------------------------------
def test_05_the_determiner_row_names_the_previous_word_head(lm, tables):
    """05 §9: the determiner row's best head is the previous-word head, because a determiner's key is
    always the word just before the query (no determiner pair lies beyond the previous word)."""
    assert H.ranked_heads(tables, "determiner", k=1)[0][0] == H.ranked_heads(tables, "previous", k=1)[0][0] == (0, 9)
    beyond = H.relation_scores(lm, relations=["determiner"], beyond_previous=True)["determiner"]
    assert not np.isfinite(beyond).any()


def test_05_the_best_induction_head_looks_at_each_word_itself_in_the_first_copy(lm):
    """05 §10: on the exercise's list L9 H6 matches the prediction best; from ':', 'red', 'mat' and 'old' it
    looks at the word after the earlier copy; from the second 'fox' it looks at 'fox' itself, from the last
    '.' mostly at 'list'. In the first copy ('list' … 'fox') it looks at each word itself, not at <bos>.
    (The 0.98 and 0.66 the sentences write are claims.)"""
    repeat = H.run_sentence(lm, LIST)
    tokens, a = repeat.tokens, repeat.attentions.numpy()
    predicted = H.induction_prediction(tokens)
    rows = [q for q, word in enumerate(tokens) if word in tokens[:q]]
    on_prediction = (a * predicted).sum(-1)[:, :, rows].mean(-1)  # (L, H), as the notebook computes it
    (layer, head), _ = H.ranked_heads(on_prediction, k=1)[0]
    assert (layer, head) == (9, 6)
    m = a[layer, head]
    right = {tokens[q]: m[q, predicted[q].argmax()] for q in rows[:4]}
    assert list(right) == [":", "red", "mat", "old"] and min(right.values()) > 0.5
    fox, stop = rows[4], rows[5]
    assert tokens[fox] == "fox" and m[fox].argmax() == fox and m[fox, predicted[fox].argmax()] < 0.05
    assert tokens[m[stop].argmax()] == "list" and m[stop].max() > 0.5
    first_copy = list(range(1, tokens.index(".")))
    assert [tokens[q] for q in first_copy] == ["list", ":", "red", "mat", "old", "fox"]
    assert m[first_copy, first_copy].min() >= 0.95 and round(float(m[first_copy, first_copy].mean()), 2) == 0.99
    assert m[first_copy, 0].max() < 0.05  # not resting on <bos>


# --- 04 -----------------------------------------------------------------------------------------
def test_04_the_merge_example_names_heads_in_l_h_notation():
    """04 §6: the figure names its heads like notebooks 05 and 06 do ("L1 H2"), not "head 1.2"."""
    fig = H.plot_merge_example(H.SENTENCE, layer=1, first=0, group_size=3)
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles[:3] == [f"trained L1 H{h} (8 numbers)" for h in range(3)]
    assert titles[3].startswith("merged L1 H0–H2")


# --- 04 §4: what to look for in the slider -----------------------------------------------------
def test_04_what_to_look_for_in_the_slider():
    """04 §4: "In layer 0 most heads spread their attention over the last few words (about half of it on
    the word itself and the three before it) instead of picking one. In layer 1, from 3 heads on, a few
    heads put a third to a half of their attention on <bos>"; the 1- and 2-head models have no such head."""
    for n in H.HEAD_COUNTS:
        a = H.run_sentence(H.load_variant(n), H.SENTENCE).attentions.numpy()  # (2, n, T, T)
        T = a.shape[-1]
        recent = np.array([np.mean([a[0, h, q, q - 3:q + 1].sum() for q in range(4, T)]) for h in range(n)])
        previous = np.array([[np.mean([a[layer, h, q, q - 1] for q in range(1, T)]) for h in range(n)]
                             for layer in range(2)])
        on_bos = a[1, :, 1:, 0].mean(-1)  # layer 1: each head's mean weight on <bos>
        assert 0.4 <= np.median(recent) <= 0.65 and previous.max() < 0.3, (n, recent, previous.max())
        if n >= 3:
            assert 1 <= (on_bos >= 0.33).sum() <= 3 and on_bos.max() <= 0.55, (n, on_bos)
        else:
            assert on_bos.max() < 0.2, (n, on_bos)
