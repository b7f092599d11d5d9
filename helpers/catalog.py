"""The models the notebooks can use, by name: load_model("classroom"), load_model("gpt2").

Shipped models live in data/ and are listed in data/models.json with their sha256,
so a damaged file is caught before it is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .model import GPT
from .tokenizer import WordTokenizer
from .weights import atomic_write, read_model, save_model

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
MANIFEST = DATA_DIR / "models.json"


@dataclass
class LanguageModel:
    """A model together with the tokenizer that feeds it."""

    name: str
    model: GPT
    tokenizer: object  # WordTokenizer, or the GPT-2 BPE tokenizer: both have .tokens() and .encode()
    info: dict = field(default_factory=dict)
    bos: bool = True  # whether the model was trained with a start token in front of every text

    @property
    def config(self):
        return self.model.config


def manifest(path: Path = MANIFEST) -> dict:
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def shipped_models() -> list[str]:
    return sorted(manifest())


def regenerate_command(name: str) -> str:
    return f"python -m helpers.train {name}"


def load_model(name: str = "classroom") -> LanguageModel:
    """Load a shipped classroom model, or "gpt2" for GPT-2 small (downloaded once)."""
    if name == "gpt2":
        from .gpt2 import load_gpt2  # only touches the network when the file is not cached

        return load_gpt2()
    entries = manifest()
    if name not in entries:
        raise ValueError(f"No model named {name!r}; choose one of {', '.join(shipped_models() + ['gpt2'])}.")
    entry = entries[name]
    model, vocab, info = read_model(DATA_DIR / entry["file"], entry["sha256"], regenerate_command(name))
    return LanguageModel(name=name, model=model, tokenizer=WordTokenizer(vocab), info=info, bos=info.get("bos", True))


def record_model(name: str, model: GPT, vocab: list[str], info: dict, path: Path) -> None:
    """Save a trained model and write its line in the manifest beside it."""
    digest = save_model(model, path, vocab, info)
    manifest_path = path.parent / MANIFEST.name
    entries = manifest(manifest_path)
    entries[name] = {"file": path.name, "sha256": digest, "bytes": path.stat().st_size,
                     "command": regenerate_command(name), "config": model.config.to_dict(), "info": info}
    text = json.dumps(dict(sorted(entries.items())), indent=1) + "\n"
    atomic_write(manifest_path, lambda tmp: Path(tmp).write_text(text))
