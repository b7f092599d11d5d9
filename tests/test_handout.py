"""tools/make_handout.py: the shapes on the one-page handout are the shipped walkthrough models' shapes, and the
page's words fit on it without overlapping."""

import re
import sys
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import helpers as H
from helpers.core.catalog import manifest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import make_handout as M  # noqa: E402

pytestmark = pytest.mark.skipif(not {"walkthrough-1", "walkthrough-12"} <= set(manifest()),
                                reason="data/models.json lists no walkthrough models")


def shapes() -> dict:
    """Each result the handout shows (the last shape of a step), by its name."""
    return {step.shapes[-1][0]: step.shapes[-1][1] for step in M.handout_steps()}


def test_the_handouts_shapes_are_the_models():
    """Sizes from the model file's own config, the sentence's length from the tokenizer: nothing typed twice."""
    config = H.load_model("walkthrough-12").config
    T = len(H.load_model("walkthrough-12").tokenizer.tokens("I like to draw", bos=False))  # read as trained
    D, n, d = config.n_embd, config.n_head, config.n_embd // config.n_head
    assert shapes() == {"X": (T, D), "W_Q": (D, d), "Q": (T, d), "scores": (T, T), "weights": (T, T), "z": (T, d),
                        "z of all heads": (n, T, d), "concat": (T, n * d), "update": (T, D), "new residual": (T, D)}
    operands = {name: shape for step in M.handout_steps() for name, shape in step.shapes}
    assert operands["W_O"] == (n * d, D) and operands["K.T"] == (d, T)


def test_the_handout_states_the_lesson_numbers():
    """The numbers notebooks 01-03 print for "I like to draw": the values a teacher checks the page against."""
    s = shapes()
    assert (s["X"], s["W_Q"], s["Q"], s["scores"], s["concat"]) == ((4, 768), (768, 64), (4, 64), (4, 4), (4, 768))
    f = M.facts()
    assert (f["n_heads"], f["d_head"], f["W_O block"], f["params"]) == (12, 64, (64, 768), 2_362_368)
    assert dict(M.one_head_of_768())["W_Q"] == (768, 768)


def test_the_page_text_fits_and_does_not_overlap():
    fig = M.make_figure()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    page = fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[0].texts if t.get_text().strip()]
    for text, box in boxes:
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, text
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            assert not box_a.overlaps(box_b), (a, b)
    labels = [t for t, _ in boxes]
    assert any("[768 × 64]" in t for t in labels) and any("[4 × 4]" in t for t in labels)


def test_the_shipped_pdf_shows_the_models_shapes_on_one_page(tmp_path):
    """docs/shapes_handout.pdf is stale when the model's shapes changed: its Keywords list what the page shows."""
    shipped = (ROOT / "docs" / "shapes_handout.pdf").read_bytes()
    assert shipped.startswith(b"%PDF") and re.search(rb"/Type /Pages /Kids \[[^\]]*\] /Count 1\b", shipped)
    keywords = M.shapes_keywords(M.handout_steps())
    assert "X 4x768; W_Q 768x64; Q 4x64; K.T 64x4; scores 4x4" in keywords and "W_O 768x768" in keywords
    assert f"/Keywords ({keywords})".encode() in shipped, "run: python tools/make_handout.py"
    out = tmp_path / "handout.pdf"
    assert M.main(["--out", str(out)]) == 0 and f"/Keywords ({keywords})".encode() in out.read_bytes()
