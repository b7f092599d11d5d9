"""One atomic writer (helpers.core.files): whole or nothing, never deleting what it did not create,
and one-line errors that name the file and the fix."""

import errno
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from helpers.core import files
from helpers.core.weights import atomic_write
from helpers.figures import deck, export, plots


def figure():
    return plots.plot_attention(torch.tensor([[1.0, 0], [0.4, 0.6]]), ["I", "draw"])


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_stopped_deck_into_a_new_folder_keeps_a_file_someone_put_there(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "deck"

    def interrupted(figures, path, subject=""):
        folder.mkdir(parents=True)
        (folder / "mine.txt").write_text("the teacher's file, saved while the deck was exporting")
        raise KeyboardInterrupt

    monkeypatch.setattr(deck, "_write_pdf", interrupted)
    with pytest.raises(KeyboardInterrupt):
        deck.export_deck(folder, slides=deck.SLIDES[:1])
    assert listing(tmp_path) == ["new", "new/deck", "new/deck/mine.txt"]  # no temporary, no slide, the file kept
    assert (folder / "mine.txt").read_text().startswith("the teacher's file")


def test_a_stopped_deck_removes_the_folders_it_made_when_they_are_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(deck, "_write_pdf", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        deck.export_deck(tmp_path / "new" / "deck", slides=deck.SLIDES[:1])
    assert listing(tmp_path) == []


def test_a_read_only_file_is_not_replaced(tmp_path):
    old = tmp_path / "map.svg"
    old.write_text("the user's locked figure")
    old.chmod(0o444)
    with pytest.raises(PermissionError) as err:
        export.save_for_slides(figure(), "map", folder=tmp_path)
    message = str(err.value)
    assert str(old) in message and "read-only" in message and "chmod u+w" in message and "\n" not in message
    assert listing(tmp_path) == ["map.svg"] and old.read_text() == "the user's locked figure"  # no partial set

    target = tmp_path / "model.safetensors"
    target.write_bytes(b"locked")
    target.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only; make it writable"):
        atomic_write(target, lambda tmp: Path(tmp).write_bytes(b"new"))
    assert target.read_bytes() == b"locked"


def test_a_name_too_long_for_the_file_system_says_so(tmp_path):
    with pytest.raises(OSError) as err:
        export.save_for_slides(figure(), "a" * 300, folder=tmp_path)
    message = str(err.value)
    assert "too long" in message and "choose a shorter name" in message and "\n" not in message
    assert listing(tmp_path) == []

    with pytest.raises(OSError, match="too long for the file system.*choose a shorter name"):
        atomic_write(tmp_path / ("b" * 300 + ".json"), lambda tmp: Path(tmp).write_text("{}"))
    assert listing(tmp_path) == []


def test_a_failed_pair_leaves_no_temporary_and_no_half_pair(tmp_path):
    (tmp_path / "a.txt").write_text("old a")
    with pytest.raises(RuntimeError), files.staged_pair(tmp_path) as staging:
        (staging / "a.txt").write_text("new a")
        (staging / "b.txt").write_text("half of b")
        raise RuntimeError("stopped half-way")
    assert listing(tmp_path) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old a"

    (tmp_path / "b.txt").write_text("old b")
    (tmp_path / "b.txt").chmod(0o444)
    with pytest.raises(PermissionError, match="b.txt: the file is read-only"), files.staged_pair(tmp_path) as staging:
        (staging / "a.txt").write_text("new a")
        (staging / "b.txt").write_text("new b")
    assert listing(tmp_path) == ["a.txt", "b.txt"] and (tmp_path / "a.txt").read_text() == "old a"


def test_a_pair_appears_together_with_ordinary_modes(tmp_path):
    with files.staged_pair(tmp_path / "out") as staging:
        (staging / "a.txt").write_text("a")
        (staging / ".scratch").write_text("never published")
    assert listing(tmp_path) == ["out", "out/a.txt"]
    atomic_write(tmp_path / "d.txt", lambda tmp: Path(tmp).write_text("d"))
    assert stat.S_IMODE((tmp_path / "d.txt").stat().st_mode) == files.default_mode() == 0o666 & ~_umask()
    png = export.save_for_slides(figure(), "m", folder=tmp_path, formats=("png",))[0]
    assert stat.S_IMODE(png.stat().st_mode) == 0o666 & ~_umask()
    atomic_write(tmp_path / "w.bin", lambda tmp: Path(tmp).write_bytes(b"w"), mode=0o644)
    assert stat.S_IMODE((tmp_path / "w.bin").stat().st_mode) == 0o644


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_full_disk_says_what_was_and_was_not_written(tmp_path):
    full = OSError(errno.ENOSPC, "No space left on device")
    message = str(files.file_error(full, tmp_path / "deck.pdf"))
    assert "deck.pdf" in message and "free some disk space" in message and "Nothing was changed" in message
    message = str(files.file_error(full, tmp_path / "b.png", done=["a.png"], total=3))
    assert "1 of 3 files were replaced (a.png)" in message and "others were left as they were" in message


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare -U to drop root's permissions")
def test_permission_denied_names_the_file_and_the_fix(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    script = textwrap.dedent(f"""
        from pathlib import Path
        from helpers.core.weights import atomic_write
        try:
            atomic_write(Path({str(folder / 'out.json')!r}), lambda tmp: Path(tmp).write_text("{{}}"))
        except PermissionError as err:
            print(err)
    """)
    run = subprocess.run(["unshare", "-U", sys.executable, "-c", script], capture_output=True, text=True, check=False,
                         cwd=Path(__file__).resolve().parents[1], timeout=120)
    folder.chmod(0o700)
    if run.returncode != 0 and "unshare" in run.stderr:
        pytest.skip(f"unshare -U is not allowed here: {run.stderr.strip()}")
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1, run.stdout + run.stderr
    assert "out.json" in lines[0] and "permission denied" in lines[0] and "writable" in lines[0], lines[0]
    assert listing(folder) == []


@pytest.mark.slow  # every figure of the slider exported
def test_a_widget_export_whose_disk_fills_part_way_changes_nothing(tmp_path, disk_full_at):
    """The sixth file of nine failed: five were replaced and four were the last export's (an export that
    disagreed with itself); now every file is written to a temporary before the first is moved into place."""
    import helpers as H

    slider = H.HeadCountExplorer(heads=4)
    (tmp_path / "slides").mkdir()
    (tmp_path / "slides" / "loss_vs_heads.png").write_bytes(b"last export")
    calls = disk_full_at(6)
    assert slider.export(tmp_path / "slides") == []
    assert len(calls) == 6 and listing(tmp_path / "slides") == ["loss_vs_heads.png"]  # no temporary, no new file
    assert (tmp_path / "slides" / "loss_vs_heads.png").read_bytes() == b"last export"
    assert "free some disk space" in slider.status.value and "Nothing was changed there" in slider.status.value


def test_a_manifest_entry_without_its_checksum_is_refused_in_one_line(tmp_path):
    from helpers.core import catalog

    entries = catalog.manifest()
    entry = dict(entries["classroom"])
    del entry["sha256"]
    (tmp_path / "models.json").write_text(__import__("json").dumps({"classroom": entry}))
    shutil.copy(catalog.DATA_DIR / entry["file"], tmp_path / entry["file"])
    with pytest.raises(ValueError) as err:
        catalog.load_model("classroom", data_dir=tmp_path)
    message = str(err.value)
    assert "\n" not in message and "'sha256'" in message and str(tmp_path / "models.json") in message
    assert "python -m helpers.train classroom" in message


def test_helpers_gpt2_dir_pointing_at_a_file_says_so(tmp_path, monkeypatch):
    from helpers.core import gpt2

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"not a folder")
    monkeypatch.setenv(gpt2.DIR_ENV, str(weights))
    with pytest.raises(gpt2.GPT2Unavailable) as err:
        gpt2.download_gpt2(progress=False)
    message = str(err.value)
    assert "\n" not in message and gpt2.DIR_ENV in message and "not a folder" in message and str(weights) in message
    assert weights.read_bytes() == b"not a folder"


def test_a_pair_stopped_between_its_renames_is_finished_by_the_next_read(tmp_path, monkeypatch):
    """Ctrl-C after the model's rename and before its line's: the pair waits, marked whole, and the next
    finish_interrupted (every manifest read) renames the line too; nothing else is left behind."""
    (tmp_path / "models.json").write_text("old line")
    real, moved = os.replace, []

    def stopped_after_one(src, dst):
        if Path(dst).parent == tmp_path and not Path(dst).name.startswith("."):
            if moved:
                raise KeyboardInterrupt
            moved.append(Path(dst).name)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", stopped_after_one)
    with pytest.raises(KeyboardInterrupt), files.staged_pair(tmp_path) as staging:
        (staging / "toy.safetensors").write_text("new model")
        (staging / "models.json").write_text("new line")
    monkeypatch.setattr(os, "replace", real)
    whole = [name for name in os.listdir(tmp_path) if name.endswith(files.WHOLE)]
    assert moved == ["models.json"] and len(whole) == 1 and (tmp_path / "models.json").read_text() == "new line"
    assert files.finish_interrupted(tmp_path) == whole
    assert listing(tmp_path) == ["models.json", "toy.safetensors"]
    assert (tmp_path / "toy.safetensors").read_text() == "new model"
