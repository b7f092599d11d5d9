"""Captions are computed from the numbers a figure shows: each pattern is named with its measured share."""

import numpy as np
import pytest

from helpers.analysis import captions

TOKENS = ["<bos>", "red", "fox", ".", "red", "fox", "."]


def one_hot_rows(targets, T):
    a = np.zeros((T, T))
    for i, j in enumerate(targets):
        a[i, j] = 1.0
    return a


def test_a_previous_word_head_is_named_with_its_share():
    attn = one_hot_rows([0] + list(range(len(TOKENS) - 1)), len(TOKENS))  # each word looks one back
    assert captions.head_caption(attn, TOKENS, 4, 3) == "Layer 4, head 3: 100 % of the attention goes to the word just before."


def test_a_resting_head_and_an_induction_head():
    resting = one_hot_rows([0] * len(TOKENS), len(TOKENS))
    assert "100 % of the attention rests on <bos> or a full stop" in captions.head_caption(resting, TOKENS)
    # the second 'red', 'fox' and '.' look at the word after their first copy: 'fox' (2), '.' (3), 'red' (4)
    induction = one_hot_rows([0, 0, 1, 2, 2, 3, 4], len(TOKENS))
    share, n = captions.induction_share(induction, TOKENS)
    assert (share, n) == (1.0, 3)
    assert "after an earlier copy (over the 3 repeated words)" in captions.head_caption(induction, TOKENS)


def test_captions_follow_the_data():
    assert captions.loss_caption({1: 1.7, 2: 1.5, 4: 1.6}) == (
        "Held-out loss is lowest with 2 heads (1.50) and highest with 1 (1.70), all at the same width.")
    assert captions.word_caption([0.1, 0.7, 0.2], ["I", "like", "draw"], "draw").startswith(
        "'draw' gives its largest weight, 0.70, to 'like'")
    types = np.array([["induction", "none"], ["offset", "previous"]])
    assert captions.types_caption(types) == ("Of the 4 heads, 2 follow position (1 previous, 1 offset), 1 have a "
                                             "grammar job position cannot explain (1 induction) and 1 get no type.")
    maps = np.stack([np.stack([one_hot_rows([0] * 7, 7)] * 3)] * 2)  # 2 layers × 3 heads, all resting
    assert captions.all_heads_caption(maps, TOKENS).startswith("6 of the 6 heads put more than half")


def test_the_grid_counts_resting_heads_from_all_maps_at_once_as_from_each_map():
    rng = np.random.default_rng(0)
    for T in (2, 7, 30):
        logits = rng.normal(size=(3, 4, T, T)) * 3
        maps = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
        tokens = ["<bos>"] + [str(rng.choice(["w", ".", "x"])) for _ in range(T - 1)]
        each = np.array([[float(captions.resting_shares(maps[l, h], tokens)) for h in range(4)] for l in range(3)])
        assert np.array_equal(captions.resting_shares(maps, tokens), each)  # the same numbers, bit for bit
        counted = int((each > 0.5).sum())
        assert captions.all_heads_caption(maps, tokens).startswith(f"{counted} of the 12 heads")


@pytest.mark.parametrize("bad", [np.zeros((2, 2, 2)), "not a map"])
def test_a_caption_needs_a_map(bad):
    with pytest.raises((ValueError, IndexError)):
        captions.head_caption(bad, TOKENS)


def test_the_report_caption_names_who_beats_the_fixed_offset():
    rows = [{"relation": "previous", "head": (0, 9), "score": 0.96, "baseline": 1.0},
            {"relation": "agreement", "head": (9, 8), "score": 0.961, "baseline": 0.542},
            {"relation": "object", "head": (7, 10), "score": 0.95, "baseline": 1.0},
            {"relation": "determiner", "head": None, "score": float("nan"), "baseline": float("nan")}]
    assert captions.report_caption(rows) == ("Beyond the previous word, agreement beat the best fixed offset "
                                             "(0.96 vs 0.54); object do not (a fixed offset scores 1.00); "
                                             "determiner has no pair left.")


def test_induction_share_counts_every_repeated_word_as_notebook_05_does():
    """The second '.' repeats too: 3 repeated words (red, fox, .), as H.induction_match counts them."""
    induction = one_hot_rows([0, 0, 1, 2, 2, 3, 4], len(TOKENS))  # the second '.' looks at 'red' after the first '.'
    assert captions.induction_share(induction, TOKENS) == (1.0, 3)
    assert captions.induction_share(one_hot_rows([0] * 3, 3), ["<bos>", "a", "b"]) == (0.0, 0)
