import os

os.environ.setdefault("MPLBACKEND", "Agg")  # tests never open windows


import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def full_draw_of():
    """full_draw_of(frame) -> (blitted, full): a widget Frame's last picture, and the same
    figure drawn whole from scratch. Blitting must not change a single pixel."""
    def draw(frame):
        blitted = np.asarray(frame.canvas.buffer_rgba()).copy()
        for artist in frame.moving:
            artist.set_animated(False)
        try:
            frame.canvas.draw()
            return blitted, np.asarray(frame.canvas.buffer_rgba()).copy()
        finally:
            for artist in frame.moving:
                artist.set_animated(True)
            frame.invalidate()
    return draw
