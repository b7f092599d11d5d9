"""Figures for slides: one call writes PNG, SVG and PDF, sized for a 16:9 projector.

    with H.slide_style():                      # the projector look: build the figure inside it
        fig = H.plot_attention(weights, tokens)
    H.save_for_slides(fig, "draw_attention")   # -> figures/draw_attention.{png,svg,pdf}

Text smaller than the slide minimum is enlarged while saving, then put back. Every file is drawn
before the first is written, and the set appears whole or not at all (core.files.write_set).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Sequence

import matplotlib as mpl
from matplotlib.figure import Figure

from ..core.files import file_error, write_set
from .common import description
from .slide import EXPORT_RC, check_layout, export_facecolor, slide_inches, slide_sized

FORMATS = ("png", "svg", "pdf")

# No dates and no version strings in the files: exporting an unchanged figure again changes no byte.
FIXED_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                  "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}
CAPTION_KEY = {"png": "Description", "svg": "Description", "pdf": "Subject"}  # where each format keeps it


def save_for_slides(
    fig: Figure,
    name: str,
    folder: str | Path = "figures",
    formats: Sequence[str] = FORMATS,
    size: str | tuple[float, float] | None = "16:9",
    dpi: int = 200,
    caption: str | None = None,
) -> list[Path]:
    """Write `fig` as folder/name.{png,svg,pdf} for slides and return the paths written.

    size: "16:9" (12.8 × 7.2 in: a 2560 × 1440 px PNG at 200 dpi), "4:3",
    (width, height) in inches, or None to keep the figure's own size.
    caption: one sentence (helpers.captions makes them from the data); written beside the
    figure as name.txt and stored in each file (PDF subject, PNG/SVG description). Without it the
    files still store the words the figure carries (describe.description): its alt text travels with it.
    """
    return save_set_for_slides({name: (fig, size)}, folder, {name: caption}, formats, dpi)


def save_set_for_slides(
    figures: dict[str, tuple[Figure, str | tuple[float, float] | None]],
    folder: str | Path = "figures",
    captions: dict[str, str] | None = None,
    formats: Sequence[str] = FORMATS,
    dpi: int = 200,
) -> list[Path]:
    """Write several figures ({name: (fig, size)}) as save_for_slides writes one (a widget's "Export
    for slides"): a figure that fails to draw leaves no file of the set."""
    files = slide_files(figures, folder, captions, formats, dpi)
    write_set(files)
    return list(files)


MAX_SIDE_PX = 16384  # pixels a side: 12.8 in at 1200 dpi fits


def slide_files(figures: dict, folder: str | Path = "figures", captions: dict[str, str] | None = None,
                formats: Sequence[str] = FORMATS, dpi: int = 200) -> dict[Path, bytes]:
    """save_set_for_slides' files, drawn but not yet written: {path: bytes}, arguments checked first."""
    captions = captions or {}
    for name, (fig, _) in figures.items():
        _check_arguments(fig, name, formats, dpi)
    captions = {name: _check_caption(captions.get(name)) for name in figures}
    sizes = {name: None if size is None else slide_inches(size) for name, (_, size) in figures.items()}
    for name, (fig, _) in figures.items():
        width, height = sizes[name] or fig.get_size_inches()
        if max(width, height) * dpi > MAX_SIDE_PX:  # Agg would need gigabytes, or stop at 2**16 px
            raise ValueError(f"{name}: {width:g} × {height:g} in at {dpi:g} dpi is {width * dpi:.0f} × "
                             f"{height * dpi:.0f} px, more than {MAX_SIDE_PX} a side; use size='16:9' "
                             f"(12.8 × 7.2 in) or a lower dpi.")
    folder = check_folder(folder)
    files = {}
    for name, (fig, _) in figures.items():
        drawn = render_for_slides(fig, folder / name, sizes[name], formats, dpi, captions[name] or description(fig))
        files |= {folder / f"{name}.{fmt}": data for fmt, data in drawn.items()}
        if captions[name]:
            files[folder / f"{name}.txt"] = (captions[name] + "\n").encode("utf-8")
    return files


def render_for_slides(fig: Figure, path: Path, size: tuple[float, float] | None, formats: Sequence[str],
                      dpi: float, stored: str | None = None) -> dict[str, bytes]:
    """Each format's bytes of `fig` at the slide `size`, for path.<format> (`stored`: the words kept in
    each file), and one SlideLayoutWarning naming what a class could not read. No user rc (bbox tight,
    transparent, ...) changes the bytes."""
    drawn = {}
    with slide_sized(fig, size):
        for fmt in (str(f).lower() for f in formats):
            metadata = FIXED_METADATA[fmt] | ({CAPTION_KEY[fmt]: stored} if stored else {})
            buffer = io.BytesIO()
            try:
                with mpl.rc_context(EXPORT_RC):
                    fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata, facecolor=export_facecolor(fig))
            except BaseException as err:
                raise file_error(err, path.with_name(f"{path.name}.{fmt}")) from None
            drawn[fmt] = buffer.getvalue()
        check_layout(fig, path.name)
    return drawn




def _check_arguments(fig: Figure, name: str, formats: Sequence[str], dpi: int) -> None:
    if not isinstance(fig, Figure):
        raise ValueError(f"save_for_slides needs a matplotlib Figure, got {type(fig).__name__}; "
                         f"pass the figure a plot function returned.")
    check_plain_name(name)
    if isinstance(formats, str):
        raise ValueError(f"formats={formats!r} is one string; pass a list of formats, e.g. ['{formats}'].")
    bad = [f for f in formats if str(f).lower() not in FORMATS]
    if bad or not formats:
        raise ValueError(f"formats={tuple(formats)!r} is not supported; choose from {FORMATS}.")
    if not isinstance(dpi, (int, float)) or not 0 < dpi <= 1200:  # 100000 dpi asks Agg for terabytes
        raise ValueError(f"dpi={dpi!r} must be a number above 0 and at most 1200; 200 is good for slides.")


def check_plain_name(name: str, example: str = "draw_attention") -> str:
    """A file name without folder or extension, so nothing is ever written outside the chosen folder."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_\-]*", name):
        raise ValueError(f"name={name!r} is not a plain file name; use letters, digits, '_', '-' "
                         f"(no folder, no extension), e.g. {example!r}.")
    return name


def check_folder(folder: str | Path) -> Path:
    """The export folder as a Path, refusing values that would write somewhere unexpected or that
    no file system can take (a NUL byte, an unknown ~user, a file on the way), each in one line."""
    if not isinstance(folder, (str, os.PathLike)):
        raise ValueError(f"folder={folder!r} is not a folder name; pass a path such as 'figures'.")
    text = os.fspath(folder)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"folder={text!r} names no folder; pass a path such as 'figures' ('.' for the current "
                         f"folder).")
    if "\0" in text:
        raise ValueError(f"folder={text!r} holds a NUL byte, which no file system allows; type the path again.")
    if os.name != "nt" and re.match(r"^[A-Za-z]:[\\/]", text):
        raise ValueError(f"folder={text!r} is a Windows drive path, but this machine is not Windows; "
                         f"pass a path such as 'figures' or '/home/me/slides'.")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # ~nosuchuser, or ~ without a home folder
        raise ValueError(f"folder={text!r} starts with {Path(text).parts[0]}, which names no home folder on this "
                         f"machine; write the whole path, e.g. '/home/me/slides', or 'figures'.") from None
    on_the_way = next((p for p in [path, *path.parents] if os.path.exists(p)), None)  # never raises
    if on_the_way is not None and not os.path.isdir(on_the_way):
        where = "" if on_the_way == path else f": {on_the_way}"
        raise ValueError(f"folder={text!r}{where} is a file, not a folder; pass folder= a directory, e.g. 'figures'.")
    return path


def _check_caption(caption) -> str | None:
    if caption is None:
        return None
    if not isinstance(caption, str) or not caption.strip() or "\n" in caption.strip():
        raise ValueError(f"caption={caption!r} must be one line of text, e.g. a sentence from helpers.captions.")
    return caption.strip()

