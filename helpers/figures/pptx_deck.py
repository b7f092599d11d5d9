"""The lecture deck as PowerPoint: one 16:9 slide per figure with a title, the picture,
and the figure's caption as speaker notes and as the picture's alt text.

python-pptx is an optional extra (`pip install -e ".[slides]"`). The file is plain Office
Open XML, so PowerPoint, Keynote, Google Slides and LibreOffice Impress open it; an
animated GIF placed as a picture plays in the slide show.
"""

from __future__ import annotations

import datetime
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .slide import SLIDE_INCHES

TITLE_INCHES = 1.0  # the title bar; the picture fills the rest at full scale (14 pt stays 14 pt)
PICTURE_INCHES = (SLIDE_INCHES[0], SLIDE_INCHES[1] - TITLE_INCHES)
FIXED_TIME = datetime.datetime(2026, 1, 1)  # the same deck gives the same document properties every time


@dataclass(frozen=True)
class PptxSlide:
    title: str
    picture: Path  # PNG or animated GIF
    notes: str  # the caption: speaker notes and alt text


def require_pptx():
    """The python-pptx module, or one line saying how to install it."""
    try:
        import pptx
    except ImportError:
        raise ImportError("export_deck(format='pptx') needs python-pptx; install the extra with "
                          "pip install -e \".[slides]\" (or pip install python-pptx).") from None
    return pptx


def write_pptx(path: str | Path, slides: list[PptxSlide], title: str = "Multi-head attention") -> Path:
    """Write the slides into one .pptx at `path` (the caller makes it atomic) and return the path."""
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
    deck.save(str(path))
    _fix_zip_times(Path(path))
    return Path(path)


def _fix_zip_times(path: Path) -> None:
    """Give every part of the .pptx (a zip) the same timestamp, so the same deck gives the same bytes."""
    with zipfile.ZipFile(path) as source:
        parts = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts:
            target.writestr(zipfile.ZipInfo(name, date_time=FIXED_TIME.timetuple()[:6]), data,
                            compress_type=zipfile.ZIP_DEFLATED)


def _add_picture(slide, picture: Path, Inches):
    """The picture as large as fits under the title, centred, its aspect ratio kept."""
    from PIL import Image

    with Image.open(picture) as image:
        w, h = image.size
    box_w, box_h = PICTURE_INCHES
    scale = min(box_w / w, box_h / h)
    width, height = w * scale, h * scale
    left, top = (SLIDE_INCHES[0] - width) / 2, TITLE_INCHES + (box_h - height) / 2
    return slide.shapes.add_picture(str(picture), Inches(left), Inches(top), Inches(width), Inches(height))
