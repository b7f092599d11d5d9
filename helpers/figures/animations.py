"""Step-by-step animations for the projector: an animated GIF plus a folder of numbered frames.

    anim = H.one_head_animation()            # "I like to draw": scores, ÷√d, softmax, weighted sum, added back
    anim = H.recombination_animation()       # twelve heads: decompress each, then sum
    gif, frames = H.save_animation(anim, "figures/animations")

Each animation keeps one figure and changes its artists between frames; every frame is
drawn once and its pixels become both a PNG in the frames folder and a GIF frame (Pillow,
which matplotlib already needs).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from ..core.arguments import of_type
from ..core.arrays import to_numpy
from ..core.files import write_set
from ..core.walkthrough import Walkthrough, walkthrough_layer
from .common import ShownFigure, new_figure
from .export import check_folder, check_plain_name
from .slide import SLIDE_INCHES, SLIDE_RC

SIZE = SLIDE_INCHES  # one frame fills the slide
DPI = 96  # 1280 × 720 px: sharp enough on a projector, and each frame is cheap to draw and store
PPTX_SCALE = 6.5 / 7.5  # the pptx shows a frame under its title, at 87 %
# Text of at least 14 / 0.87 = 16.2 pt, so it is still >= 14 pt in the pptx.
FRAME_RC = {**SLIDE_RC, "font.size": 17, "xtick.labelsize": 17, "ytick.labelsize": 17, "axes.labelsize": 18}
DRAW = "I like to draw"


@dataclass
class Animation:
    name: str  # file name: name.gif and the folder name_frames/
    title: str
    caption: str  # one sentence computed from the numbers shown
    frames: list[Image.Image] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)  # how long each frame stays
    figure: Figure | None = None  # as in the last frame (for the slide layout check)

    def gif_bytes(self) -> bytes:
        """The frames as one looping animated GIF."""
        first, *rest = [f.quantize(colors=255, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
                        for f in self.frames]  # fast, and flat colours need no dithering
        buffer = io.BytesIO()
        first.save(buffer, format="GIF", save_all=True, append_images=rest, loop=0,
                   duration=[round(1000 * s) for s in self.seconds], comment=self.caption.encode())
        return buffer.getvalue()

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Shown as the playing GIF in JupyterLab (no file written), its caption as the alt text."""
        alt = f"{self.title}: an animation of {len(self.frames)} frames. {self.caption}"
        return ShownFigure(self.gif_bytes(), alt, "image/gif")._repr_mimebundle_(include, exclude)


@contextlib.contextmanager
def _frame_figure() -> Iterator[tuple[Figure, FigureCanvasAgg]]:
    """A slide-sized figure in the frames' style, and its canvas (new_figure's FigureCanvasAgg)."""
    with mpl.rc_context(FRAME_RC):
        fig = new_figure(figsize=SIZE, dpi=DPI, facecolor="white")
        yield fig, fig.canvas


def grab_frame(anim: Animation, canvas: FigureCanvasAgg, seconds: float, moving=(), background=None) -> None:
    """Draw a frame (only the `moving` artists over a saved background, when given) and keep its pixels."""
    if background is None:
        canvas.draw()
    else:
        canvas.restore_region(background)
        for artist in moving:
            artist.axes.draw_artist(artist) if artist.axes else canvas.figure.draw_artist(artist)
    anim.frames.append(Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3].copy()))
    anim.seconds.append(seconds)


# --- one head, step by step -------------------------------------------------------------
def one_head_animation(walk: Walkthrough | None = None, head: int | None = None) -> Animation:
    """One head of the walkthrough layer on "I like to draw" (notebook 01's one head of 768 by
    default), for the last word, in five steps."""
    walk = walk or walkthrough_layer("classroom", n_heads=1, sentence=DRAW)
    T = len(walk.tokens)
    head = walk.pick_head(T - 1, walk.tokens.index("I")) if head is None else head
    s, layer = walk.head(head), walk.steps()
    d, word = walk.d_head, walk.tokens[-1]
    after = to_numpy(layer.residual[-1] + layer.per_head[head, -1])
    steps = [
        ("1. Scores: every query · every key; the mask blanks later words", to_numpy(s.scores), "{:.1f}"),
        (f"2. Divide by √d = √{d} {_root(d)}", to_numpy(s.scaled), "{:.2f}"),
        ("3. Softmax along each row: every row sums to 1", to_numpy(s.weights), "{:.2f}"),
    ]
    w = to_numpy(s.weights)[-1]
    top = int(np.argmax(w))
    who = "The head" if walk.n_heads == 1 else f"Head {head} of {walk.n_heads}"
    anim = Animation("one_head_steps", "One head, step by step",
                     f"{who} on '{' '.join(walk.tokens)}': after ÷√{d} and softmax, '{word}' gives {w[top]:.2f} of its weight "
                     f"to '{walk.tokens[top]}', and the weighted sum of values is added back to its embedding.")
    with _frame_figure() as (fig, canvas):
        left, right = fig.subplots(1, 2, width_ratios=[1, 1.15])
        fig.subplots_adjust(left=0.19, right=0.98, top=0.85, bottom=0.13, wspace=0.6)  # fixed: fits every step's
        # labels (a layout engine per frame would cost more than drawing it)
        heading = fig.suptitle("")
        for text, matrix, fmt in steps:
            _matrix(left, matrix, walk.tokens, fmt)
            _explain(right, text, matrix[-1], walk.tokens, fmt, word)
            heading.set_text(text)
            grab_frame(anim, canvas, 1.6)
        _weighted_sum(left, right, to_numpy(s.weights)[-1], to_numpy(s.V), to_numpy(s.z)[-1], walk.tokens, word)
        heading.set_text(f"4. Weighted sum of the values: '{word}' gets a {d}-number update")
        grab_frame(anim, canvas, 1.8)
        one = walk.n_heads == 1  # a single wide head: nothing to decompress, no other heads to share with
        _added_back(left, right, to_numpy(layer.residual[-1]), to_numpy(layer.per_head[head, -1]), after, word,
                    walk.d_model, one)
        heading.set_text(f"5. Through W_O and added back to '{word}'" if one
                         else f"5. Decompressed to {walk.d_model} and added back to '{word}'")
        grab_frame(anim, canvas, 3.0)
    anim.figure = fig
    return anim


def _root(d: int) -> str:
    """'= 8' for √64, '≈ 27.7' for √768: a rounded root is not an equality."""
    root = np.sqrt(d)
    return f"= {root:.0f}" if root == round(root) else f"≈ {root:.1f}"


def _matrix(ax, matrix: np.ndarray, tokens, fmt: str) -> None:
    ax.clear()
    shown = np.where(np.triu(np.ones_like(matrix), 1) > 0, np.nan, matrix)  # future keys: not looked at
    ax.imshow(shown, cmap="viridis")
    for (i, j), v in np.ndenumerate(matrix):
        if j <= i:
            ax.text(j, i, fmt.format(v), ha="center", va="center",
                    color="black" if v >= np.nanmean(shown) else "white")
    ax.set_xticks(range(len(tokens)), tokens)
    ax.set_yticks(range(len(tokens)), tokens)
    ax.set_xlabel("key")
    ax.set_ylabel("query")


def _explain(ax, text: str, row: np.ndarray, tokens, fmt: str, word: str) -> None:
    ax.clear()
    ax.bar(range(len(row)), row, color="#0072B2")
    for i, v in enumerate(row):
        ax.text(i, v, fmt.format(v), ha="center", va="bottom" if v >= 0 else "top")
    ax.axhline(0, color="black", lw=1)
    ax.set_xticks(range(len(tokens)), tokens)
    ax.set_ylim(min(0, row.min()) * 1.25, max(0.05, row.max()) * 1.25)
    ax.set_title(f"the row of '{word}'")


def _weighted_sum(left, right, weights, V, z, tokens, word) -> None:
    left.clear()
    weighted = weights[:, None] * V  # each word's value, scaled by how much 'draw' looks at it
    limit = float(np.abs(np.concatenate([weighted, z[None]])).max()) or 1.0
    left.imshow(weighted, cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    left.set_yticks(range(len(tokens)), [f"{w:.2f} × value({t})" for w, t in zip(weights, tokens)])
    left.set_xticks([0, V.shape[1] - 1], ["1", str(V.shape[1])])
    left.set_xlabel(f"{V.shape[1]} numbers per word")
    right.clear()
    right.imshow(z[None], cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    right.set_yticks([0], [f"update of '{word}'"])
    right.set_xticks([0, len(z) - 1], ["1", str(len(z))])
    right.set_title("= the sum of the weighted rows")


def _added_back(left, right, before, update, after, word, D, one_head: bool = False) -> None:
    limit = float(np.abs(np.stack([before, update, after])).max()) or 1.0
    added = ["before", "+ the update" if one_head else "+ this head"]
    for ax, rows, names in ((left, [before, update], added), (right, [after], ["after"])):
        ax.clear()
        ax.imshow(np.stack(rows), cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
        ax.set_yticks(range(len(rows)), names)
        ax.set_xticks([0, D - 1], ["1", str(D)])
    left.set_title(f"'{word}' and the update" if one_head else f"'{word}' and this head's share")
    right.set_title(f"'{word}' afterwards")


# --- twelve heads recombining ---------------------------------------------------------------
def recombination_animation(walk: Walkthrough | None = None, word: int = -1) -> Animation:
    """Each head's update for one word, decompressed to D numbers, added up one head at a time."""
    walk = walk or walkthrough_layer("classroom", n_heads=12, sentence=DRAW)
    s = walk.steps()
    per_head = to_numpy(s.per_head)[:, word]  # (H, D)
    z = to_numpy(s.z)[:, word]  # (H, d)
    H, D = per_head.shape
    total = to_numpy(s.update)[word]
    name = walk.tokens[word]
    sums = np.cumsum(per_head, axis=0)  # (H, D): the running total after each head
    bias = to_numpy(walk.b_O)  # what the layer adds once, after the heads
    anim = Animation("twelve_heads_recombining", f"{H} heads recombining",
                     f"Each of the {H} heads' {z.shape[1]}-number updates for '{name}' is decompressed to {D} "
                     f"numbers and added up; the sum plus the output bias b_O is the layer's update, "
                     f"concat · W_O + b_O (largest difference {np.abs(sums[-1] + bias - total).max():.0e}).")
    limit = float(np.abs(np.concatenate([per_head, sums])).max()) or 1.0
    colour = mpl.colormaps["coolwarm"]  # values are coloured once, up front: frames only copy pixels
    rgba = lambda values: colour((np.asarray(values) + limit) / (2 * limit), bytes=True)  # noqa: E731
    style = dict(aspect="auto", interpolation="nearest")
    with _frame_figure() as (fig, canvas):
        top, bottom = fig.subplots(2, 1, height_ratios=[3, 1])
        fig.subplots_adjust(left=0.16, right=0.97, top=0.86, bottom=0.12, hspace=0.45)
        blocks = np.full((H, D, 4), 255, dtype=np.uint8)  # white until a head is added
        image = top.imshow(blocks, **style)
        top.set_yticks(range(H), [f"head {h}" for h in range(H)])
        top.set_xticks([0, D - 1], ["1", str(D)])
        top.set_title(f"each head's update, decompressed: z_h [1 × {z.shape[1]}] · W_O[h] → [1 × {D}]")
        running = bottom.imshow(np.full((1, D, 4), 255, dtype=np.uint8), **style)
        bottom.set_yticks([0], ["sum so far"])
        bottom.set_xticks([0, D - 1], ["1", str(D)])
        bottom.set_xlabel("feature   (red: positive, blue: negative, grey: near 0)")
        heading = fig.suptitle("")
        moving = (image, running, heading)
        for artist in moving:
            artist.set_animated(True)  # left out of the background; drawn on top of it each frame
        canvas.draw()
        background = canvas.copy_from_bbox(fig.bbox)  # axes, ticks and labels: drawn once (blitting)
        for h in range(H):
            blocks[h] = rgba(per_head[h])
            image.set_data(blocks)
            running.set_data(rgba(sums[h][None]))
            heading.set_text(f"Decompress head {h} and add it: {h + 1} of {H} heads in the sum")
            grab_frame(anim, canvas, 0.6 if 0 < h < H - 1 else 1.5, moving, background)
        running.set_data(rgba((sums[-1] + bias)[None]))
        bottom.set_yticks([0], ["+ bias = update"])
        heading.set_text(f"All {H} added, plus the output bias: the layer's update for '{name}'")
        for artist in moving:
            artist.set_animated(False)
        grab_frame(anim, canvas, 3.0)  # the last frame in full: its label changed
    anim.figure = fig
    return anim


# --- writing -----------------------------------------------------------------------------------
def save_animation(anim: Animation, folder: str | Path = "figures/animations") -> tuple[Path, Path]:
    """Write folder/name.gif (loops) and folder/name_frames/frame_NN.png, each file whole or not at all."""
    of_type(anim, "anim", Animation, "what H.one_head_animation() or H.recombination_animation() returns")
    check_plain_name(anim.name, example="one_head_steps")
    folder = check_folder(folder)
    frames, caption = folder / f"{anim.name}_frames", (anim.caption + "\n").encode("utf-8")
    files = {frames / f"frame_{i:02d}.png": _png(frame) for i, frame in enumerate(anim.frames)}
    files |= {frames / "caption.txt": caption, folder / f"{anim.name}.gif": anim.gif_bytes(),
              folder / f"{anim.name}.txt": caption}
    write_set(files)
    for stale in set(frames.glob("frame_*.png")) - set(files):  # an older, longer run's frames
        stale.unlink()
    return folder / f"{anim.name}.gif", frames


def _png(frame: Image.Image) -> bytes:
    buffer = io.BytesIO()
    frame.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def build_animations(one: Walkthrough | None = None, twelve: Walkthrough | None = None) -> list[Animation]:
    """Both animations: one head of 768 (notebook 01) and twelve heads of 64 recombining (notebook 03)."""
    return [one_head_animation(one), recombination_animation(twelve)]
