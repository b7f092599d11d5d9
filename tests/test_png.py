"""The package's PNG files (figures/png.py, written by figures/canvas.py at savefig) hold exactly the
pixels and the metadata of the file matplotlib writes with PIL: every pixel decoded equal, and every
chunk but the compressed pixels equal byte for byte (header, text, dpi), for every option we take over;
any other PIL option goes to PIL itself.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import PIL.Image
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers.figures.canvas import Canvas
from helpers.figures.common import new_figure
from helpers.figures.png import png_file, up_filtered


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk of a PNG file, each CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    found, at = [], 8
    while at < len(data):
        (length,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        body, crc = data[at + 8:at + 8 + length], data[at + 8 + length:at + 12 + length]
        assert struct.unpack(">I", crc)[0] == zlib.crc32(kind + body), kind
        found.append((kind, body))
        at += 12 + length
    assert found[-1] == (b"IEND", b"") and at == len(data)
    return found


def decoded(data: bytes) -> np.ndarray:
    image = PIL.Image.open(io.BytesIO(data))
    assert image.mode == "RGBA"
    return np.asarray(image)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (37, 1), (64, 129), (301, 17)])
def test_any_pixels_decode_to_themselves(shape):
    """Random bytes: every difference from the row above, wrapped modulo 256, comes back."""
    rgba = np.random.default_rng(sum(shape)).integers(0, 256, (*shape, 4), dtype=np.uint8)
    for level in (0, 1, 6, 9):
        assert np.array_equal(decoded(png_file(rgba, level)), rgba)


def test_the_up_filter_is_the_difference_from_the_row_above():
    rgba = np.array([[[250, 3, 0, 255]], [[5, 3, 200, 0]]], np.uint8)  # one pixel wide, two rows
    assert up_filtered(rgba).tolist() == [[2, 250, 3, 0, 255], [2, 11, 0, 200, 1]]  # 5 - 250 = 11 mod 256


def figure(canvas_class) -> Figure:
    fig = Figure(figsize=(3.2, 2.1), dpi=90)
    canvas_class(fig)
    ax = fig.add_subplot()
    ax.imshow(np.arange(48).reshape(6, 8), cmap="viridis")
    ax.set_title("naïve → softmax")
    ax.plot([0, 7], [0, 5], alpha=0.5)
    return fig


def saved(canvas_class, **savefig) -> bytes:
    buffer = io.BytesIO()
    figure(canvas_class).savefig(buffer, format="png", **savefig)
    return buffer.getvalue()


CASES = {
    "defaults": {},
    "light": {"pil_kwargs": {"compress_level": 1}},
    "none": {"pil_kwargs": {"compress_level": 0}},
    "dpi": {"dpi": 137},
    "metadata": {"metadata": {"Title": "all heads", "Description": "12 × 12 maps → one picture", "Author": None,
                              "Software": "ours"}},
    "tight": {"bbox_inches": "tight", "facecolor": "#ffe08a"},
    "transparent": {"transparent": True},
}


@pytest.mark.parametrize("case", CASES)
def test_savefig_writes_the_stock_pixels_and_chunks(case):
    stock, ours = saved(FigureCanvasAgg, **CASES[case]), saved(Canvas, **CASES[case])
    assert np.array_equal(decoded(ours), decoded(stock))
    without_pixels = [c for c in chunks(stock) if c[0] != b"IDAT"]
    assert [c for c in chunks(ours) if c[0] != b"IDAT"] == without_pixels
    assert PIL.Image.open(io.BytesIO(ours)).info == PIL.Image.open(io.BytesIO(stock)).info  # dpi, texts
    assert stock != ours  # the pixels were compressed by png.py, not by PIL


def test_a_path_gets_the_same_file_as_a_buffer(tmp_path):
    figure(Canvas).savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes() == saved(Canvas)


@pytest.mark.parametrize("pil_kwargs", [{"optimize": True}, {"compress_level": 3, "pnginfo": None}])
def test_other_pil_options_are_written_by_pil(pil_kwargs):
    assert saved(Canvas, pil_kwargs=pil_kwargs) == saved(FigureCanvasAgg, pil_kwargs=pil_kwargs)


@pytest.mark.parametrize("level", [10, -2, "high", 2.5])
def test_a_level_png_cannot_write_fails_as_pil_fails(level):
    errors = []
    for canvas_class in (FigureCanvasAgg, Canvas):
        with pytest.raises(Exception) as err:
            saved(canvas_class, pil_kwargs={"compress_level": level})
        errors.append(type(err.value))
    assert errors[0] is errors[1]


def test_every_figure_of_the_package_is_on_this_canvas():
    assert isinstance(new_figure().canvas, Canvas)
