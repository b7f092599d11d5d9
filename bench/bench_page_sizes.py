"""How long headless Chromium takes to draw the offline page (H.export_page), by model shape and length.

    python bench/bench_page_sizes.py 12x12x128 12x12x160 1x1x256 12x12x128x8   # layers x heads x tokens [x sentences]
    python bench/bench_page_sizes.py --quick                                    # one small case: 2x2x16

Each case is a random model of that shape (no training: the drawing does not depend on the values)
reading sentences of that many tokens; prints the page's size, the Python time to build it, and the
ms from navigation to the first full picture (`attentionPage.ready`) and to the next painted frame.
figures/page.py's MAX_TOKENS and MAX_MAP_BYTES come from these numbers. Uses the browser test's
Chromium helpers (tests/test_browser.py).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import torch  # noqa: E402

from helpers.core.language import vocabulary  # noqa: E402
from helpers.core.model import GPT, GPTConfig, LanguageModel  # noqa: E402
from helpers.core.tokenizer import WordTokenizer  # noqa: E402
from benchlib import no_browser, parser, unavailable  # noqa: E402
from helpers.figures import page as page_module  # noqa: E402
from helpers.figures.page import page_html  # noqa: E402
from test_browser import CHROMIUM, SCREEN, chromium  # noqa: E402

WORDS = "the cat near these big dogs is tired .".split()
PAINTED = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"


def random_model(layers: int, heads: int, tokens: int) -> LanguageModel:
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(vocabulary()), n_ctx=tokens + 1, n_layer=layers, n_head=heads,
                         n_embd=2 * heads)
    return LanguageModel(f"random {layers}x{heads}", GPT(config).eval(), WordTokenizer(vocabulary()))


def sentence(tokens: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(tokens - 1))  # + <bos>: `tokens` tokens


def main(cases: list[str]) -> None:
    if no_browser(CHROMIUM):
        return unavailable("offline page drawing time by size", no_browser(CHROMIUM))
    page_module.MAX_TOKENS, page_module.MAX_MAP_BYTES = 10 ** 6, 10 ** 12  # measure past today's limits
    folder = Path(tempfile.mkdtemp())
    with chromium() as browser:
        for case in cases:
            layers, heads, tokens, count = (list(map(int, case.split("x"))) + [1])[:4]
            lm = random_model(layers, heads, tokens)
            start = time.perf_counter()
            text = page_html(page_module.page_data(lm, [sentence(tokens - i) for i in range(count)]))
            python = time.perf_counter() - start
            path = folder / f"{case}.html"
            path.write_text(text, encoding="utf-8")
            page = browser.new_page(viewport=SCREEN, device_scale_factor=1)
            page.set_default_timeout(600_000)
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_function("window.attentionPage && window.attentionPage.ready")
            painted, ready = page.evaluate(PAINTED), page.evaluate("window.attentionPage.ready")
            print(f"{case:<14} page {len(text) / 1e6:6.2f} MB  python {python:5.1f} s  ready {ready:6.0f} ms  "
                  f"painted {painted:6.0f} ms", flush=True)
            page.close()


if __name__ == "__main__":
    options = parser(__doc__)
    options.add_argument("cases", nargs="*", default=["12x12x64", "12x12x128", "12x12x160", "1x1x256", "12x12x128x8"])
    args = options.parse_args()
    main(["2x2x16"] if args.quick else args.cases)
