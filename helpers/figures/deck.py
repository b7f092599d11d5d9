"""The lecture deck: the key figures of notebooks 01–08 in one 16:9 PDF or PowerPoint file.

    pdf, pngs = H.export_deck()                  # figures/deck/deck.pdf, NN_name.png and NN_name.txt
    pptx, pngs = H.export_deck(format="pptx")    # figures/deck/deck.pptx: titles, pictures, speaker notes

Paths are relative to the folder Python runs in: from a notebook, notebooks/figures/deck/.

Each slide is one entry in SLIDES (add a slide by adding an entry): a file name, a function that
builds the figure from the shipped models, the pptx title, and a function that computes its caption
from the same data. Pages are 13.33 × 7.5 in, the PNGs 1920 × 1080 px; tests/test_deck.py checks
every slide there with slide.check_slide.
"""

from __future__ import annotations

import datetime
import io
import zipfile
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Callable

import matplotlib as mpl
from matplotlib.figure import Figure
from PIL import Image

from ..analysis import captions, formation, headcount, kvheads, relations
from ..core.arguments import of_type
from ..core.catalog import load_model
from ..core.files import write_set
from ..core.model import LanguageModel
from ..core.run import run_sentence
from ..core.walkthrough import Walkthrough, walkthrough_layer
from . import formation_plots, headcount_plots, kv_plots, plots, score_plots, slides, views
from .animations import build_animations, save_animation
from .common import description
from .export import FIXED_METADATA, check_folder, check_plain_name, render_for_slides, slide_files
from .page import export_page
from .slide import EXPORT_RC, MIN_FONT_PT, SLIDE_INCHES, export_facecolor, slide_sized, slide_style

SIZE = SLIDE_INCHES  # at 144 dpi exactly 1920 × 1080 px
DPI = 144
DRAW = "I like to draw"
WALK = {"model": "classroom", "sentence": DRAW}  # notebooks 01-03's walkthrough_layer call (tests/test_captions.py)
LIST = "list : red mat old fox . again : red mat old fox ."


class Models:
    """Loads each model (and runs each sentence) once while a deck is built."""

    def __init__(self, n_stories: int = 64):  # notebook 06's held-out stories: the deck shows its numbers
        self.n_stories = n_stories
        self.used_seeded = False  # set when a slide was built from seeded (untrained) walkthrough weights
        self.run = cache(lambda sentence: run_sentence(self.classroom, sentence))
        self._walk = cache(lambda n: walkthrough_layer(WALK["model"], n_heads=n, sentence=WALK["sentence"]))

    @cached_property
    def classroom(self) -> LanguageModel:
        return load_model("classroom")

    def walk(self, n_heads: int) -> Walkthrough:
        walk = self._walk(n_heads)
        self.used_seeded |= walk.source == "seeded"  # the trained file is missing: the slide must say so
        return walk

    @cached_property
    def scores(self) -> dict:
        return relations.relation_scores(self.classroom, n_stories=self.n_stories)

    @cached_property
    def types(self):
        """Each head's type, by the call notebooks 05 and 06 make (relations.head_types): (L, H) names."""
        return relations.head_types(self.classroom, n_stories=self.n_stories)[0]

    @cached_property
    def report(self) -> list[dict]:
        """Notebook 06's table: each relation's best head against the best fixed offset."""
        return relations.relation_report(self.classroom, n_stories=self.n_stories)

    def best(self, relation: str) -> tuple[int, int]:
        return relations.ranked_heads(self.scores, relation, k=1)[0][0]


@dataclass(frozen=True)
class Slide:
    name: str  # file name of the PNG, e.g. "05_all_heads"
    make: Callable[[Models], Figure]
    title: str = ""  # the slide title in the pptx (the figure keeps its own)
    caption: Callable[[Models], str] | None = None  # one sentence from the data: .txt, notes, alt text


def _one_head(m: Models) -> Figure:
    w = m.walk(1)
    return plots.plot_attention(w.head(0).weights, w.tokens, title="One head reads 'I like to draw'")


def _draw_row(m: Models) -> Figure:
    w = m.walk(1)
    return plots.plot_word_weights(w.head(0).weights[-1], w.tokens, w.tokens[-1])


def _induction_zoom(m: Models) -> Figure:
    run, (l, h) = m.run(LIST), m.best("induction")
    return views.plot_head(run.attentions[l, h], run.tokens, title=f"Induction head L{l} H{h} on a repeated list")


def _induction_links(m: Models) -> Figure:
    run, (l, h) = m.run(LIST), m.best("induction")
    return views.plot_token_links(run.attentions[l, h], run.tokens, title=f"L{l} H{h}: who looks at whom")


def _induction_caption(m: Models) -> str:
    return captions.induction_caption(m.run(LIST).attentions, m.run(LIST).tokens)  # notebook 05, section 10


def _heads_forming(m: Models) -> Figure:
    curves = formation.shipped_curves()
    return formation_plots.plot_formation_curves(curves, formation.formation(curves))


def _forming_caption(m: Models) -> str:
    """The shipped run's formation step, and how far it holds over the recorded seeds."""
    curves = formation.shipped_curves()
    found, seeds = formation.formation(curves), formation.seed_findings(formation.formation_seeds())
    previous = "" if found["previous_step"] is None else (
        f"the previous-word head {formation_plots.head_name(found['previous_head'])} reaches 0.5 at step "
        f"{found['previous_step']}, then ")
    return (f"In one run {previous}the induction head {formation_plots.head_name(found['head'])} reaches 0.5 at step "
            f"{found['step']} and lists said again rise to {curves['list_accuracy'][-1]:.0%}; over {seeds['runs']} "
            f"seeds the previous-word head came first in {seeds['previous_first']}, with a loss bump at formation in "
            f"{seeds['bumps']}.")


# One line per slide, in lecture order: file name, figure, pptx title, caption computed from the data.
SLIDES = [
    Slide("01_one_head", _one_head, "One head reads a sentence",
          lambda m: captions.map_caption(m.walk(1).head(0).weights, m.walk(1).tokens)),
    Slide("01_where_draw_looks", _draw_row, "Where 'draw' looks",
          lambda m: captions.word_caption(m.walk(1).head(0).weights[-1], m.walk(1).tokens, "draw")),
    Slide("02_twelve_heads", lambda m: plots.plot_heads(m.walk(12).steps().weights, m.walk(12).tokens,
                                                        title="Twelve heads of 64 read 'I like to draw'"),
          "Twelve heads, twelve ways to read", lambda m: captions.heads_caption(m.walk(12).steps().weights,
                                                                               m.walk(12).tokens)),
    Slide("02_shrunk_query", lambda m: slides.shrunk_query(768, 64, "draw"), "Each head works in 64 numbers",
          lambda m: captions.shrink_caption(m.walk(12).residual.shape[-1], m.walk(12).d_head, "draw")),
    Slide("03_recombination", lambda m: plots.plot_recombination(m.walk(12).steps(), 3, m.walk(12).tokens),
          "Recombination: decompress each head, then sum",
          lambda m: captions.recombination_caption(m.walk(12).W_O, "draw")),
    Slide("04_head_count_results", lambda m: headcount_plots.plot_head_count_results(), "What more heads buy",
          lambda m: captions.head_count_caption(headcount.loss_by_heads(), headcount.repeat_accuracy_by_heads())),
    Slide("04_merged_heads", lambda m: slides.merged_heads(), "Merging heads is moving the cuts",
          lambda m: captions.merge_caption(3, headcount.merged_loss(3), headcount.loss_by_heads()[4])),
    Slide("05_all_heads_draw", lambda m: slides.all_heads_with_zoom(m.run(DRAW).attentions, m.run(DRAW).tokens,
                                                                     m.best("previous"), "previous word"),
          "All 144 heads at once", lambda m: captions.resting_caption(m.run(DRAW).attentions, m.run(DRAW).tokens)),
    Slide("05_all_heads_list", lambda m: slides.all_heads_with_zoom(m.run(LIST).attentions, m.run(LIST).tokens,
                                                                     m.best("induction"), "induction"),
          "All 144 heads on a repeated list", _induction_caption),
    Slide("05_induction_head", _induction_zoom, "An induction head", _induction_caption),
    Slide("05_token_links", _induction_links, "Who looks at whom", _induction_caption),
    Slide("06_score_tables", lambda m: slides.score_tables(m.scores), "Scoring every head against the grammar",
          lambda m: captions.report_caption(m.report)),
    Slide("06_head_types", lambda m: score_plots.plot_head_types(m.types), "What each head learned",
          lambda m: captions.types_caption(m.types)),
    Slide("07_shared_keys_and_values", lambda m: kv_plots.kv_slide((12, 1)), "Heads that share keys and values",
          lambda m: kvheads.kv_caption((12, 1))),
    Slide("08_heads_forming", _heads_forming, "Watch the heads learn", _forming_caption),
]


def build_captions(slides=None, models: Models | None = None) -> dict[str, str]:
    """Each slide's one-sentence caption (computed from the data), or its title when it has none."""
    models = models or Models()
    return {s.name: s.caption(models) if s.caption else (s.title or s.name.replace("_", " "))
            for s in (SLIDES if slides is None else slides)}


def build_figures(slides=None, models: Models | None = None) -> list[tuple[str, Figure]]:
    """Every slide's figure, built in the projector style."""
    models = models or Models()
    figures = []
    with slide_style():
        for slide in SLIDES if slides is None else slides:
            models.used_seeded = False
            fig = slide.make(models)
            if models.used_seeded:
                _mark_seeded(fig)
            figures.append((slide.name, fig))
    return figures


def _mark_seeded(fig: Figure) -> None:
    """A banner on a slide whose numbers come from seeded stand-in weights, not a trained model."""
    fig.text(0.5, 0.995, "SEEDED weights, not trained (data/walkthrough-*.safetensors is missing): "
             "the pattern means nothing", ha="center", va="top", fontsize=MIN_FONT_PT, color="#D55E00",
             weight="bold", backgroundcolor="white")


DECK_FORMATS = ("pdf", "pptx")
# Where each animation goes in the pptx: after the slide it animates.
ANIMATION_AFTER = {"one_head_steps": "01_where_draw_looks", "twelve_heads_recombining": "03_recombination"}


def export_deck(folder: str | Path = "figures/deck", slides=None, models: Models | None = None,
                name: str = "deck", format: str = "pdf", animations: bool = True,
                page: bool = False) -> tuple[Path, list[Path]]:
    """Write folder/deck.pdf (one 16:9 page per slide), or folder/deck.pptx (format="pptx": a title,
    the picture and the caption as speaker notes on each slide, the animations as GIFs), plus
    folder/<slide>.png (1920 × 1080) and folder/<slide>.txt (its caption). Returns (deck, pngs).
    page=True adds folder/all_heads.html: every head of the classroom model on the deck's sentences,
    one offline web page (figures.page.export_page) to open from the slides or a USB stick.

    Every file is drawn before the first is written, and each appears whole or not at all
    (core.files.atomic_write): a stopped export leaves no temporary and no file of its own.
    """
    check_plain_name(name, example="deck")  # before any work: nothing may land outside `folder`
    if format not in DECK_FORMATS:
        raise ValueError(f"format={format!r} is not a deck format; choose one of {DECK_FORMATS}.")
    if format == "pptx":
        require_pptx()  # one line on how to install it, before any work
    folder = check_folder(folder)
    chosen = SLIDES if slides is None else list(slides)
    for slide in chosen:
        of_type(slide, "each of slides", Slide,
                "Slides from helpers.figures.deck.SLIDES (e.g. slides=SLIDES[:3]) or nothing")
    models = models or Models()
    figures = build_figures(chosen, models)
    if not figures:
        raise ValueError("No slides to export; pass slides= a non-empty list or use the default SLIDES.")
    notes = build_captions(chosen, models)
    files = slide_files({slide_name: (fig, SIZE) for slide_name, fig in figures}, folder, notes, ("png",), DPI)
    deck = io.BytesIO()
    anims = build_animations(models.walk(1), models.walk(12)) if animations and format == "pptx" else []
    if format == "pdf":
        _write_pdf(figures, deck, subject=f"{len(figures)} slides; each slide's caption is in its .txt file")
    else:
        deck.write(_pptx_bytes(chosen, figures, notes, anims))
    write_set(files)
    write_set({folder / f"{name}.{format}": deck.getvalue()}, 0o644)  # for sharing: readable by everyone
    for anim in anims:
        save_animation(anim, folder)
    if page:
        export_page(models.classroom, [DRAW, LIST], name="all_heads", folder=folder)
    return folder / f"{name}.{format}", [path for path in files if path.suffix == ".png"]


def _pptx_bytes(chosen, figures, notes, anims) -> bytes:
    """The pptx: each figure drawn again to fill the picture area under the title at full scale, each
    animation after the slide it animates."""
    titles = {s.name: s.title or s.name for s in chosen}
    items = []
    for slide_name, fig in figures:
        png = render_for_slides(fig, Path(slide_name), PICTURE_INCHES, ("png",), DPI, description(fig))["png"]
        items.append((slide_name, PptxSlide(titles[slide_name], png, notes[slide_name])))
    for anim in anims:
        after = ANIMATION_AFTER.get(anim.name)
        at = next((i + 1 for i, (n, _) in enumerate(items) if n == after), len(items))
        items.insert(at, (anim.name, PptxSlide(anim.title, anim.gif_bytes(), anim.caption)))
    return write_pptx([item for _, item in items])


def _write_pdf(figures: list[tuple[str, Figure]], file, subject: str = "") -> None:
    """One 16:9 page per figure into `file` (a path or a binary file), at the slide size and with
    >= 14 pt text, as for the PNGs."""
    from matplotlib.backends.backend_pdf import PdfPages  # here, not at import: it loads fontTools

    metadata = {"Title": "Multi-head attention: the lecture deck", "Subject": subject, **FIXED_METADATA["pdf"]}
    with PdfPages(file, metadata=metadata) as pdf:
        for _, fig in figures:
            with slide_sized(fig, SIZE), mpl.rc_context(EXPORT_RC):  # as save_for_slides saves
                pdf.savefig(fig, facecolor=export_facecolor(fig))


# --- the deck as PowerPoint (python-pptx, the optional extra `pip install -e ".[slides]"`) ---------
# Plain Office Open XML: PowerPoint, Keynote, Google Slides and Impress open it; a GIF plays in the show.

TITLE_INCHES = 1.0  # the title bar; the picture fills the rest at full scale (14 pt stays 14 pt)
PICTURE_INCHES = (SLIDE_INCHES[0], SLIDE_INCHES[1] - TITLE_INCHES)
FIXED_TIME = datetime.datetime(2026, 1, 1)  # the same deck gives the same document properties every time


@dataclass(frozen=True)
class PptxSlide:
    title: str
    picture: bytes  # PNG or animated GIF
    notes: str  # the caption: speaker notes and alt text


def require_pptx():
    """The python-pptx module, or one line saying how to install it."""
    try:
        import pptx
    except ImportError:
        raise ImportError("export_deck(format='pptx') needs python-pptx; install the extra with "
                          "pip install -e \".[slides]\" (or pip install python-pptx).") from None
    return pptx


def write_pptx(slides: list[PptxSlide], title: str = "Multi-head attention") -> bytes:
    """The slides as one .pptx file's bytes: the same slides give the same bytes."""
    pptx = require_pptx()
    from pptx.util import Inches, Pt

    deck = pptx.Presentation()
    deck.slide_width, deck.slide_height = Inches(SLIDE_INCHES[0]), Inches(SLIDE_INCHES[1])
    layout = deck.slide_layouts[5]  # "Title Only": a real title placeholder, so outlines and screen readers see it
    for item in slides:
        slide = deck.slides.add_slide(layout)
        heading = slide.shapes.title
        heading.left, heading.top = Inches(0.3), Inches(0.05)
        heading.width, heading.height = Inches(SLIDE_INCHES[0] - 0.6), Inches(TITLE_INCHES - 0.1)
        heading.text = item.title
        heading.text_frame.paragraphs[0].runs[0].font.size = Pt(30)
        picture = _add_picture(slide, item.picture, Inches)
        picture.name = item.title
        picture._element.nvPicPr.cNvPr.set("descr", item.notes)  # alt text (python-pptx has no setter)
        slide.notes_slide.notes_text_frame.text = item.notes
    props = deck.core_properties
    props.title, props.subject, props.author = title, f"{len(slides)} slides with speaker notes", "helpers"
    props.created = props.modified = FIXED_TIME
    props.last_modified_by, props.revision = "helpers", 1
    saved = io.BytesIO()
    deck.save(saved)
    with zipfile.ZipFile(saved) as source:  # every part gets the same timestamp: the same deck, the same bytes
        parts = [(info.filename, source.read(info)) for info in source.infolist()]
    fixed = io.BytesIO()
    with zipfile.ZipFile(fixed, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts:
            target.writestr(zipfile.ZipInfo(name, date_time=FIXED_TIME.timetuple()[:6]), data,
                            compress_type=zipfile.ZIP_DEFLATED)
    return fixed.getvalue()


def _add_picture(slide, picture: bytes, Inches):
    """The picture as large as fits under the title, centred, its aspect ratio kept."""
    with Image.open(io.BytesIO(picture)) as image:
        w, h = image.size
    box_w, box_h = PICTURE_INCHES
    scale = min(box_w / w, box_h / h)
    width, height = w * scale, h * scale
    left, top = (SLIDE_INCHES[0] - width) / 2, TITLE_INCHES + (box_h - height) / 2
    return slide.shapes.add_picture(io.BytesIO(picture), Inches(left), Inches(top), Inches(width), Inches(height))
