"""One slide geometry, style and layout check for every figure, export, animation and deck page.

A figure is shown on PowerPoint's 16:9 slide (SLIDE_INCHES, 13.33 × 7.5 in). `H.check_slide(fig)` draws
it there and lists what a class at the back of the room could not read: text outside the figure,
overlapping (rotated labels as rotated boxes), under MIN_FONT_PT on the slide, with contrast under 3:1
against the pixels under it, content under 60 % of the width (unless it fills 90 % of the height), or
content off-centre. Only texts matplotlib actually draws count (ticks beyond the view are never drawn),
so they are recorded while it draws.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Iterator

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
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
    Its texts were coloured for that background (dark styles have white text), so forcing white would hide
    them; a translucent one is composited onto white, so every viewer shows the same file."""
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
    old_places = [(ax, ax.get_position(original=True), ax.get_position(), ax.get_in_layout()) for ax in fig.axes]
    relayout = old_engine is None and any(ax.get_subplotspec() for ax in fig.axes)  # axes it can move
    old_fonts, old_ticks = [], []
    try:
        if inches is not None:
            fig.set_size_inches(*inches, forward=False)
        if relayout:
            fig.set_layout_engine("constrained")
        fig.draw_without_rendering()  # tick labels are made at draw time: make them, then size them
        smallest = min_figure_pt(fig.get_size_inches())
        old_ticks = legible_ticks(fig, smallest)
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
        for axis, which, pt in old_ticks:  # the size tick labels have, and later ones are made with
            axis.set_tick_params(which=which, labelsize=pt)
        if relayout:
            fig.set_layout_engine("none")
        for ax, original, active, in_layout in old_places:  # layout engines move axes; put them back
            ax.set_position(original, which="original")
            ax.set_position(active, which="active")
            ax.set_in_layout(in_layout)  # set_position takes an axes out of any later layout


def min_figure_pt(inches) -> float:
    """The font size in the figure that is MIN_FONT_PT once the figure is fitted onto a 13.33 × 7.5 in
    slide: 14 for a 12.8-in figure, ~20 for a 19.2-in one (it is shrunk on the slide)."""
    return round(max(MIN_FONT_PT, MIN_FONT_PT / slide_scale(inches)), 1)


def legible_ticks(fig: Figure, smallest: float = MIN_FONT_PT) -> list[tuple]:
    """Tick labels of at least `smallest` pt, also for the ticks a later draw makes anew.
    Returns [(axis, "major" or "minor", the size before)] for what it enlarged."""
    enlarged = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for which in ("major", "minor"):
                labels = axis.get_ticklabels(which=which)
                if any(label.get_fontsize() < smallest for label in labels):
                    enlarged.append((axis, which, labels[0].get_fontsize()))
                    axis.set_tick_params(which=which, labelsize=smallest)
    return enlarged


def slide_inches(size) -> tuple[float, float]:
    if isinstance(size, str) and size in SIZES:
        return SIZES[size]
    if isinstance(size, (tuple, list)) and len(size) == 2 and all(
            isinstance(s, (int, float)) and s > 0 for s in size):
        return float(size[0]), float(size[1])
    raise ValueError(f"size={size!r} is not a slide size; use '16:9', '4:3', (width, height) in inches or None.")


# --- the layout check ----------------------------------------------------------------------------

MIN_SPAN = 0.60  # content width / slide width, unless it is as tall as the slide allows:
MIN_TALL = 0.90  # content height / slide height (a square grid fills the height and can be no wider)
MAX_OFF_CENTRE = 0.20  # |left margin - right margin| / slide width
TOUCH_PX = 1.0  # boxes may touch by this much without counting as an overlap
MIN_CONTRAST = 3.0  # WCAG's minimum for large text (1:1 is invisible, 21:1 black on white)


@dataclass
class SlideCheck:
    """What the check measured, and the rules that failed (empty when the slide is fine)."""
    min_pt: float  # smallest text, in points on the slide
    span: float  # content width as a fraction of the slide width
    n_texts: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        verdict = "ok" if self.ok else "FAIL: " + "; ".join(self.problems)
        return f"{self.n_texts} texts, smallest {self.min_pt:.1f} pt, spans {self.span:.0%}: {verdict}"


def check_slide(fig: Figure, size: tuple[float, float] | None = SLIDE_INCHES) -> SlideCheck:
    """Draw `fig` as it is exported at `size` (inches; None keeps its size) and check the slide rules."""
    if not isinstance(fig, Figure):
        raise ValueError(f"check_slide needs a matplotlib Figure, got {type(fig).__name__}.")
    with slide_sized(fig, size):
        return _measure(fig)


def check_layout(fig: Figure, name: str) -> SlideCheck:
    """Check a figure that already has its slide size; one SlideLayoutWarning line when a rule fails."""
    report = _measure(fig)
    if not report.ok:
        warnings.warn(f"{name}: {'; '.join(report.problems[:3])}", SlideLayoutWarning, stacklevel=3)
    return report


class SlideLayoutWarning(UserWarning):
    """A saved figure breaks a slide rule (cut, overlapping, small or squeezed text)."""


def _measure(fig: Figure) -> SlideCheck:
    renderer = RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)  # its own: the figure's canvas is untouched
    animated = [a for a in fig.findobj() if a.get_animated()]  # a widget's blitted words: a save draws them too
    with _recording_drawn_texts() as (texts, backgrounds):
        try:
            for artist in animated:
                artist.set_animated(False)
            fig.draw(renderer)  # runs the layout engine too, as a save does
        finally:
            for artist in animated:
                artist.set_animated(True)
    scale = slide_scale(fig.get_size_inches())
    boxes = [(t, _corners(t, renderer)) for t in texts]
    W, H = fig.bbox.width, fig.bbox.height
    problems = [f"{_name(t)} sticks out of the figure" for t, c in boxes
                if c[:, 0].min() < -TOUCH_PX or c[:, 0].max() > W + TOUCH_PX
                or c[:, 1].min() < -TOUCH_PX or c[:, 1].max() > H + TOUCH_PX]
    for i, (a, ca) in enumerate(boxes):
        for b, cb in boxes[i + 1:]:
            if _polygons_overlap(ca, cb):
                problems.append(f"{_name(a)} overlaps {_name(b)}")
    sizes = [t.get_fontsize() * scale for t in texts]
    min_pt = min(sizes, default=float("inf"))
    if min_pt < MIN_FONT_PT - 0.05:
        small = texts[int(np.argmin(sizes))]
        problems.append(f"{_name(small)} is {min_pt:.1f} pt on the slide (needs >= {MIN_FONT_PT})")
    paper = np.array(export_facecolor(fig)[:3])  # what a transparent pixel shows in the saved file
    for t in (t for t in texts if id(t) in backgrounds):
        ratio = contrast_ratio(_over(to_rgba(t.get_color(), t.get_alpha()), paper), _over(backgrounds[id(t)], paper))
        if ratio < MIN_CONTRAST:
            problems.append(f"{_kind(t, fig)}{_name(t)} is nearly invisible "
                            f"(contrast {ratio:.1f}:1 against its background, needs >= {MIN_CONTRAST:.0f}:1)")
    span, left, right, tall = _content_span(fig, renderer)
    if span < MIN_SPAN and tall < MIN_TALL:
        problems.append(f"content spans {span:.0%} of the width and {tall:.0%} of the height "
                        f"(needs >= {MIN_SPAN:.0%} of the width or >= {MIN_TALL:.0%} of the height)")
    elif abs(left - right) > MAX_OFF_CENTRE:
        problems.append(f"content is off-centre (margins {left:.0%} left, {right:.0%} right)")
    return SlideCheck(min_pt, span, len(texts), problems[:12])


@contextlib.contextmanager
def _recording_drawn_texts() -> Iterator[tuple[list[Text], dict[int, np.ndarray]]]:
    """Collect every non-empty Text that draws itself while the block runs (ticks included), and (by id)
    the RGBA colour under it: the renderer's pixels in its box just before it draws, or its own bbox patch."""
    drawn, backgrounds = [], {}
    original = Text.draw

    def draw(self, renderer):
        shown = self.get_visible() and self.get_text().strip()
        if shown and isinstance(renderer, RendererAgg):
            backgrounds[id(self)] = _background(self, renderer)
        original(self, renderer)
        if shown:
            drawn.append(self)

    Text.draw = draw  # Annotation and tick labels call Text.draw too
    try:
        yield drawn, backgrounds
    finally:
        Text.draw = original


def _background(text: Text, renderer: RendererAgg) -> np.ndarray:
    """The typical colour (per-channel median, straight RGBA in 0..1) of the pixels under the text's box."""
    pixels = np.asarray(renderer.buffer_rgba())  # row 0 is the top of the figure
    box = text.get_window_extent(renderer)
    H, W = pixels.shape[:2]
    x0, x1 = int(np.clip(np.floor(box.x0), 0, W)), int(np.clip(np.ceil(box.x1), 0, W))
    y0, y1 = int(np.clip(np.floor(H - box.y1), 0, H)), int(np.clip(np.ceil(H - box.y0), 0, H))
    under = pixels[y0:y1, x0:x1].reshape(-1, 4)
    colour = np.median(under, axis=0) / 255 if len(under) else np.zeros(4)  # off the canvas: transparent
    patch = text.get_bbox_patch()  # drawn by the text itself, just under its letters
    if patch is not None and patch.get_visible():
        face = np.array(to_rgba(patch.get_facecolor()))
        alpha = face[3] + colour[3] * (1 - face[3])
        rgb = (face[:3] * face[3] + colour[:3] * colour[3] * (1 - face[3])) / (alpha or 1)
        colour = np.append(rgb, alpha)
    return colour


def _over(rgba, paper: np.ndarray) -> np.ndarray:
    """The colour an RGBA colour shows as when drawn on the opaque RGB `paper`."""
    rgba = np.asarray(rgba, dtype=float)
    return np.clip(rgba[:3] * rgba[3] + paper * (1 - rgba[3]), 0, 1)  # rounding must not leave 0..1


def _kind(text: Text, fig: Figure) -> str:
    """'title ' for axes and figure titles, so the problem says which text a reader should look for."""
    titles = {fig.get_suptitle(), *(ax.get_title(loc) for ax in fig.axes for loc in ("center", "left", "right"))}
    return "title " if text.get_text() in titles - {""} else ""


def _corners(text: Text, renderer) -> np.ndarray:
    """The text's box as 4 corners in pixels, rotated with the text (not its upright bounding box)."""
    box = text.get_window_extent(renderer)
    angle = text.get_rotation() % 180
    if angle % 90 == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    text.set_rotation(0)
    upright = text.get_window_extent(renderer)  # the unrotated width and height
    text.set_rotation(angle)
    w, h, t = upright.width / 2, upright.height / 2, np.radians(angle)
    turn = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) @ turn.T
    return corners + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]  # same centre as the bounding box


def _polygons_overlap(p: np.ndarray, q: np.ndarray) -> bool:
    """Separating-axis test for two convex quadrilaterals, ignoring contact of up to TOUCH_PX."""
    for poly in (p, q):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            normal = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1.0)
            a, b = p @ normal, q @ normal
            if a.max() <= b.min() + TOUCH_PX or b.max() <= a.min() + TOUCH_PX:
                return False
    return True


def _content_span(fig: Figure, renderer) -> tuple[float, float, float, float]:
    """Width of the visible axes with their labels, the left/right margins, and the height of those axes
    with the figure's own titles, as fractions of the figure."""
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    boxes = [b for b in boxes if b is not None and b.width > 0]
    if not boxes:
        return 0.0, 0.5, 0.5, 0.0
    W, H = fig.bbox.width, fig.bbox.height
    x0 = max(0.0, min(b.x0 for b in boxes))
    x1 = min(W, max(b.x1 for b in boxes))
    tall = boxes + [t.get_window_extent(renderer) for t in fig.texts if t.get_visible() and t.get_text()]
    y0, y1 = max(0.0, min(b.y0 for b in tall)), min(H, max(b.y1 for b in tall))
    return (x1 - x0) / W, x0 / W, (W - x1) / W, (y1 - y0) / H


def _name(text: Text) -> str:
    words = " ".join(text.get_text().split())
    return repr(words if len(words) <= 30 else words[:29] + "…")
