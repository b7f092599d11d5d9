"""Every figure a notebook shows carries words computed from its data, as alt text.

- show_figure: the PNG with metadata {"image/png": {"alt": …}} (what nbconvert reads) and the same
  picture as <img alt=…> in text/html (what JupyterLab 4.6 draws: it ignores the metadata's alt);
- a figure without words is refused, in one line;
- save_for_slides stores the words in the PNG it writes;
- the words follow the data (a number a sighted reader sees is in them). That every image a notebook
  shows has alt text is tested in tests/test_notebooks.py, on the one run of each notebook it shares.
"""

from __future__ import annotations

import html

import numpy as np
import PIL.Image
import pytest
from matplotlib.figure import Figure

import helpers as H
from helpers.figures.common import describe, description


def _map() -> tuple[np.ndarray, list[str]]:
    w = np.array([[1, 0, 0], [0.9, 0.1, 0], [0.05, 0.9, 0.05]])  # (T, T): the last word reads 'cat'
    return w, ["<bos>", "cat", "sat"]


def test_a_figure_is_shown_with_its_words_as_alt_text():
    w, tokens = _map()
    data, metadata = H.show_figure(H.plot_attention(w, tokens, title="A planted map"))._repr_mimebundle_()
    alt = metadata["image/png"]["alt"]
    assert alt.startswith("A planted map.") and "'sat'" in alt and "0.90" in alt and "'cat'" in alt
    assert f'alt="{html.escape(alt)}"' in data["text/html"] and data["image/png"] in data["text/html"]
    assert data["text/plain"] == alt  # a text-only front end shows the words


def test_the_words_follow_the_data():
    w, tokens = _map()
    other = w[:, ::-1].copy()  # the last word now reads '<bos>' with 0.05 … and 'cat' still 0.9
    other[2] = [0.7, 0.2, 0.1]
    first, second = (description(H.plot_attention(m, tokens)) for m in (w, other))
    assert "0.90, to 'cat'" in first and "0.70, to '<bos>'" in second


def test_a_figure_without_words_is_refused_in_one_line():
    fig = Figure()
    fig.add_subplot().plot([0, 1])
    with pytest.raises(ValueError, match="no words for a screen reader; pass alt=") as err:
        H.show_figure(fig)
    assert "\n" not in str(err.value)
    assert H.show_figure(fig, alt="A rising line.").alt == "A rising line."
    with pytest.raises(ValueError, match="needs a matplotlib Figure"):
        H.show_figure("fig")


def test_panels_keep_their_own_words_and_a_figure_replaces_them():
    fig = Figure()
    left, right = fig.subplots(1, 2)
    describe(right, "Right panel.")
    describe(left, "Left panel.")
    assert description(fig) == "Left panel. Right panel."  # in the figure's order, not the call order
    describe(fig, "The whole figure.")
    assert description(fig) == "The whole figure."


def test_a_pyplot_figure_is_shown_once(monkeypatch):
    """plt.subplots + show_figure: pyplot forgets the figure, so the cell does not show it again without words."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    H.plot_head(*_map(), ax=ax)
    shown = H.show_figure(fig)
    assert "This head" in shown.alt or "%" in shown.alt
    assert not plt.fignum_exists(fig.number)


def test_save_for_slides_stores_the_words_in_the_png(tmp_path):
    fig = H.plot_attention(*_map(), title="A planted map")
    png = next(p for p in H.save_for_slides(fig, "planted", tmp_path, formats=("png",)) if p.suffix == ".png")
    assert PIL.Image.open(png).text["Description"] == description(fig)


def test_an_animation_carries_its_caption_as_alt_text(walk_one):
    anim = H.one_head_animation(walk_one)
    data, metadata = anim._repr_mimebundle_()
    assert anim.caption in metadata["image/gif"]["alt"] and 'alt="' in data["text/html"]


def test_a_map_as_a_table_has_headers_two_decimals_and_each_rows_largest():
    w, tokens = _map()
    table = H.map_table(w, tokens)
    assert "<th scope='col'>cat</th>" in table.html and "<th scope='row'>sat</th>" in table.html
    assert table.rows[2] == ["sat", "0.05", "0.90 (largest)", "0.05"]
    assert table.html.count("(largest)") == len(tokens) and "<caption>" in table.html
    with pytest.raises(ValueError, match="3 rows but 2 tokens"):
        H.map_table(w, tokens[:2])


def test_the_explorer_says_what_it_shows_after_each_move(tiny_explorer):
    e = tiny_explorer
    e.select(0, 1)
    assert "role='status'" in e.live.value and "Layer 0, head 1:" in e.live.value
    assert e.images[1].tooltip.startswith("Layer 0, head 1:")  # the zoomed picture's name
    e.as_table.value = True
    assert "<table" in e.table.value and "Layer 0, head 1:" in e.table.value
    e.select(0, 0)
    assert "Layer 0, head 0:" in e.live.value and "Layer 0, head 0:" in e.table.value


def test_every_control_says_what_it_changes(tiny_explorer):
    e = tiny_explorer
    for control in (e.text, e.layer_slider, e.head_slider, e.word, e.button, e.page_button, e.as_table):
        assert control.description and len(control.tooltip or "") > 10, control


@pytest.fixture
def tiny_explorer(tmp_path):
    lm = H.load_model("classroom")
    return H.Explorer(lm, "I like to draw", folder=tmp_path)


def test_widget_pictures_are_named_by_their_words(tiny_explorer):
    """A tooltip on a plain ipywidgets Image breaks its view (no description trait): NamedImage has one."""
    from helpers.widgets.frame import NamedImage

    for image in tiny_explorer.images:
        assert isinstance(image, NamedImage) and image.description == "" and len(image.tooltip) > 20
