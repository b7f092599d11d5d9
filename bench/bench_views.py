"""How fast is the 144-head grid? Prints medians from one run; asserts nothing.

Render + PNG of a 12 × 12 grid of attention maps at 1200 × 1200 px, measured side by side in one run:
1. the naive figure (144 subplots, one imshow each, built anew every time: what most notebooks do);
2. the mosaic built anew (plot_all_heads: one image, the colour bar drawn in the same Axes) + PNG;
3. the mosaic redrawn for new maps of the same shape, the way the explorer redraws it (widgets/frame.py:
   the labels and colour bar stay cached pixels, only the maps and title are drawn again, then the
   widgets' light PNG encoder).
Each is printed as a ratio to the naive figure (target <= 0.05). Rows 1-2 are printed twice: with
savefig's default PNG compression (zlib level 6) and with the light compression (level 1); row 3 (the widgets'
encoder, level 2) is compared with the naive figure at level 1. The explorer's own timings (select,
new sentence) are in bench/bench_widgets.py.

Where row 2's time goes (per build, CPU ms: cProfile, Dec 2026, 2 cores, yardstick 0.21 s): building ~22
(one Axes ~9), the first draw ~27 (its texts ~12, from kept glyphs: figures/glyph_cache.py), PNG
encoding ~21 at level 6 (figures/png.py: the Up filter and zlib; PIL's encoder took ~37 for the same
pixels). The naive figure's PNG is PIL's, as a
notebook writes it; its 144 Axes are most of its time.

Run:  nice -n 19 env OMP_NUM_THREADS=1 MPLBACKEND=Agg .venv/bin/python bench/bench_views.py [--quick]
Wall time suffers when other processes share the CPU, so CPU time of this process is printed too,
and the ratios use CPU time.
"""

from __future__ import annotations

import io
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import helpers as H  # noqa: E402
from benchlib import parser, record  # noqa: E402
from helpers.figures.common import CMAP  # noqa: E402
from helpers.figures.mosaic import AllHeadsView, plot_all_heads  # noqa: E402
from helpers.widgets.frame import Frame  # noqa: E402

SENTENCE = "I like to draw my picture . the cat near these big dogs is tired ."
OTHER = "the cat near these big dogs is tired . I like to draw my picture ."  # the same length
TARGET = 0.05  # of the naive figure's time


def timed(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of fn()."""
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


def naive_grid(attn, png: dict) -> None:
    """144 subplots, one imshow each, saved as PNG: what most notebooks do."""
    L, Hn = attn.shape[:2]
    fig = Figure(figsize=(12, 12))
    axes = fig.subplots(L, Hn)
    for (l, h), ax in zip([(l, h) for l in range(L) for h in range(Hn)], axes.flat):
        ax.imshow(attn[l, h], cmap=CMAP, vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
    for l in range(L):
        axes[l, 0].set_ylabel(f"L{l}")
    for h in range(Hn):
        axes[0, h].set_title(f"H{h}")
    fig.savefig(io.BytesIO(), format="png", dpi=100, pil_kwargs=png)


def mosaic_grid(attn, tokens, png: dict) -> None:
    fig = plot_all_heads(attn, tokens)
    fig.set_size_inches(12, 12)
    fig.savefig(io.BytesIO(), format="png", dpi=100, pil_kwargs=png)


def redrawn_grid(runs) -> callable:
    """A kept 12 × 12-in grid at 100 dpi and its Frame; each call shows the next run's maps."""
    view = AllHeadsView(runs[0].attentions, runs[0].tokens, highlight=(5, 5))
    view.fig.set_size_inches(12, 12)
    frame = Frame(view.fig, [view.rect], dpi=100, middle=[view.image, view.gaps, *view.ax.spines.values(), view.title])
    frame.png()  # the first picture lays the figure out; later ones reuse it
    turn = iter(range(10 ** 6))

    def redraw() -> None:
        run = runs[next(turn) % 2]
        view.update(run.attentions, (5, 5), tokens=run.tokens)
        frame.refresh()
        frame.png()
    return redraw


def classroom_shaped_model() -> H.LanguageModel:
    """The classroom 12 × 12 config with random weights: speed does not depend on training."""
    torch.manual_seed(0)
    config = H.GPTConfig(vocab_size=len(H.vocabulary()), n_ctx=64, n_layer=12, n_head=12, n_embd=96)
    return H.LanguageModel("random-12x12", H.GPT(config).eval(), H.WordTokenizer(H.vocabulary()))


def main() -> None:
    quick = parser(__doc__).parse_args().quick
    naive_n, ours_n = (1, 1) if quick else (5, 9)
    lm = classroom_shaped_model()
    runs = [H.run_sentence(lm, SENTENCE), H.run_sentence(lm, OTHER)]
    attn = runs[0].attentions.numpy()  # (12, 12, T, T)
    assert runs[1].attentions.shape == runs[0].attentions.shape, "the redraw compares maps of one shape"
    print(f"attention {tuple(attn.shape)}, figure 1200 x 1200 px PNG; ratios of CPU time")
    for label, png in (("default PNG", {}), ("light PNG", {"compress_level": 1})):
        naive = timed(lambda: naive_grid(attn, png), naive_n)
        mosaic = timed(lambda: mosaic_grid(attn, runs[0].tokens, png), ours_n)
        print(f"-- {label}")
        print(f"naive 144 subplots + PNG      : {naive[0]:7.1f} ms wall  {naive[1]:7.1f} ms CPU")
        print(f"mosaic built + PNG            : {mosaic[0]:7.1f} ms wall  {mosaic[1]:7.1f} ms CPU"
              f"   {mosaic[1] / naive[1]:.3f} of naive (target <= {TARGET})")
        record(f"144-head grid built + PNG ÷ naive figure ({label})", mosaic[1] / naive[1], "×", TARGET)
    redraw = redrawn_grid(runs)
    again = timed(redraw, 2 if quick else 15)
    print(f"mosaic redrawn + light PNG    : {again[0]:7.1f} ms wall  {again[1]:7.1f} ms CPU"
          f"   {again[1] / naive[1]:.3f} of naive at level 1 (target <= {TARGET})")
    record("144-head grid redrawn (kept figure, new maps) + PNG ÷ naive figure (light PNG)", again[1] / naive[1],
           "×", TARGET)


if __name__ == "__main__":
    main()
