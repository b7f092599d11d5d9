"""Snapshots of one training run in one checksummed file: the weights at ~30 steps from 0 to the end.

    keep = snapshot_steps(976)                     # which steps to keep (log-spaced, dense where lists are learned)
    save_snapshots(states, path, config, vocab, info)   # fp16 safetensors, sorted header: same run, same bytes
    run = read_snapshots(path, sha256)             # a SnapshotRun: .steps, .model_at(step)

The tensors of step s are stored as "step00123/h.0.attn.c_attn.weight" in the hub layout of
weights.py, so one file holds the whole run and its sha256 checks all of it.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import save

from .catalog import DATA_DIR, MANIFEST, RUN_FACTS, manifest, record_file
from .files import atomic_write
from .model import GPTConfig, LanguageModel
from .tokenizer import WordTokenizer
from .weights import in_sorted_order, model_from_checkpoint, read_checked, read_metadata, sha256, to_checkpoint_layout

# Where notebook 08's heads form (its recipe's seeds: between about 25 % and 40 % of the run, issue 50's
# sweep): between 20 % and 50 % of the run a snapshot every 1/80 of it; elsewhere log-spaced steps.
DENSE_FROM, DENSE_TO, DENSE_EVERY = 0.20, 0.50, 1 / 80
LOG_POINTS = 12  # log-spaced steps from 1 to the end: the early steps move fast, the late ones slowly


def snapshot_steps(steps: int) -> list[int]:
    """The steps to keep for a run of `steps` steps: 0, log-spaced steps up to `steps`, dense in the middle."""
    every = max(1, round(steps * DENSE_EVERY))
    dense = set(range(math.ceil(steps * DENSE_FROM / every) * every, int(steps * DENSE_TO) + 1, every))
    spread = {round(steps ** (i / LOG_POINTS)) for i in range(LOG_POINTS + 1)}
    keep = {0, steps} | dense | {s for s in spread if not min(dense, default=steps) <= s <= max(dense, default=-1)}
    return sorted(s for s in keep if 0 <= s <= steps)


snapshot_state = to_checkpoint_layout  # the fp16 copy of the weights a snapshot keeps: training goes on unchanged


def save_snapshots(states: dict[int, dict[str, torch.Tensor]], path: str | Path, config: GPTConfig,
                   vocab: list[str], info: dict, measured: dict | None = None) -> str:
    """Write every step's weights into one safetensors file (sorted header: same run, same bytes); return its
    sha256. `measured`: numbers measured on these very weights (analysis/formation.py), kept beside them."""
    tensors = {f"step{step:05d}/{name}": t for step, state in states.items() for name, t in state.items()}
    metadata = {"config": json.dumps(config.to_dict()), "vocab": json.dumps(vocab), "info": json.dumps(info),
                "steps": json.dumps(sorted(states)), "measured": json.dumps(measured or {}, sort_keys=True)}
    blob = in_sorted_order(save(tensors, metadata=metadata))
    atomic_write(Path(path), lambda tmp: Path(tmp).write_bytes(blob), mode=0o644)
    return sha256(path)


@dataclass
class SnapshotRun:
    """One training run read back: the step numbers, and a model for any of them (built on demand)."""

    name: str
    steps: list[int]
    config: GPTConfig
    vocab: list[str]
    info: dict
    states: dict[int, dict[str, torch.Tensor]] = field(repr=False)
    measured: dict = field(default_factory=dict, repr=False)  # what was measured on these weights when written

    @property
    def tokens_per_step(self) -> int:
        return int(self.info["tokens_per_step"])

    def model_at(self, step: int) -> LanguageModel:
        """The model as it was after `step` training steps (one of self.steps)."""
        if step not in self.states:
            raise ValueError(f"No snapshot at step {step!r}; choose one of {self.steps}.")
        model = model_from_checkpoint(self.states[step], self.config, source=f"{self.name} step {step}")
        return LanguageModel(f"{self.name}@{step}", model, WordTokenizer(self.vocab), self.info, bos=True)


def read_snapshots(path: str | Path, expected_sha256: str, name: str = "", remedy: str = "") -> SnapshotRun:
    """Read a file written by save_snapshots after checking its sha256 (a flipped fp16 byte still loads)."""
    path = Path(path)
    fix = f" Regenerate it with `{remedy}`." if remedy else ""
    metadata, tensors = read_checked(path, expected_sha256, "snapshot", fix)
    try:
        steps, measured = json.loads(metadata["steps"]), json.loads(metadata.get("measured", "{}"))
    except (KeyError, json.JSONDecodeError) as err:
        raise ValueError(f"Snapshot file {path} is truncated or not a snapshot file ({err}).{fix}") from None
    config, vocab, info = read_metadata(metadata, path, fix)
    states: dict[int, dict[str, torch.Tensor]] = {s: {} for s in steps}
    for key, tensor in tensors.items():
        step, _, tensor_name = key.partition("/")
        states[int(step.removeprefix("step"))][tensor_name] = tensor
    return SnapshotRun(name or path.stem, steps, config, vocab, info, states, measured)


def record_snapshots(name: str, run: SnapshotRun, path: Path) -> dict:
    """Write a run's snapshot file and its place under "snapshots" in NAME's line of the manifest beside it,
    both or neither (catalog.record_file). Returns that manifest entry."""
    kept = {key: value for key, value in run.info.items() if key not in RUN_FACTS}
    line = {"command": f"python -m helpers.train {name} --snapshots", "steps": run.steps, "info": run.info}

    def save(staged: Path) -> str:
        return save_snapshots(run.states, staged, run.config, run.vocab, kept, run.measured)

    entry = record_file(path, save, lambda entries, entry: entries.setdefault(name, {}).update(snapshots={**entry, **line}))
    return {**entry, **line}


def load_snapshots(name: str = "induction", data_dir: Path | None = None) -> SnapshotRun:
    """The shipped snapshots of recipe `name` (listed under "snapshots" in its line of data/models.json)."""
    folder = DATA_DIR if data_dir is None else Path(data_dir)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"data_dir={str(folder)!r} is a file; pass the folder that holds models.json "
                         f"(or nothing: data/).")
    entries = manifest(folder / MANIFEST.name)
    if name not in entries:
        with_snapshots = [n for n, e in entries.items() if isinstance(e, dict) and "snapshots" in e]
        raise ValueError(f"{folder / MANIFEST.name} has no model {name!r}; the models with snapshots: "
                         f"{', '.join(with_snapshots) or 'none'}.")
    entry = entries[name].get("snapshots") if isinstance(entries[name], dict) else None
    command = f"python -m helpers.train {name} --snapshots"
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        raise ValueError(f"{folder / MANIFEST.name} lists no snapshots of {name!r}; make them with `{command}`.")
    return _read_once(folder / entry["file"], entry["sha256"], name, command)


@functools.lru_cache(maxsize=4)
def _read_once(path: Path, expected_sha256: str, name: str, remedy: str) -> SnapshotRun:
    """read_snapshots, once per file and checksum: notebook 08's cells and widgets share one read (15 MB)."""
    return read_snapshots(path, expected_sha256, name, remedy)
