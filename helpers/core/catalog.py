"""The models the notebooks can use, by name: load_model("classroom"), pick_model("gpt2").

Shipped models live in data/ and are listed in data/models.json with their sha256,
so a damaged file is caught before it is read. Imports go one way: catalog uses gpt2
(for "gpt2"), and gpt2 knows nothing of the catalog.
"""

from __future__ import annotations

import json
import math
from typing import Callable
from pathlib import Path

from . import gpt2
from .files import atomic_write, finish_interrupted, staged_pair
from .model import GPT, LanguageModel
from .tokenizer import WordTokenizer
from .weights import read_model, save_model

__all__ = ["LanguageModel", "load_model", "pick_model", "shipped_models", "manifest", "record_model", "recorded",
           "record_measurements", "record_file", "info_number"]

DATA_DIR = Path(__file__).resolve().parents[2] / "data"  # helpers/core/catalog.py -> the project folder
MANIFEST = DATA_DIR / "models.json"
RESTORE = "restore it with `git checkout -- data/models.json` (or a fresh copy of the project)"


def manifest(path: Path = MANIFEST, required: bool = True) -> dict:
    """The manifest's entries by name. A missing or damaged manifest is a one-line error
    naming the file and the fix; required=False reads a missing one as empty (a new data folder).
    A model and its line that a killed trainer left half-renamed are finished first (files.finish_interrupted)."""
    finish_interrupted(path.parent)
    if not path.is_file():
        if not required:
            return {}
        raise FileNotFoundError(f"The model list {path} is missing, so no shipped model can be found; {RESTORE}.")
    # the project's own list is restored from git; a list in a folder of the teacher's (train --out) is theirs
    fix = RESTORE if path.resolve() == MANIFEST.resolve() else (
        "move it away (a new one is started) or restore it from your own copy")
    try:
        entries = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"The model list {path} is damaged (not valid JSON: {str(err).splitlines()[0]}); "
                         f"{fix}.") from None
    if not isinstance(entries, dict):
        raise ValueError(f"The model list {path} is damaged (expected a JSON object of models); {fix}.")
    return entries


def shipped_models() -> list[str]:
    return sorted(manifest())


def regenerate_command(name: str) -> str:
    return f"python -m helpers.train {name}"


def load_model(name: str = "classroom", data_dir: Path | None = None) -> LanguageModel:
    """Load a shipped classroom model, or "gpt2" for GPT-2 small (downloaded once).
    data_dir: another folder with its own models.json (a model just trained with --out); default data/."""
    if name == "gpt2":
        return gpt2.load_gpt2()  # only touches the network when the files are not cached
    folder = DATA_DIR if data_dir is None else Path(data_dir)
    entries = manifest() if data_dir is None else manifest(folder / MANIFEST.name)
    if name not in entries:
        names = sorted(entries) + ['gpt2'] if data_dir is None else sorted(entries)
        raise ValueError(f"No model named {name!r}{'' if data_dir is None else f' in {folder / MANIFEST.name}'}; "
                         f"choose one of {', '.join(names) or '(none listed)'}.")
    entry = entries[name]
    listing = folder / MANIFEST.name
    for field in ("file", "sha256"):  # without its checksum a file cannot be trusted: never load it unchecked
        if not isinstance(entry, dict) or not isinstance(entry.get(field), str):
            raise ValueError(f"The entry {name!r} in {listing} has no {field!r}, so {name} cannot be checked; "
                             f"{RESTORE if data_dir is None else 'rerun ' + regenerate_command(name)}.")
    remedy = (f"{regenerate_command(name)}`, or restore the shipped file with `git checkout -- data/{entry['file']}"
              if data_dir is None else f"{regenerate_command(name)} --out {folder / entry['file']}")  # a folder of yours
    model, vocab, info = read_model(folder / entry["file"], entry["sha256"], remedy)
    return LanguageModel(name=name, model=model, tokenizer=WordTokenizer(vocab), info=info, bos=info.get("bos", True))


def pick_model(name: str = "classroom", fallback: str = "classroom",
               load: Callable[[str], LanguageModel] | None = None) -> LanguageModel:
    """The notebooks' switch: the named model; for "gpt2" offline, one line and the `fallback` model
    (a notebook whose experiment needs another one names it, and may pass its own cached `load`)."""
    if name != "gpt2":
        return load_model(name)
    try:
        return gpt2.load_gpt2()
    except gpt2.GPT2Unavailable as err:
        print(f"{err} Using the {fallback} model instead.")
        return (load or load_model)(fallback)


RUN_FACTS = ("train_seconds", "tokens_per_second")  # this run on this machine: the manifest keeps them, the file not
OTHER_RUNS = ("seeds", "formation_seeds", "snapshots")  # a line's records of other runs and files, not of its model


def record_model(name: str, model: GPT, vocab: list[str], info: dict, path: Path) -> None:
    """Save a trained model and its line in the manifest beside it as one step (record_file). The file holds
    only what the recipe determines, so training again gives the same bytes (the same sha256); how long
    the run took goes into the manifest alone. The line keeps what it recorded of other runs (OTHER_RUNS:
    seeds, snapshots), and its measurements of the model (merged losses, …) while the bytes are the same."""
    kept = {key: value for key, value in info.items() if key not in RUN_FACTS}

    def place(entries: dict, entry: dict) -> None:
        old = entries.get(name) if isinstance(entries.get(name), dict) else {}
        same = old.get("sha256") == entry["sha256"]
        carried = {key: value for key, value in old.items() if key in OTHER_RUNS or (same and key not in entry)}
        entries[name] = {**carried, **entry, "command": regenerate_command(name), "config": model.config.to_dict(),
                         "info": info}
    record_file(path, lambda staged: save_model(model, staged, vocab, kept), place)


def record_file(path: Path, save: Callable[[Path], str], place: Callable[[dict, dict], object]) -> dict:
    """Write a file with save(staged path) -> its sha256, and place(entries, entry) its entry ({"file",
    "sha256", "bytes"}) in the manifest beside it: both are staged, then renamed into place together
    (files.staged_pair), so a kill at any moment leaves the old pair or the new one, never a file whose
    checksum its line does not match. Returns the entry."""
    path = Path(path)
    with staged_pair(path.parent) as staging:
        digest = save(staging / path.name)
        entry = {"file": path.name, "sha256": digest, "bytes": (staging / path.name).stat().st_size}
        entries = manifest(path.parent / MANIFEST.name, required=False)  # read now: after any interrupted write
        place(entries, entry)
        write_manifest(entries, staging / MANIFEST.name)
    return entry


def info_number(name: str, key: str, entries: dict | None = None) -> float:
    """The number info[key] recorded in the manifest for model `name` (entries: a manifest already read),
    or a one-line ValueError naming the entry and the fix."""
    entry = (manifest() if entries is None else entries).get(name)
    info = entry.get("info") if isinstance(entry, dict) else None
    value = info.get(key) if isinstance(info, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"The entry {name!r} in {MANIFEST} records no number {key!r} (found {value!r}); "
                         f"{RESTORE}, or rerun `{regenerate_command(name)}`.")
    return float(value)


def recorded(name: str, key: str) -> dict:
    """What a measurement stored beside a shipped model's line in data/models.json ({} when none)."""
    return manifest().get(name, {}).get(key, {})


def record_measurements(name: str, key: str, measure, path: Path) -> dict:
    """Load the model file at `path` (listed as `name` in the manifest beside it), run measure(lm) and
    store the result under `key` in its manifest line: numbers that belong to that very file
    (a notebook then reads them with `recorded` instead of measuring them again in class)."""
    manifest_path = path.parent / MANIFEST.name
    results = measure(load_model(name, data_dir=path.parent))
    entries = manifest(manifest_path)
    entries[name][key] = results
    write_manifest(entries, manifest_path)
    return results


def write_manifest(entries: dict, path: Path) -> None:
    """Write a manifest in one step (never half-written), its models in name order."""
    text = json.dumps(dict(sorted(entries.items())), indent=1) + "\n"
    atomic_write(path, lambda tmp: Path(tmp).write_text(text), mode=0o644)  # as the model files
