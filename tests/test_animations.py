"""Step-by-step animations: frames from the walkthrough's numbers, a looping GIF, a frames folder, legible frames."""

import io
import re

import numpy as np
import pytest
from PIL import Image

from helpers.core.walkthrough import walkthrough_layer
from helpers.figures import animations
from helpers.figures.slide import check_layout


@pytest.fixture(scope="module")
def walk():
    return walkthrough_layer("classroom", n_heads=12, sentence=animations.DRAW)


@pytest.fixture(scope="module")
def one():
    return walkthrough_layer("classroom", n_heads=1, sentence=animations.DRAW)  # notebook 01's head of 768


@pytest.fixture(scope="module")
def built(one, walk):
    return animations.one_head_animation(one), animations.recombination_animation(walk)


def test_one_head_has_the_five_steps_and_says_what_the_numbers_are(one, built):
    anim = built[0]
    assert len(anim.frames) == len(anim.seconds) == 5
    w = one.head(0).weights[-1]
    assert anim.caption.startswith("The head on 'I like to draw': after ÷√768")
    assert f"gives {float(w.max()):.2f} of its weight to '{one.tokens[int(w.argmax())]}'" in anim.caption
    assert len({f.tobytes() for f in anim.frames}) == 5  # every step shows something new


def _headings(walk, monkeypatch) -> list[tuple[str, str]]:
    """(heading, left panel's title) of every frame of the one-head animation for `walk`."""
    seen, real_grab = [], animations.grab_frame

    def grab_and_read(anim, canvas, *args, **kwargs):
        real_grab(anim, canvas, *args, **kwargs)
        fig = canvas.figure
        seen.append((fig._suptitle.get_text(), fig.axes[0].get_title()))

    monkeypatch.setattr(animations, "grab_frame", grab_and_read)
    animations.one_head_animation(walk)
    return seen


def test_one_wide_head_is_not_decompressed_and_a_rounded_root_is_not_an_equality(one, walk, monkeypatch):
    wide, narrow = _headings(one, monkeypatch), _headings(walk, monkeypatch)
    assert "mask" in wide[0][0] and "later words" in wide[0][0]  # frame 1 names the blank triangle
    assert wide[1][0] == "2. Divide by √d = √768 ≈ 27.7" and narrow[1][0] == "2. Divide by √d = √64 = 8"
    assert wide[4] == ("5. Through W_O and added back to 'draw'", "'draw' and the update")
    assert "ecompress" not in " ".join(wide[4]) and "share" not in " ".join(wide[4])
    assert narrow[4] == ("5. Decompressed to 768 and added back to 'draw'", "'draw' and this head's share")


def test_twelve_heads_recombining_adds_one_head_per_frame_and_ends_at_the_update(walk, built):
    anim = built[1]
    assert len(anim.frames) == walk.n_heads + 1
    # the caption's check uses the layer's real b_O: the heads' sum plus b_O is the update, to float precision
    shown = float(re.search(r"largest difference ([-+.e0-9]+)\)", anim.caption).group(1))
    steps = walk.steps()
    real = float((steps.per_head[:, -1].sum(0) + walk.b_O - steps.update[-1]).abs().max())
    assert shown < 1e-4 and shown == float(f"{real:.0e}"), anim.caption
    first, last = (np.asarray(f, dtype=float) for f in (anim.frames[0], anim.frames[-1]))
    assert np.abs(first - last).mean() > 1  # the picture fills up


@pytest.mark.parametrize("make", ["one_head_animation", "recombination_animation"])
def test_every_frame_is_a_slide_picture_with_legible_text(one, walk, make, monkeypatch):
    """Each frame, as drawn, passes the slide layout check (inside, no overlaps, >= 14 pt, wide enough)."""
    reports, real_grab = [], animations.grab_frame

    def grab_and_check(anim, canvas, *args, **kwargs):
        real_grab(anim, canvas, *args, **kwargs)
        reports.append(check_layout(canvas.figure, f"{anim.name} frame {len(anim.frames) - 1}"))

    monkeypatch.setattr(animations, "grab_frame", grab_and_check)
    anim = getattr(animations, make)(one if make == "one_head_animation" else walk)
    assert {f.size for f in anim.frames} == {(1280, 720)}  # 16:9 at 96 dpi
    assert len(reports) == len(anim.frames)
    for i, report in enumerate(reports):
        assert report.ok, (i, report.problems)
        assert report.min_pt * animations.PPTX_SCALE >= 14  # still 14 pt in the pptx, under the slide title


def test_saved_as_a_looping_gif_and_a_folder_of_frames(tmp_path, built):
    anim = built[0]
    gif, frames = animations.save_animation(anim, tmp_path / "anim")
    with Image.open(gif) as image:
        assert image.is_animated and image.n_frames == 5 and image.info.get("loop") == 0
    assert sorted(p.name for p in frames.iterdir()) == ["caption.txt"] + [f"frame_{i:02d}.png" for i in range(5)]
    assert (tmp_path / "anim" / "one_head_steps.txt").read_text(encoding="utf-8").strip() == anim.caption
    again = animations.Animation(anim.name, anim.title, anim.caption, anim.frames[:2], anim.seconds[:2])
    animations.save_animation(again, tmp_path / "anim")  # a shorter run leaves no stale frames behind
    assert len(list(frames.glob("frame_*.png"))) == 2
    assert not [p for p in (tmp_path / "anim").iterdir() if p.name.startswith(".")]


def test_shown_in_a_notebook_as_the_gif_itself(built):
    bundle, metadata = built[1]._repr_mimebundle_()  # (data, metadata): the caption is the GIF's alt text
    assert built[1].caption in metadata["image/gif"]["alt"]
    import base64
    with Image.open(io.BytesIO(base64.b64decode(bundle["image/gif"]))) as image:
        assert image.format == "GIF" and image.n_frames == 13
    assert "Figure size" not in bundle["text/plain"]
