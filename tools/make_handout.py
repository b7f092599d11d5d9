"""One-page handout of the shapes of one attention layer, from the shipped walkthrough models' own tensors.

    python tools/make_handout.py                  # writes docs/shapes_handout.pdf
    python tools/make_handout.py --out FILE.pdf   # or .png, to look at it

Every shape on the page is read from a tensor that notebooks 01-03 compute on "I like to draw" (walkthrough-12:
twelve heads of 64; walkthrough-1: one head of 768), so a retrained or resized model gives a new handout, never a
page typed by hand. Each matrix is also drawn as a box whose sides grow with the log of its sizes.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import helpers as H  # noqa: E402

SENTENCE = "I like to draw"
OUT = ROOT / "docs" / "shapes_handout.pdf"
PAGE_H = 11.69  # A4 portrait, inches


@dataclass(frozen=True)
class Step:
    """One line of the handout: what is computed, in code, and the shapes that meet."""
    what: str
    code: str
    shapes: tuple  # (name, shape) pairs: the operands, then the result last
    notebook: str
    op: str = "·"  # what joins the operands: a product, or + for the residual


def shape_of(t) -> tuple:
    return tuple(int(n) for n in t.shape)


def trained_walk(n_heads: int):
    """The shipped walkthrough layer; refuses the seeded stand-in, whose shapes would teach nothing true."""
    walk = H.walkthrough_layer("classroom", n_heads=n_heads, sentence=SENTENCE)
    if walk.source != "trained":
        raise FileNotFoundError(f"walkthrough-{n_heads} is not shipped in data/ (source {walk.source!r}); "
                                f"restore data/ before making the handout.")
    return walk


def handout_steps() -> list[Step]:
    """The layer's products for one head of 64, then for twelve, each shape read from the model's tensors."""
    walk = trained_walk(12)
    layer = walk.steps()  # every head's Q, K, V, scores, weights, updates, concatenation and update
    h = 0
    X, W_Q, Q, K, V = walk.X, walk.W_Q[h], layer.Q[h], layer.K[h], layer.V[h]
    W_O = walk.W_O.reshape(-1, walk.d_model)  # the twelve [64 × 768] blocks stacked: [768 × 768]
    return [
        Step("the sentence as numbers", "X = LayerNorm(embeddings)", (("X", shape_of(X)),), "01"),
        Step("one head's query matrix (W_K, W_V alike)", "W_Q = walk.W_Q[0]", (("W_Q", shape_of(W_Q)),), "02"),
        Step("queries (keys, values alike)", "Q = X @ W_Q + b_Q",
             (("X", shape_of(X)), ("W_Q", shape_of(W_Q)), ("Q", shape_of(Q))), "02"),
        Step("scores: each query against each key", "scores = Q @ K.T / √d",
             (("Q", shape_of(Q)), ("K.T", shape_of(K.T)), ("scores", shape_of(layer.scores[h]))), "02"),
        Step("weights: mask, softmax over the keys", "weights = softmax(mask(scores))",
             (("scores", shape_of(layer.scores[h])), ("weights", shape_of(layer.weights[h]))), "01"),
        Step("the head's update: a weighted sum", "z = weights @ V",
             (("weights", shape_of(layer.weights[h])), ("V", shape_of(V)), ("z", shape_of(layer.z[h]))), "02"),
        Step(f"{walk.n_heads} heads side by side", "z[h] = weights[h] @ V[h]",
             (("z of all heads", shape_of(layer.z)),), "03"),
        Step("concatenate, head 0 first", "concat = merge_heads(z)",
             (("z", shape_of(layer.z)), ("concat", shape_of(layer.concat))), "03"),
        Step("recombine: one output matrix", "update = concat @ W_O + b_O",
             (("concat", shape_of(layer.concat)), ("W_O", shape_of(W_O)), ("update", shape_of(layer.update))),
             "03"),
        Step("added to the input", "residual + update",
             (("residual", shape_of(walk.residual)), ("update", shape_of(layer.update)),
              ("new residual", shape_of(walk.residual + layer.update))), "03", op="+"),
    ]


def one_head_of_768() -> list[tuple[str, tuple]]:
    """Notebook 01's single head, for the side note: the same steps with d = 768."""
    walk = trained_walk(1)
    layer = walk.steps()
    return [("W_Q", shape_of(walk.W_Q[0])), ("Q", shape_of(layer.Q[0])), ("scores", shape_of(layer.scores[0])),
            ("z", shape_of(layer.z[0]))]


def facts() -> dict:
    """The numbers the page states besides shapes: sizes, the split of W_O, the parameter count."""
    walk = trained_walk(12)
    return {"tokens": list(walk.tokens), "d_model": walk.d_model, "n_heads": walk.n_heads, "d_head": walk.d_head,
            "W_O block": shape_of(walk.W_O[0]), "params": H.attention_param_count(walk.d_model, walk.n_heads)}


def label(shape: tuple) -> str:
    return "[" + " × ".join(str(n) for n in shape) + "]"


def side(n: int) -> float:
    """A box side in inches: the log of the size, so 4, 64 and 768 are all visible."""
    return 0.1 + 0.42 * math.log2(n) / math.log2(768)


def draw_box(ax, x: float, y: float, shape: tuple, name: str, result: bool) -> float:
    """A matrix as a box (rows down, columns across) with its name and shape below; returns the x after it."""
    rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[0])
    w, h = side(cols), side(rows)
    depth = shape[0] if len(shape) == 3 else 1
    for k in range(min(depth, 3) - 1, -1, -1):  # a stack of heads drawn as three offset boxes
        ax.add_patch(Rectangle((x + 0.04 * k, y - h + 0.04 * k), w, h, facecolor="#fde9c9" if result else "#dbe8f5",
                               edgecolor="#333333", linewidth=0.8))
    ax.text(x + w / 2, y - h - 0.06, f"{name}\n{label(shape)}", ha="center", va="top", fontsize=9,
            family="DejaVu Sans Mono", fontweight="bold" if result else "normal", linespacing=1.3)
    return x + max(w, 0.075 * len(label(shape))) / 2 + w / 2 + 0.45


def draw_step(ax, y: float, number: int, step: Step) -> float:
    """One row of the handout, its top at y; returns the y of the next row."""
    ax.text(0.35, y, f"{number}", fontsize=12, fontweight="bold", va="top", color="#1f4e79")
    ax.text(0.65, y, step.what, fontsize=10.5, va="top")
    ax.text(0.65, y - 0.22, step.code, fontsize=9.5, va="top", family="DejaVu Sans Mono", color="#444444")
    ax.text(0.65, y - 0.42, f"notebook {step.notebook}", fontsize=8, va="top", color="#777777")
    x, tallest = 4.1, 0.0
    for i, (name, shape) in enumerate(step.shapes):
        result = i == len(step.shapes) - 1 and len(step.shapes) > 1
        if i:
            ax.text(x - 0.24, y - 0.1, "→" if result else step.op, fontsize=14, ha="center", va="center")
        tallest = max(tallest, side(shape[-2] if len(shape) >= 2 else 1))
        x = draw_box(ax, x, y, shape, name, result)
    return y - max(0.78, tallest + 0.48)


def make_figure():
    """The page: A4 portrait, the title and sizes, the ten steps, a side note on notebook 01's head of 768."""
    steps, f, one = handout_steps(), facts(), one_head_of_768()
    fig = plt.figure(figsize=(8.27, PAGE_H))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 8.27)
    ax.set_ylim(0, PAGE_H)  # inches from the bottom
    ax.axis("off")
    ax.text(0.35, PAGE_H - 0.45, "One attention layer, shape by shape", fontsize=17, fontweight="bold", va="top")
    ax.text(0.35, PAGE_H - 0.85, f"\"{SENTENCE}\": T = {len(f['tokens'])} words · width D = {f['d_model']} · "
                        f"{f['n_heads']} heads of d = {f['d_model']} / {f['n_heads']} = {f['d_head']}",
            fontsize=11, va="top")
    ax.text(0.35, PAGE_H - 1.12,
            "Rows are words (queries); in scores and weights, columns are the words looked at (keys).", fontsize=9, va="top", color="#444444")
    y = PAGE_H - 1.55
    for number, step in enumerate(steps, 1):
        y = draw_step(ax, y, number, step)
    note = (f"W_O is {f['n_heads']} blocks of {label(f['W_O block'])}, one per head: concatenating and then "
            f"multiplying by W_O\nequals the sum of the {f['n_heads']} heads' updates, each through its own block.\n"
            f"Parameters of the layer (W_Q, W_K, W_V, W_O and biases): 4·D² + 4·D = {f['params']:,}, "
            f"for any number of heads.\n"
            "Notebook 01's single head of 768: " + ", ".join(f"{n} {label(s)}" for n, s in one) + ".")
    ax.text(0.35, y - 0.05, note, fontsize=9, va="top", linespacing=1.6)
    return fig


def shapes_keywords(steps: list[Step]) -> str:
    """Every shape of the page as plain ASCII, stored in the PDF's Keywords so a test can read what it shows."""
    seen = dict.fromkeys(pair for step in steps for pair in step.shapes)  # each (name, shape) once, in page order
    return "; ".join(f"{name} {'x'.join(map(str, shape))}" for name, shape in seen)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the file to write (.pdf or .png)")
    out = parser.parse_args(argv).out
    fig = make_figure()
    metadata = {"Title": "One attention layer, shape by shape", "Keywords": shapes_keywords(handout_steps()),
                "CreationDate": None}  # no date: the same model gives the same bytes
    fig.savefig(out, metadata=metadata if out.suffix == ".pdf" else None)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
