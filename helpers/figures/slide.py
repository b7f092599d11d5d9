"""One slide geometry and style for every figure, export, check, animation and deck page.

A figure is shown on PowerPoint's 16:9 slide, SLIDE_INCHES (13.33 × 7.5 in); exports are drawn at
one of SIZES and fitted onto it. Every text must be at least MIN_FONT_PT points *on the slide*.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import matplotlib as mpl
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.text import Text

SLIDE_INCHES = (1920 / 144, 1080 / 144)  # PowerPoint's 16:9 slide: 13.33 × 7.5 in


def slide_scale(fig_inches) -> float:
    """How much a figure of this size is scaled when it is fitted onto a 13.33 × 7.5 in slide."""
    w, h = fig_inches
    return min(SLIDE_INCHES[0] / w, SLIDE_INCHES[1] / h)


# A 16:9 slide is 12.8 × 7.2 inches: 1920 × 1080 px at 150 dpi, 2560 × 1440 px at 200 dpi.
# 14 pt text there is about 29 px high at 1080p, readable from the back of a classroom.
SIZES = {"16:9": (12.8, 7.2), "4:3": (9.6, 7.2)}


MIN_FONT_PT = 14


SLIDE_CMAP = "viridis"  # perceptually uniform and colour-blind safe; "cividis" is the other good choice
# The colour maps a class can choose (slide_style(cmap=...)): dark means little attention, bright much.
CMAPS = {"viridis": "viridis", "cividis": "cividis", "grey": "gray"}


def current_cmap() -> str:
    """The attention colour map now in force: the one slide_style chose, else viridis."""
    chosen = mpl.rcParams["image.cmap"]
    return chosen if chosen in CMAPS.values() else SLIDE_CMAP


SLIDE_RC = {
    "font.size": 16,
    "axes.titlesize": 20,
    "axes.labelsize": 18,
    "xtick.labelsize": 16,
    "ytick.labelsize": 16,
    "legend.fontsize": 15,
    "figure.titlesize": 22,
    "axes.linewidth": 1.5,
    "lines.linewidth": 3.0,
    "xtick.major.width": 1.5,
    "ytick.major.width": 1.5,
    "image.cmap": SLIDE_CMAP,
    "axes.prop_cycle": mpl.cycler(color=["#0072B2", "#E69F00", "#009E73", "#D55E00",
                                         "#CC79A7", "#56B4E9", "#F0E442", "#000000"]),  # Okabe–Ito
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "text.color": "black",
    "axes.labelcolor": "black",
    "xtick.color": "black",
    "ytick.color": "black",
    "savefig.facecolor": "white",
    "svg.hashsalt": "attention-slides",  # the same figure gives the same SVG every time
}


# The rc settings that decide what a saved file looks like, pinned around every export's savefig so a
# user's matplotlibrc or rc_context cannot change it: "savefig.bbox: tight" would crop the 2560 × 1440 px
# PNG to some other size, "savefig.transparent" would drop the background the text was made legible on,
# and "savefig.dpi" is the resolution of images inside the deck's PDF pages (PNG exports pass dpi=).
# figure.dpi needs no pin: savefig's dpi replaces the figure's own while it saves.
EXPORT_RC = {
    "savefig.bbox": None,  # the whole figure, never cropped: pixel size = inches × dpi
    "savefig.pad_inches": 0.1,  # used only with a tight bbox; pinned so no rc reaches the file
    "savefig.transparent": False,
    "savefig.dpi": 100,  # matplotlib's default: the deck PDF's images at the resolution they always had
    "savefig.edgecolor": "auto",
    "svg.hashsalt": SLIDE_RC["svg.hashsalt"],  # fixed clip-path ids: the same figure gives the same SVG
}


def contrast_ratio(foreground, background) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21; text needs at least 4.5 (level AA)."""
    def luminance(colour) -> float:
        channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgba(colour)[:3]]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_colour_on(background) -> str:
    """Black or white, whichever reads better on `background` (at least 4.58 : 1 on any colour)."""
    return max(("black", "white"), key=lambda text: contrast_ratio(text, background))


def export_facecolor(fig: Figure) -> tuple[float, float, float, float]:
    """The opaque background an export is saved on: the figure's own facecolor as it looks on a white slide.

    Why this rule: a figure's texts were coloured for the figure's own background (a dark style such as
    "dark_background" sets a black facecolor *and* white text), so keeping that background keeps whatever
    contrast the figure had; forcing white (as exports used to) turned white text invisible. A transparent
    or translucent facecolor is composited onto white, the slide the picture is placed on, so the file is
    opaque and looks the same in every viewer. A white figure (slide_style, matplotlib's default) saves
    exactly as before. check_slide measures contrast against this same background.
    """
    r, g, b, a = to_rgba(fig.get_facecolor())
    return (r * a + (1 - a), g * a + (1 - a), b * a + (1 - a), 1.0)


@contextlib.contextmanager
def slide_style(cmap: str | None = None) -> Iterator[dict]:
    """Projector rc settings for the figures (and widgets) built inside the `with` block.
    cmap: "viridis" (default), "cividis" or "grey" (high contrast); None keeps the one in force."""
    if cmap is not None and cmap not in CMAPS:
        raise ValueError(f"cmap={cmap!r} is not one of the colour maps; choose one of {', '.join(CMAPS)}.")
    chosen = CMAPS[cmap] if cmap is not None else current_cmap()
    with mpl.rc_context({**SLIDE_RC, "image.cmap": chosen}):
        yield SLIDE_RC


@contextlib.contextmanager
def slide_sized(fig: Figure, inches: tuple[float, float] | None) -> Iterator[None]:
    """Temporarily give the figure the slide size, a layout engine and slide-sized text.
    Everything is put back afterwards, so saving the same figure twice gives the same file."""
    old_size = tuple(fig.get_size_inches())
    old_engine = fig.get_layout_engine()
    old_places = [(ax, ax.get_position(original=True), ax.get_position()) for ax in fig.axes]
    old_ticks = [(axis, dict(axis._major_tick_kw), dict(axis._minor_tick_kw))
                 for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)]
    relayout = old_engine is None and any(ax.get_subplotspec() for ax in fig.axes)  # axes it can move
    old_fonts = []
    try:
        if inches is not None:
            fig.set_size_inches(*inches, forward=False)
        if relayout:
            fig.set_layout_engine("constrained")
        fig.draw_without_rendering()  # tick labels are made at draw time: make them, then size them
        smallest = min_figure_pt(fig.get_size_inches())
        legible_ticks(fig, smallest)
        old_fonts = [(text, text.get_fontsize()) for text in fig.findobj(Text)]
        for text, pt in old_fonts:
            if text.get_text() and pt < smallest:
                text.set_fontsize(smallest)
        fig.draw_without_rendering()  # constrained layout settles over two draws: the saved one is the next
        yield
    finally:
        fig.set_size_inches(*old_size, forward=False)
        for text, pt in old_fonts:
            text.set_fontsize(pt)
        for axis, major, minor in old_ticks:  # the sizes future tick labels are made with
            axis._major_tick_kw.clear(), axis._major_tick_kw.update(major)
            axis._minor_tick_kw.clear(), axis._minor_tick_kw.update(minor)
        if relayout:
            fig.set_layout_engine("none")
        for ax, original, active in old_places:  # layout engines move axes; put them back
            ax._set_position(original, which="original")  # the private setter keeps the axes in the layout
            ax._set_position(active, which="active")


def min_figure_pt(inches) -> float:
    """The font size in the figure that is MIN_FONT_PT once the figure is fitted onto a 13.33 × 7.5 in
    slide: 14 for a 12.8-in figure, ~20 for a 19.2-in one (it is shrunk on the slide)."""
    return round(max(MIN_FONT_PT, MIN_FONT_PT / slide_scale(inches)), 1)


def legible_ticks(fig: Figure, smallest: float = MIN_FONT_PT) -> None:
    """Tick labels of at least `smallest` pt, also for the ticks a later draw makes anew."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if any(label.get_fontsize() < smallest for label in axis.get_ticklabels(which="both")):
                axis.set_tick_params(which="both", labelsize=smallest)


def slide_inches(size) -> tuple[float, float]:
    if isinstance(size, str) and size in SIZES:
        return SIZES[size]
    if isinstance(size, (tuple, list)) and len(size) == 2 and all(
            isinstance(s, (int, float)) and s > 0 for s in size):
        return float(size[0]), float(size[1])
    raise ValueError(f"size={size!r} is not a slide size; use '16:9', '4:3', (width, height) in inches or None.")
