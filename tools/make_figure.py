"""Draw the README's picture, docs/attention.png, with the package's own export function.

    python tools/make_figure.py
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import helpers as H  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    walk = H.walkthrough_layer("classroom", n_heads=12, sentence="I like to draw")
    with H.slide_style():
        fig = H.plot_heads(walk.steps().weights, walk.tokens, ncols=6,
                           title=f'12 heads of 64 reading "I like to draw" ({walk.model_name}, weights: {walk.source})')
    paths = H.save_for_slides(fig, "attention", folder=ROOT / "docs", formats=("png",), size=(12.8, 5.6), dpi=80)
    print(*paths, f"{paths[0].stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
