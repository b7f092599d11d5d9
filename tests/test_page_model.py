"""The offline page runs the model itself (page_model.js): proven equal to the Python model in Chromium.

One browser for the module. The classroom page is sent 50 sentences (random held-out stories, lists
said twice, the walkthrough sentence), three of them typed on the keyboard and the rest through the
same submit function the Enter key calls; every map, every head's caption and the next-word
probabilities are compared with run_sentence. Knock-outs (the K key, Shift+click, the button) are
compared with analysis.knockout; the slider pages of 04 (heads-N) and 07 (kv-N) likewise. Bad input
gets one line each. The worst differences are printed (`pytest -s`) for the closing note.
"""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path

import numpy as np
import PIL.Image
import pytest

import helpers as H
from helpers.analysis import captions
from helpers.analysis.knockout import KNOCKOUT_SENTENCE, knock_out, next_word_change
from helpers.analysis.seeds import seed_runs
from helpers.core.evaluation import one_thread
from helpers.core.gpt2 import load_gpt2
from helpers.core.language import StoryWriter
from helpers.figures.deck import DRAW, LIST
from helpers.figures.page import export_page, export_slider_page, family, quantise
from test_browser import ARTIFACTS, CHROMIUM, chromium
from test_gpt2_fakes import fake_gpt2_folder
from test_page_browser import OfflinePage

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]
WITHIN = 0.01  # the bound for maps and probabilities (16-bit weights in the page, fp32 in Python)
READY = "() => window.attentionPage && window.attentionPage.ready > 0"
RESULTS = """texts => {  // each text through the page's own submit (what Enter calls), then what it drew
  const api = window.attentionPage, out = [];
  const b64 = a => { const u = new Uint8Array(a.buffer, a.byteOffset, a.byteLength); let s = "";
    for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
    return btoa(s); };
  for (const text of texts) {
    const ok = text === null ? true : api.submit(text), r = api.current();
    const flat = new Float32Array(r.now.attentions.reduce((n, a) => n + a.length, 0));
    let at = 0; for (const a of r.now.attentions) { flat.set(a, at); at += a.length; }
    out.push({ok, tokens: r.tokens, maps: b64(flat), bytes: b64(r.maps), probs: b64(r.now.probs),
              captions: r.captions, problem: document.getElementById("problem").textContent});
  }
  return out;
}"""


def floats(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


def oracle_sentences(n: int = 50, seed: int = 33) -> list[str]:
    """Random held-out stories cut at random lengths (about half hold a list said twice), a few
    lists, the walkthrough sentence: n distinct sentences the classroom models read."""
    writer, rng = StoryWriter(seed), random.Random(seed)
    texts = [DRAW, LIST, KNOCKOUT_SENTENCE, "list : red fox old mat . again : red fox old mat ."]
    while len(texts) < n:
        story = writer.story(64, list_chance=0.7)
        text = " ".join(story.tokens[1:rng.randint(6, 40)])
        if text not in texts:
            texts.append(text)
    return texts


def compare(lm, results, texts, knocked=()) -> tuple[float, float]:
    """The worst map and probability difference between the page and run_sentence with the heads
    `knocked` removed (zeroed, as the page does); asserts the tokens, the drawn bytes and every
    head's caption too."""
    worst_map = worst_prob = 0.0
    for text, got in zip(texts, results):
        # one thread: small products on a busy 2-core machine are 10 times faster
        with one_thread(), knock_out(lm, knocked, "zero"):
            run = H.run_sentence(lm, text)
        assert got["ok"] and got["problem"] == "", f"{text!r}: {got['problem']}"
        assert got["tokens"] == run.tokens, text
        maps = run.attentions.numpy()
        worst_map = max(worst_map, float(np.abs(floats(got["maps"]).reshape(maps.shape) - maps).max()))
        drawn = np.frombuffer(base64.b64decode(got["bytes"]), dtype=np.uint8).reshape(maps.shape)
        assert np.abs(drawn.astype(int) - quantise(maps).astype(int)).max() <= 1, f"{text!r}: drawn map differs"
        worst_prob = max(worst_prob, float(np.abs(floats(got["probs"]) - run.next_word_probs().numpy()).max()))
        L, Hh = maps.shape[:2]
        want = [captions.head_caption(maps[l, h], run.tokens, l, h) for l in range(L) for h in range(Hh)]
        assert got["captions"] == want, f"{text!r}: a head's caption differs from analysis/captions.py"
    assert worst_map <= WITHIN and worst_prob <= WITHIN, (worst_map, worst_prob)
    return worst_map, worst_prob


def assert_grid_shows(page, lm, text) -> None:
    """The colour drawn at the centre of every cell of every head in the grid is the model's weight's."""
    shown = page.evaluate("() => ({png: document.getElementById('grid').toDataURL('image/png'), "
                          "grid: window.attentionPage.grid, colours: window.attentionPage.data.colours})")
    pixels = np.asarray(PIL.Image.open(io.BytesIO(base64.b64decode(shown["png"].split(",", 1)[1]))).convert("RGB"))
    g, maps = shown["grid"], quantise(H.run_sentence(lm, text).attentions)  # (L, H, T, T)
    L, Hh, n = maps.shape[0], maps.shape[1], g["n"]
    cells = (np.arange(n) + 0.5) * g["scale"]
    rows = (g["top"] + (np.arange(L)[:, None] * (n + 1) * g["scale"] + cells[None, :])).astype(int).reshape(-1)
    cols = (g["left"] + (np.arange(Hh)[:, None] * (n + 1) * g["scale"] + cells[None, :])).astype(int).reshape(-1)
    drawn = pixels[np.ix_(rows, cols)].reshape(L, n, Hh, n, 3).transpose(0, 2, 1, 3, 4)  # (L, H, T, T, rgb)
    table = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in shown["colours"]])
    want = table[maps]  # (L, H, T, T, rgb)
    assert np.abs(drawn.astype(int) - want).max() <= 2, "a cell of the grid is drawn in another colour"


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("live")
    return {"classroom": export_page(H.load_model("classroom"), [DRAW, LIST], folder=folder),
            "heads": export_slider_page("heads", [LIST], folder=folder),
            "kv": export_slider_page("kv", [LIST], folder=folder)}


def open_page(browser, path, viewport=None) -> OfflinePage:
    watched = OfflinePage(browser)
    if viewport:
        watched.page.set_viewport_size(viewport)
    watched.page.goto(path.resolve().as_uri())
    watched.page.wait_for_function(READY)
    return watched


def assert_clean(watched: OfflinePage) -> None:
    assert watched.refused == [], f"the page asked the network for: {watched.refused}"
    assert watched.errors == [], f"console errors: {watched.errors}"


def test_pages_are_small_enough(pages):
    sizes = {name: path.stat().st_size for name, path in pages.items()}
    print("page sizes (MB):", {name: round(size / 1e6, 2) for name, size in sizes.items()})
    assert all(size <= 5_000_000 for size in sizes.values()), sizes


def test_typed_sentences_give_pythons_maps_probabilities_and_captions(browser, pages):
    lm, texts = H.load_model("classroom"), oracle_sentences()
    watched = open_page(browser, pages["classroom"])
    page = watched.page
    results = []
    for text in texts[:3]:  # the real typing path: keys into the box, then Enter
        page.locator("#typed").fill("")
        page.locator("#typed").press_sequentially(text)
        page.locator("#typed").press("Enter")
        results += page.evaluate(RESULTS, [None])
    results += page.evaluate(RESULTS, texts[3:])
    assert len(results) == 50
    worst = compare(lm, results, texts)
    print(f"classroom, 50 sentences: worst map difference {worst[0]:.2e}, worst probability difference {worst[1]:.2e}")
    assert max(worst) < 1e-5  # docs/teaching.md: "the worst difference measured was below 0.00001"
    assert page.locator("#sentence option").count() == 2 + 48  # the typed ones join the list (2 were shipped)
    assert_grid_shows(page, lm, texts[-1])
    page.close()
    assert_clean(watched)


def test_knock_outs_match_analysis_knockout(browser, pages):
    lm = H.load_model("classroom")
    watched = open_page(browser, pages["classroom"])
    page = watched.page
    page.evaluate("t => window.attentionPage.submit(t)", KNOCKOUT_SENTENCE)
    page.evaluate("() => window.attentionPage.select(2, 4)")
    page.locator("#grid-panel").focus()
    page.keyboard.press("k")  # L2 H4 out by key
    grid = page.evaluate("() => window.attentionPage.grid")
    step = (grid["n"] + 1) * grid["scale"]
    page.locator("#grid").click(modifiers=["Shift"], position={"x": grid["left"] + 7 * step + step / 2,
                                                                "y": grid["top"] + 5 * step + step / 2})  # L5 H7
    page.evaluate("() => window.attentionPage.select(9, 1)")
    page.locator("#knock").click()  # L9 H1 by the button
    heads = [(2, 4), (5, 7), (9, 1)]
    assert page.locator("#knocked-list").inner_text() == "Knocked out: L2 H4, L5 H7, L9 H1"
    worst = compare(lm, page.evaluate(RESULTS, [None]), [KNOCKOUT_SENTENCE], knocked=heads)
    after = next_word_change(lm, KNOCKOUT_SENTENCE, heads)["after"]
    shown = [float(li.split(": ", 1)[1].split(" ")[0]) for li in page.locator("#prediction li").all_inner_texts()]
    assert np.allclose(sorted(shown, reverse=True), sorted(after, reverse=True)[:5], atol=0.005)
    many = [(l, h) for l in range(4, 12) for h in (0, 3, 6, 9)]  # 32 heads at once, through the page's API
    page.evaluate("hs => { const api = window.attentionPage; api.restore(); hs.forEach(([l, h]) => api.toggleKnockout(l, h)); }", many)
    worst_many = compare(lm, page.evaluate(RESULTS, [None]), [KNOCKOUT_SENTENCE], knocked=many)
    page.keyboard.press("r")
    assert page.locator("#knocked-list").inner_text() == ""
    print(f"knock-outs: worst map difference {max(worst[0], worst_many[0]):.2e}, "
          f"probability {max(worst[1], worst_many[1]):.2e}")
    page.close()
    assert_clean(watched)


@pytest.mark.parametrize("kind, oracle", [("heads", "heads-4"), ("kv", "kv-2")])
def test_slider_pages_run_every_model_of_their_slider(browser, pages, kind, oracle):
    names = family(kind)
    watched = open_page(browser, pages[kind])
    page = watched.page
    assert page.evaluate("() => window.attentionPage.state.m") == len(names) - 1
    page.locator("#slider").focus()
    page.keyboard.press("Home")  # the range input moves by keyboard: to the first model
    assert page.evaluate("() => window.attentionPage.state.m") == 0
    unit = "head" if kind == "heads" else "key/value head"  # the first model has one
    slider = page.get_by_role("slider", name="notebook 04" if kind == "heads" else "notebook 07")
    assert slider.count() == 1 and slider.get_attribute("aria-valuetext") == f"{names[0].split('-')[1]} {unit}"
    texts = oracle_sentences(50, seed=7)
    for m, name in enumerate(names):
        page.evaluate("m => window.attentionPage.setModel(m)", m)
        lm = H.load_model(name)
        numbers = page.locator("#slider-numbers").inner_text()
        assert f"held-out loss {lm.info['held_out_loss']:.3f}" in numbers, numbers
        assert f"correctly {100 * lm.info['accuracy_induction']:.0f} %" in numbers, numbers
        accuracy = [run["list_accuracy"] for run in seed_runs(name).values()]
        assert f"over {len(accuracy)} training seeds {100 * min(accuracy):.0f} % to {100 * max(accuracy):.0f} %" in numbers
        chosen = texts if name == oracle else texts[:3]
        worst = compare(lm, page.evaluate(RESULTS, chosen), chosen)
        if name == oracle:
            print(f"{name}, 50 sentences: worst map difference {worst[0]:.2e}, probability {worst[1]:.2e}")
    page.close()
    assert_clean(watched)


BAD = {"": "empty", "   ": "empty", " ".join(["the cat"] * 250): "500 words", "... !": "only punctuation",
       "I like 🐱": "Unknown word for classroom: '🐱'", "<b>hi</b> <img src=x>": "Unknown words",
       "I like zebras": "'zebras'", "the\u200bcat": "<U+200B>", "cat " * 25_000: "100000 characters"}


def test_bad_input_gets_one_line_each(browser, pages):
    watched = open_page(browser, pages["classroom"])
    page = watched.page
    before = page.evaluate("() => document.querySelectorAll('*').length")
    for text, words in BAD.items():
        page.locator("#typed").fill(text)
        page.locator("#typed").press("Enter")
        line = page.locator("#problem").inner_text()
        assert words in line and "\n" not in line, (text[:40], line)
        assert page.evaluate("() => window.attentionPage.state.s") == 0  # the view stays where it was
    assert page.evaluate("() => document.querySelectorAll('img, b').length") == 0  # pasted HTML stays text
    assert page.evaluate("() => document.querySelectorAll('*').length") == before
    pasted = " ".join(["the cat"] * 250)  # 500 words: refused at once, not a frozen tab
    took = page.evaluate("t => { const s = performance.now(); window.attentionPage.submit(t); return performance.now() - s; }", pasted)
    assert took < 250, f"refusing 500 words took {took:.0f} ms"
    longest = " ".join(["the cat"] * 31 + ["."])  # 63 words: the most a 64-token model reads after <bos>
    assert page.evaluate("t => window.attentionPage.submit(t)", longest)
    assert not page.evaluate("t => window.attentionPage.submit(t)", longest + " the")
    assert "classroom reads at most 63" in page.locator("#problem").inner_text()
    page.close()
    assert_clean(watched)


CONTRAST = """() => {  // every visible text's colour against white (the page's only background): WCAG ratio
  const lum = c => { const [r, g, b] = c.match(/\\d+/g).slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const out = [];
  for (const e of document.querySelectorAll("body *")) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !e.offsetParent) continue;
    const style = getComputedStyle(e), bg = style.backgroundColor;
    const back = bg.startsWith("rgba(0, 0, 0, 0)") ? 1 : lum(bg);
    const l = lum(style.color), ratio = (Math.max(l, back) + 0.05) / (Math.min(l, back) + 0.05);
    out.push([e.id || e.tagName, ratio]);
  }
  return out;
}"""


def test_names_roles_live_caption_table_and_contrast(browser, pages):
    """What a screen reader gets, read from Chromium's accessibility tree (aria_snapshot)."""
    lm = H.load_model("classroom")
    watched = open_page(browser, pages["classroom"])
    page = watched.page
    run = H.run_sentence(lm, DRAW)
    maps = run.attentions.numpy()
    page.locator("#grid-panel").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")  # layer 1, head 1
    caption = captions.head_caption(maps[1, 1], run.tokens, 1, 1)
    tree = page.locator("body").aria_snapshot()
    grid_name = (f"All 144 heads of classroom reading “{DRAW}”: {captions.all_heads_caption(maps, run.tokens)} "
                 f"Layer 1, head 1 is framed.")
    assert f'img "{grid_name}"' in tree, tree[:2000]
    assert f'img "Map of layer 1, head 1, queries down, keys across: {caption}"' in tree
    assert page.locator("#live").get_attribute("aria-live") == "polite"
    top = int(run.next_word_probs().argmax())
    assert page.locator("#live").inner_text() == f"{caption} Next word: {lm.tokenizer.vocab[top]} " \
                                                 f"{run.next_word_probs()[top]:.2f}."
    page.keyboard.press("k")
    assert "It is knocked out" in page.locator("#live").inner_text()
    page.keyboard.press("r")
    for role, name in [("combobox", "Sentence"), ("textbox", "Type a sentence"), ("button", "Run the model"),
                       ("button", "Knock out this head"), ("button", "Restore every head"),
                       ("button", "Show as table"), ("combobox", "Query"), ("group", "Token links: up and down")]:
        assert page.get_by_role(role, name=name).count() == 1, (role, name)
    page.get_by_role("button", name="Show as table").click()
    table = page.get_by_role("table")
    assert table.get_by_role("columnheader").count() == len(run.tokens) + 1
    assert table.get_by_role("rowheader").all_inner_texts() == [f"{i}: {t}" for i, t in enumerate(run.tokens)]
    rows = [page.locator("#zoom-table tbody tr").nth(q).locator("td").all_inner_texts() for q in range(len(run.tokens))]
    for q, cells in enumerate(rows):
        assert [c for c in cells if c.endswith("(largest)")] == [f"{maps[1, 1, q].max():.2f} (largest)"]
        assert np.allclose([float(c.split(" ")[0]) for c in cells], maps[1, 1, q], atol=0.005 + 1 / 255)
    low = [(what, round(ratio, 2)) for what, ratio in page.evaluate(CONTRAST) if ratio < 4.5]
    assert low == [], f"text below 4.5:1 contrast: {low}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, size in [("1366", {"width": 1366, "height": 768}), ("1920", {"width": 1920, "height": 1080})]:
        page.set_viewport_size(size)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=ARTIFACTS / f"page_live_{name}.png")
    page.close()
    assert_clean(watched)


def test_the_policy_lets_the_page_run_and_refuses_an_added_script(browser, pages):
    """Content-Security-Policy default-src 'none', the page's four scripts by hash: the page runs (the
    tests above), and a script added later, or eval, is refused by Chromium."""
    text = pages["classroom"].read_text(encoding="utf-8")
    policy = text.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    assert policy.startswith("default-src 'none'; script-src 'sha256-") and policy.count("sha256-") == 4  # the three scripts and the loaded-whole check
    assert "unsafe-eval" not in policy and "unsafe-inline" not in policy.split("style-src")[0]
    watched = open_page(browser, pages["classroom"])
    page = watched.page
    page.evaluate("""() => { window.violations = [];
      document.addEventListener("securitypolicyviolation", e => window.violations.push(e.violatedDirective));
      const s = document.createElement("script"); s.textContent = "window.injected = 1"; document.body.append(s);
      try { window.evaluated = setTimeout("window.injected = 2"); } catch (err) {} }""")
    page.wait_for_function("() => window.violations.length >= 2")
    assert page.evaluate("() => window.injected") is None
    assert all(v.startswith("script-src") for v in page.evaluate("() => window.violations"))
    page.close()
    assert watched.refused == []


def test_a_gpt2_page_shows_precomputed_maps_and_says_it_cannot_run_here(browser, tmp_path, monkeypatch):
    """GPT-2's tokenizer with tiny random weights (no download): the page is the precomputed kind."""
    monkeypatch.setenv("HELPERS_GPT2_VERIFY", "0")
    lm = load_gpt2(fake_gpt2_folder(tmp_path / "gpt2"))
    watched = open_page(browser, export_page(lm, ["I like to draw"], folder=tmp_path))
    page = watched.page
    assert "does not run here" in page.locator("#about").inner_text()
    assert not page.locator("#typed").is_visible() and not page.locator("#prediction").is_visible()
    page.locator("#grid-panel").focus()
    page.keyboard.press("k")  # no knock-outs on a precomputed page: the key does nothing
    assert page.evaluate("() => window.attentionPage.knocked.length") == 0
    page.close()
    assert_clean(watched)
