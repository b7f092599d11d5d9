"""Plot helpers: they draw what they say, label the axes, take ax=None and return the Figure."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

import helpers as H
from helpers.core.attention import multi_head
from helpers.figures import plots

TOKENS = ["I", "like", "to", "draw"]
W = torch.tensor([[1.0, 0, 0, 0], [0.7, 0.3, 0, 0], [0.1, 0.4, 0.5, 0], [0.62, 0.12, 0.19, 0.07]])


def test_attention_map_rows_are_queries_and_columns_keys():
    fig = plots.plot_attention(W, TOKENS, title="map")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert "query" in ax.get_ylabel() and "key" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert np.allclose(ax.images[0].get_array(), W.numpy())
    cells = [t.get_text() for t in ax.texts]
    assert "0.62" in cells and len(cells) == 16  # small maps are annotated
    assert ax.get_title() == "map"


def test_attention_map_draws_into_a_given_axes_and_skips_numbers_when_big():
    fig = Figure()
    ax = fig.add_subplot()
    big = torch.rand(20, 20).softmax(-1)
    assert plots.plot_attention(big, [f"w{i}" for i in range(20)], ax=ax, colorbar=False) is fig
    assert len(ax.texts) == 0


def test_word_weights_bar_chart():
    fig = plots.plot_word_weights(W[3], TOKENS, "draw")
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert np.allclose(heights, W[3].numpy())
    assert "draw" in ax.get_ylabel() and "draw" in ax.get_title()
    assert plots.plot_word_weights(W[3].numpy(), TOKENS, 3).axes[0].get_ylabel().endswith("'draw'")


def test_heads_grid_matmul_recombination_and_vectors():
    fig = plots.plot_heads(torch.rand(12, 4, 4).softmax(-1), TOKENS, title="12 heads")
    assert len([a for a in fig.axes if a.get_visible()]) == 12 + 1  # the maps and one colour bar
    fig = plots.plot_matmul((1, 768), (768, 64), ("draw", "W_Q", "query"))
    assert "[1 × 768] · [768 × 64] → [1 × 64]" in fig.axes[0].get_title()
    steps = multi_head(torch.randn(4, 48), *(torch.randn(3, 48, 16) for _ in range(3)), torch.randn(3, 16, 48))
    fig = plots.plot_recombination(steps, 3, TOKENS)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"head {h}: z [1 × 16]" for h in range(3)]
    assert len(ax.images) == 1 + 3 + 1 and len(fig.axes) == 2  # concat, one row per head, the sum; a colour bar
    assert "'draw'" in ax.get_title() and "[1 × 48] · [48 × 48]" in ax.get_title()


def test_heads_grid_has_one_shared_colour_bar_and_legible_outer_labels():
    weights = torch.rand(12, 4, 4).softmax(-1)
    fig = plots.plot_heads(weights, TOKENS, title="12 heads")
    heads = [a for a in fig.axes if a.images]
    bars = [a for a in fig.axes if not a.images]  # the colour bar's axes holds no image of its own
    assert len(heads) == 12 and len(bars) == 1 and bars[0].get_ylabel() == "attention weight"
    assert bars[0].get_ylim() == (0.0, 1.0)
    assert {a.images[0].get_clim() for a in heads} == {(0.0, 1.0)}  # one scale for every head: the bar's
    for k, ax in enumerate(heads):
        xs, ys = ([t for t in labels if t.get_visible()] for labels in (ax.get_xticklabels(), ax.get_yticklabels()))
        assert all(t.get_fontsize() >= plots.HEADS_FS for t in xs + ys + [ax.title])
        assert [t.get_text() for t in ys] == (TOKENS if k % 6 == 0 else [])  # tokens on the left column only
        assert [t.get_text() for t in xs] == (TOKENS if k >= 6 else [])  # and along the bottom row
    assert np.allclose(heads[5].images[0].get_array(), weights[5].numpy())
    with H.slide_style():  # the projector style's bigger sizes win
        fig = plots.plot_heads(weights, TOKENS)
    assert fig.axes[0].get_yticklabels()[0].get_fontsize() == 16


def test_plots_never_touch_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plots.plot_attention(W, TOKENS)
    plots.plot_heads(torch.rand(3, 4, 4), TOKENS)
    assert plt.get_fignums() == before


@pytest.mark.parametrize("call", [
    lambda: plots.plot_attention(W, TOKENS[:3]),
    lambda: plots.plot_attention(W[0], TOKENS),
    lambda: plots.plot_word_weights(W[0], TOKENS[:2], "I"),
    lambda: plots.plot_matmul((1, 768), (64, 768)),
    lambda: plots.plot_recombination(torch.randn(2, 3, 6), 0),
    lambda: plots.plot_recombination(multi_head(torch.randn(4, 6), *(torch.randn(2, 6, 3) for _ in range(3)), torch.randn(2, 3, 6)), 4),
])
def test_bad_input_gives_one_line_errors(call):
    with pytest.raises(ValueError) as err:
        call()
    assert "\n" not in str(err.value)


def test_a_map_with_nan_is_drawn_and_said_in_one_line():
    """A NaN weight was drawn blank without a word, where a reader takes the gap for 0 (sweep 25)."""
    nan_map = W.numpy().astype(float)
    nan_map[2, :] = np.nan  # a row masked with -inf everywhere, after softmax
    with pytest.warns(UserWarning, match=r"hold 4 NaN or inf value\(s\), the first in row 2 \('to'\), column 0"):
        assert isinstance(plots.plot_attention(nan_map, TOKENS), Figure)
