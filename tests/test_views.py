"""The 144-head views: the mosaic layout, the plotted data, and export for slides."""

import xml.etree.ElementTree as ET

import numpy as np
import pypdf
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from PIL import Image

from helpers.figures.export import save_for_slides
from helpers.figures.mosaic import AllHeadsView, head_mosaic, mosaic_cell, plot_all_heads
from helpers.figures.views import HeadView, TokenLinksView, plot_head, plot_token_links


def random_maps(L=3, H=4, T=5, seed=0) -> np.ndarray:
    """Causal, row-normalised maps whose every entry differs, so a misplaced value shows."""
    g = np.random.default_rng(seed)
    a = g.random((L, H, T, T)) + 0.1
    a = np.tril(a)  # (L, H, T, T): rows are queries, only earlier keys
    return a / a.sum(-1, keepdims=True)


def test_mosaic_cell_holds_the_map_rows_queries_columns_keys():
    a = random_maps(L=3, H=4, T=5)
    mosaic = head_mosaic(a)
    assert mosaic.shape == (3 * 6 - 1, 4 * 6 - 1)
    for l in range(3):
        for h in range(4):
            np.testing.assert_array_equal(mosaic_cell(mosaic, l, h, 5), a[l, h])
            for q, k in [(4, 0), (0, 0), (3, 2)]:  # row = query, column = key, explicitly
                assert mosaic[l * 6 + q, h * 6 + k] == a[l, h, q, k]
    assert mosaic[1 * 6 + 4, 2 * 6 + 0] != mosaic[1 * 6 + 0, 2 * 6 + 4]  # not transposed: causal rows


def test_mosaic_gaps_are_nan_and_cells_are_not():
    a = random_maps(L=2, H=3, T=4)
    mosaic = head_mosaic(torch.tensor(a))  # tensors work too
    gap_rows, gap_cols = [4], [4, 9]
    assert np.isnan(mosaic[gap_rows, :]).all() and np.isnan(mosaic[:, gap_cols]).all()
    assert np.isnan(mosaic).sum() == mosaic.size - a.size


@pytest.mark.parametrize("bad", [np.zeros((2, 3, 4)), np.zeros((2, 3, 4, 5))])
def test_mosaic_rejects_wrong_shapes(bad):
    with pytest.raises(ValueError, match="rows are queries"):
        head_mosaic(bad)


def test_plot_all_heads_is_one_image_of_the_mosaic_with_labels():
    a = random_maps(L=12, H=12, T=4)
    fig = plot_all_heads(a, tokens=["<bos>", "I", "like", "draw"], highlight=(3, 7))
    assert isinstance(fig, Figure)
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 1  # one imshow, not 144
    np.testing.assert_array_equal(np.asarray(images[0].get_array().filled(np.nan)), head_mosaic(a))
    ax = images[0].axes
    rows = sorted((t.get_position()[1], t.get_text()) for t in ax.texts if t.get_text().startswith("L"))
    cols = sorted((t.get_position()[0], t.get_text()) for t in ax.texts if t.get_text().startswith("H"))
    assert [text for _, text in rows] == [f"L{l}" for l in range(12)]  # top to bottom
    assert [text for _, text in cols] == [f"H{h}" for h in range(12)]  # left to right
    assert [y for y, _ in rows] == [l * 5 + 1.5 for l in range(12)]  # the middle of each cell row
    assert len(fig.axes) == 2  # the grid and its one shared colour bar
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["0.0", "0.5", "1.0"]


def test_highlight_frames_exactly_the_selected_cell_and_moves_on_update():
    a = random_maps(L=4, H=5, T=6)
    view = AllHeadsView(a, highlight=(2, 3))
    x, y, w, h = view.rect.get_x(), view.rect.get_y(), view.rect.get_width(), view.rect.get_height()
    assert (x + 0.5, y + 0.5, w, h) == (3 * 7, 2 * 7, 6, 6) and view.rect.get_visible()
    image = view.image
    b = random_maps(L=4, H=5, T=6, seed=1)
    view.update(b, highlight=(0, 4))
    assert view.image is image  # the same artist, new data
    np.testing.assert_array_equal(image.get_array().filled(np.nan), head_mosaic(b))
    assert (view.rect.get_x() + 0.5, view.rect.get_y() + 0.5) == (4 * 7, 0)
    view.update(highlight=None)
    assert not view.rect.get_visible()
    with pytest.raises(ValueError, match="outside the grid"):
        view.update(highlight=(4, 0))


def test_update_to_a_longer_sentence_resizes_the_grid():
    view = AllHeadsView(random_maps(L=2, H=2, T=3))
    longer = random_maps(L=2, H=2, T=7)
    view.update(longer)
    assert view.image.get_array().shape == head_mosaic(longer).shape
    left, right, bottom, top = view.image.get_extent()
    assert (right - left, bottom - top) == (2 * 8 - 1, 2 * 8 - 1)


def test_plot_head_shows_the_map_with_the_words():
    a = random_maps(L=1, H=1, T=4)[0, 0]
    tokens = ["<bos>", "I", "like", "draw"]
    fig = plot_head(a, tokens, title="L0 H0")
    image = fig.axes[0].get_images()[0]
    np.testing.assert_allclose(image.get_array(), a)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == tokens
    with pytest.raises(ValueError):
        plot_head(a, tokens[:3])


def test_head_view_update_changes_data_and_words():
    view = HeadView(random_maps(1, 1, 4)[0, 0], ["a", "b", "c", "d"])
    new = random_maps(1, 1, 6, seed=3)[0, 0]
    view.update(new, list("uvwxyz"), title="new")
    np.testing.assert_allclose(view.image.get_array(), new)
    # the words are Text artists (a widget redraws them without the axes): one under each column, one per row
    assert [t.get_text() for t in view.key_words] == list("uvwxyz") == [t.get_text() for t in view.query_words]
    assert [t.get_position()[0] for t in view.key_words] == list(range(6))
    assert [t.get_position()[1] for t in view.query_words] == list(range(6))


def test_token_links_width_and_opacity_follow_the_weights():
    a = random_maps(1, 1, 5)[0, 0]
    fig = plot_token_links(a, list("abcde"))
    lines = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)][0]
    segments = lines.get_segments()
    widths = np.asarray(lines.get_linewidths())
    alphas = lines.get_colors()[:, 3]
    assert len(segments) == 15  # the pairs the causal mask leaves: a zero weight draws no line
    for (x0, y0), (x1, y1) in segments:  # keys on the left (x=0), queries on the right (x=1)
        assert (x0, x1) == (0, 1)
    weight = {(int(-s[1][1]), int(-s[0][1])): i for i, s in enumerate(segments)}  # (query, key) -> line
    for (q, k), i in weight.items():
        assert alphas[i] == pytest.approx(a[q, k])
        assert widths[i] == pytest.approx(TokenLinksView.MAX_WIDTH * a[q, k])


def test_token_links_with_a_selected_query_draws_only_its_lines():
    a = random_maps(1, 1, 5)[0, 0]
    view = TokenLinksView(a, list("abcde"), query=3)
    segments, alphas = view.lines.get_segments(), view.lines.get_colors()[:, 3]
    for s, alpha in zip(segments, alphas):
        q, k = int(-s[1][1]), int(-s[0][1])
        assert alpha == pytest.approx(a[q, k] if q == 3 else 0.0)
    with pytest.raises(ValueError, match="query=9"):
        view.update(a, list("abcde"), query=9)


@pytest.mark.parametrize("query", [None, 3])
def test_token_links_leave_out_only_lines_that_draw_nothing(query):
    """The zero weights (the causal mask's half, the other queries' lines) are not drawn: the same
    pixels as drawing every pair's line, with width and opacity 0 for those."""
    a = random_maps(1, 1, 6)[0, 0]  # causal
    view = TokenLinksView(a, list("abcdef"), query=query)
    drawn = len(view.lines.get_segments())
    assert drawn == (21 if query is None else 4)  # 6·7/2 pairs on or under the diagonal; query 3: 4 keys
    canvas = FigureCanvasAgg(view.fig)
    canvas.draw()
    ours = np.asarray(canvas.buffer_rgba()).copy()
    w = np.array([a[q, k] if query in (None, q) else 0.0 for q in range(6) for k in range(6)])
    view.lines.set_segments(view.ends)  # every (query, key) line, the zero ones too
    view.lines.set_color([(0.0, 0.447, 0.698, x) for x in w])
    view.lines.set_linewidth(TokenLinksView.MAX_WIDTH * w)
    canvas.draw()
    np.testing.assert_array_equal(ours, np.asarray(canvas.buffer_rgba()))


def test_exported_links_with_a_query_show_its_word_once_and_pass_the_slide_check():
    """The slide check flagged "'tired' overlaps 'tired'": the bold marker lay over the plain word. On a slide
    the plain word is hidden; its pixels were under the marker's opaque box, so the picture is the same."""
    from helpers.figures.slide import slide_style
    import helpers as H
    tokens = ["<bos>", "the", "cat", "is", "tired", "."]
    with slide_style():
        fig = plot_token_links(random_maps(1, 1, 6)[0, 0], tokens, query=4, title="layer 1, head 3")
    shown = [t.get_text() for t in fig.axes[0].texts if t.get_visible() and t.get_text() == "tired"]
    assert shown == ["tired", "tired"]  # the key column's word and the marker
    report = H.check_slide(fig)
    assert report.ok, report.problems
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    hidden = np.asarray(canvas.buffer_rgba()).copy()
    next(t for t in fig.axes[0].texts if t.get_text() == "tired" and not t.get_visible()).set_visible(True)
    canvas.draw()
    np.testing.assert_array_equal(hidden, np.asarray(canvas.buffer_rgba()))


def test_all_heads_figure_exports_png_16_9_svg_and_one_page_pdf(tmp_path):
    fig = plot_all_heads(random_maps(L=12, H=12, T=5), tokens=["<bos>", "I", "like", "to", "draw"],
                         highlight=(1, 1))
    paths = save_for_slides(fig, "all_heads", tmp_path)
    by_format = {p.suffix: p for p in paths}
    assert set(by_format) == {".png", ".svg", ".pdf"}
    width, height = Image.open(by_format[".png"]).size
    assert width / height == pytest.approx(16 / 9, rel=0.01)
    assert ET.parse(by_format[".svg"]).getroot().tag.endswith("svg")
    assert len(pypdf.PdfReader(by_format[".pdf"]).pages) == 1


def test_grid_labels_follow_a_new_head_count():
    """The slider swaps a 4-head model for a 12-head one: every head needs its H label."""
    rng = np.random.default_rng(0)
    view = AllHeadsView(rng.random((2, 4, 5, 5)))
    view.update(rng.random((2, 12, 5, 5)))
    assert [t.get_text() for t in view.head_texts] == [f"H{h}" for h in range(12)]
    view.update(rng.random((3, 2, 5, 5)))
    assert [t.get_text() for t in view.head_texts] == ["H0", "H1"]
    assert [t.get_text() for t in view.layer_texts] == ["L0", "L1", "L2"]


def test_cell_labels_are_whole_words_of_one_size_that_fit_their_cell():
    labels = {(l, h): f"{name}\n0.{l}{h}" for l, h, name in [(0, 0, "agreement"), (3, 5, "object"), (11, 11, "resting")]}
    fig = plot_all_heads(random_maps(L=12, H=12, T=20), labels=labels)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    cell_px = ax.get_window_extent().width / 12
    texts = [t for t in ax.texts if "\n0." in t.get_text()]
    assert sorted(t.get_text() for t in texts) == sorted(labels.values())  # nothing cut
    assert len({t.get_fontsize() for t in texts}) == 1 and texts[0].get_fontsize() >= 6
    assert all(t.get_window_extent().width <= cell_px for t in texts)


def test_token_labels_name_the_rows_and_columns_and_grow_with_the_maps():
    tokens = ["<bos>", "list", ":", "red", "fox"]
    sizes = {}
    for heads in (1, 12):
        fig = plot_all_heads(random_maps(L=2, H=heads, T=5), tokens, token_labels=True)
        fig.set_size_inches(12, 4)
        FigureCanvasAgg(fig).draw()
        words = [t for t in fig.axes[0].texts if t.get_text() in tokens]
        assert [t.get_text() for t in words] == tokens * 3  # queries of both layers, then the keys
        sizes[heads] = words[0].get_fontsize()
        inside = fig.bbox
        assert all(inside.contains(*t.get_window_extent().p0) and inside.contains(*t.get_window_extent().p1)
                   for t in words)
    assert sizes[1] > sizes[12]


def test_token_labels_too_small_to_read_are_hidden():
    """A 12-head strip would draw its words at 4-5 pt: noise. Under 7 pt they are hidden, and
    `words_shown` lets a caption say so; a grid with room keeps them, at 7 pt or more."""
    tokens = [f"w{i}" for i in range(15)]
    for heads, shown in ((2, True), (12, False)):
        view = AllHeadsView(random_maps(L=2, H=heads, T=15), tokens, token_labels=True)
        view.fig.set_size_inches(16, 6.5)
        FigureCanvasAgg(view.fig).draw()
        words = [t for t in view.ax.texts if t.get_text() in tokens]
        assert len(words) == 3 * 15 and view.words_shown == shown
        assert all(t.get_visible() == shown for t in words)
        assert not shown or min(t.get_fontsize() for t in words) >= 7
