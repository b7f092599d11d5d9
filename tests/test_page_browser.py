"""The offline page (H.export_page) in Debian's Chromium, opened from file:// with the network refused.

Every request that is not file: or data: is recorded and aborted; the test fails on any, and on
any console error. It clicks three heads and checks the zoom's title and the colours drawn in
every cell of its canvas against the model's maps (run_sentence, 8 bits), moves the framed head
and the query word with the keyboard, and switches sentences. Screenshots go to
test-artifacts/browser/page_*.png (BROWSER_ARTIFACTS overrides) for a person to look at.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import PIL.Image
import pytest

import helpers as H
from helpers.figures.page import quantise, read_page
from test_browser import ARTIFACTS, CHROMIUM, SCREEN, chromium

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]

SENTENCES = ["I like to draw my picture .", "list : red mat old fox . again : red mat old fox .",
             "the girl sat on the mat because she was tired ."]
TIMEOUT = 120_000  # ms: a loaded 2-core machine is slow, but a page of 200 kB is not a notebook

ZOOM_PICTURE = """() => ({png: document.getElementById('zoom').toDataURL('image/png'),
                          geometry: window.attentionPage.zoom})"""  # what is drawn, as PNG bytes


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    lm = H.load_model("classroom")
    path = H.export_page(lm, SENTENCES, folder=tmp_path_factory.mktemp("page"), layer=0, head=0)
    expected = [quantise(H.run_sentence(lm, s).attentions) for s in SENTENCES]  # the model's, not the page's
    return path, expected


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


class OfflinePage:
    """A page that may load only file: and data: URLs; it records everything else and its errors."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport=SCREEN, device_scale_factor=1)
        self.page.set_default_timeout(TIMEOUT)
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()


def colour_index(colours: list[str], rgb) -> int:
    """Which of the page's 256 colours a drawn pixel is (the nearest)."""
    table = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in colours])
    return int(np.argmin(((table - np.asarray(rgb)) ** 2).sum(1)))


def zoom_cells(page) -> list:
    """The colour drawn at the centre of every cell of the zoomed map, row by row."""
    shown = page.evaluate(ZOOM_PICTURE)
    png = base64.b64decode(shown["png"].split(",", 1)[1])
    pixels = np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"))
    z = shown["geometry"]
    centre = [int(i) for i in ((np.arange(z["n"]) + 0.5) * z["cell"])]
    return [pixels[z["top"] + y, z["left"] + x] for y in centre for x in centre]


def assert_zoom_shows(page, colours, maps, layer: int, head: int) -> None:
    assert page.locator("#zoom-title").inner_text() == f"Layer {layer}, head {head}"
    drawn = [colour_index(colours, rgb) for rgb in zoom_cells(page)]
    want = maps[layer, head].reshape(-1).astype(int)
    assert len(drawn) == len(want)
    assert np.abs(np.array(drawn) - want).max() <= 1, f"layer {layer}, head {head}: the drawn map differs"


def click_head(page, layer: int, head: int) -> None:
    grid = page.evaluate("() => window.attentionPage.grid")
    step = (grid["n"] + 1) * grid["scale"]
    page.locator("#grid").click(position={"x": grid["left"] + head * step + step / 2,
                                          "y": grid["top"] + layer * step + step / 2})


def state(page) -> dict:
    return page.evaluate("() => Object.assign({}, window.attentionPage.state)")


def test_the_page_works_offline_and_draws_the_models_maps(browser, page_file):
    path, expected = page_file
    colours = read_page(path)["colours"]
    watched = OfflinePage(browser)
    page = watched.page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(path.resolve().as_uri())
        page.wait_for_function("() => window.attentionPage && window.attentionPage.ready > 0")
        assert page.title() == "All 144 heads of classroom"
        assert_zoom_shows(page, colours, expected[0], 0, 0)
        page.screenshot(path=ARTIFACTS / "page_opened.png")

        for layer, head in ((3, 7), (11, 0), (6, 11)):  # three clicks on the grid
            click_head(page, layer, head)
            assert (state(page)["layer"], state(page)["head"]) == (layer, head)
            assert_zoom_shows(page, colours, expected[0], layer, head)
        page.screenshot(path=ARTIFACTS / "page_clicked.png")

        page.locator("#grid-panel").focus()  # arrow keys move the framed head
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowUp")
        assert_zoom_shows(page, colours, expected[0], 5, 10)

        page.locator("#links-panel").focus()  # up/down in the links choose the query word
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert state(page)["query"] == 1
        assert page.locator("#query").input_value() == "1"
        opacity = page.evaluate("() => [...document.querySelectorAll('#links line')]"
                                ".map(l => Number(l.getAttribute('stroke-opacity')))")
        T = expected[0].shape[-1]
        rows = np.array(opacity).reshape(T, T)
        assert (rows[np.arange(T) != 1] == 0).all()  # only word 1's lines are drawn
        np.testing.assert_allclose(rows[1], expected[0][5, 10, 1] / 255, atol=1e-3)
        assert "(word 1) reads" in page.locator("#links-caption").inner_text()
        page.screenshot(path=ARTIFACTS / "page_query.png")

        page.locator("#sentence").select_option(index=2)  # another sentence, same head
        assert state(page)["s"] == 2 and state(page)["query"] is None
        assert_zoom_shows(page, colours, expected[2], 5, 10)
        labels = page.evaluate("() => [...document.querySelectorAll('#query option')].map(o => o.textContent)")
        assert labels[1:] == [f"{i}: {t}" for i, t in enumerate(H.run_sentence(H.load_model('classroom'),
                                                                                SENTENCES[2]).tokens)]
        click_head(page, 2, 4)
        assert_zoom_shows(page, colours, expected[2], 2, 4)
        page.screenshot(path=ARTIFACTS / "page_sentence.png")
        timings = page.evaluate("() => window.attentionPage.timings")
        print(f"page ready {page.evaluate('() => window.attentionPage.ready'):.0f} ms after navigation; "
              f"click/key to picture: median {np.median(timings):.1f} ms over {len(timings)} moves")
    except Exception:
        page.screenshot(path=ARTIFACTS / "page_failure.png")
        raise
    finally:
        page.close()
    assert watched.refused == [], f"the page asked the network for: {watched.refused}"
    assert watched.errors == [], f"console errors: {watched.errors}"


@pytest.mark.parametrize("damage", ["cut short", "a damaged script", "whole"])
def test_a_page_that_did_not_load_whole_says_so(browser, page_file, tmp_path, damage):
    """A copy cut at 90 %, or a script with one word damaged, showed a dead picture and no line (sweep 25)."""
    text = page_file[0].read_text(encoding="utf-8")
    broken = {"cut short": text[:int(len(text) * 0.9)], "whole": text,
              "a damaged script": text.replace("function setSentence", "functoin setSentence", 1)}[damage]
    (tmp_path / "page.html").write_text(broken, encoding="utf-8")
    view = OfflinePage(browser)
    view.page.goto((tmp_path / "page.html").as_uri())
    view.page.wait_for_load_state("load")
    lines = view.page.locator("p[role=alert]")
    if damage == "whole":
        assert lines.count() == 0 and not view.errors
    else:
        assert lines.count() == 1 and "did not load whole" in lines.inner_text()
    view.page.close()
