"""Bad input and faults, the way a careless student or an instructor on a bad day would cause them.

One table, one row per case: what is done, the exception expected (or None when the answer is a
printed line), and a fragment of the one-line message that names the fix. Rows that touch files
run inside a sandbox folder and also assert that no file anywhere in it changed, and that no
temporary or half-written file was left behind.
"""

from __future__ import annotations

import errno
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import ipywidgets as W
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

import helpers as H
from helpers.analysis.knockout import knock_out
from helpers.core import catalog, gpt2
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.core.walkthrough import SeededWeightsWarning, walkthrough_layer
from helpers.core.weights import checked_config, model_from_checkpoint, read_model, save_model, sha256
from helpers.analysis.formation import shipped_curves
from helpers.figures import deck


@dataclass
class Ctx:
    """What a row may use: the classroom model and a sandbox folder (also the current folder)."""

    lm: LanguageModel
    root: Path
    monkeypatch: pytest.MonkeyPatch

    @property
    def target(self) -> Path:
        return self.root / "target"

    def toy_model(self) -> tuple[Path, str]:
        """A tiny model file written by save_model, and its sha256."""
        torch.manual_seed(0)
        path = self.root / "models" / "toy.safetensors"
        digest = save_model(GPT(GPTConfig(vocab_size=5, n_ctx=8, n_layer=1, n_head=2, n_embd=8)), path, list("abcde"))
        return path, digest

    def damaged(self, how: str) -> tuple[Path, str]:
        path, digest = self.toy_model()
        data = bytearray(path.read_bytes())
        if how == "flip":
            data[-3] ^= 0x01  # one bit of one weight
        elif how == "truncate":
            data = data[: len(data) // 2]
        path.write_bytes(bytes(data))
        return path, digest if how == "flip" else sha256(path)

    def gpt2_folder(self, files: dict[str, bytes]) -> Path:
        folder = self.root / "gpt2"
        folder.mkdir(exist_ok=True)
        for name, body in files.items():
            (folder / name).write_bytes(body)
        self.monkeypatch.setenv(gpt2.DIR_ENV, str(folder))
        self.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        self.monkeypatch.delenv(gpt2.VERIFY_ENV, raising=False)
        self.monkeypatch.setattr(gpt2, "_from_hf_cache", lambda name: None)
        return folder

    def manifest(self, text: str | None) -> None:
        """Point the catalog at a copy of data/ whose models.json is `text` (None: no models.json)."""
        data = self.root / "data"
        data.mkdir(exist_ok=True)
        if text is not None:
            (data / "models.json").write_text(text)
        self.monkeypatch.setattr(catalog, "DATA_DIR", data)
        self.monkeypatch.setattr(catalog, "MANIFEST", data / "models.json")
        self.monkeypatch.setattr(catalog.manifest, "__defaults__", (data / "models.json", True))

    def figure(self) -> Figure:
        return H.plot_attention(torch.full((3, 3), 1 / 3), ["a", "b", "c"])

    def full_disk(self) -> None:
        """Every figure write fails the way a full disk makes matplotlib's PDF writer fail."""
        def savefig(fig, fname, *args, **kwargs):
            fname.write(b"half a fi") if hasattr(fname, "write") else Path(fname).write_bytes(b"half a fi")
            try:
                raise OSError(errno.ENOSPC, "No space left on device")
            except OSError:
                raise AttributeError("'Stream' object has no attribute 'pos'")  # what the PDF writer then says
        self.monkeypatch.setattr(Figure, "savefig", savefig)


@dataclass
class Row:
    case: str
    call: Callable[[Ctx], object]
    error: type | None  # None: the call returns and prints one line instead
    fragment: str  # in the message (or the printed line): names the fix
    files: bool = False  # also check the sandbox: nothing changed, nothing half-written

    def __str__(self) -> str:
        return self.case


LONG = " ".join(["the cat is tired ."] * 20)
PASTED = " ".join(f"word{i}" for i in range(3000))


def _raises(exc):
    def f(*args, **kwargs):
        raise exc
    return f


def _exits(*args):
    sys.exit(1)


def _calls_exit(*args):
    exit()


ROWS = [
    # --- sentences ------------------------------------------------------------------------------------
    Row("empty sentence", lambda c: H.run_sentence(c.lm, ""), ValueError, "type a few words"),
    Row("whitespace sentence", lambda c: H.run_sentence(c.lm, "  \n\t "), ValueError, "empty"),
    Row("sentence that is not text", lambda c: H.run_sentence(c.lm, 42), ValueError, "pass a string"),
    Row("unknown word", lambda c: H.run_sentence(c.lm, "I like zebras"), ValueError, "Unknown word"),
    Row("too-long sentence", lambda c: H.run_sentence(c.lm, LONG), ValueError, "shorten it"),
    Row("3,000 pasted unknown words", lambda c: H.run_sentence(c.lm, PASTED), ValueError, "and 2995 more"),
    Row("zero-width space", lambda c: H.run_sentence(c.lm, "I like\u200b to draw"), ValueError, "<U+200B>"),
    Row("exclamation mark", lambda c: H.run_sentence(c.lm, "I like to draw !"), ValueError, "drop the '!'"),
    Row("typed <bos>", lambda c: H.run_sentence(c.lm, "I like <bos> to draw"), ValueError, "Leave <bos> out"),
    # --- head counts and sizes ---------------------------------------------------------------------------
    Row("heads that do not divide the width", lambda c: H.split_heads(torch.zeros(4, 768), 5), ValueError,
        "does not divide"),
    Row("zero heads", lambda c: H.split_heads(torch.zeros(4, 768), 0), ValueError, "positive whole number"),
    Row("negative heads", lambda c: checked_config(vocab_size=5, n_head=-2), ValueError, "positive integer"),
    Row("walkthrough head count", lambda c: walkthrough_layer("classroom", n_heads=5), ValueError,
        "use n_heads=1 or n_heads=12"),
    Row("layer out of range", lambda c: knock_out(c.lm, [(12, 0)]), ValueError, "layers 0..11"),
    Row("head out of range", lambda c: knock_out(c.lm, [(0, -1)]), ValueError, "heads 0..11"),
    Row("a head given as (layer,)", lambda c: knock_out(c.lm, [(0,)]), ValueError, "(layer, head) pair"),
    Row("one pair instead of a list", lambda c: knock_out(c.lm, (3, 4)), ValueError, "e.g. [(3, 4)"),
    Row("unknown knock-out mode", lambda c: knock_out(c.lm, [(0, 0)], mode="half"), ValueError, "'zero' or 'mean'"),
    Row("all heads passed to the one-head plot", lambda c: H.plot_head(torch.zeros(2, 3, 3), ["a", "b", "c"]),
        ValueError, "Expected attention of shape (T, T)"),
    # --- model files ---------------------------------------------------------------------------------------
    Row("missing model file", lambda c: read_model(c.root / "nope.safetensors", "0" * 64, "python -m helpers.train x"),
        FileNotFoundError, "Regenerate it with", files=True),
    Row("truncated model file", lambda c: read_model(*c.damaged("truncate")), ValueError, "truncated", files=True),
    Row("flipped byte in a model file", lambda c: read_model(*c.damaged("flip")), ValueError, "corrupted", files=True),
    Row("model file read without its checksum", lambda c: read_model(c.toy_model()[0], None), ValueError,
        "needs the sha256", files=True),
    Row("pickle file", lambda c: (torch.save({"a": torch.zeros(1)}, c.root / "evil.pt"),
                                  read_model(c.root / "evil.pt", sha256(c.root / "evil.pt"))),
        ValueError, "not a model file", files=True),
    Row("wrong-shaped weights", lambda c: model_from_checkpoint(
        {**GPT(GPTConfig(vocab_size=5, n_layer=1, n_head=2, n_embd=8)).state_dict(), "wte.weight": torch.zeros(6, 8)},
        GPTConfig(vocab_size=5, n_layer=1, n_head=2, n_embd=8)), ValueError, "has shape"),
    Row("models.json cut in half", lambda c: (c.manifest(catalog.MANIFEST.read_text()[:3266]),
                                              catalog.load_model("classroom")), ValueError,
        "git checkout -- data/models.json", files=True),
    Row("models.json missing", lambda c: (c.manifest(None), catalog.load_model("classroom")), FileNotFoundError,
        "git checkout -- data/models.json", files=True),
    Row("unknown model name", lambda c: catalog.load_model("gpt3"), ValueError, "choose one of"),
    # --- GPT-2 small -------------------------------------------------------------------------------------
    Row("offline GPT-2, nothing downloaded", lambda c: (c.gpt2_folder({}), gpt2.load_gpt2()), gpt2.GPT2Unavailable,
        "548 MB", files=True),
    Row("partial GPT-2 download in the folder", lambda c: (c.gpt2_folder({"model.safetensors": b"\0" * 1000}),
                                                           gpt2.load_gpt2()),
        gpt2.GPT2Unavailable, "left as it is", files=True),
    Row("GPT-2 folder without tokenizer.json", lambda c: gpt2.load_gpt2(c.gpt2_folder({"model.safetensors": b"x"})),
        gpt2.GPT2Unavailable, "tokenizer.json is missing", files=True),
    Row("typed <|endoftext|>", lambda c: gpt2.BPETokenizer.encode(None, "a <|endoftext|> b"), ValueError,
        "Leave <|endoftext|> out"),
    # --- exports --------------------------------------------------------------------------------------------
    Row("export name with ..", lambda c: H.save_for_slides(c.figure(), "../x", c.target), ValueError,
        "plain file name", files=True),
    Row("absolute export name", lambda c: H.save_for_slides(c.figure(), str(c.root / "abs"), c.target), ValueError,
        "plain file name", files=True),
    Row("export folder None", lambda c: H.save_for_slides(c.figure(), "x", None), ValueError, "not a folder name",
        files=True),
    Row("export folder ''", lambda c: H.save_for_slides(c.figure(), "x", ""), ValueError, "names no folder",
        files=True),
    Row("Windows drive on Linux", lambda c: H.save_for_slides(c.figure(), "x", "Z:/slides"), ValueError,
        "Windows drive path", files=True),
    Row("export folder under a file", lambda c: ((c.root / "a-file").write_text("mine"),
                                                  H.save_for_slides(c.figure(), "x", c.root / "a-file" / "sub")),
        ValueError, "is a file, not a folder", files=True),
    Row("a slide 500 inches wide", lambda c: H.save_for_slides(c.figure(), "x", c.target, size=(500, 500)),
        ValueError, "more than 16384 a side", files=True),
    Row("full disk during an export", lambda c: (c.full_disk(), H.save_for_slides(c.figure(), "x", c.target)),
        OSError, "free some disk space", files=True),
    Row("deck name with ..", lambda c: H.export_deck(c.target, name="../x"), ValueError, "plain file name", files=True),
    Row("absolute deck name", lambda c: H.export_deck(c.target, name=str(c.root / "x")), ValueError,
        "plain file name", files=True),
    Row("deck name with a folder", lambda c: H.export_deck(c.target, name="sub/deck"), ValueError, "plain file name",
        files=True),
    Row("full disk during the deck", lambda c: (c.full_disk(), H.export_deck(c.target, slides=deck.SLIDES[:2])),
        OSError, "free some disk space", files=True),
    # --- students' functions: a ✗ line, never an exception, never a stopped kernel ---------------------------
    Row("student function raises", lambda c: H.check_attention_weights(_raises(RuntimeError("oops"))), None,
        "raised RuntimeError"),
    Row("student function calls sys.exit()", lambda c: H.check_attention_weights(_exits), None, "exit()"),
    Row("student function calls exit()", lambda c: H.check_attention_weights(_calls_exit), None, "exit()"),
    Row("student function returns NaN", lambda c: H.check_attention_weights(lambda Q, K: torch.full(
        (Q.shape[0], K.shape[0]), float("nan"))), None, "NaN"),
    Row("student function returns text", lambda c: H.check_attention_weights(lambda Q, K: "weights"), None,
        "expected a tensor"),
    Row("a number instead of a function", lambda c: H.check_concat_shape(5), None, "function"),
    Row("knock-out prediction as text", lambda c: H.check_knockout_prediction("fifty", c.lm, "induction", [(0, 0)]),
        None, "number"),
]


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def classroom():
    return H.load_model("classroom")


def test_the_table_covers_at_least_forty_cases():
    assert len(ROWS) >= 40 and len({row.case for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_bad_input_gets_one_clear_line(row, classroom, tmp_path, monkeypatch, capsys):
    root = tmp_path / "sandbox"
    root.mkdir()
    monkeypatch.chdir(root)  # a stray relative write would land in the sandbox and be caught
    ctx = Ctx(classroom, root, monkeypatch)
    before = _files(tmp_path)
    if row.error is None:
        row.call(ctx)
        lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("✗") and row.fragment in lines[0], lines
    else:
        with pytest.raises(row.error) as err:
            row.call(ctx)
        message = str(err.value)
        assert "\n" not in message and row.fragment in message and len(message) < 700, message
    if row.files:
        after = _files(tmp_path)
        made = sorted(set(after) - set(before))
        changed = sorted(k for k in before if after.get(k) != before[k])
        made = [m for m in made if not _made_by_the_row_itself(m)]
        assert made == [] and changed == [], f"files written or changed: {made + changed}"


def _made_by_the_row_itself(path: str) -> bool:
    """Inputs a row prepares (a model to damage, a user's file, a stand-in GPT-2 folder), not outputs."""
    return path.startswith(("sandbox/models/", "sandbox/gpt2/", "sandbox/data/")) or path in (
        "sandbox/evil.pt", "sandbox/a-file")


def test_deck_name_is_checked_before_any_figure_is_built(monkeypatch, tmp_path):
    monkeypatch.setattr(deck, "build_figures", _raises(AssertionError("built figures for a bad name")))
    for name in ("../x", "sub/deck", "/tmp/deck", ""):
        with pytest.raises(ValueError, match="plain file name"):
            H.export_deck(tmp_path / "deck", name=name)
    assert not (tmp_path / "deck").exists()


def test_a_failed_deck_leaves_an_existing_folder_as_it_was(monkeypatch, tmp_path):
    folder = tmp_path / "deck"
    folder.mkdir()
    (folder / "notes.txt").write_text("the teacher's own file")
    monkeypatch.setattr(deck, "_write_pdf", _raises(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(OSError):
        H.export_deck(folder, slides=deck.SLIDES[:2])
    assert _files(folder) == {"notes.txt": hashlib.sha256(b"the teacher's own file").hexdigest()}


def test_a_missing_page_script_is_one_line_when_a_page_is_exported(classroom, tmp_path, monkeypatch):
    from helpers.figures import page
    for name in ("page_template.html", "page_live.js", "page_view.js"):
        (tmp_path / name).write_bytes((page.TEMPLATE.with_name(name)).read_bytes())
    monkeypatch.setattr(page, "TEMPLATE", tmp_path / "page_template.html")  # page_model.js is not there
    with pytest.raises(FileNotFoundError, match=re.escape("helpers/figures/page_model.js is missing, and the page is "
                                                          "built from it: restore it with `git checkout --")) as err:
        H.export_page(classroom, ["I like to draw"], folder=tmp_path / "out")
    assert "\n" not in str(err.value) and not (tmp_path / "out").exists()


def test_a_folder_that_cannot_be_made_is_named_once_with_the_folder_to_fix(tmp_path, monkeypatch):
    """A read-only disk (as a tmpfs mounted ro, which refuses even root): mkdir fails with EROFS."""
    from helpers.core.files import write_set
    locked = tmp_path / "locked"
    locked.mkdir()

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(path))
    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(PermissionError) as err:
        write_set({locked / "deck" / "sub" / "a.png": b"x"})
    message = str(err.value)
    assert message.count("Cannot write") == 1 and message.count("Nothing was changed there.") == 1, message
    assert f"Cannot write {locked / 'deck'}: permission denied (Read-only file system); make {locked} writable" in message


def test_a_map_of_a_thousand_words_is_drawn_at_a_screens_size_with_every_kth_word():
    fig = H.plot_attention(np.full((1000, 1000), 1e-3), [f"w{i}" for i in range(1000)])
    assert tuple(fig.get_size_inches()) == (16.0, 14.0)  # not 751 × 651 inches
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert len(labels) <= 40 and labels[:2] == ["w0", "w25"]


def test_a_deck_from_seeded_weights_says_so_on_its_slides(monkeypatch):
    def missing(name):
        raise FileNotFoundError(f"Model file data/{name}.safetensors is missing.")

    monkeypatch.setattr("helpers.core.walkthrough.load_model", missing)
    with pytest.warns(SeededWeightsWarning):
        figures = deck.build_figures(deck.SLIDES[:1])
    texts = [t.get_text() for t in figures[0][1].findobj(lambda a: hasattr(a, "get_text"))]
    assert any("SEEDED weights, not trained" in t for t in texts)
    monkeypatch.undo()
    trained = deck.build_figures(deck.SLIDES[:1])
    assert not any("SEEDED" in t.get_text() for t in trained[0][1].findobj(lambda a: hasattr(a, "get_text")))


def test_exporting_an_unchanged_figure_again_changes_no_byte(tmp_path):
    fig = H.plot_attention(torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), -1),
                           ["I", "like", "to", "draw"])
    first = {p.name: p.read_bytes() for p in H.save_for_slides(fig, "draw", tmp_path / "a")}
    again = {p.name: p.read_bytes() for p in H.save_for_slides(fig, "draw", tmp_path / "b")}
    twin = H.plot_attention(torch.softmax(torch.randn(4, 4, generator=torch.Generator().manual_seed(0)), -1),
                            ["I", "like", "to", "draw"])
    fresh = {p.name: p.read_bytes() for p in H.save_for_slides(twin, "draw", tmp_path / "c")}
    assert first == again == fresh


def test_gpt2_offline_with_a_users_file_deletes_nothing(tmp_path, monkeypatch, capsys):
    """The reported data loss, through the notebooks' switch: pick_model('gpt2') falls back, files stay."""
    folder = tmp_path / "gpt2"
    (folder / ".download").mkdir(parents=True)
    (folder / ".download" / "notes.txt").write_text("my notes")
    (folder / "model.safetensors").write_bytes(b"someone else's model")
    monkeypatch.setenv(gpt2.DIR_ENV, str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(gpt2.VERIFY_ENV, raising=False)
    monkeypatch.setattr(gpt2, "_from_hf_cache", lambda name: None)
    before = _files(folder)
    assert H.pick_model("gpt2").name == "classroom"
    assert _files(folder) == before
    assert "left as it is" in capsys.readouterr().out


def test_catalog_and_gpt2_import_in_one_direction():
    import ast
    import inspect

    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(gpt2)))
                if isinstance(node, ast.ImportFrom) and node.module}
    assert "catalog" not in imported and ".catalog" not in imported


# --- the widgets: bad values in, one line out, and the next good move still redraws ------------------------
def _controls(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _controls(child)


def _pictures(root_widget) -> list[bytes]:
    return [bytes(c.value) for c in _controls(root_widget) if isinstance(c, W.Image)]  # NamedImage too


def test_explorer_survives_bad_values_and_redraws(classroom):
    explorer = H.Explorer(classroom, "I like to draw")
    for bad in ("", "I like zebras", PASTED, "I like <bos> to draw"):
        explorer.text.value = bad
    assert explorer.text.value == "I like to draw"  # the box shows what the pictures show
    assert explorer.select(99, 0) is False
    before = _pictures(explorer.widget)
    explorer.text.value = "the cat is tired ."
    assert _pictures(explorer.widget) != before


def test_head_count_slider_survives_bad_values_and_redraws():
    slider = H.HeadCountExplorer()
    assert slider.set_heads(5) is False and slider.set_sentence("") is False and slider.set_merge(7) is False
    before = _pictures(slider.widget)
    assert slider.set_heads(2)
    assert _pictures(slider.widget) != before


def test_knockout_explorer_survives_bad_values_and_redraws(classroom):
    knock = H.KnockoutExplorer(classroom, "I like to draw", heads=[(0, 0)])
    knock.sentence.value = "I like zebras"
    assert knock.sentence.value == "I like to draw" and "⚠" in knock.message.value
    before = _pictures(knock.widget)
    knock.heads.value = ("L1 H1", "L2 H2")
    assert _pictures(knock.widget) != before


@pytest.mark.parametrize("make, words", [
    (lambda lm: H.KnockoutExplorer(lm, "I like to draw", mode="half"), "mode='half': choose one of"),
    (lambda lm: H.KnockoutExplorer(lm, "I like to draw", top_k=0), "top_k=0 is out of range"),
    (lambda lm: H.KnockoutExplorer(lm, "I like to draw", top_k=10**6), "top_k=1000000 is out of range"),
    (lambda lm: H.LiveTraining(H.train_live, "tiny", seed="x"), "seed='x' is not a whole number"),
    (lambda lm: H.LiveTraining(H.train_live, "tiny", n_stories=10**9), "n_stories=1000000000 is out of range"),
    (lambda lm: H.LiveTraining(None), "the function that trains, not NoneType; pass H.train_live"),
    (lambda lm: H.plot_attention([[1.0, 0.0], [0.5]], ["I", "like"]), "the rows of this list have different lengths"),
    # sweep 25: notebook 08's widgets and functions, exports, the page
    (lambda lm: H.TrainingStepExplorer(run="induction"), "run is a str; pass what H.load_snapshots(\"induction\")"),
    (lambda lm: H.TrainingStepExplorer(curves={"loss": [1, 2]}), "curves is a dict without 'steps'"),
    (lambda lm: H.TrainingStepExplorer(step=553), "No snapshot at step 553; choose one of [0, 1, 2"),
    (lambda lm: H.TrainingStepExplorer(step=552.0), "step=552.0 is not a whole number"),
    (lambda lm: H.formation(None), "curves is NoneType; pass a training run's curves"),
    (lambda lm: H.formation(shipped_curves(), threshold=float("nan")), "threshold=nan is not a number between 0 and 1"),
    (lambda lm: H.formation(shipped_curves(), threshold="0.5"), "threshold='0.5' is not a number between 0 and 1"),
    (lambda lm: H.formation_table(shipped_curves(), {}), "found is another dict; pass what H.formation(curves)"),
    (lambda lm: H.formation_seeds_table("x"), "runs is a str; pass what H.formation_seeds() returns"),
    (lambda lm: H.plot_formation_curves(shipped_curves(), H.formation(shipped_curves()), step=10**9),
     "step=1000000000 is not a step of these curves"),
    (lambda lm: H.load_snapshots("inducton"), "has no model 'inducton'; the models with snapshots: induction."),
    (lambda lm: H.train_live("nope", 1, None), "Unknown recipe 'nope'; choose one of classroom"),
    (lambda lm: H.train_live("induction", "x", None), "seed='x' is not a whole number"),
    (lambda lm: H.Explorer(lm, dpi=0), "dpi=0 is out of range"),
    (lambda lm: H.save_animation("not an animation"), "anim is a str; pass what H.one_head_animation()"),
    (lambda lm: H.export_deck(slides=["nope"]), "each of slides is a str; pass Slides from helpers.figures.deck"),
    (lambda lm: H.export_page(lm, ["I like to draw"], live="no"), "live='no': pass True"),
])
def test_a_widget_built_with_a_bad_argument_says_which_in_one_line(classroom, make, words):
    with pytest.raises((ValueError, TypeError), match=re.escape(words)) as err:
        make(classroom)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("call, words", [
    (lambda: H.run_sentence("classroom", "I like to draw"), "Expected a model from H.load_model"),
    (lambda: H.Explorer("classroom"), "Expected a model from H.load_model"),
    (lambda: H.save_for_slides(Figure(), "x", formats="png"), "is one string"),
    (lambda: H.save_for_slides(Figure(), "x", dpi=100000), "at most 1200"),
])
def test_a_model_name_for_a_model_a_format_string_or_a_huge_dpi_is_one_line(tmp_path, monkeypatch, call, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=re.escape(words)) as err:
        call()
    assert "\n" not in str(err.value) and not list(tmp_path.iterdir())


def test_the_doctor_prints_on_a_console_that_cannot_show_a_tick():
    import os
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "helpers.doctor"], capture_output=True, timeout=300,
                          env=dict(os.environ, PYTHONIOENCODING="ascii"), cwd=Path(__file__).resolve().parent.parent)
    assert b"Traceback" not in done.stderr and b"? " in done.stdout, done.stderr[-500:]


def test_a_page_built_from_a_changed_script_is_said_once(classroom, tmp_path, monkeypatch):
    """A damaged script gave a dead page and no word at export (sweep 25); the page now says so too."""
    from helpers.figures import page
    for name in ("page_template.html", "page_model.js", "page_live.js", "page_view.js", page.SUMS):
        (tmp_path / name).write_bytes(page.TEMPLATE.with_name(name).read_bytes())
    (tmp_path / "page_view.js").write_text("// damaged\n", encoding="utf-8")
    monkeypatch.setattr(page, "TEMPLATE", tmp_path / "page_template.html")
    monkeypatch.setattr(page, "_SAID", set())
    with pytest.warns(page.PageFileWarning, match=re.escape("helpers/figures/page_view.js is not the copy this "
                                                            "project shipped, so the page may not run")) as said:
        H.export_page(classroom, ["I like to draw"], folder=tmp_path / "a", live=False)
        H.export_page(classroom, ["I like to draw"], folder=tmp_path / "b", live=False)
    assert len(said) == 1
