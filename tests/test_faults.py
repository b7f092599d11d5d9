"""Faults a classroom meets (a full disk, Ctrl-C and kill -9 while training or recording, unreadable
data, pages too big to open, bad model files and configs, odd arguments): each is refused or reported in
one line naming the fix, and no shipped file is lost. (Issue 35's third fault sweep.)

A fault that kills or stops a process (kill -9, Ctrl-C) runs in a fresh one. Root ignores permissions,
so the unreadable and read-only cases run as `nobody` (`unshare -U`) or on a read-only mount; they are
skipped with the reason elsewhere. No test writes to data/: every folder is a temporary one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch
from matplotlib.figure import Figure
from safetensors.torch import save

import helpers as H
from helpers import doctor, train
from helpers.analysis import headcount, kvheads
from helpers.analysis.kvcache import kv_cache_table
from helpers.core import catalog
from helpers.core.files import finish_interrupted
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.core.tokenizer import WordTokenizer
from helpers.core.weights import checked_config, read_model, sha256, to_checkpoint_layout
from helpers.exercises import kv_checks
from helpers.figures import export
from helpers.figures.page import MAX_MAP_BYTES, MAX_TOKENS, export_page, read_page
from helpers.widgets.explorer import Explorer

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
UNSHARE = shutil.which("unshare")
as_nobody = pytest.mark.skipif(not (IS_ROOT and UNSHARE), reason="needs root and unshare -U to run as nobody "
                                                                  "(root ignores file permissions)")
needs_root = pytest.mark.skipif(not IS_ROOT, reason="mounting a tmpfs (read-only, or small: a real full disk) needs root")
WORDS = "the cat near these big dogs is tired .".split()


def run_python(code: str, *args: str, timeout: float = 120, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """A fresh Python process in the project folder (so a kill -9 or a Ctrl-C stops only it)."""
    return subprocess.run([*prefix, sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def random_lm(layers=1, heads=2, n_ctx=16, name="toy", nan=False) -> LanguageModel:
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(vocabulary()), n_ctx=n_ctx, n_layer=layers, n_head=heads, n_embd=4 * heads)
    model = GPT(config).eval()
    if nan:
        with torch.no_grad():
            for p in model.parameters():
                p.fill_(float("nan"))
    return LanguageModel(name, model, WordTokenizer(vocabulary()))


def sentence(tokens: int, start: int = 0) -> str:
    return " ".join(WORDS[(start + i) % len(WORDS)] for i in range(tokens - 1))  # + <bos>


def figure() -> Figure:
    fig = Figure(figsize=(8, 4.5))
    fig.add_subplot().plot([0, 1], [1, 0])
    return fig


@pytest.fixture
def world_readable():
    """A folder under /tmp that `nobody` can enter (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="sweep3-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# --- §3 the trainer -----------------------------------------------------------------------------------------
@pytest.fixture
def shipped(tmp_path):
    """A data folder of its own: a model list naming the classroom model's file, and that file."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "classroom.safetensors").write_bytes(b"the classroom model")
    entry = {"file": "classroom.safetensors", "sha256": "0" * 64, "command": "python -m helpers.train classroom"}
    (folder / "models.json").write_text(json.dumps({"classroom": entry}))
    return folder


def refused_before_training(monkeypatch, capsys, out, *more: str) -> str:
    """main(['tiny', '--out', out, *more]) must stop before any step is trained, with one line naming --out."""
    def no_training(*args, **kwargs):
        raise AssertionError("training started although --out is bad")

    monkeypatch.setattr(train, "train", no_training)
    with pytest.raises(SystemExit) as stop:
        train.main(["tiny", "--out", str(out), *more])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and "\n" not in err and "--out" in err and "Traceback" not in err, err
    return err


def test_out_onto_the_model_list_is_refused_before_training(shipped, monkeypatch, capsys):
    before = (shipped / "models.json").read_bytes()
    assert "model list" in refused_before_training(monkeypatch, capsys, shipped / "models.json")
    assert (shipped / "models.json").read_bytes() == before


def test_out_onto_another_models_file_is_refused_before_training(shipped, monkeypatch, capsys):
    assert "classroom model file" in refused_before_training(monkeypatch, capsys, shipped / "classroom.safetensors")
    assert (shipped / "classroom.safetensors").read_bytes() == b"the classroom model"


def test_snapshots_onto_a_models_own_file_and_back_are_refused_before_training(shipped, monkeypatch, capsys):
    """tiny's snapshots written over tiny's model (or a model over tiny's snapshots) would lose the other."""
    listing = json.loads((shipped / "models.json").read_text())
    listing["tiny"] = {"file": "tiny.safetensors", "snapshots": {"file": "tiny-snap.safetensors"}}
    (shipped / "models.json").write_text(json.dumps(listing))
    for name in ("tiny.safetensors", "tiny-snap.safetensors"):
        (shipped / name).write_bytes(name.encode())
    err = refused_before_training(monkeypatch, capsys, shipped / "tiny.safetensors", "--snapshots")
    assert "tiny model file" in err
    assert "tiny snapshots file" in refused_before_training(monkeypatch, capsys, shipped / "tiny-snap.safetensors")
    assert [(shipped / n).read_bytes() for n in ("tiny.safetensors", "tiny-snap.safetensors")] == [
        b"tiny.safetensors", b"tiny-snap.safetensors"]


@pytest.mark.parametrize("where, words", [("file/sub/tiny.safetensors", "is a file, not a folder"),
                                          ("folder", "is a folder"),
                                          ("tiny.bin", "does not end in .safetensors")])
def test_out_that_could_only_fail_after_training_is_refused_first(tmp_path, monkeypatch, capsys, where, words):
    (tmp_path / "file").write_text("mine")
    (tmp_path / "folder").mkdir()
    assert words in refused_before_training(monkeypatch, capsys, tmp_path / where)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"] and not list((tmp_path / "folder").iterdir())


def test_out_onto_a_pipe_a_link_or_into_the_package_is_refused_first(tmp_path, monkeypatch, capsys):
    os.mkfifo(tmp_path / "pipe.safetensors")
    (tmp_path / "link.safetensors").symlink_to(tmp_path / "mine.safetensors")
    (tmp_path / "mine.safetensors").write_bytes(b"mine")
    assert "pipe, socket or device" in refused_before_training(monkeypatch, capsys, tmp_path / "pipe.safetensors")
    assert "symbolic link" in refused_before_training(monkeypatch, capsys, tmp_path / "link.safetensors")
    package = Path(train.__file__).parent
    assert "inside the helpers package" in refused_before_training(monkeypatch, capsys, package / "x.safetensors")
    assert not (package / "x.safetensors").exists() and not (package / "models.json").exists()
    # the package folder itself: "a folder; name a model file inside it, e.g. helpers/x.safetensors", which was then
    # refused in turn (sweep 21, T04)
    said = refused_before_training(monkeypatch, capsys, package)
    assert "is the helpers package" in said and "data/" in said and "inside it" not in said
    assert (tmp_path / "mine.safetensors").read_bytes() == b"mine" and (tmp_path / "link.safetensors").is_symlink()


def test_out_over_a_file_already_there_says_it_will_be_replaced(tmp_path, monkeypatch, capsys):
    """--out over a .safetensors of one's own that no model list names was replaced without a word."""
    (tmp_path / "mine.safetensors").write_bytes(b"mine")

    def stop_at_once(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "train", stop_at_once)
    with pytest.raises(SystemExit):
        train.main(["tiny", "--out", str(tmp_path / "mine.safetensors")])
    said = capsys.readouterr().out
    assert "mine.safetensors exists: it is replaced when training ends (Ctrl-C before then keeps it)." in said
    assert (tmp_path / "mine.safetensors").read_bytes() == b"mine"


@needs_root
def test_out_in_proc_or_sys_is_refused_before_training(monkeypatch, capsys):
    """os.access says root may write there; only trying to make a file tells."""
    for where in ("/proc/tiny.safetensors", "/sys/new/tiny.safetensors"):
        assert "cannot write in" in refused_before_training(monkeypatch, capsys, where)


@needs_root
def test_out_on_a_read_only_mount_is_refused_before_training(tmp_path, monkeypatch, capsys):
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(mount)], check=True)
    try:
        assert "cannot write in" in refused_before_training(monkeypatch, capsys, mount / "tiny.safetensors")
    finally:
        subprocess.run(["umount", str(mount)], check=True)


@as_nobody
def test_out_in_a_folder_nobody_may_write_is_refused_before_training(world_readable):
    locked = world_readable / "locked"
    locked.mkdir(mode=0o555)
    result = subprocess.run([UNSHARE, "-U", sys.executable, "-m", "helpers.train", "tiny", "--out",
                             str(locked / "tiny.safetensors")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    err = result.stderr.strip()
    assert result.returncode == 2 and "--out" in err and "cannot write in" in err and "\n" not in err, err
    assert "tiny:" not in err and list(locked.iterdir()) == []  # no progress bar: no step was trained


CTRL_C = """
import sys, time
import helpers.train as T
real, calls = T.next_token_loss, [0]
def slow(model, ids):
    calls[0] += 1
    if calls[0] == 3:
        print("training", flush=True)
    time.sleep(0.2)
    return real(model, ids)
T.next_token_loss = slow
T.main(["tiny", "--out", sys.argv[1]])
"""


@pytest.mark.slow  # a training process
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["Ctrl-C", "kill", "hang-up"])
def test_ctrl_c_or_kill_stops_training_with_one_line_and_writes_nothing(tmp_path, stop):
    """SIGTERM (kill) and SIGHUP (a closed terminal) ended a run without a word before; now as Ctrl-C does."""
    out = tmp_path / "new" / "tiny.safetensors"
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C, str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "training"
        proc.send_signal(stop)  # in the middle of a step
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    last = err.strip().splitlines()[-1]
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert last.startswith("stopped at step ") and last.endswith("; nothing written"), last
    assert not (tmp_path / "new").exists()


RECORD = """
import os, signal, sys
from pathlib import Path
import torch
from helpers.core import catalog
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig
folder, seed, kill = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.manual_seed(seed)
vocab = vocabulary()
model = GPT(GPTConfig(vocab_size=len(vocab), n_ctx=16, n_layer=1, n_head=2, n_embd=8)).eval()
real, renames = os.replace, []
def replace(src, dst, *args, **kwargs):
    into_folder = Path(dst).parent.resolve() == folder.resolve() and not Path(dst).name.startswith(".")
    renames.append(into_folder)
    if kill == "writing" or (kill == "first rename" and into_folder) or (kill == "between" and renames.count(True) == 2):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *args, **kwargs)
os.replace = replace
catalog.record_model("toy", model, vocab, {"held_out_loss": float(seed)}, folder / "toy.safetensors")
"""


@pytest.mark.slow  # a fresh process per kill
@pytest.mark.parametrize("kill, finished", [("writing", False), ("first rename", True), ("between", True)])
def test_a_kill_while_recording_leaves_the_old_pair_or_the_new_one(tmp_path, kill, finished):
    """kill -9 while the model is written, before its first rename, or between the model's rename and its
    line's: load_model then reads a pair whose checksum matches (the old, or the new one finished)."""
    assert run_python(RECORD, str(tmp_path), "1", "none").returncode == 0  # the old pair
    killed = run_python(RECORD, str(tmp_path), "2", kill)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    lm = catalog.load_model("toy", data_dir=tmp_path)  # raised "corrupted" when the pair was split
    entry = catalog.manifest(tmp_path / "models.json")["toy"]
    assert entry["sha256"] == sha256(tmp_path / "toy.safetensors")
    assert lm.info["held_out_loss"] == entry["info"]["held_out_loss"] == (2.0 if finished else 1.0)
    assert hidden(tmp_path) == []  # the killed writer's temporaries are gone


@pytest.mark.slow  # trains
@needs_root
def test_a_full_disk_after_training_is_one_line_and_writes_nothing(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(mount)], check=True)
    try:
        (mount / "models.json").write_text("{}\n")
        result = subprocess.run([sys.executable, "-m", "helpers.train", "tiny", "--out", str(mount / "tiny.safetensors")],
                                cwd=ROOT, capture_output=True, text=True, timeout=300)
        last = result.stderr.strip().splitlines()[-1]
        assert result.returncode == 1 and "Traceback" not in result.stderr and "--out" in last, result.stderr
        assert "free some disk space" in last and "folder=" not in last
        assert sorted(p.name for p in mount.iterdir()) == ["models.json"] and (mount / "models.json").read_text() == "{}\n"
    finally:
        subprocess.run(["umount", str(mount)], check=True)


# --- §4 the doctor --------------------------------------------------------------------------------------------
@pytest.fixture
def data_folder(world_readable):
    """A small data folder the doctor can check: one file, its line, its README row."""
    blob = b"weights"
    digest = hashlib.sha256(blob).hexdigest()
    (world_readable / "toy.safetensors").write_bytes(blob)
    (world_readable / "models.json").write_text(json.dumps(
        {"toy": {"file": "toy.safetensors", "sha256": digest, "command": "python -m helpers.train toy"}}))
    (world_readable / "README.md").write_text(f"| `toy.safetensors` | a toy | 7 B | `{digest}` |\n")
    for p in world_readable.iterdir():
        p.chmod(0o644)
    return world_readable


def one_problem(folder: Path) -> str:
    problems, _ = doctor.check_data(folder)
    assert len(problems) == 1 and problems[0].startswith("✗ ") and "\n" not in problems[0], problems
    return problems[0]


def test_the_doctor_passes_its_small_data_folder(data_folder):
    assert doctor.check_data(data_folder) == ([], "1 data files match data/models.json and data/README.md")


@pytest.mark.parametrize("listing, words", [
    ([{"file": "toy.safetensors"}], "it holds a list"),
    ({"toy": {"sha256": "0" * 64}}, "has no 'file'"),
    ({"toy": "toy.safetensors"}, "is a str, not an object"),
    ({}, "lists no model"),
])
def test_a_broken_model_list_is_one_line_naming_the_fix(data_folder, listing, words):
    (data_folder / "models.json").write_text(json.dumps(listing))
    line = one_problem(data_folder)
    assert words in line and "git checkout -- data/models.json" in line, line


def test_a_missing_readme_is_one_line_saying_so(data_folder):
    (data_folder / "README.md").unlink()
    assert one_problem(data_folder) == ("✗ data/README.md is missing: restore it with `git checkout -- "
                                        "data/README.md` (or a fresh copy of the project).")


@as_nobody
def test_an_unreadable_data_file_is_one_line_for_a_student(data_folder):
    (data_folder / "toy.safetensors").chmod(0o000)
    code = """
    import json, sys
    from pathlib import Path
    from helpers import doctor
    print(json.dumps(doctor.check_data(Path(sys.argv[1]))))
    """
    result = run_python(code, str(data_folder), prefix=(UNSHARE, "-U"))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    problems, _ = json.loads(result.stdout)
    assert problems == ["✗ data/toy.safetensors cannot be read (permission denied): run "
                        "`chmod a+r data/toy.safetensors`."]


# --- §5 the offline page --------------------------------------------------------------------------------------
def test_a_sentence_too_long_to_draw_is_refused_in_one_line(tmp_path):
    lm = random_lm(n_ctx=MAX_TOKENS + 80)
    with pytest.raises(ValueError) as err:
        export_page(lm, ["I like to draw", sentence(MAX_TOKENS + 1)], folder=tmp_path)
    message = str(err.value)
    assert "\n" not in message and f"{MAX_TOKENS + 1} tokens long" in message and "about a second" in message
    assert list(tmp_path.iterdir()) == []
    assert read_page(export_page(lm, [sentence(MAX_TOKENS)], folder=tmp_path))["sentences"][0]["tokens"]


def test_a_page_too_big_to_open_in_a_second_is_refused_in_one_line(tmp_path):
    lm = random_lm(layers=12, heads=12, n_ctx=MAX_TOKENS)
    count = MAX_MAP_BYTES // (144 * MAX_TOKENS ** 2) + 1
    with pytest.raises(ValueError) as err:
        export_page(lm, [sentence(MAX_TOKENS, start=i) for i in range(count)], folder=tmp_path)
    assert "MB of maps" in str(err.value) and "\n" not in str(err.value) and list(tmp_path.iterdir()) == []


def test_a_page_of_nan_maps_is_refused(tmp_path):
    with pytest.raises(ValueError, match="NaN or infinite attention"):
        export_page(random_lm(nan=True), ["I like to draw"], folder=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_model_name_holding_the_templates_marker_stays_text(tmp_path):
    path = export_page(random_lm(name="x __PAGE_DATA__ __TITLE__ y"), ["I like to draw"], folder=tmp_path)
    text = path.read_text(encoding="utf-8")
    title = text[text.index("<title>"):text.index("</title>")]
    assert title == "<title>All 2 heads of x __PAGE_DATA__ __TITLE__ y"
    assert read_page(path)["model"] == "x __PAGE_DATA__ __TITLE__ y"


def test_sentences_as_a_set_are_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="order changes"):
        export_page(random_lm(), {"I like to draw", "the cat is tired ."}, folder=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_sentences_from_a_generator_are_read_once(tmp_path):
    path = export_page(random_lm(), (s for s in ["I like to draw", "the cat is tired ."]), folder=tmp_path)
    assert [s["text"] for s in read_page(path)["sentences"]] == ["I like to draw", "the cat is tired ."]


@pytest.mark.browser
def test_the_largest_page_allowed_draws_its_first_picture(tmp_path):
    """How long it takes is bench/bench_page_sizes.py's figure (MAX_TOKENS comes from it), not a bound here."""
    from test_browser import CHROMIUM, SCREEN, chromium

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`")
    path = export_page(random_lm(layers=12, heads=12, n_ctx=MAX_TOKENS), [sentence(MAX_TOKENS)], folder=tmp_path)
    with chromium() as browser:
        tab = browser.new_page(viewport=SCREEN, device_scale_factor=1)
        tab.goto(path.as_uri(), wait_until="load")
        tab.wait_for_function("window.attentionPage && window.attentionPage.ready", timeout=60_000)
        ready = tab.evaluate("window.attentionPage.ready")
    assert ready > 0  # ms from navigation to the first full picture: the page drew every map


# --- weak cases: model files and configs ----------------------------------------------------------------------
def model_file(tmp_path: Path, config_text: str) -> Path:
    model = random_lm().model
    metadata = {"config": config_text, "vocab": json.dumps(vocabulary()), "info": "{}"}
    path = tmp_path / "bad.safetensors"
    path.write_bytes(save(to_checkpoint_layout(model), metadata=metadata))
    return path


GOOD = random_lm().model.config.to_dict()


@pytest.mark.parametrize("config, words", [
    (json.dumps({**GOOD, "n_head": 3}), "an invalid config (n_embd=8 is not divisible by n_head=3"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "n_layer"}), "no key 'n_layer'"),
    (json.dumps({**GOOD, "n_heads": 2}), "unknown key 'n_heads'"),
    (json.dumps([GOOD]), "a config that is not a JSON object"),
    (json.dumps({**GOOD, "ln_eps": float("nan")}), "ln_eps=nan"),
])
def test_a_model_file_with_a_bad_config_is_one_line_naming_the_file(tmp_path, config, words):
    path = model_file(tmp_path, config)
    with pytest.raises(ValueError) as err:
        read_model(path, sha256(path), "python -m helpers.train toy")
    message = str(err.value)
    assert str(path) in message and words in message and "python -m helpers.train toy" in message, message
    assert "\n" not in message


@pytest.mark.parametrize("kwargs, words", [({"ln_eps": float("nan")}, "ln_eps=nan"), ({"mlp": "no"}, "mlp='no'"),
                                           ({"ln_eps": 0.0}, "ln_eps=0.0"), ({"mlp": 1}, "mlp=1")])
def test_a_config_with_nan_eps_or_a_word_for_mlp_is_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        checked_config(vocab_size=10, **kwargs)


# --- weak cases: the KV slider, the recorded numbers, the KV arithmetic -------------------------------------
def test_the_kv_slider_set_in_code_to_a_missing_setting_shows_one_line():
    e = H.KVHeadExplorer(kv_heads=3)
    e.kv_slider.value = 5  # a TraitError traceback before
    assert e.kv_slider.value == 3 and e.kv_heads == 3
    assert "⚠" in e.status.value and "\n" not in e.status.value and "still showing 3 key/value heads" in e.status.value
    e.kv_slider.value = 6
    assert e.kv_heads == 6 and e.status.value == ""


@pytest.mark.parametrize("read, name", [(kvheads.kv_results, "kv-3"), (headcount.loss_by_heads, "heads-4")])
def test_a_model_line_without_its_held_out_loss_is_one_line(monkeypatch, read, name):
    entries = json.loads(catalog.MANIFEST.read_text())
    del entries[name]["info"]["held_out_loss"]
    monkeypatch.setattr(sys.modules[read.__module__], "manifest", lambda *a, **k: entries)
    with pytest.raises(ValueError) as err:
        read()
    message = str(err.value)
    assert f"'{name}'" in message and "held_out_loss" in message and f"python -m helpers.train {name}" in message


def test_a_kv_table_for_an_absurd_context_is_refused_in_one_line():
    with pytest.raises(ValueError, match="context="):
        kv_cache_table(10 ** 400)
    assert "GiB for 8,000 tokens" in kv_cache_table()


def test_a_kv_cache_answer_past_float_range_is_a_verdict(capsys):
    kv_checks.check_kv_cache(lambda config, n_tokens: 10 ** 400)  # raised OverflowError before
    out = capsys.readouterr().out
    assert out.startswith("✗") and "too big" in out and "Traceback" not in out


# --- weak cases: exports --------------------------------------------------------------------------------------
def test_an_export_into_a_file_says_it_is_a_file(tmp_path):
    (tmp_path / "slides").write_text("mine")
    for folder in (tmp_path / "slides", tmp_path / "slides" / "sub"):
        for write in (lambda f: export.save_for_slides(figure(), "x", folder=f),
                      lambda f: export_page(random_lm(), ["I like to draw"], folder=f),
                      lambda f: H.export_deck(f, slides=[])):
            with pytest.raises(ValueError, match="is a file, not a folder"):
                write(folder)
    assert (tmp_path / "slides").read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["slides"]


@pytest.mark.parametrize("folder, words", [("~nosuchuser-sweep3/slides", "names no home folder"),
                                           ("slides\0x", "NUL byte")])
def test_an_unknown_user_or_a_nul_byte_in_the_folder_is_one_line(tmp_path, folder, words):
    for write in (lambda: export.save_for_slides(figure(), "x", folder=folder),
                  lambda: export_page(random_lm(), ["I like to draw"], folder=folder),
                  lambda: H.export_deck(folder, slides=[])):
        with pytest.raises(ValueError, match=words) as err:
            write()
        assert "\n" not in str(err.value)


def test_an_empty_folder_name_is_never_read_as_the_default(tmp_path):
    explorer = Explorer(random_lm(), "I like to draw", folder=tmp_path)
    assert explorer.export("") == [] and "names no folder" in explorer.error
    assert explorer.export_web_page("") is None and "names no folder" in explorer.error
    assert list(tmp_path.iterdir()) == []



def test_a_running_writers_pair_is_left_alone(tmp_path):
    """Only a dead process's unfinished pair is ours to remove: a live one's (here, this process's) stays,
    and so does every hidden name that is not a pair's."""
    (tmp_path / f".pair-{os.getpid()}-abcdefgh").mkdir()
    (tmp_path / ".staging-abcdefgh").mkdir()
    (tmp_path / ".map.png.abcdefgh.tmp").write_text("being written")
    assert finish_interrupted(tmp_path) == [] and len(hidden(tmp_path)) == 3
