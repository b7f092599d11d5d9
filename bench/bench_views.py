"""How fast is the 144-head grid? Prints medians from one run; asserts nothing.

Render + PNG of a 12 × 12 grid of attention maps at 1200 × 1200 px, measured in one run:
1. the mosaic built anew (plot_all_heads: one image, the colour bar drawn in the same Axes) + savefig's PNG,
   with savefig's default PNG compression and with the light one (compress_level 1, as the widgets use);
2. the mosaic redrawn for new maps of the same shape, the way the explorer redraws it (widgets/frame.py:
   the labels and colour bar stay blitted pixels, only the maps and title are drawn again, then Pillow's PNG).
Every figure is on matplotlib's Agg canvas and every PNG is Pillow's. The figures go to run_all.py's
table without a target: what a user waits for is timed by bench_widgets.py (kernel) and
bench_browser.py (key to picture).

Run:  nice -n 19 env OMP_NUM_THREADS=1 MPLBACKEND=Agg .venv/bin/python bench/bench_views.py [--quick]
Wall time suffers when other processes share the CPU, so CPU time of this process is printed too,
and the table uses CPU time.
"""

from __future__ import annotations

import io
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

import helpers as H  # noqa: E402
from helpers.core.language import vocabulary  # noqa: E402
from helpers.core.model import GPT, GPTConfig, LanguageModel  # noqa: E402
from helpers.core.tokenizer import WordTokenizer  # noqa: E402
from benchlib import parser, record  # noqa: E402
from helpers.figures.mosaic import AllHeadsView, plot_all_heads  # noqa: E402
from helpers.widgets.frame import Frame  # noqa: E402

SENTENCE = "I like to draw my picture . the cat near these big dogs is tired ."
OTHER = "the cat near these big dogs is tired . I like to draw my picture ."  # the same length


def timed(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of fn()."""
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


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


def classroom_shaped_model() -> LanguageModel:
    """The classroom 12 × 12 config with random weights: speed does not depend on training."""
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(vocabulary()), n_ctx=64, n_layer=12, n_head=12, n_embd=96)
    return LanguageModel("random-12x12", GPT(config).eval(), WordTokenizer(vocabulary()))


def main() -> None:
    quick = parser(__doc__).parse_args().quick
    repeats = 1 if quick else 9
    lm = classroom_shaped_model()
    runs = [H.run_sentence(lm, SENTENCE), H.run_sentence(lm, OTHER)]
    attn = runs[0].attentions.numpy()  # (12, 12, T, T)
    assert runs[1].attentions.shape == runs[0].attentions.shape, "the redraw compares maps of one shape"
    print(f"attention {tuple(attn.shape)}, figure 1200 x 1200 px PNG")
    for label, png in (("default PNG", {}), ("light PNG", {"compress_level": 1})):
        mosaic = timed(lambda: mosaic_grid(attn, runs[0].tokens, png), repeats)
        print(f"mosaic built + PNG ({label:11s}): {mosaic[0]:7.1f} ms wall  {mosaic[1]:7.1f} ms CPU")
        record(f"144-head grid built + PNG ({label}), CPU", mosaic[1], "ms", note=f"wall {mosaic[0]:.1f} ms")
    redraw = redrawn_grid(runs)
    again = timed(redraw, 2 if quick else 15)
    print(f"mosaic redrawn + light PNG      : {again[0]:7.1f} ms wall  {again[1]:7.1f} ms CPU")
    record("144-head grid redrawn (kept figure, new maps) + PNG, CPU", again[1], "ms", note=f"wall {again[0]:.1f} ms")


if __name__ == "__main__":
    main()
