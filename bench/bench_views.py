"""How fast are the 144-head views? Prints medians from one run; asserts nothing.

1. Render + PNG save of a 12 × 12 grid of attention maps at 1200 × 1200 px:
   the naive figure (144 subplots, one imshow each) against the mosaic (one imshow).
   Target: mosaic <= 1/10 of naive. Printed twice: with savefig's default PNG compression
   (zlib level 6, about 70 ms of the mosaic's time on this machine, the same for both
   figures) and with the light compression the widgets use (level 1).
2. The explorer's update time: moving the layer/head selection (target <= 50 ms median)
   and typing a new sentence (runs the model and lays the figures out again).

Run:  nice -n 19 env OMP_NUM_THREADS=1 MPLBACKEND=Agg .venv/bin/python bench/bench_views.py
Wall time suffers when other processes share the CPU, so CPU time of this process is printed too.
"""

from __future__ import annotations

import io
import statistics
import time

import torch
from matplotlib.figure import Figure

import helpers as H
from helpers.figures.mosaic import plot_all_heads
from helpers.figures.views import CMAP
from helpers.widgets.explorer import Explorer

SENTENCE = "I like to draw my picture . the cat near these big dogs is tired ."


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


def random_classroom_model() -> H.LanguageModel:
    """The classroom 12 × 12 config with random weights: speed does not depend on training."""
    torch.manual_seed(0)
    config = H.GPTConfig(vocab_size=len(H.vocabulary()), n_ctx=64, n_layer=12, n_head=12, n_embd=96)
    return H.LanguageModel("random-12x12", H.GPT(config).eval(), H.WordTokenizer(H.vocabulary()))


def main() -> None:
    lm = random_classroom_model()
    run = H.run_sentence(lm, SENTENCE)
    attn = run.attentions.numpy()  # (12, 12, T, T)
    print(f"attention {tuple(attn.shape)}, figure 1200 x 1200 px PNG")
    for label, png in (("savefig's default PNG (level 6)", {}), ("light PNG (level 1)", {"compress_level": 1})):
        naive = timed(lambda: naive_grid(attn, png), 5)
        mosaic = timed(lambda: mosaic_grid(attn, run.tokens, png), 9)
        print(f"-- {label}")
        print(f"naive 144 subplots + PNG : {naive[0]:7.1f} ms wall  {naive[1]:7.1f} ms CPU")
        print(f"mosaic imshow + PNG      : {mosaic[0]:7.1f} ms wall  {mosaic[1]:7.1f} ms CPU")
        print(f"mosaic / naive           : {mosaic[0] / naive[0]:7.3f} wall   {mosaic[1] / naive[1]:7.3f} CPU"
              f"   (target <= 0.100)")

    explorer = Explorer(lm, SENTENCE)
    picks = iter([(i % 12, (5 * i) % 12) for i in range(1000)])
    select = timed(lambda: explorer.select(*next(picks)), 25)
    sentences = iter(["I like to draw", "the girl sat on the mat because she was tired .", SENTENCE] * 10)
    sentence = timed(lambda: explorer.set_sentence(next(sentences)), 9)
    print(f"explorer select(layer, head) : {select[0]:7.1f} ms wall  {select[1]:7.1f} ms CPU  (target <= 50)")
    print(f"explorer set_sentence(text)  : {sentence[0]:7.1f} ms wall  {sentence[1]:7.1f} ms CPU")


if __name__ == "__main__":
    main()
