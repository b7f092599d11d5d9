"""Does a figure work as a slide? A layout check from matplotlib's own text extents.

    report = H.check_slide(fig, size=(13.33, 7.5))   # draws the figure at slide size
    report.ok, report.problems                        # [] when every rule holds

The rules (what a class at the back of the room needs):
  * every text lies inside the figure;
  * no two texts overlap (rotated labels are compared as the rotated boxes they are);
  * the smallest text is >= 14 pt *on the slide*: a figure shown on a 13.33 × 7.5 in slide
    is scaled to fit, so a 19.2-in figure's 14 pt becomes ~9.7 pt there;
  * the content (the axes with their labels) spans >= 60 % of the width and is roughly
    centred, unless the slide is deliberately composed (then say why: `composed="..."`);
  * every text stands out from what it is drawn on: a WCAG contrast ratio of >= 3:1 between
    its colour and the pixels under it (axes or legend face, image, bbox, or the background
    the export saves on), so white text on a white slide is caught.
Only texts that matplotlib actually draws count (tick labels beyond the view limits exist
but are never drawn), so the check records them while it draws; it draws as a save does, so
a widget's animated texts (the words a Frame redraws by blitting) count too.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.text import Text

from .slide import MIN_FONT_PT, SLIDE_INCHES, export_facecolor, slide_scale, slide_sized  # as the exports

MIN_SPAN = 0.60  # content width / slide width
MAX_OFF_CENTRE = 0.20  # |left margin - right margin| / slide width
TOUCH_PX = 1.0  # boxes may touch by this much without counting as an overlap
MIN_CONTRAST = 3.0  # WCAG's minimum for large text (1:1 is invisible, 21:1 black on white)


@dataclass
class SlideCheck:
    """What the check measured, and the rules that failed (empty when the slide is fine)."""
    min_pt: float  # smallest text, in points on the slide
    span: float  # content width as a fraction of the slide width
    n_texts: int
    composed: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        verdict = "ok" if self.ok else "FAIL: " + "; ".join(self.problems)
        layout = f"composed ({self.composed})" if self.composed else f"spans {self.span:.0%}"
        return f"{self.n_texts} texts, smallest {self.min_pt:.1f} pt, {layout}: {verdict}"


def check_slide(fig: Figure, size: tuple[float, float] | None = SLIDE_INCHES, composed: str | None = None) -> SlideCheck:
    """Draw `fig` as it is exported at `size` (inches; None keeps its size) and check the slide rules."""
    if not isinstance(fig, Figure):
        raise ValueError(f"check_slide needs a matplotlib Figure, got {type(fig).__name__}.")
    with slide_sized(fig, size):
        return _measure(fig, composed)


def check_layout(fig: Figure, name: str) -> SlideCheck:
    """Check a figure that already has its slide size; one SlideLayoutWarning line when a rule fails."""
    report = _measure(fig, composed=None)
    if not report.ok:
        warnings.warn(f"{name}: {'; '.join(report.problems[:3])}", SlideLayoutWarning, stacklevel=3)
    return report


class SlideLayoutWarning(UserWarning):
    """A saved figure breaks a slide rule (cut, overlapping, small or squeezed text)."""


def _measure(fig: Figure, composed: str | None) -> SlideCheck:
    renderer = RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)  # its own: the figure's canvas is untouched
    animated = [a for a in fig.findobj() if a.get_animated()]  # a widget's blitted words: a save draws them too
    with _recording_drawn_texts() as texts:
        try:
            for artist in animated:
                artist.set_animated(False)
            fig.draw(renderer)  # runs the layout engine too, as a save does
        finally:
            for artist in animated:
                artist.set_animated(True)
    backgrounds = texts.backgrounds
    texts = list(texts)
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
        ratio = _contrast(_over(to_rgba(t.get_color(), t.get_alpha()), paper), _over(backgrounds[id(t)], paper))
        if ratio < MIN_CONTRAST:
            problems.append(f"{_kind(t, fig)}{_name(t)} is nearly invisible "
                            f"(contrast {ratio:.1f}:1 against its background, needs >= {MIN_CONTRAST:.0f}:1)")
    span, left, right = _content_span(fig, renderer)
    if not composed:
        if span < MIN_SPAN:
            problems.append(f"content spans {span:.0%} of the width (needs >= {MIN_SPAN:.0%})")
        elif abs(left - right) > MAX_OFF_CENTRE:
            problems.append(f"content is off-centre (margins {left:.0%} left, {right:.0%} right)")
    return SlideCheck(min_pt, span, len(texts), composed, problems[:12])


class _Drawn(list):
    """The drawn texts, and for each (by id) the RGBA colour of the pixels it was drawn on."""
    backgrounds: dict[int, np.ndarray]


@contextlib.contextmanager
def _recording_drawn_texts() -> Iterator[_Drawn]:
    """Collect every non-empty Text that draws itself while the block runs (ticks included), and
    what lies under it: the renderer's pixels in its box just before it draws (faces, images,
    earlier artists), or its own bbox patch when it has an opaque one."""
    drawn = _Drawn()
    drawn.backgrounds = {}
    original = Text.draw

    def draw(self, renderer):
        shown = self.get_visible() and self.get_text().strip()
        if shown and isinstance(renderer, RendererAgg):
            drawn.backgrounds[id(self)] = _background(self, renderer)
        original(self, renderer)
        if shown:
            drawn.append(self)

    Text.draw = draw  # Annotation and tick labels call Text.draw too
    try:
        yield drawn
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
    return rgba[:3] * rgba[3] + paper * (1 - rgba[3])


def _luminance(rgb: np.ndarray) -> float:
    """WCAG 2 relative luminance of an sRGB colour in 0..1."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def _contrast(a: np.ndarray, b: np.ndarray) -> float:
    """WCAG contrast ratio, 1 (the same colour) to 21 (black on white)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _kind(text: Text, fig: Figure) -> str:
    """'title ' for axes and figure titles, so the problem says which text a reader should look for."""
    titles = [getattr(fig, "_suptitle", None)] + [t for ax in fig.axes for t in
                                                  (ax.title, getattr(ax, "_left_title", None),
                                                   getattr(ax, "_right_title", None))]
    return "title " if any(text is t for t in titles) else ""


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


def _content_span(fig: Figure, renderer) -> tuple[float, float, float]:
    """Width of the visible axes with their labels, and the left/right margins, as fractions of the figure."""
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    boxes = [b for b in boxes if b is not None and b.width > 0]
    if not boxes:
        return 0.0, 0.5, 0.5
    W = fig.bbox.width
    x0 = max(0.0, min(b.x0 for b in boxes))
    x1 = min(W, max(b.x1 for b in boxes))
    return (x1 - x0) / W, x0 / W, (W - x1) / W


def _name(text: Text) -> str:
    words = " ".join(text.get_text().split())
    return repr(words if len(words) <= 30 else words[:29] + "…")
