"""Figures for slides: one call writes PNG, SVG and PDF, sized for a 16:9 projector.

`slide_style()` is the projector look (large fonts, thick lines, high contrast,
colour-blind-safe colour maps). Wrap the code that *builds* a figure in it::

    with H.slide_style():
        fig = H.plot_attention(weights, tokens)
    H.save_for_slides(fig, "draw_attention")   # -> figures/draw_attention.{png,svg,pdf}

`save_for_slides` also enlarges any text smaller than the slide minimum while it
saves, then puts the figure back as it was. Files appear whole or not at all:
each is written into a staging folder first (helpers.core.files) and renamed
into place only when every format has been written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

import matplotlib as mpl
from matplotlib.figure import Figure

from ..core.files import file_error, staged_files
from .describe import description
from .slide import EXPORT_RC, check_layout, export_facecolor, slide_inches, slide_sized

FORMATS = ("png", "svg", "pdf")

# No dates and no version strings in the files: exporting an unchanged figure again changes no byte.
FIXED_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                  "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


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
    """Write several figures ({name: (fig, size)}) as one set, as save_for_slides writes one: every
    file of every figure is renamed into place together, or none is (a widget's "Export for
    slides" never leaves half a set behind when the disk fills)."""
    captions = captions or {}
    for name, (fig, _) in figures.items():
        _check_arguments(fig, name, formats, dpi)
    captions = {name: _check_caption(captions.get(name)) for name in figures}
    stored = {name: captions[name] or description(fig) for name, (fig, _) in figures.items()}  # in each file
    sizes = {name: None if size is None else slide_inches(size) for name, (_, size) in figures.items()}
    folder = check_folder(folder)  # staged_files makes it, and words a refused write in one line
    targets = {name: [folder / f"{name}.{fmt.lower()}" for fmt in formats]
               + ([folder / f"{name}.txt"] if captions[name] else []) for name in figures}
    with staged_files(folder) as staging:  # renamed into place together, or none
        for name, (fig, _) in figures.items():
            with slide_sized(fig, sizes[name]):
                for target in targets[name]:
                    _write_one(fig, staging / target.name, target, dpi, stored[name])
    for name, (fig, _) in figures.items():
        with slide_sized(fig, sizes[name]):
            check_layout(fig, name)  # a warning that names what a class could not read
    return [path for name in figures for path in targets[name]]


def _check_arguments(fig: Figure, name: str, formats: Sequence[str], dpi: int) -> None:
    if not isinstance(fig, Figure):
        raise ValueError(f"save_for_slides needs a matplotlib Figure, got {type(fig).__name__}; "
                         f"pass the figure a plot function returned.")
    check_plain_name(name)
    bad = [f for f in formats if str(f).lower() not in FORMATS]
    if bad or not formats:
        raise ValueError(f"formats={tuple(formats)!r} is not supported; choose from {FORMATS}.")
    if not isinstance(dpi, (int, float)) or dpi <= 0:
        raise ValueError(f"dpi={dpi!r} must be a positive number; 200 is good for slides.")


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


CAPTION_KEY = {"png": "Description", "svg": "Description", "pdf": "Subject"}  # where each format keeps it


def _write_one(fig: Figure, tmp: Path, target: Path, dpi: float, caption: str | None = None) -> None:
    """Save one format (or the caption, for .txt) to tmp in the staging folder; errors name the target.
    Files are made by open(), so they get the ordinary mode 0o666 & ~umask."""
    fmt = target.suffix[1:]
    try:
        if fmt == "txt":
            Path(tmp).write_text(caption + "\n", encoding="utf-8")
            return
        metadata = FIXED_METADATA[fmt] | ({CAPTION_KEY[fmt]: caption} if caption else {})
        with mpl.rc_context(EXPORT_RC):  # no user rc (bbox tight, transparent, ...) changes the file
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=metadata, facecolor=export_facecolor(fig))
    except BaseException as err:
        raise file_error(err, target) from None  # the staging folder, tmp included, is removed


